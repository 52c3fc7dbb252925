"""The strategies that find the optimal node of the full-domain lattice (:mod:`sdckit.anonymize.recoding`),
given a :class:`~sdckit.anonymize._lattice_search.Search` that evaluates nodes: the classification of
the lattice by binary searches along chains (monotone models), the search bounded by the metric's
level bound (ARX's Flash idea with predictive tagging), the exhaustive search the tests compare with,
and the labelled greedy heuristic for lattices larger than ``max_nodes``. See
:mod:`sdckit.anonymize._lattice_search` for what is exact and why.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from sdckit import _kernels_bounded, _kernels_lattice
from sdckit.anonymize._lattice_clean import clean_first
from sdckit.anonymize._lattice_helpers import BUDGET_BYTES
from sdckit.anonymize._lattice_search import Node, Search
from sdckit.anonymize._lattice_walk_compiled import _Pools, _scratch, walk_top_down, walks_top_down
from sdckit.context import ProgressCallback


def _tag(search: Search, status: np.ndarray, start: int, value: int) -> None:
    """Tag ``start`` and all its generalizations (value 1) or specializations (value -1)."""
    _kernels_lattice.tag_closure(
        status, search.level_matrix, search.strides, search.max_levels, int(start), int(value), value > 0
    )


def _chain(search: Search, status: np.ndarray, start: int, rank: np.ndarray) -> list[int]:
    """A chain of untagged nodes upwards from ``start``: each step raises the attribute ``j`` with the
    smallest ``rank[node, j]`` (ties: the first attribute), up to a node with no untagged successor."""
    return _kernels_lattice.upward_chain(
        status, search.level_matrix, search.strides, search.max_levels, int(start), rank
    ).tolist()


def _binary_search(
    search: Search, status: np.ndarray, chain: list[int], visit: Callable[[int], bool]
) -> None:
    """Find where the monotone models start to hold along ``chain`` with a binary search; every
    evaluated node tags its generalizations (holding) or specializations (failing)."""
    low, high = 0, len(chain) - 1
    while low <= high:
        middle = (low + high) // 2
        if status[chain[middle]] != 0:
            # Tagged by an earlier step of this search: move towards the unknown part.
            if status[chain[middle]] > 0:
                high = middle - 1
            else:
                low = middle + 1
            continue
        if visit(chain[middle]):
            high = middle - 1
        else:
            low = middle + 1


#: The classes of the satisfying nodes a :class:`_Classifier` keeps for the candidates' loop, at most.
_KEPT_CLASSES = 2**20


class _Classifier:
    """Satisfied (1), not (-1) or not known yet (0) for every node, found by binary searches along
    chains (monotone case): along a chain, the attribute with the most levels left is raised first
    (ties: the first one). The satisfying nodes evaluated go into ``kept`` (when given; up to
    :data:`_KEPT_CLASSES` classes in all), so that the candidates' loop does not evaluate them again."""

    def __init__(self, search: Search, kept: dict[int, Node] | None = None) -> None:
        self.search, self.kept, self.room = search, kept, _KEPT_CLASSES
        self.status = np.zeros(search.size, dtype=np.int8)
        self.rank = -(search.max_levels - search.level_matrix).astype(np.float64)  # fewer left: later

    def visit(self, node: int) -> bool:
        # Tagged by the models within the limit (monotone); whether the suppressed group holds them
        # too is not monotone: that is the node's own verdict (satisfied), kept with it.
        result = self.search.evaluate(self.search.levels_of(node))
        satisfied = result.monotone_ok
        _tag(self.search, self.status, node, 1 if satisfied else -1)
        if satisfied and self.kept is not None and result.n_classes <= self.room:
            self.kept[node] = result
            self.room -= result.n_classes
        return satisfied

    def classify(self, start: int) -> int:
        """The status of ``start``, by a binary search along a chain from it when not known."""
        if self.status[start] == 0:
            chain = _chain(self.search, self.status, start, self.rank)
            _binary_search(self.search, self.status, chain, self.visit)
        return int(self.status[start])


def _classify(
    search: Search, progress: ProgressCallback | None, kept: dict[int, Node] | None = None
) -> np.ndarray:
    """Satisfied (1) or not (-1) for every node (:class:`_Classifier`)."""
    classifier = _Classifier(search, kept)
    for start in search.order():
        if classifier.status[start] == 0:
            classifier.classify(int(start))
            if progress is not None:
                progress(int(np.count_nonzero(classifier.status)), search.size)
    return classifier.status


