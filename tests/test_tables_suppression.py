"""Secondary cell suppression and the attacker's audit (SPEC §8.3–8.6)."""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import sparse
from scipy.optimize import linprog

from sdckit.errors import ConfigError, InputError
from sdckit.tabular.attacker import audit, interval
from sdckit.tabular.base import TableProblem, run_table_method
from sdckit.tabular.model import PRIMARY, PUBLISHED, SECONDARY, LinearTable, Protection
from sdckit.tabular.suppression import cell_weights, suppress

# SPEC §8.6: 2×3 table with margins; cells in row-major order of the 3×4 grid (last row/column = totals)
EXAMPLE = [[5, 30, 25], [20, 15, 10]]


def cell(r: int, c: int, columns: int = 4) -> int:
    return r * columns + c


def example() -> tuple[LinearTable, Protection]:
    table = LinearTable.from_array(EXAMPLE)
    return table, Protection.of_cells(table.n_cells, [cell(0, 0)], 3)


def pattern(n: int, cells: list[int]) -> np.ndarray:
    mask = np.zeros(n, dtype=bool)
    mask[cells] = True
    return mask


def lp_interval(table: LinearTable, suppressed: np.ndarray, i: int) -> tuple[float, float]:
    """Independent oracle: the whole attacker LP in the cell values with scipy's linprog."""
    s = np.flatnonzero(suppressed)
    published = ~suppressed
    rhs = -table.relations[:, published] @ table.values[published]
    a_eq = table.relations[:, s]
    bounds = list(zip(table.lower[s], [None if np.isinf(u) else u for u in table.upper[s]], strict=True))
    j = int(np.flatnonzero(s == i)[0])
    c = np.zeros(s.size)
    c[j] = 1.0
    low = linprog(c, A_eq=a_eq, b_eq=rhs, bounds=bounds, method="highs")
    high = linprog(-c, A_eq=a_eq, b_eq=rhs, bounds=bounds, method="highs")
    return low.fun, (np.inf if high.status == 3 else -high.fun)


def oracle_protected(table: LinearTable, protection: Protection, suppressed: np.ndarray) -> bool:
    for p in protection.cells:
        if not suppressed[p]:
            return False
        low, high = lp_interval(table, suppressed, p)
        a = table.values[p]
        if high < a + protection.upper[p] - 1e-7 or low > a - protection.lower[p] + 1e-7:
            return False
        if high - low < max(protection.sliding[p], 1e-9):
            return False
    return True


def brute_force(table: LinearTable, protection: Protection, w: np.ndarray) -> float:
    """The cheapest protecting pattern's secondary cost, over every pattern in increasing cost (the
    LP oracle decides). Patterns where a relation holds exactly one suppressed cell are skipped: that
    cell is then exactly known, so the pattern is either unprotected (a primary cell) or not cheapest
    (publishing that secondary cell changes no interval and costs less; every w > 0)."""
    free = np.flatnonzero(~protection.primary)
    subsets = np.array(list(itertools.product([False, True], repeat=free.size)), dtype=bool)
    masks = np.zeros((subsets.shape[0], table.n_cells), dtype=bool)
    masks[:, free] = subsets
    masks[:, protection.primary] = True
    counts = (abs(table.relations) @ masks.T.astype(np.float64)).T
    keep = ~np.any(counts == 1, axis=1)
    masks = masks[keep]
    costs = masks[:, free].astype(np.float64) @ w[free]
    for k in np.argsort(costs, kind="stable"):
        if oracle_protected(table, protection, masks[k]):
            return float(costs[k])
    raise AssertionError("no pattern protects the table")


# --- SPEC §8.3 / §8.6: the audit -----------------------------------------------------------------------


