"""Stage: the gold check of a build's annotators, into ``release/goldcheck.json`` (the card shows it).

The build's local annotators are scored on the expert-labelled gold sources under ``data_dir`` (out of fold, see
:mod:`builder.annotators.goldcheck`); a loud warning is printed for every source where an annotator does not beat the
negation rule. Configured by the build config's ``goldcheck:`` section; the build hands it the ``annotate`` and
``mine`` sections (which annotators, and whether mined pairs carry slot similarities).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from biodivergence_dataset.arguments import add_config_arguments, config_from_args
from biodivergence_dataset.io import write_json_atomic
from biodivergence_dataset.release import GOLDCHECK_FILE, STATE_DIR, state_dir

from .annotate_config import AnnotateConfig
from .mine import MineConfig
from .runtime import RuntimeConfig
from .stage import Opened, Stage, execute

STAGE = "goldcheck"


class GoldcheckConfig(BaseModel):
    """Gold agreement of the build's annotators (``biodivergence goldcheck``), run by every build."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(True, description="run the gold check in a build")
    data_dir: str = Field("../shared/data", description="folder holding the gold sources")
    sources: list[str] | None = Field(None, description="score only these sources (default: every source found)")
    bootstrap: int = Field(1000, ge=0, description="bootstrap resamples for the intervals")
    #: The annotators scored (the build's ``annotate`` section).
    annotate: AnnotateConfig = Field(default_factory=AnnotateConfig)
    #: The miner whose slot similarities gold pairs carry as mined pairs do (the build's ``mine`` section).
    mine: MineConfig = Field(default_factory=MineConfig)

    def scored_sources(self) -> list[str]:
        """The gold sources found under ``data_dir`` (none when disabled)."""
        from .goldsources import available_sources

        return available_sources(self.data_dir) if self.enabled else []


def open_stage(inputs: Any, release: Path, config: GoldcheckConfig) -> Opened:
    params = {"config": config.model_dump(exclude={"annotate", "mine"}),
              "annotator": [str(s) for s in config.annotate.specs],
              "slot_similarity": config.mine.slot_similarity and config.mine.model_dump(
                  include={"model", "device", "precision"})}
    return Opened(STAGE, config, [], release, params, state=state_dir(release, STAGE))


def data_files(config: GoldcheckConfig) -> list[Path]:
    """The gold sources' folders and the files the annotators read."""
    from .goldsources import GOLD_SOURCES

    folders = sorted({GOLD_SOURCES[s][0] for s in config.scored_sources()})
    return [Path(config.data_dir) / f for f in folders] + config.annotate.data_files()


def reader_reports(specs) -> dict[str, Any]:
    """The out-of-fold report of each finding reader a build's annotators use (shipped with its weights)."""
    from .reader.model import REPORT_FILE as READER_REPORT
    from .reader.model import reader_folder

    reports = {}
    for spec in (s for s in specs if s.backend == "reader"):
        path = reader_folder(spec.url or None) / READER_REPORT
        if path.is_file():
            reports[str(spec)] = json.loads(path.read_text(encoding="utf-8"))
    return reports


def work(opened: Opened, runtime: RuntimeConfig) -> dict[str, Any]:
    """Score the local annotators on the gold sources (out of fold) into ``release/goldcheck.json``; without gold
    sources (or disabled) the file is removed, so the card shows none."""
    from .annotators.goldcheck import goldcheck
    from .goldreport import PLAIN_WARNING, goldcheck_table, goldcheck_warnings

    config, release = opened.config, opened.out
    if not config.scored_sources():
        (release / GOLDCHECK_FILE).unlink(missing_ok=True)
        print(f"[goldcheck] skipped ({'disabled' if not config.enabled else f'no gold source under {config.data_dir}'})")
        return {"stage": STAGE, "scored": False}
    specs = config.annotate.specs
    local = [str(s) for s in specs if not s.is_llm]
    print(f"[goldcheck] {', '.join(local)} on {', '.join(config.sources or config.scored_sources())}", flush=True)
    from .embeddings import load_encoder

    miner = config.mine  # gold pairs as mined pairs: slot similarities only when the miner adds them
    encoder = load_encoder(miner.model, miner.device, miner.precision) if miner.slot_similarity else None
    result = goldcheck(local, Path(config.data_dir), config.sources, config.bootstrap, encoder=encoder, parts=True)
    result["not_scored"] = [str(s) for s in specs if s.is_llm]
    result["readers"] = reader_reports(specs)
    write_json_atomic(release / GOLDCHECK_FILE, result)
    print(goldcheck_table(result), flush=True)
    for line in goldcheck_warnings(result, PLAIN_WARNING):
        print(line, file=sys.stderr, flush=True)
    return {"stage": STAGE, "scored": True}


stage = Stage(STAGE, GoldcheckConfig, open_stage, work, reads=(), writes="release", state=f"{STATE_DIR}/{STAGE}",
              module=__name__, data_files=data_files)


def run_stage(inputs: Any, release: str | Path, config: GoldcheckConfig | None = None,
              runtime: RuntimeConfig | None = None) -> dict[str, Any]:
    """Score the annotators on the gold sources into ``release``; resumable (redone when the annotators, the gold
    data or the code change)."""
    return execute(stage, inputs, release, config, runtime)


# ---------------------------------------------------------------------------------------------
# `biodivergence goldcheck`: the same check of the annotators named on the command line


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from .goldsources import GOLD_SOURCES

    parser.add_argument("--annotator", action="append", dest="annotators",
                        help="reader[:PATH] | frames | heuristic | judge:PATH (repeat for a panel; default: reader)")
    add_config_arguments(parser, GoldcheckConfig, skip=("enabled",), aliases={"sources": "--source"},
                         options={"sources": {"choices": sorted(GOLD_SOURCES)}})
    parser.add_argument("--json", dest="json_out", default=None, help="also write the result to this JSON file")
    parser.add_argument("--encoder", default=None,
                        help="sentence encoder for the slot similarities (default: the miner's, all-MiniLM-L6-v2)")
    parser.add_argument("--no-slot-similarity", action="store_true",
                        help="compare frames by their words only (no encoder is loaded)")
    parser.add_argument("--no-parts", action="store_true",
                        help="skip the development / check table (each member then reads only the pairs it is scored on)")
    parser.add_argument("--reader", nargs="?", const="shipped", default=None,
                        help="also score the finding reader (a folder or Hub id; no value: the shipped one) on the "
                             "Evidence Inference findings and HealthVer same-claim pairs, held-out items only")


def run(args: argparse.Namespace) -> int:
    from .annotators import DEFAULT_ANNOTATOR
    from .annotators.goldcheck import goldcheck, reader_sets
    from .embeddings import DEFAULT_MODEL, load_encoder
    from .goldreport import PLAIN_WARNING, goldcheck_table, goldcheck_warnings

    encoder = None if args.no_slot_similarity else load_encoder(args.encoder or DEFAULT_MODEL)
    config = config_from_args(GoldcheckConfig, args)
    result = goldcheck(args.annotators or [DEFAULT_ANNOTATOR], config.data_dir, config.sources, config.bootstrap,
                       encoder=encoder, parts=not args.no_parts)
    print(goldcheck_table(result))  # with the development / check table when the parts were scored
    if args.reader:
        from .reader.out_of_fold import render_sets

        result["reader"] = reader_sets(None if args.reader == "shipped" else args.reader, config.data_dir)
        print(render_sets(result["reader"]))
    for line in goldcheck_warnings(result, PLAIN_WARNING):
        print(line, file=sys.stderr)
    if args.json_out:
        write_json_atomic(Path(args.json_out), result)
    return 0
