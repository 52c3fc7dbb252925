"""Compiled (numba) loops of the counting kernel that numpy cannot express in one linear pass.

Extending group keys by one attribute is the inner step of every count: with numpy it needs
either a table as large as the key range or a sort. Here it is one pass over the records through
a direct table (small key ranges) or an open-addressing hash table (large ranges), and the group
sizes come out of the same pass. The tables are scratch space owned by a :class:`KeyExtender` and
reused from one call to the next: only the slots a call used are reset, so a call costs O(records),
not O(key range).

:mod:`sdckit.frequency` is the seam through which the rest of the package counts; the lattice walk of
full-domain generalization (:mod:`sdckit._kernels_lattice`) builds on :func:`densify_direct` and
:func:`densify_hashed`, and the texts are hashed in :mod:`sdckit._kernels_text`.
"""

from __future__ import annotations

import numpy as np

from sdckit._kernels_text import text_codes, text_table
from sdckit._numba import njit

_FIBONACCI = np.uint64(0x9E3779B97F4A7C15)
# Partitions of 2**16 consecutive (parent, value) pairs: a direct table of one (256 KiB) stays in the
# processor's cache. Worth it from this many tracked records on (below, a hash table fits the cache).
PARTITION_BITS = 16
PARTITIONED_FROM = 1 << 15
# (parent, value) pairs counted in a table (:func:`_extend_counted`) up to this many, and up to this
# many per record (the table is cleared and read once per extension).
COUNTED_UP_TO = 1 << 22
COUNTED_PER_RECORD = 4
# Extra records of the elements standing for more than one are added one element at a time while at
# most one element in this many has some.
HEAVY_SHARE = 8
_NONE = np.zeros(0, dtype=np.int64)


@njit(cache=True, nogil=True)
def _extend_direct(
    parent_keys, parent_sizes, codes, multiplicity, unit, radix, skip_singletons, table, used, out, sizes
):  # pragma: no cover - compiled
    """Keys of the attribute set plus one attribute through a direct table of the (parent, value)
    pairs; ``unit``: every multiplicity is 1 (not read)."""
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
        sizes[key] += 1 if unit else multiplicity[r]
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
def _extend_counted(
    parent_keys, parent_sizes, codes, multiplicity, unit, heavy, radix, counts, out, sizes
):  # pragma: no cover - compiled
    """Keys of the attribute set plus one attribute, as ``KeyExtender.extend`` with ``skip_singletons``
    and ``any_order`` (-1 for a record alone in its parent's group), when the (parent, value) pairs
    range over few enough values for a table of counts: one pass counts the records of each pair and
    writes the pair as the record's provisional key, a pass over the table numbers the pairs present
    (in their order: parent, then value), and a pass over the records replaces each pair by its
    number. No look-up of a key stands between a record and the next one's, which makes it about
    twice as fast as :func:`_extend_direct`'s first-appearance numbering on small tables. ``counts``
    (int32: a quarter less memory traffic than int64 on tables beyond the processor's cache) holds at
    least the pairs' range; the caller checks that no count reaches 2**31.

    ``unit``: every multiplicity is 1 (not read); else, with ``heavy`` (the elements whose
    multiplicity is above 1; every multiplicity is at least 1), each record is counted once and the
    few heavy ones have their extra records added afterwards; with neither, multiplicities are read.
    Returns the number of groups and of records with key -1."""
    upper = parent_sizes.shape[0] * radix
    for v in range(upper):
        counts[v] = 0
    alone = 0
    once = unit or heavy.shape[0] > 0
    for r in range(parent_keys.shape[0]):
        parent = parent_keys[r]
        if parent < 0 or parent_sizes[parent] < 2:
            out[r] = -1
            alone += 1
            continue
        value = parent * radix + codes[r] + 1
        out[r] = value
        counts[value] += 1 if once else multiplicity[r]
    if not unit:
        for h in range(heavy.shape[0]):
            value = out[heavy[h]]
            if value >= 0:
                counts[value] += multiplicity[heavy[h]] - 1
    groups = 0
    for v in range(upper):
        count = counts[v]
        if count > 0:
            sizes[groups] = count
            counts[v] = groups
            groups += 1
    for r in range(parent_keys.shape[0]):
        value = out[r]
        if value >= 0:
            out[r] = counts[value]
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


