"""Compiled (numba) loops of the lattice search of full-domain generalization
(:mod:`sdckit.anonymize._lattice_search`): the classes of a lattice node from the attributes' generalization
levels (combined, rolled up from a finer node, or counted afresh), the k-anonymity check of a node,
the tagging of its predecessors or successors, and the bounded walk that runs the search in one
compiled loop when k-anonymity alone is asked for."""

from __future__ import annotations

import numpy as np

# sdckit._numba first: a thread that meets numba here waits, under that module's import lock, for a
# background warm-up importing numba to finish (two threads entering numba's import cycles at once
# get half-initialized modules).
from sdckit._numba import njit

# isort: split
from numba.typed import List

from sdckit._kernels_counting import _probe, densify_direct, densify_hashed


@njit(cache=True, nogil=True)
def combine_levels(stack, levels, cards, direct_upper):  # pragma: no cover - compiled
    """Dense keys and sizes of the combinations of codes ``stack[j, levels[j], i]`` over attributes j
    (mixed radix ``cards``; the caller guarantees that the product fits in int64): one pass to combine,
    then :func:`densify_direct` when ``direct_upper`` > 0 (the product), else :func:`densify_hashed`."""
    m = stack.shape[0]
    count = stack.shape[2]
    combined = np.zeros(count, dtype=np.int64)
    for j in range(m):  # one contiguous row at a time: the inner loop vectorizes
        row = stack[j, levels[j]]
        radix = cards[j]
        for i in range(count):
            combined[i] = combined[i] * radix + row[i]
    if direct_upper > 0:
        return densify_direct(combined, direct_upper)
    return densify_hashed(combined)


@njit(cache=True, nogil=True)
def combine_levels_at(stack, levels, cards, rows, direct_upper):  # pragma: no cover - compiled
    """As :func:`combine_levels`, over the combinations ``rows`` only (one class representative each,
    for a roll-up)."""
    m = stack.shape[0]
    count = rows.shape[0]
    combined = np.zeros(count, dtype=np.int64)
    for j in range(m):
        row = stack[j, levels[j]]
        radix = cards[j]
        for i in range(count):
            combined[i] = combined[i] * radix + row[rows[i]]
    if direct_upper > 0:
        return densify_direct(combined, direct_upper)
    return densify_hashed(combined)


@njit(cache=True, nogil=True)
def level_codes(out, codes, leaves):  # pragma: no cover - compiled
    """``out[level, i] = codes[leaves[i], level]``: the node of each combination's leaf at every level
    of a hierarchy (``codes``: leaves x levels), written straight into a row block of the search's
    (attribute, level, combination) array."""
    for level in range(codes.shape[1]):
        row = out[level]
        for i in range(leaves.shape[0]):
            row[i] = codes[leaves[i], level]


@njit(cache=True, nogil=True)
def successor_bounds(bounds, levels, strides, max_levels):  # pragma: no cover - compiled
    """``out[node, j]`` = the bound of the node one level higher on attribute j, or +inf at its top."""
    out = np.full(levels.shape, np.inf)
    for node in range(levels.shape[0]):
        for j in range(levels.shape[1]):
            if levels[node, j] < max_levels[j]:
                out[node, j] = bounds[node + strides[j]]
    return out


@njit(cache=True, nogil=True)
def choose_source(source_levels, source_classes, levels):  # pragma: no cover - compiled
    """For a roll-up: the kept node (row of ``source_levels``) at most as general as ``levels`` on every
    attribute with the fewest classes (ties: the first; free rows hold the largest int64, never
    chosen), or -1; and the row a new source would replace (the first with the most classes)."""
    chosen = -1
    fewest = np.iinfo(np.int64).max
    replaced = 0
    for s in range(source_levels.shape[0]):
        if source_classes[s] > source_classes[replaced]:
            replaced = s
        if source_classes[s] >= fewest:
            continue
        below = True
        for j in range(levels.shape[0]):
            if source_levels[s, j] > levels[j]:
                below = False
                break
        if below:
            chosen = s
            fewest = source_classes[s]
    return chosen, replaced


