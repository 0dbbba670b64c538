"""``biodivergence train``: the reference model on ``transformers.Trainer`` (paper appendix J.3, Table 32).

The options (:mod:`trainer.training_args`) are ``transformers.TrainingArguments``, parsed by
``HfArgumentParser``, with the paper's defaults (``PAPER_DEFAULTS``: AdamW, lr 2e-5, weight decay 0.01, 8 epochs,
10% warmup, grad-norm 1.0, batch 16 / 32, evaluation and a checkpoint every epoch, early stopping with patience 3,
best checkpoint restored at the end), next to the BioDivergence
options (``RunArguments``, ``TrainSettings``). Everything Trainer offers works as usual:
``--bf16``, ``--gradient-accumulation-steps``, ``--report-to``, ``--save-total-limit``,
``--resume-from-checkpoint`` (a checkpoint folder, or ``true`` for the last one of each seed).
``--push-to-hub --hub-model-id ORG/NAME --hub-tag vX.Y`` publishes the trained folder through the
same code path as the dataset (:mod:`trainer.hub_model`). The old short flags stay as aliases
(``--out``, ``--epochs``, ``--lr``, ``--batch-size``, ``--eval-batch-size``).

Each evaluation tunes two thresholds on the logits it already has: the conflict threshold on ``1 − p(no_conflict)``
with the best Ctx-F1 (``predict.tune_conflict_threshold``), at which the conflict types are then decoded and scored,
and the axis threshold (``predict.tune_axis_threshold``). Checkpoint selection and early stopping read that
thresholded validation Ctx-F1 (:data:`~trainer.training_args.BEST_METRIC`). The kept checkpoint's thresholds are
saved in the model config, and the test split is predicted once with them. Validation is never run a second time.
Train-split class weights and axis ``pos_weight`` are computed here and saved in the model config. By default an
epoch holds every conflict and a fresh block of non-conflicts (``--negatives-per-conflict``, :mod:`trainer.imbalance`;
class weights then follow the epoch's counts), and the row's review question precedes claim a (``--with-question``).

A model folder holds what Trainer writes (the model with its code and ``auto_map``, the tokenizer,
``training_args.bin``, ``trainer_state.json``, ``train_results.json`` / ``eval_results.json`` /
``test_results.json`` / ``all_results.json``, ``checkpoint-*`` limited by ``save_total_limit``), the
test predictions, a model card (``README.md``) and our summary :data:`RESULTS_FILE`. One seed writes the
model to ``--out``; several seeds (the paper's 42 123 7) write ``--out/seed-<n>/`` each and report mean
± sample std in ``--out/`` :data:`RESULTS_FILE`. Accelerate runs underneath Trainer, so the same code runs
under ``accelerate launch -m biodivergence_cli train --release … --out …``; saving goes through
``Trainer.save_model`` on every process (it gathers FSDP / DeepSpeed weights) and our files are written
by the main process only.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import statistics
import sys
import time
from collections import Counter
from dataclasses import asdict
from pathlib import Path
from typing import Any

from transformers import TrainingArguments

from biodivergence_dataset import benchmark, ontology
from biodivergence_dataset.io import write_json_atomic
from biodivergence_dataset.tasks import task

from .constants import PAPER_SEEDS, PREDICTIONS_FILE, RESULTS_FILE
from .training_args import (
    ABLATIONS,
    BEST_METRIC,
    PROCESS_KEYS,
    ReferenceTrainingArguments,
    RunArguments,
    TrainSettings,
    parser,
    training_arguments,
    training_overrides,
)

log = logging.getLogger(__name__)

TUNED_THRESHOLD = "axis_threshold_tuned"
TUNED_AXES_F1 = "axes/micro_f1_at_tuned_threshold"
TUNED_CONFLICT_THRESHOLD = "conflict_threshold_tuned"
SUMMARY_TASKS = ("conflict_type", "axes", "confounder")
#: The TrainingArguments a run summary and the model card record.
SCHEDULE_KEYS = (
    "num_train_epochs", "learning_rate", "weight_decay", "warmup_steps", "lr_scheduler_type", "optim",
    "max_grad_norm", "per_device_train_batch_size", "per_device_eval_batch_size", "gradient_accumulation_steps",
    "bf16", "fp16", "seed", "metric_for_best_model", "greater_is_better",
)


def reported_keys() -> list[str]:
    """Metric keys logged during training and summarised over seeds: Tasks 1–3, the primary-axis view, per-class F1
    with its support (reference count), so an undefined F1 (None: the class on neither side) shows its n = 0."""
    keys = [k for t in SUMMARY_TASKS for k in [*task(t).metric_keys(), f"{t}/n"]]
    keys += [k.replace("axes/", "axes_primary/") for k in task("axes").metric_keys()]
    return keys + [f"conflict_type/{m}/{c}" for c in ontology.CONFLICT_TYPE_NAMES for m in ("f1", "support")]


# -- options -------------------------------------------------------------------------------------------------


def model_config_kwargs(settings: TrainSettings, train_rows: list[dict[str, Any]]) -> dict[str, Any]:
    """``MultiTaskConflictConfig`` arguments for a run: vocabularies, loss weights, imbalance handling, ablation."""
    from .data import axis_pos_weight, class_weights, weights_from_counts
    from .imbalance import epoch_label_counts
    from .pair_features import FEATURES

    ct, ax, dc = settings.loss_weights
    kwargs: dict[str, Any] = {
        "loss_weight_conflict_type": ct, "loss_weight_axes": ax, "loss_weight_confounder": dc,
        "constraint_mode": settings.constraint_mode, "max_length": settings.max_length,
        "conflict_type_names": list(ontology.CONFLICT_TYPE_NAMES), "axis_names": list(ontology.AXIS_NAMES),
        "claim_type_names": list(ontology.CLAIM_TYPE_NAMES),
        "feature_names": list(FEATURES), "feature_groups": [group for group, _ in FEATURES.values()],
        "focal_gamma": settings.focal_gamma, "use_question": settings.with_question,
        "finding_states": settings.finding_states,
    }
    if settings.class_weights and rebalanced(settings, train_rows):
        kwargs["class_weights"] = weights_from_counts(epoch_label_counts(
            [r["conflict_type"] for r in train_rows], ontology.NO_CONFLICT, settings.negatives_per_conflict))
        kwargs["axis_pos_weight"] = axis_pos_weight(train_rows)
    elif settings.class_weights:
        kwargs["class_weights"] = class_weights(train_rows)
        kwargs["axis_pos_weight"] = axis_pos_weight(train_rows)
    kwargs.update(ABLATIONS[settings.ablation])
    return kwargs


def rebalanced(settings: TrainSettings, train_rows: list[dict[str, Any]]) -> bool:
    """Whether epochs are drawn by :class:`~trainer.imbalance.ConflictEpochSampler`: asked for, and the train
    rows hold a conflict to draw them around (a split of non-conflicts only trains on plain epochs)."""
    return bool(settings.negatives_per_conflict) and any(r["conflict_type"] != ontology.NO_CONFLICT for r in train_rows)


class TaskMetrics:
    """Trainer ``compute_metrics``: decode the three heads and score them with the metric's plain scorer.

    Without ``tune`` (test), decoding reads the axis and conflict thresholds from ``model_config`` at each call, so
    after training the split is scored at the tuned thresholds. With ``tune`` (validation), the conflict threshold
    with the best Ctx-F1 on these very logits is chosen first and every score is decoded at it; it is reported as
    ``conflict_threshold_tuned`` and its Ctx-F1 as :data:`BEST_METRIC` (0.0 where undefined, so Trainer can compare
    checkpoints). The axis threshold with the best axis micro-F1 is reported as ``axis_threshold_tuned`` (and that
    F1 as ``axes/micro_f1_at_tuned_threshold``). The kept checkpoint's values are the ones saved, without a second
    pass.
    ``bootstrap`` adds ``<key>/ci_low`` / ``<key>/ci_high`` (95%) to the key metrics (``tasks.yaml``). A score the
    metric reports as undefined stays None (never a number), so Trainer's logs, the run summary and the card agree
    with it.
    """

    def __init__(self, model_config, tune: bool = True, bootstrap: int = 0, classes: list[str] | None = None):
        self.model_config, self.tune, self.bootstrap, self.classes = model_config, tune, bootstrap, classes
        self.keys = reported_keys()

    def __call__(self, eval_pred) -> dict[str, int | float | None]:
        from .metric import score
        from .predict import decode, references_from_labels, tune_axis_threshold, tune_conflict_threshold

        conflict, axes, confounder = eval_pred.predictions
        labels, axis_labels, confounder_labels = eval_pred.label_ids
        config = self.model_config
        conflict_threshold = getattr(config, "conflict_threshold", None)
        if self.tune:
            conflict_threshold, tuned_ctx_f1 = tune_conflict_threshold(conflict, labels)
        predictions = decode(conflict, axes, confounder, config.constraint_mode, config.axis_threshold, axis_labels,
                             conflict_threshold)
        references = references_from_labels(labels, axis_labels, confounder_labels)
        scores = score(predictions, references, semsim_model=None, bootstrap=self.bootstrap, classes=self.classes)
        out = {k: _number(scores[k]) for k in self.keys if k in scores}
        out.update({k: _number(v) for k, v in scores.items() if _is_interval_or_support(k) and v is not None})
        if self.tune:
            out[TUNED_CONFLICT_THRESHOLD], out[BEST_METRIC] = conflict_threshold, float(tuned_ctx_f1 or 0.0)
            out[TUNED_THRESHOLD], out[TUNED_AXES_F1] = tune_axis_threshold(axes, axis_labels)
        return out


def _number(value: Any) -> int | float | None:
    """A metric value for Trainer's logs: counts stay ints, scores floats, undefined scores None."""
    return value if value is None or isinstance(value, int) else float(value)


