"""Compiled loops of microaggregation (numba): MDAV-generic, V-MDAV, optimal univariate partition.

Every kernel works on the data in original units with one weight per coordinate (``1 / variance``
for a numeric attribute, so that ``sum_j w_j (x_j - y_j)^2`` is the squared Euclidean distance of the
standardized records, as sdcMicro's ``Mdav.cpp`` weights by the inverse variance). Working in original
units keeps the exact ties of integer data exact (standardizing first would turn ``|1 - 6| = |11 - 6|``
into two floating-point numbers that may differ in the last bit); ties go to the smallest row index
(SPEC §0).

The remaining records are kept in compact arrays (rows copied, a removed row replaced by the last one)
so that every pass over them reads contiguous memory and shrinks as groups are formed.
"""

from __future__ import annotations

import numpy as np

from sdckit._numba import njit


@njit(cache=True)
def _better_far(d: float, i: int, best: float, best_id: int) -> bool:
    return d > best or (d == best and i < best_id)


@njit(cache=True)
def _insert_near(
    d: float, i: int, p: int, bd: np.ndarray, bi: np.ndarray, bp: np.ndarray, filled: int
) -> int:
    """Insert (d, id i, position p) into the ascending buffer of the q = len(bd) nearest by (d, id)."""
    q = bd.shape[0]
    if q == 0:
        return 0
    if filled == q:
        last = q - 1
        if d > bd[last] or (d == bd[last] and i > bi[last]):
            return filled
        slot = last
    else:
        slot = filled
        filled += 1
    while slot > 0 and (d < bd[slot - 1] or (d == bd[slot - 1] and i < bi[slot - 1])):
        bd[slot] = bd[slot - 1]
        bi[slot] = bi[slot - 1]
        bp[slot] = bp[slot - 1]
        slot -= 1
    bd[slot] = d
    bi[slot] = i
    bp[slot] = p
    return filled


@njit(cache=True)
def _distance_to(
    W: np.ndarray, C: np.ndarray, p: int, point: np.ndarray, codes: np.ndarray, w: np.ndarray, wc: np.ndarray
) -> float:
    """Weighted squared distance of compact row ``p`` to a point (numeric part ``point``, nominal
    part ``codes``: 0 if equal, else the attribute's weight)."""
    total = 0.0
    for j in range(W.shape[1]):
        diff = W[p, j] - point[j]
        total += w[j] * diff * diff
    for j in range(C.shape[1]):
        if C[p, j] != codes[j]:
            total += wc[j]
    return total


@njit(cache=True)
def _sweep(
    W: np.ndarray,
    C: np.ndarray,
    m: int,
    point: np.ndarray,
    codes: np.ndarray,
    w: np.ndarray,
    wc: np.ndarray,
    out: np.ndarray,
) -> None:
    """Weighted squared distances of the first ``m`` compact records to a point, into ``out``.

    Column-major storage (``W`` is (d, n), ``C`` is (c, n)): one pass per coordinate over contiguous
    memory, which the compiler vectorizes."""
    for p in range(m):
        out[p] = 0.0
    for j in range(W.shape[0]):
        wj = w[j]
        cj = point[j]
        row = W[j]
        for p in range(m):
            diff = row[p] - cj
            out[p] += wj * diff * diff
    for j in range(C.shape[0]):
        wj = wc[j]
        code = codes[j]
        row_codes = C[j]
        for p in range(m):
            if row_codes[p] != code:
                out[p] += wj


