"""Benchmark: MDAV microaggregation (k = 3) on the CASC continuous benchmark files and on large
generated files, against a straightforward numpy MDAV measured in the same run.

* ours: ``sdckit.anonymize.microaggregation.mdav_groups`` (the compiled loop; exact), and with
  ``partition_size`` (PCA blocks, exact MDAV per block: an approximation) on 100,000 and 1,000,000
  records;
* exact MDAV at 10^4, 10^5 and 10^6 records (CASC resampled, 13 attributes): time, peak memory and a
  hash of the groups (``mdav_groups``: the k-d tree from 20,000 records, the scan below), next to the
  full-scan kernel (sdckit's exact MDAV before issue 35) run in the same process up to
  ``--scan-up-to`` records: the hashes must be equal;
* baseline: MDAV written directly in numpy: per step, the centroid of the remaining records, then
  vectorized distances of every remaining record to the centroid and to the two seeds, selections by
  ``lexsort`` (same tie rule, so the groups must be identical). It is quadratic with a large constant,
  so on the large file it is timed on ``--baseline-records`` records (20,000 by default) and
  extrapolated to 100,000 by the square of the ratio of sizes (MDAV's cost is O(n^2 d / k)); the
  ratio at equal size is measured on those records too.

Data: ``CASCrefmicrodata.csv`` (1,080 x 13) and ``Tarragona.csv`` (834 x 13) from ../shared/data/sdcmicro
(every column numeric, none missing; see its README), and "CASC resampled": CASC records drawn with
replacement (seeded) plus Gaussian noise of 5 % of each column's standard deviation, 13 attributes.
Times are wall-clock and CPU seconds of this process (the machine is shared, so CPU seconds are the
fairer figure); SSE/SST on standardized data (SPEC §4.3); peak resident memory of the process so far.
Usage::

    python benchmarks/_masking_microaggregation.py            # 100,000 exact, 1,000,000 approximate
    python benchmarks/_masking_microaggregation.py --quick    # 20,000 exact, 200,000 approximate
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

from _common import peak_rss_mib, print_header

SDCMICRO = Path(__file__).resolve().parents[2] / "shared" / "data" / "sdcmicro"
K = 3


def reference_mdav(X: np.ndarray, k: int) -> np.ndarray:
    """MDAV in plain numpy (SPEC §4.1), inverse-variance weighted squared distances, ties to the
    smaller row index."""
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    variance = X.var(axis=0, ddof=1)
    w = np.where(variance > 0, 1.0 / np.where(variance > 0, variance, 1.0), 1.0)

    def distances(rows: np.ndarray, point: np.ndarray) -> np.ndarray:
        total = np.zeros(len(rows))
        for j in range(d):
            diff = X[rows, j] - point[j]
            total += w[j] * diff * diff
        return total

    def farthest(rows: np.ndarray, dist: np.ndarray) -> int:
        return int(rows[dist == dist.max()].min())

    def group_around(rows: np.ndarray, seed: int) -> np.ndarray:
        others = rows[rows != seed]
        dist = distances(others, X[seed])
        return np.r_[seed, others[np.lexsort((others, dist))[: k - 1]]]

    labels = np.full(n, -1)
    remaining = np.arange(n)
    group = 0
    while len(remaining) >= 2 * k:
        centroid = X[remaining].sum(axis=0) / len(remaining)
        xr = farthest(remaining, distances(remaining, centroid))
        two = len(remaining) >= 3 * k
        from_xr = distances(remaining, X[xr])
        first = group_around(remaining, xr)
        labels[first] = group
        group += 1
        keep = ~np.isin(remaining, first)
        if two:
            xs = farthest(remaining[keep], from_xr[keep])
        remaining = remaining[keep]
        if two:
            second = group_around(remaining, xs)
            labels[second] = group
            group += 1
            remaining = remaining[~np.isin(remaining, second)]
    if len(remaining):
        labels[remaining] = group
    return labels


def timed(function, *arguments, **options):
    wall, cpu = time.perf_counter(), time.process_time()
    result = function(*arguments, **options)
    return result, time.perf_counter() - wall, time.process_time() - cpu


def resampled(casc: np.ndarray, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, len(casc), n)
    return casc[rows] + rng.normal(0.0, 0.05, size=(n, casc.shape[1])) * casc.std(axis=0, ddof=1)


def line(label: str, n: int, d: int, wall: float, cpu: float, il: float | None, extra: str = "") -> None:
    shown = f"{il:8.4f} %" if il is not None else "         -"
    print(
        f"{label:<44} {n:>9,} x {d:<3} {wall:9.2f} s {cpu:9.2f} s cpu   SSE/SST {shown}   "
        f"peak {peak_rss_mib():7.0f} MiB {extra}"
    )


def groups_hash(labels: np.ndarray) -> str:
    """The first 16 hex digits of the SHA-256 of the labels as little-endian int64."""
    return hashlib.sha256(np.ascontiguousarray(labels, dtype="<i8").tobytes()).hexdigest()[:16]


def scan_mdav(X: np.ndarray, k: int) -> np.ndarray:
    """Exact MDAV by the full-scan kernel (sdckit's exact MDAV before issue 35, kept as the oracle)."""
    from sdckit.anonymize._microaggregation_kernels import mdav_generic_scan
    from sdckit.anonymize.microaggregation import inverse_variance

    n, d = X.shape
    return mdav_generic_scan(
        np.ascontiguousarray(X),
        inverse_variance(X),
        np.zeros(d, dtype=np.bool_),
        np.zeros(d, dtype=np.int64),
        np.zeros((n, 0), dtype=np.int64),
        np.zeros(0, dtype=np.int64),
        np.zeros(0),
        k,
    )


def exact_at_scale(casc: np.ndarray, sizes: list[int], scan_up_to: int) -> None:
    """Exact MDAV (k-d tree) on CASC resampled at every size, with the hash of its groups, next to the
    full-scan kernel run in this process up to ``scan_up_to`` records (same hash required)."""
    from sdckit.anonymize.microaggregation import mdav_groups

    print(f"exact MDAV vs the full scan (the scan only up to {scan_up_to:,} records)")
    for n in sizes:
        X = resampled(casc, n, seed=4)
        (labels, _), wall, cpu = timed(mdav_groups, X, K)
        digest = groups_hash(labels)
        line("exact MDAV, sdckit (k-d tree from 20,000)", n, 13, wall, cpu, None, f"groups {digest}")
        if n <= scan_up_to:
            old, old_wall, old_cpu = timed(scan_mdav, X, K)
            same = "identical groups" if groups_hash(old) == digest else "GROUPS DIFFER"
            line(
                "exact MDAV, full scan (before issue 35)",
                n,
                13,
                old_wall,
                old_cpu,
                None,
                f"groups {groups_hash(old)}  ratio {old_cpu / max(cpu, 1e-9):.1f}x (cpu), {same}",
            )
        del X, labels


def vmdav_at_scale(casc: np.ndarray, sizes: list[int], scan_up_to: int, gamma: float = 0.2) -> None:
    """V-MDAV (k = 3, the CLI's gamma 0.2) on CASC resampled at every size: ``vmdav_groups`` (the k-d
    tree of issue 35 from ``VMDAV_TREE_FROM`` records, the scan below) with the hash of its groups,
    next to the full-scan kernel ``vmdav`` (sdckit's V-MDAV before issue 35, O(n^2)) run in this
    process up to ``scan_up_to`` records (same hash required)."""
    from sdckit.anonymize._microaggregation_kernels import vmdav
    from sdckit.anonymize._vmdav_tree import VMDAV_TREE_FROM
    from sdckit.anonymize.microaggregation import inverse_variance, vmdav_groups

    tiny = resampled(casc, VMDAV_TREE_FROM, seed=5)
    vmdav_groups(tiny, K, gamma)  # compile (or load the cache) of both kernels first
    vmdav(tiny[:50], inverse_variance(tiny[:50]), K, gamma)
    print(f"V-MDAV (gamma {gamma}) vs the full scan (the scan only up to {scan_up_to:,} records)")
    for n in sizes:
        X = resampled(casc, n, seed=4)
        labels, wall, cpu = timed(vmdav_groups, X, K, gamma)
        digest = groups_hash(labels)
        label = f"V-MDAV, sdckit (k-d tree from {VMDAV_TREE_FROM:,})"
        line(label, n, 13, wall, cpu, None, f"groups {digest}")
        if n <= scan_up_to:
            old, old_wall, old_cpu = timed(vmdav, np.ascontiguousarray(X), inverse_variance(X), K, gamma)
            same = "identical groups" if groups_hash(old) == digest else "GROUPS DIFFER"
            line(
                "V-MDAV, full scan (before issue 35)",
                n,
                13,
                old_wall,
                old_cpu,
                None,
                f"groups {groups_hash(old)}  ratio {old_cpu / max(cpu, 1e-9):.1f}x (cpu), {same}",
            )
        del X, labels


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20,000 exact and 200,000 approximate records")
    parser.add_argument("--exact-records", type=int, default=None)
    parser.add_argument("--large-records", type=int, default=None)
    parser.add_argument("--baseline-records", type=int, default=20_000)
    parser.add_argument("--partition-size", type=int, default=10_000)
    parser.add_argument(
        "--exact-sizes",
        default=None,
        help="sizes of the exact MDAV at scale, comma-separated (10000,100000,1000000; quick: 10000,20000)",
    )
    parser.add_argument(
        "--scan-up-to", type=int, default=100_000, help="run the full-scan kernel up to this many records"
    )
    args = parser.parse_args(argv)
    exact_n = args.exact_records or (20_000 if args.quick else 100_000)
    large_n = args.large_records or (200_000 if args.quick else 1_000_000)
    baseline_n = min(args.baseline_records, exact_n)

    from sdckit.anonymize.microaggregation import information_loss, mdav_groups

    print_header(argv, packages=("polars", "numpy", "numba"))
    casc_path = SDCMICRO / "CASCrefmicrodata.csv"
    if not casc_path.is_file():
        print(f"skipped: {casc_path} is not available (see /work/shared/data/README.md)")
        return 0
    mdav_groups(np.arange(40, dtype=float).reshape(20, 2), K)  # compile (or load the cache) first

    def il(X: np.ndarray, labels: np.ndarray) -> float:
        sse, sst = information_loss(X, labels)
        return 100.0 * sse / sst

    print(f"MDAV k = {K}; wall and CPU seconds of this process")
    for name in ("CASCrefmicrodata.csv", "Tarragona.csv"):
        X = pl.read_csv(SDCMICRO / name).to_numpy().astype(np.float64)
        (labels, _), wall, cpu = timed(mdav_groups, X, K)
        reference, base_wall, base_cpu = timed(reference_mdav, X, K)
        same = "identical groups" if np.array_equal(labels, reference) else "GROUPS DIFFER"
        line(f"{name} ours (exact)", len(X), X.shape[1], wall, cpu, il(X, labels))
        line(
            f"{name} numpy baseline",
            len(X),
            X.shape[1],
            base_wall,
            base_cpu,
            il(X, reference),
            f"ratio {base_cpu / max(cpu, 1e-9):.0f}x (cpu), {same}",
        )

    casc = pl.read_csv(casc_path).to_numpy().astype(np.float64)
    small = resampled(casc, baseline_n, seed=1)
    (labels, _), wall, cpu = timed(mdav_groups, small, K)
    reference, base_wall, base_cpu = timed(reference_mdav, small, K)
    same = "identical groups" if np.array_equal(labels, reference) else "GROUPS DIFFER"
    line("CASC resampled, ours (exact)", baseline_n, 13, wall, cpu, il(small, labels))
    line(
        "CASC resampled, numpy baseline",
        baseline_n,
        13,
        base_wall,
        base_cpu,
        il(small, reference),
        f"ratio {base_cpu / max(cpu, 1e-9):.0f}x (cpu), {same}",
    )

    X = resampled(casc, exact_n, seed=2)
    (exact, _), wall, cpu = timed(mdav_groups, X, K)
    exact_il = il(X, exact)
    line("CASC resampled, ours (exact)", exact_n, 13, wall, cpu, exact_il)
    scale = (exact_n / baseline_n) ** 2
    print(
        f"{'CASC resampled, numpy baseline (extrapolated)':<44} {exact_n:>9,} x 13  "
        f"{base_wall * scale:9.0f} s {base_cpu * scale:9.0f} s cpu   (measured on {baseline_n:,} records "
        f"x (n ratio)^2 = {scale:.0f}); ratio {base_cpu * scale / max(cpu, 1e-9):.0f}x (cpu)"
    )
    few = np.ascontiguousarray(X[:, :4])  # a few attributes: AFNLWGT, AGI, EMCONTRB, FEDTAX
    (few_labels, _), few_wall, few_cpu = timed(mdav_groups, few, K)
    line("CASC resampled, 4 attributes, ours (exact)", exact_n, 4, few_wall, few_cpu, il(few, few_labels))
    del few, few_labels
    (blocks_labels, blocks), wall, cpu = timed(mdav_groups, X, K, partition_size=args.partition_size)
    blocks_il = il(X, blocks_labels)
    line(
        f"ours, approximate (blocks <= {args.partition_size:,})",
        exact_n,
        13,
        wall,
        cpu,
        blocks_il,
        f"{blocks} blocks; SSE/SST {blocks_il / exact_il:.3f} x exact",
    )
    del X, exact, blocks_labels

    sizes = args.exact_sizes or ("10000,20000" if args.quick else "10000,100000,1000000")
    exact_at_scale(casc, [int(size) for size in sizes.split(",")], args.scan_up_to)
    vmdav_at_scale(casc, [int(size) for size in sizes.split(",")], args.scan_up_to)

    X = resampled(casc, large_n, seed=3)
    (labels, blocks), wall, cpu = timed(mdav_groups, X, K, partition_size=args.partition_size)
    sizes = np.bincount(labels)
    line(
        f"ours, approximate (blocks <= {args.partition_size:,})",
        large_n,
        13,
        wall,
        cpu,
        il(X, labels),
        f"{blocks} blocks; groups {sizes.min()}..{sizes.max()} records",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
