"""Property tests of the metric: against scikit-learn and rouge-score, bootstrap weights as duplicated examples,
perfect predictions scoring the best value of every key."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from metric_records import FakeEncoder, random_records, same, scoring
from sklearn import metrics as skm

K = len(scoring.CONFLICT_TYPES)
class_ids = st.lists(st.tuples(st.integers(0, K - 1), st.integers(0, K - 1)), min_size=1, max_size=60)
axis_rows = st.lists(
    st.tuples(st.lists(st.booleans(), min_size=13, max_size=13), st.lists(st.booleans(), min_size=13, max_size=13)),
    min_size=1, max_size=40,
)


def sklearn_nan(function, *args, **kwargs):
    """A scikit-learn metric with ``zero_division=np.nan`` (0 / 0 is undefined, as in the metric), warnings off."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(*args, zero_division=np.nan, **kwargs)


@settings(max_examples=50, deadline=None)
@given(class_ids)
def test_conflict_type_matches_sklearn(pairs):
    """Own vectorised code (kept: 50x faster than scikit-learn inside the bootstrap, see the metric card)
    equals scikit-learn with zero_division=np.nan on random cases, undefined included."""
    y_true, y_pred = (np.array(x) for x in zip(*pairs))
    s = scoring.conflict_type_scores(y_true, y_pred)
    labels = list(range(K))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kappa = skm.cohen_kappa_score(y_true, y_pred)  # NaN when both sides use one and the same class only
    p, r, f, support = sklearn_nan(skm.precision_recall_fscore_support, y_true, y_pred, labels=labels)
    report = sklearn_nan(skm.classification_report, y_true, y_pred, labels=labels, output_dict=True)
    assert same(s["conflict_type/accuracy"], skm.accuracy_score(y_true, y_pred))
    assert same(s["conflict_type/macro_f1"], sklearn_nan(skm.f1_score, y_true, y_pred, average="macro"))
    assert same(s["conflict_type/macro_f1"], report["macro avg"]["f1-score"])
    assert same(s["conflict_type/weighted_f1"], report["weighted avg"]["f1-score"])
    assert s["conflict_type/macro_f1/over"] == [n for i, n in enumerate(scoring.CONFLICT_TYPES) if not np.isnan(f[i])]
    assert same(s["conflict_type/kappa"], kappa)
    assert s["conflict_type/confusion_matrix"] == skm.confusion_matrix(y_true, y_pred, labels=labels).tolist()
    for i, name in enumerate(scoring.CONFLICT_TYPES):
        assert same(s[f"conflict_type/precision/{name}"], p[i])
        assert same(s[f"conflict_type/recall/{name}"], r[i])
        assert same(s[f"conflict_type/f1/{name}"], f[i])
        assert same(s[f"conflict_type/f1/{name}"], report[str(i)]["f1-score"])
        assert s[f"conflict_type/support/{name}"] == support[i]


@settings(max_examples=50, deadline=None)
@given(axis_rows)
def test_axes_match_sklearn(rows):
    true, pred = (np.array(x, dtype=bool) for x in zip(*rows))
    s = scoring.axes_scores(true, pred)
    # no axis on either side: nothing to find is undefined, not a perfect score (scikit-learn: zero_division)
    assert same(s["axes/micro_f1"], sklearn_nan(skm.f1_score, true, pred, average="micro"))
    assert same(s["axes/micro_precision"], sklearn_nan(skm.precision_score, true, pred, average="micro"))
    assert same(s["axes/micro_recall"], sklearn_nan(skm.recall_score, true, pred, average="micro"))
    assert same(s["axes/macro_f1"], sklearn_nan(skm.f1_score, true, pred, average="macro"))
    assert same(s["axes/exact_match"], skm.accuracy_score(true, pred))
    per_axis = sklearn_nan(skm.f1_score, true, pred, average=None)
    assert all(same(s[f"axes/f1/{a}"], per_axis[i]) for i, a in enumerate(scoring.AXES))
    assert [s[f"axes/support/{a}"] for a in scoring.AXES] == true.sum(axis=0).tolist()


ROUGE_WORDS = ["the", "cat", "cats", "sat", "sitting", "sits", "MIC", "2", "mg/L", "ICU's", "resistance",
               "resistant", "-", ".", "Colistin", "isolates", "isolated"]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(ROUGE_WORDS), max_size=40), st.lists(st.sampled_from(ROUGE_WORDS), max_size=40))
