"""SUDA2: minimal sample uniques, SUDA and DIS-SUDA scores (Elliot et al. 2002; Manning, Haglin
and Keane 2008), as sdcMicro's ``suda2`` defines them.

A **minimal sample unique** (MSU) of record r is a set S of key variables such that r's values on S
occur in no other record and no proper subset of S has that property. A missing value never forms
part of an MSU: a record with a missing value on v has no value on v that another record could share
or not share, so v is left out of its MSUs; two records never match on a missing value.

Scores, with M the number of key variables (SPEC §7.3)::

    w(s)       = (M - s)!                               original_scores (Elliot's, sdcMicro's default)
    w(s)       = (2^(M-s) - 1) * s! * (M-s)! / M!       legacy IHSN weights (original_scores=False)
    SUDA(r)    = sum over the MSUs S of r of w(|S|)     (0 for a record without MSU)
    contrib_j(r) = sum over the MSUs S of r with j in S of w(|S|) / SUDA(r)
    global contribution of j = 100 * sum_r contrib_j(r) SUDA(r) / sum_r SUDA(r)

DIS-SUDA, sdcMicro's formula: U = records unique on the whole key, P = 2 x patterns of the whole key
occurring exactly twice, pi = the sampling fraction::

    Dis    = U pi / (U pi + P (1 - pi))
    Q      = 1 + (8 - M) / 20
    Adj    = sum over records with SUDA(r) > 0 of SUDA(r)^-Q
    DIS(r) = 1 / (1 + (U / Dis - U) / (SUDA(r)^Q Adj))      (0 when SUDA(r) = 0)

**The search** is the recursive search of SUDA2 (Manning, Haglin & Keane 2008) over integer codes,
compiled with numba. An *item* is a (variable, value) pair; the table T of a search node is the set
of records that contain the node's prefix items p1..pd. In T:

* an item contained in exactly one record of T (a *unique item*) makes the candidate MSU
  {p1..pd, j}; it is unique by construction, and it is minimal iff each of its immediate subsets
  occurs twice. The subset without j is T itself (two records or more); for the subset without p_k
  SUDA2's *support-row property* is checked: some other record contains every item of the
  candidate except p_k. One pass over the records of the candidate's least frequent last item finds
  the support rows of every k at once;
* an item contained in every record of T, or in the same records of T as in the parent table (so
  that no record outside T can be a support row for a set that holds it together with p_d), or in
  no record that is unique on the whole key (every set it is in then occurs twice: only sample
  uniques have MSUs), cannot be part of any MSU that extends the prefix and is dropped;
* the other items are ranked by their count in T (ascending) and the search recurses into the
  subtable T_i of the records containing item i, over the items ranked after i only, so that every
  MSU is found once, from its items in rank order. The depth is bounded by the maximum MSU size;
* the records of a subtable that agree on every variable of the items left are kept as one
  weighted record (every set searched below holds all of them or none), so that a large subtable
  with few variables left is read once per distinct combination, not once per record.

Before the search, a pattern of the whole key that occurs three times or more is cut down to two
records (as sdcMicro's ``Suda2.h`` does): uniqueness only asks whether a combination occurs once or
more than once, and such records have no MSU.

Deviations from sdcMicro: items with identical record sets are searched separately rather than
merged ("correlated" items in ``Suda2.h``, a speed-up that does not change the result); the
maximum MSU size is honoured (``Suda2.h`` resets it to the number of variables); fewer than three
keys are allowed without padding the data with constant dummy columns (which would change M in the
weights, SPEC §7.3); sampling weights and the configuration's wildcard treatment of missing values
are not used (SUDA is defined on the sample, and sdcMicro's ``suda2`` has no wildcard).

References
----------
Elliot, M. J., Manning, A. M. and Ford, R. W. (2002). A computational algorithm for handling the
special uniques problem. International Journal of Uncertainty, Fuzziness and Knowledge-Based
Systems 10(5).
Manning, A. M., Haglin, D. J. and Keane, J. A. (2008). A recursive search algorithm for statistical
disclosure assessment. Data Mining and Knowledge Discovery 16(2), 165-196.
Templ, M., Kowarik, A. and Meindl, B. (2015). Statistical disclosure control for micro-data using
the R package sdcMicro. Journal of Statistical Software 67(4) (``suda2``).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Annotated, Any

import numpy as np
import polars as pl
from pydantic import Field

from sdckit._numba import njit
from sdckit.errors import ConfigError
from sdckit.frequency import Encoding, encode, extend_keys, initial_keys
from sdckit.measures import Context, register_measure
from sdckit.params import Finite, MethodParams, Whole
from sdckit.table import Role, Table

#: DIS-SUDA thresholds whose exceedances the summary counts.
DIS_THRESHOLDS = (0.01, 0.05, 0.1)
#: Variable sets are bit masks of one int64.
MAX_KEYS = 62


# ---------------------------------------------------------------------------------------------------
# The SUDA2 recursive search (compiled)
# ---------------------------------------------------------------------------------------------------


@njit(cache=True)
def _grow(array, size):  # pragma: no cover - compiled
    bigger = np.empty(max(2 * array.shape[0], size), dtype=array.dtype)
    bigger[: array.shape[0]] = array
    return bigger


@njit(cache=True)
def _supported(
    codes,
    item_var,
    item_value,
    item_start,
    item_rows,
    counts,
    rank,
    bucket_start,
    bucket_rows,
    prefix,
    depth,
    j,
    u,
):  # pragma: no cover - compiled
    """Support-row property of the candidate {prefix[0..depth-1], j}, unique to record u: for every
    k < depth - 1, some record other than u contains all its items but prefix[k] (the subset without
    prefix[depth-1] is known to occur twice). Such a row lies in the table T_k of level k; it is
    looked for among the records of T_k that hold the candidate's item least frequent in T_k (level
    k's bucket of that item), deepest level first."""
    for k in range(depth - 2, -1, -1):
        scan = j
        for t in range(k + 1, depth):
            if counts[k, prefix[t]] < counts[k, scan]:
                scan = prefix[t]
        if k == 0:
            lo = item_start[scan]
            hi = item_start[scan + 1]
            rows = item_rows
        else:
            lo = bucket_start[k, rank[k, scan]]
            hi = bucket_start[k, rank[k, scan] + 1]
            rows = bucket_rows[k]
        found = False
        for q in range(lo, hi):
            r = rows[q]
            if r == u or codes[r, item_var[j]] != item_value[j]:
                continue
            matched = True
            for t in range(k + 1, depth):
                item = prefix[t]
                if codes[r, item_var[item]] != item_value[item]:
                    matched = False
                    break
            if matched:
                found = True
                break
        if not found:
            return False
    return True


