"""The reader annotator: findings read against the clinical question by a learned reader, type from context.

For a candidate pair it
1. reads each claim's finding relative to the pair's question (``builder.reader``: increase / decrease /
   no_difference / not_reported, and the answer yes / no to the question as asked); a pair without a question
   has each claim read against the other claim, which then plays the question;
2. calls a conflict only when the two readings disagree — never on a negation word alone; a claim that does
   not answer the question makes ``no_conflict``. Claims asked a declared question in their own arm names
   disagree only as a significant effect against a stated null, each stated by the sentence itself
   (``disagreement(stated_only=True)``); claims that are not both sentences of abstracts (review conclusions)
   are asked a yes / no question as written and disagree when they answer it oppositely (``by_answers``); claims
   asked any other question as written disagree as effect vs no effect or increase vs decrease. A pair without a
   question disagrees only when each claim speaks to the other (the answerer's relevance, the pair's own
   question) and they answer each other "no" (``open_pair_disagreement``): unrelated findings share no question,
   two nulls answer each other yes;
3. applies the paper's boundary rules in order: explicit controversy → unresolved controversy; weak evidence
   → evidence insufficiency; a condition that differs between the claims (population, dose, form or
   co-treatment, duration, geography, period, setting, … — from the ontology's cues and the condition phrases
   below; then the different drugs two claims name for an arm of a class question, ``arm_difference``) →
   contextual with those axes; a concrete condition stated by one claim only is still a recoverable axis
   (the paper's preference rule) → contextual; nothing recoverable → underspecified when neither claim states
   its conditions, direct when both state the same ones;
4. marks the differing condition phrases and both finding phrases as evidence spans and names them in the
   reconciliation.

Words that belong to the question (its intervention, outcome, population) are never read as a differing
condition: "acute kidney injury" asked about is an outcome, not a subtype; nor are the patients of a placebo arm
("of placebo patients") a population.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass

from biodivergence_dataset import ontology
from biodivergence_dataset.records import CandidatePair, Claim, EvidenceSpan, Question
from biodivergence_text import cues

from .. import frames as fr
from .. import frameterms
from ..questionpacks import asks_yes_or_no
from ..questions.arms import arm_drugs, claim_arms, comparator_first, sets_arms_equal
from ..questions.compiled import INACTIVE, PLACEBO_WORDS, CompiledQuestion, compile_questions
from ..questions.lexicon import Lexicon, load_lexicon
from ..reader import READER_VERSION, FindingReader, disagreement
from ..reader.answerer import ANSWERER_VERSION, Answer, AnswererConfig, QuestionAnswerer
from ..reader.answerer import SHIPPED as SHIPPED_ANSWERER
from ..reader.model import OPPOSITE_ANSWER, READ_FINDINGS, ReaderConfig, reader_folder
from ..reader.reader_examples import ARM_PHRASING, QUESTION_TEMPLATES, heldout_gold
from ..repair import ROLE_A, ROLE_B, Labels
from .annotator_base import LocalAnnotator
from .frame_annotator import SPECIFICITY, frames_of
from .heuristic import CONTROVERSY, CONTROVERSY_RE, DIRECT, INSUFFICIENT, UNDERSPECIFIED, WEAK_RE, axis_report

KIND = ontology.check_label("annotator_kind", "reader")
MAX_AXES = 3
#: The axis of a dose, of the form a drug is given in, and of two claims naming different drugs for one arm of
#: their question; the axis of a population phrase.
DOSE_AXIS = ontology.check_label("divergence_axes", "dosage_intervention")
POPULATION_AXIS = ontology.check_label("divergence_axes", "population_cohort")
SAME_QUESTION, OFF_QUESTION = "same_question", "off_question"
#: The phrasing a claim is asked its question in: the reader's neutral Evidence Inference phrasing.
ARM_QUESTION = QUESTION_TEMPLATES[ARM_PHRASING][0]
assert {SAME_QUESTION, OFF_QUESTION} <= set(ontology.COMPARABILITY)

# Condition phrases: where a claim states the conditions its finding holds under. The ontology's cue lexicon
# finds the cue words ("children", "40 mg"); these patterns give the whole phrase a reader would mark
# ("in hypercholesterolaemic patients aged over 65", "in combination with antihypertensive drugs").
_WHO = (r"patients|subjects|women|men|children|adults|adolescents|infants|neonates|individuals|participants|"
        r"volunteers|people|persons|elderly|users|smokers|non-smokers|outpatients|inpatients|girls|boys|"
        r"mothers|pregnancies|veterans|residents|workers|athletes|survivors|recipients|cases|population|cohort")
#: A word of a phrase that is not a verb of the finding (nor one that reports the outcome: "patients who
#: complained of cough") nor a preposition opening another phrase.
_PHRASE_WORD = (r"(?!(?:in|of|for|among|with|and|or|was|were|did|does|do|had|has|have|is|are|be|been|not|no|"
                r"compared|versus|vs)\b)(?!(?:improv|reduc|increas|decreas|lower|rais|show|result|caus|produc|"
                r"prevent|significan|effective|associat|complain|report|experienc|develop|suffer)\w*\b)[\w'/+-]+")
_TAIL = rf"(?:\s+(?:with|without|who|aged|over|under|older|younger|undergoing|receiving|treated|on|at|from)(?:\s+{_PHRASE_WORD}){{1,5}})?"
CONDITION_PATTERNS: dict[str, tuple[str, ...]] = {
    POPULATION_AXIS: (
        rf"\b(?:in|among|for|of)\s+(?:{_PHRASE_WORD}\s+){{0,3}}(?:{_WHO})\b{_TAIL}",
    ),
    DOSE_AXIS: (
        (rf"\b\d+(?:\.\d+)?\s?(?:mg|g|µg|μg|mcg|iu|mg/kg|mg/day|ml)\b{ontology.NOT_A_RATE}(?:\s*(?:once|twice|three times|per|a|/)?\s*"
         r"(?:daily|a day|per day|day|weekly|b\.?i\.?d\.?|t\.?i\.?d\.?|q\.?d\.?))?"),
        (rf"\b(?:in combination with|combined with|in addition to|added to|add-on to|as add-on|together with|"
         rf"co-administered with|plus)(?:\s+{_PHRASE_WORD}){{1,4}}"),
        r"\b(?:low|high|standard|usual|fixed|flexible|single|multiple|double)[- ]dose\b",
        r"\b(?:for|over|after|during)\s+(?:\d+|one|two|three|four|six|eight|twelve)\s+(?:days?|weeks?|months?|years?)\b",
    ),
}
_CONDITION_RES = {axis: re.compile("|".join(f"(?:{p})" for p in pats), re.IGNORECASE)
                  for axis, pats in CONDITION_PATTERNS.items()}
#: The form a drug is given in ("extended-release oxybutynin", "long acting tolterodine"): a dose condition,
#: read as its words whether hyphenated or not, so "extended release" and "extended-release" are one form.
_FORMULATION = re.compile(r"\b(?:(?:extended|immediate|sustained|controlled|modified|delayed|slow|prolonged)[- ]release"
                          r"|(?:long|short|intermediate|rapid|ultra-long)[- ]acting)\b", re.IGNORECASE)
_WORD = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")
#: The words of an inactive arm: asked by a question that names no active comparator, never a population.
_PLACEBO_ARM = frozenset(frameterms.stem(w) for w in PLACEBO_WORDS)
#: Words that, beside a placebo word and the people, make a phrase name an arm ("sham-treated subjects").
_ARM_WORDS = frozenset(frameterms.stem(w) for w in (
    "patients", "subjects", "participants", "individuals", "people", "persons", "recipients", "users", "volunteers",
    "cases", "treated", "allocated", "assigned", "randomised", "randomized", "receiving", "given", "group", "arm"))


def _names_placebo_arm(phrase: str) -> bool:
    """Whether a population phrase names a placebo arm and no one else: "of placebo patients", "in sham-treated
    subjects", "in placebo recipients" (a trial arm, which the cue lexicon reads as a design), not "in elderly
    placebo patients"."""
    words = _words(phrase.replace("-", " ")) - _FILLER - _ARM_WORDS
    return bool(words) and words <= _PLACEBO_ARM


