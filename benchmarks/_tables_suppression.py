"""Benchmark: secondary cell suppression and the attacker audit (sdckit.tabular.suppression / audit).

Tables (seeded): interior values ``floor(lognormal(4, 1.2))`` (median 54, skewed), all margins
(``LinearTable.from_array``); primary cells: interior cells with ``1 ≤ a ≤ 4`` (a minimum-frequency
rule "fewer than 5"), ``UPL = LPL = a`` (the attacker must not be able to exclude 0 or 2a).

* ``2d``: 50 × 50 interior (2,601 cells with margins);
* ``3d-small``: 10 × 10 × 12 interior (1,573 cells with margins), where the optimum is in reach;
* ``3d``: 20 × 20 × 40 interior (18,081 cells with margins).

For each: the heuristic (``repair="auto"``: below ``REPAIR_LP_LIMIT`` the better of the LP repair
after SPEC's sweep and without it; above, SPEC §8.5's sweep and cheapest-neighbour repair, which
is also run alone on the small tables for comparison), the optimal algorithm (Benders on one HiGHS
model, from the heuristic's pattern; time limit 300 s; skipped, with the reason printed, when
``|P|·N`` exceeds ``--optimal-limit``): the time to the proven optimum or the lower bound and gap at
the time limit, its rounds, cuts and where the time went, the number and value of secondary
suppressions against the heuristic's, and a baseline measured in the same run, the optimal search
as it was before issue 31 (every master MIP solved from scratch to its optimum, cuts of the exact
LPs only, the last master solution completed by the heuristic at the time limit), with the ratios.
Then the time of the exact audit of the final pattern against a second baseline: the attacker's two
LPs of one primary cell written the straightforward way (the whole table as one
``scipy.optimize.linprog`` in the cell values, published cells as equality constraints),
extrapolated to the ``2·|S|`` LPs a full audit needs. Peak resident memory after each table. Usage::

    python benchmarks/_tables_suppression.py            # every table
    python benchmarks/_tables_suppression.py --only 3d-small
    python benchmarks/_tables_suppression.py --only 3d-small --baseline-time-limit 0   # no baseline
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from scipy.optimize import linprog

from _common import peak_rss_mib, print_header
from sdckit.errors import InputError
from sdckit.tabular._heuristic_suppression import REPAIR_LP_LIMIT, heuristic_pattern
from sdckit.tabular._optimal_suppression import _infeasible_check, _Master, _separate, optimal_pattern
from sdckit.tabular._patterns import cell_weights
from sdckit.tabular.attacker import audit, deviation_bounds
from sdckit.tabular.model import LinearTable, Protection

SHAPES = {"2d": (50, 50), "3d-small": (10, 10, 12), "3d": (20, 20, 40)}


def make(shape: tuple[int, ...], seed: int) -> tuple[LinearTable, Protection]:
    rng = np.random.default_rng(seed)
    table = LinearTable.from_array(np.floor(rng.lognormal(4.0, 1.2, size=shape)))
    primary = np.flatnonzero((table.values >= 1) & (table.values <= 4) & ~table.totals())
    return table, Protection.of_cells(table.n_cells, primary, table.values[primary])


def linprog_cell(table: LinearTable, suppressed: np.ndarray, cell: int) -> tuple[float, float]:
    """Baseline: one cell's interval from the whole attacker LP in cell values (y), with linprog."""
    n = table.n_cells
    bounds = np.c_[
        np.where(suppressed, table.lower, table.values), np.where(suppressed, table.upper, table.values)
    ]
    c = np.zeros(n)
    c[cell] = 1.0
    low = linprog(c, A_eq=table.relations, b_eq=np.zeros(table.n_relations), bounds=bounds, method="highs")
    high = linprog(-c, A_eq=table.relations, b_eq=np.zeros(table.n_relations), bounds=bounds, method="highs")
    return low.fun, (np.inf if high.status == 3 else -high.fun)


