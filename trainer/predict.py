"""``biodivergence predict``: predictions of a trained reference model, in the metric's input format.

One JSONL row per example, keyed by ``pair_id``::

    {"pair_id": ..., "conflict_type": ..., "divergence_axes": [...], "dominant_confounder": "" | axis}

The conflict type is the conflict-type head's arg-max, or, for a model with a conflict threshold ``t`` (tuned on
validation by ``biodivergence train``, saved as ``conflict_threshold`` in its config), the most probable conflict
class where ``1 − p(no_conflict) ≥ t`` and ``no_conflict`` elsewhere. The confounder is the head's arg-max among the
axes the constraint mode allows (all axes under ``none``, the predicted axes under ``predicted_axes``, the gold axes
under ``gold_axes``), or ``""`` when that leaves no axis to choose from.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from biodivergence_dataset import ontology
from biodivergence_dataset.io import write_text_atomic


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


NO_CONFLICT_ID = ontology.CONFLICT_TYPE_NAMES.index(ontology.NO_CONFLICT)


def softmax(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def conflict_classes(conflict_logits: np.ndarray, conflict_threshold: float | None = None) -> np.ndarray:
    """Conflict-type ids from the head's logits: the arg-max, or with ``conflict_threshold`` ``t`` the most probable
    conflict class where ``1 − p(no_conflict) ≥ t``, ``no_conflict`` elsewhere.

    A model trained on a rare positive class ranks pairs better than its arg-max shows: its ``no_conflict`` logit
    stays a hair above the next class on most conflicts, so the arg-max predicts none; the threshold moves that
    decision to where validation says it pays.
    """
    logits = np.asarray(conflict_logits, dtype=np.float64)
    if conflict_threshold is None:
        return logits.argmax(-1)
    others = np.where(np.arange(logits.shape[-1]) == NO_CONFLICT_ID, -np.inf, logits).argmax(-1)
    is_conflict = 1.0 - softmax(logits)[..., NO_CONFLICT_ID] >= conflict_threshold
    return np.where(is_conflict, others, NO_CONFLICT_ID)


def decode(
    conflict_logits: np.ndarray,
    axis_logits: np.ndarray,
    confounder_logits: np.ndarray,
    constraint_mode: str,
    axis_threshold: float = 0.5,
    gold_axes: np.ndarray | None = None,
    conflict_threshold: float | None = None,
) -> list[dict[str, Any]]:
    """Label records (conflict type, axes, confounder) from the three heads' logits for a batch; a pair classed
    ``no_conflict`` gets no axes and no confounder, whatever the axis head says.

    The conflict type is :func:`conflict_classes` at ``conflict_threshold`` (None: the arg-max). The confounder
    restriction is applied here as well as in the model, so raw logits decode the same way.
    """
    conflict = conflict_classes(conflict_logits, conflict_threshold)
    axes = sigmoid(np.asarray(axis_logits, dtype=np.float64)) >= axis_threshold
    if constraint_mode == "none":
        allowed = np.ones_like(axes)
    elif constraint_mode == "gold_axes":
        if gold_axes is None:
            raise ValueError("constraint_mode 'gold_axes' needs the gold axes")
        allowed = np.asarray(gold_axes) >= 0.5
    else:
        allowed = axes
    confounder = np.where(allowed, np.asarray(confounder_logits, dtype=np.float64), -np.inf).argmax(-1)
    records = []
    for i in range(len(conflict)):
        label = ontology.CONFLICT_TYPE_NAMES[conflict[i]]
        if label == ontology.NO_CONFLICT:  # no conflict, nothing for a context axis to explain
            records.append({"conflict_type": label, "divergence_axes": [], "dominant_confounder": ""})
            continue
        has_choice = bool(allowed[i].any())
        records.append({
            "conflict_type": label,
            "divergence_axes": [a for a, on in zip(ontology.AXIS_NAMES, axes[i]) if on],
            "dominant_confounder": ontology.AXIS_NAMES[confounder[i]] if has_choice else "",
        })
    return records


#: Candidate axis thresholds (0.05 … 0.95) searched on validation after training.
AXIS_THRESHOLD_GRID: tuple[float, ...] = tuple(round(0.05 * i, 2) for i in range(1, 20))


def tune_axis_threshold(axis_logits: np.ndarray, axis_labels: np.ndarray,
                        grid: Sequence[float] = AXIS_THRESHOLD_GRID) -> tuple[float, float | None]:
    """(threshold, micro-F1): the grid threshold with the best axis micro-F1 on held-out labels.

    Ties go to the threshold nearest 0.5. Class-weighted BCE with capped ``pos_weight`` leaves the
    probabilities of rare axes below 0.5 for most of training, so a fixed 0.5 can predict no axis at all.
    Without any gold axis, micro-F1 is undefined (None) where no axis is predicted either, and that
    threshold wins: nothing wrongly found is the best a threshold can do there.
    """
    from .metric import scoring_module

    axes_scores = scoring_module().axes_scores  # the metric's own Task 2 definition
    probs = sigmoid(np.asarray(axis_logits, dtype=np.float64))
    gold = np.asarray(axis_labels) >= 0.5
    labels = [str(i) for i in range(gold.shape[1])]
    best: tuple[float, float, float | None] | None = None
    for threshold in sorted(grid, key=lambda t: abs(t - 0.5)):
        f1 = axes_scores(gold, probs >= threshold, labels=labels)["axes/micro_f1"]
        rank = 1.0 if np.isnan(f1) else f1
        if best is None or rank > best[1]:
            best = (threshold, rank, None if np.isnan(f1) else f1)
    return best[0], best[2]


#: Candidate conflict thresholds on ``1 − p(no_conflict)`` (0.01 … 0.99) searched on validation at each evaluation:
#: a fine grid, because the model's probabilities of the rare classes crowd into a narrow band.
CONFLICT_THRESHOLD_GRID: tuple[float, ...] = tuple(round(0.01 * i, 2) for i in range(1, 100))


def tune_conflict_threshold(conflict_logits: np.ndarray, labels: np.ndarray,
                            grid: Sequence[float] = CONFLICT_THRESHOLD_GRID) -> tuple[float, float | None]:
    """(threshold, Ctx-F1): the grid threshold of :func:`conflict_classes` with the best Ctx-F1 (the metric's
    Task 1 headline) on held-out labels.

    Ties go to the highest threshold (fewest pairs called conflicts). Where Ctx-F1 is undefined (no contextual
    contradiction among the labels nor the predictions) that threshold wins, as nothing was wrongly found; its
    score is then None.
    """
    from .metric import scoring_module

    conflict_type_scores = scoring_module().conflict_type_scores  # the metric's own Task 1 definition
    gold = np.asarray(labels, dtype=np.int64)
    best: tuple[float, float, float | None] | None = None
    for threshold in sorted(grid, reverse=True):
        f1 = conflict_type_scores(gold, conflict_classes(conflict_logits, threshold))["conflict_type/ctx_f1"]
        rank = 1.0 if np.isnan(f1) else f1
        if best is None or rank > best[1]:
            best = (threshold, rank, None if np.isnan(f1) else f1)
    return best[0], best[2]


def references_from_labels(labels: np.ndarray, axis_labels: np.ndarray, confounder_labels: np.ndarray) -> list[dict[str, Any]]:
    """Metric reference records from the label tensors of ``trainer.data.label_ids``."""
    return [
        {
            "conflict_type": ontology.CONFLICT_TYPE_NAMES[int(c)],
            "divergence_axes": [a for a, on in zip(ontology.AXIS_NAMES, ax) if on >= 0.5],
            "dominant_confounder": ontology.AXIS_NAMES[int(d)] if d >= 0 else "",
        }
        for c, ax, d in zip(labels, axis_labels, confounder_labels)
    ]


def reference_record(row: dict[str, Any]) -> dict[str, Any]:
    """The metric reference of a decoded release row (all five task fields)."""
    return {
        "pair_id": row["pair_id"],
        "conflict_type": row["conflict_type"],
        "divergence_axes": list(row["divergence_axes"]),
        "dominant_confounder": row.get("dominant_confounder") or "",
        "reconciliation": row.get("reconciliation") or "",
        "evidence_spans": [dict(s) for s in row.get("evidence_spans") or []],
    }


def load_model(model_dir: str | Path, constraint_mode: str | None = None, axis_threshold: float | None = None,
               revision: str | None = None, conflict_threshold: float | None = None):
    """A trained model and its tokenizer, in eval mode; ``constraint_mode`` / ``axis_threshold`` /
    ``conflict_threshold`` override the saved ones.

    ``model_dir`` is a folder written by ``biodivergence train`` or the Hub id of a pushed one, ``ORG/NAME@REV``
    or ``revision=`` pinning its version (offline, the local Hugging Face cache must hold it).
    """
    from transformers import AutoTokenizer

    from builder.embeddings import looks_like_path

    from .data import check_features
    from .modeling import CONSTRAINT_MODES, MultiTaskConflictModel

    name = str(model_dir)
    if Path(name).expanduser().exists() or looks_like_path(name):
        model_dir = Path(name).expanduser()
        if not (model_dir / "config.json").exists():
            raise FileNotFoundError(f"{model_dir} is not a saved model folder (no config.json)")
    elif "@" in name:
        model_dir, _, pinned = name.partition("@")
        revision = revision or pinned
    try:
        model = MultiTaskConflictModel.from_pretrained(model_dir, revision=revision)
    except OSError as exc:
        raise FileNotFoundError(f"cannot load model {name!r}: {str(exc).strip().splitlines()[0]}") from exc
    check_features(model.config)
    if constraint_mode is not None:
        if constraint_mode not in CONSTRAINT_MODES:
            raise ValueError(f"constraint mode must be one of {CONSTRAINT_MODES}, got {constraint_mode!r}")
        model.config.constraint_mode = constraint_mode
    if axis_threshold is not None:
        if not 0.0 < axis_threshold < 1.0:
            raise ValueError(f"axis threshold must be in (0, 1), got {axis_threshold}")
        model.config.axis_threshold = axis_threshold
    if conflict_threshold is not None:
        if not 0.0 < conflict_threshold < 1.0:
            raise ValueError(f"conflict threshold must be in (0, 1), got {conflict_threshold}")
        model.config.conflict_threshold = conflict_threshold
    model.eval()
    return model, AutoTokenizer.from_pretrained(model_dir, revision=revision)


@dataclass
class HeadOutputs:
    """The three heads' logits for a list of rows, with the rows' gold axes (for ``gold_axes`` and tuning)."""

    pair_ids: list[str]
    conflict: np.ndarray
    axes: np.ndarray
    confounder: np.ndarray
    gold_axes: np.ndarray

    def decode(self, constraint_mode: str, axis_threshold: float,
               conflict_threshold: float | None = None) -> list[dict[str, Any]]:
        """Prediction records keyed by ``pair_id``."""
        records = decode(self.conflict, self.axes, self.confounder, constraint_mode, axis_threshold, self.gold_axes,
                         conflict_threshold)
        return [{"pair_id": pid, **rec} for pid, rec in zip(self.pair_ids, records)]


def head_outputs(model, tokenizer, rows: Sequence[dict[str, Any]], batch_size: int = 32) -> HeadOutputs:
    """Run the model over decoded release rows in batches and collect the heads' logits."""
    import torch
    from tqdm.auto import tqdm

    from .data import PairCollator, encode_rows

    if not rows:
        raise ValueError("no rows to predict")
    collate = PairCollator(tokenizer)
    items = encode_rows(rows, tokenizer, model.config.max_length, model.config.use_question)
    gold_mode = model.config.constraint_mode == "gold_axes"
    parts: dict[str, list[np.ndarray]] = {"conflict": [], "axes": [], "confounder": [], "gold_axes": []}
    with torch.inference_mode():
        for start in tqdm(range(0, len(items), batch_size), desc="predict", unit="batch", disable=len(items) <= batch_size):
            batch = collate(items[start:start + batch_size])
            gold = batch.pop("axis_labels", None)
            for key in ("labels", "confounder_labels"):
                batch.pop(key, None)
            if gold is None:
                if gold_mode:
                    raise ValueError("constraint mode 'gold_axes' needs rows with their gold divergence_axes")
                gold = torch.zeros(len(batch["input_ids"]), len(model.config.axis_names))
            batch = {k: v.to(model.device) for k, v in batch.items()}
            result = model(**batch, axis_labels=gold.to(model.device) if gold_mode else None)
            parts["conflict"].append(result.conflict_logits.float().cpu().numpy())
            parts["axes"].append(result.axis_logits.float().cpu().numpy())
            parts["confounder"].append(result.confounder_logits.float().cpu().numpy())
            parts["gold_axes"].append(gold.numpy())
    return HeadOutputs([it["pair_id"] for it in items], **{k: np.concatenate(v) for k, v in parts.items()})


