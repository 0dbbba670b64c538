"""Stage 1: ingest abstracts — read → normalise → assign domain → de-duplicate (paper §5.1, appendix G).

``biodivergence ingest SOURCE… --out DIR`` reads every source (``FORMAT:PATH``, see
:mod:`builder.sources`), normalises the text (:mod:`builder.normalise`), assigns a domain from the
query packs or the pinned one (:mod:`builder.domains`), merges duplicates and reports near duplicates
(:mod:`builder.dedup`), and writes a stage folder: Parquet shards of ``Abstract`` records,
``stats.json`` (in abstracts: seen, kept, ``dropped_<reason>``, by source, by domain, normalisation counts),
``near_duplicates.jsonl``, ``identifier_conflicts.jsonl`` (records excluded because one identifier
names two different texts), ``excluded-*.parquet`` (every dropped record with its reason and what it was
dropped for, see :func:`biodivergence_dataset.io.read_exclusions`), ``manifest.json`` and ``_SUCCESS`` last. Re-running with the same
sources (unchanged files) and parameters returns the existing statistics.

Drop reasons (each counted as ``dropped_<reason>``): faults of the readers (``malformed``, ``truncated``, ``invalid_bytes``, ``empty_file``,
``missing_id``, ``too_long``), ``no_abstract``, ``too_short``, ``out_of_domain``,
``duplicate_doi|pmid|pmcid|content``, ``identifier_conflict``, ``deleted_citation`` (PubMed DeleteCitation) and
``near_duplicate`` (only with ``--drop-near-duplicates``). Every input record is counted once, so
``seen == kept + dropped_total``. A record the query packs place in no domain is kept in ``fallback_domain``
when one is set (counted under ``domain_fallback``) rather than dropped as ``out_of_domain``. A fault names
file and record position; without ``--strict`` the record is skipped and counted, with it the run stops before
writing anything.
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import sys
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from biodivergence_dataset import io
from biodivergence_dataset.arguments import add_config_arguments, config_from_args
from biodivergence_dataset.ontology import DOMAIN_NAMES
from biodivergence_dataset.records import Abstract, RecordError

from .dedup import IDENTIFIER_CONFLICT, SIGNATURE_BATCH, Deduplicator, Draft, Merge, NearDuplicateFinder
from .domains import PACK_DIR as DOMAIN_PACKS
from .domains import DomainAssigner
from .folders import add_force_argument, claim_output
from .normalise import Normaliser
from .sources import SourceSpec
from .sources.raw_records import MALFORMED, TOO_LONG, Deletion, Fault, RawRecord
from .stage import SOURCES, Opened, Stage, execute

if TYPE_CHECKING:
    from .runtime import RuntimeConfig

STAGE = "ingest"
NEAR_DUPLICATES_FILE = "near_duplicates.jsonl"
CONFLICTS_FILE = "identifier_conflicts.jsonl"
PARTIAL_DIR = ".partial"  # scratch folder of a running ingest (the dedup store, the records before they are final)
_MAX_FAULT_MESSAGES = 100
#: The stats figure counting records placed in the fallback domain, by domain.
FALLBACK = "domain_fallback"

logger = logging.getLogger(__name__)


class IngestError(ValueError):
    """A bad input record in ``--strict`` mode (the message names file and record)."""


class IngestConfig(BaseModel):
    """Parameters of the ingest stage (the ``ingest:`` section of a build config)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)  # nan / inf: no threshold

    min_chars: int = Field(50, ge=0, description="drop abstracts shorter than this after normalisation")
    max_chars: int = Field(50_000, gt=0, description="a longer abstract is a fault (too_long)")
    strict: bool = Field(False, description="stop at the first bad record instead of skipping it")
    domain: str | None = Field(None, description="pin every source without its own @domain to this domain")
    min_domain_score: int = Field(2, ge=1, description="query-pack score needed to assign a domain")
    fallback_domain: str | None = Field(
        None, description="domain of a record the query packs place in none, instead of dropping it as "
                          "out_of_domain (a build with a question pack sets it to the questions' domain)")
    querypacks: str | None = Field(None, description="folder of query packs (default: builder/querypacks)")
    near_duplicates: Literal["report", "drop", "off"] = Field(
        "report", description="MinHash near duplicates: listed in near_duplicates.jsonl, dropped, or not looked for")
    near_duplicate_threshold: float = Field(0.85, gt=0.0, le=1.0, description="estimated Jaccard similarity "
                                                                               "of word shingles from which two abstracts are near duplicates")
    num_perm: int = Field(64, ge=16, le=256, description="MinHash signature length")
    shard_size: int = Field(io.DEFAULT_SHARD_SIZE, gt=0, description="records per output shard")
    progress: bool = Field(True, description="show progress bars")

    @field_validator("domain", "fallback_domain")
    @classmethod
    def _known_domain(cls, value: str | None) -> str | None:
        if value is not None and value not in DOMAIN_NAMES:
            raise ValueError(f"unknown domain {value!r}; expected one of {list(DOMAIN_NAMES)}")
        return value


