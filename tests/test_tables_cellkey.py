"""The cell key method: ptable's perturbation tables, exact cell keys, the same noise for the same cell
in every table, the noise distribution, magnitude tables (cellKey's flex variant)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import sparse, stats

from conftest import make_table
from sdckit.errors import ConfigError, InputError
from sdckit.tabular import cellkey
from sdckit.tabular.base import TABLE_METHODS, TableProblem, run_table_method
from sdckit.tabular.cellkey import (
    CellKeyParams,
    cell_keys,
    flex_multiplier,
    perturb_counts,
    perturb_magnitudes,
    perturbation_table,
    record_keys,
)
from sdckit.tabular.model import LinearTable, Protection

# ------------------------------------------------------------------------------------------------
# Tiny problems built by hand: records with codes per dimension, the table from LinearTable.from_array
# and the membership of every record in every cell (margins included) for cell_sums.


def _membership(codes: np.ndarray, shape: tuple[int, ...]) -> sparse.csr_matrix:
    """cells × records: record r is in cell c when every index of c is its code or the total slot."""
    full = tuple(s + 1 for s in shape)
    index = np.arange(int(np.prod(full))).reshape(full)
    rows, cols = [], []
    n, k = codes.shape
    for r in range(n):
        choices = [(codes[r, d], shape[d]) for d in range(k)]
        for combo in np.array(np.meshgrid(*choices, indexing="ij")).reshape(k, -1).T:
            rows.append(index[tuple(combo)])
            cols.append(r)
    return sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(index.size, n))


def _problem(codes: np.ndarray, shape: tuple[int, ...], data: pl.DataFrame | None = None) -> TableProblem:
    interior = np.zeros(shape)
    np.add.at(interior, tuple(codes.T), 1)
    table = LinearTable.from_array(interior)
    member = _membership(codes, shape)
    assert np.array_equal(member @ np.ones(codes.shape[0]), table.values)
    data = (
        data if data is not None else pl.DataFrame({f"v{d + 1}": codes[:, d] for d in range(codes.shape[1])})
    )
    problem = TableProblem(table, Protection.none(table.n_cells), source=SimpleNamespace(data=data))
    object.__setattr__(problem, "spec", member)  # the hand-made cell_sums reads it
    return problem


@pytest.fixture(autouse=True)
def _hand_cell_sums(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cellkey, "_cell_sums", lambda problem, values: problem.spec @ values)


# ------------------------------------------------------------------------------------------------
# The perturbation table


def test_ptable_matches_the_ptable_vignette_for_D2_V1() -> None:
    """ptable's vignette (create_cnt_ptable(D = 2, V = 1), CRAN 1.0.0): row 1 p = 0.3665 0.3665
    0.1676 0.0995 (variance 0.932, V not reached), row 2 p(−2) = 0.0638, p(0) = 0.383, variance 1."""
    pt = perturbation_table(2, 1.0)
    row1 = pt.row(1.0)
    assert row1["v"].to_list() == [-1, 0, 1, 2]
    assert np.allclose(row1["p"].to_numpy(), [0.3665, 0.3665, 0.1676, 0.0995], atol=6e-5)
    row2 = pt.row(2.0)
    assert row2["v"].to_list() == [-2, -1, 0, 1, 2]
    assert row2["p"][0] == pytest.approx(0.0638, abs=6e-5)
    assert row2["p"][2] == pytest.approx(0.383, abs=6e-4)
    assert np.round(pt.variances, 3).tolist() == [0.0, 0.932, 1.0]
    assert pt.rows_below_variance == [1.0]
    assert pt.classes.tolist() == [0, 1, 2]
    assert pt.row(0.0)["p"].to_list() == [1.0]


@pytest.mark.parametrize(("D", "V", "js"), [(2, 1.0, 0), (3, 1.5, 0), (5, 3.0, 2), (4, 2.5, 1), (6, 4.0, 3)])
def test_ptable_rows_are_unbiased_with_variance_V_where_reachable(D: int, V: float, js: int) -> None:
    pt = perturbation_table(D, V, js)
    assert pt.classes[-1] == (D if js == 0 else D + js + 1)
    for i in pt.classes:
        row = pt.row(i)
        p, v, j = row["p"].to_numpy(), row["v"].to_numpy(), row["j"].to_numpy()
        assert p.sum() == pytest.approx(1.0, abs=1e-12)
        assert abs(p @ v) < 1e-9
        assert np.all(np.abs(v) <= D) and np.all(j >= 0)
        assert not np.any((j >= 1) & (j <= js)), "no target in 1..js"
        if i == 0:
            assert j.tolist() == [0.0]
        if i == 0:
            continue
        if i not in pt.rows_below_variance:
            assert p @ v**2 == pytest.approx(V, abs=1e-9)
        else:
            assert p @ v**2 < V
        # cumulative intervals tile [0, 1)
        assert row["p_int_lb"][0] == 0.0 and row["p_int_ub"][-1] == 1.0
        assert np.allclose(row["p_int_lb"].to_numpy()[1:], row["p_int_ub"].to_numpy()[:-1])
    # the last row is symmetric on -D..D
    last = pt.row(pt.classes[-1])
    assert last["v"].to_list() == list(range(-D, D + 1))
    assert np.allclose(last["p"].to_numpy(), last["p"].to_numpy()[::-1], atol=1e-12)


def test_ptable_is_the_maximum_entropy_distribution() -> None:
    """No feasible perturbation of a row raises its entropy (directions keeping sum, mean, variance)."""
    pt = perturbation_table(4, 2.0)
    row = pt.row(4.0)
    p, v = row["p"].to_numpy(), row["v"].to_numpy()
    entropy = -(p * np.log(p)).sum()
    # the null space of the constraints sum, mean, variance
    A = np.vstack([np.ones_like(v), v, v**2])
    null = np.linalg.svd(A)[2][3:]
    rng = np.random.default_rng(1)
    for _ in range(200):
        q = p + 1e-3 * rng.standard_normal(null.shape[0]) @ null
        if np.all(q > 0):
            assert -(q * np.log(q)).sum() <= entropy + 1e-12
    # the exponential family: log p is quadratic in v
    coef = np.polyfit(v, np.log(p), 2)
    assert np.allclose(np.polyval(coef, v), np.log(p), atol=1e-9)


def test_mono_constraint_binds_on_the_truncated_row() -> None:
    """Row 1 of D = 2: without monotony the maximum entropy has p(−1) > p(0)."""
    free = perturbation_table(2, 1.0, mono=False).row(1.0)["p"].to_numpy()
    mono = perturbation_table(2, 1.0).row(1.0)["p"].to_numpy()
    assert free[0] > free[1]
    assert mono[0] == pytest.approx(mono[1], abs=1e-12)


def test_pstay_sets_the_probability_of_no_change() -> None:
    """ptable's vignette: create_cnt_ptable(D = 4, V = 1, pstay = 0.5) keeps 50% of every count."""
    pt = perturbation_table(4, 1.0, pstay=0.5)
    stay = pt.frame.filter(pl.col("v") == 0)["p"].to_numpy()
    assert np.allclose(stay[1:], 0.5, atol=1e-9)
    assert np.allclose(pt.variances[1:], 1.0, atol=1e-9)


