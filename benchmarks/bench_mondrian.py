"""Benchmark: Mondrian multidimensional partitioning (``sdckit.anonymize.mondrian``) on Adult.

Reads the UCI Adult extract ARX ships (30,162 records, ``../shared/data/adult`` relative to the project
root, with ARX's hierarchies ``adult_hierarchy_<column>.csv``). Quasi-identifiers: the 8 columns other
than occupation (age numeric, the others categorical with their ARX hierarchy); occupation is the
sensitive attribute. Runs:

* Adult, strict, k = 5, 10, 50; strict k=5 + distinct 3-diversity on occupation; relaxed k=5;
* Adult resampled with replacement (numpy ``default_rng(0)``) to 1,000,000 records, strict k=5.
  Target: under 20 s.

Baseline, measured in the same run on the same data and quasi-identifiers: the textbook recursive
Mondrian written below with pandas (per partition: spans with min/max and ``nunique``, the median by
sorting, children by boolean masks or ``groupby``, recursion). It follows the same cut rules, so it
must give the same number of classes (checked; a difference is a failure). At 1,000,000 records it
would take minutes, so there it runs on a 100,000-record slice of the resample, and ours is timed on
that slice too for the ratio; ours alone is timed on the full million.

Every release is re-checked with ``check_table``. Each configuration runs once untimed (numba
kernels, caches), then ``repeats`` timed calls (best reported; 1 for the large runs). Peak RSS is the
process's ru_maxrss after the run (so it includes earlier runs). Exit status 1 when the data is
missing, a run fails, a release fails its models or the class counts differ; missed speed targets
fail only with ``--strict``. Usage::

    python benchmarks/bench_mondrian.py [--repeats 3] [--records 1000000] [--strict]

``run(print_fn=print)`` runs everything and returns the figures as a dict (for other benchmarks).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _common import ADULT, ADULT_COLUMNS, adult_missing, load_adult_text, peak_rss_mib, print_header

ROOT = Path(__file__).resolve().parent.parent
COLUMNS = ADULT_COLUMNS
SENSITIVE = "occupation"
QUASI_IDENTIFIERS = [c for c in COLUMNS if c != SENSITIVE]
NUMERIC = ("age",)
LARGE_RECORDS = 1_000_000
LARGE_TARGET_SECONDS = 20.0
BASELINE_LARGE_RECORDS = 100_000
RUNS = (
    # label, k, distinct l (None: k only), mode
    ("k=5 strict", 5, None, "strict"),
    ("k=10 strict", 10, None, "strict"),
    ("k=50 strict", 50, None, "strict"),
    ("k=5 + distinct 3-div", 5, 3, "strict"),
    ("k=5 relaxed", 5, None, "relaxed"),
)


def missing_data() -> str | None:
    return adult_missing(QUASI_IDENTIFIERS)


def load_adult():
    import polars as pl

    frame, hierarchies = load_adult_text([c for c in QUASI_IDENTIFIERS if c not in NUMERIC])
    return frame.with_columns(pl.col("age").cast(pl.Int64)), hierarchies


# ----------------------------------------------------------------------------------------------
# Baseline: textbook recursive Mondrian on pandas.


def baseline_mondrian(frame, hierarchies, k: int, l: int | None, mode: str) -> list:  # noqa: E741
    """Recursive Mondrian with pandas; returns the list of classes (index arrays).

    Same rules as SPEC §3.2: dimensions by decreasing normalized width (ties: column order); numeric
    strict cut at the lower median, relaxed cut after the first half sorted by (value, row);
    categorical cut into the children of the lowest common ancestor in the hierarchy.
    """
    df = frame.copy()
    paths = {}
    leaf_counts = {}
    for name, hierarchy in hierarchies.items():
        # One column per level: the label of each record's ancestor at that level.
        levels = []
        for level in range(hierarchy.n_levels):
            mapping = {
                leaf: hierarchy.labels[level][node]
                for leaf, node in zip(hierarchy.labels[0], hierarchy.codes[:, level], strict=True)
            }
            column = f"{name}@{level}"
            df[column] = df[name].map(mapping)
            levels.append(column)
            counts = {}
            for node in hierarchy.codes[:, level]:
                label = hierarchy.labels[level][node]
                counts[label] = counts.get(label, 0) + 1
            leaf_counts[column] = counts
        paths[name] = (levels, hierarchy.n_leaves)
    ranges = {c: df[c].max() - df[c].min() for c in NUMERIC}
    columns = QUASI_IDENTIFIERS
    classes = []

    def allowable(part) -> bool:
        return len(part) >= k and (l is None or part[SENSITIVE].nunique() >= l)

    def width(part, column):
        if column in ranges:
            span = ranges[column]
            return ((part[column].max() - part[column].min()) / span if span else 0.0), None
        levels, n_leaves = paths[column]
        for level, name in enumerate(levels):
            if part[name].nunique() == 1:
                if level == 0:
                    return 0.0, 0
                return leaf_counts[name][part[name].iloc[0]] / n_leaves, level
        return 1.0, len(levels)

    def split(part, column, level):
        if column in ranges:
            if mode == "strict":
                values = part[column].sort_values(kind="mergesort")
                median = values.iloc[(len(values) - 1) // 2]
                left, right = part[part[column] <= median], part[part[column] > median]
                return [left, right] if len(right) else None
            ordered = part.sort_index().sort_values(column, kind="mergesort")
            half = len(ordered) // 2
            return [ordered.iloc[:half], ordered.iloc[half:]]
        name = paths[column][0][level - 1]
        return [group for _, group in part.groupby(name, sort=True)]

    def anonymize(part) -> None:
        if len(part) >= 2 * k:
            spans = [(column, *width(part, column)) for column in columns]
            for column, span, level in sorted(spans, key=lambda item: -item[1]):
                if span <= 0:
                    continue
                children = split(part, column, level)
                if children and all(allowable(child) for child in children):
                    for child in children:
                        anonymize(child)
                    return
        classes.append(part.index.to_numpy())

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 100_000))
    try:
        anonymize(df)
    finally:
        sys.setrecursionlimit(limit)
    return classes


# ----------------------------------------------------------------------------------------------
# Runs.


def models_of(k: int, l: int | None) -> list:  # noqa: E741
    from sdckit.models import DistinctLDiversity, KAnonymity

    return [KAnonymity(k)] + ([DistinctLDiversity(SENSITIVE, l)] if l else [])


def timed(function: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    result = function()  # untimed: compiled kernels, caches
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result


def one_run(
    label: str,
    table,
    pandas_frame,
    hierarchies,
    k: int,
    l: int | None,  # noqa: E741
    mode: str,
    repeats: int,
    baseline: bool,
) -> dict[str, Any]:
    from sdckit.anonymize.mondrian import mondrian
    from sdckit.models import check_table
    from sdckit.utility import release_ncp

    models = models_of(k, l)
    row: dict[str, Any] = {"label": label, "records": table.n_records, "problems": []}
    seconds, release = timed(
        lambda: mondrian(
            table, models, quasi_identifiers=QUASI_IDENTIFIERS, hierarchies=hierarchies, mode=mode
        ),
        repeats,
    )
    row.update(
        seconds=seconds,
        classes=release.n_classes,
        smallest=int(release.class_sizes().min()),
        gcp=release_ncp(release),
        peak_mib=peak_rss_mib(),
    )
    if not check_table(release.table, QUASI_IDENTIFIERS, models).summary()["passes"]:
        row["problems"].append("the release fails its models (check_table)")
    if baseline:
        start = time.perf_counter()
        classes = baseline_mondrian(pandas_frame, hierarchies, k, l, mode)
        row["baseline_seconds"] = time.perf_counter() - start
        row["baseline_classes"] = len(classes)
        if len(classes) != release.n_classes:
            row["problems"].append(f"baseline has {len(classes)} classes, ours {release.n_classes}")
    return row


def run(
    print_fn: Callable[..., None] = print, repeats: int = 3, records: int = LARGE_RECORDS
) -> dict[str, Any]:
    """Run every configuration, print the table with ``print_fn``, return the figures."""
    import numpy as np

    from sdckit.table import Table

    reason = missing_data()
    if reason is not None:
        print_fn(f"bench_mondrian: {reason}")
        return {"missing_data": reason, "rows": [], "problems": [reason], "missed": []}
    frame, hierarchies = load_adult()
    table = Table.from_frame(frame)
    pandas_frame = frame.to_pandas()
    rows = [
        one_run(label, table, pandas_frame, hierarchies, k, diversity, mode, repeats, baseline=True)
        for label, k, diversity, mode in RUNS
    ]
    # Resampled: ours on the full size, ours and the baseline on a slice for the ratio.
    large = frame[np.random.default_rng(0).integers(0, frame.height, size=records)]
    large_table = Table.from_frame(large)
    big = one_run(
        f"{records:,} k=5 strict", large_table, None, hierarchies, 5, None, "strict", 1, baseline=False
    )
    if big["seconds"] >= LARGE_TARGET_SECONDS:
        big["missed"] = f"{big['seconds']:.1f} s, target < {LARGE_TARGET_SECONDS:g} s"
    rows.append(big)
    sliced = large.head(min(BASELINE_LARGE_RECORDS, records))
    rows.append(
        one_run(
            f"{sliced.height:,} slice k=5 strict",
            Table.from_frame(sliced),
            sliced.to_pandas(),
            hierarchies,
            5,
            None,
            "strict",
            1,
            baseline=True,
        )
    )

    header = (
        f"{'run':<28} {'records':>9} {'ours s':>7} {'baseline s':>10} {'ratio':>7} {'classes':>7} "
        f"{'baseline cl':>11} {'smallest':>8} {'GCP':>7} {'peak MiB':>8}"
    )
    print_fn(header)
    print_fn("-" * len(header))
    problems, missed = [], []
    for row in rows:
        base = row.get("baseline_seconds")
        ratio = f"{base / row['seconds']:.1f}x" if base is not None else "-"
        print_fn(
            f"{row['label']:<28} {row['records']:>9,} {row['seconds']:>7.3f} "
            f"{(f'{base:.2f}' if base is not None else 'skipped'):>10} {ratio:>7} {row['classes']:>7,} "
            f"{(format(row['baseline_classes'], ',') if 'baseline_classes' in row else '-'):>11} "
            f"{row['smallest']:>8,} {row['gcp']:>7.4f} {row['peak_mib']:>8.0f}"
            + ("  ** " + "; ".join(row["problems"]) if row["problems"] else "")
        )
        problems += [f"{row['label']}: {problem}" for problem in row["problems"]]
        if "missed" in row:
            missed.append(f"{row['label']}: {row['missed']}")
    print_fn(
        f"baseline skipped at {records:,} records (minutes in pandas); it runs on the first "
        f"{min(BASELINE_LARGE_RECORDS, records):,} records of the resample, with ours timed on the same slice"
    )
    print_fn(
        f"target: {records:,} records k=5 strict under {LARGE_TARGET_SECONDS:g} s: "
        f"{'met' if 'missed' not in big else 'MISSED'} ({big['seconds']:.2f} s)"
    )
    return {"rows": rows, "problems": problems, "missed": missed}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--repeats", type=int, default=3, help="timed calls per Adult configuration (default 3)"
    )
    parser.add_argument("--records", type=int, default=LARGE_RECORDS, help="records of the resampled run")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a speed target is missed too")
    arguments = parser.parse_args(argv)
    if arguments.repeats < 1 or arguments.records < 1:
        parser.error("--repeats and --records must be at least 1")
    reason = missing_data()
    if reason is not None:
        print(f"bench_mondrian: {reason}", file=sys.stderr)
        return 1
    began = time.perf_counter()
    print_header(argv)
    print(f"data             {ADULT / 'adult.csv'}; quasi-identifiers {', '.join(QUASI_IDENTIFIERS)}")
    print(f"                 (age numeric, the others with ARX hierarchies); sensitive {SENSITIVE}")
    print(
        f"timing           ours: best of {arguments.repeats} after one untimed call (1 call for the "
        "resample); baseline: one call"
    )
    print()
    result = run(print, repeats=arguments.repeats, records=arguments.records)
    print()
    print(f"total            {time.perf_counter() - began:.0f} s")
    print(f"targets missed   {len(result['missed']) or 'none'}")
    for item in result["missed"]:
        print(f"  {item}")
    print(f"failures         {len(result['problems']) or 'none'}")
    for item in result["problems"]:
        print(f"  {item}")
    return 1 if result["problems"] or (arguments.strict and result["missed"]) else 0


if __name__ == "__main__":
    sys.exit(main())
