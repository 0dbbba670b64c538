"""Issue 61's faults in how a run behaves: a build killed outright (61.11), a pack of ten thousand questions
(61.14), a number changed by hand in the card's prose (61.16) and a disk that fills while annotate appends its log
(61.17). Each input is built in the scratch folder from ../shared/data."""

from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path

import yaml
from faultlib import Case, cases, first_error, pairs, run_cli, write_small_release

from biodivergence_dataset import io

#: Questions of the large pack, and the abstracts whose claims it is asked about.
PACK_SIZE, ABSTRACTS = 10_000, 400


def killed_build(work: Path) -> str:
    from interrupted_build import CONFIG, interrupted_build

    from builder import build

    config = work / "build.yaml"
    config.write_text(yaml.safe_dump(CONFIG))
    code, _, started = interrupted_build(config, work / "work", signal.SIGKILL, ignore_sigint=False)  # no orphan
    outcome = build.build(config, work / "work")
    return (f"exit {code}; {started} processes started, none left within 10 s of the kill; re-run: "
            f"{'OK' if outcome.ok else 'FAILED'}, stages {[s.status for s in outcome.steps][:3]}")


def large_pack(path: Path) -> Path:
    """``PACK_SIZE`` questions of Evidence Inference's prompts, each arm pair asked about other prompts'
    outcomes (shared words across medicine, as a real large pack has)."""
    from builder.reader import reader_examples

    prompts = list({f.prompt.prompt_id: f.prompt for f in
                    reader_examples.ei_findings(cases.SHARED_DATA / "evidence_inference")}.values())
    questions = []
    for i in range(PACK_SIZE):
        arms, outcome = prompts[i % len(prompts)], prompts[(7 * i + 3 * (i // len(prompts))) % len(prompts)]
        questions.append({"id": f"q{i}", "text": f"Is {outcome.outcome} higher, lower, or the same when comparing "
                                                 f"{arms.intervention} to {arms.comparator}?"})
    path.write_text(yaml.safe_dump({"questions": questions}, width=1000), encoding="utf-8")
    return path


def ten_thousand_questions(work: Path) -> str:
    import json

    source = work / "abstracts.json"
    records = json.loads((cases.SHARED_DATA / "pubmedqa_pqal" / "ori_pqal.json").read_text(encoding="utf-8"))
    source.write_text(json.dumps(dict(list(records.items())[:ABSTRACTS])), encoding="utf-8")
    assert run_cli("ingest", f"pubmedqa:{source}", "--out", work / "abstracts", "--domain", "oncology")[0] == 0
    assert run_cli("claims", work / "abstracts", "--out", work / "claims")[0] == 0
    claims = io.read_stats(work / "claims")["kept"]
    start = time.perf_counter()
    code, out, err = run_cli("questions", work / "claims", "--pack", large_pack(work / "pack.yaml"), "--out",
                             work / "out")
    wall = time.perf_counter() - start
    bars = [name for name in ("compiling questions", "questions: claims to embed", "embed", "questions: reading claims")
            if re.search(rf"{name}:\s+\d+%|{name}: \d+ batches", err)]
    return (f"exit {code} on {claims} claims × {PACK_SIZE} questions in {'under' if wall < 300 else 'over'} 300 s; "
            f"progress shown: {bars}; {out.strip()[:60]}…")


def prose_changed(work: Path) -> str:
    release = write_small_release(work / "release")
    cases.change_a_number_in_the_card(release)
    code, out, _ = run_cli("validate", "--release", release)
    dry, _, _ = run_cli("push", "--release", release, "--repo", "org/biodivergence", "--tag", "v1.0", "--dry-run")
    errors = [line for line in out.splitlines() if line.startswith("error:")]
    return f"validate exit {code}: {' / '.join(errors)[:260]}; push --dry-run exit {dry}"


def full_disk_while_annotating(work: Path) -> str:
    def full(_fd):
        raise OSError(28, os.strerror(28))

    folder, real = pairs(work), io.os.fsync
    io.os.fsync = full
    try:
        code, _, err = run_cli("annotate", folder, "--out", work / "labels", "--annotator", "heuristic",
                               "--no-progress")
    finally:
        io.os.fsync = real
    finished = io.is_done(work / "labels")
    again, _, _ = run_cli("annotate", folder, "--out", work / "labels", "--annotator", "heuristic", "--no-progress")
    return (f"exit {code}: {first_error(err)}; {len(err.strip().splitlines())} line(s); traceback: "
            f"{'Traceback' in err}; marked finished: {finished}; "
            f"with space again: exit {again}")


CASES: list[Case] = [
    Case("61.11", "SIGKILL to a build while its ranks run in pool workers",
         "every worker, the forkserver and the resource tracker end by themselves; the re-run resumes",
         killed_build, r"^exit -9; [3-9] processes started, none left within 10 s of the kill; re-run: OK, stages "
         r"\['up to date', 'ran'"),
    Case("61.14", f"questions with a pack of {PACK_SIZE:,} questions on the claims of {ABSTRACTS} abstracts",
         "finishes in minutes, not hours, with a progress bar at each long step",
         ten_thousand_questions, r"^exit 0 on \d{4} claims × 10000 questions in under 300 s; progress shown: "
         r"\['compiling questions', 'questions: claims to embed', 'embed', 'questions: reading claims'\]; "
         r"questions: \d+ of \d+ claims answer"),
    Case("61.16", "a number in the card's prose changed by hand (the header left right)",
         "validate and push --dry-run exit 1 naming README.md's line", prose_changed,
         r"^validate exit 1: error: release/README.md: line \d+ reads .* where the release's data gives .*; "
         r"push --dry-run exit 1$"),
    Case("61.17", "disk full while annotate appends its log (ENOSPC from fsync, no path in the error)",
         "exit 1, one line naming annotations.jsonl; not finished; resumes when there is space",
         full_disk_while_annotating, r"^exit 1: biodivergence annotate: error: No space left on device: "
         r"labels/annotations.jsonl; 1 line\(s\); traceback: False; marked finished: False; with space again: "
         r"exit 0$"),
]
