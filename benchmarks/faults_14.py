"""Issue 14's faults: broken sources at ingest, damaged releases, a failing Hub, an LLM server that fails,
torn logs, file modes and incomplete predictions (each case's input built from ../shared/data)."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from pathlib import Path

from faultlib import (
    FAST_LLM,
    FINISHED,
    REFUSED,
    Case,
    FakeOllama,
    Reply,
    cases,
    claims_in,
    ingest_summary,
    last_line,
    pairs,
    real_pairs,
    run_cli,
    write_small_release,
)

from biodivergence_dataset import io
from biodivergence_dataset.records import Example


def ingest_case(make: Callable[[Path], Path], fmt: str) -> Callable[[Path], str]:
    def run(work: Path) -> str:
        code, _, _ = run_cli("ingest", f"{fmt}:{make(work)}", "--out", work / "out", "--domain", "oncology")
        return f"exit {code}; {ingest_summary(work / 'out')}"
    return run


def identifier_conflict(work: Path) -> str:
    a, b = cases.conflicting_jsonl(work, n=3)
    code, _, _ = run_cli("ingest", f"jsonl:{a}", f"jsonl:{b}", "--out", work / "out", "--domain", "oncology")
    listed = list(io.read_jsonl(work / "out" / "identifier_conflicts.jsonl"))
    ids = io.read_stats(work / "out")["identifier_conflict_ids"]
    return f"exit {code}; {ingest_summary(work / 'out')}; warned ids {ids}; {len(listed)} rows in identifier_conflicts.jsonl"


def headerless_tsv(work: Path) -> str:
    code, _, _ = run_cli("ingest", f"tsv[pmid=0,title=1,text=2]:{cases.headerless_tsv(work)}", "--out", work / "out",
                         "--domain", "oncology")
    return f"exit {code}; {ingest_summary(work / 'out')}"


def validate_case(make: Callable[[Path], Path]) -> Callable[[Path], str]:
    def run(work: Path) -> str:
        code, out, _ = run_cli("validate", "--release", make(work / "release"))
        errors = [line for line in out.splitlines() if line.startswith("error:")]
        return f"exit {code}; " + " / ".join(errors)
    return run


def push_case(offline: bool) -> Callable[[Path], str]:
    def run(work: Path) -> str:
        from huggingface_hub import constants

        release_dir = write_small_release(work / "release")
        before = cases.folder_bytes(release_dir)
        saved = constants.ENDPOINT, constants.HF_HUB_OFFLINE, dict(os.environ)
        os.environ["HF_TOKEN"] = "hf_fake_token"
        try:
            with cases.failing_hub(500) as endpoint:
                constants.ENDPOINT, constants.HF_HUB_OFFLINE = (saved[0], True) if offline else (endpoint, False)
                code, _, err = run_cli("push", "--release", release_dir, "--repo", "org/biodivergence", "--tag", "v1.0")
        finally:
            constants.ENDPOINT, constants.HF_HUB_OFFLINE = saved[:2]
            os.environ.clear()
            os.environ.update(saved[2])
        unchanged = cases.folder_bytes(release_dir) == before
        return f"exit {code}; stderr ({len(err.strip().splitlines())} line): {err.strip()}; release unchanged: {unchanged}"
    return run


def llm_always_500(work: Path) -> str:
    healthy = {"ok": False}
    with FakeOllama(behaviour=lambda n, body: Reply() if healthy["ok"] else Reply(status=500)) as server:
        args = ("annotate", pairs(work), "--out", work / "labels", "--annotator", server.spec(), *FAST_LLM)
        code, _, err = run_cli(*args)
        sent = len(server.requests)
        again, _, _ = run_cli(*args)
        resent = len(server.requests) - sent
        healthy["ok"] = True
        retried, _, _ = run_cli(*args, "--retry-fallbacks")
        kinds = sorted({e.annotator_kind for e in io.read_records(work / "labels", Example)})
        return (f"exit {code}: {last_line(err)}; same command again: exit {again}, {resent} requests; "
                f"server healthy + --retry-fallbacks: exit {retried}, {len(server.requests) - sent - resent} "
                f"requests, annotator_kind {kinds}")


def partly_failing(work: Path, bad: Reply, *extra: str) -> tuple[int, str, int, int, int, bool]:
    """annotate where 2 of 6 pairs get ``bad`` until the server heals, then ``--retry-fallbacks``: exit code,
    stderr, good answers stored, the retry's exit code and requests, and whether it asked exactly those 2."""
    failing = {(p.claim_a.sentence, p.claim_b.sentence) for p in real_pairs(6)[:2]}
    healthy = {"ok": False}

    def behaviour(n, body):
        return bad if claims_in(body["messages"]) in failing and not healthy["ok"] else Reply()

    with FakeOllama(behaviour=behaviour) as server:
        args = ("annotate", pairs(work), "--out", work / "labels", "--annotator", server.spec(), *FAST_LLM, *extra)
        code, _, err = run_cli(*args)
        kept = sum(1 for r in io.read_jsonl(work / "labels" / "raw_responses.jsonl") if r["status"] == "ok")
        sent = len(server.requests)
        healthy["ok"] = True
        retried, _, _ = run_cli(*args, "--retry-fallbacks")
        asked = {r["claims"] for r in server.requests[sent:]}
        return code, err, kept, retried, len(server.requests) - sent, asked == failing


