"""The ``biodivergence`` lm-evaluation-harness task group as the tests see it: its folder, its ``utils.py``
(imported by path, as lm-eval imports it) and the metric's scores of a harness run's logged samples."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from types import ModuleType

from repo_paths import REPO

from trainer.metric import scoring_module

TASKS_DIR = REPO / "metrics" / "lm_eval"


def load_utils() -> ModuleType:
    """The task group's utils.py, loaded from its file (lm-eval imports it by path too)."""
    spec = importlib.util.spec_from_file_location("biodivergence_lm_eval_utils", TASKS_DIR / "biodivergence" / "utils.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


utils = load_utils()


def scored(run: dict, task: str, field: str, prediction: Callable[[dict], object]) -> dict:
    """The metric's scores of the logged samples of ``task`` in a harness ``run`` (``{"samples": ...}``),
    each sample's prediction decoded by ``prediction``."""
    samples = run["samples"][task]
    return scoring_module().compute([{field: prediction(s)} for s in samples],
                                    [{field: s["doc"][field]} for s in samples])
