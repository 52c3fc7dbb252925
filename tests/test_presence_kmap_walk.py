"""The compiled bounded walk without suppression under δ-presence and k-map against a population table
(:meth:`sdckit.anonymize._lattice_subset.SubsetNodes.walk`, :mod:`sdckit._kernels_subset_walk`).

* Run with no cutoff, it decides every node of random lattices: each node it evaluated is tagged as
  the general path (the models' own evaluation) judges it, each node it did not evaluate fails there,
  and each node it offers is the general path's node (classes, sizes, verdicts, first combinations).
* The whole search with the walk compiled and as before (the Python loop over the compiled nodes):
  the same optimum, value, evaluations and candidates, and the same nodes offered in the same order,
  with a ring of 64 kept nodes and of one.
"""

from __future__ import annotations

import contextlib
import math
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from sdckit import _kernels_lattice
from sdckit.anonymize import _lattice_subset
from sdckit.anonymize._lattice_search import Search
from sdckit.anonymize._lattice_subset import SubsetNodes
from sdckit.anonymize._lattice_walk import Best
from sdckit.anonymize.recoding import GeneralizeFigures, full_domain_generalization
from sdckit.errors import ConfigError
from sdckit.models.kmap import EstimatedKMap
from sdckit.models.presence import DeltaPresence, subset_weights
from sdckit.table import Table
from test_presence_kmap import problems

SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)


def ring(large: bool):
    """The compiled walk keeping its 64 last nodes with few classes, or only the last one."""
    return mock.patch.object(_lattice_subset, "_WALK_SOURCES", 64 if large else 1)


@SETTINGS
@given(problems(), st.booleans())
def test_the_walk_without_a_cutoff_decides_every_node_as_the_general_path(problem, large):
    frame, names, hierarchies, models = problem
    assume(not any(isinstance(m, EstimatedKMap) for m in models))
    assume((frame.get_column("study") == "yes").any())
    table = Table.from_frame(frame)
    inside = subset_weights(table, models, None)
    chosen = [hierarchies[n] for n in names]
    fast, slow = (Search(table, names, chosen, models, 0.0, "loss", inside) for _ in "ab")
    assert fast._subset is not None and fast._subset.walks(fast)
    slow._subset = None
    bounds = fast.level_bounds()
    order = np.lexsort((fast.heights, bounds))
    rank = _kernels_lattice.successor_bounds(bounds, fast.level_matrix, fast.strides, fast.max_levels)
    status = np.zeros(fast.size, dtype=np.int8)
    evaluated = np.zeros(fast.size, dtype=bool)
    offered: list = []
    with ring(large):
        fast._subset.walk(
            fast, order, bounds[order], bounds, rank, status, evaluated, lambda: math.inf,
            lambda node, result: offered.append((node, result)),
        )  # fmt: skip
    truth = {int(v): slow.evaluate(slow.levels_of(int(v))) for v in range(fast.size)}
    for v, node in truth.items():
        if evaluated[v]:
            assert status[v] == (1 if node.monotone_ok else -1), (v, node.levels)
        else:
            assert status[v] == -1 and not node.monotone_ok, (v, node.levels)
    assert fast.evaluations == int(evaluated.sum())
    expected = [v for v in order.tolist() if evaluated[v] and truth[v].satisfied]
    assert sorted(v for v, _ in offered) == sorted(expected)
    for v, node in offered:
        general = truth[v]
        assert node.levels == general.levels and node.satisfied and node.monotone_ok
        assert np.array_equal(node.classes, general.classes) and np.array_equal(node.sizes, general.sizes)
        assert np.array_equal(node.passes, general.passes) and node.n_suppressed == general.n_suppressed == 0
        assert np.array_equal(node.first, np.unique(general.classes, return_index=True)[1])


def search_run(table, models, arguments, compiled: bool):
    """The release and the (levels, value) of every node offered, in order."""
    offers: list = []
    original = Best.offer

    def recording(best, node, value):
        offers.append((node.levels, value, node.n_classes, node.sizes.tolist()))
        original(best, node, value)

    with contextlib.ExitStack() as stack:
        stack.enter_context(mock.patch.object(Best, "offer", recording))
        if not compiled:
            stack.enter_context(mock.patch.object(SubsetNodes, "walks", return_value=False))
        return full_domain_generalization(table, models, **arguments), offers


@SETTINGS
@given(
    problems(), st.sampled_from([0.0, 0.0, 0.05]), st.sampled_from(["loss", "entropy", "ncp"]), st.booleans()
)
def test_the_compiled_walk_finds_what_the_python_loop_finds(problem, limit, metric, large):
    frame, names, hierarchies, models = problem
    table = Table.from_frame(frame)
    arguments = dict(quasi_identifiers=names, hierarchies=hierarchies, suppression_limit=limit, metric=metric)
    try:
        with ring(large):
            fast, fast_offers = search_run(table, models, arguments, compiled=True)
    except ConfigError as error:
        assert "cannot be satisfied" in str(error) or "marks no record" in str(error)
        with pytest.raises(ConfigError):
            search_run(table, models, arguments, compiled=False)
        return
    slow, slow_offers = search_run(table, models, arguments, compiled=False)
    assert fast.levels == slow.levels and fast.n_suppressed == slow.n_suppressed
    figures, before = (release.figures_as(GeneralizeFigures).search for release in (fast, slow))
    assert figures == before
    assert fast_offers == slow_offers
    assert np.array_equal(fast.classes, slow.classes)
    assert fast.table.data.equals(slow.table.data)


