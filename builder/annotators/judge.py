"""A learned judge: a cross-encoder that scores *do these two claims disagree?*, calibrated on held-out pairs.

``biodivergence judge train --out DIR`` fine-tunes a sequence-pair classifier (default: the
packaged all-MiniLM-L6-v2 encoder, any Hub name or path is honoured) with transformers' ``Trainer``
on the expert-labelled pairs of every source in ``builder.annotators.judge_data`` (the gold pair sets
of ``goldcheck`` plus claim–evidence pairs of SciFact, HealthVer, NLI4CT and Citation-Integrity) and
saves it with ``save_pretrained``, next to ``judge_config.json``: the sources it was trained on, the
Platt calibration fitted on a held-out share of those sources, and the settings. ``--loso`` also
trains one judge per scored gold source, on every other source, under ``DIR/heldout-<source>/``, so
that ``goldcheck`` scores every source out of fold.

``--annotator judge:DIR`` joins the panel: the judge decides conflict vs no conflict (calibrated
probability); for a conflict the frames annotator's boundary rules give the type, axes, spans and
reconciliation. It does not replace the frames; it is one more vote.
"""

from __future__ import annotations

import argparse
import json
import math
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from biodivergence_dataset import ontology
from biodivergence_dataset.arguments import add_config_arguments, config_from_args
from biodivergence_dataset.io import current_umask, write_json_atomic
from biodivergence_dataset.records import CandidatePair

from ..reader import fitting
from ..repair import Labels
from .annotator_base import LocalAnnotator
from .frame_annotator import FramesAnnotator

if TYPE_CHECKING:
    from .judge_data import TrainingPair

JUDGE_CONFIG = "judge_config.json"
KIND = ontology.check_label("annotator_kind", "judge")
HELDOUT_PREFIX = "heldout-"


@dataclass
class JudgeSettings:
    """What a saved judge was trained on and how its score is calibrated."""

    base_model: str
    trained_on: list[str]
    calibration: dict[str, float] = field(default_factory=lambda: {"a": 1.0, "b": 0.0})
    max_length: int = 128
    train_pairs: int = 0
    calibration_pairs: int = 0
    epochs: float = 1.0
    learning_rate: float | None = None
    #: training + calibration pairs taken from each source
    pairs_per_source: dict[str, int] = field(default_factory=dict)
    train_seconds: float = 0.0
    #: ROC-AUC of the margin on the calibration pairs (held-out claims of the training sources: in domain)
    calibration_auc: float | None = None

    @classmethod
    def load(cls, folder: Path) -> JudgeSettings:
        path = folder / JUDGE_CONFIG
        if not path.is_file():
            raise FileNotFoundError(f"{folder}: not a judge folder (no {JUDGE_CONFIG}); "
                                    "train one with `biodivergence judge train --out DIR`")
        try:
            return cls(**json.loads(path.read_text(encoding="utf-8")))
        except (ValueError, TypeError) as exc:
            raise ValueError(f"{path}: not valid judge settings ({exc})") from None


def judge_folder(path: str | Path, heldout: str | None = None) -> Path:
    """The judge to use: ``path`` itself, or its ``heldout-<source>`` fold when scoring ``heldout``."""
    path = Path(path)
    if heldout is not None and (path / f"{HELDOUT_PREFIX}{heldout}" / JUDGE_CONFIG).is_file():
        return path / f"{HELDOUT_PREFIX}{heldout}"
    return path


