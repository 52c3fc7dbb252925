"""Benchmark part of ``bench_attack.py`` (issue 36): the DP audit's lower bound on ε against the
claimed ε.

    .venv/bin/python benchmarks/_attack_dp_audit.py [--records 100000] [--trials 20000]

For dp-noise at ε = 0.5, 1 and 2 (two attributes, budget split, on ``--records`` generated records:
x uniform in [0, 100] with bounds 0:100, y normal with bounds -5:5, so that some values are clamped),
``sdckit attack``'s dp-audit with ``--trials`` runs per side: ε_lb from numpy's seeded draws of the
claimed noise, the same with half the noise (the deliberately broken mechanism, which must be
caught: ε_lb > ε), and ε_lb from the real mechanism (dp-noise itself, OpenDP's exact sampler,
unseeded), whose time is the baseline of the ratio; then the query server's count at ε = 1 the same
way. Peak RSS of the process at the end.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

from _common import peak_rss_mib, print_header


def _timed(function):
    started = time.perf_counter()
    result = function()
    return time.perf_counter() - started, result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--trials", type=int, default=20_000)
    arguments = parser.parse_args(argv)
    print_header(argv, ("polars", "numpy", "scipy", "opendp"))
    from sdckit.attack.dp_audit import DPAuditParams, audit
    from sdckit.config import parse_config

    rng = np.random.default_rng(7)
    n = arguments.records
    config = parse_config(
        "attributes:\n  x: {role: quasi-identifier, kind: numeric}\n"
        "  y: {role: quasi-identifier, kind: numeric}\n"
    )
    table = config.read(pl.DataFrame({"x": rng.uniform(0, 100, n), "y": rng.normal(0, 2, n)}))
    trials = arguments.trials
    print(
        f"data             {n:,} generated records; x bounds 0:100, y bounds -5:5; {trials:,} trials per side"
    )
    print(
        f"{'mechanism':<22}{'claimed ε':>10}{'pair ε':>9}{'ε_lb':>8}{'verdict':>9}"
        f"{'ε_lb ½-noise':>14}{'verdict':>9}{'ε_lb OpenDP':>13}{'numpy s':>9}{'OpenDP s':>10}{'ratio':>8}"
    )
    failures = 0
    with tempfile.TemporaryDirectory() as folder:
        cases: list[tuple[str, dict]] = []
        for epsilon in (0.5, 1.0, 2.0):
            recipe = Path(folder) / f"dp-{epsilon:g}.json"
            step = {
                "method": "dp-noise",
                "epsilon": epsilon,
                "bounds": ["x:0:100", "y:-5:5"],
                "budget": "split",
            }
            recipe.write_text(json.dumps({"recipe": {"steps": [{**step, "attributes": None}]}}))
            cases.append((f"dp-noise ε={epsilon:g}", {"recipe": str(recipe)}))
        cases.append(("query count ε=1", {"query": "count", "epsilon": 1.0}))
        for label, values in cases:
            params = DPAuditParams.parse({**values, "trials": trials})
            seconds, result = _timed(lambda params=params: audit(table, params))
            broken = audit(table, params, _noise_factor=0.5)
            real_params = DPAuditParams.parse({**values, "trials": trials, "sampler": "mechanism"})
            real_seconds, real = _timed(lambda real_params=real_params: audit(table, real_params))
            details = result.details
            caught = broken.verdict == "fails"
            failures += int(result.verdict != "holds") + int(not caught) + int(real.verdict != "holds")
            print(
                f"{label:<22}{details['epsilon_claimed']:>10.3g}{details['epsilon_of_pair']:>9.3f}"
                f"{result.epsilon_lower:>8.3f}{result.verdict:>9}"
                f"{broken.epsilon_lower:>14.3f}{broken.verdict:>9}{real.epsilon_lower:>13.3f}"
                f"{seconds:>9.3f}{real_seconds:>10.3f}{seconds / real_seconds:>8.3f}"
            )
    print("ratio: the audit with numpy's draws of the claimed noise over the audit with the real mechanism")
    print("(the first numpy time includes loading scipy's beta quantiles)")
    print(f"peak RSS         {peak_rss_mib():.0f} MiB")
    if failures:
        print(f"{failures} unexpected verdict(s): a correct mechanism refuted or the broken one not caught")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
