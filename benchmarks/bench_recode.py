"""Benchmark: global recoding into intervals (``recode --breaks``, sdcMicro's globalRecode, issue 37)
against the straightforward polars baseline in the same process.

For 10^5 and 10^6 records of a skewed numeric attribute (lognormal incomes, 5% missing), each of
explicit cut points and 10 intervals by equidistant, logEqui and equalAmount is timed through
``run_method("recode", ...)`` (cut points, labels, interval numbers, the release and its figures)
and as a baseline: the same cut points (computed with numpy) given to polars' ``Expr.cut`` with
R's labels (the work any tool does). Best of three; peak memory of the process after each size.

    python benchmarks/bench_recode.py            # 10^5 and 10^6 records
    python benchmarks/bench_recode.py --records 100000
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import polars as pl

from _common import best_time, peak_rss_mib, print_header


def _data(records: int, seed: int = 1) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    income = np.round(rng.lognormal(10, 1, records), 2)
    missing = rng.random(records) < 0.05
    return pl.DataFrame({"income": pl.Series(income).set(pl.Series(missing), None)})


def _case(frame: pl.DataFrame, breaks, method: str | None) -> tuple[float, float, bool]:
    """sdckit's and the baseline's best times on ``frame`` and whether they agree."""
    from sdckit.anonymize._recode_intervals import computed_breaks, r_labels
    from sdckit.anonymize.base import run_method
    from sdckit.table import Table

    table = Table.from_frame(frame)
    values = frame.get_column("income").drop_nulls().to_numpy()
    params = {"attribute": "income", "breaks": breaks, **({"cut_method": method} if method else {})}
    ours, release = best_time(lambda: run_method("recode", table, params))

    def baseline():
        points, closed = (
            (np.array(breaks, dtype=float), False)
            if method is None
            else computed_breaks(values, breaks, method, "income")
        )
        labels = r_labels(points.tolist(), closed)
        # polars' cut: (a, b] intervals between the inner points (a closed lowest interval's lowest
        # value falls in the first one as well).
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            cut = pl.col("income").cut(points[1:-1].tolist(), labels=labels)
        return frame.select(cut.cast(pl.String))

    base, expected = best_time(baseline)
    same = release.table.data.get_column("income").equals(expected.to_series(), null_equal=True)
    return ours, base, same


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, nargs="*", default=[100_000, 1_000_000])
    args = parser.parse_args(argv)
    print_header(argv)

    header = f"{'records':>9} {'breaks':<22} {'sdckit s':>9} {'polars s':>9} {'ratio':>6} {'same':>5}"
    print(f"{header} {'peak MiB':>9}")
    for records in args.records:
        frame = _data(records)
        cases = [("cut points", [0, 10_000, 20_000, 50_000, 100_000, float("inf")], None)]
        cases += [(f"10 {method}", 10, method) for method in ("equidistant", "logEqui", "equalAmount")]
        for label, breaks, method in cases:
            ours, base, same = _case(frame, breaks, method)
            print(
                f"{records:>9,} {label:<22} {ours:>9.3f} {base:>9.3f} {base / ours:>5.2f}x {str(same):>5} "
                f"{peak_rss_mib():>9.0f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