@dataclass
class Best:
    node: Node | None = None
    value: float = math.inf
    height: int = 0

    def offer(self, node: Node, value: float) -> None:
        if math.isnan(value):
            # Undefined (e.g. the average class size when every record is suppressed): worst.
            value = math.inf
        height = sum(node.levels)
        if self.node is None or (value, height, node.levels) < (self.value, self.height, self.node.levels):
            self.node, self.value, self.height = node, value, height


def optimum(
    search: Search,
    monotone: bool,
    suppression_limit: float,
    progress: ProgressCallback | None,
    top: Node | None = None,
) -> tuple[Best, dict[str, Any]]:
    statistics: dict[str, Any] = {"lattice_size": search.size}
    if search.class_free_bound:
        return bounded_search(search, progress, statistics, top)
    best = Best()
    order = search.order()
    kept: dict[int, Node] = {}  # satisfying nodes evaluated by the classification
    if monotone and suppression_limit <= 0 and search.metric.monotonic_without_suppression:
        status = _classify(search, progress, kept)
        statistics["satisfying_nodes"] = int(np.count_nonzero(status > 0))
        # Metrics are monotone without suppression (classification is not): only minimal
        # satisfying nodes can be optimal.
        minimal = (status > 0) & search.without_predecessor(status > 0)
        candidates = [int(node) for node in order if minimal[node]]
        statistics["candidates"] = len(candidates)
        for node in candidates:
            result = kept.pop(node) if node in kept else search.evaluate(search.levels_of(node))
            best.offer(result, search.value(result))
        return best, statistics
    # Every node by height, then levels. With monotone models a node's status is found (a binary
    # search along a chain from it, which tags others) only when no node below prunes it: a node's
    # bound holds for its generalizations, also against a best value found after it (ARX's pruning
    # of earlier candidates when the optimum improves), and a pruned node prunes its generalizations.
    classifier = _Classifier(search, kept) if monotone else None
    # Per node, +inf once pruned, else its bound when computed (-inf before): one look-up of its
    # immediate predecessors (the last slot, -inf, stands for a missing one) says whether it is pruned.
    floor = np.full(search.size + 1, -math.inf)
    below = np.where(
        search.level_matrix > 0, np.arange(search.size)[:, None] - search.strides[None, :], search.size
    )
    candidates_seen = 0
    for index, node in enumerate(order.tolist()):
        if floor[below[node]].max() >= best.value:  # best.value is inf until a node is offered
            floor[node] = math.inf
            continue
        if classifier is not None and classifier.classify(node) < 0:
            continue
        candidates_seen += 1
        result = kept.pop(node) if node in kept else search.evaluate(search.levels_of(node))
        if best.node is not None:
            floor[node] = search.lower_bound(result)
            if floor[node] >= best.value:
                floor[node] = math.inf
                continue
        if result.satisfied:
            best.offer(result, search.value(result))
        if progress is not None and index % 64 == 0:
            progress(index + 1, search.size)
    statistics["candidates"] = candidates_seen
    if classifier is not None:
        statistics["classified_nodes"] = int(np.count_nonzero(classifier.status))
    statistics["pruned_by_bound"] = int(np.count_nonzero(floor[:-1] == math.inf))
    return best, statistics


