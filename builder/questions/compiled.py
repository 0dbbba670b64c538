"""A question compiled against the lexicon (:class:`CompiledQuestion`): the alternatives of its
intervention, comparator, outcome and population, how it names its comparison (named, other drugs, or inactive)
and the lexicon's drugs, read once per question and shared by every rule that asks about it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import cached_property

from biodivergence_dataset.records import Question

from .lexicon import CHANGE_STEMS, Alternative, Distinction, Lexicon, alternatives, stem, terms

#: Words for people that say nothing of which population ("adults with migraine": migraine), beyond those
#: ``frameterms.terms`` already drops as generic ("patients", "subjects", "participants", "people").
PERSON_STEMS = frozenset(stem(w) for w in ("adult", "adults", "persons", "women", "men"))


#: The inactive treatment itself, in any form ("placebo patch", "sham acupuncture", "vehicle cream").
PLACEBO_WORDS = ("placebo", "sham", "vehicle")


#: Comparators that mean "no active drug" (a question without a comparator asks the same).
PLACEBO_COMPARATORS = (*PLACEBO_WORDS, "control", "controls", "usual care", "standard care",
                       "standard of care", "no treatment", "untreated", "no therapy", "no intervention", "saline",
                       "normal saline", "waiting list", "wait list")


#: Words by which a claim says its comparison arm took no active drug.
PLACEBO_STEMS = frozenset(stem(w) for w in (*PLACEBO_WORDS, "untreated", "nontreated"))


#: A dose ("12 mg"): a claim naming two doses and no placebo arm compares doses, not drug against placebo.
DOSE = re.compile(r"\b(\d+(?:\.\d+)?)\s?(?:mg|g|µg|μg|mcg|iu|ml)\b", re.IGNORECASE)


#: How a question names its comparison: a named comparator, "other …" drugs, or none / placebo.
NAMED, OTHER, INACTIVE = "named", "other", "inactive"


@dataclass(frozen=True)
class CompiledQuestion:
    question: Question
    intervention: tuple[Alternative, ...]
    comparator: tuple[Alternative, ...]
    outcome: tuple[Alternative, ...]
    #: NAMED / OTHER / INACTIVE (see :func:`comparison_kind`)
    comparison: str = INACTIVE
    #: every drug and drug-class name of the lexicon, flagged True for member drugs
    drugs: tuple[tuple[Alternative, bool], ...] = ()
    #: the ways a claim's abstract may name the question's population (empty: the question names none)
    population: tuple[Alternative, ...] = ()
    #: the names (stems) of each lexicon class an arm names, by the class or by a member, and every drug name an
    #: arm's phrase holds ("statin" for atorvastatin; "metformin" in "dapagliflozin plus metformin"): an abstract
    #: naming one names the arms' kind, not another treatment (``abstract_names_arms``); a sibling member
    #: ("simvastatin") is another treatment
    arm_kin: frozenset[frozenset[str]] = frozenset()
    #: the lexicon's endpoint and setting distinctions (``endpoints.other_endpoint``, ``endpoints.other_setting``)
    distinctions: tuple[Distinction, ...] = ()
    #: the ids of the pack's questions that ask the same comparison in another population (``rival_population``;
    #: found once when the pack is compiled, so a claim is never set against every question of a large pack)
    rivals: frozenset[str] = frozenset()

    @cached_property
    def population_stems(self) -> frozenset[str]:
        """Every stem of every way of naming the question's population (empty when it names none)."""
        return frozenset().union(*(alt.stems for alt in self.population))

    @cached_property
    def drug_words(self) -> frozenset[str]:
        """The stems of the lexicon's one-word drug and drug-class names ("metformin", "glipizide", "thiazide")."""
        return frozenset(next(iter(alt.stems)) for alt, _ in self.drugs if len(alt.stems) == 1)

    @cached_property
    def phrase_words(self) -> dict[str, frozenset[str]]:
        """The stems of each arm's own phrase (``intervention``, ``comparator``), compound words read apart
        ("ultrasound-guided", "pravastatin/day")."""
        return {role: terms(JOINED_WORDS.sub(" ", phrase or "")) for role, phrase in
                (("intervention", self.question.intervention), ("comparator", self.question.comparator))}

    @cached_property
    def arm_words(self) -> dict[str, frozenset[str]]:
        """Every stem by which a claim may name each arm in a word before "group": those of its alternatives and
        of its own phrase (``phrase_words``)."""
        alts = {"intervention": self.intervention, "comparator": self.comparator}
        return {role: frozenset().union(*(alt.stems for alt in alts[role]), words)
                for role, words in self.phrase_words.items()}

    @cached_property
    def asks_add_on(self) -> bool:
        """Whether an arm adds a therapy to another ("polyglycolic acid plus stent" to "stent alone",
        "co-administration of fimasartan/rosuvastatin"): then a claim comparing an add-on may answer it."""
        return any(add_on(phrase or "") for phrase in (self.question.intervention, self.question.comparator))

    @cached_property
    def arms_name_dose(self) -> bool:
        """Whether an arm's phrase names a dose, by its level or its amount ("high-dose", "20 mg"): then a claim
        setting dose levels against each other may answer it (``compares_doses``)."""
        arms = f"{self.question.intervention or ''} {self.question.comparator or ''}"
        return DOSE_LEVEL.search(arms) is not None or DOSE.search(arms) is not None

    @cached_property
    def arms_share_treatment(self) -> bool:
        """Whether the arms' phrases share a treatment word ("dexamethasone and diclofenac" against "diclofenac
        alone"): then a claim naming that treatment on both sides of a comparison may answer it
        (``compares_itself``)."""
        return bool(self.phrase_words["intervention"] & self.phrase_words["comparator"] - _NOT_ARM_NAMES)

    @cached_property
    def apart_words(self) -> dict[str, frozenset[str]]:
        """The stems of each arm's own phrase (compound words read apart) that the other arm's words lack and that
        name a treatment (not its time, dose or co-treatment): a claim using one names that arm alone."""
        return {role: self.phrase_words[role] - self.arm_words[other] - _NOT_ARM_NAMES
                for role, other in (("intervention", "comparator"), ("comparator", "intervention"))}

    @cached_property
    def comparator_is_drug(self) -> bool:
        """Whether the comparator's phrase names a drug or drug class of the lexicon (see ``names_a_drug``)."""
        return names_a_drug(self.question.comparator or "", self)

    @property
    def other_drugs(self) -> tuple[Alternative, ...]:
        """The lexicon's drugs and classes other than the intervention's names: the arms of "other …" drugs."""
        asked = {a.stems for a in self.intervention}
        return tuple(alt for alt, _ in self.drugs if alt.stems not in asked)


