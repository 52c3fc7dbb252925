"""Compiled (numba) loops of the counting kernel that numpy cannot express in one linear pass.

Extending group keys by one attribute is the inner step of every count: with numpy it needs
either a table as large as the key range or a sort. Here it is one pass over the records through
a direct table (small key ranges) or an open-addressing hash table (large ranges), and the group
sizes come out of the same pass. The tables are scratch space owned by a :class:`KeyExtender` and
reused from one call to the next: only the slots a call used are reset, so a call costs O(records),
not O(key range).
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic
from numba.typed import List

_FIBONACCI = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True, nogil=True)
def _extend_direct(
    parent_keys, parent_sizes, codes, multiplicity, radix, skip_singletons, table, used, out, sizes
):  # pragma: no cover - compiled
    groups = 0
    alone = 0
    for r in range(parent_keys.shape[0]):
        parent = parent_keys[r]
        if parent < 0 or (skip_singletons and parent_sizes[parent] < 2):
            out[r] = -1
            alone += 1
            continue
        value = parent * radix + codes[r] + 1
        key = table[value]
        if key < 0:
            key = groups
            table[value] = key
            used[groups] = value
            sizes[groups] = 0
            groups += 1
        out[r] = key
        sizes[key] += multiplicity[r]
    for g in range(groups):
        table[used[g]] = -1
    return groups, alone


@njit(cache=True, nogil=True, inline="always")
def _probe(stored, value, shift, mask):  # pragma: no cover - compiled
    """Slot of ``value`` in an open-addressing table: where it is stored, or the empty slot (-1)
    where it belongs. Fibonacci hashing, linear probing."""
    slot = np.int64((np.uint64(value) * _FIBONACCI) >> shift)
    while stored[slot] != value and stored[slot] >= 0:
        slot = (slot + 1) & mask
    return slot


@njit(cache=True, nogil=True)
def _extend_hashed(
    parent_keys, parent_sizes, codes, multiplicity, radix, skip_singletons, stored, assigned, used, out, sizes
):  # pragma: no cover - compiled
    bits = 0
    while (1 << bits) < stored.shape[0]:
        bits += 1
    mask = stored.shape[0] - 1
    shift = np.uint64(64 - bits)
    groups = 0
    alone = 0
    for r in range(parent_keys.shape[0]):
        parent = parent_keys[r]
        if parent < 0 or (skip_singletons and parent_sizes[parent] < 2):
            out[r] = -1
            alone += 1
            continue
        value = np.int64(parent) * radix + codes[r] + 1
        slot = _probe(stored, value, shift, mask)
        if stored[slot] == value:
            key = assigned[slot]
        else:
            stored[slot] = value
            key = groups
            assigned[slot] = key
            used[groups] = slot
            sizes[groups] = 0
            groups += 1
        out[r] = key
        sizes[key] += multiplicity[r]
    for g in range(groups):
        stored[used[g]] = -1
    return groups, alone


@njit(cache=True, nogil=True)
def group_weight_sums(keys, weights, groups):  # pragma: no cover - compiled
    """Sum of ``weights`` per key (records with key -1 are skipped)."""
    sums = np.zeros(groups, dtype=np.float64)
    for r in range(keys.shape[0]):
        if keys[r] >= 0:
            sums[keys[r]] += weights[r]
    return sums


@njit(cache=True, nogil=True)
def accumulate(
    risk, best, top, index, factor, total, known, keys, group_inverse, alone
):  # pragma: no cover - compiled
    """Add one known set's contribution ``factor * (total - known) * inverse`` to each record's risk.

    ``inverse`` is ``group_inverse[keys[r]]``, or ``alone[r]`` for a record whose key is -1 (alone
    in its group). Keeps each record's largest contribution and its known set (first wins ties).
    """
    for r in range(risk.shape[0]):
        key = keys[r]
        inverse = alone[r] if key < 0 else group_inverse[key]
        value = factor * (total[r] - known[r]) * inverse
        risk[r] += value
        if value > best[r]:
            best[r] = value
            top[r] = index


class KeyExtender:
    """Scratch tables for extending group keys of ``n`` records one attribute at a time."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.direct_capacity = 4 * n + 1024
        self._table: np.ndarray | None = None
        self._stored: np.ndarray | None = None
        self._assigned: np.ndarray | None = None
        self._used = np.empty(n + 1, dtype=np.int64)
        self._sizes = np.empty(n + 1, dtype=np.int64)
        self._ones: np.ndarray | None = None

    def extend(
        self,
        parent_keys: np.ndarray,
        parent_sizes: np.ndarray,
        codes: np.ndarray,
        cardinality: int,
        skip_singletons: bool = False,
        multiplicity: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray, int]:
        """Keys of the attribute set plus one attribute.

        ``parent_keys`` (int32, -1 = record alone in its group and no longer tracked) and
        ``parent_sizes`` (records per parent group) describe the set; ``codes`` (int32, -1 =
        missing, a value of its own) the new attribute. With ``skip_singletons``, records alone in
        their parent group get key -1 (they stay alone in every superset). Returns the new keys
        (numbered in order of first appearance), the number of records per new group, and the
        number of elements with key -1. With ``multiplicity``, element ``r`` stands for
        ``multiplicity[r]`` records (distinct patterns of a table): sizes count records.
        """
        n = len(parent_keys)
        if n > self.n:
            raise ValueError("more records than the extender was made for")
        radix = cardinality + 1
        upper = len(parent_sizes) * radix
        out = np.empty(n, dtype=np.int32)
        if multiplicity is None:
            if self._ones is None or len(self._ones) < n:
                self._ones = np.ones(self.n, dtype=np.int64)
            multiplicity = self._ones[:n]
        if upper <= self.direct_capacity:
            if self._table is None:
                self._table = np.full(self.direct_capacity, -1, dtype=np.int32)
            groups, alone = _extend_direct(
                parent_keys,
                parent_sizes,
                codes,
                multiplicity,
                radix,
                skip_singletons,
                self._table,
                self._used,
                out,
                self._sizes,
            )
        else:
            if self._stored is None:
                slots = 1 << max(4, int(2 * self.n + 2).bit_length())
                self._stored = np.full(slots, -1, dtype=np.int64)
                self._assigned = np.empty(slots, dtype=np.int32)
            # At most as many keys as elements tracked, and these are in parent groups of two or more
            # records: when every element stands for a record at least, a table sized for them (a
            # prefix of the scratch one, whose unused slots stay empty) has fewer cache misses than
            # one sized for every element.
            tracked = n
            if skip_singletons and n and int(multiplicity.min()) >= 1:
                tracked = min(n, int(parent_sizes[parent_sizes >= 2].sum()))
            slots = 1 << max(4, int(2 * tracked + 2).bit_length())
            groups, alone = _extend_hashed(
                parent_keys,
                parent_sizes,
                codes,
                multiplicity,
                radix,
                skip_singletons,
                self._stored[:slots],
                self._assigned[:slots],
                self._used,
                out,
                self._sizes,
            )
        return out, self._sizes[:groups].copy(), alone


