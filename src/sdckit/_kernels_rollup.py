"""Compiled roll-up of a lattice node's statistics from a more specific node
(:meth:`sdckit.anonymize._lattice_search.Search._roll_up_from`): the classes of the source's classes,
the first combination and size of each class, and the (class, value, count) triples of a sensitive
attribute, each in one call instead of a numpy step per array (a top-down search with a suppression
limit rolls up nearly every node it evaluates from a helper node, :mod:`._lattice_helpers`)."""

from __future__ import annotations

import numpy as np

from sdckit._numba import njit

# isort: split
from sdckit._kernels_counting import aggregate_pairs, densify_hashed
from sdckit._kernels_lattice import _mixed_product, combine_levels_at
from sdckit.models._kernels import equal_emd, segments


@njit(cache=True, nogil=True)
def number_keys(combined, count, table, class_of):  # pragma: no cover - compiled
    """Number the keys ``combined[:count]`` by first appearance into ``class_of[:count]`` through the
    scratch ``table`` (indexed by key, all -1, restored before returning); returns how many."""
    n_classes = 0
    for i in range(count):
        key = table[combined[i]]
        if key < 0:
            key = n_classes
            table[combined[i]] = key
            n_classes += 1
        class_of[i] = key
    for i in range(count):
        table[combined[i]] = -1
    return n_classes


@njit(cache=True, nogil=True)
def _firsts_and_sizes(class_of, rows, source_sizes, n_classes):  # pragma: no cover - compiled
    """The first row of each class (classes are numbered by first appearance) and the class sizes,
    summed in source order (as ``np.bincount``)."""
    first = np.empty(n_classes, dtype=np.int64)
    sizes = np.zeros(n_classes, dtype=np.float64)
    found = 0
    for i in range(class_of.shape[0]):
        c = class_of[i]
        if c == found:  # first appearance: classes are numbered in that order
            first[c] = rows[i]
            found += 1
        sizes[c] += source_sizes[i]
    return first, sizes


@njit(cache=True, nogil=True)
def roll_up_classes(stack, levels, cards, rows, source_sizes, direct_upper):  # pragma: no cover - compiled
    """For the source's classes (first combinations ``rows``, sizes ``source_sizes``): the class of
    each at ``levels`` (numbered by first appearance), the first combination of each class (that of
    its first source class) and the class sizes, summed in source order (as ``np.bincount``)."""
    class_of, _ = combine_levels_at(stack, levels, cards, rows, direct_upper)
    count = class_of.shape[0]
    n_classes = 0
    for i in range(count):
        if class_of[i] + 1 > n_classes:
            n_classes = class_of[i] + 1
    first, sizes = _firsts_and_sizes(class_of, rows, source_sizes, n_classes)
    return class_of, first, sizes


@njit(cache=True, nogil=True)
def roll_up_pairs(class_of, pair_classes, pair_values, pair_counts, n_classes, n_values):  # pragma: no cover
    """The source's (class, value, count) triples summed per (class at the node, value), sorted by class
    then value (:func:`sdckit.frequency.class_value_counts` of ``class_of[pair_classes]``)."""
    mapped = np.empty(pair_classes.shape[0], dtype=np.int64)
    for i in range(pair_classes.shape[0]):
        mapped[i] = class_of[pair_classes[i]]
    return aggregate_pairs(mapped, pair_values, pair_counts, n_classes, n_values)


@njit(cache=True, nogil=True)
def _segment_max(values, starts, n_classes):  # pragma: no cover - compiled
    """Per class, the largest of ``values`` over its triples, 0 without triples (as
    :func:`sdckit.models.likeness.class_maxima`)."""
    result = np.zeros(n_classes)
    for c in range(n_classes):
        if starts[c] < starts[c + 1]:
            largest = values[starts[c]]
            for i in range(starts[c] + 1, starts[c + 1]):
                if values[i] > largest:
                    largest = values[i]
            result[c] = largest
    return result


