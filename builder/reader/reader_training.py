"""``biodivergence reader train|evaluate``: fine-tune the finding reader on the non-held-out expert data, score it
out of fold.

Training: one shared encoder, two heads, a masked multi-task loss (cross-entropy per head, ignoring examples
whose source gives no label for that head), AdamW with linear warm-up and decay, length-bucketed batches
(dynamic padding). The word embeddings (all embeddings) and the lowest ``freeze_layers`` layers stay frozen, so
only the rest is saved: float16 safetensors over the base model, with ``reader_config.json`` and the held-out
report (``reader_report.json``) beside it.
"""

from __future__ import annotations

import argparse
import random
from collections import Counter
from dataclasses import asdict
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from biodivergence_dataset import ontology
from biodivergence_dataset.arguments import add_config_arguments, config_from_args
from biodivergence_dataset.io import write_json_atomic

from . import fitting
from .answerer import REPORT_FILE as ANSWER_REPORT
from .answerer import AnswererTrainConfig
from .fitting import fit_heads, freeze, save_delta
from .model import CONFIG_FILE, IGNORE, REPORT_FILE, WEIGHTS_FILE, ReaderConfig, build_network
from .reader_examples import SCORED_ON, SOURCES, Part, ReaderExample, data_fingerprint, training_examples


class TrainConfig(BaseModel):
    """``biodivergence reader train`` settings, sized for 2 CPU cores: the shipped reader is these defaults
    (1,272 steps, 32 min on 2 idle cores, about 25 s on one H100; six epochs over three, and the arm marks,
    were chosen on a development part of the training articles)."""

    model_config = ConfigDict(extra="forbid")

    data_dir: fitting.DataDir = "../shared/data"
    sources: fitting.Sources = SOURCES
    base_model: fitting.Encoder = "sentence-transformers/all-MiniLM-L6-v2"
    epochs: fitting.Epochs = 6.0
    batch_size: fitting.BatchSize = 32
    learning_rate: fitting.LearningRate = 6e-5
    warmup_share: fitting.WarmupShare = 0.06
    max_length: fitting.MaxLength = 128
    #: cap on the examples of each source (a seeded sample); Evidence Inference has none, so every finding is
    #: kept in each of its ``phrasings``
    max_per_source: dict[str, int] = Field(default_factory=lambda: {"pubmedqa": 1000, "scifact": 1000,
                                                                    "healthver": 1200})
    freeze_layers: int = Field(0, description="lowest encoder layers kept frozen")
    max_steps: int | None = Field(None, description="stop after this many steps (default: the epochs)")
    max_seconds: fitting.MaxSeconds = 0.0
    threads: fitting.Threads = 2
    #: the reader it saves loads on any device
    device: fitting.Device = "cpu"
    seed: fitting.Seed = 13
    #: else the base model's heads start fresh
    init: str | None = Field(None, description="a saved reader folder to continue training from")
    #: ``model.mark_arms``; the reader remembers it
    arm_marks: bool = Field(True, description="mark the arm words of Evidence Inference texts (--no-arm-marks: "
                                              "train on plain texts)")
    #: ``reader_examples.SCORED_ON``
    part: Part = Field(
        "training", description="train on all but the held-out part (scored there), or on the fit part: the "
                                "development part left out too and scored instead, to compare settings without "
                                "seeing the held-out part")
    #: ``reader_examples.ei_examples``
    phrasings: int = Field(1, description="questions asked of each Evidence Inference finding (1 to 8 of "
                                          "reader_examples.QUESTION_TEMPLATES)")
    #: ``reader_examples.exchanged_example``
    exchange_arms: bool = Field(False, description="also ask each Evidence Inference finding whose text marks an "
                                                   "arm with the arms exchanged (direction flipped), so the marks "
                                                   "decide the direction; needs the arm marks")

    @model_validator(mode="after")
    def _exchange_needs_marks(self) -> TrainConfig:
        if self.exchange_arms and not self.arm_marks:
            raise ValueError("exchange_arms (--exchange-arms) asks marked findings with their arms exchanged; "
                             "it needs arm_marks (drop --no-arm-marks)")
        return self


def _labels(examples: list[ReaderExample]) -> tuple[list[int], list[int]]:
    f_index = {x: i for i, x in enumerate(ontology.READER_FINDINGS)}
    s_index = {x: i for i, x in enumerate(ontology.READER_STANCES)}
    return ([IGNORE if e.finding is None else f_index[e.finding] for e in examples],
            [IGNORE if e.stance is None else s_index[e.stance] for e in examples])


