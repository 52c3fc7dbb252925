"""Compile sdckit's numba kernels ahead of time into the installed package.

``python -m sdckit.precompile`` (``make`` runs it after installing) runs every command that uses
compiled kernels once, on small generated data of every kind the commands read (categorical, ordinal
and numeric quasi-identifiers, codes with leading zeros, weights, households, a geography, a
set-valued attribute, linked releases), in fresh processes whose numba cache is an empty folder. What
numba compiled there, every specialization the commands asked for, is then installed whole as the
package's ``_compiled/`` folder (built beside it and renamed into place: an interrupted build leaves
the previous one). :mod:`sdckit._numba` makes numba find it: a command's first run then compiles
nothing, whatever ``NUMBA_CACHE_DIR`` says and even when the package folder is read-only.

The kernels are compiled for this machine (numba's own cache is specific to the CPU, the numba
version and the source): a build copied to another machine, or made before the source changed, is
ignored kernel by kernel, and those kernels are compiled on first use as without a build. Run it
again after changing a kernel (``make precompile``). ``--check`` says whether a build is installed
and whether it is current, without building.

Why this remedy, and what it costs, is measured in docs/benchmarks.md ("The first run").
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import numpy as np

from sdckit._numba import BUILD_FILE, PACKAGE, SHIPPED, add_versions, shipped_build
from sdckit.errors import SdcError

# The workload ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """One command of the workload: its arguments (files relative to the work folder) and the extra
    it needs (skipped, and said so, when that extra is not installed)."""

    arguments: tuple[str, ...]
    extra: str | None = None
    lane: int = 0

    @property
    def name(self) -> str:
        words = [a for a in self.arguments[:2] if not a.startswith("-") and "." not in a]
        return " ".join(words)


def _s(line: str, extra: str | None = None) -> Step:
    """A step of lane 0 (risk, checks, generalization, suppression, tables)."""
    return Step(tuple(line.split()), extra, 0)


#: The workload's lanes: each runs in a process of its own, on its own copy of the data, when
#: ``--processes`` allows (a lane's later steps read what its earlier steps wrote).
LANES = 2


def _m(line: str, extra: str | None = None) -> Step:
    """A step of lane 1 (masking, microaggregation, slicing, set-valued, linkage of masked releases)."""
    return Step(tuple(line.split()), extra, 1)


PEOPLE = "-c people.yaml"
#: Every command that runs compiled kernels, with the options that choose other kernels (a model, a
#: treatment of missing values, a method variant), in an order where each reads what an earlier wrote.
WORKLOAD: tuple[Step, ...] = (
    _s(f"risk combined people.csv {PEOPLE} -o scores.parquet --quiet"),
    _s(f"risk combined people.csv {PEOPLE} --missing category -o scores.csv --quiet"),
    _s("risk combined people.parquet -c people.yaml -o scores2.parquet --quiet"),
    _s(f"risk reidentification people.csv {PEOPLE} --sampling-fraction 0.1 --quiet"),
    _s(f"risk reidentification people.csv {PEOPLE} --missing category --quiet"),
    _s(f"risk suda people.csv {PEOPLE} --max-size 3 --quiet"),
    _s(f"check people.csv {PEOPLE} -k 3 -l 2 --quiet"),
    _s(f"check people.csv {PEOPLE} -t 0.3 --quiet"),
    _s(f"check people.csv {PEOPLE} -l 1.2 --l-variant entropy --quiet"),
    _s(f"check people.csv {PEOPLE} -l 2 --l-variant recursive --c 3 --quiet"),
    # t-closeness's distances, each with few values per class (dense) and many (sparse)
    _s(f"check people.csv {PEOPLE} --sensitive disease -t 0.3 --t-distance ordered --quiet"),
    _s(f"check people.csv {PEOPLE} --sensitive income -t 0.3 --t-distance ordered --quiet"),
    _s(
        f"check people.csv {PEOPLE} --qi sex,education --sensitive zip -t 0.3 "
        "--t-distance hierarchical --quiet"
    ),
    _s(
        f"check people.csv {PEOPLE} --qi sex,zip,education --sensitive birth_year -t 0.3 "
        "--t-distance hierarchical --quiet"
    ),
    _s(
        f"anonymize generalize people.csv {PEOPLE} -k 3 --suppression-limit 0.05 -o generalized.csv "
        "--summary generalized.json --quiet"
    ),
    _s(
        f"anonymize generalize people.csv {PEOPLE} -k 3 -l 2 -t 0.4 --suppression-limit 0.1 -o g2.csv --quiet"
    ),
    _s(f"anonymize generalize people.csv {PEOPLE} -k 3 -o g3.csv --quiet"),
    # k with t-closeness under a suppression limit: the compiled top-down walk (_kernels_walk), nodes
    # rolled up from helpers and judged in one call
    _s(f"anonymize generalize people.csv {PEOPLE} -k 3 -t 0.4 --suppression-limit 0.1 -o g5.csv --quiet"),
    # k with l-diversity without suppression: the compiled bounded walk (_kernels_bounded)
    _s(f"anonymize generalize people.csv {PEOPLE} -k 3 -l 2 -o g10.csv --quiet"),
    # few quasi-identifier combinations, many records each: classes rolled up from a finer node
    _s(
        f"anonymize generalize people.csv {PEOPLE} --qi sex,education,birth_year -k 5 -l 2 "
        "--suppression-limit 0.02 -o g4.csv --quiet"
    ),
    # a model the one-call evaluation does not take (entropy l): classes rolled up by the compiled
    # roll-up of the general path
    _s(
        f"anonymize generalize people.csv {PEOPLE} -k 3 -l 1.5 --l-variant entropy "
        "--suppression-limit 0.1 -o g7.csv --quiet"
    ),
    # δ-presence and k-map against a population: nodes judged in one call (_kernels_subset)
    _s(
        "anonymize generalize population.csv -c population.yaml --research-subset study --delta-max 0.5 "
        "--k-map 3 --suppression-limit 0.1 -o g8.csv --quiet"
    ),
    # and without suppression: the compiled bounded walk (_kernels_subset_walk)
    _s(
        "anonymize generalize population.csv -c population.yaml --research-subset study --delta-max 0.5 "
        "--k-map 3 -o g8w.csv --quiet"
    ),
    # the classification metric for a target that is not a quasi-identifier (_kernels_objectives)
    _s(
        f"anonymize generalize people.csv {PEOPLE} -k 3 --suppression-limit 0.05 --metric classification "
        "--target smoker -o g9.csv --quiet"
    ),
    _s(f"anonymize local-suppression people.csv {PEOPLE} -k 3 -o ls.csv --quiet"),
    _s(f"anonymize local-suppression people.csv {PEOPLE} -k 3 --missing category -o ls2.csv --quiet"),
    _s(f"anonymize targeted-suppression people.csv {PEOPLE} --delta 1 -o ts.csv --quiet"),
    _m(f"anonymize mondrian people.csv {PEOPLE} -k 5 -o mondrian.csv --summary mondrian.json --quiet"),
    _m(f"anonymize mondrian people.csv {PEOPLE} -k 5 -l 2 -o mondrian2.csv --quiet"),
    _m(f"anonymize top-bottom-coding people.csv {PEOPLE} --attribute income --top 500000 -o tb.csv --quiet"),
    _m(f"anonymize mdav people.csv {PEOPLE} -k 3 --attributes income,hours -o mdav.csv --quiet"),
    _m(
        f"anonymize mdav people.csv {PEOPLE} -k 3 --attributes income,hours --partition-size 200 "
        "-o mdav2.csv --quiet"
    ),
    _m("anonymize mdav numbers.csv -c numbers.yaml -k 3 --attributes x1,x2,x3 -o mdav3.csv --quiet"),
    _m("anonymize categorical-microaggregation numbers.csv -c numbers.yaml -k 3 -o cat2.csv --quiet"),
    _m(f"anonymize vmdav people.csv {PEOPLE} -k 3 --attributes income,hours -o vmdav.csv --quiet"),
    _m("anonymize vmdav numbers.csv -c numbers.yaml -k 3 --attributes x1,x2,x3 -o vmdav2.csv --quiet"),
    _m("anonymize rmd numbers.csv -c numbers.yaml -k 3 --attributes x1,x2,x3 -o rmd.csv --quiet", "learn"),
    _m(
        f"anonymize univariate-microaggregation people.csv {PEOPLE} -k 3 --attributes income,hours "
        "-o uni.csv --quiet"
    ),
    _m(
        "anonymize sorted-microaggregation numbers.csv -c numbers.yaml -k 3 --attributes x1,x2,x3 "
        "--order pppca --directions 50 --measure onestep -o sorted.csv --quiet"
    ),
    _m(f"anonymize categorical-microaggregation people.csv {PEOPLE} -k 3 -o cat.csv --quiet"),
    _m(
        f"anonymize noise people.csv {PEOPLE} --attributes income,hours --amount 10 --seed 1 "
        "-o noise.csv --quiet"
    ),
    _m(
        f"anonymize noise people.csv {PEOPLE} --attributes income,hours --noise correlated-exact --amount 10 "
        "--seed 1 -o noise2.csv --quiet"
    ),
    _m(f"anonymize rank-swap people.csv {PEOPLE} --attributes income,hours -p 5 --seed 1 -o rs.csv --quiet"),
    _m(f"anonymize romm people.csv {PEOPLE} --attributes income,hours -p 0.1 --seed 1 -o romm.csv --quiet"),
    _m(f"anonymize swap people.csv {PEOPLE} --attributes disease --rate 0.2 --seed 1 -o swap.csv --quiet"),
    _m(f"anonymize pram people.csv {PEOPLE} --attributes nationality --seed 1 -o pram.csv --quiet"),
    _m(f"anonymize sample people.csv {PEOPLE} --fraction 0.3 --strata sex --seed 1 -o sample.csv --quiet"),
    _m(
        f"anonymize slicing people.csv {PEOPLE} --sensitive disease -l 2 --sensitive-column-size 1 --seed 1 "
        "-o sliced.csv --quiet"
    ),
    _m(
        "anonymize record-swap people.csv -c census.yaml --hierarchy region,district "
        "--similarity household_size --risk-variables nationality --swap-rate 0.1 --seed 1 "
        "--allow-violations -o swapped.csv --quiet"
    ),
    _m(
        "anonymize quasi-sensitive baskets.csv -c baskets.yaml --knowledge knowledge.csv -k 2 -l 2 --c 3 "
        "--node-limit 2000 --allow-violations -o qs.csv --quiet"
    ),
    _m(
        "anonymize quasi-sensitive baskets.csv -c baskets.yaml --knowledge knowledge.csv -k 2 -t 0.5 "
        "--time-limit 1 --allow-violations -o qs2.csv --quiet"
    ),
    _m(f"risk linkage people.csv mondrian.csv {PEOPLE} --method both --quiet"),
    _m(f"risk linkage people.csv noise.csv {PEOPLE} --method distance --quiet"),
    _m(f"risk linkage people.csv mondrian.csv {PEOPLE} --method distance --distance gower --quiet"),
    _m(f"risk linkage people.csv noise.csv {PEOPLE} --method distance --distance gower --quiet"),
    _m(f"risk attribute-disclosure people.csv mondrian.csv {PEOPLE} --quiet"),
    _m(f"risk reidentification mondrian.csv --original people.csv {PEOPLE} --quiet"),
    _m(f"attack people.csv noise.csv {PEOPLE} --quiet"),
    _m("attack people.csv --split 0.2 -o kept.csv --control-output control.csv --seed 1"),
    _m(f"attack people.csv noise.csv {PEOPLE} --control control.csv --attack singling-out --quiet"),
    _m(f"anonymize synthesize people.csv {PEOPLE} --seed 1 -o synthetic.csv --quiet", "learn"),
    _m(
        f"anonymize synthesize people.csv {PEOPLE} -m 1 --reject-unique 2 --max-tries 1 --seed 1 "
        "-o synthetic2.csv --quiet",
        "learn",
    ),
    _m(f"utility numeric people.csv noise.csv {PEOPLE} --attributes income,hours --quiet"),
    _m(f"utility tables people.csv mondrian.csv {PEOPLE} --quiet"),
    _s(
        f"evaluate people.csv generalized.csv ls.csv {PEOPLE} --utility numeric,tables "
        "--summary evaluate.json --quiet"
    ),
    _s("apply generalized.json people.csv -o again.csv"),
    _s(f"attack people.csv generalized.csv {PEOPLE} --quiet"),
    _s("table round people.csv -c census.yaml --rows region --cols sex --base 5 -o rounded.csv --quiet"),
    _s("table cell-key people.csv -c census.yaml --rows region --cols sex --seed 1 -o keyed.csv --quiet"),
    _s(
        "table suppress people.csv -c census.yaml --rows region --cols education --min-frequency 100 "
        "-o suppressed.csv --quiet",
        "tables",
    ),
    _s(
        "table suppress people.csv -c census.yaml --rows region --cols education --min-frequency 100 "
        "--algorithm heuristic --holding household -o suppressed2.csv --quiet",
        "tables",
    ),
    _s(
        "table audit people.csv -c census.yaml --rows region --cols education --min-frequency 100 "
        "--pattern suppressed.csv --quiet",
        "tables",
    ),
)


def write_inputs(folder: Path, records: int = 3000, seed: int = 7) -> None:
    """The workload's data: ``records`` people in households over a two-level geography, with
    codes that keep leading zeros, numbers, sensitive and yes/no attributes, weights; a set-valued
    basket file with its external knowledge; and their configurations."""
    import polars as pl

    rng = np.random.default_rng(seed)
    size = rng.integers(1, 5, size=records)
    household = np.repeat(np.arange(records), size)[:records]
    household_size = np.bincount(household)[household]
    region_of = rng.integers(1, 5, size=records)[household]
    district_of = rng.integers(1, 4, size=records)[household]
    people = pl.DataFrame(
        {
            "person": [f"P{i:06d}" for i in range(records)],
            "household": household,
            "household_size": household_size,
            "region": [f"R{r}" for r in region_of],
            "district": [f"R{r}-D{d}" for r, d in zip(region_of, district_of, strict=True)],
            "birth_year": rng.integers(1930, 2008, size=records),
            "sex": rng.choice(["F", "M"], size=records),
            # over 256 codes: the lattice search's level codes are 16-bit, not 8-bit
            "zip": [f"{z:05d}" for z in rng.integers(0, 400, size=records) * 37],
            "nationality": rng.choice(
                ["AT", "BE", "DE", "FR", "IT", "NL"], p=[0.6, 0.1, 0.1, 0.1, 0.05, 0.05], size=records
            ),
            "education": rng.integers(1, 7, size=records),
            "disease": rng.choice([f"D{i}" for i in range(8)], size=records),
            "smoker": pl.Series(rng.choice(["Yes", "No", ""], p=[0.2, 0.75, 0.05], size=records)).replace(
                "", None
            ),
            "income": np.round(rng.lognormal(10.0, 0.6, size=records), 2),
            "hours": np.round(rng.normal(38.0, 6.0, size=records), 1),
            "weight": np.round(rng.uniform(10.0, 200.0, size=records), 3),
        }
    )
    people.write_csv(folder / "people.csv")
    people.write_parquet(folder / "people.parquet")
    (folder / "people.yaml").write_text(
        "attributes:\n"
        "  person:      {role: identifier}\n"
        "  birth_year:  {role: quasi-identifier, kind: numeric, public: 0.05, sensitivity: 0,\n"
        "                hierarchy: {intervals: {width: 5, bottom: 1930, top: 2010}}}\n"
        "  sex:         {role: quasi-identifier, public: 0.8, sensitivity: 0, hierarchy: {order: [F, M]}}\n"
        "  zip:         {role: quasi-identifier, kind: categorical, public: 0.02, sensitivity: 0,\n"
        "                hierarchy: {mask: 5}}\n"
        "  education:   {role: quasi-identifier, kind: ordinal, public: 0.1, sensitivity: 0,\n"
        "                hierarchy: {intervals: {width: 2, bottom: 1, top: 7}}}\n"
        "  nationality: {public: 0.3, sensitivity: 0}\n"
        "  region:      {public: 0.5}\n"
        "  district:    {public: 0.2}\n"
        "  disease:     {role: sensitive, kind: categorical, public: 0.01, sensitivity: 1}\n"
        "  smoker:      {kind: categorical, public: 0.05, sensitivity: 1, values: {'Yes': 1, 'No': 0}}\n"
        "  income:      {kind: numeric}\n"
        "  hours:       {kind: numeric}\n"
        "  weight:      {kind: numeric}\n"
        "data: {weights: weight}\n"
        "risk: {alpha: 100, epsilon: 0.01, missing: wildcard}\n",
        encoding="utf-8",
    )
    # A population table with a research subset (every 7th person), no weights, for δ-presence and k-map.
    people.select("sex", "zip", "birth_year", "education").with_columns(
        pl.Series("study", np.where(np.arange(records) % 7 == 0, "yes", "no"))
    ).write_csv(folder / "population.csv")
    (folder / "population.yaml").write_text(
        "attributes:\n"
        "  birth_year:  {role: quasi-identifier, kind: numeric,\n"
        "                hierarchy: {intervals: {width: 5, bottom: 1930, top: 2010}}}\n"
        "  sex:         {role: quasi-identifier, hierarchy: {order: [F, M]}}\n"
        "  zip:         {role: quasi-identifier, kind: categorical, hierarchy: {mask: 5}}\n"
        "  education:   {role: quasi-identifier, kind: ordinal,\n"
        "                hierarchy: {intervals: {width: 2, bottom: 1, top: 7}}}\n"
        "  study:       {role: insensitive}\n",
        encoding="utf-8",
    )
    (folder / "census.yaml").write_text(
        "attributes:\n"
        "  person:      {role: identifier}\n"
        "  household:   {role: household}\n"
        "  sex:         {role: quasi-identifier}\n"
        "  nationality: {role: quasi-identifier}\n",
        encoding="utf-8",
    )
    items = [f"i{j}" for j in range(12)]
    baskets = pl.DataFrame(
        {
            "age": rng.integers(20, 70, size=200),
            "gender": rng.choice(["F", "M"], size=200),
            "state": rng.choice(["GA", "TX", "NY"], size=200),
            "items": [
                ";".join(sorted(rng.choice(items, size=int(rng.integers(1, 5)), replace=False)))
                for _ in range(200)
            ],
        }
    )
    baskets.write_csv(folder / "baskets.csv")
    (folder / "baskets.yaml").write_text(
        "attributes:\n"
        "  age:    {role: quasi-identifier, kind: numeric}\n"
        "  gender: {role: quasi-identifier}\n"
        "  state:  {role: quasi-identifier}\n"
        "  items:  {role: quasi-sensitive, kind: set-valued}\n",
        encoding="utf-8",
    )
    # 20,000 records: exact MDAV's k-d tree (the full scan below that size)
    many = 20_000
    numbers = pl.DataFrame(
        {
            "x1": np.round(rng.normal(0.0, 1.0, size=many), 3),
            "x2": np.round(rng.lognormal(3.0, 1.0, size=many), 2),
            "x3": rng.integers(0, 100, size=many).astype(np.float64),
            "grade": rng.integers(1, 6, size=many),
        }
    )
    numbers.write_csv(folder / "numbers.csv")
    (folder / "numbers.yaml").write_text(
        "attributes:\n"
        "  x1:    {role: quasi-identifier, kind: numeric}\n"
        "  x2:    {role: quasi-identifier, kind: numeric}\n"
        "  x3:    {kind: numeric}\n"
        "  grade: {role: quasi-identifier, kind: ordinal}\n",
        encoding="utf-8",
    )
    (folder / "knowledge.csv").write_text(
        "label,items\nA,i0;i1;i2;i3\nB,i4;i5;i6\nC,i7;i8;i9;i10;i11\n", encoding="utf-8"
    )


def _installed(extra: str | None) -> bool:
    if extra is None:
        return True
    from sdckit._extras import EXTRAS
    from sdckit._extras import _installed as importable

    return all(importable(module) for module in EXTRAS[extra])


def run_steps(folder: Path, steps: Sequence[Step], log: TextIO) -> list[str]:
    """Run ``steps`` in this process (in ``folder``), quietly; returns the failures, one line each.
    Exit 0 and 3 (a release that does not meet what was asked) both ran their kernels."""
    from sdckit.cli import main

    failures = []
    here = os.getcwd()
    os.chdir(folder)
    try:
        for step in steps:
            if not _installed(step.extra):
                log.write(f"skipped {step.name}: the '{step.extra}' extra is not installed\n")
                continue
            started = time.perf_counter()
            out, err = io.StringIO(), io.StringIO()
            code = 0
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    main(list(step.arguments))
                except SystemExit as stop:
                    code = int(stop.code or 0)
            log.write(f"{time.perf_counter() - started:6.1f} s  {' '.join(step.arguments[:2])}\n")
            if code not in (0, 3):
                failures.append(
                    f"sdckit {' '.join(step.arguments)}: exit {code}: {err.getvalue().strip()[-400:]}"
                )
    finally:
        os.chdir(here)
    return failures


# The numba cache files ------------------------------------------------------------------------------


def _read_index(path: Path) -> tuple[object, object, dict]:
    """(numba version, source stamp, overloads) of a numba index file, read as numba reads it."""
    with open(path, "rb") as handle:
        version = pickle.load(handle)
        stamp, overloads = pickle.loads(handle.read())
    return version, stamp, overloads


def merge_cache(source: Path, target: Path) -> int:
    """Add to the numba cache folder ``target`` every compiled version in ``source`` it lacks
    (:func:`sdckit._numba.add_versions`, function by function); returns how many were added."""
    target.mkdir(parents=True, exist_ok=True)
    added = 0
    for index in sorted(source.glob("*.nbi")):
        _version, stamp, _overloads = _read_index(index)
        added += add_versions(str(source), str(target), index.name[: -len(".nbi")], stamp)
    return added


def _package_folders() -> dict[str, Path]:
    """numba's cache subfolder name of every folder of the package -> that folder, relative."""
    from numba.core.caching import _CacheLocator

    folders = {}
    for folder in [PACKAGE, *sorted(p for p in PACKAGE.rglob("*") if p.is_dir())]:
        if folder.name in ("__pycache__", "_compiled") or not any(folder.glob("*.py")):
            continue
        subpath = _CacheLocator.get_suitable_cache_subpath(str(folder / "__init__.py"))
        folders[subpath] = folder.relative_to(PACKAGE)
    return folders


