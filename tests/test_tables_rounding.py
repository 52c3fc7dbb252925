"""Controlled rounding (SPEC §8.7): the worked example, a brute-force oracle, additivity properties,
an infeasible 3-D table and the relaxed model, parameters and errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.errors import ConfigError, InputError
from sdckit.tabular.base import TableProblem, run_table_method
from sdckit.tabular.model import LinearTable, Protection
from sdckit.tabular.rounding import controlled_rounding

#: A 2×2×2 table with no zero-restricted additive rounding to base 2 (found by brute force).
INFEASIBLE = [[[3, 0], [1, 1]], [[3, 0], [2, 1]]]


def _full(interior: np.ndarray) -> np.ndarray:
    """Every cell of ``from_array(interior)`` (interior and all margins) for a stack of interiors."""
    stack = np.asarray(interior, dtype=np.float64)
    shape = stack.shape[1:]
    full = np.zeros((stack.shape[0], *(s + 1 for s in shape)))
    full[(slice(None), *(slice(0, s) for s in shape))] = stack
    for r in range(1, len(shape) + 1):
        for axes in itertools.combinations(range(len(shape)), r):
            sums = stack.sum(axis=tuple(a + 1 for a in axes), keepdims=True)
            index = [slice(None)] + [shape[d] if d in axes else slice(0, shape[d]) for d in range(len(shape))]
            full[tuple(index)] = sums.reshape(full[tuple(index)].shape)
    return full.reshape(stack.shape[0], -1)


def _oracle(interior: np.ndarray, base: int, relaxed: bool = False) -> float | None:
    """Least total absolute deviation over every rounding of the interior (each rounding is determined
    by its interior), keeping those whose margins are allowed values too; None when there is none."""
    interior = np.asarray(interior, dtype=np.float64)
    original = _full(interior[None])[0]
    floor = np.floor(interior.ravel() / base)
    if relaxed:
        choices = [
            [0.0] if a == 0 else [k for k in (f - 1, f, f + 1, f + 2) if k >= 0]
            for a, f in zip(interior.ravel(), floor, strict=True)
        ]
    else:
        choices = [[f] if a % base == 0 else [f, f + 1] for a, f in zip(interior.ravel(), floor, strict=True)]
    grid = np.array(list(itertools.product(*choices))) * base
    rounded = _full(grid.reshape(-1, *interior.shape))
    fl = np.floor(original / base) * base
    if relaxed:
        allowed = (rounded >= fl - base) & (rounded <= fl + 2 * base) & (rounded >= 0)
        allowed &= np.where(original == 0, rounded == 0, True)
    else:
        allowed = np.where(
            original % base == 0, rounded == original, (rounded == fl) | (rounded == fl + base)
        )
    ok = allowed.all(axis=1)
    if not ok.any():
        return None
    return float(np.abs(rounded[ok] - original).sum(axis=1).min())


def test_spec_example() -> None:
    table = LinearTable.from_array([[3, 7], [6, 4]])
    rounded, figures = controlled_rounding(table, 5)
    assert rounded.reshape(3, 3).tolist() == [[5, 5, 10], [5, 5, 10], [10, 10, 20]]
    assert figures["deviation"] == 8.0
    assert figures["max_deviation"] == 2.0
    assert figures["cells_changed"] == 6
    assert figures["optimal"] is True
    assert figures["solver"] == "lp"  # the LP relaxation is integral (2-D network structure)
    assert figures["relaxed"] is False
    assert _oracle(np.array([[3, 7], [6, 4]]), 5) == 8.0


def test_registered_method() -> None:
    table = LinearTable.from_array([[3, 7], [6, 4]])
    problem = TableProblem(table, Protection.none(table.n_cells))
    result = run_table_method("round", problem, {"base": 5})
    assert result.method == "round"
    assert result.released.reshape(3, 3)[:2, :2].tolist() == [[5, 5], [5, 5]]
    assert set(result.status) == {"published"}
    assert result.figures["deviation"] == 8.0
    assert result.params.base == 5


@pytest.mark.parametrize(
    ("interior", "base"),
    [
        ([[3, 7], [6, 4]], 5),
        ([[1, 2, 3], [4, 5, 6]], 3),
        ([[0, 9, 2], [7, 1, 8], [3, 3, 3]], 4),
        ([[5, 10]], 5),
    ],
)
def test_oracle_2d(interior: list, base: int) -> None:
    table = LinearTable.from_array(interior)
    _, figures = controlled_rounding(table, base)
    assert figures["deviation"] == pytest.approx(_oracle(np.array(interior), base), abs=1e-9)


def test_infeasible_3d_raises_and_relax_solves() -> None:
    table = LinearTable.from_array(INFEASIBLE)
    assert _oracle(np.array(INFEASIBLE), 2) is None
    with pytest.raises(InputError, match="no additive controlled rounding to base 2.*set relax"):
        controlled_rounding(table, 2)
    rounded, figures = controlled_rounding(table, 2, relax=True)
    assert figures["relaxed"] is True
    assert table.is_additive(rounded)
    assert np.all(rounded % 2 == 0)
    assert figures["deviation"] == pytest.approx(_oracle(np.array(INFEASIBLE), 2, relaxed=True))
    problem = TableProblem(table, Protection.none(table.n_cells))
    with pytest.raises(InputError, match="relax"):
        run_table_method("round", problem, {"base": 2})
    assert run_table_method("round", problem, {"base": 2, "relax": True}).figures["relaxed"] is True


def _check(table: LinearTable, rounded: np.ndarray, base: int, relaxed: bool) -> None:
    assert table.is_additive(rounded, tolerance=0.0)
    assert np.all(rounded % base == 0)
    assert np.all(rounded == np.round(rounded))
    if not relaxed:
        multiple = table.values % base == 0
        assert np.array_equal(rounded[multiple], table.values[multiple])
        assert np.all(np.abs(rounded - table.values) < base)


@settings(max_examples=40)
@given(
    st.integers(2, 5),
    st.integers(2, 5),
    st.integers(2, 7),
    st.integers(0, 2**32 - 1),
)
def test_random_2d_additive_and_optimal(rows: int, cols: int, base: int, seed: int) -> None:
    interior = np.random.default_rng(seed).integers(0, 25, (rows, cols))
    table = LinearTable.from_array(interior)
    rounded, figures = controlled_rounding(table, base)
    _check(table, rounded, base, relaxed=False)
    assert figures["optimal"] is True
    if rows * cols <= 12:
        assert figures["deviation"] == pytest.approx(_oracle(interior, base), abs=1e-9)


@settings(max_examples=30)
@given(
    st.sampled_from([(2, 2, 2), (2, 2, 3), (2, 3, 3), (3, 3, 3)]),
    st.integers(2, 5),
    st.integers(0, 2**32 - 1),
)
def test_random_3d_additive_or_infeasible(shape: tuple, base: int, seed: int) -> None:
    interior = np.random.default_rng(seed).integers(0, 3 * base, shape)
    table = LinearTable.from_array(interior)
    small = np.prod(shape) <= 12
    try:
        rounded, figures = controlled_rounding(table, base)
    except InputError:
        if small:
            assert _oracle(interior, base) is None
        rounded, figures = controlled_rounding(table, base, relax=True)
        _check(table, rounded, base, relaxed=True)
        return
    _check(table, rounded, base, relaxed=False)
    if small:
        assert figures["deviation"] == pytest.approx(_oracle(interior, base), abs=1e-9)


def test_magnitude_values() -> None:
    table = LinearTable.from_array([[12.5, 3.25], [7.0, 20.0]], kind="magnitude")
    rounded, figures = controlled_rounding(table, 5)
    _check(table, rounded, 5, relaxed=False)
    assert rounded.reshape(3, 3)[1, 1] == 20.0  # a multiple stays
    assert figures["deviation"] == pytest.approx(np.abs(rounded - table.values).sum())


def test_cost_relative() -> None:
    table = LinearTable.from_array([[3, 7], [6, 4]])
    problem = TableProblem(table, Protection.none(table.n_cells))
    result = run_table_method("round", problem, {"base": 5, "cost": "relative"})
    assert table.is_additive(result.released)
    assert result.figures["deviation"] >= 8.0


def test_non_additive_input() -> None:
    table = LinearTable.from_array([[3, 7], [6, 4]])
    broken = table.with_values(table.values + np.r_[1.0, np.zeros(8)])
    with pytest.raises(InputError, match="not additive"):
        controlled_rounding(broken, 5)


_RULES = [
    ({"base": 1}, r"^base must be greater than or equal to 2, got 1$"),
    ({"base": 2.5}, r"^base must be a valid integer, got 2\.5$"),
    ({"time_limit": 0}, r"^time_limit must be greater than 0, got 0$"),
    ({"relax": "sometimes"}, r"^relax must be a valid boolean, unable to interpret input, got 'sometimes'$"),
]


@pytest.mark.parametrize(
    ("params", "match"),
    [*_RULES, ({"cost": "l2"}, r"^cost must be 'deviation' or 'relative', got 'l2'$")],
)
def test_bad_parameters(params: dict, match: str) -> None:
    table = LinearTable.from_array([[3, 7], [6, 4]])
    with pytest.raises(ConfigError, match=match):
        run_table_method("round", TableProblem(table, Protection.none(table.n_cells)), params)


@pytest.mark.parametrize(("params", "match"), _RULES)
def test_the_keyword_function_checks_by_the_same_rules(params: dict, match: str) -> None:
    """controlled_rounding() checks base, relax and time_limit by RoundParams' rules, in its words."""
    table = LinearTable.from_array([[3, 7], [6, 4]])
    with pytest.raises(ConfigError, match=match):
        controlled_rounding(table, **params)