@njit(cache=True, nogil=True)
def _rolled_classes(stack, index, levels, cards, rows, source_sizes, table):  # pragma: no cover - compiled
    """:func:`roll_up_classes` with the codes of source class i at ``stack[j, level, index[i]]`` (the
    search's stack and ``index = rows``, or a helper's own stack of its classes and ``index = 0, 1,
    ...``: read in order), through the scratch ``table`` (all -1, restored; the caller sizes it for the
    mixed-radix key range) or, when the range exceeds it, a hash table; attributes at a level of one
    class (``cards[j] == 1``: ``key * 1 + 0``) are skipped."""
    count = rows.shape[0]
    combined = np.zeros(count, dtype=np.int64)
    upper = np.int64(1)
    for j in range(stack.shape[0]):
        radix = cards[j]
        if radix == 1:
            continue
        upper *= radix
        row = stack[j, levels[j]]
        for i in range(count):
            combined[i] = combined[i] * radix + row[index[i]]
    if upper <= table.shape[0]:
        class_of = np.empty(count, dtype=np.int32)
        n_classes = number_keys(combined, count, table, class_of)
    else:
        class_of, _ = densify_hashed(combined)
        n_classes = 0
        for i in range(count):
            if class_of[i] + 1 > n_classes:
                n_classes = class_of[i] + 1
    first, sizes = _firsts_and_sizes(class_of, rows, source_sizes, n_classes)
    return class_of, first, sizes


@njit(cache=True, nogil=True)
def verdicts(  # pragma: no cover - compiled
    sizes,
    starts,
    values,
    counts,
    totals,
    n_values,
    overall,
    log_overall,
    k,
    kinds,
    limits,
    monotone,
    passes,
    monotone_passes,
):
    """The per-class verdicts of :func:`rolled_node`'s models, written into ``passes`` (every model)
    and ``monotone_passes`` (the monotone ones), for ``n_classes = len(totals)`` classes of ``sizes``
    whose (value, count) triples run from ``starts[c]`` to ``starts[c + 1]`` sorted by value, with
    ``totals`` their sums; returns whether a δ-disclosure value lies too close to δ (see there)."""
    n_classes = totals.shape[0]
    unsure = False
    for c in range(n_classes):
        passes[c] = sizes[c] >= k
        monotone_passes[c] = passes[c]
    for m in range(kinds.shape[0]):
        kind = kinds[m]
        if kind == 4:  # distinct l-diversity: at least ``limits[m]`` values (whole counts: one triple each)
            for c in range(n_classes):
                ok = starts[c + 1] - starts[c] >= limits[m]
                passes[c] = passes[c] and ok
                if monotone[m]:
                    monotone_passes[c] = monotone_passes[c] and ok
            continue
        if kind == 5:  # δ-disclosure: |ln(q/p)| < δ, strictly; a class lacking a value of the table fails
            present = 0
            for v in range(n_values):
                if overall[v] > 0:
                    present += 1
            margin = 1e-12 * abs(limits[m])
            for c in range(n_classes):
                ok = starts[c + 1] - starts[c] >= present
                if ok:
                    for i in range(starts[c], starts[c + 1]):
                        q = counts[i] / totals[c]
                        gap = abs(np.log(q / overall[values[i]]))
                        if abs(gap - limits[m]) <= margin:
                            unsure = True  # numba's log may differ from numpy's in the last bit
                        elif not gap < limits[m]:
                            ok = False
                            break
                passes[c] = passes[c] and ok
                if monotone[m]:
                    monotone_passes[c] = monotone_passes[c] and ok
            continue
        if kind == 1:
            achieved = equal_emd(starts, values, counts, totals, overall)
        else:
            gains = np.empty(values.shape[0])
            for c in range(n_classes):
                for i in range(starts[c], starts[c + 1]):
                    p = overall[values[i]]
                    q = counts[i] / totals[c]
                    gains[i] = (q - p) / p if p > 0 else np.inf
            achieved = _segment_max(gains, starts, n_classes)
            if kind == 3:
                for i in range(values.shape[0]):
                    gains[i] = gains[i] + log_overall[values[i]]
                excess = _segment_max(gains, starts, n_classes)
                for c in range(n_classes):
                    if excess[c] > 1e-12:
                        achieved[c] = np.inf
        for c in range(n_classes):
            ok = achieved[c] <= limits[m]
            passes[c] = passes[c] and ok
            if monotone[m]:
                monotone_passes[c] = monotone_passes[c] and ok
    return unsure


