"""The annotator panel: consensus of members that disagree, per-member labels in the release row, the
annotate stage with a repeated --annotator, and gold-check wiring (a member never scores a source it
was trained on)."""

from __future__ import annotations

import json
from typing import ClassVar

import pytest
from llm_server import SCIFACT
from sklearn.metrics import cohen_kappa_score

from biodivergence_dataset import io, ontology
from biodivergence_dataset.records import Example
from builder import goldsources
from builder.annotate import run_stage
from builder.annotate_config import AnnotateConfig
from builder.annotators import goldcheck as gc
from builder.annotators.annotator_base import LocalAnnotator
from builder.annotators.panel import Vote, consensus, disagree, panel_agreement
from builder.goldreport import goldcheck_table, goldcheck_warnings
from builder.goldsources import make_claim, make_pair
from builder.repair import Labels

DOMAIN = ontology.DOMAIN_NAMES[0]
CONFLICT = ontology.CONTEXTUAL


def vote(name: str, conflict: str, confidence: float, weight: float = 1.0) -> Vote:
    return Vote(name, "frames", Labels(conflict, divergence_axes=["geography"] if conflict == CONFLICT else [],
                                       confidence=confidence), weight)


def test_consensus_of_two_disagreeing_members_follows_the_weighted_vote():
    yes, no = vote("a", CONFLICT, 0.9), vote("b", ontology.NO_CONFLICT, 0.6)
    agreed = consensus([yes, no])
    assert agreed.labels.conflict_type == CONFLICT and agreed.annotator_id == "a"
    assert agreed.quality == pytest.approx(0.9 / 1.5, abs=1e-4) and not agreed.unanimous
    assert [m.conflict_type for m in agreed.members] == [CONFLICT, ontology.NO_CONFLICT]
    assert disagree([yes, no]) and not disagree([yes, yes])
    # the weight decides: a lighter conflict vote loses
    assert consensus([vote("a", CONFLICT, 0.9, weight=0.5), no]).labels.conflict_type == ontology.NO_CONFLICT
    # a tie goes to no conflict: a conflict has to be shown
    assert consensus([vote("a", CONFLICT, 0.6), no]).labels.conflict_type == ontology.NO_CONFLICT
    assert consensus([yes, yes]).quality == 1.0


def test_panel_agreement_per_member():
    def ex(label, members):
        p = make_pair(make_claim("doc:a", "X reduces Y.", DOMAIN, "t"), make_claim("doc:b", "X raises Y.", DOMAIN, "t"))
        return Example.from_pair(p, conflict_type=label, annotator_id="a", annotator_kind="frames", confidence=0.7,
                                 annotator_labels=[{"annotator_id": n, "conflict_type": c, "confidence": 0.7}
                                                   for n, c in members])
    rows = [ex(CONFLICT, [("a", CONFLICT), ("b", ontology.NO_CONFLICT)]),
            ex(ontology.NO_CONFLICT, [("a", ontology.NO_CONFLICT), ("b", ontology.NO_CONFLICT)])]
    agreement = panel_agreement(rows)
    assert agreement["a"]["agreement"] == 1.0 and agreement["b"]["agreement"] == 0.5 and agreement["b"]["pairs"] == 2


def _pairs_dir(tmp_path):
    pairs = [make_pair(make_claim(f"doc:a{i}", a, DOMAIN, "t"), make_claim(f"doc:b{i}", b, DOMAIN, "t"))
             for i, (a, b) in enumerate([
                 ("Vitamin A supplementation reduced mortality in children.",
                  "Vitamin A supplementation did not reduce mortality in adults."),
                 ("Aspirin lowers the risk of colorectal cancer.", "Aspirin lowers colorectal cancer risk."),
                 ("Statins reduce LDL cholesterol.", "Malaria incidence rose in Kenya."),
             ])]
    folder = tmp_path / "pairs"
    io.write_records(folder, pairs, io.StageStats("mine"))
    return folder, pairs


