"""Releases named by a local folder or a Hub id, read offline from a seeded HF cache."""

from __future__ import annotations

from pathlib import Path

import pytest
from huggingface_hub import constants
from release_factory import seed_hub_cache, write_small_release

from biodivergence_dataset.release import resolve_release


@pytest.fixture
def offline_cache(tmp_path, monkeypatch) -> Path:
    cache = tmp_path / "hf-cache"
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    return cache


def test_local_folder_is_returned_as_is(tmp_path, offline_cache):
    assert resolve_release(str(tmp_path)) == tmp_path


def test_hub_id_with_revision_reads_the_seeded_snapshot(tmp_path, offline_cache):
    src = write_small_release(tmp_path / "release")
    snapshot = seed_hub_cache(offline_cache, "acme/biodivergence", "v1.0", src)
    resolved = resolve_release("acme/biodivergence@v1.0")
    assert resolved == snapshot
    assert (resolved / "README.md").read_text() == (src / "README.md").read_text()


def test_hub_id_without_revision_reads_main(tmp_path, offline_cache):
    src = write_small_release(tmp_path / "release")
    snapshot = seed_hub_cache(offline_cache, "acme/biodivergence", "main", src)
    assert resolve_release("acme/biodivergence") == snapshot


def test_unknown_revision_names_the_id_and_revision(tmp_path, offline_cache):
    seed_hub_cache(offline_cache, "acme/biodivergence", "v1.0", write_small_release(tmp_path / "release"))
    with pytest.raises(FileNotFoundError, match=r"acme/biodivergence at revision 'v2\.0'"):
        resolve_release("acme/biodivergence@v2.0")


def test_missing_path_is_reported_as_a_missing_folder(tmp_path, offline_cache):
    missing = tmp_path / "nowhere" / "release"
    with pytest.raises(FileNotFoundError, match="no such folder") as err:
        resolve_release(str(missing))
    assert "biodivergence card" not in str(err.value)


def test_a_file_is_not_a_release_folder(tmp_path, offline_cache):
    f = tmp_path / "README.md"
    f.write_text("x")
    with pytest.raises(FileNotFoundError, match="not a folder"):
        resolve_release(str(f))
