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

Then the large runs (skip them with ``--no-large``, pick some with ``--large NAME ...``), each in a
fresh process so that its peak resident memory is its own: ``example-7`` (1,000,000 records of the
example data, ``python -m examples.generate --records 1000000 --seed 1``, read with
``examples/example.yaml``; 7 quasi-identifiers birth_year, gender, ethnicity, parish,
entry_school_year, entry_grade, lunch_status; k = 3), ``example-10`` (the same records with
example.yaml's 10 quasi-identifiers, adding school, limited_english and gifted; k = 5: what ``sdckit
anonymize --method local-suppression -k 5`` runs) and ``skewed-nulls`` (200,000 synthetic records, 8
quasi-identifiers with Zipf-like values and 5% nulls in each, so hundreds of null masks; k = 5).
Default importance, wildcard nulls. Each reports the time of one call on every record (after a
warm-up), the peak RSS of its process (and its growth during the call), re-checks that every record
reaches k, and times ours against a baseline on the first records (``slice``: 100,000, 40,000 and
10,000; ``--slice`` sets one for all): the same compiled greedy with a search budget of 0, so that
every visit scans every pattern (the kernels before any index; its time grows with the square of the
records), which must suppress exactly the same cells.

Recorded (2 CPUs shared with other jobs, load 2-3, so times vary by +-30%; "before" = commit ef67442,
whose greedy used hash indexes per (null mask group, compared attribute set); one run each):

* example-10 (660,826 patterns, 631,406 violating, 322,078 cells): before, through the CLI
  (``sdckit anonymize F --config examples/example.yaml --method local-suppression -k 5``), 100,000
  records 141 s and 2.9 GB peak RSS, 200,000 records 306 s and 5.3 GB (24,498 indexes, 133 million
  entries); 1,000,000 not run (extrapolated from those two: about 30 minutes and 20 GB). After: the
  CLI 5.2 s / 0.37 GB, 7.1 s / 0.47 GB and 21.9 s / 1.0 GB on 100,000, 200,000 and 1,000,000 records
  (same output files at 100,000 and 200,000, byte for byte); this script: 22.2 s for the call, 1,024
  MiB for its process (+361 MiB during the call).
* example-7: before 8.5-9.1 s for the call, 1,076 MiB for the process (+414 during the call); after
  1.05 s, 842 MiB (+179).
* skewed-nulls: before 286 s, 2.5 GB; after 24.5 s, 421 MiB.

Suppressed cells are identical before and after (old and new modules compared cell by cell on these
data, also with fractional weights).

Then the variants (skip them with ``--no-variants``, run only them with ``--variants-only``), on the
first 100,000 and 1,000,000 example records (each size in a fresh process), keys birth_year, gender,
ethnicity, entry_school_year, entry_grade, lunch_status, k = 3, each against a baseline in the same
process that must suppress exactly the same cells: ``strata`` parish (64 strata) against a loop calling
``local_suppression`` on each stratum with the same importance; ``combs`` 2,3 with k 5,3 (15 + 20
subsets) against a loop calling it on each subset in turn, on the release of the previous one;
``risk_suppression`` (birth_year, threshold 0.5) against measuring the individual risk once. Recorded
(load 11-15 on 2 CPUs; traced peak MiB ours / baseline): 10^5: strata 1.28 s vs 3.18 s (2.5x; 18 / 3
MiB), combs 0.32 s vs 0.47 s (1.5x; 21 / 11), risk suppression 0.05 s vs 0.03 s (0.5x: it measures the
risk twice; 8 / 6); 10^6: strata 2.26 s vs 6.15 s (2.7x; 172 / 22 MiB), combs 2.96 s vs 6.05 s (2.0x;
205 / 105), risk suppression 0.71 s vs 0.31 s (0.44x; 77 / 51); the plain run without strata 0.82 s.

