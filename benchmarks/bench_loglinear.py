"""Benchmark: ``risk loglinear`` (sdcMicro's modRisk) against a straightforward baseline run in the
same process, at 10^5 and 10^6 records.

The baseline is what a direct transcription of sdcMicro's R code does in numpy: the full table of
the keys, a dense model matrix (intercept, treatment contrasts, covariates), IRLS as R's ``glm.fit``
with dense normal equations for every model (also the main effects, which sdckit fits in closed
form from the observed cells), then the risks. Both must give the same figures (checked, relative
1e-6). The data: five categorical keys (10, 8, 5, 12 and 6 values, 28,800 cells, skewed), sampling
weights in [1, 100). Each time is the best of three runs; the ratio is the baseline's time over
sdckit's (above 1: sdckit is faster); peak memory of the process after each size.

    python benchmarks/bench_loglinear.py
    python benchmarks/bench_loglinear.py --records 100000
"""

from __future__ import annotations

import argparse

import numpy as np
import polars as pl

from _common import best_time, peak_rss_mib, print_header

CARDINALITIES = (10, 8, 5, 12, 6)
KEYS = tuple(f"k{j}" for j in range(len(CARDINALITIES)))
CASES = (
    ("default", None),
    ("CE", None),
    ("PML", None),
    ("weightedLLM", None),
    ("IPF", None),
    ("default", "k0 + k1 + k2 + k3 + k4 + k0:k1"),  # closed form: groups {k0, k1}, k2, k3, k4
    ("default", "k0 + k1 + k2 + k3 + k4 + k0:k1 + k1:k2"),  # IRLS on the full table
    ("CE", "k0 + k1 + k2 + k3 + k4 + k0:k1"),
)


def _table(n: int):
    from sdckit.table import Attribute, Kind, Role, Schema, Table

    rng = np.random.default_rng(1)
    columns = {}
    for j, size in enumerate(CARDINALITIES):
        p = rng.dirichlet(np.full(size, 0.7))  # skewed: some rare values, so some sample uniques
        columns[KEYS[j]] = rng.choice(size, n, p=p)
    columns["w"] = rng.uniform(1, 100, n)
    frame = pl.DataFrame(columns)
    schema = Schema(
        (
            *(Attribute(name, Role.QUASI_IDENTIFIER, Kind.CATEGORICAL) for name in KEYS),
            Attribute("w", Role.INSENSITIVE, Kind.NUMERIC),
        )
    )
    return Table(frame, schema, weights="w")


def _pairs(formula: str | None) -> list[tuple[int, int]]:
    terms = [] if formula is None else [t.strip() for t in formula.split("+") if ":" in t]
    return [(KEYS.index(t.split(":")[0]), KEYS.index(t.split(":")[1])) for t in terms]


def baseline(frame: pl.DataFrame, method: str, pairs: list[tuple[int, int]]) -> tuple[float, float]:
    """sdcMicro's modRisk in plain numpy on the dense table: (gr1, gr2)."""
    codes, levels = [], []
    for key in KEYS:
        values, inverse = np.unique(frame.get_column(key).to_numpy(), return_inverse=True)
        codes.append(inverse)
        levels.append(len(values))
    cell = np.ravel_multi_index(codes, levels)
    size = int(np.prod(levels))
    weights = frame.get_column("w").to_numpy()
    counts = np.bincount(cell, minlength=size).astype(np.float64)
    weight_sums = np.bincount(cell, weights=weights, minlength=size)
    inclusion = np.bincount(cell, weights=1.0 / weights, minlength=size)
    grid = np.stack(np.unravel_index(np.arange(size), levels), axis=1)
    columns = [np.ones(size)]
    for j, count in enumerate(levels):
        columns += [(grid[:, j] == level).astype(np.float64) for level in range(1, count)]
    for first, second in pairs:
        columns += [
            ((grid[:, first] == a) & (grid[:, second] == b)).astype(np.float64)
            for a in range(1, levels[first])
            for b in range(1, levels[second])
        ]
    y, offset = counts, np.zeros(size)
    if method == "CE":
        with np.errstate(divide="ignore", invalid="ignore"):
            offset = np.log(np.nan_to_num(counts / weight_sums) + 0.1)
    elif method == "PML":
        y = np.round(weight_sums * counts.sum() / weight_sums.sum())
    elif method == "weightedLLM":
        columns.append(weight_sums / weight_sums.max())  # scaled: the same fit, better conditioned
    x = np.stack(columns, axis=1)
    mu = y + 0.1
    eta = np.log(mu)

    def deviance(mu: np.ndarray) -> float:
        with np.errstate(divide="ignore", invalid="ignore"):
            return float(2 * np.sum(np.where(y > 0, y * np.log(y / mu), 0.0) - (y - mu)))

    old = deviance(mu)
    for _ in range(25):
        z = eta - offset + (y - mu) / mu
        weighted = x * mu[:, None]
        beta = np.linalg.lstsq(x.T @ weighted, weighted.T @ z, rcond=None)[0]
        eta = x @ beta + offset
        mu = np.exp(eta)
        new = deviance(mu)
        if abs(new - old) / (abs(new) + 0.1) < 1e-8:
            break
        old = new
    considered = (counts > 0) & (mu > 0)
    v = (1 - inclusion) * mu
    unique = considered & (counts == 1)
    cells = considered.sum()
    tau1 = np.exp(-v[unique]).sum()
    tau2 = (-np.expm1(-v[unique]) / v[unique]).sum()
    return float(tau1 / cells), float(tau2 / cells)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, action="append", help="sizes (default 10^5 and 10^6)")
    sizes = parser.parse_args().records or [100_000, 1_000_000]
    from sdckit.risk.loglinear import LoglinearRiskParams, loglinear_risk

    print_header(None, packages=("polars", "numpy", "scipy"))
    for n in sizes:
        table = _table(n)
        for method, formula in CASES:
            params = LoglinearRiskParams(method=method, formula=formula)
            ours, result = best_time(lambda table=table, params=params: loglinear_risk(table, params, "w"))
            # IPF fits what default fits: the baseline's IRLS
            base, expected = best_time(
                lambda table=table, method=method, formula=formula: baseline(
                    table.data, method, _pairs(formula)
                )
            )
            figures = result.summary()  # type: ignore[attr-defined]
            got = (figures["population_unique_share"], figures["correct_match_share"])
            same = bool(np.allclose(got, expected, rtol=1e-6, atol=0))  # type: ignore[arg-type]
            label = method + "".join(f" +{KEYS[a]}:{KEYS[b]}" for a, b in _pairs(formula))
            print(
                f"{n:>9,} records  {label:<24} sdckit {ours:7.3f} s ({figures['fit']['algorithm']:<11}) "
                f"baseline {base:7.3f} s  {base / ours:6.1f}x  gr1 {got[0]:.5f}  same: {same}"
            )
        print(f"{'':>17}peak memory {peak_rss_mib():,.0f} MiB")


if __name__ == "__main__":
    main()
