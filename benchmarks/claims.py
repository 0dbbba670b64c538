"""Benchmark and real-data report of claim extraction (issue 4).

1. Throughput in abstracts per second per core (process CPU time, one process) of the extraction
   function on PubMedQA (structured abstracts) and the SciFact corpus (mostly unstructured), and of
   the whole ``claims`` stage (Parquet in and out) on the shared corpus; wall time beside it.
2. The shared corpus (every source of ``builder/configs/shared_sources.yaml`` through ``ingest``):
   abstract-level yield, claims per abstract and the claim-type distribution, next to the paper's
   69.1%, 2.61 and Table 23.
3. Checks against expert annotations: the share of PubMedQA claims inside the conclusion
   (``LONG_ANSWER``) vs elsewhere; the recall of SciFact evidence sentences among extracted claims.

Run: ``python benchmarks/claims.py`` (writes benchmarks/results/claims.json).
"""

from __future__ import annotations

import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
RESULTS = ROOT / "benchmarks" / "results" / "claims"
WORK = Path(tempfile.gettempdir()) / "biodivergence-bench"
SOURCES = ROOT / "builder" / "configs" / "shared_sources.yaml"
REPEATS = 3
#: Paper figures (§5.1, appendix H, Table 23).
PAPER = {"abstract_yield": 0.691, "claims_per_abstract": 2.61,
         "claim_type_share": {"factual": 0.230, "efficacy": 0.142, "prognostic": 0.142, "correlational": 0.141,
                              "prevalence": 0.126, "causal": 0.098, "mechanistic": 0.072, "recommendation": 0.049}}

sys.path.insert(0, str(ROOT))
from results_files import load_averages, machine_fields, write_results

from biodivergence_dataset import io
from builder import checks, claims, ingest


def extraction_throughput(abstracts: list) -> dict:
    """Best of REPEATS runs of the extraction generator over in-memory abstracts (after a warm-up)."""
    config = claims.ClaimsConfig()
    list(claims.iter_claims(abstracts, config, io.StageStats("claims")))
    cpu, wall = [], []
    for _ in range(REPEATS):
        c0, w0 = time.process_time(), time.perf_counter()
        list(claims.iter_claims(abstracts, config, io.StageStats("claims")))
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return {"abstracts": len(abstracts), "abstracts_per_cpu_second": round(len(abstracts) / min(cpu)),
            "abstracts_per_wall_second": round(len(abstracts) / min(wall))}


def shared_corpus() -> Path:
    """The shared corpus as an ingest stage folder (re-used when current); source paths are relative to the
    repository root."""
    os.chdir(ROOT)
    ingest.run_stage(ingest.read_sources_file(SOURCES), WORK / "abstracts")
    return WORK / "abstracts"


def stage_run(abstracts_dir: Path) -> tuple[dict, dict]:
    out = WORK / "claims"
    (out / io.SUCCESS_MARKER).unlink(missing_ok=True)  # force a full run for timing
    c0, w0 = time.process_time(), time.perf_counter()
    stats = claims.run_stage(abstracts_dir, out)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    n = stats["abstracts"]
    return stats, {"abstracts": n, "abstracts_per_cpu_second": round(n / cpu), "abstracts_per_wall_second": round(n / wall)}


def pubmedqa_conclusion_share() -> dict:
    abstracts = checks.pubmedqa_abstracts(DATA / "pubmedqa_pqal" / "ori_pqal.json", "clinical_trials_epidemiology")
    stats = io.StageStats("claims")
    found = list(claims.iter_claims(abstracts, claims.ClaimsConfig(), stats))
    in_conclusion = sum(c.section == claims.CONCLUSIONS for c in found)
    units = [u for a in abstracts for u in claims.sentence_units(a)]
    conclusion_sentences = sum(u.section == claims.CONCLUSIONS for u in units)
    return {"abstracts": len(abstracts), "claims": len(found), "claims_in_long_answer": in_conclusion,
            "share_in_long_answer": round(in_conclusion / len(found), 4),
            "share_elsewhere": round(1 - in_conclusion / len(found), 4),
            "sentences_in_long_answer": conclusion_sentences, "sentences_elsewhere": len(units) - conclusion_sentences,
            "claim_rate_long_answer": round(in_conclusion / conclusion_sentences, 4),
            "claim_rate_elsewhere": round((len(found) - in_conclusion) / (len(units) - conclusion_sentences), 4),
            "claims_by_section": dict(stats.counts["claims_by_section"]),
            "abstract_yield": stats.figures["abstract_yield"], "claims_per_abstract": stats.figures["claims_per_abstract"]}