Source = str | dict | SourceSpec


# ---------------------------------------------------------------------------------------------
# the stage as plain functions over records


class IngestCounter:
    """StageStats plus per-source bookkeeping and fault messages."""

    def __init__(self, stats: io.StageStats, strict: bool):
        self.stats, self.strict = stats, strict
        self.by_source: dict[str, dict[str, Any]] = {}
        self.faults: list[str] = []
        self.excluded: list[dict[str, Any]] = []

    def seen(self, spec: str) -> None:
        self.stats.seen += 1
        self._source(spec)["seen"] += 1

    def drop(self, spec: str, reason: str, record: Any, record_id: str, **detail: Any) -> None:
        """Count ``record`` as dropped for ``reason`` (kept with ``detail`` where the stats keep exclusions)."""
        self.stats.drop(reason, record=record, record_id=record_id, detail=detail)
        source = self._source(spec)
        key = f"{io.DROPPED}{reason}"
        source[key] = source.get(key, 0) + 1

    def fault(self, spec: str, fault: Fault, counted: bool = False, record: Draft | None = None) -> None:
        """Stop (strict) or skip and count a bad record; ``counted``: it was already counted as seen;
        ``record``: the record as read, where there is one (else the fault itself is kept)."""
        if self.strict:
            raise IngestError(f"{fault} (source {spec}; re-run without --strict to skip bad records)")
        if len(self.faults) < _MAX_FAULT_MESSAGES:
            logger.warning("skipped: %s", fault)
            self.faults.append(str(fault))
        if not counted:
            self.seen(spec)
        if record is None:
            self.drop(spec, fault.reason, fault, f"{fault.path}:{fault.position}")
        else:
            self.drop(spec, fault.reason, record, record.origin, message=fault.message)

    def exclude(self, identifier: str, drafts: list[Draft]) -> None:
        """Keep the records excluded for an identifier conflict, with the identifier and reason."""
        self.excluded.extend({"identifier": identifier, "reason": IDENTIFIER_CONFLICT, "origin": d.merged_from[0],
                              "title": d.title, "text": d.text} for d in drafts)

    def kept(self, draft: Draft) -> None:
        self.stats.kept += 1
        source = self._source(draft.spec)
        source["kept"] += 1
        source["by_domain"][draft.domain] = source["by_domain"].get(draft.domain, 0) + 1
        self.stats.count(io.BY_DOMAIN, draft.domain)

    def _source(self, spec: str) -> dict[str, Any]:
        return self.by_source.setdefault(spec, {"seen": 0, "kept": 0, "by_domain": {}})


def prepare(
    items: Iterable[tuple[str, Any]], config: IngestConfig, counter: IngestCounter,
    normaliser: Normaliser, assigner: DomainAssigner | None,
) -> Iterator[Draft | Deletion]:
    """Faults, length checks, normalisation and domain assignment; yields Drafts (and Deletions)."""
    for spec, item in items:
        if isinstance(item, Fault):
            counter.fault(spec, item)
        elif isinstance(item, Deletion):
            yield item
        else:
            draft = _draft(spec, item, config, counter, normaliser, assigner)
            if draft is not None:
                yield draft


