"""PubTator text format: ``PMID|t|title``, ``PMID|a|abstract``, then tab-separated annotation lines.

Documents are separated by blank lines (a change of PMID also starts a new one); annotation lines
are ignored. The format carries no year, journal or DOI.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from .raw_records import (
    MISSING_ID,
    Fault,
    Item,
    RawRecord,
    clean_pmid,
    has_invalid_bytes,
    invalid_bytes_fault,
    open_text,
    split_inline_sections,
)

FORMAT = "pubtator"
PATTERNS = ("*.txt", "*.pubtator", "*.PubTator", "*.txt.gz")


def read(path: Path, options: dict | None = None) -> Iterator[Item]:
    name = str(path)
    with open_text(path) as fh:
        for position, (doc_id, title, abstract, line) in enumerate(_documents(fh), 1):
            yield _record(doc_id, title, abstract, name, position, line)


def _documents(lines) -> Iterator[tuple[str, str, str, int]]:
    doc_id, title, abstract, start = None, "", "", 0
    for n, raw in enumerate(lines, 1):
        line = raw.rstrip("\r\n")
        parts = line.split("|", 2)
        if len(parts) == 3 and parts[1] in ("t", "a"):
            if parts[0] != doc_id:
                if doc_id is not None:
                    yield doc_id, title, abstract, start
                doc_id, title, abstract, start = parts[0], "", "", n
            if parts[1] == "t":
                title = parts[2]
            else:
                abstract = parts[2]
        elif not line.strip() and doc_id is not None:
            yield doc_id, title, abstract, start
            doc_id = None
    if doc_id is not None:
        yield doc_id, title, abstract, start


def _record(doc_id: str, title: str, abstract: str, path: str, position: int, line: int) -> Item:
    if has_invalid_bytes(doc_id, title, abstract):
        return invalid_bytes_fault(path, position)
    pmid = clean_pmid(doc_id)
    if pmid is None:
        return Fault(path, position, MISSING_ID, f"line {line}: document id {doc_id!r} is not a PMID")
    return RawRecord(FORMAT, path, position, pmid=pmid, title=title, sections=split_inline_sections(abstract))
