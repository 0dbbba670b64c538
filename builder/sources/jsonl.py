"""JSON Lines in the project's own ``Abstract`` schema (e.g. a previous ingest's output, exported).

Each line is an object with ``text`` (or ``abstract``) and optionally ``title``, ``pmid``, ``doi``,
``pmcid``, ``year``, ``journal``, ``mesh_terms``, ``sections`` (character offsets into ``text``)
and ``domain`` (kept as the record's pinned domain). The text may also come structured, as corpora export
abstracts: a mapping of section label to text (``{"BACKGROUND": "…", "RESULTS": "…"}``) or a list of
paragraphs. ``article_uid`` and ``merged_from`` are recomputed by de-duplication.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from biodivergence_dataset.ontology import DOMAIN_NAMES

from .raw_records import (
    MALFORMED,
    Fault,
    Item,
    RawRecord,
    canonical_label,
    clean_doi,
    clean_mesh,
    clean_pmcid,
    clean_pmid,
    has_invalid_bytes,
    invalid_bytes_fault,
    labelled_or_plain,
    open_text,
    parse_year,
    split_inline_sections,
)

FORMAT = "jsonl"
PATTERNS = ("*.jsonl", "*.jsonl.gz", "*.ndjson")


def read(path: Path, options: dict | None = None) -> Iterator[Item]:
    name = str(path)
    position = 0
    with open_text(path) as fh:
        for line in fh:
            if not line.strip():
                continue
            position += 1
            yield _record(line, name, position)


def _record(line: str, path: str, position: int) -> Item:
    if has_invalid_bytes(line):
        return invalid_bytes_fault(path, position)
    try:
        row = json.loads(line)
    except json.JSONDecodeError as exc:
        return Fault(path, position, MALFORMED, f"not valid JSON: {exc.msg}")
    if not isinstance(row, dict):
        return Fault(path, position, MALFORMED, "line is not a JSON object")
    text = row.get("text") or row.get("abstract") or ""
    domain = row.get("domain")
    if isinstance(text, list) and all(isinstance(part, str) for part in text):
        text = "\n".join(text)  # paragraphs
    if isinstance(text, dict):
        if (parts := _structured(text)) is None:
            return Fault(path, position, MALFORMED, "a structured 'text' must map section labels to strings")
        sections = labelled_or_plain(parts)
    elif not isinstance(text, str):
        return Fault(path, position, MALFORMED, f"field 'text' is {type(text).__name__}, not a string")
    else:
        try:
            sections = _sections(text, row.get("sections"))
        except (KeyError, TypeError, AttributeError) as exc:
            return Fault(path, position, MALFORMED, f"bad 'sections' entry: {exc!r}")
    mesh = row.get("mesh_terms")
    if mesh is not None and not isinstance(mesh, list):
        return Fault(path, position, MALFORMED, f"field 'mesh_terms' is {type(mesh).__name__} {mesh!r:.40}, not a list")
    try:
        return _raw_record(row, path, position, sections, domain)
    except (TypeError, AttributeError, ValueError) as exc:  # a field of the wrong type ("mesh_terms": 5)
        return Fault(path, position, MALFORMED, f"a field has the wrong type: {exc}")


def _raw_record(row: dict[str, Any], path: str, position: int, sections: list[tuple[str | None, str]],
                domain: Any) -> RawRecord:
    return RawRecord(
        FORMAT, path, position,
        pmid=clean_pmid(row.get("pmid")),
        doi=clean_doi(row.get("doi")),
        pmcid=clean_pmcid(row.get("pmcid")),
        title=row.get("title") or "",
        sections=sections,
        year=parse_year(row.get("year")),
        journal=row.get("journal") or None,
        mesh_terms=[clean_mesh(m) for m in row.get("mesh_terms") or [] if isinstance(m, str)],
        domain=domain if domain in DOMAIN_NAMES else None,
    )


def _structured(text: dict) -> list[tuple[str, str]] | None:
    """The ``(label, body)`` parts of a text given as section label → body; None when a body is not a string."""
    if not all(isinstance(body, str) for body in text.values()):
        return None
    return [(canonical_label(str(label), str(label)), body) for label, body in text.items() if body.strip()]


def _sections(text: str, sections: Any) -> list[tuple[str | None, str]]:
    """Cut ``text`` at the given section offsets (gaps become unlabelled parts)."""
    if not sections:
        return split_inline_sections(text)
    parts, cursor = [], 0
    for s in sorted(sections, key=lambda s: s["start"]):
        if s["start"] > cursor and text[cursor:s["start"]].strip():
            parts.append((None, text[cursor:s["start"]]))
        label = s.get("label")
        parts.append((canonical_label(label, label) if label else None, text[s["start"]:s["end"]]))
        cursor = max(cursor, s["end"])
    if text[cursor:].strip():
        parts.append((None, text[cursor:]))
    return labelled_or_plain([(label, body) for label, body in parts if body.strip()])
