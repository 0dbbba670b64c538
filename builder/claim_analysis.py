"""Claim sentence analysis: the claim score of a sentence and what a claim sentence says (type, negation and hedge
flags, entities, slots), all read from one scan of its cue patterns (:data:`SCANNER`).

The score sums capped, weighted lexical and structural cues (result verbs, statistics, comparatives, null findings,
conclusion phrases; minus methods/objective/background phrasing); the claims stage adds a section or position prior.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

from biodivergence_dataset import ontology
from biodivergence_dataset.records import ClaimSlots
from biodivergence_text import cues

# --- sentence scoring ---------------------------------------------------------------------------------
#: Claim-score cue groups: (name, weight, cap on hits counted, regex alternatives); matched as whole words,
#: case-insensitively.
_CUE_GROUPS: tuple[tuple[str, float, int, str], ...] = (
    ("result", 1.0, 2,
     (r"found|finds?|show(?:s|ed|n)?|demonstrat\w+|reveal(?:s|ed)?|observed|identified|confirm(?:s|ed)|"
     r"indicat(?:e|es|ed)|resulted in|yielded|achieved|(?:was|were|is|are) (?:\w+ly )?(?:associated|correlated|"
     r"linked|related|resistant|susceptible|sensitive|effective|ineffective|superior|inferior|similar|"
     r"comparable|different|common|prevalent|present|absent|elevated|detected|positive|negative|predictive|"
     r"prognostic|protective|safe|well tolerated|higher|lower|greater|increased|decreased|reduced|improved)")),
    ("statistic", 1.0, 2,
     (r"p\s*(?:value\s*)?(?:[<>=≤≥]|&lt;)\s*0?\.\d+|95\s*%\s*(?:CI|confidence interval)|\d+(?:\.\d+)?\s?%|"
     r"(?-i:a?(?:HR|OR|RR|IRR))|hazard ratio|odds ratio|relative risk|risk ratio|\d+(?:\.\d+)?-fold|"
     r"significant(?:ly)?|r\s*=\s*-?0?\.\d+")),
    ("comparative", 0.5, 1, r"than|compared (?:with|to)|versus|vs\.?|relative to|between (?:the )?groups"),
    ("null", 1.0, 1, cues.LEXICON_PATTERNS["no_difference"]),
    ("direction", 0.5, 1, cues.LEXICON_PATTERNS["increase"] + "|" + cues.LEXICON_PATTERNS["decrease"]),
    ("conclusion", 1.5, 1,
     (r"in conclusion|we conclude|(?:these|our|present) (?:results|findings|data|observations|studies|study)"
     r"(?: \w+)? (?:suggest|indicate|show|demonstrate|support|provide|confirm|reveal)\w*|taken together|"
     r"this (?:study|work|trial|analysis) (?:shows|demonstrates|indicates|suggests|provides|confirms)")),
    ("methods", -2.0, 1,
     (r"we (?:\w+ly )?(?:performed|conducted|enrolled|recruited|reviewed|analy[sz]ed|used|collected|measured|"
     r"included|designed|developed|searched|randomi[sz]ed|evaluated|assessed|examined|investigated|studied|"
     r"compared|selected|obtained|calculated|applied|estimated|surveyed|interviewed|followed)|"
     r"(?:was|were) (?:\w+ly )?(?:enrolled|recruited|randomi[sz]ed|randomly assigned|included|collected|assigned|"
     r"measured|obtained|performed|used|calculated|analy[sz]ed|reviewed|assessed|evaluated|administered|"
     r"followed up|divided|stratified|allocated|recorded|extracted|surveyed|interviewed|screened|sampled|"
     r"retrieved|defined|estimated|compared|examined|investigated|determined by|carried out)|"
     r"using (?:a|an|the)|data (?:were|was) (?:obtained|collected|analy[sz]ed)")),
    ("objective", -2.5, 1,
     (r"(?:aims?|purpose|objectives?|goals?) of|we aimed|we sought|we hypothesi[sz]ed|"
     r"this (?:study|trial|work|analysis) (?:aimed|aims|was designed|sought|investigates|evaluates|examines|"
     r"assesses|describes)|this (?:paper|article|report|review) (?:presents|describes|reports|summari[sz]es|"
     r"reviews|discusses)|^to (?:assess|evaluate|determine|investigate|examine|compare|identify|"
     r"describe|explore|characteri[sz]e|estimate)|we (?:investigated|examined|evaluated|assessed|asked|tested) "
     r"(?:whether|if|how)")),
    ("background", -1.5, 1,
     (r"little is known|(?:remains?|is|are|was) (?:still )?(?:unclear|unknown|poorly understood|controversial|"
     r"debated|not well)|(?:has|have) been (?:\w+ly )?(?:reported|described|shown|suggested|proposed|implicated)|"
     r"(?:is|are) (?:a|an|the) (?:major|common|leading|important|serious|significant|growing|global)|"
     r"previous (?:studies|reports|work|research)|prior (?:work|studies)|we summari[sz]e")),
)
_SCORE_PREFIX = "score:"
_CUE_WEIGHT = {_SCORE_PREFIX + name: (weight, cap) for name, weight, cap, _ in _CUE_GROUPS}


def score_matches(matches: dict[str, list[re.Match]]) -> tuple[float, bool]:
    """``(cue score, speculative)`` from a sentence's scan: the sum of capped, weighted claim-cue hits (no
    section or position prior), and whether it is a speculative follow-up ('further studies are needed')."""
    score = sum(_CUE_WEIGHT[g][0] * min(len(ms), _CUE_WEIGHT[g][1]) for g, ms in matches.items() if g in _CUE_WEIGHT)
    return score, "speculative" in matches


def position_bonus(index: int, total: int) -> float:
    """Prior for unstructured abstracts: findings sit late, background early."""
    if total <= 1 or index == total - 1:
        return 1.0
    if index == 0:
        return -0.5
    return 0.5 if index / (total - 1) >= 0.5 else 0.0


def confidence_from(score: float, threshold: float, hedged: bool) -> float:
    """Monotone map of the claim score to [0, 1]; 0.5 at the threshold, hedged claims discounted."""
    conf = 1.0 - 0.5 * math.exp(-max(0.0, score - threshold) / 2.0)
    return round(conf * (0.85 if hedged else 1.0), 4)


# --- claim analysis: types, slots, entities -----------------------------------------------------------
_TYPE_PREFIX = "type:"
#: Cue matches that are ordinary function words when lower-case (the odds-ratio cue "OR" vs "or").
_LOWERCASE_NON_CUES = frozenset({"or"})
_STOP = frozenset(
    "a an the of in on at to for from by with without and or but than as was were is are be been being has "  # noqa: SIM905 (a word list reads best as words)
    "have had that which who whom this these those its their our his her it they we there after before "
    "during between among within versus vs compared when while whereas not no nor all both each "
    "into over under per via only also".split()
)
_PHRASE = r"([A-Za-z0-9][\w\-/']*(?:\s+[\w\-/']+){0,4})"
#: Slot patterns (whole words, case-insensitive); the first capture group holds the slot phrase.
_SLOT_PATTERNS = {
    "p_value": r"p\s*(?:-?value\s*)?(?:[<>=≤≥]|&lt;|&gt;)\s*=?\s*(?:\d*\.\d+(?:\s*[x×]\s*10\s*[-−]\s*\d+)?|"
               r"\d+(?:\.\d+)?e-?\d+)",
    "effect_size": r"(?:(?-i:a?(?:HR|OR|RR|IRR)|SMD|MD|RD)|hazard ratio|odds ratio|relative risk|risk ratio|rate ratio|"
                   r"mean difference|risk difference)\b[^0-9\n]{0,12}\d+(?:\.\d+)?(?:\s*[(\[;,]\s*95\s*%\s*"
                   r"(?:CI|confidence interval)[^)\];]{0,40}[)\]]?)?|\d+(?:\.\d+)?-fold|\d+(?:\.\d+)?\s?%",
    "intervention": r"(?:treatment|therapy|supplementation|administration|vaccination|exposure|prophylaxis|use|"
                    r"infusion|injection|intake|consumption|receiving|treated with|given|taking)\s+(?:with\s+|of\s+|"
                    r"to\s+)?" + _PHRASE,
    "outcome": r"(?:(?:risk|rates?|incidence|levels?|concentrations?|odds|prevalence|duration|number|severity|"
               r"likelihood|expression|activity|frequency|proportion|time) of\s+" + _PHRASE + r")|(?:(?:improv|"
               r"reduc|increas|decreas|lower|rais|prolong|shorten|prevent|predict)\w*\s+(?:the\s+)?" + _PHRASE + ")",
    "population": r"(?:in|among|of|for)\s+((?:[\w\-]+\s+){0,3}?(?:patients|children|adults|women|men|infants|"
                  r"neonates|subjects|participants|individuals|mice|rats|cases|volunteers|smokers|survivors|"
                  r"recipients|users|residents|workers|students|people|persons|population|cohort))",
}
#: One scanner for everything extraction matches: score cues, lexicon and axis cues, claim types, slots.
SCANNER = cues.PatternScanner({
    **{_SCORE_PREFIX + name: alts for name, _, _, alts in _CUE_GROUPS},
    **cues.cue_patterns(),
    **{_TYPE_PREFIX + t.name: "|".join(f"(?:{p})" for p in t.cue_patterns) for t in ontology.CLAIM_TYPES
       if t.cue_patterns},
    **_SLOT_PATTERNS,
})
_TOKEN_RE = re.compile(r"[A-Za-z0-9][\w\-']*")
_SYMBOL_RE = re.compile(r"(?<![\w-])[A-Za-z][a-z\-]*[A-Z0-9][A-Za-z0-9\-]*(?![\w-])")
_DRUG_SUFFIXES = (
    "mab", "nib", "cillin", "mycin", "micin", "floxacin", "azole", "statin", "pril", "sartan", "olol", "vir",
    "cycline", "penem", "platin", "taxel", "rubicin", "parin", "dronate", "prazole", "triptan", "setron",
    "dipine", "gliptin", "glitazone", "formin", "bactam", "colistin", "aspirin", "cef",
)
_DISEASE_SUFFIXES = ("itis", "oma", "omas", "emia", "aemia", "osis", "pathy", "plasia")
_WORD_FORM_SUFFIXES = _DRUG_SUFFIXES + _DISEASE_SUFFIXES
_DISEASE_HEADS = frozenset({"cancer", "cancers", "carcinoma", "disease", "syndrome", "infection", "infections",
                            "tumor", "tumour", "tumors", "tumours", "disorder", "diabetes", "hypertension",
                            "sepsis", "pneumonia"})
_NOT_ENTITY = frozenset({
    "CI", "OR", "HR", "RR", "IRR", "SD", "SE", "SEM", "IQR", "AOR", "AHR", "SMD", "MD", "RD", "NS", "VS", "II",
    "III", "IV", "USA", "UK", "US", "EU", "N", "P",
})
#: MeSH check tags and other headings too generic to be an entity.
_GENERIC_MESH = frozenset(m.lower() for m in (
    "Humans", "Human", "Male", "Female", "Adult", "Aged", "Middle Aged", "Young Adult", "Adolescent", "Child",
    "Infant", "Animals", "Mice", "Rats", "Pregnancy", "Retrospective Studies", "Prospective Studies",
    "Follow-Up Studies", "Cohort Studies", "Cross-Sectional Studies", "Risk Factors", "Time Factors",
    "Treatment Outcome", "Questionnaires", "Surveys and Questionnaires", "Prognosis", "Incidence", "Prevalence",
    "Reproducibility of Results",
))
#: Axes whose cue values name biomedical entities (organisms, genes, specimens). Every axis name here is looked
#: up in the ontology at import, so that an axis renamed there fails here, not mid-run.
_ENTITY_AXES = tuple(ontology.axis(a).name
                     for a in ("organism_strain_lineage", "gene_mutation_molecular_background", "sample_source"))
#: Slot ← axis whose first cue value fills it.
_AXIS_SLOTS = tuple((slot, ontology.axis(a).name) for slot, a in (
    ("setting", "clinical_setting"), ("geography", "geography"), ("period", "year_time_period"),
    ("organism", "organism_strain_lineage"), ("population", "population_cohort")))
_OUTCOME_AXIS = ontology.axis("endpoint_definition").name


_DIGITS_RE = re.compile(r"\d+(?:\.\d+)?")


def claim_type_of(matches: dict[str, list[re.Match]]) -> str:
    """The claim type with the most distinct ontology cues in the sentence (numbers ignored, so "12%" and
    "40%" are one cue); ties go to the earlier type in the ontology; no cue gives the default (factual)
    type. ``matches``: the scan of the sentence."""
    best, best_hits = ontology.DEFAULT_CLAIM_TYPE, 0
    for name in ontology.CLAIM_TYPE_NAMES:
        cues_found = {_DIGITS_RE.sub("0", m.group(0).lower()) for m in matches.get(_TYPE_PREFIX + name, ())
                      if m.group(0) not in _LOWERCASE_NON_CUES}
        if len(cues_found) > best_hits:
            best, best_hits = name, len(cues_found)
    return best


def _head_phrase(phrase: str) -> str | None:
    """The leading content words of ``phrase`` up to the first function word (at most four)."""
    out = []
    for word in phrase.split():
        w = word.strip(",;:.()[]").lower()
        if not w or w in _STOP or not any(c.isalpha() for c in w):
            break
        out.append(w)
        if len(out) == 4:
            break
    return " ".join(out) or None


def _first_phrase(matches: list[re.Match]) -> str | None:
    for m in matches:
        phrase = next((g for g in m.groups() if g), None)
        head = _head_phrase(phrase) if phrase else None
        if head:
            return head
    return None


def _mesh_entities(sentence_lower: str, mesh_terms: Iterable[str]) -> list[tuple[int, str]]:
    """The abstract's own MeSH headings found (as whole words) in the sentence: a per-abstract gazetteer."""
    out = []
    for term in mesh_terms:
        t = term.lower()
        if "," in t or t in _GENERIC_MESH:
            continue
        pos = sentence_lower.find(t)
        end = pos + len(t)
        if pos >= 0 and (pos == 0 or not sentence_lower[pos - 1].isalnum()) and (
                end == len(sentence_lower) or not sentence_lower[end].isalpha()):
            out.append((pos, t))
    return out


