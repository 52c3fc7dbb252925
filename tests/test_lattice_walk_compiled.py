"""The compiled top-down walk of the lattice search under a suppression limit
(sdckit.anonymize._lattice_walk_compiled, sdckit._kernels_walk) against the Python loop it replaces.

Oracles: the same search walked by bounded_search's Python loop (every node evaluated one call at a
time, through the general path or the one-call evaluation, which tests/test_lattice_rollup.py holds to
the general path): the same nodes evaluated (count and candidates), the same optimum and value; and
the exhaustive search (every node evaluated) for the optimum."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.oracles import pruned_equals_exhaustive
from tests.test_recoding import problems

import sdckit.anonymize._lattice_walk as lattice_walk
import sdckit.anonymize._lattice_walk_compiled as walk_compiled
from sdckit import _kernels_walk
from sdckit.anonymize._lattice_search import Search
from sdckit.anonymize._lattice_walk import bounded_search
from sdckit.hierarchy import Hierarchy
from sdckit.models import (
    BasicBetaLikeness,
    DeltaDisclosure,
    DistinctLDiversity,
    EnhancedBetaLikeness,
    KAnonymity,
    TCloseness,
)
from sdckit.table import Table

MODELS = {
    "t": lambda: [TCloseness("s", 0.2, "equal")],
    "basic": lambda: [BasicBetaLikeness("s", 1.0)],
    "enhanced": lambda: [EnhancedBetaLikeness("s", 1.5)],
    "delta": lambda: [DeltaDisclosure("s", 2.0)],
    "t+l2": lambda: [TCloseness("s", 0.3, "equal"), DistinctLDiversity("s", 2)],
    "basic+delta": lambda: [BasicBetaLikeness("s", 2.0), DeltaDisclosure("s", 2.5)],
}


def walk(search: Search, compiled: bool, monkeypatch: pytest.MonkeyPatch):
    """bounded_search on ``search`` with the compiled walk or the Python loop; the best node, the
    statistics, and what the kernel returned each time it was entered."""
    calls: list[int] = []
    kernel = _kernels_walk.top_down_walk

    def counted(*arguments):
        index, code, node = kernel(*arguments)
        calls.append(code)
        return index, code, node

    with monkeypatch.context() as patch:
        patch.setattr(_kernels_walk, "top_down_walk", counted)
        if not compiled:
            patch.setattr(lattice_walk, "walks_top_down", lambda search: False)
        best, statistics = bounded_search(search, None, {}, None)
    return best, statistics, calls


def pair(problem, models, k: int, limit: float) -> tuple[Search, Search]:
    frame, names, hierarchies, _ = problem
    table = Table.from_frame(frame.drop("id"))
    return tuple(  # type: ignore[return-value]
        Search(table, names, [hierarchies[n] for n in names], [KAnonymity(k), *models], limit, "loss", None)
        for _ in "ab"
    )


def assert_same_walk(compiled: Search, python: Search, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    (best_c, stats_c, calls_c), (best_p, stats_p, calls_p) = (
        walk(compiled, True, monkeypatch),
        walk(python, False, monkeypatch),
    )
    assert calls_c[-1] == _kernels_walk.DONE and not calls_p
    assert (best_c.node is None) == (best_p.node is None)
    if best_c.node is not None:
        assert best_c.node.levels == best_p.node.levels
        assert best_c.value == best_p.value
        assert best_c.node.n_suppressed == best_p.node.n_suppressed
        assert np.array_equal(best_c.node.classes, best_p.node.classes)
    assert compiled.evaluations == python.evaluations
    assert stats_c == stats_p
    return calls_c


@settings(max_examples=40, deadline=None)
@given(problems(), st.sampled_from(sorted(MODELS)), st.integers(1, 6), st.sampled_from([0.02, 0.1, 0.3]))
def test_the_same_nodes_and_optimum_as_the_python_loop(problem, kind, k, limit):
    with pytest.MonkeyPatch.context() as monkeypatch:
        compiled, python = pair(problem, MODELS[kind](), k, limit)
        assert walk_compiled.walks_top_down(compiled)
        assert_same_walk(compiled, python, monkeypatch)


@settings(max_examples=25, deadline=None)
@given(problems(), st.sampled_from(["t", "delta", "t+l2"]), st.integers(1, 4), st.sampled_from([0.05, 0.3]))
def test_without_helpers_every_node_from_the_combinations(problem, kind, k, limit):
    """No budget for helper nodes: every node is grouped from the combinations in the kernel."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(walk_compiled, "BUDGET_BYTES", 0)
        compiled, python = pair(problem, MODELS[kind](), k, limit)
        assert_same_walk(compiled, python, monkeypatch)


