"""One compiled call per lattice node for δ-presence and k-map against a population table, alone or
with k-anonymity (:mod:`sdckit.anonymize._lattice_search`).

With a research subset (:mod:`sdckit.models.presence`) the search's class sizes count the subset's
records and the models read each class's population from the subset column's (class, value) counts.
A class's subset records are its size (the weights are 1 for a member, 0 for the rest), and its
population the sum of its combinations' records, so a node needs two sums per class and no triple:
:func:`sdckit._kernels_subset.subset_node` rolls the node up from a source (an evaluated node kept
here, a helper of :mod:`._lattice_helpers`, or the combinations), sums both and judges every class,
with ARX's rule for a class without subset records
(:func:`sdckit.anonymize._research_subset.released_only`). The same classes, numbered alike, sizes,
verdicts and records suppressed as :meth:`Search.evaluate`'s general path (exact sums of whole
numbers; tests/test_presence_kmap.py compares both node by node), so the same nodes are tagged,
offered and chosen. The (class, value) counts are built only for a node whose suppressed group must
be checked.

Eligible: whole counts, the combinations' code stack, sizes that count the research subset (as
generalization weighs them), and only :class:`KAnonymity`, :class:`DeltaPresence` and :class:`KMap`
models.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from sdckit import _kernels_lattice, _kernels_subset, _kernels_subset_walk
from sdckit.anonymize._lattice_helpers import BUDGET_BYTES
from sdckit.models import DeltaPresence, KAnonymity, KMap
from sdckit.models.base import TOLERANCE
from sdckit.models.presence import _member, research_subset

if TYPE_CHECKING:
    from sdckit.anonymize._lattice_search import Node, Search
    from sdckit.context import ProgressCallback

_SOURCES = 32  # evaluated nodes kept to roll up from, as Search keeps
_WALK_SOURCES = 64  # the last nodes evaluated with few classes, kept by the compiled walk


class SubsetNodes:
    """The compiled evaluation of one search's nodes, or :func:`subset_nodes` gives None."""

    def __init__(self, search: Search, people: np.ndarray) -> None:
        models = search.models
        ks = [model.k for model in models if type(model) is KAnonymity]
        self.k = max(ks) - TOLERANCE if ks else -np.inf
        presence = [model for model in models if type(model) is DeltaPresence]
        self.presence_low = np.array([model.delta_min - TOLERANCE for model in presence], dtype=np.float64)
        self.presence_high = np.array([model.delta_max + TOLERANCE for model in presence], dtype=np.float64)
        self.presence_monotone = np.array([model in search.monotone_models for model in presence], dtype=bool)
        maps = [model for model in models if type(model) is KMap]
        self.map_k = np.array([model.k - TOLERANCE for model in maps], dtype=np.float64)
        self.map_monotone = np.array([model in search.monotone_models for model in maps], dtype=bool)
        count = len(search.combinations.counts)
        self.people = people  # records of the population per combination
        self.rows = np.arange(count, dtype=np.int64)
        self.sizes = np.ascontiguousarray(search.combinations.counts, dtype=np.float64)
        self.table = np.full(4 * count + 1024, -1, dtype=np.int32)
        # Evaluated nodes kept as sources (levels, classes; free: max) and their people per class.
        self.source_levels = np.zeros((_SOURCES, len(search.hierarchies)), dtype=np.int64)
        self.source_classes = np.full(_SOURCES, np.iinfo(np.int64).max, dtype=np.int64)
        self.sources: list[tuple[Node, tuple[Any, ...]] | None] = [None] * _SOURCES  # node, source
        # Helper nodes (not evaluated, never offered): by levels, the node and its source arrays.
        self.helpers: dict[tuple[int, ...], tuple[Node, tuple[Any, ...]]] = {}
        self.helper_bytes = 0
        # The first helpers built, by their levels and classes, for choose_source (a helper is grouped
        # from the one below it with the fewest classes).
        self.helper_levels = np.zeros((256, len(search.hierarchies)), dtype=np.int64)
        self.helper_classes = np.zeros(256, dtype=np.int64)
        self.helper_order: list[tuple[int, ...]] = []

    def evaluate(self, search: Search, levels: tuple[int, ...]) -> Node | None:
        """The node at ``levels``, rolled up from the kept node below it with the fewest classes or its
        helper if that has fewer, else from its helper (built on the first request), else grouped from
        the combinations; None when the key range does not fit in int64 (the general path then takes
        it)."""
        at = np.asarray(levels, dtype=np.int64)
        chosen, replaced = _kernels_lattice.choose_source(self.source_levels, self.source_classes, at)
        kept = self.sources[chosen] if chosen >= 0 else None
        if kept is not None:
            helper = self.helpers.get(tuple([1 if level > 0 else 0 for level in levels]))
            if helper is not None and len(helper[1][3]) < len(kept[1][3]):
                kept = None
        parent, source = kept if kept is not None else self._source(search, levels)
        stack, index, rows, sizes, people = source
        result = _kernels_subset.subset_node(
            stack, index, rows, sizes, people, at, search._level_counts, self.table, self.k,
            self.presence_low, self.presence_high, self.presence_monotone, self.map_k, self.map_monotone,
        )  # fmt: skip
        if not result[0]:
            return None
        if kept is not None:
            search.rolled_up += 1  # from an evaluated node (as Search._roll_up counts)
        return self._node(search, levels, parent, result[1:], int(replaced))

    def _source(self, search: Search, levels: tuple[int, ...]) -> tuple[Node | None, tuple[Any, ...]]:
        """The node's helper, else the combinations: the source node (None for the combinations) and
        its stack, index, first combinations, sizes and people. A helper is the node at
        ``min(level, 1)`` per attribute (:mod:`._lattice_helpers`), grouped from the combinations by
        the same call when first asked for (its classes, sizes and people only: no triples, so it
        costs about one grouping and the rows of the node rolled up from it are a fifth of the
        combinations on Adult), while the kept helpers hold less than ``BUDGET_BYTES``."""
        combinations = (search.stack, self.rows, self.rows, self.sizes, self.people)
        key = tuple([1 if level > 0 else 0 for level in levels])
        helper = self.helpers.get(key)
        if helper is not None:
            return helper
        if key == levels or self.helper_bytes >= BUDGET_BYTES:
            return None, combinations
        at = np.asarray(key, dtype=np.int64)
        # From the kept helper below it with the fewest classes, if any (its classes are unions of
        # that one's, as of the combinations'), else from the combinations.
        count = len(self.helper_order)
        chosen = int(
            _kernels_lattice.choose_source(self.helper_levels[:count], self.helper_classes[:count], at)[0]
        )
        below, source = (None, combinations) if chosen < 0 else self.helpers[self.helper_order[chosen]]
        nothing = np.zeros(0, dtype=np.float64)
        stack, index, rows, source_sizes, source_people = source
        result = _kernels_subset.subset_node(
            stack, index, rows, source_sizes, source_people, at, search._level_counts, self.table, -np.inf,
            nothing, nothing, np.zeros(0, dtype=bool), nothing, np.zeros(0, dtype=bool),
        )  # fmt: skip
        if not result[0]:
            return None, combinations
        from sdckit.anonymize._lattice_search import Node

        class_of, first, sizes, people, passes = result[1:6]
        node = Node(key, None, len(sizes), sizes, passes, 0.0, False, False, first)
        if below is None:
            node.known_classes = class_of
        else:
            node.parent, node.class_of = below, class_of
        # Its classes' codes read in place (stack[j, level, first[i]]): a copy of them costs more than
        # the scattered reads it saves.
        helper = (node, (search.stack, first, first, sizes, people))
        self.helpers[key] = helper
        self.helper_bytes += class_of.nbytes + 3 * first.nbytes + passes.nbytes
        if count < len(self.helper_classes):
            self.helper_levels[count] = key
            self.helper_classes[count] = len(sizes)
            self.helper_order.append(key)
        return helper

    def _node(
        self,
        search: Search,
        levels: tuple[int, ...],
        parent: Node | None,
        result: tuple[Any, ...],
        replaced: int | None,
    ) -> Node:
        """The :class:`Node` of one call (``result``: :func:`_kernels_subset.subset_node`'s after the
        first value), its suppressed group checked when satisfied, kept as a source (with its people
        per class) when it may serve as one (never with ``replaced`` None)."""
        from sdckit.anonymize._lattice_search import Node

        class_of, first, sizes, people, passes, suppressed, monotone_suppressed = result[:7]
        empty_fails, empty_monotone = result[7:]
        n_classes = len(sizes)
        n_suppressed = float(suppressed)
        satisfied = n_suppressed <= search.max_suppressed + 1e-9
        monotone_ok = satisfied
        if not search.all_monotone:
            monotone_ok = float(monotone_suppressed) <= search.max_suppressed + 1e-9
        if empty_fails:  # ARX's rule for a class without subset records (released_only)
            satisfied = False
            monotone_ok = monotone_ok and not empty_monotone
        node = Node(levels, None, n_classes, sizes, passes, n_suppressed, satisfied, monotone_ok, first)
        if parent is None:
            node.known_classes = class_of
        else:
            node.parent, node.class_of = parent, class_of
        if satisfied and n_suppressed > 0:
            statistics = search.statistics(node.classes, n_classes, sizes)
            node.satisfied = search.suppressed_group_holds(node, statistics)
        few = 10 * n_classes <= 9 * len(search.combinations.counts)
        if replaced is not None and few and n_classes < self.source_classes[replaced]:
            self.sources[replaced] = (node, (search.stack, first, first, sizes, people))
            self.source_levels[replaced] = levels
            self.source_classes[replaced] = n_classes
        return node

    def fresh(self, search: Search, levels: tuple[int, ...]) -> Node:
        """The node at ``levels`` grouped from the combinations, neither counted nor kept as a source
        (a node :meth:`walk` offers): the node :meth:`evaluate` gives, classes numbered alike."""
        at = np.asarray(levels, dtype=np.int64)
        result = _kernels_subset.subset_node(
            search.stack, self.rows, self.rows, self.sizes, self.people, at, search._level_counts,
            self.table, self.k, self.presence_low, self.presence_high, self.presence_monotone, self.map_k,
            self.map_monotone,
        )  # fmt: skip
        return self._node(search, levels, None, result[1:], None)

    def offered(
        self, search: Search, levels: tuple[int, ...], sizes: np.ndarray | None, first: np.ndarray | None
    ) -> Node:
        """A node :meth:`walk` offers: one that holds without suppression, so every class passes (a
        class of subset records passes every model, one without passes); its class ``sizes`` and
        ``first`` combinations as the walk kept them, its classes grouped from the combinations when
        asked for (:meth:`fresh`); or the node :meth:`fresh` gives when the walk did not keep it."""
        from sdckit.anonymize._lattice_search import Node

        if sizes is None or first is None:
            return self.fresh(search, levels)
        passes = np.ones(len(sizes), dtype=bool)
        node = Node(levels, None, len(sizes), sizes, passes, 0.0, True, True, first)
        node.compute = lambda: self.fresh(search, levels).classes
        return node

    def walks(self, search: Search) -> bool:
        """Whether :meth:`walk` can run :func:`sdckit.anonymize._lattice_walk.bounded_search`'s loop
        without suppression: every model is monotone (each node's verdict tags its generalizations or
        its specializations) and the keys fit in int64 at the most specific node (then at every node)."""
        most_specific = np.zeros(len(search.hierarchies), dtype=np.int64)
        return (
            search.all_monotone
            and search.max_suppressed <= 0
            and _kernels_lattice._mixed_product(most_specific, search._level_counts) >= 0
        )

    def walk(
        self,
        search: Search,
        order: np.ndarray,
        ordered_bounds: np.ndarray,
        bounds: np.ndarray,
        rank: np.ndarray,
        status: np.ndarray,
        evaluated: np.ndarray,
        cutoff: Callable[[], float],
        offer: Callable[[int, Node], None],
        progress: ProgressCallback | None = None,
    ) -> None:
        """:func:`sdckit.anonymize._lattice_walk.bounded_search`'s loop without suppression, compiled
        (:func:`sdckit._kernels_subset_walk.walk_subset`, the nodes judged as :class:`SubsetNodes` judges
        them): it returns whenever a node that holds may be offered, so that its value is computed here
        and the cutoff lowered (``offer``, with the node as :meth:`offered` gives it; ``cutoff()``
        reads the current one), in visit order, and every 64 evaluations, so that progress
        is reported and Ctrl-C is not held up."""
        d = len(search.hierarchies)
        counters = np.zeros(3, dtype=np.int64)
        lattice = (search.level_matrix, search.strides, search.max_levels, status, evaluated)
        free = np.full(_WALK_SOURCES, np.iinfo(np.int64).max, dtype=np.int64)  # no kept source yet
        evaluation = (
            search.stack, search._level_counts, self.rows, self.sizes, self.people, self.table,
            np.zeros((_WALK_SOURCES, d), dtype=np.int64), free, counters, float(search.max_suppressed),
        )  # fmt: skip
        models = (
            float(self.k), self.presence_low, self.presence_high, self.presence_monotone, self.map_k,
            self.map_monotone,
        )  # fmt: skip
        kept_first, kept_sizes, kept_people = _kernels_subset_walk.empty_sources(_WALK_SOURCES)
        found, slots = np.empty(search.size, dtype=np.int64), np.empty(search.size, dtype=np.int64)
        index, done, reported = 0, False, search.evaluations // 64
        while not done:
            index, n_found, done = _kernels_subset_walk.walk_subset(
                order, ordered_bounds, bounds, rank, lattice, evaluation, models, kept_first, kept_sizes,
                kept_people, index, cutoff(), found, slots, int(counters[0]) + 64,
            )  # fmt: skip
            for node, slot in zip(found[:n_found].tolist(), slots[:n_found].tolist(), strict=True):
                if bounds[node] <= cutoff():
                    levels = search.levels_of(node)
                    kept = slot >= 0 and tuple(evaluation[6][slot].tolist()) == levels
                    sizes, first = (kept_sizes[slot], kept_first[slot]) if kept else (None, None)
                    offer(node, self.offered(search, levels, sizes, first))
            if progress is not None and (search.evaluations + int(counters[0])) // 64 > reported:
                reported = (search.evaluations + int(counters[0])) // 64
                progress(int(np.count_nonzero((status != 0) | evaluated)), search.size)
        search.evaluations += int(counters[0])
        search.rolled_up += int(counters[1])