#: Words that carry no condition of their own inside a condition phrase.
_FILLER = frozenset(frameterms.stem(w) for w in (
    "in", "among", "for", "of", "the", "a", "an", "all", "both", "these", "those", "with", "without", "who", "and",
    "or", "at", "on", "from", "to", "patients", "subjects", "participants", "individuals", "people", "persons"))


@dataclass(frozen=True)
class Condition:
    """A condition a claim states: its axis, the words that make it this study's (question words removed)."""

    axis: str
    span: fr.Span
    words: frozenset[str]


def _words(text: str) -> frozenset[str]:
    return frozenset(frameterms.stem(w) for w in _WORD.findall(text.lower()))


def _inside(found: list[Condition], start: int, end: int) -> bool:
    """Whether ``start:end`` lies within the span of a condition already found (its phrase covers it)."""
    return any(c.span.start <= start and end <= c.span.end for c in found)


#: A verb phrase by which a sentence reports other research ("has recently been shown to", "have been reported",
#: "previous trials found", "earlier studies suggested"), in any field.
_RECALL = re.compile(r"\b(?:ha(?:s|ve)\s+(?:\w+\s+){0,2}?been\s+(?:shown|reported|demonstrated|found|suggested|"
                     r"described|observed)|(?:previous(?:ly)?|prior|earlier|other|past)\s+(?:\w+\s+)?(?:studies|"
                     r"trials|reports|work|research|meta-analyses)\s+(?:have\s+)?(?:shown|reported|demonstrated|"
                     r"found|suggested|observed))\b", re.IGNORECASE)


