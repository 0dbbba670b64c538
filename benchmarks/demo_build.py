"""Benchmark: the demo build's stage times (what `make demo` runs), one fresh build into a scratch folder.

Runs ``biodivergence build --config-file builder/configs/demo.yaml`` into a new folder and writes each stage's wall
time, what it saw and kept, and the release's conflict counts to ``benchmarks/results/demo_build.{json,md}``, with the
machine, its state at the start (``results_files.machine_fields``) and the load averages. Figures compare only within
one run.

Usage: python benchmarks/demo_build.py [--config builder/configs/demo.yaml] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from results_files import load_averages, machine_fields, write_results

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"


def conflict_counts(release: Path) -> dict[str, dict[str, int]]:
    """Rows and conflict rows per split of the release's primary config."""
    from biodivergence_dataset import ontology
    from biodivergence_dataset.release import iter_rows, split_names, split_order

    out = {}
    for split in split_order(split_names(release, ontology.DEFAULT_CONFIG)):
        labels = Counter(row["conflict_type"] for _, row in iter_rows(release, ontology.DEFAULT_CONFIG, split))
        out[split] = {"rows": sum(labels.values()),
                      "conflicts": sum(n for c, n in labels.items() if c != ontology.NO_CONFLICT), **labels}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="builder/configs/demo.yaml")
    parser.add_argument("--out", default=None, help="keep the build in this new folder (default: a scratch folder)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.out).resolve() if args.out else Path(tmp) / "demo"
        load_before, started = load_averages(), time.perf_counter()
        subprocess.run([sys.executable, "-m", "biodivergence_cli", "build", "--config-file", args.config,
                        "--out", str(out)], cwd=ROOT, check=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
        wall = time.perf_counter() - started
        stats = json.loads((out / "build_stats.json").read_text(encoding="utf-8"))
        counts = conflict_counts(out / "release")
    stages = [k.removesuffix(".seconds") for k in stats if k.endswith(".seconds")]
    result = {"config": args.config, **machine_fields(load_before), "load_average_at_start": load_before[0],
              "load_average_at_end": load_averages()[0], "wall_seconds": round(wall, 1),
              "stages": {s: {"seconds": stats[f"{s}.seconds"], "seen": stats.get(f"{s}.seen"),
                             "kept": stats.get(f"{s}.kept"), "unit": stats.get(f"{s}.unit")} for s in stages},
              "primary": counts}
    lines = ["# Demo build: stage times", "",
             (f"`biodivergence build --config-file {args.config}` into a fresh folder; {result['machine']}, "
              f"{result['machine_state']} at the start, load average {result['load_average_at_start']:.1f} at the "
              f"start and {result['load_average_at_end']:.1f} at the end; whole command {wall:.0f} s (gold check and "
              "final load included)."), "",
             "| stage | seconds | unit | seen | kept |", "|---|---|---|---|---|"]
    lines += [f"| {s} | {v['seconds']} | {v['unit'] or ''} | {v['seen'] if v['seen'] is not None else ''} | "
              f"{v['kept'] if v['kept'] is not None else ''} |" for s, v in result["stages"].items()]
    lines += ["", "Primary config of the release:", "", "| split | rows | conflict rows |", "|---|---|---|"]
    lines += [f"| {split} | {c['rows']} | {c['conflicts']} |" for split, c in counts.items()]
    write_results(RESULTS / "demo_build", result, "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
