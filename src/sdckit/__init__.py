"""sdckit: statistical disclosure control and privacy-preserving data publishing.

The public API, re-exported from the modules that define it. The names are loaded on first use
(PEP 562), so that the command line can start (and handle Ctrl-C) before polars and numba load.

The common case in three lines (pandas in, pandas out)::

    import sdckit
    release = sdckit.protect(frame, method="local-suppression", k=3, quasi_identifiers=["age", "zip"])
    release.to_pandas()

The subpackages (``sdckit.anonymize``, ``sdckit.risk``, ``sdckit.utility``, ``sdckit.tabular``,
``sdckit.evaluate``, ``sdckit.models``) are reachable after ``import sdckit``, imported on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "Attribute": "sdckit.table",
    "Config": "sdckit.config",
    "ConfigError": "sdckit.errors",
    "InputError": "sdckit.errors",
    "Kind": "sdckit.table",
    "RecordRisk": "sdckit.risk.combined",
    "Role": "sdckit.table",
    "Schema": "sdckit.table",
    "SdcError": "sdckit.errors",
    "SdcWarning": "sdckit.errors",
    "Table": "sdckit.table",
    "ValueRange": "sdckit.table",
    "combined_risk": "sdckit.risk.combined",
    "coverage_counts": "sdckit.coverage",
    "encode": "sdckit.frequency",
    "enumerate_known_sets": "sdckit.risk.combined",
    "frequencies": "sdckit.frequency",
    "load_config": "sdckit.config",
    "parse_config": "sdckit.config",
    "protect": "sdckit.api",
    "read_table": "sdckit.io",
    "write_table": "sdckit.io",
}

#: Subpackages reachable as attributes after ``import sdckit`` (``sdckit.anonymize.run_method``),
#: imported on first use: ``import sdckit`` alone loads neither polars nor numba.
_SUBPACKAGES = ("anonymize", "evaluate", "models", "risk", "tabular", "utility")

__all__ = ["__version__", *sorted(_EXPORTS)]


def __getattr__(name: str) -> Any:
    if name in _SUBPACKAGES:
        # import_module also binds the subpackage as an attribute of this package.
        return importlib.import_module(f"sdckit.{name}")
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'sdckit' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*__all__, *_SUBPACKAGES})
