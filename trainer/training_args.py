"""The ``biodivergence train`` options: ``transformers.TrainingArguments`` with the paper's defaults
(:data:`PAPER_DEFAULTS`, paper appendix J.3, Table 32) and the old short flags, next to the BioDivergence options
(:class:`RunArguments`, :class:`TrainSettings`), all parsed by one ``HfArgumentParser`` (:func:`parser`).
"""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from transformers import HfArgumentParser, TrainingArguments

from biodivergence_dataset import ontology
from biodivergence_dataset.arguments import RELEASE_HELP

from .constants import PAPER_EPOCHS, PAPER_SEEDS
from .pair_features import DISAGREEMENT, METADATA

#: Checkpoint selection and early stopping: validation Ctx-F1 decoded at the conflict threshold tuned on the same
#: evaluation (``trainer.train.TaskMetrics``). Raw macro-F1 rewarded the checkpoint that predicts no conflict at all.
BEST_METRIC = "conflict_type/ctx_f1_at_tuned_threshold"
LABEL_NAMES = ["labels", "axis_labels", "confounder_labels"]
#: Paper Table 12 variants → model-config overrides.
ABLATIONS: dict[str, dict[str, Any]] = {
    "full": {},
    "no_metadata": {"disabled_feature_groups": [METADATA]},
    "no_disagreement": {"disabled_feature_groups": [DISAGREEMENT]},
    "no_cross_attention": {"use_cross_attention": False},
    "single_task": {"tasks": ["conflict_type"]},
}
#: TrainingArguments that differ from transformers' defaults: the paper's schedule (Table 32).
PAPER_DEFAULTS: dict[str, Any] = {
    "num_train_epochs": float(PAPER_EPOCHS),
    "learning_rate": 2e-5,
    "weight_decay": 0.01,
    "warmup_steps": 0.1,  # a float below 1 is a ratio of the training steps
    "max_grad_norm": 1.0,
    "per_device_train_batch_size": 16,
    "per_device_eval_batch_size": 32,
    "eval_strategy": "epoch",
    "save_strategy": "epoch",
    "logging_strategy": "epoch",
    "save_total_limit": 1,
    "load_best_model_at_end": True,
    "metric_for_best_model": BEST_METRIC,
    "greater_is_better": True,
    "label_names": LABEL_NAMES,
}


@dataclass
class RunArguments:
    """What to train on, and where the model goes."""

    _argument_group_name = "data and encoder"

    release: str = field(metadata={"help": RELEASE_HELP})
    config: Literal[ontology.CONFIGS] = field(default=ontology.DEFAULT_CONFIG, metadata={"help": "release config"})
    encoder: str | None = field(default=None, metadata={
        "help": "encoder name or path (default: BiomedBERT if cached locally, else the packaged MiniLM)"})
    hub_tag: str | None = field(default=None, metadata={
        "help": "version tag vX.Y of the model pushed with --push-to-hub (users pin it with revision=...)"})


@dataclass
class TrainSettings:
    """The BioDivergence side of a run: model variant, loss, data caps. The schedule is TrainingArguments'."""

    _argument_group_name = "reference model"

    patience: int = field(default=3, metadata={"help": "early-stopping patience in evaluations"})
    max_length: int = field(default=256, metadata={"help": "token limit of a claim pair"})
    loss_weights: list[float] = field(default_factory=lambda: [1.0, 1.0, 0.3], metadata={
        "help": "task loss weights CT AX DC"})
    constraint_mode: Literal["none", "predicted_axes", "gold_axes"] = field(default="predicted_axes", metadata={
        "help": "confounder head restriction"})
    ablation: Literal[tuple(ABLATIONS)] = field(default="full", metadata={"help": "paper Table 12 variant"})
    class_weights: bool = field(default=True, metadata={
        "help": "train-split class weights and axis pos_weight (--no-class-weights turns both off)"})
    negatives_per_conflict: float | None = field(default=3.0, metadata={
        "help": "each epoch: every training row of a conflict class plus this many no_conflict rows per such row, "
                "a fresh block of them each epoch (trainer.imbalance); class weights then follow the epoch's "
                "counts. 0 (or a train split without conflicts): plain shuffled epochs of every training row, "
                "class weights from the train split's own counts"})
    focal_gamma: float = field(default=0.0, metadata={
        "help": "focal-loss gamma of the conflict-type loss (0: weighted cross-entropy)"})
    with_question: bool = field(default=True, metadata={
        "help": "put the row's review question before claim a (--no-with-question: the two claims only)"})
    finding_states: int = field(default=3, metadata={
        "help": "read each claim apart into N finding states (the last: none reported) and add the probability that "
                "the two claims' findings differ to the conflict-type logits (trainer.modeling; 0: the plain "
                "cross-encoder, each claim read beside the other)"})
    finding_data: str | None = field(default=None, metadata={
        "help": "folder of the expert-labelled sources (../shared/data): first fit the encoder and the finding states "
                "to Evidence Inference's training-part findings, one state per finding (increased, decreased, no "
                "difference, not reported), and start every seed from that (trainer.finding_states); sets "
                "--finding-states to 4"})
    freeze_layers: int = field(default=0, metadata={
        "help": "keep the encoder's embeddings and first N layers fixed (faster on CPU)"})
    max_train_examples: int | None = field(default=None, metadata={
        "help": "train on a fixed random sample of N training rows (short schedules on CPU)"})
    max_eval_examples: int | None = field(default=None, metadata={
        "help": "evaluate on a fixed random sample of N validation rows and N test rows"})
    bootstrap: int = field(default=1000, metadata={
        "help": "bootstrap resamples for the 95%% intervals of the test scores (0: none)"})

    def __post_init__(self):
        if self.ablation not in ABLATIONS:
            raise ValueError(f"unknown ablation {self.ablation!r}; expected one of {list(ABLATIONS)}")
        if len(self.loss_weights) != 3:
            raise ValueError(f"--loss-weights takes three numbers (CT AX DC), got {self.loss_weights}")
        self.loss_weights = [float(w) for w in self.loss_weights]
        if self.finding_data:
            if not self.finding_states:
                raise ValueError("--finding-data teaches the finding states; it needs --finding-states > 0")
            self.finding_states = len(ontology.READER_FINDINGS)


