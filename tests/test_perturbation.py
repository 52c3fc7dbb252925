"""Perturbative masking: noise, the ε-DP release, rank swapping, data swapping and PRAM.

* SPEC worked examples: the Cholesky noise of §9.3, the rank-swap trace of §9.1, the PRAM R matrix of
  §9.2.
* Oracles: the rank-swap partner search against a plain-Python transcription of SPEC §9.1 (hypothesis),
  the invariance πᵀR = πᵀ for random π, d and α, the exact moments of correlated-exact noise.
* Statistics on large samples: the noise's variance and covariance, the DP noise scale range/ε, the
  expected PRAM marginal over many seeds (and that a non-invariant matrix moves it).
* The command line: releases and summaries checked for values, bad input (exit 2, one message,
  nothing written), the same seed giving the same files.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from sdckit.anonymize.perturbation import (
    DPNoiseFigures,
    NoiseFigures,
    RankSwapFigures,
    SwapFigures,
    add_noise,
    correlated_noise,
    data_swap,
    dp_noise,
    rank_swap,
    rank_swap_partners,
    rank_swap_positions,
    swap_pairs,
)
from sdckit.anonymize.pram import (
    PramFigures,
    apply_matrices,
    base_matrix,
    invariant_matrix,
    matrices_frame,
    pram,
    read_matrix,
)
from sdckit.cli import app
from sdckit.errors import ConfigError
from sdckit.table import Attribute, Kind, Role, Schema, Table

runner = CliRunner()


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def numeric_table(n: int = 2000, seed: int = 0, missing: bool = False) -> Table:
    rng = np.random.default_rng(seed)
    base = rng.multivariate_normal([10.0, -5.0, 100.0], [[4, 2, 1], [2, 3, -1], [1, -1, 9]], size=n)
    frame = pl.DataFrame(
        {
            "x": base[:, 0],
            "y": base[:, 1],
            "z": base[:, 2],
            "c": rng.choice(["a", "b", "c", "d"], n, p=[0.5, 0.3, 0.15, 0.05]),
            "s": rng.choice(["p", "q", "r"], n),
        }
    )
    if missing:
        frame = frame.with_columns(
            pl.when(pl.arange(0, n) % 17 == 0).then(None).otherwise(pl.col("x")).alias("x")
        )
    schema = Schema(
        (
            Attribute("x", Role.QUASI_IDENTIFIER, Kind.NUMERIC),
            Attribute("y", Role.QUASI_IDENTIFIER, Kind.NUMERIC),
            Attribute("z", Role.INSENSITIVE, Kind.NUMERIC),
            Attribute("c", Role.QUASI_IDENTIFIER, Kind.CATEGORICAL),
            Attribute("s", Role.SENSITIVE, Kind.CATEGORICAL),
        )
    )
    return Table(frame, schema)


# Noise -------------------------------------------------------------------------------------------


class _FixedNormal:
    """A generator whose standard normal draws are given."""

    def __init__(self, draws):
        self.draws = np.asarray(draws, dtype=float)

    def standard_normal(self, shape):
        assert self.draws.shape == tuple(shape)
        return self.draws


def test_spec_cholesky_noise_example():
    # SPEC §9.3: Σ=[[4,2],[2,3]], α=0.25 ⇒ L=[[1,0],[0.5,0.707107]]; g=(1,2) ⇒ ε=(1, 1.914214).
    sigma = np.array([[4.0, 2.0], [2.0, 3.0]])
    noise = correlated_noise(0.25 * sigma, 1, _FixedNormal([[1.0, 2.0]]))
    assert noise[0] == pytest.approx([1.0, 0.5 + 2 * math.sqrt(0.5)], abs=1e-12)
    assert noise[0][1] == pytest.approx(1.914214, abs=1e-6)


def test_additive_noise_has_sdcmicro_scale_per_attribute():
    table = numeric_table(200_000, seed=1)
    release = add_noise(table, ["x", "z"], noise="additive", amount=20, seed=3)
    for name in ("x", "z"):
        original = table.column(name).to_numpy()
        noise = release.table.column(name).to_numpy() - original
        # N(0, (amount/100 · sd)²): standard error of a standard deviation ≈ sd/sqrt(2n).
        assert np.std(noise) == pytest.approx(0.2 * np.std(original, ddof=1), rel=0.01)
        assert abs(noise.mean()) < 4 * 0.2 * np.std(original) / math.sqrt(len(noise))
    # y is not named: untouched
    assert release.table.column("y").to_list() == table.column("y").to_list()
    # the noise of x and z is independent
    noise_x = release.table.column("x").to_numpy() - table.column("x").to_numpy()
    noise_z = release.table.column("z").to_numpy() - table.column("z").to_numpy()
    assert abs(np.corrcoef(noise_x, noise_z)[0, 1]) < 0.01


def test_correlated_noise_keeps_means_and_correlations_within_sampling_error():
    table = numeric_table(200_000, seed=2)
    names = ["x", "y", "z"]
    release = add_noise(table, names, noise="correlated", amount=50, seed=5)
    x = table.data.select(names).to_numpy()
    z = release.table.data.select(names).to_numpy()
    sigma = np.cov(x, rowvar=False)
    noise = z - x
    # ε ~ N(0, α·Σ): its covariance is 0.5·Σ, the release's (1 + α)·Σ, means unchanged.
    assert np.cov(noise, rowvar=False) == pytest.approx(0.5 * sigma, abs=0.05)
    assert np.cov(z, rowvar=False) == pytest.approx(1.5 * sigma, abs=0.08)
    standard_error = np.sqrt(np.diag(0.5 * sigma) / len(x))
    assert np.all(np.abs(z.mean(axis=0) - x.mean(axis=0)) < 4 * standard_error)
    assert np.corrcoef(z, rowvar=False) == pytest.approx(np.corrcoef(x, rowvar=False), abs=0.01)


@pytest.mark.parametrize("seed", [0, 1, 7])
@pytest.mark.parametrize("amount", [5.0, 100.0])
def test_correlated_exact_noise_keeps_means_and_covariances_exactly(seed, amount):
    table = numeric_table(500, seed=seed)
    names = ["x", "y", "z"]
    release = add_noise(table, names, noise="correlated-exact", amount=amount, seed=seed)
    x = table.data.select(names).to_numpy()
    z = release.table.data.select(names).to_numpy()
    assert z.mean(axis=0) == pytest.approx(x.mean(axis=0), rel=1e-12, abs=1e-12)
    assert np.cov(z, rowvar=False) == pytest.approx(np.cov(x, rowvar=False), rel=1e-9, abs=1e-9)
    # and yet the values are perturbed, more with more noise
    assert np.abs(z - x).mean() > 0.01 * np.sqrt(amount / 100)


def test_correlated_exact_with_missing_values_is_exact_on_complete_records():
    table = numeric_table(600, seed=4, missing=True)
    names = ["x", "y"]
    release = add_noise(table, names, noise="correlated-exact", amount=30, seed=2)
    released_x = release.table.column("x")
    assert released_x.is_null().to_list() == table.column("x").is_null().to_list()
    complete = ~table.column("x").is_null().to_numpy()
    x = table.data.select(names).to_numpy()[complete]
    z = release.table.data.select(names).to_numpy()[complete]
    assert np.cov(z, rowvar=False) == pytest.approx(np.cov(x, rowvar=False), rel=1e-9)
    assert release.figures_as(NoiseFigures).complete_records == int(complete.sum())
    # the incomplete records' present values are perturbed too
    assert np.all(release.table.column("y").to_numpy()[~complete] != table.column("y").to_numpy()[~complete])


def test_noise_refuses_a_non_numeric_attribute_naming_it():
    table = numeric_table(50)
    with pytest.raises(ConfigError, match=r"attributes: noise needs numeric attributes; 'c' is not numeric"):
        add_noise(table, ["x", "c"])
    with pytest.raises(ConfigError, match="'w' is not a column"):
        add_noise(table, ["w"])


def test_noise_is_reproducible_by_seed():
    table = numeric_table(300)
    first = add_noise(table, ["x", "y"], noise="correlated", seed=11).table.data
    again = add_noise(table, ["x", "y"], noise="correlated", seed=11).table.data
    other = add_noise(table, ["x", "y"], noise="correlated", seed=12).table.data
    assert first.equals(again)
    assert not first.equals(other)


# ε-differential privacy ------------------------------------------------------------------------------


def test_dp_noise_scale_is_range_over_epsilon():
    n = 20_000
    rng = np.random.default_rng(3)
    frame = pl.DataFrame({"age": rng.uniform(0, 120, n), "income": rng.uniform(0, 1e5, n)})
    table = Table.from_frame(frame)
    release = dp_noise(table, 2.0, ["age:0:120", "income:0:1e5"], ["age", "income"])
    bounds = release.figures_as(DPNoiseFigures).bounds
    for name, width in (("age", 120.0), ("income", 1e5)):
        # ε split over 2 attributes: ε_j = 1, scale = width / 1.
        assert bounds[name]["epsilon"] == 1.0
        assert bounds[name]["scale"] == width
        noise = release.table.column(name).to_numpy() - frame[name].to_numpy()
        # Laplace(b): E|X| = b, sd |X| = b, so mean |noise| is b within 4 standard errors b/sqrt(n).
        assert abs(np.abs(noise).mean() - width) < 4 * width / math.sqrt(n)
        assert abs(np.median(noise)) < 0.05 * width
        assert bounds[name]["epsilon_certified"] == pytest.approx(1.0, rel=1e-9)
    assert release.figures_as(DPNoiseFigures).epsilon_total == 2.0


def test_dp_noise_draws_with_opendp_laplace(monkeypatch):
    import opendp.prelude as dp

    calls = []
    real = dp.m.make_laplace

    def spy(domain, metric, scale, *args, **kwargs):
        calls.append((str(domain), str(metric), scale))
        return real(domain, metric, scale, *args, **kwargs)

    monkeypatch.setattr(dp.m, "make_laplace", spy)
    table = Table.from_frame(pl.DataFrame({"a": [1.0, 2.0, 3.0], "b": [10.0, 20.0, 30.0]}))
    first = dp_noise(table, 0.5, ["a:0:4", "b:0:40"], ["a", "b"])
    assert [scale for *_, scale in calls] == [16.0, 160.0]  # range / (0.5 / 2)
    assert all(
        "VectorDomain(AtomDomain(T=f64" in domain and "L1Distance" in metric for domain, metric, _ in calls
    )
    again = dp_noise(table, 0.5, ["a:0:4", "b:0:40"], ["a", "b"])
    assert not first.table.data.equals(again.table.data)  # not seeded: fresh noise every run


def test_dp_noise_per_attribute_budget_and_clamping():
    frame = pl.DataFrame({"age": [500.0, -20.0, 50.0, None]})
    table = Table.from_frame(frame)
    release = dp_noise(table, 1e7, ["age:0:120"], ["age"], budget="per-attribute")
    released = release.table.column("age").to_list()
    # clamped to [0, 120] first; scale 120/1e7 is negligible
    assert released[0] == pytest.approx(120, abs=1e-3)
    assert released[1] == pytest.approx(0, abs=1e-3)
    assert released[2] == pytest.approx(50, abs=1e-3)
    assert released[3] is None
    assert release.figures_as(DPNoiseFigures).bounds["age"]["clamped_values"] == 2
    assert release.figures_as(DPNoiseFigures).bounds["age"]["missing_values"] == 1


@pytest.mark.parametrize(
    ("epsilon", "bounds", "attributes", "message"),
    [
        (0.0, ["x:0:1"], ["x"], r"^epsilon must be greater than 0, got 0\.0$"),
        (-1.0, ["x:0:1"], ["x"], r"^epsilon must be greater than 0, got -1\.0$"),
        (1.0, None, ["x", "y"], "none for x, y"),
        (1.0, ["x:-10:30"], ["x", "y"], "none for y"),
        (1.0, ["x:5:1"], ["x"], "lower < upper"),
        (1.0, ["x:0"], ["x"], "attribute:lower:upper"),
        (1.0, ["x:0:1", "w:0:1"], ["x"], "'w' is not an attribute of this release"),
        (1.0, ["c:0:1"], ["c"], "'c' is not numeric"),
    ],
)
def test_dp_noise_bad_input(epsilon, bounds, attributes, message):
    with pytest.raises(ConfigError, match=message):
        dp_noise(numeric_table(20), epsilon, bounds, attributes)


# Rank swapping -----------------------------------------------------------------------------------


def test_spec_rank_swap_trace():
    # SPEC §9.1: n=10, p=20 ⇒ max_dist=2; uniforms 0.7, 0.1, 0.99, 0.2, 0.5 (consumed in order).
    uniforms = np.array([0.7, 0.1, 0.99, 0.2, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0])
    swap = rank_swap_positions(10, 20, uniforms)
    assert swap.tolist() == [2, 3, 0, 1, 6, 7, 4, 5, 9, 8]
    sorted_values = np.arange(10, 101, 10)
    assert sorted_values[swap].tolist() == [30, 40, 10, 20, 70, 80, 50, 60, 100, 90]


def _spec_rank_swap(n: int, p: float, uniforms: list[float]) -> list[int]:
    """SPEC §9.1 transcribed line by line in plain Python (the oracle)."""
    max_dist = math.floor(n * p / 100)
    swap = [-1] * n
    used = 0
    for i in range(n):
        if swap[i] != -1:
            continue
        k = i + 1 + math.floor(max_dist * uniforms[used])
        used += 1
        j = min(k, n - 1)
        while swap[j] >= 0 and j > i + 1:
            j -= 1
        if swap[j] >= 0:
            j = min(k, n - 1)
            while swap[j] >= 0 and j < n - 1 and j < i + max_dist:
                j += 1
        if swap[j] == -1 and j != i:
            swap[i], swap[j] = j, i
        else:
            swap[i] = i
    return swap


@settings(max_examples=200)
@given(
    n=st.integers(1, 80),
    p=st.floats(0.5, 100),
    uniforms=st.lists(st.floats(0, 1, exclude_max=True), min_size=80, max_size=80),
)
def test_rank_swap_partner_search_matches_the_spec_and_stays_in_its_window(n, p, uniforms):
    swap = rank_swap_positions(n, p, np.array(uniforms))
    assert swap.tolist() == _spec_rank_swap(n, p, uniforms)
    window = max(1, math.floor(n * p / 100))
    assert np.all(np.abs(swap - np.arange(n)) <= window)
    assert np.all(swap[swap] == np.arange(n))  # pairs: an involution


@settings(max_examples=100)
@given(
    values=st.lists(st.integers(0, 20) | st.none(), min_size=2, max_size=60),
    p=st.floats(1, 100),
    seed=st.integers(0, 2**32),
)
def test_rank_swap_keeps_each_multiset_and_every_swap_inside_its_window(values, p, seed):
    column = pl.Series("v", values, dtype=pl.Int64)
    table = Table.from_frame(pl.DataFrame({"v": column}))
    release = rank_swap(table, ["v"], p=p, seed=seed)
    released = release.table.column("v")
    assert released.dtype == pl.Int64
    # missing values stay where they are; the present values keep their multiset
    assert released.is_null().to_list() == column.is_null().to_list()
    assert sorted(released.drop_nulls().to_list()) == sorted(column.drop_nulls().to_list())
    # every record receives the value of a record at most max(1, floor(n·p/100)) ranks away
    numbers = np.array([np.nan if v is None else v for v in values], dtype=float)
    partners = rank_swap_partners(numbers, p, np.random.default_rng(seed))
    present = np.flatnonzero(~np.isnan(numbers))
    rank = np.empty(len(numbers), dtype=np.int64)
    rank[present[np.argsort(numbers[present], kind="stable")]] = np.arange(len(present))
    window = max(1, math.floor(len(present) * p / 100))
    assert np.all(np.abs(rank[present] - rank[partners[present]]) <= window)
    assert np.all(partners[np.isnan(numbers)] == np.flatnonzero(np.isnan(numbers)))
    assert released.to_list() == column.gather(partners).to_list()


def test_rank_swap_of_a_table_and_p_zero():
    table = numeric_table(1000, seed=8)
    release = rank_swap(table, ["x", "y"], p=5, seed=1)
    for name in ("x", "y"):
        assert sorted(release.table.column(name).to_list()) == sorted(table.column(name).to_list())
        assert release.figures_as(RankSwapFigures).attributes[name]["swapped_records"] > 900
    assert release.figures_as(RankSwapFigures).max_rank_distance == 50
    # an independent column per attribute: x and y are not swapped with the same partners
    moved_x = release.table.column("x").to_numpy() != table.column("x").to_numpy()
    assert moved_x.sum() > 900
    unchanged = rank_swap(table, ["x"], p=0, seed=1)
    assert unchanged.table.column("x").to_list() == table.column("x").to_list()
    with pytest.raises(
        ConfigError, match="rank-swap needs numeric or ordinal attributes; 'c' is categorical"
    ):
        rank_swap(table, ["c"])


def test_rank_swap_ranks_an_ordinal_text_column_by_its_sorted_values():
    grades = ["g1", "g2", "g3", "g4", "g5", "g6"] * 5
    table = Table(pl.DataFrame({"grade": grades}), Schema((Attribute("grade", kind=Kind.ORDINAL),)))
    release = rank_swap(table, ["grade"], p=10, seed=3)
    out = release.table.column("grade").to_list()
    assert sorted(out) == sorted(grades)
    # window 3 ranks of 30: a g1 (ranks 0-4) can only become g1 or g2
    assert {value for value, before in zip(out, grades, strict=True) if before == "g1"} <= {"g1", "g2"}


# Data swapping -----------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
def test_swap_keeps_the_frequencies_within_every_stratum_exactly(seed):
    table = numeric_table(3000, seed=seed)
    release = data_swap(table, ["c"], strata=["s"], rate=0.3, seed=seed)
    before = table.data.group_by("s", "c").len().sort("s", "c")
    after = release.table.data.group_by("s", "c").len().sort("s", "c")
    assert before.equals(after)
    # only c changed, and only for paired records of one stratum
    assert release.table.data.drop("c").equals(table.data.drop("c"))
    figures = release.figures_as(SwapFigures)
    assert figures.swapped_records == 2 * figures.pairs
    assert abs(figures.swap_rate_achieved - 0.3) < 0.03
    assert 0 < figures.changed_records <= figures.swapped_records


@settings(max_examples=100)
@given(
    keys=st.lists(st.integers(0, 4), min_size=1, max_size=80),
    rate=st.floats(0.01, 1),
    seed=st.integers(0, 2**32),
)
def test_swap_pairs_are_disjoint_pairs_inside_strata(keys, rate, seed):
    keys = np.array(keys, dtype=np.int64)
    groups = int(keys.max()) + 1
    partners = swap_pairs(keys, groups, rate, np.random.default_rng(seed))
    assert np.all(partners[partners] == np.arange(len(keys)))  # an involution: disjoint pairs
    assert np.all(keys[partners] == keys)  # inside a stratum
    sizes = np.bincount(keys, minlength=groups)
    swapped = np.bincount(keys[partners != np.arange(len(keys))], minlength=groups)
    # m_s pairs with m_s = floor(rate·n_s/2) or one more, at most n_s // 2
    low = np.minimum(np.floor(rate * sizes / 2), sizes // 2)
    assert np.all((swapped == 2 * low) | (swapped == 2 * np.minimum(low + 1, sizes // 2)))


def test_swap_swaps_several_attributes_together_and_refuses_numbers():
    table = numeric_table(800, seed=3)
    release = data_swap(table, ["c", "s"], rate=0.5, seed=4)
    before = table.data.group_by("c", "s").len().sort("c", "s")
    assert before.equals(release.table.data.group_by("c", "s").len().sort("c", "s"))
    with pytest.raises(ConfigError, match="'x' is numeric"):
        data_swap(table, ["x"])
    with pytest.raises(ConfigError, match="'c' is also swapped"):
        data_swap(table, ["c"], strata=["c"])


# PRAM --------------------------------------------------------------------------------------------


def test_spec_pram_invariant_matrix_example():
    # SPEC §9.2: π=(0.6,0.4), P=[[.8,.2],[.2,.8]] ⇒ R=[[0.740260,0.259740],[0.389610,0.610390]], R11=57/77.
    pi = np.array([0.6, 0.4])
    base = base_matrix(np.array([0.8, 0.8]))
    assert base == pytest.approx(np.array([[0.8, 0.2], [0.2, 0.8]]), abs=1e-15)
    r = invariant_matrix(pi, base, alpha=1.0)
    assert r == pytest.approx(np.array([[0.740260, 0.259740], [0.389610, 0.610390]]), abs=1e-6)
    assert r[0, 0] == pytest.approx(57 / 77, abs=1e-15)
    assert pi @ r == pytest.approx(pi, abs=1e-15)
    r_half = invariant_matrix(pi, base, alpha=0.5)
    assert r_half == pytest.approx(np.array([[0.870130, 0.129870], [0.194805, 0.805195]]), abs=1e-6)
    # counts give the same matrix as proportions
    assert invariant_matrix(np.array([60, 40]), base, alpha=1.0) == pytest.approx(r, abs=1e-15)


@settings(max_examples=200)
@given(
    counts=st.lists(st.integers(0, 1000), min_size=1, max_size=12).filter(lambda c: sum(c) > 0),
    pd=st.floats(0, 1),
    alpha=st.floats(0, 1),
    seed=st.integers(0, 2**32),
)
def test_the_invariant_matrix_keeps_pi_exactly(counts, pd, alpha, seed):
    pi = np.array(counts, dtype=float) / sum(counts)
    diagonal = np.random.default_rng(seed).uniform(pd, 1, len(pi))
    r = invariant_matrix(pi, base_matrix(diagonal), alpha)
    assert np.all(r >= -1e-15)
    assert r.sum(axis=1) == pytest.approx(np.ones(len(pi)), abs=1e-12)
    assert pi @ r == pytest.approx(pi, abs=1e-12)


def test_pram_with_the_invariant_matrix_keeps_the_expected_marginal():
    table = numeric_table(400, seed=9)
    original = table.column("c").value_counts().sort("c")
    categories = original["c"].to_list()
    counts = np.array(
        [
            pram(table, ["c"], seed=seed, pd=0.5, alpha=1.0)
            .table.column("c")
            .value_counts()
            .sort("c")
            .join(original.select("c"), on="c", how="right")["count"]
            .fill_null(0)
            .to_numpy()
            for seed in range(300)
        ]
    )
    target = original["count"].to_numpy()
    standard_error = counts.std(axis=0, ddof=1) / math.sqrt(len(counts))
    assert np.all(np.abs(counts.mean(axis=0) - target) < 4 * standard_error), (categories, counts.mean(0))
    assert np.all(counts.std(axis=0) > 0)  # the values do move
    # A non-invariant matrix (the base matrix P itself) moves the expected marginal: the test has power.
    base = base_matrix(np.full(4, 0.5))
    path_counts = []
    for seed in range(300):
        rng = np.random.default_rng(seed)
        codes = np.searchsorted(np.array(categories), table.column("c").to_numpy()).astype(np.int32)
        new = apply_matrices(codes, np.zeros(len(codes), dtype=np.int64), base[None], rng.random(len(codes)))
        path_counts.append(np.bincount(new, minlength=4))
    moved = np.array(path_counts).mean(axis=0)
    assert np.abs(moved - target).max() > 20 * standard_error.max()


def test_stratified_pram_builds_an_invariant_matrix_per_stratum():
    table = numeric_table(1500, seed=5)
    release = pram(table, ["c"], strata=["s"], seed=3)
    blocks = release.figures_as(PramFigures).matrices["c"]
    assert [block["stratum"] for block in blocks] == [
        f"s={value}" for value in table.column("s").unique(maintain_order=True).to_list()
    ]
    for block in blocks:
        stratum = block["stratum"].removeprefix("s=")
        counts = (
            table.data.filter(pl.col("s") == stratum)
            .get_column("c")
            .value_counts()
            .sort("c")["count"]
            .to_numpy()
        )
        pi = counts / counts.sum()
        r = np.array(block["matrix"])
        assert block["categories"] == ["a", "b", "c", "d"]
        assert pi @ r == pytest.approx(pi, abs=1e-12)
        assert np.all(np.diag(r) >= 0.5)  # α·R + (1−α)·I with α = 0.5
    frame = matrices_frame(release)
    assert frame.height == 3 * 16
    assert frame.group_by("stratum", "from").agg(pl.col("probability").sum())["probability"].to_list() == (
        pytest.approx([1.0] * 12, abs=1e-12)
    )


def test_pram_keeps_missing_values_and_the_column_type():
    frame = pl.DataFrame({"code": [1, 2, None, 2, 3, 1, None, 3] * 20})
    table = Table(frame, Schema((Attribute("code", Role.QUASI_IDENTIFIER, Kind.CATEGORICAL),)))
    release = pram(table, seed=1)
    released = release.table.column("code")
    assert released.dtype == pl.Int64
    assert released.is_null().to_list() == frame["code"].is_null().to_list()
    assert set(released.drop_nulls().to_list()) <= {1, 2, 3}
    assert release.figures_as(PramFigures).matrices["code"][0]["categories"] == ["1", "2", "3"]


def _write_matrix(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_a_given_matrix_is_read_reordered_and_applied(tmp_path):
    path = _write_matrix(tmp_path / "m.csv", "from,b,a,c,d\na,0,1,0,0\nb,1,0,0,0\nc,0,0,1,0\nd,0,0,0.5,0.5\n")
    categories, matrix = read_matrix(path)
    assert categories == ["a", "b", "c", "d"]
    assert matrix.tolist() == [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0.5, 0.5]]
    table = numeric_table(500, seed=2)
    release = pram(table, ["c"], matrix=path, seed=4)
    before, after = table.column("c").to_list(), release.table.column("c").to_list()
    # a, b, c map to themselves; d becomes c or d
    for old, new in zip(before, after, strict=True):
        assert new == old or (old == "d" and new == "c")
    assert release.figures_as(PramFigures).changed_values["c"] == sum(
        old != new for old, new in zip(before, after, strict=True)
    )
    assert release.figures_as(PramFigures).matrices["c"] == [
        {"stratum": None, "categories": ["a", "b", "c", "d"], "matrix": matrix.tolist()}
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("from,a,b,c,d\na,0.5,0.5,0,0\nb,0,1,0,0\nc,0,0,1,0\nd,0,0,0.2,0.7\n", "row 'd' sums to 0.9"),
        ("from,a,b,c,d\na,1,1e-8,0,0\nb,0,1,0,0\nc,0,0,1,0\nd,0,0,0,1\n", "row 'a' sums to 1.00000001"),
        ("from,a,b,c\na,1,0,0\nb,0,1,0\nc,0,0,1\n", r"missing from the matrix: \['d'\]"),
        (
            "from,a,b,c,d,e\na,1,0,0,0,0\nb,0,1,0,0,0\nc,0,0,1,0,0\nd,0,0,0,1,0\ne,0,0,0,0,1\n",
            r"not in the data: \['e'\]",
        ),
        ("from,a,b,c,d\na,1,0,0,0\nb,0,1,0,0\nc,0,0,1,0\n", "square"),
        (
            "from,a,b,c,x\na,1,0,0,0\nb,0,1,0,0\nc,0,0,1,0\nd,0,0,0,1\n",
            r"rows only: \['d'\], columns only: \['x'\]",
        ),
        ("from,a,b,c,d\na,1,0,0,0\nb,0,1,0,0\nc,0,0,1,0\nd,0,0,0,one\n", "column 'd' must hold numbers"),
        ("from,a,b,c,d\na,1.5,-0.5,0,0\nb,0,1,0,0\nc,0,0,1,0\nd,0,0,0,1\n", "at least 0"),
    ],
)
def test_a_bad_matrix_is_a_clear_error(tmp_path, text, message):
    path = _write_matrix(tmp_path / "m.csv", text)
    with pytest.raises(ConfigError, match=message):
        pram(numeric_table(300, seed=2), ["c"], matrix=path)


def test_a_matrix_applies_to_one_attribute_without_strata(tmp_path):
    path = _write_matrix(tmp_path / "m.csv", "from,a,b\na,1,0\nb,0,1\n")
    with pytest.raises(ConfigError, match="applies to one attribute"):
        pram(numeric_table(30), ["c", "s"], matrix=path)
    with pytest.raises(
        ConfigError, match=r"^pram takes strata only without matrix \(they build the invariant"
    ):
        pram(numeric_table(30), ["c"], matrix=path, strata=["s"])
    with pytest.raises(ConfigError, match="pram changes categories; 'x' is numeric"):
        pram(numeric_table(30), ["x"])


# The command line -------------------------------------------------------------------------------------

CONFIG = """attributes:
  id:     {role: identifier}
  age:    {role: quasi-identifier, kind: numeric}
  income: {role: quasi-identifier, kind: numeric}
  region: {role: quasi-identifier, kind: categorical}
  sex:    {role: quasi-identifier, kind: categorical}
  health: {role: sensitive, kind: categorical}
