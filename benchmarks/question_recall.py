"""Benchmark (development set): how often the question stage assigns an expert's finding to the question it answers.

Evidence Inference's prompts (intervention, comparator, outcome on one RCT abstract, with the expert's evidence
text) are put as pack entries with ``id`` and ``text`` only, in the issue's wording ("Is O higher, lower, or the
same when comparing I to C?"), and the prompts' abstracts go through the build's own stages as a user's would:
a JSONL source → ``ingest`` → ``claims`` → ``questions``. Only training articles are read
(``builder.reader.reader_examples.in_part``; the held-out articles that score the finding reader stay unseen), a seeded
sample of them. For each prompt whose evidence text is found in its abstract:

- kept: the claims stage kept a sentence holding the evidence (its recall bounds everything after it);
- evidence assigned: such a claim is assigned to the prompt's question;
- article assigned: any claim of the prompt's article is;
- arms read: the pack reads the question's text as the prompt's own intervention and comparator;
- own-article share: of all assignments to the prompts' questions, those from the prompt's own article (a
  prompt is written for one trial: another trial's claim under it is mostly a different comparison or outcome).

Two disjoint samples are scored: ``development`` (the first ``--articles`` articles in seeded order), which the
question stage's rules were written with in view (arms named by role, placebo-like "control group" comparators,
abbreviations an arm phrase defines, arms named by a word of their phrase), and ``check`` (the next ``--articles``),
whose scores are read and its rows never, so a rule fitted to the development sample shows as a gap between them.
Writes ``benchmarks/results/question_recall.json`` and ``question_recall.md``.
Usage: python benchmarks/question_recall.py [--articles 300] [--work build/question_recall]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

from results_files import load_averages, machine_fields, write_results

from biodivergence_dataset import io
from biodivergence_dataset.io import write_text_atomic
from biodivergence_dataset.records import Abstract, Claim
from builder import questionpacks
from builder.questions import Assignment
from builder.reader import reader_examples
from builder.reader.answer_eval import holds, normalised

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "evidence_inference"
RESULTS = ROOT / "benchmarks" / "results"
SOURCE = "evidence_inference"
DOMAIN = "clinical_trials_epidemiology"
TEMPLATE = "Is {o} higher, lower, or the same when comparing {i} to {c}?"


def abstract_record(pmcid: str) -> dict | None:
    """One JSONL row (title, text with inline section labels) of an Evidence Inference article's abstract."""
    if (abstract := reader_examples.ei_abstract(DATA, pmcid)) is None:
        return None
    title, sections = abstract
    parts = [f"{label}: {' '.join(body.split())}" for label, body in sections if body.split()]
    return {"pmcid": f"PMC{pmcid}", "title": title, "text": " ".join(parts), "domain": DOMAIN} if parts else None


def _rank(key: str) -> str:
    return hashlib.sha1(f"question_recall:{key}".encode()).hexdigest()


#: The disjoint samples, in seeded order: the one the rules were written with in view, then one only scored.
PARTS = ("development", "check")


def samples(n_articles: int, drawn_from: str = "training", parts: tuple[str, ...] = PARTS
            ) -> dict[str, tuple[list[dict], dict[str, reader_examples.EIPrompt], dict[str, list[str]]]]:
    """For each of ``PARTS``, in one pass over the training articles in seeded order (each part the next
    ``n_articles`` with an abstract): the JSONL rows, the prompts by question id, and each prompt's evidence texts
    that its abstract holds."""
    evidence: dict[str, list[str]] = defaultdict(list)
    prompts: dict[str, reader_examples.EIPrompt] = {}
    for finding in reader_examples.ei_findings(DATA):
        p = finding.prompt
        if reader_examples.in_part(SOURCE, p.pmcid, drawn_from):
            prompts[f"ei{p.prompt_id}"] = p
            evidence[f"ei{p.prompt_id}"].append(finding.text)
    rows: list[dict] = []
    for pmcid in sorted({p.pmcid for p in prompts.values()}, key=_rank):
        if len(rows) == n_articles * len(parts):
            break
        if (row := abstract_record(pmcid)) is not None:
            rows.append(row)
    out = {}
    for i, part in enumerate(parts):
        part_rows = rows[i * n_articles:(i + 1) * n_articles]
        texts = {row["pmcid"].removeprefix("PMC"): normalised(f"{row['title']} {row['text']}") for row in part_rows}
        found = {qid: [e for e in evidence[qid] if normalised(e) in texts[p.pmcid]]
                 for qid, p in prompts.items() if p.pmcid in texts}
        found = {qid: ev for qid, ev in found.items() if ev}
        out[part] = (part_rows, {qid: prompts[qid] for qid in found}, found)
    return out


