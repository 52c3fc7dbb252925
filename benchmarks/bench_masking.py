"""Benchmark: masking methods (issue 13), every part against a straightforward numpy baseline measured
in the same run, with peak memory.

Parts (each a module ``_masking_<part>.py`` with its own ``main``, run here one after another in its
own subprocess, so that each peak resident memory is its own):

* ``microaggregation``: MDAV k=3 on CASCrefmicrodata, Tarragona, 100,000 numeric records (exact) and
  1,000,000 (the scalable variant), with SSE/SST;
* ``perturbation``: rank swapping and PRAM on 1,000,000 records, correlated noise on CASC;
* ``record_swap``: targeted record swapping of households on 1,000,000 persons; sampling.

Data from ../shared/data (relative to the project root); a part whose data is absent says so and
skips it. Usage::

    python benchmarks/bench_masking.py                        # every part
    python benchmarks/bench_masking.py microaggregation       # some parts
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PARTS = ("microaggregation", "perturbation", "record_swap")


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
        status = subprocess.call([sys.executable, str(HERE / f"_masking_{part}.py")], cwd=HERE.parent)
        print(f"--- {part}: exit {status}, {time.perf_counter() - started:.1f} s wall", flush=True)
        if status != 0:
            failed.append(part)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
