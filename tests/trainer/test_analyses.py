"""``biodivergence analyze``: each analysis on a tiny release with predictors whose behaviour the test controls."""

import json
import os
import tempfile

import pytest
from release_factory import make_example

from biodivergence_cli.main import main
from biodivergence_dataset import card, ontology, release
from biodivergence_dataset.records import AnnotatorLabel, ClaimFrame, FrameSlot
from biodivergence_text import cues
from trainer.analyses import (
    analysis_release,
    annotators,
    confidence,
    counterfactual,
    edits,
    errors,
    leave_domain_out,
    perturbation,
)
from trainer.analyses.predictors import LEXICAL, FilePredictor, Remembered
from trainer.analyses.report import FIGURES, RECORDS, REPORT, SECTIONS

DIRECT = "direct_contradiction"
#: conflict type -> (claim A, claim B, gold axes) templates; {i} keeps every claim distinct
TEMPLATES = {
    ontology.CONTEXTUAL: ("Drug X{i} reduced mortality in children in China.",
                          "Drug X{i} did not reduce mortality in adults in Brazil.", ["population_cohort", "geography"]),
    DIRECT: ("Drug Y{i} reduced mortality in adults in China.", "Drug Y{i} did not reduce mortality in adults in China.", []),
    ontology.NO_CONFLICT: ("Drug Z{i} reduced mortality in adults.", "Drug Z{i} lowered mortality in adults.", []),
}
SIZES = {"train": 30, "validation": 10, "test": 15}
MEMBERS = ("heuristic-v1", "llm-a", "llm-b")


@pytest.fixture(scope="module", autouse=True)
def offline():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")


def frame(text: str) -> ClaimFrame:
    slots = [FrameSlot(axis=h.axis, value=h.value, text=text[h.start:h.end], start=h.start, end=h.end) for h in cues.axis_cues(text)]
    return ClaimFrame(exposure="drug", outcome="mortality", finding="decrease", context=slots)


def opposite(conflict: str) -> str:
    return ontology.NO_CONFLICT if conflict != ontology.NO_CONFLICT else ontology.CONTEXTUAL


