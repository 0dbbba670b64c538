"""Bootstrap intervals of the metric and the paired comparison of two systems."""

from __future__ import annotations

import pytest
from metric_records import FakeEncoder, random_records, scoring


def test_bootstrap_intervals_for_key_metrics():
    preds, refs = random_records(7, 80)
    s = scoring.compute(preds, refs, bootstrap=300, seed=3, semsim_model=FakeEncoder())
    interval_keys = {k.rsplit("/", 1)[0] for k in s if k.endswith(("/ci_low", "/ci_high"))}
    assert interval_keys == set(scoring.KEY_METRIC_KEYS)
    for key in scoring.KEY_METRIC_KEYS:
        assert s[f"{key}/ci_low"] <= s[key] <= s[f"{key}/ci_high"], key
        assert s[f"{key}/ci_low"] < s[f"{key}/ci_high"], key
    again = scoring.compute(preds, refs, bootstrap=300, seed=3, semsim_model=FakeEncoder())
    assert again == s
    plain = scoring.compute(preds, refs, semsim_model=FakeEncoder())
    assert {k: v for k, v in s.items() if not k.endswith(("/ci_low", "/ci_high"))} == plain


def test_compare_paired_bootstrap():
    preds, refs = random_records(11, 120)
    oracle = [dict(r) for r in refs]
    c = scoring.compare(preds, oracle, refs, bootstrap=300, seed=0, semsim_model=FakeEncoder())
    assert {k.rsplit("/", 1)[0] for k in c} == set(scoring.KEY_METRIC_KEYS)
    for key in scoring.KEY_METRIC_KEYS:
        assert c[f"{key}/diff"] == pytest.approx(c[f"{key}/b"] - c[f"{key}/a"])
        assert c[f"{key}/diff"] > 0 and c[f"{key}/ci_low"] > 0 and c[f"{key}/p_value"] < 0.05, key
    reverse = scoring.compare(oracle, preds, refs, bootstrap=300, seed=0, semsim_model=FakeEncoder())
    for key in scoring.KEY_METRIC_KEYS:
        assert reverse[f"{key}/diff"] == pytest.approx(-c[f"{key}/diff"])
        assert reverse[f"{key}/ci_high"] == pytest.approx(-c[f"{key}/ci_low"])
        assert reverse[f"{key}/p_value"] == c[f"{key}/p_value"]
    tie = scoring.compare(preds, preds, refs, bootstrap=100, semsim_model=FakeEncoder())
    assert all(tie[f"{k}/diff"] == 0 and tie[f"{k}/p_value"] == 1.0 for k in scoring.KEY_METRIC_KEYS)
