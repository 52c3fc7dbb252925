"""Compiled kernels of local suppression's greedy search (:mod:`sdckit.anonymize.local_suppression`).

The violating quasi-identifier patterns are kept in a trie so that each visit of the greedy costs the
trie nodes that match the visited pattern, not a scan of every pattern; the comments below describe
the structure. :func:`trie_new` builds it and :func:`wildcard_greedy` runs the greedy over a chunk of
violating patterns; everything else here is their machinery.
"""

from __future__ import annotations

import numpy as np

# sdckit._numba first: a thread that meets numba here waits, under that module's import lock, for a
# background warm-up importing numba to finish (two threads entering numba's import cycles at once
# get half-initialized modules).
from sdckit._numba import njit

# isort: split
from numba.typed import List

# First size of the trie's child table (it doubles as needed).
CAPACITY = 1 << 16


# ----------------------------------------------------------------------------------------------
# Compiled greedy kernels. ``patterns`` is (G x q) int32 codes, -1 = null, with the columns in
# suppression order (least important attribute first), so "the least important attribute with a
# property" is the smallest column index with it. Rows are edited in place; two rows may become equal,
# which the counts below handle (every row is counted with its own weight).
#
# A visited row p needs its frequency and, per attribute j, the weight of the rows that differ from it
# only on j (what nulling j adds). Scanning every row for each visit is O(violating x G). Instead the
# rows are kept in one trie: a level per attribute, the most important at the top, and a child per
# value, null included, so the least important attributes (which the greedy nulls first, and asks
# about first) are the levels next to the leaves. A leaf lists the rows of its pattern; every node
# knows how many rows are below it and (for whole-number weights) their total weight. A search walks
# down from the root: where p has a value it follows that value's child and the null child (a null
# matches anything); where p is null, and on the attribute j asked about, it follows every child (on
# j, a child other than p's value and null counts towards the gain of j). Below the deepest level
# where p has a value everything matches, so a node there adds its weight without going further.
#
# The work of a search is the number of trie nodes that match p (with weights that are not whole
# numbers, plus the matching rows, which are then summed one by one in row order, as a scan sums
# them; whole-number weights are summed exactly in any order, so the subtree sums are bit-identical to
# a scan). Nothing depends on the number of null masks. Before the trie (up to commit ef67442) the rows
# were grouped by null mask with a hash index per (mask group, compared attribute set), built the first
# time a visit needed it: their number grew with the pairs of null masks (up to 4^q) times q, each as
# large as its group (200,000 example records with 10 quasi-identifiers built 24,498 of them, 133
# million entries, 5.3 GB of memory).
#
# The greedy asks about single suppressions one at a time, least important first, and stops at the
# first that reaches k (usually the first: at the bottom of the trie, cheap). A suppression moves one
# row out of its old path (counts decremented; its leaf's list keeps a stale entry) into its new one.
# A search whose work would exceed a budget scans every row instead (same result).

# Multipliers of the child hash (odd 64-bit constants as signed integers).
_HASH_A = -7046029254386353131  # 0x9E3779B97F4A7C15
_HASH_B = -4658895280553007687  # 0xBF58476D1CE4E5B9

