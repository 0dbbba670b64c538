"""The one development / check partition of the gold sources, and goldcheck's table of both parts."""

from __future__ import annotations

import pytest
from repo_paths import SHARED_DATA

from biodivergence_dataset import ontology
from builder import goldparts
from builder.annotators.goldcheck import goldcheck, score_parts
from builder.goldreport import goldcheck_parts_table
from builder.goldsources import gold_part, load_gold


def test_every_key_is_in_exactly_one_part_and_the_development_part_splits_again():
    keys = [f"PMC{i}" for i in range(2000)]
    for key in keys:
        top = [p for p in ("training", "heldout") if goldparts.in_part("evidence_inference", key, p)]
        inner = [p for p in ("fit", "development") if goldparts.in_part("evidence_inference", key, p)]
        assert len(top) == 1
        assert len(inner) == (0 if top == ["heldout"] else 1)
    check = sum(goldparts.is_heldout("evidence_inference", k) for k in keys) / len(keys)
    assert abs(check - goldparts.CHECK_SHARE) < 0.03
    with pytest.raises(ValueError, match="unknown part"):
        goldparts.in_part("pubmedqa", "1", "test")


def test_gold_pairs_fall_in_the_part_of_their_items():
    gold = load_gold("pubmedqa", SHARED_DATA)
    parts = [gold_part(g) for g in gold]
    assert set(parts) == {"development", "check"}
    assert all(p == ("check" if goldparts.is_heldout("pubmedqa", g.keys[0]) else "development")
               for g, p in zip(gold, parts, strict=True))


def test_goldcheck_scores_both_parts_and_the_table_marks_the_check_part():
    result = goldcheck(["heuristic"], SHARED_DATA, ["pubmedqa"], n_boot=0, parts=True)
    cells = result["parts"]["heuristic"]["pubmedqa"]
    assert set(cells) == {"development", "check"}
    total = result["scores"]["heuristic"]["pubmedqa"]["pairs"]
    assert cells["development"]["pairs"] + cells["check"]["pairs"] == total
    assert 0.1 < cells["check"]["pairs"] / total < 0.3
    assert not any(c["trained_on"] for c in cells.values())  # the heuristic learned nothing
    table = goldcheck_parts_table(result)
    assert f"| `heuristic` | pubmedqa | **check** | {cells['check']['pairs']} |" in table


def test_a_learned_annotator_is_marked_as_trained_on_its_development_part():
    gold = load_gold("pubmedqa", SHARED_DATA)
    labels = [ontology.NO_CONFLICT] * len(gold)
    cells = score_parts(gold, labels, trained=True, n_boot=0, seed=0)
    assert cells["development"]["trained_on"] and not cells["check"]["trained_on"]
    assert cells["check"]["kappa"] == 0.0  # a constant label agrees no better than chance
    table = goldcheck_parts_table({"parts": {"reader": {"pubmedqa": cells}}})
    assert "development (trained on)" in table and "**check**" in table
