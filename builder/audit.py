"""Leakage audit (paper Table 37), release statistics (Tables 17–18) and plots of a release folder.

``biodivergence audit --release DIR`` writes ``audit.json``, ``stats.json`` and ``plots/*.png`` into the
release, then runs the release stage (:mod:`builder.release_stage`: manifests, funnel, card), and exits non-zero
when ``primary`` leaks: any article, claim or pair shared between two of its splits (the test-family splits
``test`` and ``test_matched`` may share). The audit itself does not write the card.
"""

from __future__ import annotations

import json
import math
import statistics
import textwrap
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from itertools import combinations
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow.parquet as pq
from pydantic import BaseModel, ConfigDict, Field

from biodivergence_dataset import ontology
from biodivergence_dataset.features import decode_row
from biodivergence_dataset.io import (
    STATS_FILE,
    content_fingerprint,
    write_json_atomic,
)
from biodivergence_dataset.release import (
    AUDIT_FILE,
    PLOTS_DIR,
    SPLIT_MANIFEST,
    SPLIT_REPORT,
    STATE_DIR,
    config_names,
    split_files,
    split_names,
    split_record,
    state_dir,
)

from .grouping import UnionFind
from .plotting import pyplot, save_png
from .stage import Opened, Stage, execute

if TYPE_CHECKING:
    from .runtime import RuntimeConfig

STAGE = "audit"
PLOTS_FILE = "plots.json"  # title, caption and alt text of each plot, for the card
TRAIN, VALIDATION, TEST = ontology.SPLITS
TEST_FAMILY = frozenset({TEST, *ontology.EXTRA_TEST_SPLITS})
COLUMNS = ("pair_id", "domain", "claim_a_id", "claim_b_id", "claim_a_text", "claim_b_text", "article_uid_a",
           "article_uid_b", "abstract_a", "abstract_b", "conflict_type", "divergence_axes", "dominant_confounder")
IDENTITIES = {"article": ("article_uid_a", "article_uid_b"), "claim": ("claim_a_id", "claim_b_id"),
              "pair": ("pair_id",)}


class AuditConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    plots: bool = True
    dpi: int = Field(110, ge=1)


Rows = list[dict[str, Any]]


def read_config(release_dir: str | Path, config: str) -> dict[str, Rows]:
    """``{split: rows}`` of one config, only the audited columns, labels decoded to names."""
    out = {}
    for split in split_names(release_dir, config):
        rows: Rows = []
        for path in split_files(release_dir, config, split):
            rows.extend(decode_row(r) for r in pq.read_table(path, columns=list(COLUMNS)).to_pylist())
        out[split] = rows
    return out


# ---------------------------------------------------------------------------------------------
# leakage (Table 37)


def _ids(rows: Rows, kind: str) -> set[str]:
    return {row[c] for row in rows for c in IDENTITIES[kind]}


def _claim_pair_text(row: Mapping[str, Any]) -> tuple[str, str]:
    a, b = (" ".join(row[c].lower().split()) for c in ("claim_a_text", "claim_b_text"))
    return (a, b) if a <= b else (b, a)


def _pct(n: int, d: int) -> str:
    return f"{n} ({100.0 * n / d:.1f}%)" if d else f"{n}"


@dataclass
class Leakage:
    counts: dict[str, Any]
    display: dict[str, Any]
    leaks: bool


def article_overlap(rows: Rows, train_articles: set[str]) -> tuple[int, int]:
    """Rows with either / both of their articles in ``train_articles``."""
    hits = [(row["article_uid_a"] in train_articles) + (row["article_uid_b"] in train_articles) for row in rows]
    return sum(h >= 1 for h in hits), sum(h == 2 for h in hits)


def shared_between_splits(splits: Mapping[str, Rows]) -> dict[str, int]:
    """Articles / claims / pairs appearing in two splits that must be disjoint (test family excepted)."""
    shared = {kind: set() for kind in IDENTITIES}
    for a, b in combinations(splits, 2):
        if a in TEST_FAMILY and b in TEST_FAMILY:
            continue
        for kind in IDENTITIES:
            shared[kind] |= _ids(splits[a], kind) & _ids(splits[b], kind)
    return {kind: len(ids) for kind, ids in shared.items()}


