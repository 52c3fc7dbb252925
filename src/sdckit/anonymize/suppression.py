"""Local suppression and risk-targeted value suppression.

Value suppression replaces single quasi-identifier cells by a real null (never a whole record), so
that the released table satisfies a privacy model while most of its values stay exact.

:func:`local_suppression` reaches k-anonymity the way sdcMicro's ``localSuppression`` does
(Templ, Kowarik & Meindl 2015; Templ 2017): greedily, suppressing values of the attributes the user
ranks least important first, until every record matches at least ``k`` records when a null matches
every value (sdcMicro's wildcard semantics, :mod:`sdckit.frequency`); with ``strict_importance`` a
record loses a more important value only when its less important ones alone cannot reach ``k``.

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
from numba import njit
from numba.typed import List
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
# First size of the trie's child table (it doubles as needed).
_CAPACITY = 1 << 16


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

# Positions in the typed list of int64 arrays that holds the trie (see _trie_new). _NODES: _NODE
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
def _trie_new(patterns, counts, capacity):  # pragma: no cover - compiled
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
def _wildcard_greedy(patterns, counts, order, k, suppressed, arrays, budget, strict):  # pragma: no cover
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
    strict_importance: bool = False,
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
        The quasi-identifiers from most important to least important, or a mapping name -> rank with
        1 the most important (sdcMicro's ``importance`` vector; equal ranks allowed, ties suppressed
        in column order). Default (sdcMicro's): attributes with more distinct non-missing values are
        less important; ties in column order, the earlier attribute counted more important. By
        default the order is a preference, not a guarantee: among the suppressions the greedy rule
        below considers, the least important attribute is taken, but a single suppression of an
        important attribute that reaches ``k`` is preferred to two of less important ones (see
        ``strict_importance``).
    missing
        ``"wildcard"`` (default, sdcMicro): a null matches every value, so a record whose
        quasi-identifiers are all null matches every record. ``"category"``: a null is a value of its
        own, so the release is k-anonymous in the usual sense with nulls as a category.
    weights
        Sampling weights: the condition becomes "the weights of the matching records sum to at least
        ``k``" (an estimated population frequency). sdcMicro uses sample counts here.
    progress
        Called as ``progress(done, total)`` with the violating patterns visited so far (wildcard) or
        the rounds done (category).
    strict_importance
        ``True``: a record never loses the value of an attribute while suppressing values of less
        important attributes alone could still bring it to ``k``. The rule, for the visited pattern
        ``p`` (attributes in suppression order a_1, the least important, ..., a_q): take the
        smallest t such that nulling every value of ``p`` among a_1..a_t (the other patterns as they
        are at that moment) would bring its frequency to ``k``; then apply the greedy rule below
        with only a_1..a_t allowed (in step 2 only the patterns that match ``p`` on a_t+1..a_q count).
        So the most important attribute a record loses is a_t, and nulling all of a_1..a_t-1 would not
        have reached ``k`` when it was visited (nor, as frequencies only grow, in the original data).
        The record need not lose all of a_1..a_t: the greedy may reach ``k`` with fewer cells, so a
        less important value can survive a more important suppression. It may cost more cells than
        the default. No effect with ``missing="category"``, whose rounds already suppress in
        importance order (round t nulls a_t). ``False`` (default): the greedy rule as below.

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

    With ``strict_importance`` steps 1 and 2 consider only the allowed attributes (see above).

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
      the nearest-pattern rule. So a record may lose one important value where sdcMicro takes two
      less important ones (on sdcMicro's ``testdata`` with the usual keys and importance urbrur, sex,
      walls, electcon, roof, water, relat, k = 3, record 2879 in R's 1-based numbering loses
      ``urbrur``, the most important key, where sdcMicro suppresses ``roof`` and ``relat``).
    * ``strict_importance`` is an addition (sdcMicro's rule, too, may null an important attribute:
      the least important one on which ``p`` differs from a nearest pattern). On that record it
      suppresses ``water`` and ``relat``: relat alone cannot reach 3, relat and water can, so roof
      is not allowed.
    * Work is on distinct patterns, not records, so identical records get identical suppressions;
      sdcMicro's reduction of large groups to ``k`` records is unnecessary here.
    * No ``combs``, strata, or ``alpha`` (missing values count fully, sdcMicro's default alpha=1).
    * Sampling weights and the category treatment of nulls (with its own rounds, above) are
      additions.
    * The greedy itself is exact but its data structure is not sdcMicro's: the patterns are kept in
      a trie (see the comments of the compiled kernels), so the cost of a visit grows with the number
      of trie nodes (pattern prefixes) that match it, not with the number of records or null masks.

    Returns
    -------
    Release
        ``method="local-suppression"``; ``suppressed_cells`` / ``cell_penalty`` mark the cells
        suppressed here (nulls already in the data are not counted); ``suppressed_records`` is all
        False; ``classes`` is -1 for the wildcard treatment (wildcard matches do not partition the
        records) and each record's equivalence class for the category treatment. ``parameters``:
        ``k``, ``importance`` (most important first), ``missing``, ``weighted`` and
        ``strict_importance``.
    """
    if isinstance(k, bool) or not isinstance(k, int | np.integer):
        raise ConfigError(f"k must be an integer, got {k!r}")
    k = int(k)
    if k < 1:
        raise ConfigError(f"k must be at least 1, got {k}")
    if not isinstance(strict_importance, bool | np.bool_):
        raise ConfigError(f"strict_importance must be true or false, got {strict_importance!r}")
    strict_importance = bool(strict_importance)
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
        arrays = _trie_new(patterns, counts, _CAPACITY) if len(visit) else None
        for start in range(0, len(visit), _CHUNK):
            chunk = visit[start : start + _CHUNK]
            _wildcard_greedy(
                patterns,
                counts,
                chunk,
                threshold,
                pattern_suppressed,
                arrays,
                n_patterns // 4,
                strict_importance,
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
            "strict_importance": strict_importance,
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
    multiplicity: np.ndarray | None = None,
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

    ``multiplicity`` (records per row) says that each row stands for that many identical records (the
    patterns of a data set, :mod:`sdckit.scale`; ``weights`` then holds their counts or sums of
    sampling weights): the records of a pattern are treated alike, and every count is of records. A
    cell budget would have to split a pattern's records, so it is refused with a multiplicity.
    """
    delta = _check_parameters(delta, max_rounds, cell_budget)
    if multiplicity is not None and cell_budget is not None:
        raise ConfigError(
            "cell_budget picks records one by one, which a run over partitions (on distinct patterns) "
            "cannot; run in memory for a cell budget"
        )
    per_row = np.ones(table.n_records, dtype=np.int64) if multiplicity is None else np.asarray(multiplicity)
    say = progress if progress is not None else (lambda message: None)
    identifiers = [a.name for a in table.schema.with_role(Role.IDENTIFIER)]
    schema = Schema(tuple(a for a in table.schema.attributes if a.role is not Role.IDENTIFIER))
    data = table.data.drop(identifiers)

    def measure(frame: pl.DataFrame) -> RecordRisk:
        risk = combined_risk(
            Table(frame, schema, source=table.source),
            alpha=alpha,
            epsilon=epsilon,
            missing=missing,
            weights=weights,
        )
        return risk if multiplicity is None else replace(risk, multiplicity=per_row)

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
        n_high = int(per_row[high].sum())
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
        cells = int(per_row @ mask.sum(axis=1))
        rounds.append({"high_risk_records": n_high, "suppressed_cells": cells})
        say(
            f"round {len(rounds)}: {n_high:,} records above {delta:g}, {cells:,} cells suppressed; "
            "re-measuring"
        )
        current = measure(data)
    after = current
    high_after = int(per_row[after.risk > delta].sum())
    irreducible = int(per_row[(after.risk > delta) & null.all(axis=1)].sum())
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
    strict_importance: Annotated[
        bool,
        Field(
            description="Never suppress a more important key of a record while its less important keys "
            "can still make it safe."
        ),
    ] = False


def _local_summary(release: Release) -> dict[str, Any]:
    from sdckit.anonymize.base import cell_figures
    from sdckit.utility import release_ncp

    return {
        "k": release.params.k,
        "missing": release.params.missing,
        "importance": release.parameters.get("importance"),
        "strict_importance": release.params.strict_importance,
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
        strict_importance=params.strict_importance,
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
