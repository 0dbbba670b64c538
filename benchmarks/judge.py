"""Benchmark: the learned judge out of fold, one leave-one-source-out fold per scored gold source.

For each gold source S of ``goldcheck`` (SciFact claim pairs, HealthVer evidence pairs, PubMedQA
question/conclusion pairs) it trains the fold ``DIR/heldout-S`` exactly as ``biodivergence judge train
--loso`` does (every other source, the training-only NLI4CT and Citation-Integrity included; timed),
unless ``--reuse`` takes a fold already in DIR. Each fold then labels S with the judge that
``goldcheck --annotator judge:DIR`` picks for S (it refuses a fold trained on S) and is scored with
goldcheck's ``score_source`` (κ and its bootstrap interval next to the negation rule), plus ROC-AUC of
the calibrated probability with a bootstrap interval. Writes ``benchmarks/results/judge.json`` and
``judge.md``; the machine, its state and the load averages are recorded with the timings.

Usage: python benchmarks/judge.py [--out build/judge] [--reuse] [--max-per-source N] [--epochs E] [--learning-rate LR]
       [--batch-size B] [--source S] [--bootstrap 1000]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from biodivergence_dataset.threads import cap_threads

cap_threads()  # before numpy and torch size their thread pools (export OMP_NUM_THREADS=1 on a shared machine)

import numpy as np
from results_files import load_averages, machine_fields, write_results
from sklearn.metrics import roc_auc_score

from builder import goldsources
from builder.annotators import goldcheck as gc
from builder.annotators.judge import HELDOUT_PREFIX, JUDGE_CONFIG, JudgeSettings, TrainConfig, train_judge

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
RESULTS = ROOT / "benchmarks" / "results" / "judge"


def auc_ci(truth: list[bool], scores: list[float], n_boot: int, seed: int = 0) -> tuple[float, float]:
    """95% percentile bootstrap interval of ROC-AUC (resamples holding one class only are skipped)."""
    t, s = np.asarray(truth), np.asarray(scores)
    rng = np.random.default_rng(seed)
    aucs = [roc_auc_score(t[i], s[i]) for i in (rng.integers(0, len(t), len(t)) for _ in range(n_boot))
            if 0 < t[i].sum() < len(i)]
    lo, hi = np.percentile(aucs, [2.5, 97.5])
    return round(float(lo), 4), round(float(hi), 4)


def score_fold(folder: Path, source: str, n_boot: int) -> dict:
    """κ (goldcheck's scoring) and AUC of the judge goldcheck uses for ``source``; never one trained on it."""
    judge = gc.make_local_annotator(f"judge:{folder}", heldout=source)
    if source in judge.trained_on:
        raise SystemExit(f"{judge.path} was trained on {source}: train the folds with --loso (or without --reuse)")
    gold = goldsources.load_gold(source, DATA)
    pairs = [g.pair for g in gold]
    probs = judge.probabilities(pairs)
    labels = [judge.label_for(p, prob).conflict_type for p, prob in zip(pairs, probs, strict=True)]
    truth = [g.conflict for g in gold]
    rule = [float(gc.negation_mismatch(p)) for p in pairs]
    return {**gc.score_source(gold, labels, n_boot), "judge": judge.path.name,
            "auc": round(float(roc_auc_score(truth, probs)), 4), "auc_ci": auc_ci(truth, probs, n_boot),
            "rule_auc": round(float(roc_auc_score(truth, rule)), 4)}


def markdown(result: dict) -> str:
    lines = ["# The learned judge, out of fold (leave one source out)", "",
             f"Command: `{result['command']}`. Machine: {result['machine']}, {result['machine_state']} at the start, "
             f"load average {result['load_average_at_start']} at start and {result['load_average_at_end']} at end, "
             "torch threads " + str(result["threads"]) + ".", "",
             ("Each gold set is labelled by the fold trained without it (all other sources, NLI4CT and "
              "Citation-Integrity included); κ with 95% bootstrap intervals next to the negation rule, ROC-AUC of the "
              "calibrated probability (the rule's AUC is that of its 0/1 vote)."), "",
             "| gold set | pairs | judge κ [95% CI] | rule κ [95% CI] | gain | judge AUC [95% CI] | rule AUC |",
             "|---|---|---|---|---|---|---|"]
    for source, c in result["scores"].items():
        lines.append(f"| {source} | {c['pairs']} | {c['kappa']:.3f} [{c['kappa_ci'][0]:.3f}, {c['kappa_ci'][1]:.3f}] "
                     f"| {c['rule_kappa']:.3f} [{c['rule_kappa_ci'][0]:.3f}, {c['rule_kappa_ci'][1]:.3f}] "
                     f"| {c['gain']:+.3f} | {c['auc']:.3f} [{c['auc_ci'][0]:.3f}, {c['auc_ci'][1]:.3f}] "
                     f"| {c['rule_auc']:.3f} |")
    lines += ["", ("| fold | trained on (pairs per source, training + calibration) | train pairs | epochs | learning rate "
              "| training time | in-domain AUC (calibration pairs) |"), "|---|---|---|---|---|---|---|"]
    for source, s in result["folds"].items():
        per = ", ".join(f"{k} {v}" for k, v in s["pairs_per_source"].items())
        lines.append(f"| {HELDOUT_PREFIX}{source} | {per} | {s['train_pairs']} | {s['epochs']} | {s['learning_rate']} "
                     f"| {s['train_seconds']:.0f} s | {s['calibration_auc']} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    d = TrainConfig()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "build" / "judge"), help="judge folder (folds go under it)")
    parser.add_argument("--reuse", action="store_true", help="score the folds already in --out, train the missing")
    parser.add_argument("--max-per-source", type=int, default=d.max_per_source)
    parser.add_argument("--epochs", type=float, default=d.epochs)
    parser.add_argument("--learning-rate", type=float, default=d.learning_rate)
    parser.add_argument("--batch-size", type=int, default=d.batch_size)
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--source", action="append", choices=sorted(goldsources.GOLD_SOURCES), dest="sources",
                        help="only these gold sources (repeat; default: all)")
    args = parser.parse_args()
    sources = args.sources or list(goldsources.GOLD_SOURCES)
    out = Path(args.out)
    config = TrainConfig(data_dir=str(DATA), max_per_source=args.max_per_source, epochs=args.epochs,
                         learning_rate=args.learning_rate, batch_size=args.batch_size)
    load_before = load_averages()
    result = {"command": " ".join(["python", "benchmarks/judge.py", *sys.argv[1:]]), **machine_fields(load_before),
              "threads": os.environ.get("OMP_NUM_THREADS"), "load_average_at_start": load_before, "folds": {},
              "scores": {}}
    for source in sources:
        fold = out / f"{HELDOUT_PREFIX}{source}"
        reuse = args.reuse and (fold / JUDGE_CONFIG).is_file()
        settings = JudgeSettings.load(fold) if reuse else train_judge(fold, config, leave_out=source)
        result["folds"][source] = vars(settings)
    for source in sources:
        result["scores"][source] = score_fold(out, source, args.bootstrap)
    result["load_average_at_end"] = load_averages()
    write_results(RESULTS, result, markdown(result))


if __name__ == "__main__":
    main()
