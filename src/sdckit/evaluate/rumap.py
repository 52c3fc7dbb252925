"""The R-U confidentiality map and the combined score of releases.

An R-U map (Duncan, Keller-McNulty & Stokes, 2001) places every release at its disclosure risk R (x)
and its information loss L (y); a release is *dominated* when another has R <= and L <= with one of
them strictly smaller, and the releases no other dominates form the Pareto front, the choices worth
considering. (SPEC §9.5 states it with a utility U = 1 - L: R <= and U >= with one strict; the same
set.) The combined score of Domingo-Ferrer & Torra (2001) is ``λ·IL + (1 − λ)·DR`` with both in
[0, 100] and λ = 1/2: lower is better.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from sdckit.errors import ConfigError
from sdckit.params import spell


@dataclass(frozen=True)
class RUPoint:
    """One release on the map: its name, risk R and loss L (both shares in [0, 1] when the measures
    are shares)."""

    name: str
    risk: float
    loss: float


def pareto_front(points: Sequence[RUPoint]) -> list[int]:
    """Indices of the points no other point dominates (R <= and L <= with one strict), in input order.

    Points with a NaN coordinate are never on the front and dominate nothing.
    """
    risk = np.array([p.risk for p in points], dtype=np.float64)
    loss = np.array([p.loss for p in points], dtype=np.float64)
    valid = ~(np.isnan(risk) | np.isnan(loss))
    front = []
    for i in range(len(points)):
        if not valid[i]:
            continue
        no_worse = valid & (risk <= risk[i]) & (loss <= loss[i])
        better = (risk < risk[i]) | (loss < loss[i])
        if not np.any(no_worse & better):
            front.append(i)
    return front


def ru_score(loss: float, risk: float, weight: float = 0.5) -> float:
    """``weight·IL + (1 − weight)·DR`` with IL = 100·loss and DR = 100·risk (Domingo-Ferrer & Torra,
    2001); lower is better."""
    if not 0 <= weight <= 1:
        raise ConfigError(f"{spell('weight')} must be between 0 and 1, got {weight}")
    return weight * 100 * loss + (1 - weight) * 100 * risk


def ru_map_plot(
    points: Sequence[RUPoint],
    path: str | os.PathLike,
    *,
    risk_label: str = "disclosure risk",
    loss_label: str = "information loss",
    reference: RUPoint | None = None,
    title: str = "R-U map",
) -> None:
    """Draw the map: every release a labelled point, the Pareto front joined by a step line, the
    original (``reference``) as a hollow marker. Written atomically (png, pdf or svg)."""
    from sdckit.evaluate.plots import plot_format, pyplot, save_figure

    plot_format(path)
    plt = pyplot()
    figure, axes = plt.subplots(figsize=(7.5, 5), dpi=110)
    front = pareto_front(points)
    for i, point in enumerate(points):
        on_front = i in front
        axes.scatter(
            [point.risk], [point.loss], s=60 if on_front else 36, color="#1f77b4" if on_front else "#999999"
        )
        axes.annotate(
            point.name, (point.risk, point.loss), textcoords="offset points", xytext=(6, 4), fontsize=9
        )
    if front:
        ordered = sorted((points[i].risk, points[i].loss) for i in front)
        xs, ys = zip(*ordered, strict=True)
        axes.step(xs, ys, where="post", color="#1f77b4", linewidth=1.2, label="Pareto front")
    if reference is not None and not (np.isnan(reference.risk) or np.isnan(reference.loss)):
        axes.scatter([reference.risk], [reference.loss], s=60, facecolors="none", edgecolors="#d62728")
        axes.annotate(
            reference.name,
            (reference.risk, reference.loss),
            textcoords="offset points",
            xytext=(6, 4),
            fontsize=9,
        )
    axes.set_xlabel(risk_label)
    axes.set_ylabel(loss_label)
    axes.set_title(title)
    axes.grid(True, alpha=0.3)
    if front:
        axes.legend(loc="best", fontsize=9)
    figure.tight_layout()
    save_figure(figure, path)