@njit(cache=True)
def _rank_items(items, count, counts, n_items):  # pragma: no cover - compiled
    """Sort ``items[:count]`` in place by (count, item)."""
    if count <= 32:  # insertion sort: no allocation for the many small subtables
        for k in range(1, count):
            item = items[k]
            key = np.int64(counts[item]) * n_items + item
            t = k - 1
            while t >= 0 and np.int64(counts[items[t]]) * n_items + items[t] > key:
                items[t + 1] = items[t]
                t -= 1
            items[t + 1] = item
        return
    keys = np.empty(count, dtype=np.int64)
    for k in range(count):
        keys[k] = np.int64(counts[items[k]]) * n_items + items[k]
    order = np.argsort(keys)
    ranked = items[:count][order]
    items[:count] = ranked


@njit(cache=True)
def _suda2_search(
    codes, unique_row, item_offsets, item_var, item_value, item_start, item_rows, max_size, first, last
):  # pragma: no cover - compiled
    """MSUs (record, variable mask) found under the top-level items of ranks first..last-1 (and the
    MSUs of size 1 when first == 0). See the module docstring for the search.

    One compiled function, longer than the 150 lines allowed elsewhere: the depth-first search keeps
    its per-level state (counts, ranks, buckets, the output) in arrays of this frame and walks the
    levels with an explicit stack; splitting it into compiled helpers for its steps would pass a
    dozen of those arrays per call in the innermost loop, which costs speed."""
    n, m = codes.shape
    n_items = item_var.shape[0]
    levels = max(max_size, 1)
    out_rows = np.empty(1024, dtype=np.int64)
    out_masks = np.empty(1024, dtype=np.int64)
    n_out = 0

    counts = np.zeros((levels, n_items), dtype=np.int32)
    first_row = np.empty((levels, n_items), dtype=np.int32)
    in_unique = np.zeros((levels, n_items), dtype=np.bool_)
    rank = np.full((levels, n_items), -1, dtype=np.int32)
    ranked = np.empty((levels, n_items), dtype=np.int32)
    n_ranked = np.zeros(levels, dtype=np.int64)
    position = np.zeros(levels, dtype=np.int64)
    touched = np.empty((levels, n_items), dtype=np.int32)
    n_touched = np.zeros(levels, dtype=np.int64)
    prefix = np.empty(levels, dtype=np.int32)
    # later_vars[d, k]: the variables of the items ranked k or later at level d (a bit mask), so that
    # a subtable is read on the variables that can still extend its prefix only.
    later_vars = np.zeros((levels, n_items + 1), dtype=np.int64)
    variables = np.empty(m, dtype=np.int64)

    # Level 0: the whole table.
    largest = 0
    for item in range(n_items):
        count = item_start[item + 1] - item_start[item]
        counts[0, item] = count
        if count == 1 and first == 0:
            if n_out == out_rows.shape[0]:
                out_rows = _grow(out_rows, n_out + 1)
                out_masks = _grow(out_masks, n_out + 1)
            out_rows[n_out] = item_rows[item_start[item]]
            out_masks[n_out] = np.int64(1) << item_var[item]
            n_out += 1
        elif 2 <= count < n and max_size >= 2:
            for q in range(item_start[item], item_start[item + 1]):
                if unique_row[item_rows[q]]:
                    in_unique[0, item] = True
                    break
            if not in_unique[0, item]:
                continue
            ranked[0, n_ranked[0]] = item
            n_ranked[0] += 1
            largest = max(largest, count)
    _rank_items(ranked[0], n_ranked[0], counts[0], n_items)
    for k in range(n_ranked[0]):
        rank[0, ranked[0, k]] = k
    for k in range(n_ranked[0] - 1, -1, -1):
        later_vars[0, k] = later_vars[0, k + 1] | (np.int64(1) << item_var[ranked[0, k]])
    # Rows of a table's subtables, bucketed by item (level 0 uses the global lists). From level 1 on,
    # the rows of a subtable that agree on every variable that can still extend its prefix are one
    # row (the first of them) with their number as weight: every set searched below it either holds
    # all of them or none.
    deep = max_size >= 3
    capacity = max(largest, 1) if deep else 1
    bucket_start = np.zeros((levels, n_items + 1), dtype=np.int64)
    bucket_rows = np.empty((levels, capacity * m), dtype=np.int32)
    bucket_weights = np.empty((levels, capacity * m), dtype=np.int32)
    fill = np.empty(n_items + 1, dtype=np.int64)
    table_size = 1
    while table_size < 2 * capacity:
        table_size *= 2
    slots = np.full(table_size, -1, dtype=np.int64)
    group_row = np.empty(capacity, dtype=np.int32)
    group_weight = np.empty(capacity, dtype=np.int32)
    group_slot = np.empty(capacity, dtype=np.int64)

    if max_size < 2:
        return out_rows[:n_out], out_masks[:n_out]
    d = 0
    position[0] = first
    stop0 = min(last, n_ranked[0])
    while True:
        stop = stop0 if d == 0 else n_ranked[d]
        if position[d] < stop:
            i = ranked[d, position[d]]
            rank_i = rank[d, i]
            if d == 0:
                lo = item_start[i]
                hi = item_start[i + 1]
            else:
                lo = bucket_start[d, rank_i]
                hi = bucket_start[d, rank_i + 1]
            c = d + 1
            prefix[d] = i
            size = 0
            nt = 0
            n_variables = 0
            for v in range(m):
                if later_vars[d, rank_i + 1] >> v & 1:
                    variables[n_variables] = v
                    n_variables += 1
            # Count the items ranked after i in the subtable of i.
            for q in range(lo, hi):
                if d == 0:
                    r = item_rows[q]
                    weight = 1
                else:
                    r = bucket_rows[d, q]
                    weight = bucket_weights[d, q]
                size += weight
                alone = weight == 1 and unique_row[r]
                for w in range(n_variables):
                    v = variables[w]
                    code = codes[r, v]
                    if code < 0:
                        continue
                    item = item_offsets[v] + code
                    if rank[d, item] > rank_i:
                        if counts[c, item] == 0:
                            touched[c, nt] = item
                            nt += 1
                            first_row[c, item] = r
                        counts[c, item] += weight
                        if alone:
                            in_unique[c, item] = True
            extend = c + 2 <= max_size
            ne = 0
            for t in range(nt):
                j = touched[c, t]
                count = counts[c, j]
                if count == 1:
                    u = first_row[c, j]
                    if _supported(
                        codes,
                        item_var,
                        item_value,
                        item_start,
                        item_rows,
                        counts,
                        rank,
                        bucket_start,
                        bucket_rows,
                        prefix,
                        c,
                        j,
                        u,
                    ):
                        if n_out == out_rows.shape[0]:
                            out_rows = _grow(out_rows, n_out + 1)
                            out_masks = _grow(out_masks, n_out + 1)
                        mask = np.int64(1) << item_var[j]
                        for k in range(c):
                            mask |= np.int64(1) << item_var[prefix[k]]
                        out_rows[n_out] = u
                        out_masks[n_out] = mask
                        n_out += 1
                elif count == counts[d, j] or count == size or not in_unique[c, j]:
                    continue
                elif extend:
                    ranked[c, ne] = j
                    ne += 1
            if ne > 0:
                _rank_items(ranked[c], ne, counts[c], n_items)
                for k in range(ne):
                    rank[c, ranked[c, k]] = k
                later_vars[c, ne] = 0
                for k in range(ne - 1, -1, -1):
                    later_vars[c, k] = later_vars[c, k + 1] | (np.int64(1) << item_var[ranked[c, k]])
                n_variables = 0
                for v in range(m):
                    if later_vars[c, 0] >> v & 1:
                        variables[n_variables] = v
                        n_variables += 1
                # Merge the subtable's rows that agree on the variables left, then bucket them.
                n_groups = 0
                for q in range(lo, hi):
                    if d == 0:
                        r = item_rows[q]
                        weight = 1
                    else:
                        r = bucket_rows[d, q]
                        weight = bucket_weights[d, q]
                    h = np.int64(0)
                    for w in range(n_variables):
                        h = (h ^ (codes[r, variables[w]] + 1)) * np.int64(1099511628211)
                    slot = (h ^ (h >> 29)) & (table_size - 1)
                    while True:
                        g = slots[slot]
                        if g < 0:
                            slots[slot] = n_groups
                            group_row[n_groups] = r
                            group_weight[n_groups] = weight
                            group_slot[n_groups] = slot
                            n_groups += 1
                            break
                        other = group_row[g]
                        same = True
                        for w in range(n_variables):
                            if codes[other, variables[w]] != codes[r, variables[w]]:
                                same = False
                                break
                        if same:
                            group_weight[g] += weight
                            break
                        slot = (slot + 1) & (table_size - 1)
                for g in range(n_groups):
                    slots[group_slot[g]] = -1
                for k in range(ne + 1):
                    fill[k] = 0
                for g in range(n_groups):
                    r = group_row[g]
                    for w in range(n_variables):
                        v = variables[w]
                        code = codes[r, v]
                        if code >= 0:
                            k = rank[c, item_offsets[v] + code]
                            if k >= 0:
                                fill[k + 1] += 1
                for k in range(ne):
                    fill[k + 1] += fill[k]
                for k in range(ne + 1):
                    bucket_start[c, k] = fill[k]
                for g in range(n_groups):
                    r = group_row[g]
                    for w in range(n_variables):
                        v = variables[w]
                        code = codes[r, v]
                        if code >= 0:
                            k = rank[c, item_offsets[v] + code]
                            if k >= 0:
                                bucket_rows[c, fill[k]] = r
                                bucket_weights[c, fill[k]] = group_weight[g]
                                fill[k] += 1
                n_ranked[c] = ne
                n_touched[c] = nt
                position[c] = 0
                d = c
            else:
                for t in range(nt):
                    counts[c, touched[c, t]] = 0
                    in_unique[c, touched[c, t]] = False
                position[d] += 1
        else:
            if d == 0:
                break
            for t in range(n_touched[d]):
                counts[d, touched[d, t]] = 0
                in_unique[d, touched[d, t]] = False
            for k in range(n_ranked[d]):
                rank[d, ranked[d, k]] = -1
            d -= 1
            position[d] += 1
    return out_rows[:n_out], out_masks[:n_out]


