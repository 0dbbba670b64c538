"""Bad values are faults, not crashes (issue 29): records with a field of the wrong type, config values out of
range, an unknown split, an ``@`` in a folder name, OS errors and tampered model files. The bad inputs come from
``tests/support/fault_cases.py`` (``benchmarks/faults.py`` runs the same cases)."""

from __future__ import annotations

import errno
import json
import os

import fault_cases as cases
import pytest
import yaml
from release_factory import write_small_release

from biodivergence_cli.main import main
from biodivergence_dataset import io
from biodivergence_dataset.records import Abstract
from builder import build
from builder.annotate_config import AnnotateConfig
from builder.annotators import make_local
from builder.annotators.goldcheck import goldcheck
from builder.claims import ClaimsConfig
from builder.goldcheck_stage import GoldcheckConfig
from builder.ingest import IngestConfig, run_stage
from builder.sources import SourceSpec


def test_a_field_of_the_wrong_type_drops_its_record_with_the_reason_and_keeps_the_rest(tmp_path):
    path = cases.wrong_type_jsonl(tmp_path)
    out = tmp_path / "abstracts"
    stats = run_stage([f"jsonl:{path}"], out, IngestConfig(domain="amr", progress=False))
    assert stats["seen"] == 5 and stats["kept"] == 3 and stats["dropped_malformed"] == 2
    assert sorted(a.pmid for a in io.read_records(out, Abstract)) == ["1", "4", "5"]
    dropped = {e.record_id.rsplit(":", 1)[-1]: e for e in io.read_exclusions(out)}
    assert {e.reason for e in dropped.values()} == {"malformed"} and len(dropped) == 2
    messages = " ".join(json.dumps(e.record) for e in dropped.values())
    assert "field 'title' is int 123, not a string" in messages and "field 'mesh_terms' is int 5" in messages


def test_an_at_sign_that_is_not_a_domain_is_part_of_the_path(tmp_path):
    folder = cases.at_sign_folder(tmp_path)
    spec = SourceSpec.parse(f"jsonl:{folder}")
    assert spec.path == str(folder) and spec.domain is None
    assert SourceSpec.parse(f"jsonl:{folder}@amr").domain == "amr"
    with pytest.raises(ValueError, match="unknown domain 'amrr'"):
        SourceSpec.parse(f"jsonl:{folder}@amrr")  # the folder exists: a misspelt domain
    assert main(["ingest", f"jsonl:{folder}", "--out", str(tmp_path / "abstracts"), "--domain", "amr"]) == 0


