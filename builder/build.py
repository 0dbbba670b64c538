"""The main job: ``biodivergence build --config-file FILE --out DIR`` runs the whole pipeline.

ingest → [gather] → claims → [questions] → mine → annotate → split → audit → [evidence_map] → goldcheck → release:
:data:`STEPS`, a list of :class:`~builder.stage.Stage` objects, each run by :func:`~builder.stage.execute` (gather,
questions and the evidence maps run when the config names a question pack: ``questions: {pack: FILE}``; the gold check of the annotators runs before the
release, whose card shows it), so a re-run after success does nothing and a re-run after a kill continues where it
stopped. The
work directory holds one folder per stage (``abstracts/``, ``claims/``, ``pairs/``, ``annotations/``)
and the release (``release/``); ``build_report.md`` summarises every stage's stats. The build ends by
loading both configs with ``load_dataset``, validating the release and printing the split sizes and
the leakage audit; it fails when ``primary`` leaks or the release does not validate.

The config file is YAML with one section per stage whose keys go to that stage's config model
(relative paths are relative to the working directory, normally the repository root)::

    sources: ["pubmedqa:../shared/data/pubmedqa_pqal/ori_pqal.json", …]  # as `biodivergence ingest` takes them
    sources_from: [builder/configs/shared_sources.yaml]  # YAML lists of sources
    ingest: {…}   claims: {…}   mine: {…}   annotate: {…}   split: {…}   audit: {…}
    questions: {pack: builder/questionpacks/….yaml}   gather: {top_n: 80}   # optional: a question pack
    goldcheck: {data_dir: ../shared/data}   # the gold sources the annotators are scored on
    card: {pretty_name: …, version: "1.0", repo_id: ORG/NAME}   # the release stage's config
    runtime: {executor: local, tasks: 4}   # who runs the sharded stages (builder/runtime.py)

The runtime may also come from its own file (``--runtime FILE``, e.g. ``builder/configs/runtime/slurm.yaml``):
it decides where and on how many ranks claim extraction and claim embeddings run, never what they produce.

The card is written once, by the last stage (``builder/release_stage.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from biodivergence_dataset import ontology
from biodivergence_dataset.card import questions_by_conflicts
from biodivergence_dataset.io import (
    DROPPED,
    DROPPED_TOTAL,
    MANIFEST_FILE,
    STATS_FILE,
    dropped_counts,
    write_json_atomic,
    write_text_atomic,
)
from biodivergence_dataset.records import one_line
from biodivergence_dataset.redact import redact
from biodivergence_dataset.release import GOLDCHECK_FILE, SPLIT_MANIFEST

from . import annotate, audit, claims, evidence_map_stage, gather, goldcheck_stage, ingest, mine, release_stage, split
from .folders import add_force_argument, build_lock, claim_output
from .questionpacks import load_questions, pack_domain
from .questions import questions_stage as questions
from .runtime import RuntimeConfig
from .stage import SOURCES, Stage, execute

STAGE = "build"
REPORT_FILE = "build_report.md"
#: Every stage's scalar stats in one flat mapping, keyed ``<stage>.<key>`` (see :func:`merged_stats`).
STATS_REPORT_FILE = "build_stats.json"
RELEASE = "release"
#: The embedding cache the questions stage fills and mine reads, in a build with a question pack.
SHARED_CACHE = "embedding_cache"


class BuildConfig(BaseModel):
    """The build config file: sources plus one free-form section per stage (validated by the stage)."""

    model_config = ConfigDict(extra="forbid")

    sources: list[Any] = Field(default_factory=list)
    sources_from: list[str] = Field(default_factory=list)
    ingest: dict[str, Any] = Field(default_factory=dict)
    gather: dict[str, Any] = Field(default_factory=dict)
    claims: dict[str, Any] = Field(default_factory=dict)
    questions: dict[str, Any] = Field(default_factory=dict)
    mine: dict[str, Any] = Field(default_factory=dict)
    annotate: dict[str, Any] = Field(default_factory=dict)
    split: dict[str, Any] = Field(default_factory=dict)
    audit: dict[str, Any] = Field(default_factory=dict)
    evidence_map: dict[str, Any] = Field(default_factory=dict)
    goldcheck: dict[str, Any] = Field(default_factory=dict)
    card: dict[str, Any] = Field(default_factory=dict)
    runtime: RuntimeConfig = Field(default_factory=RuntimeConfig)


def _read_mapping(path: Path, what: str) -> dict[str, Any]:
    if not path.is_file():
        raise FileNotFoundError(f"{what} {path} does not exist")
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a {what} is a mapping of sections, got {type(data).__name__}")  # noqa: TRY004 (the CLI reports ValueErrors)
    return data


def load_config(path: str | Path, runtime: str | Path | None = None) -> BuildConfig:
    """The build config file; a ``runtime`` file (its keys, or its ``runtime:`` section) replaces its runtime."""
    path = Path(path)
    data = _read_mapping(path, "build config")
    if runtime is not None:
        extra = _read_mapping(Path(runtime), "runtime config")
        data["runtime"] = extra.get("runtime", extra)
    try:
        config = BuildConfig.model_validate(data)
    except ValidationError as exc:
        raise ValueError(f"{path}{f' with {runtime}' if runtime else ''}: {one_line(exc, 'the file')}") from None
    for step in STEPS:  # each section as written is a valid config of its stage
        section = dict(getattr(config, step.section or step.name))
        step.make_config({step.section: section} if step.section else section)
    return config


def resolve_source(source: str | dict[str, Any], base: Path | None) -> str:
    """A source as the ingest stage reads it; with ``base``, a relative PATH is made absolute against it."""
    from .sources import SourceSpec

    spec = SourceSpec.parse(source)
    path = Path(spec.path).expanduser()
    if base is not None and not path.is_absolute():
        spec = SourceSpec(spec.format, str(base / path), spec.domain, dict(spec.options))
    return str(spec)


def _listed_sources(path: Path) -> list[Any]:
    """A sources file: a YAML list of sources, or a mapping with a ``sources:`` list."""
    if not path.is_file():
        raise FileNotFoundError(f"sources_from file {path} does not exist")
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    listed = data.get("sources") if isinstance(data, dict) else data
    if not isinstance(listed, list):
        raise ValueError(f"{path}: expected a YAML list of FORMAT:PATH sources")  # noqa: TRY004 (the CLI reports ValueErrors)
    return listed


def resolve_sources(config: BuildConfig, base: Path | None = None) -> list[str]:
    """Every source of the config (inline, then from ``sources_from`` files), in order, without repeats.

    Relative paths (of sources and of ``sources_from`` files) are relative to ``base``, by default the
    working directory.
    """
    sources = list(config.sources)
    for file in config.sources_from:
        sources.extend(_listed_sources(Path(file) if base is None else base / file))
    if not sources:
        raise ValueError("the build config names no sources (sources: or sources_from:)")
    return list(dict.fromkeys(resolve_source(s, base) for s in sources))


# ---------------------------------------------------------------------------------------------
# steps: the stages in the order the build runs them, each wired to the others


def inherit_lexicon(section: dict[str, Any], config: BuildConfig) -> None:
    """The questions section's lexicon and domain packs, unless the section names its own: every stage that reads
    a question reads it with the same words."""
    for key in ("lexicon", "domain_packs"):
        if key in config.questions:
            section.setdefault(key, config.questions[key])


def shared_cache(config: BuildConfig, work: Path) -> str:
    """The embedding cache the questions stage fills and mine reads: a folder of the build, not of either stage."""
    return config.mine.get("cache_dir") or str(work / SHARED_CACHE)


def ingest_wiring(section: dict[str, Any], config: BuildConfig, work: Path) -> dict[str, Any]:
    """With a question pack, ingest keeps a record no query pack places in a domain in the questions' domain (the
    builder declared what the corpus is about; gather picks each question's abstracts)."""
    if pack := config.questions.get("pack"):
        section.setdefault("fallback_domain", pack_domain(load_questions(pack)))
    return section


