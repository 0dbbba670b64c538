"""BioDivergence scoring: the five task metrics of the paper (§3, §7.1, appendix K) as plain functions.

This module is the metric's one entry: it puts the tasks together, bootstraps and compares, and names every public
function and label list of its sibling modules (``labels``, ``record_checks``, ``label_scores`` for Tasks 1-2,
``text_scores`` for Tasks 4-5). None imports ``evaluate`` or ``datasets`` (numpy only; sacrebleu, rouge_score and
sentence-transformers are imported when Task 4 is scored), so the evaluate module, Trainer's ``compute_metrics``,
the CLI and any harness call the same code. Load the folder as a package (``from biodivergence import scoring``
with its parent on the path, or ``evaluate.load`` on the folder).

A record (one prediction or one reference) is a mapping with any of ``conflict_type``,
``divergence_axes``, ``dominant_confounder``, ``reconciliation`` and ``evidence_spans``; other
keys are ignored. Labels are names, or ClassLabel ids in ontology order. A task is scored when
every prediction and every reference carries its field.

>>> references = [
...     {"conflict_type": "no_conflict", "divergence_axes": []},
...     {"conflict_type": "contextual_contradiction", "divergence_axes": ["geography", "disease_subtype"]},
... ]
>>> predictions = [
...     {"conflict_type": "no_conflict", "divergence_axes": []},
...     {"conflict_type": "no_conflict", "divergence_axes": ["geography"]},
... ]
>>> scores = compute(predictions, references)
>>> scores["conflict_type/accuracy"], round(scores["conflict_type/macro_f1"], 4), scores["conflict_type/ctx_f1"]
(0.5, 0.3333, 0.0)
>>> round(scores["axes/micro_f1"], 4), scores["axes/micro_precision"], scores["axes/exact_match"]
(0.6667, 1.0, 0.5)
>>> "confounder/accuracy" in scores  # neither side carries dominant_confounder
False
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .label_scores import axes_scores, conflict_type_scores, weighted_mean
from .labels import (
    AXES,
    AXIS_TITLES,
    CI_LEVEL,
    CONFLICT_TYPE_TITLES,
    CONFLICT_TYPES,
    CONTEXTUAL,
    DEFAULT_SEMSIM_MODEL,
    KEY_METRIC_KEYS,
    NO_CONFOUNDER,
    PER_QUESTION_KEYS,
    PRIMARY_AXES,
    PRIMARY_COLUMNS,
    QUESTION_FIELD,
    SPAN_ROLES,
    TASK_FIELDS,
    TEMPLATED_SHARE,
    UndefinedScoreWarning,
)
from .record_checks import (
    axis_matrix,
    check_records,
    column,
    conflict_ids,
    confounder_ids,
    label_id,
    reference_slots,
    span_sets,
    templated,
    texts,
)
from .text_scores import (
    CachedEncoder,
    bleu,
    lcs_length,
    load_semsim_model,
    named_slots,
    rouge_l,
    semsim,
    semsim_encoder,
    slot_overlap,
    span_overlap,
    span_tokens,
)

#: What ``from scoring import *`` and a reader of this module get: the one public face of the metric's modules.
__all__ = [
    "AXES", "AXIS_TITLES", "CONFLICT_TYPES", "CONFLICT_TYPE_TITLES", "CONTEXTUAL", "DEFAULT_SEMSIM_MODEL",
    "KEY_METRIC_KEYS", "METRIC_VERSION", "ONTOLOGY_VERSION", "PER_QUESTION_KEYS", "PRIMARY_AXES", "QUESTION_FIELD",
    "SPAN_ROLES", "TASK_FIELDS", "TEMPLATED_SHARE", "CachedEncoder", "ScoredTask", "UndefinedScoreWarning",
    "axes_scores", "check_records", "compare", "compute", "conflict_type_scores", "lcs_length", "load_semsim_model",
    "named_slots", "notes", "per_question", "prepare", "rouge_l", "semsim", "semsim_encoder", "slot_overlap",
    "span_overlap", "span_tokens", "templated",
]

# --- versions ------------------------------------------------------------------------------------

#: This metric's version: the ``vX.Y`` tag of the Hub Space it was published as (``biodivergence push-metric``
#: stamps it; "dev" in a checkout that was never published).
METRIC_VERSION = "dev"
#: The ontology and task version this metric scores (biodivergence_dataset.ontology; a test keeps them equal).
ONTOLOGY_VERSION = "1.0"

# --- tasks as weighted scorers ---------------------------------------------------------------------


@dataclass(frozen=True)
class ScoredTask:
    """One task ready to score: the example rows it covers and a scorer over row multiplicities.

    ``score(weights)`` takes one non-negative integer weight per row (all ones for the plain
    score, bootstrap multiplicities for a resample). ``fixed`` holds corpus-level metrics that
    are computed once and not bootstrapped (BLEU).
    """

    rows: np.ndarray
    score: Callable[[np.ndarray], dict[str, Any]]
    fixed: dict[str, Any] = field(default_factory=dict)

    def full(self) -> dict[str, Any]:
        """The task's scores over all its rows."""
        return {**self.score(np.ones(len(self.rows), dtype=np.int64)), **self.fixed}


