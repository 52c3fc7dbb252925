"""Benchmark: the generalization search under δ-presence and k-map on Adult, beside ARX 3.9.2.

Adult (ARX's extract, ``../shared/data/adult``) is the population; a seeded 10% research subset (seed 0,
``--share``) is marked in a column ``study``; the 8 attributes other than occupation are the
quasi-identifiers with ARX's hierarchies, Loss metric. Rows (each at 0% and 5% suppression):

* ``k-anonymity k=5``: the baseline, the search sdckit is known to be fast at;
* ``(0, 0.5)-presence``: δ-presence against the research subset;
* ``5-map``: k-map against the population table (the research subset's classes);
* ``5-map estimated``: k-map estimated from the sample (Poisson, significance 0.01, sampling fraction 0.1).

For each row sdckit's CPU time per search (``time.process_time``, the median of ``--repeats`` calls after
one untimed call with the same arguments), the nodes it evaluated, its optimum and the ratio to the
k-anonymity row at the same limit. When ARX's harness is built (``/tmp/arx``, ``benchmarks/arx/build.sh``;
``--arx DIR``), the same configurations run in one JVM first, and each row also shows ARX's optimum, the
transformations ARX checked, ARX's median thread CPU time (after 2 untimed calls) and the ratio sdckit /
ARX (below 1: sdckit faster; 0.33 is 3x). Both count the suppression limit and Loss over the research
subset; δ-presence with suppression may still differ (sdckit's group of suppressed records must satisfy
the model, ARX does not check it); the column ``same`` says whether they agree.

``--before`` also times each row as the search ran before the compiled evaluation of these models
(``sdckit.anonymize._lattice_subset``), k-map's flag of monotonicity with suppression, the search of
one-sided δ-presence without suppression and estimated k-map as k'-anonymity: those four are switched
off in this process for the "before" call of each row, alternating with the "after" call, and the row
shows both times, both node counts and whether both find the same node. The peak resident memory of the
process is printed at the end.

Usage::

    python benchmarks/bench_presence_kmap.py
    python benchmarks/bench_presence_kmap.py --repeats 5 --arx /tmp/arx --before
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np

from _common import (
    ADULT,
    ADULT_COLUMNS,
    adult_missing,
    load_adult_text,
    peak_rss_mib,
    print_header,
)

SENSITIVE = "occupation"
QUASI_IDENTIFIERS = [c for c in ADULT_COLUMNS if c != SENSITIVE]
ROWS = ("k-anonymity k=5", "(0, 0.5)-presence", "5-map", "5-map estimated")
LIMITS = (0.0, 0.05)


def sdckit_model(row: str) -> Any:
    from sdckit.models import KAnonymity
    from sdckit.models.kmap import EstimatedKMap, KMap
    from sdckit.models.presence import DeltaPresence

    if row == "k-anonymity k=5":
        return KAnonymity(5)
    if row == "(0, 0.5)-presence":
        return DeltaPresence("study", 0.0, 0.5)
    if row == "5-map":
        return KMap(5, "study")
    return EstimatedKMap(5, 0.1, 0.01, "poisson")


def harness_model(row: str, flags: Path) -> str:
    return {
        "k-anonymity k=5": "k-anonymity(k=5)",
        "(0, 0.5)-presence": f"d-presence(dmin=0,dmax=0.5,subset={flags})",
        "5-map": f"k-map(k=5,subset={flags})",
        "5-map estimated": "k-map(k=5,significance=0.01,estimator=POISSON,fraction=0.1)",
    }[row]


def run_arx(directory: Path, flags: Path, repeats: int) -> dict[tuple[str, float], dict]:
    """The harness's result of every (row, limit), one JVM."""
    blocks = []
    for row in ROWS:
        for limit in LIMITS:
            lines = [
                f"name={row}|{limit}",
                f"data={ADULT / 'adult.csv'}",
                *(f"hierarchy.{c}={ADULT / f'adult_hierarchy_{c}.csv'}" for c in QUASI_IDENTIFIERS),
                f"qi={','.join(QUASI_IDENTIFIERS)}",
                f"model={harness_model(row, flags)}",
                f"suppression={limit}",
                "metric=loss",
                f"repeats={repeats}",
                "warmup=2",
            ]
            blocks.append("\n".join(lines))
    config = flags.parent / "arx.txt"
    config.write_text("\n---\n".join(blocks) + "\n")
    classpath = (directory / "classpath.txt").read_text().strip()
    done = subprocess.run(
        ["java", "-cp", classpath, "Harness", str(config)],
        cwd=directory,
        capture_output=True,
        text=True,
        check=True,
    )
    results = {}
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            result = json.loads(line)
            row, limit = result["name"].rsplit("|", 1)
            results[(row, float(limit))] = result
    return results