def write_inputs(work: Path, rows: list[dict], prompts: dict[str, reader_examples.EIPrompt]) -> tuple[Path, Path]:
    import yaml

    work.mkdir(parents=True, exist_ok=True)
    source = work / "abstracts.jsonl"
    write_text_atomic(source, "".join(json.dumps(r) + "\n" for r in rows))
    pack = work / "pack.yaml"
    entries = [{"id": qid, "text": question_text(p)}
               for qid, p in sorted(prompts.items())]
    write_text_atomic(pack, yaml.safe_dump({"questions": entries}, sort_keys=False, allow_unicode=True))
    return source, pack


def run_stages(work: Path, source: Path, pack: Path, assigner: str = "rules") -> dict[str, float]:
    """The three stages through the command line, as a user runs them; seconds per stage."""
    cli = [str(Path(sys.executable).with_name("biodivergence"))]
    steps = {
        "ingest": [*cli, "ingest", f"jsonl:{source}@{DOMAIN}", "--out", str(work / "abstracts")],
        "claims": [*cli, "claims", str(work / "abstracts"), "--out", str(work / "claims")],
        "questions": [*cli, "questions", str(work / "claims"), "--pack", str(pack), "--out", str(work / "questions"),
                      "--assigner", assigner],
    }
    return {name: timed_run(cmd) for name, cmd in steps.items()}


def timed_run(cmd: list[str]) -> float:
    """Run one command line from the repository root, offline; its wall seconds."""
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, cwd=ROOT, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    return round(time.perf_counter() - t0, 1)


def question_text(prompt: reader_examples.EIPrompt) -> str:
    """A prompt put as a question's text, as a pack entry with ``id`` and ``text`` only holds it."""
    return TEMPLATE.format(o=prompt.outcome, i=prompt.intervention, c=prompt.comparator)


def arms_read(prompt: reader_examples.EIPrompt) -> bool:
    """Whether the pack's reading of a prompt's question text gives the prompt's own intervention and comparator
    (as ``questionpacks`` cleans a phrase, spaces and case aside)."""
    read = questionpacks.read_question(question_text(prompt))

    def same(got: str | None, want: str) -> bool:
        return normalised(got or "") == normalised(questionpacks.clean_phrase(want) or "")

    return same(read.intervention, prompt.intervention) and same(read.comparator, prompt.comparator)


def score(work: Path, prompts: dict[str, reader_examples.EIPrompt], evidence: dict[str, list[str]]) -> dict:
    claims = {c.claim_id: c for c in io.read_records(work / "claims", Claim)}
    article_of = {a.pmcid: a.article_uid for a in io.read_records(work / "abstracts", Abstract)}
    assigned: dict[str, set[str]] = defaultdict(set)
    for a in io.read_records(work / "questions", Assignment):
        assigned[a.question_id].add(a.claim_id)
    by_article: dict[str, list[Claim]] = defaultdict(list)
    for c in claims.values():
        by_article[c.article_uid].append(c)
    n = kept = ev_assigned = art_assigned = own = total = read = 0
    for qid, p in prompts.items():
        n += 1
        read += arms_read(p)
        article = article_of.get(f"PMC{p.pmcid}")
        mine = by_article.get(article, []) if article else []
        holding = {c.claim_id for c in mine if holds(c.sentence, evidence[qid])}
        kept += bool(holding)
        ev_assigned += bool(holding & assigned[qid])
        art_assigned += bool({c.claim_id for c in mine} & assigned[qid])
        total += len(assigned[qid])
        own += sum(claims[c].article_uid == article for c in assigned[qid])
    return {"prompts": n, "claims": len(claims), "assignments": total, "arms_read": read, "kept": kept,
            "evidence_assigned": ev_assigned, "article_assigned": art_assigned, "own_article": own}


LEARNED_NOTE = ("`rules`: the lexicon and word rules of `builder/questions/` (their rows were read on training "
                "articles); `learned`: `questions --assigner learned`, the question answerer's relevance among the 3 "
                "questions closest by cosine, only the general filters applied. Both columns are scored on the "
                "check articles, whose rows nobody read; the stage seconds are its throughput (one run each).")


