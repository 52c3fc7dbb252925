"""Benchmark: record linkage (``sdckit risk linkage``) on Adult, each against a baseline in the same run.

1. Distance-based linkage of Adult (30,162 records; quasi-identifiers age (numeric), sex, race,
   marital-status, education, native-country, workclass) against a masked copy: age + rounded
   Gaussian noise (sd 1.5), each categorical value replaced with probability 0.05 by the value of a
   random record (seed 1). Ours: ``record_linkage(method="distance")`` (KD-tree). Baseline: the
   direct computation, blocks of released rows against every original record with numpy (the full
   distance matrix, a block at a time), on a subsample of released rows, extrapolated to all rows;
   the subsample's credits and ranks are checked equal to ours.
2. The same on 200,000 × 200,000 records (Adult rows resampled with replacement, masked alike).
3. All-numeric data, ``--records`` records of three standard normal attributes plus noise of sd
   0.3: ours goes through the KD-tree; the same numpy baseline.
4. Fellegi–Sunter with blocking (education, workclass, marital-status: 34.5 million pairs) on the
   Adult with the categorical values swapped as above but age left exact (with noisy ages no
   attribute but age separates matches, and both EMs fit a class that is not the matches);
   compared: age, sex, race, native-country.
   Ours on all records; against the ``recordlinkage`` package (Index.block, Compare.exact,
   ECMClassifier) on the first ``--fs-sample`` records of both files, ours on the same sample: its
   ECM on all of Adult's 34.5 million pairs takes minutes, so the comparison is subsampled (said in
   the output). Skipped with a message when recordlinkage is not installed (it is not a dependency:
   ``pip install recordlinkage`` in the benchmark environment only).

Gower section: ``--distance gower`` (sdcMicro's recordLinkage distance) on Adult resampled to 10^4
and 10^5 records (``--gower``), against numpy computing every distance in blocks (extrapolated from
1,000 released rows), same credits and ranks checked.

Usage: ``python benchmarks/_evaluation_linkage.py [--quick] [--records N] [--fs-sample N] [--gower N,M]
[--gower-only]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ADULT, adult_missing, peak_rss_mib, print_header  # noqa: E402

QUASI = ["age", "sex", "race", "marital-status", "education", "native-country", "workclass"]
CATEGORICAL = QUASI[1:]
BLOCKING = "education,workclass,marital-status"
CONFIG = {
    "data": {"delimiter": ";"},
    "attributes": {
        "age": {"role": "quasi-identifier", "kind": "numeric"},
        **{name: {"role": "quasi-identifier", "kind": "categorical"} for name in CATEGORICAL},
        "occupation": {"role": "sensitive", "kind": "categorical"},
        "salary-class": {"role": "sensitive", "kind": "categorical"},
    },
}


def mask(frame: pl.DataFrame, seed: int, age_sd: float = 1.5) -> pl.DataFrame:
    """Age + round(N(0, age_sd)); each categorical value swapped with probability 0.05 for the value
    of a random record."""
    rng = np.random.default_rng(seed)
    n = frame.height
    columns = {"age": frame["age"].to_numpy() + np.rint(rng.normal(0, age_sd, n)).astype(np.int64)}
    for name in CATEGORICAL:
        values = frame[name].to_numpy()
        swap = rng.random(n) < 0.05
        columns[name] = np.where(swap, values[rng.integers(0, n, n)], values)
    return frame.with_columns(pl.Series(name, values) for name, values in columns.items())


def tables(original: pl.DataFrame, release: pl.DataFrame):
    from sdckit.config import parse_config

    settings = parse_config(CONFIG)
    return settings.read(original), settings.read_release(release)


def _category_codes(
    original: pl.DataFrame, release: pl.DataFrame
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The categorical attributes of both files as codes over the categories they share."""
    codes, release_codes = [], []
    for name in CATEGORICAL:
        categories = pl.concat([original[name], release[name]]).unique().sort()
        to_code = {value: code for code, value in enumerate(categories.to_list())}
        codes.append(np.array([to_code[v] for v in original[name].to_list()]))
        release_codes.append(np.array([to_code[v] for v in release[name].to_list()]))
    return codes, release_codes


