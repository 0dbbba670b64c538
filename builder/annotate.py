"""Stage 5, silver annotation: CandidatePair → Example (paper §5.2, appendix I).

``biodivergence annotate PAIRS_DIR --out DIR --annotator SPEC [--concurrency N]`` with SPEC
``reader`` (default: the learned finding reader, ``reader:PATH`` for another) | ``frames`` | ``heuristic`` |
``judge:PATH`` | ``openai:URL?model=NAME`` | ``ollama:URL?model=NAME``,
repeated for a panel whose consensus is the release label (``builder.annotators.panel``).

Every finished pair is appended durably to ``annotations.jsonl`` (local results in batches)
and every server attempt to ``raw_responses.jsonl`` as soon as it is answered, so a run killed mid-way and started again loses
no pair and sends no answered pair again (an answer received but not yet recorded as a result is
taken from ``raw_responses.jsonl``). Answers are validated and repaired (``builder.repair``): one whose
conflict type is outside the ontology, or an empty one, is a failed attempt (``invalid_answer``), never a
label. Each request has one total deadline (``--timeout``), waits between attempts follow the retry policy
shared with ``collect`` (``builder.http``: ``Retry-After`` honoured up to ``--max-backoff``), and Ctrl-C
cancels the requests in flight at once. After the last failed attempt a pair falls back to the local
members (the reader annotator when the panel has none), recorded as such in
``failures.jsonl`` with its retry history; above ``--max-fallback-share`` the run fails saying why.
When the server cannot be reached at all the run stops with an error instead, and the same command
resumes it. ``--overwrite`` (other settings) removes only
the files this stage wrote and keeps the stored answers, reused where provider, model and prompt
version match (``--forget-cache`` deletes them too); a line torn by a kill is mended before appending.
The finished folder holds Parquet shards of Example records, ``stats.json``, ``annotation_manifest.json``,
``provenance.json``, ``manifest.json`` and ``_SUCCESS`` (last).
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import TYPE_CHECKING, Any

from biodivergence_dataset.arguments import add_config_arguments, config_from_args
from biodivergence_dataset.io import (
    BY_DOMAIN,
    MANIFEST_FILE,
    STATS_FILE,
    SUCCESS_MARKER,
    StageStats,
    as_stored,
    done_fingerprint,
    is_done,
    read_jsonl,
    read_manifest,
    read_records,
    read_stats,
    shard_paths,
    write_json_atomic,
    write_shards,
)
from biodivergence_dataset.records import CandidatePair, Example

from .annotate_config import AnnotateConfig
from .annotators import ChatBackend, ServerUnreachable, make_backend, parse_json_lenient
from .annotators.panel import disagree, panel_agreement
from .folders import add_force_argument, claim_output
from .http import Cancelled, RetryPolicy
from .pair_annotator import FAILURES_FILE, RAW_FILE, SOURCE_FALLBACK, JsonlLog, Outcome, PairAnnotator
from .prompt import PROMPT_VERSION, prompt_fingerprint
from .repair import InvalidAnswer
from .stage import CODE, DATA, Opened, Stage, execute

if TYPE_CHECKING:
    from .runtime import RuntimeConfig

STAGE = "annotate"
ANNOTATIONS_FILE = "annotations.jsonl"
ANNOTATION_MANIFEST_FILE = "annotation_manifest.json"
PROVENANCE_FILE = "provenance.json"
STATE_FILES = (ANNOTATIONS_FILE, RAW_FILE, FAILURES_FILE)
#: The parameter that holds the candidate-pair folder's content fingerprint.
INPUT_KEY = "pairs"
#: Heuristic results are cheap to redo, so they are made durable in batches (one fsync each).
HEURISTIC_BATCH = 256


# --------------------------------------------------------------------------- state on disk


def _load_pairs(pairs_dir: Path, config: AnnotateConfig, stats: StageStats) -> list[CandidatePair]:
    pairs, seen = [], set()
    for pair in read_records(pairs_dir, CandidatePair):
        stats.seen += 1
        if pair.pair_id in seen:
            stats.drop("duplicate_pair_id")
            continue
        seen.add(pair.pair_id)
        pairs.append(pair)
        if config.limit is not None and len(pairs) >= config.limit:
            break
    return pairs


def _prepare_out_dir(out_dir: Path, params: dict[str, Any], config: AnnotateConfig) -> None:
    """Keep a partial run with the same parameters; refuse (or, with overwrite, clear) a different one.

    New candidate pairs (another input fingerprint, same settings), other code or other data files restart the labels
    but keep the stored LLM answers, so no question answered before is asked again and no label of a vanished
    pair or of other code survives."""
    has_state = any((out_dir / f).exists() for f in STATE_FILES)
    if has_state and (out_dir / MANIFEST_FILE).exists():
        manifest = read_manifest(out_dir)
        previous = manifest.get("params") or {}
        # new pairs, or labels of other code: relabel, keeping the answers
        relabel = any(previous.get(k) != params[k] for k in (INPUT_KEY, CODE, DATA))
        if relabel and _settings(previous) == _settings(as_stored(params)):
            _remove_stage_files(out_dir, forget_cache=False)
        elif previous != as_stored(params):
            if not config.overwrite:
                before, now = _settings(previous), _settings(as_stored(params))
                differ = sorted(k for k in before.keys() | now.keys() if before.get(k) != now.get(k))
                raise ValueError(f"{out_dir} holds annotations made with other parameters ({', '.join(differ)}); "
                                 "use another output folder, or overwrite it (--overwrite; in a build config: "
                                 "annotate: {overwrite: true})")
            _remove_stage_files(out_dir, config.forget_cache)
    elif has_state and config.overwrite:
        _remove_stage_files(out_dir, config.forget_cache)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / SUCCESS_MARKER).unlink(missing_ok=True)


def _settings(params: dict[str, Any]) -> dict[str, Any]:
    """The parameters without the input, the code and the data files (``pairs_dir`` held the input's path before
    fingerprints)."""
    return {k: v for k, v in params.items() if k not in (INPUT_KEY, CODE, DATA, "pairs_dir")}


def _remove_stage_files(out_dir: Path, forget_cache: bool) -> None:
    """Remove what this stage wrote (other files stay); the stored LLM answers too only if ``forget_cache``."""
    written = [ANNOTATIONS_FILE, FAILURES_FILE, ANNOTATION_MANIFEST_FILE, PROVENANCE_FILE, MANIFEST_FILE, STATS_FILE,
               SUCCESS_MARKER] + ([RAW_FILE] if forget_cache else [])
    for path in [out_dir / name for name in written] + shard_paths(out_dir):
        path.unlink(missing_ok=True)


def _finished(out_dir: Path, except_fallbacks: bool = False) -> dict[str, dict[str, Any]]:
    """The recorded outcome per pair (the last one wins); without the fallbacks if asked (to retry them)."""
    rows = {row["pair_id"]: row for row in read_jsonl(out_dir / ANNOTATIONS_FILE)}
    return {k: r for k, r in rows.items() if not (except_fallbacks and r["source"] == SOURCE_FALLBACK)}


class TooManyFallbacks(RuntimeError):
    """More pairs fell back to the local annotators than ``max_fallback_share`` allows."""


def fallback_line(stats: dict[str, Any]) -> str:
    """How many pairs fell back to the local annotators after failed LLM attempts, their share, and why."""
    why = "; ".join(f"{n} {status} (e.g. {example})" for status, (n, example) in
                    (stats.get("fallback_reasons") or {}).items())
    return (f"{stats.get('fallbacks', 0)} of {stats.get('kept', 0)} pairs ({stats.get('fallback_share', 0.0):.1%}) "
            f"fell back to the local annotators after failed LLM attempts (listed in {FAILURES_FILE})"
            + (f"; last attempt: {why}" if why else ""))


def _fallback_reasons(out_dir: Path, rows: dict[str, dict[str, Any]]) -> dict[str, list]:
    """Why the pairs that fell back failed: the status of each one's last attempt → [count, one error]."""
    last = {f["pair_id"]: f["attempts"][-1] for f in read_jsonl(out_dir / FAILURES_FILE) if f.get("attempts")}
    reasons: dict[str, list] = {}
    for pair_id, row in sorted(rows.items()):
        attempt = last.get(pair_id) if row["source"] == SOURCE_FALLBACK else None
        if attempt is not None:
            entry = reasons.setdefault(attempt["status"], [0, str(attempt.get("error", ""))[:160]])
            entry[0] += 1
    return dict(sorted(reasons.items(), key=lambda kv: -kv[1][0]))


