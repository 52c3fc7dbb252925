"""Local suppression inside strata and for subsets of the keys (sdcMicro's ``strataVar`` and ``combs``).

:func:`suppress_in_steps` runs the greedy of :mod:`sdckit.anonymize.local_suppression` on the records of
each stratum separately and, inside a stratum, once per *step*: a subset of the quasi-identifiers with
its own ``k``. Without ``combs`` there is one step, every key; with ``combs = (3, 5)`` the steps are
every 3-key subset, then every 5-key subset, as sdcMicro orders them (sizes in the order given,
subsets in lexicographic order of the keys as listed, :func:`itertools.combinations`). Each step
starts from the values the earlier steps left (their suppressions are nulls it counts with).

Under the wildcard treatment a suppression only adds matches, so a step never undoes an earlier one:
after the last step every subset of every step is k-anonymous (inside each stratum), one pass as
sdcMicro. Under the category treatment a suppression moves a record out of its class and may break a
subset treated before; the passes over the steps are then repeated until one suppresses nothing (each
pass but the last suppresses at least one cell, so this ends), and then every subset holds ``k``
(sdcMicro makes one pass, and warns that its ``alpha = 0`` results may not satisfy every subset).

Deviations from sdcMicro: the importance inside a subset is the order of the whole key set restricted
to it (sdcMicro ranks the subset's importance values, the same order); strata are the combinations of
the strata attributes' values, a missing value a stratum value of its own; the per-stratum loop runs
on one core (sdcMicro's ``nc``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from sdckit.frequency import combine_codes, first_of_groups

#: The greedy over the distinct patterns of one step: ``(patterns, counts, cardinalities, threshold)``
#: -> (violating patterns, patterns x columns suppression mask); ``patterns`` edited in place.
PatternSearch = Callable[[np.ndarray, np.ndarray, list[int], float], tuple[np.ndarray, np.ndarray]]

#: The category treatment's last step (:func:`sdckit.anonymize.local_suppression._category_classes`):
#: ``(patterns after, keys, patterns before, violating, weights, threshold, suppressed)`` ->
#: (suppressed, classes, filled).
CategoryFill = Callable[
    [np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, float, np.ndarray],
    tuple[np.ndarray, np.ndarray, int],
]


@dataclass(frozen=True)
class Step:
    """One step: the columns (positions in suppression order, ascending: least important first) of a
    key subset, and the weight its matches must reach."""

    columns: tuple[int, ...]
    threshold: float


def combination_steps(
    names: Sequence[str], order: Sequence[str], sizes: Sequence[int], thresholds: Sequence[float]
) -> list[Step]:
    """The steps of ``combs``: for each size (in the order given) every subset of ``names`` of that
    size, in lexicographic order of ``names``; columns are positions in ``order`` (suppression
    order)."""
    position = {name: i for i, name in enumerate(order)}
    steps = []
    for size, threshold in zip(sizes, thresholds, strict=True):
        for subset in itertools.combinations(names, size):
            steps.append(Step(tuple(sorted(position[name] for name in subset)), threshold))
    return steps


@dataclass
class StepsOutcome:
    """What :func:`suppress_in_steps` did: the records' suppression mask (n x q, suppression order),
    each record's class (category treatment without combs; else -1), the patterns found violating
    (summed over strata and steps), which records were in one of them, the distinct (stratum, key)
    patterns of the original data, and the records moved into all-null classes."""

    suppressed: np.ndarray
    classes: np.ndarray
    violating_patterns: int
    violating_records: np.ndarray
    patterns: int
    filled_records: int


def _group(codes: np.ndarray, cardinalities: Sequence[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Dense keys of the rows of ``codes`` (nulls a value of their own, numbered by first appearance),
    their distinct patterns and the first row of each."""
    n = len(codes)
    columns = [np.ascontiguousarray(codes[:, j], dtype=np.int32) for j in range(codes.shape[1])]
    keys, sizes = combine_codes(columns, cardinalities, n)
    first = first_of_groups(keys, len(sizes))
    return keys, np.ascontiguousarray(codes[first], dtype=np.int32), first