@settings(max_examples=25, deadline=None)
@given(problems(), st.integers(1, 4), st.sampled_from([0.05, 0.3]))
def test_delta_on_the_boundary_goes_back_to_the_general_path(problem, k, limit):
    """δ set to a value |ln(q/p)| of the bottom node, as numpy computes it: the kernel hands those
    nodes back (numba's logarithm may differ in the last bit) and the general path judges them."""
    frame, names, hierarchies, _ = problem
    table = Table.from_frame(frame.drop("id"))
    probe = Search(
        table, names, [hierarchies[n] for n in names], [DeltaDisclosure("s", 1.0)], 0.0, "loss", None
    )
    bottom = probe.evaluate([0] * len(names))
    statistics = probe.statistics(bottom.classes, bottom.n_classes, bottom.sizes)
    achieved = DeltaDisclosure("s", 1.0).achieved(statistics)
    finite = achieved[np.isfinite(achieved) & (achieved > 0)]
    if not len(finite):
        return
    with pytest.MonkeyPatch.context() as monkeypatch:
        compiled, python = pair(problem, [DeltaDisclosure("s", float(finite.max()))], k, limit)
        codes = assert_same_walk(compiled, python, monkeypatch)
    if k == 1:  # nothing is tagged failing, the bottom node is evaluated: the kernel hands it back
        assert _kernels_walk.UNSURE in codes


@settings(max_examples=30, deadline=None)
@given(problems(), st.sampled_from(sorted(MODELS)), st.integers(1, 5), st.sampled_from([0.05, 0.2]))
def test_pruned_equals_exhaustive(problem, kind, k, limit):
    frame, names, hierarchies, _ = problem
    table = Table.from_frame(frame.drop("id"))
    pruned_equals_exhaustive(
        table,
        [KAnonymity(k), *MODELS[kind]()],
        quasi_identifiers=names,
        hierarchies={n: hierarchies[n] for n in names},
        suppression_limit=limit,
        metric="loss",
    )


