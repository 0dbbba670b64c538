"""Prompts, answer parsing and scoring of the ``biodivergence`` lm-evaluation-harness task group.

The task group imports nothing of the BioDivergence packages: it needs lm-eval and the metric folder only.
Prompts carry the ontology's definitions, read from ``labels.yaml`` beside this file (generated from the ontology;
a test keeps them equal). Generated answers are parsed into labels and scored by the BioDivergence metric's own
scorer, ``scoring`` of the metric folder (``$BIODIVERGENCE_METRIC``, e.g. a clone of the Hub Space, else
``metrics/biodivergence`` beside this task folder), loaded from its folder as lm-eval loads this file, so the harness
reports the numbers ``evaluate.load("metrics/biodivergence")`` would.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

_HERE = Path(__file__).resolve().parent
#: The folder of the metric whose scorer the harness reports.
METRIC_DIR = Path(os.environ.get("BIODIVERGENCE_METRIC") or _HERE.parents[1] / "biodivergence")
_METRIC_PACKAGE = "biodivergence_lm_eval_metric"


def _load_scoring(folder: Path) -> ModuleType:
    """The metric folder's ``scoring`` module, the folder loaded as a package (its modules import each other
    relatively) under a name of its own, so it never shadows an importable ``biodivergence``."""
    package = importlib.util.module_from_spec(importlib.machinery.ModuleSpec(_METRIC_PACKAGE, None, is_package=True))
    package.__path__ = [str(folder)]
    sys.modules[_METRIC_PACKAGE] = package
    return importlib.import_module(f"{_METRIC_PACKAGE}.scoring")


scoring = _load_scoring(METRIC_DIR)
LABELS = yaml.safe_load((_HERE / "labels.yaml").read_text(encoding="utf-8"))
CONFLICT_TYPES = [c["name"] for c in LABELS["conflict_types"]]
AXES = [a["name"] for a in LABELS["axes"]]

_CLASSES = "\n".join(f"- {c['name']}: {c['definition']}" for c in LABELS["conflict_types"])
_AXES = "\n".join(f"- {a['name']}: {a['description']}" for a in LABELS["axes"])
_NONE = re.compile(r"^\W*none\b", re.IGNORECASE)


def load_release(dataset_path: str, config: str, revision: str | None = None, **_: Any):
    """The release config as a DatasetDict: ``dataset_path`` is a Hub id or a local release folder."""
    import datasets

    return datasets.load_dataset(dataset_path, config, revision=revision)


def _claims(doc: dict[str, Any]) -> str:
    return f"Claim A: {doc['claim_a_text']}\nClaim B: {doc['claim_b_text']}\n\n"


def conflict_type_prompt(doc: dict[str, Any]) -> str:
    """Task 1 as multiple choice over the six class names, defined in the prompt."""
    return (f"Two claims from biomedical abstracts.\n{_claims(doc)}Conflict types:\n{_CLASSES}\n\n"
            "Which conflict type relates the two claims?\nAnswer:")


def axes_prompt(doc: dict[str, Any]) -> str:
    """Task 2 as generation: the axes, comma-separated, or "none"."""
    return (f"Two claims from biomedical abstracts.\n{_claims(doc)}Divergence axes:\n{_AXES}\n\n"
            "On which divergence axes do the two claims' study contexts differ? "
            "Answer with axis names separated by commas, or none.\nAxes:")


def confounder_prompt(doc: dict[str, Any]) -> str:
    """Task 3 as generation: the one axis that best explains the tension."""
    return (f"Two claims from biomedical abstracts.\n{_claims(doc)}Divergence axes:\n{_AXES}\n\n"
            "Which single divergence axis best explains why the claims seem to disagree?\nAxis:")


def conflict_type_choices(doc: dict[str, Any]) -> list[str]:
    """The six class names in ClassLabel order, so a row's ``conflict_type`` id is the answer index."""
    return list(CONFLICT_TYPES)


