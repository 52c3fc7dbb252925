"""The benchmark scripts are not run by the test suite (they are timed scripts), but each must at
least import cleanly and expose its entry point, so that `make bench` does not break unnoticed."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).parents[1] / "benchmarks"
SCRIPTS = sorted(path.stem for path in BENCHMARKS.glob("bench_*.py"))


@pytest.mark.parametrize("name", SCRIPTS)
def test_benchmark_script_imports(name, monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    module = importlib.import_module(name)
    assert callable(getattr(module, "main", None)) or callable(getattr(module, "run", None)), name
    sys.modules.pop(name, None)


def test_make_bench_runs_every_script():
    makefile = (Path(__file__).parents[1] / "Makefile").read_text()
    listed = {
        line.split("benchmarks/")[1].split(".py")[0]
        for line in makefile.splitlines()
        if "benchmarks/" in line
    }
    # bench_mondrian and bench_local_suppression run inside bench_local; bench_tuple_partition is a
    # component timing of bench_slicing.
    assert listed | {"bench_mondrian", "bench_local_suppression", "bench_tuple_partition"} == set(SCRIPTS)
