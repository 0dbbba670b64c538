"""What every baseline shares: the system record, text segmentation and span records."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Row = Mapping[str, Any]
Record = dict[str, Any]
#: (train rows, evaluation rows, earlier systems' predictions by slug) -> one record per evaluation row
Predict = Callable[[Sequence[Row], Sequence[Row], Mapping[str, list[Record]]], list[Record]]


@dataclass(frozen=True)
class System:
    """One baseline: a results-table row predicting some of the five tasks."""

    slug: str
    name: str
    family: str
    tasks: tuple[str, ...]
    predict: Predict
    needs: tuple[str, ...] = ()  # slugs whose predictions this system reads


_WORD = re.compile(r"[a-z0-9]+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\[])")
#: Clause boundaries inside a claim: punctuation, or a contrastive / comparative connective.
_CLAUSE_BREAK = re.compile(r"[,;:]\s+|\s+(?=(?:whereas|while|but|although|compared with|than)\b)", re.IGNORECASE)


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def clauses(text: str) -> list[tuple[int, int]]:
    """Character spans of the clauses of ``text`` (stripped, no trailing full stop), in order."""
    spans, start = [], 0
    for m in _CLAUSE_BREAK.finditer(text):
        spans.append((start, m.start()))
        start = m.end()
    spans.append((start, len(text)))
    return [s for s in (_trim(text, a, b) for a, b in spans) if s[1] > s[0]]


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and (text[end - 1].isspace() or text[end - 1] in ".;,:"):
        end -= 1
    return start, end


def span(row: Row, role: str, start: int, end: int) -> Record:
    """An evidence-span record for characters [start, end) of one claim (``role`` claim_a / claim_b)."""
    side = role[-1]
    text = row[f"claim_{side}_text"]
    return {"article_uid": row[f"article_uid_{side}"], "text": text[start:end], "start": start, "end": end, "role": role}
