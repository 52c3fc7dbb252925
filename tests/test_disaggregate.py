"""Generalized released values drawn back into the original's domain (sdckit.utility.disaggregate)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from sdckit.config import parse_config
from sdckit.measures import run_measure
from sdckit.utility.disaggregate import in_original_domain

CONFIG = {
    "attributes": {
        "age": {"role": "quasi-identifier", "kind": "numeric"},
        "sex": {"role": "quasi-identifier"},
        "city": {"role": "quasi-identifier"},
    }
}


def tables(original: dict, release: dict):
    config = parse_config(CONFIG)
    return config.read(pl.DataFrame(original)), config.read_release(pl.DataFrame(release))


def test_values_of_the_original_are_left_alone():
    original, release = tables(
        {"age": [20, 30, 40], "sex": ["F", "M", "F"], "city": ["a", "b", "c"]},
        {"age": [21, 30, 40], "sex": ["M", "M", "F"], "city": ["a", "a", "c"]},
    )
    drawn = in_original_domain(original, release, ["age", "sex", "city"], seed=1)
    assert drawn.cells == {"age": 0, "sex": 0, "city": 0}
    assert drawn.table.data.equals(release.data)


def test_a_range_is_drawn_among_the_original_values_inside_it_with_their_frequencies():
    n = 4000
    ages = np.array([20, 20, 20, 25, 31, 60] * (n // 6 + 1))[:n]
    labels = np.where(ages < 30, "20-29", np.where(ages < 40, "30-39", "*"))
    original, release = tables(
        {"age": ages, "sex": ["F"] * n, "city": ["a"] * n},
        {"age": labels, "sex": ["F"] * n, "city": ["a"] * n},
    )
    drawn = in_original_domain(original, release, ["age"], seed=3)
    values = drawn.table.data.get_column("age").to_numpy()
    assert drawn.cells == {"age": n}
    inside = labels == "20-29"
    assert set(values[inside].tolist()) == {20, 25}
    # 20 holds three quarters of the original values in 20-29.
    assert values[inside].mean() == pytest.approx(20 * 0.75 + 25 * 0.25, abs=0.15)
    assert set(values[labels == "30-39"].tolist()) == {31}
    # '*' covers everything: drawn with the original's frequencies (1/6 of the values are 60).
    star = values[labels == "*"]
    assert set(star.tolist()) <= {20, 25, 31, 60}
    assert drawn.table.data.get_column("age").dtype.is_integer()
    again = in_original_domain(original, release, ["age"], seed=3).table.data
    assert again.equals(drawn.table.data)
    other = in_original_domain(original, release, ["age"], seed=4).table.data
    assert not other.equals(drawn.table.data)


def test_an_interval_without_original_values_gives_its_midpoint():
    original, release = tables(
        {"age": [20, 22, 50], "sex": ["F", "M", "F"], "city": ["a", "b", "c"]},
        {"age": ["[30, 40)", "20-22", ">=45"], "sex": ["F", "M", "F"], "city": ["a", "b", "c"]},
    )
    values = in_original_domain(original, release, ["age"], seed=0).table.data.get_column("age").to_list()
    assert values[0] == 35.0 and values[1] in (20.0, 22.0) and values[2] == 50.0


def test_sets_stars_nulls_and_unknown_labels_of_categories():
    n = 3000
    cities = np.array(["a", "a", "a", "b", "c", "d"] * (n // 6))
    released = np.where(np.isin(cities, ["a", "b"]), "{a,b}", np.where(cities == "c", "*", "new"))
    release_city = pl.Series(released)
    original, release = tables(
        {"age": [30] * n, "sex": ["F"] * n, "city": cities},
        {"age": [30] * n, "sex": [None] + ["F"] * (n - 1), "city": release_city},
    )
    drawn = in_original_domain(original, release, ["sex", "city"], seed=5)
    city = np.array(drawn.table.data.get_column("city").to_list())
    in_set = released == "{a,b}"
    assert set(city[in_set]) == {"a", "b"}
    assert (city[in_set] == "a").mean() == pytest.approx(0.75, abs=0.04)
    assert set(city[released == "*"]) <= {"a", "b", "c", "d"}
    assert set(city[released == "new"]) == {"new"}  # covers no original value: kept
    assert drawn.table.data.get_column("sex")[0] == "F"  # a missing value covers everything
    assert drawn.cells == {"sex": 1, "city": int(in_set.sum() + (released == "*").sum())}


def test_a_hierarchy_node_is_drawn_among_its_leaves():
    config = parse_config(
        {"attributes": {"city": {"role": "quasi-identifier", "hierarchy": {"order": ["a", "b", "c", "d"]}}}}
    )
    original = config.read(pl.DataFrame({"city": ["a", "b", "c", "d"] * 50}))
    hierarchy = original.schema["city"].hierarchy
    leaves = hierarchy.labels[0]
    node = {leaf: hierarchy.labels[1][hierarchy.codes[i, 1]] for i, leaf in enumerate(leaves)}
    assert node["a"] == node["b"] != node["c"] == node["d"]  # fanout 2: {a,b} and {c,d}
    release = config.read_release(pl.DataFrame({"city": [node["a"], node["b"], node["c"], "d"] * 50}))
    city = in_original_domain(original, release, ["city"], seed=2).table.data.get_column("city").to_list()
    assert set(city[0::4]) | set(city[1::4]) == {"a", "b"}
    assert set(city[2::4]) == {"c", "d"} and set(city[3::4]) == {"d"}


def test_a_generalized_release_is_no_longer_perfectly_separable():
    rng = np.random.default_rng(0)
    n = 1000
    ages = rng.integers(18, 80, n)
    sex = rng.choice(["F", "M"], n)
    original, release = tables(
        {"age": ages, "sex": sex, "city": rng.choice(["a", "b"], n)},
        {"age": [f"{a // 10 * 10}-{a // 10 * 10 + 9}" for a in ages], "sex": sex, "city": ["*"] * n},
    )
    labels = run_measure("propensity", original, release, params={"generalized": "labels"}, group="utility")
    drawn = run_measure("propensity", original, release, params={"seed": 1}, group="utility")
    assert labels.loss == pytest.approx(1.0, abs=1e-3)
    assert drawn.loss < 0.05
    assert drawn.drawn_cells == {"age": n, "sex": 0, "city": n}
