"""Streaming exact de-duplication: the records wait on disk, the result is the in-order merge, memory stays flat."""

from __future__ import annotations

import gzip
import json
import tracemalloc
import xml.etree.ElementTree as ET

from repo_paths import SHARED_DATA

from biodivergence_dataset import io
from biodivergence_dataset.records import Abstract
from builder import ingest as ingest_stage
from builder.dedup import Deduplicator, Draft
from builder.ingest import CONFLICTS_FILE, PARTIAL_DIR, IngestConfig, run_stage
from builder.sources import SourceSpec

NCBIUTILS = SHARED_DATA / "pubmed_xml_ncbiutils"  # .xml and .xml.gz twins (cross-file duplicates), DeleteCitation blocks
CONFIG = IngestConfig(progress=False, domain="genomics", min_chars=1)


def _xml_elements(spec: SourceSpec):
    """``(tag, element)`` of every top-level article and DeleteCitation, in the order the reader visits the files."""
    for path in spec.files():
        data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        yield from ((el.tag, el) for el in ET.fromstring(data))


def _expected(stream) -> dict:
    """What de-duplication by PMID alone must give: ``stream`` is ``(pmid, text or None)`` or ``("delete", pmids)``."""
    alive: dict[str, list[str]] = {}  # pmid -> texts of its copies, in first-seen order
    counts = {"seen": 0, "dropped_no_abstract": 0, "duplicates": 0, "dropped_deleted_citation": 0}
    for pmid, payload in stream:
        if pmid == "delete":
            for gone in [p for p in alive if p in payload]:  # one merged record each
                del alive[gone]
                counts["dropped_deleted_citation"] += 1
            continue
        counts["seen"] += 1
        if not payload:
            counts["dropped_no_abstract"] += 1
        elif pmid in alive:
            counts["duplicates"] += 1
            alive[pmid].append(payload)
        else:
            alive[pmid] = [payload]
    return {"alive": alive, **counts}


def test_streamed_dedup_on_a_real_mixed_input(tmp_path):
    """The ncbiutils folder (duplicates across files) between a record a DeleteCitation withdraws and a record
    whose PMID names a different text: counts, kept records, merges, exclusions and order as derived from the XML."""
    spec = SourceSpec.parse(f"pubmed_xml:{NCBIUTILS}")
    stream = [("delete", {p.text for p in el.iter("PMID")}) if tag == "DeleteCitation"
              else (el.findtext("MedlineCitation/PMID"),
                    "".join("".join(a.itertext()) for a in el.iter("AbstractText")).strip() or None)
              for tag, el in _xml_elements(spec) if tag in ("PubmedArticle", "DeleteCitation")]
    withdrawn = min(next(ids for pmid, ids in stream if pmid == "delete"))
    twice = next(pmid for pmid, text in stream if pmid != "delete" and text and
                 sum(p == pmid for p, _ in stream) > 1)  # an article in two files
    before, after = tmp_path / "a_before.jsonl", tmp_path / "z_after.jsonl"
    before.write_text(json.dumps({"pmid": withdrawn, "text": "A citation that a later update file withdraws."}) + "\n")
    after.write_text(json.dumps({"pmid": twice, "text": "Tamoxifen adherence fell among older breast cancer "
                                                         "patients in a regional registry."}) + "\n")
    expected = _expected([(withdrawn, "text"), *stream, (twice, "other")])
    copies = expected["alive"].pop(twice)  # its XML copies merged, then excluded with the jsonl record

    stats = run_stage([f"jsonl:{before}", f"pubmed_xml:{NCBIUTILS}", f"jsonl:{after}"], tmp_path / "out", CONFIG)
    kept = list(io.read_records(tmp_path / "out", Abstract))

    assert stats["seen"] == expected["seen"] and stats["kept"] == len(expected["alive"])
    assert stats["dropped_no_abstract"] == expected["dropped_no_abstract"] > 0
    assert stats["dropped_deleted_citation"] == expected["dropped_deleted_citation"] == 1
    duplicates = sum(v for k, v in stats.items() if k.startswith("dropped_duplicate_"))
    assert duplicates == expected["duplicates"] - 1 > 0  # the jsonl copy of ``twice`` is a conflict, not a duplicate
    assert stats["dropped_identifier_conflict"] == 2 and len(copies) == 3
    assert [a.pmid for a in kept] == list(expected["alive"])  # first-seen order
    assert [len(a.merged_from) for a in kept] == [len(texts) for texts in expected["alive"].values()]
    rows = [json.loads(line) for line in (tmp_path / "out" / CONFLICTS_FILE).read_text().splitlines()]
    assert [row["identifier"] for row in rows] == [f"pmid:{twice}"] * 2
    assert rows[1]["text"].startswith("Tamoxifen") and not rows[0]["text"].startswith("Tamoxifen")
    assert not (tmp_path / "out" / PARTIAL_DIR).exists()


