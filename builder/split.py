"""Stage 6: annotated ``Example``s → a release folder with the ``primary`` and ``pairlevel`` configs.

``pairlevel`` (legacy, paper §5.1): one copy per ``pair_id``, then per-domain 70/10/20, stratified by
conflict type inside each domain.

``primary`` (article-disjoint, paper appendix M): duplicate ``pair_id``s are resolved (LLM copies
preferred over heuristic ones; label-conflicting duplicates counted), articles linked by any shared
pair (or claim) form connected components, and whole components are placed per domain at 70/15/15
by example count, those holding conflicts by conflict count (a stratified group split: conflicts cluster
in a few components, and placed by size alone they can all land in train). Components too large for
validation/test go to train and are reported (``oversized_components: auto``, the default, carves them only when
that would leave a split of ``primary`` empty); with ``oversized_components: carve`` (beyond the paper, for
small corpora whose article graph percolates into one component per domain) they are cut into Louvain
communities of articles instead, placed like components, and the pairs that end up between two splits are
dropped and counted.

``test_matched`` (extra split of ``primary``): drawn from the article-disjoint test pool with a
conflict-type mix as close as the pool allows to the ``pairlevel`` test, so that a score gap between
the variants can be attributed to article leakage rather than to a different label mix; the total
variation distance between the two distributions is reported. It is not written when it would hold every
row of ``test`` (the pool already matches as closely as it can): the report says so (``written: false``).

When an LLM annotator labelled part of the pool, validation and test hold only LLM labels and train
is topped up with heuristic labels of confidence ≥ 0.45; with heuristic labels only (the demo), every
split is heuristic and ``split_manifest.json`` says so under ``label_source``.

Every ordering is a seeded hash of record identities, so the split depends only on the pool's
content and the seed, not on the order records arrive in.
"""

from __future__ import annotations

import hashlib
import math
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from biodivergence_dataset import ontology
from biodivergence_dataset.io import (
    StageStats,
    as_dirs,
    done_fingerprint,
    dropped_counts,
    read_records,
    write_json_atomic,
)
from biodivergence_dataset.records import Example
from biodivergence_dataset.release import SPLIT_REPORT, STATE_DIR
from biodivergence_dataset.release import state_dir as release_state_dir

from .folders import RELEASE_OWNER, add_force_argument, claim_output
from .grouping import UnionFind
from .stage import Opened, Stage, execute

if TYPE_CHECKING:
    from .runtime import RuntimeConfig

STAGE = "split"
LLM = ontology.check_label("annotator_kind", "llm")
TRAIN, VALIDATION, TEST = ontology.SPLITS
MATCHED = ontology.EXTRA_TEST_SPLITS[0]
EVAL_SPLITS = (VALIDATION, TEST)


class SplitConfig(BaseModel):
    """Parameters of the split stage (every one has the paper's default)."""

    model_config = ConfigDict(extra="forbid")

    seed: int = 42
    primary_ratios: dict[str, float] = Field(default_factory=lambda: {TRAIN: 0.70, VALIDATION: 0.15, TEST: 0.15})
    pairlevel_ratios: dict[str, float] = Field(default_factory=lambda: {TRAIN: 0.70, VALIDATION: 0.10, TEST: 0.20})
    #: What happens to a component too large for validation/test: ``train`` (the paper's rule) or ``carve``:
    #: cut it into article communities placed like components, dropping pairs that end up between splits
    #: (for corpora whose article graph percolates, e.g. small demo corpora mined densely, or trials grouped by
    #: question, each question's trials all paired). ``auto``: the paper's rule, unless it would leave a split of
    #: ``primary`` empty, which ``load_dataset`` cannot read; then ``carve``, said in the report and on stderr.
    oversized_components: Literal["train", "carve", "auto"] = "auto"
    #: Heuristic labels below this confidence are not used to top up train when an LLM annotator was used.
    heuristic_topup_min_confidence: float = Field(0.45, ge=0.0, le=1.0)
    matched_test: bool = True
    #: ``test_matched`` is as large as possible while its total variation distance to the pairlevel test
    #: exceeds the unavoidable one (classes the pool lacks) by at most this …
    matched_tolerance: float = Field(0.002, ge=0.0, le=1.0)
    #: … but never smaller than this fraction of the article-disjoint test pool.
    matched_min_fraction: float = Field(0.5, ge=0.0, le=1.0)

    @field_validator("primary_ratios", "pairlevel_ratios")
    @classmethod
    def _ratios(cls, value: dict[str, float]) -> dict[str, float]:
        if set(value) != set(ontology.SPLITS):
            raise ValueError(f"ratios need exactly the splits {list(ontology.SPLITS)}, got {sorted(value)}")
        if any(v < 0 for v in value.values()) or not math.isclose(sum(value.values()), 1.0, abs_tol=1e-6):
            raise ValueError(f"ratios must be non-negative and sum to 1, got {value}")
        return {s: float(value[s]) for s in ontology.SPLITS}


