"""How a sentence sets the question's arms against each other: which arm is the reference of a comparison
(:func:`compares_arms`, :func:`comparator_first`), whether it sets them equal, compares doses, a fixed combination
or an arm with itself, and which drug each arm names (:func:`claim_arms`, :func:`arm_drugs`). Grammar of
comparisons in any field: nothing here names a drug or an endpoint.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from ..frames import Span
from ..frameterms import STATISTICS, WORD_RE
from ..significance import CHANGE_FROM, VS_BASELINE
from .compiled import DOSE_LEVEL_WORDS, INACTIVE, NAMED, OTHER, PLACEBO_STEMS, CompiledQuestion
from .lexicon import Alternative, stem, stem_sequence

#: Words that make the arm right after them the reference of a comparison ("than", "compared with",
#: "versus", "relative to", "switching from").
REFERENCE_STEMS = frozenset(stem(w) for w in ("than", "compared", "comparison", "versus", "vs", "relative", "from"))


def _mentions(stems: list[str], alts: tuple[Alternative, ...]) -> list[tuple[int, Alternative]]:
    """Each alternative the sentence (its ``stems``) names whole, with the position of its first word."""
    present = set(stems)
    return [(min(i for i, s in enumerate(stems) if s in alt.stems), alt) for alt in alts
            if alt.stems and alt.stems <= present]


def first_mention(stems: list[str], alts: tuple[Alternative, ...]) -> int | None:
    """The position in ``stems`` of the first word of any alternative the sentence names whole, or None."""
    hits = _mentions(stems, alts)
    return min(i for i, _ in hits) if hits else None


def _is_reference(stems: list[str], position: int, other: int) -> bool:
    """Whether a reference word comes at most three words before ``position`` ("than with enalapril"), after
    the other arm (at ``other``) if that comes before."""
    start = max(position - 3, other + 1 if other < position else 0, 0)
    return any(s in REFERENCE_STEMS for s in stems[start:position])


#: Words that make the drug after them a background therapy, not an arm ("in the absence of background ACEI
#: therapy", "added to ACE inhibitors", "on top of").
BACKGROUND_STEMS = frozenset(stem(w) for w in ("background", "addition", "top", "absence", "added", "concomitant"))


def background_only(sentence: str, q: CompiledQuestion) -> bool:
    """Whether the question's intervention appears in a claim only as background therapy, so the claim tests
    another drug ("a trend in benefit of ARBs over placebo … in the absence of background ACEI therapy")."""
    stems = stem_sequence(sentence)
    starts = [i for alt in q.intervention if alt.stems and alt.stems <= set(stems)
              for i, s in enumerate(stems) if s in alt.stems and (i == 0 or stems[i - 1] not in alt.stems)]
    return bool(starts) and all(any(s in BACKGROUND_STEMS for s in stems[max(0, i - 4):i]) for i in starts)


#: Two words joined by a slash ("glyburide/metformin", "glipizide/ metformin"), by a hyphen before a dose or
#: "tablets" ("metformin-glibenclamide 500 mg/2.5 mg"; not the difference "95%CI for zotepine-haloperidol -9.34"),
#: or by "plus" or "combined with" ("glyburide at lower doses plus metformin").
_JOINED = re.compile(r"\b([A-Za-z]{4,})(?: ?/ ?([A-Za-z]{4,})\b|-([A-Za-z]{4,})(?= \d| tablet)"
                     r"|(?:\s+at\s+(?:\w+\s+)?doses?)?\s+(?:plus|\+|combined with)\s+([A-Za-z]{4,})\b)", re.IGNORECASE)


_LEVEL_DOSE = rf"(?:{DOSE_LEVEL_WORDS})[- ]dos(?:e|es|ing|age)\b"


#: A dose level set against another ("lower in patients receiving low doses (maximum, 6 mg/day) than high doses of
#: risperidone or haloperidol"); not a drug at a dose against another drug ("than with high-dose oxybutynin").
_DOSE_REFERENCE = re.compile(rf"\b{_LEVEL_DOSE}[^.;]{{0,60}}?\b(?:than|versus|vs\.?|compared (?:with|to))\s+"
                             rf"(?:with\s+|in\s+)?(?:the\s+|those\s+(?:receiving|on|given|taking)\s+)?{_LEVEL_DOSE}",
                             re.IGNORECASE)


def compares_doses(sentence: str, q: CompiledQuestion) -> bool:
    """Whether a claim sets a dose level against another (``_DOSE_REFERENCE``) under a question whose arms name no
    dose (``CompiledQuestion.arms_name_dose``): it compares doses, not the question's treatments."""
    return not q.arms_name_dose and _DOSE_REFERENCE.search(sentence) is not None


