"""How the pipeline grows with the corpus (issue 13): seconds and peak memory per stage at several sizes.

The shared corpus (every abstract source in ``../shared/data`` through ``ingest``, about 4.6k abstracts)
is replicated to N abstracts: copy ``c`` of an abstract gets new identifiers and a light,
length-preserving variation (digits rotated by ``c``, two inner letters swapped in every seventh long
word), so exact de-duplication keeps every copy and section offsets stay valid. Each size is built
from scratch by the demo's stages and settings (``builder/configs/demo.yaml``), one stage per
subprocess, so the peak resident memory of each stage is its own (``os.wait4``).

A claim sentence that the variation leaves unchanged (no digit, no long word at a varied position)
repeats across copies and is embedded once per build; the mine stage's embedding-cache counts (texts,
distinct texts, from the cache: always 0 here, each size builds with a fresh cache) are reported per
size, so the share of repeated sentences that mining did not pay for is visible.

Reported per stage and size: wall seconds, peak RSS in MiB; per stage the growth exponent (slope of
log seconds on log N over the sizes run) and, from the largest size and that exponent, the time
at 200k abstracts (the paper's corpus). Results are written after every size; ``--resume`` keeps
the sizes already written (same precision) and runs only the others; the machine record of the run it resumes is
kept inside the new one. Run: ``python benchmarks/scale.py [--sizes 5000 20000 80000] [--precision bfloat16]``
(the embedding precision of the mine stage, see builder/embeddings.py; writes benchmarks/results/scale.json and
scale.md, for another precision scale-PRECISION.json and .md, with the machine, its state at the start and the load
averages; minutes per size on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import claims as claims_bench
from results_files import load_averages, machine_fields, write_results

from biodivergence_dataset import io
from biodivergence_dataset.records import Abstract
from builder import build
from builder.embeddings import PRECISIONS

WORK = claims_bench.WORK / "scale"
PAPER_CORPUS = 202_180
DEMO_CONFIG = ROOT / "builder" / "configs" / "shared_sources_build.yaml"
#: What a machine record read back from an older results file says of a field that format did not measure.
NOT_RECORDED = "not recorded"
_DIGITS = [str.maketrans("0123456789", "".join(str((d + c) % 10) for d in range(10))) for c in range(10)]


def varied(text: str, copy: int) -> str:
    """A length-preserving variant of ``text`` for copy ``copy`` (copy 0 is the text itself)."""
    if copy == 0:
        return text
    text = text.translate(_DIGITS[copy % 10])
    words = text.split(" ")
    for i in range(copy % 7, len(words), 7):
        w = words[i]
        if len(w) >= 6 and w.isalpha():
            j = 1 + copy % (len(w) - 3)
            words[i] = w[:j] + w[j + 1] + w[j] + w[j + 2:]
    return " ".join(words)


def replicated_source(base: list[Abstract], n: int) -> Path:
    """A JSONL source of ``n`` abstracts in the project's Abstract schema (domains pinned as ingested)."""
    path = WORK / f"abstracts-{n}.jsonl"
    if path.exists():
        return path
    rows = []
    for k in range(n):
        a, copy = base[k % len(base)], k // len(base)
        rows.append(json.dumps({
            "pmid": str(90_000_000 + k), "title": varied(a.title, copy), "text": varied(a.text, copy),
            "year": a.year, "domain": a.domain, "mesh_terms": a.mesh_terms,
            "sections": [{"label": s.label, "start": s.start, "end": s.end} for s in a.sections],
        }, ensure_ascii=False))
    io.write_text_atomic(path, "\n".join(rows) + "\n")
    return path


def build_config(source: Path, n: int, precision: str) -> Path:
    """The demo's build config with the replicated source, the mine stage's embedding ``precision`` and no
    gold check (it does not depend on N)."""
    import yaml

    config = yaml.safe_load(DEMO_CONFIG.read_text(encoding="utf-8"))
    config.pop("sources_from", None)
    config.pop("goldcheck", None)
    config["sources"] = [f"jsonl:{source}"]
    for section in ("ingest", "annotate"):
        config[section] = {**(config.get(section) or {}), "progress": False}
    if precision != PRECISIONS[0]:
        config["mine"] = {**(config.get("mine") or {}), "precision": precision}
    path = WORK / f"build-{n}.yaml"
    io.write_text_atomic(path, yaml.safe_dump(config))
    return path


def run_one_stage(config_path: str, work: str, name: str) -> None:
    """(In a subprocess) run one build step of ``config_path`` into ``work``."""
    config = build.load_config(config_path)
    sources = build.resolve_sources(config, Path(config_path).parent)
    index, step = next((i, s) for i, s in enumerate(build.STEPS, 1) if s.name == name)
    build.run_step(step, index, Path(work), config, sources)