def _draft(i: int, text: str, **ids) -> Draft:
    return Draft(source="t", path="p", position=i, spec="s", title="", text=text, sections=[], domain="amr",
                 merged_from=[f"t:p:{i}"], **ids)


def test_same_identifier_different_text_is_excluded_from_the_spilled_store(tmp_path):
    """Two texts under one DOI: both excluded and reported, a third is too; the store's file goes with ``close``."""
    with Deduplicator(tmp_path) as dedup:
        assert (tmp_path / Deduplicator.SPILL_FILE).exists()
        dedup.add(_draft(1, "Colistin resistance rose in Greek intensive care units over the decade", doi="10.1/a"))
        dedup.add(_draft(2, "An unrelated abstract about malaria vaccine uptake in rural districts", pmid="9"))
        clash = dedup.add(_draft(3, "Tamoxifen adherence fell among older breast cancer patients", doi="10.1/a"))
        assert (clash.reason, clash.conflict_key) == ("identifier_conflict", "doi:10.1/a")
        assert [(d.position, reason) for d, reason in clash.absorbed] == [(1, "identifier_conflict")]
        again = dedup.add(_draft(4, "Colistin resistance rose in Greek intensive care units over the decade",
                                 doi="10.1/a", pmid="9"))
        assert again.reason == "identifier_conflict" and not again.absorbed
        assert [d.position for d in dedup] == [2] and dedup.identifier_conflicts == 2
    assert not (tmp_path / Deduplicator.SPILL_FILE).exists()


def _long_text(i: int, words: int = 600) -> str:
    return f"Record {i}: " + " ".join(f"w{(i * 7919 + j * 104729) % 100003}" for j in range(words))


def _peak(run) -> int:
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_dedup_memory_does_not_grow_with_the_corpus():
    """Python-side peak while adding and streaming back N vs 4N long records (~4 kB each): flat, where holding the
    Drafts grows ~4x. (SQLite's own page cache is outside tracemalloc; it is capped by ``cache_size``.)"""
    def run(n: int) -> None:
        with Deduplicator() as dedup:
            for i in range(n):
                dedup.add(_draft(i, _long_text(i // 2), pmid=str(i // 2)))  # every other record a copy
            assert sum(1 for _ in dedup) == (n + 1) // 2

    small, large = _peak(lambda: run(150)), _peak(lambda: run(600))
    held = 600 * len(_long_text(0))  # what 4N Drafts' texts alone would take
    assert large < 1.5 * small and large - small < held / 10


def test_ingest_streams_records_one_batch_at_a_time(tmp_path, monkeypatch):
    """The whole stage consumed record by record holds at most one signature batch of records."""
    monkeypatch.setattr(ingest_stage, "SIGNATURE_BATCH", 50)

    config = CONFIG.model_copy(update={"near_duplicates": "off"})  # the MinHash index is per-record state
    for n in (10, 200, 800):
        with (tmp_path / f"{n}.jsonl").open("w") as fh:
            fh.writelines(json.dumps({"pmid": str(i), "text": _long_text(i)}) + "\n" for i in range(n))

    def run(n: int) -> None:
        stats = io.StageStats("ingest", unit="abstracts")
        kept = sum(1 for _ in ingest_stage.ingest([SourceSpec.parse(f"jsonl:{tmp_path}/{n}.jsonl")], config, stats))
        assert kept == n

    run(10)  # imports and caches outside the measurement
    small, large = _peak(lambda: run(200)), _peak(lambda: run(800))
    assert large < 1.5 * small