_ARM_SUFFIX = re.compile(r"\s+(?:group|arm)s?$")


#: How a comparator names the absence of a treatment ("no exercise", "without supplementation").
_ABSENCE = ("no ", "without ")


#: A placebo in the form the treatment takes, or matched to it ("placebo patch", "sham acupuncture", "vehicle
#: cream", "matching placebo").
_PLACEBO_FORM = re.compile(rf"^(?:{'|'.join(PLACEBO_WORDS)})\b|\b(?:matching|matched|identical|dummy) placebo$")


def comparison_kind(comparator: str | None) -> str:
    """INACTIVE without a comparator, with a placebo-like one ("placebo", "the control group") or with the absence
    of a treatment ("no exercise", "without omega-3 fatty acids": the trial's untreated arm), OTHER for "other …"
    drugs, else NAMED."""
    plain = _ARM_DETAIL.sub(" ", comparator or "")  # "saline (3 ml)"
    text = _ARM_SUFFIX.sub("", " ".join(plain.lower().split()).removeprefix("a ").removeprefix("the "))
    if not text or text in PLACEBO_COMPARATORS or text.startswith(_ABSENCE) or _PLACEBO_FORM.search(text):
        return INACTIVE
    return OTHER if text.startswith(("other ", "another ")) else NAMED