def fixed_combination(sentence: str, q: CompiledQuestion) -> bool:
    """Whether a claim's arm is two of the lexicon's drugs (or one-word classes) joined into one
    ("glipizide/metformin tablets controlled HbA1c better than either monotherapy", "the thiazide/atenolol
    regimen", "glyburide at lower doses plus metformin"): a combination, which answers only a question that asks an
    add-on (``CompiledQuestion.asks_add_on``)."""
    return not q.asks_add_on and any(
        stem(a.lower()) in q.drug_words and stem(other.lower()) in q.drug_words
        for a, *joined in _JOINED.findall(sentence) for other in joined if other)


#: Words that are reference words only before "to" or "with" ("relative to", "in comparison with"; not
#: "relative risk").
_REFERENCE_BEFORE_TO = frozenset(stem(w) for w in ("relative", "comparison"))


#: Words after which comes the reference arm of a comparison: ``REFERENCE_STEMS`` but "from" ("reduced from
#: 145/101") and those of ``_REFERENCE_BEFORE_TO``, with "against", "over", "as opposed to"; and adjectives
#: that make a following "to" one ("superior to", "similar to", "preferable to").
_REFERENCE_WORDS = (REFERENCE_STEMS - _REFERENCE_BEFORE_TO - {stem("from")}) | frozenset(
    stem(w) for w in ("against", "over", "opposed"))


_TO_REFERENCE = frozenset(stem(w) for w in ("superior", "inferior", "similar", "equivalent", "comparable", "equal",
                                             "identical", "noninferior", "non-inferior", "preferable"))


#: Words, punctuation kept: a reference arm is read up to the next comma, a clause up to the next semicolon.
_ARM_TOKENS = re.compile(r"[A-Za-z0-9][\w'-]*|[;,:]")


#: How far after its reference word a reference arm may be named, and the same drug as the other arm
#: ("than with immediate-release tolterodine"; not "more than 20% and less sumatriptan").
_REFERENCE_REACH, _SAME_DRUG_REACH = 12, 6


#: Words that set two named arms against each other whatever else the sentence compares ("no difference
#: between", "similar", "whereas", "as well tolerated and effective as").
_SIDE_BY_SIDE = re.compile(
    r"\bbetween\b|\bdiffer|\bsimilar|\bcomparabl|\bequivalen|\bequal|\bsame\b|\bwhereas\b|\bwhile\b|\bunlike\b"
    r"|\bin contrast\b|\bbut not\b|\badvantage|\bsuperior|\binferior|\bneither\b"
    r"|\bas(?! well as)(?:\s+[\w-]+){1,4}\s+as\b", re.IGNORECASE)


#: Each arm's own change ("fell significantly with each agent", "decreased after all four medications",
#: "reduced (p < 0.01) from 145/101 to 128/86 … respectively", "tolterodine and oxybutynin caused a significant
#: decrease (p = 0.0001) in voids … (-1.7 and -1.7, respectively)"): figures side by side that test no difference.
EACH_ARM = re.compile(r"\bwith each (?:agent|drug|treatment|regimen)\b"
                       r"|\bafter all (?:\w+ )?(?:medications|drugs|treatments)\b|\bin (?:both|all) (?:\w+ )?groups\b"
                       rf"|\b{CHANGE_FROM}\s+(?:\([^)]*\)\s+)?from \d"
                       r"|^(?:both\s+)?[\w-]+\s+and\s+[\w-]+\s+(?:both\s+)?"
                       r"(?:caused|produced|induced|achieved|resulted in|led to)\s+(?:an?\s+)?"
                       r"(?:(?:statistically\s+)?significant\s+)?(?:decrease|reduction|increase|improvement|fall|rise|"
                       r"decline)s?\b",
                       re.IGNORECASE)


