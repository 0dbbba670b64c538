"""Module names say one job each: no two modules of our packages share a file name, and no module takes a private
name (``_x``) from another module of ours.

A shared file name (two ``stage.py``, two ``scoring.py``) makes every traceback, grep and import line ambiguous;
a private name imported across modules is an interface nobody declared. ``__init__.py`` and ``__main__.py`` are
the package machinery and are left out of the first rule; dunder names (``__version__``) are not private. The
second rule holds for the tests and benchmarks too: what they need of a module is public there, and the shared
helpers they import by plain name (``tests/support`` on pytest's path, a benchmark's sibling scripts) count as ours.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: package folder -> the name it is imported by (the metric folder is installed as the top-level ``biodivergence``)
PACKAGES = {"biodivergence_dataset": "biodivergence_dataset", "biodivergence_text": "biodivergence_text",
            "biodivergence_cli": "biodivergence_cli", "builder": "builder", "trainer": "trainer",
            "metrics/biodivergence": "biodivergence"}
MACHINERY = {"__init__.py", "__main__.py"}
#: Folders of scripts (tests, benchmarks) that import our packages and each other's modules by plain name.
SCRIPTS = ("tests", "benchmarks")


def modules(root: Path, packages: dict[str, str]) -> dict[Path, str]:
    """Every ``.py`` file of ``packages`` under ``root`` -> its dotted module name."""
    found = {}
    for folder, name in packages.items():
        for path in sorted((root / folder).rglob("*.py")):
            parts = path.relative_to(root / folder).with_suffix("").parts
            found[path] = ".".join([name, *parts[:-1]] if parts[-1] == "__init__" else [name, *parts])
    return found


def shared_file_names(paths: list[Path], root: Path) -> dict[str, list[str]]:
    """File names (``__init__``/``__main__`` aside) that more than one of ``paths`` has -> those files."""
    by_name = defaultdict(list)
    for path in paths:
        if path.name not in MACHINERY:
            by_name[path.name].append(str(path.relative_to(root)))
    return {name: files for name, files in sorted(by_name.items()) if len(files) > 1}


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def imported_from(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The absolute module a ``from … import`` names (relative levels resolved against ``module``)."""
    if not node.level:
        return node.module or ""
    base = module.split(".")
    base = base[:len(base) - node.level + (1 if is_package else 0)]
    return ".".join(base + ([node.module] if node.module else []))


def private_imports(path: Path, module: str, ours: set[str]) -> list[str]:
    """``line N: from M import _x`` (or ``import M._x``) for each private name ``path`` takes from a module of ours."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.ImportFrom):
            source = imported_from(node, module, path.name == "__init__.py")
            if source.split(".")[0] not in ours:
                continue
            names = [a.name for a in node.names if is_private(a.name) or any(map(is_private, source.split(".")))]
            found += [f"line {node.lineno}: from {source} import {name}" for name in names]
        elif isinstance(node, ast.Import):
            found += [f"line {node.lineno}: import {a.name}" for a in node.names
                      if a.name.split(".")[0] in ours and any(map(is_private, a.name.split(".")))]
    return found


def private_imports_in(root: Path, packages: dict[str, str]) -> dict[str, list[str]]:
    """File -> its imports of private names of our modules, for every file of ``packages`` that has one."""
    ours = set(packages.values())
    found = {str(path.relative_to(root)): private_imports(path, module, ours)
             for path, module in modules(root, packages).items()}
    return {path: lines for path, lines in found.items() if lines}


def script_private_imports(root: Path, packages: dict[str, str], scripts: tuple[str, ...] = SCRIPTS
                           ) -> dict[str, list[str]]:
    """File -> its imports of private names of ours, for every script under ``scripts`` that has one; ours: the
    packages and every script module, by its plain name (how ``tests/support`` and the benchmarks import them)."""
    paths = [path for folder in scripts for path in sorted((root / folder).rglob("*.py"))]
    ours = set(packages.values()) | {path.stem for path in paths if path.name not in MACHINERY}
    found = {str(path.relative_to(root)): private_imports(path, path.stem, ours) for path in paths}
    return {path: lines for path, lines in found.items() if lines}


def test_no_two_modules_share_a_file_name():
    shared = shared_file_names(list(modules(ROOT, PACKAGES)), ROOT)
    assert not shared, "file names used by more than one module (rename one to say its job):\n" + "\n".join(
        f"  {name}: {', '.join(files)}" for name, files in shared.items())


def test_no_module_imports_a_private_name_of_another():
    found = private_imports_in(ROOT, PACKAGES)
    assert not found, "private names imported across modules (make them public where they are defined):\n" + "\n".join(
        f"  {path}: {'; '.join(lines)}" for path, lines in found.items())


def test_no_test_or_benchmark_imports_a_private_name():
    found = script_private_imports(ROOT, PACKAGES)
    assert not found, "private names imported by tests or benchmarks (make them public where they are shared, or " \
                      "test through the public ones):\n" + "\n".join(
        f"  {path}: {'; '.join(lines)}" for path, lines in found.items())


def write_tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_a_shared_file_name_is_reported(tmp_path):
    write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/stage.py": "", "pkg/sub/__init__.py": "",
                          "pkg/sub/stage.py": "", "pkg/sub/__main__.py": "", "pkg/__main__.py": "", "pkg/one.py": ""})
    shared = shared_file_names(list(modules(tmp_path, {"pkg": "pkg"})), tmp_path)
    assert shared == {"stage.py": ["pkg/stage.py", "pkg/sub/stage.py"]}


@pytest.mark.parametrize(("text", "expected"), [
    ("from pkg.one import _hidden\n", ["line 1: from pkg.one import _hidden"]),
    ("from .one import _hidden, shown\n", ["line 1: from pkg.one import _hidden"]),
    ("def f():\n    from . import _x\n", ["line 2: from pkg import _x"]),
    ("from pkg._inner import shown\n", ["line 1: from pkg._inner import shown"]),
    ("import pkg._inner\n", ["line 1: import pkg._inner"]),
    ("from . import __version__\nfrom re import _parser\nfrom .one import shown\n", []),
])
def test_a_private_import_from_our_modules_is_reported(tmp_path, text, expected):
    write_tree(tmp_path, {"pkg/__init__.py": "__version__ = '1'\n_x = 1\n", "pkg/one.py": "_hidden = shown = 1\n",
                          "pkg/two.py": text})
    found = private_imports_in(tmp_path, {"pkg": "pkg"})
    assert found == ({"pkg/two.py": expected} if expected else {})


def test_a_private_import_in_a_test_or_benchmark_is_reported(tmp_path):
    write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/one.py": "_hidden = shown = 1\n",
                          "tests/support/helpers.py": "_made = made = 1\n",
                          "tests/test_a.py": "from pkg.one import _hidden, shown\nfrom helpers import _made, made\n",
                          "tests/test_b.py": "from pkg.one import shown\nfrom re import _parser\n",
                          "benchmarks/bench.py": "def f():\n    from helpers import _made\n"})
    found = script_private_imports(tmp_path, {"pkg": "pkg"}, ("tests", "benchmarks"))
    assert found == {"tests/test_a.py": ["line 1: from pkg.one import _hidden", "line 2: from helpers import _made"],
                     "benchmarks/bench.py": ["line 2: from helpers import _made"]}