def _item_index(codes: np.ndarray, cardinalities: np.ndarray) -> tuple[np.ndarray, ...]:
    """Items of the coded table: offsets per variable, each item's variable and value, and the
    records of each item (CSR: ``rows[start[i]:start[i+1]]``, in record order)."""
    n, m = codes.shape
    offsets = np.zeros(m + 1, dtype=np.int64)
    offsets[1:] = np.cumsum(cardinalities)
    n_items = int(offsets[-1])
    item_var = np.repeat(np.arange(m, dtype=np.int64), cardinalities)
    item_value = (np.arange(n_items, dtype=np.int64) - offsets[item_var]).astype(np.int32)
    present = codes >= 0
    items = (codes.astype(np.int64) + offsets[:m][None, :])[present]
    records = np.broadcast_to(np.arange(n, dtype=np.int32)[:, None], codes.shape)[present]
    order = np.argsort(items, kind="stable")
    rows = records[order].astype(np.int32)
    start = np.zeros(n_items + 1, dtype=np.int64)
    start[1:] = np.cumsum(np.bincount(items, minlength=n_items))
    return offsets, item_var, item_value, start, rows


def find_msus(
    codes: np.ndarray,
    cardinalities: np.ndarray | list[int],
    max_size: int,
    progress: Any = None,
) -> tuple[np.ndarray, np.ndarray]:
    """All minimal sample uniques of size <= ``max_size`` by the SUDA2 recursive search.

    ``codes`` is an (n, M) integer matrix of codes ``0 .. cardinalities[j]-1``, -1 for missing.
    Returns ``(records, masks)``: the record of each MSU and its variables as a bit mask (bit j =
    column j), sorted by record then mask.
    """
    codes = np.ascontiguousarray(codes, dtype=np.int32)
    n, m = codes.shape
    cardinalities = np.asarray(cardinalities, dtype=np.int64)
    if n == 0 or m == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty.copy()
    keys = _pattern_keys(codes, cardinalities)
    kept = _at_most_two_per_pattern(keys)
    reduced = np.ascontiguousarray(codes[kept])
    unique_row = (np.bincount(keys) == 1)[keys[kept]]
    offsets, item_var, item_value, start, rows = _item_index(reduced, cardinalities)
    n_items = len(item_var)
    counts = np.diff(start)
    # The top-level items the search recurses into: in two records or more, not in all, and in a
    # sample unique (only sample uniques have MSUs). The chunks split them for the progress bar.
    holds = np.zeros(n_items, dtype=bool)
    holds[np.repeat(np.arange(n_items), counts)[unique_row[rows]]] = True
    top = int(np.count_nonzero((counts >= 2) & (counts < len(reduced)) & holds)) if max_size >= 2 else 0
    chunks = max(1, min(50, top))
    bounds = np.linspace(0, top, chunks + 1).round().astype(np.int64)
    found_rows, found_masks = [], []
    for index in range(chunks):
        first = int(bounds[index])
        last = int(bounds[index + 1]) if index + 1 < chunks else n_items
        got_rows, got_masks = _suda2_search(
            reduced, unique_row, offsets, item_var, item_value, start, rows, int(max_size), first, last
        )
        found_rows.append(got_rows)
        found_masks.append(got_masks)
        if progress is not None:
            progress(index + 1, chunks)
    records = kept[np.concatenate(found_rows)].astype(np.int64)
    masks = np.concatenate(found_masks).astype(np.int64)
    order = np.lexsort((masks, records))
    return records[order], masks[order]


