"""Command-line options generated from a pydantic config (``biodivergence_dataset.arguments``): one option per field
a command line can spell, its default shown in the help, the parsed values validated by the config."""

from __future__ import annotations

import argparse
from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from biodivergence_cli.main import HelpFormatter, command_parser, main
from biodivergence_dataset.arguments import add_config_arguments, config_from_args, option_type


class Demo(BaseModel):
    model_config = ConfigDict(extra="forbid")

    min_chars: int = Field(50, ge=0, description="drop shorter texts, 100% sure")
    ratio: float | None = None
    strict: bool = False
    progress: bool = True
    mode: Literal["report", "drop"] = "report"
    packs: list[str] = Field(default_factory=lambda: ["a.yaml"], description="packs to read")
    sources: tuple[str, ...] = ()
    weights: dict[str, float] = Field(default_factory=dict)
    timeout_s: float = 120.0


def parser_for(**kwargs) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="demo", formatter_class=HelpFormatter)
    add_config_arguments(parser, Demo, **kwargs)
    return parser


def test_each_spellable_field_is_an_option_with_its_default_and_description_in_the_help():
    parser = parser_for()
    options = {a.dest: a.option_strings for a in parser._actions if a.option_strings and a.dest != "help"}
    assert options == {"min_chars": ["--min-chars"], "ratio": ["--ratio"], "strict": ["--strict", "--no-strict"],
                       "progress": ["--progress", "--no-progress"], "mode": ["--mode"], "packs": ["--packs"],
                       "sources": ["--sources"], "timeout_s": ["--timeout-s"]}  # a mapping is no option
    text = " ".join(parser.format_help().split())
    assert "drop shorter texts, 100% sure (default: 50)" in text and "packs to read (default: ['a.yaml'])" in text
    assert "--mode {report,drop}" in text and "(default: 120.0)" in text


def test_parsed_values_go_back_into_the_config_and_a_list_option_replaces_its_default():
    parser = parser_for()
    assert config_from_args(Demo, parser.parse_args([])) == Demo()
    args = parser.parse_args(["--min-chars", "7", "--strict", "--no-progress", "--mode", "drop", "--packs", "b", "c",
                              "--sources", "x", "--ratio", "0.5"])
    assert config_from_args(Demo, args) == Demo(min_chars=7, strict=True, progress=False, mode="drop",
                                                packs=["b", "c"], sources=("x",), ratio=0.5)
    assert config_from_args(Demo, args, min_chars=3).min_chars == 3  # what the command sets itself wins


def test_an_old_spelling_still_parses_and_a_list_alias_takes_one_value_per_use():
    parser = parser_for(aliases={"timeout_s": "--timeout", "packs": "--pack"})
    args = parser.parse_args(["--timeout", "5", "--pack", "p1", "--pack", "p2"])
    assert config_from_args(Demo, args).timeout_s == 5.0 and args.packs == ["p1", "p2"]
    assert parser.parse_args(["--pack", "p1", "--packs", "p2", "p3"]).packs == ["p1", "p2", "p3"]


def test_a_bad_value_is_the_configs_validation_error_or_a_usage_error():
    parser = parser_for()
    with pytest.raises(ValidationError, match="greater than or equal to 0"):
        config_from_args(Demo, parser.parse_args(["--min-chars", "-1"]))
    with pytest.raises(SystemExit):
        parser.parse_args(["--mode", "keep"])


def test_options_replace_what_is_generated_and_skipped_fields_are_left_to_the_command():
    parser = parser_for(skip=("ratio",), options={"mode": {"help": "what to do"}, "min_chars": {"required": True}})
    assert "ratio" not in {a.dest for a in parser._actions}
    assert "--min-chars MIN_CHARS" in parser.format_usage() and "[--min-chars" not in parser.format_usage()
    assert "what to do" in parser.format_help()


@pytest.mark.parametrize(("annotation", "expected"), [
    (int, ("value", int, None)), (str | None, ("value", str, None)), (bool, ("bool", bool, None)),
    (Literal["a", "b"], ("value", str, ["a", "b"])), (list[int], ("list", int, None)),
    (str | list[str], ("list", str, None)), (tuple[str, ...], ("list", str, None)),
    (tuple[str, int], None), (dict[str, int], None), (int | str, None), (Demo, None),
])
def test_which_types_a_command_line_spells(annotation, expected):
    assert option_type(annotation) == expected


#: command -> (its config, the fields it sets itself or a command line cannot spell)
STAGE_COMMANDS = {
    "ingest": ("builder.ingest:IngestConfig", set()),
    "claims": ("builder.claims:ClaimsConfig", {"section_bonus"}),
    "questions": ("builder.questions.config:QuestionsConfig", set()),
    "mine": ("builder.mine:MineConfig", {"scoring"}),
    "annotate": ("builder.annotate_config:AnnotateConfig", set()),
    "collect": ("builder.collect:CollectConfig", {"api", "query_domain"}),
    "split": ("builder.split:SplitConfig", {"primary_ratios", "pairlevel_ratios"}),
    "audit": ("builder.audit:AuditConfig", set()),
    "goldcheck": ("builder.goldcheck_stage:GoldcheckConfig", {"enabled", "annotate", "mine"}),
}


@pytest.mark.parametrize("name", list(STAGE_COMMANDS))
def test_every_stage_command_has_an_option_for_each_field_of_its_config(name):
    import importlib

    target, own = STAGE_COMMANDS[name]
    module, _, attr = target.partition(":")
    config = getattr(importlib.import_module(module), attr)
    _, parser = command_parser(name)
    dests = {a.dest for a in parser._actions}
    assert set(config.model_fields) - own - dests == set(), name


def test_an_old_option_spelling_is_named_as_typed_in_an_error(tmp_path, capsys):
    argv = ["annotate", str(tmp_path / "pairs"), "--out", str(tmp_path / "out"), "--annotator", "heuristic"]
    for option in ("--max-backoff", "--max-backoff-s"):
        assert main([*argv, option, "-1"]) == 1
        assert capsys.readouterr().err.strip() == (
            f"biodivergence annotate: error: {option}: must be a finite number at least 0, got -1.0")
