"""Hub publishing (releases and the metric Space) against an autospec ``HfApi`` (order, atomicity, tags, tokens)
and against the fake Hub of ``fault_cases`` on 127.0.0.1 (push, then ``evaluate.load`` at the tag)."""

from __future__ import annotations

import json
from pathlib import Path
from unittest import mock

import pytest
from huggingface_hub import HfApi, constants
from huggingface_hub.errors import RepositoryNotFoundError
from huggingface_hub.hf_api import CommitInfo, GitRefInfo, GitRefs
from release_factory import write_small_release

from biodivergence_cli.main import main
from biodivergence_dataset import hub
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
        assert main(["push", "--release", str(release), "--repo", REPO, "--tag", TAG, "--dry-run"]) == 0
    push.assert_not_called()
    api_class.assert_not_called()
    out = capsys.readouterr().out
    for op in ("1. create_repo(", "2. upload_folder(", "3. create_tag("):
        assert op in out
    assert "primary/train-00000-of-00001.parquet" in out and "_SUCCESS" not in out
    assert "release is valid" in out


def test_push_options_reach_the_hub_as_hf_upload_users_expect(release, capsys):
    api = fake_api()
    with mock.patch("huggingface_hub.HfApi", return_value=api) as api_class:
        assert main(["push", "--release", str(release), "--repo", REPO, "--tag", TAG, "--token", "hf_given",
                     "--revision", "dev", "--commit-message", "Release v1.0: new labels"]) == 0
    api_class.assert_called_once_with(token="hf_given")
    upload = api.upload_folder.call_args.kwargs
    assert upload["revision"] == "dev" and upload["commit_message"] == "Release v1.0: new labels"
    assert "create_pr" not in upload
    api.create_tag.assert_called_once()
    assert f"published {REPO}@{TAG} (commit {OID})" in capsys.readouterr().out


def test_push_as_a_pull_request_opens_one_and_leaves_the_tag_for_after_the_merge(release, capsys):
    api = fake_api()
    api.upload_folder.return_value = CommitInfo(
        commit_url=f"https://huggingface.co/datasets/{REPO}/commit/{OID}", commit_message=f"Release {TAG}",
        commit_description="", oid=OID, pr_url=f"https://huggingface.co/datasets/{REPO}/discussions/3")
    with mock.patch("huggingface_hub.HfApi", return_value=api):
        assert main(["push", "--release", str(release), "--repo", REPO, "--tag", TAG, "--token", "hf_given",
                     "--create-pr"]) == 0
    assert api.upload_folder.call_args.kwargs["create_pr"] is True
    api.create_tag.assert_not_called()
    out = capsys.readouterr().out
    assert f"opened https://huggingface.co/datasets/{REPO}/discussions/3" in out and "create_tag" in out
    assert "hf_given" not in out


def test_dry_run_shows_the_commit_options(release, capsys):
    assert main(["push", "--release", str(release), "--repo", REPO, "--tag", TAG, "--dry-run", "--create-pr",
                 "--commit-message", "msg"]) == 0
    out = capsys.readouterr().out
    assert "create_pr=True" in out and "commit_message='msg'" in out and "create_tag(" not in out


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
    assert main(["push", "--release", str(release), "--repo", REPO, "--tag", TAG]) == 1


# --- the metric Space: the same code path, a Gradio Space and the metric folder ---------------------

SPACE = "biodiv-org/biodivergence"


@pytest.fixture
def metric_folder(tmp_path):
    """A copy of metrics/biodivergence (a push stamps the folder it publishes)."""
    import shutil

    from trainer.metric import metric_dir

    return Path(shutil.copytree(metric_dir(), tmp_path / "biodivergence", ignore=shutil.ignore_patterns("__pycache__")))


def test_metric_versions_follow_the_ontology(metric_folder):
    from biodivergence_dataset.ontology import ONTOLOGY_VERSION
    from trainer.metric import versions

    assert versions() == {"metric_version": "dev", "ontology_version": ONTOLOGY_VERSION}
    assert hub.metric_problems(metric_folder, SPACE) == []