def _check_fallbacks(stats: StageStats, config: AnnotateConfig, out_dir: Path) -> None:
    """Refuse to finish the stage when the fallback share is above ``max_fallback_share`` (stats are kept)."""
    if stats.figures["fallback_share"] > config.max_fallback_share:
        stats.write(out_dir)
        raise TooManyFallbacks(f"{out_dir}: {fallback_line(stats.to_dict())}, above --max-fallback-share "
                               f"{config.max_fallback_share:.0%}; fix the server and re-run with --retry-fallbacks, "
                               f"or accept them with a higher --max-fallback-share")


def _answered(out_dir: Path, backend: ChatBackend) -> dict[str, tuple[dict[str, Any], int]]:
    """Last parseable answer of this provider, model and prompt per pair in raw_responses.jsonl, with its attempt."""
    out = {}
    for row in read_jsonl(out_dir / RAW_FILE):
        same_asker = (row.get("provider"), row.get("model"), row.get("prompt_version")) == (
            backend.provider, backend.model, PROMPT_VERSION)
        if row.get("status") == "ok" and same_asker:
            out[row["pair_id"]] = (parse_json_lenient(row["content"]), row["attempt"])
    return out


# --------------------------------------------------------------------------- running


def _progress(total: int, enabled: bool):
    from tqdm import tqdm

    return tqdm(total=total, desc="annotate", unit="pair", disable=not enabled or total == 0)


