"""Benchmark: tabular data protection (issue 15), every part against a baseline measured in the
same run, with peak memory.

Parts (each a module ``_tables_<part>.py`` with its own ``main``, run one after another in its own
subprocess, so that each peak resident memory is its own):

* ``build``: tables from 1,000,000 records (2-D 50 × 50, 3-D hierarchical, with holdings) against a
  polars group-by of the interior cells;
* ``microdata``: the issue's scenario — 2-D 50 × 50 and 3-D hierarchical (about 19,000 cells) tables
  from 1,000,000 records, p%-rule: optimal (5-minute limit) and heuristic suppression, their cost
  ratio, the audit against whole-table LPs;
* ``suppression``: suppression and audit on generated tables of several shapes;
* ``respondents``: suppression protected against singletons (issue 31) against the same without;
* ``rounding``: controlled rounding and CTA on 50 × 50 and 27 × 27 × 26 tables;
* ``cellkey``: the cell key method on 1,000,000 records against a polars group-by count.

Usage::

    python benchmarks/bench_tables.py                  # every part
    python benchmarks/bench_tables.py build rounding   # some parts
"""

from __future__ import annotations

import sys

from _common import run_parts

PARTS = ("build", "microdata", "suppression", "respondents", "rounding", "cellkey")


def main(argv: list[str] | None = None) -> int:
    return run_parts("_tables_", PARTS, argv)


if __name__ == "__main__":
    sys.exit(main())
