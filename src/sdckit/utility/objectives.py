"""The search objectives of full-domain generalization beyond :data:`sdckit.utility.metrics.METRICS`:
ARX's generalization/suppression factor of the Loss metric, attribute weights, and ARX's
classification metric (a target attribute whose majority class each released class should keep).

**gs-factor** (ARX's ``Metric.createLossMetric(gsFactor)``, ``MetricMDNMLoss``). A factor ``g`` in
[0, 1] sets a generalization factor ``gF = 1`` for ``g <= 0.5`` else ``2 - 2g`` and a suppression factor
``sF = 2g`` for ``g < 0.5`` else ``1``. Per quasi-identifier ``A`` with ``|D|`` leaves, a kept record whose
value is generalized to a node over ``s·|D|`` leaves (``s``, its domain share) is charged ``gF·s``; a
suppressed one ``1`` when ``sF = 1``, else ``s + sF·(1 - s)`` (its generalized value's share plus ``sF`` of
the rest). The sum ``S_A`` over the ``n`` records is normalized as ``(S_A - gF·n/|D|) / (n - gF·n/|D|)``
(ARX's minimum is every record ungeneralized), clipped at 0. At ``g = 0.5`` (``gF = sF = 1``) this is
:func:`sdckit.utility.metrics.loss_per_attribute`; ``g = 0`` charges a suppressed record no more than
its generalized value (suppression preferred), ``g = 1`` charges kept records nothing
(generalization preferred). An attribute with one leaf costs 0 kept and ``sF`` suppressed.

**Attribute weights** (ARX's ``ARXConfiguration.setAttributeWeight``). For Loss, as ARX: the weights
are divided by the largest, and the per-attribute losses combined by ``prod_A (1 + w_A L_A)^(1/m) - 1``
(ARX's weighted geometric mean); precision is their weighted arithmetic mean and the entropies their
weighted sum, as ARX's ``MetricMDNMPrecision`` and ``MetricMDNU(NM)Entropy`` aggregate them. For ncp and
gcp they are the weights of :func:`~sdckit.utility.metrics.ncp` and :func:`~sdckit.utility.metrics.gcp`.
An attribute not named weighs 1 (ARX: 0.5 before the division).

**Classification** (ARX's ``Metric.createClassificationMetric(gsFactor)``, ``MetricSDClassification``).
With penalties ``pS = g`` (a suppressed record), ``pI = gF`` (a record whose target value is not its
class's majority value) and ``pN = sF`` (every record of a class without a single most frequent value)
and ``pMax = max(pS, pI, pN)``, the value is ``sum of penalties / (pMax · n)``, in [0, 1]. When the target
is itself a quasi-identifier, the kept records are grouped by their other quasi-identifiers, the
distribution is that of the target's generalized values, and with the level's scale factor
``s = 1 - (nodes at the level - 1) / (leaves - 1)`` a non-majority record costs ``pI·(1 - s) + pMax·s``
(``pN`` likewise), every record costing ``pMax`` at ``s = 1``, as ARX does. The value is not monotone
(merging a tied class with another can lower it; suppression costs ``pS``, possibly below ``pI``), so a
search cannot keep only the minimal satisfying nodes. ARX computes no lower bound; here, for a target
that is not a quasi-identifier, the records off their class's majority only add up when classes
merge, which gives one (:func:`_classification_bound`); for a quasi-identifier target the bound is 0
(the like bound within the groups of the other quasi-identifiers, least over the target's levels,
pruned 1,377 of Adult's 3,821 nodes but doubled the search's CPU time: it groups every node twice).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from sdckit.errors import ConfigError
from sdckit.frequency import encode
from sdckit.params import spell
from sdckit.utility.metrics import (
    METRICS,
    Metric,
    _entropy_generalization,
    _gcp_value,
    _leaf_frequencies,
    _ncp_total,
    _precision_value,
    _resolve_weights,
    gcp,
    ncp,
    non_uniform_entropy,
)
from sdckit.utility.view import GeneralizationView

__all__ = [
    "DEFAULT_GS_FACTOR",
    "GS_FACTOR_METRICS",
    "MetricOptions",
    "SuppressedLossBound",
    "WEIGHTED_METRICS",
    "Target",
    "classification",
    "factors",
    "loss_attributes",
    "search_metric",
    "suppressing_loss_bounds",
    "target_of",
    "weighted_loss",
]

#: ARX's default: generalization and suppression weigh alike (today's Loss).
DEFAULT_GS_FACTOR = 0.5
#: The metrics a gs-factor changes.
GS_FACTOR_METRICS = ("loss", "classification")
#: The metrics attribute weights change.
WEIGHTED_METRICS = ("loss", "ncp", "gcp", "precision", "entropy", "entropy_monotone")


def factors(gs_factor: float) -> tuple[float, float]:
    """ARX's generalization and suppression factors ``(gF, sF)`` of a gs-factor."""
    suppression = 2.0 * gs_factor if gs_factor < 0.5 else 1.0
    generalization = 1.0 if gs_factor <= 0.5 else 1.0 - 2.0 * (gs_factor - 0.5)
    return generalization, suppression


