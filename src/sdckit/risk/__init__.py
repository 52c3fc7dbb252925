"""Risk measures: how exposed a record or a file is."""

from sdckit.risk import reidentification  # noqa: F401  (registers the measure)
