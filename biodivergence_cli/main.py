"""The ``biodivergence`` command: one entry point, one subcommand per job.

Each subcommand lives in the module that does the work; that module exposes
``add_arguments(parser)`` and ``run(args) -> int`` and imports heavy libraries lazily
(``MODULE:NAME`` picks ``add_NAME_arguments`` and ``run_NAME`` of a module serving several subcommands).
Only the chosen subcommand's module is imported, so ``biodivergence info`` stays fast.
Every command names its release with ``--release`` (``biodivergence_dataset.arguments.add_release_argument``) and
shows its defaults in ``--help``.
"""

from __future__ import annotations

import argparse
import copy
import importlib
import shlex
import sys
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from biodivergence_dataset.arguments import OptionError, flag, take_legacy_release
from biodivergence_dataset.interrupts import stop_signals
from biodivergence_dataset.redact import install_redaction, redact
from biodivergence_dataset.threads import cap_threads

#: subcommand -> (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "info": ("biodivergence_dataset.info", "print the ontology (classes, axes, claim types, domains) and the five tasks"),
    "ingest": ("builder.ingest", "read, normalise, assign domains and de-duplicate abstracts"),
    "collect": ("builder.collect", "fetch abstracts from NCBI E-utilities or Europe PMC (resumable)"),
    "claims": ("builder.claims", "extract typed claims from abstracts"),
    "questions": ("builder.questions", "assign claims to the clinical questions of a question pack they answer"),
    "mine": ("builder.mine", "mine disagreement-aware candidate claim pairs within each domain"),
    "annotate": ("builder.annotate", "silver-annotate candidate pairs (frames, heuristic, judge, LLMs; a panel)"),
    "goldcheck": ("builder.goldcheck_stage", "score annotators on expert-labelled pairs, out of fold"),
    "judge": ("builder.annotators.judge", "train a calibrated cross-encoder judge on the gold sources"),
    "reader": ("builder.reader.reader_training", "train or evaluate the learned finding reader (claim vs clinical question)"),
    "agreement": ("builder.agreement", "agreement between two annotation runs"),
    "split": ("builder.split", "build the primary (article-disjoint) and pairlevel splits into a release"),
    "audit": ("builder.release_stage:audit", "leakage audit, statistics and plots of a release"),
    "build": ("builder.build", "run the whole pipeline from a config file"),
    "validate": ("biodivergence_dataset.validate", "check a release folder (schema, labels, configs, leakage)"),
    "map": ("biodivergence_dataset.evidence_maps", "print a release's evidence map for one question (or list them)"),
    "card": ("builder.release_stage:card", "re-render a release's dataset card (re-running a stale audit first)"),
    "push": ("biodivergence_dataset.hub", "publish a release to the Hugging Face Hub with a version tag"),
    "push-metric": ("biodivergence_cli.push_metric", "publish the metric as a Hub Space with a version tag"),
    "push-model": ("trainer.hub_model", "publish a model trained by `train` to the Hub with a version tag"),
    "train": ("trainer.train", "train the reference multi-task model"),
    "predict": ("trainer.predict", "write predictions of a trained model"),
    "evaluate": ("trainer.evaluate", "score predictions against a release with the BioDivergence metric"),
    "baselines": ("trainer.baselines", "run and score the baseline suite"),
    "floors": ("trainer.floors", "measure a release's trivial floors on its test split and show them in its card"),
    "analyze": ("trainer.analyses", "robustness, counterfactual, leave-one-domain-out, slices, annotator and error analyses"),
}

#: What re-running an interrupted command does, for the commands that keep their progress (others start over).
ON_INTERRUPT: dict[str, str] = {
    **{name: "re-run the same command to resume"
       for name in ("ingest", "collect", "claims", "questions", "mine", "annotate", "split", "audit", "build")},
    "train": "re-run it with --resume-from-checkpoint true to continue from each seed's last saved checkpoint",
    "baselines": "the finished systems are kept in --out; re-run the same command to run the others",
}

def _has_default(action: argparse.Action) -> bool:
    """A default worth showing: not absent, off or empty (0 is a value: ``--bootstrap 0`` means no intervals)."""
    default = action.default
    return not (default is None or default is False or default is argparse.SUPPRESS or default in ([], ""))


def _is_alias(option: str) -> bool:
    """An old underscore spelling (``--max_train_examples``): accepted, never shown."""
    return option.startswith("--") and "_" in option


