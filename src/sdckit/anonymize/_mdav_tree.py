"""Exact MDAV from a k-d tree with deletion (issue 35): the groups of
:func:`sdckit.anonymize._microaggregation_kernels.mdav_generic_scan`, record for record, without a full
pass over the remaining records per step."""

from __future__ import annotations

import numpy as np

from sdckit._numba import njit
from sdckit.anonymize._microaggregation_kernels import _insert_near, numeric_centroid

# The scan (mdav_generic_scan) reads every remaining record three times per step: O(n^2 d / k). The
# kernels below give the same groups, record for record, from a k-d tree over the records that
# supports deletion (a removed record leaves its leaf; the boxes and balls of its leaf and of the
# leaf's ancestors are shrunk to the records left). Each query computes the exact distance of a
# record with the same operations in the same order as the scan (``_row_distance``: ``0.0 + w_0 d_0
# d_0 + w_1 d_1 d_1 ...``), so equal and nearly equal distances compare as they did; a node is
# skipped only when a bound proves
# that none of its records can win:
#
# * nearest: the box lower bound is computed with the same operations on per-coordinate differences
#   no larger than any record's; rounding is monotone, so it is <= every record's computed distance,
#   exactly; a node is skipped when its bound is strictly larger than the current (k-1)-th distance.
#   The box bound of the principal-axis coordinates (below), lowered by its slack, is used too when
#   it is larger.
# * farthest: bounds from the records in principal-axis coordinates (``_principal_axes``: the tree is
#   cut along them, so its boxes are tight along the data's long axes), the smallest of the box bound,
#   the ball bound ``(|q - centre| + radius)^2`` and the shell bound of ``_far_bound``, enlarged by a
#   relative 1e-9 and an absolute slack far above the rounding of the rotation; searched best first
#   (a max-heap of nodes by bound); a node is skipped when its bound is strictly smaller than the best.
#   The farthest-from-the-seed query also keeps, for every node it opened, an upper bound of its
#   records' distances to that query; the next queries start from nearby seeds, and
#   ``_cached_bound`` carries that bound to the new query (exact algebra, bounded by the node's ball
#   and box, enlarged as the others), often much tighter than the bounds from the node alone.
#
# Ties go to the smaller record index, as in the scan; the remaining records keep the scan's compact
# order (a removed record replaced by the last one), so the running sums of the centroid are updated in
# the same order and the centroid is the same number.

_LEAF_SIZE = 32
#: MDAV's tree: larger leaves, fewer levels: its farthest query opens about as many leaves with 32,
#: 64 or 128 records, so larger leaves shorten the paths to them (measured, issue 35).
_MDAV_LEAF_SIZE = 64
_BALL_SLACK = 1.0 + 1e-9


@njit(cache=True, nogil=True)
def _row_distance(P: np.ndarray, s: int, q: np.ndarray, w: np.ndarray) -> float:
    """Weighted squared distance of row ``s`` of ``P`` to ``q``, in the scan's operation order."""
    total = 0.0
    for j in range(P.shape[1]):
        diff = P[s, j] - q[j]
        total += w[j] * diff * diff
    return total


