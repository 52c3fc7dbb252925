"""Compiled (numba) segment loops of the privacy models.

The sparse ``(class, value, count)`` triples of a sensitive attribute are sorted by class, so the
triples of class ``c`` are the segment ``starts[c] .. starts[c+1]`` (:func:`segments`, computed once
per attribute and shared by every model). Every kernel is one loop over the classes and, inside, over
the class's triples; a class without triples (no records, possible only with zero weights) gets 0.

Where a kernel needs the class's values in an order (recursive diversity: sorted counts; ordered and
hierarchical EMD: every code or node up to the top) it chooses between a *dense* form, which walks
all ``m`` value codes or all hierarchy nodes per class without branching, and a *sparse* form whose
cost depends only on the class's own values; the caller picks the dense form when ``m`` is small
compared with the values per class.
"""

from __future__ import annotations

import numpy as np

from sdckit._numba import njit


@njit(cache=True, nogil=True)
def segments(classes, counts, n_classes):  # pragma: no cover - compiled
    """Start of every class's run of triples (``n_classes + 1`` entries) and every class's total count."""
    starts = np.empty(n_classes + 1, dtype=np.int64)
    totals = np.zeros(n_classes)
    n = classes.shape[0]
    t = 0
    for c in range(n_classes):
        starts[c] = t
        total = 0.0
        while t < n and classes[t] == c:
            total += counts[t]
            t += 1
        totals[c] = total
    starts[n_classes] = t
    return starts, totals


@njit(cache=True, nogil=True)
def entropy(starts, counts, log_counts, totals):  # pragma: no cover - compiled
    """Shannon entropy (natural log) of every class: log N - (1/N) sum r log r."""
    n_classes = totals.shape[0]
    result = np.zeros(n_classes)
    for c in range(n_classes):
        total = totals[c]
        if total <= 0.0:
            continue
        weighted = 0.0
        for i in range(starts[c], starts[c + 1]):
            weighted += counts[i] * log_counts[i]
        value = np.log(total) - weighted / total
        result[c] = value if value > 0.0 else 0.0
    return result


def sorting_network(size: int) -> np.ndarray:
    """Compare-exchange pairs of Batcher's odd-even merge sort for ``size`` (a power of two) elements."""
    pairs = []
    p = 1
    while p < size:
        k = p
        while k >= 1:
            for j in range(k % p, size - k, 2 * k):
                for i in range(min(k, size - j - k)):
                    if (i + j) // (2 * p) == (i + j + k) // (2 * p):
                        pairs.append((i + j, i + j + k))
            k //= 2
        p *= 2
    return np.array(pairs, dtype=np.int64).reshape(-1, 2)


NETWORK_SIZES = (4, 8, 16, 32)
NETWORKS = tuple(sorting_network(size) for size in NETWORK_SIZES)


@njit(cache=True, nogil=True)
def _sort_ascending(buffer, k, network4, network8, network16, network32):  # pragma: no cover
    """Sort ``buffer[:k]`` in ascending order: branch-free sorting networks up to 32 values."""
    if k <= 1:
        return
    if k > 32:
        buffer[:k] = np.sort(buffer[:k])
        return
    if k <= 4:
        size, network = 4, network4
    elif k <= 8:
        size, network = 8, network8
    elif k <= 16:
        size, network = 16, network16
    else:
        size, network = 32, network32
    for i in range(k, size):
        buffer[i] = np.inf
    for q in range(network.shape[0]):
        a = network[q, 0]
        b = network[q, 1]
        x = buffer[a]
        y = buffer[b]
        buffer[a] = x if x < y else y
        buffer[b] = y if x < y else x


