"""The metric stands alone but agrees with the ontology and the task declaration; the one door to the metric."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from metric_records import METRIC_DIR, FakeEncoder, full_record, scoring
from repo_paths import REPO

from biodivergence_dataset import ontology
from biodivergence_dataset.tasks import load_tasks
from trainer.metric import metric_dir


def test_label_lists_equal_the_ontology():
    assert scoring.CONFLICT_TYPES == ontology.CONFLICT_TYPE_NAMES
    assert scoring.CONFLICT_TYPE_TITLES == tuple(c.title for c in ontology.CONFLICT_TYPES)
    assert scoring.AXES == ontology.AXIS_NAMES
    assert scoring.AXIS_TITLES == tuple(a.title for a in ontology.AXES)
    assert scoring.PRIMARY_AXES == ontology.PRIMARY_AXIS_NAMES
    assert scoring.CONTEXTUAL == ontology.CONTEXTUAL
    assert scoring.SPAN_ROLES == ontology.SPAN_ROLES


def imports(path: Path) -> list[ast.Import | ast.ImportFrom]:
    return [n for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, (ast.Import, ast.ImportFrom))]


def top_level_names(nodes: list[ast.Import | ast.ImportFrom]) -> set[str]:
    names = {a.name.split(".")[0] for n in nodes if isinstance(n, ast.Import) for a in n.names}
    return names | {n.module.split(".")[0] for n in nodes if isinstance(n, ast.ImportFrom) and n.level == 0}


def test_metric_folder_stands_alone():
    ours = {"biodivergence_dataset", "builder", "trainer"}
    for script in METRIC_DIR.glob("*.py"):
        assert not top_level_names(imports(script)) & ours, script.name
    scorer = [p for p in METRIC_DIR.glob("*.py") if p.name not in ("biodivergence.py", "app.py")]
    for module in scorer:
        assert not top_level_names(imports(module)) & {"evaluate", "datasets"}, module.name
    # evaluate's import scanner reads one module per import line
    assert all(len(n.names) == 1 for n in imports(METRIC_DIR / "biodivergence.py") if isinstance(n, ast.Import))


def test_the_evaluate_module_names_every_module_of_the_scorer():
    """evaluate.load copies only the sibling modules named in the evaluate module's own import lines (it does not
    follow their imports, and reads a comment on an import line as a URL): every module of the scorer is named there,
    with no comment on the line, and the Space ships them all."""
    from biodivergence_dataset import hub

    lines = (METRIC_DIR / "biodivergence.py").read_text().splitlines()
    named = {line.split()[1][1:] for line in lines if line.startswith("from .")}
    assert all("#" not in line for line in lines if line.startswith("from ."))
    modules = {p.stem for p in METRIC_DIR.glob("*.py")} - {"biodivergence", "app", "__init__"}
    assert named == modules
    assert {f"{m}.py" for m in modules} <= set(hub.METRIC_FILES)


def test_tasks_and_key_metrics_follow_the_task_declaration():
    tasks = load_tasks()
    assert list(scoring.TASK_FIELDS) == [t.name for t in tasks]
    assert [(f,) for f in scoring.TASK_FIELDS.values()] == [t.target_fields for t in tasks]
    assert list(scoring.KEY_METRIC_KEYS) == [k for t in tasks for k in t.key_metric_keys()]


def test_output_keys_cover_every_declared_metric():
    records = [full_record(), full_record("no_conflict", (), "", "No conflict here.", ())]
    scores = scoring.compute(records, records, semsim_model=FakeEncoder())
    for spec in load_tasks():
        assert set(spec.metric_keys()) <= set(scores), spec.name


def test_one_door_locates_the_metric(monkeypatch, tmp_path):
    monkeypatch.delenv("BIODIVERGENCE_METRIC", raising=False)
    assert metric_dir() == METRIC_DIR
    monkeypatch.setenv("BIODIVERGENCE_METRIC", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="BIODIVERGENCE_METRIC"):
        metric_dir()
    assert metric_dir(METRIC_DIR) == METRIC_DIR  # a folder given by the caller wins


def finds_the_metric(node: ast.AST) -> bool:
    """``evaluate.load(...)``, a path ``... / "biodivergence"`` or ``import scoring``: the metric found
    some other way than through the door."""
    return (isinstance(node, ast.Call) and ast.unparse(node.func) == "evaluate.load"
            or isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and ast.unparse(node.right) == "'biodivergence'"
            or isinstance(node, ast.Import) and any(a.name == "scoring" for a in node.names))


def test_trainer_cli_and_benchmarks_use_the_one_door():
    door = REPO / "trainer" / "metric.py"
    for path in [*REPO.glob("trainer/**/*.py"), *REPO.glob("biodivergence_cli/*.py"), *REPO.glob("benchmarks/*.py")]:
        if path != door:
            assert not any(finds_the_metric(n) for n in ast.walk(ast.parse(path.read_text()))), path
