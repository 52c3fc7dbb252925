"""sorted-microaggregation: sdcMicro's simple, single, pca, mcdpca, pppca, clustpca, clustmcdpca,
clustpppca and influence. sdcMicro's testthat holds no values for them (and R is not available), so:
groups derived by hand on 7 records, k = 3 (sdcMicro's indexMicro: 3, then the remaining 4), and
independent numpy oracles (sort, consecutive groups, means) on CASC and Tarragona."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from conftest import make_table
from sdckit.anonymize._microaggregation_orders import consecutive_groups, pp_direction, record_order
from sdckit.anonymize.sorted_microaggregation import sorted_groups, sorted_microaggregation
from sdckit.cli import app
from sdckit.errors import ConfigError, InputError
from sdckit.table import Kind, Role, Table


def numeric_table(X: np.ndarray, names: list[str], weights: np.ndarray | None = None) -> Table:
    frame = pl.DataFrame({name: X[:, j] for j, name in enumerate(names)})
    if weights is not None:
        frame = frame.with_columns(pl.Series("w", weights))
    roles = dict.fromkeys(names, (Role.QUASI_IDENTIFIER, Kind.NUMERIC))
    return make_table(frame, roles=roles, weights="w" if weights is not None else None)


def released(release, names: list[str]) -> np.ndarray:
    return np.column_stack([release.table.column(name).to_numpy() for name in names])


# sdcMicro's indexMicro ----------------------------------------------------------------------------


def test_consecutive_groups_follow_index_micro():
    # n divisible by k: n/k groups of k
    assert consecutive_groups(6, 3).tolist() == [0, 0, 0, 1, 1, 1]
    # else ceil(n/k) - 2 groups of k, then the rest (k + n mod k)
    assert consecutive_groups(7, 3).tolist() == [0, 0, 0, 1, 1, 1, 1]
    assert consecutive_groups(11, 3).tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2, 2, 2]
    assert consecutive_groups(14, 4).tolist() == [0] * 4 + [1] * 4 + [2] * 6
    # k <= n < 2k: one group (sdcMicro stops)
    assert consecutive_groups(5, 3).tolist() == [0] * 5


# Hand-derived examples: 7 records, k = 3 ---------------------------------------------------------

# income as given: 30, 10, 70, 20, 60, 50, 40; expend = 100 - income, plus 1 for the third record
X7 = np.array([[30.0, 70], [10, 90], [70, 31], [20, 80], [60, 40], [50, 50], [40, 60]])
NAMES = ["income", "expend"]


def test_simple_groups_the_records_as_given():
    release = sorted_microaggregation(numeric_table(X7, NAMES), 3, NAMES, order="simple")
    first = X7[:3].mean(axis=0)  # (110/3, 191/3)
    rest = X7[3:].mean(axis=0)  # (42.5, 57.5)
    np.testing.assert_allclose(released(release, NAMES), [first] * 3 + [rest] * 4)
    assert rest.tolist() == [42.5, 57.5]


def test_single_sorts_by_sort_by():
    # by income: 10 (rec 2), 20 (4), 30 (1) | 40 (7), 50 (6), 60 (5), 70 (3)
    release = sorted_microaggregation(numeric_table(X7, NAMES), 3, NAMES, order="single")
    expected = {0: (20, 80), 1: (20, 80), 3: (20, 80)}
    expected.update(dict.fromkeys((2, 4, 5, 6), (55, 45.25)))
    np.testing.assert_allclose(released(release, NAMES), [expected[i] for i in range(7)])
    # by expend: 31 (3), 40 (5), 50 (6) | 60, 70, 80, 90 -> the same groups, reversed
    by_expend = sorted_microaggregation(numeric_table(X7, NAMES), 3, NAMES, order="single", sort_by="expend")
    labels = by_expend.classes
    assert labels[2] == labels[4] == labels[5] and len(set(labels[[0, 1, 3, 6]])) == 1
    assert labels[2] != labels[0]


def test_pca_orders_by_the_first_component():
    # two standardized attributes: the correlation matrix [[1, r], [r, 1]] has the eigenvectors
    # (1, 1)/sqrt(2) and (1, -1)/sqrt(2); r < 0 here, so the first component is (1, -1)/sqrt(2) (first
    # entry positive) and its scores z_income - z_expend rise with income: the groups of single.
    release = sorted_microaggregation(numeric_table(X7, NAMES), 3, NAMES, order="pca")
    single = sorted_microaggregation(numeric_table(X7, NAMES), 3, NAMES, order="single")
    np.testing.assert_array_equal(released(release, NAMES), released(single, NAMES))
    assert record_order(X7, "pca").tolist() == [1, 3, 0, 6, 5, 4, 2]
    # with a positive correlation the component is (1, 1)/sqrt(2): still rising with income
    flipped = X7 * np.array([1.0, -1.0])
    assert record_order(flipped, "pca").tolist() == [1, 3, 0, 6, 5, 4, 2]


def test_pppca_on_a_line_takes_the_line():
    # records t * (3, 4), t = -3..3 in a shuffled order: the median is 0, every direction is +-(0.6, 0.8)
    t = np.array([2.0, -3, 0, 1, -1, 3, -2])
    X = t[:, None] * np.array([3.0, 4.0])
    direction, centre = pp_direction(X)
    np.testing.assert_allclose(direction, [0.6, 0.8])
    np.testing.assert_allclose(centre, [0, 0])
    order = record_order(X, "pppca")
    assert t[order].tolist() == [-3, -2, -1, 0, 1, 2, 3]
    # groups: t = -3, -2, -1 | 0, 1, 2, 3; the means are t-means times (3, 4)
    release = sorted_microaggregation(numeric_table(X, NAMES), 3, NAMES, order="pppca")
    expected = np.where(t[:, None] < 0, -2.0, 1.5) * np.array([3.0, 4.0])
    np.testing.assert_allclose(released(release, NAMES), expected)


def test_measures_and_weights_reach_the_release():
    w = np.array([1.0, 1, 1, 1, 1, 1, 5])
    table = numeric_table(X7, NAMES, weights=w)
    # single by income; the group 40..70 (records 7, 6, 5, 3) weighted 5, 1, 1, 1
    release = sorted_microaggregation(table, 3, NAMES, order="single")
    assert release.table.column("income")[2] == pytest.approx((5 * 40 + 50 + 60 + 70) / 8)
    median = sorted_microaggregation(table, 3, NAMES, order="single", measure="median")
    assert median.table.column("income")[2] == 40.0  # cumulative weight 5/8 >= 0.5 at 40
    unweighted = sorted_microaggregation(table, 3, NAMES, order="single", weighted=False, measure="median")
    assert unweighted.table.column("income")[2] == 55.0
    trimmed = sorted_microaggregation(table, 3, NAMES, order="single", measure="trim", trim=0.25)
    assert trimmed.table.column("income")[2] == 55.0  # floor(4 * 0.25) = 1 cut each end: 50, 60


# Robust and clustered orders ----------------------------------------------------------------------


def test_mcdpca_ignores_outliers_that_turn_the_classical_axis():
    rng = np.random.default_rng(1)
    x = np.linspace(0, 10, 150)
    clean = np.column_stack([x, 0.1 * rng.standard_normal(150)])
    outliers = np.column_stack([rng.uniform(4, 6, 40), rng.uniform(200, 400, 40)])
    X = np.vstack([clean, outliers])
    order = record_order(X, "mcdpca", seed=3)
    clean_order = order[order < 150]
    # the MCD axis is about (1, 0): the clean records come in the order of x (ascending or not)
    ranks = np.argsort(np.argsort(x))
    assert abs(np.corrcoef(np.arange(150), ranks[clean_order])[0, 1]) > 0.99
    # the premise: the classical (non-robust) covariance's first axis is the outliers' attribute
    classical = np.linalg.eigh(np.cov(X, rowvar=False))[1][:, -1]
    assert abs(classical[1]) > 0.99


def _two_clouds() -> np.ndarray:
    rng = np.random.default_rng(4)
    a = np.column_stack([rng.uniform(100, 120, 30), rng.uniform(1, 2, 30)])
    b = np.column_stack([rng.uniform(1, 2, 30), rng.uniform(100, 120, 30)])
    return np.vstack([a, b])


def test_influence_sorts_each_cluster_by_its_largest_centre_attribute():
    X = _two_clouds()
    order = record_order(X, "influence", clusters=2, transf="log", seed=0)
    first, second = order[:30], order[30:]
    assert {frozenset(first.tolist()), frozenset(second.tolist())} == {
        frozenset(range(30)),
        frozenset(range(30, 60)),
    }
    for block in (first, second):
        column = 0 if block[0] < 30 else 1  # cloud a is large in attribute 0, cloud b in 1
        assert np.all(np.diff(X[block, column]) >= 0)


@pytest.mark.parametrize("order", ["clustpca", "clustmcdpca", "clustpppca"])
def test_clustered_orders_keep_clusters_together(order):
    X = _two_clouds()
    permutation = record_order(X, order, clusters=2, transf="none", seed=0)
    assert sorted(permutation.tolist()) == list(range(60))
    assert {frozenset(permutation[:30].tolist()), frozenset(permutation[30:].tolist())} == {
        frozenset(range(30)),
        frozenset(range(30, 60)),
    }
    labels = sorted_groups(X, 3, order, clusters=2, transf="none", seed=0)
    assert np.bincount(labels).tolist() == [3] * 20


def test_a_cluster_smaller_than_the_attributes_is_sorted_by_sort_by():
    rng = np.random.default_rng(0)
    X = np.vstack([rng.uniform(0, 1, (40, 3)), [[500.0, 900, 1], [400, 800, 2]]])
    order = record_order(X, "clustpca", clusters=2, transf="none", seed=0, sort_by=2)
    tail = order[:2].tolist() if set(order[:2].tolist()) == {40, 41} else order[-2:].tolist()
    assert tail == [40, 41]  # by the third attribute: 1 then 2


# Independent oracles on CASC and Tarragona ------------------------------------------------------


def _oracle(X: np.ndarray, k: int, permutation: np.ndarray) -> np.ndarray:
    """Group means of the runs of k consecutive records of the permutation, the last run taking the
    rest, written from sdcMicro's rule (n/k groups of k when k divides n; else n//k - 1 groups of k
    and one of the rest; fewer than 2k records: one group)."""
    n = len(X)
    if n < 2 * k:
        bounds = [0, n]
    elif n % k == 0:
        bounds = list(range(0, n + 1, k))
    else:
        bounds = [*range(0, (n // k - 1) * k + 1, k), n]
    out = np.empty_like(X)
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        rows = permutation[a:b]
        out[rows] = X[rows].mean(axis=0)
    return out


@pytest.mark.parametrize("name", ["CASCrefmicrodata.csv", "Tarragona.csv"])
def test_casc_and_tarragona_against_an_independent_oracle(shared_data, name):
    frame = pl.read_csv(shared_data("sdcmicro", name))
    names = frame.columns
    X = frame.to_numpy().astype(float)
    table = numeric_table(X, names)
    for k in (3, 5):
        # simple: the order as given
        got = released(sorted_microaggregation(table, k, names, order="simple"), names)
        np.testing.assert_allclose(got, _oracle(X, k, np.arange(len(X))), rtol=1e-12)
        # single: a stable sort by the second attribute
        got = released(sorted_microaggregation(table, k, names, order="single", sort_by=names[1]), names)
        np.testing.assert_allclose(got, _oracle(X, k, np.argsort(X[:, 1], kind="stable")), rtol=1e-12)
        # pca: the first right singular vector of the standardized data, first entry positive
        Z = (X - X.mean(axis=0)) / X.std(axis=0, ddof=1)
        axis = np.linalg.svd(Z, full_matrices=False)[2][0]
        axis = axis if axis[0] > 0 else -axis
        permutation = np.argsort(Z @ axis, kind="stable")
        got = released(sorted_microaggregation(table, k, names, order="pca"), names)
        np.testing.assert_allclose(got, _oracle(X, k, permutation), rtol=1e-9)


def test_pppca_against_a_vectorized_oracle(shared_data):
    X = pl.read_csv(shared_data("sdcmicro", "Tarragona.csv")).to_numpy().astype(float)[:400]
    centre = np.median(X, axis=0)
    Xc = X - centre
    norms = np.linalg.norm(Xc, axis=1)
    A = Xc / norms[:, None]
    Y = Xc @ A.T  # column c: the projections on candidate c
    mads = np.median(np.abs(Y - np.median(Y, axis=0)), axis=0)
    best = len(mads) - 1 - int(np.argmax(mads[::-1]))  # the last of the largest (order(s)[n])
    direction = A[best] if A[best, 0] >= 0 else -A[best]
    got, got_centre = pp_direction(X)
    np.testing.assert_allclose(got, direction, rtol=1e-12)
    np.testing.assert_allclose(got_centre, centre)
    np.testing.assert_array_equal(record_order(X, "pppca"), np.argsort(Xc @ direction, kind="stable"))


# Parameters -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"order": "pca", "seed": 1}, r"takes seed only with order mcdpca, pppca, clustpca"),
        ({"order": "single", "clusters": 3}, r"takes clusters only with order clustpca"),
        ({"order": "mcdpca", "sort_by": "income"}, r"takes sort_by only with order single, clustpca"),
        ({"order": "pca", "directions": 10}, r"takes directions only with order pppca, clustpppca"),
        ({"order": "influence", "transf": "box"}, r"transf"),
        ({"order": "clustpca", "cluster_method": "clara"}, r"cluster_method"),
        ({"measure": "trim"}, r"trim needs trim"),
        ({"trim": 0.1}, r"takes trim only with measure trim"),
        ({"measure": "onestep", "weighted": True}, r"weighted: measure onestep has no weighted version"),
        ({"order": "gpca"}, r"order"),
        ({"order": "single", "sort_by": "age"}, r"sort_by must be one of the attributes microaggregated"),
        ({"order": "clustpca", "clusters": 8, "transf": "none", "k": 2}, r"clusters must be at most"),
        ({"weighted": True}, r"weighted needs sampling weights"),
    ],
)
def test_bad_options_name_themselves(options, message):
    table = numeric_table(X7, NAMES)
    options = {"k": 3, **options}
    k = options.pop("k")
    with pytest.raises(ConfigError, match=message):
        sorted_microaggregation(table, k, NAMES, **options)


def test_log_needs_positive_values():
    X = X7.copy()
    X[0, 1] = 0.0
    message = "transf log needs positive values, and attribute 'expend' has 1 of 0"
    with pytest.raises(InputError, match=message):
        sorted_microaggregation(numeric_table(X, NAMES), 3, NAMES, order="influence", clusters=2)


def test_command_line_end_to_end(tmp_path):
    frame = pl.DataFrame({"income": X7[:, 0], "expend": X7[:, 1], "region": list("abababa")})
    frame.write_csv(tmp_path / "data.csv")
    (tmp_path / "config.yaml").write_text(
        "attributes:\n  income: {role: quasi-identifier, kind: numeric}\n"
        "  expend: {role: quasi-identifier, kind: numeric}\n"
    )
    result = CliRunner().invoke(
        app,
        [
            "anonymize",
            "sorted-microaggregation",
            str(tmp_path / "data.csv"),
            "-c",
            str(tmp_path / "config.yaml"),
            "--order",
            "single",
            "-k",
            "3",
            "-o",
            str(tmp_path / "out.csv"),
            "--quiet",
        ],
    )
    assert result.exit_code == 0, result.output
    out = pl.read_csv(tmp_path / "out.csv")
    assert out.get_column("income").to_list()[:3] == [20.0, 20.0, 55.0]
    assert out.get_column("region").to_list() == list("abababa")
    foreign = CliRunner().invoke(
        app,
        [
            "anonymize",
            "sorted-microaggregation",
            str(tmp_path / "data.csv"),
            "-c",
            str(tmp_path / "config.yaml"),
        ]
        + ["--order", "pca", "--clusters", "2", "-o", str(tmp_path / "bad.csv")],
    )
    assert foreign.exit_code == 2 and not (tmp_path / "bad.csv").exists()
    assert "--clusters" in foreign.output


def test_the_summary_records_the_options_the_order_read():
    from sdckit.anonymize import METHODS

    summary = METHODS.get("sorted-microaggregation").summary
    X = np.exp(_two_clouds() / 50)
    table = numeric_table(X, NAMES, weights=np.ones(60))
    clustered = summary(sorted_microaggregation(table, 3, NAMES, order="clustpca", clusters=2))
    assert {key: clustered[key] for key in ("clusters", "cluster_method", "transf", "seed", "sort_by")} == {
        "clusters": 2,
        "cluster_method": "kmeans",
        "transf": "log",
        "seed": 0,
        "sort_by": "income",
    }
    assert clustered["weighted"] is True and clustered["groups"] == 20
    exact = summary(sorted_microaggregation(table, 3, NAMES, order="pppca", measure="onestep"))
    assert "seed" not in exact and "clusters" not in exact and exact["weighted"] is False
    negative = numeric_table(X7, NAMES, weights=np.array([1.0, 1, 1, -1, 1, 1, 1]))
    with pytest.raises(InputError, match="1 sampling weights are missing, infinite or negative in 'w'"):
        sorted_microaggregation(negative, 3, NAMES, order="single")


def test_strata_order_and_group_each_stratum_alone():
    # stratum a: incomes 30, 10, 20, 60 (records 0, 2, 4, 6); stratum b: 70, 50, 40 (records 1, 3, 5)
    income = np.array([30.0, 70, 10, 50, 20, 40, 60])
    frame = pl.DataFrame({"income": income, "expend": 100 - income, "region": list("ababab") + ["a"]})
    roles = {"income": (Role.QUASI_IDENTIFIER, Kind.NUMERIC), "expend": (Role.QUASI_IDENTIFIER, Kind.NUMERIC)}
    table = make_table(frame, roles=roles)
    release = sorted_microaggregation(table, 2, NAMES, order="single", strata=["region"])
    # a sorted: 10, 20 | 30, 60 -> 15, 15, 45, 45; b sorted: 40, 50, 70 (one group of 3) -> 160/3
    b = 160 / 3
    np.testing.assert_allclose(release.table.column("income").to_numpy(), [45, b, 15, b, 15, b, 45])
    assert release.figures.strata == 2 and release.figures.groups == 3
    with pytest.raises(ConfigError, match=r"clusters must be at most a stratum's records \(3\), got 4"):
        sorted_microaggregation(table, 2, NAMES, order="influence", clusters=4, strata=["region"])
    with pytest.raises(ConfigError, match="fewer"):
        sorted_microaggregation(table, 4, NAMES, order="single", strata=["region"])
