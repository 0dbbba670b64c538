"""A learned judge: a cross-encoder that scores *do these two claims disagree?*, calibrated on held-out gold.

``biodivergence judge train --out DIR`` fine-tunes a sequence-pair classifier (default: the
packaged all-MiniLM-L6-v2 encoder, any Hub name or path is honoured) on the expert-labelled pairs
of ``builder.annotators.goldcheck`` and saves it with ``save_pretrained``, next to
``judge_config.json``: the sources it was trained on, the Platt calibration fitted on a held-out
share of those sources, and the settings. ``--loso`` also trains one judge per left-out source under
``DIR/heldout-<source>/``, so that ``goldcheck`` can score every source out of fold.

``--annotator judge:DIR`` joins the panel: the judge decides conflict vs no conflict (calibrated
probability); for a conflict the frames annotator's boundary rules give the type, axes, spans and
reconciliation. It does not replace the frames; it is one more vote.
"""

from __future__ import annotations

import argparse
import json
import math
import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from biodivergence_dataset import ontology
from biodivergence_dataset.io import write_json_atomic
from biodivergence_dataset.records import CandidatePair

from ..repair import Labels
from .base import LocalAnnotator
from .frames import FramesAnnotator

JUDGE_CONFIG = "judge_config.json"
KIND = ontology.check_label("annotator_kind", "judge")
HELDOUT_PREFIX = "heldout-"


@dataclass
class JudgeSettings:
    """What a saved judge was trained on and how its score is calibrated."""

    base_model: str
    trained_on: list[str]
    calibration: dict[str, float] = field(default_factory=lambda: {"a": 1.0, "b": 0.0})
    max_length: int = 128
    train_pairs: int = 0
    calibration_pairs: int = 0
    epochs: float = 1.0

    @classmethod
    def load(cls, folder: Path) -> JudgeSettings:
        path = folder / JUDGE_CONFIG
        if not path.is_file():
            raise FileNotFoundError(f"{folder}: not a judge folder (no {JUDGE_CONFIG}); "
                                    "train one with `biodivergence judge train --out DIR`")
        return cls(**json.loads(path.read_text(encoding="utf-8")))


def judge_folder(path: str | Path, heldout: str | None = None) -> Path:
    """The judge to use: ``path`` itself, or its ``heldout-<source>`` fold when scoring ``heldout``."""
    path = Path(path)
    if heldout is not None and (path / f"{HELDOUT_PREFIX}{heldout}" / JUDGE_CONFIG).is_file():
        return path / f"{HELDOUT_PREFIX}{heldout}"
    return path


