"""The top-down walk of the lattice search with a suppression limit, compiled, for k-anonymity with
models on one sensitive attribute (:mod:`sdckit.anonymize._lattice_walk_compiled`).

With a suppression limit, t-closeness, β-likeness and δ-disclosure are not monotone and
:func:`sdckit.anonymize._lattice_walk.bounded_search` evaluates most of the lattice top-down (Adult,
k=5 + 0.2-closeness on occupation at 5%: 2,918 of 4,320 nodes). :func:`top_down_walk` is its loop in
one call: the next node in the order that is neither tagged failing nor evaluated nor bounded out, its
evaluation (the classes rolled up from its helper, the node at ``min(level, 1)`` per attribute, grouped
from the combinations here on its first request and kept; the models' verdicts per class by
:func:`sdckit._kernels_rollup.verdicts`), the tags of the monotone models, until a node the caller must
see: one that may be offered (satisfied within the limit, bound at most the cutoff), one whose
δ-disclosure value lies too close to δ (the general path takes it), or every 64 evaluations.

The verdicts are those of :func:`sdckit._kernels_rollup.rolled_node` on the same node: the classes
are unions of the helper's classes, the (class, value) counts are sums of whole counts (exact in any
order), gathered per class in value order as :func:`sdckit._kernels_counting.aggregate_pairs` gives
them, so every per-class figure is the same, bit for bit, and so are the verdicts and the records
suppressed (tests/test_lattice_walk_compiled.py)."""

from __future__ import annotations

import numpy as np

from sdckit._numba import njit

# isort: split
from sdckit._kernels_counting import aggregate_pairs, densify_hashed
from sdckit._kernels_lattice import tag_closure
from sdckit._kernels_rollup import number_keys, verdicts
from sdckit.models._kernels import segments

#: What :func:`top_down_walk` returns besides the position.
DONE, OFFER, PROGRESS, UNSURE = 0, 1, 2, 3


@njit(cache=True, nogil=True)
def _group(
    codes, base, count, levels, cards, source_sizes, table, combined, class_of, sizes
):  # pragma: no cover
    """The classes at ``levels`` of ``count`` source rows (row i: codes ``codes[j, level, i]``, size
    ``source_sizes[base + i]``), numbered by first appearance, into
    ``class_of[:count]``, and their sizes summed in row order into ``sizes``; returns how many. Through
    the scratch ``table`` (all -1, restored) when the mixed-radix key range fits in it, else a hash
    table; attributes with one class at their level are skipped (``key * 1 + 0``)."""
    for i in range(count):
        combined[i] = 0
    upper = np.int64(1)
    for j in range(codes.shape[0]):
        radix = cards[j]
        if radix == 1:
            continue
        upper *= radix
        row = codes[j, levels[j]]
        for i in range(count):
            combined[i] = combined[i] * radix + row[i]
    n_classes = 0
    if upper <= table.shape[0]:
        n_classes = number_keys(combined, count, table, class_of)
    else:
        keys, _ = densify_hashed(combined[:count])
        for i in range(count):
            class_of[i] = keys[i]
            if keys[i] + 1 > n_classes:
                n_classes = keys[i] + 1
    for c in range(n_classes):
        sizes[c] = 0.0
    for i in range(count):
        sizes[class_of[i]] += source_sizes[base + i]
    return n_classes


