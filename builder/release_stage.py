"""Last stage: assemble a release folder's manifests, funnel, sources and card (written once per build).

The split leaves the data and its own record (``.stages/split/report.json``); the audit leaves
``audit.json``, its tables in ``stats.json`` and the plots. This stage, run last, adds what describes the
release as a whole:

- ``split_manifest.json``: the split's record plus the abstract sources, the per-domain construction funnel
  (read from the upstream stages' stats) and the library versions;
- ``annotation_manifest.json``: the annotation runs' manifests (local paths cut to folder names);
- ``stats.json`` ``per_domain``: the funnel plus the final pairs of each config (when the audit ran);
- ``sources.json``: each abstract source's dataset and licence (from its ``SOURCE.md``), when readable here;
- ``README.md`` and ``eval.yaml`` (the card), with ``card_meta.json`` when the build gives card metadata.

``biodivergence split`` and ``biodivergence audit`` run it at their end, so a release assembled by hand
has the same files; ``biodivergence card`` only re-renders the card.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, model_validator

from biodivergence_dataset import __version__, ontology
from biodivergence_dataset.card import write_card
from biodivergence_dataset.cardmeta import CardMeta
from biodivergence_dataset.evidence_maps import MAP_DIR, MAP_FILE
from biodivergence_dataset.io import (
    BY_DOMAIN,
    STATS_FILE,
    SUCCESS_MARKER,
    as_dirs,
    content_fingerprint,
    done_fingerprint,
    read_manifest,
    read_stats,
    write_json_atomic,
)
from biodivergence_dataset.provenance import (
    NOT_STATED,
    SOURCE_MD,
    SourceDataset,
    find_source_md,
    parse_source_md,
    write_sources,
)
from biodivergence_dataset.release import (
    ANNOTATION_MANIFEST,
    AUDIT_FILE,
    FLOORS_FILE,
    GOLDCHECK_FILE,
    PLOTS_DIR,
    ROBUSTNESS_FILE,
    SPLIT_MANIFEST,
    SPLIT_REPORT,
    STATE_DIR,
    state_dir,
)

from .goldreport import write_goldcheck_summary
from .sources import SourceSpec
from .stage import Opened, Stage, execute

if TYPE_CHECKING:
    from .runtime import RuntimeConfig

STAGE = "release"
#: Files beside the data that the card shows and that other commands or stages (goldcheck, analyze, floors, the
#: evidence maps) write.
_CARD_INPUTS = (AUDIT_FILE, GOLDCHECK_FILE, ROBUSTNESS_FILE, FLOORS_FILE, f"{PLOTS_DIR}/plots.json",
                f"{MAP_DIR}/{MAP_FILE}")


class ReleaseConfig(BaseModel):
    """The card's metadata (the build config's ``card:`` section); ``None`` keeps the release's stored one."""

    model_config = ConfigDict(extra="forbid")

    card: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _card_fields(self) -> ReleaseConfig:
        if self.card is not None:
            try:
                CardMeta(**self.card)
            except TypeError as exc:
                raise ValueError(f"card: {exc}") from None
        return self

    def meta(self, release_dir: Path) -> CardMeta:
        return CardMeta(**self.card) if self.card is not None else CardMeta.load(release_dir)


# ---------------------------------------------------------------------------------------------
# the funnel, from the upstream stages' stats


def upstream_chain(stage_dir: Path, limit: int = 8) -> list[tuple[str, Path]]:
    """``[(stage, folder), …]`` from ``stage_dir`` back to the first stage, following manifest inputs."""
    chain, current = [], stage_dir
    while len(chain) < limit:
        try:
            manifest = read_manifest(current)
        except FileNotFoundError:
            break
        chain.append((manifest.get("stage", current.name), current))
        inputs = [Path(p) for p in manifest.get("inputs", []) if Path(p).is_dir()]
        if not inputs:
            break
        current = inputs[0]
    return chain


def _domain_counts(stats: Mapping[str, Any]) -> dict[str, int]:
    """The per-domain output counts of a stage's stats.json (its :data:`~biodivergence_dataset.io.BY_DOMAIN` table)."""
    table = stats.get(BY_DOMAIN)
    if not isinstance(table, Mapping):
        return {}
    return {d: int(v) for d, v in table.items() if d in ontology.DOMAIN_NAMES}