def llm_short_outage(work: Path) -> str:
    code, err, _, retried, requests, exactly = partly_failing(work, Reply(status=500), "--max-fallback-share", "0.5")
    return (f"exit {code}: {last_line(err)}; --retry-fallbacks: exit {retried}, "
            f"{requests} requests, exactly the fallen-back pairs: {exactly}")


def overwrite(work: Path) -> str:
    out = work / "labels"
    with FakeOllama(models=("a", "b")) as server:
        folder = pairs(work)
        run_cli("annotate", folder, "--out", out, "--annotator", server.spec("a"), *FAST_LLM)
        (out / "notes.txt").write_text("mine")  # added to the stage's folder (a foreign folder is refused: 29.3)
        code, _, _ = run_cli("annotate", folder, "--out", out, "--annotator", server.spec("b"), "--overwrite", *FAST_LLM)
        sent = len(server.requests)
        run_cli("annotate", folder, "--out", out, "--annotator", server.spec("a"), "--overwrite", *FAST_LLM)
        return (f"exit {code}; notes.txt kept: {(out / 'notes.txt').exists()}; raw_responses.jsonl kept: "
                f"{(out / 'raw_responses.jsonl').exists()}; back to model a: {len(server.requests) - sent} requests")


def torn_line(work: Path) -> str:
    args = ("annotate", pairs(work), "--out", work / "labels", "--annotator", "heuristic", "--no-progress")
    codes = [run_cli(*args)[0]]
    log = work / "labels" / "annotations.jsonl"
    for _ in range(2):
        lines = log.read_text().splitlines()
        log.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:40])
        (work / "labels" / io.SUCCESS_MARKER).unlink()
        codes.append(run_cli(*args)[0])
    whole = all(json.loads(line) for line in log.read_text().splitlines())
    return f"exit codes (run, resume after tear, resume after second tear) {codes}; every line JSON: {whole}"


def umask_mode(work: Path) -> str:
    old = os.umask(0o022)
    try:
        release_dir = write_small_release(work / "release")
    finally:
        os.umask(old)
    modes = {oct(stat.S_IMODE(p.stat().st_mode)) for p in release_dir.rglob("*") if p.is_file()}
    return f"modes of release files under umask 022: {sorted(modes)}"


def partial_predictions(work: Path) -> str:
    release_dir = write_small_release(work / "release")
    args = ("evaluate", "--predictions", cases.partial_predictions(work, release_dir), "--release", release_dir,
            "--no-semsim")
    code, _, err = run_cli(*args)
    allowed, out, _ = run_cli(*args, "--allow-missing")
    return f"exit {code}: {last_line(err)}; with --allow-missing: exit {allowed}, {last_line(out.split('wrote')[0])}"


def unknown_label(work: Path) -> str:
    release_dir = write_small_release(work / "release")
    preds = cases.partial_predictions(work, release_dir, bad_line=1)
    code, _, err = run_cli("evaluate", "--predictions", preds, "--release", release_dir, "--no-semsim",
                           "--allow-missing")
    return f"exit {code}: {last_line(err)[:160]}"





