"""Lexical cue detection shared by claim extraction, pair mining, the heuristic annotator and the
reference model's comparison features: negation, hedging, direction of effect, and the
per-axis context cues declared in the ontology.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from . import ontology

NEGATION_WORDS = (
    "no", "not", "neither", "nor", "never", "none", "without", "absence", "absent", "lack", "lacked",
    "lacks", "failed", "fails", "fail", "unable", "cannot", "insignificant", "non-significant",
    "nonsignificant",
)
NO_DIFFERENCE_PHRASES = (
    "no significant", "not significantly", "did not differ", "no difference", "no differences",
    "not associated", "no association", "no effect", "no significant difference", "similar between",
    "comparable between", "did not improve", "did not reduce", "did not increase", "was not associated",
    "were not associated", "no benefit", "not effective", "ineffective", "not superior", "non-inferior",
    "no change", "unchanged", "did not affect", "had no",
)
HEDGE_WORDS = (
    "may", "might", "could", "possibly", "possible", "suggest", "suggests", "suggested", "suggesting",
    "appear", "appears", "appeared", "likely", "unlikely", "potential", "potentially", "perhaps",
    "putative", "presumably", "hypothesize", "hypothesized", "speculate", "trend", "tended",
)
INCREASE_WORDS = (
    "increase", "increased", "increases", "increasing", "higher", "greater", "elevated", "improved",
    "improves", "improve", "enhanced", "enhances", "more", "raised", "rise", "rose", "gain", "up-regulated",
    "upregulated", "promoted", "promotes", "superior", "better", "longer", "benefit", "beneficial",
    "effective", "efficacious", "positively", "protective", "risk factor",
)
DECREASE_WORDS = (
    "decrease", "decreased", "decreases", "decreasing", "lower", "reduced", "reduces", "reduce",
    "reduction", "less", "fewer", "declined", "decline", "diminished", "down-regulated", "downregulated",
    "inhibited", "inhibits", "suppressed", "worse", "worsened", "shorter", "inferior", "impaired",
    "negatively", "harmful", "loss",
)
SPECULATIVE_PHRASES = (
    "further studies", "further research", "further investigation", "future studies", "future research",
    "more studies", "additional studies", "larger studies", "remains to be", "remain to be",
    "are needed", "is needed", "is warranted", "are warranted", "should be investigated",
)

_WORD = re.compile(r"[A-Za-z][A-Za-z\-']*")


def _phrase_regex(phrases: tuple[str, ...]) -> re.Pattern:
    alts = sorted((re.escape(p) for p in phrases), key=len, reverse=True)
    return re.compile(r"(?<![\w-])(?:" + "|".join(alts) + r")(?![\w-])", re.IGNORECASE)


_NEG_RE = _phrase_regex(NEGATION_WORDS + ("n't",))
_NODIFF_RE = _phrase_regex(NO_DIFFERENCE_PHRASES)
_HEDGE_RE = _phrase_regex(HEDGE_WORDS)
_INC_RE = _phrase_regex(INCREASE_WORDS)
_DEC_RE = _phrase_regex(DECREASE_WORDS)
_SPEC_RE = _phrase_regex(SPECULATIVE_PHRASES)


def has_negation(text: str) -> bool:
    return bool(_NEG_RE.search(text))


def has_hedge(text: str) -> bool:
    return bool(_HEDGE_RE.search(text))


def is_speculative(text: str) -> bool:
    """A follow-up remark such as 'further studies are needed' (paper Table 25, filtered)."""
    return bool(_SPEC_RE.search(text))


def direction(text: str) -> str | None:
    """Direction of the reported effect: 'null' (no difference), 'increase', 'decrease', or None."""
    if _NODIFF_RE.search(text):
        return "null"
    inc, dec = len(_INC_RE.findall(text)), len(_DEC_RE.findall(text))
    negated = has_negation(text)
    if inc == dec:
        return None
    d = "increase" if inc > dec else "decrease"
    if negated:
        return "null"
    return d


def polarity(text: str) -> int:
    """+1 for a positive finding, -1 for a negative/null finding, 0 when unclear."""
    d = direction(text)
    if d == "null" or (d is None and has_negation(text)):
        return -1
    if d in ("increase", "decrease"):
        return 1
    return 0


@dataclass(frozen=True)
class CueHit:
    """One context cue found in a text: which axis, the matched value, and its character offsets."""

    axis: str
    value: str
    start: int
    end: int


@lru_cache(maxsize=None)
def _axis_regex(axis_name: str) -> re.Pattern | None:
    patterns = ontology.axis(axis_name).cue_patterns
    if not patterns:
        return None
    return re.compile(r"(?<![\w-])(?:" + "|".join(f"(?:{p})" for p in patterns) + r")(?![\w-])", re.IGNORECASE)


def axis_cues(text: str, axes: tuple[str, ...] = ontology.AXIS_NAMES) -> list[CueHit]:
    """All axis cue matches in ``text``, ordered by position."""
    hits = []
    for name in axes:
        rx = _axis_regex(name)
        if rx is None:
            continue
        hits.extend(CueHit(name, m.group(0).lower(), m.start(), m.end()) for m in rx.finditer(text))
    return sorted(hits, key=lambda h: (h.start, h.axis))


def axis_values(text: str) -> dict[str, set[str]]:
    """``{axis: {normalised cue values}}`` for the axes that have a cue in ``text``."""
    out: dict[str, set[str]] = {}
    for hit in axis_cues(text):
        out.setdefault(hit.axis, set()).add(hit.value)
    return out


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]
