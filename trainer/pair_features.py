"""Lightweight comparison features of a claim pair (paper §6.1 (ii)).

One float vector per release row, built from the row's own columns and the shared cue
lexicons: semantic similarity and entity overlap, the mining stage's disagreement scores,
negation / hedge / polarity cues of each claim, and metadata (claim-type agreement, year gap,
domain). Claim types also enter the reference model as ids (``claim_type_ids``) for its
type embedding. Every feature belongs to one group so the ablations of paper Table 12
("w/o metadata", "w/o disagreement signals") can switch a whole group off.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from biodivergence_dataset import ontology
from biodivergence_text import cues

COMPARISON = "comparison"
DISAGREEMENT = "disagreement"
METADATA = "metadata"
GROUPS: tuple[str, ...] = (COMPARISON, DISAGREEMENT, METADATA)

_YEAR_SCALE = 10.0  # a ten-year gap is 1.0
_YEAR_CAP = 3.0


def _claims(row: Mapping[str, Any]) -> tuple[str, str]:
    return row["claim_a_text"], row["claim_b_text"]


def _column(name: str) -> Callable[[Mapping[str, Any]], float]:
    return lambda row: float(row.get(name) or 0.0)


def _both(fn: Callable[[str], float], which: int) -> Callable[[Mapping[str, Any]], float]:
    return lambda row: float(fn(_claims(row)[which]))


def _negation_mismatch(row) -> float:
    a, b = _claims(row)
    return float(cues.has_negation(a) != cues.has_negation(b))


def _polarity_mismatch(row) -> float:
    pa, pb = (cues.polarity(t) for t in _claims(row))
    return float(pa != 0 and pb != 0 and pa != pb)


def _direction_opposed(row) -> float:
    return float({cues.direction(t) for t in _claims(row)} == {"increase", "decrease"})


def _null_vs_effect(row) -> float:
    da, db = (cues.direction(t) for t in _claims(row))
    return float({da, db} in ({"null", "increase"}, {"null", "decrease"}))


def _same_claim_type(row) -> float:
    return float(row["claim_a_type"] == row["claim_b_type"])


def _years(row) -> tuple[int | None, int | None]:
    return row.get("pub_year_a"), row.get("pub_year_b")


def _year_gap(row) -> float:
    ya, yb = _years(row)
    if ya is None or yb is None:
        return 0.0
    return min(abs(ya - yb) / _YEAR_SCALE, _YEAR_CAP)


def _year_known(row) -> float:
    return float(None not in _years(row))


def _domain_is(name: str) -> Callable[[Mapping[str, Any]], float]:
    return lambda row: float(row["domain"] == name)


#: name -> (group, function of a decoded release row)
FEATURES: dict[str, tuple[str, Callable[[Mapping[str, Any]], float]]] = {
    "similarity": (COMPARISON, _column("similarity")),
    "entity_overlap": (COMPARISON, _column("entity_overlap")),
    "disagreement": (DISAGREEMENT, _column("disagreement")),
    "combined_score": (DISAGREEMENT, _column("combined_score")),
    "negation_a": (DISAGREEMENT, _both(cues.has_negation, 0)),
    "negation_b": (DISAGREEMENT, _both(cues.has_negation, 1)),
    "negation_mismatch": (DISAGREEMENT, _negation_mismatch),
    "hedge_a": (DISAGREEMENT, _both(cues.has_hedge, 0)),
    "hedge_b": (DISAGREEMENT, _both(cues.has_hedge, 1)),
    "polarity_a": (DISAGREEMENT, _both(cues.polarity, 0)),
    "polarity_b": (DISAGREEMENT, _both(cues.polarity, 1)),
    "polarity_mismatch": (DISAGREEMENT, _polarity_mismatch),
    "direction_opposed": (DISAGREEMENT, _direction_opposed),
    "null_vs_effect": (DISAGREEMENT, _null_vs_effect),
    "type_compatibility": (METADATA, _column("type_compatibility")),
    "year_penalty": (METADATA, _column("year_penalty")),
    "same_claim_type": (METADATA, _same_claim_type),
    "year_gap": (METADATA, _year_gap),
    "year_known": (METADATA, _year_known),
    **{f"domain_{d}": (METADATA, _domain_is(d)) for d in ontology.DOMAIN_NAMES},
}
FEATURE_NAMES: tuple[str, ...] = tuple(FEATURES)


def feature_vector(row: Mapping[str, Any]) -> list[float]:
    """The comparison features of one decoded release row (label columns as names), in FEATURE_NAMES order."""
    return [fn(row) for _, fn in FEATURES.values()]


def feature_mask(disabled_groups: tuple[str, ...] | list[str] = ()) -> list[float]:
    """1.0 for each feature whose group is enabled, 0.0 for the disabled groups."""
    unknown = set(disabled_groups) - set(GROUPS)
    if unknown:
        raise ValueError(f"unknown feature groups {sorted(unknown)}; expected some of {list(GROUPS)}")
    return [0.0 if group in disabled_groups else 1.0 for group, _ in FEATURES.values()]


def claim_type_ids(row: Mapping[str, Any]) -> list[int]:
    """Ontology indices of the two claims' types (the reference model's type-embedding input)."""
    return [ontology.CLAIM_TYPE_NAMES.index(row["claim_a_type"]), ontology.CLAIM_TYPE_NAMES.index(row["claim_b_type"])]