def test_pstay_is_lowered_while_the_variance_is_missed() -> None:
    pt = perturbation_table(2, 1.5, pstay=0.6)
    stay = float(pt.row(2.0).filter(pl.col("v") == 0)["p"][0])
    assert stay < 0.6 - 0.05 + 1e-9  # 0.6 forces variance ≤ 0.4·4 … loop lowered it
    assert pt.variances[-1] == pytest.approx(1.5, abs=5e-4)


#: One rule per parameter, worded by the parameters object (CellKeyParams) for the keyword functions too.
_PARAMETER_RULES = [
    ({"max_deviation": 0}, r"^max_deviation must be greater than or equal to 1, got 0$"),
    ({"max_deviation": 2.0}, r"^max_deviation must be a valid integer, got 2\.0$"),
    ({"variance": 0.0}, r"^variance must be greater than 0, got 0\.0$"),
    ({"small_cells": -1}, r"^small_cells must be greater than or equal to 0, got -1$"),
    ({"pstay": 1.0}, r"^pstay must be less than 1, got 1\.0$"),
    ({"pstay": 0.0}, r"^pstay must be greater than 0, got 0\.0$"),
    ({"step": 0}, r"^step must be greater than or equal to 1, got 0$"),
    (
        {"max_deviation": 0, "variance": -1.0},
        r"^max_deviation must be greater than or equal to 1, got 0; "
        r"variance must be greater than 0, got -1\.0$",
    ),
]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        *_PARAMETER_RULES,
        ({"max_deviation": 2, "variance": 2.5}, "cannot be reached"),
        ({"max_deviation": 5, "variance": 1.0, "small_cells": 2}, "too small for small_cells"),
        ({"kind": "sums"}, r"^kind must be 'counts' or 'magnitudes', got 'sums'$"),
    ],
)
def test_ptable_rejects_bad_parameters(kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        perturbation_table(**kwargs)


@pytest.mark.parametrize(("kwargs", "message"), _PARAMETER_RULES)
def test_the_registered_method_words_each_rule_alike(kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        TABLE_METHODS.get("cell-key").params.parse(kwargs, method="cell-key")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"p_small": 0.0}, r"^p_small must be greater than 0, got 0\.0$"),
        ({"p_large": 1.5}, r"^p_large must be less than or equal to 1, got 1\.5$"),
        ({"flex_point": -1.0}, r"^flex_point must be greater than 0, got -1\.0$"),
        ({"q": 0.5}, r"^q must be greater than or equal to 1, got 0\.5$"),  # flex_exponent, as written
    ],
)
def test_magnitude_noise_rejects_bad_parameters(kwargs: dict, message: str) -> None:
    pt = perturbation_table(3, 1.0, kind="magnitudes", step=2)
    with pytest.raises(ConfigError, match=message):
        perturb_magnitudes([10.0], [4.0], np.array([0.5]), pt, **{"flex_point": 5.0, **kwargs})