def brute_force(original: pl.DataFrame, release: pl.DataFrame, rows: np.ndarray, block: int):
    """Credit and rank of the given released rows by the full distances to every original record,
    ``block`` released rows at a time (numpy)."""
    age = original["age"].to_numpy().astype(float)
    mean, sd = age.mean(), age.std(ddof=1)
    z = (age - mean) / sd
    rz = (release["age"].to_numpy().astype(float) - mean) / sd
    codes, release_codes = _category_codes(original, release)
    credit = np.empty(len(rows))
    rank = np.empty(len(rows), dtype=np.int64)
    for start in range(0, len(rows), block):
        part = rows[start : start + block]
        squared = (rz[part, None] - z[None, :]) ** 2
        for original_codes, released in zip(codes, release_codes, strict=True):
            squared += released[part, None] != original_codes[None, :]
        d = np.sqrt(squared)
        best = d.min(axis=1)
        ties = d <= best[:, None] + 1e-12
        true = d[np.arange(len(part)), part]
        linked = true <= best + 1e-12
        credit[start : start + len(part)] = np.where(linked, 1 / ties.sum(axis=1), 0.0)
        rank[start : start + len(part)] = np.where(linked, 1, 1 + (d < true[:, None] - 1e-12).sum(axis=1))
    return credit, rank


def distance_section(label: str, original: pl.DataFrame, sample: int, block: int) -> None:
    from sdckit.risk.linkage import LinkageParams, record_linkage

    release = mask(original, seed=1)
    o, r = tables(original, release)
    n = o.n_records
    started = time.perf_counter()
    result = record_linkage(o, r, LinkageParams(method="distance"))
    ours = time.perf_counter() - started
    d = result.distance
    rows = np.random.default_rng(2).choice(n, size=min(sample, n), replace=False)
    started = time.perf_counter()
    credit, rank = brute_force(original, release, rows, block)
    baseline = (time.perf_counter() - started) * n / len(rows)
    agree = bool(np.allclose(credit, d.credit[rows]) and np.array_equal(rank, d.rank[rows]))
    figures = result.summary()["distance"]
    print(f"\n{label}: {n:,} × {n:,} records, distance-based linkage over {len(QUASI)} quasi-identifiers")
    print(
        f"  ours (cell search; KD-tree for {d.kd_tree_records:,} records)  {ours:8.2f} s   linked "
        f"{figures['linked_percent']:.2f}% ({figures['linked_records']:,} records at the nearest distance), "
        f"mean rank {figures['mean_rank']:.2f}"
    )
    print(
        f"  baseline (numpy, full distances in blocks of {block})  {baseline:8.2f} s extrapolated from "
        f"{len(rows):,} released rows; same credits and ranks on them: {agree}"
    )
    print(f"  ratio baseline / ours: {baseline / ours:.1f}×   peak memory so far {peak_rss_mib():,.0f} MiB")


def numeric_section(n: int, sample: int) -> None:
    """All-numeric data (three standard normal attributes, noise of sd 0.02): the KD-tree path."""
    from sdckit.config import parse_config
    from sdckit.risk.linkage import LinkageParams, record_linkage

    rng = np.random.default_rng(4)
    names = ["x", "y", "z"]
    original = pl.DataFrame({name: rng.normal(0, 1, n) for name in names})
    release = original.with_columns(pl.col(name) + rng.normal(0, 0.02, n) for name in names)
    settings = parse_config(
        {"attributes": {name: {"role": "quasi-identifier", "kind": "numeric"} for name in names}}
    )
    o, r = settings.read(original), settings.read_release(release)
    started = time.perf_counter()
    result = record_linkage(o, r, LinkageParams(method="distance"))
    ours = time.perf_counter() - started
    d = result.distance
    rows = np.random.default_rng(5).choice(n, size=sample, replace=False)
    x, y = original.to_numpy(), release.to_numpy()
    mean, sd = x.mean(axis=0), x.std(axis=0, ddof=1)
    x, y = (x - mean) / sd, (y - mean) / sd
    started = time.perf_counter()
    credit = np.empty(sample)
    for start in range(0, sample, 100):
        part = rows[start : start + 100]
        dist = np.sqrt(((y[part, None, :] - x[None, :, :]) ** 2).sum(axis=2))
        best = dist.min(axis=1)
        ties = dist <= best[:, None] + 1e-12
        linked = dist[np.arange(len(part)), part] <= best + 1e-12
        credit[start : start + len(part)] = np.where(linked, 1 / ties.sum(axis=1), 0.0)
    baseline = (time.perf_counter() - started) * n / sample
    agree = bool(np.allclose(credit, d.credit[rows]))
    figures = result.summary()["distance"]
    print(f"\nNumeric only: {n:,} × {n:,} records, 3 standard normal attributes + noise of sd 0.02")
    print(
        f"  ours (KD-tree for {d.kd_tree_records:,} records)  {ours:8.2f} s   linked "
        f"{figures['linked_percent']:.2f}%, mean rank {figures['mean_rank']:.2f}"
    )
    print(
        f"  baseline (numpy, full distances in blocks of 100)  {baseline:8.2f} s extrapolated from "
        f"{sample:,} released rows; same credits on them: {agree}"
    )
    print(f"  ratio baseline / ours: {baseline / ours:.1f}×   peak memory so far {peak_rss_mib():,.0f} MiB")


