"""The ``biodivergence`` command: one entry point, one subcommand per job.

Each subcommand lives in the module that does the work; that module exposes
``add_arguments(parser)`` and ``run(args) -> int`` and imports heavy libraries lazily
(``MODULE:NAME`` picks ``add_NAME_arguments`` and ``run_NAME`` of a module serving several subcommands).
Only the chosen subcommand's module is imported, so ``biodivergence info`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys

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
    "agreement": ("builder.agreement", "agreement between two annotation runs"),
    "split": ("builder.split", "build the primary (article-disjoint) and pairlevel splits into a release"),
    "audit": ("builder.audit", "leakage audit, statistics and plots of a release"),
    "build": ("builder.build", "run the whole pipeline from a config file"),
    "validate": ("biodivergence_dataset.validate", "check a release folder (schema, labels, configs, leakage)"),
    "card": ("biodivergence_dataset.card", "re-render a release's dataset card"),
    "push": ("biodivergence_dataset.hub", "publish a release to the Hugging Face Hub with a version tag"),
    "push-metric": ("biodivergence_dataset.hub:metric", "publish the metric as a Hub Space with a version tag"),
    "train": ("trainer.train", "train the reference multi-task model"),
    "predict": ("trainer.predict", "write predictions of a trained model"),
    "evaluate": ("trainer.evaluate", "score predictions against a release with the BioDivergence metric"),
    "baselines": ("trainer.baselines", "run and score the baseline suite"),
}


def _top_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="biodivergence",
        description="Build, publish, score and train on the BioDivergence benchmark.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="commands:\n" + "\n".join(f"  {name:<11} {text}" for name, (_, text) in COMMANDS.items()),
    )
    parser.add_argument("command", choices=list(COMMANDS), metavar="COMMAND", help="one of the commands below")
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    top = _top_parser()
    if not argv or argv[0] in ("-h", "--help"):
        top.print_help()
        return 0 if argv else 2
    if argv[0] not in COMMANDS:
        top.parse_args(argv[:1])  # prints the usage error and exits 2
    name = argv[0]
    module_name, help_text = COMMANDS[name]
    module_name, _, variant = module_name.partition(":")
    module = importlib.import_module(module_name)
    parser = argparse.ArgumentParser(prog=f"biodivergence {name}", description=help_text)
    getattr(module, f"add_{variant}_arguments" if variant else "add_arguments")(parser)
    args = parser.parse_args(argv[1:])
    try:
        return int(getattr(module, f"run_{variant}" if variant else "run")(args) or 0)
    except KeyboardInterrupt:
        print("interrupted; re-run the same command to resume", file=sys.stderr)
        return 130
    except (FileNotFoundError, ValueError, RuntimeError) as exc:
        print(f"biodivergence {name}: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