@njit(cache=True, nogil=True)
def recursive_level(
    starts, counts, totals, c_parameter, network4, network8, network16, network32
):  # pragma: no cover - compiled
    """Per class, the largest l' such that r_1 < c (r_l' + ... + r_m), 0 if none.

    With the counts sorted r_1 >= ... >= r_m, the tails r_l' + ... + r_m shrink as l' grows, so the
    l' that satisfy the inequality are exactly 1 .. L, and L is the number of tails above r_1 / c. A
    tail is a sum of the smallest counts; every tail that holds a count a with c a > r_1 passes, so
    only the counts with c a <= r_1 need sorting (ascending) and summing: L = m - (number of sums
    a_(1) + ... + a_(i) of these smallest counts with r_1 >= c (a_(1) + ... + a_(i))).
    """
    n_classes = totals.shape[0]
    result = np.zeros(n_classes)
    buffer = np.empty(32)
    for c in range(n_classes):
        start = starts[c]
        stop = starts[c + 1]
        k = stop - start
        if k == 0:
            continue
        first = 0.0
        for i in range(start, stop):
            first = counts[i] if counts[i] > first else first
        if k > buffer.shape[0]:
            buffer = np.empty(2 * k)
        small = 0
        for i in range(start, stop):
            a = counts[i]
            buffer[small] = a
            small += 1 if c_parameter * a <= first else 0
        _sort_ascending(buffer, small, network4, network8, network16, network32)
        failing = 0
        tail = 0.0
        for i in range(small):
            tail += buffer[i]
            if first < c_parameter * tail:
                break
            failing += 1
        result[c] = k - failing
    return result


@njit(cache=True, nogil=True)
def equal_emd(starts, values, counts, totals, overall):  # pragma: no cover - compiled
    """Per class, EMD with equal ground distance: (sum_present |p - q| + 1 - sum_present q) / 2."""
    n_classes = totals.shape[0]
    result = np.zeros(n_classes)
    for c in range(n_classes):
        total = totals[c]
        if total <= 0.0:
            continue
        scale = 1.0 / total
        distance = 1.0
        for i in range(starts[c], starts[c + 1]):
            q = overall[values[i]]
            p = counts[i] * scale
            distance += (p - q if p > q else q - p) - q
        result[c] = 0.5 * distance if distance > 0.0 else 0.0
    return result


@njit(cache=True, nogil=True)
def ordered_emd_dense(starts, values, counts, totals, overall):  # pragma: no cover - compiled
    """Per class, EMD with ordered ground distance, walking all m codes.

    EMD = sum_i |sum_{j<=i} (p_j - q_j)| / (m - 1).
    """
    n_classes = totals.shape[0]
    m = overall.shape[0]
    result = np.zeros(n_classes)
    if m <= 1:
        return result
    shares = np.zeros(m)
    for c in range(n_classes):
        total = totals[c]
        if total <= 0.0:
            continue
        scale = 1.0 / total
        for i in range(starts[c], starts[c + 1]):
            shares[values[i]] = counts[i] * scale
        running = 0.0
        distance = 0.0
        for v in range(m):
            running += shares[v] - overall[v]
            shares[v] = 0.0
            distance += running if running > 0.0 else -running
        result[c] = distance / (m - 1)
    return result


@njit(cache=True, nogil=True)
def ordered_emd_sparse(starts, values, counts, totals, cumulative, cumulative_sums):  # pragma: no cover
    """Per class, EMD with ordered ground distance in O(values of the class x log m).

    ``cumulative[i]`` = Q_i = q_0 + ... + q_i (non-decreasing) and ``cumulative_sums[i]`` = Q_0 + ... +
    Q_{i-1}. The class's cumulative distribution P is a step function, constant between its present
    values, so each run of codes [a, b) with constant P contributes sum |P - Q_i|: Q crosses P once in
    the run (binary search, starting where the previous run's crossing was, since P only grows) and
    the sums of Q on either side of the crossing come from ``cumulative_sums``.
    """
    n_classes = totals.shape[0]
    m = cumulative.shape[0]
    result = np.zeros(n_classes)
    if m <= 1:
        return result
    for c in range(n_classes):
        total = totals[c]
        if total <= 0.0:
            continue
        start = starts[c]
        stop = starts[c + 1]
        distance = 0.0
        level = 0.0
        a = 0
        split = 0
        for i in range(start, stop + 1):
            b = values[i] if i < stop else m
            if b > a:
                low = split if split > a else a
                high = b
                while low < high:
                    middle = (low + high) >> 1
                    if cumulative[middle] <= level:
                        low = middle + 1
                    else:
                        high = middle
                split = low
                below = level * (split - a) - (cumulative_sums[split] - cumulative_sums[a])
                above = (cumulative_sums[b] - cumulative_sums[split]) - level * (b - split)
                distance += below + above
            if i < stop:
                level += counts[i] / total
                a = b
        result[c] = distance / (m - 1) if distance > 0.0 else 0.0
    return result


