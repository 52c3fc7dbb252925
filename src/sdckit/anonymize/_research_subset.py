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

from sdckit.frequency import encode
from sdckit.models import ModelResult
from sdckit.models.presence import DeltaPresence, subset_columns

if TYPE_CHECKING:
    from sdckit.anonymize._lattice_search import Node, Search
    from sdckit.table import Table


def count_population(search: Search, table: Table, weights: np.ndarray | None) -> bool:
    """Count the research subset column's (combination, value) triples in records, whatever the
    weights (0 and 1 there: the search's sizes are the subset's, the models read the population from
    these counts); returns whether the combination counts are whole numbers (no weights, or a
    research subset's)."""
    columns = subset_columns(search.models)
    for name in columns:
        combination, values, _, n_values, _, categories = search.combinations.sensitive[name]
        codes = encode(table.data, [name]).codes[0].astype(np.int64)
        codes = np.where(codes < 0, n_values - 1, codes)  # a missing value (distinct_combinations)
        keys = search.combinations.record_combination.astype(np.int64)
        pairs, inverse = np.unique(keys * n_values + codes, return_inverse=True)
        assert np.array_equal(pairs // n_values, combination) and np.array_equal(pairs % n_values, values)
        counts = np.bincount(inverse, minlength=len(pairs)).astype(np.float64)
        overall = np.bincount(codes, minlength=n_values).astype(np.float64) / max(len(codes), 1)
        search.combinations.sensitive[name] = (combination, values, counts, n_values, overall, categories)
    return weights is None or bool(columns)


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
