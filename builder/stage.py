"""One build stage type and the one way a stage runs: :func:`execute`.

A :class:`Stage` names what a stage is: its name, its pydantic ``Config``, the work folders it reads and writes, the
data files it reads besides them (lexicons, packs, model weights), and two functions of its module:

- ``open(inputs, out, config) -> Opened``: check the inputs, claim the output folder and state what decides the
  output (the stage's *identity*: its settings and the fingerprints of the folders it reads);
- ``work(opened, runtime) -> stats``: do the work, writing the output's files (the shards without a success marker).

:func:`execute` does the bookkeeping for every stage: it adds to the identity the fingerprint of the stage's code and
of its data files, skips a stage whose folder finished with the same identity, else opens the folder (marker removed,
manifest written), runs the stage, and writes its stats and its success marker last.

The code fingerprint (:mod:`builder.fingerprint`) covers the modules a stage imports within our packages, without
docstrings: a code change a stage runs re-runs it; a docstring, a comment or a module it never imports does not.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from biodivergence_dataset import io
from biodivergence_dataset.records import one_line

from .fingerprint import code_fingerprint, files_fingerprint
from .folders import build_lock
from .runtime import RuntimeConfig, clear_tasks

#: Identity keys :func:`execute` adds: the fingerprint of the stage's code and of the data files it reads.
CODE, DATA = "code", "data"


# ---------------------------------------------------------------------------------------------
# the stage type


@dataclass(frozen=True)
class Opened:
    """A stage's run as its ``open`` sets it up: the config it runs with, the input paths its manifest names, its
    output folder, its state folder (manifest, stats, marker; the output folder unless the stage shares it) and its
    identity; ``extra``: what ``open`` found that ``work`` needs (e.g. an upstream folder named by a manifest)."""

    name: str
    config: Any
    inputs: list[str]
    out: Path
    params: dict[str, Any]
    state: Path | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def folder(self) -> Path:
        return self.state or self.out

    def begin(self) -> None:
        """Open the state folder for a run: created, its success marker removed (a killed run is never taken for
        a finished one), its manifest written."""
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / io.SUCCESS_MARKER).unlink(missing_ok=True)
        io.write_manifest(self.folder, self.name, self.inputs, self.params)


def no_files(config: Any) -> list[Path]:
    return []


def read_stats(opened: Opened) -> dict[str, Any]:
    return io.read_stats(opened.folder)


def never(opened: Opened) -> bool:
    return False


def as_is(section: dict[str, Any], build: Any, work: Path) -> dict[str, Any]:
    return section


@dataclass(frozen=True)
class Stage:
    """A pipeline stage: what it is (name, config, folders, data files) and the functions that open and run it.

    ``reads``: the work folders it reads, the first being its input (:data:`SOURCES`: the build's sources; none: it
    reads no folder); ``writes``: the work folder it writes; ``state``: its state folder under ``writes`` when it
    shares that folder with other stages (``.stages/split``); ``section``: its section of the build config when not
    named after it, which is then its config's one field of that name; ``needs``: a key its (wired) section must set for the build to run it; ``wire``: its section with
    what it takes from the others' (``wire(section, build_config, work)``); ``data_files``: the files it reads
    besides its inputs, from its config; ``redo``: whether a finished, current run is redone anyway; ``result``: what
    it returns (its stats by default); ``locks``: whether it holds the output folder's lock while it runs;
    ``begins_itself``: its ``work`` calls ``opened.begin()`` itself, at the moment it replaces its output (so a
    failed run leaves a previous output whole)."""

    name: str
    Config: type[BaseModel]
    open: Callable[[Any, Path, Any], Opened]
    work: Callable[[Opened, RuntimeConfig], Any]
    reads: tuple[str, ...]
    writes: str
    module: str
    state: str = ""
    section: str = ""
    needs: str = ""
    wire: Callable[[dict[str, Any], Any, Path], dict[str, Any]] = as_is
    data_files: Callable[[Any], list[Path]] = no_files
    redo: Callable[[Opened], bool] = never
    result: Callable[[Opened], dict[str, Any]] = read_stats
    locks: bool = False
    begins_itself: bool = False

    @property
    def marker(self) -> str:
        """Its success marker, relative to the work folder."""
        return "/".join(p for p in (self.writes, self.state, io.SUCCESS_MARKER) if p)

    def make_config(self, section: dict[str, Any] | BaseModel | None = None) -> BaseModel:
        """Its config from a build config section (None: the defaults); errors name the section."""
        if isinstance(section, self.Config):
            return section
        try:
            return self.Config(**(section or {}))  # through __init__: a config may check more there
        except ValidationError as exc:
            raise ValueError(f"build config section {self.section or self.name!r}: "
                             f"{one_line(exc, 'the section')}") from None

    def config_section(self, build: Any, work: Path | None = None) -> dict[str, Any]:
        """Its section of a build config, wired to the stages around it (as its config's one field ``section`` when
        it has one)."""
        wired = self.wire(dict(getattr(build, self.section or self.name)), build, work or Path("."))
        return {self.section: wired} if self.section else wired

    def active(self, build: Any) -> bool:
        """Whether a build with this config runs it (its wired section sets what it needs)."""
        return not self.needs or bool(self.config_section(build).get(self.needs))

    def identity(self, opened: Opened) -> dict[str, Any]:
        """What decides its output: what ``open`` stated, its code and its data files."""
        return {**opened.params, CODE: code_fingerprint(self.module),
                DATA: files_fingerprint(self.data_files(opened.config))}


#: ``Stage.reads`` of a stage that reads the build's sources (ingest).
SOURCES = "<sources>"


def is_current(folder: Path, params: dict[str, Any]) -> bool:
    """True when ``folder`` finished (success marker) with the same identity: a re-run skips it."""
    if not io.is_done(folder):
        return False
    try:
        manifest = io.read_manifest(folder)
    except (FileNotFoundError, json.JSONDecodeError):
        return False
    return manifest.get("params") == io.as_stored(params)


def finish(opened: Opened, stats: Any) -> None:
    """Write a run's stats into its state folder, then its success marker (with the folder's fingerprint)."""
    if isinstance(stats, io.StageStats):
        stats.write(opened.folder)
    elif stats is not None:
        io.write_json_atomic(opened.folder / io.STATS_FILE, stats)
    io.mark_done(opened.folder)


def execute(stage: Stage, inputs: Any, out: str | Path, config: Any = None,
            runtime: RuntimeConfig | None = None) -> dict[str, Any]:
    """Run ``stage`` from ``inputs`` into ``out`` unless its output is current; returns its result (its stats).

    Resumable: a finished folder with the same identity (settings, input fingerprints, code, data files) is kept
    as it is; anything else runs again (the stage resumes what it can, e.g. the finished ranks of a sharded step)."""
    opened = stage.open(inputs, Path(out), stage.make_config(config))
    with build_lock(opened.out) if stage.locks else contextlib.nullcontext():
        opened = replace(opened, params=stage.identity(opened))
        if is_current(opened.folder, opened.params) and not stage.redo(opened):
            clear_tasks(opened.out)  # rank folders serve only to resume a run
            return stage.result(opened)
        if not stage.begins_itself:
            opened.begin()
        finish(opened, stage.work(opened, runtime or RuntimeConfig()))
        return stage.result(opened)
