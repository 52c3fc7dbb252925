"""The bounded walk of the lattice search without suppression, compiled, for k-anonymity with models on
one sensitive attribute (``sdckit.anonymize._lattice_walk.bounded_search``).

Without suppression every model is monotone, and the search takes the nodes by increasing bound with
binary searches along chains (as :func:`sdckit._kernels_lattice.bounded_walk_k` does for k alone).
:func:`bounded_walk_models` is that loop in one call for k with equal-distance t-closeness, basic or
enhanced β-likeness and distinct l-diversity: each node is grouped from the evaluated node below it
with the fewest classes (kept in pools: the codes of each class's first combination at every level a
node above may read, its size, its (class, value, count) triples), else from the combinations, and
judged by :func:`sdckit._kernels_rollup.verdicts`, as :func:`sdckit._kernels_rollup.rolled_node` judges
it: the classes are unions of the source's, their sizes and (class, value) counts sums of whole counts
(exact in any order), the triples of a class sorted by value, so the verdicts are the same and so is
the walk (tests/test_lattice_walk_bounded.py)."""

from __future__ import annotations

import numpy as np

from sdckit._numba import njit

# isort: split
from sdckit._kernels_counting import aggregate_pairs
from sdckit._kernels_lattice import tag_closure, upward_chain
from sdckit._kernels_rollup import verdicts
from sdckit._kernels_walk import _group
from sdckit.models._kernels import segments


@njit(cache=True, nogil=True)
def _evaluate(  # pragma: no cover - compiled
    source,
    base,
    n_source,
    source_sizes,
    source_triples,
    levels,
    models,
    scratch,
    pools,
    counters,
    limit,
    keep_failing,
):
    """The node at ``levels`` grouped from a source of ``n_source`` classes (codes ``source[j, level,
    i]``, sizes ``source_sizes[base + i]``, (class, value, count) triples, classes from 0) and judged:
    (satisfied, monotone models satisfied) within ``limit``. When it has fewer classes than its source
    and the pools have room, it is pooled as a source (``counters[2:5]``: nodes, classes and triples
    pooled), unless it fails k and has more than ``keep_failing`` of its source's classes: a node
    failing k is then not judged further (it fails, and so do the monotone models, k among them)."""
    level_counts, n_values, overall, log_overall, k, kinds, limits, monotone = models
    table, combined, class_of, sizes = scratch[0], scratch[1], scratch[2], scratch[3]
    passes, monotone_passes = scratch[10], scratch[11]
    codes, pool_sizes, pool_classes, pool_values, pool_counts, class_start, triple_start, nodes = pools
    pair_classes, pair_values, pair_counts = source_triples
    d, depth = source.shape[0], source.shape[1]
    cards = np.empty(d, dtype=np.int64)
    for j in range(d):
        cards[j] = level_counts[j, levels[j]]
    n_classes = _group(source, base, n_source, levels, cards, source_sizes, table, combined, class_of, sizes)
    at, slot = counters[3], counters[2]
    keep = (
        n_classes < n_source
        and slot < nodes.shape[0]
        and (at + n_classes) * d * depth <= codes.shape[0]
        and counters[4] + pair_classes.shape[0] <= pool_classes.shape[0]
    )
    k_suppressed = 0.0
    for c in range(n_classes):
        if not sizes[c] >= k:
            k_suppressed += sizes[c]
    if k_suppressed > limit and not (keep and n_classes <= keep_failing * n_source):
        return False, False
    mapped = np.empty(pair_classes.shape[0], dtype=np.int64)
    for i in range(pair_classes.shape[0]):
        mapped[i] = class_of[pair_classes[i]]
    node_classes, node_values, node_counts = aggregate_pairs(
        mapped, pair_values, pair_counts, n_classes, n_values
    )
    starts, totals = segments(node_classes, node_counts, n_classes)
    verdicts(
        sizes[:n_classes], starts, node_values, node_counts, totals, n_values, overall, log_overall, k,
        kinds, limits, monotone, passes[:n_classes], monotone_passes[:n_classes],
    )  # fmt: skip
    suppressed = 0.0
    monotone_suppressed = 0.0
    for c in range(n_classes):
        if not passes[c]:
            suppressed += sizes[c]
        if not monotone_passes[c]:
            monotone_suppressed += sizes[c]
    if keep:
        block = codes[at * d * depth : (at + n_classes) * d * depth].reshape((d, depth, n_classes))
        first = np.empty(n_classes, dtype=np.int64)
        found = 0
        for i in range(n_source):
            if class_of[i] == found:  # the first source class of class ``found``
                first[found] = i
                found += 1
        for j in range(d):
            for level in range(levels[j], depth):  # what uses the node reads these levels only
                row = source[j, level]
                out = block[j, level]
                for c in range(n_classes):
                    out[c] = row[first[c]]
        for c in range(n_classes):
            pool_sizes[at + c] = sizes[c]
        first_triple = counters[4]
        for i in range(node_classes.shape[0]):
            pool_classes[first_triple + i] = node_classes[i]
            pool_values[first_triple + i] = node_values[i]
            pool_counts[first_triple + i] = node_counts[i]
        class_start[slot + 1] = at + n_classes
        triple_start[slot + 1] = first_triple + node_classes.shape[0]
        counters[2] = slot + 1
        counters[3] = at + n_classes
        counters[4] = first_triple + node_classes.shape[0]
    return suppressed <= limit, monotone_suppressed <= limit


