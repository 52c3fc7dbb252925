"""The group of suppressed records in full-domain generalization (issue 36).

A suppressed record is released with every quasi-identifier ``*``. An adversary who knows that a
person is in the data and whose quasi-identifiers match no released class knows that she is one of
the ``*`` records: they form one more equivalence class, which a release must protect as any other.
Three suppressed records under 5-anonymity single her out among three; a suppressed group that holds
one sensitive value (or, after ``l - 2`` values are ruled out, one value's share at least
``c / (c + 1)``) gives her value away. ARX (``HashGroupify``) checks only the classes it keeps and
replaces the quasi-identifiers of the others (``suppressedAttributeTypes``: quasi-identifiers by
default; the sensitive values too on request); sdcMicro and the literature's lattice searches
(Samarati 2001; Kohlmayer et al. 2012) count the suppressed records against the limit only.

Here a node of the lattice satisfies the models only if its suppressed group, joined by the class
labelled ``*`` on every quasi-identifier if the node has one (it is released alike), satisfies every
model as one more class, or is empty. The satisfying nodes are a subset of those satisfying the
models within the suppression limit, so a release changes only where its suppressed group failed
(the optimum is kept whenever it holds). The condition is not monotone in the lattice (a
generalization suppresses a subset of the records, which may fall below k), so the search tags and
prunes with the models within the limit only (``Node.monotone_ok``, monotone for k-anonymity and
distinct l-diversity as before) and checks the group of every node it would offer
(``Node.satisfied``): the exhaustive search gives the same node (tests/test_recoding.py's oracle).
Every model here is monotonic (a union of passing classes passes), so when a release exists the
whole table, the union of its classes and its suppressed group, satisfies every model: that is
checked first (``check_feasible``), with or without a suppression limit.

The check costs one pass over a node's (class, value) triples, only at nodes that suppress records
within the limit; under k-anonymity alone one sum over the failing classes' sizes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from sdckit.hierarchy import Hierarchy
from sdckit.labels import SUPPRESSED
from sdckit.models import ClassStatistics, SensitiveCounts, evaluate_all

if TYPE_CHECKING:
    from sdckit.anonymize._lattice_search import Node, Search


def star_codes(hierarchies: Sequence[Hierarchy]) -> list[list[int]]:
    """The code of the ``*`` label at every (attribute, level), -1 where the level has none."""
    return [
        [labels.index(SUPPRESSED) if SUPPRESSED in labels else -1 for labels in h.labels] for h in hierarchies
    ]


def star_class(search: Search, node: Node) -> int:
    """The class of ``node`` labelled ``*`` on every quasi-identifier (released as the suppressed
    records are), or -1: only where every level has a ``*`` label (usually the top node alone)."""
    codes = [search.star_codes[j][level] for j, level in enumerate(node.levels)]
    if not codes or min(codes) < 0:
        return -1
    match = np.ones(len(search.combinations.counts), dtype=bool)
    for j, level in enumerate(node.levels):
        match &= search.generalized[j][level] == codes[j]
    hits = np.flatnonzero(match)
    return int(node.classes[hits[0]]) if len(hits) else -1


def group_holds(search: Search, node: Node, statistics: ClassStatistics | None) -> bool:
    """Whether the records released all ``*`` at ``node`` satisfy every model of ``search`` as one
    more class: the suppressed records (of the failing classes) with the class labelled ``*``
    everywhere, if any. True when nothing is suppressed (that class, if any, passed as a class);
    ``statistics`` (the node's classes') is needed unless k-anonymity is the only model."""
    if node.n_suppressed <= 0:
        return True
    group = ~node.passes
    star = star_class(search, node)
    if star >= 0:
        group[star] = True
    size = float(node.sizes[group].sum())
    if search.k_only is not None:
        return size >= search.k_only
    assert statistics is not None
    sensitive = {}
    for name, counts in statistics.sensitive.items():
        chosen = group[counts.classes]
        per_value = np.bincount(
            counts.values[chosen], weights=counts.counts[chosen], minlength=counts.n_values
        )
        values = np.flatnonzero(per_value > 0)
        sensitive[name] = SensitiveCounts(
            attribute=name,
            classes=np.zeros(len(values), dtype=np.int64),
            values=values.astype(np.int32),
            counts=per_value[values],
            n_values=counts.n_values,
            overall=counts.overall,
            categories=counts.categories,
        )
    # Table-level models (risk_based) counted the group as one class of the table already.
    models = [model for model in search.models if not getattr(model, "table_level", False)]
    passes, _ = evaluate_all(models, ClassStatistics(sizes=np.array([size]), sensitive=sensitive))
    return bool(passes[0])
