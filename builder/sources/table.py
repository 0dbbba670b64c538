"""CSV / TSV tables with a column mapping, so any table of abstracts can be ingested.

Options (``csv[text=Abstract,pmid=PMID]:file.csv`` or a ``columns:`` mapping in YAML) map the
fields ``text``, ``title``, ``pmid``, ``doi``, ``pmcid``, ``year``, ``journal`` and ``mesh``
(``;``-separated) to column names or 0-based column numbers; unmapped fields are found by common
column names (``abstract``, ``pubmed_id``, ``publish_time`` …). ``header=false`` reads a file
without a header row (then fields are mapped by number: ``tsv[pmid=0,text=2,header=false]``); a
mapping made only of numbers implies it unless ``header=true`` is given. ``where=COLUMN:VALUE`` reads only the rows
whose COLUMN (a name, or a 0-based number) holds VALUE, as if the others were not in the file: a review's included
studies, ``cohen2006[where=label_included:1]``. ``cord19`` is the CORD-19 ``metadata.csv``
preset, ``cohen2006`` the Cohen 2006 drug-class review CSVs' (a row with an empty abstract is read with
no sections: ingest drops it as ``no_abstract``). Inline headings (``OBJECTIVE: …``) become sections. Rows need no identifier: a row
without one is identified by its content hash downstream.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path

from .raw_records import (
    MALFORMED,
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

FIELDS = ("text", "title", "pmid", "doi", "pmcid", "year", "journal", "mesh")
#: Column names tried (case-insensitively) for a field the mapping leaves out.
ALIASES: dict[str, tuple[str, ...]] = {
    "text": ("text", "abstract", "abstract_text", "abstracttext", "ab"),
    "title": ("title", "article_title", "ti"),
    "pmid": ("pmid", "pubmed_id", "pubmedid"),
    "doi": ("doi",),
    "pmcid": ("pmcid", "pmc_id", "pmc"),
    "year": ("year", "pub_year", "pubyear", "publication_year", "publish_time", "date"),
    "journal": ("journal", "journal_title", "source_title"),
    "mesh": ("mesh", "mesh_terms", "meshes"),
}
PRESETS: dict[str, dict[str, str]] = {
    "cord19": {"text": "abstract", "title": "title", "pmid": "pubmed_id", "doi": "doi", "pmcid": "pmcid",
               "year": "publish_time", "journal": "journal"},
    # the Cohen 2006 drug-class review CSVs (synergy-dataset): quoted multi-line abstracts, some empty
    "cohen2006": {"text": "abstract", "title": "title", "pmid": "pubmedID", "year": "year"},
}
PATTERNS = {"csv": ("*.csv", "*.csv.gz"), "tsv": ("*.tsv", "*.tsv.gz", "*.tab"), "cord19": ("*.csv", "*.csv.gz"),
            "cohen2006": ("*.csv",)}

csv.field_size_limit(1 << 30)  # a 1 MB abstract must reach the too_long check, not a csv.Error


def reader_for(fmt: str):
    """The ``read(path, options)`` function of table format ``fmt`` (csv, tsv or cord19)."""
    delimiter = "\t" if fmt == "tsv" else ","

    def read(path: Path, options: dict | None = None) -> Iterator[Item]:
        options = options or {}
        mapping = {**PRESETS.get(fmt, {}), **{k: v for k, v in options.items() if k in FIELDS}}
        return read_table(path, fmt, delimiter, mapping, has_header(options, mapping), options.get("where"))

    return read


def has_header(options: dict[str, str], mapping: dict[str, str]) -> bool:
    """The ``header`` option; by default a file has a header unless every mapped column is a number."""
    value = options.get("header")
    if value is None:
        return not mapping or not all(v.strip().isdigit() for v in mapping.values())
    if value.strip().lower() not in ("true", "false"):
        raise ValueError(f"table option header={value!r}: expected true or false")
    return value.strip().lower() == "true"


def read_table(path: Path, source: str, delimiter: str, mapping: dict[str, str], header: bool = True,
               where: str | None = None) -> Iterator[Item]:
    name = str(path)
    position = 0
    try:
        with open_text(path, newline="") as fh:
            rows = csv.reader(fh, delimiter=delimiter)
            names = (next(rows, None) or []) if header else None
            columns = resolve_columns(names, mapping)
            if "text" not in columns:
                yield Fault(name, 1, MALFORMED, f"no abstract column among {names}; map one with "
                                                f"{source}[text=COLUMN]:PATH (a name, or a 0-based number)")
                return
            kept = row_filter(where, names, f"{name}: {source}")
            for row in rows:
                position += 1
                if kept(row):
                    yield _record(row, columns, source, name, position)
    except csv.Error as exc:
        yield Fault(name, position + 1, MALFORMED, f"malformed {source.upper()}: {exc}")


def row_filter(where: str | None, header: list[str] | None, where_read: str):
    """The ``where=COLUMN:VALUE`` option as a test of a row (every row passes without it); ValueError naming
    ``where_read`` (the file and format) for an option that names no column of the file."""
    if not where:
        return lambda row: True
    column, sep, value = (part.strip() for part in where.partition(":"))
    i = column_number(column, header_index(header)) if sep and column else None
    if i is None:
        raise ValueError(f"{where_read} option where={where!r}: expected COLUMN:VALUE, COLUMN a 0-based number or "
                         f"a name in the header {header}")
    return lambda row: i < len(row) and row[i].strip() == value


def header_index(header: list[str] | None) -> dict[str, int]:
    """Each header name (stripped, lower-cased) -> its 0-based column number."""
    return {h.strip().lower(): i for i, h in enumerate(header or [])}


def column_number(wanted: str, index: dict[str, int]) -> int | None:
    """The column ``wanted`` names: a 0-based number, or a name of ``index`` (``header_index``) in any case;
    None when the header lacks the name."""
    wanted = wanted.strip()
    return int(wanted) if wanted.isdigit() else index.get(wanted.lower())


def resolve_columns(header: list[str] | None, mapping: dict[str, str]) -> dict[str, int]:
    """Field -> column index, from the explicit mapping (a name or a 0-based number) first, then the aliases.

    ``header`` None: the file has no header row, so only numbers can be mapped.
    """
    index = header_index(header)
    columns: dict[str, int] = {}
    for field in FIELDS:
        wanted = mapping.get(field)
        if wanted and wanted.strip().isdigit():
            columns[field] = int(wanted)
            continue
        if header is None:
            if wanted:
                raise csv.Error(f"column {wanted!r} (for {field}): a file without a header maps columns by "
                                f"0-based number")
            continue
        candidates = (wanted,) if wanted else ALIASES[field]
        for name in candidates:
            if (number := column_number(name, index)) is not None:
                columns[field] = number
                break
        else:
            if wanted:
                raise csv.Error(f"column {wanted!r} (for {field}) not in header {header}")
    return columns


def _record(row: list[str], columns: dict[str, int], source: str, path: str, position: int) -> Item:
    def cell(field: str) -> str | None:
        i = columns.get(field)
        return row[i].strip() if i is not None and i < len(row) and row[i].strip() else None

    text, title = cell("text") or "", cell("title") or ""
    if has_invalid_bytes(text, title):
        return invalid_bytes_fault(path, position)
    mesh = cell("mesh")
    return RawRecord(
        source, path, position,
        pmid=clean_pmid(cell("pmid")),
        doi=clean_doi(cell("doi")),
        pmcid=clean_pmcid(cell("pmcid")),
        title=title,
        sections=split_inline_sections(text),
        year=parse_year(cell("year")),
        journal=cell("journal"),
        mesh_terms=[clean_mesh(m) for m in mesh.split(";") if m.strip()] if mesh else [],
    )