@njit(cache=True, nogil=True)
def densify_hashed(values):  # pragma: no cover - compiled
    """Dense keys (int32, first-appearance order) and group sizes of non-negative int64 values."""
    n = values.shape[0]
    bits = 4
    while (1 << bits) < 2 * n + 2:
        bits += 1
    slots = 1 << bits
    mask = slots - 1
    shift = np.uint64(64 - bits)
    stored = np.full(slots, -1, dtype=np.int64)
    assigned = np.empty(slots, dtype=np.int32)
    out = np.empty(n, dtype=np.int32)
    sizes = np.zeros(n + 1, dtype=np.int64)
    groups = 0
    for i in range(n):
        value = values[i]
        slot = _probe(stored, value, shift, mask)
        if stored[slot] == value:
            key = assigned[slot]
        else:
            stored[slot] = value
            key = groups
            assigned[slot] = key
            groups += 1
        out[i] = key
        sizes[key] += 1
    return out, sizes[:groups].copy()


@njit(cache=True, nogil=True)
def weighted_sum_of_codes(total, codes, per_value, factor):  # pragma: no cover - compiled
    """``total[r] += factor * per_value[codes[r]]`` (code -1, a missing value, adds nothing)."""
    for r in range(total.shape[0]):
        code = codes[r]
        if code >= 0:
            total[r] += factor * per_value[code]