def _printable(metrics: dict[str, Any]) -> dict[str, Any]:
    """Metrics for ``Trainer.log_metrics``, which cannot print None: an undefined score shows as "n/a"."""
    return {k: "n/a" if v is None else v for k, v in metrics.items()}


def make_compute_metrics(constraint_mode: str, axis_threshold: float, tune: bool = False,
                         conflict_threshold: float | None = None):
    """A :class:`TaskMetrics` for a fixed constraint mode and thresholds (tests, scripts)."""
    config = argparse.Namespace(constraint_mode=constraint_mode, axis_threshold=axis_threshold,
                                conflict_threshold=conflict_threshold)
    return TaskMetrics(config, tune=tune)


def _reported(metrics: dict[str, Any], prefix: str) -> dict[str, float]:
    """The reported metric keys (with intervals, and the loss) of a Trainer metrics dict, without the split prefix."""
    start = f"{prefix}_"
    keys = {*reported_keys(), "loss"}
    return {k[len(start):]: v for k, v in metrics.items()
            if k.startswith(start) and (k[len(start):] in keys or _is_interval_or_support(k))}


def _is_interval_or_support(key: str) -> bool:
    """A 95% interval bound or a support count (``task/n``, ``conflict_type/support/<class>``) of a score."""
    return key.endswith(("/ci_low", "/ci_high", "/n")) or "/support/" in key


