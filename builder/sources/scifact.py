"""SciFact corpus, either the original ``corpus.jsonl`` or the Hugging Face CSV export.

CSV columns ``doc_id,title,abstract,structured``; ``abstract`` is a NumPy array print-out of
sentence strings (``['One.'\\n 'Two.']``, no commas), read literal by literal. JSONL rows are
``{"doc_id", "title", "abstract": [sentences], "structured"}``. Structured abstracts start some
sentences with an upper-case heading without a colon (``RESULTS We propose …``); those become
sections. The corpus has no PMID, DOI or year: records are identified by content hash downstream.
"""

from __future__ import annotations

import ast
import csv
import json
import re
from collections.abc import Iterator
from pathlib import Path

from .raw_records import (
    MALFORMED,
    UNASSIGNED,
    Fault,
    Item,
    RawRecord,
    canonical_label,
    has_invalid_bytes,
    invalid_bytes_fault,
    labelled_or_plain,
    open_text,
)
from .table import resolve_columns

FORMAT = "scifact_corpus"
PATTERNS = ("*.csv", "*.jsonl", "*.csv.gz", "*.jsonl.gz")

_LITERAL = re.compile(r"""'[^'\\]*(?:\\.[^'\\]*)*'|"[^"\\]*(?:\\.[^"\\]*)*\"""", re.DOTALL)
_LEADING_HEADING = re.compile(r"([A-Z][A-Z/&-]+(?: (?:AND|OF|[A-Z][A-Z/&-]+))*)\s+(?=\S)")


def read(path: Path, options: dict | None = None) -> Iterator[Item]:
    name = str(path)
    rows = _jsonl_rows(path) if ".jsonl" in path.name else _csv_rows(path)
    position = 0
    try:
        for title, sentences in rows:
            position += 1
            if sentences is None:
                yield Fault(name, position, MALFORMED, "abstract is not a list of sentences")
                continue
            sections = sections_of(sentences)
            if has_invalid_bytes(title, *(text for _, text in sections)):
                yield invalid_bytes_fault(name, position)
            else:
                yield RawRecord(FORMAT, name, position, title=title, sections=sections)
    except (csv.Error, json.JSONDecodeError) as exc:
        yield Fault(name, position + 1, MALFORMED, f"malformed row: {exc}")


def _csv_rows(path: Path) -> Iterator[tuple[str, list[str] | None]]:
    with open_text(path, newline="") as fh:
        rows = csv.reader(fh)
        columns = resolve_columns(next(rows, []), {"text": "abstract", "title": "title"})
        for row in rows:
            yield row[columns["title"]], parse_array_repr(row[columns["text"]])


def _jsonl_rows(path: Path) -> Iterator[tuple[str, list[str] | None]]:
    with open_text(path) as fh:
        for line in fh:
            if line.strip():
                row = json.loads(line)
                sentences = row.get("abstract")
                yield row.get("title") or "", sentences if isinstance(sentences, list) else None


def parse_array_repr(text: str) -> list[str] | None:
    """The strings of a NumPy array print-out (``['a' 'b']``), or None if it is not one."""
    body = text.strip()
    if not (body.startswith("[") and body.endswith("]")):
        return None
    out = []
    for m in _LITERAL.finditer(body):
        literal = m.group(0)
        out.append(literal[1:-1] if "\\" not in literal else ast.literal_eval(literal))
    return out


def sections_of(sentences: list[str]) -> list[tuple[str | None, str]]:
    """Group sentences under the headings some of them start with; one unlabelled section if none."""
    sections: list[tuple[str | None, list[str]]] = [(None, [])]
    for sentence in sentences:
        m = _LEADING_HEADING.match(sentence)
        label = canonical_label(m.group(1)) if m else UNASSIGNED
        if label != UNASSIGNED:
            sections.append((label, [sentence[m.end():]]))
        else:
            sections[-1][1].append(sentence)
    return labelled_or_plain([(label, " ".join(parts)) for label, parts in sections if parts])
