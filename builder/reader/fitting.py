"""The fine-tuning loop the finding reader and the question answerer share: length-bucketed batches, frozen
embeddings, a masked multi-task loss over a network's heads, and the float16 delta a trained network is saved as.
"""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Annotated

from pydantic import Field

from biodivergence_dataset.io import write_bytes_atomic

from .model import IGNORE

# The settings every fine-tuning on the expert-labelled sources takes (the judge, the finding reader, the question
# answerer), each with what it means: a model's training config declares them with its own defaults.
DataDir = Annotated[str, Field(description="folder holding the expert-labelled sources")]
Sources = Annotated[tuple[str, ...], Field(description="train on these sources")]
Encoder = Annotated[str, Field(description="encoder name or path")]
Epochs = Annotated[float, Field(description="training epochs")]
BatchSize = Annotated[int, Field(description="examples per training batch")]
LearningRate = Annotated[float, Field(description="AdamW learning rate")]
WarmupShare = Annotated[float, Field(description="share of steps of linear warm-up")]
MaxLength = Annotated[int, Field(description="longest input in tokens (longer: truncated)")]
MaxSeconds = Annotated[float, Field(description="stop and save after this many seconds of training (0: run the "
                                                "whole schedule)")]
Threads = Annotated[int, Field(description="torch CPU threads")]
Device = Annotated[str, Field(description="torch device to train on (e.g. cuda on a GPU server)")]
Seed = Annotated[int, Field(description="seed of the sampling and the training")]


def length_batches(lengths: list[int], batch_size: int, rng: random.Random) -> list[list[int]]:
    """Shuffled batches of similar lengths (little padding): sort within chunks of 50 batches."""
    order = list(range(len(lengths)))
    rng.shuffle(order)
    chunk = batch_size * 50
    batches = []
    for start in range(0, len(order), chunk):
        part = sorted(order[start:start + chunk], key=lambda i: lengths[i])
        batches.extend(part[i:i + batch_size] for i in range(0, len(part), batch_size))
    rng.shuffle(batches)
    return batches


def freeze(network, layers: int) -> list[str]:
    """Freeze the embeddings and the lowest ``layers`` encoder layers; the frozen parameter prefixes."""
    prefixes = ["encoder.embeddings."] + [f"encoder.encoder.layer.{i}." for i in range(layers)]
    for name, param in network.named_parameters():
        if name.startswith(tuple(prefixes)):
            param.requires_grad_(False)
    return prefixes


def fit_heads(network, tokenizer, enc, targets: list[list[int]], total: int, batch_size: int, learning_rate: float,
              warmup_share: float, max_seconds: float, device, rng: random.Random, desc: str,
              log_every: int = 25) -> tuple[int, float]:
    """Fine-tune ``network``'s unfrozen parameters for ``total`` steps (or ``max_seconds``): AdamW with linear
    warm-up and decay over length-bucketed batches, the loss the sum over heads of each head's cross-entropy with
    its ``targets`` (``IGNORE`` where an example has no label for that head). The steps run and the seconds."""
    import torch
    from tqdm.auto import tqdm
    from transformers import get_linear_schedule_with_warmup

    network.to(device)
    params = [p for p in network.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=learning_rate, weight_decay=0.01)
    scheduler = get_linear_schedule_with_warmup(optimizer, int(total * warmup_share), total)
    lengths = [len(x) for x in enc["input_ids"]]
    network.train()
    started, step, running = time.perf_counter(), 0, 0.0
    bar = tqdm(total=total, desc=desc, unit="step")
    while step < total:
        for idx in length_batches(lengths, batch_size, rng):
            if step >= total or (max_seconds and time.perf_counter() - started > max_seconds):
                total = step
                break
            batch = tokenizer.pad({k: [enc[k][i] for i in idx] for k in enc}, return_tensors="pt").to(device)
            loss = sum(torch.nn.functional.cross_entropy(
                logits, torch.tensor([gold[i] for i in idx], device=device), ignore_index=IGNORE, reduction="sum")
                for logits, gold in zip(network(**batch), targets, strict=True)) / len(idx)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            step += 1
            running += loss.item()
            bar.update(1)
            if step % log_every == 0:
                bar.write(f"step {step}/{total} loss {running / log_every:.4f} {time.perf_counter() - started:.0f} s")
                running = 0.0
    bar.close()
    return step, time.perf_counter() - started


def save_delta(network, path: Path) -> str:
    """Write the parameters training changed (the unfrozen ones) as float16 safetensors, atomically: the delta a
    saved network is read back from over its base model. Returns the file's sha256 (its config records it)."""
    import hashlib

    import torch
    from safetensors.torch import save

    path.parent.mkdir(parents=True, exist_ok=True)
    delta = {name: p.detach().cpu().to(torch.float16).contiguous() for name, p in network.named_parameters()
             if p.requires_grad}
    data = save(delta)
    write_bytes_atomic(path, data)
    return hashlib.sha256(data).hexdigest()
