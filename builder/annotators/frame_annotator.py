"""The frames annotator: same question first, opposition from findings, boundary rules from context.

For a candidate pair it
1. builds both claim frames (``builder.frames``): exposure, outcome, context slots, finding;
2. asks the same-question gate (``framealign.align``): shared exposure **and** outcome, else
   ``no_conflict`` with the reason recorded;
3. asks whether the findings disagree (``framealign.findings_disagree``): effect vs no effect,
   increase vs decrease, significant vs not significant — a negation word alone never decides;
4. applies the taxonomy's boundary rules: explicit controversy → unresolved controversy; weak
   evidence → evidence insufficiency; a context slot that differs between the claims (or between
   a claim and the other claim's abstract) → contextual, its axes, and the most specific differing
   slot as dominant confounder; a slot stated on one side only → underspecified; no difference and
   both sides stated → direct;
5. returns the differing condition phrases and the finding phrases as evidence spans (offsets into
   each claim) and a reconciliation that names the differing conditions in words.
"""

from __future__ import annotations

from biodivergence_dataset import ontology
from biodivergence_dataset.records import CandidatePair, Claim, EvidenceSpan

from .. import framealign
from .. import frames as fr
from ..repair import ROLE_A, ROLE_B, Labels
from .annotator_base import LocalAnnotator
from .heuristic import (
    CLAIM_VS_CLAIM,
    CONTROVERSY,
    CONTROVERSY_RE,
    DIRECT,
    INSUFFICIENT,
    UNDERSPECIFIED,
    WEAK_RE,
    AxisDifference,
    axis_report,
)

FRAMES_ID = "frames-v1"
KIND = ontology.check_label("annotator_kind", "frames")
MAX_AXES = 3
#: Most specific first: the dominant confounder is the first differing axis in this order.
SPECIFICITY: tuple[str, ...] = (
    "organism_strain_lineage", "gene_mutation_molecular_background", "disease_subtype", "dosage_intervention",
    "assay_measurement_protocol", "sample_source", "endpoint_definition", "population_cohort", "clinical_setting",
    "study_design", "geography", "year_time_period", ontology.LATENT_AXIS,
)
assert sorted(SPECIFICITY) == sorted(ontology.AXIS_NAMES)


def frames_of(claim: Claim, abstract: str = "") -> tuple[fr.Frame, ...]:
    """The claim's sentence frames (cached by text; the abstract only supplies abbreviation definitions)."""
    return fr.extract_frames(claim.sentence, abstract if "(" in abstract else "")


def compared_frames(pair: CandidatePair) -> tuple[fr.Frame, fr.Frame, framealign.Alignment]:
    """The sentence (or clause) frames of the two claims that the same-question gate compares, and its
    verdict, with the miner's slot-phrase similarities applied; these are the frames a release row shows."""
    return framealign.best_alignment(frames_of(pair.claim_a, pair.abstract_a), frames_of(pair.claim_b, pair.abstract_b),
                             (pair.scores.exposure_similarity, pair.scores.outcome_similarity))


def _differing(pair: CandidatePair) -> tuple[list[AxisDifference], list[str]]:
    """Context differences ranked strongest-then-most-specific, and the one-sided axes."""
    report = axis_report(pair)
    diffs = sorted(report.differences, key=lambda d: (-d.strength, SPECIFICITY.index(d.axis)))
    if diffs:
        top = diffs[0].strength
        diffs = [d for d in diffs if d.strength == top][:MAX_AXES]
    return diffs, report.one_sided


def _span(claim: Claim, span: fr.Span, role: str) -> EvidenceSpan:
    return EvidenceSpan(article_uid=claim.article_uid, text=span.text, start=span.start, end=span.end, role=role)


def _condition_spans(frame: fr.Frame, axes: set[str]) -> list[fr.Span]:
    return [s.span for s in frame.context if s.axis in axes]


def evidence_spans(pair: CandidatePair, fa: fr.Frame, fb: fr.Frame, axes: set[str]) -> list[EvidenceSpan]:
    """Differing condition phrases, then finding phrases, for each claim (no duplicate offsets)."""
    out: list[EvidenceSpan] = []
    for claim, frame, role in ((pair.claim_a, fa, ROLE_A), (pair.claim_b, fb, ROLE_B)):
        seen: set[tuple[int, int]] = set()
        phrases = _condition_spans(frame, axes) + ([frame.finding.span] if frame.finding.span else [])
        for s in phrases:
            if (s.start, s.end) not in seen:
                seen.add((s.start, s.end))
                out.append(_span(claim, s, role))
    return out


def _written(values: frozenset[str], hits, text: str) -> str:
    """The differing values as the claim writes them (its cue phrases), else the normalised values."""
    shown = list(dict.fromkeys(text[h.start:h.end] for h in hits)) or sorted(values)
    return ", ".join(shown[:3]) or "unstated"


def _finding_words(frame: fr.Frame) -> str:
    return f"'{frame.finding.span.text}'" if frame.finding.span else "its finding"


def not_compared(reason: str) -> str:
    """Why the gate kept the claims apart, in words: different questions, or a claim it could not read."""
    why = ontology.COMPARABILITY[reason]
    if reason in ontology.DIFFERENT_QUESTION_REASONS:
        return f"The claims answer different questions: {why}."
    return f"The claims were not compared as answers to one question: {why}."


