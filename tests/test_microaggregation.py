"""Microaggregation (SPEC §4): the worked examples of §4.5, MDAV against a straightforward numpy
implementation, optimal univariate microaggregation against brute force over every partition into
consecutive groups, group-size and mean-preservation properties, k-anonymity of categorical
microaggregation (re-checked with check_table and pycanon), and the command line (bad input exits 2
writing nothing, the same data gives the same file)."""

from __future__ import annotations

import hashlib
import itertools
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from conftest import make_table
from sdckit.anonymize import run_method
from sdckit.anonymize.microaggregation import (
    MicroaggregationFigures,
    categorical_microaggregation,
    information_loss,
    mdav,
    mdav_groups,
    pca_blocks,
    univariate_groups,
    vmdav_groups,
)
from sdckit.cli import app
from sdckit.errors import ConfigError
from sdckit.models import KAnonymity, check_table
from sdckit.table import Attribute, Kind, Role, Schema, Table

runner = CliRunner()


def groups_of(labels: np.ndarray) -> list[list[int]]:
    """The groups as sorted lists of 1-based row numbers, in label order."""
    return [sorted((np.flatnonzero(labels == g) + 1).tolist()) for g in np.unique(labels)]


def numeric_table(X: np.ndarray, names: list[str] | None = None) -> Table:
    names = names or [f"x{j}" for j in range(X.shape[1])]
    frame = pl.DataFrame({name: X[:, j] for j, name in enumerate(names)})
    return make_table(frame, roles=dict.fromkeys(names, (Role.QUASI_IDENTIFIER, Kind.NUMERIC)))


# A straightforward numpy MDAV (the benchmark's baseline): vectorized distances, one step at a time.


def reference_mdav(X: np.ndarray, k: int) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    variance = X.var(axis=0, ddof=1) if n > 1 else np.ones(d)
    w = np.where(variance > 0, 1.0 / np.where(variance > 0, variance, 1.0), 1.0)

    def distances(rows, point):
        total = np.zeros(len(rows))
        for j in range(d):
            diff = X[rows, j] - point[j]
            total += w[j] * diff * diff
        return total

    def farthest(rows, dist):
        return int(rows[dist == dist.max()].min())

    def group_around(rows, seed):
        others = rows[rows != seed]
        dist = distances(others, X[seed])
        return np.r_[seed, others[np.lexsort((others, dist))[: k - 1]]]

    labels = np.full(n, -1)
    remaining = np.arange(n)
    group = 0
    while len(remaining) >= 2 * k:
        centroid = X[remaining].sum(axis=0) / len(remaining)
        xr = farthest(remaining, distances(remaining, centroid))
        two = len(remaining) >= 3 * k
        from_xr = distances(remaining, X[xr])
        first = group_around(remaining, xr)
        labels[first] = group
        group += 1
        keep = ~np.isin(remaining, first)
        if two:
            xs = farthest(remaining[keep], from_xr[keep])
        remaining = remaining[keep]
        if two:
            second = group_around(remaining, xs)
            labels[second] = group
            group += 1
            remaining = remaining[~np.isin(remaining, second)]
    if len(remaining):
        labels[remaining] = group
    return labels


# SPEC §4.5 worked examples -----------------------------------------------------------------------------


def test_mdav_one_dimension_spec_example():
    X = np.arange(1, 12, dtype=float)[:, None]
    labels, blocks = mdav_groups(X, 3)
    assert blocks == 1
    assert groups_of(labels) == [[1, 2, 3], [9, 10, 11], [4, 5, 6, 7, 8]]
    assert information_loss(X, labels, standardize=False) == pytest.approx((14.0, 110.0))
    sse, sst = information_loss(X, labels)
    assert 100 * sse / sst == pytest.approx(12.727272, abs=1e-5)
    release = mdav(numeric_table(X))
    assert release.table.column("x0").to_list() == [2.0] * 3 + [6.0] * 5 + [10.0] * 3
    assert release.figures_as(MicroaggregationFigures).information_loss == pytest.approx(12.727273, abs=1e-6)
    assert release.figures_as(MicroaggregationFigures).sse == pytest.approx(
        14 / 11, abs=1e-6
    )  # standardized: 14 / var
    assert release.figures_as(MicroaggregationFigures).sst == pytest.approx(10.0)  # (n - 1) d


