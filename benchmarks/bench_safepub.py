"""Benchmark: SafePub (``sdckit anonymize safepub``) on Adult and Adult x30 (904,860 records), beside
the non-private full-domain search and, when its harness is built, ARX 3.9.2.

Adult (ARX's extract, ``../shared/data/adult``), all 9 attributes quasi-identifiers with ARX's
hierarchies. Rows, each timed in this process (best of ``--repeats``):

* ``generalize k=5 5%``: the baseline, the optimal full-domain search under 5-anonymity with 5%
  suppression (Loss), the search sdckit is known to be fast at;
* ``safepub data-dependent``: ε 2, δ 10⁻⁶, ARX's defaults (search share 0.1, loss score), 100 steps;
* ``safepub MEDIUM``: the data-independent scheme at ARX's ``GeneralizationDegree.MEDIUM`` levels
  (half of each hierarchy's height, rounded), ε 2, δ 10⁻⁶.

Each row is run once untimed, then ``--repeats`` times (once on the large data): it shows the best
wall time, the ratio to the baseline of the same data, the median CPU time of the process
(``time.process_time``: every thread, so never less than the work done), k, the records released and
the levels. With ``--arx DIR`` (default ``/tmp/arx``, built by ``benchmarks/arx/build.sh``) the two SafePub
configurations also run in one JVM through ARX's harness (``ed-dp``; 100 expansions are 900 checks of
9 quasi-identifiers), showing ARX's median thread CPU time (after a warm-up run) and the ratio of
sdckit's CPU time to it, CPU against CPU, which a busy machine disturbs less than wall time; ARX's CPU time
includes its computation of k with interval arithmetic. The searches are randomized (sdckit's seed 1;
ARX's SecureRandom), so the nodes differ between them: the time is what is compared. The peak
resident memory of the process is printed after each data set.

Usage::

    python benchmarks/bench_safepub.py
    python benchmarks/bench_safepub.py --repeats 3 --copies 30 --arx /tmp/arx
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from _common import (
    ADULT,
    ADULT_COLUMNS,
    adult_missing,
    load_adult_text,
    peak_rss_mib,
    print_header,
)

EPSILON, DELTA, STEPS = 2.0, 1e-6, 100


def medium_levels(hierarchies: dict[str, Any]) -> dict[str, int]:
    """ARX's MEDIUM degree: round(0.5 x the highest level) of every attribute (Java's Math.round)."""
    return {name: int(0.5 * h.height + 0.5) for name, h in hierarchies.items()}


def table_of(frame: Any, hierarchies: dict[str, Any]) -> Any:
    from sdckit.table import Role, Schema, Table

    table = Table.from_frame(frame)
    attributes = tuple(
        dataclasses.replace(a, role=Role.QUASI_IDENTIFIER, hierarchy=hierarchies[a.name])
        if a.name in hierarchies
        else a
        for a in table.schema.attributes
    )
    return Table(table.data, Schema(attributes))


def timed(task: Any, repeats: int) -> tuple[float, float, Any]:
    """One untimed run of ``task()``, then ``repeats`` timed ones: the least wall time, the median
    CPU time of the process and the last run's result."""
    import statistics
    import time

    result = task()
    walls, cpus = [], []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        result = task()
        cpus.append(time.process_time() - cpu)
        walls.append(time.perf_counter() - wall)
    return min(walls), statistics.median(cpus), result


def fresh_run(table: Any, params: dict[str, Any]) -> Any:
    """A SafePub run with k and OpenDP's accounting computed anew (not from the previous run's cache),
    as ARX computes them in every run."""
    from sdckit.anonymize import run_method
    from sdckit.anonymize._safepub_privacy import draw_epsilon, k_threshold
    from sdckit.context import Context

    k_threshold.cache_clear()
    draw_epsilon.cache_clear()
    return run_method("safepub", table, params, Context())


def sdckit_rows(table: Any, hierarchies: dict[str, Any], repeats: int) -> list[dict[str, Any]]:
    from sdckit.anonymize.recoding import full_domain_generalization
    from sdckit.anonymize.safepub import SafePubFigures
    from sdckit.models import KAnonymity

    names = list(ADULT_COLUMNS)
    rows = []
    seconds, cpu, release = timed(
        lambda: full_domain_generalization(
            table, [KAnonymity(5)], quasi_identifiers=names, hierarchies=hierarchies, suppression_limit=0.05
        ),
        repeats,
    )
    rows.append(
        {"row": "generalize k=5 5%", "seconds": seconds, "cpu": cpu, "k": 5, "levels": release.levels}
    )
    rows[-1]["released"] = int((~release.suppressed_records).sum())
    levels = ",".join(f"{name}={level}" for name, level in medium_levels(hierarchies).items())
    for row, params in (
        ("safepub data-dependent", {"epsilon": EPSILON, "delta": DELTA, "steps": STEPS, "seed": 1}),
        ("safepub MEDIUM", {"epsilon": EPSILON, "delta": DELTA, "levels": levels, "seed": 1}),
    ):
        seconds, cpu, release = timed(lambda params=params: fresh_run(table, params), repeats)
        figures = release.figures_as(SafePubFigures)
        rows.append(
            {
                "row": row,
                "seconds": seconds,
                "cpu": cpu,
                "k": figures.k,
                "released": int(figures.released.sum()),
                "levels": release.levels,
            }
        )
    return rows


