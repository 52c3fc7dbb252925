"""Information-loss metrics of a full-domain generalization, computed on a :class:`GeneralizationView`.

Every metric reads the view's distinct quasi-identifier combinations (leaf codes, record counts,
equivalence classes, suppression flags) and costs O(combinations x quasi-identifiers) with no Python
loop over combinations or classes, so that a generalization search can evaluate it at thousands of
lattice nodes. For every metric **lower is better**.

Conventions shared by all metrics:

* ``n`` is ``view.n_records`` (suppressed records included); counts may be weights (floats).
* A suppressed record is charged the largest cost the metric can give a record: it is as if every
  quasi-identifier had been generalized to the root of its hierarchy (for DM: the size of the
  table). Exceptions, which follow ARX's definitions: DM* and ``entropy_monotone`` ignore
  suppression; ``entropy`` (ARX's non-monotonic non-uniform entropy) charges a suppressed record the
  cost of its generalized values plus the entropy of the suppressed records' values; ``aecs_arx``
  counts the suppressed records as one more class.

Which form is whose: ``loss`` is ARX's Loss; ``entropy`` and ``entropy_monotone`` are ARX's two
non-uniform entropies (its default, non-monotonic one, and the monotonic one); ``aecs_arx`` is ARX's
average class size and ``aecs`` the kept records over the kept classes (LeFevre et al. without
``/k``); ``dm_star`` is ARX's DM*; ``dm`` charges a suppressed record ``n`` (Bayardo & Agrawal).
All were checked against ARX 3.9.2 on Adult (tests/test_recoding.py).
* The hierarchies are nested (each level coarsens the one below, as :class:`Hierarchy` requires),
  so generalizing further only merges nodes: the leaves under a record's value only grow and
  equivalence classes only merge. This is what makes every metric monotone without suppression and
  what the lower bounds (:meth:`Metric.lower_bound`) rest on.
* With no records, sums are 0 and means are 0 (nothing was lost), except the average class size,
  which is ``nan`` when there is no kept class.

The registry :data:`METRICS` maps a short name to a :class:`Metric` holding the value function and a
lower bound valid for every coarser generalization of the same combinations, for pruning a search.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sdckit.errors import ConfigError
from sdckit.hierarchy import Hierarchy
from sdckit.utility.view import GeneralizationView

__all__ = [
    "METRICS",
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
]

Weights = Mapping[str, float] | Sequence[float] | None


# --------------------------------------------------------------------------------------------------
# Shared helpers
# --------------------------------------------------------------------------------------------------


def _record_weights(view: GeneralizationView, ignore_suppression: bool) -> tuple[np.ndarray, float, float]:
    """Per-combination weight of the kept records, the number of suppressed records, and ``n``.

    With ``ignore_suppression`` every record counts as kept (the view "as if nothing were
    suppressed", used by the lower bounds).
    """
    counts = np.asarray(view.counts, dtype=np.float64)
    n = float(counts.sum())
    suppressed = np.asarray(view.suppressed, dtype=bool)
    if ignore_suppression or not suppressed.any():
        return counts, 0.0, n
    kept = counts.copy()
    kept[suppressed] = 0.0
    return kept, n - float(kept.sum()), n


@dataclass(frozen=True)
class _LeafFrequencies:
    """Per quasi-identifier, records per leaf: over all records and over the kept ones."""

    all_records: list[np.ndarray]
    kept: list[np.ndarray]
    n_suppressed: float
    n: float


def _leaf_frequencies(
    view: GeneralizationView, ignore_suppression: bool, need_all: bool = False
) -> _LeafFrequencies:
    """Records per leaf of every quasi-identifier, over the kept records and, with ``need_all`` or
    when nothing is suppressed, over all records.

    Every per-record cost below depends only on the record's leaf and the level, so the sum over
    kept records is a dot product of these frequencies with a per-leaf cost: one weighted bincount
    per attribute over the combinations, then O(leaves of the hierarchy). With ``need_all`` and some
    suppression, the kept frequencies are the full ones minus a bincount over the suppressed
    combinations only.
    """
    counts = np.asarray(view.counts, dtype=np.float64)
    n = float(counts.sum())
    rows = (
        np.empty(0, dtype=np.intp)
        if ignore_suppression
        else np.flatnonzero(np.asarray(view.suppressed, dtype=bool))
    )
    all_records: list[np.ndarray] = []
    kept: list[np.ndarray] = []
    if rows.size == 0:
        for j in range(len(view.hierarchies)):
            frequency = view.all_leaf_frequencies(j)
            all_records.append(frequency)
            kept.append(frequency)
        return _LeafFrequencies(all_records, kept, 0.0, n)
    suppressed_counts = counts[rows]
    n_suppressed = float(suppressed_counts.sum())
    if need_all or view.leaf_frequencies is not None:
        # Fewer suppressed combinations than kept ones, typically: subtract them from the totals.
        suppressed_leaves = view.leaf_codes[rows]
        for j, hierarchy in enumerate(view.hierarchies):
            frequency = view.all_leaf_frequencies(j)
            removed = np.bincount(
                suppressed_leaves[:, j], weights=suppressed_counts, minlength=hierarchy.n_leaves
            )
            all_records.append(frequency)
            kept.append(np.maximum(frequency - removed, 0.0))
    else:
        kept_counts = counts.copy()
        kept_counts[rows] = 0.0
        for j, hierarchy in enumerate(view.hierarchies):
            kept.append(np.bincount(view.leaf_codes[:, j], weights=kept_counts, minlength=hierarchy.n_leaves))
    return _LeafFrequencies(all_records, kept, n_suppressed, n)


def _kept_totals(
    view: GeneralizationView,
    leaf_cost: Callable[[Hierarchy, int], np.ndarray],
    frequencies: _LeafFrequencies,
) -> np.ndarray:
    """Per quasi-identifier, the sum over kept records of ``leaf_cost(hierarchy, level)[leaf]``.

    ``leaf_cost`` returns one cost per leaf of the hierarchy (an array of the hierarchy's size, not
    of the data's), weighted by the kept records of every leaf.
    """
    totals = np.zeros(len(view.hierarchies), dtype=np.float64)
    for j, (hierarchy, level) in enumerate(zip(view.hierarchies, view.levels, strict=True)):
        totals[j] = float(frequencies.kept[j] @ leaf_cost(hierarchy, int(level)))
    return totals


def _loss_leaf_cost(hierarchy: Hierarchy, level: int) -> np.ndarray:
    domain = hierarchy.n_leaves
    if domain <= 1:
        return np.zeros(domain, dtype=np.float64)
    return (hierarchy.leaves_under(level) - 1.0) / (domain - 1.0)


def _ncp_leaf_cost(hierarchy: Hierarchy, level: int) -> np.ndarray:
    return hierarchy.ncp(level)[hierarchy.codes[:, level]]


def _resolve_weights(view: GeneralizationView | _Names, weights: Weights) -> np.ndarray:
    """Attribute weights as an array aligned with ``view.quasi_identifiers`` (default 1 each)."""
    names = view.quasi_identifiers
    if weights is None:
        return np.ones(len(names), dtype=np.float64)
    if isinstance(weights, Mapping):
        unknown = sorted(set(weights) - set(names))
        if unknown:
            raise ConfigError(
                f"weights: {unknown} are not quasi-identifiers of the view (expected some of {list(names)})"
            )
        resolved = np.array([float(weights.get(name, 1.0)) for name in names], dtype=np.float64)
    else:
        resolved = np.asarray(weights, dtype=np.float64).ravel()
        if resolved.shape[0] != len(names):
            raise ConfigError(
                f"weights: {resolved.shape[0]} values given for {len(names)} quasi-identifiers {list(names)}"
            )
    if not np.all(np.isfinite(resolved)) or np.any(resolved < 0):
        raise ConfigError(f"weights: every attribute weight must be finite and >= 0, got {resolved.tolist()}")
    return resolved


# --------------------------------------------------------------------------------------------------
# Loss (ARX)
# --------------------------------------------------------------------------------------------------


def _loss_per_attribute_array(view: GeneralizationView, ignore_suppression: bool = False) -> np.ndarray:
    frequencies = _leaf_frequencies(view, ignore_suppression)
    if frequencies.n <= 0:
        return np.zeros(len(view.hierarchies), dtype=np.float64)
    return (_kept_totals(view, _loss_leaf_cost, frequencies) + frequencies.n_suppressed) / frequencies.n


def _combine_loss(per_attribute: np.ndarray) -> float:
    if per_attribute.size == 0:
        return 0.0
    return float(np.exp(np.mean(np.log1p(per_attribute))) - 1.0)


def loss_per_attribute(view: GeneralizationView) -> dict[str, float]:
    """ARX's Loss of every quasi-identifier, in [0, 1].

    For quasi-identifier ``A`` with hierarchy of ``|D|`` leaves, a record whose value is generalized
    to ``g`` has raw loss ``leaves(g)/|D|``, normalized as ``(x - 1/|D|)/(1 - 1/|D|)``, that is
    ``(leaves(g) - 1)/(|D| - 1)``: 0 for an ungeneralized value, 1 at the root. A suppressed record
    counts 1. ``L_A`` is the mean over all ``n`` records. An attribute whose hierarchy has a single
    leaf (where the normalization is 0/0) costs 0 for kept records and 1 for suppressed ones.

    References: Prasser, Kohlmayer et al., ARX (``MetricMDNMLoss``); Iyengar (KDD 2002) for the
    underlying leaf-ratio loss.
    """
    values = _loss_per_attribute_array(view)
    return {name: float(value) for name, value in zip(view.quasi_identifiers, values, strict=True)}


def loss(view: GeneralizationView) -> float:
    """ARX's Loss of the whole generalization, in [0, 1].

    The per-attribute losses ``L_1 .. L_m`` of :func:`loss_per_attribute` are combined by the
    geometric mean ``prod_j (1 + L_j)^(1/m) - 1`` (ARX's aggregation for this metric), which stays in
    [0, 1] and is monotone in every ``L_j``. 0 when there is no quasi-identifier or no record.
    """
    return _combine_loss(_loss_per_attribute_array(view))


# --------------------------------------------------------------------------------------------------
# NCP and GCP
# --------------------------------------------------------------------------------------------------


def _ncp_total(view: GeneralizationView, weights: np.ndarray, ignore_suppression: bool = False) -> float:
    frequencies = _leaf_frequencies(view, ignore_suppression)
    totals = _kept_totals(view, _ncp_leaf_cost, frequencies) + frequencies.n_suppressed
    return float(totals @ weights)


def ncp(view: GeneralizationView, weights: Weights = None) -> float:
    """Total weighted certainty penalty ``sum_t sum_A w_A NCP_A(t)`` (Xu et al., KDD 2006).

    For a value generalized to node ``u`` of attribute ``A``'s hierarchy,
    ``NCP_A = 0`` if ``u`` covers a single leaf, else ``|leaves(u)| / |leaves(root)|``. A suppressed
    record counts ``NCP_A = 1`` for every attribute. ``weights`` (default 1 each) is a mapping from
    quasi-identifier name to weight (missing names weigh 1) or a sequence aligned with
    ``view.quasi_identifiers``.

    Numeric attributes generalized through interval hierarchies are charged the same leaf ratio: in a
    full-domain generalization the hierarchy's leaves *are* the attribute's values, so an interval
    node covers ``|leaves(u)|`` of the ``|D|`` values. The interval-width variant
    ``(z - y)/(max - min)`` of the specification belongs to multidimensional partitioning (Mondrian),
    where the boxes are not hierarchy nodes.
    """
    return _ncp_total(view, _resolve_weights(view, weights))


def _gcp_value(view: GeneralizationView, weights: np.ndarray, ignore_suppression: bool = False) -> float:
    n = view.n_records
    total_weight = float(weights.sum())
    if n <= 0 or total_weight <= 0:
        return 0.0
    return _ncp_total(view, weights, ignore_suppression) / (total_weight * n)


def gcp(view: GeneralizationView, weights: Weights = None) -> float:
    """Global certainty penalty ``sum_G |G| NCP(G) / (d n)``, in [0, 1] (Ghinita et al., VLDB 2007).

    ``NCP(G)`` is the (unweighted) NCP of any record of class ``G``; suppressed records count 1 per
    attribute, so ``GCP = ncp(view) / (d n)``. Extension: with ``weights`` the denominator is
    ``sum_A w_A`` instead of ``d``, so the value stays in [0, 1].
    """
    return _gcp_value(view, _resolve_weights(view, weights))


# --------------------------------------------------------------------------------------------------
# Discernibility and class size
# --------------------------------------------------------------------------------------------------


def _class_sizes(view: GeneralizationView, kept: np.ndarray) -> np.ndarray:
    return np.bincount(view.classes, weights=kept, minlength=view.n_classes)


def discernibility(view: GeneralizationView) -> float:
    """Discernibility metric ``DM = sum_{kept classes E} |E|^2 + |suppressed| * n``.

    Every record is charged the size of its equivalence class, and a suppressed record the size of
    the whole table (Bayardo & Agrawal, ICDE 2005).
    """
    kept, n_suppressed, n = _record_weights(view, ignore_suppression=False)
    sizes = _class_sizes(view, kept)
    return float(sizes @ sizes + n_suppressed * n)


def discernibility_star(view: GeneralizationView) -> float:
    """``DM* = sum over all equivalence classes E of |E|^2``, suppressed classes included.

    This variant ignores suppression (suppressed classes are charged their own size, as if kept), as
    ARX's DM* does; use :func:`discernibility` to penalize suppression.
    """
    sizes = _class_sizes(view, np.asarray(view.counts, dtype=np.float64))
    return float(sizes @ sizes)


def average_class_size(view: GeneralizationView) -> float:
    """Average equivalence class size ``C_avg`` = kept records / number of kept classes.

    LeFevre, DeWitt & Ramakrishnan (ICDE 2006) define ``C_avg = (n / #classes) / k``; the division by
    the privacy parameter ``k`` is left out here so the metric does not depend on the privacy model
    (divide by ``k`` to recover theirs). Suppressed records and classes are left out of both counts.
    ``nan`` when no class is kept.
    """
    kept, _, _ = _record_weights(view, ignore_suppression=False)
    suppressed_classes = _empty_classes(view)
    suppressed_classes[view.classes[np.asarray(view.suppressed, dtype=bool)]] = True
    n_kept_classes = view.n_classes - int(np.count_nonzero(suppressed_classes))
    if n_kept_classes <= 0:
        return math.nan
    return float(kept.sum()) / n_kept_classes


def average_class_size_arx(view: GeneralizationView) -> float:
    """ARX's average equivalence class size (``MetricSDAECS``): *all* ``n`` records divided by the
    kept classes plus one class for the suppressed records (when some are).

    On Adult (8 quasi-identifiers, k=5, 5% suppression) ARX's optimum (1,0,1,2,0,2,2,0) scores
    30,162 / 830 = 36.3398. :func:`average_class_size` divides the kept records by the kept classes
    instead. ``nan`` when there is no record.
    """
    n = view.n_records
    if view.n_classes <= 0 or n <= 0:
        return math.nan
    suppressed = np.asarray(view.suppressed, dtype=bool)
    suppressed_classes = np.zeros(view.n_classes, dtype=bool)
    suppressed_classes[view.classes[suppressed]] = True
    n_suppressed_classes = int(np.count_nonzero(suppressed_classes))
    groups = view.n_classes - n_suppressed_classes + (1 if n_suppressed_classes else 0)
    groups -= int(np.count_nonzero(_empty_classes(view) & ~suppressed_classes))
    return float(n) / groups


def _empty_classes(view: GeneralizationView) -> np.ndarray:
    """Classes of zero weight (a research subset's classes without a subset record: nothing of them
    is released, and ARX counts no such class); none when every combination weighs something."""
    counts = np.asarray(view.counts, dtype=np.float64)
    if not len(counts) or counts.min() > 0:
        return np.zeros(view.n_classes, dtype=bool)
    return np.bincount(view.classes, weights=counts, minlength=view.n_classes) <= 0


# --------------------------------------------------------------------------------------------------
# Precision (Sweeney)
# --------------------------------------------------------------------------------------------------


def _level_ratios(view: GeneralizationView) -> np.ndarray:
    heights = np.array([hierarchy.height for hierarchy in view.hierarchies], dtype=np.float64)
    levels = np.asarray(view.levels, dtype=np.float64)
    return np.divide(levels, heights, out=np.zeros_like(levels), where=heights > 0)


def _precision_value(view: GeneralizationView, ignore_suppression: bool = False) -> float:
    d = len(view.hierarchies)
    kept, n_suppressed, n = _record_weights(view, ignore_suppression)
    if n <= 0 or d == 0:
        return 0.0
    kept_records = n - n_suppressed
    return float((kept_records * _level_ratios(view).sum() + n_suppressed * d) / (n * d))


def precision(view: GeneralizationView) -> float:
    """Sweeney's precision reported as a loss: ``1 - Prec``, in [0, 1].

    Sweeney (2002) defines ``Prec = 1 - sum_records sum_A (level_A / height_A) / (n d)``, where higher
    is better. This function returns the subtracted term, the mean over records and quasi-identifiers
    of ``level_A / height_A``, so that, like every metric here, lower is better. An attribute whose
    hierarchy has height 0 costs 0; a suppressed record costs 1 for every attribute (as if generalized
    to the top level).
    """
    return _precision_value(view)


# --------------------------------------------------------------------------------------------------
# Non-uniform entropy
# --------------------------------------------------------------------------------------------------


def _entropy_generalization(view: GeneralizationView) -> float:
    """``sum_A sum_records -log2(f_A(v) / f_A(g_A(v)))`` over *all* records, each charged the cost of
    its generalized values whether it is suppressed or not: depends on the levels only."""
    total = 0.0
    for j, (hierarchy, level) in enumerate(zip(view.hierarchies, view.levels, strict=True)):
        # f(v): records of the original data with leaf v; f(g): with any leaf under g.
        leaf_frequency = np.asarray(view.all_leaf_frequencies(j), dtype=np.float64)
        node_codes = hierarchy.codes[:, int(level)]
        node_frequency = np.bincount(node_codes, weights=leaf_frequency)
        log_leaf = np.log2(leaf_frequency, out=np.zeros_like(leaf_frequency), where=leaf_frequency > 0)
        log_node = np.log2(node_frequency, out=np.zeros_like(node_frequency), where=node_frequency > 0)
        total += float(leaf_frequency @ (log_node[node_codes] - log_leaf))
    return total


def _entropy_of_suppressed(view: GeneralizationView) -> float:
    """ARX's charge for the suppressed records: per attribute, ``-sum_g c_g log2(c_g / S)`` over the
    ``S`` suppressed records, ``c_g`` of them with generalized value ``g`` at the view's level (the
    entropy of their generalized values, in bits times ``S``)."""
    rows = np.flatnonzero(np.asarray(view.suppressed, dtype=bool))
    if rows.size == 0:
        return 0.0
    weights = np.asarray(view.counts, dtype=np.float64)[rows]
    n_suppressed = float(weights.sum())
    if n_suppressed <= 0:
        return 0.0
    total = 0.0
    for j, (hierarchy, level) in enumerate(zip(view.hierarchies, view.levels, strict=True)):
        generalized = hierarchy.codes[view.leaf_codes[rows, j], int(level)]
        per_value = np.bincount(generalized, weights=weights)
        per_value = per_value[per_value > 0]
        total -= float(per_value @ np.log2(per_value / n_suppressed))
    return total


def non_uniform_entropy(view: GeneralizationView) -> float:
    """ARX's (non-monotonic) non-uniform entropy, in bits: ARX's default "Non-uniform entropy"
    (``Metric.createEntropyMetric()``, class ``MetricMDNUNMEntropy``, sum over attributes).

    ``sum_A sum_records -log2( f_A(v) / f_A(g_A(v)) )`` over every record, suppressed ones included
    (each charged the cost of its generalized values), plus, per attribute, ``-sum_g c_g log2(c_g/S)``
    over the ``S`` suppressed records, ``c_g`` of them with generalized value ``g``. ``f_A(v)`` is the
    number of records of the original data (all ``n``) whose value of ``A`` is ``v`` and ``f_A(g)``
    the number whose value lies under ``g`` (Gionis & Tassa, IEEE TKDE 2009, for the first term; De
    Waal & Willenborg 1999). Not monotone with suppression: suppressing a class can lower the value.
    On Adult (8 quasi-identifiers, k=5, 5% suppression) ARX 3.9.2 scores 180,132.40848244698 at levels
    (sex, age, race, marital-status, education, native-country, workclass, salary-class) =
    (0,0,1,1,2,2,2,0), which this function reproduces. ARX rounds each attribute's value to about
    15 significant digits; this function does not.
    """
    return _entropy_generalization(view) + _entropy_of_suppressed(view)


def non_uniform_entropy_monotone(view: GeneralizationView) -> float:
    """ARX's monotonic non-uniform entropy (``Metric.createEntropyMetric(true)``,
    ``MetricMDNUEntropy``): the first term of :func:`non_uniform_entropy` alone, every record charged
    the cost of its generalized values, suppression ignored. It depends on the levels only."""
    return _entropy_generalization(view)


# --------------------------------------------------------------------------------------------------
# Registry
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Metric:
    """A utility metric of a :class:`GeneralizationView` (lower is better) and its lower bound.

    ``lower_bound(view, max_suppressed)`` is at most ``value(view')`` for every view' over the same
    combinations whose levels are componentwise >= ``view.levels`` and in which at most
    ``max_suppressed`` records are suppressed (whichever they are); a search may prune every
    generalization above ``view`` whose bound already exceeds the best value found.
    ``monotonic_without_suppression`` says that, with nothing suppressed, more generalization never
    lowers the value; it holds for every metric here.

    Derivation of the bounds. For entropy the bound is its first term (every record charged its
    generalized values, which only grow), since the suppressed records' term is >= 0. For loss, ncp,
    gcp, precision, dm and dm_star, each record's
    cost is a non-decreasing function of how far its values are generalized: the leaves under a
    value only grow, the frequency ``f(g)`` of a generalized value only grows, and a class of view' is
    a union of classes ``E_i`` of view, so ``|E'|^2 >= sum_i |E_i|^2``. A suppressed record is charged
    the maximum (the root for every attribute; ``n >= |E|`` per record for DM). Hence the value of
    ``view`` computed as if nothing were suppressed is <= the value of any coarser view', whatever it
    suppresses; ``max_suppressed`` is not needed. For aecs, the kept classes of view' are disjoint
    unions of classes of view, so there are at most ``view.n_classes`` of them, and they hold at least
    ``n - max_suppressed`` records: ``max(n - max_suppressed, 0) / view.n_classes`` is a bound (and
    aecs is monotone without suppression because classes only merge). For aecs_arx, view' has at
    most ``view.n_classes`` classes, and its kept classes plus the class of its suppressed records are
    at most that many: ``n / view.n_classes`` is a bound.
    """

    name: str
    description: str
    value_function: Callable[[GeneralizationView], float]
    lower_bound_function: Callable[[GeneralizationView, float], float]
    monotonic_without_suppression: bool = True

    def value(self, view: GeneralizationView) -> float:
        return float(self.value_function(view))

    def lower_bound(self, view: GeneralizationView, max_suppressed: float) -> float:
        max_suppressed = float(max_suppressed)
        if math.isnan(max_suppressed) or max_suppressed < 0:
            raise ConfigError(f"max_suppressed: must be >= 0, got {max_suppressed}")
        return float(self.lower_bound_function(view, max_suppressed))

    __call__ = value


def _unsuppressed_bound(
    function: Callable[[GeneralizationView], float],
) -> Callable[[GeneralizationView, float], float]:
    def bound(view: GeneralizationView, max_suppressed: float) -> float:
        return function(view)

    return bound


def _average_class_size_bound(view: GeneralizationView, max_suppressed: float) -> float:
    # Kept classes of a coarser view' are disjoint unions of classes of view, so there are at most
    # view.n_classes of them, and they hold at least n - max_suppressed records.
    if view.n_classes <= 0:
        return 0.0
    return max(view.n_records - max_suppressed, 0.0) / view.n_classes


def _average_class_size_arx_bound(view: GeneralizationView, max_suppressed: float) -> float:
    # A coarser view' has at most view.n_classes classes; its kept classes plus the one class of the
    # suppressed records are at most as many (the suppressed records come from at least one class).
    if view.n_classes <= 0:
        return 0.0
    return view.n_records / view.n_classes


def _unit_weights(view: GeneralizationView) -> np.ndarray:
    return np.ones(len(view.hierarchies), dtype=np.float64)


METRICS: dict[str, Metric] = {
    metric.name: metric
    for metric in (
        Metric(
            "loss",
            "ARX Loss: geometric mean of per-attribute leaf-ratio losses, in [0, 1]",
            loss,
            lambda view, _: _combine_loss(_loss_per_attribute_array(view, ignore_suppression=True)),
        ),
        Metric(
            "ncp",
            "Total certainty penalty (Xu et al. 2006)",
            ncp,
            lambda view, _: _ncp_total(view, _unit_weights(view), ignore_suppression=True),
        ),
        Metric(
            "gcp",
            "Global certainty penalty, in [0, 1] (Ghinita et al. 2007)",
            gcp,
            lambda view, _: _gcp_value(view, _unit_weights(view), ignore_suppression=True),
        ),
        Metric(
            "dm",
            "Discernibility metric, suppressed records cost n (Bayardo & Agrawal 2005)",
            discernibility,
            _unsuppressed_bound(discernibility_star),
        ),
        Metric(
            "dm_star",
            "Discernibility over all classes, ignoring suppression (ARX DM*)",
            discernibility_star,
            _unsuppressed_bound(discernibility_star),
        ),
        Metric(
            "aecs",
            "Average equivalence class size over kept classes (LeFevre et al. 2006, without /k)",
            average_class_size,
            _average_class_size_bound,
        ),
        Metric(
            "aecs_arx",
            "ARX's average class size: all records / (kept classes + 1 for the suppressed records)",
            average_class_size_arx,
            _average_class_size_arx_bound,
        ),
        Metric(
            "precision",
            "Sweeney's precision loss 1 - Prec, in [0, 1]",
            precision,
            lambda view, _: _precision_value(view, ignore_suppression=True),
        ),
        Metric(
            "entropy",
            "ARX's non-monotonic non-uniform entropy in bits (suppressed records: entropy of their values)",
            non_uniform_entropy,
            lambda view, _: _entropy_generalization(view),
        ),
        Metric(
            "entropy_monotone",
            "ARX's monotonic non-uniform entropy in bits (suppression ignored)",
            non_uniform_entropy_monotone,
            lambda view, _: _entropy_generalization(view),
        ),
    )
}


def compute_all(view: GeneralizationView) -> dict[str, float]:
    """The value of every metric of :data:`METRICS`, by name."""
    return {name: metric.value(view) for name, metric in METRICS.items()}


# --------------------------------------------------------------------------------------------------
# NCP of any release (one metric for every method)
# --------------------------------------------------------------------------------------------------


def release_ncp(release: Any, weights: Weights = None) -> float:
    """Mean normalized certainty penalty of a release, equation (4) of Orooji & Knapp (2019):
    ``NCP(D') = (1/n) sum_i sum_j w_j NCP_Aj(r_i)`` with attribute weights summing to 1 (default
    ``1/q`` each), read from ``release.cell_penalty``. For value suppression ``NCP_Aj`` is 1 for a
    suppressed cell and 0 otherwise, so this is equation (5): ``S / (n q)``. For a generalization it
    equals GCP. ``weights`` as for :func:`ncp` (mapping or sequence over the quasi-identifiers);
    they are normalized to sum 1.
    """
    penalty = getattr(release, "cell_penalty", None)
    if penalty is None:
        raise ConfigError(f"the {release.method!r} release does not record the NCP of its cells")
    names = tuple(release.quasi_identifiers)
    n, q = penalty.shape
    if q != len(names):
        raise ConfigError(f"cell_penalty has {q} columns for {len(names)} quasi-identifiers")
    if n == 0 or q == 0:
        return 0.0
    resolved = _resolve_weights(_Names(names), weights)
    total = float(resolved.sum())
    if total <= 0:
        raise ConfigError("weights: at least one attribute weight must be positive")
    per_record = penalty @ (resolved / total)
    multiplicity = getattr(release, "multiplicity", None)
    if multiplicity is not None:
        return float((per_record * multiplicity).sum() / multiplicity.sum())
    return float(per_record.mean())


@dataclass(frozen=True)
class _Names:
    """What :func:`_resolve_weights` reads of a view: the quasi-identifier names."""

    quasi_identifiers: tuple[str, ...]
