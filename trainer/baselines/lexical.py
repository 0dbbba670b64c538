"""Shallow lexical baselines (paper Table 31): slot-mismatch features with gradient boosting for the
conflict type, independent per-axis classifiers, and a pipeline from predicted axes to the confounder.

Slot-mismatch features of a pair: for every axis with cue patterns, whether each claim carries a
cue, whether the claims' cue values differ, whether their abstracts' cue values differ; word
overlap, length ratio, number mismatch; plus the reference model's comparison features and the
two claim-type one-hots. The per-axis and confounder classifiers add TF-IDF of the claim pair.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache

import numpy as np

from biodivergence_dataset import ontology
from biodivergence_text import cues

from ..pair_features import feature_vector
from .baseline_system import Record, Row, words

CUE_AXES: tuple[str, ...] = tuple(a.name for a in ontology.AXES if a.cue_patterns)
DEFAULT_SEED = 42


@lru_cache(maxsize=65536)
def _axis_values(text: str) -> dict[str, frozenset[str]]:
    return {axis: frozenset(values) for axis, values in cues.axis_values(text).items()}


def _numbers(text: str) -> set[str]:
    return {w for w in words(text) if any(ch.isdigit() for ch in w)}


def slot_features(row: Row) -> list[float]:
    """The slot-mismatch feature vector of one decoded release row (see the module docstring)."""
    a, b = row["claim_a_text"], row["claim_b_text"]
    va, vb = _axis_values(a), _axis_values(b)
    aa, ab = _axis_values(row.get("abstract_a") or ""), _axis_values(row.get("abstract_b") or "")
    out: list[float] = []
    for axis in CUE_AXES:
        ca, cb = va.get(axis, frozenset()), vb.get(axis, frozenset())
        out += [float(bool(ca)), float(bool(cb)), float(ca != cb), float(aa.get(axis, frozenset()) != ab.get(axis, frozenset()))]
    wa, wb = set(words(a)), set(words(b))
    na, nb = _numbers(a), _numbers(b)
    out += [len(wa & wb) / max(len(wa | wb), 1), min(len(a), len(b)) / max(len(a), len(b), 1), float(na != nb)]
    out += feature_vector(row)
    out += [float(row["claim_a_type"] == t) for t in ontology.CLAIM_TYPE_NAMES]
    out += [float(row["claim_b_type"] == t) for t in ontology.CLAIM_TYPE_NAMES]
    return out


def slot_matrix(rows: Sequence[Row]) -> np.ndarray:
    return np.array([slot_features(r) for r in rows], dtype=np.float64)


def gradient_boosting(seed: int = DEFAULT_SEED):
    """Conflict type from slot-mismatch features with scikit-learn histogram gradient boosting (balanced classes)."""

    def predict(train: Sequence[Row], rows: Sequence[Row], previous: Mapping[str, list[Record]]) -> list[Record]:
        from sklearn.ensemble import HistGradientBoostingClassifier

        y = np.array([ontology.CONFLICT_TYPE_NAMES.index(r["conflict_type"]) for r in train])
        if len(set(y)) == 1:
            return [{"conflict_type": ontology.CONFLICT_TYPE_NAMES[y[0]]} for _ in rows]
        # no early stopping: its stratified hold-out fails on classes with a single training example
        model = HistGradientBoostingClassifier(class_weight="balanced", early_stopping=False, random_state=seed)
        model.fit(slot_matrix(train), y)
        return [{"conflict_type": ontology.CONFLICT_TYPE_NAMES[i]} for i in model.predict(slot_matrix(rows))]

    return predict


def _pair_text(row: Row) -> str:
    return f"{row['claim_a_text']} || {row['claim_b_text']}"


class PairVectoriser:
    """TF-IDF of the claim pair next to standardised slot-mismatch features, fitted on the training split.

    ``features`` computes the slot-mismatch matrix (default :func:`slot_matrix`; a caller may pass a cached one).
    """

    def __init__(self, train: Sequence[Row], features: Callable[[Sequence[Row]], np.ndarray] = slot_matrix):
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.preprocessing import StandardScaler

        self.features = features
        self.tfidf = TfidfVectorizer(min_df=2, ngram_range=(1, 2), max_features=50_000, sublinear_tf=True)
        self.scaler = StandardScaler()
        self.tfidf.fit([_pair_text(r) for r in train])
        self.scaler.fit(features(train))

    def __call__(self, rows: Sequence[Row]):
        from scipy.sparse import csr_matrix, hstack

        return hstack([self.tfidf.transform([_pair_text(r) for r in rows]),
                       csr_matrix(self.scaler.transform(self.features(rows)))]).tocsr()


def _logistic(seed: int):
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(class_weight="balanced", max_iter=2000, random_state=seed)


def axis_probabilities(train: Sequence[Row], rows: Sequence[Row], x_train, x_rows, seed: int) -> np.ndarray:
    """P(axis present) from one balanced logistic regression per axis; 0 for an axis never seen in training."""
    probs = np.zeros((len(rows), len(ontology.AXIS_NAMES)))
    for j, axis in enumerate(ontology.AXIS_NAMES):
        y = np.array([axis in r["divergence_axes"] for r in train])
        if y.all():
            probs[:, j] = 1.0
        elif y.any():
            probs[:, j] = _logistic(seed).fit(x_train, y).predict_proba(x_rows)[:, 1]
    return probs


def confounder_probabilities(train: Sequence[Row], x_train, x_rows, seed: int) -> np.ndarray:
    """P(dominant confounder = axis) from a multinomial logistic regression on training rows that have one."""
    keep = [i for i, r in enumerate(train) if r.get("dominant_confounder")]
    probs = np.zeros((x_rows.shape[0], len(ontology.AXIS_NAMES)))
    if not keep:
        return probs
    y = np.array([ontology.AXIS_NAMES.index(train[i]["dominant_confounder"]) for i in keep])
    if len(set(y)) == 1:
        probs[:, y[0]] = 1.0
        return probs
    model = _logistic(seed).fit(x_train[keep], y)
    probs[:, model.classes_] = model.predict_proba(x_rows)
    return probs


def per_axis_pipeline(seed: int = DEFAULT_SEED, threshold: float = 0.5):
    """Axes from independent per-axis classifiers; the confounder is the most probable *predicted* axis
    under a separate confounder classifier ("" when no axis is predicted)."""

    def predict(train: Sequence[Row], rows: Sequence[Row], previous: Mapping[str, list[Record]]) -> list[Record]:
        vectorise = PairVectoriser(train)
        x_train, x_rows = vectorise(train), vectorise(rows)
        return axis_records(axis_probabilities(train, rows, x_train, x_rows, seed),
                            confounder_probabilities(train, x_train, x_rows, seed), threshold)

    return predict


def axis_records(axis_probs: np.ndarray, confounder_probs: np.ndarray, threshold: float = 0.5) -> list[Record]:
    """Axes above ``threshold`` and the most probable of them as confounder ("" when no axis is predicted)."""
    present = axis_probs >= threshold
    confounder = np.where(present, confounder_probs + 1e-9, 0.0)
    out = []
    for i in range(len(present)):
        axes = [a for a, on in zip(ontology.AXIS_NAMES, present[i]) if on]
        out.append({
            "divergence_axes": axes,
            "dominant_confounder": ontology.AXIS_NAMES[int(confounder[i].argmax())] if axes else "",
        })
    return out
