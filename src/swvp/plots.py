"""Learning-curve plots (matplotlib, headless)."""

from __future__ import annotations

import io
import os
from pathlib import Path

from swvp.data.textio import atomic_write_bytes


def save_figure(fig, path: str | os.PathLike, dpi: int = 120) -> None:
    """Write a matplotlib figure atomically (format from the suffix, PNG without one) and close it."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format=Path(path).suffix.lstrip(".").lower() or "png", dpi=dpi)
    plt.close(fig)
    atomic_write_bytes(path, buf.getvalue())


def learning_curves(history: list[dict], path: str | os.PathLike, title: str = "") -> None:
    """Per-epoch online train accuracy, averaged-weights train accuracy and dev accuracy, written atomically."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    epochs = [h["epoch"] for h in history]
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    for key, label in (("online_accuracy", "train (online, during the epoch)"),
                       ("train_accuracy", "train (averaged weights)"), ("dev_accuracy", "dev")):
        ys = [h.get(key) for h in history]
        if any(y is not None for y in ys):
            ax.plot(epochs, [None if y is None else 100 * y for y in ys], marker="o", label=label)
    ax.set_xlabel("epoch")
    ax.set_ylabel("token accuracy (%)")
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    save_figure(fig, path)
