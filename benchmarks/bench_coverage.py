"""Benchmark: the combined risk D(r) of a release as an adversary sees it (coverage matching).

Generates the example data (examples/generate.py; 1,000,000 records by default) with
examples/example.yaml, prepares it as the targeted-suppression experiment does (missing
quasi-identifier values as the category ``(missing)``, a default hierarchy per quasi-identifier) and
makes two 5-anonymous releases:

* Mondrian (strict, k = 5) without hierarchies: numeric intervals (``1995-1997``) and value sets
  (``{Asian,Black}``);
* full-domain generalization (k = 5, at most 5% of the records suppressed to ``*``, Loss) with the
  hierarchies: hierarchy nodes.

For each, D(r) of every original record against the release with coverage matching is computed by

* ours: ``combined_risk(release, original=..., hierarchies=...)`` (tries of the distinct patterns,
  :func:`sdckit.frequency.coverage_pattern_sizes`);
* a baseline, the straightforward implementation: for each known set, every distinct released
  pattern is expanded to the original value combinations it covers (one polars explode per
  attribute, labels read by its own parser), the expansion summed per combination and joined to
  the original records (one join per pattern of missing values, nulls being wildcards).

Each run happens in its own subprocess (its own peak resident memory); the risk computation alone is
timed, after an untimed warm-up on a few records. Usage::

    python benchmarks/bench_coverage.py            # 1,000,000 records
    python benchmarks/bench_coverage.py --quick    # 100,000 records
"""

from __future__ import annotations

import argparse
import json
import math
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

from _common import peak_rss_mib, print_header

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "examples" / "example.yaml"
RECORDS = 1_000_000
QUICK_RECORDS = 100_000
WARM_UP_RECORDS = 1_000
RELEASES = ("mondrian", "generalize")
RUNS = ("ours", "baseline")


def make_releases(records: int, seed: int, workdir: Path) -> dict[str, float]:
    """The original (prepared) table, both releases and the hierarchies, pickled into ``workdir``."""
    import dataclasses

    sys.path.insert(0, str(ROOT))
    from examples.generate import generate

    from sdckit.anonymize.mondrian import mondrian
    from sdckit.anonymize.recoding import full_domain_generalization
    from sdckit.config import load_config
    from sdckit.experiments.targeted_suppression import generalization_view
    from sdckit.models import KAnonymity
    from sdckit.table import Role, Schema, Table

    table = load_config(CONFIG).read(generate(records, seed))
    quasi = tuple(a.name for a in table.schema.with_role(Role.QUASI_IDENTIFIER))
    view, hierarchies = generalization_view(table)
    seconds = {}
    start = time.perf_counter()
    plain = Schema(tuple(dataclasses.replace(a, hierarchy=None) for a in view.schema.attributes))
    released = mondrian(Table(view.data, plain), [KAnonymity(5)], quasi_identifiers=quasi)
    seconds["mondrian"] = time.perf_counter() - start
    start = time.perf_counter()
    generalized = full_domain_generalization(
        view, [KAnonymity(5)], quasi_identifiers=quasi, hierarchies=hierarchies, suppression_limit=0.05,
        max_nodes=20_000,
    )  # fmt: skip
    seconds["generalize"] = time.perf_counter() - start
    for name, release, used in (("mondrian", released, {}), ("generalize", generalized, hierarchies)):
        with open(workdir / f"{name}.pickle", "wb") as handle:
            pickle.dump((Table(view.data, plain), release.table, used), handle)
        seconds[f"{name} suppressed"] = release.n_suppressed
        seconds[f"{name} classes"] = int(len(release.class_sizes()))
    return seconds


# The baseline ---------------------------------------------------------------------------------------


