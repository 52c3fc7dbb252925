"""Benchmark: the sdcMicro measures added by issue 37 against straightforward baselines run in the same
process, at 10^5 and 10^6 records.

* ``risk interval`` (dRisk) against the numpy one-liner ``mean(all(|x - x'| <= k sd(x'), axis=1))``;
* the entropy and recursive l-diversity of ``risk reidentification`` (``l_diversities``, one sensitive
  attribute of 5 values under 3 keys) against a polars group-by of the (key, value) counts with the
  entropy and the recursive condition in polars expressions;
* ``utility variables`` (IL_variables, a numeric, an ordinal and a categorical attribute) against the
  numpy formulas on the raw arrays.

Each is the best of three runs; the figures must agree (``same``); peak memory of the process after
each size.

    python benchmarks/bench_sdcmicro_measures.py
    python benchmarks/bench_sdcmicro_measures.py --records 100000
"""

from __future__ import annotations

import argparse
import math

import numpy as np
import polars as pl

from _common import best_time, peak_rss_mib, print_header


def _interval(records: int, rng: np.random.Generator) -> tuple[float, float, bool]:
    from sdckit.measures import run_measure
    from sdckit.table import Attribute, Kind, Schema, Table

    x = rng.lognormal(10, 1, (records, 3))
    y = x + rng.normal(0, 500, x.shape)
    names = ["a", "b", "c"]
    schema = Schema(tuple(Attribute(name, kind=Kind.NUMERIC) for name in names))
    original = Table(pl.DataFrame(x, schema=names), schema)
    release = Table(pl.DataFrame(y, schema=names), schema)
    ours, result = best_time(lambda: run_measure("interval", original, release))

    def baseline():
        return float(np.mean(np.all(np.abs(x - y) <= 0.05 * y.std(axis=0, ddof=1), axis=1)))

    base, expected = best_time(baseline)
    return ours, base, bool(np.isclose(result.summary()["interval_share"], expected))


def _diversity(records: int, rng: np.random.Generator) -> tuple[float, float, bool]:
    from sdckit.risk._risk_estimators import l_diversities

    keys = rng.integers(0, 40, (records, 3))
    frame = pl.DataFrame(
        {"k0": keys[:, 0], "k1": keys[:, 1], "k2": keys[:, 2], "s": rng.integers(0, 5, records)}
    )
    patterns = frame.select("k0", "k1", "k2").unique(maintain_order=True)
    pattern_of = (
        frame.join(patterns.with_row_index("p"), on=["k0", "k1", "k2"], how="left", maintain_order="left")
        .get_column("p")
        .to_numpy()
    )
    key_patterns = patterns.to_numpy().astype(np.int64)
    sensitive = frame.get_column("s").to_numpy()
    ours, result = best_time(lambda: l_diversities(key_patterns, pattern_of, [40, 40, 40], sensitive, False))

    def baseline():
        counts = frame.group_by("k0", "k1", "k2", "s").agg(pl.len().alias("n"))
        per = (
            counts.sort("n", descending=True)
            .group_by("k0", "k1", "k2")
            .agg(
                (pl.col("n") / pl.col("n").sum()).alias("p"),
                pl.col("n").first().alias("r1"),
                (pl.col("n").reverse().cum_sum().reverse()).alias("suffix"),
            )
        )
        per = per.with_columns(
            (-(pl.col("p").list.eval(pl.element() * pl.element().log()).list.sum())).exp().alias("entropy"),
            (1 + pl.col("suffix").list.slice(1).list.eval((2 * pl.element() > pl.first()).cast(pl.Int64)))
            .list.sum()
            .alias("dummy"),
        )
        return frame.join(per, on=["k0", "k1", "k2"], how="left", maintain_order="left").get_column("entropy")

    base, expected = best_time(baseline)
    return ours, base, bool(np.allclose(result[1], expected.to_numpy()))


def _variables(records: int, rng: np.random.Generator) -> tuple[float, float, bool]:
    from sdckit.measures import run_measure
    from sdckit.table import Attribute, Kind, Schema, Table

    number = rng.normal(50, 10, records)
    order = rng.integers(0, 7, records)
    category = rng.choice(np.array(["a", "b", "c", "d"]), records)
    released = (number + rng.normal(0, 1, records), np.clip(order + rng.integers(-1, 2, records), 0, 6))
    shuffled = np.where(rng.random(records) < 0.1, "a", category)
    schema = Schema(
        (
            Attribute("n", kind=Kind.NUMERIC),
            Attribute("o", kind=Kind.ORDINAL),
            Attribute("c", kind=Kind.CATEGORICAL),
        )
    )
    original = Table(pl.DataFrame({"n": number, "o": order, "c": category}), schema)
    release = Table(pl.DataFrame({"n": released[0], "o": released[1], "c": shuffled}), schema)
    ours, result = best_time(lambda: run_measure("variables", original, release, group="utility"))

    def baseline():
        levels = np.union1d(order, released[1])
        parts = [
            np.mean((2 / math.pi) * np.arctan(np.abs(number - released[0]))),
            np.mean(
                np.abs(np.searchsorted(levels, order) - np.searchsorted(levels, released[1]))
                / (len(levels) - 1)
            ),
            np.mean(category != shuffled),
        ]
        return float(np.mean(parts))

    base, expected = best_time(baseline)
    return ours, base, bool(np.isclose(result.overall, expected))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, nargs="*", default=[100_000, 1_000_000])
    args = parser.parse_args(argv)
    print_header(argv)
    header = f"{'records':>9} {'measure':<30} {'sdckit s':>9} {'base s':>9} {'ratio':>6} {'same':>5}"
    print(f"{header} {'peak MiB':>9}")
    for records in args.records:
        rng = np.random.default_rng(1)
        for label, run in (
            ("risk interval (dRisk)", _interval),
            ("entropy/recursive l-diversity", _diversity),
            ("utility variables", _variables),
        ):
            ours, base, same = run(records, rng)
            print(
                f"{records:>9,} {label:<30} {ours:>9.3f} {base:>9.3f} {base / ours:>5.2f}x {str(same):>5} "
                f"{peak_rss_mib():>9.0f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
