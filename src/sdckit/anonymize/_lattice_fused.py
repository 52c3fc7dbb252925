"""One compiled call per lattice node for k-anonymity with t-closeness, β-likeness, distinct
l-diversity or δ-disclosure privacy
(:mod:`sdckit.anonymize._lattice_search`).

With a suppression limit, these models are not monotone and the search evaluates most of the lattice
(Adult, k=5 + 0.2-closeness on occupation at 5%: 2,918 of 4,320 nodes). Each node is rolled up from
a source (an evaluated node or a helper, :mod:`._lattice_helpers`) and judged in one call
(:func:`sdckit._kernels_rollup.rolled_node`) instead of a dozen numpy steps and a model
object per model: the same classes, sizes, triples and per-class verdicts as :meth:`Search.evaluate`'s
general path, so the same nodes are tagged, offered and chosen. The statistics objects are built only
for the nodes that need them (a satisfied node's suppressed group, a new roll-up source).

Eligible: whole counts (no weights: the suppressed records are then summed exactly in any order),
the combinations' code stack, one sensitive attribute, and only :class:`KAnonymity`, equal-distance
:class:`TCloseness`, :class:`BasicBetaLikeness`, :class:`EnhancedBetaLikeness`, :class:`DistinctLDiversity`
(whole counts: a class's distinct values are its triples, as the model counts them) and
:class:`DeltaDisclosure` models (numba's logarithm; a node with a value within 1e-12 of δ, where it
may differ from numpy's, takes the general path).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from sdckit import _kernels_lattice, _kernels_rollup
from sdckit.models import (
    BasicBetaLikeness,
    DeltaDisclosure,
    DistinctLDiversity,
    EnhancedBetaLikeness,
    KAnonymity,
    TCloseness,
)
from sdckit.models.base import TOLERANCE, ClassStatistics, SensitiveCounts

if TYPE_CHECKING:
    from sdckit.anonymize._lattice_search import Node, Search


class Fused:
    """The compiled evaluation of one search's nodes, or :func:`fused` gives None."""

    def __init__(self, search: Search, attribute: str, kinds: list[int], limits: list[float]) -> None:
        self.attribute = attribute
        others = [model for model in search.models if type(model) is not KAnonymity]
        monotone = [model in search.monotone_models for model in others]
        self.kinds = np.asarray(kinds, dtype=np.int64)
        self.limits = np.asarray(limits, dtype=np.float64)
        self.monotone = np.asarray(monotone, dtype=np.bool_)
        ks = [model.k for model in search.models if type(model) is KAnonymity]
        # A k model outside the monotone ones (never, today) would need its own flag.
        self.k = max(ks) - TOLERANCE if ks else -np.inf
        _, _, _, n_values, overall, categories = search.combinations.sensitive[attribute]
        self.n_values = int(n_values)
        self.overall = np.ascontiguousarray(overall, dtype=np.float64)
        self.categories = categories
        # Scratch of the roll-up's direct grouping (all -1, left so), as large as Search's own.
        self.table = np.full(4 * len(search.combinations.counts) + 1024, -1, dtype=np.int32)
        with np.errstate(divide="ignore"):
            self.log_overall = np.log(self.overall)  # numpy's log, as EnhancedBetaLikeness takes it
        # The combinations as the classes of a source (Fused.grouped), built on first use.
        self._bottom: tuple[np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None

    def evaluate(self, search: Search, levels: tuple[int, ...]) -> Node | None:
        """The node at ``levels`` rolled up from an evaluated node or a helper, else grouped from the
        combinations (:meth:`grouped`); None when the key range does not fit in int64 or a δ-disclosure
        value is too close to δ (the general path then takes it, asking for a helper again)."""
        at = np.asarray(levels, dtype=np.int64)
        chosen = int(_kernels_lattice.choose_source(search._source_levels, search._source_classes, at)[0])
        from_node = chosen >= 0 and search._sources[chosen] is not None
        if from_node:
            source, sensitive = search._sources[chosen]
            stack, index = search.stack, source.first
        else:
            # Asked as the general path asks (a helper is built on its second request); without
            # one, the node is grouped from the combinations in the same call.
            helper = search._helpers.source(search, levels)
            if helper is None:
                return self.grouped(search, levels)
            source, sensitive = helper
            stack, index = search._helpers.codes(source)
        assert source.first is not None
        pairs = sensitive[self.attribute]
        node = self._judge(search, levels, at, stack, index, source, source.first, source.sizes, pairs)
        if node is not None and from_node:
            search.rolled_up += 1  # from an evaluated node (as Search._roll_up counts)
        return node

    def grouped(self, search: Search, levels: tuple[int, ...]) -> Node | None:
        """The node at ``levels`` grouped from the combinations themselves (the general path's
        grouping when no node or helper can be rolled up from: each combination a class of the
        bottom node, its triples the combinations'), judged in the same call; None when the key
        range does not fit in int64."""
        if self._bottom is None:
            combination, values, counts = search.combinations.sensitive[self.attribute][:3]
            rows = np.arange(len(search.combinations.counts), dtype=np.int64)
            sizes = np.ascontiguousarray(search.combinations.counts, dtype=np.float64)
            pairs = (np.ascontiguousarray(combination, dtype=np.int64), values, counts)
            self._bottom = (rows, sizes, pairs)
        rows, sizes, pairs = self._bottom
        at = np.asarray(levels, dtype=np.int64)
        return self._judge(search, levels, at, search.stack, rows, None, rows, sizes, pairs)

    def _judge(
        self,
        search: Search,
        levels: tuple[int, ...],
        at: np.ndarray,
        stack: Any,
        index: np.ndarray,
        parent: Node | None,
        source_first: np.ndarray,
        source_sizes: np.ndarray,
        pairs: tuple[np.ndarray, np.ndarray, np.ndarray],
    ) -> Node | None:
        """One compiled call: the node at ``levels`` (``at``: as an array) from a source's classes
        (their codes at ``stack[:, :, index]``, first combinations, sizes and triples), its verdicts,
        the records suppressed; its suppressed group checked when satisfied, and kept as a source when
        it may serve as one. ``parent``: the source node (its classes map through ``class_of``), or None
        when the source's classes are the combinations (``class_of`` is then the node's classes).
        None when the key range does not fit in int64."""
        from sdckit.anonymize._lattice_search import Node

        pair_classes, pair_values, pair_counts = pairs
        (fits, class_of, first, sizes, classes, values, counts, passes, suppressed, monotone_suppressed) = (
            _kernels_rollup.rolled_node(
                stack, index, at, search._level_counts, source_first, source_sizes, self.table,
                pair_classes, pair_values, pair_counts, self.n_values, self.overall, self.log_overall,
                self.k, self.kinds, self.limits, self.monotone,
            )
        )  # fmt: skip
        if not fits:
            return None
        n_classes = len(sizes)
        n_suppressed = float(suppressed)
        satisfied = n_suppressed <= search.max_suppressed + 1e-9
        monotone_ok = satisfied
        if not search.all_monotone:
            monotone_ok = float(monotone_suppressed) <= search.max_suppressed + 1e-9
        if parent is None:
            node = Node(levels, class_of, n_classes, sizes, passes, n_suppressed, satisfied, monotone_ok)
        else:
            node = Node(levels, None, n_classes, sizes, passes, n_suppressed, satisfied, monotone_ok)
            node.parent, node.class_of = parent, class_of
        node.first = first
        statistics: ClassStatistics | None = None
        if satisfied:
            statistics = self.statistics(sizes, classes, values, counts)
            node.satisfied = search.suppressed_group_holds(node, statistics)
        if 10 * n_classes <= 9 * len(search.combinations.counts) and n_classes < search._source_classes.max():
            if statistics is None:
                statistics = self.statistics(sizes, classes, values, counts)
            search._keep_source(node, statistics)
        return node

    def statistics(self, sizes: np.ndarray, classes: Any, values: Any, counts: Any) -> ClassStatistics:
        sensitive = SensitiveCounts(
            attribute=self.attribute,
            classes=classes,
            values=values,
            counts=counts,
            n_values=self.n_values,
            overall=self.overall,
            categories=self.categories,
        )
        return ClassStatistics(sizes=sizes, sensitive={self.attribute: sensitive})


def fused(search: Search) -> Fused | None:
    """The compiled evaluation for ``search``'s models, or None when they are not all eligible."""
    if search.stack is None or not search._whole_counts or search.k_only is not None:
        return None
    attributes = {model.sensitive_attribute for model in search.models if model.sensitive_attribute}
    if len(attributes) != 1 or len(search.combinations.sensitive) != 1:
        return None
    kinds, limits = [], []
    for model in search.models:
        if type(model) is KAnonymity:
            continue
        if type(model) is TCloseness and model.distance == "equal":
            kinds.append(1)
            limits.append(model.t + TOLERANCE)
        elif type(model) is BasicBetaLikeness:
            kinds.append(2)
            limits.append(model.beta + TOLERANCE)
        elif type(model) is EnhancedBetaLikeness:
            kinds.append(3)
            limits.append(model.beta + TOLERANCE)
        elif type(model) is DistinctLDiversity:
            kinds.append(4)
            limits.append(model.l - TOLERANCE)
        elif type(model) is DeltaDisclosure:
            kinds.append(5)
            limits.append(model.delta)
        else:
            return None
    (attribute,) = attributes
    return Fused(search, attribute, kinds, limits)


def roll_up_compiled(
    search: Search, source: Node, pairs: dict[str, Any], levels: tuple[int, ...], cards: list, direct: int
) -> tuple[Node, np.ndarray, np.ndarray, ClassStatistics]:
    """:meth:`Search._roll_up_from` in one compiled call for the classes and one per sensitive
    attribute (:mod:`sdckit._kernels_rollup`): the same arrays, summed in the same order."""
    at = (np.asarray(levels, dtype=np.int64), np.asarray(cards, dtype=np.int64))
    sizes_of_source = np.asarray(source.sizes, dtype=np.float64)
    class_of, new_first, sizes = _kernels_rollup.roll_up_classes(
        search.stack, *at, source.first, sizes_of_source, direct
    )
    n_classes = len(sizes)
    sensitive = {}
    for name, (pair_classes, pair_values, pair_counts) in pairs.items():
        _, _, _, n_values, overall, categories = search.combinations.sensitive[name]
        new_classes, new_values, new_counts = _kernels_rollup.roll_up_pairs(
            class_of, pair_classes, pair_values, pair_counts, n_classes, n_values
        )
        sensitive[name] = SensitiveCounts(
            attribute=name,
            classes=new_classes,
            values=new_values,
            counts=new_counts,
            n_values=n_values,
            overall=overall,
            categories=categories,
        )
    return source, class_of, new_first, ClassStatistics(sizes=sizes, sensitive=sensitive)