def recalled_spans(text: str) -> list[tuple[int, int]]:
    """The parts of a sentence that recall other research rather than state this study's finding: from the start
    of the clause holding a recall verb phrase (``_RECALL``; the sentence start, or the last ';' or ':' before it)
    to the first ',' or ';' after it (the end of the sentence when none). "Although enalapril has been shown to
    reduce mortality in patients with heart failure, it had no effect after infarction": the heart-failure
    patients are the earlier trials', not this one's."""
    spans = []
    for m in _RECALL.finditer(text):
        start = max(text.rfind(";", 0, m.start()), text.rfind(":", 0, m.start())) + 1
        ends = [i for i in (text.find(",", m.end()), text.find(";", m.end())) if i >= 0]
        spans.append((start, min(ends) if ends else len(text)))
    return spans


def conditions(claim: Claim, asked: frozenset[str]) -> list[Condition]:
    """The condition phrases and context cues of a claim, less what the question asks about.

    A cue or phrase whose words all belong to what is asked (``asked``: the question's words, or the words both
    claims share when the pair has no question) is not a condition, nor is a phrase that only counts people ("of
    301 patients"), nor one inside a clause that recalls other research (``recalled_spans``)."""
    text = claim.sentence
    recalled = [Condition("", fr.Span("", start, end), frozenset()) for start, end in recalled_spans(text)]
    found: list[Condition] = []
    for axis, regex in _CONDITION_RES.items():
        for m in regex.finditer(text):
            if _inside(recalled, m.start(), m.end()):
                continue
            words = _words(m.group(0)) - asked - _FILLER
            if axis == POPULATION_AXIS and _names_placebo_arm(m.group(0)):
                continue
            if words and not all(w.isdigit() for w in words):  # "of 301 patients" counts them, names no one
                found.append(Condition(axis, fr.Span(m.group(0), m.start(), m.end()), words))
    for m in _FORMULATION.finditer(text):
        words = _words(m.group(0).replace("-", " ")) - asked
        if words and not _inside(found + recalled, m.start(), m.end()):
            found.append(Condition(DOSE_AXIS, fr.Span(m.group(0), m.start(), m.end()), words))
    for hit in cues.axis_cues(text):
        words = _words(text[hit.start:hit.end]) - asked
        if words and not _inside(found + recalled, hit.start, hit.end):
            found.append(Condition(hit.axis, fr.Span(text[hit.start:hit.end], hit.start, hit.end), words))
    return found


