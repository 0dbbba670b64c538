"""``biodivergence baselines``: the baseline suite of paper Table 31, scored by the BioDivergence metric.

Always run: majority, stratified random, most-frequent axes / frequency confounder, slot-mismatch
gradient boosting, independent per-axis classifiers → pipeline confounder, extractive and template
reconciliation, span heuristic, BM25 and dense (MiniLM) span retrieval. On request: NLI transfer
with any cross-encoder (``--nli PATH``), zero-shot LLMs behind OpenAI-compatible or Ollama servers
(``--llm SPEC``), and any prediction file such as the reference model's (``--add NAME=FILE``).
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from biodivergence_dataset import ontology
from biodivergence_dataset.arguments import add_release_argument

from .suite import RESULTS_JSON, RESULTS_MD, SuiteOptions, run_suite, standard_systems

__all__ = ["SuiteOptions", "add_arguments", "run", "run_baselines", "run_suite", "standard_systems"]


def run_baselines(release_dir: str | Path, out_dir: str | Path, config: str = ontology.DEFAULT_CONFIG,
                  split: str = "test", options: SuiteOptions | None = None, command: str | None = None) -> dict:
    """Fit on the release (a folder or a Hub id) train split, predict and score ``split``; write the results folder."""
    from biodivergence_dataset.release import resolve_release

    from ..data import decoded_rows, load_splits

    datasets = load_splits(resolve_release(release_dir), config)
    for needed in ("train", split):
        if needed not in datasets:
            raise ValueError(f"{release_dir} ({config}) has no {needed!r} split; it has {list(datasets)}")
    train, rows = decoded_rows(datasets["train"]), decoded_rows(datasets[split])
    meta = {"release": str(release_dir), "config": config, "split": split, "train_size": len(train)}
    if command:
        meta["command"] = command
    return run_suite(train, rows, out_dir, options, meta)


def _named_file(text: str) -> tuple[str, str]:
    name, sep, path = text.partition("=")
    if not sep or not name or not path:
        raise argparse.ArgumentTypeError(f"expected NAME=FILE, got {text!r}")
    return name, path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_release_argument(parser)
    parser.add_argument("--out", required=True, help="results folder (results.md, results.json, predictions/)")
    parser.add_argument("--config", default=ontology.DEFAULT_CONFIG, choices=ontology.CONFIGS)
    parser.add_argument("--split", default="test", help="split to evaluate (systems are fitted on train)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--nli", action="append", default=[], metavar="PATH",
                        help="NLI cross-encoder folder or cached id for zero-shot transfer (repeatable)")
    parser.add_argument("--llm", action="append", default=[], metavar="SPEC",
                        help="zero-shot LLM server, openai:URL?model=NAME or ollama:URL?model=NAME (repeatable)")
    parser.add_argument("--llm-limit", type=int, default=None, help="send only the first N examples to each LLM")
    parser.add_argument("--llm-max-abstract-chars", type=int, default=None,
                        help="cut abstracts in the LLM prompt to N characters (default: the annotator's)")
    parser.add_argument("--dense-model", default=None, help="sentence-transformers model for dense span retrieval")
    parser.add_argument("--skip", action="append", default=[], metavar="SLUG", help="leave out a baseline (repeatable)")
    parser.add_argument("--add", action="append", default=[], type=_named_file, metavar="NAME=FILE",
                        help="also score a predictions JSONL, e.g. the reference model's (repeatable)")


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    options = SuiteOptions(seed=args.seed, nli_models=args.nli, llm_specs=args.llm, llm_limit=args.llm_limit,
                           llm_max_abstract_chars=args.llm_max_abstract_chars,
                           dense_model=args.dense_model, skip=args.skip, extra=dict(args.add))
    results = run_baselines(args.release, args.out, args.config, args.split, options,
                            getattr(args, "command_line", None))
    print(f"scored {len(results['systems'])} systems on {results['n']} examples; "
          f"wrote {Path(args.out) / RESULTS_MD} and {Path(args.out) / RESULTS_JSON}")
    return 0
