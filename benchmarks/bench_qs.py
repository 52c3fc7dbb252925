"""Benchmark of the two-phase QS anonymization (Shi, Xiong & Fung, 2010).

    .venv/bin/python benchmarks/bench_qs.py [--skip-large]

The experiment's data (:func:`sdckit.experiments.quasi_sensitive.synthesize_experiment_data`: Adult's 8
QIs, 9 terms per record, 3,000 labels with Poisson(100) item sets over 300 terms), with adaptive
tailset reordering against the baseline DFS measured in the same run on the same data:

* 3,000 records, QS (1,30)-diversity (the paper's defaults c = 1, l = 30), k = 5, the paper's bound of
  10 s for the whole of phase 2;
* 3,000 records, QS 0.4-closeness (the paper's default t), k = 5, 1 s per group;
* 300,000 records (Adult resampled with replacement, same knowledge size), QS 0.4-closeness, k = 5,
  1 s per group: target phase 2 under 60 s.

Printed per run: phase 1 / phase 2 seconds, groups searched, proven optimal, mean T of the searched
groups, peak RSS; per pair, the ratios adaptive / baseline of the mean time to the first solution and
of the final mean cost. ``run(print_fn)`` returns the figures as a dict.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable
from typing import Any

from _common import peak_rss_mib
from sdckit.anonymize.quasi_sensitive import QuasiSensitiveFigures, quasi_sensitive_anonymize
from sdckit.experiments.data import adult_directory
from sdckit.experiments.quasi_sensitive import synthesize_experiment_data
from sdckit.models.quasi_sensitive import QSCLDiversity, QSTCloseness

TARGET_SECONDS = 60.0


def _one(table, knowledge, model, strategy: str, time_limit, total_time_limit) -> dict[str, Any]:
    started = time.perf_counter()
    release = quasi_sensitive_anonymize(
        table,
        set_column="terms",
        knowledge=knowledge,
        k=5,
        model=model,
        strategy=strategy,
        time_limit=time_limit,
        total_time_limit=total_time_limit,
    )
    search = release.figures_as(QuasiSensitiveFigures).as_dict()
    first = [s for s in search["per_group"]["first_solution_seconds"] if not math.isnan(s)]
    first_cost = [c for c in search["per_group"]["first_solution_cost"] if not math.isnan(c)]
    return {
        "strategy": strategy,
        "seconds": time.perf_counter() - started,
        "phase1_seconds": search["phase1_seconds"],
        "phase2_seconds": search["phase2_seconds"],
        "groups": search["groups"],
        "searched": search["searched"],
        "proven_optimal": search["proven_optimal"],
        "violating_after": search["violating_after"],
        "mean_cost": search["removal_cost_mean"],
        "mean_first_cost": sum(first_cost) / len(first_cost) if first_cost else math.nan,
        "mean_first_seconds": sum(first) / len(first) if first else math.nan,
        "nodes": search["nodes_visited"],
        "generalization_ncp": search["generalization_ncp"],
        "peak_rss_mib": peak_rss_mib(),
    }


def _pair(label, table, knowledge, model, time_limit, total_time_limit, print_fn) -> dict[str, Any]:
    bound = f"{total_time_limit:g} s for phase 2" if total_time_limit else f"{time_limit:g} s per group"
    print_fn(f"\n{label}: {table.n_records:,} records, {model.name}, k = 5, {bound}")
    runs = {}
    for strategy in ("adaptive", "baseline"):
        r = _one(table, knowledge, model, strategy, time_limit, total_time_limit)
        runs[strategy] = r
        print_fn(
            f"  {strategy:9s} phase 1 {r['phase1_seconds']:6.2f} s  phase 2 {r['phase2_seconds']:6.2f} s  "
            f"groups {r['groups']:,}  searched {r['searched']:,}  proven optimal {r['proven_optimal']:,}  "
            f"violating after {r['violating_after']}  mean T {r['mean_cost']:.4f} "
            f"(first {r['mean_first_cost']:.4f} after {r['mean_first_seconds'] * 1e3:.2f} ms)  "
            f"nodes {r['nodes']:,}  NCP {r['generalization_ncp']:.4f}  peak RSS {r['peak_rss_mib']:.0f} MiB"
        )
    a, b = runs["adaptive"], runs["baseline"]

    def ratio(x: float, y: float) -> float:
        return x / y if y > 0 else (1.0 if x == y else math.inf)

    ratios = {
        "first_solution_seconds": ratio(a["mean_first_seconds"], b["mean_first_seconds"]),
        "final_cost": ratio(a["mean_cost"], b["mean_cost"]),
    }
    print_fn(
        f"  adaptive / baseline: time to first solution {ratios['first_solution_seconds']:.2f}, "
        f"final mean cost {ratios['final_cost']:.2f}"
    )
    return {"runs": runs, "ratios": ratios}


def run(print_fn: Callable[[str], None] = print, large: bool = True) -> dict[str, Any]:
    if not (adult_directory() / "adult.csv").is_file():
        print_fn(f"skipped: {adult_directory() / 'adult.csv'} is not available")
        return {"skipped": True}
    figures: dict[str, Any] = {}
    started = time.perf_counter()
    table, knowledge = synthesize_experiment_data(3000, seed=0)
    print_fn(f"experiment data, 3,000 records: {time.perf_counter() - started:.2f} s")
    figures["small_cl"] = _pair(
        "paper defaults", table, knowledge, QSCLDiversity(1.0, 30), None, 10.0, print_fn
    )
    figures["small_t"] = _pair("paper defaults", table, knowledge, QSTCloseness(0.4), 1.0, None, print_fn)
    if large:
        started = time.perf_counter()
        table, knowledge = synthesize_experiment_data(300_000, seed=0)
        print_fn(f"\nexperiment data, 300,000 records: {time.perf_counter() - started:.2f} s")
        pair = _pair("scaled", table, knowledge, QSTCloseness(0.4), 1.0, None, print_fn)
        figures["large_t"] = pair
        phase2 = pair["runs"]["adaptive"]["phase2_seconds"]
        met = phase2 < TARGET_SECONDS
        print_fn(
            f"  target: phase 2 under {TARGET_SECONDS:.0f} s with 1 s per group: "
            f"{'met' if met else 'MISSED'} ({phase2:.2f} s)"
        )
        figures["target_met"] = met
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-large", action="store_true", help="only the 3,000-record runs")
    arguments = parser.parse_args()
    run(large=not arguments.skip_large)


if __name__ == "__main__":
    main()
