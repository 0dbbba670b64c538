"""Stated significance and stated tests: what a sentence's own words say its results are.

``stated_significance`` reads a claim's significance words ("not significant", "p < 0.05"); ``stated_tests`` reads
whether a sentence reports an effect, a null or both (a mixed result), telling a test between the arms from a
change against baseline, a null between subgroups or an effect not yet studied.
"""

from __future__ import annotations

import re

from biodivergence_dataset import ontology

from .findingcues import NULL_DIRECTIONS, finding_cues, negation_before

SIGNIFICANT, NOT_SIGNIFICANT = ontology.SIGNIFICANCE_VALUES
_SIG_NEG = re.compile(
    r"\b(?:not (?:statistically )?significant(?:ly)?|non-?significant(?:ly)?|insignificant(?:ly)?"
    r"|did not reach (?:statistical )?significance|no (?:statistically )?significant|n\.s\.)"
    r"|\bp\s*(?:>|≥|=)\s*0?\.(?:0[5-9]|[1-9])\d*", re.IGNORECASE)
_SIG_POS = re.compile(r"\b(?:statistically )?significant(?:ly)?\b|\bp\s*(?:<|≤|=)\s*0?\.0(?:[0-4]\d*|50*)\b",
                      re.IGNORECASE)


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
    effect = any(not any(lo <= m.start() < hi for lo, hi in negative) and negation_before(text, m.start()) is None
                 for m in (*_SIG_POS.finditer(text), *_VERDICT.finditer(text)))  # "did not differ significantly": no
    null = bool(negative) or bool(_TREND.search(text)) or any(c.direction in NULL_DIRECTIONS for c in finding_cues(text))
    if null and (_SUBGROUP_NULL.search(text) or _UNSTUDIED.search(text)):
        null = False
    if effect and VS_BASELINE.search(text) and not _BETWEEN_ARMS.search(text):
        effect = False  # a change within each group, not a difference between the arms
    if null and not effect and _unqualified_comparison(text):
        effect = True
    if _EQUIVALENT_CHANGE.search(text) and (effect or _unqualified_comparison(text)):
        effect = null = True
    return effect, null


def stated_significance(text: str) -> str | None:
    if _SIG_NEG.search(text):
        return NOT_SIGNIFICANT
    if _SIG_POS.search(text):
        return SIGNIFICANT
    return None
