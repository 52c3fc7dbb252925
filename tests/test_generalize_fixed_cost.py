"""The fixed cost of a full-domain generalization call (issue 38): the shortcuts taken for every call
give what the longer ways gave.

* ``Search.loss_bounds``' table of ARX Loss per (attribute, level) (``Search._loss_per_level``, one
  dot product each) against ``loss_per_attribute`` of the unsuppressed view at every level, bit for bit.
* ``Search.value`` of Loss without suppression reads each attribute's term from the table
  ``Search.loss_bounds`` measured (``Search._loss_levels``): equal, bit for bit, to the metric
  computed on the node's view, at every node of random problems and of a hand-computed one.
* ``_kernels_release.release_records`` (a pass for the classes, then one per attribute) against
  numpy gathers of the same arrays, with and without suppressed classes.
"""

from __future__ import annotations

import numpy as np
import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.test_recoding import problems

from sdckit import _kernels_release
from sdckit.anonymize._lattice_search import Search
from sdckit.hierarchy import Hierarchy
from sdckit.models import KAnonymity
from sdckit.table import Table
from sdckit.utility.metrics import METRICS, loss_per_attribute


def _search(frame: pl.DataFrame, names, hierarchies, k: int = 2) -> Search:
    table = Table.from_frame(frame)
    return Search(table, names, [hierarchies[n] for n in names], [KAnonymity(k)], 0.0, "loss", None)


def _metric_value(search: Search, levels: tuple[int, ...]) -> float:
    """Loss of the node at ``levels`` as the metric computes it on the node's view (nothing suppressed)."""
    return float(search.metric.value(search._unsuppressed_view(levels)))


def _passing_node(search: Search, levels: tuple[int, ...]):
    node = search.node_k(levels)
    node.passes = np.ones_like(node.passes)  # value reads the table only when nothing is suppressed
    return node


def test_loss_value_from_the_bounds_table_by_hand() -> None:
    # x: leaves a, b, c under one parent {a, b} and c at level 1, '*' at 2; y: leaves u, v, '*' at 1.
    x = Hierarchy.from_rows("x", [["a", "ab", "*"], ["b", "ab", "*"], ["c", "c", "*"]])
    y = Hierarchy.from_rows("y", [["u", "*"], ["v", "*"]])
    frame = pl.DataFrame({"x": ["a", "a", "b", "c"], "y": ["u", "v", "v", "v"]})
    search = _search(frame, ["x", "y"], {"x": x, "y": y})
    assert search._loss_levels is None
    search.level_bounds()
    table = search._loss_levels
    assert table is not None
    # Loss of x at level 1: records a, a, b lie under 'ab' (2 leaves of 3): (2 - 1) / (3 - 1) each, c
    # alone: 0; mean over 4 records = 3 * 0.5 / 4. At level 2 every record: 1. y at level 1: 1.
    np.testing.assert_array_equal(table[0], [0.0, 0.375, 1.0])
    np.testing.assert_array_equal(table[1, :2], [0.0, 1.0])
    value = search.value(_passing_node(search, (1, 1)))
    assert value == float(np.exp(np.mean(np.log1p([0.375, 1.0]))) - 1.0)
    assert value == _metric_value(search, (1, 1))


@settings(max_examples=40, deadline=None)
@given(problems())
def test_loss_value_from_the_bounds_table_equals_the_metric(problem) -> None:
    frame, names, hierarchies, _ = problem
    search = _search(frame.drop("id", "s"), names, hierarchies)
    assert search.metric is METRICS["loss"]
    search.level_bounds()
    assert search._loss_levels is not None
    for node in range(search.size):
        levels = search.levels_of(node)
        assert search.value(_passing_node(search, levels)) == _metric_value(search, levels)


@settings(max_examples=40, deadline=None)
@given(problems())
def test_loss_table_equals_loss_per_attribute_of_each_level(problem) -> None:
    frame, names, hierarchies, _ = problem
    search = _search(frame.drop("id", "s"), names, hierarchies)
    table = search._loss_per_level()
    for level in range(table.shape[1]):
        view = search._unsuppressed_view(tuple(min(level, int(m)) for m in search.max_levels))
        expected = np.array(list(loss_per_attribute(view).values()), dtype=np.float64)
        assert table[:, level].tobytes() == expected.tobytes()


def _release_oracle(record_combination, combination_class, passes, codes, code_penalty, star):
    cls = combination_class[record_combination]
    kept = passes[cls]
    released = codes[:, record_combination].astype(np.uint32)
    released[:, ~kept] = np.asarray(star, dtype=np.uint32)[:, None]
    penalty = np.stack([code_penalty[j, codes[j, record_combination]] for j in range(len(codes))], axis=1)
    penalty[~kept] = 1.0
    cells = np.repeat((~kept)[:, None], len(codes), axis=1)
    return np.where(kept, cls, -1).astype(np.int64), ~kept, penalty, released, cells


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 300), st.integers(1, 6), st.sampled_from([0.0, 0.3, 1.0]))
def test_release_records_against_numpy(seed: int, n: int, q: int, failing: float) -> None:
    rng = np.random.default_rng(seed)
    count = int(rng.integers(1, n + 1))
    n_classes = int(rng.integers(1, count + 1))
    record_combination = rng.integers(0, count, size=n).astype(np.int32)
    combination_class = rng.integers(0, n_classes, size=count).astype(np.int32)
    passes = rng.random(n_classes) >= failing
    nodes = rng.integers(1, 8, size=q)
    codes = np.stack([rng.integers(0, nodes[j], size=count) for j in range(q)]).astype(np.int32)
    code_penalty = rng.random((q, int(nodes.max()) + 1))
    star = nodes.astype(np.int64)  # '*' after the level's nodes
    out = (
        np.full(n, 7, dtype=np.int64),
        np.zeros(n, dtype=bool),
        np.full((n, q), np.nan),
        np.full((q, n), 99, dtype=np.uint32),
        np.zeros((n, q), dtype=bool),
    )
    _kernels_release.release_records(
        record_combination, combination_class, passes, codes, code_penalty, star, *out
    )
    for got, expected in zip(
        out,
        _release_oracle(record_combination, combination_class, passes, codes, code_penalty, star),
        strict=True,
    ):
        np.testing.assert_array_equal(got, expected)