def loss_attributes(
    view: GeneralizationView, gs_factor: float, ignore_suppression: bool = False
) -> np.ndarray:
    """Loss of every quasi-identifier under ``gs_factor`` (module docstring), in [0, 1]. With
    ``ignore_suppression`` every record is charged as kept: a lower bound of the value of the view
    and of every coarser one, whatever they suppress (a suppressed record costs at least ``s``, at
    least ``gF·s``, and ``s`` only grows with the level)."""
    frequencies = _leaf_frequencies(view, ignore_suppression, need_all=True)
    n = frequencies.n
    result = np.zeros(len(view.hierarchies), dtype=np.float64)
    if n <= 0:
        return result
    generalization, suppression = factors(gs_factor)
    for j, (hierarchy, level) in enumerate(zip(view.hierarchies, view.levels, strict=True)):
        domain = hierarchy.n_leaves
        kept = frequencies.kept[j]
        n_suppressed = n - float(kept.sum())
        if domain <= 1:
            result[j] = suppression * n_suppressed / n
            continue
        share = hierarchy.leaves_under(int(level)) / domain
        kept_share = float(kept @ share)
        if n_suppressed > 0:
            suppressed_share = float((frequencies.all_records[j] - kept) @ share)
            charged = (
                n_suppressed
                if suppression == 1.0
                else suppressed_share + suppression * (n_suppressed - suppressed_share)
            )
        else:
            charged = 0.0
        least = generalization * n / domain
        result[j] = max((generalization * kept_share + charged - least) / (n - least), 0.0)
    return result


def suppressing_loss_attributes(view: GeneralizationView, gs_factor: float, least: float) -> np.ndarray:
    """A lower bound of the Loss of every quasi-identifier under ``gs_factor`` at ``view``'s levels for
    a node that suppresses records weighing at least ``least`` in all (the view's own suppression is
    ignored: every record is counted).

    Proof. Per attribute ``A`` with ``|D|`` leaves, let ``s_r`` be the share of record ``r``'s
    generalized value and ``T = sum_r w_r s_r`` over all records. Kept, ``r`` costs ``gF·s_r``;
    suppressed, ``1`` when ``sF = 1`` and ``s_r + sF·(1 - s_r)`` otherwise (then ``gF = 1``). So
    ``S_A = gF·T + sum over the suppressed records of w_r·e(s_r)`` with the increment ``e(s) = 1 - gF·s``
    (``sF = 1``) or ``sF·(1 - s)`` (``gF = 1``), both at least 0 and decreasing in ``s``; hence
    ``S_A >= gF·T + W·e(s_max)`` for suppressed records weighing ``W >= least``, ``s_max`` the largest
    share of a value present at this level. The normalization ``(S_A - m) / (n - m)`` and the clip at 0
    are increasing in ``S_A``; an attribute with one leaf costs ``sF·W / n >= sF·least / n``. The same
    records are suppressed in every attribute, and the weighted geometric mean is increasing in each
    term, so these terms combined bound the node's Loss. With ``least = 0`` they are
    :func:`loss_attributes` with ``ignore_suppression`` (ARX's ``MetricMDNMLoss`` bound: ``gF·T``)."""
    frequencies = _leaf_frequencies(view, True, need_all=True)
    n = frequencies.n
    result = np.zeros(len(view.hierarchies), dtype=np.float64)
    if n <= 0:
        return result
    generalization, suppression = factors(gs_factor)
    for j, (hierarchy, level) in enumerate(zip(view.hierarchies, view.levels, strict=True)):
        domain = hierarchy.n_leaves
        every = frequencies.all_records[j]
        if domain <= 1:
            result[j] = suppression * least / n
            continue
        share = hierarchy.leaves_under(int(level)) / domain
        present = share[every > 0]
        largest = float(present.max()) if present.size else 1.0
        increment = 1.0 - generalization * largest if suppression == 1.0 else suppression * (1.0 - largest)
        least_cost = generalization * n / domain
        charged = generalization * float(every @ share) + least * increment
        result[j] = max((charged - least_cost) / (n - least_cost), 0.0)
    return result


