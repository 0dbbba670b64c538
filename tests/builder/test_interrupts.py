"""Clean interrupts (issue 29): SIGINT or SIGTERM to a build's PID stops it and every process it started, while
datatrove's ranks run on the local executor; the next run resumes and finishes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import psutil
import pytest
import yaml
from interrupted_build import CONFIG, interrupted_build

from biodivergence_dataset import interrupts
from biodivergence_dataset.interrupts import Terminated, stop_signals
from builder import build

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


@pytest.mark.slow  # about two minutes: a build interrupted, then the build resumed
@pytest.mark.parametrize("signum, ignore_sigint, code", [(signal.SIGTERM, False, 143), (signal.SIGINT, True, 130)])
def test_a_signalled_build_stops_every_worker_and_the_next_run_resumes(tmp_path, signum, ignore_sigint, code):
    config = tmp_path / "build.yaml"
    config.write_text(yaml.safe_dump(CONFIG), encoding="utf-8")
    work = tmp_path / "work"
    rc, err, started = interrupted_build(config, work, signum, ignore_sigint)
    assert rc == code and "interrupted; re-run the same command to resume" in err, err[-2000:]
    assert started >= 3
    assert (work / "abstracts" / "_SUCCESS").exists() and not (work / "claims" / "_SUCCESS").exists()
    outcome = build.build(config, work)
    assert outcome.ok, (outcome.problems, outcome.audit)
    assert [s.status for s in outcome.steps][:2] == ["up to date", "ran"]


@pytest.mark.slow  # a whole build, killed, then resumed
def test_a_build_killed_outright_leaves_no_worker_and_the_next_run_resumes(tmp_path):
    """SIGKILL reaches no handler: the pool workers end by themselves (they watch the build's PID), then the
    forkserver and the resource tracker, which they held open; the next run resumes."""
    config = tmp_path / "build.yaml"
    config.write_text(yaml.safe_dump(CONFIG), encoding="utf-8")
    work = tmp_path / "work"
    rc, _, started = interrupted_build(config, work, signal.SIGKILL, ignore_sigint=False)  # asserts no survivor
    assert rc == -signal.SIGKILL and started >= 3
    assert not (work / "claims" / "_SUCCESS").exists()
    outcome = build.build(config, work)
    assert outcome.ok, (outcome.problems, outcome.audit)
    assert [s.status for s in outcome.steps][:2] == ["up to date", "ran"]
