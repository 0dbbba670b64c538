"""Claim frames: what a claim is about and what it finds (ARCHITECTURE.md §1, the annotation layer).

A frame holds the claim's **exposure** (what is given, compared or measured as a cause), its
**outcome** (the endpoint), the **context slots** (the ontology's axis cues found in the claim,
with offsets) and its **finding**: a direction from ``ontology.FINDING_DIRECTIONS`` plus the stated
significance. Everything is found with rules over the sentence, in one pass of regular expressions
(no tagger or parser is installable offline, and the annotate stage must stay above 500 pairs/s).
A claim without any finding cue gets a *generic* finding that is never compared: its direction
would rest on a negation word alone.

The finding cues and the choice of the main one are :mod:`builder.findingcues`; the stated significance and tests
:mod:`builder.significance`; the word stems slots are compared by :mod:`builder.frameterms`; the same-question gate
between two frames :mod:`builder.framealign`. Passages and multi-finding sentences ("…, whereas …") get one frame
per sentence or clause (``extract_frames``). The text before the main cue is the exposure, the text after it up to
the first context boundary ("in", "among", "than", a comma …) is the outcome; for "association between X and Y" /
"difference in Y between A and B" the two sides are read from the prepositions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import lru_cache

from biodivergence_dataset import ontology
from biodivergence_text import cues

from .findingcues import (
    ASSOCIATION,
    AUXILIARIES,
    DECREASE,
    DETERMINERS,
    DIFFERENCE,
    INCREASE,
    NEGATOR_RE,
    NO_ASSOCIATION,
    NO_DIFFERENCE,
    NO_MODIFIERS,
    NULL_DIRECTIONS,
    Cue,
    finding_cues,
    main_cue,
)
from .frameterms import GENERIC_WORDS, WORD_RE, abbreviations, names, terms
from .sentences import pieces_between, split_spans
from .significance import NOT_SIGNIFICANT, stated_significance

#: Where the outcome phrase after a finding cue ends and context begins.
_OUTCOME_END = re.compile(
    r"[,;:]|\s[()]|\)\s|\s(?:in|among|amongst|after|during|than|versus|vs\.?|compared|when|whereas|while|but|although"
    r"|at|from|for|within|following|across|regardless|whether|because|as|if|only|and (?:was|were|is|are))\s",
    re.IGNORECASE)
_TRAILING_AUX = re.compile(r"(?:\s+(?:" + "|".join(sorted(AUXILIARIES)) + r"))+\s*$", re.IGNORECASE)
_LEADING_PREP = re.compile(r"^(?:with|to|in|of|on|by|for|against|between)\s+", re.IGNORECASE)
_BETWEEN = re.compile(r"\bbetween\s+(.+?)(?:\s+and\s+(.+))?$", re.IGNORECASE)


@dataclass(frozen=True)
class Span:
    """A phrase of the claim with its character offsets (end-exclusive)."""

    text: str
    start: int
    end: int


@dataclass(frozen=True)
class ContextSlot:
    """One context value the claim states: the axis, the normalised value and where it is written."""

    axis: str
    value: str
    span: Span


@dataclass(frozen=True)
class Finding:
    """The claim's main finding: direction, stated significance and the phrase that carries it."""

    direction: str | None
    significance: str | None
    span: Span | None
    negated: bool = False
    #: No finding cue: the direction is read from the claim's negation alone (weaker evidence).
    generic: bool = False
    #: ``(group, sign)`` of the claim's opposed-term words (``cues.OPPOSED_TERMS``), context phrases
    #: excluded: "lower birth weight … more likely" vs "higher birth weight … more likely".
    polar: frozenset[tuple[str, int]] = frozenset()
    #: The claim's lower-cased words outside context phrases (prefix antonyms: "effective"/"ineffective").
    words: frozenset[str] = frozenset()

    @property
    def is_null(self) -> bool:
        """A null finding, or an effect the claim itself calls not significant."""
        return self.direction in NULL_DIRECTIONS or self.significance == NOT_SIGNIFICANT


