"""Benchmark of synthetic data (issue 14): fully synthetic Adult, M = 5 implicates, CART.

    .venv/bin/python benchmarks/bench_synthesis.py [--m 5] [--records N]

Adult (``../shared/data/adult/adult.csv``, ``;``-separated, 30,162 records, 9 columns, all read as
categories) is synthesized by

* ours: ``sdckit.anonymize.synthesis.synthesize(model="cart")`` — sparse one-hot predictors built once
  per attribute, one tree per attribute (its fit sees original data only, so it serves every
  implicate), the M implicates applied to it together, values drawn by a vectorized Bayesian
  bootstrap of the leaves;
* a straightforward per-attribute loop with scikit-learn defaults, measured in the same run: for each
  implicate, the first attribute resampled from the original, then for each later attribute a
  ``OneHotEncoder()`` of the earlier ones and a ``DecisionTreeClassifier()`` (default parameters: leaves
  of one record) fitted on the original and ``predict_proba`` on the synthetic predictors, the value
  drawn from the predicted class probabilities.

Each is timed once (wall clock, scikit-learn imported before; the trees dominate). Peak memory:
Python-level peak (tracemalloc, which sees numpy's buffers) of each phase, and the process's peak
resident memory at the end. As a check that both produce usable data, the mean total-variation
distance between the original and the synthetic marginals of implicate 1 (0 = identical marginals)
is printed for both. Skips (exit 0) when the Adult data is absent.
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc

import numpy as np
import polars as pl

from _common import ADULT, adult_missing, peak_rss_mib, print_header


def baseline(frame: pl.DataFrame, m: int, seed: int) -> list[pl.DataFrame]:
    """The straightforward loop (see the module docstring)."""
    from sklearn.preprocessing import OneHotEncoder
    from sklearn.tree import DecisionTreeClassifier

    rng = np.random.default_rng(seed)
    original = {name: frame.get_column(name).fill_null("").to_numpy().astype(str) for name in frame.columns}
    names = frame.columns
    n = frame.height
    implicates = []
    for _ in range(m):
        synthetic = {names[0]: original[names[0]][rng.integers(0, n, n)]}
        for j in range(1, len(names)):
            encoder = OneHotEncoder(handle_unknown="ignore")
            x_fit = encoder.fit_transform(np.column_stack([original[p] for p in names[:j]]))
            x_gen = encoder.transform(np.column_stack([synthetic[p] for p in names[:j]]))
            tree = DecisionTreeClassifier().fit(x_fit, original[names[j]])
            probabilities = tree.predict_proba(x_gen)
            cumulative = np.cumsum(probabilities, axis=1)
            chosen = (rng.random(n)[:, None] >= cumulative).sum(axis=1)
            synthetic[names[j]] = tree.classes_[np.minimum(chosen, len(tree.classes_) - 1)]
        implicates.append(pl.DataFrame(synthetic))
    return implicates


def total_variation(original: pl.DataFrame, synthetic: pl.DataFrame) -> float:
    """Mean over the columns of ½ Σ |p − q| between the marginal shares."""
    distances = []
    for name in original.columns:
        p = original.get_column(name).fill_null("").value_counts(normalize=True, name="p")
        q = synthetic.get_column(name).cast(pl.String).fill_null("").value_counts(normalize=True, name="q")
        joined = p.join(q, on=name, how="full", coalesce=True).fill_null(0.0)
        distances.append(0.5 * float((joined["p"] - joined["q"]).abs().sum()))
    return float(np.mean(distances))


def measure(function):
    tracemalloc.start()
    started = time.perf_counter()
    result = function()
    elapsed = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return elapsed, peak / 2**20, result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--m", type=int, default=5, help="implicates (default 5)")
    parser.add_argument("--records", type=int, default=None, help="use the first N records of Adult")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    print_header(argv, packages=("polars", "numpy", "scikit-learn", "scipy"))
    why = adult_missing()
    if why:
        print(f"skipped: {why}")
        return 0
    import sklearn.preprocessing  # noqa: F401 (imported before the clocks start, for both)
    import sklearn.tree  # noqa: F401

    from sdckit.anonymize.synthesis import synthesize
    from sdckit.table import Table

    frame = pl.read_csv(ADULT / "adult.csv", separator=";", infer_schema=False)
    if args.records:
        frame = frame.head(args.records)
    table = Table.from_frame(frame)
    print(
        f"data             Adult, {frame.height:,} records, {frame.width} categorical columns; M = {args.m}"
    )

    ours_time, ours_peak, release = measure(lambda: synthesize(table, m=args.m, model="cart", seed=args.seed))
    ours_first = release.table.data.filter(pl.col("implicate") == 1).drop("implicate")
    print(
        f"ours             {ours_time:8.2f} s   Python peak {ours_peak:8.1f} MiB   "
        f"marginal TV distance (implicate 1) {total_variation(frame, ours_first):.4f}"
    )
    base_time, base_peak, implicates = measure(lambda: baseline(frame, args.m, args.seed))
    print(
        f"baseline         {base_time:8.2f} s   Python peak {base_peak:8.1f} MiB   "
        f"marginal TV distance (implicate 1) {total_variation(frame, implicates[0]):.4f}"
    )
    print(
        f"ratio            baseline / ours = {base_time / ours_time:.1f}x time, "
        f"{base_peak / max(ours_peak, 1e-9):.2f}x Python peak memory"
    )
    print(f"peak RSS         {peak_rss_mib():.0f} MiB (whole process, both runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