def _run_concurrently(todo: list[CandidatePair], annotator: PairAnnotator, record, concurrency: int) -> None:
    """Keep ``concurrency`` pairs in flight; a lost server lets what is in flight finish, an interrupt
    cancels it (no request or retry is sent after Ctrl-C; the answers recorded so far are kept)."""
    pending: Iterator[CandidatePair] = iter(todo)
    inflight: dict[Future, CandidatePair] = {}
    pool = ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix="annotate")

    def fill() -> None:
        while len(inflight) < max(1, concurrency):
            pair = next(pending, None)
            if pair is None:
                return
            inflight[pool.submit(annotator.llm_outcome, pair)] = pair

    stop: BaseException | None = None
    try:
        fill()
        while inflight:
            finished, _ = wait(list(inflight), return_when=FIRST_COMPLETED)
            for fut in finished:
                inflight.pop(fut)
                try:
                    record(fut.result())
                except ServerUnreachable as exc:
                    stop = stop or exc
            if stop is None:
                fill()
    except KeyboardInterrupt as exc:  # abandon the requests in flight at once, record what had finished
        stop = exc
        annotator.backend.cancel()
        for fut in list(inflight):
            try:
                record(fut.result())
            except (Cancelled, ServerUnreachable):
                pass
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    if stop is not None:
        raise stop


def _panel_first(todo: list[CandidatePair], annotator: PairAnnotator, record_many, budget: int | None
                 ) -> list[CandidatePair]:
    """With an LLM in a panel: record the local consensus of the pairs the local members agree on (and of
    those past the LLM budget); return the pairs left for the LLM, the disputed ones first by pair id."""
    disputed, settled = [], []
    for start in range(0, len(todo), HEURISTIC_BATCH):
        chunk = todo[start:start + HEURISTIC_BATCH]
        for pair, votes in zip(chunk, annotator.local_votes(chunk), strict=True):
            (disputed if disagree(votes) or len(votes) == 1 else settled).append((pair, votes))
    disputed.sort(key=lambda pv: pv[0].pair_id)
    ask = disputed if budget is None else disputed[:budget]
    annotator.disputed_votes.update((pair.pair_id, votes) for pair, votes in ask)
    rest = settled + disputed[len(ask):]
    for start in range(0, len(rest), HEURISTIC_BATCH):
        chunk = rest[start:start + HEURISTIC_BATCH]
        record_many(annotator.local_outcomes([p for p, _ in chunk], votes=[v for _, v in chunk]))
    return [pair for pair, _ in ask]


def _busy_share(intervals: list[tuple[float, float]], wall_s: float) -> float:
    """Share of the wall time during which at least one request was with the server."""
    busy, end = 0.0, float("-inf")
    for s, e in sorted(intervals):
        if e > end:
            busy += e - max(s, end)
            end = e
    return min(1.0, busy / wall_s) if wall_s > 0 else 0.0


def _stats(pairs: list[CandidatePair], rows: dict[str, dict[str, Any]], stats: StageStats,
           figures: dict[str, Any]) -> tuple[list[Example], Counter]:
    examples, repairs = [], Counter()
    for pair in pairs:
        row = rows[pair.pair_id]
        ex = Example.parse(row["example"], where=f"{ANNOTATIONS_FILE}:{pair.pair_id}")
        examples.append(ex)
        repairs.update(row["repairs"])
        stats.count("by_conflict_type", ex.conflict_type)
        stats.count("by_annotator_kind", ex.annotator_kind)
        stats.count("by_comparability", ex.comparability or "not_recorded")
        stats.count("by_source", row["source"])
        stats.count(BY_DOMAIN, ex.domain)
        for axis in ex.divergence_axes:
            stats.count("by_axis", axis)
        if ex.dominant_confounder:
            stats.count("by_dominant_confounder", ex.dominant_confounder)
    stats.kept = len(examples)
    for name, n in repairs.items():
        stats.count("repairs", name, n)
    confidences = [e.confidence for e in examples]
    stats.figures.update(figures, mean_confidence=round(sum(confidences) / len(confidences), 4) if examples else 0.0,
                         repairs_total=sum(repairs.values()))
    return examples, repairs


