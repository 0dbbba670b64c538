"""Agreement metrics against hand-computed cases, and between two real annotate runs."""

from __future__ import annotations

import pytest
from llm_server import FakeOllama, real_pairs, write_pairs

from biodivergence_dataset import ontology
from builder.agreement import agreement, cohen_kappa, compare, confusion, per_class, set_jaccard
from builder.annotate import run_stage
from builder.annotate_config import AnnotateConfig

NC, CTX, DIRECT = ontology.NO_CONFLICT, ontology.CONTEXTUAL, ontology.CONFLICT_TYPE_NAMES[1]


@pytest.mark.parametrize("a, b, expected", [
    # p_o = 0.75, p_e = 0.5 → κ = 0.5
    (["x", "x", "y", "y"], ["x", "y", "y", "y"], 0.5),
    # perfect agreement
    (["x", "y", "z"], ["x", "y", "z"], 1.0),
    # p_o = 0, p_e = 0.5 → κ = -1
    (["x", "y"], ["y", "x"], -1.0),
    # one annotator constant: p_o = 0.5, p_e = 0.5 → κ = 0
    (["x", "x", "x", "x"], ["x", "x", "y", "y"], 0.0),
    # both constant and equal
    (["x", "x"], ["x", "x"], 1.0),
])
def test_cohen_kappa_hand_computed(a, b, expected):
    assert cohen_kappa(a, b) == pytest.approx(expected)


def test_cohen_kappa_rejects_unequal_lengths():
    with pytest.raises(ValueError, match="length"):
        cohen_kappa(["x"], ["x", "y"])


def test_per_class_one_vs_rest_matches_table_39_columns():
    a = [NC, NC, NC, CTX, CTX, DIRECT]
    b = [NC, NC, CTX, CTX, NC, NC]
    rows = {r["class"]: r for r in per_class(a, b)}
    assert (rows[NC]["n_a"], rows[NC]["n_b"], rows[NC]["n_agree"]) == (3, 4, 2)
    assert rows[NC]["recall_b_given_a"] == pytest.approx(2 / 3)
    assert rows[NC]["precision_b_given_a"] == pytest.approx(2 / 4)
    assert rows[NC]["jaccard"] == pytest.approx(2 / 5)
    assert rows[CTX]["kappa"] == pytest.approx(cohen_kappa([x == CTX for x in a], [y == CTX for y in b]))
    assert rows[DIRECT]["n_agree"] == 0 and rows[DIRECT]["jaccard"] == 0.0
    assert confusion(a, b)[CTX][NC] == 1 and confusion(a, b)[NC][CTX] == 1


def test_axis_jaccard_and_compare_on_partial_overlap():
    assert set_jaccard([], []) == 1.0 and set_jaccard(["a", "b"], ["b", "c"]) == pytest.approx(1 / 3)
    row = lambda c, axes, conf: {"conflict_type": c, "divergence_axes": axes, "dominant_confounder": conf}
    g, y = ontology.AXIS_NAMES[1], ontology.AXIS_NAMES[2]
    ra = {"p1": row(CTX, [g], g), "p2": row(NC, [], None), "p3": row(NC, [], None)}
    rb = {"p1": row(CTX, [g, y], y), "p2": row(CTX, [g], g)}
    report = compare(ra, rb)
    assert (report["n_a"], report["n_b"], report["n_common"]) == (3, 2, 2)
    assert report["raw_agreement"] == 0.5 and report["axis_jaccard_mean"] == pytest.approx((0.5 + 0.0) / 2)
    assert report["confounder_pairs"] == 1 and report["confounder_agreement"] == 0.0


def test_agreement_between_two_real_annotation_runs(tmp_path):
    pairs = write_pairs(tmp_path / "pairs", real_pairs(10))
    run_stage(pairs, tmp_path / "heuristic", AnnotateConfig(progress=False))
    with FakeOllama() as server:
        run_stage(pairs, tmp_path / "llm", AnnotateConfig(annotator=server.spec(), progress=False))
    report = agreement(tmp_path / "heuristic", tmp_path / "llm")
    heuristic_ctx = {r["class"]: r for r in report["per_class"]}[CTX]["n_a"]
    assert report["n_common"] == 10
    # the fake server always answers contextual_contradiction
    assert report["raw_agreement"] == pytest.approx(heuristic_ctx / 10)
    assert {r["class"]: r["n_b"] for r in report["per_class"]}[CTX] == 10
    with pytest.raises(FileNotFoundError, match="no part-"):
        agreement(tmp_path / "pairs" / "missing", tmp_path / "llm")