SPEC_2D = np.array([(1, 1), (2, 1), (1, 2), (8, 8), (9, 8), (8, 9), (9, 9), (4, 5), (5, 4), (20, 20)], float)


def test_mdav_two_dimensions_spec_example():
    labels, _ = mdav_groups(SPEC_2D, 3)
    assert groups_of(labels) == [[5, 7, 10], [1, 2, 3], [4, 6, 8, 9]]
    centroids = [SPEC_2D[labels == g].mean(axis=0) for g in range(3)]
    np.testing.assert_allclose(
        centroids, [[12.666667, 12.333333], [1.333333, 1.333333], [6.25, 6.5]], atol=1e-6
    )
    sse, sst = information_loss(SPEC_2D, labels)
    assert sse == pytest.approx(6.2608, abs=1e-4)
    assert sst == pytest.approx(18.0)
    assert 100 * sse / sst == pytest.approx(34.78, abs=0.01)


VMDAV_X = np.array([0, 4, 8, 15, 23, 30, 34, 37, 38], float)[:, None]


@pytest.mark.parametrize(
    ("gamma", "groups", "sse"),
    [
        (0.2, [[0, 4, 8], [34, 37, 38], [15, 23, 30]], 153.3333),
        (1.1, [[0, 4, 8, 15], [23, 30, 34, 37, 38]], 271.95),
    ],
)
def test_vmdav_gamma_spec_example(gamma, groups, sse):
    labels = vmdav_groups(VMDAV_X, 3, gamma)
    assert [sorted(VMDAV_X[labels == g, 0].tolist()) for g in np.unique(labels)] == groups
    assert information_loss(VMDAV_X, labels, standardize=False)[0] == pytest.approx(sse, abs=1e-3)


def test_categorical_representatives_spec_example():
    # ordinal low < mid < high (labels that sort in that order) and nominal colours
    frame = pl.DataFrame(
        {"level": ["1-low", "2-mid", "2-mid", "3-high"], "colour": ["red", "blue", "red", "green"]}
    )
    schema = Schema(
        (
            Attribute("level", role=Role.QUASI_IDENTIFIER, kind=Kind.ORDINAL),
            Attribute("colour", role=Role.QUASI_IDENTIFIER, kind=Kind.CATEGORICAL),
        )
    )
    release = categorical_microaggregation(Table(frame, schema), k=4)
    assert release.table.column("level").to_list() == ["2-mid"] * 4  # lower median
    assert release.table.column("colour").to_list() == ["red"] * 4  # mode
    # SST: ordinal distances to mid are 0.5, 0, 0, 0.5 (m = 3); nominal: two records differ from red.
    assert release.figures_as(MicroaggregationFigures).sst == pytest.approx(0.25 + 0.25 + 2)
    assert release.figures_as(MicroaggregationFigures).sse == release.figures_as(MicroaggregationFigures).sst
    tie = Table(pl.DataFrame({"colour": ["red", "blue"]}), Schema((schema.attributes[1],)))
    assert categorical_microaggregation(tie, k=2).table.column("colour").to_list() == ["blue", "blue"]


