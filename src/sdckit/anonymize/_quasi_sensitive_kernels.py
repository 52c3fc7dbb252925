"""Compiled kernels of the quasi-sensitive term suppression (:mod:`sdckit.anonymize.quasi_sensitive`).

The set-enumeration search of Shi, Xiong & Fung (2010) over one QI group, as a resumable numba loop
over an explicit stack: :func:`search` runs it for a budget of node evaluations, :func:`evaluate` and
:func:`passes` score the group's current linked label sets K(t), :func:`recompute_record` updates one
record's K(t) bitset, and :func:`link_bitsets` links records to labels (Definition 2) through the
knowledge's bitsets. The state lives in two arrays whose slots are named below, so that Python reads
the figures and checks the clock between calls.

Implementation: the search runs in a compiled (numba) loop over an explicit stack (no recursion limit),
resumable, so that Python checks the clock between chunks of node evaluations. A record's K(t) is a
bitset: the AND of the label bitsets of its remaining items (only the words of E's bitset that any of
the group's items touches are kept); a node changes one record, so only that record's K is recomputed,
and the beliefs follow from the K's in one pass over their set bits.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from sdckit._numba import njit
from sdckit.models.base import TOLERANCE
from sdckit.setvalued import ItemSets

#: Costs closer than this are equal (the pruning compares ``cost >= best - _COST_EPSILON``).
_COST_EPSILON = 1e-12

CL, T = 0, 1  # model kinds in the compiled search

# ints state slots
DEPTH, EVALUATIONS, FOUND, FINISHED, STARTED, FIRST_REPORTED, STAMP, EFFORT = range(8)
# floats state slots
BEST_COST, FIRST_COST, _EFFORT_SCORE, _EFFORT_COST = range(4)
#: The ints slots a new group's search starts from 0 (STAMP is shared between groups).
RESET = [DEPTH, EVALUATIONS, FOUND, FINISHED, STARTED, FIRST_REPORTED, EFFORT]

_ONE = np.uint64(1)
_M1 = np.uint64(0x5555555555555555)
_M2 = np.uint64(0x3333333333333333)
_M4 = np.uint64(0x0F0F0F0F0F0F0F0F)
_H01 = np.uint64(0x0101010101010101)
_S1, _S2, _S4, _S56, _S58 = (np.uint64(s) for s in (1, 2, 4, 56, 58))
_DE_BRUIJN = np.uint64(0x03F79D71B4CB0A89)
_DE_BRUIJN_TABLE = np.zeros(64, dtype=np.int64)
for _bit in range(64):
    _DE_BRUIJN_TABLE[(((1 << _bit) * 0x03F79D71B4CB0A89) & 0xFFFFFFFFFFFFFFFF) >> 58] = _bit


# ---------------------------------------------------------------------------------------------------
# Compiled kernels
# ---------------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True, inline="always")
def _popcount(x):  # pragma: no cover - compiled
    x = x - ((x >> _S1) & _M1)
    x = (x & _M2) + ((x >> _S2) & _M2)
    x = (x + (x >> _S4)) & _M4
    return np.int64((x * _H01) >> _S56)


@njit(cache=True, nogil=True)
def recompute_record(i, record_start, removed, cell_bits, kbits, ksize):  # pragma: no cover - compiled
    """K(t_i) as the AND of the label bitsets of the record's remaining cells (size -1: no item left)."""
    n_words = cell_bits.shape[1]
    first = True
    for cell in range(record_start[i], record_start[i + 1]):
        if removed[cell]:
            continue
        if first:
            for word in range(n_words):
                kbits[i, word] = cell_bits[cell, word]
            first = False
        else:
            for word in range(n_words):
                kbits[i, word] &= cell_bits[cell, word]
    if first:
        ksize[i] = -1
        return
    size = 0
    for word in range(n_words):
        if kbits[i, word] != 0:
            size += _popcount(kbits[i, word])
    ksize[i] = size