class JudgeAnnotator(LocalAnnotator):
    """Panel member backed by a saved cross-encoder (see the module docstring)."""

    kind = KIND

    def __init__(self, path: str | Path, batch_size: int = 32, device: str = "cpu"):
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        self.path = Path(path)
        self.settings = JudgeSettings.load(self.path)
        self.tokenizer = AutoTokenizer.from_pretrained(self.path)
        self.model = AutoModelForSequenceClassification.from_pretrained(self.path).to(device).eval()
        self.batch_size, self.device, self._torch = batch_size, device, torch
        self.frames = FramesAnnotator()
        self.annotator_id = f"judge:{self.path.name}"

    @property
    def trained_on(self) -> frozenset[str]:
        return frozenset(self.settings.trained_on)

    def margins(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """Raw conflict margin (logit of conflict minus logit of no conflict) per claim pair."""
        out: list[float] = []
        with self._torch.no_grad():
            for start in range(0, len(pairs), self.batch_size):
                chunk = pairs[start:start + self.batch_size]
                enc = self.tokenizer([a for a, _ in chunk], [b for _, b in chunk], truncation=True, padding=True,
                                     max_length=self.settings.max_length, return_tensors="pt").to(self.device)
                logits = self.model(**enc).logits
                out.extend((logits[:, 1] - logits[:, 0]).tolist())
        return out

    def probability(self, margin: float) -> float:
        c = self.settings.calibration
        return 1.0 / (1.0 + math.exp(-(c["a"] * margin + c["b"])))

    def annotate_many(self, pairs: Sequence[CandidatePair]) -> list[Labels]:
        margins = self.margins([(p.claim_a.sentence, p.claim_b.sentence) for p in pairs])
        return [self._labels(p, self.probability(m)) for p, m in zip(pairs, margins, strict=True)]

    def annotate(self, pair: CandidatePair) -> Labels:
        return self.annotate_many([pair])[0]

    def _labels(self, pair: CandidatePair, p: float) -> Labels:
        if p < 0.5:
            return Labels(ontology.NO_CONFLICT, confidence=round(1 - p, 4), notes=f"judge p={p:.3f}")
        labels = self.frames.conflict_labels(pair, "judge")
        labels.confidence, labels.notes = round(p, 4), f"judge p={p:.3f}"
        return labels


# --------------------------------------------------------------------------- training


def _platt(margins: list[float], truth: list[bool]) -> dict[str, float]:
    """Platt scaling (logistic regression on the margin), fitted on held-out pairs."""
    from sklearn.linear_model import LogisticRegression

    if len(set(truth)) < 2:
        return {"a": 1.0, "b": 0.0}
    lr = LogisticRegression().fit([[m] for m in margins], truth)
    return {"a": float(lr.coef_[0][0]), "b": float(lr.intercept_[0])}


def _split(pairs: list, share: float, seed: int) -> tuple[list, list]:
    """A seeded split into (train, calibration) by the first claim's article, so a claim's pairs stay together."""
    groups = sorted({g.pair.claim_a.article_uid for g in pairs})
    random.Random(seed).shuffle(groups)
    held = set(groups[: max(1, int(len(groups) * share))])
    return ([g for g in pairs if g.pair.claim_a.article_uid not in held],
            [g for g in pairs if g.pair.claim_a.article_uid in held])


@dataclass
class TrainConfig:
    """``biodivergence judge train`` settings (CPU-sized defaults)."""

    data_dir: str = "../shared/data"
    sources: tuple[str, ...] = ()
    base_model: str = ""
    epochs: float = 1.0
    batch_size: int = 16
    learning_rate: float = 3e-5
    max_length: int = 128
    max_pairs: int | None = 4000
    calibration_share: float = 0.2
    seed: int = 42


def train_judge(out_dir: str | Path, config: TrainConfig, leave_out: str | None = None) -> JudgeSettings:
    """Fine-tune, calibrate and save one judge on ``config.sources`` minus ``leave_out``."""
    import torch
    from tqdm import tqdm
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from ..embeddings import DEFAULT_MODEL, resolve_model
    from .goldcheck import GOLD_SOURCES, load_gold

    sources = [s for s in (config.sources or tuple(GOLD_SOURCES)) if s != leave_out]
    gold = [g for s in sources for g in load_gold(s, config.data_dir)]
    rng = random.Random(config.seed)
    rng.shuffle(gold)
    if config.max_pairs is not None:
        gold = gold[: config.max_pairs]
    train, calib = _split(gold, config.calibration_share, config.seed)
    base = resolve_model(config.base_model or DEFAULT_MODEL)
    torch.manual_seed(config.seed)
    tokenizer = AutoTokenizer.from_pretrained(base)
    model = AutoModelForSequenceClassification.from_pretrained(base, num_labels=2)
    optim = torch.optim.AdamW(model.parameters(), lr=config.learning_rate)
    steps = max(1, math.ceil(len(train) / config.batch_size * config.epochs))
    model.train()
    for step in tqdm(range(steps), desc=f"judge train (without {leave_out})" if leave_out else "judge train"):
        start = (step * config.batch_size) % max(1, len(train))
        batch = train[start:start + config.batch_size] or train[: config.batch_size]
        enc = tokenizer([g.pair.claim_a.sentence for g in batch], [g.pair.claim_b.sentence for g in batch],
                        truncation=True, padding=True, max_length=config.max_length, return_tensors="pt")
        loss = model(**enc, labels=torch.tensor([int(g.conflict) for g in batch])).loss
        loss.backward()
        optim.step()
        optim.zero_grad()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    settings = JudgeSettings(base_model=config.base_model or DEFAULT_MODEL, trained_on=sources,
                             max_length=config.max_length, train_pairs=len(train), calibration_pairs=len(calib),
                             epochs=config.epochs)
    write_json_atomic(out / JUDGE_CONFIG, asdict(settings))
    judge = JudgeAnnotator(out)
    margins = judge.margins([(g.pair.claim_a.sentence, g.pair.claim_b.sentence) for g in calib])
    settings.calibration = _platt(margins, [g.conflict for g in calib])
    write_json_atomic(out / JUDGE_CONFIG, asdict(settings))
    return settings


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from .goldcheck import GOLD_SOURCES

    sub = parser.add_subparsers(dest="judge_command", required=True)
    p = sub.add_parser("train", help="fine-tune and calibrate a judge on the expert-labelled gold sources",
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    d = TrainConfig()
    p.add_argument("--out", required=True, help="folder for the judge (save_pretrained + judge_config.json)")
    p.add_argument("--data-dir", default=d.data_dir, help="folder holding the gold sources")
    p.add_argument("--source", action="append", choices=sorted(GOLD_SOURCES), dest="sources",
                   help="train on these sources (repeat; default: all)")
    p.add_argument("--loso", action="store_true", help="also train one judge per left-out source")
    p.add_argument("--base-model", default=d.base_model, help="encoder name or path (default: all-MiniLM-L6-v2)")
    p.add_argument("--epochs", type=float, default=d.epochs)
    p.add_argument("--batch-size", type=int, default=d.batch_size)
    p.add_argument("--learning-rate", type=float, default=d.learning_rate)
    p.add_argument("--max-length", type=int, default=d.max_length)
    p.add_argument("--max-pairs", type=int, default=d.max_pairs, help="cap on training + calibration pairs")
    p.add_argument("--seed", type=int, default=d.seed)


def run(args: argparse.Namespace) -> int:
    config = TrainConfig(data_dir=args.data_dir, sources=tuple(args.sources or ()), base_model=args.base_model,
                         epochs=args.epochs, batch_size=args.batch_size, learning_rate=args.learning_rate,
                         max_length=args.max_length, max_pairs=args.max_pairs, seed=args.seed)
    settings = train_judge(args.out, config)
    print(f"judge saved to {args.out}: trained on {settings.trained_on} ({settings.train_pairs} pairs), "
          f"calibrated on {settings.calibration_pairs}")
    if args.loso:
        for source in settings.trained_on:
            fold = Path(args.out) / f"{HELDOUT_PREFIX}{source}"
            s = train_judge(fold, config, leave_out=source)
            print(f"  fold without {source}: {fold} ({s.train_pairs} pairs)")
    return 0
