"""Split stage: duplicate resolution, article-disjoint components, label-source rules, matched test, release I/O."""

from __future__ import annotations

import json
import os
import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from repo_paths import REPO
from split_factory import disjoint_pairs, example, write_annotations

from biodivergence_cli.main import main
from biodivergence_dataset import ontology
from biodivergence_dataset.release import iter_examples, load_release, split_sizes
from biodivergence_dataset.validate import validate_release
from builder import article_graph, release_stage, split
from builder.placement import apportion, distribution, matched_sample
from builder.split import SplitConfig, split_pool

LLM, HEURISTIC = ontology.ANNOTATOR_KINDS[:2]
TRAIN, VALIDATION, TEST = ontology.SPLITS
MATCHED = ontology.EXTRA_TEST_SPLITS[0]


def ids(rows, kind: str) -> set[str]:
    cols = {"article": ("article_uid_a", "article_uid_b"), "claim": ("claim_a_id", "claim_b_id"), "pair": ("pair_id",)}
    return {getattr(r, c) for r in rows for c in cols[kind]}


def assert_article_disjoint(splits) -> None:
    """No article, claim or pair shared by two splits that must be disjoint (test and test_matched may share)."""
    names = list(splits)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            if {a, b} <= {TEST, MATCHED}:
                continue
            for kind in ("article", "claim", "pair"):
                assert not ids(splits[a], kind) & ids(splits[b], kind), f"{kind} shared by {a} and {b}"


def membership(result) -> dict[str, dict[str, list[str]]]:
    return {c: {s: [e.pair_id for e in rows] for s, rows in splits.items()} for c, splits in result.configs.items()}


# --- property tests on random article graphs ------------------------------------------------------------------

@st.composite
def article_graphs(draw):
    """Random multi-domain article graphs; edges may repeat (duplicate pair_ids with other labels or annotators)."""
    examples = []
    for domain in draw(st.lists(st.sampled_from(ontology.DOMAIN_NAMES), min_size=1, max_size=3, unique=True)):
        n_articles = draw(st.integers(2, 25))
        edges = draw(st.lists(st.tuples(st.integers(0, n_articles - 1), st.integers(0, n_articles - 1),
                                        st.integers(0, 2), st.integers(0, 2)), min_size=1, max_size=60))
        for a, b, ca, cb in edges:
            if a == b:
                continue
            examples.append(example(
                f"{domain}:{a}", f"{domain}:{b}", claim_a=ca, claim_b=cb, domain=domain,
                conflict=draw(st.sampled_from(ontology.CONFLICT_TYPE_NAMES)),
                kind=draw(st.sampled_from(ontology.ANNOTATOR_KINDS)),
                confidence=draw(st.floats(0.0, 1.0))))
    return examples


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(article_graphs(), st.integers(0, 2**16), st.sampled_from(["train", "carve", "auto"]))
def test_primary_is_article_claim_and_pair_disjoint(examples, seed, oversized):
    result = split_pool(examples, SplitConfig(seed=seed, oversized_components=oversized))
    primary = result.configs["primary"]
    assert_article_disjoint(primary)
    assert {e.pair_id for e in primary.get(MATCHED, [])} <= {e.pair_id for e in primary[TEST]}
    # every unique pair lands in exactly one split of each config unless it was dropped for a counted reason
    placed = [e.pair_id for s in ontology.SPLITS for e in primary[s]]
    assert len(placed) == len(set(placed))
    unique = {e.pair_id for e in examples}
    assert len(placed) + sum(result.report["dropped"].values()) - result.report["dropped"].get(
        "duplicate_pair_id", 0) == len(unique)
    pairlevel = [e.pair_id for s in ontology.SPLITS for e in result.configs["pairlevel"][s]]
    assert len(pairlevel) == len(set(pairlevel))
    # with LLM labels in the pool, evaluation splits hold LLM labels only
    if any(e.annotator_kind == LLM for e in examples):
        for config in ontology.CONFIGS:
            for s in (VALIDATION, TEST):
                assert all(e.annotator_kind == LLM for e in result.configs[config][s])


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(article_graphs(), st.integers(0, 2**16), st.sampled_from(["train", "carve", "auto"]), st.randoms(use_true_random=False))
def test_split_is_deterministic_for_a_seed_whatever_the_input_order(examples, seed, oversized, rnd):
    config = SplitConfig(seed=seed, oversized_components=oversized)
    first = split_pool(examples, config)
    shuffled = list(examples)
    rnd.shuffle(shuffled)
    again = split_pool(shuffled, config)
    assert membership(first) == membership(again)
    assert first.report == again.report


