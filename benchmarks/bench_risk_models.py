"""Benchmark: the risk-based models (average risk, sample and population uniqueness) in the optimal
full-domain generalization on Adult.

Adult (ARX's extract, ``../shared/data/adult``), all 9 attributes quasi-identifiers with ARX's
hierarchies, Loss, suppression limits 0% and 5%. Each row: the nodes the search evaluated, its CPU
time (best of ``--repeats`` in this process) and that time as a ratio to the 5-anonymity row at the
same limit, measured in the same process (the baseline every other generalization row is quoted
against). With ``--arx FILE.jsonl`` (benchmarks/arx/Harness.java's output for the same rows, names
as below: e.g. ``avg005-0.0``) each row also prints ARX 3.9.2's optimum, nodes and median CPU and
ARX's CPU over ours; a row whose optimum differs from ARX's is marked. The peak resident memory of
the process is printed at the end.

Usage::

    python benchmarks/bench_risk_models.py
    python benchmarks/bench_risk_models.py --estimators --arx /tmp/r1/arx_risk.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _common import ADULT_COLUMNS, load_adult_text, peak_rss_mib, print_header

USA = 317238626  # ARX's Region.USA population


def rows(estimators: bool) -> list[tuple[str, Callable[[], Any], float]]:
    """(name, model factory, suppression limit) of every row; the k=5 rows are the baselines."""
    from sdckit.models import AverageRisk, KAnonymity, PopulationUniqueness, SampleUniqueness

    chosen: list[tuple[str, Callable[[], Any], float]] = []
    for limit in (0.0, 0.05):
        chosen += [
            (f"k5-{limit}", lambda: KAnonymity(5), limit),
            (f"avg005-{limit}", lambda: AverageRisk(0.05), limit),
            # ARX's relaxed variant: average, highest risk, records at risk (issue 38 item 1)
            (f"avgrel-005-02-005-{limit}", lambda: AverageRisk(0.05, 0.2, 0.05), limit),
            (f"avgrel-01-02-001-{limit}", lambda: AverageRisk(0.1, 0.2, 0.01), limit),
            (f"su001-{limit}", lambda: SampleUniqueness(0.01), limit),
            (f"su0001-{limit}", lambda: SampleUniqueness(0.001), limit),
            (f"pu-DANKAR-{limit}", lambda: PopulationUniqueness(0.001, population_size=USA), limit),
        ]
        if estimators:
            for name in ("pitman", "zayatz", "snb"):
                chosen.append(
                    (
                        f"pu-{name.upper()}-{limit}",
                        lambda name=name: PopulationUniqueness(0.001, name, population_size=USA),
                        limit,
                    )
                )
            chosen.append(
                (
                    f"pu-DANKARf-{limit}",
                    lambda: PopulationUniqueness(0.001, "dankar", sampling_fraction=0.01),
                    limit,
                )
            )
    return chosen


def read_arx(path: Path | None) -> dict[str, dict[str, Any]]:
    if path is None:
        return {}
    return {row["name"]: row for row in map(json.loads, path.read_text().splitlines()) if row.get("name")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--estimators",
        action="store_true",
        help="also Pitman, Zayatz and SNB (USA) and Dankar at a sampling fraction of 0.01",
    )
    parser.add_argument("--arx", type=Path, help="ARX's harness output (JSON lines) for these rows")
    arguments = parser.parse_args(argv)
    print_header(argv)

    from sdckit.anonymize.recoding import GeneralizeFigures, full_domain_generalization
    from sdckit.table import Table

    frame, hierarchies = load_adult_text()
    arx = read_arx(arguments.arx)
    columns = list(ADULT_COLUMNS)
    baseline: dict[float, float] = {}
    header = f"{'row':18} {'optimum':28} {'nodes':>6} {'cpu s':>8} {'/ k5':>7}"
    print(f"{header}   ARX: optimum, nodes, cpu s, ARX/ours")
    for name, make, limit in rows(arguments.estimators):
        best, release = float("inf"), None
        for _ in range(arguments.repeats):
            start = time.process_time()
            release = full_domain_generalization(
                Table.from_frame(frame),
                [make()],
                quasi_identifiers=columns,
                hierarchies=hierarchies,
                suppression_limit=limit,
                metric="loss",
            )
            best = min(best, time.process_time() - start)
        assert release is not None
        search = release.figures_as(GeneralizeFigures).search
        levels = [release.levels[c] for c in columns]
        baseline.setdefault(limit, best)
        ratio = best / baseline[limit]
        line = f"{name:18} {str(levels):28} {search['evaluations']:>6} {best:>8.3f} {ratio:>7.2f}"
        theirs = arx.get(name)
        if theirs is not None:
            cpu = float(theirs["cpu_seconds_median"])
            same = "" if theirs["levels"] == levels else "  DIFFERENT OPTIMUM"
            line += f"   {theirs['levels']}, {theirs['nodes_checked']}, {cpu:.3f}, {cpu / best:.1f}x{same}"
        print(line, flush=True)
    print(f"peak memory      {peak_rss_mib():.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
