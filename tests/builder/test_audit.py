"""Leakage audit (paper Table 37), release statistics (Tables 17–18), plots and the audit command."""

from __future__ import annotations

import json

import pytest
from split_factory import disjoint_pairs, example

from biodivergence_cli.main import main
from biodivergence_dataset import ontology
from biodivergence_dataset.card import write_card
from biodivergence_dataset.release import write_config
from builder import audit, release_stage
from builder.plotting import pyplot

TRAIN, VALIDATION, TEST = ontology.SPLITS
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def leaky_splits():
    """Hand-built leakage: train A–B, C–D; test A–E (either), A–C (both), F–G (none), C–D (same pair as train)."""
    return {
        TRAIN: [example("A", "B"), example("C", "D")],
        VALIDATION: [example("H", "I")],
        TEST: [example("A", "E"), example("A", "C"), example("F", "G"), example("C", "D")],
    }


def clean_splits():
    rows = disjoint_pairs(7)
    return {TRAIN: rows[:4], VALIDATION: rows[4:5], TEST: rows[5:]}


def make_release(root, primary, pairlevel, manifest=None):
    write_config(root, "primary", primary)
    write_config(root, "pairlevel", pairlevel)
    if manifest is not None:
        (root / "split_manifest.json").write_text(json.dumps(manifest))
    write_card(root)
    return root


def test_table_37_counts_are_those_computed_by_hand():
    rows = {s: [e.model_dump() for e in r] for s, r in leaky_splits().items()}
    result = audit.leakage(rows)
    assert result.leaks
    counts = result.counts
    assert counts["total"] == 7
    assert counts["test_rows_either_article_in_train"] == 3
    assert counts["test_rows_both_articles_in_train"] == 2
    assert (counts["distinct_test_claim_pairs_in_train"], counts["distinct_test_claim_pairs"]) == (1, 4)
    assert counts["overlapping_pair_ids_train_test"] == 1
    assert (counts["articles_shared_across_splits"], counts["claims_shared_across_splits"],
            counts["pairs_shared_across_splits"]) == (3, 3, 1)
    assert counts["validation_rows_either_article_in_train"] == 0
    assert result.display["test rows with either article in train"] == "3 (75.0%)"
    assert result.display["distinct test claim pairs also in train"] == "1 / 4"
    assert result.display["train / validation / test"] == "2 / 1 / 4"


def test_claim_pairs_match_on_text_in_either_order():
    train = example("A", "B")
    swapped = train.model_copy(update={"claim_a_text": train.claim_b_text.upper(), "claim_b_text": train.claim_a_text,
                                       "pair_id": "other", "article_uid_a": "X", "article_uid_b": "Y"})
    result = audit.leakage({TRAIN: [train.model_dump()], TEST: [swapped.model_dump()]})
    assert result.counts["distinct_test_claim_pairs_in_train"] == 1
    assert result.counts["test_rows_either_article_in_train"] == 0


def test_test_family_splits_may_share_rows():
    rows = disjoint_pairs(6)
    splits = {TRAIN: rows[:3], VALIDATION: rows[3:4], TEST: rows[4:], ontology.EXTRA_TEST_SPLITS[0]: rows[5:]}
    result = audit.leakage({s: [e.model_dump() for e in r] for s, r in splits.items()})
    assert not result.leaks


def test_audit_command_passes_a_clean_primary_and_reports_pairlevel_leakage(tmp_path, capsys):
    rel = make_release(tmp_path, clean_splits(), leaky_splits())
    assert main(["audit", "--release", str(rel)]) == 0
    out = capsys.readouterr().out
    assert "zero article / claim / pair overlap" in out and "3 (75.0%)" in out
    written = json.loads((rel / "audit.json").read_text())
    assert written["ok"] and written["leaks"] == {"primary": False, "pairlevel": True}
    assert written["leakage"]["primary"]["test rows with either article in train"] == "0 (0.0%)"
    card = (rel / "README.md").read_text()
    assert "| test rows with either article in train | 0 (0.0%) | 3 (75.0%) |" in card


def test_audit_command_fails_when_primary_leaks(tmp_path, capsys):
    rel = make_release(tmp_path, leaky_splits(), clean_splits())
    assert main(["audit", "--release", str(rel), "--no-plots"]) == 1
    assert "primary leaks" in capsys.readouterr().out
    assert json.loads((rel / "audit.json").read_text())["ok"] is False


