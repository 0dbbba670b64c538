"""Fingerprints of what a stage runs besides its inputs: its code and the data files it reads.

The code of a stage is its module and every module of ours it imports, directly or not (inside functions too), read
from the import graph of our packages (grimp); each is hashed as its syntax tree without docstrings, so a docstring or
comment edit, or an edit of a module the stage never imports, changes no stage's fingerprint. Libraries are not
hashed: the environment pins them.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
from collections.abc import Iterable
from functools import cache, lru_cache
from pathlib import Path

#: The packages whose code a stage fingerprint covers (those installed).
OUR_PACKAGES = ("biodivergence_dataset", "biodivergence_text", "builder")


@lru_cache(maxsize=1)
def import_graph():
    """The import graph of our packages (every ``import`` statement, inside functions too)."""
    import grimp

    packages = [p for p in OUR_PACKAGES if importlib.util.find_spec(p) is not None]
    return grimp.build_graph(*packages, cache_dir=None)


def code_modules(module: str) -> list[str]:
    """``module`` and every module of ours it imports, directly or not, with the packages that hold them (importing
    a module runs its packages' ``__init__``, and what they import), sorted. A module outside our packages (a
    test's stage) stands for itself alone."""
    graph = import_graph()
    if module not in graph.modules:
        return [module]
    found, todo = set(), [module]
    while todo:
        name = todo.pop()
        if name not in found:
            found.add(name)
            parent = name.rpartition(".")[0]
            todo += [*graph.find_modules_directly_imported_by(name), *([parent] if parent else [])]
    return sorted(found)


def _module_file(module: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError(f"no source for module {module}")
    return Path(spec.origin)


def _strip_docstrings(tree: ast.AST) -> ast.AST:
    """The tree without docstrings (a string expression first in a module, class or function body)."""
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return tree


@cache
def _source_digest(path: Path, mtime_ns: int, size: int) -> str:
    tree = _strip_docstrings(ast.parse(path.read_bytes(), filename=str(path)))
    return hashlib.sha256(ast.dump(tree, annotate_fields=False).encode()).hexdigest()


def source_digest(path: Path) -> str:
    """sha256 of a Python file's syntax tree without docstrings and comments (cached while the file is unchanged)."""
    stat = path.stat()
    return _source_digest(path, stat.st_mtime_ns, stat.st_size)


def code_fingerprint(module: str) -> str:
    """The fingerprint of the code ``module`` runs: the digests of the modules of :func:`code_modules`."""
    h = hashlib.sha256()
    for name in code_modules(module):
        h.update(name.encode() + b"\0" + source_digest(_module_file(name)).encode() + b"\n")
    return h.hexdigest()[:16]


def files_fingerprint(paths: Iterable[str | Path]) -> str:
    """sha256 over the bytes of ``paths`` (a folder: its files, recursively), named by their position in the list
    and their place in a folder (so a moved checkout agrees); a missing path counts as missing."""
    h = hashlib.sha256()
    for i, path in enumerate(Path(p) for p in paths):
        files = sorted(f for f in path.rglob("*") if f.is_file()) if path.is_dir() else [path]
        for file in files:
            name = f"{i}/{file.relative_to(path).as_posix()}" if path.is_dir() else str(i)
            h.update(name.encode() + b"\0")
            h.update(file.read_bytes() if file.is_file() else b"<missing>")
    return h.hexdigest()[:16]
