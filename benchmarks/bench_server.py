"""Benchmark: the query server (issues 16, 30) under load, against the same queries run in-process.

    .venv/bin/python benchmarks/bench_server.py [--records 1000000] [--seconds 60] [--clients 50]

Data (generated, seeded): ``--records`` student records (``python -m examples.generate``, Parquet)
with ``examples/example.yaml``: ``students`` under differential privacy (Laplace, a budget so large
that nothing is refused), and other records (seed 2; one data source, one protection)
``students_restricted`` under query restriction (``--no-restriction`` leaves it out).

* **server**: ``sdckit serve`` in a subprocess on 127.0.0.1; ``--clients`` concurrent clients (one
  analyst and one keep-alive connection each, asyncio + httpx) for ``--seconds``, each sending a
  seeded mix of counts with filters, sums and means of ``birth_year`` with filters, and group-by
  counts (one in ten to the restriction dataset, whose refusals are counted apart). Throughput,
  p50/p99 latency, errors (anything but 200, or 403 on the restriction dataset: must be 0), peak
  resident memory of the server process (VmHWM), and its resident memory (VmRSS) sampled every
  ``--sample`` seconds: at the start, after the first sample (warm: thread pool, connections and
  caches made) and at the end, with the growth from warm to end (issue 30: at most 10% over a
  five-minute run, ``--seconds 300``).
* **baseline**: the same mix through :class:`sdckit.query.service.QueryService` in this process,
  without HTTP, one query after another: the ratio says what HTTP, JSON, the thread pool and the
  concurrency cost or gain.
* **ledger**: after the server is stopped, the SQLite store is read: the epsilon spent by each
  analyst equals the sum of the ``epsilon_spent`` the server told them (to 1e-9).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from _common import peak_rss_mib, print_header

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # the example data generator
DP, RESTRICTED = "students", "students_restricted"

SERVER_YAML = """\
store: ledger.sqlite
datasets:
  students:
    data: students.parquet
    config: example.yaml
    protection: dp
    budget: 1.0e9
    bounds: {birth_year: [1980, 2006]}
    domains:
      gender: [F, M]
      ethnicity: [White, Black, Hispanic, Asian, American Indian]
      lunch_status: [Free, Reduced, Paid]
"""
RESTRICTED_YAML = """\
  students_restricted:
    data: restricted.parquet
    config: example.yaml
    protection: restriction
    min_query_set: 10
