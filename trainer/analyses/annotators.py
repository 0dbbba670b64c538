"""Analysis 5, annotator audit: Cohen's κ for every pair of panel members that labelled the same pairs
(overall, one-vs-rest per class, per domain), from the release rows' ``annotator_labels`` across all splits,
beside each member's agreement with the release label from the build's ``annotation_manifest.json``.

Axis-set Jaccard needs each member's axes; the release rows record a member's conflict type and confidence
only, so it is reported when the rows carry member axes (``divergence_axes`` in an annotator label) and as
unavailable otherwise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import combinations

from biodivergence_dataset import ontology

from .analysis_release import Release, Row


@dataclass
class AnnotatorPair:
    a: str
    b: str
    n: int
    kappa: float | None
    raw_agreement: float
    per_class_kappa: dict[str, float | None] = field(default_factory=dict)
    per_domain_kappa: dict[str, float | None] = field(default_factory=dict)
    axis_jaccard: float | None = None


@dataclass
class AnnotatorAuditResult:
    annotators: list[str]
    pairs: list[AnnotatorPair] = field(default_factory=list)
    #: κ of annotators[i] with annotators[j] (None on the diagonal's absent pairs and where κ is undefined)
    kappa_matrix: list[list[float | None]] = field(default_factory=list)
    #: the build's per-member agreement with the release label (annotation_manifest.json panel_agreement)
    members: dict[str, dict[str, float]] = field(default_factory=dict)
    labelled_rows: int = 0


def kappa(a: list[str], b: list[str]) -> float | None:
    """Cohen's κ (scikit-learn), None where it is undefined (both sides constant)."""
    from sklearn.metrics import cohen_kappa_score

    if len(set(a) | set(b)) < 2:
        return None
    value = float(cohen_kappa_score(a, b))
    return None if math.isnan(value) else value


def _jaccard(x: list[str], y: list[str]) -> float:
    union = set(x) | set(y)
    return len(set(x) & set(y)) / len(union) if union else 1.0


def compare(a: str, b: str, shared: list[tuple[Row, dict, dict]]) -> AnnotatorPair:
    """Agreement of members ``a`` and ``b`` over (row, a's label, b's label) triples."""
    la, lb = [x["conflict_type"] for _, x, _ in shared], [y["conflict_type"] for _, _, y in shared]
    per_class = {c: kappa([v == c for v in la], [v == c for v in lb]) for c in ontology.CONFLICT_TYPE_NAMES if c in la + lb}
    per_domain = {}
    for d in ontology.DOMAIN_NAMES:
        idx = [i for i, (row, _, _) in enumerate(shared) if row["domain"] == d]
        if idx:
            per_domain[d] = kappa([la[i] for i in idx], [lb[i] for i in idx])
    with_axes = [(x["divergence_axes"], y["divergence_axes"]) for _, x, y in shared
                 if x.get("divergence_axes") is not None and y.get("divergence_axes") is not None]
    return AnnotatorPair(a, b, len(shared), kappa(la, lb), sum(x == y for x, y in zip(la, lb)) / len(shared),
                         per_class, per_domain,
                         sum(_jaccard(x, y) for x, y in with_axes) / len(with_axes) if with_axes else None)


def analyze(release: Release) -> AnnotatorAuditResult:
    rows = [r for split in release.splits.values() for r in split if r.get("annotator_labels")]
    labels = [{m["annotator_id"]: m for m in r["annotator_labels"]} for r in rows]
    names = sorted({name for by_member in labels for name in by_member})
    result = AnnotatorAuditResult(names, members=release.annotation_manifest.get("panel_agreement", {}),
                                  labelled_rows=len(rows))
    index = {name: i for i, name in enumerate(names)}
    result.kappa_matrix = [[None] * len(names) for _ in names]
    for a, b in combinations(names, 2):
        shared = [(row, m[a], m[b]) for row, m in zip(rows, labels) if a in m and b in m]
        if shared:
            pair = compare(a, b, shared)
            result.pairs.append(pair)
            result.kappa_matrix[index[a]][index[b]] = result.kappa_matrix[index[b]][index[a]] = pair.kappa
    for name in names:
        result.kappa_matrix[index[name]][index[name]] = 1.0
    return result
