"""A release in the original's domain: every generalized or suppressed cell replaced by a value drawn
from the original values it covers.

A generalized release writes labels (``38-40``, ``{Female,Male}``, a hierarchy node, ``*``) that
never occur in the original, so a model that compares the two tables (the propensity score of Woo et
al., frequency tables, a classifier) tells them apart by the labels alone: every generalization looks
equally bad, whatever it kept. Drawing each label back to a value it covers — from the original's
own distribution restricted to the covered values, as a data user who imputes within the released
classes would — measures instead how much the release distorts the distribution. Values that are
already values of the original (a masked or perturbed release) are left alone, so the draw changes
nothing for them.

What a label covers is read by the one grammar of :mod:`sdckit.labels`, as record linkage reads it:
a number, ranges (``38-40``, ``[35, 45)``, ``<20``, ``>=60``), sets ``{a,b}``, nodes of the
attribute's hierarchy, masked codes ``02****``; ``*`` and a missing value cover every value (a
missing original value too). A numeric cell is drawn among the original values inside its interval
(uniformly over the original records there, so with the original's frequencies); a categorical cell
among the covered categories with their original frequencies. A label that covers no original value
(a new category of a recoding) stays as it is.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Annotated, Literal

import numpy as np
import polars as pl
from pydantic import Field

from sdckit.hierarchy import Hierarchy
from sdckit.labels import categories_covered, node_codes, numeric_bounds
from sdckit.params import Whole
from sdckit.table import Kind, Table, value_strings

#: The parameter of the measures that compare distributions: what to do with generalized values.
GeneralizedField = Annotated[
    Literal["draw", "labels"],
    Field(
        description="Generalized or suppressed released values: drawn from the original values they "
        "cover, or compared as labels."
    ),
]
#: Its seed (the draws are random).
DrawSeedField = Annotated[Whole, Field(ge=0, description="Seed of the draws of generalized values.")]


@dataclass(frozen=True)
class Drawn:
    """The release with drawn cells, and how many cells of each attribute were drawn."""

    table: Table
    cells: dict[str, int]

    @property
    def total(self) -> int:
        return sum(self.cells.values())


def in_original_domain(original: Table, release: Table, names: Sequence[str], seed: int = 0) -> Drawn:
    """Replace every released cell of ``names`` that is not a value of the original by a value drawn
    from the original values it covers (module docstring); deterministic for a ``seed``."""
    rng = np.random.default_rng(seed)
    columns, cells = {}, {}
    for name in names:
        attribute = original.schema[name] if name in original.schema.names else None
        hierarchy = (
            attribute.hierarchy
            if attribute is not None and isinstance(attribute.hierarchy, Hierarchy)
            else None
        )
        source = original.data.get_column(name)
        released = release.data.get_column(name)
        if attribute is not None and attribute.kind is Kind.NUMERIC and source.dtype.is_numeric():
            column, count = _numeric(source, released, hierarchy, rng)
        else:
            column, count = _categorical(source, released, hierarchy, rng)
        cells[name] = count
        if count:
            columns[name] = column
    if not columns:
        return Drawn(release, cells)
    data = release.data.with_columns([column.alias(name) for name, column in columns.items()])
    return Drawn(replace(release, data=data), cells)


def _numeric(
    source: pl.Series, released: pl.Series, hierarchy: Hierarchy | None, rng: np.random.Generator
) -> tuple[pl.Series, int]:
    values = np.sort(source.drop_nulls().cast(pl.Float64).to_numpy())
    if released.dtype.is_numeric():
        missing = released.is_null().to_numpy() | np.isnan(
            released.cast(pl.Float64).fill_null(np.nan).to_numpy()
        )
        lo = released.cast(pl.Float64).fill_null(np.nan).to_numpy().copy()
        hi, lo_open, hi_open = lo.copy(), np.zeros(len(lo), bool), np.zeros(len(lo), bool)
        lo[missing], hi[missing] = -np.inf, np.inf
    else:
        text = released.cast(pl.String)
        distinct = text.drop_nulls().unique(maintain_order=True).to_list()
        # A label that spans no interval is kept: NaN bounds hold no original value.
        bounds = [numeric_bounds(label, hierarchy) or (math.nan, math.nan, 0.0, 0.0) for label in distinct]
        table = np.vstack([np.array(bounds, dtype=np.float64).reshape(-1, 4), [-np.inf, np.inf, 0.0, 0.0]])
        label_of = text.cast(pl.Enum(distinct), strict=False).to_physical().cast(pl.Int64)
        codes = label_of.fill_null(len(table) - 1).to_numpy()
        lo, hi = table[codes, 0], table[codes, 1]
        lo_open, hi_open = table[codes, 2] > 0, table[codes, 3] > 0
    result = lo.copy()
    wide = ~(lo == hi)
    if wide.any() and len(values):
        first = np.where(
            lo_open[wide],
            np.searchsorted(values, lo[wide], "right"),
            np.searchsorted(values, lo[wide], "left"),
        )
        last = np.where(
            hi_open[wide],
            np.searchsorted(values, hi[wide], "left"),
            np.searchsorted(values, hi[wide], "right"),
        )
        span = last - first
        pick = first + np.floor(rng.random(int(wide.sum())) * np.maximum(span, 1)).astype(np.int64)
        drawn = values[np.clip(pick, 0, len(values) - 1)]
        # An interval holding no original value: its midpoint (or its finite bound).
        low, high = lo[wide], hi[wide]
        both = np.isfinite(low) & np.isfinite(high)
        middle = (np.where(both, low, 0.0) + np.where(both, high, 0.0)) / 2
        fallback = np.where(both, middle, np.where(np.isfinite(low), low, high))
        result[wide] = np.where(span > 0, drawn, fallback)
    count = int(wide.sum()) + int((~np.isfinite(lo) & (lo == hi)).sum())
    column = pl.Series(result)
    if source.dtype.is_integer() and np.all(np.isfinite(result)) and np.all(result == np.round(result)):
        column = column.cast(source.dtype)
    return column, count


def _categorical(
    source: pl.Series, released: pl.Series, hierarchy: Hierarchy | None, rng: np.random.Generator
) -> tuple[pl.Series, int]:
    text = value_strings(source)
    categories = text.drop_nulls().unique().sort().to_list()
    index = {value: code for code, value in enumerate(categories)}
    codes = (
        text.cast(pl.Enum(categories), strict=False).to_physical().cast(pl.Int64).fill_null(len(categories))
    )
    frequency = np.bincount(codes.to_numpy(), minlength=len(categories) + 1).astype(np.float64)
    numbers = None
    if source.dtype.is_numeric():
        numbers = np.array([float(value) for value in categories])
    released_text = value_strings(released)
    out = released_text.to_numpy().astype(object)
    missing = released_text.is_null().to_numpy()
    names = [*categories, None]  # the last "category": a missing original value
    count = 0
    labels = released_text.drop_nulls().unique(maintain_order=True).to_list()
    label_of = released_text.cast(pl.Enum(labels), strict=False).to_physical().cast(pl.Int64)
    label_codes = label_of.fill_null(len(labels)).to_numpy()
    order = np.argsort(label_codes, kind="stable")
    ends = np.cumsum(np.bincount(label_codes, minlength=len(labels) + 1))
    groups: list[tuple[np.ndarray, list[int]]] = []
    nodes = None
    if hierarchy is not None:
        leaf_codes = np.array([index.get(leaf, -1) for leaf in hierarchy.labels[0]], dtype=np.int64)
        nodes = node_codes(hierarchy, leaf_codes)
    for code, label in enumerate(labels):
        if label in index:
            continue
        covered = categories_covered(label, index, categories, numbers, nodes)
        if covered is not None and not covered:
            continue  # a label of no original value: kept
        rows = order[(ends[code - 1] if code else 0) : ends[code]]
        groups.append((rows, list(range(len(names))) if covered is None else covered))
    if missing.any():
        groups.append((np.flatnonzero(missing), list(range(len(names)))))
    for rows, covered in groups:
        weights = frequency[covered]
        if weights.sum() <= 0:
            continue
        chosen = rng.choice(np.asarray(covered), size=len(rows), p=weights / weights.sum())
        out[rows] = [names[c] for c in chosen]
        count += len(rows)
    column = pl.Series(out.tolist(), dtype=pl.String)
    if count and source.dtype != pl.String:
        cast = column.cast(source.dtype, strict=False)
        if cast.null_count() == column.null_count():
            column = cast
    return column, count


def prepared(original: Table, release: Table, names: Sequence[str], generalized: str, seed: int) -> Drawn:
    """The release as a measure compares it: drawn into the original's domain (``"draw"``) or as it
    is (``"labels"``)."""
    if generalized == "labels":
        return Drawn(release, {name: 0 for name in names})
    return in_original_domain(original, release, names, seed)