@njit(cache=True, nogil=True)
def mix_codes(keys, codes, radix):  # pragma: no cover - compiled
    """``keys = keys * radix + codes + 1`` in place: one more digit of a mixed-radix key (code -1 allowed).

    The caller guarantees that the key range fits in int64.
    """
    for r in range(keys.shape[0]):
        keys[r] = keys[r] * radix + codes[r] + 1


@njit(cache=True, nogil=True)
def densify_direct(values, upper):  # pragma: no cover - compiled
    """As :func:`densify_hashed` for values below ``upper``, through a direct table."""
    n = values.shape[0]
    table = np.full(upper, -1, dtype=np.int32)
    out = np.empty(n, dtype=np.int32)
    sizes = np.zeros(n + 1, dtype=np.int64)
    groups = 0
    for i in range(n):
        key = table[values[i]]
        if key < 0:
            key = groups
            table[values[i]] = key
            groups += 1
        out[i] = key
        sizes[key] += 1
    return out, sizes[:groups].copy()


@njit(cache=True, nogil=True)
def aggregate_pairs(classes, values, counts, n_classes, n_values):  # pragma: no cover - compiled
    """Sum ``counts`` per distinct (class, value) pair, sorted by class then value.

    When the (class, value) table is small next to T it is filled directly and read in order, one pass
    each; otherwise two stable counting sorts (by value, then by class) and a merge of neighbours:
    O(T + n_classes + n_values) for T input triples.
    """
    t = classes.shape[0]
    cells = n_classes * n_values
    if cells <= 2 * t + 64:
        table = np.zeros(cells, dtype=np.float64)
        seen = np.zeros(cells, dtype=np.bool_)
        for i in range(t):
            cell = classes[i] * n_values + values[i]
            table[cell] += counts[i]
            seen[cell] = True
        m = 0
        for cell in range(cells):
            if seen[cell]:
                m += 1
        out_classes = np.empty(m, dtype=np.int64)
        out_values = np.empty(m, dtype=np.int32)
        out_counts = np.empty(m, dtype=np.float64)
        m = 0
        for cell in range(cells):
            if seen[cell]:
                out_classes[m] = cell // n_values
                out_values[m] = cell % n_values
                out_counts[m] = table[cell]
                m += 1
        return out_classes, out_values, out_counts
    by_value = np.zeros(n_values + 1, dtype=np.int64)
    for i in range(t):
        by_value[values[i] + 1] += 1
    for v in range(n_values):
        by_value[v + 1] += by_value[v]
    first = np.empty(t, dtype=np.int64)
    for i in range(t):
        first[by_value[values[i]]] = i
        by_value[values[i]] += 1
    by_class = np.zeros(n_classes + 1, dtype=np.int64)
    for i in range(t):
        by_class[classes[i] + 1] += 1
    for c in range(n_classes):
        by_class[c + 1] += by_class[c]
    order = np.empty(t, dtype=np.int64)
    for k in range(t):
        i = first[k]
        order[by_class[classes[i]]] = i
        by_class[classes[i]] += 1
    out_classes = np.empty(t, dtype=np.int64)
    out_values = np.empty(t, dtype=np.int32)
    out_counts = np.empty(t, dtype=np.float64)
    m = -1
    for k in range(t):
        i = order[k]
        if m >= 0 and out_classes[m] == classes[i] and out_values[m] == values[i]:
            out_counts[m] += counts[i]
        else:
            m += 1
            out_classes[m] = classes[i]
            out_values[m] = values[i]
            out_counts[m] = counts[i]
    return out_classes[: m + 1].copy(), out_values[: m + 1].copy(), out_counts[: m + 1].copy()


@njit(cache=True, nogil=True)
def mix_hashes(keys, hashes):  # pragma: no cover - compiled
    """Fold one column's 64-bit value hashes into running row hashes (in place, wrapping arithmetic)."""
    for r in range(keys.shape[0]):
        mixed = (np.uint64(keys[r]) ^ hashes[r]) * _FIBONACCI
        keys[r] = mixed ^ (mixed >> np.uint64(29))