@njit(cache=True, nogil=True)
def _judge(codes, base, count, levels, source_sizes, triples, models, scratch, limit):  # pragma: no cover
    """The node at ``levels`` from a source of ``count`` classes (codes ``codes[j, level, i]``, sizes
    ``source_sizes[base + i]``; ``triples``: its (class, value, count) triples, classes numbered from
    0), judged: whether a δ-disclosure value was too close to δ, the records of the classes
    failing any model, and of those failing a monotone one.

    Both sums are exact (whole counts), so once they pass ``limit`` (the suppression limit) the node's
    verdicts are known: when k alone suppresses more, nothing else is computed; when only k is
    monotone, the classes are judged a block at a time and the rest is skipped once the records
    suppressed pass it (the first sum is then a part of the whole, beyond ``limit`` as the whole is;
    the blocks judged had no δ value too close to δ, numpy's verdict on them is the same)."""
    level_counts, n_values, overall, log_overall, k, kinds, limits, monotone = models
    table, combined, class_of, sizes, cells, seen, starts, totals, values, counts, passes, m_passes = scratch
    pair_classes, pair_values, pair_counts = triples
    cards = np.empty(levels.shape[0], dtype=np.int64)
    for j in range(levels.shape[0]):
        cards[j] = level_counts[j, levels[j]]
    n_classes = _group(codes, base, count, levels, cards, source_sizes, table, combined, class_of, sizes)
    k_suppressed = 0.0
    for c in range(n_classes):
        if not sizes[c] >= k:
            k_suppressed += sizes[c]
    if k_suppressed > limit:
        return False, k_suppressed, k_suppressed
    n_triples = pair_classes.shape[0]
    suppressed = 0.0
    monotone_suppressed = 0.0
    unsure = False
    if n_classes * n_values <= min(cells.shape[0], 4 * n_triples + 1024):
        stop_early = True
        for m in range(monotone.shape[0]):
            if monotone[m]:
                stop_early = False
        # Each (class, value) cell summed in triple order, then read per class in value order: the
        # triples aggregate_pairs gives, with segments' totals; judged a block of classes at a time.
        for i in range(n_triples):
            cell = class_of[pair_classes[i]] * n_values + pair_values[i]
            cells[cell] += pair_counts[i]
            seen[cell] = True
        block = 64
        for low in range(0, n_classes, block):
            high = min(low + block, n_classes)
            m = 0
            for c in range(low, high):
                starts[c - low] = m
                total = 0.0
                cell = c * n_values
                for v in range(n_values):
                    if seen[cell + v]:
                        values[m] = v
                        counts[m] = cells[cell + v]
                        total += counts[m]
                        m += 1
                        cells[cell + v] = 0.0
                        seen[cell + v] = False
                totals[c - low] = total
            starts[high - low] = m
            unsure |= verdicts(
                sizes[low:high], starts[: high - low + 1], values[:m], counts[:m], totals[: high - low],
                n_values, overall, log_overall, k, kinds, limits, monotone, passes[low:high],
                m_passes[low:high],
            )  # fmt: skip
            for c in range(low, high):
                if not passes[c]:
                    suppressed += sizes[c]
                if not m_passes[c]:
                    monotone_suppressed += sizes[c]
            if stop_early and suppressed > limit and not unsure and high < n_classes:
                for i in range(n_triples):  # the cells of the classes not judged, back to zero
                    cell = class_of[pair_classes[i]] * n_values + pair_values[i]
                    cells[cell] = 0.0
                    seen[cell] = False
                return False, suppressed, k_suppressed
        return unsure, suppressed, monotone_suppressed
    mapped = np.empty(n_triples, dtype=np.int64)
    for i in range(n_triples):
        mapped[i] = class_of[pair_classes[i]]
    node_classes, node_values, node_counts = aggregate_pairs(
        mapped, pair_values, pair_counts, n_classes, n_values
    )
    node_starts, node_totals = segments(node_classes, node_counts, n_classes)
    unsure = verdicts(
        sizes, node_starts, node_values, node_counts, node_totals, n_values, overall, log_overall,
        k, kinds, limits, monotone, passes, m_passes,
    )  # fmt: skip
    for c in range(n_classes):
        if not passes[c]:
            suppressed += sizes[c]
        if not m_passes[c]:
            monotone_suppressed += sizes[c]
    return unsure, suppressed, monotone_suppressed