def bounded_search(
    search: Search, progress: ProgressCallback | None, statistics: dict[str, Any], top: Node | None
) -> tuple[Best, dict[str, Any]]:
    """The optimum for a metric whose bound depends on the levels only (ARX's Flash idea: predictive
    tagging with the monotone models, pruning with the metric's bound).

    ``bound[v]`` is at most the value of ``v`` and of every generalization of ``v``, whatever is
    suppressed, so a node whose bound exceeds the best value found cannot win (ties are kept: the
    best is then chosen by height and levels). Each evaluated node tags, through the models whose
    satisfaction is monotone (all of them without suppression; k-anonymity and distinct l-diversity
    with it), its generalizations as holding or its specializations as failing; a node tagged failing
    is never evaluated. Every other node whose bound does not exceed the best is evaluated, so the
    result is the exhaustive search's.

    The order differs with and without suppression (it changes how many nodes are evaluated, never
    the result). Without suppression a satisfying node's value is its bound, so nodes are taken by
    increasing bound, and the status of an untagged one is found by a binary search along a chain
    of untagged nodes above it (each step raising the attribute of the smallest bound), which tags
    large failing down-sets at once. With suppression few satisfying nodes have a bound below the
    optimum but many failing ones do; the lattice is walked top-down (by decreasing height, then
    bound), so that the failing nodes evaluated are the highest ones, whose specializations they
    tag, and the satisfying nodes found early bound the rest.
    """
    bounds = search.level_bounds()
    status = np.zeros(search.size, dtype=np.int8)
    evaluated = np.zeros(search.size, dtype=bool)
    best = Best()
    cutoff = math.inf
    seeded = clean_first(search, bounded_search)
    if seeded is not None:  # gs-factor 1: the clean nodes first, then a bound for the others
        bounds, clean, value = seeded
        statistics["clean_nodes_first"] = True
        if clean is not None:
            best.offer(clean, value)
            cutoff = best.value + 1e-9 * max(1.0, abs(best.value))

    def offer(node: int, result: Node) -> None:
        nonlocal cutoff
        # else its value cannot reach the best (nor, with what it suppresses, Loss's: the classes
        # are not computed then)
        if result.satisfied and bounds[node] <= cutoff and search.lower_bound_suppressed(result) <= cutoff:
            best.offer(result, search.value(result))
            cutoff = best.value + 1e-9 * max(1.0, abs(best.value))

    def visit(node: int, result: Node | None = None) -> bool:
        if result is None:
            result = search.evaluate(search.levels_of(node))
        evaluated[node] = True
        _tag(search, status, node, 1 if result.monotone_ok else -1)
        offer(node, result)
        if progress is not None and search.evaluations % 64 == 0:
            progress(int(np.count_nonzero((status != 0) | evaluated)), search.size)
        return result.monotone_ok

    if top is not None:
        visit(search.size - 1, top)
    top_down = search.max_suppressed > 0
    if top_down:
        statistics["strategy"] = "top-down, predictive tagging and the metric's bound"
        order = np.lexsort((bounds, -search.heights))  # stable: ties in node order
    else:
        statistics["strategy"] = "by increasing bound, binary searches along chains"
        order = np.lexsort((search.heights, bounds))  # stable: ties in node order
        # Along a chain, raise the attribute whose successor has the smallest bound.
        rank = _kernels_lattice.successor_bounds(
            bounds, search.level_matrix, search.strides, search.max_levels
        )
    ordered_bounds = bounds[order]
    if not top_down and search._subset is not None and search._subset.walks(search):
        # The same loop, compiled (δ-presence and k-map against a population, no suppression).
        subset, limit = search._subset, lambda: cutoff
        subset.walk(search, order, ordered_bounds, bounds, rank, status, evaluated, limit, offer, progress)
        statistics["candidates"] = int(np.count_nonzero(evaluated))
        return best, statistics
    if top_down and walks_top_down(search):
        # The same loop, compiled (_lattice_walk_compiled): offered nodes come back here in visit order.
        walk_top_down(
            search, order, ordered_bounds, bounds, status, evaluated, lambda: cutoff, offer, visit, progress
        )
        statistics["candidates"] = int(np.count_nonzero(evaluated))
        return best, statistics
    if not top_down and (search.walks_compiled() or walks_models_compiled(search)):
        # The same loop, compiled (no suppression; k alone, or k with models on one sensitive attribute):
        # offered nodes come back here in visit order.
        walk = _walk_k_compiled if search.walks_compiled() else _walk_models_compiled
        walk(search, order, ordered_bounds, bounds, rank, status, evaluated, lambda: cutoff, offer, progress)
        statistics["candidates"] = int(np.count_nonzero(evaluated))
        return best, statistics

    def next_open(index: int) -> int:
        """The position, from ``index`` on, of the next node in the order that is neither tagged
        failing nor evaluated (nor, top-down, above the cutoff): vectorized, a block at a time."""
        while index < len(order):
            block = order[index : index + 512]
            open_ = (status[block] >= 0) & ~evaluated[block]
            if top_down:
                open_ &= ordered_bounds[index : index + 512] <= cutoff  # not sorted by bound here
            first = int(np.argmax(open_))
            if open_[first]:
                return index + first
            index += 512
        return len(order)

    index = 0
    while True:
        index = next_open(index)
        if index >= len(order):
            break
        node = int(order[index])
        index += 1
        if ordered_bounds[index - 1] > cutoff:
            break  # sorted by bound: no later node can win
        if not top_down and status[node] == 0:
            _binary_search(search, status, _chain(search, status, node, rank), visit)
        if status[node] >= 0 and not evaluated[node]:
            visit(node)
    statistics["candidates"] = int(np.count_nonzero(evaluated))
    return best, statistics


