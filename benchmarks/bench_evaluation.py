"""Benchmark: disclosure-risk and utility evaluation (issue 12), every part against a baseline
measured in the same run, with peak memory.

Parts (each a module ``_evaluation_<part>.py`` with its own ``main``, run here one after another in
its own subprocess, so that each peak resident memory is its own):

* ``reidentification``: fk/Fk with wildcard nulls and individual risk on sdcMicro's ``testdata`` and
  on 1,000,000 records resampled column by column from it, against a pandas group-by;
* ``suda``: SUDA2 on ``testdata`` (9 keys, maximum MSU size 5) against a brute-force search;
* ``linkage``: distance-based linkage of Adult against a noise-masked copy and of 200,000 × 200,000
  records; Fellegi–Sunter with blocking on Adult (against the ``recordlinkage`` package when it is
  installed: ``pip install recordlinkage`` in the benchmark environment only);
* ``utility``: propensity-score utility on Adult, numeric information loss on CASC.

Data from ../shared/data (relative to the project root); a part whose data is absent says so and is
skipped. Usage::

    python benchmarks/bench_evaluation.py                 # every part
    python benchmarks/bench_evaluation.py suda linkage    # some parts
"""

from __future__ import annotations

import sys

from _common import run_parts

PARTS = ("reidentification", "suda", "linkage", "utility")


def main(argv: list[str] | None = None) -> int:
    return run_parts("_evaluation_", PARTS, argv)


if __name__ == "__main__":
    sys.exit(main())
