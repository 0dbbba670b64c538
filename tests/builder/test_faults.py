"""Regression tests of the fault probe (issue 14): bad input never crashes and never loses data silently.

Each test builds its bad input with ``tests/support/fault_cases.py`` (from the real files in ../shared/data)
and checks the promised behaviour; ``benchmarks/faults.py`` runs the same cases into the fault table.
"""

from __future__ import annotations

import json
import logging
import os
import stat

import fault_cases as cases
import pytest

from biodivergence_cli.main import main as cli_main
from biodivergence_dataset import io
from biodivergence_dataset.records import Abstract, Example
from builder.ingest import CONFLICTS_FILE, IngestConfig, run_stage
from builder.sources import Fault, RawRecord, SourceSpec

CONFIG = IngestConfig(domain="oncology", progress=False)


def read(spec: str) -> tuple[list[RawRecord], list[Fault]]:
    out = list(SourceSpec.parse(spec).items())
    return [i for i in out if isinstance(i, RawRecord)], [i for i in out if isinstance(i, Fault)]


# ---------------------------------------------------------------------------------------------
# 1. no abstract survives ingest: a finished stage with 0 records, not an IndexError


@pytest.mark.parametrize("make, fmt", [(cases.empty_jsonl, "jsonl"), (cases.half_article_gz, "pubmed_xml")])
def test_ingest_with_nothing_left_finishes_empty(tmp_path, capsys, make, fmt):
    path = make(tmp_path)
    out = tmp_path / "abstracts"
    assert cli_main(["ingest", f"{fmt}:{path}", "--out", str(out), "--domain", "oncology"]) == 0
    stats = io.read_stats(out)
    assert io.is_done(out) and stats["kept"] == 0 and list(io.read_records(out, Abstract)) == []
    assert len(stats["faults"]) == 1 and str(path) in stats["faults"][0]


# ---------------------------------------------------------------------------------------------
# 2. a truncated Europe PMC JSON keeps the records before the break


def test_truncated_europepmc_keeps_complete_records(tmp_path):
    path = cases.truncated_epmc(tmp_path, keep=10)
    records, faults = read(f"europepmc_json:{path}")
    assert len(records) == 10 and [r.position for r in records] == list(range(1, 11))
    (fault,) = faults
    assert fault.position == 11 and fault.reason == "malformed" and "after record 10" in fault.message
    stats = run_stage([f"europepmc_json:{path}"], tmp_path / "abstracts", CONFIG)
    assert stats["seen"] == 11 and stats["kept"] > 0 and stats["dropped_malformed"] == 1


# ---------------------------------------------------------------------------------------------
# 3. an unclosed tag costs one article, not the next one too


def test_unclosed_tag_costs_one_article(tmp_path):
    records, faults = read(f"pubmed_xml:{cases.unclosed_title_xml(tmp_path)}")
    assert [r.pmid for r in records] == ["35196497", "33278872", "30158200", "151222"]
    (fault,) = faults
    assert fault.position == 3 and fault.reason == "malformed"


# ---------------------------------------------------------------------------------------------
# 4. one identifier, two texts: an identifier conflict, both records excluded and listed


def test_same_pmid_different_text_is_a_conflict(tmp_path, caplog):
    a, b = cases.conflicting_jsonl(tmp_path, n=3)
    out = tmp_path / "abstracts"
    with caplog.at_level(logging.WARNING, logger="builder.ingest"):
        stats = run_stage([f"jsonl:{a}", f"jsonl:{b}"], out, CONFIG)
    ids = ["pmid:900000", "pmid:900001", "pmid:900002"]
    assert stats["identifier_conflicts"] == 3 and stats["identifier_conflict_ids"] == ids
    assert stats["kept"] == 0 and io.dropped_counts(stats) == {"identifier_conflict": 6}
    excluded = list(io.read_jsonl(out / CONFLICTS_FILE))
    assert sorted(r["identifier"] for r in excluded) == sorted(ids * 2)
    assert {r["reason"] for r in excluded} == {"identifier_conflict"} and all(r["text"] for r in excluded)
    assert "pmid:900000" in caplog.text and "identifier_conflict" in caplog.text


def test_same_pmid_same_text_still_merges(tmp_path):
    a, _ = cases.conflicting_jsonl(tmp_path, n=3)
    stats = run_stage([f"jsonl:{a}", f"jsonl:{a}"], tmp_path / "abstracts", CONFIG)
    assert stats["kept"] == 3 and io.dropped_counts(stats) == {"duplicate_pmid": 3} and stats["identifier_conflicts"] == 0