def _arg(name: str, help_text: str | None = None, aliases: tuple[str, ...] = (), **kwargs):
    """A TrainingArguments field with the paper's default, its own help, and optional old flag names."""
    base = next(f for f in dataclasses.fields(TrainingArguments) if f.name == name)
    metadata = dict(base.metadata)
    if help_text:
        metadata["help"] = help_text
    if aliases:
        metadata["aliases"] = list(aliases)
    default = kwargs.get("default", PAPER_DEFAULTS.get(name, base.default))
    if isinstance(default, list):
        return field(default_factory=lambda: list(default), metadata=metadata)
    return field(default=default, metadata=metadata)


@dataclass
class ReferenceTrainingArguments(TrainingArguments):
    """``TrainingArguments`` with the paper's defaults, the old short flags, and several seeds.

    Only for parsing: each seed's Trainer gets a plain ``TrainingArguments`` (:func:`training_arguments`).
    """

    _argument_group_name = "transformers.TrainingArguments (paper defaults)"

    output_dir: str = field(metadata={"help": "model folder to write (one seed), or the parent of seed-<n>/",
                                      "aliases": ["--out"]})
    seed: list[int] = field(default_factory=lambda: [PAPER_SEEDS[0]], metadata={
        "help": f"one or more seeds (the paper uses {' '.join(map(str, PAPER_SEEDS))}); one model per seed"})
    num_train_epochs: float = _arg("num_train_epochs", aliases=("--epochs",))
    learning_rate: float = _arg("learning_rate", aliases=("--lr",))
    per_device_train_batch_size: int = _arg("per_device_train_batch_size", aliases=("--batch-size",))
    per_device_eval_batch_size: int = _arg("per_device_eval_batch_size", aliases=("--eval-batch-size",))
    weight_decay: float = _arg("weight_decay")
    warmup_steps: float = _arg("warmup_steps")
    max_grad_norm: float = _arg("max_grad_norm")
    eval_strategy: str = _arg("eval_strategy")
    save_strategy: str = _arg("save_strategy")
    logging_strategy: str = _arg("logging_strategy")
    save_total_limit: int | None = _arg("save_total_limit")
    load_best_model_at_end: bool = _arg("load_best_model_at_end")
    metric_for_best_model: str | None = _arg("metric_for_best_model")
    greater_is_better: bool | None = _arg("greater_is_better")
    label_names: list[str] | None = _arg("label_names")  # noqa: RUF009 (_arg returns a field)

    def __post_init__(self):
        seeds = self.seed
        self.seed = seeds[0]  # TrainingArguments checks a single seed
        super().__post_init__()
        self.seed = list(seeds)


def parser() -> HfArgumentParser:
    """The ``biodivergence train`` options as an ``HfArgumentParser`` (``parse_yaml_file`` / ``parse_dict`` work)."""
    return HfArgumentParser((RunArguments, TrainSettings, ReferenceTrainingArguments), add_help=False)


#: The TrainingArguments that set up a run's processes (device, backend, timeout, which process writes) rather than
#: what it learns. A stage trained inside the run (``trainer.finding_states``) takes them, so that its processes are
#: the run's: without ``use_cpu`` and ``ddp_backend`` the processes of a CPU run would each train the stage alone.
PROCESS_KEYS = ("use_cpu", "ddp_backend", "ddp_timeout", "save_on_each_node")


def training_arguments(output_dir: str | Path, seed: int = PAPER_SEEDS[0], **overrides: Any) -> TrainingArguments:
    """Plain ``TrainingArguments`` for one seed: the paper's defaults, then ``overrides``."""
    return TrainingArguments(**{**PAPER_DEFAULTS, **overrides, "output_dir": str(output_dir), "seed": seed})


def training_overrides(parsed: ReferenceTrainingArguments | argparse.Namespace) -> dict[str, Any]:
    """The raw TrainingArguments values of a parsed command line (before TrainingArguments post-processing)."""
    names = [f.name for f in dataclasses.fields(TrainingArguments) if f.init]
    return {n: getattr(parsed, n) for n in names if hasattr(parsed, n) and n not in ("output_dir", "seed")}


# -- model, metrics ------------------------------------------------------------------------------------------
