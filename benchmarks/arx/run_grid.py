"""Run the ARX side of ``bench_generalization.py``'s issue grid through the harness; write ``--arx`` JSON.

Each row of the grid (``bench_generalization.ARX_GRID_ROWS``: model set, k, suppression limit) becomes
one configuration of ``benchmarks/arx/Harness.java`` (Adult with ARX's hierarchies, Loss, the same
quasi-identifiers and sensitive attribute as the sdckit side), all in one JVM: ``--warm-passes``
untimed passes over every row first (the JIT compiler warms up on all of them), then per row
``--warmup`` untimed calls and ``--repeats`` timed calls (thread CPU of the calling thread). The output
file is what ``bench_generalization.py --arx FILE`` reads: ``{"rows": [{"models", "k", "limit", "cpu_seconds"
(median), "nodes" (transformations ARX checked), "levels", "loss", "suppressed", ...}]}``; with
``--output``, also ``cpu_seconds_output``: the same call timed with ``output=true`` (ARX's
``anonymize`` and then the optimum's output table built and every cell read, as sdckit's call builds
its release), each such configuration right after its row's in the same JVM.

Build ARX and the harness first (``benchmarks/arx/build.sh ARX_SOURCE /tmp/arx``). Usage::

    python benchmarks/arx/run_grid.py --build /tmp/arx --out /tmp/arx-grid.json
    python benchmarks/bench_generalization.py --no-large --repeats 5 --arx /tmp/arx-grid.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(BENCHMARKS))

from _common import ADULT  # noqa: E402
from bench_generalization import ARX_GRID_ROWS, COLUMNS, SENSITIVE, harness_models  # noqa: E402


def configuration(models: str, k: int, limit: float, repeats: int, warmup: int, output: bool = False) -> str:
    """The harness configuration of one grid row (``output``: the timed call also builds and reads
    the optimum's output table, as sdckit's call builds its release)."""
    quasi_identifiers = list(COLUMNS) if models == "k" else [c for c in COLUMNS if c != SENSITIVE]
    lines = [
        f"name={models}|{k}|{limit}",
        f"data={ADULT / 'adult.csv'}",
        *(f"hierarchy.{c}={ADULT / f'adult_hierarchy_{c}.csv'}" for c in quasi_identifiers),
        f"qi={','.join(quasi_identifiers)}",
        *([] if models == "k" else [f"sensitive={SENSITIVE}"]),
        *(f"model={model}" for model in harness_models(models, k)),
        f"suppression={limit}",
        "metric=loss",
        f"repeats={repeats}",
        f"warmup={warmup}",
        *(["output=true"] if output else []),
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", type=Path, default=Path("/tmp/arx"), help="build.sh's output directory")
    parser.add_argument("--out", type=Path, required=True, help="the JSON file to write")
    parser.add_argument("--repeats", type=int, default=5, help="timed calls per row (default 5)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed calls per row first (default 3)")
    parser.add_argument(
        "--warm-passes", type=int, default=1, help="untimed passes over all rows first (default 1)"
    )
    parser.add_argument("--java", default="java", help="the java executable")
    parser.add_argument("--only", help="run only the rows whose model set is in this comma list")
    parser.add_argument(
        "--output",
        action="store_true",
        help="time every row a second time with output=true (anonymize, then build and read the "
        "optimum's output table), in the same JVM: cpu_seconds_output",
    )
    arguments = parser.parse_args(argv)
    classpath_file = arguments.build / "classpath.txt"
    if not classpath_file.exists():
        build = f"benchmarks/arx/build.sh ARX_SOURCE {arguments.build}"
        raise SystemExit(f"{classpath_file} missing: run {build}")
    classpath = classpath_file.read_text().strip()
    rows = [row for row in ARX_GRID_ROWS if arguments.only is None or row[0] in arguments.only.split(",")]
    # A first pass over every row (one call each, untimed) warms the JVM's compiler on all of them.
    passes = [(1, 0)] * arguments.warm_passes + [(arguments.repeats, arguments.warmup)]
    # With --output, each row's configuration with output=true follows it in every pass.
    variants = (False, True) if arguments.output else (False,)
    paths = []
    try:
        for repeats, warmup in passes:
            configurations = (
                configuration(*row, repeats, warmup, output) for row in rows for output in variants
            )
            text = "\n---\n".join(configurations)
            with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as handle:
                handle.write(text + "\n")
                paths.append(handle.name)
        completed = subprocess.run(
            [arguments.java, "-cp", classpath, "Harness", *paths],
            capture_output=True,
            text=True,
            check=False,
        )
    finally:
        for path in paths:
            os.unlink(path)
    if completed.returncode != 0:
        sys.stderr.write(completed.stderr)
        raise SystemExit(f"the harness exited {completed.returncode}")
    timed = completed.stdout.splitlines()[len(rows) * len(variants) * arguments.warm_passes :]
    results = []
    lines = timed[:: len(variants)]
    with_output = timed[1 :: len(variants)] if arguments.output else [None] * len(rows)
    for line, extra, (models, k, limit) in zip(lines, with_output, rows, strict=True):
        output = json.loads(line)
        built = {} if extra is None else json.loads(extra)
        results.append(
            {
                "models": models,
                "k": k,
                "limit": limit,
                "cpu_seconds": output["cpu_seconds_median"],
                "cpu_seconds_all": output["cpu_seconds"],
                "nodes": output["nodes_checked"],
                "levels": output["levels"],
                "loss": output["loss"],
                "suppressed": output.get("suppressed"),
                "classes": output.get("classes"),
                **(
                    {
                        "cpu_seconds_output": built["cpu_seconds_median"],
                        "cpu_seconds_output_all": built["cpu_seconds"],
                    }
                    if built
                    else {}
                ),
            }
        )
        with_table = f"  with output {built['cpu_seconds_median'] * 1e3:8.1f} ms" if built else ""
        print(
            f"{models:<5} k={k:<3} {limit:>5.0%}  ARX {output['cpu_seconds_median'] * 1e3:8.1f} ms"
            f"{with_table}  "
            f"{output['nodes_checked']:>6,} nodes  levels {output['levels']}",
            flush=True,
        )
    load = " ".join(f"{value:.2f}" for value in os.getloadavg())
    arguments.out.write_text(json.dumps({"rows": results, "load_at_end": load}, indent=1) + "\n")
    print(f"wrote {arguments.out} ({len(results)} rows); load average {load}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
