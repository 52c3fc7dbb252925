"""Transformations of microdata; each returns a :class:`~sdckit.anonymize.release.Release`."""

from sdckit.anonymize.mondrian import mondrian
from sdckit.anonymize.recoding import full_domain_generalization, top_bottom_coding
from sdckit.anonymize.release import Release
from sdckit.anonymize.suppression import local_suppression, targeted_suppression
from sdckit.anonymize.transform import apply_transformation, export_mappings, transformation_of

__all__ = [
    "Release",
    "apply_transformation",
    "export_mappings",
    "full_domain_generalization",
    "local_suppression",
    "mondrian",
    "targeted_suppression",
    "top_bottom_coding",
    "transformation_of",
]
