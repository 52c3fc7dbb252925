"""Random orthogonal matrix masking (sdcMicro's addNoise "ROMM"; Ting, Fienberg & Trottini 2008).

* The matrix of a block against an independent construction (numpy's QR of ``I + p·M`` with its signs
  fixed, the Householder reflection written out): orthogonal, keeps ones, the identity for ``p = 0``.
* The promise under hypothesis: the released sample means and covariance matrix equal the original
  ones for any size, block and ``p``.
* One block of every record is ``T·x`` with ``T`` drawn as sdcMicro draws one matrix.
* sdcMicro's testthat expectations (every column changes; here a larger ``p`` changes more).
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.anonymize import METHODS
from sdckit.anonymize.romm import RommFigures, block_starts, romm, romm_mask, romm_matrix
from sdckit.errors import ConfigError, InputError
from sdckit.table import Attribute, Kind, Role, Schema, Table


def numbers(columns: dict[str, np.ndarray]) -> Table:
    schema = Schema(tuple(Attribute(name, Role.QUASI_IDENTIFIER, Kind.NUMERIC) for name in columns))
    return Table(pl.DataFrame(columns), schema)


def oracle_matrix(b: int, p: float, normals: np.ndarray) -> np.ndarray:
    """``W·diag(1, Q)·W`` from numpy: ``Q`` the QR factor of ``I + p·M`` with a positive diagonal of
    ``R`` (what Gram-Schmidt gives), ``W`` the reflection exchanging ``e₁`` and ``1/sqrt(b)``."""
    m = b - 1
    q, r = np.linalg.qr(np.eye(m) + p * normals.reshape(m, m))
    q = q * np.sign(np.diag(r))
    v = np.full(b, 1 / np.sqrt(b))
    v[0] -= 1
    w = np.eye(b) - 2 * np.outer(v, v) / (v @ v)
    inner = np.eye(b)
    inner[1:, 1:] = q
    return w @ inner @ w


@pytest.mark.parametrize(("b", "p"), [(2, 0.5), (5, 0.001), (7, 0.3), (30, 2.0)])
def test_the_block_matrix_is_orthogonal_keeps_ones_and_is_the_oracles(b, p):
    normals = np.random.default_rng(b).standard_normal((b - 1) ** 2)
    t = romm_matrix(b, p, normals)
    assert t.T @ t == pytest.approx(np.eye(b), abs=1e-12)
    assert t @ np.ones(b) == pytest.approx(np.ones(b), abs=1e-12)
    assert t == pytest.approx(oracle_matrix(b, p, normals), abs=1e-10)


def test_p_zero_is_the_identity_and_a_small_p_is_close_to_it():
    normals = np.random.default_rng(0).standard_normal(81)
    assert romm_matrix(10, 0.0, normals) == pytest.approx(np.eye(10), abs=1e-15)
    assert np.abs(romm_matrix(10, 0.001, normals) - np.eye(10)).max() < 0.01
    assert np.abs(romm_matrix(10, 0.5, normals) - np.eye(10)).max() > 0.1


def test_block_sizes():
    assert np.diff(block_starts(45, 20)).tolist() == [23, 22]
    assert np.diff(block_starts(10, 20)).tolist() == [10]
    assert np.diff(block_starts(60, 20)).tolist() == [20, 20, 20]
    assert np.diff(block_starts(79, 20)).tolist() == [27, 26, 26]  # 79 // 20 = 3 blocks


def test_one_block_of_every_record_is_one_matrix_of_them():
    x = np.random.default_rng(1).uniform(1, 100, size=(6, 3))
    out, blocks = romm_mask(x, 0.4, 100, np.random.default_rng(7))
    rng = np.random.default_rng(7)
    order = rng.permutation(6)
    t = oracle_matrix(6, 0.4, rng.standard_normal(25))
    expected = np.empty_like(x)
    expected[order] = t @ x[order]
    assert blocks == 1
    assert out == pytest.approx(expected, abs=1e-10)


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 120), st.integers(1, 4), st.integers(2, 50), st.floats(0.0, 3.0), st.integers(0, 2**31))
def test_means_and_covariances_are_kept_exactly(n, d, block, p, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d)) * rng.uniform(0.1, 100, size=d) + rng.uniform(-50, 50, size=d)
    out, _ = romm_mask(x, p, block, np.random.default_rng(seed + 1))
    scale = np.abs(x).max() + 1
    assert out.mean(axis=0) == pytest.approx(x.mean(axis=0), abs=1e-10 * scale)
    if n > 1:
        cov_x, cov_out = np.cov(x, rowvar=False), np.cov(out, rowvar=False)
        assert cov_out == pytest.approx(cov_x, abs=1e-9 * scale**2)
    # within every block too: the scatter of each block around its mean is kept
    assert (out**2).sum() == pytest.approx((x**2).sum(), rel=1e-10)


def test_sdcmicro_expectations_every_column_changes_and_a_larger_p_changes_more():
    x = np.random.default_rng(3).uniform(1, 100, size=(5, 3))
    table = numbers({f"V{j + 1}": x[:, j] for j in range(3)})
    names = ["V1", "V2", "V3"]

    def change(p: float) -> np.ndarray:
        release = romm(table, p=p, block=5, seed=3)
        return np.abs(np.column_stack([release.table.column(n).to_numpy() for n in names]) - x)

    assert np.all(change(0.001).mean(axis=0) > 0)
    assert change(0.5).mean() > change(0.001).mean()


def test_the_release_its_figures_and_the_seed():
    rng = np.random.default_rng(4)
    table = numbers({"a": rng.normal(size=1000), "b": rng.lognormal(size=1000)})
    release = romm(table, p=0.2, block=30, seed=2)
    figures = release.figures_as(RommFigures)
    assert (figures.blocks, figures.smallest_block, figures.largest_block) == (33, 30, 31)
    for name in ("a", "b"):
        item = figures.attributes[name]
        assert item["mean_released"] == pytest.approx(item["mean_original"], abs=1e-6)
        assert item["sd_released"] == pytest.approx(item["sd_original"], abs=1e-6)
    assert romm(table, p=0.2, block=30, seed=2).table.data.equals(release.table.data)
    assert not romm(table, p=0.2, block=30, seed=3).table.data.equals(release.table.data)
    summary = METHODS.get("romm").summary(release)
    assert summary["blocks"] == 33 and summary["p"] == 0.2


def test_missing_values_and_bad_parameters_are_refused():
    table = numbers({"a": np.array([1.0, None, 3.0, 4.0], dtype=float)})
    table = Table(table.data.with_columns(pl.col("a").fill_nan(None)), table.schema)
    with pytest.raises(InputError, match="1 records have a missing value in a"):
        romm(table)
    with pytest.raises(ConfigError, match="block"):
        romm(table, block=1)
    with pytest.raises(ConfigError, match="p"):
        romm(table, p=-0.1)