@njit(cache=True)
def mdav_generic_scan(
    X: np.ndarray,
    w: np.ndarray,
    is_ordinal: np.ndarray,
    ordinal_card: np.ndarray,
    nominal: np.ndarray,
    nominal_card: np.ndarray,
    wc: np.ndarray,
    k: int,
) -> np.ndarray:
    """MDAV-generic (SPEC §4.1; Domingo-Ferrer & Torra 2005) by full scans: the group label of every
    record. O(n^2 d / k); the reference of :func:`mdav_tree`, and the kernel for nominal attributes.

    ``X`` (n, d): numeric coordinates (weights ``w``); a column flagged in ``is_ordinal`` holds the
    integer ranks 0..m-1 of an ordinal attribute (weight ``1/(m-1)^2``) whose centroid is the lower
    median of the ranks instead of the mean; ``nominal`` (n, c) holds category codes 0..m-1 whose
    centroid is the mode (ties: the smaller code) and whose distance is 0/1 times ``wc``.
    Needs n >= k >= 1.

    One function on purpose: its rounds share the column-major working copies and the running sums,
    and splitting the loop into compiled helpers would pass them on every round.
    """
    n, d = X.shape
    c = nominal.shape[1]
    labels = np.full(n, -1, dtype=np.int64)
    W = np.ascontiguousarray(X.T)
    C = np.ascontiguousarray(nominal.T)
    ids = np.arange(n)
    m = n
    sums = np.zeros(d)
    for j in range(d):
        if not is_ordinal[j]:
            s = 0.0
            for p in range(n):
                s += W[j, p]
            sums[j] = s
    max_ord = 1
    for j in range(d):
        if is_ordinal[j] and ordinal_card[j] > max_ord:
            max_ord = ordinal_card[j]
    ord_counts = np.zeros((d, max_ord), dtype=np.int64)
    for j in range(d):
        if is_ordinal[j]:
            for p in range(n):
                ord_counts[j, int(W[j, p])] += 1
    max_nom = 1
    for j in range(c):
        if nominal_card[j] > max_nom:
            max_nom = nominal_card[j]
    nom_counts = np.zeros((max(c, 1), max_nom), dtype=np.int64)
    for j in range(c):
        for p in range(n):
            nom_counts[j, C[j, p]] += 1

    centroid = np.zeros(d)
    centroid_codes = np.zeros(c, dtype=C.dtype)
    row = np.zeros(d)
    row_codes = np.zeros(c, dtype=C.dtype)
    dist = np.zeros(n)
    bd = np.zeros(k - 1)
    bi = np.zeros(k - 1, dtype=np.int64)
    bp = np.zeros(k - 1, dtype=np.int64)
    members = np.zeros(k, dtype=np.int64)
    marked = np.zeros(n, dtype=np.bool_)
    group = 0
    while m > 0:
        if m < 2 * k:  # the last group: everything left (k..2k-1 records)
            for p in range(m):
                labels[ids[p]] = group
            group += 1
            m = 0
            break
        # centroid of the remaining records
        for j in range(d):
            if is_ordinal[j]:
                target = (m - 1) // 2
                seen = 0
                for r in range(ordinal_card[j]):
                    seen += ord_counts[j, r]
                    if seen > target:
                        centroid[j] = r
                        break
            else:
                centroid[j] = sums[j] / m
        for j in range(c):
            best_code = 0
            for code in range(nominal_card[j]):
                if nom_counts[j, code] > nom_counts[j, best_code]:
                    best_code = code
            centroid_codes[j] = best_code
        # xr: farthest from the centroid
        _sweep(W, C, m, centroid, centroid_codes, w, wc, dist)
        best = -1.0
        best_id = n
        pr = -1
        for p in range(m):
            dd = dist[p]
            if dd > best or (dd == best and ids[p] < best_id):
                best = dd
                best_id = ids[p]
                pr = p
        n_groups_now = 2 if m >= 3 * k else 1
        for step in range(n_groups_now):
            for j in range(d):
                row[j] = W[j, pr]
            for j in range(c):
                row_codes[j] = C[j, pr]
            # distances to the seed; its k-1 nearest (ties: smaller id)
            _sweep(W, C, m, row, row_codes, w, wc, dist)
            filled = 0
            far = -1.0
            far_id = n
            far_pos = -1
            for p in range(m):
                dd = dist[p]
                if dd > far or (dd == far and ids[p] < far_id):
                    far = dd
                    far_id = ids[p]
                    far_pos = p
                if p != pr and (filled < k - 1 or dd < bd[k - 2] or (dd == bd[k - 2] and ids[p] < bi[k - 2])):
                    filled = _insert_near(dd, ids[p], p, bd, bi, bp, filled)
            members[0] = pr
            for q in range(k - 1):
                members[q + 1] = bp[q]
            xs_pos = -1
            if step == 0 and n_groups_now == 2:
                # xs: farthest from xr among the records not in xr's group (SPEC §4.1); the farthest
                # of all unless ties put it in the group
                in_group = False
                for q in range(k):
                    if members[q] == far_pos:
                        in_group = True
                xs_pos = far_pos
                if in_group:
                    for q in range(k):
                        marked[members[q]] = True
                    best = -1.0
                    best_id = n
                    for p in range(m):
                        dd = dist[p]
                        if not marked[p] and (dd > best or (dd == best and ids[p] < best_id)):
                            best = dd
                            best_id = ids[p]
                            xs_pos = p
                    for q in range(k):
                        marked[members[q]] = False
            # label and remove the group (highest positions first, so swaps do not move members)
            members_sorted = np.sort(members)
            for q in range(k - 1, -1, -1):
                p = members_sorted[q]
                labels[ids[p]] = group
                for j in range(d):
                    value = W[j, p]
                    if is_ordinal[j]:
                        ord_counts[j, int(value)] -= 1
                    else:
                        sums[j] -= value
                for j in range(c):
                    nom_counts[j, C[j, p]] -= 1
                last = m - 1
                if p != last:
                    for j in range(d):
                        W[j, p] = W[j, last]
                    for j in range(c):
                        C[j, p] = C[j, last]
                    ids[p] = ids[last]
                    if xs_pos == last:  # xs is never a member: follow it when it moves
                        xs_pos = p
                m -= 1
            group += 1
            pr = xs_pos
    return labels


