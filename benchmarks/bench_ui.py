"""Benchmark: the workbench (issue 20) during a long run, against itself idle and against the command.

    .venv/bin/python benchmarks/bench_ui.py [--records 1000000] [--requests 40]

Data (generated, seeded): ``--records`` student records (``python -m examples.generate``, Parquet)
with ``examples/example.yaml`` (111 known sets).

* **latency**: ``sdckit ui`` in a subprocess on 127.0.0.1; ``--requests`` page requests (Measure,
  Describe with its 27-row form, a run's status) one after another, first idle (the baseline), then
  while the combined risk of every record is computed in a job: p50 and p99 of each and their ratio
  (what a run costs the pages).
* **run**: the time of the Measure job (combined risk, re-identification, k-anonymity check; from
  its start to its result on disk, read from the job's files) against the three commands that give
  the same figures (``sdckit risk combined``, ``risk reidentification``, ``check -k 5``), each a
  fresh process: the ratio is what running as one job (a fork of the preloaded server, progress
  written to a file) costs or saves.
* **memory**: peak resident memory of the server process (VmHWM), which reads the data once to
  describe it, and of this process.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from _common import peak_rss_mib, print_header

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
PAGES = ("/measure", "/describe")


def _environment() -> dict[str, str]:
    paths = [str(ROOT / "src"), str(ROOT)]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths + [os.environ.get("PYTHONPATH", "")])}


def _start(folder: Path) -> tuple[subprocess.Popen, httpx.Client]:
    arguments = ["ui", "--port", "0", "--workdir", str(folder / "wd")]
    process = subprocess.Popen(
        [sys.executable, "-c", f"from sdckit.cli import main; main({arguments!r})"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=_environment(),
        cwd=folder,
    )
    line = process.stdout.readline().decode()
    found = re.search(r"on (http://127\.0\.0\.1:(\d+))/\?token=(\S+) ", line)
    if not found:
        process.kill()
        raise SystemExit(f"sdckit ui printed {line!r}")
    base, port, token = found.groups()
    client = httpx.Client(
        base_url=base, cookies={f"sdckit-ui-{port}": token}, timeout=120, follow_redirects=True
    )
    return process, client


def _timed(client: httpx.Client, count: int, extra: str | None = None) -> list[float]:
    pages = [*PAGES, extra] if extra else list(PAGES)
    times = []
    for number in range(count):
        started = time.perf_counter()
        response = client.get(pages[number % len(pages)])
        times.append(time.perf_counter() - started)
        if response.status_code != 200:
            raise SystemExit(f"{pages[number % len(pages)]}: status {response.status_code}")
    return times


def _quantiles(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]


def _vmhwm_mib(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--requests", type=int, default=40)
    args = parser.parse_args(argv)
    print_header(argv)
    folder = Path(tempfile.mkdtemp(prefix="bench-ui-"))
    try:
        data = folder / "students.parquet"
        generate = [sys.executable, "-m", "examples.generate", "--records", str(args.records), "--seed", "1"]
        subprocess.run([*generate, "--output", str(data)], check=True, cwd=ROOT, env=_environment(),
                       stdout=subprocess.DEVNULL)  # fmt: skip
        config = ROOT / "examples" / "example.yaml"
        started = time.perf_counter()
        same_figures = (
            ["risk", "combined", data],
            ["risk", "reidentification", data],
            ["check", data, "-k", "5"],
        )
        for command_line in same_figures:
            subprocess.run(
                [sys.executable, "-m", "sdckit", *map(str, command_line), "-c", str(config)],
                env=_environment(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip
        command = time.perf_counter() - started
        process, client = _start(folder)
        try:
            client.post("/data", data={"path": str(data)})
            page = client.post("/config/load", data={"path": str(config)}).text
            if 'id="config-valid"' not in page:
                raise SystemExit("the configuration does not read the data")
            idle = _timed(client, args.requests)
            client.post("/measure", data={"check-k": "5"})
            job = sorted(p.name for p in (folder / "wd" / "jobs").iterdir())[-1]
            busy = _timed(client, args.requests, f"/jobs/{job}")
            still_running = 'data-state="running"' in client.get(f"/jobs/{job}").text
            while 'data-state="running"' in client.get(f"/jobs/{job}").text:
                time.sleep(0.2)
            job_folder = folder / "wd" / "jobs" / job
            run = (job_folder / "result.json").stat().st_mtime - (job_folder / "payload.json").stat().st_mtime
            server_peak = _vmhwm_mib(process.pid)
        finally:
            process.terminate()
            process.wait(timeout=30)
        idle_p50, idle_p99 = _quantiles(idle)
        busy_p50, busy_p99 = _quantiles(busy)
        print(f"data             {args.records:,} records, examples/example.yaml")
        shown = f"p50 {idle_p50 * 1000:7.1f} ms  p99 {idle_p99 * 1000:7.1f} ms"
        print(f"latency idle     {shown}  ({len(idle)} requests)")
        print(
            f"latency busy     p50 {busy_p50 * 1000:7.1f} ms  p99 {busy_p99 * 1000:7.1f} ms  "
            f"({len(busy)} requests; all during the run: {'yes' if still_running else 'no'})"
        )
        print(f"ratio busy/idle  p50 {busy_p50 / idle_p50:5.2f}x  p99 {busy_p99 / idle_p99:5.2f}x")
        print(f"run as a job     {run:7.2f} s (measure: combined, reidentification, check -k 5)")
        print(f"the 3 commands   {command:7.2f} s (each a fresh process)   ratio {run / command:5.2f}x")
        print(f"peak memory      server {server_peak:,.0f} MiB, this process {peak_rss_mib():,.0f} MiB")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
