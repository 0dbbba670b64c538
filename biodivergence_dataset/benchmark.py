"""Hub benchmark registration: the release's ``eval.yaml`` and what a model repo reports, generated from ``tasks.yaml``.

The Hub shows a leaderboard for a dataset repo with an ``eval.yaml`` at its root (name, description,
evaluation_framework and ``tasks[]`` of ``id`` / ``config`` / ``split``; huggingface.co/docs/hub/eval-results).
Each Hub task is one leaderboard of one number, so every headline metric of every task of ``tasks.yaml`` (the
key metrics the reference model ranks above the trivial floors) becomes one Hub task whose ``id`` is the metric
key the companion metric returns (``conflict_type/ctx_f1``), scored on the test split of the default config. A
model repo reports a score as an entry of ``.eval_results/*.yaml`` naming this dataset and that ``task_id``. A
headline metric whose test support (the rows its ``support`` rule in ``tasks.yaml`` counts) is below the card's
minimum is left off: a leaderboard of a number that rests on a handful of examples ranks noise. With no metric
left, no ``eval.yaml`` is written.

Every key metric, ranked or not, is shown on the card beside the release's trivial floors (``floors.json``,
measured on the same split by ``biodivergence floors``: majority, constant template, stratified random), every
headline in ``eval.yaml``'s description too, and macro-F1 is scored over the
classes of the release's train split (:func:`train_classes`), so a system that predicts one class is not averaged
over the two a test split happens to hold. Which metrics are headlines stays data (``tasks.yaml``); the rule that
decides it (:func:`headline_verdicts`: the reference model must beat the best floor by ``headline_margin``) is
applied from counts by a test over the measured demo floors and reference run, so a card rendered without a model
stays correct.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow.parquet as pq
import yaml

from . import ontology
from .features import decode_row
from .io import write_text_atomic
from .release import EVAL_FILE, FLOORS_FILE, split_files
from .tasks import SupportRule, TaskSpec, headline_margin, load_tasks

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
class KeyMetric:
    """One key metric of one BioDivergence task; a headline (``ranked``) one is a Hub task of ``eval.yaml``."""

    task: TaskSpec
    metric: str

    @property
    def id(self) -> str:
        return f"{self.task.name}/{self.metric}"

    @property
    def ranked(self) -> bool:
        """On the leaderboard when its support allows: a headline of ``tasks.yaml``."""
        return self.metric in self.task.headline

    @property
    def rule(self) -> SupportRule:
        return self.task.support_rule(self.metric)


@dataclass(frozen=True)
class Support:
    """A key metric with its support on the release's test split: whether that is enough for a score of its own,
    and whether it is listed on the leaderboard (a headline with enough support)."""

    board: KeyMetric
    n: int
    min_support: int

    @property
    def enough(self) -> bool:
        return self.n >= self.min_support

    @property
    def listed(self) -> bool:
        return self.board.ranked and self.enough


def key_metrics() -> list[KeyMetric]:
    """Every key metric of every task of ``tasks.yaml``, in task order."""
    return [KeyMetric(t, m) for t in load_tasks() for m in t.key_metrics]


def leaderboards() -> list[KeyMetric]:
    """The headline metrics (the ranked key metrics), in task order."""
    return [k for k in key_metrics() if k.ranked]


def split_rows(release_dir: str | Path, split: str, config: str = ontology.DEFAULT_CONFIG) -> list[dict[str, Any]]:
    """The decoded rows of one split of a config (empty when the release lacks it)."""
    return [decode_row(row) for path in split_files(release_dir, config, split)
            for row in pq.read_table(path).to_pylist()]


def test_rows(release_dir: str | Path) -> list[dict[str, Any]]:
    """The decoded rows of the scored split (the default config's test; empty when the release lacks it)."""
    return split_rows(release_dir, TEST_SPLIT)


def _column(release_dir: str | Path, split: str, name: str, config: str = ontology.DEFAULT_CONFIG) -> list[Any]:
    """One stored column of a split of a config (ClassLabel ids as stored)."""
    return [v for path in split_files(release_dir, config, split)
            for v in pq.read_table(path, columns=[name]).column(0).to_pylist()]


def classes_present(conflict_types: Iterable[int | str]) -> list[str]:
    """The conflict types among ``conflict_types`` (class indices or names), in ontology order."""
    present = {ontology.CONFLICT_TYPE_NAMES[c] if isinstance(c, int) else c for c in conflict_types}
    return [name for name in ontology.CONFLICT_TYPE_NAMES if name in present]


def train_classes(release_dir: str | Path, config: str = ontology.DEFAULT_CONFIG) -> list[str]:
    """The conflict types of a config's train split, in ontology order: the classes macro-F1 averages over (a
    model is trained on them; a test split that lacks one cannot show the model finds it)."""
    return classes_present(_column(release_dir, ontology.SPLITS[0], "conflict_type", config))


def read_floors(release_dir: str | Path) -> dict[str, Any]:
    """The release's measured floors (``floors.json``: ``systems`` -> ``{description, scores}`` and ``best`` ->
    ``{metric key: {system, score}}``); empty when they were not measured."""
    path = Path(release_dir) / FLOORS_FILE
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


@dataclass(frozen=True)
class Verdict:
    """One key metric under the headline rule: its best trivial floor, the reference model's score, and
    whether the reference beats the floor by more than the margin (no reference score: it does not)."""

    id: str
    floor_system: str | None
    floor: float | None
    reference: float | None
    margin: float

    @property
    def headline(self) -> bool:
        return self.reference is not None and self.floor is not None and self.reference - self.floor > self.margin


def headline_verdicts(floors: dict[str, Any], reference: dict[str, float | None]) -> list[Verdict]:
    """Every key metric of ``tasks.yaml`` judged from counts (``headline``: it deserves a rank): ``floors`` as
    :func:`read_floors` gives them, ``reference`` the reference model's score per metric key (None or absent: not
    scored)."""
    best = floors.get("best", {})
    return [Verdict(b.id, best.get(b.id, {}).get("system"), best.get(b.id, {}).get("score"), reference.get(b.id),
                    headline_margin()) for b in key_metrics()]


@dataclass(frozen=True)
class SplitLimits:
    """What one split can show: its rows, conflicts (rows not ``no_conflict``), the questions those conflicts
    come from, and the largest share of them one claim takes part in."""

    split: str
    rows: int
    conflicts: int
    questions: dict[str, int]
    top_claim: str | None
    top_claim_conflicts: int

    @property
    def top_claim_share(self) -> float:
        return self.top_claim_conflicts / self.conflicts if self.conflicts else 0.0


def split_limits(release_dir: str | Path) -> list[SplitLimits]:
    """Per core split of the default config, counted from its rows (conflicts per question, largest claim share)."""
    out = []
    for split in ontology.SPLITS:
        types, questions = _column(release_dir, split, "conflict_type"), _column(release_dir, split, "question_id")
        claims = zip(_column(release_dir, split, "claim_a_id"), _column(release_dir, split, "claim_b_id"))
        conflict = [ontology.CONFLICT_TYPE_NAMES[t] != ontology.NO_CONFLICT for t in types]
        by_question = Counter(q for q, c in zip(questions, conflict) if c and q)
        by_claim = Counter(claim for pair, c in zip(claims, conflict) if c for claim in set(pair))
        # ties broken by claim id, not by set order (which string hashing randomises per process): the card
        # rendered again must read the same
        top = min(by_claim.items(), key=lambda item: (-item[1], item[0]), default=None)
        out.append(SplitLimits(split, len(types), sum(conflict), dict(by_question.most_common()),
                               top[0] if top else None, top[1] if top else 0))
    return out


def supports(release_dir: str | Path, min_support: int, rows: list[dict[str, Any]] | None = None) -> list[Support]:
    """Every key metric with its test support (``rows``: the test rows when already read)."""
    rows = test_rows(release_dir) if rows is None else rows
    return [Support(b, b.rule.support(rows), min_support) for b in key_metrics()]


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


def floor_line(board_id: str, floors: dict[str, Any]) -> str:
    """A leaderboard's trivial floors in one line (``majority 0.195, constant template 0.091, ...``)."""
    systems = floors.get("systems", {})
    shown = [f"{name.replace('_', ' ')} {_fixed(s['scores'].get(board_id))}" for name, s in systems.items()]
    return ", ".join(shown)


def _fixed(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def eval_yaml(meta: CardMeta, supported: list[Support], floors: dict[str, Any] | None = None,
              classes: list[str] | None = None) -> dict[str, Any]:
    """The content of ``eval.yaml`` (the Hub's benchmark format): the listed leaderboards of ``supported``; the
    description names the classes macro-F1 averages over and each leaderboard's trivial floors."""
    boards = [s.board for s in supported if s.listed]
    version = load_tasks()[0].version
    floors = floors or {}
    description = (
        f"{meta.summary} Each task is one headline metric of the {len(load_tasks())} BioDivergence tasks "
        f"(tasks.yaml {version}) on the {TEST_SPLIT} split of the {ontology.DEFAULT_CONFIG} config, as the "
        f"companion metric evaluate.load(\"{meta.metric_id}\") reports it under the task id; higher is better. "
        f"Headline metrics with fewer than {meta.min_support} test examples are not listed."
    )
    if classes:
        description += (f" Macro-F1 averages over the {len(classes)} classes of the train split "
                        f"(compute(..., classes={classes})).")
    if floors:
        description += (f" Trivial floors on this split (n {floors.get('n')}; a score is worth its margin over "
                        "them): " + "; ".join(f"{b.id}: {floor_line(b.id, floors)}" for b in boards) + ".")
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
    content = eval_yaml(meta, supported, read_floors(release_dir), train_classes(release_dir))
    return write_text_atomic(path, yaml.safe_dump(content, sort_keys=False, allow_unicode=True, width=100))


def eval_results_example(meta: CardMeta, supported: list[Support]) -> str:
    """A model repo's ``.eval_results/`` file reporting every listed leaderboard (values to be replaced)."""
    lines = []
    for b in (s.board for s in supported if s.listed):
        lines += ["- dataset:", f"    id: {meta.repo_id}", f"    task_id: {b.id}",
                  f'  value: 0.0  # scores["{b.id}"]']
    return "\n".join(lines)


def card_context(meta: CardMeta, supported: list[Support], floors: dict[str, Any] | None = None,
                 classes: list[str] | None = None) -> dict[str, Any]:
    """What the card's "Evaluate a model" section shows: every key metric with its support, floors and whether it
    is ranked, the floor systems, the headline rule's margin and the classes macro-F1 averages over."""
    lm_tasks = lm_eval_tasks()
    floors = floors or {}
    return {
        "floors": floors,
        "floors_file": FLOORS_FILE,
        "floor_lines": {s.board.id: floor_line(s.board.id, floors) for s in supported},
        "headline_margin": headline_margin(),
        "classes": classes or [],
        "eval_file": EVAL_FILE,
        "framework": EVALUATION_FRAMEWORK,
        "min_support": meta.min_support,
        "key_metrics": [{"id": s.board.id, "number": s.board.task.number, "title": s.board.task.title,
                          "metric": s.board.metric, "lm_eval_task": lm_tasks.get(s.board.task.name, ""),
                          "n": s.n, "counts": s.board.rule.describe(), "ranked": s.board.ranked,
                          "enough": s.enough, "listed": s.listed} for s in supported],
        "listed": [s.board.id for s in supported if s.listed],
        "lm_eval_include": LM_EVAL_INCLUDE,
        "lm_eval_groups": [lm_eval_group(c) for c in ontology.CONFIGS if lm_eval_tasks(c)],
        "lm_eval_numbers": [t.number for t in load_tasks() if t.name in lm_tasks],
        "test_split": TEST_SPLIT,
        "results_file": RESULTS_FILE,
        "results_example": eval_results_example(meta, supported),
    }
