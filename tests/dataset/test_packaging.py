"""The wheel: what ships in it and that the metric is found from an installed copy, outside the checkout."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from repo_paths import REPO

SOURCES = ("pyproject.toml", "README.md", "biodivergence_dataset", "builder", "trainer", "metrics")
METRIC_FILES = ("biodivergence.py", "scoring.py", "README.md", "requirements.txt")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """A wheel built from a copy of the sources (so the checkout gets no build/ folder)."""
    src = tmp_path_factory.mktemp("src")
    for name in SOURCES:
        path = REPO / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(path, src / name)
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", str(src),
                    "-w", str(out)], check=True, capture_output=True)
    (built,) = out.glob("biodivergence-*.whl")
    return built


def test_the_wheel_ships_the_metric_and_the_card_template(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {f"biodivergence/{f}" for f in METRIC_FILES} <= names
    assert "biodivergence_dataset/templates/dataset_card.md" in names
    assert {"builder/models/finding_reader/reader.safetensors", "builder/models/finding_reader/reader_config.json",
            "builder/models/finding_reader/README.md"} <= names
    assert {"builder/models/question_answerer/answerer.safetensors",
            "builder/models/question_answerer/answerer_config.json"} <= names
    # the default lexicon and the demo's question pack: a build from an installed wheel needs them
    assert {"builder/lexicons/clinical.yaml", "builder/questionpacks/cohen2006_drug_classes.yaml"} <= names
    assert not any(n.startswith(("tests/", "benchmarks/")) for n in names)


def test_declared_dependencies_match_the_imports(wheel):
    with zipfile.ZipFile(wheel) as zf:
        metadata_name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = Parser().parsestr(zf.read(metadata_name).decode())
    requires = {canonicalize_name(Requirement(r).name) for r in metadata.get_all("Requires-Dist")}
    assert {"jinja2", "scipy", "nltk", "joblib", "faiss-cpu"} <= requires
    assert not {"ollama", "openai"} & requires  # the LLM backends talk HTTP through httpx
    assert "llm" not in metadata.get_all("Provides-Extra")


@pytest.mark.slow  # installs the wheel in a fresh environment
def test_the_installed_metric_is_found_without_an_environment_variable(wheel, tmp_path):
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    env = {k: v for k, v in os.environ.items() if k != "BIODIVERGENCE_METRIC"}
    env.update(PYTHONPATH=str(site), HF_HUB_OFFLINE="1")
    code = ("import json, trainer.metric as m; "
            "r = {'conflict_type': 'no_conflict', 'divergence_axes': [], 'dominant_confounder': ''}; "
            "s = m.load_metric().compute(predictions=[r], references=[r]); "
            "print(json.dumps([m.__file__, str(m.metric_dir()), s['conflict_type/accuracy']]))")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                         check=False)
    assert out.returncode == 0, out.stderr
    module_file, found, accuracy = json.loads(out.stdout.strip().splitlines()[-1])
    assert Path(module_file).is_relative_to(site)
    assert Path(found) == site / "biodivergence"
    assert accuracy == 1.0


def test_scoring_alone_imports_neither_torch_nor_sentence_transformers():
    code = ("import sys; from trainer.metric import score; "
            "r = {'conflict_type': 'no_conflict', 'divergence_axes': [], 'dominant_confounder': '', "
            "'reconciliation': 'the same words'}; "
            "s = score([r], [r], semsim_model=None); "
            "print(s['conflict_type/accuracy'], s['reconciliation/rouge_l'], "
            "sorted(m for m in ('torch', 'sentence_transformers', 'datasets', 'evaluate') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False,
                         env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1.0", "1.0", "[]"]