def _shown(action: argparse.Action) -> argparse.Action:
    """``action`` as help shows it: without underscore aliases, required when its command enforces it itself."""
    shown = [s for s in action.option_strings if not _is_alias(s)]
    hidden = shown and len(shown) < len(action.option_strings)
    if not hidden and not getattr(action, "shown_required", False):
        return action
    action = copy.copy(action)
    if hidden:
        action.option_strings = shown
    action.required = action.required or getattr(action, "shown_required", False)
    return action


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows an option's default (also for options without help text) unless it is empty or the help gives it in
    parentheses; hides underscore aliases of dashed options; shows ``--release`` as required where the command
    insists on it."""

    def _format_usage(self, usage, actions, groups, prefix):
        return super()._format_usage(usage, [_shown(a) for a in actions], groups, prefix)

    def _format_action_invocation(self, action: argparse.Action) -> str:
        return super()._format_action_invocation(_shown(action))

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        return super()._get_help_string(action) if _has_default(action) and "(default" not in text else text

    def _format_action(self, action: argparse.Action) -> str:
        if not action.help and action.option_strings and _has_default(action):
            action = copy.copy(action)
            action.help = "(default: %(default)s)"
        return super()._format_action(action)


def package_version() -> str:
    """The installed ``biodivergence`` version (``unknown`` when run from a bare checkout)."""
    try:
        return version("biodivergence")
    except PackageNotFoundError:
        return "unknown"


def _top_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="biodivergence",
        description="Build, publish, score and train on the BioDivergence benchmark.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="commands:\n" + "\n".join(f"  {name:<11} {text}" for name, (_, text) in COMMANDS.items()),
    )
    parser.add_argument("command", choices=list(COMMANDS), metavar="COMMAND", help="one of the commands below")
    parser.add_argument("--version", action="version", version=f"%(prog)s {package_version()}")
    return parser


def command_parser(name: str) -> tuple[Any, argparse.ArgumentParser]:
    """(module, parser) of one subcommand; the parser lists dashed spellings first (usage and errors show those)."""
    module_name, help_text = COMMANDS[name]
    module_name, _, variant = module_name.partition(":")
    module = importlib.import_module(module_name)
    parser = argparse.ArgumentParser(prog=f"biodivergence {name}", description=help_text, formatter_class=HelpFormatter)
    getattr(module, f"add_{variant}_arguments" if variant else "add_arguments")(parser)
    for action in parser._actions:
        action.option_strings.sort(key=_is_alias)  # stable: the dashed spellings keep their order, aliases go last
    return module, parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    top = _top_parser()
    if not argv or argv[0] in ("-h", "--help"):
        top.print_help()
        return 0 if argv else 2
    if argv[0] not in COMMANDS:
        top.parse_args(argv[:1])  # prints the version, or the usage error and exits 2
    name = argv[0]
    variant = COMMANDS[name][0].partition(":")[2]
    cap_threads()  # before the command imports scikit-learn or torch
    install_redaction()
    module, parser = command_parser(name)
    args = parser.parse_args(argv[1:])
    take_legacy_release(parser, args)
    args.command_line = redact(shlex.join(["biodivergence", *argv]))  # for result files that record how they were made
    try:
        with stop_signals():
            return int(getattr(module, f"run_{variant}" if variant else "run")(args) or 0)
    except KeyboardInterrupt as exc:
        print(f"interrupted; {ON_INTERRUPT.get(name, 'nothing was kept; re-run to start over')}", file=sys.stderr)
        return getattr(exc, "exit_code", 130)
    except (FileNotFoundError, ValueError, RuntimeError) as exc:
        line = option_errors(exc, argv, option_flags(parser)) or exc
        print(redact(f"biodivergence {name}: error: {line}"), file=sys.stderr)
        return 1
    except OSError as exc:  # read-only file system, disk full, permissions: one line naming the path
        print(f"biodivergence {name}: error: {os_error_line(exc)}", file=sys.stderr)
        return 1


def option_errors(exc: Exception, argv: list[str], flags: dict[str, list[str]] | None = None) -> str | None:
    """A pydantic ValidationError of a command's config, or an :class:`OptionError`, as one line, each field named
    as the option the user gave (``--top-k: Input should be greater than or equal to 1, got 0``); ``flags``: each
    field's options (the parser's ``dest`` → its option strings; default ``--`` and the field's name). None for
    any other error."""
    flags = flags or {}

    def named(field: str) -> str | None:
        given = [f for f in flags.get(field, [flag(field)]) if any(a == f or a.startswith(f + "=") for a in argv)]
        return given[-1] if given else None

    if isinstance(exc, OptionError):
        typed = named(exc.field)
        return f"{typed}: {exc.message}" if typed else None
    errors = getattr(exc, "errors", None)
    if type(exc).__name__ != "ValidationError" or not callable(errors):
        return None
    parts = []
    for error in errors():
        loc = [str(part) for part in error["loc"]]
        typed = named(loc[0]) if loc else None
        where = typed if typed and len(loc) == 1 else ".".join(loc) or "value"
        value = error.get("input")
        shown = f", got {value!r}" if isinstance(value, int | float | str) and len(repr(value)) <= 40 else ""
        parts.append(f"{where}: {error['msg']}{shown}")
    return "; ".join(parts)


def option_flags(parser: argparse.ArgumentParser) -> dict[str, list[str]]:
    """Each option's destination → its option strings, of every option that sets it (``timeout_s`` →
    ``--timeout-s``, ``--timeout``)."""
    flags: dict[str, list[str]] = {}
    for action in parser._actions:
        flags.setdefault(action.dest, []).extend(action.option_strings)
    return {dest: strings for dest, strings in flags.items() if strings}


def os_error_line(exc: OSError) -> str:
    """An OSError as one line: what failed and on which path."""
    paths = " -> ".join(str(p) for p in (exc.filename, exc.filename2) if p is not None)
    return f"{exc.strerror or exc}{f': {paths}' if paths else ''}"

