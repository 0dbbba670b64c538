"""Benchmark of the neighbour search of the ``mine`` stage (issue 13, item 5): exact vs approximate.

The claims of the shared corpus (``benchmarks/claims.py`` builds them) are embedded with the default
model, sorted by article, and searched for their top-10 neighbours in other articles twice: with the
exact flat index and with the IVF index the stage uses above ``exact_search_max_rows``. Reported:
seconds of each and the IVF's recall@10 of the exact neighbours, and the same on the embeddings
repeated ``--repeat`` times with small noise (a larger corpus with the real embedding geometry).

Run: ``python benchmarks/neighbours.py [--repeat 4]`` (writes benchmarks/results/neighbours.json).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "neighbours"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import claims as claims_bench
from results_files import load_averages, machine_fields, write_results

from biodivergence_dataset import io
from biodivergence_dataset.records import Claim
from builder import claims, embeddings, mine

K = 10
NOISE = 0.05


def corpus_embeddings() -> tuple[np.ndarray, np.ndarray]:
    """Unit-norm claim embeddings of the shared corpus, rows sorted by article, and the article groups."""
    claims.run_stage(claims_bench.shared_corpus(), claims_bench.WORK / "claims")
    found = sorted(io.read_records(claims_bench.WORK / "claims", Claim), key=lambda c: c.article_uid)
    emb = embeddings.load_encoder().encode([c.sentence for c in found], batch_size=64, normalize_embeddings=True,
                                           show_progress_bar=True)
    return emb.astype(np.float32), np.unique([c.article_uid for c in found], return_inverse=True)[1]


def replicated(emb: np.ndarray, groups: np.ndarray, times: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``times`` noisy copies of the corpus, each copy's articles new groups."""
    rng = np.random.default_rng(seed)
    copies = [emb] + [emb + rng.normal(scale=NOISE, size=emb.shape).astype(np.float32) for _ in range(times - 1)]
    out = np.concatenate(copies)
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    offset = groups.max() + 1
    return out, np.concatenate([groups + i * offset for i in range(times)])


def compare(emb: np.ndarray, groups: np.ndarray) -> dict:
    t0 = time.perf_counter()
    exact, _ = mine.nearest_neighbours(emb, groups, K, exact_max_rows=len(emb))
    t1 = time.perf_counter()
    approx, _ = mine.nearest_neighbours(emb, groups, K, exact_max_rows=0)
    t2 = time.perf_counter()
    recall = float(np.mean([len(set(a[a >= 0]) & set(e[e >= 0])) / max(1, (e >= 0).sum())
                            for a, e in zip(approx, exact)]))
    return {"claims": len(emb), "exact_seconds": round(t1 - t0, 2), "ivf_seconds": round(t2 - t1, 2),
            "ivf_over_exact_time": round((t2 - t1) / (t1 - t0), 3), "ivf_recall_at_10": round(recall, 4)}


def main(repeat: int) -> dict:
    load_before = load_averages()
    emb, groups = corpus_embeddings()
    result = {
        "machine": {"python": platform.python_version(), **machine_fields(load_before),
                    "load_average_1min": load_averages()[0]},
        "model": embeddings.DEFAULT_MODEL, "k": K,
        "corpus": compare(emb, groups),
        f"corpus_x{repeat}_with_noise_{NOISE}": compare(*replicated(emb, groups, repeat)),
    }
    write_results(RESULTS, result)
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=4)
    out = main(parser.parse_args().repeat)
    for name, row in out.items():
        if isinstance(row, dict) and "claims" in row:
            print(f"{name}: {row['claims']} claims, exact {row['exact_seconds']} s, IVF {row['ivf_seconds']} s "
                  f"({row['ivf_over_exact_time']}x), recall@10 {row['ivf_recall_at_10']}")
    m = out["machine"]
    print(f"load average {m['load_average_1min']} on {m['machine']} ({m['machine_state']} at the start)")