class JudgeAnnotator(LocalAnnotator):
    """Panel member backed by a saved cross-encoder (see the module docstring)."""

    kind = KIND

    def __init__(self, path: str | Path, batch_size: int = 32, device: str = "cpu"):
        import torch
        from safetensors import SafetensorError
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        self.path = Path(path)
        self.settings = JudgeSettings.load(self.path)
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(self.path)
            self.model = AutoModelForSequenceClassification.from_pretrained(self.path).to(device).eval()
        except (OSError, ValueError, KeyError, RuntimeError, SafetensorError) as exc:  # tampered or half-copied
            detail = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise ValueError(f"{self.path}: the judge's model files cannot be loaded ({type(exc).__name__}: "
                             f"{detail}); restore or retrain the folder (`biodivergence judge train`)") from None
        self.batch_size, self.device, self._torch = batch_size, device, torch
        self.frames = FramesAnnotator()
        self.annotator_id = f"judge:{self.path.name}"

    @property
    def trained_on(self) -> frozenset[str]:
        return frozenset(self.settings.trained_on)

    def margins(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """Raw conflict margin (logit of conflict minus logit of no conflict) per claim pair."""
        out: list[float] = []
        with self._torch.no_grad():
            for start in range(0, len(pairs), self.batch_size):
                chunk = pairs[start:start + self.batch_size]
                enc = self.tokenizer([a for a, _ in chunk], [b for _, b in chunk], truncation=True, padding=True,
                                     max_length=self.settings.max_length, return_tensors="pt").to(self.device)
                logits = self.model(**enc).logits
                out.extend((logits[:, 1] - logits[:, 0]).tolist())
        return out

    def probability(self, margin: float) -> float:
        c = self.settings.calibration
        return 1.0 / (1.0 + math.exp(-(c["a"] * margin + c["b"])))

    def probabilities(self, pairs: Sequence[CandidatePair]) -> list[float]:
        """Calibrated conflict probability per candidate pair."""
        return [self.probability(m) for m in self.margins([(p.claim_a.sentence, p.claim_b.sentence) for p in pairs])]

    def annotate_many(self, pairs: Sequence[CandidatePair]) -> list[Labels]:
        return [self.label_for(p, prob) for p, prob in zip(pairs, self.probabilities(pairs), strict=True)]

    def annotate(self, pair: CandidatePair) -> Labels:
        return self.annotate_many([pair])[0]

    def label_for(self, pair: CandidatePair, p: float) -> Labels:
        """The label of a pair the judge gives conflict probability ``p``."""
        if p < 0.5:
            return Labels(ontology.NO_CONFLICT, confidence=round(1 - p, 4), notes=f"judge p={p:.3f}")
        labels = self.frames.conflict_labels(pair, "judge")
        labels.confidence, labels.notes = round(p, 4), f"judge p={p:.3f}"
        return labels


# --------------------------------------------------------------------------- training


def _platt(margins: list[float], truth: list[bool]) -> dict[str, float]:
    """Platt scaling (logistic regression on the margin), fitted on held-out pairs."""
    from sklearn.linear_model import LogisticRegression

    if len(set(truth)) < 2:
        return {"a": 1.0, "b": 0.0}
    lr = LogisticRegression().fit([[m] for m in margins], truth)
    return {"a": float(lr.coef_[0][0]), "b": float(lr.intercept_[0])}


def _auc(truth: list[bool], scores: list[float]) -> float | None:
    from sklearn.metrics import roc_auc_score

    return round(float(roc_auc_score(truth, scores)), 4) if len(set(truth)) == 2 else None


def _split(pairs: list[TrainingPair], share: float, seed: int) -> tuple[list[TrainingPair], list[TrainingPair]]:
    """A seeded split into (train, calibration) by group (a claim), so a claim's pairs stay together."""
    groups = sorted({p.group for p in pairs})
    random.Random(seed).shuffle(groups)
    held = set(groups[: max(1, int(len(groups) * share))])
    return [p for p in pairs if p.group not in held], [p for p in pairs if p.group in held]


def _balanced_loss(train: list[TrainingPair]):
    """Cross-entropy weighted by inverse class frequency (conflicts are the minority in most sources)."""
    import torch

    n_conflict = sum(p.conflict for p in train)
    weight = torch.tensor([len(train) / (2 * max(1, n)) for n in (len(train) - n_conflict, n_conflict)])

    def loss(outputs, labels, num_items_in_batch=None):
        return torch.nn.functional.cross_entropy(outputs.logits, labels, weight=weight.to(outputs.logits.device))

    return loss


def _plain_modes(folder: Path) -> None:
    """Give the saved files the mode a plain ``open`` gives (safetensors writes the weights 0600)."""
    mode = 0o666 & ~current_umask()
    for path in folder.iterdir():
        if path.is_file():
            path.chmod(mode)


class TrainConfig(BaseModel):
    """``biodivergence judge train`` settings. CPU-sized defaults: a fold is ~150-175 steps of 32 pairs (1500 pairs
    per source, 1 epoch), about 2.3 s a step on 2 idle cores (6-7 min), 8-14 s when the machine is loaded; see
    benchmarks/judge.py."""

    model_config = ConfigDict(extra="forbid")

    data_dir: fitting.DataDir = "../shared/data"
    sources: fitting.Sources = Field((), description="train on these sources (default: all)")
    base_model: fitting.Encoder = Field("", description="encoder name or path (default: all-MiniLM-L6-v2)")
    epochs: fitting.Epochs = 1.0
    batch_size: fitting.BatchSize = 32
    learning_rate: fitting.LearningRate = 2e-4
    warmup_share: fitting.WarmupShare = 0.1
    max_length: fitting.MaxLength = 128
    max_per_source: int | None = Field(1500, description="cap on the pairs (training + calibration) taken from "
                                                         "each source")
    calibration_share: float = Field(0.1, description="share of claims held out of training for the Platt "
                                                      "calibration")
    seed: fitting.Seed = 42


def train_judge(out_dir: str | Path, config: TrainConfig, leave_out: str | None = None) -> JudgeSettings:
    """Fine-tune (transformers' Trainer: shuffled batches, linear warm-up and decay, class-balanced loss),
    calibrate and save one judge on ``config.sources`` (default: every source) minus ``leave_out``."""
    import time

    from transformers import (
        AutoModelForSequenceClassification,
        AutoTokenizer,
        DataCollatorWithPadding,
        Trainer,
        TrainingArguments,
        set_seed,
    )

    from ..embeddings import DEFAULT_MODEL, resolve_model
    from .judge_data import fold_sources, training_pairs

    sources = fold_sources(config.sources, leave_out)
    pairs = training_pairs(config.data_dir, sources, config.max_per_source, config.seed)
    train, calib = _split(pairs, config.calibration_share, config.seed)
    base = resolve_model(config.base_model or DEFAULT_MODEL)
    set_seed(config.seed)
    tokenizer = AutoTokenizer.from_pretrained(base)
    model = AutoModelForSequenceClassification.from_pretrained(base, num_labels=2)
    enc = tokenizer([p.text_a for p in train], [p.text_b for p in train], truncation=True,
                    max_length=config.max_length)
    dataset = [{**{k: v[i] for k, v in enc.items()}, "labels": int(p.conflict)} for i, p in enumerate(train)]
    out = Path(out_dir)
    args = TrainingArguments(output_dir=str(out), num_train_epochs=config.epochs,
                             per_device_train_batch_size=config.batch_size, learning_rate=config.learning_rate,
                             lr_scheduler_type="linear", warmup_steps=config.warmup_share, seed=config.seed,
                             use_cpu=True, save_strategy="no", report_to="none", logging_steps=50)
    trainer = Trainer(model=model, args=args, train_dataset=dataset, data_collator=DataCollatorWithPadding(tokenizer),
                      processing_class=tokenizer, compute_loss_func=_balanced_loss(train))
    started = time.perf_counter()
    trainer.train()
    seconds = time.perf_counter() - started
    trainer.save_model(str(out))
    _plain_modes(out)
    settings = JudgeSettings(base_model=config.base_model or DEFAULT_MODEL, trained_on=sources,
                             max_length=config.max_length, train_pairs=len(train), calibration_pairs=len(calib),
                             epochs=config.epochs, learning_rate=config.learning_rate, pairs_per_source=dict(Counter(p.source for p in pairs)),
                             train_seconds=round(seconds, 1))
    write_json_atomic(out / JUDGE_CONFIG, asdict(settings))
    judge = JudgeAnnotator(out)
    margins = judge.margins([(p.text_a, p.text_b) for p in calib])
    truth = [p.conflict for p in calib]
    settings.calibration = _platt(margins, truth)
    settings.calibration_auc = _auc(truth, margins)
    write_json_atomic(out / JUDGE_CONFIG, asdict(settings))
    return settings


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from .judge_data import TRAINING_SOURCES

    sub = parser.add_subparsers(dest="judge_command", required=True)
    p = sub.add_parser("train", help="fine-tune and calibrate a judge on every expert-labelled source",
                       formatter_class=parser.formatter_class)
    p.add_argument("--out", required=True, help="folder for the judge (save_pretrained + judge_config.json)")
    p.add_argument("--loso", action="store_true",
                   help="also train one judge per scored gold source, without that source (DIR/heldout-SOURCE)")
    add_config_arguments(p, TrainConfig, aliases={"sources": "--source"},
                         options={"sources": {"choices": sorted(TRAINING_SOURCES)}})


def run(args: argparse.Namespace) -> int:
    from ..goldsources import GOLD_SOURCES

    config = config_from_args(TrainConfig, args)
    settings = train_judge(args.out, config)
    print(f"judge saved to {args.out}: trained on {settings.pairs_per_source} ({settings.train_pairs} pairs, "
          f"{settings.train_seconds:.0f} s), calibrated on {settings.calibration_pairs}")
    if args.loso:
        for source in (s for s in settings.trained_on if s in GOLD_SOURCES):
            fold = Path(args.out) / f"{HELDOUT_PREFIX}{source}"
            s = train_judge(fold, config, leave_out=source)
            print(f"  fold without {source}: {fold} ({s.train_pairs} pairs, {s.train_seconds:.0f} s)")
    return 0
