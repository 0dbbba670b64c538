"""The stage runtime: a stage's per-record work as a datatrove pipeline step, run by one of three executors.

A *sharded* stage (claim extraction, claim embeddings) declares a :class:`ShardJob`: the records it reads,
the pure function that maps them (``function(records, config, stats) -> records``) and its config. The
runner splits the input into ``tasks`` contiguous slices; rank ``r`` maps its slice and writes its records
and stats to ``<out>/.tasks/<key>/rank-<r>/``. datatrove's executor — ``LocalPipelineExecutor`` (the
default, used by the demo, tests and CI), ``SlurmPipelineExecutor`` or ``RayPipelineExecutor`` — runs the
ranks and records the finished ones (``completions/``), so a killed run re-runs only unfinished ranks. The
gather then concatenates the ranks' outputs in rank order and sums their stats: the same records in the same
order as one task, whatever ``tasks`` is. ``<key>`` hashes the job and the task count, so a changed config
or input never reuses a stale rank.

Global steps (de-duplication, the neighbour search, the consensus, the split, the audit, the release) run in
the build process; they read the gathered outputs.

Every stage, sharded or global, is a :class:`builder.stage.Stage` run by :func:`builder.stage.execute`, which hands
it this runtime; the build is a plain list of them.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import multiprocessing
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pyarrow.parquet as pq
from datatrove.pipeline.base import PipelineStep
from datatrove.utils.logging import logger as datatrove_logger
from pydantic import BaseModel, ConfigDict, Field, model_validator

from biodivergence_dataset import io
from biodivergence_dataset.interrupts import end_with, this_process

from .fingerprint import code_fingerprint

log = logging.getLogger(__name__)


def _plain_os_errors(record: dict) -> None:
    """A loguru patcher: a rank that fails on an OSError (a full disk, a read-only file system, a permission) is
    logged as its one-line message, without the traceback and local variables datatrove's ``logger.exception``
    would print on the terminal (and in which a value read by the rank could show); the command's own error line
    names the file. Any other exception keeps its traceback: that is a bug to report."""
    exception = record["exception"]
    if exception is not None and isinstance(exception.value, OSError):
        record["exception"] = None


# datatrove logs through loguru; the patcher holds for every rank this process or its workers run
datatrove_logger.configure(patcher=_plain_os_errors)

TASKS_DIR = ".tasks"
RANK_PREFIX = "rank-"


class SlurmOptions(BaseModel):
    """How the ranks are submitted as one Slurm array job (``sbatch``); the build waits for them."""

    model_config = ConfigDict(extra="forbid")

    partition: str
    time: str = "04:00:00"
    cpus_per_task: int = Field(2, ge=1)
    mem_per_cpu_gb: int = Field(4, ge=1)
    qos: str = "normal"
    job_name: str = "biodivergence"
    venv_path: str | None = None  # the activate script the job sources before running its rank
    sbatch_args: dict[str, str] = Field(default_factory=dict)  # extra ``#SBATCH --key=value`` lines
    poll_seconds: float = Field(30.0, gt=0)


class RayOptions(BaseModel):
    """Resources of one rank on a Ray cluster (``address``: an existing cluster; none: a local Ray)."""

    model_config = ConfigDict(extra="forbid")

    address: str | None = None
    cpus_per_task: int = Field(1, ge=1)
    mem_per_cpu_gb: float = Field(2.0, gt=0)


class RuntimeConfig(BaseModel):
    """The build config's ``runtime:`` section: which executor runs the sharded stages, with how many tasks."""

    model_config = ConfigDict(extra="forbid")

    executor: Literal["local", "slurm", "ray"] = "local"
    tasks: int = Field(1, ge=1)
    workers: int = Field(-1, ge=-1)  # ranks running at once; -1: as many as tasks (local, ray), no cap (slurm)
    slurm: SlurmOptions | None = None
    ray: RayOptions = Field(default_factory=RayOptions)

    @model_validator(mode="after")
    def _slurm_needs_options(self) -> RuntimeConfig:
        if self.executor == "slurm" and self.slurm is None:
            raise ValueError("executor: slurm needs a slurm: section with at least a partition")
        if self.workers == 0:
            raise ValueError("workers must be -1 (no cap) or at least 1")
        return self