def _conflict_task(pred: list[Any], ref: list[Any], classes: Sequence[int] | None = None, **_: Any) -> ScoredTask:
    y_pred, y_true = conflict_ids(pred, "predictions"), conflict_ids(ref, "references")
    return ScoredTask(np.arange(len(ref)), lambda w: conflict_type_scores(y_true, y_pred, w, classes))


def _axes_task(pred: list[Any], ref: list[Any], **_: Any) -> ScoredTask:
    p, t = axis_matrix(pred, "predictions"), axis_matrix(ref, "references")
    tp, pp = t[:, PRIMARY_COLUMNS], p[:, PRIMARY_COLUMNS]

    def score(w: np.ndarray) -> dict[str, Any]:
        return {**axes_scores(t, p, w), **axes_scores(tp, pp, w, PRIMARY_AXES, "axes_primary")}

    return ScoredTask(np.arange(len(ref)), score)


def _confounder_task(pred: list[Any], ref: list[Any], **_: Any) -> ScoredTask:
    p, t = confounder_ids(pred, "predictions"), confounder_ids(ref, "references")
    rows = np.flatnonzero(t != NO_CONFOUNDER)
    correct = p[rows] == t[rows]

    def score(w: np.ndarray) -> dict[str, Any]:
        return {"confounder/accuracy": weighted_mean(correct, w), "confounder/n": int(w.sum())}

    return ScoredTask(rows, score)


def _reconciliation_task(
    pred: list[Any], ref: list[Any], references: Sequence[Mapping[str, Any]], semsim_model: Any, **_: Any
) -> ScoredTask:
    hyps, golds = texts(pred, "predictions"), texts(ref, "references")
    rows = np.array([i for i, g in enumerate(golds) if g.strip()], dtype=np.int64)
    hyps, golds = [hyps[i] for i in rows], [golds[i] for i in rows]
    rouge = np.array([rouge_l(h, g) for h, g in zip(hyps, golds)])
    slot_sets = [named_slots(g, reference_slots(references[i], i)) for g, i in zip(golds, rows)]
    has_slots = np.array([bool(s) for s in slot_sets])
    slots = np.array([slot_overlap(h, s) if s else 0.0 for h, s in zip(hyps, slot_sets)])
    similarity = None if semsim_model is None else semsim(hyps, golds, semsim_encoder(semsim_model))

    def score(w: np.ndarray) -> dict[str, Any]:
        out = {
            "reconciliation/n": int(w.sum()),
            "reconciliation/rouge_l": weighted_mean(rouge, w),
            "reconciliation/slot_overlap": weighted_mean(slots, w * has_slots),
        }
        if similarity is not None:
            out["reconciliation/semsim"] = weighted_mean(similarity, w)
        return out

    fixed = {"reconciliation/bleu": bleu(hyps, golds) if hyps else float("nan"),
             "reconciliation/distinct_references": templated(golds)["distinct"]}
    return ScoredTask(rows, score, fixed)


def _spans_task(pred: list[Any], ref: list[Any], **_: Any) -> ScoredTask:
    p, t = span_sets(pred, "predictions"), span_sets(ref, "references")
    rows = np.array([i for i, tokens in enumerate(t) if tokens], dtype=np.int64)
    iou, precision, recall, f1 = np.array([span_overlap(p[i], t[i]) for i in rows]).reshape(-1, 4).T

    def score(w: np.ndarray) -> dict[str, Any]:
        return {
            "spans/n": int(w.sum()),
            "spans/iou": weighted_mean(iou, w),
            "spans/precision": weighted_mean(precision, w),
            "spans/recall": weighted_mean(recall, w),
            "spans/f1": weighted_mean(f1, w),
        }

    return ScoredTask(rows, score)


_BUILDERS: dict[str, Callable[..., ScoredTask]] = {
    "conflict_type": _conflict_task,
    "axes": _axes_task,
    "confounder": _confounder_task,
    "reconciliation": _reconciliation_task,
    "spans": _spans_task,
}


