"""Record linkage: the compared attributes encoded for comparison (see :mod:`sdckit.risk.linkage`).

Each compared attribute becomes the original values and, per released record, what its released
value covers: a numeric attribute the interval ``[lo, hi]`` (open or closed bounds) in raw units, a
categorical attribute a label whose cover is a point, everything, a set or nothing, read by the one
grammar of :mod:`sdckit.labels`. :class:`Covers` flattens several categorical attributes for compiled
code, and :func:`_agree` asks, in compiled code, whether a label covers an original code; the distance
search and the Fellegi–Sunter patterns share them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from sdckit._numba import njit
from sdckit.errors import ConfigError, InputError
from sdckit.hierarchy import Hierarchy
from sdckit.labels import categories_covered, node_codes, numeric_bounds
from sdckit.params import spell
from sdckit.table import Kind, Role, Table, value_strings

#: Two distances closer than this are tied.
TIE_TOLERANCE = 1e-12

# Cover kinds of a released categorical value.
POINT, ALL, SET, NONE = 0, 1, 2, 3


@dataclass(frozen=True)
class NumericAttribute:
    """A numeric attribute: the original values (float64), their mean and scale (sd, ddof 1; 1 when
    the sd is 0 or undefined), and each released record's covered interval ``[lo, hi]`` (raw units;
    ``lo_open``/``hi_open`` mark open bounds of real-valued attributes; on integer attributes open
    bounds are made closed)."""

    name: str
    original: np.ndarray
    mean: float
    scale: float
    lo: np.ndarray
    hi: np.ndarray
    lo_open: np.ndarray
    hi_open: np.ndarray

    def agrees(self, release_rows: np.ndarray, original_rows: np.ndarray) -> np.ndarray:
        x = self.original[original_rows]
        lo, hi = self.lo[release_rows], self.hi[release_rows]
        above = np.where(self.lo_open[release_rows], x > lo, x >= lo)
        below = np.where(self.hi_open[release_rows], x < hi, x <= hi)
        return above & below

    def standardized(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Original values and released bounds in standard units."""
        return (
            (self.original - self.mean) / self.scale,
            (self.lo - self.mean) / self.scale,
            (self.hi - self.mean) / self.scale,
        )

    @property
    def is_point(self) -> np.ndarray:
        return self.lo == self.hi

    @property
    def is_all(self) -> np.ndarray:
        return np.isneginf(self.lo) & np.isposinf(self.hi)


@dataclass(frozen=True)
class CategoricalAttribute:
    """A categorical attribute: original codes (``0 .. n_categories-1``, a missing value a category of
    its own), each released record's label, and per label its cover kind (point, all, set, none),
    the category it names (point) and, for sets, the sorted keys ``label * n_categories + code``."""

    name: str
    original: np.ndarray
    n_categories: int
    labels: np.ndarray
    kind: np.ndarray
    point: np.ndarray
    set_keys: np.ndarray

    def agrees(self, release_rows: np.ndarray, original_rows: np.ndarray) -> np.ndarray:
        label = self.labels[release_rows]
        code = self.original[original_rows]
        kind = self.kind[label]
        result = (kind == ALL) | ((kind == POINT) & (self.point[label] == code))
        partial = np.flatnonzero(kind == SET)
        if partial.size:
            keys = label[partial].astype(np.int64) * self.n_categories + code[partial]
            found = np.searchsorted(self.set_keys, keys)
            found = np.minimum(found, max(len(self.set_keys) - 1, 0))
            result[partial] = self.set_keys[found] == keys if len(self.set_keys) else False
        return result

    @property
    def is_point(self) -> np.ndarray:
        return self.kind[self.labels] == POINT

    @property
    def is_all(self) -> np.ndarray:
        return self.kind[self.labels] == ALL


Encoded = NumericAttribute | CategoricalAttribute


@dataclass(frozen=True)
class Covers:
    """What the released labels of several categorical attributes cover, flattened for compiled
    code: label ``l`` of attribute ``a`` is entry ``label_offset[a] + l`` of ``kind`` and ``point``;
    its set keys lie in ``set_keys[set_ptr[a]:set_ptr[a + 1]]`` (sorted, ``l * width[a] + code``).
    Never a dense labels × categories matrix."""

    label_offset: np.ndarray
    kind: np.ndarray
    point: np.ndarray
    set_keys: np.ndarray
    set_ptr: np.ndarray
    width: np.ndarray

    @classmethod
    def of(cls, attributes: Sequence[CategoricalAttribute]) -> Covers:
        sizes = [len(a.kind) for a in attributes]
        keys = [a.set_keys for a in attributes]
        return cls(
            label_offset=np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
            if attributes
            else np.zeros(0, dtype=np.int64),
            kind=np.concatenate([a.kind for a in attributes]) if attributes else np.zeros(1, dtype=np.int8),
            point=np.concatenate([a.point for a in attributes])
            if attributes
            else np.zeros(1, dtype=np.int32),
            set_keys=np.concatenate(keys) if keys else np.zeros(0, dtype=np.int64),
            set_ptr=np.concatenate([[0], np.cumsum([len(k) for k in keys])]).astype(np.int64),
            width=np.array([a.n_categories for a in attributes], dtype=np.int64),
        )

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return self.label_offset, self.kind, self.point, self.set_keys, self.set_ptr, self.width


