"""Hub publishing against an autospec ``HfApi`` (the Hub is unreachable here): order, atomicity, tags, tokens."""

from __future__ import annotations

import json
from unittest import mock

import pytest
from huggingface_hub import HfApi, constants
from huggingface_hub.errors import RepositoryNotFoundError
from huggingface_hub.hf_api import CommitInfo, GitRefInfo, GitRefs
from release_factory import write_small_release

from biodivergence_dataset import hub
from biodivergence_dataset.cli import main
from biodivergence_dataset.hub import PushError, push_release

REPO, TAG = "biodiv-org/biodivergence", "v1.0"
OID = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture
def release(tmp_path):
    root = write_small_release(tmp_path / "release")
    (root / ".stages" / "split").mkdir(parents=True)
    (root / ".stages" / "split" / "_SUCCESS").write_text("")  # local bookkeeping: never published
    return root


def fake_api(tags=()):
    api = mock.create_autospec(HfApi, instance=True)
    api.list_repo_refs.return_value = GitRefs(
        branches=[], converts=[], tags=[GitRefInfo(name=t, ref=f"refs/tags/{t}", target_commit=OID) for t in tags])
    api.upload_folder.return_value = CommitInfo(
        commit_url=f"https://huggingface.co/datasets/{REPO}/commit/{OID}", commit_message=f"Release {TAG}",
        commit_description="", oid=OID)
    return api


def test_push_is_create_repo_then_one_commit_then_a_tag_on_that_commit(release):
    api = fake_api()
    assert push_release(release, REPO, TAG, private=True, api=api) == OID
    names = [c[0] for c in api.mock_calls]
    assert names == ["list_repo_refs", "create_repo", "upload_folder", "create_tag"]
    api.create_repo.assert_called_once_with(repo_id=REPO, repo_type="dataset", private=True, exist_ok=True)
    upload = api.upload_folder.call_args.kwargs
    assert upload["repo_id"] == REPO and upload["repo_type"] == "dataset"
    assert upload["folder_path"] == str(release)
    assert set(upload["ignore_patterns"]) == set(hub.IGNORE_PATTERNS)
    assert upload["delete_patterns"] == ["*"]  # files of an earlier release vanish in the same commit
    api.create_tag.assert_called_once_with(repo_id=REPO, repo_type="dataset", tag=TAG,
                                           tag_message=f"BioDivergence release {TAG}", revision=OID)


def test_push_stamps_the_card_with_repo_and_version(release):
    push_release(release, REPO, "v2.1", api=fake_api())
    card = (release / "README.md").read_text()
    assert f'load_dataset("{REPO}", "primary", revision="v2.1")' in card
    assert json.loads((release / "card_meta.json").read_text())["repo_id"] == REPO


def test_push_uploads_eval_yaml_and_stamps_the_results_example(release):
    files = dict(hub.release_files(release))
    assert files["eval.yaml"] == (release / "eval.yaml").stat().st_size  # the Hub benchmark registration goes up
    push_release(release, REPO, "v2.1", api=fake_api())
    card = (release / "README.md").read_text()
    assert f"    id: {REPO}\n    task_id: " in card  # the .eval_results/ example names the published repo
    assert f'"dataset_path": "{REPO}", "revision": "v2.1"' in card


def test_failed_upload_creates_no_tag(release):
    api = fake_api()
    api.upload_folder.side_effect = ConnectionError("connection reset during upload")
    with pytest.raises(PushError, match="no commit was made and no tag created"):
        push_release(release, REPO, TAG, api=api)
    api.create_tag.assert_not_called()


def test_failed_tag_names_the_untagged_commit(release):
    api = fake_api()
    api.create_tag.side_effect = ConnectionError("timeout")
    with pytest.raises(PushError, match=f"tagging commit {OID} of {REPO} as {TAG} failed .* re-run the push"):
        push_release(release, REPO, TAG, api=api)


def test_existing_tag_is_refused_before_anything_is_uploaded(release):
    api = fake_api(tags=[TAG])
    with pytest.raises(PushError, match="already has tag v1.0"):
        push_release(release, REPO, TAG, api=api)
    api.create_repo.assert_not_called()
    api.upload_folder.assert_not_called()


def test_new_repo_has_no_tags(release):
    api = fake_api()
    api.list_repo_refs.side_effect = RepositoryNotFoundError("404", response=mock.Mock(headers={}, status_code=404))
    assert push_release(release, REPO, TAG, api=api) == OID


def test_invalid_release_is_not_pushed(release):
    (release / "README.md").unlink()
    api = fake_api()
    with pytest.raises(PushError, match="not a valid release; nothing was pushed"):
        push_release(release, REPO, TAG, api=api)
    assert api.mock_calls == []


@pytest.mark.parametrize("repo, tag, message", [
    ("no-slash", TAG, "ORG/NAME"), (REPO, "1.0", "vX.Y"), (REPO, "v1", "vX.Y"), (REPO, "latest", "vX.Y")])
def test_bad_repo_or_tag_names(release, repo, tag, message):
    with pytest.raises(ValueError, match=message):
        push_release(release, repo, tag, api=fake_api())


def test_uploaded_files_exclude_local_bookkeeping(release):
    files = dict(hub.release_files(release))
    assert "README.md" in files and "primary/train-00000-of-00001.parquet" in files
    assert not [f for f in files if f.startswith(".") or "/." in f]
    assert files["README.md"] == (release / "README.md").stat().st_size


def test_dry_run_lists_operations_and_contacts_nobody(release, capsys):
    with mock.patch.object(hub, "push_release") as push, mock.patch("huggingface_hub.HfApi") as api_class:
        assert main(["push", str(release), "--repo", REPO, "--tag", TAG, "--dry-run"]) == 0
    push.assert_not_called()
    api_class.assert_not_called()
    out = capsys.readouterr().out
    for op in ("1. create_repo(", "2. upload_folder(", "3. create_tag("):
        assert op in out
    assert "primary/train-00000-of-00001.parquet" in out and "_SUCCESS" not in out
    assert "release is valid" in out


def test_token_comes_from_hf_token_then_login_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_TOKEN", "hf_from_env")
    assert hub.resolve_token() == "hf_from_env"
    monkeypatch.delenv("HF_TOKEN")
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(tmp_path / "token"))  # where `hf auth login` saves it
    (tmp_path / "token").write_text("hf_from_cache")
    assert hub.resolve_token() == "hf_from_cache"


def test_missing_token_is_a_clear_error(monkeypatch, tmp_path, release):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(tmp_path / "no-token"))
    with pytest.raises(PushError, match="set HF_TOKEN"):
        push_release(release, REPO, TAG)
    assert main(["push", str(release), "--repo", REPO, "--tag", TAG]) == 1
