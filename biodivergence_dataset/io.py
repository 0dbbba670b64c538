"""Atomic file writes, stage statistics and stage folders of Parquet shards.

A stage folder holds ``part-00000.parquet`` … shards of one record type, a ``stats.json``
(``unit``, what it counts; ``seen`` / ``kept`` / ``dropped_<reason>`` in that unit; plus stage-specific figures) and a ``_SUCCESS`` marker
written last, so a re-run can tell a finished stage from an interrupted one. The marker records
the folder's content fingerprint (its manifest and shards, byte for byte); a downstream stage keeps
that fingerprint in its own parameters, so a changed upstream output makes it re-run, and a copied
work folder (same bytes, other paths and times) resumes. A stage may keep the records it dropped, with
their reasons, in ``excluded-*.parquet`` shards (:class:`ExclusionWriter`, :func:`read_exclusions`); they are
not part of its output or its fingerprint.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic_core import to_json

from .records import RecordModel
from .redact import redact_data

R = TypeVar("R", bound=RecordModel)

SUCCESS_MARKER = "_SUCCESS"
STATS_FILE = "stats.json"
DEFAULT_SHARD_SIZE = 50_000


def current_umask() -> int:
    """The process umask, read without changing it where /proc allows (os.umask is not thread-safe)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


#: The suffix of ``atomic_path``'s temporary file (``.NAME.XXXXXXXX.tmp`` beside ``NAME``).
PARTIAL_SUFFIX = ".tmp"


def is_partial_write(name: str) -> bool:
    """Whether a file name is the temporary file of an atomic write that never finished (the process was killed
    before the rename): a leftover of ours, not content."""
    return name.startswith(".") and name.endswith(PARTIAL_SUFFIX)


@contextmanager
def naming(path: str | os.PathLike):
    """Raise an OSError without a path (a full disk while writing or syncing) again naming ``path``, so the
    one-line error a user sees says which file could not be written."""
    try:
        yield
    except OSError as exc:
        if exc.filename is None:
            raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from exc
        raise


@contextmanager
def atomic_path(path: str | os.PathLike):
    """Yield a temporary path beside ``path``; rename it over ``path`` only if the block succeeds.

    The file gets the mode a plain ``open`` would give it (0666 minus the umask), not mkstemp's 0600. An
    OSError without a path (a full disk while writing) is raised again naming ``path``.
    """
    path = Path(path)
    tmp = None
    try:
        with naming(path):
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=PARTIAL_SUFFIX, dir=path.parent)
            os.fchmod(fd, 0o666 & ~current_umask())
            os.close(fd)
            yield Path(tmp)
            os.replace(tmp, path)
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)


def write_bytes_atomic(path: str | os.PathLike, data: bytes) -> Path:
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)
    return Path(path)


def write_text_atomic(path: str | os.PathLike, text: str) -> Path:
    return write_bytes_atomic(path, text.encode("utf-8"))


def staging_path(final: Path) -> Path:
    """Where :func:`staging_folder` stages ``final`` (``.NAME.partial`` beside it), named without making it: for the
    processes of a multi-process run that do not write it."""
    return final.with_name(f".{final.name}.partial")


def staging_folder(final: Path) -> Path:
    """The empty scratch folder :func:`staging_path` beside ``final`` that a writer fills before :func:`swap_folder`
    puts it in ``final``'s place; what a killed run left there is removed first."""
    import shutil

    staging = staging_path(final)
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    return staging


def swap_folder(staging: Path, final: Path) -> Path:
    """Put the finished folder ``staging`` in the place of ``final`` (moved aside first, removed last), so a reader
    sees the old folder or the new one, never a half-written one."""
    import shutil

    old = final.with_name(f".{final.name}.old")
    shutil.rmtree(old, ignore_errors=True)
    if final.exists():
        final.rename(old)
    staging.rename(final)
    shutil.rmtree(old, ignore_errors=True)
    return final


def write_json_atomic(path: str | os.PathLike, data: Any) -> Path:
    """Write ``data`` as JSON, secrets redacted (``biodivergence_dataset.redact``): manifests, provenance and
    reports never hold a credential."""
    return write_text_atomic(path, json.dumps(as_stored(data), indent=2, sort_keys=False) + "\n")


def as_stored(data: Any) -> Any:
    """``data`` as :func:`write_json_atomic` stores it and it reads back (redacted; tuples → lists)."""
    return redact_data(json.loads(json.dumps(data, default=str)))


