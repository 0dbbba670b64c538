"""An honest card: source datasets and licences, no local paths, Data Fields, sizes, integer columns, plots."""

from __future__ import annotations

import json

import fault_cases as cases
import pyarrow.parquet as pq
import pytest
import yaml
from release_factory import make_example, make_splits, write_small_release

from biodivergence_dataset import card, cardmeta, ontology
from biodivergence_dataset import release as dataset_release
from biodivergence_dataset.features import (
    COLUMN_DESCRIPTIONS,
    MISSING_INT,
    decode_row,
    encode_example,
    release_features,
)
from biodivergence_dataset.provenance import parse_source_md, read_sources
from builder import audit, release_stage

MIT_SOURCE = """# Tiny abstracts (test fixture)

- **Repository:** https://github.com/example/tiny-abstracts
- **License:** MIT ("Copyright (c) 2020 Example"). Code of that repo Apache 2.0 (not copied).
"""
UNLICENSED_SOURCE = """# Unlicensed claims

- **Repository:** https://github.com/example/unlicensed
- **License: none stated** (no LICENSE file). Treat as evaluation-only.
"""


def _header(release_dir) -> dict:
    return yaml.safe_load((release_dir / "README.md").read_text().split("---\n")[1])


@pytest.fixture(scope="module")
def small_release(tmp_path_factory):
    return write_small_release(tmp_path_factory.mktemp("release"))


@pytest.fixture
def sourced_release(tmp_path, monkeypatch):
    """A release whose split manifest names two local sources, each folder with a SOURCE.md, audited from tmp_path."""
    for name, text in (("tiny", MIT_SOURCE), ("unlicensed", UNLICENSED_SOURCE)):
        (tmp_path / "data" / name / "sub").mkdir(parents=True)
        (tmp_path / "data" / name / "SOURCE.md").write_text(text)
    root = write_small_release(tmp_path / "release")
    sources = ["pubmedqa:data/tiny/sub", "scifact_corpus:data/unlicensed@oncology", "pubtator:data/tiny"]
    (root / "split_manifest.json").write_text(json.dumps({"sources": {"abstracts": sources}}))
    monkeypatch.chdir(tmp_path)  # the manifest's paths are relative to where the build ran
    audit.run_stage(root, root, audit.AuditConfig(dpi=40))
    release_stage.run_stage(None, root)
    return root


def test_source_md_gives_title_upstream_and_the_licence_of_its_first_sentence(tmp_path):
    (tmp_path / "tiny").mkdir()
    (tmp_path / "tiny" / "SOURCE.md").write_text(MIT_SOURCE)
    source = parse_source_md(tmp_path / "tiny" / "SOURCE.md")
    assert (source.name, source.title, source.url) == ("tiny", "Tiny abstracts (test fixture)",
                                                       "https://github.com/example/tiny-abstracts")
    assert source.licences == ["MIT"]  # the repo's code licence in the next sentence is not the data's
    assert source.licence_terms.startswith('MIT ("Copyright')


def test_card_lists_source_datasets_with_licences_and_declares_other(sourced_release):
    assert [s.name for s in read_sources(sourced_release)] == ["tiny", "unlicensed"]
    header = _header(sourced_release)
    assert header["source_datasets"] == ["extended|tiny", "extended|unlicensed"]
    assert header["license"] == "other"
    assert header["multilinguality"] == ["monolingual"]
    text = (sourced_release / "README.md").read_text()
    assert "| Tiny abstracts (test fixture) (`tiny`) | https://github.com/example/tiny-abstracts | MIT |" in text
    assert "| Unlicensed claims (`unlicensed`) | https://github.com/example/unlicensed | none stated |" in text


def test_the_card_holds_no_local_path(sourced_release, tmp_path):
    text = (sourced_release / "README.md").read_text()
    assert str(tmp_path) not in text and "data/tiny" not in text


