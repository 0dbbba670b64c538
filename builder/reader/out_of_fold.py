"""Out-of-fold scores of the finding reader, on the held-out partition only (``reader_examples.is_heldout``); a reader
trained on the ``fit`` part is scored on the development part instead (``reader_examples.SCORED_ON``), to choose settings.

- per source: accuracy of each head on the held-out examples that carry its label (n beside each);
- Evidence Inference findings: three-way accuracy and macro-F1 (increase / decrease / no_difference) on the
  held-out articles, each asked in one of the question phrasings of training (picked by a hash), and again
  in the phrasing the annotator asks claims in (``reader_examples.ARM_PHRASING``: the reading behind the labels), its
  evidence marked with the prompt's arms if the reader learned them (``model.mark_arms``), beside a TF-IDF +
  logistic-regression floor trained on the other articles' evidence texts (its C chosen by 5-fold
  cross-validation grouped by article on those training articles);
- HealthVer same-claim pairs of held-out claims (the claim is the question): Cohen's κ of
  ``disagreement(...) is not None`` against gold conflict, beside the negation rule's κ (scikit-learn on a
  negation flag, computed here independently of the reader);
- the arms exchanged (a diagnostic, for a reader that learned the arm marks): the held-out findings whose text
  marks an arm, read as asked and with intervention and comparator exchanged, direction flipped back
  (``arm_exchange``): whether the reader takes the direction from the question's arms or from the sentence.

Nothing is tuned on the held-out part: findings and stances are the argmax of each head.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from biodivergence_dataset import ontology
from biodivergence_text import cues

from .model import EFFECTS, FindingReader, disagreement
from .reader_examples import (
    ARM_PHRASING,
    FLOOR_TRAINS_ON,
    SCORED_ON,
    SOURCES,
    EIFinding,
    Part,
    ei_findings,
    in_part,
    load_examples,
    phrasing,
    source_path,
)

THREE_WAY = ontology.READER_FINDINGS[:3]
#: How much κ the reader must gain over the negation rule on HealthVer same-claim pairs (issue 27).
MIN_KAPPA_GAIN = 0.15


def _r(x: float) -> float:
    return round(float(x), 4)


def per_source_accuracy(reader: FindingReader, data_dir: str | Path, sources=SOURCES,
                        part: Part = "heldout") -> dict[str, Any]:
    """Accuracy of each head per source on ``part`` (held-out by default), with n."""
    out: dict[str, Any] = {}
    for source in sources:
        examples = load_examples(source, data_dir, part, arm_marks=reader.config.arm_marks)
        readings = reader.read([(e.question, e.text) for e in examples])
        cell: dict[str, Any] = {}
        for head in ("finding", "stance"):
            pairs = [(getattr(e, head), getattr(r, head)) for e, r in zip(examples, readings, strict=True)
                     if getattr(e, head) is not None]
            if pairs:
                cell[f"{head}_accuracy"] = _r(sum(g == p for g, p in pairs) / len(pairs))
                cell[f"{head}_n"] = len(pairs)
        out[source] = cell
    return out


#: C of the floor's logistic regression: the best of 1 / 3 / 10 by 3-fold cross-validation grouped by
#: article on the training articles only (macro-F1), fixed here so the floor is cheap to refit.
FLOOR_C = 10.0


def tfidf_floor(train_texts: list[str], train_labels: list[str]):
    """TF-IDF (1-2 grams) + logistic regression on evidence texts alone (no question)."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    return make_pipeline(TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True),
                         LogisticRegression(C=FLOOR_C, max_iter=3000)).fit(train_texts, train_labels)


def _three_way(gold: list[str], predicted: list[str]) -> dict[str, Any]:
    from sklearn.metrics import accuracy_score, f1_score

    return {"accuracy": _r(accuracy_score(gold, predicted)),
            "macro_f1": _r(f1_score(gold, predicted, labels=list(THREE_WAY), average="macro", zero_division=0)),
            "n": len(gold)}


