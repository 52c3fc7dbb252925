"""The classification metric's lower bound under k-anonymity alone (issue 38): a class of at least k
records is kept in every generalization (its class there contains it), so it is charged as kept and
saves nothing by suppression (:func:`sdckit.utility.objectives._classification_bound` with ``k``).

* By hand on five records: the bound with k is twice the one without.
* The oracle, on random small tables (no record weights, whole weights, fractional weights; k 1-4;
  limits 0-40%; every gs-factor): the bound at every node is at most the value of the node and of
  every generalization of it within the limit, at least the bound without k, and the pruned search
  finds the exhaustive search's node, value and suppressed records.
* Other models than k-anonymity: the bound is the one without k.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oracles import pruned_equals_exhaustive
from sdckit.anonymize._lattice_search import Search
from sdckit.hierarchy import Hierarchy
from sdckit.models import DistinctLDiversity, KAnonymity
from sdckit.table import Table
from sdckit.utility.objectives import MetricOptions, search_metric
from test_recoding import hierarchies_strategy

A = Hierarchy.from_rows("a", [["x", "xy", "*"], ["y", "xy", "*"], ["z", "zw", "*"], ["w", "zw", "*"]])
B = Hierarchy.from_rows("b", [["p", "*"], ["q", "*"]])
FIVE = pl.DataFrame(
    {
        "a": ["x", "x", "y", "z", "w"],
        "b": ["p", "p", "p", "q", "q"],
        "t": ["A", "B", "A", "A", "B"],
    }
)


def bounds_with_and_without_k(search: Search, node) -> tuple[float, float]:
    """The search's classification bound at ``node`` (with its k) and the same bound without k."""
    bound = search.metric.lower_bound_function
    plain = search_metric("classification", bound.keywords["gs_factor"], None, bound.keywords["target"])
    without = plain.lower_bound(node.view(search, suppress=False), search.max_suppressed)
    return search.lower_bound(node), without


def test_bound_by_hand():
    # Node (0, 0), k = 2, gs-factor 0.25 (pS 0.25, pI 1, pN 0.5, pMax 1), limit 0.6 (3 records):
    # (x,p) A,B costs min(1·1, 0.5·2) = 1 kept; the single records (y,p) A, (z,q) A, (w,q) B cost 0.
    # Without k (x,p) may be suppressed: min(0.25·2, 1) = 0.5, or 1 less its saving (1 - 0.5 for its
    # two records, within 3): 0.5/5 = 0.1. With k, (x,p) holds 2 records: kept everywhere, 1/5 = 0.2.
    # The values above (0, 0) within the limit: (0,0) and (0,1) 0.35 (3 x 0.25 + 0.5·2), the others 0.4.
    search = Search(
        Table.from_frame(FIVE),
        ["a", "b"],
        [A, B],
        [KAnonymity(2)],
        0.6,
        "classification",
        None,
        MetricOptions(target="t", gs_factor=0.25),
    )
    with_k, without = bounds_with_and_without_k(search, search.evaluate([0, 0]))
    assert with_k == pytest.approx(0.2, rel=1e-11)
    assert without == pytest.approx(0.1, rel=1e-11)
    values = [search.value(search.evaluate(levels)) for levels in ([0, 0], [0, 1], [1, 0], [1, 1], [2, 1])]
    assert values == pytest.approx([0.35, 0.35, 0.4, 0.4, 0.4])


def test_other_models_keep_the_bound_without_k():
    # Distinct 2-diversity of b (a union of 2-diverse classes is 2-diverse, but a class of 2 records
    # may fail it): the bound does not read k.
    search = Search(
        Table.from_frame(FIVE.with_columns(s=pl.Series(["u", "v", "u", "v", "u"]))),
        ["a", "b"],
        [A, B],
        [KAnonymity(2), DistinctLDiversity("s", 2)],
        0.6,
        "classification",
        None,
        MetricOptions(target="t", gs_factor=0.25),
    )
    assert search.metric.lower_bound_function.keywords["k"] is None
    with_k, without = bounds_with_and_without_k(search, search.evaluate([0, 0]))
    assert with_k == without == pytest.approx(0.1, rel=1e-11)