#: Funnel column for each upstream stage name (as recorded in its manifest); "labelled" (unique annotated
#: pairs) is counted by the split itself, so that several annotation runs over one pool count once.
FUNNEL_COLUMNS = {"ingest": "abstracts", "claims": "claims", "mine": "candidates"}


def upstream_funnel(annotation_dirs: Sequence[Path]) -> tuple[dict[str, dict[str, int]], list[str]]:
    """Per-domain abstracts / claims / candidates read from the upstream stages' stats, and the sources."""
    funnel: dict[str, dict[str, int]] = defaultdict(dict)
    sources: list[str] = []
    for run in annotation_dirs:
        for stage, folder in upstream_chain(run):
            column = FUNNEL_COLUMNS.get(stage)
            if column is None or not (folder / STATS_FILE).exists():
                continue
            for domain, n in _domain_counts(read_stats(folder)).items():
                funnel[domain][column] = n
            if stage == "ingest":
                params = read_manifest(folder).get("params", {})
                sources = list(params.get("sources") or read_manifest(folder).get("inputs", []))
    columns = list(FUNNEL_COLUMNS.values())
    ordered = {d: {c: funnel[d][c] for c in columns if c in funnel[d]} for d in ontology.DOMAIN_NAMES if d in funnel}
    return ordered, sources


def per_domain(funnel: Mapping[str, Mapping[str, int]], by_config: Mapping[str, Mapping[str, Any]]) -> dict:
    """Table 17: upstream funnel per domain plus final pairs in each config."""
    out = {}
    for domain in ontology.DOMAIN_NAMES:
        row = dict(funnel.get(domain, {}))
        for config, stats in by_config.items():
            row[f"{config}_pairs"] = sum(n for s, n in stats["domain_by_split"][domain].items() if s in ontology.SPLITS)
        if any(row.values()):
            out[domain] = row
    if out:
        columns = dict.fromkeys(k for r in out.values() for k in r)
        out["total"] = {k: sum(r.get(k, 0) for r in out.values()) for k in columns}
    return out


# ---------------------------------------------------------------------------------------------
# manifests and sources


def library_versions() -> dict[str, str]:
    import datasets
    import huggingface_hub
    import pyarrow

    return {"datasets": datasets.__version__, "pyarrow": pyarrow.__version__,
            "huggingface_hub": huggingface_hub.__version__, "biodivergence": __version__}


def annotation_manifest(annotation_dirs: Sequence[Path]) -> dict[str, Any] | None:
    """The annotation runs' manifests for the release; local paths are cut to folder names (the card is public)."""
    manifests = [json.loads((d / ANNOTATION_MANIFEST).read_text(encoding="utf-8"))
                 for d in annotation_dirs if (d / ANNOTATION_MANIFEST).exists()]
    for manifest in manifests:
        if "queue" in manifest:
            manifest["queue"] = Path(manifest["queue"]).name
    if not manifests:
        return None
    return manifests[0] if len(manifests) == 1 else {"runs": manifests}


def source_datasets(specs: Sequence[SourceSpec]) -> list[SourceDataset]:
    """The source dataset (from its ``SOURCE.md``) of each abstract source, once each, in source order."""
    found: dict[str, SourceDataset] = {}
    for spec in specs:
        source_md = find_source_md(spec.path)
        source = parse_source_md(source_md) if source_md else SourceDataset(
            name=f"{spec.format} source", title=f"abstracts read as {spec.format} (no {SOURCE_MD} beside them)",
            licences=[NOT_STATED])
        found.setdefault(source.name, source)
    return list(found.values())


def record_sources(release_dir: Path, manifest: Mapping[str, Any]) -> None:
    """Write ``sources.json`` when the split manifest's abstract sources are readable here (kept otherwise)."""
    specs = [SourceSpec.parse(s) for s in manifest.get("sources", {}).get("abstracts", [])]
    if specs and all(Path(s.path).exists() for s in specs):
        write_sources(release_dir, source_datasets(specs))


