"""Access to the BioDivergence metric from the trainer.

Two doors onto the same code, ``metrics/biodivergence/scoring.py``:

* :func:`load_metric` — ``evaluate.load`` on the metric folder, the public way (ARCHITECTURE §2);
* :func:`score` — the plain scorer imported by file path with ``importlib``. Trainer's
  ``compute_metrics`` and the baselines use it: it skips ``evaluate``'s per-call JSON
  round-trip and cache files, and returns exactly what ``load_metric().compute`` returns.

The folder is found beside this package in a source checkout; set ``BIODIVERGENCE_METRIC`` to
a metric folder (e.g. a clone of the Hub Space) to use another copy.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

ENV_VAR = "BIODIVERGENCE_METRIC"
_MODULE_NAME = "biodivergence_metric_scoring"


def metric_dir() -> Path:
    """The metric folder (``$BIODIVERGENCE_METRIC`` or ``<repo>/metrics/biodivergence``)."""
    path = Path(os.environ.get(ENV_VAR) or Path(__file__).resolve().parents[1] / "metrics" / "biodivergence")
    if not (path / "scoring.py").exists():
        raise FileNotFoundError(f"no BioDivergence metric at {path} (set {ENV_VAR} to the metric folder)")
    return path


@cache
def _scoring(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(_MODULE_NAME, path / "scoring.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[_MODULE_NAME] = module  # dataclasses in the module look themselves up here
    spec.loader.exec_module(module)
    return module


def scoring_module() -> ModuleType:
    """``metrics/biodivergence/scoring.py`` as a module."""
    return _scoring(metric_dir())


def score(predictions: Sequence[Mapping[str, Any]], references: Sequence[Mapping[str, Any]], **kwargs) -> dict[str, Any]:
    """``scoring.compute`` (every task both sides carry; flat ``task/metric`` keys)."""
    return scoring_module().compute(predictions, references, **kwargs)


def load_metric():
    """The metric as an ``evaluate`` module."""
    import evaluate

    return evaluate.load(str(metric_dir()))