def train_reader(out_dir: str | Path, config: TrainConfig, log_every: int = 25) -> ReaderConfig:
    """Train, save (delta weights + config) and score one reader on the held-out partition."""
    import torch
    from transformers import AutoTokenizer

    from ..embeddings import resolve_model

    device = torch.device(config.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError(f"reader train --device {config.device}: torch sees no CUDA device here")
    torch.set_num_threads(config.threads)
    torch.manual_seed(config.seed)
    rng = random.Random(f"{config.seed}:{config.init or ''}")
    examples = training_examples(config.data_dir, config.sources, config.max_per_source, config.seed,
                                 config.arm_marks, config.part, config.phrasings, config.exchange_arms)
    tokenizer = AutoTokenizer.from_pretrained(resolve_model(config.base_model))
    enc = tokenizer([e.question for e in examples], [e.text for e in examples], truncation=True,
                    max_length=config.max_length)
    f_labels, s_labels = _labels(examples)
    network = build_network(config.base_model, {"finding": len(ontology.READER_FINDINGS),
                                                "stance": len(ontology.READER_STANCES)})
    if config.init:
        from .compact import saved_tensors

        network.load_state_dict(saved_tensors(Path(config.init) / WEIGHTS_FILE, network), strict=False)
    frozen = freeze(network, config.freeze_layers)
    per_epoch = -(-len(examples) // config.batch_size)
    scheduled = config.max_steps or int(per_epoch * config.epochs)
    step, seconds = fit_heads(network, tokenizer, enc, [f_labels, s_labels], scheduled, config.batch_size,
                              config.learning_rate, config.warmup_share, config.max_seconds, device, rng,
                              "training reader", log_every)
    out = Path(out_dir)
    sha256 = save_delta(network, out / WEIGHTS_FILE)
    saved = ReaderConfig(base_model=config.base_model, max_length=config.max_length, frozen=frozen,
                         arm_marks=config.arm_marks, weights_sha256=sha256, training={
        **config.model_dump(exclude={"data_dir", "threads"}),
        "sources": list(config.sources), "steps": step, "scheduled_steps": scheduled, "seconds": round(seconds, 1),
        "examples": len(examples), "examples_per_source": dict(Counter(e.source for e in examples)),
        "data_fingerprint": data_fingerprint(examples), "heldout": "builder.reader.reader_examples.is_heldout (20%)",
        **({"development": "builder.reader.reader_examples.is_development (20% of the rest)"} if config.part == "fit" else {})})
    write_json_atomic(out / CONFIG_FILE, asdict(saved))
    return saved


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="reader_command", required=True)
    d = TrainConfig()
    p = sub.add_parser("train", help="fine-tune the finding reader on the non-held-out expert data",
                       formatter_class=parser.formatter_class)
    p.add_argument("--out", required=True, help="folder for the reader (delta weights + reader_config.json)")
    p.add_argument("--max-per-source", dest="every_source_cap", type=int, default=None, metavar="N",
                   help=f"cap on examples of every source (default: per source, {d.max_per_source})")
    add_config_arguments(p, TrainConfig, aliases={"sources": "--source"},
                         options={"sources": {"choices": SOURCES}, "part": {"choices": list(SCORED_ON)}})
    p.add_argument("--no-evaluate", action="store_true", help="skip the report (held-out, or development for --part fit)")
    e = sub.add_parser("evaluate", help="score a reader on the held-out part of every source (the development part "
                                        "for a reader trained with --part fit)",
                       formatter_class=parser.formatter_class)
    e.add_argument("--reader", default=None, help="reader folder or Hub id (default: the shipped one)")
    e.add_argument("--data-dir", default=d.data_dir, help="folder holding the expert-labelled sources")
    e.add_argument("--write", action="store_true", help=f"also write {REPORT_FILE} into the reader folder")
    e.add_argument("--json", dest="json_out", default=None, help="also write the report to this JSON file")
    r = sub.add_parser("read", help="read JSONL rows {question, text}: the finding and the answer to the question",
                       formatter_class=parser.formatter_class)
    r.add_argument("file", help="JSONL file of {question, text} rows ('-': standard input)")
    r.add_argument("--out", default=None, help="write the rows here (default: standard output)")
    r.add_argument("--reader", default=None, help="finding reader folder or Hub id (default: the shipped one)")
    r.add_argument("--answerer", default=None, help="question answerer folder (default: the shipped one)")
    x = sub.add_parser("encoder", help="write the reader's encoder without its heads as a model folder another "
                                       "model can start from (biodivergence train --encoder OUT)",
                       formatter_class=parser.formatter_class)
    x.add_argument("--out", required=True, help="folder to write (replaced whole)")
    x.add_argument("--reader", default=None, help="reader folder or Hub id (default: the shipped one)")
    c = sub.add_parser("compact", help="write a reader or answerer with its fine-tuned matrices as low-rank "
                                       "factors of their change from the base model (a smaller delta)",
                       formatter_class=parser.formatter_class)
    c.add_argument("--reader", required=True, help="reader or answerer folder to compact")
    c.add_argument("--out", required=True, help="folder to write (replaced whole); score it with `reader evaluate`")
    c.add_argument("--rank", type=int, default=64, help="rank of each matrix's change")
    t = sub.add_parser("train-answerer", help="fine-tune the question answerer (relevance + yes / no) on the "
                                              "development part", formatter_class=parser.formatter_class)
    t.add_argument("--out", required=True, help="folder for the answerer (delta weights + answerer_config.json)")
    add_config_arguments(t, AnswererTrainConfig, aliases={"sources": "--source"},
                         options={"part": {"choices": list(SCORED_ON)}})
    v = sub.add_parser("evaluate-answerer", help="score the question answerer on the check part",
                       formatter_class=parser.formatter_class)
    v.add_argument("--answerer", default=None, help="question answerer folder (default: the shipped one)")
    v.add_argument("--data-dir", default=d.data_dir, help="folder holding the expert-labelled sources")
    v.add_argument("--write", action="store_true", help=f"also write {ANSWER_REPORT} into the answerer folder")


def run(args: argparse.Namespace) -> int:
    from .model import load_reader, reader_folder

    if args.reader_command in ANSWERER_COMMANDS:
        return run_answerer(args)
    if args.reader_command == "compact":
        return run_compact(args)
    if args.reader_command == "encoder":
        print(f"encoder written to {load_reader(reader_folder(args.reader)).save_encoder(args.out)}")
        return 0
    if args.reader_command == "train":
        cap = args.every_source_cap
        config = config_from_args(TrainConfig, args, **({"max_per_source": dict.fromkeys(SOURCES, cap)} if cap else {}))
        saved = train_reader(args.out, config)
        print(f"reader saved to {args.out}: {saved.training['examples']} examples, {saved.training['steps']} steps, "
              f"{saved.training['seconds']:.0f} s")
        if args.no_evaluate:
            return 0
        folder = Path(args.out)
    else:
        folder = reader_folder(args.reader)
    from .out_of_fold import evaluate_reader, render_report

    report = evaluate_reader(load_reader(folder), args.data_dir)
    print(render_report(report))
    if args.reader_command == "train" or args.write:
        write_json_atomic(folder / REPORT_FILE, report)
    if getattr(args, "json_out", None):
        write_json_atomic(Path(args.json_out), report)
    return 0


def run_compact(args: argparse.Namespace) -> int:
    """``reader compact``: the folder's config file says whether it holds a reader or an answerer."""
    from .answerer import CONFIG_FILE as ANSWERER_CONFIG
    from .answerer import WEIGHTS_FILE as ANSWERER_WEIGHTS
    from .answerer import AnswererConfig
    from .compact import compact_reader
    from .model import CONFIG_FILE, WEIGHTS_FILE, ReaderConfig, build_network

    folder = Path(args.reader)
    kind = next((k for k in ((ReaderConfig, CONFIG_FILE, WEIGHTS_FILE), (AnswererConfig, ANSWERER_CONFIG,
                                                                          ANSWERER_WEIGHTS))
                 if (folder / k[1]).is_file()), None)
    if kind is None:
        raise ValueError(f"{folder}: neither {CONFIG_FILE} nor {ANSWERER_CONFIG} (not a reader or answerer folder)")
    config_class, config_file, weights_file = kind
    base = build_network(config_class.load(folder).base_model, {}).state_dict()
    out = compact_reader(folder, args.out, args.rank, config_file, weights_file, base)
    size = (out / weights_file).stat().st_size / 2**20
    print(f"{out}: rank-{args.rank} delta, {size:.1f} MB (was {(folder / weights_file).stat().st_size / 2**20:.1f} MB)")
    return 0


ANSWERER_COMMANDS = ("read", "train-answerer", "evaluate-answerer")


def run_answerer(args: argparse.Namespace) -> int:
    """``reader read``, ``reader train-answerer`` and ``reader evaluate-answerer``."""
    from .answer_eval import CHECK, TUNING_PART, evaluate_answerer, render_answerer_report
    from .answerer import load_answerer, train_answerer
    from .model import load_reader

    if args.reader_command == "read":
        from .read import run_read

        return run_read(args.file, args.out, lambda: (load_reader(args.reader), load_answerer(args.answerer)))
    if args.reader_command == "train-answerer":
        saved = train_answerer(args.out, config_from_args(AnswererTrainConfig, args))
        print(f"answerer saved to {args.out}: {saved.training['examples']} examples, {saved.training['steps']} steps")
        folder = Path(args.out)
    else:
        folder = Path(args.answerer) if args.answerer else None
    from ..embeddings import DEFAULT_MODEL, load_encoder

    answerer = load_answerer(folder)
    # an answerer fitted without the tuning part is scored there, never on the check part
    part = TUNING_PART if answerer.config.training.get("part") == "fit" else CHECK
    report = evaluate_answerer(answerer, args.data_dir, part, encoder=load_encoder(DEFAULT_MODEL))
    print(render_answerer_report(report))
    if args.reader_command == "train-answerer" or args.write:
        write_json_atomic(answerer.folder / ANSWER_REPORT, report)
    return 0
