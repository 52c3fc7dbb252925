"""Benchmark: re-identification risk (fk, Fk and sdcMicro's individual risk) on sdcMicro's testdata.

Data: ``../shared/data/sdcmicro/testdata.csv`` (4,580 records), keys urbrur, roof, walls, water,
electcon, relat, sex, weights sampling_weight. testdata has no missing key values, so three data sets
are measured:

* ``testdata``: as it is;
* ``testdata+nulls``: every key value set missing with probability ``--null-share`` (default 0.01,
  numpy ``default_rng(0)``);
* ``resampled``: ``--records`` records (default 1,000,000), each column (the keys and the weights)
  sampled independently with replacement from testdata (``default_rng(0)``), then nulls put in as
  above (``default_rng(1)``).

Runs (each in its own subprocess, so that its peak resident memory is its own; best of three timed
calls after an untimed warm-up call):

* ``ours-wildcard``: ``sdckit.risk.reidentification.reidentification_risk`` with missing values as
  wildcards (sdcMicro's freqCalc convention): fk, Fk (exact wildcard matching) and the individual
  risk, plus the file-level figures;
* ``ours-category``: the same with missing values as a category of their own;
* ``pandas``: the baseline, ``groupby(keys, dropna=False)`` transforms ``size`` and ``sum`` of the
  weights and the individual-risk formulas in numpy. pandas groups nulls together: that is the
  category treatment, so it is compared with ``ours-category`` (values checked equal).

On testdata+nulls, ``ours-wildcard`` is also checked against brute-force pairwise matching.
Usage::

    python benchmarks/_evaluation_reidentification.py            # 1,000,000 resampled records
    python benchmarks/_evaluation_reidentification.py --quick    # 100,000
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

ROOT = Path(__file__).resolve().parent.parent
TESTDATA = ROOT.parent / "shared" / "data" / "sdcmicro" / "testdata.csv"
KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]
WEIGHTS = "sampling_weight"
RUNS = ("ours-wildcard", "ours-category", "pandas")
REPEATS = 3


def make_data(name: str, records: int, null_share: float) -> pl.DataFrame:
    frame = pl.read_csv(TESTDATA).select(*KEYS, WEIGHTS)
    if name == "testdata":
        return frame
    if name == "resampled":
        rng = np.random.default_rng(0)
        frame = pl.DataFrame(
            {
                column: frame[column].to_numpy()[rng.integers(0, frame.height, records)]
                for column in frame.columns
            }
        )
    rng = np.random.default_rng(1 if name == "resampled" else 0)
    return frame.with_columns(
        pl.when(pl.Series(rng.random(frame.height) < null_share)).then(None).otherwise(pl.col(key)).alias(key)
        for key in KEYS
    )


def pandas_risk(frame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """fk, Fk and sdcMicro's approximate individual risk with pandas groupby (nulls as a category)."""
    grouped = frame.groupby(KEYS, dropna=False, sort=False)[WEIGHTS]
    f = grouped.transform("size").to_numpy(dtype=np.float64)
    F = grouped.transform("sum").to_numpy(dtype=np.float64)  # noqa: N806
    p = np.minimum(f / F, 1.0)
    risk = 1.0 / f
    inside = p < 1
    with np.errstate(divide="ignore", invalid="ignore"):
        odds, log_inverse = p / (1 - p), -np.log(p)
        risk = np.where(inside & (f == 1), odds * log_inverse, risk)
        risk = np.where(inside & (f == 2), odds - odds**2 * log_inverse, risk)
        risk = np.where(inside & (f >= 3), p / (f - (1 - p)), risk)
    return f, F, risk


