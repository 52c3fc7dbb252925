"""Benchmark: ``sdckit describe`` (:func:`sdckit.describe.describe`, issue 38) against a
straightforward polars baseline in the same process.

Data: the generated student data of ``examples/generate.py`` (27 columns, the school codes text with
leading zeros) read as ``sdckit describe`` reads a CSV file (every column text), with two planted
identifier columns whose names do not say so: e-mail addresses and telephone numbers. 10^5 and 10^6
records. Timed, best of ``--repeats``, the file already in memory:

* ``describe``: everything the command computes: kinds, the value patterns of every text column,
  the roles, the α-distinction and α-separation of every candidate and of the pairs and triples
  (beam search), and SUDA2's minimal sample uniques (at most 3 attributes) over the proposed
  quasi-identifiers;
* ``baseline``: what one writes first: for every column, each of the nine value patterns as a
  ``str.contains`` over all the records (Luhn and the birth years left out), and ``n_unique``.

The baseline computes less (no α figures, no MSUs, no Luhn check): the ratio describe / baseline is
what the proposal costs beyond a first look at the columns. The stages of ``describe`` are timed
apart as well (value patterns alone, α sets alone, MSUs alone). Peak memory of the process after
each size.

    python benchmarks/bench_describe.py                   # 10^5 and 10^6 records
    python benchmarks/bench_describe.py --records 100000
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from _common import best_time, peak_rss_mib, print_header

ROOT = Path(__file__).resolve().parents[1]


def _data(records: int):
    """The generated data as text (as a CSV file is read without a configuration), with planted
    e-mail and telephone columns."""
    import polars as pl

    sys.path.insert(0, str(ROOT))
    from examples.generate import generate

    frame = generate(records, seed=1)
    index = pl.int_range(0, records, eager=True)
    planted = frame.with_columns(
        ("s" + index.cast(pl.String) + "@school.example.org").alias("contact"),
        ("(225) " + (100 + index % 900).cast(pl.String) + "-" + (1000 + index % 9000).cast(pl.String)).alias(
            "reach"
        ),
    )
    return planted.select(pl.all().cast(pl.String))


def _baseline(frame) -> dict[str, tuple[int, dict[str, float]]]:
    """Per column: distinct values and the share of records matching each pattern (all records)."""
    import polars as pl

    from sdckit.describe.values import PATTERNS

    found = {}
    for name in frame.columns:
        column = frame.get_column(name)
        shares = {p.name: float(column.str.contains(p.regex).mean() or 0.0) for p in PATTERNS}
        found[name] = (column.n_unique(), shares)
    assert isinstance(frame, pl.DataFrame)
    return found


def _size(records: int, repeats: int) -> None:
    from sdckit.describe import attribute_sets, describe, minimal_uniques
    from sdckit.describe.values import value_matches

    frame = _data(records)
    describe(frame.head(2000))  # compile / warm up
    seconds, described = best_time(lambda: describe(frame), repeats)
    base, _ = best_time(lambda: _baseline(frame), repeats)
    values, _ = best_time(lambda: value_matches(frame, list(frame.columns)), repeats)
    keys = [c.name for c in described.columns if c.role == "quasi-identifier"]
    candidates = [c.name for c in described.columns if c.rank is not None]
    sets, _ = best_time(lambda: attribute_sets(frame, keys, max_size=3), repeats)
    singles, _ = best_time(lambda: attribute_sets(frame, candidates, max_size=1), repeats)
    msus, _ = best_time(lambda: minimal_uniques(frame, keys, 3), repeats)
    identifiers = ", ".join(c.name for c in described.columns if c.role == "identifier")
    print(
        f"{records:>9,} records  describe {seconds:7.3f} s  baseline {base:7.3f} s  "
        f"ratio {seconds / base:5.2f}  peak {peak_rss_mib():,.0f} MiB"
    )
    print(
        f"{'':>19}stages: value patterns {values:.3f} s, singles {singles:.3f} s, "
        f"sets of the {len(keys)} proposed QIs up to 3 {sets:.3f} s, MSUs {msus:.3f} s"
    )
    print(f"{'':>19}identifiers found: {identifiers}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--repeats", type=int, default=3)
    arguments = parser.parse_args(argv)
    print_header(argv)
    for records in arguments.records:
        _size(records, arguments.repeats)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
