import argparse
import json
import os
import re
import subprocess
import sys

import pytest
from release_factory import write_small_release

from biodivergence_cli.main import COMMANDS, command_parser, main
from biodivergence_dataset import ontology
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
    out = subprocess.run([sys.executable, "-m", "biodivergence_cli", "info"], capture_output=True, text=True,
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
    ("baselines", ["--release", "r", "--out", "out"], "the finished systems are kept in --out"),
    ("evaluate", ["--predictions", "p", "--release", "r"], "nothing was kept; re-run to start over"),
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


def _shown_options(help_text: str) -> list[str]:
    return re.findall(r"(?<![\w-])--\w[\w-]*", help_text)


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_commands_help_follows_the_conventions(name):
    """Dashes only, every non-empty default shown, required options without brackets in the usage."""
    from biodivergence_cli.main import HelpFormatter

    _, parser = command_parser(name)
    text = parser.format_help()
    assert not [o for o in _shown_options(text) if "_" in o], name
    usage = " ".join(parser.format_usage().split())
    formatter = HelpFormatter(parser.prog)
    for action in parser._actions:
        if not action.option_strings or action.help == argparse.SUPPRESS:
            continue
        shown = "".join(formatter._format_action(action).split())  # help wraps lines at spaces and hyphens
        if not (action.default is None or action.default is False or action.default in ([], "", argparse.SUPPRESS)):
            value = "".join(str(action.default).split())
            assert "default" in shown and value in shown, (name, action.option_strings, shown)
        if any(action in group._group_actions for group in parser._mutually_exclusive_groups):
            continue  # the group's brackets, not the option's
        option = next(o for o in action.option_strings if "_" not in o)
        required = action.required or getattr(action, "shown_required", False)
        assert (re.search(rf"\[{option}[ \]]", usage) is None) == required, (name, option, usage)


def test_underscore_spellings_still_parse_but_are_not_shown():
    _, parser = command_parser("train")
    args = parser.parse_args(["--release", "r", "--output_dir", "o", "--max_train_examples", "5"])
    assert args.output_dir == "o" and args.max_train_examples == 5
    usage = parser.format_usage()
    assert "--max-train-examples" in usage and "--max_train_examples" not in parser.format_help()


@pytest.mark.parametrize("name", ["validate", "card", "push", "audit"])
def test_release_is_shown_required_where_it_is_required(name, capsys):
    _, parser = command_parser(name)
    assert "--release RELEASE" in parser.format_usage() and "[--release" not in parser.format_usage()
    assert _exit_code([name, *(["--repo", "org/name", "--tag", "v1.0"] if name == "push" else [])]) == 2
    assert "required: --release" in capsys.readouterr().err


def test_one_bootstrap_default_for_train_and_evaluate():
    defaults = {name: command_parser(name)[1].get_default("bootstrap") for name in ("train", "evaluate")}
    assert defaults == {"train": 1000, "evaluate": 1000}


def test_sampled_frames_show_readable_slots_and_say_what_was_left_out():
    from biodivergence_dataset.info import format_sample, readable

    assert not readable("In HIV patients we observed an") and not readable("CD4(+") and not readable("…we observed an")
    assert readable("CD4(+) T cell counts") and readable("risk of bleeding") and readable("Colistin")
    frame = {"exposure": "In HIV patients we observed an", "outcome": "CD4(+", "finding": "increase",
             "significance": "significant", "finding_text": "increase in CD4(+",
             "context": [{"axis": "population_cohort", "value": "hiv", "text": "HIV", "start": 3, "end": 6}]}
    row = {"example_id": "e1", "divergence_axes": ["population_cohort"], "comparability": "same",
           "claim_a_text": "In HIV patients we observed an increase in CD4(+) T cell counts.", "frame_a": frame,
           "claim_b_text": "Colistin did not reduce mortality.", "evidence_spans": [], "reconciliation": "",
           "frame_b": dict(frame, exposure="Colistin", outcome="mortality", finding="no_effect", significance=None,
                           context=[])}
    text = format_sample({"contextual_contradiction": [row]})
    assert "we observed an'" not in text and "'CD4(+'" not in text
    assert "finding: increase (significant) | context: population_cohort=hiv | 2 unreadable slot(s) not shown" in text
    assert "finding: no_effect | exposure: 'Colistin' | outcome: 'mortality'" in text


def test_info_sample_names_the_release_config_and_split(tmp_path, capsys):
    release = write_small_release(tmp_path / "release")
    assert main(["info", "--release", str(release), "--sample", "1", "--config", "pairlevel", "--split", "train",
                 "--seed", "3"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith(f"# {release}: config pairlevel, split train; ") and first.endswith("(seed 3)")
    assert main(["info", "--release", str(release), "--sample", "1", "--split", "dev"]) == 1
    assert "split 'dev' is not in" in capsys.readouterr().err
