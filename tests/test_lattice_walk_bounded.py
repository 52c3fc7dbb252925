"""The compiled bounded walk without suppression for k with models on one sensitive attribute
(sdckit._kernels_bounded, driven by sdckit.anonymize._lattice_walk._walk_models_compiled) against the
Python loop it replaces.

Oracles: the same search walked by bounded_search's Python loop (every node evaluated one call at a
time through the one-call evaluation, which tests/test_lattice_rollup.py holds to the general path):
the same nodes evaluated, the same statistics, the same optimum, value, classes and suppressed
records; the exhaustive search for the optimum; a hand-computed lattice."""

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
from sdckit import _kernels_bounded
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
    "l2": lambda: [DistinctLDiversity("s", 2)],
    "l3": lambda: [DistinctLDiversity("s", 3)],
    "t": lambda: [TCloseness("s", 0.2, "equal")],
    "basic": lambda: [BasicBetaLikeness("s", 1.0)],
    "enhanced": lambda: [EnhancedBetaLikeness("s", 1.5)],
    "t+l2": lambda: [TCloseness("s", 0.3, "equal"), DistinctLDiversity("s", 2)],
}


def walk(search: Search, compiled: bool, progress=None):
    """bounded_search on ``search`` with the compiled walk or the Python loop; the best node, the
    statistics, and how many times the kernel was entered."""
    calls: list[bool] = []
    kernel = _kernels_bounded.bounded_walk_models

    def counted(*arguments):
        result = kernel(*arguments)
        calls.append(result[2])
        return result

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_kernels_bounded, "bounded_walk_models", counted)
        if not compiled:
            patch.setattr(lattice_walk, "walks_models_compiled", lambda search: False)
        best, statistics = bounded_search(search, progress, {}, None)
    return best, statistics, calls


def searches(table: Table, names, hierarchies, models, k: int) -> tuple[Search, Search]:
    return tuple(  # type: ignore[return-value]
        Search(table, names, hierarchies, [KAnonymity(k), *models()], 0.0, "loss", None) for _ in "ab"
    )


def assert_same_walk(compiled: Search, python: Search) -> list[bool]:
    assert lattice_walk.walks_models_compiled(compiled)
    best_c, stats_c, calls_c = walk(compiled, True)
    best_p, stats_p, calls_p = walk(python, False)
    assert calls_c and calls_c[-1] and not calls_p  # the kernel ran to its end, only in the first
    assert (best_c.node is None) == (best_p.node is None)
    if best_c.node is not None:
        assert best_p.node is not None
        assert best_c.node.levels == best_p.node.levels
        assert best_c.value == best_p.value
        assert best_c.node.n_suppressed == best_p.node.n_suppressed == 0.0
        assert np.array_equal(best_c.node.classes, best_p.node.classes)
        assert np.array_equal(best_c.node.sizes, best_p.node.sizes)
    assert compiled.evaluations == python.evaluations
    assert stats_c == stats_p
    return calls_c


@settings(max_examples=60, deadline=None)
@given(problems(), st.sampled_from(sorted(MODELS)), st.integers(1, 6))
def test_the_same_nodes_and_optimum_as_the_python_loop(problem, kind, k):
    frame, names, hierarchies, _ = problem
    table = Table.from_frame(frame.drop("id"))
    assert_same_walk(*searches(table, names, [hierarchies[n] for n in names], MODELS[kind], k))