# ---------------------------------------------------------------------------------------------
# headerless TSV / CSV: columns by number, header=false


def test_headerless_tsv_mapped_by_column_number(tmp_path):
    path = cases.headerless_tsv(tmp_path, rows=5)
    for spec in (f"tsv[pmid=0,title=1,text=2]:{path}", f"tsv[pmid=0,text=2,header=false]:{path}"):
        records, faults = read(spec)
        assert faults == [] and len(records) == 5 and all(r.pmid and r.sections for r in records)
    with_header = read(f"tsv[pmid=0,text=2,header=true]:{path}")[0]
    assert len(with_header) == 4  # the first row taken as the header, as asked


def test_headerless_table_rejects_column_names(tmp_path):
    path = cases.headerless_tsv(tmp_path, rows=2)
    (fault,) = read(f"tsv[text=abstract,header=false]:{path}")[1]
    assert "0-based number" in fault.message
    with pytest.raises(ValueError, match="header='maybe'"):
        read(f"tsv[text=2,header=maybe]:{path}")


# ---------------------------------------------------------------------------------------------
# 10. files written atomically get the umask's mode


def test_atomic_writes_follow_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        text = io.write_text_atomic(tmp_path / "a.txt", "x")
        os.umask(0o027)
        data = io.write_json_atomic(tmp_path / "b.json", {})
    finally:
        os.umask(old)
    assert stat.S_IMODE(text.stat().st_mode) == 0o644
    assert stat.S_IMODE(data.stat().st_mode) == 0o640


# ---------------------------------------------------------------------------------------------
# 5. validate compares shards and rows per split with dataset_info; a broken Parquet file is named


def test_validate_fails_on_missing_shard(tmp_path, capsys):
    release_dir = cases.release_missing_shard(tmp_path / "release")
    assert cli_main(["validate", "--release", str(release_dir)]) == 1
    out = capsys.readouterr().out
    assert "pairlevel/train declares 8 rows but the Parquet files hold 4" in out
    assert "missing ['train-00001-of-00002.parquet']" in out


def test_validate_names_truncated_parquet(tmp_path, capsys):
    release_dir = cases.release_truncated_shard(tmp_path / "release")
    assert cli_main(["validate", "--release", str(release_dir)]) == 1
    out = capsys.readouterr().out
    assert f"{release_dir}/pairlevel/train-00000-of-00002.parquet: not a readable Parquet file" in out


def test_validate_passes_two_shard_release(tmp_path):
    from biodivergence_dataset.validate import validate_release

    assert validate_release(cases.two_shard_release(tmp_path / "release")).problems == []


# ---------------------------------------------------------------------------------------------
# 8. annotate --overwrite removes only what the stage wrote; stored answers stay unless --forget-cache


FAST = {"backoff_s": 0.01, "timeout_s": 5.0, "progress": False}


@pytest.fixture(scope="module")
def pairs_dir(tmp_path_factory):
    from llm_server import real_pairs, write_pairs

    return write_pairs(tmp_path_factory.mktemp("pairs") / "pairs", real_pairs(6))


def test_overwrite_keeps_foreign_files_and_stored_answers(pairs_dir, tmp_path):
    from llm_server import FakeOllama

    from builder.annotate import run_stage as annotate
    from builder.annotate_config import AnnotateConfig
    from builder.pair_annotator import RAW_FILE

    out = tmp_path / "labels"
    with FakeOllama(models=("a", "b")) as server:
        annotate(pairs_dir, out, AnnotateConfig(annotator=server.spec("a"), **FAST))
        (out / "notes.txt").write_text("mine")  # added to the stage's folder (a folder of its own is refused)
        annotate(pairs_dir, out, AnnotateConfig(annotator=server.spec("b"), overwrite=True, **FAST))
        assert len(server.requests) == 12 and (out / "notes.txt").read_text() == "mine"
        stats = annotate(pairs_dir, out, AnnotateConfig(annotator=server.spec("a"), overwrite=True, **FAST))
        assert len(server.requests) == 12 and stats["reused_raw_responses"] == 6  # model a's answers, kept
        annotate(pairs_dir, out, AnnotateConfig(annotator=server.spec("b"), overwrite=True, forget_cache=True, **FAST))
    assert len(server.requests) == 18 and {r["model"] for r in io.read_jsonl(out / RAW_FILE)} == {"b"}
    assert {e.annotator_id for e in io.read_records(out, Example)} == {"ollama:b"}


