"""Validation and repair of an annotator's answer (paper §5.2).

``repair(answer, pair)`` turns a parsed JSON answer into :class:`Labels` that satisfy the
release schema, and counts every repair it made:

- a conflict type outside the ontology (or none: an empty answer) makes the answer unusable:
  :class:`InvalidAnswer`, which the caller counts as a failed attempt (never a label);
- axes: near-misses mapped through a synonym table generated from the axis names and titles
  (e.g. "population" → ``population_cohort``), anything else dropped, duplicates removed;
- dominant confounder off-schema or not among the axes → null;
- evidence spans must be verbatim substrings of their claim (offsets are recomputed), else dropped;
- confidence clamped to [0, 1], and never above the share of the answer's items (conflict type, axes,
  confounder, spans) that survived the repair: an answer half dropped is at most 0.5 confident.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from biodivergence_dataset import ontology
from biodivergence_dataset.records import CandidatePair, EvidenceSpan

from .prompt import RESPONSE_FIELDS

#: Confidence used when an answer has none (or a non-numeric one).
DEFAULT_CONFIDENCE = 0.5
ROLE_A, ROLE_B = ontology.SPAN_ROLES

#: Free-text near-misses, each mapped to a phrase of an axis title (resolved through the
#: generated table below, so no axis name is spelled here).
_EXTRA_AXIS_ALIASES: dict[str, str] = {
    "population": "population", "patient population": "population", "cohort composition": "cohort",
    "age": "population", "age group": "population", "patients": "population", "demographics": "population",
    "country": "geography", "region": "geography", "location": "geography", "geographic": "geography",
    "geographical": "geography", "setting geography": "geography",
    "time": "time period", "period": "time period", "temporal": "time period", "era": "time period",
    "publication year": "year",
    "measurement": "measurement protocol", "method": "assay", "methodology": "assay", "protocol": "measurement protocol",
    "laboratory method": "assay", "detection method": "assay",
    "design": "study design", "trial design": "study design", "methodological design": "study design",
    "dose": "dosage", "dosing": "dosage", "regimen": "dosage", "treatment": "intervention",
    "subtype": "disease subtype", "disease stage": "disease subtype", "stage": "disease subtype",
    "phenotype": "disease subtype", "severity": "disease subtype",
    "strain": "organism strain", "organism": "organism strain", "variant": "lineage", "serotype": "lineage",
    "species": "organism strain", "pathogen": "organism strain",
    "genetic background": "molecular background", "genotype": "molecular background", "gene": "gene",
    "genetics": "molecular background", "mutation status": "mutation",
    "setting": "clinical setting", "care setting": "clinical setting", "healthcare setting": "clinical setting",
    "specimen": "sample source", "specimen type": "sample source", "sample type": "sample source",
    "sample": "sample source", "tissue": "sample source",
    "outcome": "endpoint definition", "outcome definition": "endpoint definition", "endpoint": "endpoint definition",
    "outcome measure": "endpoint definition",
    "unknown": "unknown latent factor", "latent": "unknown latent factor", "other": "unknown latent factor",
    "confounder": "unknown latent factor",
}


def normalise_label(value: str) -> str:
    """Lower-case, separators → underscores: 'Year / time-period' → 'year_time_period'."""
    return re.sub(r"[^a-z0-9]+", "_", value.strip().lower()).strip("_")


def _axis_synonyms() -> dict[str, str]:
    """Normalised synonym → axis name, from each axis's title and its title parts."""
    table: dict[str, str] = {}
    ambiguous: set[str] = set()
    for a in ontology.AXES:
        phrases = {a.title, *(part for part in a.title.split("/"))}
        for phrase in phrases:
            key = normalise_label(phrase)
            if key in table and table[key] != a.name:
                ambiguous.add(key)
            table[key] = a.name
    for key in ambiguous:
        del table[key]
    for alias, target in _EXTRA_AXIS_ALIASES.items():
        name = table.get(normalise_label(target))
        if name is None:
            raise AssertionError(f"axis alias {alias!r} points to {target!r}, which names no axis")
        table.setdefault(normalise_label(alias), name)
    for name in ontology.AXIS_NAMES:
        table[name] = name
    return table


AXIS_SYNONYMS: dict[str, str] = _axis_synonyms()