def test_ordinal_distance_is_rank_difference_over_m_minus_1():
    # d(low, high) = 1 and d(low, mid) = 0.5: with k = 2, mid pairs with low (closer) rather than high,
    # and the remaining pair (high, high) is exact.
    frame = pl.DataFrame({"level": ["1-low", "3-high", "2-mid", "3-high"]})
    schema = Schema((Attribute("level", role=Role.QUASI_IDENTIFIER, kind=Kind.ORDINAL),))
    release = categorical_microaggregation(Table(frame, schema), k=2)
    assert release.classes[0] == release.classes[2] != release.classes[1] == release.classes[3]
    assert release.figures_as(MicroaggregationFigures).sse == pytest.approx(
        0.25
    )  # low vs representative low: 0; mid: 0.5^2


# MDAV against the numpy reference, and group sizes ----------------------------------------------------


@settings(max_examples=60)
@given(
    st.integers(2, 5).flatmap(
        lambda k: st.tuples(
            st.just(k),
            st.integers(k, 45).flatmap(
                lambda n: st.integers(1, 3).flatmap(
                    lambda d: st.lists(
                        st.lists(st.integers(0, 6), min_size=d, max_size=d), min_size=n, max_size=n
                    )
                )
            ),
        )
    )
)
def test_mdav_equals_the_numpy_reference_and_groups_have_k_records(case):
    k, rows = case
    X = np.array(rows, dtype=float)
    labels, _ = mdav_groups(X, k)
    np.testing.assert_array_equal(labels, reference_mdav(X, k))
    sizes = np.bincount(labels)
    n = len(X)
    # every group has k records except the last one formed, which has k..2k-1
    assert (sizes[:-1] == k).all()
    assert k <= sizes[-1] <= 2 * k - 1
    assert sizes.sum() == n


@settings(max_examples=60)
@given(
    st.integers(2, 4).flatmap(
        lambda k: st.tuples(
            st.just(k),
            st.lists(st.lists(st.integers(0, 20), min_size=2, max_size=2), min_size=k, max_size=40),
            st.sampled_from([0.2, 0.5, 1.1, 3.0]),
        )
    )
)
def test_vmdav_groups_have_at_least_k_and_grow_at_most_to_2k_minus_1(case):
    k, rows, gamma = case
    X = np.array(rows, dtype=float)
    labels = vmdav_groups(X, k, gamma)
    sizes = np.bincount(labels)
    assert sizes.min() >= k
    # only leftovers (fewer than k records in all) may take a group beyond 2k - 1
    assert np.clip(sizes - (2 * k - 1), 0, None).sum() <= k - 1


def test_release_preserves_column_means_and_replaces_values_by_group_means():
    rng = np.random.default_rng(4)
    X = np.round(rng.lognormal(8, 1, size=(500, 3)), 2)
    table = numeric_table(X, ["income", "expend", "savings"])
    for method, options in [
        ("mdav", {"k": 4}),
        ("vmdav", {"k": 3, "gamma": 1.1}),
        ("univariate-microaggregation", {"k": 5}),
        ("univariate-microaggregation", {"k": 3, "variant": "individual-ranking"}),
        ("mdav", {"k": 3, "partition_size": 100}),
    ]:
        release = run_method(method, table, options)
        released = release.table.data.to_numpy()
        np.testing.assert_allclose(released.mean(axis=0), X.mean(axis=0), rtol=1e-12)
        if method != "univariate-microaggregation":
            for g in np.unique(release.classes):
                members = release.classes == g
                assert len(np.unique(released[members], axis=0)) == 1
                np.testing.assert_allclose(released[members][0], X[members].mean(axis=0), rtol=1e-12)


# Univariate microaggregation ----------------------------------------------------------------------------


def brute_optimal_sse(values: np.ndarray, k: int) -> float:
    """Minimal SSE over every partition of the sorted values into consecutive groups of k..2k-1."""
    x = np.sort(values)
    n = len(x)
    best = np.inf
    for cuts in range(n + 1):
        for inner in itertools.combinations(range(1, n), cuts):
            bounds = [0, *inner, n]
            sizes = np.diff(bounds)
            if sizes.min() < k or sizes.max() > 2 * k - 1:
                continue
            sse = sum(float(((x[a:b] - x[a:b].mean()) ** 2).sum()) for a, b in itertools.pairwise(bounds))
            best = min(best, sse)
    return best