def test_different_seeds_give_different_but_valid_splits():
    examples = [e for d in ontology.DOMAIN_NAMES for e in disjoint_pairs(60, domain=d)]
    a, b = (split_pool(examples, SplitConfig(seed=s)) for s in (1, 2))
    assert membership(a) != membership(b)
    assert_article_disjoint(a.configs["primary"])
    assert_article_disjoint(b.configs["primary"])


# --- duplicates and label sources ---------------------------------------------------------------------------------

def test_duplicates_prefer_llm_copy_and_count_label_conflicts():
    heuristic = example("pmid:1", "pmid:2", conflict=ontology.NO_CONFLICT, kind=HEURISTIC, confidence=0.9)
    llm = example("pmid:2", "pmid:1", claim_a=0, claim_b=0, conflict=ontology.CONTEXTUAL, kind=LLM, confidence=0.3)
    agreeing = [example("pmid:3", "pmid:4", confidence=c) for c in (0.5, 0.8)]
    survivors, duplicated, conflicting = article_graph.resolve_duplicates([heuristic, llm, *agreeing])
    assert llm.pair_id == heuristic.pair_id  # order-independent pair id
    by_pair = {e.pair_id: e for e in survivors}
    assert by_pair[llm.pair_id].annotator_kind == LLM
    assert by_pair[agreeing[0].pair_id].confidence == 0.8  # same kind: the more confident copy
    assert (len(survivors), duplicated, conflicting) == (2, 2, 1)


def test_copies_alike_but_for_their_label_resolve_the_same_whatever_their_order():
    """Two copies of one pair from the same annotator, at the same confidence, with different labels (found by
    the determinism property test): the survivor depends on their content, not on which comes first."""
    copies = [example("pmid:1", "pmid:2", conflict=c, kind=LLM, confidence=0.0)
              for c in (ontology.NO_CONFLICT, ontology.CONTEXTUAL)]
    first = article_graph.resolve_duplicates(copies)[0]
    again = article_graph.resolve_duplicates(copies[::-1])[0]
    assert [e.conflict_type for e in first] == [e.conflict_type for e in again]


def test_heuristic_only_pool_uses_heuristic_labels_everywhere_and_says_so():
    examples = disjoint_pairs(100, confidence=0.2)
    result = split_pool(examples)
    assert result.report["label_source"]["mode"] == "heuristic_only"
    sizes = {s: len(r) for s, r in result.configs["primary"].items()}
    assert sizes[TRAIN] + sizes[VALIDATION] + sizes[TEST] == 100  # low confidence is not filtered here
    assert sizes[VALIDATION] == sizes[TEST] == 15
    assert {s: len(result.configs["pairlevel"][s]) for s in ontology.SPLITS} == {TRAIN: 70, VALIDATION: 10, TEST: 20}


def test_llm_pool_keeps_eval_splits_llm_only_and_tops_up_train_with_confident_heuristics():
    llm = disjoint_pairs(40, kind=LLM, confidence=0.9)
    strong = [example(f"h:{2 * i}", f"h:{2 * i + 1}", confidence=0.45) for i in range(30)]
    weak = [example(f"w:{2 * i}", f"w:{2 * i + 1}", confidence=0.44) for i in range(20)]
    result = split_pool(llm + strong + weak)
    assert result.report["label_source"]["mode"] == "llm_eval_heuristic_topup"
    assert result.report["dropped"]["heuristic_below_topup_confidence"] == 20
    for config in ontology.CONFIGS:
        splits = result.configs[config]
        assert all(e.annotator_kind == LLM for s in (VALIDATION, TEST) for e in splits[s])
        assert {e.pair_id for e in strong} <= {e.pair_id for e in splits[TRAIN]}
        assert not {e.pair_id for e in weak} & {e.pair_id for s in splits.values() for e in s}
    primary = result.configs["primary"]
    assert len(primary[VALIDATION]) + len(primary[TEST]) == round(0.30 * 70)  # targets from LLM + top-up pool


