"""Scores of the question answerer on one part of the gold sources (the check part by default).

- per source: relevance accuracy (n), and answer accuracy on the relevant texts that answer a yes / no question
  (n); for PubMedQA that is the yes / no answer read from the expert conclusion (issue 58's bar: ≥ 85 %);
- question assignment at the sentence level (``sentence_assignment``): every sentence of the abstract of each
  Evidence Inference prompt of the part's articles, asked the prompt's question in the annotator's neutral
  phrasing; a sentence is gold-relevant when it holds one of the prompt's evidence texts (prompts none of whose
  evidence texts is found in a sentence of the abstract are left out). Precision and recall of
  ``relevance > 0.5`` beside the floor of embedding cosine alone (all-MiniLM-L6-v2, question against sentence),
  whose threshold is the one that maximises F1 on the development articles (fitted there, never on the check
  part).

Nothing is fitted on the scored part: relevance and answers are read at 0.5.
"""

from __future__ import annotations

import unicodedata
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..goldparts import PART_NAMES
from ..sentences import split
from .answer_data import SOURCES, answer_examples
from .answerer import NO, YES, QuestionAnswerer
from .reader_examples import ARM_PHRASING, Part, ei_abstract, ei_findings, in_part, source_path

#: What each part is scored against: a floor's threshold is fitted on the development part.
CHECK: Part = "heldout"
DEVELOPMENT: Part = "training"
#: The development part's tuning part (an answerer trained with ``part: fit`` is scored there), and its name.
TUNING_PART: Part = "development"
TUNING = "tuning (of the development part)"


def _r(x: float) -> float:
    return round(float(x), 4)


def per_source(answerer: QuestionAnswerer, data_dir: str | Path, part: Part = CHECK,
               sources: tuple[str, ...] = SOURCES) -> dict[str, Any]:
    """Relevance and answer accuracy per source on ``part``, with n."""
    out: dict[str, Any] = {}
    for source in sources:
        examples = answer_examples(data_dir, (source,), part)
        answers = answerer.read([(e.question, e.text) for e in examples])
        cell: dict[str, Any] = {"relevance_n": len(examples)}
        if examples:
            cell["relevance_accuracy"] = _r(sum(a.relevant == e.relevant for a, e in zip(answers, examples,
                                                                                       strict=True)) / len(examples))
        answered = [(a, e) for a, e in zip(answers, examples, strict=True) if e.answer in (YES, NO)]
        if answered:
            cell["answer_accuracy"] = _r(sum((YES if a.yes > 0.5 else NO) == e.answer for a, e in answered)
                                         / len(answered))
            cell["answer_n"] = len(answered)
            cell["answered_neutral"] = sum(not a.relevant for a, _ in answered)
        out[source] = cell
    return out


def _assignment_items(data_dir: str | Path, part: Part) -> list[tuple[str, str, bool, str]]:
    """(question, sentence, holds the prompt's evidence, prompt id) for every sentence of every prompt's
    abstract."""
    folder = source_path("evidence_inference", data_dir)
    evidence: dict = defaultdict(set)
    for f in ei_findings(folder):
        if in_part("evidence_inference", f.prompt.pmcid, part):
            evidence[f.prompt].add(f.text)
    items = []
    for prompt in sorted(evidence, key=lambda p: int(p.prompt_id)):
        abstract = ei_abstract(folder, prompt.pmcid)
        if abstract is None:
            continue
        question = prompt.question(ARM_PHRASING)
        rows = [(question, sentence, holds(sentence, evidence[prompt]), prompt.prompt_id)
                for _, body in abstract[1] for sentence in split(" ".join(body.split()))]
        if any(row[2] for row in rows):  # a prompt whose evidence is no sentence of its abstract is left out
            items.extend(rows)
    return items


def normalised(text: str) -> str:
    """Spaces, case and compatibility forms aside (ingest writes NFKC: "µg" in an expert's evidence is "μg" in a
    claim)."""
    return " ".join(unicodedata.normalize("NFKC", text).lower().split())


def holds(sentence: str, evidence: Iterable[str]) -> bool:
    """Whether a sentence holds one of the evidence texts, or (a sentence of over 40 characters) is held by one."""
    s = normalised(sentence)
    return any((e := normalised(text)) in s or (len(s) > 40 and s in e) for text in evidence)


def _precision_recall(gold: list[bool], predicted: list[bool]) -> dict[str, Any]:
    tp = int(sum(bool(g and p) for g, p in zip(gold, predicted, strict=True)))
    n_pred, n_gold = int(sum(map(bool, predicted))), int(sum(map(bool, gold)))  # plain ints: the report is JSON
    return {"precision": _r(tp / n_pred) if n_pred else None, "recall": _r(tp / n_gold) if n_gold else None,
            "predicted": n_pred, "gold": n_gold, "n": len(gold)}


def _cosines(items: list[tuple[str, str, bool, str]], encoder) -> list[float]:
    import numpy as np

    q = encoder.encode([i[0] for i in items], normalize_embeddings=True, batch_size=64)
    s = encoder.encode([i[1] for i in items], normalize_embeddings=True, batch_size=64)
    return list(np.sum(q * s, axis=1))


def _best_threshold(gold: list[bool], scores: list[float]) -> float:
    """The cosine threshold with the best F1 (fitted on the development part only)."""
    best, best_f1 = 0.5, -1.0
    for t in sorted({round(float(x), 2) for x in scores}):
        pr = _precision_recall(gold, [s >= t for s in scores])
        p, r = pr["precision"] or 0.0, pr["recall"] or 0.0
        f1 = 2 * p * r / (p + r) if p + r else 0.0
        if f1 > best_f1:
            best, best_f1 = t, f1
    return best


