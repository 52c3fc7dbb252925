"""Transformations of microdata; each returns a :class:`~sdckit.anonymize.release.Release`.

Importing this package registers every method in :data:`sdckit.anonymize.base.METHODS`: the command
line, recipes and the common tests find them there.
"""

# Imported in the order the command line lists the methods (importing a module registers it).
import sdckit.anonymize.recoding  # noqa: F401, I001
import sdckit.anonymize.mondrian  # noqa: F401, I001
import sdckit.anonymize.local_suppression  # noqa: F401, I001
import sdckit.anonymize.targeted_suppression  # noqa: F401, I001
import sdckit.anonymize.slicing  # noqa: F401, I001
import sdckit.anonymize.quasi_sensitive  # noqa: F401, I001
import sdckit.anonymize.microaggregation  # noqa: F401, I001
import sdckit.anonymize.perturbation  # noqa: F401, I001
import sdckit.anonymize.pram  # noqa: F401, I001
import sdckit.anonymize.record_swap  # noqa: F401, I001
import sdckit.anonymize.sampling  # noqa: F401, I001
import sdckit.anonymize.pseudonyms  # noqa: F401, I001
import sdckit.anonymize.synthesis  # noqa: F401, I001
from sdckit.anonymize.base import METHODS, Context, MethodSpec, run_method
from sdckit.anonymize.mondrian import MondrianParams, mondrian
from sdckit.anonymize.pseudonyms import PseudonymizeParams, pseudonymize
from sdckit.anonymize.quasi_sensitive import QuasiSensitiveParams, quasi_sensitive_anonymize
from sdckit.anonymize.record_swap import RecordSwapParams, record_swap
from sdckit.anonymize.recoding import (
    GeneralizeParams,
    TopBottomCodingParams,
    full_domain_generalization,
    top_bottom_coding,
)
from sdckit.anonymize.release import Release
from sdckit.anonymize.sampling import RecodeParams, SampleParams, recode, sample
from sdckit.anonymize.slicing import OverlappingSlicingParams, SlicingParams, slice_table
from sdckit.anonymize.local_suppression import LocalSuppressionParams, local_suppression
from sdckit.anonymize.targeted_suppression import TargetedSuppressionParams, targeted_suppression
from sdckit.anonymize.transform import apply_transformation, export_mappings, transformation_of

__all__ = [
    "sample",
    "record_swap",
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
