"""Clean interrupts (issue 29): SIGINT or SIGTERM to a build's PID stops it and every process it started, while
datatrove's ranks run on the local executor; the next run resumes and finishes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest
import yaml

from biodivergence_dataset import interrupts
from biodivergence_dataset.interrupts import Terminated, stop_signals
from builder import build

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"
LOCAL_RUNTIME = REPO / "builder" / "configs" / "runtime" / "local.yaml"  # 4 tasks, 2 workers
#: ~90 abstracts: enough for a release, small enough for a minute's build.
CONFIG = {
    "sources": [f"pubmed_xml:{SHARED / 'readbiomed_pathogens_medline' / 'manual-set' / 'articles-xml-format'}",
                f"pubmed_xml:{SHARED / 'pubmed_xml_ncbiutils'}"],
    "ingest": {"progress": False},
    "mine": {"top_k": 5, "cap_per_domain": 200},
    "annotate": {"annotator": ["heuristic"], "progress": False},
    "split": {"seed": 7, "oversized_components": "carve"},
    "audit": {"plots": False},
    "goldcheck": {"enabled": False},
}
_BUILD_CLI = "import sys; from biodivergence_dataset.cli import main; sys.exit(main(sys.argv[1:]))"


_SLEEPER = ("import subprocess, sys, time; "
            "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)']); time.sleep(120)")


def test_sigterm_raises_where_the_command_is_and_stops_its_children_and_grandchildren():
    with pytest.raises(Terminated), stop_signals():
        child = subprocess.Popen([sys.executable, "-c", _SLEEPER])
        while not (tree := psutil.Process(child.pid).children()):
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(60)  # the handler interrupts this sleep
    child.wait(timeout=10)
    assert not any(p.is_running() and p.status() != psutil.STATUS_ZOMBIE for p in tree)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # the previous handler is back


def test_stopping_also_stops_a_process_started_in_place_of_a_stopped_one(monkeypatch):
    """As a pool's thread starts a worker in place of one that died, this test's thread starts one more child once
    the first is gone; the stop finds it on its next scan."""
    monkeypatch.setattr(interrupts, "RESCAN_S", 3.0)  # ample time for the thread to start it, even on busy cores
    first = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    replacement: list[subprocess.Popen] = []

    def replace() -> None:
        first.wait()
        replacement.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"]))

    thread = threading.Thread(target=replace)
    thread.start()
    try:
        assert interrupts.stop_descendants(grace_s=5) == 2
    finally:
        thread.join()
        for proc in [first, *replacement]:
            proc.kill()
    assert replacement and replacement[0].wait(timeout=10) is not None


def test_an_error_raised_while_an_interrupt_unwinds_leaves_as_the_interrupt_and_its_processes_are_stopped():
    with pytest.raises(Terminated) as caught, stop_signals():
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(60)  # the handler interrupts this sleep
        finally:  # a teardown that fails once its workers are gone, and starts a process on the way
            late = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
            raise FileNotFoundError("the pool's socket is gone")
    assert isinstance(caught.value.__cause__, FileNotFoundError)
    assert late.wait(timeout=10) is not None  # stopped on the way out
    with pytest.raises(FileNotFoundError), stop_signals():  # without a signal, an error is itself
        raise FileNotFoundError("no such file")


def _session(sid: int) -> list[psutil.Process]:
    """Live processes of session ``sid`` (the build and whatever it started; orphans keep their session)."""
    out = []
    for proc in psutil.process_iter():
        try:
            if os.getsid(proc.pid) == sid and proc.status() != psutil.STATUS_ZOMBIE:
                out.append(proc)
        except (psutil.Error, ProcessLookupError, PermissionError):
            continue
    return out


def _interrupted_build(config: Path, work: Path, signum: int, ignore_sigint: bool) -> tuple[int, str, int]:
    """Start the build CLI in its own session; once its ranks run in worker processes, send ``signum`` to its
    PID only. Returns its exit code, its stderr and how many processes it had started."""
    # with SIGINT ignored from the start, as a shell starts a background job (`build … &`)
    ignore = "import signal; signal.signal(signal.SIGINT, signal.SIG_IGN); " if ignore_sigint else ""
    proc = subprocess.Popen([sys.executable, "-c", ignore + _BUILD_CLI, "build", "--config-file", str(config), "--runtime",
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
                    for p in _session(proc.pid)]
            raise AssertionError(f"the build did not end within 60 s of the signal (exit code {proc.poll()}); "
                                 f"alive in its session: {held}") from None
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    deadline = time.monotonic() + 10  # a process the build killed may take a moment to be reaped
    while _session(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    survivors = _session(proc.pid)
    for orphan in survivors:
        orphan.kill()
    assert not survivors, f"processes outlived the build: {[(p.pid, p.cmdline()) for p in survivors]}"
    return proc.returncode, err, started


@pytest.mark.slow  # about two minutes: a build interrupted, then the build resumed
@pytest.mark.parametrize("signum, ignore_sigint, code", [(signal.SIGTERM, False, 143), (signal.SIGINT, True, 130)])
def test_a_signalled_build_stops_every_worker_and_the_next_run_resumes(tmp_path, signum, ignore_sigint, code):
    config = tmp_path / "build.yaml"
    config.write_text(yaml.safe_dump(CONFIG), encoding="utf-8")
    work = tmp_path / "work"
    rc, err, started = _interrupted_build(config, work, signum, ignore_sigint)
    assert rc == code and "interrupted; re-run the same command to resume" in err, err[-2000:]
    assert started >= 3
    assert (work / "abstracts" / "_SUCCESS").exists() and not (work / "claims" / "_SUCCESS").exists()
    outcome = build.build(config, work)
    assert outcome.ok, (outcome.problems, outcome.audit)
    assert [s.status for s in outcome.steps][:2] == ["up to date", "ran"]


def test_a_build_killed_outright_leaves_no_worker_and_the_next_run_resumes(tmp_path):
    """SIGKILL reaches no handler: the pool workers end by themselves (they watch the build's PID), then the
    forkserver and the resource tracker, which they held open; the next run resumes."""
    config = tmp_path / "build.yaml"
    config.write_text(yaml.safe_dump(CONFIG), encoding="utf-8")
    work = tmp_path / "work"
    rc, _, started = _interrupted_build(config, work, signal.SIGKILL, ignore_sigint=False)  # asserts no survivor
    assert rc == -signal.SIGKILL and started >= 3
    assert not (work / "claims" / "_SUCCESS").exists()
    outcome = build.build(config, work)
    assert outcome.ok, (outcome.problems, outcome.audit)
    assert [s.status for s in outcome.steps][:2] == ["up to date", "ran"]
