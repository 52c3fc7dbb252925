"""Benchmark: ``risk reidentification``'s ``alpha`` (sdcMicro's freqCalc) and ``max_global_risk``
(global_threshold) against the default measure run in the same process (the plain wildcard count,
no threshold), at 10^5 and 10^6 records.

The data: five categorical keys (10, 20, 5, 50 and 8 values, uniform), each missing in 5% of the
records at random, and sampling weights in [1, 100). Each figure is the best of three runs; the ratio
is against the default; peak memory of the process after each size.

    python benchmarks/bench_reidentification_alpha.py
    python benchmarks/bench_reidentification_alpha.py --records 100000
"""

from __future__ import annotations

import argparse

import numpy as np
import polars as pl

from _common import best_time, peak_rss_mib, print_header

CARDINALITIES = (10, 20, 5, 50, 8)


def _table(n: int):
    from sdckit.table import Attribute, Kind, Role, Schema, Table

    rng = np.random.default_rng(1)
    columns = {}
    for j, size in enumerate(CARDINALITIES):
        values = rng.integers(0, size, n)
        missing = rng.random(n) < 0.05
        columns[f"k{j}"] = pl.Series(values).set(pl.Series(missing), None)
    columns["w"] = pl.Series(rng.uniform(1, 100, n))
    frame = pl.DataFrame(columns)
    schema = Schema(
        (
            *(Attribute(name, Role.QUASI_IDENTIFIER, Kind.CATEGORICAL) for name in columns if name != "w"),
            Attribute("w", Role.INSENSITIVE, Kind.NUMERIC),
        )
    )
    return Table(frame, schema)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, action="append", help="sizes (default 10^5 and 10^6)")
    sizes = parser.parse_args().records or [100_000, 1_000_000]
    from sdckit.risk.reidentification import reidentification_risk

    print_header(None)
    for n in sizes:
        table = _table(n)
        reidentification_risk(table, weights="w", alpha=0.5, max_global_risk=0.01)  # compile, warm caches
        base, default = best_time(lambda table=table: reidentification_risk(table, weights="w"))
        print(f"{n:>9,} records  default            {base:7.3f} s  1.00x")
        for label, options in (
            ("alpha 0.5", {"alpha": 0.5}),
            ("max_global_risk", {"max_global_risk": 0.01}),
            ("both", {"alpha": 0.5, "max_global_risk": 0.01}),
        ):
            seconds, result = best_time(
                lambda table=table, options=options: reidentification_risk(table, weights="w", **options)
            )
            lower = bool(np.all(result.fk <= default.fk + 1e-9))  # alpha < 1 never counts more
            print(f"{'':>17}{label:<19}{seconds:7.3f} s  {seconds / base:.2f}x  fk <= default: {lower}")
        print(f"{'':>17}peak memory {peak_rss_mib():,.0f} MiB")


if __name__ == "__main__":
    main()