def gather_wiring(section: dict[str, Any], config: BuildConfig, work: Path) -> dict[str, Any]:
    """A gather section's pack, lexicon and domain packs default to the questions section's."""
    if section and (pack := config.questions.get("pack")):
        section.setdefault("pack", pack)
        inherit_lexicon(section, config)
    return section


def questions_wiring(section: dict[str, Any], config: BuildConfig, work: Path) -> dict[str, Any]:
    """The questions stage embeds with the miner's encoder, into the shared cache."""
    if config.questions.get("pack"):
        section.setdefault("cache_dir", shared_cache(config, work))
        for key in ("model", "precision", "device", "batch_size"):
            if key in config.mine:
                section.setdefault(key, config.mine[key])
    return section


def mine_wiring(section: dict[str, Any], config: BuildConfig, work: Path) -> dict[str, Any]:
    """With a question pack, mine reads the questions stage's assignments and the shared cache."""
    if config.questions.get("pack"):
        section.setdefault("questions_dir", str(work / "questions"))
        section.setdefault("cache_dir", shared_cache(config, work))
    return section


def annotate_wiring(section: dict[str, Any], config: BuildConfig, work: Path) -> dict[str, Any]:
    inherit_lexicon(section, config)
    return section


def evidence_map_wiring(section: dict[str, Any], config: BuildConfig, work: Path) -> dict[str, Any]:
    """With a question pack, the evidence maps read the questions stage's folder with its lexicon, and claims with
    the annotate section's reader (``reader:PATH``) when it names one."""
    if config.questions.get("pack"):
        section.setdefault("questions_dir", str(work / "questions"))
        inherit_lexicon(section, config)
        from .annotators import parse_spec

        specs = config.annotate.get("annotator", [])
        readers = [parse_spec(s) for s in ([specs] if isinstance(specs, str) else specs)]
        path = next((s.url for s in readers if s.backend == "reader" and s.url), None)
        if path:
            section.setdefault("reader", path)
    return section