@njit(cache=True, nogil=True)
def first_of_groups(keys, groups):  # pragma: no cover - compiled
    """The first record of each group of dense ``keys`` (int64; -1 for a group with no record)."""
    first = np.full(groups, -1, dtype=np.int64)
    for r in range(keys.shape[0] - 1, -1, -1):
        first[keys[r]] = r
    return first


@njit(cache=True, nogil=True)
def mix_radix(keys, tokens, radix):  # pragma: no cover - compiled
    """``keys = keys * radix + tokens`` in place (tokens in ``0 .. radix-1``; the caller guarantees
    that the key range fits in int64)."""
    for r in range(keys.shape[0]):
        keys[r] = keys[r] * radix + tokens[r]


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
def column_weight_sums(codes, column, weights, n_values):  # pragma: no cover - compiled
    """Sum of ``weights`` per value of ``codes[:, column]`` (values 0 .. n_values-1), in row order as
    ``np.bincount`` with weights, read in place (a column of a C-order array is strided)."""
    sums = np.zeros(n_values, dtype=np.float64)
    for i in range(codes.shape[0]):
        sums[codes[i, column]] += weights[i]
    return sums


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
def wildcard_pair_sums(
    patterns, sizes, order, offsets, masks, totals, radices
):  # pragma: no cover - compiled
    """The loop of :func:`sdckit.frequency.wildcard_pattern_sizes` over pairs of null masks.

    ``patterns`` (G x k codes, -1 missing) are grouped by null mask: ``order[offsets[i]:offsets[i+1]]``
    are the patterns of ``masks[i]`` in ascending order; ``sizes`` is G x m, ``totals[i]`` the column
    sums of the patterns of mask i, ``radices`` the cardinalities (their product fits in int64). For
    every pair (a, b) the patterns of b are summed in one open-addressing table keyed by their
    mixed-radix values on the attributes that neither mask misses, and looked up by the patterns of
    a. Sums are taken in the same order as the numpy version (patterns of b ascending, masks b
    ascending), so the results are identical.
    """
    groups, k = patterns.shape
    columns = sizes.shape[1]
    n_masks = masks.shape[0]
    full = (np.int64(1) << k) - 1
    result = np.zeros((groups, columns), dtype=np.float64)
    bits = 4
    while (1 << bits) < 2 * groups + 2:
        bits += 1
    slots = 1 << bits
    mask = slots - 1
    shift = np.uint64(64 - bits)
    stored = np.full(slots, -1, dtype=np.int64)
    sums = np.zeros((slots, columns), dtype=np.float64)
    used = np.empty(groups + 1, dtype=np.int64)
    for ia in range(n_masks):
        for ib in range(n_masks):
            observed = full & ~(masks[ia] | masks[ib])
            if observed == 0:
                for t in range(offsets[ia], offsets[ia + 1]):
                    r = order[t]
                    for c in range(columns):
                        result[r, c] += totals[ib, c]
                continue
            n_used = 0
            for t in range(offsets[ib], offsets[ib + 1]):
                r = order[t]
                key = np.int64(0)
                for j in range(k):
                    if (observed >> j) & 1:
                        key = key * radices[j] + patterns[r, j]
                slot = _probe(stored, key, shift, mask)
                if stored[slot] != key:
                    stored[slot] = key
                    used[n_used] = slot
                    n_used += 1
                    for c in range(columns):
                        sums[slot, c] = 0.0
                for c in range(columns):
                    sums[slot, c] += sizes[r, c]
            for t in range(offsets[ia], offsets[ia + 1]):
                r = order[t]
                key = np.int64(0)
                for j in range(k):
                    if (observed >> j) & 1:
                        key = key * radices[j] + patterns[r, j]
                slot = _probe(stored, key, shift, mask)
                if stored[slot] == key:
                    for c in range(columns):
                        result[r, c] += sums[slot, c]
            for u in range(n_used):
                stored[used[u]] = -1
    return result


@njit(cache=True, nogil=True)
def _find(values, low, high, value):  # pragma: no cover - compiled
    """Index of ``value`` in the ascending ``values[low:high]``, or -1."""
    end = high
    while low < high:
        middle = (low + high) >> 1
        if values[middle] < value:
            low = middle + 1
        else:
            high = middle
    return low if low < end and values[low] == value else -1


