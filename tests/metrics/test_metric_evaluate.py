"""The evaluate module loaded offline from its folder: features, compute and add_batch, and malformed input,
every error naming the record and the field."""

from __future__ import annotations

import doctest
import json

import numpy as np
import pytest
from metric_records import (
    N_TEST,
    FakeEncoder,
    full_record,
    random_records,
    same_scores,
    scoring,
    table18_conflict_types,
)
from repo_paths import REPO


def test_features_declare_the_typed_record_with_json_strings_as_fallback(metric):
    import datasets

    typed, as_json = metric.features
    assert typed["predictions"] == typed["references"]
    record = typed["references"]
    assert list(record) == [*scoring.TASK_FIELDS.values(), scoring.QUESTION_FIELD]  # the tasks, then the grouping
    text = datasets.Value("string")
    assert (record["conflict_type"], record["dominant_confounder"], record["reconciliation"],
            record[scoring.QUESTION_FIELD]) == (text, text, text, text)
    assert record["divergence_axes"] == datasets.List(text)
    assert record["evidence_spans"] == datasets.List(
        {"text": text, "start": datasets.Value("int32"), "end": datasets.Value("int32"), "role": text})
    assert as_json == datasets.Features({"predictions": text, "references": text})


def test_docstring_example_runs(metric, monkeypatch):
    monkeypatch.chdir(REPO)  # the example loads the metric by its path in the repository
    test = doctest.DocTestParser().get_doctest(metric.inputs_description, {}, "Biodivergence", None, 0)
    runner = doctest.DocTestRunner()
    runner.run(test)
    assert test.examples and runner.summarize(verbose=False).failed == 0


def test_typed_records_and_json_strings_score_alike(metric):
    preds, refs = random_records(3, 12)
    expected = scoring.compute(preds, refs, semsim_model=None)
    assert same_scores(metric.compute(predictions=preds, references=refs, semsim_model=None), expected)
    as_json = metric.compute(predictions=[json.dumps(p) for p in preds], references=[json.dumps(r) for r in refs],
                             semsim_model=None)
    assert same_scores(as_json, expected)


def test_evaluate_scores_the_fields_both_sides_carry(metric):
    refs = [full_record(), full_record("no_conflict", (), "", "None.", ())]
    preds = [{"conflict_type": "no_conflict", "pair_id": "p1"}, {"conflict_type": "no_conflict", "pair_id": "p2"}]
    scores = metric.compute(predictions=preds, references=refs)
    assert scores == scoring.compute(preds, refs)
    assert {k.split("/")[0] for k in scores} == {"conflict_type", "notes"}
    assert "axes not scored: no prediction carries 'divergence_axes'" in scores["notes"]


def test_evaluate_load_compute_matches_scoring(metric):
    preds, refs = random_records(5, 30)
    expected = scoring.compute(preds, refs, semsim_model=FakeEncoder())
    assert metric.compute(predictions=preds, references=refs, semsim_model=FakeEncoder()) == expected
    golden = metric.compute(predictions=[{"conflict_type": "no_conflict"}] * N_TEST,
                            references=[{"conflict_type": c} for c in table18_conflict_types()])
    assert round(golden["conflict_type/macro_f1"], 4) == 0.1665


def test_evaluate_add_batch_over_several_batches(metric):
    preds, refs = random_records(9, 25)
    expected = scoring.compute(preds, refs, bootstrap=50, seed=2, semsim_model=None)
    for start in range(0, 20, 10):
        metric.add_batch(predictions=preds[start:start + 10], references=refs[start:start + 10])
    for p, r in zip(preds[20:], refs[20:]):
        metric.add(prediction=p, reference=r)
    assert same_scores(metric.compute(bootstrap=50, seed=2, semsim_model=None), expected)


def test_evaluate_accepts_numpy_label_ids(metric):
    refs = [{"conflict_type": np.int64(2), "divergence_axes": np.array([1, 6])},
            {"conflict_type": 0, "divergence_axes": []}]
    preds = [{"conflict_type": "contextual_contradiction", "divergence_axes": ["geography", "disease_subtype"]},
             {"conflict_type": "no_conflict", "divergence_axes": []}]
    s = metric.compute(predictions=preds, references=refs)
    assert (s["conflict_type/accuracy"], s["axes/exact_match"]) == (1.0, 1.0)
    assert scoring.compute(preds, refs) == s


