"""What every benchmark script shares: where Adult is, peak memory, and the header of its report."""

from __future__ import annotations

import os
import platform
import resource
import shlex
import sys
from collections.abc import Iterable, Sequence
from importlib import metadata
from pathlib import Path

#: The Adult data of ../shared/data (never copied into the repository).
ADULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "adult"
#: Its columns, in the file's order; each has ARX's hierarchy ``adult_hierarchy_<column>.csv``.
ADULT_COLUMNS = (
    "sex",
    "age",
    "race",
    "marital-status",
    "education",
    "native-country",
    "workclass",
    "occupation",
    "salary-class",
)


def load_adult_text(hierarchies: Iterable[str] = ADULT_COLUMNS):
    """The Adult records with every column as text (as read: several chunks a column), and ARX's
    hierarchy of each of ``hierarchies``; exits naming the file when its columns are not Adult's."""
    import polars as pl

    from sdckit.hierarchy import Hierarchy

    frame = pl.read_csv(ADULT / "adult.csv", separator=";", infer_schema=False)
    if tuple(frame.columns) != ADULT_COLUMNS:
        raise SystemExit(f"unexpected columns in {ADULT / 'adult.csv'}: {frame.columns}")
    return frame, {c: Hierarchy.from_csv(ADULT / f"adult_hierarchy_{c}.csv", c) for c in hierarchies}


def best_time(task, repeats: int = 3) -> tuple[float, object]:
    """The least wall time of ``repeats`` runs of ``task()`` and the last run's result."""
    import time

    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = task()
        best = min(best, time.perf_counter() - start)
    return best, result


def peak_rss_mib() -> float:
    """Peak resident memory of this process so far, in MiB."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 1024  # bytes on macOS, KiB on Linux


def version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "absent"


def adult_missing(hierarchies: Iterable[str] = ()) -> str | None:
    """Why the Adult data (adult.csv and the hierarchies of the given columns) cannot be used, or None."""
    needed = [ADULT / "adult.csv"] + [ADULT / f"adult_hierarchy_{c}.csv" for c in hierarchies]
    absent = [path for path in needed if not path.is_file()]
    if not absent:
        return None
    shown = ", ".join(str(path) for path in absent[:3]) + (" ..." if len(absent) > 3 else "")
    return (
        f"the Adult data is not available (missing: {shown}); this benchmark reads "
        "../shared/data/adult/ relative to the project root (see /work/shared/data/README.md)"
    )


def print_header(
    argv: Sequence[str] | None, packages: Sequence[str] = ("polars", "numpy", "numba", "pandas")
) -> None:
    """The command, the machine (CPUs, load) and the versions, as the first lines of a report."""
    shown = shlex.join([sys.executable, *(sys.argv if argv is None else [sys.argv[0], *argv])])
    print(f"command          {shown}  (cwd {Path.cwd()})")
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    load = " ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"machine          {cpus} CPUs available, load average {load} (1, 5, 15 min) at start")
    listed = ", ".join(f"{name} {version(name)}" for name in ("sdckit", *packages))
    print(f"versions         python {platform.python_version()}, {listed}")


def run_parts(prefix: str, parts: Sequence[str], argv: Sequence[str] | None) -> int:
    """Run the benchmark modules ``<prefix><part>.py`` named in ``argv`` (all of ``parts`` when none),
    each in its own subprocess so that each peak resident memory is its own; 1 if one fails."""
    import subprocess
    import time

    here = Path(__file__).resolve().parent
    arguments = sys.argv[1:] if argv is None else list(argv)
    chosen = [part for part in arguments if not part.startswith("-")] or list(parts)
    unknown = [part for part in chosen if part not in parts]
    if unknown:
        print(f"unknown part(s) {', '.join(unknown)}: choose among {', '.join(parts)}", file=sys.stderr)
        return 2
    failed = []
    for part in chosen:
        print(f"\n=== {part} ===", flush=True)
        started = time.perf_counter()
        status = subprocess.call([sys.executable, str(here / f"{prefix}{part}.py")], cwd=here.parent)
        print(f"--- {part}: exit {status}, {time.perf_counter() - started:.1f} s wall", flush=True)
        if status != 0:
            failed.append(part)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0
