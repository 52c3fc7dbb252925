"""The l-diversity check of a sliced table (Li, Li, Zhang & Molloy, "Slicing: a new approach for privacy
preserving data publishing", IEEE TKDE 24(3), 2012; SPEC §1.7).

A sliced table publishes, inside every bucket B, each column's multiset of projections with the row links
between columns broken. An adversary who knows a tuple t's quasi-identifier values computes, for every
bucket, the fraction of B's recombinable tuples that match t,

    f(t,B) = prod_i f_i(t,B),   f_i(t,B) = #occurrences of t[C_i] in B[C_i] / |B|

(for the sensitive column C_c the projection is t[C_c - {S}]), the probability that t lies in B,
p(t,B) = f(t,B) / sum_B' f(t,B'), and the distribution D(t,B) of S among B's rows whose C_c - {S} part equals
t's. Then p(t,s) = sum_B p(t,B) D(t,B)[s], and the table is l-diverse when max_s p(t,s) <= 1/l for every t.

With the column counts of B written cnt_i and cnt_c (the count of t's C_c - {S} part) and cnt_cs (the count
of the pair (t[C_c - {S}], s)), ``f(t,B) D(t,B)[s] = prod_{i<c}(cnt_i/|B|) * cnt_cs/|B|``, so the numerators
need no division by cnt_c. ``bucket_weighting="size"`` is SPEC's variant p(t,B) proportional to
|B| f(t,B) (the expected number of matching recombined tuples).

Two implementations:

* :func:`tuple_probabilities` / :func:`diversity_check`: the full computation, one vectorized pass over
  every tuple per bucket (O(|buckets| n c)); the reference.
* :class:`SlicedDiversity`: the incremental speed-up SPEC recommends for tuple partitioning. Per tuple it
  keeps F(t) = sum_B f(t,B) and N(t,s) = sum_B f(t,B) D(t,B)[s]. Replacing a bucket P by two halves changes
  these only for the tuples matching P (a tuple matching a half matches P), found through per-column
  inverted indexes, so a split costs O(|P| c + (candidates) (c + m)) with candidates <= n instead of a full
  re-check over every bucket. F and N are held in double-double arithmetic (error-free sums), so that
  subtracting a large old contribution does not leave rounding noise in the small remainders.

References
----------
T. Li, N. Li, J. Zhang, I. Molloy. Slicing: a new approach for privacy preserving data publishing.
IEEE Transactions on Knowledge and Data Engineering 24(3):561-574, 2012.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sdckit._numba import njit
from sdckit.errors import ConfigError
from sdckit.params import L_BOUNDS, Argument, Finite

#: Tolerance of the threshold comparison (SPEC §0): a tuple passes when max_s p(t,s) <= 1/l + TOLERANCE.
TOLERANCE = 1e-12
BUCKET_WEIGHTINGS = ("none", "size")
#: l of l-diverse slicing: a real number, at least 1 (the rule of SlicingParams' l).
_L = Argument("l", Finite, L_BOUNDS)

__all__ = [
    "BUCKET_WEIGHTINGS",
    "TOLERANCE",
    "SlicedDiversity",
    "diversity_check",
    "tuple_probabilities",
]


# --------------------------------------------------------------------------------------------------
# Input preparation


def _dense(values: np.ndarray) -> tuple[np.ndarray, int]:
    """Keys as int64 in 0..K-1 with K = max + 1; re-densified when the keys are obviously sparse."""
    if values.size == 0:
        return values.astype(np.int64), 0
    top = int(values.max())
    if top >= values.size:
        _, inverse = np.unique(values, return_inverse=True)
        inverse = inverse.astype(np.int64).reshape(-1)
        return inverse, int(inverse.max()) + 1
    return values.astype(np.int64, copy=False), top + 1


def _integer_vector(name: str, values, n: int | None) -> np.ndarray:
    array = np.asarray(values)
    if array.ndim != 1:
        raise ConfigError(f"{name}: expected a one-dimensional array, got shape {array.shape}")
    if n is not None and array.shape[0] != n:
        raise ConfigError(f"{name}: expected {n} entries (one per record), got {array.shape[0]}")
    if array.size and not np.issubdtype(array.dtype, np.integer):
        if (
            np.issubdtype(array.dtype, np.floating)
            and np.all(np.isfinite(array))
            and np.all(array == np.round(array))
        ):
            array = array.astype(np.int64)
        else:
            raise ConfigError(f"{name}: expected integer codes, got dtype {array.dtype}")
    if array.size and int(array.min()) < 0:
        raise ConfigError(f"{name}: codes must be >= 0 (found {int(array.min())})")
    return array.astype(np.int64, copy=False) if array.size else np.zeros(0, dtype=np.int64)


class _Prepared:
    """Validated inputs: per record the keys of every matching column (sensitive QI part last)."""

    def __init__(self, column_keys, sensitive_qi_key, sensitive_codes, n_values, l, bucket_weighting):  # noqa: E741
        codes = _integer_vector("sensitive_codes", sensitive_codes, None)
        n = codes.shape[0]
        if isinstance(n_values, bool) or not isinstance(n_values, int | np.integer) or n_values < 1:
            raise ConfigError(f"n_values: expected a positive integer, got {n_values!r}")
        n_values = int(n_values)
        if n and int(codes.max()) >= n_values:
            raise ConfigError(
                f"sensitive_codes: codes must be < n_values={n_values} (found {int(codes.max())})"
            )
        if l is not None:
            l = _L(l)  # noqa: E741
        if bucket_weighting not in BUCKET_WEIGHTINGS:
            raise ConfigError(
                f"bucket_weighting: expected one of {', '.join(BUCKET_WEIGHTINGS)}, got {bucket_weighting!r}"
            )
        if isinstance(column_keys, np.ndarray) and column_keys.ndim == 2:
            column_keys = list(column_keys.T) if column_keys.shape[0] == n else list(column_keys)
        columns = []
        for j, keys in enumerate(column_keys):
            dense, cardinality = _dense(_integer_vector(f"column_keys[{j}]", keys, n))
            columns.append((dense, cardinality))
        q, q_cardinality = _dense(_integer_vector("sensitive_qi_key", sensitive_qi_key, n))
        columns.append((q, q_cardinality))
        self.n = n
        self.m = n_values
        self.n_columns = len(columns) - 1  # non-sensitive columns
        offsets = np.zeros(len(columns) + 1, dtype=np.int64)
        offsets[1:] = np.cumsum([cardinality for _, cardinality in columns])
        self.total_keys = int(offsets[-1])
        # Global keys: column j's key + offset j, so one count table serves every column.
        self.keys = np.empty((n, len(columns)), dtype=np.int64)
        for j, (dense, _) in enumerate(columns):
            self.keys[:, j] = dense + offsets[j]
        self.q = q
        self.q_cardinality = q_cardinality
        self.codes = codes
        # Dense key of the pair (q, s) and, per q, its pair keys in s order.
        pairs = q * n_values + codes
        unique_pairs, pair_key = np.unique(pairs, return_inverse=True)
        self.pair_key = pair_key.astype(np.int64).reshape(-1)
        self.pair_cardinality = unique_pairs.shape[0]
        self.pair_value = (unique_pairs % n_values).astype(np.int64)
        pair_q = unique_pairs // n_values
        self.q_pair_start = np.zeros(q_cardinality + 1, dtype=np.int64)
        if q_cardinality:
            self.q_pair_start[1:] = np.cumsum(np.bincount(pair_q, minlength=q_cardinality))
        # unique_pairs is sorted by (q, s): the pair keys of q are q_pair_start[q] .. q_pair_start[q+1]-1.
        self.l = None if l is None else float(l)
        self.threshold = None if l is None else 1.0 / float(l) + TOLERANCE
        self.size_weighting = bucket_weighting == "size"
        self.bucket_weighting = bucket_weighting


def _bucket_rows(name: str, rows, n: int) -> np.ndarray:
    array = np.asarray(rows)
    if array.ndim != 1:
        raise ConfigError(f"{name}: expected a one-dimensional array of row indices, got shape {array.shape}")
    if array.size == 0:
        raise ConfigError(f"{name}: a bucket must hold at least one row")
    if not np.issubdtype(array.dtype, np.integer):
        raise ConfigError(f"{name}: expected integer row indices, got dtype {array.dtype}")
    array = array.astype(np.int64, copy=False)
    if int(array.min()) < 0 or int(array.max()) >= n:
        raise ConfigError(f"{name}: row indices must lie in 0..{n - 1}")
    return np.sort(array)


# --------------------------------------------------------------------------------------------------
# Reference: the full computation


def _partition(buckets, n: int) -> list[np.ndarray]:
    checked = [_bucket_rows(f"buckets[{b}]", rows, n) for b, rows in enumerate(buckets)]
    cover = np.bincount(np.concatenate(checked), minlength=n) if checked else np.zeros(n, dtype=np.int64)
    if np.any(cover != 1):
        bad = int(np.flatnonzero(cover != 1)[0])
        raise ConfigError(
            f"buckets: every row must lie in exactly one bucket (row {bad} lies in {cover[bad]})"
        )
    return checked


def _reference_sums(prepared: _Prepared, buckets) -> tuple[np.ndarray, np.ndarray]:
    """F(t) = sum_B f(t,B) (size-weighted if asked) and N(t,s) = sum_B f(t,B) D(t,B)[s], plain float64."""
    n, m = prepared.n, prepared.m
    total = np.zeros(n)
    numerators = np.zeros((n, m))
    keys = prepared.keys
    n_columns = prepared.n_columns
    for rows in buckets:
        size = rows.shape[0]
        counts = np.bincount(keys[rows].reshape(-1), minlength=prepared.total_keys)
        gathered = counts[keys]  # (n, columns + 1)
        base = np.ones(n)
        for j in range(n_columns):
            base *= gathered[:, j] / size
        if not prepared.size_weighting:
            base /= size
        matching = np.flatnonzero((base > 0) & (gathered[:, n_columns] > 0))
        if matching.size == 0:
            continue
        base = base[matching]
        total[matching] += base * gathered[matching, n_columns]
        # cnt_cs of (q(t), s) for the matching tuples: a (distinct q in B) x m table.
        local_q, local_index = np.unique(prepared.q[rows], return_inverse=True)
        table = np.zeros((local_q.shape[0], m))
        np.add.at(table, (local_index.reshape(-1), prepared.codes[rows]), 1.0)
        position = np.searchsorted(local_q, prepared.q[matching])
        numerators[matching] += base[:, None] * table[position]
    return total, numerators


def tuple_probabilities(
    column_keys: Sequence[np.ndarray],
    sensitive_qi_key: np.ndarray,
    sensitive_codes: np.ndarray,
    n_values: int,
    buckets: Sequence[np.ndarray],
    *,
    bucket_weighting: str = "none",
) -> np.ndarray:
    """p(t,s) of every tuple t and sensitive value s under the bucketing ``buckets`` (SPEC §1.7).

    ``column_keys`` holds one integer array per non-sensitive column: the dense key of each record's
    projection on the column (equal projections have equal keys). ``sensitive_qi_key`` is the key of
    t[C_c - {S}] (all zeros when the sensitive column is {S} alone) and ``sensitive_codes`` the codes
    0..n_values-1 of S. ``buckets`` must partition the rows. Returns an ``(n, n_values)`` array whose rows
    sum to 1. Full computation: per bucket, column counts by ``bincount`` gathered for every tuple
    (Li, Li, Zhang & Molloy, TKDE 2012, the diversity-check algorithm with normalization after all buckets).
    """
    prepared = _Prepared(column_keys, sensitive_qi_key, sensitive_codes, n_values, None, bucket_weighting)
    checked = _partition(buckets, prepared.n)
    total, numerators = _reference_sums(prepared, checked)
    return numerators / total[:, None]


def diversity_check(
    column_keys: Sequence[np.ndarray],
    sensitive_qi_key: np.ndarray,
    sensitive_codes: np.ndarray,
    n_values: int,
    buckets: Sequence[np.ndarray],
    l: float,  # noqa: E741 (the literature's name)
    *,
    bucket_weighting: str = "none",
) -> bool:
    """Whether the sliced table with these buckets is l-diverse: max_s p(t,s) <= 1/l + 1e-12 for every t.

    Li, Li, Zhang & Molloy (TKDE 2012), the diversity check of ℓ-diverse slicing; see
    :func:`tuple_probabilities` for the inputs. ``l`` is real, ``>= 1``.
    """
    prepared = _Prepared(column_keys, sensitive_qi_key, sensitive_codes, n_values, l, bucket_weighting)
    checked = _partition(buckets, prepared.n)
    if prepared.n == 0:
        return True
    total, numerators = _reference_sums(prepared, checked)
    return bool(np.all(numerators.max(axis=1) / total <= prepared.threshold))


# --------------------------------------------------------------------------------------------------
# Incremental state: compiled kernels


@njit(cache=True, nogil=True, inline="always")
def _dd_add(hi, lo, x):  # pragma: no cover - compiled
    """(hi, lo) + x in double-double arithmetic (Knuth's two-sum, then renormalization)."""
    s = hi + x
    v = s - hi
    e = (hi - (s - v)) + (x - v)
    e += lo
    new_hi = s + e
    new_lo = e - (new_hi - s)
    return new_hi, new_lo


@njit(cache=True, nogil=True)
def _update(
    keys,
    q,
    pair_key,
    pair_value,
    q_pair_start,
    post_start,
    post_rows,
    rows,
    starts,
    signs,
    counts,
    pair_counts,
    covered,
    f_hi,
    f_lo,
    n_hi,
    n_lo,
    failing,
    threshold,
    size_weighting,
):  # pragma: no cover - compiled
    """New F, N and failure flags of the tuples matching bucket 0 after adding ``signs[j]`` times bucket j.

    Buckets are ``rows[starts[j]:starts[j+1]]``. Bucket 0 is the envelope: either it is the only bucket
    (adding a bucket) or the others are a split of it, so only tuples matching it can change (a tuple
    matching a half matches the whole). Candidates come from the inverted index of the column whose
    distinct keys in bucket 0 cover the fewest records. Nothing of the state is written: the caller
    commits. Scratch ``counts``/``pair_counts`` are returned clean. Returns the affected tuples, their new
    F (hi, lo) and N rows (hi, lo), their new failure flags and the change in the number of failing tuples.
    """
    n_buckets = starts.shape[0] - 1
    n_match = keys.shape[1]
    n_columns = n_match - 1
    m = n_hi.shape[1]
    envelope = starts[1] - starts[0]
    # 1. Count tables of every bucket; distinct keys of the envelope per column.
    distinct = np.empty((n_match, envelope), dtype=np.int64)
    n_distinct = np.zeros(n_match, dtype=np.int64)
    for j in range(n_buckets):
        for k in range(starts[j], starts[j + 1]):
            r = rows[k]
            for c in range(n_match):
                g = keys[r, c]
                if j == 0 and counts[0, g] == 0:
                    distinct[c, n_distinct[c]] = g
                    n_distinct[c] += 1
                counts[j, g] += 1
            pair_counts[j, pair_key[r]] += 1
    # 2. The cheapest inverted index.
    best = 0
    best_total = -1
    for c in range(n_match):
        total = 0
        for d in range(n_distinct[c]):
            g = distinct[c, d]
            total += post_start[g + 1] - post_start[g]
        if best_total < 0 or total < best_total:
            best_total = total
            best = c
    affected = np.empty(best_total, dtype=np.int64)
    out_f_hi = np.empty(best_total)
    out_f_lo = np.empty(best_total)
    out_n_hi = np.empty((best_total, m))
    out_n_lo = np.empty((best_total, m))
    out_failing = np.zeros(best_total, dtype=np.bool_)
    n_affected = 0
    delta = 0
    # 3. New sums of every matching tuple.
    for d in range(n_distinct[best]):
        g = distinct[best, d]
        for k in range(post_start[g], post_start[g + 1]):
            t = post_rows[k]
            match = True
            for c in range(n_match):
                if counts[0, keys[t, c]] == 0:
                    match = False
                    break
            if not match:
                continue
            a = n_affected
            n_affected += 1
            affected[a] = t
            fh = f_hi[t]
            fl = f_lo[t]
            for s in range(m):
                out_n_hi[a, s] = n_hi[t, s]
                out_n_lo[a, s] = n_lo[t, s]
            qt = q[t]
            qg = keys[t, n_columns]
            for j in range(n_buckets):
                count_q = counts[j, qg]
                if count_q == 0:
                    continue
                size = starts[j + 1] - starts[j]
                # f(t,B) D(t,B)[s] = prod_{i<c} (cnt_i/|B|) * cnt_cs/|B|, computed identically on add and
                # remove so that a removal cancels its addition exactly.
                base = 1.0
                for c in range(n_columns):
                    base *= counts[j, keys[t, c]] / size
                if base == 0.0:
                    continue
                if not size_weighting:
                    base /= size
                sign = signs[j]
                fh, fl = _dd_add(fh, fl, sign * (base * count_q))
                for p in range(q_pair_start[qt], q_pair_start[qt + 1]):
                    count = pair_counts[j, p]
                    if count > 0:
                        s = pair_value[p]
                        out_n_hi[a, s], out_n_lo[a, s] = _dd_add(
                            out_n_hi[a, s], out_n_lo[a, s], sign * (base * count)
                        )
            out_f_hi[a] = fh
            out_f_lo[a] = fl
            fails = False
            total_f = fh + fl
            if covered[t] and total_f > 0.0:
                largest = 0.0
                for s in range(m):
                    value = out_n_hi[a, s] + out_n_lo[a, s]
                    if value > largest:
                        largest = value
                fails = largest / total_f > threshold
            out_failing[a] = fails
            if fails and not failing[t]:
                delta += 1
            elif failing[t] and not fails:
                delta -= 1
    # 4. Clean the scratch tables.
    for j in range(n_buckets):
        for k in range(starts[j], starts[j + 1]):
            r = rows[k]
            for c in range(n_match):
                counts[j, keys[r, c]] = 0
            pair_counts[j, pair_key[r]] = 0
    return (
        affected[:n_affected],
        out_f_hi[:n_affected],
        out_f_lo[:n_affected],
        out_n_hi[:n_affected],
        out_n_lo[:n_affected],
        out_failing[:n_affected],
        delta,
    )


@njit(cache=True, nogil=True)
def _write(affected, new_f_hi, new_f_lo, new_n_hi, new_n_lo, new_failing, f_hi, f_lo, n_hi, n_lo, failing):
    """Commit the output of :func:`_update` into the state arrays."""  # pragma: no cover - compiled
    m = n_hi.shape[1]
    for a in range(affected.shape[0]):
        t = affected[a]
        f_hi[t] = new_f_hi[a]
        f_lo[t] = new_f_lo[a]
        failing[t] = new_failing[a]
        for s in range(m):
            n_hi[t, s] = new_n_hi[a, s]
            n_lo[t, s] = new_n_lo[a, s]


# --------------------------------------------------------------------------------------------------
# Incremental state


class SlicedDiversity:
    """Incremental state of p(t,s) for l-diverse slicing (Li et al. 2012; SPEC §1.7).

    Holds a set of disjoint buckets and, per tuple t, F(t) = sum_B f(t,B) and N(t,s) = sum_B f(t,B) D(t,B)[s]
    (``bucket_weighting="size"``: each term times |B|), so that p(t,s) = N(t,s) / F(t). Buckets are added
    with :meth:`add_bucket` (no check) and refined with :meth:`try_split`, which commits a split only if
    every tuple then satisfies max_s p(t,s) <= 1/l + 1e-12 and otherwise leaves the state untouched.

    Parameters
    ----------
    column_keys:
        One integer array (n,) per non-sensitive column: the dense key of each record's projection t[C_i]
        (equal projections have equal keys). May be empty.
    sensitive_qi_key:
        (n,) dense key of t[C_c - {S}]; all zeros when the sensitive column is {S} alone.
    sensitive_codes:
        (n,) codes 0..n_values-1 of the sensitive attribute S.
    n_values:
        Number of sensitive values m.
    l:
        The diversity parameter, real, >= 1.
    bucket_weighting:
        ``"none"`` (p(t,B) proportional to f(t,B), the paper's) or ``"size"`` (to |B| f(t,B)).

    Cost: memory O(n (c + m)) (F and N in double-double); a split of P costs O(|P| c) for the counts plus
    O(x (c + m)) for the x <= n tuples found through the cheapest inverted index, independent of the number
    of buckets.

    References
    ----------
    T. Li, N. Li, J. Zhang, I. Molloy. Slicing: a new approach for privacy preserving data publishing.
    IEEE TKDE 24(3), 2012.
    """

    def __init__(
        self,
        column_keys: Sequence[np.ndarray],
        sensitive_qi_key: np.ndarray,
        sensitive_codes: np.ndarray,
        n_values: int,
        l: float,  # noqa: E741 (the literature's name)
        *,
        bucket_weighting: str = "none",
    ) -> None:
        prepared = _Prepared(column_keys, sensitive_qi_key, sensitive_codes, n_values, l, bucket_weighting)
        self._prepared = prepared
        n, m = prepared.n, prepared.m
        flat = prepared.keys.T.reshape(-1)
        order = np.argsort(flat, kind="stable")
        self._post_rows = np.tile(np.arange(n, dtype=np.int64), prepared.keys.shape[1])[order]
        self._post_start = np.zeros(prepared.total_keys + 1, dtype=np.int64)
        self._post_start[1:] = np.cumsum(np.bincount(flat, minlength=prepared.total_keys))
        self._counts = np.zeros((3, prepared.total_keys), dtype=np.int64)
        self._pair_counts = np.zeros((3, prepared.pair_cardinality), dtype=np.int64)
        self._f_hi = np.zeros(n)
        self._f_lo = np.zeros(n)
        self._n_hi = np.zeros((n, m))
        self._n_lo = np.zeros((n, m))
        self._failing = np.zeros(n, dtype=np.bool_)
        self._n_failing = 0
        self._owner = np.full(n, -1, dtype=np.int64)
        self._buckets: dict[int, np.ndarray] = {}
        self._next_id = 0
        self._n_covered = 0

    # ---- read-only facts

    @property
    def n_records(self) -> int:
        return self._prepared.n

    @property
    def n_values(self) -> int:
        return self._prepared.m

    @property
    def l(self) -> float:  # noqa: E743 - the name of the parameter in the literature
        return self._prepared.l

    @property
    def bucket_weighting(self) -> str:
        return self._prepared.bucket_weighting

    @property
    def buckets(self) -> list[np.ndarray]:
        """The current buckets (sorted row indices, read-only), in order of creation."""
        return list(self._buckets.values())

    @property
    def n_failing(self) -> int:
        """Number of covered tuples with max_s p(t,s) > 1/l + 1e-12."""
        return self._n_failing

    # ---- updates

    def _apply(self, rows: np.ndarray, starts: np.ndarray, signs: np.ndarray):
        p = self._prepared
        return _update(
            p.keys,
            p.q,
            p.pair_key,
            p.pair_value,
            p.q_pair_start,
            self._post_start,
            self._post_rows,
            rows,
            starts,
            signs,
            self._counts,
            self._pair_counts,
            self._owner >= 0,
            self._f_hi,
            self._f_lo,
            self._n_hi,
            self._n_lo,
            self._failing,
            p.threshold,
            p.size_weighting,
        )

    def _commit(self, result) -> None:
        affected, f_hi, f_lo, n_hi, n_lo, failing, delta = result
        _write(
            affected,
            f_hi,
            f_lo,
            n_hi,
            n_lo,
            failing,
            self._f_hi,
            self._f_lo,
            self._n_hi,
            self._n_lo,
            self._failing,
        )
        self._n_failing += int(delta)

    def _store(self, rows: np.ndarray) -> None:
        rows.flags.writeable = False
        self._owner[rows] = self._next_id
        self._buckets[self._next_id] = rows
        self._next_id += 1

    def add_bucket(self, rows: np.ndarray) -> None:
        """Add a bucket of rows not yet in any bucket; its contribution is added without any check."""
        rows = _bucket_rows("rows", rows, self._prepared.n)
        if rows.shape[0] > 1 and np.any(rows[1:] == rows[:-1]):
            raise ConfigError("rows: a row index occurs twice")
        if np.any(self._owner[rows] >= 0):
            raise ConfigError("rows: some rows already lie in a bucket")
        self._store(rows)
        self._n_covered += rows.shape[0]
        self._commit(
            self._apply(
                rows,
                np.array([0, rows.shape[0]], dtype=np.int64),
                np.ones(1),
            )
        )

    def try_split(self, parent: np.ndarray, left: np.ndarray, right: np.ndarray) -> bool:
        """Replace bucket ``parent`` by ``left`` and ``right`` if the result is l-diverse.

        The split is committed iff afterwards every covered tuple has max_s p(t,s) <= 1/l + 1e-12; otherwise
        the state is left exactly (bit for bit) as it was. Only tuples matching ``parent`` are recomputed
        (from their stored F and N: minus the parent's contribution, plus the halves').
        """
        n = self._prepared.n
        parent = _bucket_rows("parent", parent, n)
        left = _bucket_rows("left", left, n)
        right = _bucket_rows("right", right, n)
        bucket = int(self._owner[parent[0]])
        if (
            bucket < 0
            or self._buckets[bucket].shape[0] != parent.shape[0]
            or np.any(self._owner[parent] != bucket)
        ):
            raise ConfigError("parent: not one of the current buckets")
        if parent.shape[0] > 1 and np.any(parent[1:] == parent[:-1]):
            raise ConfigError("parent: a row index occurs twice")
        if left.shape[0] + right.shape[0] != parent.shape[0] or not np.array_equal(
            np.sort(np.concatenate((left, right))), parent
        ):
            raise ConfigError("left, right: the two halves must partition the parent bucket")
        sizes = (parent.shape[0], left.shape[0], right.shape[0])
        starts = np.zeros(4, dtype=np.int64)
        starts[1:] = np.cumsum(sizes)
        result = self._apply(
            np.concatenate((parent, left, right)),
            starts,
            np.array([-1.0, 1.0, 1.0]),
        )
        if self._n_failing + int(result[-1]) != 0:
            return False
        self._commit(result)
        del self._buckets[bucket]
        self._store(left)
        self._store(right)
        return True

    # ---- results

    def probabilities(self) -> np.ndarray:
        """p(t,s) of the current buckets, ``(n, n_values)``; NaN rows for tuples in no bucket."""
        total = self._f_hi + self._f_lo
        numerators = self._n_hi + self._n_lo
        result = np.full_like(numerators, np.nan)
        valid = (self._owner >= 0) & (total > 0)
        result[valid] = numerators[valid] / total[valid, None]
        return result

    def passes(self) -> bool:
        """Whether every row lies in a bucket and every tuple satisfies max_s p(t,s) <= 1/l + 1e-12."""
        return self._n_covered == self._prepared.n and self._n_failing == 0
