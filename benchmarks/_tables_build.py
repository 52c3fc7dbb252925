"""Benchmark part: building tables from 1,000,000 records (issue 15 item 1) — frequency and magnitude
tables with hierarchies and the two largest contributions per cell, against a polars group-by of the
interior cells (the baseline: what any table needs at least), with peak memory."""

from __future__ import annotations

import sys
import time

import polars as pl

from _common import peak_rss_mib, print_header
from _tables_data import enterprises, hierarchies, two_way
from sdckit.tabular.build import TableSpec, build_table


def best(function, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return min(times)


def main(argv: list[str] | None = None) -> int:
    print_header(argv, packages=("polars", "numpy"))
    data3 = enterprises()
    data2 = two_way()
    cases = [
        ("2-D 50x50 frequency", data2, TableSpec.of("row", "col", top=0), ["row", "col"]),
        ("2-D 50x50 turnover + top 2", data2, TableSpec.of("row", "col", value="turnover"), ["row", "col"]),
        (
            "3-D hierarchical turnover + top 2",
            data3,
            TableSpec.of("district", "activity", "size", value="turnover", hierarchies=hierarchies()),
            ["district", "activity", "size"],
        ),
        (
            "3-D hierarchical, holdings",
            data3,
            TableSpec.of(
                "district", "activity", "size", value="turnover", hierarchies=hierarchies(), holding="firm"
            ),
            ["district", "activity", "size"],
        ),
    ]
    print(f"{'table':36} {'records':>9} {'cells':>7} {'sdckit s':>9} {'group-by s':>10} {'ratio':>6}")
    worst = 0.0
    for name, data, spec, dims in cases:
        built = build_table(data, spec)
        ours = best(lambda data=data, spec=spec: build_table(data, spec))
        base = best(
            lambda data=data, dims=dims: data.data.group_by(dims).agg(pl.len(), pl.col("turnover").sum())
        )
        worst = max(worst, ours / base)
        print(
            f"{name:36} {data.n_records:>9,} {built.n_cells:>7,} {ours:>9.3f} {base:>10.3f} "
            f"{ours / base:>6.1f}"
        )
    print(
        f"worst ratio      {worst:.1f}x a group-by of the interior cells (which has no margins, "
        "subtotals, relations or contributions)"
    )
    print(f"peak RSS         {peak_rss_mib():.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
