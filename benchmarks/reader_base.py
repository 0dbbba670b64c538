"""Does a stronger base encoder make a better finding reader? Readers trained on the same data, compared on the
check part their own training wrote (``reader_report.json``: nothing is re-fitted here) and on reading speed.

Each folder is a reader saved by ``biodivergence reader train`` (the first, by default, the shipped one). The
table gives its base model and schedule as its config records them, the check-part scores of its report
(Evidence Inference three-way macro-F1 beside the TF-IDF floor, the stance accuracy per source, HealthVer
same-claim κ beside the negation rule) and its throughput: claims read per second on one torch thread, the first
``--claims`` Evidence Inference check findings, each asked its question (process CPU time, so other load on the
machine slows the wall clock, not the figure).

Writes ``benchmarks/results/reader_base.{json,md}``.

Run: ``python benchmarks/reader_base.py --reader builder/models/finding_reader --reader DIR …``
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from results_files import load_averages, machine_fields, write_results

from builder.goldparts import in_part
from builder.reader.model import CONFIG_FILE, REPORT_FILE, SHIPPED, WEIGHTS_FILE, load_reader
from builder.reader.reader_examples import ARM_PHRASING, ei_findings, source_path

RESULTS = ROOT / "benchmarks" / "results" / "reader_base"
DATA = ROOT.parent / "shared" / "data"


def claims_per_second(folder: Path, claims: list[tuple[str, str]]) -> float:
    """Claims the reader at ``folder`` reads per second of process CPU time on one torch thread."""
    import torch

    torch.set_num_threads(1)
    reader = load_reader(folder)
    start = time.process_time()
    reader.read(claims, batch_size=32)
    return len(claims) / (time.process_time() - start)


def row(folder: Path, claims: list[tuple[str, str]]) -> dict:
    config = json.loads((folder / CONFIG_FILE).read_text())
    report = json.loads((folder / REPORT_FILE).read_text())
    training, ei = config["training"], report["evidence_inference_findings"]
    hv = report["healthver_same_claim"]
    return {
        "reader": str(folder.relative_to(ROOT)) if folder.is_relative_to(ROOT) else folder.name,
        "base_model": Path(config["base_model"]).name, "frozen_layers": training.get("freeze_layers", 0),
        "epochs": training["epochs"], "learning_rate": training["learning_rate"], "steps": training["steps"],
        "train_seconds": training["seconds"], "examples": training["examples"], "part": report["part"],
        "continued_from": training.get("init"), "low_rank": training.get("low_rank"),
        "weights_mb": round((folder / WEIGHTS_FILE).stat().st_size / 2**20, 1),
        "ei_macro_f1": ei["reader"]["macro_f1"], "ei_n": ei["reader"]["n"], "ei_floor": ei["tfidf_floor"]["macro_f1"],
        "ei_as_annotated_macro_f1": ei["reader_as_annotated"]["macro_f1"],
        "stance": {source: {"accuracy": cell["stance_accuracy"], "n": cell["stance_n"]}
                   for source, cell in report["per_source"].items()},
        "healthver_kappa": hv["kappa"], "healthver_rule_kappa": hv["rule_kappa"], "healthver_pairs": hv["pairs"],
        "claims_per_second": round(claims_per_second(folder, claims), 1),
    }


def markdown(result: dict) -> str:
    sources = list(result["readers"][0]["stance"])
    lines = [
        "# Finding readers on different base encoders (check part)", "",
        (f"Scores from each reader's own report on the check part (nothing fitted there); speed on one torch thread, "
        f"{result['claims']} Evidence Inference check findings. Machine: {result['machine']}, "
        f"{result['machine_state']} at the start."), "",
        ("Epochs, steps and seconds are those of the reader's own run; a reader continued from another (`--init`) "
         "names it under 'after'. A low rank is that of `reader compact`; the weights are what ships."), "",
        "| reader | base | after | frozen layers | epochs | steps | train s | low rank | weights MB | EI macro-F1 (n) | "
        "as annotated | TF-IDF floor | " + " | ".join(f"{s} stance acc (n)" for s in sources)
        + " | HealthVer κ (rule) | claims/s |",
        "|---" * (14 + len(sources)) + "|",
    ]
    for r in result["readers"]:
        stance = " | ".join(f"{r['stance'][s]['accuracy']:.3f} ({r['stance'][s]['n']})" for s in sources)
        lines.append(f"| `{r['reader']}` | {r['base_model']} | {r['continued_from'] or '–'} | {r['frozen_layers']} | "
                     f"{r['epochs']} | {r['steps']} | {r['train_seconds']:.0f} | {r['low_rank'] or '–'} | "
                     f"{r['weights_mb']} | {r['ei_macro_f1']:.3f} ({r['ei_n']}) | "
                     f"{r['ei_as_annotated_macro_f1']:.3f} | {r['ei_floor']:.3f} | {stance} | "
                     f"{r['healthver_kappa']:.3f} ({r['healthver_rule_kappa']:.3f}) | {r['claims_per_second']} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reader", dest="readers", type=Path, action="append", default=None,
                        help="reader folder (repeat; default: the shipped reader)")
    parser.add_argument("--claims", type=int, default=200)
    parser.add_argument("--data-dir", type=Path, default=DATA)
    args = parser.parse_args(argv)
    before = load_averages()
    findings = [f for f in ei_findings(source_path("evidence_inference", args.data_dir))
                if in_part("evidence_inference", f.prompt.pmcid, "heldout")][: args.claims]
    claims = [(f.prompt.question(ARM_PHRASING), f.text) for f in findings]
    result = {"claims": len(claims), **machine_fields(before),
              "readers": [row(folder.resolve(), claims) for folder in (args.readers or [SHIPPED])]}
    write_results(RESULTS, result, markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