def sentence_assignment(answerer: QuestionAnswerer, data_dir: str | Path, part: Part = CHECK,
                        encoder=None, floor_items: int = 4000) -> dict[str, Any]:
    """Precision / recall of the answerer's relevance over the sentences of each prompt's abstract in ``part``,
    beside the embedding-cosine floor (threshold fitted on up to ``floor_items`` development sentences)."""
    items = _assignment_items(data_dir, part)
    gold = [item[2] for item in items]
    relevance = [a.relevance for a in answerer.read([(q, s) for q, s, _, _ in items])]
    out = {"answerer": _precision_recall(gold, [r > 0.5 for r in relevance]),
           "answerer_best_per_article": _precision_recall(gold, _best_of_article(items, relevance, 0.5)),
           "articles_part": part}
    if encoder is not None:
        dev = _assignment_items(data_dir, DEVELOPMENT)[:floor_items]
        threshold = _best_threshold([item[2] for item in dev], _cosines(dev, encoder))
        cosines = _cosines(items, encoder)
        out["cosine_floor"] = {**_precision_recall(gold, [c >= threshold for c in cosines]),
                               "threshold": threshold, "threshold_fitted_on": f"{len(dev)} development sentences"}
        out["cosine_floor_best_per_article"] = _precision_recall(gold, _best_of_article(items, cosines, threshold))
    return out


def _best_of_article(items: list[tuple[str, str, bool, str]], scores: list[float], floor: float) -> list[bool]:
    """For each prompt (its question against its own abstract's sentences), its best-scoring sentence if that
    reaches ``floor``: how ``questions --assigner learned`` keeps one claim per article and question."""
    from ..questions.relevance import best_per_article

    best = best_per_article([(prompt, "", score) for (_, _, _, prompt), score in zip(items, scores, strict=True)])
    return [kept and score >= floor for kept, score in zip(best, scores, strict=True)]


def other_trials(answerer: QuestionAnswerer, data_dir: str | Path, part: Part = CHECK, encoder=None,
                 candidates: int = 3) -> dict[str, Any]:
    """How often the answerer reads another trial's result as answering a prompt of ``part``: each prompt asked
    against the ``candidates`` evidence texts of other articles closest to its question by cosine, as the learned
    assigner asks a claim the questions closest to it. Some such trials test the same comparison, so the share
    read relevant has a floor above 0; what it is for is comparing answerers on one part."""
    import numpy as np

    folder = source_path("evidence_inference", data_dir)
    findings = [f for f in ei_findings(folder) if in_part("evidence_inference", f.prompt.pmcid, part)]
    prompts = sorted({f.prompt for f in findings}, key=lambda p: int(p.prompt_id))
    texts = sorted({(f.prompt.pmcid, f.text) for f in findings})
    questions = [p.question(ARM_PHRASING) for p in prompts]
    similarity = (encoder.encode(questions, normalize_embeddings=True, batch_size=64)
                  @ encoder.encode([t for _, t in texts], normalize_embeddings=True, batch_size=64).T)
    pairs = []
    for i, prompt in enumerate(prompts):
        nearest = [j for j in np.argsort(-similarity[i]) if texts[j][0] != prompt.pmcid][:candidates]
        pairs += [(questions[i], texts[j][1]) for j in nearest]
    relevant = sum(a.relevant for a in answerer.read(pairs))
    return {"read_relevant": _r(relevant / len(pairs)) if pairs else None, "n": len(pairs), "prompts": len(prompts),
            "candidates_per_prompt": candidates}


def evaluate_answerer(answerer: QuestionAnswerer, data_dir: str | Path, part: Part = CHECK,
                      encoder=None) -> dict[str, Any]:
    """The answerer's report on ``part``: per-source accuracies, sentence-level question assignment and (with an
    ``encoder``) how often it reads other trials' results as answers."""
    report = {"part": TUNING if part == TUNING_PART else PART_NAMES.get(part, part), "per_source": per_source(answerer, data_dir, part),
              "sentence_assignment": sentence_assignment(answerer, data_dir, part, encoder)}
    if encoder is not None:
        report["other_trials"] = other_trials(answerer, data_dir, part, encoder)
    return report


def render_answerer_report(report: dict[str, Any]) -> str:
    """The report as a Markdown table (n beside every number)."""
    lines = [f"Question answerer, {report['part']} part (nothing fitted there; read at 0.5)", "",
             "| source | relevance acc (n) | answer acc (n) | answered texts read as not relevant |",
             "|---|---|---|---|"]
    for source, cell in report["per_source"].items():
        rel = f"{cell['relevance_accuracy']:.3f} ({cell['relevance_n']})" if "relevance_accuracy" in cell else "–"
        ans = f"{cell['answer_accuracy']:.3f} ({cell['answer_n']})" if "answer_accuracy" in cell else "–"
        lines.append(f"| {source} | {rel} | {ans} | {cell.get('answered_neutral', '–')} |")
    sa = report["sentence_assignment"]
    lines += ["", "| question assignment (Evidence Inference sentences) | precision | recall | predicted | gold | n |",
              "|---|---|---|---|---|---|"]
    for name in ("answerer", "answerer_best_per_article", "cosine_floor", "cosine_floor_best_per_article"):
        if name in sa:
            c = sa[name]
            lines.append(f"| {name} | {c['precision']} | {c['recall']} | {c['predicted']} | {c['gold']} | {c['n']} |")
    if other := report.get("other_trials"):
        lines += ["", (f"Other trials' results read as answering a prompt: {other['read_relevant']} of n = "
                       f"{other['n']} ({other['candidates_per_prompt']} closest by cosine for each of "
                       f"{other['prompts']} prompts)")]
    return "\n".join(lines)
