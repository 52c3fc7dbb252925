"""Risk measures: how exposed a record or a file is. Importing the package registers the measures in
:data:`sdckit.measures.RISK_MEASURES`."""

from sdckit.risk import linkage  # noqa: F401  (registers risk measure linkage)
