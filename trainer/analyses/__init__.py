"""``biodivergence analyze``: the analyses that make a benchmark trustworthy (paper appendix), as one report.

One module per analysis; each takes the release (``analysis_release.Release``) and a predictor and returns a
result record, which ``report`` renders:

1. ``perturbation`` — edit families from the ontology and the claim frames; flip rates per family;
2. ``counterfactual`` — identical / new-axis context for contextual contradictions; consistency per axis;
3. ``domains`` — leave-one-domain-out for the lexical baseline (and the reference model with ``--model``);
4. ``confidence`` — scores by annotation-confidence and consensus-quality bins;
5. ``annotators`` — pairwise κ of panel members (overall, per class, per domain) with a heatmap;
6. ``errors`` — confusion matrices per task and the most confident errors.

Predictions come from ``--predictions FILE`` (``biodivergence predict``'s format), ``--model DIR`` (the
reference model) or, with neither, the lexical baseline fitted on the train split. Analyses 1–2 label edited
pairs, which a predictions file cannot: they then use the lexical baseline.
"""

from __future__ import annotations

import argparse
import logging
from collections import Counter
from pathlib import Path

from biodivergence_dataset import ontology

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from biodivergence_dataset.arguments import add_release_argument

    add_release_argument(parser)
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--predictions", default=None, help="JSONL written by `biodivergence predict` (or a baseline)")
    source.add_argument("--model", default=None, help="model folder written by `biodivergence train`")
    parser.add_argument("--out", required=True, help="report folder (report.md, figures.json, plots/)")
    parser.add_argument("--config", default=ontology.DEFAULT_CONFIG, choices=ontology.CONFIGS)
    parser.add_argument("--split", default="test", help="evaluated split (predictors are fitted on train)")
    parser.add_argument("--max-pairs", type=int, default=500, help="pairs sampled for the perturbation and counterfactual edits")
    parser.add_argument("--full-schedule", action="store_true",
                        help="leave-one-domain-out trains the reference model with the full schedule (default: short)")
    parser.add_argument("--encoder", default=None, help="encoder of the leave-one-domain-out reference models")
    parser.add_argument("--skip-domains", action="store_true", help="leave out the leave-one-domain-out analysis")
    parser.add_argument("--card", action="store_true",
                        help="also copy robustness.md into the release folder and re-render its dataset card")
    parser.add_argument("--seed", type=int, default=0, help="seed of the pair sample")


def run(args: argparse.Namespace) -> int:
    from biodivergence_dataset.card import write_card
    from biodivergence_dataset.io import write_text_atomic
    from biodivergence_dataset.release import resolve_release

    from . import analysis_release, annotators, confidence, counterfactual, errors, leave_domain_out, perturbation
    from .predictors import LEXICAL, FilePredictor, LexicalPredictor, ModelPredictor, Remembered, SlotFeatures
    from .report import FEW, ROBUSTNESS, AnalysisResults, write_report

    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    if args.card and not Path(args.release).is_dir():
        raise ValueError(f"--card writes into the release folder; {args.release} is not a local folder")
    release_dir = resolve_release(args.release)
    release = analysis_release.load(release_dir, args.config, args.split)
    out = Path(args.out)
    features = SlotFeatures()
    if args.predictions:
        scored = FilePredictor.read(args.predictions)
    else:
        scored = Remembered(ModelPredictor(Path(args.model)) if args.model else LexicalPredictor(release.train, features=features))
    live = scored if scored.labels_new_pairs else Remembered(LexicalPredictor(release.train, features=features))
    fitters = {LEXICAL: leave_domain_out.LexicalFitter(features)}
    schedule = ""
    if args.model:
        reference = leave_domain_out.ReferenceFitter(args.full_schedule, args.encoder)
        fitters[scored.name], schedule = reference, reference.schedule
    steps = [  # the evaluated split first: the edits' originals are then already predicted
        ("errors", lambda: errors.analyze(release, scored)),
        ("confidence", lambda: confidence.analyze(release, scored)),
        ("perturbation", lambda: perturbation.analyze(release, live, args.max_pairs, args.seed)),
        ("counterfactual", lambda: counterfactual.analyze(release, live, args.max_pairs, args.seed)),
        ("domains", lambda: None if args.skip_domains else leave_domain_out.analyze(release, fitters, schedule)),
        ("annotators", lambda: annotators.analyze(release)),
    ]
    notes = [] if live is scored else [
        f"{scored.name} cannot label edited pairs: analyses 1–2 use the {live.name} fitted on the train split."]
    train_conflicts = sum(r["conflict_type"] != ontology.NO_CONFLICT for r in release.train)
    if train_conflicts < FEW:
        notes.append(f"The train split holds {train_conflicts} conflict pairs of {len(release.train)}: a model fitted "
                     "on it learns to answer no conflict, so high scores on a split without conflicts say nothing.")
    records = {}
    for name, step in steps:
        log.info("analysis: %s", name)
        records[name] = step()
    results = AnalysisResults(str(args.release), args.config, args.split,
                              dict(Counter(r["conflict_type"] for r in release.rows).most_common()),
                              scored.name, live.name, **records, notes=notes)
    path = write_report(results, out)
    print(f"wrote {path}")
    if args.card:
        write_text_atomic(release_dir / ROBUSTNESS, (out / ROBUSTNESS).read_text(encoding="utf-8"))
        print(f"wrote {release_dir / ROBUSTNESS} and {write_card(release_dir)}")
    return 0