def _one_step(
    codes: np.ndarray,
    weights: np.ndarray,
    cardinalities: Sequence[int],
    step: Step,
    search: PatternSearch,
    fill: CategoryFill | None,
) -> tuple[np.ndarray, int, np.ndarray, np.ndarray, int]:
    """One step on the records of one stratum (``codes`` edited in place: suppressed cells become -1).

    Returns the step's mask (records x step columns), its violating patterns, whether each record was
    in one, its classes (category treatment) and the records moved into the all-null class."""
    columns = list(step.columns)
    sub_cardinalities = [int(cardinalities[c]) for c in columns]
    keys, patterns, _ = _group(codes[:, columns], sub_cardinalities)
    counts = np.bincount(keys, weights=weights, minlength=len(patterns)).astype(np.float64)
    before = patterns.copy() if fill is not None else patterns
    violating, pattern_suppressed = search(patterns, counts, sub_cardinalities, step.threshold)
    if not len(violating):  # nothing to do (most subsets of few keys): no record-level work
        nothing = np.zeros((len(codes), len(columns)), dtype=bool)
        classes = keys.astype(np.int64) if fill is not None else np.full(len(codes), -1, dtype=np.int64)
        return nothing, 0, np.zeros(len(codes), dtype=bool), classes, 0
    mask = pattern_suppressed[keys]
    classes = np.full(len(codes), -1, dtype=np.int64)
    filled = 0
    if fill is not None:
        mask, classes, filled = fill(patterns, keys, before, violating, weights, step.threshold, mask)
    for j, column in enumerate(columns):
        codes[mask[:, j], column] = -1
    in_violating = np.zeros(len(patterns), dtype=bool)
    in_violating[violating] = True
    return mask, len(violating), in_violating[keys], classes, max(filled, 0)


def suppress_in_steps(
    codes: np.ndarray,
    cardinalities: Sequence[int],
    weights: np.ndarray,
    strata: np.ndarray,
    steps: Sequence[Step],
    search: PatternSearch,
    fill: CategoryFill | None,
    repeat: bool,
) -> StepsOutcome:
    """Local suppression of the records of each stratum (dense ``strata`` keys) separately, step after
    step (see the module's docstring). ``codes`` are the records' key codes (n x q, suppression order,
    -1 null), ``fill`` the category treatment's last step (None: wildcard), ``repeat``: pass over the
    steps again until a pass suppresses nothing (category treatment with several steps)."""
    n, q = codes.shape
    suppressed = np.zeros((n, q), dtype=bool)
    classes = np.full(n, -1, dtype=np.int64)
    violating_records = np.zeros(n, dtype=bool)
    violating_patterns = filled = 0
    order = np.argsort(strata, kind="stable")
    bounds = np.searchsorted(strata[order], np.arange(int(strata.max(initial=-1)) + 2))
    keyed = np.concatenate([strata.astype(np.int32)[:, None], codes], axis=1)
    patterns = len(_group(keyed, [int(strata.max(initial=0)) + 1, *cardinalities])[1])
    for s in range(len(bounds) - 1):
        rows = order[bounds[s] : bounds[s + 1]]
        if not len(rows):
            continue
        local = np.ascontiguousarray(codes[rows])
        local_weights = np.ascontiguousarray(weights[rows])
        local_suppressed = np.zeros((len(rows), q), dtype=bool)
        while True:
            changed = False
            for step in steps:
                mask, found, flagged, step_classes, moved = _one_step(
                    local, local_weights, cardinalities, step, search, fill
                )
                violating_patterns += found
                violating_records[rows[flagged]] = True
                filled += moved
                local_suppressed[:, list(step.columns)] |= mask
                changed |= bool(mask.any())
                if len(steps) == 1 and fill is not None:
                    classes[rows] = step_classes
            if not (repeat and changed):
                break
        suppressed[rows] = local_suppressed
    if fill is not None and len(steps) == 1:
        # Classes are numbered inside each stratum: make them distinct across strata.
        pairs = np.stack([strata, classes], axis=1).astype(np.int32)
        classes = _group(pairs, [int(strata.max()) + 1, int(classes.max()) + 1])[0]
    return StepsOutcome(suppressed, classes, violating_patterns, violating_records, patterns, filled)
