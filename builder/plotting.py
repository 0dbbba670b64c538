"""matplotlib for the builder's plots: the Agg backend (no display needed) and one way to save a figure."""

from __future__ import annotations

from pathlib import Path

from biodivergence_dataset.io import atomic_path


def pyplot():
    """``matplotlib.pyplot`` on the Agg backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_png(fig, path: Path, dpi: int) -> Path:
    """Lay ``fig`` out, write it to ``path`` as PNG atomically (no software stamp: the same plot, the same bytes)
    and close it."""
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=dpi, metadata={"Software": None})
    pyplot().close(fig)
    return path
