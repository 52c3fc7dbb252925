"""numba's BLAS probe is deferred (sdckit._numba): a process whose kernels multiply no matrix never
imports scipy.linalg, and kernels that do still compile, cache and run (checked in fresh processes, the
second one loading the first one's cache)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import sys
    import numpy as np
    from sdckit._numba import njit

    @njit(cache=True)
    def plain(a):
        return a.sum()

    @njit(cache=True)
    def product(a, b):
        return np.dot(a, b), np.linalg.eigh(a)[0]

    total = plain(np.arange(4.0))
    print(total, "scipy.linalg" in sys.modules)
    import numba.np.arraymath
    print(numba.np.arraymath._HAVE_BLAS)
    values, roots = product(np.array([[2.0, 1.0], [1.0, 2.0]]), np.array([1.0, -1.0]))
    print(values.tolist(), [round(x, 12) for x in roots.tolist()], "scipy.linalg" in sys.modules)
    """
)


def test_no_scipy_linalg_until_a_kernel_multiplies_matrices(tmp_path):
    (tmp_path / "kernels.py").write_text(SCRIPT)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "PYTHONDONTWRITEBYTECODE": "1"}
    for run in ("compiled", "cached"):
        done = subprocess.run(
            [sys.executable, "kernels.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, (run, done.stderr)
        assert done.stdout.split("\n")[:3] == [
            "6.0 False",
            "True",
            "[1.0, -1.0] [1.0, 3.0] True",
        ], (run, done.stdout)
    assert any((tmp_path / "cache").rglob("*.nbi"))