def _symbol_entities(sentence: str) -> list[tuple[int, str]]:
    """Gene/protein/pathogen-like symbols: TP53, IL-6, HbA1c, p53, MRSA (statistics abbreviations excluded)."""
    out = []
    for m in _SYMBOL_RE.finditer(sentence):
        tok = m.group(0)
        upper = sum(c.isupper() for c in tok)
        digit = any(c.isdigit() for c in tok)
        if tok.upper() in _NOT_ENTITY or not (upper >= 2 or (digit and (upper or tok[0].islower()))):
            continue
        out.append((m.start(), tok.lower()))
    return out


def _word_form_entities(sentence: str) -> list[tuple[int, str]]:
    """Drug names by INN stem (-mab, -floxacin, cef-…) and disease terms (-itis, -oma; '<word> cancer')."""
    lower = sentence.lower()
    words = _TOKEN_RE.findall(lower)
    out = []
    for i, word in enumerate(words):
        if word in _DISEASE_HEADS:
            prev = words[i - 1] if i else None
            out.append(f"{prev} {word}" if prev and prev not in _STOP else word)
        elif len(word) > 4 and (word.endswith(_WORD_FORM_SUFFIXES) or word.startswith("cef")):
            out.append(word)
    return [(lower.find(w), w) for w in out]