def write_table_atomic(path: str | os.PathLike, table: pa.Table) -> Path:
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp)
    return Path(path)


#: Prefix of a stage's dropped-record counts in its stats: ``dropped_<reason>`` (``dropped_total``: their sum).
DROPPED = "dropped_"
DROPPED_TOTAL = "dropped_total"
#: The count table of a stage's kept output per domain, the same name in every stage (the release's funnel reads it).
BY_DOMAIN = "by_domain"


@dataclass
class StageStats:
    """What a stage saw, kept and dropped (by reason), all in one ``unit`` (abstracts, sentences, pairs, …),
    plus free-form figures.

    ``to_dict`` writes each reason as ``dropped_<reason>``, so ``seen == kept + dropped_total``.
    """

    stage: str
    seen: int = 0
    kept: int = 0
    dropped: Counter = field(default_factory=Counter)
    counts: dict[str, Counter] = field(default_factory=dict)
    figures: dict[str, Any] = field(default_factory=dict)
    unit: str = "records"
    #: where dropped records are kept with their reason (None: drops are only counted)
    exclusions: ExclusionWriter | None = field(default=None, repr=False, compare=False)

    def drop(self, reason: str, n: int = 1, *, record: Any = None, record_id: str = "",
             detail: dict[str, Any] | None = None) -> None:
        """Count ``n`` records dropped for ``reason``. With an exclusion sink attached, each drop is one
        ``record`` (with its id and optional ``detail``), written in the same call, so counts and kept
        exclusions cannot disagree."""
        if self.exclusions is not None:
            if record is None or n != 1:
                raise ValueError(f"{self.stage}: a drop ({reason}) with an exclusion sink needs its one record")
            self.exclusions.add(reason, record_id, record, detail)
        self.dropped[reason] += n

    def count(self, table: str, key: Any, n: int = 1) -> None:
        """Increment ``counts[table][key]`` (e.g. ``count("by_domain", "amr")``)."""
        self.counts.setdefault(table, Counter())[str(key)] += n

    def to_dict(self) -> dict[str, Any]:
        return {
            "stage": self.stage,
            "unit": self.unit,
            "seen": self.seen,
            "kept": self.kept,
            DROPPED_TOTAL: sum(self.dropped.values()),
            **{f"{DROPPED}{reason}": n for reason, n in sorted(self.dropped.items())},
            **{name: dict(sorted(c.items())) for name, c in sorted(self.counts.items())},
            **self.figures,
        }

    def write(self, out_dir: str | os.PathLike) -> Path:
        return write_json_atomic(Path(out_dir) / STATS_FILE, self.to_dict())


def dropped_counts(stats: dict[str, Any]) -> dict[str, int]:
    """``{reason: n}`` of a stage's stats dict (its ``dropped_<reason>`` keys)."""
    return {k.removeprefix(DROPPED): v for k, v in stats.items()
            if k.startswith(DROPPED) and k != DROPPED_TOTAL and isinstance(v, int)}


def _records_to_table(rows: list[dict[str, Any]]) -> pa.Table:
    return pa.Table.from_pylist(rows)


class ShardWriter:
    """Append records to numbered Parquet shards in ``out_dir``, each shard written atomically."""

    def __init__(self, out_dir: str | os.PathLike, shard_size: int = DEFAULT_SHARD_SIZE, prefix: str = "part"):
        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.shard_size, self.prefix = shard_size, prefix
        self._buffer: list[dict[str, Any]] = []
        self._next = len(list(self.out_dir.glob(f"{prefix}-*.parquet")))
        self.written = 0

    def add(self, record: RecordModel | dict[str, Any]) -> None:
        self._buffer.append(record.model_dump(mode="json") if isinstance(record, RecordModel) else record)
        if len(self._buffer) >= self.shard_size:
            self.flush()

    def flush(self) -> None:
        if not self._buffer:
            return
        write_table_atomic(self.out_dir / f"{self.prefix}-{self._next:05d}.parquet", _records_to_table(self._buffer))
        self._next += 1
        self.written += len(self._buffer)
        self._buffer = []

    def __enter__(self) -> ShardWriter:  # noqa: PYI034 (typing.Self needs Python 3.11; we support 3.10)
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.flush()


EXCLUDED_PREFIX = "excluded"


@dataclass(frozen=True)
class Exclusion:
    """A dropped record with its reason: ``record`` as it was when dropped, ``detail`` what it was dropped for
    (e.g. the record it duplicates or conflicts with)."""

    reason: str
    record_id: str
    record: dict[str, Any]
    detail: dict[str, Any]


