"""PubMedQA JSON (``ori_pqal.json``, ``ori_pqaa.json``, ``ori_pqau.json``): one object keyed by PMID.

The abstract is rebuilt as the ``CONTEXTS`` (each labelled by its ``LABELS`` entry) followed by
``LONG_ANSWER`` as a ``CONCLUSIONS`` section (the abstract's conclusion, which PubMedQA holds
apart). ``QUESTION`` is not the title, so the title stays empty. The file is streamed item by item.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .raw_records import (
    CONCLUSIONS,
    MALFORMED,
    MISSING_ID,
    Fault,
    Item,
    JSONStreamError,
    RawRecord,
    canonical_label,
    clean_mesh,
    clean_pmid,
    has_invalid_bytes,
    invalid_bytes_fault,
    iter_json_object,
    open_text,
    parse_year,
)

FORMAT = "pubmedqa"
PATTERNS = ("*.json", "*.json.gz")


def read(path: Path, options: dict | None = None) -> Iterator[Item]:
    name = str(path)
    position = 0
    try:
        with open_text(path) as fh:
            for key, value in iter_json_object(fh):
                position += 1
                yield _record(key, value, name, position)
    except JSONStreamError as exc:
        yield Fault(name, position + 1, MALFORMED, f"after record {position}: {exc}")


def _record(key: str, value: Any, path: str, position: int) -> Item:
    if not isinstance(value, dict):
        return Fault(path, position, MALFORMED, f"entry {key!r} is not an object")
    contexts = value.get("CONTEXTS") or []
    labels = value.get("LABELS") or []
    answer = value.get("LONG_ANSWER") or ""
    if has_invalid_bytes(key, answer, *contexts):
        return invalid_bytes_fault(path, position)
    pmid = clean_pmid(key)
    if pmid is None:
        return Fault(path, position, MISSING_ID, f"key {key!r} is not a PMID")
    sections = [(canonical_label(labels[i] if i < len(labels) else None), text) for i, text in enumerate(contexts)]
    if answer.strip():
        sections.append((CONCLUSIONS, answer))
    return RawRecord(
        FORMAT, path, position,
        pmid=pmid,
        sections=sections,
        year=parse_year(value.get("YEAR")),
        mesh_terms=[clean_mesh(m) for m in value.get("MESHES") or [] if isinstance(m, str)],
    )