def _draft(spec: str, raw: RawRecord, config: IngestConfig, counter: IngestCounter,
           normaliser: Normaliser, assigner: DomainAssigner | None) -> Draft | None:
    size = len(raw.title) + sum(len(text) for _, text in raw.sections)
    if size > config.max_chars:
        counter.fault(spec, Fault(raw.path, raw.position, TOO_LONG,
                                  f"{size} characters, more than max_chars={config.max_chars}"))
        return None
    counter.seen(spec)
    if not any(text.strip() for _, text in raw.sections):
        counter.drop(spec, "no_abstract", raw, raw.origin)
        return None
    title, text, sections = normaliser.abstract(raw.title, raw.sections)
    if len(text) < config.min_chars:
        counter.drop(spec, "too_short", raw, raw.origin, chars=len(text))
        return None
    domain = raw.domain or config.domain or assigner.assign(title, text, raw.mesh_terms)
    if domain is None and config.fallback_domain:
        domain = config.fallback_domain
        counter.stats.count(FALLBACK, domain)
    if domain is None:
        counter.drop(spec, "out_of_domain", raw, raw.origin)
        return None
    return Draft(
        source=raw.source, path=raw.path, position=raw.position, spec=spec, title=title, text=text, sections=sections,
        domain=domain, pmid=raw.pmid, doi=raw.doi, pmcid=raw.pmcid, year=raw.year, journal=raw.journal,
        mesh_terms=list(dict.fromkeys(raw.mesh_terms)), merged_from=[raw.origin],
    )


def deduplicate(drafts: Iterable[Draft | Deletion], counter: IngestCounter, spill_dir: Path | None = None) -> Deduplicator:
    """Merge exact duplicates and apply DeleteCitation blocks; returns the de-duplicated set (close it when read).

    The records wait on disk (in ``spill_dir``, else a temporary file), so memory does not grow with the corpus.
    """
    dedup = Deduplicator(spill_dir)
    for draft in drafts:
        if isinstance(draft, Deletion):
            for removed in dedup.remove_pmids(set(draft.pmids)):
                counter.drop(removed.spec, "deleted_citation", removed, removed.origin,
                             deleted_by=f"{draft.path}:{draft.position}")
            continue
        merge = dedup.add(draft)
        if merge.reason == IDENTIFIER_CONFLICT:
            _drop_conflicting(draft, merge, counter)
        elif merge.reason:
            for dropped, reason in [(draft, merge.reason), *merge.absorbed]:
                counter.drop(dropped.spec, reason, dropped, dropped.origin, merged_into=merge.counterpart.origin)
    counter.stats.figures["identifier_conflicts"] = dedup.identifier_conflicts
    ids = sorted({row["identifier"] for row in counter.excluded})
    counter.stats.figures["identifier_conflict_ids"] = ids[:_MAX_FAULT_MESSAGES]
    if ids:
        shown = ", ".join(ids[:10]) + (", ..." if len(ids) > 10 else "")
        logger.warning("%d identifier(s) name different texts; their records are excluded as %s (listed in %s): %s",
                       len(ids), IDENTIFIER_CONFLICT, CONFLICTS_FILE, shown)
    return dedup


def _drop_conflicting(draft: Draft, merge: Merge, counter: IngestCounter) -> None:
    """Count and keep the records one identifier conflict excludes, each naming the record it conflicts with;
    nothing is merged."""
    identifier = merge.conflict_key
    counter.drop(draft.spec, IDENTIFIER_CONFLICT, draft, draft.origin, identifier=identifier,
                 conflicts_with=merge.counterpart.origin)
    for other, _ in merge.absorbed:  # the earlier record, excluded now that a different text shares its identifier
        counter.drop(other.spec, IDENTIFIER_CONFLICT, other, other.origin, identifier=identifier,
                     conflicts_with=draft.origin)
    counter.exclude(identifier, [other for other, _ in merge.absorbed] + [draft])


def finish(
    drafts: Iterable[Draft], config: IngestConfig, counter: IngestCounter, near_pairs: list[dict[str, Any]],
) -> Iterator[Abstract]:
    """Validate into Abstracts, find (and optionally drop) near duplicates, count what is kept.

    Streams: ``drafts`` are read one signature batch at a time.
    """
    finder = None
    if config.near_duplicates != "off":
        finder = NearDuplicateFinder(config.near_duplicate_threshold, config.num_perm)
    drafts = iter(drafts)
    try:
        while batch := list(islice(drafts, SIGNATURE_BATCH)):
            signatures = finder.signatures([draft.text for draft in batch]) if finder is not None else None
            yield from _finish_batch(batch, signatures, finder, config, counter, near_pairs)
    finally:
        if finder is not None:
            finder.close()


