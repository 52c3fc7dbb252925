"""Benchmark: the whole ``sdckit risk combined`` process against the whole polars baseline process, on a
grid of data shapes.

For every shape of the grid (``examples/shapes.py``: number of quasi-identifiers, their cardinalities,
null rate, Zipf skew, yes/no flags, known sets kept at epsilon 0.01) a CSV file, a Parquet file
(``--format``) and their configuration are generated, then three fresh processes are timed from the
outside, each the best of three runs (one run when it takes more than 20 s):

* sdckit: ``python -m sdckit risk combined DATA -c CONFIG -o scores.parquet --quiet`` (import, CSV read
  and validation, the computation, the report and the Parquet write of record, risk, top known set
  and top contribution);
* the baseline (``benchmarks/_risk_baseline.py``, the baseline of ``bench_risk.py``): import polars,
  ``pl.read_csv``, one ``pl.len().over(known_set)`` per kept known set, write the risk column.

* the floor: import polars and read the file with the types sdckit ends with (a CSV file with its
  schema given; the same columns of a Parquet file), nothing else. Targets (issue 35): sdckit/floor
  <= 1.5 on every shape, base/sdckit >= 5 where base/floor >= 7.

sdckit and the baseline treat missing values as a category (the generated configurations say so)
and their scores are compared (``allclose``). One more sdckit run, through a small in-process timer
that wraps the library's functions without changing them, splits its time into: start (interpreter start and
imports, until the configuration is read), read (configuration, CSV read and validation), compute
(``combined_risk``), write (the scores file) and the rest (summary figures, report, exit). Peak RSS
is each process's own (``wait4``). The timed source's bytecode is written first, as an install
writes it, so that no process pays for compiling sdckit's modules. Usage::

    python benchmarks/bench_shapes.py            # the grid on 1,000,000 records
    python benchmarks/bench_shapes.py --quick    # a smaller grid on 100,000 records
    python benchmarks/bench_shapes.py --src /tmp/before/src --shapes 0,8 --format csv
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

from _common import print_header

ROOT = Path(__file__).resolve().parent.parent
BASELINE = Path(__file__).resolve().parent / "_risk_baseline.py"
REPEATS = 3
LONG = 20.0
TARGET = 5.0  # base / sdckit, where the floor allows BOUND_NEEDED
BOUND_NEEDED = 7.0
FLOOR_TARGET = 1.5  # sdckit / floor, on every shape

# (qis, cardinality, null rate, skew, flags, known sets): the central shape, then one factor at a
# time, then the hard corners.
GRID = (
    (10, "2-64", 0.0, 0.0, 16, 111),
    (3, "2-64", 0.0, 0.0, 16, 111),
    (30, "2-64", 0.0, 0.0, 16, 111),
    (10, "2", 0.0, 0.0, 16, 111),
    (10, "10000", 0.0, 0.0, 16, 111),
    (10, "2-10000", 0.0, 0.0, 16, 111),
    (10, "2-64", 0.2, 0.0, 16, 111),
    (10, "2-64", 0.0, 1.1, 16, 111),
    (10, "2-64", 0.0, 0.0, 16, 10),
    (10, "2-64", 0.0, 0.0, 16, 500),
    (10, "10000", 0.0, 0.0, 16, 10),
    (10, "10000", 0.2, 0.0, 16, 500),
    (30, "2-10000", 0.2, 1.1, 16, 500),
)
QUICK_GRID = (GRID[0], GRID[4], GRID[6], GRID[8], GRID[9], GRID[11])


# The in-process timer of one sdckit run ----------------------------------------------------------


def profile_child(launched: float, out: Path, arguments: list[str]) -> None:
    """Run the command line in this process with the library's read, compute and write functions
    wrapped by timers; write the phases to ``out`` as each one ends (the CLI leaves by os._exit)."""
    import sdckit.config
    import sdckit.io
    import sdckit.risk.combined

    marks: dict[str, float] = {"launched": launched}

    def save() -> None:
        out.write_text(json.dumps(marks))

    def timed(owner, name, start_key, end_key):
        original = getattr(owner, name)

        def wrapper(*args, **kwargs):
            marks.setdefault(start_key, time.time())
            try:
                return original(*args, **kwargs)
            finally:
                marks[end_key] = time.time()
                save()

        setattr(owner, name, wrapper)

    timed(sdckit.config, "load_config", "read_start", "config_end")
    timed(sdckit.config.Config, "read", "read_start", "read_end")
    timed(sdckit.risk.combined, "combined_risk", "compute_start", "compute_end")
    timed(sdckit.io, "write_table", "write_start", "write_end")
    from sdckit.cli import main

    sys.argv = ["sdckit", *arguments]
    main()


def phases(marks: dict[str, float], total: float) -> dict[str, float]:
    start = marks["read_start"] - marks["launched"]
    read = marks["read_end"] - marks["read_start"]
    compute = marks["compute_end"] - marks["compute_start"]
    write = marks["write_end"] - marks["write_start"]
    return {
        "start": start,
        "read": read,
        "compute": compute,
        "write": write,
        "rest": max(0.0, total - start - read - compute - write),
    }


# Running processes ----------------------------------------------------------------------------


def timed_process(command: list[str], env: dict[str, str] | None = None) -> tuple[float, float, float]:
    """Wall seconds, peak RSS (MiB) and CPU seconds (user + system, all threads) of one process;
    raises if it fails."""
    start = time.perf_counter()
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    error = process.stderr.read() if process.stderr else ""
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed (exit {process.returncode}):\n{error.strip()}")
    return seconds, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


def best_of(command: list[str], env: dict[str, str] | None = None) -> tuple[float, float, float]:
    """The best of REPEATS runs, or the one run when it took more than LONG seconds (a few percent of
    noise on a long run does not change a ratio; the grid stays within minutes): wall seconds, peak
    RSS, CPU seconds. On a machine shared with other jobs the CPU seconds are the steadier figure."""
    runs = [timed_process(command, env)]
    while len(runs) < REPEATS and runs[0][0] < LONG:
        runs.append(timed_process(command, env))
    return min(run[0] for run in runs), max(run[1] for run in runs), min(run[2] for run in runs)


SOURCE = ROOT / "src"  # the sdckit source the processes import (--src: another checkout, e.g. HEAD's)


def compile_source() -> None:
    """Write the bytecode of the timed source, as installing a package does (pip compiles it): with
    ``PYTHONDONTWRITEBYTECODE`` set (as in some shells and CI jobs) a fresh process would otherwise
    compile sdckit's modules from their sources every time, about 0.1 CPU s that no installed copy
    pays."""
    import compileall

    compileall.compile_dir(str(SOURCE / "sdckit"), quiet=1)


def sdckit_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SOURCE), env.get("PYTHONPATH")]))
    return env


def write_shape(shape, seed: int, workdir: Path, file_format: str) -> tuple[Path, Path, dict[str, str]]:
    """The data file of ``shape`` (CSV or Parquet), its configuration, and the polars type of each
    column as sdckit reads it (the generated frame's: Int64 for numbers, String for text)."""
    from examples.shapes import config_text, generate_shape

    frame, config = generate_shape(shape, seed)
    data, config_path = workdir / f"data.{file_format}", workdir / "config.yaml"
    if file_format == "parquet":
        frame.write_parquet(data)
    else:
        frame.write_csv(data)
    config_path.write_text(config_text(shape, seed, config))
    return data, config_path, {name: str(dtype) for name, dtype in frame.schema.items()}


def run_shape(data: Path, config_path: Path, workdir: Path) -> dict:
    scores, base_scores = workdir / "scores.parquet", workdir / "baseline.parquet"
    env = sdckit_env()
    cli = ["risk", "combined", str(data), "-c", str(config_path), "-o", str(scores), "--quiet"]
    ours, ours_peak, ours_cpu = best_of([sys.executable, "-m", "sdckit", *cli], env)
    base, base_peak, base_cpu = best_of(
        [sys.executable, str(BASELINE), str(data), str(config_path), str(base_scores)]
    )
    marks_path = workdir / "marks.json"
    launched = time.time()
    profiled, _, _ = timed_process(
        [sys.executable, __file__, "--profile-child", str(launched), str(marks_path), *cli], env
    )
    split = phases(json.loads(marks_path.read_text()), profiled)
    risk = pl.read_parquet(scores).get_column("risk").to_numpy()
    base_risk = pl.read_parquet(base_scores).get_column("risk").to_numpy()
    agree = risk.shape == base_risk.shape and bool(np.allclose(risk, base_risk, rtol=1e-9, atol=1e-12))
    return {
        "ours": ours,
        "ours_cpu": ours_cpu,
        "base_cpu": base_cpu,
        "base": base,
        "ratio": base / ours,
        "ours_peak": ours_peak,
        "base_peak": base_peak,
        "agree": agree,
        "mib": data.stat().st_size / 2**20,
        **split,
    }


FLOOR_SCRIPT = """import json, sys
import polars as pl
types = {name: getattr(pl, dtype) for name, dtype in json.loads(sys.argv[2]).items()}
if sys.argv[1].endswith(".parquet"):
    pl.read_parquet(sys.argv[1], columns=list(types))
else:
    pl.read_csv(sys.argv[1], schema=types)
"""


def polars_read_floor(data: Path, types: dict[str, str]) -> tuple[float, float]:
    """What any process that reads the file with polars pays: interpreter, import polars, and the
    read with the types sdckit ends with (a CSV with its schema given, so nothing is inferred; the
    same columns of a Parquet file): wall and CPU seconds."""
    wall, _, cpu = best_of([sys.executable, "-c", FLOOR_SCRIPT, str(data), json.dumps(types)])
    return wall, cpu


def run_grid(grid, records: int, seed: int, file_format: str) -> list[dict]:
    """Every shape of ``grid`` in one file format, printed as it is measured."""
    from examples.shapes import Shape

    print(f"{file_format.upper()} input")
    header = (
        f"{'shape':<30} {'MiB':>5} {'floor':>5} {'base s':>7} {'sdckit s':>8} {'sdckit/floor':>12} "
        f"{'ratio':>6} {'bound':>6}  {'start':>5} {'read':>5} {'comp':>5} {'write':>5} {'rest':>5}  "
        f"{'RSS base':>8} {'sdckit':>6} {'same':>4}  {'CPU floor':>9} {'base':>6} {'sdckit':>6} {'s/f':>5}"
    )
    print(header)
    rows = []
    for qis, cardinality, null_rate, skew, flags, known_sets in grid:
        shape = Shape(records, qis, cardinality, null_rate, skew, flags, known_sets)
        with tempfile.TemporaryDirectory(prefix="bench_shapes.") as directory:
            workdir = Path(directory)
            data, config_path, types = write_shape(shape, seed, workdir, file_format)
            row = {"shape": shape.label(), "format": file_format, **run_shape(data, config_path, workdir)}
            row["floor"], row["floor_cpu"] = polars_read_floor(data, types)
        # However fast sdckit is, it pays the floor too: base / floor bounds the ratio.
        row["bound"] = row["base"] / row["floor"]
        row["over_floor"] = row["ours"] / row["floor"]
        row["cpu_over_floor"] = row["ours_cpu"] / row["floor_cpu"]
        rows.append(row)
        print(format_row(row), flush=True)
    return rows


def format_row(row: dict) -> str:
    return (
        f"{row['shape']:<30} {row['mib']:>5.0f} {row['floor']:>5.2f} {row['base']:>7.2f} "
        f"{row['ours']:>8.2f} {row['over_floor']:>11.2f}x {row['ratio']:>5.1f}x {row['bound']:>5.1f}x  "
        f"{row['start']:>5.2f} {row['read']:>5.2f} {row['compute']:>5.2f} {row['write']:>5.2f} "
        f"{row['rest']:>5.2f}  {row['base_peak']:>8.0f} {row['ours_peak']:>6.0f} "
        f"{'yes' if row['agree'] else 'NO':>4}  {row['floor_cpu']:>9.2f} {row['base_cpu']:>6.2f} "
        f"{row['ours_cpu']:>6.2f} {row['cpu_over_floor']:>4.2f}x"
    )


def verdict(rows: list[dict]) -> list[str]:
    """The grid again, worst shape first (the highest sdckit/floor), and how many shapes miss a target:
    sdckit/floor <= FLOOR_TARGET everywhere, ratio >= TARGET where the bound is >= BOUND_NEEDED."""
    lines = ["worst shape first (sdckit/floor):"]
    lines += [f"{row['format']:<8} {format_row(row)}" for row in sorted(rows, key=lambda r: -r["over_floor"])]
    over = [row for row in rows if row["over_floor"] > FLOOR_TARGET]
    slow = [row for row in rows if row["bound"] >= BOUND_NEEDED and row["ratio"] < TARGET]
    allowed = sum(row["bound"] >= BOUND_NEEDED for row in rows)
    lines += [
        "",
        f"sdckit/floor     worst {max(row['over_floor'] for row in rows):.2f}x "
        f"(target <= {FLOOR_TARGET:g}x): {len(over)} of {len(rows)} shapes over",
        f"ratio            {len(slow)} of {allowed} shapes with bound >= {BOUND_NEEDED:g}x below {TARGET:g}x",
    ]
    return lines


def main(argv: list[str] | None = None) -> int:
    global SOURCE
    given = sys.argv[1:] if argv is None else list(argv)
    if given[:1] == ["--profile-child"]:
        profile_child(float(given[1]), Path(given[2]), given[3:])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=1_000_000, help="records a shape (default 1,000,000)")
    parser.add_argument("--quick", action="store_true", help="100,000 records, six shapes")
    parser.add_argument("--seed", type=int, default=1, help="generator seed (default 1)")
    parser.add_argument(
        "--format", choices=("csv", "parquet", "both"), default="both", help="input format (default both)"
    )
    parser.add_argument("--shapes", help="comma-separated indices into the grid (default all)")
    parser.add_argument("--src", type=Path, default=SOURCE, help="the sdckit source to time (default src/)")
    arguments = parser.parse_args(given)
    SOURCE = arguments.src.resolve()
    sys.path.insert(0, str(ROOT))

    print_header(argv)
    compile_source()
    records = 100_000 if arguments.quick else arguments.records
    grid = QUICK_GRID if arguments.quick else GRID
    if arguments.shapes:
        grid = tuple(grid[int(index)] for index in arguments.shapes.split(","))
    env = sdckit_env()
    version = best_of([sys.executable, "-m", "sdckit", "--version"], env)[0]
    print(f"records          {records:,} a shape (seed {arguments.seed})")
    print(f"source           {SOURCE}")
    print(f"timing           best of {REPEATS} fresh processes (one when it takes over {LONG:g} s)")
    print(f"sdckit --version {version:.2f} s (whole process)")
    print()
    formats = ("csv", "parquet") if arguments.format == "both" else (arguments.format,)
    rows = []
    for file_format in formats:
        rows += run_grid(grid, records, arguments.seed, file_format)
        print()
    print("floor: a process that imports polars and reads the file with sdckit's types (CSV: schema given;")
    print("Parquet: the same columns), nothing else; sdckit/floor: the whole sdckit process over it;")
    print("ratio: base / sdckit; bound: base / floor, the best ratio any process that reads the file could")
    print("reach. start: interpreter and imports until the configuration is read; read: configuration,")
    print("file read and validation; comp: combined_risk; write: the scores file; rest: figures, report,")
    print("exit (seconds, one profiled run). shape: q QIs, c cardinalities, n null rate, s Zipf skew,")
    print("f flags, k known sets at epsilon 0.01. CPU: user + system seconds of each process (best of")
    print("its runs), s/f: sdckit's over the floor's, the steadier figure when other jobs share the machine.")
    print()
    print("\n".join(verdict(rows)))
    if not all(row["agree"] for row in rows):
        print("scores differ from the baseline on some shape", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