@njit(cache=True, nogil=True)
def _extend_partitioned(
    parent_keys,
    parent_sizes,
    codes,
    multiplicity,
    unit,
    radix,
    shift,
    counts,
    spread,
    table,
    used,
    out,
    sizes,
):  # pragma: no cover - compiled
    """Keys of the attribute set plus one attribute, as ``KeyExtender.extend`` with ``skip_singletons``
    (-1 for a record alone in its parent's group), when the pairs (parent key, code) range over too
    many values for a direct table: the tracked records are first spread, stably, over partitions of
    ``2**shift`` consecutive values, then each partition is grouped through a direct table of that
    size, small enough to stay in the processor's cache (a hash table as large as the records misses
    the cache on nearly every probe). Groups are numbered partition by partition (within one, in
    record order); ``counts`` has one slot per partition and one more; ``spread`` holds a record and
    its value within the partition in one word; ``unit``: every multiplicity is 1. Returns the number
    of groups and of records with key -1."""
    n = parent_keys.shape[0]
    parts = counts.shape[0] - 1
    for i in range(parts + 1):
        counts[i] = 0
    alone = 0
    for r in range(n):
        parent = parent_keys[r]
        if parent < 0 or parent_sizes[parent] < 2:
            out[r] = -1
            alone += 1
        else:
            out[r] = 0
            counts[((np.int64(parent) * radix + codes[r] + 1) >> shift) + 1] += 1
    for i in range(parts):
        counts[i + 1] += counts[i]
    low = (np.int64(1) << shift) - 1
    for r in range(n):
        if out[r] < 0:
            continue
        value = np.int64(parent_keys[r]) * radix + codes[r] + 1
        part = value >> shift
        slot = counts[part]
        counts[part] = slot + 1
        spread[slot] = (np.int64(r) << shift) | (value & low)
    groups = 0
    start = 0
    for part in range(parts):
        end = counts[part]
        first = groups
        for t in range(start, end):
            word = spread[t]
            value = word & low
            r = word >> shift
            key = table[value]
            if key < 0:
                key = groups
                table[value] = key
                used[groups] = value
                sizes[key] = 0
                groups += 1
            out[r] = key
            sizes[key] += 1 if unit else multiplicity[r]
        for g in range(first, groups):
            table[used[g]] = -1
        start = end
    return groups, alone


