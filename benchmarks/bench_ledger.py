"""Benchmark: the query server's ledger (issue 30): a spend after a million spends, and the check
of the hash chains when the server starts.

    .venv/bin/python benchmarks/bench_ledger.py [--spends 1000000] [--analysts 1] [--repeats 300]

* **baseline**: ``--repeats`` spends (``Ledger.spending``: the budget check, the chained log row,
  the running totals, one ``BEGIN IMMEDIATE`` transaction with ``synchronous=FULL``) on a fresh
  ledger, in this process: median and p99 milliseconds per spend.
* **filled**: ``--spends`` earlier spends written straight into the ledger's tables (chained, with
  their totals, as the ledger would have written them; ``--analysts`` analysts in turn), then the
  same spends again: median and p99, and the ratio to the baseline — a spend reads and updates one
  running-total row, so it should not grow with the log. For comparison, the time the former
  ledger took to check a budget: ``SUM(epsilon)`` over the analyst's earlier spends.
* **start**: opening the filled ledger (``Ledger(path)``: quick_check, both chains re-hashed,
  totals compared) in this process, and ``sdckit ledger verify`` as a user runs it (a new process,
  imports included), cold and warm.

Peak resident memory of this process is printed last.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from _common import peak_rss_mib, print_header

ROOT = Path(__file__).resolve().parent.parent
SOURCE = "0" * 63 + "1"


def spend_times(ledger, repeats: int, analyst: str) -> list[float]:
    times = []
    for _ in range(repeats):
        begun = time.perf_counter()
        with ledger.spending(analyst, SOURCE, "students", 1e-9, 0.0, 1e12, query={"aggregate": "count"}):
            pass
        times.append(time.perf_counter() - begun)
    return times


def fill(path: Path, spends: int, analysts: int) -> float:
    """Append ``spends`` chained spends and their totals to the ledger at ``path``; seconds taken."""
    from sdckit.query.ledger import _row_hash

    begun = time.perf_counter()
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        connection.execute("BEGIN IMMEDIATE")
        meta = dict(connection.execute("SELECT key, value FROM meta").fetchall())
        head, count = meta["spends_head"], int(meta["spends_count"])
        totals: dict[str, float] = {}
        query = json.dumps({"aggregate": "count"}, sort_keys=True)
        batch = []
        for i in range(spends):
            analyst = f"analyst{i % analysts:03d}"
            values = (analyst, SOURCE, "students", 1e-6, 0.0, 1.7e9 + i, query)
            head = _row_hash(head, values)
            batch.append((*values, head))
            totals[analyst] = totals.get(analyst, 0.0) + 1e-6
            if len(batch) == 50_000:
                connection.executemany(
                    "INSERT INTO spends (analyst, source, dataset, epsilon, delta, at, query, hash) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    batch,
                )
                batch.clear()
        if batch:
            connection.executemany(
                "INSERT INTO spends (analyst, source, dataset, epsilon, delta, at, query, hash) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                batch,
            )
        for analyst, total in [*totals.items(), ("", sum(totals.values()))]:
            connection.execute(
                "INSERT INTO totals (analyst, source, epsilon, delta) VALUES (?, ?, ?, 0.0) "
                "ON CONFLICT (analyst, source) DO UPDATE SET epsilon = epsilon + excluded.epsilon",
                (analyst, SOURCE, total),
            )
        connection.execute("UPDATE meta SET value = ? WHERE key = 'spends_head'", (head,))
        connection.execute("UPDATE meta SET value = ? WHERE key = 'spends_count'", (str(count + spends),))
        connection.execute("COMMIT")
    finally:
        connection.close()
    return time.perf_counter() - begun


def old_budget_check(path: Path, analyst: str, repeats: int = 20) -> float:
    """Median seconds of the former ledger's budget check: a SUM over the analyst's spends (with an
    index on the analyst, as it had)."""
    connection = sqlite3.connect(path)
    try:
        connection.execute("CREATE INDEX IF NOT EXISTS bench_spends_by ON spends (analyst, source)")
        times = []
        for _ in range(repeats):
            begun = time.perf_counter()
            connection.execute(
                "SELECT COALESCE(SUM(epsilon), 0) FROM spends WHERE analyst = ? AND source = ?",
                (analyst, SOURCE),
            ).fetchone()
            times.append(time.perf_counter() - begun)
        connection.execute("DROP INDEX bench_spends_by")
    finally:
        connection.close()
    return statistics.median(times)


def verify_command(folder: Path) -> float:
    config = folder / "server.yaml"
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    begun = time.perf_counter()
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "from sdckit.cli import main; main()",
            "ledger",
            "verify",
            "--config",
            str(config),
        ],
        capture_output=True,
        text=True,
        env=environment,
    )
    elapsed = time.perf_counter() - begun
    if result.returncode != 0:
        raise SystemExit(f"sdckit ledger verify failed: {result.stderr}")
    return elapsed


def ms(values: list[float], q: float) -> float:
    return float(np.quantile(values, q)) * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--spends", type=int, default=1_000_000)
    parser.add_argument("--analysts", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=300)
    parser.add_argument("--folder", type=Path, help="Where the ledger is made (default: a temporary folder).")
    options = parser.parse_args(argv)
    print_header(argv, packages=("polars", "opendp"))
    folder = Path(tempfile.mkdtemp(prefix="bench-ledger-", dir=options.folder))
    try:
        from sdckit.query.ledger import Ledger

        path = folder / "ledger.sqlite"
        (folder / "server.yaml").write_text(  # the data file is not read by `sdckit ledger verify`
            "store: ledger.sqlite\ndatasets:\n  students: {data: students.csv, config: students.yaml, "
            "protection: dp, budget: 1.0}\n",
            encoding="utf-8",
        )
        ledger = Ledger.create(path)
        baseline = spend_times(ledger, options.repeats, "analyst000")
        ledger.close()
        print(
            f"baseline         {options.repeats} spends on a fresh ledger: "
            f"median {ms(baseline, 0.5):.2f} ms, p99 {ms(baseline, 0.99):.2f} ms"
        )
        seconds = fill(path, options.spends, options.analysts)
        print(
            f"filled           {options.spends:,} chained spends ({options.analysts} analysts) "
            f"in {seconds:.1f} s"
        )
        begun = time.perf_counter()
        ledger = Ledger(path)
        opened = time.perf_counter() - begun
        after = spend_times(ledger, options.repeats, "analyst000")
        ledger.close()
        ratio = statistics.median(after) / statistics.median(baseline)
        print(
            f"after            {options.repeats} spends after {options.spends:,}: "
            f"median {ms(after, 0.5):.2f} ms, p99 {ms(after, 0.99):.2f} ms; ratio to the baseline {ratio:.2f}"
        )
        old = old_budget_check(path, "analyst000")
        print(
            f"former check     SUM over the analyst's {options.spends // options.analysts:,} spends: "
            f"{old * 1000:.1f} ms"
        )
        print(f"start            Ledger(path) with the chains verified: {opened:.2f} s in this process")
        cold = verify_command(folder)
        warm = verify_command(folder)
        print(f"command          sdckit ledger verify (a new process): cold {cold:.2f} s, warm {warm:.2f} s")
        print(f"memory           peak RSS of this process {peak_rss_mib():,.0f} MiB")
        return 0
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
