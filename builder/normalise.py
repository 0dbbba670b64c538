"""Text normalisation of abstracts (paper appendix G.3, Table 21).

Operations, in order, each counted per abstract it changes (``Normaliser.changed``):

``encoding_repair``  mojibake repair with ftfy, only where a UTF-8-read-as-Latin-1/CP1252 pair
                     of characters is present (ftfy is slow; clean text never reaches it);
``html_entities``    ``&lt;``, ``&#946;`` … unescaped;
``unicode_nfkc``     Unicode NFKC, plus removal of control and zero-width characters;
``inline_tags``      inline HTML/XML/MathML tags and entity-marker tags (``<i>``, ``<sup>``,
                     ``<e1>``) removed (block tags become a space; ``10<sup>-5`` becomes ``10^-5``);
``entity_markers``   legacy placeholders such as ``@GENE$`` removed;
``citations``        bracketed numeric citations (``[1]``, ``[2, 5–7]``) and parenthesised
                     author–year citations (``(Smith et al., 2010)``) removed;
``whitespace``       runs of whitespace collapsed to one space, ends stripped.

The abstract text is its sections' texts joined by single spaces, without the headings; each
labelled section is a ``Section(label, start, end)`` of character offsets into that text. An
unstructured abstract has no sections.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections import Counter

from biodivergence_dataset.records import Section

# A UTF-8 lead byte followed by a continuation byte, both decoded as Latin-1 / CP1252.
_MOJIBAKE = re.compile(
    "[\u00c2-\u00f4][\u0080-\u00bf\u20ac\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152"
    "\u017d\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u017e\u0178]"
)
_ENTITY = re.compile(r"&(?:#\d{1,7}|#x[0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
#: Characters that print nothing: controls, soft hyphens, zero-width characters, the BOM, and the bidirectional
#: marks, embeddings, overrides and isolates (U+200E-F, U+202A-E, U+2066-9), which reorder how the text around
#: them is shown, so a sentence can read differently from what it holds.
_INVISIBLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u00ad\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069"
                        "\ufeff]")
_SUP_AFTER_DIGIT = re.compile(r"(?<=\d)\s*<sup>", re.IGNORECASE)
_BLOCK_TAG = re.compile(r"</?(?:p|br|div|h[1-6]|li|ul|ol|table|tr|td|th)\b[^<>]*>", re.IGNORECASE)
_INLINE_TAG = re.compile(
    r"</?(?:i|b|u|em|strong|sup|sub|sc|span|font|a|inf|italic|bold|underline|small|big|tt|"
    r"math|mml:[A-Za-z]+|e\d|entity|gene|disease|chemical|species|mutation)\b[^<>]*>",
    re.IGNORECASE,
)
_ENTITY_MARKER = re.compile(r"@[A-Z][A-Z_]*\$")
_NUMERIC_CITATION = re.compile(r"\s*\[\s*\d{1,4}(?:\s*[-\u2013\u2014,;]\s*\d{1,4})*\s*\]")
_AUTHOR_YEAR_CITATION = re.compile(  # "(Smith et al., 2010; Lee and Park 2012)", "(Smith, 2010)"; not "(March 2020)"
    r"\s*\((?:[A-Z][A-Za-z'\u2019-]+(?: et al\.?,?| and [A-Z][A-Za-z'\u2019-]+,?|,) (?:19|20)\d\d[a-z]?(?:[;,] ?)?)+\)"
)
#: Cheap test (a literal first character lets the regex engine skip ahead) before the full pattern.
_AUTHOR_YEAR_GATE = re.compile(r"\([A-Z][A-Za-z'\u2019-]+(?: et al| and |, )")


class Normaliser:
    """Cleans texts and assembles an abstract's text and section offsets; counts what each operation changed."""

    def __init__(self) -> None:
        self.changed: Counter = Counter()

    def clean(self, text: str, touched: set[str]) -> str:
        """The normalised ``text``; names of the operations that changed it are added to ``touched``."""
        if _MOJIBAKE.search(text):
            text = _apply(text, _fix_encoding, "encoding_repair", touched)
        if "&" in text and _ENTITY.search(text):
            text = _apply(text, html.unescape, "html_entities", touched)
        if not text.isascii() or _INVISIBLE.search(text):
            text = _apply(text, _nfkc, "unicode_nfkc", touched)
        if "<" in text:
            text = _apply(text, _strip_tags, "inline_tags", touched)
        if "$" in text:
            text = _apply(text, lambda t: _ENTITY_MARKER.sub("", t), "entity_markers", touched)
        if "[" in text or "(" in text:
            text = _apply(text, _strip_citations, "citations", touched)
        return _apply(text, _collapse_whitespace, "whitespace", touched)

    def abstract(self, title: str, sections: list[tuple[str | None, str]]) -> tuple[str, str, list[Section]]:
        """Normalise a record: ``(title, text, sections)`` with section offsets into ``text``."""
        touched: set[str] = set()
        title = self.clean(title, touched) if title else ""
        parts: list[str] = []
        spans: list[Section] = []
        offset = 0
        for label, body in sections:
            body = self.clean(body, touched)
            if not body:
                continue
            if parts:
                offset += 1
            if label:  # offsets are right by construction; Abstract validation checks them again
                spans.append(Section.model_construct(label=label, start=offset, end=offset + len(body)))
            parts.append(body)
            offset += len(body)
        self.changed.update(touched)
        return title, " ".join(parts), spans


def _apply(text: str, operation, name: str, touched: set[str]) -> str:
    result = operation(text)
    if result != text:
        touched.add(name)
    return result


def _fix_encoding(text: str) -> str:
    import ftfy

    return ftfy.fix_encoding(text)


def _nfkc(text: str) -> str:
    return _INVISIBLE.sub("", unicodedata.normalize("NFKC", text))


def _strip_tags(text: str) -> str:
    text = _SUP_AFTER_DIGIT.sub("^", text)
    return _INLINE_TAG.sub("", _BLOCK_TAG.sub(" ", text))


def _strip_citations(text: str) -> str:
    if "[" in text:
        text = _NUMERIC_CITATION.sub("", text)
    if "(" in text and _AUTHOR_YEAR_GATE.search(text):
        text = _AUTHOR_YEAR_CITATION.sub("", text)
    return text


def _collapse_whitespace(text: str) -> str:
    return " ".join(text.split())