@dataclass(frozen=True)
class SlotMatch:
    """A slot's words outside context phrases (a strain or a population in a slot is compared as context),
    how many of them the slot phrase itself holds (an outcome's words may read on past a clipped phrase),
    and the names in it (genes, variants, drugs, scores: "BRCA1", "Bmi-1", "RDW"), lower-cased."""

    core: frozenset[str] = frozenset()
    core_size: int = 0
    names: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Frame:
    """Exposure, outcome, context slots and finding of one claim sentence."""

    exposure: Span | None
    outcome: Span | None
    context: tuple[ContextSlot, ...]
    finding: Finding
    exposure_terms: frozenset[str] = field(default_factory=frozenset)
    outcome_terms: frozenset[str] = field(default_factory=frozenset)
    #: What the same-question gate matches besides the slot terms.
    exposure_match: SlotMatch = field(default_factory=lambda: SlotMatch())
    outcome_match: SlotMatch = field(default_factory=lambda: SlotMatch())
    #: The sentence the frame was read from, and where it starts in the claim text.
    text: str = ""
    offset: int = 0

    def as_record(self) -> dict:
        """The release-column form (``features.FRAME_FEATURES``)."""
        return {
            "exposure": self.exposure.text if self.exposure else "",
            "outcome": self.outcome.text if self.outcome else "",
            "finding": self.finding.direction,
            "significance": self.finding.significance,
            "finding_text": self.finding.span.text if self.finding.span else "",
            "context": [{"axis": s.axis, "value": s.value, "text": s.span.text, "start": s.span.start,
                         "end": s.span.end} for s in self.context],
        }


#: A slot that points back into its abstract ("this allele", "these patients") names nothing another claim can share.
_ANAPHORA = re.compile(r"(?:this|these|that|those|such|its|their)\b", re.IGNORECASE)


#: Adjectives that state a finding about their subject without an object ("X is safe", "Y was not useful").
_EVALUATIVE = re.compile(r"safe|effective|efficacious|useful|feasible|accurate|reliable|beneficial|important|"
                         r"necessary|sufficient|essential|valuable|helpful|superior|inferior|ineffective|"
                         r"successful|critical|crucial", re.IGNORECASE)


def _span(text: str, start: int, end: int) -> Span | None:
    """The stripped sub-span ``text[start:end]`` (None when it holds no word)."""
    chunk = text[start:end]
    lead = len(chunk) - len(chunk.lstrip(" ,;:.()"))
    chunk = chunk.strip(" ,;:.()")
    if not WORD_RE.search(chunk):
        return None
    return Span(chunk, start + lead, start + lead + len(chunk))


def _clause_end(text: str, start: int) -> int:
    """Where the phrase starting at ``start`` ends: the first context boundary, else the sentence end."""
    rest = text[start:]
    stop = _OUTCOME_END.search(rest)
    return start + (stop.start() if stop else len(rest.rstrip(" .")))


_NO_SUBJECT = re.compile(r"\s*(?:there|it|this|these|we)?\s*(?:was|were|is|are|had|has|have|showed|found)?"
                         r"(?:\s+(?:also|still|again|thus|therefore))?\s*", re.IGNORECASE)
_OF_ON = re.compile(r"(?:(?:of|in)\s+)?(.+?)\s+(?:on|with|and|to)\s+", re.IGNORECASE)
#: Words that may stand between a finding noun and its "between X and Y" ("no association was noted between").
_REPORTING_ONLY = re.compile(r"(?:\s*\b(?:was|were|is|are|been|be|has|have|had|noted|observed|found|seen|detected|"
                            r"identified|evident|apparent|shown|demonstrated|reported|significant|statistically)\b)*\s*",
                            re.IGNORECASE)
_COMPARISONS = (DIFFERENCE, NO_DIFFERENCE, ASSOCIATION, NO_ASSOCIATION)


#: What a subject starts after: a reporting clause ("we found that", "results suggest that", "the
#: analysis revealed") or a discourse opener ("However,", "In conclusion,", "Since").
_REPORTING = re.compile(r"^.*\b(?:that|whether)\b[\s,]+|^.*\b(?:revealed|showed|demonstrated|indicated|confirmed|"
                        r"found|observed)(?:\s+|$)|^\s*(?:however|moreover|furthermore|in conclusion|in summary|overall|"
                        r"thus|therefore|finally|in addition|importantly|notably|interestingly|since|although|while)"
                        r"\s*,?\s*",
                        re.IGNORECASE)


#: Words of a reporting subject ("Our multivariate analysis showed …"): the verb after them reports, while
#: after any other word it has a subject of its own ("Platelet count showed no correlation with …").
_REPORTERS = frozenset("we our this present current study studies result results data analysis analyses finding "  # noqa: SIM905 (a word list reads best as words)
                       "findings trial trials review meta-analysis regression multivariate multivariable univariate "
                       "logistic model models investigation survey these it further additional also in addition "
                       "the a an sensitivity subgroup".split())
#: A leading adverbial ("In multivariate analysis, …", "Among women over 60, …"); its context is read separately.
_OPENER = re.compile(r"\s*(?:in|among|after|during|for|at|on|of|compared with|using|within|across|following|"
                     r"since|when|overall)\b[^,;]{0,80},\s*", re.IGNORECASE)
