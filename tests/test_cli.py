import argparse
import json
import os
import subprocess
import sys

import pytest
from release_factory import write_small_release

from biodivergence_dataset import ontology
from biodivergence_dataset.cli import COMMANDS, main
from biodivergence_dataset.threads import cap_threads, default_threads


def test_info_prints_ontology_and_tasks(capsys):
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    for name in ontology.CONFLICT_TYPE_NAMES + ontology.AXIS_NAMES + ontology.DOMAIN_NAMES:
        assert name in out
    assert "1. conflict_type" in out and "5. spans" in out


def test_info_json(capsys):
    assert main(["info", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [a["name"] for a in data["axes"] if a["primary"]] == list(ontology.PRIMARY_AXIS_NAMES)


def test_console_script_runs():
    out = subprocess.run([sys.executable, "-m", "biodivergence_dataset.cli", "info"], capture_output=True, text=True,
                         check=False)
    assert out.returncode == 0 and "contextual_contradiction" in out.stdout


def _exit_code(argv: list[str]) -> int:
    """The code of the SystemExit that argparse raises for ``argv`` (help, version or a usage error)."""
    with pytest.raises(SystemExit) as exc:
        main(argv)
    return exc.value.code


def test_unknown_command_is_a_usage_error(capsys):
    assert _exit_code(["frobnicate"]) == 2
    assert "invalid choice" in capsys.readouterr().err


def test_every_command_module_exposes_the_cli_protocol():
    import importlib

    for name, (target, _) in COMMANDS.items():
        module_name, _, variant = target.partition(":")  # MODULE:NAME -> add_NAME_arguments, run_NAME
        module = importlib.import_module(module_name)
        add, run = (f"add_{variant}_arguments", f"run_{variant}") if variant else ("add_arguments", "run")
        assert callable(getattr(module, add)) and callable(getattr(module, run)), name


def test_version_prints_the_installed_package_version(capsys):
    from importlib.metadata import version

    assert _exit_code(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"biodivergence {version('biodivergence')}"


def test_help_shows_defaults_also_for_options_without_help_text(capsys):
    assert _exit_code(["baselines", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "--seed SEED (default: 42)" in out
    assert "(default: test)" in out and "(default: primary)" in out
    assert "(default: None)" not in out and "(default: [])" not in out


def test_every_release_is_named_with_release(capsys):
    import importlib

    for name, (target, _) in COMMANDS.items():
        module_name, _, variant = target.partition(":")
        if variant:
            continue
        parser = argparse.ArgumentParser()
        importlib.import_module(module_name).add_arguments(parser)
        positionals = [a.dest for a in parser._actions if not a.option_strings and a.help != argparse.SUPPRESS]
        assert not [d for d in positionals if "release" in d], name


def test_the_old_positional_release_still_works_with_a_deprecation_note(tmp_path, capsys):
    release = write_small_release(tmp_path / "release")
    assert main(["validate", str(release)]) == 0
    captured = capsys.readouterr()
    assert f"use --release {release}" in captured.err and f"{release}: OK" in captured.out
    assert main(["validate", "--release", str(release)]) == 0
    assert "deprecated" not in capsys.readouterr().err


def test_a_release_is_required_in_either_form(capsys):
    assert _exit_code(["validate"]) == 2
    assert "required: --release" in capsys.readouterr().err


def test_unknown_skip_names_are_rejected(tmp_path, capsys):
    release = write_small_release(tmp_path / "release")
    assert main(["baselines", "--release", str(release), "--out", str(tmp_path / "out"), "--skip", "lexcal-gbt"]) == 1
    err = capsys.readouterr().err
    assert "unknown baseline(s) ['lexcal-gbt']" in err and "lexical-gbt" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("command", "argv", "promise"), [
    ("annotate", ["pairs", "--out", "out"], "re-run the same command to resume"),
    ("baselines", ["--release", "r", "--out", "out"], "nothing was kept; re-run to start over"),
    ("train", ["--release", "r", "--out", "out"], "re-run it with --resume-from-checkpoint true"),
])
def test_interrupt_messages_promise_a_resume_only_where_there_is_one(monkeypatch, capsys, command, argv, promise):
    import importlib

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(importlib.import_module(COMMANDS[command][0]), "run", interrupted)
    assert main([command, *argv]) == 130
    assert capsys.readouterr().err.strip().startswith(f"interrupted; {promise}")


def test_cap_threads_keeps_what_the_user_exported():
    environ = {"OMP_NUM_THREADS": "4"}
    values = cap_threads(environ)
    assert values["OMP_NUM_THREADS"] == "4"
    assert values["OPENBLAS_NUM_THREADS"] == values["MKL_NUM_THREADS"] == str(default_threads()) == environ["MKL_NUM_THREADS"]
    assert 1 <= default_threads() <= len(os.sched_getaffinity(0))