def test_rouge_l_equals_rouge_score(prediction_words, reference_words):
    from rouge_score import rouge_scorer

    prediction, reference = " ".join(prediction_words), " ".join(reference_words)
    expected = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True).score(reference, prediction)["rougeL"].fmeasure
    assert scoring.rouge_l(prediction, reference) == expected


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.lists(st.integers(0, 3), min_size=12, max_size=12))
def test_bootstrap_weights_equal_duplicated_examples(seed, weights):
    """Scoring with multiplicity weights is the same as scoring the examples repeated that often."""
    assume(any(weights))  # all-zero weights score no example at all: nothing to compare
    preds, refs = random_records(seed, len(weights))
    repeated = [i for i, w in enumerate(weights) for _ in range(w)]
    expected = scoring.compute([preds[i] for i in repeated], [refs[i] for i in repeated], semsim_model=FakeEncoder())
    counts = np.array(weights)
    for task in scoring.prepare(preds, refs, semsim_model=FakeEncoder()):
        for key, value in task.score(counts[task.rows]).items():
            assert same(value, expected[key]) if isinstance(value, float) else value == expected[key], key


TEXT_WORDS = ["the", "cohorts", "differ", "geography", "disease subtype", "Year / time period",
              "contextual contradiction", "no conflict", "in", "Greek", "ICUs"]
words = st.lists(st.sampled_from(TEXT_WORDS), max_size=6).map(" ".join)
spans = st.lists(st.fixed_dictionaries({"text": words.filter(str.strip), "role": st.sampled_from(scoring.SPAN_ROLES)}),
                 max_size=3)


@st.composite
def gold_records(draw) -> list[dict]:
    """Records of one random set of task fields with random labels, texts and spans."""
    fields = draw(st.sets(st.sampled_from(list(scoring.TASK_FIELDS.values())), min_size=1))
    records = []
    for _ in range(draw(st.integers(1, 12))):
        axes = draw(st.lists(st.sampled_from(scoring.AXES), unique=True, max_size=3))
        record = {
            "conflict_type": draw(st.sampled_from(scoring.CONFLICT_TYPES)),
            "divergence_axes": axes,
            "dominant_confounder": draw(st.sampled_from(axes + [""])),
            "reconciliation": draw(words),
            "evidence_spans": [{"start": 0, "end": len(x["text"]), **x} for x in draw(spans)],
        }
        records.append({f: v for f, v in record.items() if f in fields})
    return records


def nothing_scored(key: str, scores: dict, gold: list[dict]) -> bool:
    """Whether ``key`` is 0 / 0 on perfect predictions of ``gold`` (the only case a score may be None):
    a label no example has, kappa with one class only, axis F1s with no axis at all, a task with no example."""
    task, metric, *label = key.split("/")
    if label:
        return scores[f"{task}/support/{label[0]}"] == 0
    if key == "reconciliation/slot_overlap":
        slots = [{r.get("conflict_type"), r.get("dominant_confounder"), *r.get("divergence_axes", ())} - {None, ""}
                 for r in gold]
        return not any(scoring.named_slots(r["reconciliation"], s) for r, s in zip(gold, slots))
    if key == "conflict_type/kappa":
        return len({r["conflict_type"] for r in gold}) == 1
    if key == "conflict_type/ctx_f1":
        return scores[f"{task}/support/{scoring.CONTEXTUAL}"] == 0
    if task.startswith("axes") and metric != "exact_match":
        return not any(scores[k] for k in scores if k.startswith(f"{task}/support/"))
    return scores[f"{task}/n"] == 0


@settings(max_examples=80, deadline=None)
@given(gold_records())
def test_perfect_predictions_score_the_best_value_of_every_key(gold):
    scores = scoring.compute(gold, gold, semsim_model=FakeEncoder())
    assert scores
    for key, value in scores.items():
        if key.endswith(("/n", "/over", "/distinct_references")) or "/support/" in key:
            continue  # counts and label lists
        if key.endswith("/confusion_matrix"):
            assert np.count_nonzero(np.array(value) - np.diag(np.diag(value))) == 0
        elif key == "notes":
            assert all(n.startswith("reconciliation: the references hold") for n in value)
        elif value is None:
            assert nothing_scored(key, scores, gold), key
        else:
            assert value == pytest.approx(1.0, abs=1e-12), key