def leakage(splits: Mapping[str, Rows]) -> Leakage:
    """Paper Table 37 for one config, plus cross-split sharing of articles, claims and pairs."""
    train, test = splits.get(TRAIN, []), splits.get(TEST, [])
    train_articles = _ids(train, "article")
    either, both = article_overlap(test, train_articles)
    test_pairs = {_claim_pair_text(r) for r in test}
    in_train = len(test_pairs & {_claim_pair_text(r) for r in train})
    pair_ids = len(_ids(train, "pair") & _ids(test, "pair"))
    shared = shared_between_splits(splits)
    counts: dict[str, Any] = {
        "total": sum(len(splits.get(s, [])) for s in ontology.SPLITS),
        "sizes": {s: len(rows) for s, rows in splits.items()},
        "test_rows_either_article_in_train": either,
        "test_rows_both_articles_in_train": both,
        "distinct_test_claim_pairs": len(test_pairs),
        "distinct_test_claim_pairs_in_train": in_train,
        "overlapping_pair_ids_train_test": pair_ids,
        **{f"{kind}s_shared_across_splits": n for kind, n in shared.items()},
    }
    display: dict[str, Any] = {
        "total examples": counts["total"],
        "train / validation / test": " / ".join(str(len(splits.get(s, []))) for s in ontology.SPLITS),
        "test rows with either article in train": _pct(either, len(test)),
        "test rows with both articles in train": _pct(both, len(test)),
        "distinct test claim pairs also in train": f"{in_train} / {len(test_pairs)}",
        "overlapping pair_ids (train ∩ test)": pair_ids,
    }
    for extra in (VALIDATION, *ontology.EXTRA_TEST_SPLITS):
        if extra in splits:
            e, _ = article_overlap(splits[extra], train_articles)
            counts[f"{extra}_rows_either_article_in_train"] = e
            display[f"{extra} rows with either article in train"] = _pct(e, len(splits[extra]))
    for kind, n in shared.items():
        display[f"{kind}s shared across splits"] = n
    return Leakage(counts, display, leaks=any(shared.values()))


# ---------------------------------------------------------------------------------------------
# statistics (Tables 17–18)


def _tokens(text: str) -> int:
    return len(text.split())


def _mean(values: Sequence[float]) -> float:
    return round(statistics.fmean(values), 2) if values else 0.0


def _median(values: Sequence[float]) -> float:
    return float(statistics.median(values)) if values else 0.0


def _by_split(splits: Mapping[str, Rows], labels: Sequence[str], values_of) -> dict[str, dict[str, int]]:
    """``{label: {split: count}}`` over every label of the vocabulary (zeros included)."""
    table = {label: {s: 0 for s in splits} for label in labels}
    for split, rows in splits.items():
        for row in rows:
            for value in values_of(row):
                table[value][split] += 1
    return table


def summary(rows: Rows) -> dict[str, Any]:
    """Table 18's descriptive statistics over ``rows`` (whitespace tokens)."""
    claims = [_tokens(r[c]) for r in rows for c in ("claim_a_text", "claim_b_text")]
    abstracts = [_tokens(r[c]) for r in rows for c in ("abstract_a", "abstract_b") if r[c]]
    confounders = Counter(r["dominant_confounder"] for r in rows if r["dominant_confounder"])
    ranked = [name for name, _ in sorted(confounders.items(), key=lambda kv: (-kv[1], kv[0]))]
    return {
        "examples": len(rows),
        "mean_claim_tokens": _mean(claims),
        "median_claim_tokens": _median(claims),
        "mean_abstract_tokens": _mean(abstracts),
        "median_abstract_tokens": _median(abstracts),
        "mean_axes_per_example": round(statistics.fmean(len(r["divergence_axes"]) for r in rows), 3) if rows else 0.0,
        "examples_with_confounder": sum(confounders.values()),
        "most_common_confounder": ranked[0] if ranked else None,
        "next_confounders": ranked[1:4],
    }


