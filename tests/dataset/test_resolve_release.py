"""Releases named by a local folder or a Hub id, read offline from a seeded HF cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from huggingface_hub import constants
from release_factory import seed_hub_cache, write_small_release

from biodivergence_cli.main import main
from biodivergence_dataset.release import iter_rows, resolve_release


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


def _perfect_predictions(release_dir: Path, path: Path) -> Path:
    rows = [{"pair_id": r["pair_id"], "conflict_type": r["conflict_type"], "divergence_axes": r["divergence_axes"],
             "dominant_confounder": r["dominant_confounder"] or ""} for _, r in iter_rows(release_dir, "primary", "test")]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_evaluate_reads_a_release_by_hub_id_from_the_offline_cache(tmp_path, offline_cache):
    src = write_small_release(tmp_path / "release")
    seed_hub_cache(offline_cache, "acme/biodivergence", "v1.0", src)
    predictions = _perfect_predictions(src, tmp_path / "preds.jsonl")
    out = tmp_path / "report.json"
    assert main(["evaluate", "--predictions", str(predictions), "--release", "acme/biodivergence@v1.0",
                 "--no-semsim", "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["release"] == "acme/biodivergence@v1.0"
    assert report["n_scored"] == report["n_references"] == 3
    assert report["metrics"]["conflict_type/accuracy"] == 1.0


@pytest.mark.parametrize("command", ["evaluate", "validate"])
def test_commands_name_a_missing_release_folder(tmp_path, offline_cache, capsys, command):
    extra = ["--predictions", str(_perfect_predictions(write_small_release(tmp_path / "r"), tmp_path / "p.jsonl"))]
    argv = [command, "--release", str(tmp_path / "gone" / "release"), *(extra if command == "evaluate" else [])]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert f"no such folder: {tmp_path / 'gone' / 'release'}" in err and "biodivergence card" not in err
