"""What a dataset card says beyond what the data shows: :class:`CardMeta`, stored as ``card_meta.json``.

Its own module, importing of the contract only ``io`` and the release's file names, so the card, the leaderboard
(``benchmark``), validation and the Hub push all read it without importing one another.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .io import write_json_atomic
from .release import META_FILE

#: Headline metrics resting on fewer test examples are left off the leaderboard and warned about by ``validate``.
DEFAULT_MIN_SUPPORT = 30


@dataclass
class CardMeta:
    """What the card says about the release beyond what the data itself shows."""

    pretty_name: str = "BioDivergence"
    summary: str = (
        "Claim pairs from biomedical abstracts that seem to disagree, labelled with a six-class conflict type, "
        "the divergence axes (cohort, geography, period, assay, subtype, strain, setting, …) that explain the "
        "tension, the dominant confounder, a reconciliation and evidence spans."
    )
    version: str = "1.0"
    repo_id: str = "<org>/biodivergence"
    metric_id: str = "<org>/biodivergence"  # the metric's Hub Space (`biodivergence push-metric --space ...`)
    metric_revision: str = "v1.0"  # the Space tag of the metric version that scores this release
    #: Licence of the labels the build made; the card's ``license`` is this one only when every source shares it.
    labels_license: str = "cc-by-4.0"
    #: Headline metrics resting on fewer test examples are left off the leaderboard (``eval.yaml``).
    min_support: int = DEFAULT_MIN_SUPPORT
    language: list[str] = field(default_factory=lambda: ["en"])
    multilinguality: list[str] = field(default_factory=lambda: ["monolingual"])
    task_categories: list[str] = field(default_factory=lambda: ["text-classification", "text-generation"])
    task_ids: list[str] = field(
        default_factory=lambda: ["natural-language-inference", "multi-class-classification",
                                 "multi-label-classification", "fact-checking"]
    )
    annotations_creators: list[str] = field(default_factory=lambda: ["machine-generated"])
    language_creators: list[str] = field(default_factory=lambda: ["found"])
    tags: list[str] = field(
        default_factory=lambda: ["biomedical", "contradiction", "scientific-claims", "pubmed", "silver-labels"]
    )

    @classmethod
    def load(cls, release_dir: str | Path) -> CardMeta:
        path = Path(release_dir) / META_FILE
        if not path.exists():
            return cls()
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise ValueError(f"{path}: not valid JSON ({exc})") from None
        if "license" in data:  # older files named the labels' licence ``license``, which the card derives now
            data.setdefault("labels_license", data.pop("license"))
        data.pop("source_datasets", None)  # older files held a fallback; the card reads sources.json
        unknown = set(data) - set(cls.__dataclass_fields__)
        if unknown:
            raise ValueError(f"{path}: unknown card fields {sorted(unknown)}")
        return cls(**data)

    def save(self, release_dir: str | Path) -> None:
        write_json_atomic(Path(release_dir) / META_FILE, asdict(self))
