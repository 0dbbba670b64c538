"""The release's ``datasets.Features``, generated from the ontology and the ``Example`` record, and what each
column means (:data:`COLUMN_DESCRIPTIONS`, rendered as the card's "Data Fields").

An unknown year or a missing confounder is stored as ``-1`` (datasets' convention for a missing class
label), not as null: the columns then stay integers in ``Dataset.to_pandas()`` instead of turning into
float NaN. :func:`decode_row` reads ``-1`` back as ``None``."""

from __future__ import annotations

from typing import Any

from datasets import ClassLabel, Features, List, Value

from . import ontology
from .records import EvidenceMap, Example, MapClaim, MapCondition, MapConflict, MapStudy

_CLASS_LABEL_COLUMNS: dict[str, tuple[str, ...]] = {
    "domain": ontology.DOMAIN_NAMES,
    "claim_a_type": ontology.CLAIM_TYPE_NAMES,
    "claim_b_type": ontology.CLAIM_TYPE_NAMES,
    "conflict_type": ontology.CONFLICT_TYPE_NAMES,
    "dominant_confounder": ontology.AXIS_NAMES,
}
_INT_COLUMNS = ("pub_year_a", "pub_year_b")
#: Stored value of an unknown year or a missing confounder.
MISSING_INT = -1
_NULLABLE_INT_COLUMNS = ("pub_year_a", "pub_year_b", "dominant_confounder")
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


def _names(values) -> str:
    return ", ".join(f"`{v}`" for v in values)


