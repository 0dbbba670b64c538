"""Stage 6: annotated ``Example``s → a release folder with the ``primary`` and ``pairlevel`` configs.

``pairlevel`` (legacy, paper §5.1): one copy per ``pair_id``, then per-domain 70/10/20, stratified by
conflict type inside each domain.

``primary`` (article-disjoint, paper appendix M): duplicate ``pair_id``s are resolved (LLM copies
preferred over heuristic ones; label-conflicting duplicates counted), articles linked by any shared
pair (or claim) form connected components, and whole components are placed per domain at 70/15/15
by example count. Those holding conflicts are placed by their questions (beyond the paper): validation and
test first draft components bringing them questions they lack, up to their share of the conflicts, then the
rest go where their questions' conflicts fall furthest short (a group split stratified over questions; placed
by size alone, conflicts, which cluster in a few components, can all land in train). No claim may be in more
than ``max_claim_share`` of a split's conflicts: the excess conflict rows of a claim over it are dropped and
counted (``claim_share_cap``), so that one claim's reading cannot decide a large part of a score; the report
gives every split's conflicts per question and its largest claim share. Components too large for
validation/test go to train and are reported (``oversized_components: auto``, the default, carves them only when
that would leave a split of ``primary`` empty); with ``oversized_components: carve`` (beyond the paper, for
small corpora whose article graph percolates into one component per domain) they are cut into Louvain
communities of articles instead, placed like components, and the pairs that end up between two splits are
dropped and counted.

``test_matched`` (extra split of ``primary``): drawn from the article-disjoint test pool with a
conflict-type mix as close as the pool allows to the ``pairlevel`` test, so that a score gap between
the variants can be attributed to article leakage rather than to a different label mix; the total
variation distance between the two distributions is reported. It is not written when it would hold every
row of ``test`` (the pool already matches as closely as it can): the report says so (``written: false``).

When an LLM annotator labelled part of the pool, validation and test hold only LLM labels and train
is topped up with heuristic labels of confidence ≥ 0.45; with heuristic labels only (the demo), every
split is heuristic and ``split_manifest.json`` says so under ``label_source``.

Every ordering is a seeded hash of record identities, so the split depends only on the pool's
content and the seed, not on the order records arrive in.
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from biodivergence_dataset import ontology
from biodivergence_dataset.arguments import add_config_arguments, config_from_args
from biodivergence_dataset.io import (
    StageStats,
    as_dirs,
    done_fingerprint,
    dropped_counts,
    read_records,
    write_json_atomic,
)
from biodivergence_dataset.records import Example
from biodivergence_dataset.release import SPLIT_REPORT, STATE_DIR
from biodivergence_dataset.release import state_dir as release_state_dir

from .article_graph import article_components, prepare_pool
from .folders import RELEASE_OWNER, add_force_argument, claim_output
from .placement import (
    cap_claim_share,
    claim_spread,
    distribution,
    matched_sample,
    pairlevel_split,
    place_components,
    total_variation,
)
from .stage import Opened, Stage, execute

if TYPE_CHECKING:
    from .runtime import RuntimeConfig

STAGE = "split"
TRAIN, VALIDATION, TEST = ontology.SPLITS
MATCHED = ontology.EXTRA_TEST_SPLITS[0]
#: The drop reason of the conflict rows over ``max_claim_share``.
CLAIM_CAP = "claim_share_cap"


class SplitConfig(BaseModel):
    """Parameters of the split stage (every one has the paper's default)."""

    model_config = ConfigDict(extra="forbid")

    seed: int = 42
    primary_ratios: dict[str, float] = Field(default_factory=lambda: {TRAIN: 0.70, VALIDATION: 0.15, TEST: 0.15})
    pairlevel_ratios: dict[str, float] = Field(default_factory=lambda: {TRAIN: 0.70, VALIDATION: 0.10, TEST: 0.20})
    #: What happens to a component too large for validation/test: ``train`` (the paper's rule) or ``carve``:
    #: cut it into article communities placed like components, dropping pairs that end up between splits
    #: (for corpora whose article graph percolates, e.g. small demo corpora mined densely, or trials grouped by
    #: question, each question's trials all paired); ``carve`` also cuts a component holding more of a question's
    #: conflicts than an evaluation split's share of them, so that each question can reach every split. ``auto``: the paper's rule, unless it would leave a split of
    #: ``primary`` empty, which ``load_dataset`` cannot read; then ``carve``, said in the report and on stderr.
    oversized_components: Literal["train", "carve", "auto"] = "auto"
    #: No claim may be in more than this share of a split's conflicts in ``primary``: the excess conflict rows of a
    #: claim over it are dropped (counted as ``claim_share_cap``), so that one claim's reading cannot decide a
    #: large part of a score. 1.0 turns the cap off.
    max_claim_share: float = Field(0.10, gt=0.0, le=1.0)
    #: Heuristic labels below this confidence are not used to top up train when an LLM annotator was used.
    heuristic_topup_min_confidence: float = Field(0.45, ge=0.0, le=1.0)
    matched_test: bool = True
    #: ``test_matched`` is as large as possible while its total variation distance to the pairlevel test
    #: exceeds the unavoidable one (classes the pool lacks) by at most this …
    matched_tolerance: float = Field(0.002, ge=0.0, le=1.0)
    #: … but never smaller than this fraction of the article-disjoint test pool.
    matched_min_fraction: float = Field(0.5, ge=0.0, le=1.0)

    @field_validator("primary_ratios", "pairlevel_ratios")
    @classmethod
    def _ratios(cls, value: dict[str, float]) -> dict[str, float]:
        if set(value) != set(ontology.SPLITS):
            raise ValueError(f"ratios need exactly the splits {list(ontology.SPLITS)}, got {sorted(value)}")
        if any(v < 0 for v in value.values()) or not math.isclose(sum(value.values()), 1.0, abs_tol=1e-6):
            raise ValueError(f"ratios must be non-negative and sum to 1, got {value}")
        return {s: float(value[s]) for s in ontology.SPLITS}


# ---------------------------------------------------------------------------------------------
# the whole split


#: The oversized rule ``auto`` fell back to, as the report states it.
AUTO_CARVE = ("carve (oversized_components: auto; keeping oversized components whole in train, the paper's rule, "
              "would have left a split of primary empty)")


@dataclass
class SplitResult:
    configs: dict[str, dict[str, list[Example]]]
    report: dict[str, Any]


def _per_domain(splits: Mapping[str, Sequence[Example]]) -> dict[str, dict[str, int]]:
    return {s: dict(sorted(Counter(ex.domain for ex in rows).items())) for s, rows in splits.items()}


def split_pool(examples: Iterable[Example], config: SplitConfig | None = None) -> SplitResult:
    """Build both configs from annotated examples (pure: no I/O)."""
    config = config or SplitConfig()
    pool = prepare_pool(examples, config.heuristic_topup_min_confidence)
    components = article_components(pool.examples)
    rule = "carve" if config.oversized_components == "carve" else "train"
    primary = place_components(components, config.primary_ratios, config.seed, pool.eval_ok,
                               carve_oversized=rule == "carve", claim_cap=config.max_claim_share)
    if config.oversized_components == "auto" and primary.oversized and not all(
            primary.splits[s] for s in ontology.SPLITS):
        rule = AUTO_CARVE
        primary = place_components(components, config.primary_ratios, config.seed, pool.eval_ok,
                                   carve_oversized=True, claim_cap=config.max_claim_share)
    pairlevel = pairlevel_split(pool.examples, config.pairlevel_ratios, config.seed, pool.eval_ok)
    primary_splits = {s: sorted(rows, key=lambda e: e.pair_id) for s, rows in primary.splits.items()}
    for s in ontology.SPLITS:
        primary_splits[s], n_capped = cap_claim_share(primary_splits[s], config.max_claim_share, config.seed)
        primary.dropped[CLAIM_CAP] += n_capped
    pairlevel_splits = {s: sorted(rows, key=lambda e: e.pair_id) for s, rows in pairlevel.splits.items()}
    report: dict[str, Any] = {}
    if config.matched_test:
        reference = distribution(ex.conflict_type for ex in pairlevel_splits[TEST])
        matched, report[MATCHED] = matched_sample(
            primary_splits[TEST], reference, config.seed, config.matched_tolerance, config.matched_min_fraction)
        # a sample of test can concentrate claims again: the cap holds in it too (its dropped rows stay in test)
        matched, n_capped = cap_claim_share(matched, config.max_claim_share, config.seed)
        if n_capped:
            report[MATCHED].update(claim_share_cap=n_capped, size=len(matched), tv_distance=round(total_variation(
                distribution(ex.conflict_type for ex in matched), reference), 4))
        # an empty split cannot be loaded, and one holding every test row adds nothing: the report says why
        report[MATCHED]["written"] = 0 < len(matched) < len(primary_splits[TEST])
        if report[MATCHED]["written"]:
            primary_splits[MATCHED] = matched
    sizes = [c.size for c in components]
    report.update({
        "labelled_per_domain": dict(sorted(pool.labelled.items())),
        "label_source": pool.label_source,
        "duplicates": {"examples_read": len(pool.examples) + sum(pool.dropped.values()),
                       "duplicate_pair_ids": pool.duplicate_pair_ids,
                       "label_conflicting_duplicates": pool.label_conflicting_duplicates},
        "dropped": dict(sorted((pool.dropped + primary.dropped).items())),
        "components": {"count": len(components), "largest": max(sizes, default=0),
                       "singletons": sum(1 for n in sizes if n == 1),
                       "size_histogram": dict(sorted(Counter(sizes).items())),
                       "oversized": primary.oversized, "oversized_rule": rule},
        "questions": {s: claim_spread(rows) for s, rows in primary_splits.items()},
        "targets": {"primary": primary.targets, "pairlevel": pairlevel.targets},
        "per_domain_counts": {"primary": _per_domain(primary_splits), "pairlevel": _per_domain(pairlevel_splits)},
    })
    return SplitResult({"primary": primary_splits, "pairlevel": pairlevel_splits}, report)


def check_nonempty(result: SplitResult) -> None:
    """Refuse a release with an empty train/validation/test split (``load_dataset`` cannot read one)."""
    empty = [f"{c}/{s}" for c, splits in result.configs.items() for s in ontology.SPLITS if not splits[s]]
    if not empty:
        return
    comps = result.report["components"]
    hint = ""
    if comps["oversized"] and comps["oversized_rule"] == "train":
        hint = (f"; {len(comps['oversized'])} article-graph component(s) are too large for validation/test "
                f"(largest: {comps['largest']} examples): set `oversized_components: carve` in the split config")
    raise ValueError(f"split would leave {', '.join(empty)} empty "
                     f"({result.report['duplicates']['examples_read']} examples read){hint}")


# ---------------------------------------------------------------------------------------------
# stage I/O


def state_dir(release_dir: str | Path, stage: str = STAGE) -> Path:
    return release_state_dir(release_dir, stage)


def _stage_stats(result: SplitResult, n_read: int) -> StageStats:
    stats = StageStats(STAGE, seen=n_read, unit="pairs")
    stats.kept = sum(len(rows) for s, rows in result.configs["primary"].items() if s != MATCHED)
    for reason, n in result.report["dropped"].items():
        if n:
            stats.drop(reason, n)
    stats.figures.update({f"{config}_sizes": {split: len(rows) for split, rows in splits.items()}
                          for config, splits in result.configs.items()})
    stats.figures.update({k: result.report[k] for k in ("duplicates", "components", MATCHED) if k in result.report})
    # per split of primary: conflicts, questions holding them, the largest share one claim is in
    stats.figures.update({f"primary_{figure}": {split: spread[figure] for split, spread in result.report["questions"].items()}
                          for figure in ("conflicts", "questions", "largest_claim_share")})
    return stats


def open_stage(annotations_dir: str | Path | Sequence[str | Path], release_dir: Path, config: SplitConfig) -> Opened:
    dirs = as_dirs(annotations_dir)
    for d in dirs:
        if not (d / "_SUCCESS").exists():
            raise FileNotFoundError(f"{d}: not a finished annotation folder (no _SUCCESS marker)")
    release_dir = claim_output(release_dir, RELEASE_OWNER, dirs)
    params = {**config.model_dump(), "inputs": [done_fingerprint(d) for d in dirs]}
    return Opened(STAGE, config, [str(d) for d in dirs], release_dir, params, state=state_dir(release_dir))


def work(opened: Opened, runtime: RuntimeConfig) -> StageStats:
    """Split the annotation folders into the release's data (a global step: ``runtime`` is not used); what the split
    decided goes to ``.stages/split/report.json``."""
    from biodivergence_dataset.release import write_config

    config, release_dir, marker, dirs = opened.config, opened.out, opened.folder, as_dirs(opened.inputs)
    examples = [ex for d in dirs for ex in _progress(read_records(d, Example), f"split: reading {d.name}")]
    result = split_pool(examples, config)
    if result.report["components"]["oversized_rule"] == AUTO_CARVE:
        print(f"split: {AUTO_CARVE}", file=sys.stderr, flush=True)
    check_nonempty(result)
    for config_name, splits in result.configs.items():
        write_config(release_dir, config_name, splits)
    write_json_atomic(marker / SPLIT_REPORT, {
        "manifest": {
            "leakage_mode": {"primary": "article_disjoint_connected_components", "pairlevel": "pair_id_dedup_only"},
            "label_source": result.report["label_source"],
            "seed": config.seed,
            "ratios": {"primary": config.primary_ratios, "pairlevel": config.pairlevel_ratios},
            "thresholds": {"heuristic_topup_min_confidence": config.heuristic_topup_min_confidence,
                           "matched_tolerance": config.matched_tolerance,
                           "matched_min_fraction": config.matched_min_fraction,
                           "max_claim_share": config.max_claim_share},
            "sources": {"annotations": [d.name for d in dirs]},
            "sizes": {c: {s: len(rows) for s, rows in splits.items()} for c, splits in result.configs.items()},
            **{k: v for k, v in result.report.items() if k not in ("label_source", "labelled_per_domain")},
        },
        "labelled_per_domain": result.report["labelled_per_domain"],
    })
    return _stage_stats(result, len(examples))


stage = Stage(STAGE, SplitConfig, open_stage, work, reads=("annotations",), writes="release",
              state=f"{STATE_DIR}/{STAGE}", module=__name__)


def run_stage(
    annotations_dir: str | Path | Sequence[str | Path], release_dir: str | Path, config: SplitConfig | None = None,
    runtime: RuntimeConfig | None = None,
) -> dict[str, Any]:
    """Split one or more annotation folders into a release folder's data; resumable. The release stage
    (:mod:`builder.release_stage`) turns the split's report into ``split_manifest.json`` and writes the card."""
    return execute(stage, annotations_dir, release_dir, config, runtime)


def _progress(iterable, desc: str):
    from tqdm.auto import tqdm

    return tqdm(iterable, desc=desc, unit="ex", mininterval=1.0, leave=False)


def add_arguments(parser) -> None:
    parser.add_argument("annotations_dir", nargs="+",
                        help="annotation stage folder(s); several runs are merged, LLM copies preferred")
    parser.add_argument("--out", required=True, help="release folder to write")
    add_config_arguments(parser, SplitConfig, options={"matched_test": {"help": f"build the {MATCHED} split"}})
    add_force_argument(parser)


def run(args) -> int:
    config = config_from_args(SplitConfig, args)
    from . import release_stage
    if args.force:
        claim_output(args.out, RELEASE_OWNER, args.annotations_dir, force=True)

    stats = run_stage(args.annotations_dir, args.out, config)
    release_stage.run_stage(None, args.out)
    for name in ontology.CONFIGS:
        sizes = stats.get(f"{name}_sizes", {})
        print(f"{name}: " + ", ".join(f"{s}={n}" for s, n in sizes.items()))
    dropped = dropped_counts(stats)
    if dropped:
        print("dropped: " + ", ".join(f"{k}={v}" for k, v in dropped.items()))
    print(f"wrote {args.out}")
    return 0
