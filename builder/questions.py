"""Stage: Claim → Assignment (claims → the pack's questions they answer), between claims and mine.

A claim answers a question when it speaks of the question's intervention (or exposure) **and** its
outcome. Both are matched as content stems (``builder.frames.terms``), abbreviations expanded with the
definitions of the claim's own abstract ("blood pressure (BP)"), with one clinical lexicon
(``builder/lexicons/clinical.yaml``): a drug class in a question is met by any of its member drugs
("statins" ⊃ "pravastatin"), and a phrase of a synonym group by any other ("BP" = "blood pressure").
The embedding similarity of the claim sentence and the question text is the third signal: it enters the
score, a claim far from the question (below ``min_similarity``) is not assigned, and (when configured,
``similarity_alone``) a very close one may stand in for a missing outcome match. A sentence about the
groups before treatment (baseline characteristics) or a correlation between measures
(:func:`reports_correlation`) answers no question, nor does a claim whose abstract
never names the question's population (:func:`studied_population`), names it only as absent
(:func:`excluded_population`), or names only the population of another question of the same comparison
(:func:`rival_population`: infarction, not heart failure). The comparison must be the question's
(:func:`other_comparison`): a named comparator must be named, and a question against placebo (or with no
comparator) is not answered by a head-to-head claim of two active drugs.

Output: one :class:`Assignment` row per (claim, question) with its score and why, ``questions.json`` (the
pack's questions, as the miner attaches them to pairs) and ``stats.json``. The sentences of the claims that
name a question's intervention and outcome (:func:`may_answer`; the others cannot answer one) are embedded on
the runtime's ranks into the miner's embedding cache (``cache_dir``), so mine does not embed them again; the
matching runs sharded on the same executors as the claims stage.

CLI: ``biodivergence questions CLAIMS_DIR --pack FILE --out DIR``.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Literal, NamedTuple

import numpy as np
import yaml
from pydantic import BaseModel, ConfigDict, Field

from biodivergence_dataset import cues, io
from biodivergence_dataset.records import Abstract, Claim, Question, _Record

from . import frames
from .embeddings import DEFAULT_MODEL, PRECISIONS
from .folders import claim_output
from .frames import _WORD_RE, CHANGE_FROM, STATISTICS, VS_BASELINE, Span, abbreviations
from .questionpacks import load_questions, unread_fields
from .runtime import RuntimeConfig, ShardJob, check_stage_input, clear_tasks, run_sharded

STAGE = "questions"
QUESTIONS_FILE = "questions.json"
LEXICON = Path(__file__).parent / "lexicons" / "clinical.yaml"


class QuestionsConfig(BaseModel):
    """Parameters of question assignment (a YAML ``questions:`` section maps onto this)."""

    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    #: The question pack (None: the build skips the stage and mining is as without questions).
    pack: str | None = None
    lexicon: str = str(LEXICON)
    #: A claim below this cosine to the question is not assigned to it, whatever its words.
    min_similarity: float = Field(0.20, ge=-1.0, le=1.0)
    #: A claim this close to a question whose intervention it names needs no outcome word match. Off by default
    #: (above any cosine): on the Cohen demo such claims mostly spoke of another outcome of the same drugs (at
    #: 0.65-0.75 nearly all; above 0.80 about half: dry mouth for weight gain, relief for adverse events), and
    #: the reader, asked about an outcome the claim does not name, guesses.
    similarity_alone: float = Field(1.01, ge=-1.0, le=1.01)
    #: Share of the content stems of an outcome phrase of three or more stems a claim must contain (a shorter
    #: phrase: all of them; interventions: all, or two thirds from three on).
    min_outcome_coverage: float = Field(2 / 3, gt=0.0, le=1.0)
    #: A claim that names no drug may answer a question through its abstract (``abstract_answers``): the abstract
    #: names the question's arms and no other drug of the lexicon, and the claim names the outcome and sets groups
    #: against each other ("healing rates did not differ between the LAN30 and OME40 groups"). Right for trials
    #: grouped by question (a review's included studies, a reviewer's own files); on the Evidence Inference
    #: question benchmark it assigns about half again as many articles, each claim to its own trial's question
    #: (``benchmarks/results/question_recall.md``). With it, an article whose abstract answers a question as a
    #: whole answers it with one claim (``article_answers``). Off for abstracts gathered by search from a corpus
    #: where most merely mention the drugs: on the Cohen demo about 8 of 20 claims it added answered the question.
    whole_abstract: bool = True
    #: Under ``whole_abstract``, an article whose abstract answers a question as a whole but none of whose claims
    #: names the question's outcome in its words answers it with its claim closest to the question when that
    #: cosine reaches this (``article_answers``). Evidence Inference outcomes are often said otherwise in the
    #: trial ("fracture union success rate": "a higher rate of union"). The claim must name a word of the outcome
    #: besides its last (``names_part_of``) and no drug but the question's arms. On the question benchmark's
    #: development sample, 0.6 with no word required took 23 articles, 20 for their own trial's question (0.5: 53,
    #: 31); as shipped it takes the article row from 310 to 320 of 400 (check sample: 193 to 215 of 282).
    article_similarity_alone: float = Field(0.6, ge=-1.0, le=1.01)
    #: How claims are assigned: ``rules`` (the lexicon and the word rules of this module, grown on the Cohen demo)
    #: or ``learned`` (``question_relevance``: the question answerer's relevance among the ``learned_candidates``
    #: questions closest by cosine, at least ``min_similarity``; only the general filters of ``GENERAL_FILTERS``
    #: apply, and ``whole_abstract`` does not). On the Evidence Inference check articles (181 prompts as a pack)
    #: learned finds more (evidence claim assigned 126 against 119, the article 166 against 136) but 107 of its 273
    #: assignments come from another trial than the prompt's, the rules' none (``benchmarks/results/
    #: question_recall_learned.md``): it stays opt-in until its relevance learns to tell another trial's finding
    #: on a similar outcome from an answer.
    assigner: Literal["rules", "learned"] = "rules"
    learned_candidates: int = Field(3, ge=1)
    #: The question answerer folder for ``assigner: learned`` (None: the shipped one).
    answerer: str | None = None
    #: Abstracts folder (abbreviation definitions; default: the claims stage's manifest input).
    abstracts_dir: str | None = None
    model: str = DEFAULT_MODEL
    device: str = "cpu"
    precision: Literal[PRECISIONS] = PRECISIONS[0]  # type: ignore[valid-type]
    batch_size: int = Field(64, ge=1)
    #: The embedding cache (the build points it at the miner's, so mine reuses these vectors).
    cache_dir: str | None = None
    shard_size: int = io.DEFAULT_SHARD_SIZE


class Assignment(_Record):
    """One claim answering one question: how well (score in [0, 1]) and why (the matched words)."""

    claim_id: str
    question_id: str
    article_uid: str
    score: float
    why: str


# --- the lexicon and the matcher -------------------------------------------------------------------------
@dataclass(frozen=True)
class Alternative:
    """One way a claim can name a slot: content stems, what they stand for, and the stems it must contain
    (a synonym put in place of part of the phrase must be there whole)."""

    stems: frozenset[str]
    label: str
    core: frozenset[str] = frozenset()

    def covered(self, words: frozenset[str]) -> float:
        if not self.stems or not self.core <= words:
            return 0.0
        return len(self.stems & words) / len(self.stems)


#: British spellings read as American ones, so a question asked in one spelling finds claims written in the
#: other: haemoglobin, oedema, coeliac, tumour, centre, sulphonylurea. Applied to stems (both sides of every match).
_BRITISH = ((re.compile(r"(?:ae|oe)(?=[a-z])"), "e"), (re.compile(r"(?<=[a-z]{2})our$"), "or"),
            (re.compile(r"(?<=[a-z]{2})tre$"), "ter"), (re.compile(r"^sulph"), "sulf"))


def american(word_stem: str) -> str:
    """A stem in American spelling (``_BRITISH``): "oesophagiti" -> "esophagiti", "tumour" -> "tumor"."""
    for pattern, replacement in _BRITISH:
        word_stem = pattern.sub(replacement, word_stem)
    return word_stem


def stem(word: str) -> str:
    """``frames.stem`` in American spelling."""
    return american(frames.stem(word))


def stem_sequence(text: str) -> list[str]:
    """``frames.stem_sequence`` in American spelling."""
    return [american(s) for s in frames.stem_sequence(text)]


def terms(text: str, abbrevs: dict[str, frozenset[str]] | None = None) -> frozenset[str]:
    """``frames.terms`` (content stems, abbreviations expanded) in American spelling."""
    return frozenset(american(s) for s in frames.terms(text, abbrevs))


#: Words of change ("reduction", "improve", "gain"): how an outcome moves, not which outcome it is.
CHANGE_STEMS = frozenset(stem(w) for w in cues.INCREASE_WORDS + cues.DECREASE_WORDS if " " not in w)


@dataclass(frozen=True)
class Lexicon:
    classes: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]  # (names, members)
    synonyms: tuple[tuple[str, ...], ...]


@lru_cache(maxsize=4)
def load_lexicon(path: str | Path = LEXICON) -> Lexicon:
    """The clinical lexicon: drug classes (names → members) and synonym groups; errors name the file and entry."""
    path = Path(path)
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    classes = []
    for i, entry in enumerate(data.get("drug_classes") or [], 1):
        if not isinstance(entry, dict) or not entry.get("names") or not isinstance(entry.get("members", []), list):
            raise ValueError(f"{path}: drug_classes entry {i}: needs names: [...] and members: [...]")
        classes.append((tuple(map(str, entry["names"])), tuple(map(str, entry.get("members") or ()))))
    synonyms = []
    for i, group in enumerate(data.get("synonyms") or [], 1):
        if not isinstance(group, list) or len(group) < 2:
            raise ValueError(f"{path}: synonyms entry {i}: a list of at least two phrases")
        synonyms.append(tuple(map(str, group)))
    return Lexicon(tuple(classes), tuple(synonyms))


def _contains(words: frozenset[str], phrase_stems: frozenset[str]) -> bool:
    return bool(phrase_stems) and phrase_stems <= words


#: Two words joined by a hyphen, neither a prefix nor a number ("LDL-cholesterol", not "non-small", "IL-6").
_HYPHENATED_WORDS = re.compile(r"\b(?!(?:non|anti|pre|post|co|re|sub|semi|multi|inter|intra|over|under|self|well|"
                               r"low|high|long|short|first|second|third|once|twice)-)([A-Za-z]{3,})-([A-Za-z]{3,})\b",
                               re.IGNORECASE)


def alternatives(phrase: str, lexicon: Lexicon, ignore: frozenset[str] = frozenset(), head: bool = False
                 ) -> tuple[Alternative, ...]:
    """Every way a claim may name ``phrase``: its own stems; for a drug class it names, each member drug;
    for a synonym-group phrase in it, the phrase with that part replaced by each other phrase of the group
    (which the claim must then contain whole). Stems in ``ignore`` are left out (unless nothing else is left).
    With ``head``, a phrase of three stems or more is named only with its last one, the noun it is about
    ("left ventricular mass" is not "left ventricular ejection fraction")."""
    own = terms(phrase)
    own = own - ignore or own
    sequence = [s for s in stem_sequence(phrase) if s in own]
    last = frozenset(sequence[-1:]) if head and len(own) >= 3 else frozenset()
    out = [Alternative(own, phrase, last)]
    for names, members in lexicon.classes:
        if any(_contains(own, terms(n)) for n in names):
            out += [Alternative(terms(n), n) for n in names]
            out += [Alternative(terms(m), f"{m} ({names[0]})") for m in members]
    for group in lexicon.synonyms:
        for phrase_in in group:
            inner = terms(phrase_in)
            if _contains(own, inner):
                out += [Alternative((own - inner) | terms(other), f"{other} (= {phrase_in})",
                                    terms(other) | (last - inner)) for other in group if other != phrase_in]
    # a phrase that is one hyphenated compound of two words also names them apart ("LDL-cholesterol" as "LDL
    # cholesterol"); both words are then needed (a longer phrase read apart would need only two thirds of its words:
    # "extended release" would name "immediate-release oxybutynin")
    if (apart_phrase := _HYPHENATED_WORDS.sub(r"\1 \2", phrase)) != phrase and len(apart := terms(apart_phrase)) == 2:
        out.append(Alternative(apart, phrase))
    # a hyphenated word also names the one-word spelling ("pre-eclampsia" for "preeclampsia"; words add both)
    out += [Alternative(frozenset(x.replace("-", "") for x in alt.stems), alt.label,
                        frozenset(x.replace("-", "") for x in alt.core)) for alt in out if any("-" in x for x in alt.stems)]
    seen: dict[frozenset[str], Alternative] = {}
    for alt in out:
        if alt.stems:
            seen.setdefault(alt.stems, alt)
    return tuple(seen.values())


def best_match(words: frozenset[str], alts: tuple[Alternative, ...], share: float = 2 / 3
               ) -> tuple[float, Alternative | None]:
    """The best-covered alternative that passes, and its coverage: an alternative of one or two stems needs
    both, a longer one ``share`` of them."""
    best: tuple[float, Alternative | None] = (0.0, None)
    for alt in alts:
        cov = alt.covered(words)
        needed = 1.0 if len(alt.stems) < 3 else share
        if cov >= needed - 1e-9 and cov > best[0]:
            best = (cov, alt)
    return best


#: Words for people that say nothing of which population ("adults with migraine": migraine), beyond those
#: ``frames.terms`` already drops as generic ("patients", "subjects", "participants", "people").
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
_DOSE = re.compile(r"\b(\d+(?:\.\d+)?)\s?(?:mg|g|µg|μg|mcg|iu|ml)\b", re.IGNORECASE)
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
        return {role: terms(_JOINED_WORDS.sub(" ", phrase or "")) for role, phrase in
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
        return _DOSE_LEVEL.search(arms) is not None or _DOSE.search(arms) is not None

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


def compile_questions(questions: list[Question], lexicon: Lexicon) -> list[CompiledQuestion]:
    drugs = lexicon_drugs(lexicon)
    out = []
    for q in questions:
        intervention = arm_alternatives(q.intervention or "", lexicon)
        asked = {a.stems for a in intervention}
        # a comparator is matched by what the intervention is not ("COX-2 inhibitors" vs "NSAIDs")
        comparator = tuple(a for a in (arm_alternatives(q.comparator, lexicon) if q.comparator else ())
                           if a.stems not in asked)
        outcome = outcome_alternatives(q.outcome or "", lexicon)
        out.append(CompiledQuestion(q, intervention, comparator, outcome, comparison_kind(q.comparator), drugs,
                                    alternatives(q.population or "", lexicon, PERSON_STEMS),
                                    arm_kin(q, (*intervention, *comparator), lexicon)))
    return out


def arm_kin(q: Question, arms: tuple[Alternative, ...], lexicon: Lexicon) -> frozenset[frozenset[str]]:
    """``CompiledQuestion.arm_kin``: the stems of the class names of each lexicon class that the arms' phrases or
    alternatives name (by a class name or a member), and of every lexicon name the phrases hold."""
    said = terms(_JOINED_WORDS.sub(" ", f"{q.intervention or ''} {q.comparator or ''}")).union(
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


#: Two words joined by a slash ("glyburide/metformin", "glipizide/ metformin"), by a hyphen before a dose or
#: "tablets" ("metformin-glibenclamide 500 mg/2.5 mg"; not the difference "95%CI for zotepine-haloperidol -9.34"),
#: or by "plus" or "combined with" ("glyburide at lower doses plus metformin").
_JOINED = re.compile(r"\b([A-Za-z]{4,})(?: ?/ ?([A-Za-z]{4,})\b|-([A-Za-z]{4,})(?= \d| tablet)"
                     r"|(?:\s+at\s+(?:\w+\s+)?doses?)?\s+(?:plus|\+|combined with)\s+([A-Za-z]{4,})\b)", re.IGNORECASE)


#: Words that name a dose by its level ("low", "standard", "maximal"), as a pattern alternation.
_DOSE_LEVEL_WORDS = r"low|lower|standard|high|higher|usual|maximal|maximum|full|moderate|intermediate"
_LEVEL_DOSE = rf"(?:{_DOSE_LEVEL_WORDS})[- ]dos(?:e|es|ing|age)\b"
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
_EACH_ARM = re.compile(r"\bwith each (?:agent|drug|treatment|regimen)\b"
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
_TESTED = re.compile(r"\b[pP]\s*[<=>≤]|\bCI\b|\bNS\b|\b(?:[Hh]azard|[Oo]dds) ratio\b|\b[Rr]elative risk\b")
_RESPECTIVELY = re.compile(r"\brespectively\b", re.IGNORECASE)


#: A treatment named as a patient's allocation ("haloperidol-treated patients", "captopril-allocated deaths"):
#: the drug is a word of its own.
_ALLOCATED = re.compile(r"-(?=(?:treated|allocated|assigned|randomi[sz]ed)\b)", re.IGNORECASE)


@lru_cache(maxsize=4096)
def _arm_tokens(sentence: str) -> tuple[str, ...]:
    """A sentence's stemmed words with its clause punctuation, bracketed statistics left out (read once for all
    the questions a claim may answer)."""
    text = _ALLOCATED.sub(" ", STATISTICS.sub(" ", sentence))
    return tuple(t if t in ";,:" else stem(t.lower()) for t in _ARM_TOKENS.findall(text))


def _named_at(tokens: tuple[str, ...], alt: Alternative) -> list[int]:
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
_UNTREATED_STEMS = frozenset(stem(w) for w in ("not", "no", "without", "non", "untreated", "nontreated",
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
    tokens = _arm_tokens(sentence)
    asked = frozenset(a.stems for a in q.intervention)
    against = () if q.comparison == INACTIVE else q.comparator if q.comparison == NAMED else (
        q.comparator + q.other_drugs)
    # where the sentence names each drug, read once for both lists: every drug (its side: its own stems) and the
    # question's two arms
    at = {alt.stems: _named_at(tokens, alt) for alt in (*q.intervention, *against, *(alt for alt, _ in q.drugs))}
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
                            and not set(tokens[r + 1:near]) & (PLACEBO_STEMS | _UNTREATED_STEMS))
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
        not refs and bool(_TESTED.search(sentence) or _RESPECTIVELY.search(sentence))
        and not VS_BASELINE.search(sentence) and not _EACH_ARM.search(sentence))


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
    return _EFFECT_WORDS.search(STATISTICS.sub(" ", sentence)) is not None or _TESTED.search(sentence) is not None


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
    if q.comparison == INACTIVE or not _EQUAL.search(plain) or _UNEQUAL.search(plain):
        return False
    tokens = _arm_tokens(sentence)
    against = q.comparator if q.comparison == NAMED else q.comparator + q.other_drugs
    asked = {a.stems for a in q.intervention}
    named = [alt for alt in q.intervention if _named_at(tokens, alt)]
    return bool(named) and any(_named_at(tokens, alt) for alt in against if alt.stems not in asked)


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
    words = list(_WORD_RE.finditer(sentence))
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


#: A dose level put in words ("high-dose", "standard and high doses", "low or standard dosing").
_DOSE_LEVEL = re.compile(rf"\b({_DOSE_LEVEL_WORDS})"
                         r"(?=(?:(?: and| or| vs\.?| versus| to)(?: [\w-]+){1,3})?[- ]dos(?:e|es|ing|age)\b)",
                         re.IGNORECASE)


#: Doses counted in words ("all three doses of", "both doses"): two or more.
_SEVERAL_DOSES = re.compile(r"\b(?:two|three|four|both|all|different)\s+(?:\w+\s+)?dos(?:es|ages)\b", re.IGNORECASE)


def doses(sentence: str) -> int:
    """How many distinct doses a sentence names: amounts ("10 mg"), two levels or more ("standard and high
    doses"; one level, "high-dose", is the same dose as the amount beside it), or doses counted in words ("all
    three doses": two at least)."""
    levels = {m.lower() for m in _DOSE_LEVEL.findall(sentence)}
    several = 2 if _SEVERAL_DOSES.search(sentence) else 0
    return max(len(set(_DOSE.findall(sentence))) + (len(levels) if len(levels) >= 2 else 0), several)


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


#: Laboratory tests named by an outcome's word: a bleeding time measures platelet function, not bleeding.
_TESTS_NAMED_BY_OUTCOMES = re.compile(r"\bbleeding\s+times?\b", re.IGNORECASE)


def without_non_findings(sentence: str) -> str:
    """A sentence without what names a measure but is no finding of it: clauses that name measures as covariates
    ("the decreases in QT dispersion were greater with irbesartan; the same results were found when changes in
    blood pressure were included in multivariate analyses" says nothing of blood pressure as a finding), and
    laboratory tests named by an outcome's word ("bleeding times were less prolonged with meloxicam" says nothing
    of gastrointestinal bleeding)."""
    return _TESTS_NAMED_BY_OUTCOMES.sub(" ", _COVARIATES.sub(" ", sentence))


@lru_cache(maxsize=1024)
def _expansions(context: str) -> dict[str, frozenset[str]] | None:
    """The abbreviations a text defines (``frames.abbreviations``; None without a bracket), read once for a claim
    and its abstract however many of its readings ask (its words, its role clause's, its arm names')."""
    return abbreviations(context) if "(" in context else None


def unhyphenated(stems: frozenset[str]) -> frozenset[str]:
    """Each hyphenated stem also as one word ("pre-eclampsia": preeclampsia), as a question or abstract may spell
    it; stems without a hyphen are left as they are."""
    joined = {s.replace("-", "") for s in stems if "-" in s}
    return stems | joined if joined else stems


def _content_words(text: str, context: str) -> frozenset[str]:
    return unhyphenated(terms(text, _expansions(context)))


def claim_words(sentence: str, abstract: str = "") -> frozenset[str]:
    """A claim's content stems, abbreviations defined in its abstract (or itself) expanded, measures it names only
    as covariates or tests named by an outcome's word left out (``without_non_findings``)."""
    return _content_words(without_non_findings(sentence), f"{abstract} {sentence}")


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
#: A finding with no direction to misread, an equivalence ("similar", "comparable", "equivalent", "equally", "did
#: not differ", "no difference"), not a dose's ("(or equivalent)").
_EQUAL = re.compile(r"(?<!or )\b(?:similar|comparable|equally)\b|(?<!or )\bequivalen|\bno\s+(?:\w+\s+){0,2}differen"
                    r"|\bnot\s+(?:\w+\s+){0,2}differ", re.IGNORECASE)
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
            or _WITHIN_ARMS.search(sentence) or _EACH_ARM.search(sentence) or VS_BASELINE.search(sentence)
            or not _arms_unnamed(sentence) or _PLACEBO_NOT_ARM.search(sentence)):
        return False
    if _LABELLED_ARMS.search(sentence) and _THAN.search(sentence):
        return False  # a direction between lettered arms, whatever else the sentence finds similar
    if _EQUAL.search(sentence):
        return True
    return _LABELLED_ARMS.search(sentence) is None and _TREATED_VS_UNTREATED.search(sentence) is not None


