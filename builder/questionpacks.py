"""Question packs: the clinical questions a benchmark is built around (``builder/questionpacks/*.yaml``).

A pack is YAML ``questions: [{id, text, intervention?, comparator?, outcome?, population?, domain?, query?}]``.
``text`` alone is enough: the fields a pack leaves out are read from the text by :func:`read_question`,
phrase rules for the ways reviewers write a question (PICO order, "compared with / versus / vs",
"in patients with …", "effect of X on Y", "does X reduce Y", "is X more effective than Y for Z",
"do X differ in Y", "is Y higher, lower, or the same when comparing X to Y", "is X effective in preventing Y",
"how effective is X for Y", "is there a difference in Y between X and Z", "is Y lower with X than with Z",
"should X be given to prevent Y", a review's title "X versus Z for (the prevention of) Y in P", "X to prevent
Y", "X and the risk of Y", "X in P"; a title naming no outcome asks about efficacy). A question whose
intervention or outcome can be read neither from the pack nor from its text is kept with a warning naming the
file and the entry (it answers no claim); an entry the :class:`~biodivergence_dataset.records.Question` record
refuses is an error naming them.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path

import yaml
from pydantic import ValidationError

from biodivergence_dataset import ontology
from biodivergence_dataset.records import Question

log = logging.getLogger(__name__)
#: The unread-question warnings already given in this process.
_WARNED: set[str] = set()
PACK_DIR = Path(__file__).parent / "questionpacks"
FIELDS = ("intervention", "comparator", "outcome", "population")


# --- reading the fields from the text -------------------------------------------------------------------
_I = re.IGNORECASE
_PEOPLE = (r"patients|adults|women|men|children|adolescents|people|persons|individuals|subjects|infants|"
           r"neonates|elderly|participants|smokers|outpatients|inpatients|volunteers")
#: "In women with pre-eclampsia, …", "Among adults with migraine, …", "For patients with GERD, …"
_LEADING_POPULATION = re.compile(r"^(?:in|among|for|after|following)\s+(?P<population>[^,]+?)\s*,\s*(?P<rest>.+)$", _I)
#: "Compared with standard care, does X improve Y?": the comparator set off before the question.
_LEADING_COMPARATOR = re.compile(r"^(?:as\s+)?(?:compared\s+(?:to|with)|in\s+comparison\s+(?:to|with)|versus|"
                                 r"relative\s+to)\s+(?P<comparator>[^,]+?)\s*,\s*(?P<rest>.+)$", _I)
#: "does treatment with X …": the treatment is X.
_TREATMENT_WITH = re.compile(r"^(?:the\s+)?(?:treatment|therapy|supplementation|prophylaxis)\s+with\s+(?=\S)", _I)
#: "X during pregnancy", "X after hip fracture surgery" at the end of an intervention: when it is given, who gets it.
_INTERVENTION_WHEN = re.compile(r"\s+(?:during|after|following)\s+(?!(?:the|a|an|\d|one|two|three|six|twelve|first|"
                                r"week|weeks|month|months|year|years|day|days|hour|hours)\b)"
                                r"(?P<population>[\w\-]+(?:\s+[\w\-]+){0,4})$", _I)
#: "… in patients with heart failure", "… among adults over 65" (at the end of a phrase)
_TRAILING_POPULATION = re.compile(
    rf"\s+(?:in|among|for)\s+(?P<population>(?:[\w\-]+\s+){{0,3}}?(?:{_PEOPLE})\b.*)$", _I)
#: "compared to placebo", "versus omeprazole", "vs. ramipril", "relative to X", set off or running on.
_COMPARATOR = re.compile(
    r",?\s*\b(?:(?:as\s+)?compared\s+(?:to|with)|in\s+comparison\s+(?:to|with)|versus|vs\.?|v\.|relative\s+to|"
    r"rather\s+than)\s+(?P<comparator>.+?)\s*(?=,|$|\?|\s(?:on|for|in|at|regarding|with\s+respect\s+to|"
    r"in\s+terms\s+of|reduce|reduces|improve|improves|increase|increases|decrease|decreases|lower|lowers|"
    r"raise|raises|prevent|prevents|affect|affects|differ|change|changes|associated|cause|causes|lead|leads|"
    r"result|results|produce|produces|provide|provides)\b)", _I)
_VERBS = (r"improve|reduce|increase|decrease|lower|raise|prevent|affect|change|alter|cause|shorten|prolong|"
          r"relieve|delay|worsen|control|maintain|induce|heal|cure|treat|lead\s+to|result\s+in|produce|provide|"
          r"achieve")
#: What an intervention is for, before the outcome it names ("effective in preventing falls", "for the treatment
#: of insomnia").
_AIMS = (r"(?:preventing|treating|reducing|improving|increasing|decreasing|lowering|relieving|shortening|"
         r"(?:the\s+)?(?:(?:primary|secondary)\s+)?(?:treatment|prevention|management|reduction|relief)\s+of)")
_DIRECTIONS = r"higher|lower|greater|smaller|better|worse|more|less|fewer|different|faster|slower|longer|shorter"
#: A review's title, not a question: it does not open with a question word.
_NOT_ASKED = r"^(?!(?:is|are|was|were|do|does|did|can|could|should|will|would|which|what|how|when|why|who)\b)"
#: The shapes of a question, each filling its named groups; the first that matches the question (population and
#: comparator removed) wins.
_SHAPES: tuple[re.Pattern, ...] = (
    # Is the rate of healing higher, lower, or the same when comparing lansoprazole to omeprazole?
    re.compile(rf"^(?:is|are|was|were)\s+(?:the\s+)?(?P<outcome>.+?)\s+(?:(?:{_DIRECTIONS})\s*,?\s*)+(?:or\s+)?"
               rf"(?:the\s+same|similar|no\s+different|unchanged)\s+(?:when|if|in|for|with)\s+(?:comparing\s+)?"
               rf"(?P<arms>.+)$", _I),
    # What is the effect of X on Y? / Effect of X on Y / Efficacy and safety of X in P / Comparative efficacy of X
    re.compile(r"^(?:what\s+(?:is|are)\s+)?(?:the\s+)?(?:comparative\s+)?(?P<quality>effects?|impact|influence|efficacy|"
               r"effectiveness|safety|benefits?|harms?)(?:\s+and\s+(?:safety|tolerability|harms?|effectiveness|efficacy))?"
               r"\s+of\s+(?P<intervention>.+?)(?:\s+(?P<preposition>on|for|in\s+terms\s+of|with\s+respect\s+to|regarding|"
               rf"in)\s+(?P<aim>{_AIMS}\s+)?(?P<outcome>.+))?$", _I),
    # Can falls be prevented by exercise? / Are falls reduced by X?
    re.compile(r"^(?:can|could|is|are|was|were|will|would)\s+(?P<outcome>.+?)\s+(?:be\s+)?(?:prevented|reduced|"
               r"improved|treated|relieved|lowered|raised|increased|decreased|shortened|prolonged|delayed|controlled|"
               r"affected|changed|healed|avoided)\s+(?:by|with|using|through)\s+(?P<intervention>.+)$", _I),
    # Do patients with heart failure benefit from beta-blockers?
    re.compile(r"^(?:do|does|did|can|could|will|would)\s+(?P<population>.+?)\s+benefit\s+from\s+(?P<intervention>.+)$",
               _I),
    # Which antidepressant is most effective for major depression?
    re.compile(r"^which\s+(?P<intervention>.+?)\s+(?:is|are)\s+(?:the\s+)?(?:most|least|more|less|best)\s+"
               r"(?P<quality>effective|efficacious|safe|well\s+tolerated|tolerable)(?:\s+(?P<preposition>for|in|at|on)\s+"
               rf"(?P<aim>{_AIMS}\s+)?(?P<outcome>.+))?$", _I),
    # How do ACE inhibitors compare with angiotensin receptor blockers (in reducing mortality)?
    re.compile(r"^how\s+(?:do|does)\s+(?P<intervention>.+?)\s+compare\s+(?:with|to|against)\s+(?P<comparator>.+?)"
               rf"(?:\s+(?P<preposition>in|for|on|regarding)\s+(?P<aim>{_AIMS}\s+)?(?P<outcome>.+))?$", _I),
    # Do X differ (from Y) in Y? / Does X differ …
    re.compile(r"^(?:do|does|did)\s+(?P<intervention>.+?)\s+differ(?:\s+from\s+(?P<comparator>.+?))?\s+"
               r"(?:in|on|with\s+respect\s+to|regarding|in\s+terms\s+of|for)\s+(?P<outcome>.+)$", _I),
    # Is X more effective than Y for Z? / Is X as safe as Y in terms of Z?
    re.compile(r"^(?:is|are|was|were)\s+(?P<intervention>.+?)\s+(?:(?:more|less|as|equally)\s+)?(?P<quality>effective|"
               r"efficacious|safe|well\s+tolerated|tolerable|beneficial|useful|helpful|potent|needed|necessary|"
               r"indicated|better|superior|inferior|non-?inferior|equivalent|worse|"
               r"likely\s+to\s+[\w\-]+(?:\s+[\w\-]+)?)"
               r"(?:\s+(?:than|as|to)\s+(?P<comparator>.+?))?(?:\s+(?P<preposition>for|in|at|on|regarding|with\s+respect\s+to|"
               rf"in\s+terms\s+of|to)\s+(?P<aim>{_AIMS}\s+)?(?P<outcome>.+))?$", _I),
    # How effective is X for (preventing) Y?
    re.compile(r"^how\s+(?P<quality>effective|safe|beneficial|useful)\s+(?:is|are)\s+(?P<intervention>.+?)"
               rf"(?:\s+(?:for|in|at|on|to)\s+(?:{_AIMS}\s+)?(?P<outcome>.+))?$", _I),
    # Is there any benefit of X in P? / Is there a role for X in the treatment of Y?
    re.compile(r"^(?:is|are)\s+there\s+(?:a|any)\s+(?:\w+\s+)?(?P<quality>benefit|advantage|role|place)\s+"
               r"(?:of|from|for)\s+(?P<intervention>.+?)(?:\s+(?P<preposition>in|for|on)\s+(?P<aim>"
               rf"{_AIMS}\s+)?(?P<outcome>.+))?$", _I),
    # Is there a difference in Y between X and Z?
    re.compile(r"^(?:is|are)\s+there\s+(?:a|any)\s+(?:significant\s+)?differences?\s+in\s+(?P<outcome>.+?)\s+"
               r"between\s+(?P<arms>.+)$", _I),
    # Is Y lower with X than with Z?
    re.compile(rf"^(?:is|are)\s+(?:the\s+)?(?P<outcome>.+?)\s+(?:{_DIRECTIONS})\s+(?:with|after|on|for|using)\s+"
               r"(?P<intervention>.+?)\s+than\s+(?:with\s+|after\s+|on\s+|for\s+|using\s+)?(?P<comparator>.+)$", _I),
    # Should X be given to prevent Y? / Should X be used for Y?
    re.compile(r"^should\s+(?P<intervention>.+?)\s+be\s+(?:given|used|offered|prescribed|administered|recommended)"
               rf"\s+(?:to\s+(?P<verb>{_VERBS})|for(?:\s+{_AIMS})?)\s+(?P<outcome>.+)$", _I),
    # Is X associated with (fewer) Y (than Z)?
    re.compile(r"^(?:is|are|was|were)\s+(?P<intervention>.+?)\s+(?:associated|linked|correlated)\s+with\s+"
               r"(?:(?:a|an)\s+)?(?:(?:higher|lower|greater|increased|decreased|reduced|fewer|less|more)\s+)?"
               r"(?P<outcome>.+?)(?:\s+than\s+(?:with\s+)?(?P<comparator>.+))?$", _I),
    # Does X cause more/fewer Y than Z? / Does X have a lower risk of Y?
    re.compile(rf"^(?:do|does|did|can|could|will|would)\s+(?P<intervention>.+?)\s+(?:cause|have|has|show|produce|"
               rf"lead\s+to|result\s+in)\s+(?:a\s+|an\s+|any\s+)?(?:{_DIRECTIONS})\s+(?P<outcome>.+?)"
               rf"(?:\s+than\s+(?P<comparator>.+))?$", _I),
    # Does X reduce Y? / Can X improve Y? / Does X, compared to placebo, reduce Y?
    re.compile(rf"^(?:do|does|did|can|could|will|would)\s+(?P<intervention>.+?)\s+(?P<verb>{_VERBS})(?:s|es)?\s+"
               rf"(?P<outcome>.+?)(?:\s+(?:(?:more|less|better|worse|faster|slower)(?:\s+\w+)?\s+than|"
               rf"as\s+(?:\w+\s+)?as)\s+(?P<comparator>.+))?$", _I),
    # A review's title of an exposure and a risk: Omega-3 fatty acids and the risk of cardiovascular disease
    re.compile(_NOT_ASKED +
               r"(?P<intervention>.+?)\s+and\s+(?:the\s+)?(?:risk|incidence|development|progression|prevention)\s+of\s+"
               r"(?P<outcome>.+)$", _I),
    # A review's title: X (versus Y) for (preventing) Y (in P) / X to prevent Y (in P)
    re.compile(_NOT_ASKED +
               rf"(?P<intervention>.+?)\s+(?:(?:for|in)\s+(?:{_AIMS}\s+)?|to\s+(?P<verb>{_VERBS})\s+)(?P<outcome>.+)$", _I),
    # A review's title naming when it is given: Antiplatelet therapy after coronary stenting
    re.compile(_NOT_ASKED +
               r"(?P<intervention>.+?)\s+(?:after|following)\s+(?P<population>.+)$", _I),
)
#: "Is there evidence that acupuncture relieves chronic pain?": the claim asked about, read as "does …".
_EVIDENCE_THAT = re.compile(r"^(?:is\s+there\s+(?:any\s+|good\s+|sufficient\s+)?evidence|do(?:es)?\s+(?:the\s+)?evidence"
                            r"\s+(?:show|suggest|support))\s+that\s+", _I)
#: "Psychological interventions for depression: are they effective?": a title and a question about it.
_TITLE_ASKED = re.compile(r"^(?P<title>[^:]+):\s*(?:are|is)\s+(?:they|it|these|this|there)\b", _I)
#: An outcome phrase that begins with a verb of the question's shape: the verb before it was part of the
#: intervention.
_VERB_FIRST = re.compile(rf"^(?P<verb>{_VERBS})(?:s|es)?\s+(?P<outcome>.+)$", _I)
#: A phrase that names people first ("patients with septic shock"): a population, not an outcome.
_PEOPLE_PHRASE = rf"^(?:(?!(?:in|for|of|on|with|after|among)\b)[\w\-]+\s+){{0,2}}?(?:{_PEOPLE})"
_PEOPLE_FIRST = re.compile(_PEOPLE_PHRASE + r"\b", _I)
#: A phrase that is only a group of people ("trauma patients", "women at risk of preterm birth"): read where the
#: outcome stands, it is who was studied, and the question asks whether the intervention works there.
_PEOPLE_ONLY = re.compile(_PEOPLE_PHRASE + r"(?:\s+(?:with|who|at|aged|undergoing|receiving|living)\b.*)?$", _I)
#: An outcome that is an aim in its own words ("in healing erosive esophagitis"), not the population.
_GERUND = re.compile(r"^\w+ing\b", _I)
#: Words that make an arm of a title by changing a treatment both arms share ("early versus delayed cord clamping").
_ARM_MODIFIERS = frozenset(("early", "late", "delayed", "immediate", "deferred", "high", "low", "short", "long",
                            "intermittent", "continuous", "single", "multiple", "standard", "intensive",
                            "conventional", "restrictive", "liberal", "oral", "intravenous", "topical", "daily",
                            "weekly", "monthly"))
#: "… in type 2 diabetes", "… after myocardial infarction" at the end of an outcome or comparator: the condition
#: studied, when the words before it say more than a change ("reduction in blood pressure" keeps its "in") and
#: what follows is no place, time or range ("days in hospital", "HbA1c after 12 weeks", "time in range").
_TRAILING_CONDITION = re.compile(
    r"(?<!\bchange)(?<!\bchanges)(?<!\breduction)(?<!\breductions)(?<!\bincrease)(?<!\bincreases)"
    r"(?<!\bdecrease)(?<!\bdecreases)(?<!\bimprovement)(?<!\bimprovements)(?<!\bdecline)(?<!\brise)(?<!\bfall)"
    r"(?<!\bdifference)(?<!\bdifferences)(?<!\btime)(?<!\bdays)(?<!\bstay)"
    r"\s+(?:in|after|following)\s+(?!(?:the|a|an|any|all|both|each|group|groups|fixed|combination|hospital|icu|"
    r"intensive|range|\d|one|two|three|six|twelve|first|second|week|month|year|day|hour)\b)"
    r"(?P<population>[\w\-]+(?:\s+[\w\-]+){0,5})$", _I)
#: The most words a comparator may have, its trailing condition included, for that condition to be read as the
#: population ("aspirin in atrial fibrillation"); a longer one is an arm's description ("local delivery of lycopene
#: gel after SRP"). The measure and arms of "is Y higher … when comparing X to Z" keep their "in …" ("time in
#: remission", "feeding in prone position").
_COMPARATOR_MAX_WORDS = 5
#: "the addition of X to Y", "adding X to Y": X plus Y, set against Y alone.
_ADD_ON = re.compile(r"^(?:the\s+)?(?:addition\s+of|adding)\s+(?P<added>.+?)\s+to\s+(?P<base>.+)$", _I)
_QUALITY_OUTCOME = {"safe": "adverse events", "well tolerated": "tolerability", "tolerable": "tolerability"}
#: The outcome of a question that names none ("is X effective", "X in P"): the lexicon's efficacy group.
_EFFICACY = "efficacy"
#: Verbs whose object is the condition and whose sense is the outcome: "heal duodenal ulcers" asks about
#: duodenal ulcer healing (not pain or gastric pH in ulcer patients), "relieve migraine pain" about its relief.
_VERB_OUTCOME = {"heal": "healing", "relieve": "relief", "cure": "cure"}
#: An outcome holding the question's own verb after the first one matched, which was an infinitive of the
#: intervention ("do interventions to improve adherence reduce blood pressure"): that verb and what follows.
_SECOND_VERB = re.compile(rf"\s(?P<verb>{_VERBS})(?:s|es)?\s+(?P<outcome>.+)$", _I)
#: "Is surgery or radiotherapy better …": two arms joined by "or" in a comparative question.
_EITHER_ARM = re.compile(r"^(?P<intervention>.+?)\s+or\s+(?P<comparator>.+)$", _I)
#: The qualities that compare two arms ("better", "more effective") rather than judge one.
_COMPARATIVE = re.compile(r"\b(?:better|worse|superior|inferior|non-?inferior|equivalent|(?:more|less|as|equally)\s+"
                          r"(?:effective|efficacious|safe|beneficial|useful|helpful|potent))\b", _I)
_ARTICLE = re.compile(r"^(?:(?:in\s+)?(?:reducing|improving|increasing|decreasing|lowering|preventing)\s+)?"
                      r"(?:(?:the|a|an)\s+)?", _I)


@dataclass(frozen=True)
class ReadFields:
    intervention: str | None = None
    comparator: str | None = None
    outcome: str | None = None
    population: str | None = None


def clean_phrase(phrase: str | None) -> str | None:
    """A phrase read from a question as a field holds it: no leading article or "reducing", no edge punctuation."""
    if not phrase:
        return None
    phrase = _ARTICLE.sub("", phrase.strip(" ,;:?.\t\n"))
    return phrase or None


def read_question(text: str) -> ReadFields:
    """Intervention, comparator, outcome and population read from a question's wording (None where not found)."""
    rest = " ".join(text.split()).rstrip(" ?.")
    population = comparator = None
    if m := _TITLE_ASKED.match(rest):  # "X for Y: are they effective?" asks about the title "X for Y"
        rest = m.group("title")
    if m := _EVIDENCE_THAT.match(rest):  # "is there evidence that X relieves Y" asks "does X relieve Y"
        rest = _declared(rest[m.end():])
    for _ in range(2):  # "In P, compared with C, does …" or the other way round
        if population is None and (m := _LEADING_POPULATION.match(rest)):
            population, rest = m.group("population"), m.group("rest")
        if comparator is None and (m := _LEADING_COMPARATOR.match(rest)):
            comparator, rest = m.group("comparator"), m.group("rest")
    shaped = _match_shape(rest)
    if shaped is None and (m := _COMPARATOR.search(rest)):  # a set-off comparator clause, then the shape
        comparator = m.group("comparator")
        shaped = _match_shape((rest[:m.start()] + rest[m.end():]).strip(" ,"))
    if shaped is None:
        return ReadFields(population=clean_phrase(population), comparator=clean_phrase(comparator))
    fields = shaped
    comparator = fields.get("comparator") or comparator
    population = population or fields.get("population")
    intervention, outcome = fields.get("intervention"), fields.get("outcome")
    if intervention and not comparator and (m := _COMPARATOR.search(intervention)):
        comparator, intervention = m.group("comparator"), intervention[:m.start()]
    if outcome and not comparator and (m := _COMPARATOR.search(outcome)):
        comparator, outcome = m.group("comparator"), outcome[:m.start()] + outcome[m.end():]
    if outcome and not population and (
            fields.get("quality") and _PEOPLE_FIRST.match(outcome) or fields.get("preposition", "").lower() == "in"
            and not fields.get("aim") and not _GERUND.match(outcome)):
        population, outcome = outcome, None  # "beneficial for patients with septic shock", "safe in pregnancy"
    if outcome and "arms" not in fields and not population and _PEOPLE_ONLY.match(outcome):
        population, outcome = outcome, _EFFICACY  # "tranexamic acid in trauma patients"
    if (intervention and not comparator and _COMPARATIVE.search(fields.get("quality", "") + " " + rest)
            and (m := _EITHER_ARM.match(intervention))):
        intervention, comparator = m.group("intervention"), m.group("comparator")  # "is surgery or radiotherapy better"
    if intervention and comparator and intervention.lower() in _ARM_MODIFIERS:
        first, *head = comparator.split()
        if head and first.lower() in _ARM_MODIFIERS:  # "early versus delayed cord clamping"
            intervention = " ".join([intervention, *head])
    for pattern in (_TRAILING_POPULATION, _TRAILING_CONDITION):
        for name in ("outcome", "comparator"):
            value = outcome if name == "outcome" else comparator
            if pattern is _TRAILING_CONDITION and ("arms" in fields or name == "comparator" and value and (
                    len(value.split()) > _COMPARATOR_MAX_WORDS)):
                continue  # a measure or arm as named between two arms: "time in remission", "feeding in prone position"
            if value and not population and (m := pattern.search(value)):
                population, value = m.group("population"), value[:m.start()]
                outcome, comparator = (value, comparator) if name == "outcome" else (outcome, value)
    if intervention and not population and (m := _TRAILING_POPULATION.search(intervention)):
        population, intervention = m.group("population"), intervention[:m.start()]  # "… by exercise in older people"
    if intervention and not population and (m := _INTERVENTION_WHEN.search(intervention)):
        population, intervention = m.group("population"), intervention[:m.start()]  # "aspirin during pregnancy"
    if intervention and "arms" not in fields:  # an arm named between two arms is kept as written
        intervention = _TREATMENT_WITH.sub("", intervention)
    if intervention and (m := _ADD_ON.match(intervention)):  # "the addition of rituximab to chemotherapy"
        intervention = f"{m.group('added')} plus {m.group('base')}"
        comparator = comparator or f"{m.group('base')} alone"
    if outcome and (sense := _VERB_OUTCOME.get(fields.get("verb", "").lower())):
        outcome = f"{outcome} {sense}"
    if outcome is None and intervention:  # "is X effective", "is X safe in pregnancy", "do P benefit from X"
        quality = " ".join(fields.get("quality", "").lower().split())
        outcome = _QUALITY_OUTCOME.get(quality, _EFFICACY)
    return ReadFields(*(clean_phrase(f) for f in (intervention, comparator, outcome, population)))


