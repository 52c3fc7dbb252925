"""Local suppression and risk-targeted value suppression.

Value suppression replaces single quasi-identifier cells by a real null (never a whole record), so
that the released table satisfies a privacy model while most of its values stay exact.

:func:`local_suppression` reaches k-anonymity the way sdcMicro's ``localSuppression`` does
(Templ, Kowarik & Meindl 2015; Templ 2017): greedily, suppressing values of the attributes the user
ranks least important first, until every record matches at least ``k`` records when a null matches
every value (sdcMicro's wildcard semantics, :mod:`sdckit.frequency`).

:func:`targeted_suppression` is the algorithm of Figure 1 of Orooji & Knapp (2019): only the
records whose combined risk D(r) (:mod:`sdckit.risk.combined`) exceeds a threshold are touched, and in
each only the values of the known set with the largest contribution ``L * alpha * C`` to its risk.

References
----------
Templ, M., Kowarik, A. and Meindl, B. (2015). Statistical Disclosure Control for Micro-Data Using the
R Package sdcMicro. *Journal of Statistical Software* 67(4), 1-36.

Templ, M. (2017). *Statistical Disclosure Control for Microdata: Methods and Applications in R*.
Springer.

Orooji, M. and Knapp, G. M. (2019). Improving suppression to reduce disclosure risk and enhance data
utility. *Proceedings of the IISE Annual Conference*.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Annotated, Any, Literal

import numpy as np
import polars as pl
from numba import njit, types
from numba.typed import Dict, List
from pydantic import BeforeValidator, Field, model_validator

from sdckit.anonymize.base import Context, ExtraOutput, achieved_report, cells_report, register_method
from sdckit.anonymize.release import Release
from sdckit.errors import ConfigError
from sdckit.frequency import (
    check_missing,
    check_weights,
    encode,
    group_keys,
    group_sizes,
    pattern_codes,
    wildcard_pattern_sizes,
)
from sdckit.params import Finite, MethodParams, Whole
from sdckit.risk.combined import RecordRisk, combined_risk
from sdckit.table import Role, Schema, Table

ProgressCallback = Callable[[int, int], None]

# Violating patterns handed to one compiled call between two progress reports.
_CHUNK = 512
# First size of the hash tables of the candidate indexes (they double as needed).
_CAPACITY = 1 << 16


# ----------------------------------------------------------------------------------------------
# Compiled greedy kernels. ``patterns`` is (G x q) int32 codes, -1 = null, with the columns in
# suppression order (least important attribute first), so "the least important attribute with a
# property" is the smallest column index with it. Rows are edited in place; two rows may become equal,
# which the counts below handle (every row is counted with its own weight).
#
# A visited row p needs the rows within one mismatch of it (mismatch: both non-null and different).
# Scanning every row for each visit is O(violating x G); instead the rows are grouped by null mask M.
# For a group and p's mask P the compared attributes are C = ~(P | M), and a row of the group is within
# one mismatch of p iff it equals p on C minus some j in C. So each group keeps hash indexes keyed by
# the values on an attribute set D, each built the first time a visit needs (M, D) and then kept up to
# date (a row that gains a null is inserted into the indexes of its new group). Entries are never
# removed (a row that left a group stays listed there), so every candidate is checked exactly against
# the current patterns, and the weights are summed in row order as a full scan sums them: the result
# is bit-identical to scanning every row. A visit that would gather many candidates (a pattern with
# few values left, or very many null masks) scans every row instead.

# Multipliers of the index hash (odd 64-bit constants as signed integers). Collisions only add
# candidates, which the exact check drops.
_HASH_A = -7046029254386353131  # 0x9E3779B97F4A7C15
_HASH_B = -4658895280553007687  # 0xBF58476D1CE4E5B9

# Positions in the typed list of int64 arrays that holds the index state (see _index_new).
_ROW_MASK, _MASK_VALUE, _MASK_MEMBERS, _GROUP_HEAD, _GROUP_NEXT, _GROUP_ROW = 0, 1, 2, 3, 4, 5
_BUILT_HEAD, _BUILT_NEXT, _BUILT_SET, _ENTRIES, _FILTER, _SIZES = 6, 7, 8, 9, 10, 11
_SEEN, _FOUND, _BUCKETS, _BUILT_KEY_GROUP, _BUILT_KEY_SET = 12, 13, 14, 15, 16
# Positions in the _SIZES array: counters of the state, then statistics.
_N_MASKS, _N_GROUP_ENTRIES, _N_BUILT, _N_ENTRIES, _N_BUCKETS, _STAMP = 0, 1, 2, 3, 4, 5
_N_INDEXED, _N_SCANNED, _N_NEAREST_SCANS, _N_FOUND = 6, 7, 8, 9


@njit(cache=True, nogil=True)
def _profile_scan(patterns, counts, p, gain, near):  # pragma: no cover - compiled
    """Wildcard frequency of row ``p`` and, per attribute j, the weight of the rows that differ from
    it only on j (what nulling j would add); ``near[j]``: some row of positive weight differs from
    ``p`` only on j. Every row is scanned; rows differing on two attributes are abandoned early."""
    n_rows, q = patterns.shape
    for j in range(q):
        gain[j] = 0.0
        near[j] = False
    total = 0.0
    row = patterns[p].copy()
    for r in range(n_rows):
        weight = counts[r]
        if weight == 0.0:
            continue
        mismatches = 0
        where = -1
        for j in range(q):
            a = row[j]
            b = patterns[r, j]
            if a >= 0 and b >= 0 and a != b:
                mismatches += 1
                if mismatches == 2:
                    break
                where = j
        if mismatches == 0:
            total += weight
        elif mismatches == 1:
            gain[where] += weight
            near[where] = True
    return total


@njit(cache=True, nogil=True)
def _nearest_attribute(patterns, counts, p):  # pragma: no cover - compiled
    """sdcMicro's rule: the least important attribute on which row ``p`` differs from one of its
    nearest rows (distance = attributes where both are non-null and differ; nearest = smallest
    positive distance). -1 if every row matches ``p``."""
    n_rows, q = patterns.shape
    best = q + 1
    differs = np.zeros(q, dtype=np.bool_)
    for r in range(n_rows):
        if counts[r] == 0.0:
            continue
        distance = 0
        for j in range(q):
            a = patterns[p, j]
            b = patterns[r, j]
            if a >= 0 and b >= 0 and a != b:
                distance += 1
        if distance == 0 or distance > best:
            continue
        if distance < best:
            best = distance
            differs[:] = False
        for j in range(q):
            a = patterns[p, j]
            b = patterns[r, j]
            if a >= 0 and b >= 0 and a != b:
                differs[j] = True
    for j in range(q):
        if differs[j]:
            return j
    return -1


@njit(cache=True, nogil=True)
def _push(arrays, which, position, value):  # pragma: no cover - compiled
    """``arrays[which][position] = value``, doubling the array when it is full."""
    array = arrays[which]
    if position >= len(array):
        bigger = np.empty(2 * len(array) + 64, dtype=np.int64)
        bigger[: len(array)] = array
        arrays[which] = bigger
        array = bigger
    array[position] = value


@njit(cache=True, nogil=True)
def _index_key(patterns, r, group, attributes):  # pragma: no cover - compiled
    """Hash of (group, attribute set, the values of row ``r`` on that set)."""
    h = (group + 1) * _HASH_A + attributes * _HASH_B
    for j in range(patterns.shape[1]):
        if (attributes >> j) & 1:
            h = (h ^ (patterns[r, j] + 1)) * _HASH_A
            h ^= h >> 29
    return h


@njit(cache=True, nogil=True)
def _slot(key, capacity):  # pragma: no cover - compiled
    key *= _HASH_B
    return (key ^ (key >> 32)) & (capacity - 1)


@njit(cache=True, nogil=True)
def _bucket_slot(buckets, key):  # pragma: no cover - compiled
    """Slot of ``key`` in the open-addressing bucket table (or the empty slot where it would go).
    Slot i holds its key at 2i and the first entry of its bucket at 2i + 1 (-1: empty slot)."""
    capacity = len(buckets) // 2
    last = capacity - 1
    i = _slot(key, capacity)
    while buckets[2 * i + 1] >= 0 and buckets[2 * i] != key:
        i = (i + 1) & last
    return i


@njit(cache=True, nogil=True)
def _filter_bit(key, n_bits):  # pragma: no cover - compiled
    """Bit of ``key`` in the filter of present keys (a bucket lookup that misses it is skipped)."""
    key = (key ^ (key >> 17)) * _HASH_A
    return (key >> 24) & (n_bits - 1)


@njit(cache=True, nogil=True)
def _rehash_buckets(arrays):  # pragma: no cover - compiled
    """Double the bucket table and rebuild the filter (4 bits per slot)."""
    buckets = arrays[_BUCKETS]
    capacity = len(buckets)  # twice the old one
    last = capacity - 1
    bigger = np.zeros(2 * capacity, dtype=np.int64)
    bigger[1::2] = -1
    present = np.zeros(max(1, capacity // 16), dtype=np.int64)
    for i in range(len(buckets) // 2):
        if buckets[2 * i + 1] >= 0:
            key = buckets[2 * i]
            j = _slot(key, capacity)
            while bigger[2 * j + 1] >= 0:
                j = (j + 1) & last
            bigger[2 * j] = key
            bigger[2 * j + 1] = buckets[2 * i + 1]
            bit = _filter_bit(key, 64 * len(present))
            present[bit >> 6] |= 1 << (bit & 63)
    arrays[_BUCKETS] = bigger
    arrays[_FILTER] = present


@njit(cache=True, nogil=True)
def _built_slot(groups, sets, group, attributes):  # pragma: no cover - compiled
    """Slot of the index (group, attributes) in the table of built indexes (exact keys)."""
    last = len(groups) - 1
    i = _slot((group + 1) * _HASH_A + attributes, len(groups))
    while groups[i] >= 0 and (groups[i] != group or sets[i] != attributes):
        i = (i + 1) & last
    return i


@njit(cache=True, nogil=True)
def _rehash_built(arrays):  # pragma: no cover - compiled
    """Double the table of built indexes (exact keys: group, attribute set)."""
    keys = arrays[_BUILT_KEY_SET]
    values = arrays[_BUILT_KEY_GROUP]
    capacity = 2 * len(keys)
    last = capacity - 1
    new_keys = np.zeros(capacity, dtype=np.int64)
    new_values = np.full(capacity, -1, dtype=np.int64)
    for i in range(len(keys)):
        if values[i] >= 0:
            j = _slot((values[i] + 1) * _HASH_A + keys[i], capacity)
            while new_values[j] >= 0:
                j = (j + 1) & last
            new_keys[j] = keys[i]
            new_values[j] = values[i]
    arrays[_BUILT_KEY_SET] = new_keys
    arrays[_BUILT_KEY_GROUP] = new_values


@njit(cache=True, nogil=True)
def _reserve(arrays, extra):  # pragma: no cover - compiled
    """Room for ``extra`` more index entries (and as many new buckets) without growing."""
    sizes = arrays[_SIZES]
    need = 2 * (sizes[_N_ENTRIES] + extra)
    if need > len(arrays[_ENTRIES]):
        bigger = np.empty(max(2 * len(arrays[_ENTRIES]), need), dtype=np.int64)
        bigger[: 2 * sizes[_N_ENTRIES]] = arrays[_ENTRIES][: 2 * sizes[_N_ENTRIES]]
        arrays[_ENTRIES] = bigger
    while 4 * (sizes[_N_BUCKETS] + extra) > len(arrays[_BUCKETS]):
        _rehash_buckets(arrays)


@njit(cache=True, nogil=True)
def _insert(buckets, present, entries, sizes, key, r):  # pragma: no cover - compiled
    """Add row ``r`` to the bucket of ``key``; room was reserved (:func:`_reserve`). Entry e holds
    its row at 2e and the next entry of its bucket at 2e + 1."""
    i = _bucket_slot(buckets, key)
    entry = sizes[_N_ENTRIES]
    sizes[_N_ENTRIES] += 1
    entries[2 * entry] = r
    entries[2 * entry + 1] = buckets[2 * i + 1]
    if buckets[2 * i + 1] < 0:
        buckets[2 * i] = key
        sizes[_N_BUCKETS] += 1
        bit = _filter_bit(key, 64 * len(present))
        present[bit >> 6] |= 1 << (bit & 63)
    buckets[2 * i + 1] = entry


@njit(cache=True, nogil=True)
def _index_join(patterns, arrays, mask_ids, r, mask):  # pragma: no cover - compiled
    """Row ``r`` (whose null mask is now ``mask``) joins that mask's group and its built indexes."""
    sizes = arrays[_SIZES]
    if mask in mask_ids:
        group = mask_ids[mask]
    else:
        group = sizes[_N_MASKS]
        sizes[_N_MASKS] += 1
        mask_ids[mask] = group
        _push(arrays, _MASK_VALUE, group, mask)
        _push(arrays, _MASK_MEMBERS, group, 0)
        _push(arrays, _GROUP_HEAD, group, -1)
        _push(arrays, _BUILT_HEAD, group, -1)
    entry = sizes[_N_GROUP_ENTRIES]
    sizes[_N_GROUP_ENTRIES] += 1
    _push(arrays, _GROUP_ROW, entry, r)
    _push(arrays, _GROUP_NEXT, entry, arrays[_GROUP_HEAD][group])
    arrays[_GROUP_HEAD][group] = entry
    arrays[_MASK_MEMBERS][group] += 1
    built_next = arrays[_BUILT_NEXT]
    extra = 0
    built = arrays[_BUILT_HEAD][group]
    while built >= 0:
        extra += 1
        built = built_next[built]
    if extra == 0:
        return
    _reserve(arrays, extra)
    buckets, present, entries = arrays[_BUCKETS], arrays[_FILTER], arrays[_ENTRIES]
    built_set = arrays[_BUILT_SET]
    built = arrays[_BUILT_HEAD][group]
    while built >= 0:
        key = _index_key(patterns, r, group, built_set[built])
        _insert(buckets, present, entries, sizes, key, r)
        built = built_next[built]