@pytest.mark.parametrize("make, message", [
    (lambda: AnnotateConfig(limit=0), "limit must be at least 1"),
    (lambda: AnnotateConfig(limit=-5), "limit must be at least 1"),
    (lambda: AnnotateConfig(concurrency=0), "concurrency must be at least 1"),
    (lambda: ClaimsConfig(min_words=-4), "min_words"),
    (lambda: GoldcheckConfig(bootstrap=-5), "bootstrap"),
    (lambda: goldcheck(["frames"], cases.SHARED_DATA, ["scifact"], n_boot=-5), "bootstrap must be at least 0"),
])
def test_config_values_out_of_range_are_refused(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_a_build_config_with_a_negative_bootstrap_is_refused_before_anything_runs(tmp_path):
    config = tmp_path / "build.yaml"
    config.write_text(yaml.safe_dump({"sources": ["jsonl:x.jsonl"], "goldcheck": {"bootstrap": -5}}))
    with pytest.raises(ValueError, match="bootstrap"):
        build.load_config(config)


@pytest.mark.parametrize("split", ["te*", "../pairlevel/test", "nosuch"])
def test_evaluate_refuses_a_split_the_release_does_not_hold(tmp_path, capsys, split):
    release = write_small_release(tmp_path / "release")
    preds = tmp_path / "preds.jsonl"
    preds.write_text(json.dumps({"pair_id": "x", "conflict_type": "no_conflict"}) + "\n")
    assert main(["evaluate", "--predictions", str(preds), "--release", str(release), "--split", split,
                 "--no-semsim", "--out", str(tmp_path / "r.json")]) == 1
    err = capsys.readouterr().err
    assert f"no split {split!r}" in err and "Traceback" not in err and not (tmp_path / "r.json").exists()


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS])
def test_a_full_disk_or_read_only_folder_is_one_line_naming_the_path(tmp_path, capsys, monkeypatch, code):
    path = cases.wrong_type_jsonl(tmp_path)
    out = tmp_path / "abstracts"

    def failing_write(table, where, *args, **kwargs):
        raise OSError(code, os.strerror(code))  # as a write() reports it: no path

    monkeypatch.setattr("pyarrow.parquet.write_table", failing_write)
    assert main(["ingest", f"jsonl:{path}", "--out", str(out), "--domain", "amr"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    line = next(x for x in err if x.startswith("biodivergence ingest: error:"))
    assert os.strerror(code) in line and str(out) in line and ".parquet" in line
    assert not io.is_done(out)


def test_a_tampered_judge_folder_is_one_line_naming_it(tmp_path, capsys):
    folder = cases.tampered_judge(tmp_path)
    with pytest.raises(ValueError, match=f"{folder}: the judge's model files cannot be loaded"):
        make_local(f"judge:{folder}")
    (folder / "judge_config.json").write_text("{not json")
    with pytest.raises(ValueError, match="judge_config.json: not valid judge settings"):
        make_local(f"judge:{folder}")


@pytest.mark.parametrize("argv, message", [
    (["claims", "{work}/abstracts", "--out", "{work}/out", "--min-score", "nan"],
     r"^biodivergence claims: error: --min-score: Input should be a finite number, got nan$"),
    (["mine", "{work}/claims", "--out", "{work}/out", "--min-combined", "inf"],
     r"^biodivergence mine: error: --min-combined: Input should be a finite number, got inf$"),
    (["mine", "{work}/claims", "--out", "{work}/out", "--top-k", "0"],
     r"^biodivergence mine: error: --top-k: Input should be greater than or equal to 1, got 0$"),
    (["ingest", "jsonl:{work}/x.jsonl", "--out", "{work}/out", "--min-chars", "-1"],
     r"^biodivergence ingest: error: --min-chars: Input should be greater than or equal to 0, got -1$"),
    (["annotate", "{work}/pairs", "--out", "{work}/out", "--annotator", "heuristic", "--timeout", "nan"],
     r"^biodivergence annotate: error: --timeout: must be a finite number above 0, got nan$"),
    (["annotate", "{work}/pairs", "--out", "{work}/out", "--annotator", "heuristic", "--max-fallback-share", "2"],
     r"^biodivergence annotate: error: --max-fallback-share: must be a finite number at least 0, at most 1, got 2.0$"),
])
def test_an_impossible_option_value_is_one_line_naming_the_option(tmp_path, capsys, argv, message):
    """NaN and infinity are no threshold (issue 61); a config model's refusal names the option as it was typed."""
    import re

    assert main([a.format(work=tmp_path) for a in argv]) == 1
    assert re.match(message, capsys.readouterr().err.strip())
    assert not (tmp_path / "out").exists()


def test_gather_on_a_corpus_without_a_word_it_reads_retrieves_nothing_and_warns(tmp_path, caplog):
    from builder import gather

    greek = str.maketrans("abcdefghijklmnopqrstuvwxyz", "αβψδεφγηιξκλμνοπϙρστθωςχυζ")
    rows = [{"pmid": str(i + 1), "title": "Μελέτη", "text": cases.ABSTRACT.format(n=i).lower().translate(greek)}
            for i in range(3)]
    (tmp_path / "g.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    run_stage([f"jsonl:{tmp_path / 'g.jsonl'}"], tmp_path / "abstracts", IngestConfig(domain="amr", progress=False))
    pack = tmp_path / "pack.yaml"
    pack.write_text('questions:\n  - {id: q, text: "Does colistin reduce mortality compared with placebo?"}\n')
    stats = gather.run_stage(tmp_path / "abstracts", tmp_path / "out", gather.GatherConfig(pack=str(pack)))
    assert (stats["seen"], stats["kept"]) == (3, 0)
    assert "no question retrieved any of the 3 abstracts" in caplog.text
