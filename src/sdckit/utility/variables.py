"""Per-variable information loss of a row-aligned release: sdcMicro's ``IL_variables`` (issue 37, item 6),
``sdckit utility variables ORIGINAL RELEASE``.

For every compared attribute, a distance between each original value x and its released value x′,
summed over the records:

* numeric (kind numeric): (2/π)·atan(|x − x′|), in [0, 1); a released range label counts as its
  midpoint (:func:`sdckit.utility.released.numeric_view`);
* ordinal: |rank(x) − rank(x′)| / (L − 1), the ranks among the L distinct values of both files in
  their order (numbers by value, texts alphabetically), 0 when L = 1;
* categorical (and every other kind): 0 when the values are equal (as text), else 1.

A value missing on one side only is the largest distance: 1 for categorical and ordinal values, and
(2/π)·atan(d) for numbers, d = max(|min x′ − max x|, |max x′ − min x|) (sdcMicro's
``max(abs(range(p) - rev(range(x))))``); missing on both sides is 0. A suppressed released value is
missing. The loss of each attribute is its sum divided by the number of records
(``by_attribute``); the overall loss λ is the sum over attributes divided by (attributes × records),
their mean (sdcMicro's figure).

Deviation from sdcMicro 5.8.1: the attributes are those of the configuration (its quasi-identifiers,
sensitive and insensitive attributes, or ``attributes``) with the configuration's kinds, instead of
every common column with R's classes (sdcMicro stops when the two files' classes differ); the levels
of an ordinal attribute are those the two files hold, where sdcMicro requires equal factor levels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, Any

import numpy as np
import polars as pl
from pydantic import Field

from sdckit.context import Context
from sdckit.measures import register_measure
from sdckit.params import MethodParams
from sdckit.table import Kind, Role, Table, value_strings
from sdckit.utility.released import choose_attributes, numeric_view, require_columns


def numeric_distances(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(2/π)·atan(|x − y|) per record; NaN is missing (see the module's docstring)."""
    missing_x, missing_y = np.isnan(x), np.isnan(y)
    distances = (2.0 / math.pi) * np.arctan(np.abs(x - y))
    one = missing_x ^ missing_y
    if one.any():
        spread = 0.0
        if (~missing_x).any() and (~missing_y).any():
            low_x, high_x = np.nanmin(x), np.nanmax(x)
            low_y, high_y = np.nanmin(y), np.nanmax(y)
            spread = max(abs(low_y - high_x), abs(high_y - low_x))
        distances[one] = (2.0 / math.pi) * math.atan(spread)
    distances[missing_x & missing_y] = 0.0
    return distances


def ordinal_distances(x: pl.Series, y: pl.Series) -> np.ndarray:
    """|rank(x) − rank(y)| / (L − 1) per record over the L distinct values of both, in order; a value
    missing on one side is 1, on both 0."""
    levels = pl.concat([x.drop_nulls(), y.drop_nulls()]).unique().sort()
    top = max(len(levels) - 1, 1)
    if len(levels) == 0:
        return np.zeros(len(x))

    def ranks(column: pl.Series) -> np.ndarray:
        found = levels.search_sorted(column.fill_null(levels[0])).to_numpy().astype(np.float64)
        return np.where(column.is_null().to_numpy(), np.nan, found)

    a, b = ranks(x), ranks(y)
    distances = np.abs(a - b) / top
    missing_a, missing_b = np.isnan(a), np.isnan(b)
    distances[missing_a ^ missing_b] = 1.0
    distances[missing_a & missing_b] = 0.0
    return distances


def nominal_distances(x: pl.Series, y: pl.Series) -> np.ndarray:
    """0 for equal values (as text), 1 otherwise; a value missing on one side is 1, on both 0."""
    # Columns of one type compare as they are; others as the texts sdckit writes.
    a, b = (x, y) if x.dtype == y.dtype else (value_strings(x), value_strings(y))
    differ = (a != b).fill_null(True).to_numpy()
    both = (a.is_null() & b.is_null()).to_numpy()
    return np.where(both, 0.0, differ.astype(np.float64))


class VariablesLossParams(MethodParams):
    """Parameters of ``sdckit utility variables``."""

    attributes: Annotated[
        str | None,
        Field(
            min_length=1,
            description="Compared attributes, comma-separated (default: the quasi-identifiers, sensitive "
            "and insensitive attributes of the configuration).",
        ),
    ] = None


@dataclass(frozen=True)
class VariablesLoss:
    """sdcMicro's IL_variables: the overall loss and each attribute's, with the kind it was compared as."""

    records: int
    kinds: dict[str, str]
    by_attribute: dict[str, float]

    @property
    def overall(self) -> float:
        return float(np.mean(list(self.by_attribute.values()))) if self.by_attribute else 0.0

    def summary(self) -> dict[str, Any]:
        return {
            "records": self.records,
            "il_variables": self.overall,
            "by_attribute": self.by_attribute,
            "compared_as": self.kinds,
        }


def variables_loss(original: Table, release: Table, params: VariablesLossParams) -> VariablesLoss:
    """sdcMicro's IL_variables of ``release`` against ``original`` (see the module's docstring)."""
    roles = (Role.QUASI_IDENTIFIER, Role.SENSITIVE, Role.QUASI_SENSITIVE, Role.INSENSITIVE)
    names = choose_attributes(original, params.attributes, default_roles=roles)
    require_columns(release, names, aligned_with=original)
    n = original.n_records
    kinds, losses = {}, {}
    for name in names:
        kind = original.schema[name].kind
        x, y = original.column(name), release.column(name)
        if kind is Kind.NUMERIC and x.dtype.is_numeric():
            values = x.cast(pl.Float64).to_numpy().astype(np.float64)
            distances = numeric_distances(values, numeric_view(y, source=release.source).values)
            kinds[name] = "numeric"
        elif kind is Kind.ORDINAL and x.dtype == y.dtype:
            distances = ordinal_distances(x, y)
            kinds[name] = "ordinal"
        else:
            distances = nominal_distances(x, y)
            kinds[name] = "categorical"
        losses[name] = float(distances.sum() / n) if n else 0.0
    return VariablesLoss(records=n, kinds=kinds, by_attribute=losses)


def _report(figures: dict[str, Any]) -> list[str]:
    lines = [f"IL_variables {figures['il_variables']:.6g} over {figures['records']:,} records"]
    lines += [
        f"  {name} ({figures['compared_as'][name]}): {loss:.6g}"
        for name, loss in figures["by_attribute"].items()
    ]
    return lines


@register_measure(
    "variables",
    "utility",
    VariablesLossParams,
    summary=lambda result: result.summary(),
    help="Per-variable information loss: sdcMicro's IL_variables (numbers, ordered and plain categories).",
    report=_report,
    compares=True,
    headline="il_variables",
)
def _run(original: Table, release: Table, params: VariablesLossParams, context: Context) -> VariablesLoss:
    return variables_loss(original, release, params)
