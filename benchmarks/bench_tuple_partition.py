"""Benchmark: tuple partitioning of slicing (``sdckit.anonymize._tuple_partition``) on Adult.

Data: the UCI Adult file ``adult_full.csv`` (``../shared/data/adult`` relative to the project root; comma +
space separated, ``?`` = missing); records with any missing value are dropped (30,162 remain, as in Li et
al. 2012 and Dhaigude & Kumar). Occupation is the sensitive attribute. For the column keys the continuous
attributes (age, fnlwgt, education-num, capital-gain, capital-loss, hours-per-week) are discretized into 10
equal-width bins, as the papers do. Fixed 3-column layout (by hand, roughly by correlation):

* C1 = (age, marital-status, relationship, sex, salary-class, capital-gain, capital-loss)
* C2 = (workclass, education, education-num, fnlwgt, hours-per-week, race, native-country)
* C3 = (occupation)  - the sensitive column

(The sensitive column holds occupation alone: every other attribute has some value whose records have one
occupation in more than 1/6 of the cases, so with it in C3 the table as one bucket is not 6-diverse.)

Runs Mondrian (split attributes: the 14 non-sensitive attributes, continuous ones on their raw values,
categorical ones as codes with the categorical width) and random halving (seed 0) for l = 2..6 with
min_bucket_size = 250, each on the incremental :class:`SlicedDiversity` state; every result is re-checked
with the full reference :func:`diversity_check`.

Baseline, measured in the same run: the same partitions driven by a naive state whose ``try_split`` runs the
full reference check over every bucket (O(|buckets| n c) per split, the paper's algorithm as written). It is
slow, so it runs at l = 2 only (both algorithms, the whole partition unless ``--baseline-splits`` caps the
number of split decisions); the incremental state is timed on the same decisions (identical decisions,
asserted) and the ratio printed.
Peak RSS is the process's ru_maxrss after the run. Usage::

    python benchmarks/bench_tuple_partition.py [--baseline-splits N]

``run(print_fn=print)`` runs everything and returns the figures as a dict.
"""

from __future__ import annotations

import argparse
import contextlib
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from sdckit.anonymize._tuple_partition import mondrian_tuple_partition, random_halving_partition
from sdckit.frequency import encode, group_keys
from sdckit.models.sliced import SlicedDiversity, diversity_check

ADULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "adult" / "adult_full.csv"
SENSITIVE = "occupation"
CONTINUOUS = ("age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week")
COLUMNS = (
    ("age", "marital-status", "relationship", "sex", "salary-class", "capital-gain", "capital-loss"),
    ("workclass", "education", "education-num", "fnlwgt", "hours-per-week", "race", "native-country"),
)
SENSITIVE_COLUMN_QIS: tuple[str, ...] = ()
L_VALUES = (2, 3, 4, 5, 6)
MIN_BUCKET_SIZE = 250
N_BINS = 10


def peak_rss_mib() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 1024 / (1024 if sys.platform == "darwin" else 1)


def load_adult() -> pl.DataFrame:
    frame = pl.read_csv(ADULT, separator=",", infer_schema_length=0)
    frame = frame.rename({c: c.strip() for c in frame.columns})
    frame = frame.with_columns(pl.all().str.strip_chars())
    frame = frame.with_columns(
        pl.when(pl.all() == "?").then(None).otherwise(pl.all()).name.keep()
    ).drop_nulls()
    return frame.with_columns(pl.col(c).cast(pl.Float64) for c in CONTINUOUS)


def equal_width_bins(values: np.ndarray, bins: int = N_BINS) -> np.ndarray:
    low, high = float(values.min()), float(values.max())
    if high == low:
        return np.zeros(values.shape[0], dtype=np.int64)
    width = (high - low) / bins
    return np.minimum(np.floor((values - low) / width), bins - 1).astype(np.int64)