def restart_baseline(
    table: LinearTable,
    protection: Protection,
    w: np.ndarray,
    incumbent: np.ndarray,
    time_limit: float,
    lp_rounds: int = 50,
) -> tuple[np.ndarray, dict]:
    """Baseline: the optimal search before issue 31 (``optimal_pattern`` of commit 892ebe1), on the
    same master class: cuts of the exact attacker LPs at LP solutions until none is violated, then
    every round the master MIP solved to its optimum (HiGHS restarts its branch and bound from
    scratch, the best pattern as start) and its solution separated; at the time limit the master's
    last pattern is completed by the heuristic."""
    start = time.perf_counter()
    deadline = start + time_limit
    down, up = deviation_bounds(table)
    best, best_cost = incumbent.copy(), float(w[incumbent].sum())
    master = _Master(table, protection, w, (down > 0) | (up > 0))
    info = {"optimal": False, "iterations": 0}
    bound = -math.inf
    for _ in range(lp_rounds):
        if time.perf_counter() > deadline:
            break
        solved = master.solve(deadline - time.perf_counter(), 0.0)
        if solved.get("infeasible") or solved["x"] is None:
            break
        bound = max(bound, solved["objective"])
        info["iterations"] += 1
        cuts = _separate(table, protection, solved["x"], down, up, table.relations)
        if not cuts:
            break
        master.add_cuts(_infeasible_check(table, protection, cuts))
    master.make_integer()
    while time.perf_counter() < deadline:
        solved = master.solve(deadline - time.perf_counter(), 0.0, incumbent=best)
        info["iterations"] += 1
        if solved.get("infeasible"):
            raise InputError("the master problem is infeasible")
        if solved["bound"] is not None and np.isfinite(solved["bound"]):
            bound = max(bound, solved["bound"])
        if solved["x"] is None:
            break
        pattern = solved["x"] > 0.5
        cuts = _separate(table, protection, pattern.astype(np.float64), down, up, table.relations)
        if not cuts:
            if float(w[pattern].sum()) <= best_cost + 1e-9 * max(1.0, best_cost):
                best, best_cost = pattern, float(w[pattern].sum())
            info["optimal"] = bool(solved["optimal"])
            break
        master.add_cuts(_infeasible_check(table, protection, cuts))
        if not solved["optimal"]:  # time limit: complete the master's pattern into a protected one
            repaired = heuristic_pattern(table, protection, w, start=pattern)
            if float(w[repaired].sum()) < best_cost:
                best, best_cost = repaired, float(w[repaired].sum())
            break
    info["bound"] = best_cost if info["optimal"] else bound
    info["cuts"] = master.cuts
    return best, info


def describe(info: dict, cost: float, primary_cost: float, seconds: float) -> str:
    """``proven optimal in …`` or the lower bound and gap at the time limit (secondary costs)."""
    if info["optimal"]:
        return f"proven optimal in {seconds:.2f} s"
    bound = (info["bound"] if info["bound"] is not None else -math.inf) - primary_cost
    gap = (cost - bound) / cost if cost > 0 else 0.0
    return (
        f"not proven at the time limit: lower bound {bound:,.0f}, gap {100 * gap:.1f}% of the secondary cost"
    )


def run_optimal(
    table: LinearTable,
    protection: Protection,
    w: np.ndarray,
    heuristic: np.ndarray,
    time_limit: float,
    baseline_time_limit: float,
) -> np.ndarray:
    primary = protection.primary
    primary_cost = float(w[primary].sum())
    h_cells, h_cost = int((heuristic & ~primary).sum()), float(w[heuristic & ~primary].sum())
    started = time.perf_counter()
    mask, info = optimal_pattern(table, protection, w, time_limit=time_limit, incumbent=heuristic)
    seconds = time.perf_counter() - started
    cost = float(w[mask & ~primary].sum())
    split = ", ".join(f"{key} {value:.1f} s" for key, value in info["seconds"].items())
    print(
        f"  optimal (Benders, one model) {seconds:8.2f} s  {int((mask & ~primary).sum()):,} secondary cells, "
        f"cost {cost:,.0f} (heuristic {h_cells:,} cells, {h_cost:,.0f}: optimal/heuristic "
        f"{cost / h_cost if h_cost else float('nan'):.3f}); {describe(info, cost, primary_cost, seconds)}"
    )
    print(
        f"      {info['lp_rounds']} LP + {info['mip_rounds']} MIP rounds, {info['cuts']:,} cuts, "
        f"{info['repairs']} repairs; {split}; peak RSS so far {peak_rss_mib():,.0f} MiB"
    )
    if baseline_time_limit > 0:
        started = time.perf_counter()
        old, old_info = restart_baseline(table, protection, w, heuristic, baseline_time_limit)
        old_seconds = time.perf_counter() - started
        old_cost = float(w[old & ~primary].sum())
        verdict = describe(old_info, old_cost, primary_cost, old_seconds)
        print(
            f"  baseline (re-solve per round) {old_seconds:7.2f} s  {int((old & ~primary).sum()):,} "
            f"secondary cells, cost {old_cost:,.0f}; {verdict}; "
            f"{old_info['iterations']} master solves, {old_info['cuts']:,} cuts"
        )
        ratios = [f"cost {cost / old_cost if old_cost else float('nan'):.3f}x"]
        if info["optimal"] and old_info["optimal"]:
            ratios.append(f"time to the optimum {seconds / old_seconds:.3f}x")
        else:
            new_bound = (info["bound"] or -math.inf) - primary_cost
            old_bound = (old_info["bound"] or -math.inf) - primary_cost
            ratios.append(f"lower bound {new_bound:,.0f} vs {old_bound:,.0f}")
        print(f"  optimal / baseline: {', '.join(ratios)}")
    return mask