def _walk_k_compiled(
    search: Search,
    order: np.ndarray,
    ordered_bounds: np.ndarray,
    bounds: np.ndarray,
    rank: np.ndarray,
    status: np.ndarray,
    evaluated: np.ndarray,
    cutoff: Callable[[], float],
    offer: Callable[[int, Node], None],
    progress: ProgressCallback | None,
) -> None:
    """:func:`bounded_search`'s loop without suppression under k-anonymity alone, compiled
    (``_kernels_lattice.bounded_walk_k``): it returns whenever a satisfying node may be offered, so
    that its value is computed here and the cutoff lowered (``offer``; ``cutoff()`` reads the current
    one), in the order the nodes were visited, and every 64 evaluations, so that progress is reported
    and Ctrl-C is not held up."""
    first, sizes = search.compiled_sources()
    counters = np.zeros(2, dtype=np.int64)
    visits = np.empty(search.size, dtype=np.int64)
    satisfied = np.empty(search.size, dtype=bool)
    lattice = (search.level_matrix, search.strides, search.max_levels, status, evaluated)
    evaluation = (
        search.stack,
        search._level_counts,
        search.combinations.counts,
        search.k_only,
        search._scratch,
        search._sums,
        search.max_suppressed,
        counters,
    )
    kept = (search._source_levels, search._source_classes)
    index, done, reported = 0, False, search.evaluations // 64
    while not done:
        index, n_visits, done = _kernels_lattice.bounded_walk_k(
            order, ordered_bounds, bounds, rank, lattice, evaluation, kept, first, sizes, index, cutoff(),
            visits, satisfied, int(counters[0]) + 64,
        )  # fmt: skip
        for node, ok in zip(visits[:n_visits].tolist(), satisfied[:n_visits].tolist(), strict=True):
            if ok and bounds[node] <= cutoff():
                offer(node, search.node_k(search.levels_of(node)))
        if progress is not None and (search.evaluations + int(counters[0])) // 64 > reported:
            reported = (search.evaluations + int(counters[0])) // 64
            progress(int(np.count_nonzero((status != 0) | evaluated)), search.size)
    search.evaluations += int(counters[0])
    search.rolled_up += int(counters[1])
    search.forget_sources()


#: Without suppression, the compiled walk with models keeps a node failing k as a roll-up source (its
#: triples computed, which its verdict does not need) only when it has at most this fraction of its
#: source's classes (Adult k=5 + 3-diversity or 0.2-closeness: 1/3 beat 1, 1/2 and none at all).
KEEP_FAILING = 1 / 3


def walks_models_compiled(search: Search) -> bool:
    """Whether :func:`bounded_search` without suppression can run as one compiled loop for k with
    models on one sensitive attribute (:func:`_kernels_bounded.bounded_walk_models`): the search's
    nodes are judged in one call (``search._fused``: whole counts, the combinations' code stack) by
    models other than δ-disclosure (whose verdict may need numpy's logarithm), and every node's keys
    fit in int64 (they do at the most specific one)."""
    fused = search._fused
    return (
        fused is not None
        and search.max_suppressed <= 0
        and search.stack is not None
        and not np.any(fused.kinds == 5)
        and _kernels_lattice._mixed_product(
            np.zeros(len(search.hierarchies), dtype=np.int64), search._level_counts
        )
        >= 0
    )


