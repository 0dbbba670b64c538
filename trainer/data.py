"""From a release folder to model inputs: ``load_dataset`` → decoded rows → tensors → padded batches.

The release is read exactly as users read it from the Hub (``datasets.load_dataset`` on the
folder, ClassLabel features from its README). Each row becomes

* ``input_ids`` / ``attention_mask`` (/ ``token_type_ids``) of ``[CLS] claim_a [SEP] claim_b [SEP]``, or, with
  ``with_question`` and a row that carries its review question, ``[CLS] question [SEP] claim_a [SEP] claim_b [SEP]``
  (the question the pair was mined for tells the model which finding the two claims are compared on);
* ``pair_segments``: 1 on claim-a tokens, 2 on claim-b tokens, 0 on the question, special and padding tokens;
* ``features`` (``trainer.pair_features``) and ``claim_types`` (two claim-type ids);
* ``labels`` (conflict type id), ``axis_labels`` (13-dim multi-hot), ``confounder_labels``
  (axis id, -100 when the example has no dominant confounder), when the row is labelled.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from biodivergence_dataset import ontology
from biodivergence_dataset.features import decode_row
from biodivergence_dataset.release import README, load_release

from .modeling import IGNORE_INDEX
from .pair_features import FEATURE_NAMES, claim_type_ids, feature_vector

DEFAULT_MAX_LENGTH = 256
#: The release column holding the review question a pair was mined for (empty when it has none).
QUESTION_COLUMN = "question"
#: Cap for train-split class weights and axis pos_weight (a class seen once must not dominate the loss).
MAX_LOSS_WEIGHT = 20.0


def load_splits(release_dir: str | Path, config: str = ontology.DEFAULT_CONFIG):
    """The release's ``DatasetDict`` for one config, through ``load_dataset`` (offline, typed features)."""
    release_dir = Path(release_dir)
    if not (release_dir / README).exists():
        raise FileNotFoundError(
            f"{release_dir} has no {README}; a release needs its card (run `biodivergence card --release {release_dir}`)"
        )
    splits = load_release(release_dir, config)
    for name, ds in splits.items():
        _check_vocabulary(ds.features, f"{release_dir}/{config}/{name}")
    return splits


def _check_vocabulary(features, where: str) -> None:
    names = features["conflict_type"].names
    if list(names) != list(ontology.CONFLICT_TYPE_NAMES):
        raise ValueError(f"{where}: conflict_type classes {names} differ from this ontology {list(ontology.CONFLICT_TYPE_NAMES)}")


def decoded_rows(ds) -> list[dict[str, Any]]:
    """Rows of a split with label columns as names (ClassLabel ids decoded)."""
    return [decode_row(row) for row in ds]


def label_ids(row: Mapping[str, Any]) -> dict[str, Any]:
    """Targets of one decoded row: conflict id, axis multi-hot, confounder id or -100."""
    axes = set(row["divergence_axes"])
    confounder = row.get("dominant_confounder")
    return {
        "labels": ontology.CONFLICT_TYPE_NAMES.index(row["conflict_type"]),
        "axis_labels": [float(a in axes) for a in ontology.AXIS_NAMES],
        "confounder_labels": ontology.AXIS_NAMES.index(confounder) if confounder else IGNORE_INDEX,
    }


def check_features(config) -> None:
    """A model computes nothing but what its config says; refuse one built on other comparison features."""
    names = list(getattr(config, "feature_names", None) or [])
    if names != list(FEATURE_NAMES):
        raise ValueError(f"this model was built with comparison features {names}; this code computes {list(FEATURE_NAMES)}")


def pair_segments(encoding, index: int, prefix_chars: int = 0) -> list[int]:
    """1/2 for tokens of the first/second sequence, 0 for special tokens and for the first sequence's tokens
    inside its first ``prefix_chars`` characters (the question; needs the offsets mapping) (fast tokenizers only)."""
    segments = [0 if s is None else s + 1 for s in encoding.sequence_ids(index)]
    if prefix_chars:
        offsets = encoding["offset_mapping"][index]
        segments = [0 if s == 1 and end <= prefix_chars else s for s, (_, end) in zip(segments, offsets)]
    return segments


def question_prefix(row: Mapping[str, Any], tokenizer) -> str:
    """``"<question> [SEP] "`` for a row that carries its review question, else ``""``."""
    question = (row.get(QUESTION_COLUMN) or "").strip()
    return f"{question} {tokenizer.sep_token} " if question else ""