"""


def write_inputs(directory: Path, n: int = 400) -> tuple[Path, Path]:
    rng = np.random.default_rng(0)
    frame = pl.DataFrame(
        {
            "id": [f"p{i}" for i in range(n)],
            "age": rng.integers(18, 90, n),
            "income": np.round(rng.lognormal(10, 0.5, n), 2),
            "region": rng.choice(["north", "south", "east", "west"], n),
            "sex": rng.choice(["F", "M"], n),
            "health": rng.choice(["good", "fair", "poor"], n, p=[0.6, 0.3, 0.1]),
        }
    )
    frame.write_csv(directory / "data.csv")
    (directory / "config.yaml").write_text(CONFIG)
    return directory / "data.csv", directory / "config.yaml"


def run(directory: Path, method: str, *options: str, output: str = "out.csv", summary: str = "s.json"):
    data, config = write_inputs(directory)
    extra = ["--summary", str(directory / summary)]
    arguments = ["anonymize", method, str(data), "-c", str(config), "-o", str(directory / output)]
    return runner.invoke(app, [*arguments, *extra, *options])


def test_cli_noise_correlated_exact(tmp_path):
    result = run(tmp_path, "noise", "--noise", "correlated-exact", "--amount", "40", "--seed", "2")
    assert result.exit_code == 0, result.output
    original = pl.read_csv(tmp_path / "data.csv")
    released = pl.read_csv(tmp_path / "out.csv")
    assert released.columns == ["age", "income", "region", "sex", "health"]  # identifier dropped
    x = original.select("age", "income").to_numpy().astype(float)
    z = released.select("age", "income").to_numpy()
    assert np.cov(z, rowvar=False) == pytest.approx(np.cov(x, rowvar=False), rel=1e-9)
    assert released["region"].to_list() == original["region"].to_list()
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["noise"] == "correlated-exact" and summary["amount"] == 40 and summary["seed"] == 2
    assert summary["attributes"]["age"]["mean_released"] == pytest.approx(float(x[:, 0].mean()), abs=1e-6)
    assert summary["recipe"]["seed"] == 2 and summary["recipe"]["replays_exactly"] is True


def test_cli_dp_noise_states_epsilon_and_bounds(tmp_path):
    result = run(tmp_path, "dp-noise", "--epsilon", "0.5", "--bounds", "age:0:120,income:0:1e6")
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["epsilon"] == 0.5 and summary["budget"] == "split" and summary["epsilon_total"] == 0.5
    assert summary["bounds"]["age"]["lower"] == 0 and summary["bounds"]["age"]["upper"] == 120
    assert summary["bounds"]["age"]["scale"] == pytest.approx(120 / 0.25)
    assert summary["bounds"]["income"]["scale"] == pytest.approx(1e6 / 0.25)
    assert summary["reproducible"] is False
    step = summary["recipe"]["steps"][0]
    assert step["epsilon"] == 0.5 and step["bounds"] == ["age:0:120", "income:0:1e6"]
    assert summary["recipe"]["replays_exactly"] is False
    assert "not reproducible" in " ".join(result.output.split())


@pytest.mark.parametrize(
    ("method", "options", "words"),
    [
        (
            "dp-noise",
            ["--epsilon", "0", "--bounds", "age:0:120,income:0:1e6"],
            ["--epsilon", "greater than 0"],
        ),
        (
            "dp-noise",
            ["--epsilon", "-1", "--bounds", "age:0:120,income:0:1e6"],
            ["--epsilon", "greater than 0"],
        ),
        ("dp-noise", ["--epsilon", "1"], ["bounds", "none for age, income"]),
        ("dp-noise", ["--epsilon", "1", "--bounds", "age:0:120"], ["bounds", "none for income"]),
        ("dp-noise", ["--epsilon", "1", "--bounds", "age:9:1"], ["--bounds", "lower < upper"]),
        ("noise", ["--attributes", "age,region"], ["noise needs numeric attributes", "'region'"]),
        ("rank-swap", ["--attributes", "sex"], ["rank-swap needs numeric or ordinal", "'sex'"]),
        ("rank-swap", ["-p", "101"], ["-p", "less than or equal to 100"]),
        ("swap", ["--attributes", "income"], ["swap exchanges categorical values", "'income'"]),
        ("swap", ["--rate", "0"], ["--rate", "greater than 0"]),
        ("pram", ["--attributes", "sex", "--pd", "1.5"], ["--pd", "less than or equal to 1"]),
        ("pram", ["--attributes", "nope"], ["'nope' is not a column"]),
    ],
)
def test_cli_bad_input_exits_2_and_writes_nothing(tmp_path, method, options, words):
    result = run(tmp_path, method, *options)
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    for word in words:
        assert word in text, (word, text)
    assert "Traceback" not in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.yaml", "data.csv"]  # nor the summary


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("from,F,M\nF,0.9,0.2\nM,0.1,0.9\n", ["row 'F' sums to 1.1"]),
        ("from,F,X\nF,1,0\nX,0,1\n", ["its categories must be those of 'sex'", "'M'", "'X'"]),
    ],
)
def test_cli_bad_pram_matrix_exits_2_and_writes_nothing(tmp_path, text, words):
    matrix = _write_matrix(tmp_path / "m.csv", text)
    result = run(
        tmp_path,
        "pram",
        "--attributes",
        "sex",
        "--matrix",
        str(matrix),
        "--matrix-output",
        str(tmp_path / "r.csv"),
    )
    assert result.exit_code == 2, result.output
    text_out = " ".join(result.output.split())
    for word in words:
        assert word in text_out, (word, text_out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.yaml", "data.csv", "m.csv"]


def test_cli_pram_writes_the_matrices_and_the_same_seed_gives_the_same_files(tmp_path):
    options = ["--attributes", "region,health", "--strata", "sex", "--seed", "9"]
    first = run(tmp_path, "pram", *options, "--matrix-output", str(tmp_path / "m1.csv"), output="r1.csv")
    assert first.exit_code == 0, first.output
    again = run(tmp_path, "pram", *options, "--matrix-output", str(tmp_path / "m2.csv"), output="r2.csv")
    assert again.exit_code == 0, again.output
    other = run(
        tmp_path,
        "pram",
        *options[:-1],
        "10",
        "--matrix-output",
        str(tmp_path / "m3.csv"),
        output="r3.csv",
        summary="s3.json",
    )
    assert other.exit_code == 0, other.output
    assert digest(tmp_path / "r1.csv") == digest(tmp_path / "r2.csv") != digest(tmp_path / "r3.csv")
    assert digest(tmp_path / "m1.csv") == digest(tmp_path / "m2.csv") != digest(tmp_path / "m3.csv")
    matrices = pl.read_csv(tmp_path / "m1.csv")
    assert matrices.columns == ["attribute", "stratum", "from", "to", "probability"]
    assert matrices.height == 2 * 4 * 4 + 2 * 3 * 3  # 2 strata, region 4 categories, health 3
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["invariant"] is True and summary["pd"] == 0.8 and summary["alpha"] == 0.5
    block = summary["matrices"]["health"][0]
    written = matrices.filter((pl.col("attribute") == "health") & (pl.col("stratum") == block["stratum"]))
    assert written["probability"].to_list() == pytest.approx(np.ravel(block["matrix"]).tolist(), abs=1e-15)
    assert summary["recipe"]["steps"][0]["pd"] == 0.8
    # the stratum column is untouched
    assert (
        pl.read_csv(tmp_path / "r1.csv")["sex"].to_list()
        == pl.read_csv(tmp_path / "data.csv")["sex"].to_list()
    )


def test_cli_pram_with_a_given_matrix_writes_it_back(tmp_path):
    matrix = _write_matrix(tmp_path / "m.csv", "from,F,M\nF,0.9,0.1\nM,0.25,0.75\n")
    result = run(
        tmp_path,
        "pram",
        "--attributes",
        "sex",
        "--matrix",
        str(matrix),
        "--matrix-output",
        str(tmp_path / "r.csv"),
    )
    assert result.exit_code == 0, result.output
    written = pl.read_csv(tmp_path / "r.csv")
    assert written["probability"].to_list() == [0.9, 0.1, 0.25, 0.75]
    assert written["stratum"].to_list() == [None] * 4


@pytest.mark.parametrize(
    ("method", "options"),
    [
        ("noise", ["--noise", "additive", "--seed", "4"]),
        ("rank-swap", ["-p", "10", "--seed", "4"]),
        ("swap", ["--strata", "region", "--rate", "0.2", "--seed", "4"]),
    ],
)
def test_cli_same_seed_same_file(tmp_path, method, options):
    assert run(tmp_path, method, *options, output="a.csv").exit_code == 0
    assert run(tmp_path, method, *options, output="b.csv").exit_code == 0
    changed = [*options[:-1], "5"]
    assert run(tmp_path, method, *changed, output="c.csv").exit_code == 0
    assert digest(tmp_path / "a.csv") == digest(tmp_path / "b.csv") != digest(tmp_path / "c.csv")


def test_cli_rank_swap_and_swap_keep_the_columns_multisets(tmp_path):
    assert run(tmp_path, "rank-swap", "-p", "5", output="r.csv").exit_code == 0
    original = pl.read_csv(tmp_path / "data.csv")
    released = pl.read_csv(tmp_path / "r.csv")
    for name in ("age", "income"):
        assert sorted(released[name].to_list()) == sorted(original[name].to_list())
        assert released[name].to_list() != original[name].to_list()
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["max_rank_distance"] == 20
    assert run(tmp_path, "swap", "--strata", "region,sex", "--rate", "0.4", output="w.csv").exit_code == 0
    swapped = pl.read_csv(tmp_path / "w.csv")
    assert (
        original.group_by("region", "sex", "health")
        .len()
        .sort("region", "sex", "health")
        .equals(swapped.group_by("region", "sex", "health").len().sort("region", "sex", "health"))
    )
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["n_strata"] == 8 and summary["changed_values"]["health"] > 0


# Real data (../shared/data/sdcmicro; skipped when absent) ----------------------------------------------


def test_casc_correlated_exact_noise_and_rank_swap(shared_data):
    casc = pl.read_csv(shared_data("sdcmicro", "CASCrefmicrodata.csv"))
    table = Table.from_frame(casc)
    names = casc.columns
    release = add_noise(table, names, noise="correlated-exact", amount=15, seed=1)
    x = casc.to_numpy().astype(float)
    z = release.table.data.select(names).to_numpy()
    assert z.mean(axis=0) == pytest.approx(x.mean(axis=0), rel=1e-12)
    assert np.cov(z, rowvar=False) == pytest.approx(np.cov(x, rowvar=False), rel=1e-9, abs=1e-6)
    swapped = rank_swap(table, names, p=10, seed=2)
    for name in names:
        assert sorted(swapped.table.column(name).to_list()) == sorted(casc[name].to_list())


def test_testdata_stratified_pram_and_swap(shared_data):
    data = pl.read_csv(shared_data("sdcmicro", "testdata.csv"))
    categorical = ("roof", "walls", "water", "urbrur", "sex")
    schema = Schema(
        tuple(
            Attribute(name, Role.QUASI_IDENTIFIER, Kind.CATEGORICAL if name in categorical else Kind.NUMERIC)
            for name in data.columns
        )
    )
    table = Table(data, schema)
    release = pram(table, ["roof", "walls", "water"], strata=["urbrur"], seed=3)
    for name in ("roof", "walls", "water"):
        for block in release.figures_as(PramFigures).matrices[name]:
            stratum = int(block["stratum"].removeprefix("urbrur="))
            values = data.filter(pl.col("urbrur") == stratum)[name].cast(pl.String)
            counts = np.array([(values == c).sum() for c in block["categories"]], dtype=float)
            assert counts @ np.array(block["matrix"]) == pytest.approx(counts, rel=1e-9)
    swapped = data_swap(table, ["roof", "walls"], strata=["urbrur", "sex"], rate=0.2, seed=1)
    keys = ["urbrur", "sex", "roof", "walls"]
    assert data.group_by(keys).len().sort(keys).equals(swapped.table.data.group_by(keys).len().sort(keys))
