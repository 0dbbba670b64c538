"""The metric's tasks: golden cases from the paper's own numbers, hand-computed cases one task at a time, which
tasks are scored, input errors, templated reconciliations."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from metric_records import N_TEST, TABLE18_TEST_AXES, full_record, scoring, table18_conflict_types


def rounded(scores: dict, keys: list[str], digits: int = 4) -> dict:
    return {k: round(scores[k], digits) for k in keys}


def table18_axis_sets(singletons: int = 19) -> list[list[str]]:
    """2,500 reference axis sets with exactly Table 18's test counts per axis.

    disease_subtype sits on the first 502 examples, ``singletons`` of them alone; every other
    axis occurrence is dealt in turn over the remaining 483 subtype examples (no axis has more
    than 483 occurrences, so no example gets an axis twice); the other 1,998 examples have none.
    """
    subtype = TABLE18_TEST_AXES["disease_subtype"]
    sets = [["disease_subtype"] if i < subtype else [] for i in range(N_TEST)]
    others = [a for a, count in TABLE18_TEST_AXES.items() if a != "disease_subtype" for _ in range(count)]
    for j, axis in enumerate(others):
        sets[singletons + j % (subtype - singletons)].append(axis)
    return sets


def test_table4_majority_baseline():
    refs = [{"conflict_type": c} for c in table18_conflict_types()]
    assert len(refs) == N_TEST
    preds = [{"conflict_type": "no_conflict"}] * N_TEST
    scores = scoring.compute(preds, refs)
    keys = ["conflict_type/" + k for k in ("accuracy", "macro_f1", "weighted_f1", "kappa", "ctx_f1")]
    assert rounded(scores, keys) == dict(zip(keys, [0.7128, 0.1665, 0.5933, 0.0, 0.0]))


def test_table5_most_frequent_axis_baseline():
    axis_sets = table18_axis_sets()
    counts = {a: sum(a in s for s in axis_sets) for a in scoring.AXES}
    assert counts == TABLE18_TEST_AXES and sum(counts.values()) == 1299
    refs = [{"divergence_axes": s} for s in axis_sets]
    preds = [{"divergence_axes": ["disease_subtype"]}] * N_TEST
    scores = scoring.compute(preds, refs)
    keys = ["axes/" + k for k in ("micro_f1", "macro_f1", "micro_precision", "micro_recall", "exact_match")]
    # Exact match 0.0076 follows from the 19 references whose only axis is disease_subtype.
    assert rounded(scores, keys) == dict(zip(keys, [0.2643, 0.0257, 0.2008, 0.3865, 0.0076]))


def test_conflict_type_hand_case():
    # refs:  nc nc nc ctx ctx dir ; preds: nc ctx nc ctx nc nc
    refs = ["no_conflict"] * 3 + ["contextual_contradiction"] * 2 + ["direct_contradiction"]
    preds = ["no_conflict", "contextual_contradiction", "no_conflict", "contextual_contradiction",
             "no_conflict", "no_conflict"]
    s = scoring.compute([{"conflict_type": p} for p in preds], [{"conflict_type": r} for r in refs])
    # nc: tp 2, fp 2, fn 1 -> P 1/2, R 2/3, F1 4/7 ; ctx: tp 1, fp 1, fn 1 -> F1 1/2 ; dir: F1 0
    assert s["conflict_type/accuracy"] == pytest.approx(3 / 6)
    assert s["conflict_type/precision/no_conflict"] == pytest.approx(1 / 2)
    assert s["conflict_type/recall/no_conflict"] == pytest.approx(2 / 3)
    assert s["conflict_type/f1/no_conflict"] == pytest.approx(4 / 7)
    assert s["conflict_type/ctx_f1"] == pytest.approx(1 / 2)
    assert s["conflict_type/macro_f1"] == pytest.approx((4 / 7 + 1 / 2 + 0) / 3)
    assert s["conflict_type/weighted_f1"] == pytest.approx((3 * 4 / 7 + 2 * 1 / 2) / 6)
    # po = 1/2, pe = (3*4 + 2*2 + 1*0) / 36 = 4/9 -> kappa = (1/2 - 4/9) / (5/9) = 1/10
    assert s["conflict_type/kappa"] == pytest.approx(0.1)
    assert s["conflict_type/support/direct_contradiction"] == 1
    assert s["conflict_type/confusion_matrix"][0][:3] == [2, 0, 1]
    assert s["conflict_type/confusion_matrix"][1][0] == 1
    assert s["conflict_type/n"] == 6


def test_axes_hand_case_and_primary_view():
    refs = [["geography", "disease_subtype"], [], ["sample_source"], ["study_design"]]
    preds = [["geography"], [], ["sample_source", "study_design"], ["study_design"]]
    s = scoring.compute([{"divergence_axes": p} for p in preds], [{"divergence_axes": r} for r in refs])
    # tp 3 (geography, sample_source, study_design#4), fp 1 (study_design#3), fn 1 (disease_subtype)
    assert (s["axes/micro_precision"], s["axes/micro_recall"]) == (pytest.approx(3 / 4), pytest.approx(3 / 4))
    assert s["axes/micro_f1"] == pytest.approx(3 / 4)
    # per-axis F1: geography 1, sample_source 1, study_design 2/3, disease_subtype 0; the other 9 undefined
    assert s["axes/f1/study_design"] == pytest.approx(2 / 3)
    assert (s["axes/support/study_design"], s["axes/support/disease_subtype"]) == (1, 1)
    # macro-F1 over the 4 axes either side uses; the 9 others are undefined (None, n = 0) and left out
    assert s["axes/macro_f1"] == pytest.approx((1 + 1 + 2 / 3 + 0) / 4)
    assert s["axes/macro_f1/over"] == ["geography", "study_design", "disease_subtype", "sample_source"]
    assert (s["axes/f1/endpoint_definition"], s["axes/support/endpoint_definition"]) == (None, 0)
    assert s["axes/exact_match"] == pytest.approx(2 / 4)  # example 2 (empty = empty) and example 4
    # Primary view drops sample_source (provisional): example 3 becomes {} vs {study_design}.
    assert s["axes_primary/micro_precision"] == pytest.approx(2 / 3)
    assert s["axes_primary/micro_recall"] == pytest.approx(2 / 3)
    assert s["axes_primary/macro_f1"] == pytest.approx((1 + 2 / 3 + 0) / 3)
    assert s["axes_primary/exact_match"] == pytest.approx(2 / 4)
    assert "axes_primary/f1/sample_source" not in s


def test_confounder_scored_only_where_the_reference_has_one():
    refs = ["geography", "", None, "disease_subtype", "study_design"]
    preds = ["geography", "geography", "", "", "disease_subtype"]
    s = scoring.compute([{"dominant_confounder": p} for p in preds], [{"dominant_confounder": r} for r in refs])
    assert s == {"confounder/accuracy": pytest.approx(1 / 3), "confounder/n": 3}


def test_reconciliation_hand_case():
    refs = [
        {"conflict_type": "contextual_contradiction", "divergence_axes": ["disease_subtype"],
         "dominant_confounder": "disease_subtype", "reconciliation": "the cat sat on the mat"},
        {"conflict_type": "no_conflict", "divergence_axes": [], "dominant_confounder": "",
         "reconciliation": "cats sitting"},
        {"conflict_type": "no_conflict", "divergence_axes": [], "dominant_confounder": "",
         "reconciliation": ""},  # not scored
    ]
    preds = [{"reconciliation": "the cat sat; a Disease Subtype difference"},
             {"reconciliation": "cat sits"},
             {"reconciliation": "anything"}]
    s = scoring.compute(preds, refs, semsim_model=None)
    assert s["reconciliation/n"] == 2
    # ROUGE-L: LCS "the cat sat" = 3 of 7 predicted and 6 reference tokens -> F 2*3/13;
    # stemmed, "cats sitting" equals "cat sits"
    assert s["reconciliation/rouge_l"] == pytest.approx((6 / 13 + 1.0) / 2)
    assert s["reconciliation/slot_overlap"] is None  # no reference names one of its slots: undefined
    assert "reconciliation/semsim" not in s
    same = scoring.compute([{"reconciliation": r["reconciliation"]} for r in refs], refs, semsim_model=None)
    assert same["reconciliation/bleu"] == 1.0  # sacrebleu says 100.00000000000004: clamped
    assert same["reconciliation/rouge_l"] == 1.0
    disjoint = scoring.compute([{"reconciliation": "zzz"}] * 3, refs, semsim_model=None)
    assert disjoint["reconciliation/bleu"] == 0.0 and disjoint["reconciliation/rouge_l"] == 0.0


def test_slot_overlap_counts_the_slots_the_reference_names():
    refs = [
        {"conflict_type": "contextual_contradiction", "divergence_axes": ["disease_subtype", "geography"],
         "dominant_confounder": "disease_subtype", "reconciliation": "Disease subtype differs between the cohorts."},
        {"conflict_type": "no_conflict", "divergence_axes": [], "dominant_confounder": "",
         "reconciliation": "The claims are compatible."},  # names no slot: left out
        {"conflict_type": "contextual_contradiction", "divergence_axes": ["geography"],
         "dominant_confounder": "geography", "reconciliation": "A contextual contradiction: geography differs."},
    ]
    preds = ["A disease subtype and geography difference.", "Anything.", "Geography alone."]
    s = scoring.compute([{"reconciliation": p} for p in preds], refs, semsim_model=None)
    # slots: {disease_subtype} (geography is an axis the text does not name) -> 1/1 ;
    # {contextual_contradiction, geography} -> 1/2
    assert s["reconciliation/slot_overlap"] == pytest.approx((1 + 1 / 2) / 2)
    gold = scoring.compute([{"reconciliation": r["reconciliation"]} for r in refs], refs, semsim_model=None)
    assert gold["reconciliation/slot_overlap"] == 1.0


@pytest.mark.parametrize(
    "text, named",
    [
        ("Population / cohort explains it", {"population_cohort"}),
        ("population cohort and GEOGRAPHY", {"population_cohort", "geography"}),
        ("a contextual_contradiction", {"contextual_contradiction"}),
        ("geographic spread and subtypes", set()),  # whole words only
    ],
)
def test_slot_overlap_surface_forms(text, named):
    slots = {"population_cohort", "geography", "contextual_contradiction"}
    assert scoring.slot_overlap(text, slots) == pytest.approx(len(named) / 3)


def test_spans_hand_case():
    refs = [
        {"evidence_spans": [{"text": "colistin MIC of 2 mg/L", "start": 0, "end": 22, "role": "claim_a"},
                            {"text": "Thai isolates", "start": 5, "end": 18, "role": "claim_b"}]},
        {"evidence_spans": []},  # not scored
    ]
    preds = [
        {"evidence_spans": [{"text": "MIC of 2", "start": 9, "end": 17, "role": "claim_a"},
                            {"text": "colistin", "start": 0, "end": 8, "role": "claim_b"}]},
        {"evidence_spans": [{"text": "anything", "start": 0, "end": 8, "role": "claim_a"}]},
    ]
    s = scoring.compute(preds, refs)
    # ref tokens: a:{colistin, mic, of, 2, mg, l} b:{thai, isolates}; pred a:{mic, of, 2} b:{colistin}
    # common 3 (colistin on claim_b does not match claim_a), union 8 + 1 = 9
    assert s["spans/n"] == 1
    assert s["spans/iou"] == pytest.approx(3 / 9)
    assert s["spans/precision"] == pytest.approx(3 / 4)
    assert s["spans/recall"] == pytest.approx(3 / 8)
    assert s["spans/f1"] == pytest.approx(2 * 3 / (4 + 8))


def test_a_task_is_scored_only_when_both_sides_carry_its_field():
    refs = [full_record(), full_record("no_conflict", (), "", "None.", ())]
    preds = [{"conflict_type": "no_conflict", "pair_id": "p1"}, {"conflict_type": "no_conflict", "pair_id": "p2"}]
    scores = scoring.compute(preds, refs)
    assert {k.split("/")[0] for k in scores} == {"conflict_type", "notes"}
    assert scores["notes"] == [f"{t} not scored: no prediction carries {f!r}" for t, f in scoring.TASK_FIELDS.items()
                               if t != "conflict_type"]
    with pytest.raises(ValueError, match="no task can be scored"):
        scoring.compute([{"divergence_axes": []}] * 2, [{"conflict_type": "no_conflict"}] * 2)


@pytest.mark.parametrize(
    "preds, refs, message",
    [
        ([{"conflict_type": "no_conflict"}, {}], [{"conflict_type": "no_conflict"}] * 2,
         r"predictions\[1\]\.conflict_type: missing, although predictions\[0\] has it"),
        ([{"conflict_type": "no_conflict"}], [{"conflict_type": "no_conflict"}] * 2, "1 predictions but 2 references"),
        ([], [], "no examples"),
        (["no_conflict"], [{"conflict_type": "no_conflict"}], r"predictions\[0\]: got a string, not a mapping"),
        ([1], [{"conflict_type": "no_conflict"}], r"predictions\[0\]: expected a mapping of task fields, got int"),
    ],
)
def test_malformed_inputs_are_rejected(preds, refs, message):
    with pytest.raises(ValueError, match=message):
        scoring.compute(preds, refs)


@pytest.mark.parametrize(
    "field, bad, good, shown",
    [
        ("conflict_type", "contradiction", "no_conflict", "'contradiction'"),
        ("conflict_type", 6, 0, "6"),
        ("divergence_axes", ["geography", "location"], ["geography"], "'location'"),
        ("divergence_axes", "geography", ["geography"], "'geography'"),
        ("dominant_confounder", "latent", "", "'latent'"),
        ("reconciliation", 3, "", "3"),
        ("evidence_spans", [{"text": "x", "start": 0, "end": 1, "role": "abstract_a"}], [], "'abstract_a'"),
    ],
)
def test_bad_values_name_the_example_field_and_value(field, bad, good, shown):
    with pytest.raises(ValueError) as err:
        scoring.compute([{field: good}, {field: bad}], [{field: good}, {field: good}])
    assert str(err.value).startswith(f"predictions[1].{field}")
    assert shown in str(err.value)


def test_classlabel_ids_score_like_names():
    names = [full_record(), full_record("no_conflict", ("disease_subtype",), "disease_subtype")]
    ids = [{**r, "conflict_type": scoring.CONFLICT_TYPES.index(r["conflict_type"]),
            "divergence_axes": [scoring.AXES.index(a) for a in r["divergence_axes"]],
            "dominant_confounder": scoring.AXES.index(r["dominant_confounder"])} for r in names]
    preds = [full_record("no_conflict")] * 2
    assert scoring.compute(preds, ids, semsim_model=None) == scoring.compute(preds, names, semsim_model=None)


def test_templated_reference_reconciliations_get_a_note():
    template = "Contextual contradiction: the claims differ in geography."
    refs = [{"reconciliation": template}] * 19 + [{"reconciliation": "Dose differs."}, {"reconciliation": ""}]
    s = scoring.compute([{"reconciliation": template}] * 21, refs, semsim_model=None)
    assert s["reconciliation/distinct_references"] == 2 and s["reconciliation/rouge_l"] > 0.9
    assert s["notes"] == [("reconciliation: the references hold 2 distinct texts over 20 rows (templated, as rule "
                           "annotators write them): ROUGE-L, BLEU and SemSim reward repeating a template; compare "
                           "with the floors of `biodivergence floors`")]
    varied = [{"reconciliation": f"Text number {i}."} for i in range(20)]
    assert "notes" not in scoring.compute(varied, varied, semsim_model=None)
    assert scoring.templated([r["reconciliation"] for r in refs]) == {"rows": 20, "distinct": 2, "templated": True}


@settings(max_examples=50, deadline=None)
@given(st.lists(st.sampled_from(["", " ", "A template.", "Another one.", "Third."]) | st.text(max_size=5), max_size=40))
def test_templated_rule_equals_the_dataset_helper(texts):
    from biodivergence_dataset import templating

    assert scoring.TEMPLATED_SHARE == templating.TEMPLATED_SHARE
    assert scoring.templated(texts) == templating.reconciliation_templating(texts)