def run(name: str, seed: int, optimal_limit: float, time_limit: float, baseline_time_limit: float) -> None:
    table, protection = make(SHAPES[name], seed)
    w = cell_weights(table)
    primary = protection.primary
    size = int(primary.sum()) * table.n_cells
    print(
        f"{name:<5} table {'x'.join(map(str, SHAPES[name]))}: {table.n_cells:,} cells, {table.n_relations:,} "
        f"relations, {int(primary.sum()):,} primary cells (value {table.values[primary].sum():,.0f}), "
        f"|P|·N = {size:,}"
    )

    def secondary(mask: np.ndarray) -> str:
        s = mask & ~primary
        return f"{int(s.sum()):,} secondary cells, value {table.values[s].sum():,.0f}"

    heuristic_patterns = {}
    for repair in ("auto", "neighbour") if size <= REPAIR_LP_LIMIT else ("auto",):
        started = time.perf_counter()
        mask = heuristic_pattern(table, protection, w, repair=repair)
        seconds = time.perf_counter() - started
        heuristic_patterns[repair] = mask
        print(f"  heuristic (repair={repair:<9}) {seconds:8.2f} s  {secondary(mask)}")
    best = heuristic_patterns["auto"]
    if size <= optimal_limit:
        mask = run_optimal(table, protection, w, best, time_limit, baseline_time_limit)
        optimum = float(table.values[mask & ~primary].sum())
        for repair, pattern in heuristic_patterns.items():
            cost = float(table.values[pattern & ~primary].sum())
            print(
                f"  cost ratio heuristic({repair})/optimal(best found) = "
                f"{cost / optimum if optimum else float('nan'):.3f}"
            )
        best = mask
    else:
        print(
            f"  optimal skipped: |P|·N = {size:,} > {optimal_limit:,.0f} "
            "(the master and its cuts grow past 5 min)"
        )
    started = time.perf_counter()
    result = audit(table, best, protection)
    ours = time.perf_counter() - started
    k = int(best.sum())
    p = int(protection.cells[0])
    started = time.perf_counter()
    low, high = linprog_cell(table, best, p)
    one = time.perf_counter() - started
    assert abs(low - result.low[p]) <= 1e-6 * max(1, abs(low)) and (
        high == result.high[p] or abs(high - result.high[p]) <= 1e-6 * max(1, abs(high))
    )
    print(
        f"  audit (exact, {2 * k:,} LPs)  {ours:8.2f} s  passed={result.passed}; baseline linprog of the "
        f"whole table: {one:.3f} s per cell -> {one * k:,.1f} s for the {k:,} suppressed cells; "
        f"ratio {one * k / ours:.1f}x"
    )
    print(f"  peak RSS so far {peak_rss_mib():,.0f} MiB")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=sorted(SHAPES))
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--optimal-limit", type=float, default=2e6, help="largest |P|·N the optimal algorithm runs on"
    )
    parser.add_argument("--time-limit", type=float, default=300.0)
    parser.add_argument(
        "--baseline-time-limit",
        type=float,
        default=None,
        help="time limit of the former optimal search (default: --time-limit; 0: not run)",
    )
    args = parser.parse_args(argv)
    baseline = args.time_limit if args.baseline_time_limit is None else args.baseline_time_limit
    print_header(argv, packages=("numpy", "scipy", "highspy", "numba"))
    for name in [args.only] if args.only else list(SHAPES):
        run(name, args.seed, args.optimal_limit, args.time_limit, baseline)
    print(f"peak RSS {peak_rss_mib():,.0f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
