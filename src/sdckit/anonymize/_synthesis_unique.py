"""Synthetic records that single out a training record, and the rounds of drawing again the records a
check rejects (issue 36).

**The attack this answers.** anonymeter's multivariate singling-out attack (Giomi et al. 2023, after
Cohen & Nissim 2020) takes a synthetic record and ``n_cols`` (3) of its attributes and builds the
predicate: a category *equal* to the record's, a number *at least* the record's value when it lies
above the median (of the synthetic data) and *at most* it otherwise — towards the tail, where few
records lie —, a missing value *missing*. The predicate succeeds when it holds for exactly one
(deduplicated) original record. On Adult, CART copies rare combinations of three attributes from its
training records, so a predicate that isolates a synthetic record isolates a training record far more
often than it isolates a record of a held-out control sample.

**The check.** A record ``r`` and a set ``S`` of at most ``k`` of the released attributes define the
predicate ``P(r, S)`` above, with the median of the training values (present ones) in place of the
synthetic median. ``r`` **singles out** a training record when some ``P(r, S)``, ``1 ≤ |S| ≤ k``, holds
for exactly one distinct training record (identical training records count once, as the attack
deduplicates). The synthesizer draws such a record again, so that no predicate of at most ``k``
attributes built from a released record isolates a training record: the attack's predicates then match
no training record or several.

**Counting.** Per set ``S`` (there are ``C(p, 1) + … + C(p, k)`` of ``p`` attributes, e.g. 129 for 9
attributes and ``k`` = 3), the distinct training records are sorted once by a key — the categories of
``S`` (missing as their own code) and the missing indicators of its numbers, in mixed radix (factorized
when it would overflow) — then by the rank of the value of the first number of ``S``. A record's count
is the difference of two binary searches (its key and the range of that value towards the tail); with
a second number in ``S`` a compiled kernel scans that range, stopping at two records. The sorted keys
are kept for the rounds of rejection (up to ``CACHE_ENTRIES`` of them).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from itertools import combinations
from typing import Any

import numpy as np

from sdckit._numba import njit

#: Sorted training keys kept between rounds (entries: sets × distinct training records).
CACHE_ENTRIES = 1 << 24

#: The largest key before it is factorized (the next radix still fits in int64).
_KEY_LIMIT = 1 << 62


@njit(cache=True, nogil=True)
def _count_in_ranges(
    low: np.ndarray,
    high: np.ndarray,
    train_values: np.ndarray,
    query_values: np.ndarray,
    query_up: np.ndarray,
    cap: int,
) -> np.ndarray:
    """For every query ``i``, the training rows ``low[i] .. high[i] - 1`` whose values satisfy the
    query's further numeric conditions (column ``e``: at least ``query_values[i, e]`` when
    ``query_up[i, e]``, at most it otherwise; no condition when the query's value is NaN), counted up
    to ``cap``. Compiled: a scan per query whose length depends on the data (not vectorizable)."""
    rows, extra = query_values.shape[0], query_values.shape[1]
    out = np.zeros(rows, dtype=np.int64)
    for i in range(rows):
        count = 0
        for j in range(low[i], high[i]):
            ok = True
            for e in range(extra):
                v = query_values[i, e]
                if np.isnan(v):
                    continue
                t = train_values[j, e]
                if query_up[i, e]:
                    if not t >= v:
                        ok = False
                        break
                elif not t <= v:
                    ok = False
                    break
            if ok:
                count += 1
                if count >= cap:
                    break
        out[i] = count
    return out


class _Index:
    """The distinct training records sorted for one set of attributes: ``cats`` (columns of the
    codes), ``nums`` (columns of the values; the first ranks within a key, the others are scanned)."""

    def __init__(self, owner: Singling, cats: tuple[int, ...], nums: tuple[int, ...]) -> None:
        self.owner, self.cats, self.nums = owner, cats, nums
        codes, values = owner.codes, owner.values
        self.steps: list[tuple[int, np.ndarray | None]] = []  # (radix, uniques when factorized after)
        key = np.zeros(len(codes), dtype=np.int64)
        bound = 1
        for radix, part in self._parts(codes, values):
            if bound * radix >= _KEY_LIMIT:
                uniques, key = np.unique(key, return_inverse=True)
                self.steps[-1] = (self.steps[-1][0], uniques)
                bound = len(uniques)
            key = key * radix + part
            bound *= radix
            self.steps.append((radix, None))
        self.span = 1
        if nums:
            column = values[:, nums[0]]
            self.uniques = owner.uniques[nums[0]]
            self.span = len(self.uniques) + 1  # ranks 0 .. U - 1; a missing value has rank 0
            if bound * self.span >= _KEY_LIMIT:
                uniques, key = np.unique(key, return_inverse=True)
                self.steps[-1] = (self.steps[-1][0], uniques)
            rank = np.where(np.isnan(column), 0, np.searchsorted(self.uniques, column))
            key = key * self.span + rank
        order = np.argsort(key, kind="stable")
        self.sorted = key[order]
        self.extra = np.ascontiguousarray(values[order][:, list(nums[1:])], dtype=np.float64)

    def _parts(self, codes: np.ndarray, values: np.ndarray):
        """(radix, digit) of every attribute of the key: a category code + 1 (0: missing), a missing
        indicator of a number."""
        for j in self.cats:
            yield self.owner.radices[j], codes[:, j] + 1
        for j in self.nums:
            yield 2, np.isnan(values[:, j]).astype(np.int64)

    def counts(self, codes: np.ndarray, values: np.ndarray) -> np.ndarray:
        """How many distinct training records satisfy each record's predicate (capped at 2)."""
        key = np.zeros(len(codes), dtype=np.int64)
        unknown = np.zeros(len(codes), dtype=bool)
        for (radix, uniques), (_, part) in zip(self.steps, self._parts(codes, values), strict=True):
            unknown |= (part < 0) | (part >= radix)
            key = key * radix + np.clip(part, 0, radix - 1)
            if uniques is not None:
                position = np.minimum(np.searchsorted(uniques, key), len(uniques) - 1)
                unknown |= uniques[position] != key
                key = position
        low_rank = np.zeros(len(codes), dtype=np.int64)
        high_rank = np.ones(len(codes), dtype=np.int64)
        if self.nums:
            value = values[:, self.nums[0]]
            up = value > self.owner.medians[self.nums[0]]
            present = ~np.isnan(value)
            count = len(self.uniques)
            low_rank = np.where(present & up, np.searchsorted(self.uniques, value, "left"), 0)
            high_rank = np.where(present & ~up, np.searchsorted(self.uniques, value, "right"), count)
            high_rank = np.where(present, high_rank, 1)
        base = key * self.span
        low = np.searchsorted(self.sorted, base + low_rank, "left")
        high = np.searchsorted(self.sorted, base + high_rank, "left")
        high = np.where(unknown | (high_rank <= low_rank), low, high)
        if len(self.nums) < 2:
            return np.minimum(high - low, 2)
        extra = list(self.nums[1:])
        query = np.ascontiguousarray(values[:, extra], dtype=np.float64)
        up = query > self.owner.medians[extra][None, :]
        return _count_in_ranges(low.astype(np.int64), high.astype(np.int64), self.extra, query, up, 2)


