"""Output folders are claimed, not assumed (issue 29): a stage never writes into a folder it does not own, never
into its own input, and two builds never share a work folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import fault_cases as cases
import pytest
import yaml
from repo_paths import REPO

from biodivergence_cli.main import main
from biodivergence_dataset import io
from biodivergence_dataset.records import Abstract
from builder import build
from builder.folders import LOCK_FILE, OWNER_FILE, FolderClaimError, build_lock, claim_output


def write_jsonl(path: Path, n: int = 4) -> Path:
    path.write_text("".join(json.dumps({"pmid": str(i + 1), "title": f"Study {i}", "text": cases.ABSTRACT.format(n=i + 2)})
                            + "\n" for i in range(n)), encoding="utf-8")
    return path


def user_folder(path: Path) -> dict[str, bytes]:
    """The user's folder of ``fault_cases`` at ``path``; returns its files."""
    cases.user_folder(path.parent).rename(path)
    return held(path)


held = cases.folder_bytes


def test_ingest_refuses_a_folder_it_does_not_own_and_changes_nothing(tmp_path, capsys):
    source, out = write_jsonl(tmp_path / "in.jsonl"), tmp_path / "theirs"
    files = user_folder(out)
    assert main(["ingest", f"jsonl:{source}", "--out", str(out), "--domain", "amr"]) == 1
    err = capsys.readouterr().err
    assert str(out) in err and "mine.parquet" in err and "--force" in err
    assert held(out) == files


def test_force_moves_the_folder_aside_and_deletes_nothing(tmp_path):
    source, out = write_jsonl(tmp_path / "in.jsonl"), tmp_path / "theirs"
    files = user_folder(out)
    assert main(["ingest", f"jsonl:{source}", "--out", str(out), "--domain", "amr", "--force"]) == 0
    assert held(tmp_path / "theirs.aside-1") == files
    assert len(list(io.read_records(out, Abstract))) == 4


def test_a_stage_resumes_in_its_own_folder_and_refuses_another_stages(tmp_path, capsys):
    source, out = write_jsonl(tmp_path / "in.jsonl"), tmp_path / "abstracts"
    assert main(["ingest", f"jsonl:{source}", "--out", str(out), "--domain", "amr"]) == 0
    assert json.loads((out / OWNER_FILE).read_text()) == {"stage": "ingest"}
    assert main(["ingest", f"jsonl:{source}", "--out", str(out), "--domain", "amr"]) == 0  # its own: resumes
    with pytest.raises(FolderClaimError, match="the output of stage 'ingest'"):
        claim_output(out, "claims")


def test_a_folder_holding_only_a_killed_atomic_writes_leftover_is_claimed_and_the_leftover_kept(tmp_path):
    """A build killed while a stage wrote its owner marker leaves the marker's temporary file alone in the folder:
    the re-run claims the folder (it holds nothing of anyone's) instead of refusing it."""
    out = tmp_path / "claims"
    out.mkdir()
    leftover = out / f"{OWNER_FILE}.k3j9x_2a.tmp"
    leftover.write_text("")
    assert io.is_partial_write(leftover.name) and not io.is_partial_write(OWNER_FILE)
    assert claim_output(out, "claims") == out
    assert json.loads((out / OWNER_FILE).read_text()) == {"stage": "claims"} and leftover.exists()
    # beside anything else, the folder is still not ours
    other = tmp_path / "theirs"
    other.mkdir()
    (other / leftover.name).write_text("")
    (other / "notes.txt").write_text("mine")
    with pytest.raises(FolderClaimError, match="not the output of any stage.*notes.txt"):
        claim_output(other, "claims")


def test_split_refuses_a_user_folder_with_a_readme(tmp_path, capsys):
    out = tmp_path / "release"
    files = user_folder(out)
    annotations = tmp_path / "annotations"
    annotations.mkdir()
    io.mark_done(annotations)
    assert main(["split", str(annotations), "--out", str(out)]) == 1
    assert "README.md" in capsys.readouterr().err
    assert held(out) == files


@pytest.mark.parametrize("inside", [False, True])
def test_out_equal_to_or_inside_the_input_is_refused_and_the_input_kept(tmp_path, capsys, inside):
    source = write_jsonl(tmp_path / "in.jsonl")
    abstracts = tmp_path / "abstracts"
    assert main(["ingest", f"jsonl:{source}", "--out", str(abstracts), "--domain", "amr"]) == 0
    before = held(abstracts)
    out = abstracts / "claims" if inside else abstracts
    assert main(["claims", str(abstracts), "--out", str(out), "--force"]) == 1
    err = capsys.readouterr().err
    assert "destroy the input" in err and ("is inside the input" if inside else "is the input") in err
    assert held(abstracts) == before and io.is_done(abstracts)


