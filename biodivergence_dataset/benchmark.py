"""Hub benchmark registration: the release's ``eval.yaml`` and what a model repo reports, generated from ``tasks.yaml``.

The Hub shows a leaderboard for a dataset repo with an ``eval.yaml`` at its root (name, description,
evaluation_framework and ``tasks[]`` of ``id`` / ``config`` / ``split``; huggingface.co/docs/hub/eval-results).
Each Hub task is one leaderboard of one number, so every headline metric of every task of ``tasks.yaml``
becomes one Hub task whose ``id`` is the metric key the companion metric returns (``conflict_type/macro_f1``),
scored on the test split of the default config. A model repo reports a score as an entry of
``.eval_results/*.yaml`` naming this dataset and that ``task_id``. A headline metric whose test support (the
rows its ``support`` rule in ``tasks.yaml`` counts) is below the card's minimum is left off: a leaderboard of a
number that rests on a handful of examples ranks noise. With no metric left, no ``eval.yaml`` is written.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow.parquet as pq
import yaml

from . import ontology
from .features import decode_row
from .io import write_text_atomic
from .release import EVAL_FILE, split_files
from .tasks import SupportRule, TaskSpec, load_tasks

if TYPE_CHECKING:
    from .cardmeta import CardMeta

#: The harness that runs the tasks (``metrics/lm_eval``). The Hub accepts the identifiers listed in
#: huggingface.js ``packages/tasks/src/eval.ts``; one not (yet) listed there is flagged on the dataset page
#: until a pull request adds it, as the eval-results docs describe.
EVALUATION_FRAMEWORK = "lm-evaluation-harness"
#: ``lm_eval --include_path``: the task group's folder, relative to a checkout of this repository.
LM_EVAL_INCLUDE = "metrics/lm_eval"
LM_EVAL_PREFIX = "biodivergence"
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

    @property
    def rule(self) -> SupportRule:
        return self.task.support_rule(self.metric)


@dataclass(frozen=True)
class Support:
    """A leaderboard with its support on the release's test split, and whether that is enough to list it."""

    board: Leaderboard
    n: int
    min_support: int

    @property
    def listed(self) -> bool:
        return self.n >= self.min_support


def leaderboards() -> list[Leaderboard]:
    """Every headline metric of every task of ``tasks.yaml``, in task order."""
    return [Leaderboard(t, m) for t in load_tasks() for m in t.headline]


def test_rows(release_dir: str | Path) -> list[dict[str, Any]]:
    """The decoded rows of the scored split (the default config's test; empty when the release lacks it)."""
    return [decode_row(row) for path in split_files(release_dir, ontology.DEFAULT_CONFIG, TEST_SPLIT)
            for row in pq.read_table(path).to_pylist()]


def supports(release_dir: str | Path, min_support: int, rows: list[dict[str, Any]] | None = None) -> list[Support]:
    """Every leaderboard with its test support (``rows``: the test rows when already read)."""
    rows = test_rows(release_dir) if rows is None else rows
    return [Support(b, b.rule.support(rows), min_support) for b in leaderboards()]


def lm_eval_group(config: str) -> str:
    """The lm-eval group of a config: ``biodivergence`` for the default config, ``biodivergence_CONFIG`` else."""
    return LM_EVAL_PREFIX if config == ontology.DEFAULT_CONFIG else f"{LM_EVAL_PREFIX}_{config}"


def lm_eval_task(task_name: str, config: str = ontology.DEFAULT_CONFIG) -> str:
    """The lm-eval task of a BioDivergence task on a config (``biodivergence_axes_pairlevel``)."""
    return f"{LM_EVAL_PREFIX}_{task_name}" + ("" if config == ontology.DEFAULT_CONFIG else f"_{config}")


def lm_eval_tasks(config: str = ontology.DEFAULT_CONFIG) -> dict[str, str]:
    """``{tasks.yaml name: lm-eval task}`` for the tasks ``tasks.yaml`` gives a harness form (``lm_eval: true``),
    on ``config`` (the harness's group files in ``metrics/lm_eval`` declare the same; a test keeps them equal)."""
    return {t.name: lm_eval_task(t.name, config) for t in load_tasks() if t.lm_eval}


def eval_yaml(meta: CardMeta, supported: list[Support]) -> dict[str, Any]:
    """The content of ``eval.yaml`` (the Hub's benchmark format): the listed leaderboards of ``supported``."""
    boards = [s.board for s in supported if s.listed]
    version = load_tasks()[0].version
    description = (
        f"{meta.summary} Each task is one headline metric of the {len(load_tasks())} BioDivergence tasks "
        f"(tasks.yaml {version}) on the {TEST_SPLIT} split of the {ontology.DEFAULT_CONFIG} config, as the "
        f"companion metric evaluate.load(\"{meta.metric_id}\") reports it under the task id; higher is better. "
        f"Headline metrics with fewer than {meta.min_support} test examples are not listed."
    )
    return {
        "name": meta.pretty_name,
        "description": description,
        "evaluation_framework": EVALUATION_FRAMEWORK,
        "tasks": [{"id": b.id, "config": ontology.DEFAULT_CONFIG, "split": TEST_SPLIT} for b in boards],
    }


def write_eval_yaml(release_dir: str | Path, meta: CardMeta, supported: list[Support]) -> Path | None:
    """Write ``eval.yaml``; with no leaderboard listed, remove it instead (the Hub needs at least one task)."""
    path = Path(release_dir) / EVAL_FILE
    if not any(s.listed for s in supported):
        path.unlink(missing_ok=True)
        return None
    return write_text_atomic(path, yaml.safe_dump(eval_yaml(meta, supported), sort_keys=False,
                                                  allow_unicode=True, width=100))


def eval_results_example(meta: CardMeta, supported: list[Support]) -> str:
    """A model repo's ``.eval_results/`` file reporting every listed leaderboard (values to be replaced)."""
    lines = []
    for b in (s.board for s in supported if s.listed):
        lines += ["- dataset:", f"    id: {meta.repo_id}", f"    task_id: {b.id}",
                  f'  value: 0.0  # scores["{b.id}"]']
    return "\n".join(lines)


def card_context(meta: CardMeta, supported: list[Support]) -> dict[str, Any]:
    """What the card's "Evaluate a model" section shows: every headline metric with its support."""
    lm_tasks = lm_eval_tasks()
    return {
        "eval_file": EVAL_FILE,
        "framework": EVALUATION_FRAMEWORK,
        "min_support": meta.min_support,
        "leaderboards": [{"id": s.board.id, "number": s.board.task.number, "title": s.board.task.title,
                          "metric": s.board.metric, "lm_eval_task": lm_tasks.get(s.board.task.name, ""),
                          "n": s.n, "counts": s.board.rule.describe(), "listed": s.listed} for s in supported],
        "listed": [s.board.id for s in supported if s.listed],
        "lm_eval_include": LM_EVAL_INCLUDE,
        "lm_eval_groups": [lm_eval_group(c) for c in ontology.CONFIGS if lm_eval_tasks(c)],
        "lm_eval_numbers": [t.number for t in load_tasks() if t.name in lm_tasks],
        "test_split": TEST_SPLIT,
        "results_file": RESULTS_FILE,
        "results_example": eval_results_example(meta, supported),
    }