@njit(cache=True, nogil=True)
def _tree_build(X: np.ndarray, w: np.ndarray, leaf_size: int):
    """A balanced k-d tree in heap order (children of node i: 2i+1, 2i+2), cut at the median of the
    coordinate of largest weighted spread. Returns (P: records in tree order, pid: record of each slot,
    start, cnt: first slot and live records of every node, leaf_of: leaf of every slot, first_leaf)."""
    n, d = X.shape
    depth = 0
    while (n >> depth) > leaf_size:
        depth += 1
    n_nodes = (1 << (depth + 1)) - 1
    first_leaf = (1 << depth) - 1
    order = np.arange(n)
    start = np.zeros(n_nodes, dtype=np.int64)
    end = np.zeros(n_nodes, dtype=np.int64)
    end[0] = n
    for node in range(first_leaf):
        s = start[node]
        e = end[node]
        best_j = 0
        best_spread = -1.0
        for j in range(d):
            lo = np.inf
            hi = -np.inf
            for t in range(s, e):
                v = X[order[t], j]
                lo = min(lo, v)
                hi = max(hi, v)
            spread = (hi - lo) * (hi - lo) * w[j] if e > s else 0.0
            if spread > best_spread:
                best_spread = spread
                best_j = j
        part = order[s:e].copy()
        values = np.empty(e - s)
        for t in range(e - s):
            values[t] = X[part[t], best_j]
        rank = np.argpartition(values, (e - s) // 2)  # the median split (any order within a side)
        for t in range(e - s):
            order[s + t] = part[rank[t]]
        mid = (s + e) // 2
        start[2 * node + 1] = s
        end[2 * node + 1] = mid
        start[2 * node + 2] = mid
        end[2 * node + 2] = e
    P = np.empty((n, d))
    for t in range(n):
        for j in range(d):
            P[t, j] = X[order[t], j]
    cnt = end - start
    leaf_of = np.empty(n, dtype=np.int64)
    for leaf in range(first_leaf, n_nodes):
        for t in range(start[leaf], end[leaf]):
            leaf_of[t] = leaf
    return P, order, start, cnt, leaf_of, first_leaf


@njit(cache=True, nogil=True)
def _tree_bounds(P, w, start, cnt, first_leaf):
    """Boxes (lo, hi), ball centres (the mean of the node's records), the distance of every centre to
    its parent's and the radii of every node."""
    n_nodes = start.shape[0]
    d = P.shape[1]
    lo = np.empty((n_nodes, d))
    hi = np.empty((n_nodes, d))
    ctr = np.zeros((n_nodes, d))
    for node in range(n_nodes):
        s = start[node]
        for j in range(d):
            acc = 0.0
            for t in range(s, s + cnt[node]):
                acc += P[t, j]
            ctr[node, j] = acc / max(cnt[node], 1)
    cdist = np.zeros(n_nodes)
    for node in range(1, n_nodes):
        cdist[node] = np.sqrt(_row_distance(ctr, node, ctr[(node - 1) // 2], w))
    rad = np.zeros(n_nodes)
    for leaf in range(first_leaf, n_nodes):
        _leaf_refresh(P, w, start, cnt, lo, hi, ctr, rad, leaf)
    for node in range(first_leaf - 1, -1, -1):
        _inner_refresh(cnt, lo, hi, cdist, rad, node)
    return lo, hi, ctr, cdist, rad


@njit(cache=True, nogil=True)
def _leaf_refresh(P, w, start, cnt, lo, hi, ctr, rad, leaf) -> None:
    d = P.shape[1]
    s = start[leaf]
    for j in range(d):
        lo[leaf, j] = np.inf
        hi[leaf, j] = -np.inf
    far = 0.0
    for t in range(s, s + cnt[leaf]):
        for j in range(d):
            v = P[t, j]
            if v < lo[leaf, j]:
                lo[leaf, j] = v
            if v > hi[leaf, j]:
                hi[leaf, j] = v
        far = max(far, _row_distance(P, t, ctr[leaf], w))
    rad[leaf] = np.sqrt(far)


@njit(cache=True, nogil=True)
def _inner_refresh(cnt, lo, hi, cdist, rad, node) -> None:
    d = lo.shape[1]
    a = 2 * node + 1
    b = a + 1
    if cnt[a] == 0 and cnt[b] == 0:
        return
    if cnt[a] == 0:
        a = b
    elif cnt[b] == 0:
        b = a
    for j in range(d):
        lo[node, j] = min(lo[a, j], lo[b, j])
        hi[node, j] = max(hi[a, j], hi[b, j])
    rad[node] = max(cdist[a] + rad[a], cdist[b] + rad[b])


@njit(cache=True, nogil=True)
def _swap_out(P, Z, pid, slot_of, start, cnt, leaf_of, record) -> int:
    """Swap ``record`` behind the live records of its leaf (in P and the rotated Z) and count it out
    of the leaf and its ancestors; returns the leaf (whose bounds the caller refreshes)."""
    s = slot_of[record]
    leaf = leaf_of[s]
    last = start[leaf] + cnt[leaf] - 1
    if s != last:
        for j in range(P.shape[1]):
            v = P[s, j]
            P[s, j] = P[last, j]
            P[last, j] = v
            v = Z[s, j]
            Z[s, j] = Z[last, j]
            Z[last, j] = v
        other = pid[last]
        pid[last] = record
        pid[s] = other
        slot_of[other] = s
        slot_of[record] = last
    node = leaf
    while True:
        cnt[node] -= 1
        if node == 0:
            break
        node = (node - 1) // 2
    return leaf


@njit(cache=True, nogil=True)
def _tree_remove(P, w, pid, slot_of, start, cnt, leaf_of, lo, hi, ctr, cdist, rad, rot, record) -> None:
    """Take ``record`` out of the tree: swap it behind its leaf's live records, shrink the bounds (of
    the original coordinates and, ``rot``, of the principal-axis coordinates)."""
    Z, ones, zlo, zhi, zctr, zcdist, zrad = rot
    leaf = _swap_out(P, Z, pid, slot_of, start, cnt, leaf_of, record)
    _leaf_refresh(P, w, start, cnt, lo, hi, ctr, rad, leaf)
    _leaf_refresh(Z, ones, start, cnt, zlo, zhi, zctr, zrad, leaf)
    node = leaf
    while node > 0:
        node = (node - 1) // 2
        _inner_refresh(cnt, lo, hi, cdist, rad, node)
        _inner_refresh(cnt, zlo, zhi, zcdist, zrad, node)


@njit(cache=True, nogil=True)
def _tree_remove_many(P, w, pid, slot_of, start, cnt, leaf_of, lo, hi, ctr, cdist, rad, rot, records) -> None:
    """Take ``records`` out of the tree as :func:`_tree_remove` does one by one (the same swaps), but
    shrink the bounds of every leaf and ancestor once (the records of a group often share a leaf;
    every leaf lies at the same depth, so the paths to the root are walked level by level)."""
    Z, ones, zlo, zhi, zctr, zcdist, zrad = rot
    m = records.shape[0]
    nodes = np.empty(m, dtype=np.int64)
    for r in range(m):
        nodes[r] = _swap_out(P, Z, pid, slot_of, start, cnt, leaf_of, records[r])
    for r in range(m):
        if _seen_before(nodes, r):
            continue
        _leaf_refresh(P, w, start, cnt, lo, hi, ctr, rad, nodes[r])
        _leaf_refresh(Z, ones, start, cnt, zlo, zhi, zctr, zrad, nodes[r])
    while nodes[0] > 0:
        for r in range(m):
            nodes[r] = (nodes[r] - 1) // 2
        for r in range(m):
            if not _seen_before(nodes, r):
                _inner_refresh(cnt, lo, hi, cdist, rad, nodes[r])
                _inner_refresh(cnt, zlo, zhi, zcdist, zrad, nodes[r])


@njit(cache=True, nogil=True)
def _seen_before(nodes, r) -> bool:
    """Whether ``nodes[r]`` occurs before position ``r``."""
    seen = False
    for e in range(r):
        seen = seen or nodes[e] == nodes[r]
    return seen


@njit(cache=True, nogil=True)
def _far_bound(lo, hi, ctr, rad, node, q, centre, shell, slack) -> float:
    """An upper bound of the computed distance of every record of ``node`` to the query, from the
    principal-axis coordinates (``q``: the query, ``centre``: the centroid, both rotated), given that
    every live record lies within ``sqrt(shell)`` of the centroid (the query itself on that sphere):
    the smallest of the box bound, the ball bound and ``|x - c|^2 + |q - c|^2 - 2 <x - c, q - c>``
    with ``|x - c|^2`` bounded by the shell and the node's ball and the product by the node's box;
    enlarged by a relative 1e-9 and the absolute ``slack`` (see :func:`_principal_axes`)."""
    box = 0.0
    product = 0.0
    for j in range(q.shape[0]):
        a = abs(hi[node, j] - q[j])
        b = abs(lo[node, j] - q[j])
        diff = max(a, b)
        box += diff * diff
        u = q[j] - centre[j]
        x = lo[node, j] if u > 0.0 else hi[node, j]
        product += u * (x - centre[j])
    to_q = 0.0
    to_c = 0.0
    for j in range(q.shape[0]):
        diff = ctr[node, j] - q[j]
        to_q += diff * diff
        diff = ctr[node, j] - centre[j]
        to_c += diff * diff
    reach = np.sqrt(to_q) + rad[node]
    inner = np.sqrt(to_c) + rad[node]
    cosine = min(shell, inner * inner) + shell - 2.0 * product
    return min(box, reach * reach, cosine) * _BALL_SLACK + slack


@njit(cache=True, nogil=True)
def _near_bound(lo, hi, node, q, w) -> float:
    """A lower bound of the computed distance of every record of ``node`` to ``q`` (exact: the same
    operations on differences no larger than any record's)."""
    total = 0.0
    for j in range(q.shape[0]):
        diff = 0.0
        if q[j] < lo[node, j]:
            diff = lo[node, j] - q[j]
        elif q[j] > hi[node, j]:
            diff = hi[node, j] - q[j]
        total += w[j] * diff * diff
    return total


@njit(cache=True, nogil=True)
def _near_bounds(lo, hi, zlo, zhi, node, q, zq, w, slack) -> float:
    """A lower bound of the computed distance of every record of ``node`` to the query: the larger of
    the exact bound of the original coordinates and the enlarged one of the rotated coordinates."""
    rotated = 0.0
    for j in range(zq.shape[0]):
        diff = 0.0
        if zq[j] < zlo[node, j]:
            diff = zlo[node, j] - zq[j]
        elif zq[j] > zhi[node, j]:
            diff = zq[j] - zhi[node, j]
        rotated += diff * diff
    rotated = rotated / _BALL_SLACK - slack
    return max(rotated, _near_bound(lo, hi, node, q, w))


@njit(cache=True, nogil=True)
def _tree_farthest(
    P, w, pid, start, cnt, first_leaf, rot, q, zq, zc, shell, slack, heap_node, heap_key, cache, qref
) -> int:
    """The live record farthest from ``q`` (ties: the smaller index), every live record lying within
    ``sqrt(shell)`` of the centroid (``zq``, ``zc``: the query and the centroid rotated; bounds: see
    :func:`_far_bound` and :func:`_cached_bound`). Best first: the node of largest bound is opened
    next, and the search stops once no bound reaches the best distance found. Every node opened
    leaves in ``cache`` an upper bound of its records' distances to this query (a leaf: the largest
    computed distance; an inner node: the larger bound of its children), and the query, rotated, in
    ``qref`` (see :func:`_cached_bound`)."""
    Z, ones, zlo, zhi, zctr, zcdist, zrad = rot
    best = -1.0
    best_id = P.shape[0]
    size = 0
    if cnt[0] > 0:
        size = _heap_push(heap_node, heap_key, size, 0, np.inf)
    while size > 0:
        node = heap_node[0]
        if heap_key[0] < best:
            break
        size = _heap_pop(heap_node, heap_key, size)
        if node >= first_leaf:
            s = start[node]
            top = -1.0
            for t in range(s, s + cnt[node]):
                dd = _row_distance(P, t, q, w)
                top = max(top, dd)
                if dd > best or (dd == best and pid[t] < best_id):
                    best = dd
                    best_id = pid[t]
            cache[node] = top
            qref[node] = zq
            continue
        top = -1.0
        for child in range(2 * node + 1, 2 * node + 3):
            if cnt[child] > 0:
                bound = np.inf
                if cache[child] < np.inf:  # the cheaper bound first: often it alone prunes the child
                    bound = _cached_bound(zlo, zhi, zctr, zrad, child, zq, cache, qref, slack)
                if bound >= best:
                    bound = min(bound, _far_bound(zlo, zhi, zctr, zrad, child, zq, zc, shell, slack))
                top = max(top, bound)
                if bound >= best:
                    size = _heap_push(heap_node, heap_key, size, child, bound)
        cache[node] = top
        qref[node] = zq
    return best_id


@njit(cache=True, nogil=True)
def _cached_bound(lo, hi, ctr, rad, node, q, cache, qref, slack) -> float:
    """An upper bound of the computed distance of every record of ``node`` to the query ``q`` from
    the bound ``cache[node]`` of their distances to an earlier query ``qref[node]`` (principal-axis
    coordinates; the node's records have only been removed since): with ``v = q_0 - q``,
    ``|x - q|^2 = |x - q_0|^2 + 2 <c - q_0, v> + 2 <x - c, v> + |v|^2``, the product ``<x - c, v>``
    bounded by the node's ball and box. The consecutive farthest-from-the-seed queries start from
    nearby seeds, so this is much tighter than the bounds of :func:`_far_bound` for the nodes those
    queries opened. Enlarged as they are."""
    moved = 0.0
    shift = 0.0
    support = 0.0
    for j in range(q.shape[0]):
        v = qref[node, j] - q[j]
        moved += v * v
        c = ctr[node, j]
        shift += (c - qref[node, j]) * v
        support += max(v * (lo[node, j] - c), v * (hi[node, j] - c))
    spread = min(rad[node] * np.sqrt(moved), support)
    return (cache[node] + 2.0 * shift + 2.0 * spread + moved) * _BALL_SLACK + slack


@njit(cache=True, nogil=True)
def _heap_push(heap_node, heap_key, size, node, key) -> int:
    """Push onto the max-heap of node bounds; returns its new size."""
    t = size
    while t > 0:
        parent = (t - 1) // 2
        if heap_key[parent] >= key:
            break
        heap_node[t] = heap_node[parent]
        heap_key[t] = heap_key[parent]
        t = parent
    heap_node[t] = node
    heap_key[t] = key
    return size + 1


@njit(cache=True, nogil=True)
def _heap_pop(heap_node, heap_key, size) -> int:
    """Drop the top of the max-heap; returns its new size."""
    size -= 1
    node = heap_node[size]
    key = heap_key[size]
    t = 0
    while True:
        child = 2 * t + 1
        if child >= size:
            break
        if child + 1 < size and heap_key[child + 1] > heap_key[child]:
            child += 1
        if heap_key[child] <= key:
            break
        heap_node[t] = heap_node[child]
        heap_key[t] = heap_key[child]
        t = child
    heap_node[t] = node
    heap_key[t] = key
    return size


@njit(cache=True, nogil=True)
def _tree_nearest(
    P, w, pid, start, cnt, lo, hi, first_leaf, rot, q, zq, slack, skip, bd, bi, bp, stack, bounds
) -> int:
    """The len(bd) live records nearest to ``q`` other than record ``skip``, ascending by (distance,
    index), into ``bi``; returns how many were found. A node's bound: the larger of the exact box bound
    of the original coordinates and the box bound of the principal-axis coordinates (``zq``: the query
    rotated), lowered by a relative 1e-9 and the absolute ``slack`` (see :func:`_principal_axes`)."""
    zlo = rot[2]
    zhi = rot[3]
    kk = bd.shape[0]
    filled = 0
    if kk == 0:
        return 0
    top = 0
    if cnt[0] > 0:
        stack[0] = 0
        bounds[0] = 0.0
        top = 1
    while top > 0:
        top -= 1
        node = stack[top]
        if filled == kk and bounds[top] > bd[kk - 1]:
            continue
        if node >= first_leaf:
            s = start[node]
            for t in range(s, s + cnt[node]):
                i = pid[t]
                if i == skip:
                    continue
                dd = _row_distance(P, t, q, w)
                if filled < kk or dd < bd[kk - 1] or (dd == bd[kk - 1] and i < bi[kk - 1]):
                    filled = _insert_near(dd, i, t, bd, bi, bp, filled)
            continue
        a = 2 * node + 1
        b = a + 1
        ba = _near_bounds(lo, hi, zlo, zhi, a, q, zq, w, slack) if cnt[a] > 0 else np.inf
        bb = _near_bounds(lo, hi, zlo, zhi, b, q, zq, w, slack) if cnt[b] > 0 else np.inf
        if ba < bb:  # push the nearer child last, so that it is visited first
            a, b = b, a
            ba, bb = bb, ba
        if cnt[a] > 0 and (filled < kk or ba <= bd[kk - 1]):
            stack[top] = a
            bounds[top] = ba
            top += 1
        if cnt[b] > 0 and (filled < kk or bb <= bd[kk - 1]):
            stack[top] = b
            bounds[top] = bb
            top += 1
    return filled


@njit(cache=True, nogil=True)
def _principal_axes(X, w):
    """The records in principal-axis coordinates, for the bounds of the farthest query only:
    ``Z = (sqrt(w) (x - mean)) V`` with ``V`` the eigenvectors of the weighted covariance (cyclic
    Jacobi rotations, at most 100,000 records sampled evenly), so that the k-d tree's boxes are tight
    along the data's long axes. Distances are the same mathematically but not bit for bit, so the
    bounds from ``Z`` are enlarged: returns ``Z``, the rotation (mean, ``sqrt(w)``, ``V``) and the
    absolute slack ``1e-9 * 4 max_x (sum_j sqrt(w_j) |x_j - mean_j|)^2``, orders of magnitude above
    the rounding of the rotation (about ``d eps`` of that scale) and of any bound computed from it."""
    n, d = X.shape
    mean = np.zeros(d)
    for p in range(n):
        for j in range(d):
            mean[j] += X[p, j]
    for j in range(d):
        mean[j] /= max(n, 1)
    root = np.sqrt(w)
    step = max(1, n // 100_000)
    A = np.zeros((d, d))
    y = np.empty(d)
    for p in range(0, n, step):
        for j in range(d):
            y[j] = root[j] * (X[p, j] - mean[j])
        for a in range(d):
            for b in range(d):
                A[a, b] += y[a] * y[b]
    V = np.eye(d)
    for _sweep in range(50):
        off = 0.0
        for a in range(d):
            for b in range(a + 1, d):
                off += A[a, b] * A[a, b]
        if off <= 1e-30 * (np.trace(A) ** 2 + 1e-300):
            break
        for a in range(d):
            for b in range(a + 1, d):
                if A[a, b] == 0.0:
                    continue
                theta = (A[b, b] - A[a, a]) / (2.0 * A[a, b])
                tangent = np.sign(theta) / (abs(theta) + np.sqrt(theta * theta + 1.0)) if theta != 0 else 1.0
                cos = 1.0 / np.sqrt(tangent * tangent + 1.0)
                sin = tangent * cos
                for r in range(d):
                    u = A[r, a]
                    v = A[r, b]
                    A[r, a] = cos * u - sin * v
                    A[r, b] = sin * u + cos * v
                for r in range(d):
                    u = A[a, r]
                    v = A[b, r]
                    A[a, r] = cos * u - sin * v
                    A[b, r] = sin * u + cos * v
                for r in range(d):
                    u = V[r, a]
                    v = V[r, b]
                    V[r, a] = cos * u - sin * v
                    V[r, b] = sin * u + cos * v
    Z = np.empty((n, d))
    scale = 0.0
    for p in range(n):
        _rotate(X[p], mean, root, V, Z[p])
        norm = 0.0
        for j in range(d):
            norm += root[j] * abs(X[p, j] - mean[j])
        scale = max(scale, norm)
    return Z, mean, root, V, 1e-9 * 4.0 * scale * scale + 1e-300


@njit(cache=True, nogil=True)
def _rotate(x, mean, root, V, out) -> None:
    """``out = (sqrt(w) (x - mean)) V`` (see :func:`_principal_axes`)."""
    d = x.shape[0]
    for j in range(d):
        out[j] = 0.0
    for a in range(d):
        y = root[a] * (x[a] - mean[a])
        for j in range(d):
            out[j] += y * V[a, j]


@njit(cache=True, nogil=True)
def _anchor(X, w, cids, m, point, reach, order):
    """Sort the first ``m`` compact records by their distance to ``point`` (into ``reach``, by
    record), farthest first, into ``order``; returns how many entries ``order`` holds."""
    for p in range(m):
        record = cids[p]
        reach[record] = np.sqrt(_row_distance(X, record, point, w))
    keys = np.empty(m)
    for p in range(m):
        keys[p] = -reach[cids[p]]
    rank = np.argsort(keys)
    for t in range(m):
        order[t] = cids[rank[t]]
    return m


@njit(cache=True, nogil=True)
def _anchored_farthest(X, w, labels, order, head, length, reach, offset, q) -> tuple:
    """The live record farthest from ``q`` (ties: the smaller index), scanning the records by
    decreasing distance to the anchor and stopping once ``(reach + offset)^2`` (the triangle
    inequality, ``offset`` >= the distance of ``q`` to the anchor) cannot reach the best; a record is
    live while its label is -1. Returns the record, how many records were read and the first live
    entry of ``order``."""
    best = -1.0
    best_id = X.shape[0]
    read = 0
    while head < length and labels[order[head]] >= 0:
        head += 1
    for t in range(head, length):
        record = order[t]
        if labels[record] >= 0:
            continue
        bound = reach[record] + offset
        if bound * bound * _BALL_SLACK + 1e-300 < best:
            break
        read += 1
        dd = _row_distance(X, record, q, w)
        if dd > best or (dd == best and record < best_id):
            best = dd
            best_id = record
    return best_id, read, head


@njit(cache=True, nogil=True)
def _remove_group(X, is_ordinal, sums, ord_counts, cids, cpos, m, members, labels, group, tree_args) -> int:
    """Label ``members`` with ``group`` and take them out of the sums, the compact order and the
    tree, as the scan does (highest compact position first); returns the number of records left."""
    k = members.shape[0]
    positions = np.empty(k, dtype=np.int64)
    for q in range(k):
        positions[q] = cpos[members[q]]
    positions = np.sort(positions)
    records = np.empty(k, dtype=np.int64)
    for q in range(k - 1, -1, -1):
        p = positions[q]
        record = cids[p]
        records[k - 1 - q] = record
        labels[record] = group
        for j in range(X.shape[1]):
            value = X[record, j]
            if is_ordinal[j]:
                ord_counts[j, int(value)] -= 1
            else:
                sums[j] -= value
        last = m - 1
        if p != last:
            cids[p] = cids[last]
            cpos[cids[p]] = p
        m -= 1
    P, w, pid, slot_of, start, cnt, leaf_of, lo, hi, ctr, cdist, rad, rot = tree_args
    _tree_remove_many(P, w, pid, slot_of, start, cnt, leaf_of, lo, hi, ctr, cdist, rad, rot, records)
    return m


@njit(cache=True, nogil=True)
def tree_index(X: np.ndarray, w: np.ndarray, leaf_size: int):
    """The k-d tree over the records, cut along their principal axes, as the queries and removals
    take it: (P, pid, slot_of, start, cnt, leaf_of, lo, hi, ctr, cdist, rad, rot, first_leaf) — the
    records in tree order and their bounds, ``rot`` those of the rotated coordinates — then the
    rotated records by record (``Zr``), the rotation (mean, root, V) and its slack."""
    n, d = X.shape
    Zr, mean, root, V, slack = _principal_axes(X, w)
    ones = np.ones(d)
    Z, pid, start, cnt, leaf_of, first_leaf = _tree_build(Zr, ones, leaf_size)
    P = np.empty((n, d))
    for t in range(n):
        for j in range(d):
            P[t, j] = X[pid[t], j]
    lo, hi, ctr, cdist, rad = _tree_bounds(P, w, start, cnt, first_leaf)
    zlo, zhi, zctr, zcdist, zrad = _tree_bounds(Z, ones, start, cnt, first_leaf)
    rot = (Z, ones, zlo, zhi, zctr, zcdist, zrad)
    slot_of = np.empty(n, dtype=np.int64)
    for t in range(n):
        slot_of[pid[t]] = t
    return (
        P,
        pid,
        slot_of,
        start,
        cnt,
        leaf_of,
        lo,
        hi,
        ctr,
        cdist,
        rad,
        rot,
        first_leaf,
        Zr,
        mean,
        root,
        V,
        slack,
    )


@njit(cache=True, nogil=True)
def mdav_tree(
    X: np.ndarray, w: np.ndarray, is_ordinal: np.ndarray, ordinal_card: np.ndarray, k: int
) -> np.ndarray:
    """MDAV-generic without nominal attributes, from a k-d tree: the groups of :func:`mdav_generic_scan`
    record for record (same centroid, same distances, same ties), in O(n log n)-like time on data of
    low intrinsic dimension instead of O(n^2 / k). Needs n >= k >= 1."""
    n, d = X.shape
    labels = np.full(n, -1, dtype=np.int64)
    sums = np.zeros(d)
    max_ord = 1
    for j in range(d):
        if is_ordinal[j]:
            max_ord = max(max_ord, ordinal_card[j])
    ord_counts = np.zeros((d, max_ord), dtype=np.int64)
    for j in range(d):
        if is_ordinal[j]:
            for p in range(n):
                ord_counts[j, int(X[p, j])] += 1
        else:
            s = 0.0
            for p in range(n):
                s += X[p, j]
            sums[j] = s
    index = tree_index(X, w, _MDAV_LEAF_SIZE)
    P, pid, slot_of, start, cnt, leaf_of, lo, hi, ctr, cdist, rad, rot, first_leaf = index[:13]
    mean, root, V, slack = index[14:]
    Z = rot[0]
    tree_args = (P, w, pid, slot_of, start, cnt, leaf_of, lo, hi, ctr, cdist, rad, rot)
    heap_node = np.empty(start.shape[0], dtype=np.int64)
    heap_key = np.empty(start.shape[0])
    cache = np.full(start.shape[0], np.inf)  # bounds from earlier farthest queries (_cached_bound)
    qref = np.zeros((start.shape[0], d))
    zq = np.empty(d)
    zc = np.empty(d)
    cids = np.arange(n)
    cpos = np.arange(n)
    stack = np.zeros(256, dtype=np.int64)
    bounds = np.zeros(256)
    centroid = np.zeros(d)
    bd = np.zeros(k - 1)
    bi = np.zeros(k - 1, dtype=np.int64)
    bp = np.zeros(k - 1, dtype=np.int64)
    members = np.zeros(k, dtype=np.int64)
    m = n
    group = 0
    # the farthest from the centroid: records sorted by their distance to an anchor (a past centroid),
    # sorted again at the current centroid once the queries since have read more than m records
    reach = np.empty(n)
    order = np.empty(n, dtype=np.int64)
    anchor = np.empty(d)
    length = 0
    head = 0
    read_since = n + 1
    while m > 0:
        if m < 2 * k:  # the last group: everything left (k..2k-1 records)
            for p in range(m):
                labels[cids[p]] = group
            group += 1
            break
        numeric_centroid(centroid, sums, m, is_ordinal, ordinal_card, ord_counts)
        if read_since > m:
            anchor[:] = centroid
            length = _anchor(X, w, cids, m, anchor, reach, order)
            head = 0
            read_since = 0
        offset = np.sqrt(_row_distance(centroid.reshape(1, d), 0, anchor, w))
        seed, read, head = _anchored_farthest(X, w, labels, order, head, length, reach, offset, centroid)
        read_since += read
        n_groups_now = 2 if m >= 3 * k else 1
        for step in range(n_groups_now):
            row = X[seed].copy()
            zq[:] = Z[slot_of[seed]]
            _tree_nearest(
                P,
                w,
                pid,
                start,
                cnt,
                lo,
                hi,
                first_leaf,
                rot,
                row,
                zq,
                slack,
                seed,
                bd,
                bi,
                bp,
                stack,
                bounds,
            )
            members[0] = seed
            for q in range(k - 1):
                members[q + 1] = bi[q]
            m = _remove_group(
                X, is_ordinal, sums, ord_counts, cids, cpos, m, members, labels, group, tree_args
            )
            group += 1
            if step == 0 and n_groups_now == 2:
                # xs: farthest from xr among the records not in xr's group (SPEC §4.1)
                # (every live record lies within |xr - centroid| of the centroid)
                shell = _row_distance(row.reshape(1, d), 0, centroid, w)
                _rotate(centroid, mean, root, V, zc)
                seed = _tree_farthest(
                    P,
                    w,
                    pid,
                    start,
                    cnt,
                    first_leaf,
                    rot,
                    row,
                    zq,
                    zc,
                    shell,
                    slack,
                    heap_node,
                    heap_key,
                    cache,
                    qref,
                )
    return labels