@njit(cache=True, nogil=True)
def evaluate(
    kbits, ksize, word_map, n_labels, alpha, alpha_sum, alpha_square, kind, c, stamp, acc, touched, ints
):  # pragma: no cover - compiled
    """The score of the group's current K's: l' (kind 0; inf when no label is linked) or
    minus the distance to the prior (kind 1).

    beta_L = (1/d) sum over records of [L in K_i] / |K_i|; a record with no item left links to every
    label of E, which adds ``offset = emptied / (d |E|)`` to every label (kept as a scalar).
    """
    d = kbits.shape[0]
    n_words = kbits.shape[1]
    ints[STAMP] += 1
    mark = ints[STAMP]
    n_touched = 0
    emptied = 0
    for i in range(d):
        size = ksize[i]
        if size < 0:
            emptied += 1
            continue
        if size == 0:
            continue
        share = 1.0 / (d * size)
        for word in range(n_words):
            x = kbits[i, word]
            base = word_map[word] * 64
            while x != 0:
                low = x & (~x + _ONE)
                label = base + _DE_BRUIJN_TABLE[np.int64((low * _DE_BRUIJN) >> _S58)]
                if stamp[label] != mark:
                    stamp[label] = mark
                    acc[label] = 0.0
                    touched[n_touched] = label
                    n_touched += 1
                acc[label] += share
                x ^= low
    offset = emptied / (d * n_labels) if n_labels > 0 else 0.0
    if kind == T:
        total = 0.0
        for j in range(n_touched):
            label = touched[j]
            value = acc[label] + offset
            total += (value - alpha[label]) ** 2 - (offset - alpha[label]) ** 2
        total += n_labels * offset * offset - 2.0 * offset * alpha_sum + alpha_square
        return -math.sqrt(max(total, 0.0))
    if n_touched == 0 and offset == 0.0:
        return np.inf  # links to nothing: passes (l' = inf)
    values = np.empty(n_touched)
    for j in range(n_touched):
        values[j] = acc[touched[j]] + offset
    values = np.sort(values)  # ascending: values[n_touched - l] is p_l
    rest = n_labels - n_touched if offset > 0.0 else 0
    first = values[n_touched - 1] if n_touched > 0 else offset
    if rest > 0:
        # l = n_touched + 1 + s has tail (rest - s) * offset, s = 0 .. rest - 1
        s = int(math.floor(rest - (first - TOLERANCE) / (c * offset)))
        s = min(max(s, -1), rest - 1)
        while s + 1 <= rest - 1 and first <= c * (rest - s - 1) * offset + TOLERANCE:
            s += 1
        while s >= 0 and not (first <= c * (rest - s) * offset + TOLERANCE):
            s -= 1
        if s >= 0:
            return float(n_touched + 1 + s)
    tail = rest * offset
    for level in range(n_touched, 0, -1):
        tail += values[n_touched - level]
        if first <= c * tail + TOLERANCE:
            return float(level)
    return 0.0


@njit(cache=True, nogil=True, inline="always")
def passes(score, kind, required_l, required_t):  # pragma: no cover - compiled
    if kind == T:
        return -score <= required_t + TOLERANCE
    return score >= required_l


@njit(cache=True, nogil=True)
def _apply(cell, on, cell_record, record_start, removed, v, cell_bits, kbits, ksize):  # pragma: no cover
    i = cell_record[cell]
    removed[cell] = on
    v[i] += 1 if on else -1
    recompute_record(i, record_start, removed, cell_bits, kbits, ksize)


@njit(cache=True, nogil=True)
def _consider(score, cost, kind, removed, effort_mask, ints, floats):  # pragma: no cover - compiled
    """Best effort when no node satisfies: the best score seen, ties to the cheaper node."""
    better = score > floats[_EFFORT_SCORE] or (
        score == floats[_EFFORT_SCORE] and cost < floats[_EFFORT_COST] - _COST_EPSILON
    )
    if better:
        floats[_EFFORT_SCORE] = score
        floats[_EFFORT_COST] = cost
        effort_mask[:] = removed
        ints[EFFORT] = 1


@njit(cache=True, nogil=True)
def _record_solution(cost, removed, best_mask, ints, floats):  # pragma: no cover - compiled
    floats[BEST_COST] = cost
    best_mask[:] = removed
    if ints[FOUND] == 0:
        ints[FOUND] = 1
        floats[FIRST_COST] = cost


@njit(cache=True, nogil=True)
def _expand(
    depth,
    source_depth,
    source_start,
    cell_record,
    record_start,
    w,
    cell_bits,
    word_map,
    n_labels,
    alpha,
    alpha_sum,
    alpha_square,
    kind,
    c,
    required_l,
    required_t,
    norm,
    adaptive,
    removed,
    v,
    kbits,
    ksize,
    stamp,
    acc,
    touched,
    order,
    tail_length,
    position,
    cost,
    score,
    child_score,
    best_mask,
    effort_mask,
    ints,
    floats,
):  # pragma: no cover - compiled
    """Set the tailset of the node at ``depth``: ``order[source_depth, source_start:]`` (all cells for
    the root, ``source_depth < 0``), reordered by gain / ΔT when ``adaptive``."""
    m = cell_record.shape[0]
    if source_depth < 0:
        n = m
        for j in range(m):
            order[depth, j] = j
    else:
        n = tail_length[source_depth] - source_start
        for j in range(n):
            order[depth, j] = order[source_depth, source_start + j]
    tail_length[depth] = n
    position[depth] = 0
    if not adaptive or n == 0:
        return
    cells = np.sort(order[depth, :n].copy())  # ties keep the cell order
    ratios = np.empty(n)
    scores = np.empty(n)
    for j in range(n):
        cell = cells[j]
        i = cell_record[cell]
        step = 1.0 / (w[i] - v[i]) / norm
        child_cost = cost[depth] + step
        if child_cost >= floats[BEST_COST] - _COST_EPSILON:
            ratios[j] = -np.inf
            scores[j] = np.nan
            continue
        _apply(cell, True, cell_record, record_start, removed, v, cell_bits, kbits, ksize)
        value = evaluate(
            kbits,
            ksize,
            word_map,
            n_labels,
            alpha,
            alpha_sum,
            alpha_square,
            kind,
            c,
            stamp,
            acc,
            touched,
            ints,
        )
        ints[EVALUATIONS] += 1
        if passes(value, kind, required_l, required_t):
            _record_solution(child_cost, removed, best_mask, ints, floats)
        else:
            _consider(value, child_cost, kind, removed, effort_mask, ints, floats)
        _apply(cell, False, cell_record, record_start, removed, v, cell_bits, kbits, ksize)
        scores[j] = value
        ratios[j] = (value - score[depth]) / step
    ranking = np.argsort(-ratios, kind="mergesort")
    for j in range(n):
        order[depth, j] = cells[ranking[j]]
        child_score[depth, j] = scores[ranking[j]]