@dataclass(frozen=True)
class ShardJob:
    """One sharded stage: map the ``reads`` records of ``input_dir`` through ``function`` with ``config``."""

    stage: str
    function: Callable[[Iterable[Any], Any, io.StageStats], Iterable[Any]]
    config: BaseModel
    input_dir: Path
    reads: type
    writes: type
    unit: str
    shard_size: int = io.DEFAULT_SHARD_SIZE
    #: Keep every record the function drops (``stats.drop(reason, record=…)``) with its reason: each rank
    #: writes ``excluded-*.parquet`` and the gather puts them beside the stage's output, in rank order.
    keep_exclusions: bool = False

    def key(self, tasks: int) -> str:
        """The task folder's name: changes with the function, config, input content and task count."""
        ident = {"function": f"{self.function.__module__}.{self.function.__qualname__}",
                 "config": self.config.model_dump(mode="json"), "input": io.done_fingerprint(self.input_dir),
                 "tasks": tasks, "exclusions": self.keep_exclusions,
                 "code": code_fingerprint(self.function.__module__)}
        return hashlib.sha1(json.dumps(ident, sort_keys=True, default=str).encode()).hexdigest()[:16]


def check_stage_input(stage_dir: str | Path, what: str) -> Path:
    """A finished stage folder, or a clear error saying what is wrong with it."""
    path = Path(stage_dir)
    if not path.is_dir():
        raise FileNotFoundError(f"{what} folder {path} does not exist")
    if not io.shard_paths(path):
        if io.is_done(path):
            return path  # a finished stage that produced no records
        raise ValueError(f"{what} folder {path} is empty: no part-*.parquet shards and no {io.SUCCESS_MARKER}")
    if not io.is_done(path):
        raise ValueError(f"{what} folder {path} is not a finished stage ({io.SUCCESS_MARKER} missing); re-run it")
    return path


def count_records(stage_dir: Path) -> int:
    """Rows in a stage folder's shards, from the Parquet footers (no row is read)."""
    return sum(pq.ParquetFile(p).metadata.num_rows for p in io.shard_paths(stage_dir))


def rank_slice(n: int, rank: int, world_size: int) -> tuple[int, int]:
    """The contiguous ``[start, stop)`` of ``n`` records that ``rank`` of ``world_size`` maps."""
    return n * rank // world_size, n * (rank + 1) // world_size


def slice_records(stage_dir: Path, model: type, start: int, stop: int) -> Iterator[Any]:
    """Records ``start`` to ``stop - 1`` of a stage folder; shards outside the range are not opened."""
    offset = 0
    for path in io.shard_paths(stage_dir):
        rows = pq.ParquetFile(path).metadata.num_rows
        if offset + rows > start and offset < stop:
            table = pq.read_table(path).slice(max(start - offset, 0), min(stop, offset + rows) - max(start, offset))
            first = max(start - offset, 0)
            for i, row in enumerate(table.to_pylist()):
                yield model.parse(row, where=f"{path}:{first + i}")
        offset += rows
        if offset >= stop:
            return


def rank_folder(parts: Path, rank: int) -> Path:
    return Path(parts) / f"{RANK_PREFIX}{rank:05d}"


class MapRecords(PipelineStep):
    """The datatrove pipeline step that maps one rank's slice of a :class:`ShardJob` into ``parts/rank-<r>/``."""

    name = "map records"
    type = "BioDivergence"

    def __init__(self, job: ShardJob, parts: Path):
        super().__init__()
        self.job, self.parts = job, Path(parts)

    def run(self, data=None, rank: int = 0, world_size: int = 1):
        job, folder = self.job, rank_folder(self.parts, rank)
        shutil.rmtree(folder, ignore_errors=True)  # a rank killed half-way starts over
        start, stop = rank_slice(count_records(job.input_dir), rank, world_size)
        stats = io.StageStats(job.stage, unit=job.unit)
        records = slice_records(job.input_dir, job.reads, start, stop)
        with contextlib.ExitStack() as stack:
            if job.keep_exclusions:
                stats.exclusions = stack.enter_context(io.ExclusionWriter(folder, job.shard_size))
            written = io.write_records(folder, job.function(records, job.config, stats), stats, job.shard_size)
        self.stat_update("records_in", value=stop - start)
        self.stat_update("records_out", value=written)
        yield from ()