@njit(cache=True, inline="always")
def _agree(a, label, code, label_offset, kind, point, set_keys, set_ptr, width):  # pragma: no cover
    """Whether label ``label`` of categorical attribute ``a`` covers original code ``code``."""
    entry = label_offset[a] + label
    k = kind[entry]
    if k == 0:
        return point[entry] == code
    if k == 1:
        return True
    if k == 2:
        return _in_set(label * width[a] + code, set_keys, set_ptr[a], set_ptr[a + 1])
    return False


@njit(cache=True)
def _in_set(key, keys, low, high):  # pragma: no cover - compiled
    """Binary search of ``key`` in the sorted ``keys[low:high]``."""
    while low < high:
        middle = (low + high) // 2
        if keys[middle] < key:
            low = middle + 1
        else:
            high = middle
    return low < len(keys) and keys[low] == key


def compared_attributes(original: Table, release: Table, names: str | None) -> list[str]:
    """The attributes to compare: ``names`` (comma-separated) or every quasi-identifier of the
    original; each must be a quasi-identifier of both tables."""
    if names is None:
        chosen = [attribute.name for attribute in original.schema.with_role(Role.QUASI_IDENTIFIER)]
        if not chosen:
            raise ConfigError(
                "record linkage needs quasi-identifiers: give some attributes role quasi-identifier"
            )
    else:
        chosen = [name.strip() for name in names.split(",") if name.strip()]
        if not chosen:
            raise ConfigError("attributes lists no attribute")
        repeated = sorted({name for name in chosen if chosen.count(name) > 1})
        if repeated:
            raise ConfigError(f"attributes lists {', '.join(repeated)} twice")
        for name in chosen:
            if name not in original.schema or original.schema[name].role is not Role.QUASI_IDENTIFIER:
                qis = ", ".join(a.name for a in original.schema.with_role(Role.QUASI_IDENTIFIER))
                raise ConfigError(
                    f"attributes: '{name}' is not a quasi-identifier of the original "
                    f"(quasi-identifiers: {qis or 'none'})"
                )
    return chosen


def check_alignment(original: Table, release: Table, attributes: Sequence[str]) -> None:
    """Refuse a release that is not row-aligned with the original or lacks a compared attribute."""
    original_name = original.source or "original"
    release_name = release.source or "release"
    if "bucket" in release.data.columns and "bucket" not in original.data.columns:
        raise InputError(
            f"{release_name} is a sliced table (slicing / overlapping-slicing: a 'bucket' column, values "
            "permuted inside buckets): its rows are not aligned with the original's, so record linkage "
            "has no true match to count; link a release that keeps one row per original record"
        )
    missing = [name for name in attributes if name not in release.data.columns]
    if missing:
        raise InputError(
            f"{release_name} has no column {', '.join(repr(n) for n in missing)} of the compared "
            f"attributes: {original_name} has columns {', '.join(original.data.columns)}; {release_name} "
            f"has {', '.join(release.data.columns)}"
        )
    if original.n_records != release.n_records:
        raise InputError(
            f"record linkage pairs release row i with original row i, but {original_name} has "
            f"{original.n_records:,} records and {release_name} has {release.n_records:,}"
        )


def encode_attributes(original: Table, release: Table, attributes: Sequence[str]) -> list[Encoded]:
    """Encode every compared attribute of both tables (see :class:`NumericAttribute`,
    :class:`CategoricalAttribute`)."""
    return [_encode(original, release, name) for name in attributes]


def _encode(original: Table, release: Table, name: str) -> Encoded:
    attribute = original.schema[name]
    column = original.data.get_column(name)
    released = release.data.get_column(name)
    hierarchy = attribute.hierarchy if isinstance(attribute.hierarchy, Hierarchy) else None
    where = original.source or "original"
    if attribute.kind is Kind.NUMERIC:
        if not column.dtype.is_numeric():
            sample = column.drop_nulls().head(3).to_list()
            raise InputError(
                f"{where}: attribute '{name}' is numeric in the configuration but its values are not "
                f"numbers (e.g. {', '.join(repr(v) for v in sample)})"
            )
        nulls = column.null_count()
        values = column.cast(pl.Float64).to_numpy()
        if nulls or not np.all(np.isfinite(values)):
            count = nulls or int((~np.isfinite(values)).sum())
            raise InputError(
                f"{where}: numeric attribute '{name}' has {count:,} missing or non-finite values: distance "
                "and agreement need a number in every original record (leave it out with "
                f"{spell('attributes')})"
            )
        return _encode_numeric(name, values, column.dtype.is_integer(), released, hierarchy, release)
    return _encode_categorical(name, column, released, hierarchy, release)


