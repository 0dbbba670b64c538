"""Benchmark of the BioDivergence metric on 2,500 examples (the size of the legacy test split).

Side by side: the metric on all tasks but SemSim vs the raw library calls it wraps (scikit-learn
classification and multi-label metrics, sacrebleu, rouge_score); the evaluate adapter; a
1,000-resample bootstrap; and SemSim vs a bare ``encode`` of the same texts with the same model.
Labels follow the legacy test distribution of paper Table 18; texts are SciFact claims.

Run: ``python benchmarks/metric.py`` (writes benchmarks/results/metric.json).
"""

from __future__ import annotations

import json
import platform
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from results_files import load_averages, machine_fields, write_results

from trainer.metric import load_metric, scoring_module

ROOT = Path(__file__).resolve().parents[1]
CLAIMS = [ROOT.parent / "shared" / "data" / "scifact" / f"claims_{s}.jsonl" for s in ("train", "dev", "test")]
RESULTS = ROOT / "benchmarks" / "results" / "metric"
N = 2500
REPEATS = 5
TARGET_SECONDS = 2.0
# Paper Table 18, legacy test column.
CLASS_COUNTS = [1782, 7, 676, 11, 0, 24]
AXIS_COUNTS = [168, 68, 71, 62, 47, 3, 502, 202, 5, 121, 1, 46, 3]

scoring = scoring_module()


def timed(fn: Callable[[], Any], repeats: int = REPEATS, warm_up: bool = True) -> dict[str, float]:
    """Fastest wall and CPU seconds of ``repeats`` calls, after one untimed warm-up call."""
    if warm_up:
        fn()
    wall, cpu = [], []
    for _ in range(repeats):
        w, c = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - w)
        cpu.append(time.process_time() - c)
    return {"wall_s": min(wall), "cpu_s": min(cpu)}


def load_texts() -> list[str]:
    return [json.loads(line)["claim"] for path in CLAIMS for line in path.open(encoding="utf-8")]


def make_records(seed: int = 0) -> tuple[list[dict], list[dict]]:
    """2,500 references with Table 18's test label distribution and noisy predictions of them."""
    rng = np.random.default_rng(seed)
    texts = load_texts()
    classes = rng.permutation(np.repeat(np.arange(len(CLASS_COUNTS)), CLASS_COUNTS))
    axis_prob = np.array(AXIS_COUNTS) / N

    def axes() -> list[str]:
        return [a for a, p in zip(scoring.AXES, axis_prob) if rng.random() < p]

    def spans(claim_a: str, claim_b: str) -> list[dict]:
        out = []
        for role, claim in zip(scoring.SPAN_ROLES, (claim_a, claim_b)):
            words = claim.split()
            start = int(rng.integers(0, max(1, len(words) - 3)))
            text = " ".join(words[start:start + int(rng.integers(2, 8))])
            out.append({"text": text, "start": claim.find(text), "end": claim.find(text) + len(text), "role": role})
        return out

    def record(conflict: int) -> dict:
        a, b = rng.choice(len(texts), 2, replace=False)
        reference_axes = axes()
        return {
            "conflict_type": scoring.CONFLICT_TYPES[conflict],
            "divergence_axes": reference_axes,
            "dominant_confounder": reference_axes[0] if reference_axes else "",
            "reconciliation": f"{texts[a]} By contrast, {texts[b]}",
            "evidence_spans": spans(texts[a], texts[b]),
        }

    references = [record(c) for c in classes]
    predictions = [record(c if rng.random() < 0.6 else rng.integers(0, 3)) for c in classes]
    for p, r in zip(predictions, references):  # a prediction shares its first claim with its reference
        own = p["reconciliation"].split(" By contrast, ")[1]
        p["reconciliation"] = r["reconciliation"].split(" By contrast, ")[0] + " " + own
        p["evidence_spans"][0] = r["evidence_spans"][0]
    return predictions, references


def raw_library_calls(predictions: list[dict], references: list[dict]) -> dict[str, Any]:
    """The same numbers (but SemSim and spans) from scikit-learn, sacrebleu and rouge_score directly."""
    import sacrebleu
    from rouge_score import rouge_scorer
    from sklearn import metrics as skm

    y_true = [scoring.CONFLICT_TYPES.index(r["conflict_type"]) for r in references]
    y_pred = [scoring.CONFLICT_TYPES.index(p["conflict_type"]) for p in predictions]
    true = np.array([[a in r["divergence_axes"] for a in scoring.AXES] for r in references])
    pred = np.array([[a in p["divergence_axes"] for a in scoring.AXES] for p in predictions])
    primary = [scoring.AXES.index(a) for a in scoring.PRIMARY_AXES]
    hyps = [p["reconciliation"] for p in predictions]
    golds = [r["reconciliation"] for r in references]
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    out = {
        "accuracy": skm.accuracy_score(y_true, y_pred),
        "macro_f1": skm.f1_score(y_true, y_pred, average="macro", zero_division=0),
        "weighted_f1": skm.f1_score(y_true, y_pred, average="weighted", zero_division=0),
        "kappa": skm.cohen_kappa_score(y_true, y_pred),
        "per_class": skm.precision_recall_fscore_support(y_true, y_pred, labels=range(6), zero_division=0),
        "confusion": skm.confusion_matrix(y_true, y_pred, labels=range(6)),
        "bleu": sacrebleu.corpus_bleu(hyps, [golds]).score / 100,
        "rouge_l": float(np.mean([scorer.score(g, h)["rougeL"].fmeasure for h, g in zip(hyps, golds)])),
    }
    for name, cols in (("axes", slice(None)), ("axes_primary", primary)):
        t, p = true[:, cols], pred[:, cols]
        out[f"{name}/micro"] = skm.precision_recall_fscore_support(t, p, average="micro", zero_division=0)
        out[f"{name}/macro_f1"] = skm.f1_score(t, p, average="macro", zero_division=0)
        out[f"{name}/per_axis"] = skm.f1_score(t, p, average=None, zero_division=0)
        out[f"{name}/exact"] = skm.accuracy_score(t, p)
    return out


