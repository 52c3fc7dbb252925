"""sdcMicro's information-loss figures that `sdckit utility numeric` adds (issue 37, item 6): IL1 as
sdcMicro 5.8.1 computes it (relative errors in percent, not the old scaled IL1), IL_correl, and the
summary at full precision. Expected values by hand from sdcMicro's R/dUtility.R formulas."""

from __future__ import annotations

import json
import math

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from sdckit.cli import app
from sdckit.utility.information_loss import il1_relative, il_correl, numeric_information_loss

runner = CliRunner()


def test_il1_of_sdcmicro_5_8_1_is_the_sum_of_relative_errors_in_percent():
    x = np.array([[1.0, 10.0], [2.0, 0.0], [4.0, 5.0]])
    y = np.array([[2.0, 10.0], [2.0, 3.0], [3.0, 5.0]])
    # 100*|1-2|/1 + 100*|4-3|/4; the cell whose original is 0 is left out (sdcMicro: Inf -> NA)
    assert il1_relative(x, y) == 125.0
    assert il1_relative(x, x) == 0.0


def test_il_correl_by_hand():
    identity = np.eye(3)
    assert il_correl(identity, identity) == 0.0
    release = np.array([[1.0, 0.5, 0.0], [0.5, 1.0, 0.0], [0.0, 0.0, 1.0]])
    # inverse diagonals: 1, 1, 1 and 4/3, 4/3, 1 -> normalized 1/sqrt(3) each and (4, 4, 3)/sqrt(41)
    a, b, c = 1 / math.sqrt(3), 4 / math.sqrt(41), 3 / math.sqrt(41)
    expected = math.sqrt(2 * (a - b) ** 2 + (a - c) ** 2) / math.sqrt(2)
    assert il_correl(identity, release) == pytest.approx(expected, rel=1e-12)
    # a singular correlation matrix: sdcMicro stops; the figure is null
    assert il_correl(identity, np.ones((3, 3))) is None


