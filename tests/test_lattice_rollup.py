"""The lattice search's helper nodes and its one-call evaluation of k with t-closeness, β-likeness or
distinct l-diversity
(sdckit.anonymize._lattice_helpers, _lattice_fused, sdckit._kernels_rollup) against the general path.

Oracle: the same search with neither (every node grouped from the combinations or rolled up from an
evaluated node, the models evaluated by their own objects with numpy). Every node of the lattice,
evaluated in the same order by both, must come out the same: classes numbered alike, sizes, per-class
verdicts, suppressed records, satisfied and monotone flags; and the search's optimum and evaluation
count must be the same."""

from __future__ import annotations

import numpy as np
import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.test_recoding import problems

from sdckit.anonymize._lattice_search import Search
from sdckit.anonymize._lattice_walk import optimum
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
    "t": lambda: TCloseness("s", 0.2, "equal"),
    "basic": lambda: BasicBetaLikeness("s", 1.0),
    "enhanced": lambda: EnhancedBetaLikeness("s", 1.5),
    "delta": lambda: DeltaDisclosure("s", 2.0),
    "t-ordered": lambda: TCloseness("s", 0.2, "ordered"),
    "l2": lambda: DistinctLDiversity("s", 2),
    "l3": lambda: DistinctLDiversity("s", 3),
}


def searches(problem, kind: str, k: int, limit: float) -> tuple[Search, Search]:
    frame, names, hierarchies, _ = problem
    table = Table.from_frame(frame.drop("id"))
    models = [KAnonymity(k), MODELS[kind]()]
    new, old = (
        Search(table, names, [hierarchies[n] for n in names], models, limit, "loss", None) for _ in "ab"
    )
    old._fused = None
    old._helpers.source = lambda search, levels: None  # type: ignore[method-assign]
    return new, old


@settings(max_examples=60, deadline=None)
@given(problems(), st.sampled_from(sorted(MODELS)), st.integers(1, 6), st.sampled_from([0.0, 0.05, 0.3]))
def test_every_node_as_the_general_path(problem, kind, k, limit):
    new, old = searches(problem, kind, k, limit)
    assert (new._fused is not None) == (kind in ("t", "basic", "enhanced", "delta", "l2", "l3"))
    for node in new.order():
        a, b = (search.evaluate(search.levels_of(int(node))) for search in (new, old))
        assert a.levels == b.levels
        assert np.array_equal(a.classes, b.classes)
        assert a.n_classes == b.n_classes
        assert np.array_equal(a.sizes, b.sizes)
        assert np.array_equal(a.passes, b.passes)
        assert a.n_suppressed == b.n_suppressed
        assert (a.satisfied, a.monotone_ok) == (b.satisfied, b.monotone_ok)


@settings(max_examples=40, deadline=None)
@given(problems(), st.sampled_from(sorted(MODELS)), st.integers(1, 6), st.sampled_from([0.05, 0.3]))
def test_same_optimum_and_evaluations(problem, kind, k, limit):
    new, old = searches(problem, kind, k, limit)
    (best_new, _), (best_old, _) = (optimum(s, False, limit, None) for s in (new, old))
    assert (best_new.node is None) == (best_old.node is None)
    if best_new.node is not None:
        assert best_new.node.levels == best_old.node.levels
        assert best_new.value == best_old.value
    assert new.evaluations == old.evaluations


@settings(max_examples=30, deadline=None)
@given(problems(), st.sampled_from(["l2", "l3"]), st.integers(1, 6), st.sampled_from([0.0, 0.05, 0.3]))
def test_distinct_l_monotone_search_as_the_general_path(problem, kind, k, limit):
    """Distinct l-diversity is monotone with or without suppression: the pruned search (the top node
    checked first, as generalize does) finds the same optimum after the same evaluations."""
    new, old = searches(problem, kind, k, limit)
    assert new.all_monotone and old.all_monotone
    tops = [search.evaluate(search.max_levels.tolist()) for search in (new, old)]
    assert tops[0].monotone_ok == tops[1].monotone_ok
    if not tops[0].monotone_ok:
        return
    pairs = zip((new, old), tops, strict=True)
    (best_new, _), (best_old, _) = (optimum(s, True, limit, None, top) for s, top in pairs)
    assert (best_new.node is None) == (best_old.node is None)
    if best_new.node is not None:
        assert best_new.node.levels == best_old.node.levels
        assert best_new.value == best_old.value
    assert new.evaluations == old.evaluations