#: A question answered by a direction or an amount, not yes or no: a wh-question ("what is the effect of …",
#: "how effective is …"), the directions offered as its answers ("higher, lower, or the same"), or a review's
#: title ("Paracetamol versus ibuprofen for fever in children").
_OPEN_QUESTION = re.compile(
    rf"^\s*(?:what|how|which|when|where|why|who|(?:the\s+)?(?:effects?|impact|influence|efficacy)\s+of)\b"
    rf"|\b(?:{_DIRECTIONS})\s*,?\s*(?:or\s+)?(?:the\s+same|similar|unchanged|no\s+different)\b"
    r"|^[^?]*\b(?:versus|vs\.?|v\.)\s[^?]*$", _I)


def asks_yes_or_no(text: str) -> bool:
    """Whether a question is answered yes or no ("Do statins reduce blood pressure?", "Is there a difference in
    Y between X and Z?"; a claim asked as a question, "Vitamin C cures COVID-19", too) rather than by a direction
    or an amount (``_OPEN_QUESTION``)."""
    return not _OPEN_QUESTION.search(" ".join(text.split()))


#: What may join the two arms of "when comparing X to Y", strongest first.
_ARM_JOINS = tuple(re.compile(rf"\s+(?:{sep})\s+", _I) for sep in (r"versus|vs\.?|v\.", "to", "with", "and"))


