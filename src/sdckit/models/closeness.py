"""t-closeness with the earth mover's distance (Li, Li & Venkatasubramanian 2007).

A class is t-close when the distribution P of a sensitive attribute inside it is within earth mover's
distance (EMD) t of the distribution Q over the whole table. Three ground distances are offered
(SPEC §5.2-5.4):

``"equal"``
    every two distinct values are at distance 1: EMD = ½ Σ |p_i - q_i| (total variation distance).
``"ordered"``
    the i-th and j-th smallest of the table's m distinct values are at distance |i - j| / (m - 1):
    EMD = (1 / (m - 1)) Σ_i |Σ_{j<=i} (p_j - q_j)|; EMD = 0 when m = 1.
``"hierarchical"``
    two values are at distance height(LCA) / H in a generalization hierarchy of height H:
    EMD = Σ over internal nodes N of (height(N) / H) · min(pos_extra(N), neg_extra(N)).

Values absent from a class have p = 0; the kernels (:mod:`sdckit.models._kernels`) account for them
without any classes x values array. Q includes suppressed records (as ARX does). The EMD is convex in
P, so the union of two t-close classes is t-close: the model is monotonic.

References
----------
Li, N., Li, T. & Venkatasubramanian, S. (2007). t-Closeness: privacy beyond k-anonymity and
l-diversity. Proceedings of the 23rd IEEE International Conference on Data Engineering, 106-115.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from sdckit.errors import ConfigError, SdcError
from sdckit.models import _kernels
from sdckit.models.base import (
    TOLERANCE,
    ClassStatistics,
    ModelResult,
    PrivacyModel,
    SensitiveCounts,
    attribute_parameter,
    number_text,
)
from sdckit.params import T_BOUNDS, T_DISTANCES, Argument, Finite, TDistance

if TYPE_CHECKING:
    from sdckit.hierarchy import Hierarchy

DISTANCES = T_DISTANCES
_T = Argument("t", Finite, T_BOUNDS)
_DISTANCE = Argument("distance", TDistance, option="--t-distance")
# The dense kernels walk all m codes (all tree nodes) for every class, the sparse ones only the class's
# values (times the tree's levels) but at a higher cost per step. Dense is chosen while m (the number
# of nodes) is at most RATIO x the sparse steps per class (+ EXTRA); the ratios were measured on 20,000
# classes with 14 and 100 values.
_DENSE_RATIO = {"ordered": 24.0, "hierarchical": 4.5}
_DENSE_EXTRA = {"ordered": 0.0, "hierarchical": 0.0}


def _dense(distance: str, size: int, sparse_steps: float) -> bool:
    return size <= _DENSE_RATIO[distance] * sparse_steps + _DENSE_EXTRA[distance]


class _Tree:
    """A hierarchy as a tree with globally numbered nodes, for the hierarchical EMD kernel.

    A node at level ``j`` is identified by the codes of a leaf at levels ``j .. top`` (its path to
    the top), so the structure is a tree even if a label recurs under two parents. When the top level
    holds several nodes a virtual root is added one level above them.
    """

    def __init__(self, hierarchy: Hierarchy) -> None:
        codes = np.asarray(hierarchy.codes, dtype=np.int64)
        if codes.ndim != 2 or codes.shape[0] == 0 or codes.shape[1] == 0:
            raise ConfigError(f"hierarchy '{hierarchy.name}' has no values")
        n_leaves, n_levels = codes.shape
        node_of = []  # per level: node (level-local) of each leaf
        for level in range(n_levels):
            _, inverse = np.unique(codes[:, level:], axis=0, return_inverse=True)
            node_of.append(inverse.reshape(-1).astype(np.int64))
        if node_of[-1].max() > 0:
            node_of.append(np.zeros(n_leaves, dtype=np.int64))  # virtual root
        sizes = [int(nodes.max()) + 1 for nodes in node_of]
        offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self.n_nodes = int(offsets[-1])
        self.n_steps = len(node_of) - 1
        self.height = self.n_steps
        self.parent = np.full(self.n_nodes, -1, dtype=np.int64)
        self.cost_weight = np.zeros(self.n_nodes, dtype=np.float64)
        for level in range(len(node_of)):
            if level + 1 < len(node_of):
                self.parent[offsets[level] + node_of[level]] = offsets[level + 1] + node_of[level + 1]
            if self.height:
                self.cost_weight[offsets[level] : offsets[level + 1]] = level / self.height
        self.leaf_node = offsets[0] + node_of[0]  # per hierarchy leaf (row)
        self.level_offsets = offsets
        self.hierarchy = hierarchy

    def overall_of_nodes(self, leaf_node_of_value: np.ndarray, overall: np.ndarray) -> np.ndarray:
        """Q of every node: the table's share of the values below it."""
        shares = np.bincount(leaf_node_of_value, weights=overall, minlength=self.n_nodes)
        for level in range(self.n_steps):
            low, high = self.level_offsets[level], self.level_offsets[level + 1]
            shares += np.bincount(self.parent[low:high], weights=shares[low:high], minlength=self.n_nodes)
        return shares