@settings(max_examples=80)
@given(
    st.integers(2, 4).flatmap(
        lambda k: st.tuples(st.just(k), st.lists(st.integers(-20, 20), min_size=k, max_size=13))
    )
)
def test_optimal_univariate_equals_brute_force(case):
    k, values = case
    x = np.array(values, dtype=float)
    labels = univariate_groups(x, k, "optimal")
    sizes = np.bincount(labels)
    assert sizes.min() >= k and sizes.max() <= 2 * k - 1
    sse = information_loss(x[:, None], labels, standardize=False)[0]
    assert sse == pytest.approx(brute_optimal_sse(x, k), abs=1e-9)
    # groups are consecutive in sorted order
    order = np.argsort(x, kind="stable")
    assert (np.diff(labels[order]) >= 0).all()


def test_optimal_univariate_beats_fixed_groups():
    x = np.array([1, 2, 3, 10, 11, 12, 13, 30, 31, 32], float)
    optimal = univariate_groups(x, 3, "optimal")
    ranking = univariate_groups(x, 3, "individual-ranking")
    assert groups_of(optimal) == [[1, 2, 3], [4, 5, 6, 7], [8, 9, 10]]
    assert groups_of(ranking) == [[1, 2, 3], [4, 5, 6], [7, 8, 9, 10]]  # sdcMicro's onedims: last takes 4


def test_individual_ranking_follows_sdcmicro_onedims():
    # n = 11, k = 3: groups of 3, 3 and the last 5 (sdcMicro's indexMicro); ties by row index.
    x = np.array([5, 1, 1, 9, 2, 7, 7, 3, 4, 8, 6], float)
    labels = univariate_groups(x, 3, "individual-ranking")
    assert np.bincount(labels).tolist() == [3, 3, 5]
    order = np.argsort(x, kind="stable")
    assert labels[order].tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2, 2, 2]


# The scalable approximation --------------------------------------------------------------------------


def test_pca_blocks_have_between_half_and_all_of_the_partition_size_and_mdav_stays_close():
    rng = np.random.default_rng(11)
    X = rng.normal(size=(5000, 3)) @ np.array([[3, 1, 0], [0, 1, 0.5], [0, 0, 0.2]])
    blocks = pca_blocks(X, 1.0 / X.var(axis=0, ddof=1), 600)
    sizes = [len(b) for b in blocks]
    assert max(sizes) <= 600 and min(sizes) > 300
    assert sorted(np.concatenate(blocks).tolist()) == list(range(5000))
    exact, _ = mdav_groups(X, 3)
    approximate, count = mdav_groups(X, 3, partition_size=600)
    assert count == len(blocks)
    sizes = np.bincount(approximate)
    assert sizes.min() >= 3 and sizes.max() <= 5
    il_exact = np.divide(*information_loss(X, exact))
    il_approximate = np.divide(*information_loss(X, approximate))
    assert il_approximate < 1.25 * il_exact


# k-anonymity through microaggregation ---------------------------------------------------------------


def mixed_table(n: int = 300, seed: int = 3) -> Table:
    rng = np.random.default_rng(seed)
    frame = pl.DataFrame(
        {
            "age": rng.integers(18, 90, n),
            "sex": rng.choice(["F", "M"], n),
            "region": rng.choice(["north", "south", "east", "west", "centre"], n),
            "education": rng.choice(["1-primary", "2-secondary", "3-tertiary"], n),
            "income": np.round(rng.lognormal(10, 0.5, n)),
        }
    )
    schema = Schema(
        (
            Attribute("age", role=Role.QUASI_IDENTIFIER, kind=Kind.NUMERIC),
            Attribute("sex", role=Role.QUASI_IDENTIFIER, kind=Kind.CATEGORICAL),
            Attribute("region", role=Role.QUASI_IDENTIFIER, kind=Kind.CATEGORICAL),
            Attribute("education", role=Role.QUASI_IDENTIFIER, kind=Kind.ORDINAL),
            Attribute("income", role=Role.SENSITIVE, kind=Kind.NUMERIC),
        )
    )
    return Table(frame, schema)