def test_audit_interval_of_the_worked_example() -> None:
    table, protection = example()
    suppressed = pattern(table.n_cells, [cell(0, 0), cell(0, 1), cell(1, 0), cell(1, 1)])
    result = audit(table, suppressed, protection)
    assert result.low[cell(0, 0)] == pytest.approx(0.0, abs=1e-9)
    assert result.high[cell(0, 0)] == pytest.approx(25.0, abs=1e-9)
    # y12 = 35 − t, y21 = 25 − t, y22 = 10 + t for t ∈ [0, 25]
    assert (result.low[cell(0, 1)], result.high[cell(0, 1)]) == pytest.approx((10.0, 35.0))
    assert (result.low[cell(1, 0)], result.high[cell(1, 0)]) == pytest.approx((0.0, 25.0))
    assert (result.low[cell(1, 1)], result.high[cell(1, 1)]) == pytest.approx((10.0, 35.0))
    assert result.protected.all() and not result.disclosed.any() and result.passed
    assert interval(table, suppressed, cell(0, 0)) == pytest.approx((0.0, 25.0))
    assert interval(table, suppressed, cell(0, 2)) == (25.0, 25.0)  # published


def test_audit_detects_exact_disclosure() -> None:
    table, protection = example()
    suppressed = pattern(table.n_cells, [cell(0, 0), cell(0, 1)])
    result = audit(table, suppressed, protection)
    assert (result.low[cell(0, 0)], result.high[cell(0, 0)]) == pytest.approx((5.0, 5.0))
    assert not result.protected[cell(0, 0)]
    assert result.disclosed[cell(0, 0)] and result.disclosed[cell(0, 1)]
    assert not result.passed
    assert set(result.failures) == {cell(0, 0), cell(0, 1)}


def test_audit_flags_a_disclosed_secondary_cell_of_a_protected_pattern() -> None:
    # the primary cell is protected by its cycle; a13 and a23 are suppressed too but add up to a
    # published column total with nothing else of theirs suppressed in the rows... a23 alone in row 2
    # with a21, a22 published? here: pattern {a11, a12, a21, a22} protects a11; adding a33-like pair
    # {a13, a1T}: row 1 then has four suppressed cells, column 3 holds a13 alone → a13 is exact.
    table, protection = example()
    suppressed = pattern(
        table.n_cells, [cell(0, 0), cell(0, 1), cell(1, 0), cell(1, 1), cell(0, 2), cell(0, 3)]
    )
    result = audit(table, suppressed, protection)
    assert result.protected.all()
    assert result.disclosed[cell(0, 2)] and result.low[cell(0, 2)] == pytest.approx(25.0)
    # a1T = y11 + y12 + 25 = 60 whatever t: exact as well
    assert result.disclosed[cell(0, 3)]
    assert not result.passed


def test_audit_unbounded_interval_and_protection_levels() -> None:
    # a cycle through the grand total's margins is unbounded above when every cell of it is free
    table = LinearTable.from_array([[1, 2], [3, 4]])
    protection = Protection.of_cells(table.n_cells, [0], upper=50, lower=1)
    everything = np.ones(table.n_cells, dtype=bool)
    result = audit(table, everything, protection)
    assert np.isinf(result.high[0]) and result.low[0] == pytest.approx(0.0)
    assert result.protected[0]
    # the 2×2 cycle alone: a11 ∈ [0, 3] (a12 = 2 − ... ), so UPL 50 is not reached
    cycle = pattern(table.n_cells, [0, 1, 3, 4])
    result = audit(table, cycle, protection)
    assert (result.low[0], result.high[0]) == pytest.approx((0.0, 3.0))
    assert not result.protected[0]
    # a sliding level of 3 is met (width 3), one of 3.5 is not
    sliding = Protection.of_cells(table.n_cells, [0], upper=1, lower=1, sliding=3)
    assert audit(table, cycle, sliding).passed
    sliding = Protection.of_cells(table.n_cells, [0], upper=1, lower=1, sliding=3.5)
    assert not audit(table, cycle, sliding).passed


def test_audit_matches_linprog_on_random_patterns() -> None:
    rng = np.random.default_rng(5)
    table = LinearTable.from_array(rng.integers(0, 20, size=(3, 4, 2)))
    protection = Protection.none(table.n_cells)
    for _ in range(5):
        suppressed = rng.random(table.n_cells) < 0.4
        result = audit(table, suppressed, protection)
        for i in np.flatnonzero(suppressed):
            assert (result.low[i], result.high[i]) == pytest.approx(
                lp_interval(table, suppressed, i), abs=1e-7
            )


# --- SPEC §8.6: optimal and heuristic ------------------------------------------------------------------


