"""Benchmark: checking β-likeness (basic, enhanced) and δ-disclosure privacy on 10^6 records.

Adult (ARX's extract, ``../shared/data/adult``) resampled with replacement to ``--records`` records
(seed 0); the equivalence classes are the combinations of the 8 attributes other than occupation, the
sensitive attribute. Two rows per model, each timed as the best of ``--repeats`` in this process
against a polars baseline computing the same per-class values from the same input:

* ``check``: :func:`sdckit.models.check_table` from the records (grouping, (class, value) counts and
  the model), against a polars ``group_by`` over (quasi-identifiers, occupation) and over the
  quasi-identifiers, joined with the table's shares, reduced per class;
* ``model``: the model alone on :class:`ClassStatistics` already built (what a search node costs),
  against polars on a frame of the same (class, value, count) triples.

Both sides must agree on every class's achieved value (checked; infinite values included); the ratio
is sdckit's time over the baseline's (below 1: sdckit faster). The peak resident memory of the
process is printed at the end.

Usage::

    python benchmarks/bench_likeness.py
    python benchmarks/bench_likeness.py --records 200000 --repeats 5
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

import numpy as np

from _common import ADULT_COLUMNS, adult_missing, best_time, load_adult_text, peak_rss_mib, print_header

SENSITIVE = "occupation"
QUASI_IDENTIFIERS = [c for c in ADULT_COLUMNS if c != SENSITIVE]


def models() -> list[Any]:
    from sdckit.models import BasicBetaLikeness, DeltaDisclosure, EnhancedBetaLikeness

    return [
        BasicBetaLikeness(SENSITIVE, 1.0),
        EnhancedBetaLikeness(SENSITIVE, 1.0),
        DeltaDisclosure(SENSITIVE, 1.0),
    ]


def polars_achieved(cells: Any, overall: Any, kind: str, by: list[str]) -> Any:
    """Per class (the key columns ``by``), the achieved value from cells (class keys, ``value``,
    ``count``) and the table's (``value``, ``p``) shares, polars expressions only; sorted values."""
    import polars as pl

    shares = (
        cells.join(overall, on="value")
        .with_columns(q=pl.col("count") / pl.col("count").sum().over(by))
        .with_columns(gain=(pl.col("q") - pl.col("p")) / pl.col("p"))
    )
    if kind == "basic":
        achieved = pl.col("gain").max()
    elif kind == "enhanced":
        capped = (pl.col("gain") + pl.col("p").log()).max() > 1e-12
        achieved = pl.when(capped).then(float("inf")).otherwise(pl.col("gain").max())
    else:
        absent = pl.len() < overall.height
        achieved = pl.when(absent).then(float("inf")).otherwise((pl.col("q") / pl.col("p")).log().abs().max())
    return np.sort(shares.group_by(by).agg(achieved=achieved).get_column("achieved").to_numpy())


def baseline_from_records(frame: Any, kind: str) -> Any:
    """The polars baseline from the records: counts of (quasi-identifiers, value), the table's
    shares, then :func:`polars_achieved` grouped by the quasi-identifiers."""
    import polars as pl

    cells = frame.group_by(*QUASI_IDENTIFIERS, SENSITIVE).agg(count=pl.len()).rename({SENSITIVE: "value"})
    overall = frame.group_by(SENSITIVE).agg(p=pl.len() / frame.height).rename({SENSITIVE: "value"})
    return polars_achieved(cells, overall, kind, QUASI_IDENTIFIERS)


def same(a: Any, b: Any) -> bool:
    """The same per-class values, as multisets (the two sides number classes differently)."""
    a = np.sort(a)
    if a.shape != b.shape:
        return False
    infinite = np.isinf(a)
    return bool(
        (infinite == np.isinf(b)).all() and np.allclose(a[~infinite], b[~infinite], rtol=1e-9, atol=1e-12)
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=float, default=1e6, help="records after resampling (default 1e6)")
    parser.add_argument("--repeats", type=int, default=3, help="timed calls of each side (default 3)")
    arguments = parser.parse_args(argv)
    print_header(argv)
    missing = adult_missing()
    if missing:
        print(missing)
        return 1
    import polars as pl

    from sdckit.frequency import group_records
    from sdckit.models import ClassStatistics, check_table
    from sdckit.table import Table

    adult, _ = load_adult_text(())
    n = int(arguments.records)
    rng = np.random.default_rng(0)
    frame = adult[rng.integers(0, adult.height, size=n)].rechunk()
    table = Table.from_frame(frame)
    print(
        f"Adult resampled to {n:,} records (seed 0); {len(QUASI_IDENTIFIERS)} quasi-identifiers; {SENSITIVE}"
    )
    # The statistics of the classes once, for the rows timing a model alone (as a search node has them).
    grouping = group_records(frame, QUASI_IDENTIFIERS, frame.schema)
    statistics = ClassStatistics.from_records(
        grouping.keys.astype(np.int64), len(grouping.first), frame, [SENSITIVE]
    )
    counts = statistics.counts_of(SENSITIVE)
    cells = pl.DataFrame({"class": counts.classes, "value": counts.values, "count": counts.counts})
    overall = pl.DataFrame({"value": np.arange(counts.n_values, dtype=np.int32), "p": counts.overall})

    def alone(model: Any) -> Any:
        counts._cache.clear()  # the class offsets are computed anew, once per node in a search
        return model.evaluate(statistics)

    print(f"{'model':34} {'row':6} {'sdckit s':>9} {'polars s':>9} {'ratio':>6}  classes  agree")
    ratios = []
    for model in models():
        kind = "delta" if "disclosure" in model.name else model.name.split()[0]
        seconds, report = best_time(
            lambda m=model: check_table(table, QUASI_IDENTIFIERS, [m]), arguments.repeats
        )
        base_seconds, expected = best_time(lambda k=kind: baseline_from_records(frame, k), arguments.repeats)
        ratios.append(seconds / base_seconds)
        print(
            f"{model.name:34} {'check':6} {seconds:9.3f} {base_seconds:9.3f} {ratios[-1]:6.2f}  "
            f"{report.n_classes:7,}  {same(report.results[0].achieved, expected)}"
        )
        seconds, result = best_time(lambda m=model: alone(m), arguments.repeats)
        base_seconds, expected = best_time(
            lambda k=kind: polars_achieved(cells, overall, k, ["class"]), arguments.repeats
        )
        ratios.append(seconds / base_seconds)
        print(
            f"{model.name:34} {'model':6} {seconds:9.4f} {base_seconds:9.4f} {ratios[-1]:6.2f}  "
            f"{statistics.n_classes:7,}  {same(result.achieved, expected)}"
        )
        sys.stdout.flush()
    print(f"ratio sdckit / polars: geometric mean {math.exp(sum(map(math.log, ratios)) / len(ratios)):.3f}")
    print(f"peak resident memory: {peak_rss_mib():.0f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