def test_one_shared_licence_is_declared_as_is(sourced_release):
    for name in ("tiny", "unlicensed"):
        (sourced_release.parent / "data" / name / "SOURCE.md").write_text(MIT_SOURCE.replace("# Tiny", f"# {name}"))
    release_stage.record_sources(sourced_release, json.loads((sourced_release / "split_manifest.json").read_text()))
    card.write_card(sourced_release, cardmeta.CardMeta(labels_license="mit"))
    header = _header(sourced_release)
    assert header["license"] == "mit" and "license_name" not in header and "license_link" not in header


def test_sources_are_kept_when_the_build_paths_are_gone(sourced_release, tmp_path):
    import shutil

    shutil.rmtree(tmp_path / "data")
    release_stage.record_sources(sourced_release, json.loads((sourced_release / "split_manifest.json").read_text()))
    card.write_card(sourced_release)
    assert _header(sourced_release)["source_datasets"] == ["extended|tiny", "extended|unlicensed"]


def test_data_fields_describe_every_column_once(small_release):
    assert set(COLUMN_DESCRIPTIONS) == set(release_features())
    text = (small_release / "README.md").read_text()
    section = text.split("## Data Fields")[1].split("\n## ")[0]
    lines = [line for line in section.splitlines() if line.startswith("- `")]
    assert [line.split("`")[1] for line in lines] == list(release_features())
    assert "- `dominant_confounder` (class label): Task 3 target" in section
    assert "- `divergence_axes` (list of class label):" in section
    assert "- `pub_year_a` (int32):" in section


def test_sizes_are_the_arrow_bytes_datasets_computes(small_release, tmp_path):
    from datasets import load_dataset_builder

    info = {c["config_name"]: c for c in _header(small_release)["dataset_info"]}["primary"]
    builder = load_dataset_builder(str(small_release), "primary", cache_dir=str(tmp_path))
    builder.download_and_prepare()  # datasets counts the bytes of every table it writes
    assert {s["name"]: s["num_bytes"] for s in info["splits"]} == {
        name: split.num_bytes for name, split in builder.info.splits.items()}
    parquet = sum(p.stat().st_size for p in (small_release / "primary").glob("*.parquet"))
    assert info["download_size"] == parquet
    assert info["dataset_size"] == sum(s["num_bytes"] for s in info["splits"]) != parquet


def test_missing_years_and_confounders_stay_integers_in_pandas(small_release):
    from datasets import load_dataset

    frame = load_dataset(str(small_release), "primary", split="train").to_pandas()
    for column in ("dominant_confounder", "pub_year_a", "pub_year_b"):
        assert frame[column].dtype.kind == "i", column
    assert MISSING_INT in set(frame["dominant_confounder"]) and set(frame["pub_year_b"]) == {MISSING_INT}
    assert set(frame["pub_year_a"]) == {2012}


def test_minus_one_reads_back_as_missing():
    example = make_example("pmid:1", "pmid:2", ontology.NO_CONFLICT, ())
    row = encode_example(example)
    assert (row["dominant_confounder"], row["pub_year_b"]) == (MISSING_INT, MISSING_INT)
    decoded = decode_row(row)
    assert (decoded["dominant_confounder"], decoded["pub_year_b"], decoded["pub_year_a"]) == (None, None, 2012)
    assert type(example).parse(decoded) == example


def test_a_null_of_an_older_release_still_reads_as_missing(tmp_path):
    import pyarrow as pa

    rows = [encode_example(e) for e in make_splits()["train"]]
    for row in rows:
        if row["dominant_confounder"] == MISSING_INT:
            row["dominant_confounder"] = None  # schema 1.1 stored a missing confounder as null
    pq.write_table(pa.Table.from_pylist(rows, schema=release_features().arrow_schema), tmp_path / "old.parquet")
    decoded = [decode_row(r) for r in pq.read_table(tmp_path / "old.parquet").to_pylist()]
    assert {r["dominant_confounder"] for r in decoded} == {None, "geography"}