def test_optimal_pattern_of_the_worked_example() -> None:
    table, protection = example()
    suppressed, figures = suppress(table, protection, algorithm="optimal")
    assert set(np.flatnonzero(suppressed)) == {cell(0, 0), cell(0, 2), cell(1, 0), cell(1, 2)}
    assert figures["cost"] == 55.0 and figures["secondary_cells"] == 3 and figures["secondary_value"] == 55.0
    assert figures["optimal"] is True and figures["audit_passed"] is True
    assert figures["bound"] == pytest.approx(55.0)
    assert interval(table, suppressed, cell(0, 0)) == pytest.approx((0.0, 25.0))
    assert brute_force(table, protection, cell_weights(table)) == 55.0


def test_optimal_with_unit_costs_needs_three_secondaries() -> None:
    table, protection = example()
    suppressed, figures = suppress(table, protection, algorithm="optimal", cost="cells")
    assert figures["secondary_cells"] == 3 and figures["cost"] == 3.0 and figures["optimal"]
    assert audit(table, suppressed, protection).passed
    assert brute_force(table, protection, cell_weights(table, "cells")) == 3.0


def test_heuristic_of_the_worked_example_equals_the_optimum() -> None:
    table, protection = example()
    for repair in ("lp", "neighbour"):
        suppressed, figures = suppress(table, protection, algorithm="heuristic", repair=repair)
        assert set(np.flatnonzero(suppressed)) == {cell(0, 0), cell(0, 2), cell(1, 0), cell(1, 2)}
        assert figures["cost"] == 55.0 and figures["audit_passed"]


@pytest.mark.slow
@pytest.mark.parametrize(("shape", "seed"), [((2, 3), 0), ((2, 3), 1), ((3, 3), 2), ((3, 3), 3), ((2, 4), 4)])
def test_optimal_equals_brute_force_on_tiny_tables(shape: tuple[int, ...], seed: int) -> None:
    rng = np.random.default_rng(seed)
    table = LinearTable.from_array(rng.integers(1, 30, size=shape))
    interior = np.flatnonzero(~table.totals())
    primaries = rng.choice(interior, size=2 if len(shape) == 2 else 1, replace=False)
    levels = np.ceil(table.values[primaries] * rng.uniform(0.3, 1.0, size=primaries.size))
    protection = Protection.of_cells(table.n_cells, primaries, levels)
    for cost in ("value", "cells"):
        w = cell_weights(table, cost)
        suppressed, figures = suppress(table, protection, algorithm="optimal", cost=cost)
        assert figures["optimal"] and figures["audit_passed"]
        assert oracle_protected(table, protection, suppressed)
        assert figures["cost"] == pytest.approx(brute_force(table, protection, w))
        heuristic, hfigures = suppress(table, protection, algorithm="heuristic", cost=cost)
        assert hfigures["cost"] >= figures["cost"] - 1e-9 and oracle_protected(table, protection, heuristic)


def test_user_weights_override_the_cost() -> None:
    table, protection = example()
    weights = np.ones(table.n_cells)
    weights[[cell(0, 2), cell(1, 2)]] = 100.0  # make column 3 expensive: the optimum moves to column 2
    suppressed, figures = suppress(table, protection, algorithm="optimal", weights=weights)
    assert set(np.flatnonzero(suppressed)) == {cell(0, 0), cell(0, 1), cell(1, 0), cell(1, 1)}
    assert figures["cost"] == 3.0
    with pytest.raises(ConfigError, match="weights"):
        suppress(table, protection, weights=np.ones(3))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"algorithm": "fast"}, r"^algorithm must be 'auto', 'optimal' or 'heuristic', got 'fast'$"),
        ({"cost": "area"}, r"^cost must be 'value', 'cells' or 'log', got 'area'$"),
        ({"time_limit": 0}, r"^time_limit must be greater than 0, got 0$"),
        ({"gap": -0.1}, r"^gap must be greater than or equal to 0, got -0\.1$"),
        ({"gap": 1.5}, r"^gap must be less than or equal to 1, got 1\.5$"),  # one rule: the function took it
        ({"singletons": "all"}, r"^singletons must be 'protect' or 'none', got 'all'$"),
        ({"coalition": 1}, r"^coalition must be 0 \(none\) or a number of contributors ≥ 2, got 1$"),
        (
            {"time_limit": -1, "gap": -1},
            r"^time_limit must be greater than 0, got -1; gap must be greater than or equal to 0, got -1$",
        ),
    ],
)
def test_bad_parameters_one_rule_for_the_function_and_the_method(kwargs: dict, message: str) -> None:
    """suppress() checks its parameters by SuppressParams' rules: one error naming each bad one, worded
    as the registered method words it."""
    table, protection = example()
    with pytest.raises(ConfigError, match=message):
        suppress(table, protection, **kwargs)
    with pytest.raises(ConfigError, match=message):
        run_table_method("suppress", TableProblem(table, protection), kwargs)


