"""Pair scores for candidate mining (paper appendix G.4), as pure functions.

``combined = w_sim·sim + w_dis·dis + w_ent·ent + w_type·type − p_year`` (defaults 0.35 / 0.35 /
0.15 / 0.10). The disagreement score is a noisy-OR of general contradiction signals in the
tradition of de Marneffe et al. (2008): polarity reversal, negation mismatch, opposite directions
of effect, opposed terms (``cues.OPPOSED_TERMS``, or a negating prefix) among the words that
differ between the claims, negation/direction/quantity words present on one side only, numeric
mismatch, entity substitution, conflicting context values on an ontology axis, and explicit
contrast markers. Per-claim work is done once (:func:`claim_features`); a pair costs a few set
operations. The same functions serve the annotator and the reference model's features.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from biodivergence_dataset import ontology
from biodivergence_dataset.records import Claim, MiningScores
from biodivergence_text import cues

_WORD_RE = re.compile(r"[a-z][a-z\-']*|n't")
#: Words too common to carry meaning when comparing the wording of two claims.
_FUNCTION_WORDS = frozenset(
    "a an the of in on at to for from by and or but as was were is are be been being has have had that which "  # noqa: SIM905 (a word list reads best as words)
    "this these those it its their our we there than with among between into over under per via also both "
    "each such may might can could study studies patients patient group groups results result".split()
)
_NEGATORS = frozenset(cues.NEGATION_WORDS) | {"n't"}
#: Words whose presence on one side only of a pair tends to flip or change what the claim asserts.
_PIVOTS = _NEGATORS | frozenset(cues.INCREASE_WORDS + cues.DECREASE_WORDS + cues.QUANTIFIER_WORDS)


@dataclass(frozen=True)
class ClaimFeatures:
    """What pair scoring needs from one claim, computed once."""

    words: frozenset[str]
    negated: bool
    hedged: bool
    direction: str | None
    polarity: int
    contrast: bool
    entities: frozenset[str]
    numbers: frozenset[str]
    context: dict[str, frozenset[str]]
    claim_type: str
    year: int | None


def claim_features(claim: Claim) -> ClaimFeatures:
    """Features of a claim record (negation/hedge flags and entities as the extractor set them)."""
    scan = cues.scan(claim.sentence)
    context: dict[str, set[str]] = {}
    for hit in scan.axis_hits:
        context.setdefault(hit.axis, set()).add(hit.value)
    return ClaimFeatures(
        words=frozenset(_WORD_RE.findall(claim.sentence.lower())) - _FUNCTION_WORDS,
        negated=claim.negated,
        hedged=claim.hedged,
        direction=scan.direction,
        polarity=scan.polarity,
        contrast=scan.contrast,
        entities=frozenset(claim.entities),
        numbers=cues.numbers(claim.sentence),
        context={axis: frozenset(v) for axis, v in context.items()},
        claim_type=claim.claim_type,
        year=claim.pub_year,
    )


# --- disagreement -------------------------------------------------------------------------------------
class DisagreementWeights(BaseModel):
    """Strength of each contradiction signal in the noisy-OR (each signal is in [0, 1])."""

    model_config = ConfigDict(extra="forbid")

    polarity_reversal: float = 0.6
    negation_mismatch: float = 0.5
    opposite_direction: float = 0.6
    antonym: float = 0.5
    pivot_word: float = 0.35
    numeric_mismatch: float = 0.35
    entity_mismatch: float = 0.25
    context_conflict: float = 0.3
    contrast_cue: float = 0.15


def _antonym_signal(a: ClaimFeatures, b: ClaimFeatures) -> float:
    """Antonyms (listed, or by a negating prefix) among the words that differ between the claims."""
    return 1.0 if cues.opposite_words(a.words - b.words, b.words - a.words) else 0.0


def _pivot_signal(a: ClaimFeatures, b: ClaimFeatures) -> float:
    """Negation, direction or quantity words present in one claim's wording but not the other's, weighted
    by how much wording the claims share (such a difference matters most between near-paraphrases)."""
    return _word_overlap(a, b) if (a.words ^ b.words) & _PIVOTS else 0.0


def _negation_signal(a: ClaimFeatures, b: ClaimFeatures) -> float:
    """1 when exactly one claim is negated; 0.5 when both are but a negator appears in only one's wording."""
    if a.negated != b.negated:
        return 1.0
    if a.negated and ((a.words - b.words) & _NEGATORS or (b.words - a.words) & _NEGATORS):
        return 0.5
    return 0.0


def _word_overlap(a: ClaimFeatures, b: ClaimFeatures) -> float:
    union = a.words | b.words
    return len(a.words & b.words) / len(union) if union else 0.0


def _numeric_signal(a: ClaimFeatures, b: ClaimFeatures) -> float:
    """Different numbers (disjoint: full, partly shared: half), weighted by shared wording: figures only
    conflict between claims about the same thing."""
    if not a.numbers or not b.numbers or a.numbers == b.numbers:
        return 0.0
    return (1.0 if not (a.numbers & b.numbers) else 0.5) * _word_overlap(a, b)


