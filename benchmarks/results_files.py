"""What benchmark scripts write beside their figures: the machine and its state, the load, and the results files.

A figure is read with the machine it was measured on and whether that machine was idle or loaded (1-minute load
average above half the cores) when the measurement began; the machine is shared, so scripts record the load
averages too. The results go to ``benchmarks/results/<name>.json`` (and ``.md`` where the script writes a table),
written atomically. Every benchmark names its machine, reads the load and writes its results through this module,
so the figures of different scripts describe their machine alike.
"""

from __future__ import annotations

import os
import platform
from collections.abc import Sequence
from pathlib import Path

from biodivergence_dataset.io import write_json_atomic, write_text_atomic


def load_averages() -> list[float]:
    """The 1-, 5- and 15-minute load averages now, to two decimals, as results record them."""
    return [round(x, 2) for x in os.getloadavg()]


def machine_fields(load_before: Sequence[float]) -> dict[str, str]:
    """``machine`` (architecture, cores) and ``machine_state`` (idle or loaded) for a run that began at
    ``load_before``: ``load_averages()`` then, or any samples whose first item is the 1-minute load average then
    (that item alone decides the state)."""
    cores = os.cpu_count() or 1
    return {"machine": f"{platform.machine()}, {cores} cores",
            "machine_state": "loaded" if load_before[0] > cores / 2 else "idle"}


def write_results(stem: Path, result: dict, markdown: str | None = None) -> None:
    """``stem``.json (``result``) and, when given, ``stem``.md (``markdown``), each atomically (folders made as
    needed). The Markdown is printed; a script that writes only the JSON gets the path printed instead."""
    json_path = stem.with_suffix(".json")
    write_json_atomic(json_path, result)
    if markdown is None:
        print(f"wrote {json_path}")
        return
    write_text_atomic(stem.with_suffix(".md"), markdown)
    print(markdown)
