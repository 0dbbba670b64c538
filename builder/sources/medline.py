"""MEDLINE text format (PubMed's "MEDLINE" export / efetch ``rettype=medline``).

Records are blocks of ``TAG - value`` lines (tag padded to four characters, continuation lines
indented by six spaces) separated by blank lines. Used tags: PMID, TI, AB, DP, JT/TA, LID/AID
(``… [doi]``), PMC, MH. Inline headings in AB (``BACKGROUND: …``) become sections.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from .raw_records import (
    MISSING_ID,
    Fault,
    Item,
    RawRecord,
    clean_doi,
    clean_mesh,
    clean_pmcid,
    clean_pmid,
    has_invalid_bytes,
    invalid_bytes_fault,
    open_text,
    parse_year,
    split_inline_sections,
)

FORMAT = "medline"
PATTERNS = ("*.txt", "*.medline", "*.nbib", "*.txt.gz")


def read(path: Path, options: dict | None = None) -> Iterator[Item]:
    name = str(path)
    with open_text(path) as fh:
        for position, (fields, line) in enumerate(_blocks(fh), 1):
            yield _record(fields, name, position, line)


def _blocks(lines) -> Iterator[tuple[list[tuple[str, str]], int]]:
    """Yield ``([(tag, value), …], first_line)`` per record."""
    fields: list[tuple[str, str]] = []
    start = 0
    for n, raw in enumerate(lines, 1):
        line = raw.rstrip("\r\n")
        if not line.strip():
            if fields:
                yield fields, start
                fields = []
            continue
        if line.startswith("      ") and fields:
            tag, value = fields[-1]
            fields[-1] = (tag, f"{value} {line.strip()}")
        elif len(line) > 5 and line[4] == "-":
            if not fields:
                start = n
            fields.append((line[:4].strip(), line[5:].strip()))
    if fields:
        yield fields, start


def _record(fields: list[tuple[str, str]], path: str, position: int, line: int) -> Item:
    if has_invalid_bytes(*(v for _, v in fields)):
        return invalid_bytes_fault(path, position)
    first: dict[str, str] = {}
    doi: str | None = None
    mesh: list[str] = []
    for tag, value in fields:
        first.setdefault(tag, value)
        if tag in ("LID", "AID") and value.endswith("[doi]") and doi is None:
            doi = clean_doi(value)
        elif tag == "MH":
            mesh.append(clean_mesh(value))
    pmid = clean_pmid(first.get("PMID"))
    if pmid is None:
        return Fault(path, position, MISSING_ID, f"line {line}: record without a PMID")
    return RawRecord(
        FORMAT, path, position,
        pmid=pmid,
        doi=doi,
        pmcid=clean_pmcid(first.get("PMC")),
        title=first.get("TI", ""),
        sections=split_inline_sections(first.get("AB", "")),
        year=parse_year(first.get("DP")),
        journal=first.get("JT") or first.get("TA"),
        mesh_terms=mesh,
    )