def test_plots_have_titles_captions_and_alt_text_that_describe_them(sourced_release):
    plots = json.loads((sourced_release / "plots" / "plots.json").read_text())
    assert [p["file"] for p in plots] == ["plots/conflict_type_by_split.png", "plots/axes_by_split.png",
                                          "plots/component_sizes.png"]
    text = (sourced_release / "README.md").read_text()
    for plot in plots:
        assert "plots/" not in plot["alt"] and plot["caption"] and plot["title"]
        assert f"![{plot['alt']}]({plot['file']})" in text and f"*{plot['caption']}*" in text
    conflict = plots[0]["alt"]
    assert "primary/train (8 rows): no_conflict 3, contextual_contradiction 5." in conflict
    assert "The count axis is linear" in plots[0]["caption"]  # 1 to 5 examples: a log scale would hide nothing


# --- one card: card_meta.json and the card agree; the Hub's sections, generated from the build ---------------


def test_card_meta_and_the_card_agree(sourced_release):
    meta = json.loads((sourced_release / dataset_release.META_FILE).read_text())
    header = _header(sourced_release)
    shared = set(meta) & set(header)
    assert shared >= {"pretty_name", "language", "multilinguality", "task_categories", "task_ids",
                      "annotations_creators", "language_creators", "tags"}
    assert {k: meta[k] for k in shared} == {k: header[k] for k in shared}
    assert "license" not in meta and "source_datasets" not in meta  # derived from sources.json, in the card only
    assert header["license"] == "other"  # MIT and "none stated" sources beside cc-by-4.0 labels
    assert header["license_name"] == card.MIXED_LICENCE_NAME and header["license_link"] == "README.md#source-datasets"
    text = (sourced_release / "README.md").read_text()
    assert "\n## Source datasets\n" in text  # the anchor license_link points to
    assert f"this release's labels are under `{meta['labels_license']}`" in text
    assert meta["summary"] in text and f"**Release:** {meta['version']}" in text
    assert f"rests on at least {meta['min_support']} examples of" in text


def test_an_older_card_meta_reads_its_licence_as_the_labels_licence(small_release, tmp_path):
    import shutil

    rel = shutil.copytree(small_release, tmp_path / "old")
    old = {**json.loads((rel / dataset_release.META_FILE).read_text()), "license": "mit", "source_datasets": ["original"]}
    del old["labels_license"]
    (rel / dataset_release.META_FILE).write_text(json.dumps(old))
    assert cardmeta.CardMeta.load(rel).labels_license == "mit"
    card.write_card(rel)
    stored = json.loads((rel / dataset_release.META_FILE).read_text())
    assert stored["labels_license"] == "mit" and "license" not in stored and _header(rel)["license"] == "mit"


def _first_test_row(release_dir):
    path = min((release_dir / ontology.DEFAULT_CONFIG).glob("test-*.parquet"))
    return decode_row(pq.read_table(path).to_pylist()[0])


def test_the_card_shows_a_real_data_instance_with_abstracts_cut(tmp_path):
    from biodivergence_dataset.release import write_config

    splits = make_splits()
    splits["test"] = [e.model_copy(update={"abstract_a": "Background words of a long abstract. " * 30})
                      for e in splits["test"]]
    for config in ontology.CONFIGS:
        write_config(tmp_path, config, splits)
    card.write_card(tmp_path)
    text = (tmp_path / "README.md").read_text()
    section = text.split("## Dataset Structure")[1].split("\n## ")[0]
    row = json.loads(section.split("```json\n")[1].split("```")[0])
    first = _first_test_row(tmp_path)
    assert {k: row[k] for k in ("pair_id", "claim_a_text", "claim_b_text", "conflict_type", "divergence_axes")} == {
        k: first[k] for k in ("pair_id", "claim_a_text", "claim_b_text", "conflict_type", "divergence_axes")}
    assert row["abstract_a"].endswith(" …") and len(row["abstract_a"]) <= card.INSTANCE_ABSTRACT_CHARS + 2
    assert first["abstract_a"].startswith(row["abstract_a"][:-2]) and row["abstract_b"] == first["abstract_b"]
    assert set(row) == set(release_features())