@dataclass(frozen=True)
class Difference:
    """An axis on which the two claims' stated conditions differ (or one states a condition the other lacks)."""

    axis: str
    two_sided: bool
    a: tuple[Condition, ...]
    b: tuple[Condition, ...]


def differences(ca: list[Condition], cb: list[Condition]) -> list[Difference]:
    """Axes whose conditions differ, two-sided first, then most specific first."""
    out = []
    for axis in ontology.AXIS_NAMES:
        xa = tuple(c for c in ca if c.axis == axis)
        xb = tuple(c for c in cb if c.axis == axis)
        if not xa and not xb:
            continue
        wa = frozenset().union(*(c.words for c in xa))
        wb = frozenset().union(*(c.words for c in xb))
        if xa and xb:
            if not (wa <= wb or wb <= wa):  # neither side's condition contains the other's
                out.append(Difference(axis, True, xa, xb))
        else:
            out.append(Difference(axis, False, xa, xb))
    out.sort(key=lambda d: (not d.two_sided, SPECIFICITY.index(d.axis)))
    return out


def question_words(question: Question) -> frozenset[str]:
    """The words a question asks about (its text, intervention, comparator and outcome): never a condition."""
    return _words(" ".join(filter(None, (question.text, question.intervention, question.comparator,
                                         question.outcome))))


def with_inactive_arm(asked: frozenset[str], question: CompiledQuestion | None) -> frozenset[str]:
    """``asked`` with the placebo arm's words when the question compares with no active treatment: "than placebo"
    then names the arm the question compares with, not a design."""
    return asked | _PLACEBO_ARM if question is not None and question.comparison == INACTIVE else asked


def asked_words(pair: CandidatePair) -> frozenset[str]:
    """The words of what is asked: the question, else the words the two claims share (their common topic)."""
    if pair.question is not None:
        return question_words(pair.question)
    return _words(pair.claim_a.sentence) & _words(pair.claim_b.sentence)


def _finding_span(claim: Claim, abstract: str) -> fr.Span | None:
    spans = [f.finding.span for f in frames_of(claim, abstract) if f.finding.span]
    return spans[0] if spans else None


def _evidence(pair: CandidatePair, chosen: list[Difference]) -> list[EvidenceSpan]:
    """Differing condition phrases, then the finding phrase, of each claim (no repeated offsets)."""
    out: list[EvidenceSpan] = []
    for claim, abstract, side, role in ((pair.claim_a, pair.abstract_a, "a", ROLE_A),
                                        (pair.claim_b, pair.abstract_b, "b", ROLE_B)):
        phrases = [c.span for d in chosen for c in getattr(d, side)]
        finding = _finding_span(claim, abstract)
        phrases += [finding] if finding else []
        seen: set[tuple[int, int]] = set()
        for s in phrases:
            overlaps = any(not (s.end <= lo or hi <= s.start) for lo, hi in seen)
            if not overlaps:
                seen.add((s.start, s.end))
                out.append(EvidenceSpan(article_uid=claim.article_uid, text=s.text, start=s.start, end=s.end,
                                        role=role))
    return out


def _phrases(conds: tuple[Condition, ...]) -> str:
    return ", ".join(dict.fromkeys(f"'{c.span.text}'" for c in conds)) or "not stated"


def _finding_words(reading) -> str:
    return reading.finding.replace("_", " ")