def kept_evaluation(state, load_best_model_at_end: bool) -> dict[str, Any]:
    """The logged evaluation of the model Trainer ends with: the best checkpoint's (``best_global_step``) when it
    restores it, else the evaluation at the last step; ``{}`` when there is none."""
    evaluations = [h for h in state.log_history if any(k.startswith("eval_") and k != "eval_runtime" for k in h)]
    step = state.best_global_step if load_best_model_at_end and state.best_global_step else state.global_step
    return next((h for h in evaluations if h.get("step") == step), {})


def summarise(runs: list[dict[str, Any]], split: str) -> dict[str, dict[str, float | None]]:
    """Mean and sample std over seeds of the task metrics on one split (std None for a single seed); over the
    seeds where the metric is defined, None where it is undefined on every seed."""
    out: dict[str, dict[str, float | None]] = {}
    for key in reported_keys():
        reported = [r[split][key] for r in runs if split in r and key in r[split]]
        values = [v for v in reported if v is not None]
        if reported and not values:
            out[key] = {"mean": None, "std": None}
        elif values:
            out[key] = {
                "mean": statistics.fmean(values),
                "std": statistics.stdev(values) if len(values) > 1 else None,
            }
    return out


# -- one seed ------------------------------------------------------------------------------------------------


def _schedule(args: TrainingArguments) -> dict[str, Any]:
    schedule = {k: getattr(args, k) for k in SCHEDULE_KEYS}
    schedule["lr_scheduler_type"] = str(getattr(args.lr_scheduler_type, "value", args.lr_scheduler_type))
    schedule["optim"] = str(getattr(args.optim, "value", args.optim))
    schedule["world_size"] = args.world_size
    return schedule