def test_zero_cells_cost_a_little() -> None:
    table = LinearTable.from_array([[0, 4], [7, 3]])
    w = cell_weights(table)
    assert w[0] == pytest.approx(1e-3 * 3.0) and w[1] == 4.0


# --- property: every pattern passes the audit ----------------------------------------------------------


@st.composite
def tables(draw: st.DrawFn) -> tuple[LinearTable, Protection]:
    shape = draw(st.sampled_from([(2, 2), (2, 3), (3, 3), (3, 4), (2, 2, 2), (2, 3, 2)]))
    seed = draw(st.integers(0, 2**31))
    rng = np.random.default_rng(seed)
    interior = rng.integers(0, 25, size=shape)
    table = LinearTable.from_array(interior)
    candidates = np.flatnonzero(table.values >= 1)
    k = draw(st.integers(1, min(3, candidates.size)))
    primaries = rng.choice(candidates, size=k, replace=False)
    upper = np.ceil(table.values[primaries] * rng.uniform(0.1, 0.9, size=k))
    lower = np.minimum(upper, table.values[primaries])
    return table, Protection.of_cells(table.n_cells, primaries, upper, lower)


def hierarchical_table(leaves: np.ndarray, groups: list[int]) -> LinearTable:
    """Rows: leaves in consecutive groups of the sizes ``groups``, a subtotal per group, the total;
    columns: the columns of ``leaves`` and their total. Relations: leaves → subtotal, subtotals →
    total (per column, the total column included), columns → row total (per row item)."""
    n_leaves, n_cols = leaves.shape
    g = len(groups)
    items = n_leaves + g + 1
    hierarchy = []  # (members, total) over row items
    start = 0
    for k, size in enumerate(groups):
        hierarchy.append((list(range(start, start + size)), n_leaves + k))
        start += size
    hierarchy.append((list(range(n_leaves, n_leaves + g)), items - 1))
    h = sparse.lil_matrix((len(hierarchy), items))
    for r, (members, total) in enumerate(hierarchy):
        h[r, members], h[r, total] = 1.0, -1.0
    c = sparse.csr_matrix(np.r_[np.ones(n_cols), -1.0][None, :])
    relations = sparse.vstack(
        [sparse.kron(h, sparse.identity(n_cols + 1)), sparse.kron(sparse.identity(items), c)], format="csr"
    )
    full = np.zeros((items, n_cols + 1))
    full[:n_leaves, :n_cols] = leaves
    start = 0
    for k, size in enumerate(groups):
        full[n_leaves + k, :n_cols] = leaves[start : start + size].sum(0)
        start += size
    full[-1, :n_cols] = leaves.sum(0)
    full[:, -1] = full[:, :n_cols].sum(1)
    labels = [f"leaf{i + 1}" for i in range(n_leaves)] + [f"group{k + 1}" for k in range(g)] + ["Total"]
    columns = [str(j + 1) for j in range(n_cols)] + ["Total"]
    cells = pl.DataFrame({"row": np.repeat(labels, n_cols + 1), "col": np.tile(columns, items)})
    table = LinearTable(values=full.ravel(), relations=relations, cells=cells, dimensions=("row", "col"))
    assert table.is_additive()
    return table