def test_heuristic_examples_in_an_eval_component_are_dropped_not_leaked():
    # one component mixing an LLM and a heuristic pair (shared article x:1), plus many LLM singletons
    # (one conflict in it, as in each singleton: conflict-holding components are placed most conflicts first)
    mixed = [example("x:0", "x:1", kind=LLM, confidence=0.9),
             example("x:1", "x:2", confidence=0.9, conflict=ontology.NO_CONFLICT)]
    filler = disjoint_pairs(200, kind=LLM, confidence=0.9)
    for seed in range(25):
        result = split_pool(mixed + filler, SplitConfig(seed=seed))
        primary = result.configs["primary"]
        assert_article_disjoint(primary)
        where = {e.pair_id: s for s, rows in primary.items() if s != MATCHED for e in rows}
        if where.get(mixed[0].pair_id) in (VALIDATION, TEST):
            assert mixed[1].pair_id not in where
            assert result.report["dropped"]["not_llm_labelled_in_eval_component"] == 1
            break
    else:
        pytest.fail("the mixed component never went to an evaluation split in 25 seeds")


# --- components ------------------------------------------------------------------------------------------------

def test_components_follow_shared_articles_and_shared_claims():
    chain = [example("a:1", "a:2"), example("a:2", "a:3"), example("a:3", "a:4")]
    lone = [example("b:1", "b:2")]
    comps = article_graph.article_components(chain + lone)
    assert sorted((c.size, c.articles) for c in comps) == [(1, 2), (3, 4)]


def test_oversized_component_goes_to_train_and_is_reported():
    hub = [example("hub:0", f"hub:{i}") for i in range(1, 41)]  # a 40-example star
    small = disjoint_pairs(60)
    result = split_pool(hub + small, SplitConfig(max_claim_share=1.0))  # the cap would cut the star's 40 conflicts
    primary = result.configs["primary"]
    assert {e.pair_id for e in hub} <= {e.pair_id for e in primary[TRAIN]}
    assert result.report["components"]["oversized"] == [{"domain": "amr", "examples": 40, "articles": 41}]
    assert result.report["components"]["largest"] == 40
    assert result.report["components"]["oversized_rule"] == "train"  # auto: the paper's rule, which works here
    assert_article_disjoint(primary)


def dense_clusters(n_clusters: int, size: int, bridges: int = 1, seed: int = 5):
    """One giant component: dense clusters of articles (every pair linked) joined by a few bridge pairs."""
    rnd = random.Random(seed)
    examples = [example(f"amr:{c}-{i}", f"amr:{c}-{j}", conflict=rnd.choice(ontology.EVALUABLE_CLASSES))
                for c in range(n_clusters) for i in range(size) for j in range(i + 1, size)]
    for c in range(n_clusters - 1):
        examples += [example(f"amr:{c}-{rnd.randrange(size)}", f"amr:{c + 1}-{rnd.randrange(size)}", claim_a=1,
                             claim_b=1) for _ in range(bridges)]
    return examples


def test_carving_rescues_evaluation_splits_from_a_giant_component():
    examples = dense_clusters(n_clusters=16, size=6)  # 16 × 15 pairs + 15 bridges
    kept_whole = split_pool(examples, SplitConfig(oversized_components="train"))
    assert {s: len(r) for s, r in kept_whole.configs["primary"].items() if s in (VALIDATION, TEST)} == {
        VALIDATION: 0, TEST: 0}
    with pytest.raises(ValueError, match="oversized_components: carve"):
        split.check_nonempty(kept_whole)
    # the default (auto) keeps the paper's rule where it works and carves here, saying so
    auto = split_pool(examples)
    assert auto.report["components"]["oversized_rule"] == split.AUTO_CARVE
    split.check_nonempty(auto)
    carved = split_pool(examples, SplitConfig(oversized_components="carve"))
    assert {s: [e.pair_id for e in r] for s, r in auto.configs["primary"].items()} == {
        s: [e.pair_id for e in r] for s, r in carved.configs["primary"].items()}
    primary = carved.configs["primary"]
    assert_article_disjoint(primary)
    assert primary[VALIDATION] and primary[TEST]
    (report,) = carved.report["components"]["oversized"]
    assert report["carved_into"] == 16 and report["crossing_pairs"] == 15
    placed = sum(len(primary[s]) for s in ontology.SPLITS)
    assert placed + sum(carved.report["dropped"].values()) == len(examples)
    assert placed >= 240  # at most the bridges between communities placed in different splits are lost


