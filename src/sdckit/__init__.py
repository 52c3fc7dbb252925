"""sdckit: statistical disclosure control and privacy-preserving data publishing.

The public API, re-exported from the modules that define it. The names are loaded on first use
(PEP 562), so that the command line can start (and handle Ctrl-C) before polars and numba load.
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
    "protect": "sdckit.recipes",
    "read_table": "sdckit.table",
    "write_table": "sdckit.table",
}

__all__ = ["__version__", *sorted(_EXPORTS)]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'sdckit' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
