"""The five tasks, loaded from ``tasks.yaml`` (declared once, read by the card, metric docs and reports)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from . import ontology

TASKS_FILE = Path(__file__).with_name("tasks.yaml")
#: ``labels: evaluable`` in a support rule: the ontology's evaluable conflict classes.
EVALUABLE = "evaluable"


def label_counts(rows: Iterable[Mapping[str, Any]], field: str, labels: Iterable[str]) -> dict[str, int]:
    """Rows carrying each label in ``field`` (a class name, or a list of names such as ``divergence_axes``)."""
    values = [row[field] for row in rows]
    return {label: sum(1 for v in values if (label in v if isinstance(v, list) else v == label)) for label in labels}


@dataclass(frozen=True)
class SupportRule:
    """Which test rows a key metric rests on: rows whose reference carries ``field`` and, with ``labels``,
    the rows of each label (a metric over several labels rests on the rarest)."""

    metric: str
    field: str
    labels: tuple[str, ...] = ()

    def counts(self, rows: Iterable[Mapping[str, Any]]) -> dict[str, int]:
        """Rows per label (``{field: rows carrying it}`` without labels) over decoded release rows."""
        if not self.labels:
            return {self.field: sum(1 for row in rows if row[self.field] not in (None, "", []))}
        return label_counts(rows, self.field, self.labels)

    def support(self, rows: Iterable[Mapping[str, Any]]) -> int:
        return min(self.counts(rows).values())

    def describe(self) -> str:
        """What the support counts, for the card (``rows with contextual_contradiction``)."""
        if not self.labels:
            return f"rows with a non-empty {self.field}"
        return f"rows of {self.labels[0]}" if len(self.labels) == 1 else f"rows of the rarest of {', '.join(self.labels)}"


@dataclass(frozen=True)
class TaskSpec:
    name: str
    number: int
    title: str
    description: str
    input_fields: tuple[str, ...]
    target_fields: tuple[str, ...]
    metrics: tuple[str, ...]
    #: The metrics the task is reported by: bootstrap intervals, support and floors on the card.
    key_metrics: tuple[str, ...]
    #: The key metrics ranked on the leaderboard (those the reference model beats its floors on by the margin).
    headline: tuple[str, ...]
    higher_is_better: bool
    scope: str
    version: str
    support: tuple[SupportRule, ...] = ()
    #: The task has an lm-evaluation-harness form (``metrics/lm_eval``).
    lm_eval: bool = False

    def metric_keys(self) -> list[str]:
        """The flat metric keys this task reports, e.g. ``conflict_type/macro_f1``."""
        return [f"{self.name}/{m}" for m in self.metrics]

    def key_metric_keys(self) -> list[str]:
        return [f"{self.name}/{m}" for m in self.key_metrics]

    def headline_keys(self) -> list[str]:
        return [f"{self.name}/{m}" for m in self.headline]

    def support_rule(self, metric: str) -> SupportRule:
        return next(rule for rule in self.support if rule.metric == metric)


def support_rules(raw: dict[str, Any]) -> tuple[SupportRule, ...]:
    """The task's support rules, one per key metric, checked against its targets and the ontology."""
    where = f"{TASKS_FILE}: task {raw['name']!r}"
    declared = raw.get("support") or {}
    if set(declared) != set(raw["key_metrics"]):
        raise ValueError(f"{where}: support must name exactly the key metrics {raw['key_metrics']}, "
                         f"got {sorted(declared)}")
    rules = []
    for metric in raw["key_metrics"]:
        spec = declared[metric]
        if spec.get("field") not in raw["target_fields"]:
            raise ValueError(f"{where}: support of {metric!r} names field {spec.get('field')!r}, "
                             f"not one of its targets {raw['target_fields']}")
        labels = spec.get("labels") or ()
        labels = ontology.EVALUABLE_CLASSES if labels == EVALUABLE else tuple(labels)
        vocabulary = ontology.VOCABULARIES.get(spec["field"], ())
        unknown = [label for label in labels if label not in vocabulary]
        if unknown:
            raise ValueError(f"{where}: support of {metric!r} names unknown {spec['field']} labels {unknown}")
        rules.append(SupportRule(metric, spec["field"], labels))
    return tuple(rules)


def headline_metrics(raw: dict[str, Any]) -> tuple[str, ...]:
    """The task's headline metrics, each one of its key metrics (a ranked metric must be reported with its
    support and floors)."""
    outside = [m for m in raw["headline"] if m not in raw["key_metrics"]]
    if outside:
        raise ValueError(f"{TASKS_FILE}: task {raw['name']!r}: headline metrics {outside} are not among its "
                         f"key_metrics {raw['key_metrics']}")
    return tuple(raw["headline"])


@lru_cache(maxsize=1)
def load_tasks() -> tuple[TaskSpec, ...]:
    data = yaml.safe_load(TASKS_FILE.read_text(encoding="utf-8"))
    version = str(data["version"])
    specs = []
    for raw in data["tasks"]:
        specs.append(
            TaskSpec(
                name=raw["name"],
                number=int(raw["number"]),
                title=raw["title"],
                description=raw["description"],
                input_fields=tuple(raw["input_fields"]),
                target_fields=tuple(raw["target_fields"]),
                metrics=tuple(raw["metrics"]),
                key_metrics=tuple(raw["key_metrics"]),
                headline=headline_metrics(raw),
                higher_is_better=bool(raw["higher_is_better"]),
                scope=raw["scope"],
                version=version,
                support=support_rules(raw),
                lm_eval=bool(raw.get("lm_eval", False)),
            )
        )
    return tuple(specs)


@lru_cache(maxsize=1)
def headline_margin() -> float:
    """How far above its best trivial floor the reference model must score for a metric to be a headline
    (``headline_margin`` of ``tasks.yaml``)."""
    return float(yaml.safe_load(TASKS_FILE.read_text(encoding="utf-8"))["headline_margin"])


def task(name: str) -> TaskSpec:
    for spec in load_tasks():
        if spec.name == name:
            return spec
    raise KeyError(f"unknown task {name!r}; expected one of {[t.name for t in load_tasks()]}")