#: "X reduces Y": the subject, the verb in its base form, and the rest.
_DECLARED = re.compile(rf"^(?P<subject>.+?)\s+(?P<verb>{_VERBS})(?:s|es)?\s+(?P<rest>.+)$", _I)


def _declared(clause: str) -> str:
    """A declarative clause ("acupuncture relieves chronic pain") as the question "does …" it states."""
    if m := _DECLARED.match(clause):
        return f"does {m.group('subject')} {m.group('verb')} {m.group('rest')}"
    return clause


def split_arms(arms: str) -> tuple[str, str | None]:
    """The intervention and comparator of "comparing X to Y": split at the strongest join ("versus", then "to",
    "with", "and"), at its last occurrence, since an intervention's own phrase holds such words far more often
    than a comparator's ("mobilisation and orientation in addition to usual care to usual care alone",
    "dapagliflozin 2.5 to 10 mg plus metformin to placebo", "rocuronium with lidocaine to placebo")."""
    for join in _ARM_JOINS:
        if found := list(join.finditer(arms)):
            last = found[-1]
            return arms[:last.start()], arms[last.end():]
    return arms, None


def _match_shape(text: str) -> dict[str, str] | None:
    for pattern in _SHAPES:
        if m := pattern.match(text):
            fields = {k: v for k, v in m.groupdict().items() if v}
            while "verb" in fields and (again := _VERB_FIRST.match(fields.get("outcome", ""))):
                # the first verb was the intervention's own word ("does intensive glucose control reduce …")
                fields["intervention"] += f" {fields['verb']}"
                fields["verb"], fields["outcome"] = again.group("verb"), again.group("outcome")
            if ("verb" in fields and re.search(r"\sto$", fields["intervention"], _I)
                    and (again := _SECOND_VERB.search(fields.get("outcome", "")))):
                # "interventions to improve adherence reduce …": the first verb was the intervention's aim
                fields["intervention"] += f" {fields['verb']} {fields['outcome'][:again.start()]}"
                fields["verb"], fields["outcome"] = again.group("verb"), again.group("outcome")
            if arms := fields.get("arms"):  # kept: the outcome is then a measure set between two named arms
                fields["intervention"], comparator = split_arms(arms)
                if comparator:
                    fields["comparator"] = comparator
            return fields
    return None


