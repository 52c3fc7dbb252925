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

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PARTS = ("reidentification", "suda", "linkage", "utility")


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    chosen = [part for part in arguments if not part.startswith("-")] or list(PARTS)
    unknown = [part for part in chosen if part not in PARTS]
    if unknown:
        print(f"unknown part(s) {', '.join(unknown)}: choose among {', '.join(PARTS)}", file=sys.stderr)
        return 2
    failed = []
    for part in chosen:
        print(f"\n=== {part} ===", flush=True)
        started = time.perf_counter()
        status = subprocess.call([sys.executable, str(HERE / f"_evaluation_{part}.py")], cwd=HERE.parent)
        print(f"--- {part}: exit {status}, {time.perf_counter() - started:.1f} s wall", flush=True)
        if status != 0:
            failed.append(part)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
