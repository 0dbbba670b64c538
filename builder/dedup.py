"""Hierarchical de-duplication of abstracts (paper appendix G.3) and near-duplicate detection.

Exact duplicates: two records are the same article when they share a DOI (case-insensitive),
else a PMID, else a PMCID, else the content hash of the normalised text. Matching is transitive
(a record carrying both a DOI and a PMID joins a DOI-only and a PMID-only record into one), and
duplicates merge into the earliest record: missing identifiers, title, year and journal are filled
in, MeSH headings united, and every input listed in ``merged_from``. The drop reason names the
strongest shared key (``duplicate_doi`` > ``duplicate_pmid`` > ``duplicate_pmcid`` > ``duplicate_content``).
Two records that share an identifier but whose texts disagree (less than half of the shorter text's
word pairs in common) are not merged: which text is right cannot be told, so both are excluded with
reason ``identifier_conflict`` (and so is any later record with that identifier); ``Merge.counterpart``
names the record a dropped one merged into or conflicts with, so the ingest stage can say so in its exclusions. The records wait
in a SQLite store on disk, not in memory (see ``Deduplicator``), so memory does not grow with the corpus.

Near duplicates: MinHash signatures of word shingles of the normalised text, banded as datasketch's
``MinHashLSH`` bands them (its bands and rows for the threshold) but indexed in a SQLite file, so memory
does not grow with the corpus either; pairs above the Jaccard threshold are reported, and dropped on request.
"""

from __future__ import annotations

import json
import pickle
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from itertools import pairwise
from pathlib import Path

import numpy as np

from biodivergence_dataset.records import Abstract, Section, article_uid_for

KEY_LEVELS = ("doi", "pmid", "pmcid", "content")
#: SQLite's page cache: a scratch store's whole footprint in memory.
SCRATCH_CACHE_KIB = 16 * 1024


def scratch_store(path: str, schema: str) -> sqlite3.Connection:
    """A SQLite store for one run (``""``: a private temporary file, gone on close) with ``schema``, no journal,
    a bounded page cache and one transaction open (nothing here needs to survive a crash)."""
    db = sqlite3.connect(path, isolation_level=None)
    db.executescript(f"PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -{SCRATCH_CACHE_KIB};"
                     f"{schema} BEGIN;")
    return db


@dataclass(slots=True)
class Draft:
    """A normalised record on its way to becoming an ``Abstract`` (cheap to merge, validated once at the end)."""

    source: str
    path: str
    position: int
    spec: str
    title: str
    text: str
    sections: list[Section]
    domain: str
    pmid: str | None = None
    doi: str | None = None
    pmcid: str | None = None
    year: int | None = None
    journal: str | None = None
    mesh_terms: list[str] = field(default_factory=list)
    merged_from: list[str] = field(default_factory=list)
    content_key: str = ""

    def __post_init__(self):
        self.content_key = article_uid_for(None, None, self.text)

    @property
    def origin(self) -> str:
        """The input this record was read from (``source:path:position``), its identity before de-duplication."""
        return self.merged_from[0]

    def keys(self) -> list[tuple[str, str]]:
        """``(level, key)`` for each identifier present, strongest first; the content key is always present."""
        found = [(level, f"{level}:{value}") for level, value in
                 (("doi", self.doi), ("pmid", self.pmid), ("pmcid", self.pmcid)) if value]
        found.append(("content", self.content_key))
        return found

    def absorb(self, other: Draft) -> bool:
        """Merge ``other``'s metadata into this record; True if their identifiers disagreed."""
        conflict = any(a and b and a != b for a, b in
                       ((self.doi, other.doi), (self.pmid, other.pmid), (self.pmcid, other.pmcid)))
        self.doi = self.doi or other.doi
        self.pmid = self.pmid or other.pmid
        self.pmcid = self.pmcid or other.pmcid
        self.title = self.title or other.title
        self.year = self.year or other.year
        self.journal = self.journal or other.journal
        self.mesh_terms = list(dict.fromkeys(self.mesh_terms + other.mesh_terms))
        self.merged_from.extend(other.merged_from)
        return conflict

    def to_abstract(self) -> Abstract:
        return Abstract.parse(
            {
                "article_uid": article_uid_for(self.doi, self.pmid, self.text) if self.doi or self.pmid
                else self.content_key,
                "pmid": self.pmid, "doi": self.doi, "pmcid": self.pmcid,
                "title": self.title, "text": self.text, "year": self.year, "journal": self.journal,
                "domain": self.domain, "source": self.source, "mesh_terms": self.mesh_terms,
                "sections": self.sections, "merged_from": self.merged_from,
            },
            where=f"{self.path}: record {self.position}",
        )