def test_the_summary_keeps_every_digit(tmp_path):
    rng = np.random.default_rng(3)
    x = rng.normal(100, 15, (300, 3))
    y = x + rng.normal(0, 0.05, x.shape)  # a tiny change: figures far below 1e-6 where rounding erased them
    names = ["a", "b", "c"]
    pl.DataFrame(x, schema=names).write_csv(tmp_path / "o.csv", float_precision=12)
    pl.DataFrame(y, schema=names).write_csv(tmp_path / "r.csv", float_precision=12)
    (tmp_path / "c.yaml").write_text("attributes:\n" + "".join(f"  {n}: {{kind: numeric}}\n" for n in names))
    summary = tmp_path / "s.json"
    result = runner.invoke(
        app,
        ["utility", "numeric", str(tmp_path / "o.csv"), str(tmp_path / "r.csv"),
         "-c", str(tmp_path / "c.yaml"), "--summary", str(summary)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    figures = json.loads(summary.read_text())
    direct = numeric_information_loss(
        pl.read_csv(tmp_path / "o.csv").to_numpy().astype(float),
        pl.read_csv(tmp_path / "r.csv").to_numpy().astype(float),
    )
    # equal to the last digits of the computation (the read CSV differs by a rounding or two), where
    # 6 decimals kept 0.000674 of the eigen loss (relative error 1.4e-5) and 0 of R's MSE
    assert 0 < direct.eigen < 1e-3 and figures["eigen"] == pytest.approx(direct.eigen, rel=1e-9)
    assert 0 < direct.figures["R"]["mse"] < 1e-7
    assert figures["measures"]["R"]["mse"] == pytest.approx(direct.figures["R"]["mse"], rel=1e-9)
    assert figures["il1_relative"] == pytest.approx(direct.il1_relative, rel=1e-9)
    assert figures["il_correl"] == pytest.approx(direct.il_correl, rel=1e-9)


@pytest.mark.slow  # five MCD fits on 3,000 records: about 6 s of CPU (test_robust_options covers the wiring)
def test_robeigen_follows_eigen_on_gaussian_data_and_grows_with_the_noise():
    # Without outliers the MCD scatter of standardized Gaussian data estimates its correlation
    # matrix, so robeigen is close to eigen; both grow with the noise added.
    from sdckit.utility.information_loss import eigen_loss, robust_eigen_loss, structure

    rng = np.random.default_rng(11)
    x = rng.normal(size=(3000, 3)) @ np.array([[1.0, 0.5, 0.2], [0.0, 1.0, 0.4], [0.0, 0.0, 1.0]])
    assert robust_eigen_loss(x, x, seed=0) == 0.0
    losses = []
    for scale in (0.3, 0.6):
        y = x + rng.normal(scale=scale, size=x.shape)
        classical = eigen_loss(structure(x, 1).eigenvalues, structure(y, 1).eigenvalues)
        robust = robust_eigen_loss(x, y, seed=0)
        assert abs(robust - classical) < 0.1
        losses.append(robust)
    assert losses[0] < losses[1]


def test_robust_options(tmp_path):
    names = ["a", "b"]
    rng = np.random.default_rng(2)
    x = rng.normal(size=(100, 2))
    pl.DataFrame(x, schema=names).write_csv(tmp_path / "o.csv")
    pl.DataFrame(x + 0.1, schema=names).write_csv(tmp_path / "r.csv")
    (tmp_path / "c.yaml").write_text("attributes:\n  a: {kind: numeric}\n  b: {kind: numeric}\n")
    base = [
        "utility",
        "numeric",
        str(tmp_path / "o.csv"),
        str(tmp_path / "r.csv"),
        "-c",
        str(tmp_path / "c.yaml"),
    ]
    refused = runner.invoke(app, [*base, "--seed", "3"])
    assert refused.exit_code == 2 and "--seed only with --robust" in refused.output
    done = runner.invoke(app, [*base, "--robust", "--seed", "3", "--summary", str(tmp_path / "s.json")])
    assert done.exit_code == 0, done.output
    figures = json.loads((tmp_path / "s.json").read_text())
    assert figures["robeigen"] is not None and figures["robeigen"] >= 0
    plain = runner.invoke(app, [*base, "--summary", str(tmp_path / "p.json")])
    assert plain.exit_code == 0 and "robeigen" not in json.loads((tmp_path / "p.json").read_text())


def test_summary_micro_by_plain_formulas():
    """sdcMicro's summary.micro figures recomputed with the statistics module and loops."""
    import statistics

    from sdckit.utility._sdcmicro_summary import summary_micro

    rng = np.random.default_rng(4)
    x = rng.normal([50, 10, 5], [10, 3, 1], size=(80, 3))
    y = x + rng.normal(0, [2, 1, 0.5], size=x.shape)
    got = summary_micro(x, y)
    cols = range(3)

    def mad(values):
        centre = statistics.median(values)
        return 1.4826 * statistics.median([abs(v - centre) for v in values])

    def rel(a, b):
        return sum(abs(a[j] - b[j]) / abs(a[j]) for j in cols)

    means = [[statistics.fmean(m[:, j]) for j in cols] for m in (x, y)]
    medians = [[statistics.median(m[:, j]) for j in cols] for m in (x, y)]
    mads = [[mad(list(m[:, j])) for j in cols] for m in (x, y)]
    assert got["amean"] == pytest.approx(rel(*means), rel=1e-9)
    assert got["amedian"] == pytest.approx(rel(*medians), rel=1e-9)
    assert got["amad"] == pytest.approx(rel(*mads), rel=1e-9)
    cov = [[[statistics.covariance(m[:, i], m[:, j]) for j in cols] for i in cols] for m in (x, y)]
    cor = [[[statistics.correlation(m[:, i], m[:, j]) for j in cols] for i in cols] for m in (x, y)]
    cov_sum = sum(abs(cov[0][i][j] - cov[1][i][j]) / abs(cov[0][i][j]) for i in cols for j in cols)
    cor_sum = sum(abs(cor[0][i][j] - cor[1][i][j]) / abs(cor[0][i][j]) for i in cols for j in cols)
    assert got["devvar"] == pytest.approx(cov_sum / 3, rel=1e-9)
    assert got["acov"] == pytest.approx(cov_sum / 6, rel=1e-9)
    assert got["acor"] == pytest.approx(cor_sum / 6, rel=1e-9)
    totals = [[sum(m[:, j]) for j in cols] for m in (x, y)]
    assert got["atotals"] == pytest.approx(
        sum(abs((totals[0][j] - totals[1][j]) / totals[0][j]) for j in cols)
    )
    assert got["pmtotals"] == pytest.approx(sum((totals[1][j] - totals[0][j]) / totals[0][j] for j in cols))

    # one-step means: values beyond median +- (3/1.486) MAD pulled to the bound
    def onestep(m, j):
        centre, spread = statistics.median(m[:, j]), mad(list(m[:, j]))
        low, high = centre - 3 / 1.486 * spread, centre + 3 / 1.486 * spread
        return statistics.fmean(min(max(v, low), high) for v in m[:, j])

    assert got["aonestep"] == pytest.approx(rel([onestep(x, j) for j in cols], [onestep(y, j) for j in cols]))

    # the regression of the first attribute on the others, by the normal equations
    def slopes(m):
        design = np.column_stack([np.ones(len(m)), m[:, 1:]])
        return np.linalg.solve(design.T @ design, design.T @ m[:, 0])[1:]

    assert got["adlm"] == pytest.approx(float(np.abs(slopes(x) - slopes(y)).sum()), rel=1e-9)
    assert set(got) >= {"util1", "deigenvalues", "risk0", "risk1", "risk2", "wrisk1", "wrisk2"}
    assert summary_micro(x, x)["amean"] == 0.0 and summary_micro(x, x)["acor"] == 0.0