# --- exact MDAV with a spatial index ------------------------------------------------------------
#
# The scan above reads every remaining record three times per step: O(n^2 d / k). The kernels below
# give the same groups, record for record, from a k-d tree over the records that supports deletion
# (a removed record leaves its leaf; the boxes and balls of its leaf and of the leaf's ancestors are
# shrunk to the records left). Each query computes the exact distance of a record with the same
# operations in the same order as the scan (``_row_distance``: ``0.0 + w_0 d_0 d_0 + w_1 d_1 d_1 ...``),
# so equal and nearly equal distances compare as they did; a node is skipped only when a bound proves
# that none of its records can win:
#
# * nearest: the box lower bound is computed with the same operations on per-coordinate differences
#   no larger than any record's; rounding is monotone, so it is <= every record's computed distance,
#   exactly; a node is skipped when its bound is strictly larger than the current (k-1)-th distance.
# * farthest: the smaller of the box upper bound (exact by the same argument) and the ball bound
#   ``(|q - centre| + radius)^2`` (triangle inequality, enlarged by a relative 1e-9, far above the
#   rounding of either side); a node is skipped when its bound is strictly smaller than the best.
#
# Ties go to the smaller record index, as in the scan; the remaining records keep the scan's compact
# order (a removed record replaced by the last one), so the running sums of the centroid are updated in
# the same order and the centroid is the same number.

_LEAF_SIZE = 16
#: The number of records from which mdav_generic uses the tree (below, the scan is as fast or faster).
_TREE_FROM = 20_000
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
        rank = np.argsort(values, kind="mergesort")
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
def _tree_remove(P, w, pid, slot_of, start, cnt, leaf_of, lo, hi, ctr, cdist, rad, record) -> None:
    """Take ``record`` out of the tree: swap it behind its leaf's live records, shrink the bounds."""
    s = slot_of[record]
    leaf = leaf_of[s]
    last = start[leaf] + cnt[leaf] - 1
    if s != last:
        for j in range(P.shape[1]):
            v = P[s, j]
            P[s, j] = P[last, j]
            P[last, j] = v
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
    _leaf_refresh(P, w, start, cnt, lo, hi, ctr, rad, leaf)
    node = leaf
    while node > 0:
        node = (node - 1) // 2
        _inner_refresh(cnt, lo, hi, cdist, rad, node)


