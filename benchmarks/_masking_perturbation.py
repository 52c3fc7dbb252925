"""Benchmark of the perturbative masking methods (issue 13, items 2-4).

    .venv/bin/python benchmarks/_masking_perturbation.py [--records 1000000] [--repeats 2]

* Rank swapping (p = 5) of two numeric attributes and PRAM (invariant matrices, three attributes,
  per stratum) on ``--records`` records resampled with replacement from sdcMicro's testdata
  (``../shared/data/sdcmicro/testdata.csv``: income, expend; roof, walls, water; strata urbrur), or
  generated when the file is absent.
* Correlated noise (N(0, α·Σ), and the exact-moment variant) on CASCrefmicrodata (1,080 records, 13
  attributes).

Each is timed against a straightforward numpy implementation measured in the same run (best of
``--repeats`` after one untimed call, which compiles the numba kernels): rank swapping against
``argsort`` plus the partner search as a Python loop (the same algorithm, so the releases must be
identical); PRAM against sdcMicro's way, ``rng.choice`` per category; correlated noise against
``rng.multivariate_normal``. Peak RSS of the process at the end.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

from _common import peak_rss_mib, print_header

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "sdcmicro"


def best_of(function, repeats: int):
    function()
    best, result = float("inf"), None
    for _ in range(repeats):
        started = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - started)
    return best, result


def records(n: int, seed: int = 0) -> tuple[pl.DataFrame, str]:
    rng = np.random.default_rng(seed)
    path = DATA / "testdata.csv"
    if path.is_file():
        source = pl.read_csv(path).select("income", "expend", "roof", "walls", "water", "urbrur")
        rows = rng.integers(0, source.height, n)
        frame = source[rows].with_columns(
            pl.col("income").cast(pl.Float64), pl.col("expend").cast(pl.Float64)
        )
        return frame, f"resampled with replacement from {path} ({source.height:,} records)"
    frame = pl.DataFrame(
        {
            "income": rng.lognormal(10, 1, n),
            "expend": rng.lognormal(9, 1, n),
            "roof": rng.integers(1, 6, n),
            "walls": rng.integers(1, 4, n),
            "water": rng.integers(1, 9, n),
            "urbrur": rng.integers(1, 3, n),
        }
    )
    return frame, "generated (testdata.csv absent)"


# Baselines -----------------------------------------------------------------------------------------


def baseline_rank_swap(values: np.ndarray, p: float, rng: np.random.Generator) -> np.ndarray:
    """argsort, then the μ-Argus partner search in plain Python, then the values put back."""
    n = len(values)
    order = np.argsort(values, kind="stable")
    uniforms = rng.random(n).tolist()
    max_dist = math.floor(n * p / 100)
    swap = [-1] * n
    used = 0
    for i in range(n):
        if swap[i] != -1:
            continue
        k = i + 1 + int(max_dist * uniforms[used])
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
    out = np.empty_like(values)
    out[order] = values[order][np.array(swap)]
    return out


def baseline_pram(codes: np.ndarray, strata: np.ndarray, matrices: np.ndarray, rng) -> np.ndarray:
    """sdcMicro's do.pram: per stratum and category, ``rng.choice`` of the new categories."""
    out = codes.copy()
    size = matrices.shape[1]
    for s in range(matrices.shape[0]):
        in_stratum = strata == s
        for k in range(size):
            rows = np.flatnonzero(in_stratum & (codes == k))
            if len(rows):
                out[rows] = rng.choice(size, size=len(rows), p=matrices[s, k])
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args(argv)
    print_header(argv, packages=("polars", "numpy", "numba", "opendp"))

    from sdckit.anonymize.perturbation import add_noise, correlated_noise, rank_swap
    from sdckit.anonymize.pram import PramFigures, apply_matrices, pram
    from sdckit.frequency import encode
    from sdckit.table import Attribute, Kind, Role, Schema, Table

    frame, origin = records(args.records)
    n = frame.height
    print(f"data             {n:,} records, {origin}")
    schema = Schema(
        (
            Attribute("income", Role.QUASI_IDENTIFIER, Kind.NUMERIC),
            Attribute("expend", Role.QUASI_IDENTIFIER, Kind.NUMERIC),
            *(
                Attribute(name, Role.QUASI_IDENTIFIER, Kind.CATEGORICAL)
                for name in ("roof", "walls", "water")
            ),
            Attribute("urbrur", Role.INSENSITIVE, Kind.CATEGORICAL),
        )
    )
    table = Table(frame, schema)
    failures = 0

    # Rank swapping ------------------------------------------------------------------------------
    p = 5.0
    ours, release = best_of(lambda: rank_swap(table, ["income", "expend"], p=p, seed=1), args.repeats)

    def baseline():
        rng = np.random.default_rng(1)
        return [baseline_rank_swap(frame[name].to_numpy(), p, rng) for name in ("income", "expend")]

    theirs, expected = best_of(baseline, 1)
    identical = all(
        np.array_equal(release.table.column(name).to_numpy(), values)
        for name, values in zip(("income", "expend"), expected, strict=True)
    )
    failures += not identical
    print(
        f"rank-swap        2 attributes, p = {p:g}% (window {math.floor(n * p / 100):,} ranks): "
        f"{ours:.3f} s; baseline (argsort + Python partner search) {theirs:.3f} s; "
        f"ratio {theirs / ours:.1f}x; identical releases: {'yes' if identical else 'NO'}"
    )

    # PRAM ---------------------------------------------------------------------------------------
    names = ["roof", "walls", "water"]
    ours, release = best_of(lambda: pram(table, names, strata=["urbrur"], seed=2), args.repeats)
    used = release.figures_as(PramFigures).matrices
    matrices = {name: np.array([block["matrix"] for block in used[name]]) for name in names}
    encoding = encode(frame, [*names, "urbrur"])
    strata = encoding.codes[3].astype(np.int64)
    first_seen = {value: index for index, value in enumerate(dict.fromkeys(strata.tolist()))}
    strata_in_order = np.array([first_seen[value] for value in range(encoding.cardinalities[3])])[strata]

    def baseline_run():
        rng = np.random.default_rng(2)
        return [
            baseline_pram(encoding.codes[j], strata_in_order, matrices[name], rng)
            for j, name in enumerate(names)
        ]

    theirs, expected = best_of(baseline_run, args.repeats)

    def kernel_run():  # the draws alone, on the same prepared codes as the baseline
        rng = np.random.default_rng(2)
        return [
            apply_matrices(encoding.codes[j], strata_in_order, matrices[name], rng.random(n))
            for j, name in enumerate(names)
        ]

    kernel, _ = best_of(kernel_run, args.repeats)
    deviation_ours, deviation_theirs = [], []
    for j, name in enumerate(names):
        before = np.bincount(encoding.codes[j], minlength=encoding.cardinalities[j])
        after = np.bincount(encode(release.table.data, [name]).codes[0], minlength=encoding.cardinalities[j])
        deviation_ours.append(np.abs(after - before).max() / n)
        deviation_theirs.append(np.abs(np.bincount(expected[j], minlength=len(before)) - before).max() / n)
    checks = [
        np.allclose(
            (np.bincount(encoding.codes[j][strata_in_order == s], minlength=encoding.cardinalities[j]) / 1.0)
            @ matrices[name][s],
            np.bincount(encoding.codes[j][strata_in_order == s], minlength=encoding.cardinalities[j]),
        )
        for j, name in enumerate(names)
        for s in range(matrices[name].shape[0])
    ]
    failures += not all(checks)
    print(
        f"pram             3 attributes x 2 strata, invariant matrices: {ours:.3f} s end to end (encoding, "
        f"matrices, draws, columns back, figures), draws alone {kernel:.3f} s; baseline (rng.choice per "
        f"category, sdcMicro's do.pram, on prepared codes) {theirs:.3f} s; ratio {theirs / ours:.1f}x end to "
        f"end, {theirs / kernel:.1f}x draws; "
        f"largest marginal change {max(deviation_ours):.5f} (baseline {max(deviation_theirs):.5f}); "
        f"πᵀR = πᵀ in every stratum: {'yes' if all(checks) else 'NO'}"
    )

    # Correlated noise on CASC -------------------------------------------------------------------
    casc_path = DATA / "CASCrefmicrodata.csv"
    if casc_path.is_file():
        casc = pl.read_csv(casc_path).cast(pl.Float64)
        casc_table = Table.from_frame(casc)
        columns = casc.columns
        x = casc.to_numpy()
        repeats = max(args.repeats, 20)
        ours, noisy = best_of(
            lambda: add_noise(casc_table, columns, noise="correlated", amount=10, seed=3), repeats
        )
        exact, exact_release = best_of(
            lambda: add_noise(casc_table, columns, noise="correlated-exact", amount=10, seed=3), repeats
        )

        def baseline_noise():
            rng = np.random.default_rng(3)
            return x + rng.multivariate_normal(np.zeros(x.shape[1]), 0.1 * np.cov(x, rowvar=False), len(x))

        theirs, _ = best_of(baseline_noise, repeats)
        z = exact_release.table.data.select(columns).to_numpy()
        sigma = np.cov(x, rowvar=False)
        covariance_error = np.abs(np.cov(z, rowvar=False) - sigma).max() / np.abs(sigma).max()
        mean_error = np.abs(z.mean(axis=0) - x.mean(axis=0)).max() / np.abs(x.mean(axis=0)).max()
        failures += not (covariance_error < 1e-9 and mean_error < 1e-12)
        noisy_z = noisy.table.data.select(columns).to_numpy()
        correlation_change = np.abs(np.corrcoef(noisy_z, rowvar=False) - np.corrcoef(x, rowvar=False)).max()
        print(
            f"noise (CASC)     {len(x):,} records x {x.shape[1]} attributes, amount 10%: correlated "
            f"{ours * 1e3:.2f} ms, correlated-exact {exact * 1e3:.2f} ms; baseline (rng.multivariate_normal) "
            f"{theirs * 1e3:.2f} ms; "
            f"ratio {theirs / ours:.2f}x; exact variant: relative covariance error {covariance_error:.1e}, "
            f"mean error {mean_error:.1e}; correlated: largest correlation change {correlation_change:.3f}"
        )
    else:
        print(f"noise (CASC)     skipped: {casc_path} is absent")

    # Correlated noise at scale: the two numeric attributes of the large table.
    ours, _ = best_of(
        lambda: add_noise(table, ["income", "expend"], noise="correlated", seed=4), args.repeats
    )
    big = frame.select("income", "expend").to_numpy()

    def baseline_big():
        rng = np.random.default_rng(4)
        return big + rng.multivariate_normal(np.zeros(2), 0.1 * np.cov(big, rowvar=False), len(big))

    theirs, _ = best_of(baseline_big, args.repeats)
    sigma_big = 0.1 * np.cov(big, rowvar=False)
    kernel, _ = best_of(
        lambda: big + correlated_noise(sigma_big, len(big), np.random.default_rng(4)), args.repeats
    )
    print(
        f"noise (large)    {n:,} records x 2 attributes, correlated: {ours:.3f} s end to end, noise alone "
        f"{kernel:.3f} s; baseline (rng.multivariate_normal on the array) {theirs:.3f} s; ratio "
        f"{theirs / ours:.2f}x end to end, {theirs / kernel:.2f}x noise"
    )

    print(f"peak RSS         {peak_rss_mib():,.0f} MiB")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
