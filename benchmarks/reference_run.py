"""Benchmark run: the reference model over seeds next to the baseline suite, on one release.

For each seed, ``trainer.train.train`` fits the reference model (one folder per seed, so an
interrupted run resumes at the first seed without a ``biodivergence_results.json`` for this release). The
model's head outputs on the evaluated split are decoded twice — axis threshold 0.5 and the threshold tuned on
validation (what ``biodivergence train`` saves) — written as prediction files and scored through
``evaluate.load(metrics/biodivergence)`` as a user would score them. The baseline suite
(``biodivergence baselines``) runs on the same release and split. The report puts the reference
model (mean ± sample std over seeds) in the baselines' Task 1–3 columns and says whether it
beats the majority and lexical baselines on Ctx-F1.

The defaults are the paper's full schedule (seeds 42 123 7, 8 epochs, patience 3, max length
256, the whole train split): at ~1.6 s per step of 16 pairs on 2 CPU cores that is about 13 hours
on the demo release. The committed results file is a CPU-budget run, recorded with its flags::

    python benchmarks/reference_run.py --release build/demo/release --max-train-examples 4000 \\
        --max-length 128 --epochs 3

Writes ``--out`` (models, predictions, baselines) and ``benchmarks/results/reference_run.{json,md}``;
the committed ``benchmarks/results/baselines_demo.{md,json}`` is that run's baseline folder (all five tasks).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import platform
import statistics
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from biodivergence_dataset.io import write_json_atomic, write_text_atomic
from trainer.baselines import run_baselines
from trainer.baselines.suite import RESULTS_JSON
from trainer.constants import PAPER_SEEDS, RESULTS_FILE
from trainer.data import decoded_rows, load_splits
from trainer.metric import load_metric
from trainer.predict import head_outputs, load_model, reference_record, write_jsonl
from trainer.train import train
from trainer.training_args import PAPER_DEFAULTS, TrainSettings

RESULTS = ROOT / "benchmarks" / "results" / "reference_run"
#: (column header, metric key) of the comparison table: Tasks 1–3.
COLUMNS = (
    ("Acc.", "conflict_type/accuracy"), ("Macro-F1", "conflict_type/macro_f1"), ("κ", "conflict_type/kappa"),
    ("Ctx F1", "conflict_type/ctx_f1"), ("Axes micro-F1", "axes/micro_f1"), ("Axes macro-F1", "axes/macro_f1"),
    ("Confounder acc.", "confounder/accuracy"),
)
CTX = "conflict_type/ctx_f1"
#: The reference model is decoded twice: with the fixed 0.5 axis threshold and with the one tuned on validation.
VARIANTS = {"fixed": "axis threshold 0.5", "tuned": "axis threshold tuned on validation"}
#: Baselines the issue asks the reference model to be compared with on Ctx-F1.
RIVALS = {"majority": "Majority class", "lexical-gbt": "Lexical gradient boosting"}


#: Written beside a seed's model: the digest of the release it was trained on (its ``release_files.json``).
RELEASE_STAMP = "release_files.sha256"


def release_digest(release: Path) -> str:
    """sha256 of a release's file list (which holds every file's own sha256): a rebuilt release differs."""
    return hashlib.sha256((release / "release_files.json").read_bytes()).hexdigest()


def train_seed_once(release: Path, out: Path, encoder: str, seed: int, settings: TrainSettings,
                    training: dict[str, Any]) -> dict[str, Any]:
    """The run summary (``RESULTS_FILE``) of one seed trained into ``out/seed-<n>`` (reused when a finished run
    on the same release, with the same settings and schedule, is there)."""
    folder = out / f"seed-{seed}"
    done, stamp = folder / RESULTS_FILE, folder / RELEASE_STAMP
    digest = release_digest(release)
    if done.exists() and stamp.exists() and stamp.read_text(encoding="utf-8").strip() == digest:
        previous = json.loads(done.read_text(encoding="utf-8"))
        schedule = previous["runs"][0].get("schedule", {}) if previous.get("runs") else {}
        if previous.get("settings") == json.loads(json.dumps(asdict(settings))) and all(
                schedule.get(k) == v for k, v in training.items()):
            print(f"seed {seed}: reusing {folder}")
            return previous
    results = train(release, folder, encoder, (seed,), settings=settings, training=training)
    write_text_atomic(stamp, digest + "\n")
    return results


def score_predictions(records: list[dict[str, Any]], references: list[dict[str, Any]], metric) -> dict[str, float]:
    """Tasks 1–3 scores of prediction records (in reference order) through the evaluate module."""
    fields = ("conflict_type", "divergence_axes", "dominant_confounder")
    scores = metric.compute(predictions=[{f: r[f] for f in fields} for r in records],
                            references=[{f: r[f] for f in fields} for r in references], semsim_model=None)
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


def render(report: dict[str, Any]) -> str:
    """The markdown report: settings, the comparison table and the Ctx-F1 verdicts."""
    s = report["settings"]
    lines = [
        "# Reference model vs baselines", "",
        (f"- release: {report['release']} (config {report['config']}, evaluated split {report['split']}, "
        f"n = {report['n_evaluated']})"),
        f"- encoder: {report['encoder']}; seeds {' '.join(map(str, report['seeds']))}",
        (f"- schedule: {s['epochs']} epochs max (patience {s['patience']}), lr {s['learning_rate']}, batch "
        f"{s['batch_size']}, max length {s['max_length']}, train examples {report['train_examples']}"),
        f"- training time: {report['train_seconds']:.0f} s over all seeds on {report['machine']}", "",
        "| System | " + " | ".join(h for h, _ in COLUMNS) + " |",
        "|---|" + "---|" * len(COLUMNS),
    ]
    for row in report["table"]:
        lines.append(f"| {row['system']} | " + " | ".join(_fmt(row["scores"].get(k)) for _, k in COLUMNS) + " |")
    thresholds = ", ".join(f"seed {r['seed']}: {r['axis_threshold']}" for r in report["runs"])
    lines += ["", ("Reference model cells are mean ± sample std over seeds; baselines are single runs. "
              f"Tuned axis thresholds: {thresholds}."), ""]
    lines += [f"- Ctx-F1 vs {v['baseline']}: {v['reference']:.4f} vs {v['baseline_score']:.4f} → "
              f"{'beats' if v['beats'] else 'does not beat'}" for v in report["ctx_f1_verdicts"]]
    return "\n".join(lines) + "\n"


def main() -> None:
    defaults = TrainSettings()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", type=Path, default=ROOT / "build" / "demo" / "release")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "reference_run")
    parser.add_argument("--encoder", default="minilm")
    parser.add_argument("--seeds", type=int, nargs="+", default=list(PAPER_SEEDS))
    parser.add_argument("--epochs", type=float, default=PAPER_DEFAULTS["num_train_epochs"])
    parser.add_argument("--lr", type=float, default=PAPER_DEFAULTS["learning_rate"])
    parser.add_argument("--max-length", type=int, default=defaults.max_length)
    parser.add_argument("--max-train-examples", type=int, default=None)
    parser.add_argument("--split", default="test")
    parser.add_argument("--results", type=Path, default=RESULTS, help="report path without suffix (.json and .md)")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    settings = TrainSettings(max_length=args.max_length, max_train_examples=args.max_train_examples)
    training = {"num_train_epochs": args.epochs, "learning_rate": args.lr}
    started = time.perf_counter()
    trained = [train_seed_once(args.release, args.out, args.encoder, seed, settings, training) for seed in args.seeds]
    runs = [t["runs"][0] for t in trained]
    train_seconds = sum(r["train_runtime_s"] for r in runs)

    metric = load_metric()
    rows = decoded_rows(load_splits(args.release, "primary")[args.split])
    references = [reference_record(r) for r in rows]
    per_seed: dict[str, dict[int, dict[str, float]]] = {variant: {} for variant in VARIANTS}
    for seed, run in zip(args.seeds, runs):
        model, tokenizer = load_model(run["model_dir"])
        outputs = head_outputs(model, tokenizer, rows)
        for variant, threshold in (("fixed", 0.5), ("tuned", run["axis_threshold"])):
            records = outputs.decode(model.config.constraint_mode, threshold)
            write_jsonl(args.out / f"predictions-seed-{seed}-{variant}.jsonl", records)
            per_seed[variant][seed] = score_predictions(records, references, metric)
            print(f"seed {seed}, axis threshold {threshold}: "
                  + json.dumps({k: round(per_seed[variant][seed][k], 4) for _, k in COLUMNS}))
    reference = {variant: {key: mean_std([s[key] for s in scores.values()]) for _, key in COLUMNS}
                 for variant, scores in per_seed.items()}

    baselines = run_baselines(args.release, args.out / "baselines", split=args.split)
    table = [{"system": f"Reference model ({len(args.seeds)} seeds), {label}", "scores": reference[variant]}
             for variant, label in VARIANTS.items()]
    table += [{"system": b["system"], "scores": {k: b["scores"].get(k) for _, k in COLUMNS}}
              for b in baselines["systems"] if {"conflict_type", "axes"} & set(b["tasks"])]
    by_slug = {b["slug"]: b for b in baselines["systems"]}
    ctx = reference["tuned"][CTX]["mean"]  # the axis threshold does not touch Task 1
    verdicts = [{"baseline": name, "reference": ctx, "baseline_score": by_slug[slug]["scores"][CTX],
                 "beats": ctx > by_slug[slug]["scores"][CTX]}
                for slug, name in RIVALS.items()]
    report = {
        "benchmark": "reference model (mean ± std over seeds) vs the baseline suite",
        "release": shown_path(args.release), "config": "primary", "split": args.split, "n_evaluated": len(references),
        "encoder": shown_path(trained[0]["encoder"]), "seeds": args.seeds,
        "settings": {**asdict(settings), "epochs": args.epochs, "learning_rate": args.lr,
                     "batch_size": PAPER_DEFAULTS["per_device_train_batch_size"]},
        "train_examples": args.max_train_examples or baselines["train_size"],
        "train_seconds": train_seconds, "wall_seconds": round(time.perf_counter() - started, 1),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "runs": [{**run, "model_dir": shown_path(run["model_dir"])} for run in runs],
        "per_seed_test": {v: {str(k): scores for k, scores in by_seed.items()} for v, by_seed in per_seed.items()},
        "table": table, "ctx_f1_verdicts": verdicts,
        "baselines_results": shown_path(args.out / "baselines" / RESULTS_JSON),
    }
    write_json_atomic(args.results.with_suffix(".json"), report)
    write_text_atomic(args.results.with_suffix(".md"), render(report))
    print(render(report))


if __name__ == "__main__":
    main()