def _normalized(weights: np.ndarray) -> np.ndarray:
    return weights / float(weights.max())


@dataclass(frozen=True)
class SuppressedLossBound:
    """The bound of :func:`suppressing_loss_attributes` for any levels and suppressed weight, from
    per (attribute, level) terms measured once: at an evaluated node, whose suppressed records are
    counted (``Node.n_suppressed``) before its classes are, the weighted Loss is at least
    ``bound(levels, n_suppressed)``, so a node whose bound exceeds the best value found is not
    weighed (its classes are not computed). Adult, 8 quasi-identifiers, k = 5, 5%: at gs-factor 0.9
    one satisfying node of 394 whose level bound lies below the optimum has this bound below it."""

    charged: np.ndarray  # (d, levels): gF times the records' summed shares (0 for one leaf)
    increment: np.ndarray  # (d, levels): least extra cost of a suppressed record (sF for one leaf)
    least: np.ndarray  # (d,): ARX's minimum gF·n/|D| (0 for one leaf)
    weights: np.ndarray  # (d,): divided by the largest
    n: float

    @classmethod
    def build(
        cls, views: list[GeneralizationView], gs_factor: float, weights: Mapping[str, float] | None
    ) -> SuppressedLossBound:
        """From the views with every attribute at level 0, 1, ... (capped at its top), nothing
        suppressed."""
        d = len(views[0].hierarchies)
        charged, increment = np.zeros((d, len(views))), np.zeros((d, len(views)))
        least = np.zeros(d)
        generalization, suppression = factors(gs_factor)
        n = 0.0
        for level, view in enumerate(views):
            frequencies = _leaf_frequencies(view, True, need_all=True)
            n = frequencies.n
            for j, (hierarchy, at) in enumerate(zip(view.hierarchies, view.levels, strict=True)):
                domain = hierarchy.n_leaves
                if domain <= 1:
                    increment[j, level] = suppression
                    continue
                every = frequencies.all_records[j]
                share = hierarchy.leaves_under(int(at)) / domain
                present = share[every > 0]
                largest = float(present.max()) if present.size else 1.0
                increment[j, level] = (
                    1.0 - generalization * largest if suppression == 1.0 else suppression * (1.0 - largest)
                )
                charged[j, level] = generalization * float(every @ share)
                least[j] = generalization * n / domain
        return cls(charged, increment, least, _normalized(_resolve_weights(views[0], weights)), n)

    def __call__(self, levels: tuple[int, ...], suppressed: float) -> float:
        if self.n <= 0 or not levels:
            return 0.0
        at = np.asarray(levels, dtype=np.int64)
        rows = np.arange(len(at))
        charged = self.charged[rows, at] + suppressed * self.increment[rows, at]
        per_attribute = np.maximum((charged - self.least) / (self.n - self.least), 0.0)
        return float(np.exp(np.mean(np.log1p(per_attribute * self.weights))) - 1.0)


def weighted_loss(
    view: GeneralizationView,
    gs_factor: float = DEFAULT_GS_FACTOR,
    weights: Mapping[str, float] | None = None,
    ignore_suppression: bool = False,
) -> float:
    """ARX's Loss under ``gs_factor`` and attribute ``weights`` (module docstring), in [0, 1]."""
    per_attribute = loss_attributes(view, gs_factor, ignore_suppression)
    if per_attribute.size == 0:
        return 0.0
    scaled = per_attribute * _normalized(_resolve_weights(view, weights))
    return float(np.exp(np.mean(np.log1p(scaled))) - 1.0)


