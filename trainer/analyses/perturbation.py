"""Analysis 1, perturbation robustness: how often an edit of the claim pair flips the predicted conflict type,
and how often the prediction on the edited pair is the label the edit implies (``edits``)."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from . import edits
from .analysis_release import Predictor, Release, Row, rate


@dataclass(frozen=True)
class Family:
    """An edit family: what it does, whether it keeps the label, and the edit of the i-th row."""

    description: str
    label_preserving: bool
    edit: Callable[[Row, int], dict | None]


FAMILIES: dict[str, Family] = {
    "swap_context": Family("swap one context slot's values between the claims", True, lambda r, i: edits.swap_context(r)),
    "same_context": Family("remove the differing context so both claims share it (a contextual contradiction "
                           "becomes direct)", False,
                           lambda r, i: edits.same_context(r)),
    "negation": Family("insert or remove a negation of claim B's finding (changes the label where both claims "
                       "answer the same question)", False, lambda r, i: edits.toggle_negation(r)),
    "paraphrase": Family("wrap claim A in a meaning-keeping template", True, edits.paraphrase),
}
DEFAULT_MAX_PAIRS = 500


@dataclass
class FamilyResult:
    family: str
    description: str
    label_preserving: bool
    n: int
    #: share of edited pairs whose predicted conflict type differs from the unedited pair's
    flip_rate: float | None
    #: share of edited pairs predicted as the label the edit implies
    expected_rate: float | None
    #: share of edited pairs whose implied label differs from the original gold label
    label_changed: float | None


@dataclass
class PerturbationResult:
    predictor: str
    pairs: int
    families: list[FamilyResult] = field(default_factory=list)


def edit_family(family: str, rows: Sequence[Row]) -> list[tuple[Row, dict]]:
    """(original, edited) for each row the family's edit applies to."""
    edited = (FAMILIES[family].edit(row, i) for i, row in enumerate(rows))
    return [(row, e) for row, e in zip(rows, edited) if e is not None]


def sample(rows: Sequence[Row], n: int, seed: int = 0) -> list[Row]:
    """At most ``n`` rows, drawn without replacement with a fixed seed (all rows when there are fewer)."""
    return list(rows) if len(rows) <= n else random.Random(seed).sample(list(rows), n)


def analyze(release: Release, predictor: Predictor, max_pairs: int = DEFAULT_MAX_PAIRS, seed: int = 0) -> PerturbationResult:
    """Predict the sampled pairs and every family's edits in one call, then compare per family."""
    rows = sample(release.rows, max_pairs, seed)
    by_family = {family: edit_family(family, rows) for family in FAMILIES}
    edited = [e for pairs in by_family.values() for _, e in pairs]
    predicted = [p["conflict_type"] for p in predictor.predict(list(rows) + edited)] if rows else []
    original = dict(zip((id(r) for r in rows), predicted))
    after = iter(predicted[len(rows):])
    result = PerturbationResult(predictor.name, len(rows))
    for family, spec in FAMILIES.items():
        pairs = by_family[family]
        new = [next(after) for _ in pairs]
        result.families.append(FamilyResult(
            family, spec.description, spec.label_preserving, len(pairs),
            flip_rate=rate([p != original[id(row)] for (row, _), p in zip(pairs, new)]),
            expected_rate=rate([p == e["conflict_type"] for (_, e), p in zip(pairs, new)]),
            label_changed=rate([e["conflict_type"] != row["conflict_type"] for row, e in pairs]),
        ))
    return result