#: A stated test or effect size ("P < 0.001", "95% CI", "NS", "hazard ratio"), or "respectively": two arms'
#: figures beside one, with no reference word, compare them ("significantly" alone does not: "X and Y
#: significantly reduced blood pressure" is each arm's change).
TESTED = re.compile(r"\b[pP]\s*[<=>≤]|\bCI\b|\bNS\b|\b(?:[Hh]azard|[Oo]dds) ratio\b|\b[Rr]elative risk\b")


RESPECTIVELY = re.compile(r"\brespectively\b", re.IGNORECASE)


#: A treatment named as a patient's allocation ("haloperidol-treated patients", "captopril-allocated deaths"):
#: the drug is a word of its own.
_ALLOCATED = re.compile(r"-(?=(?:treated|allocated|assigned|randomi[sz]ed)\b)", re.IGNORECASE)


@lru_cache(maxsize=4096)
def arm_tokens(sentence: str) -> tuple[str, ...]:
    """A sentence's stemmed words with its clause punctuation, bracketed statistics left out (read once for all
    the questions a claim may answer)."""
    text = _ALLOCATED.sub(" ", STATISTICS.sub(" ", sentence))
    return tuple(t if t in ";,:" else stem(t.lower()) for t in _ARM_TOKENS.findall(text))


def named_at(tokens: tuple[str, ...], alt: Alternative) -> list[int]:
    """Where the sentence names an alternative: the start of each run of its words that holds all of them
    ("conventional neuroleptic" names "conventional neuroleptics", a lone "neuroleptic" does not)."""
    if not alt.stems or not alt.stems <= set(tokens):
        return []
    out = []
    for i, s in enumerate(tokens):
        if s in alt.stems and (i == 0 or tokens[i - 1] not in alt.stems):
            j = next((k for k in range(i, len(tokens)) if tokens[k] not in alt.stems), len(tokens))
            if set(tokens[i:j]) == alt.stems:
                out.append(i)
    return out


#: Words in a reference arm that make it the untreated group ("than patients not receiving captopril", "than
#: among beta-blocker nonusers").
UNTREATED_STEMS = frozenset(stem(w) for w in ("not", "no", "without", "non", "untreated", "nontreated",
                                                "nonusers", "non-users"))


class ArmComparison(NamedTuple):
    """What a claim's reference words ("than", "compared with", "superior to") set against each other."""

    #: the question's intervention against its comparator
    compared: bool
    #: a drug against itself ("SC sumatriptan with this device … similar to … with a conventional syringe")
    itself: bool
    #: one arm against itself by other drugs ("esomeprazole than omeprazole" under PPIs against ranitidine)
    within: bool
    #: another drug against the arms ("nateglinide … is comparable to that of metformin")
    of_another: bool
    #: whether the claim has a reference word at all
    referenced: bool


