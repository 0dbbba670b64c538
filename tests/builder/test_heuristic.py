"""The heuristic annotator: boundary rules on hand-written pairs, and the gold check on real
expert-labelled pairs (SciFact, HealthVer) against the negation-mismatch baseline."""

from __future__ import annotations

import csv
import json
import math
import os
import subprocess
import sys
from collections import Counter, defaultdict
from math import comb

import pytest
from hand_pairs import label_with, pair
from llm_server import HEALTHVER, SCIFACT
from repo_paths import REPO
from sklearn.metrics import cohen_kappa_score

from biodivergence_dataset import ontology
from builder.agreement import is_conflict
from builder.annotators.goldcheck import gold_check, negation_mismatch
from builder.annotators.heuristic import DIRECT, INSUFFICIENT, UNDERSPECIFIED, HeuristicAnnotator, canonical_value
from builder.goldsources import healthver_pairs, scifact_pairs

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


#: A fresh interpreter labels the pair of the determinism test and prints its release fields.
LABEL_IN_A_NEW_PROCESS = ("import json; from hand_pairs import pair; "
                          "from builder.annotators.heuristic import HeuristicAnnotator; "
                          "print(json.dumps(HeuristicAnnotator().annotate(pair(*__import__('sys').argv[1:]))"
                          ".example_fields(), default=str))")


def test_annotator_is_deterministic_and_values_are_canonical():
    """The same labels in any process: set and dict orders follow the hash seed, the labels must not."""
    a, b = "Metformin increases lactate in adults.", "Metformin decreases lactate in children."
    here = json.loads(json.dumps(H.annotate(pair(a, b)).example_fields(), default=str))
    path = os.pathsep.join([str(REPO), str(REPO / "tests" / "support")])
    for seed in ("1", "2"):
        out = subprocess.run([sys.executable, "-c", LABEL_IN_A_NEW_PROCESS, a, b], capture_output=True, text=True,
                             check=True, cwd=REPO, env={**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": path})
        assert json.loads(out.stdout) == here
    assert here["conflict_type"] == ontology.CONTEXTUAL and here["divergence_axes"] == ["population_cohort"]
    assert canonical_value("Adults") == canonical_value("adult") and canonical_value("USA") == "united states"


@pytest.fixture(scope="module")
def scifact():
    return scifact_pairs(SCIFACT)


def pair_counts(groups: list[Counter]) -> tuple[int, int, int]:
    """(pairs, conflicting pairs, agreeing pairs) of groups whose members are paired two by two, counted from each
    group's label counts: n choose 2 pairs, of which one label times the other disagree (two labels per group)."""
    pairs = sum(comb(sum(g.values()), 2) for g in groups)
    conflicting = sum(math.prod(g.values()) for g in groups if len(g) == 2)
    return pairs, conflicting, pairs - conflicting


def scifact_label_counts() -> list[Counter]:
    """Per evidence abstract, how many train/dev claims it supports and contradicts (a claim with both labels on one
    abstract is left out), read from the files directly."""
    per_doc: dict[str, Counter] = defaultdict(Counter)
    for name in ("claims_train.jsonl", "claims_dev.jsonl"):
        for line in (SCIFACT / name).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            for doc, evidence in row["evidence"].items():
                if len(labels := {e["label"] for e in evidence}) == 1:
                    per_doc[doc][labels.pop()] += 1
    return list(per_doc.values())


def healthver_label_counts() -> list[Counter]:
    """Per HealthVer claim (per file) that has both, how many evidence rows support and refute it."""
    per_claim: dict[tuple[str, str], Counter] = defaultdict(Counter)
    for name in ("healthver_dev.csv", "healthver_test.csv"):
        with open(HEALTHVER / name, newline="", encoding="utf-8") as fh:
            for row in csv.DictReader(fh):
                if row["label"] in ("Supports", "Refutes"):
                    per_claim[name, row["claim"]][row["label"]] += 1
    return [c for c in per_claim.values() if len(c) == 2]


def test_gold_check_scifact_beats_the_negation_mismatch_baseline(scifact):
    report = gold_check(scifact, lambda p: H.annotate(p).conflict_type)
    expected = pair_counts(scifact_label_counts())
    assert (report["pairs"], report["gold_conflict"], report["gold_no_conflict"]) == expected == (519, 334, 185)
    truth = [g.conflict for g in scifact]
    baseline_kappa = cohen_kappa_score(truth, [negation_mismatch(g.pair) for g in scifact])
    assert report["baseline_negation_mismatch_kappa"] == pytest.approx(baseline_kappa)
    assert report["kappa"] == pytest.approx(cohen_kappa_score(truth, [is_conflict(H.annotate(g.pair).conflict_type)
                                                                      for g in scifact]))
    assert report["kappa"] > baseline_kappa
    assert sum(sum(row.values()) for row in report["confusion"].values()) == expected[0]


def test_gold_check_healthver_counts_and_better_than_chance():
    gold = healthver_pairs(HEALTHVER)
    report = gold_check(gold, lambda p: H.annotate(p).conflict_type)
    expected = pair_counts(healthver_label_counts())
    assert (report["pairs"], report["gold_conflict"], report["gold_no_conflict"]) == expected == (4473, 1720, 2753)
    assert report["kappa"] > 0.0
