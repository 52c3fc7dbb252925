"""Benchmark: optimal full-domain generalization (``full_domain_generalization``) on Adult.

Reads the UCI Adult extract ARX ships (30,162 records, 9 columns, ``../shared/data/adult`` relative to
the project root, with ARX's hierarchies ``adult_hierarchy_<column>.csv``) and measures:

* the grid k in (2, 5, 10, 20, 50) x suppression limit in (0, 5%), metric Loss, for three model sets:
  k-anonymity alone with all 9 columns as quasi-identifiers; k + distinct 3-diversity on occupation;
  k + 0.2-closeness (equal ground distance) on occupation. For the last two, occupation is the
  sensitive attribute, so the quasi-identifiers are the other 8 columns. Each configuration is called
  once untimed (same data, same arguments), then timed ``--repeats`` times; the median is reported
  (the best too). Targets: under 0.2 s per run at 0% suppression, under 2 s at 5%. Every release is
  re-checked with ``check_table``, and k=5 at 0% is compared with ARX's published optimum.
* our ``check_table`` against pycanon on the k=5, 5% releases: ours on the released table (its
  grouping included), pycanon on a pandas frame of the non-suppressed released rows (built untimed;
  only its computation is timed); best of max(``--repeats``, 20) after one untimed call each. Target: pycanon
  time / ours >= 10.
* Adult resampled with replacement (numpy ``default_rng(0)``) to 1,000,000 records, k=5, 5%
  suppression, all 9 quasi-identifiers, Loss. Target: under 20 s. Because resampling repeats every
  Adult record about 33 times, this run is also repeated with k=100 (not in the issue), where the
  search has work to do.

* The grid of issue 19, side by side with ARX 3.9.2 (rows k = 2, 5, 10, 20, 50 at 0% and 5%; k=5 +
  distinct 3-diversity and k=5 + 0.2-closeness at 5%): the nodes the search evaluates
  (``GeneralizeFigures.search["evaluations"]``, the top node's feasibility check included) and the in-process
  CPU time of a call (``time.process_time``, median of ``--repeats``, the same calls as the grid).
  Targets: fewer evaluated nodes than ARX checked (the issue's figures, in docs/benchmarks.md) on
  every 5% row; at most 40 ms of CPU per call at 0%. With ``--arx FILE.json`` (ARX's own figures
  of the same rows: ``{"rows": [{"models": "k", "k": 5, "limit": 0.05, "cpu_seconds": 0.05,
  "nodes": 1217}, ...]}``, ``models`` one of k, k+l, k+t, k+bb, k+be, k+d; optional ``"levels"``),
  the ratios ARX/sdckit per row are printed too, and whether both found the same optimum (and, with
  ``"cpu_seconds_output"`` in a row, ARX's CPU with its output table built and read, as context); nobody needs
  Java to run this benchmark (``benchmarks/arx/run_grid.py`` writes that file with ARX 3.9.2 through
  ``benchmarks/arx/Harness.java``). Besides the issue-19 rows, the side-by-side grid holds k=5 + l and
  k=5 + t at 0%, and k=5 with basic and enhanced 1-likeness and 1.5-disclosure privacy on occupation
  at 5% (issue 38; measured only for that table).
* Start-up: ``sdckit --version`` and ``sdckit --help`` (wall time of the whole process, best and
  median of 5). Target: under 0.3 s each.

The grid (with the checks) and each large run happen in their own subprocess, so the peak resident
memory reported (ru_maxrss of the child) is theirs. In every child, a first call on a 1,000-record
slice loads numba's compiled kernels from the cache (or compiles them); it is reported apart.

Exit code 1 when something fails: a run raises, a release does not pass its own models or exceeds
the suppression limit, k=5 at 0% differs from ARX, or ours and pycanon disagree. Missed speed targets
are reported (and fail the run only with ``--strict``). Usage::

    python benchmarks/bench_generalization.py
    python benchmarks/bench_generalization.py --repeats 5 --strict
    python benchmarks/bench_generalization.py --arx arx-results.json
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

from _common import ADULT, ADULT_COLUMNS, adult_missing, load_adult_text, peak_rss_mib, print_header, version

ROOT = Path(__file__).resolve().parent.parent
COLUMNS = ADULT_COLUMNS
SENSITIVE = "occupation"
KS = (2, 5, 10, 20, 50)
LIMITS = (0.0, 0.05)
TARGET_SECONDS = {0.0: 0.2, 0.05: 2.0}
CHECK_TARGET = 10.0
LARGE_RECORDS = 1_000_000
LARGE_TARGET_SECONDS = 20.0
LARGE_SEED = 0
LARGE_KS = (5, 100)  # 5 as the issue asks; 100 extra (see the docstring)
WARM_UP_RECORDS = 1_000
# Issue 19: ARX 3.9.2 side by side on these rows (nodes ARX checked; at 0% the issue gives 89-217
# over the five rows and 27-45 ms of CPU per call).
ISSUE_ROWS = (
    *(("k", k, 0.0) for k in KS),
    *(("k", k, 0.05) for k in KS),
    ("k+l", 5, 0.05),
    ("k+t", 5, 0.05),
)
# The rows measured side by side with ARX (benchmarks/arx/run_grid.py writes ARX's side): the issue-19
# rows, k=5 + l / t without suppression, and k=5 with β-likeness and δ-disclosure (issue 38).
EXTRA_ROWS = (("k+bb", 5, 0.05), ("k+be", 5, 0.05), ("k+d", 5, 0.05))
ARX_GRID_ROWS = (*ISSUE_ROWS, ("k+l", 5, 0.0), ("k+t", 5, 0.0), *EXTRA_ROWS)
ARX_NODES = {
    ("k", 2, 0.05): 1158,
    ("k", 5, 0.05): 1217,
    ("k", 10, 0.05): 1288,
    ("k", 20, 0.05): 1170,
    ("k", 50, 0.05): 979,
    ("k+l", 5, 0.05): 450,
    ("k+t", 5, 0.05): 3051,
}
CPU_TARGET_SECONDS = 0.040  # per call at 0% suppression
STARTUP_TARGET_SECONDS = 0.3
STARTUP_RUNS = 5
# ARX 3.9.2, k=5, 0% suppression, Loss, all 9 quasi-identifiers (../shared/data/README.md).
ARX_K5_LEVELS = (0, 4, 1, 1, 3, 2, 2, 1, 0)
ARX_K5_CLASSES = 24
ARX_K5_SMALLEST = 69
MODEL_SETS = {
    "k": "k-anonymity; quasi-identifiers: all 9 columns",
    "k+l": f"k-anonymity + distinct 3-diversity on {SENSITIVE}; quasi-identifiers: the other 8 columns",
    "k+t": f"k-anonymity + 0.2-closeness (equal distance) on {SENSITIVE}; quasi-identifiers: the other 8",
}
EXTRA_MODEL_SETS = {
    "k+bb": f"k-anonymity + basic 1-likeness on {SENSITIVE}; quasi-identifiers: the other 8",
    "k+be": f"k-anonymity + enhanced 1-likeness on {SENSITIVE}; quasi-identifiers: the other 8",
    "k+d": f"k-anonymity + 1.5-disclosure privacy on {SENSITIVE}; quasi-identifiers: the other 8",
}


# ----------------------------------------------------------------------------------------------
# Data and models.


def missing_data() -> str | None:
    """Why the Adult data cannot be used, or None."""
    return adult_missing(COLUMNS)


def load_adult():
    """The Adult records as text (polars) and a hierarchy per column."""
    return load_adult_text()


def models_of(model_set: str, k: int) -> list:
    from sdckit.models import (
        BasicBetaLikeness,
        DeltaDisclosure,
        DistinctLDiversity,
        EnhancedBetaLikeness,
        KAnonymity,
        TCloseness,
    )

    if model_set == "k":
        return [KAnonymity(k)]
    if model_set == "k+l":
        return [KAnonymity(k), DistinctLDiversity(SENSITIVE, 3)]
    if model_set == "k+bb":
        return [KAnonymity(k), BasicBetaLikeness(SENSITIVE, 1.0)]
    if model_set == "k+be":
        return [KAnonymity(k), EnhancedBetaLikeness(SENSITIVE, 1.0)]
    if model_set == "k+d":
        return [KAnonymity(k), DeltaDisclosure(SENSITIVE, 1.5)]
    return [KAnonymity(k), TCloseness(SENSITIVE, 0.2, "equal")]


def harness_models(model_set: str, k: int) -> list[str]:
    """The same models in benchmarks/arx/Harness.java's notation (ARX 3.9.2's criteria)."""
    other = {
        "k": [],
        "k+l": [f"distinct-l(attribute={SENSITIVE},l=3)"],
        "k+t": [f"equal-t(attribute={SENSITIVE},t=0.2)"],
        "k+bb": [f"basic-beta(attribute={SENSITIVE},beta=1)"],
        "k+be": [f"enhanced-beta(attribute={SENSITIVE},beta=1)"],
        "k+d": [f"delta-disclosure(attribute={SENSITIVE},delta=1.5)"],
    }[model_set]
    return [f"k-anonymity(k={k})", *other]


def quasi_identifiers_of(model_set: str) -> list[str]:
    return list(COLUMNS) if model_set == "k" else [c for c in COLUMNS if c != SENSITIVE]


def describe(release, table, quasi_identifiers, models, limit: float) -> tuple[dict, list[str]]:
    """The figures of a release, and what is wrong with it (re-checked with check_table)."""
    from sdckit.anonymize.recoding import GeneralizeFigures, release_metrics
    from sdckit.models import check_table

    sizes = release.class_sizes()
    search = release.figures_as(GeneralizeFigures).search
    figures = {
        "levels": [int(release.levels[name]) for name in quasi_identifiers],
        "suppressed": release.n_suppressed,
        "classes": release.n_classes,
        "smallest": int(sizes.min()) if len(sizes) else 0,
        "loss": float(release_metrics(release)["loss"]),
        "evaluations": int(search.get("evaluations", -1)),
        "strategy": str(search.get("strategy", "chain classification")),
        "heuristic": bool(release.heuristic),
    }
    problems = []
    report = check_table(release.table, quasi_identifiers, models)
    if not report.summary()["passes"]:
        problems.append("the release fails its own models (check_table)")
    if release.n_suppressed > limit * table.n_records + 1e-9:
        problems.append(f"{release.n_suppressed} records suppressed, above the limit {limit:.0%}")
    if release.heuristic:
        problems.append("the search fell back on the heuristic")
    return figures, problems


# ----------------------------------------------------------------------------------------------
# Child: the grid and the checks against pycanon.


def grid_child(repeats: int) -> dict[str, Any]:
    from sdckit.anonymize.recoding import full_domain_generalization
    from sdckit.models import check_table
    from sdckit.table import Table

    frame, hierarchies = load_adult()
    table = Table.from_frame(frame)

    # Load the compiled kernels (every model set, with and without suppression) on a small slice.
    small = Table.from_frame(frame.head(WARM_UP_RECORDS))
    start = time.perf_counter()
    for model_set in [*MODEL_SETS, *EXTRA_MODEL_SETS]:
        quasi_identifiers = quasi_identifiers_of(model_set)
        for limit in LIMITS:
            models = models_of(model_set, 2)
            release = full_domain_generalization(
                small,
                models,
                quasi_identifiers=quasi_identifiers,
                hierarchies=hierarchies,
                suppression_limit=limit,
                metric="loss",
            )
            check_table(release.table, quasi_identifiers, models)
    warm_up_seconds = time.perf_counter() - start

    rows = []
    releases = {}
    keys = [(m, k, limit) for m in MODEL_SETS for limit in LIMITS for k in KS]
    for model_set, k, limit in [*keys, *EXTRA_ROWS]:
        row, release = measure_row(table, hierarchies, model_set, k, limit, repeats)
        rows.append(row)
        if release is not None and k == 5 and limit == 0.05 and model_set in MODEL_SETS:
            releases[model_set] = release
    peak = peak_rss_mib()
    checks = [
        check_against_pycanon(model_set, release, models_of(model_set, 5), check_repeats(repeats))
        for model_set, release in releases.items()
    ]
    return {
        "records": table.n_records,
        "repeats": repeats,
        "warm_up_seconds": warm_up_seconds,
        "rows": rows,
        "checks": checks,
        "peak_mib": peak,
    }


def measure_row(table, hierarchies, model_set: str, k: int, limit: float, repeats: int) -> tuple[dict, Any]:
    """One row of the grid: an untimed call, then ``repeats`` timed ones; its figures and release."""
    from sdckit.anonymize.recoding import full_domain_generalization

    quasi_identifiers = quasi_identifiers_of(model_set)
    models = models_of(model_set, k)
    row: dict[str, Any] = {"models": model_set, "k": k, "limit": limit, "problems": []}

    def run():
        return full_domain_generalization(
            table,
            models,
            quasi_identifiers=quasi_identifiers,
            hierarchies=hierarchies,
            suppression_limit=limit,
            metric="loss",
        )

    try:
        start = time.perf_counter()
        release = run()  # untimed: same data, same arguments
        row["first_seconds"] = time.perf_counter() - start
        times, cpu = [], []
        for _ in range(repeats):
            start, start_cpu = time.perf_counter(), time.process_time()
            release = run()
            cpu.append(time.process_time() - start_cpu)
            times.append(time.perf_counter() - start)
    except Exception as error:  # reported, and the benchmark fails
        row["problems"].append(f"{type(error).__name__}: {error}")
        return row, None
    row["times"] = times
    row["cpu"] = cpu
    figures, problems = describe(release, table, quasi_identifiers, models, limit)
    row.update(figures)
    row["problems"] += problems
    if (model_set, k, limit) == ("k", 5, 0.0):
        arx = (tuple(row["levels"]), row["classes"], row["smallest"])
        if arx != (ARX_K5_LEVELS, ARX_K5_CLASSES, ARX_K5_SMALLEST):
            row["problems"].append(
                f"differs from ARX 3.9.2: levels {ARX_K5_LEVELS}, {ARX_K5_CLASSES} classes, "
                f"smallest {ARX_K5_SMALLEST}"
            )
    return row, release


def best_of(function, repeats: int) -> tuple[float, Any]:
    result = function()  # untimed
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result


def check_repeats(repeats: int) -> int:
    """Timed calls of each check: the checks take milliseconds, where a best of 3 is at the mercy of
    one scheduler hiccup, so at least 20 (the same number for ours and pycanon)."""
    return max(repeats, 20)


def check_against_pycanon(model_set: str, release, models: list, repeats: int) -> dict[str, Any]:
    """Time check_table on the release and pycanon on its non-suppressed rows; compare the figures."""
    import numpy as np
    import polars as pl

    from sdckit.models import check_table
    from sdckit.table import Table

    quasi_identifiers = quasi_identifiers_of(model_set)
    result: dict[str, Any] = {"models": model_set, "records": release.table.n_records, "problems": []}
    try:
        from pycanon import anonymity
    except ImportError:
        result["problems"].append("pycanon is not installed (it is a dev dependency: pip install pycanon)")
        return result

    ours_seconds, report = best_of(lambda: check_table(release.table, quasi_identifiers, models), repeats)
    kept = release.table.data.filter(pl.Series(~np.asarray(release.suppressed_records, dtype=bool)))
    frame = kept.to_pandas()

    def theirs():
        k = anonymity.k_anonymity(frame, quasi_identifiers)
        if model_set == "k+l":
            return k, anonymity.l_diversity(frame, quasi_identifiers, [SENSITIVE])
        if model_set == "k+t":
            return k, anonymity.t_closeness(frame, quasi_identifiers, [SENSITIVE])
        return k, None

    pycanon_seconds, (k_pycanon, other_pycanon) = best_of(theirs, repeats)
    summary = report.summary()
    ours = {"k": summary["k"]}
    pycanon = {"k": int(k_pycanon)}
    if model_set == "k+l":
        ours["l"] = summary["models"][models[1].name]["achieved"]
        pycanon["l"] = int(other_pycanon)
    agree = ours == pycanon
    if model_set == "k+t":
        # check_table's whole-table distribution includes the suppressed records (as ARX does);
        # pycanon only sees the rows it is given. For the comparison, check the same rows (untimed).
        ours["t"] = summary["models"][models[1].name]["achieved"]
        same_rows = check_table(Table.from_frame(kept), quasi_identifiers, models).summary()
        ours["t same rows"] = same_rows["models"][models[1].name]["achieved"]
        pycanon["t"] = float(other_pycanon)
        agree = ours["k"] == pycanon["k"] and abs(ours["t same rows"] - pycanon["t"]) <= 1e-9
    if not agree:
        result["problems"].append(f"ours {ours} and pycanon {pycanon} disagree")
    result.update(
        kept=kept.height,
        ours_seconds=ours_seconds,
        pycanon_seconds=pycanon_seconds,
        ours=ours,
        pycanon=pycanon,
        agree=agree,
    )
    return result


# ----------------------------------------------------------------------------------------------
# Child: Adult resampled.


def large_child(records: int, k: int) -> dict[str, Any]:
    import numpy as np

    from sdckit.anonymize.recoding import full_domain_generalization
    from sdckit.models import KAnonymity
    from sdckit.table import Table

    frame, hierarchies = load_adult()
    start = time.perf_counter()
    rows = np.random.default_rng(LARGE_SEED).integers(0, frame.height, size=records)
    large = frame[rows]
    resample_seconds = time.perf_counter() - start
    table = Table.from_frame(large)
    models = [KAnonymity(k)]

    def run(data):
        return full_domain_generalization(
            data,
            models,
            quasi_identifiers=list(COLUMNS),
            hierarchies=hierarchies,
            suppression_limit=0.05,
            metric="loss",
        )

    start = time.perf_counter()
    run(Table.from_frame(large.head(WARM_UP_RECORDS)))
    warm_up_seconds = time.perf_counter() - start
    start = time.perf_counter()
    release = run(table)
    seconds = time.perf_counter() - start
    peak = peak_rss_mib()  # before the verification below, which is not part of the run
    figures, problems = describe(release, table, list(COLUMNS), models, 0.05)
    return {
        "records": table.n_records,
        "k": k,
        "source_records": frame.height,
        "distinct_source_records": int(len(np.unique(rows))),
        "resample_seconds": resample_seconds,
        "warm_up_seconds": warm_up_seconds,
        "seconds": seconds,
        "peak_mib": peak,
        "problems": problems,
        **figures,
    }


# ----------------------------------------------------------------------------------------------
# Parent: run the children and print.


def run_child(arguments: list[str], workdir: Path, name: str) -> dict[str, Any] | None:
    result_out = workdir / f"{name}.json"
    command = [sys.executable, str(Path(__file__).resolve()), *arguments, "--result-out", str(result_out)]
    completed = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if completed.returncode != 0:
        print(f"  {name} failed (exit {completed.returncode}):\n{completed.stderr.strip()}", file=sys.stderr)
        return None
    return json.loads(result_out.read_text())


def levels_text(levels: list[int], model_set: str) -> str:
    """Levels in the order of COLUMNS, '-' for occupation when it is sensitive."""
    shown = [str(level) for level in levels]
    if model_set != "k":
        shown.insert(COLUMNS.index(SENSITIVE), "-")
    return ",".join(shown)


def print_grid(grid: dict[str, Any]) -> tuple[list[str], list[str]]:
    """Print the grid; return the problems and the missed targets."""
    problems, missed = [], []
    print(
        f"grid             {grid['records']:,} records; time = median of {grid['repeats']} calls after "
        f"one untimed call with the same arguments (best of {grid['repeats']} also shown)"
    )
    print(
        f"warm-up          {grid['warm_up_seconds']:.2f} s (numba cache load/compile: every model set at "
        f"0% and 5% on a {WARM_UP_RECORDS:,}-record slice, untimed below)"
    )
    print(f"peak RSS         {grid['peak_mib']:.0f} MiB (grid child)")
    for name, text in {**MODEL_SETS, **EXTRA_MODEL_SETS}.items():
        print(f"  {name:<4} {text}")
    print(f"levels in the order {', '.join(COLUMNS)} ('-': {SENSITIVE}, sensitive there)")
    print()
    header = (
        f"{'models':<6} {'k':>3} {'limit':>5} {'median s':>8} {'best s':>7} {'target':>6} {'met':>3} "
        f"{'levels':<17} {'suppressed':>10} {'classes':>7} {'smallest':>8} {'Loss':>7} {'evals':>5}"
    )
    print(header)
    print("-" * len(header))
    for row in grid["rows"]:
        label = f"{row['models']}, k={row['k']}, limit {row['limit']:.0%}"
        problems += [f"{label}: {problem}" for problem in row["problems"]]
        if "times" not in row:
            print(
                f"{row['models']:<6} {row['k']:>3} {row['limit']:>5.0%}  FAILED: {'; '.join(row['problems'])}"
            )
            continue
        median = statistics.median(row["times"])
        target = TARGET_SECONDS[row["limit"]]
        met = median < target
        if not met:
            missed.append(f"{label}: {median:.3f} s, target < {target:g} s")
        print(
            f"{row['models']:<6} {row['k']:>3} {row['limit']:>5.0%} {median:>8.3f} {min(row['times']):>7.3f} "
            f"{'<' + format(target, 'g'):>6} {'yes' if met else 'no':>3} "
            f"{levels_text(row['levels'], row['models']):<17} {row['suppressed']:>10,} {row['classes']:>7,} "
            f"{row['smallest']:>8,} {row['loss']:>7.4f} {row['evaluations']:>5,}"
            + ("  ** " + "; ".join(row["problems"]) if row["problems"] else "")
        )
    timed = [row for row in grid["rows"] if "times" in row]
    for limit in LIMITS:
        at = [row for row in timed if row["limit"] == limit]
        if at:
            slowest = max(at, key=lambda row: statistics.median(row["times"]))
            met = sum(statistics.median(row["times"]) < TARGET_SECONDS[limit] for row in at)
            print(
                f"limit {limit:.0%}: {met}/{len(at)} runs under {TARGET_SECONDS[limit]:g} s; slowest "
                f"{slowest['models']} k={slowest['k']} {statistics.median(slowest['times']):.3f} s "
                f"({slowest['evaluations']:,} evaluations, {slowest['strategy']})"
            )
    reference = next((r for r in timed if (r["models"], r["k"], r["limit"]) == ("k", 5, 0.0)), None)
    if reference is not None:
        same = not any("ARX" in problem for problem in reference["problems"])
        print(
            f"k=5, 0% vs ARX 3.9.2 (levels {','.join(map(str, ARX_K5_LEVELS))}, {ARX_K5_CLASSES} classes, "
            f"smallest {ARX_K5_SMALLEST}): {'same' if same else 'DIFFERENT'}"
        )
    print("every release re-checked with check_table (passes its models, within the suppression limit)")
    return problems, missed


def print_checks(checks: list[dict[str, Any]], repeats: int) -> tuple[list[str], list[str]]:
    problems, missed = [], []
    print(
        f"checks vs pycanon {version('pycanon')} on the k=5, 5% releases; best of {repeats} after one "
        "untimed call each"
    )
    print("  ours:    check_table(release.table, quasi-identifiers, models), its grouping included")
    print("  pycanon: k_anonymity (+ l_diversity / t_closeness) on a pandas frame of the non-suppressed")
    print("           released rows; building the frame is not timed")
    print()
    header = (
        f"{'models':<6} {'rows':>7} {'ours ms':>8} {'pycanon ms':>10} {'pycanon/ours':>12} {'>=10x':>5} "
        f"{'agree':>5}  figures (ours | pycanon)"
    )
    print(header)
    print("-" * len(header))
    for check in checks:
        problems += [f"check {check['models']}: {problem}" for problem in check["problems"]]
        if "ours_seconds" not in check:
            print(f"{check['models']:<6} FAILED: {'; '.join(check['problems'])}")
            continue
        ratio = check["pycanon_seconds"] / check["ours_seconds"]
        met = ratio >= CHECK_TARGET
        if not met:
            missed.append(f"check {check['models']}: pycanon/ours {ratio:.1f}x, target >= {CHECK_TARGET:g}x")
        ours = ", ".join(f"{key} {value:.6g}" for key, value in check["ours"].items())
        pycanon = ", ".join(f"{key} {value:.6g}" for key, value in check["pycanon"].items())
        print(
            f"{check['models']:<6} {check['kept']:>7,} {check['ours_seconds'] * 1e3:>8.1f} "
            f"{check['pycanon_seconds'] * 1e3:>10.1f} {ratio:>11.1f}x {'yes' if met else 'no':>5} "
            f"{'yes' if check['agree'] else 'NO':>5}  {ours} | {pycanon}"
        )
    print(
        "  rows: non-suppressed rows given to pycanon (ours reads all released rows, suppressed ones "
        "marked '*');"
    )
    print(
        "  t: ours over the release, whose overall distribution includes suppressed records (as ARX); "
        "'t same rows': ours on pycanon's rows"
    )
    return problems, missed


def print_large(results: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    problems, missed = [], []
    if not results:
        return problems, missed
    first = results[0]
    copies = first["records"] / first["distinct_source_records"]
    print(
        f"{first['records']:,} records: Adult resampled with replacement (numpy default_rng({LARGE_SEED})); "
        f"{first['distinct_source_records']:,} of its {first['source_records']:,} records drawn, each "
        f"~{copies:.0f} times on average"
    )
    print(
        "5% suppression, all 9 quasi-identifiers, Loss; one timed call per subprocess after a warm-up on "
        f"{WARM_UP_RECORDS:,} records"
    )
    print()
    header = (
        f"{'k':>4} {'time s':>7} {'target':>6} {'met':>3} {'warm-up s':>9} {'resample s':>10} "
        f"{'peak RSS MiB':>12} {'levels':<17} {'suppressed':>10} {'classes':>7} {'smallest':>8} "
        f"{'Loss':>7} {'evals':>5}"
    )
    print(header)
    print("-" * len(header))
    for result in results:
        label = f"{result['records']:,} records, k={result['k']}"
        problems += [f"{label}: {problem}" for problem in result["problems"]]
        met = result["seconds"] < LARGE_TARGET_SECONDS
        if result["k"] == 5 and not met:
            missed.append(f"{label}: {result['seconds']:.2f} s, target < {LARGE_TARGET_SECONDS:g} s")
        target = f"<{LARGE_TARGET_SECONDS:g}" if result["k"] == 5 else "extra"
        print(
            f"{result['k']:>4} {result['seconds']:>7.2f} {target:>6} {'yes' if met else 'no':>3} "
            f"{result['warm_up_seconds']:>9.2f} {result['resample_seconds']:>10.2f} "
            f"{result['peak_mib']:>12.0f} "
            f"{levels_text(result['levels'], 'k'):<17} {result['suppressed']:>10,} {result['classes']:>7,} "
            f"{result['smallest']:>8,} {result['loss']:>7.4f} {result['evaluations']:>5,}"
            + ("  ** " + "; ".join(result["problems"]) if result["problems"] else "")
        )
    trivial = [r for r in results if r["k"] == 5 and not any(r["levels"])]
    if trivial:
        print(f"  note: k=5 keeps every column at level 0: each source record occurs ~{copies:.0f} times, so")
        print(
            "  the resample is already 5-anonymous and the search stops at once; that run measures the fixed"
        )
        print(
            "  cost (reading the records into distinct combinations), not a search. k=100 (not in the issue)"
        )
        print("  gives the search work on the same records.")
    return problems, missed


def read_arx(path: Path) -> dict[tuple[str, int, float], dict[str, Any]]:
    """ARX's figures per (models, k, limit) from ``--arx FILE.json``."""
    try:
        rows = json.loads(path.read_text())["rows"]
        return {
            (str(row["models"]), int(row["k"]), float(row["limit"])): {
                "cpu_seconds": float(row["cpu_seconds"]),
                "nodes": int(row["nodes"]),
                "levels": row.get("levels"),
                "cpu_seconds_output": row.get("cpu_seconds_output"),
            }
            for row in rows
        }
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise SystemExit(
            f"--arx {path}: {type(error).__name__}: {error} (see the docstring for the format)"
        ) from None


