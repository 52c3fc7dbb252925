"""Benchmark: what checking the suppressed group costs the generalization search (issue 36).

``generalize`` accepts a lattice node only if its suppressed records (all '*'), with a class
generalized to '*' everywhere, satisfy the models as one more class
(:mod:`sdckit.anonymize._suppressed_group`). This script times the search on Adult (ARX's extract,
30,162 records, ``../shared/data/adult``) with that check (``group``) and, in the same process, with
it switched off (``baseline``: ``Search.suppressed_group_holds`` answering True, the rule before
issue 36), alternating the two ``--repeats`` times after one untimed call each, and prints the
median CPU time (``time.process_time``) of each, their ratio, the nodes evaluated, and whether the
release differs (it may only where the baseline's suppressed group fails a model). Rows: k in
(2, 5, 10, 20, 50) at 5% suppression for k-anonymity (9 quasi-identifiers), k + distinct
3-diversity, k + recursive (2,3)-diversity and k + 0.2-closeness on occupation (8
quasi-identifiers); Loss. The peak resident memory of the process is printed at the end.

Usage::

    python benchmarks/bench_suppressed_group.py
    python benchmarks/bench_suppressed_group.py --repeats 7 --ks 5,10
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Any

from _common import ADULT_COLUMNS, adult_missing, load_adult_text, peak_rss_mib, print_header

SENSITIVE = "occupation"
LIMIT = 0.05
MODEL_SETS = ("k", "k+l", "k+rl", "k+t")


def models_of(model_set: str, k: int) -> list:
    from sdckit.models import DistinctLDiversity, KAnonymity, RecursiveCLDiversity, TCloseness

    extra = {
        "k": [],
        "k+l": [DistinctLDiversity(SENSITIVE, 3)],
        "k+rl": [RecursiveCLDiversity(SENSITIVE, 2.0, 3)],
        "k+t": [TCloseness(SENSITIVE, 0.2, "equal")],
    }[model_set]
    return [KAnonymity(k), *extra]


def one_row(table: Any, hierarchies: dict, model_set: str, k: int, repeats: int) -> dict[str, Any]:
    import sdckit.anonymize._lattice_search as lattice_search
    from sdckit.anonymize.recoding import GeneralizeFigures, full_domain_generalization

    checked = lattice_search.Search.suppressed_group_holds
    names = list(ADULT_COLUMNS) if model_set == "k" else [c for c in ADULT_COLUMNS if c != SENSITIVE]
    models = models_of(model_set, k)

    def run(group: bool) -> tuple[float, Any]:
        lattice_search.Search.suppressed_group_holds = (  # type: ignore[method-assign]
            checked if group else (lambda self, node, statistics: True)
        )
        try:
            start = time.process_time()
            release = full_domain_generalization(
                table, models, quasi_identifiers=names, hierarchies=hierarchies, suppression_limit=LIMIT
            )
            return time.process_time() - start, release
        finally:
            lattice_search.Search.suppressed_group_holds = checked  # type: ignore[method-assign]

    run(True)
    run(False)
    times: dict[bool, list[float]] = {True: [], False: []}
    releases = {}
    for _ in range(repeats):
        for group in (False, True):
            seconds, releases[group] = run(group)
            times[group].append(seconds)
    new, old = releases[True], releases[False]
    return {
        "models": model_set,
        "k": k,
        "group": statistics.median(times[True]),
        "baseline": statistics.median(times[False]),
        "evaluations": (
            new.figures_as(GeneralizeFigures).search["evaluations"],
            old.figures_as(GeneralizeFigures).search["evaluations"],
        ),
        "suppressed": (new.n_suppressed, old.n_suppressed),
        "same": new.levels == old.levels and new.n_suppressed == old.n_suppressed,
        "levels": (new.levels, old.levels),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="timed calls of each variant (default 5)")
    parser.add_argument("--ks", default="2,5,10,20,50", help="values of k (default 2,5,10,20,50)")
    parser.add_argument("--models", default=",".join(MODEL_SETS), help="model sets: k, k+l, k+rl, k+t")
    arguments = parser.parse_args(argv)
    print_header(argv)
    missing = adult_missing(ADULT_COLUMNS)
    if missing:
        print(missing)
        return 1
    from sdckit.table import Table

    frame, hierarchies = load_adult_text()
    table = Table.from_frame(frame)
    print(f"Adult: {table.n_records:,} records; suppression limit {LIMIT:.0%}; metric loss")
    header = f"{'models':6} {'k':>3} {'group s':>8} {'base s':>8} {'ratio':>6} {'nodes':>11}"
    print(f"{header} {'suppressed':>11}  release")
    ratios = []
    for model_set in arguments.models.split(","):
        for k in (int(text) for text in arguments.ks.split(",")):
            row = one_row(table, hierarchies, model_set, k, arguments.repeats)
            ratio = row["group"] / row["baseline"]
            ratios.append(ratio)
            nodes = "{} / {}".format(*row["evaluations"])
            suppressed = "{} / {}".format(*row["suppressed"])
            verdict = "same" if row["same"] else f"differs: {row['levels'][0]} (was {row['levels'][1]})"
            print(
                f"{model_set:6} {k:>3} {row['group']:8.3f} {row['baseline']:8.3f} {ratio:6.2f} "
                f"{nodes:>11} {suppressed:>11}  {verdict}"
            )
            sys.stdout.flush()
    print(f"ratio group / baseline: median {statistics.median(ratios):.3f}, max {max(ratios):.3f}")
    print(f"peak resident memory: {peak_rss_mib():.0f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