#: "was found to be", "were shown to": the raising verb is not part of the subject.
_TRAILING_RAISING = re.compile(r"\s+(?:found|shown|proven|proved|considered|reported|thought|known|demonstrated|"
                               r"observed|seen|believed|suggested|estimated|predicted)\s+to\s*$", re.IGNORECASE)
_TRAILING_REPORT = re.compile(r"\s+(?:showed|shows|revealed|demonstrated|displayed|exhibited)\s*$", re.IGNORECASE)
#: Subject words that leave no exposure ("we found a significant increase in Y": Y changed, nothing says why).
_EMPTY_SUBJECT = (DETERMINERS | NO_MODIFIERS | AUXILIARIES | _REPORTERS
                  | frozenset("there showed found noted observed small slight modest marked dramatic large "  # noqa: SIM905 (a word list reads best as words)
                              "sharp steady moderate greater mean relative absolute".split()))


def _subject(text: str, end: int) -> str:
    """The words before a finding cue that may hold its subject: trailing auxiliaries and raising verbs
    ("was also found to be") cut off."""
    subject = _TRAILING_AUX.sub("", _TRAILING_RAISING.sub("", _TRAILING_AUX.sub("", text[:end])))
    cut = _TRAILING_REPORT.search(subject)
    if cut and not _empty_subject(_subject_tail(subject[:cut.start()])):
        return subject[:cut.start()]  # "Platelet count showed": the count is the subject, "showed" reports
    return subject


def _subject_tail(words: str) -> str:
    m = _REPORTING.match(words)
    return words[m.end():] if m and _complement_clause(m) else words


def _complement_clause(reporting: re.Match) -> bool:
    """The reporting clause ends in "that"/"whether" (what follows is a clause of its own), rather than at a
    reporting verb ("… showed")."""
    return "that" in reporting.group(0).lower() or "whether" in reporting.group(0).lower()


def _subject_start(subject: str) -> int:
    """Where the subject starts: after a reporting clause ("we found that", "results suggest that", "the
    analysis revealed") and a leading adverbial, but a reporting verb whose own subject is a content phrase
    keeps it ("Platelet count showed …")."""
    m = _REPORTING.match(subject)
    start = m.end() if m else 0
    if m and not _complement_clause(m):
        own = [w.lower() for w in WORD_RE.findall(m.group(0))[:-1]]
        if own and any(w not in _REPORTERS and w not in GENERIC_WORDS for w in own[len(_opener_words(m.group(0))):]):
            start = 0
    opener = _OPENER.match(subject, start)
    return opener.end() if opener and opener.end() < len(subject.rstrip()) else start


def _opener_words(text: str) -> list[str]:
    opener = _OPENER.match(text)
    return WORD_RE.findall(opener.group(0)) if opener else []


def _empty_subject(words: str) -> bool:
    return all(w.lower() in _EMPTY_SUBJECT for w in WORD_RE.findall(words))


_ADVERBS = re.compile(r"(?:(?:" + "|".join(sorted(NO_MODIFIERS)) + r"|\w+ly)\s+)+(?=(?:in|between)\s)",
                      re.IGNORECASE)


