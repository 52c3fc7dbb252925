"""Generalization of a population table with a research subset, counted as ARX counts it.

With δ-presence or k-map against a population table (:mod:`sdckit.models.presence`), the records
released are the research subset's. ARX (``HashGroupify``, ``DataManager``) counts the class sizes,
the records suppressed against the limit and the utility metric over the subset records only, and
the models read the population through the subset column's counts. sdckit does the same: the search
weighs each record by its membership (:func:`sdckit.models.presence.subset_weights`), the subset
column's counts stay counts of records (``records`` of
:func:`sdckit.anonymize._lattice_search.distinct_combinations`), and a class without a subset record
follows :func:`released_only`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from sdckit import _kernels_subset
from sdckit.anonymize._lattice_helpers import present_pairs
from sdckit.errors import ConfigError
from sdckit.frequency import encode
from sdckit.labels import SUPPRESSED
from sdckit.models import ModelResult, PrivacyModel
from sdckit.models.presence import DeltaPresence, _member, subset_columns

if TYPE_CHECKING:
    from sdckit.anonymize._lattice_search import Node, Search
    from sdckit.hierarchy import Hierarchy
    from sdckit.table import Table


def count_population(search: Search, table: Table, weights: np.ndarray | None) -> bool:
    """Count the research subset column's (combination, value) triples in records, whatever the
    weights (0 and 1 there: the search's sizes are the subset's, the models read the population from
    these counts); returns whether the combination counts are whole numbers (no weights, or a
    research subset's)."""
    columns = subset_columns(search.models)
    for name in columns:
        combination, values, counts, n_values, _, categories = search.combinations.sensitive[name]
        found = _population_pairs(search, name, weights)
        if found is None:
            codes = encode(table.data, [name]).codes[0].astype(np.int64)
            codes = np.where(codes < 0, n_values - 1, codes)  # a missing value (distinct_combinations)
            keys = search.combinations.record_combination.astype(np.int64)
            cells = len(search.combinations.counts) * n_values
            pairs, derived = present_pairs(keys * n_values + codes, None, cells)
            assert np.array_equal(pairs // n_values, combination) and np.array_equal(pairs % n_values, values)
            sums = np.bincount(values, weights=derived, minlength=n_values)
        else:
            derived, sums = found
        n = len(search.combinations.record_combination)
        overall = sums / max(n, 1)
        search.combinations.sensitive[name] = (combination, values, derived, n_values, overall, categories)
    return weights is None or bool(columns)


def _population_pairs(
    search: Search, name: str, weights: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray] | None:
    """The records of every (combination, value) pair of the research-subset column ``name``, derived
    from the pairs counted with the subset's weights (1 for a member, 0 for the rest) without coding
    the column again: a member value's pair counts its records already, and where one value marks
    the rest, its pair holds the combination's records less its members'; with their sums per value
    (:func:`sdckit._kernels_subset.population_pairs`). None when that does not apply (no weights,
    several non-member values, or weights that are not the subset's)."""
    if weights is None:
        return None
    combination, values, counts, n_values = search.combinations.sensitive[name][:4]
    categories = search.combinations.sensitive[name][5]
    try:
        members = np.array([_member(value, name) for value in categories.to_list()], dtype=bool)
    except ConfigError:
        return None  # a value that marks nothing: the models say so
    applies, derived, sums = _kernels_subset.population_pairs(
        combination, values, counts, members, search.combinations.record_combination,
        search.combinations.counts, n_values,
    )  # fmt: skip
    return (derived, sums) if applies else None  # else weights other than the subset's


def limit_in_effect(models: Sequence[PrivacyModel], hierarchies: Sequence[Hierarchy], limit: float) -> float:
    """The suppression limit a generalization search under ``models`` needs: 0 when no node that
    satisfies them can suppress a record, else ``limit``.

    That is so for δ-presence alone with one bound free (every model's ``delta_min`` 0, or every
    model's ``delta_max`` 1): each class that fails lies beyond the same bound, and so does the
    group of suppressed records, whose δ is their population-weighted mean (at least the smallest of
    them, or at most the largest; the counts are whole numbers and rounding is monotone, so the
    computed δ too), so the group fails and the node with it (:mod:`sdckit.anonymize._suppressed_group`).
    The class labelled ``*`` on every quasi-identifier joins the group and could bring it back
    within the bound, unless it is the node's only class: so the limit is kept when some level with
    a ``*`` label has another label, in every hierarchy. A node satisfying the models at the limit
    then satisfies them without suppression and conversely (no class fails), the metric's value is
    the same (nothing suppressed), and the search is the one without suppression, monotonic, with
    the same optimum (tests/test_presence_kmap.py: exhaustive search at the limit against it)."""
    if limit <= 0 or not models or not all(type(m) is DeltaPresence for m in models):
        return limit
    presence = [m for m in models if isinstance(m, DeltaPresence)]
    if not (all(m.delta_min <= 0 for m in presence) or all(m.delta_max >= 1 for m in presence)):
        return limit
    star_levels = [[labels for labels in h.labels if SUPPRESSED in labels] for h in hierarchies]
    if all(star_levels) and any(len(labels) > 1 for levels in star_levels for labels in levels):
        return limit
    return 0.0


def released_only(search: Search, node: Node, results: Sequence[ModelResult]) -> bool:
    """With a research subset (the sizes count its records), ARX's rule for the classes without a
    subset record (``HashGroupify``): nothing of them is released, so they are not suppressed (they
    pass), but one that fails δ-presence cannot be suppressed either, and the node fails (within the
    limit too when δ-presence is a monotone model of the search: no suppression). Their sizes are 0,
    so the records suppressed do not change. Nothing changes without a research subset. Returns
    ``node.satisfied``."""
    empty = node.sizes <= 0
    if not empty.any() or not subset_columns(search.models):
        return node.satisfied
    for model, result in zip(search.models, results, strict=True):
        if isinstance(model, DeltaPresence) and not result.passes[empty].all():
            node.satisfied = False
            if model in search.monotone_models:
                node.monotone_ok = False
    node.passes = node.passes | empty
    return node.satisfied
