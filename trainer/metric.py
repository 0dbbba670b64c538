"""The one door from our code to the BioDivergence metric (trainer, CLI, benchmarks and tests).

:func:`metric_dir` locates the metric folder: a folder given by the caller, else
``$BIODIVERGENCE_METRIC`` (e.g. a clone of the Hub Space), else the installed package
``biodivergence`` (the wheel ships ``metrics/biodivergence`` under that name), else
``metrics/biodivergence`` beside this package in a source checkout. Two ways in, onto the same code
(``scoring.py``):

* :func:`load_metric` — ``evaluate.load`` on the folder, the public way (ARCHITECTURE §2);
* :func:`score` / :func:`scoring_module` — the plain scorer imported from the folder. Trainer's
  ``compute_metrics`` and the baselines use it: it skips ``evaluate``'s per-call Arrow round trip
  and cache files, and returns exactly what ``load_metric().compute`` returns.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

ENV_VAR = "BIODIVERGENCE_METRIC"
_PACKAGE_NAME = "biodivergence_metric"
_PACKAGE = "biodivergence"  # metrics/biodivergence as the wheel installs it
_CHECKOUT_DIR = Path(__file__).resolve().parents[1] / "metrics" / "biodivergence"


def installed_metric_dir() -> Path | None:
    """The folder of the installed ``biodivergence`` metric package, if one is importable."""
    spec = importlib.util.find_spec(_PACKAGE)
    locations = (spec.submodule_search_locations or []) if spec else []
    return next((Path(p) for p in locations if (Path(p) / "scoring.py").exists()), None)


def metric_dir(path: str | os.PathLike | None = None) -> Path:
    """The metric folder: ``path``, else ``$BIODIVERGENCE_METRIC``, else the installed package, else the checkout's."""
    found = Path(path or os.environ.get(ENV_VAR) or installed_metric_dir() or _CHECKOUT_DIR)
    if not (found / "scoring.py").exists():
        raise FileNotFoundError(f"no BioDivergence metric at {found} (give the metric folder or set {ENV_VAR})")
    return found


@cache
def _scoring(path: Path) -> ModuleType:
    """``scoring`` of the metric folder ``path``, loaded as a submodule of a package over that folder (its modules
    import each other relatively). The package is registered under a name of its own per folder, so it never
    shadows an importable ``biodivergence`` nor another folder's metric."""
    name = f"{_PACKAGE_NAME}_{hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]}"
    package = importlib.util.module_from_spec(importlib.machinery.ModuleSpec(name, None, is_package=True))
    package.__path__ = [str(path)]
    sys.modules[name] = package
    return importlib.import_module(f"{name}.scoring")


def scoring_module(path: str | os.PathLike | None = None) -> ModuleType:
    """The metric folder's ``scoring`` module (the folder loaded as a package)."""
    return _scoring(metric_dir(path))


def score(predictions: Sequence[Mapping[str, Any]], references: Sequence[Mapping[str, Any]], **kwargs) -> dict[str, Any]:
    """``scoring.compute`` (every task both sides carry; flat ``task/metric`` keys)."""
    return scoring_module().compute(predictions, references, **kwargs)


def versions(path: str | os.PathLike | None = None) -> dict[str, str]:
    """Which metric version (the Space tag it was published as, "dev" if never) and ontology version score."""
    module = scoring_module(path)
    return {"metric_version": module.METRIC_VERSION, "ontology_version": module.ONTOLOGY_VERSION}


def load_metric(path: str | os.PathLike | None = None):
    """The metric as an ``evaluate`` module, loaded from :func:`metric_dir`."""
    import evaluate

    return evaluate.load(str(metric_dir(path)))