def test_metric_push_is_create_space_then_one_commit_then_a_tag(metric_folder):
    api = fake_api()
    assert hub.push_metric(metric_folder, SPACE, "v1.2", api=api) == OID
    assert [c[0] for c in api.mock_calls] == ["list_repo_refs", "create_repo", "upload_folder", "create_tag"]
    api.list_repo_refs.assert_called_once_with(SPACE, repo_type="space")
    api.create_repo.assert_called_once_with(repo_id=SPACE, repo_type="space", private=False, exist_ok=True,
                                            space_sdk="gradio")
    upload = api.upload_folder.call_args.kwargs
    assert (upload["repo_id"], upload["repo_type"], upload["folder_path"]) == (SPACE, "space", str(metric_folder))
    assert upload["delete_patterns"] == ["*"] and "*.pyc" in upload["ignore_patterns"]
    api.create_tag.assert_called_once_with(repo_id=SPACE, repo_type="space", tag="v1.2",
                                           tag_message="BioDivergence metric v1.2", revision=OID)
    # the version is stamped in the module and the card
    assert 'METRIC_VERSION = "v1.2"' in (metric_folder / "scoring.py").read_text()
    card = (metric_folder / "README.md").read_text()
    assert f'evaluate.load("{SPACE}", revision="v1.2")' in card and "version **v1.2**" in card


def test_metric_files_are_the_space(metric_folder):
    (metric_folder / "__pycache__").mkdir()
    (metric_folder / "__pycache__" / "scoring.cpython-311.pyc").write_bytes(b"\0")
    files = [path for path, _ in hub.folder_files(metric_folder, hub.METRIC.ignore_patterns)]
    assert files == sorted(hub.METRIC_FILES)
    assert (metric_folder / "README.md").read_text().startswith("---\ntitle: BioDivergence\n")


def test_failed_metric_upload_creates_no_tag_and_changes_nothing(metric_folder):
    from fault_cases import folder_bytes

    before = folder_bytes(metric_folder)
    api = fake_api()
    api.upload_folder.side_effect = ConnectionError("connection reset during upload")
    with pytest.raises(PushError, match="no commit was made and no tag created; the local metric is unchanged"):
        hub.push_metric(metric_folder, SPACE, TAG, api=api)
    api.create_tag.assert_not_called()
    assert folder_bytes(metric_folder) == before


def test_existing_metric_tag_is_refused(metric_folder):
    api = fake_api(tags=[TAG])
    with pytest.raises(PushError, match="already has tag v1.0"):
        hub.push_metric(metric_folder, SPACE, TAG, api=api)
    assert [c[0] for c in api.mock_calls] == ["list_repo_refs"]


@pytest.mark.parametrize("space, broken, message", [
    ("org/bio-metric", None, "Space name 'bio-metric' must be 'biodivergence'"),
    (SPACE, "app.py", "app.py: missing"),
    (SPACE, "requirements.txt", "requirements.txt: missing")])
def test_invalid_metric_is_not_pushed(metric_folder, space, broken, message):
    if broken:
        (metric_folder / broken).unlink()
    api = fake_api()
    with pytest.raises(PushError, match=f"not a valid metric; nothing was pushed:\n.*{message}"):
        hub.push_metric(metric_folder, space, TAG, api=api)
    assert api.mock_calls == []


def test_metric_dry_run_lists_files_and_operations_and_writes_nothing(metric_folder, capsys):
    from fault_cases import folder_bytes

    before = folder_bytes(metric_folder)
    with mock.patch.object(hub, "publish") as publish, mock.patch("huggingface_hub.HfApi") as api_class:
        argv = ["push-metric", "--space", SPACE, "--tag", TAG, "--metric-dir", str(metric_folder), "--dry-run"]
        assert main(argv) == 0
    publish.assert_not_called()
    api_class.assert_not_called()
    out = capsys.readouterr().out
    assert "1. create_repo(repo_id='biodiv-org/biodivergence', repo_type='space'" in out and "space_sdk='gradio'" in out
    assert "2. upload_folder(" in out and "3. create_tag(" in out and f"one commit with {len(hub.METRIC_FILES)} files" in out
    for name in hub.METRIC_FILES:
        assert f"    {name}  (" in out
    assert "metric is valid" in out
    assert folder_bytes(metric_folder) == before


# --- against a fake Hub on 127.0.0.1 (HF_ENDPOINT): push, then evaluate.load from a fresh process ----


def _online(monkeypatch, endpoint: str) -> None:
    monkeypatch.setenv("HF_TOKEN", "hf_fake_token")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "ENDPOINT", endpoint)


SCRIPT = """
import json, sys
import evaluate
metric = evaluate.load(sys.argv[1], revision=sys.argv[2])
rows = [json.loads(line) for line in open(sys.argv[3])]
scores = metric.compute(predictions=[r["prediction"] for r in rows], references=[r["reference"] for r in rows],
                        semsim_model=None)
print(json.dumps({"description": metric.description, "scores": scores}))
"""