class ExclusionWriter:
    """Keeps a stage's dropped records, with their reason, as ``excluded-*.parquet`` shards (written atomically)
    beside the stage's ``part-*`` output; readers of the output (``shard_paths``) never see them.

    Columns: ``reason``, ``record_id``, ``record`` and ``detail`` (JSON text, so any record type fits one schema).
    """

    def __init__(self, out_dir: str | os.PathLike, shard_size: int = DEFAULT_SHARD_SIZE):
        self._shards = ShardWriter(out_dir, shard_size, prefix=EXCLUDED_PREFIX)

    def add(self, reason: str, record_id: str, record: Any, detail: dict[str, Any] | None = None) -> None:
        """Keep ``record`` (a record model, dataclass or dict) as dropped for ``reason``."""
        self._shards.add({"reason": reason, "record_id": record_id,
                          "record": to_json(record).decode("utf-8"), "detail": json.dumps(detail or {})})

    def __enter__(self) -> ExclusionWriter:  # noqa: PYI034 (as ShardWriter)
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self._shards.flush()


def read_exclusions(stage_dir: str | os.PathLike) -> Iterator[Exclusion]:
    """The records a stage dropped, with their reasons, in the order it dropped them."""
    for _, row in iter_rows(stage_dir, EXCLUDED_PREFIX):
        yield Exclusion(row["reason"], row["record_id"], json.loads(row["record"]), json.loads(row["detail"]))


def replace_shards(src_dir: str | os.PathLike, dst_dir: str | os.PathLike, prefix: str) -> None:
    """Move ``src_dir``'s ``<prefix>-*`` shards over ``dst_dir``'s (whose old ones are removed), one rename each."""
    for old in shard_paths(dst_dir, prefix):
        old.unlink()
    Path(dst_dir).mkdir(parents=True, exist_ok=True)
    for path in shard_paths(src_dir, prefix):
        os.replace(path, Path(dst_dir) / path.name)


def shard_paths(stage_dir: str | os.PathLike, prefix: str = "part") -> list[Path]:
    return sorted(Path(stage_dir).glob(f"{prefix}-*.parquet"))


def iter_rows(stage_dir: str | os.PathLike, prefix: str = "part") -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield ``(where, row)`` for every row of every shard, ``where`` = ``file:row``."""
    for path in shard_paths(stage_dir, prefix):
        for i, row in enumerate(pq.read_table(path).to_pylist()):
            yield f"{path}:{i}", row


def read_records(stage_dir: str | os.PathLike, model: type[R], prefix: str = "part") -> Iterator[R]:
    """Yield validated records from a stage folder; a bad row raises RecordError naming file and row."""
    for where, row in iter_rows(stage_dir, prefix):
        yield model.parse(row, where=where)


def write_shards(
    out_dir: str | os.PathLike,
    records: Iterable[RecordModel],
    shard_size: int = DEFAULT_SHARD_SIZE,
) -> int:
    """Replace a stage folder's shards with ``records`` (its success marker removed first); returns the count."""
    out_dir = Path(out_dir)
    for old in shard_paths(out_dir):
        old.unlink()
    (out_dir / SUCCESS_MARKER).unlink(missing_ok=True)
    with ShardWriter(out_dir, shard_size) as writer:
        for record in records:
            writer.add(record)
    return writer.written


def write_records(
    out_dir: str | os.PathLike,
    records: Iterable[RecordModel],
    stats: StageStats | None = None,
    shard_size: int = DEFAULT_SHARD_SIZE,
) -> int:
    """Write ``records`` as a finished stage folder (shards, stats, success marker); returns the count."""
    written = write_shards(out_dir, records, shard_size)
    if stats is not None:
        stats.write(out_dir)
    mark_done(out_dir)
    return written


def as_dirs(folders: str | os.PathLike | Sequence[str | os.PathLike]) -> list[Path]:
    """One folder or several, as a list of paths (the stages that read several upstream folders take both)."""
    return [Path(folders)] if isinstance(folders, (str, os.PathLike)) else [Path(f) for f in folders]


def is_done(stage_dir: str | os.PathLike) -> bool:
    return (Path(stage_dir) / SUCCESS_MARKER).exists()


def mark_done(stage_dir: str | os.PathLike) -> None:
    """Write the success marker last, with the folder's content fingerprint."""
    write_json_atomic(Path(stage_dir) / SUCCESS_MARKER, {"fingerprint": content_fingerprint(stage_dir)})