def collect(cache_dir: Path, staging: Path) -> int:
    """Move what a workload process compiled (a ``NUMBA_CACHE_DIR`` laid out by numba) into
    ``staging``, laid out by package folder; returns the number of compiled versions."""
    folders = _package_folders()
    total = 0
    for sub in sorted(p for p in cache_dir.iterdir() if p.is_dir()):
        relative = folders.get(sub.name)
        if relative is not None:
            total += merge_cache(sub, staging / relative)
    return total


# The build ------------------------------------------------------------------------------------------


class PeerCaches:
    """The kernels the other workload processes have compiled so far, taken into this process's
    numba cache (``own``) before each step: a kernel both lanes need (the counting and text kernels,
    the linkage distances) is then compiled by the lane that gets to it first and loaded by the other,
    instead of compiled twice (29 versions were compiled by both lanes; measured side by side, the
    build's CPU 211 s -> 205 s, the same 216 versions). Only an index whose file changed since the
    last look is read; one caught half-written by its process (an index names a data file before it
    is written) is skipped and read again before the next step. :func:`collect` merges every lane's
    cache as before."""

    def __init__(self, own: Path, peers: Sequence[Path]) -> None:
        self.own = own
        self.peers = list(peers)
        self.seen: dict[Path, int] = {}
        self.taken = 0

    def take(self) -> int:
        """Add to ``own`` what the peers compiled since the last call; returns how many versions."""
        added = 0
        for peer in self.peers:
            for index in sorted(peer.glob("*/*.nbi")):
                try:
                    changed = index.stat().st_mtime_ns
                    if self.seen.get(index) == changed:
                        continue
                    _version, stamp, _overloads = _read_index(index)
                    target = self.own / index.parent.name
                    target.mkdir(parents=True, exist_ok=True)
                    added += add_versions(str(index.parent), str(target), index.name[: -len(".nbi")], stamp)
                except (OSError, EOFError, pickle.UnpicklingError):
                    continue
                self.seen[index] = changed
        self.taken += added
        return added


