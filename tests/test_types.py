"""The type checker, as ``make lint`` runs it: mypy in its basic strictness over ``src/sdckit`` (the
configuration is ``[tool.mypy]`` in pyproject.toml) finds nothing. A failure lists mypy's errors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_mypy_finds_no_error(tmp_path_factory):
    # A cache of its own per run of the suite: two workers never share a cache being written.
    cache = tmp_path_factory.mktemp("mypy_cache")
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(cache)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "MYPY_FORCE_COLOR": "0"},
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("Success: no issues found"), result.stdout
