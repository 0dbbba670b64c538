"""The ``biodivergence`` command: one entry point, one subcommand per job.

Each subcommand lives in the module that does the work; that module exposes
``add_arguments(parser)`` and ``run(args) -> int`` and imports heavy libraries lazily
(``MODULE:NAME`` picks ``add_NAME_arguments`` and ``run_NAME`` of a module serving several subcommands).
Only the chosen subcommand's module is imported, so ``biodivergence info`` stays fast.
Every command names its release with ``--release`` (:func:`add_release_argument`) and shows its
defaults in ``--help``.
"""

from __future__ import annotations

import argparse
import copy
import importlib
import shlex
import sys
from importlib.metadata import PackageNotFoundError, version

from .threads import cap_threads

#: subcommand -> (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "info": ("biodivergence_dataset.info", "print the ontology (classes, axes, claim types, domains) and the five tasks"),
    "ingest": ("builder.ingest", "read, normalise, assign domains and de-duplicate abstracts"),
    "collect": ("builder.collect", "fetch abstracts from NCBI E-utilities or Europe PMC (resumable)"),
    "claims": ("builder.claims", "extract typed claims from abstracts"),
    "mine": ("builder.mine", "mine disagreement-aware candidate claim pairs within each domain"),
    "annotate": ("builder.annotate", "silver-annotate candidate pairs (frames, heuristic, judge, LLMs; a panel)"),
    "goldcheck": ("builder.annotators.goldcheck", "score annotators on expert-labelled pairs, out of fold"),
    "judge": ("builder.annotators.judge", "train a calibrated cross-encoder judge on the gold sources"),
    "reader": ("builder.reader.train", "train or evaluate the learned finding reader (claim vs clinical question)"),
    "agreement": ("builder.agreement", "agreement between two annotation runs"),
    "split": ("builder.split", "build the primary (article-disjoint) and pairlevel splits into a release"),
    "audit": ("builder.audit", "leakage audit, statistics and plots of a release"),
    "build": ("builder.build", "run the whole pipeline from a config file"),
    "validate": ("biodivergence_dataset.validate", "check a release folder (schema, labels, configs, leakage)"),
    "card": ("biodivergence_dataset.card", "re-render a release's dataset card"),
    "push": ("biodivergence_dataset.hub", "publish a release to the Hugging Face Hub with a version tag"),
    "push-metric": ("biodivergence_dataset.hub:metric", "publish the metric as a Hub Space with a version tag"),
    "push-model": ("trainer.hub_model", "publish a model trained by `train` to the Hub with a version tag"),
    "train": ("trainer.train", "train the reference multi-task model"),
    "predict": ("trainer.predict", "write predictions of a trained model"),
    "evaluate": ("trainer.evaluate", "score predictions against a release with the BioDivergence metric"),
    "baselines": ("trainer.baselines", "run and score the baseline suite"),
    "analyze": ("trainer.analyses", "robustness, counterfactual, leave-one-domain-out, slices, annotator and error analyses"),
}

#: What re-running an interrupted command does, for the commands that keep their progress (others start over).
ON_INTERRUPT: dict[str, str] = {
    **{name: "re-run the same command to resume"
       for name in ("ingest", "collect", "claims", "mine", "annotate", "split", "audit", "build")},
    "train": "re-run it with --resume-from-checkpoint true to continue from each seed's last saved checkpoint",
}

RELEASE_FOLDER_HELP = "release folder"
RELEASE_HELP = "release: a local folder or a Hub dataset id ORG/NAME[@REVISION] (read offline from the HF cache)"
_LEGACY_RELEASE = "legacy_release_dir"


def add_release_argument(parser: argparse.ArgumentParser, help_text: str = RELEASE_HELP, *, required: bool = True,
                         legacy_positional: bool = False) -> None:
    """``--release`` (the one way to name a release); ``legacy_positional`` also accepts the old positional form."""
    parser.add_argument("--release", required=required and not legacy_positional, help=help_text)
    if legacy_positional:
        parser.add_argument(_LEGACY_RELEASE, nargs="?", metavar="RELEASE_DIR", help=argparse.SUPPRESS)


def _take_legacy_release(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Move a positional release folder to ``args.release`` with a deprecation note; insist on one release."""
    if not hasattr(args, _LEGACY_RELEASE):
        return
    legacy = vars(args).pop(_LEGACY_RELEASE)
    if legacy is not None and args.release is not None:
        parser.error("give the release once, as --release")
    if legacy is not None:
        print(f"{parser.prog}: the positional release folder is deprecated; use --release {legacy}", file=sys.stderr)
        args.release = legacy
    if args.release is None:
        parser.error("the following arguments are required: --release")


def _has_default(action: argparse.Action) -> bool:
    return action.default not in (None, False, [], argparse.SUPPRESS)


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows an option's default (also for options without help text) unless it is empty or the help names it."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        return super()._get_help_string(action) if _has_default(action) and "default" not in text else text

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


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    top = _top_parser()
    if not argv or argv[0] in ("-h", "--help"):
        top.print_help()
        return 0 if argv else 2
    if argv[0] not in COMMANDS:
        top.parse_args(argv[:1])  # prints the version, or the usage error and exits 2
    name = argv[0]
    module_name, help_text = COMMANDS[name]
    module_name, _, variant = module_name.partition(":")
    cap_threads()  # before the command imports scikit-learn or torch
    module = importlib.import_module(module_name)
    parser = argparse.ArgumentParser(prog=f"biodivergence {name}", description=help_text, formatter_class=HelpFormatter)
    getattr(module, f"add_{variant}_arguments" if variant else "add_arguments")(parser)
    args = parser.parse_args(argv[1:])
    _take_legacy_release(parser, args)
    args.command_line = shlex.join(["biodivergence", *argv])  # for result files that record how they were made
    try:
        return int(getattr(module, f"run_{variant}" if variant else "run")(args) or 0)
    except KeyboardInterrupt:
        print(f"interrupted; {ON_INTERRUPT.get(name, 'nothing was kept; re-run to start over')}", file=sys.stderr)
        return 130
    except (FileNotFoundError, ValueError, RuntimeError) as exc:
        print(f"biodivergence {name}: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
