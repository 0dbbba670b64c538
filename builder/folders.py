"""Output folders are claimed, not assumed: a stage writes only into a folder it created or one that carries its
own marker from an earlier run of the same stage; a build holds an exclusive lock on its work folder.

Anything else is refused with the folder and what it holds, or, with ``--force``, moved aside (renamed, never
deleted). An output folder equal to or inside one of the stage's inputs is always refused.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import fcntl
import json
import os
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from biodivergence_dataset import io
from biodivergence_dataset.release import STATE_DIR

#: The marker a stage leaves in every output folder it claims: ``{"stage": NAME}`` (see :func:`claim_output`).
OWNER_FILE = ".biodivergence_stage.json"
#: The owner of a release folder: the split creates it; the audit and the release stage add to it.
RELEASE_OWNER = "release"
#: The build's lock file in its work folder (see :func:`build_lock`).
LOCK_FILE = ".build.lock"


def add_force_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--force", action="store_true",
                        help="when --out holds something this command did not write, move it aside to "
                             "OUT.aside-N (nothing is deleted) instead of refusing")


class FolderClaimError(ValueError):
    """An output folder that holds something this stage did not write (or that is one of its inputs)."""


def _owner(folder: Path) -> str | None:
    """The stage that claimed ``folder``: its owner marker, else (folders written before the marker) its stage
    manifest, or ``release`` for a folder holding the release stages' records."""
    for marker in (folder / OWNER_FILE, folder / io.MANIFEST_FILE):
        try:
            return json.loads(marker.read_text(encoding="utf-8"))["stage"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return RELEASE_OWNER if (folder / STATE_DIR).is_dir() else None


def _check_not_an_input(out: Path, inputs: Iterable[str | os.PathLike], moving: bool = False) -> None:
    """Refuse an output folder that is an input or lies inside one; with ``moving`` (``--force`` would move the
    folder aside) also one that holds an input, which would be moved away with it."""
    resolved = out.resolve()
    for source in inputs:
        given = Path(source).expanduser()
        if not given.exists():
            continue
        path = given.resolve()
        if resolved == path or path in resolved.parents or moving and resolved in path.parents:
            where = "is" if resolved == path else "is inside" if path in resolved.parents else "holds"
            raise FolderClaimError(f"--out {out} {where} the input {given}; writing there would destroy the input: "
                                   "choose another output folder")


def move_aside(folder: Path) -> Path:
    """Rename ``folder`` to a free sibling ``NAME.aside-N`` (nothing is deleted); returns the new path."""
    n = 1
    while (aside := folder.with_name(f"{folder.name}.aside-{n}")).exists():
        n += 1
    folder.rename(aside)
    print(f"moved the previous content of {folder} aside to {aside}", file=sys.stderr, flush=True)
    return aside


def claim_output(out_dir: str | os.PathLike, stage: str, inputs: Iterable[str | os.PathLike] = (),
                 force: bool = False, known_by: Iterable[str] = ()) -> Path:
    """Make ``out_dir`` this stage's output folder, or refuse.

    A stage writes only into a folder it creates, an empty one, or one that carries its own marker from an
    earlier run of the same stage (so a re-run resumes). Anything else is refused, naming the folder and what
    it holds; with ``force`` the folder is moved aside (renamed, never deleted) and a new one made. An output
    folder equal to or inside one of ``inputs`` is always refused, and one holding an input is never moved aside.
    ``known_by``: files that mark a folder this
    stage wrote before it left markers."""
    out = Path(out_dir)
    inputs = list(inputs)
    _check_not_an_input(out, inputs)
    if out.exists() and not out.is_dir():
        raise FolderClaimError(f"--out {out} is a file, not a folder")
    if out.is_dir():
        # an atomic write killed before its rename leaves only its temporary file: no content of anyone's
        owner, entries = _owner(out), sorted(p.name for p in out.iterdir() if not io.is_partial_write(p.name))
        if owner is None and any((out / name).exists() for name in known_by):
            owner = stage
        if owner != stage and entries:
            if not force:
                what = f"the output of stage {owner!r}" if owner else "not the output of any stage"
                shown = ", ".join(entries[:8]) + (f", … ({len(entries)} entries)" if len(entries) > 8 else "")
                raise FolderClaimError(f"{out} is {what}, so {stage} will not write into it; it holds: {shown}. "
                                       "Choose another --out folder, or add --force to move it aside")
            _check_not_an_input(out, inputs, moving=True)
            move_aside(out)
    out.mkdir(parents=True, exist_ok=True)
    if not (out / OWNER_FILE).exists():
        io.write_json_atomic(out / OWNER_FILE, {"stage": stage})
    return out


@contextlib.contextmanager
def build_lock(work: Path) -> Iterator[None]:
    """Hold an exclusive lock on a work or stage folder for the block: a second build (or annotate) of the same
    folder fails at once, naming the first's PID (the lock goes with the process, so a killed run leaves no stale
    lock)."""
    path = Path(work) / LOCK_FILE
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EACCES):
                raise
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown"
            raise FolderClaimError(f"{work} is in use by another run (PID {holder}); wait for it to finish "
                                   "or choose another --out folder") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)
