"""The standardized pMSE of the propensity utility (Snoke, Raab, Nowok, Dibben & Slavković 2018):
the analytic null by hand, two samples of one distribution near the null, the permutation null and
the out-of-fold fit, and the classifier's holdout protocol for releases that are not row-aligned."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from sdckit.config import parse_config
from sdckit.context import Context
from sdckit.errors import ConfigError
from sdckit.measures import UTILITY_MEASURES, run_measure
from sdckit.utility.classifier import classifier_utility
from sdckit.utility.propensity import propensity_utility
from test_propensity import mixed, propensity


def test_analytic_null_by_hand():
    """One binary attribute, 10 + 10 records: k − 1 = 1 feature, c = ½, N = 20: the null mean is
    1 · ½ · ½ / 20 = 0.0125 and its sd √2 · ¼ / 20; U_p = 0.01 (test_propensity's example)."""
    original = pl.DataFrame({"x": ["1"] * 6 + ["0"] * 4})
    release = pl.DataFrame({"x": ["1"] * 4 + ["0"] * 6})
    result = propensity(original, release, model="main")
    assert result.features == 1 and result.null == "analytic"
    assert result.null_mean == pytest.approx(0.0125)
    assert result.null_sd == pytest.approx(math.sqrt(2) * 0.25 / 20)
    assert result.pmse_ratio == pytest.approx(0.01 / 0.0125, rel=1e-4)
    assert result.standardized_pmse == pytest.approx((0.01 - 0.0125) / (math.sqrt(2) * 0.25 / 20), rel=1e-3)
    summary = UTILITY_MEASURES.get("propensity").summary(result)
    assert summary["pmse_ratio"] == pytest.approx(0.8, rel=1e-4) and summary["folds"] == 0


def test_unequal_sizes_change_c_in_the_null():
    """20 original, 5 released records: c = 0.2, N = 25, one feature: mean 0.2 · 0.8 / 25."""
    original = pl.DataFrame({"x": ["a", "b"] * 10})
    release = pl.DataFrame({"x": ["a", "b", "a", "b", "a"]})
    result = propensity(original, release, model="main")
    assert result.c == pytest.approx(0.2)
    assert result.null_mean == pytest.approx(0.2 * 0.8 / 25)


@pytest.mark.parametrize("model", ["main", "interactions"])
def test_two_samples_of_one_distribution_score_near_the_null(model):
    original, release = mixed(3000, 1), mixed(2000, 2)
    result = propensity(original, release, model=model)
    assert 0.3 < result.pmse_ratio < 3.0  # χ²_{k−1} / (k − 1): within three standard deviations
    assert abs(result.standardized_pmse) < 3
    # a release that differs: the income of men shifted
    shifted = release.with_columns(
        pl.when(pl.col("sex") == "M").then(pl.col("income") + 300).otherwise(pl.col("income")).alias("income")
    )
    assert propensity(original, shifted, model=model).standardized_pmse > 20


def test_permutation_null_agrees_with_the_analytic_one_in_sample():
    original, release = mixed(1500, 3), mixed(1500, 4)
    names = original.columns
    analytic = propensity_utility(original, release, names, model="main")
    permuted = propensity_utility(original, release, names, model="main", permutations=40, seed=2)
    assert permuted.null == "permutation"
    assert permuted.utility == analytic.utility
    assert permuted.null_mean == pytest.approx(analytic.null_mean, rel=0.2)
    assert permuted.null_sd == pytest.approx(analytic.null_sd, rel=0.35)


def test_out_of_fold_scores_do_not_reward_memorizing():
    """An identical release: in sample every score is c exactly (pMSE 0); out of fold the pMSE is
    of the size of its permutation null."""
    original = mixed(1200, 5)
    result = propensity_utility(original, original, original.columns, model="interactions")
    assert result.utility == pytest.approx(0.0, abs=1e-12)
    folds = propensity_utility(
        original, original, original.columns, model="main", folds=5, permutations=10, seed=1
    )
    assert folds.folds == 5 and folds.null == "permutation"
    assert folds.utility > 0 and abs(folds.standardized_pmse) < 4


def test_bad_pmse_parameters():
    original = mixed(100, 1)
    with pytest.raises(ConfigError, match="folds.*permutations"):
        propensity(original, original, folds=5)
    with pytest.raises(ConfigError, match="folds"):
        propensity(original, original, folds=1, permutations=5)


# The classifier's holdout protocol -------------------------------------------------------------

CONFIG = {
    "attributes": {
        "x1": {"role": "quasi-identifier", "kind": "numeric"},
        "x2": {"role": "quasi-identifier", "kind": "categorical"},
        "y": {"role": "sensitive", "kind": "categorical"},
    }
}


def data(n: int, seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    x1 = rng.integers(0, 5, n)
    x2 = rng.choice(["a", "b", "c"], n)
    noise = rng.random(n) < 0.05
    return pl.DataFrame({"x1": x1, "x2": x2, "y": np.where(((x1 >= 3) | (x2 == "c")) ^ noise, "yes", "no")})


def test_holdout_protocol_trains_on_everything_and_tests_on_the_holdout(tmp_path):
    settings = parse_config(CONFIG)
    original, holdout = settings.read(data(1000, 1)), settings.read(data(300, 2))
    release = settings.read_release(data(1000, 1))  # the same records: the same classifier
    result = classifier_utility(original, release, "y", ["x1", "x2"], model="tree", seed=3, holdout=holdout)
    assert result.protocol == "holdout" and not result.aligned
    assert result.test_records == 300 and result.training_original == result.training_release == 1000
    assert result.accuracy_loss == 0.0
    truth = holdout.data["y"].to_numpy()
    rule = np.where(
        (holdout.data["x1"].to_numpy() >= 3) | (holdout.data["x2"].to_numpy() == "c"), "yes", "no"
    )
    assert result.accuracy_original == pytest.approx(float((rule == truth).mean()), abs=0.02)
    # through the measure: the file is read with the configuration
    path = tmp_path / "holdout.csv"
    data(300, 2).write_csv(path)
    fewer = settings.read_release(data(400, 7))
    measured = run_measure(
        "classifier",
        original,
        fewer,
        params={"model": "tree", "holdout": str(path)},
        group="utility",
        context=Context(config=settings),
    )
    assert (
        measured.protocol == "holdout" and measured.test_records == 300 and measured.training_release == 400
    )
    split = run_measure("classifier", original, fewer, params={"model": "tree"}, group="utility")
    assert split.protocol == "split" and split.test_records == 300
    summary = UTILITY_MEASURES.get("classifier").summary(measured)
    assert summary["protocol"] == "holdout"