def arx_config(data: Path, name: str, model: str, repeats: int) -> str:
    lines = [f"name={name}", f"data={data}"]
    lines += [f"hierarchy.{c}={ADULT / f'adult_hierarchy_{c}.csv'}" for c in ADULT_COLUMNS]
    lines += [f"qi={','.join(ADULT_COLUMNS)}", f"model={model}", "suppression=1.0", "metric=loss"]
    lines += [f"repeats={repeats}", f"warmup={1 if repeats > 1 else 0}"]
    return "\n".join(lines)


def run_arx(directory: Path, data: Path, repeats: int) -> dict[str, dict[str, Any]]:
    """ARX's runs of the two SafePub rows, by row name."""
    search = f"search_budget={EPSILON * 0.1},search_steps={STEPS * len(ADULT_COLUMNS)}"
    configs = {
        "safepub data-dependent": f"ed-dp(epsilon={EPSILON},delta={DELTA},scheme=data-dependent,{search})",
        "safepub MEDIUM": f"ed-dp(epsilon={EPSILON},delta={DELTA},scheme=MEDIUM)",
    }
    with tempfile.TemporaryDirectory() as folder:
        config = Path(folder) / "arx.txt"
        config.write_text(
            "\n---\n".join(arx_config(data, row, model, repeats) for row, model in configs.items()) + "\n"
        )
        classpath = (directory / "classpath.txt").read_text().strip()
        done = subprocess.run(
            ["java", "-cp", classpath, "Harness", str(config)],
            cwd=directory,
            check=True,
            capture_output=True,
            text=True,
        )
    results = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return {result["name"]: result for result in results}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--repeats", type=int, default=3, help="timed runs per row on Adult, after an untimed one"
    )
    parser.add_argument("--copies", type=int, default=30, help="copies of Adult in the large data set")
    parser.add_argument("--arx", type=Path, default=Path("/tmp/arx"), help="ARX build with the harness")
    arguments = parser.parse_args(argv)
    print_header(argv)
    missing = adult_missing(ADULT_COLUMNS)
    if missing:
        print(f"skipped: {missing}")
        return 0
    import polars as pl

    frame, hierarchies = load_adult_text()
    with_arx = (arguments.arx / "classpath.txt").is_file()
    if not with_arx:
        print(f"ARX: no harness at {arguments.arx} (benchmarks/arx/build.sh builds it): sdckit only")
    for copies in (1, arguments.copies):
        data = frame if copies == 1 else pl.concat([frame] * copies)
        repeats = arguments.repeats if copies == 1 else 1
        print(f"\nAdult x{copies}: {data.height:,} records, 9 quasi-identifiers, best of {repeats}")
        rows = sdckit_rows(table_of(data, hierarchies), hierarchies, repeats)
        arx: dict[str, dict[str, Any]] = {}
        if with_arx:
            with tempfile.TemporaryDirectory() as folder:
                path = ADULT / "adult.csv"
                if copies > 1:
                    path = Path(folder) / "adult.csv"
                    data.write_csv(path, separator=";")
                try:
                    arx = run_arx(arguments.arx, path, repeats)
                except (OSError, subprocess.CalledProcessError) as error:
                    print(f"ARX run failed: {error}")
        baseline = rows[0]["seconds"]
        print(
            f"{'row':<24} {'seconds':>8} {'/ base':>7} {'cpu s':>7} {'k':>4} {'released':>9} "
            f"{'ARX cpu s':>9} {'/ ARX':>6}  levels"
        )
        for row in rows:
            theirs = arx.get(row["row"])
            cpu = theirs["cpu_seconds_median"] if theirs else None
            shown_cpu = f"{cpu:9.3f}" if cpu else f"{'—':>9}"
            ratio = f"{row['cpu'] / cpu:6.2f}" if cpu else f"{'—':>6}"
            levels = ",".join(str(level) for level in row["levels"].values())
            print(
                f"{row['row']:<24} {row['seconds']:8.3f} {row['seconds'] / baseline:7.2f} {row['cpu']:7.3f} "
                f"{row['k']:>4} {row['released']:>9,} {shown_cpu} {ratio}  {levels}"
            )
        print(f"peak resident memory so far: {peak_rss_mib():.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
