"""Source readers and the ``FORMAT:PATH`` registry.

A source is written ``FORMAT:PATH`` where PATH is a file, a directory (its files matching the
format's patterns, not recursive) or a glob; relative paths are taken from the current directory.
Optional parts: ``FORMAT[key=value,…]:PATH`` passes reader options (the table formats take a
column mapping, e.g. ``csv[text=Abstract,pmid=PMID]:papers.csv``) and a ``@domain`` suffix pins
every record of the source to that domain (``pubmed_xml:raw/amr@amr``). In YAML a source may also
be a mapping ``{format: csv, path: …, domain: …, options: {text: Abstract}}``.

Formats: pubmed_xml, medline, europepmc_json, jsonl, csv, tsv, cord19 (CORD-19 metadata.csv
preset), cohen2006 (Cohen 2006 drug-class review CSVs preset), pubmedqa, pubtator, scifact_corpus.
"""

from __future__ import annotations

import glob
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from biodivergence_dataset.ontology import DOMAIN_NAMES

from . import europepmc, jsonl, medline, pubmed_xml, pubmedqa, pubtator, scifact, table
from .raw_records import EMPTY_FILE, MALFORMED, READ_ERRORS, Deletion, Fault, Item, RawRecord, stream_error_fault

Reader = Callable[[Path, dict | None], Iterator[Item]]


@dataclass(frozen=True)
class Format:
    reader: Reader
    patterns: tuple[str, ...]


FORMATS: dict[str, Format] = {
    pubmed_xml.FORMAT: Format(pubmed_xml.read, pubmed_xml.PATTERNS),
    medline.FORMAT: Format(medline.read, medline.PATTERNS),
    europepmc.FORMAT: Format(europepmc.read, europepmc.PATTERNS),
    jsonl.FORMAT: Format(jsonl.read, jsonl.PATTERNS),
    pubmedqa.FORMAT: Format(pubmedqa.read, pubmedqa.PATTERNS),
    pubtator.FORMAT: Format(pubtator.read, pubtator.PATTERNS),
    scifact.FORMAT: Format(scifact.read, scifact.PATTERNS),
    **{fmt: Format(table.reader_for(fmt), patterns) for fmt, patterns in table.PATTERNS.items()},
}

_SPEC = re.compile(r"^(?P<format>[A-Za-z0-9_]+)(?:\[(?P<options>[^\]]*)\])?:(?P<path>.+)$")


@dataclass(frozen=True)
class SourceSpec:
    """One input source: a format, a path (file, directory or glob), an optional pinned domain."""

    format: str
    path: str
    domain: str | None = None
    options: dict[str, str] = field(default_factory=dict)

    def __post_init__(self):
        if self.format not in FORMATS:
            raise ValueError(f"unknown source format {self.format!r}; expected one of {sorted(FORMATS)}")
        if self.domain is not None and self.domain not in DOMAIN_NAMES:
            raise ValueError(f"unknown domain {self.domain!r} in source {self.path!r}; "
                             f"expected one of {list(DOMAIN_NAMES)}")

    @classmethod
    def parse(cls, spec: str | dict[str, Any] | SourceSpec) -> SourceSpec:
        if isinstance(spec, SourceSpec):
            return spec
        if isinstance(spec, dict):
            unknown = set(spec) - {"format", "path", "domain", "options", "columns"}
            if unknown or "format" not in spec or "path" not in spec:
                raise ValueError(f"source {spec!r}: needs 'format' and 'path' (and optionally 'domain', "
                                 f"'options'); unknown keys {sorted(unknown)}")
            options = {**(spec.get("columns") or {}), **(spec.get("options") or {})}
            return cls(spec["format"], str(spec["path"]), spec.get("domain"), {k: str(v) for k, v in options.items()})
        m = _SPEC.match(spec.strip())
        if not m:
            raise ValueError(f"source {spec!r} is not FORMAT:PATH (formats: {sorted(FORMATS)})")
        path, domain = m.group("path"), None
        head, sep, tail = path.rpartition("@")
        # a known domain after the last "@" pins it; an unknown one is part of the path when that path exists (a
        # folder named in/user@host), else it is a misspelt domain
        if sep and "/" not in tail and "." not in tail and (tail in DOMAIN_NAMES or not Path(path).expanduser().exists()):
            path, domain = head, tail
        return cls(m.group("format"), path, domain, _options(m.group("options"), spec))

    def __str__(self) -> str:
        opts = "[" + ",".join(f"{k}={v}" for k, v in sorted(self.options.items())) + "]" if self.options else ""
        return f"{self.format}{opts}:{self.path}" + (f"@{self.domain}" if self.domain else "")

    def files(self) -> list[Path]:
        """The files this source names, in sorted order; FileNotFoundError if there are none."""
        path = Path(self.path).expanduser()
        if path.is_dir():
            found = sorted({p for pattern in FORMATS[self.format].patterns for p in path.glob(pattern) if p.is_file()})
        elif path.is_file():
            found = [path]
        elif glob.has_magic(self.path):
            found = sorted(Path(p) for p in glob.glob(str(path), recursive=True) if Path(p).is_file())
        else:
            raise FileNotFoundError(f"source {self}: {self.path} does not exist")
        if not found:
            raise FileNotFoundError(f"source {self}: no {self.format} files under {self.path} "
                                    f"(looked for {', '.join(FORMATS[self.format].patterns)})")
        return found

    def items(self) -> Iterator[Item]:
        """Every record, fault and deletion of every file, records pinned to the source's domain if set.

        An empty file, or a stream that breaks off (truncated gzip, I/O error), is a Fault; the
        records read before it are kept.
        """
        read = FORMATS[self.format].reader
        for path in self.files():
            if path.stat().st_size == 0:
                yield Fault(str(path), 1, EMPTY_FILE, "empty file")
                continue
            position = 0
            try:
                for item in read(path, self.options):
                    position = item.position
                    if isinstance(item, RawRecord) and (problem := item.wrong_type()):
                        item = Fault(str(path), position, MALFORMED, problem)
                    elif self.domain and isinstance(item, RawRecord):
                        item.domain = self.domain
                    yield item
            except READ_ERRORS as exc:
                yield stream_error_fault(str(path), position + 1, exc)


def _options(text: str | None, spec: str) -> dict[str, str]:
    if not text:
        return {}
    options = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"source {spec!r}: option {part!r} is not key=value")
        options[key.strip()] = value.strip()
    return options


__all__ = ["FORMATS", "Deletion", "Fault", "Item", "RawRecord", "SourceSpec"]