def config_stats(splits: Mapping[str, Rows]) -> dict[str, Any]:
    """Conflict type × split, axis × split, domain × split, confounder counts and summary of one config."""
    core = [r for s in ontology.SPLITS for r in splits.get(s, [])]
    return {
        "splits": {s: len(rows) for s, rows in splits.items()},
        "conflict_type_by_split": _by_split(splits, ontology.CONFLICT_TYPE_NAMES, lambda r: [r["conflict_type"]]),
        "axis_by_split": _by_split(splits, ontology.AXIS_NAMES, lambda r: r["divergence_axes"]),
        "domain_by_split": _by_split(splits, ontology.DOMAIN_NAMES, lambda r: [r["domain"]]),
        "dominant_confounder": {a: n for a, n in sorted(
            Counter(r["dominant_confounder"] for r in core if r["dominant_confounder"]).items(),
            key=lambda kv: (-kv[1], kv[0]))},
        "summary": summary(core),
    }


def component_sizes(rows: Iterable[Mapping[str, Any]]) -> list[int]:
    """Examples per connected component of the article graph (largest first)."""
    uf, rows = UnionFind(), list(rows)
    for r in rows:
        uf.union(f"a:{r['article_uid_a']}", f"a:{r['article_uid_b']}")
    return sorted(Counter(uf.find(f"a:{r['article_uid_a']}") for r in rows).values(), reverse=True)


# ---------------------------------------------------------------------------------------------
# plots


@dataclass(frozen=True)
class Plot:
    """A plot as the card shows it: the file (relative to the release), a title, a caption and alt text."""

    file: str
    title: str
    caption: str
    alt: str


def _counts_text(table: Mapping[str, Mapping[str, int]], split: str) -> str:
    """``name n, …`` of the non-zero rows of one split column (``none`` when all are zero)."""
    return ", ".join(f"{name} {row[split]}" for name, row in table.items() if row[split]) or "none"


def _alt(by_config: Mapping[str, Mapping[str, Any]], key: str, what: str) -> str:
    return " ".join(f"{config}/{split} ({n} rows): {_counts_text(stats[key], split)}."
                    for config, stats in by_config.items() for split, n in stats["splits"].items()) + f" {what}"


#: A count axis turns logarithmic when its largest count is at least this many times its smallest non-zero one.
LOG_RANGE = 20


def _count_scale(ax, horizontal: bool, peak: int, smallest: int) -> bool:
    """Scale a count axis: logarithmic (linear below 1) with plain-number ticks at 0, 1, 10, 100, … when the
    counts span more than ``LOG_RANGE``×, else linear with integer ticks. Returns whether it is logarithmic."""
    from matplotlib.ticker import FixedLocator, MaxNLocator, StrMethodFormatter

    axis, set_scale, set_limits = ((ax.xaxis, ax.set_xscale, ax.set_xlim) if horizontal
                                   else (ax.yaxis, ax.set_yscale, ax.set_ylim))
    log = peak >= LOG_RANGE * max(1, smallest)
    if log:
        set_scale("symlog", linthresh=1)
        axis.set_major_locator(FixedLocator([0] + [10 ** k for k in range(math.ceil(math.log10(peak * 3)) + 1)]))
        axis.set_minor_locator(FixedLocator([]))
        axis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
        limit = peak * 3
    else:
        axis.set_major_locator(MaxNLocator(integer=True))
        limit = peak * 1.15 + 1
    set_limits(0, limit)
    return log