@pytest.mark.parametrize("k", [2, 3, 5, 8])
def test_categorical_microaggregation_of_every_quasi_identifier_is_k_anonymous(k):
    table = mixed_table()
    qis = ["age", "sex", "region", "education"]
    assert check_table(table, qis, [KAnonymity(k)]).results[0].worst() < k  # not k-anonymous before
    release = categorical_microaggregation(table, k=k)
    report = check_table(release.table, qis, [KAnonymity(k)])
    assert report.results[0].passes.all()
    assert report.results[0].worst() >= k
    assert release.figures_as(MicroaggregationFigures).k_anonymity["k_anonymous"] is True
    assert (
        release.figures_as(MicroaggregationFigures).k_anonymity["smallest_class"] == report.results[0].worst()
    )
    assert release.table.column("income").to_list() == table.column("income").to_list()  # untouched
    assert set(release.table.column("education").unique()) <= {"1-primary", "2-secondary", "3-tertiary"}
    pycanon = pytest.importorskip("pycanon.anonymity")
    assert pycanon.k_anonymity(release.table.data.to_pandas(), qis) >= k


# Real data ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["CASCrefmicrodata.csv", "Tarragona.csv"])
def test_casc_benchmark_data_mdav_equals_the_reference(shared_data, name):
    path = shared_data("sdcmicro", name)
    X = pl.read_csv(path).to_numpy().astype(float)
    labels, _ = mdav_groups(X, 3)
    np.testing.assert_array_equal(labels, reference_mdav(X, 3))
    sizes = np.bincount(labels)
    assert (sizes[:-1] == 3).all() and 3 <= sizes[-1] <= 5
    sse, sst = information_loss(X, labels)
    assert sst == pytest.approx((len(X) - 1) * X.shape[1])
    assert 0 < sse / sst < 0.2


# Errors -------------------------------------------------------------------------------------------------


def test_library_errors_name_the_problem():
    table = mixed_table(20)
    with pytest.raises(ConfigError, match=r"k must be at most the number of records \(20\), got 21"):
        mdav(table, k=21)
    with pytest.raises(ConfigError, match="mdav needs numeric attributes; 'sex' is categorical"):
        mdav(table, attributes=["age", "sex"])
    with pytest.raises(ConfigError, match="'height' is not a column"):
        mdav(table, attributes=["height"])
    with pytest.raises(ConfigError, match=r"mdav needs partition_size at least 4 k = 20, got 12"):
        mdav(table, k=5, partition_size=12)
    missing = Table(
        table.data.with_columns(pl.when(pl.col("age") > 60).then(None).otherwise(pl.col("age")).alias("age")),
        table.schema,
    )
    count = missing.column("age").null_count()
    assert count > 0
    for function in (mdav, categorical_microaggregation):
        with pytest.raises(ConfigError, match=rf"attribute 'age' has {count} missing values"):
            function(missing)


def write_inputs(directory: Path) -> tuple[Path, Path]:
    table = mixed_table(60)
    table.data.write_csv(directory / "data.csv")
    (directory / "config.yaml").write_text(
        "attributes:\n"
        "  age: {role: quasi-identifier, kind: numeric}\n"
        "  sex: {role: quasi-identifier}\n"
        "  region: {role: quasi-identifier}\n"
        "  education: {role: quasi-identifier, kind: ordinal}\n"
        "  income: {role: sensitive, kind: numeric}\n"
    )
    return directory / "data.csv", directory / "config.yaml"


