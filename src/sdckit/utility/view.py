"""The view of a full-domain generalization that every utility metric reads.

A generalization of a table to hierarchy levels is described by its *distinct quasi-identifier
combinations* (the leaf of each record's value in each hierarchy, collapsed to distinct tuples with
their record counts), the equivalence class of each combination at the chosen levels, and which
combinations are suppressed. Metrics computed on this view cost O(combinations), not O(records),
so the generalization search can evaluate them at every lattice node; a materialized release is
measured by building the same view from its original table.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sdckit.hierarchy import Hierarchy


@dataclass(frozen=True, eq=False)
class GeneralizationView:
    """Distinct quasi-identifier combinations of a table, generalized to ``levels``.

    ``leaf_codes[c, j]`` is the leaf index (row of ``hierarchies[j]``) of combination ``c`` on
    quasi-identifier ``j``; ``counts[c]`` its number of records (or sum of weights); ``classes[c]``
    the equivalence class of the combination at ``levels`` (dense, 0 .. n_classes-1);
    ``suppressed[c]`` whether its records are suppressed (all records of a class share the flag).
    ``n_records`` is the total over all combinations, suppressed ones included. Leaf codes are
    never negative: full-domain generalization refuses missing quasi-identifier values.
    """

    quasi_identifiers: tuple[str, ...]
    hierarchies: tuple[Hierarchy, ...]
    levels: tuple[int, ...]
    leaf_codes: np.ndarray
    counts: np.ndarray
    classes: np.ndarray
    n_classes: int
    suppressed: np.ndarray
    # Optional cache: records per leaf of each quasi-identifier over all combinations (they do not
    # depend on the levels, so a search computes them once).
    leaf_frequencies: tuple[np.ndarray, ...] | None = None

    def all_leaf_frequencies(self, j: int) -> np.ndarray:
        """Records per leaf of quasi-identifier ``j`` over all combinations."""
        if self.leaf_frequencies is not None:
            return self.leaf_frequencies[j]
        return np.bincount(self.leaf_codes[:, j], weights=self.counts, minlength=self.hierarchies[j].n_leaves)

    @property
    def n_records(self) -> float:
        return float(self.counts.sum())

    @property
    def n_suppressed(self) -> float:
        return float(self.counts[self.suppressed].sum())

    def class_sizes(self) -> np.ndarray:
        """Records per equivalence class (suppressed classes included)."""
        return np.bincount(self.classes, weights=self.counts, minlength=self.n_classes)

    def class_suppressed(self) -> np.ndarray:
        """Whether each equivalence class is suppressed."""
        flags = np.zeros(self.n_classes, dtype=bool)
        flags[self.classes[self.suppressed]] = True
        return flags

    def generalized_codes(self, j: int) -> np.ndarray:
        """Node index, at the view's level, of every combination's value of quasi-identifier ``j``."""
        return self.hierarchies[j].codes[self.leaf_codes[:, j], self.levels[j]]
