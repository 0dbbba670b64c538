"""Analysis 3, leave-one-domain-out: fit on the train rows of four domains, score the evaluated split's rows
of the fifth (macro-F1 and Ctx-F1 per held-out domain, for each system)."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from biodivergence_dataset import ontology

from .analysis_release import Predictor, Release, Row, conflict_scores
from .predictors import LexicalPredictor, ModelPredictor, SlotFeatures

#: (train rows, validation rows, fold name) -> a fitted predictor
Fitter = Callable[[Sequence[Row], Sequence[Row], str], Predictor]
#: the short schedule's caps on training and validation rows (CPU-friendly)
SHORT_TRAIN_ROWS, SHORT_VALIDATION_ROWS = 500, 200


@dataclass
class DomainFold:
    domain: str
    n_train: int
    n_test: int
    n_test_contextual: int
    #: system -> {"macro_f1", "ctx_f1", "accuracy"}; empty when the held-out domain has no rows
    scores: dict[str, dict[str, float]] = field(default_factory=dict)


@dataclass
class LeaveOneDomainOutResult:
    systems: list[str]
    schedule: str
    folds: list[DomainFold] = field(default_factory=list)


@dataclass
class LexicalFitter:
    """The lexical baseline's conflict-type classifier (Task 1 is all this analysis scores), sharing its features."""

    features: SlotFeatures = field(default_factory=SlotFeatures)

    def __call__(self, train: Sequence[Row], validation: Sequence[Row], fold: str) -> Predictor:
        return LexicalPredictor(train, with_axes=False, features=self.features)


@dataclass
class ReferenceFitter:
    """Train the reference model (``trainer.train.train_seed``) per fold in a temporary folder, kept in memory."""

    full_schedule: bool = False
    encoder: str | None = None
    seed: int = 42

    @property
    def schedule(self) -> str:
        if self.full_schedule:
            return "full (the paper's settings)"
        return f"short (1 epoch, ≤ {SHORT_TRAIN_ROWS} training and ≤ {SHORT_VALIDATION_ROWS} validation rows, max length 128)"

    def __call__(self, train: Sequence[Row], validation: Sequence[Row], fold: str) -> Predictor:
        from ..data import subsample
        from ..encoders import resolve_encoder
        from ..train import train_seed
        from ..training_args import TrainSettings, training_arguments

        settings = TrainSettings() if self.full_schedule else TrainSettings(
            patience=1, max_length=128, max_train_examples=SHORT_TRAIN_ROWS)
        # short schedule: one epoch, so the last model is the kept one and no checkpoint is needed
        schedule = {} if self.full_schedule else {"num_train_epochs": 1, "save_strategy": "no",
                                                  "load_best_model_at_end": False}
        splits = {"train": subsample(list(train), settings.max_train_examples, self.seed),
                  "validation": list(validation) if self.full_schedule else subsample(list(validation), SHORT_VALIDATION_ROWS, self.seed)}
        with tempfile.TemporaryDirectory(prefix=f"biodivergence-lodo-{fold}-") as tmp:
            train_seed(splits, resolve_encoder(self.encoder), training_arguments(tmp, self.seed, **schedule), settings)
            return ModelPredictor(Path(tmp))


def analyze(release: Release, fitters: dict[str, Fitter], schedule: str = "") -> LeaveOneDomainOutResult:
    """One fold per ontology domain; a fold whose held-out domain has no evaluated rows is reported empty."""
    from tqdm.auto import tqdm

    result = LeaveOneDomainOutResult(list(fitters), schedule)
    validation = release.splits.get("validation", [])
    for domain in tqdm(ontology.DOMAIN_NAMES, desc="leave-one-domain-out", unit="fold"):
        train = [r for r in release.train if r["domain"] != domain]
        test = [r for r in release.rows if r["domain"] == domain]
        fold = DomainFold(domain, len(train), len(test), sum(r["conflict_type"] == ontology.CONTEXTUAL for r in test))
        if test and train:
            held_in_validation = [r for r in validation if r["domain"] != domain]
            for system, fit in fitters.items():
                fold.scores[system] = conflict_scores(fit(train, held_in_validation, domain).predict(test), test)
        result.folds.append(fold)
    return result

