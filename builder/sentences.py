"""Rule-based sentence splitting for biomedical abstracts, with no downloaded data.

Returns character spans into the text it is given, so claims keep offsets into the
normalised abstract. A boundary is a ``.``/``!``/``?`` (plus closing quotes or brackets)
followed by whitespace and a sentence-like start: an upper-case letter, a digit, an opening
bracket, or a mixed-case/digit token such as ``mRNA`` or ``p53``. Decimals (``0.05``),
genus abbreviations (``E. coli``: lower-case word follows) and the abbreviations listed
below (``et al.``, ``vs.``, ``i.e.``, ``Fig.`` …) are never boundaries.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable

#: Words that end with a period without ending the sentence (compared lower-case, no period).
ABBREVIATIONS = frozenset({
    "al", "vs", "v", "i.e", "e.g", "cf", "fig", "figs", "no", "nos", "approx", "ca", "resp", "ref", "refs",
    "dr", "mr", "mrs", "ms", "prof", "st", "sp", "spp", "subsp", "var", "vol", "pp", "inc", "ltd", "co",
    "corp", "ed", "eds", "est", "viz", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept",
    "oct", "nov", "dec", "min", "max", "sec", "mo", "yr", "yrs", "wk", "wks", "hr", "hrs", "temp",
    "univ", "dept", "div", "diam", "conc", "ser", "str", "subgen", "gen", "sub", "cv", "cvs",
})

_BOUNDARY = re.compile(r"[.!?]+[\"'\u201d\u2019)\]]*(?=\s+(?:[\[(\"'\u201c\u2018]?[A-Z0-9]|[a-z]+[A-Z0-9]))")
_PARAGRAPH = re.compile(r"\n\s*\n")
_LAST_TOKEN = re.compile(r"(\S+?)[\"'\u201d\u2019)\]]*[.!?]+[\"'\u201d\u2019)\]]*$")
#: An inline structured-abstract heading at the start of a sentence: ``RESULTS: ``, ``Methods: ``, or an
#: upper-case run without punctuation (``PATIENTS AND METHODS Two hundred…``).
HEADING = re.compile(r"([A-Z][A-Za-z]+(?: (?:and|AND|&) [A-Z][A-Za-z]+| [A-Z]{2,}){0,3})(\s*[:.]\s+|\s+)(?=\S)")
_MAX_HEADING_WORDS = 4
#: An upper-case heading with its colon inside a sentence span, where the text before it lacks a full stop
#: ("… the Netherlands RESULTS: Prednisolone …", as flattened full-text abstracts have it).
_EMBEDDED_HEADING = re.compile(r"(?<=\S )([A-Z]{3,}(?: (?:AND|&) [A-Z]{3,}){0,2}):\s")


_SPLIT_DECIMAL = re.compile(r"(?<![\w.])(?:0\.\s+\d|\d+\.\s+(?:0\d*|\d+\s?%))")


def _is_split_decimal(text: str, end: int) -> bool:
    """A decimal written with a space after its point, as tokenised corpora do: "0. 5", "1. 09%", "3. 5 %"."""
    start = end - 1
    while start > 0 and text[start - 1].isdigit():
        start -= 1
    return start < end - 1 and bool(_SPLIT_DECIMAL.match(text, start))


def _is_abbreviation(text: str, end: int) -> bool:
    """True when the punctuation ending at ``end`` closes an abbreviation rather than a sentence."""
    window = text[max(0, end - 20):end]
    m = _LAST_TOKEN.search(window)
    if m is None or text[end - 1] != ".":
        return False
    token = m.group(1).lstrip("([\"'").lower()
    if token in ABBREVIATIONS:
        return True
    # dotted short forms such as "i.e", "e.g", "a.m" (but not decimals such as "0.05")
    return "." in token and len(token.replace(".", "")) <= 3 and token.replace(".", "").isalpha()


def _trimmed(text: str, start: int, end: int) -> tuple[int, int] | None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if end > start else None


def split_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Sentence spans ``(start, end)`` (end-exclusive, whitespace-trimmed) of ``text[start:end]``."""
    end = len(text) if end is None else end
    spans: list[tuple[int, int]] = []
    cursor = start
    for para in pieces_between(_PARAGRAPH, text, start, end):
        cursor = para[0]
        for m in _BOUNDARY.finditer(text, para[0], para[1]):
            if _is_abbreviation(text, m.end()) or _is_split_decimal(text, m.end()):
                continue
            span = _trimmed(text, cursor, m.end())
            if span:
                spans.append(span)
            cursor = m.end()
        span = _trimmed(text, cursor, para[1])
        if span:
            spans.append(span)
    return spans


def heading_cuts(text: str, start: int, end: int, is_heading: Callable[[str], bool]) -> list[tuple[int, int]]:
    """``text[start:end]`` cut before each upper-case ``HEADING:`` inside it that ``is_heading`` accepts, so
    the heading opens the piece it labels (whitespace-trimmed spans)."""
    cuts = [m.start() for m in _EMBEDDED_HEADING.finditer(text, start + 1, end) if is_heading(m.group(1))]
    bounds = [start, *cuts, end]
    return [span for a, b in itertools.pairwise(bounds) if (span := _trimmed(text, a, b))]


def pieces_between(separator: re.Pattern, text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The ``[start, end)`` spans of ``text[start:end]`` between matches of ``separator`` (empty ones too)."""
    out, cursor = [], start
    for m in separator.finditer(text, start, end):
        out.append((cursor, m.start()))
        cursor = m.end()
    out.append((cursor, end))
    return out


def split(text: str) -> list[str]:
    """The sentences of ``text`` as strings (see :func:`split_spans`)."""
    return [text[s:e] for s, e in split_spans(text)]


def strip_heading(text: str, start: int, end: int,
                  is_heading: Callable[[str], bool] = lambda words: True) -> tuple[str | None, int]:
    """If ``text[start:end]`` opens with an inline heading, return it upper-cased and the offset where
    the sentence proper begins; else ``(None, start)``.

    A heading is an upper-case run followed by ``:``/``.`` (``RESULTS: …``), a title-case run followed by
    ``:`` (``Methods: …``), or an upper-case run followed by a capitalised word (``RESULTS We …``)
    that ``is_heading`` accepts (for example, one naming a known section)."""
    m = HEADING.match(text, start, end)
    if m is None or len(m.group(1).split()) > _MAX_HEADING_WORDS:
        return None, start
    heading, sep = m.group(1), m.group(2).strip()
    rest = text[m.end():m.end() + 1]
    if sep == ":" or (sep == "." and heading.isupper()):
        ok = heading.isupper() or sep == ":"
    else:
        ok = not sep and heading.isupper() and len(heading) > 3 and rest.isupper() and is_heading(heading)
    return (heading.upper(), m.end()) if ok else (None, start)