# Positions in the typed list of int64 arrays that holds the trie (see trie_new). _NODES: _NODE
# numbers per node (one read brings them all): its value (code + 1, 0 = null), the live rows below it
# and their weight (when every weight is a whole number), its first child (a leaf: the first entry of
# its row list), next sibling and null child (-1: none). _CHILDREN: open-addressing table
# (node * stride + value) -> child, slot i at 2i, 2i + 1. _ENTRIES: entry e holds a row at 2e and the
# next entry of its leaf at 2e + 1 (a row that left the leaf stays listed: _ROW_LEAF says where each
# row is now). _STACK: (node, depth, mismatches) triples.
_ORDER, _NODES, _CHILDREN, _ENTRIES, _ROW_LEAF, _SIZES, _FOUND, _STACK = range(8)
_VALUE, _LIVE, _WEIGHT, _FIRST, _NEXT, _NULL, _NODE = range(7)
# Positions in the _SIZES array: counters and settings of the state, then statistics.
_N_NODES, _N_ENTRIES, _N_KEYS, _STRIDE, _INTEGRAL = 0, 1, 2, 3, 4
_N_INDEXED, _N_SCANNED, _N_NEAREST_SCANS, _N_FOUND, _N_WORK = 5, 6, 7, 8, 9


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
def _nearest_attribute(patterns, counts, p, allowed):  # pragma: no cover - compiled
    """sdcMicro's rule: the least important attribute on which row ``p`` differs from one of its
    nearest rows (distance = attributes where both are non-null and differ; nearest = smallest
    positive distance). Only rows that match ``p`` outside the bit set ``allowed`` count. -1 if every
    such row matches ``p``. Every row is scanned."""
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
                if not (allowed >> j) & 1:
                    distance = q + 2
                    break
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
def _matching_total_scan(patterns, counts, p, wild):  # pragma: no cover - compiled
    """The weight of the rows that match ``p`` on every attribute outside the bit set ``wild``
    (summed in row order). Every row is scanned."""
    n_rows, q = patterns.shape
    total = 0.0
    for r in range(n_rows):
        if counts[r] == 0.0:
            continue
        match = True
        for j in range(q):
            a = patterns[p, j]
            b = patterns[r, j]
            if a >= 0 and b >= 0 and a != b and not (wild >> j) & 1:
                match = False
                break
        if match:
            total += counts[r]
    return total


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
def _slot(key, capacity):  # pragma: no cover - compiled
    key *= _HASH_B
    return (key ^ (key >> 32)) & (capacity - 1)


@njit(cache=True, nogil=True)
def _child_slot(children, key):  # pragma: no cover - compiled
    """Slot of ``key`` in the child table (or the empty slot where it would go)."""
    capacity = len(children) // 2
    last = capacity - 1
    i = _slot(key, capacity)
    while children[2 * i + 1] >= 0 and children[2 * i] != key:
        i = (i + 1) & last
    return i


