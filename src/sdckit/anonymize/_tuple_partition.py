"""Tuple partitioning of slicing: split buckets top-down while the sliced table stays l-diverse.

Both algorithms run the same FIFO loop (Li, Li, Zhang & Molloy, TKDE 2012, tuple-partition algorithm;
SPEC §1.6): take the first bucket B of the queue, split it in two, and if the whole bucketing with B
replaced by its halves passes the diversity check of :class:`~sdckit.models.sliced.SlicedDiversity`,
append the halves to the queue; otherwise B is final. They differ in how B is split:

* :func:`mondrian_tuple_partition` — a Mondrian-like median cut (the original slicing paper; LeFevre,
  DeWitt & Ramakrishnan, ICDE 2006): the attribute of largest normalized width inside B, cut at its lower
  median.
* :func:`random_halving_partition` — "improved slicing" (Dhaigude & Kumar; SPEC §2.6, Algorithm 2): B is
  grouped by sensitive value and each group is halved at random, so both halves keep roughly B's
  sensitive distribution.

Every split is checked incrementally (cost independent of the number of buckets, see
:class:`~sdckit.models.sliced.SlicedDiversity`). Buckets are sorted row-index arrays; the result lists
them in the order they became final.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from sdckit.context import ProgressCallback as Progress
from sdckit.errors import ConfigError
from sdckit.frequency import group_keys
from sdckit.models.sliced import SlicedDiversity, tuple_probabilities
from sdckit.table import Kind, Table

__all__ = [
    "MATCHINGS",
    "diversity_keys",
    "mondrian_tuple_partition",
    "partition_tuples",
    "random_halving_partition",
]

_TOLERANCE = 1e-12


def _check_min_bucket_size(min_bucket_size) -> int:
    if min_bucket_size is None:
        return 1
    if (
        isinstance(min_bucket_size, bool)
        or not isinstance(min_bucket_size, int | np.integer)
        or min_bucket_size < 1
    ):
        raise ConfigError(f"min_bucket_size: expected a positive integer or None, got {min_bucket_size!r}")
    return int(min_bucket_size)


def _start(state: SlicedDiversity) -> np.ndarray:
    """Put every row into one bucket of the fresh ``state``; fail if that bucket is not l-diverse."""
    if not isinstance(state, SlicedDiversity):
        raise ConfigError(f"state: expected a SlicedDiversity, got {type(state).__name__}")
    if state.buckets:
        raise ConfigError("state: expected a fresh SlicedDiversity without buckets")
    rows = np.arange(state.n_records, dtype=np.int64)
    if state.n_records == 0:
        return rows
    state.add_bucket(rows)
    if not state.passes():
        raise ConfigError(
            f"l: the table as one bucket is not {state.l:g}-diverse: l too large for this sensitive "
            "attribute's distribution"
        )
    return rows


def _run(
    state: SlicedDiversity,
    split: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray] | None],
    progress: Progress | None,
) -> list[np.ndarray]:
    """The FIFO loop of SPEC §1.6 / Algorithm 2 over a split rule."""
    everything = _start(state)
    n = state.n_records
    if n == 0:
        return []
    queue = deque([everything])
    final: list[np.ndarray] = []
    done = 0
    while queue:
        bucket = queue.popleft()
        halves = split(bucket)
        if halves is not None and state.try_split(bucket, halves[0], halves[1]):
            queue.append(halves[0])
            queue.append(halves[1])
            continue
        final.append(bucket)
        done += bucket.shape[0]
        if progress is not None:
            progress(done, n)
    return final


def _split_matrix(split_codes, n: int) -> np.ndarray:
    values = np.asarray(split_codes)
    if values.ndim == 1:
        values = values[:, None]
    if values.ndim != 2 or values.shape[0] != n:
        raise ConfigError(f"split_codes: expected an array of shape ({n}, attributes), got {values.shape}")
    if not (np.issubdtype(values.dtype, np.integer) or np.issubdtype(values.dtype, np.floating)):
        raise ConfigError(f"split_codes: expected numeric codes, got dtype {values.dtype}")
    if np.issubdtype(values.dtype, np.floating) and not np.all(np.isfinite(values)):
        raise ConfigError("split_codes: missing or infinite values cannot be split on")
    return values


def mondrian_tuple_partition(
    split_codes: np.ndarray,
    state: SlicedDiversity,
    *,
    categorical: np.ndarray | None = None,
    min_bucket_size: int | None = None,
    progress: Progress | None = None,
) -> list[np.ndarray]:
    """Mondrian-like tuple partition of slicing (Li, Li, Zhang & Molloy, TKDE 2012; SPEC §1.6).

    ``split_codes`` is an ``(n, a)`` numeric array of the candidate split attributes whose numeric order is
    the value order (integer codes of sorted values, a fixed code order of a categorical attribute, or the
    numeric values themselves). ``categorical`` (boolean, one per attribute; default all False) chooses the
    width: numeric/ordered attributes use the normalized range (max - min in B) / (max - min in T),
    categorical ones (#distinct in B - 1) / (#distinct in T - 1) (0 when the denominator is 0).

    ``state`` is a fresh :class:`SlicedDiversity` (it receives one bucket of every row and ends holding the
    result). Starting from that bucket, the FIFO loop takes a bucket B, orders the attributes by decreasing
    width in B (ties: earlier attribute), and cuts on the first attribute of positive width whose lower
    median m = sorted(B.A)[(|B|-1)//2] gives two non-empty halves {A <= m}, {A > m}, each of at least
    ``min_bucket_size`` rows (an attribute whose cut violates that is skipped like one with an empty side).
    If the cut passes the diversity check both halves are queued, else B is final: as in the paper, no other
    attribute is tried after a failed check. ``progress(rows_final, n)`` is called as buckets become final.

    Returns the final buckets (sorted row indices) in the order they became final; deterministic.
    Raises ConfigError if the whole table as one bucket is not l-diverse.
    """
    minimum = _check_min_bucket_size(min_bucket_size)
    if not isinstance(state, SlicedDiversity):
        raise ConfigError(f"state: expected a SlicedDiversity, got {type(state).__name__}")
    values = _split_matrix(split_codes, state.n_records)
    n_attributes = values.shape[1]
    if categorical is None:
        is_categorical = np.zeros(n_attributes, dtype=bool)
    else:
        is_categorical = np.asarray(categorical)
        if is_categorical.shape != (n_attributes,) or is_categorical.dtype != np.bool_:
            raise ConfigError(f"categorical: expected {n_attributes} booleans (one per split attribute)")
    # Categorical attributes get dense codes so that distinct values can be counted by bincount.
    columns: list[np.ndarray] = []
    denominators = np.zeros(n_attributes)
    cardinalities = np.zeros(n_attributes, dtype=np.int64)
    for a in range(n_attributes):
        column = np.ascontiguousarray(values[:, a])
        if is_categorical[a]:
            distinct, inverse = np.unique(column, return_inverse=True)
            cardinalities[a] = distinct.shape[0]
            denominators[a] = distinct.shape[0] - 1
            # Keep the value order: dense codes of sorted values are order-preserving.
            column = inverse.reshape(-1).astype(np.int64)
        elif column.size:
            denominators[a] = float(column.max()) - float(column.min())
        columns.append(column)

    def width(a: int, rows: np.ndarray) -> float:
        if denominators[a] <= 0:
            return 0.0
        x = columns[a][rows]
        spread: float
        if is_categorical[a]:
            if cardinalities[a] <= 4 * rows.shape[0]:
                spread = int(np.count_nonzero(np.bincount(x, minlength=cardinalities[a]))) - 1
            else:
                spread = np.unique(x).shape[0] - 1
        else:
            spread = float(x.max()) - float(x.min())
        return spread / denominators[a]

    def split(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        size = rows.shape[0]
        if size < 2 * minimum:
            return None
        widths = np.array([width(a, rows) for a in range(n_attributes)])
        for a in np.argsort(-widths, kind="stable"):
            if widths[a] <= 0:
                break
            x = columns[a][rows]
            median = np.partition(x, (size - 1) // 2)[(size - 1) // 2]
            lower = x <= median
            n_lower = int(np.count_nonzero(lower))
            if min(n_lower, size - n_lower) < minimum or n_lower == size:
                continue
            return rows[lower], rows[~lower]
        return None

    return _run(state, split, progress)


def random_halving_partition(
    state: SlicedDiversity,
    rng: np.random.Generator,
    *,
    min_bucket_size: int | None = None,
    progress: Progress | None = None,
) -> list[np.ndarray]:
    """Random-halving tuple partition of "improved slicing" (Dhaigude & Kumar, Algorithm 2; SPEC §2.6).

    ``state`` is a fresh :class:`SlicedDiversity` (it receives one bucket of every row and ends holding the
    result). The FIFO loop takes a bucket B, groups its rows by sensitive value S_1..S_m (in code order),
    shuffles every group with ``rng`` and puts floor(|S_j|/2) rows of each into B1, the rest into B2; the
    extra row of the odd-sized groups goes alternately to B2, B1, B2, ... starting on a side drawn from
    ``rng`` (otherwise a bucket of all-distinct sensitive values could never split). If both halves hold at
    least ``min_bucket_size`` rows (at least 1) and pass the diversity check of Li, Li, Zhang & Molloy
    (TKDE 2012), both are queued; else B is final. ``progress(rows_final, n)`` is called as buckets become
    final.

    Returns the final buckets (sorted row indices) in the order they became final; deterministic for a
    given ``rng`` state. Raises ConfigError if the whole table as one bucket is not l-diverse.
    """
    minimum = _check_min_bucket_size(min_bucket_size)
    if not isinstance(rng, np.random.Generator):
        raise ConfigError(f"rng: expected a numpy.random.Generator, got {type(rng).__name__}")
    if not isinstance(state, SlicedDiversity):
        raise ConfigError(f"state: expected a SlicedDiversity, got {type(state).__name__}")
    codes = state._prepared.codes
    m = state.n_values

    def split(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        size = rows.shape[0]
        if size < 2 * minimum:
            return None
        sensitive = codes[rows]
        # Shuffle inside every sensitive group at once: sort by (value, random key).
        order = np.lexsort((rng.random(size), sensitive))
        start_side = int(rng.integers(2))  # 0: the first odd group's extra row goes to B2
        group_sizes = np.bincount(sensitive, minlength=m)
        odd = group_sizes % 2 == 1
        odd_rank = np.cumsum(odd) - 1  # index of each odd group among the odd groups
        extra_to_first = odd & ((odd_rank + start_side) % 2 == 1)
        to_first = group_sizes // 2 + extra_to_first
        group_start = np.cumsum(group_sizes) - group_sizes
        ordered = rows[order]
        ordered_values = sensitive[order]
        position = np.arange(size) - group_start[ordered_values]
        first = position < to_first[ordered_values]
        n_first = int(np.count_nonzero(first))
        if min(n_first, size - n_first) < minimum:
            return None
        return np.sort(ordered[first]), np.sort(ordered[~first])

    return _run(state, split, progress)


# The tuple partition of a slicing run ------------------------------------------------------------

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


def partition_tuples(
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
    progress: Progress | None,
    matching: str = "strict",
) -> tuple[list[np.ndarray], float]:
    """The tuple partition under l-diverse slicing, checked with the tuple matching ``matching`` (see
    :func:`diversity_keys`; releases always use ``"strict"``); the buckets and the largest p(t, s)."""
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
