"""Population uniqueness node by node: sdckit's estimates against ARX 3.9.2's for the same class sizes.

For each node (generalization levels of Adult's 9 quasi-identifiers, in ARX's order: sex, age, race,
marital-status, education, native-country, workclass, occupation, salary-class) the class sizes are
counted from ARX's hierarchy files directly (not through sdckit), then

* sdckit's Pitman, Zayatz and SNB population uniques (``sdckit.risk._risk_estimators``) with the CPU
  time of each, and SNB's K, (alpha, beta) and the residuals of its two equations there;
* ARX's for the same histogram, by benchmarks/arx/PopulationFigures.java (built into ``--build``):
  its numbers, the solver's parameters and residuals, and what its criterion decides.

Usage::

    javac -cp "$(cat /tmp/arx/classpath.txt)" -d /tmp/arx_sn benchmarks/arx/PopulationFigures.java
    python benchmarks/arx/population_nodes.py --population 317238626 \\
        0,3,0,0,1,1,1,0,0 0,4,1,1,3,2,0,2,0
    python benchmarks/arx/population_nodes.py --population 317238626 --curve 0.05 0,3,0,0,1,1,0,0,0

``--curve LIMIT``: at each node, ARX's figure after suppressing the j smallest classes for every j
(ARX leaves them out of the histogram), ARX's binary search over it (``suppressWhileNotFulfilledBinary``
with ``RiskBasedCriterion``'s abort beyond the budget) step by step, and sdckit's figure (the
suppressed records one more class) at the counts it visits.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import ADULT, ADULT_COLUMNS, load_adult_text  # noqa: E402

QIS = ADULT_COLUMNS


def class_sizes(frame: pl.DataFrame, levels: list[int]) -> np.ndarray:
    """The sizes of the equivalence classes of Adult generalized to ``levels`` (ARX's hierarchies)."""
    columns = []
    for qi, level in zip(QIS, levels, strict=True):
        rows = [line.split(";") for line in (ADULT / f"adult_hierarchy_{qi}.csv").read_text().splitlines()]
        mapping = {row[0]: row[level] for row in rows if row and row[0]}
        columns.append(frame.get_column(qi).replace_strict(mapping, return_dtype=pl.String).alias(qi))
    grouped = pl.DataFrame(columns).group_by(QIS).len()
    return np.sort(grouped.get_column("len").to_numpy().astype(np.int64))


def histogram_line(population: float, sizes: np.ndarray) -> str:
    values, counts = np.unique(sizes, return_counts=True)
    return f"{int(population)} " + " ".join(f"{v}:{c}" for v, c in zip(values, counts, strict=True))


def arx_figures(lines: list[str], build: Path) -> list[dict]:
    classpath = f"{build}:{Path('/tmp/arx/classpath.txt').read_text().strip()}"
    done = subprocess.run(
        ["java", "-cp", classpath, "org.deidentifier.arx.risk.PopulationFigures"],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        check=True,
    )
    return [json.loads(line) for line in done.stdout.splitlines()]


def ours(sizes: np.ndarray, population: float) -> dict:
    from sdckit.risk import _risk_estimators as estimators

    n = int(sizes.sum())
    result: dict = {}
    for name, function in (
        ("pitman", estimators.pitman_uniques),
        ("zayatz", estimators.zayatz_uniques),
        ("snb", estimators.snb_uniques),
    ):
        start = time.process_time()
        result[name] = float(function(sizes, n, population))
        result[f"{name}_cpu"] = time.process_time() - start
    k, alpha, beta = estimators.snb_parameters(sizes, n, population)
    result.update(snb_k=k, snb_alpha=alpha, snb_beta=beta)
    values, counts = np.unique(sizes, return_counts=True)
    c1, c2 = float(counts[values == 1].sum()), float(counts[values == 2].sum())
    equations = estimators.snb_equations(k, n / population, c1, c2)
    result["snb_residual"] = list(equations(alpha, beta))
    return result


def arx_binary_search(
    figures: list[float], sizes: np.ndarray, threshold: float, budget: float, uniques: list[int]
):
    """ARX's ``HashGroupifyDistribution.suppressWhileNotFulfilledBinary`` with the ABORT of
    ``RiskBasedCriterion.enforce``, over ``figures[j]``: ARX's criterion value after suppressing the j
    smallest classes (``sizes`` ascending). Returns the path [(j, fulfilled)] and the final j (None:
    aborted, the node fails)."""

    def fulfilled(j: int) -> bool:
        value = figures[j]
        return (0 < value <= threshold) or (value == 0 and uniques[j] == 0)

    suppressed = np.concatenate(([0], np.cumsum(sizes)))
    if fulfilled(0):
        return [(0, True)], 0
    low, high = 0, len(sizes) - 1
    mid = (low + high) // 2
    path = []
    state = "abort"
    while low <= high:
        ok = fulfilled(mid + 1)
        path.append((mid + 1, ok))
        if not ok and suppressed[mid + 1] > budget:
            state = "abort"
            break
        state = "ok" if ok else "no"
        if ok:
            high = mid - 1
        else:
            low = mid + 1
        mid = (low + high) // 2
    if state == "abort":
        return path, None
    final = mid + 1
    if not fulfilled(final) and mid + 1 < len(sizes):
        final += 1
    return path, final


def curve(
    frame: pl.DataFrame, node: list[int], population: float, threshold: float, limit: float, build: Path
) -> None:
    """ARX's criterion along the suppression of the j smallest classes at ``node`` (ARX leaves them
    out of the histogram) and its binary search; sdckit's figure (the suppressed records one more
    class) at the j ARX's search visits and at sdckit's own count."""
    from sdckit.models import PopulationUniqueness

    sizes = class_sizes(frame, node)
    lines = [
        histogram_line(population, sizes[j:]) if j < len(sizes) else f"{int(population)}"
        for j in range(len(sizes) + 1)
    ]
    theirs = arx_figures(lines[:-1], build) + [{"dankar_criterion": 0.0}]
    figures = [row["dankar_criterion"] / population for row in theirs]
    uniques = [int((sizes[j:] == 1).sum()) for j in range(len(sizes) + 1)]
    budget = limit * sizes.sum()
    path, final = arx_binary_search(figures, sizes, threshold, budget, uniques)
    model = PopulationUniqueness(threshold, "dankar", population_size=population)

    def ours_after(j: int) -> float:
        group = sizes[:j].sum()
        return model.figure(np.append(sizes[j:], group) if group else sizes)

    print(json.dumps({"node": node, "classes": len(sizes), "budget": budget}))
    for j, ok in path:
        print(
            json.dumps(
                {
                    "j": j,
                    "records": int(sizes[:j].sum()),
                    "arx_figure": figures[j],
                    "arx_fulfilled": ok,
                    "sdckit_figure": ours_after(j),
                }
            )
        )
    print(
        json.dumps({"arx_final": final, "arx_records": None if final is None else int(sizes[:final].sum())})
    )
    met = [j for j in range(len(sizes) + 1) if sizes[:j].sum() <= budget and (0 < figures[j] <= threshold)]
    print(json.dumps({"arx_fulfilled_within_budget": met[:5], "count": len(met)}))
    within = int(np.searchsorted(np.cumsum(sizes), budget, side="right"))
    for j in sorted({0, within // 4, within // 2, 3 * within // 4, within}):
        row = theirs[j]
        print(
            json.dumps(
                {
                    "j": j,
                    "records": int(sizes[:j].sum()),
                    "arx_figure": figures[j],
                    "arx_pitman": row.get("pitman"),
                    "arx_theta": row.get("pitman_theta"),
                    "arx_alpha": row.get("pitman_alpha"),
                    "sdckit_figure": ours_after(j),
                }
            )
        )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("nodes", nargs="+", help="levels, comma-separated, in ARX's attribute order")
    parser.add_argument("--population", type=float, help="the population size (else --fraction)")
    parser.add_argument("--fraction", type=float, help="sampling fraction: population = records / f")
    parser.add_argument("--build", type=Path, default=Path("/tmp/arx_sn"))
    parser.add_argument("--no-arx", action="store_true")
    parser.add_argument(
        "--curve", type=float, metavar="LIMIT", help="the suppression search at LIMIT (Dankar)"
    )
    parser.add_argument("--threshold", type=float, default=0.001)
    arguments = parser.parse_args(argv)
    if arguments.population is None and arguments.fraction is None:
        parser.error("give --population or --fraction")
    frame, _ = load_adult_text(())
    population = arguments.population or len(frame) / arguments.fraction
    nodes = [[int(v) for v in node.split(",")] for node in arguments.nodes]
    if arguments.curve is not None:
        for node in nodes:
            curve(frame, node, population, arguments.threshold, arguments.curve, arguments.build)
        return 0
    sizes = [class_sizes(frame, node) for node in nodes]
    lines = [histogram_line(population, s) for s in sizes]
    theirs = [{}] * len(nodes) if arguments.no_arx else arx_figures(lines, arguments.build)
    for node, s, arx in zip(nodes, sizes, theirs, strict=True):
        mine = ours(s, population)
        print(
            json.dumps(
                {"node": node, "classes": len(s), "uniques": int((s == 1).sum()), "sdckit": mine, "arx": arx}
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
