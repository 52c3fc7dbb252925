"""Benchmark: SUDA2 (``sdckit risk suda``) against the brute-force search of SPEC §7.3.

Data: sdcMicro's ``testdata`` (/work/shared/data/sdcmicro/testdata.csv, 4,580 records) with its 9
key variables (urbrur, roof, walls, water, electcon, relat, sex, age, hhcivil), MSUs up to size 5
(``--max-size``) and of any size (9), and the same file resampled column by column to
``--records`` records (default 100,000; seed 1; each column drawn independently, so most records
become unique and the MSUs many).

* ours: :func:`sdckit.risk.suda.suda_scores` with the SUDA2 recursive search (numba);
* baseline: the same function with ``search="brute-force"``: every variable subset of size 1..5
  grouped by the counting kernel of :mod:`sdckit.frequency`, the unique records marked, minimality
  checked on the immediate subsets (vectorized numpy; the simple exact algorithm of SPEC §7.3).

Both run in their own subprocess (so that the peak resident memory is their own), timed as the best
of ``--repeats`` calls after an untimed warm-up on a few records, from the coded key matrix to the
scores (MSUs, SUDA, DIS-SUDA, contributions). The MSUs and scores of both must be identical.
Usage::

    python benchmarks/_evaluation_suda.py                 # testdata (max size 5 and 9), 100,000 resampled
    python benchmarks/_evaluation_suda.py --records 0     # testdata only
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from _common import peak_rss_mib, print_header

TESTDATA = Path("/work/shared/data/sdcmicro/testdata.csv")
KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex", "age", "hhcivil"]
SEARCHES = {"brute-force": "baseline (brute force over variable subsets)", "suda2": "ours (SUDA2 search)"}


def coded_keys(records: int, seed: int) -> tuple[np.ndarray, list[int]]:
    """The 9 key variables of testdata as codes (resampled column by column to ``records`` if > 0)."""
    import polars as pl

    from sdckit.frequency import encode

    frame = pl.read_csv(TESTDATA, columns=KEYS)
    encoding = encode(frame, KEYS)
    codes = np.column_stack(encoding.codes)
    if records:
        rng = np.random.default_rng(seed)
        codes = np.column_stack([codes[rng.integers(0, len(codes), records), j] for j in range(len(KEYS))])
    return np.ascontiguousarray(codes, dtype=np.int32), list(encoding.cardinalities)


def child(search: str, codes_path: Path, max_size: int, repeats: int, out: Path) -> None:
    """One search on the saved codes: timings, peak memory, and the result saved for comparison."""
    from sdckit.risk.suda import suda_scores

    data = np.load(codes_path)
    codes, cardinalities = data["codes"], data["cardinalities"].tolist()
    names = KEYS
    suda_scores(codes[:200], cardinalities, names, max_size=max_size, search=search)  # warm-up (compile)
    before = peak_rss_mib()
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        result = suda_scores(codes, cardinalities, names, max_size=max_size, search=search)
        times.append(time.perf_counter() - started)
    np.savez(out, records=result.msu_records, masks=result.msu_masks, suda=result.suda, dis=result.dis)
    print(
        json.dumps(
            {
                "seconds": min(times),
                "peak_mib": peak_rss_mib(),
                "peak_before_mib": before,
                "msus": int(len(result.msu_records)),
                "records_with_msu": int(np.count_nonzero(result.msu_count)),
                "uniques": result.uniques,
            }
        )
    )


def compare(label: str, codes: np.ndarray, cardinalities: list[int], max_size: int, repeats: int) -> bool:
    with tempfile.TemporaryDirectory() as directory:
        codes_path = Path(directory) / "codes.npz"
        np.savez(codes_path, codes=codes, cardinalities=np.asarray(cardinalities))
        print(f"\n{label}: {len(codes):,} records, {codes.shape[1]} keys, MSUs up to size {max_size}")
        figures = {}
        for search, description in SEARCHES.items():
            out = Path(directory) / f"{search}.npz"
            command = [
                sys.executable,
                __file__,
                "--child",
                search,
                "--codes",
                str(codes_path),
                "--max-size",
                str(max_size),
                "--repeats",
                str(repeats),
                "--out",
                str(out),
            ]
            finished = subprocess.run(command, capture_output=True, text=True, check=False)
            if finished.returncode != 0:
                print(finished.stdout + finished.stderr)
                return False
            figures[search] = json.loads(finished.stdout.strip().splitlines()[-1])
            shown = figures[search]
            print(
                f"  {description:<46} {shown['seconds']:8.3f} s   peak {shown['peak_mib']:7.1f} MiB "
                f"(before the runs {shown['peak_before_mib']:.1f})"
            )
        results = [np.load(Path(directory) / f"{search}.npz") for search in SEARCHES]
        keys = ("records", "masks", "suda", "dis")
        same = all(np.array_equal(results[0][key], results[1][key]) for key in keys)
        ours, baseline = figures["suda2"], figures["brute-force"]
        print(
            f"  MSUs {ours['msus']:,} on {ours['records_with_msu']:,} records ({ours['uniques']:,} sample "
            f"uniques); identical MSUs and scores: {'yes' if same else 'NO'}"
        )
        print(f"  ratio baseline / ours: {baseline['seconds'] / ours['seconds']:.1f}x")
        return same


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000, help="Resampled file size (0: skip it).")
    parser.add_argument("--max-size", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--child", choices=list(SEARCHES), help=argparse.SUPPRESS)
    parser.add_argument("--codes", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child, args.codes, args.max_size, args.repeats, args.out)
        return 0
    print_header(argv)
    if not TESTDATA.is_file():
        print(f"SUDA2 benchmark skipped: {TESTDATA} is not available")
        return 0
    codes, cardinalities = coded_keys(0, args.seed)
    ok = compare("testdata", codes, cardinalities, args.max_size, args.repeats)
    if args.max_size < len(KEYS):
        ok = compare("testdata, every subset", codes, cardinalities, len(KEYS), args.repeats) and ok
    if args.records:
        codes, cardinalities = coded_keys(args.records, args.seed)
        label = f"testdata resampled column by column (seed {args.seed})"
        ok = compare(label, codes, cardinalities, args.max_size, args.repeats) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
