"""Benchmark: frame extraction + frames annotation next to the heuristic annotator, on one core.

The pairs are the expert-labelled gold pairs of ``../shared/data`` (SciFact, HealthVer, PubMedQA;
real claim texts, passages of several sentences included). Each annotator runs cold: the frame
and cue caches are cleared first, so extraction is paid inside the timing. Pure-Python work runs
on one core; the process is pinned to one CPU where the OS allows it.

Writes ``benchmarks/results/frames.json`` and ``frames.md``. Usage: python benchmarks/frames.py
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from results_files import load_averages, machine_fields, write_results

from builder import frames
from builder.annotators import heuristic
from builder.annotators.frame_annotator import FramesAnnotator
from builder.annotators.heuristic import HeuristicAnnotator
from builder.goldsources import available_sources, load_gold

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
RESULTS = ROOT / "benchmarks" / "results"
GOAL_PAIRS_PER_S = 500


def _clear_caches() -> None:
    for fn in (frames.extract_frame, frames.extract_frames, heuristic._tokenize, heuristic._content_stems_of,
               heuristic._claim_hits, heuristic._abstract_values):
        fn.cache_clear()


def _timed(annotator, pairs, repeats: int = 3) -> float:
    """Best pairs/s over ``repeats`` cold runs (the least disturbed by other load)."""
    best = 0.0
    for _ in range(repeats):
        _clear_caches()
        t0 = time.process_time()
        for p in pairs:
            annotator.annotate(p)
        best = max(best, len(pairs) / (time.process_time() - t0))
    return best


def main() -> None:
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    load_before = load_averages()
    pairs = list({g.pair.pair_id: g.pair for s in available_sources(DATA) for g in load_gold(s, DATA)}.values())
    _clear_caches()
    t0 = time.process_time()
    for p in pairs:
        frames.extract_frames(p.claim_a.sentence)
        frames.extract_frames(p.claim_b.sentence)
    extraction = 2 * len(pairs) / (time.process_time() - t0)
    result = {
        "pairs": len(pairs), "cpu": "one core (process CPU time)", "load_average_at_start": load_before[0],
        **machine_fields(load_before),
        "frame_extraction_claims_per_s": round(extraction, 1),
        "frames_annotator_pairs_per_s": round(_timed(FramesAnnotator(), pairs), 1),
        "heuristic_annotator_pairs_per_s": round(_timed(HeuristicAnnotator(), pairs), 1),
        "goal_pairs_per_s": GOAL_PAIRS_PER_S,
    }
    result["frames_vs_heuristic"] = round(result["frames_annotator_pairs_per_s"]
                                          / result["heuristic_annotator_pairs_per_s"], 3)
    result["meets_goal"] = result["frames_annotator_pairs_per_s"] >= GOAL_PAIRS_PER_S
    md = ["# Frames annotator throughput (cold caches, one core)", "",
          (f"{result['pairs']} gold pairs from ../shared/data; {result['machine']}, {result['machine_state']} "
           f"(load average {result['load_average_at_start']:.2f} at the start)."),
          "", "| measure | value |", "|---|---|",
          *(f"| {k} | {v} |" for k, v in result.items()
            if k not in ("pairs", "load_average_at_start", "machine", "machine_state"))]
    write_results(RESULTS / "frames", result, "\n".join(md) + "\n")


if __name__ == "__main__":
    main()