def test_a_hand_computed_walk():
    # Two attributes, hierarchies leaf -> pair -> '*': every (x, y) in {a, b, c, d}^2 once except
    # (d, d), then (a, a), (b, b), (c, c) once more and (d, d) twice: 20 records, each x and y value 5
    # times; s = v on the two (d, d) records, u elsewhere (v's share 0.1). 2-anonymity and basic
    # 1-likeness (a class passes when v's share is at most 0.2) within 10% (2 records):
    # (0, 0) has 12 single records; (1, 0) and (0, 1) put (d, d) in a class of 3 (v 2/3), (1, 1) in
    # one of 6 (v 1/3), (2, 0) and (0, 2) in one of 5 (v 0.4): each would suppress 3 or more records.
    # (2, 1) and (1, 2) make two classes of 10 (v 0 and 0.2) and (2, 2) one of 20: nothing
    # suppressed. (1, 2) and (2, 1) lose the same (the data are symmetric in x and y), (2, 2) more;
    # ties go to the smaller levels: (1, 2).
    rows = [["a", "ab", "*"], ["b", "ab", "*"], ["c", "cd", "*"], ["d", "cd", "*"]]
    x, y = (Hierarchy.from_rows(name, rows) for name in ("x", "y"))
    pattern = [(xv, yv) for xv in "abcd" for yv in "abcd" if (xv, yv) != ("d", "d")]
    pattern += [("a", "a"), ("b", "b"), ("c", "c"), ("d", "d"), ("d", "d")]
    frame = pl.DataFrame(
        {"x": [p[0] for p in pattern], "y": [p[1] for p in pattern], "s": ["u"] * 18 + ["v"] * 2}
    )
    table = Table.from_frame(frame)
    models = [KAnonymity(2), BasicBetaLikeness("s", 1.0)]
    search = Search(table, ["x", "y"], [x, y], models, 0.1, "loss", None)
    assert walk_compiled.walks_top_down(search)
    with pytest.MonkeyPatch.context() as monkeypatch:
        best, _, calls = walk(search, True, monkeypatch)
    assert calls[-1] == _kernels_walk.DONE
    assert best.node is not None
    assert best.node.levels == (1, 2)
    assert best.node.n_suppressed == 0.0
    assert sorted(best.node.sizes.tolist()) == [10.0, 10.0]
    # k with distinct l-diversity alone (all monotone) keeps the Python loop
    monotone = Search(
        table, ["x", "y"], [x, y], [KAnonymity(2), DistinctLDiversity("s", 2)], 0.1, "loss", None
    )
    assert monotone._fused is not None and not walk_compiled.walks_top_down(monotone)
    for levels, suppressed in [((1, 1), 6.0), ((2, 0), 5.0), ((1, 0), 3.0), ((0, 0), 12.0)]:
        node = search.evaluate(levels)
        assert node.n_suppressed >= suppressed and not node.satisfied


@pytest.mark.parametrize("seed", [0, 1])
def test_a_large_lattice_returns_for_progress_and_equals_the_python_loop(seed):
    # 6 attributes of 27 leaves, 4 levels each (4,096 nodes), a sensitive attribute of 6 values, k=3
    # and 0.3-closeness within 5%: more than 64 evaluations, so the kernel also returns every 64
    # evaluations (progress, Ctrl-C) and resumes where it was.
    rng = np.random.default_rng(seed)
    names = [f"a{j}" for j in range(6)]
    leaves = [str(i) for i in range(27)]
    rows = [[leaf, f"g{int(leaf) // 3}", f"h{int(leaf) // 9}", "*"] for leaf in leaves]
    hierarchies = [Hierarchy.from_rows(name, rows) for name in names]
    columns = {name: rng.choice(leaves, size=3_000, p=rng.dirichlet(np.ones(27))) for name in names}
    columns["s"] = rng.choice(list("uvwxyz"), size=3_000, p=rng.dirichlet(np.ones(6)))
    table = Table.from_frame(pl.DataFrame(columns))
    runs = []
    with pytest.MonkeyPatch.context() as monkeypatch:
        for compiled in (True, False):
            models = [KAnonymity(3), TCloseness("s", 0.3, "equal")]
            search = Search(table, names, hierarchies, models, 0.05, "loss", None)
            reports: list[int] = []
            with monkeypatch.context() as patch:
                if not compiled:
                    patch.setattr(lattice_walk, "walks_top_down", lambda search: False)
                best, statistics = bounded_search(
                    search, lambda done, _, reports=reports: reports.append(done), {}, None
                )
            assert search.evaluations > 64 and reports  # progress reported along the way
            assert reports == sorted(reports)
            node = best.node
            assert node is not None
            runs.append((node.levels, best.value, node.n_suppressed, statistics, search.evaluations))
    assert runs[0] == runs[1]