def _finish_batch(
    drafts: list[Draft], signatures, finder: NearDuplicateFinder | None, config: IngestConfig, counter: IngestCounter,
    near_pairs: list[dict[str, Any]],
) -> Iterator[Abstract]:
    for i, draft in enumerate(drafts):
        try:
            abstract = draft.to_abstract()
        except RecordError as exc:
            counter.fault(draft.spec, Fault(draft.path, draft.position, MALFORMED, str(exc)), counted=True,
                          record=draft)
            continue
        if finder is not None:
            twin = finder.check(abstract.article_uid, signatures[i])
            if twin is not None:
                pair = {"article_uid": abstract.article_uid, "near_duplicate_of": twin,
                        "jaccard": round(finder.jaccard(abstract.article_uid, twin), 3)}
                near_pairs.append(pair)
                if config.near_duplicates == "drop":
                    counter.drop(draft.spec, "near_duplicate", abstract, draft.origin, **pair)
                    continue
        counter.kept(draft)
        yield abstract


def ingest(
    sources: Iterable[SourceSpec], config: IngestConfig, stats: io.StageStats,
    near_pairs: list[dict[str, Any]] | None = None, excluded: list[dict[str, Any]] | None = None,
    spill_dir: Path | None = None,
) -> Iterator[Abstract]:
    """The whole stage as a stream: yields the de-duplicated Abstracts, filling ``stats``.

    ``near_pairs`` and ``excluded`` (if given) receive the near-duplicate pairs and the records
    excluded for identifier conflicts; ``spill_dir`` holds the de-duplication store while it runs.
    """
    from tqdm import tqdm

    sources = list(sources)
    near_pairs = near_pairs if near_pairs is not None else []
    counter = IngestCounter(stats, config.strict)
    normaliser = Normaliser()
    pinned = config.domain is not None or all(spec.domain for spec in sources)
    assigner = None if pinned else DomainAssigner.from_dir(config.querypacks, config.min_domain_score)
    items = ((str(spec), item) for spec in sources for item in spec.items())
    items = tqdm(items, desc="ingest", unit=" records", disable=None if config.progress else True)
    with deduplicate(prepare(items, config, counter, normaliser, assigner), counter, spill_dir) as dedup:
        yield from finish(dedup, config, counter, near_pairs)
    stats.counts["normalised"] = normaliser.changed
    stats.figures["by_source"] = counter.by_source
    stats.figures["faults"] = counter.faults
    if excluded is not None:
        excluded.extend(counter.excluded)
    stats.figures["near_duplicate_pairs"] = len(near_pairs) if config.near_duplicates != "off" else None


# ---------------------------------------------------------------------------------------------
# stage folder


