"""No import cycle between any two modules of our packages.

The graph is grimp's (the library under import-linter): every ``import`` statement of every module of every
top-level package of this repository (each folder at the root holding an ``__init__.py``), including imports inside
functions and under ``if TYPE_CHECKING:`` (a cycle that Python happens not to run into is still two modules that
cannot be read, tested or moved one without the other).

A package and its submodules: importing ``pkg.sub`` runs ``pkg/__init__.py`` first, but that implicit step is no
edge here. So ``pkg/__init__.py`` importing ``pkg.sub`` (a re-export) is no cycle; it is one only when ``pkg.sub``
imports ``pkg`` back for a name defined in ``__init__`` (``from pkg import name``, ``from . import name``), which
grimp records as the edge ``pkg.sub -> pkg``. ``from . import sibling`` naming a submodule is an edge to the
sibling, not to the package.
"""

from __future__ import annotations

import importlib.util
import itertools
import sys
from pathlib import Path

import grimp
import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[2]


def our_packages() -> list[str]:
    """The top-level packages of the repository: the folders at its root that hold an ``__init__.py``."""
    return sorted(init.parent.name for init in ROOT.glob("*/__init__.py"))


def import_graph(packages: list[str]) -> nx.DiGraph:
    """Module -> module for every import between modules of ``packages``; each edge keeps the lines behind it."""
    graph = grimp.build_graph(*packages, cache_dir=None)
    out = nx.DiGraph()
    out.add_nodes_from(graph.modules)
    for importer in graph.modules:
        for imported in graph.find_modules_directly_imported_by(importer):
            details = graph.get_import_details(importer=importer, imported=imported)
            out.add_edge(importer, imported, lines=[f"line {d['line_number']}: {d['line_contents']}" for d in details])
    return out


def shortest_cycles(graph: nx.DiGraph) -> list[list[str]]:
    """One shortest cycle (``[a, b, …, a]``) in each group of modules that import one another, shortest first."""
    cycles = []
    for group in nx.strongly_connected_components(graph):
        if len(group) < 2:
            continue
        within = graph.subgraph(group)
        paths = (nx.shortest_path(within, v, u) for u, v in within.edges)
        back = min(paths, key=len)
        cycles.append([back[-1], *back])
    return sorted(cycles, key=len)


def describe(graph: nx.DiGraph, cycle: list[str]) -> str:
    """A cycle as its modules with the import lines that make each step."""
    steps = [f"  {a} -> {b}  ({'; '.join(graph.edges[a, b]['lines'])})" for a, b in itertools.pairwise(cycle)]
    return " -> ".join(cycle) + "\n" + "\n".join(steps)


def test_our_packages_are_read_from_this_checkout():
    packages = our_packages()
    assert {"biodivergence_dataset", "builder", "trainer"} <= set(packages)
    for name in packages:
        origin = Path(importlib.util.find_spec(name).origin).resolve()
        assert origin == ROOT / name / "__init__.py", f"{name} imports from {origin}, not from {ROOT}"


def test_no_module_of_ours_imports_itself_back():
    graph = import_graph(our_packages())
    cycles = shortest_cycles(graph)
    others = "".join(f"\nalso: {' -> '.join(c)}" for c in cycles[1:])
    assert not cycles, f"{len(cycles)} import cycle(s); the shortest:\n{describe(graph, cycles[0])}{others}"


def write_package(root: Path, name: str, files: dict[str, str]) -> None:
    folder = root / name
    folder.mkdir()
    for module, text in files.items():
        (folder / f"{module}.py").write_text(text)


@pytest.mark.parametrize(("files", "cycle"), [
    # an import inside a function closes the cycle as much as one at the top
    ({"__init__": "", "a": "def f():\n    from .b import B\n    return B\n", "b": "from . import a\nB = 1\n"},
     ["cycledemo.a", "cycledemo.b", "cycledemo.a"]),
    # a submodule that takes a name from its package's __init__, which re-exports the submodule
    ({"__init__": "from .a import A\nNAME = 1\n", "a": "from . import NAME\nA = NAME\n"},
     ["cycledemo", "cycledemo.a", "cycledemo"]),
    # __init__ re-exporting submodules that import each other's modules, never the package: no cycle
    ({"__init__": "from .a import A\nfrom .b import B\n", "a": "A = 1\n", "b": "from . import a\nB = a.A\n"}, None),
])
def test_the_cycle_finder_reports_a_cycle_and_only_a_cycle(tmp_path, monkeypatch, files, cycle):
    write_package(tmp_path, "cycledemo", files)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "cycledemo", raising=False)
    graph = import_graph(["cycledemo"])
    found = shortest_cycles(graph)
    if cycle is None:
        assert found == []
    else:
        assert len(found) == 1 and found[0][:-1] in [cycle[i:-1] + cycle[:i] for i in range(len(cycle) - 1)]
        assert "line " in describe(graph, found[0])