def _grouped_counts(ax, table: Mapping[str, Mapping[str, int]], splits: Mapping[str, int], horizontal: bool,
                    what: str, count_label: str) -> bool:
    """One bar per (row, split) with its count written on it; rows with no example in any split are named under
    the panel instead of drawn as empty slots, and the legend sits beside the panel. Returns whether the count
    axis is logarithmic."""
    names = [name for name, row in table.items() if any(row[s] for s in splits)]
    empty = [name.replace("_", " ") for name in table if name not in names]
    note = textwrap.fill(f"no examples: {', '.join(empty)}", 70) if empty and names else ""
    if not names:
        ax.text(0.5, 0.5, f"no example has {what} in any split", ha="center", va="center", transform=ax.transAxes)
        ax.set_xticks([])
        ax.set_yticks([])
        return False
    step = 0.8 / max(1, len(splits))
    for i, split in enumerate(splits):
        positions = [k + i * step for k in range(len(names))]
        counts = [table[name][split] for name in names]
        draw = ax.barh if horizontal else ax.bar
        bars = draw(positions, counts, step, label=f"{split} (n={splits[split]})")
        ax.bar_label(bars, labels=[str(c) if c else "" for c in counts], fontsize=7, padding=2,
                     rotation=0 if horizontal or len(splits) < 3 else 90)
    ticks = [k + step * (len(splits) - 1) / 2 for k in range(len(names))]
    labels = [n.replace("_", " ") for n in names]
    counts = [table[name][s] for name in names for s in splits if table[name][s]]
    log = _count_scale(ax, horizontal, max(counts), min(counts))
    if horizontal:
        ax.set_yticks(ticks, labels, fontsize=8)
        ax.invert_yaxis()
    else:
        ax.set_xticks(ticks, labels, rotation=30 if len(names) > 3 else 0, ha="right" if len(names) > 3 else "center",
                      fontsize=8)
    count_label += " (log scale)" if log else ""
    (ax.set_xlabel if horizontal else ax.set_ylabel)(count_label)
    if note:  # under the panel, where no bar can hide it
        ax.set_xlabel(f"{count_label if horizontal else ''}\n{note}".strip())
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    return log


def _scale_words(log: bool) -> str:
    return ("The count axis is logarithmic (linear below 1), so classes with a handful of examples stay visible next "
            "to the dominant one" if log else "The count axis is linear")


def plot_label_distribution(by_config: Mapping[str, Mapping[str, Any]], path: Path, dpi: int) -> Plot:
    """Conflict-type counts per split, one panel per config (counts on the bars, empty classes named)."""
    plt = pyplot()
    fig, axes = plt.subplots(1, len(by_config), figsize=(7.5 * len(by_config), 4.5), squeeze=False)
    logs = []
    for ax, (config, stats) in zip(axes[0], by_config.items()):
        logs.append(_grouped_counts(ax, stats["conflict_type_by_split"], stats["splits"], False, "a conflict type",
                                    "examples"))
        ax.set_title(f"{config}: conflict type by split")
    save_png(fig, path, dpi)
    return Plot(f"{PLOTS_DIR}/{path.name}", "Conflict types per split",
                "Examples of each conflict type in each split, one panel per config; every bar carries its count and "
                f"classes without examples are named in the panel. {_scale_words(any(logs))}.",
                "Grouped bar chart of conflict-type counts per split. Non-zero counts: "
                + _alt(by_config, "conflict_type_by_split", "Every other class has 0 examples."))


def plot_axis_distribution(by_config: Mapping[str, Mapping[str, Any]], path: Path, dpi: int) -> Plot:
    """Examples carrying each divergence axis per split, one panel per config (counts on the bars, empty axes
    named)."""
    plt = pyplot()
    fig, axes = plt.subplots(1, len(by_config), figsize=(7.5 * len(by_config), 5.5), squeeze=False)
    logs = []
    for ax, (config, stats) in zip(axes[0], by_config.items()):
        logs.append(_grouped_counts(ax, stats["axis_by_split"], stats["splits"], True, "a divergence axis",
                                    "examples with the axis"))
        ax.set_title(f"{config}: divergence axes by split")
    save_png(fig, path, dpi)
    return Plot(f"{PLOTS_DIR}/{path.name}", "Divergence axes per split",
                "Examples carrying each divergence axis in each split (an example may carry several), one panel "
                "per config; every bar carries its count and axes without examples are named in the panel. "
                f"{_scale_words(any(logs))}.",
                "Horizontal grouped bar chart of divergence-axis counts per split. Non-zero counts: "
                + _alt(by_config, "axis_by_split", "Every other axis has 0 examples."))


