"""What every analysis shares: the release as decoded rows, the predictor protocol and scoring through the metric."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from biodivergence_dataset import ontology
from biodivergence_dataset.release import ANNOTATION_MANIFEST

from ..metric import score
from ..predict import reference_record

Row = Mapping[str, Any]
#: The release column that names a row's clinical question ("" for none).
QUESTION = "question_id"
Record = dict[str, Any]


class Predictor(Protocol):
    """Anything that labels decoded release rows: one record per row with ``pair_id``, ``conflict_type``,
    ``divergence_axes``, ``dominant_confounder`` and, where known, ``confidence`` (of the conflict type)."""

    name: str
    #: False for a predictions file: it cannot label edited pairs it has never seen.
    labels_new_pairs: bool

    def predict(self, rows: Sequence[Row]) -> list[Record]: ...


@dataclass
class Release:
    """A release read for analysis: decoded rows of each split, the evaluated split and the annotation manifest."""

    path: Path
    config: str
    split: str
    splits: dict[str, list[Row]]
    annotation_manifest: dict[str, Any] = field(default_factory=dict)

    @property
    def rows(self) -> list[Row]:
        """The evaluated split."""
        return self.splits[self.split]

    @property
    def train(self) -> list[Row]:
        return self.splits.get("train", [])


def load(release_dir: str | Path, config: str = ontology.DEFAULT_CONFIG, split: str = "test") -> Release:
    """Read a release folder through ``load_dataset`` (as users do) into decoded rows per split."""
    from ..data import decoded_rows, load_splits

    path = Path(release_dir)
    datasets = load_splits(path, config)
    if split not in datasets:
        raise ValueError(f"split {split!r} is not in {path} ({config}); it has {list(datasets)}")
    manifest = path / ANNOTATION_MANIFEST
    return Release(path, config, split, {name: decoded_rows(ds) for name, ds in datasets.items()},
                   json.loads(manifest.read_text(encoding="utf-8")) if manifest.exists() else {})


def rate(hits: Sequence[bool]) -> float | None:
    """Share of True values, None for an empty sequence."""
    return sum(hits) / len(hits) if hits else None


def conflict_scores(predictions: Sequence[Record], rows: Sequence[Row]) -> dict[str, float | None]:
    """Task-1 accuracy, macro-F1 and Ctx-F1 of conflict-type predictions, by the BioDivergence metric
    (None where the metric says undefined, e.g. Ctx-F1 of rows and predictions without that class)."""
    if not rows:
        return {}
    scores = score([{"conflict_type": p["conflict_type"]} for p in predictions],
                   [{"conflict_type": r["conflict_type"]} for r in rows])
    return {k: scores[f"conflict_type/{k}"] for k in ("accuracy", "macro_f1", "ctx_f1")}


def _scored(predictions: Sequence[Record], rows: Sequence[Row]) -> dict[str, Any]:
    """The metric's result for the tasks the predictions carry (conflict type, axes, confounder), the references
    carrying their row's question (so the result holds ``per_question``)."""
    fields = [f for f in ("conflict_type", "divergence_axes", "dominant_confounder") if f in predictions[0]]
    refs = [{**{f: reference_record(r)[f] for f in fields}, QUESTION: r.get(QUESTION) or ""} for r in rows]
    return score([{f: p[f] for f in fields} for p in predictions], refs)


def task_scores(predictions: Sequence[Record], rows: Sequence[Row]) -> dict[str, float | None]:
    """Every scalar metric score of the tasks the predictions carry (conflict type, axes, confounder); None
    where the metric says undefined."""
    scores = _scored(predictions, rows)
    return {k: v if v is None else float(v) for k, v in scores.items() if v is None or isinstance(v, (int, float))}


def question_scores(predictions: Sequence[Record], rows: Sequence[Row]) -> dict[str, dict[str, Any]]:
    """The metric's Tasks 1-3 scores per clinical question (``{question_id: {key: score}}``, each task with its n);
    empty when no row carries a question."""
    return _scored(predictions, rows).get("per_question", {})