def _worker(folder: Path, lane: int, lanes: int, peers: Sequence[Path] = ()) -> int:
    """A workload process: the steps of ``lane`` (every step when there is one lane), in ``folder``
    (its NUMBA_CACHE_DIR is set by the parent), taking before each step what the processes whose
    caches are ``peers`` compiled meanwhile (:class:`PeerCaches`)."""
    started = time.perf_counter()
    steps = [step for step in WORKLOAD if step.lane % lanes == lane]
    shared = PeerCaches(Path(os.environ["NUMBA_CACHE_DIR"]), peers) if peers else None
    failures = []
    for step in steps:
        if shared is not None:
            shared.take()
        failures += run_steps(folder, [step], sys.stderr)
    for failure in failures:
        sys.stderr.write(f"error: {failure}\n")
    taken = f", {shared.taken} compiled versions taken from the other lanes" if shared else ""
    sys.stderr.write(f"lane {lane}: {len(steps)} steps in {time.perf_counter() - started:.1f} s{taken}\n")
    return 1 if failures else 0


@contextlib.contextmanager
def _scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="sdckit-precompile-") as name:
        yield Path(name)


def build(processes: int = 2, records: int = 3000, log: TextIO = sys.stderr) -> dict:
    """Compile the workload's kernels (``processes`` workload processes at a time) and install them as
    the package's ``_compiled/`` folder; returns the build's description."""
    import numba

    started = time.perf_counter()
    lanes = min(processes, LANES)
    with _scratch() as scratch:
        workers = []
        for number in range(lanes):
            cache, data = scratch / f"cache-{number}", scratch / f"data-{number}"
            cache.mkdir()
            data.mkdir()
            write_inputs(data, records)
            environment = dict(os.environ, NUMBA_CACHE_DIR=str(cache), SDCKIT_SHIPPED_KERNELS="0")
            command = [
                sys.executable,
                "-m",
                "sdckit.precompile",
                "--worker",
                str(number),
                str(lanes),
                "--data",
                str(data),
                "--peers",
                *(str(scratch / f"cache-{other}") for other in range(lanes) if other != number),
            ]
            workers.append(
                (cache, subprocess.Popen(command, env=environment, stderr=subprocess.PIPE, text=True))
            )
        failed = []
        try:
            for _cache, process in workers:
                _out, err = process.communicate()
                log.write(err)
                if process.returncode != 0:
                    failed.append(process.returncode)
        finally:
            # Interrupted: the workload processes end before their scratch folder is removed.
            for _cache, process in workers:
                if process.poll() is None:
                    process.kill()
                    process.wait()
        if failed:
            raise SdcError("the precompile workload failed (see the errors above); nothing was installed")
        staging = PACKAGE / f"_compiled.new-{os.getpid()}"
        shutil.rmtree(staging, ignore_errors=True)
        try:
            versions = sum(collect(cache, staging) for cache, _ in workers)
            description = {
                "id": uuid.uuid4().hex,
                "numba": numba.__version__,
                "python": sys.version.split()[0],
                "versions": versions,
                "kernels": len(list(staging.rglob("*.nbi"))),
                "seconds": round(time.perf_counter() - started, 1),
                "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            }
            (staging / BUILD_FILE).write_text(json.dumps(description, indent=1) + "\n", encoding="utf-8")
            _install(staging)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return description


def _install(staging: Path) -> None:
    """Put ``staging`` in place of ``_compiled/`` (renamed: never half a build in place)."""
    old = PACKAGE / f"_compiled.old-{os.getpid()}"
    if SHIPPED.exists():
        SHIPPED.rename(old)
    try:
        staging.rename(SHIPPED)
    except OSError:
        if old.exists():
            old.rename(SHIPPED)
        raise
    shutil.rmtree(old, ignore_errors=True)


def check() -> tuple[bool, str]:
    """Whether a build is installed and current (every kernel's shipped versions compiled from the
    source as it is now), and a line saying so."""
    description = shipped_build()
    if description is None:
        return False, "no precompiled kernels: run python -m sdckit.precompile"
    import hashlib

    stale = []
    for index in SHIPPED.rglob("*.nbi"):
        module = index.name.split(".", 1)[0]
        source = PACKAGE / index.parent.relative_to(SHIPPED) / f"{module}.py"
        _version, stamp, _overloads = _read_index(index)
        if not source.exists() or hashlib.sha256(source.read_bytes()).digest() != stamp:
            stale.append(index.name.rsplit("-", 1)[0])
    if stale:
        return False, (
            f"precompiled kernels of {description['created']}: {len(stale)} of "
            f"{description['kernels']} changed since (e.g. {sorted(stale)[0]}): "
            "run python -m sdckit.precompile"
        )
    return True, (
        f"precompiled kernels of {description['created']}: {description['kernels']} kernels, "
        f"{description['versions']} compiled versions, numba {description['numba']}, current"
    )


def main(arguments: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sdckit.precompile", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--check", action="store_true", help="say whether a current build is installed; build nothing"
    )
    parser.add_argument("--processes", type=int, default=2, help="workload processes at a time (default 2)")
    parser.add_argument("--worker", nargs=2, type=int, help=argparse.SUPPRESS)
    parser.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--peers", nargs="*", type=Path, default=[], help=argparse.SUPPRESS)
    given = parser.parse_args(arguments)
    if given.worker:
        return _worker(given.data, given.worker[0], given.worker[1], given.peers)
    if given.check:
        current, line = check()
        print(line)
        return 0 if current else 1
    if given.processes < 1:
        parser.error("--processes must be at least 1")
    try:
        description = build(given.processes)
    except (SdcError, OSError) as error:
        sys.stderr.write(f"error: {error}\n")
        return 1
    except KeyboardInterrupt:
        sys.stderr.write("interrupted: nothing was installed (the previous build, if any, is in place)\n")
        return 130
    print(
        f"precompiled {description['kernels']} kernels ({description['versions']} compiled versions) into "
        f"{SHIPPED} in {description['seconds']} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
