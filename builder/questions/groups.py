"""Arms named without their drugs: by role ("the two groups", "the treatment arm"), by a word before
"group" ("the LAN30 group"), by a word only one arm's phrase has, or in the abstract as a whole
(:func:`abstract_answers`, :func:`abstract_names_arms`).
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..significance import VS_BASELINE
from .arms import EACH_ARM, EQUAL, RESPECTIVELY, TESTED, compares_doses, fixed_combination
from .compiled import (
    BRACKETS,
    INACTIVE,
    JOINED_WORDS,
    NAMED,
    OTHER,
    PLACEBO_STEMS,
    PLACEBO_WORDS,
    CompiledQuestion,
    named_drugs,
)
from .filters import content_words, expansions
from .lexicon import best_match, stem, stem_sequence, terms

#: Arms labelled by letter or number: which one is the treatment only the abstract's methods say.
_LABELLED_ARMS = re.compile(r"\bgroups?\s+(?:[A-D1-4]|I{1,3}|one|two)\b", re.IGNORECASE)


#: Arms named by role, not by treatment ("between the two groups", "the intervention group", "group I",
#: "groups A and B"); the trial's abstract says what they are.
_ROLE_ARMS = re.compile(
    r"\b(?:between|among|across|of|in|the|both)\s+(?:the\s+)?(?:two\s+|2\s+|three\s+|3\s+|four\s+|4\s+)?"
    r"(?:active\s+)?(?:treatment\s+|study\s+|drug\s+)?groups\b"
    r"|\b(?:intervention|treatment|experimental|active|study|control|placebo|comparison)\s+(?:group|arm)s?\b"
    rf"|{_LABELLED_ARMS.pattern}", re.IGNORECASE)


#: The treated arm set against the untreated one by role ("in the treatment group compared with the control group").
_TREATED_VS_UNTREATED = re.compile(r"\b(?:intervention|treatment|experimental|active)\s+(?:group|arm)s?\b[^.;]*"
                                   r"\b(?:control|placebo)\s+(?:group|arm)s?\b", re.IGNORECASE)


#: A direction between arms ("lower in group I than in group II").
_THAN = re.compile(r"\bthan\b", re.IGNORECASE)


#: Words that compare arms named by role, by a reference ("than", "compared") or side by side ("between",
#: "among the groups", "similar", "differ"); not "among" a population ("Among women who completed the study, those
#: of group A lost bone").
_SET_AGAINST = re.compile(r"\bbetween\b|\bamong\s+(?:\w+\s+){0,3}?(?:groups|arms|treatments|regimens|drugs|agents)\b"
                          r"|\bthan\b|\bcompared\b|\bversus\b|\bvs\b|\bdiffer|\bsimilar"
                          r"|\bcomparabl|\bequivalen|\bsame\b", re.IGNORECASE)


#: Each arm's own change, not the arms compared ("reduced in both groups", "in either treatment group", "with
#: both drugs", "from baseline", "intragroup", "In this group, BMD decreased (P < 0.05)"; not "in this group of
#: patients", who are the population).
_WITHIN_ARMS = re.compile(r"\b(?:in|within|for|with)\s+(?:both|all|each|either)\s+(?:\w+\s+)?(?:groups?|arms?|drugs)\b"
                          r"|\bfrom baseline\b|\bbaseline values\b|\bintra-?group"
                          r"|^(?:in|within)\s+(?:this|that|the same)\s+(?:group|arm|cohort|subgroup)\b(?!\s+of\b)",
                          re.IGNORECASE)


#: Words that may stand before "group(s)" in an arm named by role; any other word names the arm ("the soy and
#: placebo groups", "the tight control group").
_ROLE_WORDS = frozenset((
    "between", "among", "across", "of", "in", "on", "the", "both", "two", "three", "four", "2", "3", "4", "treatment",
    "treated", "study", "active", "drug", "intervention", "experimental", "control", "placebo", "comparison", "all",
    "these", "each", "either", "randomized", "randomised", "allocated", "assigned", "to", "and", "or", "with", "for",
    "from", "than", "vs", "versus", "compared", "patients", "subjects"))


_GROUP_WORD = re.compile(r"\b(?:groups?|arms?)\b", re.IGNORECASE)


_WORDS_BEFORE = re.compile(r"[A-Za-z0-9][\w()/.+-]*")


#: Words that begin the phrase naming an arm ("between the groups", "in the soy and placebo groups"): the words
#: before them belong to the finding ("differences in FEF50 and PEF between the groups").
_ARM_PHRASE_STARTS = frozenset(("between", "among", "across", "in", "of", "for", "with", "to", "than", "from", "vs",
                                "versus", "compared"))


def _arms_unnamed(sentence: str) -> bool:
    """Whether every "group" or "arm" of a sentence is named by role: the words before it, up to three and back to
    the word that begins its phrase ("between", "in", "than"), are role words."""
    for m in _GROUP_WORD.finditer(sentence):
        before = _WORDS_BEFORE.findall(sentence[max(0, m.start() - 60):m.start()])
        start = max((i + 1 for i, w in enumerate(before) if w.lower() in _ARM_PHRASE_STARTS), default=0)
        if any(w.lower() not in _ROLE_WORDS for w in before[start:][-3:]):
            return False
    return True


def names_arms_by_role(sentence: str) -> bool:
    """Whether a claim compares arms it names by role rather than by treatment, in a way that needs no arm mapping
    to read: a finding with no direction ("no difference between the groups", "similar in the two groups"), or the
    treated arm against the untreated by name of role ("regression in the treatment group compared with the control
    group"). Not each arm's own change ("reduced in both groups from baseline"), not arms named by treatment
    ("the soy and placebo groups"), not a direction between lettered arms ("lower in group I than in group
    II": which arm is the drug only the abstract's methods say), and not arms beside a placebo that is no arm of
    theirs ("comparable during placebo and reduced … in group A or group B (p < 0.001 vs. placebo)")."""
    if (_ROLE_ARMS.search(sentence) is None or _SET_AGAINST.search(sentence) is None
            or _WITHIN_ARMS.search(sentence) or EACH_ARM.search(sentence) or VS_BASELINE.search(sentence)
            or not _arms_unnamed(sentence) or _PLACEBO_NOT_ARM.search(sentence)):
        return False
    if _LABELLED_ARMS.search(sentence) and _THAN.search(sentence):
        return False  # a direction between lettered arms, whatever else the sentence finds similar
    if EQUAL.search(sentence):
        return True
    return _LABELLED_ARMS.search(sentence) is None and _TREATED_VS_UNTREATED.search(sentence) is not None


#: Arms that are all active, compared among themselves ("among the 4 active treatment groups"): no arm is untreated,
#: so no question against placebo is answered.
ACTIVE_ARMS = re.compile(r"\b(?:among|between|across)\s+(?:the\s+)?(?:\w+\s+)?active\s+(?:treatment\s+)?(?:groups|arms)\b",
                          re.IGNORECASE)


#: Placebo named as something other than an arm ("during placebo", "vs. placebo" beside arms named by role).
_PLACEBO_NOT_ARM = re.compile(r"\bplacebo\b(?!\s*-?\s*(?:group|arm|treated|patients|subjects))", re.IGNORECASE)


#: The clauses of a sentence (split at semicolons and colons).
_CLAUSE_BREAK = re.compile(r"[;:]")


def role_clause(sentence: str) -> str:
    """The clause of a claim that names its arms by role: what it finds of them ("3-month mortality was 10.2%;
    … with no differences between treatment groups" finds no difference in events, not in mortality)."""
    return next((c for c in _CLAUSE_BREAK.split(sentence) if _ROLE_ARMS.search(c)), sentence)


#: Words that join the names of two arms before one plural "groups" ("the naproxen and celebrex groups").
_ARM_JOINS = frozenset(("and", "or"))


#: A word that may be part of an arm's name: letters first, then letters, digits or hyphens ("PoC", "CD4",
#: "low-carbohydrate"); a figure or a bracket ends the name.
_NAME_WORD = re.compile(r"[A-Za-z][A-Za-z0-9-]*")


#: A treatment named in a compound that makes it an arm ("citrate-treated patients", "heparin-allocated").
_TREATED_COMPOUND = re.compile(r"\b([A-Za-z][A-Za-z0-9]*)-(?:treated|allocated|assigned|randomi[sz]ed)\b",
                               re.IGNORECASE)


def group_names(sentence: str) -> tuple[str, ...]:
    """What a sentence calls its arms where it names them by a word of their treatment before "group" or "arm":
    the run of up to three words before each that are not role words ("the low-carbohydrate group":
    "low-carbohydrate"; "the high dose salbutamol group": "high dose salbutamol"; "the naproxen and celebrex
    groups": "naproxen", "celebrex"), or in a compound that makes it an arm ("citrate-treated patients")."""
    names = [m.group(1) for m in _TREATED_COMPOUND.finditer(sentence)]
    for m in _GROUP_WORD.finditer(sentence):
        before = _WORDS_BEFORE.findall(sentence[max(0, m.start() - 80):m.start()])[-6:]
        run: list[str] = []
        found: list[str] = []  # read backwards from "groups": the last name first
        for word in reversed(before):
            if word.lower() in _ARM_JOINS and run and m.group().lower().endswith("s"):
                found.append(" ".join(reversed(run)))
                run = []
            elif word.lower() in _ROLE_WORDS or len(run) == 3 or not _NAME_WORD.fullmatch(word):
                break
            else:
                run.append(word)
        if run:
            found.append(" ".join(reversed(run)))
        names += reversed(found)
    return tuple(names)


#: Words of a compound arm name that say its role, not its treatment ("celecoxib-treated", "olanzapine-group").
_ARM_ROLE_STEMS = frozenset(stem(w) for w in ("treated", "group", "groups", "arm", "receiving", "allocated",
                                              "assigned", "randomized", "randomised"))


def group_name_words(sentence: str, abstract: str = "") -> tuple[frozenset[str], ...]:
    """The content stems of each of a claim's ``group_names``, abbreviations defined in its abstract expanded
    ("the HIP group": heme, iron, polypeptide, hip)."""
    names = group_names(sentence)
    if not names:
        return ()
    expand = expansions(f"{abstract} {sentence}")
    return tuple(words for name in names if (words := terms(JOINED_WORDS.sub(" ", name), expand) - _ARM_ROLE_STEMS))


def arms_named_by_group(names: tuple[frozenset[str], ...], q: CompiledQuestion) -> tuple[frozenset[str], set[str]]:
    """The question's arms that a claim's ``group_name_words`` name ("the landmark group" for "landmark
    technique", "the ultrasound group" for "ultrasound-guided cannulation", "the HIP group" for "heme iron
    polypeptide (HIP)"): the stems of each arm so named (its own phrase's) and which arms they are. A name must
    belong to one arm's words (``CompiledQuestion.arm_words``) and not the other's ("the low dose group" names
    "low dose", not "high dose"); a name shared by both ("the stent group" beside "PGA plus stent") names
    neither."""
    stems: frozenset[str] = frozenset()
    named: set[str] = set()
    for words in names:
        hits = [(role, alts[0].stems) for role, alts in (("intervention", q.intervention), ("comparator", q.comparator))
                if alts and words <= q.arm_words[role]]
        if len(hits) == 1:
            named.add(hits[0][0])
            stems |= hits[0][1]
    return stems, named


#: Words that name an untreated arm ("the placebo group", "controls").
_UNTREATED_ARM_STEMS = PLACEBO_STEMS | frozenset(stem(w) for w in ("control", "controls"))


def compares_named_groups(sentence: str, named: set[str], q: CompiledQuestion) -> bool:
    """Whether a claim that names arms by a word before "group" compares the question's arms: the intervention
    is so named, and words set it against another arm ("than", "between", "compared", "differ", "similar") or,
    with both of a named comparison's arms so named, a test or "respectively" stands beside their figures ("in
    the etomidate and propofol groups, respectively (P = .010)"); never each arm's own change ("in both groups",
    "from baseline"), nor, under a question of two active arms, each arm set against placebo ("in the
    tolterodine and oxybutynin groups than on placebo"), nor, under a question against placebo, an arm set against
    anything but an untreated one ("adverse events in 28% of sumatriptan-treated attacks were similar to those of
    long-term trials")."""
    if "intervention" not in named or _WITHIN_ARMS.search(sentence) or EACH_ARM.search(sentence) or (
            VS_BASELINE.search(sentence)):
        return False
    stems = set(stem_sequence(sentence))
    if q.comparison != INACTIVE and stems & PLACEBO_STEMS:
        return False
    if q.comparison == INACTIVE and "comparator" not in named and not stems & _UNTREATED_ARM_STEMS:
        return False  # the intervention set against something other than an untreated arm
    return _SET_AGAINST.search(sentence) is not None or (
        q.comparison == NAMED and "comparator" in named
        and bool(TESTED.search(sentence) or RESPECTIVELY.search(sentence)))


def sentence_stems(sentence: str) -> frozenset[str]:
    """A sentence's stems, compound words read apart ("low-carbohydrate", "FMS/RSV")."""
    return frozenset(stem_sequence(JOINED_WORDS.sub(" ", sentence)))


def arms_named_apart(stems: frozenset[str], q: CompiledQuestion) -> tuple[frozenset[str], set[str]]:
    """A question's two arms each named, in a sentence of ``sentence_stems``, by a word of its own phrase that the
    other's lacks (``CompiledQuestion.apart_words``: "25% of intranasal and 9% of intramuscular dosing visits" for
    intranasal vs intramuscular glucagon; "(empiric vs. hemodynamic ...)"): both arms' stems and both roles, else
    nothing."""
    if not q.comparator or not all(stems & words for words in q.apart_words.values()):
        return frozenset(), set()
    return q.intervention[0].stems | q.comparator[0].stems, {"intervention", "comparator"}


#: The trial's control arm named as such ("than in the control group", "the control (CG) group", "compared with
#: controls"), not an outcome's word ("glycaemic control").
_CONTROL_ARM = re.compile(r"\bcontrol\s+(?:\([A-Za-z0-9-]{1,8}\)\s+)?"
                          r"(?:group|arm|condition|patients|subjects|participants)s?\b|\bcontrols\b", re.IGNORECASE)


#: Words that set a claim's groups against each other when it names none of them by treatment ("lower than",
#: "between", "compared", "versus", "similar", "superior", "in favour of", "6 days in the control group against 4",
#: "more likely", "but not after chemotherapy").
_GROUPS_SET_AGAINST = re.compile(
    rf"{_SET_AGAINST.pattern}|\bsuperior|\binferior|\bfavou?r|\bagainst\b|\bbut not\b|\b(?:more|less) likely\b",
    re.IGNORECASE)


#: A test beside a group ("in the TCF group (P = 0.001)"), which sets the groups against each other when the
#: finding is comparative ("healing was higher in the TCF group (P = 0.001)", "only the TCF group improved (P =
#: 0.001)"), not one group's own change ("the control group showed a significant decrease in BMD over the 2 years
#: (P < 0.05)").
_TEST_BESIDE_GROUP = re.compile(r"\b(?:groups?|arms?)\b[^.;]*\bp\s*[<=>≤]|\bp\s*[<=>≤][^.;]*\b(?:groups?|arms?)\b",
                                re.IGNORECASE)


#: A value given for each of two groups side by side ("2.4% in 56 children in the vitamin A group; 1.8% in 57
#: children in the vitamin A and zinc group"), which sets them against each other without a comparison word.
_VALUES_BY_GROUP = re.compile(r"\d[\d.,]*\s*%?[^.;]{0,60}?\bin\s+the\s+[^.;]{1,50}?\bgroup\b[^.]{0,40}?"
                              r"\d[\d.,]*\s*%?[^.;]{0,60}?\bin\s+the\s+[^.;]{1,50}?\bgroup\b", re.IGNORECASE)


_COMPARATIVE_WORD = re.compile(r"\b(?:higher|lower|greater|smaller|larger|more|less|fewer|better|worse|faster|slower|"
                               r"longer|shorter|earlier|later|only)\b", re.IGNORECASE)


#: A threshold or a range, which sets no groups against each other: "less than 7.8 mmol/L", "more than 50%",
#: "between 25 and 65 years".
_THRESHOLD_OR_RANGE = re.compile(r"\b(?:less|more|fewer|greater|lower|higher|longer|shorter|other)\s+than\s+"
                                 r"[<>≤≥]?\s*\d|\bbetween\s+[<>≤≥]?\s*\d[\d.,]*\s*(?:%|[a-zA-Z/]+)?\s+and\s+\d",
                                 re.IGNORECASE)


def sets_groups_against(sentence: str) -> bool:
    """Whether a claim that names no arm by treatment sets its groups against each other (``_GROUPS_SET_AGAINST``),
    or puts a test beside a group in a comparative finding (``_TEST_BESIDE_GROUP``), or gives two groups' values side
    by side (``_VALUES_BY_GROUP``), its thresholds and ranges left out ("patients aged between 25 and 65 years with
    HbA1c less than 7%"), and a group's own start too ("a bone loss of 1.4% compared with basal values")."""
    text = VS_BASELINE.sub(" ", _THRESHOLD_OR_RANGE.sub(" ", sentence))
    return (_GROUPS_SET_AGAINST.search(text) is not None or _VALUES_BY_GROUP.search(text) is not None
            or (_TEST_BESIDE_GROUP.search(text) is not None and _COMPARATIVE_WORD.search(text) is not None))


#: An untreated, placebo or usual-care arm named in an abstract ("placebo", "the control group", "controls",
#: "usual care", "no treatment"), not "control" of a symptom: a comparator for a question that names none.
_UNTREATED_ARM = re.compile(rf"\b(?:{'|'.join(PLACEBO_WORDS)}|untreated|nontreated)\b|{_CONTROL_ARM.pattern}"
                            r"|\b(?:usual|standard) care\b|\bno (?:treatment|intervention|therapy)\b", re.IGNORECASE)


def names_comparator(abstract: str, q: CompiledQuestion) -> bool:
    """Whether an abstract names a question's comparator: in its own words, or, unless the comparator is a drug of
    the lexicon, as the trial's untreated or control arm ("placebo", "the control group", "usual care"; a
    comparator that is no drug, "standard care" or "print materials", is the trial's control arm)."""
    if q.comparator and best_match(abstract_words(abstract), q.comparator)[1] is not None:
        return True
    return not (q.comparison == NAMED and q.comparator_is_drug) and bool(_UNTREATED_ARM.search(abstract))


def untreated_arm_named(abstract: str, q: CompiledQuestion) -> bool:
    """Whether an abstract names the untreated arm that a question names as its comparator ("placebo", "no
    exercise": ``names_comparator``); true for any other question. Groups named by role in an abstract of active
    arms only (two doses, two programmes) do not make that comparison."""
    return q.comparison != INACTIVE or not q.question.comparator or names_comparator(abstract, q)


def abstract_names_arms(abstract: str, q: CompiledQuestion) -> bool:
    """Whether an abstract (its ``abstract_words``) names a question's intervention, its comparator
    (``names_comparator``; a placebo or control arm where the question names none) and no drug of the lexicon
    outside the arms' kin (``CompiledQuestion.arm_kin``). Never for a question against "other" drugs, whose
    comparator is any drug."""
    abstract_stems = abstract_words(abstract)
    if (q.comparison == OTHER or best_match(abstract_stems, q.intervention)[1] is None
            or not names_comparator(abstract, q)):
        return False
    arms = {alt.stems for alt in (*q.intervention, *q.comparator)}
    return not named_drugs(abstract_stems, q)[1] - arms - q.arm_kin


#: Words that set two treatments equal ("equally effective", "equivalent", "as effective as"); not "no difference",
#: which a placebo-controlled trial also says of its groups.
_ACTIVE_EQUAL = re.compile(r"\bequally\b|\bequivalen|\bas (?:effective|efficacious|good) as\b", re.IGNORECASE)


def active_arms_equal(sentence: str, q: CompiledQuestion) -> bool:
    """Whether a claim sets arms equal without naming an untreated one, under a question against placebo or none
    ("estrogen-progestin regimens were equally effective"): its arms are active ones, so its "no difference" is
    not the question's."""
    return (q.comparison == INACTIVE and bool(_ACTIVE_EQUAL.search(sentence))
            and not _UNTREATED_ARM.search(sentence))


def untreated_against_active(sentence: str, q: CompiledQuestion) -> bool:
    """Whether a claim that names no drug sets a placebo or untreated arm against the other ("in the sibutramine
    and placebo groups", "than the control group") under a question of two active drugs ("do sulfonylureas cause
    more weight gain than metformin"; not "placebo with pravastatin"): its comparison is against no drug, not the
    question's."""
    return (q.comparison == NAMED and q.comparator_is_drug and not q.phrase_words["comparator"] & PLACEBO_STEMS
            and _UNTREATED_ARM.search(sentence) is not None)


#: Groups a study's selection made, not its arms, named by the selection word first ("the excluded and included
#: groups", "eligible and ineligible patients", "non-randomised and randomised patients", "screened vs enrolled
#: patients").
_SELECTION_GROUPS = re.compile(r"\b(?:excluded|included|eligible|ineligible|non-?randomi[sz]ed|non-?participants?|"
                               r"non-?enrolled|screened)\s+(?:and|or|vs\.?|versus)\s+(?:the\s+)?[\w-]+\s+"
                               r"(?:groups?|patients|subjects|cohorts?|populations?)\b", re.IGNORECASE)


def selection_groups(sentence: str) -> bool:
    """Whether a claim compares groups a study's selection made (``_SELECTION_GROUPS``), not its arms."""
    return _SELECTION_GROUPS.search(sentence) is not None


#: A drug added to another, the added one's words after it ("after the addition of metformin", "plus glyburide").
_ADDED = re.compile(r"\b(?:addition of|added to|add-on|plus|in combination with|combined with|in addition to)\s+"
                    r"((?:[\w-]+\s+){0,2}[\w-]+)", re.IGNORECASE)


def drug_add_on(sentence: str, q: CompiledQuestion) -> bool:
    """Whether a claim adds a drug of the lexicon to another ("after the addition of metformin, FPG fell, compared
    with an increase on sulfonylurea alone") under a question of two drugs that asks no add-on: it answers whether
    the second drug adds to the first, not which is better. Words after "combined with" that name no drug ("ulcer
    complications alone and combined with symptomatic ulcers") are no add-on."""
    return (not q.asks_add_on and q.comparator_is_drug
            and any(stem(w.lower()) in q.drug_words for m in _ADDED.finditer(sentence) for w in m.group(1).split()))


def compares_another(sentence: str, q: CompiledQuestion) -> bool:
    """Whether a claim compares something other than a question's arms though it may name them: dose levels
    (``compares_doses``), groups of the study's selection (``selection_groups``), the drugs combined
    (``fixed_combination``) or one added to another (``drug_add_on``)."""
    return (compares_doses(sentence, q) or selection_groups(sentence) or fixed_combination(sentence, q)
            or drug_add_on(sentence, q))


def abstract_answers(sentence: str, abstract: str, q: CompiledQuestion) -> bool:
    """Whether a claim that names no drug may answer a question through its abstract (its text;
    ``QuestionsConfig.whole_abstract``): the claim sets groups against each other (``sets_groups_against``), not
    each arm against its own start, nor active arms equal (``active_arms_equal``), nor an untreated arm against a
    question of two active drugs (``untreated_against_active``), and the abstract names the question's arms
    (``abstract_names_arms``). The outcome and population are checked as for every claim (``assess``,
    ``studied_population``)."""
    return (sets_groups_against(sentence) and not _WITHIN_ARMS.search(sentence) and not selection_groups(sentence)
            and not EACH_ARM.search(sentence) and not VS_BASELINE.search(sentence)
            and not active_arms_equal(sentence, q) and not untreated_against_active(sentence, q)
            and abstract_names_arms(abstract, q))


def control_is_comparator(sentence: str, abstract_stems: frozenset[str], q: CompiledQuestion) -> bool:
    """Whether a claim names a question's comparator as the control arm ("satisfaction was higher in the nitrous
    oxide than in the control group" for nitrous oxide against pure oxygen): the comparator is named, is no drug
    of the lexicon (a drug's trial calls its placebo arm the control), and the claim's abstract names it."""
    return (q.comparison == NAMED and bool(q.comparator) and _CONTROL_ARM.search(sentence) is not None
            and not q.comparator_is_drug
            and best_match(abstract_stems, q.comparator)[1] is not None)


@lru_cache(maxsize=256)
def abstract_words(abstract: str) -> frozenset[str]:
    """An abstract's content stems, bracketed text included, its abbreviations expanded (read once for all of its
    claims)."""
    return content_words(BRACKETS.sub(" ", abstract), abstract)