def lexicon_drugs(lexicon: Lexicon) -> tuple[tuple[Alternative, bool], ...]:
    """Each drug-class name (False) and member drug (True) of the lexicon as an alternative labelled
    "name (class)" (placebo and sham, which the lexicon lists as a class of comparators, are no drug)."""
    out = {}
    for names, members in lexicon.classes:
        out.update({terms(n): (Alternative(terms(n), f"{n} ({names[0]})"), False) for n in names if terms(n)})
        out.update({terms(m): (Alternative(terms(m), f"{m} ({names[0]})"), True) for m in members if terms(m)})
    return tuple(v for k, v in out.items() if not k <= PLACEBO_STEMS)


#: What an arm's phrase may say beyond the treatment itself: an aside in brackets ("(0.15 mg/kg in 3 ml saline)")
#: and a dose or schedule ("50 mg", "1 mg/kg twice a day", "20 mg escitalopram/day").
_ARM_DETAIL = re.compile(r"\s*[(\[][^()\[\]]*[)\]]|\b\d+(?:[.,]\d+)?\s*(?:mg|g|µg|μg|mcg|iu|ml|mmol|units?)\b"
                         r"(?:\s*/\s*(?:kg|day|d|m2|ml|h)\b)*(?:\s+of\b)?"
                         r"|/\s*(?:kg|day|d|week|m2|h)\b"
                         r"|\b(?:once|twice|three times|four times)\s+(?:a|per)\s+(?:day|week)\b", re.IGNORECASE)


#: A word for the form a treatment takes, after what is given ("etanercept therapy", "vitamin D supplementation"):
#: a claim names the treatment ("the etanercept group") without it.
_ARM_FORM = re.compile(r"(?<=\w)\s+(?:therapy|therapies|regimen|supplementation|administration|medication)\b",
                       re.IGNORECASE)


#: An abbreviation the phrase defines for itself ("transcutaneous electroacupuncture (TEA)").
_OWN_ABBREVIATION = re.compile(r"\(([A-Z][A-Za-z0-9-]{1,9})\)")


def own_abbreviations(phrase: str) -> list[str]:
    """The abbreviations a question's phrase defines for itself, of two capitals or more ("forced expiratory volume
    in 1 second (FEV1)": "FEV1"): a claim names the measure or arm by them alone."""
    return [m.group(1) for m in _OWN_ABBREVIATION.finditer(phrase) if sum(ch.isupper() for ch in m.group(1)) >= 2]


def with_alternatives_of(alts: tuple[Alternative, ...], texts: Iterable[str], lexicon: Lexicon
                         ) -> tuple[Alternative, ...]:
    """``alts`` and, after them, each alternative of ``texts`` whose stems none before has."""
    found = {a.stems: a for a in alts}
    for text in texts:
        for alt in alternatives(text, lexicon):
            found.setdefault(alt.stems, alt)
    return tuple(found.values())


#: A word for the course of a condition that a claim about it seldom repeats ("triptans for acute migraine": the
#: claims say "migraine"); words of severity ("severe hypoglycaemia") are kept, since they change the endpoint.
_COURSE = re.compile(r"^(?:acute|chronic|recurrent|persistent)\s+(?=\S)", re.IGNORECASE)


def without_course(phrase: str) -> list[str]:
    """The outcome phrase without a leading course word ("acute otitis media": "otitis media"), if it has one."""
    plain = _COURSE.sub("", phrase)
    return [plain] if plain != phrase else []


def outcome_alternatives(phrase: str, lexicon: Lexicon) -> tuple[Alternative, ...]:
    """Every way a claim may name an outcome: ``alternatives`` of its phrase, and of it without a leading course
    word (``without_course``), each with its words of change ignored and a long phrase named with its head noun;
    and an abbreviation the phrase defines."""
    found: dict[frozenset[str], Alternative] = {}
    for text in (phrase, *without_course(phrase)):
        for alt in alternatives(text, lexicon, CHANGE_STEMS, head=True):
            found.setdefault(alt.stems, alt)
    return with_alternatives_of(tuple(found.values()), own_abbreviations(phrase), lexicon)


