"""Analysis 2, counterfactual context for contextual contradictions.

* identical contexts (``edits.same_context``): with the explaining context removed, the pair should be a
  direct contradiction — consistency per axis that was made identical;
* a new axis (``edits.add_context``): with a difference added on an axis the pair does not yet carry, the
  axes head should include that axis — consistency per added axis.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from biodivergence_dataset import ontology

from . import edits
from .analysis_release import Predictor, Release, rate
from .perturbation import DEFAULT_MAX_PAIRS, sample


@dataclass
class AxisConsistency:
    axis: str
    #: contextual pairs whose context on this axis was made identical, and the share then predicted direct
    identical_n: int = 0
    identical_consistency: float | None = None
    #: contextual pairs given a new difference on this axis, and the share whose predicted axes include it
    new_axis_n: int = 0
    new_axis_consistency: float | None = None


@dataclass
class CounterfactualResult:
    predictor: str
    contextual_pairs: int
    identical_n: int
    identical_consistency: float | None
    new_axis_n: int
    new_axis_consistency: float | None
    per_axis: list[AxisConsistency] = field(default_factory=list)


def analyze(release: Release, predictor: Predictor, max_pairs: int = DEFAULT_MAX_PAIRS, seed: int = 0) -> CounterfactualResult:
    """Edit the evaluated split's contextual contradictions both ways and predict all edits in one call."""
    contextual = sample([r for r in release.rows if r["conflict_type"] == ontology.CONTEXTUAL], max_pairs, seed)
    identical = []  # (edited row, axes made identical)
    for row in contextual:
        edited = edits.same_context(row)
        if edited is not None and edited["conflict_type"] == edits.DIRECT:
            identical.append((edited, edits.differing_axes(row)))
    added = [(e, axis) for row in contextual for axis in ontology.AXIS_NAMES
             if (e := edits.add_context(row, axis)) is not None]
    edited_rows = [e for e, _ in identical] + [e for e, _ in added]
    predicted = predictor.predict(edited_rows) if edited_rows else []
    direct = [p["conflict_type"] == edits.DIRECT for p in predicted[:len(identical)]]
    followed = [axis in p.get("divergence_axes", []) for p, (_, axis) in zip(predicted[len(identical):], added)]
    per_axis = []
    for axis in ontology.AXIS_NAMES:
        same = [ok for ok, (_, axes) in zip(direct, identical) if axis in axes]
        new = [ok for ok, (_, a) in zip(followed, added) if a == axis]
        if same or new:
            per_axis.append(AxisConsistency(axis, len(same), rate(same), len(new), rate(new)))
    return CounterfactualResult(predictor.name, len(contextual), len(identical), rate(direct),
                                len(added), rate(followed), per_axis)