@dataclass
class Labels:
    """Schema-valid annotation fields for one pair (the label part of an Example)."""

    conflict_type: str
    divergence_axes: list[str] = field(default_factory=list)
    dominant_confounder: str | None = None
    reconciliation: str = ""
    evidence_spans: list[EvidenceSpan] = field(default_factory=list)
    confidence: float = DEFAULT_CONFIDENCE
    comparable: bool = True
    #: The same-question gate's verdict (a key of ``ontology.COMPARABILITY``), when the annotator has one.
    comparability: str = ""
    notes: str = ""

    def example_fields(self) -> dict[str, Any]:
        """Keyword arguments for ``Example.from_pair`` (annotator fields are added by the caller)."""
        return {
            "conflict_type": self.conflict_type,
            "divergence_axes": list(self.divergence_axes),
            "dominant_confounder": self.dominant_confounder,
            "reconciliation": self.reconciliation,
            "evidence_spans": list(self.evidence_spans),
            "confidence": self.confidence,
            "comparability": self.comparability,
        }


class InvalidAnswer(ValueError):
    """An answer that gives no label of the ontology: a failed attempt, not a label."""


def _conflict_type(value: Any, repairs: Counter) -> str:
    if isinstance(value, str):
        if value in ontology.CONFLICT_TYPE_NAMES:
            return value
        if normalise_label(value) in ontology.CONFLICT_TYPE_NAMES:
            repairs["conflict_type_normalised"] += 1
            return normalise_label(value)
    if value is None or value == "":
        raise InvalidAnswer("the answer has no conflict_type")
    raise InvalidAnswer(f"conflict_type {str(value)[:80]!r} is not one of {list(ontology.CONFLICT_TYPE_NAMES)}")


def _axis(value: Any) -> str | None:
    return AXIS_SYNONYMS.get(normalise_label(value)) if isinstance(value, str) else None


def _axes(value: Any, repairs: Counter) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        repairs["axes_not_a_list"] += 1
        value = [v for v in re.split(r"[,;]", value) if v.strip()]
    if not isinstance(value, list):
        repairs["axes_not_a_list"] += 1
        repairs["axis_dropped_off_schema"] += 1
        return []
    out: list[str] = []
    for item in value:
        name = _axis(item)
        if name is None:
            repairs["axis_dropped_off_schema"] += 1
        elif name in out:
            repairs["axis_duplicate_removed"] += 1
        else:
            if name != item:
                repairs["axis_synonym_mapped"] += 1
            out.append(name)
    return out


def _confounder(value: Any, axes: list[str], repairs: Counter) -> str | None:
    if value is None or value == "" or (isinstance(value, str) and value.strip().lower() in ("null", "none")):
        return None
    name = _axis(value)
    if name is None:
        repairs["confounder_off_schema_nulled"] += 1
        return None
    if name not in axes:
        repairs["confounder_not_in_axes_nulled"] += 1
        return None
    if name != value:
        repairs["confounder_synonym_mapped"] += 1
    return name


def _span_items(value: Any, repairs: Counter) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, (str, dict)):
        repairs["spans_not_a_list"] += 1
        return [value]
    if not isinstance(value, list):
        repairs["spans_not_a_list"] += 1
        repairs["span_dropped_empty"] += 1
        return []
    return value


def _span(item: Any, claim_text: str, article_uid: str, role: str, repairs: Counter) -> EvidenceSpan | None:
    """A verbatim span of ``claim_text``; stated offsets are kept when right, recomputed when wrong."""
    text, start = (item.get("text"), item.get("start")) if isinstance(item, dict) else (item, None)
    if not isinstance(text, str) or not text.strip():
        repairs["span_dropped_empty"] += 1
        return None
    if isinstance(start, int) and claim_text[start:start + len(text)] == text:
        return EvidenceSpan(article_uid=article_uid, text=text, start=start, end=start + len(text), role=role)
    found = claim_text.find(text)
    if found < 0:
        repairs["span_dropped_not_verbatim"] += 1
        return None
    if start is not None:
        repairs["span_offsets_fixed"] += 1
    return EvidenceSpan(article_uid=article_uid, text=text, start=found, end=found + len(text), role=role)