def open_stage(pairs_dir: str | Path, out_dir: Path, config: AnnotateConfig) -> Opened:
    pairs_dir = Path(pairs_dir)
    if not is_done(pairs_dir):
        raise ValueError(f"{pairs_dir}: not a finished stage folder (no _SUCCESS); run `biodivergence mine` first")
    out_dir = claim_output(out_dir, STAGE, [pairs_dir])
    params = {INPUT_KEY: done_fingerprint(pairs_dir), **config.identity()}
    return Opened(STAGE, config, [str(pairs_dir)], out_dir, params)


def retries_fallbacks(opened: Opened) -> bool:
    """A finished run is redone when asked to retry the pairs that fell back to the local annotators."""
    return opened.config.retry_fallbacks and bool(read_stats(opened.out).get("fallbacks"))


def work(opened: Opened, runtime: RuntimeConfig) -> StageStats:
    """Annotate the pairs, resuming a killed run's labels. Requests run ``config.concurrency`` at a time in this
    process, so ``runtime`` is not used."""
    config, out_dir, pairs_dir = opened.config, opened.out, Path(opened.inputs[0])
    spec = config.llm_spec
    _prepare_out_dir(out_dir, opened.params, config)
    opened.begin()
    stats = StageStats(STAGE, unit="pairs")
    pairs = _load_pairs(pairs_dir, config, stats)
    backend = spec and make_backend(spec, timeout_s=config.timeout_s, max_tokens=config.max_tokens,
                                    temperature=config.temperature, max_answer_bytes=config.max_answer_bytes)
    annotator = PairAnnotator(backend, config, out_dir)
    rows = _finished(out_dir, except_fallbacks=config.retry_fallbacks)
    resumed = len(rows)
    raw_before = sum(1 for _ in read_jsonl(out_dir / RAW_FILE))
    results = JsonlLog(out_dir / ANNOTATIONS_FILE)
    started, t0 = time.time(), time.perf_counter()
    try:
        todo = [p for p in pairs if p.pair_id not in rows]
        with _progress(len(todo), config.progress) as bar:
            def record_many(outcomes: list[Outcome]) -> None:
                batch = [o.row() for o in outcomes]
                results.extend(batch)
                rows.update((r["pair_id"], r) for r in batch)
                bar.update(len(batch))

            def record(outcome: Outcome) -> None:
                record_many([outcome])

            if backend is not None and len(config.specs) > 1:
                todo = _panel_first(todo, annotator, record_many, config.llm_budget)
            if backend is None:
                for start in range(0, len(todo), HEURISTIC_BATCH):
                    record_many(annotator.local_outcomes(todo[start:start + HEURISTIC_BATCH]))
            else:
                answered = _answered(out_dir, backend)
                for pair in [p for p in todo if p.pair_id in answered]:
                    answer, attempt = answered[pair.pair_id]
                    try:
                        record(annotator.from_answer(pair, answer, attempt, reused=True))
                    except InvalidAnswer:  # stored by older code that took it for a label: ask again
                        pass
                todo = [p for p in todo if p.pair_id not in rows]
                if todo:
                    backend.check(config.max_attempts, RetryPolicy(config.backoff_s, config.max_backoff_s))
                    _run_concurrently(todo, annotator, record, config.concurrency)
    finally:
        if backend is not None:
            backend.close()
    wall = time.perf_counter() - t0
    raw_rows = list(read_jsonl(out_dir / RAW_FILE))
    fallbacks = sum(1 for r in rows.values() if r["source"] == SOURCE_FALLBACK)
    figures = {
        "requests_total": len(raw_rows), "requests_this_run": len(raw_rows) - raw_before,
        "resumed_pairs": resumed, "annotated_this_run": len(rows) - resumed,
        "reused_raw_responses": sum(1 for r in rows.values() if r["reused_raw"]),
        "fallbacks": fallbacks, "fallback_share": round(fallbacks / len(rows), 4) if rows else 0.0,
        "fallback_reasons": _fallback_reasons(out_dir, rows) if fallbacks else {},
        "elapsed_s": round(wall, 3), "pairs_per_s": round((len(rows) - resumed) / wall, 3) if wall > 0 else 0.0,
        "server_busy_share": round(_busy_share(annotator.intervals, wall), 4) if backend is not None else None,
    }
    examples, repairs = _stats(pairs, rows, stats, figures)
    _write_run_files(out_dir, pairs_dir, annotator, examples, config, stats, repairs, started)
    _check_fallbacks(stats, config, out_dir)
    write_shards(out_dir, examples, shard_size=config.shard_size)
    return stats