def covered_values(labels: list[str | None], domain: list[str], hierarchy, numeric: bool) -> list[list[str]]:
    """The original values (text) each label covers: a value, '*', a null (wildcard), a hierarchy
    node, '{a,b}', 'low-high'."""
    nodes: dict[str, set[str]] = {}
    if hierarchy is not None:
        for level in range(1, hierarchy.n_levels):
            for leaf, node in enumerate(np.asarray(hierarchy.codes)[:, level]):
                nodes.setdefault(hierarchy.labels[level][node], set()).add(hierarchy.labels[0][leaf])
    known = set(domain)
    result = []
    for label in labels:
        if label is None or label == "*":
            result.append(list(domain))
        elif label in known:
            result.append([label])
        elif label in nodes:
            result.append(sorted(nodes[label] & known))
        elif label.startswith("{"):
            result.append([v for v in label[1:-1].split(",") if v in known])
        elif numeric:  # Mondrian's 'low-high' (the example data has no negative numbers)
            low, high = (float(x) for x in label.split("-"))
            result.append([v for v in domain if low <= float(v) <= high])
        else:
            raise ValueError(f"baseline cannot read label {label!r}")
    return result


def baseline_risk(original, release, hierarchies, alpha: float, epsilon: float) -> np.ndarray:
    from sdckit.risk.combined import _measured_attributes, enumerate_known_sets

    names = _measured_attributes(release, epsilon, None)
    schema = release.schema
    candidates = [n for n in names if schema[n].public_probability > epsilon]
    known_sets = enumerate_known_sets([schema[n].public_probability for n in candidates], epsilon)
    n = original.n_records
    target = original.data.select(pl.col(c).cast(pl.String) for c in candidates)
    released = release.data.select(pl.col(c).cast(pl.String) for c in candidates)
    covers = {}
    for c in candidates:
        domain = target.get_column(c).drop_nulls().unique().sort().to_list()
        labels = released.get_column(c).unique().to_list()
        numeric = original.data.schema[c].is_numeric()
        covers[c] = pl.DataFrame(
            {c: labels, f"{c} covers": covered_values(labels, domain, hierarchies.get(c), numeric)},
            schema={c: pl.String, f"{c} covers": pl.List(pl.String)},
        )
    terms = {}
    for name in names:
        attribute = schema[name]
        if attribute.sensitivity > 0:
            weights = attribute.weights_of_categories(release.data.get_column(name).cast(pl.String))
            terms[name] = attribute.sensitivity * np.nan_to_num(weights)
    total = sum(terms.values()) if terms else np.zeros(n)
    risk = np.zeros(n)
    for known in known_sets:
        ks = [candidates[j] for j in known]
        pk = math.prod(schema[c].public_probability for c in ks)
        consequence = total - sum((terms[c] for c in ks if c in terms), np.zeros(n))
        if not ks:
            risk += pk * alpha * consequence / release.n_records
            continue
        expanded = released.select(ks).group_by(ks).len("count")
        for c in ks:
            expanded = expanded.join(covers[c], on=c, how="left", nulls_equal=True)
            expanded = expanded.drop(c).rename({f"{c} covers": c}).explode(c)
        expanded = expanded.group_by(ks).agg(pl.col("count").sum())
        count = np.zeros(n)
        # One join per pattern of missing values: a missing original value matches every label.
        masks = target.select(
            pl.concat_str([pl.col(c).is_null().cast(pl.UInt8).cast(pl.String) for c in ks]).alias("m")
        )
        indexed = target.select(ks).with_columns(masks.to_series(), pl.int_range(n).alias("row"))
        for mask in indexed.get_column("m").unique().to_list():
            on = [c for c, bit in zip(ks, mask, strict=True) if bit == "0"]
            rows = indexed.filter(pl.col("m") == mask)
            if on:
                sums = expanded.group_by(on).agg(pl.col("count").sum())
                joined = rows.join(sums, on=on, how="left").fill_null(0)
            else:
                joined = rows.with_columns(pl.lit(expanded.get_column("count").sum()).alias("count"))
            count[joined.get_column("row").to_numpy()] = joined.get_column("count").to_numpy()
        inverse = np.divide(1.0, count, out=np.zeros(n), where=count > 0)
        risk += pk * alpha * consequence * inverse
    return risk


def _status_mib(field: str) -> float | None:
    """A memory figure of /proc/self/status (Linux), in MiB."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def _reset_peak() -> float | None:
    """Reset the peak resident memory (Linux: /proc/self/clear_refs), so that the peak measured after
    the computation is the computation's, not the loading's; returns the memory resident before."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return None
    return _status_mib("VmRSS")


# One run per subprocess -----------------------------------------------------------------------------