def timed_stage(config: Path, work: Path, name: str) -> dict:
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, __file__, "--one-stage", str(config), str(work), name], cwd=ROOT,
                            stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"stage {name} failed at {work}")
    return {"seconds": round(time.perf_counter() - start, 2), "peak_rss_mib": round(usage.ru_maxrss / 1024, 1)}


def exponent(sizes: list[int], seconds: list[float]) -> float | None:
    """Slope of log(seconds) on log(N) (least squares), or None with fewer than two sizes."""
    if len(sizes) < 2:
        return None
    return round(float(np.polyfit(np.log(sizes), np.log(np.maximum(seconds, 1e-3)), 1)[0]), 3)


def embedding_counts(work: Path) -> dict:
    """The mine stage's embedding-cache counts and seconds per step of the build in ``work``."""
    stats = io.read_stats(work / "pairs")
    return {**stats["embedding_cache"], "mine_seconds": stats["seconds"]}


def previous_results(precision: str) -> dict:
    """The last results written with this embedding ``precision`` (empty if none)."""
    path = results_stem(precision).with_suffix(".json")
    last = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    return last if last.get("embedding_precision") == precision else {}


def machine_record(recorded: dict) -> dict:
    """``recorded`` (the ``machine`` of results read back) in the fields this script writes and renders.

    Results written before the machine was named by ``results_files`` (the committed ones among them) carry ``cpus``
    and a hand-written ``state`` instead. They are read, not re-measured, so that ``--resume`` redraws them without
    hours of re-runs; what such a record never measured (the architecture, the load state and the load average at the
    start) reads ``NOT_RECORDED`` rather than a guess, and the hand-written state is kept as ``state_noted``."""
    if "cpus" not in recorded:
        return recorded
    kept = {k: v for k, v in recorded.items() if k not in ("cpus", "state")}
    return {**kept, "machine": f"{recorded['cpus']} cores, architecture {NOT_RECORDED}",
            "machine_state": NOT_RECORDED, "load_average_1min_at_start": NOT_RECORDED,
            "state_noted": recorded["state"]}


def main(sizes: list[int], precision: str, resume: bool) -> dict:
    base = sorted(io.read_records(claims_bench.shared_corpus(), Abstract), key=lambda a: a.article_uid)
    last = previous_results(precision) if resume else {}
    runs, embedding = last.get("runs", {}), last.get("mine_embedding", {})
    done = sorted(n for n in sizes if str(n) in runs)
    if done == sizes:  # nothing to run: the results again, as this code summarises them
        result = summary(base, done, runs, embedding, precision, machine_record(last["machine"]))
        write(result)
        return result
    load_before = load_averages()
    machine = {"python": platform.python_version(), **machine_fields(load_before),
               "load_average_1min_at_start": load_before[0]}
    if last:
        machine["before_resume"] = machine_record(last["machine"])
    for n in sizes:
        if n in done:
            continue
        work = WORK / f"work-{n}"
        shutil.rmtree(work, ignore_errors=True)
        config = build_config(replicated_source(base, n), n, precision)
        runs[str(n)] = {step.name: timed_stage(config, work, step.name) for step in build.STEPS}
        embedding[str(n)] = embedding_counts(work)
        done = sorted([*done, n])
        print(f"{n} abstracts: " + ", ".join(f"{k} {v['seconds']} s / {v['peak_rss_mib']} MiB"
                                              for k, v in runs[str(n)].items()), flush=True)
        machine["load_average_1min_at_end"] = load_averages()[0]
        result = summary(base, done, runs, embedding, precision, machine)
        write(result)
    return result


def timed_stages(runs: dict, sizes: list[int]) -> list[str]:
    """The stages that every one of ``sizes`` has figures for in ``runs``, in the order they ran.

    A run times every stage of today's build; results written before the build grew stages (gather, questions,
    evidence_map, goldcheck: the committed ones among them) lack those, and a resumed run may mix both, so growth is
    fitted over the stages measured at every size rather than over ``build.STEPS``."""
    return [name for name in runs[str(sizes[0])] if all(name in runs[str(n)] for n in sizes)]


