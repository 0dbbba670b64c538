"""The trivial floors of the demo release, measured as ``biodivergence floors`` measures them at release time.

Majority, constant template and stratified random (``trainer.floors``), fitted on ``primary/train`` and scored on
``primary/test`` by the metric with macro-F1 over the train classes and SemSim with all-MiniLM-L6-v2. The release is
only read. Writes ``benchmarks/results/floors_demo.{json,md}``; the metric README's floor table and
``tests/dataset/test_benchmark.py`` read the JSON.

Run: ``python benchmarks/floors.py --release build/demo/release``
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from results_files import load_averages, machine_fields, write_results

from biodivergence_dataset import benchmark
from trainer.floors import measure_floors
from trainer.metric import scoring_module

RESULTS = ROOT / "benchmarks" / "results" / "floors_demo"


def markdown(result: dict) -> str:
    """The floors as a table: one row per declared metric, one column per floor (a random floor's mean ± the standard
    deviation over its draws), the best in bold."""
    systems = list(result["systems"])
    lines = [
        "# Trivial floors of the demo release",
        "",
        (f"- release: {result['release']} ({result['config']}/{result['split']}, n {result['n']}; fitted on "
         f"{result['train_rows']} train rows; random floors: {result['random_draws']} draws from seed {result['seed']})"),
        f"- macro-F1 over the train classes: {', '.join(result['classes'])}",
        (f"- machine: {result['machine']}, {result['machine_state']} (load average {result['load_before']} before, "
         f"{result['load_after']} after); {result['seconds']:.1f} s"),
        "- written by `python benchmarks/floors.py` (the same code as `biodivergence floors`)",
        "",
        "| metric | " + " | ".join(s.replace("_", " ") for s in systems) + " |",
        "|---|" + "---|" * len(systems),
    ]
    for key, best in result["best"].items():
        cells = []
        for name in systems:
            value = result["systems"][name]["scores"].get(key)
            spread = result["systems"][name].get("std", {}).get(key)
            text = "–" if value is None else f"{value:.4f}" + ("" if spread is None else f" ± {spread:.4f}")
            cells.append(f"**{text}**" if name == best["system"] else text)
        lines.append(f"| `{key}` | " + " | ".join(cells) + " |")
    lines += ["", *(f"- **{name.replace('_', ' ')}**: {s['description']}" for name, s in result["systems"].items())]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", default="build/demo/release")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    scoring = scoring_module()
    before, start = load_averages(), time.perf_counter()
    floors = measure_floors(args.release, args.seed, scoring.semsim_encoder(scoring.DEFAULT_SEMSIM_MODEL))
    result = {"release": str(args.release), **floors, "seconds": time.perf_counter() - start,
              **machine_fields(before),
              "load_before": before, "load_after": load_averages(),
              "headline_ids": [b.id for b in benchmark.leaderboards()]}
    write_results(RESULTS, result, markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
