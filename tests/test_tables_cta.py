"""Controlled tabular adjustment (SPEC §8.8): the worked example, MILP against LP heuristic, brute-force
directions, properties on random 2-D and 3-D tables, parameters and errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.errors import ConfigError, InputError
from sdckit.tabular.base import TableProblem, run_table_method
from sdckit.tabular.cta import _Model, controlled_adjustment, cta_weights, fixed_direction_objective
from sdckit.tabular.model import LinearTable, Protection


def _example(upl: float = 5, lpl: float = 6) -> tuple[LinearTable, Protection]:
    table = LinearTable.from_array([[10, 20], [30, 40]])
    return table, Protection.of_cells(table.n_cells, [0], upl, lpl)


def test_spec_example_relaxation() -> None:
    from scipy.optimize import milp

    table, protection = _example()
    model = _Model(table, protection, cta_weights(table.values, "inverse"), False)
    cost, integrality, bounds, constraints = model.milp_parts()
    relaxed = milp(cost, integrality=np.zeros_like(integrality), bounds=bounds, constraints=constraints)
    assert relaxed.fun == pytest.approx(6 / 11)
    assert relaxed.x[-1] == pytest.approx(6 / 11)


@pytest.mark.parametrize("algorithm", ["lp", "milp", "auto"])
def test_spec_example(algorithm: str) -> None:
    table, protection = _example()
    adjusted, figures = controlled_adjustment(table, protection, algorithm=algorithm)
    change = (adjusted - table.values).reshape(3, 3)
    assert change.tolist() == [[5, 0, 5], [0, 0, 0], [5, 0, 5]]  # a11, R1, C1, grand +5
    assert figures["objective"] == pytest.approx(101 / 120, abs=1e-12)
    assert figures["moved_up"] == 1 and figures["moved_down"] == 0
    assert figures["cells_changed"] == 4 and figures["total_change"] == 20
    if algorithm == "lp":
        assert figures["relaxation"] == pytest.approx(6 / 11)
    else:
        assert figures["optimal"] is True


def test_spec_example_down_costs_more() -> None:
    table, protection = _example()
    assert fixed_direction_objective(table, protection, [False]) == pytest.approx(1.01)
    assert fixed_direction_objective(table, protection, [True]) == pytest.approx(101 / 120)


def test_spec_example_unit_weights() -> None:
    table, protection = _example(5, 5)
    adjusted, figures = controlled_adjustment(table, protection, cost="cells", algorithm="milp")
    assert figures["objective"] == pytest.approx(20)
    assert abs(adjusted[0] - 10) == 5


def test_registered_method() -> None:
    table, protection = _example()
    result = run_table_method("cta", TableProblem(table, protection), {})
    assert result.status.tolist() == ["primary"] + ["published"] * 8
    assert result.figures["objective"] == pytest.approx(101 / 120)
    assert table.is_additive(result.released)


def _brute_force(table: LinearTable, protection: Protection, cost: str) -> float:
    """Least objective over every combination of directions (each an LP)."""
    k = protection.cells.shape[0]
    found = [
        fixed_direction_objective(table, protection, list(up), cost=cost)
        for up in itertools.product([False, True], repeat=k)
    ]
    return min(value for value in found if value is not None)


def _random_problem(shape: tuple, seed: int, sensitive: int) -> tuple[LinearTable, Protection]:
    rng = np.random.default_rng(seed)
    table = LinearTable.from_array(rng.integers(0, 30, shape))
    interior = np.flatnonzero(~table.totals())
    cells = rng.choice(interior, size=min(sensitive, interior.size), replace=False)
    upl = np.maximum(1.0, np.round(0.3 * table.values[cells]))
    lpl = np.minimum(upl, table.values[cells])  # a cell can always move down to 0 at most
    return table, Protection.of_cells(table.n_cells, cells, upl, np.where(lpl > 0, lpl, upl))


def _check(table: LinearTable, protection: Protection, adjusted: np.ndarray) -> None:
    assert table.is_additive(adjusted)
    assert np.all(adjusted >= -1e-9)
    p = protection.cells
    change = adjusted[p] - table.values[p]
    assert np.all((change >= protection.upper[p] - 1e-7) | (-change >= protection.lower[p] - 1e-7))


@pytest.mark.slow
@settings(max_examples=25)
@given(
    st.sampled_from([(2, 2), (3, 3), (3, 4), (2, 2, 2), (2, 3, 2)]),
    st.integers(0, 2**32 - 1),
    st.integers(1, 3),
)
def test_random_tables(shape: tuple, seed: int, sensitive: int) -> None:
    table, protection = _random_problem(shape, seed, sensitive)
    for cost in ("inverse", "cells"):
        exact, exact_figures = controlled_adjustment(table, protection, cost=cost, algorithm="milp")
        _check(table, protection, exact)
        assert exact_figures["optimal"] is True
        assert exact_figures["objective"] == pytest.approx(
            _brute_force(table, protection, cost), rel=1e-7, abs=1e-9
        )
        try:
            heuristic, heuristic_figures = controlled_adjustment(table, protection, cost=cost, algorithm="lp")
        except InputError:
            continue  # the heuristic may fail; auto then runs the MILP
        _check(table, protection, heuristic)
        assert exact_figures["objective"] <= heuristic_figures["objective"] + 1e-9


def test_keep_totals() -> None:
    table, protection = _example()
    adjusted, figures = controlled_adjustment(table, protection, keep_totals=True)
    change = (adjusted - table.values).reshape(3, 3)
    assert np.all(change[2, :] == 0) and np.all(change[:, 2] == 0)
    assert table.is_additive(adjusted)
    assert abs(change[0, 0]) >= 5
    margin = Protection.of_cells(table.n_cells, [2], 5, 5)  # a row total
    with pytest.raises(InputError, match="v1=1, v2=Total.*keep_totals"):
        controlled_adjustment(table, margin, keep_totals=True)


def test_cell_that_cannot_move() -> None:
    table = LinearTable.from_array([[10, 20], [30, 40]], upper=np.inf)
    protection = Protection.of_cells(table.n_cells, [0], 5, 11)
    bounded = LinearTable.from_array([[10, 20], [30, 40]], upper=12)
    with pytest.raises(InputError, match="v1=1, v2=1 cannot be moved"):
        controlled_adjustment(bounded, protection)
    adjusted, figures = controlled_adjustment(table, protection)  # down impossible (11 > 10): up
    assert adjusted[0] >= 15 and figures["moved_up"] == 1


def test_no_sensitive_cells() -> None:
    table = LinearTable.from_array([[1, 2], [3, 4]])
    adjusted, figures = controlled_adjustment(table, Protection.none(table.n_cells))
    assert np.array_equal(adjusted, table.values) and figures["objective"] == 0


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"cost": "value"}, r"^cost must be 'inverse' or 'cells', got 'value'$"),
        ({"algorithm": "greedy"}, r"^algorithm must be 'auto', 'milp' or 'lp', got 'greedy'$"),
        ({"time_limit": -1}, r"^time_limit must be greater than 0, got -1$"),
        (
            {"keep_totals": "yes please"},
            r"^keep_totals must be a valid boolean, unable to interpret input, got 'yes please'$",
        ),
    ],
)
def test_bad_parameters(params: dict, match: str) -> None:
    """One rule per parameter: the registered method and controlled_adjustment() both check it by
    CtaParams, in the same words."""
    table, protection = _example()
    with pytest.raises(ConfigError, match=match):
        run_table_method("cta", TableProblem(table, protection), params)
    with pytest.raises(ConfigError, match=match):
        controlled_adjustment(table, protection, **params)
    if "cost" in params:
        with pytest.raises(ConfigError, match=match):
            fixed_direction_objective(table, protection, [True], **params)
