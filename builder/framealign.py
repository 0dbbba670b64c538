"""The same-question gate between two claim frames and whether their findings disagree.

``align`` decides whether two frames ask the same question (exposure and outcome shared, by words and, when the
miner computed them, by phrase embeddings); ``findings_disagree`` says why two findings on that question disagree.
"""

from __future__ import annotations

from dataclasses import dataclass

from biodivergence_dataset import ontology
from biodivergence_text import cues

from .findingcues import (
    ASSOCIATION,
    DECREASE,
    DIFFERENCE,
    INCREASE,
    NO_ASSOCIATION,
    NO_DIFFERENCE,
    NULL_DIRECTIONS,
)
from .frames import Finding, Frame, SlotMatch

# --------------------------------------------------------------------------- pair comparison


@dataclass(frozen=True)
class Alignment:
    """Whether two frames ask the same question, and why (``reason`` from ``ontology.COMPARABILITY``)."""

    comparable: bool
    reason: str
    exposure_overlap: float
    outcome_overlap: float


#: Share of the smaller term set the other side must repeat for a slot to count as shared.
SLOT_MATCH_MIN = 0.5
#: A slot of more content words than this is a clause the rules could not cut into exposure and outcome
#: ("Within-person fluctuations over time in serum homocysteine levels, measured in …"): not compared.
MAX_SLOT_TERMS = 8


def _overlap(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))


def _shared_enough(a: SlotMatch, b: SlotMatch) -> bool:
    """Two shared core words, or one where a slot phrase has one ("mortality"): one shared word of two longer
    slots ("count" in "platelet count" / "leucocyte count") is a modifier, not the same slot."""
    return len(a.core & b.core) >= min(2, a.core_size or len(a.core), b.core_size or len(b.core))


def _names_clash(a: SlotMatch, b: SlotMatch) -> bool:
    """Each slot names something the other does not ("Bmi-1 expression" / "Bmal1 expression")."""
    return bool(a.names - b.names) and bool(b.names - a.names)


def _slot_differs(word_overlap: float, similarity: float | None, a: SlotMatch, b: SlotMatch) -> bool:
    """Whether two slots the gate pairs up name different things."""
    return not _slot_shared(word_overlap, similarity) or _names_clash(a, b) or not _shared_enough(a, b)


#: Findings whose two sides may be read either way round ("X is associated with Y" = "Y is associated with X").
_SYMMETRIC = frozenset({ASSOCIATION, NO_ASSOCIATION, DIFFERENCE, NO_DIFFERENCE})


#: With slot embeddings: both slots must be at least this similar, whatever the words share …
SLOT_SIM_MIN = 0.6
#: … and a slot whose words do not match counts as shared from this similarity on (paraphrase, synonyms).
SLOT_SIM_STRONG = 0.75


def crossed(fa: Frame, fb: Frame) -> bool:
    """Whether the two frames' slots pair up crosswise ("X is associated with Y" / "Y … with X")."""
    if fa.finding.direction not in _SYMMETRIC or fb.finding.direction not in _SYMMETRIC:
        return False
    straight = min(_overlap(fa.exposure_terms, fb.exposure_terms), _overlap(fa.outcome_terms, fb.outcome_terms))
    cross = min(_overlap(fa.exposure_terms, fb.outcome_terms), _overlap(fa.outcome_terms, fb.exposure_terms))
    return cross > straight


def slot_phrases(fa: Frame, fb: Frame) -> tuple[tuple[str, str], tuple[str, str]] | None:
    """The (exposure, exposure) and (outcome, outcome) phrase pairs the gate compares, oriented as
    :func:`align` orients them; None when a frame lacks a slot."""
    if not (fa.exposure and fa.outcome and fb.exposure and fb.outcome):
        return None
    b_exp, b_out = (fb.outcome, fb.exposure) if crossed(fa, fb) else (fb.exposure, fb.outcome)
    return (fa.exposure.text, b_exp.text), (fa.outcome.text, b_out.text)


