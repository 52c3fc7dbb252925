"""The sample cuts of Mondrian over partitions (:mod:`sdckit.scale.mondrian`, pass 2): the axes the
quasi-identifiers are cut along, Mondrian's median cuts taken on a sample until there are enough
fragments, and the small picklable tree (:class:`FragmentCuts`) that assigns any record to its
fragment."""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import polars as pl

from sdckit.anonymize._mondrian_coding import (
    _HIERARCHY,
    _NUMERIC,
    _ORDERED,
    _hierarchy_dimension,
    _is_number_text,
)
from sdckit.errors import ConfigError
from sdckit.hierarchy import Hierarchy

# The cut tree ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Axis:
    """How a quasi-identifier is coded for the fragment cuts: its coordinate is the number itself
    (``numeric``), the rank of the value in the whole table's sorted distinct values (``ordered``), or
    the depth-first rank of its hierarchy leaf (``hierarchy``)."""

    name: str
    kind: str
    low: float = 0.0  # numeric: min over the whole table
    high: float = 0.0  # numeric: max over the whole table
    domain: pl.Series | None = None  # ordered: the sorted distinct values of the whole table
    hierarchy: Hierarchy | None = None

    @property
    def span(self) -> float:
        if self.kind == _NUMERIC:
            return self.high - self.low
        if self.kind == _ORDERED:
            assert self.domain is not None
            return float(max(len(self.domain) - 1, 0))
        return 0.0

    def coordinates(self, column: pl.Series) -> np.ndarray:
        if self.kind == _NUMERIC:
            if column.dtype.is_numeric():
                return column.cast(pl.Float64).to_numpy()
            numbers = _is_number_text(column)
            if numbers is None:
                raise ConfigError(f"quasi-identifier '{self.name}': a value does not read as a number")
            return numbers
        if self.kind == _ORDERED:
            assert self.domain is not None
            ranks = self.domain.search_sorted(column, side="left").to_numpy().astype(np.int64)
            return ranks.astype(np.float64)
        assert self.hierarchy is not None
        return _hierarchy_dimension(self.name, column, self.hierarchy).codes.astype(np.float64)


@dataclass(frozen=True)
class FragmentCuts:
    """The cuts that split the records into fragments: a tree whose node ``t`` sends a record to its
    child ``first_child[t] + i``, ``i`` = the number of ``bounds[t]`` below the record's coordinate on
    ``axes[attribute[t]]`` (a record whose coordinate is at most ``bounds[t][0]`` goes to the first
    child). Leaves have ``attribute[t] = -1`` and are the fragments ``fragment[t]``, numbered
    depth first, so that the leaves of any subtree are consecutive fragments."""

    axes: tuple[Axis, ...]
    attribute: np.ndarray
    bounds: tuple[np.ndarray, ...]
    first_child: np.ndarray
    n_children: np.ndarray
    fragment: np.ndarray

    @property
    def n_fragments(self) -> int:
        return int((self.attribute < 0).sum())

    def assign(self, coordinates: np.ndarray) -> np.ndarray:
        """The fragment of every record (int64)."""
        n = coordinates.shape[1]
        result = np.empty(n, dtype=np.int64)
        stack = [(0, np.arange(n, dtype=np.int64))]
        while stack:
            node, index = stack.pop()
            j = int(self.attribute[node])
            if j < 0:
                result[index] = self.fragment[node]
                continue
            child = np.searchsorted(self.bounds[node], coordinates[j, index], side="left")
            first = int(self.first_child[node])
            if self.n_children[node] == 2:
                right = child.astype(bool)
                stack.append((first, index[~right]))
                stack.append((first + 1, index[right]))
                continue
            order = np.argsort(child, kind="stable")
            sizes = np.bincount(child, minlength=int(self.n_children[node]))
            for i, part in enumerate(np.split(index[order], np.cumsum(sizes)[:-1])):
                stack.append((first + i, part))
        return result

    def leaf_ranges(self) -> dict[int, tuple[int, int]]:
        """The fragments ``lo .. hi-1`` under every node."""
        ranges: dict[int, tuple[int, int]] = {}
        for node in reversed(range(len(self.attribute))):  # children are numbered after parents
            if self.attribute[node] < 0:
                f = int(self.fragment[node])
                ranges[node] = (f, f + 1)
            else:
                first, count = int(self.first_child[node]), int(self.n_children[node])
                ranges[node] = (ranges[first][0], ranges[first + count - 1][1])
        return ranges


