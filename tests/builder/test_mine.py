"""Pair mining: neighbour search, pair scores and the `mine` stage on real claims (all-MiniLM-L6-v2)."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from repo_paths import SHARED_DATA

from biodivergence_cli import main as cli
from biodivergence_dataset import io
from biodivergence_dataset.records import Abstract, CandidatePair, Claim, pair_id_for
from builder import checks, claims, embeddings, mine, pair_scores

os.environ.setdefault("HF_HUB_OFFLINE", "1")
DOMAINS = ("clinical_trials_epidemiology", "oncology")


@pytest.fixture(scope="module")
def encoder():
    return embeddings.load_encoder()


@pytest.fixture(scope="module")
def stage_dirs(tmp_path_factory):
    """Real PubMedQA abstracts in two domains (+ one lone abstract in a third) and their claims."""
    root = tmp_path_factory.mktemp("mine")
    abstracts = checks.pubmedqa_abstracts(SHARED_DATA / "pubmedqa_pqal" / "ori_pqal.json")[:31]
    abstracts = [a.model_copy(update={"domain": DOMAINS[i % 2] if i < 30 else "amr"}) for i, a in enumerate(abstracts)]
    io.write_records(root / "abstracts", abstracts, io.StageStats("ingest"))
    claims.run_stage(root / "abstracts", root / "claims")
    return root


@pytest.fixture(scope="module")
def mined(stage_dirs, encoder):
    out = stage_dirs / "pairs"
    return out, mine.run_stage(stage_dirs / "claims", out)


# --- neighbour search ---------------------------------------------------------------------------------
def _brute_force(emb, groups, k):
    sims = emb @ emb.T
    sims[groups[:, None] == groups[None, :]] = -np.inf
    order = np.lexsort((np.tile(np.arange(len(emb)), (len(emb), 1)), -sims), axis=1)[:, :k]
    return order, np.take_along_axis(sims, order, axis=1)


def _unit_rows(n: int, d: int = 16, seed: int = 0) -> np.ndarray:
    emb = np.random.default_rng(seed).normal(size=(n, d)).astype(np.float32)
    return emb / np.linalg.norm(emb, axis=1, keepdims=True)


# exact_max_rows below n takes the IVF path; with 4√n lists ≤ IVF_NPROBE every list is visited: exact too
@pytest.mark.parametrize("n, k, exact_max_rows", [(37, 5, 1000), (60, 10, 1000), (5, 10, 1000), (120, 7, 10)])
def test_neighbours_match_brute_force_and_never_share_a_group(n, k, exact_max_rows):
    rng = np.random.default_rng(n)
    emb = _unit_rows(n, seed=n)
    groups = np.sort(rng.integers(0, max(2, n // 4), size=n))
    idx, sims = mine.nearest_neighbours(emb, groups, k, exact_max_rows)
    want_idx, want_sims = _brute_force(emb, groups, min(k, n - 1))
    finite = np.isfinite(want_sims)
    assert np.array_equal(np.where(finite, want_idx, -1), idx)
    assert np.allclose(sims[finite], want_sims[finite], atol=1e-6)
    assert all(groups[i] != groups[j] for i, row in enumerate(idx) for j in row if j >= 0)


def test_approximate_search_is_deterministic_for_a_seed_and_finds_most_true_neighbours():
    n, k = 6000, 5
    rng = np.random.default_rng(1)  # clustered, as sentence embeddings are
    emb = _unit_rows(60, d=32, seed=1)[rng.integers(0, 60, size=n)] + 0.15 * rng.normal(size=(n, 32))
    emb = (emb / np.linalg.norm(emb, axis=1, keepdims=True)).astype(np.float32)
    groups = np.arange(n) // 3
    exact = mine.nearest_neighbours(emb, groups, k)
    first = mine.nearest_neighbours(emb, groups, k, exact_max_rows=1000, seed=3)
    again = mine.nearest_neighbours(emb, groups, k, exact_max_rows=1000, seed=3)
    assert all(np.array_equal(a, b) for a, b in zip(first, again))
    recall = np.mean([len(set(a) & set(e)) / k for a, e in zip(first[0], exact[0])])
    assert recall >= 0.9


def test_neighbour_pairs_are_undirected_unique_and_thresholded():
    idx = np.array([[1, 2], [0, 2], [0, -1]])
    sims = np.array([[0.9, 0.3], [0.9, 0.5], [0.3, -np.inf]], dtype=np.float32)
    lo, hi, vals, below = mine.neighbour_pairs(idx, sims, 0.4)
    assert list(zip(lo.tolist(), hi.tolist())) == [(0, 1), (1, 2)] and below == 1
    assert np.allclose(vals, [0.9, 0.5])


def test_groups_must_be_contiguous():
    with pytest.raises(ValueError, match="contiguous"):
        mine.nearest_neighbours(np.eye(3, dtype=np.float32), np.array([0, 1, 0]), 1)


# --- pair scores --------------------------------------------------------------------------------------
def _f(text: str, year: int | None = None) -> pair_scores.ClaimFeatures:
    claim = checks.claim_from_text(f"t:{text}", text, "amr").model_copy(update={"pub_year": year})
    return pair_scores.claim_features(claim)


def test_disagreement_signals_fire_on_general_contradiction_patterns():
    base = "Colistin reduced mortality in ICU patients."
    cases = [
        ("negation_mismatch", base, "Colistin did not reduce mortality in ICU patients."),
        ("opposite_direction", base, "Colistin increased mortality in ICU patients."),
        ("antonym", "Colistin was effective in ICU patients.", "Colistin was ineffective in ICU patients."),
        ("antonym", "Resistance was common in ICU isolates.", "Resistance was rare in ICU isolates."),
        ("pivot_word", "All isolates carried the gene.", "Some isolates carried the gene."),
        ("context_conflict", base, "Colistin reduced mortality in outpatients."),
        ("numeric_mismatch", "Resistance was 12% in 2010 isolates.", "Resistance was 45% in 2010 isolates."),
    ]
    for signal, a, b in cases:
        signals = pair_scores.disagreement_signals(_f(a), _f(b))
        assert signals[signal] > 0, (signal, signals)
        assert pair_scores.disagreement(_f(a), _f(b)) > 0.15
    assert pair_scores.disagreement(_f(base), _f(base)) == 0
    assert pair_scores.disagreement_signals(_f(cases[-1][1]), _f(cases[-1][2]))["context_conflict"] == 0  # same year


def test_combined_score_is_the_paper_formula():
    a = _f("Vancomycin lowered MRSA carriage in nursing homes.", 2001)
    b = _f("Vancomycin raised MRSA carriage in nursing homes.", 2019)
    s = pair_scores.score_pair(a, b, 0.8)
    assert s.year_penalty == pytest.approx(0.08)
    want = 0.35 * 0.8 + 0.35 * s.disagreement + 0.15 * s.entity_overlap + 0.10 * s.type_compatibility - 0.08
    assert s.combined_score == pytest.approx(want, abs=1e-5)
    assert s.entity_overlap == 1.0 and s.type_compatibility == 1.0
    assert pair_scores.type_compatibility("efficacy", "factual") == 0.6
    assert pair_scores.type_compatibility("efficacy", "prognostic") == 0.3
    assert pair_scores.year_penalty(None, 2000) == 0.0 and pair_scores.year_penalty(1980, 2020) == 0.1
    custom = pair_scores.ScoringConfig(w_similarity=1, w_disagreement=0, w_entity=0, w_type=0,
                                   year=pair_scores.YearPenalty(cap=0))
    assert pair_scores.score_pair(a, b, 0.8, custom).combined_score == pytest.approx(0.8)


@given(st.text(min_size=1, max_size=20), st.text(min_size=1, max_size=20))
@settings(max_examples=50)
def test_pair_id_is_order_independent(a, b):
    assert pair_id_for(a, b) == pair_id_for(b, a)


# --- the stage ----------------------------------------------------------------------------------------
def test_stage_mines_within_domains_never_within_articles(mined, stage_dirs):
    out, stats = mined
    pairs = list(io.read_records(out, CandidatePair))
    assert len(pairs) == stats["kept"] > 10 and io.is_done(out)
    assert {p.domain for p in pairs} == set(DOMAINS)
    abstracts = {a.article_uid: a.text for a in io.read_records(stage_dirs / "abstracts", Abstract)}
    for p in pairs:
        assert p.claim_a.domain == p.claim_b.domain == p.domain
        assert p.claim_a.article_uid != p.claim_b.article_uid and p.claim_a.claim_id < p.claim_b.claim_id
        assert p.pair_id == pair_id_for(p.claim_b.claim_id, p.claim_a.claim_id)
        assert p.scores.similarity >= 0.40 and p.scores.combined_score >= 0.25
        assert p.abstract_a == abstracts[p.claim_a.article_uid] and p.abstract_b == abstracts[p.claim_b.article_uid]
    for d in DOMAINS:
        ranks = [(-p.scores.combined_score, p.pair_id) for p in pairs if p.domain == d]
        assert ranks == sorted(ranks)
    assert [p.domain for p in pairs] == sorted((p.domain for p in pairs), key=mine.ontology.DOMAIN_NAMES.index)
    assert stats["domains_skipped"] == {"amr": stats["claims_by_domain"]["amr"]}
    assert stats["by_domain"] == {d: sum(p.domain == d for p in pairs) for d in DOMAINS}
    assert stats["score_distribution"]["combined_score"]["n"] == len(pairs)
    assert stats["embedding_cache"]["embedded"] == stats["embedding_cache"]["unique_texts"] > 0
    assert io.read_manifest(out)["inputs"][1] == str((stage_dirs / "abstracts").resolve())


def test_stage_is_deterministic_resumable_and_embeds_nothing_twice(mined, stage_dirs, tmp_path):
    out, stats = mined
    before = [(p.pair_id, p.scores) for p in io.read_records(out, CandidatePair)]
    assert mine.run_stage(stage_dirs / "claims", out) == stats  # resumed: nothing redone
    again = mine.run_stage(stage_dirs / "claims", tmp_path / "again")  # fresh cache: embeds again
    assert [(p.pair_id, p.scores) for p in io.read_records(tmp_path / "again", CandidatePair)] == before
    cached = mine.run_stage(stage_dirs / "claims", tmp_path / "cached",
                            mine.MineConfig(cache_dir=str(tmp_path / "again" / "embedding_cache")))
    assert cached["embedding_cache"]["embedded"] == 0 and cached["kept"] == again["kept"]
    assert [(p.pair_id, p.scores) for p in io.read_records(tmp_path / "cached", CandidatePair)] == before


def test_cap_and_thresholds_are_configurable(stage_dirs, mined, tmp_path, monkeypatch):
    cache = str(mined[0] / "embedding_cache")
    capped = mine.run_stage(stage_dirs / "claims", tmp_path / "capped",
                            mine.MineConfig(cache_dir=cache, cap_per_domain=2))
    assert capped["by_domain"] == {d: 2 for d in DOMAINS} and capped["dropped_over_domain_cap"] > 0
    top = {p.pair_id for p in io.read_records(tmp_path / "capped", CandidatePair)}
    ranked = [p for p in io.read_records(mined[0], CandidatePair)]
    assert top == {p.pair_id for d in DOMAINS for p in [q for q in ranked if q.domain == d][:2]}
    for field, value in (("min_similarity", 0.6), ("min_combined", 0.35)):
        strict = mine.run_stage(stage_dirs / "claims", tmp_path / field, mine.MineConfig(cache_dir=cache,
                                                                                          **{field: value}))
        assert strict["kept"] < mined[1]["kept"]
        assert all(getattr(p.scores, "similarity" if field == "min_similarity" else "combined_score") >= value
                   for p in io.read_records(tmp_path / field, CandidatePair))
    embedded = []
    monkeypatch.setattr(mine, "slot_similarities", lambda pairs, *a, **k: embedded.append(len(pairs)) or
                        [(0.5, 0.5)] * len(pairs))
    for slots in (True, False):
        mine.run_stage(stage_dirs / "claims", tmp_path / f"slots-{slots}",
                       mine.MineConfig(cache_dir=cache, slot_similarity=slots))
    assert embedded == [len(ranked)]  # only the run with slot_similarity on embeds slot phrases
    without = {p.pair_id: p.scores for p in io.read_records(tmp_path / "slots-False", CandidatePair)}
    assert set(without) == {p.pair_id for p in ranked}
    assert all(s.exposure_similarity is None and s.outcome_similarity is None for s in without.values())


def _pairs_and_scores(folder: Path) -> list:
    return [(p.pair_id, p.scores) for p in io.read_records(folder, CandidatePair)]


def test_cache_is_filled_a_shard_at_a_time_with_the_same_vectors(stage_dirs, mined, tmp_path, monkeypatch):
    """The ranks' vectors enter the cache in bounded chunks (never all at once), and nothing changes."""
    monkeypatch.setattr(embeddings, "CACHE_SHARD_ROWS", 7)
    handed, add = [], embeddings.EmbeddingCache.add
    monkeypatch.setattr(embeddings.EmbeddingCache, "add",
                        lambda cache, keys, vectors: (handed.append(len(keys)), add(cache, keys, vectors))[1])
    stats = mine.run_stage(stage_dirs / "claims", tmp_path / "chunked")
    assert len(handed) > 1 and max(handed) == 7  # fill_cache hands the cache one shard's rows at a time
    shards = sorted((tmp_path / "chunked" / "embedding_cache").rglob("emb-*.npz"))
    embedded = stats["embedding_cache"]["embedded"]
    assert embedded == mined[1]["embedding_cache"]["embedded"] and len(shards) == -(-embedded // 7) > 1
    assert all(len(np.load(s)["keys"]) == 7 for s in shards[:-1])
    assert _pairs_and_scores(tmp_path / "chunked") == _pairs_and_scores(mined[0])


def test_bfloat16_mining_uses_its_own_cache_and_finds_nearly_the_same_pairs(stage_dirs, mined, tmp_path):
    cache = tmp_path / "cache"
    shutil.copytree(mined[0] / "embedding_cache", cache)
    stats = mine.run_stage(stage_dirs / "claims", tmp_path / "bf16",
                           mine.MineConfig(cache_dir=str(cache), precision="bfloat16"))
    assert stats["embedding_cache"]["embedded"] == mined[1]["embedding_cache"]["embedded"]  # float32 never reused
    assert sorted(json.loads(m.read_text())["precision"] for m in cache.glob("*/meta.json")) == ["bfloat16",
                                                                                                 "float32"]
    full = {p for p, _ in _pairs_and_scores(mined[0])}
    half = {p for p, _ in _pairs_and_scores(tmp_path / "bf16")}
    assert len(full & half) >= 0.8 * len(full)


def test_corrupt_cache_is_rebuilt_and_counted(stage_dirs, encoder, tmp_path):
    few = list(io.read_records(stage_dirs / "claims", Claim))[:8]
    io.write_records(tmp_path / "claims", few, io.StageStats("claims"))
    config = mine.MineConfig(cache_dir=str(tmp_path / "cache"), min_similarity=0.0, min_combined=0.0)
    first = mine.run_stage(tmp_path / "claims", tmp_path / "a", config)
    shard = next((tmp_path / "cache").rglob("emb-*.npz"))
    assert len(np.load(shard)["keys"]) == first["embedding_cache"]["embedded"] > 0
    shard.write_bytes(b"not a zip file")
    second = mine.run_stage(tmp_path / "claims", tmp_path / "b", config)
    assert second["embedding_cache"]["corrupt_cache_shards"] == 1
    assert second["embedding_cache"]["embedded"] == first["embedding_cache"]["embedded"]
    assert [(p.pair_id, p.scores) for p in io.read_records(tmp_path / "b", CandidatePair)] == [
        (p.pair_id, p.scores) for p in io.read_records(tmp_path / "a", CandidatePair)]


def test_mine_finds_abstracts_elsewhere_or_leaves_them_empty(stage_dirs, mined, tmp_path):
    claims_copy = tmp_path / "claims"
    claims_copy.mkdir()
    for p in io.shard_paths(stage_dirs / "claims"):
        (claims_copy / p.name).write_bytes(p.read_bytes())
    io.mark_done(claims_copy)  # no manifest: the abstracts are unknown
    cache = str(mined[0] / "embedding_cache")
    bare = mine.run_stage(claims_copy, tmp_path / "bare", mine.MineConfig(cache_dir=cache))
    assert bare["pairs_without_abstract_text"] == bare["kept"] > 0
    given_dir = mine.run_stage(claims_copy, tmp_path / "given",
                               mine.MineConfig(cache_dir=cache, abstracts_dir=str(stage_dirs / "abstracts")))
    assert given_dir["pairs_without_abstract_text"] == 0
    with pytest.raises(FileNotFoundError, match="abstracts folder"):
        mine.run_stage(claims_copy, tmp_path / "x", mine.MineConfig(abstracts_dir=str(tmp_path / "none")))


def test_small_and_empty_inputs(tmp_path, encoder):
    one = checks.claim_from_text("pmid:9", "Aspirin reduced stroke risk in adults.", "genomics")
    io.write_records(tmp_path / "one", [one], io.StageStats("claims"))
    stats = mine.run_stage(tmp_path / "one", tmp_path / "out1")
    assert stats["kept"] == 0 and stats["domains_skipped"] == {"genomics": 1} and io.is_done(tmp_path / "out1")
    io.write_records(tmp_path / "none", [], io.StageStats("claims"))
    assert mine.run_stage(tmp_path / "none", tmp_path / "out2")["kept"] == 0
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="is empty"):
        mine.run_stage(tmp_path / "empty", tmp_path / "out3")


def test_cli_mine_and_missing_model_path(stage_dirs, mined, tmp_path, capsys):
    args = ["mine", str(stage_dirs / "claims"), "--out", str(tmp_path / "p"), "--cache-dir",
            str(mined[0] / "embedding_cache"), "--abstracts", str(stage_dirs / "abstracts")]
    assert cli.main(args) == 0
    assert re.search(r"mine: \d+ candidate pairs from \d+ claims", capsys.readouterr().out)
    bad = ["mine", str(stage_dirs / "claims"), "--out", str(tmp_path / "q"), "--encoder", str(tmp_path / "no-model")]
    assert cli.main(bad) == 1
    err = capsys.readouterr().err
    assert "model path" in err and "does not exist" in err and "Traceback" not in err
    assert not io.is_done(tmp_path / "q")


def test_default_model_resolves_to_the_packaged_files():
    path = Path(embeddings.resolve_model(embeddings.DEFAULT_MODEL))
    assert path == embeddings.packaged_default_model() and (path / "config.json").exists()
    assert embeddings.resolve_model("org/some-model") == "org/some-model"
    with pytest.raises(FileNotFoundError, match="does not exist"):
        embeddings.resolve_model("./missing/model")
