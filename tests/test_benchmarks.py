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


def test_generalization_benchmark_prints_arx_ratios(monkeypatch, tmp_path, capsys):
    """bench_generalization's issue-19 grid: ARX's figures come from a JSON file given by --arx
    (nobody needs Java); with them every row prints ARX/ours for CPU and nodes, and a 5% row with
    more nodes than ARX or a 0% row above 40 ms is a missed target."""
    import json

    monkeypatch.syspath_prepend(str(BENCHMARKS))
    bench = importlib.import_module("bench_generalization")
    try:
        arx_file = tmp_path / "arx.json"
        arx_file.write_text(
            json.dumps(
                {
                    "rows": [
                        {"models": "k", "k": 5, "limit": 0.05, "cpu_seconds": 0.5, "nodes": 1217},
                        {"models": "k", "k": 2, "limit": 0.0, "cpu_seconds": 0.03, "nodes": 120},
                    ]
                }
            )
        )
        arx = bench.read_arx(arx_file)
        grid = {
            "repeats": 2,
            "rows": [
                {"models": "k", "k": 5, "limit": 0.05, "evaluations": 400, "cpu": [0.25, 0.2]},
                {"models": "k", "k": 2, "limit": 0.0, "evaluations": 150, "cpu": [0.06, 0.05]},
                {"models": "k+l", "k": 5, "limit": 0.05, "evaluations": 500, "cpu": [0.1, 0.1]},
            ],
        }
        missed = bench.print_issue_grid(grid, arx)
        out = capsys.readouterr().out
        # k=5, 5%: ARX 0.5 s / median 0.225 s = 2.22; nodes 1217 / 400 = 3.04.
        assert "2.22" in out and "3.04" in out
        # k=2, 0%: 0.03 / 0.055 = 0.55 and 120 / 150 = 0.80; 55 ms is above the 40 ms target.
        assert "0.55" in out and "0.80" in out
        assert any("k=2, limit 0%" in item and "55.0 ms" in item for item in missed)
        # k+l at 5%: 500 nodes, more than ARX's 450.
        assert any("k+l, k=5" in item and "450" in item for item in missed)
        with pytest.raises(SystemExit, match="arx"):
            bench.read_arx(tmp_path / "absent.json")
    finally:
        sys.modules.pop("bench_generalization", None)
