"""One plot per evidence map: the direction each study reports, grouped by the condition that differs.

Each study is a row (its article and year); its marker sits at its direction (lower, no difference, higher; not
reported at the side), filled when its words state the finding significant, hollow otherwise; rows are banded by
the study's value of the map's grouping axis (``EvidenceMap.grouping_axis``; grey: not stated), and a dashed line
marks the pooled direction. Drawn with matplotlib's Agg backend (no display), written atomically.
"""

from __future__ import annotations

from pathlib import Path

from biodivergence_dataset import ontology
from biodivergence_dataset.records import EvidenceMap

from .evidence_map import NOT_STATED
from .plotting import pyplot, save_png

#: The x position of each direction: the three answers in order, not_reported set apart.
POSITIONS = {"decrease": 0, "no_difference": 1, "increase": 2, "not_reported": 3.3}
assert set(POSITIONS) == set(ontology.READER_FINDINGS)
#: The tallest plot (inches): a question with many studies gets smaller rows, not an endless figure.
MAX_HEIGHT = 24.0
GROUP_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#bcbd22", "#17becf")
#: The studies that state nothing on the grouping axis: grey, apart from every group.
NOT_STATED_COLOUR = "#7f7f7f"


def _label(text: str, limit: int = 38) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def draw_map(m: EvidenceMap, path: Path, dpi: int = 110) -> Path:
    """Draw ``m`` into ``path`` (PNG)."""
    plt = pyplot()
    n = len(m.studies)
    fig, ax = plt.subplots(figsize=(8.5, min(MAX_HEIGHT, 1.6 + 0.32 * n)))
    groups = list(dict.fromkeys(s.group for s in m.studies))
    colour = {g: NOT_STATED_COLOUR if g == NOT_STATED else GROUP_COLOURS[i % len(GROUP_COLOURS)]
              for i, g in enumerate(groups)}
    for i, s in enumerate(m.studies):
        y = n - 1 - i
        filled = s.significance == ontology.SIGNIFICANCE_VALUES[0]
        ax.scatter([POSITIONS[s.direction]], [y], s=70, edgecolors=colour[s.group], linewidths=1.6,
                   facecolors=colour[s.group] if filled else "none", zorder=3)
    start = 0
    for g in groups:  # a band and a label per group, in the order the map lists its studies
        size = sum(s.group == g for s in m.studies)
        top, bottom = n - 1 - start + 0.5, n - 1 - (start + size - 1) - 0.5
        ax.axhspan(bottom, top, color=colour[g], alpha=0.07, zorder=1)
        if m.grouping_axis:
            ax.text(3.75, (top + bottom) / 2, _label(g), va="center", fontsize=8, color=colour[g])
        start += size
    ax.axvline(POSITIONS[m.pooled_direction], color="black", linestyle="--", linewidth=1, zorder=2)
    ax.set_xticks(list(POSITIONS.values()), [ontology.READER_FINDING_WORDS[d] for d in POSITIONS])
    ax.set_xlim(-0.5, 5.6 if m.grouping_axis else 3.8)
    ax.set_yticks(range(n), [f"{s.article_uid} ({s.pub_year or '?'})" for s in reversed(m.studies)], fontsize=7)
    ax.set_ylim(-0.7, n - 0.3)
    grouped = f"; grouped by {ontology.axis(m.grouping_axis).title.lower()}" if m.grouping_axis else ""
    ax.set_title(f"{m.question_id}: direction per study{grouped}\n(filled: stated significant; dashed: pooled "
                 f"direction, {ontology.READER_FINDING_WORDS[m.pooled_direction]})", fontsize=9)
    return save_png(fig, path, dpi)