def brute_wildcard(frame: pl.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """fk and Fk by comparing every record with every other (a null matches any value)."""
    codes = frame.select(pl.col(KEYS).fill_null(-1)).to_numpy()
    weights = frame[WEIGHTS].to_numpy().astype(np.float64)
    f = np.empty(len(codes))
    F = np.empty(len(codes))  # noqa: N806
    for start in range(0, len(codes), 256):
        block = codes[start : start + 256, None, :]
        match = ((block == codes[None]) | (block < 0) | (codes[None] < 0)).all(axis=2)
        f[start : start + 256] = match.sum(axis=1)
        F[start : start + 256] = match @ weights
    return f, F


def child(run: str, dataset: str, records: int, null_share: float, out: Path) -> None:
    frame = make_data(dataset, records, null_share)
    memory_before = peak_rss_mib()
    if run == "pandas":
        data = frame.to_pandas()

        def compute(part):
            return pandas_risk(part)

        warm = data.head(100)
    else:
        from sdckit.risk.reidentification import reidentification_risk
        from sdckit.table import Attribute, Kind, Role, Schema, Table

        schema = Schema(tuple(Attribute(key, Role.QUASI_IDENTIFIER, Kind.CATEGORICAL) for key in KEYS))
        missing = run.split("-")[1]
        table = Table(frame, schema, weights=WEIGHTS)

        def compute(part):
            result = reidentification_risk(part, weights=WEIGHTS, missing=missing)
            result.summary()  # the file-level figures too
            return result.fk, result.Fk, result.risk

        warm = Table(frame.head(100), schema, weights=WEIGHTS)
        data = table
    compute(warm)
    timings = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        f, F, risk = compute(data)  # noqa: N806
        timings.append(time.perf_counter() - start)
    np.savez(out.with_suffix(".npz"), f=f, F=F, risk=risk)
    out.write_text(
        json.dumps({"seconds": min(timings), "peak_mib": peak_rss_mib(), "data_mib": memory_before})
    )


def run_child(run: str, dataset: str, records: int, null_share: float, workdir: Path):
    out = workdir / f"{run}-{dataset}.json"
    command = [sys.executable, str(Path(__file__).resolve()), "--child", run, "--dataset", dataset]
    command += ["--records", str(records), "--null-share", str(null_share), "--out", str(out)]
    completed = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if completed.returncode != 0:
        print(f"  {run} on {dataset} failed:\n{completed.stderr.strip()}", file=sys.stderr)
        return None
    arrays = np.load(out.with_suffix(".npz"))
    return json.loads(out.read_text()), arrays


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=1_000_000, help="resampled records (1,000,000)")
    parser.add_argument("--quick", action="store_true", help="100,000 resampled records")
    parser.add_argument("--null-share", type=float, default=0.01, help="share of key values set missing")
    parser.add_argument("--child", choices=RUNS, help=argparse.SUPPRESS)
    parser.add_argument("--dataset", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    arguments = parser.parse_args(argv)
    records = 100_000 if arguments.quick else arguments.records
    if arguments.child:
        child(arguments.child, arguments.dataset, records, arguments.null_share, arguments.out)
        return 0
    print_header(argv)
    if not TESTDATA.is_file():
        print(f"skipped: {TESTDATA} is not available (see /work/shared/data/README.md)")
        return 0
    print(
        f"keys             {', '.join(KEYS)}; weights {WEIGHTS}; best of {REPEATS} calls, each run in its "
        "own process"
    )
    with tempfile.TemporaryDirectory() as directory:
        workdir = Path(directory)
        for dataset in ("testdata", "testdata+nulls", "resampled"):
            frame = make_data(dataset, records, arguments.null_share)
            nulls = frame.select(pl.col(KEYS).null_count()).sum_horizontal().item()
            cells = nulls / (frame.height * len(KEYS))
            with_null = frame.select(pl.any_horizontal(pl.col(KEYS).is_null()).sum()).item() / frame.height
            print(
                f"\n{dataset}: {frame.height:,} records, {100 * cells:.2f}% of key values missing, "
                f"{100 * with_null:.2f}% of records with a missing key value"
            )
            results = {run: run_child(run, dataset, records, arguments.null_share, workdir) for run in RUNS}
            for run, outcome in results.items():
                if outcome is None:
                    continue
                figures, _ = outcome
                print(
                    f"  {run:<14} {figures['seconds']:8.4f} s   peak RSS {figures['peak_mib']:7.0f} MiB "
                    f"(data loaded: {figures['data_mib']:.0f} MiB)"
                )
            if results["pandas"] and results["ours-category"]:
                ours, _ = results["ours-category"]
                base, _ = results["pandas"]
                print(f"  ratio pandas / ours-category: {base['seconds'] / ours['seconds']:.1f}x")
                if results["ours-wildcard"]:
                    wild, _ = results["ours-wildcard"]
                    ratio = base["seconds"] / wild["seconds"]
                    print(f"  ratio pandas (category) / ours-wildcard: {ratio:.1f}x")
                a, b = results["ours-category"][1], results["pandas"][1]
                same = np.array_equal(a["f"], b["f"]) and np.allclose(a["F"], b["F"], rtol=1e-12)
                difference = float(np.max(np.abs(a["risk"] - b["risk"]))) if len(a["risk"]) else 0.0
                verdict = "equal" if same else "DIFFER"
                print(f"  ours-category = pandas: fk/Fk {verdict}, risk max |diff| {difference:.1e}")
            if dataset == "testdata+nulls" and results["ours-wildcard"]:
                f, F = brute_wildcard(frame)  # noqa: N806
                wild = results["ours-wildcard"][1]
                same = np.array_equal(wild["f"], f) and np.allclose(wild["F"], F, rtol=1e-12)
                print(f"  ours-wildcard = brute-force pairwise matching: {'yes' if same else 'NO'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