def markdown(result: dict, learned: bool = False) -> str:
    parts = result["parts"]
    measures = [("the question's text read as the prompt's intervention and comparator", "arms_read", "prompts"),
                ("claims stage kept the evidence sentence", "kept", "prompts"),
                ("evidence claim assigned to its prompt's question", "evidence_assigned", "prompts"),
                ("… of the prompts whose evidence claim was kept", "evidence_assigned", "kept"),
                ("any claim of the article assigned to its prompt's question", "article_assigned", "prompts"),
                ("assignments from the prompt's own article", "own_article", "assignments")]

    def cell(s: dict, key: str, of: str) -> str:
        return f"{s[key]} / {s[of]} ({s[key] / s[of]:.3f})" if s[of] else f"{s[key]} / 0 (undefined)"

    drawn = ("up to {} check articles (never trained on by the answerer), the same for both assigners".format(
        result["articles"]) if learned else f"{result['articles']} training articles per sample (seeded, disjoint "
                                             "samples)")
    intro = (f"{drawn}; the prompts whose expert "
             f"evidence text is in the abstract, each a pack entry with `id` and `text` only (\"{TEMPLATE}\"); "
             + "; ".join(f"{name}: {p['scores']['claims']} claims, stages {p['seconds']} s" for name, p in parts.items())
             + f"; {result['machine']}, {result['machine_state']} at the start, load average "
               f"{result['load_average_at_end'][0]} at the end.")
    return "\n".join([
        "# Question stage on Evidence Inference prompts", "", intro, "",
        "| measure | " + " | ".join(parts) + " |", "|---|" + "---|" * len(parts),
        *(f"| {name} | " + " | ".join(cell(p["scores"], key, of) for p in parts.values()) + " |"
          for name, key, of in measures), "",
        LEARNED_NOTE if learned else
        ("`development`: the rules for arms named by role, placebo-like \"control group\" comparators, abbreviations "
         "an arm or outcome phrase defines, arms named by a word of their phrase, arms without the form the treatment "
         "takes, add-on questions, each arm named by a word only its phrase has, the comparator named as the control "
         "arm, the whole-abstract reading (`abstract_answers`), a comparator naming no treatment (\"no "
         "exercise\") as the untreated arm, null findings said otherwise (\"not statistically significant\"), "
         "headings inside a sentence, an outcome's head noun before \"of\", arms named inside a bracket with doses and "
         "a placebo in the treatment's form were written with its rows in view, and the cosine at which an article "
         "none of whose claims names the outcome answers with its closest (`article_similarity_alone`) was chosen on "
         "them. `check`: only its scores are read (those of each variant of that rule and of the outcome's head "
         "noun were seen as they were tried), so a gap between the columns is what the rules owe to the development "
         "rows."), ""])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--articles", type=int, default=300, help="training articles to sample")
    parser.add_argument("--work", default=str(ROOT / "build" / "question_recall"), help="work folder (stages)")
    parser.add_argument("--learned", action="store_true",
                        help="score the learned assigner beside the rules on the check articles (goldparts' held-out "
                             "part, which the question answerer never trained on), into question_recall_learned.*")
    args = parser.parse_args()
    if not DATA.is_dir():
        raise SystemExit(f"{DATA}: Evidence Inference is missing (../shared/data beside the repository)")
    if args.learned:  # one sample of check articles, read by both assigners
        check = samples(args.articles, "heldout", ("check",))["check"]
        runs = {f"{a} (check articles)": (check, a) for a in ("rules", "learned")}
    else:
        runs = {part: (sample, "rules") for part, sample in samples(args.articles).items()}
    load_before, parts = load_averages(), {}
    for name, ((rows, prompts, evidence), assigner) in runs.items():
        work = Path(args.work) / name.split()[0]
        source, pack = write_inputs(work, rows, prompts)
        seconds = run_stages(work, source, pack, assigner)
        parts[name] = {"seconds": seconds, "scores": score(work, prompts, evidence)}
    result = {"articles": args.articles, "parts": parts, **machine_fields(load_before),
              "load_average_at_end": load_averages()}
    name = "question_recall_learned" if args.learned else "question_recall"
    write_results(RESULTS / name, result, markdown(result, learned=args.learned))


if __name__ == "__main__":
    main()
