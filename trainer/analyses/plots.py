"""The report's two kinds of PNG figure (grouped bars, annotated heatmap), each kept with the data it shows."""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from biodivergence_dataset.io import write_bytes_atomic

PLOTS_DIR = "plots"


@dataclass
class Figure:
    """A figure as written: its file (relative to the report), title, axis labels and plotted data."""

    file: str
    title: str
    xlabel: str
    ylabel: str
    data: dict[str, Any]


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig, out_dir: Path, name: str) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    _pyplot().close(fig)
    relative = f"{PLOTS_DIR}/{name}.png"
    write_bytes_atomic(out_dir / relative, buffer.getvalue())
    return relative


def bar_chart(out_dir: Path, name: str, title: str, xlabel: str, ylabel: str,
              categories: Sequence[str], series: dict[str, Sequence[float | None]], ylim: tuple[float, float] = (0, 1.15)) -> Figure:
    """Grouped vertical bars: one group per category, one bar per series (None plotted as a gap)."""
    import numpy as np

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(6.0, 0.9 * len(categories) * max(1, len(series)) ** 0.5 + 2), 4.5))
    width = 0.8 / max(1, len(series))
    x = np.arange(len(categories))
    for k, (label, values) in enumerate(series.items()):
        heights = [np.nan if v is None else v for v in values]
        bars = ax.bar(x + (k - (len(series) - 1) / 2) * width, heights, width, label=label)
        ax.bar_label(bars, labels=["" if v is None else f"{v:.2f}" for v in values], fontsize="x-small")
    ax.set_xticks(x, categories, rotation=30 if len(categories) > 4 else 0, ha="right" if len(categories) > 4 else "center")
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel, ylim=ylim)
    ax.legend(fontsize="small", loc="upper center", ncols=len(series))
    ax.grid(axis="y", alpha=0.3)
    data = {"categories": list(categories), "series": {k: list(v) for k, v in series.items()}}
    return Figure(_save(fig, out_dir, name), title, xlabel, ylabel, data)


def heatmap(out_dir: Path, name: str, title: str, xlabel: str, ylabel: str, rows: Sequence[str], columns: Sequence[str],
            matrix: Sequence[Sequence[float | None]], fmt: str = "{:.0f}", vmin: float | None = None, vmax: float | None = None) -> Figure:
    """A matrix as coloured cells with each cell's value written in it (None left blank)."""
    import numpy as np

    plt = _pyplot()
    values = np.array([[np.nan if v is None else v for v in row] for row in matrix], dtype=float)
    fig, ax = plt.subplots(figsize=(max(5.0, 0.75 * len(columns) + 3), max(3.5, 0.5 * len(rows) + 2)))
    image = ax.imshow(values, cmap="Blues", vmin=vmin, vmax=vmax, aspect="auto")
    fig.colorbar(image, ax=ax, fraction=0.04)
    ax.set_xticks(range(len(columns)), columns, rotation=40, ha="right")
    ax.set_yticks(range(len(rows)), rows)
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    finite = values[np.isfinite(values)]
    middle = (finite.max() + finite.min()) / 2 if finite.size else 0
    for (i, j), v in np.ndenumerate(values):
        if np.isfinite(v):
            ax.text(j, i, fmt.format(v), ha="center", va="center", fontsize="small", color="white" if v > middle else "black")
    data = {"rows": list(rows), "columns": list(columns), "matrix": [list(r) for r in matrix]}
    return Figure(_save(fig, out_dir, name), title, xlabel, ylabel, data)
