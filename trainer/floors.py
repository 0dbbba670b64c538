"""``biodivergence floors``: the trivial floors of a release, measured on its own test split.

A floor is what a system that reads nothing of a pair scores: a headline score is worth its margin over the best
floor, not its value (on the demo's templated reconciliations the most common training text scores ROUGE-L 0.84).
Three floor systems, each fitted on the train split only and scored by the metric (through ``trainer.metric``, with
macro-F1 over the train split's classes, as the card tells users to score):

- ``majority``: every field's most common training value (class, axis set, confounder among rows naming one,
  reconciliation); no spans;
- ``constant_template``: the one answer a system that always claims a conflict would give: the most common training
  class other than the majority, the most common non-empty training axis set, the most common confounder, the most
  common training reconciliation and both claims whole as evidence spans;
- ``stratified_random``: for each row the labels of a training row drawn at random, so every field follows its
  training distribution; no spans. Its score is the mean over :data:`RANDOM_DRAWS` seeded draws (their standard
  deviation beside it): one draw is a sample of what random guessing scores, and a lucky one taken as the best
  floor would set the headline bar by chance.

``floors.json`` in the release holds every declared metric of each system and, per metric key, the best floor; the
card and ``eval.yaml`` show them (``biodivergence_dataset.benchmark``).
"""

from __future__ import annotations

import argparse
import warnings
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from biodivergence_dataset import benchmark, ontology
from biodivergence_dataset.tasks import load_tasks

#: The record fields a floor predicts (the metric's task fields).
FIELDS = ("conflict_type", "divergence_axes", "dominant_confounder", "reconciliation", "evidence_spans")
DESCRIPTIONS = {
    "majority": "every field's most common training value (class, axis set, confounder, reconciliation)",
    "constant_template": ("one answer for every row: the most common training conflict class, axis set, "
                          "confounder and reconciliation, and both claims whole as spans"),
    "stratified_random": "each row gets the labels of a random training row: the training distribution",
}
#: Seeded draws a random floor is scored over (the mean is its score).
RANDOM_DRAWS = 20


def _mode(values: Sequence[Any], default: Any = "") -> Any:
    """The most common value (the first seen among ties: training order), ``default`` for none."""
    return Counter(values).most_common(1)[0][0] if values else default


def reference(row: Mapping[str, Any]) -> dict[str, Any]:
    """A decoded release row as a metric record (its task fields, no confounder as "")."""
    return {**{f: row[f] for f in FIELDS}, "dominant_confounder": row["dominant_confounder"] or ""}


def majority(train: Sequence[Mapping[str, Any]], test: Sequence[Mapping[str, Any]], seed: int) -> list[dict[str, Any]]:
    record = {
        "conflict_type": _mode([r["conflict_type"] for r in train]),
        "divergence_axes": list(_mode([tuple(r["divergence_axes"]) for r in train], ())),
        "dominant_confounder": _mode([r["dominant_confounder"] for r in train if r["dominant_confounder"]]),
        "reconciliation": _mode([r["reconciliation"] for r in train if r["reconciliation"]]),
    }
    return [dict(record) for _ in test]


def constant_template(train: Sequence[Mapping[str, Any]], test: Sequence[Mapping[str, Any]],
                      seed: int) -> list[dict[str, Any]]:
    common = _mode([r["conflict_type"] for r in train])
    record = {
        "conflict_type": _mode([r["conflict_type"] for r in train if r["conflict_type"] != common], common),
        "divergence_axes": list(_mode([tuple(r["divergence_axes"]) for r in train if r["divergence_axes"]], ())),
        "dominant_confounder": _mode([r["dominant_confounder"] for r in train if r["dominant_confounder"]]),
        "reconciliation": _mode([r["reconciliation"] for r in train if r["reconciliation"]]),
    }
    return [{**record, "evidence_spans": whole_claims(row)} for row in test]


