"""Model-based data shuffling (Muralidhar & Sarathy 2006; sdcMicro's shuffle).

* Hand-computed: the reverse mapping (ties by record order, as R's ``order(rank(·))``), the ``mlm``
  release of a small file, the indicator columns of a categorical predictor, the ``ds`` model's
  coefficient ``2·sin(π·r_s/6)`` and conditional variance for one attribute and one predictor.
* Properties under hypothesis: every released column is a permutation of the original one and ranks as
  the perturbed values do.
* What the method promises, on large samples: the rank correlations with the predictors are about the
  original ones; when the predictors say nothing about an attribute, its release is a random
  permutation (a record's own value is found in its own row about once in n).
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import spearmanr

from sdckit.anonymize import METHODS
from sdckit.anonymize.shuffle import (
    ShuffleFigures,
    average_ranks,
    design_matrix,
    ds_correlations,
    perturbed_values,
    reverse_map,
    shuffle,
)
from sdckit.errors import ConfigError, InputError
from sdckit.table import Attribute, Kind, Role, Schema, Table


def frame_table(columns: dict, kinds: dict[str, Kind]) -> Table:
    schema = Schema(tuple(Attribute(name, Role.QUASI_IDENTIFIER, kinds[name]) for name in columns))
    return Table(pl.DataFrame(columns), schema)


def test_reverse_map_by_hand():
    # perturbed order: record 1 (-1), 3 (0.1), 0 (0.5), 2 (2) get 10, 20, 30, 40
    assert reverse_map(np.array([10.0, 30, 20, 40]), np.array([0.5, -1, 2, 0.1])).tolist() == [30, 10, 40, 20]
    # ties: records 0 and 1 tie at 1; R's order(rank(y)) = 3, 1, 2
    assert reverse_map(np.array([5.0, 6, 7]), np.array([1.0, 1, 0])).tolist() == [6, 7, 5]


def test_mlm_release_by_hand():
    # x1 rises with s (positive slope): released in the order of s; x2 falls: in reverse order
    s = [1.0, 2, 3, 4, 5, 6]
    table = frame_table(
        {"x1": [3.0, 1, 4, 1, 5, 9], "x2": [9.0, 7, 8, 3, 2, 1], "s": s},
        {"x1": Kind.NUMERIC, "x2": Kind.NUMERIC, "s": Kind.NUMERIC},
    )
    release = shuffle(table, ["x1", "x2"], predictors=["s"], model="mlm")
    assert release.table.column("x1").to_list() == [1, 1, 3, 4, 5, 9]
    assert release.table.column("x2").to_list() == [9, 8, 7, 3, 2, 1]
    assert release.table.column("s").to_list() == s
    figures = release.figures_as(ShuffleFigures)
    assert figures.predictor_columns == ["s"]
    assert figures.attributes["x2"]["unchanged_values"] == 4  # 9, 3, 2, 1 stay


def test_a_categorical_predictor_becomes_indicators_but_the_first_category():
    table = frame_table(
        {"x": [1.0, 2, 3, 4], "g": ["b", "a", "c", "b"], "n": [0.5, 1, 1, 2]},
        {"x": Kind.NUMERIC, "g": Kind.CATEGORICAL, "n": Kind.NUMERIC},
    )
    matrix, labels = design_matrix(table, ["g", "n"])
    assert labels == ["g=b", "g=c", "n"]
    assert matrix.tolist() == [[1, 0, 0.5], [0, 0, 1], [0, 1, 1], [1, 0, 2]]


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 60), st.integers(0, 2**31))
def test_average_ranks_are_scipys_including_indicator_columns(n, seed):
    from scipy.stats import rankdata

    rng = np.random.default_rng(seed)
    values = np.column_stack(
        [rng.integers(0, 2, n), rng.integers(0, 4, n), rng.normal(size=n), np.ones(n), np.zeros(n)]
    ).astype(float)
    assert average_ranks(values) == pytest.approx(rankdata(values, axis=0))


def test_the_ds_model_for_one_attribute_and_one_predictor():
    # Spearman r = 1 − 6·Σd²/(n(n² − 1)) = 1 − 6·2/60 = 0.8, so P = 2·sin(0.8π/6) = 0.813473
    x, s = np.array([[1.0], [2], [3], [4]]), np.array([[1.0], [3], [2], [4]])
    coefficients, sigma = ds_correlations(x, s, "spearman")
    p = 2 * math.sin(math.pi * 0.8 / 6)
    assert p == pytest.approx(0.813473, abs=1e-6)
    assert coefficients[0, 0] == pytest.approx(p)
    assert sigma[0, 0] == pytest.approx(1 - p**2)  # 0.338262
    # Pearson's r of the raw values is also 0.8 here
    assert ds_correlations(x, s, "pearson")[0][0, 0] == pytest.approx(p)


def people(n: int, seed: int, dependent: bool = True) -> Table:
    rng = np.random.default_rng(seed)
    s = rng.standard_normal(n)
    g = rng.choice(["north", "south", "east"], n)
    shift = np.where(g == "south", 1.0, 0.0)
    x1 = (s + shift if dependent else 0) + rng.standard_normal(n)
    x2 = np.exp(0.5 * x1 + rng.standard_normal(n))
    return frame_table(
        {"x1": x1, "x2": x2, "s": s, "g": g},
        {"x1": Kind.NUMERIC, "x2": Kind.NUMERIC, "s": Kind.NUMERIC, "g": Kind.CATEGORICAL},
    )


def test_ds_keeps_rank_correlations_with_the_predictors():
    table = people(20_000, 1)
    s = table.column("s").to_numpy()

    def rho(a, b) -> float:
        return float(spearmanr(a, b)[0])

    release = shuffle(table, ["x1", "x2"], predictors=["s"], seed=5)
    for name in ("x1", "x2"):
        original, released = table.column(name).to_numpy(), release.table.column(name).to_numpy()
        assert rho(released, s) == pytest.approx(rho(original, s), abs=0.02)
    x1, x2 = (release.table.column(name).to_numpy() for name in ("x1", "x2"))
    assert rho(x1, x2) == pytest.approx(
        rho(table.column("x1").to_numpy(), table.column("x2").to_numpy()), abs=0.02
    )
    # A category's indicator takes part through its normal scores, as in sdcMicro: its rank
    # correlation keeps its sign and is attenuated (0.31 becomes about 0.23 here).
    south = (table.column("g") == "south").to_numpy().astype(float)
    release = shuffle(table, ["x1"], predictors=["s", "g"], seed=5)
    original = rho(table.column("x1").to_numpy(), south)
    assert 0.5 * original < rho(release.table.column("x1").to_numpy(), south) < original


def test_without_information_in_the_predictors_the_release_is_a_random_permutation():
    table = people(10_000, 2, dependent=False)
    release = shuffle(table, ["x1"], predictors=["s", "g"], seed=3)
    original, released = table.column("x1").to_numpy(), release.table.column("x1").to_numpy()
    # an attacker who knows a record's value finds it in that record's row about once in n
    assert np.count_nonzero(original == released) <= 5
    assert abs(spearmanr(original, released)[0]) < 0.05


@settings(max_examples=30, deadline=None)
@given(st.integers(5, 200), st.sampled_from(["ds", "mlm"]), st.integers(0, 2**31))
def test_each_released_column_is_a_permutation_ranked_as_the_perturbed_values(n, model, seed):
    rng = np.random.default_rng(seed)
    s = rng.standard_normal((n, 2))
    x = np.column_stack([s[:, 0] + rng.standard_normal(n), rng.lognormal(size=n)])
    table = frame_table(
        {"x1": x[:, 0], "x2": x[:, 1], "s1": s[:, 0], "s2": s[:, 1]},
        {"x1": Kind.NUMERIC, "x2": Kind.NUMERIC, "s1": Kind.NUMERIC, "s2": Kind.NUMERIC},
    )
    options = {"seed": seed % 1000} if model == "ds" else {}
    release = shuffle(table, ["x1", "x2"], predictors=["s1", "s2"], model=model, **options)
    ystar = perturbed_values(
        x, s, model, "spearman", np.random.default_rng(seed % 1000 if model == "ds" else 0)
    )
    for j, name in enumerate(("x1", "x2")):
        out = release.table.column(name).to_numpy()
        assert sorted(out.tolist()) == sorted(x[:, j].tolist())
        if len(np.unique(ystar[:, j])) == n:
            assert spearmanr(out, ystar[:, j])[0] == pytest.approx(1.0)


def test_the_seed_and_the_options_of_ds_only():
    table = people(300, 4)
    first = shuffle(table, ["x1", "x2"], predictors=["s", "g"], seed=1)
    assert shuffle(table, ["x1", "x2"], predictors=["s", "g"], seed=1).table.data.equals(first.table.data)
    assert not shuffle(table, ["x1", "x2"], predictors=["s", "g"], seed=2).table.data.equals(first.table.data)
    assert METHODS.get("shuffle").summary(first)["model"] == "ds"
    with pytest.raises(ConfigError, match="seed only with model ds"):
        shuffle(table, ["x1"], predictors=["s"], model="mlm", seed=1)
    with pytest.raises(ConfigError, match="correlation only with model ds"):
        shuffle(table, ["x1"], predictors=["s"], model="mlm", correlation="pearson")


def test_bad_input_is_refused():
    table = people(50, 5)
    with pytest.raises(ConfigError, match="predictors: 's' is also shuffled"):
        shuffle(table, ["x1", "s"], predictors=["s"])
    with pytest.raises(ConfigError, match="not numeric"):
        shuffle(table, ["g"], predictors=["s"])
    with_missing = Table(
        table.data.with_columns(pl.when(pl.int_range(50) == 3).then(None).otherwise(pl.col("s")).alias("s")),
        table.schema,
    )
    with pytest.raises(InputError, match="predictor 's' has 1 missing values"):
        shuffle(with_missing, ["x1"], predictors=["s"])
    constant = Table(table.data.with_columns(pl.lit(1.0).alias("s")), table.schema)
    with pytest.raises(InputError, match="constant"):
        shuffle(constant, ["x1"], predictors=["s"])
