"""Benchmark: MDAV's ``strata`` and ``measure`` and the ``rmd`` method (issue 37 item 4), each against a
straightforward numpy/pandas baseline run in the same process, at 10^5 and 10^6 records of 13 numeric
attributes (CASCrefmicrodata resampled with 5 % noise, as ``bench_masking``), k = 3.

* strata: ours is :func:`sdckit.anonymize._microaggregation_strata.stratified` (one stable argsort of
  the stratum keys, then exact MDAV on each stratum's rows); the baseline finds each stratum's rows
  with a mask ``keys == s`` and runs the same MDAV on them. Both must give the same groups. With 10
  and with 1,000 strata; the unstratified MDAV of the same records is shown for scale.
* measure: every record's group median and onestep location (the groups of exact MDAV, not timed):
  ours is :func:`sdckit.anonymize._microaggregation_aggregate.record_statistics` (one compiled pass),
  the baseline pandas ``groupby(...).transform`` (onestep: median, R's mad, clip, mean, all by
  transform). The values must be equal.
* rmd: ours is :func:`sdckit.anonymize.rmd_microaggregation.rmd_groups` (robust distances, then the
  k-d tree with deletion); the baseline takes the same robust distances and seeds, and at each step
  computes the weighted distance of every remaining record to the seed with numpy and keeps the k
  smallest (``argpartition``), O(n^2 d / k) as sdcMicro's loop (which also builds the n x n distance
  matrix: 80 GB at 10^5 records). Above ``--rmd-baseline-up-to`` records the baseline runs its first
  ``--rmd-steps`` steps and its time is extrapolated (each step costs in proportion to the records
  left, which fall linearly): marked "estimated".

Each time is the best of ``--repeats`` runs (1 at 10^6); the ratio is the baseline's time over ours
(above 1: ours is faster). Memory: the peak of Python-tracked allocations of one run (tracemalloc:
numpy's arrays) for ours and the baseline, and the peak resident memory of the process.

    python benchmarks/bench_mdav_options.py
    python benchmarks/bench_mdav_options.py --records 100000 --repeats 1
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
from pathlib import Path

import numpy as np

from _common import best_time, peak_rss_mib, print_header

SDCMICRO = Path(__file__).resolve().parents[2] / "shared" / "data" / "sdcmicro"
K = 3


def data(n: int, seed: int = 1) -> np.ndarray:
    import polars as pl

    casc = pl.read_csv(SDCMICRO / "CASCrefmicrodata.csv").to_numpy().astype(np.float64)
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, len(casc), n)
    return casc[rows] + rng.normal(0.0, 0.05, size=(n, casc.shape[1])) * casc.std(axis=0, ddof=1)


def traced_peak(task) -> tuple[float, object]:
    """Peak MiB of Python-tracked allocations of one run of ``task()``, and its result."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    result = task()
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return peak, result


def partition_key(labels: np.ndarray) -> np.ndarray:
    """Labels renumbered by each group's first record: equal arrays for equal partitions."""
    first = np.full(int(labels.max()) + 1, len(labels))
    np.minimum.at(first, labels, np.arange(len(labels)))
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    return rank[labels]


def report(label: str, n: int, ours: float, base: float, ours_mib: float, base_mib: float, note: str) -> None:
    print(
        f"{label:<28} {n:>9,} x 13  ours {ours:8.2f} s  baseline {base:9.2f} s  ratio {base / ours:6.1f}x  "
        f"traced ours {ours_mib:7.1f} MiB  baseline {base_mib:7.1f} MiB  "
        f"rss {peak_rss_mib():6.0f} MiB  {note}",
        flush=True,
    )


# strata --------------------------------------------------------------------------------------------


def strata_rows(X: np.ndarray, strata: int, repeats: int) -> None:
    from sdckit.anonymize._microaggregation_strata import stratified
    from sdckit.anonymize.microaggregation import mdav_groups

    n = len(X)
    keys = np.random.default_rng(2).integers(0, strata, n)

    def ours() -> np.ndarray:
        return stratified(keys, lambda rows: mdav_groups(X[rows], K)[0])[0]

    def baseline() -> np.ndarray:
        labels = np.empty(n, dtype=np.int64)
        offset = 0
        for value in np.unique(keys):
            rows = np.flatnonzero(keys == value)
            local = mdav_groups(X[rows], K)[0]
            labels[rows] = local + offset
            offset += int(local.max()) + 1
        return labels

    t_ours, got = best_time(ours, repeats)
    t_base, expected = best_time(baseline, repeats)
    m_ours, _ = traced_peak(ours) if n <= 100_000 else (float("nan"), None)
    m_base, _ = traced_peak(baseline) if n <= 100_000 else (float("nan"), None)
    same = "same groups" if np.array_equal(partition_key(got), partition_key(expected)) else "GROUPS DIFFER"
    report(f"mdav strata ({strata:,})", n, t_ours, t_base, m_ours, m_base, same)


# measure -------------------------------------------------------------------------------------------


