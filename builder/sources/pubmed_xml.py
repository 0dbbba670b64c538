"""PubMed / MEDLINE XML (``PubmedArticleSet``; ``.xml`` or ``.xml.gz``; baseline, update or efetch).

The byte stream is cut at ``<PubmedArticle>``, ``<PubmedBookArticle>`` and ``<DeleteCitation>``
boundaries and each element is parsed on its own with lxml, so memory stays at one read block
however large the file, and a bad byte or a truncation costs one record, not the rest of the file
(a record that breaks off before the next one starts ends there, and reading resumes at that start tag).
Structured abstracts keep their sections (``NlmCategory`` preferred over ``Label``); inline
markup (``<i>``, ``<sub>``, MathML …) is flattened to its text, with ``^`` before a superscript
that follows a digit (``10<sup>-5</sup>`` → ``10^-5``, also across a line break).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from lxml import etree

from .raw_records import (
    MALFORMED,
    MISSING_ID,
    TRUNCATED,
    Deletion,
    Fault,
    Item,
    RawRecord,
    canonical_label,
    clean_doi,
    clean_mesh,
    clean_pmcid,
    clean_pmid,
    invalid_bytes_fault,
    labelled_or_plain,
    open_binary,
    parse_year,
)

FORMAT = "pubmed_xml"
PATTERNS = ("*.xml", "*.xml.gz")
BLOCK_SIZE = 1 << 20

_START = re.compile(rb"<(PubmedArticle|PubmedBookArticle|DeleteCitation)[\s>]")
_ROOT = b"<PubmedArticleSet"
_ROOT_END = b"</PubmedArticleSet>"
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True, remove_comments=True)


def read(path: Path, options: dict | None = None) -> Iterator[Item]:
    """Yield one RawRecord per article, a Deletion per DeleteCitation block, Faults for bad parts."""
    name = str(path)
    for position, (tag, chunk, line) in enumerate(_elements(path), 1):
        if tag is None:  # a problem with the file itself, reported by _elements
            yield Fault(name, position, chunk[0], f"line {line}: {chunk[1]}")
            return
        yield _parse(tag, chunk, name, position, line)


def _elements(path: Path) -> Iterator[tuple]:
    """Yield ``(tag, bytes, line)`` per top-level element; ``(None, (reason, message), line)`` on a file fault.

    Blocks are read with ``read1`` so that a truncated gzip stream still delivers everything
    decompressed before the break (a plain ``read`` of a large block would raise and lose it).
    """
    with open_binary(path) as fh:
        buf = b""
        while len(buf) < 4096:
            data = fh.read1(BLOCK_SIZE)
            if not data:
                break
            buf += data
        if _ROOT not in buf:
            yield None, (MALFORMED, "not a PubMed XML file (no <PubmedArticleSet>)"), 1
            return
        pos, line, counted_to, eof = 0, 1, 0, False
        while True:
            m = _START.search(buf, pos)
            if m:
                tag = m.group(1)
                end = buf.find(b"</" + tag + b">", m.end())
                if end >= 0:
                    line += buf.count(b"\n", counted_to, m.start())
                    counted_to = m.start()
                    stop = end + len(tag) + 3
                    unclosed = _START.search(buf, m.end(), end)
                    if unclosed:  # the record breaks off; the next one starts at its own start tag
                        stop = unclosed.start()
                    yield tag.decode(), buf[m.start():stop], line
                    pos = stop
                    continue
            if eof:
                break
            data = fh.read1(BLOCK_SIZE)
            if not data:
                eof = True
                continue
            keep = m.start() if m else max(pos, len(buf) - 64)  # keep a possibly split start tag
            line += buf.count(b"\n", counted_to, keep)
            buf, pos, counted_to = buf[keep:] + data, 0, 0
        line += buf.count(b"\n", counted_to, len(buf))
        rest = buf[pos:]
        if _START.search(rest):
            yield None, (TRUNCATED, "file ends inside this record (truncated XML)"), line
        elif _ROOT_END not in rest:
            yield None, (TRUNCATED, "file ends without </PubmedArticleSet> (truncated XML)"), line


def _without_references(chunk: bytes) -> bytes:
    """Drop ``PubmedData/ReferenceList`` (often most of a modern record's bytes, never used here)."""
    start = chunk.find(b"<ReferenceList")
    if start < 0:
        return chunk
    end = chunk.rfind(b"</ReferenceList>")
    return chunk[:start] + chunk[end + len(b"</ReferenceList>"):] if end > start else chunk


def _parse(tag: str, chunk: bytes, path: str, position: int, line: int) -> Item:
    if tag == "PubmedArticle":
        chunk = _without_references(chunk)
    try:
        element = etree.fromstring(chunk, _PARSER)
    except etree.XMLSyntaxError as exc:
        try:
            chunk.decode("utf-8")
        except UnicodeDecodeError as bad:
            fault = invalid_bytes_fault(path, position)
            fault.message += f" (line {line}, byte {bad.start} of the record)"
            return fault
        return Fault(path, position, MALFORMED, f"line {line}: malformed XML: {exc}")
    if tag == "DeleteCitation":
        return Deletion(path, position, [p for p in (clean_pmid(e.text) for e in element.iter("PMID")) if p])
    record = _article(element, path, position) if tag == "PubmedArticle" else _book(element, path, position)
    if record.pmid is None:
        return Fault(path, position, MISSING_ID, f"line {line}: article without a PMID")
    return record


def _article(element: etree._Element, path: str, position: int) -> RawRecord:
    citation = element.find("MedlineCitation")
    article = citation.find("Article") if citation is not None else None
    if article is None:
        return RawRecord(FORMAT, path, position)
    ids = _article_ids(element.find("PubmedData/ArticleIdList"))
    doi = ids.get("doi") or clean_doi(article.findtext("ELocationID[@EIdType='doi']"))
    issue = article.find("Journal/JournalIssue/PubDate")
    year = _year(issue) or parse_year(article.findtext("ArticleDate/Year"))
    return RawRecord(
        FORMAT, path, position,
        pmid=clean_pmid(citation.findtext("PMID")),
        doi=doi,
        pmcid=ids.get("pmc"),
        title=flatten(article.find("ArticleTitle")),
        sections=_abstract(article.find("Abstract")),
        year=year,
        journal=(article.findtext("Journal/Title") or "").strip() or None,
        mesh_terms=[clean_mesh(d.text) for d in citation.iterfind("MeshHeadingList/MeshHeading/DescriptorName")
                    if d.text],
    )


def _book(element: etree._Element, path: str, position: int) -> RawRecord:
    doc = element.find("BookDocument")
    if doc is None:
        return RawRecord(FORMAT, path, position)
    ids = _article_ids(element.find("PubmedBookData/ArticleIdList"))
    return RawRecord(
        FORMAT, path, position,
        pmid=clean_pmid(doc.findtext("PMID")),
        doi=ids.get("doi"),
        title=flatten(doc.find("ArticleTitle")) or flatten(doc.find("Book/BookTitle")),
        sections=_abstract(doc.find("Abstract")),
        year=_year(doc.find("Book/PubDate")),
    )


def _article_ids(id_list: etree._Element | None) -> dict[str, str]:
    found: dict[str, str] = {}
    for aid in id_list.iterfind("ArticleId") if id_list is not None else ():
        kind = aid.get("IdType")
        if kind == "doi" and aid.text:
            found.setdefault("doi", clean_doi(aid.text))
        elif kind == "pmc" and aid.text:
            found.setdefault("pmc", clean_pmcid(aid.text))
    return {k: v for k, v in found.items() if v}


def _year(date: etree._Element | None) -> int | None:
    if date is None:
        return None
    return parse_year(date.findtext("Year")) or parse_year(date.findtext("MedlineDate"))


def _abstract(abstract: etree._Element | None) -> list[tuple[str | None, str]]:
    if abstract is None:
        return []
    sections = []
    for part in abstract.iterfind("AbstractText"):
        text = flatten(part)
        if text.strip():
            label, category = part.get("Label"), part.get("NlmCategory")
            sections.append((canonical_label(label, category) if (label or category) else None, text))
    return labelled_or_plain(sections)


def flatten(element: etree._Element | None) -> str:
    """The text of an element with its inline markup flattened (``^`` before a superscript after a digit)."""
    if element is None:
        return ""
    if len(element) == 0:
        return element.text or ""
    parts: list[str] = []
    _walk(element, parts)
    return "".join(parts)


def _walk(element: etree._Element, parts: list[str]) -> None:
    if element.text:
        parts.append(element.text)
    for child in element:
        if child.tag == "sup" and parts and parts[-1].rstrip()[-1:].isdigit():
            parts[-1] = parts[-1].rstrip()
            parts.append("^")
        _walk(child, parts)
        if child.tail:
            parts.append(child.tail)
