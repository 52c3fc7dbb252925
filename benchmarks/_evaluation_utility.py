"""Benchmark part: utility measures of issue 12 (sdckit.utility), each against a baseline timed in the
same run.

* Propensity-score utility (Woo et al. 2009) on Adult (30,162 records, its 9 attributes; age
  numeric, the others categorical) against a seeded perturbation: 10% of the values of every
  categorical attribute replaced by the value of another record drawn at random. Models main and
  interactions. Baseline: scikit-learn with its default settings — ``OneHotEncoder`` (sparse) and
  ``StandardScaler`` for age, ``PolynomialFeatures(degree=2)`` for the interactions (on the sparse
  matrix), ``LogisticRegression()`` (L2, C = 1, lbfgs, 100 iterations: it stops before converging
  on the interaction model). statsmodels is not installed, so the baseline is scikit-learn. The same
  pipeline with our penalty (C = 10⁶, lbfgs, tolerance 1e-8, up to 2,000 iterations, timed once)
  checks the value of U_p; the default C = 1 shrinks it.
* Frequency-table distances on the same pair: pandas ``value_counts`` per attribute and pair as the
  baseline.
* Numeric information loss on CASC (1,080 records, 13 numeric attributes) against a copy with
  Gaussian noise of 10% of each attribute's standard deviation, and on 1,000,000 records resampled
  from it (row bootstrap, with the same noise). Baseline: the direct numpy formulas (np.cov,
  np.corrcoef, the SVD of the standardized data, the loadings as correlations of each variable with
  the component scores, the score coefficients by least squares).

Times are the best of ``--repeats`` calls after the data is in memory; peak memory is this process's
resident peak after all runs. Usage: ``python benchmarks/_evaluation_utility.py [--quick]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ADULT, peak_rss_mib, print_header  # noqa: E402

CASC = ADULT.parent / "sdcmicro" / "CASCrefmicrodata.csv"
SEED = 12


def best(function, repeats: int):
    times, value = [], None
    for _ in range(repeats):
        started = time.perf_counter()
        value = function()
        times.append(time.perf_counter() - started)
    return min(times), value


def perturbed_adult(frame: pl.DataFrame, share: float, seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    columns = []
    for name in frame.columns:
        values = frame.get_column(name).to_numpy().copy()
        if name != "age":
            chosen = rng.random(values.size) < share
            values[chosen] = values[rng.integers(0, values.size, int(chosen.sum()))]
        columns.append(pl.Series(name, values))
    return pl.DataFrame(columns)


def sklearn_propensity(original: pl.DataFrame, release: pl.DataFrame, model: str, c: float | None) -> float:
    from scipy import sparse
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import OneHotEncoder, PolynomialFeatures, StandardScaler

    stacked = pl.concat([original, release]).to_pandas()
    categorical = [name for name in stacked.columns if name != "age"]
    onehot = OneHotEncoder(drop="first", sparse_output=True).fit_transform(stacked[categorical].astype(str))
    age = StandardScaler().fit_transform(stacked[["age"]].to_numpy(dtype=float))
    matrix = sparse.hstack([sparse.csr_matrix(age), onehot], format="csr")
    if model == "interactions":
        matrix = PolynomialFeatures(degree=2, include_bias=False).fit_transform(matrix)
    target = np.r_[np.zeros(original.height), np.ones(release.height)]
    fit = LogisticRegression() if c is None else LogisticRegression(C=c, max_iter=2000, tol=1e-8)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit.fit(matrix, target)
    scores = fit.predict_proba(matrix)[:, 1]
    share = release.height / target.size
    return float(np.mean((scores - share) ** 2))


def pandas_tables(original: pl.DataFrame, release: pl.DataFrame) -> list[float]:
    from itertools import combinations

    a, b = original.to_pandas().astype(str), release.to_pandas().astype(str)
    distances = []
    groups = [[name] for name in a.columns] + [list(pair) for pair in combinations(a.columns, 2)]
    for group in groups:
        p = a.value_counts(group, normalize=True)
        q = b.value_counts(group, normalize=True)
        p, q = p.align(q, fill_value=0.0)
        distances.append(0.5 * float((p - q).abs().sum()))
    return distances


def numpy_il(x: np.ndarray, y: np.ndarray, m: int) -> dict[str, float]:
    """The direct formulas (mean squared errors, and IL1 / eigen), vectorized numpy."""
    p = x.shape[1]

    def pca(data, reference=None):
        z = (data - data.mean(0)) / data.std(0, ddof=1)
        _, _, vt = np.linalg.svd(z, full_matrices=False)
        vectors = vt.T
        if reference is not None:
            vectors = vectors * np.where((vectors * reference).sum(0) < 0, -1, 1)
        scores = z @ vectors
        rf = np.corrcoef(data.T, scores.T)[:p, p:]
        unit = scores / scores.std(0, ddof=1)
        coefficients = np.linalg.lstsq(z, unit, rcond=None)[0]
        return vectors, scores.var(0, ddof=1), rf, coefficients

    vx, lx, rfx, fx = pca(x)
    _, ly, rfy, fy = pca(y, vx)
    w = lx / lx.sum()
    upper, strict = np.triu_indices(p), np.triu_indices(p, 1)
    return {
        "X": float(((x - y) ** 2).mean()),
        "V": float(((np.cov(x.T) - np.cov(y.T))[upper] ** 2).mean()),
        "R": float(((np.corrcoef(x.T) - np.corrcoef(y.T))[strict] ** 2).mean()),
        "RF": float((w * (rfx - rfy) ** 2).sum() / p**2),
        "C": float((((rfx[:, :m] ** 2).sum(1) - (rfy[:, :m] ** 2).sum(1)) ** 2).mean()),
        "F": float((w * (fx - fy) ** 2).sum() / p**2),
        "il1": float((np.abs(x - y) / (np.sqrt(2) * x.std(0, ddof=1))).mean()),
        "eigen": float((np.abs(lx - ly) / lx)[lx > 1e-12 * p].sum()),
    }


def run_propensity(repeats: int, quick: bool) -> None:
    from sdckit.utility.propensity import propensity_utility

    original = pl.read_csv(ADULT / "adult.csv", separator=";")
    if quick:
        original = original.head(5_000)
    release = perturbed_adult(original, 0.10, SEED)
    names = original.columns
    propensity_utility(original.head(50), release.head(50), names, model="main")  # warm-up: imports
    sklearn_propensity(original.head(50), release.head(50), "main", None)
    print(
        f"\npropensity utility, Adult {original.height:,} records, release: 10% of categorical values swapped"
    )
    print(
        f"{'model':<14}{'ours s':>9}{'U_p':>11}{'features':>10}{'sk C=1 s':>10}{'U_p C=1':>11}"
        f"{'ratio':>7}{'sk C=1e6 s':>11}{'U_p':>10}"
    )
    for model in ("main", "interactions"):
        ours_time, ours = best(
            lambda model=model: propensity_utility(original, release, names, model=model), repeats
        )
        base_time, base_value = best(
            lambda model=model: sklearn_propensity(original, release, model, None), repeats
        )
        check_time, check = best(lambda model=model: sklearn_propensity(original, release, model, 1e6), 1)
        print(
            f"{model:<14}{ours_time:>9.2f}{ours.utility:>11.6f}{ours.features:>10,}{base_time:>10.2f}"
            f"{base_value:>11.6f}{base_time / ours_time:>7.2f}{check_time:>11.2f}{check:>10.6f}"
            + ("" if ours.converged else "  (ours: not converged)")
        )


def run_tables(repeats: int, quick: bool) -> None:
    from sdckit.config import parse_config
    from sdckit.utility.frequencies import frequency_tables

    original = pl.read_csv(ADULT / "adult.csv", separator=";")
    if quick:
        original = original.head(5_000)
    release = perturbed_adult(original, 0.10, SEED)
    config = parse_config({"attributes": {name: {"kind": "categorical"} for name in original.columns}})
    a, b = (
        config.read(original.with_columns(pl.col("age").cast(pl.String))),
        config.read_release(release.with_columns(pl.col("age").cast(pl.String))),
    )
    names = original.columns
    ours_time, ours = best(lambda: frequency_tables(a, b, names), repeats)
    base_time, base = best(lambda: pandas_tables(original, release), repeats)
    mine = [value[0] for value in ours.one_way.values()] + [value[0] for value in ours.two_way.values()]
    agree = max(abs(x - y) for x, y in zip(mine, base, strict=True))
    print(
        f"\nfrequency tables, Adult: {len(names)} one-way + {len(ours.two_way)} two-way tables: ours "
        f"{ours_time:.3f} s, pandas value_counts {base_time:.3f} s, ratio {base_time / ours_time:.1f}; "
        f"largest TV difference {agree:.1e}"
    )


def run_numeric(repeats: int, quick: bool) -> None:
    from sdckit.utility.information_loss import numeric_information_loss

    casc = pl.read_csv(CASC).to_numpy().astype(np.float64)
    rng = np.random.default_rng(SEED)
    sizes = [casc.shape[0], 100_000 if quick else 1_000_000]
    print(f"\nnumeric information loss, CASC ({casc.shape[1]} numeric attributes), noise 10% of sd")
    print(f"{'records':>10}{'ours s':>9}{'numpy s':>9}{'ratio':>7}{'largest relative difference':>30}")
    for size in sizes:
        x = casc if size == casc.shape[0] else casc[rng.integers(0, casc.shape[0], size)]
        y = x + rng.normal(0, 0.1, x.shape) * x.std(0, ddof=1)
        ours_time, ours = best(lambda x=x, y=y: numeric_information_loss(x, y, factors=3), repeats)
        base_time, base = best(lambda x=x, y=y: numpy_il(x, y, 3), repeats)
        mine = {pair: ours.figures[pair]["mse"] for pair in ("X", "V", "R", "RF", "C", "F")}
        mine |= {"il1": ours.il1, "eigen": ours.eigen}
        worst = max(abs(mine[key] - base[key]) / max(abs(base[key]), 1e-300) for key in base)
        print(f"{size:>10,}{ours_time:>9.3f}{base_time:>9.3f}{base_time / ours_time:>7.2f}{worst:>30.1e}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5,000 Adult records, 100,000 resampled CASC")
    parser.add_argument("--repeats", type=int, default=2)
    arguments = parser.parse_args(argv)
    print_header(argv, packages=("polars", "numpy", "scikit-learn", "scipy", "pandas"))
    if not (ADULT / "adult.csv").is_file() or not CASC.is_file():
        print(f"skipped: needs {ADULT / 'adult.csv'} and {CASC}")
        return 0
    run_propensity(arguments.repeats, arguments.quick)
    run_tables(arguments.repeats, arguments.quick)
    run_numeric(arguments.repeats, arguments.quick)
    print(f"\npeak memory      {peak_rss_mib():,.0f} MiB (this process, all runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