def _pattern_keys(codes: np.ndarray, cardinalities: np.ndarray) -> np.ndarray:
    """Dense keys of the records' value combinations on the columns of ``codes`` (missing as a
    value of its own), by the counting kernel of :mod:`sdckit.frequency`."""
    keys, sizes = initial_keys(codes.shape[0])
    for j in range(codes.shape[1]):
        keys, sizes = extend_keys(keys, sizes, codes[:, j], int(cardinalities[j]))
    return keys.astype(np.int64)


def _at_most_two_per_pattern(keys: np.ndarray) -> np.ndarray:
    """Indices of the records kept when every whole-key pattern (``keys``) is cut down to two records."""
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    starts = np.r_[True, sorted_keys[1:] != sorted_keys[:-1]]
    group_start = np.maximum.accumulate(np.where(starts, np.arange(len(keys)), 0))
    occurrence = np.arange(len(keys)) - group_start
    return np.sort(order[occurrence < 2])


def brute_force_msus(
    codes: np.ndarray, max_size: int, cardinalities: np.ndarray | list[int] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """MSUs by the simple exact algorithm of SPEC §7.3 (the test oracle and benchmark baseline):
    for every variable subset S of size 1..max_size, group the records by their values on S, mark
    the unique ones (no missing value on S), and keep S for record r iff r is unique on S and on
    none of S's immediate subsets. Same output as :func:`find_msus`."""
    codes = np.asarray(codes, dtype=np.int32)
    n, m = codes.shape
    if cardinalities is None:
        cardinalities = codes.max(axis=0, initial=-1) + 1 if n else np.zeros(m, dtype=np.int64)
    cardinalities = np.asarray(cardinalities, dtype=np.int64)
    unique_on: dict[int, np.ndarray] = {}
    records, masks = [], []
    for size in range(1, max_size + 1):
        current: dict[int, np.ndarray] = {}
        for subset in itertools.combinations(range(m), size):
            columns = codes[:, subset]
            keys = _pattern_keys(columns, cardinalities[list(subset)])
            unique = (np.bincount(keys)[keys] == 1) & (columns >= 0).all(axis=1)
            mask = sum(1 << j for j in subset)
            minimal = unique.copy()
            if size > 1:
                for j in subset:
                    minimal &= ~unique_on[mask ^ (1 << j)]
            current[mask] = unique
            hits = np.flatnonzero(minimal)
            records.append(hits)
            masks.append(np.full(len(hits), mask, dtype=np.int64))
        unique_on = current
    if not records:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty.copy()
    all_records = np.concatenate(records).astype(np.int64)
    all_masks = np.concatenate(masks)
    order = np.lexsort((all_masks, all_records))
    return all_records[order], all_masks[order]


# ---------------------------------------------------------------------------------------------------
# Scores
# ---------------------------------------------------------------------------------------------------


def score_weights(n_keys: int, original_scores: bool = True) -> np.ndarray:
    """w(s) for s = 0..M (index s): (M-s)! (Elliot's), or the IHSN (2^(M-s)-1) s! (M-s)! / M!."""
    m = n_keys
    sizes = range(m + 1)
    if original_scores:
        return np.array([float(math.factorial(m - s)) for s in sizes])
    return np.array(
        [(2.0 ** (m - s) - 1) * math.factorial(s) * math.factorial(m - s) / math.factorial(m) for s in sizes]
    )


def dis_suda_scores(suda: np.ndarray, uniques: int, pairs: int, n_keys: int, fraction: float) -> np.ndarray:
    """DIS-SUDA of every record from its SUDA score (sdcMicro's formula, SPEC §7.3): ``uniques`` = U,
    ``pairs`` = P (twice the number of whole-key patterns occurring exactly twice)."""
    suda = np.asarray(suda, dtype=np.float64)
    dis = np.zeros_like(suda)
    positive = suda > 0
    if not positive.any():
        return dis
    q = 1.0 + (8.0 - n_keys) / 20.0
    adjustment = float(np.sum(suda[positive] ** -q))
    dis_fraction = uniques * fraction / (uniques * fraction + pairs * (1.0 - fraction))
    excess = uniques / dis_fraction - uniques
    dis[positive] = 1.0 / (1.0 + excess / (suda[positive] ** q * adjustment))
    return dis


@dataclass(frozen=True)
class SudaResult:
    """Minimal sample uniques and SUDA / DIS-SUDA scores of every record (Elliot et al. 2002;
    Manning, Haglin & Keane 2008; sdcMicro's ``suda2``; see the module docstring for the formulas
    and the deviations from sdcMicro).

    ``msu_records[i]`` / ``msu_masks[i]``: record and variable set (bit j = ``keys[j]``) of the i-th
    MSU, sorted by record then mask. Per record: ``suda`` (SUDA score), ``dis`` (DIS-SUDA score),
    ``msu_count``, ``smallest`` (size of its smallest MSU, 0 if none), ``contributions`` (n x M,
    contrib_j(r); 0 for a record without MSU). ``global_contributions[j]`` in percent (0 when no
    record has an MSU). ``uniques`` = U, ``pairs`` = P.
    """

    keys: tuple[str, ...]
    max_size: int
    dis_fraction: float
    original_scores: bool
    msu_records: np.ndarray
    msu_masks: np.ndarray
    suda: np.ndarray
    dis: np.ndarray
    msu_count: np.ndarray
    smallest: np.ndarray
    contributions: np.ndarray
    global_contributions: np.ndarray
    uniques: int
    pairs: int
    top: int
    key_values: tuple[pl.Series, ...] = ()

    @property
    def n_records(self) -> int:
        return len(self.suda)

    def msus_of(self, record: int) -> list[tuple[str, ...]]:
        """The MSUs of one record, as tuples of key names."""
        lo, hi = np.searchsorted(self.msu_records, [record, record + 1])
        return [self._names(int(mask)) for mask in self.msu_masks[lo:hi]]

    def _names(self, mask: int) -> tuple[str, ...]:
        return tuple(name for j, name in enumerate(self.keys) if mask >> j & 1)

    def counts_by_size(self) -> dict[str, int]:
        sizes = _popcount(self.msu_masks)
        counted = np.bincount(sizes, minlength=self.max_size + 1)
        return {str(s): int(counted[s]) for s in range(1, self.max_size + 1)}

    def riskiest(self, count: int | None = None) -> list[dict[str, Any]]:
        """The ``count`` (default ``top``) records with the highest SUDA score (then DIS-SUDA score,
        then record order) among those with a positive score, each with its MSUs (smallest first) as
        ``name=value`` lists."""
        count = self.top if count is None else count
        order = np.lexsort((np.arange(self.n_records), -self.dis, -self.suda))
        order = order[self.suda[order] > 0][:count]
        rows = []
        for record in order:
            lo, hi = np.searchsorted(self.msu_records, [record, record + 1])
            masks = self.msu_masks[lo:hi]
            msus = []
            for mask in masks[np.lexsort((masks, _popcount(masks)))]:
                items = []
                for j, name in enumerate(self.keys):
                    if int(mask) >> j & 1:
                        value = self.key_values[j][int(record)] if self.key_values else None
                        items.append(f"{name}={value}")
                msus.append(items)
            rows.append(
                {
                    "record": int(record),
                    "suda_score": float(self.suda[record]),
                    "dis_suda_score": float(self.dis[record]),
                    "msus": int(self.msu_count[record]),
                    "smallest_msu": int(self.smallest[record]),
                    "msu_sets": msus,
                }
            )
        return rows


def _popcount(masks: np.ndarray) -> np.ndarray:
    masks = np.asarray(masks, dtype=np.uint64)
    counts = np.zeros(masks.shape, dtype=np.int64)
    for shift in range(MAX_KEYS + 1):
        counts += ((masks >> np.uint64(shift)) & np.uint64(1)).astype(np.int64)
    return counts


def suda_scores(
    codes: np.ndarray,
    cardinalities: np.ndarray | list[int],
    keys: tuple[str, ...] | list[str],
    *,
    max_size: int | None = None,
    dis_fraction: float = 0.01,
    original_scores: bool = True,
    top: int = 10,
    key_values: tuple[pl.Series, ...] = (),
    progress: Any = None,
    search: str = "suda2",
) -> SudaResult:
    """SUDA2 on a coded table (``codes`` n x M, -1 for missing); ``search="brute-force"`` uses the
    simple exact algorithm instead (for tests and benchmarks)."""
    codes = np.asarray(codes)
    n, m = codes.shape
    keys = tuple(keys)
    if m == 0:
        raise ConfigError("SUDA needs at least one key variable (an attribute with role quasi-identifier)")
    if m > MAX_KEYS:
        raise ConfigError(f"SUDA takes at most {MAX_KEYS} key variables, got {m}")
    max_size = m if max_size is None else max_size
    if not 1 <= max_size <= m:
        raise ConfigError(f"max_size must be between 1 and the number of key variables ({m}), got {max_size}")
    if not 0 < dis_fraction <= 1:
        raise ConfigError(f"dis_fraction must be in (0, 1], got {dis_fraction}")
    if search == "suda2":
        records, masks = find_msus(codes, cardinalities, max_size, progress=progress)
    elif search == "brute-force":
        records, masks = brute_force_msus(codes, max_size, cardinalities)
    else:
        raise ConfigError(f"search must be suda2 or brute-force, got {search!r}")

    weights = score_weights(m, original_scores)
    sizes = _popcount(masks)
    msu_weights = weights[sizes]
    suda = np.bincount(records, weights=msu_weights, minlength=n).astype(np.float64)
    msu_count = np.bincount(records, minlength=n).astype(np.int64)
    smallest_of = np.full(n, m + 1, dtype=np.int64)
    np.minimum.at(smallest_of, records, sizes)
    smallest = np.where(msu_count > 0, smallest_of, 0)
    contributions = np.zeros((n, m), dtype=np.float64)
    weighted = np.zeros(m, dtype=np.float64)
    for j in range(m):
        holds = (masks >> j) & 1 == 1
        per_record = np.bincount(records[holds], weights=msu_weights[holds], minlength=n)
        weighted[j] = per_record.sum()
        np.divide(per_record, suda, out=contributions[:, j], where=suda > 0)
    total = float(suda.sum())
    global_contributions = 100.0 * weighted / total if total > 0 else np.zeros(m)

    cardinalities = np.asarray(cardinalities, dtype=np.int64)
    pattern_sizes = np.bincount(_pattern_keys(codes, cardinalities)) if n else np.zeros(0, dtype=np.int64)
    uniques = int(np.count_nonzero(pattern_sizes == 1))
    pairs = 2 * int(np.count_nonzero(pattern_sizes == 2))
    dis = dis_suda_scores(suda, uniques, pairs, m, dis_fraction)
    return SudaResult(
        keys=keys,
        max_size=max_size,
        dis_fraction=dis_fraction,
        original_scores=original_scores,
        msu_records=records,
        msu_masks=masks,
        suda=suda,
        dis=dis,
        msu_count=msu_count,
        smallest=smallest,
        contributions=contributions,
        global_contributions=global_contributions,
        uniques=uniques,
        pairs=pairs,
        top=top,
        key_values=key_values,
    )


def key_encoding(table: Table) -> Encoding:
    """Integer codes of the key variables: the attributes with role quasi-identifier."""
    names = [attribute.name for attribute in table.schema.with_role(Role.QUASI_IDENTIFIER)]
    if not names:
        raise ConfigError(
            "SUDA needs key variables: the configuration gives no attribute the role quasi-identifier"
        )
    return encode(table.data, names)


def suda(
    table: Table,
    *,
    max_size: int | None = None,
    dis_fraction: float = 0.01,
    original_scores: bool = True,
    top: int = 10,
    progress: Any = None,
    search: str = "suda2",
) -> SudaResult:
    """SUDA2 on a table: the key variables are its quasi-identifiers (see :func:`suda_scores`)."""
    encoding = key_encoding(table)
    codes = np.column_stack(encoding.codes) if encoding.codes else np.zeros((table.n_records, 0), np.int32)
    values = tuple(
        table.data.get_column(name).cast(pl.String, strict=False).fill_null("") for name in encoding.names
    )
    return suda_scores(
        codes,
        list(encoding.cardinalities),
        encoding.names,
        max_size=max_size,
        dis_fraction=dis_fraction,
        original_scores=original_scores,
        top=top,
        key_values=values,
        progress=progress,
        search=search,
    )


# ---------------------------------------------------------------------------------------------------
# The measure
# ---------------------------------------------------------------------------------------------------


class SudaParams(MethodParams):
    """Parameters of SUDA2 (``sdckit risk suda``); the key variables are the quasi-identifiers."""

    max_size: Annotated[
        Whole | None, Field(ge=1, description="Largest MSU searched (default: the number of key variables).")
    ] = None
    dis_fraction: Annotated[
        Finite, Field(gt=0, le=1, description="Sampling fraction of the DIS-SUDA score, in (0, 1].")
    ] = 0.01
    original_scores: Annotated[
        bool, Field(description="Elliot's weights (M-s)!; --no-original-scores: the legacy IHSN weights.")
    ] = True
    top: Annotated[Whole, Field(ge=0, description="How many of the riskiest records to list.")] = 10


def records(result: SudaResult) -> pl.DataFrame:
    """One row per record in input order: SUDA and DIS-SUDA scores, number of MSUs, size of the
    smallest (null if none), and each key variable's contribution contrib_j(r)."""
    smallest = pl.Series("smallest_msu", result.smallest, dtype=pl.Int64)
    return pl.DataFrame(
        {
            "record": np.arange(result.n_records, dtype=np.int64),
            "suda_score": result.suda,
            "dis_suda_score": result.dis,
            "msus": result.msu_count,
            "smallest_msu": smallest.set(smallest == 0, None) if result.n_records else smallest,
            **{f"contribution_{name}": result.contributions[:, j] for j, name in enumerate(result.keys)},
        }
    )


def summary(result: SudaResult) -> dict[str, Any]:
    """File-level figures (JSON-ready)."""
    n = result.n_records
    return {
        "records": n,
        "keys": list(result.keys),
        "max_size": result.max_size,
        "dis_fraction": result.dis_fraction,
        "original_scores": result.original_scores,
        "sample_uniques": result.uniques,
        "sample_pairs": result.pairs,
        "records_with_msu": int(np.count_nonzero(result.msu_count)),
        "msus": len(result.msu_records),
        "msu_counts_by_size": result.counts_by_size(),
        "contributions": {name: float(result.global_contributions[j]) for j, name in enumerate(result.keys)},
        "suda": {
            "mean": float(result.suda.mean()) if n else 0.0,
            "max": float(result.suda.max()) if n else 0.0,
        },
        "dis_suda": {
            "mean": float(result.dis.mean()) if n else 0.0,
            "max": float(result.dis.max()) if n else 0.0,
            "above": {f"{t:g}": int(np.count_nonzero(result.dis > t)) for t in DIS_THRESHOLDS},
        },
        "riskiest": result.riskiest(),
    }


def report(figures: dict[str, Any]) -> list[Any]:
    """What a person reads: counts, scores, contributions and the riskiest records."""
    from rich.table import Table as RichTable
    from rich.text import Text

    by_size = ", ".join(f"{size}: {count:,}" for size, count in figures["msu_counts_by_size"].items())
    dis = figures["dis_suda"]
    above = ", ".join(f"> {t}: {count:,}" for t, count in dis["above"].items())
    lines: list[Any] = [
        f"keys: {', '.join(figures['keys'])} (MSUs up to size {figures['max_size']})",
        f"sample uniques: {figures['sample_uniques']:,}; records with an MSU: "
        f"{figures['records_with_msu']:,}; MSUs: {figures['msus']:,} (by size {by_size})",
        f"SUDA score: mean {figures['suda']['mean']:.4g}, max {figures['suda']['max']:.4g}",
        f"DIS-SUDA score: mean {dis['mean']:.4g}, max {dis['max']:.4g}; records {above}",
    ]
    contributions = RichTable(title="contribution of each key variable (% of the SUDA scores)")
    contributions.add_column("variable")
    contributions.add_column("contribution %", justify="right")
    for name, share in sorted(figures["contributions"].items(), key=lambda item: -item[1]):
        contributions.add_row(name, f"{share:.2f}")
    lines.append(contributions)
    if figures["riskiest"]:
        riskiest = RichTable(title="riskiest records")
        # The identifier's value after the record, when the configuration has one
        # (sdckit.risk.identifiers).
        identifier = figures.get("identifier")
        riskiest.add_column("record", justify="right")
        if identifier:
            riskiest.add_column(identifier)
        for column in ("SUDA", "DIS-SUDA", "MSUs", "smallest MSU"):
            riskiest.add_column(column, justify="right")
        riskiest.add_column("smallest MSUs")
        for row in figures["riskiest"]:
            shown = [items for items in row["msu_sets"] if len(items) == row["smallest_msu"]][:3]
            named = [Text(row["identifier"] or "")] if identifier else []  # as text, not markup
            riskiest.add_row(
                str(row["record"]),
                *named,
                f"{row['suda_score']:.4g}",
                f"{row['dis_suda_score']:.4g}",
                str(row["msus"]),
                str(row["smallest_msu"]),
                "; ".join(", ".join(items) for items in shown),
            )
        lines.append(riskiest)
    return lines


@register_measure(
    "suda",
    "risk",
    SudaParams,
    summary=summary,
    help="SUDA2: minimal sample uniques, SUDA and DIS-SUDA scores (sdcMicro's suda2).",
    report=report,
    records=records,
    progress_label="SUDA2 search",
    headline="dis_suda.mean",
)
def _run_suda(table: Table, params: SudaParams, context: Context) -> SudaResult:
    return suda(
        table,
        max_size=params.max_size,
        dis_fraction=params.dis_fraction,
        original_scores=params.original_scores,
        top=params.top,
        progress=context.progress,
    )
