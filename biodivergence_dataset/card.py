"""Dataset card: Hub YAML metadata + a body rendered from the ontology, the tasks and the release's own figures.

The body template is ``dataset_card.md`` at the repository root (``templates/dataset_card.md`` links to it).
The YAML header (a ``huggingface_hub.DatasetCardData``) carries ``configs:`` and ``dataset_info:`` so that
``load_dataset(folder, config)`` reads typed features, and the source datasets with their licences
(``license: other`` with ``license_name`` / ``license_link`` when they differ) from ``sources.json``.
``card_meta.json`` holds only what the build cannot measure (:class:`CardMeta`); everything else the card says,
header and body, is read from the release, so the two never disagree. The leaderboard (``eval.yaml``), the
support of each headline metric and the Limitations come from the measured test split. What other commands
measured comes as their Markdown: the gold check's tables (``goldcheck.md``, rendered by the builder) and the
robustness summary (``robustness.md``).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import jinja2
import pyarrow.parquet as pq
from huggingface_hub import DatasetCard, DatasetCardData

from . import __version__, benchmark, evidence_maps, ontology
from .cardmeta import CardMeta
from .features import COLUMN_DESCRIPTIONS, release_features, rounded
from .io import STATS_FILE, write_text_atomic
from .provenance import read_sources, release_licence
from .records import SCHEMA_VERSION
from .redact import redact
from .release import (
    ANNOTATION_MANIFEST,
    AUDIT_FILE,
    FILES_MANIFEST,
    GOLDCHECK_FILE,
    GOLDCHECK_SUMMARY,
    README,
    ROBUSTNESS_FILE,
    SPLIT_MANIFEST,
    config_names,
    configs_yaml,
    dataset_info_yaml,
    split_files,
    split_order,
    split_sizes,
    write_file_manifest,
)
from .tasks import label_counts, load_tasks

TEMPLATE = Path(__file__).resolve().parent / "templates" / "dataset_card.md"

#: Hub vocabularies for the values this card uses (huggingface.js tasks/pipelines + dataset-card spec).
SIZE_CATEGORIES: tuple[tuple[int, str], ...] = (
    (1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"),
    (10_000_000, "1M<n<10M"), (100_000_000, "10M<n<100M"),
)


def size_category(n_rows: int) -> str:
    for bound, name in SIZE_CATEGORIES:
        if n_rows < bound:
            return name
    return "n>1T"


def _read_json(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


#: ``license_name`` / ``license_link`` of a card whose sources and labels do not share one licence: the
#: card's Source datasets section lists each licence.
MIXED_LICENCE_NAME = "biodivergence-mixed-source-licences"
MIXED_LICENCE_LINK = f"{README}#source-datasets"


def card_data(release_dir: str | Path, meta: CardMeta) -> DatasetCardData:
    """The YAML header: Hub metadata, ``configs:`` and ``dataset_info:``."""
    sizes = split_sizes(release_dir)
    largest = max((sum(s.values()) for s in sizes.values()), default=0)
    sources = read_sources(release_dir)
    licence = release_licence(sources, meta.labels_license)
    mixed = licence == "other"
    return DatasetCardData(
        license=licence,
        license_name=MIXED_LICENCE_NAME if mixed else None,
        license_link=MIXED_LICENCE_LINK if mixed else None,
        language=meta.language,
        multilinguality=meta.multilinguality,
        pretty_name=meta.pretty_name,
        task_categories=meta.task_categories,
        task_ids=meta.task_ids,
        size_categories=[size_category(largest)],
        annotations_creators=meta.annotations_creators,
        language_creators=meta.language_creators,
        source_datasets=[f"extended|{s.name}" for s in sources] or ["original"],
        tags=meta.tags,
        configs=configs_yaml(release_dir) + evidence_maps.config_entry(release_dir),
        dataset_info=dataset_info_yaml(release_dir) + evidence_maps.info_entry(release_dir),
    )


def card_yaml(release_dir: str | Path, meta: CardMeta) -> dict[str, Any]:
    """The YAML header as a dict."""
    return card_data(release_dir, meta).to_dict()


def _flatten(d: dict[str, Any]) -> dict[str, str]:
    """Scalar view of a manifest for a two-column table (nested values as compact JSON)."""
    return {k: v if isinstance(v, (str, int, float)) else json.dumps(v, sort_keys=True) for k, v in d.items()}


#: Nested split_manifest.json entries shown as their own tables instead of one-line JSON (``sources`` holds
#: local paths: the card lists the source datasets from ``sources.json`` instead).
_MANIFEST_TABLES = ("per_domain_counts", "targets", "funnel_per_domain", "sources", "questions")


def feature_type(feature: Any) -> str:
    """A short type name of a ``datasets`` feature for the Data Fields list."""
    from datasets import ClassLabel, List, Value

    if isinstance(feature, ClassLabel):
        return "class label"
    if isinstance(feature, Value):
        return feature.dtype
    if isinstance(feature, List):
        return f"list of {feature_type(feature.feature)}"
    return "struct" if isinstance(feature, dict) else type(feature).__name__


def data_fields() -> list[dict[str, str]]:
    """One entry per release column: name, type and description (from ``features.COLUMN_DESCRIPTIONS``)."""
    return [{"name": name, "type": feature_type(feature), "description": COLUMN_DESCRIPTIONS[name]}
            for name, feature in release_features().items()]


def plot_entries(release_dir: Path) -> list[dict[str, str]]:
    """The release's plots with title, caption and alt text (``plots/plots.json``, written by the audit)."""
    described = _read_json_list(release_dir / "plots" / "plots.json")
    return [p for p in described if (release_dir / p["file"]).exists()]