@contextlib.contextmanager
def before() -> Iterator[None]:
    """The search as it was before the compiled evaluation of δ-presence and k-map (issue 38): no
    one-call evaluation, k-map not monotonic with suppression, the limit kept with one-sided
    δ-presence, estimated k-map judged by its model (not as k'-anonymity)."""
    from sdckit.anonymize import _lattice_search
    from sdckit.models import KAnonymity
    from sdckit.models.kmap import KMap

    def k_only(model: Any) -> int | None:
        return model.k if type(model) is KAnonymity else None

    with (
        mock.patch.object(_lattice_search, "subset_nodes", lambda search: None),
        mock.patch.object(_lattice_search, "limit_in_effect", lambda models, hierarchies, limit: limit),
        mock.patch.object(_lattice_search, "anonymity_k", k_only),
        mock.patch.object(KMap, "monotonic_with_suppression", False),
    ):
        yield


def cpu_times(
    search: Callable[[], Any], repeats: int, old: bool
) -> tuple[list[float], list[float], Any, Any]:
    """One untimed call of each variant, then ``repeats`` timed calls of the new search (and, with
    ``old``, of the search before, alternating): their CPU times and last releases."""
    new_times: list[float] = []
    old_times: list[float] = []
    release = search()
    previous = None
    if old:
        with before():
            previous = search()
    for _ in range(repeats):
        start = time.process_time()
        release = search()
        new_times.append(time.process_time() - start)
        if old:
            with before():
                start = time.process_time()
                previous = search()
                old_times.append(time.process_time() - start)
    return new_times, old_times, release, previous


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--share", type=float, default=0.1, help="share of Adult in the research subset")
    parser.add_argument("--arx", type=Path, default=Path("/tmp/arx"), help="ARX build with the harness")
    parser.add_argument(
        "--before", action="store_true", help="also time each row as searched before (alternating calls)"
    )
    arguments = parser.parse_args(argv)
    missing = adult_missing(QUASI_IDENTIFIERS)
    if missing:
        print(missing)
        return 0
    print_header(argv)
    import polars as pl

    from sdckit.anonymize.recoding import GeneralizeFigures, full_domain_generalization
    from sdckit.table import Table

    frame, hierarchies = load_adult_text(QUASI_IDENTIFIERS)
    rng = np.random.default_rng(0)
    inside = np.zeros(frame.height, dtype=bool)
    inside[rng.choice(frame.height, size=round(arguments.share * frame.height), replace=False)] = True
    frame = frame.with_columns(pl.Series("study", np.where(inside, "yes", "no")))
    table = Table.from_frame(frame)
    chosen = {c: hierarchies[c] for c in QUASI_IDENTIFIERS}
    print(f"data             Adult, {frame.height:,} records, research subset {int(inside.sum()):,} (seed 0)")

    arx: dict[tuple[str, float], dict] = {}
    harness = arguments.arx / "classpath.txt"
    with tempfile.TemporaryDirectory() as folder:
        if harness.is_file():
            flags = Path(folder) / "flags.txt"
            flags.write_text("".join("1\n" if flag else "0\n" for flag in inside))
            try:
                arx = run_arx(arguments.arx, flags, arguments.repeats)
            except (OSError, subprocess.CalledProcessError) as error:
                print(f"ARX              not run: {error}")
        else:
            print(f"ARX              not built ({harness} absent): ratios against k-anonymity only")

    header = f"{'model':<20} {'limit':>5} {'nodes':>6} {'cpu s':>7} {'vs k':>6} {'levels':<26}"
    if arguments.before:
        header += f" {'before':>7} {'nodes':>6} {'same':>4}"
    if arx:
        header += f" {'ARX nodes':>9} {'ARX cpu s':>9} {'vs ARX':>7} {'ARX levels':<26} same"
    print(header)
    baseline: dict[float, float] = {}
    for limit in LIMITS:
        for row in ROWS:
            model = sdckit_model(row)

            def search(model: Any = model, limit: float = limit) -> Any:
                return full_domain_generalization(
                    table,
                    [model],
                    quasi_identifiers=QUASI_IDENTIFIERS,
                    hierarchies=chosen,
                    suppression_limit=limit,
                    metric="loss",
                )

            times, old_times, release, previous = cpu_times(search, arguments.repeats, arguments.before)
            seconds = statistics.median(times)
            baseline.setdefault(limit, seconds)
            levels = [release.levels[c] for c in QUASI_IDENTIFIERS]
            nodes = release.figures_as(GeneralizeFigures).search["evaluations"]
            line = (
                f"{row:<20} {limit:>5.2f} {nodes:>6} {seconds:>7.4f} {seconds / baseline[limit]:>6.2f} "
                f"{str(levels):<26}"
            )
            if previous is not None:
                old_nodes = previous.figures_as(GeneralizeFigures).search["evaluations"]
                same = "yes" if previous.levels == release.levels else "no"
                line += f" {statistics.median(old_times):>7.4f} {old_nodes:>6} {same:>4}"
            theirs = arx.get((row, limit))
            if theirs is not None:
                cpu = float(theirs["cpu_seconds_median"])
                found = theirs.get("levels")
                same = "yes" if found == levels else "no"
                line += f" {theirs['nodes_checked']:>9} {cpu:>9.3f} {seconds / cpu:>7.2f}"
                line += f" {str(found):<26} {same}"
            print(line, flush=True)
    print(f"peak memory      {peak_rss_mib():.0f} MiB (resident, whole process)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
