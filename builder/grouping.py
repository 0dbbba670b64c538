"""Grouping helpers shared by stages (split, audit), so that no stage imports another stage's internals."""

from __future__ import annotations


class UnionFind:
    """Disjoint sets of string nodes; each set's root is its smallest member (so roots are order-independent).

    Written here rather than taken from networkx: two dict operations per call on millions of ids, no graph.
    """

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, x: str) -> str:
        self.parent.setdefault(x, x)
        root = x
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[x] != root:
            self.parent[x], x = root, self.parent[x]
        return root

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)