@njit(cache=True, nogil=True)
def _far_bound(lo, hi, ctr, rad, node, q, w, centre, shell) -> float:
    """An upper bound of the computed distance of every record of ``node`` to ``q``, given that every
    live record lies within ``sqrt(shell)`` of ``centre`` (``q`` itself on that sphere): the smallest
    of the box bound, the ball bound and ``|x - c|^2 + |q - c|^2 - 2 <x - c, q - c>`` with
    ``|x - c|^2`` bounded by the shell and the node's ball and the product by the node's box."""
    box = 0.0
    product = 0.0
    scale = 0.0
    for j in range(q.shape[0]):
        a = abs(hi[node, j] - q[j])
        b = abs(lo[node, j] - q[j])
        diff = max(a, b)
        box += w[j] * diff * diff
        u = q[j] - centre[j]
        x = lo[node, j] if u > 0.0 else hi[node, j]
        term = w[j] * u * (x - centre[j])
        product += term
        scale += abs(term)
    reach = np.sqrt(_row_distance(ctr, node, q, w)) + rad[node]
    bound = min(box, reach * reach * _BALL_SLACK + 1e-300)
    inner = np.sqrt(_row_distance(ctr, node, centre, w)) + rad[node]
    near_centre = min(shell, inner * inner) * _BALL_SLACK
    cosine = near_centre + shell - 2.0 * product
    cosine += (near_centre + shell + 2.0 * scale) * 1e-9 + 1e-300
    return min(bound, cosine)


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
def _tree_farthest(
    P, w, pid, start, cnt, lo, hi, ctr, rad, first_leaf, q, centre, shell, stack, bounds
) -> int:
    """The live record farthest from ``q`` (ties: the smaller index), every live record lying within
    ``sqrt(shell)`` of ``centre`` (see :func:`_far_bound`)."""
    best = -1.0
    best_id = P.shape[0]
    top = 0
    if cnt[0] > 0:
        stack[0] = 0
        bounds[0] = np.inf
        top = 1
    while top > 0:
        top -= 1
        node = stack[top]
        if bounds[top] < best:
            continue
        if node >= first_leaf:
            s = start[node]
            for t in range(s, s + cnt[node]):
                dd = _row_distance(P, t, q, w)
                if dd > best or (dd == best and pid[t] < best_id):
                    best = dd
                    best_id = pid[t]
            continue
        a = 2 * node + 1
        b = a + 1
        ba = _far_bound(lo, hi, ctr, rad, a, q, w, centre, shell) if cnt[a] > 0 else -np.inf
        bb = _far_bound(lo, hi, ctr, rad, b, q, w, centre, shell) if cnt[b] > 0 else -np.inf
        if ba > bb:  # push the more promising child last, so that it is visited first
            a, b = b, a
            ba, bb = bb, ba
        if cnt[a] > 0 and ba >= best:
            stack[top] = a
            bounds[top] = ba
            top += 1
        if cnt[b] > 0 and bb >= best:
            stack[top] = b
            bounds[top] = bb
            top += 1
    return best_id


@njit(cache=True, nogil=True)
def _tree_nearest(P, w, pid, start, cnt, lo, hi, first_leaf, q, skip, bd, bi, bp, stack, bounds) -> int:
    """The len(bd) live records nearest to ``q`` other than record ``skip``, ascending by (distance,
    index), into ``bi``; returns how many were found."""
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
        ba = _near_bound(lo, hi, a, q, w) if cnt[a] > 0 else np.inf
        bb = _near_bound(lo, hi, b, q, w) if cnt[b] > 0 else np.inf
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
    P, w, pid, slot_of, start, cnt, leaf_of, lo, hi, ctr, cdist, rad = tree_args
    k = members.shape[0]
    positions = np.empty(k, dtype=np.int64)
    for q in range(k):
        positions[q] = cpos[members[q]]
    positions = np.sort(positions)
    for q in range(k - 1, -1, -1):
        p = positions[q]
        record = cids[p]
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
        _tree_remove(P, w, pid, slot_of, start, cnt, leaf_of, lo, hi, ctr, cdist, rad, record)
    return m


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
    P, pid, start, cnt, leaf_of, first_leaf = _tree_build(X, w, _LEAF_SIZE)
    lo, hi, ctr, cdist, rad = _tree_bounds(P, w, start, cnt, first_leaf)
    slot_of = np.empty(n, dtype=np.int64)
    for t in range(n):
        slot_of[pid[t]] = t
    tree_args = (P, w, pid, slot_of, start, cnt, leaf_of, lo, hi, ctr, cdist, rad)
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
        for j in range(d):
            if is_ordinal[j]:
                target = (m - 1) // 2
                seen = 0
                for r in range(ordinal_card[j]):
                    seen += ord_counts[j, r]
                    if seen > target:
                        centroid[j] = r
                        break
            else:
                centroid[j] = sums[j] / m
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
            _tree_nearest(P, w, pid, start, cnt, lo, hi, first_leaf, row, seed, bd, bi, bp, stack, bounds)
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
                seed = _tree_farthest(
                    P, w, pid, start, cnt, lo, hi, ctr, rad, first_leaf, row, centroid, shell, stack, bounds
                )
    return labels