@njit(cache=True, nogil=True)
def _mixed_product(levels, level_counts):  # pragma: no cover - compiled
    """The product of the class counts of ``levels`` (the mixed-radix key range), or -1 when it
    reaches 2**62 (the keys would not fit in int64)."""
    upper = np.int64(1)
    for j in range(levels.shape[0]):
        card = level_counts[j, levels[j]]
        if upper >= (np.int64(1) << 62) // max(card, 1):
            return -1
        upper *= card
    return upper


@njit(cache=True, nogil=True)
def _classes_weighted(combined, weights, upper, table, k):  # pragma: no cover - compiled
    """Dense keys (int32, first-appearance order) of the non-negative ``combined`` values below
    ``upper``, with per key: the sum of ``weights`` (in element order, as ``np.bincount``), the first
    element, and whether the sum reaches ``k``; and the number of keys below ``k`` and their summed
    weight. Through the scratch ``table`` (all -1, left so) when ``upper`` fits in it, else an
    open-addressing table of its own."""
    n = combined.shape[0]
    keys = np.empty(n, dtype=np.int32)
    # At most min(n, upper) keys: most nodes have few classes, and zeroing room for n would cost
    # more than grouping them.
    room = min(n, max(upper, 0)) + 1
    sizes = np.zeros(room, dtype=np.float64)
    first = np.empty(room, dtype=np.int64)
    groups = 0
    if upper <= table.shape[0]:
        for i in range(n):
            value = combined[i]
            key = table[value]
            if key < 0:
                key = groups
                table[value] = key
                first[groups] = i
                groups += 1
            keys[i] = key
            sizes[key] += weights[i]
        for g in range(groups):
            table[combined[first[g]]] = -1
    else:
        bits = 4
        while (1 << bits) < 2 * n + 2:
            bits += 1
        slots = 1 << bits
        mask = slots - 1
        shift = np.uint64(64 - bits)
        stored = np.full(slots, -1, dtype=np.int64)
        assigned = np.empty(slots, dtype=np.int32)
        for i in range(n):
            value = combined[i]
            slot = _probe(stored, value, shift, mask)
            if stored[slot] == value:
                key = assigned[slot]
            else:
                stored[slot] = value
                key = groups
                assigned[slot] = key
                first[groups] = i
                groups += 1
            keys[i] = key
            sizes[key] += weights[i]
    passes = np.empty(groups, dtype=np.bool_)
    failing = 0
    suppressed = 0.0
    for g in range(groups):
        passes[g] = sizes[g] >= k
        if not passes[g]:
            failing += 1
            suppressed += sizes[g]
    return keys, sizes[:groups].copy(), first[:groups].copy(), passes, failing, suppressed


@njit(cache=True, nogil=True)
def _combine_into(combined, stack, levels, level_counts, rows, gather):  # pragma: no cover - compiled
    """``combined[i]`` = the mixed-radix value of the codes ``stack[j, levels[j], i]`` (of
    ``rows[i]`` with ``gather``) over the attributes j with more than one class at their
    level (one class adds no digit)."""
    count = combined.shape[0]
    for j in range(stack.shape[0]):
        radix = level_counts[j, levels[j]]
        if radix == 1:
            continue
        row = stack[j, levels[j]]
        if not gather:  # a contiguous row at a time: vectorizes
            for i in range(count):
                combined[i] = combined[i] * radix + row[i]
        else:
            for i in range(count):
                combined[i] = combined[i] * radix + row[rows[i]]


