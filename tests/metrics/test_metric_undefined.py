"""Undefined is not perfect (issue 28): a 0 / 0 score is null, in the scorer, the evaluate module and the
comparison."""

from __future__ import annotations

import pytest
from metric_records import scoring

#: Two test pairs without a conflict, predicted right: no class but no_conflict on either side.
NO_CONFLICT_ONLY = [{"conflict_type": "no_conflict", "divergence_axes": []}] * 2


def check_undefined_contract(scores: dict) -> None:
    """A class neither side has is None with support 0, never 1; its interval too; macro-F1 says over what."""
    assert scores["conflict_type/accuracy"] == 1.0
    assert (scores["conflict_type/ctx_f1"], scores["conflict_type/support/contextual_contradiction"]) == (None, 0)
    for name in scoring.CONFLICT_TYPES[1:]:
        assert scores[f"conflict_type/f1/{name}"] is None and scores[f"conflict_type/support/{name}"] == 0, name
    assert scores["conflict_type/kappa"] is None  # one class on both sides: chance agreement is 1, 0 / 0
    assert (scores["conflict_type/macro_f1"], scores["conflict_type/macro_f1/over"]) == (1.0, ["no_conflict"])
    assert scores["axes/micro_f1"] is None and scores["axes/macro_f1/over"] == []  # no axis anywhere
    assert scores["axes/exact_match"] == 1.0 and scores["axes/n"] == 2


def test_a_class_neither_side_has_is_null_not_one():
    with pytest.warns(scoring.UndefinedScoreWarning, match=r"conflict_type kappa, ctx_f1 \(n=2\).*"
                      r"f1, precision, recall of direct_contradiction, contextual_contradiction"):
        scores = scoring.compute(NO_CONFLICT_ONLY, NO_CONFLICT_ONLY, bootstrap=50)
    check_undefined_contract(scores)
    assert scores["conflict_type/ctx_f1/ci_low"] is None and scores["conflict_type/ctx_f1/ci_high"] is None
    assert scores["conflict_type/macro_f1/ci_low"] == 1.0


def test_a_class_only_predicted_scores_zero_and_its_recall_is_undefined():
    preds = [{"conflict_type": "contextual_contradiction"}, {"conflict_type": "no_conflict"}]
    with pytest.warns(scoring.UndefinedScoreWarning, match="recall of contextual_contradiction"):
        s = scoring.compute(preds, [{"conflict_type": "no_conflict"}] * 2)
    assert s["conflict_type/ctx_f1"] == 0.0 and s["conflict_type/precision/contextual_contradiction"] == 0.0
    assert s["conflict_type/recall/contextual_contradiction"] is None
    assert s["conflict_type/macro_f1/over"] == ["no_conflict", "contextual_contradiction"]


def test_evaluate_module_reports_the_same_nulls(metric):
    with pytest.warns(UserWarning, match="undefined scores"):
        scores = metric.compute(predictions=NO_CONFLICT_ONLY, references=NO_CONFLICT_ONLY)
    check_undefined_contract(scores)
    assert scores == scoring.compute(NO_CONFLICT_ONLY, NO_CONFLICT_ONLY)


def test_compare_reports_undefined_differences_as_null():
    c = scoring.compare(NO_CONFLICT_ONLY, NO_CONFLICT_ONLY, NO_CONFLICT_ONLY, bootstrap=20, semsim_model=None)
    assert c["conflict_type/ctx_f1/diff"] is None and c["conflict_type/ctx_f1/ci_low"] is None
    assert c["conflict_type/ctx_f1/p_value"] is None and c["conflict_type/macro_f1/p_value"] == 1.0
    assert c["conflict_type/macro_f1/diff"] == 0.0