@njit(cache=True, nogil=True)
def _visit(node, lattice, stack, bottom, models, scratch, pools, counters):  # pragma: no cover - compiled
    """One node of :func:`bounded_walk_models`: evaluated from the pooled node below it with the fewest
    classes (``counters[1]`` counts those), else from the combinations (``bottom``), counted in
    ``counters[0]``, marked evaluated, its generalizations tagged holding or its specializations failing.
    Returns (monotone models satisfied, satisfied)."""
    level_matrix, strides, max_levels, status, evaluated, limit, keep_failing = lattice
    codes, pool_sizes, pool_classes, pool_values, pool_counts, class_start, triple_start, nodes = pools
    combination_counts = bottom[0]
    count = combination_counts.shape[0]
    d, depth = stack.shape[0], stack.shape[1]
    levels = np.empty(d, dtype=np.int64)
    for j in range(d):
        levels[j] = level_matrix[node, j]
    below, fewest = -1, count
    for h in range(counters[2]):
        n_h = class_start[h + 1] - class_start[h]
        if n_h >= fewest:
            continue
        ok = True
        for j in range(d):
            if level_matrix[nodes[h], j] > levels[j]:
                ok = False
                break
        if ok:
            below, fewest = h, n_h
    slot = counters[2]
    if below < 0:
        satisfied, monotone_ok = _evaluate(
            stack, 0, count, combination_counts, bottom[1:], levels, models, scratch, pools, counters,
            limit, keep_failing,
        )  # fmt: skip
    else:
        first_class, first_triple = class_start[below], triple_start[below]
        last_triple = triple_start[below + 1]
        source = codes[first_class * d * depth : (first_class + fewest) * d * depth].reshape(
            (d, depth, fewest)
        )
        triples = (
            pool_classes[first_triple:last_triple],
            pool_values[first_triple:last_triple],
            pool_counts[first_triple:last_triple],
        )
        satisfied, monotone_ok = _evaluate(
            source, first_class, fewest, pool_sizes, triples, levels, models, scratch, pools, counters,
            limit, keep_failing,
        )  # fmt: skip
        counters[1] += 1
    if counters[2] > slot:
        nodes[slot] = node
    counters[0] += 1
    evaluated[node] = True
    tag_closure(status, level_matrix, strides, max_levels, node, 1 if monotone_ok else -1, monotone_ok)
    return monotone_ok, satisfied


@njit(cache=True, nogil=True)
def bounded_walk_models(  # pragma: no cover - compiled
    order,
    ordered_bounds,
    bounds,
    rank,
    lattice,
    stack,
    bottom,
    models,
    scratch,
    pools,
    counters,
    index,
    cutoff,
    visits,
    satisfied,
    until,
):
    """The loop of ``_lattice_walk.bounded_search`` without suppression, for k with models on one
    sensitive attribute (see the module), as :func:`sdckit._kernels_lattice.bounded_walk_k` runs it for k
    alone: from position ``index`` of the ``order`` (by increasing bound) of the lattice (``lattice``:
    levels of every node, strides, top levels, tags, evaluated flags, the suppression limit), the next
    node neither tagged failing nor evaluated is taken, and the search stops when its bound exceeds
    ``cutoff``; an untagged one starts a binary search along the chain of untagged nodes above it
    (:func:`upward_chain` with ``rank``), then the node itself is visited if still open (:func:`_visit`:
    ``stack`` the combinations' codes, ``bottom`` their counts and (combination, value, count) triples,
    ``models`` the class counts per level and the models' figures as
    :func:`sdckit._kernels_walk._judge` takes them, ``scratch`` its work arrays, ``pools`` the evaluated
    nodes kept as sources, ``counters``: evaluations, roll-ups from a pooled node, nodes, classes and
    triples pooled). Every visited node and whether it is satisfied are appended to ``visits`` and
    ``satisfied``.

    Returns after the first step in which a satisfied node with a bound at most ``cutoff`` was visited
    (the caller computes its value and lowers the cutoff, then calls again from the returned position),
    after the step in which the evaluations reached ``until``, or at the end: (position, visits
    recorded, finished)."""
    level_matrix, strides, max_levels, status, evaluated, _, _ = lattice
    n_visits = 0
    size = order.shape[0]
    while True:
        while index < size and (status[order[index]] < 0 or evaluated[order[index]]):
            index += 1
        if index >= size:
            return index, n_visits, True
        node = order[index]
        index += 1
        if ordered_bounds[index - 1] > cutoff:
            return index, n_visits, True  # sorted by bound: no later node can win
        offered = False
        if status[node] == 0:
            chain = upward_chain(status, level_matrix, strides, max_levels, node, rank)
            low, high = 0, chain.shape[0] - 1
            while low <= high:
                middle = (low + high) // 2
                if status[chain[middle]] != 0:
                    # Tagged by an earlier step of this search: move towards the unknown part.
                    if status[chain[middle]] > 0:
                        high = middle - 1
                    else:
                        low = middle + 1
                    continue
                ok, holds = _visit(chain[middle], lattice, stack, bottom, models, scratch, pools, counters)
                visits[n_visits], satisfied[n_visits] = chain[middle], holds
                n_visits += 1
                offered |= holds and bounds[chain[middle]] <= cutoff
                if ok:
                    high = middle - 1
                else:
                    low = middle + 1
        if status[node] >= 0 and not evaluated[node]:
            _, holds = _visit(node, lattice, stack, bottom, models, scratch, pools, counters)
            visits[n_visits], satisfied[n_visits] = node, holds
            n_visits += 1
            offered |= holds and bounds[node] <= cutoff
        if offered or counters[0] >= until:
            return index, n_visits, False