def prepare(
    predictions: Sequence[Mapping[str, Any]],
    references: Sequence[Mapping[str, Any]],
    semsim_model: Any = DEFAULT_SEMSIM_MODEL,
    classes: Sequence[str] | None = None,
) -> list[ScoredTask]:
    """Check the records and build a scorer for every task both sides carry.

    ``semsim_model`` is a model name or path, an object with a sentence-transformers ``encode``,
    or None to leave SemSim out; the model is loaded only when Task 4 is scored. ``classes``: the
    conflict types macro-F1 averages over (see :func:`compute`).
    """
    if len(predictions) != len(references):
        raise ValueError(f"got {len(predictions)} predictions but {len(references)} references")
    if not references:
        raise ValueError("no examples to score")
    check_records(predictions, "predictions")
    check_records(references, "references")
    class_ids = None if classes is None else [label_id(c, CONFLICT_TYPES, "classes", i, "")
                                              for i, c in enumerate(classes)]
    tasks = []
    for name, field_name in TASK_FIELDS.items():
        pred, ref = column(predictions, "predictions", field_name), column(references, "references", field_name)
        if pred is not None and ref is not None:
            tasks.append(_BUILDERS[name](pred, ref, references=references, semsim_model=semsim_model,
                                         classes=class_ids))
    if not tasks:
        fields = list(TASK_FIELDS.values())
        raise ValueError(f"no task can be scored: predictions and references share none of {fields}")
    return tasks


# --- bootstrap -------------------------------------------------------------------------------------


def _resample_counts(n: int, n_resamples: int, seed: int) -> Iterator[np.ndarray]:
    """Multiplicity of each of ``n`` examples in each bootstrap resample."""
    rng = np.random.default_rng(seed)
    for _ in range(n_resamples):
        yield np.bincount(rng.integers(0, n, n), minlength=n)


def _key_scores(tasks: list[ScoredTask], counts: np.ndarray) -> dict[str, float]:
    out: dict[str, float] = {}
    for task in tasks:
        scores = task.score(counts[task.rows])
        out.update({k: scores[k] for k in KEY_METRIC_KEYS if k in scores})
    return out


def _bootstrap(tasks: list[ScoredTask], n: int, n_resamples: int, seed: int) -> dict[str, np.ndarray]:
    """Key-metric scores over bootstrap resamples: ``{key: array of n_resamples values}``."""
    samples = [_key_scores(tasks, counts) for counts in _resample_counts(n, n_resamples, seed)]
    return {key: np.array([s[key] for s in samples]) for key in samples[0]}


def _interval(values: np.ndarray) -> tuple[float, float]:
    """Percentile interval at ``CI_LEVEL``, ignoring NaN resamples."""
    tail = 100 * (1 - CI_LEVEL) / 2
    values = values[~np.isnan(values)]
    if not len(values):
        return float("nan"), float("nan")
    return float(np.percentile(values, tail)), float(np.percentile(values, 100 - tail))


def notes(predictions: Sequence[Mapping[str, Any]], references: Sequence[Mapping[str, Any]]) -> list[str]:
    """What a reader of the scores must know besides the numbers: each task one side carries and the
    other does not (not scored), and reference reconciliations filled from a few templates."""
    out = []
    for name, field_name in TASK_FIELDS.items():
        in_predictions, in_references = (any(field_name in r for r in side) for side in (predictions, references))
        if in_predictions != in_references:
            lacking = "prediction" if in_references else "reference"
            out.append(f"{name} not scored: no {lacking} carries {field_name!r}")
    if all(TASK_FIELDS["reconciliation"] in r for r in (*predictions, *references)):
        seen = templated(texts([r[TASK_FIELDS["reconciliation"]] for r in references], "references"))
        if seen["templated"]:
            out.append(f"reconciliation: the references hold {seen['distinct']} distinct texts over {seen['rows']} "
                       "rows (templated, as rule annotators write them): ROUGE-L, BLEU and SemSim reward repeating "
                       "a template; compare with the floors of `biodivergence floors`")
    return out


def _class_notes(results: dict[str, Any], classes: Sequence[str] | None) -> list[str]:
    """A note when macro-F1 averages over listed classes some of which the references lack."""
    if classes is None or "conflict_type/macro_f1" not in results:
        return []
    present = [c for c in results["conflict_type/macro_f1/over"] if results[f"conflict_type/support/{c}"]]
    if len(present) == len(classes):
        return []
    return [(f"conflict_type macro_f1 averages over the {len(classes)} given classes; the references hold "
            f"{len(present)} of them ({', '.join(present) or 'none'}), so perfect predictions score "
            f"{len(present) / len(classes):.3f}")]