#: Arms that are all active, compared among themselves ("among the 4 active treatment groups"): no arm is untreated,
#: so no question against placebo is answered.
_ACTIVE_ARMS = re.compile(r"\b(?:among|between|across)\s+(?:the\s+)?(?:\w+\s+)?active\s+(?:treatment\s+)?(?:groups|arms)\b",
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


#: What joins the parts of a compound word or quotes it ("celecoxib-treated", "pravastatin/day", "'high dose'"):
#: read apart to name an arm.
_JOINED_WORDS = re.compile(r"[-/'‘’]")
#: Words of an arm's phrase that name no treatment: when, how long, how much.
_NOT_ARM_NAMES = frozenset(stem(w) for w in (
    "day", "days", "daily", "week", "weeks", "weekly", "month", "months", "year", "years", "hour", "hours", "dose",
    "doses", "dosing", "time", "times", "receiving", "received", "given", "alone", "plus", "combined", "combination",
    "mg", "kg"))
#: Words of a compound arm name that say its role, not its treatment ("celecoxib-treated", "olanzapine-group").
_ARM_ROLE_STEMS = frozenset(stem(w) for w in ("treated", "group", "groups", "arm", "receiving", "allocated",
                                              "assigned", "randomized", "randomised"))


def group_name_words(sentence: str, abstract: str = "") -> tuple[frozenset[str], ...]:
    """The content stems of each of a claim's ``group_names``, abbreviations defined in its abstract expanded
    ("the HIP group": heme, iron, polypeptide, hip)."""
    names = group_names(sentence)
    if not names:
        return ()
    expand = _expansions(f"{abstract} {sentence}")
    return tuple(words for name in names if (words := terms(_JOINED_WORDS.sub(" ", name), expand) - _ARM_ROLE_STEMS))


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
    if "intervention" not in named or _WITHIN_ARMS.search(sentence) or _EACH_ARM.search(sentence) or (
            VS_BASELINE.search(sentence)):
        return False
    stems = set(stem_sequence(sentence))
    if q.comparison != INACTIVE and stems & PLACEBO_STEMS:
        return False
    if q.comparison == INACTIVE and "comparator" not in named and not stems & _UNTREATED_ARM_STEMS:
        return False  # the intervention set against something other than an untreated arm
    return _SET_AGAINST.search(sentence) is not None or (
        q.comparison == NAMED and "comparator" in named
        and bool(_TESTED.search(sentence) or _RESPECTIVELY.search(sentence)))


def sentence_stems(sentence: str) -> frozenset[str]:
    """A sentence's stems, compound words read apart ("low-carbohydrate", "FMS/RSV")."""
    return frozenset(stem_sequence(_JOINED_WORDS.sub(" ", sentence)))


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
            and not _EACH_ARM.search(sentence) and not VS_BASELINE.search(sentence)
            and not active_arms_equal(sentence, q) and not untreated_against_active(sentence, q)
            and abstract_names_arms(abstract, q))