def mdav_generic(
    X: np.ndarray,
    w: np.ndarray,
    is_ordinal: np.ndarray,
    ordinal_card: np.ndarray,
    nominal: np.ndarray,
    nominal_card: np.ndarray,
    wc: np.ndarray,
    k: int,
) -> np.ndarray:
    """MDAV-generic (SPEC §4.1): the group label of every record (arguments of
    :func:`mdav_generic_scan`). From ``_TREE_FROM`` records on and without nominal attributes, from
    the k-d tree of :func:`mdav_tree` (the same groups, faster on large files); otherwise by full
    scans (faster below about 20,000 records of 13 attributes, measured in bench_masking.py)."""
    if nominal.shape[1] == 0 and X.shape[0] >= _TREE_FROM:
        return mdav_tree(X, w, is_ordinal, ordinal_card, k)
    return mdav_generic_scan(X, w, is_ordinal, ordinal_card, nominal, nominal_card, wc, k)


@njit(cache=True)
def vmdav(X: np.ndarray, w: np.ndarray, k: int, gamma: float) -> np.ndarray:
    """V-MDAV (SPEC §4.2; Solanas & Martínez-Ballesté 2006): the group label of every record.

    The centroid of all records is computed once; each group starts as the record farthest from it
    plus its k-1 nearest, then grows (up to 2k-1) by the nearest outside record ``e_in`` while its
    distance to the group is below ``gamma`` times its distance to the nearest other outside record
    (plain, not squared, standardized Euclidean distances). Fewer than k records left join the group
    whose centroid is nearest (ties: the earlier group).
    """
    n, d = X.shape
    labels = np.full(n, -1, dtype=np.int64)
    W = X.copy()
    ids = np.arange(n)
    m = n
    centroid = np.zeros(d)
    for j in range(d):
        s = 0.0
        for p in range(n):
            s += X[p, j]
        centroid[j] = s / n
    no_codes = np.zeros((n, 0), dtype=np.int64)
    empty_codes = np.zeros(0, dtype=np.int64)
    empty_w = np.zeros(0)
    row = np.zeros(d)
    mind = np.full(n, np.inf)
    bd = np.zeros(k - 1)
    bi = np.zeros(k - 1, dtype=np.int64)
    bp = np.zeros(k - 1, dtype=np.int64)
    members = np.zeros(k, dtype=np.int64)
    group_ids = np.zeros(2 * k, dtype=np.int64)
    group = 0
    while m >= k:
        best = -1.0
        best_id = n
        pe = -1
        for p in range(m):
            dd = _distance_to(W, no_codes, p, centroid, empty_codes, w, empty_w)
            if _better_far(dd, ids[p], best, best_id):
                best = dd
                best_id = ids[p]
                pe = p
        for j in range(d):
            row[j] = W[pe, j]
        filled = 0
        for p in range(m):
            if p != pe:
                dd = _distance_to(W, no_codes, p, row, empty_codes, w, empty_w)
                filled = _insert_near(dd, ids[p], p, bd, bi, bp, filled)
        members[0] = pe
        for q in range(k - 1):
            members[q + 1] = bp[q]
        size = 0
        members_sorted = np.sort(members)
        # remove the first k members; remember their rows to start the distances to the group
        starting = np.zeros((k, d))
        for q in range(k - 1, -1, -1):
            p = members_sorted[q]
            group_ids[size] = ids[p]
            for j in range(d):
                starting[size, j] = W[p, j]
            size += 1
            last = m - 1
            if p != last:
                for j in range(d):
                    W[p, j] = W[last, j]
                ids[p] = ids[last]
            m -= 1
        for p in range(m):
            mind[p] = np.inf
        for q in range(k):
            for p in range(m):
                dd = _distance_to(W, no_codes, p, starting[q], empty_codes, w, empty_w)
                if dd < mind[p]:
                    mind[p] = dd
        while size < 2 * k - 1 and m > 0:
            pin = 0
            for p in range(1, m):
                if mind[p] < mind[pin] or (mind[p] == mind[pin] and ids[p] < ids[pin]):
                    pin = p
            d_in = np.sqrt(mind[pin])
            d_out = np.inf
            for j in range(d):
                row[j] = W[pin, j]
            for p in range(m):
                if p != pin:
                    dd = _distance_to(W, no_codes, p, row, empty_codes, w, empty_w)
                    if dd < d_out:
                        d_out = dd
            d_out = np.sqrt(d_out)
            if not d_in < gamma * d_out:
                break
            group_ids[size] = ids[pin]
            size += 1
            last = m - 1
            if pin != last:
                for j in range(d):
                    W[pin, j] = W[last, j]
                ids[pin] = ids[last]
                mind[pin] = mind[last]
            m -= 1
            for p in range(m):
                dd = _distance_to(W, no_codes, p, row, empty_codes, w, empty_w)
                if dd < mind[p]:
                    mind[p] = dd
        for q in range(size):
            labels[group_ids[q]] = group
        group += 1
    if m > 0:
        if group == 0:  # fewer than k records in all: one group (the caller refuses n < k)
            for p in range(m):
                labels[ids[p]] = 0
            return labels
        sums = np.zeros((group, d))
        counts = np.zeros(group)
        for i in range(n):
            g = labels[i]
            if g >= 0:
                counts[g] += 1
                for j in range(d):
                    sums[g, j] += X[i, j]
        for p in range(m):
            best = np.inf
            best_g = 0
            for g in range(group):
                dd = 0.0
                for j in range(d):
                    diff = W[p, j] - sums[g, j] / counts[g]
                    dd += w[j] * diff * diff
                if dd < best:
                    best = dd
                    best_g = g
            labels[ids[p]] = best_g
    return labels