@njit(cache=True, nogil=True)
def _index_build(patterns, arrays, slot, group, attributes):  # pragma: no cover - compiled
    """Index the rows of ``group`` by their values on ``attributes`` (a bit set); ``slot`` is its
    empty slot in the table of built indexes."""
    sizes = arrays[_SIZES]
    built = sizes[_N_BUILT]
    sizes[_N_BUILT] += 1
    _push(arrays, _BUILT_SET, built, attributes)
    _push(arrays, _BUILT_NEXT, built, arrays[_BUILT_HEAD][group])
    arrays[_BUILT_HEAD][group] = built
    arrays[_BUILT_KEY_GROUP][slot] = group
    arrays[_BUILT_KEY_SET][slot] = attributes
    if 2 * sizes[_N_BUILT] > len(arrays[_BUILT_KEY_GROUP]):
        _rehash_built(arrays)
    _reserve(arrays, arrays[_MASK_MEMBERS][group])
    buckets, present, entries = arrays[_BUCKETS], arrays[_FILTER], arrays[_ENTRIES]
    row_mask, group_row, group_next = arrays[_ROW_MASK], arrays[_GROUP_ROW], arrays[_GROUP_NEXT]
    mask = arrays[_MASK_VALUE][group]
    entry = arrays[_GROUP_HEAD][group]
    while entry >= 0:
        r = group_row[entry]
        if row_mask[r] == mask:
            _insert(buckets, present, entries, sizes, _index_key(patterns, r, group, attributes), r)
        entry = group_next[entry]


