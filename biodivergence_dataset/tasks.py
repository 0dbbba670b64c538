"""The five tasks, loaded from ``tasks.yaml`` (declared once, read by the card, metric docs and reports)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

TASKS_FILE = Path(__file__).with_name("tasks.yaml")


@dataclass(frozen=True)
class TaskSpec:
    name: str
    number: int
    title: str
    description: str
    input_fields: tuple[str, ...]
    target_fields: tuple[str, ...]
    metrics: tuple[str, ...]
    headline: tuple[str, ...]
    higher_is_better: bool
    scope: str
    version: str

    def metric_keys(self) -> list[str]:
        """The flat metric keys this task reports, e.g. ``conflict_type/macro_f1``."""
        return [f"{self.name}/{m}" for m in self.metrics]

    def headline_keys(self) -> list[str]:
        return [f"{self.name}/{m}" for m in self.headline]


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
                headline=tuple(raw["headline"]),
                higher_is_better=bool(raw["higher_is_better"]),
                scope=raw["scope"],
                version=version,
            )
        )
    return tuple(specs)


def task(name: str) -> TaskSpec:
    for spec in load_tasks():
        if spec.name == name:
            return spec
    raise KeyError(f"unknown task {name!r}; expected one of {[t.name for t in load_tasks()]}")
