"""sdckit's one place that configures numba: every kernel module takes ``njit`` from here.

Importing this module makes numba find sdckit's kernels compiled ahead of time. ``python -m
sdckit.precompile`` (run by ``make`` after installing) compiles every kernel the commands use into the
installed package, under ``_compiled/``, in numba's own cache format. When a kernel is defined, the
locator below lets numba choose its cache directory exactly as it would (``NUMBA_CACHE_DIR``, the
package's ``__pycache__``, or the user-wide cache when the package is read-only), and first copies there
the compiled versions of that kernel the directory lacks. numba then loads them as it loads its own
cache: a first run, even with an empty ``NUMBA_CACHE_DIR``, compiles nothing; a version numba rejects
(the source changed since the build, another numba, another CPU) is compiled and cached as usual.
``SDCKIT_SHIPPED_KERNELS=0`` turns the copying off (the benchmark of the compile time, the tests of
the compiled-on-first-use path).

It also spares every process numba's BLAS probe (:func:`_defer_blas_probe`): when numba builds its
CPU target (the first kernel call) it imports ``scipy.linalg`` only to learn whether a BLAS exists,
about 0.2 s of a command that never multiplies a matrix.
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Any

from numba import njit
from numba.core import caching

__all__ = ["SHIPPED", "njit", "shipped_build", "shipped_in_use"]

PACKAGE = Path(__file__).resolve().parent
#: Where ``python -m sdckit.precompile`` puts the compiled kernels: one folder per package folder
#: (``anonymize/``, ``risk/``, ...), numba's index (``.nbi``) and data (``.nbc``) files in each.
SHIPPED = PACKAGE / "_compiled"
BUILD_FILE = "BUILD.json"
_MARK = ".sdckit-seeded"


def shipped_build() -> dict | None:
    """The description of the shipped build (numba version, build id), or None when there is none."""
    try:
        return json.loads((SHIPPED / BUILD_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _enabled() -> bool:
    return os.environ.get("SDCKIT_SHIPPED_KERNELS", "1") != "0"


def shipped_in_use() -> bool:
    """Whether kernels are taken from a shipped build (loaded, not compiled, on first use)."""
    return _enabled() and _BUILD.get("build") is not None


def filename_base(py_func) -> str:
    """numba's name for a function's cache files (``module.qualname-line.py311``), as it forms it."""
    module = os.path.splitext(os.path.basename(py_func.__code__.co_filename))[0]
    qualname = py_func.__qualname__.replace("<", "").replace(">", "")
    line = py_func.__code__.co_firstlineno
    python = f"py{sys.version_info[0]}{sys.version_info[1]}{getattr(sys, 'abiflags', '')}"
    return f"{module}.{qualname}-{line}.{python}"


def add_versions(source: str, target: str, base: str, stamp: object) -> int:
    """Add to the numba cache folder ``target`` the compiled versions in ``source`` of the function
    whose cache files are named ``base`` that ``target`` lacks; returns how many. Only versions
    compiled from the source whose hash is ``stamp`` by this numba are taken (numba would ignore the
    others); the versions ``target`` has are kept, the added ones renumbered; data files and index are
    written as numba writes them (whole, then renamed), so a reader never sees half of one."""
    offered_file = caching.IndexDataCacheFile(source, base, stamp)
    offered = offered_file._load_index()
    if not offered:
        return 0
    target_file = caching.IndexDataCacheFile(target, base, stamp)
    present = target_file._load_index()
    taken = set(present.values())
    added = 0
    number = 0
    for key, name in offered.items():
        if key in present:
            continue
        number += 1
        while target_file._data_name(number) in taken:
            number += 1
        destination = target_file._data_name(number)
        with open(offered_file._data_path(name), "rb") as handle:
            data = handle.read()
        with target_file._open_for_write(target_file._data_path(destination)) as handle:
            handle.write(data)
        present[key] = destination
        taken.add(destination)
        added += 1
    if added:
        target_file._save_index(present)
    return added


def seed(cache_path: str, shipped_dir: Path, base: str, build_id: str, stamp: object) -> int:
    """Copy into ``cache_path`` the shipped versions of a function it lacks (:func:`add_versions`),
    once per build (noted in a small file beside the index); returns how many were copied."""
    mark = os.path.join(cache_path, base + _MARK)
    try:
        with open(mark, encoding="utf-8") as handle:
            if handle.read() == build_id:
                return 0
    except OSError:
        pass
    copied = add_versions(str(shipped_dir), cache_path, base, stamp)
    with caching.IndexDataCacheFile(cache_path, base, stamp)._open_for_write(mark) as handle:
        handle.write(build_id.encode("utf-8"))
    return copied


class SeedingLocator:
    """Chooses a kernel's cache directory as numba does and seeds it from the shipped build (see the
    module's docstring). Functions outside sdckit, and every function when nothing is shipped, are
    left to numba's own locators. numba only calls ``from_function`` of the classes in its list, and
    this one returns one of numba's own locators, so the class is never instantiated and needs none
    of a locator's other methods."""

    _standard: list = []

    @classmethod
    def from_function(cls, py_func, py_file):
        for candidate in cls._standard:
            locator = candidate.from_function(py_func, py_file)
            if locator is not None:
                break
        else:
            return None
        build = _BUILD.get("build")
        if build is None or not _enabled():
            return locator
        try:
            relative = Path(py_file).resolve().parent.relative_to(PACKAGE)
        except ValueError:
            return locator
        shipped_dir = SHIPPED / relative
        base = filename_base(py_func)
        if (shipped_dir / (base + ".nbi")).exists():
            # A cache that cannot be written: numba compiles, as without a shipped build.
            with contextlib.suppress(OSError):
                seed(locator.get_cache_path(), shipped_dir, base, build["id"], locator.get_source_stamp())
        return locator


def _install() -> None:
    classes: list[Any] = caching.CacheImpl._locator_classes
    if SeedingLocator in classes:
        return
    SeedingLocator._standard = list(classes)
    classes.insert(0, SeedingLocator)


def _scipy_blas_present() -> bool:
    """Whether scipy's BLAS wrappers are installed, from the files alone (importing them imports all of
    ``scipy.linalg``)."""
    spec = importlib.util.find_spec("scipy")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        if any((Path(folder) / "linalg").glob("cython_blas*")):
            return True
    return False


class _BlasProbeDeferral(importlib.abc.MetaPathFinder):
    """While ``numba.np.arraymath`` is being imported, numba's ``ensure_blas`` checks that scipy's BLAS
    wrappers are installed instead of importing them: arraymath asks only whether a BLAS exists (its
    ``_HAVE_BLAS``). Everything else keeps numba's own ``ensure_blas`` (the kernels that compile a
    matrix product import scipy's wrappers and check their integer width as usual), and numba's C
    helpers import the wrappers themselves when a compiled kernel first calls one."""

    target = "numba.np.arraymath"

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.target:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        exec_module = loader.exec_module

        def deferred(module):
            from numba.np import linalg

            real = linalg.ensure_blas

            def present() -> None:
                if not _scipy_blas_present():
                    real()

            linalg.ensure_blas = present
            try:
                exec_module(module)
            finally:
                linalg.ensure_blas = real

        loader.exec_module = deferred
        return spec


def _defer_blas_probe() -> None:
    if "numba.np.arraymath" not in sys.modules and not any(
        isinstance(finder, _BlasProbeDeferral) for finder in sys.meta_path
    ):
        sys.meta_path.insert(0, _BlasProbeDeferral())


_BUILD: dict = {"build": shipped_build()}
_install()
_defer_blas_probe()