def _arm_comparison(sentence: str, q: CompiledQuestion) -> ArmComparison:
    """What a claim's reference words set against each other, read for ``compares_arms`` and
    ``compares_itself``."""
    tokens = arm_tokens(sentence)
    asked = frozenset(a.stems for a in q.intervention)
    against = () if q.comparison == INACTIVE else q.comparator if q.comparison == NAMED else (
        q.comparator + q.other_drugs)
    # where the sentence names each drug, read once for both lists: every drug (its side: its own stems) and the
    # question's two arms
    at = {alt.stems: named_at(tokens, alt) for alt in (*q.intervention, *against, *(alt for alt, _ in q.drugs))}
    drugs = sorted((i, " ".join(sorted(stems))) for stems, hits in at.items() for i in hits)
    arms = sorted([(i, "intervention") for alt in q.intervention for i in at[alt.stems]]
                  + [(i, "comparator") for alt in against if alt.stems not in asked for i in at[alt.stems]])
    arm_at = {i for i, _ in arms}
    refs = [i for i, s in enumerate(tokens) if s in _REFERENCE_WORDS or (s == "to" and i and tokens[i - 1] in
            _TO_REFERENCE) or (s in _REFERENCE_BEFORE_TO and tokens[i + 1:i + 2] in (("to",), ("with",)))]
    compared = itself = within = of_another = False
    for r in refs:
        clause = max((j + 1 for j in range(r) if tokens[j] in ";:"), default=0)
        reach = min(len(tokens), r + _REFERENCE_REACH + 1)
        end = next((j for j in range(r + 1, reach) if tokens[j] in ";,:" or j in refs), reach)
        stop = next((j for j in range(r + 1, len(tokens)) if tokens[j] in ";:"), len(tokens))
        near = next((j for j in range(r + 1, min(end, r + _SAME_DRUG_REACH + 1)) if tokens[j] == "and"),
                    min(end, r + _SAME_DRUG_REACH + 1))
        # the arm a comparison is of: the one named last before its reference word, else first after its reference
        subject = [side for i, side in drugs if clause <= i < r][-1:]
        reference = [side for i, side in drugs if r < i < near][:1]
        itself = itself or (bool(subject) and subject == reference
                            and not set(tokens[r + 1:near]) & (PLACEBO_STEMS | UNTREATED_STEMS))
        after = {side for i, side in arms if r < i < end}
        before = [side for i, side in arms if clause <= i < r][-1:]
        # the subject may follow the reference ("compared with ranitidine, pantoprazole …"), unless another drug
        # before it is the subject ("nateglinide … is comparable to that of metformin, sulphonylureas …")
        last_drug = [i for i, _ in drugs if clause <= i < r][-1:]
        other_subject = bool(last_drug) and last_drug[0] not in arm_at
        if not before and not other_subject:
            before = [side for i, side in arms if end <= i < stop][:1]
        compared = compared or len(after) == 2 or bool(before and after - set(before))
        within = within or bool(before) and after == set(before)
        of_another = of_another or (other_subject and not before and bool(after))
    return ArmComparison(compared, itself, within, of_another, bool(refs))


def compares_arms(sentence: str, q: CompiledQuestion) -> bool:
    """Whether a claim sets the question's intervention against its comparator.

    A reference word ("than", "compared with", "superior to") with one arm after it and the other arm before
    it (or after the reference, "compared with ranitidine, pantoprazole …") compares them. The same drug on
    both sides compares formulations or doses ("SC sumatriptan with this device … similar to … with a
    conventional syringe"), for any question, and another drug named before the reference sets that drug against
    the arms ("nateglinide … is comparable to that of metformin, sulphonylureas"). Under a question without an
    active comparator, a claim must state an effect or a comparison at all (``states_an_effect``). Under a
    question with two drugs (or the drug and others), placebo after every reference word sets each arm against
    placebo ("omeprazole or ranitidine … than in those receiving placebo"), and without a reference word the arms
    are compared only when words set them side by side ("no difference between", "as effective as") or a test (or
    "respectively") stands beside them, not of each arm's own change ("80% and 62% … (P < 0.05)"): "nebivolol and
    atenolol significantly reduced blood pressure from baseline", "fell significantly with each agent" and "no
    significant effectiveness … by omeprazole and ranitidine" do not."""
    compared, itself, _, of_another, refs = _arm_comparison(sentence, q)
    if (itself or of_another) and not compared:
        return False
    if compared:
        return True
    if q.comparison == INACTIVE:
        return states_an_effect(sentence)
    return bool(_SIDE_BY_SIDE.search(sentence)) or (
        not refs and bool(TESTED.search(sentence) or RESPECTIVELY.search(sentence))
        and not VS_BASELINE.search(sentence) and not EACH_ARM.search(sentence))


def compares_itself(sentence: str, q: CompiledQuestion) -> bool:
    """Whether a claim sets an arm of the question against itself and never against the other arm: subgroups
    of one drug ("haloperidol-treated first-episode patients … more extrapyramidal symptoms than
    haloperidol-treated multiple-episode patients"), its formulations or doses, or drugs of one arm ("faster with
    esomeprazole than with omeprazole" under proton pump inhibitors against ranitidine). Never under a question
    whose arms share a treatment ("dexamethasone and diclofenac" against "diclofenac alone"), which such a claim
    may answer (``CompiledQuestion.arms_share_treatment``)."""
    if q.arms_share_treatment:
        return False
    read = _arm_comparison(sentence, q)
    return (read.itself or read.within) and not read.compared


