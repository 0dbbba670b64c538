"""A release owns its files and its card describes them (issue 29): a link or a file outside ``release_files.json``
is refused by ``validate`` and never uploaded; a card whose data or plots changed since it was written is refused,
and ``biodivergence card`` re-runs the audit it needs instead of re-rendering stale figures."""

from __future__ import annotations

import dataclasses
import json
import random

import pytest
from fault_cases import FakeHub
from huggingface_hub import constants
from release_factory import write_small_release
from split_factory import example, write_annotations

from biodivergence_cli.main import main
from biodivergence_dataset import hub, ontology
from biodivergence_dataset.release import card_files, read_file_manifest, state_dir
from biodivergence_dataset.validate import validate_release
from builder import audit, release_stage, split

REPO, TAG = "biodivergence/test-release", "v1.0"


@pytest.fixture
def small(tmp_path):
    rel = write_small_release(tmp_path / "release")
    assert validate_release(rel).ok
    secret = tmp_path / "outside.txt"
    secret.write_text("not the release's\n")
    return rel, secret


def test_the_card_records_every_file_it_describes_with_its_hash(small):
    rel, _ = small
    listed = read_file_manifest(rel)
    assert set(listed) == {p.relative_to(rel).as_posix() for p in rel.rglob("*.parquet")}
    assert all(len(digest) == 64 for digest in listed.values())


def test_a_symlink_in_a_release_is_refused_and_never_uploaded(small, capsys):
    rel, secret = small
    (rel / "notes.txt").symlink_to(secret)
    problems = validate_release(rel).problems
    assert any("notes.txt: a symbolic link" in p for p in problems)
    assert "notes.txt" not in [p for p, _ in hub.release_files(rel)]
    assert main(["push", "--release", str(rel), "--repo", REPO, "--tag", TAG, "--dry-run"]) == 1
    out = capsys.readouterr().out
    assert "a real push would refuse" in out and "notes.txt  (" not in out


@pytest.mark.parametrize("extra", ["extra.bin", "primary/mynotes.txt", "plots/other.png"])
def test_a_file_outside_the_manifest_is_refused_and_never_uploaded(small, extra):
    rel, _ = small
    (rel / extra).parent.mkdir(exist_ok=True)
    (rel / extra).write_bytes(b"mine")
    assert any(f"{extra}: not part of the release" in p for p in validate_release(rel).problems)
    assert extra not in [p for p, _ in hub.release_files(rel)]


def test_a_push_uploads_only_what_the_release_owns_even_past_validation(small, monkeypatch):
    """With validation bypassed, the commit itself still holds no link and no foreign file."""
    rel, secret = small
    (rel / "notes.txt").symlink_to(secret)
    (rel / "primary" / "mynotes.txt").write_text("mine")
    unchecked = dataclasses.replace(hub.DATASET, problems=lambda folder, repo_id: [])
    with FakeHub() as fake:
        monkeypatch.setattr(constants, "ENDPOINT", fake.endpoint)
        monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
        monkeypatch.setenv("HF_TOKEN", "hf_fake")
        hub.publish(unchecked, rel, REPO, TAG)
        uploaded = sorted(fake.files("dataset", REPO, TAG))
    assert uploaded == sorted([*read_file_manifest(rel), *card_files()])
    assert "notes.txt" not in uploaded and "primary/mynotes.txt" not in uploaded


def test_a_changed_data_file_makes_the_card_stale(small):
    rel, _ = small
    shard = next(rel.glob("primary/train-*.parquet"))
    shard.write_bytes(shard.read_bytes() + b"\0")
    assert any(f"{shard}: changed since the card was written" in p for p in validate_release(rel).problems)


@pytest.fixture
def built(tmp_path):
    """A release made by the split, audit and release stages from annotations (plots included)."""
    rnd = random.Random(3)
    examples = [example(f"amr:{rnd.randrange(60)}", f"amr:x{i}", conflict=rnd.choice(ontology.EVALUABLE_CLASSES))
                for i in range(90)]
    ann = write_annotations(tmp_path / "annotations", examples)
    rel = tmp_path / "release"
    split.run_stage(ann, rel)
    audit.run_stage(rel, rel, audit.AuditConfig(dpi=30))
    release_stage.run_stage(None, rel)
    assert validate_release(rel).ok, validate_release(rel).problems
    return ann, rel


def test_an_interrupted_audit_leaves_a_card_that_is_refused_until_card_reruns_it(built, capsys):
    ann, rel = built
    before = json.loads((rel / "audit.json").read_text())
    split.run_stage(ann, rel, split.SplitConfig(seed=7))  # new data; the audit is killed before it finishes
    (state_dir(rel, "audit") / "_SUCCESS").unlink()
    problems = validate_release(rel).problems
    assert any("changed since the card was written; the card is stale" in p for p in problems), problems
    assert main(["card", "--release", str(rel)]) == 0
    assert validate_release(rel).ok, validate_release(rel).problems
    after = json.loads((rel / "audit.json").read_text())
    assert after != before  # the audit ran again on the new split
    assert after == audit.audit_release(rel)["audit"]
    plots = json.loads((rel / "plots" / "plots.json").read_text())
    assert len(plots) == 3 and all((rel / p["file"]).is_file() for p in plots)


def test_a_new_split_keeps_a_foreign_file_in_a_config_folder_and_validate_names_it(built):
    ann, rel = built
    (rel / "primary" / "mynotes.txt").write_text("do not delete")
    split.run_stage(ann, rel, split.SplitConfig(seed=7))
    assert (rel / "primary" / "mynotes.txt").read_text() == "do not delete"
    assert any("primary/mynotes.txt: not part of the release" in p for p in validate_release(rel).problems)