def test_carving_cuts_open_mined_pairs_before_pairs_that_carry_a_question():
    """Two questions, six trials each, every two trials of a question paired; open mining pairs the trials across
    the questions three times as densely. A carve follows the questions: no pair that carries one is cut."""
    asked = [example(f"amr:{q * 6 + i}", f"amr:{q * 6 + j}").model_copy(update={"question_id": f"q{q}"})
             for q in (0, 1) for i in range(6) for j in range(i + 1, 6)]
    groups = ((0, 1, 2, 6, 7, 8), (3, 4, 5, 9, 10, 11))  # open-mined cliques across the questions
    mined = [example(f"amr:{a}", f"amr:{b}", claim_a=c, claim_b=c)
             for group in groups for i, a in enumerate(group) for b in group[i + 1:] for c in (1, 2, 3)]
    examples = asked + mined
    component = article_graph.Component(examples, "amr", frozenset(a for e in examples for a in (e.article_uid_a,
                                                                                          e.article_uid_b)))
    pieces, crossing = article_graph.carve(component, max_examples=40, seed=0)
    assert len(pieces) >= 2 and crossing and not [e for e in crossing if e.question_id]
    assert sorted(sorted(p.article_ids) for p in pieces) == sorted(
        sorted(f"amr:{q * 6 + i}" for i in range(6)) for q in (0, 1))


def test_carved_split_is_identical_across_processes():
    """Louvain must not depend on per-process string hashing: same seed, same split in any interpreter."""
    import subprocess
    import sys

    code = ("import hashlib, json; from split_factory import ring_graph; from builder.split import SplitConfig, "
            "split_pool; r = split_pool(ring_graph(300, 1500), "
            "SplitConfig(oversized_components='carve')); print(hashlib.sha1(json.dumps({c: {s: [e.pair_id for e in v] "
            "for s, v in sp.items()} for c, sp in r.configs.items()}).encode()).hexdigest())")
    path = os.pathsep.join([str(REPO), str(REPO / "tests" / "support")])
    runs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, cwd=REPO,
                             env={**os.environ, "PYTHONHASHSEED": str(h), "PYTHONPATH": path})
            for h in (1, 2)]
    digests = [run.communicate(timeout=120)[0] for run in runs]
    assert [run.returncode for run in runs] == [0, 0]
    assert digests[0] == digests[1] and len(digests[0].strip()) == 40


APPORTION_CASES = ("import hashlib, json; from builder.placement import apportion; "
                   "ws = [{'train': .7, 'validation': .1, 'test': .2}, {'train': .7, 'validation': .15, 'test': .15}]; "
                   "print(hashlib.sha1(json.dumps([apportion(n, w) for w in ws for n in range(1, 400)]).encode())"
                   ".hexdigest())")