#: One line per release column: what it holds and where it comes from (the card's "Data Fields").
COLUMN_DESCRIPTIONS: dict[str, str] = {
    "example_id": "Row id. Each pair has one row per config, so it equals `pair_id`; it would differ only in a "
                  "release that kept several labelled copies of a pair.",
    "pair_id": "Order-independent id of the claim pair (SHA-1 of the two sorted claim ids, 20 hex digits); "
               "predictions are matched to references by it.",
    "domain": f"Biomedical domain of the pair: {_names(ontology.DOMAIN_NAMES)}.",
    "claim_a_id": "Id of claim A: SHA-1 of its article uid and character offsets (16 hex digits).",
    "claim_b_id": "Id of claim B, made as `claim_a_id`.",
    "claim_a_text": "Claim A: one sentence of article A's abstract.",
    "claim_b_text": "Claim B: one sentence of article B's abstract (always another article than A).",
    "claim_a_type": f"Claim type of claim A: {_names(ontology.CLAIM_TYPE_NAMES)}.",
    "claim_b_type": "Claim type of claim B (same classes as `claim_a_type`).",
    "article_uid_a": "Article of claim A (`pmid:…`, `doi:…`, …); `primary` never puts an article in two splits.",
    "article_uid_b": "Article of claim B.",
    "abstract_a": "The whole abstract claim A comes from (empty when the source has none).",
    "abstract_b": "The whole abstract claim B comes from.",
    "pub_year_a": f"Publication year of article A; {MISSING_INT} when the source gives none.",
    "pub_year_b": f"Publication year of article B; {MISSING_INT} when the source gives none.",
    "journal_a": "Journal of article A (empty when unknown).",
    "journal_b": "Journal of article B (empty when unknown).",
    "similarity": "Mining score: cosine similarity of the two claim sentences' embeddings (all-MiniLM-L6-v2).",
    "disagreement": "Mining score in [0, 1]: noisy-OR of contradiction cues (polarity, negation or direction "
                    "mismatch, opposed terms, numbers, entity substitution, conflicting context values, contrast "
                    "markers).",
    "entity_overlap": "Mining score: Jaccard overlap of the two claims' entity sets (0 when either has none).",
    "type_compatibility": "Mining score: how compatible the two claim types are (same type, one side factual, "
                          "or two different types).",
    "year_penalty": "Mining score: penalty for the gap between the publication years (0 when a year is unknown).",
    "combined_score": "The miner's ranking score: weighted sum of `similarity`, `disagreement`, `entity_overlap` "
                      "and `type_compatibility` minus `year_penalty` (default weights 0.35 / 0.35 / 0.15 / 0.10).",
    "exposure_similarity": "Cosine similarity of the two claim frames' exposure phrases where the same-question "
                           "check used it; null elsewhere.",
    "outcome_similarity": "Cosine similarity of the two claim frames' outcome phrases, as `exposure_similarity`.",
    "conflict_type": "Task 1 target: the conflict type (six classes; see the conflict taxonomy).",
    "divergence_axes": "Task 2 target: the context axes on which the two claims differ (multi-label; see the "
                       "divergence axes).",
    "dominant_confounder": f"Task 3 target: the one axis of `divergence_axes` that best explains the divergence; "
                           f"{MISSING_INT} when there is none.",
    "reconciliation": "Task 4 target: a sentence explaining how both claims can hold.",
    "evidence_spans": "Task 5 target: spans of the claim texts that carry the divergence (`text`, `start`/`end` "
                      "character offsets into that claim, end exclusive, `role` claim_a or claim_b, `article_uid`).",
    "annotator_id": "The annotator whose label the row carries (a rule set, a judge or an LLM and its version).",
    "annotator_kind": f"Kind of that annotator: {_names(ontology.ANNOTATOR_KINDS)}.",
    "confidence": "That annotator's own confidence in its conflict type, in [0, 1] (a score, not a calibrated "
                  "probability unless the annotator is a calibrated judge).",
    "prompt_version": "Version of that annotator's prompt or rules.",
    "frame_a": f"Claim frame of claim A: `exposure`, `outcome`, `finding` ({_names(ontology.FINDING_DIRECTIONS)}), "
               f"`significance` ({_names(ontology.SIGNIFICANCE_VALUES)}), `finding_text` and the `context` it "
               "states (axis, value, text, offsets); null when no frame was read.",
    "frame_b": "Claim frame of claim B, as `frame_a`.",
    "comparability": f"Verdict of the same-question check on the two frames: {_names(ontology.COMPARABILITY)}; "
                      "empty when not recorded.",
    "annotator_labels": "Every panel member's conflict type and confidence for this pair (empty when one "
                        "annotator labelled it).",
    "label_quality": "Consensus quality of the row's label: the winning side's share of the panel's weight (1.0 "
                     "when all members agree); null when one annotator labelled it.",
    "question_id": "Id of the clinical question (from the build's question pack) that both claims answer; empty "
                   "when the pair was mined without a common question.",
    "question": "Text of that clinical question; empty when none.",
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
    """An ``Example`` as a release row: labels become ClassLabel ids; an unknown year or confounder becomes -1."""
    row = example.model_dump(mode="json")
    for name, names in _CLASS_LABEL_COLUMNS.items():
        if row[name] is not None:
            row[name] = names.index(row[name])
    row["divergence_axes"] = [ontology.AXIS_NAMES.index(a) for a in row["divergence_axes"]]
    for name in _NULLABLE_INT_COLUMNS:
        if row[name] is None:
            row[name] = MISSING_INT
    return row


def rounded(value: Any) -> Any:
    """``value`` with every float rounded to 6 digits (float32 storage noise), nested values included."""
    if isinstance(value, float):
        return round(value, 6)
    if isinstance(value, dict):
        return {k: rounded(v) for k, v in value.items()}
    return [rounded(v) for v in value] if isinstance(value, list) else value


def decode_row(row: dict[str, Any]) -> dict[str, Any]:
    """Inverse of :func:`encode_example` for rows read back from Parquet or ``load_dataset``."""
    out = dict(row)
    for name in _NULLABLE_INT_COLUMNS:
        if out.get(name) == MISSING_INT:
            out[name] = None
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


# ---------------------------------------------------------------------------------------------
# the evidence maps (``ontology.EVIDENCE_MAP_CONFIG``): labels stay names, one row per question

_STRING = Value("string")
MAP_CLAIM_FEATURE = {"claim_id": _STRING, "text": _STRING, "finding": _STRING, "significance": _STRING,
                     "confidence": Value("float32")}
MAP_CONDITION_FEATURE = {"axis": _STRING, "text": _STRING}
MAP_STUDY_FEATURE = {
    "article_uid": _STRING, "pub_year": Value("int32"), "direction": _STRING, "significance": _STRING,
    "agrees": Value("bool"), "group": _STRING, "claims": List(MAP_CLAIM_FEATURE),
    "conditions": List(MAP_CONDITION_FEATURE), "conflict_pair_ids": List(_STRING),
}
MAP_CONFLICT_FEATURE = {
    "pair_id": _STRING, "article_uid_a": _STRING, "article_uid_b": _STRING, "claim_a_id": _STRING,
    "claim_b_id": _STRING, "conflict_type": _STRING, "divergence_axes": List(_STRING), "dominant_confounder": _STRING,
    "split": _STRING,
}
_MAP_COUNTS = ("n_studies", "n_agree", "n_disagree", "n_unread")
assert set(MAP_CLAIM_FEATURE) == set(MapClaim.model_fields)
assert set(MAP_CONDITION_FEATURE) == set(MapCondition.model_fields)
assert set(MAP_STUDY_FEATURE) == set(MapStudy.model_fields)
assert set(MAP_CONFLICT_FEATURE) == set(MapConflict.model_fields)


def evidence_map_features() -> Features:
    """Typed features of the evidence-map config, in ``EvidenceMap`` field order."""
    nested = {"studies": List(MAP_STUDY_FEATURE), "conflicts": List(MAP_CONFLICT_FEATURE)}
    return Features({name: nested.get(name, Value("int32") if name in _MAP_COUNTS else _STRING)
                     for name in EvidenceMap.model_fields})
