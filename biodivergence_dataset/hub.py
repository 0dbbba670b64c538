"""Publish to the Hugging Face Hub: one ``upload_folder`` commit, then a version tag.

``biodivergence push --release DIR --repo ORG/NAME --tag vX.Y [--private] [--dry-run]`` publishes a release
(a dataset repo); ``biodivergence push-metric --space ORG/NAME --tag vX.Y [--dry-run]`` publishes the metric
folder ``metrics/biodivergence`` (a Gradio Space, as ``evaluate``'s metric Spaces are). Both go through
:func:`publish`; a :class:`Target` says what differs (repo type, files, how the folder is checked and stamped).

The order makes a failed push harmless: the folder is validated first; an existing tag is refused;
``create_repo`` is idempotent; all files go up in a single commit (the Hub applies a commit entirely or
not at all), replacing any files of an earlier version that this one no longer has; the tag is created
only after that commit succeeded and points at exactly that commit. Users pin a version with
``revision="vX.Y"``. The folder is stamped with the repo and version for the upload (the dataset card;
the metric card and module) and restored if the push fails, so the local folder changes only when it is
published; every Hub failure is one ``PushError`` line saying what was (not) published and what to do.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .io import write_bytes_atomic, write_text_atomic
from .redact import register_secret

TAG_PATTERN = re.compile(r"^v\d+\.\d+(?:\.\d+)?$")
REPO_PATTERN = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")
#: Bookkeeping that stays local: any path with a hidden part (stage markers, partial config folders, temp files).
IGNORE_PATTERNS = (".*", "*/.*")
#: Remote files not re-uploaded by this commit are deleted in the same commit (``.gitattributes`` is kept).
DELETE_PATTERNS = ("*",)


class PushError(RuntimeError):
    """The folder could not be published; the message says which step failed and what state the repo is in."""


@dataclass(frozen=True)
class Target:
    """What one kind of publication is: the repo type, the files, how the folder is checked and stamped."""

    what: str  # "release" / "metric", in messages
    repo_type: str  # "dataset" / "space"
    tag_message: str  # "... {tag}"
    problems: Callable[[Path, str], list[str]]  # (folder, repo_id) -> reasons a real push refuses
    stamp: Callable[[Path, str, str], None]  # (folder, repo_id, tag): write the published id and version
    create_kwargs: dict[str, Any] = field(default_factory=dict)  # extra create_repo arguments
    ignore_patterns: tuple[str, ...] = IGNORE_PATTERNS
    #: The folder's files that may be uploaded (None: all but the ignored ones); passed as allow_patterns.
    owned: Callable[[Path], list[str]] | None = None


@dataclass(frozen=True)
class CommitOptions:
    """How the upload commits (``upload_folder``'s arguments): the branch, the message, or a pull request.

    A pull request is not a version yet: no tag is created; tag the merged commit once the PR is merged.
    """

    revision: str | None = None  # branch to commit to (default: main)
    commit_message: str | None = None  # default: "Release {tag}"
    create_pr: bool = False

    def upload_kwargs(self, tag: str) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"commit_message": self.commit_message or f"Release {tag}"}
        if self.revision:
            kwargs["revision"] = self.revision
        if self.create_pr:
            kwargs["create_pr"] = True
        return kwargs


#: A commit to main with the default message, tagged.
DEFAULT_COMMIT = CommitOptions()


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


def folder_files(folder: str | Path, ignore_patterns: tuple[str, ...] = IGNORE_PATTERNS,
                 allow: list[str] | None = None) -> list[tuple[str, int]]:
    """``(path in repo, bytes)`` of every file the commit uploads (the Hub client's own pattern filter); never a
    symbolic link (``upload_folder`` would follow it out of the folder)."""
    from huggingface_hub.utils import filter_repo_objects

    folder = Path(folder)
    paths = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() and not p.is_symlink())
    if allow is not None:
        paths = [p for p in paths if p in set(allow)]
    return [(p, (folder / p).stat().st_size) for p in filter_repo_objects(paths, ignore_patterns=ignore_patterns)]


def release_files(release_dir: str | Path) -> list[tuple[str, int]]:
    """The files a release push uploads: those the release owns and the card's."""
    return folder_files(release_dir, DATASET.ignore_patterns, _release_owned(Path(release_dir)))


def check_names(repo_id: str, tag: str) -> None:
    if not REPO_PATTERN.match(repo_id):
        raise ValueError(f"repo {repo_id!r} is not of the form ORG/NAME")
    if not TAG_PATTERN.match(tag):
        raise ValueError(f"tag {tag!r} is not of the form vX.Y (e.g. v1.0)")


def plan_publish(target: Target, folder: str | Path, repo_id: str, tag: str, private: bool = False,
                 commit: CommitOptions = DEFAULT_COMMIT) -> PushPlan:
    """The Hub operations of a push (create, upload, tag; no tag for a pull request), with the commit's files."""
    check_names(repo_id, tag)
    folder = Path(folder)
    allow = target.owned(folder) if target.owned else None
    plan = PushPlan(repo_id, tag, folder_files(folder, target.ignore_patterns, allow))
    listing = "\n".join(f"    {path}  ({size:,} bytes)" for path, size in plan.files)
    repo = {"repo_id": repo_id, "repo_type": target.repo_type}
    # exactly the listed files: a link or a file the folder does not own is never uploaded
    only = {"allow_patterns": [glob_escape(path) for path, _ in plan.files]} if allow is not None else {}
    plan.operations = [
        Operation("create_repo", {**repo, "private": private, "exist_ok": True, **target.create_kwargs}),
        Operation("upload_folder", {
            **repo, "folder_path": str(folder), **commit.upload_kwargs(tag),
            "ignore_patterns": list(target.ignore_patterns), "delete_patterns": list(DELETE_PATTERNS), **only,
        }, detail=f"  one commit with {len(plan.files)} files, {plan.total_bytes:,} bytes:\n{listing}"),
    ]
    if not commit.create_pr:
        plan.operations.append(Operation("create_tag", {**repo, "tag": tag, "tag_message": target.tag_message.format(tag=tag),
                                                        "revision": "<commit of upload_folder>"}))
    return plan


def resolve_token(token: str | None = None) -> str:
    """``token``, else ``HF_TOKEN``, else the login cache (``hf auth login``)."""
    from huggingface_hub import get_token

    token = token or os.environ.get("HF_TOKEN") or get_token()
    if not token:
        raise PushError("no Hugging Face token: set HF_TOKEN or run `hf auth login`")
    return token


@contextmanager
def _restored_on_failure(folder: Path) -> Iterator[None]:
    """Put the folder's top-level files (cards, metadata, the metric module) back if the block fails."""
    saved = {p: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    try:
        yield
    except BaseException:
        for path in folder.iterdir():
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


def _existing_tags(api, repo_id: str, repo_type: str) -> set[str]:
    from huggingface_hub.errors import RepositoryNotFoundError

    try:
        refs = api.list_repo_refs(repo_id, repo_type=repo_type)
    except RepositoryNotFoundError:
        return set()
    return {ref.name for ref in refs.tags}


def publish(
    target: Target, folder: str | Path, repo_id: str, tag: str, *, private: bool = False, api=None,
    token: str | None = None, commit: CommitOptions = DEFAULT_COMMIT,
) -> str:
    """Publish ``folder`` as one commit of ``repo_id`` tagged ``tag`` (a pull request, untagged, with
    ``commit.create_pr``); returns the commit id."""
    from huggingface_hub import HfApi

    folder = Path(folder)
    check_names(repo_id, tag)
    problems = target.problems(folder, repo_id)
    if problems:
        raise PushError(f"{folder} is not a valid {target.what}; nothing was pushed:\n  " + "\n  ".join(problems))
    api = api or HfApi(token=resolve_token(token))
    unchanged = f"the local {target.what} is unchanged"
    nothing = f"nothing was published; {unchanged}"
    if tag in _hub(f"reading the tags of {repo_id}", nothing, _existing_tags,
                   api=api, repo_id=repo_id, repo_type=target.repo_type):
        raise PushError(f"{repo_id} already has tag {tag}; published versions are immutable, choose a new version")
    with _restored_on_failure(folder):
        target.stamp(folder, repo_id, tag)
        plan = plan_publish(target, folder, repo_id, tag, private, commit)
        create, upload, *tag_op = plan.operations
        _hub(f"creating {repo_id}", nothing, api.create_repo, **create.kwargs)
        # the Hub applies a commit entirely or not at all: a failed upload leaves nothing to undo
        made = _hub(f"upload to {repo_id}", f"no commit was made and no tag created; {unchanged}",
                    api.upload_folder, **upload.kwargs)
        for op in tag_op:
            _hub(f"tagging commit {made.oid} of {repo_id} as {tag}",
                 f"commit {made.oid} is on {repo_id} but not tagged; re-run the push to tag it",
                 api.create_tag, **{**op.kwargs, "revision": made.oid})
    if commit.create_pr:
        print(f"opened {made.pr_url or 'a pull request'} (commit {made.oid}); not tagged: once merged, tag it with "
              f"HfApi().create_tag({repo_id!r}, tag={tag!r}, repo_type={target.repo_type!r})")
    return made.oid


def print_plan(target: Target, folder: str | Path, repo_id: str, tag: str, private: bool = False,
               commit: CommitOptions = DEFAULT_COMMIT) -> int:
    """``--dry-run``: the operations and files of a push, and whether a real push would refuse; writes nothing."""
    plan = plan_publish(target, folder, repo_id, tag, private, commit)
    print(f"dry run: would publish {folder} to {repo_id} as {tag}")
    for i, op in enumerate(plan.operations, 1):
        print(f"{i}. {op.describe()}")
    problems = target.problems(Path(folder), repo_id)
    for problem in problems:
        print(f"error: {problem}")
    print(f"{target.what} is valid" if not problems else f"a real push would refuse: {len(problems)} problem(s)")
    return 1 if problems else 0


# --- the dataset release ------------------------------------------------------------------------


def _stamp_card(release_dir: Path, repo_id: str, tag: str) -> None:
    """Point the card's quick start at the repo and the version being published."""
    from .card import write_card
    from .cardmeta import CardMeta

    meta = CardMeta.load(release_dir)
    write_card(release_dir, replace(meta, repo_id=repo_id, version=tag.removeprefix("v")))


def release_problems(release_dir: Path, repo_id: str | None = None) -> list[str]:
    from .validate import validate_release

    return validate_release(release_dir).problems


def _release_owned(release_dir: Path) -> list[str]:
    """What a release push may upload: the files of its file manifest and the card's own files."""
    from .release import card_files, read_file_manifest

    return sorted([*(read_file_manifest(release_dir) or {}), *card_files()])


def glob_escape(path: str) -> str:
    """``path`` as an fnmatch pattern that matches only itself."""
    return re.sub(r"([*?\[])", r"[\1]", path)


DATASET = Target("release", "dataset", "BioDivergence release {tag}", release_problems, _stamp_card,
                 owned=_release_owned)


def push_release(
    release_dir: str | Path, repo_id: str, tag: str, *, private: bool = False, api=None, token: str | None = None,
    commit: CommitOptions = DEFAULT_COMMIT,
) -> str:
    """Publish ``release_dir`` as one commit of the dataset repo ``repo_id`` tagged ``tag``; returns the commit id."""
    return publish(DATASET, release_dir, repo_id, tag, private=private, api=api, token=token, commit=commit)


# --- the metric Space ---------------------------------------------------------------------------

#: What an evaluate metric Space needs: the module (evaluate fetches ``NAME.py`` and the files it imports),
#: the scorer, the card whose YAML header configures the Space, the Gradio app and its requirements.
METRIC_MODULE = "biodivergence.py"
METRIC_FILES = (METRIC_MODULE, "scoring.py", "labels.py", "record_checks.py", "label_scores.py", "text_scores.py",
                "__init__.py", "README.md", "app.py", "requirements.txt")
#: ``push-metric`` stamps these lines; the card's version block sits between the markers.
_VERSION_LINE = re.compile(r'^METRIC_VERSION = "[^"]*"$', re.MULTILINE)
_ONTOLOGY_LINE = re.compile(r'^ONTOLOGY_VERSION = "([^"]*)"$', re.MULTILINE)
_CARD_BLOCK = re.compile(r"(<!-- version -->\n).*?(\n<!-- /version -->)", re.DOTALL)


def metric_version_block(space_id: str, version: str, ontology_version: str) -> str:
    """The card's version paragraph (between ``<!-- version -->`` markers)."""
    return (f"This is version **{version}** of the metric; it scores BioDivergence ontology and tasks "
            f"version {ontology_version}. Pin it with `evaluate.load(\"{space_id}\", revision=\"{version}\")`; "
            f"`metric.description` names the version that produced a result.")


def metric_problems(metric_dir: Path, space_id: str | None = None) -> list[str]:
    """Why a metric folder cannot be published as ``space_id``: missing files, card header, versions, name."""
    from .ontology import ONTOLOGY_VERSION

    problems = [f"{name}: missing" for name in METRIC_FILES if not (metric_dir / name).is_file()]
    if space_id and space_id.split("/")[-1] != Path(METRIC_MODULE).stem:
        problems.append(f"Space name {space_id.split('/')[-1]!r} must be {Path(METRIC_MODULE).stem!r}: "
                        f"evaluate.load('ORG/NAME') fetches NAME.py")
    card = metric_dir / "README.md"
    if card.is_file():
        text = card.read_text(encoding="utf-8")
        header = text.split("---", 2)[1] if text.startswith("---\n") and text.count("---") >= 2 else ""
        if not re.search(r"^sdk: gradio$", header, re.MULTILINE) or not re.search(r"^app_file: app\.py$", header, re.MULTILINE):
            problems.append("README.md: the YAML header must configure the Space (sdk: gradio, app_file: app.py)")
        if not _CARD_BLOCK.search(text):
            problems.append("README.md: no <!-- version --> ... <!-- /version --> block to stamp")
    scoring = metric_dir / "scoring.py"
    if scoring.is_file():
        text = scoring.read_text(encoding="utf-8")
        found = _ONTOLOGY_LINE.search(text)
        if not _VERSION_LINE.search(text):
            problems.append('scoring.py: no METRIC_VERSION = "..." line to stamp')
        if not found or found.group(1) != ONTOLOGY_VERSION:
            problems.append(f"scoring.py: ONTOLOGY_VERSION is {found and found.group(1)!r}, "
                            f"the ontology is {ONTOLOGY_VERSION!r}")
    return problems


def _stamp_metric(metric_dir: Path, space_id: str, tag: str) -> None:
    """Write the version into the module (``METRIC_VERSION``) and the card's version block."""
    scoring = metric_dir / "scoring.py"
    text = scoring.read_text(encoding="utf-8")
    write_text_atomic(scoring, _VERSION_LINE.sub(f'METRIC_VERSION = "{tag}"', text, count=1))
    ontology_version = _ONTOLOGY_LINE.search(text).group(1)
    card = metric_dir / "README.md"
    block = metric_version_block(space_id, tag, ontology_version)
    write_text_atomic(card, _CARD_BLOCK.sub(lambda m: m.group(1) + block + m.group(2),
                                            card.read_text(encoding="utf-8"), count=1))


METRIC = Target("metric", "space", "BioDivergence metric {tag}", metric_problems, _stamp_metric,
                create_kwargs={"space_sdk": "gradio"},
                ignore_patterns=(*IGNORE_PATTERNS, "__pycache__/*", "*/__pycache__/*", "*.pyc"))


def push_metric(
    metric_dir: str | Path, space_id: str, tag: str, *, private: bool = False, api=None, token: str | None = None,
    commit: CommitOptions = DEFAULT_COMMIT,
) -> str:
    """Publish the metric folder as one commit of the Gradio Space ``space_id`` tagged ``tag``; returns the commit id."""
    return publish(METRIC, metric_dir, space_id, tag, private=private, api=api, token=token, commit=commit)


# --- command line -------------------------------------------------------------------------------


def add_arguments(parser) -> None:
    from .arguments import add_release_argument

    add_release_argument(parser, "release folder (written by `biodivergence build` or `split`)", legacy_positional=True)
    parser.add_argument("--repo", required=True, help="dataset repo ORG/NAME on the Hub")
    add_push_arguments(parser)


def add_push_arguments(parser) -> None:
    parser.add_argument("--tag", required=True, help="version tag vX.Y (users pin it with revision=...)")
    parser.add_argument("--private", action="store_true", help="create the repo as private")
    parser.add_argument("--dry-run", action="store_true", help="list the files and operations; contact nobody, write nothing")
    parser.add_argument("--token", help="Hugging Face token with write access (default: $HF_TOKEN, else `hf auth login`'s)")
    parser.add_argument("--revision", help="branch to commit to (default: main)")
    parser.add_argument("--commit-message", help="message of the upload commit (default: 'Release TAG')")
    parser.add_argument("--create-pr", action="store_true",
                        help="open a pull request instead of committing; the tag is left for after the merge")


def commit_options(args) -> CommitOptions:
    """The upload-commit options of a parsed push command line."""
    return CommitOptions(revision=args.revision, commit_message=args.commit_message, create_pr=args.create_pr)


def published(repo_id: str, tag: str, oid: str, args) -> str:
    """What a push command prints after the upload."""
    return f"pushed {repo_id} (commit {oid}) as a pull request" if args.create_pr else f"published {repo_id}@{tag} (commit {oid})"


def run(args) -> int:
    register_secret(args.token)
    if args.dry_run:
        return print_plan(DATASET, args.release, args.repo, args.tag, args.private, commit_options(args))
    oid = push_release(args.release, args.repo, args.tag, private=args.private, token=args.token,
                       commit=commit_options(args))
    print(published(args.repo, args.tag, oid, args))
    return 0


def add_metric_arguments(parser) -> None:
    parser.add_argument("--space", required=True, help="Space ORG/biodivergence on the Hub (evaluate.load's id)")
    parser.add_argument("--metric-dir", help="metric folder (default: $BIODIVERGENCE_METRIC, else the installed metric)")
    add_push_arguments(parser)


def run_metric(args, folder: str | Path) -> int:
    """Publish the metric ``folder`` as ``args`` say; the caller finds the folder (``--metric-dir`` or its
    default), as where the metric lives is no business of the contract."""
    register_secret(args.token)
    if args.dry_run:
        return print_plan(METRIC, folder, args.space, args.tag, args.private, commit_options(args))
    oid = push_metric(folder, args.space, args.tag, private=args.private, token=args.token, commit=commit_options(args))
    print(published(args.space, args.tag, oid, args)
          + ("" if args.create_pr else f"; load it with evaluate.load({args.space!r}, revision={args.tag!r})"))
    return 0