def _encode_numeric(
    name: str,
    values: np.ndarray,
    integer: bool,
    released: pl.Series,
    hierarchy: Hierarchy | None,
    release: Table,
) -> NumericAttribute:
    n = len(values)
    mean = float(values.mean()) if n else 0.0
    sd = float(values.std(ddof=1)) if n > 1 else 0.0
    scale = sd if sd > 0 and math.isfinite(sd) else 1.0
    if released.dtype.is_numeric():
        points = released.cast(pl.Float64).to_numpy().copy()
        missing = np.isnan(points) | released.is_null().to_numpy()
        lo, hi = points.copy(), points.copy()
        lo[missing], hi[missing] = -np.inf, np.inf
        opens = np.zeros(len(points), dtype=np.bool_)
        return NumericAttribute(name, values, mean, scale, lo, hi, opens, opens.copy())
    text = released.cast(pl.String)
    distinct = text.drop_nulls().unique(maintain_order=True).to_list()
    bounds = [numeric_bounds(label, hierarchy) for label in distinct]
    bad = [label for label, bound in zip(distinct, bounds, strict=True) if bound is None]
    if bad:
        shown = ", ".join(repr(label) for label in bad[:5])
        raise InputError(
            f"{release.source or 'release'}: numeric attribute '{name}' has {len(bad)} value"
            f"{'s' if len(bad) != 1 else ''} that are neither a number, a range, a set, '*' nor a node of "
            f"its hierarchy: {shown}"
        )
    # A missing value: the last row, an extra "everything" entry.
    table = np.vstack([np.array(bounds, dtype=np.float64).reshape(-1, 4), [-np.inf, np.inf, 0.0, 0.0]])
    codes = (
        text.cast(pl.Enum(distinct), strict=False)
        .to_physical()
        .cast(pl.Int64)
        .fill_null(len(table) - 1)
        .to_numpy()
    )
    lo, hi = table[codes, 0].copy(), table[codes, 1].copy()
    lo_open, hi_open = table[codes, 2] > 0, table[codes, 3] > 0
    if integer:  # open bounds of an integer attribute: the nearest integers inside
        lo = np.where(lo_open & np.isfinite(lo), np.floor(lo) + 1, np.where(np.isfinite(lo), np.ceil(lo), lo))
        hi = np.where(hi_open & np.isfinite(hi), np.ceil(hi) - 1, np.where(np.isfinite(hi), np.floor(hi), hi))
        lo_open = np.zeros(len(lo), dtype=np.bool_)
        hi_open = np.zeros(len(hi), dtype=np.bool_)
    return NumericAttribute(name, values, mean, scale, lo, hi, lo_open, hi_open)


def _encode_categorical(
    name: str, column: pl.Series, released: pl.Series, hierarchy: Hierarchy | None, release: Table
) -> CategoricalAttribute:
    text = value_strings(column)
    categories = text.drop_nulls().unique().sort()
    index = {value: code for code, value in enumerate(categories.to_list())}
    n_categories = len(categories) + 1  # the last category: a missing original value
    original = (
        text.cast(pl.Enum(categories.to_list()), strict=False)
        .to_physical()
        .cast(pl.Int32)
        .fill_null(n_categories - 1)
        .to_numpy()
        .astype(np.int32)
    )
    numbers = None
    if column.dtype.is_numeric():
        numbers = np.array([float(value) for value in categories.to_list()])
    released_text = value_strings(released)
    distinct = released_text.unique(maintain_order=True).drop_nulls()
    labels_list = distinct.to_list()
    labels = (
        released_text.cast(pl.Enum(labels_list), strict=False)
        .to_physical()
        .cast(pl.Int32)
        .fill_null(len(labels_list))
        .to_numpy()
        .astype(np.int32)
    )
    kinds = np.full(len(labels_list) + 1, NONE, dtype=np.int8)
    kinds[-1] = ALL  # a missing released value
    point = np.full(len(labels_list) + 1, -1, dtype=np.int32)
    keys: list[np.ndarray] = []
    category_list = categories.to_list()
    nodes = None
    if hierarchy is not None:
        nodes = node_codes(
            hierarchy, np.array([index.get(leaf, -1) for leaf in hierarchy.labels[0]], np.int64)
        )
    for label_code, label in enumerate(labels_list):
        covered = categories_covered(label, index, category_list, numbers, nodes)
        if covered is None:
            kinds[label_code] = ALL
        elif len(covered) == 1:
            kinds[label_code], point[label_code] = POINT, covered[0]
        elif len(covered) > 1:
            kinds[label_code] = SET
            keys.append(np.int64(label_code) * n_categories + np.asarray(covered, dtype=np.int64))
    set_keys = np.sort(np.concatenate(keys)) if keys else np.zeros(0, dtype=np.int64)
    return CategoricalAttribute(name, original, n_categories, labels, kinds, point, set_keys)