def arm_alternatives(phrase: str, lexicon: Lexicon) -> tuple[Alternative, ...]:
    """Every way a claim may name an arm: ``alternatives`` of its phrase; of the phrase without bracketed
    asides and doses ("50 mg of fentanyl": "fentanyl"; a claim names the drug, its abstract the dose), and also
    without the treatment's form ("etanercept therapy": "etanercept"); and an
    abbreviation the phrase defines in brackets ("transcutaneous electroacupuncture (TEA)": "TEA")."""
    plain = " ".join(_ARM_DETAIL.sub(" ", phrase).split())
    extra = [text for text in dict.fromkeys((plain, _ARM_FORM.sub("", plain))) if text and text != phrase]
    return with_alternatives_of(alternatives(phrase, lexicon), extra + own_abbreviations(phrase), lexicon)


#: Packs at least this large show a progress bar while they compile (about 2 ms a question).
PROGRESS_FROM = 1000


def compile_questions(questions: list[Question], lexicon: Lexicon) -> list[CompiledQuestion]:
    """Each question read against the lexicon, with its rivals in the pack (``with_rivals``)."""
    from tqdm import tqdm

    drugs = lexicon_drugs(lexicon)
    out = []
    for q in tqdm(questions, desc="compiling questions", unit=" questions", mininterval=2.0, leave=False,
                  disable=len(questions) < PROGRESS_FROM):
        intervention = arm_alternatives(q.intervention or "", lexicon)
        asked = {a.stems for a in intervention}
        # a comparator is matched by what the intervention is not ("COX-2 inhibitors" vs "NSAIDs")
        comparator = tuple(a for a in (arm_alternatives(q.comparator, lexicon) if q.comparator else ())
                           if a.stems not in asked)
        outcome = outcome_alternatives(q.outcome or "", lexicon)
        out.append(CompiledQuestion(q, intervention, comparator, outcome, comparison_kind(q.comparator), drugs,
                                    alternatives(q.population or "", lexicon, PERSON_STEMS),
                                    arm_kin(q, (*intervention, *comparator), lexicon), lexicon.distinctions))
    return with_rivals(out)


def _stem_sets(alts: tuple[Alternative, ...]) -> frozenset[frozenset[str]]:
    return frozenset(alt.stems for alt in alts)


def with_rivals(compiled: list[CompiledQuestion]) -> list[CompiledQuestion]:
    """Each question with ``rivals``: the questions asking its comparison (the same ways of naming the intervention
    and the outcome) in another population (other ways of naming it); grouped by comparison, so a pack of
    thousands of questions costs one pass."""
    by_comparison: dict[tuple, list[CompiledQuestion]] = {}
    for q in compiled:
        if q.population:
            by_comparison.setdefault((_stem_sets(q.intervention), _stem_sets(q.outcome)), []).append(q)
    rivals = {q.question.question_id: frozenset(o.question.question_id for o in group
                                                if _stem_sets(o.population) != _stem_sets(q.population))
              for group in by_comparison.values() for q in group}
    return [replace(q, rivals=rivals[q.question.question_id]) if rivals.get(q.question.question_id) else q
            for q in compiled]


def arm_kin(q: Question, arms: tuple[Alternative, ...], lexicon: Lexicon) -> frozenset[frozenset[str]]:
    """``CompiledQuestion.arm_kin``: the stems of the class names of each lexicon class that the arms' phrases or
    alternatives name (by a class name or a member), and of every lexicon name the phrases hold."""
    said = terms(JOINED_WORDS.sub(" ", f"{q.intervention or ''} {q.comparator or ''}")).union(
        *(alt.stems for alt in arms))
    kin = set()
    for names, members in lexicon.classes:
        stems = [s for s in map(terms, (*names, *members)) if s]
        kin.update(s for s in stems if s <= said)
        if any(s <= said for s in stems):  # the class's own names, not its other members
            kin.update(s for s in map(terms, names) if s)
    return frozenset(kin)


