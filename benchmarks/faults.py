"""The fault table of issues 14 and 29: each bad input is run through the CLI and what happened is recorded.

Every case builds its input in a scratch folder from the real files in ../shared/data (with
``tests/fault_cases.py``), runs the ``biodivergence`` command a user would run, and reports the exit
code, the message and the counts. Writes benchmarks/results/faults.md (case, expected, observed).

Usage: python benchmarks/faults.py [--only ITEM ...]   (--only: re-run those items' cases, keep the other rows)
"""

from __future__ import annotations

import argparse
import io as text_io
import json
import os
import re
import signal
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # the repo first: benchmarks/trainer.py is not the package
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import fault_cases as cases
from llm_server import FakeOllama, FakeOpenAI, Reply, claims_in, interruptible_cli, real_pairs, write_pairs
from release_factory import write_small_release

from biodivergence_dataset import io
from biodivergence_dataset.cli import main as cli_main
from biodivergence_dataset.records import Example

RESULTS = ROOT / "benchmarks" / "results" / "faults.md"
FAST_LLM = ("--max-attempts", "2", "--timeout", "5", "--no-progress")


def run_cli(*argv: str) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of one ``biodivergence`` command run in this process."""
    out, err = text_io.StringIO(), text_io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli_main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def ingest_summary(out: Path) -> str:
    s = io.read_stats(out)
    return (f"seen {s['seen']}, kept {s['kept']}, dropped {io.dropped_counts(s)}, "
            f"identifier_conflicts {s.get('identifier_conflicts')}; faults {s['faults']}")


# --------------------------------------------------------------------------------------------- cases


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


def pairs(work: Path) -> Path:
    return write_pairs(work / "pairs", real_pairs(6))


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


# --------------------------------------------------------------------------------------------- issue 29 (secrets29)

NONSENSE = {"conflict_type": "total_contradiction", "divergence_axes": ["moon_phase"], "confidence": 0.99}


def leaked_secrets(work: Path) -> str:
    """annotate with ``user:sk-…@`` in the server URL and the env secrets set, a run with the server down,
    a failing collect, split + card; then grep every file and both streams."""
    from biodivergence_dataset.validate import validate_release
    from builder.release import run_stage as release_stage
    from builder.split import SplitConfig
    from builder.split import run_stage as split

    streams = []
    with cases.secret_environment():
        folder = write_pairs(work / "pairs", real_pairs(40))
        with FakeOpenAI(models=("m",), userinfo=f"user:{cases.URL_SECRET}") as server:
            spec = server.spec("m")
            streams.append(run_cli("annotate", folder, "--out", work / "labels", "--annotator", spec, "--no-progress"))
            streams.append(run_cli("collect", "pubmed", "--out", work / "raw", "--query", "x[tiab]", "--base-url",
                                   server.url + "/eutils/", "--rate", "100"))
        streams.append(run_cli("annotate", folder, "--out", work / "down", "--annotator", spec, "--no-progress"))
        split(work / "labels", work / "release", SplitConfig(oversized_components="carve"))
        release_stage(None, work / "release")
        streams.append(run_cli("card", "--release", work / "release"))
        printed = "".join(out + err for _, out, err in streams)
        in_files = cases.files_holding_secrets(work)
        in_streams = [s for s in cases.PLANTED if s in printed]
        credentials = [p for p in validate_release(work / "release").problems if "credential" in p]
    spec_line = json.loads((work / "release" / "annotation_manifest.json").read_text())["annotator"]
    return (f"exit codes {[c for c, _, _ in streams]}; files holding a planted secret: {len(in_files)}; "
            f"secrets on stdout/stderr: {len(in_streams)}; the release names the annotator "
            f"{spec_line}; "
            f"server-down error: {last_line(streams[2][2])[:150]}…; "
            f"validate credential problems: {len(credentials)}")


def collect_key(work: Path) -> str:
    with cases.secret_environment(), FakeOpenAI() as server:
        code, _, err = run_cli("collect", "pubmed", "--out", work / "raw", "--query", "x[tiab]", "--base-url",
                               server.url + "/eutils/", "--rate", "100")
    return f"exit {code}: {last_line(err)[:220]}…; key printed: {cases.ENV_SECRETS['NCBI_API_KEY'] in err}"


def planted_credential(work: Path) -> str:
    release_dir = cases.two_shard_release(work / "release")
    cases.plant_credential(release_dir, f"http://user:{cases.URL_SECRET}@host/v1")
    code, out, _ = run_cli("validate", "--release", release_dir)
    errors = [line for line in out.splitlines() if line.startswith("error:")]
    return f"exit {code}; " + " / ".join(errors) + f"; secret printed: {cases.URL_SECRET in out}"


def nonsense_answers(answer: dict) -> Callable[[Path], str]:
    def run(work: Path) -> str:
        with FakeOllama(behaviour=lambda n, body: Reply(content=json.dumps(answer))) as server:
            code, _, err = run_cli("annotate", pairs(work), "--out", work / "labels", "--annotator", server.spec(),
                                   *FAST_LLM)
        kinds = sorted({json.loads(line)["example"]["annotator_kind"]
                        for line in (work / "labels" / "annotations.jsonl").read_text().splitlines()})
        return (f"exit {code}: {last_line(err)[:330]}…; {len(server.requests)} requests; labels by {kinds}; "
                f"stage finished: {io.is_done(work / 'labels')}")
    return run


def some_nonsense(work: Path) -> str:
    code, err, kept, retried, requests, exactly = partly_failing(work, Reply(content=json.dumps(NONSENSE)))
    return (f"exit {code}: {last_line(err)[:120]}…; good answers kept: {kept}; --retry-fallbacks: exit {retried}, "
            f"{requests} requests, exactly the 2 failed pairs: {exactly}")


def slow_server(reply: Reply) -> Callable[[Path], str]:
    def run(work: Path) -> str:
        with FakeOpenAI(behaviour=lambda n, body: reply) as server:
            start = time.perf_counter()
            code, _, _ = run_cli("annotate", pairs(work), "--out", work / "labels", "--annotator", server.spec(),
                                 "--limit", "1", "--max-attempts", "1", "--timeout", "2", "--max-fallback-share", "1",
                                 "--no-progress")
            wall = time.perf_counter() - start
        (row,) = io.read_jsonl(work / "labels" / "raw_responses.jsonl")
        return f"exit {code}; attempt {row['status']} ({row['error'].split(': ', 1)[-1]}); command took {wall:.1f} s"
    return run


def interrupt_hanging(work: Path) -> str:
    box: list = []

    def behaviour(n, body):
        if n == 1:
            box.append(time.perf_counter())
            threading.Timer(1.0, lambda: os.kill(box[0].pid, signal.SIGINT)).start()
        return Reply(delay_s=60, status=500)

    with FakeOllama(behaviour=behaviour) as server:
        proc = interruptible_cli(["annotate", str(pairs(work)), "--out", str(work / "labels"), "--annotator",
                                  server.spec(), "--concurrency", "1", "--timeout", "120", "--no-progress"], ROOT)
        box.insert(0, proc)
        try:
            proc.communicate(timeout=120)
        finally:
            proc.kill()
        returned = time.perf_counter() - box[1] - 1.0
        time.sleep(1.0)
        sent = len(server.requests)
    return (f"SIGINT 1 s into a request the server holds 60 s (--timeout 120): exit {proc.returncode} "
            f"{returned:.2f} s after the signal; requests sent in all: {sent}")


def retry_after(value: str, cap: str) -> Callable[[Path], str]:
    def run(work: Path) -> str:
        def behaviour(n, body):
            return Reply(status=429, headers={"Retry-After": value}) if n == 1 else Reply()

        with FakeOllama(behaviour=behaviour) as server:
            code, _, _ = run_cli("annotate", pairs(work), "--out", work / "labels", "--annotator", server.spec(),
                                 "--limit", "1", "--backoff", "0.1", "--max-backoff", cap, "--no-progress")
            gap = server.requests[1]["at"] - server.requests[0]["at"]
        return f"exit {code}; second attempt {gap:.2f} s after the 429 (back-off alone: 0.1 s)"
    return run


#: Issue 29 cases of this helper (secrets, LLM answers, bounded waits); item = the issue's "what goes wrong" number.
ISSUE29_CASES: list[tuple[str, str, str, Callable[[Path], str]]] = [
    ("29.1", "annotate via `openai:http://user:sk-…@…`, NCBI_API_KEY/OPENAI_API_KEY/HF_TOKEN set; split, card",
     "no planted secret in any file or stream; the release names the annotator by its redacted spec",
     leaked_secrets),
    ("29.1", "collect pubmed answered 404, NCBI_API_KEY set", "exit 1, the URL shown with api_key=***", collect_key),
    ("29.1", "validate a release whose provenance.json holds `http://user:sk-…@host`",
     "exit 1 naming the file and the kind of credential, not the secret", planted_credential),
    ("29.2", "LLM answers `total_contradiction` + axis `moon_phase` (confidence 0.99) for every pair",
     "failed answers, retried, then fallbacks; exit 1 saying how many and why; no LLM label",
     nonsense_answers(NONSENSE)),
    ("29.2", "LLM answers `{}` for every pair", "failed answers; exit 1 saying how many and why",
     nonsense_answers({})),
    ("29.2", "2 of 6 pairs answered with nonsense (threshold 5%)",
     "exit 1; the 4 good answers kept; --retry-fallbacks asks only the 2", some_nonsense),
    ("29.7", "server trickles one byte a second, --timeout 2", "the attempt ends at 2 s as a timeout",
     slow_server(Reply(trickle=30))),
    ("29.7", "server accepts and never answers, --timeout 2", "the attempt ends at 2 s as a timeout",
     slow_server(Reply(delay_s=30))),
    ("29.7", "Ctrl-C (SIGINT) during a hanging request", "returns at once (exit 130), no request after the signal",
     interrupt_hanging),
    ("29.7", "HTTP 429 with Retry-After: 3", "the next attempt waits 3 s", retry_after("3", "60")),
    ("29.7", "HTTP 429 with Retry-After: 1000, --max-backoff 2", "the wait is capped at 2 s", retry_after("1000", "2")),
]


# --- issue 29: folders, interrupts, the card, push, bad values (folders29) -----------------------------------


def first_error(err: str) -> str:
    return next((line for line in err.splitlines() if "error:" in line), last_line(err))[:240]


def out_into_user_folder(command: str) -> Callable[[Path], str]:
    def run(work: Path) -> str:
        theirs = cases.user_folder(work)
        before = cases.folder_bytes(theirs)
        if command == "ingest":
            args = ("ingest", f"jsonl:{cases.wrong_type_jsonl(work)}", "--out", theirs, "--domain", "amr")
        else:
            annotations = work / "annotations"
            io.write_records(annotations, [])
            args = ("split", annotations, "--out", theirs)
        code, _, err = run_cli(*args)
        kept = cases.folder_bytes(theirs) == before
        forced = run_cli(*args, "--force")[0] if command == "ingest" else None
        aside = cases.folder_bytes(work / "theirs.aside-1") == before if forced is not None else None
        return (f"exit {code}: {first_error(err)}; folder unchanged: {kept}"
                + (f"; with --force: exit {forced}, the user's files moved intact to theirs.aside-1: {aside}"
                   if forced is not None else ""))
    return run


def out_is_the_input(work: Path) -> str:
    folder = pairs(work)
    before = cases.folder_bytes(folder)
    code, _, err = run_cli("annotate", folder, "--out", folder, "--annotator", "heuristic", "--no-progress")
    inside, _, _ = run_cli("claims", folder, "--out", folder / "claims")
    return (f"annotate PAIRS --out PAIRS: exit {code}: {first_error(err)}; claims X --out X/claims: exit {inside}; "
            f"input unchanged: {cases.folder_bytes(folder) == before}")


def symlink_in_release(work: Path) -> str:
    release_dir = write_small_release(work / "release")
    (work / "secret.txt").write_text("outside the release")
    (release_dir / "notes.txt").symlink_to(work / "secret.txt")
    code, out, _ = run_cli("validate", "--release", release_dir)
    dry, plan, _ = run_cli("push", "--release", release_dir, "--repo", "org/biodivergence", "--tag", "v1.0", "--dry-run")
    errors = [line for line in out.splitlines() if "notes.txt" in line]
    return (f"validate exit {code}: {' / '.join(errors)}; push --dry-run exit {dry}, lists notes.txt for upload: "
            f"{'notes.txt  (' in plan}; {last_line(plan)}")


def stale_card(work: Path) -> str:
    import random

    from test_split import example, write_annotations

    from biodivergence_dataset import ontology
    from biodivergence_dataset.release import state_dir
    from builder import audit, release, split

    rnd = random.Random(3)
    ann = write_annotations(work / "annotations", [example(f"amr:{rnd.randrange(60)}", f"amr:x{i}",
                                                           conflict=rnd.choice(ontology.EVALUABLE_CLASSES))
                                                   for i in range(90)])
    rel = work / "release"
    split.run_stage(ann, rel)
    audit.run_stage(rel, rel, audit.AuditConfig(dpi=30))
    release.run_stage(None, rel)
    split.run_stage(ann, rel, split.SplitConfig(seed=7))  # a new split; the audit is killed before it finishes
    (state_dir(rel, "audit") / io.SUCCESS_MARKER).unlink()
    code, out, _ = run_cli("validate", "--release", rel)
    card_code, _, _ = run_cli("card", "--release", rel)
    after, _, _ = run_cli("validate", "--release", rel)
    current = json.loads((rel / "audit.json").read_text()) == audit.audit_release(rel)["audit"]
    return (f"validate exit {code} ({sum('the card is stale' in line for line in out.splitlines())} stale files, "
            f"e.g. {next(line for line in out.splitlines() if 'stale' in line)[:120]}…); `card` exit {card_code}, "
            f"audit re-run on the new split: {current}; validate then exit {after}")


def wrong_type_records(work: Path) -> str:
    code, _, _ = run_cli("ingest", f"jsonl:{cases.wrong_type_jsonl(work)}", "--out", work / "out", "--domain", "amr")
    return (f"exit {code}; {ingest_summary(work / 'out')}; kept in excluded-*.parquet: "
            f"{[e.reason for e in io.read_exclusions(work / 'out')]}")


def interrupted_build(signum: int, ignore_sigint: bool) -> Callable[[Path], str]:
    def run(work: Path) -> str:
        import yaml
        from test_interrupts import CONFIG, _interrupted_build

        from builder import build

        config = work / "build.yaml"
        config.write_text(yaml.safe_dump(CONFIG))
        code, err, started = _interrupted_build(config, work / "work", signum, ignore_sigint)  # asserts no orphan
        outcome = build.build(config, work / "work")
        return (f"exit {code}: {last_line(err)}; {started} processes started, none left after exit; re-run: "
                f"{'OK' if outcome.ok else 'FAILED'}, stages {[s.status for s in outcome.steps]}")
    return run


def locked_build(work: Path) -> str:
    from builder import build
    from builder.folders import build_lock, claim_output

    config = work / "build.yaml"
    config.write_text(json.dumps({"sources": [f"jsonl:{cases.wrong_type_jsonl(work)}"]}))
    folder = claim_output(work / "work", build.STAGE)
    with build_lock(folder):
        code, _, err = run_cli("build", "--config-file", config, "--out", folder)
    return f"exit {code}: {first_error(err).replace(str(os.getpid()), '<PID of the first build>')}"


def out_of_range(args: tuple[str, ...]) -> Callable[[Path], str]:
    """Run ``args``; ``{pairs}`` and ``{work}`` in them name a folder of 6 candidate pairs and the scratch folder."""
    def run(work: Path) -> str:
        folder = pairs(work)
        code, _, err = run_cli(*(a.format(work=work, pairs=folder) for a in args))
        return f"exit {code}: {first_error(err)}"
    return run


def at_sign(work: Path) -> str:
    folder = cases.at_sign_folder(work)
    code, _, err = run_cli("ingest", f"jsonl:{folder}", "--out", work / "out", "--domain", "amr")
    return f"exit {code}; {ingest_summary(work / 'out') if code == 0 else first_error(err)}"


def os_error(code_: int) -> Callable[[Path], str]:
    def run(work: Path) -> str:
        import pyarrow.parquet as pq

        real = pq.write_table

        def failing(*args, **kwargs):
            raise OSError(code_, os.strerror(code_))

        pq.write_table = failing
        try:
            code, _, err = run_cli("ingest", f"jsonl:{cases.wrong_type_jsonl(work)}", "--out", work / "out",
                                   "--domain", "amr")
        finally:
            pq.write_table = real
        return f"exit {code}; stderr: {first_error(err)}; traceback: {'Traceback' in err}"
    return run


def tampered_judge(work: Path) -> str:
    folder = cases.tampered_judge(work)
    code, _, err = run_cli("annotate", pairs(work), "--out", work / "labels", "--annotator", f"judge:{folder}",
                           "--no-progress")
    return f"exit {code}: {first_error(err)}; traceback: {'Traceback' in err}"


def evaluate_split(work: Path) -> str:
    release_dir = write_small_release(work / "release")
    preds = cases.partial_predictions(work, release_dir)
    code, _, err = run_cli("evaluate", "--predictions", preds, "--release", release_dir, "--split", "te*",
                           "--no-semsim", "--allow-missing")
    return f"exit {code}: {first_error(err)}"


#: issue 29's cases (folders29): output folders, interrupts, the card, push, bad values
CASES_29: list[tuple[str, str, str, Callable[[Path], str]]] = [
    ("29.3", "ingest --out a folder holding the user's Parquet, JSON, excluded-*.parquet and README",
     "refused naming the folder and its files, nothing changed; --force moves it aside, nothing deleted",
     out_into_user_folder("ingest")),
    ("29.3", "split --out a folder holding the user's README.md and primary/mynotes.txt",
     "refused, nothing changed", out_into_user_folder("split")),
    ("29.4", "annotate PAIRS --out PAIRS; claims X --out X/claims", "refused, the input unchanged", out_is_the_input),
    ("29.5", "a symlink release/notes.txt → a file outside", "validate exit 1 naming it; push never lists it",
     symlink_in_release),
    ("29.6", "new split, audit killed before its marker, then `biodivergence card`",
     "validate fails (stale card); `card` re-runs the audit; then validate passes", stale_card),
    ("29.8", 'JSONL records with "title": 123 and "mesh_terms": 5',
     "the two dropped as malformed with their reason, the rest ingested", wrong_type_records),
    ("29.9", "SIGTERM to a build (local runtime, 4 ranks on 2 workers) while the ranks run",
     "build and every worker stop (no orphan); the re-run resumes and finishes",
     interrupted_build(15, ignore_sigint=False)),
    ("29.9", "SIGINT to a build started with SIGINT ignored (a background job)",
     "the build stops with its workers (no orphan); the re-run resumes and finishes",
     interrupted_build(2, ignore_sigint=True)),
    ("29.10", "a second build into a work folder a build holds", "exit 1 at once naming the first build's PID",
     locked_build),
    ("29.11", "annotate --limit 0", "exit 1: limit must be at least 1",
     out_of_range(("annotate", "{pairs}", "--out", "{work}/labels", "--annotator", "heuristic", "--limit", "0"))),
    ("29.11", "goldcheck --bootstrap -5", "exit 1: bootstrap must be at least 0",
     out_of_range(("goldcheck", "--annotator", "heuristic", "--data-dir", str(cases.DATA), "--source", "scifact",
                   "--no-slot-similarity", "--bootstrap", "-5"))),
    ("29.12", "ingest jsonl:in/user@host (an '@' in a folder name)", "read as a path, not a domain", at_sign),
    ("29.12", "disk full while ingest writes (injected ENOSPC)", "exit 1, one line naming the file",
     os_error(28)),
    ("29.12", "read-only file system while ingest writes (injected EROFS)", "exit 1, one line naming the file",
     os_error(30)),
    ("29.12", "annotate with a judge folder whose weights are cut short", "exit 1, one line naming the folder",
     tampered_judge),
    ("29.12", "evaluate --split 'te*'", "exit 1: not a split of the release", evaluate_split),
]


#: (issue item, case, expected, run)
CASES: list[tuple[str, str, str, Callable[[Path], str]]] = [
    ("1", "ingest an empty JSONL file", "finished stage, 0 records, the fault listed; no traceback",
     ingest_case(cases.empty_jsonl, "jsonl")),
    ("1", "ingest a .xml.gz holding half an article", "finished stage, 0 records, the fault listed",
     ingest_case(cases.half_article_gz, "pubmed_xml")),
    ("1, 2", "ingest a Europe PMC JSON cut inside result 11", "the 10 complete results kept, one named fault",
     ingest_case(cases.truncated_epmc, "europepmc_json")),
    ("3", "PubMed XML, third of five articles breaks off inside <ArticleTitle>",
     "4 articles kept, exactly one fault", ingest_case(cases.unclosed_title_xml, "pubmed_xml")),
    ("4", "two JSONL files, same 3 PMIDs, different abstracts",
     "3 identifier conflicts, all 6 records excluded and listed with a reason, ids warned", identifier_conflict),
    ("5", "validate a release missing pairlevel/train-00001-of-00002.parquet",
     "exit 1 naming the split, the row counts and the missing shard",
     validate_case(cases.release_missing_shard)),
    ("5", "validate a release with a truncated Parquet shard", "exit 1 naming the file",
     validate_case(cases.release_truncated_shard)),
    ("6", "push while create_repo answers 500 (local fake Hub)",
     "exit 1, one line with what to do, release folder unchanged", push_case(offline=False)),
    ("6", "push with a token while HF_HUB_OFFLINE=1", "exit 1, one line with what to do, release unchanged",
     push_case(offline=True)),
    ("7", "annotate against an LLM server that always answers 500",
     "exit 1 with count and share on stderr, stage unfinished; --retry-fallbacks re-asks when healthy",
     llm_always_500),
    ("7", "annotate during a short outage (2 of 6 pairs fail), --max-fallback-share 0.5",
     "exit 0 with a warning on stderr; --retry-fallbacks re-asks exactly those 2 pairs", llm_short_outage),
    ("8", "annotate --overwrite (other model) on a folder with a foreign file",
     "only the stage's files removed; stored answers kept and reused", overwrite),
    ("9", "annotations.jsonl torn by a kill, twice", "every resume succeeds; the log stays valid JSONL", torn_line),
    ("10", "write a release under umask 022", "files 0644 (umask's mode), not 0600", umask_mode),
    ("11", "evaluate with predictions for 2 of 3 references",
     "exit 1 unless --allow-missing; then the scores say how many were missing", partial_predictions),
    ("11", "evaluate with an unknown label on line 1", "the message names line 1 of the predictions file",
     unknown_label),
    ("TSV", "ingest a headerless TSV as tsv[pmid=0,title=1,text=2]", "every row read by column number",
     headerless_tsv),
    *ISSUE29_CASES,
    *CASES_29,
]


def observe(run: Callable[[Path], str]) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        try:
            return re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", run(Path(tmp)).replace(tmp + "/", ""))
        except Exception as exc:  # noqa: BLE001 (a crash is an observation too)
            return f"CRASH {type(exc).__name__}: {exc}"


def table(rows: list[tuple[str, str, str, str]]) -> str:
    lines = ["| item | case | expected | observed |", "|---|---|---|---|"]
    lines += ["| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in row) + " |" for row in rows]
    return "\n".join(lines)


def recorded_rows() -> dict[tuple[str, str], str]:
    """(item, case) → observed, from the table on disk (the rows ``--only`` does not re-run)."""
    if not RESULTS.exists():
        return {}
    out = {}
    for line in RESULTS.read_text().splitlines()[2:]:
        cells = [c.strip().replace("\\|", "|") for c in line.strip().strip("|").split(" | ")]
        if len(cells) == 4:
            out[(cells[0], cells[1])] = cells[3]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", metavar="ITEM", help="re-run only these items' cases (e.g. 29.1 29.7); "
                        "the other rows are kept from the table on disk")
    args = parser.parse_args()
    recorded = recorded_rows() if args.only else {}
    rows = []
    for item, name, expected, run in CASES:
        key = (item, name.replace("\n", " "))
        if args.only and item not in args.only and key in recorded:
            rows.append((item, name, expected, recorded[key]))
            continue
        observed = observe(run)
        print(f"[{item}] {name}\n    expected: {expected}\n    observed: {observed}")
        rows.append((item, name, expected, observed))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text("# Fault table (issues 14 and 29)\n\nGenerated by `python benchmarks/faults.py`: each bad input is built "
                       "from ../shared/data and run through the `biodivergence` CLI; *observed* is what the run "
                       "printed and wrote.\n\n" + table(rows) + "\n")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