def goldcheck_wiring(section: dict[str, Any], config: BuildConfig, work: Path) -> dict[str, Any]:
    """The gold check scores the build's annotators, on pairs as its miner makes them."""
    section.setdefault("annotate", dict(config.annotate))
    section.setdefault("mine", dict(config.mine))
    return section


STEPS: tuple[Stage, ...] = (
    replace(ingest.stage, wire=ingest_wiring),
    replace(gather.stage, wire=gather_wiring),
    claims.stage,
    replace(questions.stage, wire=questions_wiring),
    replace(mine.stage, wire=mine_wiring),
    replace(annotate.stage, wire=annotate_wiring),
    split.stage,
    audit.stage,
    replace(evidence_map_stage.stage, wire=evidence_map_wiring),
    replace(goldcheck_stage.stage, wire=goldcheck_wiring),  # before the release: the card shows it
    release_stage.stage,
)


def wire(name: str, section: dict[str, Any], config: BuildConfig, work: Path) -> dict[str, Any]:
    """The section of the step ``name`` with what it takes from the others."""
    return next(s for s in STEPS if s.name == name).wire(section, config, work)


@dataclass
class StepResult:
    name: str
    output: Path
    seconds: float
    status: str  # "ran" or "up to date"
    stats: dict[str, Any] = field(default_factory=dict)


def _marker_time(path: Path) -> int | None:
    return path.stat().st_mtime_ns if path.exists() else None


def step_input(step: Stage, config: BuildConfig) -> str | None:
    """The folder a step reads: its input, or, when the step writing that folder is skipped, what that step reads
    (None: it reads no folder)."""
    folder = step.reads[0] if step.reads else None
    while folder is not None:
        writer = next((s for s in STEPS if s.writes == folder and folder not in s.reads), None)
        if writer is None or writer.active(config):
            return folder
        folder = writer.reads[0] if writer.reads else None
    return None