def named_drugs(words: frozenset[str], q: CompiledQuestion) -> tuple[set[frozenset[str]], set[frozenset[str]]]:
    """The drugs a claim names, as (member drugs, all names), each the longest name matched ("conjugated
    equine estrogens", not also "estrogens")."""
    found = [(alt.stems, member) for alt, member in q.drugs if alt.stems <= words]
    longest = [(st, m) for st, m in found if not any(st < other for other, _ in found)]
    return {st for st, m in longest if m}, {st for st, _ in longest}


#: An arm that adds a therapy to another ("HRT+MFP", "metformin plus glyburide", "HRT alone", "no benefit
#: additional to that of HRT", "the addition of … metformin", "concomitant use of fluticasone and olopatadine").
_ADD_ON = re.compile(r"\w\s?\+\s?\w|\bplus\b|\bcombined (?:with|therapy|treatment)\b|\bcombination\b|\balone\b"
                     r"|\badditional to\b|\bin addition to\b|\baddition of\b|\badd-on\b|\bco-?administ|\bconcomitant(?:ly)? "
                     r"(?:use|administration|treatment|therapy|given)\b", re.IGNORECASE)


def add_on(sentence: str) -> bool:
    """Whether a claim compares an add-on (a drug with another therapy, or another therapy on top of it), which
    only a question asking an add-on answers (``CompiledQuestion.asks_add_on``): "a greater increase with
    HRT+MFP than with HRT" is not whether HRT increases bone density, "combining barnidipine with atenolol" not
    whether atenolol is as effective as other drugs."""
    return _ADD_ON.search(sentence) is not None


#: Words that name a dose by its level ("low", "standard", "maximal"), as a pattern alternation.
DOSE_LEVEL_WORDS = r"low|lower|standard|high|higher|usual|maximal|maximum|full|moderate|intermediate"


#: A dose level put in words ("high-dose", "standard and high doses", "low or standard dosing").
DOSE_LEVEL = re.compile(rf"\b({DOSE_LEVEL_WORDS})"
                         r"(?=(?:(?: and| or| vs\.?| versus| to)(?: [\w-]+){1,3})?[- ]dos(?:e|es|ing|age)\b)",
                         re.IGNORECASE)


#: What joins the parts of a compound word or quotes it ("celecoxib-treated", "pravastatin/day", "'high dose'"):
#: read apart to name an arm.
JOINED_WORDS = re.compile(r"[-/'‘’]")


#: Words of an arm's phrase that name no treatment: when, how long, how much.
_NOT_ARM_NAMES = frozenset(stem(w) for w in (
    "day", "days", "daily", "week", "weeks", "weekly", "month", "months", "year", "years", "hour", "hours", "dose",
    "doses", "dosing", "time", "times", "receiving", "received", "given", "alone", "plus", "combined", "combination",
    "mg", "kg"))


def names_a_drug(sentence: str, q: CompiledQuestion) -> bool:
    """Whether a claim names any drug or drug class of the lexicon (``q.drugs``, the same for every question),
    hyphenated words read apart ("lisinopril-induced cough", "in the felodipine and placebo groups"): its arms are
    then named by treatment, not by role."""
    return bool(named_drugs(terms_apart(sentence), q)[1])


def terms_apart(sentence: str) -> frozenset[str]:
    """A sentence's terms with its hyphenated words read apart ("lisinopril-induced", "sumatriptan-treated")."""
    return terms(sentence.replace("-", " "))


#: Brackets, read through in an abstract: a trial often names its arms inside one that also holds numbers
#: ("the placebo groups (fenoldopam, constant rate infusion [CRI] of 0.1 μg/kg/min or saline, respectively)"),
#: which a claim's words leave out as statistics.
BRACKETS = re.compile(r"[()\[\]]")
