"""Placing the split's components: per-domain targets, the stratified group split of ``primary``, the per-domain
stratified split of ``pairlevel`` and the ``test_matched`` sample.

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

from .article_graph import Component, carve

TRAIN, VALIDATION, TEST = ontology.SPLITS
EVAL_SPLITS = (VALIDATION, TEST)


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
    carve_oversized: bool = False,
) -> Placement:
    """Place whole components per domain, filling each split towards its target by example count.

    Components go in seeded order to the split with the largest relative shortfall that they fit into
    (train always fits). A component whose eval-eligible examples exceed every validation/test target
    is oversized: it goes to train and is reported, or, with ``carve_oversized``, it is cut into
    communities (:func:`carve`) that are placed like components; a pair crossing two communities is
    kept when both land in the same split and dropped otherwise. In a component sent to
    validation/test, examples not eligible for evaluation (heuristic labels when an LLM annotator was
    used) are dropped.
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
        conflicts = apportion(sum(_conflicts(c) for c in comps), ratios)
        # conflict-holding components first, most conflicts first (as scikit-learn's StratifiedGroupKFold orders
        # its groups), so the few that hold most conflicts are spread before the row targets fill; then the rest
        # in seeded order
        order = sorted(units, key=lambda c: (-_conflicts(c), seeded_rank(seed, c.key)))
        split_of = _fill(order, target, eval_ok, placement, conflicts)
        for ex in crossing:
            here = split_of[ex.article_uid_a]
            if here != split_of[ex.article_uid_b]:
                placement.dropped["crossing_carved_communities"] += 1
            elif here == TRAIN or eval_ok(ex):
                placement.splits[here].append(ex)
            else:
                placement.dropped["not_llm_labelled_in_eval_component"] += 1
    return placement


def _conflicts(comp: Component) -> int:
    return sum(ex.conflict_type != ontology.NO_CONFLICT for ex in comp.examples)


def _shortfall(target: Mapping[str, int], filled: Mapping[str, int], split: str) -> float:
    return (target[split] - filled[split]) / target[split] if target[split] else -1.0


def _fill(units: Sequence[Component], target: Mapping[str, int], eval_ok: Callable[[Example], bool],
          placement: Placement, conflict_target: Mapping[str, int] | None = None) -> dict[str, str]:
    """Greedy placement of ``units`` in order; returns the split of every article. A unit holding conflicts
    goes where the conflicts fall furthest short of ``conflict_target`` (the ratios applied to the domain's
    conflict rows), else where the examples do, so conflicts, which cluster in a few components, are spread
    over the splits as the rows are (a stratified group split)."""
    filled: Counter = Counter()
    filled_conflicts: Counter = Counter()
    split_of: dict[str, str] = {}
    for comp in units:
        n_eval = sum(eval_ok(ex) for ex in comp.examples)
        n_conflicts = _conflicts(comp)
        options = [TRAIN] + [s for s in EVAL_SPLITS if n_eval and filled[s] + n_eval <= target[s]]
        by_conflicts = bool(n_conflicts and conflict_target)
        split = max(options, key=lambda s: (
            _shortfall(conflict_target, filled_conflicts, s) if by_conflicts else _shortfall(target, filled, s),
            _shortfall(target, filled, s), -ontology.SPLITS.index(s)))
        filled_conflicts[split] += n_conflicts
        members = comp.examples if split == TRAIN else [ex for ex in comp.examples if eval_ok(ex)]
        placement.dropped["not_llm_labelled_in_eval_component"] += comp.size - len(members)
        placement.splits[split].extend(members)
        filled[split] += len(members)
        split_of.update(dict.fromkeys(comp.article_ids, split))
    return split_of


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
