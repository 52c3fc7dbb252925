"""Building generalization hierarchies from the data (:mod:`sdckit.hierarchy` describes them):
numeric intervals (:func:`intervals`), ordered categories grouped a few at a time (:func:`ordered`),
codes masked one character at a time from the right (:func:`mask`), and the hierarchy a
configuration names for an attribute, a file or an inline builder (:func:`build_hierarchy`). Import
them from :mod:`sdckit.hierarchy`."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
import polars as pl

from sdckit.errors import ConfigError, shown
from sdckit.hierarchy import _SHOWN, Hierarchy, _text
from sdckit.io import DEFAULT_MISSING_VALUES
from sdckit.labels import TOP_LABEL, at_least_label, below_label, interval_label, masked_labels, ordered_label
from sdckit.labels import number_text as _number_text
from sdckit.table import value_strings

# Builder keys of an inline hierarchy in a configuration, and the options each accepts.
_BUILDER_OPTIONS: dict[str, tuple[str, ...]] = {
    "intervals": ("cuts", "width", "bottom", "top", "fanout"),
    "order": ("order", "fanout"),
    "mask": ("width", "character"),
}
# More intervals than this is surely a mistake in width/bottom/top.
_MAX_INTERVALS = 1_000_000


# Builders ----------------------------------------------------------------------------------------


def _distinct(values: pl.Series) -> pl.Series:
    """The distinct non-missing values, sorted (NaN dropped)."""
    distinct = values.drop_nulls()
    if distinct.dtype.is_float():
        distinct = distinct.filter(~distinct.is_nan())
    if distinct.dtype in (pl.Categorical, pl.Object) or isinstance(distinct.dtype, pl.Enum):
        distinct = distinct.cast(pl.String)
    return distinct.unique().sort()


def _snap(number: float) -> float:
    return float(f"{number:.12g}")


def _check_fanout(name: str, fanout: Any) -> int:
    if isinstance(fanout, bool) or not isinstance(fanout, int | np.integer) or fanout < 2:
        raise ConfigError(
            f"hierarchy for '{name}': fanout must be a whole number of at least 2, got {shown(fanout)}"
        )
    return int(fanout)


def _check_number(name: str, label: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise ConfigError(f"hierarchy for '{name}': {label} must be a number, got {shown(value)}")
    if not math.isfinite(value):
        raise ConfigError(f"hierarchy for '{name}': {label} must be a finite number, got {shown(value)}")
    return float(value)


def _levels_needed(count: int, fanout: int) -> int:
    """How many grouping levels merge ``count`` items ``fanout`` at a time before one group is left:
    level k (1-based) has ceil(count / fanout**(k-1)) groups, and levels are kept while that is > 1."""
    levels = 0
    span = 1
    while -(-count // span) > 1:
        levels += 1
        span *= fanout
    return levels


def _empty(name: str) -> Hierarchy:
    return Hierarchy(name=name, labels=((), ()), codes=np.zeros((0, 2), dtype=np.int32))


def intervals(
    name: str,
    values: pl.Series,
    cuts: Sequence[float] | None = None,
    width: float | None = None,
    bottom: float | None = None,
    top: float | None = None,
    fanout: int = 2,
) -> Hierarchy:
    """Numeric intervals: level 1 is the interval ``[c_i, c_{i+1})`` holding the value (``"[20, 40)"``),
    each higher level merges ``fanout`` adjacent intervals (``"[0, 40)"``) until one group would be
    left, and the last level is ``*``.

    Give the cut points (``cuts``) or a ``width``: with a width the cuts are ``bottom + k·width`` (or
    the multiples of the width when no bottom is given) up to ``top``, which is the last cut (the data's
    maximum is covered when no top is given). Values below the first cut, or below ``bottom``, are
    coded ``"<20"`` at every level below the top (bottom coding); values at or above the last cut, or
    ``top``, are coded ``">=100"`` (top coding). The leaves are the distinct values of ``values``,
    which must be numbers (or text that reads as numbers), sorted by value.
    """
    fanout = _check_fanout(name, fanout)
    distinct = _distinct(values)
    if distinct.dtype == pl.Boolean or not (
        distinct.dtype.is_numeric() or distinct.dtype == pl.String or distinct.dtype == pl.Null
    ):
        raise ConfigError(
            f"hierarchy for '{name}': intervals need numbers, but the column holds {distinct.dtype}"
        )
    if distinct.dtype == pl.String:
        numbers = distinct.str.strip_chars().cast(pl.Float64, strict=False)
        bad = distinct.filter(numbers.is_null() | numbers.is_nan())
        if len(bad):
            raise ConfigError(f"hierarchy for '{name}': intervals need numbers, got '{bad[0]}'")
        leaves = distinct.gather(numbers.arg_sort())
        numbers = numbers.sort()
    else:
        leaves = value_strings(distinct)
        numbers = distinct.cast(pl.Float64)
    bottom = None if bottom is None else _check_number(name, "bottom", bottom)
    top = None if top is None else _check_number(name, "top", top)
    if bottom is not None and top is not None and bottom >= top:
        raise ConfigError(f"hierarchy for '{name}': bottom {bottom:g} must be below top {top:g}")
    if (cuts is None) == (width is None):
        raise ConfigError(f"hierarchy for '{name}': intervals need either cut points or a width")
    if len(leaves) == 0:
        return _empty(name)
    values_np = numbers.to_numpy()
    if cuts is not None:
        if isinstance(cuts, str | bytes) or not isinstance(cuts, Sequence | np.ndarray):
            raise ConfigError(
                f"hierarchy for '{name}': cut points must be a list of numbers, got {shown(cuts)}"
            )
        points = [_check_number(name, "a cut point", cut) for cut in cuts]
        for lower, upper in zip(points, points[1:], strict=False):
            if lower >= upper:
                raise ConfigError(
                    f"hierarchy for '{name}': cut points must increase, but {_number_text(upper)} "
                    f"follows {_number_text(lower)}"
                )
        if bottom is not None:
            points = [bottom] + [cut for cut in points if cut > bottom]
        if top is not None:
            points = [cut for cut in points if cut < top] + [top]
    else:
        step = _check_number(name, "width", width)
        if step <= 0:
            raise ConfigError(f"hierarchy for '{name}': width must be above 0, got {shown(width)}")
        # Snapped to 12 significant digits, so that 0.7 / 0.1 counts as 7 and a cut is 0.3, not
        # 0.30000000000000004.
        lowest, highest = float(values_np[0]), float(values_np[-1])
        start = bottom if bottom is not None else _snap(math.floor(_snap(lowest / step)) * step)
        if bottom is None and start > lowest:  # snapped past a value just below a multiple
            start = _snap(start - step)
        end = top if top is not None else _snap((math.floor(_snap(highest / step)) + 1) * step)
        if top is None and end <= highest:
            end = _snap(end + step)
        if end <= start:
            end = _snap(start + step)
        count = math.ceil(_snap((end - start) / step))
        if count > _MAX_INTERVALS:
            raise ConfigError(
                f"hierarchy for '{name}': width {_number_text(step)} makes {count} intervals from "
                f"{_number_text(start)} to {_number_text(end)}; use a larger width"
            )
        points = [point for point in (_snap(start + k * step) for k in range(count)) if point < end]
        points.append(end)
    if len(points) < 2:
        raise ConfigError(f"hierarchy for '{name}': intervals need at least two cut points, got {points}")
    cut_array = np.asarray(points)
    n_intervals = len(points) - 1
    texts = [_number_text(point) for point in points]
    below = below_label(texts[0])
    above = at_least_label(texts[-1])
    index = np.searchsorted(cut_array, values_np, side="right") - 1
    columns = [leaves]
    # Level 1 holds the intervals themselves even when there is only one.
    for level in range(max(1, _levels_needed(n_intervals, fanout))):
        span = fanout**level
        groups = -(-n_intervals // span)
        names = [
            interval_label(texts[g * span], texts[min((g + 1) * span, n_intervals)]) for g in range(groups)
        ]
        labelled = np.array([*names, below, above], dtype=object)
        group = np.where(index < 0, groups, np.where(index >= n_intervals, groups + 1, index // span))
        columns.append(pl.Series(labelled[group].tolist(), dtype=pl.String))
    columns.append(pl.Series([TOP_LABEL] * len(leaves), dtype=pl.String))
    return Hierarchy.from_frame(name, pl.DataFrame({f"level_{j}": c for j, c in enumerate(columns)}))


def ordered(
    name: str,
    values: pl.Series,
    order: Sequence[Any] | None = None,
    fanout: int = 2,
) -> Hierarchy:
    """Ordered categories grouped ``fanout`` at a time per level (``"A-B"``, a group of one keeps its
    label) until one group would be left; the last level is ``*``.

    ``order`` lists the categories in order (default: the distinct values, sorted); groups are formed
    over it, so they do not depend on which categories occur. The leaves are the distinct values of
    ``values`` in that order; a value not in ``order`` is an error.
    """
    fanout = _check_fanout(name, fanout)
    distinct = value_strings(_distinct(values))
    if order is None:
        order_texts = distinct.to_list()
    else:
        if isinstance(order, str | bytes) or not isinstance(order, Sequence | np.ndarray | pl.Series):
            raise ConfigError(f"hierarchy for '{name}': order must be a list of values, got {shown(order)}")
        order_texts = [_text(item) for item in order]
        seen: set[str] = set()
        for item in order_texts:
            if item in seen:
                raise ConfigError(f"hierarchy for '{name}': order lists '{item}' twice")
            seen.add(item)
    if len(distinct) == 0:
        return _empty(name)
    if not order_texts:
        raise ConfigError(f"hierarchy for '{name}': order is empty")
    order_dtype = pl.Enum(order_texts)
    position = distinct.cast(order_dtype, strict=False)
    missing = distinct.filter(position.is_null())
    if len(missing):
        listed = ", ".join(shown(str(value)) for value in missing.head(_SHOWN).to_list())
        more = ", …" if len(missing) > _SHOWN else ""
        raise ConfigError(
            f"hierarchy for '{name}': order does not list {len(missing)} "
            f"value{'s' if len(missing) != 1 else ''} of the data: {listed}{more}"
        )
    ranks = position.to_physical().to_numpy().astype(np.int64)
    sort = np.argsort(ranks, kind="stable")
    leaves = distinct.gather(sort)
    ranks = ranks[sort]
    size = len(order_texts)
    columns = [leaves]
    for level in range(1, _levels_needed(size, fanout)):
        span = fanout**level
        names = []
        for start in range(0, size, span):
            members = order_texts[start : min(start + span, size)]
            names.append(ordered_label(members[0], members[-1]))
        columns.append(pl.Series(np.array(names, dtype=object)[ranks // span].tolist(), dtype=pl.String))
    columns.append(pl.Series([TOP_LABEL] * len(leaves), dtype=pl.String))
    return Hierarchy.from_frame(name, pl.DataFrame({f"level_{j}": c for j, c in enumerate(columns)}))


def mask(name: str, values: pl.Series, width: int | None = None, character: str = "*") -> Hierarchy:
    """Codes masked one character at a time from the right: 47906 → 4790* → 479** → … → *****.

    All values must have the same number of characters unless ``width`` is given; then shorter values
    made only of digits are padded with zeros on the left before masking (the ZIP code 2134 read as a
    number becomes 0213* at level 1, its leaf stays '2134'), and other shorter or longer values are an
    error. There are ``width + 1`` levels; the leaves are the distinct values, as text, sorted.
    """
    if not isinstance(character, str) or len(character) != 1:
        raise ConfigError(
            f"hierarchy for '{name}': the mask character must be one character, got {shown(character)}"
        )
    leaves = value_strings(_distinct(values))
    lengths = leaves.str.len_chars()
    if width is None:
        if len(leaves) and lengths.min() != lengths.max():
            shortest_at, longest_at = lengths.arg_min(), lengths.arg_max()
            assert shortest_at is not None and longest_at is not None  # the values are not empty
            shortest = leaves[shortest_at]
            longest = leaves[longest_at]
            raise ConfigError(
                f"hierarchy for '{name}': masking needs values of one length, but '{shortest}' has "
                f"{len(shortest)} characters and '{longest}' {len(longest)}; give the width "
                f"(e.g. mask: {len(longest)}) to pad codes of digits with zeros on the left"
            )
        width = int(cast(int, lengths.max())) if len(leaves) else 1  # a length: a whole number
    elif isinstance(width, bool) or not isinstance(width, int | np.integer) or width < 1:
        raise ConfigError(
            f"hierarchy for '{name}': the mask width must be a whole number of at least 1, got {shown(width)}"
        )
    width = int(width)
    if len(leaves) == 0:
        return _empty(name)
    too_long = leaves.filter(lengths > width)
    if len(too_long):
        raise ConfigError(
            f"hierarchy for '{name}': '{too_long[0]}' has {len(too_long[0])} characters, more than the mask "
            f"width {width}"
        )
    short = leaves.filter(lengths < width)
    not_digits = short.filter(~short.str.contains(r"^[0-9]+$"))
    if len(not_digits):
        raise ConfigError(
            f"hierarchy for '{name}': '{not_digits[0]}' has {len(not_digits[0])} characters, fewer than the "
            f"mask width {width}, and only codes of digits are padded with zeros"
        )
    padded = leaves.str.zfill(width)
    columns = [leaves]
    for hidden in range(1, width + 1):
        columns.append(masked_labels(padded, width, hidden, character))
    return Hierarchy.from_frame(name, pl.DataFrame({f"level_{j}": c for j, c in enumerate(columns)}))


def build_hierarchy(
    spec: Any,
    column: pl.Series,
    name: str,
    base_dir: str | os.PathLike[str] | None = None,
    missing: Any = None,
    missing_values: Sequence[str] | None = None,
) -> Hierarchy:
    """The hierarchy a configuration describes for attribute ``name``, checked against its data.

    ``spec`` is a path to an ARX-format CSV file (relative to ``base_dir``, the configuration file's
    folder) or an inline builder: ``{intervals: [cuts...]}``, ``{intervals: {width: 10, bottom: 0,
    top: 100, fanout: 2}}``, ``{order: [...], fanout: 2}`` (``order: true`` for the sorted values),
    ``{mask: 5}`` or ``{mask: true}``; or a :class:`Hierarchy`. The hierarchy is validated and must
    cover every value of ``column`` (a file may list more values than occur, as ARX's age hierarchy
    does; its leaf counts are then those of the file).

    ``missing`` says how missing values are members (``"leaf"``, ``{"under": NODE}``, ``"suppress"``;
    :meth:`Hierarchy.with_missing`); None leaves them out. A file's row whose leaf is empty or one of
    ``missing_values`` (the data's missing-value tokens; default ``NA`` when ``missing`` is given) is
    the missing value's row.
    """
    if missing_values is not None:
        tokens: tuple[str, ...] | None = tuple(missing_values)
    else:
        tokens = None if missing is None else DEFAULT_MISSING_VALUES
    if isinstance(spec, Hierarchy):
        hierarchy = spec
        hierarchy.validate()
    elif isinstance(spec, str | os.PathLike):
        path = Path(spec)
        if str(spec).strip() == "":
            raise ConfigError(f"hierarchy for '{name}': the file name is empty")
        if base_dir is not None and not path.is_absolute():
            path = Path(base_dir) / path
        hierarchy = Hierarchy.from_csv(path, name, missing_values=tokens)
    elif isinstance(spec, Mapping):
        hierarchy = _build_inline(spec, column, name)
    else:
        raise ConfigError(f"hierarchy for '{name}': {_spec_help(spec)}")
    if missing is not None:
        hierarchy = hierarchy.with_missing(missing)
    hierarchy.leaf_codes(column)
    return hierarchy


def _spec_help(spec: Any) -> str:
    got = "a list" if isinstance(spec, list | tuple) else repr(spec)
    return f"expected a file name or one of {{intervals: ...}}, {{order: ...}}, {{mask: ...}}, got {got}"


def _build_inline(spec: Mapping[str, Any], column: pl.Series, name: str) -> Hierarchy:
    builders = [key for key in spec if key in _BUILDER_OPTIONS]
    if not builders:
        keys = ", ".join(f"'{key}'" for key in spec) or "none"
        raise ConfigError(
            f"hierarchy for '{name}': unknown builder (keys: {keys}); use a file name or one of "
            f"{', '.join(_BUILDER_OPTIONS)}"
        )
    if len(builders) > 1:
        raise ConfigError(f"hierarchy for '{name}': give one builder, got {' and '.join(builders)}")
    builder = builders[0]
    options = {key: value for key, value in spec.items() if key != builder}
    value = spec[builder]
    if isinstance(value, Mapping):
        clash = sorted(set(value) & set(options))
        if clash:
            raise ConfigError(f"hierarchy for '{name}': {clash[0]} is given twice")
        options.update(value)
    elif builder == "intervals":
        options["cuts"] = value
    elif builder == "order":
        if value is not True and value is not None:
            options["order"] = value
    elif builder == "mask" and value is not True and value is not None:
        options["width"] = value
    allowed = _BUILDER_OPTIONS[builder]
    unknown = [key for key in options if key not in allowed]
    if unknown:
        raise ConfigError(
            f"hierarchy for '{name}': unknown key '{unknown[0]}' for {builder} "
            f"(allowed: {', '.join(allowed)})"
        )
    if builder == "intervals":
        return intervals(name, column, **options)
    if builder == "order":
        return ordered(name, column, **options)
    return mask(name, column, **options)
