"""Analysis 4, confidence slices: Task-1 scores of the evaluated split by bins of the annotation confidence
(``confidence``) and of the consensus quality (``label_quality``), so a user sees whether errors sit where
the labels are shaky."""

from __future__ import annotations

from dataclasses import dataclass, field

from .analysis_release import Predictor, Release, conflict_scores

COLUMNS: tuple[str, ...] = ("confidence", "label_quality")
#: upper bin edges (inclusive); a value v falls in the first bin with v <= edge
BIN_EDGES: tuple[float, ...] = (0.5, 0.7, 0.9, 1.0)


@dataclass
class Slice:
    column: str
    bin: str
    n: int
    accuracy: float | None
    macro_f1: float | None
    ctx_f1: float | None


@dataclass
class ConfidenceSlicesResult:
    predictor: str
    #: column -> rows without a value in that column (not sliced)
    missing: dict[str, int] = field(default_factory=dict)
    slices: list[Slice] = field(default_factory=list)


def bin_label(value: float) -> str:
    """The bin of ``value``, e.g. "0.70–0.90" (the lowest bin starts at 0)."""
    lower = 0.0
    for edge in BIN_EDGES:
        if value <= edge:
            return f"{lower:.2f}–{edge:.2f}"
        lower = edge
    raise ValueError(f"value {value} is above 1")


def analyze(release: Release, predictor: Predictor) -> ConfidenceSlicesResult:
    rows = release.rows
    predicted = dict(zip((r["pair_id"] for r in rows), predictor.predict(rows)))
    result = ConfidenceSlicesResult(predictor.name)
    for column in COLUMNS:
        bins: dict[str, list] = {}
        for row in rows:
            if row.get(column) is not None:
                bins.setdefault(bin_label(row[column]), []).append(row)
        result.missing[column] = len(rows) - sum(len(v) for v in bins.values())
        for label in sorted(bins):
            members = bins[label]
            scores = conflict_scores([predicted[r["pair_id"]] for r in members], members)
            result.slices.append(Slice(column, label, len(members), scores.get("accuracy"),
                                       scores.get("macro_f1"), scores.get("ctx_f1")))
    return result