def evidence_inference_findings(reader: FindingReader | None, data_dir: str | Path,
                                max_items: int | None = None, part: Part = "heldout") -> dict[str, Any]:
    """The EI findings set: the findings of ``part``'s articles (held-out by default; the first
    ``max_items``), the reader (if given) beside the TF-IDF floor trained on the articles it trained on."""
    findings = ei_findings(source_path("evidence_inference", data_dir))
    train = [f for f in findings if in_part("evidence_inference", f.prompt.pmcid, FLOOR_TRAINS_ON[part])]
    held = [f for f in findings if in_part("evidence_inference", f.prompt.pmcid, part)][:max_items]
    gold = [f.finding for f in held]
    floor = tfidf_floor([f.text for f in train], [f.finding for f in train])
    out: dict[str, Any] = {
        "articles": len({f.prompt.pmcid for f in held}), "train_articles": len({f.prompt.pmcid for f in train}),
        "questions": ("reader: each finding asked in one of reader_examples.QUESTION_TEMPLATES (picked by a hash of its "
                      "text, as in training); reader_as_annotated: each asked in reader_examples.ARM_PHRASING, the "
                      "annotator's"),
        "tfidf_floor": _three_way(gold, list(floor.predict([f.text for f in held])))}
    if reader is not None:
        texts = [reader.marked(f.text, f.prompt.intervention, f.prompt.comparator) for f in held]
        out["reader"] = _read_findings(reader, held, texts, phrasing)
        out["reader_as_annotated"] = _read_findings(reader, held, texts, lambda f: ARM_PHRASING)
    return out


def _read_findings(reader: FindingReader, held: list[EIFinding], texts: list[str],
                   template: Callable[[EIFinding], int]) -> dict[str, Any]:
    """Three-way scores of the reader's findings (``texts``: their evidence as the reader reads it), each asked
    in phrasing ``template(finding)``."""
    readings = reader.read([(f.prompt.question(template(f)), text) for f, text in zip(held, texts, strict=True)])
    cell = _three_way([f.finding for f in held], [r.finding for r in readings])
    cell["not_reported"] = sum(r.finding == ontology.READER_FINDINGS[3] for r in readings)
    return cell


def healthver_same_claim(reader: FindingReader, data_dir: str | Path, max_items: int | None = None,
                         part: Part = "heldout") -> dict[str, Any]:
    """κ of the reader's disagreement on the HealthVer same-claim pairs of ``part``'s claims (held-out by
    default; the first ``max_items``), beside the negation rule's."""
    from sklearn.metrics import cohen_kappa_score

    from ..annotators.reader_annotator import by_answers
    from ..goldsources import healthver_pairs
    from .reader_examples import gold_in_part

    gold = [g for g in healthver_pairs(source_path("healthver", data_dir), with_question=True)
            if gold_in_part(g, part)][:max_items]
    a = reader.read([(g.pair.question.text, g.pair.claim_a.sentence) for g in gold])
    b = reader.read([(g.pair.question.text, g.pair.claim_b.sentence) for g in gold])
    truth = [g.conflict for g in gold]
    predicted = [disagreement(x, y, answers=by_answers(g.pair)) is not None
                 for g, x, y in zip(gold, a, b, strict=True)]
    rule = [cues.has_negation(g.pair.claim_a.sentence) != cues.has_negation(g.pair.claim_b.sentence) for g in gold]
    kappa, rule_kappa = cohen_kappa_score(truth, predicted), cohen_kappa_score(truth, rule)
    return {"pairs": len(gold), "claims": len({g.pair.question.question_id for g in gold}),
            "gold_conflict": sum(truth), "predicted_conflict": sum(predicted),
            "accuracy": _r(sum(p == t for p, t in zip(predicted, truth)) / len(gold)) if gold else 0.0,
            "kappa": _r(kappa), "rule_kappa": _r(rule_kappa), "gain": _r(kappa - rule_kappa),
            "beats_rule": bool(kappa - rule_kappa >= MIN_KAPPA_GAIN)}


