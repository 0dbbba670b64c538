"""Benchmark (check part): the question answerer and what it replaced, scored once on items nobody tuned on.

1. The answerer's report on the check part (``builder.reader.answer_eval``): relevance and yes / no accuracy per
   source (PubMedQA: the answer read from the expert conclusion), and sentence-level question assignment on the
   Evidence Inference prompts of check articles beside the embedding-cosine floor.
2. Open pairs (no declared question): of pairs of expert findings from two different check articles (two
   questions: no pair among them is a conflict), the share the default annotator labels a conflict, beside the
   rule it replaced (each claim read against the other, a conflict when the reader's averaged stance is "no").
3. Throughput on one core, the machine state named: claims assigned per second by the lexicon rules
   (``answers`` over a compiled pack) and by the answerer (3 candidate questions a claim); claims read per
   second by the finding reader and by the answerer.

Writes ``benchmarks/results/answerer.json`` and ``answerer.md``.
Usage: python benchmarks/answerer.py [--pairs 600]
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

import torch
from results_files import load_averages, machine_fields, write_results

from biodivergence_dataset import ontology
from builder.annotators.reader_annotator import ReaderAnnotator
from builder.embeddings import load_encoder
from builder.goldsources import make_claim, make_pair
from builder.reader.answer_eval import evaluate_answerer, render_answerer_report
from builder.reader.model import NO
from builder.reader.reader_examples import ei_findings, in_part

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
RESULTS = ROOT / "benchmarks" / "results" / "answerer"
DOMAIN = "clinical_trials_epidemiology"


def unrelated_pairs(n: int, seed: int = 0):
    """Pairs of expert evidence texts from two different check articles, as sentences of abstracts."""
    findings = [f for f in ei_findings(DATA / "evidence_inference") if in_part("evidence_inference", f.prompt.pmcid,
                                                                               "heldout")]
    rng, out = random.Random(seed), []
    while len(out) < n:
        a, b = rng.sample(findings, 2)
        if a.prompt.pmcid != b.prompt.pmcid:
            out.append(make_pair(make_claim(f"pmc:{a.prompt.pmcid}", a.text, DOMAIN, "bench"),
                                 make_claim(f"pmc:{b.prompt.pmcid}", b.text, DOMAIN, "bench"), "A.", "B."))
    return out


def replaced_rule(ra, rb) -> bool:
    """The rule open pairs had before (each claim read against the other): a conflict when the reader's stance,
    averaged over both readings, is most likely "no"."""
    mean = {s: (ra.stance_probs[s] + rb.stance_probs[s]) / 2 for s in ontology.READER_STANCES}
    return max(mean, key=mean.get) == NO


def open_pairs(n: int) -> dict:
    annotator = ReaderAnnotator()
    pairs = unrelated_pairs(n)
    labels = annotator.annotate_many(pairs)
    readings = annotator.reader.read([ask for p in pairs for ask in annotator.asks(p)])
    old = sum(replaced_rule(readings[2 * i], readings[2 * i + 1]) for i in range(len(pairs)))
    conflicts = sum(lab.conflict_type != ontology.NO_CONFLICT for lab in labels)
    return {"pairs": len(pairs), "annotator_conflicts": conflicts, "replaced_rule_conflicts": old,
            "notes": {k: sum(lab.notes == k for lab in labels) for k in {lab.notes for lab in labels}}}


def throughput(n_claims: int = 200) -> dict:
    """Claims per second on one torch thread, rules against the learned parts."""
    from builder import questions
    from builder.questionpacks import load_questions
    from builder.questions.compiled import compile_questions
    from builder.questions.filters import claim_words
    from builder.questions.lexicon import COHEN_PACK, LEXICON, load_lexicon
    from builder.questions.match import answers, claim_may_answer
    from builder.reader.answerer import load_answerer
    from builder.reader.model import load_reader

    torch.set_num_threads(1)
    pack = ROOT / "builder" / "questionpacks" / "cohen2006_drug_classes.yaml"
    compiled = compile_questions(load_questions(str(pack)), load_lexicon(LEXICON, (str(COHEN_PACK),)))
    config = questions.QuestionsConfig()
    texts = [f.text for f in ei_findings(DATA / "evidence_inference")][:n_claims]
    out = {}
    t0 = time.perf_counter()
    for t in texts:
        words = claim_words(t)
        if claim_may_answer(t, "", words, compiled, config):
            answers(t, "", [0.5] * len(compiled), compiled, config, words)
    out["rules_assign_claims_per_s"] = round(len(texts) / (time.perf_counter() - t0), 1)
    answerer, reader = load_answerer(), load_reader()
    qs = [c.question.text for c in compiled[:3]]
    t0 = time.perf_counter()
    answerer.read([(q, t) for t in texts for q in qs])
    out["learned_assign_claims_per_s"] = round(len(texts) / (time.perf_counter() - t0), 1)
    t0 = time.perf_counter()
    reader.read([(qs[0], t) for t in texts])
    out["reader_claims_per_s"] = round(len(texts) / (time.perf_counter() - t0), 1)
    answerer = load_answerer()  # a fresh one: nothing cached
    t0 = time.perf_counter()
    answerer.read([(qs[0], t) for t in texts])
    out["answerer_claims_per_s"] = round(len(texts) / (time.perf_counter() - t0), 1)
    out["claims"] = len(texts)
    return out


def markdown(result: dict) -> str:
    o, t = result["open_pairs"], result["throughput"]
    return "\n".join([
        "# The question answerer and what it replaced (check part)", "",
        render_answerer_report(result["answerer"]), "",
        f"## Open pairs: two findings from different check articles (n {o['pairs']}, none a conflict)", "",
        "| rule | labelled conflict |", "|---|---|",
        (f"| default annotator (a question both claims speak to, answered 'no' each way) | {o['annotator_conflicts']} / "
         f"{o['pairs']} |"),
        (f"| replaced: each claim read against the other, averaged stance 'no' | {o['replaced_rule_conflicts']} / "
         f"{o['pairs']} |"), "",
        f"Why the annotator's rows are no conflict: {o['notes']}.", "",
        (f"## Throughput (one torch thread, {t['claims']} Evidence Inference findings; {result['machine']}, "
         f"{result['machine_state']} at the start, load average {result['load_average_at_start'][0]} before and "
         f"{result['load_average_at_end'][0]} after)"), "",
        "| part | claims / s |", "|---|---|",
        f"| question assignment, lexicon rules (Cohen pack, 14 questions) | {t['rules_assign_claims_per_s']} |",
        f"| question assignment, learned (3 candidate questions a claim) | {t['learned_assign_claims_per_s']} |",
        f"| finding reader (one question a claim) | {t['reader_claims_per_s']} |",
        f"| question answerer (one question a claim) | {t['answerer_claims_per_s']} |", ""])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=600, help="open pairs of findings from different articles")
    args = parser.parse_args()
    from builder.reader.answerer import load_answerer

    load_before = load_averages()
    result = {"answerer": evaluate_answerer(load_answerer(), DATA, encoder=load_encoder()),
              "open_pairs": open_pairs(args.pairs), "throughput": throughput()}
    result.update(machine_fields(load_before), load_average_at_start=load_before, load_average_at_end=load_averages())
    write_results(RESULTS, result, markdown(result))


if __name__ == "__main__":
    main()