def fellegi_sunter_section(original: pl.DataFrame, fs_sample: int) -> None:
    from sdckit.risk.linkage import LinkageParams, record_linkage

    release = mask(original, seed=1, age_sd=0.0)
    o, r = tables(original, release)
    params = LinkageParams(method="probabilistic", blocking=BLOCKING, max_pairs=50_000_000)
    started = time.perf_counter()
    full = record_linkage(o, r, params)
    ours_full = time.perf_counter() - started
    p = full.summary()["probabilistic"]
    print(f"\nFellegi–Sunter on Adult ({o.n_records:,} records), blocking on {BLOCKING}")
    print(
        f"  ours, all records  {ours_full:8.2f} s: {p['pairs']:,} pairs, {p['patterns']} patterns, "
        f"{p['iterations']} EM iterations, links {p['links']:,}, true matches linked "
        f"{100 * p['true_links_share']:.2f}%, false matches {p['false_matches']:,}"
    )
    print(f"  peak memory so far {peak_rss_mib():,.0f} MiB")
    if importlib.util.find_spec("recordlinkage") is None:
        print(
            "  recordlinkage is not installed: comparison skipped "
            "(pip install recordlinkage in the benchmark environment only)"
        )
        return
    import recordlinkage

    sample_original, sample_release = original.head(fs_sample), release.head(fs_sample)
    o, r = tables(sample_original, sample_release)
    started = time.perf_counter()
    ours = record_linkage(o, r, params)
    ours_time = time.perf_counter() - started
    q = ours.summary()["probabilistic"]
    left, right = sample_release.to_pandas(), sample_original.to_pandas()
    started = time.perf_counter()
    indexer = recordlinkage.Index()
    indexer.block(BLOCKING.split(","))
    pairs = indexer.index(left, right)
    compare = recordlinkage.Compare()
    compared = [name for name in QUASI if name not in BLOCKING.split(",")]
    for name in compared:
        compare.exact(name, name, label=name)
    features = compare.compute(pairs, left, right)
    classifier = recordlinkage.ECMClassifier(binarize=0.5)
    matches = classifier.fit_predict(features)
    theirs = time.perf_counter() - started
    true = int(sum(a == b for a, b in matches))
    print(
        f"  on the first {fs_sample:,} records of both files (recordlinkage's ECM on all 34.5 million pairs "
        "takes minutes):"
    )
    print(
        f"    ours           {ours_time:8.2f} s: {q['pairs']:,} pairs, links {q['links']:,}, true matches "
        f"linked {100 * q['true_links_share']:.2f}%; m {_rounded(q['m'])}"
    )
    m = {name: float(values.get(1, np.nan)) for name, values in classifier.m_probs.items()}
    print(
        f"    recordlinkage  {theirs:8.2f} s: {len(pairs):,} pairs, matches {len(matches):,}, true matches "
        f"{100 * true / fs_sample:.2f}% (ECM, posterior ≥ 0.5); m {_rounded(m)}"
    )
    print(
        f"    ratio recordlinkage / ours: {theirs / ours_time:.1f}×   "
        f"peak memory so far {peak_rss_mib():,.0f} MiB"
    )