def encode_rows(rows: Sequence[Mapping[str, Any]], tokenizer, max_length: int = DEFAULT_MAX_LENGTH,
                with_question: bool = False) -> list[dict[str, Any]]:
    """Model inputs (unpadded) for decoded release rows, with ``pair_id`` kept for predictions; label
    fields only for rows that carry a ``conflict_type``. ``with_question`` puts the row's question before
    claim a (its tokens get segment 0, so the claims' pooled states stay the claims')."""
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError("the reference model needs a fast tokenizer (it reads token → claim alignment)")
    prefixes = [question_prefix(r, tokenizer) if with_question else "" for r in rows]
    enc = tokenizer(
        [p + r["claim_a_text"] for p, r in zip(prefixes, rows)], [r["claim_b_text"] for r in rows],
        truncation="longest_first", max_length=max_length, return_offsets_mapping=any(prefixes),
    )
    out = []
    for i, row in enumerate(rows):
        item = {key: enc[key][i] for key in ("input_ids", "attention_mask", "token_type_ids") if key in enc}
        item["pair_segments"] = pair_segments(enc, i, len(prefixes[i]))
        item["features"] = feature_vector(row)
        item["claim_types"] = claim_type_ids(row)
        if row.get("conflict_type") is not None:
            item.update(label_ids(row))
        item["pair_id"] = row.get("pair_id")
        out.append(item)
    return out


class PairCollator:
    """Pads token fields with the tokenizer, ``pair_segments`` with 0, and stacks the rest."""

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer

    def __call__(self, items: list[dict[str, Any]]) -> dict[str, Any]:
        import torch

        token_keys = [k for k in ("input_ids", "attention_mask", "token_type_ids") if k in items[0]]
        batch = dict(self.tokenizer.pad([{k: it[k] for k in token_keys} for it in items], return_tensors="pt"))
        length = batch["input_ids"].shape[1]
        batch["pair_segments"] = torch.tensor([_right_pad(it["pair_segments"], length) for it in items])
        batch["features"] = torch.tensor([it["features"] for it in items], dtype=torch.float32)
        batch["claim_types"] = torch.tensor([it["claim_types"] for it in items], dtype=torch.long)
        if "labels" in items[0]:
            batch["labels"] = torch.tensor([it["labels"] for it in items], dtype=torch.long)
            batch["axis_labels"] = torch.tensor([it["axis_labels"] for it in items], dtype=torch.float32)
            batch["confounder_labels"] = torch.tensor([it["confounder_labels"] for it in items], dtype=torch.long)
        if "state_labels" in items[0]:
            batch["state_labels"] = torch.tensor([it["state_labels"] for it in items], dtype=torch.long)
        return batch


def _right_pad(values: list[int], length: int) -> list[int]:
    return list(values) + [0] * (length - len(values))


def class_weights(rows: Iterable[Mapping[str, Any]]) -> list[float]:
    """Balanced conflict-type weights of the train rows (:func:`weights_from_counts`)."""
    return weights_from_counts(Counter(r["conflict_type"] for r in rows))


def weights_from_counts(counts: Mapping[str, float]) -> list[float]:
    """Balanced conflict-type weights ``n / (k · n_c)`` over the k classes seen, capped; 1.0 for unseen classes.
    ``counts`` may be what a training epoch holds rather than the split (a rebalancing sampler)."""
    counts = Counter({c: v for c, v in counts.items() if v})
    n, k = sum(counts.values()), len(counts)
    return [min(n / (k * counts[c]), MAX_LOSS_WEIGHT) if counts[c] else 1.0 for c in ontology.CONFLICT_TYPE_NAMES]


def axis_pos_weight(rows: Iterable[Mapping[str, Any]]) -> list[float]:
    """Per-axis BCE ``pos_weight`` = negatives / positives in the train split, capped; 1.0 for unseen axes."""
    rows = list(rows)
    counts = Counter(a for r in rows for a in r["divergence_axes"])
    n = len(rows)
    return [min((n - counts[a]) / counts[a], MAX_LOSS_WEIGHT) if counts[a] else 1.0 for a in ontology.AXIS_NAMES]


def subsample(rows: list[Any], n: int | None, seed: int = 0) -> list[Any]:
    """``n`` rows drawn without replacement (the same rows for every training seed), or all rows."""
    if n is None or n >= len(rows):
        return rows
    return random.Random(seed).sample(rows, n)


def sampled_rows(ds, n: int | None, keep_order: bool = True) -> list[dict[str, Any]]:
    """Decoded rows of a fixed random sample of ``n`` rows of a split (all rows when ``n`` is None), in the split's
    order with ``keep_order``; only the rows used are decoded."""
    indices = subsample(list(range(len(ds))), n)
    if keep_order:
        indices = sorted(indices)
    return decoded_rows(ds if len(indices) == len(ds) else ds.select(indices))
