"""The lattice search of full-domain generalization (:mod:`sdckit.anonymize.recoding`): the
distinct quasi-identifier combinations of a table, the evaluation of a lattice node (its equivalence
classes, sizes and the privacy models' verdict), and the strategies that find the optimal node.

The search is exact (Samarati 2001; LeFevre et al. 2005 "Incognito"; Kohlmayer et al. 2012
"Flash"; ARX's predictive tagging):

* Every node's equivalence classes are computed from the *distinct* quasi-identifier combinations
  of the data and their counts, generalized by table look-up and grouped with a compiled hash, never
  by regrouping the records; when an evaluated, more specific node has fewer classes, from its
  classes instead (ARX's roll-up: each of them lies in one class of the node).
* A model is monotone when the union of two passing classes passes (every model here, without
  suppression); with a suppression limit, when the union of a passing class with *any* class passes
  (``PrivacyModel.monotonic_with_suppression``: k-anonymity and distinct l-diversity, as ARX's
  ``isMonotonicWithSuppression``), since then a generalization suppresses a subset of the records
  its specialization suppresses. Every evaluated node tags, through the monotone models, all its
  generalizations as holding or all its specializations as failing (predictive tagging); a node
  tagged failing is never evaluated, also when other, non-monotone models are combined with them.
* For metrics whose lower bound depends on the levels only (loss, ncp, gcp, precision, both
  entropies) the bound of every node is computed at once; a node whose bound exceeds the best value
  found is not evaluated (the bound holds for the node and every generalization of it, whatever is
  suppressed). Without suppression nodes are taken by increasing bound with binary searches along
  chains; with suppression the lattice is walked top-down
  (see :func:`sdckit.anonymize._lattice_walk.bounded_search`).
* For dm, dm_star, aecs and aecs_arx the bound needs the classes of a specialization: when the models
  are monotone the lattice is classified with binary searches along chains; without suppression only
  the minimal satisfying nodes can be optimal; otherwise a node is evaluated unless the bound at one
  of its specializations already reaches the best value found.

Lattices larger than ``max_nodes`` are searched by a clearly labelled greedy heuristic
(``Release.heuristic``): starting from the original data, raise the level of the attribute whose
generalization leaves the fewest records to suppress, then the best metric, until the models hold.

This module holds the distinct combinations and the evaluation of a node (:class:`Search`); the
strategies that walk the lattice are in :mod:`sdckit.anonymize._lattice_walk`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from sdckit import _kernels_lattice
from sdckit.anonymize._lattice_encoding import counted_pairs, sensitive_codes
from sdckit.anonymize._lattice_fused import fused, roll_up_compiled
from sdckit.anonymize._lattice_helpers import Helpers
from sdckit.anonymize._lattice_subset import subset_nodes
from sdckit.anonymize._research_subset import count_population, limit_in_effect, released_only
from sdckit.anonymize._suppressed_group import group_holds, star_codes
from sdckit.frequency import (
    class_value_counts,
    combine_codes,
    dense_keys,
    extend_keys,
    first_of_groups,
    initial_keys,
    value_frequencies,
)
from sdckit.hierarchy import Hierarchy, missing_values_refused
from sdckit.models import (
    ClassStatistics,
    ModelResult,
    PrivacyModel,
    SensitiveCounts,
    evaluate_all,
)
from sdckit.models.base import TOLERANCE
from sdckit.models.kmap import anonymity_k
from sdckit.table import Table
from sdckit.utility.metrics import METRICS, _combine_loss, _loss_leaf_cost
from sdckit.utility.objectives import (
    MetricOptions,
    SuppressedLossBound,
    loss_attribute_bounds,
    suppressing_loss_bounds,
)
from sdckit.utility.view import GeneralizationView

_SOURCES = 32  # evaluated nodes kept for roll-up


#: Metrics whose lower bound depends on the levels only (not on the classes): the value computed as if
#: nothing were suppressed.
CLASS_FREE_BOUND = ("loss", "ncp", "gcp", "precision", "entropy", "entropy_monotone")


@dataclass
class Combinations:
    """The distinct quasi-identifier combinations of a table and the sensitive values behind them."""

    leaf_codes: np.ndarray  # (C, d) int32
    counts: np.ndarray  # (C,) float64
    record_combination: np.ndarray  # (n,) int32
    sensitive: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, int, np.ndarray, pl.Series]]
    n_records: float


@dataclass
class Node:
    """One evaluated lattice node.

    The class of each combination is computed on first use: a node rolled up from a more specific
    one holds the class of each of that node's classes (``class_of``) and that node (``parent``),
    and its classes are ``class_of[parent.classes]``; most nodes a search evaluates never need them.
    """

    levels: tuple[int, ...]
    known_classes: np.ndarray | None  # class of each combination, when computed
    n_classes: int
    sizes: np.ndarray  # records per class
    passes: np.ndarray  # per class: satisfies every model
    n_suppressed: float
    satisfied: bool
    monotone_ok: bool  # the models whose satisfaction is monotone hold within the suppression limit
    first: np.ndarray | None = None  # the first combination of each class, when computed
    parent: Node | None = None
    class_of: np.ndarray | None = None
    compute: Callable[[], np.ndarray] | None = None  # the classes from the combinations, if asked

    @property
    def classes(self) -> np.ndarray:
        if self.known_classes is None:
            if self.parent is not None:
                assert self.class_of is not None
                self.known_classes = self.class_of[self.parent.classes]
                self.parent = None  # no longer needed: let it go
            else:
                assert self.compute is not None
                self.known_classes = self.compute()
                self.compute = None
        return self.known_classes

    def view(self, problem: Search, suppress: bool = True) -> GeneralizationView:
        suppressed = ~self.passes[self.classes] if suppress else np.zeros(len(self.classes), dtype=bool)
        return GeneralizationView(
            quasi_identifiers=problem.quasi_identifiers,
            hierarchies=problem.hierarchies,
            levels=self.levels,
            leaf_codes=problem.combinations.leaf_codes,
            counts=problem.combinations.counts,
            classes=self.classes,
            n_classes=self.n_classes,
            suppressed=suppressed,
            leaf_frequencies=problem.leaf_frequencies,
        )


def distinct_combinations(
    table: Table,
    quasi_identifiers: Sequence[str],
    hierarchies: Sequence[Hierarchy],
    sensitive: Sequence[str],
    weights: np.ndarray | None,
) -> Combinations:
    n = table.n_records
    # Text columns are looked up in their hierarchy's table of leaves (Hierarchy.text_leaf_codes),
    # or where that does not apply coded in one parallel select. A column with a -1 (a missing value
    # or one no leaf covers) there, or a null in the select, goes through Hierarchy.leaf_codes, which
    # explains it.
    pairs = list(zip(quasi_identifiers, hierarchies, strict=True))
    looked_up, selected = {}, []
    schema = table.data.schema  # built anew at every reading
    for name, hierarchy in pairs:
        if schema[name] == pl.String:
            codes = hierarchy.text_leaf_codes(table.column(name))
            if codes is None:
                selected.append((name, hierarchy))
            elif not np.any(codes < 0):
                looked_up[name] = codes
    coded = table.data.select([h.leaf_code_expression(name) for name, h in selected]) if selected else None
    leaf_columns = []
    for name, hierarchy in pairs:
        if name in looked_up:
            leaf_columns.append(looked_up[name])
            continue
        if coded is not None and name in coded.columns and coded[name].null_count() == 0:
            leaf_columns.append(np.asarray(coded[name].to_numpy(), dtype=np.int32))
            continue
        # Missing values have the hierarchy's missing leaf when it has one (Hierarchy.with_missing).
        codes = hierarchy.leaf_codes(table.column(name))
        missing = int(np.count_nonzero(codes < 0))
        if missing:
            raise missing_values_refused(table.source, name, missing, "full-domain generalization")
        leaf_columns.append(codes.astype(np.int32))
    # One mixed-radix key per record and one grouping.
    keys, sizes = combine_codes(leaf_columns, [h.n_leaves for h in hierarchies], n)
    n_combinations = len(sizes)
    representative = np.empty(n_combinations, dtype=np.int64)
    representative[keys] = np.arange(n, dtype=np.int64)
    leaf_codes = (
        np.stack([codes[representative] for codes in leaf_columns], axis=1)
        if leaf_columns
        else np.zeros((n_combinations, 0), dtype=np.int32)
    )
    counts = np.bincount(keys, weights=weights, minlength=n_combinations).astype(np.float64)
    total = float(counts.sum())
    sensitive_data = {}
    if sensitive:
        by_name = sensitive_codes(table, sensitive)
        for name in sensitive:
            codes, n_values, has_missing, categories = by_name[name]
            codes = codes.astype(np.int64)
            if has_missing:
                # A missing sensitive value is a value of its own.
                codes = np.where(codes < 0, n_values, codes)
                n_values += 1
                categories = pl.concat([categories, pl.Series([None], dtype=categories.dtype)])
            pair = keys.astype(np.int64) * n_values + codes
            unique_pairs, pair_counts = counted_pairs(pair, weights, n_combinations * n_values)
            overall = np.bincount(codes, weights=weights, minlength=n_values).astype(np.float64) / total
            sensitive_data[name] = (
                unique_pairs // n_values,
                (unique_pairs % n_values).astype(np.int32),
                pair_counts,
                n_values,
                overall,
                categories,
            )
    return Combinations(leaf_codes, counts, keys, sensitive_data, total)


class Search:
    """The lattice of a full-domain generalization problem and the evaluation of its nodes."""

    def __init__(
        self,
        table: Table,
        quasi_identifiers: Sequence[str],
        hierarchies: Sequence[Hierarchy],
        models: Sequence[PrivacyModel],
        suppression_limit: float,
        metric: str,
        weights: np.ndarray | None,
        options: MetricOptions | None = None,
    ) -> None:
        self.quasi_identifiers = tuple(quasi_identifiers)
        self.hierarchies = tuple(hierarchies)
        self.models = list(models)
        # 0 when no node satisfying the models can suppress a record (one-sided δ-presence alone)
        suppression_limit = limit_in_effect(self.models, self.hierarchies, suppression_limit)
        # The models whose satisfaction within the limit is monotone in the lattice: with no
        # suppression every monotonic model; with suppression k-anonymity and distinct l-diversity.
        self.monotone_models = [
            m for m in self.models if (m.monotonic_with_suppression if suppression_limit > 0 else m.monotonic)
        ]
        if len(self.monotone_models) < len(self.models):  # risk_based: suppresses after all others
            self.monotone_models = [m for m in self.monotone_models if not getattr(m, "table_level", False)]
        self.all_monotone = len(self.monotone_models) == len(self.models)
        # k-anonymity alone (the usual case): a class passes when its size reaches the largest k,
        # as KAnonymity.evaluate says, without building the models' results.
        # (estimated k-map is k'-anonymity: anonymity_k)
        anonymity = [anonymity_k(m) for m in self.models]
        self.k_only = (
            max(k for k in anonymity if k is not None) - TOLERANCE
            if self.models and all(k is not None for k in anonymity)
            else None
        )
        sensitive = sorted({m.sensitive_attribute for m in models if m.sensitive_attribute})
        self.combinations = distinct_combinations(table, quasi_identifiers, hierarchies, sensitive, weights)
        # The metric with its gs-factor, attribute weights or classification target
        # (sdckit.utility.objectives); METRICS[metric] itself when none is set.
        self.options = options or MetricOptions()
        self.metric = self.options.metric(
            metric, table, self.quasi_identifiers, self.combinations, weights, self.k_only
        )
        self.n_records = self.combinations.n_records
        self.max_suppressed = suppression_limit * self.n_records
        self.max_levels = np.array([h.n_levels - 1 for h in hierarchies], dtype=np.int64)
        self.strides = np.ones(len(hierarchies), dtype=np.int64)
        for j in range(len(hierarchies) - 2, -1, -1):
            self.strides[j] = self.strides[j + 1] * (self.max_levels[j + 1] + 1)
        self.size = int(np.prod(self.max_levels + 1)) if len(hierarchies) else 1
        # Levels of every node (row = node id in mixed radix, most significant attribute first).
        shape = tuple(int(m) + 1 for m in self.max_levels)
        self.level_matrix = np.ascontiguousarray(
            np.indices(shape, dtype=np.int16).reshape(len(hierarchies), self.size).T
        )
        self.heights = self.level_matrix.sum(axis=1, dtype=np.int64)
        # Metrics whose value without suppression does not depend on the classes: their bound can
        # be computed from the levels alone, before the node's classes.
        self.class_free_bound = metric in CLASS_FREE_BOUND
        # Generalized codes of every combination at every level, and node counts per level.
        leaf_codes = self.combinations.leaf_codes
        self.node_counts = [[len(h.leaf_counts(level)) for level in range(h.n_levels)] for h in hierarchies]
        # The codes as one padded (attribute, level, combination) array, so that a node's classes are
        # combined and densified in one compiled pass (skipped when it would be large): filled by
        # one compiled gather per attribute, and ``generalized`` holds views of its rows.
        count = len(self.combinations.counts)
        depth = int(self.max_levels.max()) + 1 if len(hierarchies) else 0
        self.stack = None
        if len(hierarchies) and len(hierarchies) * depth * count * 4 <= 256 * 2**20:
            # The narrowest integer type that holds every code: a node reads one row per attribute
            # of the combinations' length (Adult's codes fit in bytes).
            widest = max(h.n_leaves for h in hierarchies)
            dtype = np.uint8 if widest <= 2**8 else np.uint16 if widest <= 2**16 else np.int32
            self.stack = np.zeros((len(hierarchies), depth, count), dtype=dtype)
            for j, h in enumerate(hierarchies):
                leaves = np.ascontiguousarray(leaf_codes[:, j])
                _kernels_lattice.level_codes(
                    self.stack[j], np.ascontiguousarray(h.codes, dtype=np.int32), leaves
                )
            self.generalized = [list(self.stack[j, : h.n_levels]) for j, h in enumerate(hierarchies)]
        else:
            # One gather per attribute: (levels x leaves) table, indexed by the combinations' leaves.
            self.generalized = [
                list(np.ascontiguousarray(h.codes.T)[:, np.ascontiguousarray(leaf_codes[:, j])])
                for j, h in enumerate(hierarchies)
            ]
        # Under k-anonymity alone a node is evaluated by one compiled call (classes, sizes, first
        # combination of each class, the k check): the class count of every (attribute, level) as
        # the mixed radix, a scratch table for the grouping, and whether the counts are whole
        # numbers (then the kernel's sum of the suppressed sizes is exact, as numpy's).
        self._level_counts = np.ones((len(hierarchies), max(depth, 1)), dtype=np.int64)
        for j, per_level in enumerate(self.node_counts):
            self._level_counts[j, : len(per_level)] = per_level
        self._fast_k = self.k_only is not None and self.stack is not None
        # The code of the '*' label at every (attribute, level), -1 where the level has none: a class
        # labelled '*' everywhere is released as the suppressed records are, so it joins their group.
        self.star_codes = star_codes(hierarchies)
        self._scratch = np.full(4 * count + 1024, -1, dtype=np.int32) if self._fast_k else None
        self._sums = np.empty(4 * count + 1024, dtype=np.float64) if self._fast_k else None
        self._whole_counts = count_population(self, table, weights)  # and a research subset's counts
        self.evaluations = 0
        self.rolled_up = 0
        # ARX Loss of each (attribute, level) without suppression, once loss_bounds measured it
        self._loss_levels: np.ndarray | None = None
        # Evaluated nodes kept to derive the classes of their generalizations from (roll-up): levels,
        # and per node its classes, the first combination of each class, the class sizes and the
        # (class, value, count) triples of each sensitive attribute.
        self._source_levels = np.zeros((_SOURCES, len(hierarchies)), dtype=np.int64)
        self._source_classes = np.full(_SOURCES, np.iinfo(np.int64).max, dtype=np.int64)  # free: max
        self._sources: list[Any] = [None] * _SOURCES
        self._helpers = Helpers(self.stack)  # sources the search does not evaluate (top-down roll-up)
        self._fused = fused(self)  # one compiled call per node (k with t-closeness or β-likeness)
        self._subset = subset_nodes(self)  # and for δ-presence and k-map against a population
        self.leaf_frequencies = tuple(
            value_frequencies(leaf_codes, j, self.combinations.counts, h.n_leaves)
            for j, h in enumerate(hierarchies)
        )

    # ------------------------------------------------------------------ lattice
    def levels_of(self, node: int) -> tuple[int, ...]:
        return tuple(self.level_matrix[node].tolist())

    def node_of(self, levels: Sequence[int]) -> int:
        return int(np.dot(np.asarray(levels, dtype=np.int64), self.strides))

    def predecessors(self, node: int) -> np.ndarray:
        return node - self.strides[self.level_matrix[node] > 0]

    def generalizations(self, node: int) -> np.ndarray:
        """Mask of the nodes at least as general as ``node`` on every attribute (itself included)."""
        return np.all(self.level_matrix >= self.level_matrix[node], axis=1)

    def specializations(self, node: int) -> np.ndarray:
        """Mask of the nodes at most as general as ``node`` on every attribute (itself included)."""
        return np.all(self.level_matrix <= self.level_matrix[node], axis=1)

    def order(self) -> np.ndarray:
        """Every node, by height (sum of levels) then lexicographically by levels."""
        nodes = np.arange(self.size, dtype=np.int64)
        return nodes[np.lexsort((nodes, self.heights))]

    def without_predecessor(self, flags: np.ndarray) -> np.ndarray:
        """Nodes none of whose immediate predecessors has ``flags`` set."""
        result = np.ones(self.size, dtype=bool)
        for j, stride in enumerate(self.strides):
            nodes = np.flatnonzero(self.level_matrix[:, j] > 0)
            result[nodes] &= ~flags[nodes - stride]
        return result

    # ------------------------------------------------------------------ evaluation
    def classes(self, levels: Sequence[int]) -> tuple[np.ndarray, int]:
        """Equivalence class of every combination at ``levels``."""
        count = len(self.combinations.counts)
        if not levels:
            return np.zeros(count, dtype=np.int32), 1 if count else 0
        cards = [self.node_counts[j][level] for j, level in enumerate(levels)]
        if self.stack is not None and math.prod(cards) < 2**62:
            upper = math.prod(cards)
            classes, sizes = _kernels_lattice.combine_levels(
                self.stack,
                np.asarray(levels, dtype=np.int64),
                np.asarray(cards, dtype=np.int64),
                upper if upper <= 4 * count + 1024 else 0,
            )
            return classes, len(sizes)
        if math.prod(cards) < 2**62:
            combined = np.zeros(count, dtype=np.int64)
            for j, level in enumerate(levels):
                combined *= cards[j]
                combined += self.generalized[j][level]
            upper = math.prod(cards)
            # A direct table when it is small next to the combinations, else a hash table.
            classes, sizes = dense_keys(combined, upper if upper <= 4 * count + 1024 else 0)
            return classes, len(sizes)
        keys, sizes = initial_keys(count)
        for j, level in enumerate(levels):
            keys, sizes = extend_keys(keys, sizes, self.generalized[j][level], cards[j])
        return keys, len(sizes)

    def statistics(self, classes: np.ndarray, n_classes: int, sizes: np.ndarray) -> ClassStatistics:
        sensitive = {}
        for name, (
            combination,
            values,
            counts,
            n_values,
            overall,
            categories,
        ) in self.combinations.sensitive.items():
            pair_classes, pair_values, pair_counts = class_value_counts(
                classes[combination].astype(np.int64), values, counts, n_classes, n_values
            )
            sensitive[name] = SensitiveCounts(
                attribute=name,
                classes=pair_classes,
                values=pair_values,
                counts=pair_counts,
                n_values=n_values,
                overall=overall,
                categories=categories,
            )
        return ClassStatistics(sizes=sizes, sensitive=sensitive)

    def _roll_up(
        self, levels: tuple[int, ...]
    ) -> tuple[Node, np.ndarray, np.ndarray, ClassStatistics] | None:
        """The classes of the node at ``levels`` derived from an evaluated, more specific node with
        few classes (ARX's roll-up): each of its classes lies in one class here, so only its classes
        are generalized and grouped, O(its classes x attributes); nothing per combination (the
        combinations' classes are mapped later, if ever needed). Class numbers come out as from the
        combinations (first appearance), and the sizes and sensitive counts are sums of the
        source's. Returns the source, the class of each of its classes, the first combination of
        each class, and the statistics; None when no evaluated node below has at most 90% as many
        classes as there are combinations."""
        at = np.asarray(levels, dtype=np.int64)
        chosen = int(_kernels_lattice.choose_source(self._source_levels, self._source_classes, at)[0])
        if chosen < 0 or self._sources[chosen] is None:
            return None
        source, source_sensitive = self._sources[chosen]
        rolled = self._roll_up_from(source, source_sensitive, levels)
        self.rolled_up += rolled is not None  # from an evaluated node (helpers are not counted)
        return rolled

    def _roll_up_from(
        self, source: Node, source_sensitive: dict[str, Any], levels: tuple[int, ...]
    ) -> tuple[Node, np.ndarray, np.ndarray, ClassStatistics] | None:
        """:meth:`_roll_up` from ``source`` (at most as general as ``levels``; first, sizes, triples)."""
        first, source_sizes = source.first, source.sizes
        assert first is not None
        count = len(first)
        cards = [self.node_counts[j][level] for j, level in enumerate(levels)]
        upper = math.prod(cards)
        if upper >= 2**62:
            return None
        direct = upper if upper <= 4 * count + 1024 else 0
        if self.stack is not None:
            return roll_up_compiled(self, source, source_sensitive, levels, cards, direct)
        else:
            combined = np.zeros(count, dtype=np.int64)
            for j, level in enumerate(levels):
                combined *= cards[j]
                combined += self.generalized[j][level][first]
            class_of, _ = dense_keys(combined, direct)
        n_classes = int(class_of.max()) + 1 if count else 0
        # The first combination of each class: that of its first class in the source.
        new_first = first[first_of_groups(class_of, n_classes)]
        sizes = np.bincount(class_of, weights=source_sizes, minlength=n_classes)
        sensitive = {}
        for name, (pair_classes, pair_values, pair_counts) in source_sensitive.items():
            _, _, _, n_values, overall, categories = self.combinations.sensitive[name]
            new_classes, new_values, new_counts = class_value_counts(
                class_of[pair_classes].astype(np.int64), pair_values, pair_counts, n_classes, n_values
            )
            sensitive[name] = SensitiveCounts(
                attribute=name,
                classes=new_classes,
                values=new_values,
                counts=new_counts,
                n_values=n_values,
                overall=overall,
                categories=categories,
            )
        return source, class_of, new_first, ClassStatistics(sizes=sizes, sensitive=sensitive)

    def _keep_source(self, node: Node, statistics: ClassStatistics) -> None:
        """Keep an evaluated node with few classes as a roll-up source (at most ``_SOURCES``: a new one
        replaces the one with the most classes)."""
        slot = int(np.argmax(self._source_classes))
        n_classes = node.n_classes
        if 10 * n_classes > 9 * len(self.combinations.counts) or n_classes >= self._source_classes[slot]:
            return
        if node.first is None:
            node.first = first_of_groups(node.classes, n_classes)
        sensitive = {
            name: (counts.classes, counts.values, counts.counts)
            for name, counts in statistics.sensitive.items()
        }
        self._sources[slot] = (node, sensitive)
        self._source_levels[slot] = node.levels
        self._source_classes[slot] = n_classes

    def _evaluate_k(self, levels: tuple[int, ...]) -> Node | None:
        """:meth:`evaluate` under k-anonymity alone: the same node (classes numbered alike, the same
        sizes and roll-up sources) from one compiled call that chooses the source and one that
        groups, sums the sizes and checks k, with no per-node numpy steps. None when the key range
        does not fit in int64 (the general path then handles the node)."""
        at = np.array(levels, dtype=np.int64)
        chosen, replaced = _kernels_lattice.choose_source(self._source_levels, self._source_classes, at)
        parent = None
        if chosen >= 0:
            parent = self._sources[chosen][0]
            fits, class_of, sizes, first, passes, failing, suppressed = _kernels_lattice.roll_up_k(
                self.stack, at, self._level_counts, parent.first, parent.sizes, self.k_only, self._scratch
            )
        else:
            fits, sizes, first, passes, failing, suppressed = _kernels_lattice.sizes_k(
                self.stack,
                at,
                self._level_counts,
                self.combinations.counts,
                self.k_only,
                self._scratch,
                self._sums,
            )
            class_of = None
        if not fits:
            return None
        if parent is not None:
            self.rolled_up += 1
        node = self._k_node(levels, None, sizes, first, passes, failing, suppressed)
        node.parent, node.class_of = parent, class_of
        if parent is None:
            node.compute = lambda: self.node_k(levels).classes
        node.satisfied = node.satisfied and self.suppressed_group_holds(node, None)
        n_classes = node.n_classes
        # As _keep_source: a node with few classes replaces the kept one with the most.
        if 10 * n_classes <= 9 * len(self.combinations.counts) and n_classes < self._source_classes[replaced]:
            self._sources[replaced] = (node, {})
            self._source_levels[replaced] = levels
            self._source_classes[replaced] = n_classes
        return node

    def _k_node(
        self,
        levels: tuple[int, ...],
        classes: np.ndarray | None,
        sizes: np.ndarray,
        first: np.ndarray,
        passes: np.ndarray,
        failing: int,
        suppressed: float,
    ) -> Node:
        """The node of a compiled k-only evaluation (``failing`` classes of ``suppressed`` records)."""
        if not failing:
            n_suppressed = 0.0
        elif self._whole_counts:
            n_suppressed = float(suppressed)
        else:  # numpy's (pairwise) sum, as the general path
            n_suppressed = float(sizes[~passes].sum())
        satisfied = n_suppressed <= self.max_suppressed + 1e-9
        return Node(levels, classes, len(sizes), sizes, passes, n_suppressed, satisfied, satisfied, first)

    def walks_compiled(self) -> bool:
        """Whether :func:`bounded_search` can run as one compiled loop
        (:func:`_kernels_lattice.bounded_walk_k`): k-anonymity alone, no suppression, whole counts,
        and keys that fit in int64 at every node (they do at the most specific one)."""
        return (
            self._fast_k
            and self._whole_counts
            and self.max_suppressed <= 0
            and _kernels_lattice._mixed_product(
                np.zeros(len(self.hierarchies), dtype=np.int64), self._level_counts
            )
            >= 0
        )

    def node_k(self, levels: tuple[int, ...]) -> Node:
        """A node under k-anonymity alone evaluated afresh from the combinations, with its classes: as
        :meth:`evaluate` gives it, but neither counted nor kept as a roll-up source."""
        at = np.array(levels, dtype=np.int64)
        _, classes, sizes, first, passes, failing, suppressed = _kernels_lattice.classes_k(
            self.stack, at, self._level_counts, self.combinations.counts, self.k_only, self._scratch
        )
        node = self._k_node(levels, classes, sizes, first, passes, failing, suppressed)
        node.satisfied = node.satisfied and self.suppressed_group_holds(node, None)
        return node

    def compiled_sources(self) -> tuple[Any, Any]:
        """The kept roll-up sources' first combinations and class sizes as typed lists (free slots:
        empty arrays), for the compiled walk, which keeps them in place of :attr:`_sources`."""
        nodes = [None if source is None else source[0] for source in self._sources]
        first = [np.zeros(0, dtype=np.int64) if node is None else node.first for node in nodes]
        sizes = [np.zeros(0, dtype=np.float64) if node is None else node.sizes for node in nodes]
        offsets = np.concatenate(([0], np.cumsum([len(f) for f in first]))).astype(np.int64)
        return _kernels_lattice.source_lists(
            np.concatenate(first).astype(np.int64), np.concatenate(sizes).astype(np.float64), offsets
        )

    def forget_sources(self) -> None:
        """Free every roll-up slot (after the compiled walk replaced them with its own)."""
        self._sources = [None] * _SOURCES
        self._source_levels[:] = 0
        self._source_classes[:] = np.iinfo(np.int64).max

    def evaluate(self, levels: Sequence[int]) -> Node:
        self.evaluations += 1
        levels = tuple(map(int, levels))
        if self._fast_k:
            node = self._evaluate_k(levels)
            if node is not None:
                return node
        fused_node = None if self._fused is None else self._fused.evaluate(self, levels)
        if fused_node is None and self._subset is not None:
            fused_node = self._subset.evaluate(self, levels)
        if fused_node is not None:
            return fused_node
        rolled = self._roll_up(levels) or self._helpers.roll_up(self, levels)  # evaluated node, or helper
        fused_node = self._fused.grouped(self, levels) if rolled is None and self._fused else None
        if fused_node is not None:  # grouped from the combinations and judged in one call
            return fused_node
        parent = class_of = first = classes = None
        if rolled is not None:
            parent, class_of, first, statistics = rolled
            sizes = statistics.sizes
            n_classes = len(sizes)
        else:
            classes, n_classes = self.classes(levels)
            sizes = np.bincount(classes, weights=self.combinations.counts, minlength=n_classes)
            statistics = self.statistics(classes, n_classes, sizes)
        results: list[ModelResult] = []
        if self.k_only is not None:
            passes = sizes >= self.k_only
        else:
            passes, results = evaluate_all(self.models, statistics, budget=self.max_suppressed)
        n_suppressed = float(sizes[~passes].sum())
        satisfied = n_suppressed <= self.max_suppressed + 1e-9
        if self.all_monotone:
            monotone_ok = satisfied
        else:
            # Records suppressed by the monotone models alone are among those suppressed by all.
            monotone_passes = np.ones(n_classes, dtype=bool)
            for model, result in zip(self.models, results, strict=True):
                if model in self.monotone_models:
                    monotone_passes &= result.passes
            monotone_ok = float(sizes[~monotone_passes].sum()) <= self.max_suppressed + 1e-9
        node = Node(levels, classes, n_classes, sizes, passes, n_suppressed, satisfied, monotone_ok)
        node.first, node.parent, node.class_of = first, parent, class_of
        node.satisfied = released_only(self, node, results) and self.suppressed_group_holds(node, statistics)
        self._keep_source(node, statistics)
        return node

    def suppressed_group_holds(self, node: Node, statistics: ClassStatistics | None) -> bool:
        """Whether the records released all '*' at ``node`` satisfy every model as one more class
        (:func:`sdckit.anonymize._suppressed_group.group_holds`)."""
        return group_holds(self, node, statistics)

    def value(self, node: Node) -> float:
        if self.class_free_bound and node.passes.all():
            # Nothing suppressed: the value of a metric whose bound depends on the levels only does
            # not read the classes, so they are not computed (the same value, bit for bit: tested).
            if self._loss_levels is not None and self.metric is METRICS["loss"]:
                # Loss: each attribute's term as loss_bounds measured it at that level (the same
                # computation), combined as loss combines them
                at = self._loss_levels[np.arange(len(node.levels)), np.asarray(node.levels, dtype=np.int64)]
                return _combine_loss(at)
            return float(self.metric.value(self._unsuppressed_view(node.levels)))
        return float(self.metric.value(node.view(self)))

    def lower_bound(self, node: Node) -> float:
        if node.known_classes is None and node.compute is not None and self._fast_k:
            # The classes as node_k numbers them (the compiled grouping), without node_k's second
            # verdict on the suppressed group, which the node has.
            at = np.array(node.levels, dtype=np.int64)
            counts = self.combinations.counts
            grouped = _kernels_lattice.classes_k(
                self.stack, at, self._level_counts, counts, self.k_only, self._scratch
            )
            node.known_classes, node.compute = grouped[1], None
        return float(self.metric.lower_bound(node.view(self, suppress=False), self.max_suppressed))

    def loss_bounds(self, least: float = 0.0) -> np.ndarray:
        """ARX Loss of every node computed as if nothing were suppressed: a lower bound of the
        Loss of the node and of every generalization of it, whatever is suppressed. With ``least``
        (options set), a lower bound of the Loss of a node that suppresses records weighing at least
        that much (:func:`sdckit.utility.objectives.suppressing_loss_attributes`).

        Per-attribute Loss without suppression depends only on that attribute's level, so it is
        measured once per (attribute, level) and combined for all nodes by the geometric mean.
        """
        if self.options.is_default:
            per_attribute = self._loss_levels = self._loss_per_level()
        else:
            per_attribute = np.zeros((len(self.hierarchies), int(self.max_levels.max(initial=0)) + 1))
            gs_factor, weights = self.options.gs_factor, self.options.attribute_weights
            for level in range(per_attribute.shape[1]):
                view = self._unsuppressed_view(tuple(min(level, int(m)) for m in self.max_levels))
                per_attribute[:, level] = (
                    loss_attribute_bounds(view, gs_factor, weights)
                    if least <= 0
                    else suppressing_loss_bounds(view, gs_factor, weights, least)
                )
        logs = np.zeros(self.size)
        per_attribute = np.log1p(per_attribute)  # per (attribute, level), then gathered: same values
        for j in range(len(self.hierarchies)):
            logs += per_attribute[j][self.level_matrix[:, j]]
        return np.exp(logs / max(len(self.hierarchies), 1)) - 1.0

    def _loss_per_level(self) -> np.ndarray:
        """loss_per_attribute of the unsuppressed view at every level (an attribute past its top
        at its top), as loss_bounds measured it one view per level: the same arithmetic
        (metrics._loss_per_attribute_array: the leaf frequencies times the leaf costs, plus nothing
        suppressed, over the records) without a view, frequencies and a dict per level."""
        per_attribute = np.zeros((len(self.hierarchies), int(self.max_levels.max(initial=0)) + 1))
        n = float(np.asarray(self.combinations.counts, dtype=np.float64).sum())
        if n <= 0:
            return per_attribute
        for j, hierarchy in enumerate(self.hierarchies):
            totals = [
                float(self.leaf_frequencies[j] @ _loss_leaf_cost(hierarchy, level))
                for level in range(int(self.max_levels[j]) + 1)
            ]
            totals += totals[-1:] * (per_attribute.shape[1] - len(totals))
            per_attribute[j] = (np.array(totals, dtype=np.float64) + 0.0) / n
        return per_attribute

    def _unsuppressed_view(self, levels: tuple[int, ...]) -> GeneralizationView:
        count = len(self.combinations.counts)
        return GeneralizationView(
            quasi_identifiers=self.quasi_identifiers,
            hierarchies=self.hierarchies,
            levels=levels,
            leaf_codes=self.combinations.leaf_codes,
            counts=self.combinations.counts,
            classes=np.zeros(count, dtype=np.int32),
            n_classes=1,
            suppressed=np.zeros(count, dtype=bool),
            leaf_frequencies=self.leaf_frequencies,
        )

    def lower_bound_suppressed(self, node: Node) -> float:
        """A lower bound of the value of an evaluated ``node`` from its levels and the records it
        suppresses (``node.n_suppressed``), before its classes are computed: for Loss with a
        gs-factor or attribute weights (:class:`sdckit.utility.objectives.SuppressedLossBound`),
        else -inf (no bound)."""
        bound: SuppressedLossBound | None
        known = vars(self)  # built on first use, kept on the search
        if "_suppressed_bound" in known:
            bound = known["_suppressed_bound"]
        else:
            bound = None
            if self.metric.name == "loss" and not self.options.is_default and self.hierarchies:
                depth = int(self.max_levels.max()) + 1
                views = [
                    self._unsuppressed_view(tuple(min(level, int(m)) for m in self.max_levels))
                    for level in range(depth)
                ]
                options = self.options
                bound = SuppressedLossBound.build(views, options.gs_factor, options.attribute_weights)
            known["_suppressed_bound"] = bound
        if bound is None or node.n_suppressed <= 0:
            return -math.inf
        return float(bound(node.levels, node.n_suppressed))

    def lower_bound_of_levels(self, levels: tuple[int, ...]) -> float:
        """The metric's bound at ``levels`` without computing classes (class-free metrics only)."""
        return float(self.metric.lower_bound(self._unsuppressed_view(levels), self.max_suppressed))

    def level_bounds(self) -> np.ndarray:
        """The class-free bound of the metric at every node (a lower bound of the value of the node
        and of every generalization of it, whatever is suppressed), for the whole lattice at once.

        Loss combines per-attribute losses by a geometric mean (:meth:`loss_bounds`). The bounds of
        ncp, gcp, precision and both entropies are sums over the attributes of a term that depends on
        that attribute's level only, so each term is measured once per (attribute, level), with the
        other attributes at level 0, and summed over the nodes.
        """
        if self.metric.name == "loss":
            return self.loss_bounds()
        d = len(self.hierarchies)
        base = self.lower_bound_of_levels((0,) * d)
        total = np.full(self.size, base, dtype=np.float64)
        for j in range(d):
            per_level = np.zeros(int(self.max_levels[j]) + 1)
            for level in range(1, len(per_level)):
                levels = tuple(level if i == j else 0 for i in range(d))
                per_level[level] = self.lower_bound_of_levels(levels) - base
            total += per_level[self.level_matrix[:, j]]
        return total
