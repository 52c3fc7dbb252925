"""Transformations of microdata; each returns a :class:`~sdckit.anonymize.release.Release`."""

from sdckit.anonymize.release import Release

__all__ = ["Release"]