def plot_component_sizes(series: Mapping[str, Sequence[int]], path: Path, dpi: int) -> Plot:
    """Rank–size plot of article-graph components (examples per component, largest first), one line per graph."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 4.6))
    described = []
    for label, sizes in series.items():
        ranked = sorted(sizes, reverse=True)
        if ranked:
            ax.step(range(1, len(ranked) + 1), ranked, where="post", marker=".",
                    label=f"{label} ({len(ranked)} components, largest {ranked[0]})")
            described.append(f"{label}: {len(ranked)} components, the largest with {ranked[0]} examples, "
                             f"{sum(1 for n in ranked if n == 1)} with a single example.")
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ax.set_xscale("log")
    ax.set_yscale("log")
    for axis in (ax.xaxis, ax.yaxis):  # plain numbers (1, 2, 5, 10, …), not 2×10⁰
        axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        axis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:,.0f}" if x >= 1 else ""))  # counts start at 1
        axis.set_minor_formatter(NullFormatter())
    longest = max((len(s) for s in series.values()), default=1)
    largest = max((max(s) for s in series.values() if s), default=1)
    ax.set_xlim(0.8, max(2, longest) * 1.25)  # counts start at 1: no ticks below it, room when all are equal
    ax.set_ylim(0.8, max(2, largest) * 1.5)
    ax.set_xlabel("component rank")
    ax.set_ylabel("examples in component")
    ax.set_title("primary: article-graph components")
    if described:
        ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.18))  # below: the lines start top left
    else:
        ax.text(0.5, 0.5, "no components", ha="center", va="center", transform=ax.transAxes)
    save_png(fig, path, dpi)
    return Plot(f"{PLOTS_DIR}/{path.name}", "Article-graph components",
                "Size of each connected component of the article graph (articles linked by a shared pair), "
                "largest first, on log–log axes: before the split and in the released primary splits. `primary` "
                "keeps each component inside one split, so a few giant components limit how evenly it can split.",
                "Rank–size step plot on log–log axes. " + " ".join(described))


# ---------------------------------------------------------------------------------------------
# stage


def _read_json(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def release_fingerprint(release_dir: Path) -> str:
    """The content fingerprint of what the audit reads: the split's report (the split manifest of a release
    assembled by hand) and every config's shards."""
    report = state_dir(release_dir, "split") / SPLIT_REPORT
    files = [report if report.exists() else release_dir / SPLIT_MANIFEST]
    files += [p for c in config_names(release_dir) for p in sorted((release_dir / c).glob("*.parquet"))]
    return content_fingerprint(release_dir, files)


def audit_release(release_dir: str | Path) -> dict[str, Any]:
    """Audit and statistics of a release (pure read; see :func:`run_stage` for the files it writes)."""
    release_dir = Path(release_dir)
    configs = {c: read_config(release_dir, c) for c in config_names(release_dir)}
    if not configs:
        raise FileNotFoundError(f"{release_dir}: no release configs ({', '.join(ontology.CONFIGS)}) found")
    manifest = split_record(release_dir)
    leaks = {c: leakage(splits) for c, splits in configs.items()}
    by_config = {c: config_stats(splits) for c, splits in configs.items()}
    primary_rows = [r for s in ontology.SPLITS for r in configs.get(ontology.DEFAULT_CONFIG, {}).get(s, [])]
    sizes = component_sizes(primary_rows)
    pool_sizes = [int(k) for k, v in manifest.get("components", {}).get("size_histogram", {}).items() for _ in range(v)]
    audit = {
        "leakage": {c: lk.display for c, lk in leaks.items()},
        "counts": {c: lk.counts for c, lk in leaks.items()},
        "leaks": {c: lk.leaks for c, lk in leaks.items()},
        "ok": not leaks.get(ontology.DEFAULT_CONFIG, Leakage({}, {}, False)).leaks,
    }
    matched = ontology.EXTRA_TEST_SPLITS[0]
    if matched in manifest:
        audit[matched] = manifest[matched]
    stats = {  # the release stage puts the funnel per domain (``per_domain``) first
        "by_config": by_config,
        "components": {"count": len(sizes), "largest": max(sizes, default=0),
                       "singletons": sum(1 for n in sizes if n == 1),
                       "size_histogram": {str(k): v for k, v in sorted(Counter(sizes).items())}},
        "duplicates": manifest.get("duplicates", {}),
        "label_source": manifest.get("label_source", {}),
    }
    series = {"annotated pool, before the split": pool_sizes, "released primary splits": sizes}
    return {"audit": audit, "stats": stats, "component_sizes": {k: v for k, v in series.items() if v}}


