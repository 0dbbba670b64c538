"""Faster CPU embeddings for pair mining (issue 13): float32 vs bfloat16, eager or compiled, vs ONNX Runtime
vs dynamic int8.

Claim sentences of the shared corpus (its claims stage, built as ``benchmarks/claims.py`` does; distinct
sentences, the first ``--sentences`` in article order) are embedded by all-MiniLM-L6-v2 in each variant:
float32 (the default), bfloat16 weights (``load_encoder(precision="bfloat16")``), each of these with its
transformer compiled by ``torch.compile`` (inductor, weights frozen, dynamic shapes), the same float32 model
exported with ``torch.onnx.export`` and run by ONNX Runtime (``onnx``; sentence-transformers' own ONNX
backend needs optimum, which pins transformers < 5), and torch dynamic int8 quantisation of every Linear
layer, per tensor and per output channel (``quantize_dynamic``).
Speed: sentences per second, the best of ``--rounds`` rounds, the variants interleaved within a round so
a change in machine load hits them alike. Agreement with float32: the cosine between a sentence's two
vectors (mean and minimum) and the overlap of its top-10 neighbours among other articles' sentences
(``mine.nearest_neighbours``, exact), as the mine stage searches them.

Run: ``python benchmarks/embeddings.py [--sentences 3000 --rounds 2]`` (writes
benchmarks/results/embeddings.json and embeddings.md; a few minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "embeddings"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import claims as claims_bench
from results_files import load_averages, machine_fields, write_results

from biodivergence_dataset import io
from biodivergence_dataset.records import Claim
from builder import claims, embeddings, mine

K = 10
#: An option is worth offering at this speed-up over float32 with this top-10 overlap (issue 13).
MIN_SPEEDUP, MIN_OVERLAP = 1.5, 0.9


def claim_sentences(n: int) -> tuple[list[str], np.ndarray]:
    """The first ``n`` distinct claim sentences of the shared corpus in article order, and their article groups."""
    claims.run_stage(claims_bench.shared_corpus(), claims_bench.WORK / "claims")
    found = sorted(io.read_records(claims_bench.WORK / "claims", Claim), key=lambda c: c.article_uid)
    first = {}
    for c in found:
        first.setdefault(c.sentence, c.article_uid)
    sentences = list(first)[:n]
    return sentences, np.unique([first[s] for s in sentences], return_inverse=True)[1]


def int8(per_channel: bool) -> Callable[[], Any]:
    """A builder of the default encoder with every Linear layer dynamically quantised to int8."""
    def build():
        import torch
        from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic

        spec = {torch.nn.Linear: per_channel_dynamic_qconfig} if per_channel else {torch.nn.Linear}
        return quantize_dynamic(embeddings.load_encoder(), spec, dtype=torch.qint8)
    return build


def compiled(precision: str) -> Callable[[], Any]:
    """A builder of a fresh default encoder in ``precision`` whose transformer is compiled by ``torch.compile``
    on its first call (a fresh one: the cached encoders of ``load_encoder`` stay eager)."""
    def build():
        import torch
        from sentence_transformers import SentenceTransformer

        encoder = SentenceTransformer(embeddings.resolve_model(embeddings.DEFAULT_MODEL), device="cpu")
        encoder = encoder.to(getattr(torch, precision))
        encoder[0].model = torch.compile(encoder[0].model, dynamic=True, options={"freezing": True})
        return encoder
    return build


class OnnxEncoder:
    """The default encoder's transformer and mean pooling as one ONNX graph, run by ONNX Runtime (float32).

    Only what ``embeddings.embed_texts`` calls: ``encode`` (batched longest text first, as
    sentence-transformers does) and the dimension; no torch parameters, so its precision reads float32."""

    def __init__(self):
        import tempfile

        import onnxruntime as ort
        import torch

        self.model = embeddings.load_encoder()
        transformer = self.model[0].auto_model
        names = ["input_ids", "attention_mask", "token_type_ids"]

        class MeanPooled(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.transformer = transformer

            def forward(self, *inputs):
                kwargs = dict(zip(names, inputs, strict=True))
                hidden = self.transformer(**kwargs).last_hidden_state
                mask = kwargs["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)

        sample = self.model.preprocess(["an example sentence to trace", "another"])
        graph = Path(tempfile.mkdtemp()) / "minilm.onnx"
        with torch.no_grad():
            torch.onnx.export(MeanPooled().eval(), tuple(sample[n] for n in names), str(graph), input_names=names,
                              output_names=["embedding"], opset_version=17, dynamo=False,
                              dynamic_axes={n: {0: "batch", 1: "tokens"} for n in names} | {"embedding": {0: "batch"}})
        options = ort.SessionOptions()
        options.intra_op_num_threads = torch.get_num_threads()
        self.session = ort.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])

    def parameters(self):
        return iter(())

    def get_embedding_dimension(self) -> int:
        return self.model.get_embedding_dimension()

    def encode(self, sentences: list[str], batch_size: int = 32, **_: Any) -> np.ndarray:
        order = np.argsort([-len(s) for s in sentences])
        out = np.empty((len(sentences), self.get_embedding_dimension()), dtype=np.float32)
        for start in range(0, len(sentences), batch_size):
            rows = order[start:start + batch_size]
            features = self.model.preprocess([sentences[i] for i in rows])
            out[rows] = self.session.run(None, {i.name: features[i.name].numpy() for i in self.session.get_inputs()})[0]
        return out / np.linalg.norm(out, axis=1, keepdims=True)


VARIANTS: dict[str, Callable[[], Any]] = {
    "float32": embeddings.load_encoder,
    "bfloat16": lambda: embeddings.load_encoder(precision="bfloat16"),
    "float32-compiled": compiled("float32"),
    "bfloat16-compiled": compiled("bfloat16"),
    "onnx": OnnxEncoder,
    "int8_per_tensor": int8(per_channel=False),
    "int8_per_channel": int8(per_channel=True),
}


def encode(encoder: Any, sentences: list[str]) -> tuple[np.ndarray, float]:
    """Unit-length float32 vectors of ``sentences`` (no cache) and the seconds it took."""
    start = time.perf_counter()
    vectors = embeddings.embed_texts(sentences, encoder)
    return vectors, time.perf_counter() - start


def agreement(reference: np.ndarray, vectors: np.ndarray, groups: np.ndarray) -> dict:
    """Cosine of each sentence's two vectors and the overlap of its top-10 other-article neighbours."""
    cosine = (reference * vectors).sum(axis=1)
    ref_nn, _ = mine.nearest_neighbours(reference, groups, K, exact_max_rows=len(reference))
    nn, _ = mine.nearest_neighbours(vectors, groups, K, exact_max_rows=len(vectors))
    overlap = [len(set(a) & set(b)) / len(a) for a, b in zip(ref_nn.tolist(), nn.tolist(), strict=True)]
    return {"mean_cosine": round(float(cosine.mean()), 4), "min_cosine": round(float(cosine.min()), 4),
            "top10_overlap": round(float(np.mean(overlap)), 4)}


