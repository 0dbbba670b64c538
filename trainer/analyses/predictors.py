"""The predictors an analysis can ask: a predictions file, the reference model, the re-fittable lexical baseline."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from biodivergence_dataset import ontology

from ..baselines import lexical
from .analysis_release import Predictor, Record, Row

LEXICAL = "lexical baseline"
REFERENCE = "reference model"


@dataclass
class FilePredictor:
    """Predictions read from a JSONL file in ``biodivergence predict``'s format, looked up by ``pair_id``."""

    path: Path
    records: dict[str, Record]
    name: str = "predictions file"
    labels_new_pairs: bool = False

    @classmethod
    def read(cls, path: str | Path) -> FilePredictor:
        """Read and check the file; a bad line raises ValueError naming the file and the line."""
        import json

        path = Path(path)
        records: dict[str, Record] = {}
        with open(path, encoding="utf-8") as fh:
            for number, line in enumerate(fh, 1):
                if line.strip():
                    record = _checked(line, json.loads, f"{path}:{number}")
                    records[record["pair_id"]] = record
        return cls(path, records, name=f"predictions file {path.name}")

    def predict(self, rows: Sequence[Row]) -> list[Record]:
        missing = [r["pair_id"] for r in rows if r["pair_id"] not in self.records]
        if missing:
            raise ValueError(f"{self.path}: no prediction for {len(missing)} of {len(rows)} pairs, e.g. pair_id {missing[0]!r}")
        return [self.records[r["pair_id"]] for r in rows]


def _checked(line: str, parse, where: str) -> Record:
    try:
        record = parse(line)
    except ValueError as exc:
        raise ValueError(f"{where}: not a JSON record ({exc})") from None
    if not isinstance(record, dict) or "pair_id" not in record or "conflict_type" not in record:
        raise ValueError(f"{where}: a prediction needs pair_id and conflict_type")
    try:
        ontology.check_label("conflict_type", record["conflict_type"])
        for axis in record.get("divergence_axes", []):
            ontology.check_label("divergence_axes", axis)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
    return record


def _row_key(row: Row) -> tuple[str, str, str]:
    return row["pair_id"], row["claim_a_text"], row["claim_b_text"]


@dataclass
class SlotFeatures:
    """The lexical baseline's slot-mismatch features, computed once per (pair, claim texts) and shared by fits."""

    _cache: dict[tuple[str, str, str], list[float]] = field(default_factory=dict, repr=False)

    def __call__(self, rows: Sequence[Row]) -> np.ndarray:
        from tqdm.auto import tqdm

        missing = {_row_key(r): r for r in rows if _row_key(r) not in self._cache}
        for key, row in tqdm(missing.items(), desc="slot features", unit="pair", disable=len(missing) < 2000):
            self._cache[key] = lexical.slot_features(row)
        return np.array([self._cache[_row_key(r)] for r in rows], dtype=np.float64)


@dataclass
class LexicalPredictor:
    """The lexical baseline fitted on ``train``: slot-mismatch gradient boosting for the conflict type (with its
    probability as confidence) and, with ``with_axes``, the per-axis classifiers and the pipeline confounder."""

    train: Sequence[Row]
    with_axes: bool = True
    features: SlotFeatures = field(default_factory=SlotFeatures)
    seed: int = lexical.DEFAULT_SEED
    name: str = LEXICAL
    labels_new_pairs: bool = True

    def __post_init__(self):
        from sklearn.ensemble import HistGradientBoostingClassifier

        if not self.train:
            raise ValueError("the lexical baseline needs training rows")
        self._model = None
        y = np.array([ontology.CONFLICT_TYPE_NAMES.index(r["conflict_type"]) for r in self.train])
        if len(set(y)) > 1:  # the baseline's settings (trainer.baselines.lexical.gradient_boosting)
            self._model = HistGradientBoostingClassifier(class_weight="balanced", early_stopping=False, random_state=self.seed)
            self._model.fit(self.features(self.train), y)
        self._constant = int(y[0])
        if self.with_axes:
            self._vectorise = lexical.PairVectoriser(self.train, self.features)
            self._x_train = self._vectorise(self.train)

    def predict(self, rows: Sequence[Row]) -> list[Record]:
        if self._model is None:
            conflict, confidence = np.full(len(rows), self._constant), np.ones(len(rows))
        else:
            probs = self._model.predict_proba(self.features(rows))
            conflict, confidence = self._model.classes_[probs.argmax(1)], probs.max(1)
        out = [{"pair_id": r["pair_id"], "conflict_type": ontology.CONFLICT_TYPE_NAMES[int(c)], "confidence": float(p)}
               for r, c, p in zip(rows, conflict, confidence)]
        if self.with_axes:
            x_rows = self._vectorise(rows)
            axes = lexical.axis_records(lexical.axis_probabilities(self.train, rows, self._x_train, x_rows, self.seed),
                                        lexical.confounder_probabilities(self.train, self._x_train, x_rows, self.seed))
            for record, labels in zip(out, axes):
                record.update(labels)
        return out


@dataclass
class Remembered:
    """A predictor whose predictions are kept per (pair, claim texts), so analyses asking about the same rows
    (and edits of them) do not predict them twice."""

    inner: Predictor
    _memo: dict[tuple[str, str, str], Record] = field(default_factory=dict, repr=False)

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def labels_new_pairs(self) -> bool:
        return self.inner.labels_new_pairs

    def predict(self, rows: Sequence[Row]) -> list[Record]:
        new = list({_row_key(r): r for r in rows if _row_key(r) not in self._memo}.values())
        for row, record in zip(new, self.inner.predict(new) if new else []):
            self._memo[_row_key(row)] = record
        return [dict(self._memo[_row_key(r)]) for r in rows]


@dataclass
class ModelPredictor:
    """A saved reference model, loaded through ``trainer.predict.load_model``; confidence is the softmax maximum."""

    model_dir: Path
    name: str = REFERENCE
    labels_new_pairs: bool = True
    batch_size: int = 32
    _loaded: Any = field(init=False, repr=False, default=None)

    def __post_init__(self):
        from ..predict import load_model

        self._loaded = load_model(self.model_dir)

    def predict(self, rows: Sequence[Row]) -> list[Record]:
        from ..predict import decoded, head_outputs

        model, tokenizer = self._loaded
        outputs = head_outputs(model, tokenizer, rows, self.batch_size)
        logits = outputs.conflict - outputs.conflict.max(1, keepdims=True)
        probs = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
        records = decoded(outputs, model.config)
        return [{**rec, "confidence": float(p)} for rec, p in zip(records, probs.max(1))]