def test_annotate_into_its_own_pairs_folder_is_refused(tmp_path, capsys):
    pairs = tmp_path / "pairs"
    pairs.mkdir()
    io.write_records(pairs, [])
    before = held(pairs)
    assert main(["annotate", str(pairs), "--out", str(pairs), "--annotator", "heuristic"]) == 1
    assert "is the input" in capsys.readouterr().err
    assert held(pairs) == before


def test_ingest_out_inside_a_source_folder_is_refused(tmp_path):
    folder = tmp_path / "sources"
    folder.mkdir()
    write_jsonl(folder / "a.jsonl")
    with pytest.raises(FolderClaimError, match="inside the input"):
        claim_output(folder / "out", "ingest", [folder])


def test_a_second_build_of_a_locked_work_folder_fails_at_once_naming_the_first(tmp_path):
    work = claim_output(tmp_path / "work", build.STAGE)
    config = tmp_path / "build.yaml"
    config.write_text(yaml.safe_dump({"sources": [f"jsonl:{write_jsonl(tmp_path / 'in.jsonl')}"],
                                      "goldcheck": {"enabled": False}}))
    with build_lock(work):
        assert (work / LOCK_FILE).read_text().strip() == str(os.getpid())
        # a second process, as a second `biodivergence build` would be
        code = ("import sys; from biodivergence_cli.main import main; "
                f"sys.exit(main(['build', '--config-file', {str(config)!r}, '--out', {str(work)!r}]))")
        proc = subprocess.run([sys.executable, "-c", code], check=False, cwd=REPO, capture_output=True, text=True, timeout=300,
                              env={**os.environ, "HF_HUB_OFFLINE": "1"})
        assert proc.returncode == 1, proc.stderr
        assert f"in use by another run (PID {os.getpid()})" in proc.stderr
    assert not (work / "abstracts").exists()  # the second build wrote nothing


def test_a_build_refuses_a_work_folder_that_is_not_a_builds(tmp_path):
    config = tmp_path / "build.yaml"
    config.write_text(yaml.safe_dump({"sources": [f"jsonl:{write_jsonl(tmp_path / 'in.jsonl')}"]}))
    work = tmp_path / "work"
    files = user_folder(work)
    with pytest.raises(FolderClaimError, match="not the output of any stage"):
        build.build(config, work)
    assert held(work) == files


@pytest.mark.parametrize("stage", ["gather", "questions"])
def test_the_question_stages_refuse_a_folder_they_do_not_own(tmp_path, stage):
    """gather and questions claim their output like every other stage: a user's folder is refused before any
    work, and left as it was."""
    import importlib

    source = write_jsonl(tmp_path / "in.jsonl")
    abstracts = tmp_path / "abstracts"
    assert main(["ingest", f"jsonl:{source}", "--out", str(abstracts), "--domain", "amr"]) == 0
    pack = tmp_path / "pack.yaml"
    pack.write_text(yaml.safe_dump({"questions": [{"id": "q1", "text": "Does drug X reduce mortality?"}]}))
    out = tmp_path / "theirs"
    files = user_folder(out)
    module = importlib.import_module(f"builder.{stage}")
    config = getattr(module, f"{stage.capitalize()}Config")(pack=str(pack))
    inputs = abstracts
    if stage == "questions":
        inputs = tmp_path / "claims"
        assert main(["claims", str(abstracts), "--out", str(inputs)]) == 0
    with pytest.raises(FolderClaimError, match="not the output of any stage"):
        module.run_stage(inputs, out, config)
    assert held(out) == files


def test_force_never_moves_aside_a_folder_that_holds_the_input(tmp_path, capsys):
    """`split ANNOTATIONS --out PARENT --force`, PARENT holding ANNOTATIONS: moving PARENT aside would take the
    input with it, so it is refused and nothing moves."""
    parent = tmp_path / "mine"
    annotations = parent / "annotations"
    io.write_records(annotations, [])
    (parent / "notes.txt").write_text("the user's\n")
    before = held(parent)
    assert main(["split", str(annotations), "--out", str(parent), "--force"]) == 1
    assert "holds the input" in capsys.readouterr().err
    assert held(parent) == before and not list(tmp_path.glob("mine.aside*"))
