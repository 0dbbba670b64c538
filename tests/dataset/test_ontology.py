import re

import pytest
from datasets import ClassLabel, List

from biodivergence_dataset import ontology
from biodivergence_dataset.features import release_features
from biodivergence_dataset.records import Example
from biodivergence_dataset.tasks import load_tasks
from biodivergence_text import cues


def test_conflict_types_in_paper_order():
    assert ontology.CONFLICT_TYPE_NAMES == (
        "no_conflict", "direct_contradiction", "contextual_contradiction",
        "underspecified_apparent_contradiction", "evidence_insufficiency", "unresolved_scientific_controversy",
    )
    assert ontology.EVALUABLE_CLASSES == ("no_conflict", "contextual_contradiction")


def test_axes_in_paper_order_with_nine_primary():
    assert len(ontology.AXES) == 13
    assert ontology.AXIS_NAMES[0] == "population_cohort" and ontology.AXIS_NAMES[-1] == "unknown_latent_factor"
    assert set(ontology.AXIS_NAMES) - set(ontology.PRIMARY_AXIS_NAMES) == {
        "dosage_intervention", "gene_mutation_molecular_background", "sample_source", "unknown_latent_factor"}
    for axis in ontology.AXES:
        assert axis.description and axis.trigger_cues and axis.example


def test_domains_and_claim_types():
    assert ontology.DOMAIN_NAMES == ("amr", "oncology", "infectious_disease", "genomics", "clinical_trials_epidemiology")
    assert len(ontology.CLAIM_TYPE_NAMES) == 8


#: One sentence per axis, written here, that states a concrete value on that axis and on no other.
AXIS_SENTENCES = {
    "population_cohort": "The drug lowered fever in children.",
    "geography": "Resistance rose in rural Brazil.",
    "year_time_period": "Incidence fell between 2001 and 2005.",
    "assay_measurement_protocol": "Carriage was detected by PCR.",
    "study_design": "A randomized trial found no benefit.",
    "dosage_intervention": "A high-dose regimen cured most patients.",
    "disease_subtype": "Survival improved in metastatic disease.",
    "organism_strain_lineage": "The ST131 lineage spread widely.",
    "gene_mutation_molecular_background": "Tumours with KRAS mutations did not respond.",
    "clinical_setting": "Infections were common in the ICU.",
    "sample_source": "The marker was raised in serum.",
    "endpoint_definition": "The drug improved overall survival.",
}


def test_every_axis_but_the_latent_factor_has_cue_patterns_that_find_its_values():
    """The latent factor is by definition unstated: no pattern. Every other axis's patterns compile and cue the
    sentence written for it, and only on that axis; a sentence without context cues none."""
    assert set(AXIS_SENTENCES) == set(ontology.AXIS_NAMES) - {"unknown_latent_factor"}
    for axis in ontology.AXES:
        assert bool(axis.cue_patterns) == (axis.name != "unknown_latent_factor"), axis.name
        for pattern in axis.cue_patterns:
            re.compile(pattern)
    for name, sentence in AXIS_SENTENCES.items():
        assert {hit.axis for hit in cues.axis_cues(sentence)} == {name}, sentence
    assert cues.axis_cues("The drug lowered fever.") == []


def test_features_agree_with_ontology_and_record():
    features = release_features()
    assert list(features) == list(Example.model_fields)
    assert features["conflict_type"].names == list(ontology.CONFLICT_TYPE_NAMES)
    assert features["domain"].names == list(ontology.DOMAIN_NAMES)
    assert features["claim_a_type"].names == list(ontology.CLAIM_TYPE_NAMES)
    assert features["dominant_confounder"].names == list(ontology.AXIS_NAMES)
    axes = features["divergence_axes"]
    assert isinstance(axes, List) and isinstance(axes.feature, ClassLabel)
    assert axes.feature.names == list(ontology.AXIS_NAMES)


def test_tasks_declared_once():
    tasks = load_tasks()
    assert [t.name for t in tasks] == ["conflict_type", "axes", "confounder", "reconciliation", "spans"]
    for t in tasks:
        assert set(t.headline) <= set(t.key_metrics) <= set(t.metrics)
        assert set(t.target_fields) <= set(Example.model_fields)


def test_cues_find_axis_values_and_direction():
    text = "In ICU patients in Thailand (2015-2018), broth microdilution MICs predicted mortality."
    values = cues.axis_values(text)
    assert values["geography"] == {"thailand"}
    assert values["clinical_setting"] == {"icu"}
    assert "2015-2018" in values["year_time_period"]
    assert cues.direction("Treatment significantly reduced mortality.") == "decrease"
    assert cues.direction("No significant difference in mortality was observed.") == "null"
    assert cues.is_speculative("Further studies are needed to confirm this.")
    assert not cues.is_speculative("Mortality fell by 20%.")


@pytest.mark.parametrize("sentence", [
    "There was no statistically significant difference in relapse between the arms.",
    "The reduction in pain was not statistically significant.",
    "Overall adverse events were not different between the groups.",
    "No group differences were seen in PCS score.",
    "Eszopiclone did not significantly reduce sleep latency.",
    "A nonsignificant increase in weight was seen with olanzapine.",
])
def test_null_findings_said_otherwise_read_as_null(sentence):
    assert cues.direction(sentence) == "null"
    assert cues.polarity(sentence) == -1
