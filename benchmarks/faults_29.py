"""Issue 29's faults: secrets, nonsense LLM answers, bounded waits, output folders, interrupts, the card, push and
bad option values."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path

from faultlib import (
    FAST_LLM,
    REFUSED,
    ROOT,
    Case,
    FakeOllama,
    FakeOpenAI,
    Reply,
    cases,
    first_error,
    ingest_summary,
    interruptible_cli,
    last_line,
    pairs,
    real_pairs,
    run_cli,
    write_pairs,
    write_small_release,
)
from faults_14 import partly_failing

from biodivergence_dataset import io

NONSENSE = {"conflict_type": "total_contradiction", "divergence_axes": ["moon_phase"], "confidence": 0.99}


def leaked_secrets(work: Path) -> str:
    """annotate with ``user:sk-…@`` in the server URL and the env secrets set, a run with the server down,
    a failing collect, split + card; then grep every file and both streams."""
    from biodivergence_dataset.validate import validate_release
    from builder.release_stage import run_stage as release_stage
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

    from split_factory import example, write_annotations

    from biodivergence_dataset import ontology
    from biodivergence_dataset.release import state_dir
    from builder import audit, release_stage, split

    rnd = random.Random(3)
    ann = write_annotations(work / "annotations", [example(f"amr:{rnd.randrange(60)}", f"amr:x{i}",
                                                           conflict=rnd.choice(ontology.EVALUABLE_CLASSES))
                                                   for i in range(90)])
    rel = work / "release"
    split.run_stage(ann, rel)
    audit.run_stage(rel, rel, audit.AuditConfig(dpi=30))
    release_stage.run_stage(None, rel)
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
        from interrupted_build import CONFIG, interrupted_build

        from builder import build

        config = work / "build.yaml"
        config.write_text(yaml.safe_dump(CONFIG))
        code, err, started = interrupted_build(config, work / "work", signum, ignore_sigint)  # asserts no orphan
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



TIMED_OUT = "the attempt ends at 2 s as a timeout (the command within 6 s, the server holds 30 s)"

CASES: list[Case] = [
    Case("29.1", "annotate via `openai:http://user:sk-…@…`, NCBI_API_KEY/OPENAI_API_KEY/HF_TOKEN set; split, card",
         "no planted secret in any file or stream; the release names the annotator by its redacted spec",
         leaked_secrets, r"^exit codes \[0, 1, 1, 0\]; files holding a planted secret: 0; secrets on stdout/stderr: "
         r"0; the release names the annotator \['openai:http://\*\*\*@127.0.0.1:PORT/v1\?model=m'\].*"
         r"validate credential problems: 0$"),
    Case("29.1", "collect pubmed answered 404, NCBI_API_KEY set", "exit 1, the URL shown with api_key=***",
         collect_key, REFUSED + r".*api_key=\*\*\*: HTTP 404.*key printed: False$"),
    Case("29.1", "validate a release whose provenance.json holds `http://user:sk-…@host`",
         "exit 1 naming the file and the kind of credential, not the secret", planted_credential,
         REFUSED + r"error: release/provenance.json: holds what looks like a credential \(URL with user:password.*"
         r"secret printed: False$"),
    Case("29.2", "LLM answers `total_contradiction` + axis `moon_phase` (confidence 0.99) for every pair",
         "failed answers, retried, then fallbacks; exit 1 saying how many and why; no LLM label",
         nonsense_answers(NONSENSE), REFUSED + r".*6 of 6 pairs .*invalid_answer.*; 12 requests; labels by "
         r"\['\w+'\]; stage finished: False$"),
    Case("29.2", "LLM answers `{}` for every pair", "failed answers; exit 1 saying how many and why",
         nonsense_answers({}), REFUSED + r".*6 of 6 pairs .*the answer is empty.*; stage finished: False$"),
    Case("29.2", "2 of 6 pairs answered with nonsense (threshold 5%)",
         "exit 1; the 4 good answers kept; --retry-fallbacks asks only the 2", some_nonsense,
         REFUSED + r".*2 of 6 pairs .*good answers kept: 4; --retry-fallbacks: exit 0, 2 requests, exactly the 2 "
         r"failed pairs: True$"),
    Case("29.7", "server trickles one byte a second, --timeout 2", TIMED_OUT,
         slow_server(Reply(trickle=30)), r"^exit 0; attempt timeout .*command took [2-5]\.\d s$"),
    Case("29.7", "server accepts and never answers, --timeout 2", TIMED_OUT,
         slow_server(Reply(delay_s=30)), r"^exit 0; attempt timeout .*command took [2-5]\.\d s$"),
    Case("29.7", "Ctrl-C (SIGINT) during a hanging request", "returns at once (exit 130), no request after the signal",
         interrupt_hanging, r"exit 130 0\.\d\d s after the signal; requests sent in all: 1$"),
    Case("29.7", "HTTP 429 with Retry-After: 3", "the next attempt waits 3 s", retry_after("3", "60"),
         r"^exit 0; second attempt 3\.\d\d s after the 429"),
    Case("29.7", "HTTP 429 with Retry-After: 1000, --max-backoff 2", "the wait is capped at 2 s",
         retry_after("1000", "2"), r"^exit 0; second attempt 2\.\d\d s after the 429"),
    Case("29.3", "ingest --out a folder holding the user's Parquet, JSON, excluded-*.parquet and README",
         "refused naming the folder and its files, nothing changed; --force moves it aside, nothing deleted",
         out_into_user_folder("ingest"), REFUSED + r".*theirs is not the output of any stage.*it holds: README.md.*"
         r"folder unchanged: True; with --force: exit 0, the user's files moved intact to theirs.aside-1: True$"),
    Case("29.3", "split --out a folder holding the user's README.md and primary/mynotes.txt",
         "refused, nothing changed", out_into_user_folder("split"),
         REFUSED + r".*theirs is not the output of any stage.*folder unchanged: True$"),
    Case("29.4", "annotate PAIRS --out PAIRS; claims X --out X/claims", "refused, the input unchanged",
         out_is_the_input, r"--out PAIRS: exit 1: .*would destroy the input.*X/claims: exit 1; input unchanged: True$"),
    Case("29.5", "a symlink release/notes.txt → a file outside", "validate exit 1 naming it; push never lists it",
         symlink_in_release, r"^validate exit 1: error: release/notes.txt: a symbolic link.*push --dry-run exit 1, "
         r"lists notes.txt for upload: False"),
    Case("29.6", "new split, audit killed before its marker, then `biodivergence card`",
         "validate fails (stale card); `card` re-runs the audit; then validate passes", stale_card,
         r"^validate exit 1 \([1-9]\d* stale files.*`card` exit 0, audit re-run on the new split: True; validate "
         r"then exit 0$"),
    Case("29.8", 'JSONL records with "title": 123 and "mesh_terms": 5',
         "the two dropped as malformed with their reason, the rest ingested", wrong_type_records,
         r"^exit 0; seen 5, kept 3, dropped \{'malformed': 2\}.*\['malformed', 'malformed'\]$"),
    Case("29.9", "SIGTERM to a build (local runtime, 4 ranks on 2 workers) while the ranks run",
         "build and every worker stop (no orphan); the re-run resumes and finishes",
         interrupted_build(15, ignore_sigint=False), r"^exit 143: interrupted; .*none left after exit; re-run: OK"),
    Case("29.9", "SIGINT to a build started with SIGINT ignored (a background job)",
         "the build stops with its workers (no orphan); the re-run resumes and finishes",
         interrupted_build(2, ignore_sigint=True), r"^exit 130: interrupted; .*none left after exit; re-run: OK"),
    Case("29.10", "a second build into a work folder a build holds", "exit 1 at once naming the first build's PID",
         locked_build, REFUSED + r".*in use by another run \(PID <PID of the first build>\)"),
    Case("29.11", "annotate --limit 0", "exit 1: --limit must be at least 1",
         out_of_range(("annotate", "{pairs}", "--out", "{work}/labels", "--annotator", "heuristic", "--limit", "0")),
         REFUSED + r".*error: --limit: must be at least 1, got 0$"),
    Case("29.11", "goldcheck --bootstrap -5", "exit 1: bootstrap must be at least 0",
         out_of_range(("goldcheck", "--annotator", "heuristic", "--data-dir", str(cases.SHARED_DATA), "--source", "scifact",
                       "--no-slot-similarity", "--bootstrap", "-5")),
         REFUSED + r".*bootstrap must be at least 0 resamples, got -5$"),
    Case("29.12", "ingest jsonl:in/user@host (an '@' in a folder name)", "read as a path, not a domain", at_sign,
         r"^exit 0; seen 1, kept 1"),
    Case("29.12", "disk full while ingest writes (injected ENOSPC)", "exit 1, one line naming the file",
         os_error(28), REFUSED + r"stderr: .*No space left on device: out/\S+; traceback: False$"),
    Case("29.12", "read-only file system while ingest writes (injected EROFS)", "exit 1, one line naming the file",
         os_error(30), REFUSED + r"stderr: .*Read-only file system: out/\S+; traceback: False$"),
    Case("29.12", "annotate with a judge folder whose weights are cut short", "exit 1, one line naming the folder",
         tampered_judge, REFUSED + r".*judge.*cannot be loaded.*traceback: False$"),
    Case("29.12", "evaluate --split 'te*'", "exit 1: not a split of the release", evaluate_split,
         REFUSED + r".*has no split 'te\*'"),
]
