"""sdckit risk interval: sdcMicro's dRisk and dRiskRMD (issue 37, item 1). dRisk by hand; dRiskRMD
against a plain transcription of sdcMicro's R/dRiskRMD.R (full distance matrix, loops), with the
scatter it is given, so that only the MCD (scikit-learn's, documented as a deviation) is not checked
against sdcMicro."""

from __future__ import annotations

import json
import math
import statistics

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

import sdckit.risk.interval as interval_module
from sdckit.cli import app
from sdckit.risk.interval import interval_inside, rmd_risk

runner = CliRunner()


def test_drisk_by_hand():
    x = np.array([[1.0, 10.0], [2.0, 20.0], [3.0, 30.0], [4.0, 40.0]])
    xm = np.array([[1.05, 10.0], [2.5, 20.0], [3.0, 31.0], [4.0, 40.0]])
    half = [0.05 * statistics.stdev(xm[:, j]) for j in range(2)]  # 0.0645..., 0.6455...
    expected = [all(abs(x[i, j] - xm[i, j]) <= half[j] for j in range(2)) for i in range(4)]
    assert expected == [True, False, False, True]
    assert interval_inside(x, xm, 0.05).all(axis=1).tolist() == expected
    # a missing value on either side never counts as outside
    xm[1, 0] = math.nan
    assert interval_inside(x, xm, 0.05).all(axis=1).tolist() == [True, True, False, True]


def _sdcmicro_rmd(x, xm, k, k2, scatter_of):
    """R/dRiskRMD.R written out: scale, mahalanobis with colMeans, 0.05*sqrt, intervals, dist matrix."""
    n, p = x.shape

    def scale(a):
        return (a - a.mean(axis=0)) / a.std(axis=0, ddof=1)

    x, xm = scale(x), scale(xm)
    cov = scatter_of(x)
    inverse = np.linalg.inv(cov)
    centre = x.mean(axis=0)
    rmd = np.array([math.sqrt((x[i] - centre) @ inverse @ (x[i] - centre)) * 0.05 for i in range(n)])
    w = [i for i in range(n) if any(x[i, j] - k * rmd[i] < xm[i, j] < x[i, j] + k * rmd[i] for j in range(p))]
    w2 = []
    for i in w:
        others = [math.dist(xm[i], xm[j]) for j in range(n) if j != i]
        if min(others) > k2:
            w2.append(i)
    return {
        "risk1": len(w) / n,
        "risk2": len(w2) / n,
        "wrisk1": len(w) * sum(rmd[w]) / n,
        "wrisk2": len(w2) * sum(rmd[w2]) / n,
        "riskvec1": [rmd[i] if i in w else 0.0 for i in range(n)],
        "riskvec2": [rmd[i] if i in w2 else 0.0 for i in range(n)],
    }


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_drisk_rmd_equals_sdcmicros_algorithm_given_the_scatter(seed, monkeypatch):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(60, 3)) @ np.array([[1.0, 0.3, 0.0], [0.0, 1.0, 0.5], [0.0, 0.0, 1.0]])
    xm = x + rng.normal(scale=0.05, size=x.shape)

    def classical(a):
        return np.cov(a, rowvar=False, ddof=1)

    def distances(a, seed):  # the module's robust distances with the classical scatter
        centred = a - a.mean(axis=0)
        return np.sqrt((centred @ np.linalg.inv(classical(a)) * centred).sum(axis=1))

    monkeypatch.setattr(interval_module, "robust_distances", distances)
    got = rmd_risk(x, xm, 0.5, 0.1, seed=0)
    expected = _sdcmicro_rmd(x, xm, 0.5, 0.1, classical)
    for key in ("risk1", "risk2", "wrisk1", "wrisk2"):
        assert got[key] == pytest.approx(expected[key], rel=1e-12), key
    assert got["riskvec1"].tolist() == pytest.approx(expected["riskvec1"], rel=1e-12)
    assert got["riskvec2"].tolist() == pytest.approx(expected["riskvec2"], rel=1e-12)
    assert 0 < got["risk2"] <= got["risk1"]


def test_robust_distances_see_through_outliers():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(200, 2))
    x[:10] += 12.0  # a cluster of outliers that inflates the classical scatter
    robust = interval_module.robust_distances(x, seed=0)
    centred = x - x.mean(axis=0)
    classical = np.sqrt((centred @ np.linalg.inv(np.cov(x, rowvar=False)) * centred).sum(axis=1))
    assert robust[:10].min() > 2 * classical[:10].max()


def _files(tmp_path, release_values):
    original = pl.DataFrame(
        {"a": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "b": [3.0, 1.0, 4.0, 1.0, 5.0, 9.0], "t": list("xyxyxy")}
    )
    original.write_csv(tmp_path / "o.csv")
    release = original.with_columns(pl.Series("a", release_values))
    release.write_csv(tmp_path / "r.csv")
    (tmp_path / "c.yaml").write_text(
        "attributes:\n  a: {kind: numeric}\n  b: {kind: numeric}\n  t: {kind: categorical}\n"
    )


def test_command_writes_summary_and_records(tmp_path):
    _files(tmp_path, [1.0, 2.0, 3.0, 4.0, 5.0, 16.0])
    result = runner.invoke(
        app,
        ["risk", "interval", str(tmp_path / "o.csv"), str(tmp_path / "r.csv"), "-c", str(tmp_path / "c.yaml"),
         "--rmd", "-o", str(tmp_path / "s.csv"), "--summary", str(tmp_path / "s.json")],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    figures = json.loads((tmp_path / "s.json").read_text())
    # a's released sd is 5.29...: 0.05 * sd = 0.26, so records 1-5 are inside on a, record 6 is 10 away
    assert figures["interval_share"] == pytest.approx(5 / 6)
    assert figures["inside_share_by_attribute"] == {"a": pytest.approx(5 / 6), "b": 1.0}
    assert set(figures["rmd"]) >= {"risk1", "risk2", "wrisk1", "wrisk2", "k", "k2", "seed", "left_out"}
    records = pl.read_csv(tmp_path / "s.csv")
    assert records.columns == ["record", "inside", "riskvec1", "riskvec2"]
    assert records.get_column("inside").to_list() == [True] * 5 + [False]


def test_a_text_attribute_or_a_short_release_is_one_message(tmp_path):
    _files(tmp_path, [1.0] * 6)
    result = runner.invoke(
        app,
        ["risk", "interval", str(tmp_path / "o.csv"), str(tmp_path / "r.csv"), "-c", str(tmp_path / "c.yaml"),
         "--attributes", "a,t"],
    )  # fmt: skip
    assert result.exit_code == 2 and "not numeric" in result.output
    pl.read_csv(tmp_path / "r.csv").head(4).write_csv(tmp_path / "r.csv")
    result = runner.invoke(
        app,
        [
            "risk",
            "interval",
            str(tmp_path / "o.csv"),
            str(tmp_path / "r.csv"),
            "-c",
            str(tmp_path / "c.yaml"),
        ],
    )
    assert result.exit_code == 2 and "Traceback" not in result.output
