"""The metric folder and the lm-eval task folder stand alone (ARCHITECTURE.md §2): they import nothing of the
BioDivergence packages, so the Hub Space and the harness task run where only their libraries are installed; the
task's label file is the ontology."""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

import yaml
from isolated import isolated_python

from biodivergence_dataset import ontology
from trainer import harness_labels

ROOT = Path(__file__).resolve().parents[2]
METRICS = ROOT / "metrics"
TASK_DIR = METRICS / "lm_eval" / "biodivergence"
OURS = {"biodivergence_cli", "trainer", "builder", "biodivergence_text", "biodivergence_dataset", "biodivergence"}


def test_the_label_file_is_the_ontology():
    """``labels.yaml`` is what the generator writes from the ontology today (re-run it after an ontology change)."""
    text = (TASK_DIR / harness_labels.LABELS_FILE).read_text(encoding="utf-8")
    assert text == harness_labels.render(), "run `python -m trainer.harness_labels`"
    labels = yaml.safe_load(text)
    assert [c["name"] for c in labels["conflict_types"]] == list(ontology.CONFLICT_TYPE_NAMES)
    assert [a["name"] for a in labels["axes"]] == list(ontology.AXIS_NAMES)
    assert [c["definition"] for c in labels["conflict_types"]] == [c.definition for c in ontology.CONFLICT_TYPES]


def imported_packages(path: Path) -> set[str]:
    """The top-level packages ``path`` imports by name (relative imports stay in its own folder)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_the_task_folder_imports_no_package_of_ours():
    """The lm-eval task folder is no package, so no import contract covers it: its imports are read here."""
    modules = sorted(TASK_DIR.glob("*.py"))
    assert modules and all(not imported_packages(m) & OURS for m in modules), {m.name: imported_packages(m) for m in modules}


#: In a fresh virtual environment (``isolated_python``): which of our packages import before the metric folder is
#: put on the path (none may), then the metric and the task's utils.py import from that folder alone.
_ISOLATED = """
import importlib.util, json, sys
importable = []
for name in ("builder", "biodivergence_dataset", "trainer"):
    try:
        __import__(name)
    except ModuleNotFoundError:
        continue
    importable.append(name)
sys.path.append(sys.argv[1])
from biodivergence import biodivergence, scoring
spec = importlib.util.spec_from_file_location("task_utils", sys.argv[2])
utils = importlib.util.module_from_spec(spec)
spec.loader.exec_module(utils)
ours = sorted({name.split(".")[0] for name in sys.modules} & set(json.loads(sys.argv[3])) - {"biodivergence"})
print(json.dumps({"importable": importable, "prefix": sys.prefix, "ours": ours, "metric": biodivergence.__file__,
                  "choices": utils.conflict_type_choices({}),
                  "macro_f1": utils.conflict_type_macro_f1([(0, 0), (2, 2)]),
                  "axes": utils.parse_axes("Geography and disease subtype")}))
"""


def test_the_metric_and_the_task_import_with_only_their_libraries():
    """In a fresh virtual environment that sees the installed libraries but not our editable install (``import
    builder``, ``biodivergence_dataset`` and ``trainer`` fail there), the metric package and the task's utils.py
    import from the metrics folder alone and score."""
    out = isolated_python(_ISOLATED, str(METRICS), str(TASK_DIR / "utils.py"), json.dumps(sorted(OURS)), cwd=METRICS)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.splitlines()[-1])
    assert result["importable"] == [] and Path(result["prefix"]) != Path(sys.prefix)
    assert result["ours"] == [] and Path(result["metric"]).parent == METRICS / "biodivergence"
    assert result["choices"] == list(ontology.CONFLICT_TYPE_NAMES)
    assert result["macro_f1"] == 1.0 and result["axes"] == ["geography", "disease_subtype"]