def test_which_searches_walk_compiled():
    """The models the compiled walk takes: δ-presence and k-map without suppression, one-sided
    δ-presence at a limit (searched without suppression); not k-map with suppression."""
    import polars as pl

    from sdckit.hierarchy import Hierarchy
    from sdckit.models.kmap import KMap

    age = Hierarchy.from_rows(
        "age", [["1", "1-2", "*"], ["2", "1-2", "*"], ["3", "3-4", "*"], ["4", "3-4", "*"]]
    )
    frame = pl.DataFrame({"age": ["1", "2", "3", "4"] * 5, "study": ["yes", "no", "no", "no", "no"] * 4})
    table = Table.from_frame(frame)
    for models, limit, walks in [
        ([DeltaPresence("study", 0.0, 0.5)], 0.0, True),
        ([DeltaPresence("study", 0.0, 0.5)], 0.05, True),
        ([KMap(3, "study")], 0.0, True),
        ([KMap(3, "study")], 0.05, False),
    ]:
        inside = subset_weights(table, models, None)
        search = Search(table, ["age"], [age], models, limit, "loss", inside)
        assert search._subset is not None and search._subset.walks(search) is walks


def population_pairs_by_numpy(combination, values, counts, members, record_combination, combination_counts):
    """The pairs' records as numpy derived them before the compiled pass (None where it does not apply)."""
    n_combinations, n_values = len(combination_counts), len(members)
    inside = members[values]
    if np.count_nonzero(np.bincount(values[~inside], minlength=n_values)) > 1 or np.any(counts[~inside] != 0):
        return None
    people = np.bincount(record_combination, minlength=n_combinations)
    per_combination = np.bincount(combination[inside], weights=counts[inside], minlength=n_combinations)
    derived = counts.astype(np.float64, copy=True)
    derived[~inside] = people[combination[~inside]] - per_combination[combination[~inside]]
    if np.any(derived[~inside] <= 0) or not np.array_equal(per_combination, combination_counts):
        return None
    return derived, np.bincount(values, weights=derived, minlength=n_values)


@given(
    st.integers(0, 2**32 - 1),
    st.sampled_from(["subset", "several outside values", "outside counted", "other weights"]),
)
def test_population_pairs_equal_numpy(seed, case):
    """The one-pass derivation of the research-subset column's population counts
    (_kernels_subset.population_pairs) against numpy's, where it applies and where it does not."""
    from sdckit import _kernels_subset

    rng = np.random.default_rng(seed)
    n, n_combinations = int(rng.integers(1, 60)), int(rng.integers(1, 8))
    record_combination = rng.integers(0, n_combinations, size=n).astype(np.int32)
    present = np.unique(record_combination)
    record_combination = np.searchsorted(present, record_combination).astype(np.int32)
    n_combinations = len(present)
    marks = rng.random(n) < 0.4
    members = np.array([False, True, False] if case == "several outside values" else [False, True])
    value = np.where(marks, 1, 0 if case != "several outside values" else rng.choice([0, 2], size=n))
    weights = marks.astype(np.float64)
    if case == "other weights":
        weights = weights * 2
    cells = record_combination.astype(np.int64) * len(members) + value
    pairs, inverse = np.unique(cells, return_inverse=True)
    counts = np.bincount(inverse, weights=weights)
    if case == "outside counted":
        counts = counts + (~members[pairs % len(members)])
    combination, values = pairs // len(members), (pairs % len(members)).astype(np.int32)
    combination_counts = np.bincount(record_combination, weights=weights, minlength=n_combinations)
    kept = counts.copy()
    applies, derived, sums = _kernels_subset.population_pairs(
        combination, values, counts, members, record_combination, combination_counts, len(members)
    )
    expected = population_pairs_by_numpy(
        combination, values, counts, members, record_combination, combination_counts
    )
    assert np.array_equal(counts, kept)  # the counts are not written over
    assert applies is (expected is not None)
    if expected is not None:
        assert np.array_equal(derived, expected[0]) and np.array_equal(sums, expected[1])
    if case == "subset":  # every pair's records
        assert applies and np.array_equal(derived, np.bincount(inverse, minlength=len(pairs)))
    subset, people = _kernels_subset.subset_and_people(combination, values, counts, members, n_combinations)
    inside = members[values]
    assert np.array_equal(
        subset, np.bincount(combination[inside], weights=counts[inside], minlength=n_combinations)
    )
    assert np.array_equal(people, np.bincount(combination, weights=counts, minlength=n_combinations))
