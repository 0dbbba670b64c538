"""An honest card: source datasets and licences, no local paths, Data Fields, sizes, integer columns, plots."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
import yaml
from release_factory import make_example, make_splits, write_small_release

from biodivergence_dataset import card, ontology
from biodivergence_dataset.features import (
    COLUMN_DESCRIPTIONS,
    MISSING_INT,
    decode_row,
    encode_example,
    release_features,
)
from biodivergence_dataset.provenance import parse_source_md, read_sources
from builder import audit, release

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
    release.run_stage(None, root)
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
    release.record_sources(sourced_release, json.loads((sourced_release / "split_manifest.json").read_text()))
    card.write_card(sourced_release, card.CardMeta(license="mit"))
    assert _header(sourced_release)["license"] == "mit"


def test_sources_are_kept_when_the_build_paths_are_gone(sourced_release, tmp_path):
    import shutil

    shutil.rmtree(tmp_path / "data")
    release.record_sources(sourced_release, json.loads((sourced_release / "split_manifest.json").read_text()))
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
    assert "logarithmic" in plots[0]["caption"]