def axes_target(doc: dict[str, Any]) -> str:
    return ", ".join(AXES[i] for i in doc["divergence_axes"]) or "none"


def confounder_target(doc: dict[str, Any]) -> str:
    return AXES[doc["dominant_confounder"]]


def with_confounder(dataset):
    """Task 3 is scored on the examples whose reference names a confounder (stored -1, or null before 1.2, if none)."""
    return dataset.filter(lambda doc: doc["dominant_confounder"] not in (None, LABELS["missing_int"]))


def parse_axes(text: str) -> list[str]:
    """The axes a generated answer names (names or ontology titles, as the metric's slot overlap reads them).

    >>> parse_axes(" Geography, disease subtype and more")
    ['geography', 'disease_subtype']
    >>> parse_axes("none"), parse_axes("")
    ([], [])
    """
    named = scoring.named_slots(text, set(AXES))
    return [] if _NONE.match(text) else [a for a in AXES if a in named]


def parse_confounder(text: str) -> str:
    """The first axis a generated answer names, "" for none.

    >>> parse_confounder(" clinical setting, then geography"), parse_confounder("no idea")
    ('clinical_setting', '')
    """
    return next((axes[0] for piece in re.split(r"[,;\n]", text) if (axes := parse_axes(piece))), "")


# --- per-document results and their aggregation by the metric ------------------------------------------


def conflict_type_results(doc: dict[str, Any], results: list[tuple[float, bool]]) -> dict[str, Any]:
    """Predicted class = the choice with the highest log-likelihood; (reference, prediction) per metric. Beside it,
    ``acc_norm``: the choice with the highest log-likelihood per character of its name (lm-eval's ``acc_norm``), as
    the class names differ in length and a raw log-likelihood leans to the shortest."""
    choices = conflict_type_choices(doc)
    pair = (doc["conflict_type"], max(range(len(results)), key=lambda i: results[i][0]))
    per_char = max(range(len(results)), key=lambda i: results[i][0] / len(choices[i]))
    return {"acc": float(pair[0] == pair[1]), "acc_norm": float(doc["conflict_type"] == per_char),
            "macro_f1": pair, "ctx_f1": pair, "ctx_n": pair}


def axes_results(doc: dict[str, Any], results: list[str]) -> dict[str, Any]:
    pair = (doc["divergence_axes"], parse_axes(results[0]))
    return {"micro_f1": pair, "macro_f1": pair, "exact_match": pair}


def confounder_results(doc: dict[str, Any], results: list[str]) -> dict[str, Any]:
    return {"accuracy": (doc["dominant_confounder"], parse_confounder(results[0]))}


def _aggregation(field: str, key: str) -> Callable[[list[tuple[Any, Any]]], float | None]:
    """An lm-eval aggregation: ``key`` of the metric on the (reference, prediction) items of one field; None (JSON
    null, with the metric's warning) where the metric says undefined, e.g. Ctx-F1 when neither the references nor
    the answers hold a contextual contradiction (``ctx_n`` = 0), never 1."""

    def aggregate(items: list[tuple[Any, Any]]) -> float:
        return scoring.compute([{field: p} for _, p in items], [{field: r} for r, _ in items])[key]

    return aggregate


conflict_type_macro_f1 = _aggregation("conflict_type", "conflict_type/macro_f1")
conflict_type_ctx_f1 = _aggregation("conflict_type", "conflict_type/ctx_f1")
conflict_type_ctx_n = _aggregation("conflict_type", f"conflict_type/support/{scoring.CONTEXTUAL}")
axes_micro_f1 = _aggregation("divergence_axes", "axes/micro_f1")
axes_macro_f1 = _aggregation("divergence_axes", "axes/macro_f1")
axes_exact_match = _aggregation("divergence_axes", "axes/exact_match")
confounder_accuracy = _aggregation("dominant_confounder", "confounder/accuracy")