def _read_json(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def split_inputs(release_dir: Path) -> list[Path]:
    """The annotation folders the split read (from its stage manifest), or none for a hand-made release."""
    try:
        return [Path(p) for p in read_manifest(state_dir(release_dir, "split")).get("inputs", [])]
    except FileNotFoundError:
        return []


def assemble_manifests(release_dir: Path, annotation_dirs: Sequence[Path]) -> dict[str, Any]:
    """Write ``split_manifest.json`` and ``annotation_manifest.json`` from the split's report and the
    upstream stats; a release without a split report (assembled by hand) keeps its manifest as it is."""
    report_path = state_dir(release_dir, "split") / SPLIT_REPORT
    if not report_path.exists():
        return _read_json(release_dir / SPLIT_MANIFEST)
    report = json.loads(report_path.read_text(encoding="utf-8"))
    funnel, sources = upstream_funnel(annotation_dirs)
    for domain, n in report["labelled_per_domain"].items():
        funnel.setdefault(domain, {})["labelled"] = n
    manifest = dict(report["manifest"])
    manifest["sources"] = {**manifest.get("sources", {}), "abstracts": sources}
    manifest.update({"funnel_per_domain": funnel, "library_versions": library_versions()})
    write_json_atomic(release_dir / SPLIT_MANIFEST, manifest)
    annotation = annotation_manifest(annotation_dirs)
    if annotation is not None:
        write_json_atomic(release_dir / ANNOTATION_MANIFEST, annotation)
    return manifest


def add_funnel(release_dir: Path, manifest: Mapping[str, Any]) -> None:
    """Put ``per_domain`` (funnel + final pairs per config) first in the audit's ``stats.json``."""
    path = release_dir / STATS_FILE
    if not path.exists():
        return
    stats = json.loads(path.read_text(encoding="utf-8"))
    table = per_domain(manifest.get("funnel_per_domain", {}), stats.get("by_config", {}))
    write_json_atomic(path, {"per_domain": table, **{k: v for k, v in stats.items() if k != "per_domain"}})


# ---------------------------------------------------------------------------------------------
# stage


def _inputs_fingerprint(release_dir: Path, annotation_dirs: Sequence[Path]) -> dict[str, Any]:
    """What this stage reads: the split's and the audit's completion records, the upstream folders and the
    files beside the data that other commands write (gold check, robustness)."""
    def marker(folder: Path) -> str | None:
        return done_fingerprint(folder) if (folder / SUCCESS_MARKER).exists() else None

    files = [release_dir / name for name in _CARD_INPUTS]
    return {"split": marker(state_dir(release_dir, "split")), "audit": marker(state_dir(release_dir, "audit")),
            "annotations": [marker(d) for d in annotation_dirs],
            "files": content_fingerprint(release_dir, files)}


def open_stage(annotation_dirs: str | Path | Sequence[str | Path] | None, release_dir: Path,
               config: ReleaseConfig) -> Opened:
    dirs = as_dirs(annotation_dirs) if annotation_dirs is not None else split_inputs(release_dir)
    params = {"card": asdict(config.meta(release_dir)), "inputs": _inputs_fingerprint(release_dir, dirs)}
    return Opened(STAGE, config, [str(d) for d in dirs], release_dir, params, state=state_dir(release_dir, STAGE))


def work(opened: Opened, runtime: RuntimeConfig) -> dict[str, Any]:
    """Assemble the release's manifests, funnel, sources and card (a global step: ``runtime`` is not used)."""
    config, release_dir = opened.config, opened.out
    manifest = assemble_manifests(release_dir, as_dirs(opened.inputs))
    add_funnel(release_dir, manifest)
    record_sources(release_dir, manifest)
    write_release_card(release_dir, config.meta(release_dir) if config.card is not None else None)
    return {"stage": STAGE, "files": sorted(p.name for p in release_dir.iterdir() if p.is_file())}


stage = Stage(STAGE, ReleaseConfig, open_stage, work, reads=("annotations",), writes="release",
              state=f"{STATE_DIR}/{STAGE}", section="card", module=__name__)


def run_stage(annotation_dirs: str | Path | Sequence[str | Path] | None, release_dir: str | Path,
              config: ReleaseConfig | None = None, runtime: RuntimeConfig | None = None) -> dict[str, Any]:
    """Assemble the release from the annotation folder(s) it was split from (None: the folders the split's stage
    manifest names); resumable."""
    return execute(stage, annotation_dirs, release_dir, config, runtime)


def write_release_card(release_dir: str | Path, meta: CardMeta | None = None) -> Path:
    """Write the card (``README.md``, ``eval.yaml``) with what the builder renders for it: the gold check's
    Markdown first (``goldcheck.md``), then the card that shows it."""
    write_goldcheck_summary(release_dir)
    return write_card(release_dir, meta)


# ---------------------------------------------------------------------------------------------
# `biodivergence audit`: the audit stage, then this one (the audit's tables go into the card)


def add_audit_arguments(parser) -> None:
    from biodivergence_dataset.arguments import add_config_arguments, add_release_argument

    from .audit import AuditConfig

    add_release_argument(parser, "release folder written by `biodivergence split`", legacy_positional=True)
    add_config_arguments(parser, AuditConfig, options={"plots": {"help": "draw the PNG plots"},
                                                       "dpi": {"help": "resolution of the plots"}})


def run_audit(args) -> int:
    from biodivergence_dataset.arguments import config_from_args

    from .audit import AuditConfig, format_audit
    from .audit import run_stage as audit_stage

    audit = audit_stage(args.release, args.release, config_from_args(AuditConfig, args))
    run_stage(None, args.release)
    print(format_audit(audit))
    if not audit["ok"]:
        print(f"error: {ontology.DEFAULT_CONFIG} leaks across splits (see {Path(args.release) / AUDIT_FILE})")
        return 1
    print(f"{ontology.DEFAULT_CONFIG}: zero article / claim / pair overlap across splits")
    return 0


# ---------------------------------------------------------------------------------------------
# `biodivergence card`


def refresh_card(release_dir: str | Path) -> Path:
    """Bring the card and what it shows up to date, then re-render it: in a release the pipeline built, the audit
    (tables, plots) re-runs when the data changed since it ran (with the settings it ran with) and this stage
    when its inputs did, so the card never shows stale figures; a hand-made release is only re-rendered."""
    from .audit import STAGE as AUDIT
    from .audit import AuditConfig
    from .audit import run_stage as audit

    release_dir = Path(release_dir)
    split_marker = state_dir(release_dir, "split") / SUCCESS_MARKER
    if split_marker.exists():
        try:
            ran_with = read_manifest(state_dir(release_dir, AUDIT)).get("params", {})
        except FileNotFoundError:
            ran_with = {}
        settings = {k: v for k, v in ran_with.items() if k in AuditConfig.model_fields}
        audit(release_dir, release_dir, AuditConfig(**settings))
        if all(d.is_dir() for d in split_inputs(release_dir)):
            run_stage(None, release_dir)
    return write_release_card(release_dir)


def add_card_arguments(parser) -> None:
    from biodivergence_dataset.arguments import add_release_argument
    from biodivergence_dataset.cardmeta import DEFAULT_MIN_SUPPORT
    from biodivergence_dataset.release import META_FILE

    add_release_argument(parser, "release folder to (re-)render README.md for (the audit re-runs if the data "
                                 "changed since it ran)", legacy_positional=True)
    parser.add_argument("--min-support", type=int, metavar="N",
                        help="leave headline metrics with fewer test examples off the leaderboard and store N in "
                             f"{META_FILE} (default: the stored value, else {DEFAULT_MIN_SUPPORT})")


def run_card(args) -> int:
    from dataclasses import replace

    from biodivergence_dataset.cardmeta import CardMeta

    if args.min_support is not None:
        if args.min_support < 1:
            raise ValueError(f"--min-support must be at least 1, got {args.min_support}")
        replace(CardMeta.load(args.release), min_support=args.min_support).save(args.release)
    print(f"wrote {refresh_card(args.release)}")
    return 0