@njit(cache=True, nogil=True)
def coverage_join(
    t_value,
    t_low,
    t_high,
    t_leaf,
    r_value,
    r_low,
    r_high,
    r_leaf,
    r_sums,
    depth,
    cover_ptr,
    cover_labels,
    slot_base,
    n_targets,
):  # pragma: no cover - compiled
    """The loop of :func:`sdckit.frequency.coverage_pattern_sizes`: a depth-first join of two tries.

    The target trie holds the distinct target patterns (a node per distinct prefix; its value the
    slot of its attribute, 0 = null), the released trie the distinct released patterns (values: label
    ids). Node 0 of each is the root; ``*_low[g]:*_high[g]`` are the children of node g, in ascending
    value order, and ``*_leaf[g]`` is the number of the pattern of a leaf (depth ``depth``). A pair
    (target node, released node) at depth j is extended to each pair of children whose label covers
    the slot (label in ``cover_labels[cover_ptr[slot_base[j] + slot] : ...]``, ascending); pairs of
    leaves add the released pattern's sums (``r_sums``, one row per released pattern) to the target
    pattern's. Only pairs whose prefixes cover each other are visited: the cost is the number of such
    pairs over all depths, each found by a binary search in the shorter of the two lists.
    """
    columns = r_sums.shape[1]
    result = np.zeros((n_targets, columns), dtype=np.float64)
    capacity = 1024
    stack_t = np.empty(capacity, dtype=np.int64)
    stack_r = np.empty(capacity, dtype=np.int64)
    stack_d = np.empty(capacity, dtype=np.int64)
    size = 1
    stack_t[0] = 0
    stack_r[0] = 0
    stack_d[0] = 0
    while size > 0:
        size -= 1
        t = stack_t[size]
        r = stack_r[size]
        level = stack_d[size]
        r_first = r_low[r]
        r_last = r_high[r]
        n_children = r_last - r_first
        base = slot_base[level]
        last_level = level == depth - 1
        for child in range(t_low[t], t_high[t]):
            start = cover_ptr[base + t_value[child]]
            stop = cover_ptr[base + t_value[child] + 1]
            if stop == start:
                continue
            # Walk the shorter list, finding each of its entries in the other by binary search.
            by_label = stop - start <= n_children
            for i in range(stop - start if by_label else n_children):
                if by_label:
                    found = _find(r_value, r_first, r_last, cover_labels[start + i])
                    if found < 0:
                        continue
                else:
                    found = r_first + i
                    if _find(cover_labels, start, stop, r_value[found]) < 0:
                        continue
                if last_level:
                    target, released = t_leaf[child], r_leaf[found]
                    for c in range(columns):
                        result[target, c] += r_sums[released, c]
                    continue
                if size == capacity:
                    capacity *= 2
                    stack_t = _grown(stack_t, capacity)
                    stack_r = _grown(stack_r, capacity)
                    stack_d = _grown(stack_d, capacity)
                stack_t[size] = child
                stack_r[size] = found
                stack_d[size] = level + 1
                size += 1
    return result


# Text ---------------------------------------------------------------------------------------------
#
# A text is two words (little-endian), as Arrow's string views begin: the first is its length (low 32
# bits) and first four bytes; the second is its bytes 4-11 for a text of up to 12 bytes (unused bytes
# zero), a 64-bit hash of its other bytes for a longer one, which is then compared byte for byte too.
# The bytes of a longer text are read where they lie, from their address: Arrow holds them in several
# data buffers, which copying into one array would cost more than looking the texts up. The loops
# avoid data-dependent branches where they can: the lengths of a column's values vary at random from
# one record to the next, and a mispredicted branch costs more than the rest of a look-up.

_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
_LOW = np.uint64(0xFFFFFFFF)
_ONE = np.uint64(1)
_MIX_1 = np.uint64(0xFF51AFD7ED558CCD)
_MIX_2 = np.uint64(0xC4CEB9FE1A85EC53)


def _loader(bits: int, result: types.Integer):
    """An intrinsic that reads the ``bits``-bit unsigned integer at an address (an integer; one load,
    unaligned, in the machine's byte order)."""

    def load(typingctx, address):  # pragma: no cover - compiled
        if not isinstance(address, types.Integer):
            return None

        def codegen(context, builder, signature, args):
            return builder.load(builder.inttoptr(args[0], ir.IntType(bits).as_pointer()), align=1)

        return result(address), codegen

    return intrinsic(load)


