"""Benchmark: the search objectives of issue 38 item 6 (gs-factor, attribute weights, classification)
on Adult, against the plain Loss search in the same process.

Adult (ARX's extract, ``../shared/data/adult``, 30,162 records) with ARX's hierarchies; k = 5,
suppression limit ``--limit`` (default 5%). Rows: the eight quasi-identifiers (every column but
occupation) under Loss with gs-factor 0, 0.25, 0.75, 0.9 and 1, with attribute weights (age 2, sex
0.5; education 10), weighted NCP; and, on the seven quasi-identifiers other than salary-class, Loss
against the classification metric for salary-class (a response variable, not generalized; both rows
of that block are compared with the seven-attribute Loss row). Each row is run once untimed, then
timed ``--repeats`` times; the best time is reported with the nodes the search evaluated
(``search["evaluations"]``) and the optimum, and as a ratio over the plain Loss search of the same
quasi-identifiers (above 1: slower than Loss). The classification metric is not monotone: its search
weighs every node the models let through, pruned by its lower bound (which ARX does not have).
The peak resident memory of the process is printed at the end.

Usage::

    python benchmarks/bench_metric_options.py
    python benchmarks/bench_metric_options.py --repeats 5 --limit 0
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from _common import ADULT_COLUMNS, adult_missing, best_time, load_adult_text, peak_rss_mib, print_header

EIGHT = [c for c in ADULT_COLUMNS if c != "occupation"]
SEVEN = [c for c in EIGHT if c != "salary-class"]

ROWS: list[tuple[str, list[str], dict[str, Any]]] = [
    ("loss", EIGHT, {}),
    ("loss gs 0", EIGHT, {"gs_factor": 0.0}),
    ("loss gs 0.25", EIGHT, {"gs_factor": 0.25}),
    ("loss gs 0.75", EIGHT, {"gs_factor": 0.75}),
    ("loss gs 0.9", EIGHT, {"gs_factor": 0.9}),
    ("loss gs 1", EIGHT, {"gs_factor": 1.0}),
    ("loss age 2 sex 0.5", EIGHT, {"attribute_weights": {"age": 2.0, "sex": 0.5}}),
    ("loss education 10", EIGHT, {"attribute_weights": {"education": 10.0}}),
    ("ncp education 10", EIGHT, {"metric": "ncp", "attribute_weights": {"education": 10.0}}),
    ("loss (7 QIs)", SEVEN, {}),
    ("classification (7 QIs)", SEVEN, {"metric": "classification", "target": "salary-class"}),
    (
        "classification gs 0.25",
        SEVEN,
        {"metric": "classification", "target": "salary-class", "gs_factor": 0.25},
    ),
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--limit", type=float, default=0.05, help="suppression limit (default 0.05)")
    args = parser.parse_args(argv)
    missing = adult_missing(ADULT_COLUMNS)
    if missing:
        print(missing, file=sys.stderr)
        return 1
    print_header(argv)
    from sdckit.anonymize.recoding import GeneralizeFigures, full_domain_generalization
    from sdckit.models import KAnonymity
    from sdckit.table import Table

    frame, hierarchies = load_adult_text(EIGHT)
    table = Table.from_frame(frame)

    def run(names: list[str], options: dict[str, Any]) -> Any:
        return full_domain_generalization(
            table,
            [KAnonymity(5)],
            quasi_identifiers=names,
            hierarchies={c: hierarchies[c] for c in names},
            suppression_limit=args.limit,
            **options,
        )

    print(f"Adult, k=5, suppression limit {args.limit:g}; best of {args.repeats} after one untimed run")
    print(f"{'row':<26} {'nodes':>6} {'seconds':>8} {'x loss':>7}  {'optimum':<24} value")
    baseline: dict[int, float] = {}
    for label, names, options in ROWS:
        run(names, options)  # untimed: compiled kernels loaded, caches warm
        seconds, release = best_time(lambda names=names, options=options: run(names, options), args.repeats)
        search = release.figures_as(GeneralizeFigures).search
        baseline.setdefault(len(names), seconds)
        levels = ",".join(str(release.levels[c]) for c in names)
        print(
            f"{label:<26} {search['evaluations']:>6} {seconds:>8.3f} {seconds / baseline[len(names)]:>7.2f}  "
            f"{levels:<24} {search['metric_value']:.6g}"
        )
    print(f"peak resident memory {peak_rss_mib():.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
