"""Benchmark of the split and audit stages; prints and writes benchmarks/results/split.json.

Input: an annotation stage folder (default ``build/demo/annotations`` from ``make demo``). Side by side:

- raw: a bare ``pyarrow.parquet`` read of the annotation shards and a bare write of the same rows;
- stage: reading validated ``Example`` records, ``split_pool`` (paper rule and ``carve``), writing both
  configs through the release writer, and ``audit_release`` (Table 37 + Tables 17–18 statistics).

Usage: python benchmarks/split.py [ANNOTATIONS_DIR]
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from results_files import load_averages, machine_fields, write_results

from biodivergence_dataset.io import read_records, shard_paths
from biodivergence_dataset.records import Example
from biodivergence_dataset.release import write_config
from builder.audit import audit_release
from builder.split import SplitConfig, split_pool

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "split"


def timed(fn, *args, **kwargs):
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t0


def main(annotations: Path) -> dict:
    load_before = load_averages()
    shards = shard_paths(annotations)
    if not shards:
        raise SystemExit(f"{annotations}: no annotation shards (run `make demo` first or pass a folder)")
    table, raw_read = timed(lambda: pa.concat_tables(pq.read_table(p) for p in shards))
    examples, read = timed(lambda: list(read_records(annotations, Example)))
    n = len(examples)
    figures: dict = {**machine_fields(load_before), "examples": n, "raw_parquet_read_s": round(raw_read, 3),
                     "stage_read_records_s": round(read, 3)}
    with tempfile.TemporaryDirectory() as tmp:
        _, raw_write = timed(pq.write_table, table, Path(tmp) / "raw.parquet")
        figures["raw_parquet_write_s"] = round(raw_write, 3)
        for rule in ("train", "carve"):
            result, seconds = timed(split_pool, examples, SplitConfig(oversized_components=rule))
            sizes = {c: {s: len(r) for s, r in splits.items()} for c, splits in result.configs.items()}
            figures[f"split_pool_{rule}_s"] = round(seconds, 3)
            figures[f"split_pool_{rule}_sizes"] = sizes
            figures[f"split_pool_{rule}_dropped"] = result.report["dropped"]
        release = Path(tmp) / "release"
        _, write = timed(lambda: [write_config(release, c, s) for c, s in result.configs.items()])
        figures["write_both_configs_s"] = round(write, 3)
        _, audit = timed(audit_release, release)
        figures["audit_release_s"] = round(audit, 3)
    figures["split_pool_carve_examples_per_s"] = round(n / figures["split_pool_carve_s"], 1)
    return figures


if __name__ == "__main__":
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build" / "demo" / "annotations"
    result = main(folder)
    print(json.dumps(result, indent=2))
    write_results(RESULTS, result)
