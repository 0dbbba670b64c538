"""Publish a trained model folder to the Hub: the dataset push's code path (``biodivergence_dataset.hub.publish``).

``biodivergence train … --push-to-hub --hub-model-id ORG/NAME --hub-tag vX.Y`` calls :func:`push_model` after
training; ``python -m trainer.hub_model --model FOLDER --repo ORG/NAME --tag vX.Y [--private] [--dry-run]``
pushes an existing folder (one seed's folder of a multi-seed run, say). As for releases: the folder is
checked first, an existing tag is refused, all files go up in one commit, the tag is created only after
it, and the model card is stamped with the repo and version (restored if the push fails). Trainer's
``checkpoint-*`` folders stay local.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from biodivergence_dataset.hub import (
    DEFAULT_COMMIT,
    IGNORE_PATTERNS,
    CommitOptions,
    Target,
    add_push_arguments,
    commit_options,
    print_plan,
    publish,
    published,
)

#: Files a model folder must have to load with AutoModel / AutoTokenizer (besides the code named by auto_map).
REQUIRED_FILES = ("config.json", "README.md", "tokenizer_config.json")
WEIGHTS = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin")


def model_problems(folder: Path, repo_id: str | None = None) -> list[str]:
    """Why ``folder`` cannot be published as a model that loads with ``trust_remote_code`` anywhere."""
    if not folder.is_dir():
        return [f"{folder}: not a folder"]
    problems = [f"{name}: missing" for name in REQUIRED_FILES if not (folder / name).is_file()]
    if not any((folder / name).is_file() for name in WEIGHTS):
        problems.append(f"no weights ({' / '.join(WEIGHTS)})")
    config_path = folder / "config.json"
    if config_path.is_file():
        config = json.loads(config_path.read_text(encoding="utf-8"))
        auto_map = config.get("auto_map") or {}
        auto_model = "AutoModel.from_pretrained(..., trust_remote_code=True)"
        for auto_class, loader in (("AutoConfig", auto_model), ("AutoModel", auto_model),
                                   ("AutoModelForSequenceClassification",
                                    "pipeline('text-classification', model=..., trust_remote_code=True)")):
            if auto_class not in auto_map:
                problems.append(f"config.json: auto_map has no {auto_class} ({loader} would not find the code; "
                                "re-save the model with this version's trainer.modeling)")
        for module in {str(v).split(".")[0] for v in auto_map.values()}:
            if not (folder / f"{module}.py").is_file():
                problems.append(f"{module}.py: missing (named by auto_map)")
        encoder = config.get("encoder_name_or_path") or ""
        if encoder.startswith(("/", "~", ".")) or encoder.count("/") > 1 or Path(encoder).is_absolute():
            problems.append(f"config.json: encoder_name_or_path is a local path ({encoder}), not a Hub id")
    return problems


def _stamp_card(folder: Path, repo_id: str, tag: str) -> None:
    from .model_card import write_model_card

    write_model_card(folder, repo_id=repo_id, revision=tag)


MODEL = Target("model", "model", "BioDivergence reference model {tag}", model_problems, _stamp_card,
               ignore_patterns=(*IGNORE_PATTERNS, "checkpoint-*"))


def push_model(folder: str | Path, repo_id: str, tag: str, *, private: bool = False, api=None,
               token: str | None = None, commit: CommitOptions = DEFAULT_COMMIT) -> str:
    """Publish a model folder as one commit of the model repo ``repo_id`` tagged ``tag``; returns the commit id."""
    return publish(MODEL, folder, repo_id, tag, private=private, api=api, token=token, commit=commit)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", required=True, help="model folder written by `biodivergence train`")
    parser.add_argument("--repo", required=True, help="model repo ORG/NAME on the Hub")
    add_push_arguments(parser)


def run(args: argparse.Namespace) -> int:
    if args.dry_run:
        return print_plan(MODEL, args.model, args.repo, args.tag, args.private, commit_options(args))
    oid = push_model(args.model, args.repo, args.tag, private=args.private, token=args.token, commit=commit_options(args))
    print(published(args.repo, args.tag, oid, args) + ("" if args.create_pr else
          f"; load it with pipeline('text-classification', model={args.repo!r}, revision={args.tag!r}, "
          "trust_remote_code=True)"))
    return 0


if __name__ == "__main__":
    from biodivergence_dataset.hub import PushError

    parser = argparse.ArgumentParser(prog="python -m trainer.hub_model", description="publish a trained model to the Hub")
    add_arguments(parser)
    try:
        sys.exit(run(parser.parse_args()))
    except (PushError, FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(1)