def _jsonl(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def resolve_sources(sources: Iterable[Source], domain: str | None = None) -> list[SourceSpec]:
    """Parse sources; ``domain`` pins those without their own ``@domain``."""
    specs = []
    for source in sources:
        spec = SourceSpec.parse(source)
        if domain and not spec.domain:
            spec = SourceSpec(spec.format, spec.path, domain, dict(spec.options))
        specs.append(spec)
    if not specs:
        raise ValueError("no sources given")
    return specs


def source_paths(specs: Iterable[SourceSpec]) -> list[Path]:
    """The paths the sources read (a glob's folder), which no output folder may be or sit inside."""
    return [Path(s.path.split("*", 1)[0] or ".") for s in specs]


def _fingerprint(specs: list[SourceSpec]) -> list[list[Any]]:
    """(path, size, mtime) of every input file, so a changed input makes the stage stale."""
    out = []
    for spec in specs:
        for path in spec.files():
            st = path.stat()
            out.append([str(path.resolve()), st.st_size, st.st_mtime_ns])
    return out


def open_stage(sources: list[Source], out_dir: Path, config: IngestConfig) -> Opened:
    specs = resolve_sources(sources, config.domain)
    params = {"sources": [str(s) for s in specs], "files": _fingerprint(specs),
              "config": config.model_dump(exclude={"progress"})}
    out_dir = claim_output(out_dir, STAGE, source_paths(specs))
    return Opened(STAGE, config, [s.path for s in specs], out_dir, params, extra={"specs": specs})


def data_files(config: IngestConfig) -> list[Path]:
    """The query packs that place a record in its domain."""
    return [Path(config.querypacks) if config.querypacks else DOMAIN_PACKS]


def work(opened: Opened, runtime: RuntimeConfig) -> io.StageStats:
    """Ingest the sources. De-duplication is one global step, so ``runtime`` is not used. The records (and the
    dropped ones) stream through a scratch folder, so memory stays bounded and a failed (strict) run leaves a
    previous output untouched: the stage folder is opened only once they all were read."""
    config, out_dir = opened.config, opened.out
    near_pairs: list[dict[str, Any]] = []
    excluded: list[dict[str, Any]] = []
    partial = out_dir / PARTIAL_DIR
    shutil.rmtree(partial, ignore_errors=True)  # left by a killed run
    try:
        with io.ShardWriter(partial, config.shard_size) as scratch, \
                io.ExclusionWriter(partial, config.shard_size) as exclusions:
            stats = io.StageStats(STAGE, unit="abstracts", exclusions=exclusions)
            for abstract in ingest(opened.extra["specs"], config, stats, near_pairs, excluded, spill_dir=partial):
                scratch.add(abstract)
        opened.begin()
        io.write_text_atomic(out_dir / NEAR_DUPLICATES_FILE, _jsonl(near_pairs))
        io.write_text_atomic(out_dir / CONFLICTS_FILE, _jsonl(excluded))
        io.replace_shards(partial, out_dir, io.EXCLUDED_PREFIX)
        io.write_shards(out_dir, io.read_records(partial, Abstract), shard_size=config.shard_size)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return stats


stage = Stage(STAGE, IngestConfig, open_stage, work, reads=(SOURCES,), writes="abstracts", module=__name__,
              data_files=data_files, begins_itself=True)


def run_stage(sources: list[Source], out_dir: str | Path, config: IngestConfig | dict | None = None,
              runtime: RuntimeConfig | None = None) -> dict:
    """Ingest ``sources`` into the stage folder ``out_dir``; returns the stats dict (resumable)."""
    return execute(stage, sources, out_dir, config, runtime)


# ---------------------------------------------------------------------------------------------
# CLI


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("sources", nargs="*", metavar="SOURCE",
                        help="FORMAT:PATH[@domain] (PATH: file, directory or glob); formats: pubmed_xml, medline, "
                             "europepmc_json, jsonl, csv, tsv, cord19, pubmedqa, pubtator, scifact_corpus; "
                             "table options as csv[text=COLUMN,pmid=COLUMN]:PATH")
    parser.add_argument("--sources-file", action="append", default=[], metavar="YAML",
                        help="a YAML list of sources (e.g. builder/configs/shared_sources.yaml); repeatable")
    parser.add_argument("--out", required=True, help="output stage folder")
    add_config_arguments(parser, IngestConfig, options={"domain": {"choices": DOMAIN_NAMES},
                                                        "fallback_domain": {"choices": DOMAIN_NAMES}})
    parser.add_argument("--drop-near-duplicates", dest="near_duplicates", action="store_const", const="drop",
                        help="--near-duplicates drop")
    add_force_argument(parser)


def read_sources_file(path: str | Path) -> list[Any]:
    import yaml

    data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a YAML list of sources")  # noqa: TRY004 (the CLI reports ValueErrors)
    return data


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    sources = list(args.sources) + [s for f in args.sources_file for s in read_sources_file(f)]
    config = config_from_args(IngestConfig, args)
    if args.force:
        claim_output(args.out, STAGE, source_paths(resolve_sources(sources, config.domain)), force=True)
    stats = run_stage(sources, args.out, config)
    print(json.dumps({k: v for k, v in stats.items() if k in ("unit", "seen", "kept", "by_domain", FALLBACK)
                      or k.startswith(io.DROPPED)}, indent=2))
    if stats.get(io.DROPPED_TOTAL):
        print(f"dropped records, with their reasons: {Path(args.out) / io.EXCLUDED_PREFIX}-*.parquet "
              "(biodivergence_dataset.io.read_exclusions)", file=sys.stderr)  # stdout stays one JSON object
    return 0
