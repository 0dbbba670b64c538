"""Reading and checking prediction and reference records: each task field decoded, every error naming its record."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .labels import AXES, CONFLICT_TYPES, NO_CONFOUNDER, SPAN_ROLES, TASK_FIELDS, TEMPLATED_SHARE
from .text_scores import span_tokens

# --- reading and checking records ------------------------------------------------------------------


def column(records: Sequence[Mapping[str, Any]], side: str, name: str) -> list[Any] | None:
    """Values of field ``name`` on every record, or None when no record carries it."""
    present = [name in record for record in records]
    if not any(present):
        return None
    if not all(present):
        i = present.index(False)
        raise _invalid(side, i, f"missing, although {side}[{present.index(True)}] has it; give the field on every "
                       f"record or on none (a task is scored only where every record carries it)", name)
    return [record[name] for record in records]


def _invalid(side: str, i: int, problem: str, name: str = "") -> ValueError:
    """An input error naming the example (``predictions[3].conflict_type: ...``)."""
    return ValueError(f"{side}[{i}]{'.' + name if name else ''}: {problem}")


def label_id(value: Any, vocab: Sequence[str], side: str, i: int, name: str) -> int:
    """Index of a label given by name or ClassLabel id; ValueError naming example, field and value."""
    if isinstance(value, str) and value in vocab:
        return vocab.index(value)
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool) and 0 <= value < len(vocab):
        return int(value)
    raise _invalid(side, i, f"unknown label {value!r}; expected one of {list(vocab)} or its ClassLabel id "
                   f"0-{len(vocab) - 1}", name)


def conflict_ids(values: list[Any], side: str) -> np.ndarray:
    return np.array([label_id(v, CONFLICT_TYPES, side, i, "conflict_type") for i, v in enumerate(values)],
                    dtype=np.int64)


def axis_matrix(values: list[Any], side: str) -> np.ndarray:
    matrix = np.zeros((len(values), len(AXES)), dtype=bool)
    for i, axes in enumerate(values):
        if isinstance(axes, str):
            raise _invalid(side, i, f"got the string {axes!r}; give a list of axis names, e.g. [{axes!r}] "
                           "(or [] for none)", "divergence_axes")
        if not isinstance(axes, (list, tuple, np.ndarray)):
            raise _invalid(side, i, f"expected a list of axis names, got {axes!r}", "divergence_axes")
        for axis in axes:
            matrix[i, label_id(axis, AXES, side, i, "divergence_axes")] = True
    return matrix


def confounder_ids(values: list[Any], side: str) -> np.ndarray:
    """Axis ids, ``-1`` for no confounder ("", None, or -1 as the release stores it)."""
    return np.array(
        [NO_CONFOUNDER if v in ("", None, NO_CONFOUNDER) else label_id(v, AXES, side, i, "dominant_confounder")
         for i, v in enumerate(values)],
        dtype=np.int64,
    )


def texts(values: list[Any], side: str) -> list[str]:
    """Reconciliation texts; None reads as ""."""
    for i, v in enumerate(values):
        if v is not None and not isinstance(v, str):
            raise _invalid(side, i, f"expected a string, got {v!r}", "reconciliation")
    return [v or "" for v in values]


def span_sets(values: list[Any], side: str) -> list[Counter]:
    """Token multisets of each example's evidence spans; None reads as no spans."""
    out = []
    for i, spans in enumerate(values):
        spans = spans or []
        for span in spans:
            if not isinstance(span, Mapping) or not isinstance(span.get("text"), str):
                raise _invalid(side, i, f"expected {{text, start, end, role}} objects, got {span!r}", "evidence_spans")
            label_id(span.get("role"), SPAN_ROLES, side, i, "evidence_spans.role")
        out.append(span_tokens(spans))
    return out


#: task name -> the reader that checks and decodes its field's values.
_READERS: dict[str, Callable[[list[Any], str], Any]] = {
    "conflict_type": conflict_ids,
    "axes": axis_matrix,
    "confounder": confounder_ids,
    "reconciliation": texts,
    "spans": span_sets,
}


def check_records(records: Sequence[Any], side: str) -> None:
    """ValueError naming the record (``side[i]``) and field of the first malformed one: a record that
    is not a mapping, a task field some records carry and others lack, a label not in the
    vocabulary (names or ClassLabel ids), axes not given as a list, a span without text or role.

    >>> check_records([{"conflict_type": "no_conflict"}, {}], "predictions")
    Traceback (most recent call last):
    ...
    ValueError: predictions[1].conflict_type: missing, although predictions[0] has it; give the field on every record or on none (a task is scored only where every record carries it)
    """
    for i, record in enumerate(records):
        if isinstance(record, str):
            raise _invalid(side, i, "got a string, not a mapping of task fields (a JSON string? parse it, "
                           "or give every record as a JSON string to the evaluate module)")
        if not isinstance(record, Mapping):
            raise _invalid(side, i, f"expected a mapping of task fields, got {type(record).__name__}")
    for name, field_name in TASK_FIELDS.items():
        values = column(records, side, field_name)
        if values is not None:
            _READERS[name](values, side)


def templated(texts: Sequence[str]) -> dict[str, Any]:
    """How templated some reconciliation texts are: non-empty ``rows``, ``distinct`` texts among them,
    and ``templated`` (at most ``TEMPLATED_SHARE`` of the rows are distinct, as rule annotators write).

    >>> templated(["Geography differs."] * 20 + ["Dose differs.", ""])
    {'rows': 21, 'distinct': 2, 'templated': True}
    """
    filled = [t for t in texts if t and t.strip()]
    distinct = len(set(filled))
    return {"rows": len(filled), "distinct": distinct,
            "templated": bool(filled) and distinct <= TEMPLATED_SHARE * len(filled)}


def reference_slots(reference: Mapping[str, Any], i: int) -> set[str]:
    """The structured slots of one reference: its conflict type, axes and confounder names."""
    slots: set[str] = set()
    if "conflict_type" in reference:
        conflict = label_id(reference["conflict_type"], CONFLICT_TYPES, "references", i, "conflict_type")
        slots.add(CONFLICT_TYPES[conflict])
    for axis in reference.get("divergence_axes") or ():
        slots.add(AXES[label_id(axis, AXES, "references", i, "divergence_axes")])
    confounder = confounder_ids([reference.get("dominant_confounder")], "references")[0]
    if confounder != NO_CONFOUNDER:
        slots.add(AXES[confounder])
    return slots