#: Words by which a claim states an effect or a comparison at all: a direction, a reference, a test or a verdict.
_EFFECT_WORDS = re.compile(
    r"\b(?:reduc|increas|decreas|lower|higher|rais|rose|fell|improv|worsen|prevent|prolong|shorten|benefi|effect|"
    r"efficac|superior|inferior|better|worse|greater|less|fewer|more|than|compar|versus|vs|differ|similar|"
    r"equivalent|placebo|control|significan|respectively|risk|odds|hazard|declin|attenuat|protect|enhanc|inhibit|"
    r"suppress|induc|promot|accelerat|delay|alleviat|reliev|eliminat|efficient|elevat|augment|diminish|restor|"
    r"normali[sz]|resolv|lessen|relax|stabili[sz])",
    re.IGNORECASE)


def states_an_effect(sentence: str) -> bool:
    """Whether a claim states an effect or a comparison at all, as it must to answer a question without a named
    comparator: "lisinopril was well tolerated: 16 patients (8.88%) died" counts deaths and states none."""
    return _EFFECT_WORDS.search(STATISTICS.sub(" ", sentence)) is not None or TESTED.search(sentence) is not None


def comparator_first(sentence: str, q: CompiledQuestion) -> bool:
    """Whether a claim states its finding relative to the question's comparator (placebo, for a question without
    an active one; any other drug, for "other …" drugs) rather than its intervention. The finding reader reads a
    direction for the arm the sentence is about ("cough was lower with candesartan than with enalapril" reads as
    a decrease), so a reading of such a claim is reversed to be relative to the question's intervention. The
    reference arm is the one after "than", "compared with", "versus", "relative to" or "from"; without such a
    word, the arm named second."""
    stems = stem_sequence(sentence)
    intervention = first_mention(stems, q.intervention)
    if intervention is None:
        return False
    if q.comparison == INACTIVE:
        comparator = next((i for i, s in enumerate(stems) if s in PLACEBO_STEMS), None)
    else:
        comparator = first_mention(stems, q.comparator)
        if comparator is None and q.comparison == OTHER:
            comparator = first_mention(stems, q.other_drugs)
    if comparator is None:
        return False
    iv_ref, cmp_ref = _is_reference(stems, intervention, comparator), _is_reference(stems, comparator, intervention)
    return iv_ref if iv_ref != cmp_ref else comparator < intervention


#: Words that put one arm above the other, set an arm against something else, or mix the finding ("than",
#: "fewer", "compared", "but", "despite"): a sentence with any of them does not simply set its arms equal.
_UNEQUAL = re.compile(r"\b(?:than|superior|inferior|better|worse|greater|larger|smaller|fewer|lower|higher|more|less"
                      r"|compared|comparison|versus|vs|however|but|whereas|although|though|despite|while|except"
                      r"|unlike|relative|placebo|controls?|untreated|nonusers)\b", re.IGNORECASE)


#: Each arm set against placebo ("compared with placebo", "versus placebo"): no ranking of the two arms.
_AGAINST_PLACEBO = re.compile(r"\b(?:compared (?:with|to)|versus|vs\.?)\s+placebo\b", re.IGNORECASE)


def sets_arms_equal(sentence: str, q: CompiledQuestion) -> bool:
    """Whether a claim, under a question of two active arms, names both and does no more than set them equal
    ("celiprolol and atenolol lead to a similar and significant reduction of blood pressure", "equivalent and
    significant reductions … for tolterodine and oxybutynin compared with placebo"): its effect is each arm's
    (against baseline or placebo), and between the arms it finds no difference. A sentence that also ranks the
    arms, sets one against anything but placebo, or mixes findings ("similar …; however, significantly fewer …")
    is left to the reader."""
    plain = _AGAINST_PLACEBO.sub(" ", sentence)
    if q.comparison == INACTIVE or not EQUAL.search(plain) or _UNEQUAL.search(plain):
        return False
    tokens = arm_tokens(sentence)
    against = q.comparator if q.comparison == NAMED else q.comparator + q.other_drugs
    asked = {a.stems for a in q.intervention}
    named = [alt for alt in q.intervention if named_at(tokens, alt)]
    return bool(named) and any(named_at(tokens, alt) for alt in against if alt.stems not in asked)


def _named_arm(stems: list[str], alts: tuple[Alternative, ...]) -> Alternative | None:
    """The alternative a sentence names whole that comes first in it (the longest of those starting there)."""
    hits = _mentions(stems, alts)
    return min(hits, key=lambda hit: (hit[0], -len(hit[1].stems)))[1] if hits else None