def reconciliation(conflict: str, chosen: list[Difference], ra, rb, question: str) -> str:
    """One sentence naming the differing conditions (or why the claims cannot both hold as stated)."""
    on = f" on '{question}'" if question else ""
    findings = f"claim A reads {_finding_words(ra)}, claim B {_finding_words(rb)}{on}"
    if conflict == ontology.CONTEXTUAL:
        parts = [f"{ontology.axis(d.axis).title.lower()} "
                 f"({f'{_phrases(d.a)} vs {_phrases(d.b)}' if d.a or d.b else 'as their abstracts state it'})"
                 for d in chosen]
        return f"Both findings can hold ({findings}): the studies differ in {'; '.join(parts)}."
    if conflict == DIRECT:
        return f"Under the same stated conditions the findings are opposed ({findings})."
    if conflict == UNDERSPECIFIED:
        return (f"The findings look opposed ({findings}), but neither claim states the population, dose or "
                "setting, so whether their conditions match cannot be told.")
    if conflict == INSUFFICIENT:
        return f"The findings differ ({findings}), but the evidence behind them is described as weak or preliminary."
    if conflict == CONTROVERSY:
        return f"The findings differ ({findings}) on a question the claims themselves describe as disputed."
    return ""


def arm_difference(a: str, b: str, question: CompiledQuestion | None) -> Difference | None:
    """The drugs two claims name for the arms of the question, as a two-sided difference of ``DOSE_AXIS``, where
    both name one for an arm and they differ ("captopril" vs "ramipril" for ACE inhibitors; "losartan" vs
    "nifedipine" for "other antihypertensive drugs"): a question about a class pools comparisons, and each claim
    answers another. None when the claims name the same drugs (or no question is known)."""
    if question is None:
        return None
    xa, xb = [], []
    for da, db in zip(arm_drugs(a, question), arm_drugs(b, question), strict=True):
        if da is not None and db is not None and da.differs(db):
            xa.append(Condition(DOSE_AXIS, da.span, frozenset({da.name.lower()})))
            xb.append(Condition(DOSE_AXIS, db.span, frozenset({db.name.lower()})))
    return Difference(DOSE_AXIS, True, tuple(xa), tuple(xb)) if xa else None


def with_arms(chosen: list[Difference], arms: Difference | None) -> list[Difference]:
    """``chosen`` (at most ``MAX_AXES``) with the claims' different drugs after the conditions they state: in
    the difference of the same axis, else as one more axis if there is room."""
    chosen = chosen[:MAX_AXES]
    if arms is None:
        return chosen
    for i, d in enumerate(chosen):
        if d.axis == arms.axis:
            chosen[i] = Difference(d.axis, True, d.a + arms.a, d.b + arms.b)
            return chosen
    return chosen + [arms] if len(chosen) < MAX_AXES else chosen


def classify(pair: CandidatePair, question: CompiledQuestion | None = None) -> tuple[str, list[Difference], float]:
    """The paper's boundary rules, in order, for a pair whose findings disagree. Conditions the claims state
    come first; the different drugs they name for an arm of the question (``question``: the pair's question
    compiled) follow them, or are the only axis when the claims state no condition. Under a question with no
    active comparator, a placebo arm is the arm asked about, not a condition."""
    a_text, b_text = pair.claim_a.sentence, pair.claim_b.sentence
    if CONTROVERSY_RE.search(a_text) or CONTROVERSY_RE.search(b_text):
        return CONTROVERSY, [], 0.6
    if WEAK_RE.search(a_text) or WEAK_RE.search(b_text):
        return INSUFFICIENT, [], 0.6
    asked = with_inactive_arm(asked_words(pair), question)
    ca, cb = conditions(pair.claim_a, asked), conditions(pair.claim_b, asked)
    diffs = differences(ca, cb)
    two_sided = [d for d in diffs if d.two_sided]
    arms = arm_difference(a_text, b_text, question)
    if two_sided:
        return ontology.CONTEXTUAL, with_arms(two_sided, arms), 0.8
    if diffs:
        return ontology.CONTEXTUAL, with_arms(diffs, arms), 0.65
    if arms:
        return ontology.CONTEXTUAL, [arms], 0.7
    report = axis_report(pair)  # claim against the other abstract, abstract against abstract
    if report.differences:
        chosen = [Difference(d.axis, False, (), ()) for d in report.differences[:MAX_AXES]]
        return ontology.CONTEXTUAL, chosen, 0.55
    if not ca and not cb:
        return UNDERSPECIFIED, [], 0.55
    return DIRECT, [], 0.7


