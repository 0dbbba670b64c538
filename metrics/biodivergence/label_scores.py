"""Tasks 1 and 2 from confusion counts: conflict-type and divergence-axis scores as scikit-learn computes them
with ``zero_division=np.nan``, over bootstrap multiplicities (numpy only; a test checks them against scikit-learn).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .labels import AXES, CONFLICT_TYPES, CONTEXTUAL_ID

# --- small numeric helpers -------------------------------------------------------------------------


def ratio(numerator: float, denominator: float) -> float:
    """``numerator / denominator``, NaN when the denominator is zero (an empty resample)."""
    return float(numerator) / float(denominator) if denominator else float("nan")


def divide(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """Element-wise division, NaN (undefined) where the denominator is 0 (scikit-learn's ``zero_division=np.nan``)."""
    numerator = np.asarray(numerator, dtype=float)
    denominator = np.asarray(denominator, dtype=float)
    return np.divide(numerator, denominator, out=np.full_like(numerator, np.nan), where=denominator != 0)


def prf(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Precision, recall and F1 (``2tp / (2tp + fp + fn)``) as scikit-learn computes them with
    ``zero_division=np.nan``: precision is undefined (NaN) for a label never predicted, recall for a
    label no reference has, F1 for a label neither side has (nothing to find is not a perfect score)."""
    return divide(tp, tp + fp), divide(tp, tp + fn), divide(2 * tp, 2 * tp + fp + fn)


def macro(f1: np.ndarray) -> float:
    """Mean of the defined F1 values: over the labels either side uses (scikit-learn's macro average
    with ``zero_division=np.nan``); NaN when no label is used."""
    defined = ~np.isnan(f1)
    return float(f1[defined].mean()) if defined.any() else float("nan")


def over_labels(f1: np.ndarray, labels: Sequence[str]) -> list[str]:
    """The labels a macro average is taken over (those with a defined F1)."""
    return [name for name, value in zip(labels, f1) if not np.isnan(value)]


def weighted_mean(values: np.ndarray, weights: np.ndarray) -> float:
    """Weighted mean (weights are bootstrap multiplicities), NaN over no weight."""
    return ratio(np.dot(values, weights), weights.sum())


# --- Task 1: conflict type -------------------------------------------------------------------------


def conflict_type_scores(y_true: np.ndarray, y_pred: np.ndarray, weights: np.ndarray | None = None,
                         classes: Sequence[int] | None = None) -> dict[str, Any]:
    """Task 1 metrics from class ids (indices into ``CONFLICT_TYPES``).

    Macro-F1 averages over the classes present in references or predictions (scikit-learn's
    default), which is how the paper's Table 4 is computed; ``conflict_type/macro_f1/over`` names
    them. A class neither side uses has undefined (NaN) precision, recall and F1 and is left out of
    the average, as is kappa when both sides use one and the same class only (scikit-learn: NaN).
    With ``classes`` (ids, e.g. the classes of a release's train split) macro-F1 averages over exactly
    those, a listed class neither side uses counting 0 (scikit-learn's ``labels=`` with
    ``zero_division=0``): a split that lacks a trained class cannot show that a model finds it, and a
    system that predicts one class only is not averaged over the two classes a test happens to hold.
    ``support/<class>`` is the class's reference count. The confusion matrix has references as rows
    and predictions as columns, both in ``CONFLICT_TYPES`` order.

    >>> s = conflict_type_scores(np.array([0, 0, 2, 2]), np.array([0, 2, 2, 2]))
    >>> s["conflict_type/accuracy"], round(s["conflict_type/ctx_f1"], 4), s["conflict_type/kappa"]
    (0.75, 0.8, 0.5)
    >>> s["conflict_type/confusion_matrix"][0][:3], s["conflict_type/support/contextual_contradiction"]
    ([1, 0, 1], 2)
    >>> s["conflict_type/macro_f1/over"], s["conflict_type/f1/direct_contradiction"]
    (['no_conflict', 'contextual_contradiction'], nan)
    >>> s = conflict_type_scores(np.array([0, 0, 2, 2]), np.array([0, 2, 2, 2]), classes=[0, 2, 3])
    >>> round(s["conflict_type/macro_f1"], 4), s["conflict_type/macro_f1/over"]
    (0.4889, ['no_conflict', 'contextual_contradiction', 'underspecified_apparent_contradiction'])
    """
    k = len(CONFLICT_TYPES)
    weights = np.ones(len(y_true), dtype=np.int64) if weights is None else weights
    cm = np.bincount(y_true * k + y_pred, weights=weights, minlength=k * k).reshape(k, k).astype(np.int64)
    total = int(cm.sum())
    tp, support, predicted = np.diag(cm), cm.sum(axis=1), cm.sum(axis=0)
    precision, recall, f1 = prf(tp, predicted - tp, support - tp)
    out: dict[str, Any] = {
        "conflict_type/n": total,
        "conflict_type/accuracy": ratio(tp.sum(), total),
        **_macro_over(f1, classes),
        "conflict_type/weighted_f1": ratio(np.dot(np.nan_to_num(f1), support), total),
        "conflict_type/kappa": _cohen_kappa(cm),
        "conflict_type/ctx_f1": float(f1[CONTEXTUAL_ID]),
        "conflict_type/confusion_matrix": cm.tolist(),
    }
    for i, name in enumerate(CONFLICT_TYPES):
        out[f"conflict_type/f1/{name}"] = float(f1[i])
        out[f"conflict_type/precision/{name}"] = float(precision[i])
        out[f"conflict_type/recall/{name}"] = float(recall[i])
        out[f"conflict_type/support/{name}"] = int(support[i])
    return out


def _macro_over(f1: np.ndarray, classes: Sequence[int] | None) -> dict[str, Any]:
    """``conflict_type/macro_f1`` and the classes it averages over: the defined ones, or exactly ``classes``."""
    if classes is None:
        return {"conflict_type/macro_f1": macro(f1), "conflict_type/macro_f1/over": over_labels(f1, CONFLICT_TYPES)}
    listed = np.nan_to_num(f1[list(classes)])
    return {"conflict_type/macro_f1": float(listed.mean()) if len(listed) else float("nan"),
            "conflict_type/macro_f1/over": [CONFLICT_TYPES[i] for i in classes]}


def _cohen_kappa(cm: np.ndarray) -> float:
    """Cohen's kappa of a confusion matrix; undefined (NaN) when both sides use one and the same class
    only, where chance agreement is 1 and the formula gives 0 / 0 (scikit-learn: NaN)."""
    total = cm.sum()
    if total == 0:
        return float("nan")
    observed = np.trace(cm) / total
    expected = float(np.dot(cm.sum(axis=1), cm.sum(axis=0))) / total**2
    return ratio(observed - expected, 1.0 - expected) if expected != 1.0 else float("nan")


# --- Task 2: divergence axes -----------------------------------------------------------------------


def axes_scores(
    true: np.ndarray,
    pred: np.ndarray,
    weights: np.ndarray | None = None,
    labels: Sequence[str] = AXES,
    prefix: str = "axes",
) -> dict[str, Any]:
    """Task 2 metrics from boolean indicator matrices of shape (examples, labels).

    Micro scores pool all label decisions; macro-F1 averages over the labels that references or
    predictions use (``<prefix>/macro_f1/over``; a label neither side uses has an undefined F1, NaN,
    and is left out); exact match is set equality (two empty sets match). With no label on either
    side every F1 is undefined; ``support/<label>`` is the label's reference count.

    >>> t = np.array([[1, 0, 0], [0, 0, 0]], dtype=bool)
    >>> p = np.array([[1, 1, 0], [0, 0, 0]], dtype=bool)
    >>> s = axes_scores(t, p, labels=("geography", "disease_subtype", "study_design"))
    >>> s["axes/micro_precision"], s["axes/micro_recall"], s["axes/macro_f1"], s["axes/exact_match"]
    (0.5, 1.0, 0.5, 0.5)
    >>> s["axes/f1/disease_subtype"], s["axes/f1/study_design"], s["axes/support/study_design"]
    (0.0, nan, 0)
    """
    weights = np.ones(len(true), dtype=np.int64) if weights is None else weights
    w = weights[:, None]
    tp = ((true & pred) * w).sum(axis=0)
    fp = ((~true & pred) * w).sum(axis=0)
    fn = ((true & ~pred) * w).sum(axis=0)
    _, _, f1 = prf(tp, fp, fn)
    micro_p, micro_r, micro_f1 = prf(tp.sum(), fp.sum(), fn.sum())
    out: dict[str, Any] = {
        f"{prefix}/n": int(weights.sum()),
        f"{prefix}/micro_f1": float(micro_f1),
        f"{prefix}/micro_precision": float(micro_p),
        f"{prefix}/micro_recall": float(micro_r),
        f"{prefix}/macro_f1": macro(f1),
        f"{prefix}/macro_f1/over": over_labels(f1, labels),
        f"{prefix}/exact_match": weighted_mean((true == pred).all(axis=1), weights),
    }
    for i, name in enumerate(labels):
        out[f"{prefix}/f1/{name}"] = float(f1[i])
        out[f"{prefix}/support/{name}"] = int(tp[i] + fn[i])
    return out