def _sides(text: str, cue: Cue) -> tuple[Span | None, Span | None]:
    """Exposure and outcome around the finding cue (see the module docstring)."""
    after_start = cue.end + len(text[cue.end:]) - len(text[cue.end:].lstrip())
    adverbs = _ADVERBS.match(text, after_start)  # "did not differ significantly in Y"
    after_start = adverbs.end() if adverbs else after_start
    lead = _LEADING_PREP.match(text[after_start:])
    subject = _subject(text, cue.neg_start)
    subject_start = _subject_start(subject)
    if lead and lead.group(0).lower().startswith("by"):  # "Y was reduced by X"
        by_start = after_start + lead.end()
        return _span(text, by_start, _clause_end(text, by_start)), _span(text, subject_start, len(subject))
    if lead and not lead.group(0).lower().startswith("between"):
        after_start += lead.end()
    rest = text[after_start:]
    no_subject = _NO_SUBJECT.fullmatch(subject[subject_start:]) is not None or _empty_subject(subject[subject_start:])
    between = _BETWEEN.search(rest) if cue.direction in _COMPARISONS else None
    if between is not None:
        first = after_start + between.start(1)
        directly = between.start() == 0 or _REPORTING_ONLY.fullmatch(rest[:between.start()]) is not None
        if between.group(2) is not None and directly and not cue.verbal:
            # "A negative correlation between X and Y": X and Y, whatever modifies the noun
            third = after_start + between.start(2)
            return (_span(text, first, after_start + between.end(1)),
                    _span(text, third, _clause_end(text, third)))
        if between.group(2) is None:  # "… between the two regimens"
            exposure = _span(text, first, _clause_end(text, first))
        elif between.start() == 0:  # "association between X and Y"
            third = after_start + between.start(2)
            return (_span(text, first, after_start + between.end(1)),
                    _span(text, third, _clause_end(text, third)))
        else:
            exposure = _span(text, first, _clause_end(text, after_start + between.start(2)))
        # "difference in Y between A and B" / "Y differed between A and B"
        outcome = _span(text, after_start, after_start + between.start()) if no_subject else _span(
            text, subject_start, len(subject))
        return exposure, outcome
    outcome_end = _clause_end(text, after_start)
    if no_subject:  # "No effect of X on Y", "there was an association of X with Y"
        of = _OF_ON.match(rest) if lead or rest[:3].lower() in ("of ", "in ") else None
        if of:
            return (_span(text, after_start + of.start(1), after_start + of.end(1)),
                    _span(text, after_start + of.end(0), outcome_end))
        return None, _span(text, after_start, outcome_end)
    if cue.direction in (DIFFERENCE, NO_DIFFERENCE) and not terms(subject[subject_start:]) and lead:
        # "Groups did not differ in Y": the subject is only the comparison, Y the outcome
        return None, _span(text, after_start, outcome_end)
    if cue.direction in (DIFFERENCE, NO_DIFFERENCE):
        # "Relapse rates were similar in both arms": the subject is the outcome, the comparison the exposure.
        return _span(text, after_start, outcome_end), _span(text, subject_start, len(subject))
    return _span(text, subject_start, len(subject)), _span(text, after_start, outcome_end)


def _context(text: str) -> tuple[ContextSlot, ...]:
    return tuple(ContextSlot(h.axis, cues.canonical_value(h.value), Span(text[h.start:h.end], h.start, h.end))
                 for h in cues.axis_cues(text))


#: How much of its object a finding phrase reads on into ("did not reduce mortality"), cut at a word's end.
FINDING_OBJECT_CHARS = 40


def _word_end(text: str, end: int) -> int:
    """``end``, moved back to the end of the last whole word when it falls inside a word."""
    if end >= len(text) or not (text[end - 1].isalnum() and text[end].isalnum()):
        return end
    cut = text.rfind(" ", 0, end)
    return cut if cut > 0 else end


@lru_cache(maxsize=65536)
def extract_frame(text: str, context_text: str = "") -> Frame:
    """The frame of one claim sentence; ``context_text`` (its abstract) only defines abbreviations."""
    found = finding_cues(text)
    cue = main_cue(found)
    significance = stated_significance(text)
    context = _context(text)
    words = _words_outside(text, context)
    if cue is None:
        negated = NEGATOR_RE.search(text) is not None
        finding = Finding(NO_ASSOCIATION if negated else ASSOCIATION, significance, None, negated, True,
                          _polar(words), words)
        exposure, outcome = None, None
    else:
        finding_end = cue.end
        exposure, outcome = _sides(text, cue)
        if (outcome is None or not terms(outcome.text)) and _EVALUATIVE.fullmatch(text[cue.start:cue.end]):
            # "Chemoradiation is safe": the judgement itself is what is found about the exposure
            outcome = Span(text[cue.start:cue.end], cue.start, cue.end)
        elif (outcome is None or not terms(outcome.text)) and cue.direction in (INCREASE, DECREASE):
            # "The prevalence rose from 6.7% to 42%": a change without an object; the subject is what
            # changed, and nothing says what changed it
            exposure, outcome = None, exposure
        if outcome is not None and outcome.start - finding_end <= 12:
            # the finding phrase reads on into its object: "did not reduce mortality"
            finding_end = _word_end(text, min(outcome.end, outcome.start + FINDING_OBJECT_CHARS))
        finding = Finding(cue.direction, significance, _span(text, cue.neg_start, finding_end), cue.negated,
                          False, _polar(words), words)
    abbrevs = abbreviations(context_text + " " + text) if "(" in context_text + text else None
    exposure_terms = terms(exposure.text, abbrevs) if exposure and not _ANAPHORA.match(exposure.text) else frozenset()
    outcome_own = terms(outcome.text, abbrevs) if outcome else frozenset()
    read_on = _read_on_terms(text, outcome, outcome_own, context, abbrevs) - outcome_own
    exposure_text, outcome_text = _outside_context(text, exposure, context), _outside_context(text, outcome, context)
    exposure_core = terms(exposure_text, abbrevs) if exposure_terms else frozenset()
    outcome_core = terms(outcome_text, abbrevs)
    return Frame(
        exposure=exposure, outcome=outcome, context=context, finding=finding,
        exposure_terms=exposure_terms, outcome_terms=outcome_own | read_on, text=text,
        exposure_match=SlotMatch(exposure_core, len(exposure_core), names(exposure_text)),
        outcome_match=SlotMatch(outcome_core | read_on, len(outcome_core), names(outcome_text)),
    )


