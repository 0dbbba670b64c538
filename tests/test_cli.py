import json
import subprocess
import sys

from biodivergence_dataset import ontology
from biodivergence_dataset.cli import COMMANDS, main


def test_info_prints_ontology_and_tasks(capsys):
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    for name in ontology.CONFLICT_TYPE_NAMES + ontology.AXIS_NAMES + ontology.DOMAIN_NAMES:
        assert name in out
    assert "1. conflict_type" in out and "5. spans" in out


def test_info_json(capsys):
    assert main(["info", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [a["name"] for a in data["axes"] if a["primary"]] == list(ontology.PRIMARY_AXIS_NAMES)


def test_console_script_runs():
    out = subprocess.run([sys.executable, "-m", "biodivergence_dataset.cli", "info"], capture_output=True, text=True)
    assert out.returncode == 0 and "contextual_contradiction" in out.stdout


def test_unknown_command_is_a_usage_error(capsys):
    try:
        main(["frobnicate"])
    except SystemExit as exc:
        assert exc.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_every_command_module_exposes_the_cli_protocol():
    import importlib

    for name, (target, _) in COMMANDS.items():
        module_name, _, variant = target.partition(":")  # MODULE:NAME -> add_NAME_arguments, run_NAME
        module = importlib.import_module(module_name)
        add, run = (f"add_{variant}_arguments", f"run_{variant}") if variant else ("add_arguments", "run")
        assert callable(getattr(module, add)) and callable(getattr(module, run)), name
