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


@njit(cache=True, nogil=True)
def numeric_centroid(centroid, sums, m, is_ordinal, ordinal_card, ord_counts):  # pragma: no cover
    """Put in ``centroid`` the centroid of ``m`` remaining records over the numeric and ordinal
    attributes: the mean (``sums / m``) of a numeric one, the lower median of an ordinal one's codes
    (from its counts ``ord_counts``)."""
    for j in range(centroid.shape[0]):
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
        numeric_centroid(centroid, sums, m, is_ordinal, ordinal_card, ord_counts)
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


#: The number of records from which mdav_generic uses the k-d tree of :mod:`._mdav_tree` (below,
#: the scan is as fast or faster).
_TREE_FROM = 20_000


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
    the k-d tree of :func:`sdckit.anonymize._mdav_tree.mdav_tree` (the same groups, faster on large
    files); otherwise by full scans (faster below about 20,000 records of 13 attributes, measured in
    bench_masking.py)."""
    if nominal.shape[1] == 0 and X.shape[0] >= _TREE_FROM:
        from sdckit.anonymize._mdav_tree import mdav_tree  # it imports this module's helpers

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
