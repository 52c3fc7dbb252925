"""The optional dependencies of sdckit ("extras") and the one error a missing one raises.

The core (``pip install sdckit``) measures risk and utility, checks and anonymizes microdata and
writes reports: polars, numpy, numba, scipy, pyarrow, pydantic, pyyaml, typer, rich and matplotlib.
Everything else is an extra named for what it enables (``pip install 'sdckit[server]'``); the table
:data:`EXTRAS` says which modules each one brings, and ``pyproject.toml`` which distributions (the
test ``tests/test_install.py`` keeps the two in step).

A function that needs an extra calls :func:`require` before importing it, or turns the
``ImportError`` of a module-level import into :func:`missing_extra`: either way the user gets
:class:`MissingExtraError`, an :class:`~sdckit.errors.SdcError` (the command line prints its one line
and exits with status 2) that is also an ``ImportError`` (code that catches a missing module still
does).
"""

from __future__ import annotations

import importlib.util

from sdckit.errors import SdcError

#: Each extra and the top-level modules it installs (import names, not distribution names).
EXTRAS: dict[str, tuple[str, ...]] = {
    # the query server (sdckit serve), its client (sdckit query) and its differential privacy
    "server": ("fastapi", "uvicorn", "httpx", "opendp"),
    # the browser workbench (sdckit ui); its Compare page measures propensity utility (scikit-learn)
    "ui": ("fastapi", "uvicorn", "jinja2", "sklearn"),
    # runs over partitions on a Dask cluster (--engine dask)
    "scale": ("dask", "distributed"),
    # table protection with HiGHS's integer programs: cell suppression, its audit, 3-D rounding
    "tables": ("highspy",),
    # fitted models: propensity and classifier utility (the default loss of evaluate), synthesis
    "learn": ("sklearn",),
    # OpenDP's mechanisms: the dp-noise method
    "dp": ("opendp",),
}


class MissingExtraError(SdcError, ImportError):
    """A feature whose optional dependencies are not installed; the message names the extra that
    installs them and the pip command."""

    def __init__(self, extra: str, module: str, feature: str) -> None:
        super().__init__(
            f"{feature} needs the '{extra}' extra ({module} is not installed): {install_command(extra)}"
        )
        self.extra = extra
        self.name = module  # as ImportError's own: the module that is missing


def install_command(extra: str) -> str:
    """The command that installs ``extra``: ``pip install 'sdckit[extra]'``."""
    return f"pip install 'sdckit[{extra}]'"


def _installed(module: str) -> bool:
    """Whether the top-level ``module`` can be imported, found without importing it."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a broken or half-removed installation
        return False


def require(extra: str, *modules: str, feature: str) -> None:
    """Raise :class:`MissingExtraError` unless every one of ``modules`` (default: all the modules of
    ``extra``) can be imported; ``feature`` names what needs them (a command, a method, a measure),
    as the message's subject: "sdckit serve needs the 'server' extra ...".

    Nothing is imported: the check is cheap enough for the start of a command.
    """
    if extra not in EXTRAS:
        raise ValueError(f"unknown extra {extra!r}; the extras: {', '.join(EXTRAS)}")
    for module in modules or EXTRAS[extra]:
        if module not in EXTRAS[extra]:
            raise ValueError(f"the extra {extra!r} does not install {module!r}")
        if not _installed(module):
            raise MissingExtraError(extra, module, feature)


def missing_extra(extra: str, error: ImportError, feature: str) -> MissingExtraError:
    """The :class:`MissingExtraError` for the ``ImportError`` of a module ``extra`` installs (raise it
    ``from error``)."""
    module = (error.name or "").partition(".")[0] or EXTRAS[extra][0]
    return MissingExtraError(extra, module, feature)
