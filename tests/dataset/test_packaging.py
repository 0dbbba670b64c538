"""The wheel: what ships in it, that the metric is found from an installed copy outside the checkout, and that the
installed package builds a release in a fresh virtual environment."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from email.parser import Parser
from fnmatch import fnmatch
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from repo_paths import REPO
from setuptools.config.pyprojecttoml import read_configuration

METRIC_FILES = ("biodivergence.py", "scoring.py", "labels.py", "record_checks.py", "label_scores.py", "text_scores.py",
                "__init__.py", "README.md", "requirements.txt")
SHARED = REPO.parent / "shared" / "data"
#: The 40 studies one Cohen 2006 review included: a small real corpus for the installed question pack.
TINY_SOURCE = (f"cohen2006[where=label_included:1]:{SHARED / 'cohen2006_drug_class_reviews' / 'UrinaryIncontinence.csv'}"
               "@clinical_trials_epidemiology")
#: Variables that would let a subprocess import the checkout or another metric instead of the installed wheel.
CHECKOUT_VARIABLES = ("PYTHONPATH", "BIODIVERGENCE_METRIC", "VIRTUAL_ENV")


def package_dirs() -> list[Path]:
    """The top-level package folders that pyproject's ``packages.find`` selects (each ``where`` × ``include``; a
    folder needs no ``__init__.py``, as the metric's has none)."""
    find = read_configuration(REPO / "pyproject.toml", expand=False)["tool"]["setuptools"]["packages"]["find"]
    return sorted(path for where in find["where"] for path in (REPO / where).iterdir()
                  if path.is_dir() and any(fnmatch(path.name, p) for p in find["include"]))


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """A wheel built from a copy of the sources (so the checkout gets no build/ folder)."""
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, src / name)
    for folder in package_dirs():
        shutil.copytree(folder, src / folder.relative_to(REPO), ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", str(src),
                    "-w", str(out)], check=True, capture_output=True)
    (built,) = out.glob("biodivergence-*.whl")
    return built


def test_the_wheel_ships_the_metric_and_the_card_template(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {f"biodivergence/{f}" for f in METRIC_FILES} <= names
    assert {"biodivergence_dataset/templates/dataset_card.md", "trainer/templates/model_card.md"} <= names
    assert {"biodivergence_cli/main.py", "biodivergence_text/cues.py"} <= names  # the command line, the text rules
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


def test_every_file_of_a_package_folder_ships(wheel):
    """Lexicons, question and query packs, build configs, models and templates: a build from an installed wheel
    reads them, so a file left out of ``package-data`` fails only there."""
    names = set(zipfile.ZipFile(wheel).namelist())
    files = [f"{folder.name}/{path.relative_to(folder).as_posix()}" for folder in package_dirs()
             for path in folder.rglob("*")
             if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"]
    assert "builder/lexicons/clinical.yaml" in files  # the walk sees the data files
    assert [name for name in files if name not in names] == []


def installed_env() -> dict[str, str]:
    """The environment for the fresh virtual environment's commands: nothing that points at the checkout."""
    env = {k: v for k, v in os.environ.items() if k not in CHECKOUT_VARIABLES}
    env.update(HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1")
    return env


def run_installed(args: list, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in args], cwd=cwd, env=installed_env(), capture_output=True, text=True,
                          check=False)


@pytest.fixture(scope="module")
def fresh_venv(wheel, tmp_path_factory) -> Path:
    """A new virtual environment holding the wheel and nothing of the checkout. The project's dependencies come from
    the running environment's site-packages through a ``.pth`` line, which adds that folder alone: the ``.pth`` files
    inside it (the editable install of the checkout among them) are not processed."""
    venv = tmp_path_factory.mktemp("fresh") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    python = venv / "bin" / "python"
    purelib = run_installed([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], venv)
    assert purelib.returncode == 0, purelib.stderr
    (Path(purelib.stdout.strip()) / "project_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    installed = run_installed([python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", wheel], venv)
    assert installed.returncode == 0, installed.stderr
    return venv


@pytest.mark.slow
def test_the_installed_wheel_builds_a_release_in_a_fresh_environment(fresh_venv, tmp_path):
    """The console script of the fresh environment builds a small real release around the installed question pack,
    default lexicon and domain pack, from a folder outside the checkout, and the release validates."""
    where = run_installed([fresh_venv / "bin" / "python", "-c",
                           "import builder, biodivergence_dataset; print(builder.__file__, biodivergence_dataset.__file__)"],
                          tmp_path)
    assert where.returncode == 0, where.stderr
    modules = [Path(line) for line in where.stdout.split()]
    assert all(m.is_relative_to(fresh_venv) and not m.is_relative_to(REPO) for m in modules), modules
    installed = modules[0].parent
    pack = installed / "questionpacks" / "cohen2006_drug_classes.yaml"
    questions = yaml.safe_load(pack.read_text(encoding="utf-8"))["questions"]
    assert yaml.safe_load((installed / "lexicons" / "clinical.yaml").read_text(encoding="utf-8"))["drug_classes"]
    config = {
        "sources": [TINY_SOURCE],
        "ingest": {"progress": False},
        "questions": {"pack": str(pack), "domain_packs": [str(installed / "lexicons" / "cohen2006.yaml")]},
        "gather": {"top_n": 40},
        "mine": {"open_fill": False, "cap_per_question": 40},
        "annotate": {"annotator": "reader", "progress": False},
        "split": {"seed": 7, "oversized_components": "carve"},
        "audit": {"dpi": 60},
        "card": {"pretty_name": "BioDivergence (wheel test)", "version": "0.0"},
    }
    (tmp_path / "tiny.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    script = fresh_venv / "bin" / "biodivergence"
    built = run_installed([script, "build", "--config-file", "tiny.yaml", "--out", "work"], tmp_path)
    assert built.returncode == 0, built.stderr[-3000:]
    stats = json.loads((tmp_path / "work" / "build_stats.json").read_text())
    assert stats["questions.questions"] == len(questions)  # the installed pack was read, every question of it
    assert stats["questions.kept"] > 0  # and claims were assigned through the installed lexicon
    validated = run_installed([script, "validate", "--release", "work/release"], tmp_path)
    assert validated.returncode == 0, validated.stderr[-3000:]
    assert "work/release: OK" in validated.stdout
