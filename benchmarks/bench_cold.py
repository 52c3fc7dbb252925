"""Benchmark: every command's first run with an empty numba cache against its warm run.

Each command of the precompile workload (``sdckit.precompile.WORKLOAD``: every command that runs
compiled kernels, with the options that choose other kernels) runs as a user runs it, a fresh
``python -m sdckit ...`` process, three times, on generated data of 2,000 and 100,000 records:

* ``jit``: an empty ``NUMBA_CACHE_DIR`` and the precompiled kernels turned off
  (``SDCKIT_SHIPPED_KERNELS=0``): the first run as it was before the kernels were shipped, every
  kernel the command calls compiled by numba then and there;
* ``first``: another empty ``NUMBA_CACHE_DIR``, the precompiled kernels on: a new user's first run;
* ``warm``: the same cache again (the baseline: what every later run costs).

``first`` and ``warm`` are the best of ``--repeat`` (2) processes each (every ``first`` in a new
empty cache); ``jit`` is one process.

Each process counts, through numba's ``numba:compile`` events, the kernels it compiled and the time
each took (a kernel's time includes the kernels it calls that were compiled for it); the table gives
the first run's extra time over the warm run (target: at most 3 s), the compile counts, and each
process's peak RSS (``wait4``). Then the compile time broken down by kernel, summed over the
``jit`` runs of the smaller size: how many specializations of each, and which commands compiled it.

    python benchmarks/bench_cold.py                      # 2,000 and 100,000 records
    python benchmarks/bench_cold.py --records 2000 --only "anonymize local-suppression"

Needs the precompiled kernels (``make precompile``) for the ``first`` column; without them it says so
and measures ``jit`` and ``warm`` only.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from _common import print_header
from sdckit._numba import shipped_build
from sdckit.precompile import LANES, WORKLOAD, Step, write_inputs

TARGET = 3.0

# Run in the measured process: record numba's compile events, then run the command as the console
# script does (sdckit.cli.main ends the process with os._exit, so the events are written first, at
# each compile's end).
PROBE = r"""
import json, os, sys, time
from numba.core import event
out = os.environ["BENCH_COLD_EVENTS"]
stack = []
class Listener(event.Listener):
    def on_start(self, ev):
        stack.append(time.perf_counter())
    def on_end(self, ev):
        started = stack.pop()
        if stack:
            return  # compiled for a kernel being compiled: counted in that kernel's time
        f = ev.data["dispatcher"].py_func
        with open(out, "a") as h:
            h.write(json.dumps([f.__module__ + "." + f.__qualname__, time.perf_counter() - started]) + "\n")