def test_dataset_creation_names_the_annotators_the_rows_come_from(small_release, tmp_path):
    import shutil

    rel = shutil.copytree(small_release, tmp_path / "rel")
    (rel / "annotation_manifest.json").write_text(json.dumps({"annotator": ["heuristic"], "model": "heuristic-v1"}))
    (rel / "stats.json").write_text(json.dumps({"per_domain": {"total": {"abstracts": 41, "claims": 77,
                                                                         "candidates": 30, "labelled": 13}}}))
    card.write_card(rel)
    text = (rel / "README.md").read_text()
    creation = text.split("## Dataset Creation")[1].split("\n## ")[0]
    rows = sum(len(v) for v in make_splits().values())
    assert f"| `heuristic` | {rows} | {ontology.ANNOTATOR_KIND_DESCRIPTIONS['heuristic']} |" in creation
    assert "`llm`" not in creation and "Annotators run: `heuristic` (model `heuristic-v1`)" in creation
    assert "(41 kept)" in creation and "(77)" in creation and "(30 candidate pairs)" in creation
    assert "### Personal and Sensitive Information" in creation and "no patient-level records" in creation
    assert "produced by machine annotators (heuristic)" in text.split("## Limitations")[1]
    assert "## Citation" in text and "@article{hossain2026biodivergence" in text


def test_limitations_are_generated_from_the_measured_test_counts(small_release, tmp_path):
    import shutil

    rel = shutil.copytree(small_release, tmp_path / "rel")
    card.write_card(rel, cardmeta.CardMeta(min_support=30))
    limits = (rel / "README.md").read_text().split("## Limitations")[1].split("\n## ")[0]
    assert "No conflict type has 30 or more test examples (the test split has 3)" in limits
    assert f"`{ontology.CONTEXTUAL}` 2, " in limits and f"`{ontology.NO_CONFLICT}` 1, " in limits
    assert "`conflict_type/ctx_f1` (2 rows of contextual_contradiction)" in limits
    assert "`geography` 2" in limits and "`study_design` 0" in limits
    card.write_card(rel, cardmeta.CardMeta(min_support=2))
    limits = (rel / "README.md").read_text().split("## Limitations")[1].split("\n## ")[0]
    assert f"only `{ontology.CONTEXTUAL}` have at least 2 of the 3 test examples" in limits
    assert "`conflict_type/macro_f1` (1 rows of the rarest of" in limits and "ctx_f1" not in limits


def test_a_matched_test_that_was_not_written_is_explained(small_release, tmp_path):
    import shutil

    rel = shutil.copytree(small_release, tmp_path / "rel")
    matched = ontology.EXTRA_TEST_SPLITS[0]
    (rel / "split_manifest.json").write_text(json.dumps({matched: {
        "size": 3, "pool_size": 3, "tv_distance": 0.0, "tv_distance_before": 0.0, "written": False}}))
    card.write_card(rel)
    splits = (rel / "README.md").read_text().split("## Splits")[1].split("\n## ")[0]
    assert f"There is no `{matched}` split" in splits and "row for row" in splits
    assert f"| {matched} |" not in splits


def test_the_gold_table_shows_each_finding_readers_sets_with_their_n():
    """A build that labels with the finding reader shows its out-of-fold Evidence Inference and same-claim
    scores (from the report shipped with its weights) under the gold table of the report and the card."""
    from builder.annotators import parse_spec
    from builder.goldcheck_stage import reader_reports
    from builder.goldreport import READER_ROWS, goldcheck_table

    readers = reader_reports([parse_spec("reader")])
    report = readers["reader"]
    table = goldcheck_table({"min_kappa_gain": 0.15, "scores": {}, "readers": readers})
    ei, hv = report["evidence_inference_findings"], report["healthver_same_claim"]
    for name, label in READER_ROWS.items():  # the reader as trained and as the annotator asks, the floor
        assert f"| {label} | {ei[name]['accuracy']:.3f} | {ei[name]['macro_f1']:.3f} | {ei[name]['n']} |" in table
    assert f"κ {hv['kappa']:.3f} vs negation rule {hv['rule_kappa']:.3f}" in table and f"n = {hv['pairs']} pairs" in table
    assert reader_reports([parse_spec("frames")]) == {}


