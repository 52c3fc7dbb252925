"""Global recoding of a numeric attribute into intervals, and of categories into a group: sdcMicro's
``globalRecode`` and ``groupAndRename`` (issue 37, item 2), used by :mod:`sdckit.anonymize.recode`.

Intervals (``globalRecode(x, breaks, labels, method)``, sdcMicro 5.8.1):

- ``breaks`` a list of cut points: intervals ``(b[i], b[i+1]]``, closed on the right, as R's ``cut``.
- ``breaks`` a number ``n`` of intervals: the cut points come from ``method``, and the lowest interval
  is closed on the left too (``include.lowest = TRUE``):

  * ``equidistant``: ``n + 1`` points from ``min - 1`` to ``max + 1`` evenly spaced (R's ``seq``),
    rounded to whole numbers unless rounding makes two of them equal;
  * ``logEqui``: the same on ``log(x)``, then ``exp``, rounded likewise;
  * ``equalAmount``: the quantiles ``0, 1/n, ..., 1`` of the values (R's type 7, numpy's
    ``linear``).

  ``n = 1`` is one interval ``(min - 1, max + 1]`` whatever the method, as in sdcMicro.
- Labels are R's: ``(a,b]`` (``[a,b]`` for a lowest interval closed on the left), each cut point
  written with 8 significant digits (more, up to 12, when two would read the same), or the given
  ``labels``, or the interval numbers 1, 2, ... (``labels = FALSE``: ``codes``).

Deviations from sdcMicro, stated in the method's docstring and docs: a value outside the explicit
cut points is an error naming it (R's ``cut`` makes it missing without a word; ``-inf`` and ``inf``
are allowed as cut points); ``equalAmount`` quantiles that coincide are merged, giving fewer intervals
(sdcMicro ``jitter``s them, a random change with no seed); ``logEqui`` refuses values that are not
positive (R's ``log`` gives ``-Inf`` or ``NaN`` and then fails); missing values stay missing and are
ignored when the cut points are computed (sdcMicro's ``breaks = 1`` takes ``min`` without
``na.rm`` and fails on them).

Groups (``groupAndRename(obj, var, before, after, addNA)``): the categories ``before`` become the one
category ``after``; with ``add_missing`` the missing values too.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from sdckit.errors import ConfigError
from sdckit.table import value_strings

METHODS = ("equidistant", "logEqui", "equalAmount")
_DIGITS = 8  # sdcMicro's dig.lab


@dataclass(frozen=True)
class Intervals:
    """Cut points (increasing), whether the lowest interval is closed on the left, and the label of
    each interval (text, or the interval numbers as text when ``codes``)."""

    breaks: tuple[float, ...]
    lowest_closed: bool
    labels: tuple[str, ...]
    codes: bool = False


def _r_seq(start: float, stop: float, count: int) -> np.ndarray:
    """R's ``seq(start, stop, length.out = count)``: the ends exact, the inner points
    ``start + i * ((stop - start) / (count - 1))``."""
    if count == 1:
        return np.array([start])
    steps = count - 1
    inner = start + np.arange(1, steps, dtype=np.float64) * ((stop - start) / steps)
    return np.concatenate([[start], inner, [stop]])


def _rounded_unless_tied(points: np.ndarray) -> np.ndarray:
    rounded = np.round(points)  # half to even, as R's round
    return rounded if len(np.unique(rounded)) == len(rounded) else points


def computed_breaks(values: np.ndarray, count: int, method: str, attribute: str) -> tuple[np.ndarray, bool]:
    """The cut points of ``count`` intervals of ``values`` (finite, not missing) by ``method``, and
    whether the lowest interval is closed on the left."""
    if method not in METHODS:
        raise ConfigError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    if len(values) == 0:
        raise ConfigError(f"attribute '{attribute}' has no value to compute intervals from")
    low, high = float(values.min()), float(values.max())
    if count == 1:
        return np.array([low - 1.0, high + 1.0]), False
    if method == "equidistant":
        return _rounded_unless_tied(_r_seq(low - 1.0, high + 1.0, count + 1)), True
    if method == "logEqui":
        if low <= 0:
            raise ConfigError(
                f"attribute '{attribute}': method logEqui takes the logarithm of the values, so they must "
                f"be positive; the smallest is {low:g}"
            )
        logs = np.log(values)
        points = np.exp(_r_seq(float(logs.min()) - 1.0, float(logs.max()) + 1.0, count + 1))
        return _rounded_unless_tied(points), True
    probabilities = np.concatenate([[0.0], np.arange(1, count + 1, dtype=np.float64) / count])
    return np.unique(r_quantile7(values, probabilities)), True


def r_quantile7(values: np.ndarray, probabilities: np.ndarray) -> np.ndarray:
    """R's ``quantile(x, probs)`` (type 7) with R's own arithmetic, ``(1 - h) * x[lo] + h * x[hi]``
    (numpy's ``linear`` method interpolates differently and can differ in the last bit, which moves
    a value lying on a cut point into the other interval)."""
    ordered = np.sort(values)
    index = 1.0 + (len(ordered) - 1) * probabilities
    low, high = np.floor(index).astype(np.int64), np.ceil(index).astype(np.int64)
    result = ordered[low - 1].astype(np.float64)
    above = ordered[high - 1]
    between = (index > low) & (above != result)
    weight = (index - low)[between]
    result[between] = (1 - weight) * result[between] + weight * above[between]
    return result


def _r_number(value: float, digits: int) -> str:
    """A cut point as R's ``formatC(x, digits = digits, width = 1)`` writes it (C's ``%.*g``)."""
    if math.isinf(value):
        return "Inf" if value > 0 else "-Inf"
    return f"{value:.{digits}g}"


def r_labels(breaks: Sequence[float], lowest_closed: bool) -> list[str]:
    """R's ``cut`` labels of the intervals between ``breaks`` (``dig.lab = 8``)."""
    for digits in range(_DIGITS, 13):
        texts = [_r_number(float(point), digits) for point in breaks]
        if all(a != b for a, b in zip(texts[:-1], texts[1:], strict=True)):
            break
    labels = [f"({a},{b}]" for a, b in zip(texts[:-1], texts[1:], strict=True)]
    if lowest_closed and labels:
        labels[0] = "[" + labels[0][1:]
    return labels