@st.composite
def hierarchical_tables(draw: st.DrawFn) -> tuple[LinearTable, Protection]:
    groups = draw(st.sampled_from([[2, 2], [2, 3], [3, 1, 2]]))
    n_cols = draw(st.integers(2, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    table = hierarchical_table(rng.integers(0, 25, size=(sum(groups), n_cols)), groups)
    candidates = np.flatnonzero(table.values >= 1)
    k = draw(st.integers(1, min(3, candidates.size)))
    primaries = rng.choice(candidates, size=k, replace=False)
    upper = np.ceil(table.values[primaries] * rng.uniform(0.1, 0.9, size=k))
    return table, Protection.of_cells(
        table.n_cells, primaries, upper, np.minimum(upper, table.values[primaries])
    )


@pytest.mark.slow
@settings(max_examples=25)
@given(
    st.one_of(tables(), hierarchical_tables()),
    st.sampled_from(["optimal", "heuristic"]),
    st.sampled_from(["value", "cells"]),
)
def test_every_pattern_passes_the_audit(
    problem: tuple[LinearTable, Protection], algorithm: str, cost: str
) -> None:
    table, protection = problem
    suppressed, figures = suppress(table, protection, algorithm=algorithm, cost=cost)
    result = audit(table, suppressed, protection)
    assert result.passed and figures["audit_passed"]
    assert suppressed[protection.primary].all()
    assert oracle_protected(table, protection, suppressed)


# --- linked and hierarchical tables --------------------------------------------------------------------


def linked_tables() -> LinearTable:
    """Two 2×2 tables (A: rows × sex, B: rows × age) sharing their row totals — one LinearTable.

    Cells: A11 A12 A21 A22 | B11 B12 B21 B22 | R1 R2 (shared row totals) | T (grand total) |
    CA1 CA2 (A's column totals) | CB1 CB2 (B's column totals)."""
    a = np.array([[4, 16], [9, 21]])
    b = np.array([[12, 8], [10, 20]])
    values = np.r_[a.ravel(), b.ravel(), a.sum(1), a.sum(), a.sum(0), b.sum(0)].astype(float)
    names = [
        "A11",
        "A12",
        "A21",
        "A22",
        "B11",
        "B12",
        "B21",
        "B22",
        "R1",
        "R2",
        "T",
        "CA1",
        "CA2",
        "CB1",
        "CB2",
    ]
    ix = {name: i for i, name in enumerate(names)}
    relations = [
        (["A11", "A12"], "R1"), (["A21", "A22"], "R2"), (["B11", "B12"], "R1"), (["B21", "B22"], "R2"),
        (["A11", "A21"], "CA1"), (["A12", "A22"], "CA2"), (["B11", "B21"], "CB1"), (["B12", "B22"], "CB2"),
        (["R1", "R2"], "T"), (["CA1", "CA2"], "T"), (["CB1", "CB2"], "T"),
    ]  # fmt: skip
    rows, cols, data = [], [], []
    for r, (parts, total) in enumerate(relations):
        for part in parts:
            rows.append(r), cols.append(ix[part]), data.append(1.0)
        rows.append(r), cols.append(ix[total]), data.append(-1.0)
    matrix = sparse.csr_matrix((data, (rows, cols)), shape=(len(relations), len(names)))
    cells = pl.DataFrame({"cell": names})
    table = LinearTable(values=values, relations=matrix, cells=cells, dimensions=("cell",))
    assert table.is_additive()
    return table


@pytest.mark.parametrize("algorithm", ["optimal", "heuristic"])
def test_linked_tables_are_protected_together(algorithm: str) -> None:
    table = linked_tables()
    a11 = 0
    protection = Protection.of_cells(table.n_cells, [a11], upper=4, lower=4)
    suppressed, figures = suppress(table, protection, algorithm=algorithm)
    assert figures["audit_passed"] and oracle_protected(table, protection, suppressed)
    # protecting A11 in table A alone (ignoring that R1 is also B's row total) is not enough when R1
    # is published; every pattern here keeps R1 and R2 consistent in both tables
    a_only = pattern(table.n_cells, [0, 1, 2, 3])  # the 2×2 cycle of table A, totals published
    assert audit(table, a_only, protection).passed
    if algorithm == "optimal":
        assert figures["cost"] == pytest.approx(brute_force(table, protection, cell_weights(table)))


def test_linked_tables_shared_total_suppressed() -> None:
    # A11 = 4 with UPL 17 must reach 21 > R1 = 20, so the shared row total R1 has to be suppressed,
    # and then table B's relation B11 + B12 = R1 needs a suppressed cell of B too (else R1 is exact)
    table = linked_tables()
    protection = Protection.of_cells(table.n_cells, [0], upper=17, lower=4)
    a_only = pattern(table.n_cells, [0, 1, 2, 3])
    assert interval(table, a_only, 0) == pytest.approx((0.0, 13.0))
    for algorithm in ("optimal", "heuristic"):
        suppressed, figures = suppress(table, protection, algorithm=algorithm)
        assert figures["audit_passed"] and oracle_protected(table, protection, suppressed)
        assert suppressed[8]  # R1, shared by both tables
        assert suppressed[4] or suppressed[5]  # and a cell of B's first row
        assert audit(table, suppressed, protection).high[0] >= 21 - 1e-9
    assert suppress(table, protection, algorithm="optimal")[1]["cost"] == pytest.approx(
        brute_force(table, protection, cell_weights(table))
    )


def test_a_cell_that_cannot_be_protected_is_named() -> None:
    table = LinearTable.from_array(
        [[1, 2], [3, 4]], upper=np.array([[2, 3, 5], [4, 5, 9], [5, 7, 12]]).ravel()
    )
    protection = Protection.of_cells(table.n_cells, [0], upper=5, lower=1)
    for algorithm in ("optimal", "heuristic"):
        with pytest.raises(
            InputError, match=r"v1=1, v2=1 cannot be protected: even with every cell suppressed"
        ):
            suppress(table, protection, algorithm=algorithm)


# --- time limit, registry -------------------------------------------------------------------------------


@pytest.mark.slow
def test_time_limit_returns_a_protected_pattern() -> None:
    rng = np.random.default_rng(11)
    table = LinearTable.from_array(np.floor(rng.lognormal(3.0, 1.3, size=(25, 25))))
    primaries = np.flatnonzero((table.values >= 1) & (table.values <= 6) & ~table.totals())
    protection = Protection.of_cells(table.n_cells, primaries, table.values[primaries])
    suppressed, figures = suppress(table, protection, algorithm="optimal", time_limit=0.05)
    assert figures["optimal"] is False
    assert figures["audit_passed"] and audit(table, suppressed, protection).passed
    assert figures["seconds"] < 30


def test_registered_method() -> None:
    table, protection = example()
    result = run_table_method("suppress", TableProblem(table, protection), {"algorithm": "optimal"})
    assert result.method == "suppress" and result.audit is not None and result.audit.passed
    assert np.isnan(result.released[[cell(0, 0), cell(0, 2), cell(1, 0), cell(1, 2)]]).all()
    assert result.released[cell(0, 1)] == 30.0
    assert result.status[cell(0, 0)] == PRIMARY and result.status[cell(0, 2)] == SECONDARY
    assert result.status[cell(0, 1)] == PUBLISHED
    assert result.figures["cost"] == 55.0 and result.figures["algorithm"] == "optimal"
    frame = result.frame()
    assert frame.filter(pl.col("status") == "primary")["feasible_high"].to_list() == [25.0]
    with pytest.raises(
        ConfigError, match=r"^algorithm must be 'auto', 'optimal' or 'heuristic', got 'fast'$"
    ):
        run_table_method("suppress", TableProblem(table, protection), {"algorithm": "fast"})


def test_hierarchical_table_optimum_equals_brute_force() -> None:
    table = hierarchical_table(np.array([[7, 2], [9, 14], [6, 11]]), [2, 1])
    primary = int(np.flatnonzero(table.cells["row"].to_numpy() == "leaf1")[1])  # leaf1, column 2 (= 2)
    protection = Protection.of_cells(table.n_cells, [primary], upper=2)
    suppressed, figures = suppress(table, protection, algorithm="optimal")
    assert figures["optimal"] and oracle_protected(table, protection, suppressed)
    assert figures["cost"] == pytest.approx(brute_force(table, protection, cell_weights(table)))
    heuristic, hfigures = suppress(table, protection, algorithm="heuristic")
    assert oracle_protected(table, protection, heuristic) and hfigures["cost"] >= figures["cost"] - 1e-9