@njit(cache=True, nogil=True)
def _classes_of_levels(
    stack, levels, level_counts, rows, gather, weights, k, table
):  # pragma: no cover - compiled
    """The body of :func:`classes_k` (all combinations) and :func:`roll_up_k` (``rows``, with
    ``gather``): combine in int32 when the key range allows (AVX2 has no 64-bit multiply, so the
    int64 loop does not vectorize), else int64, then group."""
    upper = _mixed_product(levels, level_counts)
    count = rows.shape[0] if gather else stack.shape[2]
    if upper < 0:  # the keys would not fit in int64: nothing computed
        return False, *_classes_weighted(np.zeros(0, dtype=np.int64), weights, 1, table, k)
    if upper < np.int64(1) << 31:  # 32-bit keys: the multiply-adds vectorize twice as wide
        combined32 = np.zeros(count, dtype=np.int32)
        _combine_into(combined32, stack, levels, level_counts, rows, gather)
        return True, *_classes_weighted(combined32, weights, upper, table, k)
    combined = np.zeros(count, dtype=np.int64)
    _combine_into(combined, stack, levels, level_counts, rows, gather)
    return True, *_classes_weighted(combined, weights, upper, table, k)


@njit(cache=True, nogil=True)
def classes_k(stack, levels, level_counts, weights, k, table):  # pragma: no cover - compiled
    """A lattice node under k-anonymity alone, in one call: the classes of the combinations of codes
    ``stack[j, levels[j], i]`` over attributes j (mixed radix: ``level_counts[j, level]`` is the
    number of classes of attribute j at that level), with :func:`_classes_weighted`'s figures for
    the combination ``weights``. ``fits`` is False (and nothing is computed) when the key range
    would not fit in int64."""
    no_rows = np.zeros(0, dtype=np.int64)
    return _classes_of_levels(stack, levels, level_counts, no_rows, False, weights, k, table)


@njit(cache=True, nogil=True)
def _sizes_direct(combined, weights, upper, table, sums, k):  # pragma: no cover - compiled
    """:func:`_classes_weighted`'s figures without the key of each element, for values below
    ``upper`` <= ``table.shape[0]``: the weights are summed straight at their value (one indexed
    load per element instead of two dependent ones), and the scratch ``table`` (all -1, left so)
    holds each value's first element, so the classes come out numbered alike (first appearance)
    with the same sums in the same order. The sums are kept in the scratch ``sums`` (as long as
    ``table``; set where a value first appears, so nothing is cleared)."""
    n = combined.shape[0]
    order = np.empty(min(n, upper) + 1, dtype=np.int64)
    groups = 0
    for i in range(n):
        value = combined[i]
        if table[value] < 0:
            table[value] = i
            order[groups] = value
            groups += 1
            sums[value] = 0.0
        sums[value] += weights[i]
    sizes = np.empty(groups, dtype=np.float64)
    first = np.empty(groups, dtype=np.int64)
    passes = np.empty(groups, dtype=np.bool_)
    failing = 0
    suppressed = 0.0
    for g in range(groups):
        value = order[g]
        first[g] = table[value]
        table[value] = -1
        sizes[g] = sums[value]
        passes[g] = sizes[g] >= k
        if not passes[g]:
            failing += 1
            suppressed += sizes[g]
    return sizes, first, passes, failing, suppressed


@njit(cache=True, nogil=True)
def sizes_k(stack, levels, level_counts, weights, k, table, sums):  # pragma: no cover - compiled
    """:func:`classes_k` without the class of each combination (most evaluated nodes never need
    them; :func:`classes_k` computes them, numbered alike, when one does): ``fits``, the class
    sizes, the first combination of each class, which classes reach ``k``, how many do not and their
    summed size."""
    upper = _mixed_product(levels, level_counts)
    if 0 <= upper <= table.shape[0]:
        combined = np.zeros(stack.shape[2], dtype=np.int32)  # upper < 2**31: int32 keys
        _combine_into(combined, stack, levels, level_counts, np.zeros(0, dtype=np.int64), False)
        return True, *_sizes_direct(combined, weights, upper, table, sums, k)
    fits, _, sizes, first, passes, failing, suppressed = classes_k(
        stack, levels, level_counts, weights, k, table
    )
    return fits, sizes, first, passes, failing, suppressed