@njit(cache=True, nogil=True)
def _build_helper(  # pragma: no cover - compiled
    source, base, n_source, source_sizes, source_triples, levels, models, scratch, pools, counters
):
    """Group a source's ``n_source`` classes (the combinations, or a helper below: codes
    ``source[j, level, i]``, sizes ``source_sizes[base + i]``, (class, value, count) triples) at the
    helper's ``levels`` and append its classes to the ``pools``: the codes of each class's first source
    class at every level a node or helper above may read, its size, and its triples (classes numbered
    from 0, by first appearance, as a grouping of the combinations numbers them; the sums are of whole
    counts, the same in any order); ``counters[2:5]``: the helpers, classes and triples pooled."""
    level_counts, n_values = models[0], models[1]
    pair_classes, pair_values, pair_counts = source_triples
    table, combined, class_of, sizes = scratch[0], scratch[1], scratch[2], scratch[3]
    codes, pool_sizes, pool_classes, pool_values, pool_counts, class_start, triple_start, nodes = pools
    cards = np.empty(levels.shape[0], dtype=np.int64)
    for j in range(levels.shape[0]):
        cards[j] = level_counts[j, levels[j]]
    n_classes = _group(source, base, n_source, levels, cards, source_sizes, table, combined, class_of, sizes)
    at, slot = counters[3], counters[2]
    # The helper's codes: one (attribute, level, class) block of the pool.
    d, depth = source.shape[0], source.shape[1]
    block = codes[at * d * depth : (at + n_classes) * d * depth].reshape((d, depth, n_classes))
    first = np.empty(n_classes, dtype=np.int64)
    found = 0
    for i in range(n_source):
        if class_of[i] == found:  # the first source class of class ``found``
            first[found] = i
            found += 1
    for j in range(d):
        # Where the helper is at level 1, what uses it is at level 1 or above; where it is at 0, a
        # node using it is at 0 and a helper built from it at 0 or 1 and above.
        for level in range(levels[j], depth):
            row = source[j, level]
            out = block[j, level]
            for c in range(n_classes):
                out[c] = row[first[c]]
    for c in range(n_classes):
        pool_sizes[at + c] = sizes[c]
    mapped = np.empty(pair_classes.shape[0], dtype=np.int64)
    for i in range(pair_classes.shape[0]):
        mapped[i] = class_of[pair_classes[i]]
    helper_classes, helper_values, helper_counts = aggregate_pairs(
        mapped, pair_values, pair_counts, n_classes, n_values
    )
    first_triple = counters[4]
    for i in range(helper_classes.shape[0]):
        pool_classes[first_triple + i] = helper_classes[i]
        pool_values[first_triple + i] = helper_values[i]
        pool_counts[first_triple + i] = helper_counts[i]
    class_start[slot + 1] = at + n_classes
    triple_start[slot + 1] = first_triple + helper_classes.shape[0]
    counters[2] = slot + 1
    counters[3] = at + n_classes
    counters[4] = first_triple + helper_classes.shape[0]


