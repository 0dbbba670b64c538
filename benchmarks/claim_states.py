"""How far a release's conflict-or-not labels are a function of one state per claim (why the reference model
reads claims apart, ``trainer.modeling`` finding states).

For each split of ``primary``, every (question, claim) gets a free distribution over K states (no text at all)
and the pair's probability of a conflict is ``trainer.modeling.findings_differ`` of its two claims' states, the
very composition the reference model uses; the states are fitted by Adam on the split's own pair labels
(any conflict vs ``no_conflict``, class-weighted) and the fit is read back at the best threshold. An F1 of 1.0
says some assignment of claim states reproduces every pair label: a pair's label needs nothing beyond what
each claim says on its question. It is an in-sample fit of the labels' structure, not a model score.

Writes ``benchmarks/results/claim_states.{json,md}``.

Run: ``python benchmarks/claim_states.py --release build/demo/release``
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch
from sklearn.metrics import f1_score

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from results_files import load_averages, machine_fields, write_results

from biodivergence_dataset import ontology
from trainer.data import load_splits
from trainer.modeling import findings_differ

RESULTS = ROOT / "benchmarks" / "results" / "claim_states"
THRESHOLDS = np.linspace(0.05, 0.95, 19)


def fit_claim_states(pairs: list[tuple[int, int]], labels: np.ndarray, n_claims: int, states: int, seed: int,
                     steps: int) -> np.ndarray:
    """P(conflict) of each pair after fitting one free state distribution per claim to ``labels`` (0/1)."""
    torch.manual_seed(seed)
    logits = torch.nn.Parameter(torch.randn(n_claims, states) * 0.1)
    a, b = (torch.tensor(side) for side in zip(*pairs, strict=True))
    y = torch.tensor(labels, dtype=torch.float32)
    weight = torch.where(y > 0, (1 - y.mean()) / y.mean().clamp(min=1e-6), torch.tensor(1.0))
    optimiser = torch.optim.Adam([logits], lr=0.1)
    for _ in range(steps):
        probs = logits.softmax(-1)
        p = findings_differ(probs[a], probs[b]).clamp(1e-6, 1 - 1e-6)
        loss = (torch.nn.functional.binary_cross_entropy(p, y, reduction="none") * weight).mean()
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    with torch.no_grad():
        probs = logits.softmax(-1)
        return findings_differ(probs[a], probs[b]).numpy()


def measure_split(rows, states: int, seed: int, steps: int) -> dict:
    """The fit of one split: pairs, claims, conflicts and the best any-conflict F1 of the fitted states."""
    names = ontology.CONFLICT_TYPE_NAMES
    claims: dict[tuple[str, str], int] = {}
    pairs = [(claims.setdefault((r["question_id"] or "", r["claim_a_id"]), len(claims)),
              claims.setdefault((r["question_id"] or "", r["claim_b_id"]), len(claims))) for r in rows]
    labels = np.array([names[r["conflict_type"]] != ontology.NO_CONFLICT for r in rows], dtype=int)
    if not labels.any():
        return {"pairs": len(rows), "claims": len(claims), "conflicts": 0, "fit_f1": None, "threshold": None}
    p = fit_claim_states(pairs, labels, len(claims), states, seed, steps)
    f1, threshold = max((f1_score(labels, p >= t), float(t)) for t in THRESHOLDS)
    return {"pairs": len(rows), "claims": len(claims), "conflicts": int(labels.sum()), "fit_f1": round(float(f1), 4),
            "threshold": round(threshold, 2)}


def markdown(result: dict) -> str:
    lines = ["# Conflict labels as a function of one state per claim", "",
             (f"- release: {result['release']} (primary); {result['states']} free states per (question, claim), "
              f"{result['steps']} Adam steps, seed {result['seed']}; {result['machine']}, {result['machine_state']}, "
              f"{result['seconds']:.1f} s"),
             "- written by `python benchmarks/claim_states.py`: an in-sample fit of the labels' structure, no text",
             "", "| split | pairs | (question, claim)s | conflicts | best any-conflict F1 of the fit | threshold |",
             "|---|---|---|---|---|---|"]
    for split, s in result["splits"].items():
        f1 = "–" if s["fit_f1"] is None else f"{s['fit_f1']:.4f}"
        lines.append(f"| {split} | {s['pairs']} | {s['claims']} | {s['conflicts']} | {f1} | {s['threshold']} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", default="build/demo/release")
    parser.add_argument("--states", type=int, default=3)
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    before, start = load_averages(), time.perf_counter()
    splits = load_splits(args.release, ontology.DEFAULT_CONFIG)
    result = {"release": str(args.release), "states": args.states, "steps": args.steps, "seed": args.seed,
              "splits": {name: measure_split(list(rows), args.states, args.seed, args.steps)
                         for name, rows in splits.items()},
              "seconds": time.perf_counter() - start, **machine_fields(before)}
    write_results(RESULTS, result, markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
