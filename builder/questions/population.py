"""Who a claim is about: whether its abstract studied the question's population
(:func:`studied_population`), names it only as absent (:func:`excluded_population`) or names only the population
of a rival question of the same comparison (:func:`rival_population`).
"""

from __future__ import annotations

import re

from ..frameterms import WORD_RE
from .compiled import CompiledQuestion
from .lexicon import best_match, stem


def studied_population(q: CompiledQuestion, article: frozenset[str]) -> bool:
    """Whether an article (the content stems of a claim and its abstract) names the question's population, or
    the question names none: a trial of heart failure does not answer a question asked after myocardial
    infarction, nor one of primary renal disease a question in diabetes. The abstract is read, not the claim,
    because a result sentence seldom repeats who was studied."""
    return not q.population or best_match(article, q.population)[1] is not None


#: What says a population is absent: "without diabetes", "no evidence of diabetes mellitus", "free of ...",
#: "non-diabetic".
_NOT_IN_POPULATION = re.compile(r"(?:\b(?:without|free of|absence of|no (?:evidence|history|sign|signs) of)\s+(?:any\s+)?"
                                r"|\bnon-?)$", re.IGNORECASE)


#: "with and without diabetes": both sides of the population, not its absence.
_WITH_AND_WITHOUT = re.compile(r"\bwith\s+(?:and|or)\s+without\s+(?:any\s+)?$", re.IGNORECASE)


def excluded_population(sentence: str, q: CompiledQuestion) -> bool:
    """Whether a claim names the question's population only to say its patients are outside it: "in hypertensive
    patients with no evidence of diabetes mellitus, quinapril reduced microalbuminuria" does not answer a question
    asked in diabetes, whatever its abstract says of diabetes."""
    stems = q.population_stems
    # (match, whether the word itself negates the population: "nondiabetic", "non-diabetic")
    mentions = [(m, stem(w) not in stems) for m in WORD_RE.finditer(sentence)
                if stem(w := m.group().lower()) in stems or (w.startswith("non") and stem(w[3:].lstrip("-")) in stems)]
    # a phrase of several population words ("diabetes mellitus") is one mention, negated before its first word
    heads = [(m, prefixed) for i, (m, prefixed) in enumerate(mentions)
             if i == 0 or sentence[mentions[i - 1][0].end():m.start()].strip(" -")]
    return bool(heads) and all(prefixed or _absent(sentence[max(0, m.start() - 40):m.start()]) for m, prefixed in heads)


def _absent(before: str) -> bool:
    """Whether the words before a population mention say it is absent ("without"), not "with and without"."""
    return bool(_NOT_IN_POPULATION.search(before)) and not _WITH_AND_WITHOUT.search(before)


#: What makes a population word an endpoint rather than who was studied: "the development of severe heart
#: failure", "hospitalization for worsening heart failure", "death or severe CHF", "the reduction in risk was 46
#: percent (95 percent confidence interval, 11 to 71 percent) for severe congestive heart failure", "the burden of
#: mortality plus morbidity for ventricular dysfunction".
_AS_ENDPOINT = re.compile(r"(?:\b(?:development|incidence|hospitali[sz]ations?|(?:re)?admissions?|progression|onset|"
                          r"signs?|symptoms?|risk|rates?|deaths?|morbidity)\s+(?:of|for|from|due to|attributable to)\s+"
                          r"|\b(?:death|mortality)\s+(?:or|and)\s+|\bworsening\s+|\bnew[- ]onset\s+"
                          r"|\bdevelop(?:s|ed|ing)?\s+|\b(?:risks?|reductions?|incidence)\b(?:[^;()]|\([^()]*\)){0,100}?\bfor\s+)"
                          r"(?:(?:new|severe|overt|worsening|congestive|clinical|chronic)\s+)?$", re.IGNORECASE)


#: What makes a population a subgroup of those studied: "larger in certain higher-risk groups, such as those
#: presenting with a history of previous MI or with heart failure".
_AS_SUBGROUP = re.compile(r"\b(?:sub-?groups?|such as|particularly|especially)\b[^.;]{0,80}$", re.IGNORECASE)


#: A leading clause that recalls earlier findings ("Although enalapril has recently been shown to reduce mortality
#: … in patients with congestive heart failure, …"): a population named there is not the one studied.
_AS_BACKGROUND = re.compile(r"^\s*(?:although|though|while|whereas)\b[^;]*?\b(?:been|is|are|was|were)\s+(?:\w+\s+)?"
                            r"(?:shown|reported|demonstrated|known|established|proven|proved)\b[^;]*?,", re.IGNORECASE)


def population_mentions(sentence: str, q: CompiledQuestion) -> list[re.Match]:
    """Where ``sentence`` names the question's population: each run of adjacent population words that holds every
    word of one of its alternatives ("congestive heart failure"; not "cardiac" of "cardiac deaths"), by its first
    word."""
    stems = q.population_stems
    runs: list[list[re.Match]] = []
    for m in WORD_RE.finditer(sentence):
        if stem(m.group().lower()) not in stems:
            continue
        if runs and not sentence[runs[-1][-1].end():m.start()].strip(" -"):
            runs[-1].append(m)
        else:
            runs.append([m])
    return [run[0] for run in runs
            if any(alt.stems <= {stem(m.group().lower()) for m in run} for alt in q.population)]


def names_population(sentence: str, words: frozenset[str], q: CompiledQuestion) -> bool:
    """Whether a claim itself names the question's population as who was studied, not only as an endpoint
    ("reduced the development of heart failure"), a subgroup ("larger in groups such as those with heart
    failure") or in a clause recalling earlier findings ("Although enalapril has been shown to reduce mortality in
    congestive heart failure, …"). A population named only by an abbreviation its abstract defines counts."""
    if not q.population or best_match(words, q.population)[1] is None:
        return False
    heads = population_mentions(sentence, q)
    background = m.end() if (m := _AS_BACKGROUND.match(sentence)) else 0
    return not heads or any(m.start() >= background
                            and not _AS_ENDPOINT.search(before := sentence[max(0, m.start() - 100):m.start()])
                            and not _AS_SUBGROUP.search(before) for m in heads)


def rival_population(sentence: str, words: frozenset[str], q: CompiledQuestion, others: list[CompiledQuestion],
                     abstract: str = "", article: frozenset[str] = frozenset()) -> bool:
    """Whether a claim names as who was studied the population of another question of the same comparison
    (among ``others``, whether or not the claim passes that question's other checks), but not this question's:
    "early captopril during acute myocardial infarction reduced mortality" answers the question asked after
    infarction, not the one asked in heart failure (an endpoint of that trial). The claim is read first; when it
    names neither population, its abstract (``article``: its content stems). A text naming both populations
    (heart failure after infarction) answers both. The rivals are the questions of ``others`` that the pack's
    compilation found to ask the same comparison in another population (``CompiledQuestion.rivals``: ACE
    inhibitors and mortality in heart failure, and after myocardial infarction)."""
    if not q.population or not q.rivals:
        return False
    rivals = [o for o in others if o.question.question_id in q.rivals]
    if not rivals:
        return False
    for text, stems in ((sentence, words), (abstract, article)):
        own, rival = names_population(text, stems, q), any(names_population(text, stems, o) for o in rivals)
        if own or rival:
            return rival and not own
    return False
