"""The one partition of every visible gold source into a development part and a check part.

Each source's items are keyed by what must not be split (an article's PMCID / PMID, a claim's id or text, a
question) and put in a part by a SHA-1 of ``source:key``, so the parts are the same in every process, on every
machine, whatever is added to the source:

- ``heldout`` — the **check** part (``CHECK_SHARE``, 20 % of each source's keys): nothing is trained, tuned,
  thresholded or read there; it is scored once per change and reported (``goldcheck``, the learned parts'
  reports, ``build_report.md`` and the card).
- ``training`` — the **development** part (the other 80 %): learned parts train here, rules are read here. It is
  split again by a second hash into ``fit`` and ``development`` (``TUNE_SHARE`` of it) so that settings can be
  compared on items a model did not fit (``reader train --part fit``), still without touching the check part.

Every module that needs a part asks ``in_part`` here; nothing else hashes a key into a part.
"""

from __future__ import annotations

import hashlib
from typing import Literal, get_args

#: Share of each source's keys in the check part.
CHECK_SHARE = 0.2
#: Share of the development keys of each source held back from fitting, to compare settings on.
TUNE_SHARE = 0.2
#: The partitions of each source's keys: ``heldout`` (the check part) and ``training`` (the development part) =
#: ``fit`` + ``development`` (its tuning part).
Part = Literal["training", "fit", "development", "heldout"]
PARTS: tuple[str, ...] = get_args(Part)
#: The report name of each top-level part.
PART_NAMES: dict[str, str] = {"training": "development", "heldout": "check"}


def _share(salted_key: str) -> float:
    return int.from_bytes(hashlib.sha1(salted_key.encode()).digest()[:4], "big") / 2**32


def is_heldout(source: str, key: str) -> bool:
    """Whether ``key`` (an article PMCID / PMID, a claim id or text) of ``source`` is in the check part."""
    return _share(f"{source}:{key}") < CHECK_SHARE


def is_development(source: str, key: str) -> bool:
    """Whether ``key`` of ``source`` is in the tuning part of the development keys (never in the check part)."""
    return in_part(source, key, "development")


def in_part(source: str, key: str, part: Part) -> bool:
    """Whether ``key`` of ``source`` belongs to ``part`` (one of ``PARTS``): the check part (``heldout``), else
    ``training`` and in either its tuning part (``development``, by a second hash) or ``fit``."""
    if part not in PARTS:
        raise ValueError(f"unknown part {part!r}; expected one of {list(PARTS)}")
    if is_heldout(source, key):
        return part == "heldout"
    development = _share(f"inner:{source}:{key}") < TUNE_SHARE
    return part in ("training", "development" if development else "fit")
