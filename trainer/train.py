"""``biodivergence train``: the reference model on ``transformers.Trainer`` (paper appendix J.3, Table 32).

AdamW, lr 2e-5, weight decay 0.01, 8 epochs, 10% warmup, grad-norm 1.0, batch 16 / 32,
evaluation every epoch with early stopping (patience 3) on the metric's conflict-type
macro-F1, best checkpoint restored at the end; the axis threshold of that model is then tuned
on validation (``predict.tune_axis_threshold``) and saved in its config. Train-split class weights and axis
``pos_weight`` are computed here and saved in the model config. Accelerate runs underneath
Trainer, so the same code runs under ``accelerate launch -m trainer.train --release … --out …``.

One seed writes the model to ``--out``; several seeds (the paper's 42 123 7) write
``--out/seed-<n>/`` each and report mean ± sample std in ``--out/train_results.json``.
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import shutil
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from biodivergence_dataset import ontology
from biodivergence_dataset.io import write_json_atomic
from biodivergence_dataset.tasks import task

from .features import DISAGREEMENT, METADATA

log = logging.getLogger(__name__)

RESULTS_FILE = "train_results.json"
PAPER_SEEDS = (42, 123, 7)
BEST_METRIC = "conflict_type/macro_f1"
#: Paper Table 12 variants → model-config overrides.
ABLATIONS: dict[str, dict[str, Any]] = {
    "full": {},
    "no_metadata": {"disabled_feature_groups": [METADATA]},
    "no_disagreement": {"disabled_feature_groups": [DISAGREEMENT]},
    "no_cross_attention": {"use_cross_attention": False},
    "single_task": {"tasks": ["conflict_type"]},
}
SUMMARY_TASKS = ("conflict_type", "axes", "confounder")


def reported_keys() -> list[str]:
    """Metric keys logged during training and summarised over seeds: Tasks 1–3, the primary-axis view, per-class F1."""
    keys = [k for t in SUMMARY_TASKS for k in task(t).metric_keys()]
    keys += [k.replace("axes/", "axes_primary/") for k in task("axes").metric_keys()]
    return keys + [f"conflict_type/f1/{c}" for c in ontology.CONFLICT_TYPE_NAMES]


@dataclass
class TrainSettings:
    """Optimisation settings; the defaults are the paper's (Table 32)."""

    epochs: float = 8
    learning_rate: float = 2e-5
    weight_decay: float = 0.01
    warmup_ratio: float = 0.1
    max_grad_norm: float = 1.0
    batch_size: int = 16
    eval_batch_size: int = 32
    patience: int = 3
    max_length: int = 256
    loss_weights: tuple[float, float, float] = (1.0, 1.0, 0.3)
    constraint_mode: str = "predicted_axes"
    ablation: str = "full"
    class_weighting: bool = True
    max_train_examples: int | None = None

    def __post_init__(self):
        if self.ablation not in ABLATIONS:
            raise ValueError(f"unknown ablation {self.ablation!r}; expected one of {list(ABLATIONS)}")


def model_config_kwargs(settings: TrainSettings, train_rows: list[dict[str, Any]]) -> dict[str, Any]:
    """``MultiTaskConflictConfig`` arguments for a run: loss weights, imbalance handling, ablation."""
    from .data import axis_pos_weight, class_weights

    ct, ax, dc = settings.loss_weights
    kwargs: dict[str, Any] = {
        "loss_weight_conflict_type": ct, "loss_weight_axes": ax, "loss_weight_confounder": dc,
        "constraint_mode": settings.constraint_mode, "max_length": settings.max_length,
    }
    if settings.class_weighting:
        kwargs["class_weights"] = class_weights(train_rows)
        kwargs["axis_pos_weight"] = axis_pos_weight(train_rows)
    kwargs.update(ABLATIONS[settings.ablation])
    return kwargs


def make_compute_metrics(constraint_mode: str, axis_threshold: float) -> Callable:
    """Trainer ``compute_metrics``: decode the three heads and score them with the metric's plain scorer."""
    from .metric import score
    from .predict import decode, references_from_labels

    keys = reported_keys()

    def compute_metrics(eval_pred) -> dict[str, float]:
        conflict, axes, confounder = eval_pred.predictions
        labels, axis_labels, confounder_labels = eval_pred.label_ids
        predictions = decode(conflict, axes, confounder, constraint_mode, axis_threshold, axis_labels)
        references = references_from_labels(labels, axis_labels, confounder_labels)
        scores = score(predictions, references, semsim_model=None)
        return {k: float(scores[k]) for k in keys if k in scores}

    return compute_metrics