def _spans(answer: dict[str, Any], pair: CandidatePair, repairs: Counter) -> list[EvidenceSpan]:
    out: list[EvidenceSpan] = []
    for key, claim, role in (("evidence_spans_a", pair.claim_a, ROLE_A), ("evidence_spans_b", pair.claim_b, ROLE_B)):
        for item in _span_items(answer.get(key), repairs):
            span = _span(item, claim.sentence, claim.article_uid, role, repairs)
            if span is None:
                continue
            if any((s.role, s.start, s.end) == (span.role, span.start, span.end) for s in out):
                repairs["span_duplicate_removed"] += 1
                continue
            out.append(span)
    return out


def _confidence(value: Any, repairs: Counter) -> float:
    if isinstance(value, str):
        try:
            value = float(value.strip().rstrip("%")) / (100.0 if value.strip().endswith("%") else 1.0)
        except ValueError:
            value = None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        repairs["confidence_missing_defaulted"] += 1
        return DEFAULT_CONFIDENCE
    if not 0.0 <= value <= 1.0:
        repairs["confidence_clamped"] += 1
        return float(min(1.0, max(0.0, value)))
    return float(value)


#: The longest free text kept from an answer (a reconciliation or a note is a sentence or two); longer is cut
#: and counted as a repair, so a runaway answer never reaches the release whole.
MAX_TEXT_CHARS = 2000


def _text(value: Any, key: str, repairs: Counter) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        repairs[f"{key}_not_text"] += 1
        value = str(value)[:MAX_TEXT_CHARS + 1]
    value = value.strip()
    if len(value) > MAX_TEXT_CHARS:
        repairs[f"{key}_cut"] += 1
        value = value[:MAX_TEXT_CHARS].rstrip()
    return value


#: Repairs that drop one item of the answer (each lowers the share of the answer the label keeps).
_LOSSES = ("axis_dropped_off_schema", "confounder_off_schema_nulled", "confounder_not_in_axes_nulled",
           "span_dropped_empty", "span_dropped_not_verbatim")


def _stated(value: Any) -> int:
    """How many items a list-valued field states (a string counts its comma-separated parts)."""
    if value is None or value == "":
        return 0
    if isinstance(value, str):
        return max(1, len([v for v in re.split(r"[,;]", value) if v.strip()]))
    return len(value) if isinstance(value, list) else 1


def _items(answer: dict[str, Any]) -> int:
    """How many items the answer states: its conflict type, each axis, the confounder and each span."""
    confounder = answer.get("dominant_confounder")
    no_confounder = confounder is None or (isinstance(confounder, str) and confounder.strip().lower() in
                                           ("", "null", "none"))
    spans = sum(len(v) if isinstance(v, list) else int(v is not None)
                for v in (answer.get("evidence_spans_a"), answer.get("evidence_spans_b")))
    return 1 + _stated(answer.get("divergence_axes")) + (not no_confounder) + spans


def kept_share(answer: dict[str, Any], repairs: Counter) -> float:
    """The share of the answer's items that the repair kept (1.0 when nothing was dropped)."""
    items = _items(answer)
    return max(0.0, (items - sum(repairs[name] for name in _LOSSES)) / items)


def repair(answer: dict[str, Any], pair: CandidatePair) -> tuple[Labels, Counter]:
    """Schema-valid labels for ``pair`` from a parsed answer, and the repairs made (name → count);
    :class:`InvalidAnswer` when the answer gives no conflict type of the ontology."""
    if not isinstance(answer, dict) or not answer:
        raise InvalidAnswer("the answer is empty")
    repairs: Counter = Counter()
    unknown = set(answer) - set(RESPONSE_FIELDS)
    if unknown:
        repairs["unknown_keys_ignored"] += len(unknown)
    conflict = _conflict_type(answer.get("conflict_type"), repairs)
    axes = _axes(answer.get("divergence_axes"), repairs)
    labels = Labels(
        conflict_type=conflict,
        divergence_axes=axes,
        dominant_confounder=_confounder(answer.get("dominant_confounder"), axes, repairs),
        reconciliation=_text(answer.get("reconciliation"), "reconciliation", repairs),
        evidence_spans=_spans(answer, pair, repairs),
        confidence=_confidence(answer.get("confidence"), repairs),
        comparable=bool(answer.get("comparable", True)),
        notes=_text(answer.get("notes"), "notes", repairs),
    )
    share = kept_share(answer, repairs)
    if labels.confidence > share:
        repairs["confidence_capped_by_repairs"] += 1
        labels.confidence = round(share, 4)
    return labels, repairs