def train_seed(
    splits: dict[str, list[dict[str, Any]]],
    encoder: str,
    args: TrainingArguments,
    settings: TrainSettings,
    resume_from_checkpoint: str | bool | None = None,
    finding_states_from: Path | None = None,
) -> dict[str, Any]:
    """Train one seed on decoded ``splits`` (train / validation, test if present) into ``args.output_dir``, its
    encoder and finding states taken from ``finding_states_from`` when given (``trainer.finding_states``).

    Returns the run's summary; every process returns it, the main process alone writes files besides
    Trainer's own.
    """
    from transformers import AutoTokenizer, EarlyStoppingCallback, Trainer, set_seed

    from .data import PairCollator, encode_rows
    from .encoders import hub_name
    from .imbalance import ConflictBalancedTrainer
    from .modeling import MultiTaskConflictModel
    from .predict import HeadOutputs, decoded, write_jsonl

    set_seed(args.seed)
    out_dir = Path(args.output_dir)
    tokenizer = AutoTokenizer.from_pretrained(encoder)
    model = MultiTaskConflictModel.from_encoder(encoder, hub_name=hub_name(encoder), sep_token_id=tokenizer.sep_token_id,
                                                **model_config_kwargs(settings, splits["train"]))
    if finding_states_from is not None:
        from .finding_states import load_finding_weights

        load_finding_weights(model, finding_states_from)
    model.freeze_lower_layers(settings.freeze_layers)
    encoded = {name: encode_rows(rows, tokenizer, settings.max_length, settings.with_question)
               for name, rows in splits.items()}
    for name in ("validation", "test"):  # evaluation batches of similar lengths pad less (scores do not depend on order)
        if name in encoded:
            encoded[name] = sorted(encoded[name], key=lambda item: len(item["input_ids"]))
    # macro-F1 over the training rows' classes, as the card's leaderboard and `biodivergence evaluate` score it
    classes = benchmark.classes_present(r["conflict_type"] for r in splits["train"])
    metrics = TaskMetrics(model.config, tune=True, classes=classes)
    callbacks = []
    if args.load_best_model_at_end and args.metric_for_best_model:
        callbacks.append(EarlyStoppingCallback(early_stopping_patience=settings.patience))
    balance = {}
    if rebalanced(settings, splits["train"]):
        balance = {"negative": ontology.CONFLICT_TYPE_NAMES.index(ontology.NO_CONFLICT),
                   "negatives_per_conflict": settings.negatives_per_conflict}
    trainer = (ConflictBalancedTrainer if balance else Trainer)(
        model=model,
        args=args,
        train_dataset=encoded["train"],
        eval_dataset=encoded["validation"],
        data_collator=PairCollator(tokenizer),
        processing_class=tokenizer,
        compute_metrics=metrics,
        callbacks=callbacks,
        **balance,
    )
    started = time.perf_counter()
    train_output = trainer.train(resume_from_checkpoint=resume_from_checkpoint)
    runtime = time.perf_counter() - started
    trainer.save_metrics("train", train_output.metrics)

    kept = kept_evaluation(trainer.state, args.load_best_model_at_end)
    if not kept:  # no evaluation of the kept model was logged (evaluation off): evaluate it once
        kept = trainer.evaluate()
    threshold = kept.get(f"eval_{TUNED_THRESHOLD}", trainer.model.config.axis_threshold)
    trainer.model.config.axis_threshold = threshold
    conflict_threshold = kept.get(f"eval_{TUNED_CONFLICT_THRESHOLD}", trainer.model.config.conflict_threshold)
    trainer.model.config.conflict_threshold = conflict_threshold
    eval_metrics = {k: v for k, v in kept.items() if k.startswith("eval_")}
    trainer.log_metrics("eval", _printable(eval_metrics))
    trainer.save_metrics("eval", eval_metrics)

    result: dict[str, Any] = {
        "seed": args.seed,
        "model_dir": str(out_dir),
        "epochs_run": trainer.state.epoch,
        "global_step": trainer.state.global_step,
        "best_checkpoint": Path(trainer.state.best_model_checkpoint).name if trainer.state.best_model_checkpoint else None,
        "best_validation_score": kept.get(f"eval_{BEST_METRIC}"),
        "best_validation_macro_f1": kept.get("eval_conflict_type/macro_f1"),
        "train_runtime_s": round(runtime, 2),
        "validation": _reported(kept, "eval"),
        "axis_threshold": threshold,
        "conflict_threshold": conflict_threshold,
        "validation_axes_micro_f1_at_threshold": kept.get(f"eval_{TUNED_AXES_F1}"),
        "schedule": _schedule(args),
        "resumed_from": str(resume_from_checkpoint) if resume_from_checkpoint else None,
    }
    test_output = None
    if "test" in encoded:
        trainer.compute_metrics = TaskMetrics(trainer.model.config, tune=False, bootstrap=settings.bootstrap,
                                               classes=classes)
        test_output = trainer.predict(encoded["test"], metric_key_prefix="test")
        trainer.log_metrics("test", _printable(test_output.metrics))
        trainer.save_metrics("test", test_output.metrics)
        result["test"] = _reported(test_output.metrics, "test")
    trainer.save_model(str(out_dir))  # every process: FSDP / DeepSpeed gather the weights here
    trainer.save_state()
    if trainer.is_world_process_zero():
        _portable_tokenizer_config(out_dir)
    if trainer.is_world_process_zero() and test_output is not None:
        conflict, axes, confounder = test_output.predictions
        outputs = HeadOutputs([it["pair_id"] for it in encoded["test"]], conflict, axes, confounder,
                              test_output.label_ids[1])
        records = {r["pair_id"]: r for r in decoded(outputs, trainer.model.config)}
        write_jsonl(out_dir / PREDICTIONS_FILE, [records[row["pair_id"]] for row in splits["test"]])
    result["is_main_process"] = trainer.is_world_process_zero()
    return result


