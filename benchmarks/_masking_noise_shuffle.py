"""Benchmark of sdcMicro's addNoise "restr", "outdect" and "ROMM" and of shuffle (issue 37, item 5).

    .venv/bin/python benchmarks/_masking_noise_shuffle.py [--records 100000,1000000] [--repeats 2]

At each size, three correlated numeric attributes (lognormal income, expend, savings) and two
predictors (a normal score and a region of 5 categories), generated. Each method is timed end to end
(``sdckit.anonymize``: a table in, a release out, figures included) against a straightforward numpy
implementation of the same computation measured in the same run (best of ``--repeats``, after one
untimed call that compiles the kernels):

* ``noise --noise restricted``: baseline ``rng.multivariate_normal`` noise, then ``c·z + (1 − c)·x̄``;
* ``noise --noise outliers``: baseline ``np.quantile`` per column, scikit-learn's ``MinCovDet`` on every
  record and the distances by ``np.linalg.inv`` (skipped above 200,000 records: minutes);
* ``romm``: baseline a Python loop over the blocks, ``np.linalg.qr`` of ``I + p·M`` and the explicit
  ``b × b`` matrix ``W·diag(1, Q)·W`` per block, from the same draws, so the releases must agree to
  rounding; the exact means and covariances are checked;
* ``shuffle`` (ds): baseline ``scipy.stats.spearmanr`` for the correlation matrix, ``rankdata`` and
  ``ndtri`` for the normal scores, ``rng.multivariate_normal`` and an ``argsort`` reverse mapping.

Peak RSS of the process after each size (the largest size dominates).
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np
import polars as pl

from _common import peak_rss_mib, print_header

#: Above this many records the outliers baseline (scikit-learn's MinCovDet on every record) is skipped.
OUTLIER_BASELINE_LIMIT = 200_000


def best_of(function, repeats: int):
    function()
    best, result = float("inf"), None
    for _ in range(repeats):
        started = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - started)
    return best, result


def generated(n: int, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    score = rng.standard_normal(n)
    region = rng.integers(0, 5, n)
    base = rng.multivariate_normal([0, 0, 0], [[1, 0.6, 0.3], [0.6, 1, 0.2], [0.3, 0.2, 1]], n)
    return pl.DataFrame(
        {
            "income": np.exp(10 + 0.6 * (base[:, 0] + 0.5 * score + 0.2 * region)),
            "expend": np.exp(9 + 0.5 * (base[:, 1] + 0.3 * score)),
            "savings": np.exp(8 + 0.8 * base[:, 2]),
            "score": score,
            "region": [f"r{r}" for r in region],
        }
    )


# Baselines -----------------------------------------------------------------------------------------


def baseline_restricted(x: np.ndarray, alpha: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    n = len(x)
    z = x + rng.multivariate_normal(np.zeros(x.shape[1]), alpha * np.cov(x, rowvar=False), n)
    c = (
        math.sqrt((n - 1) / (n + n * alpha - 1))
        if n >= 500
        else math.sqrt((n - 1 - alpha) / ((n + 1) * (1 + alpha)))
    )
    return c * z + (1 - c) * x.mean(axis=0)


def baseline_outliers(x: np.ndarray, seed: int) -> np.ndarray:
    from scipy.stats import chi2
    from sklearn.covariance import MinCovDet

    flagged = (x > np.quantile(x, 0.99, axis=0)).any(axis=1)
    mcd = MinCovDet(random_state=seed).fit(x)
    centred = x - mcd.location_
    distance = np.sqrt(np.einsum("ij,jk,ik->i", centred, np.linalg.inv(mcd.covariance_), centred))
    return flagged | (distance > math.sqrt(chi2.ppf(0.975, x.shape[1])))


def baseline_romm(x: np.ndarray, p: float, block: int, seed: int) -> np.ndarray:
    """The blocks in a Python loop: numpy's QR of I + p·M and the explicit b × b matrix per block."""
    from sdckit.anonymize.romm import block_starts

    rng = np.random.default_rng(seed)
    n = len(x)
    order = rng.permutation(n)
    starts = block_starts(n, block)
    normals = rng.standard_normal(int(((np.diff(starts) - 1) ** 2).sum()))
    out = np.empty_like(x)
    offset = 0
    for k in range(len(starts) - 1):
        rows = order[starts[k] : starts[k + 1]]
        b = len(rows)
        m = b - 1
        q, r = np.linalg.qr(np.eye(m) + p * normals[offset : offset + m * m].reshape(m, m))
        offset += m * m
        q *= np.sign(np.diag(r))
        v = np.full(b, 1 / math.sqrt(b))
        v[0] -= 1
        w = np.eye(b) - 2 * np.outer(v, v) / (v @ v)
        inner = np.eye(b)
        inner[1:, 1:] = q
        out[rows] = (w @ inner @ w) @ x[rows]
    return out


