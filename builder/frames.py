"""Claim frames: what a claim is about and what it finds (ARCHITECTURE.md §1, the annotation layer).

A frame holds the claim's **exposure** (what is given, compared or measured as a cause), its
**outcome** (the endpoint), the **context slots** (the ontology's axis cues found in the claim,
with offsets) and its **finding**: a direction from ``ontology.FINDING_DIRECTIONS`` plus the stated
significance. Everything is found with rules over the sentence, in one pass of regular expressions
(no tagger or parser is installable offline, and the annotate stage must stay above 500 pairs/s).
A claim without any finding cue gets a *generic* finding that is never compared: its direction
would rest on a negation word alone.

How the main finding is chosen: every finding cue (an effect verb, an association or difference
word, an explicit null word such as "similar" or "unrelated") is found with its negation
(a negator within a few words before it: "did not reduce", "no significant difference",
"failed to improve"). A null finding wins over an effect (a claim that reports an absence is
about that absence); otherwise a verb-like cue (after an auxiliary, or inflected and not after a
determiner) wins over an adjective in the subject ("increased LDL receptors play a role …"), then
any cue after the sentence's first word, then the first cue. Passages and multi-finding sentences
("…, whereas …") get one frame per sentence or clause (``extract_frames``). The text before the cue is the exposure, the text after it up to the
first context boundary ("in", "among", "than", a comma …) is the outcome; for "association
between X and Y" / "difference in Y between A and B" the two sides are read from the prepositions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import lru_cache

from biodivergence_dataset import ontology
from biodivergence_text import cues

from .sentences import pieces_between, split_spans

INCREASE, DECREASE, NO_EFFECT, ASSOCIATION, NO_ASSOCIATION, DIFFERENCE, NO_DIFFERENCE = ontology.FINDING_DIRECTIONS
SIGNIFICANT, NOT_SIGNIFICANT = ontology.SIGNIFICANCE_VALUES
#: Negated form of each effect direction.
NULL_OF = {INCREASE: NO_EFFECT, DECREASE: NO_EFFECT, ASSOCIATION: NO_ASSOCIATION, DIFFERENCE: NO_DIFFERENCE}
NULL_DIRECTIONS = frozenset(NULL_OF.values())

# Finding cues: (regex over one lower-cased word or short phrase, direction when affirmed).
_CUE_WORDS: tuple[tuple[str, str], ...] = (
    ((r"increas\w*|higher|elevat\w*|rais(?:e|es|ed|ing)|rose|rise[sn]?|enhanc\w*|improv\w*|promot\w*|induc\w*"
      r"|augment\w*|greater|upregulat\w*|up-regulat\w*|stimulat\w*|accelerat\w*|exacerbat\w*|boost\w*"
      r"|activat\w*|potentiat\w*|caus(?:e|es|ed|ing)|leads? to|led to|results? in|resulted in|gain\w*"
      r"|doubl\w*|prolong\w*|longer|better|superior|more likely|faster|more (?:often|frequent\w*)|overexpress\w*|amplif\w*|facilitat\w*"
      r"|aggravat\w*|exceed\w*|encourag\w*|elicit\w*|trigger\w*|driv(?:e|es|en|ing)|drove|stabiliz\w*"
      r"|accumulat\w*|produc(?:e|es|ed)"), INCREASE),
    ((r"decreas\w*|reduc\w*|lower(?:s|ed|ing)?|inhibit\w*|suppress\w*|attenuat\w*|diminish\w*|declin\w*"
      r"|downregulat\w*|down-regulat\w*|impair\w*|prevent\w*|protect\w*|block\w*|less likely|fewer|slow\w*"
      r"|delay\w*|alleviat\w*|ameliorat\w*|mitigat\w*|deactivat\w*|inactivat\w*|abolish\w*|abrogat\w*|loss"
      r"|shorter|inferior|slower|less (?:often|frequent\w*)|deplet\w*|retard\w*|disrupt\w*|prevent\w*|lessen\w*|eliminat\w*|cur(?:e|es|ed)"
      r"|lost|drop(?:s|ped)?|worsen\w*|destabiliz\w*|repress\w*|imped\w*|hinder\w*|arrest\w*|antagoni\w*"
      r"|kill\w*|degrad\w*|incapable|eradicat\w*|clear(?:s|ed|ing)?|resolv(?:e|es|ed)"), DECREASE),
    ((r"associat\w*|correlat\w*|linked|link|relat(?:ed|ion|ionship|ionships)|predict\w*|risk factors?"
      r"|contribut\w*|depend\w*|involv\w*|(?:plays?|played) (?:a |an )?(?:\w+ )?role|requir\w*|necessary"
      r"|mediat\w*|determin\w*|affect(?:s|ed|ing)?|influenc\w*|impact\w*|effects?|modulat\w*|regulat\w*"
      r"|sufficient|essential|useful|accurate|efficac\w*|effective|efficient|benefi\w*|valuable"
      r"|reliable|helpful|safe|feasible|success\w*|respon(?:d|ds|ded|se)|important|critical|crucial|capable"
      r"|provid\w*|enabl\w*|allow\w*|confer\w*|target\w*|bind\w*|interact\w*|alter(?:s|ed|ing)?"
      r"|chang(?:e|es|ed|ing)|modif(?:y|ies|ied)|(?:an?|any|no) (?:\w+ )?role"), ASSOCIATION),
    (r"differ(?:s|ed|ent|ence|ences)?|vari(?:ed|es|ation)|distinct|heterogene\w*|disparit\w*", DIFFERENCE),
)
#: Words that state a null finding by themselves.
_NULL_WORDS: tuple[tuple[str, str], ...] = (
    ((r"similar(?:ly)?|comparabl[ey]|equivalent|unchanged|unaltered|unaffected|non-?inferior|no different"
      r"|indistinguishable|identical|same rate|same risk|equal to|equally \w+|and comparably|comparably \w+ed"),
     NO_DIFFERENCE),
    (r"unrelated|uninvolved|independent of|dispensable|irrelevant|uncorrelated", NO_ASSOCIATION),
    (r"ineffective|inefficacious|useless|futile|no benefit|no effect|no impact|no role|no influence", NO_EFFECT),
)
_NEGATORS = r"not|no|n't|never|neither|nor|without|fail(?:s|ed)? to|unable to|cannot|lack(?:s|ed)? of|lack(?:s|ed)?|absence of|none of"
_AUX = frozenset("is are was were be been being has have had may might can could will would does did do shall "  # noqa: SIM905 (a word list reads best as words)
                 "should must also further significantly markedly strongly substantially".split())
_DETERMINERS = frozenset("a an the of with in for by on to this that these those its their his her".split())  # noqa: SIM905 (a word list reads best as words)
_CUE_RE = re.compile(
    r"(?<![\w-])(?:" + "|".join(f"(?P<c{i}>{p})" for i, (p, _) in enumerate(_CUE_WORDS + _NULL_WORDS))
    + r")(?![\w-])", re.IGNORECASE)
_CUE_DIRECTIONS = tuple(d for _, d in _CUE_WORDS + _NULL_WORDS)
_N_EFFECT = len(_CUE_WORDS)
_NEG_RE = re.compile(r"(?<![\w-])(?:" + _NEGATORS + r")(?![\w-])", re.IGNORECASE)
#: Negators that negate the noun after them; they negate a finding only when that noun is the finding
#: ("no association", "lack of effect", "absence of a significant difference").
_DETERMINER_NEGATOR = re.compile(r"no|lack(?:s|ed)? of|absence of|none of", re.IGNORECASE)
#: Words that may stand between "no" and the finding it negates ("no statistically significant difference").
_NO_MODIFIERS = frozenset("significant significantly statistically clear clearly clear-cut evidence of any overall "  # noqa: SIM905 (a word list reads best as words)
                          "further major apparent consistent independent relevant meaningful substantial detectable "
                          "obvious such definite strong direct causal linear real important".split())
#: How far (in characters) before a cue a negator still negates it ("did not significantly reduce").
NEGATION_WINDOW = 32
#: Verbs that cancel what follows them: negated, they leave it standing ("did not negate the beneficial effects
#: of oestrogen", "did not offset the benefit").
_CANCELS = re.compile(r"(?:negat|cancel|offset|counteract|outweigh|blunt|revers|nullif|neutrali[sz])\w*",
                      re.IGNORECASE)
#: Where a negator's reach ends: clause punctuation, a parenthesis ("those who were not (a 44% reduction)"), a
#: contrast word.
_CLAUSE_BREAK = re.compile(r"[,;:()]|\b(?:but|although|whereas|while|however|though)\b", re.IGNORECASE)
_SIG_NEG = re.compile(
    r"\b(?:not (?:statistically )?significant(?:ly)?|non-?significant(?:ly)?|insignificant(?:ly)?"
    r"|did not reach (?:statistical )?significance|no (?:statistically )?significant|n\.s\.)"
    r"|\bp\s*(?:>|≥|=)\s*0?\.(?:0[5-9]|[1-9])\d*", re.IGNORECASE)
_SIG_POS = re.compile(r"\b(?:statistically )?significant(?:ly)?\b|\bp\s*(?:<|≤|=)\s*0?\.0(?:[0-4]\d*|50*)\b",
                      re.IGNORECASE)
#: Where the outcome phrase after a finding cue ends and context begins.
_OUTCOME_END = re.compile(
    r"[,;:]|\s[()]|\)\s|\s(?:in|among|amongst|after|during|than|versus|vs\.?|compared|when|whereas|while|but|although"
    r"|at|from|for|within|following|across|regardless|whether|because|as|if|only|and (?:was|were|is|are))\s",
    re.IGNORECASE)
_TRAILING_AUX = re.compile(r"(?:\s+(?:" + "|".join(sorted(_AUX)) + r"))+\s*$", re.IGNORECASE)
_LEADING_PREP = re.compile(r"^(?:with|to|in|of|on|by|for|against|between)\s+", re.IGNORECASE)
_BETWEEN = re.compile(r"\bbetween\s+(.+?)(?:\s+and\s+(.+))?$", re.IGNORECASE)
_WORD_RE = re.compile(r"[A-Za-z][A-Za-z0-9'\-]*|\d+(?:\.\d+)?")
_ABBREV_DEF = re.compile(r"((?:[A-Za-z][\w'-]*\s+){1,8})\(([A-Z][A-Za-z0-9-]{1,9})\)"
                         r"(?!\s+(?:trials?|study|studies|investigators|group|program(?:me)?|registry)\b)")

#: Words that never decide what a claim is about.
GENERIC_WORDS = frozenset(
    "a an the of in on at to for from by with and or as is are was were be been being this that these those it its "  # noqa: SIM905 (a word list reads best as words)
    "their there than then which who what when where while into between among during after before about against "
    "within without through via per both either each also such can may might could would should will do does did "
    "has have had not no we our us study studies result results data patient patients subject subjects group groups "
    "level levels rate rates use used using effect effects significant significantly statistically higher lower "
    "increased decreased associated association risk factor factors case cases analysis analyses finding findings "
    "evidence role important present observed found shown showed show shows demonstrated reported compared "
    "comparison treatment treated participant participants individual individuals people population more less "
    "other others one two three total overall mean median ratio value values change changes arm arms control controls "
    "cohort cohorts sample samples compared versus respectively first second both all most many only intervention "
    "interventions".split())


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


# --------------------------------------------------------------------------- normalisation


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """A light stemmer for comparing head nouns: plural and common verb/noun suffixes."""
    w = word.lower()
    for suffix in ("ations", "ation", "ments", "ment", "ities", "ity", "ness", "ings", "ing", "ies", "ied",
                   "es", "ed", "s"):
        if len(w) > len(suffix) + 3 and w.endswith(suffix):
            w = w[: -len(suffix)] + ("y" if suffix in ("ies", "ied", "ities") else "")
            break
    return w


def abbreviations(text: str) -> dict[str, frozenset[str]]:
    """``{ABBR: stems of its long form}`` for every "long form (ABBR)" definition in ``text``.

    The long form is the run of words before the parenthesis whose initials spell the abbreviation
    (a simplified Schwartz–Hearst match: as many trailing words as the abbreviation has letters). A trial's
    name ("Survival And Ventricular Enlargement (SAVE) trial") is no abbreviation of what a claim is about:
    a claim naming SAVE does not speak of survival."""
    out: dict[str, frozenset[str]] = {}
    for m in _ABBREV_DEF.finditer(text):
        abbr = m.group(2)
        words = m.group(1).split()
        letters = [c for c in abbr if c.isalpha()]
        long_form = words[-len(letters):] if len(words) >= len(letters) else words
        if long_form and long_form[0][0].lower() == letters[0].lower():
            out[abbr.lower()] = frozenset(stem(w) for w in long_form if w.lower() not in GENERIC_WORDS)
    return out


#: A bracketed statistic ("(OR 0.51, 95% CI 0.34-0.77)", "[AOR], 8.6"): numbers, not what the claim is about.
_BRACKETED = r"(?:[^()\[\]]|[(\[][^()\[\]]*[)\]])*"  # one level of nesting: "(adjusted odds ratio [AOR], 8.6)"
STATISTICS = re.compile(r"[(\[]" + _BRACKETED + r"\d" + _BRACKETED + r"(?:[)\]]|$)")  # or cut off at the phrase end


def stem_sequence(text: str) -> list[str]:
    """Every word of ``text`` stemmed, in order (where ``terms`` keeps a set of the content ones)."""
    return [stem(w.lower()) for w in _WORD_RE.findall(text)]


def terms(text: str, abbrevs: dict[str, frozenset[str]] | None = None) -> frozenset[str]:
    """Content stems of a phrase, with abbreviations defined nearby expanded to their long forms."""
    out: set[str] = set()
    for w in _WORD_RE.findall(STATISTICS.sub(" ", text)):
        low = w.lower()
        if low in GENERIC_WORDS or len(low) < 3 and not w.isupper() or not low[0].isalpha():
            continue
        out.add(stem(low))
        if abbrevs and low in abbrevs:
            out |= abbrevs[low]
    return frozenset(out)


#: A slot that points back into its abstract ("this allele", "these patients") names nothing another claim can share.
_ANAPHORA = re.compile(r"(?:this|these|that|those|such|its|their)\b", re.IGNORECASE)


def names(text: str) -> frozenset[str]:
    """The name-like words of a phrase (a letter and a digit, or two capitals: "IL-6", "G6PD", "ICU"),
    bracketed statistics left out."""
    return frozenset(w.lower() for w in _WORD_RE.findall(STATISTICS.sub(" ", text))
                     if any(c.isdigit() for c in w) and any(c.isalpha() for c in w) or sum(c.isupper() for c in w) >= 2)


# --------------------------------------------------------------------------- extraction


@dataclass(frozen=True)
class _Cue:
    start: int
    end: int
    direction: str
    negated: bool
    neg_start: int
    verbal: bool
    null_word: bool


def _negation_before(text: str, start: int) -> int | None:
    """Start of a negator that governs the cue at ``start`` (same clause, within the window)."""
    window_start = max(0, start - NEGATION_WINDOW)
    window = text[window_start:start]
    last_break = max((m.end() for m in _CLAUSE_BREAK.finditer(window)), default=0)
    hits = [m for m in _NEG_RE.finditer(window) if m.start() >= last_break]
    if not hits:
        return None
    neg = hits[-1]
    between = _WORD_RE.findall(window[neg.end():])
    if _DETERMINER_NEGATOR.fullmatch(neg.group(0)) and any(w.lower() not in _NO_MODIFIERS for w in between):
        return None  # "no restriction were more likely", "absence of BRCA1 may contribute": a noun is negated
    if len(between) > 3 or any(_CANCELS.fullmatch(w) for w in between):
        return None  # "did not negate the beneficial effects": the negator governs the verb, the effect stands
    return window_start + neg.start()


def _is_verbal(text: str, start: int, word: str) -> bool:
    before = text[:start].split()
    prev = before[-1].lower().strip("(,") if before else ""
    if prev in _AUX or " " in word:
        return True
    if not prev or prev in _DETERMINERS:
        return False
    return word.endswith(("s", "ed")) and not word.endswith("ss")


_COPULA = frozenset("is are was were be been being remained remains remain appeared appears seemed seems became "  # noqa: SIM905 (a word list reads best as words)
                    "become proved".split())
_NULL_COMPLEMENT = re.compile(r"\s*(?:to|of|from|between|with|in|across|among|for|regardless)\b", re.IGNORECASE)


def _predicative(text: str, start: int, end: int) -> bool:
    """A null word used as the finding: after a copula ("were similar") or before its complement
    ("independent of age", "similar to placebo")."""
    before = [w.lower() for w in _WORD_RE.findall(text[max(0, start - 40):start])][-3:]
    return any(w in _COPULA for w in before) or _NULL_COMPLEMENT.match(text, end) is not None


def _cues(text: str) -> list[_Cue]:
    out = []
    for m in _CUE_RE.finditer(text):
        index = next(i for i, v in enumerate(m.groups()) if v is not None)
        direction = _CUE_DIRECTIONS[index]
        null_word = index >= _N_EFFECT
        if null_word and " " not in m.group(0) and not _predicative(text, m.start(), m.end()):
            continue  # "independent mutations", "identical twins": an adjective, not a finding
        neg = _negation_before(text, m.start())
        word = m.group(0).lower()
        if neg is not None and not null_word:
            direction = NULL_OF[direction]
        elif neg is not None and null_word:  # "not similar", "not independent": the effect is affirmed
            direction = {NO_DIFFERENCE: DIFFERENCE, NO_ASSOCIATION: ASSOCIATION, NO_EFFECT: INCREASE}[direction]
        out.append(_Cue(m.start(), m.end(), direction, neg is not None, neg if neg is not None else m.start(),
                        _is_verbal(text, m.start(), word), null_word))
    return _with_changes_caused(text, out)


#: Verbs whose object is the change they bring about ("resulted in a decrease in Y", "led to improved Y").
_CAUSATIVE = re.compile(r"leads? to|led to|leading to|results? in|resulted in|resulting in|caus(?:e|es|ed|ing)"
                        r"|produc(?:e|es|ed)|induc(?:e|es|ed)|elicit(?:s|ed)?|trigger(?:s|ed)?", re.IGNORECASE)
#: Up to three words that may stand between such a verb and the change it names ("a significant dose-dependent").
_CHANGE_MODIFIERS = re.compile(r"(?:\s+(?:an?|the|no|any|\w+ly|[\w-]+(?:al|ant|ent|ive|ous|ic|er|ed)|mild|modest"
                               r"|small|large|slight|marked|great|dose-dependent|further|overall|net)){0,3}\s+$",
                               re.IGNORECASE)


def _with_changes_caused(text: str, found: list[_Cue]) -> list[_Cue]:
    """A causative verb followed by the change it brings about is one finding with the change's direction
    ("resulted in a decrease in HbA1c" is a decrease of HbA1c, "did not lead to a reduction" no effect); the
    text after the change is the outcome. Other cues are kept as they are."""
    out: list[_Cue] = []
    skip = -1
    for i, cue in enumerate(found):
        if i == skip:
            continue
        change = found[i + 1] if i + 1 < len(found) else None
        if (change is not None and change.direction in (INCREASE, DECREASE, NO_EFFECT, NO_ASSOCIATION)
                and _CAUSATIVE.fullmatch(text[cue.start:cue.end])
                and _CHANGE_MODIFIERS.fullmatch(" " + text[cue.end:change.neg_start if change.negated else change.start])):
            direction = NULL_OF.get(change.direction, change.direction) if cue.negated else change.direction
            out.append(_Cue(cue.start, change.end, direction, cue.negated or change.negated, cue.neg_start, True,
                            change.null_word))
            skip = i + 1
        else:
            out.append(cue)
    return out


def finding_cue_starts(text: str) -> list[int]:
    """Where each finding cue word of ``text`` begins (effect, association, difference and null words)."""
    return [m.start() for m in _CUE_RE.finditer(text)]


#: Adjectives that state a finding about their subject without an object ("X is safe", "Y was not useful").
_EVALUATIVE = re.compile(r"safe|effective|efficacious|useful|feasible|accurate|reliable|beneficial|important|"
                         r"necessary|sufficient|essential|valuable|helpful|superior|inferior|ineffective|"
                         r"successful|critical|crucial", re.IGNORECASE)


def _main_cue(found: list[_Cue]) -> _Cue | None:
    """Null findings first, then verb-like cues, then the first cue (see the module docstring)."""
    if not found:
        return None
    nulls = [c for c in found if c.direction in NULL_DIRECTIONS]
    if nulls:
        return nulls[0]
    verbal = [c for c in found if c.verbal]
    later = [c for c in found if c.start > 0]  # "Increased X improves Y": the opening adjective is not it
    return (verbal or later or found)[0]


#: Words that state a comparison's verdict as a result ("superior to placebo", "better tolerated").
_VERDICT = re.compile(r"\b(?:superior|inferior|better|worse|more effective|less effective)\b", re.IGNORECASE)


#: A comparison put in words, "a reduced incidence of cough versus ACE inhibitors", "greater with A than B",
#: "slightly lower in the placebo group":
#: alone it states no test, but beside a null it makes the sentence a mixed result.
_COMPARISON = re.compile(
    r"\b(?:greater|more|less|fewer|higher|lower|reduced|increased|improved|faster|better|worse)\b"
    r"(?:(?:[^.;:]|\.\s?\d){0,90}?\b(?:than|versus|vs\.?|compared (?:with|to)|relative to)\b"
    r"|\s+(?:in|with|among|on)\s+(?:the\s+)?(?:[\w-]+\s+){0,2}(?:groups?|arms?)\b)", re.IGNORECASE)
#: Words before a comparison that make it the null itself ("non-significantly greater than", "similarly reduced").
_COMPARISON_QUALIFIED = re.compile(
    r"(?:non-?significant(?:ly)?|not significantly|numerically|\bno|\bnot|similar(?:ly)?|comparabl[ey])"
    r"\W+(?:\w+\W+)?$", re.IGNORECASE)
#: A null test stated of the comparison just made ("lower than on enalapril, but this difference was not significant");
#: not one of part of it ("reduced risks …, although some of these findings did not reach significance").
_NULL_AFTER = re.compile(
    r"^(?:[^.;]|\.\d){0,120}?\b(?<!some of these findings )(?<!some of these )(?<!some of them )(?<!some )"
    r"(?:not (?:statistically )?significant|did not reach|no significant)", re.IGNORECASE)
#: A null between subgroups or against healthy people, not between the arms of a trial: "no heterogeneity
#: between these groups", "rates not different from those observed in patients with low levels",
#: "no difference between the younger and the elderly", "a relative benefit similar in the presence or absence
#: of heart failure", "did not modify these relations", "no differences with normal children", "no increase from
#: the profile previously reported"; nor is a reason for withdrawal ("withdrew due to lack of efficacy").
_SUBGROUP_NULL = re.compile(
    r"heterogeneity|\binteraction\b|\b(?:between|across|among) (?:the )?subgroups|\b(?:these|both|two|2) subgroups\b"
    r"|from those (?:observed |seen )?in\b"
    r"|\bwith (?:and|or) without\b|\bpresence (?:and|or) absence of\b|\bbetween (?:the )?(?:ethnic|racial|age|sex) groups"
    r"|\bbetween (?:the )?(?:young(?:er)?|old(?:er)?|elderly|men|women|males?|females?|boys|girls) and\b"
    r"|\b(?:modif|alter|influenc|affect)\w* (?:these|this|the) (?:relations?|relationships?|associations?)\b"
    r"|\b(?:polymorphisms?|genotypes?|alleles?)\b|\bpreviously reported\b|\bhistorical controls?\b"
    r"|\b(?:due to|because of|for) (?:a )?lack of\b"
    r"|\b(?:normal|healthy) (?:children|subjects|controls|volunteers|individuals|people)", re.IGNORECASE)


#: An effect not yet studied ("effects of quinapril on survival have not been determined"): no result, not a null.
_UNSTUDIED = re.compile(r"\bnot (?:yet |been )*(?:determined|established|known|studied|investigated|evaluated)\b",
                        re.IGNORECASE)


#: A contrast with another arm ("unlike captopril, is not associated with dry cough"), or a difference set against
#: the null ("no benefits in efficacy, but they still caused fewer extrapyramidal side effects", "similar …, but
#: with a greater incidence of oedema with amlodipine"): the null is of one arm or one outcome.
_CONTRAST = re.compile(r"\bunlike\b|\b(?:but|yet)\b(?:\s+[\w-]+){0,3}?\s+(?:still\s+)?(?:caused|had|showed|produced|"
                     r"resulted in|led to|with)\s+(?:a\s+)?(?:significantly\s+)?"
                     r"(?:fewer|less|lower|more|higher|greater|better)\b", re.IGNORECASE)


def _unqualified_comparison(text: str) -> bool:
    """Whether a comparison in words (``_COMPARISON``, or a contrast, ``_CONTRAST``) states a difference: not
    qualified as the null itself and not followed by a null test of it."""
    return bool(_CONTRAST.search(text)) or any(
        not _COMPARISON_QUALIFIED.search(text[max(0, m.start() - 40):m.start()])
        and not _NULL_AFTER.search(text[m.end():]) for m in _COMPARISON.finditer(text))


#: Verbs of a group's change from its own start ("fell from 145 to 128"), as a pattern fragment.
CHANGE_FROM = r"(?:reduced|decreased|fell|dropped|increased|rose)"
#: A test against the group's own start ("P = 0.0001 vs baseline"), and words that set one arm against another.
VS_BASELINE = re.compile(r"\b(?:vs\.?|versus|from|compared (?:with|to)|relative to|over) (?:the )?(?:baseline\b|basal "
                         r"(?:values?|levels?)\b|pre-?treatment (?:values?|levels?)\b)"
                         rf"|\b{CHANGE_FROM} from \d[\d./]*[^.;]{{0,15}}? to \d", re.IGNORECASE)
_BETWEEN_ARMS = re.compile(r"\bthan\b|\bplacebo\b|\bbetween (?:the )?(?:two |treatment )?groups\b", re.IGNORECASE)


#: A trend short of significance ("a trend toward less fatal MI").
_TREND = re.compile(r"\btrends? (?:toward|towards|to|for|in)\b", re.IGNORECASE)


#: An equivalence put as a noun phrase ("with a similar reduction in blood pressure", "to a similar extent as",
#: "an almost identical fall (p < 0.001) in blood pressure"): beside an effect, a null between the arms that makes
#: the result mixed. Alone it is no null: "a similar mortality benefit in severe heart failure" repeats an effect.
_EQUIVALENT_CHANGE = re.compile(
    r"\b(?:similar|identical|comparable|equal|equivalent|same)\s+(?:reductions?|decreases?|falls?|drops?|declines?"
    r"|changes?|improvements?|effects?|efficacy|extent|degree|lowering)(?:\s*\([^)]*\))?\s+(?:in|of|to|as)\b",
    re.IGNORECASE)


def stated_tests(text: str) -> tuple[bool, bool]:
    """What a sentence's own words say its results are: (an effect — a significant test or a verdict word not
    negated, "p < 0.05", "superior to placebo"; a null — a non-significant test, "P = 0.47", or a negated or
    null finding cue, "did not differ", "similar to placebo", or a trend). Both when it reports a mixed result, a
    null beside a difference put in words included ("similar to placebo and a reduced incidence of cough versus
    ACE inhibitors", "prevents more events for a similar reduction in blood pressure"); neither when it sets
    numbers side by side with no test ("46% vs 52%"), claims a change without one, or its null compares subgroups
    or healthy people rather than arms (``_SUBGROUP_NULL``) or says the effect is not yet studied
    (``_UNSTUDIED``). A test against baseline alone ("both P = 0.0001 vs baseline") is a change within each
    group, no effect."""
    negative = [m.span() for m in _SIG_NEG.finditer(text)]
    effect = any(not any(lo <= m.start() < hi for lo, hi in negative) and _negation_before(text, m.start()) is None
                 for m in (*_SIG_POS.finditer(text), *_VERDICT.finditer(text)))  # "did not differ significantly": no
    null = bool(negative) or bool(_TREND.search(text)) or any(c.direction in NULL_DIRECTIONS for c in _cues(text))
    if null and (_SUBGROUP_NULL.search(text) or _UNSTUDIED.search(text)):
        null = False
    if effect and VS_BASELINE.search(text) and not _BETWEEN_ARMS.search(text):
        effect = False  # a change within each group, not a difference between the arms
    if null and not effect and _unqualified_comparison(text):
        effect = True
    if _EQUIVALENT_CHANGE.search(text) and (effect or _unqualified_comparison(text)):
        effect = null = True
    return effect, null


def _significance(text: str) -> str | None:
    if _SIG_NEG.search(text):
        return NOT_SIGNIFICANT
    if _SIG_POS.search(text):
        return SIGNIFICANT
    return None


def _span(text: str, start: int, end: int) -> Span | None:
    """The stripped sub-span ``text[start:end]`` (None when it holds no word)."""
    chunk = text[start:end]
    lead = len(chunk) - len(chunk.lstrip(" ,;:.()"))
    chunk = chunk.strip(" ,;:.()")
    if not _WORD_RE.search(chunk):
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
_EMPTY_SUBJECT = (_DETERMINERS | _NO_MODIFIERS | _AUX | _REPORTERS
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
        own = [w.lower() for w in _WORD_RE.findall(m.group(0))[:-1]]
        if own and any(w not in _REPORTERS and w not in GENERIC_WORDS for w in own[len(_opener_words(m.group(0))):]):
            start = 0
    opener = _OPENER.match(subject, start)
    return opener.end() if opener and opener.end() < len(subject.rstrip()) else start


def _opener_words(text: str) -> list[str]:
    opener = _OPENER.match(text)
    return _WORD_RE.findall(opener.group(0)) if opener else []


def _empty_subject(words: str) -> bool:
    return all(w.lower() in _EMPTY_SUBJECT for w in _WORD_RE.findall(words))


_ADVERBS = re.compile(r"(?:(?:" + "|".join(sorted(_NO_MODIFIERS)) + r"|\w+ly)\s+)+(?=(?:in|between)\s)",
                      re.IGNORECASE)


def _sides(text: str, cue: _Cue) -> tuple[Span | None, Span | None]:
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
    found = _cues(text)
    cue = _main_cue(found)
    significance = _significance(text)
    context = _context(text)
    words = _words_outside(text, context)
    if cue is None:
        negated = _NEG_RE.search(text) is not None
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
    kept = [(s, e) for s, e in pieces_between(_CLAUSE_SPLIT, text, start, end) if len(_WORD_RE.findall(text[s:e])) >= 4]
    return kept or [(start, end)]


def _words_outside(text: str, context: tuple[ContextSlot, ...]) -> frozenset[str]:
    """Lower-cased words of the claim outside its context phrases (those are compared as context)."""
    return frozenset(m.group(0).lower() for m in _WORD_RE.finditer(text)
                     if not any(s.span.start <= m.start() < s.span.end for s in context))


#: Opposed-term groups that say which way a finding goes (frequency, size, timing or sameness words
#: describe the data, not the finding's direction).
FINDING_GROUPS = frozenset({"effect", "valence", "necessity", "sign", "sensitivity"})


def _polar(words: frozenset[str]) -> frozenset[tuple[str, int]]:
    return frozenset(hit for hit in map(cues.term_polarity, words) if hit and hit[0] in FINDING_GROUPS)


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