def _read_text(path: Path) -> str:
    """A Markdown part of the card another command wrote into the release ("" when it is not there)."""
    return path.read_text(encoding="utf-8") if path.exists() else ""


def _read_json_list(path: Path) -> list[Any]:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else []


#: Characters of each abstract shown in the card's Data Instance.
INSTANCE_ABSTRACT_CHARS = 240
_ABSTRACTS = ("abstract_a", "abstract_b")


def data_instance(rows: list[dict[str, Any]]) -> str:
    """The first row of the scored split as JSON, abstracts cut short; empty without rows."""
    if not rows:
        return ""
    row = rounded(rows[0])
    for name in _ABSTRACTS:
        text = row.get(name) or ""
        if len(text) > INSTANCE_ABSTRACT_CHARS:
            row[name] = text[:INSTANCE_ABSTRACT_CHARS].rstrip() + " …"
    return json.dumps(row, indent=2, ensure_ascii=False)


def annotator_kinds(release_dir: Path) -> dict[str, int]:
    """Rows of the default config's core splits per annotator kind (the annotators the labels come from)."""
    kinds: Counter[str] = Counter()
    for split in ontology.SPLITS:
        for path in split_files(release_dir, ontology.DEFAULT_CONFIG, split):
            kinds.update(str(k) for k in pq.read_table(path, columns=["annotator_kind"]).column(0).to_pylist())
    return {k: kinds[k] for k in ontology.ANNOTATOR_KINDS if kinds[k]}


def limitations(rows: list[dict[str, Any]], supported: list[benchmark.Support], min_support: int) -> dict[str, Any]:
    """What the Limitations section says, from the measured test split: which classes and axes have enough
    test examples for a score of their own, and which key metrics rest on too few."""
    classes, axes = (label_counts(rows, f, ontology.VOCABULARIES[f]) for f in ("conflict_type", "divergence_axes"))
    return {
        "test_rows": len(rows),
        "classes_ok": [c for c, n in classes.items() if n >= min_support],
        "classes_sparse": {c: n for c, n in classes.items() if n < min_support},
        "axes_ok": [a for a, n in axes.items() if n >= min_support],
        "axes_sparse": {a: n for a, n in axes.items() if n < min_support},
        "omitted": [{"id": s.board.id, "n": s.n, "counts": s.board.rule.describe()} for s in supported if not s.enough],
    }


def questions_by_conflicts(per_split: dict[str, Any]) -> list[str]:
    """The questions of the split manifest's per-split conflict counts, most conflicts over the core splits first."""
    totals: Counter[str] = Counter()
    for split, spread in per_split.items():
        if split in ontology.SPLITS:
            totals.update(spread.get("conflicts_per_question", {}))
    return sorted(totals, key=lambda q: (-totals[q], q))


