"""The deterministic heuristic annotator: first-class, reproducible, no model.

For a candidate pair it
1. finds whether the claims assert opposite findings — on the aligned wording of the two claims
   (a negation toggled, an effect word replaced by its opposite, a different quantity) or, when the
   claims are worded differently but share a topic, from their overall stance (effect vs no effect,
   opposite effect words under opposite negation);
2. finds, for every axis, the cue values each claim and its abstract carry and whether the two
   sides differ on it (claim against claim is strongest, abstract against abstract weakest);
3. applies the taxonomy's boundary rules in order: no opposition → ``no_conflict``; an open
   dispute → unresolved controversy; weak evidence → evidence insufficiency; an explicit axis
   difference → contextual (the preference rule); matched conditions → direct; else underspecified;
4. picks the strongest differing axis as dominant confounder, writes a reconciliation from a
   template, returns the claim substrings that carried the decisive cues as evidence spans, and
   sets its confidence from the strength of that evidence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from functools import lru_cache

from biodivergence_dataset import ontology
from biodivergence_dataset.records import CandidatePair, EvidenceSpan
from biodivergence_text import cues
from biodivergence_text.cues import canonical_value

from ..repair import ROLE_A, ROLE_B, Labels
from .annotator_base import LocalAnnotator

HEURISTIC_ID = "heuristic-v1"
KIND = ontology.check_label("annotator_kind", "heuristic")
DIRECT = ontology.check_label("conflict_type", "direct_contradiction")
UNDERSPECIFIED = ontology.check_label("conflict_type", "underspecified_apparent_contradiction")
INSUFFICIENT = ontology.check_label("conflict_type", "evidence_insufficiency")
CONTROVERSY = ontology.check_label("conflict_type", "unresolved_scientific_controversy")

#: Aligned wording: the claims are (near-)edits of each other, so their differences are what matters.
ALIGNED_RATIO = 0.5
#: Share of the shorter claim's content words that the other claim repeats: same topic.
TOPIC_MIN = 0.34
#: Below this overlap the claims answer different questions.
UNRELATED_MAX = 0.15
MAX_AXES = 3
#: Axis-difference strengths.
CLAIM_VS_CLAIM, CLAIM_VS_ABSTRACT, ABSTRACT_VS_ABSTRACT = 3, 2, 1

_STOPWORDS = frozenset(
    ["a", "an", "the", "of", "in", "on", "at", "to", "for", "from", "by", "with", "and", "or", "as", "is", "are", "was", "were", "be", "been", "being", "this", "that", "these", "those", "it", "its", "their", "there", "than", "then", "which", "who", "whom", "whose", "what", "when", "where", "while", "into", "onto", "over", "under", "between", "among", "during", "after", "before", "about", "against", "within", "without", "through", "via", "per", "both", "either", "each", "also", "such", "can", "may", "might", "could", "would", "should", "will", "shall", "do", "does", "did", "has", "have", "had", "not", "no", "we", "our", "us"]
)
_TOKEN = re.compile(r"[A-Za-z0-9]+(?:[-'/.][A-Za-z0-9]+)*%?")
_NUMBER = re.compile(r"\d")
WEAK_EVIDENCE_CUES = (
    "pilot", "preliminary", "exploratory", "underpowered", "small sample", "small study", "small studies",
    "limited evidence", "insufficient evidence", "inconclusive", "trend toward", "trend towards",
    "did not reach significance", "not reach statistical significance", "anecdotal",
)
CONTROVERSY_CUES = (
    "controversial", "controversy", "debated", "debate", "conflicting", "contradictory", "disputed",
    "inconsistent results", "inconsistent findings", "remains unclear", "remains unresolved", "mixed evidence",
    "mixed results",
)
WEAK_RE = cues.phrase_regex(WEAK_EVIDENCE_CUES)
CONTROVERSY_RE = cues.phrase_regex(CONTROVERSY_CUES)


@dataclass(frozen=True)
class Token:
    text: str
    low: str
    start: int
    end: int


@lru_cache(maxsize=8192)
def _tokenize(text: str) -> tuple[Token, ...]:
    return tuple(Token(m.group(0), m.group(0).lower(), m.start(), m.end()) for m in _TOKEN.finditer(text))


def tokenize(text: str) -> list[Token]:
    return list(_tokenize(text))


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _is_marker(tok: Token) -> bool:
    """Words that carry stance rather than topic: negation, opposed terms, hedges, numbers."""
    return (cues.is_negation_word(tok.low) or cues.term_polarity(tok.low) is not None
            or tok.low in cues.HEDGE_WORDS or bool(_NUMBER.search(tok.low)))


def content_stems(tokens: list[Token]) -> set[str]:
    return {_stem(t.low) for t in tokens if t.low not in _STOPWORDS and len(t.low) > 2 and not _is_marker(t)}


@lru_cache(maxsize=8192)
def _content_stems_of(text: str) -> frozenset[str]:
    return frozenset(content_stems(tokenize(text)))


def topic_overlap(a_text: str, b_text: str) -> float:
    """Share of the smaller content-word set that the other claim repeats (0 when either has none)."""
    sa, sb = _content_stems_of(a_text), _content_stems_of(b_text)
    if not sa or not sb:
        return 0.0
    return len(sa & sb) / min(len(sa), len(sb))


# --------------------------------------------------------------------------- opposition


@dataclass
class Opposition:
    """Why the claims assert opposite findings, how strongly, and which tokens carry it."""

    kinds: list[str]
    strength: float
    aligned: bool
    tokens_a: list[Token] = field(default_factory=list)
    tokens_b: list[Token] = field(default_factory=list)


def _changed(a: list[Token], b: list[Token]) -> tuple[float, list[Token], list[Token]]:
    """Alignment ratio of the two token sequences and the tokens outside the matching blocks."""
    sm = SequenceMatcher(None, [t.low for t in a], [t.low for t in b], autojunk=False)
    only_a, only_b = [], []
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op != "equal":
            only_a += a[i1:i2]
            only_b += b[j1:j2]
    return sm.ratio(), only_a, only_b


def _polar(tokens: list[Token]) -> dict[str, dict[int, list[Token]]]:
    """group → sign → tokens carrying it."""
    out: dict[str, dict[int, list[Token]]] = {}
    for t in tokens:
        hit = cues.term_polarity(t.low)
        if hit:
            out.setdefault(hit[0], {}).setdefault(hit[1], []).append(t)
    return out


def _opposed_groups(pa: dict[str, dict[int, list[Token]]], pb: dict[str, dict[int, list[Token]]],
                    flip_a: int = 1, flip_b: int = 1) -> list[tuple[list[Token], list[Token]]]:
    """Groups where one side's net sign (times its negation flip) is the opposite of the other's."""
    found = []
    for group in sorted(pa.keys() & pb.keys()):
        sign_a = _net_sign(pa[group]) * flip_a
        sign_b = _net_sign(pb[group]) * flip_b
        if sign_a and sign_b and sign_a != sign_b:
            found.append(([t for ts in pa[group].values() for t in ts], [t for ts in pb[group].values() for t in ts]))
    return found


def _net_sign(by_sign: dict[int, list[Token]]) -> int:
    n = len(by_sign.get(1, [])) - len(by_sign.get(-1, []))
    return (n > 0) - (n < 0)


def _negations(tokens: list[Token]) -> list[Token]:
    return [t for t in tokens if cues.is_negation_word(t.low)]


def _numbers(tokens: list[Token], context_spans: list[tuple[int, int]]) -> list[Token]:
    """Quantities that are not themselves context cues (a dose or a year is a context difference)."""
    return [t for t in tokens if _NUMBER.search(t.low)
            and not any(s <= t.start < e for s, e in context_spans)]


def _aligned_opposition(only_a: list[Token], only_b: list[Token], ctx_a, ctx_b) -> Opposition | None:
    kinds, ta, tb = [], [], []
    flips = 0
    na, nb = _negations(only_a), _negations(only_b)
    if (len(na) + len(nb)) % 2:
        flips += 1
        kinds.append("negation")
        ta += na
        tb += nb
    for ga, gb in _opposed_groups(_polar(only_a), _polar(only_b)):
        flips += 1
        kinds.append("opposite_terms")
        ta += ga
        tb += gb
    if flips % 2:
        return Opposition(kinds, 0.8, True, ta, tb)
    if flips == 0:
        qa, qb = _numbers(only_a, ctx_a), _numbers(only_b, ctx_b)
        if qa and qb:
            return Opposition(["quantity"], 0.65, True, qa, qb)
    return None


def _negative_stance(text: str) -> bool:
    """The claim reports an absence: a negation or a no-difference finding."""
    return cues.has_negation(text) or cues.direction(text) == "null"


def _stance_opposition(a_text: str, b_text: str, a: list[Token], b: list[Token], topical: bool
                       ) -> Opposition | None:
    """Opposition of differently worded claims: effect vs no effect, opposite effects, or (weakest,
    for merely comparable claims) one claim affirming while the other reports an absence."""
    da, db = cues.direction(a_text), cues.direction(b_text)
    if topical and (da == "null") != (db == "null") and (da is not None and db is not None):
        return Opposition(["effect_vs_null"], 0.6, False, _negations(a), _negations(b))
    flip_a = -1 if cues.has_negation(a_text) else 1
    flip_b = -1 if cues.has_negation(b_text) else 1
    groups = _opposed_groups(_polar(a), _polar(b), flip_a, flip_b) if topical else []
    if groups:
        ta, tb = groups[0]
        return Opposition(["opposite_stance"], 0.55, False, ta + _negations(a), tb + _negations(b))
    if _negative_stance(a_text) != _negative_stance(b_text):
        return Opposition(["stance_mismatch"], 0.45, False, _negations(a), _negations(b))
    return None


def find_opposition(a_text: str, b_text: str, ctx_a=(), ctx_b=()) -> tuple[Opposition | None, float, bool]:
    """``(opposition or None, topic overlap, aligned)`` for two claim texts.

    ``ctx_a``/``ctx_b`` are character spans of context cues, whose numbers are not quantities.
    """
    a, b = tokenize(a_text), tokenize(b_text)
    overlap = topic_overlap(a_text, b_text)
    ratio, only_a, only_b = _changed(a, b)
    aligned = ratio >= ALIGNED_RATIO and overlap >= TOPIC_MIN
    if aligned:
        return _aligned_opposition(only_a, only_b, list(ctx_a), list(ctx_b)), overlap, True
    if overlap >= UNRELATED_MAX:
        return _stance_opposition(a_text, b_text, a, b, topical=overlap >= TOPIC_MIN), overlap, False
    return None, overlap, False


# --------------------------------------------------------------------------- axes

@lru_cache(maxsize=4096)
def _abstract_values(text: str) -> dict[str, frozenset[str]]:
    return {axis: frozenset(canonical_value(v) for v in vals) for axis, vals in cues.axis_values(text).items()}


@dataclass
class AxisDifference:
    axis: str
    strength: int
    values_a: frozenset[str]
    values_b: frozenset[str]
    hits_a: list[cues.CueHit]
    hits_b: list[cues.CueHit]


@dataclass
class AxisReport:
    differences: list[AxisDifference]
    #: Axes with a cue on one claim only and nothing to compare it with: detail missing on the other side.
    one_sided: list[str]


@lru_cache(maxsize=8192)
def _claim_hits(text: str) -> dict[str, list[cues.CueHit]]:
    out: dict[str, list[cues.CueHit]] = {}
    for hit in cues.axis_cues(text):
        out.setdefault(hit.axis, []).append(hit)
    return out


def _values(hits: list[cues.CueHit]) -> frozenset[str]:
    return frozenset(canonical_value(h.value) for h in hits)


def axis_report(pair: CandidatePair) -> AxisReport:
    """Per-axis comparison of the two sides: claim against claim, claim against abstract, abstracts."""
    hits_a, hits_b = _claim_hits(pair.claim_a.sentence), _claim_hits(pair.claim_b.sentence)
    separate_abstracts = pair.abstract_a.strip() != pair.abstract_b.strip()
    abs_a = _abstract_values(pair.abstract_a) if separate_abstracts and pair.abstract_a.strip() else {}
    abs_b = _abstract_values(pair.abstract_b) if separate_abstracts and pair.abstract_b.strip() else {}
    diffs, one_sided = [], []
    for axis in ontology.AXIS_NAMES:
        ha, hb = hits_a.get(axis, []), hits_b.get(axis, [])
        va, vb = _values(ha), _values(hb)
        strength = 0
        if va and vb:
            strength = CLAIM_VS_CLAIM if va.isdisjoint(vb) else 0
        elif va or vb:
            own, other_abs = (va, abs_b.get(axis, frozenset())) if va else (vb, abs_a.get(axis, frozenset()))
            if other_abs and own.isdisjoint(other_abs):
                strength = CLAIM_VS_ABSTRACT
                va, vb = (va, other_abs) if va else (other_abs, vb)
            elif not other_abs:
                one_sided.append(axis)
        elif (axis in ontology.PRIMARY_AXIS_NAMES and abs_a.get(axis) and abs_b.get(axis)
              and abs_a[axis].isdisjoint(abs_b[axis])):
            strength, va, vb = ABSTRACT_VS_ABSTRACT, abs_a[axis], abs_b[axis]
        if strength:
            diffs.append(AxisDifference(axis, strength, va, vb, ha, hb))
    diffs.sort(key=lambda d: (-d.strength, d.axis not in ontology.PRIMARY_AXIS_NAMES,
                              ontology.AXIS_NAMES.index(d.axis)))
    return AxisReport(diffs, one_sided)


def smallest_sufficient(diffs: list[AxisDifference]) -> list[AxisDifference]:
    """The differences at the strongest level present, at most MAX_AXES of them (already ranked)."""
    if not diffs:
        return []
    top = diffs[0].strength
    return [d for d in diffs if d.strength == top][:MAX_AXES]


# --------------------------------------------------------------------------- labels


def _title(axis: str) -> str:
    return ontology.axis(axis).title.lower()


def _show(values: frozenset[str]) -> str:
    return ", ".join(sorted(values)[:3]) or "unstated"


def _quote(tokens: list[Token]) -> str:
    return " ".join(dict.fromkeys(t.text for t in tokens))


def _cue_phrase(opp: Opposition) -> str:
    """" ('reduces' vs 'does not reduce')"-style pointer to the words carrying the opposition."""
    quoted = [f"'{q}'" for q in (_quote(opp.tokens_a), _quote(opp.tokens_b)) if q]
    return f" ({' vs '.join(quoted)})" if quoted else ""


def _shown(diff_values: frozenset[str], hits: list[cues.CueHit], text: str) -> str:
    """The cue values as written in the claim when it carries them, else the normalised values."""
    written = list(dict.fromkeys(text[h.start:h.end] for h in hits))
    return ", ".join(written[:3]) if written else _show(diff_values)


def _reconciliation(pair: CandidatePair, conflict: str, opp: Opposition | None, chosen: list[AxisDifference],
                    axes: list[str]) -> str:
    if conflict == ontology.NO_CONFLICT or opp is None:
        return "The claims are compatible: they do not assert opposite findings and can both hold."
    cue = _cue_phrase(opp)
    if chosen:
        d = chosen[0]
        return (f"Both claims can hold: they differ in {_title(d.axis)} (claim A: "
                f"{_shown(d.values_a, d.hits_a, pair.claim_a.sentence)}; claim B: "
                f"{_shown(d.values_b, d.hits_b, pair.claim_b.sentence)}), which plausibly explains the apparent "
                f"disagreement{cue}.")
    if conflict == DIRECT:
        return f"Under matched conditions the claims assert opposite findings{cue}; they cannot both hold."
    if conflict == INSUFFICIENT:
        return "The disagreement rests on weak or preliminary evidence; neither claim supports a firm judgement."
    if conflict == CONTROVERSY:
        return "The claims reflect an openly debated question on which the literature is divided."
    what = ", ".join(_title(a) for a in axes if a != ontology.LATENT_AXIS) or "study conditions"
    return (f"The claims appear to disagree{cue}, but the text does not state the {what} needed to tell "
            "whether their conditions match.")


def _spans(tokens: list[Token], hits: list[cues.CueHit], claim_text: str, article_uid: str, role: str
           ) -> list[EvidenceSpan]:
    return [EvidenceSpan(article_uid=article_uid, text=claim_text[start:end], start=start, end=end, role=role)
            for start, end in sorted({(t.start, t.end) for t in tokens} | {(h.start, h.end) for h in hits})]


def _any(regex: re.Pattern, *texts: str) -> bool:
    return any(regex.search(t) for t in texts)


class HeuristicAnnotator(LocalAnnotator):
    """Deterministic annotator: lexical cues, polarity, negation and axis detection (no model)."""

    annotator_id = HEURISTIC_ID
    kind = KIND

    def annotate(self, pair: CandidatePair) -> Labels:
        a_text, b_text = pair.claim_a.sentence, pair.claim_b.sentence
        report = axis_report(pair)
        ctx_a = [(h.start, h.end) for d in report.differences for h in d.hits_a]
        ctx_b = [(h.start, h.end) for d in report.differences for h in d.hits_b]
        opp, overlap, aligned = find_opposition(a_text, b_text, ctx_a, ctx_b)
        if opp is None:
            confidence = 0.75 if aligned else (0.65 if overlap < UNRELATED_MAX else 0.6)
            return Labels(ontology.NO_CONFLICT, confidence=confidence, comparable=overlap >= UNRELATED_MAX,
                          reconciliation=_reconciliation(pair, ontology.NO_CONFLICT, None, [], []))
        conflict, chosen, axes, confidence = self._classify(a_text, b_text, opp, report)
        spans = (_spans(opp.tokens_a, [h for d in chosen for h in d.hits_a], a_text, pair.claim_a.article_uid, ROLE_A)
                 + _spans(opp.tokens_b, [h for d in chosen for h in d.hits_b], b_text, pair.claim_b.article_uid,
                          ROLE_B))
        return Labels(
            conflict_type=conflict,
            divergence_axes=axes,
            dominant_confounder=chosen[0].axis if chosen else None,
            reconciliation=_reconciliation(pair, conflict, opp, chosen, axes),
            evidence_spans=spans,
            confidence=round(min(0.95, max(0.05, confidence)), 3),
            comparable=True,
            notes="; ".join(opp.kinds),
        )

    @staticmethod
    def _classify(a_text: str, b_text: str, opp: Opposition, report: AxisReport
                  ) -> tuple[str, list[AxisDifference], list[str], float]:
        """Boundary rules in order: controversy, weak evidence, explicit axis, matched, underspecified."""
        if _any(CONTROVERSY_RE, a_text, b_text):
            return CONTROVERSY, [], [], opp.strength - 0.15
        if _any(WEAK_RE, a_text, b_text):
            return INSUFFICIENT, [], [], opp.strength - 0.15
        chosen = smallest_sufficient(report.differences)
        if chosen:
            bonus = {CLAIM_VS_CLAIM: 0.05, CLAIM_VS_ABSTRACT: 0.0, ABSTRACT_VS_ABSTRACT: -0.1}[chosen[0].strength]
            return ontology.CONTEXTUAL, chosen, [d.axis for d in chosen], opp.strength + bonus
        if opp.aligned and not report.one_sided:
            return DIRECT, [], [], opp.strength
        missing = report.one_sided[:MAX_AXES] or [ontology.LATENT_AXIS]
        return UNDERSPECIFIED, [], missing, opp.strength - 0.1