# ---------------------------------------------------------------------------------------------
# small helpers


def seeded_rank(seed: int, key: str) -> str:
    """A deterministic pseudo-random sort key for ``key`` under ``seed``."""
    return hashlib.sha1(f"{seed}|{key}".encode()).hexdigest()


def _preference(ex: Example) -> tuple:
    """Sort key choosing which copy of a duplicated pair survives: LLM first, then confidence; copies alike in
    all of these are told apart by their content, so the survivor never depends on the order they arrive in."""
    return (ex.annotator_kind != LLM, -ex.confidence, ex.annotator_id, ex.example_id,
            hashlib.sha1(ex.model_dump_json().encode()).hexdigest())


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
# pool preparation


@dataclass
class Pool:
    """The de-duplicated, label-filtered examples the splits are drawn from."""

    examples: list[Example]
    llm_used: bool
    #: Unique annotated pairs per domain, before any label-source filtering.
    labelled: Counter = field(default_factory=Counter)
    duplicate_pair_ids: int = 0
    label_conflicting_duplicates: int = 0
    dropped: Counter = field(default_factory=Counter)

    def eval_ok(self, ex: Example) -> bool:
        """May ``ex`` go to validation/test? With an LLM annotator in the pool, only LLM labels may."""
        return not self.llm_used or ex.annotator_kind == LLM

    @property
    def label_source(self) -> dict[str, str]:
        if self.llm_used:
            return {"mode": "llm_eval_heuristic_topup", TRAIN: "llm + heuristic top-up",
                    VALIDATION: "llm only", TEST: "llm only"}
        return {"mode": "heuristic_only", TRAIN: "heuristic", VALIDATION: "heuristic", TEST: "heuristic",
                "note": "no LLM labels in the pool, so validation and test are not restricted to LLM labels"}


def resolve_duplicates(examples: Iterable[Example]) -> tuple[list[Example], int, int]:
    """One copy per ``pair_id`` (LLM preferred, then higher confidence).

    Returns the survivors sorted by pair_id, the number of duplicated pair_ids and how many of those
    had copies with different conflict types.
    """
    copies: dict[str, list[Example]] = defaultdict(list)
    for ex in examples:
        copies[ex.pair_id].append(ex)
    survivors, duplicated, conflicting = [], 0, 0
    for pair_id in sorted(copies):
        group = copies[pair_id]
        if len(group) > 1:
            duplicated += 1
            conflicting += len({ex.conflict_type for ex in group}) > 1
        survivors.append(min(group, key=_preference) if len(group) > 1 else group[0])
    return survivors, duplicated, conflicting


def prepare_pool(examples: Iterable[Example], topup_min_confidence: float) -> Pool:
    """De-duplicate and, if LLM labels exist, drop heuristic labels too weak for the train top-up."""
    examples = list(examples)
    unique, duplicated, conflicting = resolve_duplicates(examples)
    pool = Pool(unique, llm_used=any(ex.annotator_kind == LLM for ex in unique),
                labelled=Counter(ex.domain for ex in unique),
                duplicate_pair_ids=duplicated, label_conflicting_duplicates=conflicting)
    pool.dropped["duplicate_pair_id"] = len(examples) - len(unique)
    if pool.llm_used:
        kept = [ex for ex in unique if ex.annotator_kind == LLM or ex.confidence >= topup_min_confidence]
        pool.dropped["heuristic_below_topup_confidence"] = len(unique) - len(kept)
        pool.examples = kept
    return pool


# ---------------------------------------------------------------------------------------------
# article graph


@dataclass
class Component:
    """Examples whose articles are connected through shared pairs (or shared claims)."""

    examples: list[Example]
    domain: str
    article_ids: frozenset[str]

    @property
    def size(self) -> int:
        return len(self.examples)

    @property
    def articles(self) -> int:
        return len(self.article_ids)

    @property
    def key(self) -> str:
        """The smallest article uid: a stable identity for seeded ordering."""
        return min(self.article_ids)


