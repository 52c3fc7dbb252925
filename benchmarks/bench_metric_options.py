"""Benchmark: the search objectives of issue 38 item 6 (gs-factor, attribute weights, classification)
on Adult, against the plain Loss search in the same process and, with ``--arx``, ARX 3.9.2 run just
before in one JVM.

Adult (ARX's extract, ``../shared/data/adult``, 30,162 records) with ARX's hierarchies; k = 5,
suppression limit ``--limit`` (default 5%). Rows: the eight quasi-identifiers (every column but
occupation) under Loss with gs-factor 0, 0.25, 0.75, 0.9 and 1, with attribute weights (age 2, sex
0.5; education 10), weighted NCP (ARX has no NCP: no ARX column); and, on the seven
quasi-identifiers other than salary-class, Loss against the classification metric for salary-class
(a response variable, not generalized; both rows of that block are compared with the seven-attribute
Loss row). Each row is run once untimed, then timed ``--repeats`` times; the median CPU time
(``time.process_time``) is reported with the nodes the search evaluated (``search["evaluations"]``)
and the optimum, and as a ratio over the plain Loss search of the same quasi-identifiers (above 1:
slower than Loss). The classification metric is not monotone: its search weighs every node the
models let through, pruned by its lower bound (which ARX does not have).

``--arx BUILD`` (``benchmarks/arx/build.sh``'s output directory, e.g. ``/tmp/arx``) first runs every
row but NCP through ``benchmarks/arx/Harness.java`` in one JVM (one untimed pass over all rows, then
``--arx-warmup`` untimed and ``--repeats`` timed calls per row; thread CPU, median) and prints ARX's
CPU, its checked transformations, whether its optimum is sdckit's, and ARX/sdckit (above 1: sdckit
faster). sdckit weighs an attribute not named 1, ARX 0.5: every weight is given to ARX. The peak
resident memory of the process is printed at the end.

Usage::

    python benchmarks/bench_metric_options.py
    python benchmarks/bench_metric_options.py --repeats 5 --arx /tmp/arx
    python benchmarks/bench_metric_options.py --repeats 5 --limit 0
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import ADULT, ADULT_COLUMNS, adult_missing, load_adult_text, peak_rss_mib, print_header

EIGHT = [c for c in ADULT_COLUMNS if c != "occupation"]
SEVEN = [c for c in EIGHT if c != "salary-class"]

ROWS: list[tuple[str, list[str], dict[str, Any]]] = [
    ("loss", EIGHT, {}),
    ("loss gs 0", EIGHT, {"gs_factor": 0.0}),
    ("loss gs 0.25", EIGHT, {"gs_factor": 0.25}),
    ("loss gs 0.75", EIGHT, {"gs_factor": 0.75}),
    ("loss gs 0.9", EIGHT, {"gs_factor": 0.9}),
    ("loss gs 1", EIGHT, {"gs_factor": 1.0}),
    ("loss age 2 sex 0.5", EIGHT, {"attribute_weights": {"age": 2.0, "sex": 0.5}}),
    ("loss education 10", EIGHT, {"attribute_weights": {"education": 10.0}}),
    ("ncp education 10", EIGHT, {"metric": "ncp", "attribute_weights": {"education": 10.0}}),
    ("loss (7 QIs)", SEVEN, {}),
    ("classification (7 QIs)", SEVEN, {"metric": "classification", "target": "salary-class"}),
    (
        "classification gs 0.25",
        SEVEN,
        {"metric": "classification", "target": "salary-class", "gs_factor": 0.25},
    ),
]


def arx_configuration(
    label: str, names: list[str], options: dict[str, Any], limit: float, repeats: int, warmup: int
) -> str | None:
    """The harness configuration of a row (None for NCP, which ARX does not have)."""
    metric = options.get("metric", "loss")
    if metric not in ("loss", "classification"):
        return None
    weights = options.get("attribute_weights")
    lines = [
        f"name={label}",
        f"data={ADULT / 'adult.csv'}",
        *(f"hierarchy.{c}={ADULT / f'adult_hierarchy_{c}.csv'}" for c in names),
        f"qi={','.join(names)}",
        "model=k-anonymity(k=5)",
        f"suppression={limit}",
        f"metric={metric}",
        f"gs_factor={options.get('gs_factor', 0.5)}",
        *([] if weights is None else [f"weight.{c}={weights.get(c, 1.0)}" for c in names]),
        *([f"target={options['target']}"] if "target" in options else []),
        f"repeats={repeats}",
        f"warmup={warmup}",
    ]
    return "\n".join(lines)


def run_arx(build: Path, limit: float, repeats: int, warmup: int) -> dict[str, dict[str, Any]]:
    """ARX's result of every row it has, by label: one untimed pass over all rows, then the timed one."""
    classpath_file = build / "classpath.txt"
    if not classpath_file.exists():
        raise SystemExit(f"{classpath_file} missing: run benchmarks/arx/build.sh ARX_SOURCE {build}")
    labels = [
        label for label, names, options in ROWS if arx_configuration(label, names, options, limit, 1, 0)
    ]
    paths = []
    try:
        for timed, untimed in ((1, 0), (repeats, warmup)):
            text = "\n---\n".join(
                c
                for label, names, options in ROWS
                if (c := arx_configuration(label, names, options, limit, timed, untimed))
            )
            with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as handle:
                handle.write(text + "\n")
                paths.append(handle.name)
        completed = subprocess.run(
            ["java", "-cp", classpath_file.read_text().strip(), "Harness", *paths],
            capture_output=True,
            text=True,
            check=False,
            cwd=build,
        )
    finally:
        for path in paths:
            os.unlink(path)
    if completed.returncode != 0:
        sys.stderr.write(completed.stderr)
        raise SystemExit(f"the harness exited {completed.returncode}")
    lines = completed.stdout.splitlines()[len(labels) :]
    return {label: json.loads(line) for label, line in zip(labels, lines, strict=True)}


