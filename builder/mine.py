"""Stage: Claim → CandidatePair (paper §5.1, appendix G.4).

Claims are embedded (all-MiniLM-L6-v2 by default, cached on disk by text hash), and each claim's
top-k cosine neighbours are found **within its domain, never in its own article**, with faiss: an
exact flat index up to ``exact_search_max_rows`` claims per domain, an IVF index (seeded, so
deterministic) above it. Neighbour links with similarity ≥ ``min_similarity`` become candidate pairs, scored by :mod:`builder.pair_scores`; pairs with
``combined ≥ min_combined`` are ranked (combined score descending, then pair id) and capped
per domain. With a questions stage folder (``questions_dir``), pairs between claims of different articles
that answer the same question come first (``cap_per_question`` each, by combined score with every two articles
given a row before any two a second, carrying the question), open mining fills the rest of each domain's cap, and an open pair carries a question both claims
answer. Output: CandidatePair shards with both abstracts' text, ``stats.json`` (pairs per
domain, score distributions, embedding-cache counts, timings) and ``manifest.json``.

CLI: ``biodivergence mine CLAIMS_DIR --out DIR [--abstracts DIR] [--model NAME] [--questions DIR]``.
"""

from __future__ import annotations

import argparse
import heapq
import logging
import time
from collections import Counter
from collections.abc import Hashable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from biodivergence_dataset import io, ontology
from biodivergence_dataset.arguments import add_config_arguments, config_from_args
from biodivergence_dataset.records import CandidatePair, Claim, MiningScores, Question, pair_id_for

from . import pair_scores
from .annotators.frame_annotator import frames_of, slot_similarities
from .embeddings import BATCHES_DIR, DEFAULT_MODEL, PRECISIONS, EmbedConfig, fill_cache
from .folders import add_force_argument, claim_output
from .framealign import best_alignment
from .pair_scores import ScoringConfig
from .runtime import RuntimeConfig, check_stage_input, clear_tasks
from .stage import Opened, Stage, execute

log = logging.getLogger(__name__)

STAGE = "mine"
SCORE_FIELDS = tuple(MiningScores.model_fields)
#: Claims per domain up to which the neighbour search is exact.
EXACT_SEARCH_MAX_ROWS = 50_000


class MineConfig(BaseModel):
    """Parameters of pair mining (a YAML ``mine:`` section maps onto this)."""

    model_config = ConfigDict(extra="forbid", protected_namespaces=(), allow_inf_nan=False)  # nan / inf: no bound

    model: str = Field(DEFAULT_MODEL, description="sentence-transformers model name or folder")
    device: str = Field("cpu", description="torch device of the encoder")
    #: Encoder weight precision: float32 (the paper's vectors) or bfloat16 (0.988 top-10 neighbour overlap;
    #: 2.9x float32's speed on one avx512_bf16 machine, 0.77x on another: run benchmarks/embeddings.py on
    #: yours first). Each precision has its own cache folder.
    precision: Literal[PRECISIONS] = Field(  # type: ignore[valid-type]
        PRECISIONS[0], description="encoder weight precision (bfloat16: faster on CPUs with bfloat16 units; own "
                                   "cache)")
    batch_size: int = Field(64, ge=1, description="sentences per encoder batch")
    cache_dir: str | None = Field(None, description="embedding cache folder (default: OUT/embedding_cache)")
    abstracts_dir: str | None = Field(None, description="abstracts stage folder for the pairs' abstract text "
                                                        "(default: from the claims manifest)")
    top_k: int = Field(10, ge=1, description="embedding neighbours proposed per claim")
    #: Exact neighbour search up to this many claims per domain; an approximate (IVF) index above.
    exact_search_max_rows: int = Field(EXACT_SEARCH_MAX_ROWS, ge=1)
    seed: int = 0
    min_similarity: float = Field(0.40, ge=-1.0, le=1.0)
    min_combined: float = 0.25
    cap_per_domain: int = Field(10_000, ge=0)
    drop_identical_text: bool = True
    #: Added to the paper's combined score when ranking (not when thresholding) for pairs whose claim
    #: frames pass the same-question gate, so the per-domain cap keeps same-question pairs first.
    frame_alignment_bonus: float = Field(0.25, ge=0.0)
    #: Also propose claims whose frames share an exposure word and an outcome word (same question),
    #: besides the embedding neighbours; words in more than ``frame_max_df`` claims of a domain are
    #: ignored for this (too common to tell questions apart). The paper's thresholds still apply.
    frame_candidates: bool = True
    frame_max_df: int = Field(200, ge=1)
    #: A finished questions stage folder (``builder.questions``): pairs are first formed between claims of
    #: different articles that answer the same question, ranked by the combined score, ``cap_per_question``
    #: per question, each article pair's best before any second (from the ``question_candidates`` × cap most
    #: similar such pairs and each article pair's most similar); open mining fills the
    #: rest of each domain's cap. None: open mining only.
    questions_dir: str | None = Field(None, description="finished questions stage folder: pairs within each "
                                                        "question first (default: none)")
    #: Embed the exposure and outcome phrases of every pair for the frames annotator's same-question gate
    #: (``MiningScores.exposure_similarity``/``outcome_similarity``); off leaves them None (the reader annotator,
    #: which reads findings against the question, does not use them).
    slot_similarity: bool = True
    #: A question that k trials answer has k(k-1)/2 article pairs, each given a row before any gets a second:
    #: 1,000 covers every pair of 45 trials. At 150, four of the demo pack's questions over the Cohen reviews'
    #: included studies (``benchmarks/grouped_build.py``) lost article pairs: 1,014 distinct rows, 1,242 at 1,000.
    cap_per_question: int = Field(1000, ge=0)
    #: At most this many pairs per claim within one question (None: no limit), taken in rank order: one claim
    #: in dozens of rows makes a benchmark repeat itself, and one misread claim a hub of wrong labels.
    max_pairs_per_claim: int | None = Field(None, ge=1)
    #: Fill each domain's cap by the paper's open mining after the within-question pairs. False keeps only
    #: pairs whose claims answer a common declared question (needs ``questions_dir``): a question-centred
    #: release, every row judged against its question.
    open_fill: bool = Field(True, description="fill each domain's cap by open mining after the pairs within a "
                                               "question (--no-open-fill: those only; needs --questions)")
    question_candidates: int = Field(4, ge=1)
    scoring: ScoringConfig = ScoringConfig()
    shard_size: int = Field(io.DEFAULT_SHARD_SIZE, ge=1)


