"""Benchmark run: the reference model over seeds next to the baseline suite, on one release.

The baselines of Tasks 1–3 (``biodivergence baselines``) run first on the release and split. Then, for each seed,
``trainer.train.train`` fits the reference model (one folder per seed, so an interrupted run resumes at the
first seed without a ``biodivergence_results.json`` for this release). Its predictions of the evaluated split (those training
wrote for the test split, decoded at the conflict and axis thresholds tuned on validation) are copied beside and
scored through ``evaluate.load(metrics/biodivergence)`` as a user would score them, macro-F1 over the release's
train classes (``biodivergence_dataset.benchmark.train_classes``, recorded as ``classes``), as the floors are. The report (rewritten after each seed, so a cut-short run still shows the seeds it finished) puts the
reference model (mean ± sample std over seeds) in the baselines' Task 1–3 columns and says whether every seed's
Ctx-F1 lies above the majority, stratified-random and lexical baselines (non-overlapping ranges), with the
machine, its state at the start and its load during the run.

The defaults are the CPU-budget schedule of the committed report (about 30 minutes on 2 idle cores, the first
stage's 16 included; see the report's time line): every training row, epochs of every conflict plus three
non-conflicts per conflict (a fresh block each epoch), the row's question in the input, each claim read apart into
4 finding states (``trainer.modeling``) that a first stage fitted, with the encoder, to Evidence Inference's expert
findings (``trainer.finding_states``, ``--finding-data``), max length 128, the encoder that stage fitted kept
frozen (``--freeze-layers 6``: on validation it kept the expert reading better than training the upper three
layers on the release, Ctx-F1 0.25 against 0.19–0.20), lr 5e-5, up to 5 such epochs with patience 3, the checkpoint with the lowest validation loss kept (``--select-on``)
and the conflict threshold tuned on validation::

    python benchmarks/reference_run.py --release build/demo/release

The paper's schedule is ``--negatives-per-conflict 0 --freeze-layers 0 --max-length 256 --lr 2e-5`` (every
row every epoch; about 13 hours on 2 CPU cores for the demo release).
Writes ``--out`` (models, predictions, baselines) and ``benchmarks/results/reference_run.{json,md}``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import statistics
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from results_files import load_averages, machine_fields, write_results

from biodivergence_dataset.benchmark import read_floors, train_classes
from biodivergence_dataset.io import write_text_atomic
from biodivergence_dataset.ontology import NO_CONFLICT
from trainer.baselines import run_baselines
from trainer.baselines.suite import RESULTS_JSON, SuiteOptions
from trainer.constants import PAPER_SEEDS, PREDICTIONS_FILE, RESULTS_FILE
from trainer.data import decoded_rows, load_splits
from trainer.metric import load_metric
from trainer.predict import decoded, head_outputs, load_model, read_jsonl, reference_record, write_jsonl
from trainer.train import train
from trainer.training_args import BEST_METRIC, PAPER_DEFAULTS, TrainSettings

RESULTS = ROOT / "benchmarks" / "results" / "reference_run"
#: (column header, metric key) of the comparison table: Tasks 1–3.
COLUMNS = (
    ("Acc.", "conflict_type/accuracy"), ("Macro-F1", "conflict_type/macro_f1"), ("κ", "conflict_type/kappa"),
    ("Ctx F1", "conflict_type/ctx_f1"), ("Axes micro-F1", "axes/micro_f1"), ("Axes macro-F1", "axes/macro_f1"),
    ("Confounder acc.", "confounder/accuracy"),
)
CTX = "conflict_type/ctx_f1"
#: The reference model is decoded as ``biodivergence train`` saves it: with the axis threshold tuned on validation.
VARIANTS = {"tuned": "conflict and axis thresholds tuned on validation"}
#: Baselines the issue asks the reference model to be compared with on Ctx-F1.
RIVALS = {"majority": "Majority class", "stratified-random": "Stratified random",
          "lexical-gbt": "Lexical gradient boosting"}
#: Baselines of Tasks 4–5 only (reconciliation, spans): the reference model is compared on Tasks 1–3.
OTHER_TASK_BASELINES = ("constant-template", "extractive-reconciliation", "template-predicted", "template-gold",
                        "span-heuristic", "bm25-spans", "dense-spans")
#: The paper's reference Ctx-F1 (three seeds, article-disjoint test), the figure the issue asks for.
PAPER_CTX_F1 = 0.40


#: Written beside a seed's model: the digest of the release it was trained on (its ``release_files.json``).
RELEASE_STAMP = "release_files.sha256"


def release_digest(release: Path) -> str:
    """sha256 of a release's file list (which holds every file's own sha256): a rebuilt release differs."""
    return hashlib.sha256((release / "release_files.json").read_bytes()).hexdigest()


def train_seed_once(release: Path, out: Path, encoder: str, seed: int, settings: TrainSettings,
                    training: dict[str, Any]) -> dict[str, Any]:
    """The run summary (``RESULTS_FILE``) of one seed trained into ``out/seed-<n>`` (reused when a finished run
    on the same release, with the same settings and schedule, is there; then marked ``reused``)."""
    folder = out / f"seed-{seed}"
    done, stamp = folder / RESULTS_FILE, folder / RELEASE_STAMP
    digest = release_digest(release)
    if done.exists() and stamp.exists() and stamp.read_text(encoding="utf-8").strip() == digest:
        previous = json.loads(done.read_text(encoding="utf-8"))
        schedule = previous["runs"][0].get("schedule", {}) if previous.get("runs") else {}
        if previous.get("settings") == json.loads(json.dumps(asdict(settings))) and all(
                schedule.get(k) == v for k, v in training.items()):
            print(f"seed {seed}: reusing {folder}")
            return {**previous, "reused": True}
    results = train(release, folder, encoder, (seed,), settings=settings, training=training)
    write_text_atomic(stamp, digest + "\n")
    return results


def seed_predictions(run: dict[str, Any], rows: list[dict[str, Any]], split: str) -> list[dict[str, Any]]:
    """A trained seed's prediction records for ``rows`` in their order: the test predictions training wrote (one
    pass over the split fewer), else the saved model run over the rows."""
    saved = Path(run["model_dir"]) / PREDICTIONS_FILE
    if split == "test" and saved.exists():
        by_id = {r["pair_id"]: r for r in read_jsonl(saved)}
        if set(by_id) == {r["pair_id"] for r in rows}:
            return [by_id[r["pair_id"]] for r in rows]
    model, tokenizer = load_model(run["model_dir"])
    return decoded(head_outputs(model, tokenizer, rows), model.config)


def score_predictions(records: list[dict[str, Any]], references: list[dict[str, Any]], metric,
                      classes: list[str] | None = None) -> dict[str, float]:
    """Tasks 1–3 scores of prediction records (in reference order) through the evaluate module; macro-F1 over
    ``classes`` (the release's train classes) when given."""
    fields = ("conflict_type", "divergence_axes", "dominant_confounder")
    scores = metric.compute(predictions=[{f: r[f] for f in fields} for r in records],
                            references=[{f: r[f] for f in fields} for r in references], semsim_model=None,
                            classes=classes)
    return {k: float(v) for k, v in scores.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


def shown_path(path: str | Path) -> str:
    """A path relative to the repository when it lies inside it (results files are committed)."""
    path = Path(path).resolve()
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def mean_std(values: list[float]) -> dict[str, float | None]:
    return {"mean": statistics.fmean(values), "std": statistics.stdev(values) if len(values) > 1 else None}


def _fmt(cell: dict[str, float | None] | float | None) -> str:
    if cell is None:
        return "—"
    if isinstance(cell, dict):
        std = cell["std"]
        return f"{cell['mean']:.4f}" + ("" if std is None else f" ± {std:.4f}")
    return "nan" if math.isnan(cell) else f"{cell:.4f}"


def verdicts(per_seed_ctx: list[float], by_slug: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Per rival baseline: does the whole range of the seeds' Ctx-F1 lie above its score (single runs)?"""
    return [{"baseline": name, "reference_min": min(per_seed_ctx), "reference_max": max(per_seed_ctx),
             "baseline_score": by_slug[slug]["scores"][CTX], "beats": min(per_seed_ctx) > by_slug[slug]["scores"][CTX]}
            for slug, name in RIVALS.items() if slug in by_slug]


def render(report: dict[str, Any]) -> str:
    """The markdown report: settings, the comparison table, per-seed Ctx-F1 and the verdicts."""
    s = report["settings"]
    support = report["test_label_counts"]
    lines = [
        "# Reference model vs baselines", "",
        (f"- release: {report['release']} (config {report['config']}, evaluated split {report['split']}, "
         f"n = {report['n_evaluated']}: " + ", ".join(f"{k} {v}" for k, v in support.items()) + ")"),
        f"- macro-F1 over the release's train classes: {', '.join(report['classes'])}",
        (f"- encoder: {report['encoder']}; seeds {' '.join(map(str, report['seeds_done']))} of "
        f"{' '.join(map(str, report['seeds']))}"),
        (f"- schedule: every one of the {report['train_examples']} training rows; an epoch = every conflict + "
         f"{s['negatives_per_conflict']} non-conflicts per conflict (a fresh block each epoch), "
         f"{report['epoch_rows']} rows; up to {s['epochs']} epochs, checkpoint selection and early stopping on "
         + ("the validation loss" if s.get("select_on") == "loss" else
            "validation Ctx-F1 at the conflict threshold tuned at each evaluation")
         + f", the conflict threshold tuned on validation (patience {s['patience']}); focal γ {s['focal_gamma']}; question in the input: {s['with_question']}; "
         f"lr {s['learning_rate']}, batch {s['batch_size']}, max length {s['max_length']}, "
         f"frozen encoder layers {s['freeze_layers']}; finding states {s.get('finding_states', 0)} "
         "(0: the plain cross-encoder)"
         + ("; encoder and finding states first fitted to Evidence Inference's training-part findings "
            "(trainer.finding_states)" if s.get("finding_data") else "")),
        (f"- time: {report['train_seconds']:.0f} s training over {len(report['seeds_done'])} seed(s), "
         f"{report['wall_seconds']:.0f} s wall for the whole command on {report['machine']}"
         + (f" (seeds {' '.join(map(str, report['seeds_reused']))} reused from an earlier run of it: their training "
            "time is counted, not in this wall time)" if report["seeds_reused"] else "") + ", "
         f"{report['machine_state']} at the start (1-min load averages before the run and after each stage: "
         f"{', '.join(f'{v:.1f}' for v in report['load_averages'])})"),
        "",
        "| System | " + " | ".join(h for h, _ in COLUMNS) + " |",
        "|---|" + "---|" * len(COLUMNS),
    ]
    for row in report["table"]:
        lines.append(f"| {row['system']} | " + " | ".join(_fmt(row["scores"].get(k)) for _, k in COLUMNS) + " |")
    lines += ["", ("Reference model cells are mean ± sample std over seeds; baselines are single runs. The reference "
                   "model's and the floors' macro-F1 average over the train classes above; the baseline suite's over "
                   "the classes either side uses (the metric's default)."), ""]
    n_val = report["validation_label_counts"]
    lines += [(f"Per seed (validation n = {sum(n_val.values())}: " + ", ".join(f"{k} {v}" for k, v in n_val.items())
               + f"; test n = {report['n_evaluated']}). Validation scores are of the kept checkpoint at its own "
               "tuned threshold, so they are optimistic; test is decoded at the saved thresholds only."), "",
              ("| Seed | Epochs run | Kept checkpoint | Conflict threshold | Axis threshold | Validation Ctx-F1 | "
              "Validation macro-F1 | Test Ctx-F1 | Test macro-F1 | Train s |"),
              "|---|---|---|---|---|---|---|---|---|---|"]
    for r in report["runs"]:
        test = report["per_seed_test"]["tuned"][str(r["seed"])]
        lines.append(f"| {r['seed']} | {r['epochs_run']:.0f} | {r['best_checkpoint']} | {r.get('conflict_threshold')} | "
                     f"{r['axis_threshold']} | {_fmt(r['validation'].get(CTX))} | "
                     f"{_fmt(r['best_validation_macro_f1'])} | {_fmt(test[CTX])} | "
                     f"{_fmt(test.get('conflict_type/macro_f1'))} | {r['train_runtime_s']:.0f} |")
    lines.append("")
    lines += [f"- Ctx-F1 vs {v['baseline']}: seeds {v['reference_min']:.4f}–{v['reference_max']:.4f} vs "
              f"{v['baseline_score']:.4f} → {'beats (ranges do not overlap)' if v['beats'] else 'does not beat'}"
              for v in report["ctx_f1_verdicts"]]
    ctx = report["reference_ctx_f1"]
    lines.append(f"- Ctx-F1 mean {ctx['mean']:.4f} vs the paper's {PAPER_CTX_F1:.2f}: "
                 f"{'reached' if ctx['mean'] >= PAPER_CTX_F1 else 'not reached'}")
    return "\n".join(lines) + "\n"


def parse_args() -> argparse.Namespace:
    defaults = TrainSettings()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", type=Path, default=ROOT / "build" / "demo" / "release")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "reference_run")
    parser.add_argument("--encoder", default="minilm")
    parser.add_argument("--seeds", type=int, nargs="+", default=list(PAPER_SEEDS))
    parser.add_argument("--epochs", type=float, default=5.0)
    parser.add_argument("--patience", type=int, default=3)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--negatives-per-conflict", type=float, default=defaults.negatives_per_conflict)
    parser.add_argument("--focal-gamma", type=float, default=defaults.focal_gamma)
    parser.add_argument("--freeze-layers", type=int, default=6, help="the embeddings and first N encoder layers "
                        "kept fixed (6: all of MiniLM's, as fitted by the finding-state stage)")
    parser.add_argument("--select-on", choices=("loss", BEST_METRIC), default="loss",
                        help="checkpoint selection and early stopping on the validation loss (lower is better) or on "
                             "validation Ctx-F1 at the conflict threshold tuned at each evaluation")
    parser.add_argument("--finding-states", type=int, default=defaults.finding_states)
    parser.add_argument("--finding-data", default="../shared/data", type=lambda text: text or None,
                        help="fit the encoder and finding states to Evidence Inference's development part in this "
                             "folder of expert sources first (trainer.finding_states; '': start from the encoder "
                             "alone)")
    parser.add_argument("--no-question", action="store_true", help="leave the row's question out of the input")
    parser.add_argument("--max-train-examples", type=int, default=None)
    parser.add_argument("--bootstrap", type=int, default=0,
                        help="bootstrap resamples for the 95%% intervals in each seed's model card (0: none, faster)")
    parser.add_argument("--split", default="test")
    parser.add_argument("--results", type=Path, default=RESULTS, help="report path without suffix (.json and .md)")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    started, loads = time.perf_counter(), [load_averages()[0]]
    settings = TrainSettings(max_length=args.max_length, max_train_examples=args.max_train_examples,
                             patience=args.patience, negatives_per_conflict=args.negatives_per_conflict or None,
                             focal_gamma=args.focal_gamma, freeze_layers=args.freeze_layers,
                             finding_states=args.finding_states, finding_data=args.finding_data,
                             with_question=not args.no_question, bootstrap=args.bootstrap)
    training = {"num_train_epochs": args.epochs, "learning_rate": args.lr, "metric_for_best_model": args.select_on,
                "greater_is_better": args.select_on != "loss"}

    baselines = run_baselines(args.release, args.out / "baselines", split=args.split,
                              options=SuiteOptions(skip=list(OTHER_TASK_BASELINES)))
    loads.append(load_averages()[0])
    by_slug = {b["slug"]: b for b in baselines["systems"]}
    metric = load_metric()
    rows = decoded_rows(load_splits(args.release, "primary")[args.split])
    references = [reference_record(r) for r in rows]
    classes = train_classes(args.release)
    runs: list[dict[str, Any]] = []
    reused: list[int] = []
    per_seed: dict[str, dict[int, dict[str, float]]] = {variant: {} for variant in VARIANTS}
    for seed in args.seeds:
        trained = train_seed_once(args.release, args.out, args.encoder, seed, settings, training)
        run = trained["runs"][0]
        if trained.get("reused"):
            reused.append(seed)
        runs.append(run)
        records = seed_predictions(run, rows, args.split)
        write_jsonl(args.out / f"predictions-seed-{seed}.jsonl", records)
        per_seed["tuned"][seed] = score_predictions(records, references, metric, classes)
        print(f"seed {seed}: " + json.dumps({k: round(per_seed["tuned"][seed][k], 4) for _, k in COLUMNS}))
        loads.append(load_averages()[0])
        report = build_report(args, settings, trained, runs, per_seed, baselines, by_slug, rows, loads, started,
                              classes, reused)
        write_results(args.results, report, render(report))  # after each seed: a cut-short run keeps what it did


def build_report(args, settings, trained, runs, per_seed, baselines, by_slug, rows, loads, started,
                 classes, reused) -> dict[str, Any]:
    """The report of the seeds finished so far."""
    from collections import Counter

    from trainer.imbalance import epoch_label_counts

    reference = {variant: {key: mean_std([s[key] for s in scores.values()]) for _, key in COLUMNS}
                 for variant, scores in per_seed.items()}
    table = [{"system": f"Reference model ({len(runs)} seeds), {label}", "scores": reference[variant]}
             for variant, label in VARIANTS.items()]
    table += [{"system": b["system"], "scores": {k: b["scores"].get(k) for _, k in COLUMNS}}
              for b in baselines["systems"] if {"conflict_type", "axes"} & set(b["tasks"])]
    table += [{"system": f"Floor: {name} (the release's floors.json)", "scores": {k: f["scores"].get(k) for _, k in COLUMNS}}
              for name, f in read_floors(args.release).get("systems", {}).items()]
    ctx = [scores[CTX] for scores in per_seed["tuned"].values()]  # the axis threshold does not touch Task 1
    train_counts = trained["label_counts"]["train"]
    epoch = epoch_label_counts(list(Counter(train_counts).elements()), NO_CONFLICT, settings.negatives_per_conflict) \
        if settings.negatives_per_conflict else Counter(train_counts)
    return {
        "benchmark": "reference model (mean ± std over seeds) vs the baseline suite",
        "release": shown_path(args.release), "config": "primary", "split": args.split, "n_evaluated": len(rows),
        "classes": classes,
        "test_label_counts": dict(Counter(r["conflict_type"] for r in rows).most_common()),
        "validation_label_counts": dict(Counter(trained["label_counts"]["validation"]).most_common()),
        "encoder": shown_path(trained["encoder"]), "seeds": args.seeds, "seeds_done": [r["seed"] for r in runs],
        "seeds_reused": list(reused),
        "settings": {**asdict(settings), "epochs": args.epochs, "learning_rate": args.lr, "select_on": args.select_on,
                     "batch_size": PAPER_DEFAULTS["per_device_train_batch_size"]},
        "train_examples": sum(train_counts.values()), "train_label_counts": train_counts,
        "epoch_rows": sum(epoch.values()),
        "train_seconds": sum(r["train_runtime_s"] for r in runs), "wall_seconds": round(time.perf_counter() - started, 1),
        **machine_fields(loads), "load_averages": loads,
        "runs": [{**run, "model_dir": shown_path(run["model_dir"])} for run in runs],
        "per_seed_test": {v: {str(k): scores for k, scores in by_seed.items()} for v, by_seed in per_seed.items()},
        "reference_ctx_f1": mean_std(ctx),
        "table": table, "ctx_f1_verdicts": verdicts(ctx, by_slug),
        "baselines_results": shown_path(args.out / "baselines" / RESULTS_JSON),
    }


if __name__ == "__main__":
    main()
