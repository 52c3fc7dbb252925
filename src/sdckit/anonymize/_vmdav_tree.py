"""V-MDAV from a k-d tree with deletion (issue 35): the groups of
:func:`sdckit.anonymize._microaggregation_kernels.vmdav`, record for record, without a full pass over
the remaining records per step.

The scan (``vmdav``) reads every remaining record once for the farthest from the centroid, once for the
k-1 nearest of the seed, and twice per extension step (the distance ``d_out`` of the candidate ``e_in``
to the nearest other remaining record, and the update of every record's distance to the group): O(n^2)
in all. Here:

* the centroid of all records never moves, so the records are sorted once by their distance to it
  (farthest first, ties by the smaller index, as ``_better_far``) and each group's seed is the first
  record of that order not yet grouped;
* the k-1 nearest of the seed are the k-d tree's nearest query of :mod:`._mdav_tree` (the same
  (distance, index) order as ``_insert_near`` in the scan, which keeps the k-1 smallest by (distance,
  index) whatever the order of the records it reads, so the compact order of the scan does not matter);
  the query asks for k, and the k-th is the seed's nearest remaining record once the group is formed;
* ``e_in`` is the remaining record of least distance to the group (ties: the smaller index). The scan
  keeps ``mind``, every record's least distance to a member; here every member keeps its nearest
  remaining record (a 1-NN query, ties by index) and ``e_in`` is the best of those by (distance,
  index): the same record, since a record at the least distance ``D`` from the group is at ``D`` from
  some member, whose nearest is then at ``D`` too with an index no larger. A member's nearest stays
  valid until that record is taken (removals only lengthen the others), so only the members whose
  nearest was ``e_in`` ask again;
* ``d_out`` is the nearest query of ``e_in`` skipping ``e_in`` itself; once ``e_in`` joins, that record
  is its nearest as a member. The query is skipped when ``e_in``'s distance to another member's
  nearest record (an upper bound of ``d_out``, computed as the scan would) already fails the test:
  ``sqrt`` and the product by gamma are monotone in floating point, so ``d_out`` fails it too;
* every 1-NN query (``_nearest1``) starts from a known remaining record and its distance as the
  first bound, so that the walk prunes from its first node.

Every distance is computed as the scan computes it (``_row_distance``: ``0.0 + w_0 d_0 d_0 + w_1 d_1
d_1 ...`` with ``d_j = record_j - point_j``, the order of ``_distance_to`` without nominal codes), so
equal and nearly equal distances compare as they do in the scan; the tree skips a node only when its
bound proves that no record of it can win (see :mod:`._mdav_tree`). Fewer than k records left at the end
join the group of nearest centroid, with the scan's operations.
"""

from __future__ import annotations

import numpy as np

from sdckit._numba import njit
from sdckit.anonymize._mdav_tree import (
    _LEAF_SIZE,
    _near_bounds,
    _row_distance,
    _tree_nearest,
    _tree_remove,
    _tree_remove_many,
    tree_index,
)
from sdckit.anonymize._microaggregation_kernels import vmdav

#: The number of records from which :func:`vmdav_groups_kernel` uses the k-d tree (below, the scan is
#: as fast or faster; measured in benchmarks/_masking_microaggregation.py).
VMDAV_TREE_FROM = 5_000


