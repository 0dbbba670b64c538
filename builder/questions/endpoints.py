"""Another endpoint, setting or design than the question's: one cause's deaths against all-cause
mortality (:func:`cause_specific_death`), the distinctions the lexicon and a build's domain packs declare
(relapse, a measure's rhythm, a site: :func:`other_endpoint`; a setting: :func:`other_setting`), and the question's drug named only open-label or as
stopped (:func:`open_label_only`, :func:`stopped_only`).
"""

from __future__ import annotations

import re

from .arms import UNTREATED_STEMS, arm_tokens, named_at
from .compiled import CompiledQuestion
from .lexicon import Distinction, stem, terms

_OPEN_LABEL = frozenset({"open-label", "openlabel"})


def open_label_only(sentence: str, q: CompiledQuestion) -> bool:
    """Whether a claim names the question's intervention only as open-label use, outside the randomised arms:
    "death attributable to heart failure, … initiation of open-label ACE inhibitor …, was associated with a
    4.01-fold increase in the risk of death" is an event of the placebo-controlled trial, not its finding."""
    tokens = arm_tokens(sentence)
    hits = [i for alt in q.intervention for i in named_at(tokens, alt)]
    return bool(hits) and all(i > 0 and tokens[i - 1] in _OPEN_LABEL for i in hits)


#: Words that make the drug after them one stopped ("women who stopped HRT", "discontinuation of", "withdrawal of");
#: with ``UNTREATED_STEMS`` and "never", one not taken ("women who did not undergo HRT", "never used").
_STOPPED = frozenset(stem(w) for w in ("stopped", "stopping", "stop", "discontinued", "discontinuing",
                                       "discontinuation", "withdrawal", "withdrawn", "withdrew", "cessation", "ceased"))


_NEVER = frozenset({stem("never")})


#: A finding about stopping the treatment itself ("treatment withdrawal was associated with an increase of mortality"),
#: not one that lasts after it ("confers ongoing benefit after drug withdrawal").
_STOPPING_TREATMENT = re.compile(r"(?<!after )(?<!following )\b(?:treatment|therapy|drug)\s+"
                                 r"(?:withdrawal|discontinuation|cessation|interruption)\b", re.IGNORECASE)


def stopped_only(sentence: str, q: CompiledQuestion) -> bool:
    """Whether a claim names the question's intervention only as stopped (or, for its other arm, never taken), or its
    finding is about stopping treatment: "rates of BMD loss among women who stopped HRT did not differ from those of
    women who did not undergo HRT" and "treatment withdrawal was associated with a significant increase of mortality
    in the bisoprolol group" are what follows stopping the drug, not whether taking it works."""
    if _STOPPING_TREATMENT.search(sentence):
        return True
    tokens = arm_tokens(sentence)
    hits = [i for alt in q.intervention for i in named_at(tokens, alt)]
    before = [set(tokens[max(0, i - 3):i]) for i in hits]
    return any(b & _STOPPED for b in before) and all(b & (_STOPPED | UNTREATED_STEMS | _NEVER) for b in before)


#: A word for death ("mortality", "deaths", "died", "survival", "lives saved", "fatal" but not "non-fatal").
_DEATH = re.compile(r"\b(?:mortality|deaths?|died|dying|survival|survivors?|lives saved|(?<!non-)(?<!non)fatal)\b",
                    re.IGNORECASE)


#: What makes a death word one cause's, or part of a composite: a cause before it ("cardiovascular mortality",
#: "sudden death", "event-free survival", "MI/death") or after it ("death from circulatory failure", "death or severe
#: heart failure", "mortality/hospitalizations"), unless that "cause" is any cause ("death from any cause").
_CAUSE_BEFORE = re.compile(r"(?:\b(?:cause-specific|cardio-?vascular|CV|cardiac|coronary|CHD|sudden|arrhythmic|vascular|"
                           r"cerebro-?vascular|stroke|cancer|non-?cardio-?vascular|non-?cardiac|pump[- ]failure|"
                           r"heart[- ]failure|renal|unexpected)\s+|-free\s+|\bor\s+|/\s*)$", re.IGNORECASE)


_CAUSE_AFTER = re.compile(r"^(?:\s+(?:(?:from|due to|caused by|attributed to|attributable to)\s+(?!any\b|all\b)|or\b)"
                          r"|\s*/)", re.IGNORECASE)


#: "fatal" before what was fatal ("fatal myocardial infarctions", "fatal and non-fatal strokes"): one cause's deaths.
_FATAL_CAUSE = re.compile(r"^\s+(?:(?:and|or)\s+non-?fatal\s+)?(?!(?:events?|outcomes?|cases?|and|or)\b)[a-z]",
                          re.IGNORECASE)


#: A bracketed aside ("(48 [3.6%] vs 83 [6.3%] deaths)"): its death words count events of the endpoint named before.
_ASIDE = re.compile(r"\([^()]*\)")


def cause_specific_death(text: str) -> bool:
    """Whether every death word of ``text`` names one cause's deaths or a composite endpoint, and there is one:
    "deaths from circulatory failure were reduced by 18%", "cardiovascular mortality tended to be lower", "death
    or severe heart failure", but not "total mortality and cardiovascular deaths fell" nor "5-week mortality". The
    death words of a bracketed aside count events ("fewer sudden deaths (48 vs 83 deaths)") and are not read."""
    text = _ASIDE.sub(lambda m: " " * len(m.group()), text)
    found = list(_DEATH.finditer(text))
    return bool(found) and all(_CAUSE_BEFORE.search(text[max(0, m.start() - 40):m.start()])
                               or _CAUSE_AFTER.match(text[m.end():m.end() + 40])
                               or m.group().lower() == "fatal" and _FATAL_CAUSE.match(text[m.end():m.end() + 40])
                               for m in found)


def differs(sentence: str, q: CompiledQuestion, distinction: Distinction) -> bool:
    """Whether ``distinction`` sets the claim ``sentence`` apart from its question (see
    ``lexicon.DistinctionEntry`` for what each kind means)."""
    text, pattern = q.question.text, distinction.pattern
    if distinction.kind == "site":
        asked, named = distinction.sites(text), distinction.sites(sentence)
        return bool(asked and named and not asked & named)
    if not pattern.search(sentence) or pattern.search(text) or distinction.kind == "setting" and not q.population:
        return False
    if not distinction.unless_outcome_outside:
        return True
    outside = terms(pattern.sub(" ", sentence))
    return not any(alt.stems <= outside for alt in q.outcome)


def other_endpoint(sentence: str, q: CompiledQuestion) -> bool:
    """Whether a claim reports another endpoint than its question asks about:
    - one cause's deaths, or a composite with death, while the question asks about deaths of any cause: that
      ramipril did not significantly reduce deaths from circulatory failure does not say whether it reduces
      mortality (``cause_specific_death``);
    - an endpoint or site distinction of the lexicon and the build's domain packs sets it apart (``differs``:
      relapse against remission, ulcers of another site, a measure's rhythm against its level)."""
    if any(d.kind != "setting" and differs(sentence, q, d) for d in q.distinctions):
        return True
    text = q.question.text
    return bool(_DEATH.search(text)) and not cause_specific_death(text) and cause_specific_death(sentence)


def other_setting(sentence: str, q: CompiledQuestion) -> bool:
    """Whether a setting distinction of the lexicon or a domain pack sets the claim apart from a question that
    names a population (``differs``: a claim set in surgery, a question asked after infarction)."""
    return any(d.kind == "setting" and differs(sentence, q, d) for d in q.distinctions)
