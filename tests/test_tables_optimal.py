"""The optimal secondary suppression on 3-D tables (issue 31): Benders decomposition on one HiGHS model
against the compact MILP of SPEC §8.4 solved independently with ``scipy.optimize.milp``."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse
from scipy.optimize import Bounds, LinearConstraint, linprog, milp

from sdckit.tabular import _optimal_suppression as optimal
from sdckit.tabular.attacker import audit
from sdckit.tabular.model import LinearTable, Protection
from sdckit.tabular.suppression import cell_weights, heuristic_pattern, optimal_pattern, suppress


def small_3d(
    seed: int, shape: tuple[int, int, int] = (4, 4, 5), k: int = 3
) -> tuple[LinearTable, Protection]:
    rng = np.random.default_rng(seed)
    table = LinearTable.from_array(rng.integers(1, 30, size=shape))
    interior = np.flatnonzero(~table.totals())
    primaries = rng.choice(interior, size=k, replace=False)
    upper = np.ceil(table.values[primaries] * rng.uniform(0.3, 1.0, size=k))
    lower = np.minimum(
        np.ceil(table.values[primaries] * rng.uniform(0.3, 1.0, size=k)), table.values[primaries]
    )
    return table, Protection.of_cells(table.n_cells, primaries, upper, lower)


def compact_optimum(table: LinearTable, protection: Protection, w: np.ndarray) -> tuple[float, np.ndarray]:
    """SPEC §8.4's compact model: for every primary cell and scenario (up, down) a deviation
    ``d⁺ − d⁻`` with ``M (d⁺ − d⁻) = 0`` within the capacities ``(ub − a) x`` and ``(a − lb) x`` that
    reaches the protection level; an infinite ``ub`` is the big-M ``2 Σ a`` (SPEC's suggestion,
    doubled). Returns the optimal cost of the secondary cells and the pattern."""
    n, m = table.n_cells, table.relations.shape[0]
    primaries = protection.cells
    big_m = 2.0 * float(table.values.sum())
    cap_up = np.minimum(table.upper - table.values, big_m)
    cap_down = table.values - table.lower
    k = 2 * primaries.size  # scenarios
    nv = n + 2 * n * k
    blocks, lower, upper = [], [], []
    eye = sparse.identity(n, format="csr")
    for s in range(k):
        p, up_side = int(primaries[s // 2]), s % 2 == 0
        plus, minus = n + 2 * n * s, n + 2 * n * s + n

        def place(matrix: sparse.spmatrix, column: int) -> sparse.csr_matrix:
            rows = matrix.shape[0]
            return sparse.hstack(
                [
                    sparse.csr_matrix((rows, column)),
                    matrix,
                    sparse.csr_matrix((rows, nv - column - matrix.shape[1])),
                ],
                format="csr",
            )

        blocks.append(place(table.relations, plus) - place(table.relations, minus))  # M (d⁺ − d⁻) = 0
        lower.append(np.zeros(m)), upper.append(np.zeros(m))
        blocks.append(place(eye, plus) - place(sparse.diags(cap_up), 0))  # d⁺ ≤ (ub − a) x
        lower.append(np.full(n, -np.inf)), upper.append(np.zeros(n))
        blocks.append(place(eye, minus) - place(sparse.diags(cap_down), 0))  # d⁻ ≤ (a − lb) x
        lower.append(np.full(n, -np.inf)), upper.append(np.zeros(n))
        level = sparse.csr_matrix(([1.0, -1.0], ([0, 0], [plus + p, minus + p])), shape=(1, nv))
        blocks.append(level if up_side else -level)
        lower.append([protection.upper[p] if up_side else protection.lower[p]]), upper.append([np.inf])
    constraint = LinearConstraint(
        sparse.vstack(blocks, format="csr"), np.concatenate(lower), np.concatenate(upper)
    )
    lb, ub = np.zeros(nv), np.full(nv, np.inf)
    ub[:n] = 1.0
    lb[primaries] = 1.0
    integrality = np.r_[np.ones(n), np.zeros(nv - n)]
    cost = np.r_[w, np.zeros(nv - n)]
    result = milp(cost, constraints=constraint, bounds=Bounds(lb, ub), integrality=integrality)
    assert result.status == 0, result.message
    pattern = result.x[:n] > 0.5
    return float(w[pattern & ~protection.primary].sum()), pattern


def lp_protected(table: LinearTable, protection: Protection, suppressed: np.ndarray) -> bool:
    """Independent check: each primary cell's interval from the whole attacker LP in cell values."""
    s = np.flatnonzero(suppressed)
    rhs = -table.relations[:, ~suppressed] @ table.values[~suppressed]
    bounds = list(zip(table.lower[s], [None if np.isinf(u) else u for u in table.upper[s]], strict=True))
    for p in protection.cells:
        if not suppressed[p]:
            return False
        c = np.zeros(s.size)
        c[int(np.flatnonzero(s == p)[0])] = 1.0
        low = linprog(c, A_eq=table.relations[:, s], b_eq=rhs, bounds=bounds, method="highs").fun
        high = linprog(-c, A_eq=table.relations[:, s], b_eq=rhs, bounds=bounds, method="highs")
        high = np.inf if high.status == 3 else -high.fun
        a = table.values[p]
        if high < a + protection.upper[p] - 1e-7 or low > a - protection.lower[p] + 1e-7:
            return False
    return True


