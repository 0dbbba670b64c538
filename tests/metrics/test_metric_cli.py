"""``biodivergence evaluate``: predictions JSONL matched by pair_id against a small release split."""

from __future__ import annotations

import json
import re

import pytest

from biodivergence_cli.main import main
from biodivergence_dataset.records import Example
from biodivergence_dataset.release import write_config

CLAIM_A = "Colistin MIC of 2 mg/L identifies susceptible isolates in Greek ICUs."
CLAIM_B = "The same breakpoint misclassifies isolates in Thai surveillance."
# (conflict type, axes, confounder) of the six test references, pair ids p0..p5.
LABELS = [
    ("contextual_contradiction", ["geography", "clinical_setting"], "geography"),
    ("contextual_contradiction", ["disease_subtype"], "disease_subtype"),
    ("no_conflict", [], None),
    ("no_conflict", [], None),
    ("no_conflict", [], None),
    ("contextual_contradiction", ["population_cohort"], "population_cohort"),
]


def example(i: int) -> Example:
    conflict_type, axes, confounder = LABELS[i]
    span = {"article_uid": f"a{i}", "text": "Greek ICUs", "start": CLAIM_A.index("Greek"),
            "end": CLAIM_A.index("Greek") + len("Greek ICUs"), "role": "claim_a"}
    return Example(
        example_id=f"e{i}", pair_id=f"p{i}", domain="amr", claim_a_id=f"c{i}a", claim_b_id=f"c{i}b",
        claim_a_text=CLAIM_A, claim_b_text=CLAIM_B, claim_a_type="factual", claim_b_type="factual",
        article_uid_a=f"a{i}", article_uid_b=f"b{i}", conflict_type=conflict_type, divergence_axes=axes,
        dominant_confounder=confounder, reconciliation="Geography and clinical setting differ.",
        evidence_spans=[span], annotator_id="test", annotator_kind="llm", confidence=0.9,
    )


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    root = tmp_path_factory.mktemp("release")
    write_config(root, "primary", {"train": [example(0)], "test": [example(i) for i in range(6)]})
    return root