def entities_of(sentence: str, scan: cues.CueScan, mesh_terms: Iterable[str] = ()) -> list[str]:
    """Entity mentions (lower-case, by position, de-duplicated): MeSH terms of the abstract found in the
    sentence, gene/protein-like symbols, drug and disease word forms, organism/gene/specimen axis cues."""
    found = _mesh_entities(sentence.lower(), mesh_terms) + _symbol_entities(sentence) + _word_form_entities(sentence)
    found += [(h.start, h.value) for h in scan.axis_hits if h.axis in _ENTITY_AXES]
    seen, out = set(), []
    for _, ent in sorted(found):
        ent = " ".join(ent.split())
        if ent not in seen:
            seen.add(ent)
            out.append(ent)
    return out


def _first_text(matches: dict[str, list[re.Match]], name: str) -> str | None:
    found = matches.get(name)
    return " ".join(found[0].group(0).split()) if found else None


def _is_drug(word: str) -> bool:
    return word.endswith(_DRUG_SUFFIXES) or word.startswith("cef")


def slots_of(matches: dict[str, list[re.Match]], scan: cues.CueScan, entities: list[str]) -> ClaimSlots:
    """Structured content of a claim sentence (paper Table 26) from slot patterns and ontology axis cues;
    a drug-like entity stands in for the intervention when no intervention phrase is found."""
    first_value: dict[str, str] = {}
    for h in scan.axis_hits:
        first_value.setdefault(h.axis, h.value)
    slots = {slot: first_value.get(axis) for slot, axis in _AXIS_SLOTS}
    population = matches.get("population")
    if population:
        slots["population"] = " ".join(population[0].group(1).lower().split())
    drug = next((e for e in entities if " " not in e and _is_drug(e)), None)
    return ClaimSlots(
        intervention=_first_phrase(matches.get("intervention", ())) or drug,
        outcome=_first_phrase(matches.get("outcome", ())) or first_value.get(_OUTCOME_AXIS),
        direction=scan.direction,
        effect_size=_first_text(matches, "effect_size"),
        p_value=_first_text(matches, "p_value"),
        **slots,
    )


@dataclass(frozen=True)
class SentenceAnalysis:
    """Everything extraction derives from one sentence's text (no scoring, no filtering)."""

    claim_type: str
    negated: bool
    hedged: bool
    entities: list[str]
    slots: ClaimSlots


def analyse_sentence(sentence: str, mesh_terms: Iterable[str] = ()) -> SentenceAnalysis:
    """Type, flags, entities and slots of a claim sentence (also used on free-standing claims)."""
    return analyse_matches(sentence, SCANNER.scan(sentence), mesh_terms)


def analyse_matches(sentence: str, matches: dict[str, list[re.Match]], mesh_terms: Iterable[str] = ()
                    ) -> SentenceAnalysis:
    """:func:`analyse_sentence` from the sentence's scan."""
    scan = cues.CueScan.from_matches(matches)
    entities = entities_of(sentence, scan, mesh_terms)
    return SentenceAnalysis(
        claim_type=claim_type_of(matches),
        negated=scan.negated,
        hedged=scan.hedged,
        entities=entities,
        slots=slots_of(matches, scan, entities),
    )
