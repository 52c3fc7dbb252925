"""The figures and markdown tables of the experiments (matplotlib through
:func:`sdckit.evaluate.plots.pyplot`, written atomically by :func:`sdckit.evaluate.plots.save_figure`)."""

from __future__ import annotations

import os

import polars as pl

from sdckit.evaluate.plots import pyplot, save_figure


def markdown_table(frame: pl.DataFrame) -> str:
    """A polars frame as a GitHub markdown table (numbers rounded for reading)."""
    header = "| " + " | ".join(frame.columns) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    lines = [header, rule]
    for row in frame.iter_rows():
        cells = []
        for value in row:
            if value is None:
                cells.append("")
            elif isinstance(value, float):
                cells.append(f"{value:.4f}" if abs(value) < 1000 else f"{value:,.0f}")
            elif isinstance(value, int):
                cells.append(f"{value:,}")
            else:
                cells.append(str(value).replace("|", "\\|"))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def ncp_bar_chart(frame: pl.DataFrame, path: str | os.PathLike, title: str) -> None:
    """Orooji & Knapp's Figure 3: the NCP (%) of every release of the targeted-suppression experiment
    (``frame`` its rows: ``family``, ``method``, ``ncp``), one bar each, coloured by family; the
    original data and the releases without an NCP are left out."""
    plt = pyplot()

    shown = frame.filter(pl.col("ncp").is_not_null() & (pl.col("family") != "original"))
    colors = {"suppression": "tab:green", "full-domain generalization": "tab:blue", "Mondrian": "tab:orange"}
    labels = [method.split(": ", 1)[-1] for method in shown.get_column("method").to_list()]
    families = shown.get_column("family").to_list()
    values = [100 * v for v in shown.get_column("ncp").to_list()]
    from matplotlib.patches import Patch

    figure, axis = plt.subplots(figsize=(max(6.0, 0.55 * len(values) + 2), 4.5))
    bars = axis.bar(range(len(values)), values, color=[colors.get(f, "grey") for f in families])
    # Values on the bars: the smallest losses would not be visible otherwise.
    axis.bar_label(bars, labels=[f"{v:.2f}" if v < 10 else f"{v:.0f}" for v in values], fontsize=7, padding=2)
    axis.set_xticks(range(len(values)), labels, rotation=60, ha="right", fontsize=8)
    axis.set_ylabel("information loss NCP (%)")
    axis.set_title(title, fontsize=10)
    handles = [Patch(color=color, label=family) for family, color in colors.items() if family in families]
    axis.legend(handles=handles, fontsize=8)
    figure.tight_layout()
    save_figure(figure, path, dpi=120)


def correlation_chart(
    correlation: pl.DataFrame,
    path: str | os.PathLike,
    name: str,
    ylabel: str = "average φ² inside the released columns",
    subtitle: str = "",
) -> None:
    """Dhaigude & Kumar's Figure 2: the average correlation inside the released columns against the
    number of columns, slicing vs improved slicing, with the standard deviation over the runs
    (``correlation`` the slicing experiment's table of that name; ``ylabel`` names the measure and
    the averaging, ``subtitle`` is added to the title)."""
    plt = pyplot()

    figure, axis = plt.subplots(figsize=(6.0, 4.0))
    for method, marker in (("slicing", "o"), ("improved slicing", "s")):
        rows = correlation.filter(pl.col("method") == method).sort("columns")
        axis.errorbar(
            rows["columns"].to_list(), rows["average_correlation"].to_list(), yerr=rows["std"].to_list(),
            marker=marker, capsize=3, label=method,
        )  # fmt: skip
    axis.set_xlabel("number of columns")
    axis.set_ylabel(ylabel)
    axis.set_title(f"Figure 2 — {name}" + (f"\n{subtitle}" if subtitle else ""), fontsize=10)
    axis.legend()
    figure.tight_layout()
    save_figure(figure, path, dpi=120)


def removal_cost_chart(figure5: pl.DataFrame, path: str | os.PathLike) -> None:
    """Shi, Xiong & Fung's Figure 5: the removal cost T of the adaptive search and of the baseline DFS
    against l (c = 1) and against c (l = 30), side by side (``figure5`` the frame of that name)."""
    plt = pyplot()

    figure, axes = plt.subplots(1, 2, figsize=(10.0, 4.0))
    for axis, parameter, label in ((axes[0], "l", "l (c = 1)"), (axes[1], "c", "c (l = 30)")):
        rows = figure5.filter(pl.col("parameter") == parameter)
        for strategy, marker in (("adaptive", "o"), ("baseline", "s")):
            part = rows.filter(pl.col("strategy") == strategy).sort("value")
            axis.plot(part["value"].to_list(), part["removal_cost"].to_list(), marker=marker, label=strategy)
        axis.set_xlabel(label)
        axis.set_ylabel("removal cost T")
        axis.legend()
    figure.suptitle("Figure 5 — QS suppression for QS (c,l)-diversity", fontsize=10)
    figure.tight_layout()
    save_figure(figure, path, dpi=120)


def closeness_chart(figure6: pl.DataFrame, path: str | os.PathLike) -> None:
    """Shi, Xiong & Fung's Figure 6: the removal cost and the generalization loss against t², one line
    per k (``figure6`` the frame of that name)."""
    plt = pyplot()

    figure, axes = plt.subplots(1, 2, figsize=(10.0, 4.0))
    for k in sorted(set(figure6["k"].to_list())):
        part = figure6.filter(pl.col("k") == k).sort("t")
        axes[0].plot(
            part["t_squared"].to_list(), part["removal_cost"].to_list(), marker="o", label=f"k = {k}"
        )
        axes[1].plot(
            part["t_squared"].to_list(), part["generalization_ncp"].to_list(), marker="o", label=f"k = {k}"
        )
    axes[0].set_ylabel("removal cost T")
    axes[1].set_ylabel("generalization loss (NCP)")
    for axis in axes:
        axis.set_xlabel("t²")
        axis.legend(fontsize=7)
    figure.suptitle("Figure 6 — QI generalization and QS suppression for QS t-closeness", fontsize=10)
    figure.tight_layout()
    save_figure(figure, path, dpi=120)