def active_steps(config: BuildConfig) -> list[Stage]:
    return [s for s in STEPS if s.active(config)]


def run_step(step: Stage, index: int, work: Path, config: BuildConfig, sources: list[str]) -> StepResult:
    print(f"[{index}/{len(active_steps(config))}] {step.name} → {work / step.writes}", flush=True)
    marker = work / step.marker
    before, start = _marker_time(marker), time.perf_counter()
    folder = step_input(step, config)
    inputs = sources if folder == SOURCES else None if folder is None else work / folder
    section = step.config_section(config, work)
    stats = execute(step, inputs, work / step.writes, step.make_config(section), config.runtime)
    seconds = time.perf_counter() - start
    status = "up to date" if before is not None and before == _marker_time(marker) else "ran"
    print(f"    {status} in {seconds:.1f} s{_headline(stats)}", flush=True)
    return StepResult(step.name, work / step.writes, seconds, status, stats)


def _headline(stats: dict[str, Any]) -> str:
    if "seen" in stats and "kept" in stats:
        unit = f" {stats['unit']}" if "unit" in stats else ""
        return f": seen {stats['seen']}{unit}, kept {stats['kept']}, dropped {stats.get(DROPPED_TOTAL, 0)}"
    return ""


# ---------------------------------------------------------------------------------------------
# final check and report


@dataclass
class BuildOutcome:
    steps: list[StepResult]
    release: Path
    sizes: dict[str, dict[str, int]]
    features_ok: bool
    problems: list[str]
    audit: dict[str, Any]
    seconds: float

    @property
    def ok(self) -> bool:
        return self.features_ok and not self.problems and bool(self.audit.get("ok"))


def load_and_check(release: Path, cache_dir: Path) -> tuple[dict[str, dict[str, int]], bool, list[str]]:
    """Load both configs exactly as users will (``load_dataset``); validate the release folder."""
    from datasets import ClassLabel

    from biodivergence_dataset.release import load_release
    from biodivergence_dataset.validate import validate_release

    sizes, typed = {}, True
    for config in ontology.CONFIGS:
        ds = load_release(release, config, cache_dir=str(cache_dir))
        sizes[config] = {split: len(ds[split]) for split in ds}
        first = next(iter(ds.values()))
        typed &= isinstance(first.features["conflict_type"], ClassLabel)
    return sizes, typed, validate_release(release).problems


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header),
            *("| " + " | ".join(str(c) for c in row) + " |" for row in rows)]


def _scalars(stats: dict[str, Any]) -> list[list[Any]]:
    skip = {"stage", "unit", "seen", "kept", DROPPED_TOTAL}
    return [[k, v] for k, v in stats.items() if k not in skip and not k.startswith(DROPPED)
            and isinstance(v, (int, float, str, bool))]