Exit status 1 when the data is missing, a release fails k-anonymity or the baseline disagrees.
Usage::

    python benchmarks/bench_local_suppression.py [--repeats 3] [--no-large]
"""

from __future__ import annotations

import argparse
import itertools
import json
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
LARGE_QUASI_IDENTIFIERS = (
    "birth_year",
    "gender",
    "ethnicity",
    "parish",
    "entry_school_year",
    "entry_grade",
    "lunch_status",
)
SKEWED_ATTRIBUTES = 8
SKEWED_NULL_RATE = 0.05
SKEWED_CARDINALITIES = (3, 5, 8, 12, 20, 40, 80, 150, 300, 1000)
#: The large runs: example data (examples.generate --seed 1, read with examples/example.yaml) or the
#: skewed synthetic data of skewed_frame; quasi_identifiers None = every quasi-identifier of the config;
#: slice: the first records, on which ours and the scan baseline are both timed (the baseline's time
#: grows with the square of the records: a slice that it runs in seconds).
LARGE_CASES: dict[str, dict[str, Any]] = {
    "example-7": {
        "data": "example",
        "records": 1_000_000,
        "quasi_identifiers": LARGE_QUASI_IDENTIFIERS,
        "k": 3,
        "slice": 100_000,
        "about": "example data, 7 quasi-identifiers (" + ", ".join(LARGE_QUASI_IDENTIFIERS) + "), k = 3",
    },
    "example-10": {
        "data": "example",
        "records": 1_000_000,
        "quasi_identifiers": None,
        "k": 5,
        "slice": 40_000,
        "about": "example data, example.yaml's 10 quasi-identifiers (the 7, school, limited_english, "
        "gifted), k = 5: the CLI's `anonymize --method local-suppression -k 5`",
    },
    "skewed-nulls": {
        "data": "skewed",
        "records": 200_000,
        "k": 5,
        "slice": 10_000,
        "about": f"synthetic: {SKEWED_ATTRIBUTES} quasi-identifiers with Zipf-like values and "
        f"{SKEWED_NULL_RATE:.0%} nulls in each (hundreds of null masks), k = 5",
    },
}


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

    from sdckit.anonymize.local_suppression import LocalSuppressionFigures, local_suppression
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
            "violating_records": release.figures_as(LocalSuppressionFigures).violating_records,
            "ncp": release_ncp(release),
            "traced_peak_mib": traced_peak / 2**20,
            "min_frequency": reached,
            "importance": release.figures_as(LocalSuppressionFigures).importance,
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


def skewed_frame(records: int, attributes: int = SKEWED_ATTRIBUTES, null_rate: float = SKEWED_NULL_RATE):
    """Synthetic data (seed 0): ``attributes`` text columns a0, a1, ... with Zipf-like values (value i
    drawn with probability proportional to 1 / (i + 1)^1.1; cardinalities 3, 5, 8, 12, 20, 40, 80,
    150, 300, 1000, ...) and, independently in every column, ``null_rate`` of nulls."""
    import numpy as np
    import polars as pl

    rng = np.random.default_rng(0)
    columns = {}
    for j in range(attributes):
        cardinality = SKEWED_CARDINALITIES[j % len(SKEWED_CARDINALITIES)]
        probability = 1.0 / np.arange(1, cardinality + 1) ** 1.1
        values = rng.choice(cardinality, size=records, p=probability / probability.sum())
        null = rng.random(records) < null_rate
        columns[f"a{j}"] = pl.Series(f"a{j}", values).cast(pl.String).set(pl.Series(null), None)
    return pl.DataFrame(columns)


def _case_table(case: dict[str, Any], data: Path | None):
    """The Table and quasi-identifiers of a large case."""
    import polars as pl

    from sdckit.config import load_config
    from sdckit.table import Attribute, Role, Schema, Table

    if case["data"] == "example":
        table = load_config(PROJECT / "examples" / "example.yaml").read(pl.read_parquet(data))
        names = case["quasi_identifiers"] or [a.name for a in table.schema.with_role(Role.QUASI_IDENTIFIER)]
        return table, list(names)
    frame = skewed_frame(case["records"])
    names = list(frame.columns)
    return Table(frame, Schema.infer(frame, [Attribute(c, role=Role.QUASI_IDENTIFIER) for c in names])), names


def run_case(name: str, data: Path | None, slice_records: int | None = None) -> dict[str, Any]:
    """One large case, in this process (``main --case`` runs it in a fresh one, so that the peak
    RSS is the case's own): ours on every record, then ours and the scan baseline on a slice."""
    from unittest import mock

    import numpy as np

    from sdckit.anonymize import _suppression_kernels as suppression_kernels
    from sdckit.anonymize.local_suppression import local_suppression
    from sdckit.frequency import frequencies
    from sdckit.table import Table

    case = LARGE_CASES[name]
    slice_records = case["slice"] if slice_records is None else slice_records
    table, names = _case_table(case, data)
    k = case["k"]
    local_suppression(Table(table.data.head(500), table.schema), 2, quasi_identifiers=names)  # kernels
    rss_before = peak_rss_mib()
    start = time.perf_counter()
    release = local_suppression(table, k, quasi_identifiers=names)
    seconds = time.perf_counter() - start
    rss = peak_rss_mib()
    reached = float(frequencies(release.table.data, names, missing="wildcard").min())

    # The baseline: the same compiled greedy with a search budget of 0, so that every visit scans
    # every pattern (the kernels as they were before any index), on the first `slice_records`.
    part = Table(table.data.head(slice_records), table.schema)
    start = time.perf_counter()
    ours = local_suppression(part, k, quasi_identifiers=names)
    slice_seconds = time.perf_counter() - start
    greedy = suppression_kernels.wildcard_greedy

    def scanning(patterns, counts, order, threshold, suppressed, arrays, budget, strict):
        greedy(patterns, counts, order, threshold, suppressed, arrays, 0, strict)

    with mock.patch.object(suppression_kernels, "wildcard_greedy", scanning):
        start = time.perf_counter()
        scanned = local_suppression(part, k, quasi_identifiers=names)
        scan_seconds = time.perf_counter() - start
    return {
        "case": name,
        "records": table.n_records,
        "quasi_identifiers": len(names),
        "k": k,
        "seconds": seconds,
        "rss_before_mib": rss_before,
        "peak_rss_mib": rss,
        "cells": release.n_suppressed_cells,
        "min_frequency": reached,
        "slice_records": part.n_records,
        "slice_seconds": slice_seconds,
        "scan_seconds": scan_seconds,
        "same_cells": bool(np.array_equal(ours.suppressed_cells, scanned.suppressed_cells)),
        **{  # what the search found (the importance used and weighting are figures, not the search's)
            key: value
            for key, value in release.figures.as_dict().items()
            if key not in ("importance", "weighted")
        },
    }


def run_large(
    print_fn=print, cases: list[str] | None = None, slice_records: int | None = None
) -> dict[str, Any]:
    """Every large case (``cases``: some of LARGE_CASES), each in a fresh process; print the table."""
    cases = list(LARGE_CASES) if cases is None else cases
    rows: list[dict[str, Any]] = []
    problems: list[str] = []
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "students.parquet"
        if any(LARGE_CASES[name]["data"] == "example" for name in cases):
            records = max(
                LARGE_CASES[name]["records"] for name in cases if LARGE_CASES[name]["data"] == "example"
            )
            command = [sys.executable, "-m", "examples.generate", "--records", str(records), "--seed", "1"]
            subprocess.run([*command, "--output", str(path)], cwd=PROJECT, check=True, capture_output=True)
        for name in cases:
            command = [sys.executable, str(Path(__file__).resolve()), "--case", name, "--data", str(path)]
            if slice_records is not None:
                command += ["--slice", str(slice_records)]
            done = subprocess.run(command, cwd=PROJECT, capture_output=True, text=True)
            if done.returncode != 0:
                problems.append(f"large case {name} failed: {done.stderr.strip().splitlines()[-1:]}")
                continue
            row = json.loads(done.stdout.strip().splitlines()[-1])
            rows.append(row)
            if row["min_frequency"] < row["k"]:
                problems.append(f"{name}: a record has wildcard frequency {row['min_frequency']:g} < k")
            if not row["same_cells"]:
                problems.append(f"{name}: ours and the scan baseline suppress different cells on the slice")
    for name, case in LARGE_CASES.items():
        if name in cases:
            print_fn(f"{name:<13} {case['about']}")
    print_fn("")
    header = (
        f"{'case':<13} {'records':>9} {'QIs':>3} {'k':>2} {'patterns':>8} {'violating':>9} {'cells':>7} "
        f"{'ours s':>7} {'RSS MiB':>7} {'(+call)':>7} {'slice':>7} {'ours s':>7} {'scan s':>7} {'ratio':>6} "
        f"{'same':>4}"
    )
    print_fn(header)
    print_fn("-" * len(header))
    for row in rows:
        print_fn(
            f"{row['case']:<13} {row['records']:>9,} {row['quasi_identifiers']:>3} {row['k']:>2} "
            f"{row['patterns']:>8,} {row['violating_patterns']:>9,} {row['cells']:>7,} "
            f"{row['seconds']:>7.2f} "
            f"{row['peak_rss_mib']:>7.0f} {row['peak_rss_mib'] - row['rss_before_mib']:>+7.0f} "
            f"{row['slice_records']:>7,} {row['slice_seconds']:>7.2f} {row['scan_seconds']:>7.2f} "
            f"{row['scan_seconds'] / row['slice_seconds']:>5.0f}x {'yes' if row['same_cells'] else 'NO':>4}"
        )
    print_fn("")
    print_fn(
        "ours s: one call on every record (after a warm-up); RSS MiB: peak resident memory of the "
        "case's own process after that call, (+call): its growth during the call; on the first `slice` "
        "records: ours and the scan baseline (the same compiled greedy scanning every pattern at every "
        "visit), ratio = scan / ours, same = identical suppressed cells"
    )
    return {"rows": rows, "problems": problems}


# ----------------------------------------------------------------------------------------------
# Strata, key subsets (combs) and risk suppression (sdcMicro's strataVar, combs and localSupp).

#: The variants' keys (the 7 of example-7 without parish) and their strata (parish: 64 of them).
VARIANT_KEYS = ("birth_year", "gender", "ethnicity", "entry_school_year", "entry_grade", "lunch_status")
VARIANT_STRATA = "parish"
VARIANT_SIZES = (100_000, 1_000_000)


def _timed(call):
    """(result, seconds, peak traced MiB) of one call."""
    tracemalloc.start()
    start = time.perf_counter()
    result = call()
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return result, seconds, peak


def run_variants_case(records: int, data: Path) -> dict[str, Any]:
    """The variants on the first ``records`` example records, each against its baseline in this
    process: strata against a loop calling local_suppression on each stratum (same importance), combs
    against a loop calling it on each key subset in turn (each subset on the release of the previous
    one), risk suppression against measuring the risk once; results must be equal, cell by cell."""
    import numpy as np
    import polars as pl

    from sdckit.anonymize.local_supp import risk_suppression
    from sdckit.anonymize.local_suppression import local_suppression
    from sdckit.config import load_config
    from sdckit.risk.reidentification import reidentification_risk
    from sdckit.table import Table

    table = load_config(PROJECT / "examples" / "example.yaml").read(pl.read_parquet(data).head(records))
    keys, k = list(VARIANT_KEYS), 3
    local_suppression(
        Table(table.data.head(2000), table.schema), 2, quasi_identifiers=keys, strata=["parish"]
    )
    risk_suppression(Table(table.data.head(2000), table.schema), "birth_year", 0.5, quasi_identifiers=keys)
    rows: list[dict[str, Any]] = []

    plain, plain_s, plain_mib = _timed(lambda: local_suppression(table, k, quasi_identifiers=keys))
    ours, ours_s, ours_mib = _timed(
        lambda: local_suppression(table, k, quasi_identifiers=keys, strata=["parish"])
    )
    importance = ours.figures.importance

    def per_stratum():
        cells = np.zeros((table.n_records, len(keys)), dtype=bool)
        strata = table.data.get_column(VARIANT_STRATA)
        for value in strata.unique(maintain_order=True):
            rows_of = np.flatnonzero((strata == value).to_numpy())
            part = Table(table.data[rows_of], table.schema)
            cells[rows_of] = local_suppression(
                part, k, quasi_identifiers=keys, importance=importance
            ).suppressed_cells
        return cells

    base, base_s, base_mib = _timed(per_stratum)
    rows.append(
        {
            "variant": "strata parish",
            "cells": ours.n_suppressed_cells,
            "seconds": ours_s,
            "mib": ours_mib,
            "baseline": "per-stratum loop",
            "baseline_seconds": base_s,
            "baseline_mib": base_mib,
            "same": bool(np.array_equal(ours.suppressed_cells, base)),
            "plain_seconds": plain_s,
            "plain_cells": plain.n_suppressed_cells,
        }
    )

    combs, ks = [2, 3], [5, 3]
    ours, ours_s, ours_mib = _timed(
        lambda: local_suppression(table, k, quasi_identifiers=keys, combs=combs, combs_k=ks)
    )
    order = ours.figures.importance

    def per_subset():
        current = table
        cells = np.zeros((table.n_records, len(keys)), dtype=bool)
        for size, size_k in zip(combs, ks, strict=True):
            for subset in itertools.combinations(keys, size):
                step = local_suppression(
                    current,
                    size_k,
                    quasi_identifiers=list(subset),
                    importance=[n for n in order if n in subset],
                )
                for j, name in enumerate(subset):
                    cells[:, keys.index(name)] |= step.suppressed_cells[:, j]
                current = step.table
        return cells

    base, base_s, base_mib = _timed(per_subset)
    rows.append(
        {
            "variant": "combs 2,3 (k 5,3)",
            "cells": ours.n_suppressed_cells,
            "seconds": ours_s,
            "mib": ours_mib,
            "baseline": "per-subset loop",
            "baseline_seconds": base_s,
            "baseline_mib": base_mib,
            "same": bool(np.array_equal(ours.suppressed_cells, base)),
        }
    )

    keyed = Table(table.data, table.schema)
    ours, ours_s, ours_mib = _timed(
        lambda: risk_suppression(keyed, "birth_year", 0.5, quasi_identifiers=keys, weights=None)
    )

    def measure_once():
        from sdckit.anonymize.local_supp import _with_keys

        return reidentification_risk(_with_keys(keyed, keys), missing="wildcard").risk

    risk, base_s, base_mib = _timed(measure_once)
    rows.append(
        {
            "variant": "risk-suppression birth_year 0.5",
            "cells": ours.n_suppressed_cells,
            "seconds": ours_s,
            "mib": ours_mib,
            "baseline": "the risk measured once",
            "baseline_seconds": base_s,
            "baseline_mib": base_mib,
            "same": bool(
                np.array_equal(
                    ours.suppressed_cells[:, 0],
                    (risk > 0.5) & table.data["birth_year"].is_not_null().to_numpy(),
                )
            ),
        }
    )
    return {"records": table.n_records, "rows": rows, "peak_rss_mib": peak_rss_mib()}


def run_variants(print_fn=print, sizes: tuple[int, ...] = VARIANT_SIZES) -> dict[str, Any]:
    """The variants at every size, each size in a fresh process; print the table."""
    problems: list[str] = []
    results = []
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "students.parquet"
        command = [sys.executable, "-m", "examples.generate", "--records", str(max(sizes)), "--seed", "1"]
        subprocess.run([*command, "--output", str(path)], cwd=PROJECT, check=True, capture_output=True)
        for records in sizes:
            command = [sys.executable, str(Path(__file__).resolve()), "--variants-case", str(records)]
            done = subprocess.run(
                [*command, "--data", str(path)], cwd=PROJECT, capture_output=True, text=True
            )
            if done.returncode != 0:
                problems.append(f"variants at {records:,} failed: {done.stderr.strip().splitlines()[-1:]}")
                continue
            results.append(json.loads(done.stdout.strip().splitlines()[-1]))
    print_fn(f"variants: example data, keys {', '.join(VARIANT_KEYS)}, k = 3, strata {VARIANT_STRATA}")
    header = (
        f"{'records':>9} {'variant':<32} {'cells':>7} {'ours s':>7} {'MiB':>6} {'baseline':<22} "
        f"{'base s':>7} {'MiB':>6} {'ratio':>6} {'same':>4}"
    )
    print_fn(header)
    print_fn("-" * len(header))
    for result in results:
        for row in result["rows"]:
            print_fn(
                f"{result['records']:>9,} {row['variant']:<32} {row['cells']:>7,} {row['seconds']:>7.2f} "
                f"{row['mib']:>6.0f} {row['baseline']:<22} {row['baseline_seconds']:>7.2f} "
                f"{row['baseline_mib']:>6.0f} {row['baseline_seconds'] / row['seconds']:>5.2f}x "
                f"{'yes' if row['same'] else 'NO':>4}"
            )
            if not row["same"]:
                problems.append(f"{row['variant']} at {result['records']:,}: differs from its baseline")
        strata_row = result["rows"][0]
        print_fn(
            f"{'':>9} (without strata: {strata_row['plain_cells']:,} cells in "
            f"{strata_row['plain_seconds']:.2f} s; peak RSS of the process {result['peak_rss_mib']:.0f} MiB)"
        )
    print_fn("")
    print_fn(
        "MiB: peak traced memory of the call (tracemalloc: numpy and Python, not polars); "
        "ratio = baseline / ours"
    )
    return {"results": results, "problems": problems}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="timed calls of ours per k (default 3)")
    parser.add_argument("--no-large", action="store_true", help="skip the large runs")
    parser.add_argument(
        "--large", nargs="+", choices=list(LARGE_CASES), help="run only these large cases (default: all)"
    )
    parser.add_argument(
        "--slice", type=int, help="records of every large case for the baseline ratio (default: per case)"
    )
    parser.add_argument("--case", choices=list(LARGE_CASES), help=argparse.SUPPRESS)  # one case, JSON out
    parser.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--no-variants", action="store_true", help="skip strata, combs and risk suppression")
    parser.add_argument(
        "--variants-only", action="store_true", help="run only strata, combs and risk suppression"
    )
    parser.add_argument("--variants-case", type=int, help=argparse.SUPPRESS)  # one size, JSON out
    arguments = parser.parse_args(argv)
    if arguments.case is not None:
        print(json.dumps(run_case(arguments.case, arguments.data, arguments.slice)))
        return 0
    if arguments.variants_case is not None:
        print(json.dumps(run_variants_case(arguments.variants_case, arguments.data)))
        return 0
    if arguments.variants_only:
        print_header(argv)
        problems = run_variants()["problems"]
        for problem in problems:
            print(f"FAILURE  {problem}")
        return 1 if problems else 0
    if arguments.repeats < 1:
        parser.error("--repeats must be at least 1")
    if arguments.slice is not None and arguments.slice < 1:
        parser.error("--slice must be at least 1")
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
        result["problems"] += run_large(cases=arguments.large, slice_records=arguments.slice)["problems"]
        print()
    if not arguments.no_variants:
        result["problems"] += run_variants()["problems"]
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
