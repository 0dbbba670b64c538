"""Agreement between two annotation runs over the same pairs (paper appendix M.4, Table 39).

``biodivergence agreement DIR_A DIR_B`` joins two ``annotate`` output folders on ``pair_id`` and
reports raw agreement, Cohen's κ overall and per class (one-vs-rest, with the counts, recall,
precision and Jaccard of Table 39), κ for conflict vs no conflict, axis-set Jaccard and
dominant-confounder agreement.
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any

from biodivergence_dataset import ontology
from biodivergence_dataset.io import iter_rows, shard_paths, write_json_atomic


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """Cohen's κ of two label sequences of equal length (1.0 when both are constant and equal).

    >>> round(cohen_kappa(["x", "x", "y", "y"], ["x", "y", "y", "y"]), 3)
    0.5
    """
    if len(a) != len(b):
        raise ValueError(f"label sequences differ in length: {len(a)} vs {len(b)}")
    n = len(a)
    if n == 0:
        return 0.0
    observed = sum(x == y for x, y in zip(a, b)) / n
    ca, cb = Counter(a), Counter(b)
    expected = sum(ca[k] * cb[k] for k in ca) / (n * n)
    if expected >= 1.0:
        return 1.0 if observed == 1.0 else 0.0
    return (observed - expected) / (1.0 - expected)


def is_conflict(label: str) -> bool:
    return label != ontology.NO_CONFLICT


def per_class(a: Sequence[str], b: Sequence[str], classes: Sequence[str] = ontology.CONFLICT_TYPE_NAMES
              ) -> list[dict[str, Any]]:
    """One-vs-rest agreement per class: counts, recall and precision of B given A, Jaccard and κ."""
    rows = []
    for c in classes:
        ya, yb = [x == c for x in a], [y == c for y in b]
        n_a, n_b = sum(ya), sum(yb)
        n_agree = sum(x and y for x, y in zip(ya, yb))
        union = n_a + n_b - n_agree
        rows.append({
            "class": c, "n_a": n_a, "n_b": n_b, "n_agree": n_agree,
            "recall_b_given_a": n_agree / n_a if n_a else 0.0,
            "precision_b_given_a": n_agree / n_b if n_b else 0.0,
            "jaccard": n_agree / union if union else 0.0,
            "kappa": cohen_kappa(ya, yb),
        })
    return rows


def set_jaccard(x: Sequence[str], y: Sequence[str]) -> float:
    """Jaccard of two label sets; two empty sets agree fully."""
    sx, sy = set(x), set(y)
    return 1.0 if not sx and not sy else len(sx & sy) / len(sx | sy)


def confusion(a: Sequence[str], b: Sequence[str], classes: Sequence[str] = ontology.CONFLICT_TYPE_NAMES
              ) -> dict[str, dict[str, int]]:
    """``{label_a: {label_b: count}}`` over ``classes``."""
    counts = Counter(zip(a, b))
    return {x: {y: counts[(x, y)] for y in classes} for x in classes}


def compare(rows_a: dict[str, dict[str, Any]], rows_b: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Agreement report over the pairs both runs annotated (rows keyed by pair_id)."""
    common = sorted(rows_a.keys() & rows_b.keys())
    a = [rows_a[p]["conflict_type"] for p in common]
    b = [rows_b[p]["conflict_type"] for p in common]
    axes = [set_jaccard(rows_a[p]["divergence_axes"], rows_b[p]["divergence_axes"]) for p in common]
    both_conf = [p for p in common if rows_a[p]["dominant_confounder"] and rows_b[p]["dominant_confounder"]]
    n = len(common)
    return {
        "n_a": len(rows_a), "n_b": len(rows_b), "n_common": n,
        "raw_agreement": sum(x == y for x, y in zip(a, b)) / n if n else 0.0,
        "kappa": cohen_kappa(a, b),
        "conflict_vs_no_conflict_kappa": cohen_kappa([is_conflict(x) for x in a], [is_conflict(y) for y in b]),
        "per_class": per_class(a, b),
        "confusion": confusion(a, b),
        "axis_jaccard_mean": sum(axes) / n if n else 0.0,
        "confounder_pairs": len(both_conf),
        "confounder_agreement": (sum(rows_a[p]["dominant_confounder"] == rows_b[p]["dominant_confounder"]
                                     for p in both_conf) / len(both_conf)) if both_conf else 0.0,
    }


def load_annotations(stage_dir: str | Path) -> dict[str, dict[str, Any]]:
    """Rows of an annotate output folder keyed by pair_id (error if it holds no shards)."""
    if not shard_paths(stage_dir):
        raise FileNotFoundError(f"{stage_dir}: no part-*.parquet shards; is it a finished annotate folder?")
    return {row["pair_id"]: row for _, row in iter_rows(stage_dir)}


def agreement(dir_a: str | Path, dir_b: str | Path) -> dict[str, Any]:
    report = compare(load_annotations(dir_a), load_annotations(dir_b))
    return {"a": str(dir_a), "b": str(dir_b), **report}


def format_report(report: dict[str, Any]) -> str:
    lines = [
        f"pairs: A {report['n_a']}, B {report['n_b']}, common {report['n_common']}",
        (f"raw agreement {report['raw_agreement']:.3f}   Cohen's kappa {report['kappa']:.3f}   "
         f"conflict-vs-no-conflict kappa {report['conflict_vs_no_conflict_kappa']:.3f}"),
        (f"axis-set Jaccard {report['axis_jaccard_mean']:.3f}   dominant confounder agreement "
         f"{report['confounder_agreement']:.3f} on {report['confounder_pairs']} pairs"),
        "",
        f"{'class':<38}{'n_A':>6}{'n_B':>6}{'agree':>7}{'rec B|A':>9}{'prec B|A':>9}{'Jacc':>7}{'kappa':>7}",
    ]
    for r in report["per_class"]:
        lines.append(f"{r['class']:<38}{r['n_a']:>6}{r['n_b']:>6}{r['n_agree']:>7}{r['recall_b_given_a']:>9.3f}"
                     f"{r['precision_b_given_a']:>9.3f}{r['jaccard']:>7.3f}{r['kappa']:>7.3f}")
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir_a", help="first annotate output folder")
    parser.add_argument("dir_b", help="second annotate output folder")
    parser.add_argument("--json", dest="json_out", help="also write the report as JSON to this path")


def run(args: argparse.Namespace) -> int:
    report = agreement(args.dir_a, args.dir_b)
    print(format_report(report))
    if args.json_out:
        write_json_atomic(args.json_out, report)
    return 0