@njit(cache=True, nogil=True)
def top_down_walk(
    order,
    ordered_bounds,
    bounds,
    lattice,
    stack,
    bottom,
    models,
    scratch,
    pools,
    helpers,
    counters,
    index,
    cutoff,
    until,
):  # pragma: no cover - compiled
    """The top-down loop of ``_lattice_walk.bounded_search`` (see the module): from position ``index``
    of ``order`` (by decreasing height, then bound), each node neither tagged failing (``lattice``:
    levels of every node, strides, top levels, tags, evaluated flags) nor evaluated, whose bound is at
    most ``cutoff``, is evaluated from its helper (``helpers``: per lattice node, the slot of the helper
    at those levels, -1 none yet, -2 none to build; the bytes of a pooled class and triple and the
    pools' budget, within which the ``pools`` have room) or, for a node that is its own helper or when
    the budget is spent, from the combinations (``bottom``: their counts and triples), tagged through
    the monotone models, and counted in ``counters[0]`` (``counters[1]``: unused; 2, 3, 4: the helpers,
    classes and triples pooled). Returns (position, code, node): :data:`OFFER` after a node
    satisfied within the limit with a bound at most ``cutoff`` (the caller checks its suppressed group,
    computes its value, lowers the cutoff); :data:`UNSURE` before a node whose verdict needs numpy's
    logarithm (the caller evaluates it, then resumes at the position); :data:`PROGRESS` after the step
    in which ``counters[0]`` reached ``until``; :data:`DONE` at the end."""
    level_matrix, strides, max_levels, status, evaluated, max_suppressed, all_monotone = lattice
    slots, budget = helpers
    combination_counts, pair_classes, pair_values, pair_counts = bottom
    codes, pool_sizes, pool_classes, pool_values, pool_counts, class_start, triple_start, helper_nodes = pools
    count = combination_counts.shape[0]
    width = stack.shape[0] * stack.shape[1]
    d = strides.shape[0]
    levels = np.empty(d, dtype=np.int64)
    size = order.shape[0]
    limit = max_suppressed + 1e-9
    while index < size:
        node = order[index]
        if status[node] < 0 or evaluated[node] or ordered_bounds[index] > cutoff:
            index += 1
            continue
        helper = 0
        own = True
        for j in range(d):
            levels[j] = level_matrix[node, j]
            if levels[j] > 1:
                own = False
                helper += strides[j]
            else:
                helper += levels[j] * strides[j]
        slot = -2 if own else slots[helper]
        if slot == -1:
            # Built here when the budget allows (else the node is grouped from the combinations; the
            # pools hold as much as the budget allows).
            classes_after, triples_after = counters[3] + count, counters[4] + pair_classes.shape[0]
            if classes_after * budget[0] + triples_after * budget[1] > budget[2]:
                slots[helper] = -2
                slot = -2
            else:
                for j in range(d):
                    levels[j] = min(level_matrix[node, j], 1)
                # From the pooled helper below it with the fewest classes, else from the combinations.
                below, fewest = -1, count
                for h in range(counters[2]):
                    n_h = class_start[h + 1] - class_start[h]
                    if n_h >= fewest:
                        continue
                    ok = True
                    for j in range(d):
                        if level_matrix[helper_nodes[h], j] > levels[j]:
                            ok = False
                            break
                    if ok:
                        below, fewest = h, n_h
                helper_nodes[counters[2]] = helper
                if below < 0:
                    triples = bottom[1:]
                    _build_helper(
                        stack, 0, count, combination_counts, triples, levels, models, scratch, pools, counters
                    )  # fmt: skip
                else:
                    first_class, first_triple = class_start[below], triple_start[below]
                    last_triple = triple_start[below + 1]
                    source = codes[first_class * width : (first_class + fewest) * width].reshape(
                        (stack.shape[0], stack.shape[1], fewest)
                    )
                    triples_of = (
                        pool_classes[first_triple:last_triple],
                        pool_values[first_triple:last_triple],
                        pool_counts[first_triple:last_triple],
                    )
                    _build_helper(
                        source, first_class, fewest, pool_sizes, triples_of, levels, models, scratch, pools,
                        counters,
                    )  # fmt: skip
                slot = counters[2] - 1
                slots[helper] = slot
                for j in range(d):
                    levels[j] = level_matrix[node, j]
        if slot >= 0:
            first_class, first_triple = class_start[slot], triple_start[slot]
            last_triple = triple_start[slot + 1]
            helper_triples = (
                pool_classes[first_triple:last_triple],
                pool_values[first_triple:last_triple],
                pool_counts[first_triple:last_triple],
            )
            n_source = class_start[slot + 1] - first_class
            block = codes[first_class * width : (first_class + n_source) * width].reshape(
                (stack.shape[0], stack.shape[1], n_source)
            )
            unsure, suppressed, monotone_suppressed = _judge(
                block, first_class, n_source, levels, pool_sizes, helper_triples, models, scratch, limit
            )
        else:
            unsure, suppressed, monotone_suppressed = _judge(
                stack, 0, count, levels, combination_counts, bottom[1:], models, scratch, limit
            )
        if unsure:
            return index, UNSURE, node
        index += 1
        counters[0] += 1
        satisfied = suppressed <= limit
        monotone_ok = satisfied if all_monotone else monotone_suppressed <= limit
        evaluated[node] = True
        value = 1 if monotone_ok else -1
        tag_closure(status, level_matrix, strides, max_levels, node, value, monotone_ok)
        if satisfied and bounds[node] <= cutoff:
            return index, OFFER, node
        if counters[0] >= until:
            return index, PROGRESS, node
    return index, DONE, -1