_HASH_BLOCK = 1 << 20


def content_fingerprint(stage_dir: str | os.PathLike, files: Iterable[Path] | None = None) -> str:
    """sha256 over the names and bytes of a stage folder's manifest and shards (or of ``files``)."""
    stage_dir = Path(stage_dir)
    h = hashlib.sha256()
    for path in files if files is not None else [stage_dir / MANIFEST_FILE, *shard_paths(stage_dir)]:
        if not path.is_file():
            continue
        h.update(path.name.encode() + b"\0")
        with open(path, "rb") as fh:
            while block := fh.read(_HASH_BLOCK):
                h.update(block)
    return h.hexdigest()


def done_fingerprint(stage_dir: str | os.PathLike) -> str:
    """The fingerprint a finished stage folder recorded (computed now for a marker without one)."""
    marker = Path(stage_dir) / SUCCESS_MARKER
    if not marker.exists():
        raise FileNotFoundError(f"{stage_dir}: not a finished stage folder (no {SUCCESS_MARKER} marker)")
    try:
        return json.loads(marker.read_text(encoding="utf-8"))["fingerprint"]
    except (json.JSONDecodeError, KeyError, TypeError):
        return content_fingerprint(stage_dir)


def read_stats(stage_dir: str | os.PathLike) -> dict[str, Any]:
    return json.loads((Path(stage_dir) / STATS_FILE).read_text(encoding="utf-8"))


_TAIL_BLOCK = 1 << 16


def _last_line_start(fh, end: int) -> int:
    """Offset just after the last newline before ``end`` (0 if there is none)."""
    pos = end
    while pos > 0:
        low = max(0, pos - _TAIL_BLOCK)
        fh.seek(low)
        cut = fh.read(pos - low).rfind(b"\n")
        if cut >= 0:
            return low + cut + 1
        pos = low
    return 0


def _mend_torn_tail(fh) -> None:
    """A last line without its newline (a kill mid-write) is cut off, or ended if it is whole JSON."""
    end = fh.seek(0, os.SEEK_END)
    if end == 0:
        return
    fh.seek(end - 1)
    if fh.read(1) == b"\n":
        return
    start = _last_line_start(fh, end)
    fh.seek(start)
    try:
        json.loads(fh.read(end - start))
    except ValueError:
        fh.truncate(start)
    else:
        fh.write(b"\n")


def append_jsonl_rows(path: str | os.PathLike, rows: Iterable[dict[str, Any]]) -> None:
    """Append JSON lines durably (one flush + fsync) for logs that must survive a kill; mend a torn last line first."""
    data = "".join(json.dumps(row, ensure_ascii=False, default=str) + "\n" for row in rows).encode("utf-8")
    with naming(path), open(path, "a+b") as fh:
        _mend_torn_tail(fh)
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def append_jsonl(path: str | os.PathLike, row: dict[str, Any]) -> None:
    """Append one JSON line durably (see :func:`append_jsonl_rows`)."""
    append_jsonl_rows(path, [row])


def read_jsonl(path: str | os.PathLike) -> Iterator[dict[str, Any]]:
    """Yield rows of a JSONL file; a truncated last line (from a kill) is skipped, any other bad line raises."""
    path = Path(path)
    if not path.exists():
        return
    lines = path.read_text(encoding="utf-8").splitlines()
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            yield json.loads(line)
        except json.JSONDecodeError as exc:
            if n == len(lines):
                return
            raise ValueError(f"{path}:{n}: not valid JSON: {exc}") from None


MANIFEST_FILE = "manifest.json"


def write_manifest(out_dir: str | os.PathLike, stage: str, inputs: list[str], params: dict[str, Any]) -> Path:
    """Record what produced a stage folder: its inputs (so the next stage can find them) and its parameters (what
    decided its output, the builder's fingerprint of its code among them)."""
    from . import __version__

    return write_json_atomic(
        Path(out_dir) / MANIFEST_FILE,
        {"stage": stage, "inputs": [str(Path(p).resolve()) for p in inputs], "params": params,
         "biodivergence_version": __version__},
    )


def read_manifest(stage_dir: str | os.PathLike) -> dict[str, Any]:
    path = Path(stage_dir) / MANIFEST_FILE
    if not path.exists():
        raise FileNotFoundError(f"{path}: no manifest; is {stage_dir} a stage output folder?")
    return json.loads(path.read_text(encoding="utf-8"))