def test_statistics_match_hand_counts(tmp_path):
    def text(ex, a, b, abstract_a, abstract_b):
        return ex.model_copy(update={"claim_a_text": a, "claim_b_text": b, "abstract_a": abstract_a,
                                     "abstract_b": abstract_b})

    rows = disjoint_pairs(4, conflicts=(ontology.CONTEXTUAL, ontology.NO_CONFLICT))
    rows = [text(e, "one two three", "one two three four five", "a b", "") for e in rows]
    primary = {TRAIN: rows[:2], VALIDATION: rows[2:3], TEST: rows[3:]}
    manifest = {"funnel_per_domain": {"amr": {"abstracts": 10, "claims": 25, "candidates": 12, "labelled": 4}}}
    rel = make_release(tmp_path, primary, primary, manifest)
    audit.run_stage(rel, rel)
    assert "per_domain" not in json.loads((rel / "stats.json").read_text())  # the release stage adds the funnel
    release_stage.run_stage(None, rel)
    stats = json.loads((rel / "stats.json").read_text())
    prim = stats["by_config"]["primary"]
    assert prim["conflict_type_by_split"][ontology.CONTEXTUAL] == {TRAIN: 1, VALIDATION: 1, TEST: 0}
    assert prim["conflict_type_by_split"][ontology.NO_CONFLICT] == {TRAIN: 1, VALIDATION: 0, TEST: 1}
    assert prim["axis_by_split"]["geography"] == {TRAIN: 1, VALIDATION: 1, TEST: 0}
    assert prim["dominant_confounder"] == {"geography": 2}
    assert prim["summary"] == {
        "examples": 4, "mean_claim_tokens": 4.0, "median_claim_tokens": 4.0, "mean_abstract_tokens": 2.0,
        "median_abstract_tokens": 2.0, "mean_axes_per_example": 0.5, "examples_with_confounder": 2,
        "most_common_confounder": "geography", "next_confounders": []}
    assert stats["per_domain"]["amr"] == {"abstracts": 10, "claims": 25, "candidates": 12, "labelled": 4,
                                          "primary_pairs": 4, "pairlevel_pairs": 4}
    assert stats["components"]["count"] == 4 and stats["components"]["largest"] == 1
    card = (rel / "README.md").read_text()
    assert "## Construction funnel" in card and "| amr | 10 | 25 | 12 | 4 | 4 | 4 |" in card
    assert "| `contextual_contradiction` | 1 | 1 | 0 |" in card


def test_plots_are_pngs_shown_by_the_card(tmp_path):
    rel = make_release(tmp_path, clean_splits(), leaky_splits())
    audit.run_stage(rel, rel)
    release_stage.run_stage(None, rel)
    pngs = sorted(p.name for p in (rel / "plots").glob("*.png"))
    assert pngs == ["axes_by_split.png", "component_sizes.png", "conflict_type_by_split.png"]
    for name in pngs:
        assert (rel / "plots" / name).read_bytes()[:8] == PNG_MAGIC
        assert f"(plots/{name})" in (rel / "README.md").read_text()


def _panel(table, splits, horizontal=True):
    plt = pyplot()
    fig, ax = plt.subplots()
    log = audit._grouped_counts(ax, table, splits, horizontal, "an axis", "examples")
    fig.canvas.draw()
    return fig, ax, log


def test_count_charts_name_empty_categories_instead_of_stacking_zero_labels():
    splits = {TRAIN: 9, TEST: 3}
    table = {"geography": {TRAIN: 3, TEST: 0}, "study_design": {TRAIN: 0, TEST: 0}, "clinical_setting": {TRAIN: 7, TEST: 2}}
    fig, ax, log = _panel(table, splits)
    assert not log and ax.get_xscale() == "linear"
    assert [t.get_text() for t in ax.get_yticklabels()] == ["geography", "clinical setting"]  # no empty slot
    assert sorted(t.get_text() for t in ax.texts if t.get_text()) == ["2", "3", "7"]  # no "0" labels
    assert "no examples: study design" in ax.get_xlabel()
    counts = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert len(counts) >= 3 and all(c.lstrip("−-").isdigit() for c in counts)  # several integer ticks, not one
    pyplot().close(fig)


def test_count_charts_turn_logarithmic_with_plain_ticks_only_for_a_wide_range():
    fig, ax, log = _panel({"no_conflict": {TRAIN: 4000, TEST: 900}, "contextual": {TRAIN: 2, TEST: 1}},
                          {TRAIN: 4002, TEST: 901}, horizontal=False)
    assert log and ax.get_yscale() == "symlog" and "log scale" in ax.get_ylabel()
    ticks = [t.get_text() for t in ax.get_yticklabels()]
    assert ticks[:5] == ["0", "1", "10", "100", "1,000"]
    pyplot().close(fig)
    fig, ax, log = _panel({"geography": {TRAIN: 0}}, {TRAIN: 5})
    assert not log and [t.get_text() for t in ax.texts] == ["no example has an axis in any split"]
    assert not ax.get_xticks().size and not ax.get_yticks().size
    pyplot().close(fig)


def test_audit_is_resumable_and_reruns_after_the_release_changes(tmp_path):
    rel = make_release(tmp_path, clean_splits(), leaky_splits())
    audit.run_stage(rel, rel, audit.AuditConfig(plots=False))
    before = (rel / "audit.json").stat().st_mtime_ns
    audit.run_stage(rel, rel, audit.AuditConfig(plots=False))
    assert (rel / "audit.json").stat().st_mtime_ns == before
    write_config(rel, "primary", leaky_splits())
    assert audit.run_stage(rel, rel, audit.AuditConfig(plots=False))["ok"] is False


def test_component_sizes_of_the_article_graph():
    rows = [e.model_dump() for e in (example("a", "b"), example("b", "c"), example("d", "e"))]
    assert audit.component_sizes(rows) == [2, 1]


def test_audit_of_a_folder_without_configs_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="no release configs"):
        audit.audit_release(tmp_path)


def test_component_plot_ticks_are_plain_counts_from_one(tmp_path, monkeypatch):
    seen = {}
    monkeypatch.setattr(audit, "save_png", lambda fig, path, dpi: seen.setdefault("fig", fig))
    audit.plot_component_sizes({"released primary splits": [1] * 13}, tmp_path / "c.png", 40)
    ax = seen["fig"].axes[0]
    seen["fig"].canvas.draw()
    for labels in (ax.get_xticklabels(), ax.get_yticklabels()):
        shown = [t.get_text() for t in labels if t.get_text()]
        assert shown and "0" not in shown and all(t.replace(",", "").isdigit() for t in shown)
    pyplot().close(seen["fig"])
