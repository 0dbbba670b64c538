"""Wall-clock benchmark of ``biodivergence analyze`` on a release (issue 16: ≤ 5 min with the lexical baseline's
predictions, ≤ 30 min with the reference model's short schedule, on 2 cores).

Runs the command as a child process (niced) and records wall, user and system seconds of the child, the
load averages before and after (the machine is shared), the machine and its state at the start and the command
line.

Run: ``python benchmarks/analyze.py --release DIR --predictions FILE --name lexical`` or
``python benchmarks/analyze.py --release DIR --model DIR --name reference`` (writes
benchmarks/results/analyze.json, one entry per name, and analyze.md).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from results_files import load_averages, machine_fields, write_results

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "analyze"
BUDGET_S = {"predictions": 300, "model": 1800}


def run_analyze(command: list[str]) -> dict:
    """Run the command; wall seconds, the child's CPU seconds, the machine and the load averages around it."""
    before = load_averages()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(["nice", "-n", "10", *command], check=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"wall_s": round(wall, 1), "user_s": round(after.ru_utime - usage.ru_utime, 1),
            "system_s": round(after.ru_stime - usage.ru_stime, 1),
            **machine_fields(before), "load_before": before, "load_after": load_averages()}


def render(results: dict) -> str:
    lines = ["# `biodivergence analyze` wall time", "",
             "| run | predictor | wall s | budget s | user s | load avg before → after (1 min) | machine | command |",
             "|---|---|---|---|---|---|---|---|"]
    for name, r in results.items():
        lines.append(f"| {name} | {r['predictor']} | {r['wall_s']} | {r['budget_s']} | {r['user_s']} | "
                     f"{r['load_before'][0]} → {r['load_after'][0]} | {r['machine']} | `{r['command']}` |")
    return "\n".join(lines + ["", "The machine was shared with other work while these ran (see the load averages)."]) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", required=True)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--predictions")
    source.add_argument("--model")
    parser.add_argument("--name", required=True, help="entry name in the results file")
    parser.add_argument("--out", default="/tmp/biodivergence-analyze-benchmark")
    args = parser.parse_args()
    kind, value = ("predictions", args.predictions) if args.predictions else ("model", args.model)
    command = [str(Path(sys.executable).with_name("biodivergence")), "analyze", "--release", args.release,
               f"--{kind}", value, "--out", f"{args.out}/{args.name}"]
    entry = {"predictor": kind, "budget_s": BUDGET_S[kind], "command": " ".join(command[1:]), **run_analyze(command)}
    previous = RESULTS.with_suffix(".json")
    results = json.loads(previous.read_text(encoding="utf-8")) if previous.exists() else {}
    results[args.name] = entry
    write_results(RESULTS, results, render(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
