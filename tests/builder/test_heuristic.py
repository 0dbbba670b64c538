"""The heuristic annotator: boundary rules on hand-written pairs, and the gold check on real
expert-labelled pairs (SciFact, HealthVer) against the negation-mismatch baseline."""

from __future__ import annotations

import pytest
from hand_pairs import label_with, pair
from llm_server import HEALTHVER, SCIFACT

from biodivergence_dataset import ontology
from builder.annotators.goldcheck import gold_check, healthver_pairs, scifact_pairs
from builder.annotators.heuristic import DIRECT, INSUFFICIENT, UNDERSPECIFIED, HeuristicAnnotator, canonical_value

H = HeuristicAnnotator()


def label(a: str, b: str, **kw):
    return label_with(H, a, b, **kw)


def test_negation_toggle_under_matched_wording_is_direct():
    labels = label("Statin therapy reduces cardiovascular mortality.",
                   "Statin therapy does not reduce cardiovascular mortality.")
    assert labels.conflict_type == DIRECT and labels.divergence_axes == [] and labels.confidence >= 0.7
    assert [s.text for s in labels.evidence_spans] == ["not"]


def test_opposite_effect_words_are_detected():
    assert label("Vitamin C supplementation increases iron absorption.",
                 "Vitamin C supplementation decreases iron absorption.").conflict_type == DIRECT


def test_opposite_findings_in_different_cohorts_are_contextual_with_verbatim_spans():
    a = "Early antiretroviral therapy reduces mortality in children."
    b = "Early antiretroviral therapy does not reduce mortality in adults."
    labels = label(a, b)
    axis = ontology.AXIS_NAMES[0]
    assert labels.conflict_type == ontology.CONTEXTUAL
    assert labels.divergence_axes[0] == axis == labels.dominant_confounder
    texts = {(s.role, s.text) for s in labels.evidence_spans}
    assert {("claim_a", "children"), ("claim_b", "adults"), ("claim_b", "not")} <= texts
    for s in labels.evidence_spans:
        assert (a if s.role == "claim_a" else b)[s.start:s.end] == s.text
    assert "children" in labels.reconciliation and "adults" in labels.reconciliation


def test_abstract_context_explains_a_one_sided_cue():
    labels = label("Azithromycin reduces exacerbations in patients from Kenya.",
                   "Azithromycin does not reduce exacerbations in patients.",
                   abstract_a="A trial in Kenya.", abstract_b="A multicentre trial in Brazil and Chile.")
    assert labels.conflict_type == ontology.CONTEXTUAL and labels.dominant_confounder == ontology.AXIS_NAMES[1]


def test_missing_context_is_underspecified_and_weak_evidence_is_insufficiency():
    under = label("Zinc lozenges shorten colds in children.", "Zinc lozenges do not shorten colds.")
    assert under.conflict_type == UNDERSPECIFIED and under.divergence_axes == [ontology.AXIS_NAMES[0]]
    weak = label("A pilot study suggests that melatonin improves sleep quality.",
                 "Melatonin does not improve sleep quality.")
    assert weak.conflict_type == INSUFFICIENT


def test_agreeing_and_unrelated_claims_are_no_conflict():
    same = label("Aspirin lowers the risk of colorectal cancer.", "Aspirin lowers colorectal cancer risk.")
    other = label("Aspirin lowers the risk of colorectal cancer.", "Malaria incidence rose in 2015 in Kenya.")
    assert same.conflict_type == other.conflict_type == ontology.NO_CONFLICT
    assert same.comparable and not other.comparable and same.evidence_spans == []


def test_annotator_is_deterministic_and_values_are_canonical():
    p = pair("Metformin increases lactate in adults.", "Metformin decreases lactate in children.")
    assert H.annotate(p) == H.annotate(p)
    assert canonical_value("Adults") == canonical_value("adult") and canonical_value("USA") == "united states"


@pytest.fixture(scope="module")
def scifact():
    return scifact_pairs(SCIFACT)


def test_gold_check_scifact_beats_the_negation_mismatch_baseline(scifact):
    report = gold_check(scifact, lambda p: H.annotate(p).conflict_type)
    assert (report["pairs"], report["gold_conflict"], report["gold_no_conflict"]) == (519, 334, 185)
    assert round(report["baseline_negation_mismatch_kappa"], 2) == 0.11
    assert report["kappa"] > report["baseline_negation_mismatch_kappa"]
    assert sum(sum(row.values()) for row in report["confusion"].values()) == 519


def test_gold_check_healthver_counts_and_better_than_chance():
    gold = healthver_pairs(HEALTHVER)
    report = gold_check(gold, lambda p: H.annotate(p).conflict_type)
    assert (report["pairs"], report["gold_conflict"], report["gold_no_conflict"]) == (4473, 1720, 2753)
    assert report["kappa"] > 0.0
