"""Benchmark: claims per second of the learned finding reader beside the rule reader, on one core.

The claims are real texts of ``../shared/data``: the held-out HealthVer evidence passages (read against their
claim as the question) and held-out Evidence Inference evidence texts (read against their prompt's question).
The rule reader is ``builder.frames.extract_frame`` (the hand-written finding rules; caches cleared first);
the finding reader is the shipped one (``builder.reader.load_reader()``), its cache fresh, batch size 64 and 1.
Both are timed in process CPU time with torch on one thread and the process pinned to one CPU, so other load
on the machine slows the wall clock, not the figure; the load average is recorded beside it.

Writes ``benchmarks/results/reader.json`` and ``reader.md``. Usage: python benchmarks/reader.py [--claims 400]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from biodivergence_dataset.threads import cap_threads

cap_threads()  # before numpy and torch size their thread pools

from results_files import load_averages, machine_fields, write_results

from builder import frames
from builder.reader import load_reader
from builder.reader.reader_examples import load_examples

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
RESULTS = ROOT / "benchmarks" / "results" / "reader"


def claims(n: int) -> list[tuple[str, str]]:
    """``n`` (question, claim) pairs, half HealthVer, half Evidence Inference (held-out, with a finding)."""
    hv = [(e.question, e.text) for e in load_examples("healthver", DATA, "heldout")]
    ei = [(e.question, e.text) for e in load_examples("evidence_inference", DATA, "heldout") if e.finding]
    return hv[: n // 2] + ei[: n - n // 2]


def rule_rate(pairs: list[tuple[str, str]]) -> float:
    frames.extract_frame.cache_clear()
    t0 = time.process_time()
    for _, text in pairs:
        frames.extract_frame(text)
    return len(pairs) / (time.process_time() - t0)


def reader_rate(pairs: list[tuple[str, str]], batch_size: int) -> float:
    reader = load_reader()
    t0 = time.process_time()
    reader.read(pairs, batch_size=batch_size)
    return len(pairs) / (time.process_time() - t0)


def one_core() -> None:
    """torch on one thread and the process pinned to one CPU (the figures are process CPU time on it)."""
    import torch

    torch.set_num_threads(1)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=int, default=400, help="claims to read")
    args = parser.parse_args()
    one_core()
    pairs = claims(args.claims)
    load_before = load_averages()
    result = {
        "claims": len(pairs), "cpu": "one core (process CPU time, torch.set_num_threads(1), pinned)",
        **machine_fields(load_before), "load_average_at_start": load_before,
        "rule_reader_claims_per_s": round(rule_rate(pairs), 1),
        "finding_reader_claims_per_s_batch64": round(reader_rate(pairs, 64), 1),
        "finding_reader_claims_per_s_batch1": round(reader_rate(pairs[:100], 1), 1),
        "load_average_at_end": load_averages(),
    }
    md = ["# Finding reader throughput (one core)", "",
          (f"{result['claims']} real claims of ../shared/data (held-out HealthVer evidence and Evidence Inference "
          f"evidence texts, each with its question). Machine: {result['machine']}, {result['machine_state']} at "
          f"the start, load average {result['load_average_at_start']} at start and {result['load_average_at_end']} "
          "at end; the figures are process CPU time on one pinned core, so other load slows the wall clock, not "
          "them. All rows come from this one run."),
          "", "| reader | claims/s |", "|---|---|",
          f"| rule reader (builder.frames.extract_frame) | {result['rule_reader_claims_per_s']} |",
          f"| finding reader, batch 64 | {result['finding_reader_claims_per_s_batch64']} |",
          f"| finding reader, batch 1 (first 100 claims) | {result['finding_reader_claims_per_s_batch1']} |"]
    write_results(RESULTS, result, "\n".join(md) + "\n")


if __name__ == "__main__":
    main()
