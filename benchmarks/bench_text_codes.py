"""Benchmark: coding text columns to their hierarchy's leaves (``Hierarchy.text_leaf_codes``).

The leaf codes of the text quasi-identifiers are the first step of ``full_domain_generalization``
(``recoding._combinations``). Two ways, timed in the same run on the same columns:

* ours: ``Hierarchy.text_leaf_codes`` per column, a compiled byte-for-byte look-up of polars' Arrow
  string views in a hash table of the leaves;
* baseline: the polars Enum cast, ``frame.select([h.leaf_code_expression(c) ...])`` (all the columns
  in one parallel ``select``, as ``_combinations`` did).

Shapes:

* Adult: the UCI Adult extract ARX ships (``../shared/data/adult`` relative to the project root;
  30,162 records, the 9 columns read as text, ARX's hierarchies ``adult_hierarchy_<column>.csv``);
  skipped with a message when the data is absent;
* synthetic: 1,000,000 records, 4 text columns drawn at random (numpy ``default_rng(0)``) from long
  labels (21 to 40 bytes, 50 / 500 / 5,000 of them) and from a mix of short, long and multi-byte
  ones with 1% missing values.

Each way is called untimed 5 times, then 25 times alternately with the other; the figure is the median
CPU time (``time.process_time``, all threads) of a call, for all the columns of the shape together.
Printed per shape: both medians and the ratio ours / baseline (the worst shape last), and the peak
resident memory of the process at the end. The codes of both ways are checked to be equal. Usage::

    python benchmarks/bench_text_codes.py [--records N] [--repeats R]

``run(print_fn=print)`` runs everything and returns the figures as a dict.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import polars as pl

from _common import ADULT_COLUMNS, adult_missing, load_adult_text, peak_rss_mib, print_header
from sdckit.hierarchy import Hierarchy

COLUMNS = ADULT_COLUMNS
RECORDS = 1_000_000
REPEATS = 25
WARM_UP = 5


def load_adult() -> tuple[pl.DataFrame, dict[str, Hierarchy]]:
    """The Adult records as text (as read, several chunks a column) and a hierarchy per column."""
    return load_adult_text()


def synthetic(records: int, seed: int = 0) -> tuple[pl.DataFrame, dict[str, Hierarchy]]:
    """``records`` rows of 4 text columns with long labels (see the module's docstring)."""
    rng = np.random.default_rng(seed)
    domains = {
        f"long_{n}": [f"category {i:05d} of the domain" + "x" * (i % 15) for i in range(n)]
        for n in (50, 500, 5000)
    }
    domains["mixed"] = [
        *(f"v{i}" for i in range(20)),
        *(f"value number {i} of a long list" for i in range(20)),
        *("é中😀" * (1 + i % 4) + str(i) for i in range(20)),
    ]
    columns = {}
    for name, labels in domains.items():
        values = np.array(labels, dtype=object)[rng.integers(0, len(labels), records)]
        if name == "mixed":
            values[rng.random(records) < 0.01] = None
        columns[name] = pl.Series(name, values, dtype=pl.String)
    hierarchies = {
        name: Hierarchy(
            name, (tuple(labels), ("*",)), np.column_stack([np.arange(len(labels)), np.zeros(len(labels))])
        )
        for name, labels in domains.items()
    }
    return pl.DataFrame(columns), hierarchies


def time_shape(
    name: str,
    frame: pl.DataFrame,
    hierarchies: dict[str, Hierarchy],
    repeats: int,
    print_fn: Callable[[str], None],
) -> dict[str, Any]:
    names = list(hierarchies)

    def ours() -> list[np.ndarray]:
        return [hierarchies[c].text_leaf_codes(frame.get_column(c)) for c in names]

    def baseline() -> pl.DataFrame:
        return frame.select([hierarchies[c].leaf_code_expression(c) for c in names])

    coded = baseline()
    for column, codes in zip(names, ours(), strict=True):
        expected = coded.get_column(column).cast(pl.Int32).fill_null(-1).to_numpy()
        if codes is None or not np.array_equal(codes, expected):
            raise SystemExit(f"{name}: the codes of '{column}' differ from the Enum cast's")
    for _ in range(WARM_UP):
        ours()
        baseline()
    seconds: dict[str, list[float]] = {"ours": [], "baseline": []}
    for _ in range(repeats):
        for way, call in (("ours", ours), ("baseline", baseline)):
            started = time.process_time()
            call()
            seconds[way].append(time.process_time() - started)
    figures = {way: statistics.median(values) for way, values in seconds.items()}
    figures["ratio"] = figures["ours"] / figures["baseline"]
    print_fn(
        f"{name:10s} {frame.height:>9,} records x {len(names)} columns: "
        f"ours {figures['ours'] * 1e3:8.2f} ms, baseline {figures['baseline'] * 1e3:8.2f} ms "
        f"(median CPU of {repeats}); "
        f"ours / baseline {figures['ratio']:.3f}"
    )
    return figures


def run(
    print_fn: Callable[[str], None] = print, records: int = RECORDS, repeats: int = REPEATS
) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    missing = adult_missing(COLUMNS)
    if missing:
        print_fn(f"Adult skipped: {missing}")
    else:
        frame, hierarchies = load_adult()
        figures["adult"] = time_shape("Adult", frame, hierarchies, repeats, print_fn)
    frame, hierarchies = synthetic(records)
    figures["synthetic"] = time_shape("synthetic", frame, hierarchies, repeats, print_fn)
    worst = max(figures, key=lambda shape: figures[shape]["ratio"])
    figures["worst"] = worst
    figures["peak_rss_mib"] = peak_rss_mib()
    print_fn(
        f"worst: {worst}, ours / baseline {figures[worst]['ratio']:.3f}; "
        f"peak RSS {figures['peak_rss_mib']:.0f} MiB"
    )
    return figures


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=RECORDS, help="records of the synthetic shape")
    parser.add_argument("--repeats", type=int, default=REPEATS, help="timed calls of each way (median)")
    arguments = parser.parse_args(argv)
    print_header(argv, packages=("polars", "pyarrow", "numpy", "numba"))
    run(records=arguments.records, repeats=arguments.repeats)
    return 0


if __name__ == "__main__":
    sys.exit(main())