def _tables(stats: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Flat ``{key: number}`` tables of a stage's stats (per-domain counts, by-reason counts, …)."""
    return [(k, v) for k, v in stats.items() if isinstance(v, dict) and v
            and all(isinstance(x, (int, float, str, bool)) for x in v.values())]


def merged_stats(steps: list[StepResult]) -> dict[str, Any]:
    """Every stage's scalar stats under ``<stage>.<key>`` (``ingest.dropped_too_short``, ``claims.unit``, …) and
    its wall time in this run (``<stage>.seconds``; near 0 for a stage that was up to date)."""
    merged = {f"{s.name}.{k}": v for s in steps for k, v in s.stats.items()
              if k != "stage" and isinstance(v, (int, float, str, bool))}
    return merged | {f"{s.name}.seconds": round(s.seconds, 1) for s in steps}


def goldcheck_section(release: Path) -> list[str]:
    """The "How good are these labels?" section of the report (from ``release/goldcheck.json``)."""
    from .goldreport import PLAIN_WARNING, goldcheck_table, goldcheck_warnings

    path = release / GOLDCHECK_FILE
    lines = ["## How good are these labels?", ""]
    if not path.exists():
        return [*lines, "No gold check ran (no gold source found, or disabled in the config)."]
    result = json.loads(path.read_text(encoding="utf-8"))
    lines += [("Agreement (conflict vs no conflict) of the annotators with expert labels, next to the rule "
               "\"exactly one claim contains a negation word\"; members trained on a source are scored on it only "
               "out of fold."), "", goldcheck_table(result)]
    return lines + [""] + [f"- {w}" for w in goldcheck_warnings(result, PLAIN_WARNING)]


def questions_section(release: Path) -> list[str]:
    """Conflicts per question in each split of ``primary`` and the largest share of a split's conflicts one claim
    is in (from the split's counts in ``split_manifest.json``)."""
    path = release / SPLIT_MANIFEST
    per_split = json.loads(path.read_text(encoding="utf-8")).get("questions", {}) if path.exists() else {}
    if not per_split:
        return []
    spreads = list(per_split.values())
    rows = [[f"`{q}`" if q else "(no question)", *(st["conflicts_per_question"].get(q, 0) for st in spreads)]
            for q in questions_by_conflicts(per_split)]
    rows += [["**conflicts**", *(st["conflicts"] for st in spreads)],
             ["**questions with conflicts**", *(st["questions"] for st in spreads)],
             ["**largest claim share**", *(f"{st['largest_claim_share']:.3f} ({st['largest_claim_conflicts']} of "
                                           f"{st['conflicts']})" for st in spreads)]]
    return ["", "## Conflicts per question (primary)", "", *_table(["question", *per_split], rows)]


def render_report(outcome: BuildOutcome, config_path: Path) -> str:
    from .audit import format_audit

    lines = [f"# Build report: {outcome.release.parent}", "",
             f"- config: `{config_path}`",
             f"- wall time: {outcome.seconds:.1f} s",
             f"- result: {'OK' if outcome.ok else 'FAILED'}", "", "## Stages", ""]
    lines += _table(["stage", "status", "seconds", "unit", "seen", "kept", "dropped", "output"], [
        [s.name, s.status, f"{s.seconds:.1f}", s.stats.get("unit", ""), s.stats.get("seen", ""),
         s.stats.get("kept", ""), s.stats.get(DROPPED_TOTAL, ""), f"`{s.output.name}/`"] for s in outcome.steps])
    dropped = [[f"`{s.name}.{DROPPED}{reason}`", n, s.stats.get("unit", "")]
               for s in outcome.steps for reason, n in dropped_counts(s.stats).items()]
    if dropped:
        lines += ["", "## Dropped, by stage and reason", "", *_table(["count", "n", "unit"], dropped)]
    stats_file = outcome.release / STATS_FILE
    funnel = json.loads(stats_file.read_text(encoding="utf-8")).get("per_domain", {}) if stats_file.exists() else {}
    if funnel:
        columns = list(dict.fromkeys(k for row in funnel.values() for k in row))
        lines += ["", "## Funnel per domain", ""]
        lines += _table(["domain", *columns], [[d, *(row.get(c, "") for c in columns)] for d, row in funnel.items()])
    lines += ["", "## Splits (read back with load_dataset)", ""]
    splits = list(dict.fromkeys(s for c in outcome.sizes.values() for s in c))
    rows = [[c, *(sizes.get(s, "–") for s in splits)] for c, sizes in outcome.sizes.items()]
    lines += _table(["config", *splits], rows)
    lines += questions_section(outcome.release)
    lines += ["", *goldcheck_section(outcome.release)]
    lines += ["", "## Leakage audit", "", "```", format_audit(outcome.audit), "```", "",
              "## Validation", ""]
    lines += [f"- {p}" for p in outcome.problems] or ["`biodivergence validate`: OK"]
    for step in outcome.steps:
        lines += ["", f"## Stage `{step.name}`", ""]
        dropped = dropped_counts(step.stats)
        if dropped:
            lines += [f"dropped ({step.stats.get('unit', 'records')}) by reason:", "",
                      *_table(["count", "n"], [[f"`{step.name}.{DROPPED}{k}`", v] for k, v in dropped.items()]), ""]
        scalars = _scalars(step.stats)
        if scalars:
            lines += [*_table(["figure", "value"], scalars), ""]
        for name, table in _tables(step.stats):
            lines += [f"{name}:", "", *_table(["key", "value"], [[k, v] for k, v in table.items()]), ""]
    return "\n".join(lines).rstrip() + "\n"


def print_summary(outcome: BuildOutcome) -> None:
    from .audit import format_audit

    print("\nsplit sizes (load_dataset):")
    for config, sizes in outcome.sizes.items():
        print(f"  {config}: " + ", ".join(f"{s}={n}" for s, n in sizes.items()))
    print("\nleakage audit:")
    print(format_audit(outcome.audit))
    for problem in outcome.problems:
        print(f"validation error: {problem}")
    print(f"\nrelease: {outcome.release}  ({'OK' if outcome.ok else 'FAILED'}, {outcome.seconds:.1f} s)")


# ---------------------------------------------------------------------------------------------
# the job


def build(config_path: str | Path, out_dir: str | Path, base_dir: str | Path | None = None,
          runtime: str | Path | None = None, force: bool = False) -> BuildOutcome:
    """Run every stage into ``out_dir`` (resumable; the last, ``release``, writes the card), write the report,
    check the release. ``runtime``: a runtime config file replacing the build config's ``runtime:``.

    The work folder is claimed (``force``: a folder that is not a build's is moved aside) and locked for the
    run: a second build of the same folder fails at once."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    start = time.perf_counter()
    config_path, work = Path(config_path), Path(out_dir)
    config = load_config(config_path, runtime)
    sources = resolve_sources(config, Path(base_dir) if base_dir else None)
    for step in active_steps(config):  # every section is checked before the first stage runs
        step.make_config(step.config_section(config, work))
    from .ingest import source_paths
    from .sources import SourceSpec

    # a work folder of a build from before the owner marker is known by its report or its first stage's manifest
    claim_output(work, STAGE, source_paths(SourceSpec.parse(s) for s in sources), force=force,
                 known_by=(REPORT_FILE, f"{STEPS[0].writes}/{MANIFEST_FILE}"))
    with build_lock(work):
        release = work / RELEASE
        steps = []
        for i, step in enumerate(active_steps(config), 1):
            steps.append(run_step(step, i, work, config, sources))
        sizes, typed, problems = load_and_check(release, work / ".cache" / "datasets")
        audit = next(s.stats for s in steps if s.name == "audit")
        outcome = BuildOutcome(steps, release, sizes, typed, problems, audit, time.perf_counter() - start)
        write_text_atomic(work / REPORT_FILE, redact(render_report(outcome, config_path)))
        write_json_atomic(work / STATS_REPORT_FILE, merged_stats(steps))
    return outcome


def add_arguments(parser) -> None:
    parser.add_argument("--config-file", help="build config YAML (e.g. builder/configs/demo.yaml)")
    # the old name; elsewhere --config names a release config (primary / pairlevel)
    parser.add_argument("--config", dest="legacy_config_file", help=argparse.SUPPRESS)
    parser.add_argument("--out", required=True, help="work directory; the release lands in OUT/release/")
    parser.add_argument("--runtime", metavar="FILE",
                        help="runtime config YAML (executor local/slurm/ray, tasks, workers), e.g. "
                             "builder/configs/runtime/slurm.yaml; replaces the build config's runtime: section")
    add_force_argument(parser)


def run(args) -> int:
    if args.legacy_config_file:
        print("biodivergence build: --config is now --config-file", file=sys.stderr)
    config_file = args.config_file or args.legacy_config_file
    if not config_file:
        raise ValueError("--config-file FILE is required (a build config YAML, e.g. builder/configs/demo.yaml)")
    outcome = build(config_file, args.out, runtime=args.runtime, force=args.force)
    print_summary(outcome)
    print(f"report: {Path(args.out) / REPORT_FILE}")
    return 0 if outcome.ok else 1
