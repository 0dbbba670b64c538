"""What keeps the leaderboard honest in the metric: macro-F1 over the classes a release trains on (not only those a
test split holds), and Tasks 1-3 per clinical question with their n beside the pooled figures."""

from __future__ import annotations

import warnings

import pytest
from metric_records import scoring

NC, CTX, DIRECT = "no_conflict", "contextual_contradiction", "direct_contradiction"
TRAIN_CLASSES = [NC, DIRECT, CTX]


def quiet_compute(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", scoring.UndefinedScoreWarning)
        return scoring.compute(*args, **kwargs)


def test_macro_f1_over_the_train_classes_is_not_the_average_over_the_test_classes():
    """A majority-class system on a test split that holds two of the three trained classes: averaged over the two
    present it looks half right; over the trained classes the class it cannot show counts 0."""
    refs = [{"conflict_type": c} for c in [NC] * 8 + [CTX] * 2]
    majority = [{"conflict_type": NC}] * 10
    f1_nc = 2 * 8 / (2 * 8 + 2)  # tp 8, fp 2 (the two contextual rows), fn 0
    present = quiet_compute(majority, refs)
    trained = quiet_compute(majority, refs, classes=TRAIN_CLASSES)
    assert present["conflict_type/macro_f1"] == pytest.approx((f1_nc + 0.0) / 2)
    assert present["conflict_type/macro_f1/over"] == [NC, CTX]
    assert trained["conflict_type/macro_f1"] == pytest.approx(f1_nc / 3)
    assert trained["conflict_type/macro_f1/over"] == [NC, DIRECT, CTX]  # the classes it names, in the order given
    assert trained["conflict_type/macro_f1"] < present["conflict_type/macro_f1"]
    # the references hold 2 of the 3 classes: perfect predictions score 2/3, and a note says so
    perfect = quiet_compute(refs, refs, classes=TRAIN_CLASSES)
    assert perfect["conflict_type/macro_f1"] == pytest.approx(2 / 3)
    assert any("2 of them" in n and "0.667" in n for n in perfect["notes"])
    # the other scores do not depend on the class list
    assert {k: v for k, v in trained.items() if "macro_f1" not in k and k != "notes"} == \
        {k: v for k, v in present.items() if "macro_f1" not in k and k != "notes"}


def test_an_unknown_class_in_the_list_is_refused():
    with pytest.raises(ValueError, match="classes\\[1\\].*unknown label 'conflict'"):
        scoring.compute([{"conflict_type": NC}], [{"conflict_type": NC}], classes=[NC, "conflict"])


def question_case():
    """Five rows of question q1, four of q2 and two without a question."""
    rows = [  # (question, gold class, gold axes, gold confounder, predicted class, predicted axes, predicted confounder)
        ("q1", CTX, ["geography"], "geography", CTX, ["geography"], "geography"),
        ("q1", CTX, ["geography", "clinical_setting"], "clinical_setting", NC, [], ""),
        ("q1", NC, [], "", NC, [], ""),
        ("q1", NC, [], "", CTX, ["geography"], "geography"),
        ("q1", NC, [], "", NC, [], ""),
        ("q2", NC, [], "", NC, [], ""),
        ("q2", NC, [], "", NC, [], ""),
        ("q2", CTX, ["study_design"], "study_design", CTX, ["study_design"], "study_design"),
        ("q2", NC, [], "", NC, [], ""),
        ("", CTX, ["geography"], "geography", NC, [], ""),
        ("", NC, [], "", CTX, ["geography"], "geography"),
    ]
    refs = [{"question_id": q, "conflict_type": c, "divergence_axes": a, "dominant_confounder": d}
            for q, c, a, d, *_ in rows]
    preds = [{"conflict_type": c, "divergence_axes": a, "dominant_confounder": d} for *_, c, a, d in rows]
    return preds, refs


def test_tasks_1_to_3_are_scored_per_question_with_n():
    preds, refs = question_case()
    scores = quiet_compute(preds, refs)
    assert scores["conflict_type/n"] == 11  # pooled: rows without a question too
    assert set(scores["per_question"]) == {"q1", "q2"}  # rows without a question are pooled only
    q1, q2 = scores["per_question"]["q1"], scores["per_question"]["q2"]
    assert set(q1) == set(scoring.PER_QUESTION_KEYS)
    # q1: 3 of 5 classes right; contextual tp 1, fp 1, fn 1
    assert (q1["conflict_type/n"], q1["conflict_type/accuracy"], q1["conflict_type/ctx_f1"]) == (5, 3 / 5, 0.5)
    assert q1[f"conflict_type/support/{CTX}"] == 2
    # q1 axes: gold {geo}, {geo, setting}; predicted {geo}, {}, {}, {geo}, {}: tp 1, fp 1, fn 2
    assert q1["axes/micro_f1"] == pytest.approx(2 * 1 / (2 * 1 + 1 + 2)) and q1["axes/exact_match"] == 3 / 5
    # confounder over the rows whose reference names one: geography right, clinical_setting missed
    assert (q1["confounder/n"], q1["confounder/accuracy"]) == (2, 0.5)
    assert (q2["conflict_type/n"], q2["conflict_type/accuracy"], q2["conflict_type/ctx_f1"]) == (4, 1.0, 1.0)
    assert (q2["confounder/n"], q2["confounder/accuracy"], q2["axes/micro_f1"]) == (1, 1.0, 1.0)


def test_a_question_without_a_class_reports_it_undefined_not_perfect():
    preds, refs = question_case()
    refs = [{**r, "question_id": "q3"} if i in (2, 4) else r for i, r in enumerate(refs)]  # two q1 rows: no conflict
    q3 = quiet_compute(preds, refs)["per_question"]["q3"]
    assert q3["conflict_type/ctx_f1"] is None and q3["confounder/n"] == 0 and q3["confounder/accuracy"] is None


def test_no_question_field_no_per_question():
    preds, refs = question_case()
    assert "per_question" not in quiet_compute(preds, [{k: v for k, v in r.items() if k != "question_id"} for r in refs])


def test_the_evaluate_module_passes_the_question_and_the_classes(metric):
    preds, refs = question_case()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        through = metric.compute(predictions=preds, references=refs, classes=TRAIN_CLASSES)
    plain = quiet_compute(preds, refs, classes=TRAIN_CLASSES)
    assert through["per_question"] == plain["per_question"]
    assert through["conflict_type/macro_f1"] == plain["conflict_type/macro_f1"]