@njit(cache=True, nogil=True)
def hierarchical_emd_dense(
    starts, values, counts, totals, leaf_node, parent, cost_weight, overall_node
):  # pragma: no cover - compiled
    """Per class, EMD with hierarchical ground distance, walking every node of the tree.

    Nodes are numbered level by level from the leaves up, so a node's children precede it. See
    :func:`hierarchical_emd_sparse` for the formula.
    """
    n_classes = totals.shape[0]
    n_nodes = parent.shape[0]
    result = np.zeros(n_classes)
    mass = np.zeros(n_nodes)
    positive = np.zeros(n_nodes)
    for c in range(n_classes):
        total = totals[c]
        if total <= 0.0:
            continue
        scale = 1.0 / total
        for i in range(starts[c], starts[c + 1]):
            mass[leaf_node[values[i]]] += counts[i] * scale
        distance = 0.0
        for node in range(n_nodes):
            here = mass[node]
            extra = here - overall_node[node]
            surplus = extra if extra > 0.0 else 0.0
            cost = positive[node] - surplus
            distance += cost_weight[node] * (cost if cost > 0.0 else 0.0)
            above = parent[node]
            if above >= 0:
                mass[above] += here
                positive[above] += surplus
            mass[node] = 0.0
            positive[node] = 0.0
        result[c] = distance
    return result


@njit(cache=True, nogil=True)
def hierarchical_emd_sparse(
    starts, values, counts, totals, leaf_node, parent, cost_weight, overall_node, n_steps
):  # pragma: no cover - compiled
    """Per class, EMD with hierarchical ground distance (Li, Li & Venkatasubramanian 2007).

    Nodes of the tree are numbered globally; ``leaf_node[v]`` is the leaf of value code ``v``,
    ``parent[node]`` its parent (-1 for the root; all leaves at the same depth, ``n_steps`` levels
    below the root), ``cost_weight[node]`` = height(node) / H and ``overall_node[node]`` the table's
    share Q of the node's leaves. For an internal node N, with extra(C) = P(C) - Q(C) for its children
    C, min(pos_extra, neg_extra) = pos_extra - max(extra(N), 0) because pos_extra - neg_extra =
    extra(N); pos_extra only involves children holding some of the class's values, so only the nodes
    above the class's values are visited: O(values of the class x levels) per class.
    """
    n_classes = totals.shape[0]
    result = np.zeros(n_classes)
    n_nodes = parent.shape[0]
    mass = np.zeros(n_nodes)
    positive = np.zeros(n_nodes)
    current = np.empty(n_nodes, dtype=np.int64)
    following = np.empty(n_nodes, dtype=np.int64)
    for c in range(n_classes):
        total = totals[c]
        if total <= 0.0:
            continue
        k = 0
        for i in range(starts[c], starts[c + 1]):
            node = leaf_node[values[i]]
            if mass[node] == 0.0:  # counts are positive: a zero mass marks a node not reached yet
                current[k] = node
                k += 1
            mass[node] += counts[i] / total
        distance = 0.0
        for _ in range(n_steps):
            k_next = 0
            for j in range(k):
                node = current[j]
                above = parent[node]
                if mass[above] == 0.0:
                    following[k_next] = above
                    k_next += 1
                extra = mass[node] - overall_node[node]
                if extra > 0.0:
                    positive[above] += extra
                mass[above] += mass[node]
                mass[node] = 0.0
            for j in range(k_next):
                node = following[j]
                extra = mass[node] - overall_node[node]
                cost = positive[node] - (extra if extra > 0.0 else 0.0)
                if cost > 0.0:
                    distance += cost_weight[node] * cost
                positive[node] = 0.0
            current, following = following, current
            k = k_next
        for j in range(k):
            mass[current[j]] = 0.0
        result[c] = distance
    return result