@settings(max_examples=25, deadline=None)
@given(problems(), st.sampled_from(["l2", "t", "t+l2"]), st.integers(1, 4))
def test_hashed_grouping_and_no_pooled_source_as_the_python_loop(problem, kind, k):
    """The kernel's other paths, forced: a grouping table of one slot (every node's classes through the
    hash table) and pools without room (every node grouped from the combinations)."""
    frame, names, hierarchies, _ = problem
    table = Table.from_frame(frame.drop("id"))
    scratch, pools = walk_compiled._scratch, walk_compiled._Pools

    def small(count: int, n_triples: int, n_values: int) -> tuple[np.ndarray, ...]:
        arrays = list(scratch(count, n_triples, n_values))
        arrays[0] = np.full(1, -1, dtype=np.int32)
        return tuple(arrays)

    rolled_up = []
    for patched in ("_scratch", "_Pools"):
        with pytest.MonkeyPatch.context() as monkeypatch:
            if patched == "_scratch":
                monkeypatch.setattr(lattice_walk, "_scratch", small)
            else:
                monkeypatch.setattr(lattice_walk, "_Pools", lambda search, _, __: pools(search, 0, 0))
            compiled, python = searches(table, names, [hierarchies[n] for n in names], MODELS[kind], k)
            assert_same_walk(compiled, python)
            rolled_up.append(compiled.rolled_up)
    assert rolled_up[1] == 0  # nothing pooled, nothing rolled up


@settings(max_examples=30, deadline=None)
@given(problems(), st.sampled_from(sorted(MODELS)), st.integers(1, 5))
def test_pruned_equals_exhaustive(problem, kind, k):
    frame, names, hierarchies, _ = problem
    pruned_equals_exhaustive(
        Table.from_frame(frame.drop("id")),
        [KAnonymity(k), *MODELS[kind]()],
        quasi_identifiers=names,
        hierarchies={n: hierarchies[n] for n in names},
        suppression_limit=0.0,
        metric="loss",
    )


def census(seed: int, records: int = 4_000) -> tuple[Table, list[str], list[Hierarchy]]:
    """Adult-like data: skewed attributes of different depths (an age of 64 years in 5-, 10-, 20-year
    bands, a country of 27 in 9 regions and 3 continents, four of 8 values in pairs, a sex) and a
    sensitive occupation of 12 values whose shares depend on the first attribute."""
    rng = np.random.default_rng(seed)
    ages = [str(a) for a in range(17, 81)]
    age = Hierarchy.from_rows(
        "age", [[a, f"{int(a) // 5}", f"{int(a) // 10}", f"{int(a) // 20}", "*"] for a in ages]
    )
    places = [str(p) for p in range(27)]
    country = Hierarchy.from_rows("country", [[p, f"r{int(p) // 3}", f"c{int(p) // 9}", "*"] for p in places])
    eight = [str(v) for v in range(8)]
    rows8 = [[v, f"p{int(v) // 2}", f"h{int(v) // 4}", "*"] for v in eight]
    small = [Hierarchy.from_rows(f"a{j}", rows8) for j in range(4)]
    sex = Hierarchy.from_rows("sex", [["f", "*"], ["m", "*"]])
    age_codes = rng.choice(len(ages), size=records, p=rng.dirichlet(np.full(len(ages), 2.0)))
    columns = {
        "age": [ages[a] for a in age_codes],
        "country": rng.choice(places, size=records, p=rng.dirichlet(np.full(27, 0.3))),
        "sex": rng.choice(["f", "m"], size=records),
    }
    for j in range(4):
        columns[f"a{j}"] = rng.choice(eight, size=records, p=rng.dirichlet(np.full(8, 1.0)))
    shares = rng.dirichlet(np.ones(12), size=4)
    columns["s"] = [f"o{rng.choice(12, p=shares[a * 4 // len(ages)])}" for a in age_codes]
    names = ["age", "country", "sex", "a0", "a1", "a2", "a3"]
    return Table.from_frame(pl.DataFrame(columns)), names, [age, country, sex, *small]