def arm_exchange(reader: FindingReader, data_dir: str | Path, max_items: int | None = None,
                 part: Part = "heldout") -> dict[str, Any] | None:
    """How far the reader reads a direction relative to the question's arms: the Evidence Inference findings of
    ``part``'s articles whose text marks an arm (the first ``max_items``), three-way scores of the reading as
    asked and of the reading with the two arms exchanged (question and marks), its increase and decrease swapped
    back; and how many of the effects read as asked are read in the same direction both ways. A reader that
    reads the arms scores alike both ways; one that reads the direction of the sentence's subject scores far
    lower exchanged. None for a reader that learned no marks (the exchanged text would be the same)."""
    if not reader.config.arm_marks:
        return None
    held = [f for f in ei_findings(source_path("evidence_inference", data_dir))
            if in_part("evidence_inference", f.prompt.pmcid, part)]
    found = [(f, marked) for f in held if (marked := f.prompt.marked(f.text)) != f.text][:max_items]
    asked = reader.read([(f.prompt.question(phrasing(f)), marked) for f, marked in found])
    other = [(f, f.prompt.exchanged()) for f, _ in found]
    exchanged = [r.reversed() for r in reader.read([(p.question(phrasing(f)), p.marked(f.text)) for f, p in other])]
    gold = [f.finding for f, _ in found]

    def answered(readings):  # the three-way answer (not_reported left out: every text here answers)
        return [max(THREE_WAY, key=r.finding_probs.get) for r in readings]

    a, x = answered(asked), answered(exchanged)
    effects = [(p, q) for p, q in zip(a, x, strict=True) if p in EFFECTS]
    return {"as_asked": _three_way(gold, a), "exchanged": _three_way(gold, x), "effects": len(effects),
            "effects_same_both_ways": sum(p != q and q in EFFECTS for p, q in effects)}


def goldcheck_sets(reader: FindingReader, data_dir: str | Path, max_items: int | None = None,
                   part: Part = "heldout") -> dict[str, Any]:
    """The reader's two goldcheck sets (items of ``part`` only, held-out by default; the first ``max_items``)."""
    return {"evidence_inference_findings": evidence_inference_findings(reader, data_dir, max_items, part),
            "healthver_same_claim": healthver_same_claim(reader, data_dir, max_items, part)}


#: What each scored part is, as the report states it.
PART_NOTES = {
    "heldout": "20% of the articles / questions / claims of each source (builder.reader.reader_examples.is_heldout)",
    "development": ("the development part: 20% of the training articles / questions / claims of each source "
                    "(builder.reader.reader_examples.is_development); a development score, not a held-out one"),
}


def scored_part(reader: FindingReader) -> Part:
    """The part a reader is scored on: held-out, or development for a reader trained on the ``fit`` part."""
    return SCORED_ON[reader.config.training.get("part", "training")]


def evaluate_reader(reader: FindingReader, data_dir: str | Path) -> dict[str, Any]:
    """The full out-of-fold report written beside a reader's weights, on the part it never trained on
    (``scored_part``)."""
    part = scored_part(reader)
    return {part: PART_NOTES[part], "part": part,
            "per_source": per_source_accuracy(reader, data_dir, part=part),
            **goldcheck_sets(reader, data_dir, part=part), "arm_exchange": arm_exchange(reader, data_dir, part=part),
            "training": reader.config.training}


def render_report(report: dict[str, Any]) -> str:
    """Markdown tables of a reader report (every number with its n)."""
    from ..goldreport import reader_scope

    lines = [f"| source ({reader_scope(report)}) | finding accuracy (n) | stance accuracy (n) |", "|---|---|---|"]
    for source, cell in report["per_source"].items():
        f = f"{cell['finding_accuracy']:.3f} ({cell['finding_n']})" if "finding_n" in cell else "–"
        s = f"{cell['stance_accuracy']:.3f} ({cell['stance_n']})" if "stance_n" in cell else "–"
        lines.append(f"| {source} | {f} | {s} |")
    return "\n".join([*lines, "", render_sets(report)])


def render_sets(report: dict[str, Any]) -> str:
    """Markdown of the two goldcheck sets of a reader (every number with its n; the card renders them alike)."""
    from ..goldreport import reader_sets_table

    return reader_sets_table(report)