@settings(max_examples=20, deadline=None)
@given(
    problems(),
    st.sampled_from(["t", "enhanced", "delta", "t+l2"]),
    st.integers(1, 4),
    st.sampled_from([0.05, 0.3]),
)
def test_hashed_grouping_and_sorted_triples_as_the_python_loop(problem, kind, k, limit):
    """The kernel's other paths, forced: a grouping table of one slot (every node's classes through the
    hash table) and no dense cells (every node's triples counted and sorted by aggregate_pairs)."""
    scratch = walk_compiled._scratch

    def small(count: int, n_triples: int, n_values: int) -> tuple[np.ndarray, ...]:
        arrays = list(scratch(count, n_triples, n_values))
        arrays[0] = np.full(1, -1, dtype=np.int32)
        arrays[4], arrays[5] = np.zeros(0), np.zeros(0, dtype=np.bool_)
        return tuple(arrays)

    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(walk_compiled, "_scratch", small)
        compiled, python = pair(problem, MODELS[kind](), k, limit)
        assert_same_walk(compiled, python, monkeypatch)


def test_a_helper_built_from_a_helper_below_as_from_the_combinations():
    # The helper at levels (1, 1, 0, ...) built from the combinations and from the helper (1, 0, 0, ...)
    # pooled before it: the same classes in the same order, sizes, triples and codes at levels >= 1.
    rng = np.random.default_rng(3)
    names = [f"a{j}" for j in range(4)]
    leaves = [str(i) for i in range(27)]
    rows = [[leaf, f"g{int(leaf) // 3}", f"h{int(leaf) // 9}", "*"] for leaf in leaves]
    hierarchies = [Hierarchy.from_rows(name, rows) for name in names]
    columns = {name: rng.choice(leaves, size=2_000) for name in names}
    columns["s"] = rng.choice(list("uvwxyz"), size=2_000)
    table = Table.from_frame(pl.DataFrame(columns))
    search = Search(table, names, hierarchies, [KAnonymity(3), TCloseness("s", 0.3)], 0.05, "loss", None)
    fused, combinations = search._fused, search.combinations
    assert fused is not None and search.stack is not None
    count = len(combinations.counts)
    pair_classes, pair_values, pair_counts = combinations.sensitive["s"][:3]
    bottom = (pair_classes.astype(np.int64), pair_values.astype(np.int32), pair_counts.astype(np.float64))
    models = (search._level_counts, fused.n_values, fused.overall, fused.log_overall, float(fused.k))
    models += (fused.kinds, fused.limits, fused.monotone)
    scratch = walk_compiled._scratch(count, len(pair_classes), fused.n_values)
    pools = walk_compiled._Pools(search, 4 * count, 4 * len(pair_classes)).arrays()
    counters = np.zeros(5, dtype=np.int64)
    low, high = np.array([1, 0, 0, 0]), np.array([1, 1, 0, 0])
    sizes = np.ascontiguousarray(combinations.counts, dtype=np.float64)
    for levels in (low, high):  # slots 0 and 1: from the combinations
        _kernels_walk._build_helper(
            search.stack, 0, count, sizes, bottom, levels, models, scratch, pools, counters
        )
    codes, pool_sizes, classes, values, counts, class_start, triple_start, _ = pools
    d, depth = search.stack.shape[:2]
    n_low = int(class_start[1])
    source = codes[: n_low * d * depth].reshape((d, depth, n_low))
    triples = tuple(array[: triple_start[1]] for array in (classes, values, counts))
    _kernels_walk._build_helper(source, 0, n_low, pool_sizes, triples, high, models, scratch, pools, counters)
    n = int(class_start[2] - class_start[1])
    assert 0 < n < n_low and int(class_start[3] - class_start[2]) == n
    one, two = (
        slice(int(class_start[1]), int(class_start[2])),
        slice(int(class_start[2]), int(class_start[3])),
    )
    assert np.array_equal(pool_sizes[one], pool_sizes[two])
    first, second = (slice(int(triple_start[s]), int(triple_start[s + 1])) for s in (1, 2))
    for array in (classes, values, counts):
        assert np.array_equal(array[first], array[second])
    width = d * depth
    blocks = [
        codes[start * width : (start + n) * width].reshape((d, depth, n)) for start in (one.start, two.start)
    ]
    assert np.array_equal(blocks[0][:, 1:], blocks[1][:, 1:])  # every level >= 1 is written in both
