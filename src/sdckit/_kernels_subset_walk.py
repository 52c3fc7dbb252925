"""The bounded lattice walk without suppression under δ-presence and k-map against a population table
(with k-anonymity), compiled: :func:`sdckit.anonymize._lattice_walk.bounded_search`'s loop by
increasing bound with binary searches along chains, each node judged as
:func:`sdckit._kernels_subset.subset_node` judges it, so that Python sees only the nodes that may be
offered (:func:`sdckit.anonymize._lattice_subset.walk_subset` drives it).

A node is rolled up from the kept evaluated node below it with the fewest classes, else grouped from
the combinations. The kept nodes are the last ones evaluated with few classes (at most nine tenths of
the combinations), in a ring of slots: along a binary search the nodes evaluated next lie near those
just evaluated, and on Adult this serves about 85% of the nodes (the 32 nodes with the fewest
classes that :class:`sdckit.anonymize._lattice_subset.SubsetNodes` keeps lie high in the lattice
and serve half of them; helpers, the nodes at ``min(level, 1)``, cost more to build than they save
here). Every source is an array of first combinations (the codes read at ``stack[j, level,
first[i]]``), class sizes and population records. A node's classes are unions of the combinations
numbered by first combination whatever the source, and its sums are of whole numbers, so the
verdicts are those of the Python path.
"""

from __future__ import annotations

import numpy as np
from numba.typed import List

from sdckit._numba import njit

# isort: split
from sdckit._kernels_lattice import choose_source, tag_closure, upward_chain
from sdckit._kernels_rollup import _rolled_classes
from sdckit._kernels_subset import people_of, verdicts


@njit(cache=True, nogil=True)
def empty_sources(n_slots):  # pragma: no cover - compiled
    """Three typed lists of ``n_slots`` empty arrays (first combinations, sizes, people), built here:
    a list filled from Python converts every array."""
    first = List()
    sizes = List()
    people = List()
    for _ in range(n_slots):
        first.append(np.zeros(0, dtype=np.int64))
        sizes.append(np.zeros(0, dtype=np.float64))
        people.append(np.zeros(0, dtype=np.float64))
    return first, sizes, people


@njit(cache=True, nogil=True)
def _grouped(stack, levels, level_counts, table, first, sizes, people):  # pragma: no cover - compiled
    """The classes at ``levels`` of a source (``first``, ``sizes``, ``people``): their first
    combinations, sizes and people."""
    d = levels.shape[0]
    cards = np.empty(d, dtype=np.int64)
    for j in range(d):
        cards[j] = level_counts[j, levels[j]]
    class_of, node_first, node_sizes = _rolled_classes(stack, first, levels, cards, first, sizes, table)
    return node_first, node_sizes, people_of(class_of, people, node_sizes.shape[0])


@njit(cache=True, nogil=True)
def _visit(node, lattice, evaluation, models, kept):  # pragma: no cover - compiled
    """One node: rolled up from its source (the module's docstring), judged (no class suppressed and
    no class without subset records failing δ-presence), kept as a source when it has few classes,
    marked evaluated, its generalizations tagged holding or its specializations failing. Returns
    whether it holds and the slot it was kept in (-1: not kept)."""
    level_matrix, strides, max_levels, status, evaluated = lattice
    stack, level_counts, rows, combination_sizes, combination_people, table = evaluation[:6]
    source_levels, source_classes, counters, max_suppressed = evaluation[6:]
    k, presence_low, presence_high, presence_monotone, map_k, map_monotone = models
    kept_first, kept_sizes, kept_people = kept
    d = strides.shape[0]
    levels = np.empty(d, dtype=np.int64)
    for j in range(d):
        levels[j] = level_matrix[node, j]
    chosen = choose_source(source_levels, source_classes, levels)[0]
    if chosen >= 0:
        source = (kept_first[chosen], kept_sizes[chosen], kept_people[chosen])
        counters[1] += 1
    else:
        source = (rows, combination_sizes, combination_people)
    first, sizes, people = _grouped(stack, levels, level_counts, table, *source)
    _, suppressed, _, empty_fails, _ = verdicts(
        sizes, people, k, presence_low, presence_high, presence_monotone, map_k, map_monotone
    )
    counters[0] += 1
    ok = suppressed <= max_suppressed + 1e-9 and not empty_fails
    n_classes = sizes.shape[0]
    slot = -1
    if 10 * n_classes <= 9 * rows.shape[0]:  # kept in the next slot of the ring
        slot = counters[2] % source_classes.shape[0]
        counters[2] += 1
        kept_first[slot] = first
        kept_sizes[slot] = sizes
        kept_people[slot] = people
        source_levels[slot, :] = levels
        source_classes[slot] = n_classes
    evaluated[node] = True
    tag_closure(status, level_matrix, strides, max_levels, node, 1 if ok else -1, ok)
    return ok, slot


