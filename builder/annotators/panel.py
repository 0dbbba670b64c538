"""Several annotators at once, and the consensus that becomes the release label.

The consensus is a documented rule of our own rather than cleanlab's multi-annotator label quality:
cleanlab's ``get_label_quality_multiannotator`` needs a model's out-of-sample class probabilities
for every pair, which the build does not have (the annotators *are* the models), and it gives no
rule for which member's axes, spans and reconciliation go with the chosen class.

The rule: each member votes for *conflict* or *no conflict* with weight ``weight × confidence``;
the side with the larger total wins (ties go to *no conflict*: a conflict must be shown). The
release row takes its labels from the heaviest member on the winning side that gives a conflict
type; the label quality is the winning side's share of the total weight (1.0 when all agree).
Every member's label is kept in ``Example.annotator_labels``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from biodivergence_dataset import ontology
from biodivergence_dataset.records import AnnotatorLabel

from ..repair import Labels

#: Default vote weight per annotator kind (a config may override them per spec).
DEFAULT_WEIGHTS: dict[str, float] = {"llm": 1.0, "judge": 1.0, "frames": 1.0, "heuristic": 0.5, "reader": 1.0}
assert set(DEFAULT_WEIGHTS) == set(ontology.ANNOTATOR_KINDS)


@dataclass(frozen=True)
class Vote:
    """One member's labels for a pair."""

    annotator_id: str
    kind: str
    labels: Labels
    weight: float = 1.0

    @property
    def conflict(self) -> bool:
        return self.labels.conflict_type != ontology.NO_CONFLICT

    @property
    def strength(self) -> float:
        return self.weight * max(self.labels.confidence, 1e-3)


@dataclass(frozen=True)
class Consensus:
    """The release label of one pair and where it came from."""

    labels: Labels
    annotator_id: str
    kind: str
    quality: float
    members: list[AnnotatorLabel]

    @property
    def unanimous(self) -> bool:
        return len({m.conflict_type != ontology.NO_CONFLICT for m in self.members}) == 1


def consensus(votes: Sequence[Vote]) -> Consensus:
    """The weighted conflict / no-conflict vote (see the module docstring)."""
    if not votes:
        raise ValueError("a consensus needs at least one vote")
    for_conflict = sum(v.strength for v in votes if v.conflict)
    against = sum(v.strength for v in votes if not v.conflict)
    conflict = for_conflict > against
    winners = sorted((v for v in votes if v.conflict == conflict), key=lambda v: -v.strength)
    chosen = winners[0]
    total = for_conflict + against
    quality = round((for_conflict if conflict else against) / total, 4) if total else 1.0
    members = [AnnotatorLabel(annotator_id=v.annotator_id, conflict_type=v.labels.conflict_type,
                              confidence=round(v.labels.confidence, 4)) for v in votes]
    return Consensus(chosen.labels, chosen.annotator_id, chosen.kind, quality, members)


def disagree(votes: Sequence[Vote]) -> bool:
    """True when the members do not all agree on conflict vs no conflict."""
    return len({v.conflict for v in votes}) > 1


def panel_agreement(examples) -> dict[str, dict[str, float]]:
    """Per member: pairs labelled, raw conflict/no-conflict agreement and Cohen's κ with the release label
    (from ``Example.annotator_labels``; empty for single-annotator releases)."""
    from ..agreement import cohen_kappa

    by_member: dict[str, tuple[list[bool], list[bool]]] = {}
    for ex in examples:
        final = ex.conflict_type != ontology.NO_CONFLICT
        for m in ex.annotator_labels:
            mine, release = by_member.setdefault(m.annotator_id, ([], []))
            mine.append(m.conflict_type != ontology.NO_CONFLICT)
            release.append(final)
    return {name: {"pairs": len(mine), "agreement": round(sum(a == b for a, b in zip(mine, rel)) / len(mine), 4),
                   "kappa": round(cohen_kappa(rel, mine), 4)} for name, (mine, rel) in sorted(by_member.items())}