# --- loading --------------------------------------------------------------------------------------------
class _PackLoader(yaml.SafeLoader):
    """YAML's safe loader with every plain scalar but ``null`` read as written: a pack's fields are text, so
    ``id: 0123`` is the id "0123" (not the octal number 83) and ``id: 1.10`` is "1.10" (not 1.1)."""


_PackLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag == "tag:yaml.org,2002:null"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}


def unread_fields(question: Question) -> list[str]:
    """The fields a question needs to be answered by claims (intervention, outcome) that it lacks."""
    return [name for name in ("intervention", "outcome") if not getattr(question, name)]


def question_from(entry: dict, strict: bool = True) -> Question:
    """The Question of a pack entry (``id``, a string or a whole number, ``text`` and the optional fields): its
    stated fields, the missing ones read from its text (ValidationError for a bad entry; with ``strict``,
    ValueError when a needed field cannot be read)."""
    data = {("question_id" if k == "id" else k): v for k, v in entry.items()}
    if isinstance(data.get("question_id"), int) and not isinstance(data["question_id"], bool):
        data["question_id"] = str(data["question_id"])  # a number from JSON or code
    if isinstance(data.get("text"), str):
        read = read_question(data["text"])
        for name in FIELDS:
            data[name] = data.get(name) or getattr(read, name)
    question = Question.model_validate(data)
    if strict and (missing := unread_fields(question)):
        raise ValueError(unread_message(question, missing))
    return question


