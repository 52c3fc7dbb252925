"""Differences of the one-way and two-way frequency tables of a release and its original.

For each chosen attribute A (one-way) and each pair of them (two-way), p and q are the relative
frequencies of the cells (values, or pairs of values) in the original and in the release::

    total variation  TV(p, q) = ½ Σ_cell |p − q|                          ∈ [0, 1]
    Hellinger        H(p, q)  = √(½ Σ_cell (√p − √q)²) = √(1 − Σ √(p·q))  ∈ [0, 1]

both 0 for equal tables and 1 for tables with no cell in common. The summary gives the mean and the
largest over the one-way tables and over the two-way tables, and each table's figures.

Values are categories as they are: a release's labels (``[1984, 1988)``, ``0*****``) and ``*`` are
cells of their own, and a missing value is a cell too; original and release values are coded
together, so a value spelled alike is one cell in both. Counts are unweighted (sampling weights are
not used) and the files need not have the same number of records. Counting is one ``bincount`` per
table over integer codes: O(n) per table, O(n·a²) in all for a attributes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import combinations
from typing import Annotated, Any

import numpy as np
from pydantic import Field

from sdckit.context import Context
from sdckit.measures import register_measure
from sdckit.params import MethodParams, finite_or_none
from sdckit.table import Role, Table
from sdckit.utility.disaggregate import DrawSeedField, GeneralizedField, prepared
from sdckit.utility.released import category_codes, choose_attributes, require_columns

__all__ = ["FrequencyTables", "TablesParams", "distances", "frequency_tables"]


def distances(original: np.ndarray, release: np.ndarray) -> tuple[float, float]:
    """Total variation distance and Hellinger distance of two count vectors over the same cells."""
    p = original / original.sum()
    q = release / release.sum()
    total_variation = 0.5 * float(np.abs(p - q).sum())
    hellinger = float(np.sqrt(max(0.0, 0.5 * float(((np.sqrt(p) - np.sqrt(q)) ** 2).sum()))))
    return total_variation, hellinger


@dataclass(frozen=True)
class FrequencyTables:
    """Total variation and Hellinger distances of every one-way table (``one_way``: attribute ->
    (TV, H)) and every two-way table (``two_way``: (attribute, attribute) -> (TV, H))."""

    attributes: tuple[str, ...]
    one_way: dict[str, tuple[float, float]]
    two_way: dict[tuple[str, str], tuple[float, float]]
    drawn_cells: dict[str, int] | None = None


def frequency_tables(original: Table, release: Table, names: list[str]) -> FrequencyTables:
    codes: dict[str, tuple[np.ndarray, np.ndarray, int]] = {}
    for name in names:
        codes[name] = category_codes(original.column(name), release.column(name))
    one_way = {
        name: distances(np.bincount(a, minlength=k), np.bincount(b, minlength=k))
        for name, (a, b, k) in codes.items()
    }
    two_way = {}
    for first, second in combinations(names, 2):
        a1, b1, k1 = codes[first]
        a2, b2, k2 = codes[second]
        cells = k1 * k2
        x, y = a1 * k2 + a2, b1 * k2 + b2
        if cells > 4 * (x.size + y.size):  # sparse: count the cells that occur
            distinct, inverse = np.unique(np.concatenate([x, y]), return_inverse=True)
            x, y, cells = inverse[: x.size], inverse[x.size :], distinct.size
        two_way[(first, second)] = distances(np.bincount(x, minlength=cells), np.bincount(y, minlength=cells))
    return FrequencyTables(tuple(names), one_way, two_way)


class TablesParams(MethodParams):
    """Parameters of the frequency-table differences (``sdckit utility tables``)."""

    attributes: Annotated[
        str | None,
        Field(
            min_length=1,
            description="Comma-separated attributes (default: quasi-identifiers and sensitive attributes).",
        ),
    ] = None
    generalized: GeneralizedField = "draw"
    seed: DrawSeedField = 0


def _figures(values: list[float]) -> tuple[float | None, float | None]:
    return (finite_or_none(float(np.mean(values))), finite_or_none(max(values))) if values else (None, None)


def _summary(result: FrequencyTables) -> dict[str, Any]:
    figures: dict[str, Any] = {"attributes": list(result.attributes), "drawn_cells": result.drawn_cells}
    for index, key in enumerate(("total_variation", "hellinger")):
        one_mean, one_max = _figures([value[index] for value in result.one_way.values()])
        two_mean, two_max = _figures([value[index] for value in result.two_way.values()])
        figures[key] = {
            "one_way_mean": one_mean,
            "one_way_max": one_max,
            "two_way_mean": two_mean,
            "two_way_max": two_max,
        }
    figures["one_way"] = [
        {"attribute": name, "total_variation": finite_or_none(tv), "hellinger": finite_or_none(h)}
        for name, (tv, h) in result.one_way.items()
    ]
    figures["two_way"] = [
        {"attributes": list(pair), "total_variation": finite_or_none(tv), "hellinger": finite_or_none(h)}
        for pair, (tv, h) in result.two_way.items()
    ]
    return figures


def _report(figures: dict[str, Any]) -> list[Any]:
    tv, h = figures["total_variation"], figures["hellinger"]

    def shown(value: float | None) -> str:
        return "—" if value is None else f"{value:.4g}"

    worst = max(figures["one_way"], key=lambda item: item["total_variation"] or 0.0)
    return [
        f"one-way tables of {len(figures['one_way'])} attributes: total variation mean "
        f"{shown(tv['one_way_mean'])}, max {shown(tv['one_way_max'])} ({worst['attribute']}); Hellinger mean "
        f"{shown(h['one_way_mean'])}, max {shown(h['one_way_max'])}",
        f"two-way tables ({len(figures['two_way'])}): total variation mean {shown(tv['two_way_mean'])}, "
        f"max {shown(tv['two_way_max'])}; Hellinger mean {shown(h['two_way_mean'])}, "
        f"max {shown(h['two_way_max'])}",
    ]


@register_measure(
    "tables",
    "utility",
    TablesParams,
    summary=_summary,
    help="Differences of one-way and two-way frequency tables: total variation and Hellinger distances.",
    report=_report,
    compares=True,
    headline="total_variation.two_way_mean",
)
def _run(original: Table, release: Table, params: TablesParams, context: Context) -> FrequencyTables:
    names = choose_attributes(
        original, params.attributes, default_roles=(Role.QUASI_IDENTIFIER, Role.SENSITIVE)
    )
    require_columns(release, names)
    drawn = prepared(original, release, names, params.generalized, params.seed)
    return replace(frequency_tables(original, drawn.table, names), drawn_cells=drawn.cells)
