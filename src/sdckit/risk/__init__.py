"""Risk measures: how exposed a record or a file is.

Every module here that declares a measure (``register_measure("name", "risk", ...)``) is discovered
by :data:`sdckit.measures.RISK_MEASURES` without being imported; the command line lists them in the
order that registry gives.
"""
