"""Attribute partitioning of slicing: the correlation of the attributes and the columns built from it.

The correlation is phi^2 (or the absolute Pearson correlation of the codes) of every pair of attributes,
numeric ones discretized first (SPEC §1.2-§1.3); slicing's columns are PAM k-medoids clusters on
``1 - correlation`` (Kaufman & Rousseeuw, 1990; SPEC §1.4), overlapping slicing's come from overlapping
correlation clustering (:mod:`sdckit.anonymize._overlapping_clustering`); columns a caller names are
checked here too. Re-exported by :mod:`sdckit.anonymize.slicing`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from sdckit.errors import ConfigError
from sdckit.frequency import encode

CORRELATIONS = ("phi2", "pearson")

_TOLERANCE = 1e-12
# Contingency tables up to this many cells are counted densely (bincount), larger ones sparsely.
_DENSE_CELLS = 1 << 22


# Correlation --------------------------------------------------------------------------------------


def discretize(values: np.ndarray, n_bins: int = 10) -> np.ndarray:
    """Equal-width bin of every value (SPEC §1.3): ``min(floor((v - min) / width), n_bins - 1)`` with
    ``width = (max - min) / n_bins``; a constant column is a single bin 0. NaN must not occur."""
    values = np.asarray(values, dtype=np.float64)
    if n_bins < 1:
        raise ConfigError(f"n_bins must be at least 1, got {n_bins}")
    if values.size == 0:
        return np.zeros(0, dtype=np.int64)
    low, high = float(values.min()), float(values.max())
    if high <= low:
        return np.zeros(values.shape, dtype=np.int64)
    width = (high - low) / n_bins
    bins = np.floor((values - low) / width).astype(np.int64)
    return np.clip(bins, 0, n_bins - 1)


def _dense(codes: np.ndarray) -> tuple[np.ndarray, int]:
    """Codes renumbered 0 .. d-1 over the values that occur."""
    unique, inverse = np.unique(codes, return_inverse=True)
    return inverse.reshape(-1).astype(np.int64), len(unique)


def _correlation_codes(
    frame: pl.DataFrame, attributes: Sequence[str], n_bins: int, numeric: Sequence[str]
) -> list[tuple[np.ndarray, int]]:
    """Dense codes of every attribute after discretizing the numeric ones; a missing value is a
    category of its own."""
    numeric_set = set(numeric)
    categorical = [name for name in attributes if name not in numeric_set]
    encoding = encode(frame, categorical) if categorical else None
    result = []
    for name in attributes:
        if name in numeric_set:
            column = frame.get_column(name)
            if column.dtype.is_temporal():
                column = column.to_physical()
            try:
                numbers = column.cast(pl.Float64).to_numpy()
            except pl.exceptions.PolarsError:
                raise ConfigError(
                    f"attribute '{name}' is to be discretized as numeric but holds non-numeric values"
                ) from None
            missing = np.isnan(numbers)
            bins = np.full(numbers.shape, n_bins, dtype=np.int64)
            if (~missing).any():
                bins[~missing] = discretize(numbers[~missing], n_bins)
            result.append(_dense(bins))
        else:
            assert encoding is not None
            result.append(_dense(encoding.codes[encoding.index(name)]))
    return result


def _phi2(a: np.ndarray, size_a: int, b: np.ndarray, size_b: int) -> float:
    """phi^2 of two dense code arrays (SPEC §1.2): chi^2 / (n (min(d1, d2) - 1)), 0 for a constant."""
    if min(size_a, size_b) <= 1:
        return 0.0
    rows = np.bincount(a, minlength=size_a).astype(np.float64)
    cols = np.bincount(b, minlength=size_b).astype(np.float64)
    pair = a * size_b + b
    if size_a * size_b <= _DENSE_CELLS:
        counts = np.bincount(pair, minlength=size_a * size_b).astype(np.float64)
        cells = np.flatnonzero(counts)
        counts = counts[cells]
    else:
        cells, occurring = np.unique(pair, return_counts=True)
        counts = occurring.astype(np.float64)
    # sum_ij (f_ij - f_i f_j)^2 / (f_i f_j) = sum over occurring cells of n_ij^2 / (r_i c_j) - 1
    chi = float(np.sum(counts * counts / (rows[cells // size_b] * cols[cells % size_b]))) - 1.0
    return min(max(chi / (min(size_a, size_b) - 1), 0.0), 1.0)


def attribute_correlation(
    frame: pl.DataFrame,
    attributes: Sequence[str],
    *,
    method: str = "phi2",
    n_bins: int = 10,
    numeric: Sequence[str] | None = None,
) -> np.ndarray:
    """The (A x A) correlation matrix of ``attributes``, symmetric, in [0, 1].

    ``method="phi2"``: the normalized mean-square contingency phi^2 of every pair (SPEC §1.2; equal to
    Cramér's V^2; 0 when either attribute is constant), from one contingency table per pair counted
    with ``bincount`` on integer codes. ``method="pearson"``: the absolute Pearson correlation of the
    codes (the improved-slicing paper names Pearson's coefficient): sorted-value codes for categorical
    attributes, bin numbers for numeric ones; 0 when either is constant. The diagonal is 1.

    Numeric attributes (``numeric``; default: the columns of numeric or temporal type) are discretized
    into ``n_bins`` equal-width bins first (SPEC §1.3). Missing values are a category of their own.
    """
    if method not in CORRELATIONS:
        raise ConfigError(f"correlation must be one of {', '.join(CORRELATIONS)}, got {method!r}")
    if not isinstance(n_bins, int) or isinstance(n_bins, bool) or n_bins < 1:
        raise ConfigError(f"n_bins must be a whole number of at least 1, got {n_bins!r}")
    attributes = list(attributes)
    unknown = [name for name in attributes if name not in frame.columns]
    if unknown:
        raise ConfigError(
            f"unknown attribute(s) {', '.join(repr(u) for u in unknown)} "
            f"(columns: {', '.join(frame.columns)})"
        )
    if numeric is None:
        numeric = [
            name
            for name in attributes
            if frame.schema[name].is_numeric()
            and frame.schema[name] != pl.Boolean
            or frame.schema[name].is_temporal()
        ]
    else:
        strange = [name for name in numeric if name not in attributes]
        if strange:
            raise ConfigError(
                f"numeric names attribute(s) {', '.join(repr(s) for s in strange)} not among the attributes"
            )
    coded = _correlation_codes(frame, attributes, n_bins, numeric)
    size = len(attributes)
    matrix = np.eye(size, dtype=np.float64)
    if method == "phi2":
        for i in range(size):
            for j in range(i + 1, size):
                value = _phi2(coded[i][0], coded[i][1], coded[j][0], coded[j][1])
                matrix[i, j] = matrix[j, i] = value
        return matrix
    if frame.height < 2 or size < 2:
        return matrix
    values = np.column_stack([codes for codes, _ in coded]).astype(np.float64)
    centred = values - values.mean(axis=0)
    norms = np.sqrt((centred * centred).sum(axis=0))
    with np.errstate(invalid="ignore", divide="ignore"):
        pearson = (centred.T @ centred) / np.outer(norms, norms)
    pearson = np.nan_to_num(np.abs(pearson), nan=0.0)
    constant = norms == 0
    pearson[constant, :] = 0.0
    pearson[:, constant] = 0.0
    np.fill_diagonal(pearson, 1.0)
    return np.clip(pearson, 0.0, 1.0)


# Attribute partition ------------------------------------------------------------------------------


@dataclass(frozen=True)
class MedoidClustering:
    """The result of :func:`k_medoids`: medoid indices (ascending), each object's cluster (index into
    ``medoids``), the total cost (sum of distances to the nearest medoid) and the swaps applied."""

    medoids: tuple[int, ...]
    labels: np.ndarray
    cost: float
    swaps: int


def _cost(distance: np.ndarray, medoids: Sequence[int]) -> float:
    return float(distance[:, list(medoids)].min(axis=1).sum())


def k_medoids(distance: np.ndarray, k: int, *, seed: int | None = None) -> MedoidClustering:
    """PAM k-medoids (Kaufman & Rousseeuw, 1990) on a symmetric distance matrix, as SPEC §1.4.

    Start: with ``seed=None`` the deterministic BUILD (first medoid minimizes the sum of distances,
    then greedily the object of largest gain); otherwise ``k`` medoids drawn at random with
    ``numpy.random.default_rng(seed)`` (the slicing paper starts from an arbitrary selection). SWAP:
    apply the (medoid, non-medoid) exchange that lowers the cost most, while one lowers it by more
    than 1e-12. Ties go to the earliest object; each object joins its nearest medoid (ties: the
    earliest medoid), a medoid always its own cluster.
    """
    distance = np.asarray(distance, dtype=np.float64)
    size = len(distance)
    if not 1 <= k <= size:
        raise ConfigError(f"the number of clusters must be between 1 and {size}, got {k}")
    if seed is None:
        totals = distance.sum(axis=1)
        medoids = [int(np.argmin(totals))]
        while len(medoids) < k:
            nearest = distance[:, medoids].min(axis=1)
            gains = np.maximum(nearest[:, None] - distance, 0.0).sum(axis=0)
            gains[medoids] = -np.inf
            medoids.append(int(np.argmax(gains)))
    else:
        rng = np.random.default_rng(seed)
        medoids = [int(m) for m in rng.choice(size, size=k, replace=False)]
    medoids.sort()
    cost = _cost(distance, medoids)
    swaps = 0
    while True:
        best_cost, best = cost, None
        for position in range(k):
            for candidate in range(size):
                if candidate in medoids:
                    continue
                trial = medoids.copy()
                trial[position] = candidate
                trial_cost = _cost(distance, trial)
                if trial_cost < best_cost - _TOLERANCE:
                    best_cost, best = trial_cost, trial
        if best is None:
            break
        medoids = sorted(best)
        cost = best_cost
        swaps += 1
    labels = np.argmin(distance[:, medoids], axis=1)
    for index, medoid in enumerate(medoids):
        labels[medoid] = index
    return MedoidClustering(medoids=tuple(medoids), labels=labels, cost=cost, swaps=swaps)


def _clusters(names: Sequence[str], labels: np.ndarray, k: int) -> list[tuple[str, ...]]:
    groups = [tuple(name for name, label in zip(names, labels, strict=True) if label == c) for c in range(k)]
    groups = [group for group in groups if group]
    order = {name: i for i, name in enumerate(names)}
    return sorted(groups, key=lambda group: order[group[0]])


def default_n_columns(n_attributes: int) -> int:
    """SPEC §1.4's library default: 2 columns for up to 4 attributes, else ceil(attributes / 3)."""
    return 2 if n_attributes <= 4 else math.ceil(n_attributes / 3)


def partition_attributes(
    correlation: np.ndarray,
    names: Sequence[str],
    n_columns: int,
    *,
    sensitive: str,
    sensitive_column_size: int | None = None,
    seed: int | None = None,
) -> list[tuple[str, ...]]:
    """Columns of a slicing (SPEC §1.4): PAM k-medoids with ``k = n_columns`` on ``D = 1 - correlation``.

    Returns the columns as tuples of attribute names (each in ``names`` order), ordered by their first
    attribute, the column holding ``sensitive`` moved last. ``seed=None`` starts PAM from BUILD
    (deterministic); a seed starts it from a random selection of medoids (see :func:`k_medoids`).

    With ``sensitive_column_size`` alpha the sensitive column is ``sensitive`` plus the alpha - 1
    attributes most correlated with it (ties: earliest), and the other attributes are clustered into
    ``n_columns - 1`` columns. Raises :class:`ConfigError` when ``n_columns`` is out of range.
    """
    names = list(names)
    correlation = np.asarray(correlation, dtype=np.float64)
    size = len(names)
    if correlation.shape != (size, size):
        raise ConfigError(f"correlation must be a {size} x {size} matrix, got shape {correlation.shape}")
    if sensitive not in names:
        raise ConfigError(
            f"sensitive attribute '{sensitive}' is not among the attributes ({', '.join(names)})"
        )
    distance = 1.0 - correlation
    np.fill_diagonal(distance, 0.0)
    if sensitive_column_size is None:
        if not isinstance(n_columns, int) or not 2 <= n_columns <= size:
            raise ConfigError(
                f"n_columns must be between 2 and the number of attributes ({size}), got {n_columns}"
            )
        clustering = k_medoids(distance, n_columns, seed=seed)
        columns = _clusters(names, clustering.labels, n_columns)
    else:
        alpha = sensitive_column_size
        if not isinstance(alpha, int) or isinstance(alpha, bool):
            raise ConfigError(f"sensitive_column_size must be a whole number, got {alpha!r}")
        sensitive_column, rest = _sensitive_column(correlation, names, sensitive, alpha)
        if not rest:
            raise ConfigError(f"sensitive_column_size {alpha} leaves no attribute for the other columns")
        if not isinstance(n_columns, int) or not 2 <= n_columns <= len(rest) + 1:
            raise ConfigError(
                f"n_columns must be between 2 and {len(rest) + 1} with sensitive_column_size {alpha}, "
                f"got {n_columns}"
            )
        clustering = k_medoids(distance[np.ix_(rest, rest)], n_columns - 1, seed=seed)
        columns = _clusters([names[i] for i in rest], clustering.labels, n_columns - 1)
        columns.append(sensitive_column)
    return _sensitive_last(columns, sensitive)


def _sensitive_last(columns: Sequence[Sequence[str]], sensitive: str) -> list[tuple[str, ...]]:
    plain = [tuple(column) for column in columns if sensitive not in column]
    holding = [tuple(column) for column in columns if sensitive in column]
    return plain + holding


def column_correlation(
    correlation: np.ndarray, names: Sequence[str], columns: Sequence[Sequence[str]]
) -> tuple[float, float]:
    """The average correlation of the attributes released together (the improved-slicing paper's
    utility measure), in two variants.

    * column mean: for every column with at least 2 attributes, the mean of ``correlation[a, b]``
      over its unordered pairs of distinct attributes; then the mean over those columns;
    * pair-weighted: the mean of ``correlation[a, b]`` over all within-column pairs of all columns
      pooled (a column with more pairs weighs more).

    Both are NaN when no column has 2 attributes.
    """
    index = {name: i for i, name in enumerate(names)}
    means, pooled = [], []
    for column in columns:
        members = [index[name] for name in column]
        pairs = [correlation[a, b] for x, a in enumerate(members) for b in members[x + 1 :]]
        if pairs:
            means.append(float(np.mean(pairs)))
            pooled.extend(pairs)
    if not means:
        return math.nan, math.nan
    return float(np.mean(means)), float(np.mean(pooled))


def _sensitive_column(
    correlation: np.ndarray, names: Sequence[str], sensitive: str, size: int
) -> tuple[tuple[str, ...], list[int]]:
    """SPEC §1.4's alpha rule: ``sensitive`` plus the ``size - 1`` attributes most correlated with it
    (ties: earliest), in ``names`` order; and the indices of the other attributes."""
    if not 1 <= size <= len(names):
        raise ConfigError(f"sensitive_column_size must be between 1 and {len(names)}, got {size!r}")
    s = list(names).index(sensitive)
    others = [i for i in range(len(names)) if i != s]
    ranked = sorted(others, key=lambda i: (-correlation[s, i], i))
    chosen = set(ranked[: size - 1]) | {s}
    return tuple(names[i] for i in sorted(chosen)), [i for i in range(len(names)) if i not in chosen]


def overlapping_columns(
    matrix: np.ndarray,
    attributes: list[str],
    sensitive: str,
    n_columns: int | None,
    sensitive_column_size: int | None,
    beta: int,
    max_labels: int,
    function: str,
    n_restarts: int,
    seed: int,
) -> list[tuple[str, ...]]:
    from sdckit.anonymize._overlapping_clustering import occ_columns

    if sensitive_column_size is None:
        n_labels = max(beta, n_columns if n_columns is not None else default_n_columns(len(attributes)))
        found = occ_columns(
            matrix,
            attributes,
            n_labels=n_labels,
            beta=beta,
            max_labels=max_labels,
            sensitive=sensitive,
            function=function,
            n_restarts=n_restarts,
            seed=seed,
        )
        return _sensitive_last([tuple(column) for column in found], sensitive)
    # Library extension of SPEC §2.6: the alpha rule of §1.4 fixes the sensitive column, and the other
    # attributes are clustered with overlap into the remaining columns.
    sensitive_column, rest = _sensitive_column(matrix, attributes, sensitive, sensitive_column_size)
    if not rest:
        raise ConfigError(
            f"sensitive_column_size {sensitive_column_size} leaves no attribute for the other columns"
        )
    if beta > len(rest):
        raise ConfigError(
            f"beta {beta} is larger than the number of attributes outside the sensitive column ({len(rest)})"
        )
    wanted = n_columns - 1 if n_columns is not None else default_n_columns(len(attributes)) - 1
    found = occ_columns(
        matrix[np.ix_(rest, rest)],
        [attributes[i] for i in rest],
        n_labels=max(beta, wanted),
        beta=beta,
        max_labels=max_labels,
        sensitive=None,
        function=function,
        n_restarts=n_restarts,
        seed=seed,
    )
    return [tuple(column) for column in found] + [sensitive_column]


def explicit_columns(
    columns: Sequence[Sequence[str]],
    attributes: Sequence[str],
    identifiers: Sequence[str],
    sensitive: str,
    method: str,
) -> list[tuple[str, ...]]:
    if isinstance(columns, str) or not all(
        not isinstance(column, str) and all(isinstance(name, str) for name in column) for column in columns
    ):
        raise ConfigError("columns must be a list of lists of attribute names")
    columns = [tuple(column) for column in columns]
    if any(not column for column in columns):
        raise ConfigError("columns: every column needs at least one attribute")
    named = [name for column in columns for name in column]
    unknown = sorted({name for name in named if name not in attributes and name not in identifiers})
    if unknown:
        raise ConfigError(
            f"columns: unknown attribute(s) {', '.join(repr(u) for u in unknown)} "
            f"(attributes: {', '.join(attributes)})"
        )
    hidden = sorted({name for name in named if name in identifiers})
    if hidden:
        raise ConfigError(
            f"columns: attribute(s) {', '.join(repr(h) for h in hidden)} have role identifier "
            "and are never released"
        )
    for column in columns:
        repeated = sorted({name for name in column if column.count(name) > 1})
        if repeated:
            raise ConfigError(f"columns: attribute '{repeated[0]}' appears twice in one column")
    holders = sum(sensitive in column for column in columns)
    if holders != 1:
        raise ConfigError(
            f"columns: the sensitive attribute '{sensitive}' must be in exactly one column, "
            f"found in {holders}"
        )
    if len(columns) < 2:
        raise ConfigError(f"columns: slicing needs at least 2 columns, got {len(columns)}")
    if method == "slicing":
        repeated = sorted({name for name in named if named.count(name) > 1})
        if repeated:
            raise ConfigError(
                f"columns: attribute(s) {', '.join(repr(r) for r in repeated)} appear in several columns; "
                "only method 'overlapping-slicing' allows that"
            )
    else:
        sets = [frozenset(column) for column in columns]
        if len(set(sets)) != len(sets):
            raise ConfigError("columns: two columns hold the same attributes")
    return _sensitive_last(columns, sensitive)