def per_question(tasks: list[ScoredTask], references: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Tasks 1-3 per clinical question: ``{question_id: {key: score}}`` over ``PER_QUESTION_KEYS`` (each task's
    ``n`` among them), scored on the rows whose reference carries that question (empty: no question given)."""
    questions = np.array([str(r.get(QUESTION_FIELD) or "") for r in references])
    out: dict[str, dict[str, Any]] = {}
    for question in sorted(set(questions) - {""}):
        weights = (questions == question).astype(np.int64)
        scores: dict[str, Any] = {}
        for task in tasks:
            scores.update(task.score(weights[task.rows]))
        out[question] = {k: _as_none(scores[k]) for k in PER_QUESTION_KEYS if k in scores}
    return out


def _as_none(value: Any) -> Any:
    """NaN as None (JSON null)."""
    return None if isinstance(value, float) and np.isnan(value) else value


def _undefined(results: dict[str, Any]) -> str:
    """The undefined (NaN) scores of a result, by task and metric, with the labels they concern and their
    reference support ``n`` (0 unless shown)."""
    by_label: dict[tuple[str, str], list[str]] = {}
    for key, value in results.items():
        if isinstance(value, float) and np.isnan(value) and not key.endswith(("/ci_low", "/ci_high", "/p_value")):
            task, metric, *label = key.split("/")
            by_label.setdefault((task, label[0] if label else ""), []).append(metric)
    by_metrics: dict[tuple[str, str], list[str]] = {}
    for (task, label), metrics in by_label.items():
        n = results.get(f"{task}/support/{label}" if label else f"{task}/n")
        shown = f"(n={n})" if not label else f"{label} (n={n})" if n else label
        by_metrics.setdefault((task, ", ".join(metrics)), []).append(shown)
    return "; ".join(f"{task} {metrics} " + (labels[0] if labels[0].startswith("(") else f"of {', '.join(labels)}")
                     for (task, metrics), labels in by_metrics.items())


def _as_null(results: dict[str, Any], point: str = "") -> dict[str, Any]:
    """NaN scores as None (JSON null), with a warning naming them. The interval (and p-value) of an undefined
    score (``<key><point>`` is None) is None too."""
    undefined = _undefined(results)
    if undefined:
        warnings.warn(f"undefined scores (0 / 0), reported as None, not as a perfect or zero score: {undefined}",
                      UndefinedScoreWarning, stacklevel=3)
    out = {k: _as_none(v) for k, v in results.items()}
    for key in [k for k in out if k.endswith(("/ci_low", "/ci_high", "/p_value"))]:
        base = key.rsplit("/", 1)[0] + point
        if base in out and out[base] is None:
            out[key] = None
    return out


def compute(
    predictions: Sequence[Mapping[str, Any]],
    references: Sequence[Mapping[str, Any]],
    *,
    bootstrap: int = 0,
    seed: int = 0,
    semsim_model: Any = DEFAULT_SEMSIM_MODEL,
    classes: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Score every task that both sides carry; flat ``task/metric`` keys (see the metric card).

    ``classes`` (conflict-type names, e.g. those of the release's train split) fixes the classes
    ``conflict_type/macro_f1`` averages over; a listed class that neither side uses counts 0, and
    ``notes`` says how many of them the references hold. Without it, macro-F1 averages over the
    classes references or predictions use (scikit-learn's default, the paper's tables).

    When references carry ``question_id``, ``per_question`` maps each non-empty id to its Tasks 1-3
    scores (``PER_QUESTION_KEYS``, each with its n) over the rows of that question; rows without a
    question count in the pooled figures only. Undefined per-question scores are None, as pooled ones,
    without a warning of their own.

    With ``bootstrap=N`` the key metrics also get ``<key>/ci_low`` and ``<key>/ci_high``, a 95%
    percentile interval over N resamples of the examples (``seed`` fixes the resamples).

    An undefined score (0 / 0, e.g. the F1 of a class neither side has, kappa when both sides use
    one class) is None with an ``UndefinedScoreWarning`` naming it, never 1; so is its interval.
    ``notes`` (present when there is something to say) lists tasks not scored because one side
    lacks their field, and templated reference reconciliations.

    >>> refs = [{"conflict_type": c} for c in ["no_conflict"] * 6 + ["contextual_contradiction"] * 4]
    >>> preds = [{"conflict_type": "no_conflict"}] * 8 + [{"conflict_type": "contextual_contradiction"}] * 2
    >>> s = compute(preds, refs, bootstrap=200, seed=1)
    >>> round(s["conflict_type/ctx_f1"], 4)
    0.6667
    >>> s["conflict_type/ctx_f1/ci_low"] <= s["conflict_type/ctx_f1"] <= s["conflict_type/ctx_f1/ci_high"]
    True
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     s = compute(refs[:6], refs[:6], bootstrap=20)
    >>> s["conflict_type/ctx_f1"], s["conflict_type/support/contextual_contradiction"], s["conflict_type/kappa"]
    (None, 0, None)
    >>> s["conflict_type/ctx_f1/ci_low"], s["conflict_type/macro_f1"], s["conflict_type/macro_f1/over"]
    (None, 1.0, ['no_conflict'])
    >>> print(caught[0].message)  # doctest: +ELLIPSIS
    undefined scores (0 / 0), ...: conflict_type kappa, ctx_f1 (n=6); conflict_type f1, precision, recall of direct_contradiction, contextual_contradiction, ...
    """
    tasks = prepare(predictions, references, semsim_model, classes)
    results: dict[str, Any] = {}
    for task in tasks:
        results.update(task.full())
    if bootstrap:
        for key, values in _bootstrap(tasks, len(references), bootstrap, seed).items():
            results[f"{key}/ci_low"], results[f"{key}/ci_high"] = _interval(values)
    found = notes(predictions, references) + _class_notes(results, classes)
    if found:
        results["notes"] = found
    grouped = per_question(tasks, references)
    return {**_as_null(results), **({"per_question": grouped} if grouped else {})}


def _p_value(deltas: np.ndarray) -> float:
    """Two-sided paired-bootstrap p-value that the difference is zero, with add-one smoothing."""
    deltas = deltas[~np.isnan(deltas)]
    extreme = min(int((deltas <= 0).sum()), int((deltas >= 0).sum()))
    return min(1.0, 2 * (extreme + 1) / (len(deltas) + 1))


def compare(
    predictions_a: Sequence[Mapping[str, Any]],
    predictions_b: Sequence[Mapping[str, Any]],
    references: Sequence[Mapping[str, Any]],
    *,
    bootstrap: int = 1000,
    seed: int = 0,
    semsim_model: Any = DEFAULT_SEMSIM_MODEL,
) -> dict[str, float | None]:
    """Paired bootstrap comparison of system B against system A on the same references.

    Both systems are scored on the same resamples. For every key metric both systems get,
    returns ``<key>/a``, ``<key>/b``, ``<key>/diff`` (B - A), the 95% percentile interval of the
    difference (``<key>/ci_low``, ``<key>/ci_high``) and ``<key>/p_value``: twice the share of
    resamples on which the difference has the other sign or vanishes, add-one smoothed. A key undefined
    for either system (see :func:`compute`) is None.

    >>> refs = [{"conflict_type": c} for c in ["no_conflict"] * 30 + ["contextual_contradiction"] * 20]
    >>> a = [{"conflict_type": "no_conflict"}] * 50
    >>> c = compare(a, refs, refs, bootstrap=200, seed=0)
    >>> c["conflict_type/ctx_f1/diff"], c["conflict_type/ctx_f1/ci_low"] > 0, c["conflict_type/ctx_f1/p_value"] < 0.05
    (1.0, True, True)
    >>> compare(a, a, refs, bootstrap=200)["conflict_type/macro_f1/p_value"]
    1.0
    """
    if semsim_model is not None:  # one encoder for both systems: the references are encoded once
        semsim_model = semsim_encoder(semsim_model)
    tasks_a = prepare(predictions_a, references, semsim_model)
    tasks_b = prepare(predictions_b, references, semsim_model)
    observed_a = _key_scores(tasks_a, np.ones(len(references), dtype=np.int64))
    observed_b = _key_scores(tasks_b, np.ones(len(references), dtype=np.int64))
    samples_a = _bootstrap(tasks_a, len(references), bootstrap, seed)
    samples_b = _bootstrap(tasks_b, len(references), bootstrap, seed)
    out: dict[str, float] = {}
    for key in (k for k in KEY_METRIC_KEYS if k in observed_a and k in observed_b):
        deltas = samples_b[key] - samples_a[key]
        out[f"{key}/a"], out[f"{key}/b"] = observed_a[key], observed_b[key]
        out[f"{key}/diff"] = observed_b[key] - observed_a[key]
        out[f"{key}/ci_low"], out[f"{key}/ci_high"] = _interval(deltas)
        out[f"{key}/p_value"] = _p_value(deltas)
    return _as_null(out, "/diff")
