"""Benchmark: local suppression to k-anonymity (``local_suppression``) on Adult.

Reads the UCI Adult extract ARX ships (30,162 records, ``../shared/data/adult/adult.csv`` relative to
the project root, ';'-separated, read as text). Quasi-identifiers: the 8 columns other than
occupation (the sensitive attribute), default importance (more categories = suppressed first),
wildcard treatment of nulls. For k = 2, 3, 5 it reports the time of ``local_suppression`` (best of
``--repeats`` after one untimed call that also loads numba's compiled kernels), the suppressed cells
per attribute and in total, NCP (``release_ncp``: suppressed cells / (n q)), the peak traced memory of
one call (tracemalloc: numpy and Python allocations, not polars'), and the time of a baseline
measured in the same run: a straightforward pandas implementation of the same greedy rule (below),
run once per k. The baseline must suppress exactly the same cells (asserted, cell by cell); every
release is re-checked: each record's wildcard frequency is at least k.

The baseline is "the obvious loop": the distinct patterns with their counts from a pandas
``groupby`` on ``factorize`` codes (the counts are the initial frequencies, exactly, since Adult has
no nulls), then for each violating pattern, in increasing order of frequency, a vectorized
comparison of that pattern with every pattern per step: mismatches where both are non-null, the
frequency (no mismatch), the weight that nulling one attribute adds (one mismatch), and when no
single suppression reaches k, sdcMicro's nearest-pattern rule.

The peak resident memory (ru_maxrss) of the process is reported after our runs and again at the end
(after the baseline).

Then a large run: 1,000,000 records of the example data (``python -m examples.generate --records
1000000 --seed 1``, read with ``examples/example.yaml``), 7 quasi-identifiers (birth_year, gender,
ethnicity, parish, entry_school_year, entry_grade, lunch_status), default importance, k = 3: the time
of one call (after the warm-up), the peak traced memory of a second call and the peak RSS. Skip it
with ``--no-large``. Recorded (one run, 2 CPUs; before the candidate indexes the greedy
scanned every pattern for every violating one): 100,000 of these records 8.0 s -> 1.4 s; 1,009,993
records 64-66 s -> 7.2 s (85,995 violating of 148,808 patterns, 18,773 cells, peak RSS about 1 GiB
for the whole process), with bit-identical suppressed cells.

Exit status 1 when the data is missing, a release fails k-anonymity or the baseline disagrees.
Usage::

    python benchmarks/bench_local_suppression.py [--repeats 3] [--no-large]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from _common import ADULT, adult_missing, peak_rss_mib, print_header

QUASI_IDENTIFIERS = (
    "sex",
    "age",
    "race",
    "marital-status",
    "education",
    "native-country",
    "workclass",
    "salary-class",
)
KS = (2, 3, 5)
PROJECT = Path(__file__).resolve().parents[1]
LARGE_RECORDS = 1_000_000
LARGE_QUASI_IDENTIFIERS = (
    "birth_year",
    "gender",
    "ethnicity",
    "parish",
    "entry_school_year",
    "entry_grade",
    "lunch_status",
)


def missing_data() -> str | None:
    return adult_missing()


# ----------------------------------------------------------------------------------------------
# The baseline: the same greedy rule, straightforwardly on pandas.


def pandas_local_suppression(frame, k: int, order: list[str]):
    """The greedy rule of ``local_suppression`` (wildcard nulls, no weights) on pandas.

    ``order`` lists the quasi-identifiers least important first. Returns the boolean (n x q)
    suppression mask in the column order of ``order``.
    """
    import numpy as np
    import pandas as pd

    data = frame[order]
    if data.isna().any().any():
        raise ValueError(
            "the baseline takes initial frequencies from pattern counts: it needs data without nulls"
        )
    # Integer codes per column (pandas factorize), -1 = null; patterns and counts by groupby.
    codes = pd.DataFrame({name: pd.factorize(data[name])[0] for name in order})
    grouped = codes.groupby(order, sort=False)
    pattern_of_record = grouped.ngroup().to_numpy()
    patterns = grouped.size().reset_index(name="count")
    counts = patterns.pop("count").to_numpy().astype(float)
    values = patterns[order].to_numpy().copy()  # edited in place as suppression proceeds
    frequency = pd.Series(counts)  # no nulls: a pattern's frequency is its count
    violating = frequency[frequency < k].sort_values(kind="stable").index
    suppressed = np.zeros(values.shape, dtype=bool)
    for p in violating:
        while True:
            row = values[p]
            differs = pd.DataFrame((values != row) & (values >= 0) & (row >= 0), columns=order)
            mismatches = differs.sum(axis=1).to_numpy()
            total = counts[mismatches == 0].sum()
            if total >= k:
                break
            gain = differs[mismatches == 1].mul(counts[mismatches == 1], axis=0).sum(axis=0)
            choice = None
            for j, name in enumerate(order):
                if row[j] >= 0 and total + gain[name] >= k:
                    choice = j
                    break
            if choice is None:
                nearest = mismatches[mismatches > 0].min()
                candidates = differs[mismatches == nearest].any(axis=0).to_numpy()
                choice = int(candidates.argmax())
            values[p, choice] = -1
            suppressed[p, choice] = True
    return suppressed[pattern_of_record]


# ----------------------------------------------------------------------------------------------


def run(print_fn=print, repeats: int = 3) -> dict[str, Any]:
    """Run the benchmark; print with ``print_fn``; return the figures (``"problems"`` lists failures)."""
    import numpy as np
    import polars as pl

    from sdckit.anonymize.suppression import local_suppression
    from sdckit.frequency import frequencies
    from sdckit.table import Attribute, Role, Schema, Table
    from sdckit.utility.metrics import release_ncp

    reason = missing_data()
    if reason is not None:
        print_fn(f"bench_local_suppression: {reason}")
        return {"problems": [reason], "rows": []}
    frame = pl.read_csv(ADULT / "adult.csv", separator=";", infer_schema=False)
    names = list(QUASI_IDENTIFIERS)
    described = [Attribute(name, role=Role.QUASI_IDENTIFIER) for name in names]
    described.append(Attribute("occupation", role=Role.SENSITIVE))
    table = Table(frame, Schema.infer(frame, described))
    pandas_frame = frame.to_pandas()

    start = time.perf_counter()
    local_suppression(Table(frame.head(500), table.schema), 2)  # loads (or compiles) the kernels
    warm_up = time.perf_counter() - start

    rows: list[dict[str, Any]] = []
    problems: list[str] = []
    for k in KS:
        release = local_suppression(table, k)  # untimed
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            release = local_suppression(table, k)
            times.append(time.perf_counter() - start)
        tracemalloc.start()
        local_suppression(table, k)
        traced_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        reached = float(frequencies(release.table.data, names, missing="wildcard").min())
        row = {
            "k": k,
            "seconds": min(times),
            "per_attribute": release.suppressed_cells_per_attribute(),
            "cells": release.n_suppressed_cells,
            "violating_records": release.search["violating_records"],
            "ncp": release_ncp(release),
            "traced_peak_mib": traced_peak / 2**20,
            "min_frequency": reached,
            "importance": release.parameters["importance"],
        }
        if reached < k:
            problems.append(f"k={k}: a record has wildcard frequency {reached:g} < k")
        rows.append(row)
    rss_ours = peak_rss_mib()

    for row in rows:
        k = row["k"]
        order = list(reversed(row["importance"]))
        start = time.perf_counter()
        mask = pandas_local_suppression(pandas_frame, k, order)
        row["baseline_seconds"] = time.perf_counter() - start
        release = local_suppression(table, k)
        ours = release.suppressed_cells[:, [names.index(name) for name in order]]
        row["baseline_cells"] = int(mask.sum())
        row["same_cells"] = bool(np.array_equal(mask, ours))
        if not row["same_cells"]:
            problems.append(
                f"k={k}: the pandas baseline suppresses {int(mask.sum())} cells, ours {row['cells']}; "
                f"{int((mask != ours).sum())} cells differ"
            )
    rss_end = peak_rss_mib()

    print_fn(
        f"Adult: {table.n_records:,} records, quasi-identifiers {', '.join(names)} (occupation sensitive); "
        "wildcard nulls; default importance"
    )
    print_fn(f"importance (most important first): {', '.join(rows[0]['importance'])}")
    print_fn(
        f"warm-up (kernel load/compile, 500 records): {warm_up:.2f} s; "
        f"ours: best of {repeats} after 1 untimed call"
    )
    print_fn("")
    short = {"marital-status": "marital", "native-country": "country", "salary-class": "salary"}
    header = (
        f"{'k':>2} {'ours s':>7} {'pandas s':>9} {'ratio':>7} {'violating':>9} {'cells':>6} {'NCP':>7} "
        f"{'traced MiB':>10} {'same':>4}  " + " ".join(f"{short.get(n, n):>9}" for n in names)
    )
    print_fn(header)
    print_fn("-" * len(header))
    for row in rows:
        print_fn(
            f"{row['k']:>2} {row['seconds']:>7.3f} {row['baseline_seconds']:>9.2f} "
            f"{row['baseline_seconds'] / row['seconds']:>6.0f}x {row['violating_records']:>9,} "
            f"{row['cells']:>6,} {row['ncp']:>7.4f} {row['traced_peak_mib']:>10.1f} "
            f"{'yes' if row['same_cells'] else 'NO':>4}  "
            + " ".join(f"{row['per_attribute'][n]:>9,}" for n in names)
        )
    print_fn("")
    print_fn(
        "ratio = pandas baseline time / ours (same greedy rule, one run each k); same = identical "
        "suppressed cells"
    )
    print_fn(f"peak RSS {rss_ours:.0f} MiB after our runs, {rss_end:.0f} MiB after the baseline")
    return {"rows": rows, "problems": problems, "peak_rss_mib": rss_ours, "warm_up_seconds": warm_up}


def run_large(print_fn=print) -> dict[str, Any]:
    """1,000,000 example records, 7 quasi-identifiers, k = 3: time, traced peak and peak RSS."""
    import polars as pl

    from sdckit.anonymize.suppression import local_suppression
    from sdckit.config import load_config
    from sdckit.frequency import frequencies

    names = list(LARGE_QUASI_IDENTIFIERS)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "students.parquet"
        command = [sys.executable, "-m", "examples.generate", "--records", str(LARGE_RECORDS), "--seed", "1"]
        subprocess.run([*command, "--output", str(path)], cwd=PROJECT, check=True, capture_output=True)
        table = load_config(PROJECT / "examples" / "example.yaml").read(pl.read_parquet(path))
    start = time.perf_counter()
    release = local_suppression(table, 3, quasi_identifiers=names)
    seconds = time.perf_counter() - start
    tracemalloc.start()
    local_suppression(table, 3, quasi_identifiers=names)
    traced_peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    reached = float(frequencies(release.table.data, names, missing="wildcard").min())
    row = {
        "records": table.n_records,
        "seconds": seconds,
        "traced_peak_mib": traced_peak / 2**20,
        "peak_rss_mib": peak_rss_mib(),
        "cells": release.n_suppressed_cells,
        "min_frequency": reached,
        **release.search,
    }
    print_fn(
        f"example data: {row['records']:,} records, quasi-identifiers {', '.join(names)}; k = 3, wildcard "
        "nulls, default importance"
    )
    print_fn(
        f"  {seconds:.2f} s (one call), {row['violating_patterns']:,} violating of {row['patterns']:,} "
        f"patterns, {row['cells']:,} cells suppressed, traced peak {row['traced_peak_mib']:.0f} MiB, "
        f"peak RSS {row['peak_rss_mib']:.0f} MiB"
    )
    row["problems"] = [] if reached >= 3 else [f"large run: a record has wildcard frequency {reached:g} < 3"]
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="timed calls of ours per k (default 3)")
    parser.add_argument("--no-large", action="store_true", help="skip the 1,000,000-record run")
    arguments = parser.parse_args(argv)
    if arguments.repeats < 1:
        parser.error("--repeats must be at least 1")
    reason = missing_data()
    if reason is not None:
        print(f"bench_local_suppression: {reason}", file=sys.stderr)
        return 1
    began = time.perf_counter()
    print_header(argv)
    print(f"data             {ADULT / 'adult.csv'} (';', read as text)")
    print()
    result = run(repeats=arguments.repeats)
    print()
    if not arguments.no_large:
        result["problems"] += run_large()["problems"]
        print()
    print(f"total            {time.perf_counter() - began:.0f} s")
    if result["problems"]:
        print(f"FAILURES         {len(result['problems'])}:")
        for problem in result["problems"]:
            print(f"  {problem}")
        return 1
    print("failures         none")
    return 0


if __name__ == "__main__":
    sys.exit(main())