def gower_baseline(original: pl.DataFrame, release: pl.DataFrame, rows: np.ndarray, block: int):
    """Gower's distance (daisy: |x - y| over the range of both files, 0/1 per category, equal
    weights) from the given released rows to every original, ``block`` rows at a time (numpy):
    credit and rank as the nearest-neighbour rule gives them."""
    age, released_age = original["age"].to_numpy().astype(float), release["age"].to_numpy().astype(float)
    span = max(age.max(), released_age.max()) - min(age.min(), released_age.min()) or 1.0
    codes, release_codes = _category_codes(original, release)
    credit = np.empty(len(rows))
    rank = np.empty(len(rows), dtype=np.int64)
    for start in range(0, len(rows), block):
        part = rows[start : start + block]
        total = np.abs(released_age[part, None] - age[None, :]) / span
        for original_codes, released in zip(codes, release_codes, strict=True):
            total += released[part, None] != original_codes[None, :]
        d = total / len(QUASI)
        best = d.min(axis=1)
        ties = d <= best[:, None] + 1e-12
        true = d[np.arange(len(part)), part]
        linked = true <= best + 1e-12
        credit[start : start + len(part)] = np.where(linked, 1 / ties.sum(axis=1), 0.0)
        rank[start : start + len(part)] = np.where(linked, 1, 1 + (d < true[:, None] - 1e-12).sum(axis=1))
    return credit, rank


def gower_section(adult: pl.DataFrame, n: int, sample: int, block: int) -> None:
    """Gower's distance (``--distance gower``, sdcMicro's recordLinkage) on Adult resampled to n."""
    from sdckit.risk.linkage import LinkageParams, record_linkage

    original = adult[np.random.default_rng(5).integers(0, adult.height, n)]
    release = mask(original, seed=1)
    o, r = tables(original, release)
    started = time.perf_counter()
    result = record_linkage(o, r, LinkageParams(method="distance", distance="gower"))
    ours = time.perf_counter() - started
    d = result.distance
    assert d is not None
    rows = np.random.default_rng(2).choice(n, size=min(sample, n), replace=False)
    started = time.perf_counter()
    credit, rank = gower_baseline(original, release, rows, block)
    baseline = (time.perf_counter() - started) * n / len(rows)
    agree = bool(np.allclose(credit, d.credit[rows]) and np.array_equal(rank, d.rank[rows]))
    distinct = (original.select(QUASI).unique().height, release.select(QUASI).unique().height)
    print(f"\nGower (--distance gower), Adult resampled: {n:,} × {n:,} records over {len(QUASI)} attributes")
    print(
        f"  ours (compiled scan of {distinct[1]:,} distinct released × {distinct[0]:,} distinct original"
        f" rows) {ours:8.2f} s   linked {result.summary()['distance']['linked_percent']:.2f}%"
    )
    print(
        f"  baseline (numpy, all distances in blocks of {block})  {baseline:8.2f} s extrapolated from "
        f"{len(rows):,} released rows; same credits and ranks on them: {agree}"
    )
    print(f"  ratio baseline / ours: {baseline / ours:.1f}×   peak memory so far {peak_rss_mib():,.0f} MiB")


def _rounded(values: dict) -> str:
    return "{" + ", ".join(f"{k}: {v:.3f}" for k, v in values.items()) + "}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="20,000 resampled records, 3,000 in the FS sample"
    )
    parser.add_argument("--records", type=int, default=200_000, help="Resampled records of section 2.")
    parser.add_argument(
        "--fs-sample", type=int, default=10_000, help="Records of the recordlinkage comparison."
    )
    parser.add_argument(
        "--gower", default="10000,100000", help="Record counts of the Gower section (comma-separated)."
    )
    parser.add_argument("--gower-only", action="store_true", help="Run only the Gower section.")
    args = parser.parse_args(argv)
    if args.quick:
        args.records, args.fs_sample = 20_000, 3_000
    print_header(argv, packages=("polars", "numpy", "numba", "scipy", "recordlinkage"))
    missing = adult_missing()
    if missing:
        print(f"skipped: {missing}")
        return 0
    adult = pl.read_csv(ADULT / "adult.csv", separator=";")
    warm_up = adult.head(300)
    from sdckit.risk.linkage import LinkageParams, record_linkage

    record_linkage(*tables(warm_up, mask(warm_up, 0)), LinkageParams(blocking="sex"))  # compile, import
    small_original, small_release = tables(warm_up, mask(warm_up, 0))
    record_linkage(small_original, small_release, LinkageParams(method="distance", distance="gower"))
    for count in (int(text) for text in args.gower.split(",") if text.strip()):
        gower_section(adult, count, sample=1_000, block=100)
    if args.gower_only:
        return 0
    distance_section("Adult vs masked Adult", adult, sample=3_000, block=500)
    resampled = adult[np.random.default_rng(3).integers(0, adult.height, args.records)]
    distance_section("Adult resampled", resampled, sample=1_000, block=100)
    numeric_section(args.records, sample=1_000)
    fellegi_sunter_section(adult, args.fs_sample)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