_word_at = _loader(64, types.uint64)
_byte_at = _loader(8, types.uint8)


@njit(cache=True, nogil=True, inline="always")
def _middle(length):  # pragma: no cover - compiled
    """Where the second word of a text of more than 12 bytes is read (see :func:`_long_hash`)."""
    return min(12, length - 8)


@njit(cache=True, nogil=True, inline="always")
def _long_hash(address, length):  # pragma: no cover - compiled
    """Hash of bytes 4 onwards of the text of ``length`` (more than 12) bytes at ``address``: the words
    at 4, at 12 (or earlier, to end with the text) and ending with the text, overlapping where the
    text is shorter than 28 bytes, and every 8 bytes from 20 on in a longer one."""
    h = (_word_at(address + 4) ^ _FIBONACCI) * _MIX_1
    h = (h ^ _word_at(address + _middle(length))) * _MIX_2
    h = (h ^ _word_at(address + length - 8)) * _FIBONACCI
    if length > 28:  # (a test of its own: the loop's set-up costs more than the test)
        for position in range(20, length - 8, 8):
            h = (h ^ (h >> np.uint64(29)) ^ _word_at(address + position)) * _MIX_1
    return h ^ (h >> np.uint64(32))


@njit(cache=True, nogil=True, inline="always")
def _same_long(address, other, length):  # pragma: no cover - compiled
    """Whether bytes 4 onwards of the texts of ``length`` (more than 12) bytes at two addresses are the
    same, compared a word at a time as :func:`_long_hash` reads them (so that every byte is compared)."""
    middle = _middle(length)
    last = length - 8
    same = (
        (_word_at(address + 4) == _word_at(other + 4))
        & (_word_at(address + middle) == _word_at(other + middle))
        & (_word_at(address + last) == _word_at(other + last))
    )
    if length > 28:
        for b in range(20, last, 8):
            same &= _word_at(address + b) == _word_at(other + b)
    return same


@njit(cache=True, nogil=True, inline="always")
def _short_words(first, second):  # pragma: no cover - compiled
    """The two words of a text of up to 12 bytes from the 16 bytes of its string view: the bytes past
    the text masked off, whatever a producer left there (without a branch: the two shifts of the
    second mask keep each below 64 bits)."""
    length = first & _LOW
    first &= _ALL >> (np.uint64(32) - np.uint64(8) * min(length, np.uint64(4)))
    rest = np.uint64(4) * (max(length, np.uint64(4)) - np.uint64(4))
    return first, second & ~((_ALL << rest) << rest)


@njit(cache=True, nogil=True, inline="always")
def _text_slot(first, second, multiplier, shift):  # pragma: no cover - compiled
    """The home slot of a text's two words in a table of 2**(64 - shift) slots (multiplicative hashing)."""
    return (((second * _MIX_1) ^ first) * multiplier) >> shift


@njit(cache=True, nogil=True)
def _place_texts(words, starts, multiplier, shift, table):  # pragma: no cover - compiled
    """Fill an empty table with the labels (linear probing); the number of labels not in their home slot."""
    mask = np.uint64(table.shape[0] - 1)
    displaced = 0
    for j in range(words.shape[0]):
        slot = _text_slot(words[j, 0], words[j, 1], multiplier, shift)
        if table[slot, 2] != 0:
            displaced += 1
            while table[slot, 2] != 0:
                slot = (slot + _ONE) & mask
        table[slot, 0] = words[j, 0]
        table[slot, 1] = words[j, 1]
        table[slot, 2] = j + 1
        table[slot, 3] = starts[j]
    return displaced