def align(fa: Frame, fb: Frame, slot_similarity: tuple[float | None, float | None] = (None, None)
          ) -> Alignment:
    """The same-question gate: the frames share the exposure **and** the outcome.

    Slots are compared as stem sets (abbreviations expanded). For symmetric findings (association,
    difference) the two slots may also match crosswise ("X predicts Y" / "Y is associated with X");
    for directed findings exposure meets exposure and outcome meets outcome. ``slot_similarity`` is the
    embedding cosine of the exposure phrases and of the outcome phrases (``MiningScores``), when known.
    A frame without a finding cue of its own (its direction would rest on a negation word alone), or
    without an exposure or an outcome (or with one longer than ``MAX_SLOT_TERMS`` content words), is
    never compared: there is no question to match."""
    reasons = _REASONS
    if fa.finding.generic or fb.finding.generic:
        return Alignment(False, reasons["finding_unstated"], 0.0, 0.0)
    if not all(0 < len(t) <= MAX_SLOT_TERMS for f in (fa, fb) for t in (f.exposure_terms, f.outcome_terms)):
        return Alignment(False, reasons["slots_unstated"], 0.0, 0.0)
    straight = ((fb.exposure_terms, fb.exposure_match), (fb.outcome_terms, fb.outcome_match))
    (b_exp_terms, b_exp), (b_out_terms, b_out) = straight[::-1] if crossed(fa, fb) else straight
    exp, out = _overlap(fa.exposure_terms, b_exp_terms), _overlap(fa.outcome_terms, b_out_terms)
    if _slot_differs(exp, slot_similarity[0], fa.exposure_match, b_exp):
        return Alignment(False, reasons["different_exposure"], exp, out)
    if _slot_differs(out, slot_similarity[1], fa.outcome_match, b_out):
        return Alignment(False, reasons["different_outcome"], exp, out)
    return Alignment(True, reasons["same_question"], exp, out)


def _slot_shared(word_overlap: float, similarity: float | None) -> bool:
    """Words first; the phrase embeddings, when the miner computed them, veto weak matches and rescue
    paraphrases ("in-hospital death" / "hospital mortality")."""
    if similarity is None:
        return word_overlap >= SLOT_MATCH_MIN
    return similarity >= SLOT_SIM_MIN and (word_overlap >= SLOT_MATCH_MIN or similarity >= SLOT_SIM_STRONG)


def best_alignment(frames_a: tuple[Frame, ...], frames_b: tuple[Frame, ...],
                   slot_similarity: tuple[float | None, float | None] = (None, None)
                   ) -> tuple[Frame, Frame, Alignment]:
    """The sentence frames of two passages that best answer one question (comparable first, then the
    larger slot overlap; the earliest sentences on ties). ``slot_similarity`` belongs to the frames
    this function picks without it (the miner embeds exactly those), so it is applied to that pick."""
    best = None
    for fa in frames_a:
        for fb in frames_b:
            al = align(fa, fb)
            key = (al.comparable, al.exposure_overlap + al.outcome_overlap)
            if best is None or key > best[0]:
                best = (key, fa, fb, al)
    _, fa, fb, al = best
    if slot_similarity != (None, None):
        al = align(fa, fb, slot_similarity)
    return fa, fb, al


#: Reason names, checked against the ontology (a misspelt name is a KeyError, not a silent new label).
_REASONS = {name: name for name in ontology.COMPARABILITY}
_WHY = {name: name for name in ontology.DISAGREEMENT_REASONS}


def _opposed(fa: Finding, fb: Finding) -> bool:
    """An opposed-term group one side uses with one sign only and the other with the other sign only,
    or a prefix antonym ("effective" / "ineffective") between the two findings' words."""
    for group in {g for g, _ in fa.polar} & {g for g, _ in fb.polar}:
        sa = {s for g, s in fa.polar if g == group}
        sb = {s for g, s in fb.polar if g == group}
        if len(sa) == len(sb) == 1 and sa != sb:
            return True
    return cues.prefix_negates(fa.words - fb.words, fb.words - fa.words)


def findings_disagree(fa: Finding, fb: Finding) -> str | None:
    """Why two findings on the same question disagree, or None: ``null_vs_effect`` (one reports an
    absence, the other an effect or association), ``opposite_direction`` (increase vs decrease) or
    ``significance`` (same direction, significant vs explicitly not significant)."""
    if fa.direction is None or fb.direction is None:
        return None
    if fa.is_null != fb.is_null:
        nulls = [f for f in (fa, fb) if f.is_null]
        return _WHY["significance"] if nulls[0].direction not in NULL_DIRECTIONS else _WHY["null_vs_effect"]
    if {fa.direction, fb.direction} == {INCREASE, DECREASE} or (not fa.is_null and _opposed(fa, fb)):
        return _WHY["opposite_direction"]
    return None