@njit(cache=True)
def optimal_univariate(sorted_values: np.ndarray, k: int) -> np.ndarray:
    """Optimal univariate microaggregation (Hansen & Mukherjee 2003) of sorted values: the group of
    every sorted position. Shortest path from node 0 to node n over arcs (i, j), k <= j - i <= 2k-1,
    of length the SSE of values i..j-1; O(n k) with prefix sums. Ties: the smaller last group."""
    n = sorted_values.shape[0]
    mean = 0.0
    for i in range(n):
        mean += sorted_values[i]
    mean /= n
    s1 = np.zeros(n + 1)
    s2 = np.zeros(n + 1)
    for i in range(n):
        v = sorted_values[i] - mean
        s1[i + 1] = s1[i] + v
        s2[i + 1] = s2[i] + v * v
    best = np.full(n + 1, np.inf)
    back = np.zeros(n + 1, dtype=np.int64)
    best[0] = 0.0
    for j in range(k, n + 1):
        top = min(2 * k - 1, j)
        for size in range(k, top + 1):
            i = j - size
            if best[i] == np.inf:
                continue
            a = s1[j] - s1[i]
            sse = s2[j] - s2[i] - a * a / size
            if sse < 0.0:
                sse = 0.0
            cost = best[i] + sse
            if cost < best[j]:
                best[j] = cost
                back[j] = i
    groups = np.zeros(n, dtype=np.int64)
    j = n
    count = 0
    while j > 0:
        count += 1
        j = int(back[j])
    j = n
    g = count - 1
    while j > 0:
        i = int(back[j])
        for p in range(i, j):
            groups[p] = g
        g -= 1
        j = i
    return groups