@st.composite
def problems(draw):
    """A random table of 2-3 quasi-identifiers and a target of 2-3 values, its record weights (none,
    whole numbers or fractions), k, the suppression limit and the gs-factor. Small tables, k of 3 or
    4 and gs-factor 0.25 mostly: many small classes mixing the target's values, each suppressed
    cheaper than kept, where a bound counting too many classes as kept is found out (one counting
    every class of 2k/3 records or more as kept fails about 1 draw in 20 here, 1 in 400 with the
    strategy of tests/test_metric_options.py)."""
    names = [f"q{j}" for j in range(draw(st.integers(2, 3)))]
    hierarchies = {name: draw(hierarchies_strategy(name)) for name in names}
    n = draw(st.integers(10, 50))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    columns = {}
    for name in names:
        leaves = np.array(hierarchies[name].labels[0])
        shares = rng.dirichlet(np.full(len(leaves), draw(st.sampled_from([0.3, 1.0, 5.0]))))
        columns[name] = leaves[rng.choice(len(leaves), size=n, p=shares)].tolist()
    columns["t"] = [chr(ord("a") + v) for v in rng.choice(draw(st.sampled_from([2, 2, 3])), size=n)]
    kind = draw(st.sampled_from(["none", "none", "whole", "fractional"]))
    weights = None
    if kind == "whole":
        weights = rng.integers(1, 4, size=n).astype(np.float64)
    elif kind == "fractional":
        weights = rng.uniform(0.3, 2.5, size=n)
    k = draw(st.sampled_from([1, 2, 3, 3, 4, 4]))
    limit = draw(st.sampled_from([0.0, 0.1, 0.2, 0.4, 0.4]))
    gs = draw(st.sampled_from([0.0, 0.25, 0.25, 0.25, 0.5, 0.8, 1.0]))
    return pl.DataFrame(columns), names, hierarchies, weights, k, limit, gs


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_bound_is_below_every_generalization_and_above_the_bound_without_k(problem):
    frame, names, hierarchies, weights, k, limit, gs = problem
    search = Search(
        Table.from_frame(frame),
        names,
        [hierarchies[n] for n in names],
        [KAnonymity(k)],
        limit,
        "classification",
        weights,
        MetricOptions(target="t", gs_factor=gs),
    )
    assert search.metric.lower_bound_function.keywords["k"] == search.k_only
    nodes = [search.evaluate(search.levels_of(v)) for v in range(search.size)]
    within = np.array([node.n_suppressed <= search.max_suppressed + 1e-9 for node in nodes])
    values = np.array([search.value(node) if ok else np.inf for node, ok in zip(nodes, within, strict=True)])
    for v in range(search.size):
        with_k, without = bounds_with_and_without_k(search, search.evaluate(search.levels_of(v)))
        assert with_k >= without
        assert with_k <= values[search.generalizations(v)].min() + 1e-12


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_pruned_search_equals_exhaustive_search(problem):
    frame, names, hierarchies, weights, k, limit, gs = problem
    pruned_equals_exhaustive(
        Table.from_frame(frame),
        [KAnonymity(k)],
        quasi_identifiers=names,
        hierarchies=hierarchies,
        suppression_limit=limit,
        metric="classification",
        target="t",
        gs_factor=gs,
        weights=weights,
    )


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_one_compiled_call_gives_the_table_and_bound_of_the_separate_kernels(problem):
    """class_target_bound: the (class x value) table kept for the value, and the same bound as
    class_target_table, numpy's row sums and classification_bound (rows of fewer than 8 cells: the
    same sums)."""
    from sdckit._kernels_objectives import class_target_table, classification_bound
    from sdckit.utility import objectives

    frame, names, hierarchies, weights, k, limit, gs = problem
    search = Search(
        Table.from_frame(frame),
        names,
        [hierarchies[n] for n in names],
        [KAnonymity(k)],
        limit,
        "classification",
        weights,
        MetricOptions(target="t", gs_factor=gs),
    )
    target = search.metric.lower_bound_function.keywords["target"]
    pS, (pI, pN) = gs, objectives.factors(gs)
    kept_size = search.k_only if target.whole else search.k_only + 1e-9 * max(1.0, search.k_only)
    for v in range(search.size):
        node = search.evaluate(search.levels_of(v))
        objectives._LAST_TABLE[0] = None
        bound = search.lower_bound(node)
        classes = np.asarray(node.classes)
        table = class_target_table(
            classes, target.combination, target.values, target.counts, node.n_classes, target.width
        )
        kept = objectives._LAST_TABLE[0]
        assert kept[0] is node.classes
        for ours, theirs in zip(kept[2], table, strict=True):
            assert np.array_equal(ours, theirs)
        sizes = table[0].sum(axis=1)
        least, capped = classification_bound(
            sizes, table[1], pS, pI, pN, search.max_suppressed + 1e-9, kept_size
        )
        expected = max(least, capped - 1e-12 * sizes.sum()) / (max(pS, pI, pN) * search.n_records)
        # the records summed in another order (a term of 1e-12 of them), n as the view sums it
        assert bound == pytest.approx(expected * (1.0 - 1e-12), rel=1e-13, abs=0.0)
