"""A command's main thread and the background warm-up (:func:`sdckit.frequency.warm_up_in_background`)
both import numba: the main thread's kernel modules enter numba through ``sdckit._numba``, so they
wait for the warm-up's import instead of entering numba's import cycles halfway. Before, about one
run in three of a command that imports a kernel module early (here ``--chunk-rows``, which loads the
partitioned runs) failed with "internal error: ImportError: cannot import name 'List' from
'numba.typed'"."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow


def test_a_kernel_module_imported_during_the_warm_up_gives_the_usual_message(tmp_path):
    from examples.generate import generate

    data = tmp_path / "data.csv"
    generate(300, seed=1).write_csv(data)
    config = tmp_path / "config.yaml"
    config.write_text((ROOT / "examples" / "students-release.yaml").read_text())
    command = [sys.executable, "-m", "sdckit", "risk", "loglinear", str(data), "-c", str(config)]
    command += ["--chunk-rows", "50"]
    runs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)]
    for _ in range(7):
        runs.append(subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
        if len(runs) % 2 == 0:
            runs[-2].wait()
    for run in runs:
        output, _ = run.communicate(timeout=300)
        assert run.returncode == 2, output
        assert "internal error" not in output, output
        assert "does not run over partitions" in output, output