event.register("numba:compile", Listener())
from sdckit.cli import main
main()
"""


def run(arguments: tuple[str, ...], folder: Path, cache: Path, shipped: bool) -> dict:
    """One fresh process of ``sdckit ARGUMENTS`` in ``folder`` with ``cache`` as its numba cache:
    wall time, exit status, peak RSS, and its compilations (kernel -> [seconds, specializations])."""
    events = folder / f"events-{time.monotonic_ns()}.jsonl"
    environment = dict(
        os.environ,
        NUMBA_CACHE_DIR=str(cache),
        SDCKIT_SHIPPED_KERNELS="1" if shipped else "0",
        BENCH_COLD_EVENTS=str(events),
    )
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-c", PROBE, *arguments],
        cwd=folder,
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    _pid, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    error = process.stderr.read().decode(errors="replace") if process.stderr else ""
    process.stderr.close() if process.stderr else None
    compiled: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])
    if events.exists():
        for line in events.read_text().splitlines():
            kernel, elapsed = json.loads(line)
            compiled[kernel][0] += elapsed
            compiled[kernel][1] += 1
        events.unlink()
    code = os.waitstatus_to_exitcode(status)
    return {
        "seconds": seconds,
        "code": code,
        "error": error.strip().splitlines()[-1:] if code not in (0, 3) else [],
        "rss_mib": usage.ru_maxrss / 1024,
        "compiled": dict(compiled),
    }


def measure(
    steps: list[Step], records: int, scratch: Path, shipped_available: bool, jit: bool, repeat: int
) -> list[dict]:
    rows = []
    needed = {argument for step in steps for argument in step.arguments}
    for lane in range(LANES):
        folder = scratch / f"data-{records}-{lane}"
        folder.mkdir()
        write_inputs(folder, records)
        for step in WORKLOAD:
            if step.lane != lane:
                continue
            chosen = step in steps
            row: dict = {"command": " ".join(step.arguments), "name": step.name, "records": records}
            if chosen and jit:
                cache = scratch / f"jit-{time.monotonic_ns()}"
                cache.mkdir()
                row["jit"] = run(step.arguments, folder, cache, shipped=False)
                shutil.rmtree(cache)
            cache = scratch / f"first-{time.monotonic_ns()}"
            cache.mkdir()
            # Not chosen: run once, warm from the shared cache, only if it writes what a chosen step reads.
            if not chosen:
                if _writes(step) & needed:
                    run(step.arguments, folder, scratch / "shared", shipped=shipped_available)
                continue
            # Best of `repeat` processes each: a first run in a new empty cache every time, the warm
            # runs in the cache the first run filled.
            firsts, warms = [], []
            for _ in range(repeat):
                shutil.rmtree(cache, ignore_errors=True)
                cache.mkdir()
                firsts.append(run(step.arguments, folder, cache, shipped=shipped_available))
                warms.append(run(step.arguments, folder, cache, shipped=shipped_available))
            shutil.rmtree(cache)
            row["first"] = min(firsts, key=lambda r: r["seconds"])
            row["warm"] = min(warms, key=lambda r: r["seconds"])
            rows.append(row)
            report_row(row, shipped_available)
    return rows


def _writes(step: Step) -> set[str]:
    """The files a step writes (the values of its -o and --summary options)."""
    arguments = step.arguments
    return {arguments[i + 1] for i, a in enumerate(arguments[:-1]) if a in ("-o", "--output", "--summary")}


def report_row(row: dict, shipped: bool) -> None:
    def cell(name: str) -> str:
        if name not in row:
            return f"{'-':>8} {'-':>4}"
        result = row[name]
        mark = "" if result["code"] in (0, 3) else "!"
        return f"{result['seconds']:7.2f}{mark or ' '} {sum(v[1] for v in result['compiled'].values()):4d}"

    first, warm = row["first"], row["warm"]
    extra = first["seconds"] - warm["seconds"]
    jit_ratio = f"{row['jit']['seconds'] / warm['seconds']:6.1f}x" if "jit" in row else "     -"
    print(
        f"{row['command'][:58]:58} {row['records']:>7,} {cell('jit')} {cell('first')} {cell('warm')} "
        f"{extra:6.2f} {jit_ratio} {first['seconds'] / warm['seconds']:5.2f}x {first['rss_mib']:6.0f}"
        f"{'' if extra <= TARGET else '  over 3 s'}",
        flush=True,
    )
    for name in ("jit", "first", "warm"):
        if name in row and row[name]["error"]:
            print(f"    {name}: exit {row[name]['code']}: {row[name]['error'][0][:150]}", flush=True)


def breakdown(rows: list[dict], records: int) -> None:
    kernels: dict[str, list] = defaultdict(lambda: [0.0, 0, set()])
    for row in rows:
        if row["records"] != records or "jit" not in row:
            continue
        for kernel, (seconds, specializations) in row["jit"]["compiled"].items():
            entry = kernels[kernel]
            entry[0] += seconds
            entry[1] = max(entry[1], specializations)
            entry[2].add(row["name"])
    if not kernels:
        return
    total = sum(v[0] for v in kernels.values())
    print(
        f"\ncompile time by kernel, jit runs on {records:,} records: {len(kernels)} kernels compiled at the "
        f"top level, {total:.1f} s in all (a kernel's time includes the kernels compiled for it)"
    )
    print(f"{'kernel':62} {'s':>7} {'specs':>5}  commands")
    for kernel, (seconds, specializations, names) in sorted(kernels.items(), key=lambda kv: -kv[1][0])[:30]:
        shown = ", ".join(sorted(names))
        print(f"{kernel[:62]:62} {seconds:7.2f} {specializations:5d}  {shown[:80]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, nargs="+", default=[2000, 100_000])
    parser.add_argument("--only", action="append", help="a command name (e.g. 'risk combined'); repeatable")
    parser.add_argument(
        "--no-jit", action="store_true", help="skip the first runs without precompiled kernels"
    )
    parser.add_argument("--repeat", type=int, default=2, help="first and warm runs: the best of this many")
    parser.add_argument("--json", type=Path, help="also write every measurement to this file")
    given = parser.parse_args()
    print_header(None)
    build = shipped_build()
    if build is None:
        print("no precompiled kernels (make precompile): the 'first' column is a first run without them")
    else:
        made = build["created"]
        print(f"precompiled kernels: {build['kernels']} kernels, {build['versions']} versions ({made})")
    steps = [s for s in WORKLOAD if not given.only or s.name in given.only]
    print(
        f"\n{'command':58} {'records':>7} {'jit s':>8} {'cmp':>4} {'first s':>8} {'cmp':>4} {'warm s':>8} "
        f"{'cmp':>4} {'extra':>6} {'jit/w':>7} {'f/w':>6} {'RSS MiB':>6}"
    )
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="bench-cold-") as name:
        scratch = Path(name)
        (scratch / "shared").mkdir()
        for records in given.records:
            rows += measure(steps, records, scratch, build is not None, not given.no_jit, given.repeat)
    for records in given.records:
        chosen = [r for r in rows if r["records"] == records]
        if not chosen:
            continue
        worst = max(chosen, key=lambda r: r["first"]["seconds"] - r["warm"]["seconds"])
        over = [r for r in chosen if r["first"]["seconds"] - r["warm"]["seconds"] > TARGET]
        extra = worst["first"]["seconds"] - worst["warm"]["seconds"]
        print(
            f"\n{records:,} records: worst first-run extra {extra:.2f} s ({worst['command'][:60]}); "
            f"{len(over)} of {len(chosen)} commands over {TARGET:.0f} s"
        )
        if any("jit" in r for r in chosen):
            worst_jit = max(chosen, key=lambda r: r["jit"]["seconds"] - r["warm"]["seconds"])
            extra = worst_jit["jit"]["seconds"] - worst_jit["warm"]["seconds"]
            print(f"without precompiled kernels: worst extra {extra:.2f} s ({worst_jit['command'][:60]})")
    breakdown(rows, min(given.records))
    if given.json:
        given.json.write_text(json.dumps(rows, indent=1, default=str))
    failed = [r for r in rows for n in ("jit", "first", "warm") if n in r and r[n]["code"] not in (0, 3)]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