@njit(cache=True, nogil=True)
def rolled_node(  # pragma: no cover - compiled
    stack,
    index,
    levels,
    level_counts,
    rows,
    source_sizes,
    table,
    pair_classes,
    pair_values,
    pair_counts,
    n_values,
    overall,
    log_overall,
    k,
    kinds,
    limits,
    monotone,
):
    """A node rolled up from a source and judged in one call, for k-anonymity with models on one
    sensitive attribute: ``kinds`` 1 equal-distance t-closeness, 2 basic and 3 enhanced β-likeness,
    4 distinct l-diversity, 5 δ-disclosure privacy, ``limits`` their thresholds (tolerance included
    for kinds 1-3; l minus it for kind 4, which passes at or above it; δ itself for kind 5, strict),
    ``monotone`` whether each counts as monotone (``k`` = the largest k minus the tolerance, or
    -inf). The same values as the models' own evaluation (:mod:`sdckit.models._kernels`' EMD; the
    gains in the same floating-point steps as numpy's). Returns the roll-up (as
    :func:`roll_up_classes`, :func:`roll_up_pairs`), the per-class passes, and the records of the
    classes failing any model and failing a monotone one (summed in class order: exact for whole
    counts, which the caller requires). ``table``: a scratch of -1; ``stack`` and ``index`` as
    :func:`_rolled_classes` reads them.
    The first value is False (the others empty) when the node's key range reaches 2**62
    (``level_counts``: the classes of every attribute at every level), or when a δ-disclosure
    value |ln(q/p)| lies within 1e-12 (relative) of δ: numpy's logarithm, which the model takes,
    differs from numba's in the last bit for some values, so the caller then takes the general path."""
    if _mixed_product(levels, level_counts) < 0:
        no_ints = np.empty(0, dtype=np.int64)
        no_floats = np.empty(0, dtype=np.float64)
        no_flags = np.empty(0, dtype=np.bool_)
        no_codes = np.empty(0, dtype=np.int32)
        return False, no_codes, no_ints, no_floats, no_ints, no_codes, no_floats, no_flags, 0.0, 0.0
    cards = np.empty(levels.shape[0], dtype=np.int64)
    for j in range(levels.shape[0]):
        cards[j] = level_counts[j, levels[j]]
    class_of, first, sizes = _rolled_classes(stack, index, levels, cards, rows, source_sizes, table)
    n_classes = sizes.shape[0]
    classes, values, counts = roll_up_pairs(
        class_of, pair_classes, pair_values, pair_counts, n_classes, n_values
    )
    starts, totals = segments(classes, counts, n_classes)
    passes = np.empty(n_classes, dtype=np.bool_)
    monotone_passes = np.empty(n_classes, dtype=np.bool_)
    unsure = verdicts(
        sizes, starts, values, counts, totals, n_values, overall, log_overall, k, kinds, limits, monotone,
        passes, monotone_passes,
    )  # fmt: skip
    if unsure:
        no_ints = np.empty(0, dtype=np.int64)
        no_floats = np.empty(0, dtype=np.float64)
        no_flags = np.empty(0, dtype=np.bool_)
        no_codes = np.empty(0, dtype=np.int32)
        return False, no_codes, no_ints, no_floats, no_ints, no_codes, no_floats, no_flags, 0.0, 0.0
    suppressed = 0.0
    monotone_suppressed = 0.0
    for c in range(n_classes):
        if not passes[c]:
            suppressed += sizes[c]
        if not monotone_passes[c]:
            monotone_suppressed += sizes[c]
    return True, class_of, first, sizes, classes, values, counts, passes, suppressed, monotone_suppressed
