"""Edits of a claim pair, generated from the ontology and the claim frames, each with the label it implies.

An edit returns a new decoded release row whose claim texts are changed and whose gold fields
(``conflict_type``, ``divergence_axes``, ``dominant_confounder``) say what the edited pair should be
labelled, or ``None`` when the edit does not apply to the pair. Context slots come from the row's claim
frames (``frame_a`` / ``frame_b``; offsets into the claim text) and, for rows without frames, from the
ontology's axis cues (``biodivergence_text.cues``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

from biodivergence_dataset import ontology
from biodivergence_text import cues

Row = Mapping[str, Any]
Edit = Callable[[Row], "dict[str, Any] | None"]

DIRECT = ontology.CONFLICT_TYPE_NAMES[1]  # direct_contradiction
SAME_QUESTION = next(iter(ontology.COMPARABILITY))  # same_question: both claims share exposure and outcome
#: Meaning-keeping frames around a claim (``{}`` is the claim with a lower-cased first letter).
PARAPHRASE_TEMPLATES: tuple[str, ...] = ("In this study, {}", "The authors report that {}", "It was found that {}")
NEGATION_TEMPLATE = "It is not the case that {}"
_NEGATION_WORD = re.compile(r"\b(?:not|no)\s+", re.IGNORECASE)
_PLAIN_VALUE = re.compile(r"[a-z][a-z -]*[a-z]")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([,.;:)])")


def context_slots(row: Row, side: str) -> list[cues.CueHit]:
    """Context values of claim ``side`` ("a"/"b"): its frame's slots whose offsets match the text, else axis cues."""
    text = row[f"claim_{side}_text"]
    frame = row.get(f"frame_{side}")
    if not frame or not frame.get("context"):
        return cues.axis_cues(text)
    return [cues.CueHit(s["axis"], s["value"], s["start"], s["end"]) for s in frame["context"]
            if text[s["start"]:s["end"]] == s["text"]]