def coordinates(axes: Sequence[Axis], frame: pl.DataFrame) -> np.ndarray:
    """``(q, n)`` float64 coordinates of the records of ``frame`` on ``axes``."""
    if frame.height == 0:
        return np.zeros((len(axes), 0))
    return np.stack([axis.coordinates(frame.get_column(axis.name)) for axis in axes])


def _widths(
    axes: Sequence[Axis], dimensions: Sequence[Any], block: np.ndarray
) -> tuple[list[float], list[int]]:
    """Normalized width of every axis over the sampled records ``block`` (q, s), and the LCA level of
    the hierarchy axes."""
    widths, levels = [], []
    for j, axis in enumerate(axes):
        low, high = block[j].min(), block[j].max()
        level = 0
        if low == high:
            width = 0.0
        elif axis.kind == _HIERARCHY:
            ancestors = dimensions[j].ancestors
            lo, hi = int(low), int(high)
            level = int(np.argmax(ancestors[lo] == ancestors[hi]))
            width = float(dimensions[j].node_width[level][ancestors[lo, level]])
        else:
            span = axis.span
            width = float((high - low) / span) if span > 0 else 0.0
        widths.append(width)
        levels.append(level)
    return widths, levels


def _cut(axes: Sequence[Axis], dimensions: Sequence[Any], block: np.ndarray) -> tuple[int, np.ndarray] | None:
    """Mondrian's cut of a box of sampled records: the widest axis that splits them (the lower median
    of numbers and ranks; the LCA's children of a hierarchy), as ``(axis, bounds)``; None if none does."""
    widths, levels = _widths(axes, dimensions, block)
    for j in sorted((j for j in range(len(axes)) if widths[j] > 0), key=lambda j: -widths[j]):
        column = block[j]
        if axes[j].kind == _HIERARCHY:
            ancestors = dimensions[j].ancestors
            level = levels[j] - 1
            nodes = np.unique(ancestors[column.astype(np.int64), level])
            if len(nodes) < 2:
                continue
            # The first leaf (depth-first rank) of every child but the first: a record goes to the
            # last child whose first leaf is at most its own.
            firsts = np.searchsorted(ancestors[:, level], nodes[1:], side="left")
            return j, (firsts - 1).astype(np.float64)
        middle = (len(column) - 1) // 2
        median = np.partition(column, middle)[middle]
        if median >= column.max():
            continue
        return j, np.array([median], dtype=np.float64)
    return None


def plan_cuts(axes: Sequence[Axis], sample: np.ndarray, fragments: int) -> FragmentCuts:
    """Cut the sampled records' coordinates ``sample`` (q, s) into ``fragments`` boxes (see the module
    documentation)."""
    dimensions = [
        # a hierarchy axis has its hierarchy (Axis)
        _hierarchy_dimension(
            axis.name, pl.Series(axis.name, [], dtype=pl.String), cast(Hierarchy, axis.hierarchy)
        )
        if axis.kind == _HIERARCHY
        else None
        for axis in axes
    ]
    attribute, bounds, first_child, n_children = [-1], [np.zeros(0)], [-1], [0]
    members = {0: np.arange(sample.shape[1], dtype=np.int64)}
    heap = [(-sample.shape[1], 0)]
    leaves = 1
    while heap and leaves < fragments:
        size, node = heapq.heappop(heap)
        index = members.pop(node)
        if -size < 2:
            continue
        found = _cut(axes, dimensions, sample[:, index])
        if found is None:
            continue
        j, cut_bounds = found
        child = np.searchsorted(cut_bounds, sample[j, index], side="left")
        count = len(cut_bounds) + 1
        attribute[node], bounds[node] = j, cut_bounds
        first_child[node], n_children[node] = len(attribute), count
        for i in range(count):
            identifier = len(attribute)
            attribute.append(-1)
            bounds.append(np.zeros(0))
            first_child.append(-1)
            n_children.append(0)
            part = index[child == i]
            members[identifier] = part
            heapq.heappush(heap, (-len(part), identifier))
        leaves += count - 1
    attribute_array = np.asarray(attribute, dtype=np.int64)
    fragment = np.full(len(attribute), -1, dtype=np.int64)
    order: list[int] = []
    stack = [0]
    while stack:  # depth first, children in order
        node = stack.pop()
        if attribute_array[node] < 0:
            order.append(node)
        else:
            stack.extend(reversed(range(first_child[node], first_child[node] + n_children[node])))
    fragment[order] = np.arange(len(order))
    return FragmentCuts(
        axes=tuple(axes),
        attribute=attribute_array,
        bounds=tuple(bounds),
        first_child=np.asarray(first_child, dtype=np.int64),
        n_children=np.asarray(n_children, dtype=np.int64),
        fragment=fragment,
    )