def _arm_text(alt: Alternative | None, fallback: str) -> str:
    """What a claim calls an arm: a member drug or class name by its own name, the question's phrase else."""
    if alt is None or "(=" in alt.label:
        return fallback
    return alt.label.split(" (", 1)[0]


def claim_arms(sentence: str, q: CompiledQuestion) -> tuple[str, str, str] | None:
    """The question's ``(intervention, comparator, outcome)`` as one claim names its arms — "lisinopril" and
    "losartan" for ACE inhibitors against ARBs — so the question can be put to the finding reader in the
    terms of the sentence it reads. The comparator is the named comparator, another drug for "other …"
    drugs, placebo for a question without an active one. None when the claim names no intervention or the
    question has no outcome."""
    outcome = q.question.outcome
    stems = stem_sequence(sentence)
    intervention = _named_arm(stems, q.intervention)
    if intervention is None or not outcome:
        return None
    asked = q.question.comparator or "placebo"
    if q.comparison == NAMED:
        comparator = _arm_text(_named_arm(stems, q.comparator), asked)
    elif q.comparison == OTHER:
        comparator = _arm_text(_named_arm(stems, q.other_drugs), asked)
    else:
        comparator = asked
    return _arm_text(intervention, q.question.intervention or ""), comparator, outcome


@dataclass(frozen=True)
class NamedDrug:
    """A drug (or drug class) a claim names for one arm of its question, and where it names it."""

    name: str
    #: the lexicon class it belongs to (its first name); the class itself for a class name
    group: str
    member: bool
    span: Span

    def differs(self, other: NamedDrug) -> bool:
        """Whether two claims name different drugs for one arm: other classes, or two members of one class (a
        class named by one claim and a member of it by the other name the same arm)."""
        return self.group != other.group or (self.member and other.member and self.name != other.name)


def _named_drug(sentence: str, alts: tuple[Alternative, ...], group: str | None = None,
                members: dict[Alternative, bool] | None = None) -> NamedDrug | None:
    """The alternative (from ``alts``) a sentence names first, as a NamedDrug with its words' span. The
    alternatives of one arm share its ``group``, and a label "name (class)" is a member drug; lexicon drugs
    (``group`` None) carry their class in the label and whether they are members in ``members``. A synonym
    names none."""
    words = list(WORD_RE.finditer(sentence))
    stems = [stem(w.group().lower()) for w in words]
    alt = _named_arm(stems, alts)
    if alt is None or "(=" in alt.label:
        return None
    at = [i for i, s in enumerate(stems) if s in alt.stems]
    first = last = at[0]
    while last + 1 in at:
        last += 1
    name, _, of = alt.label.partition(" (")
    member = members[alt] if members is not None else bool(of)
    start, end = words[first].start(), words[last].end()
    return NamedDrug(name, group if group is not None else of.rstrip(")"), member, Span(sentence[start:end], start, end))


def arm_drugs(sentence: str, q: CompiledQuestion) -> tuple[NamedDrug | None, NamedDrug | None]:
    """The drugs a claim names for the question's intervention and for its comparator: "ramipril" for ACE
    inhibitors, "nifedipine" for "other antihypertensive drugs". A question about a class, or against "other …"
    drugs, pools several comparisons, so two claims naming different drugs for an arm answer different ones.
    None for an arm the claim does not name by a drug (and for the comparator of a question against placebo)."""
    intervention = _named_drug(sentence, q.intervention, q.question.intervention or "")
    if q.comparison == OTHER:
        return intervention, _named_drug(sentence, q.other_drugs, members=dict(q.drugs))
    if q.comparison == NAMED:
        return intervention, _named_drug(sentence, q.comparator, q.question.comparator or "")
    return intervention, None


#: A finding with no direction to misread, an equivalence ("similar", "comparable", "equivalent", "equally", "did
#: not differ", "no difference"), not a dose's ("(or equivalent)").
EQUAL = re.compile(r"(?<!or )\b(?:similar|comparable|equally)\b|(?<!or )\bequivalen|\bno\s+(?:\w+\s+){0,2}differen"
                    r"|\bnot\s+(?:\w+\s+){0,2}differ", re.IGNORECASE)