def machine() -> dict:
    """The machine (``results_files.machine_fields``) and what decides these figures beside it: the torch version
    and threads, the CPU's native bfloat16 instructions, the load now."""
    import torch

    flags = set(Path("/proc/cpuinfo").read_text().split()) if Path("/proc/cpuinfo").exists() else set()
    load = load_averages()
    return {"python": platform.python_version(), "torch": torch.__version__, **machine_fields(load),
            "torch_threads": torch.get_num_threads(), "native_bf16": sorted(flags & {"avx512_bf16", "amx_bf16"}),
            "load_average_1min": load[0]}


def main(n: int, rounds: int) -> dict:
    sentences, groups = claim_sentences(n)
    encoders = {name: build() for name, build in VARIANTS.items()}
    for encoder in encoders.values():
        encode(encoder, sentences[:64])  # warm up
    state_before = machine()
    best: dict[str, float] = {}
    vectors: dict[str, np.ndarray] = {}
    for r in range(rounds):
        order = list(encoders) if r % 2 == 0 else list(reversed(encoders))
        for name in order:
            vectors[name], seconds = encode(encoders[name], sentences)
            best[name] = min(best.get(name, seconds), seconds)
    reference = vectors["float32"]
    variants = {}
    for name in encoders:
        speed = len(sentences) / best[name]
        variants[name] = {"sentences_per_second": round(speed, 1),
                          "speedup": round(speed * best["float32"] / len(sentences), 2),
                          **agreement(reference, vectors[name], groups)}
        variants[name]["worth_offering"] = (variants[name]["speedup"] >= MIN_SPEEDUP
                                            and variants[name]["top10_overlap"] >= MIN_OVERLAP)
    result = {"sentences": len(sentences), "articles": int(groups.max()) + 1, "rounds": rounds,
              "machine_before": state_before, "load_average_1min_after": load_averages()[0],
              "bar": {"min_speedup": MIN_SPEEDUP, "min_top10_overlap": MIN_OVERLAP}, "variants": variants}
    write_results(RESULTS, result, render(result))
    return result


def render(result: dict) -> str:
    m = result["machine_before"]
    lines = ["# CPU embedding variants (benchmarks/embeddings.py)", "",
             (f"{result['sentences']} distinct claim sentences of the shared corpus ({result['articles']} articles), "
              f"all-MiniLM-L6-v2, batch 64, best of {result['rounds']} interleaved rounds; {m['machine']} "
              f"(native bf16: {', '.join(m['native_bf16']) or 'none'}), torch {m['torch']} with "
              f"{m['torch_threads']} threads; {m['machine_state']} before the rounds, load average "
              f"{m['load_average_1min']} before, {result['load_average_1min_after']} after."), "",
             "| variant | sentences/s | speed-up | mean cosine | min cosine | top-10 overlap | worth offering |",
             "|---|---|---|---|---|---|---|"]
    for name, v in result["variants"].items():
        lines.append(f"| {name} | {v['sentences_per_second']} | {v['speedup']} | {v['mean_cosine']} | "
                     f"{v['min_cosine']} | {v['top10_overlap']} | {'yes' if v['worth_offering'] else 'no'} |")
    lines += ["", (f"Worth offering: ≥ {result['bar']['min_speedup']}× float32's speed with top-10 neighbour "
                   f"overlap ≥ {result['bar']['min_top10_overlap']} (neighbours among other articles' sentences, "
                   "exact search, as the mine stage). bfloat16 is fast only on CPUs with native bf16 "
                   "instructions; elsewhere it is emulated. -compiled: the transformer compiled by "
                   "torch.compile (inductor, frozen weights; the compile, 20-30 s, not counted): not offered, "
                   "as it was no faster than the same precision uncompiled (bfloat16: 0.92x here, and 0.94-1.04x "
                   "in separate processes). onnx: the float32 model exported with "
                   "torch.onnx.export and run by ONNX Runtime (sentence-transformers' ONNX backend needs optimum, "
                   "which pins transformers < 5): the same neighbours, too little faster on these claim sentences "
                   "to be offered."), ""]
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    main(args.sentences, args.rounds)
