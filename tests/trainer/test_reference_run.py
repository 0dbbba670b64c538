"""benchmarks/reference_run.py reuses a trained seed only for the release it was trained on."""

from __future__ import annotations

import importlib.util
import json
from dataclasses import asdict

from repo_paths import REPO


def _module(monkeypatch):
    """The script as a module; its sibling ``results_files`` is found as when it runs (its folder on the path)."""
    monkeypatch.syspath_prepend(str(REPO / "benchmarks"))
    spec = importlib.util.spec_from_file_location("reference_run", REPO / "benchmarks" / "reference_run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_seed_is_reused_only_for_the_release_it_was_trained_on(tmp_path, monkeypatch):
    run = _module(monkeypatch)
    release, out = tmp_path / "release", tmp_path / "out"
    release.mkdir()
    (release / "release_files.json").write_text('{"files": {"primary/test.parquet": "aaa"}}')
    settings, training = run.TrainSettings(), {"num_train_epochs": 3.0}
    calls = []

    def fake_train(release_dir, folder, encoder, seeds, settings, training):
        calls.append(release_dir)
        folder.mkdir(parents=True, exist_ok=True)
        results = {"settings": asdict(settings), "runs": [{"schedule": dict(training)}]}
        (folder / run.RESULTS_FILE).write_text(json.dumps(results))
        return results

    monkeypatch.setattr(run, "train", fake_train)
    assert "reused" not in run.train_seed_once(release, out, "minilm", 42, settings, training)
    assert run.train_seed_once(release, out, "minilm", 42, settings, training)["reused"]
    assert len(calls) == 1  # same release, settings and schedule: reused
    (release / "release_files.json").write_text('{"files": {"primary/test.parquet": "bbb"}}')  # rebuilt
    run.train_seed_once(release, out, "minilm", 42, settings, training)
    assert len(calls) == 2
    run.train_seed_once(release, out, "minilm", 42, settings, {"num_train_epochs": 4.0})
    assert len(calls) == 3  # another schedule
