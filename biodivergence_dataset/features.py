"""The release's ``datasets.Features``, generated from the ontology and the ``Example`` record."""

from __future__ import annotations

from typing import Any

from datasets import ClassLabel, Features, List, Value

from . import ontology
from .records import Example

_CLASS_LABEL_COLUMNS: dict[str, tuple[str, ...]] = {
    "domain": ontology.DOMAIN_NAMES,
    "claim_a_type": ontology.CLAIM_TYPE_NAMES,
    "claim_b_type": ontology.CLAIM_TYPE_NAMES,
    "conflict_type": ontology.CONFLICT_TYPE_NAMES,
    "dominant_confounder": ontology.AXIS_NAMES,
}
_INT_COLUMNS = ("pub_year_a", "pub_year_b")
_FLOAT_COLUMNS = (
    "similarity", "disagreement", "entity_overlap", "type_compatibility", "year_penalty",
    "combined_score", "confidence", "label_quality", "exposure_similarity", "outcome_similarity",
)
SPAN_FEATURE = {
    "article_uid": Value("string"),
    "text": Value("string"),
    "start": Value("int32"),
    "end": Value("int32"),
    "role": Value("string"),
}


FRAME_FEATURE = {
    "exposure": Value("string"),
    "outcome": Value("string"),
    "finding": Value("string"),
    "significance": Value("string"),
    "finding_text": Value("string"),
    "context": List({"axis": Value("string"), "value": Value("string"), "text": Value("string"),
                     "start": Value("int32"), "end": Value("int32")}),
}
ANNOTATOR_LABEL_FEATURE = {
    "annotator_id": Value("string"),
    "conflict_type": Value("string"),
    "confidence": Value("float32"),
}
_STRUCT_COLUMNS: dict[str, Any] = {
    "evidence_spans": List(SPAN_FEATURE),
    "frame_a": FRAME_FEATURE,
    "frame_b": FRAME_FEATURE,
    "annotator_labels": List(ANNOTATOR_LABEL_FEATURE),
}


def release_features() -> Features:
    """Typed features of every release config, in ``Example`` column order."""
    columns: dict[str, Any] = {}
    for name in Example.model_fields:
        if name in _CLASS_LABEL_COLUMNS:
            columns[name] = ClassLabel(names=list(_CLASS_LABEL_COLUMNS[name]))
        elif name == "divergence_axes":
            columns[name] = List(ClassLabel(names=list(ontology.AXIS_NAMES)))
        elif name in _STRUCT_COLUMNS:
            columns[name] = _STRUCT_COLUMNS[name]
        elif name in _INT_COLUMNS:
            columns[name] = Value("int32")
        elif name in _FLOAT_COLUMNS:
            columns[name] = Value("float32")
        else:
            columns[name] = Value("string")
    return Features(columns)


def encode_example(example: Example) -> dict[str, Any]:
    """An ``Example`` as a release row: labels become ClassLabel ids; a missing confounder stays null."""
    row = example.model_dump(mode="json")
    for name, names in _CLASS_LABEL_COLUMNS.items():
        if row[name] is not None:
            row[name] = names.index(row[name])
    row["divergence_axes"] = [ontology.AXIS_NAMES.index(a) for a in row["divergence_axes"]]
    return row


def decode_row(row: dict[str, Any]) -> dict[str, Any]:
    """Inverse of :func:`encode_example` for rows read back from Parquet or ``load_dataset``."""
    out = dict(row)
    for name in _FLOAT_COLUMNS:
        if isinstance(out.get(name), float):
            out[name] = round(out[name], 6)  # float32 storage: drop the binary noise of the widening
    for name, names in _CLASS_LABEL_COLUMNS.items():
        value = out.get(name)
        if isinstance(value, int):
            if not 0 <= value < len(names):
                raise ValueError(f"field {name!r}: class id {value} is outside 0..{len(names) - 1}")
            out[name] = names[value]
    axes = out.get("divergence_axes") or []
    decoded = []
    for a in axes:
        if isinstance(a, int):
            if not 0 <= a < len(ontology.AXIS_NAMES):
                raise ValueError(f"field 'divergence_axes': class id {a} is outside 0..{len(ontology.AXIS_NAMES) - 1}")
            a = ontology.AXIS_NAMES[a]
        decoded.append(a)
    out["divergence_axes"] = decoded
    return out