@njit(cache=True, nogil=True)
def search(
    cell_record,
    record_start,
    w,
    cell_bits,
    word_map,
    n_labels,
    alpha,
    alpha_sum,
    alpha_square,
    kind,
    c,
    required_l,
    required_t,
    norm,
    adaptive,
    removed,
    v,
    kbits,
    ksize,
    stamp,
    acc,
    touched,
    order,
    tail_length,
    position,
    cost,
    score,
    child_score,
    best_mask,
    effort_mask,
    ints,
    floats,
    budget,
):  # pragma: no cover - compiled
    """Run the depth-first search for up to ``budget`` more node evaluations.

    Returns 0 when the budget is spent, 1 when the tree is exhausted (or the root passes), 2 right after
    the first satisfying node is found (so the caller can time it). The whole state lives in the arrays,
    so the next call resumes where this one stopped.

    One function on purpose: the loop body is the hot path of the search, and splitting it into
    compiled helpers that share the stack and the state arrays would cost calls per node.
    """
    d = w.shape[0]
    m = cell_record.shape[0]
    start = ints[EVALUATIONS]
    if ints[STARTED] == 0:
        ints[STARTED] = 1
        for i in range(d):
            recompute_record(i, record_start, removed, cell_bits, kbits, ksize)
        root = evaluate(
            kbits,
            ksize,
            word_map,
            n_labels,
            alpha,
            alpha_sum,
            alpha_square,
            kind,
            c,
            stamp,
            acc,
            touched,
            ints,
        )
        ints[EVALUATIONS] += 1
        if passes(root, kind, required_l, required_t):
            _record_solution(0.0, removed, best_mask, ints, floats)
            ints[FINISHED] = 1
            return 1
        _consider(root, 0.0, kind, removed, effort_mask, ints, floats)
        ints[DEPTH] = 0
        cost[0] = 0.0
        score[0] = root
        _expand(
            0,
            -1,
            0,
            cell_record,
            record_start,
            w,
            cell_bits,
            word_map,
            n_labels,
            alpha,
            alpha_sum,
            alpha_square,
            kind,
            c,
            required_l,
            required_t,
            norm,
            adaptive,
            removed,
            v,
            kbits,
            ksize,
            stamp,
            acc,
            touched,
            order,
            tail_length,
            position,
            cost,
            score,
            child_score,
            best_mask,
            effort_mask,
            ints,
            floats,
        )
    while True:
        if ints[FOUND] == 1 and ints[FIRST_REPORTED] == 0:
            ints[FIRST_REPORTED] = 1
            return 2
        if ints[EVALUATIONS] - start >= budget:
            return 0
        depth = ints[DEPTH]
        if position[depth] >= tail_length[depth]:
            if depth == 0:
                ints[FINISHED] = 1
                return 1
            cell = order[depth - 1, position[depth - 1] - 1]
            _apply(cell, False, cell_record, record_start, removed, v, cell_bits, kbits, ksize)
            ints[DEPTH] = depth - 1
            continue
        j = position[depth]
        position[depth] = j + 1
        cell = order[depth, j]
        i = cell_record[cell]
        child_cost = cost[depth] + 1.0 / (w[i] - v[i]) / norm
        if child_cost >= floats[BEST_COST] - _COST_EPSILON:
            continue
        _apply(cell, True, cell_record, record_start, removed, v, cell_bits, kbits, ksize)
        if adaptive:
            value = child_score[depth, j]  # evaluated (and recorded) when the tailset was ordered
            satisfied = passes(value, kind, required_l, required_t)
        else:
            value = evaluate(
                kbits,
                ksize,
                word_map,
                n_labels,
                alpha,
                alpha_sum,
                alpha_square,
                kind,
                c,
                stamp,
                acc,
                touched,
                ints,
            )
            ints[EVALUATIONS] += 1
            satisfied = passes(value, kind, required_l, required_t)
            if satisfied:
                _record_solution(child_cost, removed, best_mask, ints, floats)
            else:
                _consider(value, child_cost, kind, removed, effort_mask, ints, floats)
        if satisfied or j + 1 >= tail_length[depth] or depth + 1 >= m:
            _apply(cell, False, cell_record, record_start, removed, v, cell_bits, kbits, ksize)
            continue
        cost[depth + 1] = child_cost
        score[depth + 1] = value
        _expand(
            depth + 1,
            depth,
            j + 1,
            cell_record,
            record_start,
            w,
            cell_bits,
            word_map,
            n_labels,
            alpha,
            alpha_sum,
            alpha_square,
            kind,
            c,
            required_l,
            required_t,
            norm,
            adaptive,
            removed,
            v,
            kbits,
            ksize,
            stamp,
            acc,
            touched,
            order,
            tail_length,
            position,
            cost,
            score,
            child_score,
            best_mask,
            effort_mask,
            ints,
            floats,
        )
        ints[DEPTH] = depth + 1


