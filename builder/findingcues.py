"""Finding cues: the words that state a claim's finding, with their negation (the frames' first pass).

Every finding cue (an effect verb, an association or difference word, an explicit null word such as "similar" or
"unrelated") is found with its negation (a negator within a few words before it: "did not reduce", "no significant
difference", "failed to improve"). How the main finding is chosen: a null finding wins over an effect (a claim that
reports an absence is about that absence); otherwise a verb-like cue (after an auxiliary, or inflected and not after
a determiner) wins over an adjective in the subject ("increased LDL receptors play a role …"), then any cue after the
sentence's first word, then the first cue.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from biodivergence_dataset import ontology

from .frameterms import WORD_RE

INCREASE, DECREASE, NO_EFFECT, ASSOCIATION, NO_ASSOCIATION, DIFFERENCE, NO_DIFFERENCE = ontology.FINDING_DIRECTIONS
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
AUXILIARIES = frozenset("is are was were be been being has have had may might can could will would does did do shall "  # noqa: SIM905 (a word list reads best as words)
                 "should must also further significantly markedly strongly substantially".split())
DETERMINERS = frozenset("a an the of with in for by on to this that these those its their his her".split())  # noqa: SIM905 (a word list reads best as words)
_CUE_RE = re.compile(
    r"(?<![\w-])(?:" + "|".join(f"(?P<c{i}>{p})" for i, (p, _) in enumerate(_CUE_WORDS + _NULL_WORDS))
    + r")(?![\w-])", re.IGNORECASE)
_CUE_DIRECTIONS = tuple(d for _, d in _CUE_WORDS + _NULL_WORDS)
_N_EFFECT = len(_CUE_WORDS)
NEGATOR_RE = re.compile(r"(?<![\w-])(?:" + _NEGATORS + r")(?![\w-])", re.IGNORECASE)
#: Negators that negate the noun after them; they negate a finding only when that noun is the finding
#: ("no association", "lack of effect", "absence of a significant difference").
_DETERMINER_NEGATOR = re.compile(r"no|lack(?:s|ed)? of|absence of|none of", re.IGNORECASE)
#: Words that may stand between "no" and the finding it negates ("no statistically significant difference").
NO_MODIFIERS = frozenset("significant significantly statistically clear clearly clear-cut evidence of any overall "  # noqa: SIM905 (a word list reads best as words)
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


@dataclass(frozen=True)
class Cue:
    start: int
    end: int
    direction: str
    negated: bool
    neg_start: int
    verbal: bool
    null_word: bool


def negation_before(text: str, start: int) -> int | None:
    """Start of a negator that governs the cue at ``start`` (same clause, within the window)."""
    window_start = max(0, start - NEGATION_WINDOW)
    window = text[window_start:start]
    last_break = max((m.end() for m in _CLAUSE_BREAK.finditer(window)), default=0)
    hits = [m for m in NEGATOR_RE.finditer(window) if m.start() >= last_break]
    if not hits:
        return None
    neg = hits[-1]
    between = WORD_RE.findall(window[neg.end():])
    if _DETERMINER_NEGATOR.fullmatch(neg.group(0)) and any(w.lower() not in NO_MODIFIERS for w in between):
        return None  # "no restriction were more likely", "absence of BRCA1 may contribute": a noun is negated
    if len(between) > 3 or any(_CANCELS.fullmatch(w) for w in between):
        return None  # "did not negate the beneficial effects": the negator governs the verb, the effect stands
    return window_start + neg.start()


def _is_verbal(text: str, start: int, word: str) -> bool:
    before = text[:start].split()
    prev = before[-1].lower().strip("(,") if before else ""
    if prev in AUXILIARIES or " " in word:
        return True
    if not prev or prev in DETERMINERS:
        return False
    return word.endswith(("s", "ed")) and not word.endswith("ss")


_COPULA = frozenset("is are was were be been being remained remains remain appeared appears seemed seems became "  # noqa: SIM905 (a word list reads best as words)
                    "become proved".split())
_NULL_COMPLEMENT = re.compile(r"\s*(?:to|of|from|between|with|in|across|among|for|regardless)\b", re.IGNORECASE)


def _predicative(text: str, start: int, end: int) -> bool:
    """A null word used as the finding: after a copula ("were similar") or before its complement
    ("independent of age", "similar to placebo")."""
    before = [w.lower() for w in WORD_RE.findall(text[max(0, start - 40):start])][-3:]
    return any(w in _COPULA for w in before) or _NULL_COMPLEMENT.match(text, end) is not None


def finding_cues(text: str) -> list[Cue]:
    out = []
    for m in _CUE_RE.finditer(text):
        index = next(i for i, v in enumerate(m.groups()) if v is not None)
        direction = _CUE_DIRECTIONS[index]
        null_word = index >= _N_EFFECT
        if null_word and " " not in m.group(0) and not _predicative(text, m.start(), m.end()):
            continue  # "independent mutations", "identical twins": an adjective, not a finding
        neg = negation_before(text, m.start())
        word = m.group(0).lower()
        if neg is not None and not null_word:
            direction = NULL_OF[direction]
        elif neg is not None and null_word:  # "not similar", "not independent": the effect is affirmed
            direction = {NO_DIFFERENCE: DIFFERENCE, NO_ASSOCIATION: ASSOCIATION, NO_EFFECT: INCREASE}[direction]
        out.append(Cue(m.start(), m.end(), direction, neg is not None, neg if neg is not None else m.start(),
                        _is_verbal(text, m.start(), word), null_word))
    return _with_changes_caused(text, out)


#: Verbs whose object is the change they bring about ("resulted in a decrease in Y", "led to improved Y").
_CAUSATIVE = re.compile(r"leads? to|led to|leading to|results? in|resulted in|resulting in|caus(?:e|es|ed|ing)"
                        r"|produc(?:e|es|ed)|induc(?:e|es|ed)|elicit(?:s|ed)?|trigger(?:s|ed)?", re.IGNORECASE)
#: Up to three words that may stand between such a verb and the change it names ("a significant dose-dependent").
_CHANGE_MODIFIERS = re.compile(r"(?:\s+(?:an?|the|no|any|\w+ly|[\w-]+(?:al|ant|ent|ive|ous|ic|er|ed)|mild|modest"
                               r"|small|large|slight|marked|great|dose-dependent|further|overall|net)){0,3}\s+$",
                               re.IGNORECASE)


def _with_changes_caused(text: str, found: list[Cue]) -> list[Cue]:
    """A causative verb followed by the change it brings about is one finding with the change's direction
    ("resulted in a decrease in HbA1c" is a decrease of HbA1c, "did not lead to a reduction" no effect); the
    text after the change is the outcome. Other cues are kept as they are."""
    out: list[Cue] = []
    skip = -1
    for i, cue in enumerate(found):
        if i == skip:
            continue
        change = found[i + 1] if i + 1 < len(found) else None
        if (change is not None and change.direction in (INCREASE, DECREASE, NO_EFFECT, NO_ASSOCIATION)
                and _CAUSATIVE.fullmatch(text[cue.start:cue.end])
                and _CHANGE_MODIFIERS.fullmatch(" " + text[cue.end:change.neg_start if change.negated else change.start])):
            direction = NULL_OF.get(change.direction, change.direction) if cue.negated else change.direction
            out.append(Cue(cue.start, change.end, direction, cue.negated or change.negated, cue.neg_start, True,
                            change.null_word))
            skip = i + 1
        else:
            out.append(cue)
    return out


def finding_cue_starts(text: str) -> list[int]:
    """Where each finding cue word of ``text`` begins (effect, association, difference and null words)."""
    return [m.start() for m in _CUE_RE.finditer(text)]


def main_cue(found: list[Cue]) -> Cue | None:
    """Null findings first, then verb-like cues, then the first cue (see the module docstring)."""
    if not found:
        return None
    nulls = [c for c in found if c.direction in NULL_DIRECTIONS]
    if nulls:
        return nulls[0]
    verbal = [c for c in found if c.verbal]
    later = [c for c in found if c.start > 0]  # "Increased X improves Y": the opening adjective is not it
    return (verbal or later or found)[0]