@njit(cache=True, nogil=True)
def roll_up_k(stack, levels, level_counts, rows, weights, k, table):  # pragma: no cover - compiled
    """As :func:`classes_k` over the combinations ``rows`` only (the first combination of each class
    of a more specific node, ``weights`` its class sizes: ARX's roll-up). The first element of each
    new class is returned as a combination (``rows[...]``)."""
    fits, keys, sizes, first, passes, failing, suppressed = _classes_of_levels(
        stack, levels, level_counts, rows, True, weights, k, table
    )
    for g in range(first.shape[0]):
        first[g] = rows[first[g]]
    return fits, keys, sizes, first, passes, failing, suppressed


@njit(cache=True, nogil=True)
def tag_closure(status, levels, strides, max_levels, start, value, upward):  # pragma: no cover - compiled
    """Set ``status`` to ``value`` on lattice node ``start`` and every node above it (``upward``) or
    below it, by depth-first search over the immediate successors (``node + strides[j]`` while
    ``levels[node, j] < max_levels[j]``) or predecessors. A node already holding ``value`` is not
    entered: the nodes tagged with one value always form an up-set (or a down-set), so its
    neighbours hold it too. Returns how many nodes were newly tagged."""
    if status[start] == value:
        return 0
    stack = np.empty(status.shape[0], dtype=np.int64)
    status[start] = value
    stack[0] = start
    top = 1
    tagged = 1
    d = strides.shape[0]
    while top > 0:
        top -= 1
        node = stack[top]
        for j in range(d):
            if upward:
                if levels[node, j] >= max_levels[j]:
                    continue
                neighbour = node + strides[j]
            else:
                if levels[node, j] <= 0:
                    continue
                neighbour = node - strides[j]
            if status[neighbour] != value:
                status[neighbour] = value
                stack[top] = neighbour
                top += 1
                tagged += 1
    return tagged


@njit(cache=True, nogil=True)
def upward_chain(status, levels, strides, max_levels, start, rank):  # pragma: no cover - compiled
    """A chain of untagged lattice nodes upwards from ``start``: each step raises the attribute ``j``
    with the smallest ``rank[node, j]`` (ties: the first attribute) among the successors whose
    ``status`` is 0, up to a node with none. Returns the nodes (int64)."""
    d = strides.shape[0]
    chain = np.empty(levels.shape[0], dtype=np.int64)
    chain[0] = start
    length = 1
    node = start
    while True:
        chosen = -1
        for j in range(d):
            if (
                levels[node, j] < max_levels[j]
                and status[node + strides[j]] == 0
                and (chosen < 0 or rank[node, j] < rank[node, chosen])
            ):
                chosen = j
        if chosen < 0:
            return chain[:length]
        node = node + strides[chosen]
        chain[length] = node
        length += 1


@njit(cache=True, nogil=True)
def source_lists(first, sizes, offsets):  # pragma: no cover - compiled
    """The roll-up sources of :func:`bounded_walk_k` as typed lists (built here: a list filled from
    Python converts every array): slot s holds ``first[offsets[s]:offsets[s + 1]]`` and the same
    slice of ``sizes``."""
    first_list = List()
    sizes_list = List()
    for s in range(offsets.shape[0] - 1):
        first_list.append(first[offsets[s] : offsets[s + 1]].copy())
        sizes_list.append(sizes[offsets[s] : offsets[s + 1]].copy())
    return first_list, sizes_list