def anonymize(directory: Path, method: str, *options: str, output: str = "out.csv"):
    data, config = write_inputs(directory)
    arguments = [method, str(data), "-c", str(config), "-o", str(directory / output)]
    return runner.invoke(
        app, ["anonymize", *arguments, "--summary", str(directory / "summary.json"), *options]
    )


def test_cli_mdav_writes_release_and_summary(tmp_path):
    import json

    result = anonymize(tmp_path, "mdav", "-k", "4", "--attributes", "age,income")
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "summary.json").read_text())
    original = pl.read_csv(tmp_path / "data.csv")
    released = pl.read_csv(tmp_path / "out.csv")
    X = original.select("age", "income").to_numpy().astype(float)
    labels, _ = mdav_groups(X, 4)
    sse, sst = information_loss(X, labels)
    assert summary["groups"] == 15 and summary["smallest_group"] == 4 and summary["largest_group"] == 4
    assert summary["sse"] == pytest.approx(sse, abs=1e-6) and summary["sst"] == pytest.approx(sst, abs=1e-6)
    assert summary["information_loss"] == pytest.approx(100 * sse / sst, abs=1e-6)
    assert summary["recipe"]["steps"][0] == {
        "method": "mdav",
        "k": 4,
        "attributes": ["age", "income"],
        "partition_size": None,
    }
    assert released["sex"].to_list() == original["sex"].to_list()
    assert released["age"].mean() == pytest.approx(original["age"].mean(), rel=1e-12)
    assert "information loss SSE/SST" in result.output


def test_cli_categorical_microaggregation_is_k_anonymous(tmp_path):
    import json

    result = anonymize(tmp_path, "categorical-microaggregation", "-k", "3")
    assert result.exit_code == 0, result.output
    released = pl.read_csv(tmp_path / "out.csv")
    assert released.group_by("age", "sex", "region", "education").len()["len"].min() >= 3
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["k_anonymity"]["k_anonymous"] is True


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize(
    ("method", "options"),
    [
        ("mdav", ["-k", "3"]),
        ("vmdav", ["--gamma", "1.1"]),
        ("univariate-microaggregation", ["--variant", "individual-ranking"]),
        ("categorical-microaggregation", ["-k", "2"]),
    ],
)
def test_cli_same_data_gives_the_same_file(tmp_path, method, options):
    first = anonymize(tmp_path, method, *options, output="first.csv")
    again = anonymize(tmp_path, method, *options, output="again.csv")
    assert first.exit_code == again.exit_code == 0, first.output
    assert digest(tmp_path / "first.csv") == digest(tmp_path / "again.csv")


@pytest.mark.parametrize(
    ("method", "options", "words"),
    [
        ("mdav", ["-k", "61"], ["k must be at most the number of records (60), got 61"]),
        ("univariate-microaggregation", ["-k", "100"], ["k must be at most the number of records (60)"]),
        (
            "mdav",
            ["--attributes", "age,region"],
            ["mdav needs numeric attributes", "'region' is categorical"],
        ),
        ("vmdav", ["--attributes", "sex"], ["vmdav needs numeric attributes", "'sex'"]),
        ("mdav", ["-k", "5", "--partition-size", "12"], ["--partition-size at least 4 -k = 20", "12"]),
        ("vmdav", ["--gamma", "0"], ["--gamma", "greater than 0"]),
        ("univariate-microaggregation", ["--variant", "median"], ["--variant", "'optimal'", "'median'"]),
        ("categorical-microaggregation", ["--attributes", "age,height"], ["'height' is not a column"]),
    ],
)
def test_cli_bad_input_exits_2_and_writes_nothing(tmp_path, method, options, words):
    result = anonymize(tmp_path, method, *options)
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert text.startswith("error:") and text.count("error:") == 1, text
    for word in words:
        assert word in text, (word, text)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.yaml", "data.csv"]