def write_plots(release_dir: Path, result: Mapping[str, Any], dpi: int) -> list[Plot]:
    """Draw the plots into ``PLOTS_DIR``; returns their titles, captions and alt text for the card."""
    plots = release_dir / PLOTS_DIR
    by_config = result["stats"]["by_config"]
    return [
        plot_label_distribution(by_config, plots / "conflict_type_by_split.png", dpi),
        plot_axis_distribution(by_config, plots / "axes_by_split.png", dpi),
        plot_component_sizes(result["component_sizes"], plots / "component_sizes.png", dpi),
    ]


def open_stage(release_dir: str | Path, out_dir: Path, config: AuditConfig) -> Opened:
    release_dir = Path(release_dir)
    params = {**config.model_dump(), "release": release_fingerprint(release_dir)}
    return Opened(STAGE, config, [str(release_dir)], out_dir, params, state=state_dir(out_dir, STAGE))


def work(opened: Opened, runtime: RuntimeConfig) -> dict[str, Any]:
    """Audit the release (a global step: ``runtime`` is not used); the state folder's stats say whether it leaks."""
    config, out_dir = opened.config, opened.out
    with _progress(2 if config.plots else 1) as bar:
        result = audit_release(Path(opened.inputs[0]))
        write_json_atomic(out_dir / AUDIT_FILE, result["audit"])
        write_json_atomic(out_dir / STATS_FILE, result["stats"])
        bar.update()
        if config.plots:
            plots = write_plots(out_dir, result, config.dpi)
            write_json_atomic(out_dir / PLOTS_DIR / PLOTS_FILE, [asdict(p) for p in plots])
            bar.update()
    return {"stage": STAGE, "ok": result["audit"]["ok"], "leaks": result["audit"]["leaks"]}


def audit_result(opened: Opened) -> dict[str, Any]:
    """The audit dict (``leakage``, ``counts``, ``leaks``, ``ok``, …) of ``audit.json``."""
    return _read_json(opened.out / AUDIT_FILE)


stage = Stage(STAGE, AuditConfig, open_stage, work, reads=("release",), writes="release",
              state=f"{STATE_DIR}/{STAGE}", module=__name__, result=audit_result)


def run_stage(release_dir: str | Path, out_dir: str | Path, config: AuditConfig | None = None,
              runtime: RuntimeConfig | None = None) -> dict[str, Any]:
    """Audit the release in ``release_dir`` and write audit.json, stats.json and plots into ``out_dir`` (in a
    build, the release itself); resumable (the card is the release stage's). Returns the audit dict."""
    return execute(stage, release_dir, out_dir, config, runtime)


def _progress(steps: int):
    from tqdm.auto import tqdm

    return tqdm(total=steps, desc="audit (tables, plots)", unit="step", leave=False)


def format_audit(audit: Mapping[str, Any]) -> str:
    """The leakage table as aligned text, one column per config."""
    variants = list(audit.get("leakage", {}))
    stats = list(dict.fromkeys(k for v in variants for k in audit["leakage"][v]))
    width = max((len(s) for s in stats), default=10)
    lines = [f"{'statistic':<{width}}  " + "  ".join(f"{v:>18}" for v in variants)]
    for stat in stats:
        cells = (str(audit["leakage"][v].get(stat, "–")) for v in variants)
        lines.append(f"{stat:<{width}}  " + "  ".join(f"{c:>18}" for c in cells))
    matched = audit.get(ontology.EXTRA_TEST_SPLITS[0])
    if matched and matched.get("written", True):
        lines.append(f"{ontology.EXTRA_TEST_SPLITS[0]}: {matched['size']} rows, conflict-type TV distance to "
                     f"pairlevel/test {matched['tv_distance']} (primary/test: {matched['tv_distance_before']})")
    elif matched:
        lines.append(f"{ontology.EXTRA_TEST_SPLITS[0]}: not written, it would hold every row of primary/test "
                     f"(conflict-type TV distance to pairlevel/test {matched['tv_distance_before']} already)")
    return "\n".join(lines)
