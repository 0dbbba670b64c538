"""Europe PMC REST search responses in JSON (``resultType=core`` or ``lite``).

A file holds one response page (``{"resultList": {"result": [...]}, ...}``) or a list of pages.
Records need a PMID, PMCID or DOI (preprints carry only a DOI). ``abstractText`` marks structured
abstracts with ``<h4>Label</h4>`` headings, which become sections; ``lite`` results have no
abstract and are dropped downstream with reason ``no_abstract``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .raw_records import (
    MALFORMED,
    MISSING_ID,
    Fault,
    Item,
    JSONCursor,
    JSONStreamError,
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

FORMAT = "europepmc_json"
PATTERNS = ("*.json", "*.json.gz")

_HEADING = re.compile(r"<h[1-6][^>]*>(.*?)</h[1-6]>", re.IGNORECASE | re.DOTALL)


def read(path: Path, options: dict | None = None) -> Iterator[Item]:
    """Stream the results one at a time, so a file that breaks off keeps every result before the break."""
    name = str(path)
    position = 0
    try:
        with open_text(path) as fh:
            for result in _results(JSONCursor(fh)):
                if result is None:
                    yield Fault(name, position + 1, MALFORMED, "not a Europe PMC search response (no resultList.result)")
                    return
                position += 1
                yield _record(result, name, position)
    except JSONStreamError as exc:
        yield Fault(name, position + 1, MALFORMED, f"after record {position}: {exc}")


def _results(cursor: JSONCursor) -> Iterator[Any]:
    """Each result of a response page or a list of pages; None for a page without ``resultList.result``."""
    if cursor.peek() == "[":
        cursor.enter("[")
        for _ in cursor.elements():
            yield from _page_results(cursor)
    else:
        yield from _page_results(cursor)


def _page_results(cursor: JSONCursor) -> Iterator[Any]:
    if cursor.peek() != "{":
        cursor.decode()
        yield None
        return
    cursor.enter("{")
    found = False
    for key in cursor.members():
        if key == "resultList" and cursor.peek() == "{":
            cursor.enter("{")
            for inner in cursor.members():
                if inner == "result" and cursor.peek() == "[":
                    found = True
                    cursor.enter("[")
                    for _ in cursor.elements():
                        yield cursor.decode()
                else:
                    cursor.decode()
        else:
            cursor.decode()
    if not found:
        yield None


def _record(result: Any, path: str, position: int) -> Item:
    if not isinstance(result, dict):
        return Fault(path, position, MALFORMED, "result is not an object")
    title, abstract = result.get("title") or "", result.get("abstractText") or ""
    if has_invalid_bytes(title, abstract):
        return invalid_bytes_fault(path, position)
    pmid, pmcid, doi = clean_pmid(result.get("pmid")), clean_pmcid(result.get("pmcid")), clean_doi(result.get("doi"))
    if not (pmid or pmcid or doi):
        return Fault(path, position, MISSING_ID, f"result {result.get('id')!r} has no PMID, PMCID or DOI")
    return RawRecord(
        FORMAT, path, position,
        pmid=pmid, doi=doi, pmcid=pmcid,
        title=title,
        sections=_sections(abstract),
        year=parse_year(result.get("pubYear")) or parse_year(result.get("firstPublicationDate")),
        journal=_journal(result),
        mesh_terms=[clean_mesh(h["descriptorName"]) for h in
                    (result.get("meshHeadingList") or {}).get("meshHeading", []) if h.get("descriptorName")],
    )


def _sections(abstract: str) -> list[tuple[str | None, str]]:
    """Split on ``<h4>`` headings; plain abstracts may still carry ``BACKGROUND:``-style headings."""
    parts = _HEADING.split(abstract)
    if len(parts) == 1:
        return split_inline_sections(abstract)
    sections = [(None, parts[0])] if parts[0].strip() else []
    for label, body in zip(parts[1::2], parts[2::2]):
        if body.strip():
            sections.append((canonical_label(label), body))
    return labelled_or_plain(sections)


def _journal(result: dict) -> str | None:
    info = result.get("journalInfo") or {}
    title = (info.get("journal") or {}).get("title") or result.get("journalTitle")
    return title.strip() if title else None
