"""Where a release's abstracts come from: one :class:`SourceDataset` per source dataset, with its licence.

The build reads each source's ``SOURCE.md`` (title, upstream repository, licence line) and stores the
result in the release as ``sources.json`` (no local paths), so the card can list the sources and their
licences wherever it is re-rendered.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .io import write_json_atomic

SOURCES_FILE = "sources.json"
SOURCE_MD = "SOURCE.md"
NOT_STATED = "none stated"

#: Licence names recognised in a SOURCE.md licence line, with their Hub licence id (None: no Hub id).
LICENCES: tuple[tuple[re.Pattern[str], str, str | None], ...] = (
    (re.compile(r"\bMIT\b"), "MIT", "mit"),
    (re.compile(r"\bApache\b"), "Apache-2.0", "apache-2.0"),
    (re.compile(r"\bCC[ -]BY[ -]4\.0\b", re.IGNORECASE), "CC-BY-4.0", "cc-by-4.0"),
    (re.compile(r"\bODC-By\b", re.IGNORECASE), "ODC-By-1.0", "odc-by"),
    (re.compile(r"\bBSD 3-Clause\b", re.IGNORECASE), "BSD-3-Clause", "bsd-3-clause"),
    (re.compile(r"\bpublic domain\b", re.IGNORECASE), "public domain (US Government work)", None),
    (re.compile(r"\bnone stated\b", re.IGNORECASE), NOT_STATED, None),
)
_HUB_IDS = {name: hub for _, name, hub in LICENCES}
_LICENCE_LINE = re.compile(r"^\s*-\s*\*\*Licen[cs]e\b[^:]*:\s*(?:\*\*)?\s*(?P<text>.+)$", re.MULTILINE)
_URL_LINE = re.compile(r"^\s*-\s*\*\*(?:Upstream|Repository):?\*\*:?\s*(?P<url>https?://[^\s)`]+)", re.MULTILINE)
_ANY_URL = re.compile(r"(?P<url>https?://[^\s)`]+)")
_SENTENCE_END = re.compile(r"\.\s+(?=[A-Z])")


@dataclass(frozen=True)
class SourceDataset:
    """A source dataset as the card lists it."""

    name: str
    title: str
    url: str = ""
    licence_terms: str = ""  # the licence line of SOURCE.md, markdown emphasis removed
    licences: list[str] = field(default_factory=list)  # recognised licence names, e.g. ["MIT"]

    @property
    def hub_licences(self) -> list[str | None]:
        return [_HUB_IDS.get(name) for name in self.licences] or [None]


def find_source_md(path: str | Path) -> Path | None:
    """The ``SOURCE.md`` of the source folder holding ``path`` (``path`` itself or the nearest parent folder)."""
    path = Path(path).resolve()
    for folder in (path, *path.parents):
        if (folder / SOURCE_MD).is_file():
            return folder / SOURCE_MD
    return None


def parse_source_md(path: Path) -> SourceDataset:
    """Name (the folder), title (first heading), upstream URL and licence of one ``SOURCE.md``."""
    text = path.read_text(encoding="utf-8")
    heading = next((line[2:].strip() for line in text.splitlines() if line.startswith("# ")), path.parent.name)
    url = _URL_LINE.search(text) or _ANY_URL.search(text)
    licence = _LICENCE_LINE.search(text)
    terms = licence["text"].replace("**", "").strip() if licence else ""
    first_sentence = _SENTENCE_END.split(terms, maxsplit=1)[0]  # later sentences describe code or content
    return SourceDataset(
        name=path.parent.name, title=heading, url=url["url"] if url else "", licence_terms=terms,
        licences=[name for pattern, name, _ in LICENCES if pattern.search(first_sentence)] or [NOT_STATED],
    )


def write_sources(release_dir: str | Path, sources: list[SourceDataset]) -> Path:
    return write_json_atomic(Path(release_dir) / SOURCES_FILE, [asdict(s) for s in sources])


def read_sources(release_dir: str | Path) -> list[SourceDataset]:
    """The release's ``sources.json`` (empty when the release records none)."""
    path = Path(release_dir) / SOURCES_FILE
    if not path.exists():
        return []
    try:
        return [SourceDataset(**entry) for entry in json.loads(path.read_text(encoding="utf-8"))]
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{path}: not a list of source datasets ({exc})") from None


def release_licence(sources: list[SourceDataset], labels_licence: str) -> str:
    """The card's ``license``: the one Hub licence shared by the labels and every source, else ``other``."""
    ids = {labels_licence, *(hub for s in sources for hub in s.hub_licences)}
    return labels_licence if ids == {labels_licence} else "other"
