"""Benchmark: ``sdckit attack`` (issue 36), every part against a baseline measured in the same run,
with peak memory.

Parts (each a module ``_attack_<part>.py`` with its own ``main``, run here one after another in its
own subprocess, so that each peak resident memory is its own):

* ``anonymeter``: singling out, linkability and inference on Adult synthesized by ``sdckit anonymize
  synthesize`` and on a k = 5 generalization, side by side with the ``anonymeter`` package on the
  same data (rates, confidence intervals, time, memory; the part says so and skips when anonymeter
  is not installed: it is installed for this benchmark only);
* ``dp_audit``: the distinguishing test's lower bound on ε against the claimed ε of dp-noise at
  ε = 0.5, 1 and 2, and a mechanism with half the noise, which it must catch.

Data from ../shared/data (relative to the project root); a part whose data is absent says so and
skips it. Usage::

    python benchmarks/bench_attack.py               # every part
    python benchmarks/bench_attack.py dp_audit      # some parts
"""

from __future__ import annotations

import sys

from _common import run_parts

PARTS = ("anonymeter", "dp_audit")


def main(argv: list[str] | None = None) -> int:
    return run_parts("_attack_", PARTS, argv)


if __name__ == "__main__":
    sys.exit(main())
