"""Teaching the reference model's finding states what a finding is, before it trains on a release.

The conflict labels of a release are a function of each claim's finding read against the pair's question
(``trainer.modeling``: the finding states), but a release's training claims come from a handful of questions, and
states learned from them alone do not carry to the other questions of validation and test
(``benchmarks/results/readings.md``). Evidence Inference holds thousands of (prompt, evidence sentence) findings
labelled by experts across medicine. This stage fits the encoder and the finding-state head to them, one state per
finding of ``ontology.READER_FINDINGS`` (increased, decreased, no difference, not reported), and the release's
seeds start from it (:func:`load_finding_weights`).

Only the training part of Evidence Inference is read (``builder.goldparts``: the check part stays unseen, so
``biodivergence goldcheck`` still scores on data no model here trained on). The stage is run once and kept in the models cache
(``builder.embeddings.models_cache``) under the fingerprint of its examples, encoder and settings, so every seed,
a resumed run and the next run reuse it (``finding_states.json`` in the folder records what it was fitted on).
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file
from transformers import Trainer

from biodivergence_dataset import ontology
from biodivergence_dataset.io import staging_folder, staging_path, swap_folder, write_json_atomic
from builder.embeddings import models_cache
from builder.reader.reader_examples import ReaderExample, data_fingerprint, training_examples

from .data import PairCollator, encode_rows
from .pipeline import pair_row

log = logging.getLogger(__name__)

#: The finding states, in the order of the state head's outputs; the last ("not reported") is the state
#: ``trainer.modeling.findings_differ`` leaves out.
FINDING_STATES: tuple[str, ...] = tuple(ontology.READER_FINDINGS)
SOURCE = "evidence_inference"
FOLDER = "finding_states"
RECORD = "finding_states.json"
WEIGHTS = "model.safetensors"
#: The parts of the model this stage fits and a seed takes over; the pair heads start fresh on the release.
CARRIED = ("encoder.", "project.", "finding_head.")


@dataclass(frozen=True)
class FindingStageSettings:
    """How the stage trains; with the examples' fingerprint, what decides whether an earlier stage is reused."""

    epochs: float = 4.0
    learning_rate: float = 5e-5
    batch_size: int = 16
    max_length: int = 128
    seed: int = 0


def finding_examples(data_dir: str | Path) -> list[ReaderExample]:
    """Evidence Inference's training-part findings, each asked its prompt as a question, with a "not reported"
    example for non-result sentences (``builder.reader.reader_examples.ei_examples``)."""
    return training_examples(data_dir, (SOURCE,), part="training")


def encode_findings(examples: list[ReaderExample], tokenizer, max_length: int) -> list[dict[str, Any]]:
    """Model inputs of the stage: ``[CLS] question [SEP] text [SEP] text [SEP]``, the text as both claims of a pair
    encoded as the pipeline encodes an unlabelled pair (``trainer.pipeline.pair_row``), with both claims'
    ``state_labels``."""
    rows = [pair_row({"question": e.question, "claim_a_text": e.text, "claim_b_text": e.text}) for e in examples]
    items = encode_rows(rows, tokenizer, max_length, with_question=True)
    for item, example in zip(items, examples):
        state = FINDING_STATES.index(example.finding)
        item["state_labels"] = [state, state]
    return items


def state_loss(finding_probs: torch.Tensor, state_labels: torch.Tensor) -> torch.Tensor:
    """Mean negative log-likelihood of each claim's labelled state under its (B, 2, K) state distribution."""
    log_p = finding_probs.clamp_min(1e-6).log()
    return torch.nn.functional.nll_loss(log_p.flatten(0, 1), state_labels.flatten())


class FindingStateTrainer(Trainer):
    """``Trainer`` whose loss is :func:`state_loss` on the ``state_labels`` of a batch."""

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        states = inputs.pop("state_labels")
        outputs = model(**inputs)
        loss = state_loss(outputs.finding_probs, states)
        return (loss, outputs) if return_outputs else loss