@pytest.mark.slow
@pytest.mark.parametrize(
    ("seed", "shape", "cost"), [(1, (4, 4, 5), "value"), (3, (4, 4, 5), "value"), (4, (3, 4, 4), "cells")]
)
def test_optimal_equals_the_compact_milp_on_a_small_3d_table(
    seed: int, shape: tuple[int, int, int], cost: str
) -> None:
    table, protection = small_3d(seed, shape)
    w = cell_weights(table, cost)
    expected, compact = compact_optimum(table, protection, w)
    assert lp_protected(table, protection, compact)  # the oracle's own pattern protects
    suppressed, figures = suppress(table, protection, algorithm="optimal", cost=cost, time_limit=120)
    assert figures["optimal"] is True and figures["audit_passed"]
    assert figures["cost"] == pytest.approx(expected, rel=1e-9, abs=1e-9)
    assert figures["bound"] == pytest.approx(expected, rel=1e-6, abs=1e-6)
    assert audit(table, suppressed, protection).passed and lp_protected(table, protection, suppressed)


@pytest.mark.slow
def test_optimal_with_finite_upper_bounds_equals_the_compact_milp() -> None:
    rng = np.random.default_rng(5)
    interior = rng.integers(1, 30, size=(3, 4, 4))
    table = LinearTable.from_array(interior)
    table = LinearTable.from_array(interior, upper=table.values * 1.5 + 2)  # a-priori bounds: 50% above
    primaries = np.flatnonzero((table.values <= 8) & ~table.totals())[:3]
    protection = Protection.of_cells(table.n_cells, primaries, np.ceil(table.values[primaries] * 0.6))
    w = cell_weights(table)
    expected, _ = compact_optimum(table, protection, w)
    suppressed, figures = suppress(table, protection, algorithm="optimal", time_limit=120)
    assert figures["optimal"] is True and figures["cost"] == pytest.approx(expected)
    assert lp_protected(table, protection, suppressed)


@pytest.mark.slow
def test_stopping_on_every_violated_master_solution_reaches_the_same_optimum(monkeypatch) -> None:
    # no patience: HiGHS's branch and bound is stopped on the first solution that violates a cut
    monkeypatch.setattr(optimal, "PATIENCE_SHARE", 0.0)
    monkeypatch.setattr(optimal, "PATIENCE_MIN", 0.0)
    table, protection = small_3d(1)
    w = cell_weights(table)
    expected, _ = compact_optimum(table, protection, w)
    masters = []
    real = optimal._Master

    class Spy(real):  # type: ignore[misc, valid-type]
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            masters.append(self)

    monkeypatch.setattr(optimal, "_Master", Spy)
    suppressed, info = optimal_pattern(table, protection, w, time_limit=120)
    assert info["optimal"] and float(w[suppressed & ~protection.primary].sum()) == pytest.approx(expected)
    assert len(masters) == 1  # one HiGHS model for the whole search, the cuts added as its rows
    assert masters[0].highs.getNumRow() >= info["cuts"] > 0
    assert info["mip_rounds"] >= 1 and audit(table, suppressed, protection).passed


@pytest.mark.slow
def test_every_cut_holds_for_protected_patterns() -> None:
    """Capacity cuts (whole table, capped, slices) at random fractional and integer points never cut
    off a protecting pattern: the all-suppressed pattern, the heuristic's and the optimum."""
    table, protection = small_3d(2, shape=(3, 3, 4), k=3)
    w = cell_weights(table)
    everything = np.ones(table.n_cells, dtype=bool)
    assert audit(table, everything, protection).passed
    patterns = [everything, heuristic_pattern(table, protection, w), compact_optimum(table, protection, w)[1]]
    search = optimal._Benders(table, protection, w, patterns[1], time_limit=60, gap=0.0)
    assert search.slices.of  # the primary cells have 2-D slices
    rng = np.random.default_rng(0)
    points = [rng.uniform(0, 1, table.n_cells) ** 3 for _ in range(6)]
    points += [(rng.uniform(0, 1, table.n_cells) < 0.2).astype(float) for _ in range(6)]
    count = 0
    for x in points:
        x[protection.primary] = 1.0
        for index, value, rhs in search.cuts(x, integral=bool(np.all((x == 0) | (x == 1)))):
            count += 1
            assert float(value @ x[index]) < rhs  # violated where it was found
            for pattern in patterns:
                assert float(value @ pattern[index]) >= rhs * (1 - 1e-9)
    assert count > 20


@pytest.mark.slow
def test_time_limit_on_a_3d_table_reports_a_bound_and_gap() -> None:
    rng = np.random.default_rng(7)
    table = LinearTable.from_array(np.floor(rng.lognormal(4.0, 1.2, size=(6, 6, 7))))
    primaries = np.flatnonzero((table.values >= 1) & (table.values <= 6) & ~table.totals())
    protection = Protection.of_cells(table.n_cells, primaries, table.values[primaries])
    w = cell_weights(table)
    heuristic = heuristic_pattern(table, protection, w)
    suppressed, info = optimal_pattern(table, protection, w, time_limit=3.0, incumbent=heuristic)
    cost = float(w[suppressed].sum())
    assert audit(table, suppressed, protection).passed
    assert cost <= float(w[heuristic].sum()) + 1e-9  # never worse than the start
    assert info["bound"] is not None and info["bound"] <= cost + 1e-6
    assert info["mip_gap"] == pytest.approx((cost - info["bound"]) / cost)
    if not info["optimal"]:
        assert info["mip_gap"] > 0


@pytest.mark.slow
def test_a_stated_gap_is_proven() -> None:
    table, protection = small_3d(3, shape=(5, 5, 5), k=5)
    w = cell_weights(table)
    suppressed, info = optimal_pattern(table, protection, w, time_limit=120, gap=0.2)
    assert info["optimal"] and info["mip_gap"] <= 0.2 + 1e-9
    assert audit(table, suppressed, protection).passed