def print_issue_grid(
    grid: dict[str, Any], arx: dict[tuple[str, int, float], dict[str, Any]] | None
) -> list[str]:
    """The rows of issue 19: evaluated nodes against ARX's and CPU time; return the missed targets."""
    missed = []
    rows = {(row["models"], row["k"], row["limit"]): row for row in grid["rows"] if "cpu" in row}
    print(
        "issue 19 grid: nodes evaluated (ARX: nodes checked, the issue's figures) and CPU per call "
        f"(time.process_time, median of {grid['repeats']}; target <= {CPU_TARGET_SECONDS * 1e3:g} ms at 0%)"
    )
    header = (
        f"{'models':<6} {'k':>3} {'limit':>5} {'nodes':>6} {'ARX nodes':>9} {'fewer':>5} "
        f"{'CPU ms':>7} {'best ms':>7} {'target':>6}"
    )
    # ARX's call with its output table built and read (run_grid.py --output), as context: sdckit's
    # call builds its release, ARX's anonymize() builds no output.
    with_output = arx is not None and any(row.get("cpu_seconds_output") for row in arx.values())
    if arx is not None:
        header += f" {'ARX CPU ms':>10} {'ARX/ours CPU':>12} {'ARX/ours nodes':>14} {'same optimum':>12}"
    if with_output:
        header += f" {'ARX+output ms':>13} {'ARX+output/ours':>15}"
    print(header)
    print("-" * len(header))
    for key in ARX_GRID_ROWS:
        row = rows.get(key)
        if row is None:
            print(f"{key[0]:<6} {key[1]:>3} {key[2]:>5.0%}  (not measured)")
            continue
        label = f"issue grid {key[0]}, k={key[1]}, limit {key[2]:.0%}"
        cpu = statistics.median(row["cpu"])
        reference = ARX_NODES.get(key)
        fewer = "-" if reference is None else ("yes" if row["evaluations"] < reference else "no")
        if fewer == "no":
            missed.append(f"{label}: {row['evaluations']:,} nodes, ARX {reference:,}")
        target = "-"
        if key[2] == 0.0:
            target = "yes" if cpu <= CPU_TARGET_SECONDS else "no"
            if target == "no":
                limit = CPU_TARGET_SECONDS * 1e3
                missed.append(f"{label}: {cpu * 1e3:.1f} ms of CPU, target <= {limit:g} ms")
        line = (
            f"{key[0]:<6} {key[1]:>3} {key[2]:>5.0%} {row['evaluations']:>6,} "
            f"{'-' if reference is None else format(reference, ','):>9} {fewer:>5} {cpu * 1e3:>7.1f} "
            f"{min(row['cpu']) * 1e3:>7.1f} {target:>6}"
        )
        if arx is not None:
            theirs = arx.get(key)
            if theirs is None:
                line += f" {'-':>10} {'-':>12} {'-':>14} {'-':>12}"
            else:
                levels = theirs.get("levels")
                same = "-" if levels is None else "yes" if levels == row["levels"] else "no"
                line += (
                    f" {theirs['cpu_seconds'] * 1e3:>10.1f} {theirs['cpu_seconds'] / cpu:>12.2f} "
                    f"{theirs['nodes'] / max(row['evaluations'], 1):>14.2f} {same:>12}"
                )
                built = theirs.get("cpu_seconds_output")
                if with_output:
                    line += (
                        f" {'-':>13} {'-':>15}"
                        if not built
                        else f" {built * 1e3:>13.1f} {built / cpu:>15.2f}"
                    )
        print(line)
    print("  ARX/ours above 1: sdckit faster (CPU) or evaluating fewer nodes")
    if with_output:
        print("  ARX+output: ARX's anonymize() and then its output table built and every cell read (context)")
    return missed


