"""Bad input: truncated XML / gzip / JSON, invalid bytes, empty files, huge abstracts, records without id.

Every fault names the file and the record position; records before (and, where the format allows,
after) the fault are kept; ``--strict`` stops the run before anything is written. The broken files
are derived at test time from the real files in ../shared/data.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from repo_paths import SHARED_DATA

from biodivergence_cli.main import main as cli_main
from biodivergence_dataset import io
from builder.ingest import IngestConfig, IngestError, run_stage
from builder.sources import Fault, RawRecord, SourceSpec

PUBMED_XML = SHARED_DATA / "pubmed_xml_ncbiutils" / "pubmed.xml"  # 5 articles
PUBMED_GZ = SHARED_DATA / "pubmed_xml_ncbiutils" / "pubmed22n1313.xml.gz"  # 4 articles + DeleteCitation
CONFIG = IngestConfig(domain="genomics", progress=False)  # pinned: these tests are about faults, not domains


def read(spec: str) -> tuple[list[RawRecord], list[Fault]]:
    out = list(SourceSpec.parse(spec).items())
    return [i for i in out if isinstance(i, RawRecord)], [i for i in out if isinstance(i, Fault)]


def article_offsets(data: bytes) -> list[int]:
    return [i for i in range(len(data)) if data.startswith(b"<PubmedArticle>", i)]


def test_truncated_xml_keeps_earlier_records(tmp_path):
    data = PUBMED_XML.read_bytes()
    third = article_offsets(data)[2]
    path = tmp_path / "cut.xml"
    path.write_bytes(data[:third + 500])
    recs, faults = read(f"pubmed_xml:{path}")
    assert [r.pmid for r in recs] == ["35196497", "33278872"]
    (fault,) = faults
    assert fault.reason == "truncated" and fault.position == 3 and str(path) in str(fault)
    assert "line" in fault.message


def test_xml_cut_between_articles_is_reported(tmp_path):
    data = PUBMED_XML.read_bytes()
    path = tmp_path / "cut.xml"
    path.write_bytes(data[:article_offsets(data)[3]])
    recs, faults = read(f"pubmed_xml:{path}")
    assert len(recs) == 3 and [f.reason for f in faults] == ["truncated"]


def test_truncated_gzip_keeps_earlier_records(tmp_path):
    data = PUBMED_GZ.read_bytes()
    path = tmp_path / "cut.xml.gz"
    path.write_bytes(data[: len(data) * 2 // 3])
    recs, faults = read(f"pubmed_xml:{path}")
    full, _ = read(f"pubmed_xml:{PUBMED_GZ}")
    assert 1 <= len(recs) < len(full) and [r.pmid for r in recs] == [r.pmid for r in full[:len(recs)]]
    (fault,) = faults
    assert fault.reason == "truncated" and str(path) in str(fault)


def test_invalid_bytes_cost_one_record(tmp_path):
    data = PUBMED_XML.read_bytes()
    second = article_offsets(data)[1]
    at = data.index(b"<AbstractText", second) + 40
    path = tmp_path / "bad.xml"
    path.write_bytes(data[:at] + b"\xff\xfe" + data[at:])
    recs, faults = read(f"pubmed_xml:{path}")
    assert len(recs) == 4 and "33278872" not in {r.pmid for r in recs}
    (fault,) = faults
    assert (fault.reason, fault.position) == ("invalid_bytes", 2)

    text = (SHARED_DATA / "ncbi_disease_corpus" / "NCBIdevelopset_corpus.txt").read_bytes()
    cut = text.index(b"|a|") + 20
    path = tmp_path / "bad.txt"
    path.write_bytes(text[:cut] + b"\xc3\x28" + text[cut:])
    recs, faults = read(f"pubtator:{path}")
    assert len(recs) == 99 and [(f.reason, f.position) for f in faults] == [("invalid_bytes", 1)]


def test_empty_file_and_record_without_id(tmp_path):
    (tmp_path / "empty.xml").write_bytes(b"")
    recs, faults = read(f"pubmed_xml:{tmp_path / 'empty.xml'}")
    assert recs == [] and [f.reason for f in faults] == ["empty_file"]

    data = PUBMED_XML.read_bytes()
    first = article_offsets(data)[0]
    start = data.index(b"<PMID", first)
    end = data.index(b"</PMID>", start) + len(b"</PMID>")
    path = tmp_path / "noid.xml"
    path.write_bytes(data[:start] + data[end:])
    recs, faults = read(f"pubmed_xml:{path}")
    assert len(recs) == 4 and [(f.reason, f.position) for f in faults] == [("missing_id", 1)]

    medline = tmp_path / "noid.txt"
    medline.write_text("TI  - A title\nAB  - An abstract without a PMID line at all.\n\nPMID- 42\nTI  - T\n")
    recs, faults = read(f"medline:{medline}")
    assert [r.pmid for r in recs] == ["42"] and [(f.reason, f.position) for f in faults] == [("missing_id", 1)]


def test_truncated_json_keeps_earlier_records(tmp_path):
    text = (SHARED_DATA / "pubmedqa_pqal" / "ori_pqal.json").read_text()
    path = tmp_path / "cut.json"
    path.write_text(text[: len(text) // 2])
    recs, faults = read(f"pubmedqa:{path}")
    assert 400 < len(recs) < 600
    (fault,) = faults
    assert fault.reason == "malformed" and fault.position == len(recs) + 1 and str(path) in str(fault)


def _huge_csv(tmp_path: Path) -> Path:
    rows = (SHARED_DATA / "cord19_metadata_sample_coronawhy" / "test_metadata.csv").read_text(encoding="utf-8-sig")
    header, first, rest = rows.split("\n", 2)
    huge = ",".join(["x1", "", "PMC", "A huge abstract", "", "", "", "", '"' + "word " * 210_000 + '"'])
    path = tmp_path / "huge.csv"
    path.write_text(f"{header}\n{first}\n{huge}\n{rest}", encoding="utf-8")
    return path


def test_huge_abstract_is_a_fault_and_strict_stops(tmp_path):
    path = _huge_csv(tmp_path)
    stats = run_stage([f"cord19:{path}"], tmp_path / "out", CONFIG)
    assert stats["dropped_too_long"] == 1
    assert any("record 2" in f and "max_chars" in f and str(path) in f for f in stats["faults"])
    assert stats["seen"] == 53 and stats["seen"] == stats["kept"] + stats["dropped_total"]

    with pytest.raises(IngestError, match=r"huge\.csv: record 2: .*max_chars"):
        run_stage([f"cord19:{path}"], tmp_path / "strict", CONFIG.model_copy(update={"strict": True}))
    assert not io.is_done(tmp_path / "strict") and not list((tmp_path / "strict").glob("*.parquet"))


def test_strict_run_leaves_a_previous_output_untouched(tmp_path):
    good = SHARED_DATA / "pubmed_xml_ncbiutils" / "double.xml"
    out = tmp_path / "out"
    first = run_stage([f"pubmed_xml:{good}"], out, CONFIG)
    bad = tmp_path / "bad.xml.gz"
    bad.write_bytes(gzip.compress(PUBMED_XML.read_bytes())[:3000])
    with pytest.raises(IngestError, match="bad.xml.gz: record"):
        run_stage([f"pubmed_xml:{good}", f"pubmed_xml:{bad}"], out, CONFIG.model_copy(update={"strict": True}))
    assert io.is_done(out) and io.read_stats(out) == json.loads(json.dumps(first))


def test_cli_reports_fault_and_exit_code(tmp_path, capsys):
    path = _huge_csv(tmp_path)
    code = cli_main(["ingest", f"cord19:{path}", "--out", str(tmp_path / "o"), "--strict", "--domain", "amr"])
    assert code == 1 and "huge.csv: record 2" in capsys.readouterr().err
    code = cli_main(["ingest", f"cord19:{path}", "--out", str(tmp_path / "o"), "--domain", "amr"])
    assert code == 0 and io.is_done(tmp_path / "o")
    assert json.loads(capsys.readouterr().out)["dropped_too_long"] == 1