CASES: list[Case] = [
    Case("1", "ingest an empty JSONL file", "finished stage, 0 records, the fault listed; no traceback",
         ingest_case(cases.empty_jsonl, "jsonl"), FINISHED + r"seen 1, kept 0, .*faults \['empty.jsonl: record 1"),
    Case("1", "ingest a .xml.gz holding half an article", "finished stage, 0 records, the fault listed",
         ingest_case(cases.half_article_gz, "pubmed_xml"),
         FINISHED + r"seen 1, kept 0, .*faults \['half.xml.gz: record 1: .*truncated"),
    Case("1, 2", "ingest a Europe PMC JSON cut inside result 11", "the 10 complete results kept, one named fault",
         ingest_case(cases.truncated_epmc, "europepmc_json"),
         FINISHED + r"seen 11, .*'malformed': 1[,}].*faults \['truncated.json: record 11: after record 10[^,]*\]$"),
    Case("3", "PubMed XML, third of five articles breaks off inside <ArticleTitle>",
         "4 articles kept, exactly one fault", ingest_case(cases.unclosed_title_xml, "pubmed_xml"),
         FINISHED + r"seen 5, kept 4, dropped \{'malformed': 1\}.*faults \['unclosed.xml: record 3: [^']*'\]$"),
    Case("4", "two JSONL files, same 3 PMIDs, different abstracts",
         "3 identifier conflicts, all 6 records excluded and listed with a reason, ids warned", identifier_conflict,
         FINISHED + r"seen 6, kept 0, dropped \{'identifier_conflict': 6\}, identifier_conflicts 3.*warned ids \[.{3,}\]; "
         r"6 rows"),
    Case("5", "validate a release missing pairlevel/train-00001-of-00002.parquet",
         "exit 1 naming the split, the row counts and the missing shard",
         validate_case(cases.release_missing_shard),
         REFUSED + r".*error: release/pairlevel: split 'train' .*missing \['train-00001-of-00002.parquet'\]"),
    Case("5", "validate a release with a truncated Parquet shard", "exit 1 naming the file",
         validate_case(cases.release_truncated_shard),
         REFUSED + r"error: release/pairlevel/train-00000-of-00002.parquet: not a readable Parquet file"),
    Case("6", "push while create_repo answers 500 (local fake Hub)",
         "exit 1, one line with what to do, release folder unchanged", push_case(offline=False),
         REFUSED + r"stderr \(1 line\): .*nothing was published.*re-run the same push; release unchanged: True$"),
    Case("6", "push with a token while HF_HUB_OFFLINE=1", "exit 1, one line with what to do, release unchanged",
         push_case(offline=True), REFUSED + r"stderr \(1 line\): .*unset HF_HUB_OFFLINE.*release unchanged: True$"),
    Case("7", "annotate against an LLM server that always answers 500",
         "exit 1 with count and share on stderr, stage unfinished; --retry-fallbacks re-asks when healthy",
         llm_always_500, REFUSED + r".*6 of 6 pairs \(100.0%\) fell back.*same command again: exit 1, 0 requests; "
         r"server healthy \+ --retry-fallbacks: exit 0, 6 requests, annotator_kind \['llm'\]$"),
    Case("7", "annotate during a short outage (2 of 6 pairs fail), --max-fallback-share 0.5",
         "exit 0 with a warning on stderr; --retry-fallbacks re-asks exactly those 2 pairs", llm_short_outage,
         r"^exit 0: warning: 2 of 6 pairs .*--retry-fallbacks: exit 0, 2 requests, exactly the fallen-back pairs: "
         r"True$"),
    Case("8", "annotate --overwrite (other model) on a folder with a foreign file",
         "only the stage's files removed; stored answers kept and reused", overwrite,
         r"^exit 0; notes.txt kept: True; raw_responses.jsonl kept: True; back to model a: 0 requests$"),
    Case("9", "annotations.jsonl torn by a kill, twice", "every resume succeeds; the log stays valid JSONL", torn_line,
         r"\[0, 0, 0\]; every line JSON: True$"),
    Case("10", "write a release under umask 022", "files 0644 (umask's mode), not 0600", umask_mode,
         r"umask 022: \['0o644'\]$"),
    Case("11", "evaluate with predictions for 2 of 3 references",
         "exit 1 unless --allow-missing; then the scores say how many were missing", partial_predictions,
         REFUSED + r".*preds.jsonl: 1 of 3 references .*with --allow-missing: exit 0, scored 2 of 3 references"),
    Case("11", "evaluate with an unknown label on line 1", "the message names line 1 of the predictions file",
         unknown_label, REFUSED + r".*preds.jsonl:1: conflict_type: unknown label 'clash'"),
    Case("TSV", "ingest a headerless TSV as tsv[pmid=0,title=1,text=2]", "every row read by column number",
         headerless_tsv, FINISHED + r"seen 5, kept 5, dropped \{\}.*faults \[\]$"),
]