def baseline_shuffle(x: np.ndarray, s: np.ndarray, seed: int) -> np.ndarray:
    from scipy.special import ndtri
    from scipy.stats import rankdata, spearmanr

    n, q = x.shape
    r = np.atleast_2d(spearmanr(np.column_stack((x, s)))[0])
    pmc = 2 * np.sin(np.pi * r / 6)
    pxs, pss = pmc[:q, q:], pmc[q:, q:]
    coefficients = pxs @ np.linalg.inv(pss)
    sigma = pmc[:q, :q] - coefficients @ pxs.T
    scores = ndtri((rankdata(s, axis=0) - 0.5) / n)
    ystar = scores @ coefficients.T + np.random.default_rng(seed).multivariate_normal(np.zeros(q), sigma, n)
    out = np.empty_like(x)
    for j in range(q):
        out[np.argsort(ystar[:, j], kind="stable"), j] = np.sort(x[:, j])
    return out


def line(name: str, ours: float, theirs: float, note: str) -> str:
    return f"{name:<18}{ours:8.3f} s; baseline {theirs:8.3f} s; ratio {theirs / ours:5.2f}x; {note}"


def one_size(n: int, repeats: int) -> int:
    from sdckit.anonymize import METHODS
    from sdckit.anonymize.perturbation import NoiseFigures, add_noise
    from sdckit.anonymize.romm import romm
    from sdckit.anonymize.shuffle import shuffle
    from sdckit.table import Attribute, Kind, Role, Schema, Table

    frame = generated(n)
    names = ["income", "expend", "savings"]
    schema = Schema(
        (
            *(Attribute(name, Role.QUASI_IDENTIFIER, Kind.NUMERIC) for name in [*names, "score"]),
            Attribute("region", Role.QUASI_IDENTIFIER, Kind.CATEGORICAL),
        )
    )
    table = Table(frame, schema)
    x = frame.select(names).to_numpy()
    failures = 0
    print(f"--- {n:,} records x {len(names)} numeric attributes (predictors: score, region)")

    ours, release = best_of(lambda: add_noise(table, names, noise="restricted", amount=50, seed=1), repeats)
    theirs, expected = best_of(lambda: baseline_restricted(x, 0.5, 1), repeats)
    z = release.table.data.select(names).to_numpy()
    drift = np.abs(z.mean(axis=0) - x.mean(axis=0)) / x.std(axis=0)
    print(
        line("noise restricted", ours, theirs, f"released means within {drift.max():.3f} sd of the original")
    )

    ours, release = best_of(lambda: add_noise(table, names, noise="outliers", amount=150, seed=1), repeats)
    count = release.figures_as(NoiseFigures).outliers
    if n <= OUTLIER_BASELINE_LIMIT:
        theirs, flagged = best_of(lambda: baseline_outliers(x, 1), 1)
        note = f"outliers {count:,} (baseline, sklearn's factors: {int(flagged.sum()):,})"
        print(line("noise outliers", ours, theirs, note))
    else:
        print(
            f"{'noise outliers':<18}{ours:8.3f} s; baseline skipped (MinCovDet on every record takes "
            f"minutes above {OUTLIER_BASELINE_LIMIT:,} records); outliers {count:,}"
        )

    ours, release = best_of(lambda: romm(table, names, p=0.1, block=20, seed=2), repeats)
    theirs, expected = best_of(lambda: baseline_romm(x, 0.1, 20, 2), 1)
    z = release.table.data.select(names).to_numpy()
    agree = np.abs(z - expected).max() / np.abs(x).max()
    covariance = (
        np.abs(np.cov(z, rowvar=False) - np.cov(x, rowvar=False)).max()
        / np.abs(np.cov(x, rowvar=False)).max()
    )
    failures += not (agree < 1e-9 and covariance < 1e-9)
    print(
        line(
            "romm (block 20)",
            ours,
            theirs,
            f"largest difference from the baseline {agree:.1e} (relative), covariance error {covariance:.1e}",
        )
    )

    ours, release = best_of(lambda: shuffle(table, names, predictors=["score", "region"], seed=3), repeats)
    s = np.column_stack(
        [
            frame["score"].to_numpy(),
            *((frame["region"] == f"r{r}").to_numpy().astype(float) for r in range(1, 5)),
        ]
    )
    theirs, _ = best_of(lambda: baseline_shuffle(x, s, 3), repeats)
    z = release.table.data.select(names).to_numpy()
    permutation = all(np.array_equal(np.sort(z[:, j]), np.sort(x[:, j])) for j in range(len(names)))
    failures += not permutation
    summary = METHODS.get("shuffle").summary(release)["attributes"]
    correlations = ", ".join(str(summary[name]["rank_correlation"]) for name in names)
    print(
        line(
            "shuffle ds",
            ours,
            theirs,
            f"every column a permutation: {'yes' if permutation else 'NO'}; rank correlation with the "
            f"original {correlations}",
        )
    )
    print(f"peak RSS so far   {peak_rss_mib():,.0f} MiB")
    return failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", default="100000,1000000", help="sizes, comma-separated")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args(argv)
    print_header(argv, packages=("polars", "numpy", "numba", "scipy", "scikit-learn"))
    failures = 0
    for n in (int(size) for size in args.records.split(",")):
        failures += one_size(n, args.repeats)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
