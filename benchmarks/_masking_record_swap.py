"""Benchmark: targeted record swapping and sampling on a generated census (issue 13).

    .venv/bin/python benchmarks/_masking_record_swap.py [--households 400000] [--baseline-initiators 2000]

Data (generated, seeded): ``--households`` households (default 400,000) of 1 to 5 persons (about
2.5 on average: ~1,000,000 persons) in a geography of three levels, 4 regions > 40 counties > 800
districts (districts of very different sizes); per person an age group (18), sex and nationality
(95% national, the rest spread over 12 others); per household its size (the similarity variable).

* **record-swap**: ``sdckit.anonymize.record_swap`` (risk variables age group, sex, nationality;
  k-anonymity 3; swap rate 0.05; similarity household size), best of two after an untimed warm-up on
  a small census (numba compiles on first use). Every release is checked: households per district
  unchanged, persons per district unchanged (similarity on size), no household at risk left
  without a reason (``no_donor``), swap rate reached.
* **baseline**: the straightforward numpy/pandas implementation of the same algorithm: pandas
  ``groupby(...).transform("size")`` counts per level and ``groupby(hid).min()`` for the household
  risk; then, per household to swap, a boolean mask over all households (unswapped, another area,
  same size) and the arg-max of the donor keys. That donor search costs O(H) per household, so it is
  timed on the first ``--baseline-initiators`` households to swap and extrapolated linearly to the
  number our run swapped (stated as such in the output); the risk part is timed in full.
* **sample**: ``sdckit.anonymize.sample`` of the ~1,000,000 persons, fraction 0.1, simple and
  stratified by region and county (40 strata), against pandas
  ``DataFrame.sample`` / ``groupby(...).sample(frac=0.1)``.

Each measurement runs in its own subprocess, so the peak resident memory reported is its own.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

from _common import peak_rss_mib, print_header

ROOT = Path(__file__).resolve().parents[1]
GEOGRAPHY = ["region", "county", "district"]
RISK = ["age_group", "sex", "nationality"]


def census(n_households: int, seed: int = 1) -> pl.DataFrame:
    """A census of ``n_households`` households (see the module documentation)."""
    rng = np.random.default_rng(seed)
    size = rng.choice(np.arange(1, 6), size=n_households, p=[0.28, 0.3, 0.16, 0.16, 0.10])
    weights = rng.pareto(1.5, 800) + 1
    district = rng.choice(800, size=n_households, p=weights / weights.sum())
    county = district // 20
    region = county // 10
    hid = np.repeat(np.arange(n_households), size)
    n = len(hid)
    national = rng.random(n) < 0.95
    nationality = np.where(national, 0, rng.integers(1, 13, n))
    return pl.DataFrame(
        {
            "hid": hid,
            "region": region[hid],
            "county": county[hid],
            "district": district[hid],
            "hsize": size[hid],
            "age_group": rng.integers(0, 18, n),
            "sex": rng.integers(0, 2, n),
            "nationality": nationality,
        }
    )


def census_table(frame: pl.DataFrame):
    from sdckit.table import Attribute, Kind, Role, Schema, Table

    described = [Attribute("hid", role=Role.HOUSEHOLD, kind=Kind.NUMERIC)]
    described += [Attribute(name, role=Role.QUASI_IDENTIFIER) for name in RISK]
    return Table(frame, Schema.infer(frame, described))


# The baseline ----------------------------------------------------------------------------------


def baseline_record_swap(frame: pl.DataFrame, rate: float, k: int, seed: int, limit: int) -> dict:
    """Straightforward transcription of targeted record swapping with pandas and numpy masks; the
    donor search stops after ``limit`` households to swap (timed separately)."""
    import pandas as pd

    started = time.perf_counter()
    df = frame.to_pandas()
    first = df.groupby("hid", sort=True).head(1).set_index("hid")
    n_households = len(first)
    smallest = []
    for h in range(len(GEOGRAPHY)):
        counts = df.groupby(RISK + GEOGRAPHY[: h + 1])["hid"].transform("size")
        smallest.append(counts.groupby(df["hid"]).min().to_numpy())
    smallest = np.stack(smallest)
    at_risk = smallest < k
    level = np.where(at_risk.any(axis=0), np.argmax(at_risk, axis=0), len(GEOGRAPHY))
    geo = np.stack(
        [
            pd.MultiIndex.from_frame(first[GEOGRAPHY[: h + 1]]).factorize()[0]
            if h
            else first[GEOGRAPHY[0]].factorize()[0]
            for h in range(len(GEOGRAPHY))
        ]
    )
    rng = np.random.default_rng(seed)
    keys = (1.0 / smallest) / rng.exponential(size=smallest.shape)
    size = first["hsize"].to_numpy()
    risk_seconds = time.perf_counter() - started

    started = time.perf_counter()
    used = np.zeros(n_households, dtype=bool)
    initiators = [(h, i) for h in range(len(GEOGRAPHY)) for i in np.flatnonzero(level == h)]
    done = 0
    for h, i in initiators[:limit]:
        if used[i]:
            continue
        mask = ~used & (geo[h] != geo[h, i]) & (size == size[i])
        if mask.any():
            donor = int(np.argmax(np.where(mask, keys[h], -np.inf)))
            used[i] = used[donor] = True
        done += 1
    search_seconds = time.perf_counter() - started
    return {
        "risk_seconds": risk_seconds,
        "search_seconds": search_seconds,
        "searched": done,
        "households_at_risk": int((level < len(GEOGRAPHY)).sum()),
    }


# One measurement per subprocess -----------------------------------------------------------------


def run_one(name: str, n_households: int, limit: int) -> dict:
    frame = census(n_households)
    result: dict = {"records": frame.height, "households": n_households}
    if name == "record-swap":
        from sdckit.anonymize import METHODS, record_swap

        record_swap(census_table(census(2_000, seed=2)), GEOGRAPHY, similarity=[["hsize"]])  # compile
        table = census_table(frame)
        best = float("inf")
        for _ in range(2):
            started = time.perf_counter()
            release = record_swap(
                table, GEOGRAPHY, similarity=[["hsize"]], risk_variables=RISK, swap_rate=0.05, k_anonymity=3
            )
            best = min(best, time.perf_counter() - started)
        figures = METHODS.get("record-swap").summary(release)  # the figures without the per-household arrays
        released = release.table.data
        per_district = frame.group_by("district").len().sort("district")
        after = released.group_by("district").len().sort("district")
        households = frame.group_by("hid").first().group_by("district").len().sort("district")
        households_after = released.group_by("hid").first().group_by("district").len().sort("district")
        result |= {
            "seconds": best,
            "figures": figures,
            "persons_per_district_kept": per_district.equals(after),
            "households_per_district_kept": households.equals(households_after),
        }
    elif name == "baseline":
        result |= baseline_record_swap(frame, 0.05, 3, 0, limit)
    elif name == "sample":
        from sdckit.anonymize import sample
        from sdckit.anonymize.sampling import SampleFigures

        table = census_table(frame)
        sample(census_table(census(1_000, seed=2)), 0.1, strata=["region"])
        for label, strata in (("simple", None), ("stratified", ["region", "county"])):
            best = float("inf")
            for _ in range(3):
                started = time.perf_counter()
                release = sample(table, 0.1, strata=strata, seed=1)
                best = min(best, time.perf_counter() - started)
            result[label] = {"seconds": best, "kept": release.figures_as(SampleFigures).records_kept}
    elif name == "sample-baseline":
        df = frame.to_pandas()
        for label, strata in (("simple", None), ("stratified", ["region", "county"])):
            best = float("inf")
            for _ in range(3):
                started = time.perf_counter()
                kept = (
                    df.sample(frac=0.1, random_state=1)
                    if strata is None
                    else (df.groupby(strata).sample(frac=0.1, random_state=1))
                )
                kept = kept.sort_index()
                best = min(best, time.perf_counter() - started)
            result[label] = {"seconds": best, "kept": len(kept)}
    result["peak_rss_mib"] = peak_rss_mib()
    return result


def measure(name: str, households: int, limit: int) -> dict:
    with tempfile.TemporaryDirectory() as directory:
        out = Path(directory) / "result.json"
        command = [
            sys.executable,
            __file__,
            "--run",
            name,
            "--households",
            str(households),
            "--baseline-initiators",
            str(limit),
            "--result",
            str(out),
        ]
        completed = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
        if completed.returncode != 0:
            raise SystemExit(f"{name} failed:\n{completed.stderr}")
        return json.loads(out.read_text())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--households", type=int, default=400_000)
    parser.add_argument("--baseline-initiators", type=int, default=2_000)
    parser.add_argument("--run", help=argparse.SUPPRESS)
    parser.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.run:
        args.result.write_text(json.dumps(run_one(args.run, args.households, args.baseline_initiators)))
        return 0

    print_header(argv)
    ours = measure("record-swap", args.households, args.baseline_initiators)
    base = measure("baseline", args.households, args.baseline_initiators)
    figures = ours["figures"]
    print(
        f"census           {ours['records']:,} persons in {ours['households']:,} households; "
        "geography 4 regions > 40 counties > 800 districts"
    )
    print(
        f"record-swap      {ours['seconds']:.2f} s, peak RSS {ours['peak_rss_mib']:,.0f} MiB; "
        f"households at risk {figures['risky_households']:,} (left {figures['risky_households_left']:,}, "
        f"no donor {figures['no_donor']:,}); pairs {figures['pairs']:,} "
        f"(target {figures['target_pairs']:,}); "
        f"swap rate achieved {figures['swap_rate_achieved']:.4f}"
    )
    per_level = "; ".join(
        f"{name}: at risk {v['at_risk']:,}, swapped {v['swapped']:,}, pairs {v['pairs']:,}"
        for name, v in figures["levels"].items()
    )
    print(f"                 {per_level}")
    checks = ours["households_per_district_kept"] and ours["persons_per_district_kept"]
    print(f"                 households and persons per district unchanged: {checks}")
    per_household = base["search_seconds"] / max(base["searched"], 1)
    extrapolated = base["risk_seconds"] + per_household * figures["pairs"]
    print(
        f"baseline         risk {base['risk_seconds']:.2f} s (pandas, in full; households at risk "
        f"{base['households_at_risk']:,}); donor search {base['search_seconds']:.2f} s for "
        f"{base['searched']:,} households = {1000 * per_household:.2f} ms each, extrapolated to "
        f"{figures['pairs']:,} swaps: {extrapolated:,.0f} s; peak RSS {base['peak_rss_mib']:,.0f} MiB"
    )
    print(
        f"ratio            baseline (extrapolated) / ours = {extrapolated / ours['seconds']:,.0f}x; "
        f"risk part alone: baseline {base['risk_seconds']:.2f} s"
    )
    ok = checks and figures["risky_households_left"] <= figures["no_donor"]
    sampled = measure("sample", args.households, args.baseline_initiators)
    pandas = measure("sample-baseline", args.households, args.baseline_initiators)
    for label in ("simple", "stratified"):
        s, p = sampled[label], pandas[label]
        print(
            f"sample {label:<10} ours {s['seconds']:.3f} s (kept {s['kept']:,}), pandas {p['seconds']:.3f} s "
            f"(kept {p['kept']:,}); ratio pandas / ours = {p['seconds'] / s['seconds']:.1f}x"
        )
    print(
        f"                 peak RSS ours {sampled['peak_rss_mib']:,.0f} MiB, "
        f"pandas {pandas['peak_rss_mib']:,.0f} MiB"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