# ---------------------------------------------------------------------------------------------
# 9. a torn last line is mended before appending, so a second resume is not stuck


def test_torn_annotation_line_does_not_block_later_resumes(pairs_dir, tmp_path):
    from builder.annotate import ANNOTATIONS_FILE
    from builder.annotate import run_stage as annotate
    from builder.annotate_config import AnnotateConfig

    out, config = tmp_path / "labels", AnnotateConfig(progress=False)
    annotate(pairs_dir, out, config)
    log = out / ANNOTATIONS_FILE
    for _ in range(2):  # killed mid-write twice, resumed each time
        lines = log.read_text().splitlines()
        log.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:40])
        (out / io.SUCCESS_MARKER).unlink()
        assert annotate(pairs_dir, out, config)["kept"] == 6
        assert [json.loads(line)["pair_id"] for line in log.read_text().splitlines()][-1]


def test_append_ends_a_whole_last_line_and_cuts_a_torn_one(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_text('{"a": 1}\n{"b": 2}')
    io.append_jsonl(path, {"c": 3})
    path.write_bytes(path.read_bytes() + b'{"d": ')
    io.append_jsonl(path, {"e": 5})
    assert list(io.read_jsonl(path)) == [{"a": 1}, {"b": 2}, {"c": 3}, {"e": 5}]


# ---------------------------------------------------------------------------------------------
# 11. evaluate: missing predictions are an error unless --allow-missing; a bad label names its line


def test_evaluate_refuses_partial_predictions(tmp_path, capsys):
    from release_factory import write_small_release

    release_dir = write_small_release(tmp_path / "release")
    preds = cases.partial_predictions(tmp_path, release_dir)
    argv = ["evaluate", "--predictions", str(preds), "--release", str(release_dir), "--no-semsim"]
    assert cli_main(argv) == 1
    assert "1 of 3 references of primary/test have no prediction" in capsys.readouterr().err
    assert cli_main([*argv, "--allow-missing"]) == 0
    assert "scored 2 of 3 references; 1 without a prediction" in capsys.readouterr().out
    report = json.loads(preds.with_suffix(".metrics.json").read_text())
    assert (report["n_scored"], report["n_missing"]) == (2, 1)


def test_evaluate_names_the_line_of_an_unknown_label(tmp_path, capsys):
    from release_factory import write_small_release

    release_dir = write_small_release(tmp_path / "release")
    preds = cases.partial_predictions(tmp_path, release_dir, bad_line=1)  # line 1 is the last reference
    argv = ["evaluate", "--predictions", str(preds), "--release", str(release_dir), "--no-semsim", "--allow-missing"]
    assert cli_main(argv) == 1
    assert f"{preds}:1: conflict_type: unknown label 'clash'" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------
# 6. a failed push leaves the release unchanged and says what to do in one line


def _push(release_dir, monkeypatch, endpoint: str | None, offline: bool) -> int:
    from huggingface_hub import constants

    monkeypatch.setenv("HF_TOKEN", "hf_fake_token")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", offline)
    if endpoint:
        monkeypatch.setattr(constants, "ENDPOINT", endpoint)
    return cli_main(["push", "--release", str(release_dir), "--repo", "org/biodivergence", "--tag", "v1.0"])


def test_push_failing_on_the_hub_leaves_the_release_unchanged(tmp_path, monkeypatch, capsys):
    from release_factory import write_small_release

    release_dir = write_small_release(tmp_path / "release")
    before = cases.folder_bytes(release_dir)
    with cases.failing_hub(500) as endpoint:
        assert _push(release_dir, monkeypatch, endpoint, offline=False) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "creating org/biodivergence failed (HfHubHTTPError" in err
    assert "nothing was published; the local release is unchanged; check the network" in err
    assert cases.folder_bytes(release_dir) == before


def test_push_offline_says_so(tmp_path, monkeypatch, capsys):
    from release_factory import write_small_release

    release_dir = write_small_release(tmp_path / "release")
    before = cases.folder_bytes(release_dir)
    assert _push(release_dir, monkeypatch, None, offline=True) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "OfflineModeIsEnabled" in err and "unset HF_HUB_OFFLINE" in err
    assert cases.folder_bytes(release_dir) == before


# ---------------------------------------------------------------------------------------------
# 7. LLM failures: reported with count and share, fatal above the threshold, retried on request


def _annotate_cli(pairs_dir, out, spec: str, *extra: str) -> int:
    return cli_main(["annotate", str(pairs_dir), "--out", str(out), "--annotator", spec, "--max-attempts", "2",
                     "--timeout", "5", "--no-progress", *extra])


def test_fallbacks_above_the_threshold_fail_until_retried(pairs_dir, tmp_path, capsys):
    from llm_server import FakeOllama, Reply

    out, healthy = tmp_path / "labels", {"ok": False}
    with FakeOllama(behaviour=lambda n, body: Reply() if healthy["ok"] else Reply(status=500)) as server:
        assert _annotate_cli(pairs_dir, out, server.spec()) == 1
        assert "6 of 6 pairs (100.0%) fell back" in capsys.readouterr().err and not io.is_done(out)
        assert _annotate_cli(pairs_dir, out, server.spec()) == 1 and len(server.requests) == 12  # nothing re-sent
        healthy["ok"] = True
        assert _annotate_cli(pairs_dir, out, server.spec(), "--retry-fallbacks") == 0
    assert len(server.requests) == 18 and io.is_done(out)
    assert {e.annotator_kind for e in io.read_records(out, Example)} == {"llm"}


def test_fallbacks_below_the_threshold_warn_and_retry_exactly_those_pairs(pairs_dir, tmp_path, capsys):
    from llm_server import FakeOllama, Reply, claims_in, real_pairs

    failing = {(p.claim_a.sentence, p.claim_b.sentence) for p in real_pairs(6)[:2]}
    healthy = {"ok": False}

    def behaviour(n, body):
        return Reply(status=500) if claims_in(body["messages"]) in failing and not healthy["ok"] else Reply()

    out = tmp_path / "labels"
    with FakeOllama(behaviour=behaviour) as server:
        assert _annotate_cli(pairs_dir, out, server.spec(), "--max-fallback-share", "0.5") == 0
        assert "warning: 2 of 6 pairs (33.3%) fell back" in capsys.readouterr().err
        kinds = {e.pair_id: e.annotator_kind for e in io.read_records(out, Example)}
        assert sum(kind == "llm" for kind in kinds.values()) == 4
        healthy["ok"] = True
        before = len(server.requests)
        assert _annotate_cli(pairs_dir, out, server.spec(), "--max-fallback-share", "0.5", "--retry-fallbacks") == 0
        asked = {r["claims"] for r in server.requests[before:]}
    assert asked == failing and len(server.requests) - before == 2
    assert {e.annotator_kind for e in io.read_records(out, Example)} == {"llm"}


def test_disk_full_while_annotate_appends_its_log_names_the_file(tmp_path, monkeypatch, capsys):
    """A full disk surfaces at write or fsync with no path in the error; the one-line error still names the log
    being appended to, and nothing is written past it."""
    from llm_server import real_pairs, write_pairs

    folder = write_pairs(tmp_path / "pairs", real_pairs(6))

    def full(_fd):
        raise OSError(28, os.strerror(28))

    monkeypatch.setattr(io.os, "fsync", full)
    assert cli_main(["annotate", str(folder), "--out", str(tmp_path / "labels"), "--annotator", "heuristic",
                     "--no-progress"]) == 1
    err = capsys.readouterr().err.strip()
    assert err == f"biodivergence annotate: error: No space left on device: {tmp_path / 'labels' / 'annotations.jsonl'}"
    assert not io.is_done(tmp_path / "labels")


def test_disk_full_in_a_sharded_stage_is_one_line_without_a_traceback(tmp_path, monkeypatch, capfd):
    """A rank that fails on a full disk: datatrove's log of it carries no traceback (nor the local variables loguru
    would print); the command's error line names the file; the stage is not marked finished."""
    import pyarrow.parquet as pq

    source = cases.wrong_type_jsonl(tmp_path)
    assert cli_main(["ingest", f"jsonl:{source}", "--out", str(tmp_path / "in"), "--domain", "amr"]) == 0
    capfd.readouterr()

    def full(*args, **kwargs):
        raise OSError(28, os.strerror(28))

    monkeypatch.setattr(pq, "write_table", full)
    assert cli_main(["claims", str(tmp_path / "in"), "--out", str(tmp_path / "out")]) == 1
    err = capfd.readouterr().err
    assert "Traceback" not in err and "No space left on device" in err
    assert err.strip().splitlines()[-1].startswith("biodivergence claims: error: No space left on device: ")
    assert not io.is_done(tmp_path / "out")
