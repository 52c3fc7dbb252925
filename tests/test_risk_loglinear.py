"""sdckit risk loglinear: sdcMicro's modRisk (issue 37, item 1).

Golden values: every expectation of sdcMicro's tests/testthat/test_modRisks.R that does not need
missing sampling weights (sdckit refuses them). The test data is R's ``set.seed(123)`` and ``runif``:
R's Mersenne-Twister is reproduced here (R's seed scrambling, then numpy's MT19937 from the 624
words), checked against R's well-known first draws. Then a 2x2 table by hand (closed-form expected
counts), IRLS against IPF, and bad input.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import sdckit.risk.loglinear as loglinear_module
from sdckit.cli import app
from sdckit.errors import ConfigError, InputError
from sdckit.risk._loglinear_fit import design, independence_fit, ipf_fit, irls_fit
from sdckit.risk.loglinear import LoglinearRiskParams, loglinear_risk, parse_formula
from sdckit.table import Table

runner = CliRunner()
METHODS = ("default", "CE", "PML", "weightedLLM", "IPF")


class RUniform:
    """R's ``runif`` after ``set.seed(seed)`` (Mersenne-Twister, the default kind): R scrambles the seed
    (``seed = 69069 seed + 1`` fifty times), then fills 625 words the same way, the first being the
    position (set to 624) and the other 624 MT's state; ``unif_rand`` is the 32-bit draw times 2^-32
    (never 0 or 1 in practice: R's ``fixup``)."""

    def __init__(self, seed: int) -> None:
        state = seed & 0xFFFFFFFF
        for _ in range(50):
            state = (69069 * state + 1) & 0xFFFFFFFF
        words = []
        for _ in range(625):
            state = (69069 * state + 1) & 0xFFFFFFFF
            words.append(state)
        self.bits = np.random.MT19937(0)
        self.bits.state = {
            "bit_generator": "MT19937",
            "state": {"key": np.array(words[1:], dtype=np.uint32), "pos": 624},
        }

    def __call__(self, n: int, low: float, high: float) -> np.ndarray:
        u = self.bits.random_raw(n) * 2.3283064365386963e-10
        assert ((u > 0) & (u < 1)).all()
        return low + (high - low) * u


def test_r_uniform_draws_are_rs():
    # R: set.seed(123); runif(3) -> 0.2875775 0.7883051 0.4089769
    assert RUniform(123)(3, 0, 1).round(7).tolist() == [0.2875775, 0.7883051, 0.4089769]


def _sample_data(missing: bool) -> Table:
    """test_modRisks.R's sample_Data (the second missing-value block: keys missing, weights complete);
    R's round is half to even, as numpy's."""
    runif = RUniform(123)
    var1 = np.round(runif(10, 1, 3))
    var2 = np.round(runif(10, 1, 2))
    var3 = np.round(runif(10, 1, 5))
    weights = np.round(runif(10, 100, 100))
    if missing:
        var1[[1, 6, 8]] = np.nan
        var2[[2, 4, 9]] = np.nan
        var3[[1, 7]] = np.nan
    frame = pl.DataFrame(
        {
            "Var1": [None if math.isnan(v) else "ABC"[int(v) - 1] for v in var1],
            "Var2": var2,
            "Var3": var3,
            "weights": weights,
        }
    ).with_columns(pl.col("Var2", "Var3").fill_nan(None))
    return dataclasses.replace(Table.from_frame(frame), weights="weights")


def _risk(table, method, bound=None, formula="~Var1+Var2+Var3"):
    return loglinear_risk(table, LoglinearRiskParams(method=method, formula=formula, bound=bound), "weights")


def test_the_sample_data_is_rs():
    frame = _sample_data(False).data
    assert frame.get_column("Var1").to_list() == list("BCBCCABCBB")
    assert frame.get_column("Var2").to_list() == [2, 1, 2, 2, 1, 2, 1, 1, 1, 2]
    assert frame.get_column("Var3").to_list() == [5, 4, 4, 5, 4, 4, 3, 3, 2, 2]


# test_modRisks.R: (gr1, gr2) rounded to 3 decimals, without bound and with bound = 1.5
GOLDEN = {
    ("default", None): (0.553, 0.705),
    ("CE", None): (0.542, 0.699),
    ("PML", None): (0.553, 0.705),
    ("weightedLLM", None): (0.408, 0.613),
    ("IPF", None): (0.553, 0.705),
    ("default", 1.5): (0.622, 0.794),
    ("CE", 1.5): (0.609, 0.786),
    ("PML", 1.5): (0.622, 0.794),
    ("weightedLLM", 1.5): (0.459, 0.690),
    ("IPF", 1.5): (0.622, 0.794),
}
# fitted(mod): every cell of the 3 x 2 x 4 table, Var1 slowest (data.table's key order)
FITTED_MAIN = [0.1, 0.1, 0.2, 0.1, 0.1, 0.1, 0.2, 0.1, 0.5, 0.5, 1.0, 0.5, 0.5, 0.5, 1.0, 0.5]
FITTED_MAIN += [0.4, 0.4, 0.8, 0.4, 0.4, 0.4, 0.8, 0.4]
FITTED = {
    "CE": [0.10, 0.10, 0.20, 0.10, 0.10, 0.10, 0.21, 0.10, 0.52, 0.52, 0.95, 0.47, 0.52, 0.47, 1.03, 0.52]
    + [0.39, 0.43, 0.85, 0.39, 0.38, 0.38, 0.76, 0.42],
    "weightedLLM": [0.03, 0.05, 0.01, 0.02, 0.06, 0.13, 0.63, 0.06, 0.53, 1.07, 0.01, 0.02, 1.34, 0.13]
    + [0.65, 1.25, 0.01, 0.55, 2.68, 0.01, 0.03, 0.07, 0.02, 0.63],
}
# loglm's fitted table (xtabs order: Var1 fastest)
FITTED_IPF = [0.1, 0.5, 0.4, 0.1, 0.5, 0.4, 0.1, 0.5, 0.4, 0.1, 0.5, 0.4]
FITTED_IPF += [0.2, 1, 0.8, 0.2, 1, 0.8, 0.1, 0.5, 0.4, 0.1, 0.5, 0.4]


@pytest.mark.parametrize(("method", "bound"), list(GOLDEN), ids=[f"{m}-{b}" for m, b in GOLDEN])
def test_sdcmicro_global_risks(method, bound):
    figures = _risk(_sample_data(False), method, bound).summary()
    assert (
        round(figures["population_unique_share"], 3),
        round(figures["correct_match_share"], 3),
    ) == GOLDEN[method, bound]
    # the shares are tau1 and tau2 over the non-empty cells within the bound (9, of which 8 unique)
    cells = 9 if bound is None else 8
    assert (figures["cells_within_bound"], figures["sample_uniques"]) == (cells, 8)
    assert figures["expected_population_uniques"] == pytest.approx(figures["population_unique_share"] * cells)


def test_sdcmicro_ipf_to_seven_digits():
    figures = _risk(_sample_data(False), "IPF").summary()
    assert round(figures["population_unique_share"], 6) == 0.552916
    assert round(figures["correct_match_share"], 7) == 0.7053842


@pytest.mark.parametrize("bound", [None, 1.5])
def test_sdcmicro_inclusion_probabilities_of_the_cells(bound):
    for method in METHODS:
        result = _risk(_sample_data(False), method, bound)
        inclusion = result.model.inclusion[result.considered].round(2).tolist()
        expected = [0.01] * 7 + [0.02, 0.01] if bound is None else [0.01] * 8
        assert inclusion == expected, method


@pytest.mark.parametrize("method", ["default", "PML", "CE", "weightedLLM"])
def test_sdcmicro_fitted_counts_of_every_cell(method):
    result = _risk(_sample_data(False), method)
    model = result.model
    if method in FITTED:
        assert model.fit is not None and model.algorithm == "IRLS" and model.fit.converged
        fitted = model.fit.fitted
        expected = FITTED[method]
    else:  # closed form: the observed cells' figures, every cell's from the margins
        grid = np.stack(np.unravel_index(np.arange(24), model.levels), axis=1)
        margins = [np.bincount(model.cell_codes[:, j], model.counts, model.levels[j]) for j in range(3)]
        fitted = independence_fit(grid, margins)
        expected = FITTED_MAIN
    assert model.levels == (3, 2, 4)
    assert fitted.round(2).tolist() == expected


def test_sdcmicro_ipf_fitted_table():
    model = _risk(_sample_data(False), "IPF").model
    table = np.zeros(model.levels)
    table[tuple(model.cell_codes.T)] = model.counts
    fit = ipf_fit(table, [(0,), (1,), (2,)])
    assert fit.iterations == 1 and fit.converged
    assert fit.fitted.reshape(model.levels).ravel(order="F").round(2).tolist() == FITTED_IPF


# test_modRisks.R, the sdcMicroObj block with missing key values (weights complete): gr1
GOLDEN_MISSING = {
    ("weightedLLM", None): 0.372,
    ("IPF", None): 0.584,
    ("default", 1.5): 0.584,
    ("CE", 1.5): 0.573,
    ("PML", 1.5): 0.584,
    ("weightedLLM", 1.5): 0.372,
    ("IPF", 1.5): 0.584,
}


@pytest.mark.parametrize(
    ("method", "bound"), list(GOLDEN_MISSING), ids=[f"{m}-{b}" for m, b in GOLDEN_MISSING]
)
def test_sdcmicro_global_risk_with_missing_keys(method, bound):
    figures = _risk(_sample_data(True), method, bound).summary()
    assert round(figures["population_unique_share"], 3) == GOLDEN_MISSING[method, bound]
    assert figures["records_left_out"] == 7  # records with a missing key value


def test_sdcmicro_fitted_counts_with_missing_keys():
    # levels of records left out still make cells (sdcMicro's expand.grid): their fitted counts are 0
    model = _risk(_sample_data(True), "default").model
    assert model.levels == (3, 2, 4)
    grid = np.stack(np.unravel_index(np.arange(24), model.levels), axis=1)
    margins = [np.bincount(model.cell_codes[:, j], model.counts, model.levels[j]) for j in range(3)]
    expected = ([0.0] * 6 + [0.33, 0.67]) * 3
    assert independence_fit(grid, margins).round(2).tolist() == expected
    # the same limit R's glm creeps towards (its warning: fitted rates numerically 0)
    figures = _risk(_sample_data(True), "default", formula="Var1+Var2+Var3+Var1:Var2+Var2:Var3").summary()
    assert figures["fit"]["algorithm"] == "IRLS"


def _two_by_two(weight=10.0):
    # cells (x,u) 3, (x,v) 1, (y,u) 2, (y,v) 0
    frame = pl.DataFrame({"a": list("xxxxyy"), "b": list("uuuvuu"), "w": [weight] * 6})
    return dataclasses.replace(Table.from_frame(frame), weights="w")


def test_two_by_two_independence_by_hand():
    # rows x 4, y 2; columns u 5, v 1; n 6: lambda(x,v) = 4 * 1 / 6 = 2/3, the one sample unique
    result = loglinear_risk(_two_by_two(), LoglinearRiskParams(formula="a+b"), "w")
    assert result.model.fitted.tolist() == pytest.approx([4 * 5 / 6, 4 / 6, 2 * 5 / 6])
    v = (1 - 0.1) * 2 / 3
    figures = result.summary()
    assert figures["expected_population_uniques"] == pytest.approx(math.exp(-v))
    assert figures["expected_correct_matches"] == pytest.approx((1 - math.exp(-v)) / v)
    assert figures["population_unique_share"] == pytest.approx(math.exp(-v) / 3)
    assert figures["correct_match_share"] == pytest.approx((1 - math.exp(-v)) / v / 3)
    # the full table's IRLS (R's glm) and IPF reach the same expected counts
    grid = np.array([[0, 0], [0, 1], [1, 0], [1, 1]])
    y = np.array([3.0, 1.0, 2.0, 0.0])
    fit = irls_fit(y, design(grid, (2, 2), [(0,), (1,)]))
    assert fit.converged and fit.fitted == pytest.approx([20 / 6, 4 / 6, 10 / 6, 2 / 6], rel=1e-9)
    assert ipf_fit(y.reshape(2, 2), [(0,), (1,)]).fitted == pytest.approx([20 / 6, 4 / 6, 10 / 6, 2 / 6])
    # weight 1: the unique is the population (v = 0): certain, and matched correctly
    figures = loglinear_risk(_two_by_two(1.0), LoglinearRiskParams(formula="a+b"), "w").summary()
    assert (figures["expected_population_uniques"], figures["expected_correct_matches"]) == (1.0, 1.0)


def test_saturated_model_reproduces_the_counts():
    grid = np.array([[0, 0], [0, 1], [1, 0], [1, 1]])
    y = np.array([3.0, 1.0, 2.0, 5.0])
    fit = irls_fit(y, design(grid, (2, 2), [(0,), (1,), (0, 1)]))
    assert fit.fitted == pytest.approx(y, rel=1e-9)
    assert ipf_fit(y.reshape(2, 2), [(0,), (1,), (0, 1)]).fitted == pytest.approx(y)


@pytest.mark.parametrize("terms", [[(0,), (1,), (2,)], [(0,), (1,), (2,), (0, 1), (1, 2)]])
def test_ipf_and_irls_agree(terms):
    rng = np.random.default_rng(3)
    shape = (3, 4, 2)
    y = rng.poisson(6.0, size=shape).astype(np.float64) + 1
    grid = np.stack(np.unravel_index(np.arange(y.size), shape), axis=1)
    irls = irls_fit(y.ravel(), design(grid, shape, terms))
    ipf = ipf_fit(y, terms)
    assert irls.converged and ipf.converged
    assert irls.fitted == pytest.approx(ipf.fitted, rel=1e-7)
    assert irls.deviance == pytest.approx(ipf.deviance, rel=1e-6)


def test_methods_with_interactions_and_ipf_against_default():
    rng = np.random.default_rng(1)
    n = 400
    frame = pl.DataFrame(
        {
            "a": rng.integers(0, 3, n),
            "b": rng.choice(list("pqrs"), n),
            "c": rng.integers(0, 2, n),
            "w": rng.uniform(2, 40, n),
        }
    )
    table = dataclasses.replace(Table.from_frame(frame), weights="w")
    formula = "a + b + c + a:b + b:c"  # no closed form: IRLS and IPF on the full table
    default = loglinear_risk(table, LoglinearRiskParams(formula=formula), "w")
    ipf = loglinear_risk(table, LoglinearRiskParams(formula=formula, method="IPF"), "w")
    assert (default.model.algorithm, ipf.model.algorithm) == ("IRLS", "IPF")
    assert default.model.fitted == pytest.approx(ipf.model.fitted, rel=1e-7)
    # a + b + c + a:b in closed form (n_ab n_c / n), as IPF and IRLS fit it on the full table
    closed = loglinear_risk(table, LoglinearRiskParams(formula="a + b + c + a:b"), "w").model
    assert closed.algorithm == "closed form"
    ab = frame.group_by("a", "b").len().rename({"len": "n_ab"})
    c = frame.group_by("c").len().rename({"len": "n_c"})
    by_hand = frame.join(ab, on=["a", "b"]).join(c, on="c", maintain_order="left")
    expected = (by_hand.get_column("n_ab") * by_hand.get_column("n_c") / n).to_numpy()
    assert closed.fitted[closed.record_cell] == pytest.approx(expected, rel=1e-12)
    counts = np.zeros(closed.levels)
    counts[tuple(closed.cell_codes.T)] = closed.counts
    terms = [(0,), (1,), (2,), (0, 1)]
    cells = np.ravel_multi_index(tuple(closed.cell_codes.T), closed.levels)
    assert closed.fitted == pytest.approx(ipf_fit(counts, terms).fitted[cells], rel=1e-9)
    grid = np.stack(np.unravel_index(np.arange(counts.size), closed.levels), axis=1)
    irls = irls_fit(counts.ravel(), design(grid, closed.levels, terms))
    assert closed.fitted == pytest.approx(irls.fitted[cells], rel=1e-7)
    for method in METHODS:
        figures = loglinear_risk(table, LoglinearRiskParams(formula=formula, method=method), "w").summary()
        assert 0 <= figures["population_unique_share"] <= 1 and figures["fit"]["converged"], method


def test_pml_fits_the_rounded_scaled_weights():
    # W_k n / sum(w) = (25, 15, 20) * 6 / 60 = 2.5, 1.5, 2 -> 2, 2, 2 (R's round: half to even)
    frame = pl.DataFrame({"a": list("xxxxyy"), "b": list("uuuvuu"), "w": [10.0, 10.0, 5.0, 15.0, 10.0, 10.0]})
    table = dataclasses.replace(Table.from_frame(frame), weights="w")
    result = loglinear_risk(table, LoglinearRiskParams(method="PML", formula="a+b"), "w")
    # rows x 4, y 2; columns u 4, v 2 of 6: lambda = 4*4/6, 4*2/6, 2*4/6 (half up would give 3, 2, 2)
    assert result.model.fitted.tolist() == pytest.approx([16 / 6, 8 / 6, 8 / 6])


def test_records_output():
    result = loglinear_risk(_two_by_two(), LoglinearRiskParams(formula="a+b"), "w")
    records = result.records()
    assert records.columns == [
        "record",
        "cell_records",
        "fitted",
        "inclusion",
        "population_unique",
        "correct_match",
    ]
    assert records.get_column("cell_records").to_list() == [3, 3, 3, 1, 2, 2]
    unique = records.get_column("population_unique").to_list()
    assert (
        unique[:3] == [None] * 3 and unique[3] == pytest.approx(math.exp(-0.6)) and unique[4:] == [None] * 2
    )


@pytest.mark.parametrize(
    ("formula", "match"),
    [
        ("a + b:", "is not a term"),
        ("a + a:a", "names a variable twice"),
        ("a + a:b", "needs 'b' in the formula too"),
        ("a + b + c + a:b + a:c + a:b:c", "'a:b:c' needs 'b:c' in the formula too"),
        ("a * b", "is not a term"),
    ],
)
def test_bad_formulas(formula, match):
    with pytest.raises(ConfigError, match=match):
        parse_formula(formula)
    with pytest.raises(ConfigError, match="formula"):
        LoglinearRiskParams.parse({"formula": formula})


def test_formula_parses():
    assert parse_formula("~ a + b + c + a:b + b:a") == [("a",), ("b",), ("c",), ("a", "b")]


def test_bad_input_is_one_message(monkeypatch):
    table = _two_by_two()
    with pytest.raises(ConfigError, match="needs sampling weights"):
        loglinear_risk(table, LoglinearRiskParams(), None)
    with pytest.raises(ConfigError, match="'z' is not a column"):
        loglinear_risk(table, LoglinearRiskParams(formula="a + z"), "w")
    with pytest.raises(ConfigError, match="is the weights column"):
        loglinear_risk(table, LoglinearRiskParams(formula="a + w"), "w")
    low = dataclasses.replace(table, data=table.data.with_columns(pl.Series("w", [10.0] * 5 + [0.5])))
    with pytest.raises(InputError, match="record 6: a sampling weight must be a number of at least 1"):
        loglinear_risk(low, LoglinearRiskParams(formula="a+b"), "w")
    with pytest.raises(ConfigError, match="bound"):
        LoglinearRiskParams.parse({"bound": 0.5})
    with pytest.raises(ConfigError, match="method"):
        LoglinearRiskParams.parse({"method": "glm"})
    monkeypatch.setattr(loglinear_module, "MAX_CELLS", 3)
    with pytest.raises(InputError, match="has 4 cells, more than 3"):
        loglinear_risk(table, LoglinearRiskParams(method="CE", formula="a+b"), "w")
    # the main-effects model in closed form reads the observed cells only
    assert loglinear_risk(table, LoglinearRiskParams(formula="a+b"), "w").summary()["cells"] == 4


def _sdcmicro_modrisk(rows, keys, method, bound, interaction):
    """sdcMicro's modRisk written out with loops and a dense model matrix (R/modRisk.R: expand.grid
    of the observed values, counts, weight sums and inclusion sums per cell, glm by dense IRLS as
    glm.fit, the filters and the two risks); records with a missing key value left out, their values
    kept as levels. Returns (gr1, gr2)."""
    levels = [sorted({r[k] for r in rows if r[k] is not None}) for k in keys]
    grid = list(itertools.product(*levels))
    counts = {cell: 0 for cell in grid}
    sums = {cell: 0.0 for cell in grid}
    inclusion = {cell: 0.0 for cell in grid}
    for r in rows:
        if any(r[k] is None for k in keys):
            continue
        cell = tuple(r[k] for k in keys)
        counts[cell] += 1
        sums[cell] += r["w"]
        inclusion[cell] += 1 / r["w"]
    y = np.array([counts[c] for c in grid], dtype=float)
    w = np.array([sums[c] for c in grid])
    columns = [[1.0] * len(grid)]
    for j, values in enumerate(levels):
        columns += [[float(c[j] == v) for c in grid] for v in values[1:]]
    if interaction:
        columns += [
            [float(c[0] == a and c[1] == b) for c in grid] for a in levels[0][1:] for b in levels[1][1:]
        ]
    offset = np.zeros(len(grid))
    if method == "CE":
        offset = np.log(np.array([y[i] / w[i] if w[i] > 0 else 0.0 for i in range(len(grid))]) + 0.1)
    if method == "PML":
        scaled = w * y.sum() / w.sum()
        if np.any(np.abs(scaled % 1 - 0.5) < 1e-9):
            return None  # a tie: which way it rounds depends on the order the weights are summed in
        y = np.round(scaled)
    if method == "weightedLLM":
        columns.append(list(w / w.max()))
    x = np.array(columns).T
    mu = y + 0.1
    eta = np.log(mu)

    def deviance(mu):
        return 2 * sum(
            (yi * math.log(yi / mi) if yi > 0 else 0.0) - (yi - mi) for yi, mi in zip(y, mu, strict=True)
        )

    old = deviance(mu)
    for _ in range(25):  # glm.fit: weighted least squares by QR, its stopping rule
        good = mu > 0  # glm.fit's "good" observations: a fitted count that underflowed is left out
        z = eta[good] - offset[good] + (y[good] - mu[good]) / mu[good]
        root = np.sqrt(mu[good])
        beta = np.linalg.lstsq(x[good] * root[:, None], z * root, rcond=None)[0]
        eta = x @ beta + offset
        mu = np.exp(eta)
        new = deviance(mu)
        if abs(new - old) / (abs(new) + 0.1) < 1e-8:
            break
        old = new
    considered = [i for i, c in enumerate(grid) if 0 < counts[c] <= bound and mu[i] != 0]
    r1 = r2 = 0.0
    for i in considered:
        if counts[grid[i]] == 1:
            v = (1 - inclusion[grid[i]]) * mu[i]
            r1 += math.exp(-v)
            r2 += -math.expm1(-v) / v if v != 0 else 1.0  # sdcMicro: (1 - exp(-v)) / v, 0 below 1e-16
    return (r1 / len(considered), r2 / len(considered)) if considered else None


@st.composite
def _surveys(draw):
    n = draw(st.integers(4, 30))
    value = st.one_of(st.none(), st.integers(0, 2)) if draw(st.booleans()) else st.integers(0, 2)
    frame = {f"k{j}": draw(st.lists(value, min_size=n, max_size=n)) for j in range(3)}
    frame["w"] = draw(st.lists(st.floats(1.0, 50.0), min_size=n, max_size=n))
    return pl.DataFrame(frame, schema={"k0": pl.Int64, "k1": pl.Int64, "k2": pl.Int64, "w": pl.Float64})


@settings(max_examples=40, deadline=None)
@given(
    _surveys(),
    st.sampled_from(METHODS),
    st.sampled_from([None, 1.0, 2.0, 3.5]),
    st.booleans(),
)
def test_against_a_transcription_of_sdcmicros_code(frame, method, bound, interaction):
    rows = frame.to_dicts()
    keys = ["k0", "k1", "k2"]
    complete = [r for r in rows if all(r[k] is not None for k in keys)]
    if not complete or (method == "weightedLLM" and len({tuple(r[k] for k in keys) for r in complete}) < 2):
        return  # nothing to model (weightedLLM: the covariate would be the intercept)
    formula = "k0 + k1 + k2" + (" + k0:k1" if interaction else "")
    table = dataclasses.replace(Table.from_frame(frame), weights="w")
    figures = loglinear_risk(
        table, LoglinearRiskParams(method=method, formula=formula, bound=bound), "w"
    ).summary()
    expected = _sdcmicro_modrisk(rows, keys, method, math.inf if bound is None else bound, interaction)
    if expected is None or not figures["cells_within_bound"]:
        return
    got = (figures["population_unique_share"], figures["correct_match_share"])
    assert got == pytest.approx(expected, rel=1e-5, abs=1e-7)


def _files(tmp_path):
    _two_by_two().data.write_csv(tmp_path / "d.csv")
    (tmp_path / "c.yaml").write_text(
        "data:\n  weights: w\nattributes:\n  a: {role: quasi-identifier, kind: categorical}\n"
        "  b: {role: quasi-identifier, kind: categorical}\n  w: {kind: numeric}\n"
    )


def test_command_writes_summary_and_records(tmp_path):
    _files(tmp_path)
    result = runner.invoke(
        app,
        ["risk", "loglinear", str(tmp_path / "d.csv"), "-c", str(tmp_path / "c.yaml"), "--method", "IPF",
         "--bound", "2", "-o", str(tmp_path / "r.csv"), "--summary", str(tmp_path / "s.json")],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    figures = json.loads((tmp_path / "s.json").read_text())
    v = 0.9 * 2 / 3
    assert figures["population_unique_share"] == pytest.approx(math.exp(-v) / 2)  # cells of 1 and 2
    assert figures["method"] == "IPF" and figures["bound"] == 2
    assert pl.read_csv(tmp_path / "r.csv").height == 6


def test_command_bad_input_exits_2_without_a_file(tmp_path):
    _files(tmp_path)
    for extra in (["--formula", "a + q"], ["--formula", "a:"], ["--bound", "0"], ["--weight", "a"]):
        result = runner.invoke(
            app,
            ["risk", "loglinear", str(tmp_path / "d.csv"), "-c", str(tmp_path / "c.yaml"),
             "--summary", str(tmp_path / "s.json"), *extra],
        )  # fmt: skip
        assert result.exit_code == 2, (extra, result.output)
        assert "Traceback" not in result.output and not (tmp_path / "s.json").exists()