def reconciliation(pair: CandidatePair, conflict: str, fa: fr.Frame, fb: fr.Frame,
                   chosen: list[AxisDifference], missing: list[str]) -> str:
    """One sentence that names the differing conditions (or says why the claims are compatible)."""
    findings = f"claim A {_finding_words(fa)}, claim B {_finding_words(fb)}"
    if conflict == ontology.CONTEXTUAL:
        parts = [f"{ontology.axis(d.axis).title.lower()} ({_written(d.values_a, d.hits_a, pair.claim_a.sentence)}"
                 f" vs {_written(d.values_b, d.hits_b, pair.claim_b.sentence)})" for d in chosen]
        return (f"Both findings can hold ({findings}): the claims differ in {'; '.join(parts)}, "
                "which plausibly explains the disagreement.")
    if conflict == DIRECT:
        return f"On the same question and under matched stated conditions the findings are opposed ({findings})."
    if conflict == UNDERSPECIFIED:
        what = ", ".join(ontology.axis(a).title.lower() for a in missing if a != ontology.LATENT_AXIS)
        return (f"The findings look opposed ({findings}), but only one claim states the "
                f"{what or 'study conditions'}, so whether their conditions match cannot be told.")
    if conflict == INSUFFICIENT:
        return f"The findings differ ({findings}), but the evidence behind them is described as weak or preliminary."
    if conflict == CONTROVERSY:
        return f"The findings differ ({findings}) on a question the claims themselves describe as disputed."
    return ""


class FramesAnnotator(LocalAnnotator):
    """Deterministic annotator over claim frames (no model): the default of ``biodivergence build``."""

    annotator_id = FRAMES_ID
    kind = KIND

    def annotate(self, pair: CandidatePair) -> Labels:
        fa, fb, alignment = compared_frames(pair)
        if not alignment.comparable:
            return Labels(ontology.NO_CONFLICT, confidence=0.8, comparable=False,
                          reconciliation=not_compared(alignment.reason),
                          comparability=alignment.reason, notes=alignment.reason)
        why = framealign.findings_disagree(fa.finding, fb.finding)
        if why is None:
            return Labels(ontology.NO_CONFLICT, confidence=0.75, comparable=True,
                          reconciliation="The claims report compatible findings on the same question.",
                          comparability=alignment.reason, notes="same_finding")
        return self.conflict_labels(pair, why, fa, fb, alignment.reason)

    def conflict_labels(self, pair: CandidatePair, why: str, fa: fr.Frame | None = None,
                        fb: fr.Frame | None = None, comparability: str = "") -> Labels:
        """Labels of a pair already judged a conflict (``why``): type, axes, confounder, spans, text."""
        if fa is None or fb is None:
            fa, fb, _ = compared_frames(pair)
        conflict, chosen, axes, confidence = self._classify(pair, why)
        missing = axes if conflict == UNDERSPECIFIED else []
        return Labels(
            conflict_type=conflict,
            divergence_axes=axes,
            dominant_confounder=chosen[0].axis if chosen else None,
            reconciliation=reconciliation(pair, conflict, fa, fb, chosen, missing),
            evidence_spans=evidence_spans(pair, fa, fb, {d.axis for d in chosen}),
            confidence=round(min(0.95, max(0.05, confidence)), 3),
            comparable=True,
            comparability=comparability,
            notes=why,
        )

    @staticmethod
    def _classify(pair: CandidatePair, why: str) -> tuple[str, list[AxisDifference], list[str], float]:
        """The paper's boundary rules, in order."""
        a_text, b_text = pair.claim_a.sentence, pair.claim_b.sentence
        base = 0.7 if why != "significance" else 0.6
        if CONTROVERSY_RE.search(a_text) or CONTROVERSY_RE.search(b_text):
            return CONTROVERSY, [], [], base - 0.1
        if WEAK_RE.search(a_text) or WEAK_RE.search(b_text):
            return INSUFFICIENT, [], [], base - 0.1
        chosen, one_sided = _differing(pair)
        if chosen:
            bonus = 0.1 if chosen[0].strength == CLAIM_VS_CLAIM else 0.0
            return ontology.CONTEXTUAL, chosen, [d.axis for d in chosen], base + bonus
        if one_sided:
            ranked = sorted(one_sided, key=SPECIFICITY.index)[:MAX_AXES]
            return UNDERSPECIFIED, [], ranked, base - 0.1
        return DIRECT, [], [], base


def slot_similarities(pairs: list[CandidatePair], encoder, cache=None, batch_size: int = 64
                      ) -> list[tuple[float | None, float | None]]:
    """Embedding cosine of the exposure phrases and of the outcome phrases the gate compares, per pair.

    Only where the gate can use it: the frames state both slots and a finding, and at least one slot
    matches by its words (the other may then be rescued by a paraphrase); None elsewhere. Each
    distinct phrase is embedded once (and cached when a cache is given)."""
    from ..embeddings import embed_texts

    phrases = []
    for p in pairs:
        fa, fb, al = framealign.best_alignment(frames_of(p.claim_a, p.abstract_a), frames_of(p.claim_b, p.abstract_b))
        needed = al.comparable or max(al.exposure_overlap, al.outcome_overlap) >= framealign.SLOT_MATCH_MIN
        phrases.append(framealign.slot_phrases(fa, fb) if needed else None)
    texts = sorted({t for ph in phrases if ph for side in ph for t in side})
    vectors = dict(zip(texts, embed_texts(texts, encoder, cache, batch_size), strict=True)) if texts else {}
    return [(None, None) if ph is None else tuple(round(float(vectors[x] @ vectors[y]), 4) for x, y in ph)
            for ph in phrases]
