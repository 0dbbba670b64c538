"""Benchmark: one training step of the reference multi-task model vs a plain sequence classifier.

Side by side on the same encoder (the packaged all-MiniLM-L6-v2, or ``--encoder``), the same
batches and the same lengths: ``AutoModelForSequenceClassification`` (6 labels, cross-entropy)
against ``MultiTaskConflictModel`` (projection, cross-attention, comparison features, three heads
and losses). A step is forward + backward + AdamW update + zero_grad. Batches are real SciFact
claim pairs (two claims judged against one abstract), tokenised as ``[CLS] a [SEP] b [SEP]``;
two length settings: dynamic padding (the claims' real length) and padding to the paper's
maximum length of 256. Steps of the two models alternate so that machine load hits both alike;
the median over the timed steps is reported. Goal: reference / plain ≤ 1.3.

Run: ``python benchmarks/trainer.py [--steps N] [--batch-size 16]`` (writes benchmarks/results/trainer.json).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from itertools import combinations
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this file is called trainer.py: make ``trainer`` the package, not this script

from results_files import load_averages, machine_fields, write_results

from trainer.data import PairCollator, encode_rows
from trainer.encoders import resolve_encoder
from trainer.modeling import MultiTaskConflictModel

SCIFACT = ROOT.parent / "shared" / "data" / "scifact"
RESULTS = ROOT / "benchmarks" / "results" / "trainer.json"
GOAL = 1.3


def scifact_rows(n: int) -> list[dict]:
    """``n`` decoded-row-like dicts from SciFact claims that share an evidence abstract (labels arbitrary)."""
    by_doc: dict[str, list[str]] = {}
    for name in ("claims_train.jsonl", "claims_dev.jsonl"):
        for line in (SCIFACT / name).open(encoding="utf-8"):
            claim = json.loads(line)
            for doc in claim["evidence"]:
                by_doc.setdefault(doc, []).append(claim["claim"])
    rows = []
    for i, (a, b) in enumerate(p for doc in sorted(by_doc) for p in combinations(by_doc[doc], 2)):
        rows.append({
            "pair_id": str(i), "domain": "amr", "claim_a_text": a, "claim_b_text": b,
            "claim_a_type": "factual", "claim_b_type": "efficacy", "pub_year_a": 2010, "pub_year_b": 2015,
            "conflict_type": "contextual_contradiction" if i % 2 else "no_conflict",
            "divergence_axes": ["geography"] if i % 2 else [], "dominant_confounder": "geography" if i % 4 == 1 else None,
        })
        if len(rows) == n:
            return rows
    raise ValueError(f"only {len(rows)} SciFact pairs available")


def batches(rows: list[dict], tokenizer, batch_size: int, pad_to: int | None) -> list[dict[str, torch.Tensor]]:
    collate = PairCollator(tokenizer)
    items = encode_rows(rows, tokenizer, max_length=256)
    out = []
    for start in range(0, len(items), batch_size):
        batch = collate(items[start:start + batch_size])
        if pad_to:
            extra = pad_to - batch["input_ids"].shape[1]
            batch = {k: torch.nn.functional.pad(v, (0, extra)) if v.dim() == 2 and k in
                     ("input_ids", "attention_mask", "token_type_ids", "pair_segments") else v for k, v in batch.items()}
        out.append(batch)
    return out


def plain_inputs(batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    keys = [k for k in ("input_ids", "attention_mask", "token_type_ids") if k in batch]
    return {**{k: batch[k] for k in keys}, "labels": batch["labels"]}


def step(model, optimizer, inputs) -> float:
    start = time.perf_counter()
    model(**inputs).loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return time.perf_counter() - start


def measure(encoder: str, data: list[dict[str, torch.Tensor]], steps: int, warmup: int = 2) -> dict[str, float]:
    from transformers import AutoModelForSequenceClassification

    torch.manual_seed(0)
    plain = AutoModelForSequenceClassification.from_pretrained(encoder, num_labels=6).train()
    reference = MultiTaskConflictModel.from_encoder(encoder).train()
    opt_plain = torch.optim.AdamW(plain.parameters(), lr=2e-5, weight_decay=0.01)
    opt_reference = torch.optim.AdamW(reference.parameters(), lr=2e-5, weight_decay=0.01)
    times: dict[str, list[float]] = {"plain": [], "reference": []}
    for i in range(warmup + steps):
        batch = data[i % len(data)]
        t_plain = step(plain, opt_plain, plain_inputs(batch))
        t_reference = step(reference, opt_reference, batch)
        if i >= warmup:
            times["plain"].append(t_plain)
            times["reference"].append(t_reference)
    plain_s, reference_s = statistics.median(times["plain"]), statistics.median(times["reference"])
    return {
        "tokens_per_batch": float(statistics.mean(b["input_ids"].shape[1] for b in data)),
        "plain_step_s": round(plain_s, 4),
        "reference_step_s": round(reference_s, 4),
        "plain_min_s": round(min(times["plain"]), 4),
        "reference_min_s": round(min(times["reference"]), 4),
        "ratio_median": round(reference_s / plain_s, 3),
        "ratio_min": round(min(times["reference"]) / min(times["plain"]), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--encoder", default="minilm")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's choice)")
    parser.add_argument("--out", default=str(RESULTS), help="results file (written with the suffix .json)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    load_before = load_averages()
    from transformers import AutoTokenizer

    encoder = resolve_encoder(args.encoder)
    tokenizer = AutoTokenizer.from_pretrained(encoder)
    rows = scifact_rows(args.batch_size * 4)
    settings = {}
    for name, pad_to in (("dynamic_padding", None), ("padded_to_256", 256)):
        result = measure(encoder, batches(rows, tokenizer, args.batch_size, pad_to), args.steps)
        settings[name] = result
        print(f"{name:>16}: {result['tokens_per_batch']:.0f} tokens  plain {result['plain_step_s']:.3f}s  "
              f"reference {result['reference_step_s']:.3f}s  ratio {result['ratio_median']:.2f} (goal ≤ {GOAL})")
    report = {
        "benchmark": "training step: MultiTaskConflictModel vs AutoModelForSequenceClassification",
        "encoder": encoder,
        "batch_size": args.batch_size,
        "timed_steps": args.steps,
        "goal_ratio": GOAL,
        "meets_goal": all(s["ratio_median"] <= GOAL for s in settings.values()),
        "settings": settings,
        "machine": {"python": platform.python_version(), "torch": torch.__version__, "threads": torch.get_num_threads(),
                    "load_average_1m": load_averages()[0],
                    **machine_fields(load_before)},
    }
    write_results(Path(args.out).with_suffix(""), report)


if __name__ == "__main__":
    main()
