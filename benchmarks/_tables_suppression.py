"""Benchmark: secondary cell suppression and the attacker audit (sdckit.tables.suppression / audit).

Tables (seeded): interior values ``floor(lognormal(4, 1.2))`` (median 54, skewed), all margins
(``LinearTable.from_array``); primary cells: interior cells with ``1 ≤ a ≤ 4`` (a minimum-frequency
rule "fewer than 5"), ``UPL = LPL = a`` (the attacker must not be able to exclude 0 or 2a).

* ``2d``: 50 × 50 interior (2,601 cells with margins);
* ``3d-small``: 10 × 10 × 12 interior (1,573 cells with margins), where the optimum is in reach;
* ``3d``: 20 × 20 × 40 interior (18,081 cells with margins).

For each: the heuristic (``repair="auto"``: below ``REPAIR_LP_LIMIT`` the better of the LP repair
after SPEC's sweep and without it; above, SPEC §8.5's sweep and cheapest-neighbour repair, which
is also run alone on the small tables for comparison), the optimal algorithm (Benders; time limit
300 s; skipped, with the reason printed, when ``|P|·N`` exceeds ``--optimal-limit``), the
heuristic/optimal cost ratio, the number and value of secondary suppressions, the time of the
exact audit of the final pattern, and a baseline measured in the same run: the attacker's two LPs
of one primary cell written the straightforward way (the whole table as one
``scipy.optimize.linprog`` in the cell values, published cells as equality constraints),
extrapolated to the ``2·|S|`` LPs a full audit needs. Peak resident
memory at the end. Usage::

    python benchmarks/_tables_suppression.py            # every table
    python benchmarks/_tables_suppression.py --only 2d
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.optimize import linprog

from _common import peak_rss_mib, print_header
from sdckit.tables.audit import audit
from sdckit.tables.model import LinearTable, Protection
from sdckit.tables.suppression import REPAIR_LP_LIMIT, cell_weights, heuristic_pattern, optimal_pattern

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


def run(name: str, seed: int, optimal_limit: float, time_limit: float) -> None:
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
        started = time.perf_counter()
        mask, info = optimal_pattern(table, protection, w, time_limit=time_limit, incumbent=best)
        seconds = time.perf_counter() - started
        bound = (info["bound"] or 0.0) - float(w[primary].sum())
        print(
            f"  optimal (Benders)           {seconds:8.2f} s  {secondary(mask)}; optimal={info['optimal']}, "
            f"lower bound {bound:,.0f}, {info['iterations']} master solves, {info['cuts']} cuts"
        )
        optimum = float(table.values[mask & ~primary].sum())
        for repair, pattern in heuristic_patterns.items():
            cost = float(table.values[pattern & ~primary].sum())
            print(
                f"  cost ratio heuristic({repair})/optimal = "
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=sorted(SHAPES))
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--optimal-limit", type=float, default=2e6, help="largest |P|·N the optimal algorithm runs on"
    )
    parser.add_argument("--time-limit", type=float, default=300.0)
    args = parser.parse_args(argv)
    print_header(argv, packages=("numpy", "scipy", "highspy", "numba"))
    for name in [args.only] if args.only else list(SHAPES):
        run(name, args.seed, args.optimal_limit, args.time_limit)
    print(f"peak RSS {peak_rss_mib():,.0f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