def _walk_models_compiled(
    search: Search,
    order: np.ndarray,
    ordered_bounds: np.ndarray,
    bounds: np.ndarray,
    rank: np.ndarray,
    status: np.ndarray,
    evaluated: np.ndarray,
    cutoff: Callable[[], float],
    offer: Callable[[int, Node], None],
    progress: ProgressCallback | None,
) -> None:
    """:func:`bounded_search`'s loop without suppression for k with models on one sensitive attribute,
    compiled (``_kernels_bounded.bounded_walk_models``), driven as :func:`_walk_k_compiled` drives the
    k-only one: a node that may be offered is grouped afresh here (:func:`_satisfied_node`) and offered
    in visit order; progress every 64 evaluations."""
    fused = search._fused
    assert fused is not None and search.stack is not None
    combinations = search.combinations
    count = len(combinations.counts)
    pair_classes, pair_values, pair_counts = combinations.sensitive[fused.attribute][:3]
    bottom = (
        np.ascontiguousarray(combinations.counts, dtype=np.float64),
        np.ascontiguousarray(pair_classes, dtype=np.int64),
        np.ascontiguousarray(pair_values, dtype=np.int32),
        np.ascontiguousarray(pair_counts, dtype=np.float64),
    )
    n_triples = len(bottom[1])
    models = (
        search._level_counts,
        fused.n_values,
        fused.overall,
        fused.log_overall,
        float(fused.k),
        fused.kinds,
        fused.limits,
        fused.monotone,
    )
    scratch = _scratch(count, n_triples, fused.n_values)
    limit = float(search.max_suppressed) + 1e-9
    lattice = (search.level_matrix, search.strides, search.max_levels, status, evaluated, limit, KEEP_FAILING)
    d, depth, _ = search.stack.shape
    per_class = d * depth * search.stack.itemsize + 8
    pools = _Pools(search, int(BUDGET_BYTES // per_class) + count, int(BUDGET_BYTES // 20) + n_triples)
    counters = np.zeros(5, dtype=np.int64)
    visits = np.empty(search.size, dtype=np.int64)
    satisfied = np.empty(search.size, dtype=bool)
    index, done, reported = 0, False, search.evaluations // 64
    while not done:
        index, n_visits, done = _kernels_bounded.bounded_walk_models(
            order, ordered_bounds, bounds, rank, lattice, search.stack, bottom, models, scratch,
            pools.arrays(), counters, index, cutoff(), visits, satisfied, int(counters[0]) + 64,
        )  # fmt: skip
        for node, ok in zip(visits[:n_visits].tolist(), satisfied[:n_visits].tolist(), strict=True):
            if ok and bounds[node] <= cutoff():
                offer(node, _satisfied_node(search, search.levels_of(node)))
        if progress is not None and (search.evaluations + int(counters[0])) // 64 > reported:
            reported = (search.evaluations + int(counters[0])) // 64
            progress(int(np.count_nonzero((status != 0) | evaluated)), search.size)
    search.evaluations += int(counters[0])
    search.rolled_up += int(counters[1])


def _satisfied_node(search: Search, levels: tuple[int, ...]) -> Node:
    """The node at ``levels``, which :func:`_walk_models_compiled` found satisfied without suppression,
    as the Python loop evaluates it: its classes grouped from the combinations (numbered by first
    appearance, as a roll-up numbers them), their sizes (sums of whole counts: exact in any order), and
    every class passing (none suppressed: the suppressed group is empty and holds). One compiled
    grouping instead of the one-call evaluation's triples and verdicts, which the kernel had."""
    classes, n_classes = search.classes(levels)
    sizes = np.bincount(classes, weights=search.combinations.counts, minlength=n_classes).astype(np.float64)
    passes = np.ones(n_classes, dtype=bool)
    return Node(levels, classes, n_classes, sizes, passes, 0.0, True, True)


def exhaustive_search(search: Search) -> tuple[Best, dict[str, Any]]:
    best = Best()
    for node in search.order():
        result = search.evaluate(search.levels_of(int(node)))
        if result.satisfied:
            best.offer(result, search.value(result))
    return best, {"lattice_size": search.size, "strategy": "exhaustive"}


def heuristic_search(search: Search, progress: ProgressCallback | None = None) -> tuple[Best, dict[str, Any]]:
    levels = [0] * len(search.max_levels)
    current = search.evaluate(levels)
    steps = 0
    most_steps = int(np.sum(search.max_levels))  # each step raises one attribute by one level
    while not current.satisfied:
        if progress is not None:
            progress(steps, most_steps)
        options = []
        for j in range(len(levels)):
            if levels[j] < search.max_levels[j]:
                trial = list(levels)
                trial[j] += 1
                result = search.evaluate(trial)
                options.append((result.n_suppressed, search.value(result), j, result))
        if not options:
            break
        _, _, j, current = min(options, key=lambda option: option[:3])
        levels[j] += 1
        steps += 1
    if progress is not None:
        progress(most_steps, most_steps)
    best = Best()
    if current.satisfied:
        best.offer(current, search.value(current))
    return best, {"lattice_size": search.size, "heuristic_steps": steps}