_ENDPOINT_AXIS = ontology.axis("endpoint_definition").name


def _outside_context(text: str, slot: Span | None, context: tuple[ContextSlot, ...]) -> str:
    """The slot phrase with the context phrases inside it blanked ("MRSA" in "MRSA infections" is a strain:
    context); an endpoint phrase ("overall mortality") is what the outcome is, so it stays."""
    if slot is None:
        return ""
    chars = list(text[slot.start:slot.end])
    for c in context:
        if c.axis == _ENDPOINT_AXIS:
            continue
        for i in range(max(c.span.start, slot.start), min(c.span.end, slot.end)):
            chars[i - slot.start] = " "
    return "".join(chars)


def _read_on_terms(text: str, outcome: Span | None, own: frozenset[str], context: tuple[ContextSlot, ...],
                   abbrevs) -> frozenset[str]:
    """The words an outcome reads on to: one clipped to fewer than two content words (``own``) at a number or
    parenthesis ("a 4.9% (p = 0.02) decrease in confirmed cases") reads on to the sentence end, context
    phrases left out; none otherwise."""
    if outcome is None or len(own) >= 2:
        return frozenset()
    tail = text[outcome.end:]
    for slot in context:
        if slot.span.start >= outcome.end:
            a, b = slot.span.start - outcome.end, slot.span.end - outcome.end
            tail = tail[:a] + " " * (b - a) + tail[b:]
    return terms(tail, abbrevs)


def _moved(span: Span | None, offset: int) -> Span | None:
    return None if span is None else Span(span.text, span.start + offset, span.end + offset)


def _shifted(frame: Frame, offset: int) -> Frame:
    """``frame`` with every offset moved by ``offset`` (a sentence's frame placed in its passage)."""
    if offset == 0:
        return frame
    finding = frame.finding
    return replace(
        frame, exposure=_moved(frame.exposure, offset), outcome=_moved(frame.outcome, offset),
        context=tuple(replace(s, span=_moved(s.span, offset)) for s in frame.context),
        finding=replace(finding, span=_moved(finding.span, offset)), offset=offset)


#: Sentences or clauses of a passage that get a frame of their own (the rest are ignored).
MAX_SENTENCES = 6


@lru_cache(maxsize=65536)
def extract_frames(text: str, context_text: str = "") -> tuple[Frame, ...]:
    """One frame per sentence of a passage (a single sentence gives one frame); offsets are into ``text``."""
    spans = [c for s, e in split_spans(text) for c in _clauses(text, s, e)][:MAX_SENTENCES]
    if len(spans) <= 1:
        return (extract_frame(text, context_text),)
    return tuple(_shifted(extract_frame(text[s:e], context_text), s) for s, e in spans)


#: Where a sentence holds two findings: "…, whereas …", "…; …", "…, but …", "…, while …".
_CLAUSE_SPLIT = re.compile(r";\s+|,\s+(?:whereas|while|but|although|though)\s+|\s+whereas\s+", re.IGNORECASE)


def _clauses(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The clauses of one sentence that may carry findings of their own (each at least 4 words)."""
    kept = [(s, e) for s, e in pieces_between(_CLAUSE_SPLIT, text, start, end) if len(WORD_RE.findall(text[s:e])) >= 4]
    return kept or [(start, end)]


def _words_outside(text: str, context: tuple[ContextSlot, ...]) -> frozenset[str]:
    """Lower-cased words of the claim outside its context phrases (those are compared as context)."""
    return frozenset(m.group(0).lower() for m in WORD_RE.finditer(text)
                     if not any(s.span.start <= m.start() < s.span.end for s in context))


#: Opposed-term groups that say which way a finding goes (frequency, size, timing or sameness words
#: describe the data, not the finding's direction).
FINDING_GROUPS = frozenset({"effect", "valence", "necessity", "sign", "sensitivity"})


def _polar(words: frozenset[str]) -> frozenset[tuple[str, int]]:
    return frozenset(hit for hit in map(cues.term_polarity, words) if hit and hit[0] in FINDING_GROUPS)
