"""Benchmark: the cell key method on a frequency table of ~18,000 cells from 1,000,000 records (issue 15).

    .venv/bin/python benchmarks/_tables_cellkey.py [--records 1000000] [--shape 40,20,20]

Data (generated, seeded): ``--records`` records with three categorical attributes of 40, 20 and 20
codes (skewed frequencies); the table crosses all three with every margin (41 × 21 × 21 = 18,081
cells, ``LinearTable.from_array``).

* **cell-key**: record keys (seeded, 52-bit), cell keys (two exact integer sums of key halves over
  the cells, ``sdckit.tabular.cellkey.cell_keys``), the noise lookup (``perturb_counts``) for a D = 3,
  V = 2, js = 1 ptable. The per-cell sums are a ``np.bincount`` over the interior plus the margins
  (what ``sdckit.tabular.build.cell_sums`` computes from microdata, without its spec handling).
* **baseline**: the plain count of the same cells with polars: a ``group_by(...).len()`` per subset
  of the attributes (interior, the three 2-way and 1-way margins, the grand total).
* **ptable**: construction time of the perturbation table (maximum entropy per row; uncached).
* **via build**: the same records through ``sdckit.tabular.problem.make_problem`` and the registered
  ``cell-key`` method (its cell keys through ``build.cell_sums``: one build of the table per key half).

Best of three after a warm-up. Checks: every released count ≥ 0, zero cells stay zero, no count in
1..js, the noise within ±D, and the counts equal the polars baseline.
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np
import polars as pl

from _common import peak_rss_mib, print_header


def records(n: int, shape: tuple[int, ...], seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    columns = []
    for size in shape:
        weights = rng.pareto(1.2, size) + 0.05
        columns.append(rng.choice(size, size=n, p=weights / weights.sum()))
    return np.column_stack(columns)


def cube_sums(codes: np.ndarray, shape: tuple[int, ...], values: np.ndarray | None) -> np.ndarray:
    """Sums of ``values`` (counts when None) over the interior cells and every margin, in the cell
    order of ``LinearTable.from_array``."""
    flat = np.ravel_multi_index(tuple(codes.T), shape)
    interior = np.bincount(flat, weights=values, minlength=int(np.prod(shape))).reshape(shape)
    full = np.zeros(tuple(s + 1 for s in shape))
    full[tuple(slice(0, s) for s in shape)] = interior
    for d, s in enumerate(shape):
        index = [slice(None)] * len(shape)
        index[d] = s
        rest = [slice(None)] * len(shape)
        rest[d] = slice(0, s)
        full[tuple(index)] = full[tuple(rest)].sum(axis=d)
    return full.ravel()


def polars_cube(frame: pl.DataFrame, names: list[str]) -> int:
    """The plain count of every cell of the cube (interior and margins) with polars."""
    cells = 0
    for k in range(len(names), -1, -1):
        for subset in itertools.combinations(names, k):
            if subset:
                cells += frame.group_by(list(subset)).len().height
            else:
                cells += 1 if frame.height else 0
    return cells


def best(function, repeat: int = 3) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return min(times), result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--shape", default="40,20,20")
    args = parser.parse_args(argv)
    print_header(argv, packages=("polars", "numpy", "scipy"))
    from sdckit.tabular.cellkey import cell_keys, perturb_counts, perturbation_table, record_keys
    from sdckit.tabular.model import LinearTable

    shape = tuple(int(s) for s in args.shape.split(","))
    codes = records(args.records, shape)
    names = [f"v{d + 1}" for d in range(len(shape))]
    frame = pl.DataFrame({name: codes[:, d] for d, name in enumerate(names)})
    counts = cube_sums(codes, shape, None)
    table = LinearTable.from_array(
        counts.reshape(tuple(s + 1 for s in shape))[tuple(slice(0, s) for s in shape)]
    )
    assert np.array_equal(table.values, counts)
    print(f"data             {args.records:,} records, table {shape} with margins: {table.n_cells:,} cells")

    from sdckit.tabular import cellkey

    # the ptable is cached per parameter set: time the construction itself
    t_ptable, _ = best(lambda: cellkey._perturbation_table.__wrapped__(3, 2.0, 1, None, True, 1, "counts"))
    ptable = perturbation_table(3, 2.0, 1)

    def cell_key_run() -> np.ndarray:
        keys = record_keys(args.records, seed=11)
        ck = cell_keys(keys, lambda v: cube_sums(codes, shape, v))
        return counts + perturb_counts(counts, ck, ptable)

    def baseline() -> int:
        return polars_cube(frame, names)

    cell_key_run()
    baseline()
    t_ours, released = best(cell_key_run)
    t_base, n_cells = best(baseline)
    noise = released - counts
    assert np.all(released >= 0) and np.all(released[counts == 0] == 0)
    assert not np.any((released >= 1) & (released <= 1)) and np.all(np.abs(noise) <= 3)
    assert n_cells == np.count_nonzero(counts), "polars counts the non-empty cells of the same cube"
    keys = record_keys(args.records, seed=11)
    t_keys, ck = best(lambda: cell_keys(keys, lambda v: cube_sums(codes, shape, v)))
    t_lookup, _ = best(lambda: perturb_counts(counts, ck, ptable))
    print(f"ptable           D=3 V=2 js=1: {ptable.classes.size} rows, built in {t_ptable * 1e3:.1f} ms")
    print(
        f"cell-key         {t_ours:.3f} s in all: record keys, cell keys ({t_keys:.3f} s), "
        f"lookup ({t_lookup * 1e3:.1f} ms)"
    )
    print(f"baseline         {t_base:.3f} s (polars group_by count of the {n_cells:,} non-empty cells)")
    print(f"ratio            {t_ours / t_base:.2f} (cell-key / baseline)")
    live = noise[counts > 0]
    print(
        f"noise            {np.count_nonzero(noise):,} cells perturbed; over the non-empty cells mean "
        f"{live.mean():+.4f}, variance {live.var():.3f} (V=2; counts 1..4 have less), "
        f"largest |noise| {np.abs(noise).max():.0f}"
    )
    from sdckit.table import Schema, Table
    from sdckit.tabular.base import run_table_method
    from sdckit.tabular.build import TableSpec
    from sdckit.tabular.problem import make_problem

    text = frame.with_columns(pl.col(names).cast(pl.String))
    source = Table(data=text, schema=Schema.infer(text))
    start = time.perf_counter()
    problem = make_problem(source, TableSpec.of(names[0], names[1], names[2:]))
    t_build = time.perf_counter() - start
    params = {"seed": 11, "max_deviation": 3, "variance": 2.0, "small_cells": 1}
    t_method, result = best(lambda: run_table_method("cell-key", problem, params), repeat=2)
    assert np.all(result.released >= 0)
    print(
        f"via build        make_problem {t_build:.2f} s ({result.table.n_cells:,} non-empty cells); "
        f"the cell-key method on it {t_method:.2f} s "
        "(cell keys through sdckit.tabular.build.cell_sums: two builds of the table)"
    )
    print(f"peak RSS         {peak_rss_mib():.0f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