def test_cli_missing_values_exit_2(tmp_path):
    data, config = write_inputs(tmp_path)
    frame = pl.read_csv(data).with_columns(
        pl.when(pl.col("age") < 25).then(None).otherwise(pl.col("age")).alias("age")
    )
    frame.write_csv(data)
    count = frame["age"].null_count()
    result = runner.invoke(
        app, ["anonymize", "mdav", str(data), "-c", str(config), "-o", str(tmp_path / "out.csv")]
    )
    assert result.exit_code == 2, result.output
    assert f"attribute 'age' has {count} missing values" in " ".join(result.output.split())
    assert not (tmp_path / "out.csv").exists()


@settings(max_examples=80)
@given(
    st.lists(st.tuples(st.integers(0, 5), st.integers(0, 4)), min_size=1, max_size=40),
)
def test_group_representatives_equal_per_group_brute_force(pairs):
    from sdckit.anonymize.microaggregation import _representatives

    labels = np.array([g for g, _ in pairs])
    _, labels = np.unique(labels, return_inverse=True)
    codes = np.array([c for _, c in pairs], dtype=np.int64)
    n_groups = int(labels.max()) + 1
    modes = _representatives("nominal", codes, labels, n_groups)
    medians = _representatives("ordinal", codes, labels, n_groups)
    for g in range(n_groups):
        members = sorted(codes[labels == g].tolist())
        counts = {c: members.count(c) for c in members}
        assert modes[g] == min(c for c in counts if counts[c] == max(counts.values()))
        assert medians[g] == members[(len(members) - 1) // 2]


@settings(max_examples=30)
@given(
    st.integers(2, 4).flatmap(
        lambda k: st.tuples(
            st.just(k),
            st.lists(
                st.tuples(
                    st.integers(0, 3), st.sampled_from("abc"), st.sampled_from(["1-lo", "2-mid", "3-hi"])
                ),
                min_size=k,
                max_size=40,
            ),
        )
    )
)
def test_categorical_microaggregation_is_always_k_anonymous(case):
    k, rows = case
    frame = pl.DataFrame(rows, schema=["number", "nominal", "ordinal"], orient="row")
    schema = Schema(
        (
            Attribute("number", role=Role.QUASI_IDENTIFIER, kind=Kind.NUMERIC),
            Attribute("nominal", role=Role.QUASI_IDENTIFIER, kind=Kind.CATEGORICAL),
            Attribute("ordinal", role=Role.QUASI_IDENTIFIER, kind=Kind.ORDINAL),
        )
    )
    release = categorical_microaggregation(Table(frame, schema), k=k)
    sizes = np.bincount(release.classes)
    assert (sizes[:-1] == k).all() and k <= sizes[-1] <= 2 * k - 1
    report = check_table(release.table, ["number", "nominal", "ordinal"], [KAnonymity(k)])
    assert report.results[0].worst() >= k


def test_categorical_microaggregation_of_numeric_attributes_is_mdav():
    rng = np.random.default_rng(8)
    X = rng.integers(0, 30, size=(200, 3)).astype(float)
    table = numeric_table(X)
    numeric = mdav(table, k=4)
    mixed = categorical_microaggregation(table, k=4)
    np.testing.assert_array_equal(numeric.classes, mixed.classes)
    assert numeric.table.data.equals(mixed.table.data)
    assert mixed.figures_as(MicroaggregationFigures).sse == pytest.approx(
        numeric.figures_as(MicroaggregationFigures).sse, abs=1e-6
    )
    assert mixed.figures_as(MicroaggregationFigures).sst == pytest.approx(
        numeric.figures_as(MicroaggregationFigures).sst, abs=1e-6
    )


def test_cell_penalty_is_the_group_range_over_the_file_range():
    X = np.arange(1, 12, dtype=float)[:, None]
    release = mdav(numeric_table(X))
    # groups {1,2,3}, {4..8}, {9,10,11}; file range 10
    np.testing.assert_allclose(release.cell_penalty[:, 0], [0.2] * 3 + [0.4] * 5 + [0.2] * 3)
