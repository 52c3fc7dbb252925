"""Microaggregation options of sdcMicro (issue 37 item 4): ``strata`` of mdav, vmdav and univariate
microaggregation (hand-computed strata; groups never straddle; each stratum as its own run), mdav's
``measure`` (hand-computed median, trimmed mean and onestep), and ``rmd`` (sdcMicro's ``micro_rmd``)
against an independent numpy oracle written from sdcMicro's definition."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from conftest import make_table
from sdckit.anonymize import run_method
from sdckit.anonymize.microaggregation import (
    MicroaggregationFigures,
    mdav,
    mdav_groups,
    univariate_groups,
    univariate_microaggregation,
    vmdav_groups,
    vmdav_microaggregation,
)
from sdckit.anonymize.rmd_microaggregation import (
    rmd_groups,
    rmd_kernel,
    rmd_microaggregation,
    robust_distances,
)
from sdckit.cli import app
from sdckit.errors import ConfigError, InputError
from sdckit.table import Kind, Role, Table

runner = CliRunner()


def table_of(columns: dict[str, object], numeric: list[str]) -> Table:
    frame = pl.DataFrame(columns)
    return make_table(frame, roles=dict.fromkeys(numeric, (Role.QUASI_IDENTIFIER, Kind.NUMERIC)))


def partition(labels: np.ndarray) -> set[frozenset[int]]:
    return {frozenset(np.flatnonzero(labels == g).tolist()) for g in np.unique(labels)}


# Strata ------------------------------------------------------------------------------------------

# Two strata interleaved in row order. Inside stratum "a" (values 1, 2, 3, 10, 11, 12) MDAV with k = 3:
# centroid 6.5, farthest 1 and 12 tie (5.5) -> the first, 1; its group 1, 2, 3; the rest 10, 11, 12.
# Stratum "b" (1.5, 2.5, 3.5, 10.5, 11.5, 12.5) likewise. Means 2, 11, 2.5, 11.5. Without strata MDAV
# groups the twelve values jointly: centroid 6.75, farthest 1 and 12.5 tie (5.75) -> 1, its group 1,
# 1.5, 2 straddles the strata (mean 1.5).
STRATA_VALUES = [1, 1.5, 2, 2.5, 3, 3.5, 10, 10.5, 11, 11.5, 12, 12.5]
STRATA_KEYS = ["a", "b"] * 6
STRATA_MEANS = [2, 2.5, 2, 2.5, 2, 2.5, 11, 11.5, 11, 11.5, 11, 11.5]


def strata_table() -> Table:
    return table_of({"x": [float(v) for v in STRATA_VALUES], "s": STRATA_KEYS}, ["x"])


@pytest.mark.parametrize("method", ["mdav", "vmdav", "univariate-microaggregation"])
def test_strata_hand_computed_two_strata(method):
    release = run_method(method, strata_table(), {"k": 3, "strata": ["s"]})
    assert release.table.data.get_column("x").to_list() == pytest.approx(STRATA_MEANS, abs=1e-12)
    assert release.table.data.get_column("s").to_list() == STRATA_KEYS
    figures = release.figures_as(MicroaggregationFigures)
    assert figures.strata == 2
    assert (figures.groups, figures.smallest_group, figures.largest_group) == (4, 3, 3)


def test_strata_change_the_groups_of_a_joint_run():
    joint = mdav(strata_table(), k=3)
    assert joint.table.data.get_column("x").to_list()[:3] == pytest.approx([1.5, 1.5, 1.5])


def random_strata(n: int = 90, seed: int = 3) -> tuple[np.ndarray, np.ndarray, Table]:
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.normal(0, 1, n), rng.lognormal(3, 1, n), rng.integers(0, 5, n).astype(float)])
    keys = rng.choice(["north", "south", None], n, p=[0.5, 0.3, 0.2])
    frame = {"x0": X[:, 0], "x1": X[:, 1], "x2": X[:, 2], "region": keys, "sex": rng.choice(["F", "M"], n)}
    table = table_of(frame, ["x0", "x1", "x2"])
    stratum = np.array([f"{r}-{s}" for r, s in zip(keys, frame["sex"], strict=True)])
    return X, stratum, table


@pytest.mark.parametrize(
    ("method", "options", "groups"),
    [
        ("mdav", {}, lambda X, k: mdav_groups(X, k)[0]),
        ("mdav", {"partition_size": 16}, lambda X, k: mdav_groups(X, k, partition_size=16)[0]),
        ("vmdav", {"gamma": 1.1}, lambda X, k: vmdav_groups(X, k, 1.1)),
        ("rmd", {"seed": 4}, lambda X, k: rmd_groups(X, k, 4)),
    ],
)
def test_strata_equal_separate_runs_on_each_stratum(method, options, groups):
    """The oracle: the method run on each stratum's records alone (its own standardization), groups
    never straddle, a missing stratum value is a stratum of its own."""
    X, stratum, table = random_strata()
    release = run_method(method, table, {"k": 3, "strata": ["region", "sex"], **options})
    labels = release.classes
    released = release.table.data.select("x0", "x1", "x2").to_numpy()
    assert len(set(stratum)) == 6 and release.figures_as(MicroaggregationFigures).strata == 6
    for value in set(stratum):
        rows = np.flatnonzero(stratum == value)
        local = groups(X[rows], 3)
        assert partition(labels[rows]) == partition(local)
        assert not set(labels[rows]) & set(labels[stratum != value])  # no group straddles
        for g in np.unique(local):
            members = rows[local == g]
            assert np.allclose(released[members], X[members].mean(axis=0), rtol=1e-12, atol=1e-12)


def test_univariate_strata_equal_separate_runs():
    X, stratum, table = random_strata()
    release = univariate_microaggregation(table, k=3, variant="optimal", strata=["region", "sex"])
    for j, name in enumerate(["x0", "x1", "x2"]):
        released = release.table.data.get_column(name).to_numpy()
        for value in set(stratum):
            rows = np.flatnonzero(stratum == value)
            local = univariate_groups(X[rows, j], 3, "optimal")
            expected = np.bincount(local, weights=X[rows, j]) / np.bincount(local)
            assert np.allclose(released[rows], expected[local], rtol=1e-12)


def test_a_stratum_smaller_than_k_is_refused_naming_it():
    table = table_of({"x": [1.0, 2.0, 3.0, 4.0, 5.0], "s": ["a", "a", "a", "b", "b"]}, ["x"])
    with pytest.raises(ConfigError, match=r"stratum s='b' has 2 records, fewer than k = 3"):
        mdav(table, k=3, strata=["s"])
    with pytest.raises(ConfigError, match="stratum s='b'"):
        vmdav_microaggregation(table, k=3, strata=["s"])


def test_strata_problems_are_refused():
    table = strata_table()
    with pytest.raises(ConfigError, match="'nope' is not a column"):
        mdav(table, k=3, strata=["nope"])
    with pytest.raises(ConfigError, match="'x' is microaggregated"):
        mdav(table, k=3, strata=["x"])
    with pytest.raises(ConfigError, match="strata"):
        run_method("mdav", table, {"k": 3, "strata": []})


def test_no_strata_and_default_measure_leave_the_recipe_as_before():
    release = mdav(strata_table(), k=3)
    recipe = release.params.to_recipe()
    assert "strata" not in recipe and "measure" not in recipe and "trim" not in recipe
    assert run_method("mdav", strata_table(), {"k": 3, "strata": ["s"]}).params.to_recipe()["strata"] == ["s"]


# Measure -----------------------------------------------------------------------------------------

# k = 5 on ten values: centroid 66.6, farthest 200 (133.4 against 65.6 for 1); its group 200 and its
# four nearest 107, 103, 101, 100; the rest 1, 2, 4, 8, 40.
MEASURE_VALUES = [1.0, 100.0, 2.0, 101.0, 4.0, 103.0, 8.0, 107.0, 40.0, 200.0]
LOW = [0, 2, 4, 6, 8]
HIGH = [1, 3, 5, 7, 9]
# onestep: values clipped to median +- (3 / 1.486) * 1.4826 * median|x - median|
SPREAD = 3 / 1.486 * 1.4826 * 3  # both groups: median |deviation| = 3 (deviations 3, 2, 0, 4, 36 / 97)
EXPECTED = {
    "mean": (55 / 5, 611 / 5),
    "median": (4.0, 103.0),
    "trim": ((2 + 4 + 8) / 3, (101 + 103 + 107) / 3),  # trim 0.2: floor(5 * 0.2) = 1 value off each end
    "onestep": ((1 + 2 + 4 + 8 + 4 + SPREAD) / 5, (100 + 101 + 103 + 107 + 103 + SPREAD) / 5),
}


@pytest.mark.parametrize("measure", ["mean", "median", "trim", "onestep"])
def test_measure_on_a_hand_example(measure):
    table = table_of({"x": MEASURE_VALUES}, ["x"])
    release = mdav(table, k=5, measure=measure, trim=0.2 if measure == "trim" else None)
    x = release.table.data.get_column("x").to_numpy()
    low, high = EXPECTED[measure]
    assert x[LOW] == pytest.approx([low] * 5, rel=1e-12)
    assert x[HIGH] == pytest.approx([high] * 5, rel=1e-12)
    # information loss: squared distances to what is released over the total (one attribute: the
    # variance cancels)
    values = np.array(MEASURE_VALUES)
    expected_loss = 100 * np.sum((values - x) ** 2) / np.sum((values - values.mean()) ** 2)
    assert release.figures_as(MicroaggregationFigures).information_loss == pytest.approx(
        expected_loss, abs=1e-6
    )


def test_mean_measure_is_the_default_release():
    table = table_of({"x": MEASURE_VALUES}, ["x"])
    default = mdav(table, k=5)
    explicit = mdav(table, k=5, measure="mean")
    assert default.table.data.equals(explicit.table.data)
    assert default.figures == explicit.figures


def test_trim_goes_with_measure_trim_only():
    table = table_of({"x": MEASURE_VALUES}, ["x"])
    with pytest.raises(ConfigError, match="trim"):
        mdav(table, k=5, measure="trim")
    with pytest.raises(ConfigError, match="trim"):
        mdav(table, k=5, measure="median", trim=0.1)
    with pytest.raises(ConfigError, match="trim"):
        mdav(table, k=5, measure="trim", trim=0.7)


# RMD ---------------------------------------------------------------------------------------------


def oracle_rmd(X: np.ndarray, k: int, md: np.ndarray) -> np.ndarray:
    """sdcMicro's micro_rmd loop, transcribed with numpy: the full distance matrix of the standardized
    data, the seed the remaining record of largest robust distance (which.max: the first), its k
    nearest remaining records (which.min k times: the first of equal distances), the rest one group."""
    n = len(X)
    Y = (X - X.mean(axis=0)) / X.std(axis=0, ddof=1)
    D = np.sqrt(((Y[:, None, :] - Y[None, :, :]) ** 2).sum(axis=2))
    md = md.astype(float).copy()
    labels = np.full(n, -1)
    for group in range(n // k - 1):
        s = int(np.nanargmax(md))  # first maximum
        column = D[:, s].copy()
        column[labels >= 0] = np.nan
        members = []
        for _ in range(k):
            w = int(np.nanargmin(column))  # first minimum
            members.append(w)
            column[w] = np.nan
        labels[members] = group
        md[members] = np.nan
    labels[labels < 0] = n // k - 1
    return labels


def outlier_data(n: int = 40, seed: int = 11) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.normal(0, 1, (n, 3)) @ np.array([[1.0, 0.5, 0.2], [0.0, 1.0, 0.3], [0.0, 0.0, 1.0]])
    X[5] = [8.0, -6.0, 4.0]  # a clear outlier: the largest robust distance
    X[17] = [-5.0, 7.0, 0.0]
    return X * [1.0, 10.0, 1000.0]


@pytest.mark.parametrize("k", [2, 3, 5])
def test_rmd_groups_equal_the_numpy_oracle(k):
    X = outlier_data()
    md = robust_distances(X, seed=1)
    assert np.argmax(md) in (5, 17)
    assert partition(rmd_groups(X, k, seed=1)) == partition(oracle_rmd(X, k, md))


def test_rmd_ties_follow_which_max_and_which_min():
    """Integer data with repeated records and equal robust distances: the kernel given the seed order
    of the first maximum, and the nearest by (distance, row), equals the oracle."""
    rng = np.random.default_rng(5)
    X = rng.integers(0, 4, (36, 2)).astype(float)
    md = np.floor(((X - X.mean(axis=0)) ** 2).sum(axis=1))  # many equal "distances"
    seeds = np.argsort(-md, kind="stable").astype(np.int64)
    w = 1.0 / X.var(axis=0, ddof=1)
    for k in (2, 3, 4):
        labels = rmd_kernel(np.ascontiguousarray(X), w, seeds, k)
        assert partition(labels) == partition(oracle_rmd(X, k, md))


def test_rmd_release_is_the_group_means_and_seeds_the_outlier_first():
    X = outlier_data()
    names = ["a", "b", "c"]
    table = table_of({name: X[:, j] for j, name in enumerate(names)}, names)
    release = rmd_microaggregation(table, k=3, seed=1)
    labels = release.classes
    released = release.table.data.select(names).to_numpy()
    for g in np.unique(labels):
        members = labels == g
        assert np.allclose(released[members], X[members].mean(axis=0), rtol=1e-12)
    first = np.flatnonzero(labels == labels[int(np.argmax(robust_distances(X, 1)))])
    assert len(first) == 3
    figures = release.figures_as(MicroaggregationFigures)
    assert (figures.groups, figures.smallest_group, figures.largest_group) == (13, 3, 4)
    assert release.params.to_recipe()["seed"] == 1


def test_rmd_small_files_and_refusals():
    assert rmd_groups(np.arange(5.0)[:, None], 3).tolist() == [0] * 5  # fewer than 2k: one group
    with pytest.raises(ConfigError):
        rmd_groups(np.arange(2.0)[:, None], 3)
    flat = np.column_stack([np.r_[np.zeros(30), np.arange(10.0)], np.arange(40.0)])
    with pytest.raises(InputError, match="singular"):
        rmd_groups(flat, 3)
    with pytest.raises(InputError, match="more records than attributes"):
        rmd_groups(np.random.default_rng(0).normal(size=(7, 13)), 3)
    constant = np.column_stack([np.ones(20), np.arange(20.0) ** 1.5])  # a constant column: left out
    assert len(np.unique(rmd_groups(constant, 4))) == 5


def test_rmd_command_line(tmp_path):
    X = outlier_data()
    path = tmp_path / "data.csv"
    pl.DataFrame({"a": X[:, 0], "b": X[:, 1], "s": ["p", "q"] * 20}).write_csv(path)
    out = tmp_path / "out.csv"
    result = runner.invoke(
        app, ["anonymize", "rmd", str(path), "--qi", "a,b", "-k", "3", "--strata", "s", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    written = pl.read_csv(out)
    assert written.height == 40 and written.get_column("s").to_list() == ["p", "q"] * 20
    bad = runner.invoke(
        app,
        [
            "anonymize",
            "rmd",
            str(path),
            "--qi",
            "a,b",
            "-k",
            "3",
            "--measure",
            "median",
            "-o",
            str(out) + "x",
        ],
    )
    assert bad.exit_code == 2 and not (tmp_path / "out.csvx").exists()
