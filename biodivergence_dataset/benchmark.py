"""Hub benchmark registration: the release's ``eval.yaml`` and what a model repo reports, generated from ``tasks.yaml``.

The Hub shows a leaderboard for a dataset repo with an ``eval.yaml`` at its root (name, description,
evaluation_framework and ``tasks[]`` of ``id`` / ``config`` / ``split``; huggingface.co/docs/hub/eval-results).
Each Hub task is one leaderboard of one number, so every headline metric of every task of ``tasks.yaml``
becomes one Hub task whose ``id`` is the metric key the companion metric returns (``conflict_type/macro_f1``),
scored on the test split of the default config. A model repo reports a score as an entry of
``.eval_results/*.yaml`` naming this dataset and that ``task_id``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from . import ontology
from .io import write_text_atomic
from .tasks import TaskSpec, load_tasks

if TYPE_CHECKING:
    from .card import CardMeta

EVAL_FILE = "eval.yaml"
#: The harness that runs the tasks (``metrics/lm_eval``). The Hub accepts the identifiers listed in
#: huggingface.js ``packages/tasks/src/eval.ts``; one not (yet) listed there is flagged on the dataset page
#: until a pull request adds it, as the eval-results docs describe.
EVALUATION_FRAMEWORK = "lm-evaluation-harness"
#: ``lm_eval --include_path``: the task group's folder, relative to a checkout of this repository.
LM_EVAL_INCLUDE = "metrics/lm_eval"
LM_EVAL_PREFIX = "biodivergence"
_LM_EVAL_DIR = Path(__file__).resolve().parent.parent / LM_EVAL_INCLUDE / LM_EVAL_PREFIX
#: The file name a model repo uses under ``.eval_results/`` in the card's example.
RESULTS_FILE = f".eval_results/{LM_EVAL_PREFIX}.yaml"
_, _, TEST_SPLIT = ontology.SPLITS


@dataclass(frozen=True)
class Leaderboard:
    """One Hub task of ``eval.yaml``: one headline metric of one BioDivergence task."""

    task: TaskSpec
    metric: str

    @property
    def id(self) -> str:
        return f"{self.task.name}/{self.metric}"


def leaderboards() -> list[Leaderboard]:
    """Every headline metric of every task of ``tasks.yaml``, in task order."""
    return [Leaderboard(t, m) for t in load_tasks() for m in t.headline]


def lm_eval_group(config: str) -> str:
    """The lm-eval group of a config: ``biodivergence`` for the default config, ``biodivergence_CONFIG`` else."""
    return LM_EVAL_PREFIX if config == ontology.DEFAULT_CONFIG else f"{LM_EVAL_PREFIX}_{config}"


def lm_eval_task(task_name: str, config: str = ontology.DEFAULT_CONFIG) -> str:
    """The lm-eval task of a BioDivergence task on a config (``biodivergence_axes_pairlevel``)."""
    return f"{LM_EVAL_PREFIX}_{task_name}" + ("" if config == ontology.DEFAULT_CONFIG else f"_{config}")


def lm_eval_tasks(config: str = ontology.DEFAULT_CONFIG) -> dict[str, str]:
    """``{tasks.yaml name: lm-eval task}`` for the tasks the group of ``config`` declares (empty without it)."""
    path = _LM_EVAL_DIR / f"_{lm_eval_group(config)}.yaml"
    declared = set(yaml.safe_load(path.read_text(encoding="utf-8")).get("task", [])) if path.exists() else set()
    return {t.name: lm_eval_task(t.name, config) for t in load_tasks() if lm_eval_task(t.name, config) in declared}


def eval_yaml(meta: CardMeta) -> dict[str, Any]:
    """The content of ``eval.yaml`` (the Hub's benchmark format)."""
    boards = leaderboards()
    version = boards[0].task.version if boards else ""
    description = (
        f"{meta.summary} Each task is one headline metric of the {len(load_tasks())} BioDivergence tasks "
        f"(tasks.yaml {version}) on the {TEST_SPLIT} split of the {ontology.DEFAULT_CONFIG} config, as the "
        f"companion metric evaluate.load(\"{meta.metric_id}\") reports it under the task id; higher is better."
    )
    return {
        "name": meta.pretty_name,
        "description": description,
        "evaluation_framework": EVALUATION_FRAMEWORK,
        "tasks": [{"id": b.id, "config": ontology.DEFAULT_CONFIG, "split": TEST_SPLIT} for b in boards],
    }


def render_eval_yaml(meta: CardMeta) -> str:
    return yaml.safe_dump(eval_yaml(meta), sort_keys=False, allow_unicode=True, width=100)


def write_eval_yaml(release_dir: str | Path, meta: CardMeta) -> Path:
    return write_text_atomic(Path(release_dir) / EVAL_FILE, render_eval_yaml(meta))


def eval_results_example(meta: CardMeta) -> str:
    """A model repo's ``.eval_results/`` file reporting every leaderboard (values to be replaced by scores)."""
    lines = []
    for b in leaderboards():
        lines += ["- dataset:", f"    id: {meta.repo_id}", f"    task_id: {b.id}",
                  f'  value: 0.0  # scores["{b.id}"]']
    return "\n".join(lines)


def card_context(meta: CardMeta) -> dict[str, Any]:
    """What the card's "Evaluate a model" section shows."""
    lm_tasks = lm_eval_tasks()
    return {
        "eval_file": EVAL_FILE,
        "framework": EVALUATION_FRAMEWORK,
        "leaderboards": [{"id": b.id, "number": b.task.number, "title": b.task.title, "metric": b.metric,
                          "lm_eval_task": lm_tasks.get(b.task.name, "")} for b in leaderboards()],
        "lm_eval_include": LM_EVAL_INCLUDE,
        "lm_eval_groups": [lm_eval_group(c) for c in ontology.CONFIGS if lm_eval_tasks(c)],
        "lm_eval_numbers": [t.number for t in load_tasks() if t.name in lm_tasks],
        "test_split": TEST_SPLIT,
        "results_file": RESULTS_FILE,
        "results_example": eval_results_example(meta),
    }
