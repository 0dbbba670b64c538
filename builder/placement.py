"""Placing the split's components: per-domain targets, the group split of ``primary`` stratified over questions
(the evaluation splits' draft first), the claim cap, the per-domain stratified split of ``pairlevel`` and the
``test_matched`` sample.

Every ordering is a seeded hash of record identities (``seeded_rank``), so a placement depends only on the pool's
content and the seed.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from biodivergence_dataset import ontology
from biodivergence_dataset.records import Example

from .article_graph import Component, carve, is_conflict

TRAIN, VALIDATION, TEST = ontology.SPLITS
EVAL_SPLITS = (VALIDATION, TEST)
#: Where a unit goes when every shortfall ties: train first (the paper's rule), then test before validation (the
#: split scores are read from picks first among the units the evaluation splits may take).
TIE_ORDER = (TRAIN, TEST, VALIDATION)
#: The largest share of a unit's conflicts the claim cap may drop in the evaluation split that takes it.
EVAL_CAP_LOSS = 0.5


def seeded_rank(seed: int, key: str) -> str:
    """A deterministic pseudo-random sort key for ``key`` under ``seed``."""
    return hashlib.sha1(f"{seed}|{key}".encode()).hexdigest()


def distribution(labels: Iterable[str]) -> dict[str, float]:
    """Share of each conflict type (every ontology class present, zeros included)."""
    counts = Counter(labels)
    total = sum(counts.values())
    return {c: (counts[c] / total if total else 0.0) for c in ontology.CONFLICT_TYPE_NAMES}


def total_variation(p: Mapping[str, float], q: Mapping[str, float]) -> float:
    return 0.5 * sum(abs(p.get(k, 0.0) - q.get(k, 0.0)) for k in set(p) | set(q))


def apportion(total: int, weights: Mapping[str, float], caps: Mapping[str, int] | None = None) -> dict[str, int]:
    """Split ``total`` into integer parts proportional to ``weights`` (largest remainder), never above ``caps``.

    Parts that hit their cap hand their surplus to the others (water-filling). If every weighted key is
    full, the rest goes to keys of zero weight that still have room, proportionally to that room.
    """
    caps = dict(caps) if caps is not None else {k: total for k in weights}
    alloc = {k: 0 for k in weights}
    remaining = min(total, sum(caps.values()))
    active = {k for k, w in weights.items() if w > 0 and caps[k] > 0}
    use_room = False
    while remaining > 0:
        if not active:
            active, use_room = {k for k in weights if caps[k] > alloc[k]}, True
            if not active:
                break
        # a plain float sum depends on its order, and the order of a set of strings on the process's hash seed:
        # the split of a re-run (after a kill) could differ
        w = {k: (caps[k] - alloc[k]) if use_room else weights[k] for k in weights if k in active}
        norm = math.fsum(w.values())  # exactly rounded: the same in any order
        exact = {k: remaining * w[k] / norm for k in active}
        share = {k: math.floor(exact[k]) for k in active}
        for k in sorted(active, key=lambda k: (-(exact[k] - share[k]), k))[: remaining - sum(share.values())]:
            share[k] += 1
        full = {k for k in active if alloc[k] + share[k] >= caps[k]}
        if not full:
            for k in active:
                alloc[k] += share[k]
            break
        for k in full:
            remaining -= caps[k] - alloc[k]
            alloc[k] = caps[k]
        active -= full
    return alloc


# ---------------------------------------------------------------------------------------------
# placement


@dataclass
class Placement:
    splits: dict[str, list[Example]]
    dropped: Counter = field(default_factory=Counter)
    oversized: list[dict[str, Any]] = field(default_factory=list)
    targets: dict[str, dict[str, int]] = field(default_factory=dict)


def _by_domain(components: Iterable[Component]) -> dict[str, list[Component]]:
    out: dict[str, list[Component]] = defaultdict(list)
    for comp in components:
        out[comp.domain].append(comp)
    return dict(sorted(out.items()))


def place_components(
    components: Sequence[Component], ratios: Mapping[str, float], seed: int, eval_ok: Callable[[Example], bool],
    carve_oversized: bool = False, claim_cap: float = 1.0,
) -> Placement:
    """Place whole components per domain, filling each split towards its target by example count and, for the
    components holding conflicts, towards each question's share of the conflicts, validation and test drafting
    theirs first (:func:`_fill`); ``claim_cap`` is the split's cap on one claim's share of a split's conflicts,
    which decides what suits an evaluation split.

    A component whose eval-eligible examples exceed every validation/test target is oversized: it goes to train
    and is reported, or, with ``carve_oversized``, it is cut into communities (:func:`carve`) that are placed like
    components; a pair crossing two communities is kept when both land in the same split and dropped otherwise.
    In a component sent to validation/test, examples not eligible for evaluation (heuristic labels when an LLM
    annotator was used) are dropped.
    """
    placement = Placement({s: [] for s in ontology.SPLITS})
    for domain, comps in _by_domain(components).items():
        target = apportion(sum(c.size for c in comps), ratios)
        placement.targets[domain] = target
        largest_eval = max(target[s] for s in EVAL_SPLITS)
        units, crossing = [], []
        for comp in comps:
            n_eval = sum(eval_ok(ex) for ex in comp.examples)
            if not 0 < largest_eval < n_eval:
                units.append(comp)
                continue
            report = {"domain": domain, "examples": comp.size, "articles": comp.articles}
            if carve_oversized:
                pieces, cut = carve(comp, largest_eval, seed)
                units.extend(pieces)
                crossing.extend(cut)
                report.update(carved_into=len(pieces), crossing_pairs=len(cut))
            else:
                units.append(comp)
            placement.oversized.append(report)
        # after the evaluation splits' draft, conflict-holding components first, most conflicts first (as
        # scikit-learn's StratifiedGroupKFold orders its groups), so the few that hold most conflicts are spread
        # before the row targets fill; then the rest in seeded order
        order = sorted(units, key=lambda c: (-_conflicts(c), seeded_rank(seed, c.key)))
        split_of = _fill(order, target, eval_ok, placement, ratios, claim_cap)
        for ex in crossing:
            here = split_of[ex.article_uid_a]
            if here != split_of[ex.article_uid_b]:
                placement.dropped["crossing_carved_communities"] += 1
            elif here == TRAIN or eval_ok(ex):
                placement.splits[here].append(ex)
            else:
                placement.dropped["not_llm_labelled_in_eval_component"] += 1
    return placement


def question_conflicts(examples: Iterable[Example]) -> Counter:
    """Conflicts per question (rows that carry none counted under ``""``)."""
    return Counter(ex.question_id for ex in examples if is_conflict(ex))


def allowance(claim_cap: float, conflicts: float) -> int:
    """How many of ``conflicts`` one claim may be in under the claim cap (never fewer than one)."""
    return max(1, math.floor(claim_cap * conflicts + 1e-9))


def largest_claim(examples: Iterable[Example]) -> int:
    """The most conflicts any one claim is in."""
    held = Counter(c for ex in examples if is_conflict(ex) for c in (ex.claim_a_id, ex.claim_b_id))
    return max(held.values(), default=0)


def capped_conflicts(examples: Iterable[Example], most: int) -> int:
    """How many of the conflicts survive when no claim may be in more than ``most`` of them (greedy, in order)."""
    held: Counter = Counter()
    for ex in examples:
        if is_conflict(ex) and held[ex.claim_a_id] < most and held[ex.claim_b_id] < most:
            held.update((ex.claim_a_id, ex.claim_b_id))
    return held.total() // 2


def _conflicts(comp: Component) -> int:
    return sum(map(is_conflict, comp.examples))


def _shortfall(target: Mapping[str, float], filled: Mapping[str, int], split: str) -> float:
    return (target[split] - filled[split]) / target[split] if target[split] else -1.0


def _fill(units: Sequence[Component], target: Mapping[str, int], eval_ok: Callable[[Example], bool],
          placement: Placement, ratios: Mapping[str, float], claim_cap: float) -> dict[str, str]:
    """Greedy placement of ``units`` in order, after the evaluation splits' draft (:func:`_draft`); returns the
    split of every article.

    A unit holding conflicts goes where its questions' conflicts fall furthest short of their shares (the
    ``ratios`` applied to each question's conflicts in the domain; the relative shortfalls averaged over the
    unit's conflicts), then where the domain's conflicts do, then the examples: a stratified group split over
    questions. A unit without conflicts goes where the examples fall furthest short. Validation/test take a unit
    only while it fits their row target and keeps most of its conflicts under the claim cap (:func:`_suits`).
    """
    totals = question_conflicts(ex for comp in units for ex in comp.examples)
    question_target = {q: {s: ratios[s] * n for s in ontology.SPLITS} for q, n in totals.items()}
    conflict_target = {s: ratios[s] * totals.total() for s in ontology.SPLITS}
    most = {s: allowance(claim_cap, conflict_target[s]) for s in EVAL_SPLITS}
    drafted = _draft(units, target, conflict_target, most, eval_ok)
    filled: Counter = Counter()
    filled_conflicts: Counter = Counter()
    filled_questions: dict[str, Counter] = defaultdict(Counter)
    split_of: dict[str, str] = {}
    for comp in sorted(units, key=lambda c: c.key not in drafted):
        members_eval = [ex for ex in comp.examples if eval_ok(ex)]
        n_eval = len(members_eval)
        held = question_conflicts(comp.examples)
        options = [drafted[comp.key]] if comp.key in drafted else [TRAIN] + [
            s for s in EVAL_SPLITS if n_eval and filled[s] + n_eval <= target[s]
            and _suits(capped_conflicts(members_eval, most[s]), sum(map(is_conflict, members_eval)))]

        def spread(s: str, held: Counter = held) -> float:
            return math.fsum(n * _shortfall(question_target[q], filled_questions[q], s)
                             for q, n in sorted(held.items())) / held.total()

        split = max(options, key=lambda s: (
            (spread(s), _shortfall(conflict_target, filled_conflicts, s)) if held else (0.0, 0.0),
            _shortfall(target, filled, s), -TIE_ORDER.index(s)))
        for q, n in held.items():
            filled_questions[q][split] += n
        filled_conflicts[split] += held.total()
        members = comp.examples if split == TRAIN else members_eval
        placement.dropped["not_llm_labelled_in_eval_component"] += comp.size - len(members)
        placement.splits[split].extend(members)
        filled[split] += len(members)
        split_of.update(dict.fromkeys(comp.article_ids, split))
    return split_of


def _suits(kept: int, conflicts: int) -> bool:
    """Would an evaluation split lose at most ``EVAL_CAP_LOSS`` of a unit's ``conflicts`` to the claim cap, keeping
    ``kept`` (:func:`capped_conflicts`)?"""
    return kept >= (1 - EVAL_CAP_LOSS) * conflicts


def _draft(units: Sequence[Component], target: Mapping[str, int], conflict_target: Mapping[str, float],
           most: Mapping[str, int], eval_ok: Callable[[Example], bool]) -> dict[str, str]:
    """The evaluation splits pick conflict-holding units before the rest is placed; returns the split of each
    picked unit (by key).

    In turn, the evaluation split holding the fewest questions (test first on a tie) picks, among the units that
    bring it a question it lacks, fit its row target and suit it (:func:`_suits`), the one that keeps the largest
    share of its conflicts under the claim cap (``most`` per claim), then the most of them per row. A split
    stops at its conflict target (counted under the cap) or when no such unit is left. So each evaluation split
    gathers as many questions, and as many claims, as its share of the conflicts allows; under the cap, a split's
    conflicts need many claims, and the units whose conflicts hang on a few claims stay for train."""
    drafted: dict[str, str] = {}
    rows: Counter = Counter()
    held: dict[str, list[Example]] = {s: [] for s in EVAL_SPLITS}
    # what a unit would bring to validation/test (its rows eligible there), the questions of its conflicts, and how
    # many of those the cap keeps in each evaluation split
    eligible = {c.key: [ex for ex in c.examples if eval_ok(ex)] for c in units}
    candidates = [c for c in units if any(map(is_conflict, eligible[c.key]))]
    asks = {c.key: set(question_conflicts(eligible[c.key])) for c in candidates}
    brings = {c.key: sum(map(is_conflict, eligible[c.key])) for c in candidates}
    keeps = {(c.key, s): capped_conflicts(eligible[c.key], most[s]) for c in candidates for s in EVAL_SPLITS}
    turns = list(EVAL_SPLITS)
    while turns:
        s = min(turns, key=lambda s: (len(question_conflicts(held[s])), TIE_ORDER.index(s)))
        have = set(question_conflicts(held[s]))
        options = [c for c in candidates if c.key not in drafted and asks[c.key] - have
                   and _suits(keeps[c.key, s], brings[c.key])
                   and rows[s] + len(eligible[c.key]) <= target[s]]
        if not options or capped_conflicts(held[s], most[s]) >= conflict_target[s]:
            turns.remove(s)
            continue
        pick = min(options, key=lambda c: (-keeps[c.key, s] / brings[c.key], -keeps[c.key, s] / len(eligible[c.key]),
                                           c.key))
        drafted[pick.key] = s
        rows[s] += len(eligible[pick.key])
        held[s] += [ex for ex in eligible[pick.key] if is_conflict(ex)]
    return drafted


def _stratified_sequence(n: int, shares: Mapping[str, int]) -> list[str]:
    """A sequence of ``n`` split names with exactly ``shares[s]`` of each, spread evenly (Sainte-Laguë)."""
    assigned: Counter = Counter()
    out = []
    for k in range(1, n + 1):
        split = max(shares, key=lambda s: (shares[s] * k / n - assigned[s], -ontology.SPLITS.index(s)))
        assigned[split] += 1
        out.append(split)
    return out


def pairlevel_split(
    examples: Sequence[Example], ratios: Mapping[str, float], seed: int, eval_ok: Callable[[Example], bool],
) -> Placement:
    """Per-domain split of unique pairs, stratified by conflict type (pair-level de-duplication only)."""
    placement = Placement({s: [] for s in ontology.SPLITS})
    by_domain: dict[str, list[Example]] = defaultdict(list)
    for ex in examples:
        by_domain[ex.domain].append(ex)
    for domain in sorted(by_domain):
        pool = by_domain[domain]
        eligible = sorted((ex for ex in pool if eval_ok(ex)),
                          key=lambda ex: (ex.conflict_type, seeded_rank(seed, ex.pair_id)))
        target = apportion(len(pool), ratios)
        placement.targets[domain] = target
        evals = apportion(min(len(eligible), target[VALIDATION] + target[TEST]),
                          {s: target[s] for s in EVAL_SPLITS})
        shares = {TRAIN: len(eligible) - sum(evals.values()), **evals}
        for ex, split in zip(eligible, _stratified_sequence(len(eligible), shares)):
            placement.splits[split].append(ex)
        placement.splits[TRAIN].extend(ex for ex in pool if not eval_ok(ex))
    return placement


def matched_sample(
    pool: Sequence[Example], reference: Mapping[str, float], seed: int, tolerance: float, min_fraction: float,
) -> tuple[list[Example], dict[str, Any]]:
    """The largest subset of ``pool`` whose conflict-type mix is as close as the pool allows to ``reference``.

    For a sample of ``n`` rows the best reachable total variation distance is
    ``Σ_c max(0, p_c − available_c / n)``; it grows with ``n`` from the unavoidable distance (the mass
    of classes the pool lacks). Take the largest ``n`` within ``tolerance`` of the unavoidable distance,
    but at least ``min_fraction`` of the pool; allocate classes by water-filling and draw each class in
    seeded order.
    """
    available = Counter(ex.conflict_type for ex in pool)

    def best_tv(n: int) -> float:
        return sum(max(0.0, reference.get(c, 0.0) - available[c] / n) for c in ontology.CONFLICT_TYPE_NAMES)

    unavoidable = sum(reference.get(c, 0.0) for c in ontology.CONFLICT_TYPE_NAMES if not available[c])
    floor = min(len(pool), math.ceil(min_fraction * len(pool)))
    n = max([k for k in range(1, len(pool) + 1) if best_tv(k) <= unavoidable + tolerance + 1e-12], default=0)
    n = max(n, floor)
    counts = apportion(n, {c: reference.get(c, 0.0) for c in ontology.CONFLICT_TYPE_NAMES},
                       {c: available[c] for c in ontology.CONFLICT_TYPE_NAMES})
    by_class: dict[str, list[Example]] = defaultdict(list)
    for ex in sorted(pool, key=lambda ex: seeded_rank(seed, f"matched|{ex.pair_id}")):
        by_class[ex.conflict_type].append(ex)
    chosen = sorted((ex for c, k in counts.items() for ex in by_class[c][:k]), key=lambda ex: ex.pair_id)
    report = {
        "reference": "pairlevel/test conflict-type distribution",
        "pool": "primary/test (article-disjoint from train and validation)",
        "pool_size": len(pool),
        "size": len(chosen),
        "tolerance": tolerance,
        "min_fraction": min_fraction,
        "tv_distance_unavoidable": round(unavoidable, 4),
        "tv_distance_before": round(total_variation(distribution(ex.conflict_type for ex in pool), reference), 4),
        "tv_distance": round(total_variation(distribution(ex.conflict_type for ex in chosen), reference), 4),
        "counts": {c: counts[c] for c in ontology.CONFLICT_TYPE_NAMES if counts[c] or reference.get(c)},
    }
    return chosen, report


# ---------------------------------------------------------------------------------------------
# the claim cap


def cap_claim_share(rows: Sequence[Example], cap: float, seed: int) -> tuple[list[Example], int]:
    """Drop conflict rows until no claim is in more than ``cap`` of the conflicts left (a claim in a single
    conflict is always kept: a split of fewer than ``1 / cap`` conflicts could meet the cap only by losing them
    all). Returns the rows kept, in their order, and how many were dropped.

    One claim read one way against many others can decide a large share of a split's score. Every claim is cut
    down to the largest number of conflicts ``k`` that still is within the cap of the conflicts left after the
    cut (cutting lowers the number of conflicts and so the allowance; the largest such ``k`` keeps the most).
    """
    conflicts = [ex for ex in rows if is_conflict(ex)]
    dropped: set[str] = set()
    for most in range(largest_claim(conflicts), 0, -1):
        dropped = _trim_claims(conflicts, most, seed)
        if allowance(cap, len(conflicts) - len(dropped)) >= most:
            break
    return [ex for ex in rows if ex.pair_id not in dropped], len(dropped)


def _trim_claims(conflicts: Sequence[Example], most: int, seed: int) -> set[str]:
    """The pair ids to drop so that no claim is in more than ``most`` of ``conflicts``: a claim's excess rows,
    those whose other claim is over ``most`` too first, then in seeded order."""
    held = Counter(c for ex in conflicts for c in (ex.claim_a_id, ex.claim_b_id))
    rows_of: dict[str, list[Example]] = defaultdict(list)
    for ex in conflicts:
        rows_of[ex.claim_a_id].append(ex)
        rows_of[ex.claim_b_id].append(ex)
    dropped: set[str] = set()
    for claim in sorted((c for c, n in held.items() if n > most), key=lambda c: (-held[c], c)):
        mine = sorted((ex for ex in rows_of[claim] if ex.pair_id not in dropped),
                      key=lambda ex: (held[ex.claim_b_id if ex.claim_a_id == claim else ex.claim_a_id] <= most,
                                      seeded_rank(seed, f"cap|{ex.pair_id}")))
        for ex in mine[: max(0, held[claim] - most)]:
            dropped.add(ex.pair_id)
            held.subtract((ex.claim_a_id, ex.claim_b_id))
    return dropped


def claim_spread(rows: Sequence[Example]) -> dict[str, Any]:
    """A split's conflicts by question and the largest share of them any one claim is in (with n)."""
    conflicts = [ex for ex in rows if is_conflict(ex)]
    held = Counter(c for ex in conflicts for c in (ex.claim_a_id, ex.claim_b_id))
    top = max(held.values(), default=0)
    per_question = question_conflicts(conflicts)
    return {"conflicts": len(conflicts), "questions": len([q for q in per_question if q]),
            "claims": len(held), "largest_claim_conflicts": top,
            "largest_claim_share": round(top / len(conflicts), 4) if conflicts else 0.0,
            "conflicts_per_question": dict(sorted(per_question.items(), key=lambda kv: (-kv[1], kv[0])))}
