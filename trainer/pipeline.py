"""Predictions for claim pairs, the ``transformers.pipeline`` way.

>>> from trainer.pipeline import conflict_pipeline
>>> classify = conflict_pipeline("models/ref")          # a model folder or Hub id of `biodivergence train`
>>> classify({"claim_a_text": "Colistin reduced mortality in Greek ICU patients.",
...           "claim_b_text": "Colistin did not reduce mortality in Thai outpatients."})
{'conflict_type': ..., 'divergence_axes': [...], 'dominant_confounder': ...}

Importing this module registers the task ``biodivergence-conflict``, so
``transformers.pipeline("biodivergence-conflict", model=FOLDER)`` builds the same pipeline.

A pair is a dict with ``claim_a_text`` and ``claim_b_text`` (``text`` / ``text_pair`` work too) or a
``(claim_a, claim_b)`` tuple; a list of pairs gives a list of results (``batch_size=`` batches them). The
model also reads the comparison features of ``trainer.pair_features``: the release columns ``claim_a_type`` /
``claim_b_type``, ``domain``, ``pub_year_a`` / ``pub_year_b`` and the mining scores (``similarity``,
``disagreement``, ``entity_overlap``, ``type_compatibility``, ``year_penalty``, ``combined_score``) are
used when the pair carries them, and so is its review question (``question``) for a model trained with it;
missing ones count as unknown (claim type ``factual``, no domain, no
year, scores 0), so release rows give the predictions the model was evaluated with. ``return_scores=True``
adds the conflict-type probabilities and the axis probabilities. The conflict type is decoded at the model's saved conflict threshold
(``trainer.predict.conflict_classes``). A pair classed ``no_conflict`` has no axes and no confounder.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from transformers import AutoModel, Pipeline
from transformers.pipelines import PIPELINE_REGISTRY

from biodivergence_dataset import ontology

from . import modeling  # noqa: F401  (registers the model with AutoConfig / AutoModel)
from .predict import decode, sigmoid

TASK = "biodivergence-conflict"
#: Release columns a pair may carry; the rest of a release row is not read.
_DEFAULTS: dict[str, Any] = {
    "pair_id": None, "domain": None, "pub_year_a": None, "pub_year_b": None, "question": "",
    "claim_a_type": ontology.DEFAULT_CLAIM_TYPE, "claim_b_type": ontology.DEFAULT_CLAIM_TYPE,
}


def pair_row(pair: Mapping[str, Any] | Sequence[str]) -> dict[str, Any]:
    """A release-like row from a pair (dict or ``(claim_a, claim_b)``), without labels."""
    if isinstance(pair, Mapping):
        row = dict(pair)
        row.setdefault("claim_a_text", row.get("text"))
        row.setdefault("claim_b_text", row.get("text_pair"))
    elif isinstance(pair, Sequence) and not isinstance(pair, str) and len(pair) == 2:
        row = {"claim_a_text": pair[0], "claim_b_text": pair[1]}
    else:
        raise TypeError(f"a claim pair is a dict with claim_a_text / claim_b_text or a (claim_a, claim_b) tuple, got {pair!r}")
    if not isinstance(row["claim_a_text"], str) or not isinstance(row["claim_b_text"], str):
        raise TypeError("a claim pair needs two claim texts (claim_a_text, claim_b_text)")
    for key, value in _DEFAULTS.items():
        if row.get(key) is None:
            row[key] = value
    for key in ("claim_a_type", "claim_b_type"):
        if row[key] not in ontology.CLAIM_TYPE_NAMES:
            raise ValueError(f"{key} {row[key]!r} is not one of {list(ontology.CLAIM_TYPE_NAMES)}")
    row.pop("conflict_type", None)  # a prediction never reads the labels
    return row


class ConflictPipeline(Pipeline):
    """Claim pair(s) → ``{"conflict_type", "divergence_axes", "dominant_confounder"}`` (+ scores)."""

    _load_tokenizer = True
    _load_processor = False
    _load_image_processor = False
    _load_feature_extractor = False

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        from .data import check_features

        check_features(self.model.config)
        if self.model.config.constraint_mode == "gold_axes":
            raise ValueError("a model in constraint mode 'gold_axes' needs gold axes; load it with another mode")

    def _sanitize_parameters(self, return_scores: bool | None = None, **kwargs):
        postprocess = {} if return_scores is None else {"return_scores": return_scores}
        return {}, {}, postprocess

    def preprocess(self, pair, **kwargs) -> dict[str, Any]:
        from .data import PairCollator, encode_rows

        config = self.model.config
        items = encode_rows([pair_row(pair)], self.tokenizer, config.max_length, config.use_question)
        return PairCollator(self.tokenizer)(items)

    def _forward(self, inputs: dict[str, Any], **kwargs) -> dict[str, Any]:
        out = self.model(**inputs)
        return {"conflict_logits": out.conflict_logits, "axis_logits": out.axis_logits,
                "confounder_logits": out.confounder_logits}

    def postprocess(self, outputs: dict[str, Any], return_scores: bool = False) -> dict[str, Any]:
        config = self.model.config
        logits = {k: v.float().numpy().reshape(1, -1) for k, v in outputs.items()}
        (record,) = decode(logits["conflict_logits"], logits["axis_logits"], logits["confounder_logits"],
                           config.constraint_mode, config.axis_threshold,
                           conflict_threshold=getattr(config, "conflict_threshold", None))
        if return_scores:
            conflict = logits["conflict_logits"][0]
            probs = np.exp(conflict - conflict.max())
            probs /= probs.sum()
            record["scores"] = {name: float(p) for name, p in zip(config.conflict_type_names, probs)}
            record["axis_probabilities"] = {
                name: float(p) for name, p in zip(config.axis_names, sigmoid(logits["axis_logits"][0].astype(np.float64)))
            }
        return record


def conflict_pipeline(model: str, constraint_mode: str | None = None, axis_threshold: float | None = None,
                      device: int | str | None = None, conflict_threshold: float | None = None,
                      **kwargs) -> ConflictPipeline:
    """A :class:`ConflictPipeline` for a model folder (or Hub id) written by ``biodivergence train``;
    ``constraint_mode`` / ``axis_threshold`` / ``conflict_threshold`` override the saved ones (as
    ``biodivergence predict`` does)."""
    from .predict import load_model

    loaded, tokenizer = load_model(model, constraint_mode, axis_threshold, conflict_threshold=conflict_threshold)
    return ConflictPipeline(model=loaded, tokenizer=tokenizer, task=TASK,
                            device=-1 if device is None else device, **kwargs)


PIPELINE_REGISTRY.register_pipeline(TASK, pipeline_class=ConflictPipeline, pt_model=AutoModel)
