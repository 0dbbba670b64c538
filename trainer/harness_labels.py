"""The label file of the lm-evaluation-harness task group (``metrics/lm_eval/biodivergence/labels.yaml``),
generated from the ontology.

The task group imports nothing of ours (it runs as a harness task folder with lm-eval installed, nothing else), so
the class and axis names with their definitions, which its prompts and answer choices hold, are written into the
folder as data. ``python -m trainer.harness_labels`` rewrites the file after an ontology change; a test keeps it
equal to :func:`render`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml

from biodivergence_dataset import ontology
from biodivergence_dataset.features import MISSING_INT
from biodivergence_dataset.io import write_text_atomic

LABELS_FILE = "labels.yaml"
#: The task group's folder in a checkout (the harness's ``--include_path`` is its parent).
TASK_DIR = Path(__file__).resolve().parents[1] / "metrics/lm_eval/biodivergence"
_HEADER = ("# Generated from biodivergence_dataset.ontology by `python -m trainer.harness_labels`; do not edit.\n"
           "# utils.py reads the labels (and their definitions, which the prompts show) from here.\n")


def labels() -> dict[str, Any]:
    """The ontology as the task group needs it: class and axis names in ClassLabel order, with their text, and the
    stored value of a missing integer (a row without a dominant confounder)."""
    return {
        "ontology_version": ontology.ONTOLOGY_VERSION,
        "conflict_types": [{"name": c.name, "definition": c.definition} for c in ontology.CONFLICT_TYPES],
        "axes": [{"name": a.name, "description": a.description} for a in ontology.AXES],
        "missing_int": MISSING_INT,
    }


def render() -> str:
    """The label file's text."""
    return _HEADER + yaml.safe_dump(labels(), sort_keys=False, allow_unicode=True, width=120)


def write(folder: str | Path = TASK_DIR) -> Path:
    """(Re)write the label file of the task group in ``folder``."""
    return write_text_atomic(Path(folder) / LABELS_FILE, render())


if __name__ == "__main__":
    print(f"wrote {write(*sys.argv[1:2])}")
