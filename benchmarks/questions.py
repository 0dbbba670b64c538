"""Benchmark: claims per second of the question stage on one core, beside the rule reader and the finding reader.

The claims are the real claims of a built demo (``build/demo/claims``: sentences of the Cohen 2006 drug-class
abstracts; run ``make demo`` first) matched against the demo pack's questions
(``builder/questionpacks/cohen2006_drug_classes.yaml``). Timed separately, in process CPU time with torch on one
thread and the process pinned to one CPU (other load slows the wall clock, not the figures):

- question matching: ``answers`` against every question, each claim with its abstract (the lexical
  part of the stage, its default settings);
- question stage: as the stage runs, reading each claim's words, embedding with MiniLM (no cache) only the
  claims that may answer a question (``claim_may_answer``, the stage's own prefilter) and matching
  those; beside it the stage as it was, embedding every claim;
- rule reader: ``builder.frames.extract_frame`` over the same sentences (caches cleared; ``reader.rule_rate``);
- finding reader: the shipped reader, each claim read against its most similar question, batch 64
  (``reader.reader_rate``).

Writes ``benchmarks/results/questions.json`` and ``questions.md``.
Usage: python benchmarks/questions.py [--claims 1000] [--claims-dir build/demo/claims]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from biodivergence_dataset.threads import cap_threads

cap_threads()  # before numpy and torch size their thread pools

from biodivergence_dataset import io
from biodivergence_dataset.records import Claim
from builder import questionpacks, questions
from builder.embeddings import DEFAULT_MODEL, embed_texts, load_encoder
from builder.questions.compiled import compile_questions
from builder.questions.filters import claim_words
from builder.questions.lexicon import COHEN_PACK, LEXICON, load_lexicon
from builder.questions.match import answers, claim_may_answer

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from reader import one_core, reader_rate, rule_rate  # the reader benchmark's timers
from results_files import load_averages, machine_fields, write_results

RESULTS = ROOT / "benchmarks" / "results" / "questions"
PACK = questionpacks.PACK_DIR / "cohen2006_drug_classes.yaml"


def load_claims(claims_dir: Path, n: int) -> list[Claim]:
    if not claims_dir.is_dir():
        raise SystemExit(f"{claims_dir}: no claims folder; build the demo first (make demo)")
    out = []
    for claim in io.read_records(claims_dir, Claim):
        out.append(claim)
        if len(out) == n:
            break
    return out


def matching(claims: list[Claim], texts: dict[str, str], compiled, config, similarities) -> tuple[float, int]:
    """Claims/s of the lexical matching and how many (claim, question) assignments it made."""
    t0 = time.process_time()
    found = sum(len(answers(claim.sentence, texts.get(claim.article_uid, ""), sims, compiled, config))
                for claim, sims in zip(claims, similarities, strict=True))
    return len(claims) / (time.process_time() - t0), found


def main() -> None:
    import numpy as np

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=int, default=1000, help="claims to match")
    parser.add_argument("--claims-dir", default=str(ROOT / "build" / "demo" / "claims"))
    args = parser.parse_args()
    one_core()
    claims = load_claims(Path(args.claims_dir), args.claims)
    sentences = [c.sentence for c in claims]
    texts = questions.abstract_texts(Path(args.claims_dir).parent / "abstracts", {c.article_uid for c in claims})
    abstracts = [texts.get(c.article_uid, "") for c in claims]
    load_start = load_averages()
    config = questions.QuestionsConfig(pack=str(PACK))
    compiled = compile_questions(questionpacks.load_questions(PACK), load_lexicon(LEXICON, (str(COHEN_PACK),)))
    encoder = load_encoder(DEFAULT_MODEL, "cpu", config.precision)
    q_emb = embed_texts([c.question.text for c in compiled], encoder, None, config.batch_size)
    t0 = time.process_time()
    similarities = embed_texts(sentences, encoder, None, config.batch_size) @ q_emb.T
    embed_s = time.process_time() - t0
    match_rate, found = matching(claims, texts, compiled, config, similarities.tolist())
    every_claim_rate = len(claims) / (embed_s + len(claims) / match_rate)
    t0 = time.process_time()
    words = [claim_words(s, a) for s, a in zip(sentences, abstracts, strict=True)]
    possible = [i for i, (s, a, w) in enumerate(zip(sentences, abstracts, words, strict=True))
                if claim_may_answer(s, a, w, compiled, config)]
    chosen = embed_texts([sentences[i] for i in possible], encoder, None, config.batch_size) @ q_emb.T
    staged = sum(len(answers(sentences[i], abstracts[i], sims, compiled, config, words[i]))
                 for i, sims in zip(possible, chosen.tolist(), strict=True))
    stage_rate = len(claims) / (time.process_time() - t0)
    if staged != found:
        raise SystemExit(f"the stage's prefilter changed the assignments: {staged} vs {found}")
    first = np.argmax(similarities, axis=1)
    asks = [(compiled[int(i)].question.text, s) for i, s in zip(first, sentences, strict=True)]
    result = {
        "claims": len(claims), "questions": len(compiled), "assignments": found,
        "cpu": "one core (process CPU time, torch.set_num_threads(1), pinned)",
        **machine_fields(load_start), "load_average_at_start": load_start,
        "question_matching_claims_per_s": round(match_rate, 1),
        "claims_embedded": len(possible),
        "question_stage_claims_per_s": round(stage_rate, 1),
        "question_stage_embedding_every_claim_claims_per_s": round(every_claim_rate, 1),
        "rule_reader_claims_per_s": round(rule_rate(asks), 1),
        "finding_reader_claims_per_s": round(reader_rate(asks, 64), 1),
        "load_average_at_end": load_averages(),
    }
    md = ["# Question stage and readers (claims per second, one core)", "",
          (f"{result['claims']} claims of the demo build (Cohen 2006 abstracts), each read with its abstract, against "
           f"the {result['questions']} questions of the demo pack with the stage's default settings ({found} "
           f"assignments; the per-article pass after the claims' own, `article_answers`, is not timed). "
           f"Machine: {result['machine']}, {result['machine_state']} at the start, load "
           f"average {load_start} at start and {result['load_average_at_end']} at end; the figures are process "
           "CPU time on one pinned core, so other load slows the wall clock, not them. All rows come from this "
           "one run."),
          "", "| step | claims/s |", "|---|---|",
          f"| question matching (lexicon + slots, all questions) | {result['question_matching_claims_per_s']} |",
          (f"| question stage (matching + MiniLM embedding of the {len(possible)} claims that may answer, "
           f"no cache) | {result['question_stage_claims_per_s']} |"),
          (f"| question stage embedding every claim (before) | "
           f"{result['question_stage_embedding_every_claim_claims_per_s']} |"),
          f"| rule reader (builder.frames.extract_frame) | {result['rule_reader_claims_per_s']} |",
          f"| finding reader (shipped, batch 64) | {result['finding_reader_claims_per_s']} |"]
    write_results(RESULTS, result, "\n".join(md) + "\n")


if __name__ == "__main__":
    main()
