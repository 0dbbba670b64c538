"""The split's pool and article graph: duplicates resolved, labels filtered, articles grouped into components.

A component holds the examples whose articles are linked by shared pairs (or claims); a component too large for
validation/test may be carved into Louvain communities of articles (opt-in, beyond the paper).
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from biodivergence_dataset import ontology
from biodivergence_dataset.records import Example

from .grouping import UnionFind

LLM = ontology.check_label("annotator_kind", "llm")
TRAIN, VALIDATION, TEST = ontology.SPLITS


def _preference(ex: Example) -> tuple:
    """Sort key choosing which copy of a duplicated pair survives: LLM first, then confidence; copies alike in
    all of these are told apart by their content, so the survivor never depends on the order they arrive in."""
    return (ex.annotator_kind != LLM, -ex.confidence, ex.annotator_id, ex.example_id,
            hashlib.sha1(ex.model_dump_json().encode()).hexdigest())


def is_conflict(ex: Example) -> bool:
    """Does the row hold a conflict (any class but ``no_conflict``)?"""
    return ex.conflict_type != ontology.NO_CONFLICT


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