def control_is_comparator(sentence: str, abstract_stems: frozenset[str], q: CompiledQuestion) -> bool:
    """Whether a claim names a question's comparator as the control arm ("satisfaction was higher in the nitrous
    oxide than in the control group" for nitrous oxide against pure oxygen): the comparator is named, is no drug
    of the lexicon (a drug's trial calls its placebo arm the control), and the claim's abstract names it."""
    return (q.comparison == NAMED and bool(q.comparator) and _CONTROL_ARM.search(sentence) is not None
            and not q.comparator_is_drug
            and best_match(abstract_stems, q.comparator)[1] is not None)


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
_BRACKETS = re.compile(r"[()\[\]]")


@lru_cache(maxsize=256)
def abstract_words(abstract: str) -> frozenset[str]:
    """An abstract's content stems, bracketed text included, its abbreviations expanded (read once for all of its
    claims)."""
    return _content_words(_BRACKETS.sub(" ", abstract), abstract)


def may_answer(words: frozenset[str], compiled: list[CompiledQuestion], config: QuestionsConfig,
               arms: frozenset[str] | None = None) -> bool:
    """Whether a claim's words could answer any question, its similarity unknown: it names a question's
    intervention (or its abstract does, ``arms``, for a claim naming its arms by role) and (unless a close
    similarity may stand in, ``similarity_alone``) its outcome. Only such claims are embedded; on the Cohen demo
    they are about a sixth of all claims."""
    arms = words if arms is None else arms
    return any(best_match(arms, q.intervention)[1] is not None
               and (config.similarity_alone <= 1.0
                    or best_match(words, q.outcome, config.min_outcome_coverage)[1] is not None)
               for q in compiled)