def test_a_helper_serves_the_nodes_above_it():
    # Two attributes with hierarchies leaf -> pair -> '*'. The nodes (2, 1) and (1, 2) share the helper
    # (1, 1) (every level capped at 1): the first request only marks it, the second (no evaluated node
    # lies below (1, 2)) builds it and rolls (1, 2) up from it. (1, 2)'s classes: by the pair of x,
    # {a, b} -> 'ab' (records 0-3, s = u, v, u, v) and {c, d} -> 'cd' (records 4-7, u, v, u, v); both
    # have s's distribution of the table (EMD 0), and k = 2 holds.
    from sdckit.hierarchy import Hierarchy

    rows = [["a", "ab", "*"], ["b", "ab", "*"], ["c", "cd", "*"], ["d", "cd", "*"]]
    x, y = (Hierarchy.from_rows(name, rows) for name in ("x", "y"))
    frame = pl.DataFrame({"x": list("aabbccdd"), "y": list("abcdabcd"), "s": list("uvuvuvuv")})
    models = [KAnonymity(2), TCloseness("s", 0.5)]
    search = Search(Table.from_frame(frame), ["x", "y"], [x, y], models, 0.1, "loss", None)
    assert search._fused is not None
    search.evaluate((2, 1))
    assert search._helpers.built == 0 and (1, 1) in search._helpers.asked
    node = search.evaluate((1, 2))
    assert search._helpers.built == 1 and (1, 1) in search._helpers.kept
    fresh, n_fresh = search.classes((1, 2))
    x_pair = np.asarray(x.codes)[search.combinations.leaf_codes[:, 0], 1].tolist()
    assert node.n_classes == n_fresh == 2
    assert node.sizes.tolist() == [4.0, 4.0]
    assert np.array_equal(node.classes, fresh)
    # two combinations share a class exactly when x's pair is the same
    pairs = range(len(x_pair))
    assert all((node.classes[i] == node.classes[j]) == (x_pair[i] == x_pair[j]) for i in pairs for j in pairs)
    assert node.passes.tolist() == [True, True]
    assert node.n_suppressed == 0.0 and node.satisfied
    # a third node above the helper and no evaluated node: rolled up in the one compiled call
    again = search.evaluate((1, 1))  # the helper's own levels: grouped afresh, as always
    assert again.n_classes == 4


@settings(max_examples=30, deadline=None)
@given(problems(), st.integers(1, 4), st.sampled_from([0.0, 0.05, 0.3]))
def test_delta_on_the_boundary_takes_numpy_s_logarithm(problem, k, limit):
    """δ set to a value |ln(q/p)| of the bottom node, as numpy computes it: there the compiled
    evaluation cannot tell (numba's logarithm may differ in the last bit), so those nodes take the
    general path, and every node comes out as the general path's."""
    frame, names, hierarchies, _ = problem
    table = Table.from_frame(frame.drop("id"))
    probe = Search(
        table, names, [hierarchies[n] for n in names], [DeltaDisclosure("s", 1.0)], 0.0, "loss", None
    )
    bottom = probe.evaluate([0] * len(names))
    classes = bottom.classes
    statistics = probe.statistics(classes, bottom.n_classes, bottom.sizes)
    achieved = DeltaDisclosure("s", 1.0).achieved(statistics)
    finite = achieved[np.isfinite(achieved) & (achieved > 0)]
    if not len(finite):
        return
    delta = float(finite.max())
    models = [KAnonymity(k), DeltaDisclosure("s", delta)]
    new, old = (
        Search(table, names, [hierarchies[n] for n in names], models, limit, "loss", None) for _ in "ab"
    )
    old._fused = None
    assert new._fused is not None
    assert new._fused.grouped(new, tuple([0] * len(names))) is None  # not judged in the compiled call
    for node in new.order():
        a, b = (search.evaluate(search.levels_of(int(node))) for search in (new, old))
        assert np.array_equal(a.classes, b.classes)
        assert np.array_equal(a.passes, b.passes)
        assert (a.n_suppressed, a.satisfied, a.monotone_ok) == (b.n_suppressed, b.satisfied, b.monotone_ok)