def test_magnitude_ptable_has_a_fine_grid() -> None:
    pt = perturbation_table(5, 2.0, kind="magnitudes", step=4)
    assert pt.classes.tolist() == [0, 1, 2, 3, 4, 5]
    last = pt.row(5.0)
    assert last.height == 41
    assert np.allclose(np.diff(last["v"].to_numpy()), 0.25)
    for i in pt.classes[1:]:
        row = pt.row(i)
        p, v = row["p"].to_numpy(), row["v"].to_numpy()
        assert abs(p @ v) < 1e-9
        assert row["j"].min() >= 0


# ------------------------------------------------------------------------------------------------
# Keys and lookup


def test_cell_keys_are_exact_sums_modulo_one() -> None:
    keys = np.array([0.75, 0.5, 0.125, 0.999])
    member = sparse.csr_matrix(np.array([[1, 1, 0, 0], [0, 0, 1, 1], [1, 1, 1, 1], [0, 0, 0, 0]], float))
    ck = cell_keys(keys, lambda v: member @ v)
    expected = np.mod([1.25, 1.124, 2.374, 0.0], 1.0)
    assert np.allclose(ck, expected, atol=1e-15)
    # order of summation does not matter: bit-identical
    rng = np.random.default_rng(3)
    many = record_keys(10_000, seed=5)
    perm = rng.permutation(many.size)
    one = cell_keys(many, lambda v: np.array([v.sum()]))
    other = cell_keys(many[perm], lambda v: np.array([np.add.reduce(v[::-1])]))
    assert one[0] == other[0]
    with pytest.raises(InputError, match=r"\[0, 1\)"):
        cell_keys(np.array([0.2, 1.0]), lambda v: v)


def test_lookup_follows_the_intervals() -> None:
    pt = perturbation_table(2, 1.0)
    row = pt.row(2.0)
    lows, highs, v = row["p_int_lb"].to_numpy(), row["p_int_ub"].to_numpy(), row["v"].to_numpy()
    keys = np.r_[lows, (lows + highs) / 2, np.nextafter(highs, 0)]
    noise = perturb_counts(np.full(keys.size, 17.0), keys, pt)
    assert noise.tolist() == np.r_[v, v, v].tolist()
    assert perturb_counts(np.zeros(5), np.linspace(0, 0.99, 5), pt).tolist() == [0.0] * 5
    with pytest.raises(InputError, match="whole counts"):
        perturb_counts(np.array([1.5]), np.array([0.1]), pt)