@njit(cache=True, nogil=True)
def _nearest1(X, w, tree, Zr, slack, record, skip, best, best_id, stack, bounds):
    """The remaining record nearest to ``record`` other than ``skip`` (ties: the smaller index), as
    (distance, index), starting from the candidate (``best``, ``best_id``): a remaining record other
    than ``skip`` and its distance to ``record`` computed as below, or (inf, n). The walk of
    :func:`._mdav_tree._tree_nearest` for one neighbour (a node is skipped when its bound is strictly
    above the best), with the candidate's distance as the first bound."""
    P, pid, slot_of, start, cnt, leaf_of, lo, hi, ctr, cdist, rad, rot, first_leaf = tree
    zlo = rot[2]
    zhi = rot[3]
    q = X[record]
    zq = Zr[record]
    top = 0
    if cnt[0] > 0:
        stack[0] = 0
        bounds[0] = 0.0
        top = 1
    while top > 0:
        top -= 1
        node = stack[top]
        if bounds[top] > best:
            continue
        if node >= first_leaf:
            s = start[node]
            for t in range(s, s + cnt[node]):
                i = pid[t]
                if i == skip:
                    continue
                dd = _row_distance(P, t, q, w)
                if dd < best or (dd == best and i < best_id):
                    best = dd
                    best_id = i
            continue
        a = 2 * node + 1
        b = a + 1
        ba = _near_bounds(lo, hi, zlo, zhi, a, q, zq, w, slack) if cnt[a] > 0 else np.inf
        bb = _near_bounds(lo, hi, zlo, zhi, b, q, zq, w, slack) if cnt[b] > 0 else np.inf
        if ba < bb:  # push the nearer child last, so that it is visited first
            a, b = b, a
            ba, bb = bb, ba
        if cnt[a] > 0 and ba <= best:
            stack[top] = a
            bounds[top] = ba
            top += 1
        if cnt[b] > 0 and bb <= best:
            stack[top] = b
            bounds[top] = bb
            top += 1
    return best, best_id


@njit(cache=True, nogil=True)
def _take(w, tree, record, labels, group) -> None:
    """Label ``record`` with ``group`` and take it out of the tree."""
    P, pid, slot_of, start, cnt, leaf_of, lo, hi, ctr, cdist, rad, rot, first_leaf = tree
    labels[record] = group
    _tree_remove(P, w, pid, slot_of, start, cnt, leaf_of, lo, hi, ctr, cdist, rad, rot, record)


@njit(cache=True, nogil=True)
def _leftover(X, w, labels, group) -> None:
    """The records left ungrouped (label -1, fewer than k) join the group of nearest centroid (ties:
    the earlier group), with the scan's operations."""
    n, d = X.shape
    sums = np.zeros((group, d))
    counts = np.zeros(group)
    for i in range(n):
        g = labels[i]
        if g >= 0:
            counts[g] += 1
            for j in range(d):
                sums[g, j] += X[i, j]
    for i in range(n):
        if labels[i] >= 0:
            continue
        best = np.inf
        best_g = 0
        for g in range(group):
            dd = 0.0
            for j in range(d):
                diff = X[i, j] - sums[g, j] / counts[g]
                dd += w[j] * diff * diff
            if dd < best:
                best = dd
                best_g = g
        labels[i] = best_g