def test_card_refuses_to_replace_a_readme_it_did_not_write(tmp_path):
    """A folder holding the user's own README.md and no release file list is not a release card: the card is not
    rendered over it, and the README is byte for byte what it was."""
    root = write_small_release(tmp_path / "release")
    (root / "release_files.json").unlink()
    (root / "README.md").write_text("# my notes\n", encoding="utf-8")
    with pytest.raises(ValueError, match="was not written by biodivergence card"):
        card.write_card(root)
    assert (root / "README.md").read_text(encoding="utf-8") == "# my notes\n"


def test_a_card_stopped_before_its_file_list_fails_validation(tmp_path, monkeypatch):
    """The card is written before the file list: stopped between the two (Ctrl-C), the card describes data the
    list does not, and validate says so instead of passing a card with stale numbers."""
    from biodivergence_dataset.validate import validate_release

    root = write_small_release(tmp_path / "release")
    assert validate_release(root, min_support=1).ok
    before = (root / "README.md").read_text(encoding="utf-8")
    dataset_release.write_config(root, "primary", make_splits(offset=100))  # the data changes; the card is re-rendered

    def interrupted(_):
        raise KeyboardInterrupt

    monkeypatch.setattr(card, "write_file_manifest", interrupted)
    with pytest.raises(KeyboardInterrupt):
        card.write_card(root)
    assert (root / "README.md").read_text(encoding="utf-8") != before  # the card was written, the list not
    report = validate_release(root, min_support=1)
    assert not report.ok and any("changed" in p or "since" in p for p in report.problems), report.problems


def test_the_card_lists_only_the_files_the_release_format_declares(tmp_path, capsys):
    """A stray file at a release's top level (the user's notes, a key file) is never adopted into the file list,
    so push never uploads it; validate names it."""
    from biodivergence_cli.main import main
    from biodivergence_dataset.hub import release_files
    from biodivergence_dataset.validate import validate_release

    root = write_small_release(tmp_path / "release")
    (root / "notes.txt").write_text("my notes\n", encoding="utf-8")
    (root / "provenance.json").write_text("{}\n", encoding="utf-8")
    assert main(["card", "--release", str(root)]) == 0
    listed = json.loads((root / dataset_release.FILES_MANIFEST).read_text(encoding="utf-8"))["files"]
    assert "notes.txt" not in listed and "provenance.json" not in listed
    assert any(name.endswith(".parquet") for name in listed)
    uploaded = {path for path, _ in release_files(root)}
    assert "notes.txt" not in uploaded and "provenance.json" not in uploaded and "README.md" in uploaded
    problems = validate_release(root, min_support=1).problems
    assert [p for p in problems if "not part of the release" in p] == [
        (f"{root / 'notes.txt'}: not part of the release (not in release_files.json): it would not be published; "
        "remove it, or move it out of the release folder"),
        (f"{root / 'provenance.json'}: not part of the release (not in release_files.json): it would not be "
        "published; remove it, or move it out of the release folder")]
    (root / "notes.txt").unlink()
    (root / "provenance.json").unlink()
    assert validate_release(root, min_support=1).ok


def test_a_number_changed_by_hand_in_the_cards_prose_fails_validation(tmp_path):
    """The header may be right while the prose lies: validate renders the card from the data and names the first
    line that differs."""
    from biodivergence_dataset.validate import validate_release

    root = write_small_release(tmp_path / "release")
    assert validate_release(root, min_support=1).ok
    readme = root / "README.md"
    text = readme.read_text(encoding="utf-8")
    n, line, edited = cases.change_a_number_in_the_card(root)
    assert edited != line
    problems = [p for p in validate_release(root, min_support=1).problems if "the release's data gives" in p]
    assert problems == [(f"{readme}: line {n} reads {edited[:100]!r} where the release's data gives "
                        f"{line[:100]!r}; a card edited by hand or stale: re-run `biodivergence card` (it renders the "
                        "card from the data and card_meta.json)")]
    readme.write_text(text, encoding="utf-8")
    assert validate_release(root, min_support=1).ok