def intervals(
    column: pl.Series,
    breaks: Sequence[float] | int,
    method: str,
    labels: Sequence[str] | None,
    codes: bool,
) -> Intervals:
    """The intervals of ``column`` (numeric) that ``breaks`` (cut points, or a number of intervals with
    ``method``) and ``labels`` (or ``codes``) describe."""
    name = column.name
    if not column.dtype.is_numeric():
        raise ConfigError(
            f"recoding into intervals needs a numeric attribute; '{name}' is {column.dtype} "
            "(describe it with kind: numeric, or group its categories with before/after)"
        )
    if isinstance(breaks, int):
        values = column.drop_nulls().cast(pl.Float64).to_numpy()
        points, lowest_closed = computed_breaks(values, breaks, method, name)
    else:
        points = np.array(sorted(float(point) for point in breaks))
        lowest_closed = False
        if len(np.unique(points)) < len(points):
            raise ConfigError(f"the breaks of '{name}' must be distinct, got {', '.join(map(str, breaks))}")
    count = len(points) - 1
    if labels is not None:
        if len(labels) != count:
            raise ConfigError(
                f"'{name}' is cut into {count} interval{'s' if count != 1 else ''} but {len(labels)} "
                f"label{'s are' if len(labels) != 1 else ' is'} given"
            )
        names = [str(label) for label in labels]
    elif codes:
        names = [str(number) for number in range(1, count + 1)]
    else:
        names = r_labels(points.tolist(), lowest_closed)
    return Intervals(tuple(points.tolist()), lowest_closed, tuple(names), codes and labels is None)


def interval_numbers(values: np.ndarray, spec: Intervals) -> np.ndarray:
    """The interval of each value (0, 1, ...), -1 for a value outside every interval; ``values``
    float64 with NaN for missing (which gives -2)."""
    points = np.asarray(spec.breaks, dtype=np.float64)
    slot = np.searchsorted(points, values, side="left") - 1
    if spec.lowest_closed:
        slot[values == points[0]] = 0
    slot[(slot < 0) | (slot >= len(points) - 1)] = -1
    slot[np.isnan(values)] = -2
    return slot


def recoded_intervals(column: pl.Series, spec: Intervals, label: str = "") -> tuple[pl.Series, np.ndarray]:
    """``column`` recoded into the intervals of ``spec``: their labels (text), or their numbers
    (Int64) with ``codes``; missing values stay missing. A value outside every interval is an
    error naming it. Also returns each record's interval (-2 when missing)."""
    values = column.cast(pl.Float64).fill_null(float("nan")).to_numpy()
    slot = interval_numbers(values, spec)
    outside = np.flatnonzero(slot == -1)
    if len(outside):
        first = int(outside[0])
        where = f"{label}: " if label else ""
        lie = "values lie" if len(outside) != 1 else "value lies"
        low, high = (_r_number(spec.breaks[end], _DIGITS) for end in (0, -1))
        value = value_strings(column.slice(first, 1))[0]
        raise ConfigError(
            f"{where}attribute '{column.name}': {len(outside):,} {lie} outside the breaks {low} to {high} "
            f"(the first, {value}, in record {first + 1}); sdcMicro's globalRecode would make them "
            "missing: extend the breaks (-inf and inf are allowed)"
        )
    present = slot >= 0
    absent = pl.Series(~present)
    if spec.codes:
        numbers = np.where(present, slot + 1, 0)
        return pl.Series(column.name, numbers, dtype=pl.Int64).set(absent, None), slot
    labels = pl.Series(spec.labels, dtype=pl.String)
    return labels.gather(pl.Series(np.where(present, slot, 0))).set(absent, None).alias(column.name), slot


def changed_by_intervals(spec: Intervals, slot: np.ndarray) -> int | None:
    """How many values the recoding changed, when no label can spell a number (then every value not
    missing changed); None when one can (the texts must be compared)."""
    for text in spec.labels:
        try:
            float(text)
        except ValueError:
            continue
        return None
    return int((slot >= 0).sum())


def grouped_column(column: pl.Series, before: Sequence[str], after: str, add_missing: bool) -> pl.Series:
    """sdcMicro's ``groupAndRename``: every value of ``column`` listed in ``before`` (compared as text)
    becomes ``after``, and with ``add_missing`` every missing value too; a listed value that is not a
    category of the column is an error, as in sdcMicro."""
    texts = value_strings(column)
    present = set(texts.drop_nulls().unique().to_list())
    absent = [value for value in before if value not in present]
    if absent:
        raise ConfigError(
            f"attribute '{column.name}' has no category {', '.join(repr(value) for value in absent[:5])} "
            f"(before lists the categories to group)"
        )
    if len(set(before)) < len(before):
        raise ConfigError(f"before lists a category of '{column.name}' twice")
    grouped = texts.replace(dict.fromkeys(before, after))
    if add_missing:
        grouped = grouped.fill_null(after)
    return grouped.alias(column.name)