def unread_message(question: Question, missing: list[str]) -> str:
    """What to tell the pack's author about a question whose ``missing`` fields cannot be read."""
    return (f"cannot read the {' and the '.join(missing)} from the text {question.text!r}; "
            f"state {', '.join(f'{m}:' for m in missing)} in the entry")


class PackError(ValueError):
    """A question pack that cannot be read: the message names the file and the entry (never echoing its value)."""


def load_questions(path: str | Path) -> list[Question]:
    """The questions of one pack file; a bad file or entry raises ValueError naming the file and the entry. A
    question whose intervention or outcome cannot be read from its text is kept, with a warning naming it: it
    answers no claim until the entry states them (one phrasing the rules miss does not stop a pack of hundreds),
    unless no question of the pack can be read."""
    path = Path(path)
    if path.is_dir():
        raise PackError(f"question pack {path} is a folder, not a YAML file")
    if not path.is_file():
        raise FileNotFoundError(f"question pack {path} does not exist")
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_PackLoader)  # a SafeLoader
    except UnicodeDecodeError as exc:
        raise PackError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except yaml.YAMLError as exc:
        raise PackError(f"{path}: not valid YAML: {_yaml_problem(exc)}") from None
    entries = data.get("questions") if isinstance(data, dict) else None
    if not isinstance(entries, list) or not entries:
        raise PackError(f"{path}: a question pack is a mapping with a non-empty 'questions:' list")
    questions: list[Question] = []
    unread: list[str] = []
    seen: set[str] = set()
    for i, raw in enumerate(entries, 1):
        given = raw.get("id") if isinstance(raw, dict) else None
        # the id is shown only when it is a short string: a huge value (an alias bomb) is never rendered
        where = f"{path}: question {i}" + (f" ({given!r})" if isinstance(given, str) and 0 < len(given) <= 80 else "")
        if not isinstance(raw, dict):
            raise PackError(f"{where}: expected a mapping with id and text, got {type(raw).__name__}")
        try:
            question = question_from(raw, strict=False)
        except ValidationError as exc:
            problems = "; ".join(f"{_entry_key(e['loc'])}: {e['msg']}" for e in exc.errors())
            raise PackError(f"{where}: {problems}") from None
        if question.question_id in seen:
            raise PackError(f"{where}: duplicate id {question.question_id!r}")
        seen.add(question.question_id)
        questions.append(question)
        if missing := unread_fields(question):
            unread.append(f"{where}: {unread_message(question, missing)}")
    if len(unread) == len(questions):
        raise PackError("; ".join(unread))
    for message in unread:
        if message not in _WARNED:  # gather, questions and the build each load the pack: say it once
            _WARNED.add(message)
            log.warning("%s; it answers no claim", message)
    return questions


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """One line: what the parser found and where (PyYAML's own message spans several lines and quotes the file)."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or type(exc).__name__
    return f"{problem} at line {mark.line + 1}, column {mark.column + 1}" if mark else problem


def pack_domain(questions: list[Question]) -> str | None:
    """The one domain of a pack's questions (a question naming none is ``ontology.QUESTION_DOMAIN``); None when
    they name several."""
    domains = {q.domain or ontology.QUESTION_DOMAIN for q in questions}
    return domains.pop() if len(domains) == 1 else None


def _entry_key(loc: tuple) -> str:
    """A validation error's field as the pack spells it (``id``, not the record's ``question_id``)."""
    name = ".".join(map(str, loc)) or "entry"
    return "id" if name == "question_id" else name


def search_query(question: Question) -> str:
    """The literature search of a question: its ``query``, else its intervention, comparator and outcome terms
    (PubMed syntax: each phrase in quotes as title/abstract words, ANDed, the comparator optional; for a question
    naming no outcome of its own, whose outcome is efficacy, its population instead: few abstracts say
    "efficacy"), else (its fields unread) its text, for the search engine's own term mapping."""
    if question.query:
        return question.query
    if unread_fields(question):
        return question.text.rstrip(" ?.")
    def phrase(p: str) -> str:
        return f'"{p}"[tiab]'

    parts = [phrase(question.intervention)]
    if question.comparator and question.comparator.lower() != "placebo":
        parts[0] = f"({phrase(question.intervention)} OR {phrase(question.comparator)})"
    if question.outcome.lower() != _EFFICACY:
        parts.append(phrase(question.outcome))
    elif question.population:
        parts.append(phrase(question.population))
    return " AND ".join(parts)