#: Loading options of this machine that ``save_pretrained`` copies into tokenizer_config.json (offline loading).
_LOCAL_TOKENIZER_KEYS = ("is_local", "local_files_only", "cache_dir", "name_or_path")


def _portable_tokenizer_config(folder: Path) -> None:
    """Drop how the tokenizer was loaded here (offline, from a local folder) from the saved tokenizer config."""
    path = folder / "tokenizer_config.json"
    if not path.exists():
        return
    config = json.loads(path.read_text(encoding="utf-8"))
    if any(key in config for key in _LOCAL_TOKENIZER_KEYS):
        write_json_atomic(path, {k: v for k, v in config.items() if k not in _LOCAL_TOKENIZER_KEYS})


# -- a run ---------------------------------------------------------------------------------------------------


def load_training_splits(
    release_dir: str | Path, config: str, settings: TrainSettings,
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, int]]:
    """Decoded rows of train (sampled to ``max_train_examples``), validation and test (sampled to
    ``max_eval_examples``); only the rows used are decoded. Also returns the full split sizes."""
    from biodivergence_dataset.release import resolve_release

    from .data import load_splits, sampled_rows

    datasets = load_splits(resolve_release(release_dir), config)
    missing = {"train", "validation"} - set(datasets)
    if missing:
        raise ValueError(f"{release_dir} ({config}) lacks the split(s) {sorted(missing)} needed for training")
    splits, sizes = {}, {}
    for name in ("train", "validation", "test"):
        if name not in datasets:
            continue
        ds = datasets[name]
        sizes[name] = len(ds)
        cap = settings.max_train_examples if name == "train" else settings.max_eval_examples
        splits[name] = sampled_rows(ds, cap, keep_order=name != "train")
    return splits, sizes


def _resume_point(seed_dir: Path, resume: str | bool | None, n_seeds: int) -> str | bool | None:
    """What to pass to ``Trainer.train(resume_from_checkpoint=...)`` for one seed's folder."""
    from transformers.trainer_utils import get_last_checkpoint

    if resume in (None, False, "", "false", "False"):
        return None
    if resume in (True, "true", "True"):
        last = get_last_checkpoint(str(seed_dir)) if seed_dir.is_dir() else None
        if last is None:
            log.warning("no checkpoint in %s: training this seed from the start", seed_dir)
        return last
    if n_seeds > 1:
        raise ValueError("--resume-from-checkpoint PATH names one seed's checkpoint; with several seeds pass "
                         "--resume-from-checkpoint true (each seed resumes from its own last checkpoint)")
    if not Path(resume).is_dir():
        raise FileNotFoundError(f"checkpoint {resume} does not exist")
    return str(resume)


