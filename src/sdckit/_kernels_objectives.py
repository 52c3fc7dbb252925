"""Compiled (numba) loop of the classification metric (:mod:`sdckit.utility.objectives`): the
(class x target value) table of a lattice node's records and each class's two largest cells, in one
pass over the (combination, target value, records) triples, in place of numpy's bincount, reshape
and partition per call (the metric's value and its bound read the same table)."""

from __future__ import annotations

# sdckit._numba first (see sdckit._kernels_release).
from sdckit._numba import njit  # isort: skip

import numpy as np


@njit(cache=True, nogil=True)
def class_target_table(
    classes, pair_combination, pair_values, pair_counts, n_classes, width
):  # pragma: no cover
    """The (class x value) table of records and, per class, its largest and second largest cells.

    Triple ``p`` adds ``pair_counts[p]`` records of value ``pair_values[p]`` to the class
    ``classes[pair_combination[p]]`` (int64 arrays; counts float64), in the order of the triples, as
    numpy's weighted bincount sums them. The two largest cells are those ``np.partition`` leaves at a
    row's end (equal cells count twice; 0 for the second when ``width`` is 1)."""
    table = np.zeros((n_classes, width))
    for p in range(len(pair_combination)):
        table[classes[pair_combination[p]], pair_values[p]] += pair_counts[p]
    top1 = np.zeros(n_classes)
    top2 = np.zeros(n_classes)
    for c in range(n_classes):
        if width == 1:
            top1[c] = table[c, 0]
            continue
        largest, second = table[c, 0], table[c, 1]
        if second > largest:
            largest, second = second, largest
        for v in range(2, width):
            cell = table[c, v]
            if cell > largest:
                second = largest
                largest = cell
            elif cell > second:
                second = cell
        top1[c] = largest
        top2[c] = second
    return table, top1, top2


@njit(cache=True, nogil=True)
def kept_classes(classes, suppressed, pair_combination, pair_values, n_classes):  # pragma: no cover
    """Which classes are kept (their combinations not ``suppressed``) and the largest target value
    of a triple of a kept class plus 1 (0 when no class is kept)."""
    kept = np.zeros(n_classes, dtype=np.bool_)
    for c in range(len(classes)):
        if not suppressed[c]:
            kept[classes[c]] = True
    width = 0
    for p in range(len(pair_combination)):
        if not suppressed[pair_combination[p]] and pair_values[p] + 1 > width:
            width = pair_values[p] + 1
    return kept, width


@njit(cache=True, nogil=True)
def classification_bound(
    sizes, top1, gs_factor, infrequent, no_majority, max_suppressed, kept_size
):  # pragma: no cover
    """The two sums of :func:`sdckit.utility.objectives._classification_bound` over the classes
    (``sizes``, ``top1``): ``sum_i min(pS·|E_i|, k_i)`` and ``sum_i k_i`` less an upper bound of the
    saving of suppressing classes of at most ``max_suppressed`` records, ``k_i = min(pI·(|E_i| -
    top1_i), pN·|E_i|)``: a class saves ``k_i - pS·|E_i|``, ``r_i`` per record; the records are put
    in 64 buckets of ``r`` up to the largest, and the buckets filled from the top, each record
    counted at its bucket's upper edge (the fractional knapsack's optimum with every ``r_i`` rounded
    up, so at least any suppression's saving, and at most the largest ``r_i`` times the limit).
    A class of at least ``kept_size`` records is never suppressed (it counts ``k_i`` in the first sum
    and saves nothing; ``inf``: any class may be)."""
    least = 0.0
    total = 0.0
    largest = 0.0
    for c in range(len(sizes)):
        size = sizes[c]
        kept = min(infrequent * (size - top1[c]), no_majority * size)
        total += kept
        if size >= kept_size:
            least += kept
            continue
        least += min(gs_factor * size, kept)
        if size > 0:
            largest = max(largest, (kept - gs_factor * size) / size)
    if largest <= 0.0:
        return least, total
    buckets = np.zeros(64)
    for c in range(len(sizes)):
        size = sizes[c]
        if size > 0 and size < kept_size:
            kept = min(infrequent * (size - top1[c]), no_majority * size)
            ratio = (kept - gs_factor * size) / size
            if ratio > 0.0:
                buckets[min(int(ratio / largest * 64.0), 63)] += size
    saving = 0.0
    room = max_suppressed
    for b in range(63, -1, -1):
        if room <= 0.0:
            break
        taken = min(room, buckets[b])
        saving += taken * largest * (b + 1) / 64.0
        room -= taken
    return least, total - saving


@njit(cache=True, nogil=True)
def class_target_bound(
    classes, pair_combination, pair_values, pair_counts, n_classes, width, factors, max_suppressed, kept_size
):  # pragma: no cover
    """:func:`class_target_table` and :func:`classification_bound` in one call: the table, the two
    largest cells of each class, and the bound's two sums over the classes' sizes (each row summed
    from its first cell on) and largest cells, with the records of all classes. ``factors`` holds
    ``(gs_factor, infrequent, no_majority)``."""
    table, top1, top2 = class_target_table(
        classes, pair_combination, pair_values, pair_counts, n_classes, width
    )
    sizes = np.zeros(n_classes)
    records = 0.0
    for c in range(n_classes):
        size = 0.0
        for v in range(width):
            size += table[c, v]
        sizes[c] = size
        records += size
    least, capped = classification_bound(
        sizes, top1, factors[0], factors[1], factors[2], max_suppressed, kept_size
    )
    return table, top1, top2, least, capped, records