def _small_prediction_file(path: Path) -> Path:
    span = {"text": "in Greek ICUs", "start": 10, "end": 23, "role": "claim_a"}
    rows = [
        ({"conflict_type": "contextual_contradiction", "divergence_axes": ["geography"],
          "dominant_confounder": "geography", "reconciliation": "The cohorts differ in geography.",
          "evidence_spans": [span]},
         {"conflict_type": "contextual_contradiction", "divergence_axes": ["geography", "clinical_setting"],
          "dominant_confounder": "geography", "reconciliation": "Different geography and care setting.",
          "evidence_spans": [{**span, "text": "Greek ICUs", "start": 13}]}),
        ({"conflict_type": "no_conflict", "divergence_axes": [], "dominant_confounder": "",
          "reconciliation": "Different outcomes.", "evidence_spans": []},
         {"conflict_type": "direct_contradiction", "divergence_axes": ["study_design"], "dominant_confounder": "",
          "reconciliation": "The claims measure different outcomes.", "evidence_spans": []}),
        ({"conflict_type": "no_conflict", "divergence_axes": [], "dominant_confounder": "",
          "reconciliation": "No conflict.", "evidence_spans": []},
         {"conflict_type": "no_conflict", "divergence_axes": [], "dominant_confounder": "",
          "reconciliation": "The claims agree.", "evidence_spans": []}),
    ]
    path.write_text("".join(json.dumps({"prediction": p, "reference": r}) + "\n" for p, r in rows))
    return path


def _same(a, b) -> bool:
    import math

    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


@pytest.mark.slow  # a fresh Python process loads the metric
def test_pushed_metric_loads_pinned_from_a_fresh_process_and_scores_like_the_local_folder(
        metric_folder, tmp_path, monkeypatch, capsys):
    import os
    import subprocess
    import sys

    from fault_cases import FakeHub

    from trainer.metric import score

    preds = _small_prediction_file(tmp_path / "preds.jsonl")
    argv = ["push-metric", "--space", SPACE, "--tag", "v1.0", "--metric-dir", str(metric_folder)]
    with FakeHub() as fake:
        _online(monkeypatch, fake.endpoint)
        assert main(argv) == 0
        assert f"evaluate.load('{SPACE}', revision='v1.0')" in capsys.readouterr().out
        pushed = fake.files("space", SPACE, "v1.0")
        assert sorted(pushed) == sorted(hub.METRIC_FILES)
        assert pushed == {name: (metric_folder / name).read_bytes() for name in hub.METRIC_FILES}  # stamped, kept
        assert fake.repos[("space", SPACE)]["create"]["sdk"] == "gradio"
        assert main(argv) == 1  # the tag exists now
        assert "already has tag v1.0" in capsys.readouterr().err

        env = {k: v for k, v in os.environ.items()
               if k not in ("HF_HUB_OFFLINE", "HF_EVALUATE_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE")}
        env.update(HF_ENDPOINT=fake.endpoint, HF_HOME=str(tmp_path / "hf-home"), HF_UPDATE_DOWNLOAD_COUNTS="0",
                   HF_MODULES_CACHE=str(tmp_path / "hf-modules"))
        before = len(fake.requests)
        done = subprocess.run([sys.executable, "-c", SCRIPT, SPACE, "v1.0", str(preds)], check=False, env=env,
                              cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        asked = fake.requests[before:]
    for name in ("biodivergence.py", "scoring.py"):
        assert ("GET", f"/spaces/{SPACE}/resolve/v1.0/{name}") in asked
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["description"].startswith("BioDivergence metric v1.0 (ontology and tasks 1.0).")
    rows = [json.loads(line) for line in preds.read_text().splitlines()]
    local = score([r["prediction"] for r in rows], [r["reference"] for r in rows], semsim_model=None)
    assert {k.split("/")[0] for k in local} >= {"conflict_type", "axes", "confounder", "reconciliation", "spans"}
    assert _same(result["scores"], json.loads(json.dumps(local)))


def test_release_push_against_the_fake_hub_is_the_same_path(release, monkeypatch):
    from fault_cases import FakeHub

    with FakeHub() as fake:
        _online(monkeypatch, fake.endpoint)
        oid = push_release(release, REPO, TAG)
        repo = fake.repos[("dataset", REPO)]
        assert repo["tags"] == {TAG: oid} and repo["main"] == oid and len(repo["commits"]) == 1
        assert sorted(fake.files("dataset", REPO, TAG)) == [p for p, _ in hub.release_files(release)]
