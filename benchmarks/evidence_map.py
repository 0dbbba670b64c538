"""Benchmark (check part): does an evidence map's pooled direction give a question's expert answer?

The issue's bar is measured on a held-out corpus of trials grouped by review question, each question answered by
one trial: the map's pooled direction must agree with the review's own answer (higher / lower / no difference) on at
least 60 % of them. That corpus is not visible here; its closest visible analogue is Evidence Inference: each prompt
(intervention, comparator, outcome) is a question answered by one randomised trial, and the doctors' label
(significantly increased / decreased / no significant difference) is its answer. Only the **check** articles are
read (``builder.goldparts``: the finding reader never trained there, nobody tuned on them), every one of them with an
abstract, and the prompts whose expert evidence text is in that abstract (the map reads abstracts).

The abstracts go through the build's own stages as a user's would (a JSONL source → ``ingest`` → ``claims`` →
``questions``, the prompts as a question pack of ``id`` and ``text``: ``benchmarks/question_recall.py``'s inputs),
then the evidence-map stage's own functions: every assigned claim read relative to its question by the reader
annotator (``builder.evidence_map_stage.read_claims``) and the maps made by ``builder.evidence_map.evidence_maps``,
with their stated rule (a study's direction: the finding most of its claims report; the pooled direction: the one
most studies report; no difference on a tie). Scored per prompt:

- **pipeline**: the map's pooled direction (a prompt whose question got no claim has no map: a miss);
- **with a map**: the same over the prompts that have one;
- **expert evidence read**: the reader on the doctors' own evidence texts, pooled by the same rule (what the map
  would say if the question stage found exactly the right sentences: the ceiling of the reading);
- **constant**: always "no difference", the commonest answer of the development articles (a floor).

Writes ``benchmarks/results/evidence_map.json`` and ``evidence_map.md``.
Usage: python benchmarks/evidence_map.py [--work build/evidence_map_bench]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import question_recall  # a sibling benchmark: the Evidence Inference inputs and the stage runs
from results_files import load_averages, machine_fields, write_results

from biodivergence_dataset import io, ontology
from biodivergence_dataset.records import Abstract, Claim
from builder.evidence_map import NOT_REPORTED, evidence_maps, pooled
from builder.evidence_map_stage import read_claims
from builder.questions import read_assignments
from builder.reader import reader_examples

RESULTS = ROOT / "benchmarks" / "results" / "evidence_map"
WORDS = ontology.READER_FINDING_WORDS


def expert_answers(drawn_from: str) -> dict[str, str]:
    """Each prompt's answer (``ei<PromptID>``): the label most of its verified annotations give; a prompt whose
    annotators split evenly has none."""
    labels: dict[str, Counter] = defaultdict(Counter)
    for f in reader_examples.ei_findings(question_recall.DATA):
        if reader_examples.in_part(question_recall.SOURCE, f.prompt.pmcid, drawn_from):
            labels[f"ei{f.prompt.prompt_id}"][f.finding] += 1
    out = {}
    for qid, counts in labels.items():
        (top, n), *rest = counts.most_common()
        if not rest or rest[0][1] < n:
            out[qid] = top
    return out


def agreement(predicted: dict[str, str], gold: dict[str, str], over: list[str]) -> dict:
    hits = sum(predicted.get(q) == gold[q] for q in over)
    return {"n": len(over), "agree": hits, "share": round(hits / len(over), 3) if over else None}


def run(work: Path) -> dict:
    from builder.annotators.reader_annotator import ReaderAnnotator

    rows, prompts, evidence = question_recall.samples(10**6, "heldout", ("check",))["check"]
    gold_all = expert_answers("heldout")
    tied = sorted(q for q in prompts if q not in gold_all)
    prompts = {q: p for q, p in prompts.items() if q in gold_all}
    gold = {q: gold_all[q] for q in prompts}
    source, pack = question_recall.write_inputs(work, rows, prompts)
    seconds = question_recall.run_stages(work, source, pack)
    t0 = time.perf_counter()
    questions, by_claim = read_assignments(work / "questions")
    claims = {c.claim_id: c for c in io.read_records(work / "claims", Claim) if c.claim_id in by_claim}
    annotator = ReaderAnnotator()
    read = read_claims(questions, by_claim, claims, annotator)
    stats = io.StageStats("evidence_map", unit="questions")
    maps = {m.question_id: m for m in evidence_maps(questions, read, [], stats)}
    seconds["evidence_map"] = round(time.perf_counter() - t0, 1)
    pipeline = {q: maps[q].pooled_direction if q in maps else NOT_REPORTED for q in prompts}
    asked = [(q, text) for q in prompts for text in evidence[q]]
    readings = annotator.read_against([(questions[q], text) for q, text in asked])
    by_prompt: dict[str, list[str]] = defaultdict(list)
    for (q, _), r in zip(asked, readings, strict=True):
        by_prompt[q].append(r.finding)
    expert_read = {q: pooled(by_prompt[q]) for q in prompts}
    article_of = {a.pmcid: a.article_uid for a in io.read_records(work / "abstracts", Abstract)}
    own = {q: article_of.get(f"PMC{p.pmcid}") for q, p in prompts.items()}
    single = [q for q in maps if q in prompts and {s.article_uid for s in maps[q].studies} <= {own[q]}]
    all_q, mapped = sorted(prompts), sorted(q for q in prompts if q in maps)
    development = Counter(expert_answers("training").values())
    constant = development.most_common(1)[0][0]
    return {
        "articles": len(rows), "prompts": len(prompts), "prompts_tied_out": len(tied),
        "answers": dict(Counter(gold.values())), "development_answers": dict(development),
        "scores": {
            "pipeline (every prompt)": agreement(pipeline, gold, all_q),
            "pipeline, prompts with a map": agreement(pipeline, gold, mapped),
            "pipeline, maps of the prompt's own trial only": agreement(pipeline, gold, sorted(single)),
            "expert evidence read, pooled": agreement(expert_read, gold, all_q),
            f"constant: {WORDS[constant]}": agreement(dict.fromkeys(all_q, constant), gold, all_q),
        },
        "pooled_directions": dict(Counter(pipeline.values())),
        "studies_per_map": dict(Counter(str(m.n_studies) for m in maps.values())),
        "confusion": {f"{WORDS[g]} → {WORDS[p]}": n for (g, p), n in
                      sorted(Counter((gold[q], pipeline[q]) for q in all_q).items())},
        "stage_stats": stats.to_dict(), "seconds": seconds,
    }


def markdown(result: dict) -> str:
    scores = result["scores"]
    lines = ["# Evidence maps: pooled direction against the expert answer (Evidence Inference, check articles)", "",
             f"{result['articles']} check articles (`builder.goldparts`: the finding reader never trained on them), "
             f"{result['prompts']} prompts answered by one trial whose expert evidence is in the abstract "
             f"({result['prompts_tied_out']} left out: their annotators split evenly); answers "
             + ", ".join(f"{WORDS[k]} {v}" for k, v in sorted(result["answers"].items())) + ". The issue's bar: "
             "≥ 60 % on questions answered by a single trial.", "",
             "| reading | n | agree | share |", "|---|---|---|---|"]
    lines += [f"| {name} | {s['n']} | {s['agree']} | {s['share'] if s['share'] is not None else '–'} |"
              for name, s in scores.items()]
    lines += ["", "Pooled directions of the pipeline: " + ", ".join(f"{WORDS[k]} {v}" for k, v in
                                                                     sorted(result["pooled_directions"].items()))
              + "; studies per map: " + ", ".join(f"{k}: {v}" for k, v in sorted(result["studies_per_map"].items(),
                                                                                   key=lambda kv: int(kv[0]))) + ".",
              "", "| expert answer → pooled direction | n |", "|---|---|",
              *(f"| {k} | {v} |" for k, v in result["confusion"].items()), "",
              (f"Stages (s): {result['seconds']}; {result['machine']}, {result['machine_state']} at the start, "
               f"load average {result['load_average_at_end'][0]} at the end."),
              "", ("The rule was stated before this run and not tuned: a study's direction is the finding most of its "
              "claims report, the pooled direction the one most studies report, no difference on a tie. A prompt "
              "with no map counts as a miss in the first row."), ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", default=str(ROOT / "build" / "evidence_map_bench"), help="work folder (stages)")
    args = parser.parse_args()
    if not question_recall.DATA.is_dir():
        raise SystemExit(f"{question_recall.DATA}: Evidence Inference is missing (../shared/data)")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    load_before = load_averages()
    result = run(Path(args.work))
    result.update(machine_fields(load_before), load_average_at_end=load_averages())
    write_results(RESULTS, result, markdown(result))


if __name__ == "__main__":
    main()