@njit(cache=True, nogil=True)
def accumulate_known(
    risk, best, top, index, factor, total, parent_known, consequence, add, known, keys, group_inverse, alone
):  # pragma: no cover - compiled
    """:func:`accumulate` with the known set's weight computed in the same pass: ``known =
    parent_known + consequence`` (written to ``known``) when ``add``, else ``parent_known`` (an
    attribute that weighs nothing), instead of a new array per known set."""
    for r in range(risk.shape[0]):
        if add:
            weight = parent_known[r] + consequence[r]
            known[r] = weight
        else:
            weight = parent_known[r]
        key = keys[r]
        inverse = alone[r] if key < 0 else group_inverse[key]
        value = factor * (total[r] - weight) * inverse
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
        self._spread: tuple[np.ndarray, ...] | None = None
        self._counts: np.ndarray | None = None
        self._unit_of: tuple[np.ndarray, bool, bool] | None = None
        self._count_table: np.ndarray | None = None
        self._heavy_of: tuple[np.ndarray, np.ndarray, bool] | None = None

    def extend(
        self,
        parent_keys: np.ndarray,
        parent_sizes: np.ndarray,
        codes: np.ndarray,
        cardinality: int,
        skip_singletons: bool = False,
        multiplicity: np.ndarray | None = None,
        any_order: bool = False,
    ) -> tuple[np.ndarray, np.ndarray, int]:
        """Keys of the attribute set plus one attribute.

        ``parent_keys`` (int32, -1 = record alone in its group and no longer tracked) and
        ``parent_sizes`` (records per parent group) describe the set; ``codes`` (int32, -1 =
        missing, a value of its own) the new attribute. With ``skip_singletons``, records alone in
        their parent group get key -1 (they stay alone in every superset). Returns the new keys
        (numbered in order of first appearance), the number of records per new group, and the
        number of elements with key -1. With ``multiplicity``, element ``r`` stands for
        ``multiplicity[r]`` records (distinct patterns of a table): sizes count records. With
        ``any_order`` (and ``skip_singletons``) the groups may be numbered in another order (the
        same groups, the same sizes), which allows a faster grouping of many records whose
        (parent, value) pairs are too many for a direct table (:func:`_extend_partitioned`).
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
            unit = positive = True
        else:
            unit, positive = self._unit(multiplicity)
        if any_order and skip_singletons and self._countable(multiplicity, unit, positive, upper, n):
            groups, alone = self._counted(
                parent_keys, parent_sizes, codes, multiplicity, unit, radix, upper, out
            )
        elif upper <= self.direct_capacity:
            if self._table is None:
                self._table = np.full(self.direct_capacity, -1, dtype=np.int32)
            groups, alone = _extend_direct(
                parent_keys,
                parent_sizes,
                codes,
                multiplicity,
                unit,
                radix,
                skip_singletons,
                self._table,
                self._used,
                out,
                self._sizes,
            )
        else:
            if self._stored is None or self._assigned is None:  # allocated together, once
                slots = 1 << max(4, int(2 * self.n + 2).bit_length())
                self._stored = np.full(slots, -1, dtype=np.int64)
                self._assigned = np.empty(slots, dtype=np.int32)
            # At most as many keys as elements tracked, and these are in parent groups of two or more
            # records: when every element stands for a record at least, a table sized for them (a
            # prefix of the scratch one, whose unused slots stay empty) has fewer cache misses than
            # one sized for every element.
            tracked = n
            if skip_singletons and n and positive:
                tracked = min(n, int(parent_sizes[parent_sizes >= 2].sum()))
            parts = (upper >> PARTITION_BITS) + 1
            if any_order and skip_singletons and tracked >= PARTITIONED_FROM and parts <= tracked // 2:
                groups, alone = self._partitioned(
                    parent_keys, parent_sizes, codes, multiplicity, unit, radix, parts, out
                )
                return out, self._sizes[:groups].copy(), alone
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

    def _countable(self, multiplicity: np.ndarray, unit: bool, positive: bool, upper: int, n: int) -> bool:
        """Whether the (parent, value) pairs of ``n`` elements, ``upper`` at most, are grouped through
        a table of counts (:func:`_extend_counted`)."""
        return (
            positive
            and upper <= COUNTED_UP_TO
            and upper <= self.direct_capacity
            and upper <= COUNTED_PER_RECORD * n
            and self._heavy(multiplicity, unit)[1]
        )

    def extend_at(
        self,
        parent_keys: np.ndarray,
        parent_sizes: np.ndarray,
        codes: np.ndarray,
        cardinality: int,
        skip_singletons: bool,
        multiplicity: np.ndarray,
        active: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray, int]:
        """:meth:`extend` with ``any_order`` (when ``skip_singletons``), but the new keys of the
        elements ``active`` (int32) only, in its order: what a set no other set extends needs for
        its contributions. The same groups and sizes; through a table of counts the pass that writes
        keys reads the active elements only."""
        n = len(parent_keys)
        radix = cardinality + 1
        upper = len(parent_sizes) * radix
        unit, positive = self._unit(multiplicity)
        if n <= self.n and skip_singletons and self._countable(multiplicity, unit, positive, upper, n):
            out = np.empty(len(active), dtype=np.int32)
            self._ensure_count_table(upper)
            groups, alone = _extend_counted_at(
                parent_keys,
                parent_sizes,
                codes,
                multiplicity,
                unit,
                self._heavy(multiplicity, unit)[0],
                np.int64(radix),
                self._count_table,
                active,
                out,
                self._sizes,
            )
            return out, self._sizes[:groups].copy(), alone
        keys, sizes, alone = self.extend(
            parent_keys, parent_sizes, codes, cardinality, skip_singletons, multiplicity, skip_singletons
        )
        return keys[active], sizes, alone

    def _ensure_count_table(self, upper: int) -> None:
        if self._count_table is None or len(self._count_table) < upper:
            self._count_table = np.empty(max(upper, min(self.direct_capacity, COUNTED_UP_TO)), dtype=np.int32)

    def _unit(self, multiplicity: np.ndarray) -> tuple[bool, bool]:
        """Whether every element stands for one record, and whether each stands for one at least
        (remembered for the last array asked about: a walk passes the same array every time)."""
        if self._unit_of is None or self._unit_of[0] is not multiplicity:
            low = int(multiplicity.min()) if len(multiplicity) else 1
            unit = low == 1 == (int(multiplicity.max()) if len(multiplicity) else 1)
            self._unit_of = (multiplicity, unit, low >= 1)
        return self._unit_of[1], self._unit_of[2]

    def _counted(
        self,
        parent_keys: np.ndarray,
        parent_sizes: np.ndarray,
        codes: np.ndarray,
        multiplicity: np.ndarray,
        unit: bool,
        radix: int,
        upper: int,
        out: np.ndarray,
    ) -> tuple[int, int]:
        self._ensure_count_table(upper)
        return _extend_counted(
            parent_keys,
            parent_sizes,
            codes,
            multiplicity,
            unit,
            self._heavy(multiplicity, unit)[0],
            np.int64(radix),
            self._count_table,
            out,
            self._sizes,
        )

    def _heavy(self, multiplicity: np.ndarray, unit: bool) -> tuple[np.ndarray, bool]:
        """The elements whose multiplicity is above 1, when they are few enough that adding their
        extra records after a count of one per element costs less than reading every multiplicity
        (else none: the multiplicities are read), and whether every count fits the table of counts
        (int32: fewer than 2**31 records in all); remembered for the last array asked about."""
        if unit:
            return _NONE, len(multiplicity) < 2**31
        if self._heavy_of is None or self._heavy_of[0] is not multiplicity:
            heavy = np.flatnonzero(multiplicity > 1)
            few = len(heavy) * HEAVY_SHARE <= len(multiplicity)
            fits = int(multiplicity.sum()) < 2**31
            self._heavy_of = (multiplicity, heavy if few else _NONE, fits)
        return self._heavy_of[1], self._heavy_of[2]

    def _partitioned(
        self,
        parent_keys: np.ndarray,
        parent_sizes: np.ndarray,
        codes: np.ndarray,
        multiplicity: np.ndarray,
        unit: bool,
        radix: int,
        parts: int,
        out: np.ndarray,
    ) -> tuple[int, int]:
        if self._spread is None:  # allocated together, once
            self._spread = (
                np.empty(self.n, dtype=np.int64),
                np.full(1 << PARTITION_BITS, -1, dtype=np.int32),
            )
        if self._counts is None or len(self._counts) < parts + 1:
            self._counts = np.empty(parts + 1, dtype=np.int64)
        spread, table = self._spread
        return _extend_partitioned(
            parent_keys,
            parent_sizes,
            codes,
            multiplicity,
            unit,
            np.int64(radix),
            np.int64(PARTITION_BITS),
            self._counts[: parts + 1],
            spread,
            table,
            self._used,
            out,
            self._sizes,
        )


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
def column_weight_sums(codes, column, weights, n_values):  # pragma: no cover - compiled
    """Sum of ``weights`` per value of ``codes[:, column]`` (values 0 .. n_values-1), in row order as
    ``np.bincount`` with weights, read in place (a column of a C-order array is strided)."""
    sums = np.zeros(n_values, dtype=np.float64)
    for i in range(codes.shape[0]):
        sums[codes[i, column]] += weights[i]
    return sums


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


@njit(cache=True, nogil=True)
def _grown(values, capacity):  # pragma: no cover - compiled
    grown = np.empty(capacity, dtype=values.dtype)
    grown[: values.shape[0]] = values
    return grown


@njit(cache=True, nogil=True)
def accumulate_known_at(
    risk, best, top, index, factor, total, parent_known, consequence, add, known, active, keys, group_inverse,
    alone,
):  # fmt: skip  # pragma: no cover - compiled
    """:func:`accumulate_known` for the elements ``active`` (int32, ascending) of ``keys`` only: every
    other argument that has one entry per element (``risk``, ``best``, ``top``, ``total``,
    ``parent_known``, ``consequence``, ``known``, ``alone``) has one per active element instead, in
    the order of ``active``. Each active element receives the same additions as from
    :func:`accumulate_known`; the records no contribution can change are not read at all."""
    for i in range(active.shape[0]):
        if add:
            weight = parent_known[i] + consequence[i]
            known[i] = weight
        else:
            weight = parent_known[i]
        key = keys[active[i]]
        inverse = alone[i] if key < 0 else group_inverse[key]
        value = factor * (total[i] - weight) * inverse
        risk[i] += value
        if value > best[i]:
            best[i] = value
            top[i] = index


@njit(cache=True, nogil=True)
def _extend_counted_at(
    parent_keys, parent_sizes, codes, multiplicity, unit, heavy, radix, counts, active, out, sizes
):  # pragma: no cover - compiled
    """:func:`_extend_counted` writing the keys of the elements ``active`` only, ``out[i]`` that of
    element ``active[i]``: the same groups, sizes and numbering. The count pass writes no provisional
    key; the pass that gives keys reads the parent key and the code of the active elements again."""
    upper = parent_sizes.shape[0] * radix
    for v in range(upper):
        counts[v] = 0
    alone = 0
    once = unit or heavy.shape[0] > 0
    for r in range(parent_keys.shape[0]):
        parent = parent_keys[r]
        if parent < 0 or parent_sizes[parent] < 2:
            alone += 1
            continue
        counts[parent * radix + codes[r] + 1] += 1 if once else multiplicity[r]
    if not unit:
        for h in range(heavy.shape[0]):
            r = heavy[h]
            parent = parent_keys[r]
            if parent >= 0 and parent_sizes[parent] >= 2:
                counts[parent * radix + codes[r] + 1] += multiplicity[r] - 1
    groups = 0
    for v in range(upper):
        count = counts[v]
        if count > 0:
            sizes[groups] = count
            counts[v] = groups
            groups += 1
    for i in range(active.shape[0]):
        r = active[i]
        parent = parent_keys[r]
        if parent < 0 or parent_sizes[parent] < 2:
            out[i] = -1
        else:
            out[i] = counts[parent * radix + codes[r] + 1]
    return groups, alone


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
    extender.extend(root_keys, root_sizes, codes, 2, True, ones, any_order=True)  # counted
    extender.extend_at(root_keys, root_sizes, codes, 2, True, ones, np.arange(n, dtype=np.int32))
    values = np.zeros(n, dtype=np.float64)
    weighted_sum_of_codes(values, codes, np.ones(2, dtype=np.float64), 1.0)
    mixed = np.zeros(n, dtype=np.int64)
    mix_codes(mixed, codes, np.int64(3))
    densify_hashed(mixed)
    inverse = 1.0 / sizes
    group_weight_sums(keys, values, len(sizes))
    accumulate(values, values.copy(), np.zeros(n, dtype=np.int32), np.int32(0), 1.0, values, values, keys,
               inverse, values)  # fmt: skip
    accumulate_known(values, values.copy(), np.zeros(n, dtype=np.int32), np.int32(0), 1.0, values, values,
                     values, True, values.copy(), keys, inverse, values)  # fmt: skip
    every = np.arange(n, dtype=np.int32)
    accumulate_known_at(values, values.copy(), np.zeros(n, dtype=np.int32), np.int32(0), 1.0, values, values,
                        values, True, values.copy(), every, keys, inverse, values)  # fmt: skip
    extender._partitioned(root_keys, root_sizes, codes, ones, True, 3, 1, np.empty(n, dtype=np.int32))
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