def predict_rows(model, tokenizer, rows: Sequence[dict[str, Any]], batch_size: int = 32) -> list[dict[str, Any]]:
    """Prediction records (with ``pair_id``) for decoded release rows, decoded as the model's config says."""
    outputs = head_outputs(model, tokenizer, rows, batch_size)
    return decoded(outputs, model.config)


def decoded(outputs: HeadOutputs, config) -> list[dict[str, Any]]:
    """Prediction records of head outputs, decoded as a model config says (mode, axis and conflict thresholds)."""
    return outputs.decode(config.constraint_mode, config.axis_threshold, getattr(config, "conflict_threshold", None))


def write_jsonl(path: str | Path, records: Sequence[dict[str, Any]]) -> Path:
    return write_text_atomic(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


# -- CLI -----------------------------------------------------------------------------------------------------


def add_arguments(parser) -> None:
    from biodivergence_dataset.arguments import add_release_argument

    parser.add_argument("--model", required=True,
                        help="folder written by `biodivergence train`, or the Hub id ORG/NAME[@REVISION] of a pushed one")
    add_release_argument(parser)
    parser.add_argument("--config", default=ontology.DEFAULT_CONFIG, choices=ontology.CONFIGS)
    parser.add_argument("--split", default="test")
    parser.add_argument("--out", required=True, help="JSONL file to write")
    parser.add_argument("--constraint-mode", default=None, help="override the saved mode: none, predicted_axes, gold_axes")
    parser.add_argument("--axis-threshold", type=float, default=None,
                        help="override the saved axis threshold (training tunes it on validation)")
    parser.add_argument("--conflict-threshold", type=float, default=None,
                        help="override the saved conflict threshold on 1 - p(no_conflict) (training tunes it on "
                             "validation; a model without one predicts the arg-max)")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--max-examples", type=int, metavar="N",
                        help="predict a fixed random sample of N rows of the split (the rows `train --max-eval-examples "
                             "N` scores; default: all rows); evaluate it with `evaluate --allow-missing`")


def run(args) -> int:
    from biodivergence_dataset.release import resolve_release

    from .data import load_splits

    splits = load_splits(resolve_release(args.release), args.config)
    if args.split not in splits:
        raise ValueError(f"split {args.split!r} is not in {args.release} ({args.config}); it has {list(splits)}")
    if args.max_examples is not None and args.max_examples < 1:
        raise ValueError(f"--max-examples must be at least 1, got {args.max_examples}")
    from .data import sampled_rows

    model, tokenizer = load_model(args.model, args.constraint_mode, args.axis_threshold,
                                  conflict_threshold=args.conflict_threshold)
    records = predict_rows(model, tokenizer, sampled_rows(splits[args.split], args.max_examples), args.batch_size)
    path = write_jsonl(args.out, records)
    print(f"wrote {len(records)} predictions to {path}")
    return 0