def pandas_statistics(X: np.ndarray, labels: np.ndarray, measure: str) -> np.ndarray:
    import pandas as pd

    frame = pd.DataFrame(X)
    groups = frame.groupby(labels)
    median = groups.transform("median")
    if measure == "median":
        return median.to_numpy()
    mad = (frame - median).abs().groupby(labels).transform("median") * 1.4826
    limit = 3 / 1.486 * mad
    clipped = frame.clip(lower=median - limit, upper=median + limit, axis=None)
    return clipped.groupby(labels).transform("mean").to_numpy()


def measure_rows(X: np.ndarray, labels: np.ndarray, repeats: int) -> None:
    from sdckit.anonymize._microaggregation_aggregate import record_statistics

    for measure in ("median", "onestep"):
        t_ours, got = best_time(lambda m=measure: record_statistics(X, labels, m), repeats)
        t_base, expected = best_time(lambda m=measure: pandas_statistics(X, labels, m), repeats)
        m_ours, _ = traced_peak(lambda m=measure: record_statistics(X, labels, m))
        m_base, _ = traced_peak(lambda m=measure: pandas_statistics(X, labels, m))
        same = "same values" if np.allclose(got, expected, rtol=1e-12, atol=1e-9) else "VALUES DIFFER"
        report(f"mdav measure {measure}", len(X), t_ours, t_base, m_ours, m_base, same)


# rmd -----------------------------------------------------------------------------------------------


def rmd_baseline(X: np.ndarray, distances: np.ndarray, steps: int | None = None) -> np.ndarray:
    """The numpy loop: the first unassigned record in robust-distance order is the seed, the k nearest
    remaining records (weighted squared distance, argpartition) its group; ``steps`` stops early."""
    n = len(X)
    w = 1.0 / X.var(axis=0, ddof=1)
    seeds = np.argsort(-distances, kind="stable")
    labels = np.full(n, -1, dtype=np.int64)
    rest = np.arange(n)
    total = n // K - 1
    head = 0
    for group in range(total if steps is None else min(steps, total)):
        while labels[seeds[head]] >= 0:
            head += 1
        seed = seeds[head]
        d = (((X[rest] - X[seed]) ** 2) * w).sum(axis=1)
        members = rest[np.argpartition(d, K - 1)[:K]]
        labels[members] = group
        rest = rest[labels[rest] < 0]
    labels[labels < 0] = total
    return labels


def rmd_rows(X: np.ndarray, repeats: int, baseline_up_to: int, steps: int) -> None:
    from sdckit.anonymize.rmd_microaggregation import rmd_groups, robust_distances

    n = len(X)
    t_ours, got = best_time(lambda: rmd_groups(X, K, 0), repeats)
    t_mcd, distances = best_time(lambda: robust_distances(X, 0), 1)
    m_ours, _ = traced_peak(lambda: rmd_groups(X, K, 0)) if n <= 100_000 else (float("nan"), None)
    if n <= baseline_up_to:
        started = time.perf_counter()
        expected = rmd_baseline(X, distances)
        t_base = t_mcd + time.perf_counter() - started
        m_base, _ = traced_peak(lambda: rmd_baseline(X, distances, steps))
        note = (
            "same groups" if np.array_equal(partition_key(got), partition_key(expected)) else "GROUPS DIFFER"
        )
    else:
        started = time.perf_counter()
        rmd_baseline(X, distances, steps)
        per_step = (time.perf_counter() - started) / steps  # at about n records left
        t_base = t_mcd + per_step * (n // K) / 2  # records left fall linearly to 0
        m_base, _ = traced_peak(lambda: rmd_baseline(X, distances, steps))
        note = f"baseline estimated from its first {steps:,} steps"
    report("rmd", n, t_ours, t_base, m_ours, m_base, f"{note}; MCD {t_mcd:.2f} s of both")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, nargs="*", default=[100_000, 1_000_000])
    parser.add_argument("--repeats", type=int, default=3, help="best of this many runs (1 above 10^5)")
    parser.add_argument("--rmd-baseline-up-to", type=int, default=100_000)
    parser.add_argument("--rmd-steps", type=int, default=300)
    parser.add_argument("--parts", nargs="*", default=["strata", "measure", "rmd"])
    options = parser.parse_args()
    print_header(None)
    from sdckit.anonymize.microaggregation import mdav_groups
    from sdckit.anonymize.rmd_microaggregation import rmd_groups

    warm = data(2_000)  # compile the kernels outside the timings
    rmd_groups(warm, K)
    mdav_groups(warm, K)
    for n in options.records:
        X = data(n)
        repeats = options.repeats if n <= 100_000 else 1
        if "strata" in options.parts:
            for strata in (10, 1000):
                strata_rows(X, strata, repeats)
        if "measure" in options.parts:
            from sdckit.anonymize._microaggregation_aggregate import record_statistics

            labels = mdav_groups(X, K)[0]
            record_statistics(X[:1000], labels[:1000] * 0, "onestep")  # compile
            measure_rows(X, labels, repeats)
        if "rmd" in options.parts:
            rmd_rows(X, repeats, options.rmd_baseline_up_to, options.rmd_steps)


if __name__ == "__main__":
    main()
