"""Benchmark of the ``mine`` stage (issue 4), and the SciFact check of its scores.

1. Claims per second of the whole mining stage (read claims, load model, embed with a fresh cache,
   neighbour search, scoring, abstracts, Parquet out) next to a bare ``SentenceTransformer.encode``
   of the same claim texts with the same model and batch size, in the same run (goal: stage ≥ 85%).
2. The stage's wall time at N, 2N and 4N claims (goal: each doubling costs ≤ 2.3×).
3. ROC-AUC with which the disagreement and combined scores separate SciFact claim pairs that share
   an evidence abstract with opposite labels (334) from those with the same label (185).

Claims come from the shared corpus (``benchmarks/claims.py`` builds it: ingest → claims), taken in
claim-id order (a hash order, so every subset mixes domains and articles).

Both sides run with the model already loaded and warmed up. Run: ``python benchmarks/mining.py [N]``
(default N=750; writes benchmarks/results/mining.json).
"""

from __future__ import annotations

import os
import platform
import shutil
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "mining"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import claims as claims_bench
from results_files import load_averages, machine_fields, write_results

from biodivergence_dataset import io
from biodivergence_dataset.records import Claim
from builder import checks, claims, embeddings, mine

WORK = claims_bench.WORK / "mining"
REPEATS_AT_4N = 2


def corpus_claims() -> tuple[list[Claim], Path]:
    abstracts_dir = claims_bench.shared_corpus()
    claims.run_stage(abstracts_dir, claims_bench.WORK / "claims")
    found = sorted(io.read_records(claims_bench.WORK / "claims", Claim), key=lambda c: c.claim_id)
    return found, abstracts_dir


def timed_stage(subset: list[Claim], abstracts_dir: Path, name: str) -> tuple[float, float, dict]:
    """Wall and CPU seconds of one full stage run with a fresh embedding cache."""
    claims_dir, out = WORK / f"claims-{name}", WORK / f"pairs-{name}"
    shutil.rmtree(out, ignore_errors=True)
    io.write_records(claims_dir, subset, io.StageStats("claims"))
    config = mine.MineConfig(abstracts_dir=str(abstracts_dir))
    c0, w0 = time.process_time(), time.perf_counter()
    stats = mine.run_stage(claims_dir, out, config)
    return time.perf_counter() - w0, time.process_time() - c0, stats


def run_summary(size: int, wall: float, cpu: float, stats: dict) -> dict:
    return {"claims": size, "wall_seconds": round(wall, 2), "cpu_seconds": round(cpu, 2),
            "claims_per_second": round(size / wall, 1), "pairs": stats["kept"], "stage_seconds": stats["seconds"]}


def bare_encode(texts: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of SentenceTransformer.encode on ``texts`` (model loaded, same settings)."""
    model = embeddings.load_encoder()
    c0, w0 = time.process_time(), time.perf_counter()
    model.encode(texts, batch_size=mine.MineConfig().batch_size, normalize_embeddings=True, convert_to_numpy=True)
    return time.perf_counter() - w0, time.process_time() - c0


def scifact_check() -> dict:
    pairs = checks.scifact_claim_pairs(claims_bench.DATA / "scifact", "genomics")
    return checks.disagreement_auc(pairs, checks.score_labelled_pairs(pairs, embeddings.load_encoder()))


def main(n: int) -> dict:
    load_before = load_averages()
    found, abstracts_dir = corpus_claims()
    if len(found) < 4 * n:
        raise SystemExit(f"only {len(found)} claims in the shared corpus; choose N ≤ {len(found) // 4}")
    embeddings.load_encoder().encode([c.sentence for c in found[:64]])  # load and warm up: both sides timed warm
    texts = [c.sentence for c in found[:4 * n]]
    runs = {label: run_summary(size, *timed_stage(found[:size], abstracts_dir, label))
            for label, size in (("N", n), ("2N", 2 * n))}
    # at 4N the stage and a bare encode alternate (encode, stage, encode, stage, encode) and the best of each
    # is kept, so that drifting machine load does not favour either side
    stage_4n, encodes = [], [bare_encode(texts)]
    for _ in range(REPEATS_AT_4N):
        stage_4n.append(timed_stage(found[:4 * n], abstracts_dir, "4N"))
        encodes.append(bare_encode(texts))
    runs["4N"] = run_summary(4 * n, *stage_4n[0])  # scaling: one run per size, like N and 2N
    best = run_summary(4 * n, *min(stage_4n, key=lambda r: r[0]))
    encode_wall, encode_cpu = min(w for w, _ in encodes), min(c for _, c in encodes)
    stage_rate = best["claims_per_second"]
    encode_rate = round(len(texts) / encode_wall, 1)
    result = {
        "machine": {"python": platform.python_version(), **machine_fields(load_before),
                    "load_average_1min": load_averages()[0]},
        "model": embeddings.DEFAULT_MODEL,
        "throughput_at_4N": {"claims": len(texts), "stage_claims_per_second": stage_rate,
                             "bare_encode_claims_per_second": encode_rate,
                             "stage_vs_bare_encode": round(stage_rate / encode_rate, 3),
                             "stage_vs_bare_encode_cpu_time": round(encode_cpu / best["cpu_seconds"], 3),
                             "goal": 0.85},
        "scaling": {**runs, "2N_over_N": round(runs["2N"]["wall_seconds"] / runs["N"]["wall_seconds"], 3),
                    "4N_over_2N": round(runs["4N"]["wall_seconds"] / runs["2N"]["wall_seconds"], 3), "goal": 2.3},
        "scifact_pairs": scifact_check(),
        "scifact_goal_auc": 0.75,
    }
    write_results(RESULTS, result)
    return result


if __name__ == "__main__":
    out = main(int(sys.argv[1]) if len(sys.argv) > 1 else 750)
    t, s, a = out["throughput_at_4N"], out["scaling"], out["scifact_pairs"]
    print(f"mining stage {t['stage_claims_per_second']} claims/s vs bare encode {t['bare_encode_claims_per_second']}"
          f" claims/s on {t['claims']} claims: {t['stage_vs_bare_encode']:.0%} of wall-time throughput,"
          f" {t['stage_vs_bare_encode_cpu_time']:.0%} of CPU-time throughput (goal 85%)")
    print(f"wall time N/2N/4N: {s['N']['wall_seconds']} / {s['2N']['wall_seconds']} / {s['4N']['wall_seconds']} s;"
          f" doubling costs {s['2N_over_N']}× and {s['4N_over_2N']}× (goal ≤ 2.3×)")
    print(f"SciFact ({a['opposite_label_pairs']} opposite vs {a['same_label_pairs']} same-label pairs): ROC-AUC "
          f"disagreement {a['auc_disagreement']}, combined {a['auc_combined_score']} (goal 0.75)")
    m = out["machine"]
    print(f"load average {m['load_average_1min']} on {m['machine']} ({m['machine_state']} at the start)")