@njit(cache=True, nogil=True)
def _visit_k(node, lattice, evaluation, sources, visits, satisfied, n_visits):  # pragma: no cover - compiled
    """One node of :func:`bounded_walk_k`: evaluated as ``Search._evaluate_k`` does (rolled up from
    the kept node below with the fewest classes, else from the combinations; kept as a source when it
    has few classes, replacing the one with the most), marked evaluated, its generalizations tagged
    holding or its specializations failing, and recorded as visit ``n_visits``. Returns whether it
    satisfies k within the limit; ``counters`` counts evaluations and roll-ups."""
    level_matrix, strides, max_levels, status, evaluated = lattice
    stack, level_counts, weights, k, table, sums, max_suppressed, counters = evaluation
    source_levels, source_classes, source_first, source_sizes = sources
    d = strides.shape[0]
    levels = np.empty(d, dtype=np.int64)
    for j in range(d):
        levels[j] = level_matrix[node, j]
    chosen, replaced = choose_source(source_levels, source_classes, levels)
    if chosen >= 0:
        _, _, sizes, first, _, failing, suppressed = roll_up_k(
            stack, levels, level_counts, source_first[chosen], source_sizes[chosen], k, table
        )
        counters[1] += 1
    else:
        _, sizes, first, _, failing, suppressed = sizes_k(
            stack, levels, level_counts, weights, k, table, sums
        )
    counters[0] += 1
    n_suppressed = suppressed if failing else 0.0
    ok = n_suppressed <= max_suppressed + 1e-9
    n_classes = sizes.shape[0]
    if 10 * n_classes <= 9 * weights.shape[0] and n_classes < source_classes[replaced]:
        source_first[replaced] = first
        source_sizes[replaced] = sizes
        source_levels[replaced, :] = levels
        source_classes[replaced] = n_classes
    evaluated[node] = True
    tag_closure(status, level_matrix, strides, max_levels, node, 1 if ok else -1, ok)
    visits[n_visits] = node
    satisfied[n_visits] = ok
    return ok


@njit(cache=True, nogil=True)
def bounded_walk_k(
    order,
    ordered_bounds,
    bounds,
    rank,
    lattice,
    evaluation,
    kept,
    source_first,
    source_sizes,
    index,
    cutoff,
    visits,
    satisfied,
    until,
):  # pragma: no cover - compiled
    """The loop of ``_lattice_walk.bounded_search`` without suppression, under k-anonymity alone with
    whole counts whose keys fit in int64 at every node, compiled: from position ``index`` of the
    ``order`` (by increasing bound) of the lattice (``lattice``: levels of every node, strides,
    top levels, tags, evaluated flags), the next node neither tagged failing nor evaluated is taken,
    and the search stops when its bound exceeds ``cutoff``; an untagged one starts a binary search
    along the chain of untagged nodes above it (:func:`upward_chain` with ``rank``), then the node
    itself is visited if still open (:func:`_visit_k`, with ``evaluation``: the codes, class counts,
    combination counts, k, scratch tables, suppression limit and counters; and the roll-up
    sources: ``kept``, their levels and class counts, and the typed lists ``source_first`` and
    ``source_sizes``, apart because a tuple holding typed lists costs numba about 0.1 ms to type at
    every call). Every visited node and whether it satisfies k are appended to ``visits`` and
    ``satisfied``.

    Returns after the first step in which a satisfying node with a bound at most ``cutoff`` was
    visited (the caller computes its metric value and lowers the cutoff, then calls again from the
    returned position), after the step in which the evaluations (``counters[0]``) reached ``until``
    (so that the caller reports progress and can be interrupted), or at the end: (position, visits
    recorded, finished)."""
    level_matrix, strides, max_levels, status, evaluated = lattice
    counters = evaluation[-1]
    sources = (kept[0], kept[1], source_first, source_sizes)
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
                ok = _visit_k(chain[middle], lattice, evaluation, sources, visits, satisfied, n_visits)
                n_visits += 1
                offered |= ok and bounds[chain[middle]] <= cutoff
                if ok:
                    high = middle - 1
                else:
                    low = middle + 1
        if status[node] >= 0 and not evaluated[node]:
            ok = _visit_k(node, lattice, evaluation, sources, visits, satisfied, n_visits)
            n_visits += 1
            offered |= ok and bounds[node] <= cutoff
        if offered or counters[0] >= until:
            return index, n_visits, False