# --- neighbour search ---------------------------------------------------------------------------------
def _largest_group(groups: np.ndarray) -> int:
    """Rows in the largest group (ValueError unless each group's rows are contiguous)."""
    sizes = np.unique(groups, return_counts=True)[1]
    if len(groups) and (np.diff(groups) != 0).sum() + 1 != len(sizes):
        raise ValueError("rows of one group must be contiguous")
    return int(sizes.max()) if len(sizes) else 0


def _index(emb: np.ndarray, exact_max_rows: int, seed: int):
    """A faiss inner-product index of ``emb``: exact (flat) up to ``exact_max_rows`` rows, else an IVF index
    (4√n lists, k-means seeded, one thread while training so the same seed gives the same index)."""
    import faiss

    n, d = emb.shape
    if n <= exact_max_rows:
        index = faiss.IndexFlatIP(d)
    else:
        nlist = int(4 * np.sqrt(n))
        index = faiss.IndexIVFFlat(faiss.IndexFlatIP(d), d, nlist, faiss.METRIC_INNER_PRODUCT)
        index.cp.seed = seed
        threads = faiss.omp_get_max_threads()
        faiss.omp_set_num_threads(1)
        try:
            index.train(emb)
        finally:
            faiss.omp_set_num_threads(threads)
        index.nprobe = min(nlist, IVF_NPROBE)
    index.add(emb)
    return index


#: Lists an IVF query visits. On the shared corpus's claim embeddings (four noisy copies, 41k claims)
#: recall@10 of the exact neighbours is 0.97 in 0.61 of the exact search's time, and the share of
#: lists visited falls as 1/√n (``benchmarks/neighbours.py``).
IVF_NPROBE = 48


