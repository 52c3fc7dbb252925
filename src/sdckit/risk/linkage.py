"""Record linkage between an original file and a release of it: how many released records an intruder
who holds the original can link back to their true source.

Two linkage methods (``sdckit risk linkage ORIGINAL RELEASE --config C``):

* **Distance-based record linkage** (Pagliuca & Seri, 1999; Domingo-Ferrer & Torra, 2001; SPEC §6.2).
  Over the chosen attributes (default: the quasi-identifiers), numeric attributes are standardized
  with the ORIGINAL file's mean and standard deviation (ddof 1; a constant attribute is left
  unscaled) and compared by Euclidean distance, other attributes by 0 (equal) / 1 (different), so
  ``d(y, x)² = Σ_numeric ((y_a − x_a) / sd_a)² + Σ_categorical [y_a ≠ x_a]``. Every released record
  ``y_i`` is linked to its nearest original records ``B_i`` (ties within 1e-12); it earns credit
  ``1/|B_i|`` when its true source ``x_i`` is among them. The linkage rate is ``Σ credit / n``. The
  rank of the true match is ``1 + #{j : d(y_i, x_j) < d(y_i, x_i) − 1e-12}`` (competition ranking:
  originals tied with the true match do not push it down), so rank 1 ⇔ credit > 0.
  Released records whose numeric values are points or wildcards and whose other values are
  wildcards are searched with a KD-tree (:class:`scipy.spatial.cKDTree`, one per combination of
  wildcard attributes, which are left out); ranks are counts of a ball query. The others are
  searched exactly over *cells*, the originals grouped by their categorical values: a released
  combination of categorical values has the same number of mismatches h with every member of a
  cell, so cells are visited by increasing h and the search stops once √h exceeds the best distance
  found (for the rank: the distance to the true source); inside a cell numeric distances (to a
  range: to its nearer bound) are computed member by member, in compiled code, once per distinct
  released row. No n × n matrix is ever held. (A KD-tree over categories one-hot coded and scaled
  by 1/√2, which makes a mismatch add 1 to the squared distance, was measured 3-7 times slower than
  brute force on Adult's 79 dimensions, so it is not used.)

* **Fellegi–Sunter probabilistic linkage** (Fellegi & Sunter, 1969; EM estimation of m and u:
  Winkler, 1988; Jaro, 1989; SPEC §6.1). Candidate pairs (released record, original record) are the
  pairs that agree exactly on the ``blocking`` attributes (all pairs without blocking, refused above
  ``max_pairs``); each pair gets an agreement vector over the other attributes, compressed to
  patterns with counts; m, u and π are estimated by EM (start m=0.9, u=0.1, π=0.1; max 1000
  iterations, tolerance 1e-8 on the largest parameter change, parameters clipped to [1e-6, 1−1e-6];
  classes swapped when Σ log(m/u) < 0); the match weight of a pattern is ``log2(m(γ)/u(γ))``;
  thresholds come from the target false-match rate μ and missed-match rate λ over all 2^K patterns,
  blocks of equal weight added whole. Pairs are links, possible links or non-links.

**Covering values.** The release may be any file sdckit writes; its labels are read by the one grammar
of :mod:`sdckit.labels`. A released value agrees with (is at
distance 0 from) every original value it covers: a missing value and ``*`` cover everything; a
numeric range ``a-b`` (Mondrian), an interval ``[a, b)``, ``<a`` or ``>=b`` (interval hierarchies)
covers the numbers inside it (on an integer attribute ``[a, b)`` is ``a .. ⌈b⌉−1``); a set ``{a,b}``
covers its members; a node of the attribute's hierarchy in the configuration covers its leaves; a
masked code ``02****`` covers the codes of its length that start with ``02`` (on a numeric attribute
a mask of digits, ``19**``, spans 1900 … 1999). For numeric distance
a range's distance to an original value is 0 inside it and the distance to the nearer bound outside
it (on a real-valued attribute, to the closure of the range). A sliced release (``slicing``,
``overlapping-slicing``: a ``bucket`` column, rows permuted inside buckets) is refused: its rows are
no longer row-aligned with the original, so there is no true match to count.

Deviations: sdcMicro's ``recordLinkage`` uses Gower distance and a one-to-one assignment; this module
follows SPEC §6.2 (nearest neighbour, shared credit). Ordinal and date attributes are compared as
categories (0/1). The Fellegi–Sunter boundary randomization is omitted (SPEC §6.1).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import numpy as np
import polars as pl
from numba import njit
from pydantic import Field, model_validator

from sdckit.context import Context
from sdckit.errors import ConfigError, InputError
from sdckit.frequency import group_records
from sdckit.hierarchy import Hierarchy
from sdckit.labels import categories_covered, node_codes, numeric_bounds
from sdckit.measures import register_measure
from sdckit.params import Finite, MethodParams, Whole, finite_or_none, spell
from sdckit.table import Kind, Role, Table, value_strings

TIE_TOLERANCE = 1e-12
EM_MAX_ITER = 1000
EM_TOL = 1e-8
EM_EPS = 1e-6
MAX_COMPARED = 20  # 2**K patterns are enumerated for the thresholds
DECISIONS = ("non-link", "possible", "link")

# Cover kinds of a released categorical value.
POINT, ALL, SET, NONE = 0, 1, 2, 3


# Encoding of the compared attributes --------------------------------------------------------------


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

    def arrays(self) -> tuple[np.ndarray, ...]:
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
    codes = text.cast(pl.Enum(distinct), strict=False).to_physical().cast(pl.Int64)
    codes = codes.fill_null(len(table) - 1).to_numpy()
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


# Distance-based record linkage -------------------------------------------------------------------


@dataclass(frozen=True)
class DistanceLinkage:
    """Distance-based record linkage of every released record (SPEC §6.2; Pagliuca & Seri, 1999).

    ``nearest[i]``: the first (smallest-index) original record among the nearest ``B_i``;
    ``tied[i]`` = |B_i|; ``true_match[i]``: the true source (original row i) is in ``B_i``;
    ``credit[i]`` = 1/|B_i| if so, else 0; ``rank[i]`` = 1 + number of originals strictly closer
    (by more than 1e-12) than the true source; ``distance[i]`` the distance to the true source,
    ``nearest_distance[i]`` to the nearest.
    """

    attributes: tuple[str, ...]
    nearest: np.ndarray
    tied: np.ndarray
    true_match: np.ndarray
    credit: np.ndarray
    rank: np.ndarray
    distance: np.ndarray
    nearest_distance: np.ndarray
    kd_tree_records: int
    assignment: str = "nearest"

    @property
    def linked(self) -> float:
        return float(self.credit.sum())

    def summary(self) -> dict[str, Any]:
        n = len(self.credit)
        share = self.linked / n if n else 0.0
        return {
            "attributes": list(self.attributes),
            "assignment": self.assignment,
            "linked": finite_or_none(self.linked),
            "linked_records": int(self.true_match.sum()),
            "linked_share": finite_or_none(share),
            "linked_percent": finite_or_none(100 * share),
            "mean_rank": finite_or_none(float(self.rank.mean())) if n else None,
            "median_rank": finite_or_none(float(np.median(self.rank))) if n else None,
            "kd_tree_records": self.kd_tree_records,
        }


def distance_linkage(
    encoded: Sequence[Encoded], n_original: int, progress: Any = None, names: Sequence[str] | None = None
) -> DistanceLinkage:
    """Link every released record to its nearest original records (see the module docstring)."""
    numeric = [a for a in encoded if isinstance(a, NumericAttribute)]
    categorical = [a for a in encoded if isinstance(a, CategoricalAttribute)]
    n = n_original
    orig_num = np.zeros((n, len(numeric)))
    lo = np.zeros((n, len(numeric)))
    hi = np.zeros((n, len(numeric)))
    for a, attribute in enumerate(numeric):
        orig_num[:, a], lo[:, a], hi[:, a] = attribute.standardized()
    orig_cat = np.zeros((n, len(categorical)), dtype=np.int32)
    rel_cat = np.zeros((n, len(categorical)), dtype=np.int32)
    for a, attribute in enumerate(categorical):
        orig_cat[:, a], rel_cat[:, a] = attribute.original, attribute.labels
    distance = _true_distances(orig_num, lo, hi, categorical)
    dmin = np.empty(n)
    tied = np.empty(n, dtype=np.int64)
    nearest = np.empty(n, dtype=np.int64)
    closer = np.empty(n, dtype=np.int64)
    # KD-tree: records whose numeric values are points or wildcards and categorical ones wildcards.
    in_tree = np.ones(n, dtype=np.bool_)
    wildcard = np.zeros((n, len(numeric)), dtype=np.bool_)
    for a, attribute in enumerate(numeric):
        in_tree &= attribute.is_point | attribute.is_all
        wildcard[:, a] = attribute.is_all
    for attribute in categorical:
        in_tree &= attribute.is_all
    tree_rows, scan_rows = np.flatnonzero(in_tree), np.flatnonzero(~in_tree)
    total, done = n, 0
    if tree_rows.size:
        masks = wildcard[tree_rows] @ (1 << np.arange(len(numeric), dtype=np.int64))
        for mask in np.unique(masks):
            rows = tree_rows[masks == mask]
            active = [a for a in range(len(numeric)) if not (mask >> a) & 1]
            found = _tree_search(rows, active, orig_num, lo, distance)
            dmin[rows], tied[rows], nearest[rows], closer[rows] = found
            done += len(rows)
            if progress is not None:
                progress(done, total)
    if scan_rows.size:
        for d_, t_, n_, c_, positions in _cell_search(
            scan_rows, orig_num, lo, hi, orig_cat, rel_cat, categorical, distance
        ):
            rows = scan_rows[positions]
            dmin[rows], tied[rows], nearest[rows], closer[rows] = d_, t_, n_, c_
            done += len(rows)
            if progress is not None:
                progress(done, total)
    true_match = distance <= dmin + TIE_TOLERANCE
    credit = np.where(true_match, 1.0 / tied, 0.0)
    rank = np.where(true_match, 1, closer + 1).astype(np.int64)
    return DistanceLinkage(
        attributes=tuple(names if names is not None else [a.name for a in encoded]),
        nearest=nearest,
        tied=tied,
        true_match=true_match,
        credit=credit,
        rank=rank,
        distance=distance,
        nearest_distance=dmin,
        kd_tree_records=int(tree_rows.size),
    )


MAX_ONE_TO_ONE = 5_000  # the assignment needs the n x n matrix of distances


def one_to_one_linkage(
    encoded: Sequence[Encoded], n_original: int, names: Sequence[str] | None = None
) -> DistanceLinkage:
    """Distance-based linkage by a one-to-one assignment (SPEC §6.2's option; what sdcMicro's
    ``recordLinkage()`` does): the released records are matched with distinct original records so
    that the total distance is smallest (Hungarian algorithm, ``scipy.optimize.linear_sum_assignment``),
    on the same distances as the nearest-neighbour linkage (standardized Euclidean, 0/1 per
    categorical attribute, a covering value at distance 0). ``nearest[i]`` is the original assigned
    to released record i, ``credit[i]`` 1 when it is its source; ranks are those of the distances.
    Among assignments of equal total distance one is chosen at random (a fixed seed), not the one in
    file order, which would credit every tie.
    Needs the whole n x n matrix: at most :data:`MAX_ONE_TO_ONE` records."""
    from scipy.optimize import linear_sum_assignment

    n = n_original
    if n > MAX_ONE_TO_ONE:
        raise ConfigError(
            f"{spell('assignment')} one-to-one needs an n x n matrix of distances: at most "
            f"{MAX_ONE_TO_ONE:,} "
            f"records, the data has {n:,} (use {spell('assignment')} nearest)"
        )
    numeric = [a for a in encoded if isinstance(a, NumericAttribute)]
    categorical = [a for a in encoded if isinstance(a, CategoricalAttribute)]
    squared = np.zeros((n, n))
    for attribute in numeric:
        x, lo, hi = attribute.standardized()
        gap = np.maximum(np.maximum(lo[:, None] - x[None, :], x[None, :] - hi[:, None]), 0.0)
        squared += gap * gap
    released_rows = np.repeat(np.arange(n), n)
    original_rows = np.tile(np.arange(n), n)
    for attribute in categorical:
        squared += ~attribute.agrees(released_rows, original_rows).reshape(n, n)
    cost = np.sqrt(squared)
    # Among assignments of equal total distance the solver returns the first it meets: in the file's
    # order that would be the identity, crediting every tie (a k-anonymous release would link 100 %).
    # The originals are therefore offered in a random (seeded) order, so ties fall where chance puts them.
    order = np.random.default_rng(0).permutation(n)
    _, chosen = linear_sum_assignment(cost[:, order])
    assigned = order[chosen]
    own = np.diagonal(cost).copy()
    true_match = assigned == np.arange(n)
    closer = (cost < own[:, None] - TIE_TOLERANCE).sum(axis=1)
    return DistanceLinkage(
        attributes=tuple(names if names is not None else [a.name for a in encoded]),
        nearest=assigned.astype(np.int64),
        tied=np.ones(n, dtype=np.int64),
        true_match=true_match,
        credit=true_match.astype(np.float64),
        rank=(closer + 1).astype(np.int64),
        distance=own,
        nearest_distance=cost[np.arange(n), assigned],
        kd_tree_records=0,
        assignment="one-to-one",
    )


def _true_distances(
    orig_num: np.ndarray, lo: np.ndarray, hi: np.ndarray, categorical: Sequence[CategoricalAttribute]
) -> np.ndarray:
    """Distance of every released record to its own source record."""
    gap = np.maximum(np.maximum(lo - orig_num, orig_num - hi), 0.0)
    squared = (gap**2).sum(axis=1)
    rows = np.arange(len(orig_num))
    for attribute in categorical:
        squared += ~attribute.agrees(rows, rows)
    return np.sqrt(squared)


def _tree_search(
    rows: np.ndarray, active: list[int], orig_num: np.ndarray, rel_num: np.ndarray, distance: np.ndarray
) -> tuple[Any, Any, Any, Any]:
    """KD-tree search of released records whose numeric values are points (``active`` attributes)
    or wildcards (left out) and whose other values are wildcards."""
    from scipy.spatial import cKDTree

    if not active:  # every attribute a wildcard: all originals tie at distance 0
        return 0.0, len(orig_num), 0, 0
    # The tree holds the distinct original points; each weighs its number of records.
    points, first_of, weight = np.unique(orig_num[:, active], axis=0, return_index=True, return_counts=True)
    tree = cKDTree(points)
    queries = rel_num[rows][:, active]
    found, _ = tree.query(queries, k=1)
    counts, first = _ball_sums(tree, queries, found + TIE_TOLERANCE, weight, first_of)
    # Originals strictly closer than the true source (only for records whose source is not nearest).
    inner = np.zeros(len(rows), dtype=np.int64)
    missed = np.flatnonzero(distance[rows] > found + TIE_TOLERANCE)
    if missed.size:
        radius = np.nextafter(distance[rows[missed]] - TIE_TOLERANCE, 0)
        inner[missed], _ = _ball_sums(tree, queries[missed], radius, weight, first_of, want_first=False)
    return found, counts, first, inner


def _ball_sums(
    tree: Any,
    queries: np.ndarray,
    radius: np.ndarray,
    weight: np.ndarray,
    first_of: np.ndarray,
    want_first: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """Per query: the records (weights) of the distinct points within ``radius`` and the first
    record among them (-1 if none)."""
    if weight.max(initial=0) == 1:  # no repeated point: counts without the lists
        totals = np.asarray(tree.query_ball_point(queries, radius, return_length=True), dtype=np.int64)
        firsts = np.full(len(queries), -1, dtype=np.int64)
        if not want_first:
            return totals, firsts
        one = np.flatnonzero(totals == 1)
        if one.size:
            _, nearest = tree.query(queries[one], k=1)
            firsts[one] = first_of[nearest]
        several = np.flatnonzero(totals > 1)
        if several.size:
            _, firsts[several] = _ball_sums_lists(tree, queries[several], radius[several], weight, first_of)
        return totals, firsts
    return _ball_sums_lists(tree, queries, radius, weight, first_of)


def _ball_sums_lists(
    tree: Any, queries: np.ndarray, radius: np.ndarray, weight: np.ndarray, first_of: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    lists = tree.query_ball_point(queries, radius)
    lengths = np.fromiter((len(members) for members in lists), dtype=np.int64, count=len(lists))
    members = np.fromiter((m for found in lists for m in found), dtype=np.int64, count=int(lengths.sum()))
    totals = np.zeros(len(lists), dtype=np.int64)
    firsts = np.full(len(lists), -1, dtype=np.int64)
    some = lengths > 0
    if members.size:
        offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])[some]
        totals[some] = np.add.reduceat(weight[members], offsets)
        firsts[some] = np.minimum.reduceat(first_of[members], offsets)
    return totals, firsts


def _cell_search(
    rows: np.ndarray,
    orig_num: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    orig_cat: np.ndarray,
    rel_cat: np.ndarray,
    categorical: Sequence[CategoricalAttribute],
    distance: np.ndarray,
    block: int = 64,
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """Exact nearest-neighbour search for the other released records, over cells: the originals
    grouped by their categorical values. A released combination of categorical values is at the
    same number of mismatches h from every record of a cell, so cells are visited by increasing h
    and the search stops once √h exceeds the best distance (or, for the rank, the distance to the
    true source); inside a visited cell the numeric distances are computed record by record.
    Distinct released rows are searched once. Yields, per block of released categorical
    combinations, the nearest distance, tie count, first nearest original and count strictly
    closer than the true source of the released records it covers, and their positions in ``rows``."""
    covers = Covers.of(categorical).arrays()
    n = len(orig_num)
    # Cells of the originals, members in row order.
    cells = group_records(pl.DataFrame(orig_cat), [f"column_{a}" for a in range(orig_cat.shape[1])])
    member_rows = np.argsort(cells.keys, kind="stable").astype(np.int64)
    member_ptr = np.zeros(len(cells.sizes) + 1, dtype=np.int64)
    member_ptr[1:] = np.cumsum(cells.sizes)
    member_num = np.ascontiguousarray(orig_num[member_rows])
    cell_cat = np.ascontiguousarray(orig_cat[cells.first]) if n else orig_cat
    # Distinct released rows, grouped by their categorical labels (combinations).
    frame = pl.DataFrame(
        [pl.Series(f"c{a}", rel_cat[rows, a]) for a in range(rel_cat.shape[1])]
        + [pl.Series(f"lo{a}", lo[rows, a]) for a in range(lo.shape[1])]
        + [pl.Series(f"hi{a}", hi[rows, a]) for a in range(hi.shape[1])]
    )
    distinct = group_records(frame, frame.columns)
    representatives = rows[distinct.first]
    combos = group_records(
        frame[distinct.first], [f"c{a}" for a in range(rel_cat.shape[1])]
    )  # the combination of every distinct row
    row_order = np.argsort(combos.keys, kind="stable")  # distinct rows sorted by combination
    combo_ptr = np.zeros(len(combos.sizes) + 1, dtype=np.int64)
    combo_ptr[1:] = np.cumsum(combos.sizes)
    rank_of_row = np.empty(len(row_order), dtype=np.int64)
    rank_of_row[row_order] = np.arange(len(row_order))
    sorted_rows = representatives[row_order]
    row_lo = np.ascontiguousarray(lo[sorted_rows])
    row_hi = np.ascontiguousarray(hi[sorted_rows])
    combo_cat = np.ascontiguousarray(rel_cat[sorted_rows[combo_ptr[:-1]]])
    # Released records sorted by their distinct row (in that order).
    record_row = rank_of_row[distinct.keys]
    record_order = np.argsort(record_row, kind="stable")
    record_ptr = np.zeros(len(row_order) + 1, dtype=np.int64)
    record_ptr[1:] = np.cumsum(np.bincount(record_row, minlength=len(row_order)))
    thresholds = distance[rows[record_order]] - TIE_TOLERANCE
    for start in range(0, len(combos.sizes), block):
        stop = min(start + block, len(combos.sizes))
        first_row, last_row = combo_ptr[start], combo_ptr[stop]
        first_record, last_record = record_ptr[first_row], record_ptr[last_row]
        out_min = np.empty(last_row - first_row)
        out_tied = np.empty(last_row - first_row, dtype=np.int64)
        out_near = np.empty(last_row - first_row, dtype=np.int64)
        out_closer = np.zeros(last_record - first_record, dtype=np.int64)
        _cell_kernel(
            cell_cat,
            member_ptr,
            member_rows,
            member_num,
            combo_cat[start:stop],
            combo_ptr[start : stop + 1] - first_row,
            row_lo[first_row:last_row],
            row_hi[first_row:last_row],
            *covers,
            record_ptr[first_row : last_row + 1] - first_record,
            thresholds[first_record:last_record],
            TIE_TOLERANCE,
            out_min,
            out_tied,
            out_near,
            out_closer,
        )
        positions = record_order[first_record:last_record]
        own = record_row[positions] - first_row
        yield out_min[own], out_tied[own], out_near[own], out_closer, positions


@njit(cache=True)
def _cell_kernel(
    cell_cat,
    member_ptr,
    member_rows,
    member_num,
    combo_cat,
    combo_ptr,
    row_lo,
    row_hi,
    label_offset,
    kind,
    point,
    set_keys,
    set_ptr,
    width,
    record_ptr,
    thresholds,
    tol,
    out_min,
    out_tied,
    out_near,
    out_closer,
):  # pragma: no cover - compiled
    n_cells = cell_cat.shape[0]
    n_cat = cell_cat.shape[1]
    n_num = member_num.shape[1]
    mismatches = np.empty(n_cells, dtype=np.int64)
    order = np.empty(n_cells, dtype=np.int64)
    starts = np.zeros(n_cat + 2, dtype=np.int64)
    fill = np.zeros(n_cat + 1, dtype=np.int64)
    for c in range(combo_cat.shape[0]):
        starts[:] = 0
        for g in range(n_cells):
            h = 0
            for a in range(n_cat):
                if not _agree(
                    a, combo_cat[c, a], cell_cat[g, a], label_offset, kind, point, set_keys, set_ptr, width
                ):
                    h += 1
            mismatches[g] = h
            starts[h + 1] += 1
        for h in range(n_cat + 1):
            starts[h + 1] += starts[h]
            fill[h] = starts[h]
        for g in range(n_cells):
            h = mismatches[g]
            order[fill[h]] = g
            fill[h] += 1
        for r in range(combo_ptr[c], combo_ptr[c + 1]):
            best = np.inf
            for h in range(n_cat + 1):
                if np.sqrt(h) > best + tol:
                    break
                for index in range(starts[h], starts[h + 1]):
                    g = order[index]
                    for m in range(member_ptr[g], member_ptr[g + 1]):
                        s = float(h)
                        for a in range(n_num):
                            x = member_num[m, a]
                            if x < row_lo[r, a]:
                                s += (row_lo[r, a] - x) ** 2
                            elif x > row_hi[r, a]:
                                s += (x - row_hi[r, a]) ** 2
                        d = np.sqrt(s)
                        if d < best:
                            best = d
            count = 0
            first = -1
            for h in range(n_cat + 1):
                if np.sqrt(h) > best + tol:
                    break
                for index in range(starts[h], starts[h + 1]):
                    g = order[index]
                    for m in range(member_ptr[g], member_ptr[g + 1]):
                        s = float(h)
                        for a in range(n_num):
                            x = member_num[m, a]
                            if x < row_lo[r, a]:
                                s += (row_lo[r, a] - x) ** 2
                            elif x > row_hi[r, a]:
                                s += (x - row_hi[r, a]) ** 2
                        if np.sqrt(s) <= best + tol:
                            count += 1
                            if first < 0 or member_rows[m] < first:
                                first = member_rows[m]
            out_min[r] = best
            out_tied[r] = count
            out_near[r] = first
            for k in range(record_ptr[r], record_ptr[r + 1]):
                limit = thresholds[k]
                if limit <= best:  # the source is among the nearest: nothing strictly closer
                    continue
                closer = 0
                for h in range(n_cat + 1):
                    if np.sqrt(h) >= limit:
                        break
                    for index in range(starts[h], starts[h + 1]):
                        g = order[index]
                        for m in range(member_ptr[g], member_ptr[g + 1]):
                            s = float(h)
                            for a in range(n_num):
                                x = member_num[m, a]
                                if x < row_lo[r, a]:
                                    s += (row_lo[r, a] - x) ** 2
                                elif x > row_hi[r, a]:
                                    s += (x - row_hi[r, a]) ** 2
                            if np.sqrt(s) < limit:
                                closer += 1
                out_closer[k] = closer


# Fellegi–Sunter ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class EMResult:
    """m, u (one per compared attribute), π, the number of iterations and whether it converged."""

    m: np.ndarray
    u: np.ndarray
    pi: float
    iterations: int
    converged: bool


def fellegi_sunter_em(
    patterns: np.ndarray,
    counts: np.ndarray,
    *,
    m0: float = 0.9,
    u0: float = 0.1,
    pi0: float = 0.1,
    max_iter: int = EM_MAX_ITER,
    tol: float = EM_TOL,
    eps: float = EM_EPS,
) -> EMResult:
    """EM estimation of the Fellegi–Sunter mixture (SPEC §6.1; Winkler, 1988; Jaro, 1989).

    ``patterns`` is a ``(G, K)`` 0/1 matrix of the distinct agreement patterns and ``counts`` their
    numbers of pairs. Stops when the largest absolute change of m, u and π is below ``tol`` (the
    iteration count includes that last iteration); swaps the classes when Σ log(m/u) < 0.
    """
    gamma = np.asarray(patterns, dtype=np.float64)
    n_g = np.asarray(counts, dtype=np.float64)
    total = n_g.sum()
    k = gamma.shape[1]
    m = np.clip(np.full(k, m0), eps, 1 - eps)
    u = np.clip(np.full(k, u0), eps, 1 - eps)
    pi = float(np.clip(pi0, eps, 1 - eps))
    iterations, converged = 0, False
    for iterations in range(1, max_iter + 1):  # noqa: B007
        log_m = gamma @ np.log(m) + (1 - gamma) @ np.log1p(-m)
        log_u = gamma @ np.log(u) + (1 - gamma) @ np.log1p(-u)
        a = math.log(pi) + log_m
        b = math.log1p(-pi) + log_u
        w = 1 / (1 + np.exp(b - a))
        weight = n_g * w
        matched = weight.sum()
        new_m = np.clip(weight @ gamma / matched, eps, 1 - eps) if matched > 0 else m
        unmatched = n_g * (1 - w)
        new_u = np.clip(unmatched @ gamma / (total - matched), eps, 1 - eps) if total > matched else u
        new_pi = float(np.clip(matched / total, eps, 1 - eps))
        change = max(np.abs(new_m - m).max(), np.abs(new_u - u).max(), abs(new_pi - pi))
        m, u, pi = new_m, new_u, new_pi
        if change < tol:
            converged = True
            break
    if np.sum(np.log(m / u)) < 0:
        m, u, pi = u, m, 1 - pi
    return EMResult(m=m, u=u, pi=pi, iterations=iterations, converged=converged)


def pattern_weights(patterns: np.ndarray, m: np.ndarray, u: np.ndarray) -> np.ndarray:
    """``W(γ) = Σ_k γ_k log2(m_k/u_k) + (1 − γ_k) log2((1 − m_k)/(1 − u_k))``."""
    gamma = np.asarray(patterns, dtype=np.float64)
    return gamma @ np.log2(m / u) + (1 - gamma) @ np.log2((1 - m) / (1 - u))


def all_patterns(k: int) -> np.ndarray:
    """Every 0/1 pattern of ``k`` fields, row g = the bits of g (field 0 the lowest bit)."""
    codes = np.arange(2**k, dtype=np.int64)
    return ((codes[:, None] >> np.arange(k)) & 1).astype(np.int8)


def thresholds(m: np.ndarray, u: np.ndarray, mu: float, lam: float) -> tuple[float, float]:
    """``(T_upper, T_lower)`` from the target false-match rate μ and missed-match rate λ (SPEC §6.1):
    blocks of patterns of equal weight (within 1e-12) are added whole, from the top to the link set
    while its u-mass stays at most μ, from the bottom to the non-link set while its m-mass stays at
    most λ. ``T_upper`` is +inf when no block fits (nothing is linked), ``T_lower`` −inf likewise."""
    patterns = all_patterns(len(m)).astype(np.float64)
    weight = pattern_weights(patterns, m, u)
    m_mass = np.exp(patterns @ np.log(m) + (1 - patterns) @ np.log1p(-m))
    u_mass = np.exp(patterns @ np.log(u) + (1 - patterns) @ np.log1p(-u))
    order = np.argsort(-weight, kind="stable")
    weight, m_mass, u_mass = weight[order], m_mass[order], u_mass[order]
    starts = np.flatnonzero(np.r_[True, np.abs(np.diff(weight)) > TIE_TOLERANCE])
    ends = np.r_[starts[1:], len(weight)]
    block_u = np.add.reduceat(u_mass, starts)
    block_m = np.add.reduceat(m_mass, starts)
    upper_blocks = 0
    total = 0.0
    for u_block in block_u:
        if total + u_block > mu + TIE_TOLERANCE:
            break
        total += u_block
        upper_blocks += 1
    lower_blocks = 0
    total = 0.0
    for index in range(len(starts) - 1, upper_blocks - 1, -1):
        if total + block_m[index] > lam + TIE_TOLERANCE:
            break
        total += block_m[index]
        lower_blocks += 1
    upper = float(weight[ends[upper_blocks - 1] - 1]) if upper_blocks else math.inf
    lower = float(weight[starts[len(starts) - lower_blocks]]) if lower_blocks else -math.inf
    return upper, lower


def decide(weight: np.ndarray, upper: float, lower: float) -> np.ndarray:
    """2 = link (W ≥ T_upper), 0 = non-link (W ≤ T_lower), 1 = possible link, per weight."""
    weight = np.asarray(weight, dtype=np.float64)
    return np.where(
        weight >= upper - TIE_TOLERANCE, 2, np.where(weight <= lower + TIE_TOLERANCE, 0, 1)
    ).astype(np.int8)


@dataclass(frozen=True)
class FellegiSunter:
    """Fellegi–Sunter linkage (SPEC §6.1): the compared and blocking attributes, the EM estimates,
    the thresholds, the candidate pairs and their patterns, link counts, and per released record
    whether its true pair was a candidate, its weight (NaN if not) and decision (-1 if not)."""

    attributes: tuple[str, ...]
    blocking: tuple[str, ...]
    m: np.ndarray
    u: np.ndarray
    pi: float
    iterations: int
    converged: bool
    upper: float
    lower: float
    pairs: int
    patterns: int
    links: int
    possible: int
    true_candidate: np.ndarray
    true_weight: np.ndarray
    true_decision: np.ndarray

    def summary(self) -> dict[str, Any]:
        n = len(self.true_decision)
        true_links = int((self.true_decision == 2).sum())
        return {
            "attributes": list(self.attributes),
            "blocking": list(self.blocking),
            "m": {name: finite_or_none(v) for name, v in zip(self.attributes, self.m, strict=True)},
            "u": {name: finite_or_none(v) for name, v in zip(self.attributes, self.u, strict=True)},
            "pi": finite_or_none(self.pi),
            "iterations": self.iterations,
            "converged": self.converged,
            "upper_threshold": finite_or_none(self.upper),
            "lower_threshold": finite_or_none(self.lower),
            "pairs": self.pairs,
            "patterns": self.patterns,
            "links": self.links,
            "possible_links": self.possible,
            "true_pairs_compared": int(self.true_candidate.sum()),
            "true_links": true_links,
            "true_links_share": finite_or_none(true_links / n) if n else None,
            "false_matches": self.links - true_links,
        }


def candidate_pairs(
    encoded: dict[str, Encoded], blocking: Sequence[str], n: int, max_pairs: int, progress: Any = None
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Candidate pairs ``(release rows, original rows)`` in chunks: every pair without blocking,
    else the pairs whose blocking attributes agree (a covering released value is expanded to the
    original values it covers), by a join on the block keys. Raises ``ConfigError`` when there are
    more than ``max_pairs``. ``progress(pairs, total)`` is called once a chunk has been used."""
    chunk = 1 << 20
    if not blocking:
        total = n * n
        if total > max_pairs:
            raise ConfigError(
                f"Fellegi–Sunter without blocking compares all {n:,} × {n:,} = {total:,} pairs, more than "
                f"max_pairs ({max_pairs:,}): give blocking attributes ({spell('blocking')}) whose values "
                "must agree"
            )
        rows_per_chunk = max(1, chunk // max(n, 1))
        for start in range(0, n, rows_per_chunk):
            stop = min(start + rows_per_chunk, n)
            release_rows = np.repeat(np.arange(start, stop, dtype=np.int64), n)
            original_rows = np.tile(np.arange(n, dtype=np.int64), stop - start)
            yield release_rows, original_rows
            if progress is not None:
                progress(stop * n, total)
        return
    originals = pl.DataFrame({"original": np.arange(n, dtype=np.int64)})
    releases = pl.DataFrame({"release": np.arange(n, dtype=np.int64)})
    for name in blocking:
        codes, labels, table_labels, table_codes = _block_codes(encoded[name])
        originals = originals.with_columns(pl.Series(name, codes))
        table = pl.DataFrame({"label": table_labels, name: table_codes})
        releases = (
            releases.with_columns(pl.Series("label", labels[releases.get_column("release").to_numpy()]))
            .join(table, on="label", how="inner")
            .drop("label")
        )
    sizes = originals.group_by(list(blocking)).len()
    total = int(releases.join(sizes, on=list(blocking), how="inner").get_column("len").sum() or 0)
    if total > max_pairs:
        raise ConfigError(
            f"blocking on {', '.join(blocking)} leaves {total:,} candidate pairs, more than max_pairs "
            f"({max_pairs:,}): block on more attributes or raise {spell('max_pairs')}"
        )
    # The join in slices of released keys of about ``chunk`` pairs each: never all pairs at once.
    step = max(1, int(releases.height * chunk / max(total, 1)))
    done = 0
    for start in range(0, releases.height, step):
        part = releases.slice(start, step).join(originals, on=list(blocking), how="inner")
        yield part.get_column("release").to_numpy(), part.get_column("original").to_numpy()
        done += part.height
        if progress is not None:
            progress(done, total)


def _block_codes(attribute: Encoded) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Original codes of a blocking attribute, each released record's label, and the table of
    (label, covered original code) pairs."""
    if isinstance(attribute, CategoricalAttribute):
        width = attribute.n_categories
        point = np.flatnonzero(attribute.kind == POINT)
        every = np.flatnonzero(attribute.kind == ALL)
        table_labels = np.concatenate([point, np.repeat(every, width), attribute.set_keys // width]).astype(
            np.int64
        )
        table_codes = np.concatenate(
            [attribute.point[point], np.tile(np.arange(width), len(every)), attribute.set_keys % width]
        ).astype(np.int64)
        return (
            attribute.original.astype(np.int64),
            attribute.labels.astype(np.int64),
            table_labels,
            table_codes,
        )
    distinct, codes = np.unique(attribute.original, return_inverse=True)
    lo, hi = attribute.lo, attribute.hi
    first = np.where(attribute.lo_open, np.searchsorted(distinct, lo, "right"), np.searchsorted(distinct, lo))
    last = np.where(attribute.hi_open, np.searchsorted(distinct, hi), np.searchsorted(distinct, hi, "right"))
    spans, labels = np.unique(np.stack([first, last], axis=1), axis=0, return_inverse=True)
    lengths = np.maximum(spans[:, 1] - spans[:, 0], 0)
    table_labels = np.repeat(np.arange(len(spans), dtype=np.int64), lengths)
    starts = np.repeat(spans[:, 0] - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
    table_codes = (np.arange(int(lengths.sum()), dtype=np.int64) + starts).astype(np.int64)
    return codes.astype(np.int64), labels.reshape(-1).astype(np.int64), table_labels, table_codes


@njit(cache=True)
def _pattern_counts(
    release_rows,
    original_rows,
    cat_bit,
    rel_labels,
    orig_codes,
    label_offset,
    kind,
    point,
    set_keys,
    set_ptr,
    width,
    num_bit,
    values,
    lows,
    highs,
    low_open,
    high_open,
    counts,
):  # pragma: no cover - compiled
    """Count the agreement pattern of every pair (bit ``cat_bit[t]`` / ``num_bit[t]`` set when the
    pair agrees on that attribute)."""
    for p in range(len(release_rows)):
        i = release_rows[p]
        j = original_rows[p]
        code = 0
        for t in range(len(cat_bit)):
            if _agree(
                t, rel_labels[t, i], orig_codes[t, j], label_offset, kind, point, set_keys, set_ptr, width
            ):
                code |= 1 << cat_bit[t]
        for t in range(len(num_bit)):
            x = values[t, j]
            above = x > lows[t, i] if low_open[t, i] else x >= lows[t, i]
            below = x < highs[t, i] if high_open[t, i] else x <= highs[t, i]
            if above and below:
                code |= 1 << num_bit[t]
        counts[code] += 1


def fellegi_sunter(
    encoded: Sequence[Encoded],
    blocking: Sequence[str],
    n: int,
    *,
    max_pairs: int,
    false_match_rate: float,
    missed_match_rate: float,
    progress: Any = None,
) -> FellegiSunter:
    """Fellegi–Sunter linkage of the released records with the original ones (see the module
    docstring): candidate pairs by blocking, agreement patterns, EM, weights, thresholds, decisions."""
    by_name = {attribute.name: attribute for attribute in encoded}
    compared = [attribute for attribute in encoded if attribute.name not in blocking]
    k = len(compared)
    if k < 3:
        names = ", ".join(a.name for a in compared) or "none"
        raise ConfigError(
            f"Fellegi–Sunter needs at least 3 compared attributes besides the blocking ones to identify m, "
            f"u and π (compared: {names}); block on fewer attributes or compare more"
        )
    if k > MAX_COMPARED:
        raise ConfigError(f"Fellegi–Sunter compares at most {MAX_COMPARED} attributes, got {k}")
    bits = (1 << np.arange(k, dtype=np.int64)).astype(np.int64)
    counts = np.zeros(2**k, dtype=np.int64)
    categorical = [a for a in compared if isinstance(a, CategoricalAttribute)]
    numeric = [a for a in compared if isinstance(a, NumericAttribute)]
    cat_bit = np.array([compared.index(a) for a in categorical], dtype=np.int64)
    num_bit = np.array([compared.index(a) for a in numeric], dtype=np.int64)
    rel_labels = np.array([a.labels for a in categorical], dtype=np.int64).reshape(len(categorical), n)
    orig_codes = np.array([a.original for a in categorical], dtype=np.int64).reshape(len(categorical), n)
    values = np.array([a.original for a in numeric], dtype=np.float64).reshape(len(numeric), n)
    lows = np.array([a.lo for a in numeric], dtype=np.float64).reshape(len(numeric), n)
    highs = np.array([a.hi for a in numeric], dtype=np.float64).reshape(len(numeric), n)
    low_open = np.array([a.lo_open for a in numeric], dtype=np.bool_).reshape(len(numeric), n)
    high_open = np.array([a.hi_open for a in numeric], dtype=np.bool_).reshape(len(numeric), n)
    covers = Covers.of(categorical).arrays()
    for release_rows, original_rows in candidate_pairs(by_name, blocking, n, max_pairs, progress):
        _pattern_counts(
            np.ascontiguousarray(release_rows, dtype=np.int64),
            np.ascontiguousarray(original_rows, dtype=np.int64),
            cat_bit,
            rel_labels,
            orig_codes,
            *covers,
            num_bit,
            values,
            lows,
            highs,
            low_open,
            high_open,
            counts,
        )
    pairs = int(counts.sum())
    if pairs == 0:
        raise InputError(f"blocking on {', '.join(blocking)} leaves no candidate pair")
    observed = np.flatnonzero(counts)
    patterns = ((observed[:, None] & bits) > 0).astype(np.int8)
    em = fellegi_sunter_em(patterns, counts[observed])
    upper, lower = thresholds(em.m, em.u, false_match_rate, missed_match_rate)
    decisions = decide(pattern_weights(patterns, em.m, em.u), upper, lower)
    links = int(counts[observed][decisions == 2].sum())
    possible = int(counts[observed][decisions == 1].sum())
    rows = np.arange(n)
    candidate = np.ones(n, dtype=np.bool_)
    for name in blocking:
        candidate &= by_name[name].agrees(rows, rows)
    own = np.zeros((n, k), dtype=np.int8)
    for index, attribute in enumerate(compared):
        own[:, index] = attribute.agrees(rows, rows)
    weight = np.where(candidate, pattern_weights(own, em.m, em.u), np.nan)
    decision = np.where(candidate, decide(np.nan_to_num(weight), upper, lower), -1).astype(np.int8)
    return FellegiSunter(
        attributes=tuple(a.name for a in compared),
        blocking=tuple(blocking),
        m=em.m,
        u=em.u,
        pi=em.pi,
        iterations=em.iterations,
        converged=em.converged,
        upper=upper,
        lower=lower,
        pairs=pairs,
        patterns=len(observed),
        links=links,
        possible=possible,
        true_candidate=candidate,
        true_weight=weight,
        true_decision=decision,
    )


# The measure ------------------------------------------------------------------------------------


class LinkageParams(MethodParams):
    """Record linkage of a release with its original (row i of the release comes from row i of the
    original): distance-based linkage (share of records linked to their source, rank of the true
    match) and Fellegi–Sunter probabilistic linkage with EM-estimated m and u and blocking."""

    method: Annotated[
        Literal["distance", "probabilistic", "both"],
        Field(description="distance (nearest neighbour), probabilistic (Fellegi–Sunter) or both."),
    ] = "both"
    attributes: Annotated[
        str | None,
        Field(
            min_length=1,
            description="Compared attributes, comma-separated quasi-identifiers (default: all of them).",
        ),
    ] = None
    assignment: Annotated[
        Literal["nearest", "one-to-one"],
        Field(
            description="Distance linkage: each released record to its nearest originals (ties share "
            "credit), or a one-to-one assignment of least total distance (sdcMicro's recordLinkage)."
        ),
    ] = "nearest"
    blocking: Annotated[
        str | None,
        Field(
            min_length=1,
            description="Fellegi–Sunter: attributes whose values must agree for a pair to be compared.",
        ),
    ] = None
    max_pairs: Annotated[
        Whole, Field(ge=1, description="Fellegi–Sunter: most candidate pairs (block to stay below).")
    ] = 10_000_000
    false_match_rate: Annotated[
        Finite, Field(gt=0, lt=1, description="Fellegi–Sunter: target false-match rate mu (P(link | U)).")
    ] = 0.01
    missed_match_rate: Annotated[
        Finite,
        Field(gt=0, lt=1, description="Fellegi–Sunter: target missed-match rate lambda (P(non-link | M))."),
    ] = 0.05

    @model_validator(mode="after")
    def _probabilistic_only(self) -> LinkageParams:
        if self.method == "probabilistic" and "assignment" in self.model_fields_set:
            raise ValueError("takes no {assignment} with {method} probabilistic (it is distance linkage's)")
        if self.method == "distance":
            given = [name for name in ("blocking",) if getattr(self, name) is not None]
            given += [
                name
                for name in ("max_pairs", "false_match_rate", "missed_match_rate")
                if name in self.model_fields_set
            ]
            if given:
                raise ValueError(
                    "takes no Fellegi–Sunter parameter with {method} distance: "
                    + ", ".join(f"{{{name}}}" for name in given)
                )
        return self


@dataclass(frozen=True)
class LinkageResult:
    """Record linkage of a release with its original: ``distance`` (:class:`DistanceLinkage`) and
    ``probabilistic`` (:class:`FellegiSunter`), each None when not run."""

    n_records: int
    attributes: tuple[str, ...]
    distance: DistanceLinkage | None
    probabilistic: FellegiSunter | None

    def summary(self) -> dict[str, Any]:
        figures: dict[str, Any] = {"records": self.n_records, "attributes": list(self.attributes)}
        if self.distance is not None:
            figures["distance"] = self.distance.summary()
        if self.probabilistic is not None:
            figures["probabilistic"] = self.probabilistic.summary()
        return figures

    def records(self) -> pl.DataFrame:
        """One row per released record: its nearest original, whether that is its source, the rank of
        its source, and the Fellegi–Sunter weight and decision of its true pair (null when the pair was
        not a candidate)."""
        columns: dict[str, Any] = {"record": np.arange(self.n_records, dtype=np.int64)}
        if self.distance is not None:
            d = self.distance
            columns.update(
                nearest=d.nearest,
                tied=d.tied,
                true_match=d.true_match,
                credit=d.credit,
                rank=d.rank,
                distance=d.distance,
            )
        frame = pl.DataFrame(columns)
        if self.probabilistic is not None:
            p = self.probabilistic
            chosen = np.where(p.true_decision < 0, 3, p.true_decision)
            labels = np.array([*DECISIONS, None], dtype=object)[chosen]
            frame = frame.with_columns(
                pl.Series("fs_weight", p.true_weight).fill_nan(None),
                pl.Series("fs_decision", labels.tolist(), dtype=pl.String),
            )
        return frame


def record_linkage(
    original: Table, release: Table, params: LinkageParams | None = None, progress: Any = None
) -> LinkageResult:
    """Distance-based and/or Fellegi–Sunter linkage of ``release`` with ``original`` (row i of the
    release comes from row i of the original)."""
    params = params or LinkageParams()
    attributes = compared_attributes(original, release, params.attributes)
    blocking: list[str] = []
    if params.blocking is not None:
        blocking = [name.strip() for name in params.blocking.split(",") if name.strip()]
        outside = [name for name in blocking if name not in attributes]
        if outside:
            raise ConfigError(
                f"blocking: {', '.join(repr(n) for n in outside)} not among the compared attributes "
                f"({', '.join(attributes)})"
            )
        if len(set(blocking)) != len(blocking):
            raise ConfigError("blocking lists an attribute twice")
    check_alignment(original, release, attributes)
    encoded = encode_attributes(original, release, attributes)
    n = original.n_records
    distance = probabilistic = None
    if params.method in ("distance", "both"):
        if params.assignment == "one-to-one":
            distance = one_to_one_linkage(encoded, n, attributes)
        else:
            distance = distance_linkage(encoded, n, progress, attributes)
    if params.method in ("probabilistic", "both"):
        probabilistic = fellegi_sunter(
            encoded,
            blocking,
            n,
            max_pairs=params.max_pairs,
            false_match_rate=params.false_match_rate,
            missed_match_rate=params.missed_match_rate,
            progress=progress,
        )
    return LinkageResult(n, tuple(attributes), distance, probabilistic)


def _report(figures: dict[str, Any]) -> list[Any]:
    lines = [f"compared: {', '.join(figures['attributes'])}"]
    if "distance" in figures:
        d = figures["distance"]
        lines.append(
            f"distance linkage: [bold]{d['linked_percent']:.2f}%[/] of the records linked to their source "
            f"({d['linked']:g} of {figures['records']:,}); mean rank of the true match {d['mean_rank']:.3g}"
        )
    if "probabilistic" in figures:
        p = figures["probabilistic"]
        blocking = ", ".join(p["blocking"]) or "none"
        upper = "∞" if p["upper_threshold"] is None else f"{p['upper_threshold']:.4g}"
        lower = "−∞" if p["lower_threshold"] is None else f"{p['lower_threshold']:.4g}"
        lines.append(
            f"Fellegi–Sunter (blocking: {blocking}): {p['pairs']:,} pairs, {p['patterns']} patterns, "
            f"π {p['pi']:.4g} after {p['iterations']} EM iterations; thresholds {lower} / {upper}"
        )
        share = p["true_links_share"] or 0.0
        lines.append(
            f"links: {p['links']:,} ({p['possible_links']:,} possible); true matches linked: "
            f"[bold]{100 * share:.2f}%[/]; false matches: {p['false_matches']:,}"
        )
    return lines


@register_measure(
    "linkage",
    "risk",
    LinkageParams,
    summary=lambda result: result.summary(),
    help="Record linkage of a release with its original: distance-based and Fellegi–Sunter.",
    report=_report,
    records=lambda result: result.records(),
    compares=True,
    progress_label="records linked",
    headline="distance.linked_share",
)
def _run_linkage(original: Table, release: Table, params: LinkageParams, context: Context) -> LinkageResult:
    return record_linkage(original, release, params, context.progress)
