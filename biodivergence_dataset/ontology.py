"""The BioDivergence ontology as data: the one place where label names live.

Conflict taxonomy (paper appendix E.2), divergence axes (E.1, E.3), claim types
(appendix H), domains (§5.1) and the small closed vocabularies of the release
(annotator kinds, span roles, splits, configs). Prompts, validation, Features, the
metric, the card and the heuristic annotator are all generated from these tables.
Adding an axis is one entry here plus an ``ONTOLOGY_VERSION`` bump.
"""

from __future__ import annotations

from dataclasses import dataclass, field

ONTOLOGY_VERSION = "1.0"


@dataclass(frozen=True)
class ConflictType:
    """One class of the six-way conflict taxonomy."""

    name: str
    title: str
    definition: str
    diagnostic_signal: str
    boundary_rule: str
    example: str
    evaluable: bool = False


@dataclass(frozen=True)
class Axis:
    """One divergence axis with usage guidance and machine-usable cue patterns.

    ``cue_patterns`` are regular expressions (case-insensitive, matched on word
    boundaries by the users of this table) that signal a concrete value on this
    axis; they drive claim slots, the heuristic annotator and the prompt text.
    """

    name: str
    title: str
    description: str
    trigger_cues: str
    example: str
    primary: bool
    cue_patterns: tuple[str, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class ClaimType:
    name: str
    description: str
    cue_patterns: tuple[str, ...]


@dataclass(frozen=True)
class Domain:
    name: str
    title: str
    description: str


CONFLICT_TYPES: tuple[ConflictType, ...] = (
    ConflictType(
        "no_conflict",
        "No conflict",
        "The two claims are compatible, complementary, or answer different questions.",
        "Agreement under paraphrase, compatible outcomes, or distinct endpoints.",
        "Use when both claims can hold at once without tension.",
        "One study reports lower bacterial load; another reports that the drug was well tolerated.",
        evaluable=True,
    ),
    ConflictType(
        "direct_contradiction",
        "Direct contradiction",
        "The claims assert incompatible things under the same conditions.",
        "Same population, same endpoint, opposite conclusion.",
        "If an explicit contextual factor explains the difference, use contextual_contradiction instead.",
        "The same therapy is reported effective and ineffective in the same cohort.",
    ),
    ConflictType(
        "contextual_contradiction",
        "Contextual contradiction",
        "The claims look inconsistent, but one or more contextual axes explain the difference.",
        "Different cohort, geography, period, assay, subtype, dose, strain or setting.",
        "Use when each claim can be locally valid under its own conditions.",
        "A breakpoint performs well in one country and poorly in another.",
        evaluable=True,
    ),
    ConflictType(
        "underspecified_apparent_contradiction",
        "Underspecified apparent contradiction",
        "The claims look contradictory, but key methodological detail is missing.",
        "Missing dose, cohort, endpoint, assay or design information.",
        "If a concrete axis can be recovered from the text, prefer contextual_contradiction.",
        "Two studies report opposite effects, and one omits dose and population details.",
    ),
    ConflictType(
        "evidence_insufficiency",
        "Evidence insufficiency",
        "The evidence is too sparse or weak for a confident judgement.",
        "Small pilot studies, inconclusive trends, weak statistical support.",
        "Means weak evidence, not merely missing context.",
        "Two small exploratory studies give unstable findings.",
    ),
    ConflictType(
        "unresolved_scientific_controversy",
        "Unresolved scientific controversy",
        "The claims reflect an active dispute with evidence on several sides.",
        "Repeated contradictory findings across many studies.",
        "Reserve for persistent, literature-level disputes.",
        "A contested biomarker remains debated despite many studies.",
    ),
)

PREFERENCE_RULE = (
    "When the label is ambiguous, prefer contextual_contradiction if a concrete divergence axis is "
    "explicit in the text; use direct_contradiction only when the claims stay incompatible under "
    "matched conditions."
)
AXIS_SELECTION_RULE = (
    "Mark only axes that the abstracts support and that matter to the disagreement; prefer the "
    "smallest sufficient set of axes."
)

_COUNTRIES = (
    r"united states|usa|u\.s\.|america|canada|mexico|brazil|argentina|chile|colombia|peru|"
    r"united kingdom|uk|england|scotland|ireland|france|germany|italy|spain|portugal|netherlands|"
    r"belgium|switzerland|austria|sweden|norway|denmark|finland|poland|greece|turkey|russia|"
    r"china|japan|korea|taiwan|hong kong|india|pakistan|bangladesh|nepal|sri lanka|thailand|"
    r"vietnam|malaysia|singapore|indonesia|philippines|australia|new zealand|iran|iraq|israel|"
    r"saudi arabia|egypt|nigeria|kenya|ethiopia|uganda|tanzania|ghana|south africa|malawi|"
    r"zambia|zimbabwe|cameroon|mozambique|rwanda|senegal|mali|burkina faso|haiti|cuba"
)
_REGIONS = (
    r"europe|european|asia|asian|africa|african|sub-saharan|latin america|north america|"
    r"middle east|southeast asia|western|eastern|rural|urban|nationwide|multinational|"
    r"low-income|middle-income|high-income|lmics?|developing countr(?:y|ies)"
)

#: Regex fragment after a dose unit: not followed by "/" and anything but kg or day, since an amount per time or
#: volume is what was measured ("95.6 mg/24 h", "1.4 mg/dl", "21 g/m(2)"), not a dose ("5 mg/kg", "50 mg/day").
NOT_A_RATE = r"(?!\s*/\s*(?!kg\b|day\b|d\b)[\w(])"

AXES: tuple[Axis, ...] = (
    Axis(
        "population_cohort", "Population / cohort",
        "Differences in cohort composition or patient population.",
        "Age, severity, comorbidity, treatment history.",
        "Paediatric and adult cases show different effects.",
        True,
        ((r"children|child|paediatric|pediatric|infants?|neonates?|newborns?|adolescents?|adults?|"
         r"elderly|older adults|aged \d+|women|men|pregnan\w+|postmenopausal|veterans?|"
         r"smokers?|obese|diabetic|hiv-infected|immunocompromised|healthy volunteers?|"
         r"treatment-na[iï]ve|previously treated|high-risk|low-risk|critically ill"),),
    ),
    Axis(
        "geography", "Geography",
        "Differences in region, country, or healthcare system.",
        "Country names, hospitals, surveillance setting.",
        "A breakpoint works in Greek ICUs but not in Thai surveillance isolates.",
        True,
        (_COUNTRIES, _REGIONS),
    ),
    Axis(
        "year_time_period", "Year / time period",
        "Differences in surveillance year or historical period.",
        "Year ranges, pre/post policy shifts.",
        "A treatment appears effective in older cohorts but not in later ones.",
        True,
        ((r"(?:19[5-9]\d|20[0-3]\d)(?:\s*(?:-|–|to|and)\s*(?:19[5-9]\d|20[0-3]\d))?|"
         r"pre-pandemic|post-pandemic|before the pandemic|during the pandemic|"
         r"pre-vaccine|post-vaccine|era|decade|over time|temporal trend"),),
    ),
    Axis(
        "assay_measurement_protocol", "Assay / measurement protocol",
        "Differences in laboratory protocol or measurement method.",
        "MIC method, PCR platform, calibration language.",
        "Broth microdilution and disk diffusion yield different conclusions.",
        True,
        ((r"pcr|rt-pcr|qpcr|elisa|western blot|immunohistochemistry|ihc|flow cytometry|"
         r"sequencing|whole-genome sequencing|ngs|microarray|mass spectrometry|maldi-tof|"
         r"broth microdilution|disk diffusion|disc diffusion|e-test|etest|agar dilution|mic|"
         r"culture|microscopy|ct scan|mri|pet|ultrasound|questionnaire|self-report\w*|"
         r"assay|immunoassay|biopsy-based|point-of-care test|"
         # a blood pressure measured over the day, not in the office (a setting only when no measure follows)
         r"(?:24[- ]h(?:ou)?r?\s+)?ambulatory\s+(?:24[- ]h(?:ou)?r?\s+)?(?:blood pressure|bp|sbp|dbp)"),),
    ),
    Axis(
        "study_design", "Study design",
        "Differences in trial design or observational setup.",
        "Randomized, retrospective, cohort, case-control.",
        "A trial and a chart review disagree on efficacy.",
        True,
        ((r"randomi[sz]ed|controlled trial|rct|double-blind|single-blind|open-label|placebo|"
         r"retrospective|prospective|cohort study|case-control|cross-sectional|"
         r"meta-analysis|systematic review|observational|case series|case report|"
         r"in vitro|in vivo|animal model|mouse model|murine|pilot study|phase (?:i|ii|iii|iv|1|2|3|4)\b"),),
    ),
    Axis(
        "dosage_intervention", "Dosage / intervention",
        "Differences in dosage, regimen, or intervention protocol.",
        "Dose, duration, route, combination therapy.",
        "Low-dose therapy succeeds while standard-dose therapy fails.",
        False,
        ((rf"\d+(?:\.\d+)?\s?(?:mg|g|µg|μg|mcg|iu|mg/kg|mg/l|ml)\b{NOT_A_RATE}|low-dose|high-dose|"
         r"standard-dose|once daily|twice daily|weekly|monotherapy|combination therapy|"
         r"intravenous|oral|subcutaneous|intramuscular|regimen|loading dose"),),
    ),
    Axis(
        "disease_subtype", "Disease subtype",
        "Differences in subtype or clinical phenotype.",
        "Molecular subtype, tumour stage, severity class.",
        "A biomarker is prognostic in one subtype but not another.",
        True,
        ((r"stage (?:0|i{1,3}v?|iv|[1-4])[abc]?\b|grade \d|early-stage|advanced|metastatic|"
         r"localized|triple-negative|her2-positive|her2-negative|er-positive|hormone receptor|"
         r"luminal [ab]|small cell|non-small cell|nsclc|sclc|adenocarcinoma|squamous|"
         r"type 1|type 2|acute|chronic|mild|moderate|severe|refractory|relapsed|recurrent|"
         r"subtype|phenotype|latent|active tuberculosis|uncomplicated|complicated"),),
    ),
    Axis(
        "organism_strain_lineage", "Organism strain / lineage",
        "Differences in strain, lineage, or biological variant.",
        "Strain names, lineages, clades, serovars.",
        "A drug is active against one lineage but not another.",
        True,
        ((r"strains?|lineages?|clades?|serotypes?|serovars?|genotypes?|variants? of concern|"
         r"st\d+|cc\d+|mrsa|mssa|vre|esbl|kpc|ndm-\d|oxa-\d+|carbapenem-resistant|"
         r"multidrug-resistant|mdr|xdr|omicron|delta|alpha variant|h1n1|h3n2|h5n1|"
         r"e\. coli|escherichia coli|klebsiella|pseudomonas|acinetobacter|staphylococcus|"
         r"streptococcus|enterococcus|salmonella|mycobacterium|plasmodium|candida|"
         r"sars-cov-2|hiv-1|hiv-2|hepatitis [abc]|influenza [ab]"),),
    ),
    Axis(
        "gene_mutation_molecular_background", "Gene / mutation / molecular background",
        "Differences in gene, mutation, or molecular background.",
        "Mutation names, alleles, expression signatures.",
        "A target works in wild-type tumours but not mutant tumours.",
        False,
        ((r"mutations?|mutant|wild-type|wild type|alleles?|polymorphisms?|snps?|"
         r"[A-Z]{1,2}\d{2,4}[A-Z]\b|egfr|kras|braf|tp53|brca[12]|alk|her2|pik3ca|idh[12]|"
         r"mecA|blaCTX-M|mcr-\d|apoe|hla-[a-z]+\d*|gene expression|methylation|"
         r"amplification|deletion|fusion|copy number"),),
    ),
    Axis(
        "clinical_setting", "Clinical setting",
        "Differences in care setting or treatment environment.",
        "ICU, outpatient, inpatient, screening.",
        "A rule works in ICU patients but not in outpatient screening.",
        True,
        ((r"icu|intensive care|inpatients?|outpatients?|hospitali[sz]ed|emergency department|"
         r"primary care|community|nursing homes?|long-term care|tertiary|university hospital|"
         r"teaching hospital|surgical ward|screening|ambulatory(?!\s+(?:24[- ]h\w*\s+)?(?:blood|bp|sbp|dbp)\b)|"
         r"home-based|hospital-acquired|"
         r"community-acquired|nosocomial|clinic"),),
    ),
    Axis(
        "sample_source", "Sample source",
        "Differences in specimen type or source material.",
        "Blood, tissue, swab, stool, plasma.",
        "A biomarker is measured in tissue in one study and in plasma in another.",
        False,
        # "blood" is a specimen, not in the name of a measure or an event ("blood pressure", "blood flow")
        ((r"blood(?!\s+(?:pressure|glucose|sugar|flow|loss|transfusions?|vessels?|lipids?|levels?)\b)|"
         r"serum|plasma|urine|stool|feces|faeces|sputum|saliva|swabs?|nasopharyngeal|"
         r"cerebrospinal fluid|csf|tissue|biopsy|biopsies|bronchoalveolar|bal fluid|"
         r"isolates from|wastewater|environmental samples?|milk|skin|wound"),),
    ),
    Axis(
        "endpoint_definition", "Endpoint definition",
        "Differences in outcome definition or evaluation window.",
        "Survival window, relapse definition, response criterion.",
        "One study uses overall survival and another progression-free survival.",
        True,
        ((r"overall survival|progression-free survival|disease-free survival|event-free|"
         r"mortality|all-cause|\d+-day|\d+-week|\d+-year|\d+-month|response rate|complete response|"
         r"remission|relapse|recurrence|readmission|length of stay|quality of life|"
         r"clinical cure|microbiological cure|time to|endpoint|primary outcome|secondary outcome"),),
    ),
    Axis(
        "unknown_latent_factor", "Unknown latent factor",
        "A contextual driver is likely but cannot be recovered from the abstract.",
        "Omitted protocol detail or unexplained disagreement.",
        "Two studies disagree and the missing contextual variable is not stated.",
        False,
        (),
    ),
)

CLAIM_TYPES: tuple[ClaimType, ...] = (
    ClaimType("factual", "A descriptive statement of an observed fact.", ()),
    ClaimType(
        "efficacy", "An intervention improves or fails to improve an outcome.",
        ((r"efficac\w*|effective|ineffective|improv\w+|reduc\w+|benefit\w*|superior|inferior|"
         r"non-inferior|treatment with|therapy|response to"),),
    ),
    ClaimType(
        "prognostic", "A factor predicts a future outcome.",
        (r"prognos\w+|predict\w*|survival|risk of|hazard|recurrence|outcome\w*|mortality",),
    ),
    ClaimType(
        "correlational", "Two quantities are associated.",
        (r"associat\w+|correlat\w+|linked|relationship|odds ratio|\bor\b|related to",),
    ),
    ClaimType(
        "prevalence", "How common a condition or trait is in a population.",
        (r"prevalen\w+|incidence|proportion|frequency|rate of|\d+(?:\.\d+)?\s?%|common|rare",),
    ),
    ClaimType(
        "causal", "One factor causes another.",
        (r"caus\w+|lead(?:s)? to|led to|induc\w+|result(?:s|ed)? in|contribut\w+ to|due to",),
    ),
    ClaimType(
        "mechanistic", "A biological mechanism or pathway.",
        (r"mechanis\w+|pathway|mediat\w+|regulat\w+|express\w+|bind\w*|activat\w+|inhibit\w+|signal\w+",),
    ),
    ClaimType(
        "recommendation", "A practice or policy should be adopted.",
        (r"should|recommend\w*|must|advis\w+|warrant\w*|guideline\w*|consider\w*",),
    ),
)

DOMAINS: tuple[Domain, ...] = (
    Domain("amr", "Antimicrobial resistance", "Antibacterial agents, resistance, susceptibility, breakpoints."),
    Domain("oncology", "Oncology", "Neoplasms, antineoplastic therapy, biomarkers, survival."),
    Domain("infectious_disease", "Infectious disease", "Communicable diseases, anti-infectives, vaccines."),
    Domain("genomics", "Genomics", "Genomics, GWAS, variant interpretation, gene expression."),
    Domain(
        "clinical_trials_epidemiology", "Clinical trials / epidemiology",
        "Clinical trials and epidemiology, null results, heterogeneity, endpoints.",
    ),
)

#: The domain of a clinical question that names none: questions compare treatments, as clinical trials do.
QUESTION_DOMAIN: str = "clinical_trials_epidemiology"

#: Section labels of a structured abstract (``Section.label``): PubMed's NlmCategory vocabulary.
#: Ingestion maps every source's own labels onto these; unmappable labels become ``UNASSIGNED``.
SECTION_LABELS: tuple[str, ...] = ("BACKGROUND", "OBJECTIVE", "METHODS", "RESULTS", "CONCLUSIONS", "UNASSIGNED")

ANNOTATOR_KINDS: tuple[str, ...] = ("llm", "heuristic", "frames", "judge", "reader")
#: What each annotator kind is, in words (the dataset card names the kinds a release's labels come from).
ANNOTATOR_KIND_DESCRIPTIONS: dict[str, str] = {
    "llm": "a large language model answering a schema-constrained prompt",
    "heuristic": "deterministic word rules (negation, opposite effect words, stance cues)",
    "frames": "rules over extracted claim frames (same exposure and outcome first, then opposing findings)",
    "judge": "a learned cross-encoder judge trained on expert-labelled claim pairs",
    "reader": ("a learned finding reader (cross-encoder trained on expert finding labels) that reads each claim's "
               "finding against the clinical question; the paper's boundary rules give the type"),
}

#: The finding of a claim frame: what the claim reports about its exposure and outcome.
FINDING_DIRECTIONS: tuple[str, ...] = (
    "increase", "decrease", "no_effect", "association", "no_association", "difference", "no_difference",
)
#: Stated statistical significance of a finding.
SIGNIFICANCE_VALUES: tuple[str, ...] = ("significant", "not_significant")
#: Why a pair was (not) treated as two answers to the same question (recorded in the provenance).
COMPARABILITY: dict[str, str] = {
    "same_question": "both claims share the exposure and the outcome",
    "different_exposure": "the claims study different exposures or interventions",
    "different_outcome": "the claims measure different outcomes",
    "slots_unstated": "a claim states no exposure or outcome that could be cut out and matched",
    "finding_unstated": "a claim states no finding that could be compared",
    "off_question": "the finding reader found no answer to the question in a claim",
}
#: The gate verdicts that say the questions differ (the rest say a claim could not be read as a question).
DIFFERENT_QUESTION_REASONS: tuple[str, ...] = ("different_exposure", "different_outcome")
assert set(DIFFERENT_QUESTION_REASONS) <= set(COMPARABILITY)
#: Why two findings on the same question disagree.
DISAGREEMENT_REASONS: dict[str, str] = {
    "null_vs_effect": "one claim reports an effect or association, the other its absence",
    "opposite_direction": "one claim reports an increase, the other a decrease",
    "significance": "one claim reports an effect, the other calls the same effect not significant",
    "opposite_answer": "the claims answer the same question with opposite answers (yes vs no)",
}
#: A claim's finding relative to a clinical question, as the learned finding reader reads it.
READER_FINDINGS: tuple[str, ...] = ("increase", "decrease", "no_difference", "not_reported")
#: Each reader finding in words, relative to the question's comparison (evidence maps, cards).
READER_FINDING_WORDS: dict[str, str] = {"increase": "higher", "decrease": "lower", "no_difference": "no difference",
                                        "not_reported": "not reported"}
assert tuple(READER_FINDING_WORDS) == READER_FINDINGS
#: A claim's answer to the question as asked (neutral: it does not answer it).
READER_STANCES: tuple[str, ...] = ("yes", "no", "neutral")
SPAN_ROLES: tuple[str, ...] = ("claim_a", "claim_b")
CONFIGS: tuple[str, ...] = ("primary", "pairlevel")
DEFAULT_CONFIG = "primary"
#: The release's evidence maps (one row per declared question: its studies, their findings, conditions and
#: conflicts): a config of its own beside the benchmark's, read with ``load_dataset(release, EVIDENCE_MAP_CONFIG)``;
#: its one split holds every question's map (questions span the benchmark's splits).
EVIDENCE_MAP_CONFIG = "evidence_map"
EVIDENCE_MAP_SPLIT = "questions"
assert EVIDENCE_MAP_CONFIG not in CONFIGS
SPLITS: tuple[str, ...] = ("train", "validation", "test")
#: Evaluation-only splits drawn from the same article-disjoint pool as ``test``.
EXTRA_TEST_SPLITS: tuple[str, ...] = ("test_matched",)

CONFLICT_TYPE_NAMES: tuple[str, ...] = tuple(c.name for c in CONFLICT_TYPES)
AXIS_NAMES: tuple[str, ...] = tuple(a.name for a in AXES)
PRIMARY_AXIS_NAMES: tuple[str, ...] = tuple(a.name for a in AXES if a.primary)
CLAIM_TYPE_NAMES: tuple[str, ...] = tuple(c.name for c in CLAIM_TYPES)
DOMAIN_NAMES: tuple[str, ...] = tuple(d.name for d in DOMAINS)
assert QUESTION_DOMAIN in DOMAIN_NAMES
EVALUABLE_CLASSES: tuple[str, ...] = tuple(c.name for c in CONFLICT_TYPES if c.evaluable)
NO_CONFLICT: str = CONFLICT_TYPE_NAMES[0]
#: The class whose F1 is the paper's headline "Ctx F1".
CONTEXTUAL: str = "contextual_contradiction"
#: The axis used when a context difference is likely but not named in the text.
LATENT_AXIS: str = AXIS_NAMES[-1]
#: The claim type used when no specific cue fires.
DEFAULT_CLAIM_TYPE: str = CLAIM_TYPE_NAMES[0]

VOCABULARIES: dict[str, tuple[str, ...]] = {
    "conflict_type": CONFLICT_TYPE_NAMES,
    "divergence_axes": AXIS_NAMES,
    "dominant_confounder": AXIS_NAMES,
    "claim_type": CLAIM_TYPE_NAMES,
    "domain": DOMAIN_NAMES,
    "annotator_kind": ANNOTATOR_KINDS,
    "role": SPAN_ROLES,
    "finding": FINDING_DIRECTIONS,
    "significance": SIGNIFICANCE_VALUES,
    "reader_finding": READER_FINDINGS,
}

_BY_NAME = {
    "conflict_type": {c.name: c for c in CONFLICT_TYPES},
    "axis": {a.name: a for a in AXES},
    "claim_type": {c.name: c for c in CLAIM_TYPES},
    "domain": {d.name: d for d in DOMAINS},
}

assert CONTEXTUAL in CONFLICT_TYPE_NAMES and LATENT_AXIS == "unknown_latent_factor"


def axis(name: str) -> Axis:
    """The axis called ``name`` (KeyError naming the vocabulary otherwise)."""
    return _lookup("axis", name)


def conflict_type(name: str) -> ConflictType:
    return _lookup("conflict_type", name)


def domain(name: str) -> Domain:
    return _lookup("domain", name)


def _lookup(kind: str, name: str):
    try:
        return _BY_NAME[kind][name]
    except KeyError:
        raise KeyError(f"unknown {kind} {name!r}; expected one of {sorted(_BY_NAME[kind])}") from None


def check_label(field_name: str, value: str) -> str:
    """Return ``value`` if it belongs to the vocabulary of ``field_name``, else raise ValueError."""
    vocab = VOCABULARIES[field_name]
    if value not in vocab:
        raise ValueError(f"unknown {field_name} {value!r}; expected one of {list(vocab)}")
    return value