def render_body(release_dir: str | Path, meta: CardMeta, rows: list[dict[str, Any]] | None = None) -> str:
    """The card's Markdown body; ``rows``: the scored split's decoded rows when already read."""
    release_dir = Path(release_dir)
    rows = benchmark.test_rows(release_dir) if rows is None else rows
    supported = benchmark.supports(release_dir, meta.min_support, rows)
    sizes = split_sizes(release_dir)
    audit_file = _read_json(release_dir / AUDIT_FILE)
    audit = audit_file.get("leakage", {})
    stats = _read_json(release_dir / STATS_FILE)
    split_manifest = _read_json(release_dir / SPLIT_MANIFEST)
    audit_variants = [v for v in ontology.CONFIGS if v in audit]
    audit_stats = list(dict.fromkeys(k for v in audit_variants for k in audit[v]))
    funnel = stats.get("per_domain", {})
    annotation = _read_json(release_dir / ANNOTATION_MANIFEST)
    kinds = annotator_kinds(release_dir)
    matched_split = ontology.EXTRA_TEST_SPLITS[0]
    goldcheck = _read_json(release_dir / GOLDCHECK_FILE)
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    template = env.from_string(TEMPLATE.read_text(encoding="utf-8"))
    return template.render(
        meta=meta,
        ontology_version=ontology.ONTOLOGY_VERSION,
        schema_version=SCHEMA_VERSION,
        library_version=__version__,
        configs=config_names(release_dir),
        default_config=ontology.DEFAULT_CONFIG,
        tasks=load_tasks(),
        evaluation=benchmark.card_context(meta, supported, benchmark.read_floors(release_dir),
                                          benchmark.train_classes(release_dir)),
        split_limits=benchmark.split_limits(release_dir),
        test_classes=sorted({r["conflict_type"] for r in rows}),
        conflict_types=ontology.CONFLICT_TYPES,
        axes=ontology.AXES,
        preference_rule=ontology.PREFERENCE_RULE,
        axis_selection_rule=ontology.AXIS_SELECTION_RULE,
        sizes=sizes,
        split_columns=split_order({s for c in sizes.values() for s in c}),
        audit=audit,
        audit_variants=audit_variants,
        audit_stats=audit_stats,
        funnel=funnel,
        funnel_columns=list(dict.fromkeys(k for row in funnel.values() for k in row)),
        annotation=_flatten(annotation),
        annotation_manifest=annotation,
        annotators_run=[annotation["annotator"]] if isinstance(annotation.get("annotator"), str)
        else list(annotation.get("annotator") or []),
        label_source=split_manifest.get("label_source", {}),
        goldcheck=goldcheck,
        goldcheck_summary=_read_text(release_dir / GOLDCHECK_SUMMARY),
        robustness=_read_text(release_dir / ROBUSTNESS_FILE),
        split_manifest=_flatten({k: v for k, v in split_manifest.items() if k not in _MANIFEST_TABLES}),
        per_domain_counts=split_manifest.get("per_domain_counts", {}),
        split_questions=split_manifest.get("questions", {}),
        question_rows=questions_by_conflicts(split_manifest.get("questions", {})),
        max_claim_share=split_manifest.get("thresholds", {}).get("max_claim_share"),
        core_splits=ontology.SPLITS,
        by_config=stats.get("by_config", {}),
        matched=audit_file.get(matched_split) or split_manifest.get(matched_split),
        matched_split=matched_split,
        domains=ontology.DOMAIN_NAMES,
        plots=plot_entries(release_dir),
        data_fields=data_fields(),
        sources=read_sources(release_dir),
        release_licence=release_licence(read_sources(release_dir), meta.labels_license),
        annotator_kinds=kinds,
        kind_descriptions=ontology.ANNOTATOR_KIND_DESCRIPTIONS,
        instance=data_instance(rows),
        instance_chars=INSTANCE_ABSTRACT_CHARS,
        mixed_licence_name=MIXED_LICENCE_NAME,
        limits=limitations(rows, supported, meta.min_support),
        funnel_total=funnel.get("total", {}),
        primary_axes=ontology.PRIMARY_AXIS_NAMES,
        provisional_axes=[a for a in ontology.AXIS_NAMES if a not in ontology.PRIMARY_AXIS_NAMES],
        evidence_maps=evidence_maps.summary_rows(release_dir),
        evidence_map_config=ontology.EVIDENCE_MAP_CONFIG,
    )


def render_card(release_dir: str | Path, meta: CardMeta | None = None,
                rows: list[dict[str, Any]] | None = None) -> str:
    meta = meta or CardMeta.load(release_dir)
    body = render_body(release_dir, meta, rows)
    return str(DatasetCard(f"---\n{card_data(release_dir, meta).to_yaml()}\n---\n\n{body}"))


def write_card(release_dir: str | Path, meta: CardMeta | None = None) -> Path:
    """(Re-)write ``README.md`` and ``eval.yaml`` of a release (no ``eval.yaml`` when no headline metric has
    enough test support); ``meta`` (default: the stored one) is stored beside them, in the current field names, for
    later re-renders. The card is redacted: no credential reaches a published file."""
    check_card_is_ours(release_dir)
    meta = meta or CardMeta.load(release_dir)
    meta.save(release_dir)
    rows = benchmark.test_rows(release_dir)
    benchmark.write_eval_yaml(release_dir, meta, benchmark.supports(release_dir, meta.min_support, rows))
    card = write_text_atomic(Path(release_dir) / README, redact(render_card(release_dir, meta, rows)))
    # the file list last: stopped before it, the card is newer than the list, and validate fails on the change
    write_file_manifest(release_dir)  # what the card describes: validate fails when it changes
    return card


def check_card_is_ours(release_dir: str | Path) -> None:
    """Refuse to replace a ``README.md`` that no card render wrote: a card is written with the release's file list
    (``release_files.json``), so a README without one is someone's own file."""
    readme = Path(release_dir) / README
    if readme.exists() and not (Path(release_dir) / FILES_MANIFEST).exists():
        raise ValueError(f"{readme} was not written by biodivergence card (the folder has no {FILES_MANIFEST}); "
                         "move it away or render the card of a release folder")
