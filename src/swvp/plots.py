"""Learning-curve plots (matplotlib, headless)."""

from __future__ import annotations

import os
from pathlib import Path


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
    path = Path(path)
    tmp = path.with_name(f".{path.stem}.tmp{path.suffix or '.png'}")
    fig.savefig(tmp, dpi=120)
    plt.close(fig)
    os.replace(tmp, path)
