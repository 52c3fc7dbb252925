"""A lattice node judged in one compiled call under δ-presence and k-map against a population table,
with k-anonymity (:mod:`sdckit.anonymize._lattice_subset`).

With a research subset the class sizes count the subset's records (what is released) and the models
read each class's population; the two are all a node needs: δ = size / population, k-map compares
the population with k where the size is positive, k-anonymity the size with k. So a node is the
classes of a source's classes (:func:`sdckit._kernels_rollup._rolled_classes`: an evaluated node, a
helper, or the combinations themselves), two sums per class, and the verdicts, in one call instead of
the (class, value) triples of the research-subset column, a model object per model and a dozen numpy
steps.
"""

from __future__ import annotations

import numpy as np

from sdckit._numba import njit

# isort: split
from sdckit._kernels_lattice import _mixed_product
from sdckit._kernels_rollup import _rolled_classes


@njit(cache=True, nogil=True)
def subset_node(  # pragma: no cover - compiled
    stack,
    index,
    rows,
    source_sizes,
    source_people,
    levels,
    level_counts,
    table,
    k,
    presence_low,
    presence_high,
    presence_monotone,
    map_k,
    map_monotone,
):
    """The node at ``levels`` from a source's classes (codes at ``stack[j, level, index[i]]``, first
    combinations ``rows``, sizes ``source_sizes``: records of the subset, whole numbers, and
    ``source_people``: records of the population), judged under k-anonymity (a class passes at a
    size of at least ``k``: the largest k minus the tolerance, or -inf), δ-presence (δ = size /
    people, or 0 for a class of no people, within [``presence_low``, ``presence_high``], the bounds
    widened by the tolerance) and k-map (a class passes without subset records or with at least
    ``map_k`` people, k minus the tolerance), ``*_monotone`` whether each model counts as monotone
    (k-anonymity does). A class without subset records releases nothing: it passes, and one failing
    δ-presence fails the node (:func:`sdckit.anonymize._research_subset.released_only`).

    Returns whether the key range fits in int64 (else the rest is empty), the class of each source
    class, the first combination, size and people of each class, the per-class passes, the records
    of the classes failing any model and failing a monotone one (whole numbers: exact in any order),
    and whether a class without subset records fails a δ-presence model, and a monotone one."""
    if _mixed_product(levels, level_counts) < 0:
        no_ints = np.empty(0, dtype=np.int64)
        no_floats = np.empty(0, dtype=np.float64)
        no_codes = np.empty(0, dtype=np.int32)
        no_flags = np.empty(0, dtype=np.bool_)
        return False, no_codes, no_ints, no_floats, no_floats, no_flags, 0.0, 0.0, False, False
    cards = np.empty(levels.shape[0], dtype=np.int64)
    for j in range(levels.shape[0]):
        cards[j] = level_counts[j, levels[j]]
    class_of, first, sizes = _rolled_classes(stack, index, levels, cards, rows, source_sizes, table)
    people = people_of(class_of, source_people, sizes.shape[0])
    passes, suppressed, monotone_suppressed, empty_fails, empty_fails_monotone = verdicts(
        sizes, people, k, presence_low, presence_high, presence_monotone, map_k, map_monotone
    )
    return (
        True,
        class_of,
        first,
        sizes,
        people,
        passes,
        suppressed,
        monotone_suppressed,
        empty_fails,
        empty_fails_monotone,
    )


@njit(cache=True, nogil=True)
def people_of(class_of, source_people, n_classes):  # pragma: no cover - compiled
    """The population records of each of ``n_classes`` classes: the sum of its source classes'
    (``class_of``), in source order (whole numbers: exact in any order)."""
    people = np.zeros(n_classes, dtype=np.float64)
    for i in range(class_of.shape[0]):
        people[class_of[i]] += source_people[i]
    return people