@njit(cache=True, nogil=True)
def vmdav_tree(X: np.ndarray, w: np.ndarray, k: int, gamma: float) -> np.ndarray:
    """V-MDAV (SPEC §4.2) from a k-d tree: the groups of :func:`vmdav` record for record (same
    centroid, same distances, same ties, same leftover assignment), in O(n log n)-like time on data
    of low intrinsic dimension instead of O(n^2). Needs k >= 1."""
    n, d = X.shape
    labels = np.full(n, -1, dtype=np.int64)
    if n < k:  # one group (the callers refuse n < k)
        labels[:] = 0
        return labels
    centroid = np.zeros(d)
    for j in range(d):
        s = 0.0
        for p in range(n):
            s += X[p, j]
        centroid[j] = s / n
    far = np.empty(n)
    for i in range(n):
        far[i] = -_row_distance(X, i, centroid, w)
    order = np.argsort(far, kind="mergesort")  # farthest first, ties by index (stable)
    index = tree_index(X, w, _LEAF_SIZE)
    P, pid, slot_of, start, cnt, leaf_of, lo, hi, ctr, cdist, rad, rot, first_leaf = index[:13]
    Zr, slack = index[13], index[17]
    tree = (P, pid, slot_of, start, cnt, leaf_of, lo, hi, ctr, cdist, rad, rot, first_leaf)
    stack = np.zeros(256, dtype=np.int64)
    bounds = np.zeros(256)
    # the seed's k nearest: the first k-1 join it, the k-th is its nearest among the records left
    kd = np.zeros(k)
    ki = np.zeros(k, dtype=np.int64)
    kp = np.zeros(k, dtype=np.int64)
    members = np.zeros(2 * k, dtype=np.int64)
    near_d = np.zeros(2 * k)
    near_i = np.zeros(2 * k, dtype=np.int64)
    m = n
    head = 0
    group = 0
    while m >= k:
        while labels[order[head]] >= 0:
            head += 1
        seed = order[head]
        found = _tree_nearest(
            P,
            w,
            pid,
            start,
            cnt,
            lo,
            hi,
            first_leaf,
            rot,
            X[seed],
            Zr[seed],
            slack,
            seed,
            kd,
            ki,
            kp,
            stack,
            bounds,
        )
        members[0] = seed
        for q in range(k - 1):
            members[q + 1] = ki[q]
        size = k
        for q in range(k):
            labels[members[q]] = group
        _tree_remove_many(P, w, pid, slot_of, start, cnt, leaf_of, lo, hi, ctr, cdist, rad, rot, members[:k])
        m -= k
        if m > 0:
            near_d[0] = kd[k - 1] if found == k else np.inf
            near_i[0] = ki[k - 1] if found == k else n
            after = ki[k - 1]  # a remaining record near every member: the first bound of their queries
            for q in range(1, k):
                near_d[q], near_i[q] = _nearest1(
                    X,
                    w,
                    tree,
                    Zr,
                    slack,
                    members[q],
                    -1,
                    _row_distance(X, after, X[members[q]], w),
                    after,
                    stack,
                    bounds,
                )
        while size < 2 * k - 1 and m > 0:
            qin = 0
            for q in range(1, size):
                if near_d[q] < near_d[qin] or (near_d[q] == near_d[qin] and near_i[q] < near_i[qin]):
                    qin = q
            e_in = near_i[qin]
            d_in = np.sqrt(near_d[qin])
            # d_out is at most e_in's distance to another member's nearest (computed as the scan
            # would): if even that fails the test, so does d_out (sqrt and the product are monotone)
            known = np.inf
            known_id = n
            for q in range(size):
                i = near_i[q]
                if i != e_in and i < n:
                    dd = _row_distance(X, i, X[e_in], w)
                    if dd < known or (dd == known and i < known_id):
                        known = dd
                        known_id = i
            if not d_in < gamma * np.sqrt(known):
                break
            out_d, out_i = _nearest1(X, w, tree, Zr, slack, e_in, e_in, known, known_id, stack, bounds)
            d_out = np.sqrt(out_d)
            if not d_in < gamma * d_out:
                break
            members[size] = e_in
            near_d[size] = out_d
            near_i[size] = out_i
            size += 1
            _take(w, tree, e_in, labels, group)
            m -= 1
            if m == 0:
                break
            for q in range(size - 1):
                if near_i[q] == e_in:  # out_i remains: the first bound
                    first = _row_distance(X, out_i, X[members[q]], w) if out_i < n else np.inf
                    near_d[q], near_i[q] = _nearest1(
                        X, w, tree, Zr, slack, members[q], -1, first, out_i, stack, bounds
                    )
        group += 1
    if m > 0:
        _leftover(X, w, labels, group)
    return labels


def vmdav_auto(X: np.ndarray, w: np.ndarray, k: int, gamma: float) -> np.ndarray:
    """V-MDAV's group labels (arguments of :func:`vmdav`): from ``VMDAV_TREE_FROM`` records on, from
    the k-d tree (:func:`vmdav_tree`, the same groups, faster on large files); below, by full scans."""
    if X.shape[0] >= VMDAV_TREE_FROM:
        return vmdav_tree(X, w, k, gamma)
    return vmdav(X, w, k, gamma)