def test_annotate_stage_with_a_panel_keeps_every_members_label_and_the_frames(tmp_path):
    pairs_dir, pairs = _pairs_dir(tmp_path)
    stats = run_stage(pairs_dir, tmp_path / "out", AnnotateConfig(annotator=["frames", "heuristic"], progress=False))
    rows = {e.pair_id: e for e in io.read_records(tmp_path / "out", Example)}
    assert stats["kept"] == 3 and set(rows) == {p.pair_id for p in pairs}
    for row in rows.values():
        assert [m.annotator_id for m in row.annotator_labels] == ["frames-v1", "heuristic-v1"]
        assert row.frame_a is not None and row.frame_b is not None and 0.0 < row.label_quality <= 1.0
    contextual = rows[pairs[0].pair_id]
    assert contextual.conflict_type == CONFLICT and contextual.frame_b.finding == "no_effect"
    assert contextual.comparability == "same_question"
    manifest = json.loads((tmp_path / "out" / "annotation_manifest.json").read_text())
    assert manifest["annotator"] == ["frames", "heuristic"] and set(manifest["panel_agreement"]) == {
        "frames-v1", "heuristic-v1"}
    with pytest.raises(ValueError, match="one LLM"):
        _ = AnnotateConfig(annotator=["openai:http://127.0.0.1:1/v1?model=a", "ollama:http://127.0.0.1:2?model=b"]).specs


class _TrainedOn(LocalAnnotator):
    """A stand-in member trained on SciFact: goldcheck must never score it there."""

    annotator_id, kind, trained_on = "fake-judge", "judge", frozenset({"scifact"})
    scored: ClassVar[list[str]] = []

    def annotate(self, pair):
        _TrainedOn.scored.append(pair.claim_a.source)
        return Labels(ontology.NO_CONFLICT, confidence=0.6)


def test_goldcheck_never_scores_a_member_on_a_source_it_was_trained_on(monkeypatch):
    monkeypatch.setattr(gc, "make_local_annotator", lambda spec, heldout=None: _TrainedOn())
    monkeypatch.setattr(goldsources, "GOLD_SOURCES", {"scifact": goldsources.GOLD_SOURCES["scifact"],
                                                      "pubmedqa": goldsources.GOLD_SOURCES["pubmedqa"]})
    result = gc.goldcheck(["judge:fake"], SCIFACT.parent, n_boot=50)
    assert result["scores"]["judge:fake"]["scifact"] == {"in_fold": True, "pairs": 519}
    assert not result["scores"]["judge:fake"]["pubmedqa"]["in_fold"]
    assert set(_TrainedOn.scored) == {"pubmedqa"}
    assert "trained on this source" in goldcheck_table(result)


def test_goldcheck_reports_intervals_and_warns_when_the_rule_is_not_beaten():
    result = gc.goldcheck(["frames"], SCIFACT.parent, ["scifact"], n_boot=200)
    cell = result["scores"]["frames"]["scifact"]
    lo, hi = cell["kappa_ci"]
    gold = gc.load_gold("scifact", SCIFACT.parent)
    # the rule is the negation-mismatch baseline: its kappa against the gold labels, computed here by scikit-learn
    rule_kappa = cohen_kappa_score([g.conflict for g in gold], [gc.negation_mismatch(g.pair) for g in gold])
    assert cell["pairs"] == len(gold) == 519 and lo <= cell["kappa"] <= hi
    assert cell["rule_kappa"] == pytest.approx(rule_kappa, abs=1e-4)
    assert cell["beats_rule"] == (cell["kappa"] - cell["rule_kappa"] >= gc.MIN_KAPPA_GAIN)
    forced = {**result, "scores": {"frames": {"scifact": {**cell, "beats_rule": False}}}}
    assert goldcheck_warnings(forced) and "scifact" in goldcheck_warnings(forced)[0]