def _finished_run(seed_dir: Path, resume: str | bool | None) -> dict[str, Any] | None:
    """A seed already trained by an earlier run (kept when resuming a multi-seed run)."""
    done = seed_dir / RESULTS_FILE
    if resume in (True, "true", "True") and done.exists() and (seed_dir / "config.json").exists():
        runs = json.loads(done.read_text(encoding="utf-8")).get("runs") or []
        if len(runs) == 1:
            log.info("seed %s: finished earlier in %s, kept", runs[0]["seed"], seed_dir)
            return runs[0]
    return None


def train(
    release_dir: str | Path,
    out_dir: str | Path,
    encoder: str | None = None,
    seeds: tuple[int, ...] = (PAPER_SEEDS[0],),
    config: str = ontology.DEFAULT_CONFIG,
    settings: TrainSettings | None = None,
    training: dict[str, Any] | None = None,
    resume_from_checkpoint: str | bool | None = None,
) -> dict[str, Any]:
    """Train one model per seed on a release; write :data:`RESULTS_FILE` and model cards; returns the summary.

    ``training``: ``TrainingArguments`` values over :data:`~trainer.training_args.PAPER_DEFAULTS`
    (``output_dir`` and ``seed`` come from ``out_dir`` / ``seeds``).
    """
    from .encoders import resolve_encoder
    from .model_card import write_model_card

    settings = settings or TrainSettings()
    training = dict(training or {})
    out_dir = Path(out_dir)
    splits, full_sizes = load_training_splits(release_dir, config, settings)
    resolved = resolve_encoder(encoder)
    finding_states_from = None
    if settings.finding_data:
        from .finding_states import FindingStageSettings, pretrained_finding_states

        processes = {key: training[key] for key in PROCESS_KEYS if key in training}
        finding_states_from = pretrained_finding_states(resolved, settings.finding_data,
                                                        FindingStageSettings(max_length=settings.max_length),
                                                        processes=processes)
    runs, main_process = [], True
    for seed in seeds:
        seed_dir = out_dir if len(seeds) == 1 else out_dir / f"seed-{seed}"
        finished = _finished_run(seed_dir, resume_from_checkpoint) if len(seeds) > 1 else None
        if finished is not None:
            runs.append(finished)
            continue
        resume = _resume_point(seed_dir, resume_from_checkpoint, len(seeds))
        log.info("training seed %d on %s → %s%s", seed, resolved, seed_dir, f" (resuming {resume})" if resume else "")
        args = training_arguments(seed_dir, seed, **training)
        run = train_seed(splits, resolved, args, settings, resume, finding_states_from)
        main_process = run.pop("is_main_process")
        runs.append(run)
        if main_process and len(seeds) > 1:
            _write_results(seed_dir, _results(release_dir, config, resolved, encoder, settings, splits, full_sizes, [run]))
    results = _results(release_dir, config, resolved, encoder, settings, splits, full_sizes, runs)
    if main_process:
        _write_results(out_dir, results)
        for run in runs:
            write_model_card(Path(run["model_dir"]))
    return results


def _results(release_dir, config, resolved, encoder, settings, splits, full_sizes, runs) -> dict[str, Any]:
    from .encoders import hub_name
    from .model_card import release_reference

    return {
        "release": str(release_dir),
        "release_reference": release_reference(release_dir),
        "config": config,
        "encoder": hub_name(resolved) or resolved,
        "encoder_requested": encoder,
        "settings": asdict(settings),
        "split_sizes": {name: len(rows) for name, rows in splits.items()},
        "release_split_sizes": full_sizes,
        "label_counts": {name: dict(Counter(r["conflict_type"] for r in rows)) for name, rows in splits.items()},
        "runs": runs,
        "summary": {split: summarise(runs, split) for split in ("validation", "test") if split in splits},
    }


def _write_results(folder: Path, results: dict[str, Any]) -> None:
    write_json_atomic(folder / RESULTS_FILE, results)


# -- CLI -----------------------------------------------------------------------------------------------------


def add_arguments(parser_: argparse.ArgumentParser) -> None:
    """The options of :func:`parser` (HfArgumentParser) on the ``biodivergence train`` parser."""
    parser_._add_container_actions(parser())  # what ArgumentParser(parents=[...]) does


