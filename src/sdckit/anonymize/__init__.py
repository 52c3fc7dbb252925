"""Transformations of microdata; each returns a :class:`~sdckit.anonymize.release.Release`.

Every method of this package is in :data:`sdckit.anonymize.base.METHODS`: the command line, recipes
and the common tests find them there. The registry discovers the modules that declare a method
without importing them, and the names below are imported on first use, so that importing this
package, listing the methods and the command line's help stay fast (the methods import numba and
scipy).
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

from sdckit.anonymize.base import METHODS, Context, MethodSpec, run_method

# Where the public names live, imported on first use.
_LAZY = {
    "Release": "release",
    "GeneralizeParams": "recoding",
    "TopBottomCodingParams": "top_bottom_coding",
    "full_domain_generalization": "recoding",
    "top_bottom_coding": "top_bottom_coding",
    "MondrianParams": "mondrian",
    "mondrian": "mondrian",
    "LocalSuppressionParams": "local_suppression",
    "local_suppression": "local_suppression",
    "TargetedSuppressionParams": "targeted_suppression",
    "targeted_suppression": "targeted_suppression",
    "SlicingParams": "slicing",
    "OverlappingSlicingParams": "slicing",
    "slice_table": "slicing",
    "QuasiSensitiveParams": "quasi_sensitive",
    "quasi_sensitive_anonymize": "quasi_sensitive",
    "RecordSwapParams": "record_swap",
    "record_swap": "record_swap",
    "RommParams": "romm",
    "romm": "romm",
    "ShuffleParams": "shuffle",
    "shuffle": "shuffle",
    "SampleParams": "sampling",
    "RecodeParams": "recode",
    "sample": "sampling",
    "recode": "recode",
    "PseudonymizeParams": "pseudonyms",
    "pseudonymize": "pseudonyms",
    "apply_transformation": "transform",
    "export_mappings": "transform",
    "transformation_of": "transform",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


class _Package(types.ModuleType):
    """This package, whose functions named as their modules (``mondrian``, ``record_swap``, ...)
    stay functions when their module is imported (the import system sets the module as an attribute
    of its package): ``from sdckit.anonymize import mondrian`` is the function, as it always was."""

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, types.ModuleType) and _LAZY.get(name) == name and hasattr(value, name):
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])


__all__ = [
    "sample",
    "record_swap",
    "romm",
    "shuffle",
    "RommParams",
    "ShuffleParams",
    "recode",
    "pseudonymize",
    "SampleParams",
    "RecordSwapParams",
    "RecodeParams",
    "PseudonymizeParams",
    "METHODS",
    "Context",
    "GeneralizeParams",
    "LocalSuppressionParams",
    "MethodSpec",
    "MondrianParams",
    "OverlappingSlicingParams",
    "QuasiSensitiveParams",
    "Release",
    "SlicingParams",
    "TargetedSuppressionParams",
    "TopBottomCodingParams",
    "apply_transformation",
    "export_mappings",
    "full_domain_generalization",
    "local_suppression",
    "mondrian",
    "quasi_sensitive_anonymize",
    "run_method",
    "slice_table",
    "targeted_suppression",
    "top_bottom_coding",
    "transformation_of",
]