@njit(cache=True, nogil=True)
def link_bitsets(indptr, items, item_bits, n_labels):  # pragma: no cover - compiled
    """K(t) of every record as CSR (indptr, labels): the set bits of the AND of its items' bitsets;
    a record without items links to every label."""
    n = indptr.shape[0] - 1
    n_words = item_bits.shape[1]
    counts = np.zeros(n + 1, dtype=np.int64)
    scratch = np.empty(n_words, dtype=np.uint64)
    for t in range(n):
        start, stop = indptr[t], indptr[t + 1]
        if start == stop:
            counts[t + 1] = n_labels
            continue
        for word in range(n_words):
            scratch[word] = item_bits[items[start], word]
        for k in range(start + 1, stop):
            for word in range(n_words):
                scratch[word] &= item_bits[items[k], word]
        total = 0
        for word in range(n_words):
            if scratch[word] != 0:
                total += _popcount(scratch[word])
        counts[t + 1] = total
    out_indptr = np.cumsum(counts)
    labels = np.empty(out_indptr[n], dtype=np.int64)
    for t in range(n):
        start, stop = indptr[t], indptr[t + 1]
        at = out_indptr[t]
        if start == stop:
            for label in range(n_labels):
                labels[at + label] = label
            continue
        for word in range(n_words):
            x = item_bits[items[start], word]
            for k in range(start + 1, stop):
                x &= item_bits[items[k], word]
            while x != 0:
                low = x & (~x + _ONE)
                labels[at] = word * 64 + _DE_BRUIJN_TABLE[np.int64((low * _DE_BRUIJN) >> _S58)]
                at += 1
                x ^= low
    return out_indptr, labels


# ---------------------------------------------------------------------------------------------------
# Knowledge as bitsets, linking, prior (numpy around the compiled linking)
# ---------------------------------------------------------------------------------------------------


def item_bitsets(knowledge_sets: ItemSets, n_items: int) -> np.ndarray:
    """``(n_items, words)`` uint64: bit L of row x is set iff item x is in S_L."""
    n_labels = knowledge_sets.n_records
    n_words = max((n_labels + 63) // 64, 1)
    bits = np.zeros((n_items, n_words), dtype=np.uint64)
    labels = knowledge_sets.record_of_entries()
    items = knowledge_sets.items.astype(np.int64)
    np.bitwise_or.at(bits, (items, labels >> 6), np.left_shift(np.uint64(1), (labels & 63).astype(np.uint64)))
    return bits


def linked_matrix(records: ItemSets, item_bits: np.ndarray, n_labels: int) -> sp.csr_matrix:
    """Definition 2 through the bitsets: the same matrix as :func:`sdckit.setvalued.linked_labels`
    without forming the (dense when label sets are large) shared-item counts."""
    indptr, labels = link_bitsets(records.indptr, records.items, item_bits, n_labels)
    return sp.csr_matrix(
        (np.ones(labels.size, dtype=bool), labels, indptr), shape=(records.n_records, n_labels)
    )


def prior(linked: sp.csr_matrix) -> np.ndarray:
    """alpha_L: the mean of P(t -> L) = 1/|K(t)| over all records
    (as :func:`sdckit.models.quasi_sensitive.beliefs` defaults to)."""
    counts = np.diff(linked.indptr)
    n, n_labels = linked.shape
    weights = np.repeat(1.0 / np.maximum(counts, 1), counts)
    return np.bincount(linked.indices, weights=weights, minlength=n_labels) / max(n, 1)
