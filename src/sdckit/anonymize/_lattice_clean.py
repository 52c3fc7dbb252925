"""The clean nodes first: the Loss search with a gs-factor whose generalization factor is 0 (ARX's
``Metric.createLossMetric(1)``, generalization free of charge), under k-anonymity with a suppression
limit (:func:`sdckit.anonymize._lattice_walk.bounded_search`).

There every record kept costs nothing, so the level bound of Loss (ARX's ``MetricMDNMLoss`` lower
bound: every record charged as kept, ``gF·share``) is 0 at every node, and every node suppressing
nothing scores 0: a search pruned by that bound evaluates every node the models let through (2,931
of Adult's 4,320 nodes at 5%), to find the lowest of the nodes that tie at 0. The lattice is split
instead:

* A *clean* node suppresses nothing (records weighing at most 1e-9, the limit's own slack): its Loss
  is its level bound, and it satisfies k-anonymity with the limit exactly when it does with limit 0.
  The search with limit 0 (the same :class:`~sdckit.anonymize._lattice_search.Search`, its limit set
  to 0 for the call: k-anonymity is then monotone, the walk is compiled) finds the best clean node,
  by the same order (value, height, levels) as every search here.
* Every other node suppresses a class, so records weighing at least the least positive count of a
  combination: :func:`sdckit.utility.objectives.suppressing_loss_attributes` bounds its Loss from
  below by the levels only (``sF·least / n`` per attribute at ``gF = 0``), which the search with the
  limit uses in place of the level bound, starting from the best clean node. A clean node that
  bound rejects was weighed in the first search already; a node suppressing something whose bound
  exceeds the best value cannot win, as everywhere in the bounded search.

So the result is the exhaustive search's (tests/test_metric_options.py). On Adult (8
quasi-identifiers, k = 5, 5%) the best clean node scores 0 and the second search evaluates nothing.
With ``gF > 0`` the split is not used: the best clean node is far from the optimum there (Adult:
0.112 against 0.060 at gs-factor 0.9) and the level bound prunes as it is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from sdckit.anonymize._lattice_search import Node, Search
from sdckit.utility.objectives import factors


def applies(search: Search) -> bool:
    """Whether the clean nodes are searched first: Loss with a gs-factor of generalization factor 0,
    k-anonymity alone, a suppression limit."""
    return (
        search.metric.name == "loss"
        and not search.options.is_default
        and search.k_only is not None
        and search.max_suppressed > 0
        and factors(search.options.gs_factor)[0] == 0.0
    )


def clean_first(
    search: Search, bounded: Callable[..., tuple[Any, dict[str, Any]]]
) -> tuple[np.ndarray, Node | None, float] | None:
    """The bounds of the nodes that suppress something, and the best clean node with its value (None
    when no clean node satisfies the models); None when the split does not apply (:func:`applies`).
    ``bounded`` is the bounded search, run with the limit set to 0."""
    if not applies(search):
        return None
    limit = search.max_suppressed
    search.max_suppressed = 0.0
    try:
        best, _ = bounded(search, None, {}, None)
    finally:
        search.max_suppressed = limit
    counts = search.combinations.counts
    least = float(counts[counts > 0].min()) if np.any(counts > 0) else 0.0
    bounds = search.loss_bounds(least) if least > 0 else search.level_bounds()
    return bounds, best.node, best.value