def prepare(frame: pl.DataFrame) -> dict[str, Any]:
    binned = frame.with_columns(
        pl.Series(c, equal_width_bins(frame.get_column(c).to_numpy())) for c in CONTINUOUS
    )
    encoding = encode(binned)
    column_keys = [group_keys(encoding, list(column))[0].astype(np.int64) for column in COLUMNS]
    sensitive_qi_key = group_keys(encoding, list(SENSITIVE_COLUMN_QIS))[0].astype(np.int64)  # zeros if none
    sensitive = encoding.codes[encoding.index(SENSITIVE)].astype(np.int64)
    n_values = encoding.cardinalities[encoding.index(SENSITIVE)]
    split_names = [c for c in frame.columns if c != SENSITIVE]
    raw = encode(frame, split_names)
    split = np.column_stack(
        [
            frame.get_column(c).to_numpy() if c in CONTINUOUS else raw.codes[j].astype(np.float64)
            for j, c in enumerate(split_names)
        ]
    )
    categorical = np.array([c not in CONTINUOUS for c in split_names])
    return {
        "column_keys": column_keys,
        "sensitive_qi_key": sensitive_qi_key,
        "sensitive": sensitive,
        "n_values": n_values,
        "split": split,
        "categorical": categorical,
    }


class _Stop(Exception):
    pass


class _Limited(SlicedDiversity):
    """The incremental state, stopping after ``limit`` split decisions (recorded)."""

    limit: int | None = None

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.decisions: list[bool] = []

    def try_split(self, parent, left, right) -> bool:
        if self.limit is not None and len(self.decisions) >= self.limit:
            raise _Stop
        accepted = super().try_split(parent, left, right)
        self.decisions.append(accepted)
        return accepted


class _Naive(_Limited):
    """Baseline: every split decision re-runs the full reference check over every bucket."""

    def __init__(self, data: dict[str, Any], l: float) -> None:  # noqa: E741
        super().__init__(
            data["column_keys"], data["sensitive_qi_key"], data["sensitive"], data["n_values"], l
        )
        self._data = data
        self._l = l
        self._list: list[np.ndarray] = []

    def _check(self, buckets) -> bool:
        d = self._data
        return diversity_check(
            d["column_keys"], d["sensitive_qi_key"], d["sensitive"], d["n_values"], buckets, self._l
        )

    def add_bucket(self, rows) -> None:
        self._list.append(np.asarray(rows))

    @property
    def buckets(self) -> list[np.ndarray]:
        return list(self._list)

    def passes(self) -> bool:
        return self._check(self._list)

    def try_split(self, parent, left, right) -> bool:
        if self.limit is not None and len(self.decisions) >= self.limit:
            raise _Stop
        candidate = [b for b in self._list if b is not parent] + [left, right]
        accepted = self._check(candidate)
        if accepted:
            self._list = candidate
        self.decisions.append(accepted)
        return accepted


def _partition(algorithm: str, data: dict[str, Any], state: SlicedDiversity) -> list[np.ndarray]:
    if algorithm == "mondrian":
        return mondrian_tuple_partition(
            data["split"], state, categorical=data["categorical"], min_bucket_size=MIN_BUCKET_SIZE
        )
    return random_halving_partition(state, np.random.default_rng(0), min_bucket_size=MIN_BUCKET_SIZE)


