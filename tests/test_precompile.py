"""No compile wait (issue 35, item 1): kernels compiled ahead of time into the package.

- A command's first run with ``NUMBA_CACHE_DIR`` pointing at an empty folder finishes and writes what
  a warm run writes, with the precompiled kernels and without them (numba then compiles them).
- With the build ``make`` installs (``python -m sdckit.precompile``), commands compile nothing on a
  first run with an empty cache, and give the same files as kernels compiled on the spot.
- A package that cannot hold caches beside its source (a read-only install) seeds the user-wide
  cache instead: no compilation on the first run nor on later ones.
- The seeding itself, on a module of its own: it adds the versions a cache lacks, keeps those it
  has, copies nothing compiled from another source, and is done once per build.
- The build is current (every shipped kernel compiled from the source as it is), and holds every
  kernel of the package but those listed, with the reason, in :data:`NOT_SHIPPED`.

Compilations are counted by numba's own ``numba:compile`` events, in the measured process.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sdckit import _numba
from sdckit.precompile import write_inputs

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "sdckit"

#: Run ``sdckit.cli.main`` with the given arguments and write to $COMPILED, one line each, the
#: sdckit kernels numba compiled in this process.
PROBE = textwrap.dedent(
    """
    import os, sys
    from numba.core import event
    class Listener(event.Listener):
        def on_start(self, ev):
            pass
        def on_end(self, ev):
            f = ev.data["dispatcher"].py_func
            if f.__module__.startswith("sdckit"):
                with open(os.environ["COMPILED"], "a") as h:
                    h.write(f.__module__ + "." + f.__qualname__ + "\\n")
    event.register("numba:compile", Listener())
    from sdckit.cli import main
    try:
        main(sys.argv[1:])
    except SystemExit as stop:
        sys.exit(stop.code)
    """
)

#: Kernels the build may lack, and why: they are compiled on first use, as without a build. (Kernels
#: declared ``inline="always"`` are compiled into their callers, never on their own.)
NOT_SHIPPED = {
    "_kernels_lattice.combine_levels_at": "the search's roll-up from an evaluated node with few classes, "
    "on data the workload does not reach",
}


#: The commands run here, on :func:`sdckit.precompile.write_inputs`'s data.
COMMANDS = {
    "risk combined": "risk combined people.csv -c people.yaml -o scores.csv --quiet",
    "generalize": "anonymize generalize people.csv -c people.yaml -k 3 --suppression-limit 0.05 "
    "-o generalized.csv --quiet",
    "local suppression": "anonymize local-suppression people.csv -c people.yaml -k 3 -o ls.csv --quiet",
}


def _commands(folder: Path) -> dict[str, list[str]]:
    return {name: line.split() for name, line in COMMANDS.items()}


def _run(arguments: list[str], folder: Path, cache: Path | None, *, shipped: bool, extra: dict | None = None):
    """``sdckit ARGUMENTS`` in a fresh process, ``cache`` its NUMBA_CACHE_DIR (None: unset); returns
    (exit status, kernels compiled, stderr)."""
    compiled = folder / f"compiled-{len(list(folder.glob('compiled-*')))}.txt"
    environment = dict(os.environ, SDCKIT_SHIPPED_KERNELS="1" if shipped else "0", COMPILED=str(compiled))
    environment.pop("NUMBA_CACHE_DIR", None)
    if cache is not None:
        environment["NUMBA_CACHE_DIR"] = str(cache)
    environment.update(extra or {})
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *arguments], cwd=folder, env=environment, capture_output=True, text=True
    )
    kernels = compiled.read_text().split() if compiled.exists() else []
    return done.returncode, kernels, done.stderr


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("people")
    write_inputs(folder, records=800)
    return folder


def _copy(data: Path, to: Path) -> Path:
    shutil.copytree(data, to)
    return to


@pytest.mark.slow
def test_first_run_with_an_empty_numba_cache_finishes(data, tmp_path):
    """The issue's test: one command, NUMBA_CACHE_DIR an empty folder, every kernel compiled then
    (no precompiled kernels); it finishes and writes what the run after it (warm) writes."""
    folder = _copy(data, tmp_path / "work")
    cache = tmp_path / "empty-cache"
    cache.mkdir()
    arguments = _commands(folder)["risk combined"]
    code, compiled, err = _run(arguments, folder, cache, shipped=False)
    assert code == 0, err
    assert compiled, "an empty cache and no precompiled kernels: numba compiled the kernels"
    first = (folder / "scores.csv").read_bytes()
    code, compiled, err = _run(arguments, folder, cache, shipped=False)
    assert (code, compiled) == (0, []), err
    assert (folder / "scores.csv").read_bytes() == first


def _require_build() -> dict:
    build = _numba.shipped_build()
    if build is None:
        pytest.skip("no precompiled kernels in the package: make precompile (make test builds them)")
    return build


@pytest.mark.slow  # 16 s on a quiet machine: three commands twice, in subprocesses
def test_precompiled_commands_compile_nothing_and_write_the_same(data, tmp_path):
    _require_build()
    shipped_folder = _copy(data, tmp_path / "shipped")
    jit_folder = _copy(data, tmp_path / "jit")
    for name, arguments in _commands(shipped_folder).items():
        cache = tmp_path / f"cache-{name.replace(' ', '-')}"
        cache.mkdir()
        code, compiled, err = _run(arguments, shipped_folder, cache, shipped=True)
        assert code == 0, err
        assert compiled == [], f"{name}: compiled {compiled} on a first run with the precompiled kernels"
        assert "compiling" not in err  # the first-run notice of the command line is not shown
    # The same commands with the kernels compiled on the spot write the same files.
    cache = tmp_path / "jit-cache"
    cache.mkdir()
    for name in ("risk combined", "generalize"):
        code, compiled, err = _run(_commands(jit_folder)[name], jit_folder, cache, shipped=False)
        assert code == 0, err
        assert compiled, name
    for output in ("scores.csv", "generalized.csv"):
        assert (shipped_folder / output).read_bytes() == (jit_folder / output).read_bytes(), output


def test_a_package_that_cannot_hold_caches_seeds_the_user_wide_cache(data, tmp_path):
    """As a read-only install: numba cannot cache beside the source, so it uses the user-wide cache;
    the precompiled kernels are copied there, and neither the first run nor the next compiles. (A
    file named ``__pycache__`` in every folder of a copy of the package stands for the read-only
    folders: the tests run as root, whom permissions do not stop.)"""
    _require_build()
    site = tmp_path / "site"
    shutil.copytree(PACKAGE, site / "sdckit", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for folder in [site / "sdckit", *(p for p in (site / "sdckit").rglob("*") if p.is_dir())]:
        if "_compiled" not in folder.parts:
            (folder / "__pycache__").write_text("not a folder\n")
    folder = _copy(data, tmp_path / "work")
    user_cache = tmp_path / "user-cache"
    environment = {
        "PYTHONPATH": str(site),
        "XDG_CACHE_HOME": str(user_cache),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    arguments = _commands(folder)["risk combined"]
    for run in ("first", "second"):
        code, compiled, err = _run(arguments, folder, None, shipped=True, extra=environment)
        assert code == 0, err
        assert compiled == [], f"{run} run compiled {compiled}"
    seeded = list((user_cache / "numba").rglob("*.nbi"))
    assert seeded, "the user-wide cache holds the seeded kernels"
    assert all(str(site) not in str(p) for p in seeded)


def _run_module(folder: Path, cache: Path, code: str) -> subprocess.CompletedProcess:
    environment = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(folder))
    return subprocess.run(
        [sys.executable, "-c", code], env=environment, capture_output=True, text=True, check=True
    )


COUNT = (
    "from numba.core import event\n"
    "n = []\n"
    "class L(event.Listener):\n"
    "    def on_start(self, ev): pass\n"
    "    def on_end(self, ev): n.append(1)\n"
    "event.register('numba:compile', L())\n"
)


@pytest.mark.slow
def test_seed_adds_missing_versions_keeps_present_ones_and_ignores_another_source(tmp_path):
    module = tmp_path / "mod"
    module.mkdir()
    (module / "kernel.py").write_text(
        "from numba import njit\n\n@njit(cache=True)\ndef twice(x):\n    return x * 2\n"
    )
    full, partial = tmp_path / "full", tmp_path / "partial"
    _run_module(module, full, "import kernel; kernel.twice(3); kernel.twice(1.5); kernel.twice(True)")
    _run_module(module, partial, "import kernel; kernel.twice(3)")
    [full_dir] = [p for p in full.iterdir() if p.is_dir()]
    [partial_dir] = [p for p in partial.iterdir() if p.is_dir()]
    base = "kernel.twice-3.py" + f"{sys.version_info[0]}{sys.version_info[1]}"
    import hashlib

    from numba.core import caching

    stamp = hashlib.sha256((module / "kernel.py").read_bytes()).digest()
    before = caching.IndexDataCacheFile(str(partial_dir), base, stamp)._load_index()
    assert len(before) == 1
    assert _numba.seed(str(partial_dir), full_dir, base, "build-1", stamp) == 2
    after = caching.IndexDataCacheFile(str(partial_dir), base, stamp)._load_index()
    assert len(after) == 3
    assert {k: v for k, v in after.items() if k in before} == before  # the version it had, kept as it was
    assert _numba.seed(str(partial_dir), full_dir, base, "build-1", stamp) == 0  # once per build
    # Every version now loads from the seeded cache without compiling, with the right results.
    done = _run_module(
        module,
        partial,
        COUNT + "import kernel\nprint(kernel.twice(3), kernel.twice(1.5), kernel.twice(True), len(n))",
    )
    assert done.stdout.split() == ["6", "3.0", "2", "0"]
    # Versions compiled from another source are not copied.
    other = tmp_path / "other"
    other.mkdir()
    assert _numba.seed(str(other), full_dir, base, "build-2", hashlib.sha256(b"changed").digest()) == 0
    assert not list(other.glob("*.nbc"))


def test_the_build_is_current_and_holds_every_kernel():
    build = _require_build()
    done = subprocess.run(
        [sys.executable, "-m", "sdckit.precompile", "--check"], capture_output=True, text=True, cwd=ROOT
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "current" in done.stdout
    shipped = {p.name.split("-")[0] for p in _numba.SHIPPED.rglob("*.nbi")}
    declared = set()
    for source in PACKAGE.rglob("*.py"):
        if "_compiled" in source.parts:
            continue
        text = source.read_text(encoding="utf-8")
        for options, name in re.findall(r"@njit\(([^)]*cache=True[^)]*)\)\s*\ndef (\w+)", text):
            if 'inline="always"' not in options:
                declared.add(f"{source.stem}.{name}")
    assert declared, "found the kernels"
    missing = sorted(declared - shipped - set(NOT_SHIPPED))
    assert missing == [], f"kernels no workload step compiles: {missing} (add a step to sdckit.precompile)"
    assert build["kernels"] == len(list(_numba.SHIPPED.rglob("*.nbi")))
    json.dumps(build)  # the description is plain JSON