def claim_may_answer(sentence: str, abstract: str, words: frozenset[str], compiled: list[CompiledQuestion],
                     config: QuestionsConfig) -> bool:
    """Whether a claim (its sentence, abstract and ``claim_words``) could answer any question (``may_answer``):
    with the arms it names itself, by role (read in its abstract), by a word before "group" or each by a word only
    its phrase has."""
    if may_answer(words, compiled, config):
        return True
    if abstract and names_arms_by_role(sentence) and may_answer(words, compiled, config,
                                                               arms=words | abstract_words(abstract)):
        return True
    names = group_name_words(sentence, abstract)
    if names and any(may_answer(words, [q], config, arms=words | stems)
                     for q in compiled for stems, named in [arms_named_by_group(names, q)] if named):
        return True
    if not compiled or names_a_drug(sentence, compiled[0]):
        return False
    if (config.whole_abstract and abstract and sets_groups_against(sentence)
            and may_answer(words, compiled, config, arms=words | abstract_words(abstract))):
        return True
    stems = sentence_stems(sentence)
    return any(may_answer(words, [q], config, arms=words | apart)
               for q in compiled for apart, named in [arms_named_apart(stems, q)] if named)


def assess(words: frozenset[str], similarity: float, q: CompiledQuestion, config: QuestionsConfig, n_doses: int = 0,
           arms: frozenset[str] | None = None, arms_why: str = "named in the abstract; the claim names the arms by role",
           similarity_alone: float | None = None) -> tuple[float, str] | None:
    """``(score, why)`` when a claim with content stems ``words``, cosine ``similarity`` to the question and
    ``n_doses`` doses named answers it, else None. ``arms``: where the treatments are named, for a claim that
    names its arms by role (its abstract's stems) or by a word before "group" (the arms' phrases), said in the why
    by ``arms_why``; the outcome must still be the claim's own, unless the cosine reaches ``similarity_alone``
    (default: ``config.similarity_alone``)."""
    if similarity < config.min_similarity:
        return None
    by_role = arms is not None
    arms = words if arms is None else arms
    iv_cov, iv = best_match(arms, q.intervention)
    if iv is None:
        return None
    oc_cov, oc = best_match(words, q.outcome, config.min_outcome_coverage)
    if oc is None and similarity < (config.similarity_alone if similarity_alone is None else similarity_alone):
        return None
    cmp_cov, cmp = best_match(arms, q.comparator) if q.comparator else (0.0, None)
    if other_comparison(arms, q, cmp, n_doses) is not None:
        return None
    score = 0.35 * iv_cov + 0.35 * oc_cov + 0.2 * max(similarity, 0.0) + 0.1 * cmp_cov
    why = [f"intervention: {iv.label}" + (f" ({arms_why})" if by_role else ""),
           f"outcome: {oc.label}" if oc else "outcome: by similarity"]
    if cmp is not None:
        why.append(f"comparator: {cmp.label}")
    why.append(f"similarity {similarity:.2f}")
    return round(min(score, 1.0), 4), "; ".join(why)


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
    mentions = [(m, stem(w) not in stems) for m in _WORD_RE.finditer(sentence)
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
    for m in _WORD_RE.finditer(sentence):
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


def same_comparison(a: CompiledQuestion, b: CompiledQuestion) -> bool:
    """Whether two questions ask the same comparison (intervention and outcome) in different populations:
    ACE inhibitors and mortality in heart failure, and after myocardial infarction."""
    def names(alts):
        return {alt.stems for alt in alts}

    return (names(a.intervention) == names(b.intervention) and names(a.outcome) == names(b.outcome)
            and bool(a.population) and bool(b.population) and names(a.population) != names(b.population))


def rival_population(sentence: str, words: frozenset[str], q: CompiledQuestion, others: list[CompiledQuestion],
                     abstract: str = "", article: frozenset[str] = frozenset()) -> bool:
    """Whether a claim names as who was studied the population of another question of the same comparison
    (among ``others``, whether or not the claim passes that question's other checks), but not this question's:
    "early captopril during acute myocardial infarction reduced mortality" answers the question asked after
    infarction, not the one asked in heart failure (an endpoint of that trial). The claim is read first; when it
    names neither population, its abstract (``article``: its content stems). A text naming both populations
    (heart failure after infarction) answers both."""
    rivals = [o for o in others if same_comparison(q, o)]
    if not q.population or not rivals:
        return False
    for text, stems in ((sentence, words), (abstract, article)):
        own, rival = names_population(text, stems, q), any(names_population(text, stems, o) for o in rivals)
        if own or rival:
            return rival and not own
    return False


#: A surgical setting ("after coronary artery bypass grafting", "perioperative", "noncardiac surgery").
_SURGICAL = re.compile(r"\b(?:surger(?:y|ies)|surgical|bypass|grafting|CABG|operations?|(?:peri|post)-?operative(?:ly)?"
                       r"|noncardiac)\b", re.IGNORECASE)


def surgical_only(sentence: str, q: CompiledQuestion) -> bool:
    """Whether a claim is set in surgery while its question is asked in a population that is not: metoprolol
    after bypass grafting does not answer whether beta blockers reduce mortality after myocardial infarction,
    though the trial's abstract names infarction (its patients' history)."""
    return bool(q.population) and _SURGICAL.search(sentence) is not None and not _SURGICAL.search(q.question.text)


_OPEN_LABEL = frozenset({"open-label", "openlabel"})


def open_label_only(sentence: str, q: CompiledQuestion) -> bool:
    """Whether a claim names the question's intervention only as open-label use, outside the randomised arms:
    "death attributable to heart failure, … initiation of open-label ACE inhibitor …, was associated with a
    4.01-fold increase in the risk of death" is an event of the placebo-controlled trial, not its finding."""
    tokens = _arm_tokens(sentence)
    hits = [i for alt in q.intervention for i in _named_at(tokens, alt)]
    return bool(hits) and all(i > 0 and tokens[i - 1] in _OPEN_LABEL for i in hits)


#: Words that make the drug after them one stopped ("women who stopped HRT", "discontinuation of", "withdrawal of");
#: with ``_UNTREATED_STEMS`` and "never", one not taken ("women who did not undergo HRT", "never used").
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
    tokens = _arm_tokens(sentence)
    hits = [i for alt in q.intervention for i in _named_at(tokens, alt)]
    before = [set(tokens[max(0, i - 3):i]) for i in hits]
    return any(b & _STOPPED for b in before) and all(b & (_STOPPED | _UNTREATED_STEMS | _NEVER) for b in before)


#: Keeping a condition away rather than treating it ("ulcer recurrence", "preventing ulcer relapse", "maintenance
#: therapy"): an endpoint of its own.
_RECURRENCE = re.compile(r"\brecurren\w*|\brelaps\w*|\bmaintenance (?:therapy|treatment|phase)\b", re.IGNORECASE)
#: Where an ulcer is ("gastric ulcer", "duodenal ulcers", "duodenal or gastric ulcer", "peptic ulcer disease"):
#: ulcers of one site are an endpoint of their own; "peptic" names both.
_ULCER_SITE = re.compile(r"\b(gastric|duodenal|peptic)(?:\s+(?:and|or)\s+(gastric|duodenal|peptic))?\s+ulcer",
                         re.IGNORECASE)


def ulcer_sites(text: str) -> frozenset[str]:
    """The sites of the ulcers a text names (``_ULCER_SITE``), "peptic" read as both gastric and duodenal."""
    sites = {site.lower() for m in _ULCER_SITE.finditer(text) for site in m.groups() if site}
    return frozenset(sites - {"peptic"} | ({"gastric", "duodenal"} if "peptic" in sites else set()))


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


#: A measure's rhythm or spread over time ("attenuated circadian changes", "circadian blood pressure swings",
#: "diurnal variation", "blood pressure variability"): another endpoint than the measure's level.
_RHYTHM = re.compile(r"\b(?:circadian|diurnal|day[- ]night)\s+(?:[\w-]+\s+){0,3}?(?:swings?|changes?|variations?|"
                     r"amplitudes?|rhythms?|profiles?|patterns?)\b|\b(?:blood\s+pressure|BP|heart\s+rate|glucose|"
                     r"glycaemic|glycemic)\s+variability\b", re.IGNORECASE)


def rhythm_only(sentence: str, q: CompiledQuestion) -> bool:
    """Whether a claim names its question's outcome only inside a rhythm of it (``_RHYTHM``) and the question asks
    about no rhythm: "atenolol attenuated circadian blood pressure swings" does not say whether it lowers blood
    pressure; "reduces 24 h blood pressure without attenuating its diurnal variation" still does."""
    if not _RHYTHM.search(sentence) or _RHYTHM.search(q.question.text):
        return False
    level = terms(_RHYTHM.sub(" ", sentence))
    return not any(alt.stems <= level for alt in q.outcome)


def other_endpoint(sentence: str, q: CompiledQuestion) -> bool:
    """Whether a claim reports another endpoint than its question asks about:
    - recurrence or maintenance while the question asks otherwise: that ulcers healed with omeprazole or
      ranitidine recurred alike does not say which heals them faster;
    - one cause's deaths, or a composite with death, while the question asks about deaths of any cause: that
      ramipril did not significantly reduce deaths from circulatory failure does not say whether it reduces
      mortality (``cause_specific_death``);
    - ulcers of another site only: lansoprazole healing gastric ulcers does not say whether it heals duodenal
      ulcers faster (``ulcer_sites``);
    - the outcome's rhythm, not its level (``rhythm_only``)."""
    text = q.question.text
    if _RECURRENCE.search(sentence) is not None and not _RECURRENCE.search(text) or rhythm_only(sentence, q):
        return True
    asked, named = ulcer_sites(text), ulcer_sites(sentence)
    if asked and named and not asked & named:
        return True
    return bool(_DEATH.search(text)) and not cause_specific_death(text) and cause_specific_death(sentence)


def answers(sentence: str, abstract: str, similarities: list[float], compiled: list[CompiledQuestion],
            config: QuestionsConfig, words: frozenset[str] | None = None
            ) -> list[tuple[CompiledQuestion, tuple[float, str]]]:
    """The questions a claim sentence answers, each with ``(score, why)``, given its abstract (abbreviation
    definitions, the population studied), its cosine to each compiled question and (when already read) its
    ``claim_words``. A sentence about baseline groups, a correlation, subgroups' effects or a mediation analysis
    answers none, one comparing an add-on only a question that asks one; one answers a question only when it makes
    the question's comparison (``compares_arms``), in its setting and endpoint. A claim that names its arms by role
    ("no difference between the two groups") answers a question whose intervention (and comparator) its abstract
    names and whose outcome it names itself; so, under ``QuestionsConfig.whole_abstract``, does one that names no
    drug and sets groups against each other in an abstract that names the question's arms and no other drug
    (``abstract_answers``)."""
    adds_on = add_on(sentence)
    if reports_no_comparison(sentence) or adds_on and not any(q.asks_add_on for q in compiled):
        return []
    if adds_on:
        keep = [i for i, q in enumerate(compiled) if q.asks_add_on]
        compiled, similarities = [compiled[i] for i in keep], [similarities[i] for i in keep]
    words, n_doses = claim_words(sentence, abstract) if words is None else words, doses(sentence)
    # the arms by role, read in the abstract, for a claim that names no drug (every question carries the lexicon's)
    drugs_named = bool(compiled) and names_a_drug(sentence, compiled[0])  # then drug names decide, not other words
    by_role, role_words = None, words
    if abstract and compiled and names_arms_by_role(sentence) and not drugs_named:
        by_role = words | abstract_words(abstract)
        role_words = claim_words(role_clause(sentence), abstract)
    names = group_name_words(sentence, abstract)
    all_named = frozenset().union(*names)
    stems = frozenset() if drugs_named else sentence_stems(sentence)  # for arms named apart
    found = []
    for q, sim in zip(compiled, similarities, strict=True):
        verdict = assess(words, sim, q, config, n_doses)
        if verdict is not None:
            if background_only(sentence, q) or open_label_only(sentence, q):
                continue
            if not compares_arms(sentence, q):
                verdict = None  # the arms may still be named before "group" ("than the low dose group")
        elif (by_role is not None and not (q.comparison == INACTIVE and _ACTIVE_ARMS.search(sentence))
              and not untreated_against_active(sentence, q) and untreated_arm_named(abstract, q)):
            # the arms' roles are the comparison (active arms among themselves answer no question against placebo);
            # the outcome is its clause's
            verdict = assess(role_words, sim, q, config, n_doses, arms=by_role)
        if verdict is None and names:  # every arm the claim names before "group" is one of its arms
            named_stems, named = arms_named_by_group(names, q)
            if named and compares_named_groups(sentence, named, q):
                verdict = assess(words, sim, q, config, n_doses, arms=(by_role or words) | named_stems | all_named,
                                 arms_why="named by a word of its phrase before \"group\"")
        if (verdict is None and abstract and not drugs_named
                and control_is_comparator(sentence, abstract_words(abstract), q)
                and compares_named_groups(sentence, {"intervention", "comparator"}, q)):
            verdict = assess(words, sim, q, config, n_doses, arms=words | q.comparator[0].stems,
                             arms_why="its comparator named as the control arm")
        if verdict is None and q.comparator and not drugs_named:  # each arm named by a word only its phrase has
            apart_stems, named = arms_named_apart(stems, q)
            if named and compares_named_groups(sentence, named, q):
                verdict = assess(words, sim, q, config, n_doses, arms=(by_role or words) | apart_stems,
                                 arms_why="each arm named by a word only its phrase has")
        if (verdict is None and config.whole_abstract and by_role is None and abstract and not drugs_named
                and abstract_answers(sentence, abstract, q)):
            verdict = assess(words, sim, q, config, n_doses, arms=words | abstract_words(abstract),
                             arms_why="named in its abstract, which names no other drug; the claim sets groups apart")
        if verdict is not None and not (surgical_only(sentence, q) or other_endpoint(sentence, q)
                                        or stopped_only(sentence, q) or compares_doses(sentence, q)
                                        or excluded_population(sentence, q) or fixed_combination(sentence, q)):
            found.append((q, verdict))
    article = words
    if abstract and any(q.population for q, _ in found):  # without its abstract, who was studied is unknown
        article = words | abstract_words(abstract)
        found = [(q, verdict) for q, verdict in found if studied_population(q, article)]
    return [(q, verdict) for q, verdict in found
            if not rival_population(sentence, words, q, compiled, abstract, article)]


# --- the sharded work ------------------------------------------------------------------------------------
def abstract_texts(abstracts_dir: str | Path | None, needed: set[str]) -> dict[str, str]:
    """The texts of the ``needed`` articles' abstracts (by ``article_uid``) in an abstracts stage folder; {} without
    one. Claims are read with their abstracts here and in mining."""
    if not abstracts_dir or not needed:
        return {}
    return {a.article_uid: a.text for a in io.read_records(abstracts_dir, Abstract) if a.article_uid in needed}


def assign_claims(claims: Iterable[Claim], config: QuestionsConfig, stats: io.StageStats) -> Iterator[Assignment]:
    """One rank's work (see :mod:`builder.runtime`): the assignments of its claims (vectors from the cache)."""
    from tqdm import tqdm

    from .embeddings import embed_texts, embedding_dimension, load_encoder, open_cache

    claims = list(claims)
    compiled = compile_questions(load_questions(config.pack), load_lexicon(config.lexicon))
    encoder = load_encoder(config.model, config.device, config.precision)
    cache = open_cache(config.cache_dir, config.model, embedding_dimension(encoder), config.precision)
    q_emb = embed_texts([c.question.text for c in compiled], encoder, cache, config.batch_size)
    if config.assigner == "learned":
        yield from _learned(claims, compiled, q_emb, config, stats,
                            lambda s: embed_texts(s, encoder, cache, config.batch_size))
        return
    texts = abstract_texts(config.abstracts_dir, {c.article_uid for c in claims})
    words = [claim_words(c.sentence, texts.get(c.article_uid, "")) for c in claims]
    possible = [i for i, (c, w) in enumerate(zip(claims, words, strict=True))
                if claim_may_answer(c.sentence, texts.get(c.article_uid, ""), w, compiled, config)]
    similarities = dict(zip(possible, embed_texts([claims[i].sentence for i in possible], encoder, cache,
                                                  config.batch_size) @ q_emb.T, strict=True))
    for i, claim in enumerate(tqdm(claims, desc=STAGE, unit=" claims", mininterval=2.0, leave=False)):
        stats.seen += 1
        found = (answers(claim.sentence, texts.get(claim.article_uid, ""), similarities[i].tolist(), compiled, config,
                         words[i]) if i in similarities else [])
        for q, (score, why) in found:
            stats.count("assignments_per_question", q.question.question_id)
            yield Assignment(claim_id=claim.claim_id, question_id=q.question.question_id,
                             article_uid=claim.article_uid, score=score, why=why)
        if found:
            stats.kept += 1
            stats.count("questions_per_claim", len(found) if len(found) < 3 else "3+")
        else:
            stats.drop("baseline" if reports_baseline(claim.sentence)
                       else "correlation" if i in similarities and reports_correlation(claim.sentence)
                       else "interaction" if i in similarities and reports_interaction(claim.sentence)
                       else "mediation" if i in similarities and reports_mediation(claim.sentence)
                       else "no_question")


#: The filters a claim passes before the learned assigner asks about it: statements that compare no arms, in any
#: field (each a drop reason in the stage's stats).
GENERAL_FILTERS: tuple[tuple[str, Callable[[str], bool]], ...] = (
    ("baseline", reports_baseline), ("correlation", reports_correlation), ("interaction", reports_interaction),
    ("mediation", reports_mediation))


def _learned(claims: list[Claim], compiled: list[CompiledQuestion], q_emb, config: QuestionsConfig,
             stats: io.StageStats, embed: Callable[[list[str]], np.ndarray]) -> Iterator[Assignment]:
    """``assigner: learned``: the general filters, then the answerer's relevance among the closest questions."""
    from .question_relevance import best_per_article, drop_reason, learned_assignments
    from .reader.answerer import load_answerer

    reasons = [drop_reason(c.sentence, GENERAL_FILTERS) for c in claims]
    kept = [i for i, r in enumerate(reasons) if r is None]
    read = learned_assignments(
        [claims[i].sentence for i in kept], embed([claims[i].sentence for i in kept]) @ q_emb.T if kept
        else np.zeros((0, len(compiled))), [q.question.text for q in compiled], load_answerer(config.answerer),
        config.learned_candidates, config.min_similarity)
    found = dict(zip(kept, best_per_article([claims[i].article_uid for i in kept], read), strict=True))
    for i, claim in enumerate(claims):
        stats.seen += 1
        answered, why_not = found.get(i, ([], reasons[i]))
        for j, relevance, cosine in answered:
            q = compiled[j].question
            stats.count("assignments_per_question", q.question_id)
            yield Assignment(claim_id=claim.claim_id, question_id=q.question_id, article_uid=claim.article_uid,
                             score=round(relevance, 4), why=f"answerer relevance {relevance:.2f}, cosine {cosine:.2f}")
        if answered:
            stats.kept += 1
            stats.count("questions_per_claim", len(answered) if len(answered) < 3 else "3+")
        else:
            stats.drop(why_not)


_OF = re.compile(r"\s+of\s+", re.IGNORECASE)


#: Words of an outcome phrase that name no endpoint of their own ("side" of "extrapyramidal side effects",
#: "total" of "total cholesterol"): any trial's claim may hold them.
_GENERIC_OUTCOME_STEMS = frozenset(stem(w) for w in ("side", "adverse", "total", "overall", "mean", "clinical",
                                                      "global", "general"))


def names_part_of(words: frozenset[str], alts: tuple[Alternative, ...]) -> bool:
    """Whether ``words`` hold a stem of an alternative other than its phrase's head noun, which alone often names
    another endpoint ("negative symptoms" for "psychotic symptoms"), and other than a word that names no endpoint
    (``_GENERIC_OUTCOME_STEMS``). The head is the last word of the phrase, or of its part before "of" ("duration of
    hospital stay": "duration", so "the duration of ventilation" does not count and "hospital" does)."""
    for alt in alts:
        head = [s for s in stem_sequence(_OF.split(alt.label, maxsplit=1)[0]) if s in alt.stems] or \
            [s for s in stem_sequence(alt.label) if s in alt.stems]
        if (alt.stems - frozenset(head[-1:]) - _GENERIC_OUTCOME_STEMS) & words:
            return True
    return False


def article_answers(claims: list[Claim], texts: dict[str, str], taken: set[tuple[str, str]],
                    compiled: list[CompiledQuestion], config: QuestionsConfig,
                    embed: Callable[[list[str]], np.ndarray], q_emb: np.ndarray) -> Iterator[Assignment]:
    """Under ``QuestionsConfig.whole_abstract``, each article whose abstract answers a question as a whole but
    none of whose claims was assigned to it (not in ``taken``: ``(article_uid, question_id)``) answers it with one
    claim: of its claims that name the question's outcome (and report no baseline, correlation or interaction, no
    other endpoint, no excluded or rival population, no active arms set equal, no arm against itself
    (``compares_itself``), no untreated arm against a question of two active drugs unless it names the comparator
    too), the closest to the question by cosine among those that compare something (``compares_something``) if any
    do (``embed``: sentences → unit vectors; ``q_emb``: the compiled questions' vectors). The abstract must name the
    question's arms (``abstract_names_arms``) and its population, and no claim of the article may compare something
    else (``compares_another``: doses, a combination, an add-on, groups of the selection): its study is then about
    that. A trial grouped under a question nearly always states its result on the question's outcome, but in words
    the rules above may not read ("the PGx group", "in 78% of slow acetylators ... while none of"); on the Evidence
    Inference question benchmark's development sample, 48 of the first 58 claims so taken held the expert's evidence
    for the question. An article none of whose claims names the outcome in the question's words answers it with its
    closest claim if that cosine reaches ``QuestionsConfig.article_similarity_alone``."""
    by_article: dict[str, list[Claim]] = {}
    for claim in claims:
        by_article.setdefault(claim.article_uid, []).append(claim)
    candidates: list[tuple[Claim, int, frozenset[str], bool]] = []  # the last: taken by similarity alone
    for uid, group in by_article.items():
        if not (abstract := texts.get(uid, "")):
            continue
        stems = abstract_words(abstract)
        for k, q in enumerate(compiled):
            if ((uid, q.question.question_id) in taken or not abstract_names_arms(abstract, q)
                    or not studied_population(q, stems)):
                continue
            if any(compares_another(claim.sentence, q) for claim in group):
                continue  # the study's comparison is another one: it answers the question with no claim
            eligible = [(claim, words) for claim in group if not reports_no_comparison(s := claim.sentence)
                        and not other_endpoint(s, q) and not excluded_population(s, q)
                        and not active_arms_equal(s, q) for words in [claim_words(s, abstract)]
                        if not rival_population(s, words, q, compiled, abstract, words | stems)
                        and not compares_itself(s, q)
                        and not (untreated_against_active(s, q)
                                and best_match(words | terms_apart(s), q.comparator)[1] is None)]
            naming = [(claim, words) for claim, words in eligible
                      if best_match(words, q.outcome, config.min_outcome_coverage)[1] is not None]
            if naming:
                candidates += [(claim, k, words, False) for claim, words in naming]
                continue
            candidates += [(claim, k, words, True) for claim, words in eligible if names_part_of(words, q.outcome)
                           and (best_match(words, q.intervention)[1] is not None
                                or not names_a_drug(claim.sentence, q))]
    if not candidates:
        return
    similarity = (embed([c.sentence for c, *_ in candidates]) * q_emb[[k for _, k, *_ in candidates]]).sum(axis=1)
    ranked: dict[tuple[str, int], list[tuple[tuple[bool, float], Claim, frozenset[str], bool]]] = {}
    for (claim, k, words, alone), sim in zip(candidates, similarity.tolist(), strict=True):
        rank = (compares_something(claim.sentence, words, compiled[k]), sim)
        ranked.setdefault((claim.article_uid, k), []).append((rank, claim, words, alone))
    for (uid, k), options in ranked.items():
        q = compiled[k]
        for (_, sim), claim, words, alone in sorted(options, key=lambda o: o[0], reverse=True):
            verdict = assess(words, sim, q, config, doses(claim.sentence), arms=words | abstract_words(texts[uid]),
                             arms_why="named in its abstract, which answers the question as a whole; of the article's "
                                      f"claims{', none' if alone else ''} naming the outcome, the closest to the question",
                             similarity_alone=config.article_similarity_alone if alone else None)
            if verdict is not None:
                yield Assignment(claim_id=claim.claim_id, question_id=q.question.question_id, article_uid=uid,
                                 score=verdict[0], why=verdict[1])
                break


def compares_something(sentence: str, words: frozenset[str], q: CompiledQuestion) -> bool:
    """Whether a claim names the question's intervention or sets groups against each other
    (``sets_groups_against``): an article's answer is taken from such claims before the rest ("subjects in the
    placebo group lost 6.4% of BMD", "these data support lowering postprandial glucose" state no comparison)."""
    return sets_groups_against(sentence) or best_match(words, q.intervention)[1] is not None


def _read_claims(claims_dir: Path, questions: list[Question], config: QuestionsConfig
                 ) -> tuple[list[Claim], dict[str, str], list[CompiledQuestion]]:
    """The stage's claims, their abstracts' texts and the compiled pack, for the passes run before and after the
    sharded one (each reads them afresh, so the sharded pass never runs beside a whole corpus held in memory)."""
    claims = list(io.read_records(claims_dir, Claim))
    return (claims, abstract_texts(config.abstracts_dir, {c.article_uid for c in claims}),
            compile_questions(questions, load_lexicon(config.lexicon)))


def _article_answers(claims: list[Claim], texts: dict[str, str], compiled: list[CompiledQuestion],
                     assignments: list[Assignment], config: QuestionsConfig, encoder, cache) -> list[Assignment]:
    """``article_answers`` over the stage's claims, after the claims' own assignments."""
    from .embeddings import embed_texts

    q_emb = embed_texts([q.question.text for q in compiled], encoder, cache, config.batch_size)
    return list(article_answers(claims, texts, {(a.article_uid, a.question_id) for a in assignments}, compiled,
                                config, lambda s: embed_texts(s, encoder, cache, config.batch_size), q_emb))


def _possible_sentences(claims: list[Claim], texts: dict[str, str], compiled: list[CompiledQuestion],
                        config: QuestionsConfig) -> list[str]:
    """The sentences of the claims that ``may_answer`` a question: the only ones the stage embeds (every claim's
    under ``assigner: learned``, which reads no lexicon)."""
    if config.assigner == "learned":
        return [c.sentence for c in claims]
    return [c.sentence for c in claims
            if claim_may_answer(c.sentence, text := texts.get(c.article_uid, ""), claim_words(c.sentence, text),
                                compiled, config)]


# --- stage -----------------------------------------------------------------------------------------------
def _abstracts_dir(claims_dir: Path, config: QuestionsConfig) -> str | None:
    if config.abstracts_dir:
        return config.abstracts_dir
    try:
        inputs = io.read_manifest(claims_dir).get("inputs", [])
    except FileNotFoundError:
        return None
    return inputs[0] if inputs and Path(inputs[0]).is_dir() else None


def run_stage(claims_dir: str | Path, out_dir: str | Path, config: QuestionsConfig | None = None,
              runtime: RuntimeConfig | None = None) -> dict:
    """Assign the claims of a finished Claim stage folder to the pack's questions (resumable)."""
    from .embeddings import embedding_dimension, load_encoder, open_cache
    from .mine import MineConfig, fill_cache

    config = config or QuestionsConfig()
    if not config.pack:
        raise ValueError("the questions stage needs a question pack (questions: {pack: FILE} or --pack FILE)")
    questions = load_questions(config.pack)  # a bad pack fails before any work
    load_lexicon(config.lexicon)
    claims_dir = check_stage_input(claims_dir, "claims")
    out_dir = claim_output(out_dir, STAGE, [claims_dir])
    config = config.model_copy(update={"abstracts_dir": _abstracts_dir(claims_dir, config),
                                       "cache_dir": config.cache_dir or str(out_dir / "embedding_cache")})
    params = {"config": config.model_dump(), "input": io.done_fingerprint(claims_dir),
              "pack": [q.model_dump() for q in questions],
              "lexicon": Path(config.lexicon).read_text(encoding="utf-8")}
    if io.stage_is_current(out_dir, params):
        clear_tasks(out_dir)
        return io.read_stats(out_dir)
    io.begin_stage(out_dir, STAGE, [str(claims_dir)], params)
    runtime = runtime or RuntimeConfig()
    encoder = load_encoder(config.model, config.device, config.precision)
    cache = open_cache(config.cache_dir, config.model, embedding_dimension(encoder), config.precision)
    to_embed = _possible_sentences(*_read_claims(claims_dir, questions, config), config) + [q.text for q in questions]
    embedder = MineConfig(model=config.model, device=config.device, precision=config.precision,
                          batch_size=config.batch_size)
    embedded = fill_cache(to_embed, cache, out_dir, embedder, runtime)
    job = ShardJob(STAGE, assign_claims, config, claims_dir, Claim, Assignment, "claims", config.shard_size)
    assignments, stats = run_sharded(job, out_dir, runtime)
    if config.whole_abstract and config.assigner == "rules":  # assignments are few (a claim answers few questions): held to see who answered what
        assignments = list(assignments)
        added = _article_answers(*_read_claims(claims_dir, questions, config), assignments, config, encoder, cache)
        newly = {a.claim_id for a in added} - {a.claim_id for a in assignments}
        stats.kept += len(newly)  # counted as answering no question by the sharded pass, which could not see them
        stats.dropped["no_question"] -= len(newly)
        assignments += added
        for a in added:
            stats.count("assignments_per_question", a.question_id)
        stats.figures["article_answers"] = len(added)
    io.write_json_atomic(out_dir / QUESTIONS_FILE, [q.model_dump(mode="json") for q in questions])
    per_question = stats.counts.setdefault("assignments_per_question", {})
    for q in questions:
        per_question.setdefault(q.question_id, 0)
    stats.figures.update({"questions": len(questions), "claims_embedded": embedded,
                          "questions_unread": sum(1 for q in questions if unread_fields(q)),
                          "questions_without_claims": sum(1 for n in per_question.values() if n == 0)})
    io.write_records(out_dir, assignments, stats, shard_size=config.shard_size)
    clear_tasks(out_dir)
    return stats.to_dict()


def read_assignments(questions_dir: str | Path) -> tuple[dict[str, Question], dict[str, dict[str, float]]]:
    """A finished questions folder: its questions by id, and each assigned claim's ``{question_id: score}``."""
    folder = check_stage_input(questions_dir, "questions")
    questions = {q["question_id"]: Question(**q)
                 for q in json.loads((folder / QUESTIONS_FILE).read_text(encoding="utf-8"))}
    by_claim: dict[str, dict[str, float]] = {}
    for a in io.read_records(folder, Assignment):
        by_claim.setdefault(a.claim_id, {})[a.question_id] = a.score
    return questions, by_claim


def add_arguments(parser: argparse.ArgumentParser) -> None:
    d = QuestionsConfig()
    parser.add_argument("claims_dir", metavar="CLAIMS", help="finished claims stage folder")
    parser.add_argument("--pack", required=True, help="question pack YAML (questions: [{id, text, …}])")
    parser.add_argument("--out", required=True, help="output folder for the assignments")
    parser.add_argument("--abstracts", default=None, help="abstracts stage folder (default: from the claims manifest)")
    parser.add_argument("--lexicon", default=d.lexicon, help="clinical lexicon YAML (drug classes, synonyms)")
    parser.add_argument("--min-similarity", type=float, default=d.min_similarity)
    parser.add_argument("--whole-abstract", action=argparse.BooleanOptionalAction, default=d.whole_abstract,
                        help="a claim naming no drug may answer a question its abstract names the arms of "
                             "(trials grouped by question; --no-whole-abstract for abstracts gathered by search)")
    parser.add_argument("--encoder", default=d.model, help="sentence-transformers model name or folder")
    parser.add_argument("--cache-dir", default=None, help="embedding cache folder (default: OUT/embedding_cache)")
    parser.add_argument("--assigner", choices=["rules", "learned"], default=d.assigner,
                        help="the lexicon and word rules, or the question answerer's relevance (any field)")
    parser.add_argument("--answerer", default=None, help="question answerer folder for --assigner learned "
                                                         "(default: the shipped one)")


def run(args: argparse.Namespace) -> int:
    config = QuestionsConfig(pack=args.pack, abstracts_dir=args.abstracts, lexicon=args.lexicon,
                             min_similarity=args.min_similarity, whole_abstract=args.whole_abstract,
                             model=args.encoder, cache_dir=args.cache_dir, assigner=args.assigner,
                             answerer=args.answerer)
    stats = run_stage(args.claims_dir, args.out, config)
    per = stats.get("assignments_per_question", {})
    print(f"questions: {stats['kept']} of {stats['seen']} claims answer at least one of {len(per)} questions "
          f"({sum(per.values())} assignments) -> {args.out}")
    return 0
