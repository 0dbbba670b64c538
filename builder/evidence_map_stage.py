"""Stage: the release's evidence maps (``evidence_map/`` in the release), after the audit, before the card.

It reads what the build already has: the declared questions and their assignments (the questions stage's folder,
``questions_dir``), the assigned claims (the claims folder that stage read), and the released pairs (every config of
the release). Each assigned claim is read relative to its question by the reader annotator, as it reads a claim of a
pair with that question (``ReaderAnnotator.read_against``: the claim asked in its own arm names, the finding oriented
to the question's intervention), with the conditions it states (``reader_annotator.conditions``, the question's
words excluded); :func:`builder.evidence_map.evidence_maps` makes the maps, and
``biodivergence_dataset.evidence_maps.write_maps`` writes them with a table and a plot each. The build runs it when
it has a question pack (the wiring sets ``questions_dir``); the release stage's card then links the maps.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from biodivergence_dataset import io, ontology
from biodivergence_dataset.evidence_maps import write_maps
from biodivergence_dataset.records import Claim, MapCondition, Question
from biodivergence_dataset.release import STATE_DIR, config_names, iter_examples, split_names, state_dir

from .evidence_map import ReadClaim, evidence_maps
from .evidence_map_plot import draw_map
from .questions import read_assignments
from .questions.lexicon import LEXICON, load_lexicon
from .runtime import check_stage_input
from .stage import Opened, Stage, execute

if TYPE_CHECKING:
    from .runtime import RuntimeConfig

STAGE = "evidence_map"


class EvidenceMapConfig(BaseModel):
    """Where the questions are and how claims are read (the build wires the questions section's folder, lexicon
    and domain packs, and the annotate section's reader)."""

    model_config = ConfigDict(extra="forbid")

    #: A finished questions stage folder (its questions, assignments and the claims folder it read).
    questions_dir: str | None = None
    #: The finding reader's folder or Hub id (None: the one shipped with the package).
    reader: str | None = None
    lexicon: str = str(LEXICON)
    domain_packs: list[str] = []
    plots: bool = True
    dpi: int = Field(110, ge=1)


def data_files(config: EvidenceMapConfig) -> list[Path]:
    """The reader's folder and the lexicon with its domain packs (what a claim is read with)."""
    from .reader.model import reader_folder

    return [reader_folder(config.reader), *(Path(p) for p in (config.lexicon, *config.domain_packs))]


def released_shards(release_dir: Path) -> list[Path]:
    return [p for c in config_names(release_dir) for p in sorted((release_dir / c).glob("*.parquet"))]


def open_stage(release_dir: str | Path, out_dir: Path, config: EvidenceMapConfig) -> Opened:
    if not config.questions_dir:
        raise ValueError("the evidence-map stage needs a questions stage folder (questions_dir)")
    questions_dir = check_stage_input(config.questions_dir, "questions")
    inputs = io.read_manifest(questions_dir).get("inputs", [])
    if not inputs:
        raise ValueError(f"{questions_dir}: its manifest names no claims folder")
    claims_dir = check_stage_input(inputs[0], "claims")
    release_dir = Path(release_dir)
    params = {**config.model_dump(), "questions": io.done_fingerprint(questions_dir),
              "claims": io.done_fingerprint(claims_dir),
              "release": io.content_fingerprint(release_dir, released_shards(release_dir))}
    return Opened(STAGE, config, [str(release_dir)], out_dir, params, state=state_dir(out_dir, STAGE),
                  extra={"questions_dir": questions_dir, "claims_dir": claims_dir})


def assigned_claims(claims_dir: Path, wanted: set[str]) -> dict[str, Claim]:
    """The claims of ``claims_dir`` whose ids are in ``wanted``."""
    return {c.claim_id: c for c in io.read_records(claims_dir, Claim) if c.claim_id in wanted}


def read_claims(questions: dict[str, Question], by_claim: dict[str, dict[str, float]], claims: dict[str, Claim],
                annotator) -> list[ReadClaim]:
    """Every assigned claim read relative to each question it is assigned to (one batch), with the conditions it
    states (what the question asks about, its placebo arm included, is no condition: as the annotator reads a
    pair)."""
    from .annotators.reader_annotator import conditions, question_words, with_inactive_arm

    assigned = [(qid, claims[cid]) for cid, scores in by_claim.items() for qid in scores
                if cid in claims and qid in questions]
    readings = annotator.read_against([(questions[qid], c.sentence) for qid, c in assigned])
    asked = {qid: with_inactive_arm(question_words(q), annotator.compiled(q)) for qid, q in questions.items()}
    return [ReadClaim(qid, c, r.finding, r.significance, float(r.confidence),
                      tuple(MapCondition(axis=x.axis, text=x.span.text) for x in conditions(c, asked[qid])))
            for (qid, c), r in zip(assigned, readings, strict=True)]


def released_rows(release_dir: Path):
    """``(split, row)`` of every released row; the split is "" for a row of a config other than the default one."""
    for config in config_names(release_dir):
        for split in split_names(release_dir, config):
            for row in iter_examples(release_dir, config, split):
                yield (split if config == ontology.DEFAULT_CONFIG else ""), row


def work(opened: Opened, runtime: RuntimeConfig) -> io.StageStats:
    """Read the claims, make the maps, write them into the release (a global step: ``runtime`` is not used)."""
    from .annotators.reader_annotator import ReaderAnnotator

    config = opened.config
    questions, by_claim = read_assignments(opened.extra["questions_dir"])
    claims = assigned_claims(opened.extra["claims_dir"], set(by_claim))
    annotator = ReaderAnnotator(config.reader, lexicon=load_lexicon(config.lexicon, tuple(config.domain_packs)))
    read = read_claims(questions, by_claim, claims, annotator)
    stats = io.StageStats(STAGE, unit="questions")
    maps = list(evidence_maps(questions, read, released_rows(Path(opened.inputs[0])), stats))
    draw = (lambda m, path: draw_map(m, path, config.dpi)) if config.plots else None
    write_maps(opened.out, maps, draw)
    stats.figures["claims_read"] = len(read)
    return stats


stage = Stage(STAGE, EvidenceMapConfig, open_stage, work, reads=("release",), writes="release",
              state=f"{STATE_DIR}/{STAGE}", needs="questions_dir", module=__name__, data_files=data_files)


def run_stage(release_dir: str | Path, config: EvidenceMapConfig, runtime: RuntimeConfig | None = None
              ) -> dict[str, Any]:
    """Write the evidence maps of the release in ``release_dir`` (resumable); returns the stage's stats."""
    return execute(stage, release_dir, release_dir, config, runtime)
