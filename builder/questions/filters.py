"""What a sentence states besides a comparison of arms, in any field of medicine: the general filters a
claim passes before it may answer a question (baseline characteristics, correlations, interactions, mediation:
:data:`GENERAL_FILTERS`, each a drop reason), how many doses it names, whether its comparison is another than the
question's (:func:`other_comparison`), and the content words a claim is matched by (:func:`claim_words`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from ..frameterms import abbreviations
from .compiled import DOSE, DOSE_LEVEL, NAMED, OTHER, PLACEBO_STEMS, CompiledQuestion, named_drugs
from .lexicon import Alternative, load_lexicon, terms

#: A sentence about the groups before treatment ("no difference in baseline characteristics", "proteinuria
#: before treatment was higher in the nonresponders", "no significant differences in age, functional class …
#: or survival") reports no finding of the intervention.
_BASELINE = re.compile(r"\bbaseline (?:characteristics|demographics?|data|variables|features)\b"
                       r"|\b(?:before|prior to) (?:treatment|therapy|randomi[sz]ation|the start)\b"
                       r"|\bat (?:study )?(?:entry|enrol?ment|randomi[sz]ation)\b"
                       r"|\bdifferences? (?:\w+ ){0,3}in (?:terms of )?age\b", re.IGNORECASE)


def reports_baseline(sentence: str) -> bool:
    """Whether a sentence describes the groups before treatment (it then answers no question)."""
    return _BASELINE.search(sentence) is not None


#: A correlation between measures ("survival correlated significantly with age", "r = 0.47", "r-values from 0.15").
_R_VALUE = re.compile(r"\br\s*=\s*[-\u2212]?0?\.\d|\br-values?\b", re.IGNORECASE)


_CORRELATION = re.compile(rf"\bcorrelat\w*|{_R_VALUE.pattern}|\brelationship between\b", re.IGNORECASE)


#: Words that put a reference arm beside a finding ("than", "versus", "placebo"): a comparison, not a correlation.
_ARMS_SET_AGAINST = re.compile(r"\bthan\b|\bcompared\b|\bversus\b|\bvs\b|\bplacebo\b", re.IGNORECASE)


def reports_correlation(sentence: str) -> bool:
    """Whether a sentence's finding is a correlation between measures, with no arm set against another: "the
    survival of patients who took captopril correlated significantly with age" says nothing of whether captopril
    reduces mortality (it then answers no question). A stated coefficient ("r = 0.28") is a correlation even beside
    an arm ("… correlated with bone density (r = 0.28) in the HRT but not in the placebo group")."""
    return _R_VALUE.search(sentence) is not None or (_CORRELATION.search(sentence) is not None
                                                     and _ARMS_SET_AGAINST.search(sentence) is None)


#: An effect set against itself across subgroups of patients ("the effect of enalapril on mortality … was
#: significantly greater for patients with the lowest ejection fraction", "mortality rate was comparable in
#: these 2 subgroups"), not the intervention against its comparator ("greater in patients receiving risperidone
#: than in those receiving placebo" is the arms).
_INTERACTION = re.compile(
    r"\b(?:effects?|benefits?|reductions?)\b[^.;]{0,80}?\b(?:was|were|is|are|appeared|seemed)\s+(?:\w+\s+)?"
    r"(?:greater|larger|smaller|stronger|weaker|(?:more|less)\s+(?:pronounced|marked))\s+(?:for|in|among)\s+"
    r"(?:the\s+)?(?:patients|subjects|participants|those|women|men|subgroups?)\b"
    r"(?!\s+(?:receiving|treated|taking|given|on|randomi[sz]ed|assigned|allocated|who\s+(?:received|took)))"
    r"|\b(?:comparable|similar|different)\s+(?:in|between|across)\s+(?:these|the|both)\s+(?:two\s+|2\s+)?"
    r"subgroups\b"
    # patients set against patients with another condition, not against another arm: "68% of patients with a
    # menstrually associated migraine had pain relief compared with 69% of 393 patients with nonmenstrual attacks"
    # ("more than 80% of patients with" counts patients: a share after "than" is no reference)
    r"|\b(?:(?:compared\s+(?:with|to)|versus|vs\.?)\s+(?:[\d.]+\s*%\s+(?:of\s+)?)?|than\s+(?:in\s+)?)(?:the\s+)?"
    r"(?:\d+\s+)?(?:patients|subjects|participants|those|women|men|children)\s+(?:with|without|who\s+had)\b"
    # people of one kind set against people of another: "older women … gained more bone than younger women"
    r"|\bthan\s+(?:in\s+)?(?:the\s+)?(?:younger|older|elderly|obese|non-?obese|lean|white|black|male|female|"
    r"premenopausal|postmenopausal|healthy|normotensive|hypertensive|diabetic|non-?diabetic)\s+"
    r"(?:patients|subjects|participants|women|men|children|adults|people|individuals)\b",
    re.IGNORECASE)


def reports_interaction(sentence: str) -> bool:
    """Whether a sentence's finding is how the effect differs between subgroups of patients (it then answers no
    question: that enalapril's effect was greater at the lowest ejection fractions is no finding against
    placebo, and the reader reads "greater" as an increase)."""
    return _INTERACTION.search(sentence) is not None


#: A mediation or path analysis ("(indirect effect)", "the path analysis indicated", "structural equation
#: modeling"): its finding is what an effect runs through, not whether the arms differ on the outcome.
_MEDIATION = re.compile(r"\bindirect effects?\b|\bmediation (?:analys[ie]s|models?)\b|\bpath analys[ie]s\b"
                        r"|\bstructural equation model", re.IGNORECASE)


def reports_mediation(sentence: str) -> bool:
    """Whether a sentence's finding comes from a mediation or path analysis (``_MEDIATION``): "improvement in
    extrapyramidal symptoms was associated with mood improvement (indirect effect)" does not say whether
    olanzapine causes fewer extrapyramidal symptoms than haloperidol."""
    return _MEDIATION.search(sentence) is not None


def reports_no_comparison(sentence: str) -> bool:
    """Whether a sentence is about baseline groups, a correlation, subgroups' effects or a mediation analysis: it
    answers no question."""
    return (reports_baseline(sentence) or reports_correlation(sentence) or reports_interaction(sentence)
            or reports_mediation(sentence))


#: Doses counted in words ("all three doses of", "both doses"): two or more.
_SEVERAL_DOSES = re.compile(r"\b(?:two|three|four|both|all|different)\s+(?:\w+\s+)?dos(?:es|ages)\b", re.IGNORECASE)


def doses(sentence: str) -> int:
    """How many distinct doses a sentence names: amounts ("10 mg"), two levels or more ("standard and high
    doses"; one level, "high-dose", is the same dose as the amount beside it), or doses counted in words ("all
    three doses": two at least)."""
    levels = {m.lower() for m in DOSE_LEVEL.findall(sentence)}
    several = 2 if _SEVERAL_DOSES.search(sentence) else 0
    return max(len(set(DOSE.findall(sentence))) + (len(levels) if len(levels) >= 2 else 0), several)


def other_comparison(words: frozenset[str], q: CompiledQuestion, comparator: Alternative | None, n_doses: int = 0
                     ) -> str | None:
    """Why a claim that names the question's intervention and outcome compares something else, or None.

    A NAMED comparator must be named; "other …" drugs need another drug named; a question without an active
    comparator (placebo, control, none) is not answered by a head-to-head claim — another active drug, two
    member drugs of the asked class, or two doses (``n_doses``) named without a placebo arm."""
    if q.comparison == NAMED:
        return None if comparator is not None else "comparator not named"
    members, names = named_drugs(words, q)
    asked = {a.stems for a in q.intervention}
    others = names - asked
    if q.comparison == OTHER:
        return None if comparator is not None or others else "no other drug named"
    if words & PLACEBO_STEMS:
        return None
    if others:
        return "another active comparator"
    if len(members & asked) >= 2:
        return "two drugs of the class compared"
    return "two doses compared" if n_doses >= 2 else None


#: Where a sentence names measures as covariates, not as its finding ("when changes in LV mass, blood pressure, and
#: heart rate were also included in multivariate analyses", "adjusted for blood pressure").
_COVARIATES = re.compile(r"\b(?:when|after|with)\b[^.;]{0,160}?\b(?:were|was)\s+(?:also\s+)?(?:included|entered|added)"
                         r"\s+(?:in|into|to)\b[^.;,]*|\b(?:adjust\w*|controll?\w*|correct\w*)\s+for\b[^.;,)]*",
                         re.IGNORECASE)


@lru_cache(maxsize=1)
def _measures_named_by_outcomes() -> re.Pattern | None:
    """The clinical lexicon's ``measures_named_by_outcomes`` (a bleeding time measures platelet function, not
    bleeding), each phrase matched whole, its words apart by any space, plural or not; None when it lists none."""
    phrases = load_lexicon().measures_named_by_outcomes
    if not phrases:
        return None
    alternatives = (r"\s+".join(map(re.escape, phrase.split())) + "s?" for phrase in phrases)
    return re.compile(r"\b(?:" + "|".join(alternatives) + r")\b", re.IGNORECASE)


def without_non_findings(sentence: str) -> str:
    """A sentence without what names a measure but is no finding of it: clauses that name measures as covariates
    ("the decreases in QT dispersion were greater with irbesartan; the same results were found when changes in
    blood pressure were included in multivariate analyses" says nothing of blood pressure as a finding), and
    measures named by an outcome's word, listed in the clinical lexicon ("bleeding times were less prolonged with
    meloxicam" says nothing of gastrointestinal bleeding)."""
    sentence = _COVARIATES.sub(" ", sentence)
    measures = _measures_named_by_outcomes()
    return measures.sub(" ", sentence) if measures else sentence


@lru_cache(maxsize=1024)
def expansions(context: str) -> dict[str, frozenset[str]] | None:
    """The abbreviations a text defines (``frameterms.abbreviations``; None without a bracket), read once for a claim
    and its abstract however many of its readings ask (its words, its role clause's, its arm names')."""
    return abbreviations(context) if "(" in context else None


def unhyphenated(stems: frozenset[str]) -> frozenset[str]:
    """Each hyphenated stem also as one word ("pre-eclampsia": preeclampsia), as a question or abstract may spell
    it; stems without a hyphen are left as they are."""
    joined = {s.replace("-", "") for s in stems if "-" in s}
    return stems | joined if joined else stems


def content_words(text: str, context: str) -> frozenset[str]:
    return unhyphenated(terms(text, expansions(context)))


def claim_words(sentence: str, abstract: str = "") -> frozenset[str]:
    """A claim's content stems, abbreviations defined in its abstract (or itself) expanded, measures it names only
    as covariates or tests named by an outcome's word left out (``without_non_findings``)."""
    return content_words(without_non_findings(sentence), f"{abstract} {sentence}")


#: The filters a claim passes before the learned assigner asks about it: statements that compare no arms, in any
#: field (each a drop reason in the stage's stats).
GENERAL_FILTERS: tuple[tuple[str, Callable[[str], bool]], ...] = (
    ("baseline", reports_baseline), ("correlation", reports_correlation), ("interaction", reports_interaction),
    ("mediation", reports_mediation))
