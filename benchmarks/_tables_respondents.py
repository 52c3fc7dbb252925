"""Benchmark: secondary suppression protected against respondents (issue 31), against the same
suppression protected against the outside attacker only, in the same run.

Tables (seeded, as ``_tables_suppression.py``): interior counts ``floor(lognormal(4, 1.2))`` with all
margins (``LinearTable.from_array``: a frequency table, one contributor per unit, so a count of 1 is
a singleton); primary cells: interior cells with ``1 ≤ a ≤ 4`` (a minimum-frequency rule "fewer than
5", ``UPL = LPL = a``). Shapes: ``2d`` 50 × 50 (2,601 cells), ``3d-small`` 10 × 10 × 12 (1,573 cells).

For each table and algorithm (heuristic; optimal with a 60 s limit): the pattern without the
respondent attacker (``singletons="none"``, the baseline) and with it (``"protect"``): seconds,
secondary cells, cost, the secondaries added for respondents, the ratios; then the respondent audit
of the baseline pattern (how many primary cells a singleton un-protects, and its time). Peak
resident memory at the end. Usage::

    python benchmarks/_tables_respondents.py [--only 2d] [--time-limit 60]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from _common import peak_rss_mib, print_header
from sdckit.tabular.model import LinearTable, Protection
from sdckit.tabular.respondents import respondent_attack, respondents
from sdckit.tabular.suppression import suppress

SHAPES = {"2d": (50, 50), "3d-small": (10, 10, 12)}


def table_and_protection(shape: tuple[int, ...], seed: int = 0) -> tuple[LinearTable, Protection]:
    rng = np.random.default_rng(seed)
    interior = np.floor(rng.lognormal(4.0, 1.2, size=shape))
    table = LinearTable.from_array(interior)
    totals = table.totals()
    cells = np.flatnonzero(~totals & (table.values >= 1) & (table.values <= 4))
    return table, Protection.of_cells(table.n_cells, cells, upper=table.values[cells], rule="freq=5")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", choices=sorted(SHAPES))
    parser.add_argument("--time-limit", type=float, default=60.0)
    options = parser.parse_args(argv)
    print_header(argv, packages=("highspy", "scipy", "numpy"))
    for name, shape in SHAPES.items():
        if options.only and name != options.only:
            continue
        table, protection = table_and_protection(shape)
        singletons = int(((table.values == 1) & ~table.totals()).sum())
        print(
            f"\n{name}: {table.n_cells:,} cells, {int(protection.primary.sum())} primary, "
            f"{singletons} singleton cells"
        )
        for algorithm in ("heuristic", "optimal"):
            runs = {}
            for mode in ("none", "protect"):
                started = time.perf_counter()
                pattern, figures = suppress(
                    table, protection, algorithm=algorithm, singletons=mode, time_limit=options.time_limit
                )
                seconds = time.perf_counter() - started
                runs[mode] = (pattern, figures, seconds)
                print(
                    f"  {algorithm:<9} singletons={mode:<7} {seconds:7.2f} s, "
                    f"{figures['secondary_cells']:4d} secondary, cost {figures['cost']:10,.1f}, "
                    f"for respondents {figures.get('respondent_secondaries', 0):3d}, "
                    f"optimal {figures.get('optimal')}"
                )
            base, guarded = runs["none"], runs["protect"]
            print(
                f"  {algorithm:<9} ratio protect/none: time {guarded[2] / base[2]:.2f}, secondaries "
                f"{guarded[1]['secondary_cells'] / max(base[1]['secondary_cells'], 1):.2f}, cost "
                f"{guarded[1]['cost'] / max(base[1]['cost'], 1e-9):.2f}"
            )
            started = time.perf_counter()
            found = respondents(table, protection, base[0])
            failures = respondent_attack(table, base[0], protection, found)
            print(
                f"  {algorithm:<9} respondent audit of the baseline pattern: {len(found)} respondents, "
                f"{len({f.cell for f in failures})} primary cells un-protected, "
                f"{time.perf_counter() - started:.2f} s"
            )
    print(f"\nmemory           peak RSS {peak_rss_mib():,.0f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
