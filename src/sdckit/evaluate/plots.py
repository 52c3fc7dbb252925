"""Plots for reports, written with matplotlib's non-interactive Agg backend."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from sdckit.errors import ConfigError
from sdckit.io import atomic_write

PLOT_FORMATS = {".png": "png", ".pdf": "pdf", ".svg": "svg"}


def plot_format(path: str | os.PathLike) -> str:
    """The matplotlib format of a plot file, from its extension (png, pdf or svg)."""
    suffix = Path(path).suffix.lower()
    if suffix not in PLOT_FORMATS:
        raise ConfigError(
            f"{path}: a plot must be written as {', '.join(PLOT_FORMATS)}, not '{suffix or 'no extension'}'"
        )
    return PLOT_FORMATS[suffix]


def pyplot():
    """matplotlib's pyplot on the non-interactive Agg backend (imported on first use: it is slow)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(figure, path: str | os.PathLike, *, dpi: int | None = None) -> None:
    """Write ``figure`` atomically in the format its extension names (png, pdf, svg), then close it."""
    fmt = plot_format(path)
    try:
        with atomic_write(path) as temporary:
            figure.savefig(temporary, format=fmt, dpi=dpi)
    finally:
        pyplot().close(figure)


def log_edges(positive: np.ndarray, bins: int = 60) -> np.ndarray:
    """The ``bins + 1`` log-spaced edges of a risk histogram over positive values (from half to twice
    the value when all are equal)."""
    low, high = float(positive.min()), float(positive.max())
    if high <= low:
        low, high = low / 2, high * 2
    return np.geomspace(low, high, bins + 1)


def risk_bins(risks: np.ndarray, bins: int = 60) -> dict[str, object]:
    """The counts :func:`risk_histogram` draws for one risk vector: ``edges`` (log-spaced over the
    positive risks), ``counts`` per bin, and ``zeros``, the records at risk 0 that a log axis cannot
    show (as its legend says)."""
    values = np.asarray(risks, dtype=np.float64)
    positive = values[values > 0]
    if not positive.size:
        return {"edges": [], "counts": [], "zeros": int(values.size)}
    edges = log_edges(positive, bins)
    counts, _ = np.histogram(positive, bins=edges)
    return {"edges": edges.tolist(), "counts": counts.tolist(), "zeros": int(values.size - positive.size)}


def risk_histogram(
    risks: Mapping[str, np.ndarray] | np.ndarray,
    path: str | os.PathLike,
    *,
    threshold: float | None = None,
    bins: int = 60,
    title: str = "Record disclosure risk D(r)",
    axis_label: str = "disclosure risk D(r) (log scale)",
) -> None:
    """Histogram of record risks on logarithmic axes, as Figure 2 of Orooji & Knapp (2019).

    Risk values are binned on a log-spaced grid (records with risk 0 cannot be placed on a log axis
    and are counted in the legend instead) and the counts are drawn on a log scale. Several named
    risk vectors (e.g. before and after protection) are overlaid on the same bins. ``axis_label``
    names the risk on the x axis (another risk than D(r) must say which). The file is written
    atomically.
    """
    plt = pyplot()
    series = {"records": np.asarray(risks)} if isinstance(risks, np.ndarray) else dict(risks)
    plot_format(path)  # a bad extension is refused before any drawing
    positive = np.concatenate([values[values > 0] for values in series.values()] or [np.zeros(0)])
    figure, axes = plt.subplots(figsize=(8, 4.8), dpi=110)
    if positive.size:
        edges = log_edges(positive, bins)
        for label, values in series.items():
            zeros = int(np.count_nonzero(values <= 0))
            note = f" ({zeros:,} at 0 not shown)" if zeros else ""
            axes.hist(values[values > 0], bins=edges, alpha=0.6, label=f"{label}: {len(values):,}{note}")
        axes.set_xscale("log")
        axes.set_yscale("log")
    else:
        axes.text(0.5, 0.5, "every record has risk 0", ha="center", va="center", transform=axes.transAxes)
    if threshold is not None and threshold > 0:
        axes.axvline(
            threshold, color="crimson", linestyle="--", linewidth=1.2, label=f"threshold {threshold:g}"
        )
    axes.set_xlabel(axis_label)
    axes.set_ylabel("number of records (log scale)")
    axes.set_title(title)
    if axes.get_legend_handles_labels()[0]:
        axes.legend(fontsize="small")
    figure.tight_layout()
    save_figure(figure, path)