class Singling:
    """The distinct training records (category codes ``(n, c)``, each column's codes below
    ``sizes[j]``, -1 missing; numbers ``(n, v)``, NaN missing) and the predicates of at most ``k``
    attributes (see the module docstring)."""

    def __init__(self, codes: np.ndarray, values: np.ndarray, sizes: np.ndarray, k: int) -> None:
        codes = np.asarray(codes, dtype=np.int64).reshape(len(codes), -1)
        values = np.asarray(values, dtype=np.float64).reshape(len(codes), -1)
        numbers = np.where(np.isnan(values), -np.inf, values)
        _, first = np.unique(np.hstack([codes.astype(np.float64), numbers]), axis=0, return_index=True)
        first = np.sort(first)
        self.codes, self.values = codes[first], values[first]
        self.radices = np.asarray(sizes, dtype=np.int64) + 1
        self.medians = np.array(
            [np.median(col[~np.isnan(col)]) if (~np.isnan(col)).any() else 0.0 for col in values.T]
        )
        self.uniques = [np.unique(col[~np.isnan(col)]) for col in self.values.T]
        c, v = codes.shape[1], values.shape[1]
        self.sets = [
            subset for size in range(1, min(k, c + v) + 1) for subset in combinations(range(c + v), size)
        ]
        self._split = c
        self._cache: dict[tuple[int, ...], _Index] = {}
        self._keep = len(self.sets) * len(self.codes) <= CACHE_ENTRIES

    def _index(self, subset: tuple[int, ...]) -> _Index:
        index = self._cache.get(subset)
        if index is None:
            cats = tuple(j for j in subset if j < self._split)
            nums = tuple(j - self._split for j in subset if j >= self._split)
            index = _Index(self, cats, nums)
            if self._keep:
                self._cache[subset] = index
        return index

    def singles_out(self, codes: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Whether some predicate of at most ``k`` of each record's attributes holds for exactly one
        distinct training record."""
        codes = np.asarray(codes, dtype=np.int64).reshape(len(codes), -1)
        values = np.asarray(values, dtype=np.float64).reshape(len(codes), -1)
        out = np.zeros(len(codes), dtype=bool)
        if len(codes) == 0:
            return out
        for subset in self.sets:
            out |= self._index(subset).counts(codes, values) == 1
        return out


def redraw(
    generated: dict[str, np.ndarray],
    targets: list[str],
    n: int,
    m: int,
    max_tries: int,
    check: Callable[[dict[str, np.ndarray]], np.ndarray],
    draw: Callable[[np.ndarray, np.ndarray, int], dict[str, np.ndarray]],
    suffix: bool = False,
) -> dict[str, Any]:
    """Draw again, in place, the records of ``generated`` (``m`` implicates of ``n`` records per
    attribute, ``targets`` in the order of synthesis) that ``check`` rejects, up to ``max_tries``
    rounds in all (the first draw included); then the records still rejected are kept.
    ``draw(sizes, slots, start)`` gives ``sizes[l]`` fresh records of implicate ``l`` for the
    ``slots``, keeping their values of the first ``start`` targets and drawing the others. Without
    ``suffix`` every round draws whole records (``start`` 0); with it, redraw ``r`` (1, 2, …) draws
    the last ``ceil(p r / (max_tries − 1))`` of the ``p`` targets — a record that a change of its last
    attributes repairs keeps the others, and the last round draws whole records. Returns ``rejected``
    (draws rejected over all rounds), ``rounds`` and ``kept`` (the records still rejected)."""
    slots = np.flatnonzero(check(generated))
    rejected, rounds, p = len(slots), 1, len(targets)
    while len(slots) and rounds < max_tries:
        start = p - math.ceil(p * rounds / (max_tries - 1)) if suffix else 0
        sizes = np.bincount(slots // n, minlength=m).astype(np.int64)
        batch = draw(sizes, slots, max(start, 0))
        for name in targets:
            generated[name][slots] = batch[name]
        rounds += 1
        again = check(batch)
        rejected += int(again.sum())
        slots = slots[again]
    return {"rejected": rejected, "rounds": rounds, "kept": len(slots)}