def _fingerprint(examples: list[ReaderExample], encoder: str, settings: FindingStageSettings) -> str:
    text = json.dumps({"examples": data_fingerprint(examples), "encoder": encoder, "settings": asdict(settings)},
                      sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def stage_arguments(out: Path, settings: FindingStageSettings, processes: dict[str, Any]):
    """The stage's ``TrainingArguments`` (output in ``out``) on the run's ``processes`` settings
    (``trainer.training_args.PROCESS_KEYS``); they also tell which process of a multi-process run writes the stage
    folder (``should_save``) and order the others after it (``main_process_first``)."""
    from .training_args import training_arguments

    return training_arguments(out, settings.seed, **processes, num_train_epochs=settings.epochs,
                              learning_rate=settings.learning_rate, per_device_train_batch_size=settings.batch_size,
                              eval_strategy="no", save_strategy="no", load_best_model_at_end=False,
                              metric_for_best_model=None, logging_steps=50, report_to=[],
                              remove_unused_columns=False)  # state_labels is no argument of forward


def fit_finding_states(model, tokenizer, examples: list[ReaderExample], args, settings: FindingStageSettings) -> None:
    """Train ``model``'s encoder and state head on ``examples`` and save it to ``args.output_dir`` (Trainer's own
    folder; in a multi-process run every process trains, Trainer distributing the batches, and the writing process
    alone saves). Trainer seeds the run from ``args.seed``."""
    trainer = FindingStateTrainer(model=model, args=args, train_dataset=encode_findings(examples, tokenizer,
                                                                                        settings.max_length),
                                  data_collator=PairCollator(tokenizer), processing_class=tokenizer)
    trainer.train()
    trainer.save_model(args.output_dir)


def pretrained_finding_states(encoder: str, data_dir: str | Path, settings: FindingStageSettings | None = None,
                              cache: Path | None = None, processes: dict[str, Any] | None = None) -> Path:
    """The stage's folder for ``encoder`` in ``cache`` (default: the models cache), named by the fingerprint of
    its examples, encoder and settings: reused when it is there, else trained (into a staging folder swapped in
    whole, so an interrupted stage leaves nothing half written).

    In a multi-process run (torchrun, ``accelerate launch``) every process calls this, with the run's ``processes``
    settings (``trainer.training_args.PROCESS_KEYS``; none for a run of transformers' defaults): all take part in the
    training, which Trainer distributes as it does a seed's (a process training alone would wait forever on the
    others' gradients), but only the writing process (``should_save``: the main one, or each node's with
    ``save_on_each_node``) makes, fills and swaps the folder, inside ``main_process_first`` so that the others
    return the finished folder only once it is in place."""
    from transformers import AutoTokenizer, set_seed

    from .modeling import MultiTaskConflictModel

    settings = settings or FindingStageSettings()
    examples = finding_examples(data_dir)
    fingerprint = _fingerprint(examples, encoder, settings)
    final = (cache or models_cache()) / FOLDER / fingerprint[:16]
    record = final / RECORD
    if record.is_file() and json.loads(record.read_text(encoding="utf-8")).get("fingerprint") == fingerprint:
        log.info("finding states: reusing %s", final)
        return final
    log.info("finding states: training on %d %s examples → %s", len(examples), SOURCE, final)
    tokenizer = AutoTokenizer.from_pretrained(encoder)
    set_seed(settings.seed)  # the state head's initialisation too: the stage must not depend on what ran before it
    model = MultiTaskConflictModel.from_encoder(encoder, sep_token_id=tokenizer.sep_token_id,
                                                finding_states=len(FINDING_STATES), max_length=settings.max_length)
    staging = staging_path(final)
    args = stage_arguments(staging, settings, processes or {})
    if args.should_save:
        staging_folder(final)
    fit_finding_states(model, tokenizer, examples, args, settings)
    with args.main_process_first(local=args.save_on_each_node, desc="the finding-state stage folder"):
        if args.should_save:
            write_json_atomic(staging / RECORD, {"fingerprint": fingerprint, "source": SOURCE,
                                                 "examples": len(examples), "states": list(FINDING_STATES),
                                                 "encoder": encoder, "settings": asdict(settings)})
            swap_folder(staging, final)
    return final


def load_finding_weights(model, folder: str | Path) -> None:
    """Copy the encoder, projection and state head of a stage folder into ``model`` (the pair heads keep their
    fresh initialisation); ValueError naming the folder when it lacks them or their shapes differ."""
    path = Path(folder) / WEIGHTS
    if not path.is_file():
        raise FileNotFoundError(f"{folder}: no {WEIGHTS} (run the finding-state stage first)")
    stored = {k: v for k, v in load_file(str(path)).items() if k.startswith(CARRIED)}
    own = model.state_dict()
    missing = [k for k in own if k.startswith(CARRIED) and k not in stored]
    wrong = [k for k, v in stored.items() if k not in own or own[k].shape != v.shape]
    if missing or wrong:
        raise ValueError(f"{path}: does not fit this model (missing {missing[:3]}, other shape or unknown {wrong[:3]})")
    model.load_state_dict(stored, strict=False)