def _nodes(ex: Example) -> tuple[str, ...]:
    return (f"a:{ex.article_uid_a}", f"a:{ex.article_uid_b}", f"c:{ex.claim_a_id}", f"c:{ex.claim_b_id}")


def _articles(examples: Iterable[Example]) -> frozenset[str]:
    return frozenset(a for ex in examples for a in (ex.article_uid_a, ex.article_uid_b))


def article_components(examples: Iterable[Example]) -> list[Component]:
    """Connected components of the graph of articles (and claims) linked by the examples' pairs."""
    uf = UnionFind()
    examples = list(examples)
    for ex in examples:
        first, *rest = _nodes(ex)
        for node in rest:
            uf.union(first, node)
    groups: dict[str, list[Example]] = defaultdict(list)
    for ex in examples:
        groups[uf.find(_nodes(ex)[0])].append(ex)
    components = []
    for members in groups.values():
        domains = Counter(ex.domain for ex in members)
        domain = min(domains, key=lambda d: (-domains[d], d))
        components.append(Component(sorted(members, key=lambda e: e.pair_id), domain, _articles(members)))
    return sorted(components, key=lambda c: c.key)


# ---------------------------------------------------------------------------------------------
# carving components too large for validation/test (opt-in, beyond the paper)


#: How much more strongly a pair that answers a declared question binds its two articles than an open-mined pair
#: when a component is carved: the communities follow the questions, so the pairs that cross two communities (and
#: are dropped) are mostly open-mined ones, not the rows that carry a question.
QUESTION_AFFINITY = 10