def make_executor(config: RuntimeConfig, pipeline: list, logging_dir: Path):
    """The configured datatrove executor over ``pipeline`` with ``config.tasks`` ranks."""
    logging_dir = str(logging_dir)
    if config.executor == "local":
        from datatrove.executor import LocalPipelineExecutor

        return LocalPipelineExecutor(pipeline, tasks=config.tasks, workers=config.workers, logging_dir=logging_dir)
    if config.executor == "slurm":
        from datatrove.executor import SlurmPipelineExecutor

        s = config.slurm
        return SlurmPipelineExecutor(
            pipeline, tasks=config.tasks, workers=config.workers, time=s.time, partition=s.partition,
            cpus_per_task=s.cpus_per_task, mem_per_cpu_gb=s.mem_per_cpu_gb, qos=s.qos, job_name=s.job_name,
            venv_path=s.venv_path, sbatch_args=dict(s.sbatch_args), logging_dir=logging_dir, with_srun=False,
            requeue=False)
    from datatrove.executor import RayPipelineExecutor

    return RayPipelineExecutor(pipeline, tasks=config.tasks, workers=config.workers, logging_dir=logging_dir,
                               cpus_per_task=config.ray.cpus_per_task, mem_per_cpu_gb=config.ray.mem_per_cpu_gb)


def _run_ray(executor, options: RayOptions) -> None:
    import ray

    started = not ray.is_initialized()
    if started:
        ray.init(address=options.address, include_dashboard=False, log_to_driver=False,
                 runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join(sys.path)}})
    try:
        executor.run()
    finally:
        if started:
            ray.shutdown()


def _wait_for_slurm(executor, options: SlurmOptions) -> None:
    """Wait until every rank of the submitted array job completed; fail when the job left the queue without."""
    while incomplete := executor.get_incomplete_ranks(skip_completed=True):
        job = str(executor.job_id)
        queued = subprocess.run(["squeue", "-h", "-j", job], capture_output=True, text=True, check=False).stdout \
            if shutil.which("squeue") else ""
        if not queued.strip():
            raise RuntimeError(f"Slurm job {job} ended with {len(incomplete)} of {executor.world_size} ranks "
                               f"unfinished (ranks {incomplete[:10]}); see {executor.slurm_logs_folder}")
        log.info("waiting for Slurm job %s: %d rank(s) left", job, len(incomplete))
        time.sleep(options.poll_seconds)


def _run_local_ranks(executor) -> None:
    """datatrove's per-rank run of every unfinished rank: in this process for one worker, else in
    ``executor.workers`` worker processes.

    Not datatrove's ``executor.run()``: it starts a multiprocessing manager process even for one worker (which
    outlives a build killed with SIGKILL), and its ``multiprocess.Pool`` starts a new worker (and forkserver) in
    place of one an interrupt stopped, and can wait forever in its teardown on a queue lock the stopped worker
    held. A ``ProcessPoolExecutor`` never restarts a worker and fails its futures when one dies, so a signalled
    build leaves nothing behind, and each worker ends by itself when the build is killed outright (SIGKILL,
    which no handler sees). forkserver, as datatrove's default: a forked torch process hangs in its thread pool.
    """
    ranks = executor.get_incomplete_ranks()
    if executor.workers == 1:
        for rank in ranks:
            executor._run_for_rank(rank)
        return
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(executor.workers, mp_context=multiprocessing.get_context("forkserver"),
                               initializer=end_with, initargs=this_process())
    try:
        for _ in pool.map(executor._run_for_rank, ranks):
            pass
    finally:
        pool.shutdown(cancel_futures=True)