#: Why an open pair (no declared question) is no conflict: its claims do not both speak to one question.
NO_COMMON_QUESTION = "no_common_question"


def open_pair_disagreement(answers: tuple[Answer, Answer]) -> tuple[str | None, bool]:
    """Why two claims with no declared question disagree (or None), and whether they share a question.

    ``answers``: the answerer's reading of claim a asked claim b (as the question) and of b asked a. The pair makes
    its own question only when each claim speaks to the other (both relevances > 0.5); two unrelated findings
    share none. On a shared question the claims disagree (``opposite_answer``) when they more likely answer each
    other "no" than "yes" (the mean of the two P(yes) below 1/2): two nulls on one question answer each other
    "yes". Chosen on the development part (SciFact n 323, HealthVer 800, PubMedQA 722 pairs without their
    question): κ 0.25 / 0.11 / 0.84 (PubMedQA's items were trained on), against 0.00 / 0.00 / 0.00 for a stated
    effect against a stated null (these claims seldom state a test) and 0.16 / 0.00 / −0.06 for the findings read
    against the other claim; of 400 pairs of findings from two different Evidence Inference articles it labels
    15 conflicts, and 161 without the shared-question gate."""
    if not all(a.relevant for a in answers):
        return None, False
    return (OPPOSITE_ANSWER if (answers[0].yes + answers[1].yes) / 2 < 0.5 else None), True


def stated_only(pair: CandidatePair, ask_a: str, ask_b: str) -> bool:
    """Whether only a stated effect against a stated null is a conflict on ``pair`` (asked ``ask_a`` and
    ``ask_b``): under a declared question when both claims were asked in their own arm names (the phrasing of
    Evidence Inference, where the rule was measured), or both are sentences of abstracts, whose results state
    their tests. Claims with no abstract asked the question as written (review conclusions, HealthVer
    evidence) keep the reader's answer to it, stance included: they seldom state a test."""
    if pair.question is None:
        return False
    by_arms = pair.question.text not in (ask_a, ask_b)
    return by_arms or bool(pair.abstract_a and pair.abstract_b)


def by_answers(pair: CandidatePair) -> bool:
    """Whether the two claims' answers to the question decide (``disagreement(answers=True)``): a yes / no
    question (``questionpacks.asks_yes_or_no``) put to claims that are not both sentences of abstracts (review
    conclusions, evidence statements), which are then asked it as written, whatever arms they name. Such claims
    seldom state a test, so the stated-only rule for results sentences would silence them, and the answer to the
    question is what the reader's stance head learned to read in them."""
    return (pair.question is not None and not (pair.abstract_a and pair.abstract_b)
            and asks_yes_or_no(pair.question.text))