@njit(cache=True, nogil=True)
def verdicts(  # pragma: no cover - compiled
    sizes, people, k, presence_low, presence_high, presence_monotone, map_k, map_monotone
):
    """:func:`subset_node`'s verdicts on classes of ``sizes`` subset records and ``people`` population
    records: the per-class passes, the records of the classes failing any model and failing a
    monotone one, and whether a class without subset records fails a δ-presence model, and a
    monotone one."""
    n_classes = sizes.shape[0]
    passes = np.empty(n_classes, dtype=np.bool_)
    suppressed = 0.0
    monotone_suppressed = 0.0
    empty_fails = False
    empty_fails_monotone = False
    for c in range(n_classes):
        size = sizes[c]
        delta = size / people[c] if people[c] > 0 else 0.0
        if size <= 0:  # nothing of it is released: it passes, unless δ-presence fails it
            for m in range(presence_low.shape[0]):
                if not (delta >= presence_low[m] and delta <= presence_high[m]):
                    empty_fails = True
                    if presence_monotone[m]:
                        empty_fails_monotone = True
            passes[c] = True
            continue
        ok = size >= k
        monotone_ok = ok
        for m in range(presence_low.shape[0]):
            inside = delta >= presence_low[m] and delta <= presence_high[m]
            ok = ok and inside
            if presence_monotone[m]:
                monotone_ok = monotone_ok and inside
        for m in range(map_k.shape[0]):
            inside = people[c] >= map_k[m]
            ok = ok and inside
            if map_monotone[m]:
                monotone_ok = monotone_ok and inside
        passes[c] = ok
        if not ok:
            suppressed += size
        if not monotone_ok:
            monotone_suppressed += size
    return passes, suppressed, monotone_suppressed, empty_fails, empty_fails_monotone


@njit(cache=True, nogil=True)
def subset_and_people(combination, values, counts, members, n_combinations):  # pragma: no cover - compiled
    """Per combination, the records of the (combination, value) pairs whose value marks a member
    (``members[value]``) and of all pairs, each summed in pair order (as ``np.bincount``)."""
    subset = np.zeros(n_combinations, dtype=np.float64)
    people = np.zeros(n_combinations, dtype=np.float64)
    for p in range(combination.shape[0]):
        people[combination[p]] += counts[p]
        if members[values[p]]:
            subset[combination[p]] += counts[p]
    return subset, people


@njit(cache=True, nogil=True)
def population_pairs(  # pragma: no cover - compiled
    combination, values, counts, members, record_combination, combination_counts, n_values
):
    """:func:`sdckit.anonymize._research_subset._population_pairs` in one pass over the records and two
    over the pairs: the records of every pair, derived from the pairs counted with the subset's
    weights (a member value's pair as counted, the one value that marks the rest: the combination's
    records less its members'), and their sums per value (in pair order, as ``np.bincount``); whether
    that applies (one non-member value, its pairs counted 0, each holding a record, and the members
    per combination equal to ``combination_counts``), else empty arrays."""
    n_combinations = combination_counts.shape[0]
    people = np.zeros(n_combinations, dtype=np.int64)
    for i in range(record_combination.shape[0]):
        people[record_combination[i]] += 1
    inside = np.zeros(n_combinations, dtype=np.float64)
    outside = -1
    for p in range(combination.shape[0]):
        if members[values[p]]:
            inside[combination[p]] += counts[p]
        elif counts[p] != 0 or (outside >= 0 and values[p] != outside):
            return False, np.empty(0, dtype=np.float64), np.empty(0, dtype=np.float64)
        else:
            outside = values[p]
    for c in range(n_combinations):
        if inside[c] != combination_counts[c]:
            return False, np.empty(0, dtype=np.float64), np.empty(0, dtype=np.float64)
    derived = counts.astype(np.float64)
    overall = np.zeros(n_values, dtype=np.float64)
    for p in range(combination.shape[0]):
        if not members[values[p]]:
            derived[p] = people[combination[p]] - inside[combination[p]]
            if derived[p] <= 0:
                return False, np.empty(0, dtype=np.float64), np.empty(0, dtype=np.float64)
        overall[values[p]] += derived[p]
    return True, derived, overall
