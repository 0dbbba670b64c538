"""One stage type: execute() skips a current stage and re-runs a changed one; a stage's fingerprint covers its config,
its code (the modules it imports, without docstrings) and the data files it reads, and nothing else."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from pydantic import BaseModel

from biodivergence_dataset import io
from builder.stage import Opened, Stage, execute

REPO = Path(__file__).resolve().parents[2]


class CountConfig(BaseModel):
    word: str = "a"
    lexicon: str = ""


def _open(inputs, out: Path, config: CountConfig) -> Opened:
    return Opened("count", config, [], out, {"config": config.model_dump()})


def _work(opened: Opened, runtime) -> io.StageStats:
    runs = opened.out / "runs.txt"
    runs.write_text(runs.read_text() + opened.config.word if runs.exists() else opened.config.word)
    return io.StageStats("count", seen=1, kept=1)


COUNT = Stage("count", CountConfig, _open, _work, reads=(), writes="count", module="builder.stage",
              data_files=lambda c: [Path(c.lexicon)] if c.lexicon else [])


def test_execute_skips_a_current_stage_and_reruns_a_changed_or_unfinished_one(tmp_path):
    out, lexicon = tmp_path / "count", tmp_path / "lexicon.yaml"
    lexicon.write_text("words: [a]\n")
    config = {"word": "a", "lexicon": str(lexicon)}
    assert execute(COUNT, None, out, config)["kept"] == 1
    execute(COUNT, None, out, CountConfig(**config))
    assert (out / "runs.txt").read_text() == "a"  # current: skipped
    manifest = io.read_manifest(out)
    assert manifest["stage"] == "count" and {"config", "code", "data"} <= set(manifest["params"])
    execute(COUNT, None, out, {**config, "word": "b"})
    assert (out / "runs.txt").read_text() == "ab"  # another config
    lexicon.write_text("words: [a, b]\n")
    execute(COUNT, None, out, {**config, "word": "b"})
    assert (out / "runs.txt").read_text() == "abb"  # another data file
    (out / io.SUCCESS_MARKER).unlink()  # a killed run
    execute(COUNT, None, out, {**config, "word": "b"})
    assert (out / "runs.txt").read_text() == "abbb" and io.is_done(out)


#: Prints, for each build step on the demo config, the fingerprint of its code and of its data files.
_FINGERPRINTS = """
import json
from pathlib import Path
from builder import build
from builder.fingerprint import code_fingerprint, files_fingerprint
config = build.load_config("builder/configs/demo.yaml")
print(json.dumps({s.name: [code_fingerprint(s.module),
                           files_fingerprint(s.data_files(s.make_config(s.config_section(config, Path("w")))))]
                  for s in build.STEPS}))
"""


def _fingerprints(root: Path) -> dict[str, list[str]]:
    env = {**os.environ, "PYTHONPATH": str(root), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", _FINGERPRINTS], cwd=root, env=env, capture_output=True, text=True,
                          check=True)
    return json.loads(done.stdout.splitlines()[-1])


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_a_stage_reruns_for_the_code_it_imports_and_the_data_it_reads_only(tmp_path):
    """In a copy of the packages: a docstring edit of the Hub module (which no stage imports) or of a stage's own
    module changes no fingerprint; a code edit of gather changes gather's only among the stages that do not import
    it; a lexicon edit changes the data of the stages that read the lexicon (gather, questions, the reader annotator,
    the evidence maps' reader and the gold check) and no other."""
    packages = [p for p in ("biodivergence_dataset", "biodivergence_text", "builder") if (REPO / p).is_dir()]
    for package in packages:
        shutil.copytree(REPO / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__", "models"))
    (tmp_path / "builder" / "models").symlink_to(REPO / "builder" / "models")
    before = _fingerprints(tmp_path)
    assert set(before) == {"ingest", "gather", "claims", "questions", "mine", "annotate", "split", "audit",
                           "evidence_map", "goldcheck", "release"}

    _edit(tmp_path / "biodivergence_dataset" / "hub.py", '"""', '"""Edited: ')
    _edit(tmp_path / "builder" / "mine.py", '"""', '"""Edited: ')
    assert _fingerprints(tmp_path) == before

    _edit(tmp_path / "builder" / "gather.py", "\nSTAGE = ", "\nEDITED = 1\nSTAGE = ")
    code = {name: prints[0] != before[name][0] for name, prints in _fingerprints(tmp_path).items()}
    assert code["gather"] and not code["ingest"] and not code["claims"] and not code["split"]

    before = _fingerprints(tmp_path)
    with (tmp_path / "builder" / "lexicons" / "clinical.yaml").open("a", encoding="utf-8") as fh:
        fh.write("\n# edited\n")
    data = {name: prints[1] != before[name][1] for name, prints in _fingerprints(tmp_path).items()}
    assert data == {"ingest": False, "gather": True, "claims": False, "questions": True, "mine": False,
                    "annotate": True, "split": False, "audit": False, "evidence_map": True, "goldcheck": True,
                    "release": False}
