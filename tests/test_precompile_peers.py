"""The build's lanes share what they compile (issue 35, item 4): before each step a workload process
takes into its numba cache the versions the other lanes have compiled since (``PeerCaches``), so
that a kernel both lanes need is compiled once and loaded by the other. On a module of its own, as
the seeding test of tests/test_precompile.py: numba's own cache files, counted compilations."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest
from numba.core import caching

from sdckit.precompile import PeerCaches
from test_precompile import COUNT, _run_module

BASE = f"kernel.twice-3.py{sys.version_info[0]}{sys.version_info[1]}"


def _kernel_module(tmp_path: Path) -> Path:
    module = tmp_path / "mod"
    module.mkdir()
    (module / "kernel.py").write_text(
        "from numba import njit\n\n@njit(cache=True)\ndef twice(x):\n    return x * 2\n"
    )
    return module


def _versions(cache: Path, module: Path) -> int:
    [folder] = [p for p in cache.iterdir() if p.is_dir()]
    stamp = hashlib.sha256((module / "kernel.py").read_bytes()).digest()
    return len(caching.IndexDataCacheFile(str(folder), BASE, stamp)._load_index())


@pytest.mark.slow  # four processes that each start numba (about 6 s under load)
def test_a_lane_takes_what_the_other_compiled_and_then_compiles_nothing(tmp_path):
    module = _kernel_module(tmp_path)
    peer, own = tmp_path / "peer", tmp_path / "own"
    _run_module(module, peer, "import kernel; kernel.twice(3); kernel.twice(1.5)")
    _run_module(module, own, "import kernel; kernel.twice(3)")
    shared = PeerCaches(own, [peer])
    assert shared.take() == 1  # the float version; the integer one it has is kept
    assert _versions(own, module) == 2
    assert shared.take() == 0  # nothing changed in the peer since: its index is not read again
    # A version the peer compiles later is taken at the next look.
    _run_module(module, peer, "import kernel; kernel.twice(True)")
    assert shared.take() == 1
    assert shared.taken == 2
    done = _run_module(
        module,
        own,
        COUNT + "import kernel\nprint(kernel.twice(3), kernel.twice(1.5), kernel.twice(True), len(n))",
    )
    assert done.stdout.split() == ["6", "3.0", "2", "0"]  # all three loaded, none compiled


@pytest.mark.slow
def test_a_version_caught_half_written_is_taken_at_the_next_look(tmp_path):
    module = _kernel_module(tmp_path)
    peer, own = tmp_path / "peer", tmp_path / "own"
    _run_module(module, peer, "import kernel; kernel.twice(3); kernel.twice(1.5)")
    [folder] = [p for p in peer.iterdir() if p.is_dir()]
    # numba writes a version's index entry before its data file: a peer caught in between
    data = sorted(folder.glob("*.nbc"))[-1]
    held = data.read_bytes()
    data.unlink()
    shared = PeerCaches(own, [peer])
    assert shared.take() == 0
    data.write_bytes(held)
    assert shared.take() == 2
    assert _versions(own, module) == 2