@pytest.mark.parametrize(
    ("seed", "kind", "k"), [(0, "l3", 5), (1, "t", 5), (2, "t+l2", 3), (3, "basic", 2), (4, "enhanced", 10)]
)
def test_adult_like_data_and_progress_as_the_python_loop(seed, kind, k):
    # 5 x 4 x 2 x 4^4 = 10,240 nodes and more than 64 evaluations: the kernel also returns every 64
    # evaluations (progress, Ctrl-C) and resumes where it was; the reports go up.
    table, names, hierarchies = census(seed)
    runs = []
    for compiled in (True, False):
        search = Search(table, names, hierarchies, [KAnonymity(k), *MODELS[kind]()], 0.0, "loss", None)
        reports: list[int] = []
        best, statistics, calls = walk(
            search, compiled, lambda done, _, reports=reports: reports.append(done)
        )
        assert bool(calls) == compiled
        assert (
            search.evaluations > 64
            and reports == sorted(reports)
            and len(reports) >= search.evaluations // 64
        )
        node = best.node
        assert node is not None
        runs.append(
            (
                node.levels,
                best.value,
                node.n_suppressed,
                node.classes.tolist(),
                statistics,
                search.evaluations,
            )
        )
    assert runs[0] == runs[1]


def test_a_hand_computed_walk():
    # Two attributes, hierarchies leaf -> pair -> '*': every (x, y) in {a, b, c, d}^2 once except
    # (d, d), then (a, a), (b, b), (c, c) once more and (d, d) twice: 20 records, each x and y value 5
    # times; s = v on the two (d, d) records, u elsewhere (v's share 0.1). 2-anonymity and basic
    # 1-likeness (a class passes when v's share is at most 0.2), nothing suppressed: (0, 0) has 12
    # single records; (1, 0) and (0, 1) put (d, d) in a class of 3 (v 2/3), (1, 1) in one of 6
    # (v 1/3), (2, 0) and (0, 2) in one of 5 (v 0.4): all fail. (2, 1) and (1, 2) make two classes of
    # 10 (v 0 and 0.2) and (2, 2) one of 20. (1, 2) and (2, 1) lose the same (the data are symmetric),
    # ties go to the smaller levels: (1, 2).
    rows = [["a", "ab", "*"], ["b", "ab", "*"], ["c", "cd", "*"], ["d", "cd", "*"]]
    x, y = (Hierarchy.from_rows(name, rows) for name in ("x", "y"))
    pattern = [(xv, yv) for xv in "abcd" for yv in "abcd" if (xv, yv) != ("d", "d")]
    pattern += [("a", "a"), ("b", "b"), ("c", "c"), ("d", "d"), ("d", "d")]
    frame = pl.DataFrame(
        {"x": [p[0] for p in pattern], "y": [p[1] for p in pattern], "s": ["u"] * 18 + ["v"] * 2}
    )
    table = Table.from_frame(frame)
    search = Search(
        table, ["x", "y"], [x, y], [KAnonymity(2), BasicBetaLikeness("s", 1.0)], 0.0, "loss", None
    )
    best, _, calls = walk(search, True)
    assert calls and calls[-1]
    assert best.node is not None and best.node.levels == (1, 2)
    assert best.node.n_suppressed == 0.0
    assert best.node.sizes.tolist() == [10.0, 10.0]
    # the 16 distinct combinations in the records' order: x = a, b (class ab) first, then c, d
    assert best.node.classes.tolist() == [0] * 8 + [1] * 8
    # Those nodes evaluated fail, (1, 2) and (2, 1) hold: the tags say so, and no node is open.
    for levels, holds in [((0, 0), False), ((1, 1), False), ((2, 0), False), ((1, 2), True), ((2, 1), True)]:
        python = Search(table, ["x", "y"], [x, y], search.models, 0.0, "loss", None).evaluate(levels)
        assert python.satisfied == holds
    # δ-disclosure (numpy's logarithm) and a suppression limit keep the Python loop.
    assert not lattice_walk.walks_models_compiled(
        Search(table, ["x", "y"], [x, y], [KAnonymity(2), DeltaDisclosure("s", 2.0)], 0.0, "loss", None)
    )
    assert not lattice_walk.walks_models_compiled(
        Search(table, ["x", "y"], [x, y], search.models, 0.1, "loss", None)
    )
