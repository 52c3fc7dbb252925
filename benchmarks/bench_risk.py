"""Benchmark: the combined record-level disclosure risk D(r) of Orooji & Knapp (2019).

Generates the synthetic student data (examples/generate.py; 1,009,993 records, the paper's size, by
default), loads examples/example.yaml, and computes D(r) for every record with

* ours: ``sdckit.risk.combined.combined_risk``, once with ``missing="category"`` and once with the
  default ``missing="wildcard"``;
* a baseline (``benchmarks/_risk_baseline.py``), the straightforward implementation: for each kept
  known set one polars ``pl.len().over(known_set)`` window count, no reuse between sets, and D
  accumulated in numpy as PK(KS) / count * alpha * C(UKS). It reads the YAML itself and enumerates
  the known sets itself, so it is an independent check. polars groups nulls together, which is the
  ``category`` treatment of missing values, so it is compared with ours under ``missing="category"``.

Each run happens in its own subprocess, so its peak resident memory (ru_maxrss of the child) is its
own; only the risk computation is timed, after the data has been read into memory, as the best
of three calls (after an untimed warm-up call on a few records). Usage::

    python benchmarks/bench_risk.py            # 1,009,993 records
    python benchmarks/bench_risk.py --quick    # 100,000 records
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
import yaml

from _common import peak_rss_mib
from _risk_baseline import baseline_attributes, baseline_risk

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CONFIG = ROOT / "examples" / "example.yaml"
PAPER_RECORDS = 1_009_993
QUICK_RECORDS = 100_000
MEMORY_LIMIT_MIB = 4096
REPEATS = 3
WARM_UP_RECORDS = 1_000
RUNS = {
    "baseline": "baseline (one window count per known set), missing=category",
    "ours": "ours (combined_risk), missing=category",
    "ours-wildcard": "ours (combined_risk), missing=wildcard",
}


# ----------------------------------------------------------------------------------------------
# Ours.


def build_table(frame: pl.DataFrame, config_path: Path):
    """A sdckit Table for ``frame``: through the configuration loader if it exists, else from the
    YAML by hand."""
    try:
        from sdckit.config import load_config
    except ImportError:
        load_config = None
    if load_config is not None:
        return load_config(config_path).read(frame)

    from sdckit.table import Attribute, Kind, Role, Schema, Table, ValueRange

    described = []
    for name, spec in (yaml.safe_load(config_path.read_text()).get("attributes") or {}).items():
        spec = spec or {}
        described.append(
            Attribute(
                name=name,
                role=Role(spec.get("role", "insensitive")),
                kind=Kind(spec.get("kind", "categorical")),
                public_probability=float(spec.get("public", 0.0)),
                sensitivity=float(spec.get("sensitivity", 0.0)),
                value_weights={str(k): float(v) for k, v in (spec.get("values") or {}).items()},
                range_weights=tuple(
                    ValueRange(weight=float(r["weight"]), minimum=r.get("min"), maximum=r.get("max"))
                    for r in spec.get("ranges") or []
                ),
            )
        )
    return Table.from_frame(frame, Schema.infer(frame, described))


def ours_risk(frame: pl.DataFrame, config_path: Path, alpha: float, epsilon: float, missing: str):
    from sdckit.risk.combined import combined_risk

    table = build_table(frame, config_path)
    start = time.perf_counter()
    result = combined_risk(table, alpha=alpha, epsilon=epsilon, missing=missing)
    elapsed = time.perf_counter() - start
    return np.asarray(result.risk, dtype=np.float64), result.known_sets.height, elapsed


# ----------------------------------------------------------------------------------------------
# One run per subprocess.


def child(run: str, data: Path, config_path: Path, risk_out: Path, result_out: Path) -> None:
    config = yaml.safe_load(config_path.read_text())
    alpha = float(config.get("risk", {}).get("alpha", 100.0))
    epsilon = float(config.get("risk", {}).get("epsilon", 0.01))
    start = time.perf_counter()
    frame = pl.read_parquet(data)
    load_seconds = time.perf_counter() - start

    def compute(part: pl.DataFrame) -> tuple[np.ndarray, int, float]:
        if run == "baseline":
            begin = time.perf_counter()
            risk, kept = baseline_risk(part, config, alpha, epsilon)
            return risk, kept, time.perf_counter() - begin
        missing = "wildcard" if run == "ours-wildcard" else "category"
        return ours_risk(part, config_path, alpha, epsilon, missing)

    # A first call on a few records loads compiled kernels and starts thread pools; it is reported
    # apart, so that the timed call measures the computation alone.
    _, _, warm_up_seconds = compute(frame.head(WARM_UP_RECORDS))
    # The best of REPEATS full-size calls, for both implementations alike (the machine is shared).
    timings = []
    for _ in range(REPEATS):
        risk, kept, seconds = compute(frame)
        timings.append(seconds)
    np.save(risk_out, risk)
    result = {
        "seconds": min(timings),
        "all_seconds": timings,
        "warm_up_seconds": warm_up_seconds,
        "load_seconds": load_seconds,
        "peak_mib": peak_rss_mib(),
        "known_sets": kept,
    }
    result_out.write_text(json.dumps(result))


def run_child(run: str, data: Path, config_path: Path, workdir: Path) -> tuple[dict, np.ndarray] | None:
    risk_out, result_out = workdir / f"{run}.npy", workdir / f"{run}.json"
    command = [sys.executable, str(Path(__file__).resolve()), "--child", run, "--data", str(data)]
    command += ["--config", str(config_path), "--risk-out", str(risk_out), "--result-out", str(result_out)]
    completed = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if completed.returncode != 0:
        print(f"  {run} failed (exit {completed.returncode}):\n{completed.stderr.strip()}", file=sys.stderr)
        return None
    return json.loads(result_out.read_text()), np.load(risk_out)


def ours_available() -> bool:
    probe = [sys.executable, "-c", "import sdckit.risk.combined as c; c.combined_risk"]
    return subprocess.run(probe, cwd=ROOT, capture_output=True).returncode == 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=PAPER_RECORDS, help="records (default 1,009,993)")
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_RECORDS:,} records, for a fast check")
    parser.add_argument("--seed", type=int, default=1, help="generator seed (default 1)")
    parser.add_argument("--config", type=Path, default=DEFAULT_CONFIG, help="risk configuration (YAML)")
    parser.add_argument(
        "--threshold", type=float, default=0.01, help="risk threshold reported (default 0.01)"
    )
    parser.add_argument("--only", choices=list(RUNS), action="append", help="run only these (repeatable)")
    parser.add_argument("--child", choices=list(RUNS), help=argparse.SUPPRESS)
    parser.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--risk-out", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--result-out", type=Path, help=argparse.SUPPRESS)
    arguments = parser.parse_args(argv)
    config_path = arguments.config.resolve()
    if arguments.child:
        child(arguments.child, arguments.data, config_path, arguments.risk_out, arguments.result_out)
        return 0
    if arguments.records < 1:
        parser.error("--records must be at least 1")

    sys.path.insert(0, str(ROOT))
    from examples.generate import generate

    n_records = QUICK_RECORDS if arguments.quick else arguments.records
    runs = [run for run in RUNS if run in (arguments.only or RUNS)]
    if any(run.startswith("ours") for run in runs) and not ours_available():
        print("note: sdckit.risk.combined.combined_risk is not importable: running the baseline only\n")
        runs = [run for run in runs if run == "baseline"]

    config = yaml.safe_load(config_path.read_text())
    alpha = float(config.get("risk", {}).get("alpha", 100.0))
    epsilon = float(config.get("risk", {}).get("epsilon", 0.01))
    n_attributes = len(baseline_attributes(config))
    start = time.perf_counter()
    frame = generate(n_records, arguments.seed)
    generation_seconds = time.perf_counter() - start
    shown = config_path.relative_to(ROOT) if config_path.is_relative_to(ROOT) else config_path
    print(
        f"records          {frame.height:,} (seed {arguments.seed}, generated in {generation_seconds:.2f} s)"
    )
    print(f"attributes       {frame.width} columns, {n_attributes} of them non-identifiers")
    print(f"configuration    {shown} (alpha {alpha:g}, epsilon {epsilon:g})")

    results: dict[str, tuple[dict, np.ndarray]] = {}
    with tempfile.TemporaryDirectory(prefix="bench_risk.") as directory:
        workdir = Path(directory)
        data = workdir / "data.parquet"
        frame.write_parquet(data)
        del frame
        for run in runs:
            outcome = run_child(run, data, config_path, workdir)
            if outcome is not None:
                results[run] = outcome
    if not results:
        return 1

    threshold = arguments.threshold
    print()
    header = f"{'run':<14} {'known sets':>10} {'time (s)':>9} {'warm-up (s)':>11} {'peak RSS (MiB)':>14}"
    print(f"{header} {'< 4 GiB':>7} {'above ' + format(threshold, 'g'):>18}")
    for run, (result, risk) in results.items():
        above = int(np.count_nonzero(risk > threshold))
        under = "yes" if result["peak_mib"] < MEMORY_LIMIT_MIB else "NO"
        print(
            f"{run:<14} {result['known_sets']:>10} {result['seconds']:>9.2f} "
            f"{result['warm_up_seconds']:>11.2f} {result['peak_mib']:>14.0f} {under:>7} "
            f"{above:>9,} ({above / risk.size:.2%})"
        )
    print()
    for run in results:
        print(f"{run:<14} {RUNS[run]}")
    print()

    status = 0 if len(results) == len(runs) else 1
    if "baseline" in results and "ours" in results:
        (base, base_risk), (mine, my_risk) = results["baseline"], results["ours"]
        same_shape = base_risk.shape == my_risk.shape
        agree = same_shape and bool(np.allclose(base_risk, my_risk))
        difference = (
            float(np.max(np.abs(base_risk - my_risk))) if same_shape and base_risk.size else float("nan")
        )
        print(
            f"ours vs baseline (missing=category): max |difference| {difference:.3g}, "
            f"allclose {'yes' if agree else 'NO'}"
        )
        print(
            f"speed-up: baseline time / ours time = {base['seconds'] / mine['seconds']:.1f}x (target >= 5x)"
        )
        if not agree:
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
