"""How templated a release's reconciliations are: rule annotators fill a few templates, and a text repeated on
most rows makes ROUGE-L, BLEU and SemSim reward predicting that text (the constant-template floor of
``biodivergence baselines``). The dataset card can say so from :func:`split_templating`.

The metric (metrics/biodivergence/scoring.py ``templated``) keeps its own copy of this rule, as it imports
nothing of ours; a test keeps the two equal.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

#: Reconciliations count as templated when the distinct non-empty texts number at most this share of the
#: non-empty rows.
TEMPLATED_SHARE = 0.5


def reconciliation_templating(texts: Iterable[str | None]) -> dict[str, Any]:
    """Non-empty ``rows``, ``distinct`` texts among them and whether they are ``templated``.

    >>> reconciliation_templating(["Geography differs."] * 20 + ["Dose differs.", None])
    {'rows': 21, 'distinct': 2, 'templated': True}
    """
    filled = [t for t in texts if t and t.strip()]
    distinct = len(set(filled))
    return {"rows": len(filled), "distinct": distinct,
            "templated": bool(filled) and distinct <= TEMPLATED_SHARE * len(filled)}


def split_templating(release_dir: str | Path, config: str, split: str) -> dict[str, Any]:
    """:func:`reconciliation_templating` of one split of a release folder."""
    from .release import iter_rows

    return reconciliation_templating(row.get("reconciliation") for _, row in iter_rows(release_dir, config, split))