def cpu_median(task, repeats: int) -> tuple[float, Any]:
    """The median CPU time (``time.process_time``) of ``repeats`` runs of ``task()``, and the last result."""
    times, result = [], None
    for _ in range(repeats):
        start = time.process_time()
        result = task()
        times.append(time.process_time() - start)
    return statistics.median(times), result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--limit", type=float, default=0.05, help="suppression limit (default 0.05)")
    parser.add_argument("--arx", type=Path, help="ARX's build directory: run ARX first, side by side")
    parser.add_argument("--arx-warmup", type=int, default=3, help="ARX's untimed calls per row (default 3)")
    parser.add_argument("--only", help="run only the rows whose label contains this text")
    args = parser.parse_args(argv)
    missing = adult_missing(ADULT_COLUMNS)
    if missing:
        print(missing, file=sys.stderr)
        return 1
    print_header(argv)
    arx = run_arx(args.arx, args.limit, args.repeats, args.arx_warmup) if args.arx else {}
    if arx:
        load = " ".join(f"{value:.2f}" for value in os.getloadavg())
        print(f"ARX 3.9.2 done (thread CPU, median of {args.repeats}); load average {load}")
    from sdckit.anonymize.recoding import GeneralizeFigures, full_domain_generalization
    from sdckit.models import KAnonymity
    from sdckit.table import Table

    frame, hierarchies = load_adult_text(EIGHT)
    table = Table.from_frame(frame)

    def run(names: list[str], options: dict[str, Any]) -> Any:
        return full_domain_generalization(
            table,
            [KAnonymity(5)],
            quasi_identifiers=names,
            hierarchies={c: hierarchies[c] for c in names},
            suppression_limit=args.limit,
            **options,
        )

    print(f"Adult, k=5, suppression limit {args.limit:g}; CPU median of {args.repeats} after one untimed run")
    header = f"{'row':<24} {'nodes':>6} {'CPU ms':>8} {'x loss':>7}  {'optimum':<16} {'value':<11}"
    print(header + ("  ARX ms  nodes  same  ARX/sdckit" if arx else ""))
    baseline: dict[int, float] = {}
    for label, names, options in ROWS:
        if args.only and args.only not in label:
            continue
        run(names, options)  # untimed: compiled kernels loaded, caches warm
        seconds, release = cpu_median(lambda names=names, options=options: run(names, options), args.repeats)
        search = release.figures_as(GeneralizeFigures).search
        baseline.setdefault(len(names), seconds)
        levels = [release.levels[c] for c in names]
        ratio = seconds / baseline[len(names)]
        line = (
            f"{label:<24} {search['evaluations']:>6} {seconds * 1e3:>8.1f} {ratio:>7.2f}  "
            f"{','.join(map(str, levels)):<16} {search['metric_value']:<11.6g}"
        )
        if label in arx:
            theirs = arx[label]
            same = "yes" if theirs["levels"] == levels else "no"
            cpu = theirs["cpu_seconds_median"]
            line += f"  {cpu * 1e3:6.0f} {theirs['nodes_checked']:>6}  {same:<4}  {cpu / seconds:6.2f}"
        print(line, flush=True)
    load = " ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"load average at end {load}; peak resident memory {peak_rss_mib():.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