def example(i: int):
    conflict = list(TEMPLATES)[i % 3]
    a, b, axes = (t.format(i=i) if isinstance(t, str) else t for t in TEMPLATES[conflict])
    labels = [AnnotatorLabel(annotator_id=m, conflict_type=opposite(conflict) if m == "llm-b" else conflict, confidence=0.9)
              for m in MEMBERS]
    domain = ontology.DOMAIN_NAMES[(i // 3) % len(ontology.DOMAIN_NAMES)]
    return make_example(f"pmid:{2 * i}", f"pmid:{2 * i + 1}", conflict, tuple(axes), domain).model_copy(update={
        "claim_a_text": a, "claim_b_text": b, "abstract_a": a, "abstract_b": b, "evidence_spans": [],
        "frame_a": frame(a), "frame_b": frame(b), "comparability": edits.SAME_QUESTION, "annotator_labels": labels,
        "label_quality": 0.6 if i % 2 else 1.0, "confidence": 0.8, "reconciliation": "",
    })


@pytest.fixture(scope="module")
def tiny_release(tmp_path_factory):
    root, start = tmp_path_factory.mktemp("release"), 0
    splits = {}
    for name, n in SIZES.items():
        splits[name] = [example(i) for i in range(start, start + n)]
        start += n
    release.write_config(root, ontology.DEFAULT_CONFIG, splits)
    card.write_card(root)
    return root


@pytest.fixture(scope="module")
def tiny(tiny_release):
    return analysis_release.load(tiny_release)


class Gold:
    """Copies the gold labels of whatever row it is given (edited rows carry the label their edit implies)."""

    name, labels_new_pairs = "gold", True

    def predict(self, rows):
        return [{"pair_id": r["pair_id"], "conflict_type": r["conflict_type"], "divergence_axes": list(r["divergence_axes"]),
                 "dominant_confounder": r.get("dominant_confounder") or "", "confidence": 1.0} for r in rows]


class ContextBlind:
    """Ignores the claims and their context: every pair is a contextual contradiction on geography."""

    name, labels_new_pairs = "context-blind", True

    def predict(self, rows):
        return [{"pair_id": r["pair_id"], "conflict_type": ontology.CONTEXTUAL, "divergence_axes": ["geography"],
                 "dominant_confounder": "geography"} for r in rows]


class NoConflict:
    """Always no conflict, surer on later claims (confidence grows with the claim number)."""

    name, labels_new_pairs = "no-conflict", True

    def predict(self, rows):
        return [{"pair_id": r["pair_id"], "conflict_type": ontology.NO_CONFLICT, "divergence_axes": [],
                 "dominant_confounder": "", "confidence": int(r["claim_a_text"].split()[1][1:]) / 100} for r in rows]


class ShakyWrong:
    """Right where the label quality is high, wrong where it is low."""

    name, labels_new_pairs = "shaky-wrong", True

    def predict(self, rows):
        return [{"pair_id": r["pair_id"], "conflict_type": r["conflict_type"] if r["label_quality"] >= 0.9 else opposite(r["conflict_type"])}
                for r in rows]


def test_edits_follow_the_frames_and_say_what_the_label_becomes(tiny):
    ctx = next(r for r in tiny.rows if r["conflict_type"] == ontology.CONTEXTUAL)
    assert edits.differing_axes(ctx) == ["population_cohort", "geography"]
    swapped = edits.swap_context(ctx)
    assert cues.axis_values(swapped["claim_a_text"])["population_cohort"] == {"adults"}
    assert cues.axis_values(swapped["claim_b_text"])["population_cohort"] == {"children"}
    assert swapped["conflict_type"] == ontology.CONTEXTUAL
    same = edits.same_context(ctx)
    assert cues.axis_values(same["claim_a_text"]) == cues.axis_values(same["claim_b_text"])
    assert (same["conflict_type"], same["divergence_axes"], same["dominant_confounder"]) == (DIRECT, [], None)
    added = edits.add_context(ctx, "clinical_setting")
    assert "clinical_setting" in edits.differing_axes(added) and added["divergence_axes"][-1] == "clinical_setting"
    assert edits.add_context(ctx, "geography") is None  # already an axis of the pair
    calm = next(r for r in tiny.rows if r["conflict_type"] == ontology.NO_CONFLICT)
    negated = edits.toggle_negation(calm)
    assert cues.has_negation(negated["claim_b_text"]) and negated["conflict_type"] == DIRECT
    assert edits.toggle_negation(ctx)["conflict_type"] == ontology.NO_CONFLICT  # "did not reduce" → "did reduce"
    unrelated = edits.toggle_negation({**calm, "comparability": "different_outcome"})
    assert unrelated["conflict_type"] == ontology.NO_CONFLICT
    assert edits.paraphrase(ctx, 1)["claim_a_text"].startswith("The authors report that drug X")


def test_perturbation_gold_follows_every_edit_and_blind_model_misses_label_changes(tiny):
    gold = perturbation.analyze(tiny, Gold())
    assert gold.pairs == SIZES["test"]
    for f in gold.families:
        assert f.n > 0 and f.expected_rate == 1.0
        assert f.flip_rate == f.label_changed  # the gold flips exactly when the edit changes the label
        if f.label_preserving:
            assert f.flip_rate == 0.0
    blind = {f.family: f for f in perturbation.analyze(tiny, ContextBlind()).families}
    assert all(f.flip_rate == 0.0 for f in blind.values())
    assert blind["negation"].expected_rate < 0.5 and blind["same_context"].expected_rate < 1.0


def test_counterfactual_consistency_is_perfect_for_gold_and_low_when_context_is_ignored(tiny):
    gold = counterfactual.analyze(tiny, Gold())
    n_ctx = sum(r["conflict_type"] == ontology.CONTEXTUAL for r in tiny.rows)
    assert gold.contextual_pairs == gold.identical_n == n_ctx > 0
    assert gold.identical_consistency == gold.new_axis_consistency == 1.0
    assert {a.axis for a in gold.per_axis if a.identical_n} == {"population_cohort", "geography"}
    blind = counterfactual.analyze(tiny, ContextBlind())
    assert blind.identical_consistency == 0.0 and blind.new_axis_consistency < 0.2
    assert all(a.identical_consistency == 0.0 for a in blind.per_axis if a.identical_n)


def test_leave_one_domain_out_holds_each_domain_out(tiny):
    seen = []

    def gold_fitter(train, validation, fold):
        seen.append((fold, {r["domain"] for r in train}, {r["domain"] for r in validation}))
        return Gold()

    result = leave_domain_out.analyze(tiny, {"gold": gold_fitter})  # the lexical fitter runs in the CLI test
    assert [f.domain for f in result.folds] == list(ontology.DOMAIN_NAMES)
    for fold, train_domains, validation_domains in seen:
        assert fold not in train_domains | validation_domains
    for f in result.folds:
        assert f.n_test == sum(r["domain"] == f.domain for r in tiny.rows) > 0
        assert f.n_train == sum(r["domain"] != f.domain for r in tiny.train)
        assert f.scores["gold"]["macro_f1"] == 1.0


def test_confidence_slices_show_where_a_model_fails_on_shaky_labels(tiny):
    result = confidence.analyze(tiny, ShakyWrong())
    quality = {s.bin: s for s in result.slices if s.column == "label_quality"}
    assert quality["0.50–0.70"].accuracy == 0.0 and quality["0.90–1.00"].accuracy == 1.0
    assert sum(s.n for s in quality.values()) == len(tiny.rows) and result.missing["label_quality"] == 0
    assert all(s.accuracy == 1.0 for s in confidence.analyze(tiny, Gold()).slices)


def test_scores_of_a_slice_without_a_class_are_null_as_in_the_metric():
    """A bin (or fold) without contextual contradictions, predicted right: Ctx-F1 n/a, never 1.0; same as the metric."""
    from trainer.analyses.report import score_text
    from trainer.metric import score

    rows = [{"pair_id": f"p{i}", "conflict_type": ontology.NO_CONFLICT, "divergence_axes": [],
             "dominant_confounder": None} for i in range(3)]
    predictions = [{"conflict_type": ontology.NO_CONFLICT, "divergence_axes": [], "dominant_confounder": ""}] * 3
    scores = analysis_release.conflict_scores(predictions, rows)
    assert scores == {"accuracy": 1.0, "macro_f1": 1.0, "ctx_f1": None}
    metric = score([{"conflict_type": p["conflict_type"]} for p in predictions],
                   [{"conflict_type": r["conflict_type"]} for r in rows])
    assert scores == {k: metric[f"conflict_type/{k}"] for k in scores}
    assert analysis_release.task_scores(predictions, rows)["conflict_type/kappa"] is None
    assert score_text(scores["ctx_f1"]) == "n/a" and score_text(scores["macro_f1"]) == "1.000"


def test_annotator_audit_finds_agreeing_and_opposed_members(tiny):
    result = annotators.analyze(tiny)
    assert result.annotators == sorted(MEMBERS) and result.labelled_rows == sum(SIZES.values())
    pairs = {(p.a, p.b): p for p in result.pairs}
    assert pairs[("heuristic-v1", "llm-a")].kappa == 1.0
    opposed = pairs[("heuristic-v1", "llm-b")]
    assert opposed.kappa < 0 and opposed.raw_agreement < 0.5 and opposed.axis_jaccard is None
    assert set(opposed.per_domain_kappa) == set(ontology.DOMAIN_NAMES)
    assert opposed.per_class_kappa[ontology.CONTEXTUAL] < 0
    matrix = result.kappa_matrix
    assert all(matrix[i][j] == matrix[j][i] for i in range(3) for j in range(3))


def test_errors_rank_the_most_confident_mistakes(tiny):
    assert errors.analyze(tiny, Gold()).errors == 0
    result = errors.analyze(tiny, NoConflict(), top=3)
    conflicts = [r for r in tiny.rows if r["conflict_type"] != ontology.NO_CONFLICT]
    assert result.errors == len(conflicts) and result.ranked_by_confidence
    confidences = [e.confidence for e in result.top_errors]
    assert len(confidences) == 3 and confidences == sorted(confidences, reverse=True)
    assert confidences[0] == max(int(r["claim_a_text"].split()[1][1:]) / 100 for r in conflicts)
    matrix = next(c for c in result.confusions if c.task == "conflict_type")
    row = matrix.matrix[matrix.labels.index(ontology.CONTEXTUAL)]
    assert row[matrix.labels.index(ontology.NO_CONFLICT)] == sum(row) > 0


def test_errors_show_which_questions_a_predictor_gets_wrong(tiny, tmp_path):
    """The test rows split over two questions (and three rows without one): per question its rows, conflicts,
    errors and the metric's scores; the question with more errors first; rows without a question pooled only."""
    from trainer.analyses.report import render_errors

    questions = ["q_even" if i % 2 == 0 else "q_odd" for i in range(len(tiny.rows) - 3)] + ["", "", ""]
    rows = [{**r, "question_id": q} for r, q in zip(tiny.rows, questions)]
    split = analysis_release.Release(tiny.path, tiny.config, tiny.split, {**tiny.splits, tiny.split: rows})
    result = errors.analyze(split, NoConflict())
    by_id = {q.question_id: q for q in result.questions}
    assert set(by_id) == {"q_even", "q_odd"}
    for question, q in by_id.items():
        mine = [r for r in rows if r["question_id"] == question]
        conflicts = sum(r["conflict_type"] != ontology.NO_CONFLICT for r in mine)
        assert (q.n, q.conflicts, q.errors) == (len(mine), conflicts, conflicts)  # no conflict is wrong on each
        assert q.scores["conflict_type/n"] == len(mine)
        assert q.scores["conflict_type/accuracy"] == pytest.approx((len(mine) - conflicts) / len(mine))
    assert [q.errors for q in result.questions] == sorted((q.errors for q in result.questions), reverse=True)
    text, _ = render_errors(result, tmp_path)
    assert "Per clinical question" in text and all(f"`{q}`" in text for q in by_id)


@pytest.mark.slow  # the whole analyze command with its figures
def test_analyze_cli_writes_report_figures_and_card_section(tiny, tiny_release, tmp_path):
    predictions = tmp_path / "gold.jsonl"
    predictions.write_text("".join(json.dumps(p) + "\n" for p in Gold().predict(tiny.rows)), encoding="utf-8")
    out = tmp_path / "report"
    assert main(["analyze", "--release", str(tiny_release), "--predictions", str(predictions), "--out", str(out), "--card"]) == 0
    report = (out / REPORT).read_text(encoding="utf-8")
    for heading, _, _ in SECTIONS:
        assert f"## {heading}" in report
    assert "Contextual contradiction" in report and "lexical baseline fitted on the train split" in report
    figures = json.loads((out / FIGURES).read_text(encoding="utf-8"))
    assert {"plots/perturbation.png", "plots/annotator_kappa.png", "plots/confusion_conflict_type.png"} <= set(figures)
    for name, figure in figures.items():
        assert (out / name).read_bytes()[:4] == b"\x89PNG" and figure["title"] and figure["xlabel"] and figure["ylabel"]
    assert "## Robustness" in (tiny_release / release.README).read_text(encoding="utf-8")
    lodo = json.loads((out / RECORDS).read_text(encoding="utf-8"))["domains"]
    assert all(0.0 <= fold["scores"][LEXICAL]["macro_f1"] <= 1.0 for fold in lodo["folds"])


def test_a_bad_predictions_file_names_the_file_and_line(tmp_path):
    bad, good = tmp_path / "bad.jsonl", tmp_path / "good.jsonl"
    bad.write_text('{"pair_id": "p1", "conflict_type": "no_conflict"}\n{"pair_id": "p2", "conflict_type": "maybe"}\n')
    with pytest.raises(ValueError, match=rf"{bad}:2: unknown conflict_type 'maybe'"):
        FilePredictor.read(bad)
    good.write_text('{"pair_id": "p1", "conflict_type": "no_conflict"}\n')
    predictor = FilePredictor.read(good)
    with pytest.raises(ValueError, match=rf"{good}: no prediction for 1 of 2 pairs"):
        predictor.predict([{"pair_id": "p1"}, {"pair_id": "p9"}])
    assert [p["conflict_type"] for p in predictor.predict([{"pair_id": "p1"}])] == ["no_conflict"]


def test_remembered_predictions_are_asked_once_per_pair_text(tiny):
    asked = []

    class Counting(Gold):
        def predict(self, rows):
            asked.extend(r["pair_id"] for r in rows)
            return super().predict(rows)

    predictor = Remembered(Counting())
    first = predictor.predict(tiny.rows)
    assert predictor.predict(tiny.rows) == first and len(asked) == len(tiny.rows)
    predictor.predict([edits.paraphrase(tiny.rows[0]), tiny.rows[0]])
    assert len(asked) == len(tiny.rows) + 1  # only the edited text is new


@pytest.mark.slow  # trains the reference model
def test_reference_fitter_trains_a_fold_and_predicts_through_load_model(tiny, tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the fold's model folder is temporary
    held_out = ontology.DOMAIN_NAMES[0]
    predictor = leave_domain_out.ReferenceFitter(encoder="minilm")(
        [r for r in tiny.train if r["domain"] != held_out], [r for r in tiny.splits["validation"] if r["domain"] != held_out],
        held_out)
    test = [r for r in tiny.rows if r["domain"] == held_out]
    predicted = predictor.predict(test)
    assert [p["pair_id"] for p in predicted] == [r["pair_id"] for r in test]
    for p in predicted:
        assert p["conflict_type"] in ontology.CONFLICT_TYPE_NAMES and 0.0 < p["confidence"] <= 1.0
        assert set(p["divergence_axes"]) <= set(ontology.AXIS_NAMES)
    assert not list(tmp_path.iterdir())  # nothing left behind
