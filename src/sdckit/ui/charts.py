"""The two figures of the workbench as inline SVG (no script, no network): the histogram of the
combined risk, drawn from :func:`sdckit.evaluate.plots.risk_bins` (the counts ``--histogram`` draws),
and the R-U map of an evaluation (:mod:`sdckit.evaluate.rumap`: its points and Pareto front)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from sdckit.evaluate.figure_names import figure_label

WIDTH, HEIGHT = 760, 300
LEFT, RIGHT, TOP, BOTTOM = 84, 16, 14, 44


def _ticks_log(low: float, high: float) -> list[float]:
    return [10.0**e for e in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)]


def histogram_svg(bins: Mapping[str, Any], threshold: float | None) -> str:
    """Bars of the counts on log-spaced bins (x log scale, y log scale as in the PNG), threshold dashed."""
    edges, counts = list(bins["edges"]), list(bins["counts"])
    label = "Histogram of the combined record risk D(r)"
    if not counts:
        return f'<p role="img" aria-label="{label}">Every record has risk 0.</p>'
    x0, x1 = math.log10(edges[0]), math.log10(edges[-1])
    top = math.log10(max(max(counts), 1)) + 0.1
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(value: float) -> float:
        return LEFT + (math.log10(value) - x0) / (x1 - x0 or 1) * plot_w

    def y(count: float) -> float:  # log scale with 1 at the axis (0 not drawn)
        return TOP + plot_h - (math.log10(count) + 0.0) / (top or 1) * plot_h if count > 0 else TOP + plot_h

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" '
        f'height="{HEIGHT}" role="img" aria-labelledby="histogram-title" id="histogram-svg">',
        f'<title id="histogram-title">{label}</title>',
        f'<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="#fbfcfd" stroke="#ccc"/>',
    ]
    for low, high, count in zip(edges, edges[1:], counts, strict=False):
        if count <= 0:
            continue
        top_y = y(count) if count > 1 else TOP + plot_h - 0.02 * plot_h
        parts.append(
            f'<rect class="bar" x="{x(low):.2f}" y="{top_y:.2f}" '
            f'width="{max(x(high) - x(low) - 0.6, 0.6):.2f}" '
            f'height="{TOP + plot_h - top_y:.2f}" fill="#4a7fc1" data-count="{count}"><title>{low:.4g} to '
            f"{high:.4g}: {count:,} records</title></rect>"
        )
    for tick in _ticks_log(edges[0], edges[-1]):
        if edges[0] <= tick <= edges[-1]:
            parts.append(
                f'<line x1="{x(tick):.1f}" x2="{x(tick):.1f}" y1="{TOP + plot_h}" y2="{TOP + plot_h + 5}" '
                f'stroke="#555"/><text x="{x(tick):.1f}" y="{TOP + plot_h + 18}" font-size="11" '
                f'text-anchor="middle">{tick:g}</text>'
            )
    for power in range(0, math.ceil(top)):
        parts.append(
            f'<text x="{LEFT - 6}" y="{y(10**power) + 4:.1f}" font-size="11" '
            f'text-anchor="end">{10**power:,}</text>'
        )
    side = threshold_side(bins, threshold)
    if side is not None and threshold is not None:  # a side implies a threshold
        # a threshold off the axis is drawn at the edge it lies beyond, and says so
        at = x(threshold) if side == "inside" else (LEFT if side == "left" else LEFT + plot_w)
        note = {"left": " (below every risk)", "right": " (above every risk)"}.get(side, "")
        anchor = "end" if at > LEFT + plot_w / 2 else "start"
        offset = -4 if anchor == "end" else 4
        parts.append(
            f'<line class="threshold" data-threshold="{threshold:g}" data-side="{side}" x1="{at:.1f}" '
            f'x2="{at:.1f}" y1="{TOP}" y2="{TOP + plot_h}" stroke="#c0392b" stroke-dasharray="5 4" '
            f'stroke-width="1.5"><title>threshold {threshold:g}{note}</title></line>'
            f'<text x="{at + offset:.1f}" y="{TOP + 12}" font-size="11" fill="#c0392b" '
            f'text-anchor="{anchor}">threshold {threshold:g}{note}</text>'
        )
    parts.append(
        f'<text x="{LEFT + plot_w / 2}" y="{HEIGHT - 6}" font-size="12" text-anchor="middle">disclosure risk '
        "D(r), log scale</text>"
        f'<text x="14" y="{TOP + plot_h / 2}" font-size="12" text-anchor="middle" transform="rotate(-90 14 '
        f'{TOP + plot_h / 2})">records, log scale</text></svg>'
    )
    return "".join(parts)


def threshold_side(bins: Mapping[str, Any], threshold: float | None) -> str | None:
    """Where the histogram draws the threshold: "inside" the axis, at its "left" edge (the threshold
    is below every positive risk), at its "right" edge (above every risk), or None (no threshold,
    or no positive risk to draw)."""
    edges = list(bins["edges"])
    if threshold is None or threshold <= 0 or not edges:
        return None
    if threshold < edges[0]:
        return "left"
    if threshold > edges[-1]:
        return "right"
    return "inside"


def threshold_caption(bins: Mapping[str, Any], threshold: float | None) -> str:
    """The words of the histogram's caption about its threshold line: where it is drawn, and why
    at an edge when the threshold is off the axis."""
    side = threshold_side(bins, threshold)
    if side is None:
        return "no threshold line is drawn" if not bins["edges"] else "no threshold is set"
    return {
        "inside": f"the dashed line is the threshold {threshold:g}",
        "left": f"the threshold {threshold:g} is below every positive risk: its dashed line is drawn "
        "at the left edge",
        "right": f"the threshold {threshold:g} is above every risk: its dashed line is drawn at the "
        "right edge (no record is above it)",
    }[side]


def ru_map_svg(points: Sequence[Mapping[str, Any]], risk_label: str, loss_label: str) -> str:
    """Every release at (risk, loss), labelled; the Pareto front filled and joined by a step line."""
    placed = [p for p in points if p.get("risk") is not None and p.get("loss") is not None]
    height = 360
    plot_w, plot_h = WIDTH - LEFT - RIGHT - 120, height - TOP - BOTTOM
    risks = [p["risk"] for p in placed] or [0.0]
    losses = [p["loss"] for p in placed] or [0.0]
    x_low, x_high = 0.0, max(max(risks) * 1.15, 1e-9)
    y_low, y_high = 0.0, max(max(losses) * 1.15, 1e-9)

    def x(value: float) -> float:
        return LEFT + (value - x_low) / (x_high - x_low) * plot_w

    def y(value: float) -> float:
        return TOP + plot_h - (value - y_low) / (y_high - y_low) * plot_h

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" '
        f'height="{height}" role="img" aria-labelledby="rumap-title" id="ru-map">',
        '<title id="rumap-title">R-U map: disclosure risk against information loss of every release</title>',
        f'<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="#fbfcfd" stroke="#ccc"/>',
    ]
    front = sorted((p["risk"], p["loss"]) for p in placed if p.get("on_front"))
    if len(front) > 1:
        path = f"M{x(front[0][0]):.1f},{y(front[0][1]):.1f}"
        for (_, previous_loss), (risk, loss) in zip(front, front[1:], strict=False):
            path += f" L{x(risk):.1f},{y(previous_loss):.1f} L{x(risk):.1f},{y(loss):.1f}"
        parts.append(f'<path d="{path}" fill="none" stroke="#1f77b4" stroke-width="1.2"/>')
    for point in placed:
        on_front = bool(point.get("on_front"))
        name = escape(str(point["name"]))
        parts.append(
            f'<g class="point" data-name="{name}"><circle cx="{x(point["risk"]):.1f}" '
            f'cy="{y(point["loss"]):.1f}" '
            f'r="{6 if on_front else 4.5}" fill="{"#1f77b4" if on_front else "#999"}"><title>{name}: risk '
            f"{point['risk']:.4g}, loss {point['loss']:.4g}</title></circle>"
            f'<text x="{x(point["risk"]) + 8:.1f}" '
            f'y="{y(point["loss"]) - 6:.1f}" font-size="12">{name}</text></g>'
        )
    for fraction in (0, 0.5, 1):
        rv, lv = x_low + fraction * (x_high - x_low), y_low + fraction * (y_high - y_low)
        parts.append(
            f'<text x="{x(rv):.1f}" y="{TOP + plot_h + 16}" font-size="11" '
            f'text-anchor="middle">{rv:.3g}</text>'
            f'<text x="{LEFT - 6}" y="{y(lv) + 4:.1f}" font-size="11" text-anchor="end">{lv:.3g}</text>'
        )
    # the axes in words, their figures' keys (risk_label, loss_label) in a tooltip
    parts.append(
        f'<text id="ru-risk-axis" x="{LEFT + plot_w / 2}" y="{height - 8}" font-size="12" '
        f'text-anchor="middle"><title>{escape(risk_label)}</title>risk: {escape(figure_label(risk_label))}'
        "</text>"
        f'<text id="ru-loss-axis" x="14" y="{TOP + plot_h / 2}" font-size="12" text-anchor="middle" '
        f'transform="rotate(-90 14 {TOP + plot_h / 2})"><title>{escape(loss_label)}</title>loss: '
        f"{escape(figure_label(loss_label))}</text></svg>"
    )
    return "".join(parts)


def flatten(figures: Mapping[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    """The scalar figures of a measure's summary as (dotted name, text) rows, lists left out."""
    rows: list[tuple[str, str]] = []
    for key, value in figures.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            rows += flatten(value, f"{name}.")
        elif isinstance(value, bool) or value is None or isinstance(value, str):
            rows.append((name, "—" if value is None else str(value)))
        elif isinstance(value, int | float):
            rows.append((name, f"{value:,}" if isinstance(value, int) else f"{value:.6g}"))
    return rows