def _training_arguments(settings: TrainSettings, seed: int, checkpoints: Path):
    from transformers import TrainingArguments

    return TrainingArguments(
        output_dir=str(checkpoints),
        seed=seed,
        num_train_epochs=settings.epochs,
        learning_rate=settings.learning_rate,
        weight_decay=settings.weight_decay,
        warmup_steps=settings.warmup_ratio,
        max_grad_norm=settings.max_grad_norm,
        per_device_train_batch_size=settings.batch_size,
        per_device_eval_batch_size=settings.eval_batch_size,
        optim="adamw_torch",
        eval_strategy="epoch",
        save_strategy="epoch",
        logging_strategy="epoch",
        save_total_limit=1,
        save_only_model=True,
        load_best_model_at_end=True,
        metric_for_best_model=BEST_METRIC,
        greater_is_better=True,
        label_names=["labels", "axis_labels", "confounder_labels"],
        report_to="none",
        dataloader_pin_memory=False,
    )


def train_seed(
    splits: dict[str, list[dict[str, Any]]],
    encoder: str,
    seed: int,
    out_dir: Path,
    settings: TrainSettings,
) -> dict[str, Any]:
    """Train one seed on decoded ``splits`` (train / validation, test if present); save the best model to ``out_dir``."""
    from transformers import AutoTokenizer, EarlyStoppingCallback, Trainer, set_seed

    from .data import PairCollator, encode_rows
    from .modeling import MultiTaskConflictModel

    set_seed(seed)
    tokenizer = AutoTokenizer.from_pretrained(encoder)
    model = MultiTaskConflictModel.from_encoder(encoder, **model_config_kwargs(settings, splits["train"]))
    encoded = {name: encode_rows(rows, tokenizer, settings.max_length) for name, rows in splits.items()}
    checkpoints = out_dir / "checkpoints"
    trainer = Trainer(
        model=model,
        args=_training_arguments(settings, seed, checkpoints),
        train_dataset=encoded["train"],
        eval_dataset=encoded["validation"],
        data_collator=PairCollator(tokenizer),
        processing_class=tokenizer,
        compute_metrics=make_compute_metrics(model.config.constraint_mode, model.config.axis_threshold),
        callbacks=[EarlyStoppingCallback(early_stopping_patience=settings.patience)],
    )
    started = time.perf_counter()
    trainer.train()
    runtime = time.perf_counter() - started
    threshold, threshold_f1 = calibrate_axis_threshold(trainer, encoded["validation"])
    result: dict[str, Any] = {
        "seed": seed,
        "model_dir": str(out_dir),
        "epochs_run": trainer.state.epoch,
        "best_validation_macro_f1": trainer.state.best_metric,
        "train_runtime_s": round(runtime, 2),
        "validation": best_evaluation(trainer.state.log_history),
        "axis_threshold": threshold,
        "validation_axes_micro_f1_at_threshold": threshold_f1,
    }
    if "test" in encoded:
        result["test"] = _reported(trainer.evaluate(eval_dataset=encoded["test"], metric_key_prefix="test"), "test")
    if trainer.is_world_process_zero():
        trainer.save_model(str(out_dir))
        shutil.rmtree(checkpoints, ignore_errors=True)
    return result


def calibrate_axis_threshold(trainer, validation) -> tuple[float, float]:
    """Tune the kept model's axis threshold on validation (``tune_axis_threshold``), store it in the model
    config and make the trainer's metrics decode with it; returns (threshold, validation micro-F1)."""
    from .predict import tune_axis_threshold

    trainer.compute_metrics = None  # only the logits are needed here
    output = trainer.predict(validation)
    threshold, f1 = tune_axis_threshold(output.predictions[1], output.label_ids[1])
    config = trainer.model.config
    config.axis_threshold = threshold
    trainer.compute_metrics = make_compute_metrics(config.constraint_mode, threshold)
    return threshold, f1


def _reported(metrics: dict[str, Any], prefix: str) -> dict[str, float]:
    """The reported metric keys (and the loss) of a Trainer metrics dict, without the split prefix."""
    keys = [*reported_keys(), "loss"]
    return {key: metrics[f"{prefix}_{key}"] for key in keys if f"{prefix}_{key}" in metrics}


def best_evaluation(log_history: list[dict[str, Any]]) -> dict[str, float]:
    """Validation metrics of the checkpoint Trainer kept (the first evaluation with the best macro-F1)."""
    evaluations = [h for h in log_history if f"eval_{BEST_METRIC}" in h]
    return _reported(max(evaluations, key=lambda h: h[f"eval_{BEST_METRIC}"]), "eval")


def subsample(rows: list[dict[str, Any]], n: int | None, seed: int = 0) -> list[dict[str, Any]]:
    """``n`` training rows drawn without replacement (the same rows for every training seed), or all rows."""
    if n is None or n >= len(rows):
        return rows
    return random.Random(seed).sample(rows, n)


def summarise(runs: list[dict[str, Any]], split: str) -> dict[str, dict[str, float | None]]:
    """Mean and sample std over seeds of the task metrics on one split (std None for a single seed)."""
    out: dict[str, dict[str, float | None]] = {}
    for key in reported_keys():
        values = [r[split][key] for r in runs if split in r and key in r[split]]
        if values:
            out[key] = {
                "mean": statistics.fmean(values),
                "std": statistics.stdev(values) if len(values) > 1 else None,
            }
    return out