@njit(cache=True, nogil=True)
def _index_new(patterns, capacity):  # pragma: no cover - compiled
    """The index state: a typed list of int64 arrays (positions _ROW_MASK...) and the mask -> group
    dictionary. ``capacity`` (a power of two) is the first size of the hash tables."""
    n_rows, q = patterns.shape
    arrays = List()
    for _ in range(_BUILT_KEY_SET + 1):
        arrays.append(np.empty(0, dtype=np.int64))
    arrays[_ROW_MASK] = np.zeros(n_rows, dtype=np.int64)
    arrays[_SIZES] = np.zeros(_N_FOUND + 1, dtype=np.int64)
    arrays[_SEEN] = np.zeros(n_rows, dtype=np.int64)
    arrays[_FOUND] = np.empty(n_rows, dtype=np.int64)
    arrays[_BUCKETS] = np.zeros(2 * capacity, dtype=np.int64)
    arrays[_BUCKETS][1::2] = -1
    arrays[_FILTER] = np.zeros(max(1, capacity // 16), dtype=np.int64)
    arrays[_BUILT_KEY_SET] = np.zeros(capacity, dtype=np.int64)
    arrays[_BUILT_KEY_GROUP] = np.full(capacity, -1, dtype=np.int64)
    mask_ids = Dict.empty(key_type=types.int64, value_type=types.int64)
    for r in range(n_rows):
        mask = 0
        for j in range(q):
            if patterns[r, j] < 0:
                mask |= 1 << j
        arrays[_ROW_MASK][r] = mask
        _index_join(patterns, arrays, mask_ids, r, mask)
    return arrays, mask_ids


@njit(cache=True, nogil=True)
def _profile(patterns, counts, p, gain, near, arrays, budget):  # pragma: no cover - compiled
    """What :func:`_profile_scan` returns, from the candidates the indexes give (or by the scan
    when they would be more than ``budget``)."""
    n_rows, q = patterns.shape
    sizes = arrays[_SIZES]
    row_mask, mask_value, mask_members = arrays[_ROW_MASK], arrays[_MASK_VALUE], arrays[_MASK_MEMBERS]
    group_head, group_row, group_next = arrays[_GROUP_HEAD], arrays[_GROUP_ROW], arrays[_GROUP_NEXT]
    full = (1 << q) - 1
    own = row_mask[p]
    n_masks = sizes[_N_MASKS]
    lookups = 0
    for group in range(n_masks):
        if mask_members[group] > 0:
            compared = full & ~(own | mask_value[group])
            lookups += 1
            while compared:
                lookups += 1
                compared &= compared - 1
    if lookups * q > budget:
        sizes[_N_SCANNED] += 1
        return _profile_scan(patterns, counts, p, gain, near)
    sizes[_STAMP] += 1
    stamp = sizes[_STAMP]
    seen, found = arrays[_SEEN], arrays[_FOUND]
    buckets, present, entries = arrays[_BUCKETS], arrays[_FILTER], arrays[_ENTRIES]
    built_group, built_set = arrays[_BUILT_KEY_GROUP], arrays[_BUILT_KEY_SET]
    n_found = 0
    for group in range(n_masks):
        if mask_members[group] == 0:
            continue
        mask = mask_value[group]
        compared = full & ~(own | mask)
        if compared == 0:  # every row of the group matches p
            entry = group_head[group]
            while entry >= 0:
                r = group_row[entry]
                if row_mask[r] == mask and seen[r] != stamp:
                    seen[r] = stamp
                    found[n_found] = r
                    n_found += 1
                entry = group_next[entry]
        else:
            for j in range(q):
                if not (compared >> j) & 1:
                    continue
                attributes = compared & ~(1 << j)
                slot = _built_slot(built_group, built_set, group, attributes)
                if built_group[slot] < 0:
                    _index_build(patterns, arrays, slot, group, attributes)
                    buckets, present, entries = arrays[_BUCKETS], arrays[_FILTER], arrays[_ENTRIES]
                    built_group, built_set = arrays[_BUILT_KEY_GROUP], arrays[_BUILT_KEY_SET]
                key = _index_key(patterns, p, group, attributes)
                bit = _filter_bit(key, 64 * len(present))
                if not (present[bit >> 6] >> (bit & 63)) & 1:
                    continue
                entry = buckets[2 * _bucket_slot(buckets, key) + 1]
                while entry >= 0:
                    r = entries[2 * entry]
                    if seen[r] != stamp:
                        seen[r] = stamp
                        found[n_found] = r
                        n_found += 1
                    entry = entries[2 * entry + 1]
        if n_found > budget:
            sizes[_N_SCANNED] += 1
            return _profile_scan(patterns, counts, p, gain, near)
    sizes[_N_INDEXED] += 1
    sizes[_N_FOUND] += n_found
    # Keep the rows within one mismatch, then sum in row order (as the scan does).
    kept = 0
    for i in range(n_found):
        r = found[i]
        if counts[r] == 0.0:
            continue
        mismatches = 0
        for j in range(q):
            a = patterns[p, j]
            b = patterns[r, j]
            if a >= 0 and b >= 0 and a != b:
                mismatches += 1
                if mismatches == 2:
                    break
        if mismatches < 2:
            found[kept] = r
            kept += 1
    rows = np.sort(found[:kept])
    for j in range(q):
        gain[j] = 0.0
        near[j] = False
    total = 0.0
    for r in rows:
        where = -1
        for j in range(q):
            a = patterns[p, j]
            b = patterns[r, j]
            if a >= 0 and b >= 0 and a != b:
                where = j
        if where < 0:
            total += counts[r]
        else:
            gain[where] += counts[r]
            near[where] = True
    return total


@njit(cache=True, nogil=True)
def _wildcard_greedy(patterns, counts, order, k, suppressed, arrays, mask_ids, budget):  # pragma: no cover
    """Visit the rows of ``order``; ``budget``: a visit that needs more index lookups (times q) or
    gathers more candidates than this scans every row instead (same result)."""
    q = patterns.shape[1]
    gain = np.zeros(q)
    near = np.zeros(q, dtype=np.bool_)
    sizes = arrays[_SIZES]
    for p in order:
        while True:
            total = _profile(patterns, counts, p, gain, near, arrays, budget)
            if total >= k:
                break
            choice = -1
            for j in range(q):
                if patterns[p, j] >= 0 and total + gain[j] >= k:
                    choice = j
                    break
            if choice < 0:  # sdcMicro's rule; a row at distance 1 is a nearest row
                for j in range(q):
                    if near[j]:
                        choice = j
                        break
            if choice < 0:
                sizes[_N_NEAREST_SCANS] += 1
                choice = _nearest_attribute(patterns, counts, p)
            if choice < 0:
                break  # every row matches p, so total is all the weight: cannot be below k here
            patterns[p, choice] = -1
            suppressed[p, choice] = True
            row_mask = arrays[_ROW_MASK]
            arrays[_MASK_MEMBERS][mask_ids[row_mask[p]]] -= 1
            row_mask[p] |= 1 << choice
            _index_join(patterns, arrays, mask_ids, p, row_mask[p])


def _category_rounds(
    patterns: np.ndarray,
    counts: np.ndarray,
    active: np.ndarray,
    k: float,
    suppressed: np.ndarray,
    progress: ProgressCallback | None,
) -> None:
    """Category treatment: in round t, null attribute t (suppression order) in every pattern still
    violating, then re-count the classes; patterns whose class reaches ``k`` stop. The violating
    patterns move together, so they find partners among each other (a pattern visited alone would
    find none: nothing else holds its nulls). Classes that reach ``k`` are never broken up later:
    their members stop, and others can only join them."""
    q = patterns.shape[1]
    for t in range(q):
        if not active.any():
            break
        rows = np.flatnonzero(active)
        suppressed[rows, t] |= patterns[rows, t] >= 0
        patterns[rows, t] = -1
        classes = np.unique(patterns, axis=0, return_inverse=True)[1].reshape(-1)
        weight = np.bincount(classes, weights=counts)
        active &= weight[classes] < k
        if progress is not None:
            progress(t + 1, q)


# ----------------------------------------------------------------------------------------------
# Validation.


def _resolve_quasi_identifiers(table: Table, quasi_identifiers: Sequence[str] | None) -> list[str]:
    if quasi_identifiers is None:
        names = [a.name for a in table.schema.with_role(Role.QUASI_IDENTIFIER)]
        if not names:
            raise ConfigError(
                "no quasi-identifiers: give role quasi-identifier to some attributes or pass "
                "quasi_identifiers"
            )
    else:
        if isinstance(quasi_identifiers, str):
            raise ConfigError("quasi_identifiers must be a sequence of attribute names, not one string")
        names = list(quasi_identifiers)
        if not names:
            raise ConfigError("quasi_identifiers is empty: give at least one attribute")
    seen: set[str] = set()
    for name in names:
        if name not in table.data.columns:
            raise ConfigError(
                f"quasi-identifier '{name}' is not a column of the data "
                f"(columns: {', '.join(table.data.columns)})"
            )
        if name in seen:
            raise ConfigError(f"quasi-identifier '{name}' is given twice")
        seen.add(name)
    identifiers = [n for n in names if n in table.schema and table.schema[n].role is Role.IDENTIFIER]
    if identifiers:
        raise ConfigError(
            f"'{identifiers[0]}' is an identifier (dropped from every release), not a quasi-identifier"
        )
    return names


def _importance_order(
    names: Sequence[str],
    importance: Sequence[str] | Mapping[str, int] | None,
    cardinalities: Sequence[int],
) -> list[str]:
    """The quasi-identifiers in suppression order: least important (suppressed first) to most important.

    As sdcMicro: by default the attributes with more distinct (non-missing) values are less important,
    ties in column order (the earlier one more important). A mapping gives ranks 1 (most important) to
    q (least); equal ranks are allowed, as in sdcMicro, and tied attributes are then suppressed in
    column order.
    """
    q = len(names)
    if importance is None:
        # sdcMicro: importance <- match(names, names(sort(categories))): rank 1 = fewest categories.
        most_first = sorted(range(q), key=lambda j: (cardinalities[j], j))
        return [names[j] for j in reversed(most_first)]
    if isinstance(importance, Mapping):
        for name in importance:
            if name not in names:
                raise ConfigError(
                    f"importance: unknown attribute '{name}' (quasi-identifiers: {', '.join(names)})"
                )
        absent = [name for name in names if name not in importance]
        if absent:
            raise ConfigError(
                f"importance: no rank for quasi-identifier '{absent[0]}' (give every one a rank)"
            )
        for name, rank in importance.items():
            if isinstance(rank, bool) or not isinstance(rank, int | np.integer) or not 1 <= int(rank) <= q:
                raise ConfigError(
                    f"importance: rank of '{name}' must be an integer from 1 (most important) "
                    f"to {q}, got {rank!r}"
                )
        # sdcMicro orders the columns by (q + 1 - importance), stably: highest rank suppressed first.
        return sorted(names, key=lambda name: (-int(importance[name]), names.index(name)))
    if isinstance(importance, str):
        raise ConfigError(
            "importance must be a sequence of attribute names or a mapping name -> rank, not a string"
        )
    listed = list(importance)
    seen: set[str] = set()
    for name in listed:
        if name not in names:
            raise ConfigError(
                f"importance: unknown attribute '{name}' (quasi-identifiers: {', '.join(names)})"
            )
        if name in seen:
            raise ConfigError(f"importance: attribute '{name}' is listed twice")
        seen.add(name)
    absent = [name for name in names if name not in seen]
    if absent:
        raise ConfigError(
            f"importance: quasi-identifier '{absent[0]}' is not listed (list every quasi-identifier, "
            "most important first)"
        )
    return list(reversed(listed))


# ----------------------------------------------------------------------------------------------
# The category treatment's last step.


def _fill_all_null(codes: np.ndarray, weights: np.ndarray, k: float, suppressed: np.ndarray) -> int:
    """Category treatment only: when the all-null class weighs more than 0 but less than ``k``, move
    whole records into it (suppress all their values), cheapest first: the records that each class
    of weight above ``k`` can spare (records with the fewest values left first), then whole classes,
    again cheapest first. Returns the number of records moved. ``codes`` and ``suppressed`` are the
    record-level (n x q) current codes and suppression mask, updated in place."""
    observed = codes >= 0
    all_null = ~observed.any(axis=1)
    have = float(weights[all_null].sum())
    if not all_null.any() or have >= k:
        return 0
    need = k - have
    # Classes of the remaining records (category semantics), and their cost per record.
    keys = np.unique(codes, axis=0, return_inverse=True)[1].reshape(-1)
    n_classes = int(keys.max()) + 1
    class_weight = np.bincount(keys, weights=weights, minlength=n_classes)
    class_cost = np.zeros(n_classes, dtype=np.int64)
    class_cost[keys] = observed.sum(axis=1)
    candidates = [c for c in np.argsort(class_cost, kind="stable") if class_cost[c] > 0]
    moved = np.zeros(len(weights), dtype=bool)
    for c in candidates:  # spare records first
        if need <= 0:
            break
        members = np.flatnonzero(keys == c)
        spare = class_weight[c] - k
        cumulative = np.cumsum(weights[members])
        take = members[(cumulative <= spare) & (cumulative - weights[members] < need)]
        moved[take] = True
        need -= float(weights[take].sum())
        class_weight[c] -= float(weights[take].sum())
    for c in candidates:  # then whole classes
        if need <= 0:
            break
        members = np.flatnonzero((keys == c) & ~moved)
        if not len(members):
            continue
        moved[members] = True
        need -= float(weights[members].sum())
    suppressed[moved] |= observed[moved]
    codes[moved] = -1
    return int(moved.sum())


# ----------------------------------------------------------------------------------------------
# The public function.


def local_suppression(
    table: Table,
    k: int,
    *,
    quasi_identifiers: Sequence[str] | None = None,
    importance: Sequence[str] | Mapping[str, int] | None = None,
    missing: str = "wildcard",
    weights: np.ndarray | None = None,
    progress: ProgressCallback | None = None,
) -> Release:
    """Suppress single quasi-identifier values until every record is in a class of at least ``k``.

    The approach of sdcMicro's ``localSuppression`` (Templ, Kowarik & Meindl 2015): a greedy search
    that suppresses values (writes nulls), attributes of low importance first, and re-counts with the
    exact wildcard frequencies of :mod:`sdckit.frequency` until every record's frequency reaches
    ``k``. Only cells of records that violate k-anonymity in the original data are ever suppressed, so
    (with the default wildcard treatment) the release never has more suppressed cells than suppressing
    every quasi-identifier of every violating record.

    Parameters
    ----------
    k
        Every record must match at least ``k`` records (itself included) on the quasi-identifiers.
    quasi_identifiers
        Default: the attributes with role quasi-identifier.
    importance
        The quasi-identifiers from most important (suppressed last) to least important (suppressed
        first), or a mapping name -> rank with 1 the most important (sdcMicro's ``importance``
        vector; equal ranks allowed, ties suppressed in column order). Default (sdcMicro's):
        attributes with more distinct non-missing values are less important; ties in column order,
        the earlier attribute counted more important.
    missing
        ``"wildcard"`` (default, sdcMicro): a null matches every value, so a record whose
        quasi-identifiers are all null matches every record. ``"category"``: a null is a value of its
        own, so the release is k-anonymous in the usual sense with nulls as a category.
    weights
        Sampling weights: the condition becomes "the weights of the matching records sum to at least
        ``k``" (an estimated population frequency). sdcMicro uses sample counts here.

    The greedy rule
    ---------------
    Records are collapsed to their distinct quasi-identifier patterns (integer codes) with their
    counts (or weight sums); all records of a pattern receive the same suppressions. The patterns
    whose wildcard frequency is below ``k`` are visited once each, in increasing order of that
    frequency (sdcMicro visits records by decreasing individual risk, which is the same order without
    weights), ties in order of first appearance. For the visited pattern ``p``, with frequencies
    computed afresh against the current (partly suppressed) patterns, and while its frequency
    ``f(p)`` is below ``k``:

    1. if nulling a single value of ``p`` brings ``f`` to ``k`` or more, null the least important
       such attribute (one cell per record, the fewest possible);
    2. otherwise apply sdcMicro's rule: among the patterns at the smallest positive distance from
       ``p`` (distance = number of attributes on which both are non-null and differ), null the least
       important attribute on which ``p`` differs from one of them.

    Suppression only adds matches, so no frequency ever decreases: a pattern that reaches ``k`` keeps
    it, and the search ends after one visit per violating pattern. It terminates because each step
    nulls a value and a pattern of nulls matches every record (whose total is at least ``k``).

    With ``missing="category"`` a null matches only nulls, so a pattern visited alone finds no
    partner (nothing else holds its nulls) and would end all null. The violating patterns therefore
    move together, in rounds: round t nulls the t-th least important attribute in every pattern
    still violating, then re-counts the classes; patterns whose class reaches ``k`` stop (their class
    is never broken up later: its members stop, others can only join it). As the all-null class may
    end up below ``k`` (but not empty), whole records are then moved into it, cheapest first (spare
    records of classes above ``k``, then whole classes, fewest values first):
    ``Release.search["filled_records"]`` counts them. If that costs more cells than suppressing every
    value of every violating record and that simple release is k-anonymous (its all-null class
    reaches ``k``), the simple release is returned instead (``search["fell_back_to_violating_records"]``).
    So the category release exceeds the "suppress every violating record" bound only when that
    bound's release is not k-anonymous itself.

    Deviations from sdcMicro
    ------------------------
    * Frequencies are recomputed after every suppression, not once per round: a violating pattern
      fixed as a side effect of earlier suppressions is left alone, and each visited pattern is
      suppressed only until it reaches ``k`` (sdcMicro suppresses one value in every record that was
      violating at the start of a round, then re-counts).
    * Step 1 (a single suppression reaching ``k`` is taken first) is ours; sdcMicro always applies
      the nearest-pattern rule.
    * Work is on distinct patterns, not records, so identical records get identical suppressions;
      sdcMicro's reduction of large groups to ``k`` records is unnecessary here.
    * No ``combs``, strata, or ``alpha`` (missing values count fully, sdcMicro's default alpha=1).
    * Sampling weights and the category treatment of nulls (with its own rounds, above) are
      additions.

    Returns
    -------
    Release
        ``method="local-suppression"``; ``suppressed_cells`` / ``cell_penalty`` mark the cells
        suppressed here (nulls already in the data are not counted); ``suppressed_records`` is all
        False; ``classes`` is -1 for the wildcard treatment (wildcard matches do not partition the
        records) and each record's equivalence class for the category treatment.
    """
    if isinstance(k, bool) or not isinstance(k, int | np.integer):
        raise ConfigError(f"k must be an integer, got {k!r}")
    k = int(k)
    if k < 1:
        raise ConfigError(f"k must be at least 1, got {k}")
    missing = check_missing(missing)
    n = table.n_records
    if n == 0:
        raise ConfigError("the data has no records")
    names = _resolve_quasi_identifiers(table, quasi_identifiers)
    weights = check_weights(weights, n)
    record_weights = np.ones(n, dtype=np.float64) if weights is None else weights
    total = float(record_weights.sum())
    if k > total:
        what = "the sum of the weights" if weights is not None else "the number of records"
        raise ConfigError(f"k = {k} is larger than {what} ({total:g}): no suppression can reach it")
    if len(names) > 62 and missing == "wildcard":
        raise ConfigError(f"wildcard counting supports at most 62 quasi-identifiers, got {len(names)}")

    encoding = encode(table.data, names)
    order = _importance_order(names, importance, encoding.cardinalities)
    columns = [encoding.index(name) for name in order]  # suppression order
    keys, n_patterns = group_keys(encoding, columns)
    patterns = np.ascontiguousarray(pattern_codes(encoding, columns, keys, n_patterns), dtype=np.int32)
    counts = group_sizes(keys, n_patterns, record_weights).astype(np.float64)
    cardinalities = [encoding.cardinalities[j] for j in columns]
    if missing == "wildcard":
        frequency = wildcard_pattern_sizes(patterns, counts, cardinalities)
    else:
        frequency = counts.copy()
    # Tolerance for weight sums that should equal k but carry rounding error.
    threshold = k - 1e-9 * max(1.0, k)
    violating = np.flatnonzero(frequency < threshold)
    visit = violating[np.argsort(frequency[violating], kind="stable")].astype(np.int64)
    pattern_suppressed = np.zeros(patterns.shape, dtype=np.bool_)
    if missing == "wildcard":
        arrays, mask_ids = _index_new(patterns, _CAPACITY) if len(visit) else (None, None)
        for start in range(0, len(visit), _CHUNK):
            chunk = visit[start : start + _CHUNK]
            _wildcard_greedy(
                patterns, counts, chunk, threshold, pattern_suppressed, arrays, mask_ids, n_patterns // 4
            )
            if progress is not None:
                progress(min(start + _CHUNK, len(visit)), len(visit))
    else:
        active = np.zeros(n_patterns, dtype=bool)
        active[violating] = True
        _category_rounds(patterns, counts, active, threshold, pattern_suppressed, progress)

    suppressed = pattern_suppressed[keys]  # (n x q) in suppression order
    filled = 0
    if missing == "category":
        record_codes = patterns[keys]
        filled = _fill_all_null(record_codes, record_weights, threshold, suppressed)
        if filled:
            # The fill may cost more than suppressing every value of every violating record; when
            # that simple release is k-anonymous itself (its all-null class reaches k), take it.
            original = pattern_codes(encoding, columns, keys, n_patterns)[keys]
            violating_record = np.isin(keys, violating)
            simple = violating_record | (original < 0).all(axis=1)
            simple_cells = int(np.count_nonzero(original[violating_record] >= 0))
            if record_weights[simple].sum() >= threshold and simple_cells < int(suppressed.sum()):
                suppressed = violating_record[:, None] & (original >= 0)
                record_codes = np.where(violating_record[:, None], -1, original)
                filled = -1
            classes = np.unique(record_codes, axis=0, return_inverse=True)[1].reshape(-1)
            classes = np.unique(record_codes, axis=0, return_inverse=True)[1].reshape(-1)
        else:
            classes = np.unique(patterns, axis=0, return_inverse=True)[1].reshape(-1)[keys]
        classes = classes.astype(np.int64)
    else:
        classes = np.full(n, -1, dtype=np.int64)
    # Back to the order of `names`.
    position = [order.index(name) for name in names]
    suppressed = np.ascontiguousarray(suppressed[:, position])

    replaced = [
        pl.when(pl.Series(suppressed[:, j])).then(None).otherwise(pl.col(name)).alias(name)
        for j, name in enumerate(names)
        if suppressed[:, j].any()
    ]
    identifiers = [a.name for a in table.schema.with_role(Role.IDENTIFIER) if a.name in table.data.columns]
    released = (table.data.with_columns(replaced) if replaced else table.data).drop(identifiers)
    violating_records = int(np.isin(keys, violating).sum()) if len(violating) else 0
    search: dict[str, Any] = {
        "violating_patterns": int(len(violating)),
        "violating_records": violating_records,
        "patterns": int(n_patterns),
        "filled_records": max(filled, 0),
        "fell_back_to_violating_records": filled < 0,
    }
    kept_weights = table.weights if table.weights in released.columns else None
    return Release(
        table=Table(released, table.schema.without_identifiers(), source=table.source, weights=kept_weights),
        original=table,
        method="local-suppression",
        parameters={
            "k": k,
            "importance": list(reversed(order)),
            "missing": missing,
            "weighted": weights is not None,
        },
        quasi_identifiers=tuple(names),
        suppressed_records=np.zeros(n, dtype=bool),
        classes=classes,
        search=search,
        cell_penalty=suppressed.astype(np.float64),
        suppressed_cells=suppressed,
    )


# ----------------------------------------------------------------------------------------------
# Risk-targeted value suppression (Orooji & Knapp, 2019).

#: Called as ``progress(message)`` at each stage of a long run.
StageCallback = Callable[[str], None]


def _check_parameters(delta: Any, max_rounds: Any, cell_budget: Any) -> float:
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real) or not np.isfinite(delta) or delta < 0:
        raise ConfigError(f"delta (the risk threshold) must be a number >= 0, got {delta!r}")
    if max_rounds is not None and (
        isinstance(max_rounds, bool) or not isinstance(max_rounds, numbers.Integral) or max_rounds < 1
    ):
        raise ConfigError(f"max_rounds must be a whole number >= 1, got {max_rounds!r}")
    if cell_budget is not None and (
        isinstance(cell_budget, bool) or not isinstance(cell_budget, numbers.Integral) or cell_budget < 0
    ):
        raise ConfigError(f"cell_budget must be a whole number >= 0, got {cell_budget!r}")
    return float(delta)


def _known_set_matrix(risk: RecordRisk, attributes: list[str]) -> np.ndarray:
    """Boolean (known sets x attributes): which attributes each kept known set holds."""
    position = {name: j for j, name in enumerate(attributes)}
    matrix = np.zeros((risk.known_sets.height, len(attributes)), dtype=bool)
    for row, names in enumerate(risk.known_sets.get_column("attributes").to_list()):
        for name in names:
            matrix[row, position[name]] = True
    return matrix


def _within_budget(mask: np.ndarray, risk: np.ndarray, remaining: int) -> np.ndarray:
    """Keep whole records of ``mask``, riskiest first, while their cells fit in ``remaining``."""
    cells = mask.sum(axis=1)
    rows = np.flatnonzero(cells)
    order = rows[np.argsort(-risk[rows], kind="stable")]
    fits = np.cumsum(cells[order]) <= remaining
    kept = np.zeros(len(mask), dtype=bool)
    kept[order[fits]] = True
    return mask & kept[:, None]


def targeted_suppression(
    table: Table,
    *,
    delta: float,
    alpha: float = 100.0,
    epsilon: float = 0.01,
    missing: str = "wildcard",
    weights: str | np.ndarray | None = None,
    repeat: bool = False,
    max_rounds: int | None = None,
    cell_budget: int | None = None,
    progress: StageCallback | None = None,
) -> Release:
    """Suppress the values that drive the risk of the high-risk records (Orooji & Knapp, 2019).

    The algorithm of Figure 1 of the paper: the records with ``D(r) > delta`` are found with the
    combined risk measure (parameters ``alpha``, ``epsilon``, ``missing`` and ``weights`` as in
    :func:`sdckit.risk.combined.combined_risk`); for each, the known set with the largest
    contribution ``L * alpha * C`` is taken (the first in enumeration order on ties) and the record's
    values of its attributes are suppressed (set to null). Every other record stays intact. The
    risk is then measured again on the release, so that the Release holds the risk before and after.

    Options beyond the paper (off by default):

    ``repeat``
        Repeat the round on the release (re-measuring the risk each time) until no record exceeds
        ``delta``, ``max_rounds`` rounds were run or ``cell_budget`` cells are suppressed. In a
        repeated round a record whose dominant known set has no value left to suppress loses
        instead its remaining value of the most public attribute (highest PK, then column order),
        so every round makes progress. A record all of whose known-set values are suppressed and
        that still exceeds ``delta`` cannot be helped by this method; such records are counted as
        ``irreducible``. Under wildcard semantics a null matches every value, so a record's
        likelihoods only fall as its values are suppressed.
    ``cell_budget``
        The most cells to suppress in total; when a round would exceed it, the riskiest records
        of the round are treated first, whole, as long as their cells fit.

    The suppressible attributes (the Release's ``quasi_identifiers``) are those with public
    probability above ``epsilon``, the only ones that can belong to a kept known set; the paper
    calls them the QIDs. ``cell_penalty`` is 1 for a suppressed cell, so
    :func:`sdckit.utility.release_ncp` is equation (5) of the paper, ``S / (n q)``.

    ``release.search`` holds ``high_risk_before``, ``high_risk_after``, ``rounds`` (cells and high-risk
    records per round), ``irreducible`` and ``stopped`` (why the loop ended);
    ``release.search["risk_before"]`` and ``["risk_after"]`` are the :class:`RecordRisk` measurements.
    """
    delta = _check_parameters(delta, max_rounds, cell_budget)
    say = progress if progress is not None else (lambda message: None)
    identifiers = [a.name for a in table.schema.with_role(Role.IDENTIFIER)]
    schema = Schema(tuple(a for a in table.schema.attributes if a.role is not Role.IDENTIFIER))
    data = table.data.drop(identifiers)

    def measure(frame: pl.DataFrame) -> RecordRisk:
        return combined_risk(
            Table(frame, schema, source=table.source),
            alpha=alpha,
            epsilon=epsilon,
            missing=missing,
            weights=weights,
        )

    say("measuring the risk of the original records")
    before = measure(data)
    # Attributes of the kept known sets, in column order.
    in_sets = {name for names in before.known_sets.get_column("attributes").to_list() for name in names}
    attributes = [name for name in data.columns if name in in_sets]
    holds = _known_set_matrix(before, attributes)
    public = np.array([schema[name].public_probability for name in attributes], dtype=np.float64)
    # Fallback order of attributes: most public first, ties by column order.
    fallback_order = np.argsort(-public, kind="stable")

    n = data.height
    suppressed = np.zeros((n, len(attributes)), dtype=bool)
    null = (
        data.select(pl.col(name).is_null() for name in attributes).to_numpy()
        if attributes
        else np.zeros((n, 0), dtype=bool)
    )
    current = before
    rounds: list[dict[str, int]] = []
    stopped = "no record above delta"
    while True:
        high = current.risk > delta
        n_high = int(high.sum())
        if not n_high:
            stopped = "no record above delta"
            break
        if rounds and not repeat:
            stopped = "one round (repeat is off)"
            break
        if max_rounds is not None and len(rounds) >= max_rounds:
            stopped = f"max_rounds ({max_rounds}) reached"
            break
        mask = holds[current.top_known_set] & high[:, None] & ~null
        stuck = high & ~mask.any(axis=1)
        if repeat and stuck.any():
            # The dominant set's values are gone: take the most public value still present.
            free = ~null[stuck][:, fallback_order]
            has_free = free.any(axis=1)
            choice = fallback_order[np.argmax(free, axis=1)]
            rows = np.flatnonzero(stuck)[has_free]
            mask[rows, choice[has_free]] = True
        wanted = mask.any()
        if cell_budget is not None:
            mask = _within_budget(mask, current.risk, cell_budget - int(suppressed.sum()))
        if not mask.any():
            stopped = f"cell budget ({cell_budget}) spent" if wanted else "nothing left to suppress"
            break
        changed = np.flatnonzero(mask.any(axis=0))
        data = data.with_columns(
            pl.when(pl.Series(mask[:, j])).then(None).otherwise(pl.col(attributes[j])).alias(attributes[j])
            for j in changed
        )
        suppressed |= mask
        null |= mask
        rounds.append({"high_risk_records": n_high, "suppressed_cells": int(mask.sum())})
        say(
            f"round {len(rounds)}: {n_high:,} records above {delta:g}, "
            f"{int(mask.sum()):,} cells suppressed; re-measuring"
        )
        current = measure(data)
    after = current
    high_after = int((after.risk > delta).sum())
    irreducible = int(((after.risk > delta) & null.all(axis=1)).sum())
    return Release(
        table=Table(data, schema, source=table.source),
        original=table,
        method="targeted-suppression",
        parameters={
            "delta": delta,
            "alpha": float(alpha),
            "epsilon": float(epsilon),
            "missing": missing,
            "repeat": bool(repeat),
            "max_rounds": max_rounds,
            "cell_budget": cell_budget,
        },
        quasi_identifiers=tuple(attributes),
        suppressed_records=np.zeros(n, dtype=bool),
        classes=np.full(n, -1, dtype=np.int64),
        search={
            "high_risk_before": before.above(delta),
            "high_risk_after": high_after,
            "rounds": rounds,
            "irreducible": irreducible,
            "stopped": stopped,
            "risk_before": before,
            "risk_after": after,
        },
        cell_penalty=suppressed.astype(np.float64),
        suppressed_cells=suppressed,
    )


# Registered methods ---------------------------------------------------------------------------

Missing = Literal["wildcard", "category"]


def _names(value: Any) -> Any:
    """``"a, b,c"`` -> ``["a", "b", "c"]`` (the command line's comma-separated lists)."""
    if isinstance(value, str):
        return [name.strip() for name in value.split(",") if name.strip()]
    return value


class LocalSuppressionParams(MethodParams):
    """Parameters of local suppression (``sdckit anonymize local-suppression``)."""

    k: Annotated[Whole, Field(ge=1, description="Every record must match at least k records.")]
    importance: Annotated[
        list[str] | None,
        BeforeValidator(_names),
        Field(description="Quasi-identifiers, most important (suppressed last) first, comma-separated."),
    ] = None
    missing: Annotated[
        Missing | None,
        Field(description="How a null matches: wildcard (sdcMicro) or category (default: the config's)."),
    ] = None


def _local_summary(release: Release) -> dict[str, Any]:
    from sdckit.anonymize.base import cell_figures
    from sdckit.utility import release_ncp

    return {
        "k": release.params.k,
        "missing": release.params.missing,
        "importance": release.parameters.get("importance"),
        **cell_figures(release),
        "metrics": {"ncp": release_ncp(release)},
    }


@register_method(
    "local-suppression",
    LocalSuppressionParams,
    summary=_local_summary,
    help="Suppress single values until k-anonymity, least important attributes first (sdcMicro).",
    report=lambda figures: [*cells_report(figures), *achieved_report(figures)],
    progress_label="suppression",
)
def _run_local_suppression(table: Table, params: LocalSuppressionParams, context: Context) -> Release:
    from sdckit.anonymize.base import config_value, quasi_identifiers

    params = params.model_copy(
        update={"missing": config_value(params.missing, context, "risk", "missing", "wildcard")}
    )
    if params.k > table.n_records:
        raise ConfigError(f"k must be at most the number of records ({table.n_records}), got {params.k}")
    release = local_suppression(
        table,
        params.k,
        quasi_identifiers=quasi_identifiers(table),
        importance=params.importance,
        missing=params.missing,
        progress=context.progress,
    )
    return replace(release, params=params)


class TargetedSuppressionParams(MethodParams):
    """Parameters of risk-targeted suppression (``sdckit anonymize targeted-suppression``)."""

    delta: Annotated[Finite, Field(ge=0, description="Risk threshold DELTA: records above it are treated.")]
    alpha: Annotated[
        Finite | None, Field(gt=1, description="Consequence coefficient (default: the config's risk.alpha).")
    ] = None
    epsilon: Annotated[
        Finite | None,
        Field(ge=0, description="Known-set pruning threshold (default: the config's risk.epsilon)."),
    ] = None
    missing: Annotated[
        Missing | None,
        Field(description="How a null matches: wildcard or category (default: the config's risk.missing)."),
    ] = None
    repeat: Annotated[bool, Field(description="Repeat rounds until no record exceeds DELTA.")] = False
    max_rounds: Annotated[Whole | None, Field(ge=1, description="Most rounds with --repeat.")] = None
    cell_budget: Annotated[Whole | None, Field(ge=0, description="Most cells to suppress in total.")] = None

    @model_validator(mode="after")
    def _rounds_need_repeat(self) -> TargetedSuppressionParams:
        if self.max_rounds is not None and not self.repeat:
            raise ValueError("takes {max_rounds} only with {repeat} (a single round is run otherwise)")
        return self


def _targeted_summary(release: Release) -> dict[str, Any]:
    from sdckit.anonymize.base import cell_figures
    from sdckit.utility import release_ncp

    search = release.search
    return {
        "delta": release.params.delta,
        "high_risk_before": search["high_risk_before"],
        "high_risk_after": search["high_risk_after"],
        "rounds": search["rounds"],
        "irreducible": search["irreducible"],
        "stopped": search["stopped"],
        **cell_figures(release),
        "metrics": {"ncp": release_ncp(release)},
    }


def _targeted_report(figures: dict[str, Any]) -> list[str]:
    lines = [
        *cells_report(figures),
        f"records above {figures['delta']:g}: {figures['high_risk_before']:,} before, "
        f"{figures['high_risk_after']:,} after ({len(figures['rounds'])} round(s); {figures['stopped']})",
    ]
    if figures["irreducible"]:
        lines.append(
            f"{figures['irreducible']:,} records stay above DELTA with every suppressible value suppressed"
        )
    return [*lines, *achieved_report(figures)]


def _targeted_violation(release: Release, figures: dict[str, Any]) -> str | None:
    left = figures["high_risk_after"]
    if not left:
        return None
    hint = "" if release.params.repeat else " (--repeat runs further rounds)"
    return f"{left:,} records stay above DELTA {release.params.delta:g}{hint}"


def _write_histogram(release: Release, path: Any, title: str) -> None:
    from sdckit.evaluate.plots import risk_histogram

    risk_histogram(
        {"original": release.search["risk_before"].risk, "released": release.search["risk_after"].risk},
        path,
        threshold=release.params.delta,
        title=f"Record disclosure risk before and after targeted suppression — {title}",
    )


@register_method(
    "targeted-suppression",
    TargetedSuppressionParams,
    summary=_targeted_summary,
    help="Suppress the values that drive the risk of the records above DELTA (Orooji & Knapp, 2019).",
    report=_targeted_report,
    violation=_targeted_violation,
    outputs=(
        ExtraOutput(
            "--histogram",
            "Risk before and after, .png/.pdf/.svg.",
            (".png", ".pdf", ".svg"),
            _write_histogram,
        ),
    ),
)
def _run_targeted_suppression(table: Table, params: TargetedSuppressionParams, context: Context) -> Release:
    from sdckit.anonymize.base import config_value

    params = params.model_copy(
        update={
            "alpha": config_value(params.alpha, context, "risk", "alpha", 100.0),
            "epsilon": config_value(params.epsilon, context, "risk", "epsilon", 0.01),
            "missing": config_value(params.missing, context, "risk", "missing", "wildcard"),
        }
    )
    release = targeted_suppression(
        table,
        delta=params.delta,
        alpha=params.alpha,
        epsilon=params.epsilon,
        missing=params.missing,
        weights=config_value(None, context, "data", "weights", None),
        repeat=params.repeat,
        max_rounds=params.max_rounds,
        cell_budget=params.cell_budget,
        progress=context.stage,
    )
    return replace(release, params=params)