@njit(cache=True, nogil=True)
def walk_subset(  # pragma: no cover - compiled
    order,
    ordered_bounds,
    bounds,
    rank,
    lattice,
    evaluation,
    models,
    kept_first,
    kept_sizes,
    kept_people,
    index,
    cutoff,
    found,
    found_slots,
    until,
):
    """From position ``index`` of ``order`` (the nodes by increasing bound), the next node neither
    tagged failing nor evaluated; stop when its bound exceeds ``cutoff``; an untagged one starts a
    binary search along the chain of untagged nodes above it (``upward_chain`` with ``rank``), then
    the node itself is visited if still open (:func:`_visit`). ``lattice``: levels of every node,
    strides, top levels, tags, evaluated flags; ``evaluation``: the code stack, class counts per
    level, the combinations (their indexes, sizes, people), the scratch table, the kept sources'
    levels and class counts (free: the largest int64), ``counters`` (evaluations, roll-ups from a
    kept node, nodes kept) and the suppression limit in records; ``models``: k, δ-presence's bounds
    and monotone flags, k-map's k and monotone flags; the kept sources as typed lists (apart: numba
    types a tuple of typed lists slowly at every call).

    Returns after the step in which a node that holds with a bound at most ``cutoff`` was visited
    (recorded in ``found``, with the ring slot it was kept in, or -1, in ``found_slots``: the caller
    offers them, lowers the cutoff and calls again from the position returned), after the step in
    which the evaluations reached ``until``, or at the end: (position, nodes found, finished)."""
    status, evaluated = lattice[3], lattice[4]
    counters = evaluation[8]
    kept = (kept_first, kept_sizes, kept_people)
    n_found = 0
    size = order.shape[0]
    while True:
        while index < size and (status[order[index]] < 0 or evaluated[order[index]]):
            index += 1
        if index >= size:
            return index, n_found, True
        node = order[index]
        index += 1
        if ordered_bounds[index - 1] > cutoff:
            return index, n_found, True  # sorted by bound: no later node can win
        start = n_found
        if status[node] == 0:
            chain = upward_chain(status, lattice[0], lattice[1], lattice[2], node, rank)
            low, high = 0, chain.shape[0] - 1
            while low <= high:
                middle = (low + high) // 2
                step = status[chain[middle]]
                if step == 0:  # else tagged by an earlier step of this search: towards the unknown part
                    ok, slot = _visit(chain[middle], lattice, evaluation, models, kept)
                    if ok and bounds[chain[middle]] <= cutoff:
                        found[n_found] = chain[middle]
                        found_slots[n_found] = slot
                        n_found += 1
                    step = 1 if ok else -1
                if step > 0:  # holds: look below
                    high = middle - 1
                else:
                    low = middle + 1
        if status[node] >= 0 and not evaluated[node]:
            ok, slot = _visit(node, lattice, evaluation, models, kept)
            if ok and bounds[node] <= cutoff:
                found[n_found] = node
                found_slots[n_found] = slot
                n_found += 1
        if n_found > start or counters[0] >= until:
            return index, n_found, False
