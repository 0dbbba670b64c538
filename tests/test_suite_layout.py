"""The test tree mirrors the packages, and no test module imports another: what tests share lives in
``tests/support`` (helpers) or ``tests/conftest.py`` (fixtures), so a test module can move or go alone."""

from __future__ import annotations

import ast

from repo_paths import REPO

TESTS = REPO / "tests"
#: One folder per package under test.
MIRRORED = {"dataset", "builder", "trainer", "metrics"}


def imported_modules(path) -> set[str]:
    """Top-level names of the modules ``path`` imports, anywhere in it (functions included)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


def test_every_test_module_sits_in_the_folder_of_its_package():
    misplaced = [p.relative_to(TESTS) for p in TESTS.rglob("test_*.py")
                 if p.parent.name not in MIRRORED and p != TESTS / "test_suite_layout.py"]
    assert misplaced == []
    assert not list((TESTS / "support").glob("test_*.py"))  # helpers are not collected as tests


def test_no_test_module_imports_another():
    modules = {p.stem for p in TESTS.rglob("test_*.py")}
    offenders = {str(p.relative_to(TESTS)): sorted(imported_modules(p) & modules) for p in TESTS.rglob("*.py")}
    assert {k: v for k, v in offenders.items() if v} == {}