def test_pubmedqa_questions_read_as_claims():
    assert goldsources.question_as_claim("Do statins reduce stroke risk in women?") == "Statins reduce stroke risk in women."
    assert (goldsources.question_as_claim("Night shifts: is there a link with obesity?")
            == "Night shifts: there is a link with obesity.")
    # the auxiliary goes back after the subject, before the predicate that states the finding
    written = {
        "Is coffee intake associated with gout in older men?": "Coffee intake is associated with gout in older men.",
        "Is a low platelet count a risk factor for bleeding?": "A low platelet count is a risk factor for bleeding.",
        "Are night-shift nurses more likely to report insomnia?": "Night-shift nurses are more likely to report insomnia.",
        "Can early mobilisation reduce hospital stay?": "Early mobilisation can reduce hospital stay.",
        "Could vitamin D supplementation be useful after hip fracture?":
            "Vitamin D supplementation could be useful after hip fracture.",
        "Has the incidence of measles increased since 2015?": "The incidence of measles has increased since 2015.",
        "Are anxiety disorders underdiagnosed in primary care?": "Anxiety disorders are underdiagnosed in primary care.",
        # a finding word inside the subject is not the predicate; with none left, no place is guessed
        "Is a reduction of sodium intake in hospital wards achievable?":
            "A reduction of sodium intake in hospital wards achievable.",
        "Is the wound-adapted dressing preferable?": "The wound-adapted dressing preferable.",
    }
    assert {q: goldsources.question_as_claim(q) for q in written} == written
    pairs = goldsources.load_gold("pubmedqa", SCIFACT.parent)
    assert len(pairs) == 890 and sum(p.conflict for p in pairs) == 338  # decisions no / yes; maybe left out


class _Counting(LocalAnnotator):
    """A local member that calls every pair a conflict and counts how often it was asked."""

    annotator_id, kind = "always-conflict", "frames"
    asked: ClassVar[list[str]] = []

    def annotate(self, pair):
        _Counting.asked.append(pair.pair_id)
        return Labels(CONFLICT, divergence_axes=["geography"], confidence=0.9)


def test_a_panel_with_an_llm_asks_it_only_about_disputed_pairs_within_budget(tmp_path, monkeypatch):
    from llm_server import FakeOllama, real_pairs, write_pairs

    from builder import pair_annotator

    real_make_local = pair_annotator.make_local
    monkeypatch.setattr(pair_annotator, "make_local",
                        lambda spec, **kw: _Counting() if spec.backend == "heuristic" else real_make_local(spec, **kw))
    pairs = real_pairs(6)
    folder = write_pairs(tmp_path / "pairs", pairs)
    with FakeOllama() as server:
        config = AnnotateConfig(annotator=["frames", "heuristic", server.spec()], llm_budget=2, progress=False,
                                backoff_s=0.01, timeout_s=5.0)
        stats = run_stage(folder, tmp_path / "out", config)
        asked = server.requests_by_pair()
    rows = {e.pair_id: e for e in io.read_records(tmp_path / "out", Example)}
    assert stats["kept"] == 6 and sum(asked.values()) == 2  # frames say no conflict on most: disputed, budget 2
    llm_rows = [e for e in rows.values() if any(m.annotator_id.startswith("ollama:") for m in e.annotator_labels)]
    assert len(llm_rows) == 2 and all(len(e.annotator_labels) == 3 for e in llm_rows)
    assert sorted(_Counting.asked) == sorted(p.pair_id for p in pairs)  # each pair labelled once by the member


def test_one_annotator_leaves_label_quality_null_as_data_fields_say(tmp_path):
    pairs_dir, _ = _pairs_dir(tmp_path)
    run_stage(pairs_dir, tmp_path / "out", AnnotateConfig(annotator=["heuristic"], progress=False))
    rows = io.read_records(tmp_path / "out", Example)
    assert rows and all(r.label_quality is None and r.annotator_labels == [] for r in rows)
