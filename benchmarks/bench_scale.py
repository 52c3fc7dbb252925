"""Benchmark: runs over partitions (docs/scaling.md) at 10^6, 10^7 and 10^8 records.

For each size, a partitioned Parquet data set of generated students (``examples.generate
--partition-records``: one file of 1,000,000 records at a time, so nothing the size of the data is
ever in memory) is written once and reused, then these commands run as their own processes:

* ``sdckit risk combined`` (scores written as Parquet parts),
* ``sdckit check -k 5``,
* ``sdckit anonymize generalize -k 5 --suppression-limit 0.05`` (release written as parts),
* ``sdckit anonymize local-suppression -k 3`` (release written as parts),
* and Mondrian by fragments against the in-memory Mondrian (``benchmarks/_scale_mondrian.py``),

each with the local out-of-core engine (``--chunk-rows 1000000``) and with an embedded Dask
LocalCluster of 2 worker processes (``--engine dask --workers 2``). The baseline, measured in the same
run on the same files: one polars streaming pass that groups the records by the same
quasi-identifiers (``scan_parquet().group_by().agg(len())``), the least any run over the data can cost;
at 10^6 records the in-memory sdckit run is also timed (the data read whole).

For every run: wall time, records per second, ratio to the baseline, and the peak resident memory of
every process of the run (the command and each Dask worker), sampled with psutil every 0.1 s. Usage::

    python benchmarks/bench_scale.py                  # 10^6, 10^7, 10^8 (about an hour on 2 cores)
    python benchmarks/bench_scale.py --sizes 1e6 1e7  # some sizes
    python benchmarks/bench_scale.py --quick          # 10^6 only
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

from _common import print_header

ROOT = Path(__file__).resolve().parent.parent
SDCKIT = [str(Path(sys.executable).with_name("sdckit"))]
PER_FILE = 1_000_000
KEYS = ["birth_year", "gender", "school", "entry_school_year", "gifted"]
CONFIG = (ROOT / "examples" / "students-release.yaml").read_text()
COMMANDS = {
    "risk combined": ["risk", "combined", "{data}", "-c", "{config}", "-o", "{out}/scores", "-q"],
    "check -k 5": ["check", "{data}", "-c", "{config}", "-k", "5"],
    "generalize k=5": [
        "anonymize",
        "generalize",
        "{data}",
        "-c",
        "{config}",
        "-k",
        "5",
        "--suppression-limit",
        "0.05",
        "-o",
        "{out}/generalized",
        "-q",
        "--allow-violations",
    ],
    "local-suppression k=3": [
        "anonymize",
        "local-suppression",
        "{data}",
        "-c",
        "{config}",
        "-k",
        "3",
        "-o",
        "{out}/suppressed",
        "-q",
    ],
}
ENGINES = {
    "in memory": [],
    "local": ["--chunk-rows", str(PER_FILE)],
    "dask x2": ["--engine", "dask", "--workers", "2", "--chunk-rows", str(PER_FILE)],
}


class PeakMemory:
    """Samples the resident memory of a process and its descendants; keeps each one's peak."""

    def __init__(self, pid: int) -> None:
        self.root = psutil.Process(pid)
        self.peaks: dict[int, tuple[str, int]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                processes = [self.root, *self.root.children(recursive=True)]
            except psutil.Error:
                break
            for process in processes:
                try:
                    rss = process.memory_info().rss
                    label = "worker" if process.pid != self.root.pid else "command"
                except psutil.Error:
                    continue
                if rss > self.peaks.get(process.pid, ("", 0))[1]:
                    self.peaks[process.pid] = (label, rss)
            self._stop.wait(0.1)

    def stop(self) -> list[tuple[str, float]]:
        self._stop.set()
        self._thread.join()
        return sorted(((label, rss / 2**20) for label, rss in self.peaks.values()), reverse=True)


def timed(arguments: list[str]) -> tuple[float, list[tuple[str, float]], int]:
    started = time.perf_counter()
    process = subprocess.Popen(arguments, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT)
    sampler = PeakMemory(process.pid)
    _, error = process.communicate()
    elapsed = time.perf_counter() - started
    peaks = sampler.stop()
    if process.returncode not in (0, 3):
        sys.stderr.write(error.decode(errors="replace")[-2000:])
    return elapsed, peaks, process.returncode


BASELINE = """
import sys, polars as pl
frame = pl.scan_parquet(sys.argv[1] + "/*.parquet").group_by({keys}).agg(pl.len()).collect(engine="streaming")
print(frame.height)
"""


def dataset(folder: Path, records: int) -> Path:
    data = folder / f"students-{records}"
    if not (data / ".complete").exists():
        started = time.perf_counter()
        sys.path.insert(0, str(ROOT))
        from examples.generate import write_partitioned

        write_partitioned(records, data, PER_FILE, seed=1)
        (data / ".complete").write_text("")
        print(
            f"  generated {data} ({records:,} records) in {time.perf_counter() - started:.0f} s", flush=True
        )
    return data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", type=float, default=[1e6, 1e7, 1e8])
    parser.add_argument("--quick", action="store_true", help="10^6 records only")
    parser.add_argument(
        "--folder", type=Path, default=None, help="where the data sets are kept (default: a temp dir)"
    )
    parser.add_argument("--commands", nargs="+", default=list(COMMANDS), choices=list(COMMANDS))
    parser.add_argument("--no-mondrian", action="store_true", help="skip Mondrian by fragments")
    arguments = parser.parse_args(argv)
    sizes = [1_000_000] if arguments.quick else [int(size) for size in arguments.sizes]
    print_header(argv, ("polars", "numpy", "numba", "dask", "distributed"))
    folder = arguments.folder or Path(tempfile.mkdtemp(prefix="sdckit-scale-"))
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "config.yaml"
    config.write_text(CONFIG)
    rows = []
    for records in sizes:
        data = dataset(folder, records)
        base, base_peaks, _ = timed([sys.executable, "-c", BASELINE.format(keys=KEYS), str(data)])
        print(
            f"\n{records:,} records ({len(list(data.glob('*.parquet')))} files): baseline (polars streaming "
            f"group-by) {base:.1f} s, peak {base_peaks[0][1]:,.0f} MiB",
            flush=True,
        )
        heading = f"{'command':<24} {'engine':<10} {'seconds':>8} {'records/s':>11} {'ratio':>7}"
        print(f"  {heading}  peak MiB per process")
        for name in arguments.commands:
            for engine, options in ENGINES.items():
                if engine == "in memory" and records > 1_000_000:
                    continue
                with tempfile.TemporaryDirectory(dir=folder) as out:
                    command = [part.format(data=data, config=config, out=out) for part in COMMANDS[name]]
                    seconds, peaks, code = timed([*SDCKIT, *command, *options])
                peak_text = ", ".join(f"{label} {mib:,.0f}" for label, mib in peaks[:4])
                status = "" if code in (0, 3) else f"  FAILED (exit {code})"
                figures = f"{seconds:>8.1f} {records / seconds:>11,.0f} {seconds / base:>6.1f}x"
                print(f"  {name:<24} {engine:<10} {figures}  {peak_text}{status}", flush=True)
                rows.append((records, name, engine, seconds, max(mib for _, mib in peaks)))
    print("\nHow time grows with size (seconds per 10^6 records):")
    for name in arguments.commands:
        for engine in ("local", "dask x2"):
            per = [
                f"{records:.0e}: {seconds / (records / 1e6):.2f}"
                for records, n, e, seconds, _ in rows
                if n == name and e == engine
            ]
            print(f"  {name:<24} {engine:<10} " + "; ".join(per))
    print(f"\ndata sets kept in {folder}" if arguments.folder else "")
    if not arguments.no_mondrian:
        import _scale_mondrian

        print("\nMondrian by fragments (benchmarks/_scale_mondrian.py):", flush=True)
        _scale_mondrian.main(["--dask", *(["--quick"] if arguments.quick else [])])
    return 0


if __name__ == "__main__":
    os.environ.setdefault("POLARS_MAX_THREADS", "2")
    sys.exit(main())
