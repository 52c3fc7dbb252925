"""The known-set loop of the combined risk of a release measured against its original
(:func:`sdckit.risk.combined.combined_risk` with ``original``), and the inverse counts both loops use."""

from __future__ import annotations

import numpy as np

from sdckit.context import ProgressCallback
from sdckit.coverage import AttributeCover
from sdckit.frequency import (
    add_contributions,
    coverage_group_sizes,
    extend_keys,
    first_of_groups,
    initial_keys,
    key_extender,
)


def _inverse(counts: np.ndarray) -> np.ndarray:
    """1 / count, and 0 for a count of 0: a group whose records all have weight 0 (only such records
    are in it, since a record counts itself) stands for nobody, and its records' risks are 0."""
    counts = np.asarray(counts, dtype=np.float64)
    return np.divide(1.0, counts, out=np.zeros_like(counts), where=counts > 0)


def _coverage_known_sets(
    covers: list[AttributeCover],
    representative: np.ndarray,
    released_sizes: np.ndarray,
    known_sets: list[tuple[int, ...]],
    probabilities: list[float],
    alpha: float,
    consequence: dict[str, np.ndarray],
    zero: np.ndarray,
    pattern_total: np.ndarray,
    state: tuple[np.ndarray, ...],
    progress: ProgressCallback | None,
) -> None:
    """The loop over known sets of :func:`combined_risk` with an original: per known set, the
    patterns are grouped by their original values and the released records by their labels (keys
    extended from the parent set's), and each target group's count is the coverage count of the
    released groups (:func:`sdckit.frequency.coverage_group_sizes`)."""
    risk, best, top, combinations, pk_of_set = state
    n_patterns = len(representative)
    target_slots = [np.ascontiguousarray(cover.target_slots[representative]) for cover in covers]
    names = [cover.name for cover in covers]
    # The released records collapse to their distinct label patterns, with their counts (weights).
    keys, sizes = initial_keys(len(released_sizes))
    for cover in covers:
        keys, sizes = extend_keys(keys, sizes, cover.released_labels, len(cover.labels))
    first = first_of_groups(keys.astype(np.int64), len(sizes))
    released_labels = [np.ascontiguousarray(cover.released_labels[first]) for cover in covers]
    released_sizes = np.bincount(keys, weights=released_sizes, minlength=len(sizes))
    n_released = len(sizes)
    target_extender = key_extender(n_patterns)
    released_extender = key_extender(n_released)
    alone = np.zeros(n_patterns, dtype=np.float64)  # unused: no pattern is left untracked
    stack: list[tuple[tuple[int, ...], np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
    for index, known_set in enumerate(known_sets):
        if not known_set:
            t_keys, t_sizes = initial_keys(n_patterns)
            r_keys, r_sizes = initial_keys(n_released)
            known_weight = zero
            pk = 1.0
        else:
            while stack and stack[-1][0] != known_set[:-1]:
                stack.pop()
            _, parent_t, parent_t_sizes, parent_r, parent_r_sizes, known_weight = stack[-1]
            attribute = known_set[-1]
            cover = covers[attribute]
            t_keys, t_sizes, _ = target_extender.extend(
                parent_t, parent_t_sizes, target_slots[attribute], cover.n_slots
            )
            r_keys, r_sizes, _ = released_extender.extend(
                parent_r, parent_r_sizes, released_labels[attribute], len(cover.labels)
            )
            if consequence[names[attribute]] is not zero:
                known_weight = known_weight + consequence[names[attribute]]
            pk = float(np.prod([probabilities[j] for j in known_set]))
        counts, distinct = coverage_group_sizes(
            t_keys,
            len(t_sizes),
            [target_slots[j] for j in known_set],
            r_keys,
            len(r_sizes),
            [released_labels[j] for j in known_set],
            released_sizes,
            [(covers[j].pointer, covers[j].covering) for j in known_set],
        )
        pk_of_set[index] = pk
        combinations[index] = distinct
        add_contributions(
            risk,
            best,
            top,
            np.int32(index),
            pk * alpha,
            pattern_total,
            known_weight,
            t_keys,
            _inverse(counts),
            alone,
        )
        stack.append((known_set, t_keys, t_sizes, r_keys, r_sizes, known_weight))
        if progress is not None:
            progress(index + 1, len(known_sets))
