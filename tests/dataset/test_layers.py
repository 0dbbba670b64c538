"""The import layers of pyproject.toml's ``[tool.importlinter]`` contracts (ARCHITECTURE.md §2): the tree keeps
them, and ``lint-imports`` fails, naming the contract and the import, when a module imports across a layer."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import importlinter  # noqa: F401  (the dev extra's checker; these tests need it)
import pytest
from isolated import isolated_python

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("biodivergence_cli", "trainer", "builder", "biodivergence_text", "biodivergence_dataset",
            "metrics/biodivergence")
LAYERS = "Layers: command line > trainer > builder > text rules > contract"
METRIC_ALONE = "The metric imports nothing of ours"


#: ``lint-imports`` in an isolated interpreter (``isolated_python``) with the tree's packages first: the editable
#: install of the checkout, whose finder also answers for the metric's namespace package, cannot stand in for them.
LINT = "sys.argv[1:] = ['--no-cache']; from importlinter.cli import lint_imports_command; lint_imports_command()"


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    """``lint-imports`` with ``root``'s pyproject.toml and only its packages (and the metric folder) importable."""
    return isolated_python(LINT, first=[root, root / "metrics"], cwd=root)


def python_only(folder: str, names: list[str]) -> set[str]:
    """A copytree filter keeping folders and Python sources (the builder's model weights are no imports)."""
    return {n for n in names if n == "__pycache__" or not (n.endswith(".py") or (Path(folder) / n).is_dir())}


def tree_copy(tmp_path: Path) -> Path:
    """The packages' Python sources and pyproject.toml under ``tmp_path``."""
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=python_only)
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_the_tree_keeps_every_import_contract():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout and LAYERS in result.stdout and METRIC_ALONE in result.stdout


@pytest.mark.parametrize(("module", "line", "contract", "named"), [
    ("biodivergence_dataset/ontology.py", "import builder", LAYERS,
     "biodivergence_dataset.ontology -> builder"),
    ("biodivergence_text/cues.py", "from trainer import metric", LAYERS, "biodivergence_text.cues -> trainer"),
    ("builder/mine.py", "import biodivergence_cli.main", LAYERS, "builder.mine -> biodivergence_cli.main"),
    ("metrics/biodivergence/scoring.py", "from biodivergence_dataset import ontology", METRIC_ALONE,
     "biodivergence.scoring -> biodivergence_dataset"),
])
def test_an_import_across_a_layer_breaks_its_contract(tmp_path, module, line, contract, named):
    """In a copy of the tree, one added import (inside a function too: the graph sees every import) makes
    ``lint-imports`` fail, naming the broken contract and the offending import."""
    root = tree_copy(tmp_path)
    assert lint_imports(root).returncode == 0  # the copy is clean before the change
    path = root / module
    path.write_text(path.read_text(encoding="utf-8") + f"\n\ndef _added():\n    {line}\n", encoding="utf-8")
    result = lint_imports(root)
    assert result.returncode != 0
    broken = result.stdout.split("Broken contracts")[1]
    assert contract in broken and named in broken, result.stdout
