"""A small real build interrupted mid-stage, for the interrupt tests and the fault suite: the build CLI runs in its
own session, is sent a signal once its ranks run in worker processes, and no process of its session may outlive it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
from repo_paths import REPO, SHARED_DATA

LOCAL_RUNTIME = REPO / "builder" / "configs" / "runtime" / "local.yaml"  # 4 tasks, 2 workers
#: ~90 abstracts: enough for a release, small enough for a minute's build.
CONFIG = {
    "sources": [f"pubmed_xml:{SHARED_DATA / 'readbiomed_pathogens_medline' / 'manual-set' / 'articles-xml-format'}",
                f"pubmed_xml:{SHARED_DATA / 'pubmed_xml_ncbiutils'}"],
    "ingest": {"progress": False},
    "mine": {"top_k": 5, "cap_per_domain": 200},
    "annotate": {"annotator": ["heuristic"], "progress": False},
    "split": {"seed": 7, "oversized_components": "carve"},
    "audit": {"plots": False},
    "goldcheck": {"enabled": False},
}
BUILD_CLI = "import sys; from biodivergence_cli.main import main; sys.exit(main(sys.argv[1:]))"


def session_processes(sid: int) -> list[psutil.Process]:
    """Live processes of session ``sid`` (the build and whatever it started; orphans keep their session)."""
    out = []
    for proc in psutil.process_iter():
        try:
            if os.getsid(proc.pid) == sid and proc.status() != psutil.STATUS_ZOMBIE:
                out.append(proc)
        except (psutil.Error, ProcessLookupError, PermissionError):
            continue
    return out


def interrupted_build(config: Path, work: Path, signum: int, ignore_sigint: bool) -> tuple[int, str, int]:
    """Start the build CLI in its own session; once its ranks run in worker processes, send ``signum`` to its
    PID only. Returns its exit code, its stderr and how many processes it had started."""
    # with SIGINT ignored from the start, as a shell starts a background job (`build … &`)
    ignore = "import signal; signal.signal(signal.SIGINT, signal.SIG_IGN); " if ignore_sigint else ""
    proc = subprocess.Popen([sys.executable, "-c", ignore + BUILD_CLI, "build", "--config-file", str(config), "--runtime",
                             str(LOCAL_RUNTIME), "--out", str(work)], cwd=REPO, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env={**os.environ, "HF_HUB_OFFLINE": "1"})
    try:
        started = 0
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and proc.poll() is None:
            children = psutil.Process(proc.pid).children(recursive=True)
            if (work / "claims" / ".tasks").is_dir() and len(children) >= 3:  # ranks run in pool workers
                started = len(children)
                break
            time.sleep(0.05)
        assert started, f"the ranks never ran in workers: {proc.stderr.read()[-2000:] if proc.poll() is not None else ''}"
        proc.send_signal(signum)
        try:
            _, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:  # say what kept the build's stderr open, and since when
            held = [(p.pid, p.cmdline(), f"started {time.time() - p.create_time():.0f} s ago")
                    for p in session_processes(proc.pid)]
            raise AssertionError(f"the build did not end within 60 s of the signal (exit code {proc.poll()}); "
                                 f"alive in its session: {held}") from None
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    deadline = time.monotonic() + 10  # a process the build killed may take a moment to be reaped
    while session_processes(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    survivors = session_processes(proc.pid)
    for orphan in survivors:
        orphan.kill()
    assert not survivors, f"processes outlived the build: {[(p.pid, p.cmdline()) for p in survivors]}"
    return proc.returncode, err, started
