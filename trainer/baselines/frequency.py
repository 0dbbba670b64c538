"""Floor baselines (paper Tables 4–5): majority class, stratified random, most-frequent axes / confounder."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np

from biodivergence_dataset import ontology

from .baseline_system import Record, Row

DEFAULT_SEED = 42


def majority(train: Sequence[Row], rows: Sequence[Row], previous: Mapping[str, list[Record]]) -> list[Record]:
    """The training split's most frequent conflict type for every example (ties: ontology order)."""
    counts = Counter(r["conflict_type"] for r in train)
    label = max(ontology.CONFLICT_TYPE_NAMES, key=lambda c: counts[c])
    return [{"conflict_type": label} for _ in rows]


def stratified_random(seed: int = DEFAULT_SEED):
    """Conflict types drawn independently from the training distribution (numpy generator seeded with ``seed``)."""

    def predict(train: Sequence[Row], rows: Sequence[Row], previous: Mapping[str, list[Record]]) -> list[Record]:
        counts = Counter(r["conflict_type"] for r in train)
        labels = list(ontology.CONFLICT_TYPE_NAMES)
        p = np.array([counts[c] for c in labels], dtype=float)
        draws = np.random.default_rng(seed).choice(len(labels), size=len(rows), p=p / p.sum())
        return [{"conflict_type": labels[i]} for i in draws]

    return predict


def most_frequent_axes(train: Sequence[Row], rows: Sequence[Row], previous: Mapping[str, list[Record]]) -> list[Record]:
    """The k most frequent training axes for every example, k = the mean number of axes per training
    example (at least 1); the most frequent training confounder as the dominant confounder."""
    axis_counts = Counter(a for r in train for a in r["divergence_axes"])
    k = max(1, round(sum(axis_counts.values()) / max(len(train), 1)))
    axes = [a for a in sorted(ontology.AXIS_NAMES, key=lambda a: (-axis_counts[a], ontology.AXIS_NAMES.index(a)))[:k]]
    confounders = Counter(r["dominant_confounder"] for r in train if r.get("dominant_confounder"))
    confounder = confounders.most_common(1)[0][0] if confounders else axes[0]
    ordered = [a for a in ontology.AXIS_NAMES if a in axes]
    return [{"divergence_axes": list(ordered), "dominant_confounder": confounder} for _ in rows]
