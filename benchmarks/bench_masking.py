"""Benchmark: masking methods (issue 13), every part against a straightforward numpy baseline measured
in the same run, with peak memory.

Parts (each a module ``_masking_<part>.py`` with its own ``main``, run here one after another in its
own subprocess, so that each peak resident memory is its own):

* ``microaggregation``: MDAV k=3 on CASCrefmicrodata, Tarragona, 100,000 numeric records (exact) and
  1,000,000 (the scalable variant), with SSE/SST;
* ``perturbation``: rank swapping and PRAM on 1,000,000 records, correlated noise on CASC;
* ``record_swap``: targeted record swapping of households on 1,000,000 persons; sampling.
* ``noise_shuffle``: sdcMicro's addNoise restr, outdect and ROMM, and shuffle (ds), at 100,000 and
  1,000,000 records (issue 37).

Data from ../shared/data (relative to the project root); a part whose data is absent says so and
skips it. Usage::

    python benchmarks/bench_masking.py                        # every part
    python benchmarks/bench_masking.py microaggregation       # some parts
"""

from __future__ import annotations

import sys

from _common import run_parts

PARTS = ("microaggregation", "perturbation", "record_swap", "noise_shuffle")


def main(argv: list[str] | None = None) -> int:
    return run_parts("_masking_", PARTS, argv)


if __name__ == "__main__":
    sys.exit(main())