def measure_startup() -> list[dict[str, Any]]:
    """Wall time of ``sdckit --version`` and ``sdckit --help`` as whole processes."""
    script = Path(sys.executable).with_name("sdckit")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "sdckit"]
    results = []
    for option in ("--version", "--help"):
        times = []
        for _ in range(STARTUP_RUNS):
            start = time.perf_counter()
            completed = subprocess.run([*command, option], capture_output=True, text=True)
            times.append(time.perf_counter() - start)
        results.append({"command": f"sdckit {option}", "times": times, "exit": completed.returncode})
    return results


def print_startup(results: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    problems, missed = [], []
    target = STARTUP_TARGET_SECONDS
    print(f"start-up: whole process, best and median of {STARTUP_RUNS} (target < {target:g} s)")
    for result in results:
        best, median = min(result["times"]), statistics.median(result["times"])
        met = median < STARTUP_TARGET_SECONDS
        if result["exit"] != 0:
            problems.append(f"{result['command']} exited {result['exit']}")
        if not met:
            missed.append(f"{result['command']}: {median:.2f} s, target < {STARTUP_TARGET_SECONDS:g} s")
        verdict = "met" if met else "MISSED"
        print(f"  {result['command']:<16} best {best:.3f} s, median {median:.3f} s  {verdict}")
    return problems, missed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="timed calls per configuration (default 3)")
    parser.add_argument(
        "--records", type=int, default=LARGE_RECORDS, help="records of the resampled run (default 1,000,000)"
    )
    parser.add_argument("--strict", action="store_true", help="exit 1 when a speed target is missed too")
    parser.add_argument(
        "--arx", type=Path, help="ARX's figures of the issue-19 rows (JSON, see above): print the ratios"
    )
    parser.add_argument("--no-large", action="store_true", help="skip the 1,000,000-record runs")
    parser.add_argument("--child", choices=["grid", "large"], help=argparse.SUPPRESS)
    parser.add_argument("--k", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--result-out", type=Path, help=argparse.SUPPRESS)
    arguments = parser.parse_args(argv)
    if arguments.repeats < 1:
        parser.error("--repeats must be at least 1")
    if arguments.records < WARM_UP_RECORDS:
        parser.error(f"--records must be at least {WARM_UP_RECORDS:,}")

    if arguments.child == "grid":
        result = grid_child(arguments.repeats)
        arguments.result_out.write_text(json.dumps(result))
        return 0
    if arguments.child == "large":
        result = large_child(arguments.records, arguments.k)
        arguments.result_out.write_text(json.dumps(result))
        return 0

    reason = missing_data()
    if reason is not None:
        print(f"bench_generalization: {reason}", file=sys.stderr)
        return 1

    arx = read_arx(arguments.arx) if arguments.arx is not None else None
    began = time.perf_counter()
    print_header(argv, ("polars", "numpy", "numba", "pandas", "pycanon"))
    print(
        f"data             {ADULT / 'adult.csv'} (';', read as text), "
        "hierarchies adult_hierarchy_<column>.csv"
    )
    print()

    problems: list[str] = []
    missed: list[str] = []
    with tempfile.TemporaryDirectory(prefix="bench_generalization.") as directory:
        workdir = Path(directory)
        grid = run_child(["--child", "grid", "--repeats", str(arguments.repeats)], workdir, "grid")
        if grid is None:
            problems.append("the grid child failed")
        else:
            found, late = print_grid(grid)
            problems += found
            missed += late
            print()
            found, late = print_checks(grid["checks"], check_repeats(arguments.repeats))
            problems += found
            missed += late
            print()
            missed += print_issue_grid(grid, arx)
        print()
        found, late = print_startup(measure_startup())
        problems += found
        missed += late
        print()
        large = []
        for k in () if arguments.no_large else LARGE_KS:
            child = ["--child", "large", "--records", str(arguments.records), "--k", str(k)]
            result = run_child(child, workdir, f"large-k{k}")
            if result is None:
                problems.append(f"the {arguments.records:,}-record run with k={k} failed")
            else:
                large.append(result)
        found, late = print_large(large)
        problems += found
        missed += late

    print()
    load = " ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"total            {time.perf_counter() - began:.0f} s; load average {load} at the end")
    if missed:
        print(f"targets missed   {len(missed)}:")
        for item in missed:
            print(f"  {item}")
    else:
        print("targets missed   none")
    if problems:
        print(f"FAILURES         {len(problems)}:")
        for item in problems:
            print(f"  {item}")
    else:
        print("failures         none")
    return 1 if problems or (arguments.strict and missed) else 0


if __name__ == "__main__":
    sys.exit(main())
