"""One process of a two-process (torchrun) run of the finding-state stage on written findings, for
tests/trainer/test_finding_states.py: ``python -m torch.distributed.run --nproc_per_node 2 THIS ENCODER CACHE OUT``.
Each process writes the folder the stage returned it to ``OUT/rank-N.json`` (printed, the processes' lines
could interleave)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from biodivergence_dataset import ontology
from builder.reader.reader_examples import ReaderExample
from trainer import finding_states as fs

INCREASE, DECREASE, NO_DIFFERENCE, NOT_REPORTED = ontology.READER_FINDINGS
QUESTION = "Does hydrocortisone change shock reversal compared with placebo in septic shock?"
#: Findings written for this run, one of each state.
FINDINGS = [ReaderExample(QUESTION, text, finding, None, "written", str(i)) for i, (text, finding) in enumerate([
    ("Shock reversal was faster with hydrocortisone than with placebo.", INCREASE),
    ("Shock reversal was slower with hydrocortisone than with placebo.", DECREASE),
    ("Shock reversal did not differ between hydrocortisone and placebo.", NO_DIFFERENCE),
    ("Patients were enrolled in 52 intensive care units.", NOT_REPORTED),
])]

if __name__ == "__main__":
    encoder, cache, out = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    fs.finding_examples = lambda data_dir: FINDINGS * 4
    settings = fs.FindingStageSettings(epochs=1, batch_size=4, max_length=64)
    folder = fs.pretrained_finding_states(encoder, "unused", settings, cache=cache,
                                          processes={"use_cpu": True, "ddp_backend": "gloo"})
    (out / f"rank-{os.environ['RANK']}.json").write_text(json.dumps({"folder": str(folder)}), encoding="utf-8")