@njit(cache=True, nogil=True)
def text_table(label_bytes, label_offsets):  # pragma: no cover - compiled
    """An open-addressing table of texts, for :func:`text_codes`.

    Label j is the UTF-8 bytes ``label_bytes[label_offsets[j]:label_offsets[j + 1]]``. Returns
    ``(table, multiplier, duplicate)``: a slot of the table (uint64, 4 words, one cache line for a
    look-up; linear probing) holds a label's two words (see above), the label + 1 (0: empty) and
    where its bytes start; the home slot of a text is :func:`_text_slot` with ``multiplier``;
    ``duplicate`` is the first label spelled like an earlier one (then the table is not to be used),
    or -1.

    A value whose label is not in its home slot costs a look-up a mispredicted branch or two, more
    than the rest of it: the table is sparse (at least 2 slots a label, and 16 up to 1,024 slots, 32
    KiB) and the multiplier the first of up to 64 (4 beyond 4,096 labels) that leaves no label out of
    its home slot, or else the one that leaves the fewest.
    """
    n = label_offsets.shape[0] - 1
    base = label_bytes.ctypes.data
    words = np.zeros((n, 2), dtype=np.uint64)
    for j in range(n):
        start = label_offsets[j]
        length = label_offsets[j + 1] - start
        first = np.uint64(length)
        second = np.uint64(0)
        for b in range(min(length, 12)):
            byte = np.uint64(label_bytes[start + b])
            if b < 4:
                first |= byte << np.uint64(32 + 8 * b)
            else:
                second |= byte << np.uint64(8 * (b - 4))
        if length > 12:
            second = _long_hash(base + start, length)
        words[j, 0] = first
        words[j, 1] = second
    bits = 3
    while (1 << bits) < 2 * n or ((1 << bits) < 16 * n and (1 << bits) < 1024):
        bits += 1
    size = 1 << bits
    shift = np.uint64(64 - bits)
    mask = np.uint64(size - 1)
    table = np.zeros((size, 4), dtype=np.uint64)
    # Duplicates: labels with the same words and, past 12 bytes, the same other bytes.
    for j in range(n):
        first = words[j, 0]
        second = words[j, 1]
        start = label_offsets[j]
        length = label_offsets[j + 1] - start
        slot = _text_slot(first, second, _FIBONACCI, shift)
        while table[slot, 2] != 0:
            if (
                table[slot, 0] == first
                and table[slot, 1] == second
                and (length <= 12 or _same_long(base + start, base + np.int64(table[slot, 3]), length))
            ):
                return table, _FIBONACCI, j
            slot = (slot + _ONE) & mask
        table[slot, 0] = first
        table[slot, 1] = second
        table[slot, 2] = j + 1
        table[slot, 3] = start
    best = _FIBONACCI
    fewest = n + 1
    candidate = _FIBONACCI
    for _ in range(64 if n <= 4096 else 4):
        multiplier = candidate | _ONE
        table[:] = 0
        displaced = _place_texts(words, label_offsets, multiplier, shift, table)
        if displaced < fewest:
            best, fewest = multiplier, displaced
            if displaced == 0:
                break
        candidate = (candidate ^ (candidate >> np.uint64(31))) * _MIX_1 + _FIBONACCI
    if fewest > 0:
        table[:] = 0
        _place_texts(words, label_offsets, best, shift, table)
    return table, best, -1


