"""The question answerer: a cross-encoder that reads whether a text speaks to a question, and its answer.

One BERT encoder reads "question [SEP] text" (the packaged all-MiniLM-L6-v2, started from the finding reader's
layers); two heads over its mean-pooled output give

- ``relevance``: does the text report a result on the question (its intervention, comparator and outcome, or
  the claim it stands for), whatever the result;
- ``answer``: yes / no to the question as written, learned only from texts that answer it, so a text that speaks
  to the question always gets a yes or a no and ``neutral`` means only that it does not speak to it.

Both are probabilities read at 0.5, never a threshold fitted on gold. A saved answerer is a folder holding
``answerer_config.json`` and ``answerer.safetensors``: the tensors training changed, in float16, over the base
model's own (the embeddings stay frozen), so it ships as a delta and needs no download.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from biodivergence_dataset import ontology
from biodivergence_dataset.io import write_json_atomic

from . import fitting
from .answer_data import SOURCES, AnswerExample, answer_examples
from .fitting import fit_heads, freeze, save_delta
from .model import IGNORE, HeadedReader, build_network, read_config
from .model import SHIPPED as SHIPPED_READER
from .model import WEIGHTS_FILE as READER_WEIGHTS

#: Bumped when what the answerer reads, or how its outputs are used, changes (part of the annotator id).
ANSWERER_VERSION = "1"
CONFIG_FILE = "answerer_config.json"
WEIGHTS_FILE = "answerer.safetensors"
REPORT_FILE = "answerer_report.json"
#: The answerer shipped in the package (``biodivergence reader train-answerer`` on the development part).
SHIPPED = Path(__file__).resolve().parent.parent / "models" / "question_answerer"
YES, NO, NEUTRAL = ontology.READER_STANCES
ANSWERS = (YES, NO)
HEADS = {"relevance": 2, "answer": len(ANSWERS)}


@dataclass
class AnswererConfig:
    """What a saved answerer is: its base encoder and what it was trained on."""

    base_model: str = "sentence-transformers/all-MiniLM-L6-v2"
    max_length: int = 192
    frozen: list[str] = field(default_factory=list)
    training: dict[str, Any] = field(default_factory=dict)
    #: the sha256 of the weights file, written at save and checked at load
    weights_sha256: str | None = None
    __pydantic_config__ = ConfigDict(extra="forbid")

    @classmethod
    def load(cls, folder: Path) -> AnswererConfig:
        return read_config(cls, folder, CONFIG_FILE, "question answerer",
                           "biodivergence reader train-answerer --out DIR")


@dataclass(frozen=True)
class Answer:
    """How a text stands to one question."""

    #: probability that the text reports a result on the question
    relevance: float
    #: probability that its answer to the question as written is yes (given that it answers)
    yes: float

    @property
    def relevant(self) -> bool:
        return self.relevance > 0.5

    @property
    def answer(self) -> str:
        """yes / no for a text that speaks to the question, ``neutral`` for one that does not."""
        return (YES if self.yes > 0.5 else NO) if self.relevant else NEUTRAL

    def as_dict(self) -> dict[str, Any]:
        return {"answer": self.answer, "relevance": self.relevance, "answer_probs": {YES: self.yes, NO: 1 - self.yes}}


class QuestionAnswerer(HeadedReader):
    """A loaded answerer; ``read`` caches its answers per (question, text)."""

    desc = "answering"

    def __init__(self, folder: str | Path, device: str = "cpu"):
        self.folder = Path(folder)
        self.config = AnswererConfig.load(self.folder)
        super().__init__(self.folder, self.config.base_model, HEADS, WEIGHTS_FILE, self.config.max_length, device,
                         self.config.weights_sha256)

    def read(self, pairs: Iterable[tuple[str, str]], batch_size: int = 64, progress: bool = False) -> list[Answer]:
        """One Answer per (question, text), in order."""
        return self._read(pairs, batch_size, progress, lambda _, relevance, answer: Answer(
            round(float(relevance[1]), 4), round(float(answer[ANSWERS.index(YES)]), 4)))


def load_answerer(path: str | Path | None = None, device: str = "cpu") -> QuestionAnswerer:
    """The answerer at ``path`` (None: the one shipped in the package)."""
    return QuestionAnswerer(SHIPPED if path is None else Path(path), device)


# --------------------------------------------------------------------------- training


class AnswererTrainConfig(BaseModel):
    """``biodivergence reader train-answerer`` settings, sized for 2 CPU cores. The recipe was fixed before the
    check part was scored and nothing in it was chosen on that part: the finding reader's layers as the start,
    one and a half epochs, the reader's learning rate and batch."""

    model_config = ConfigDict(extra="forbid")

    data_dir: fitting.DataDir = "../shared/data"
    sources: fitting.Sources = SOURCES
    base_model: fitting.Encoder = "sentence-transformers/all-MiniLM-L6-v2"
    init_reader: str | None = Field(str(SHIPPED_READER), description="a finding reader folder whose encoder layers "
                                                                     "start the answerer (none: the base model's own)")
    epochs: fitting.Epochs = 1.5
    batch_size: fitting.BatchSize = 32
    learning_rate: fitting.LearningRate = 5e-5
    warmup_share: fitting.WarmupShare = 0.06
    max_length: fitting.MaxLength = 192
    freeze_layers: int = Field(0, description="lowest encoder layers kept frozen (a large base on few cores)")
    max_per_source: dict[str, int] = Field(default_factory=lambda: {"scifact": 800, "healthver": 1200})
    #: how many times the examples of a source are repeated (PubMedQA is the one source of questions as a
    #: reviewer writes them, and the smallest)
    repeat: dict[str, int] = Field(default_factory=lambda: {"pubmedqa": 2})
    max_seconds: fitting.MaxSeconds = 0.0
    threads: fitting.Threads = 2
    device: fitting.Device = "cpu"
    seed: fitting.Seed = 13
    part: str = Field("training", description="train on the development part (training), or on its fit part "
                                              "(its tuning part left out too) to compare settings")
    #: ``answer_data.ei_answer_examples``
    cross_trial: bool = Field(False, description="add another trial's result on a like outcome as a negative per "
                                                 "Evidence Inference prompt")