# --------------------------------------------------------------------------------------------------
# Classification
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """The target attribute of the classification metric over a search's distinct combinations:
    ``quasi_identifier`` is its position among the quasi-identifiers, or -1 when it is another
    attribute, whose (combination, value code, records) triples are ``pairs``."""

    name: str
    quasi_identifier: int
    combination: np.ndarray  # (P,) int64: the combination of each (combination, value) pair
    values: np.ndarray  # (P,) int64
    counts: np.ndarray  # (P,) float64
    whole: bool = True  # the record weights are whole numbers (or absent): sums of them are exact

    @functools.cached_property
    def width(self) -> int:
        """The largest value code plus 1 (0 without pairs)."""
        return int(self.values.max()) + 1 if len(self.values) else 0


def target_of(
    data: pl.DataFrame,
    name: str,
    quasi_identifiers: tuple[str, ...],
    record_combination: np.ndarray,
    weights: np.ndarray | None,
) -> Target:
    """The target ``name`` over the distinct combinations (``record_combination``: each record's)."""
    if name in quasi_identifiers:
        empty = np.zeros(0, dtype=np.int64)
        return Target(name, quasi_identifiers.index(name), empty, empty, np.zeros(0))
    if name not in data.columns:
        raise ConfigError(f"{spell('target')}: '{name}' is not a column of the data")
    encoding = encode(data, [name])
    codes = encoding.codes[0].astype(np.int64)
    n_values = encoding.cardinalities[0] + 1
    codes = np.where(codes < 0, n_values - 1, codes)  # a missing value is a class of its own
    pair = record_combination.astype(np.int64) * n_values + codes
    cells = (int(record_combination.max()) + 1) * n_values if len(pair) else 0
    if cells <= 4 * len(pair) + 1024:
        # A direct count over the (combination, value) cells: the pairs present in order, each one's
        # records summed in record order, as np.unique and a bincount over its inverse give them.
        unique = np.flatnonzero(np.bincount(pair, minlength=cells))
        counts = np.bincount(pair, weights=weights, minlength=cells)[unique].astype(np.float64)
    else:
        unique, inverse = np.unique(pair, return_inverse=True)
        counts = np.bincount(inverse, weights=weights, minlength=len(unique)).astype(np.float64)
    whole = weights is None or bool(np.all(weights == np.floor(weights)))  # then every sum is exact
    return Target(name, -1, unique // n_values, unique % n_values, counts, whole)


def _class_tops(
    groups: np.ndarray, n_groups: int, values: np.ndarray, counts: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per group (dense ids ``groups`` of (group, value, records) triples): its records, and the
    records of its most and second most frequent values (0 or -1 where it has fewer values: either
    differs from its top)."""
    width = int(values.max()) + 1
    top1: np.ndarray
    top2: np.ndarray
    if n_groups * width <= 2**22:
        # A dense (group x value) table: an empty cell is 0, below every value a group holds, so the
        # two largest cells are the two largest frequencies (or 0 where a group has one value).
        table = np.bincount(groups * width + values, weights=counts, minlength=n_groups * width)
        table = table.reshape(n_groups, width)
        sizes = table.sum(axis=1)
        if width == 1:
            top1, top2 = table[:, 0], np.zeros(n_groups)
        else:
            two = np.partition(table, width - 2, axis=1)[:, width - 2 :]
            top1, top2 = two[:, 1], two[:, 0]
        return sizes, top1, top2
    pairs, inverse = np.unique(groups * width + values, return_inverse=True)
    summed = np.bincount(inverse, weights=counts, minlength=len(pairs))
    pair_groups = pairs // width
    sizes = np.bincount(pair_groups, weights=summed, minlength=n_groups)
    order = np.lexsort((-summed, pair_groups))
    pair_groups, summed = pair_groups[order], summed[order]
    start = np.ones(len(pair_groups), dtype=bool)
    start[1:] = pair_groups[1:] != pair_groups[:-1]
    second = np.zeros(len(pair_groups), dtype=bool)
    second[1:] = start[:-1] & ~start[1:]
    top1, top2 = np.zeros(n_groups), np.full(n_groups, -1.0)
    top1[pair_groups[start]] = summed[start]
    top2[pair_groups[second]] = summed[second]
    return sizes, top1, top2


def _class_penalty(
    groups: np.ndarray,
    n_groups: int,
    values: np.ndarray,
    counts: np.ndarray,
    infrequent: float,
    no_majority: float,
) -> float:
    """Sum over the groups of ``(size - top1)·infrequent`` when a single value is the most frequent
    (``top1`` its records), else ``size·no_majority``."""
    if n_groups == 0 or len(groups) == 0:
        return 0.0
    sizes, top1, top2 = _class_tops(groups, n_groups, values, counts)
    majority = top1 != top2
    return float(np.where(majority, (sizes - top1) * infrequent, sizes * no_majority).sum())


#: The last node's (class x target value) table: (classes array, target, its table) (_target_table).
_LAST_TABLE: list[Any] = [None]


def _target_table(
    view: GeneralizationView, target: Target
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The (class x target value) table of ``view``'s records (all of them, suppressed or not) and
    each class's two largest cells (:func:`sdckit._kernels_objectives.class_target_table`), or None
    when the table would be large (then :func:`_class_tops` groups the triples). The search asks for
    the bound and then the value of the same node: the last table is kept for its classes array."""
    last = _LAST_TABLE[0]
    if last is not None and last[0] is view.classes and last[1] is target:
        return last[2]
    width = target.width
    if view.n_classes * width > 2**22:
        return None
    from sdckit._kernels_objectives import class_target_table

    classes = np.asarray(view.classes)  # int32 or int64: the kernel takes either
    table = class_target_table(
        classes, target.combination, target.values, target.counts, view.n_classes, width
    )
    _LAST_TABLE[0] = (view.classes, target, table)
    return table


def _kept_penalty(
    table: tuple[np.ndarray, np.ndarray, np.ndarray],
    passes: np.ndarray,
    width: int,
    infrequent: float,
    no_majority: float,
) -> float:
    """:func:`_class_penalty` of the kept classes (``passes``) from the table of every class: the same
    sums in the same order (a suppressed class's row is 0 there, as here; ``width`` the kept values')."""
    cells, top1, top2 = table
    sizes = cells[:, :width].sum(axis=1)
    top1, top2 = top1.copy(), top2.copy()
    sizes[~passes] = 0.0
    top1[~passes] = 0.0
    top2[~passes] = 0.0
    if width == 1:
        top2[:] = 0.0
    majority = top1 != top2
    return float(np.where(majority, (sizes - top1) * infrequent, sizes * no_majority).sum())


def _other_groups(view: GeneralizationView, j: int, rows: np.ndarray) -> tuple[np.ndarray, int]:
    """Dense group ids of ``rows`` (combinations) by their generalized values of every
    quasi-identifier but ``j``, and the number of groups."""
    others = [i for i in range(len(view.hierarchies)) if i != j]
    key = np.zeros(len(rows), dtype=np.int64)
    radix = 1
    for i in others:
        width = view.hierarchies[i].n_nodes(int(view.levels[i]))
        if radix * width >= 2**62:  # too wide for one key: group the rows of codes
            stacked = np.stack([view.generalized_codes(o)[rows] for o in others], axis=1)
            _, inverse = np.unique(stacked, axis=0, return_inverse=True)
            inverse = inverse.ravel().astype(np.int64)
            return inverse, int(inverse.max()) + 1 if len(inverse) else 0
        key = key * width + view.generalized_codes(i)[rows]
        radix *= width
    unique, inverse = np.unique(key, return_inverse=True)
    return inverse.astype(np.int64), len(unique)


def classification(view: GeneralizationView, target: Target, gs_factor: float = DEFAULT_GS_FACTOR) -> float:
    """ARX's classification metric of ``view`` for ``target`` (module docstring), in [0, 1]."""
    n = view.n_records
    if n <= 0:
        return 0.0
    generalization, suppression = factors(gs_factor)
    suppressed_penalty, infrequent, no_majority = gs_factor, generalization, suppression
    highest = max(suppressed_penalty, infrequent, no_majority)
    suppressed = np.asarray(view.suppressed, dtype=bool)
    counts = np.asarray(view.counts, dtype=np.float64)
    penalty = suppressed_penalty * float(counts[suppressed].sum())
    if target.quasi_identifier < 0:
        table = _target_table(view, target)
        if table is not None:
            from sdckit._kernels_objectives import kept_classes

            classes = np.asarray(view.classes)
            passes, width = kept_classes(
                classes, suppressed, target.combination, target.values, view.n_classes
            )
            if width > 0:
                penalty += _kept_penalty(table, passes, int(width), infrequent, no_majority)
            return penalty / (highest * n)
        kept = ~suppressed[target.combination]
        classes = view.classes[target.combination[kept]].astype(np.int64)
        penalty += _class_penalty(
            classes, view.n_classes, target.values[kept], target.counts[kept], infrequent, no_majority
        )
        return penalty / (highest * n)
    j = target.quasi_identifier
    hierarchy = view.hierarchies[j]
    level = int(view.levels[j])
    leaves = hierarchy.n_nodes(0)
    scale = 0.0 if leaves == 1 else 1.0 - (hierarchy.n_nodes(level) - 1) / (leaves - 1)
    kept_rows = np.flatnonzero(~suppressed)
    if scale == 1.0:
        penalty += highest * float(counts[kept_rows].sum())
        return penalty / (highest * n)
    groups, n_groups = _other_groups(view, j, kept_rows)
    values = view.generalized_codes(j)[kept_rows].astype(np.int64)
    infrequent_scaled = infrequent * (1.0 - scale) + highest * scale
    no_majority_scaled = no_majority * (1.0 - scale) + highest * scale
    penalty += _class_penalty(
        groups, n_groups, values, counts[kept_rows], infrequent_scaled, no_majority_scaled
    )
    return penalty / (highest * n)


def _classification_bound(
    view: GeneralizationView,
    max_suppressed: float,
    target: Target,
    gs_factor: float,
    k: float | None = None,
) -> float:
    """A lower bound of :func:`classification` at ``view``'s levels and every generalization of them,
    whatever is suppressed, for a target that is not a quasi-identifier (else 0).

    A class ``E'`` of a generalization is a union of classes ``E_i`` here. Kept with a single most
    frequent value, it costs ``pI·(|E'| - top1(E'))``, and ``|E'| - top1(E') >= sum_i (|E_i| - top1(E_i))``
    since ``top1(E') <= sum_i top1(E_i)``; kept without one, ``pN·|E'| = sum_i pN·|E_i|``; suppressed,
    ``pS·|E'| = sum_i pS·|E_i|``. So each class here contributes at least
    ``min(pS·|E_i|, pI·(|E_i| - top1(E_i)), pN·|E_i|)`` (up to 2x the bound with ``min(pI, pN)`` in
    place of ``pI`` when ``pN < pI``, at gs-factors below 0.5).

    A generalization the search may release suppresses at most ``L = max_suppressed`` records (the
    :class:`~sdckit.utility.metrics.Metric` contract), so a second bound: with ``k_i`` the least cost
    of ``E_i`` kept, ``min(pI·(|E_i| - top1(E_i)), pN·|E_i|)``, the suppressed classes ``S`` of
    ``E_i``, a set of at most ``L`` records, cost ``pS·|E_i|`` each and the others at least ``k_i``, so
    the penalty is at least ``sum_i k_i - sum_{i in S} (k_i - pS·|E_i|)``, and that saving is at most
    the fractional knapsack's optimum over the classes (weights ``|E_i|``, savings per record
    ``k_i / |E_i| - pS``, capacity ``L``), itself at most that of the savings per record rounded up
    to 64 buckets (:func:`sdckit._kernels_objectives.classification_bound`) and at most ``L`` times
    the largest. The larger of the two bounds is taken (Adult, seven quasi-identifiers, k = 5, 5%,
    gs-factor 0.25, with ``L`` times the largest: 218 instead of 1,060 satisfying nodes left with a
    bound below the optimum).

    Under k-anonymity alone (``k``: the least size of a kept class, the search's), a class ``E_i`` of
    at least ``k`` records is never suppressed in a generalization: its class there contains it, so
    holds at least ``k`` records too. Such a class contributes ``k_i`` to the first bound (not
    ``min(pS·|E_i|, k_i)``) and saves nothing in the second; only the classes below ``k`` go into the
    knapsack (Adult, seven quasi-identifiers, k = 5, 5%, gs-factor 0.25: 175 -> 32 satisfying nodes
    weighed, 728 -> 617 evaluated). Target counts that are not whole numbers (record weights) are
    summed in another order here than in the search's class sizes, so ``k`` is then raised by
    1e-9·k against rounding. Scaled down by 1e-12 (and the second less 1e-12 of the records)
    against rounding.
    """
    n = view.n_records
    if target.quasi_identifier >= 0 or n <= 0 or view.n_classes == 0 or len(target.values) == 0:
        return 0.0
    generalization, suppression = factors(gs_factor)
    highest = max(gs_factor, generalization, suppression)
    kept_size = math.inf if k is None else k if target.whole else k + 1e-9 * max(1.0, k)
    from sdckit._kernels_objectives import class_target_bound, classification_bound

    last = _LAST_TABLE[0]
    width = target.width
    if (last is None or last[0] is not view.classes or last[1] is not target) and (
        view.n_classes * width <= 2**22
    ):
        # The table and the bound in one compiled call; the table kept for the node's value.
        classes = np.asarray(view.classes)  # int32 or int64: the kernel takes either
        weights = np.array([gs_factor, generalization, suppression])
        *table, least, capped, records = class_target_bound(
            classes, target.combination, target.values, target.counts, view.n_classes, width,
            weights, max_suppressed + 1e-9, kept_size,
        )  # fmt: skip
        _LAST_TABLE[0] = (view.classes, target, tuple(table))
        return max(float(least), float(capped) - 1e-12 * records) / (highest * n) * (1.0 - 1e-12)
    found = _target_table(view, target)
    if found is None:
        classes = view.classes[target.combination].astype(np.int64)
        sizes, top1, _ = _class_tops(classes, view.n_classes, target.values, target.counts)
    else:
        sizes, top1 = found[0].sum(axis=1), found[1]
    least, capped = classification_bound(
        np.ascontiguousarray(sizes, dtype=np.float64),
        np.ascontiguousarray(top1, dtype=np.float64),
        gs_factor,
        generalization,
        suppression,
        max_suppressed + 1e-9,
        kept_size,
    )
    return max(float(least), float(capped) - 1e-12 * float(sizes.sum())) / (highest * n) * (1.0 - 1e-12)


# --------------------------------------------------------------------------------------------------
# The search's metric
# --------------------------------------------------------------------------------------------------


def search_metric(
    name: str,
    gs_factor: float = DEFAULT_GS_FACTOR,
    weights: Mapping[str, float] | None = None,
    target: Target | None = None,
    k: float | None = None,
) -> Metric:
    """The :class:`Metric` a generalization search minimizes: ``METRICS[name]`` itself when neither
    the gs-factor nor weights are set (the same values bit for bit), else Loss under ``gs_factor``
    and ``weights``, weighted ncp / gcp, or the classification metric of ``target``."""
    if name == "classification":
        if target is None:
            raise ConfigError(f"metric classification needs a {spell('target')} attribute")
        return Metric(
            "classification",
            f"ARX's classification metric of '{target.name}' (gs-factor {gs_factor:g}), in [0, 1]",
            functools.partial(classification, target=target, gs_factor=gs_factor),
            functools.partial(_classification_bound, target=target, gs_factor=gs_factor, k=k),
            monotonic_without_suppression=False,
        )
    if gs_factor == DEFAULT_GS_FACTOR and weights is None:
        return METRICS[name]
    if name == "loss":
        return Metric(
            "loss",
            f"ARX Loss with gs-factor {gs_factor:g} and attribute weights",
            functools.partial(weighted_loss, gs_factor=gs_factor, weights=weights),
            functools.partial(_loss_bound, gs_factor=gs_factor, weights=weights),
        )
    if name in _PER_ATTRIBUTE:
        return Metric(
            name,
            METRICS[name].description + ", weighted",
            functools.partial(_weighted_per_attribute, name=name, weights=weights, bound=False),
            functools.partial(_weighted_per_attribute_bound, name=name, weights=weights),
        )
    if name in ("ncp", "gcp"):
        value = ncp if name == "ncp" else gcp
        return Metric(
            name,
            METRICS[name].description + ", weighted",
            functools.partial(value, weights=weights),
            functools.partial(_weighted_bound, name=name, weights=weights),
        )
    raise ConfigError(f"metric {name} takes neither a {spell('gs_factor')} nor {spell('attribute_weights')}")


def _attribute(view: GeneralizationView, j: int) -> GeneralizationView:
    """``view`` reduced to its quasi-identifier ``j`` (its classes unchanged)."""
    return dataclasses.replace(
        view,
        quasi_identifiers=(view.quasi_identifiers[j],),
        hierarchies=(view.hierarchies[j],),
        levels=(view.levels[j],),
        leaf_codes=view.leaf_codes[:, j : j + 1],
        leaf_frequencies=None if view.leaf_frequencies is None else (view.leaf_frequencies[j],),
    )


#: Per metric, its value and its bound (as if nothing were suppressed) for one attribute, and whether
#: ARX combines the attributes by their mean (precision) or their sum (the entropies).
_PER_ATTRIBUTE: dict[
    str, tuple[Callable[[GeneralizationView], float], Callable[[GeneralizationView], float], bool]
] = {
    "precision": (_precision_value, functools.partial(_precision_value, ignore_suppression=True), True),
    "entropy": (non_uniform_entropy, _entropy_generalization, False),
    "entropy_monotone": (_entropy_generalization, _entropy_generalization, False),
}


def _weighted_per_attribute(
    view: GeneralizationView, name: str, weights: Mapping[str, float] | None, bound: bool
) -> float:
    """Precision (ARX: the weighted arithmetic mean of the attributes' values) or an entropy (the
    weighted sum), the weights divided by the largest as ARX does."""
    value, lower, mean = _PER_ATTRIBUTE[name]
    function = lower if bound else value
    d = len(view.hierarchies)
    if d == 0:
        return 0.0
    per_attribute = np.array([function(_attribute(view, j)) for j in range(d)])
    total = float(per_attribute @ _normalized(_resolve_weights(view, weights)))
    return total / d if mean else total


def _weighted_per_attribute_bound(
    view: GeneralizationView, max_suppressed: float, name: str, weights: Mapping[str, float] | None
) -> float:
    return _weighted_per_attribute(view, name, weights, bound=True)


def _loss_bound(
    view: GeneralizationView, max_suppressed: float, gs_factor: float, weights: Mapping[str, float] | None
) -> float:
    return weighted_loss(view, gs_factor, weights, ignore_suppression=True)


def _weighted_bound(
    view: GeneralizationView, max_suppressed: float, name: str, weights: Mapping[str, float] | None
) -> float:
    resolved = _resolve_weights(view, weights)
    if name == "ncp":
        return _ncp_total(view, resolved, ignore_suppression=True)
    return _gcp_value(view, resolved, ignore_suppression=True)


def loss_attribute_bounds(
    view: GeneralizationView, gs_factor: float, weights: Mapping[str, float] | None
) -> np.ndarray:
    """``w_A · L_A`` of every quasi-identifier as if nothing were suppressed (weights divided by the
    largest): the terms of the Loss bound, which the search combines per node."""
    return loss_attributes(view, gs_factor, ignore_suppression=True) * _normalized(
        _resolve_weights(view, weights)
    )


def suppressing_loss_bounds(
    view: GeneralizationView, gs_factor: float, weights: Mapping[str, float] | None, least: float
) -> np.ndarray:
    """``w_A`` times :func:`suppressing_loss_attributes` (weights divided by the largest): the terms of
    the Loss bound of a node that suppresses records weighing at least ``least``."""
    return suppressing_loss_attributes(view, gs_factor, least) * _normalized(_resolve_weights(view, weights))


@dataclass(frozen=True)
class MetricOptions:
    """What a generalization search's metric is given besides its name: the gs-factor, the attribute
    weights (by quasi-identifier) and the classification target."""

    gs_factor: float = DEFAULT_GS_FACTOR
    attribute_weights: Mapping[str, float] | None = None
    target: str | None = None

    @property
    def is_default(self) -> bool:
        return self.gs_factor == DEFAULT_GS_FACTOR and self.attribute_weights is None and self.target is None

    def metric(
        self,
        name: str,
        table: Any,
        quasi_identifiers: tuple[str, ...],
        combinations: Any,
        weights: np.ndarray | None,
        k: float | None = None,
    ) -> Metric:
        """The search's :class:`Metric` over ``combinations`` (:func:`search_metric`); ``k``, the least
        size of a kept class when k-anonymity alone decides it (the classification bound reads it)."""
        target = None
        if self.target is not None:
            target = target_of(
                table.data, self.target, quasi_identifiers, combinations.record_combination, weights
            )
        return search_metric(name, self.gs_factor, self.attribute_weights, target, k)
