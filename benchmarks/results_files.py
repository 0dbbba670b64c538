"""What benchmark scripts write beside their figures: the machine and its state, and the results pair.

A figure is read with the machine it was measured on and whether that machine was idle or loaded (1-minute load
average above half the cores) when the measurement began; the results go to ``benchmarks/results/<name>.json``
and ``.md``, written atomically, and the Markdown is printed.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path

from biodivergence_dataset.io import write_json_atomic, write_text_atomic


def machine_fields(load_before: tuple[float, float, float]) -> dict[str, str]:
    """``machine`` (architecture, cores) and ``machine_state`` (idle or loaded) for a run that began at
    ``load_before`` (``os.getloadavg()``)."""
    cores = os.cpu_count() or 1
    return {"machine": f"{platform.machine()}, {cores} cores",
            "machine_state": "loaded" if load_before[0] > cores / 2 else "idle"}


def write_results(stem: Path, result: dict, markdown: str) -> None:
    """``stem``.json (``result``) and ``stem``.md (``markdown``), each atomically; the Markdown is printed."""
    write_json_atomic(stem.with_suffix(".json"), result)
    write_text_atomic(stem.with_suffix(".md"), markdown)
    print(markdown)