def _partition(graph, max_examples: int, seed: int) -> list[set[int]]:
    """Recursively split an article graph into communities holding at most ``max_examples`` pairs each
    (edge attribute ``pairs``; Louvain reads the affinity ``weight``).

    Nodes are integers: Louvain's result depends on set iteration order, which for strings changes
    from one process to the next (hash randomisation) but for integers does not.
    """
    import networkx as nx
    from networkx.algorithms.community import louvain_communities

    if graph.size(weight="pairs") <= max_examples or graph.number_of_nodes() < 2:
        return [set(graph)]
    parts = louvain_communities(graph, weight="weight", seed=seed)
    if len(parts) < 2:  # no community structure left: halve along a breadth-first order
        start = min(graph)
        order = list(dict.fromkeys([start, *(v for _, v in nx.bfs_edges(graph, start)), *sorted(graph)]))
        parts = [set(order[: len(order) // 2]), set(order[len(order) // 2:])]
    out: list[set[int]] = []
    for part in sorted(parts, key=min):
        out.extend(_partition(graph.subgraph(part), max_examples, seed))
    return out


def carve(component: Component, max_examples: int, seed: int) -> tuple[list[Component], list[Example]]:
    """Split a component's articles into Louvain communities of at most ``max_examples`` internal pairs, a pair
    that carries a question binding its articles ``QUESTION_AFFINITY`` times as strongly as an open-mined one.

    Returns the communities as components (each holding the pairs inside it; a claim belongs to one
    article, so pieces stay claim-disjoint) and the pairs that cross two communities.
    """
    import networkx as nx

    articles = sorted(component.article_ids)
    node = {a: i for i, a in enumerate(articles)}
    graph = nx.Graph()
    graph.add_nodes_from(range(len(articles)))
    pairs: Counter = Counter()
    affinity: Counter = Counter()
    for ex in component.examples:
        edge = tuple(sorted((node[ex.article_uid_a], node[ex.article_uid_b])))
        pairs[edge] += 1
        affinity[edge] += QUESTION_AFFINITY if ex.question_id else 1
    graph.add_edges_from((a, b, {"weight": affinity[a, b], "pairs": n}) for (a, b), n in sorted(pairs.items()))
    parts = _partition(graph, max_examples, seed)
    piece_of = {articles[n]: i for i, part in enumerate(parts) for n in part}
    inside: dict[int, list[Example]] = defaultdict(list)
    crossing = []
    for ex in component.examples:
        i, j = piece_of[ex.article_uid_a], piece_of[ex.article_uid_b]
        (inside[i] if i == j else crossing).append(ex)
    pieces = [Component(inside[i], component.domain, frozenset(articles[n] for n in part))
              for i, part in enumerate(parts)]
    return pieces, crossing


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


# ---------------------------------------------------------------------------------------------
# the whole split


#: The oversized rule ``auto`` fell back to, as the report states it.
AUTO_CARVE = ("carve (oversized_components: auto; keeping oversized components whole in train, the paper's rule, "
              "would have left a split of primary empty)")


@dataclass
class SplitResult:
    configs: dict[str, dict[str, list[Example]]]
    report: dict[str, Any]


def _per_domain(splits: Mapping[str, Sequence[Example]]) -> dict[str, dict[str, int]]:
    return {s: dict(sorted(Counter(ex.domain for ex in rows).items())) for s, rows in splits.items()}


def split_pool(examples: Iterable[Example], config: SplitConfig | None = None) -> SplitResult:
    """Build both configs from annotated examples (pure: no I/O)."""
    config = config or SplitConfig()
    pool = prepare_pool(examples, config.heuristic_topup_min_confidence)
    components = article_components(pool.examples)
    rule = "carve" if config.oversized_components == "carve" else "train"
    primary = place_components(components, config.primary_ratios, config.seed, pool.eval_ok,
                               carve_oversized=rule == "carve")
    if config.oversized_components == "auto" and primary.oversized and not all(
            primary.splits[s] for s in ontology.SPLITS):
        rule = AUTO_CARVE
        primary = place_components(components, config.primary_ratios, config.seed, pool.eval_ok,
                                   carve_oversized=True)
    pairlevel = pairlevel_split(pool.examples, config.pairlevel_ratios, config.seed, pool.eval_ok)
    primary_splits = {s: sorted(rows, key=lambda e: e.pair_id) for s, rows in primary.splits.items()}
    pairlevel_splits = {s: sorted(rows, key=lambda e: e.pair_id) for s, rows in pairlevel.splits.items()}
    report: dict[str, Any] = {}
    if config.matched_test:
        reference = distribution(ex.conflict_type for ex in pairlevel_splits[TEST])
        matched, report[MATCHED] = matched_sample(
            primary_splits[TEST], reference, config.seed, config.matched_tolerance, config.matched_min_fraction)
        # an empty split cannot be loaded, and one holding every test row adds nothing: the report says why
        report[MATCHED]["written"] = 0 < len(matched) < len(primary_splits[TEST])
        if report[MATCHED]["written"]:
            primary_splits[MATCHED] = matched
    sizes = [c.size for c in components]
    report.update({
        "labelled_per_domain": dict(sorted(pool.labelled.items())),
        "label_source": pool.label_source,
        "duplicates": {"examples_read": len(pool.examples) + sum(pool.dropped.values()),
                       "duplicate_pair_ids": pool.duplicate_pair_ids,
                       "label_conflicting_duplicates": pool.label_conflicting_duplicates},
        "dropped": dict(sorted((pool.dropped + primary.dropped).items())),
        "components": {"count": len(components), "largest": max(sizes, default=0),
                       "singletons": sum(1 for n in sizes if n == 1),
                       "size_histogram": dict(sorted(Counter(sizes).items())),
                       "oversized": primary.oversized, "oversized_rule": rule},
        "targets": {"primary": primary.targets, "pairlevel": pairlevel.targets},
        "per_domain_counts": {"primary": _per_domain(primary_splits), "pairlevel": _per_domain(pairlevel_splits)},
    })
    return SplitResult({"primary": primary_splits, "pairlevel": pairlevel_splits}, report)


def check_nonempty(result: SplitResult) -> None:
    """Refuse a release with an empty train/validation/test split (``load_dataset`` cannot read one)."""
    empty = [f"{c}/{s}" for c, splits in result.configs.items() for s in ontology.SPLITS if not splits[s]]
    if not empty:
        return
    comps = result.report["components"]
    hint = ""
    if comps["oversized"] and comps["oversized_rule"] == "train":
        hint = (f"; {len(comps['oversized'])} article-graph component(s) are too large for validation/test "
                f"(largest: {comps['largest']} examples): set `oversized_components: carve` in the split config")
    raise ValueError(f"split would leave {', '.join(empty)} empty "
                     f"({result.report['duplicates']['examples_read']} examples read){hint}")


# ---------------------------------------------------------------------------------------------
# stage I/O


def state_dir(release_dir: str | Path, stage: str = STAGE) -> Path:
    return release_state_dir(release_dir, stage)


def _stage_stats(result: SplitResult, n_read: int) -> StageStats:
    stats = StageStats(STAGE, seen=n_read, unit="pairs")
    stats.kept = sum(len(rows) for s, rows in result.configs["primary"].items() if s != MATCHED)
    for reason, n in result.report["dropped"].items():
        if n:
            stats.drop(reason, n)
    stats.figures.update({f"{config}_sizes": {split: len(rows) for split, rows in splits.items()}
                          for config, splits in result.configs.items()})
    stats.figures.update({k: result.report[k] for k in ("duplicates", "components", MATCHED) if k in result.report})
    return stats


def open_stage(annotations_dir: str | Path | Sequence[str | Path], release_dir: Path, config: SplitConfig) -> Opened:
    dirs = as_dirs(annotations_dir)
    for d in dirs:
        if not (d / "_SUCCESS").exists():
            raise FileNotFoundError(f"{d}: not a finished annotation folder (no _SUCCESS marker)")
    release_dir = claim_output(release_dir, RELEASE_OWNER, dirs)
    params = {**config.model_dump(), "inputs": [done_fingerprint(d) for d in dirs]}
    return Opened(STAGE, config, [str(d) for d in dirs], release_dir, params, state=state_dir(release_dir))


def work(opened: Opened, runtime: RuntimeConfig) -> StageStats:
    """Split the annotation folders into the release's data (a global step: ``runtime`` is not used); what the split
    decided goes to ``.stages/split/report.json``."""
    from biodivergence_dataset.release import write_config

    config, release_dir, marker, dirs = opened.config, opened.out, opened.folder, as_dirs(opened.inputs)
    examples = [ex for d in dirs for ex in _progress(read_records(d, Example), f"split: reading {d.name}")]
    result = split_pool(examples, config)
    if result.report["components"]["oversized_rule"] == AUTO_CARVE:
        print(f"split: {AUTO_CARVE}", file=sys.stderr, flush=True)
    check_nonempty(result)
    for config_name, splits in result.configs.items():
        write_config(release_dir, config_name, splits)
    write_json_atomic(marker / SPLIT_REPORT, {
        "manifest": {
            "leakage_mode": {"primary": "article_disjoint_connected_components", "pairlevel": "pair_id_dedup_only"},
            "label_source": result.report["label_source"],
            "seed": config.seed,
            "ratios": {"primary": config.primary_ratios, "pairlevel": config.pairlevel_ratios},
            "thresholds": {"heuristic_topup_min_confidence": config.heuristic_topup_min_confidence,
                           "matched_tolerance": config.matched_tolerance,
                           "matched_min_fraction": config.matched_min_fraction},
            "sources": {"annotations": [d.name for d in dirs]},
            "sizes": {c: {s: len(rows) for s, rows in splits.items()} for c, splits in result.configs.items()},
            **{k: v for k, v in result.report.items() if k not in ("label_source", "labelled_per_domain")},
        },
        "labelled_per_domain": result.report["labelled_per_domain"],
    })
    return _stage_stats(result, len(examples))


stage = Stage(STAGE, SplitConfig, open_stage, work, reads=("annotations",), writes="release",
              state=f"{STATE_DIR}/{STAGE}", module=__name__)


def run_stage(
    annotations_dir: str | Path | Sequence[str | Path], release_dir: str | Path, config: SplitConfig | None = None,
    runtime: RuntimeConfig | None = None,
) -> dict[str, Any]:
    """Split one or more annotation folders into a release folder's data; resumable. The release stage
    (:mod:`builder.release`) turns the split's report into ``split_manifest.json`` and writes the card."""
    return execute(stage, annotations_dir, release_dir, config, runtime)


def _progress(iterable, desc: str):
    from tqdm.auto import tqdm

    return tqdm(iterable, desc=desc, unit="ex", mininterval=1.0, leave=False)


def add_arguments(parser) -> None:
    parser.add_argument("annotations_dir", nargs="+",
                        help="annotation stage folder(s); several runs are merged, LLM copies preferred")
    parser.add_argument("--out", required=True, help="release folder to write")
    parser.add_argument("--seed", type=int, default=SplitConfig().seed)
    parser.add_argument("--no-matched-test", action="store_true", help=f"do not build the {MATCHED} split")
    add_force_argument(parser)


def run(args) -> int:
    config = SplitConfig(seed=args.seed, matched_test=not args.no_matched_test)
    from . import release
    if args.force:
        claim_output(args.out, RELEASE_OWNER, args.annotations_dir, force=True)

    stats = run_stage(args.annotations_dir, args.out, config)
    release.run_stage(None, args.out)
    for name in ontology.CONFIGS:
        sizes = stats.get(f"{name}_sizes", {})
        print(f"{name}: " + ", ".join(f"{s}={n}" for s, n in sizes.items()))
    dropped = dropped_counts(stats)
    if dropped:
        print("dropped: " + ", ".join(f"{k}={v}" for k, v in dropped.items()))
    print(f"wrote {args.out}")
    return 0