IDENTIFIER_CONFLICT = "identifier_conflict"
#: Texts under one identifier agree when at least this share of the shorter one's word pairs is in the other.
_TEXT_AGREEMENT = 0.5


def _word_pairs(text: str) -> set[tuple[str, str]]:
    words = text.lower().split()
    return set(pairwise(words)) or {(w, "") for w in words}


def texts_disagree(a: str, b: str) -> bool:
    """True when two texts filed under one identifier are not the same abstract (markup aside)."""
    pa, pb = _word_pairs(a), _word_pairs(b)
    return len(pa & pb) < _TEXT_AGREEMENT * min(len(pa), len(pb))


@dataclass
class Merge:
    """What happened to a record offered to the de-duplicator."""

    reason: str | None  # None: a new article; else ``duplicate_<level>`` or ``identifier_conflict``
    absorbed: list[tuple[Draft, str]] = field(default_factory=list)  # earlier records joined (or excluded) by this one
    conflict: bool = False
    conflict_key: str | None = None  # the identifier two different texts share
    counterpart: Draft | None = None  # the record this one merged into, or (identifier_conflict) conflicts with


class Deduplicator:
    """Exact, hierarchical, transitive de-duplication with metadata merging (see module docstring).

    Memory stays bounded whatever the corpus size: the records (pickled Drafts, text included) and the
    key index live in a SQLite file — in ``spill_dir`` if given (removed on ``close``), else a private
    temporary database — and only the records one ``add`` touches are loaded. Iterating streams the
    kept records back in input order. Our own store rather than datatrove's dedup blocks: those key on
    text hashes alone, while a record here joins others through DOI → PMID → PMCID transitively, its
    metadata merges, and two texts under one identifier must be compared before either is kept.
    """

    SPILL_FILE = ".dedup.sqlite"

    def __init__(self, spill_dir: str | Path | None = None) -> None:
        self._path = Path(spill_dir) / self.SPILL_FILE if spill_dir is not None else None
        if self._path is not None:
            self._path.unlink(missing_ok=True)  # a run killed before close left it
        self._db = scratch_store(str(self._path) if self._path else "", """
            CREATE TABLE records (rid INTEGER PRIMARY KEY, alive INTEGER NOT NULL, pmid TEXT,
                                  conflict TEXT, draft BLOB NOT NULL);
            CREATE INDEX records_pmid ON records (pmid) WHERE alive;
            CREATE TABLE keys (key TEXT PRIMARY KEY, rid INTEGER NOT NULL) WITHOUT ROWID;
            CREATE INDEX keys_rid ON keys (rid);""")
        self._next = 0
        self.identifier_conflicts = 0

    def add(self, draft: Draft) -> Merge:
        keys = draft.keys()
        index = dict(self._db.execute(f"SELECT key, rid FROM keys WHERE key IN ({_marks(keys)})",
                                      [k for _, k in keys]))
        hits: dict[int, str] = {}
        for level, key in keys:
            if key in index:
                hits.setdefault(index[key], level)
        if not hits:
            self._insert(self._next, draft)
            self._db.executemany("INSERT INTO keys VALUES (?, ?)", [(k, self._next) for _, k in keys])
            self._next += 1
            return Merge(None)
        records = self._load(hits)
        conflict = _text_conflict(draft, hits, records)
        if conflict is not None:
            return self._exclude(keys, conflict, *records[conflict])
        target, *others = sorted(hits)
        kept = records[target][1]
        merge = Merge(f"duplicate_{_strongest(hits.values())}", counterpart=kept)
        for rid in others:  # records this one shows to be the same article
            other = records[rid][1]
            merge.conflict |= kept.absorb(other)
            merge.absorbed.append((other, f"duplicate_{hits[rid]}"))
            self._db.execute("DELETE FROM records WHERE rid = ?", (rid,))
            self._db.execute("UPDATE keys SET rid = ? WHERE rid = ?", (target, rid))
        merge.conflict |= kept.absorb(draft)
        self._db.executemany("INSERT OR IGNORE INTO keys VALUES (?, ?)", [(k, target) for _, k in keys])
        self._insert(target, kept, replace=True)
        self.identifier_conflicts += merge.conflict
        return merge

    def _insert(self, rid: int, draft: Draft, replace: bool = False) -> None:
        self._db.execute(f"INSERT {'OR REPLACE ' if replace else ''}INTO records VALUES (?, 1, ?, NULL, ?)",
                         (rid, draft.pmid, pickle.dumps(draft, pickle.HIGHEST_PROTOCOL)))

    def _load(self, rids) -> dict[int, tuple[str | None, Draft]]:
        """``rid -> (conflicting identifier or None, Draft)`` for the records hit by one ``add``."""
        rows = self._db.execute(f"SELECT rid, conflict, draft FROM records WHERE rid IN ({_marks(rids)})", list(rids))
        return {rid: (conflict, pickle.loads(blob)) for rid, conflict, blob in rows}

    def _exclude(self, keys: list[tuple[str, str]], rid: int, conflict_key: str | None, other: Draft) -> Merge:
        """Exclude the record with ``keys`` and record ``rid`` (if still kept); their identifiers stay taken."""
        merge = Merge(IDENTIFIER_CONFLICT, conflict=True, counterpart=other)
        keys = [k for _, k in keys]
        if conflict_key is None:
            ids = set(keys) & {k for (k,) in self._db.execute("SELECT key FROM keys WHERE rid = ?", (rid,))}
            conflict_key = min(ids, key=lambda k: KEY_LEVELS.index(k.split(":", 1)[0]))
            self._db.execute("UPDATE records SET alive = 0, conflict = ? WHERE rid = ?", (conflict_key, rid))
            merge.absorbed.append((other, IDENTIFIER_CONFLICT))
        merge.conflict_key = conflict_key
        self._db.executemany("INSERT OR IGNORE INTO keys VALUES (?, ?)", [(k, rid) for k in keys])
        self.identifier_conflicts += 1
        return merge

    def remove_pmids(self, pmids: set[str]) -> list[Draft]:
        """Withdraw the records with these PMIDs (a PubMed DeleteCitation); returns them."""
        rows = self._db.execute("SELECT rid, draft FROM records WHERE alive AND pmid IN "
                                "(SELECT value FROM json_each(?)) ORDER BY rid", (json.dumps(sorted(pmids)),)).fetchall()
        for rid, _ in rows:
            self._db.execute("DELETE FROM records WHERE rid = ?", (rid,))
            self._db.execute("DELETE FROM keys WHERE rid = ?", (rid,))
        return [pickle.loads(blob) for _, blob in rows]

    def __iter__(self) -> Iterator[Draft]:
        """The kept records in input order, streamed from the store."""
        for (blob,) in self._db.execute("SELECT draft FROM records WHERE alive ORDER BY rid"):
            yield pickle.loads(blob)

    def __len__(self) -> int:
        return self._db.execute("SELECT count(*) FROM records WHERE alive").fetchone()[0]

    def close(self) -> None:
        """Drop the store (and its file)."""
        self._db.close()
        if self._path is not None:
            self._path.unlink(missing_ok=True)

    def __enter__(self) -> Deduplicator:  # noqa: PYI034 (typing.Self needs Python 3.11; we support 3.10)
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _marks(values) -> str:
    return ", ".join("?" * len(values))