def _targets(examples: list[AnswerExample]) -> tuple[list[int], list[int]]:
    return ([int(e.relevant) for e in examples],
            [IGNORE if e.answer is None else ANSWERS.index(e.answer) for e in examples])


def train_answerer(out_dir: str | Path, config: AnswererTrainConfig, log_every: int = 25) -> AnswererConfig:
    """Train and save (delta weights + config) one answerer on the development part."""
    import torch
    from transformers import AutoTokenizer

    from ..embeddings import resolve_model
    from .compact import saved_tensors

    torch.set_num_threads(config.threads)
    torch.manual_seed(config.seed)
    rng = random.Random(config.seed)
    examples = answer_examples(config.data_dir, config.sources, config.part, config.max_per_source, config.seed,
                               config.cross_trial)
    examples = [e for e in examples for _ in range(config.repeat.get(e.source, 1))]
    tokenizer = AutoTokenizer.from_pretrained(resolve_model(config.base_model))
    enc = tokenizer([e.question for e in examples], [e.text for e in examples], truncation=True,
                    max_length=config.max_length)
    network = build_network(config.base_model, HEADS)
    if config.init_reader:
        layers = {k: v for k, v in saved_tensors(Path(config.init_reader) / READER_WEIGHTS, network).items()
                  if k.startswith("encoder.")}
        network.load_state_dict(layers, strict=False)
    frozen = freeze(network, config.freeze_layers)
    total = int(-(-len(examples) // config.batch_size) * config.epochs)
    step, seconds = fit_heads(network, tokenizer, enc, list(_targets(examples)), total, config.batch_size,
                              config.learning_rate, config.warmup_share, config.max_seconds, config.device, rng,
                              "training answerer", log_every)
    out = Path(out_dir)
    sha256 = save_delta(network, out / WEIGHTS_FILE)
    settings = config.model_dump(exclude={"data_dir", "threads"})
    settings["init_reader"] = Path(config.init_reader).name if config.init_reader else None
    saved = AnswererConfig(base_model=config.base_model, max_length=config.max_length, frozen=frozen, training={
        **settings, "sources": list(config.sources), "steps": step, "seconds": round(seconds, 1),
        "examples": len(examples), "examples_per_source": dict(Counter(e.source for e in examples)),
        "check_part": "builder.goldparts.is_heldout (20% of each source's articles / questions / claims)"},
        weights_sha256=sha256)
    write_json_atomic(out / CONFIG_FILE, asdict(saved))
    return saved