def test_apportion_is_identical_across_processes_and_weight_orders():
    """Largest remainders tie often (70/10/20 of 5 rows); the float sums deciding them must not follow a set's
    per-process order, or a re-run after a kill splits differently."""
    import subprocess
    import sys

    runs = [subprocess.run([sys.executable, "-c", APPORTION_CASES], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": str(h)}).stdout for h in range(4)]
    assert len(set(runs)) == 1 and len(runs[0].strip()) == 40
    weights = {TRAIN: 0.7, VALIDATION: 0.1, TEST: 0.2}
    for n in range(1, 200):
        assert apportion(n, weights) == apportion(n, dict(reversed(weights.items()))), n


def test_carve_finds_the_communities():
    comp, = article_graph.article_components(dense_clusters(n_clusters=3, size=8))
    pieces, crossing = article_graph.carve(comp, max_examples=40, seed=0)
    assert sorted(p.size for p in pieces) == [28, 28, 28]  # 8 choose 2 pairs inside each cluster
    assert len(crossing) == 2
    assert {frozenset(a.split("-")[0] for a in p.article_ids) for p in pieces} == {
        frozenset({f"amr:{c}"}) for c in range(3)}


def test_primary_targets_70_15_15_per_domain_by_example_count():
    rnd = random.Random(7)
    examples = []
    for d in ontology.DOMAIN_NAMES:  # components of 1–3 examples (paths over fresh articles)
        art = 0
        while len([e for e in examples if e.domain == d]) < 200:
            size = rnd.choice([1, 1, 2, 3])
            examples += [example(f"{d}:{art + k}", f"{d}:{art + k + 1}", domain=d) for k in range(size)]
            art += size + 1
    result = split_pool(examples)
    for d in ontology.DOMAIN_NAMES:
        counts = {s: sum(e.domain == d for e in result.configs["primary"][s]) for s in ontology.SPLITS}
        total = sum(counts.values())
        for s, ratio in SplitConfig().primary_ratios.items():
            assert abs(counts[s] / total - ratio) <= 0.03, (d, counts)


def test_pairlevel_is_stratified_by_conflict_type_within_domain():
    examples = disjoint_pairs(300, conflicts=(ontology.NO_CONFLICT,) * 3 + (ontology.CONTEXTUAL,) * 2)
    pairlevel = split_pool(examples).configs["pairlevel"]
    for s, ratio in SplitConfig().pairlevel_ratios.items():
        share = Counter(e.conflict_type for e in pairlevel[s])
        assert len(pairlevel[s]) == round(300 * ratio)
        assert abs(share[ontology.CONTEXTUAL] / len(pairlevel[s]) - 0.4) <= 0.02


# --- matched test ------------------------------------------------------------------------------------------------

def test_apportion_respects_caps_and_redistributes():
    assert apportion(10, {"a": 0.5, "b": 0.5}) == {"a": 5, "b": 5}
    assert apportion(10, {"a": 0.5, "b": 0.5}, {"a": 2, "b": 20}) == {"a": 2, "b": 8}
    assert apportion(10, {"a": 1.0, "b": 0.0}, {"a": 4, "b": 3}) == {"a": 4, "b": 3}  # overflow to zero weight
    assert apportion(7, {"a": 1, "b": 1, "c": 1}) == {"a": 3, "b": 2, "c": 2}
    assert sum(apportion(1000, {"a": 0.7, "b": 0.15, "c": 0.15}).values()) == 1000


def test_matched_sample_reaches_the_reference_mix_when_the_pool_allows():
    pool = disjoint_pairs(100, conflicts=(ontology.NO_CONFLICT,) * 9 + (ontology.CONTEXTUAL,))  # 90 / 10
    reference = distribution([ontology.NO_CONFLICT] * 6 + [ontology.CONTEXTUAL] * 4)  # 60 / 40
    chosen, report = matched_sample(pool, reference, seed=1, tolerance=0.0, min_fraction=0.0)
    counts = Counter(e.conflict_type for e in chosen)
    assert counts == {ontology.NO_CONFLICT: 15, ontology.CONTEXTUAL: 10}
    assert report["tv_distance"] == 0.0
    assert report["tv_distance_before"] == pytest.approx(0.3)
    assert {e.pair_id for e in chosen} <= {e.pair_id for e in pool}


def test_matched_sample_trades_distance_for_size_with_min_fraction():
    pool = disjoint_pairs(100, conflicts=(ontology.NO_CONFLICT,) * 9 + (ontology.CONTEXTUAL,))
    reference = distribution([ontology.NO_CONFLICT] * 6 + [ontology.CONTEXTUAL] * 4)
    chosen, report = matched_sample(pool, reference, seed=1, tolerance=0.0, min_fraction=0.5)
    assert len(chosen) == 50
    assert Counter(e.conflict_type for e in chosen)[ontology.CONTEXTUAL] == 10  # every contextual example used
    assert 0.0 < report["tv_distance"] < report["tv_distance_before"]


def test_classes_missing_from_the_pool_do_not_shrink_the_matched_sample():
    pool = disjoint_pairs(100, conflicts=(ontology.NO_CONFLICT,) * 3 + (ontology.CONTEXTUAL,))  # 75 / 25
    reference = distribution([ontology.NO_CONFLICT] * 740 + [ontology.CONTEXTUAL] * 250
                                   + ["unresolved_scientific_controversy"] * 10)
    chosen, report = matched_sample(pool, reference, seed=1, tolerance=0.0, min_fraction=0.0)
    assert report["tv_distance_unavoidable"] == 0.01
    assert len(chosen) >= 98 and report["tv_distance"] <= 0.011


def test_matched_test_is_closer_to_pairlevel_test_than_primary_test():
    rnd = random.Random(4)  # (seed 3 draws a primary test whose mix already matches: nothing to write)
    examples = []
    for i in range(400):  # hubs of contextual examples make primary test composition drift
        conflict = ontology.CONTEXTUAL if rnd.random() < 0.3 else ontology.NO_CONFLICT
        examples.append(example(f"amr:{rnd.randrange(300)}", f"amr:b{i}", conflict=conflict))
    result = split_pool(examples)
    report = result.report[MATCHED]
    assert report["tv_distance"] < report["tv_distance_before"]
    assert report["size"] == len(result.configs["primary"][MATCHED]) > 0 and report["written"] is True


def test_a_matched_test_identical_to_test_is_not_written():
    result = split_pool(disjoint_pairs(60, conflicts=(ontology.NO_CONFLICT,)))  # one class: every row matches
    report = result.report[MATCHED]
    assert MATCHED not in result.configs["primary"]
    assert report["written"] is False and report["size"] == report["pool_size"] == len(result.configs["primary"][TEST])


# --- stage I/O ------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def annotated(tmp_path_factory):
    rnd = random.Random(11)
    examples = []
    for d in ontology.DOMAIN_NAMES[:3]:
        for i in range(120):
            examples.append(example(f"{d}:{rnd.randrange(150)}", f"{d}:x{i}", domain=d,
                                    conflict=rnd.choice(ontology.EVALUABLE_CLASSES)))
    return write_annotations(tmp_path_factory.mktemp("ann") / "annotations", examples), examples


def test_run_stage_writes_a_valid_release_that_load_dataset_reads(annotated, tmp_path):
    ann, examples = annotated
    stats = split.run_stage(ann, tmp_path / "release")
    rel = tmp_path / "release"
    assert not (rel / "README.md").exists() and not (rel / "split_manifest.json").exists()  # the release stage's
    release_stage.run_stage(None, rel)
    report = validate_release(rel)
    assert report.ok, report.problems
    sizes = split_sizes(rel)
    assert sizes["primary"] == stats["primary_sizes"]
    assert sum(sizes["pairlevel"].values()) == len({e.pair_id for e in examples})
    ds = load_release(rel, "primary", cache_dir=str(tmp_path / "cache"))
    assert set(ds) == {TRAIN, VALIDATION, TEST, MATCHED}
    back = {s: list(iter_examples(rel, "primary", s)) for s in ds}
    assert_article_disjoint(back)
    manifest = json.loads((rel / "split_manifest.json").read_text())
    assert manifest["label_source"]["mode"] == "heuristic_only"
    assert manifest["seed"] == 42 and manifest["thresholds"]["heuristic_topup_min_confidence"] == 0.45
    assert set(manifest["library_versions"]) == {"datasets", "pyarrow", "huggingface_hub", "biodivergence"}
    assert manifest["per_domain_counts"]["primary"][TRAIN] == dict(Counter(e.domain for e in back[TRAIN]))
    assert manifest[MATCHED]["size"] == sizes["primary"][MATCHED]
    assert json.loads((rel / "annotation_manifest.json").read_text()) == {"provider": "heuristic"}
    assert "test_matched" in (rel / "README.md").read_text()


def test_run_stage_is_resumable_and_reruns_when_parameters_change(annotated, tmp_path):
    ann, _ = annotated
    rel = tmp_path / "release"
    split.run_stage(ann, rel)
    shard = min((rel / "primary").glob("train-*.parquet"))
    before = shard.stat().st_mtime_ns
    split.run_stage(ann, rel)
    assert shard.stat().st_mtime_ns == before  # up to date: nothing rewritten
    split.run_stage(ann, rel, SplitConfig(seed=7))
    release_stage.run_stage(None, rel)
    assert json.loads((rel / "split_manifest.json").read_text())["seed"] == 7


def test_several_annotation_runs_are_merged_with_llm_preferred(tmp_path):
    base = disjoint_pairs(30)
    relabelled = [e.model_copy(update={"annotator_kind": LLM, "annotator_id": "qwen", "confidence": 0.9,
                                       "conflict_type": ontology.NO_CONFLICT}) for e in base[:20]]
    a = write_annotations(tmp_path / "heuristic", base)
    b = write_annotations(tmp_path / "llm", relabelled, {"provider": "ollama", "model": "qwen2.5:7b"})
    split.run_stage([a, b], tmp_path / "release")
    release_stage.run_stage(None, tmp_path / "release")
    manifest = json.loads((tmp_path / "release" / "split_manifest.json").read_text())
    assert manifest["duplicates"]["duplicate_pair_ids"] == 20
    assert manifest["duplicates"]["label_conflicting_duplicates"] == 10  # half of the base pairs were contextual
    assert manifest["label_source"]["mode"] == "llm_eval_heuristic_topup"
    assert len(json.loads((tmp_path / "release" / "annotation_manifest.json").read_text())["runs"]) == 2
    rows = [e for s in ontology.SPLITS for e in iter_examples(tmp_path / "release", "primary", s)]
    assert Counter(e.annotator_kind for e in rows) == {LLM: 20, HEURISTIC: 10}


def test_cli_split(annotated, tmp_path, capsys):
    ann, _ = annotated
    assert main(["split", str(ann), "--out", str(tmp_path / "rel"), "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "primary: train=" in out and "test_matched=" in out
    assert validate_release(tmp_path / "rel").ok
    assert "test_matched" in (tmp_path / "rel" / "README.md").read_text()  # the command ends with the release stage


def test_unfinished_annotation_folder_is_refused(tmp_path):
    (tmp_path / "ann").mkdir()
    with pytest.raises(FileNotFoundError, match="_SUCCESS"):
        split.run_stage(tmp_path / "ann", tmp_path / "rel")


def test_bad_ratios_are_rejected():
    with pytest.raises(ValueError, match="sum to 1"):
        SplitConfig(primary_ratios={TRAIN: 0.8, VALIDATION: 0.15, TEST: 0.15})
    with pytest.raises(ValueError, match="exactly the splits"):
        SplitConfig(pairlevel_ratios={TRAIN: 0.9, TEST: 0.1})


def test_validate_flags_an_empty_split_that_load_dataset_could_not_read(tmp_path):
    from biodivergence_dataset.card import write_card
    from biodivergence_dataset.release import write_config

    rows = disjoint_pairs(4)
    for config in ontology.CONFIGS:
        write_config(tmp_path, config, {TRAIN: rows[:2], VALIDATION: rows[2:3], TEST: rows[3:] if config == "pairlevel"
                                        else []})
    write_card(tmp_path)
    assert validate_release(tmp_path).problems == [
        "primary/test: empty split (datasets.load_dataset cannot read an empty split)"]


def test_components_holding_conflicts_are_spread_over_the_splits_like_the_rows():
    # 200 components without a conflict and 20 with one: placed by size alone, how many conflicts each split
    # gets depends on the seed (0 in test for some); placed by their conflicts, each split gets its share
    examples = disjoint_pairs(200, conflicts=(ontology.NO_CONFLICT,))
    examples += [example(f"amr:c{i}a", f"amr:c{i}b") for i in range(20)]
    share = apportion(20, SplitConfig().primary_ratios)
    for seed in range(6):
        primary = split_pool(examples, SplitConfig(seed=seed)).configs["primary"]
        conflicts = {s: sum(ex.conflict_type != ontology.NO_CONFLICT for ex in primary[s]) for s in share}
        assert conflicts == share
        assert_article_disjoint(primary)


def test_components_with_many_conflicts_are_placed_before_the_row_targets_fill():
    # conflicts cluster in a few components of related articles (one article's claims against many): placed
    # most conflicts first, each evaluation split gets its share within one row whatever the seed
    examples = disjoint_pairs(200, conflicts=(ontology.NO_CONFLICT,))
    for hub, size in enumerate((8, 4, 2, 2, 1, 1, 1, 1)):
        examples += [example(f"amr:h{hub}", f"amr:h{hub}x{i}") for i in range(size)]
    share = apportion(20, SplitConfig().primary_ratios)
    for seed in range(6):
        primary = split_pool(examples, SplitConfig(seed=seed)).configs["primary"]
        conflicts = {s: sum(ex.conflict_type != ontology.NO_CONFLICT for ex in primary[s]) for s in share}
        assert all(abs(conflicts[s] - share[s]) <= 1 for s in (VALIDATION, TEST)), (seed, conflicts, share)
        assert_article_disjoint(primary)


def test_the_split_stage_says_when_auto_carves(tmp_path, capsys):
    """The stage (not the pure ``split_pool``) says on stderr that ``auto`` carved, and its stats keep the rule."""
    ann = write_annotations(tmp_path / "annotations", dense_clusters(n_clusters=16, size=6))
    stats = split.run_stage(ann, tmp_path / "release")
    assert "would have left a split of primary empty" in capsys.readouterr().err
    assert stats["components"]["oversized_rule"] == split.AUTO_CARVE
    assert all(stats["primary_sizes"][s] for s in ontology.SPLITS)