stage = Stage(STAGE, AnnotateConfig, open_stage, work, reads=("pairs",), writes="annotations", module=__name__,
              data_files=AnnotateConfig.data_files, redo=retries_fallbacks, locks=True, begins_itself=True)


def run_stage(pairs_dir: str | Path, out_dir: str | Path, config: AnnotateConfig | None = None,
              runtime: RuntimeConfig | None = None) -> dict[str, Any]:
    """Annotate the CandidatePair folder ``pairs_dir`` into ``out_dir``; returns the stats dict. A second annotate
    of the same folder fails at once, naming the first's PID."""
    return execute(stage, pairs_dir, out_dir, config, runtime)


def _write_run_files(out_dir: Path, pairs_dir: Path, annotator: PairAnnotator, examples: list[Example],
                     config: AnnotateConfig, stats: StageStats, repairs: Counter, started: float) -> None:
    from biodivergence_dataset import __version__

    backend = annotator.backend
    members = [m.annotator_id for m in annotator.members]
    counts = stats.to_dict()
    write_json_atomic(out_dir / ANNOTATION_MANIFEST_FILE, {
        "queue": str(pairs_dir.resolve()),
        "annotator": [str(s) for s in config.specs],
        "provider": backend.provider if backend else "+".join(s.backend for s in config.specs),
        "model": backend.model if backend else "+".join(members),
        "panel_agreement": panel_agreement(examples),
        "prompt_version": PROMPT_VERSION if backend else "",
        "sample_count": stats.kept,
        "counts": {k: counts.get(k, {}) for k in ("by_conflict_type", "by_annotator_kind", "by_source", "by_axis",
                                                   "by_dominant_confounder", BY_DOMAIN)},
        "fallbacks": stats.figures["fallbacks"],
        "requests_total": stats.figures["requests_total"],
        "repairs": dict(sorted(repairs.items())),
        "repairs_total": sum(repairs.values()),
    })
    write_json_atomic(out_dir / PROVENANCE_FILE, {
        "stage": STAGE,
        "annotator": [str(s) for s in config.specs],
        "backend": backend.settings() if backend else {"provider": "local", "model": "+".join(members)},
        "members": members,
        "prompt_version": PROMPT_VERSION,
        "prompt_fingerprint": prompt_fingerprint(),
        "execution": {k: v for k, v in config.model_dump().items() if k in ("concurrency", "timeout_s", "max_attempts",
                                                                        "backoff_s", "max_backoff_s")},
        "started": started,
        "finished": time.time(),
        "resumed_pairs": stats.figures["resumed_pairs"],
        "biodivergence_version": __version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
    })


# --------------------------------------------------------------------------- CLI


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("pairs_dir", help="candidate-pair folder written by `biodivergence mine`")
    parser.add_argument("--out", required=True, help="output folder (resumable)")
    add_config_arguments(parser, AnnotateConfig,
                         aliases={"timeout_s": "--timeout", "backoff_s": "--backoff", "max_backoff_s": "--max-backoff",
                                  "domain_packs": "--domain-pack"},
                         options={"annotator": {"nargs": None, "metavar": "SPEC"},  # one per use: repeat for a panel
                                  "domain_packs": {"metavar": "FILE"}})
    add_force_argument(parser)


def run(args: argparse.Namespace) -> int:
    config = config_from_args(AnnotateConfig, args)
    if args.force:
        claim_output(args.out, STAGE, [args.pairs_dir], force=True)
    stats = run_stage(args.pairs_dir, args.out, config)
    print(f"annotated {stats['kept']} pairs into {args.out}: {stats.get('by_conflict_type', {})}; "
          f"fallbacks {stats.get('fallbacks', 0)}, repairs {stats.get('repairs_total', 0)}")
    if stats.get("fallbacks"):
        print(f"warning: {fallback_line(stats)}; re-run with --retry-fallbacks to ask again", file=sys.stderr)
    return 0
