"""Low-rank deltas: a saved reader's fine-tuned encoder matrices kept as two thin factors of their change from the
base model, so a reader trained on a large base (all-mpnet-base-v2: 85 MB of changed layers) ships in megabytes.

A matrix ``W`` fine-tuned from ``W0`` is stored as ``U`` (m × r) and ``V`` (r × n), ``U @ V`` the best rank-r
approximation of ``W − W0`` (truncated SVD); biases, norms, heads and any matrix the factors would not shrink stay
whole. peft's LoRA trains such factors from the start; it has no function that cuts them from a delta trained whole,
so this module does it with ``torch.linalg.svd``. What the cut costs is measured by scoring the compacted reader
(``biodivergence reader evaluate``), not assumed.
"""

from __future__ import annotations

import json
from pathlib import Path

#: The suffixes of a factored matrix's two factors in a weights file: ``name + UP`` @ ``name + DOWN`` is its change.
UP, DOWN = ".low_rank_up", ".low_rank_down"
#: Only the encoder's matrices have a base to differ from; the heads are new and stay whole.
ENCODER_PREFIX = "encoder."


def low_rank_delta(trained: dict, base: dict, rank: int) -> dict:
    """``trained`` (name → tensor) with every encoder matrix that a rank-``rank`` factor pair stores in fewer numbers
    replaced by the two factors of its change from ``base`` (float16, like the rest of a weights file)."""
    import torch

    if rank < 1:
        raise ValueError(f"rank must be at least 1, not {rank}")
    out = {}
    for name, tensor in trained.items():
        start = base.get(name)
        if (not name.startswith(ENCODER_PREFIX) or start is None or tensor.dim() != 2
                or rank * sum(tensor.shape) >= tensor.numel()):
            out[name] = tensor.to(torch.float16).contiguous()
            continue
        u, s, vh = torch.linalg.svd(tensor.float() - start.float(), full_matrices=False)
        out[name + UP] = (u[:, :rank] * s[:rank]).to(torch.float16).contiguous()
        out[name + DOWN] = vh[:rank].to(torch.float16).contiguous()
    return out


def expand_delta(stored: dict, base: dict) -> dict:
    """The tensors a weights file stands for: each factor pair of ``stored`` turned back into its matrix over
    ``base`` (the freshly built network's state), the rest as stored, all float32."""
    out = {name: t.float() for name, t in stored.items() if not name.endswith((UP, DOWN))}
    for name in (n.removesuffix(UP) for n in stored if n.endswith(UP)):
        if name + DOWN not in stored or name not in base:
            raise ValueError(f"factor pair of {name!r} is incomplete or has no base matrix")
        out[name] = base[name].float() + stored[name + UP].float() @ stored[name + DOWN].float()
    return out


def saved_tensors(path: Path, network) -> dict:
    """The tensors of the weights file at ``path`` over ``network``'s own (its base), whole or factored: what a
    network continuing from a saved reader loads."""
    from safetensors.torch import load_file

    return expand_delta(load_file(str(path)), network.state_dict())


def compact_reader(folder: str | Path, out: str | Path, rank: int, config_file: str, weights_file: str,
                   base: dict) -> Path:
    """Write the reader (or answerer) at ``folder`` to ``out`` with its weights as a rank-``rank`` delta over
    ``base`` (the state of its base network, ``build_network(base_model, {})``); its config records the rank and the
    new file's sha256. A check-part report of the whole reader is not copied: the compacted one is scored afresh."""
    import hashlib

    from safetensors.torch import load_file, save

    from biodivergence_dataset.io import staging_folder, swap_folder, write_bytes_atomic

    folder, out = Path(folder), Path(out)
    config = json.loads((folder / config_file).read_text(encoding="utf-8"))
    trained = load_file(str(folder / weights_file))
    expanded = expand_delta(trained, base)  # a reader compacted before is cut again from its whole matrices
    data = save(low_rank_delta(expanded, base, rank))
    staging = staging_folder(out)
    write_bytes_atomic(staging / weights_file, data)
    config["weights_sha256"] = hashlib.sha256(data).hexdigest()
    config.setdefault("training", {})["low_rank"] = rank
    (staging / config_file).write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    return swap_folder(staging, out)