def summary(base: list[Abstract], sizes: list[int], runs: dict, embedding: dict, precision: str,
            machine: dict) -> dict:
    """Growth exponents and the extrapolation to the paper's corpus from the sizes run so far, with the record of
    the ``machine`` they ran on."""
    largest = str(max(sizes))
    growth = {}
    for name in timed_stages(runs, sizes):
        exp = exponent(sizes, [runs[str(n)][name]["seconds"] for n in sizes])
        at_largest = runs[largest][name]["seconds"]
        growth[name] = {"exponent": exp, "seconds_at_paper_corpus": None if exp is None else
                             round(at_largest * (PAPER_CORPUS / int(largest)) ** exp, 1),
                             "seconds_at_paper_corpus_at_least_linear": None if exp is None else
                             round(at_largest * (PAPER_CORPUS / int(largest)) ** max(exp, 1.0), 1)}
    total = [g["seconds_at_paper_corpus"] for g in growth.values()]
    linear = [g["seconds_at_paper_corpus_at_least_linear"] for g in growth.values()]
    return {
        "machine": machine,
        "embedding_precision": precision, "base_abstracts": len(base), "sizes": sizes,
        "runs": {str(n): runs[str(n)] for n in sizes},
        "mine_embedding": {str(n): embedding[str(n)] for n in sizes}, "growth": growth, "paper_corpus_abstracts": PAPER_CORPUS,
        "extrapolated_minutes_at_paper_corpus": None if None in total else round(sum(total) / 60, 1),
        "extrapolated_minutes_at_paper_corpus_at_least_linear": None if None in linear else round(sum(linear) / 60, 1),
        "goals": {"exponent_max": 1.15, "neighbour_search_exponent_max": 1.3, "peak_rss_gib_at_80k": 4,
                  "minutes_at_200k_on_2_cores": 45},
    }


def results_stem(precision: str) -> Path:
    """``scale`` (.json, .md) for the default precision, ``scale-<precision>`` for another."""
    return RESULTS / f"scale{'' if precision == PRECISIONS[0] else '-' + precision}"


def write(result: dict) -> None:
    write_results(results_stem(result["embedding_precision"]), result, render(result))


def machine_sentence(m: dict) -> str:
    """The Markdown's words for the machine record ``m``: the machine, its state and load at the start, the load at
    the end, and, where there is one, the state noted by hand in an older record and the pointer to the run resumed."""
    noted = f"; noted by hand: {m['state_noted']}" if "state_noted" in m else ""
    resumed = "; resumed: the run before is described under `machine.before_resume` in the JSON"
    return (f"{m['machine']}; machine state at the start: {m['machine_state']}; load average "
            f"{m['load_average_1min_at_start']} at the start and {m['load_average_1min_at_end']} at the end"
            f"{noted}{resumed if 'before_resume' in m else ''}")


def render(result: dict) -> str:
    sizes = [str(n) for n in result["sizes"]]
    lines = ["# Pipeline scale (benchmarks/scale.py)", "",
             (f"Shared corpus ({result['base_abstracts']} abstracts) replicated with variation; demo settings, "
              f"mine stage embeddings in {result['embedding_precision']}; {machine_sentence(result['machine'])}."),
             "", "| stage | " + " | ".join(f"{n}: s / MiB" for n in sizes) + " | exponent | s at 202k |",
             "|---" * (len(sizes) + 3) + "|"]
    for name, g in result["growth"].items():
        cells = [f"{result['runs'][n][name]['seconds']} / {result['runs'][n][name]['peak_rss_mib']}" for n in sizes]
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {g['exponent']} | {g['seconds_at_paper_corpus']} |")
    lines += ["", (f"Extrapolated total at {result['paper_corpus_abstracts']} abstracts: "
              f"{result['extrapolated_minutes_at_paper_corpus']} minutes with the fitted exponents; "
              f"{result.get('extrapolated_minutes_at_paper_corpus_at_least_linear')} minutes if no stage grows "
              "slower than linearly past the largest size (fixed costs at the small sizes, such as loading the "
              "encoder, flatten a fitted exponent). Goal: ≤ 45 minutes on 2 cores."), "",
              "Claim sentences the mine stage embedded (each distinct sentence once; the cache starts empty):", "",
              "| abstracts | claim sentences | distinct | repeated share | embed s | search s | slot similarity s |",
              "|---|---|---|---|---|---|---|"]
    for n in sizes:
        e = result["mine_embedding"][n]
        repeated = 1 - e["unique_texts"] / e["texts"] if e.get("texts") else None
        secs = e["mine_seconds"]
        lines.append(f"| {n} | {e.get('texts')} | {e.get('unique_texts')} | "
                     f"{None if repeated is None else round(repeated, 3)} | {secs.get('embed')} | "
                     f"{secs.get('search_and_score')} | {secs.get('slot_similarity')} |")
    return "\n".join(lines + [""])


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--one-stage":
        run_one_stage(*sys.argv[2:])
        sys.exit(0)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[5000, 20000, 80000])
    parser.add_argument("--precision", choices=PRECISIONS, default=PRECISIONS[0])
    parser.add_argument("--resume", action="store_true",
                        help="keep the sizes already in the results file of this precision")
    args = parser.parse_args()
    sizes = sorted(args.sizes)
    if min(sizes) < 1:
        raise SystemExit("sizes must be positive")
    main(sizes, args.precision, args.resume)