def whole_claims(row: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Both claims, whole, as evidence spans."""
    return [{"text": row[f"{role}_text"], "start": 0, "end": len(row[f"{role}_text"]), "role": role}
            for role in ontology.SPAN_ROLES]


def stratified_random(train: Sequence[Mapping[str, Any]], test: Sequence[Mapping[str, Any]],
                      seed: int) -> list[dict[str, Any]]:
    drawn = np.random.default_rng(seed).integers(0, len(train), len(test))
    return [{f: reference(train[i])[f] for f in FIELDS if f != "evidence_spans"} for i in drawn]


#: floor name -> the predictions it makes for the test rows from the train rows (and a seed).
SYSTEMS: dict[str, Callable[..., list[dict[str, Any]]]] = {
    "majority": majority,
    "constant_template": constant_template,
    "stratified_random": stratified_random,
}
#: The floors whose predictions depend on the seed: scored as the mean over :data:`RANDOM_DRAWS` draws.
RANDOM_SYSTEMS = frozenset({"stratified_random"})


def mean_scores(runs: list[Mapping[str, Any]], keys: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Per key, the mean and the standard deviation of its defined values over ``runs`` (None where no run defines
    it: undefined is not zero)."""
    means, stds = {}, {}
    for key in keys:
        values = [r[key] for r in runs if r.get(key) is not None]
        means[key] = float(np.mean(values)) if values else None
        stds[key] = float(np.std(values)) if values else None
    return means, stds


def score_floors(train: Sequence[Mapping[str, Any]], test: Sequence[Mapping[str, Any]], classes: list[str],
                 seed: int = 0, semsim_model: Any = None, score: Callable[..., dict[str, Any]] | None = None,
                 ) -> dict[str, Any]:
    """Every floor's declared metric scores on ``test`` and, per metric key, the best floor.

    ``score`` is the metric's ``compute`` (default: ``trainer.metric.score``); ``semsim_model`` as the metric takes
    it (None: no SemSim)."""
    if score is None:
        from .metric import score
    keys = [k for t in load_tasks() for k in t.metric_keys()]
    references = [reference(r) for r in test]
    systems, distinct = {}, None
    for name, predict in SYSTEMS.items():
        draws = RANDOM_DRAWS if name in RANDOM_SYSTEMS else 1
        with warnings.catch_warnings():  # a floor leaves most classes and axes undefined: expected, not news
            warnings.simplefilter("ignore", UserWarning)
            runs = [score(predict(train, test, seed + d), references, semsim_model=semsim_model, classes=classes)
                    for d in range(draws)]
        means, stds = mean_scores(runs, keys)
        systems[name] = {"description": DESCRIPTIONS[name], "scores": means}
        if draws > 1:
            systems[name].update(draws=draws, std=stds)
        distinct = runs[0].get("reconciliation/distinct_references", distinct)
    best = {}
    for key in keys:
        measured = [(s["scores"][key], name) for name, s in systems.items() if s["scores"][key] is not None]
        if measured:
            value, name = max(measured)
            best[key] = {"system": name, "score": value}
    return {"n": len(test), "train_rows": len(train), "seed": seed, "random_draws": RANDOM_DRAWS, "classes": classes,
            "distinct_reference_reconciliations": distinct, "systems": systems, "best": best}


def measure_floors(release_dir: str | Path, seed: int = 0, semsim_model: Any = None) -> dict[str, Any]:
    """The floors of a release's scored split (the default config's test), fitted on its train split."""
    train = benchmark.split_rows(release_dir, ontology.SPLITS[0])
    test = benchmark.test_rows(release_dir)
    if not train or not test:
        raise ValueError(f"{release_dir} has no {ontology.DEFAULT_CONFIG} train and test rows to measure floors on")
    return {"config": ontology.DEFAULT_CONFIG, "split": benchmark.TEST_SPLIT,
            **score_floors(train, test, benchmark.train_classes(release_dir), seed, semsim_model)}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from biodivergence_dataset.arguments import add_release_argument

    add_release_argument(parser)
    parser.add_argument("--seed", type=int, default=0,
                        help=f"first seed of the stratified random floor's {RANDOM_DRAWS} draws")
    parser.add_argument("--no-semsim", action="store_true", help="leave SemSim out (no sentence encoder loaded)")
    parser.add_argument("--no-card", action="store_true", help="write floors.json only, do not re-render the card")


def run(args: argparse.Namespace) -> int:
    from biodivergence_dataset.card import write_card
    from biodivergence_dataset.io import write_json_atomic
    from biodivergence_dataset.release import FLOORS_FILE

    from .metric import scoring_module

    semsim = None if args.no_semsim else scoring_module().semsim_encoder(scoring_module().DEFAULT_SEMSIM_MODEL)
    floors = measure_floors(args.release, args.seed, semsim)
    path = write_json_atomic(Path(args.release) / FLOORS_FILE, floors)
    for key, best in floors["best"].items():
        print(f"{key:32s} best floor {best['score']:.4f} ({best['system']}, n {floors['n']})")
    print(f"wrote {path}" + ("" if args.no_card else f" and {write_card(args.release)}"))
    return 0