class TCloseness(PrivacyModel):
    """Each class's distribution of ``attribute`` is within EMD ``t`` of the whole table's.

    ``distance`` is ``"equal"``, ``"ordered"`` (the order of the sorted distinct values, m = number of
    distinct values of the whole table) or ``"hierarchical"`` (needs a ``hierarchy`` whose leaves cover
    every value; a top level with several nodes gets an implicit root above it; a hierarchy given with
    another distance is ignored). Achieved value: the EMD of the class (0 for a class without records).
    """

    sensitive_attribute: str  # always given (PrivacyModel allows None for k-anonymity)

    monotonic = True

    def __init__(
        self, attribute: str, t: float, distance: str = "equal", hierarchy: Hierarchy | None = None
    ) -> None:
        self.sensitive_attribute = attribute_parameter(attribute)
        self.t: float = _T(t)
        self.distance: str = _DISTANCE(distance)
        self.hierarchy = hierarchy
        self._tree: _Tree | None = None
        self._leaf_cache: tuple[pl.Series, np.ndarray] | None = None
        if distance == "hierarchical":
            if hierarchy is None:
                raise ConfigError(
                    f"hierarchical t-closeness needs a hierarchy for sensitive attribute '{attribute}'"
                )
            self._tree = _Tree(hierarchy)
        self.name = f"{number_text(self.t)}-closeness ({self.sensitive_attribute}, {distance})"

    def _leaf_nodes(self, counts: SensitiveCounts) -> np.ndarray:
        """Leaf node of every value code, checking that the hierarchy covers every value."""
        categories = counts.categories
        cached = self._leaf_cache
        if cached is not None and (cached[0] is categories or cached[0].equals(categories)):
            return cached[1]
        assert self._tree is not None
        hierarchy = self._tree.hierarchy
        where = f"t-closeness on '{self.sensitive_attribute}': hierarchy '{hierarchy.name}'"
        try:
            leaves = np.asarray(hierarchy.leaf_codes(categories), dtype=np.int64)
        except SdcError as error:
            raise ConfigError(f"t-closeness on '{self.sensitive_attribute}': {error}") from None
        uncovered = (leaves < 0) | (leaves >= len(self._tree.leaf_node))
        if len(leaves) != len(categories) or uncovered.any():
            shown = categories.filter(pl.Series(uncovered)).head(5).to_list() if uncovered.any() else []
            raise ConfigError(
                f"{where} does not cover {int(uncovered.sum())} value(s) of the data: "
                f"{', '.join('null' if value is None else repr(value) for value in shown)}"
            )
        leaf_nodes = self._tree.leaf_node[leaves]
        self._leaf_cache = (categories, leaf_nodes)
        return leaf_nodes

    def distances(self, statistics: ClassStatistics) -> np.ndarray:
        """The EMD of every class."""
        counts = statistics.counts_of(self.sensitive_attribute)
        n_classes = statistics.n_classes
        starts, totals = counts.segments(n_classes)
        per_class = len(counts.values) / max(n_classes, 1)
        if self.distance == "equal":
            return _kernels.equal_emd(starts, counts.values, counts.counts, totals, counts.overall)
        if self.distance == "ordered":
            if _dense("ordered", counts.n_values, per_class):
                return _kernels.ordered_emd_dense(
                    starts, counts.values, counts.counts, totals, counts.overall
                )
            cumulative = np.cumsum(counts.overall)
            cumulative_sums = np.concatenate([[0.0], np.cumsum(cumulative)])
            return _kernels.ordered_emd_sparse(
                starts, counts.values, counts.counts, totals, cumulative, cumulative_sums
            )
        tree = self._tree
        assert tree is not None
        leaf_nodes = self._leaf_nodes(counts)
        if tree.height == 0:
            return np.zeros(n_classes)
        overall_node = tree.overall_of_nodes(leaf_nodes, counts.overall)
        arguments = (starts, counts.values, counts.counts, totals, leaf_nodes, tree.parent, tree.cost_weight)
        if _dense("hierarchical", tree.n_nodes, per_class * tree.n_steps):
            return _kernels.hierarchical_emd_dense(*arguments, overall_node)
        return _kernels.hierarchical_emd_sparse(*arguments, overall_node, tree.n_steps)

    def evaluate(self, statistics: ClassStatistics) -> ModelResult:
        distances = self.distances(statistics)
        passes = distances <= self.t + TOLERANCE
        return ModelResult(model=self.name, passes=passes, achieved=distances, higher_is_better=False)

    def check_feasible(self, statistics_of_whole_table: ClassStatistics) -> None:
        """Always feasible (the whole table is at distance 0 of itself).

        With hierarchical distance, raises ConfigError if the hierarchy does not cover every value.
        """
        counts = statistics_of_whole_table.counts_of(self.sensitive_attribute)
        if self.distance == "hierarchical":
            self._leaf_nodes(counts)