def subset_nodes(search: Search) -> SubsetNodes | None:
    """The compiled evaluation for ``search``'s models, or None when they are not all eligible or the
    sizes do not count the research subset's records."""
    column = research_subset(search.models)
    if column is None or search.stack is None or not search._whole_counts:
        return None
    if set(search.combinations.sensitive) != {column}:
        return None
    if not all(type(model) in (KAnonymity, DeltaPresence, KMap) for model in search.models):
        return None
    combination, values, counts = search.combinations.sensitive[column][:3]
    members = _members(search, column)
    if members is None:
        return None
    count = len(search.combinations.counts)
    subset, people = _kernels_subset.subset_and_people(combination, values, counts, members, count)
    if not np.array_equal(subset, search.combinations.counts):
        return None  # the sizes count the population (no subset weights): the general path
    return SubsetNodes(search, people)


def _members(search: Search, column: str) -> Any:
    """Per value code of the research-subset column, whether it marks a member (as
    :func:`sdckit.models.presence.subset_members` says); None when a value marks neither (the
    models' evaluation then says so)."""
    from sdckit.errors import ConfigError

    categories = search.combinations.sensitive[column][5]
    try:
        return np.array([_member(value, column) for value in categories.to_list()], dtype=bool)
    except ConfigError:
        return None
