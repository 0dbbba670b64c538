"""What the fault suite's cases share: the case type, running a ``biodivergence`` command in this process, and
the test fixtures the cases build their inputs with (``tests/support/fault_cases.py``, the fake LLM servers).

Importing it puts the repository and ``tests/support/`` first on ``sys.path``, so the case modules import the fixtures
from here.
"""

from __future__ import annotations

import io as text_io
import os
import re
import sys
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "support")]  # the repo first: benchmarks/trainer.py is not the package
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import fault_cases as cases
from llm_server import FakeOllama, FakeOpenAI, Reply, claims_in, interruptible_cli, real_pairs, write_pairs
from release_factory import write_small_release

from biodivergence_cli.main import main as cli_main
from biodivergence_dataset import io

__all__ = ["FAST_LLM", "FINISHED", "REFUSED", "ROOT", "Case", "FakeOllama", "FakeOpenAI", "Reply", "cases", "claims_in", "first_error",
           "ingest_summary", "interruptible_cli", "last_line", "pairs", "real_pairs", "run_cli", "write_pairs",
           "write_small_release"]

FAST_LLM = ("--max-attempts", "2", "--timeout", "5", "--no-progress")
#: How a case's observation starts when the command refused (exit 1) or finished (exit 0): the patterns share them.
REFUSED = r"^exit 1[:;] "
FINISHED = r"^exit 0; "


class Case(NamedTuple):
    """One fault: the issue item it comes from, what is done, what a careful user expects, how to run it (it returns
    what was observed) and ``good``: a regular expression the observation matches when the run behaved as expected."""

    item: str
    name: str
    expected: str
    run: Callable[[Path], str]
    good: str

    def judge(self, observed: str) -> bool:
        """Whether ``observed`` shows the expected behaviour (a crash or a traceback never does)."""
        if observed.startswith("CRASH") or "Traceback" in observed:
            return False
        return re.search(self.good, observed, re.DOTALL) is not None


def run_cli(*argv: str) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of one ``biodivergence`` command run in this process."""
    out, err = text_io.StringIO(), text_io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli_main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def first_error(err: str) -> str:
    return next((line for line in err.splitlines() if "error:" in line), last_line(err))[:240]


def ingest_summary(out: Path) -> str:
    s = io.read_stats(out)
    return (f"seen {s['seen']}, kept {s['kept']}, dropped {io.dropped_counts(s)}, "
            f"identifier_conflicts {s.get('identifier_conflicts')}; faults {s['faults']}")


def pairs(work: Path) -> Path:
    """A folder of 6 real candidate pairs."""
    return write_pairs(work / "pairs", real_pairs(6))