class ReaderAnnotator(LocalAnnotator):
    """The default annotator: a learned finding reader decides conflict vs not; boundary rules give the type."""

    kind = KIND
    #: what a pair's question is read with: the build's lexicon and domain packs (None: the shipped lexicon)
    lexicon: Lexicon | None = None

    #: Whether a gold pair is made only of items the reader never trained on (goldcheck scores it on those).
    heldout_gold = staticmethod(heldout_gold)

    def __init__(self, path: str | None = None, answerer: str | None = None, lexicon: Lexicon | None = None):
        self.lexicon = lexicon
        self.folder = reader_folder(path)
        self.config = ReaderConfig.load(self.folder)  # a folder that holds no reader fails here, before any pair
        self.answerer_folder = reader_folder(answerer) if answerer else SHIPPED_ANSWERER
        AnswererConfig.load(self.answerer_folder)  # and one without an answerer
        self.annotator_id = f"reader-{READER_VERSION}+answerer-{ANSWERER_VERSION}"
        self._compiled: dict[tuple[str, str], CompiledQuestion] = {}
        self._reader: FindingReader | None = None
        self._answerer: QuestionAnswerer | None = None
        self._loading = threading.Lock()

    @property
    def reader(self) -> FindingReader:
        """The network, loaded on first use (once, whichever thread asks first): an LLM run that never falls
        back to this annotator never loads it."""
        return self._loaded("_reader", lambda: FindingReader(self.folder))

    @property
    def answerer(self) -> QuestionAnswerer:
        """The question answerer, loaded on first use like the reader (only pairs without a question need it)."""
        return self._loaded("_answerer", lambda: QuestionAnswerer(self.answerer_folder))

    def _loaded(self, attribute: str, load):
        """The network held in ``attribute``, loaded by ``load`` once, whichever thread asks first."""
        with self._loading:
            if getattr(self, attribute) is None:
                setattr(self, attribute, load())
            return getattr(self, attribute)

    @property
    def trained_on(self) -> frozenset[str]:
        """The expert sources the reader learned from (goldcheck scores it there on held-out items only)."""
        return self.config.trained_on

    def annotate(self, pair: CandidatePair) -> Labels:
        return self.annotate_many([pair])[0]

    def compiled(self, question: Question) -> CompiledQuestion:
        """A pair's question compiled against the lexicon (once per question)."""
        key = (question.question_id, question.text)
        if key not in self._compiled:
            self._compiled[key] = compile_questions([question], self.lexicon or load_lexicon())[0]
        return self._compiled[key]

    def ask(self, sentence: str, question: Question) -> tuple[str, str]:
        """What one claim is asked, as (question, text): the question in the claim's own arm names and in the
        neutral phrasing of the reader's Evidence Inference training ("Is cough higher, lower, or the same with
        lisinopril compared to losartan?", ``questions.claim_arms``), so the reader meets the drug the claim names
        and the question's outcome as it learned them, with the claim's arm words marked as in that training
        (``FindingReader.marked``); the question as written and the claim unmarked when the claim names no
        intervention (or the question has no outcome)."""
        arms = claim_arms(sentence, self.compiled(question))
        if arms is None:
            return question.text, sentence
        intervention, comparator, outcome = arms
        return (ARM_QUESTION.format(i=intervention, c=comparator, o=outcome),
                self.reader.marked(sentence, intervention, comparator))

    def asks(self, pair: CandidatePair) -> list[tuple[str, str]]:
        """What the reader is asked: both claims against the question (as written when their answers decide,
        ``by_answers``), else each claim against the other."""
        a, b = pair.claim_a.sentence, pair.claim_b.sentence
        if pair.question is None:
            return [(b, a), (a, b)]
        if by_answers(pair):
            return [(pair.question.text, s) for s in (a, b)]
        return [self.ask(s, pair.question) for s in (a, b)]

    def annotate_many(self, pairs: list[CandidatePair]) -> list[Labels]:
        asks = [ask for p in pairs for ask in self.asks(p)]
        readings = self.reader.read(asks) if asks else []
        # an open pair's two asks (each claim against the other) are what the answerer reads as well
        opens = [i for i, p in enumerate(pairs) if p.question is None]
        answered = self.answerer.read([asks[2 * i + k] for i in opens for k in (0, 1)]) if opens else []
        answers = {i: (answered[2 * j], answered[2 * j + 1]) for j, i in enumerate(opens)}
        return [self.decide(p, *self.oriented(p, readings[2 * i], readings[2 * i + 1]),
                            stated_only=stated_only(p, asks[2 * i][0], asks[2 * i + 1][0]),
                            answers=by_answers(p), open_answers=answers.get(i))
                for i, p in enumerate(pairs)]

    def oriented(self, pair: CandidatePair, ra, rb):
        """The two readings relative to the question's intervention. The reader reads a direction for the arm a
        sentence is about, whichever arm the question names first ("cough was lower with candesartan than with
        enalapril" reads as a decrease however it is asked), so a claim stating its finding relative to the
        intervention (the intervention after "than", "compared with"…; ``questions.comparator_first``) has its
        reading reversed; one that sets the question's two active arms equal ("a similar and significant reduction
        with celiprolol and atenolol"; ``questions.sets_arms_equal``) reads no difference between them, whatever
        effect each arm had on its own."""
        if pair.question is None:
            return ra, rb
        return tuple(self.orient(claim.sentence, pair.question, r) for claim, r in ((pair.claim_a, ra),
                                                                                   (pair.claim_b, rb)))

    def orient(self, sentence: str, question: Question, reading):
        """One claim's reading relative to the question's intervention (see ``oriented``)."""
        q = self.compiled(question)
        return (reading.arms_equal() if sets_arms_equal(sentence, q)
                else reading.reversed() if comparator_first(sentence, q) else reading)

    def read_against(self, asked: list[tuple[Question, str]]) -> list:
        """Each ``(question, sentence)`` (a sentence of an abstract) read relative to its question as a claim of a
        pair with that question is: asked in its own arm names (``ask``), oriented to the question's intervention
        (``orient``); one batch for all."""
        if not asked:
            return []
        readings = self.reader.read([self.ask(s, q) for q, s in asked], progress=True)
        return [self.orient(s, q, r) for (q, s), r in zip(asked, readings, strict=True)]

    def decide(self, pair: CandidatePair, ra, rb, stated_only: bool = False, answers: bool = False,
               open_answers: tuple[Answer, Answer] | None = None) -> Labels:
        """Labels of one pair from its two readings; ``stated_only``: only a stated effect against a stated null
        counts (see the module function ``stated_only``); ``answers``: the answers to the question decide
        (``by_answers``); ``open_answers``: for a pair without a question, the answerer's reading of each claim
        asked the other (``open_pair_disagreement``)."""
        question = pair.question.text if pair.question is not None else ""
        shared = True
        if pair.question is not None:
            # under stated_only a claim answers with a finding and only a stated effect against a stated null
            # counts (``disagreement(stated_only=True)``); otherwise any answer counts; a claim that does not
            # answer the question disagrees with nothing on it
            unanswered = not all(r.finding in READ_FINDINGS if stated_only else r.reported for r in (ra, rb))
            why = None if unanswered else disagreement(ra, rb, stated_only=stated_only, answers=answers)
        else:
            why, shared = open_pair_disagreement(open_answers) if open_answers else (None, False)
            unanswered = not shared
        comparability = OFF_QUESTION if unanswered else SAME_QUESTION
        if why is None:
            text = ("The claims do not answer one common question." if not shared
                    else "A claim does not report a finding on the question." if unanswered
                    else "The claims report compatible findings on the same question.")
            return Labels(ontology.NO_CONFLICT, confidence=round(min(ra.confidence, rb.confidence), 3),
                          comparable=not unanswered, reconciliation=text, comparability=comparability,
                          notes=NO_COMMON_QUESTION if not shared else "unanswered" if unanswered else "same_finding")
        conflict, chosen, base = classify(pair, self.compiled(pair.question) if pair.question else None)
        confidence = round(max(0.05, min(0.95, base * min(ra.confidence, rb.confidence) ** 0.5)), 3)
        axes = [d.axis for d in chosen] if conflict == ontology.CONTEXTUAL else []
        return Labels(
            conflict_type=conflict,
            divergence_axes=axes,
            dominant_confounder=axes[0] if axes else None,
            reconciliation=reconciliation(conflict, chosen, ra, rb, question),
            evidence_spans=_evidence(pair, chosen if axes else []),
            confidence=confidence,
            comparable=True,
            comparability=comparability,
            notes=why,
        )