def train(
    release_dir: str | Path,
    out_dir: str | Path,
    encoder: str | None = None,
    seeds: tuple[int, ...] = (PAPER_SEEDS[0],),
    config: str = ontology.DEFAULT_CONFIG,
    settings: TrainSettings | None = None,
) -> dict[str, Any]:
    """Train one model per seed on a release and write ``train_results.json``; returns its content."""
    from .data import decoded_rows, load_splits
    from .encoders import resolve_encoder

    settings = settings or TrainSettings()
    out_dir = Path(out_dir)
    datasets = load_splits(release_dir, config)
    missing = {"train", "validation"} - set(datasets)
    if missing:
        raise ValueError(f"{release_dir} ({config}) lacks the split(s) {sorted(missing)} needed for training")
    splits = {name: decoded_rows(datasets[name]) for name in ("train", "validation", "test") if name in datasets}
    splits["train"] = subsample(splits["train"], settings.max_train_examples)
    resolved = resolve_encoder(encoder)
    runs = []
    for seed in seeds:
        seed_dir = out_dir if len(seeds) == 1 else out_dir / f"seed-{seed}"
        log.info("training seed %d on %s → %s", seed, resolved, seed_dir)
        runs.append(train_seed(splits, resolved, seed, seed_dir, settings))
    results = {
        "release": str(release_dir),
        "config": config,
        "encoder": resolved,
        "encoder_requested": encoder,
        "settings": asdict(settings),
        "split_sizes": {name: len(rows) for name, rows in splits.items()},
        "runs": runs,
        "summary": {split: summarise(runs, split) for split in ("validation", "test") if split in splits},
    }
    write_json_atomic(out_dir / RESULTS_FILE, results)
    return results


# -- CLI -----------------------------------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    defaults = TrainSettings()
    parser.add_argument("--release", required=True, help="release folder (read with datasets.load_dataset)")
    parser.add_argument("--config", default=ontology.DEFAULT_CONFIG, choices=ontology.CONFIGS)
    parser.add_argument("--encoder", default=None,
                        help="encoder name or path (default: BiomedBERT if cached locally, else the packaged MiniLM)")
    parser.add_argument("--seed", type=int, nargs="+", default=[PAPER_SEEDS[0]],
                        help=f"one or more seeds (the paper uses {' '.join(map(str, PAPER_SEEDS))})")
    parser.add_argument("--epochs", type=float, default=defaults.epochs)
    parser.add_argument("--batch-size", type=int, default=defaults.batch_size)
    parser.add_argument("--eval-batch-size", type=int, default=defaults.eval_batch_size)
    parser.add_argument("--lr", type=float, default=defaults.learning_rate)
    parser.add_argument("--max-length", type=int, default=defaults.max_length)
    parser.add_argument("--patience", type=int, default=defaults.patience)
    parser.add_argument("--loss-weights", type=float, nargs=3, default=list(defaults.loss_weights),
                        metavar=("CT", "AX", "DC"), help="task loss weights (default 1.0 1.0 0.3)")
    parser.add_argument("--constraint-mode", default=defaults.constraint_mode,
                        choices=["none", "predicted_axes", "gold_axes"])
    parser.add_argument("--ablation", default="full", choices=list(ABLATIONS), help="paper Table 12 variant")
    parser.add_argument("--no-class-weights", action="store_true", help="turn off class weights and axis pos_weight")
    parser.add_argument("--max-train-examples", type=int, default=None,
                        help="train on a fixed random sample of N training rows (short schedules on CPU)")
    parser.add_argument("--out", required=True, help="model folder to write")


def settings_from_args(args: argparse.Namespace) -> TrainSettings:
    return TrainSettings(
        epochs=args.epochs, learning_rate=args.lr, batch_size=args.batch_size, eval_batch_size=args.eval_batch_size,
        patience=args.patience, max_length=args.max_length, loss_weights=tuple(args.loss_weights),
        constraint_mode=args.constraint_mode, ablation=args.ablation, class_weighting=not args.no_class_weights,
        max_train_examples=args.max_train_examples,
    )


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    results = train(args.release, args.out, args.encoder, tuple(args.seed), args.config, settings_from_args(args))
    for split, summary in results["summary"].items():
        shown = {k: v["mean"] for k, v in summary.items() if k in (BEST_METRIC, "conflict_type/ctx_f1", "axes/micro_f1", "confounder/accuracy")}
        print(f"{split}: " + json.dumps({k: round(v, 4) for k, v in shown.items()}))
    print(f"wrote {Path(args.out) / RESULTS_FILE}")
    return 0


if __name__ == "__main__":  # `accelerate launch -m trainer.train --release … --out …`
    import sys

    from biodivergence_dataset.cli import main

    sys.exit(main(["train", *sys.argv[1:]]))
