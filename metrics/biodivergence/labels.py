"""The label vocabularies, task fields and fixed settings of the BioDivergence metric.

A copy of ``biodivergence_dataset.ontology`` and ``tasks.yaml`` (a test keeps them equal): the metric folder
imports nothing of the toolkit, so it runs alone as a Hub Space.
"""

from __future__ import annotations

import numpy as np

CONFLICT_TYPES: tuple[str, ...] = (
    "no_conflict",
    "direct_contradiction",
    "contextual_contradiction",
    "underspecified_apparent_contradiction",
    "evidence_insufficiency",
    "unresolved_scientific_controversy",
)
CONFLICT_TYPE_TITLES: tuple[str, ...] = (
    "No conflict",
    "Direct contradiction",
    "Contextual contradiction",
    "Underspecified apparent contradiction",
    "Evidence insufficiency",
    "Unresolved scientific controversy",
)
AXES: tuple[str, ...] = (
    "population_cohort",
    "geography",
    "year_time_period",
    "assay_measurement_protocol",
    "study_design",
    "dosage_intervention",
    "disease_subtype",
    "organism_strain_lineage",
    "gene_mutation_molecular_background",
    "clinical_setting",
    "sample_source",
    "endpoint_definition",
    "unknown_latent_factor",
)
AXIS_TITLES: tuple[str, ...] = (
    "Population / cohort",
    "Geography",
    "Year / time period",
    "Assay / measurement protocol",
    "Study design",
    "Dosage / intervention",
    "Disease subtype",
    "Organism strain / lineage",
    "Gene / mutation / molecular background",
    "Clinical setting",
    "Sample source",
    "Endpoint definition",
    "Unknown latent factor",
)
#: The nine axes with at least 40 legacy test occurrences (paper appendix E.1, M.3).
PRIMARY_AXES: tuple[str, ...] = (
    "population_cohort",
    "geography",
    "year_time_period",
    "assay_measurement_protocol",
    "study_design",
    "disease_subtype",
    "organism_strain_lineage",
    "clinical_setting",
    "endpoint_definition",
)
#: The class whose F1 is the paper's "Ctx F1".
CONTEXTUAL = "contextual_contradiction"
SPAN_ROLES: tuple[str, ...] = ("claim_a", "claim_b")

#: task name -> the record field it scores (the order is the paper's task numbering).
TASK_FIELDS: dict[str, str] = {
    "conflict_type": "conflict_type",
    "axes": "divergence_axes",
    "confounder": "dominant_confounder",
    "reconciliation": "reconciliation",
    "spans": "evidence_spans",
}
#: Keys that get bootstrap intervals: the ``key_metrics`` of the task declaration (``tasks.yaml``), a superset of
#: its leaderboard headlines.
KEY_METRIC_KEYS: tuple[str, ...] = (
    "conflict_type/macro_f1",
    "conflict_type/ctx_f1",
    "axes/micro_f1",
    "confounder/accuracy",
)
DEFAULT_SEMSIM_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
#: SemSim shows a progress bar when it encodes at least this many new texts.
PROGRESS_TEXTS = 256
CI_LEVEL = 0.95
#: A side's reconciliations count as templated (rule annotators fill a few templates; LLM-written ones are
#: nearly all distinct) when its distinct non-empty texts number at most this share of its non-empty rows;
#: ``compute`` then adds a note.
TEMPLATED_SHARE = 0.5


class UndefinedScoreWarning(UserWarning):
    """A score that is 0 / 0 (e.g. the F1 of a class neither side has): reported as None, never 1."""


PRIMARY_COLUMNS = np.array([AXES.index(a) for a in PRIMARY_AXES])
CONTEXTUAL_ID = CONFLICT_TYPES.index(CONTEXTUAL)
NO_CONFOUNDER = -1
#: The reference field that groups rows by clinical question (the release's ``question_id``; "" for none).
QUESTION_FIELD = "question_id"
#: The keys reported per question (Tasks 1-3 with their n), beside the pooled figures.
PER_QUESTION_KEYS: tuple[str, ...] = (
    "conflict_type/n",
    "conflict_type/accuracy",
    "conflict_type/macro_f1",
    "conflict_type/ctx_f1",
    f"conflict_type/support/{CONTEXTUAL}",
    "axes/n",
    "axes/micro_f1",
    "axes/exact_match",
    "confounder/n",
    "confounder/accuracy",
)
