"""What every reader yields, and the small helpers they share.

A reader is a generator ``read(path, options) -> Iterator[Item]`` over one non-empty file (the
registry reports empty files and streams that break off, e.g. a truncated gzip). It yields a
:class:`RawRecord` per article (text still raw: markup, entities, odd whitespace), a
:class:`Fault` for a record (or a whole file) it cannot read, and a :class:`Deletion` for a
PubMed ``DeleteCitation`` block. Faults are yielded, not raised, so that a reader can skip one
bad record and carry on; the ingest stage decides whether a fault stops the run (``--strict``).
Positions are 1-based record ordinals within the file.
"""

from __future__ import annotations

import gzip
import io
import json
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from biodivergence_dataset.ontology import SECTION_LABELS

BACKGROUND, OBJECTIVE, METHODS, RESULTS, CONCLUSIONS, UNASSIGNED = SECTION_LABELS


@dataclass(slots=True)
class RawRecord:
    """One article as read from a source, before normalisation.

    ``sections`` is a list of ``(label, text)``; ``label`` is one of
    ``ontology.SECTION_LABELS`` for a structured abstract and ``None`` for unlabelled text.
    """

    source: str
    path: str
    position: int
    pmid: str | None = None
    doi: str | None = None
    pmcid: str | None = None
    title: str = ""
    sections: list[tuple[str | None, str]] = field(default_factory=list)
    year: int | None = None
    journal: str | None = None
    mesh_terms: list[str] = field(default_factory=list)
    domain: str | None = None

    @property
    def origin(self) -> str:
        """``source:path:position``, as listed in ``Abstract.merged_from``."""
        return f"{self.source}:{self.path}:{self.position}"

    def wrong_type(self) -> str | None:
        """What is wrong with a field a reader filled with the wrong type (``"title": 123``), or None."""
        def named(name: str, value: Any, want: str) -> str:
            return f"field {name!r} is {type(value).__name__} {value!r:.40}, not {want}"

        for name in ("pmid", "doi", "pmcid", "journal", "domain"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                return named(name, value, "a string")
        if not isinstance(self.title, str):
            return named("title", self.title, "a string")
        if self.year is not None and (not isinstance(self.year, int) or isinstance(self.year, bool)):
            return named("year", self.year, "an integer")
        if not isinstance(self.mesh_terms, list) or not all(isinstance(m, str) for m in self.mesh_terms):
            return named("mesh_terms", self.mesh_terms, "a list of strings")
        if not isinstance(self.sections, list) or not all(
                isinstance(s, tuple) and len(s) == 2 and isinstance(s[1], str) and (s[0] is None or isinstance(s[0], str))
                for s in self.sections):
            return named("sections", self.sections, "a list of (label, text) pairs")
        return None


@dataclass(slots=True)
class Fault:
    """A record (or a whole file) that could not be read; ``reason`` is the drop reason."""

    path: str
    position: int
    reason: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: record {self.position}: {self.message}"


@dataclass(slots=True)
class Deletion:
    """PMIDs withdrawn by a PubMed ``DeleteCitation`` block."""

    path: str
    position: int
    pmids: list[str]


Item = RawRecord | Fault | Deletion

# Drop reasons of faults (shared by readers and the ingest stage).
MALFORMED = "malformed"
TRUNCATED = "truncated"
INVALID_BYTES = "invalid_bytes"
EMPTY_FILE = "empty_file"
MISSING_ID = "missing_id"
TOO_LONG = "too_long"

_GZIP_MAGIC = b"\x1f\x8b"


def open_binary(path: str | Path) -> IO[bytes]:
    """Open a file for reading bytes, transparently un-gzipping it (detected by its magic number)."""
    with open(path, "rb") as fh:
        gzipped = fh.read(2) == _GZIP_MAGIC
    return gzip.open(path, "rb") if gzipped else open(path, "rb")


def open_text(path: str | Path, newline: str | None = None) -> IO[str]:
    """Open a (possibly gzipped) UTF-8 text file; undecodable bytes become lone surrogates.

    Readers check each record with :func:`has_invalid_bytes`, so one bad byte costs one record,
    not the rest of the file.
    """
    return io.TextIOWrapper(open_binary(path), encoding="utf-8-sig", errors="surrogateescape", newline=newline)


_SURROGATE = re.compile("[\udc80-\udcff]")


def has_invalid_bytes(*texts: str | None) -> bool:
    return any(t and _SURROGATE.search(t) for t in texts)


def invalid_bytes_fault(path: str, position: int) -> Fault:
    return Fault(path, position, INVALID_BYTES, "contains bytes that are not valid UTF-8")


def stream_error_fault(path: str, position: int, exc: BaseException) -> Fault:
    """A fault for an exception raised while reading the file itself (truncated gzip, I/O error)."""
    return Fault(path, position, TRUNCATED,
                 f"file ends or breaks off after record {position - 1} ({type(exc).__name__}: {exc})")


#: Exceptions raised by a truncated or corrupt (gzip) stream.
READ_ERRORS = (EOFError, OSError, zlib.error)

# ---------------------------------------------------------------------------------------------
# identifiers and dates

_DOI = re.compile(r"10\.\d{4,9}/\S+")
_DIGITS = re.compile(r"\d+")
_YEAR = re.compile(r"(?<!\d)(1[89]\d\d|20\d\d)(?!\d)")


def clean_doi(value: Any) -> str | None:
    """A bare DOI (``10.x/y``), lower-cased (DOIs are case-insensitive), or None."""
    if not value:
        return None
    m = _DOI.search(str(value))
    return m.group(0).rstrip(".,;").lower() if m else None


def clean_pmid(value: Any) -> str | None:
    """A PMID as a digit string without leading zeros, or None."""
    if value is None:
        return None
    text = str(value).strip()
    text = text.removesuffix(".0")  # a PMID column read as float
    m = _DIGITS.fullmatch(text.removeprefix("PMID:").strip())
    return str(int(m.group(0))) if m and int(m.group(0)) > 0 else None


def clean_pmcid(value: Any) -> str | None:
    """A PMCID as ``PMC<digits>``, or None."""
    if not value:
        return None
    text = str(value).strip().upper()
    digits = text.removeprefix("PMC")
    return f"PMC{int(digits)}" if digits.isdigit() else None


def parse_year(value: Any) -> int | None:
    """The first plausible year in ``value`` (``2018``, ``1978 Jul-Sep``, ``04-07-2020``)."""
    if value is None:
        return None
    if isinstance(value, int):
        return value if 1800 <= value <= 2099 else None
    m = _YEAR.search(str(value))
    return int(m.group(1)) if m else None


def clean_mesh(term: str) -> str:
    """A MeSH descriptor name without the major-topic star or ``/qualifier`` suffix."""
    return term.strip().lstrip("*").split("/", 1)[0].strip()


# ---------------------------------------------------------------------------------------------
# structured-abstract section labels

#: (keywords, category); the first rule whose keyword occurs in the upper-cased label wins, so
#: "METHODS AND RESULTS" is RESULTS and "MAIN OUTCOME MEASURES" is METHODS.
_LABEL_RULES: tuple[tuple[tuple[str, ...], str], ...] = (
    (("RESULT", "FINDING", "DATA SYNTHESIS", "OBSERVATION"), RESULTS),
    (("CONCLU", "INTERPRETATION", "IMPLICATION", "DISCUSSION", "SIGNIFICANCE", "RELEVANCE", "TAKE-HOME",
      "PERSPECTIVE"), CONCLUSIONS),
    (("METHOD", "DESIGN", "SETTING", "PATIENT", "PARTICIPANT", "SUBJECT", "MATERIAL", "MEASURE",
      "INTERVENTION", "POPULATION", "DATA SOURCE", "DATA EXTRACTION", "DATA COLLECTION", "STUDY SELECTION",
      "ELIGIBILITY", "SAMPLE", "PROCEDURE", "CASE", "ANALYS", "APPROACH", "EXPOSURE"), METHODS),
    (("OBJECT", "AIM", "PURPOSE", "GOAL", "HYPOTHES", "QUESTION"), OBJECTIVE),
    (("BACKGROUND", "INTRODUCTION", "CONTEXT", "RATIONALE", "IMPORTANCE", "ISSUE", "PROBLEM",
      "MOTIVATION"), BACKGROUND),
)
_KNOWN_CATEGORIES = frozenset(SECTION_LABELS)


def canonical_label(label: str | None, nlm_category: str | None = None) -> str:
    """Map a source's section label (and PubMed's NlmCategory, preferred) to ``SECTION_LABELS``."""
    if nlm_category and nlm_category.upper() in _KNOWN_CATEGORIES:
        return nlm_category.upper()
    upper = (label or "").upper()
    for keywords, category in _LABEL_RULES:
        if any(k in upper for k in keywords):
            return category
    return UNASSIGNED


_INLINE_HEADING = re.compile(r"\b([A-Z][A-Z/&-]+(?:,? [A-Z][A-Z/&-]*){0,5}):\s+")


def split_inline_sections(text: str) -> list[tuple[str | None, str]]:
    """Split ``"BACKGROUND: … METHODS: …"`` into labelled sections.

    A heading is an upper-case phrase ending in a colon, at the start of the text or of a
    sentence, that maps to a known category (so ``HIV: …`` does not count); the text must start
    with one. Otherwise the whole text is one unlabelled section.
    """
    if ":" not in text:
        return [(None, text)] if text.strip() else []
    cuts = [m for m in _INLINE_HEADING.finditer(text)
            if _starts_sentence(text, m.start()) and canonical_label(m.group(1)) != UNASSIGNED]
    if not cuts or text[: cuts[0].start()].strip():
        return [(None, text)] if text.strip() else []
    sections = []
    for i, m in enumerate(cuts):
        end = cuts[i + 1].start() if i + 1 < len(cuts) else len(text)
        body = text[m.end():end]
        if body.strip():
            sections.append((canonical_label(m.group(1)), body))
    return sections


def _starts_sentence(text: str, i: int) -> bool:
    before = text[max(0, i - 3):i].rstrip(" \t")
    return not before or before[-1] in ".!?)]\n\r"


def labelled_or_plain(sections: list[tuple[str | None, str]]) -> list[tuple[str | None, str]]:
    """If any section carries a label, give the unlabelled ones ``UNASSIGNED`` (keeps offsets complete)."""
    if any(label for label, _ in sections):
        return [(label or UNASSIGNED, text) for label, text in sections]
    return sections


# ---------------------------------------------------------------------------------------------
# streaming JSON (objects and arrays, one value at a time) without loading the file

_SPACE = re.compile(r"\s*")
_SEPARATOR = re.compile(r"[\s,]*")


class JSONStreamError(ValueError):
    """The JSON stream is malformed or ends early; ``offset`` is the character offset."""

    def __init__(self, message: str, offset: int):
        super().__init__(f"{message} (at character {offset})")
        self.offset = offset


class JSONCursor:
    """A forward-only reader of a JSON text: step into objects and arrays, decode one value at a time.

    ``members()`` (after ``enter("{")``) yields each key and ``elements()`` (after ``enter("[")``) yields
    once per element; the caller consumes the value (``decode()``, or ``enter`` and walk it) before
    asking for the next. Memory stays at one read chunk plus the largest value decoded.
    """

    def __init__(self, fh: IO[str], chunk_size: int = 1 << 20):
        self._fh, self._chunk_size = fh, chunk_size
        self._decoder = json.JSONDecoder()
        self._buf, self._pos, self._consumed, self._eof = "", 0, 0, False

    def _more(self) -> bool:
        data = self._fh.read(self._chunk_size)
        if not data:
            self._eof = True
            return False
        self._consumed += self._pos
        self._buf, self._pos = self._buf[self._pos:] + data, 0
        return True

    def _error(self, message: str) -> JSONStreamError:
        return JSONStreamError(message, self._consumed + self._pos)

    def _skip(self, pattern: re.Pattern) -> str:
        """Skip what ``pattern`` matches; return the next character ("" at the end)."""
        while True:
            self._pos = pattern.match(self._buf, self._pos).end()
            if self._pos < len(self._buf) or self._eof or not self._more():
                return self._buf[self._pos] if self._pos < len(self._buf) else ""

    def peek(self) -> str:
        """The next non-space character ("" at the end of the text)."""
        return self._skip(_SPACE)

    def enter(self, bracket: str) -> None:
        """Step over the opening ``{`` or ``[`` of the next value."""
        if self.peek() != bracket:
            raise self._error(f"expected {bracket!r}")
        self._pos += 1

    def decode(self) -> Any:
        """Decode the next whole value."""
        self.peek()
        while True:
            try:
                value, end = self._decoder.raw_decode(self._buf, self._pos)
            except json.JSONDecodeError as exc:
                if self._eof or not self._more():
                    raise JSONStreamError(f"malformed or truncated JSON: {exc.msg}", self._consumed + exc.pos) from None
                continue
            if end == len(self._buf) and not self._eof and self._more():  # a number may continue
                continue
            self._pos = end
            return value

    def _entries(self, close: str, kind: str) -> Iterator[str]:
        """The first character of each entry of the container just entered, until ``close``."""
        while True:
            nxt = self._skip(_SEPARATOR)
            if nxt == close:
                self._pos += 1
                return
            if not nxt:
                raise self._error(f"malformed or truncated JSON {kind}")
            yield nxt

    def members(self) -> Iterator[str]:
        """Each key of the object just entered; the caller consumes its value before the next."""
        for nxt in self._entries("}", "object"):
            if nxt != '"':
                raise self._error("malformed or truncated JSON object")
            key = self.decode()
            if self.peek() != ":":
                raise self._error("expected ':' after a key")
            self._pos += 1
            yield key

    def elements(self) -> Iterator[None]:
        """Once per element of the array just entered; the caller consumes each element."""
        for _ in self._entries("]", "array"):
            yield None


def iter_json_object(fh: IO[str], chunk_size: int = 1 << 20) -> Iterator[tuple[str, Any]]:
    """Yield ``(key, value)`` of a top-level JSON object one item at a time."""
    cursor = JSONCursor(fh, chunk_size)
    cursor.enter("{")
    for key in cursor.members():
        yield key, cursor.decode()
