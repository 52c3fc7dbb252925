"""The top-down walk of :func:`sdckit.anonymize._lattice_walk.bounded_search` in one compiled loop
(:func:`sdckit._kernels_walk.top_down_walk`), for the searches whose nodes are judged in one compiled
call (:mod:`sdckit.anonymize._lattice_fused`: k-anonymity with t-closeness, β-likeness, distinct
l-diversity or δ-disclosure on one sensitive attribute, whole counts) under a suppression limit.

Python sees a node only when it may be offered (its suppressed group is checked and its value
computed here, from the node grouped afresh, in the order the nodes were visited, so the cutoff, the
optimum and its tie-breaking are the Python loop's), when its δ-disclosure verdict needs numpy's
logarithm (the general path evaluates it), and every 64 evaluations (progress, Ctrl-C). The same
nodes are evaluated in the same order, with the same verdicts (tests/test_lattice_walk_compiled.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from sdckit import _kernels_lattice, _kernels_walk
from sdckit.anonymize._lattice_helpers import BUDGET_BYTES
from sdckit.context import ProgressCallback

if TYPE_CHECKING:
    from sdckit.anonymize._lattice_search import Node, Search


def walks_top_down(search: Search) -> bool:
    """Whether the top-down walk of ``search`` can run compiled: its nodes are judged in one call
    (``search._fused``), with the combinations' code stack, and every node's keys fit in int64 (they
    do at the most specific one); some model is not monotone (when all are, e.g. k with distinct
    l-diversity, many satisfied nodes may be offered, each grouped again here, and the Python loop,
    whose nodes carry their classes, is as fast: Adult k=5 + 3-diversity at 5%, 97 nodes)."""
    return (
        search._fused is not None
        and not search.all_monotone
        and search.stack is not None
        and search.max_suppressed > 0
        and _kernels_lattice._mixed_product(
            np.zeros(len(search.hierarchies), dtype=np.int64), search._level_counts
        )
        >= 0
    )


class _Pools:
    """The helper nodes' classes (codes at every level, sizes) and triples."""

    def __init__(self, search: Search, classes: int, triples: int) -> None:
        assert search.stack is not None
        d, depth, _ = search.stack.shape
        # Written before read, and only as far as the helpers fill them (np.empty: the rest takes no
        # memory); one (attribute, level, class) block per helper, one after the other, so that a
        # helper's codes lie together.
        self.codes = np.empty(d * depth * classes, dtype=search.stack.dtype)
        self.sizes = np.empty(classes, dtype=np.float64)
        self.classes = np.empty(triples, dtype=np.int64)
        self.values = np.empty(triples, dtype=np.int32)
        self.counts = np.empty(triples, dtype=np.float64)
        self.class_start = np.zeros(search.size + 1, dtype=np.int64)
        self.triple_start = np.zeros(search.size + 1, dtype=np.int64)
        self.nodes = np.zeros(search.size, dtype=np.int64)  # the lattice node of each helper

    def arrays(self) -> tuple[np.ndarray, ...]:
        return (
            self.codes,
            self.sizes,
            self.classes,
            self.values,
            self.counts,
            self.class_start,
            self.triple_start,
            self.nodes,
        )


def walk_top_down(
    search: Search,
    order: np.ndarray,
    ordered_bounds: np.ndarray,
    bounds: np.ndarray,
    status: np.ndarray,
    evaluated: np.ndarray,
    cutoff: Callable[[], float],
    offer: Callable[[int, Node], None],
    visit: Callable[[int], bool],
    progress: ProgressCallback | None,
) -> None:
    """Walk ``order`` (by decreasing height, then bound) as bounded_search's Python loop does: the
    kernel evaluates and tags the nodes; ``offer`` gets each node that may be offered (with the
    suppressed group and classes of a fresh grouping), ``visit`` evaluates a node the kernel cannot
    judge, ``cutoff`` gives the current cutoff."""
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
    lattice = (
        search.level_matrix,
        search.strides,
        search.max_levels,
        status,
        evaluated,
        float(search.max_suppressed),
        bool(search.all_monotone),
    )
    d, depth, _ = search.stack.shape
    # Pools as large as the budget lets them be (memory is taken only where written).
    per_class = d * depth * search.stack.itemsize + 8
    budget = np.array([per_class, 20.0, float(BUDGET_BYTES)], dtype=np.float64)
    pools = _Pools(search, int(BUDGET_BYTES // per_class) + count, int(BUDGET_BYTES // 20) + n_triples)
    slots = np.full(search.size, -1, dtype=np.int64)
    counters = np.zeros(5, dtype=np.int64)
    index = 0
    while True:
        index, code, node = _kernels_walk.top_down_walk(
            order, ordered_bounds, bounds, lattice, search.stack, bottom, models, scratch, pools.arrays(),
            (slots, budget), counters, index, cutoff(), int(counters[0]) + 64,
        )  # fmt: skip
        if code == _kernels_walk.DONE:
            break
        if code == _kernels_walk.OFFER:
            offer(node, _fresh(search, search.levels_of(node)))
        elif code == _kernels_walk.UNSURE:
            visit(node)
        if progress is not None:
            progress(int(np.count_nonzero((status != 0) | evaluated)), search.size)
    search.evaluations += int(counters[0])


def _scratch(count: int, n_triples: int, n_values: int) -> tuple[np.ndarray, ...]:
    """The kernel's work arrays: the grouping's table (all -1) and per-row arrays, the (class, value)
    cells (at most 2**21, zero), and the per-class arrays of a node."""
    cells = min(count * n_values, 4 * n_triples + 1024, 2**21)  # as many as the dense path uses
    return (
        np.full(4 * count + 1024, -1, dtype=np.int32),
        np.zeros(count, dtype=np.int64),
        np.zeros(count, dtype=np.int32),
        np.zeros(count, dtype=np.float64),
        np.zeros(cells, dtype=np.float64),
        np.zeros(cells, dtype=np.bool_),
        np.zeros(count + 1, dtype=np.int64),
        np.zeros(count, dtype=np.float64),
        np.zeros(n_triples, dtype=np.int32),
        np.zeros(n_triples, dtype=np.float64),
        np.zeros(count, dtype=np.bool_),
        np.zeros(count, dtype=np.bool_),
    )


def _fresh(search: Search, levels: tuple[int, ...]) -> Node:
    """The node at ``levels`` grouped from the combinations, as the Python loop would evaluate it
    (its classes numbered alike), not counted; the general path when the compiled call declines."""
    assert search._fused is not None
    node = search._fused.grouped(search, levels)
    if node is None:
        node = search.evaluate(levels)
        search.evaluations -= 1
    return node