def child(run: str, release_name: str, workdir: Path) -> None:
    from sdckit.risk.combined import combined_risk
    from sdckit.table import Table

    with open(workdir / f"{release_name}.pickle", "rb") as handle:
        original, release, hierarchies = pickle.load(handle)

    def compute(original, release):
        if run == "ours":
            return combined_risk(release, original=original, hierarchies=hierarchies).risk
        return baseline_risk(original, release, hierarchies, 100.0, 0.01)

    small = [Table(t.data.head(WARM_UP_RECORDS), t.schema) for t in (original, release)]
    compute(*small)
    resident = _reset_peak()
    start = time.perf_counter()
    risk = compute(original, release)
    seconds = time.perf_counter() - start
    np.save(workdir / f"{run}-{release_name}.npy", risk)
    computing = _status_mib("VmHWM") if resident is not None else None
    figures = {
        "seconds": seconds,
        "peak_mib": peak_rss_mib(),
        "resident_mib": resident,
        "compute_mib": computing,
    }
    (workdir / f"{run}-{release_name}.json").write_text(json.dumps(figures))


def run_child(run: str, release_name: str, workdir: Path) -> tuple[dict, np.ndarray] | None:
    command = [sys.executable, str(Path(__file__).resolve()), "--child", run, release_name, str(workdir)]
    completed = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if completed.returncode != 0:
        print(f"  {run} on {release_name} failed:\n{completed.stderr.strip()[-2000:]}", file=sys.stderr)
        return None
    figures = json.loads((workdir / f"{run}-{release_name}.json").read_text())
    return figures, np.load(workdir / f"{run}-{release_name}.npy")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=RECORDS, help="records (default 1,000,000)")
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_RECORDS:,} records")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", choices=RELEASES, action="append", help="only this release (repeatable)")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    arguments = parser.parse_args(argv)
    if arguments.child:
        run, release_name, workdir = arguments.child
        child(run, release_name, Path(workdir))
        return 0
    print_header(argv)
    records = QUICK_RECORDS if arguments.quick else arguments.records
    releases = [r for r in RELEASES if r in (arguments.only or RELEASES)]
    status = 0
    with tempfile.TemporaryDirectory(prefix="bench_coverage.") as directory:
        workdir = Path(directory)
        made = make_releases(records, arguments.seed, workdir)
        print(f"records          {records:,} (seed {arguments.seed}), {CONFIG.relative_to(ROOT)}")
        for name in releases:
            print(
                f"release          {name}: made in {made[name]:.1f} s, {made[name + ' classes']:,} classes, "
                f"{made[name + ' suppressed']:,} records suppressed"
            )
        print()
        columns = f"{'time (s)':>9} {'ratio':>7} {'data (MiB)':>10} {'peak (MiB)':>10} {'above 0.01':>11}"
        print(f"{'release':<11} {'run':<9} {columns}")
        for name in releases:
            outcomes = {run: run_child(run, name, workdir) for run in RUNS}
            if any(outcome is None for outcome in outcomes.values()):
                status = 1
                continue
            base = outcomes["baseline"][0]["seconds"]
            for run, (figures, risk) in outcomes.items():
                resident = figures["resident_mib"] or float("nan")
                peak = figures["compute_mib"] or figures["peak_mib"]
                above = int(np.count_nonzero(risk > 0.01))
                print(
                    f"{name:<11} {run:<9} {figures['seconds']:>9.2f} {base / figures['seconds']:>6.1f}x "
                    f"{resident:>10.0f} {peak:>10.0f} {above:>11,}"
                )
            difference = float(np.max(np.abs(outcomes["ours"][1] - outcomes["baseline"][1])))
            agree = bool(np.allclose(outcomes["ours"][1], outcomes["baseline"][1], rtol=1e-9, atol=1e-12))
            verdict = "yes" if agree else "NO"
            print(f"{name:<11} ours vs baseline: max |difference| {difference:.3g}, allclose {verdict}")
            status = status or (0 if agree else 1)
    print("\nratio: the baseline's time over the run's (the baseline is 1.0x); both measured in this run.")
    print("data: resident before the computation (original and release loaded); peak: the highest resident")
    print("memory during the computation (Linux; else the process's peak).")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
