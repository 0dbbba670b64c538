"""Making the rare conflict classes count: epochs that hold every conflict and a fresh share of non-conflicts.

On the demo release 97 % of the training pairs are ``no_conflict``; a shuffled epoch of all of them, even with
class weights in the loss, trains a model that predicts ``no_conflict`` for every pair. :class:`ConflictEpochSampler`
draws each epoch as every row of another class plus ``negatives_per_conflict`` times as many ``no_conflict`` rows,
taken in turn from one seeded permutation of them (wrapping round): consecutive epochs see different non-conflicts,
and every non-conflict is seen once before any is seen twice. An epoch is therefore short, and the schedule is
counted in such epochs. :class:`ConflictBalancedTrainer` is ``transformers.Trainer`` with this sampler.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence

from torch.utils.data import Sampler
from transformers import Trainer


class ConflictEpochSampler(Sampler[int]):
    """Indices of one epoch: every row whose label is not ``negative`` plus the next block of ``negative`` rows.

    ``set_epoch`` (called by Trainer before each epoch) picks the block and the shuffle, so a resumed run draws
    the epochs it would have drawn.
    """

    def __init__(self, labels: Sequence[int], negative: int, negatives_per_conflict: float, seed: int = 0):
        if negatives_per_conflict <= 0:
            raise ValueError(f"negatives_per_conflict must be positive, got {negatives_per_conflict}")
        self.positives = [i for i, label in enumerate(labels) if label != negative]
        negatives = [i for i, label in enumerate(labels) if label == negative]
        if not self.positives:
            raise ValueError("no training row of a class other than no_conflict: nothing to rebalance")
        random.Random(seed).shuffle(negatives)
        self.negatives = negatives
        self.per_epoch = min(len(negatives), round(negatives_per_conflict * len(self.positives)))
        self.seed, self.epoch = seed, 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = int(epoch)

    def __len__(self) -> int:
        return len(self.positives) + self.per_epoch

    def epoch_indices(self, epoch: int) -> list[int]:
        """The shuffled indices of epoch ``epoch`` (0-based)."""
        start = (epoch * self.per_epoch) % len(self.negatives) if self.negatives else 0
        block = (self.negatives[start:] + self.negatives[:start])[:self.per_epoch]
        indices = self.positives + block
        random.Random(f"{self.seed}-{epoch}").shuffle(indices)
        return indices

    def __iter__(self):
        return iter(self.epoch_indices(self.epoch))


def epoch_label_counts(labels: Sequence[str], negative: str, negatives_per_conflict: float) -> Counter:
    """What one rebalanced epoch holds per label (the counts its class weights are computed from)."""
    counts = Counter(labels)
    positives = sum(n for label, n in counts.items() if label != negative)
    counts[negative] = min(counts[negative], round(negatives_per_conflict * positives))
    return counts


class ConflictBalancedTrainer(Trainer):
    """``Trainer`` whose training epochs come from a :class:`ConflictEpochSampler` over the ``labels`` of the
    training items (``negative``: the ``no_conflict`` id)."""

    def __init__(self, *args, negative: int, negatives_per_conflict: float, **kwargs):
        super().__init__(*args, **kwargs)
        self.negative, self.negatives_per_conflict = negative, negatives_per_conflict

    def _get_train_sampler(self, train_dataset=None):
        dataset = self.train_dataset if train_dataset is None else train_dataset
        return ConflictEpochSampler([item["labels"] for item in dataset], self.negative, self.negatives_per_conflict,
                                    seed=self.args.seed)