def write_predictions(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_evaluate_matches_by_pair_id_and_reports_unmatched_ids(release, tmp_path, capsys):
    # p5 has no prediction; "px" is not in the split; p1 gets the wrong class and axis.
    rows = [{"pair_id": f"p{i}", "conflict_type": LABELS[i][0], "divergence_axes": LABELS[i][1],
             "dominant_confounder": LABELS[i][2] or ""} for i in (4, 3, 2, 0)]
    rows.append({"pair_id": "p1", "conflict_type": "no_conflict", "divergence_axes": ["geography"],
                 "dominant_confounder": "geography"})
    rows.append({"pair_id": "px", "conflict_type": "no_conflict", "divergence_axes": [], "dominant_confounder": ""})
    predictions = write_predictions(tmp_path / "preds.jsonl", rows)

    assert main(["evaluate", "--predictions", str(predictions), "--release", str(release), "--no-semsim",
                 "--allow-missing"]) == 0

    report = json.loads((tmp_path / "preds.metrics.json").read_text())
    assert (report["n_references"], report["n_predictions"], report["n_scored"]) == (6, 6, 5)
    assert report["missing_pair_ids"] == ["p5"] and report["extra_pair_ids"] == ["px"]
    assert (report["metric_version"], report["ontology_version"]) == ("dev", "1.0")  # which metric produced it
    metrics = report["metrics"]
    assert metrics["conflict_type/accuracy"] == pytest.approx(4 / 5)
    assert metrics["conflict_type/ctx_f1"] == pytest.approx(2 / 3)  # tp p0, fn p1
    assert metrics["axes/micro_precision"] == pytest.approx(2 / 3)
    assert metrics["axes/micro_recall"] == pytest.approx(2 / 3)
    assert (metrics["confounder/accuracy"], metrics["confounder/n"]) == (pytest.approx(1 / 2), 2)
    assert not any(k.startswith(("reconciliation/", "spans/")) for k in metrics)  # predictions lack those fields
    out = capsys.readouterr().out
    assert "5 of 6 references of primary/test have a prediction" in out
    assert "1 references without a prediction (not scored): p5" in out
    assert "Task 1: Conflict-type classification" in out and "Task 3: Dominant-confounder prediction" in out
    assert "confusion matrix" in out


def test_evaluate_all_tasks_with_bootstrap_and_out_path(release, tmp_path):
    rows = [{"pair_id": f"p{i}", "conflict_type": LABELS[i][0], "divergence_axes": LABELS[i][1],
             "dominant_confounder": LABELS[i][2] or "", "reconciliation": "Geography differs.",
             "evidence_spans": [{"text": "Greek ICUs", "start": 0, "end": 10, "role": "claim_a"}]} for i in range(6)]
    predictions = write_predictions(tmp_path / "all.jsonl", rows)
    out = tmp_path / "reports" / "all.json"
    argv = ["evaluate", "--predictions", str(predictions), "--release", str(release), "--split", "test",
            "--config", "primary", "--no-semsim", "--bootstrap", "50", "--out", str(out)]
    assert main(argv) == 0
    metrics = json.loads(out.read_text())["metrics"]
    assert metrics["conflict_type/macro_f1"] == 1.0 and metrics["spans/f1"] == 1.0
    # macro-F1 is over the train split's one class: a resample without it scores 0 on it
    assert metrics["conflict_type/macro_f1/over"] == [LABELS[0][0]]
    assert metrics["conflict_type/macro_f1/ci_low"] < metrics["conflict_type/macro_f1/ci_high"] == 1.0
    assert 0 < metrics["reconciliation/slot_overlap"] < 1 and "reconciliation/semsim" not in metrics


@pytest.mark.parametrize(
    "content, message",
    [
        ('{"conflict_type": "no_conflict"}\n', "preds.jsonl:1: a prediction row needs a string pair_id"),
        ('{"pair_id": "p0"}\n{"pair_id": "p0"}\n', "preds.jsonl:2: duplicate pair_id 'p0'"),
        ('{"pair_id": "nope", "conflict_type": "no_conflict"}\n', "no prediction in"),
        ('{"pair_id": "p0", "conflict_type": "clash"}\n', "unknown label 'clash'"),
    ],
)
def test_evaluate_rejects_bad_predictions(release, tmp_path, capsys, content, message):
    predictions = tmp_path / "preds.jsonl"
    predictions.write_text(content, encoding="utf-8")
    argv = ["evaluate", "--predictions", str(predictions), "--release", str(release), "--no-semsim", "--allow-missing"]
    assert main(argv) == 1
    assert message in capsys.readouterr().err


def test_evaluate_reports_a_class_on_neither_side_as_null_not_one(release, tmp_path, capsys):
    # only the three no-conflict pairs are predicted (right): no contextual contradiction on either side
    rows = [{"pair_id": f"p{i}", "conflict_type": "no_conflict", "divergence_axes": []} for i in (2, 3, 4)]
    predictions = write_predictions(tmp_path / "preds.jsonl", rows)
    with pytest.warns(UserWarning, match=r"undefined scores .* ctx_f1"):
        assert main(["evaluate", "--predictions", str(predictions), "--release", str(release), "--no-semsim",
                     "--allow-missing", "--bootstrap", "20"]) == 0
    metrics = json.loads((tmp_path / "preds.metrics.json").read_text())["metrics"]
    assert metrics["conflict_type/accuracy"] == 1.0
    assert (metrics["conflict_type/ctx_f1"], metrics["conflict_type/support/contextual_contradiction"]) == (None, 0)
    assert metrics["conflict_type/ctx_f1/ci_low"] is None and metrics["conflict_type/kappa"] is None
    assert metrics["conflict_type/f1/contextual_contradiction"] is None
    assert metrics["conflict_type/macro_f1/over"] == [LABELS[0][0]]  # the train split's classes
    out = capsys.readouterr().out
    assert re.search(r"^ +ctx_f1 +n/a +\[n/a, n/a\]$", out, re.MULTILINE)  # the score and its interval
    assert re.search(r"^ +contextual_contradiction +n/a \(n=0\) +n/a \(n=0\) +n/a \(n=0\) +0$", out, re.MULTILINE)
    assert f"macro_f1 over 1 label(s): {LABELS[0][0]}" in out
    assert "Notes:" in out and "confounder not scored: no prediction carries 'dominant_confounder'" in out


def test_evaluate_refuses_a_field_on_some_predictions_only(release, tmp_path, capsys):
    rows = [{"pair_id": "p2", "conflict_type": "no_conflict", "divergence_axes": []},
            {"pair_id": "p3", "conflict_type": "no_conflict"}]
    predictions = write_predictions(tmp_path / "preds.jsonl", rows)
    argv = ["evaluate", "--predictions", str(predictions), "--release", str(release), "--no-semsim", "--allow-missing"]
    assert main(argv) == 1
    assert "preds.jsonl:2: divergence_axes: missing, although predictions[0] has it" in capsys.readouterr().err
