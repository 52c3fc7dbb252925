"""Benchmark part: issue 15's scenario. From 1,000,000 generated enterprise records, a 2-D table of
50 × 50 cells and a 3-D hierarchical table of about 19,000 cells (40 districts in 8 regions × 30
activities in 6 sections × 10 size classes), turnover summed, p%-rule (p = 10) plus a minimum
frequency of 3. For each: building the problem, the heuristic and the optimal secondary suppression
(the optimal one within a 5-minute limit: it returns its best pattern and bound when stopped), the
number and value of secondary suppressions, the heuristic/optimal cost ratio and the audit time.

Baseline measured in the same run: a polars group-by of the interior cells of the same table (what
building any table costs at least) for the build, and one HiGHS LP of the whole attacker problem for
one primary cell (``scipy.optimize.linprog`` on every cell with the published ones fixed) for the
audit — the audit solves two such LPs for every primary cell, on the components of the suppressed
cells only. Usage: ``python benchmarks/_tables_microdata.py [--time-limit SECONDS]``."""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import polars as pl

from _common import peak_rss_mib, print_header
from _tables_data import enterprises, hierarchies, two_way
from sdckit.tabular.attacker import audit
from sdckit.tabular.build import TableSpec
from sdckit.tabular.problem import make_problem
from sdckit.tabular.rules import Rule
from sdckit.tabular.suppression import suppress


def one_lp(table, suppressed, cell: int) -> float:
    """The baseline: max y_cell over the whole table with scipy's linprog, published cells fixed."""
    from scipy.optimize import linprog

    lower = np.where(suppressed, table.lower, table.values)
    upper = np.where(suppressed, table.upper, table.values)
    cost = np.zeros(table.n_cells)
    cost[cell] = -1.0
    started = time.perf_counter()
    linprog(
        cost,
        A_eq=table.relations,
        b_eq=np.zeros(table.n_relations),
        bounds=np.c_[lower, upper],
        method="highs",
    )
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--time-limit", type=float, default=300.0)
    arguments = parser.parse_args(argv)
    print_header(argv, packages=("polars", "numpy", "scipy", "highspy"))
    rules = [Rule.parse("p=10"), Rule.parse("freq=3")]
    cases = [
        ("2-D 50x50", two_way(), TableSpec.of("row", "col", value="turnover"), ["row", "col"]),
        (
            "3-D hierarchical",
            enterprises(),
            TableSpec.of("district", "activity", "size", value="turnover", hierarchies=hierarchies()),
            ["district", "activity", "size"],
        ),
    ]
    for name, data, spec, dims in cases:
        started = time.perf_counter()
        problem = make_problem(data, spec, rules)
        built = time.perf_counter() - started
        started = time.perf_counter()
        data.data.group_by(dims).agg(pl.len(), pl.col("turnover").sum())
        baseline_build = time.perf_counter() - started
        table, protection = problem.table, problem.protection
        print(
            f"\n{name}: {data.n_records:,} records -> {table.n_cells:,} cells, "
            f"{table.n_relations:,} relations, "
            f"{int(protection.primary.sum()):,} primary (value {table.values[protection.primary].sum():,.0f})"
        )
        print(
            f"  build + rules     {built:8.2f} s   group-by baseline {baseline_build:.3f} s   "
            f"ratio {built / baseline_build:.1f}"
        )
        results = {}
        for algorithm in ("heuristic", "optimal"):
            started = time.perf_counter()
            suppressed, figures = suppress(
                table, protection, algorithm=algorithm, time_limit=arguments.time_limit
            )
            seconds = time.perf_counter() - started
            secondary = suppressed & ~protection.primary
            results[algorithm] = (suppressed, float(table.values[secondary].sum()))
            proven = "optimal" if figures.get("optimal") else "not proven optimal"
            bound = figures.get("bound")
            extra = (
                f", bound {bound:,.0f}" if isinstance(bound, int | float) and algorithm == "optimal" else ""
            )
            print(
                f"  {algorithm:9}         {seconds:8.2f} s   secondary {int(secondary.sum()):,} cells, "
                f"value {table.values[secondary].sum():,.0f} ({proven}{extra})"
            )
        ratio = results["heuristic"][1] / results["optimal"][1] if results["optimal"][1] else float("nan")
        print(f"  heuristic/optimal cost ratio {ratio:.3f}")
        suppressed = results["heuristic"][0]
        started = time.perf_counter()
        checked = audit(table, suppressed, protection)
        audit_seconds = time.perf_counter() - started
        primary = int(protection.primary.sum())
        if primary == 0:
            print("  no primary cell: nothing to audit")
            continue
        cell = int(np.flatnonzero(protection.primary)[0])
        lp = one_lp(table, suppressed, cell)
        print(
            f"  audit             {audit_seconds:8.2f} s   {2 * primary:,} LPs, passed {checked.passed}; "
            f"one whole-table linprog {lp:.3f} s (x{2 * primary} = {2 * primary * lp:.1f} s), "
            f"ratio {audit_seconds / (2 * primary * lp):.3f}"
        )
    print(f"\npeak RSS         {peak_rss_mib():.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