@njit(cache=True, nogil=True)
def _rehash_children(arrays):  # pragma: no cover - compiled
    """Double the child table."""
    old = arrays[_CHILDREN]
    bigger = np.zeros(2 * len(old), dtype=np.int64)
    bigger[1::2] = -1
    for i in range(len(old) // 2):
        if old[2 * i + 1] >= 0:
            j = _child_slot(bigger, old[2 * i])
            bigger[2 * j] = old[2 * i]
            bigger[2 * j + 1] = old[2 * i + 1]
    arrays[_CHILDREN] = bigger


@njit(cache=True, nogil=True)
def _child(arrays, node, value):  # pragma: no cover - compiled
    """The child of ``node`` for ``value`` (code + 1, 0 = null), -1 if there is none."""
    children = arrays[_CHILDREN]
    return children[2 * _child_slot(children, node * arrays[_SIZES][_STRIDE] + value) + 1]


@njit(cache=True, nogil=True)
def _child_or_new(arrays, node, value):  # pragma: no cover - compiled
    """The child of ``node`` for ``value``, made (with no live row) if there is none."""
    sizes = arrays[_SIZES]
    key = node * sizes[_STRIDE] + value
    children = arrays[_CHILDREN]
    i = _child_slot(children, key)
    if children[2 * i + 1] >= 0:
        return children[2 * i + 1]
    child = sizes[_N_NODES]
    sizes[_N_NODES] += 1
    nodes = arrays[_NODES]
    if _NODE * (child + 1) > len(nodes):
        bigger = np.empty(2 * len(nodes), dtype=np.int64)
        bigger[: len(nodes)] = nodes
        arrays[_NODES] = bigger
        nodes = bigger
    at = _NODE * child
    nodes[at + _VALUE] = value
    nodes[at + _LIVE] = 0
    nodes[at + _WEIGHT] = 0
    nodes[at + _FIRST] = -1
    nodes[at + _NEXT] = nodes[_NODE * node + _FIRST]
    nodes[at + _NULL] = -1
    nodes[_NODE * node + _FIRST] = child
    if value == 0:
        nodes[_NODE * node + _NULL] = child
    children[2 * i] = key
    children[2 * i + 1] = child
    sizes[_N_KEYS] += 1
    if 2 * sizes[_N_KEYS] > len(children) // 2:
        _rehash_children(arrays)
    return child


@njit(cache=True, nogil=True)
def _trie_insert(patterns, counts, arrays, r):  # pragma: no cover - compiled
    """Row ``r`` joins the path of its current pattern."""
    order = arrays[_ORDER]
    weight = np.int64(counts[r]) if arrays[_SIZES][_INTEGRAL] else 0
    node = 0
    arrays[_NODES][_LIVE] += 1
    arrays[_NODES][_WEIGHT] += weight
    for d in range(len(order)):
        node = _child_or_new(arrays, node, patterns[r, order[d]] + 1)
        arrays[_NODES][_NODE * node + _LIVE] += 1
        arrays[_NODES][_NODE * node + _WEIGHT] += weight
    sizes = arrays[_SIZES]
    entry = sizes[_N_ENTRIES]
    sizes[_N_ENTRIES] += 1
    _push(arrays, _ENTRIES, 2 * entry + 1, arrays[_NODES][_NODE * node + _FIRST])
    arrays[_ENTRIES][2 * entry] = r
    arrays[_NODES][_NODE * node + _FIRST] = entry
    arrays[_ROW_LEAF][r] = node


@njit(cache=True, nogil=True)
def _trie_remove(patterns, counts, arrays, r):  # pragma: no cover - compiled
    """Row ``r`` leaves the path of its current pattern (its leaf entry stays, now stale)."""
    order, nodes = arrays[_ORDER], arrays[_NODES]
    weight = np.int64(counts[r]) if arrays[_SIZES][_INTEGRAL] else 0
    node = 0
    nodes[_LIVE] -= 1
    nodes[_WEIGHT] -= weight
    for d in range(len(order)):
        node = _child(arrays, node, patterns[r, order[d]] + 1)
        nodes[_NODE * node + _LIVE] -= 1
        nodes[_NODE * node + _WEIGHT] -= weight


@njit(cache=True, nogil=True)
def trie_new(patterns, counts, capacity):  # pragma: no cover - compiled
    """The trie of the rows of ``patterns`` (weights ``counts``): a typed list of int64 arrays
    (positions _ORDER...). ``capacity`` (a power of two) is the first size of the child table. The
    levels go from the most important attribute (the root's children) to the least important (the
    leaves' parents): the attributes the greedy nulls first, and asks about first, are near the
    leaves, where a search that lets them take any value has few nodes left to visit."""
    n_rows, q = patterns.shape
    top = 0
    for r in range(n_rows):
        for j in range(q):
            top = max(top, patterns[r, j] + 1)
    arrays = List()
    for _ in range(_STACK + 1):
        arrays.append(np.empty(0, dtype=np.int64))
    arrays[_ORDER] = np.arange(q - 1, -1, -1).astype(np.int64)
    arrays[_SIZES] = np.zeros(_N_WORK + 1, dtype=np.int64)
    arrays[_SIZES][_STRIDE] = top + 2
    arrays[_SIZES][_N_NODES] = 1  # the root
    # Whole-number weights (counts) are summed exactly in any order, so a subtree's weight can stand
    # for its rows; other weights are summed row by row, in row order.
    integral = counts.sum() < 2.0**53
    for r in range(n_rows):
        if counts[r] != np.floor(counts[r]):
            integral = False
    arrays[_SIZES][_INTEGRAL] = 1 if integral else 0
    arrays[_NODES] = np.empty(_NODE * (2 * n_rows + 64), dtype=np.int64)
    arrays[_NODES][:_NODE] = np.array([0, 0, 0, -1, -1, -1])  # the root
    arrays[_CHILDREN] = np.zeros(2 * capacity, dtype=np.int64)
    arrays[_CHILDREN][1::2] = -1
    arrays[_ENTRIES] = np.empty(2 * n_rows + 64, dtype=np.int64)
    arrays[_ROW_LEAF] = np.full(n_rows, -1, dtype=np.int64)
    arrays[_FOUND] = np.empty(n_rows, dtype=np.int64)
    arrays[_STACK] = np.empty(3 * 64, dtype=np.int64)
    for r in range(n_rows):
        _trie_insert(patterns, counts, arrays, r)
    return arrays


@njit(cache=True, nogil=True)
def _collect(patterns, arrays, p, wild, forbid, most, budget):  # pragma: no cover - compiled
    """Put in ``arrays[_FOUND]`` the rows whose mismatches with row ``p`` number at most ``most``,
    none of them on an attribute of the bit set ``forbid``; ``p`` counts as null on the attributes of
    the bit set ``wild``. Returns how many (in no particular order), or -1 once the work (nodes
    visited, children looked at, leaf entries read) exceeds ``budget``."""
    q = patterns.shape[1]
    order, nodes, entries = arrays[_ORDER], arrays[_NODES], arrays[_ENTRIES]
    row_leaf, found = arrays[_ROW_LEAF], arrays[_FOUND]
    children, stride = arrays[_CHILDREN], arrays[_SIZES][_STRIDE]
    stack = arrays[_STACK]
    work = 0
    n_found = 0
    stack[0], stack[1], stack[2] = 0, 0, 0
    top = 1
    while top > 0:
        top -= 1
        node, depth, spent = stack[3 * top], stack[3 * top + 1], stack[3 * top + 2]
        work += 1
        if depth == q:
            entry = nodes[_NODE * node + _FIRST]
            while entry >= 0:
                work += 1
                r = entries[2 * entry]
                if row_leaf[r] == node:
                    found[n_found] = r
                    n_found += 1
                entry = entries[2 * entry + 1]
        else:
            j = order[depth]
            a = 0 if (wild >> j) & 1 else patterns[p, j] + 1  # 0: p is null here
            if a == 0 or (spent < most and not (forbid >> j) & 1):
                child = nodes[_NODE * node + _FIRST]
                while child >= 0:
                    work += 1
                    if nodes[_NODE * child + _LIVE] > 0:
                        v = nodes[_NODE * child + _VALUE]
                        if 3 * top + 3 > len(stack):
                            bigger = np.empty(2 * len(stack), dtype=np.int64)
                            bigger[: 3 * top] = stack[: 3 * top]
                            stack = bigger
                            arrays[_STACK] = stack
                        stack[3 * top] = child
                        stack[3 * top + 1] = depth + 1
                        stack[3 * top + 2] = spent + (1 if a > 0 and v > 0 and v != a else 0)
                        top += 1
                    child = nodes[_NODE * child + _NEXT]
            else:
                for v in (a, 0):
                    work += 1
                    if v == 0:
                        child = nodes[_NODE * node + _NULL]
                    else:
                        child = children[2 * _child_slot(children, node * stride + v) + 1]
                    if child >= 0 and nodes[_NODE * child + _LIVE] > 0:
                        if 3 * top + 3 > len(stack):
                            bigger = np.empty(2 * len(stack), dtype=np.int64)
                            bigger[: 3 * top] = stack[: 3 * top]
                            stack = bigger
                            arrays[_STACK] = stack
                        stack[3 * top] = child
                        stack[3 * top + 1] = depth + 1
                        stack[3 * top + 2] = spent
                        top += 1
        if work > budget:
            arrays[_SIZES][_N_WORK] += work
            return -1
    arrays[_SIZES][_N_WORK] += work
    return n_found


@njit(cache=True, nogil=True)
def _nearest(patterns, counts, p, allowed, arrays, budget):  # pragma: no cover - compiled
    """What :func:`_nearest_attribute` returns, from trie searches with 1, 2, ... mismatches (none
    outside ``allowed``) until one finds a row at a positive distance (or by the scan when a search
    would cost more than ``budget``)."""
    q = patterns.shape[1]
    forbid = ((1 << q) - 1) & ~allowed
    differs = np.zeros(q, dtype=np.bool_)
    for most in range(1, q + 1):
        n_found = _collect(patterns, arrays, p, 0, forbid, most, budget)
        if n_found < 0:
            arrays[_SIZES][_N_NEAREST_SCANS] += 1
            return _nearest_attribute(patterns, counts, p, allowed)
        found = arrays[_FOUND]
        best = q + 1
        for i in range(n_found):
            r = found[i]
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
        if best <= q:
            for j in range(q):
                if differs[j]:
                    return j
    return -1


@njit(cache=True, nogil=True)
def _matching_total(patterns, counts, p, wild, arrays, budget):  # pragma: no cover - compiled
    """What :func:`_matching_total_scan` returns, from the rows the trie gives."""
    if arrays[_SIZES][_INTEGRAL]:
        total = _weigh(patterns, arrays, p, wild, -1, budget)[0]
        if total >= 0:
            return total
        arrays[_SIZES][_N_SCANNED] += 1
        return _matching_total_scan(patterns, counts, p, wild)
    n_found = _collect(patterns, arrays, p, wild, 0, 0, budget)
    if n_found < 0:
        arrays[_SIZES][_N_SCANNED] += 1
        return _matching_total_scan(patterns, counts, p, wild)
    total = 0.0
    for r in np.sort(arrays[_FOUND][:n_found]):
        if counts[r] != 0.0:
            total += counts[r]
    return total


@njit(cache=True, nogil=True)
def _allowed_attributes(patterns, counts, p, k, arrays, budget):  # pragma: no cover - compiled
    """The strict rule: the bit set of the t least important attributes for the smallest t such that
    suppressing every value of ``p`` among them would bring its frequency to ``k``."""
    q = patterns.shape[1]
    wild = 0
    for t in range(q):
        wild |= 1 << t
        if patterns[p, t] < 0:
            continue  # already null: nulling it changes nothing
        if _matching_total(patterns, counts, p, wild, arrays, budget) >= k:
            return wild
    return wild


@njit(cache=True, nogil=True)
def _weigh(patterns, arrays, p, wild, j, budget):  # pragma: no cover - compiled
    """Whole-number weights only: the weight of the rows that match row ``p`` when the attributes of
    the bit set ``wild`` take any value, split (when ``j`` >= 0, an attribute of ``wild`` on which
    ``p`` has a value) into those equal to ``p`` or null on ``j`` (first) and the others. A node below
    which ``p`` matches anything adds its subtree's weight without going further down. Returns
    (-1, 0) once the work exceeds ``budget``."""
    q = patterns.shape[1]
    order, nodes = arrays[_ORDER], arrays[_NODES]
    children, stride = arrays[_CHILDREN], arrays[_SIZES][_STRIDE]
    stack = arrays[_STACK]
    # Below depth `floor` p matches anything; `level`: the depth of j.
    floor = q
    while floor > 0 and ((wild >> order[floor - 1]) & 1 or patterns[p, order[floor - 1]] < 0):
        floor -= 1
    level = -1
    for d in range(q):
        if order[d] == j:
            level = d
    same = 0
    other = 0
    work = 0
    stack[0], stack[1], stack[2] = 0, 0, 0
    top = 1
    while top > 0:
        top -= 1
        node, depth, spent = stack[3 * top], stack[3 * top + 1], stack[3 * top + 2]
        work += 1
        if depth >= floor and depth > level:
            if spent:
                other += nodes[_NODE * node + _WEIGHT]
            else:
                same += nodes[_NODE * node + _WEIGHT]
            continue
        c = order[depth]
        a = 0 if (wild >> c) & 1 else patterns[p, c] + 1  # 0: p matches anything here
        if depth == level and depth + 1 >= floor:
            # The split on j, with nothing below to look at: p's value and null against the rest.
            a = patterns[p, c] + 1
            here = 0
            if nodes[_NODE * node + _NULL] >= 0:
                here += nodes[_NODE * nodes[_NODE * node + _NULL] + _WEIGHT]
            child = children[2 * _child_slot(children, node * stride + a) + 1]
            if child >= 0:
                here += nodes[_NODE * child + _WEIGHT]
            same += here
            other += nodes[_NODE * node + _WEIGHT] - here
            work += 2
        elif a == 0:
            split = depth == level
            a = patterns[p, c] + 1
            child = nodes[_NODE * node + _FIRST]
            while child >= 0:
                work += 1
                if nodes[_NODE * child + _WEIGHT] > 0:
                    v = nodes[_NODE * child + _VALUE]
                    if 3 * top + 3 > len(stack):
                        bigger = np.empty(2 * len(stack), dtype=np.int64)
                        bigger[: 3 * top] = stack[: 3 * top]
                        stack = bigger
                        arrays[_STACK] = stack
                    stack[3 * top] = child
                    stack[3 * top + 1] = depth + 1
                    stack[3 * top + 2] = 1 if split and v > 0 and v != a else spent
                    top += 1
                child = nodes[_NODE * child + _NEXT]
        else:
            for v in (a, 0):
                work += 1
                if v == 0:
                    child = nodes[_NODE * node + _NULL]
                else:
                    child = children[2 * _child_slot(children, node * stride + v) + 1]
                if child >= 0 and nodes[_NODE * child + _WEIGHT] > 0:
                    if 3 * top + 3 > len(stack):
                        bigger = np.empty(2 * len(stack), dtype=np.int64)
                        bigger[: 3 * top] = stack[: 3 * top]
                        stack = bigger
                        arrays[_STACK] = stack
                    stack[3 * top] = child
                    stack[3 * top + 1] = depth + 1
                    stack[3 * top + 2] = spent
                    top += 1
        if work > budget:
            arrays[_SIZES][_N_WORK] += work
            return -1.0, 0.0
    arrays[_SIZES][_N_WORK] += work
    arrays[_SIZES][_N_INDEXED] += 1
    return float(same), float(other)


@njit(cache=True, nogil=True)
def _single_gain(patterns, counts, p, j, arrays, budget):  # pragma: no cover - compiled
    """Frequency of row ``p`` and the weight of the rows that differ from it only on ``j`` (a row of
    positive weight does iff that weight is positive), each summed in row order as
    :func:`_profile_scan` sums ``total`` and ``gain[j]``: both are read off the rows that match ``p``
    when ``j`` takes any value. Returns (-1, 0) when the search would cost more than ``budget``."""
    if arrays[_SIZES][_INTEGRAL]:
        return _weigh(patterns, arrays, p, 1 << j, j, budget)
    n_found = _collect(patterns, arrays, p, 1 << j, 0, 0, budget)
    if n_found < 0:
        return -1.0, 0.0
    sizes = arrays[_SIZES]
    sizes[_N_INDEXED] += 1
    sizes[_N_FOUND] += n_found
    a = patterns[p, j]
    total = 0.0
    gain = 0.0
    for r in np.sort(arrays[_FOUND][:n_found]):
        weight = counts[r]
        if weight == 0.0:
            continue
        b = patterns[r, j]
        if a >= 0 and b >= 0 and a != b:
            gain += weight
        else:
            total += weight
    return total, gain


@njit(cache=True, nogil=True)
def _choose(patterns, counts, p, k, allowed, gain, near, arrays, budget):  # pragma: no cover - compiled
    """One step of the greedy for row ``p``: -2 if its frequency reaches ``k``, else the attribute
    to null (only attributes of the bit set ``allowed``), -1 if none can help.

    Step 1 asks about single suppressions in suppression order and stops at the first that reaches
    ``k``, each answered by one trie search in which that attribute takes any value (the least
    important ones sit at the bottom of the trie, so the usual first answer is cheap). When no single
    suppression reaches ``k``, the gains of every allowed attribute are known, so ``near`` is too,
    and sdcMicro's rule is applied. Every figure equals the scan's (:func:`_profile_scan`)."""
    q = patterns.shape[1]
    total = -1.0
    for j in range(q):
        gain[j] = 0.0
        near[j] = False
    for j in range(q):
        if not (allowed >> j) & 1 or patterns[p, j] < 0:
            continue
        total, gain[j] = _single_gain(patterns, counts, p, j, arrays, budget)
        if total < 0:  # the search would cost more than the scan
            arrays[_SIZES][_N_SCANNED] += 1
            total = _profile_scan(patterns, counts, p, gain, near)
            break
        near[j] = gain[j] > 0.0
        if total >= k:
            return -2
        if total + gain[j] >= k:
            return j
    if total < 0:  # no allowed attribute with a value: p's frequency is all it can reach
        total = _matching_total(patterns, counts, p, 0, arrays, budget)
    if total >= k:
        return -2
    for j in range(q):
        if (allowed >> j) & 1 and patterns[p, j] >= 0 and total + gain[j] >= k:
            return j
    for j in range(q):  # sdcMicro's rule; a row at distance 1 is a nearest row
        if (allowed >> j) & 1 and near[j]:
            return j
    return _nearest(patterns, counts, p, allowed, arrays, budget)


@njit(cache=True, nogil=True)
def wildcard_greedy(patterns, counts, order, k, suppressed, arrays, budget, strict):  # pragma: no cover
    """Visit the rows of ``order``; ``budget``: a trie search that would cost more than this scans
    every row instead (same result). ``strict``: only the attributes of the strict rule
    (:func:`_allowed_attributes`, fixed at the first step of a visit) may be suppressed."""
    q = patterns.shape[1]
    gain = np.zeros(q)
    near = np.zeros(q, dtype=np.bool_)
    everything = (1 << q) - 1
    for p in order:
        allowed = everything
        if strict:
            allowed = _allowed_attributes(patterns, counts, p, k, arrays, budget)
        while True:
            choice = _choose(patterns, counts, p, k, allowed, gain, near, arrays, budget)
            if choice < 0:
                # -2: p reaches k. -1: every row matches p, so its frequency is all the weight,
                # which cannot be below k here.
                break
            _trie_remove(patterns, counts, arrays, p)
            patterns[p, choice] = -1
            suppressed[p, choice] = True
            _trie_insert(patterns, counts, arrays, p)
