"""Publish a release folder to the Hugging Face Hub: one ``upload_folder`` commit, then a version tag.

``biodivergence push RELEASE_DIR --repo ORG/NAME --tag vX.Y [--private] [--dry-run]``

The order makes a failed push harmless: the release is validated first; ``create_repo`` is idempotent;
all files go up in a single commit (the Hub applies a commit entirely or not at all), replacing any
files of an earlier release that this one no longer has; the tag is created only after that commit
succeeded and points at exactly that commit. Users pin a release with ``revision="vX.Y"``. The card
is stamped with the repo and version for the upload, and restored if the push fails, so the local
release changes only when it is published; every Hub failure is one ``PushError`` line saying what
was (not) published and what to do.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .io import write_bytes_atomic

REPO_TYPE = "dataset"
TAG_PATTERN = re.compile(r"^v\d+\.\d+(?:\.\d+)?$")
REPO_PATTERN = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")
#: Bookkeeping that stays local: any path with a hidden part (stage markers, partial config folders, temp files).
IGNORE_PATTERNS = (".*", "*/.*")
#: Remote files not re-uploaded by this commit are deleted in the same commit (``.gitattributes`` is kept).
DELETE_PATTERNS = ("*",)


class PushError(RuntimeError):
    """The release could not be published; the message says which step failed and what state the repo is in."""


@dataclass
class Operation:
    name: str
    kwargs: dict[str, Any]
    detail: str = ""

    def describe(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.kwargs.items() if k != "token")
        return f"{self.name}({args})" + (f"\n{self.detail}" if self.detail else "")


@dataclass
class PushPlan:
    repo_id: str
    tag: str
    files: list[tuple[str, int]] = field(default_factory=list)
    operations: list[Operation] = field(default_factory=list)

    @property
    def total_bytes(self) -> int:
        return sum(size for _, size in self.files)


def release_files(release_dir: str | Path) -> list[tuple[str, int]]:
    """``(path in repo, bytes)`` of every file the commit uploads (the Hub client's own pattern filter)."""
    from huggingface_hub.utils import filter_repo_objects

    release_dir = Path(release_dir)
    paths = sorted(p.relative_to(release_dir).as_posix() for p in release_dir.rglob("*") if p.is_file())
    return [(p, (release_dir / p).stat().st_size) for p in filter_repo_objects(paths, ignore_patterns=IGNORE_PATTERNS)]


def check_names(repo_id: str, tag: str) -> None:
    if not REPO_PATTERN.match(repo_id):
        raise ValueError(f"repo {repo_id!r} is not of the form ORG/NAME")
    if not TAG_PATTERN.match(tag):
        raise ValueError(f"tag {tag!r} is not of the form vX.Y (e.g. v1.0)")


def plan_push(release_dir: str | Path, repo_id: str, tag: str, private: bool = False) -> PushPlan:
    """The three Hub operations of a push, with the files the commit will contain."""
    check_names(repo_id, tag)
    release_dir = Path(release_dir)
    plan = PushPlan(repo_id, tag, release_files(release_dir))
    listing = "\n".join(f"    {path}  ({size:,} bytes)" for path, size in plan.files)
    plan.operations = [
        Operation("create_repo", {"repo_id": repo_id, "repo_type": REPO_TYPE, "private": private, "exist_ok": True}),
        Operation("upload_folder", {
            "repo_id": repo_id, "repo_type": REPO_TYPE, "folder_path": str(release_dir),
            "commit_message": f"Release {tag}", "ignore_patterns": list(IGNORE_PATTERNS),
            "delete_patterns": list(DELETE_PATTERNS),
        }, detail=f"  one commit with {len(plan.files)} files, {plan.total_bytes:,} bytes:\n{listing}"),
        Operation("create_tag", {"repo_id": repo_id, "repo_type": REPO_TYPE, "tag": tag,
                                 "tag_message": f"BioDivergence release {tag}",
                                 "revision": "<commit of upload_folder>"}),
    ]
    return plan


def resolve_token(token: str | None = None) -> str:
    """``token``, else ``HF_TOKEN``, else the login cache (``hf auth login``)."""
    from huggingface_hub import get_token

    token = token or os.environ.get("HF_TOKEN") or get_token()
    if not token:
        raise PushError("no Hugging Face token: set HF_TOKEN or run `hf auth login`")
    return token


@contextmanager
def _restored_on_failure(release_dir: Path) -> Iterator[None]:
    """Put the release's top-level files (the card and its metadata among them) back if the block fails."""
    saved = {p: p.read_bytes() for p in release_dir.iterdir() if p.is_file()}
    try:
        yield
    except BaseException:
        for path in release_dir.iterdir():
            if path.is_file() and path not in saved:
                path.unlink()
        for path, data in saved.items():
            if not path.exists() or path.read_bytes() != data:
                write_bytes_atomic(path, data)
        raise


def _advice(exc: BaseException) -> str:
    """What to do about a failed Hub call."""
    from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

    if isinstance(exc, OfflineModeIsEnabled):
        return "unset HF_HUB_OFFLINE (and check the network) to publish"
    status = getattr(getattr(exc, "response", None), "status_code", None)
    if isinstance(exc, HfHubHTTPError) and status in (401, 403):
        return "check that the token (HF_TOKEN or `hf auth login`) may write to this repo"
    return "check the network and https://status.huggingface.co, then re-run the same push"


def _hub(step: str, state: str, call: Callable[..., Any], **kwargs: Any) -> Any:
    """Run one Hub call; any failure becomes one PushError line: the step, the error, the repo's state, advice."""
    try:
        return call(**kwargs)
    except Exception as exc:
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise PushError(f"{step} failed ({type(exc).__name__}: {first_line}); {state}; {_advice(exc)}") from exc


def _stamp_card(release_dir: Path, repo_id: str, tag: str) -> None:
    """Point the card's quick start at the repo and the version being published."""
    from .card import CardMeta, write_card

    meta = CardMeta.load(release_dir)
    write_card(release_dir, replace(meta, repo_id=repo_id, version=tag.removeprefix("v")))


def release_problems(release_dir: Path) -> list[str]:
    from .validate import validate_release

    return validate_release(release_dir).problems


def push_release(
    release_dir: str | Path, repo_id: str, tag: str, *, private: bool = False, api=None, token: str | None = None,
) -> str:
    """Publish ``release_dir`` as one commit of ``repo_id`` tagged ``tag``; returns the commit id."""
    from huggingface_hub import HfApi

    release_dir = Path(release_dir)
    check_names(repo_id, tag)
    problems = release_problems(release_dir)
    if problems:
        raise PushError(f"{release_dir} is not a valid release; nothing was pushed:\n  " + "\n  ".join(problems))
    api = api or HfApi(token=resolve_token(token))
    nothing = "nothing was published; the local release is unchanged"
    if tag in _hub(f"reading the tags of {repo_id}", nothing, _existing_tags, api=api, repo_id=repo_id):
        raise PushError(f"{repo_id} already has tag {tag}; releases are immutable, choose a new version")
    with _restored_on_failure(release_dir):
        _stamp_card(release_dir, repo_id, tag)
        plan = plan_push(release_dir, repo_id, tag, private)
        create, upload, tag_op = plan.operations
        _hub(f"creating {repo_id}", nothing, api.create_repo, **create.kwargs)
        # the Hub applies a commit entirely or not at all: a failed upload leaves nothing to undo
        commit = _hub(f"upload to {repo_id}", "no commit was made and no tag created; the local release is unchanged",
                      api.upload_folder, **upload.kwargs)
        _hub(f"tagging commit {commit.oid} of {repo_id} as {tag}",
             f"commit {commit.oid} is on {repo_id} but not tagged; re-run the push to tag it",
             api.create_tag, **{**tag_op.kwargs, "revision": commit.oid})
    return commit.oid


def _existing_tags(api, repo_id: str) -> set[str]:
    from huggingface_hub.errors import RepositoryNotFoundError

    try:
        refs = api.list_repo_refs(repo_id, repo_type=REPO_TYPE)
    except RepositoryNotFoundError:
        return set()
    return {ref.name for ref in refs.tags}


def add_arguments(parser) -> None:
    parser.add_argument("release_dir", help="release folder (written by `biodivergence build` or `split`)")
    parser.add_argument("--repo", required=True, help="dataset repo ORG/NAME on the Hub")
    parser.add_argument("--tag", required=True, help="version tag vX.Y (users pin it with revision=...)")
    parser.add_argument("--private", action="store_true", help="create the repo as private")
    parser.add_argument("--dry-run", action="store_true", help="list the operations without contacting the Hub")


def run(args) -> int:
    if args.dry_run:
        plan = plan_push(args.release_dir, args.repo, args.tag, args.private)
        print(f"dry run: would publish {args.release_dir} to {args.repo} as {args.tag}")
        for i, op in enumerate(plan.operations, 1):
            print(f"{i}. {op.describe()}")
        problems = release_problems(Path(args.release_dir))
        for problem in problems:
            print(f"error: {problem}")
        print("release is valid" if not problems else f"a real push would refuse: {len(problems)} problem(s)")
        return 1 if problems else 0
    oid = push_release(args.release_dir, args.repo, args.tag, private=args.private)
    print(f"published {args.repo}@{args.tag} (commit {oid})")
    return 0
