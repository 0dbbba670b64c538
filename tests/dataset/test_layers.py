"""The import layers of pyproject.toml's ``[tool.importlinter]`` contracts (ARCHITECTURE.md §2): the tree keeps
them, and ``lint-imports`` fails, naming the contract and the import, when a module imports across a layer."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import importlinter  # noqa: F401  (the dev extra's checker; these tests need it)
import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("biodivergence_cli", "trainer", "builder", "biodivergence_text", "biodivergence_dataset",
            "metrics/biodivergence")
LAYERS = "Layers: command line > trainer > builder > text rules > contract"
METRIC_ALONE = "The metric imports nothing of ours"


#: ``lint-imports`` run with ``site`` off and the libraries' folder appended as a plain path: a path appended so
#: runs none of the folder's .pth files, so the editable install of the checkout (whose finder also answers for
#: the metric's namespace package) cannot stand in for the packages of the tree under test.
LINT = ("import sys; sys.path[:0] = sys.argv[1:3]; sys.path.append(sys.argv[3]); sys.argv[1:] = ['--no-cache']; "
        "from importlinter.cli import lint_imports_command; lint_imports_command()")


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    """``lint-imports`` with ``root``'s pyproject.toml and only its packages (and the metric folder) importable."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    command = [sys.executable, "-S", "-c", LINT, str(root), str(root / "metrics"), sysconfig.get_paths()["purelib"]]
    return subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, check=False)


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