def run_ranks(job: ShardJob, parts: Path, config: RuntimeConfig) -> None:
    """Run every unfinished rank of ``job`` on the configured executor (finished ranks are skipped)."""
    executor = make_executor(config, [MapRecords(job, parts)], parts / "logs")
    if config.executor == "ray":
        _run_ray(executor, config.ray)
    elif config.executor == "local":
        _run_local_ranks(executor)
    else:
        executor.run()
    if config.executor == "slurm":
        _wait_for_slurm(executor, config.slurm)
    if missing := executor.get_incomplete_ranks(skip_completed=True):
        raise RuntimeError(f"{job.stage}: ranks {missing} did not finish; see the logs in {parts / 'logs'}")


def merge_stats(stage: str, unit: str, ranks: list[dict[str, Any]]) -> io.StageStats:
    """The ranks' stats summed: seen, kept, every drop reason, every count table and every integer figure
    (ratios and other derived figures are the job's to recompute from these)."""
    merged = io.StageStats(stage, unit=unit)
    for stats in ranks:
        merged.seen += stats["seen"]
        merged.kept += stats["kept"]
        dropped = io.dropped_counts(stats)
        for reason, n in dropped.items():
            merged.drop(reason, n)
        known = {"stage", "unit", "seen", "kept", io.DROPPED_TOTAL} | {f"{io.DROPPED}{r}" for r in dropped}
        for key, value in stats.items():
            if key in known:
                continue
            if isinstance(value, dict) and all(isinstance(v, int) for v in value.values()):
                for k, v in value.items():
                    merged.count(key, k, v)
            elif isinstance(value, int) and not isinstance(value, bool):
                merged.figures[key] = merged.figures.get(key, 0) + value
    return merged


def gather(job: ShardJob, parts: Path, tasks: int) -> tuple[Iterator[Any], io.StageStats]:
    """The ranks' records in rank order (a generator) and their merged stats."""
    folders = [rank_folder(parts, r) for r in range(tasks)]
    stats = merge_stats(job.stage, job.unit, [io.read_stats(f) for f in folders])
    return (record for f in folders for record in io.read_records(f, job.writes)), stats


def run_sharded(job: ShardJob, out_root: Path, config: RuntimeConfig) -> tuple[Iterator[Any], io.StageStats]:
    """Map ``job`` over ``config.tasks`` ranks (resuming finished ones) and gather the outputs.

    The task folders live under ``out_root/.tasks/``; other keys' folders there are stale and removed.
    """
    tasks_root = Path(out_root) / TASKS_DIR
    parts = tasks_root / job.key(config.tasks)
    if tasks_root.is_dir():
        for stale in tasks_root.iterdir():
            if stale != parts:
                shutil.rmtree(stale, ignore_errors=True)
    parts.mkdir(parents=True, exist_ok=True)
    run_ranks(job, parts, config)
    gather_exclusions(parts, config.tasks, Path(out_root))
    return gather(job, parts, config.tasks)


def gather_exclusions(parts: Path, tasks: int, out_dir: Path) -> int:
    """Copy the ranks' ``excluded-*`` shards into ``out_dir`` in rank order, replacing its old ones (copies, so
    a stage killed before it finishes finds them in the ranks again); returns how many."""
    for old in io.shard_paths(out_dir, io.EXCLUDED_PREFIX):
        old.unlink()
    copied = 0
    for rank in range(tasks):
        for path in io.shard_paths(rank_folder(parts, rank), io.EXCLUDED_PREFIX):
            with io.atomic_path(out_dir / f"{io.EXCLUDED_PREFIX}-{copied:05d}.parquet") as tmp:
                shutil.copyfile(path, tmp)
            copied += 1
    return copied


def clear_tasks(out_root: Path) -> None:
    """Remove the task folders once the stage's output is written (they are only needed to resume)."""
    shutil.rmtree(Path(out_root) / TASKS_DIR, ignore_errors=True)
