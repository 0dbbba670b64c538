"""Release folder I/O: what the Hub sees and what ``load_dataset(folder, config)`` reads.

Layout::

    RELEASE/
      README.md                       # card; YAML declares configs: and dataset_info:
      primary/train-00000-of-00001.parquet …
      pairlevel/…
      split_manifest.json, annotation_manifest.json, audit.json, stats.json, plots/…
      release_files.json              # every file above (not the card's own) with its sha256

Every file is written atomically; the data folders of a release are swapped in whole. ``release_files.json``
is written with the card: it is what the release owns (``push`` uploads only these files and the card's) and
what the card describes (``validate`` fails when a file changed, vanished or appeared since).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from . import ontology
from .features import decode_row, encode_example, release_features
from .io import STATS_FILE, staging_folder, swap_folder, write_table_atomic
from .provenance import SOURCES_FILE
from .records import Example

README = "README.md"
SPLIT_MANIFEST = "split_manifest.json"
#: Hidden bookkeeping folder inside a release (each stage's stats, manifest, success marker); never published.
STATE_DIR = ".stages"
#: What the split decided (the split manifest without the provenance the release stage adds), in its state folder.
SPLIT_REPORT = "report.json"
DEFAULT_SHARD_ROWS = 20_000
#: ``ORG/NAME`` or ``ORG/NAME@REVISION`` (a branch, tag or commit of a Hub dataset repository).
#: The release's files with their sha256 when the card was written (see :func:`write_file_manifest`).
FILES_MANIFEST = "release_files.json"
#: Where a release holds files besides its top level and its config folders' data.
PLOTS_DIR = "plots"
#: The annotation runs' manifests, the audit's findings, the gold check's scores and the robustness section.
ANNOTATION_MANIFEST = "annotation_manifest.json"
AUDIT_FILE = "audit.json"
GOLDCHECK_FILE = "goldcheck.json"
#: ``goldcheck.json`` as Markdown (tables and warnings), rendered by the builder for the card to show.
GOLDCHECK_SUMMARY = "goldcheck.md"
ROBUSTNESS_FILE = "robustness.md"
#: The trivial floors measured on the release's test split (``biodivergence floors``; ``benchmark.read_floors``).
FLOORS_FILE = "floors.json"
#: The card's own files besides the README: the Hub's benchmark registration (``benchmark``) and what the card says
#: beyond the data (``cardmeta.CardMeta``).
EVAL_FILE = "eval.yaml"
META_FILE = "card_meta.json"
#: The files the release format declares at a release's top level, besides the card's own: nothing else there
#: is the release's, so a stray file is never fingerprinted, listed or pushed (``validate`` names it).
#: Folders every file of which is the release's (plots; the evidence maps' data, tables and plots).
OWNED_DIRS = (PLOTS_DIR, ontology.EVIDENCE_MAP_CONFIG)
TOP_LEVEL_FILES = (SPLIT_MANIFEST, ANNOTATION_MANIFEST, STATS_FILE, AUDIT_FILE, SOURCES_FILE, GOLDCHECK_FILE,
                   GOLDCHECK_SUMMARY, ROBUSTNESS_FILE, FLOORS_FILE)

HUB_ID = re.compile(r"^(?P<repo>[\w.-]+/[\w.-]+)(?:@(?P<revision>[\w./-]+))?$")


def state_dir(release_dir: str | Path, stage: str) -> Path:
    """The bookkeeping folder of the stage ``stage`` (split, audit, release) inside a release."""
    return Path(release_dir) / STATE_DIR / stage


def split_record(release_dir: str | Path) -> dict[str, Any]:
    """What the split decided: its report (``.stages/split/report.json``), else the release's split manifest
    (a release assembled by hand)."""
    for path, key in ((state_dir(release_dir, "split") / SPLIT_REPORT, "manifest"),
                      (Path(release_dir) / SPLIT_MANIFEST, None)):
        if path.exists():
            data = json.loads(path.read_text(encoding="utf-8"))
            return data[key] if key else data
    return {}


def resolve_release(spec: str | Path) -> Path:
    """The local folder of a release named by a folder or by a Hub id ``ORG/NAME[@REVISION]``.

    A Hub id is read through ``huggingface_hub.snapshot_download`` (``repo_type="dataset"``), so
    with ``HF_HUB_OFFLINE=1`` it is served from the HF cache. An existing folder always wins.
    """
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, HFValidationError, LocalEntryNotFoundError

    path = Path(spec)
    if path.is_dir():
        return path
    match = HUB_ID.match(str(spec))
    if path.exists() or match is None:
        what = "not a folder" if path.exists() else "no such folder"
        raise FileNotFoundError(f"{what}: {spec} (a release is a local folder or a Hub id ORG/NAME[@REVISION])")
    repo, revision = match["repo"], match["revision"]
    try:
        return Path(snapshot_download(repo, repo_type="dataset", revision=revision))
    except (LocalEntryNotFoundError, HfHubHTTPError, HFValidationError) as exc:
        at = f" at revision {revision!r}" if revision else ""
        raise FileNotFoundError(
            f"no such folder {spec}, and the Hub dataset {repo}{at} could not be read "
            f"({type(exc).__name__}: {str(exc).splitlines()[0]})"
        ) from None


def split_order(names: Iterable[str]) -> list[str]:
    """Splits in canonical order (train, validation, test, extra test splits, then others)."""
    canon = list(ontology.SPLITS) + list(ontology.EXTRA_TEST_SPLITS)
    names = list(names)
    return [s for s in canon if s in names] + sorted(s for s in names if s not in canon)


def shard_name(split: str, i: int, n: int) -> str:
    return f"{split}-{i:05d}-of-{n:05d}.parquet"


def write_config(
    release_dir: str | Path,
    config: str,
    splits: Mapping[str, Iterable[Example]],
    shard_rows: int = DEFAULT_SHARD_ROWS,
) -> dict[str, int]:
    """Write one config's splits as Parquet shards; the config folder is replaced atomically, keeping any file
    in it that is not a shard (not the release's: ``validate`` names it, but nothing is deleted).

    Returns the number of rows per split.
    """
    if config not in ontology.CONFIGS:
        raise ValueError(f"unknown config {config!r}; expected one of {list(ontology.CONFIGS)}")
    release_dir = Path(release_dir)
    staging = staging_folder(release_dir / config)
    schema = release_features().arrow_schema
    sizes: dict[str, int] = {}
    for split in split_order(splits):
        rows = [encode_example(ex) for ex in splits[split]]
        sizes[split] = len(rows)
        n = max(1, math.ceil(len(rows) / shard_rows))
        for i in range(n):
            chunk = rows[i * shard_rows:(i + 1) * shard_rows]
            write_table_atomic(staging / shard_name(split, i, n), pa.Table.from_pylist(chunk, schema=schema))
    final = release_dir / config
    if final.exists():
        for foreign in (p for p in final.iterdir() if p.suffix != ".parquet" or not p.is_file()):
            foreign.rename(staging / foreign.name)
    swap_folder(staging, final)
    return sizes


def config_names(release_dir: str | Path) -> list[str]:
    """Configs present on disk, in ontology order."""
    release_dir = Path(release_dir)
    return [c for c in ontology.CONFIGS if (release_dir / c).is_dir()]


def split_names(release_dir: str | Path, config: str) -> list[str]:
    files = (Path(release_dir) / config).glob("*.parquet")
    return split_order({p.name.rsplit("-", 3)[0] for p in files})


def split_files(release_dir: str | Path, config: str, split: str) -> list[Path]:
    return sorted((Path(release_dir) / config).glob(f"{split}-[0-9]*-of-*.parquet"))


def split_sizes(release_dir: str | Path) -> dict[str, dict[str, int]]:
    """``{config: {split: rows}}`` read from Parquet metadata."""
    return {
        config: {
            split: sum(pq.ParquetFile(p).metadata.num_rows for p in split_files(release_dir, config, split))
            for split in split_names(release_dir, config)
        }
        for config in config_names(release_dir)
    }


def iter_rows(release_dir: str | Path, config: str, split: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield ``(where, decoded_row)`` with ``where`` = ``file:row`` for error messages."""
    for path in split_files(release_dir, config, split):
        for i, row in enumerate(pq.read_table(path).to_pylist()):
            where = f"{path}:{i}"
            try:
                yield where, decode_row(row)
            except ValueError as exc:
                raise ValueError(f"{where}: {exc}") from None


def iter_examples(release_dir: str | Path, config: str, split: str) -> Iterator[Example]:
    """Validated ``Example``s of one split (RecordError names file and row on a bad record)."""
    for where, row in iter_rows(release_dir, config, split):
        yield Example.parse(row, where=where)


def configs_yaml(release_dir: str | Path) -> list[dict[str, Any]]:
    """The README ``configs:`` block for the configs on disk."""
    out = []
    for config in config_names(release_dir):
        entry: dict[str, Any] = {"config_name": config}
        if config == ontology.DEFAULT_CONFIG:
            entry["default"] = True
        entry["data_files"] = [
            {"split": split, "path": f"{config}/{split}-*"} for split in split_names(release_dir, config)
        ]
        out.append(entry)
    return out


def split_num_bytes(release_dir: str | Path, config: str, split: str) -> int:
    """A split's size in memory (Arrow bytes), the ``num_bytes`` ``datasets`` records when it prepares a split."""
    return sum(pq.read_table(p).nbytes for p in split_files(release_dir, config, split))


def dataset_info_yaml(release_dir: str | Path) -> list[dict[str, Any]]:
    """The README ``dataset_info:`` block (typed features, split sizes, download and dataset sizes) per config."""
    from datasets import DatasetInfo, SplitDict, SplitInfo

    out = []
    sizes = split_sizes(release_dir)
    for config in config_names(release_dir):
        splits = SplitDict()
        for split, n in sizes[config].items():
            splits.add(SplitInfo(name=split, num_bytes=split_num_bytes(release_dir, config, split), num_examples=n))
        info = DatasetInfo(
            features=release_features(), splits=splits, config_name=config,
            download_size=sum(p.stat().st_size for p in (Path(release_dir) / config).glob("*.parquet")),
            dataset_size=sum(s.num_bytes for s in splits.values()),
        )
        out.append({"config_name": config, **info._to_yaml_dict()})
    return out


def load_release(release_dir: str | Path, config: str = ontology.DEFAULT_CONFIG, **kwargs):
    """``datasets.load_dataset`` on a release folder, exactly as users read it from the Hub."""
    from datasets import load_dataset

    return load_dataset(str(release_dir), config, **kwargs)


# ---------------------------------------------------------------------------------------------
# what the release owns, and the fingerprints the card describes


def card_files() -> tuple[str, ...]:
    """The card's own files, written with (or after) the file manifest, so not fingerprinted by it."""
    return README, EVAL_FILE, META_FILE, FILES_MANIFEST


def _visible(release_dir: Path) -> Iterator[Path]:
    """Every entry under ``release_dir`` without a hidden part, links not followed."""
    import os

    for root, dirs, files in os.walk(release_dir):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in [*files, *(d for d in dirs if (Path(root) / d).is_symlink())]:
            if not name.startswith("."):
                yield Path(root) / name


def owned_files(release_dir: str | Path) -> list[str]:
    """The files the release's writers put there (paths relative to it): the declared top-level files
    (:data:`TOP_LEVEL_FILES`), the files in ``plots/`` and in the evidence maps' folder and the data files of its
    configs; never a symbolic link, never the card's own files."""
    release_dir = Path(release_dir)
    data = {p for c in config_names(release_dir) for p in (release_dir / c).glob("*.parquet")}
    out = []
    for path in _visible(release_dir):
        rel = path.relative_to(release_dir)
        if path.is_symlink() or not path.is_file():
            continue
        if (len(rel.parts) == 1 and rel.name in TOP_LEVEL_FILES) or rel.parts[0] in OWNED_DIRS or path in data:
            out.append(rel.as_posix())
    return sorted(out)


def _sha256(path: Path) -> str:
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def write_file_manifest(release_dir: str | Path) -> Path:
    """Record the release's files (:func:`owned_files`) with their sha256, as the card is written."""
    from .io import write_json_atomic

    release_dir = Path(release_dir)
    return write_json_atomic(release_dir / FILES_MANIFEST,
                             {"files": {name: _sha256(release_dir / name) for name in owned_files(release_dir)}})


def read_file_manifest(release_dir: str | Path) -> dict[str, str] | None:
    """``{path: sha256}`` of the release's file manifest (None when it has none or it is unreadable)."""
    try:
        files = json.loads((Path(release_dir) / FILES_MANIFEST).read_text(encoding="utf-8"))["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return files if isinstance(files, dict) else None


def file_problems(release_dir: str | Path) -> list[str]:
    """What makes the release's files differ from what its card describes: links, files outside the file
    manifest, files changed or gone since the card was written."""
    release_dir = Path(release_dir)
    fix = "re-run `biodivergence card` (it re-runs the audit the card needs)"
    problems = [f"{p}: a symbolic link (to {p.readlink()}); a release holds only its own files, never links: "
                "replace it with the file it points to, or remove it"
                for p in _visible(release_dir) if p.is_symlink()]
    listed = read_file_manifest(release_dir)
    if listed is None:
        missing = (f"{release_dir / FILES_MANIFEST}: missing or unreadable (the fingerprints of the files the card "
                   f"describes); {fix}")
        return [*problems, missing]
    on_disk, card = {p.relative_to(release_dir).as_posix() for p in _visible(release_dir)}, set(card_files())
    for name in sorted(on_disk - set(listed) - card):
        if not (release_dir / name).is_symlink() and not (release_dir / name).is_dir():
            problems.append(f"{release_dir / name}: not part of the release (not in {FILES_MANIFEST}): it would not "
                            "be published; remove it, or move it out of the release folder")
    for name, digest in sorted(listed.items()):
        path = release_dir / name
        if not path.is_file():
            problems.append(f"{path}: described by the card but missing; the card is stale: {fix}")
        elif _sha256(path) != digest:
            problems.append(f"{path}: changed since the card was written; the card is stale: {fix}")
    return problems