def scifact_recall() -> dict:
    docs = checks.scifact_corpus(DATA / "scifact", "genomics")
    stats = io.StageStats("claims")
    found = list(claims.iter_claims(checks.iter_docs(docs), claims.ClaimsConfig(), stats))
    return {**checks.evidence_recall(docs, checks.scifact_evidence_sentences(DATA / "scifact"), found),
            "abstracts": len(docs), "claims": len(found), "abstract_yield": stats.figures["abstract_yield"],
            "claims_per_abstract": stats.figures["claims_per_abstract"]}


def main() -> dict:
    load_before = load_averages()
    pubmedqa = checks.pubmedqa_abstracts(DATA / "pubmedqa_pqal" / "ori_pqal.json", "clinical_trials_epidemiology")
    scifact = list(checks.iter_docs(checks.scifact_corpus(DATA / "scifact", "genomics")))
    abstracts_dir = shared_corpus()
    corpus_stats, stage_speed = stage_run(abstracts_dir)
    result = {
        "machine": {"python": platform.python_version(), **machine_fields(load_before),
                    "load_average_1min": load_averages()[0]},
        "throughput_goal_abstracts_per_second_per_core": 2000,
        "throughput": {
            "extract_pubmedqa": extraction_throughput(pubmedqa),
            "extract_scifact_corpus": extraction_throughput(scifact),
            "stage_shared_corpus_with_parquet_io": stage_speed,
        },
        "shared_corpus": {k: corpus_stats[k] for k in (
            "abstracts", "abstracts_with_claims", "abstract_yield", "claims_per_abstract",
            "claims_per_yielding_abstract", "claim_type_share", "by_domain", "claims_by_section",
            "share_in_conclusions")},
        "shared_corpus_dropped_sentences": io.dropped_counts(corpus_stats),
        "paper": PAPER,
        "pubmedqa_long_answer": pubmedqa_conclusion_share(),
        "scifact_evidence_recall": scifact_recall(),
    }
    write_results(RESULTS, result)
    return result


if __name__ == "__main__":
    out = main()
    t = out["throughput"]
    print(f"extraction, abstracts/s per core (CPU time): PubMedQA {t['extract_pubmedqa']['abstracts_per_cpu_second']}"
          f" | SciFact corpus {t['extract_scifact_corpus']['abstracts_per_cpu_second']}"
          f" | whole stage on the shared corpus {t['stage_shared_corpus_with_parquet_io']['abstracts_per_cpu_second']}"
          f"   (goal 2000; load average {out['machine']['load_average_1min']})")
    s, p = out["shared_corpus"], out["paper"]
    print(f"shared corpus: {s['abstracts']} abstracts, yield {s['abstract_yield']:.1%} (paper {p['abstract_yield']:.1%}),"
          f" {s['claims_per_abstract']:.2f} claims/abstract (paper {p['claims_per_abstract']})")
    print("claim types:", ", ".join(f"{k} {v:.1%} ({p['claim_type_share'][k]:.1%})"
                                    for k, v in s["claim_type_share"].items()))
    q = out["pubmedqa_long_answer"]
    print(f"PubMedQA: {q['share_in_long_answer']:.1%} of {q['claims']} claims in LONG_ANSWER, "
          f"{q['share_elsewhere']:.1%} elsewhere; {q['claim_rate_long_answer']:.1%} of LONG_ANSWER sentences "
          f"are claims vs {q['claim_rate_elsewhere']:.1%} of the other sentences")
    r = out["scifact_evidence_recall"]
    print(f"SciFact: recall of expert evidence sentences {r['recall']:.1%} ({r['recalled']}/{r['evidence_sentences']})")
