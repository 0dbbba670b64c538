"""Clean interrupts: SIGINT and SIGTERM stop a command and every process it started.

Under :func:`stop_signals`, both signals raise ``KeyboardInterrupt`` in the main thread, also when the shell
started the command with SIGINT ignored (a background job), and every descendant process (datatrove's and
multiprocessing's workers, the forkserver) is stopped before the interrupt unwinds the command; the resource
tracker, which no worker holds open any more, ends when the command exits. So none outlives it. Stages write
their completion markers last, so the next run resumes.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
#: Seconds a descendant gets to exit after SIGTERM before it is killed.
GRACE_S = 5.0


class Terminated(KeyboardInterrupt):
    """The command received SIGTERM (raised like Ctrl-C, so the same clean-up runs)."""

    exit_code = 128 + signal.SIGTERM


def _resource_trackers() -> set[int]:
    """PIDs of the (multiprocessing and multiprocess) resource trackers this process started. They are left to
    end by themselves when this process exits: killed, the next semaphore release would start a new one."""
    import sys

    pids = set()
    for name in ("multiprocessing.resource_tracker", "multiprocess.resource_tracker"):
        tracker = getattr(sys.modules.get(name), "_resource_tracker", None)
        if getattr(tracker, "_pid", None):
            pids.add(tracker._pid)
    return pids


#: Seconds between two scans for descendants: longer than a multiprocessing pool's 0.1 s between the checks at
#: which its thread starts workers in place of those that ended.
RESCAN_S = 0.3


def stop_descendants(grace_s: float = GRACE_S, rounds: int = 3) -> int:
    """Terminate every descendant of this process (SIGTERM, then SIGKILL after ``grace_s``) but the resource
    trackers, which exit with it; returns how many. The scan is repeated (up to ``rounds`` times, ``RESCAN_S``
    apart) while it finds new ones, such as the workers a pool's thread starts in place of those just stopped."""
    import psutil

    stopped = 0
    for i in range(rounds):
        if i:
            time.sleep(RESCAN_S)
        try:
            trackers = _resource_trackers()
            children = [c for c in psutil.Process().children(recursive=True) if c.pid not in trackers]
        except psutil.Error:
            break
        if not children:
            break
        for child in children:
            try:
                child.terminate()
            except psutil.Error:
                pass
        _, alive = psutil.wait_procs(children, timeout=grace_s)
        for child in alive:
            try:
                child.kill()
            except psutil.Error:
                pass
        psutil.wait_procs(alive, timeout=grace_s)
        stopped += len(children)
    return stopped


def _interruption(signum: int) -> KeyboardInterrupt:
    return Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


#: The stop signal received within the current :func:`stop_signals` block, if any.
_received: int | None = None


def _interrupt(signum: int, frame) -> None:
    global _received
    for s in STOP_SIGNALS:  # a second signal while stopping does not cut the clean-up short
        signal.signal(s, signal.SIG_IGN)
    _received = signum
    stop_descendants()
    raise _interruption(signum)


@contextmanager
def stop_signals() -> Iterator[None]:
    """Within the block, SIGINT and SIGTERM stop every descendant process and raise ``KeyboardInterrupt``
    (:class:`Terminated` for SIGTERM) in the main thread; the previous handlers come back after it. Outside the
    main thread (where handlers cannot be set) the block runs as it is.

    The interrupt is what leaves the block, also when the unwinding raised another error on the way (a pool
    whose workers were stopped, say); whatever the unwinding started is stopped too.
    """
    global _received
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.signal(s, _interrupt) for s in STOP_SIGNALS}
    _received = None
    try:
        yield
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt) or _received is not None:
            stop_descendants()
        if _received is not None and not isinstance(exc, KeyboardInterrupt):
            raise _interruption(_received) from exc
        raise
    finally:
        _received = None
        for s, handler in previous.items():
            signal.signal(s, handler)


#: Seconds between two checks of a pool worker's watchdog that the command that started it is still there.
WATCH_S = 1.0


def end_with(pid: int, started: float, every_s: float = WATCH_S) -> None:
    """Start a thread that ends this process (exit code 1) once the process ``pid`` (started at ``started``, its
    ``psutil`` create time, so a reused PID does not count) is gone or a zombie: SIGKILL included, which no handler
    sees.

    For a pool worker: its parent is the forkserver, and the pool's queues keep it blocked for good on a pipe the
    dead command held. Once the workers end, the forkserver and the resource tracker end too (no client holds their
    pipes any more)."""
    import os

    import psutil

    def alive() -> bool:
        try:
            process = psutil.Process(pid)
            return process.create_time() == started and process.status() != psutil.STATUS_ZOMBIE
        except psutil.Error:
            return False

    def watch() -> None:
        while alive():
            time.sleep(every_s)
        os._exit(1)

    threading.Thread(target=watch, name=f"end-with-{pid}", daemon=True).start()


def this_process() -> tuple[int, float]:
    """``(pid, create time)`` of this process, the arguments of :func:`end_with` for the processes it starts."""
    import os

    import psutil

    return os.getpid(), psutil.Process().create_time()