def row(name: str, ours: dict[str, float], raw_name: str = "", raw: dict[str, float] | None = None) -> dict[str, Any]:
    return {"name": name, "biodivergence": ours, "raw_call": raw_name, "raw": raw}


def main() -> dict[str, Any]:
    load_before = load_averages()
    warnings.filterwarnings("ignore")
    import evaluate

    predictions, references = make_records()
    scores = scoring.compute(predictions, references, semsim_model=None)
    raw = raw_library_calls(predictions, references)
    checks = {  # the metric and the raw calls agree on the numbers they share
        "macro_f1": scores["conflict_type/macro_f1"] - raw["macro_f1"],
        "kappa": scores["conflict_type/kappa"] - raw["kappa"],
        "axes_micro_f1": scores["axes/micro_f1"] - raw["axes/micro"][2],
        "bleu": scores["reconciliation/bleu"] - raw["bleu"],
        "rouge_l": scores["reconciliation/rouge_l"] - raw["rouge_l"],
    }
    module = load_metric()
    rows = [
        row("all tasks but SemSim", timed(lambda: scoring.compute(predictions, references, semsim_model=None)),
            "sklearn + sacrebleu + rouge_score", timed(lambda: raw_library_calls(predictions, references))),
        row("  same via evaluate.load", timed(
            lambda: module.compute(predictions=predictions, references=references, semsim_model=None))),
        row("  same with bootstrap=1000", timed(
            lambda: scoring.compute(predictions, references, bootstrap=1000, semsim_model=None), 1, False)),
    ]
    for task, field in scoring.TASK_FIELDS.items():
        only = ([{field: p[field]} for p in predictions], [{field: r[field]} for r in references])
        rows.append(row(f"  task {task} alone", timed(lambda only=only: scoring.compute(*only, semsim_model=None))))

    load = timed(scoring.load_semsim_model, 1, False)
    model = scoring.load_semsim_model()  # cached by the call above
    hyps = [{"reconciliation": p["reconciliation"]} for p in predictions]
    golds = [{"reconciliation": r["reconciliation"]} for r in references]
    texts = ([h["reconciliation"] for h in hyps], [g["reconciliation"] for g in golds])
    bare = timed(lambda: [model.encode(t) for t in texts], 1, False)
    ours = timed(lambda: scoring.compute(hyps, golds, semsim_model=model), 1, False)
    rows.append(row("task 4 with SemSim", ours, "bare encode of the same texts", bare))
    rows.append(row("MiniLM load (once)", load))
    core = rows[0]["biodivergence"]
    return {
        "examples": N,
        "timing": f"fastest of {REPEATS} after a warm-up (bootstrap and SemSim rows: one run)",
        "rows": rows,
        "target_s": TARGET_SECONDS,
        "within_target_wall": core["wall_s"] <= TARGET_SECONDS,
        "within_target_cpu": core["cpu_s"] <= TARGET_SECONDS,
        "agreement_with_raw_calls": checks,
        "semsim": scoring.compute(hyps, golds, semsim_model=model)["reconciliation/semsim"],
        "environment": {
            "python": platform.python_version(),
            "load_average_1min": load_averages()[0],
            **machine_fields(load_before),
            "numpy": np.__version__,
            "evaluate": evaluate.__version__,
        },
    }


def report(figures: dict[str, Any]) -> str:
    def cells(t: dict[str, float] | None) -> str:
        return "" if t is None else f"{t['wall_s']:>8.3f} {t['cpu_s']:>8.3f}"

    lines = [
        f"BioDivergence metric, {figures['examples']} examples; {figures['timing']}",
        f"{'biodivergence':<30}{'wall s':>8} {'cpu s':>8}   {'raw library call':<34}{'wall s':>8} {'cpu s':>8}",
    ]
    for r in figures["rows"]:
        lines.append(f"{r['name']:<30}{cells(r['biodivergence'])}   {r['raw_call']:<34}{cells(r['raw'])}")
    verdict = {True: "met", False: "missed"}
    env = figures["environment"]
    lines.append(
        f"target <= {figures['target_s']:.1f} s for all tasks but SemSim: "
        f"wall {verdict[figures['within_target_wall']]}, cpu {verdict[figures['within_target_cpu']]} "
        f"(1-min load average {env['load_average_1min']:.1f} on {env['machine']}, {env['machine_state']} at the start)"
    )
    return "\n".join(lines)


if __name__ == "__main__":
    results = main()
    print(report(results))
    write_results(RESULTS, results)