def run(print_fn: Callable[[str], None] = print, baseline_splits: int | None = None) -> dict[str, Any]:
    if not ADULT.exists():
        raise FileNotFoundError(f"Adult data not found at {ADULT}")
    frame = load_adult()
    data = prepare(frame)
    n = frame.height
    print_fn(f"Adult: {n:,} records, sensitive {SENSITIVE} ({data['n_values']} values), 3 columns")
    args = (data["column_keys"], data["sensitive_qi_key"], data["sensitive"], data["n_values"])
    # Compile the kernels once, untimed.
    warm = SlicedDiversity(*args, 2)
    random_halving_partition(warm, np.random.default_rng(0), min_bucket_size=n // 2)
    results: dict[str, Any] = {"records": n, "runs": [], "baseline": []}
    print_fn(f"{'algorithm':<10} {'l':>3} {'buckets':>8} {'smallest':>9} {'seconds':>8}  reference check")
    for algorithm in ("mondrian", "halving"):
        for l in L_VALUES:  # noqa: E741
            state = SlicedDiversity(*args, l)
            start = time.perf_counter()
            buckets = _partition(algorithm, data, state)
            seconds = time.perf_counter() - start
            ok = diversity_check(*args, buckets, l)
            sizes = [b.shape[0] for b in buckets]
            print_fn(f"{algorithm:<10} {l:>3} {len(buckets):>8} {min(sizes):>9} {seconds:>8.3f}  {ok}")
            results["runs"].append(
                {"algorithm": algorithm, "l": l, "buckets": len(buckets), "seconds": seconds, "passes": ok}
            )
            if not ok:
                raise AssertionError(f"{algorithm} l={l}: the result fails the reference check")
    scope = "every split decision" if baseline_splits is None else f"the first {baseline_splits} decisions"
    print_fn(f"baseline at l=2, {scope}: incremental state vs a full re-check per split")
    for algorithm in ("mondrian", "halving"):
        timings = {}
        decisions = {}
        for name, make in (
            ("incremental", lambda: _Limited(*args, 2)),
            ("naive", lambda: _Naive(data, 2)),
        ):
            state = make()
            state.limit = baseline_splits
            start = time.perf_counter()
            with contextlib.suppress(_Stop):
                _partition(algorithm, data, state)
            timings[name] = time.perf_counter() - start
            decisions[name] = state.decisions
        if decisions["incremental"] != decisions["naive"]:
            raise AssertionError(f"{algorithm}: incremental and naive decisions differ")
        ratio = timings["naive"] / max(timings["incremental"], 1e-9)
        count = len(decisions["naive"])
        print_fn(
            f"{algorithm:<10} {count} decisions: incremental {timings['incremental']:.3f} s, "
            f"naive {timings['naive']:.3f} s, ratio {ratio:.0f}x (identical decisions)"
        )
        results["baseline"].append(
            {"algorithm": algorithm, "decisions": count, **{f"{k}_seconds": v for k, v in timings.items()}}
        )
    # One decision on a fine bucketing: the naive check grows with the number of buckets, ours does not.
    # Candidates: the 10 largest final buckets, each cut in two by row order (accepted or not).
    state = SlicedDiversity(*args, 2)
    fine = mondrian_tuple_partition(data["split"], state, categorical=data["categorical"], min_bucket_size=25)
    parents = sorted(fine, key=len, reverse=True)[:10]
    cuts = [(p, p[: p.shape[0] // 2], p[p.shape[0] // 2 :]) for p in parents]
    start = time.perf_counter()
    naive_accepts = diversity_check(*args, [b for b in fine if b is not parents[0]] + list(cuts[0][1:]), 2)
    naive = time.perf_counter() - start
    start = time.perf_counter()
    accepted = [state.try_split(*cut) for cut in cuts]
    incremental = (time.perf_counter() - start) / len(cuts)
    if accepted[0] != naive_accepts:
        raise AssertionError("incremental and naive decisions differ on the fine bucketing")
    print_fn(
        f"one decision among {len(fine)} buckets (min_bucket_size=25, parents of {parents[-1].shape[0]}.."
        f"{parents[0].shape[0]} rows): incremental {incremental * 1e3:.2f} ms, naive {naive * 1e3:.0f} ms, "
        f"ratio {naive / incremental:.0f}x"
    )
    results["single_decision"] = {
        "buckets": len(fine),
        "incremental_seconds": incremental,
        "naive_seconds": naive,
    }
    results["peak_rss_mib"] = peak_rss_mib()
    print_fn(f"peak RSS {results['peak_rss_mib']:.0f} MiB")
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline-splits", type=int, default=None)
    options = parser.parse_args()
    try:
        run(baseline_splits=options.baseline_splits)
    except (FileNotFoundError, AssertionError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
