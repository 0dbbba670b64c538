"""Benchmark of the BioDivergence metric on 2,500 examples (the size of the legacy test split).

Side by side: the metric on all tasks but SemSim vs the raw library calls it wraps (scikit-learn
classification and multi-label metrics, sacrebleu, rouge_score); the evaluate adapter; a
1,000-resample bootstrap; and SemSim vs a bare ``encode`` of the same texts with the same model.
Labels follow the legacy test distribution of paper Table 18; texts are SciFact claims.

Run: ``python benchmarks/metric.py`` (writes benchmarks/results/metric.json).
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
import warnings
from pathlib import Path
from typing import Any, Callable

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
METRIC_DIR = ROOT / "metrics" / "biodivergence"
CLAIMS = [ROOT.parent / "shared" / "data" / "scifact" / f"claims_{s}.jsonl" for s in ("train", "dev", "test")]
RESULTS = ROOT / "benchmarks" / "results" / "metric.json"
N = 2500
REPEATS = 3
TARGET_SECONDS = 2.0
# Paper Table 18, legacy test column.
CLASS_COUNTS = [1782, 7, 676, 11, 0, 24]
AXIS_COUNTS = [168, 68, 71, 62, 47, 3, 502, 202, 5, 121, 1, 46, 3]

sys.path.insert(0, str(METRIC_DIR))
import scoring  # noqa: E402  (the metric folder is not a package)


def best_of(fn: Callable[[], Any], repeats: int = REPEATS, warm_up: bool = True) -> tuple[float, Any]:
    """Fastest wall time of ``repeats`` calls (after one untimed warm-up call) and the last result."""
    result = fn() if warm_up else None
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


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
    for p, r in zip(predictions, references):  # predictions half-overlap their references
        p["reconciliation"] = r["reconciliation"].split(" By contrast, ")[0] + " " + p["reconciliation"].split(" By contrast, ")[1]
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


def main() -> dict[str, Any]:
    warnings.filterwarnings("ignore")
    predictions, references = make_records()
    figures: dict[str, Any] = {"examples": N, "repeats": f"best of {REPEATS} after a warm-up"}

    t_metric, scores = best_of(lambda: scoring.compute(predictions, references, semsim_model=None))
    t_raw, raw = best_of(lambda: raw_library_calls(predictions, references))
    assert abs(scores["conflict_type/macro_f1"] - raw["macro_f1"]) < 1e-12
    assert abs(scores["reconciliation/bleu"] - raw["bleu"]) < 1e-12
    assert abs(scores["axes/micro_f1"] - raw["axes/micro"][2]) < 1e-12
    figures["all_tasks_but_semsim"] = {
        "biodivergence_scoring_s": t_metric,
        "raw_library_calls_s": t_raw,
        "target_s": TARGET_SECONDS,
        "within_target": t_metric <= TARGET_SECONDS,
    }
    for task, field in scoring.TASK_FIELDS.items():
        only = ([{field: p[field]} for p in predictions], [{field: r[field]} for r in references])
        figures["all_tasks_but_semsim"][f"task_{task}_s"] = best_of(lambda: scoring.compute(*only, semsim_model=None))[0]

    import evaluate

    module = evaluate.load(str(METRIC_DIR))
    figures["evaluate_adapter_s"] = best_of(
        lambda: module.compute(predictions=predictions, references=references, semsim_model=None))[0]
    figures["bootstrap_1000_s"] = best_of(
        lambda: scoring.compute(predictions, references, bootstrap=1000, semsim_model=None), 1, False)[0]

    start = time.perf_counter()
    model = scoring.load_semsim_model()
    figures["semsim_model_load_s"] = time.perf_counter() - start
    hyps = [{"reconciliation": p["reconciliation"]} for p in predictions]
    golds = [{"reconciliation": r["reconciliation"]} for r in references]
    t_encode, _ = best_of(lambda: (model.encode([h["reconciliation"] for h in hyps]),
                                   model.encode([g["reconciliation"] for g in golds])), repeats=1, warm_up=False)
    t_semsim, semsim_scores = best_of(lambda: scoring.compute(hyps, golds, semsim_model=model), repeats=1, warm_up=False)
    figures["semsim"] = {
        "biodivergence_task4_with_semsim_s": t_semsim,
        "bare_encode_same_texts_s": t_encode,
        "task4_without_semsim_s": figures["all_tasks_but_semsim"]["task_reconciliation_s"],
        "semsim": semsim_scores["reconciliation/semsim"],
    }
    figures["environment"] = {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "numpy": np.__version__,
        "evaluate": evaluate.__version__,
        "machine": platform.machine(),
        "load_average_1min": os.getloadavg()[0],
    }
    return figures


def report(figures: dict[str, Any]) -> str:
    core, sem = figures["all_tasks_but_semsim"], figures["semsim"]
    rows = [
        ("all tasks but SemSim", core["biodivergence_scoring_s"], "sklearn + sacrebleu + rouge_score", core["raw_library_calls_s"]),
        ("  same via evaluate.load", figures["evaluate_adapter_s"], "", None),
        ("  + bootstrap 1000", figures["bootstrap_1000_s"], "", None),
        *((f"  task {t} alone", core[f"task_{t}_s"], "", None) for t in scoring.TASK_FIELDS),
        ("Task 4 with SemSim", sem["biodivergence_task4_with_semsim_s"], "bare encode of the same texts", sem["bare_encode_same_texts_s"]),
        ("MiniLM load (once)", figures["semsim_model_load_s"], "", None),
    ]
    lines = [f"BioDivergence metric, {figures['examples']} examples ({figures['repeats']})",
             f"{'biodivergence':<28}{'seconds':>9}   {'raw library call':<34}{'seconds':>9}"]
    for name, ours, raw_name, raw in rows:
        lines.append(f"{name:<28}{ours:>9.3f}   {raw_name:<34}{'' if raw is None else f'{raw:>9.3f}'}")
    lines.append(f"target <= {TARGET_SECONDS:.1f} s for all tasks but SemSim: {'met' if core['within_target'] else 'MISSED'}")
    return "\n".join(lines)


if __name__ == "__main__":
    results = main()
    print(report(results))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS}")
