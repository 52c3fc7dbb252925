"""Benchmark: controlled rounding and controlled tabular adjustment (issue 15 item 6; SPEC §8.7–8.8).

    .venv/bin/python benchmarks/_tables_rounding.py [--time-limit 60] [--skip-3d]

Tables (generated, seeded): a 2-D table of 50 × 50 interior cells (2,601 cells with margins) and a
3-D table of 27 × 27 × 26 interior cells (21,168 cells with margins), counts uniform in 0..29, built
with ``LinearTable.from_array``.

* **round** (base 5): ``controlled_rounding`` (LP relaxation first, MILP when fractional, fix-and-
  resolve when the MILP finds nothing in half the time limit), and for the 2-D table the MILP path
  forced; baseline: conventional rounding of each cell alone plus one numpy sum of the rounded
  interior (fast, but the table is not additive: the number of violated relations is printed).
* **cta** (w = 1/a; 5 % of the interior cells sensitive, UPL = LPL = max(1, 30 % of the value)): the
  LP heuristic and the MILP; baseline: one ``scipy.optimize.linprog`` of the CTA LP with every
  sensitive cell moved up (the LP the heuristic solves at its step 3).

Ratios are ours over the baseline measured in the same run; peak resident memory at the end.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import peak_rss_mib, print_header  # noqa: E402


def _table(shape: tuple[int, ...], seed: int = 1):
    from sdckit.tabular.model import LinearTable

    return LinearTable.from_array(np.random.default_rng(seed).integers(0, 30, shape))


def _protection(table, seed: int = 2):
    from sdckit.tabular.model import Protection

    rng = np.random.default_rng(seed)
    interior = np.flatnonzero(~table.totals() & (table.values > 0))
    cells = rng.choice(interior, size=max(1, interior.size // 20), replace=False)
    level = np.maximum(1.0, np.round(0.3 * table.values[cells]))
    return Protection.of_cells(table.n_cells, cells, level, np.minimum(level, table.values[cells]))


def _timed(function, *args, **kwargs):
    started = time.perf_counter()
    try:
        result = function(*args, **kwargs)
    except Exception as error:  # noqa: BLE001 - reported as the result
        result = error
    return result, time.perf_counter() - started


def bench_round(table, name: str, time_limit: float, force_milp: bool) -> None:
    from sdckit.tabular import rounding

    base = 5
    started = time.perf_counter()
    naive = np.round(table.values / base) * base
    interior = ~table.totals()
    _ = naive[interior].sum()
    baseline = time.perf_counter() - started
    broken = int(np.count_nonzero(np.abs(table.residuals(naive)) > 0))
    print(
        f"round {name}: baseline conventional rounding {baseline * 1e3:.2f} ms, {broken} relations violated"
    )
    result, seconds = _timed(rounding.controlled_rounding, table, base, time_limit=time_limit)
    if isinstance(result, Exception):
        print(f"round {name}: controlled_rounding failed after {seconds:.2f} s: {result}")
    else:
        figures = result[1]
        print(
            f"round {name}: controlled_rounding {seconds:.2f} s (x{seconds / baseline:,.0f} baseline), "
            f"solver {figures['solver']}, optimal {figures['optimal']}, deviation {figures['deviation']:g}, "
            f"cells changed {figures['cells_changed']:,}, additive {table.is_additive(result[0], 0.0)}"
        )
    if force_milp:
        from scipy.optimize import Bounds, LinearConstraint, milp
        from scipy.sparse import csr_matrix

        units = table.values / base
        floor = np.floor(units)
        multiple = units == floor
        cells, step = rounding._columns(floor, multiple, relaxed=False)
        residual = table.values - base * floor
        cost = rounding._step_costs(cells, step, residual, np.ones(table.n_cells), base)
        matrix = csr_matrix(table.relations[:, cells])
        rhs = -np.asarray(table.relations @ floor).ravel()
        started = time.perf_counter()
        solved = milp(
            cost,
            integrality=np.ones(cost.size),
            bounds=Bounds(0, 1),
            constraints=LinearConstraint(matrix, rhs, rhs),
            options={"time_limit": time_limit},
        )
        seconds = time.perf_counter() - started
        print(
            f"round {name}: MILP path forced {seconds:.2f} s (x{seconds / baseline:,.0f} baseline), "
            f"status {solved.status}, deviation {residual.sum() + (solved.fun or 0):g}"
        )


def bench_cta(table, name: str, time_limit: float, milp: bool) -> None:
    from scipy.optimize import linprog

    from sdckit.tabular.cta import _Model, controlled_adjustment, cta_weights

    protection = _protection(table)
    model = _Model(table, protection, cta_weights(table.values, "inverse"), False)
    up = np.ones(protection.cells.size, dtype=bool)
    lower, upper = model.z_bounds()
    p, n = model.sensitive, model.n
    lower[p], upper[n + p] = model.upl, 0.0
    started = time.perf_counter()
    base = linprog(
        model.cost(), A_eq=model.equality, b_eq=np.zeros(model.equality.shape[0]), bounds=np.c_[lower, upper]
    )
    baseline = time.perf_counter() - started
    del up
    print(
        f"cta {name}: {protection.cells.size} sensitive cells; baseline one linprog (all up) "
        f"{baseline:.2f} s, objective {base.fun:.4f}"
    )
    algorithms = ["lp", "milp"] if milp else ["lp"]
    for algorithm in algorithms:
        result, seconds = _timed(
            controlled_adjustment, table, protection, algorithm=algorithm, time_limit=time_limit
        )
        if isinstance(result, Exception):
            print(f"cta {name}: {algorithm} failed after {seconds:.2f} s: {result}")
            continue
        figures = result[1]
        print(
            f"cta {name}: {algorithm} {seconds:.2f} s (x{seconds / baseline:.1f} baseline), objective "
            f"{figures['objective']:.4f}, optimal {figures['optimal']}, cells changed "
            f"{figures['cells_changed']:,}, up/down {figures['moved_up']}/{figures['moved_down']}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--skip-3d", action="store_true")
    args = parser.parse_args(argv)
    print_header(argv, packages=("numpy", "scipy", "highspy"))
    small = _table((50, 50))
    bench_round(small, "50x50", args.time_limit, force_milp=True)
    bench_cta(small, "50x50", args.time_limit, milp=True)
    if not args.skip_3d:
        large = _table((27, 27, 26))
        print(f"3-D table: {large.n_cells:,} cells, {large.n_relations:,} relations")
        bench_round(large, "27x27x26", args.time_limit, force_milp=False)
        bench_cta(large, "27x27x26", args.time_limit, milp=True)
    print(f"peak RSS {peak_rss_mib():.0f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
