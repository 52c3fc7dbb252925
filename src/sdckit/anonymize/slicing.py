"""Slicing (Li, Li, Zhang & Molloy, 2012) and overlapping, "improved" slicing (Dhaigude & Kumar, 2014).

Slicing publishes microdata without generalizing any value. The attributes are grouped into
*columns* of highly correlated attributes (attribute partition: PAM k-medoids on ``1 - phi^2``), the
records into *buckets* (tuple partition: Mondrian-like median splits, or random halving along the
sensitive values), and inside every bucket the values of each column are randomly permuted
independently of the other columns, which breaks the links between uncorrelated attributes. A split
of a bucket is accepted only when the sliced table stays l-diverse in the slicing sense: for every
record t, the adversary's probability ``p(t, s)`` of each sensitive value s, averaged over the buckets
t may fall into, is at most ``1/l`` (SPEC §1.7, implemented in :mod:`sdckit.models.sliced`).

Overlapping slicing lets an attribute sit in several columns (overlapping correlation clustering of
Bonchi, Gionis & Ukkonen, 2011, on the same correlations; :mod:`sdckit.anonymize._overlapping_clustering`)
and replaces the Mondrian split with random halving of every sensitive-value group
(:mod:`sdckit.anonymize._tuple_partition`).

Published layout
----------------
:attr:`SlicedRelease.table` has one row per record and the columns

* ``bucket``: the bucket number ``0 .. m-1`` (index into :attr:`SlicedRelease.buckets`); rows are
  grouped by bucket (in bucket order; inside a bucket the rows carry no meaning);
* then, column after column (the sensitive column last), the attributes of each column with their
  original values (not discretized, missing values stay missing). Values of one column in one row
  come from one record; values of different columns in one row come, in general, from different
  records of the same bucket.

An attribute that appears in several columns (overlapping slicing only) is published once per
column, named ``attribute@i`` with ``i`` the 1-based number of the column (``occupation@2`` is the
occupation as permuted with the second column); an attribute in a single column keeps its plain name,
so plain slicing uses the plain names. If an attribute is itself called ``bucket`` the bucket column
is called ``_bucket`` (underscores are added until the name is free).

Policies: quasi-identifier values that are missing are a category of their own (in the correlation,
the tuple keys of the diversity check and the membership evaluation); a missing sensitive value is
rejected with :class:`ConfigError` (drop or fill those records first), since ``p(t, s)`` needs a
value for every record. Identifiers are never published.

References
----------
Li, T., Li, N., Zhang, J. & Molloy, I. (2012). Slicing: a new approach for privacy preserving data
publishing. IEEE Transactions on Knowledge and Data Engineering, 24(3), 561-574.
Dhaigude, A. A. & Kumar, P. (2014). Improved slicing algorithm for greater utility in privacy
preserving data publishing.
Bonchi, F., Gionis, A. & Ukkonen, A. (2011). Overlapping correlation clustering. ICDM 2011, 51-60.
Kaufman, L. & Rousseeuw, P. J. (1990). Partitioning around medoids (program PAM). In Finding Groups
in Data, 68-125.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

import numpy as np
import polars as pl
from pydantic import BeforeValidator, ConfigDict, Field

from sdckit.anonymize.base import Context, register_method
from sdckit.context import ProgressCallback
from sdckit.errors import ConfigError, SdcWarning
from sdckit.frequency import encode, group_keys
from sdckit.params import Finite, MethodParams, Whole
from sdckit.table import Kind, Role, Table

METHODS = ("slicing", "overlapping-slicing")
PARTITIONS = ("mondrian", "random-halving")
CORRELATIONS = ("phi2", "pearson")
BUCKET_WEIGHTINGS = ("none", "size")
MEDOID_STARTS = ("random", "build")
OCC_FUNCTIONS = ("jaccard", "intersection")

# Matching-bucket histogram bins of the membership evaluation (SPEC §1.9): {1}, {2-5}, {6-10}, {11-20}, {>20}.
MATCHING_BINS = ("1", "2-5", "6-10", "11-20", ">20")
_BIN_EDGES = np.array([1, 2, 6, 11, 21])

_TOLERANCE = 1e-12
# Contingency tables up to this many cells are counted densely (bincount), larger ones sparsely.
_DENSE_CELLS = 1 << 22
# Bucket bitsets of the membership evaluation are combined in chunks of about this many words.
_CHUNK_WORDS = 1 << 22


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
        cells, counts = np.unique(pair, return_counts=True)
        counts = counts.astype(np.float64)
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


# Output -------------------------------------------------------------------------------------------


def published_names(columns: Sequence[Sequence[str]]) -> list[list[str]]:
    """The published name of every attribute of every column: ``attribute@i`` (1-based column number)
    for an attribute in several columns, the plain name otherwise."""
    occurrences: dict[str, int] = {}
    for column in columns:
        for name in column:
            occurrences[name] = occurrences.get(name, 0) + 1
    return [
        [f"{name}@{i + 1}" if occurrences[name] > 1 else name for name in column]
        for i, column in enumerate(columns)
    ]


def _bucket_column_name(taken: set[str]) -> str:
    name = "bucket"
    while name in taken:
        name = "_" + name
    return name


def _bucket_of(buckets: Sequence[np.ndarray], n: int) -> np.ndarray:
    bucket_of = np.full(n, -1, dtype=np.int64)
    for index, rows in enumerate(buckets):
        rows = np.asarray(rows, dtype=np.int64)
        if len(rows) and (rows.min() < 0 or rows.max() >= n):
            raise ConfigError(f"bucket {index} holds a record number outside 0 .. {n - 1}")
        if (bucket_of[rows] != -1).any() or len(np.unique(rows)) != len(rows):
            raise ConfigError(f"bucket {index} shares records with another bucket")
        bucket_of[rows] = index
    if (bucket_of < 0).any():
        raise ConfigError(f"{int((bucket_of < 0).sum())} record(s) are in no bucket")
    return bucket_of


def publish(
    frame: pl.DataFrame,
    columns: Sequence[Sequence[str]],
    bucket_of: np.ndarray,
    rng: np.random.Generator,
) -> pl.DataFrame:
    """The sliced table (SPEC §1.8; layout in the module docstring): rows grouped by bucket, and for
    every column an independent uniform random permutation of its values inside every bucket.

    Vectorized: column i's row order is ``lexsort((uniform keys, bucket))``, i.e. every bucket's rows
    sorted by fresh uniform random keys, which is a uniform permutation within each bucket.
    """
    n = len(bucket_of)
    order = np.argsort(bucket_of, kind="stable")
    names = published_names(columns)
    taken = {name for column in names for name in column}
    parts = [pl.DataFrame({_bucket_column_name(taken): bucket_of[order]})]
    for column, column_names in zip(columns, names, strict=True):
        permutation = np.lexsort((rng.random(n), bucket_of))
        part = frame.select(list(column))[permutation]
        parts.append(part.rename(dict(zip(column, column_names, strict=True))))
    return pl.concat(parts, how="horizontal")


# Membership evaluation ----------------------------------------------------------------------------


def _histogram(counts: np.ndarray) -> list[int]:
    bins = np.searchsorted(_BIN_EDGES, counts, side="right") - 1
    return np.bincount(bins[bins >= 0], minlength=len(_BIN_EDGES)).astype(int).tolist()


def membership_report(
    frame: pl.DataFrame,
    columns: Sequence[Sequence[str]],
    buckets: Sequence[np.ndarray],
    sensitive: str,
    *,
    max_generated: int = 1_000_000,
    seed: int | None = 0,
) -> dict[str, Any]:
    """Membership-disclosure evaluation of a sliced table (SPEC §1.9).

    The QI attributes are those of the columns except ``sensitive``. The *generated* tuples of a
    bucket are the combinations of one distinct projection of the bucket per column (for the
    sensitive column its QI part; a column holding only ``sensitive`` contributes nothing), merged
    into full QI tuples; with overlapping columns only the combinations whose shared attributes agree
    are tuples. A *fake* tuple is a generated tuple that is not the QI projection of any record. A
    bucket *matches* a QI tuple when every column's projection of the tuple occurs in the bucket.

    Returns a dict: ``qi_attributes``; ``original`` (distinct original QI tuples); ``combinations``
    (sum over buckets of the product of the distinct-projection counts); ``generated`` (distinct
    generated tuples); ``fake``; ``fake_ratio`` (fake / original); ``bins`` and the matching-bucket
    histograms ``original_matching`` and ``fake_matching`` (counts of distinct tuples per bin);
    ``total_variation`` between the two normalized histograms (None without fakes); ``sampled``.

    When ``combinations`` exceeds ``max_generated``, ``max_generated`` combinations are drawn
    uniformly at random (with replacement; bucket in proportion to its product, then each column's
    projection uniformly) with ``numpy.random.default_rng(seed)``: ``sampled`` is then True,
    ``generated`` and ``fake`` count the distinct tuples of the sample (lower bounds), the fake
    histogram describes the sampled fakes, ``fake_share`` is the share of sampled valid combinations
    that are fake and ``fake_estimate = fake_share * valid combinations`` (an estimate of the number of
    fake combinations, which may count a tuple generated by several buckets more than once); ``note``
    says so.
    """
    if not isinstance(max_generated, int) or max_generated < 1:
        raise ConfigError(f"max_generated must be a whole number of at least 1, got {max_generated!r}")
    columns = [tuple(column) for column in columns]
    n = frame.height
    bucket_of = _bucket_of(buckets, n)
    m = len(buckets)
    parts = [tuple(name for name in column if name != sensitive) for column in columns]
    parts = [part for part in parts if part]
    qi_attributes: list[str] = []
    for part in parts:
        qi_attributes.extend(name for name in part if name not in qi_attributes)
    unknown = [name for name in [*qi_attributes, sensitive] if name not in frame.columns]
    if unknown:
        raise ConfigError(f"unknown attribute(s) {', '.join(repr(u) for u in unknown)}")
    report: dict[str, Any] = {"qi_attributes": qi_attributes, "bins": list(MATCHING_BINS), "sampled": False}
    if not parts or n == 0:
        report.update(
            original=1 if n else 0,
            combinations=m,
            generated=1 if n else 0,
            fake=0,
            fake_ratio=0.0,
            original_matching=_histogram(np.full(1 if n else 0, m)),
            fake_matching=[0] * len(MATCHING_BINS),
            total_variation=None,
        )
        return report
    encoding = encode(frame, qi_attributes)
    keys = []
    for part in parts:
        part_keys, _ = group_keys(encoding, part)
        keys.append(part_keys.astype(np.int64))
    n_keys = [int(k.max()) + 1 for k in keys]
    c = len(parts)
    words = (m + 63) // 64

    # Distinct projections of every bucket per column, as sorted (bucket, key) runs, and a bitset of
    # the buckets holding each key.
    lists, starts, sizes, bitsets = [], [], [], []
    for i in range(c):
        pairs = np.unique(bucket_of * n_keys[i] + keys[i])
        pair_bucket, pair_key = pairs // n_keys[i], pairs % n_keys[i]
        count = np.bincount(pair_bucket, minlength=m)
        lists.append(pair_key)
        sizes.append(count)
        starts.append(np.concatenate(([0], np.cumsum(count)[:-1])))
        bits = np.zeros((n_keys[i], words), dtype=np.uint64)
        np.bitwise_or.at(
            bits,
            (pair_key, pair_bucket // 64),
            np.left_shift(np.uint64(1), (pair_bucket % 64).astype(np.uint64)),
        )
        bitsets.append(bits)

    def matching(tuples: np.ndarray) -> np.ndarray:
        result = np.zeros(len(tuples), dtype=np.int64)
        step = max(1, _CHUNK_WORDS // max(words, 1))
        for begin in range(0, len(tuples), step):
            chunk = tuples[begin : begin + step]
            acc = bitsets[0][chunk[:, 0]].copy()
            for i in range(1, c):
                acc &= bitsets[i][chunk[:, i]]
            result[begin : begin + step] = np.bitwise_count(acc).sum(axis=1)
        return result

    # Overlapping columns: the codes of each shared attribute under every key of every column.
    shared = []
    for name in qi_attributes:
        holders = [i for i, part in enumerate(parts) if name in part]
        if len(holders) > 1:
            codes = encoding.codes[encoding.index(name)]
            per_holder = []
            for i in holders:
                code_of_key = np.empty(n_keys[i], dtype=np.int64)
                code_of_key[keys[i]] = codes
                per_holder.append((i, code_of_key))
            shared.append(per_holder)

    products = np.ones(m, dtype=np.float64)
    for i in range(c):
        products *= sizes[i]
    combinations = float(products.sum())
    sampled = combinations > max_generated
    if sampled:
        rng = np.random.default_rng(seed)
        chosen = rng.choice(m, size=max_generated, p=products / combinations)
        digits = [np.floor(rng.random(max_generated) * sizes[i][chosen]).astype(np.int64) for i in range(c)]
        digits = [np.minimum(d, sizes[i][chosen] - 1) for i, d in enumerate(digits)]
    else:
        exact = np.ones(m, dtype=np.int64)
        for i in range(c):
            exact *= sizes[i]
        total = int(exact.sum())
        chosen = np.repeat(np.arange(m), exact)
        local = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(exact) - exact, exact)
        digits = [np.empty(0)] * c
        for i in reversed(range(c)):
            radix = sizes[i][chosen]
            digits[i] = local % radix
            local //= radix
    generated = np.column_stack([lists[i][starts[i][chosen] + digits[i]] for i in range(c)])
    valid = np.ones(len(generated), dtype=bool)
    for per_holder in shared:
        first, first_codes = per_holder[0]
        for i, code_of_key in per_holder[1:]:
            valid &= first_codes[generated[:, first]] == code_of_key[generated[:, i]]
    generated = generated[valid]

    names = [f"k{i}" for i in range(c)]
    original = pl.DataFrame(np.column_stack(keys), schema=names, orient="row").unique()
    distinct = pl.DataFrame(generated, schema=names, orient="row").unique()
    fakes = distinct.join(original, on=names, how="anti")
    original_matching = matching(original.to_numpy())
    fake_matching = matching(fakes.to_numpy()) if fakes.height else np.zeros(0, dtype=np.int64)
    original_histogram = _histogram(original_matching)
    fake_histogram = _histogram(fake_matching)
    total_variation = None
    if fakes.height:
        total_variation = 0.5 * float(
            np.abs(
                np.array(original_histogram) / original.height - np.array(fake_histogram) / fakes.height
            ).sum()
        )
    report.update(
        original=original.height,
        combinations=int(combinations) if not sampled else combinations,
        generated=distinct.height,
        fake=fakes.height,
        fake_ratio=fakes.height / original.height,
        original_matching=original_histogram,
        fake_matching=fake_histogram,
        total_variation=total_variation,
    )
    if sampled:
        share = _fake_share(generated, original, names)
        report.update(
            sampled=True,
            sample_size=max_generated,
            valid_in_sample=int(valid.sum()),
            fake_share=share,
            fake_estimate=share * combinations * (float(valid.mean()) if len(valid) else 0.0),
            note=(
                f"{combinations:.4g} combinations exceed max_generated={max_generated}: "
                f"{max_generated} were sampled with seed {seed}; 'generated' and 'fake' count the distinct "
                "tuples of the sample (lower bounds), 'fake_estimate' estimates the fake combinations"
            ),
        )
    return report


def _fake_share(generated: np.ndarray, original: pl.DataFrame, names: list[str]) -> float:
    if not len(generated):
        return 0.0
    sample = pl.DataFrame(generated, schema=names, orient="row").with_row_index("row")
    known = sample.join(original, on=names, how="semi").height
    return 1.0 - known / sample.height


# The pipeline -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SlicedRelease:
    """A sliced table and how it was made.

    ``columns``: the columns (attribute names; the sensitive column last); ``bucket_of``: each
    record's bucket; ``buckets``: the records of each bucket; ``table``: the published sliced table
    (layout in the module docstring); ``l``: the l the partition was checked for, ``max_probability``
    the largest ``p(t, s)`` over records and sensitive values of the final partition and
    ``l_achieved = 1 / max_probability`` the largest l it satisfies; ``timings`` the seconds spent on
    ``correlation``, ``attributes`` (column construction), ``tuples`` (tuple partition), ``output``
    (permutation) and ``membership``.

    ``average_correlation``: for every column with at least 2 attributes, the mean correlation
    (``correlation`` method of the run, phi^2 by default) over its unordered pairs of distinct
    attributes, averaged over those columns (NaN if there is none); ``pair_weighted_correlation``:
    the mean over all within-column pairs pooled (see :func:`column_correlation`).
    """

    columns: tuple[tuple[str, ...], ...]
    bucket_of: np.ndarray
    buckets: list[np.ndarray]
    table: pl.DataFrame
    sensitive: str
    l: float  # noqa: E741
    method: str
    partition: str
    seed: int | None
    timings: dict[str, float]
    average_correlation: float
    pair_weighted_correlation: float
    membership: dict[str, Any] | None
    parameters: dict[str, Any] = field(default_factory=dict)
    max_probability: float = math.nan
    correlation: np.ndarray | None = None
    attributes: tuple[str, ...] = ()
    params: Any = None

    @property
    def n_buckets(self) -> int:
        return len(self.buckets)

    @property
    def smallest_bucket(self) -> int:
        return int(min((len(b) for b in self.buckets), default=0))

    @property
    def l_achieved(self) -> float:
        return math.inf if self.max_probability <= 0 else 1.0 / self.max_probability


def _choice(value: Any, choices: Sequence[str], parameter: str) -> None:
    if value not in choices:
        raise ConfigError(f"{parameter} must be one of {', '.join(choices)}, got {value!r}")


def _whole(value: Any, parameter: str, minimum: int, allow_none: bool = False) -> None:
    if value is None and allow_none:
        return
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise ConfigError(f"{parameter} must be a whole number of at least {minimum}, got {value!r}")


def _explicit_columns(
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


def _resolve_sensitive(table: Table, sensitive: str | None) -> str:
    if sensitive is not None:
        if sensitive not in table.data.columns:
            raise ConfigError(
                f"sensitive attribute '{sensitive}' is not a column of the data "
                f"(columns: {', '.join(table.data.columns)})"
            )
        if sensitive in table.schema and table.schema[sensitive].role is Role.IDENTIFIER:
            raise ConfigError(f"sensitive attribute '{sensitive}' has role identifier")
        return sensitive
    candidates = [a.name for a in table.schema.with_role(Role.SENSITIVE)]
    if not candidates:
        raise ConfigError("no sensitive attribute: give one attribute role sensitive, or pass sensitive=")
    if len(candidates) > 1:
        raise ConfigError(
            f"several attributes have role sensitive ({', '.join(candidates)}); slicing handles one: "
            "pass sensitive="
        )
    return candidates[0]


def slice_table(
    table: Table,
    *,
    sensitive: str | None = None,
    method: str = "slicing",
    n_columns: int | None = None,
    columns: Sequence[Sequence[str]] | None = None,
    sensitive_column_size: int | None = None,
    l: float = 2.0,  # noqa: E741
    n_bins: int = 10,
    correlation: str = "phi2",
    bucket_weighting: str = "none",
    partition: str | None = None,
    min_bucket_size: int | None = None,
    beta: int = 2,
    max_labels: int = 2,
    n_restarts: int = 10,
    occ_function: str = "jaccard",
    medoid_start: str = "random",
    seed: int = 0,
    membership: bool = True,
    max_generated: int = 1_000_000,
    progress: ProgressCallback | None = None,
) -> SlicedRelease:
    """Slice ``table`` (Li et al., 2012) or slice it with overlapping columns (Dhaigude & Kumar, 2014).

    Every non-identifier attribute is sliced (or only those named in ``columns``). Steps:

    1. correlation (:func:`attribute_correlation`, ``correlation`` = ``"phi2"`` or ``"pearson"``,
       numeric attributes discretized into ``n_bins`` equal-width bins);
    2. columns: ``columns`` if given; else ``method="slicing"``: PAM k-medoids into ``n_columns``
       columns (default :func:`default_n_columns`), optionally with ``sensitive_column_size``
       (:func:`partition_attributes`); ``method="overlapping-slicing"``: overlapping correlation
       clustering with at least ``beta`` groups and at most ``max_labels`` columns per attribute
       (``occ_function`` ``"jaccard"`` or ``"intersection"``, ``n_restarts`` restarts), started with
       ``n_columns`` labels (default ``max(beta, default_n_columns(A))``, since with ``beta`` labels
       the beta rule forbids any overlap); empty labels are dropped and identical ones merged, so
       fewer columns may result;
    3. tuple partition under ``l``-diverse slicing (SPEC §1.7, ``bucket_weighting`` ``"none"`` or
       ``"size"``): ``partition="mondrian"`` (default for slicing) or ``"random-halving"`` (default
       for overlapping slicing); ``min_bucket_size`` rejects splits leaving smaller buckets;
    4. output: independent uniform permutations of every column inside every bucket (:func:`publish`);
    5. ``membership``: :func:`membership_report` (capped at ``max_generated`` combinations).

    Randomness: ``numpy.random.SeedSequence(seed)`` is spawned into independent streams for the
    columns (PAM start / OCC), the tuple partition (random halving), the output permutations and the
    membership sample, so every step is reproducible from ``seed``. ``medoid_start="random"`` starts
    PAM from medoids drawn from the seed (the paper's arbitrary start, so that runs with different
    seeds explore different columns); ``"build"`` uses SPEC's deterministic BUILD.

    The tuple keys of the diversity check come from the original values' integer codes: for every
    column the group key of its attributes, for the sensitive column the key of its attributes
    without the sensitive one; an attribute in several columns is part of each key.

    Raises :class:`ConfigError` (naming the parameter or attribute) for an unknown method, partition,
    correlation, bucket weighting or medoid start; a missing or unknown sensitive attribute; a
    missing sensitive value; ``l < 1`` or ``l`` above the number of distinct sensitive values;
    ``n_columns`` out of range; ``beta`` above the number of attributes; unknown or invalid
    ``columns``; and a table that is not l-diverse even as a single bucket (no partition can be).
    Warns (:class:`SdcWarning`) about buckets of a single record.
    """
    _choice(method, METHODS, "method")
    if partition is None:
        partition = "mondrian" if method == "slicing" else "random-halving"
    _choice(partition, PARTITIONS, "partition")
    _choice(correlation, CORRELATIONS, "correlation")
    _choice(bucket_weighting, BUCKET_WEIGHTINGS, "bucket_weighting")
    _choice(medoid_start, MEDOID_STARTS, "medoid_start")
    _choice(occ_function, OCC_FUNCTIONS, "occ_function")
    if isinstance(l, bool) or not isinstance(l, int | float) or not math.isfinite(l) or l < 1:
        raise ConfigError(f"l must be a number of at least 1, got {l!r}")
    _whole(n_bins, "n_bins", 1)
    _whole(min_bucket_size, "min_bucket_size", 1, allow_none=True)
    _whole(beta, "beta", 1)
    _whole(max_labels, "max_labels", 1)
    _whole(n_restarts, "n_restarts", 1)
    _whole(n_columns, "n_columns", 1, allow_none=True)
    _whole(sensitive_column_size, "sensitive_column_size", 1, allow_none=True)
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ConfigError(f"seed must be a non-negative whole number, got {seed!r}")
    if table.n_records == 0:
        raise ConfigError("the data has no records")

    sensitive = _resolve_sensitive(table, sensitive)
    identifiers = [a.name for a in table.schema.with_role(Role.IDENTIFIER)]
    all_attributes = [name for name in table.data.columns if name not in identifiers]
    if columns is not None:
        chosen = _explicit_columns(columns, all_attributes, identifiers, sensitive, method)
        if n_columns is not None and n_columns != len(chosen):
            raise ConfigError(f"n_columns {n_columns} disagrees with the {len(chosen)} columns given")
        named = {name for column in chosen for name in column}
        attributes = [name for name in all_attributes if name in named]
    else:
        chosen = None
        attributes = all_attributes
    if len(attributes) < 2:
        raise ConfigError(
            "slicing needs the sensitive attribute and at least one other attribute, "
            f"got {', '.join(attributes)}"
        )
    if method == "overlapping-slicing" and chosen is None:
        if beta > len(attributes):
            raise ConfigError(f"beta {beta} is larger than the number of attributes ({len(attributes)})")
        if n_columns is not None and not beta <= n_columns:
            raise ConfigError(f"n_columns {n_columns} is smaller than beta {beta}")

    frame = table.data
    sensitive_column = frame.get_column(sensitive)
    missing = sensitive_column.null_count()
    if not missing and sensitive_column.dtype.is_float():
        missing = int(sensitive_column.is_nan().sum())
    if missing:
        raise ConfigError(
            f"sensitive attribute '{sensitive}' is missing in {missing} record(s); slicing needs a sensitive "
            "value in every record (drop or fill those records first)"
        )
    encoding = encode(frame, attributes)
    sensitive_codes = encoding.codes[encoding.index(sensitive)].astype(np.int64)
    n_values = encoding.cardinalities[encoding.index(sensitive)]
    if l > n_values:
        raise ConfigError(
            f"l {l:g} is larger than the number of distinct values of '{sensitive}' ({n_values}); "
            "no sliced table can be l-diverse"
        )

    streams = np.random.SeedSequence(seed).spawn(4)
    attribute_seed = int(streams[0].generate_state(1)[0])
    timings: dict[str, float] = {}

    started = time.perf_counter()
    numeric = [
        name
        for name in attributes
        if (name in table.schema and table.schema[name].kind in (Kind.NUMERIC, Kind.DATE))
        and (frame.schema[name].is_numeric() or frame.schema[name].is_temporal())
    ]
    matrix = attribute_correlation(frame, attributes, method=correlation, n_bins=n_bins, numeric=numeric)
    timings["correlation"] = time.perf_counter() - started

    started = time.perf_counter()
    if chosen is not None:
        final_columns = chosen
    elif method == "slicing":
        count = n_columns if n_columns is not None else default_n_columns(len(attributes))
        if sensitive_column_size is not None and n_columns is None:
            count = max(2, min(count, len(attributes) - sensitive_column_size + 1))
        final_columns = partition_attributes(
            matrix,
            attributes,
            count,
            sensitive=sensitive,
            sensitive_column_size=sensitive_column_size,
            seed=attribute_seed if medoid_start == "random" else None,
        )
    else:
        final_columns = _overlapping_columns(
            matrix,
            attributes,
            sensitive,
            n_columns,
            sensitive_column_size,
            beta,
            max_labels,
            occ_function,
            n_restarts,
            attribute_seed,
        )
    timings["attributes"] = time.perf_counter() - started

    started = time.perf_counter()
    buckets, max_probability = _partition_tuples(
        table,
        encoding,
        final_columns,
        sensitive,
        sensitive_codes,
        n_values,
        l,
        bucket_weighting,
        partition,
        min_bucket_size,
        np.random.default_rng(streams[1]),
        progress,
    )
    timings["tuples"] = time.perf_counter() - started

    started = time.perf_counter()
    n = table.n_records
    bucket_of = _bucket_of(buckets, n)
    published = publish(frame, final_columns, bucket_of, np.random.default_rng(streams[2]))
    singles = sum(1 for rows in buckets if len(rows) == 1)
    if singles:
        warnings.warn(
            f"{singles} bucket(s) hold a single record: slicing gives them no protection",
            SdcWarning,
            stacklevel=2,
        )
    timings["output"] = time.perf_counter() - started

    started = time.perf_counter()
    report = None
    if membership:
        report = membership_report(
            frame,
            final_columns,
            buckets,
            sensitive,
            max_generated=max_generated,
            seed=int(streams[3].generate_state(1)[0]),
        )
    timings["membership"] = time.perf_counter() - started

    average, pair_weighted = column_correlation(matrix, attributes, final_columns)
    parameters = {
        "method": method,
        "sensitive": sensitive,
        "n_columns": len(final_columns),
        "columns_given": columns is not None,
        "sensitive_column_size": sensitive_column_size,
        "l": l,
        "n_bins": n_bins,
        "correlation": correlation,
        "bucket_weighting": bucket_weighting,
        "partition": partition,
        "min_bucket_size": min_bucket_size,
        "beta": beta if method == "overlapping-slicing" else None,
        "max_labels": max_labels if method == "overlapping-slicing" else None,
        "n_restarts": n_restarts if method == "overlapping-slicing" else None,
        "occ_function": occ_function if method == "overlapping-slicing" else None,
        "medoid_start": medoid_start if method == "slicing" else None,
        "seed": seed,
    }
    return SlicedRelease(
        columns=tuple(tuple(column) for column in final_columns),
        bucket_of=bucket_of,
        buckets=[np.asarray(rows, dtype=np.int64) for rows in buckets],
        table=published,
        sensitive=sensitive,
        l=float(l),
        method=method,
        partition=partition,
        seed=seed,
        timings=timings,
        average_correlation=average,
        pair_weighted_correlation=pair_weighted,
        membership=report,
        parameters=parameters,
        max_probability=max_probability,
        correlation=matrix,
        attributes=tuple(attributes),
    )


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


def _overlapping_columns(
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


#: Readings of tuple matching for the quasi-identifiers of the sensitive column (the slicing experiment's
#: study; releases always use "strict").
MATCHINGS = ("strict", "bucket", "none")


def diversity_keys(
    encoding: Any, columns: Sequence[Sequence[str]], sensitive: str, *, matching: str = "strict"
) -> tuple[list[np.ndarray], np.ndarray]:
    """The tuple keys of the diversity check: one dense key array per non-sensitive column (the
    record's projection on the column), and the key of the sensitive column without ``sensitive``
    (zeros when that column is the sensitive attribute alone). ``columns`` has the sensitive column last.

    ``matching`` is the reading of tuple matching for the quasi-identifiers Q = C_c - {S} of the
    sensitive column. ``"strict"`` (SPEC §1.7, Li et al.'s Definitions 3-4, the only reading a
    release uses): t[Q] must occur in B (f_c(t,B) is a factor of f(t,B)) and only the sensitive values
    of B's rows whose Q part equals t[Q] are candidates (D(t,B)). ``"bucket"``: t[Q] still weighs the
    bucket (f_c is a factor) but every sensitive value of B is a candidate (D(t,B) is B's sensitive
    distribution). ``"none"``: Q is ignored (f_c = 1, D(t,B) is B's distribution), as if the sensitive
    column were {S} alone. The three coincide when the sensitive column is {S} alone.
    """
    if matching not in MATCHINGS:
        raise ConfigError(f"matching must be one of {', '.join(MATCHINGS)}, got {matching!r}")
    column_keys = [group_keys(encoding, list(column))[0].astype(np.int64) for column in columns[:-1]]
    rest = [name for name in columns[-1] if name != sensitive]
    if rest:
        sensitive_qi_key = group_keys(encoding, rest)[0].astype(np.int64)
    else:
        sensitive_qi_key = np.zeros(encoding.n_records, dtype=np.int64)
    if matching == "strict":
        return column_keys, sensitive_qi_key
    # f(t,B) D(t,B)[s] = prod_i cnt_i/|B| * cnt_(q,s)/|B|: with q = 0 for every record the last factor
    # is B's share of s; "bucket" keeps t[Q]'s share as one more column factor.
    zeros = np.zeros(encoding.n_records, dtype=np.int64)
    if matching == "bucket":
        return [*column_keys, sensitive_qi_key], zeros
    return column_keys, zeros


def _split_codes(table: Table, encoding: Any, names: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Codes whose order is the value order (a missing value after every value), and which of the
    attributes are categorical (their width counts distinct values, SPEC §1.6)."""
    codes = np.empty((encoding.n_records, len(names)), dtype=np.int64)
    categorical = np.zeros(len(names), dtype=bool)
    for j, name in enumerate(names):
        index = encoding.index(name)
        column = encoding.codes[index].astype(np.int64)
        codes[:, j] = np.where(column < 0, encoding.cardinalities[index], column)
        kind = table.schema[name].kind if name in table.schema else Kind.CATEGORICAL
        categorical[j] = kind in (Kind.CATEGORICAL, Kind.SET_VALUED)
    return codes, categorical


def _partition_tuples(
    table: Table,
    encoding: Any,
    columns: Sequence[Sequence[str]],
    sensitive: str,
    sensitive_codes: np.ndarray,
    n_values: int,
    l: float,  # noqa: E741
    bucket_weighting: str,
    partition: str,
    min_bucket_size: int | None,
    rng: np.random.Generator,
    progress: ProgressCallback | None,
    matching: str = "strict",
) -> tuple[list[np.ndarray], float]:
    """The tuple partition under l-diverse slicing, checked with the tuple matching ``matching`` (see
    :func:`diversity_keys`; releases always use ``"strict"``); the buckets and the largest p(t, s)."""
    from sdckit.anonymize._tuple_partition import mondrian_tuple_partition, random_halving_partition
    from sdckit.models.sliced import SlicedDiversity, tuple_probabilities

    column_keys, sensitive_qi_key = diversity_keys(encoding, columns, sensitive, matching=matching)
    n = encoding.n_records
    whole = [np.arange(n, dtype=np.int64)]
    probabilities = tuple_probabilities(
        column_keys, sensitive_qi_key, sensitive_codes, n_values, whole, bucket_weighting=bucket_weighting
    )
    worst = float(probabilities.max())
    if worst > 1.0 / l + _TOLERANCE:
        raise ConfigError(
            f"the table is not {l:g}-diverse even as a single bucket (largest p(t, s) = {worst:.4g}, "
            f"so at most l = {1 / worst:.4g}): no sliced table can be; lower l or put fewer attributes "
            "in the sensitive column"
        )
    state = SlicedDiversity(
        column_keys, sensitive_qi_key, sensitive_codes, n_values, l, bucket_weighting=bucket_weighting
    )
    if partition == "mondrian":
        names = [
            name for name in dict.fromkeys(name for column in columns for name in column) if name != sensitive
        ]
        codes, categorical = _split_codes(table, encoding, names)
        buckets = mondrian_tuple_partition(
            codes, state, categorical=categorical, min_bucket_size=min_bucket_size, progress=progress
        )
    else:
        buckets = random_halving_partition(state, rng, min_bucket_size=min_bucket_size, progress=progress)
    buckets = [np.asarray(rows, dtype=np.int64) for rows in buckets]
    return buckets, float(state.probabilities().max())


# Registered methods ---------------------------------------------------------------------------


def _columns(value: Any) -> Any:
    """``"age,sex;zip,disease"`` -> ``[["age", "sex"], ["zip", "disease"]]`` (the command line's form)."""
    if isinstance(value, str):
        return [[name.strip() for name in part.split(",")] for part in value.split(";")]
    return value


class SlicingParams(MethodParams):
    """Parameters of slicing (``sdckit anonymize slicing``; Li et al., 2012)."""

    l: Annotated[Finite, Field(ge=1, description="l of l-diverse slicing.")] = 2.0  # noqa: E741
    sensitive: Annotated[
        str | None, Field(description="The sensitive attribute (default: the one with role sensitive).")
    ] = None
    n_columns: Annotated[
        Whole | None, Field(ge=1, description="Number of columns (default: by the attributes).")
    ] = None
    columns: Annotated[
        list[list[str]] | None,
        BeforeValidator(_columns),
        Field(description='Explicit columns, e.g. "age,sex;zip,disease" (";" between columns).'),
    ] = None
    sensitive_column_size: Annotated[
        Whole | None, Field(ge=1, description="Attributes in the sensitive column (alpha).")
    ] = None
    min_bucket_size: Annotated[
        Whole | None, Field(ge=1, description="Smallest bucket a split may leave.")
    ] = None
    n_bins: Annotated[
        Whole, Field(ge=1, description="Equal-width bins of numeric attributes for correlation.")
    ] = 10
    correlation: Annotated[
        Literal["phi2", "pearson"],
        Field(description="Attribute correlation: phi2 (mean-square contingency) or pearson."),
    ] = "phi2"
    bucket_weighting: Annotated[
        Literal["none", "size"], Field(description="Diversity check of a split: none or size-weighted.")
    ] = "none"
    partition: Annotated[
        Literal["mondrian", "random-halving"],
        Field(description="Tuple partition: mondrian (Li et al.) or random-halving (Dhaigude & Kumar)."),
    ] = "mondrian"
    medoid_start: Annotated[
        Literal["random", "build"], Field(description="PAM start: random (from the seed) or BUILD.")
    ] = "random"
    membership: Annotated[bool, Field(description="Report fake tuples (membership disclosure).")] = True
    max_generated: Annotated[
        Whole, Field(ge=1, description="Most generated combinations the membership report examines.")
    ] = 1_000_000
    seed: Annotated[Whole, Field(ge=0, description="Seed of every random choice.")] = 0


class OverlappingSlicingParams(SlicingParams):
    """Parameters of improved slicing with overlapping columns (``sdckit anonymize overlapping-slicing``;
    Dhaigude & Kumar, 2014). ``medoid_start`` does not apply (columns come from overlapping correlation
    clustering)."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True)

    partition: Annotated[
        Literal["mondrian", "random-halving"],
        Field(description="Tuple partition: random-halving (the paper) or mondrian."),
    ] = "random-halving"
    beta: Annotated[Whole, Field(ge=1, description="Minimum number of groups.")] = 2
    max_labels: Annotated[Whole, Field(ge=1, description="Most columns per attribute (p).")] = 2
    n_restarts: Annotated[
        Whole, Field(ge=1, description="Restarts of overlapping correlation clustering.")
    ] = 10
    occ_function: Annotated[
        Literal["jaccard", "intersection"],
        Field(description="Overlapping clustering cost: jaccard or intersection."),
    ] = "jaccard"


# Overlapping slicing has no PAM, so no medoid start.
del OverlappingSlicingParams.model_fields["medoid_start"]
OverlappingSlicingParams.model_rebuild(force=True)


def _slicing_summary(sliced: SlicedRelease) -> dict[str, Any]:
    from sdckit.params import finite_or_none

    sizes = [len(rows) for rows in sliced.buckets]
    membership = sliced.membership or {}
    return {
        "sensitive": sliced.sensitive,
        "columns": [list(c) for c in sliced.columns],
        "partition": sliced.partition,
        "l": sliced.l,
        "buckets": len(sizes),
        "smallest_bucket": min(sizes),
        "largest_bucket": max(sizes),
        "max_probability": finite_or_none(sliced.max_probability),
        "l_achieved": finite_or_none(sliced.l_achieved),
        "fake_tuples": membership.get("fake"),
        "membership": membership,
        "average_correlation": finite_or_none(sliced.average_correlation),
        "pair_weighted_correlation": finite_or_none(sliced.pair_weighted_correlation),
        "timings": {name: round(value, 4) for name, value in sliced.timings.items()},
    }


def _slicing_report(figures: dict[str, Any]) -> list[str]:
    lines = [
        f"column {number}: {', '.join(names)}" for number, names in enumerate(figures["columns"], start=1)
    ]
    sampled = " (sampled)" if (figures["membership"] or {}).get("sampled") else ""
    return [
        f"sensitive attribute: {figures['sensitive']} (in the last column)",
        *lines,
        f"buckets: {figures['buckets']:,}; smallest bucket: {figures['smallest_bucket']:,}; "
        f"l achieved: {figures['l_achieved']} (asked {figures['l']:g}); "
        f"fake tuples: {figures['fake_tuples']}{sampled}",
        f"average correlation: {figures['average_correlation']}",
    ]


def _slicing_violation(sliced: SlicedRelease, figures: dict[str, Any]) -> str | None:
    if sliced.l_achieved + 1e-9 < sliced.l:
        return f"the sliced table is only {sliced.l_achieved:.4g}-diverse, not {sliced.l:g}-diverse"
    return None


def _released_slices(sliced: SlicedRelease) -> Table:
    return Table.from_frame(sliced.table, source="<sliced>")


def _run_slicing(table: Table, params: SlicingParams, context: Context, method: str) -> SlicedRelease:
    options = params.model_dump()
    return slice_table(table, method=method, progress=context.progress, **options)


_SLICING_OPTIONS: dict[str, Any] = {
    "summary": _slicing_summary,
    "report": _slicing_report,
    "violation": _slicing_violation,
    "released": _released_slices,
    "progress_label": "buckets",
    "not_reapplicable": (
        "its buckets group and permute records together, so a record's release depends on others"
    ),
}
register_method(
    "slicing",
    SlicingParams,
    help="l-diverse slicing (Li et al.): columns of correlated attributes permuted inside buckets.",
    **_SLICING_OPTIONS,
)(lambda table, params, context: _run_slicing(table, params, context, "slicing"))
register_method(
    "overlapping-slicing",
    OverlappingSlicingParams,
    help="Improved slicing (Dhaigude & Kumar): overlapping columns, random-halving tuple partition.",
    **_SLICING_OPTIONS,
)(lambda table, params, context: _run_slicing(table, params, context, "overlapping-slicing"))
