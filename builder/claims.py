"""Stage: Abstract → Claim (paper §5.1, appendix H).

Each abstract is split into sentences inside its structured sections; every sentence gets a
claim score from lexical and structural cues (result verbs, statistics, comparatives,
null findings, conclusion phrases; minus methods/objective/background phrasing) plus a
section prior (RESULTS/CONCLUSIONS favoured, BACKGROUND/OBJECTIVE/METHODS filtered).
Questions and speculative follow-ups ("further studies are needed") are filtered. A kept
sentence becomes a :class:`Claim` with a rule-based claim type (the ontology's cue
patterns), slots and entities from patterns and gazetteers (ontology axis cues, drug and
disease word forms, the abstract's own MeSH terms), negation/hedge flags and a confidence.

CLI: ``biodivergence claims ABSTRACTS_DIR --out DIR``.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from biodivergence_dataset import io, ontology
from biodivergence_dataset.arguments import add_config_arguments, config_from_args
from biodivergence_dataset.records import Abstract, Claim, ClaimFrame, claim_id_for

from . import sentences
from .claim_analysis import SCANNER, analyse_matches, confidence_from, position_bonus, score_matches
from .folders import add_force_argument, claim_output
from .frames import extract_frame
from .runtime import RuntimeConfig, ShardJob, check_stage_input, clear_tasks, run_sharded
from .sources.raw_records import BACKGROUND, CONCLUSIONS, METHODS, OBJECTIVE, RESULTS, UNASSIGNED, canonical_label
from .stage import Opened, Stage, execute

STAGE = "claims"


# --- sections -----------------------------------------------------------------------------------------
def section_category(label: str | None) -> str | None:
    """The NLM category of a structured-abstract label (the readers' one mapping), or None if it has none."""
    category = canonical_label(label) if label else UNASSIGNED
    return None if category == UNASSIGNED else category


# --- configuration ------------------------------------------------------------------------------------
class ClaimsConfig(BaseModel):
    """Parameters of claim extraction (a YAML ``claims:`` section maps onto this)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)  # nan / inf: no score or bound

    min_score: float = Field(2.0, description="cue score (with the section bonus or position prior) a sentence "
                                              "needs to be a claim")
    min_words: int = Field(5, ge=1, description="a shorter sentence is no claim (too_short)")
    max_words: int = Field(80, ge=1, description="a longer sentence is no claim (too_long)")
    max_claims_per_abstract: int | None = Field(10, ge=1, description="keep the best-scoring claims of an "
                                                                      "abstract up to this many")
    filtered_sections: list[str] = Field(default_factory=lambda: [BACKGROUND, OBJECTIVE, METHODS],
                                         description="sections whose sentences are never claims")
    section_bonus: dict[str, float] = Field(default_factory=lambda: {RESULTS: 1.0, CONCLUSIONS: 1.5})
    default_domain: str | None = Field(None, description="domain for abstracts that have none (otherwise they "
                                                         "are dropped and counted)")
    keep_exclusions: bool = Field(False, description="keep every dropped sentence with its reason in "
                                                     "OUT/excluded-*.parquet (io.read_exclusions)")
    shard_size: int = Field(io.DEFAULT_SHARD_SIZE, ge=1, description="records per output shard")


# --- extraction ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SentenceUnit:
    start: int
    end: int
    section: str | None


def sentence_units(abstract: Abstract) -> list[SentenceUnit]:
    """Sentences of the abstract within its sections (and the text between them), inline headings
    ("RESULTS: …") removed from the span and used as the section when none is declared."""
    text = abstract.text
    regions: list[tuple[int, int, str | None]] = []
    cursor = 0
    for sec in sorted(abstract.sections, key=lambda s: (s.start, s.end)):
        if sec.start > cursor:
            regions.append((cursor, sec.start, None))
        regions.append((max(sec.start, cursor), sec.end, section_category(sec.label)))
        cursor = max(cursor, sec.end)
    if cursor < len(text):
        regions.append((cursor, len(text), None))
    units = []
    for r_start, r_end, category in regions:
        inline = None  # an inline heading labels the sentences after it, up to the next heading
        for i, (s, e) in enumerate(_heading_pieces(text, r_start, r_end)):
            heading, s = sentences.strip_heading(text, s, e, is_heading=_is_section_heading)
            if heading and i and section_category(heading) != category:
                category = None  # a heading inside a declared section, after its start, begins another one
            inline = section_category(heading) if heading else inline
            if s < e:
                units.append(SentenceUnit(s, e, category or inline))
    return units


def _heading_pieces(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Sentence spans of ``text[start:end]``, each also cut before a section heading inside it."""
    return [piece for s, e in sentences.split_spans(text, start, end)
            for piece in sentences.heading_cuts(text, s, e, _is_section_heading)]


def _is_section_heading(words: str) -> bool:
    return section_category(words) is not None


def _drop_reason(sentence: str, unit: SentenceUnit, config: ClaimsConfig) -> str | None:
    """Why a sentence cannot be a claim before any scoring (None: score it)."""
    if unit.section in config.filtered_sections:
        return "filtered_section"
    n_words = sentence.count(" ") + 1
    if n_words < config.min_words:
        return "too_short"
    if n_words > config.max_words:
        return "too_long"
    if sentence.endswith("?"):
        return "question"
    return None


@dataclass(frozen=True)
class _Candidate:
    score: float
    unit: SentenceUnit
    sentence: str
    matches: dict


def extract_claims(abstract: Abstract, domain: str, config: ClaimsConfig, stats: io.StageStats) -> list[Claim]:
    """The claims of one abstract, best-scoring first up to the per-abstract cap, then in text order."""
    units = sentence_units(abstract)
    kept: list[_Candidate] = []
    for i, unit in enumerate(units):
        stats.seen += 1
        sentence = abstract.text[unit.start:unit.end]
        reason = _drop_reason(sentence, unit, config)
        if reason is None:
            matches = SCANNER.scan(sentence)
            score, speculative = score_matches(matches)
            score += config.section_bonus.get(unit.section, 0.0) if unit.section else position_bonus(i, len(units))
            if speculative:
                reason = "speculative"
            elif score < config.min_score:
                reason = "low_score"
            else:
                kept.append(_Candidate(score, unit, sentence, matches))
                continue
        _drop_sentence(stats, reason, abstract, unit)
    cap = config.max_claims_per_abstract or len(kept)
    if len(kept) > cap:
        ranked = sorted(kept, key=lambda c: (-c.score, c.unit.start))
        for c in ranked[cap:]:
            _drop_sentence(stats, "over_abstract_cap", abstract, c.unit)
        kept = ranked[:cap]
    claims = [_make_claim(abstract, domain, c, config) for c in sorted(kept, key=lambda c: c.unit.start)]
    stats.kept += len(claims)
    return claims


def _drop_sentence(stats: io.StageStats, reason: str, abstract: Abstract, unit: SentenceUnit) -> None:
    """Count one dropped sentence (kept with its reason when the stage keeps exclusions)."""
    stats.drop(reason, record_id=f"{abstract.article_uid}:{unit.start}-{unit.end}",
               record={"article_uid": abstract.article_uid, "start": unit.start, "end": unit.end,
                       "section": unit.section, "sentence": abstract.text[unit.start:unit.end]})


def _make_claim(abstract: Abstract, domain: str, cand: _Candidate, config: ClaimsConfig) -> Claim:
    a = analyse_matches(cand.sentence, cand.matches, abstract.mesh_terms)
    unit = cand.unit
    return Claim(
        claim_id=claim_id_for(abstract.article_uid, unit.start, unit.end),
        article_uid=abstract.article_uid,
        domain=domain,
        source=abstract.source,
        sentence=cand.sentence,
        claim_type=a.claim_type,
        sentence_start=unit.start,
        sentence_end=unit.end,
        section=unit.section,
        negated=a.negated,
        hedged=a.hedged,
        entities=a.entities,
        slots=a.slots,
        confidence=confidence_from(cand.score, config.min_score, a.hedged),
        pub_year=abstract.year,
        journal=abstract.journal,
        frame=ClaimFrame(**extract_frame(cand.sentence).as_record()),
    )


def iter_claims(abstracts: Iterable[Abstract], config: ClaimsConfig, stats: io.StageStats) -> Iterator[Claim]:
    """The stage as a generator: claims of every abstract; abstract-level figures filled in at the end."""
    n_abstracts = n_yielding = 0
    for abstract in abstracts:
        n_abstracts += 1
        domain = abstract.domain or config.default_domain
        if domain is None:  # its sentences are seen and dropped (the stage counts sentences)
            units = sentence_units(abstract)
            stats.seen += len(units)
            for unit in units:
                _drop_sentence(stats, "abstract_without_domain", abstract, unit)
            stats.figures["abstracts_without_domain"] = stats.figures.get("abstracts_without_domain", 0) + 1
            continue
        claims = extract_claims(abstract, domain, config, stats)
        n_yielding += bool(claims)
        for claim in claims:
            stats.count("claims_by_type", claim.claim_type)
            stats.count(io.BY_DOMAIN, claim.domain)
            stats.count("claims_by_section", claim.section or "NONE")
            yield claim
    stats.figures.update(corpus_figures(n_abstracts, n_yielding, stats))


def corpus_figures(n_abstracts: int, n_yielding: int, stats: io.StageStats) -> dict:
    """Abstract-level yield, claims per abstract, claim-type shares, share of claims in CONCLUSIONS."""
    n_claims = stats.kept
    by_type = stats.counts.get("claims_by_type", {})
    by_section = stats.counts.get("claims_by_section", {})
    return {
        "abstracts": n_abstracts,
        "abstracts_with_claims": n_yielding,
        "abstract_yield": round(n_yielding / n_abstracts, 4) if n_abstracts else 0.0,
        "claims_per_abstract": round(n_claims / n_abstracts, 4) if n_abstracts else 0.0,
        "claims_per_yielding_abstract": round(n_claims / n_yielding, 4) if n_yielding else 0.0,
        "claim_type_share": {t: round(by_type.get(t, 0) / n_claims, 4) if n_claims else 0.0
                             for t in ontology.CLAIM_TYPE_NAMES},
        "share_in_conclusions": round(by_section.get(CONCLUSIONS, 0) / n_claims, 4) if n_claims else 0.0,
    }


# --- stage --------------------------------------------------------------------------------------------
def map_abstracts(abstracts: Iterable[Abstract], config: ClaimsConfig, stats: io.StageStats) -> Iterator[Claim]:
    """One rank's work (see :mod:`builder.runtime`): the claims of its slice of abstracts, with a progress bar."""
    return iter_claims(_progress(abstracts, STAGE), config, stats)


def finish_stats(stats: io.StageStats) -> None:
    """Recompute the corpus figures of the ranks' summed stats, in the order one task writes them."""
    figures = stats.figures
    kept = {k: figures[k] for k in ("abstracts_without_domain",) if k in figures}
    stats.figures = {**kept, **corpus_figures(figures.get("abstracts", 0), figures.get("abstracts_with_claims", 0),
                                              stats)}


def open_stage(abstracts_dir: str | Path, out_dir: Path, config: ClaimsConfig) -> Opened:
    abstracts_dir = check_stage_input(abstracts_dir, "abstracts")
    if config.default_domain is not None:
        ontology.check_label("domain", config.default_domain)
    out_dir = claim_output(out_dir, STAGE, [abstracts_dir])
    params = {"config": config.model_dump(), "input": io.done_fingerprint(abstracts_dir)}
    return Opened(STAGE, config, [str(abstracts_dir)], out_dir, params)


def work(opened: Opened, runtime: RuntimeConfig) -> io.StageStats:
    """Extract the claims on ``runtime.tasks`` ranks of its executor; the output does not depend on their number."""
    config, out_dir = opened.config, opened.out
    # kept: the sentences that became claims
    job = ShardJob(STAGE, map_abstracts, config, Path(opened.inputs[0]), Abstract, Claim, "sentences",
                   config.shard_size, keep_exclusions=config.keep_exclusions)
    claims, stats = run_sharded(job, out_dir, runtime)
    finish_stats(stats)
    io.write_shards(out_dir, claims, shard_size=config.shard_size)
    clear_tasks(out_dir)
    return stats


stage = Stage(STAGE, ClaimsConfig, open_stage, work, reads=("gathered",), writes="claims", module=__name__)


def run_stage(abstracts_dir: str | Path, out_dir: str | Path, config: ClaimsConfig | None = None,
              runtime: RuntimeConfig | None = None) -> dict:
    """Extract claims from a finished Abstract stage folder into ``out_dir`` (resumable)."""
    return execute(stage, abstracts_dir, out_dir, config, runtime)


def _progress(items: Iterable, desc: str) -> Iterable:
    from tqdm import tqdm

    return tqdm(items, desc=desc, unit=" abstracts", mininterval=2.0, leave=False)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("abstracts_dir", metavar="ABSTRACTS_DIR", help="finished ingest (Abstract) stage folder")
    parser.add_argument("--out", required=True, help="output folder for Claim shards")
    add_config_arguments(parser, ClaimsConfig, options={"default_domain": {"choices": ontology.DOMAIN_NAMES}})
    add_force_argument(parser)


def run(args: argparse.Namespace) -> int:
    config = config_from_args(ClaimsConfig, args)
    if args.force:
        claim_output(args.out, STAGE, [args.abstracts_dir], force=True)
    stats = run_stage(args.abstracts_dir, args.out, config)
    print(f"claims: {stats['kept']} claims from {stats.get('abstracts_with_claims', 0)} of "
          f"{stats.get('abstracts', 0)} abstracts (yield {stats.get('abstract_yield', 0):.1%}) -> {args.out}")
    return 0