def nearest_neighbours(emb: np.ndarray, groups: np.ndarray, k: int, exact_max_rows: int = EXACT_SEARCH_MAX_ROWS,
                       seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Top-``k`` inner-product neighbours of every row among rows of *other* groups, with faiss.

    ``emb``: (n, d) float32, L2-normalised; ``groups``: (n,) ints, each group's rows contiguous.
    Returns ``(indices, similarities)``, both (n, k'), k' = min(k, n − 1); sorted by similarity
    descending then index; slots without a neighbour hold index −1 and similarity −inf. Exact up to
    ``exact_max_rows`` rows, approximate (IVF, deterministic for ``seed``) above.
    """
    own = _largest_group(groups)  # a row's own group can fill this many of its nearest slots
    n = len(emb)
    kk = min(k, n - 1)
    if kk <= 0:
        return np.empty((n, 0), dtype=np.int64), np.empty((n, 0), dtype=np.float32)
    emb = np.ascontiguousarray(emb, dtype=np.float32)
    sims, idx = _index(emb, exact_max_rows, seed).search(emb, min(n, kk + own))
    mask = (idx < 0) | (groups[np.clip(idx, 0, None)] == groups[:, None])
    sims = np.where(mask, -np.inf, sims).astype(np.float32)
    order = np.lexsort((np.where(mask, n, idx), -sims), axis=1)[:, :kk]
    idx, sims = np.take_along_axis(idx, order, axis=1), np.take_along_axis(sims, order, axis=1)
    idx[~np.isfinite(sims)] = -1
    return idx.astype(np.int64), sims


def neighbour_pairs(indices: np.ndarray, sims: np.ndarray, min_similarity: float
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Undirected pairs ``(i < j, similarity)`` from neighbour lists, each pair once, similarity ≥ threshold;
    also returns how many distinct neighbour links fell below the threshold."""
    n, k = indices.shape
    rows = np.repeat(np.arange(n), k)
    cols, vals = indices.ravel(), sims.ravel()
    valid = cols >= 0
    rows, cols, vals = rows[valid], cols[valid], vals[valid]
    lo, hi = np.minimum(rows, cols), np.maximum(rows, cols)
    codes = lo.astype(np.int64) * n + hi
    codes, first = np.unique(codes, return_index=True)
    lo, hi, vals = lo[first], hi[first], vals[first]
    keep = vals >= min_similarity
    return lo[keep], hi[keep], vals[keep], int((~keep).sum())


def frame_candidates(frames: list[tuple], groups: np.ndarray, max_df: int) -> tuple[np.ndarray, np.ndarray]:
    """Claim pairs ``(i, j)`` of different articles whose frames share an exposure word and an outcome word.

    An inverted index over exposure words (a word in more than ``max_df`` claims is skipped) proposes
    partners; a partner is kept when it also shares an outcome word. Written here because the blocking
    key is our own frame, not a text field a dedup/LSH library could index."""
    exposure_index: dict[str, list[int]] = {}
    outcome_words: list[frozenset[str]] = []
    for i, fs in enumerate(frames):
        exp = frozenset().union(*(f.exposure_terms for f in fs if not f.finding.generic))
        outcome_words.append(frozenset().union(*(f.outcome_terms for f in fs if not f.finding.generic)))
        for w in exp:
            exposure_index.setdefault(w, []).append(i)
    found: set[tuple[int, int]] = set()
    for members in exposure_index.values():
        if len(members) > max_df:
            continue
        for x, i in enumerate(members):
            for j in members[x + 1:]:
                if groups[i] != groups[j] and outcome_words[i] & outcome_words[j]:
                    found.add((i, j))
    if not found:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    pairs = np.array(sorted(found), dtype=np.int64)
    return pairs[:, 0], pairs[:, 1]


def _with_frame_candidates(indices: np.ndarray, sims: np.ndarray, emb: np.ndarray, groups: np.ndarray,
                           frames: list[tuple], max_df: int) -> tuple[np.ndarray, np.ndarray]:
    """The neighbour lists widened by the frame candidates (one extra column per extra partner, padded)."""
    lo, hi = frame_candidates(frames, groups, max_df)
    if len(lo) == 0:
        return indices, sims
    extra: dict[int, list[int]] = {}
    for i, j in zip(lo.tolist(), hi.tolist(), strict=True):
        extra.setdefault(i, []).append(j)
    width = max(len(v) for v in extra.values())
    add_idx = np.full((len(indices), width), -1, dtype=np.int64)
    add_sim = np.full((len(indices), width), -np.inf, dtype=np.float32)
    for i, js in extra.items():
        add_idx[i, :len(js)] = js
        add_sim[i, :len(js)] = emb[js] @ emb[i]
    return np.concatenate([indices, add_idx], axis=1), np.concatenate([sims, add_sim], axis=1)


# --- scoring and ranking ------------------------------------------------------------------------------
@dataclass
class DomainResult:
    #: (-rank, pair id, i, j, scores), and the question id as a sixth field for pairs formed within a question
    pairs: list[tuple]
    dropped: dict[str, int]


def _normalised(text: str) -> str:
    return " ".join(text.lower().split())


def mine_domain(claims: list[Claim], emb: np.ndarray, config: MineConfig, cap: int | None = None,
                taken: frozenset[str] = frozenset()) -> DomainResult:
    """Candidate pairs of one domain's claims (sorted by article), ranked and capped at ``cap`` (default: the
    domain cap); pairs in ``taken`` (formed within a question) are left out."""
    cap = config.cap_per_domain if cap is None else cap
    groups = np.unique([c.article_uid for c in claims], return_inverse=True)[1]
    indices, sims = nearest_neighbours(emb, groups, config.top_k, config.exact_search_max_rows, config.seed)
    frames = [frames_of(c) for c in claims]
    if config.frame_candidates:
        indices, sims = _with_frame_candidates(indices, sims, emb, groups, frames, config.frame_max_df)
    lo, hi, vals, below = neighbour_pairs(indices, sims, config.min_similarity)
    dropped = {"below_similarity": below, "identical_text": 0, "below_combined": 0, "over_domain_cap": 0}
    skipped = {"within_question": 0}  # pairs already formed within a question: not dropped, not counted twice
    features: dict[int, pair_scores.ClaimFeatures] = {}

    def feats(k: int) -> pair_scores.ClaimFeatures:
        if k not in features:
            features[k] = pair_scores.claim_features(claims[k])
        return features[k]

    def candidates() -> Iterator[tuple[float, str, int, int, MiningScores]]:
        for i, j, sim in zip(lo.tolist(), hi.tolist(), vals.tolist(), strict=True):
            a, b = claims[i], claims[j]
            pid = pair_id_for(a.claim_id, b.claim_id)
            if pid in taken:
                skipped["within_question"] += 1
                continue
            if config.drop_identical_text and _normalised(a.sentence) == _normalised(b.sentence):
                dropped["identical_text"] += 1
                continue
            scores = pair_scores.score_pair(feats(i), feats(j), min(1.0, sim), config.scoring)
            if scores.combined_score < config.min_combined:
                dropped["below_combined"] += 1
                continue
            same_question = best_alignment(frames[i], frames[j])[2].comparable
            rank = scores.combined_score + config.frame_alignment_bonus * same_question
            yield (-rank, pid, i, j, scores)

    # The cap's worth of best pairs only (memory bounded by the cap, not by the pairs above threshold);
    # nsmallest equals sorted(...)[:cap], and (rank, pair id) never ties.
    ranked = heapq.nsmallest(cap, candidates(), key=lambda r: (r[0], r[1]))
    # the pairs candidates() yielded
    above = len(lo) - dropped["identical_text"] - dropped["below_combined"] - skipped["within_question"]
    dropped["over_domain_cap"] = max(0, above - cap)
    return DomainResult(ranked, dropped)


def question_pairs(claims: list[Claim], emb: np.ndarray, assigned: dict[str, dict[str, float]], config: MineConfig
                   ) -> tuple[list[tuple[float, str, int, int, MiningScores, str]], dict[str, int]]:
    """Pairs of claims of different articles assigned to the same question (one domain's claims), each
    question's best ``cap_per_question`` by the paper's combined score, with the question's id.

    Every two articles that answer a question get a row before any two get a second (``_select``), so a
    question's rows cover as many of its article pairs as its cap allows rather than repeating its best-scored
    few. Of a question's cross-article pairs, the ``question_candidates × cap`` most similar (embedding cosine)
    and each article pair's most similar are scored, so a question with thousands of claims costs a matrix
    product, not millions of scorings. A pair answering two questions goes to the first (pack order of ids)
    that keeps it."""
    groups = np.unique([c.article_uid for c in claims], return_inverse=True)[1]
    members: dict[str, list[int]] = {}
    for k, c in enumerate(claims):
        for qid in assigned.get(c.claim_id, {}):
            members.setdefault(qid, []).append(k)
    dropped = {"identical_text": 0, "over_question_cap": 0}
    out: list[tuple[float, str, int, int, MiningScores, str]] = []
    taken: set[str] = set()
    for qid in sorted(members):
        idx = np.asarray(members[qid], dtype=np.int64)
        if len(idx) < 2 or config.cap_per_question == 0:
            continue
        iu, ju = np.triu_indices(len(idx), 1)
        cross = groups[idx[iu]] != groups[idx[ju]]
        iu, ju = iu[cross], ju[cross]
        sims = np.einsum("ij,ij->i", emb[idx[iu]], emb[idx[ju]])
        order = np.lexsort((iu, -sims))
        ga, gb = groups[idx[iu]], groups[idx[ju]]
        article_pair = np.minimum(ga, gb) * (int(groups.max()) + 1) + np.maximum(ga, gb)
        leaders = np.unique(article_pair[order], return_index=True)[1]  # each article pair's most similar
        keep = np.zeros(len(order), dtype=bool)
        keep[: config.cap_per_question * config.question_candidates] = True
        keep[leaders] = True
        order = order[keep]
        scored, elsewhere = [], 0
        for o in order.tolist():
            i, j = int(idx[iu[o]]), int(idx[ju[o]])
            a, b = claims[i], claims[j]
            pid = pair_id_for(a.claim_id, b.claim_id)
            if pid in taken:
                elsewhere += 1
                continue
            if config.drop_identical_text and _normalised(a.sentence) == _normalised(b.sentence):
                dropped["identical_text"] += 1
                elsewhere += 1
                continue
            scores = pair_scores.score_pair(pair_scores.claim_features(a), pair_scores.claim_features(b),
                                        min(1.0, float(sims[o])), config.scoring)
            scored.append((-scores.combined_score, pid, i, j, scores, qid))
        scored.sort(key=lambda r: (r[0], r[1]))
        chosen = _select(scored, [frozenset((claims[r[2]].article_uid, claims[r[3]].article_uid)) for r in scored],
                         config.cap_per_question, config.max_pairs_per_claim)
        dropped["over_question_cap"] += len(iu) - elsewhere - len(chosen)
        for row in chosen:
            taken.add(row[1])
            out.append(row)
    return out, dropped


def _select(ranked: list, keys: list[Hashable], cap: int, per_claim: int | None) -> list:
    """At most ``cap`` ranked pair rows ``(…, pair_id, i, j, …)``, in rank order, in which no claim appears more
    than ``per_claim`` times; the best row of each key (``keys[n]`` for ``ranked[n]``: its article pair) is taken
    before any second row of one."""
    seen: Counter[int] = Counter()
    taken: set[int] = set()
    covered: set[Hashable] = set()
    for first_pass in (True, False):
        for n, (row, key) in enumerate(zip(ranked, keys, strict=True)):
            if len(taken) == cap:
                break
            if n in taken or first_pass and key in covered:
                continue
            i, j = row[2], row[3]
            if per_claim is None or max(seen[i], seen[j]) < per_claim:
                seen[i] += 1
                seen[j] += 1
                taken.add(n)
                covered.add(key)
    return [ranked[n] for n in sorted(taken)]


def shared_question(a: Claim, b: Claim, assigned: dict[str, dict[str, float]]) -> str | None:
    """The question both claims answer (the one both answer best, by the lower of their scores), or None."""
    qa, qb = assigned.get(a.claim_id, {}), assigned.get(b.claim_id, {})
    common = set(qa) & set(qb)
    return max(sorted(common), key=lambda q: min(qa[q], qb[q])) if common else None


def _pair(claims: list[Claim], i: int, j: int, scores: MiningScores, pair_id: str, texts: dict[str, str],
          question: Question | None = None) -> CandidatePair:
    a, b = sorted((claims[i], claims[j]), key=lambda c: c.claim_id)
    return CandidatePair(pair_id=pair_id, domain=a.domain, claim_a=a, claim_b=b,
                         abstract_a=texts.get(a.article_uid, ""), abstract_b=texts.get(b.article_uid, ""),
                         scores=scores, question=question)


def _read_questions(questions_dir: str | None) -> tuple[dict[str, Question], dict[str, dict[str, float]]]:
    """The questions stage's questions and assignments (none without a questions folder)."""
    if not questions_dir:
        return {}, {}
    from .questions import read_assignments

    return read_assignments(questions_dir)


# --- statistics ---------------------------------------------------------------------------------------
def score_distribution(values: Iterable[float | None]) -> dict[str, float]:
    """Count, quantiles and mean of the known values (a slot similarity is None where a frame lacks the slot)."""
    v = np.asarray([x for x in values if x is not None], dtype=np.float64)
    if v.size == 0:
        return {"n": 0}
    q = np.percentile(v, [10, 50, 90])
    return {"n": int(v.size), "min": round(float(v.min()), 4), "p10": round(float(q[0]), 4),
            "median": round(float(q[1]), 4), "mean": round(float(v.mean()), 4), "p90": round(float(q[2]), 4),
            "max": round(float(v.max()), 4)}


# --- stage --------------------------------------------------------------------------------------------
def _abstracts_dir(claims_dir: Path, config: MineConfig) -> Path | None:
    if config.abstracts_dir:
        path = Path(config.abstracts_dir)
        if not path.is_dir():
            raise FileNotFoundError(f"abstracts folder {path} does not exist")
        return path
    try:
        inputs = io.read_manifest(claims_dir).get("inputs", [])
    except FileNotFoundError:
        return None
    return Path(inputs[0]) if inputs and Path(inputs[0]).is_dir() else None


def _by_domain(claims: Iterable[Claim]) -> dict[str, list[Claim]]:
    out: dict[str, list[Claim]] = {}
    for c in claims:
        out.setdefault(c.domain, []).append(c)
    return {d: sorted(out[d], key=lambda c: (c.article_uid, c.sentence_start, c.claim_id))
            for d in ontology.DOMAIN_NAMES if d in out}


def _mineable_domains(claims: Iterable[Claim], stats: io.StageStats) -> dict[str, list[Claim]]:
    """Claims by domain; a domain with fewer than two claims or articles is skipped, warned about and counted."""
    out = {}
    stats.figures["claims"] = 0
    for domain, members in _by_domain(claims).items():
        stats.figures["claims"] = stats.figures.get("claims", 0) + len(members)
        stats.count("claims_by_domain", domain, len(members))
        articles = len({c.article_uid for c in members})
        if articles < 2:
            log.warning("domain %s has %d claim(s) from %d article(s): no pairs possible", domain, len(members),
                        articles)
            stats.count("domains_skipped", domain, len(members))
            continue
        out[domain] = members
    return out


def open_stage(claims_dir: str | Path, out_dir: Path, config: MineConfig) -> Opened:
    if not config.open_fill and not config.questions_dir:
        raise ValueError("mine: open_fill: false keeps only pairs within a question, so it needs a question pack "
                         "(a questions: {pack: FILE} section, or --questions DIR)")
    claims_dir = check_stage_input(claims_dir, "claims")
    out_dir = claim_output(out_dir, STAGE, [claims_dir])
    abstracts_dir = _abstracts_dir(claims_dir, config)
    params = {"config": config.model_dump(), "input": io.done_fingerprint(claims_dir),
              "abstracts": io.done_fingerprint(abstracts_dir) if abstracts_dir and io.is_done(abstracts_dir) else None,
              "questions": io.done_fingerprint(config.questions_dir) if config.questions_dir else None}
    inputs = [str(claims_dir)] + ([str(abstracts_dir)] if abstracts_dir else [])
    return Opened(STAGE, config, inputs, out_dir, params, extra={"abstracts_dir": abstracts_dir})


def work(opened: Opened, runtime: RuntimeConfig) -> io.StageStats:
    """Mine the candidate pairs; the claim sentences are embedded on ``runtime.tasks`` ranks of its executor, with
    the same vectors whatever it is."""
    import shutil

    from .embeddings import embed_texts, embedding_dimension, load_encoder, open_cache

    config, out_dir, claims_dir = opened.config, opened.out, Path(opened.inputs[0])
    abstracts_dir = opened.extra["abstracts_dir"]
    encoder = load_encoder(config.model, config.device, config.precision)
    stats = io.StageStats(STAGE, unit="pairs")  # seen: the neighbour pairs considered
    domains = _mineable_domains(io.read_records(claims_dir, Claim), stats)
    cache = open_cache(config.cache_dir or out_dir / "embedding_cache", config.model, embedding_dimension(encoder),
                       config.precision)
    questions, assigned = _read_questions(config.questions_dir)
    if not config.open_fill:  # only claims that answer a question can be paired: embed no others
        domains = {d: kept for d, claims in domains.items() if (kept := [c for c in claims if c.claim_id in assigned])}
    t0 = time.perf_counter()
    all_claims = [c for claims in domains.values() for c in claims]
    sentences = [c.sentence for c in all_claims]
    embedded = fill_cache(sentences, cache, out_dir, EmbedConfig.of(config), runtime)
    emb = embed_texts(sentences, encoder, cache, config.batch_size)  # every sentence is in the cache now
    cache.stats.embedded, cache.stats.from_cache = embedded, cache.stats.unique_texts - embedded
    t1 = time.perf_counter()
    results: dict[str, tuple[list[Claim], DomainResult]] = {}
    offset = 0
    for domain, claims in domains.items():
        block = emb[offset:offset + len(claims)]
        offset += len(claims)
        within, within_dropped = question_pairs(claims, block, assigned, config) if assigned else ([], {})
        for reason, n in within_dropped.items():
            stats.count("within_question_dropped", reason, n)
        result = (mine_domain(claims, block, config, max(0, config.cap_per_domain - len(within)),
                              frozenset(r[1] for r in within)) if config.open_fill else DomainResult([], {}))
        for reason, n in result.dropped.items():
            stats.drop(reason, n)
        result.pairs[:0] = within  # within-question pairs first, each with its question id as a sixth field
        results[domain] = (claims, result)
    timings = {"embed": t1 - t0, "search_and_score": time.perf_counter() - t1}

    from .questions import abstract_texts

    needed = {claims[k].article_uid for claims, r in results.values() for p in r.pairs for k in (p[2], p[3])}
    texts = abstract_texts(abstracts_dir, needed)
    pairs = []
    for claims, r in results.values():
        for row in r.pairs:
            _, pid, i, j, scores = row[:5]
            qid = row[5] if len(row) > 5 else shared_question(claims[i], claims[j], assigned)
            kind = "within_question" if len(row) > 5 else "open_with_question" if qid else "open"
            stats.count("pairs_by_origin", kind)
            if qid:
                stats.count("pairs_by_question", qid)
            pairs.append(_pair(claims, i, j, scores, pid, texts, questions.get(qid) if qid else None))
    t2 = time.perf_counter()
    # slot phrases are not cached: the cache holds claim sentences, whose count the stage reports
    if config.slot_similarity:
        similarities = slot_similarities(pairs, encoder, batch_size=config.batch_size)
        for p, (exp_sim, out_sim) in zip(pairs, similarities, strict=True):
            p.scores.exposure_similarity, p.scores.outcome_similarity = exp_sim, out_sim
    timings["slot_similarity"] = time.perf_counter() - t2
    for p in pairs:
        stats.count(io.BY_DOMAIN, p.domain)
    stats.kept = len(pairs)
    stats.seen = stats.kept + sum(stats.dropped.values())
    stats.figures.update({
        "score_distribution": {f: score_distribution(getattr(p.scores, f) for p in pairs) for f in SCORE_FIELDS},
        "combined_score_by_domain": {d: score_distribution(p.scores.combined_score for p in pairs if p.domain == d)
                                     for d in results},
        "embedding_cache": cache.stats.to_dict(),
        "pairs_without_abstract_text": sum(1 for p in pairs if not p.abstract_a or not p.abstract_b),
        "seconds": {k: round(v, 3) for k, v in timings.items()},
    })
    io.write_shards(out_dir, pairs, shard_size=config.shard_size)
    clear_tasks(out_dir)
    shutil.rmtree(out_dir / BATCHES_DIR, ignore_errors=True)
    return stats


stage = Stage(STAGE, MineConfig, open_stage, work, reads=("claims",), writes="pairs", module=__name__)


def run_stage(claims_dir: str | Path, out_dir: str | Path, config: MineConfig | None = None,
              runtime: RuntimeConfig | None = None) -> dict:
    """Mine candidate pairs from a finished Claim stage folder into ``out_dir`` (resumable)."""
    return execute(stage, claims_dir, out_dir, config, runtime)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("claims_dir", metavar="CLAIMS_DIR", help="finished claims stage folder")
    parser.add_argument("--out", required=True, help="output folder for CandidatePair shards")
    add_config_arguments(parser, MineConfig, aliases={"model": "--encoder", "abstracts_dir": "--abstracts",
                                                      "questions_dir": "--questions"})
    add_force_argument(parser)


def run(args: argparse.Namespace) -> int:
    config = config_from_args(MineConfig, args)
    if args.force:
        claim_output(args.out, STAGE, [args.claims_dir], force=True)
    stats = run_stage(args.claims_dir, args.out, config)
    print(f"mine: {stats['kept']} candidate pairs from {stats['seen']} claims "
          f"({', '.join(f'{d}: {n}' for d, n in stats.get(io.BY_DOMAIN, {}).items()) or 'none'}) -> {args.out}")
    return 0