def test_noise_follows_the_ptable_distribution() -> None:
    """200,000 cells of count i with uniform cell keys: the noise frequencies match the row."""
    rng = np.random.default_rng(20260)
    pt = perturbation_table(3, 1.5, 1)
    n = 200_000
    for i in (1, 2, 3, 9):
        keys = rng.random(n)
        noise = perturb_counts(np.full(n, float(i)), keys, pt)
        row = pt.row(float(min(i, pt.classes[-1])))
        v, p = row["v"].to_numpy(), row["p"].to_numpy()
        observed = np.array([(noise == x).sum() for x in v])
        assert observed.sum() == n
        assert stats.chisquare(observed, p * n).pvalue > 0.001
        assert abs(noise.mean()) < 4 * np.sqrt((p @ v**2) / n)
        assert noise.var() == pytest.approx(p @ v**2, rel=0.02)
        assert np.all(i + noise >= 0) and not np.any((i + noise >= 1) & (i + noise <= 1))


# ------------------------------------------------------------------------------------------------
# The method on tables


def _records(n: int, shape: tuple[int, ...], seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.column_stack([rng.integers(0, s, n) for s in shape])


def test_same_cell_same_noise_in_two_tables() -> None:
    """A 2-D table (v1 × v2) and the 1-D table of v1 share the v1 margin and the grand total: their
    cell keys are sums over the same records, so they get the same perturbed values."""
    codes = _records(400, (4, 3), seed=1)
    two = _problem(codes, (4, 3))
    one = _problem(codes[:, :1], (4,), data=two.source.data)
    r2 = run_table_method("cell-key", two, {"seed": 7})
    r1 = run_table_method("cell-key", one, {"seed": 7})
    margin_2d = r2.released.reshape(5, 4)[:, 3]  # v2 = Total: the v1 margin and the grand total
    assert np.array_equal(margin_2d, r1.released)
    assert not np.array_equal(r2.released, two.table.values), "cells are perturbed"
    # a differencing attack gains nothing: the same cell never gets two different values
    r2again = run_table_method("cell-key", two, {"seed": 7})
    assert np.array_equal(r2.released, r2again.released)
    # another seed, other keys
    assert not np.array_equal(run_table_method("cell-key", two, {"seed": 8}).released, r2.released)


def test_record_key_column_is_shared_across_tables() -> None:
    codes = _records(300, (3, 3), seed=2)
    keys = np.random.default_rng(9).random(300)
    data = pl.DataFrame({"v1": codes[:, 0], "v2": codes[:, 1], "rkey": keys})
    two = _problem(codes, (3, 3), data=data)
    one = _problem(codes[:, 1:], (3,), data=data)  # the v2 margin
    r2 = run_table_method("cell-key", two, {"record_key": "rkey", "seed": 1})
    r1 = run_table_method("cell-key", one, {"record_key": "rkey", "seed": 2})
    assert np.array_equal(r2.released.reshape(4, 4)[3, :], r1.released)
    bad = data.with_columns(pl.Series("rkey", np.r_[keys[:-1], 1.2]))
    with pytest.raises(InputError, match="record 299"):
        run_table_method("cell-key", _problem(codes, (3, 3), data=bad), {"record_key": "rkey"})
    missing = data.with_columns(pl.Series("rkey", [None, *keys[1:].tolist()]))
    with pytest.raises(InputError, match="missing"):
        run_table_method("cell-key", _problem(codes, (3, 3), data=missing), {"record_key": "rkey"})
    with pytest.raises(InputError, match="no column"):
        run_table_method("cell-key", two, {"record_key": "nope"})


def test_method_needs_microdata() -> None:
    table = LinearTable.from_array([[1, 2], [3, 4]])
    with pytest.raises(ConfigError, match="microdata"):
        run_table_method("cell-key", TableProblem(table, Protection.none(table.n_cells)), {})


@settings(max_examples=25)
@given(
    shape=st.lists(st.integers(1, 4), min_size=2, max_size=3).map(tuple),
    n=st.integers(0, 60),
    seed=st.integers(0, 2**16),
    js=st.integers(0, 2),
)
def test_zero_stays_zero_no_negatives_no_small_counts(
    shape: tuple[int, ...], n: int, seed: int, js: int
) -> None:
    codes = _records(n, shape, seed).reshape(n, len(shape))
    problem = _problem(codes, shape)
    result = run_table_method(
        "cell-key", problem, {"seed": seed, "small_cells": js, "variance": 3.0, "max_deviation": 3}
    )
    original, released = problem.table.values, result.released
    assert np.all(released[original == 0] == 0)
    assert np.all(released >= 0)
    assert np.all(np.abs(released - original) <= 3)
    assert not np.any((released >= 1) & (released <= js)), "no perturbed count in 1..js"
    assert np.all(released == np.round(released))
    assert set(result.status.tolist()) <= {"published"}
    assert result.figures["cells_perturbed"] == int(np.count_nonzero(released != original))


def test_figures_and_registration() -> None:
    spec = TABLE_METHODS.get("cell-key")
    assert spec.needs_primary is False and spec.params is CellKeyParams
    codes = _records(5000, (20, 10), seed=4)
    result = run_table_method("cell-key", _problem(codes, (20, 10)), {"seed": 3})
    f = result.figures
    assert f["max_deviation"] == 2 and f["variance"] == 1.0 and f["additive"] is False
    noise = result.released - result.table.values
    assert f["mean_absolute_noise"] == pytest.approx(np.abs(noise).mean())
    assert f["observed_noise_variance"] == pytest.approx(noise.var())
    assert 0.5 < f["observed_noise_variance"] < 1.6
    assert not result.table.is_additive(result.released), "totals are perturbed on their own"
    assert any("not additive" in line for line in spec.report(spec.summary(result)))


# ------------------------------------------------------------------------------------------------
# Magnitude tables


def test_flex_function() -> None:
    fp = 1000.0
    m = flex_multiplier(np.array([10.0, 999.0, 1000.0, 1e5, 1e9]), 0.25, 0.05, fp, 3.0)
    assert m[0] == m[1] == 0.25
    assert m[2] == pytest.approx(0.25)  # continuous at fp: p_large (1 + (p_small/p_large − 1)·1)
    assert 0.05 < m[3] < 0.25 and m[4] == pytest.approx(0.05, rel=1e-3)
    assert np.all(np.diff(m[2:]) < 0)


def test_magnitude_noise_hand_computed() -> None:
    """x_o = 1000, x_1 = 400 < fp: x_Δ = 0.25·400 = 100, a = 4 (row 4 of the numeric ptable);
    released 1000 + 100·v with v the row-4 noise of the cell key."""
    pt = perturbation_table(5, 2.0, kind="magnitudes", step=2)
    row = pt.row(4.0)
    for key in (0.01, 0.5, 0.97):
        v = row.filter((pl.col("p_int_lb") <= key) & (pl.col("p_int_ub") > key))["v"][0]
        noise = perturb_magnitudes([1000.0], [400.0], np.array([key]), pt, flex_point=1000.0)
        assert noise[0] == pytest.approx(100 * v)
    # a between rows: x_1 = 400, fp small so m = flex(400) → a = 1/m interpolated between rows
    m = flex_multiplier(np.array([400.0]), 0.25, 0.05, 100.0, 3.0)[0]
    a = 1 / m
    assert a > 5, "large cells use the symmetric row"
    assert m == pytest.approx(0.05 * (1 + 19 * 0.4**3))
    v5 = pt.row(5.0).filter((pl.col("p_int_lb") <= 0.999) & (pl.col("p_int_ub") > 0.999))["v"][0]
    noise = perturb_magnitudes([1000.0], [400.0], np.array([0.999]), pt, flex_point=100.0)
    assert noise[0] == pytest.approx(400 * m * v5)
    # between rows: x_o = 1000, x_1 = 400 and p_small = 0.4 → a = 2.5, halfway between rows 2 and 3
    key = np.array([0.3])
    halfway = perturb_magnitudes([1000.0], [400.0], key, pt, flex_point=1000.0, p_small=0.4)
    v2, v3 = pt.noise(np.array([2]), key)[0], pt.noise(np.array([3]), key)[0]
    assert halfway[0] == pytest.approx(160 * (v2 + v3) / 2)
    # a cell smaller than its noise scale: x_Δ = x_o, a = 1/p_small = 4; never negative
    keys = np.linspace(0, 0.999, 50)
    small = perturb_magnitudes(np.full(50, 30.0), np.full(50, 400.0), keys, pt, flex_point=1000.0)
    assert np.all(30 + small >= 0)
    assert np.all(np.abs(small) <= 30 * 5 + 1e-9)
    # empty cells stay empty
    assert perturb_magnitudes([0.0], [0.0], np.array([0.3]), pt, flex_point=1.0)[0] == 0


def test_magnitude_table_through_the_method() -> None:
    codes = _records(200, (3, 2), seed=6)
    problem = _problem(codes, (3, 2))
    rng = np.random.default_rng(1)
    x = rng.lognormal(4, 1, 200)
    values = problem.spec @ x
    top = np.zeros((problem.table.n_cells, 1))
    member = problem.spec.tocsr()
    for c in range(member.shape[0]):
        recs = member.indices[member.indptr[c] : member.indptr[c + 1]]
        top[c, 0] = x[recs].max() if recs.size else 0.0
    table = LinearTable(
        values=values,
        relations=problem.table.relations,
        cells=problem.table.cells,
        dimensions=problem.table.dimensions,
        kind="magnitude",
        top=top,
        value_name="x",
    )
    magnitude = TableProblem(table, problem.protection, source=problem.source)
    object.__setattr__(magnitude, "spec", problem.spec)
    result = run_table_method("cell-key", magnitude, {"seed": 2, "max_deviation": 3, "variance": 1.0})
    assert np.all(result.released >= 0)
    assert result.figures["flex_point"] == pytest.approx(np.median(top[top > 0]))
    expected = perturb_magnitudes(
        values,
        top[:, 0],
        cell_keys(record_keys(200, 2), lambda v: problem.spec @ v),
        perturbation_table(3, 1.0, kind="magnitudes", step=2),
        flex_point=float(np.median(top[top > 0])),
    )
    assert np.allclose(result.released, values + expected)
    no_top = TableProblem(
        table.with_values(values).__class__(
            values=values, relations=table.relations, cells=table.cells, kind="magnitude"
        ),
        problem.protection,
        source=problem.source,
    )
    object.__setattr__(no_top, "spec", problem.spec)
    with pytest.raises(InputError, match="largest contributions"):
        run_table_method("cell-key", no_top, {})


# ------------------------------------------------------------------------------------------------
# Tables built from microdata (sdckit.tabular.build: the real cell_sums)


def _microdata(n: int, seed: int) -> Any:

    rng = np.random.default_rng(seed)
    frame = pl.DataFrame(
        {
            "region": rng.choice(["N", "S", "E", "W"], n),
            "sex": rng.choice(["f", "m"], n),
            "activity": rng.choice(["a", "b", "c"], n),
            "turnover": rng.lognormal(5, 1, n),
        }
    )
    return make_table(frame)


def _by_labels(result: Any, dims: list[str]) -> dict[tuple[str, ...], float]:
    frame = result.table.cells.select(dims)
    return {tuple(row): value for row, value in zip(frame.iter_rows(), result.released, strict=True)}


@pytest.mark.parametrize("kind", ["frequency", "magnitude"])
def test_same_cell_same_value_in_tables_built_from_microdata(
    monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    from sdckit.tabular.build import TableSpec
    from sdckit.tabular.problem import make_problem

    monkeypatch.undo()  # the real cell_sums of sdckit.tabular.build
    source = _microdata(3000, seed=12)
    value = "turnover" if kind == "magnitude" else None
    wide = make_problem(source, TableSpec.of("region", "sex", "activity", value=value))
    narrow = make_problem(source, TableSpec.of("region", "activity", value=value))
    assert wide.table.kind == kind
    params = {"seed": 5, "max_deviation": 3, "variance": 2.0}
    if kind == "magnitude":
        params["flex_point"] = 500.0
    r_wide = run_table_method("cell-key", wide, params)
    r_narrow = run_table_method("cell-key", narrow, params)
    wide_cells = _by_labels(r_wide, ["region", "sex", "activity"])
    narrow_cells = _by_labels(r_narrow, ["region", "activity"])
    shared = {(r, "Total", a): v for (r, a), v in narrow_cells.items()}
    assert len(shared) == 5 * 4  # regions and activities with their totals
    for key, released in shared.items():
        if kind == "frequency":
            assert wide_cells[key] == released, key
        else:  # the original sums of turnover differ in the last bit (summation order); the noise not
            assert wide_cells[key] == pytest.approx(released, rel=1e-13, abs=0), key
    noise = r_wide.released - wide.table.values
    assert np.count_nonzero(noise) > 0
    assert np.all(r_wide.released >= 0)
    if kind == "frequency":
        assert np.all(np.abs(noise) <= 3)