def _entity_mismatch_signal(a: ClaimFeatures, b: ClaimFeatures) -> float:
    """Same subject matter (a shared entity) with an entity swapped on each side."""
    return 1.0 if a.entities & b.entities and a.entities - b.entities and b.entities - a.entities else 0.0


def _context_signal(a: ClaimFeatures, b: ClaimFeatures) -> float:
    """Axes on which both claims name a value and the values differ: 0.5 for one axis, 1 for two or more."""
    conflicts = sum(1 for axis, values in a.context.items() if axis in b.context and not values & b.context[axis])
    return min(1.0, 0.5 * conflicts)


def disagreement_signals(a: ClaimFeatures, b: ClaimFeatures) -> dict[str, float]:
    """Each contradiction signal of a pair, in [0, 1]."""
    return {
        "polarity_reversal": 1.0 if a.polarity * b.polarity == -1 else 0.0,
        "negation_mismatch": _negation_signal(a, b),
        "opposite_direction": 1.0 if {a.direction, b.direction} == {"increase", "decrease"} else 0.0,
        "antonym": _antonym_signal(a, b),
        "pivot_word": _pivot_signal(a, b),
        "numeric_mismatch": _numeric_signal(a, b),
        "entity_mismatch": _entity_mismatch_signal(a, b),
        "context_conflict": _context_signal(a, b),
        "contrast_cue": 1.0 if a.contrast or b.contrast else 0.0,
    }


def disagreement(a: ClaimFeatures, b: ClaimFeatures, weights: DisagreementWeights | None = None) -> float:
    """Noisy-OR of the weighted signals: 1 − Π(1 − w·s), in [0, 1]."""
    weights = weights or _DEFAULT.disagreement
    keep = 1.0
    for name, signal in disagreement_signals(a, b).items():
        keep *= 1.0 - getattr(weights, name) * signal
    return 1.0 - keep


# --- other components ---------------------------------------------------------------------------------
def entity_overlap(a: ClaimFeatures, b: ClaimFeatures) -> float:
    """Jaccard overlap of the two entity sets (0 when either has none)."""
    if not a.entities or not b.entities:
        return 0.0
    return len(a.entities & b.entities) / len(a.entities | b.entities)


class TypeCompatibility(BaseModel):
    """Claim-type compatibility: same type, one side the default (factual) type, or two different types."""

    model_config = ConfigDict(extra="forbid")

    same: float = 1.0
    with_default: float = 0.6
    different: float = 0.3


def type_compatibility(type_a: str, type_b: str, levels: TypeCompatibility | None = None) -> float:
    levels = levels or _DEFAULT.type_levels
    if type_a == type_b:
        return levels.same
    if ontology.DEFAULT_CLAIM_TYPE in (type_a, type_b):
        return levels.with_default
    return levels.different


class YearPenalty(BaseModel):
    """``p_year = min(cap, rate · max(0, |Δyear| − grace))``; 0 when a year is unknown."""

    model_config = ConfigDict(extra="forbid")

    grace: int = 10
    rate: float = 0.01
    cap: float = 0.1


def year_penalty(year_a: int | None, year_b: int | None, params: YearPenalty | None = None) -> float:
    params = params or _DEFAULT.year
    if year_a is None or year_b is None:
        return 0.0
    return min(params.cap, params.rate * max(0, abs(year_a - year_b) - params.grace))


class ScoringConfig(BaseModel):
    """All pair-scoring parameters (the ``combined`` weights of paper appendix G.4 by default)."""

    model_config = ConfigDict(extra="forbid")

    w_similarity: float = 0.35
    w_disagreement: float = 0.35
    w_entity: float = 0.15
    w_type: float = 0.10
    disagreement: DisagreementWeights = DisagreementWeights()
    type_levels: TypeCompatibility = TypeCompatibility()
    year: YearPenalty = YearPenalty()


_DEFAULT = ScoringConfig()


def combined(sim: float, dis: float, ent: float, typ: float, p_year: float, config: ScoringConfig | None = None
             ) -> float:
    config = config or _DEFAULT
    return (config.w_similarity * sim + config.w_disagreement * dis + config.w_entity * ent
            + config.w_type * typ - p_year)


def score_pair(a: ClaimFeatures, b: ClaimFeatures, similarity: float, config: ScoringConfig | None = None
               ) -> MiningScores:
    """All mining scores of a pair whose embedding cosine similarity is ``similarity``."""
    config = config or _DEFAULT
    if not math.isfinite(similarity):
        raise ValueError(f"similarity must be finite, got {similarity}")
    dis = disagreement(a, b, config.disagreement)
    ent = entity_overlap(a, b)
    typ = type_compatibility(a.claim_type, b.claim_type, config.type_levels)
    p_year = year_penalty(a.year, b.year, config.year)
    return MiningScores(
        similarity=round(similarity, 6), disagreement=round(dis, 6), entity_overlap=round(ent, 6),
        type_compatibility=typ, year_penalty=round(p_year, 6),
        combined_score=round(combined(similarity, dis, ent, typ, p_year, config), 6),
    )