def _values(slots: list[cues.CueHit]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for s in slots:
        out.setdefault(s.axis, set()).add(cues.canonical_value(s.value))
    return out


def differing_axes(row: Row) -> list[str]:
    """Axes (ontology order) on which the two claims state different context values."""
    va, vb = _values(context_slots(row, "a")), _values(context_slots(row, "b"))
    return [a for a in ontology.AXIS_NAMES if va.get(a, set()) != vb.get(a, set())]


def replace_spans(text: str, spans: list[tuple[int, int, str]]) -> str:
    """``text`` with each (start, end) replaced by its new text; overlapping spans keep the first; whitespace tidied."""
    out, last = [], 0
    for start, end, new in sorted(spans):
        if start < last:
            continue
        out += [text[last:start], new]
        last = end
    out.append(text[last:])
    return _SPACE_BEFORE_PUNCT.sub(r"\1", " ".join("".join(out).split()))


def _relabel(row: Row, texts: tuple[str, str], conflict: str, axes: list[str]) -> dict[str, Any]:
    """The edited row; an edited claim loses its frame (its context is then read from the axis cues)."""
    confounder = row.get("dominant_confounder")
    edited = {**row, "conflict_type": conflict, "divergence_axes": axes,
              "dominant_confounder": confounder if confounder in axes else (axes[0] if axes else None)}
    for side, text in zip("ab", texts):
        if text != row[f"claim_{side}_text"]:
            edited[f"claim_{side}_text"], edited[f"frame_{side}"] = text, None
    return edited


def _keep_label(row: Row, texts: tuple[str, str]) -> dict[str, Any]:
    return _relabel(row, texts, row["conflict_type"], list(row["divergence_axes"]))


def swap_context(row: Row) -> dict[str, Any] | None:
    """Swap the values of the first context axis both claims state differently (label-preserving)."""
    slots = {side: context_slots(row, side) for side in "ab"}
    for axis in differing_axes(row):
        mine = {side: [s for s in slots[side] if s.axis == axis] for side in "ab"}
        if mine["a"] and mine["b"]:
            texts = tuple(
                replace_spans(row[f"claim_{side}_text"], [(s.start, s.end, row[f"claim_{other}_text"][mine[other][0].start:mine[other][0].end])
                                                          for s in mine[side]])
                for side, other in (("a", "b"), ("b", "a")))
            return _keep_label(row, texts)
    return None


def same_context(row: Row) -> dict[str, Any] | None:
    """Make both claims state the same context: B takes A's value on each differing axis, a value only one
    claim states is removed. A contextual contradiction explained only by those axes becomes direct."""
    removed = differing_axes(row)
    if not removed:
        return None
    slots = {side: [s for s in context_slots(row, side) if s.axis in removed] for side in "ab"}
    a_text, b_text = row["claim_a_text"], row["claim_b_text"]
    first_a = {s.axis: a_text[s.start:s.end] for s in reversed(slots["a"])}
    b_edits = [(s.start, s.end, first_a.get(s.axis, "")) for s in slots["b"]]
    a_edits = [(s.start, s.end, "") for s in slots["a"] if not any(t.axis == s.axis for t in slots["b"])]
    texts = (replace_spans(a_text, a_edits), replace_spans(b_text, b_edits))
    if row["conflict_type"] != ontology.CONTEXTUAL:
        return _keep_label(row, texts)
    remaining = [a for a in row["divergence_axes"] if a not in removed]
    return _relabel(row, texts, ontology.CONTEXTUAL if remaining else DIRECT, remaining)


def _lower_first(text: str) -> str:
    return text if text[1:2].isupper() else text[:1].lower() + text[1:]


def toggle_negation(row: Row) -> dict[str, Any] | None:
    """Remove the first "not"/"no" of claim B, or negate it with a template. On a pair that answers the
    same question this turns agreement into a contradiction (contextual when the contexts differ) and back."""
    b = row["claim_b_text"]
    match = _NEGATION_WORD.search(b)
    new_b = b[:match.start()] + b[match.end():] if match else NEGATION_TEMPLATE.format(_lower_first(b))
    texts = (row["claim_a_text"], new_b)
    if row.get("comparability") != SAME_QUESTION:
        return _keep_label(row, texts)
    if row["conflict_type"] != ontology.NO_CONFLICT:
        return _relabel(row, texts, ontology.NO_CONFLICT, [])
    axes = differing_axes(row)
    return _relabel(row, texts, ontology.CONTEXTUAL if axes else DIRECT, axes)


def paraphrase(row: Row, template: int = 0) -> dict[str, Any]:
    """Wrap claim A in a meaning-keeping template (label-preserving)."""
    frame = PARAPHRASE_TEMPLATES[template % len(PARAPHRASE_TEMPLATES)]
    return _keep_label(row, (frame.format(_lower_first(row["claim_a_text"])), row["claim_b_text"]))


@cache
def contrast_values(axis: str) -> tuple[str, str] | None:
    """Two different plain-word values of ``axis`` from its ontology cue patterns (first and last), or None."""
    found: list[str] = []
    for pattern in ontology.axis(axis).cue_patterns:
        found += [alt for alt in pattern.split("|") if _PLAIN_VALUE.fullmatch(alt) and axis in cues.axis_values(alt)]
    return (found[0], found[-1]) if len(found) >= 2 else None


def add_context(row: Row, axis: str) -> dict[str, Any] | None:
    """Give the claims different values on ``axis`` (one it does not yet carry); the axes should gain it."""
    values = contrast_values(axis)
    if values is None or axis in row["divergence_axes"] or axis in differing_axes(row):
        return None
    title = ontology.axis(axis).title
    texts = tuple(f"{row[f'claim_{side}_text'].rstrip(' .')} ({title}: {value})." for side, value in zip("ab", values))
    return _relabel(row, texts, row["conflict_type"], [*row["divergence_axes"], axis])