@njit(cache=True, nogil=True)
def text_codes(chunks, buffers, sizes, label_bytes, table, multiplier, out):  # pragma: no cover - compiled
    """The label of every value of a text column held as Arrow ``string_view`` arrays, by its exact
    bytes (-1: null or no label), into ``out`` (int32), one chunk after the other.

    Row c of ``chunks`` (int64) describes a chunk of ``chunks[c, 2]`` values: the address of its first
    view (``chunks[c, 0]``), of its validity bitmap (``chunks[c, 1]``, 0: no nulls) with its first
    value at bit ``chunks[c, 3]``, and its data buffers, ``chunks[c, 5]`` of them from
    ``buffers[chunks[c, 4]]`` (addresses; ``sizes`` their bytes). The caller checks that the views and
    bitmap lie within their buffers and keeps them all alive. A view is 16 bytes, two words: the
    length (low 32 bits of the first word) and either the bytes inline (up to 12) or, for a longer
    value, its first four bytes, its data buffer (low 32 bits of the second word) and its offset there
    (high 32 bits); one pointing outside its buffers is taken for no label. The labels and their table
    are those of :func:`text_table`.
    """
    base = label_bytes.ctypes.data
    mask = np.uint64(table.shape[0] - 1)
    bits = 0
    while (1 << bits) < table.shape[0]:
        bits += 1
    shift = np.uint64(64 - bits)
    position = 0
    for c in range(chunks.shape[0]):
        views = chunks[c, 0]
        validity = chunks[c, 1]
        n = chunks[c, 2]
        bit_offset = chunks[c, 3]
        first_buffer = chunks[c, 4]
        n_buffers = chunks[c, 5]
        for i in range(n):
            if validity != 0:
                bit = bit_offset + i
                if (_byte_at(validity + (bit >> 3)) >> (bit & 7)) & 1 == 0:
                    out[position + i] = -1
                    continue
            first = _word_at(views + 16 * i)
            second = _word_at(views + 16 * i + 8)
            length = np.int64(first & _LOW)
            long = length > 12
            address = 0
            if long:
                buffer = np.int64(second & _LOW)
                offset = np.int64(second >> np.uint64(32))
                if buffer >= n_buffers or offset + length > sizes[first_buffer + buffer]:
                    out[position + i] = -1
                    continue
                address = buffers[first_buffer + buffer] + offset
                second = _long_hash(address, length)
            else:
                first, second = _short_words(first, second)
            code = -1
            slot = _text_slot(first, second, multiplier, shift)
            while table[slot, 2] != 0:
                # The same length, first bytes and second word: the label (past 12 bytes, if the rest is).
                if ((table[slot, 0] == first) & (table[slot, 1] == second)) and (
                    not long or _same_long(address, base + np.int64(table[slot, 3]), length)
                ):
                    code = np.int64(table[slot, 2]) - 1
                    break
                slot = (slot + _ONE) & mask
            out[position + i] = code
        position += n


@njit(cache=True, nogil=True)
def _grown(values, capacity):  # pragma: no cover - compiled
    grown = np.empty(capacity, dtype=values.dtype)
    grown[: values.shape[0]] = values
    return grown


def warm_up() -> None:
    """Load the compiled kernels of the counts and of the combined risk from numba's cache, on a few
    values of the types real calls use. The first call of any kernel in a process also initializes
    numba's compiler and code generator (most of a second); a command calls this in a background
    thread (:func:`warm_up_in_background`) while it reads its data, so that the computation does
    not wait for it."""
    n = 4
    codes = np.array([0, 1, -1, 0], dtype=np.int32)
    ones = np.ones(n, dtype=np.int64)
    extender = KeyExtender(n)
    root_keys, root_sizes = np.zeros(n, dtype=np.int32), np.array([n], dtype=np.int64)
    keys, sizes, _ = extender.extend(root_keys, root_sizes, codes, 2, True, ones)
    extender.extend(root_keys, root_sizes, codes, 4 * extender.direct_capacity, True, ones)  # hashed
    values = np.zeros(n, dtype=np.float64)
    weighted_sum_of_codes(values, codes, np.ones(2, dtype=np.float64), 1.0)
    mixed = np.zeros(n, dtype=np.int64)
    mix_codes(mixed, codes, np.int64(3))
    densify_hashed(mixed)
    inverse = 1.0 / sizes
    group_weight_sums(keys, values, len(sizes))
    accumulate(values, values.copy(), np.zeros(n, dtype=np.int32), np.int32(0), 1.0, values, values, keys,
               inverse, values)  # fmt: skip
    label_bytes = np.frombuffer(b"ab", dtype=np.uint8)  # read-only, as Hierarchy makes it
    table, multiplier, _ = text_table(label_bytes, np.array([0, 1, 2], dtype=np.int64))
    none = np.zeros(0, dtype=np.int64)
    text_codes(none.reshape(0, 6), none, none, label_bytes, table, np.uint64(multiplier), codes[:0])


_warming: list[object] = []


def warm_up_in_background() -> None:
    """Run :func:`warm_up` once per process in a daemon thread (the kernels release no lock the
    caller needs: numba serializes loading, and a call made meanwhile waits for it)."""
    if _warming:
        return
    import threading

    thread = threading.Thread(target=warm_up, name="sdckit-kernels", daemon=True)
    _warming.append(thread)
    thread.start()


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
    """One node of :func:`bounded_walk_k`: evaluated as ``_Search._evaluate_k`` does (rolled up from
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
    """The loop of ``recoding._bounded_search`` without suppression, under k-anonymity alone with
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
