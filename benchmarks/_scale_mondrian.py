"""Benchmark: Mondrian over partitions (``sdckit.scale.mondrian``) against the in-memory Mondrian.

Data: ``examples.generate`` student records (1,000,000; ``--quick`` 100,000), written as a Parquet
directory of 10 files; quasi-identifiers birth_year, entry_school_year (numeric), gender,
limited_english, gifted (categorical), parish (categorical with an order hierarchy of fanout 4);
sensitive special_education; 5-anonymity and distinct 2-diversity.

1. Baseline, in memory: read the whole directory (``Config.read``), ``mondrian``, write the release as
   one Parquet file.
2. Fragmented, local engine: ``run_mondrian`` with partitions of ``--chunk-rows`` records (default
   100,000) and the default number of fragments (one per partition's worth of records), reading and
   writing Parquet parts.
3. Fragmented, a 2-worker Dask ``LocalCluster`` (``--dask``; its start is not timed).

Each run is its own subprocess, so each peak resident memory is its own (for Dask, the peak of the
process that plans the run; the workers' peaks are reported by the cluster). Times are wall clock,
reading and writing included; ratio = fragmented / in memory (> 1: slower). Equivalence classes and
NCP show how the fragmented release differs.

Usage: ``python benchmarks/_scale_mondrian.py [--quick] [--records N] [--chunk-rows N] [--dask]``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _common import peak_rss_mib, print_header  # noqa: E402

CONFIG = {
    "attributes": {
        "student_id": {"role": "identifier"},
        "birth_year": {"role": "quasi-identifier", "kind": "numeric"},
        "gender": {"role": "quasi-identifier", "kind": "categorical"},
        "parish": {
            "role": "quasi-identifier",
            "kind": "categorical",
            "hierarchy": {"order": True, "fanout": 4},
        },
        "entry_school_year": {"role": "quasi-identifier", "kind": "numeric"},
        "limited_english": {"role": "quasi-identifier", "kind": "categorical"},
        "gifted": {"role": "quasi-identifier", "kind": "categorical"},
        "special_education": {"role": "sensitive", "kind": "categorical"},
    }
}


def _run(kind: str, data: Path, work: Path, chunk_rows: int) -> dict:
    """One timed run in this process (called in a subprocess)."""
    from sdckit.anonymize.mondrian import MondrianParams, mondrian
    from sdckit.config import parse_config

    config = parse_config(CONFIG)
    params = MondrianParams(k=5, l=2)
    start = time.perf_counter()
    if kind == "memory":
        from sdckit.anonymize.base import quasi_identifiers
        from sdckit.utility import release_ncp

        table = config.read(data)
        release = mondrian(table, params.privacy_models(table), quasi_identifiers=quasi_identifiers(table))
        release.table.data.write_parquet(work / "release.parquet")
        figures = {"equivalence_classes": release.n_classes, "ncp": release_ncp(release), "fragments": 1}
    else:
        from sdckit.scale.dataset import open_dataset
        from sdckit.scale.engine import DaskEngine, LocalEngine
        from sdckit.scale.mondrian import run_mondrian

        engine = LocalEngine()
        if kind == "dask":
            engine = DaskEngine(workers=2)
            start = time.perf_counter()
        with engine:
            result = run_mondrian(open_dataset(data, chunk_rows=chunk_rows), config, params, engine, work)
        figures = {
            "equivalence_classes": result.figures["equivalence_classes"],
            "ncp": result.figures["metrics"]["ncp"],
            "fragments": result.figures["fragments"],
        }
    return {"seconds": time.perf_counter() - start, "peak_mib": peak_rss_mib(), **figures}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100,000 records")
    parser.add_argument("--records", type=int, default=None)
    parser.add_argument("--chunk-rows", type=int, default=100_000)
    parser.add_argument("--dask", action="store_true", help="also on a 2-worker Dask LocalCluster")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        kind, data, work = args.child
        print(json.dumps(_run(kind, Path(data), Path(work), args.chunk_rows)))
        return 0
    records = args.records or (100_000 if args.quick else 1_000_000)
    print_header(argv, packages=("polars", "numpy", "distributed"))
    from examples.generate import generate

    root = Path(tempfile.mkdtemp(prefix="sdckit-bench-mondrian-"))
    try:
        data = root / "students"
        data.mkdir()
        frame = generate(records, seed=1)
        step = -(-records // 10)
        for i, start in enumerate(range(0, records, step)):
            frame.slice(start, step).write_parquet(data / f"part-{i:02d}.parquet")
        del frame
        print(
            f"data             {records:,} generated records, 10 Parquet files; 6 quasi-identifiers, "
            f"k = 5, distinct 2-diversity; partitions of {args.chunk_rows:,} records"
        )
        kinds = ["memory", "local"] + (["dask"] if args.dask else [])
        results = {}
        for kind in kinds:
            work = root / kind
            work.mkdir()
            command = [
                sys.executable,
                __file__,
                "--chunk-rows",
                str(args.chunk_rows),
                "--child",
                kind,
                str(data),
            ]
            output = subprocess.run([*command, str(work)], check=True, capture_output=True, text=True).stdout
            results[kind] = json.loads(output.strip().splitlines()[-1])
        base = results["memory"]["seconds"]
        labels = {"memory": "in memory", "local": "fragmented, local", "dask": "fragmented, dask x2"}
        print(
            f"{'run':<22}{'seconds':>9}{'ratio':>8}{'peak MiB':>10}{'fragments':>11}{'classes':>10}{'NCP':>9}"
        )
        for kind, result in results.items():
            print(
                f"{labels[kind]:<22}{result['seconds']:>9.2f}{result['seconds'] / base:>8.2f}"
                f"{result['peak_mib']:>10.0f}{result['fragments']:>11,}{result['equivalence_classes']:>10,}"
                f"{result['ncp']:>9.4f}"
            )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