def parse_namespace(args: argparse.Namespace) -> tuple[RunArguments, TrainSettings, dict[str, Any], list[int]]:
    """(run arguments, settings, TrainingArguments overrides, seeds) of a parsed command line."""
    def build(dtype):
        return dtype(**{f.name: getattr(args, f.name) for f in dataclasses.fields(dtype) if f.init and hasattr(args, f.name)})

    run_args, settings = build(RunArguments), build(TrainSettings)
    seeds = list(args.seed) if isinstance(args.seed, (list, tuple)) else [args.seed]
    training = training_overrides(args)
    training["output_dir"] = args.output_dir
    ReferenceTrainingArguments(**training, seed=seeds)  # validates the combination (as Trainer would) before any work
    del training["output_dir"]
    return run_args, settings, training, seeds


def _check_push(training: dict[str, Any], run_args: RunArguments, seeds: list[int]) -> dict[str, Any] | None:
    """The push to make after training (``--push-to-hub``), checked before any training; Trainer never pushes."""
    push = training.pop("push_to_hub", False)
    hub = {k: training.pop(k, None) for k in ("hub_model_id", "hub_token", "hub_private_repo")}
    training.pop("hub_strategy", None)
    if not push:
        return None
    from biodivergence_dataset.hub import check_names

    if not hub["hub_model_id"] or not run_args.hub_tag:
        raise ValueError("--push-to-hub needs --hub-model-id ORG/NAME and --hub-tag vX.Y")
    if len(seeds) > 1:
        raise ValueError("--push-to-hub publishes one model: train one --seed (or push a seed folder with "
                         "`python -m trainer.hub_model`)")
    check_names(hub["hub_model_id"], run_args.hub_tag)
    return {"repo_id": hub["hub_model_id"], "tag": run_args.hub_tag, "token": hub["hub_token"],
            "private": bool(hub["hub_private_repo"])}


def run(args: argparse.Namespace) -> int:
    try:
        return _train_and_report(args)
    finally:
        _end_process_group()


def _end_process_group() -> None:
    """Destroy the process group of a multi-process run (torchrun, ``accelerate launch``) once its work is done:
    left to the interpreter's exit, gloo's threads can abort a finished rank ("terminate called without an active
    exception", seen once in the two-process test on a loaded machine)."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


def _train_and_report(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    run_args, settings, training, seeds = parse_namespace(args)
    resume = training.pop("resume_from_checkpoint", None)
    push = _check_push(training, run_args, seeds)
    out = Path(args.output_dir)
    try:
        results = train(run_args.release, out, run_args.encoder, tuple(seeds), run_args.config, settings,
                        training, resume)
    except KeyboardInterrupt:
        print(interrupted_message(out, seeds), file=sys.stderr)
        return 130
    for split, summary in results["summary"].items():
        shown = {k: v["mean"] for k, v in summary.items() if k in ("conflict_type/macro_f1", "conflict_type/ctx_f1", "axes/micro_f1", "confounder/accuracy")}
        print(f"{split}: " + json.dumps({k: None if v is None else round(v, 4) for k, v in shown.items()}))
    print(f"wrote {out / RESULTS_FILE}")
    if push is not None and _is_main_process():
        from .hub_model import push_model

        oid = push_model(out, push["repo_id"], push["tag"], private=push["private"], token=push["token"])
        print(f"published {push['repo_id']}@{push['tag']} (commit {oid}); load it with "
              f"AutoModel.from_pretrained({push['repo_id']!r}, revision={push['tag']!r}, trust_remote_code=True)")
    return 0


def _is_main_process() -> bool:
    from accelerate import PartialState

    return PartialState().is_main_process


def interrupted_message(out: Path, seeds: list[int]) -> str:
    """What an interrupted run left, and how to go on from it."""
    from transformers.trainer_utils import get_last_checkpoint

    folders = [out] if len(seeds) == 1 else [out / f"seed-{s}" for s in seeds]
    checkpoints = [c for c in (get_last_checkpoint(str(f)) if f.is_dir() else None for f in folders) if c]
    if not checkpoints:
        return ("interrupted before the first checkpoint (one is saved after each epoch): "
                "re-running the same command starts over")
    return (f"interrupted; last checkpoint: {', '.join(checkpoints)}. Re-run the same command with "
            "--resume-from-checkpoint true to continue from there" + (" (finished seeds are kept)" if len(seeds) > 1 else ""))
