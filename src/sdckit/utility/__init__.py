"""Information loss of a release: utility metrics of a full-domain generalization.

Every metric reads a :class:`GeneralizationView` (the distinct quasi-identifier combinations of the
original table, their equivalence classes at the chosen levels and which are suppressed) and costs
O(combinations); lower is better for all of them. :data:`METRICS` is the registry used by the
generalization search, with a lower bound per metric for pruning. :func:`release_ncp` reads the
per-cell penalties every release records, so that all methods are compared with one metric.

The utility measures (``sdckit utility <name>``) are the modules here that declare one
(``register_measure("name", "utility", ...)``); :data:`sdckit.measures.UTILITY_MEASURES` discovers
them without importing them, so scikit-learn is imported only when one runs.
"""

from sdckit.utility.metrics import (
    METRICS,
    Metric,
    average_class_size,
    average_class_size_arx,
    compute_all,
    discernibility,
    discernibility_star,
    gcp,
    loss,
    loss_per_attribute,
    ncp,
    non_uniform_entropy,
    non_uniform_entropy_monotone,
    precision,
    release_ncp,
)
from sdckit.utility.view import GeneralizationView

__all__ = [
    "METRICS",
    "GeneralizationView",
    "Metric",
    "average_class_size",
    "average_class_size_arx",
    "compute_all",
    "discernibility",
    "discernibility_star",
    "gcp",
    "loss",
    "loss_per_attribute",
    "ncp",
    "non_uniform_entropy",
    "non_uniform_entropy_monotone",
    "precision",
    "release_ncp",
]