def test_evaluate_errors_name_the_example(metric):
    with pytest.raises(ValueError, match=r"references\[1\]\.conflict_type: unknown label 'conflict'"):
        metric.compute(predictions=[{"conflict_type": "no_conflict"}] * 2,
                       references=[{"conflict_type": "no_conflict"}, {"conflict_type": "conflict"}])


@pytest.mark.parametrize(
    "preds, refs, message",
    [
        ([{"divergence_axes": "geography"}], [{"divergence_axes": ["geography"]}],
         (r"^predictions\[0\]\.divergence_axes: got the string 'geography'; give a list of axis names, "
         r"e\.g\. \['geography'\]")),
        ([{"conflict_type": 0}, {"conflict_type": 9}], [{"conflict_type": "no_conflict"}] * 2,
         r"^predictions\[1\]\.conflict_type: unknown label 9; expected one of \[.*\] or its ClassLabel id 0-5"),
        ([{"divergence_axes": [13]}], [{"divergence_axes": []}],
         r"^predictions\[0\]\.divergence_axes: unknown label 13; .* ClassLabel id 0-12"),
        ([{"conflict_type": "no_conflict"}, json.dumps({"conflict_type": "no_conflict"})],
         [{"conflict_type": "no_conflict"}] * 2,
         (r"^predictions\[1\]: a JSON string, but predictions\[0\] is a record \(dict\); give every record in one "
         r"form")),
        (["{\"conflict_type\": \"no_conflict\"}", "{not json"], ["{\"conflict_type\": \"no_conflict\"}"] * 2,
         r"^predictions\[1\]: not a JSON record"),
        ([{"conflict_type": "no_conflict", "reconciliation": "x"}, {"conflict_type": "no_conflict"}],
         [{"conflict_type": "no_conflict", "reconciliation": "y"}] * 2,
         r"^predictions\[1\]\.reconciliation: missing, although predictions\[0\] has it"),
        ([{"conflict_type": "no_conflict"}] * 2, [{"conflict_type": "no_conflict"}, {"conflict_type": "conflict"}],
         r"^references\[1\]\.conflict_type: unknown label 'conflict'"),
    ],
    ids=["axes-as-string", "label-id-out-of-range", "axis-id-out-of-range", "dicts-and-json-mixed", "bad-json",
         "field-on-some-predictions", "unknown-label"],
)
def test_evaluate_module_errors_name_record_and_field(metric, preds, refs, message):
    with pytest.raises(ValueError, match=message):
        metric.compute(predictions=preds, references=refs, semsim_model=None)


def test_plain_scorer_names_the_same_errors():
    with pytest.raises(ValueError, match=r"^predictions\[0\]\.divergence_axes: got the string 'geography'"):
        scoring.compute([{"divergence_axes": "geography"}], [{"divergence_axes": []}])
    with pytest.raises(ValueError, match=r"^predictions\[1\]: got a string, not a mapping"):
        scoring.compute([{"conflict_type": 0}, json.dumps({"conflict_type": 0})], [{"conflict_type": 0}] * 2)


def test_label_ids_and_the_release_none_confounder_are_accepted(metric):
    refs = [{"conflict_type": 2, "dominant_confounder": 1}, {"conflict_type": 0, "dominant_confounder": -1}]
    preds = [{"conflict_type": "contextual_contradiction", "dominant_confounder": "geography"},
             {"conflict_type": "no_conflict", "dominant_confounder": ""}]
    s = metric.compute(predictions=preds, references=refs)
    assert (s["conflict_type/accuracy"], s["confounder/accuracy"], s["confounder/n"]) == (1.0, 1.0, 1)
    assert s == scoring.compute(preds, refs)


def test_a_field_missing_from_every_prediction_is_a_note_naming_the_task(metric):
    refs = [full_record(), full_record("no_conflict", (), "", "None.", ())]
    preds = [{"conflict_type": "no_conflict", "divergence_axes": []}] * 2
    scores = metric.compute(predictions=preds, references=refs, semsim_model=None)
    assert scores["notes"] == ["confounder not scored: no prediction carries 'dominant_confounder'",
                               "reconciliation not scored: no prediction carries 'reconciliation'",
                               "spans not scored: no prediction carries 'evidence_spans'"]
    assert "axes/micro_f1" in scores and "confounder/accuracy" not in scores
