"""Dropped records kept with their reason (issue 13): the ingest stage writes every abstract it drops to
``excluded-*.parquet``, as many per reason as ``stats.json`` counts, without touching its output or fingerprint.

The input is real: the ncbiutils PubMed XML folder (cross-file duplicates, a record without abstract, a
DeleteCitation) plus, built at test time from its records, a truncated copy of one file, a citation under a
PMID that a DeleteCitation withdraws, a copy of one abstract with one word changed and no identifiers (a near duplicate), a too-short record, and one PMID
filed with another real abstract's text (a PubMedQA context): an identifier conflict.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from repo_paths import SHARED_DATA

from biodivergence_dataset import io
from biodivergence_dataset.records import Abstract
from builder.ingest import IngestConfig, run_stage
from builder.normalise import Normaliser
from builder.sources import Deletion, RawRecord, SourceSpec

NCBIUTILS = SHARED_DATA / "pubmed_xml_ncbiutils"
PUBMEDQA = SHARED_DATA / "pubmedqa_pqal" / "ori_pqal.json"
CONFIG = IngestConfig(progress=False, domain="genomics", near_duplicates="drop", shard_size=2)  # several shards
DUPLICATE = "duplicate_"


def _xml_items() -> list:
    return list(SourceSpec.parse(f"pubmed_xml:{NCBIUTILS}").items())


def _text(raw: RawRecord) -> str:
    return " ".join(text for _, text in raw.sections)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict:
    """The sources, and the real records the built rows came from."""
    folder = tmp_path_factory.mktemp("inputs")
    items = _xml_items()
    records = [i for i in items if isinstance(i, RawRecord)]
    withdrawn = min(next(i for i in items if isinstance(i, Deletion)).pmids)
    pmids = Counter(r.pmid for r in records)
    single = [r for r in records if pmids[r.pmid] == 1 and len(_text(r)) > 200]
    clashing, copied = single[0], single[1]
    words = _text(copied).split()
    words[len(words) // 2] = "altered"
    first, second = (" ".join(r["CONTEXTS"]) for r in list(json.loads(PUBMEDQA.read_text(encoding="utf-8")).values())[:2])
    before = folder / "before.jsonl"  # a citation that a later DeleteCitation withdraws
    before.write_text(json.dumps({"pmid": withdrawn, "text": second}) + "\n", encoding="utf-8")
    rows = [{"pmid": clashing.pmid, "title": clashing.title, "text": first},
            {"text": " ".join(words)},
            {"pmid": "1", "text": _text(copied)[:30]}]
    extra = folder / "extra.jsonl"
    extra.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    cut = folder / "cut.xml"
    data = (NCBIUTILS / "pubmed.xml").read_bytes()
    cut.write_bytes(data[:data.index(b"<PubmedArticle>", data.index(b"<PubmedArticle>") + 1) + 500])
    return {"sources": [f"jsonl:{before}", f"pubmed_xml:{NCBIUTILS}", f"pubmed_xml:{cut}", f"jsonl:{extra}"],
            "clashing": clashing, "conflict_text": first}


@pytest.fixture(scope="module")
def stage(inputs, tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("run") / "abstracts"
    return out, run_stage(inputs["sources"], out, CONFIG)


def test_every_drop_is_kept_once_with_its_reason(stage):
    out, stats = stage
    rows = list(io.read_exclusions(out))
    assert Counter(row.reason for row in rows) == io.dropped_counts(stats)
    assert {"truncated", "no_abstract", "too_short", "deleted_citation", "identifier_conflict",
            "near_duplicate"} <= set(io.dropped_counts(stats))
    assert any(reason.startswith(DUPLICATE) for reason in io.dropped_counts(stats))
    assert stats["seen"] == stats["kept"] + len(rows) == stats["kept"] + stats[io.DROPPED_TOTAL]
    assert all(row.record_id for row in rows)


def test_duplicates_name_the_record_they_merged_into(stage):
    out, _ = stage
    rows = list(io.read_exclusions(out))
    merged = [a.merged_from for a in io.read_records(out, Abstract)]
    merged += [row.record.get("merged_from", []) for row in rows if not row.reason.startswith(DUPLICATE)]
    duplicates = [row for row in rows if row.reason.startswith(DUPLICATE)]
    assert duplicates
    for row in duplicates:  # the dropped copy and the record it joined end up listed in one record
        assert any({row.record_id, row.detail["merged_into"]} <= set(origins) for origins in merged)


def test_an_identifier_with_two_texts_is_counted_and_both_records_kept_apart(stage, inputs):
    out, stats = stage
    clashing = inputs["clashing"]
    rows = [row for row in io.read_exclusions(out) if row.reason == "identifier_conflict"]
    assert stats["dropped_identifier_conflict"] == len(rows) == 2
    xml_row, jsonl_row = sorted(rows, key=lambda row: row.record["source"] != clashing.source)
    normalised = Normaliser().abstract
    assert (xml_row.record_id, xml_row.record["text"]) == (clashing.origin, normalised(clashing.title,
                                                                                      clashing.sections)[1])
    assert jsonl_row.record["text"] == normalised("", [(None, inputs["conflict_text"])])[1]
    assert jsonl_row.record["pmid"] == clashing.pmid
    assert xml_row.detail == {"identifier": f"pmid:{clashing.pmid}", "conflicts_with": jsonl_row.record_id}
    assert jsonl_row.detail == {"identifier": f"pmid:{clashing.pmid}", "conflicts_with": xml_row.record_id}
    assert clashing.pmid not in {a.pmid for a in io.read_records(out, Abstract)}  # nothing merged


def test_exclusions_stay_out_of_the_output_and_its_fingerprint(stage):
    out, stats = stage
    assert io.shard_paths(out) and all(p.name.startswith("part-") for p in io.shard_paths(out))
    assert io.shard_paths(out, io.EXCLUDED_PREFIX)
    assert sum(1 for _ in io.read_records(out, Abstract)) == stats["kept"]
    assert io.done_fingerprint(out) == io.content_fingerprint(out) == io.content_fingerprint(
        out, [out / io.MANIFEST_FILE, *io.shard_paths(out)])


def test_resume_and_rerun_do_not_duplicate_exclusions(stage, inputs):
    out, stats = stage
    before = list(io.read_exclusions(out))
    assert run_stage(inputs["sources"], out, CONFIG) == stats  # resumed: nothing rewritten
    assert list(io.read_exclusions(out)) == before
    changed = run_stage(inputs["sources"][:-1], out, CONFIG)  # without the built rows: fewer exclusion shards
    after = list(io.read_exclusions(out))
    assert Counter(row.reason for row in after) == io.dropped_counts(changed)  # no row left from the first run
    assert not {"near_duplicate", "too_short", "identifier_conflict"} & set(io.dropped_counts(changed))
    assert run_stage(inputs["sources"], out, CONFIG) == stats and list(io.read_exclusions(out)) == before


def test_a_stats_object_with_a_sink_refuses_a_drop_without_its_record(tmp_path):
    with io.ExclusionWriter(tmp_path) as sink:
        stats = io.StageStats("t", exclusions=sink)
        with pytest.raises(ValueError, match="needs its one record"):
            stats.drop("too_short")
        stats.drop("too_short", record={"text": "x"}, record_id="r1", detail={"chars": 1})
    assert stats.dropped == {"too_short": 1}
    assert list(io.read_exclusions(tmp_path)) == [io.Exclusion("too_short", "r1", {"text": "x"}, {"chars": 1})]