"""


def query_mix(rng: np.random.Generator) -> tuple[str, dict]:
    """One query of the mix: (dataset, body)."""
    year = int(rng.integers(1981, 2005))
    gender = str(rng.choice(["F", "M"]))
    kind = rng.random()
    filters = [{"column": "birth_year", "op": ">=", "value": year}]
    if kind < 0.10:
        restricted = [{"column": "gender", "op": "=", "value": gender}]
        return RESTRICTED, {"aggregate": "count", "filters": restricted}
    if kind < 0.40:
        filters.append({"column": "gender", "op": "=", "value": gender})
        return DP, {"aggregate": "count", "filters": filters, "epsilon": 0.01}
    if kind < 0.60:
        return DP, {"aggregate": "sum", "column": "birth_year", "filters": filters, "epsilon": 0.01}
    if kind < 0.70:
        return DP, {"aggregate": "mean", "column": "birth_year", "filters": filters, "epsilon": 0.01}
    group_by = ["gender"] if kind < 0.85 else ["ethnicity", "lunch_status"]
    return DP, {"aggregate": "count", "filters": filters, "group_by": group_by, "epsilon": 0.01}


def prepare(folder: Path, records: int, restriction: bool) -> Path:
    from examples.generate import main as generate

    started = time.perf_counter()
    assert (
        generate(["--records", str(records), "--seed", "1", "--output", str(folder / "students.parquet")])
        == 0
    )
    if restriction:
        assert (
            generate(
                ["--records", str(records), "--seed", "2", "--output", str(folder / "restricted.parquet")]
            )
            == 0
        )
    print(f"data             {records:,} records generated in {time.perf_counter() - started:.1f} s")
    shutil.copy(ROOT / "examples" / "example.yaml", folder / "example.yaml")
    config = folder / "server.yaml"
    config.write_text(SERVER_YAML + (RESTRICTED_YAML if restriction else ""), encoding="utf-8")
    return config


def baseline(config: Path, seconds: float, restriction: bool) -> tuple[dict[str, str], dict]:
    """Keys for the clients, and the in-process run of the mix (no HTTP)."""
    from sdckit.query.config import load_server_config
    from sdckit.query.errors import Refused
    from sdckit.query.service import QueryService

    started = time.perf_counter()
    service = QueryService(load_server_config(config), init=True)  # makes the ledger
    loaded = time.perf_counter() - started
    try:
        keys = {f"client{i:02d}": service.add_key(f"client{i:02d}") for i in range(CLIENTS)}
        service.add_key("baseline")
        rng = np.random.default_rng(0)
        latencies, refused, by_dataset = [], 0, {DP: [], RESTRICTED: []}
        until = time.perf_counter() + seconds
        while time.perf_counter() < until:
            dataset, body = query_mix(rng)
            if dataset == RESTRICTED and not restriction:
                continue
            begun = time.perf_counter()
            try:
                service.query("baseline", dataset, body)
            except Refused:
                refused += 1
            latencies.append(time.perf_counter() - begun)
            by_dataset[dataset].append(latencies[-1])
    finally:
        service.close()
    inline = {"loaded": loaded, "latencies": latencies, "refused": refused, "seconds": seconds}
    return keys, {**inline, "by_dataset": by_dataset}


CLIENTS = 50


async def load(url: str, keys: dict[str, str], seconds: float, restriction: bool) -> dict:
    import httpx

    results = {
        "latencies": [],
        "by_dataset": {DP: [], RESTRICTED: []},
        "errors": [],
        "refused": 0,
        "told": {name: 0.0 for name in keys},
        "finished": [],
    }
    begin = time.perf_counter()
    until = begin + seconds

    async def client(number: int, name: str, key: str) -> None:
        rng = np.random.default_rng(1000 + number)
        headers = {"Authorization": f"Bearer {key}"}
        limits = httpx.Limits(max_connections=1)
        async with httpx.AsyncClient(base_url=url, headers=headers, timeout=60, limits=limits) as http:
            while time.perf_counter() < until:
                dataset, body = query_mix(rng)
                if dataset == RESTRICTED and not restriction:
                    continue
                begun = time.perf_counter()
                try:
                    response = await http.post(f"/datasets/{dataset}/query", json=body)
                except httpx.HTTPError as error:
                    results["errors"].append(f"{type(error).__name__}: {error}")
                    continue
                results["latencies"].append(time.perf_counter() - begun)
                results["finished"].append(time.perf_counter() - begin)
                results["by_dataset"][dataset].append(results["latencies"][-1])
                if response.status_code == 200:
                    results["told"][name] += response.json().get("epsilon_spent", 0.0) or 0.0
                elif response.status_code == 403 and dataset == RESTRICTED:
                    results["refused"] += 1
                else:
                    results["errors"].append(f"{response.status_code} {response.text[:200]}")

    await asyncio.gather(*(client(i, name, key) for i, (name, key) in enumerate(keys.items())))
    return results


def start_server(config: Path, log: Path) -> tuple[subprocess.Popen, str]:
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    arguments = ["serve", "--config", str(config), "--port", "0"]
    with log.open("ab") as stream:
        process = subprocess.Popen(
            [sys.executable, "-c", f"from sdckit.cli import main; main({arguments!r})"],
            stdout=subprocess.PIPE,
            stderr=stream,
            env=environment,
        )
    line = process.stdout.readline().decode()
    found = re.search(r"on (http://127\.0\.0\.1:\d+)", line)
    if not found:
        raise SystemExit(f"sdckit serve printed {line!r}; log:\n{log.read_text()}")
    import httpx

    while True:
        try:
            if httpx.get(found.group(1) + "/openapi.json", timeout=2).status_code == 200:
                return process, found.group(1)
        except httpx.TransportError:
            if process.poll() is not None:
                raise SystemExit(f"the server died:\n{log.read_text()}") from None
            time.sleep(0.2)


def peak_memory_mib(pid: int) -> float:
    """Peak resident memory (VmHWM) of a running process, in MiB."""
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) / 1024


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a running process so far (its threads included)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def ledger_spent(config: Path, names: list[str]) -> dict[str, float]:
    """Epsilon spent per analyst on the dp dataset's data source, read from the SQLite store
    (server stopped; the ledger verified on opening)."""
    from sdckit.query.config import content_hash
    from sdckit.query.ledger import Ledger

    source = content_hash(config.parent / "students.parquet")
    ledger = Ledger(config.parent / "ledger.sqlite")
    try:
        return {name: ledger.spent(name, source)[0] for name in names}
    finally:
        ledger.close()


def resident_mib(pid: int) -> float:
    """Resident memory (VmRSS) of a running process, in MiB."""
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+) kB", status).group(1)) / 1024


async def sample_memory(pid: int, every: float, seconds: float, samples: list[tuple[float, float]]) -> None:
    started = time.perf_counter()
    samples.append((0.0, resident_mib(pid)))
    while time.perf_counter() - started < seconds - 1e-3:
        await asyncio.sleep(min(every, max(seconds - (time.perf_counter() - started), 0.0)))
        samples.append((time.perf_counter() - started, resident_mib(pid)))


def milliseconds(values: list[float], q: float) -> float:
    return float(np.quantile(values, q)) * 1000 if values else float("nan")


def main(argv: list[str] | None = None) -> int:
    global CLIENTS
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--baseline-seconds", type=float, default=15.0)
    parser.add_argument("--no-restriction", action="store_true", help="Serve the dp dataset only.")
    parser.add_argument("--keep", type=Path, help="Keep the data, store and log in this folder.")
    parser.add_argument("--sample", type=float, default=30.0, help="Seconds between RSS samples.")
    options = parser.parse_args(argv)
    CLIENTS = options.clients
    restriction = not options.no_restriction
    print_header(argv, packages=("polars", "duckdb", "opendp", "fastapi", "uvicorn", "httpx"))
    folder = Path(tempfile.mkdtemp(prefix="bench-server-")) if options.keep is None else options.keep
    folder.mkdir(parents=True, exist_ok=True)
    try:
        config = prepare(folder, options.records, restriction)
        keys, inline = baseline(config, options.baseline_seconds, restriction)
        print(f"service          loaded in {inline['loaded']:.1f} s (in the benchmark's process)")
        process, url = start_server(config, folder / "server.log")
        try:
            started, cpu_before = time.perf_counter(), (time.process_time(), cpu_seconds(process.pid))
            samples: list[tuple[float, float]] = []

            async def run() -> dict:
                sampler = asyncio.create_task(
                    sample_memory(process.pid, options.sample, options.seconds, samples)
                )
                found = await load(url, keys, options.seconds, restriction)
                await sampler
                return found

            results = asyncio.run(run())
            results["rss"] = samples
            elapsed = time.perf_counter() - started
            results["cpu"] = (
                time.process_time() - cpu_before[0],
                cpu_seconds(process.pid) - cpu_before[1],
            )
            server_peak = peak_memory_mib(process.pid)
        finally:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        spent = ledger_spent(config, list(keys))
        report(options, results, elapsed, inline, server_peak, spent)
        log = (folder / "server.log").read_text()
        if "Traceback" in log:
            print(f"the server logged an error:\n{log[-3000:]}")
            return 1
        told_total = sum(results["told"].values())
        ok = not results["errors"] and all(
            abs(spent[name] - results["told"][name]) <= 1e-9 * max(1.0, told_total) for name in keys
        )
        return 0 if ok else 1
    finally:
        if options.keep is None:
            shutil.rmtree(folder, ignore_errors=True)


def report(options, results: dict, elapsed: float, inline: dict, server_peak: float, spent: dict) -> None:
    latencies, errors = results["latencies"], results["errors"]
    answered = len(latencies)
    throughput = answered / elapsed
    inline_rate = len(inline["latencies"]) / inline["seconds"]
    print(
        f"server           {options.clients} clients x {elapsed:.1f} s: {answered:,} answers "
        f"({results['refused']:,} restriction refusals), {throughput:,.0f} queries/s, "
        f"p50 {milliseconds(latencies, 0.5):.1f} ms, p99 {milliseconds(latencies, 0.99):.1f} ms, "
        f"errors {len(errors)}"
    )
    for dataset, values in results["by_dataset"].items():
        if values:
            print(
                f"  {dataset:<22} {len(values):,} answers, p50 {milliseconds(values, 0.5):.1f} ms, "
                f"p99 {milliseconds(values, 0.99):.1f} ms"
            )
    client_cpu, server_cpu = results["cpu"]
    print(
        f"cpu              server {server_cpu:.1f} s ({server_cpu / answered * 1000:.1f} ms per answer), "
        f"clients {client_cpu:.1f} s, over {elapsed:.1f} s of wall time"
    )
    for error in errors[:5]:
        print(f"  error: {error}")
    print(
        f"baseline         in-process, one at a time, {inline['seconds']:.0f} s: "
        f"{len(inline['latencies']):,} queries, {inline_rate:,.0f} queries/s, "
        f"p50 {milliseconds(inline['latencies'], 0.5):.1f} ms, "
        f"p99 {milliseconds(inline['latencies'], 0.99):.1f} ms"
    )
    for dataset, values in inline["by_dataset"].items():
        if values:
            print(
                f"  {dataset:<22} {len(values):,} answers, p50 {milliseconds(values, 0.5):.1f} ms, "
                f"p99 {milliseconds(values, 0.99):.1f} ms"
            )
    print(f"ratio            server / in-process throughput: {throughput / inline_rate:.2f}")
    told, stored = sum(results["told"].values()), sum(spent.values())
    worst = max(abs(spent[name] - results["told"][name]) for name in spent)
    print(
        f"ledger           spent (SQLite) {stored:.6f}, told to the clients {told:.6f}, "
        f"largest per-analyst difference {worst:.2e}"
    )
    print(
        f"memory           server peak RSS {server_peak:,.0f} MiB; "
        f"benchmark process {peak_rss_mib():,.0f} MiB"
    )
    samples = results.get("rss") or []
    if len(samples) >= 2:
        finished = np.asarray(results["finished"])
        rates = [
            np.count_nonzero((finished >= a) & (finished < b)) / (b - a)
            for (a, _), (b, _) in zip(samples, samples[1:], strict=False)
            if b > a
        ]
        print("throughput       per window: " + ", ".join(f"{rate:,.0f}" for rate in rates) + " queries/s")
        warm = samples[1][1]
        print(
            "rss              "
            + ", ".join(f"{at:.0f} s {mib:,.0f} MiB" for at, mib in samples)
            + f"; start {samples[0][1]:,.0f}, warm {warm:,.0f}, end {samples[-1][1]:,.0f} MiB: "
            f"growth warm to end {100 * (samples[-1][1] / warm - 1):+.1f}%"
        )
    if latencies:
        print(f"latency mean     {statistics.fmean(latencies) * 1000:.1f} ms")


if __name__ == "__main__":
    sys.exit(main())