def _text_conflict(draft: Draft, hits: dict[int, str], records: dict[int, tuple[str | None, Draft]]) -> int | None:
    """The record id that shares an identifier with ``draft`` but not its text (or is already excluded)."""
    for rid, level in sorted(hits.items()):
        conflict, other = records[rid]
        if conflict is not None or (level != "content" and texts_disagree(other.text, draft.text)):
            return rid
    return None


def _strongest(levels) -> str:
    return min(levels, key=KEY_LEVELS.index)


# ---------------------------------------------------------------------------------------------
# near duplicates

_MASK32 = np.uint64(0xFFFFFFFF)
_WORD_WEIGHTS = 64  # distinct random weights per byte position within a word (positions wrap)
_SHIFT = np.uint64(32)
SIGNATURE_BATCH = 2048  # texts hashed at once


@cache
def _lsh_bands(threshold: float, num_perm: int) -> tuple[int, int]:
    """datasketch's (bands, rows) for a threshold, computed once (it integrates error probabilities)."""
    from datasketch import MinHashLSH

    lsh = MinHashLSH(threshold=threshold, num_perm=num_perm)
    return lsh.b, lsh.r


class NearDuplicateFinder:
    """MinHash signatures of word ``shingle``-grams and a locality-sensitive index of them on disk.

    Signatures use one-permutation hashing with rotation densification (Li et al. 2012; Shrivastava
    & Li 2014): each shingle is hashed once into one of ``num_perm`` bins, a bin keeps its minimum,
    and an empty bin borrows from the next non-empty one. That costs one hash per shingle instead
    of ``num_perm``, and is computed for a whole batch of texts with numpy. Hashing is deterministic:
    a word (a run of non-whitespace bytes, ASCII lower-cased) hashes to the position-weighted sum of
    its UTF-8 bytes (random 32-bit weights, mod 2^32), a shingle to an odd-weighted sum of its word
    hashes (mod 2^64).

    The index is datasketch's banding — two signatures are candidates when all ``rows`` values of one of
    the ``bands`` bands are equal, and a candidate is a near duplicate when its estimated Jaccard reaches the
    threshold — kept in a private temporary SQLite database (band slices and signatures as blobs) rather
    than in datasketch's in-memory tables, whose only other storage is a Redis or Cassandra server: its
    footprint in memory is SQLite's page cache, whatever the corpus size.
    """

    def __init__(self, threshold: float = 0.85, num_perm: int = 64, shingle: int = 3, seed: int = 1):
        rng = np.random.default_rng(seed)

        def draw(n: int) -> np.ndarray:
            return rng.integers(0, np.iinfo(np.uint64).max, size=n, dtype=np.uint64, endpoint=True)

        self._weights = (draw(_WORD_WEIGHTS) & _MASK32).astype(np.uint32)
        self._mix = draw(shingle) | np.uint64(1)
        self._rotation = draw(1)[0] & _MASK32 | np.uint64(1)
        self.threshold, self.num_perm, self.shingle, self.seed = threshold, num_perm, shingle, seed
        self.bands, self.rows = _lsh_bands(threshold, num_perm)
        self._db = scratch_store("", """
            CREATE TABLE signatures (ord INTEGER PRIMARY KEY, key TEXT UNIQUE NOT NULL, signature BLOB NOT NULL);
            CREATE TABLE bands (band INTEGER NOT NULL, slice BLOB NOT NULL, ord INTEGER NOT NULL);
            CREATE INDEX bands_slice ON bands (band, slice);""")
        #: Indexed keys sharing a band with the queried signature, oldest first (SQLite's multi-index OR).
        self._candidates = ("SELECT key, signature FROM signatures WHERE ord IN (SELECT ord FROM bands WHERE "
                            + " OR ".join(["(band = ? AND slice = ?)"] * self.bands) + ") ORDER BY ord")
        self._next = 0

    def signatures(self, texts: list[str]) -> np.ndarray:
        """One signature row (``num_perm`` uint64 values below 2^32) per text."""
        if not texts:
            return np.zeros((0, self.num_perm), dtype=np.uint64)
        if len(texts) > SIGNATURE_BATCH:
            return np.vstack([self.signatures(texts[i:i + SIGNATURE_BATCH])
                              for i in range(0, len(texts), SIGNATURE_BATCH)])
        doc, shingles = self._shingles(texts)
        k = self.num_perm
        cell = doc.astype(np.int64) * k + ((shingles >> _SHIFT) % np.uint64(k)).astype(np.int64)  # (text, bin)
        sig = np.full(len(texts) * k, _MASK32, dtype=np.uint64)
        np.minimum.at(sig, cell, shingles & _MASK32)
        sig = sig.reshape(len(texts), k)
        return self._densify(sig, sig != _MASK32)

    def _shingles(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(doc index, shingle hash)`` for every shingle of every text (a text shorter than a shingle: its words)."""
        data = np.frombuffer("\n".join(t.replace("\n", " ") for t in texts).encode("utf-8"), dtype=np.uint8)
        data = np.where((data >= 65) & (data <= 90), data + np.uint8(32), data)  # ASCII lower case
        idx = np.flatnonzero(data > 32)
        starts = np.flatnonzero(np.concatenate([[True], idx[1:] - idx[:-1] != 1]))
        first_byte = np.repeat(idx[starts], np.diff(starts, append=idx.size))
        contrib = data[idx].astype(np.uint32) * self._weights[(idx - first_byte) & (_WORD_WEIGHTS - 1)]
        words = (np.add.reduceat(contrib, starts) if idx.size else np.zeros(0, dtype=np.uint32)).astype(np.uint64)
        word_doc = np.searchsorted(np.flatnonzero(data == 10), idx[starts])
        k = self.shingle
        n = max(len(words) - k + 1, 0)
        shingles = words[:n] * self._mix[0]
        for i in range(1, k):
            shingles = shingles + words[i:n + i] * self._mix[i]
        valid = word_doc[:n] == word_doc[k - 1:k - 1 + n]
        doc, shingles = word_doc[:n][valid], shingles[valid]
        short = np.bincount(doc, minlength=len(texts)) == 0  # texts with fewer words than a shingle
        if short.any():
            take = short[word_doc]
            doc, shingles = np.concatenate([doc, word_doc[take]]), np.concatenate([shingles, words[take]])
        return doc, shingles

    def _densify(self, sig: np.ndarray, filled: np.ndarray) -> np.ndarray:
        """Fill empty bins from the next non-empty bin to the right (circularly), offset by distance."""
        if filled.all():
            return sig
        k = self.num_perm
        positions = np.where(np.hstack([filled, filled]), np.arange(2 * k), 2 * k)
        nearest = np.minimum.accumulate(positions[:, ::-1], axis=1)[:, ::-1][:, :k]
        nearest = np.where(nearest >= 2 * k, np.arange(k), nearest)  # a text without any shingle
        distance = (nearest - np.arange(k)).astype(np.uint64)
        rows = np.arange(sig.shape[0])[:, None]
        return (sig[rows, nearest % k] + distance * self._rotation) & _MASK32

    def _signature(self, key: str) -> np.ndarray:
        row = self._db.execute("SELECT signature FROM signatures WHERE key = ?", (key,)).fetchone()
        if row is None:
            raise KeyError(key)
        return np.frombuffer(row[0], dtype=np.uint64)

    def jaccard(self, a: str, b: str) -> float:
        """Estimated Jaccard similarity of two indexed keys."""
        return float(np.mean(self._signature(a) == self._signature(b)))

    def check(self, key: str, signature: np.ndarray, index: bool = True) -> str | None:
        """The earliest indexed key whose signature is a near duplicate of ``signature``; index ``key`` if asked."""
        signature = np.ascontiguousarray(signature, dtype=np.uint64)
        slices = [(band, signature[band * self.rows:(band + 1) * self.rows].tobytes()) for band in range(self.bands)]
        found = self._db.execute(self._candidates, [v for pair in slices for v in pair]).fetchall()
        twin = next((k for k, sig in found
                     if np.mean(np.frombuffer(sig, dtype=np.uint64) == signature) >= self.threshold), None)
        if index:
            # a key indexed again takes its new signature (its old bands then point at no row)
            self._db.execute("INSERT OR REPLACE INTO signatures VALUES (?, ?, ?)",
                             (self._next, key, signature.tobytes()))
            self._db.executemany("INSERT INTO bands VALUES (?, ?, ?)", [(b, v, self._next) for b, v in slices])
            self._next += 1
        return twin

    def close(self) -> None:
        """Drop the index (its temporary database goes with the connection)."""
        self._db.close()
