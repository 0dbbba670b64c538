"""Benchmark: agreement of every annotator with the expert-labelled gold sets, side by side, out of fold.

Runs ``biodivergence goldcheck`` for the default annotator (the finding reader), the frames annotator, the
earlier heuristic annotator and (with ``--judge DIR``, a folder made by ``biodivergence judge train
--loso``) the learned judge, with the panel of the members scored on every pair, next to the negation rule,
with bootstrap intervals. Writes ``benchmarks/results/goldcheck.json`` and ``goldcheck.md``.

Usage: python benchmarks/goldcheck.py [--judge build/judge] [--bootstrap 1000]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from results_files import load_averages, machine_fields, write_results

from builder.annotators import DEFAULT_ANNOTATOR
from builder.annotators.goldcheck import goldcheck
from builder.annotators.judge import JudgeSettings
from builder.embeddings import load_encoder
from builder.goldreport import goldcheck_table

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
RESULTS = ROOT / "benchmarks" / "results"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judge", default=None, help="judge folder (with heldout-<source> folds)")
    parser.add_argument("--bootstrap", type=int, default=1000)
    args = parser.parse_args()
    load_before = load_averages()
    specs = [DEFAULT_ANNOTATOR, "frames", "heuristic"] + ([f"judge:{args.judge}"] if args.judge else [])
    result = goldcheck(specs, DATA, n_boot=args.bootstrap, encoder=load_encoder(), parts=True)
    result.update(machine_fields(load_before), load_average_at_end=load_averages()[0])
    if args.judge:
        result["judge_settings"] = vars(JudgeSettings.load(Path(args.judge)))
    lines = ["# Gold agreement of the annotators (out of fold)", "",
             (f"Gold sets from ../shared/data; bootstrap {args.bootstrap}; 'panel' is the weighted consensus of the "
              "members scored on every pair of a set; the reader, scored only on the items it never trained on, "
              f"is not in it. {result['machine']}, {result['machine_state']} at the start."), ""]
    if args.judge:
        s = result["judge_settings"]
        lines += [(f"Judge: {s['base_model']} cross-encoder, {s['epochs']} epoch(s) on {s['train_pairs']} pairs "
                   f"(CPU schedule), calibrated on {s['calibration_pairs']}; each set scored by the fold trained "
                   "without it."), ""]
    write_results(RESULTS / "goldcheck", result, "\n".join(lines + [goldcheck_table(result)]) + "\n")


if __name__ == "__main__":
    main()
