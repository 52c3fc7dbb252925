"""RMD microaggregation: sdcMicro's ``microaggregation(method = "rmd")`` (``micro_rmd``; Templ 2008,
Templ & Meindl 2008), the method sdcMicro's manual recommends.

What sdcMicro computes, and this module with it:

1. the attributes are standardized (mean, sample standard deviation);
2. every record's *robust* squared Mahalanobis distance from the MCD location and scatter of the
   standardized records (robustbase's ``covMcd``, reweighted) is computed once;
3. floor(n/k) - 1 times: the remaining record of largest robust distance (ties: the first record) is
   the seed, and the k remaining records nearest to it in *Euclidean* distance of the standardized
   attributes (the seed itself among them at distance 0; ties: the first records) form a group;
4. the remaining k..2k-1 records form the last group;
5. every record gets its group's mean (in original units). sdcMicro also computes the rounded means
   (``roundxm``) but releases the unrounded ones; ``measure`` is ignored by sdcMicro for rmd, and
   this method has no ``measure``.

It is not MDAV with another distance: one group per step instead of two, the seeds ordered by a
distance computed once from a fixed robust centre (MDAV recomputes the centroid of the remaining
records each step and seeds its second group with the record farthest from the first seed), so it is
a method of its own rather than an option of ``mdav``.

Deviations, each stated:

* The robust location and scatter are those of :func:`sdckit.anonymize._noise_variants.mcd_estimate`
  (FAST-MCD's start from scikit-learn's ``MinCovDet(random_state=seed)`` on at most 2,000 records,
  C-steps on every record, robustbase's consistency factors and reweighting): R's ``covMcd`` draws
  other subsamples, so on data whose MCD is not unique the seeds' order, hence the groups, may differ.
  ``seed`` makes the release reproducible.
* A constant attribute is left out of the robust distances (sdcMicro divides it by a standard
  deviation of 0 and fails); a singular MCD scatter (half the records on a hyperplane) is refused.
* The Euclidean distances are computed in original units weighted by the inverse variances (what
  ``mdav`` does; the same order as sdcMicro's distances of the standardized data, and exact ties on
  integer data), from a k-d tree with deletion (sdcMicro builds the full n x n distance matrix,
  which limits it to some ten thousand records).
* Fewer than 2k records (or a stratum of k..2k-1) form one group; sdcMicro's loop fails there.
* Missing values are refused, as by ``mdav``.
"""

from __future__ import annotations

from typing import Annotated, Any

import numpy as np
from pydantic import BeforeValidator, Field

from sdckit._numba import njit
from sdckit.anonymize._mdav_tree import _tree_nearest, _tree_remove_many, tree_index
from sdckit.anonymize._microaggregation_strata import check_strata_sizes, stratified, stratum_keys
from sdckit.anonymize.base import Context, check_k_at_most_records, register_method, run_method
from sdckit.anonymize.microaggregation import (
    MicroaggregationParams,
    _chosen,
    _numeric_matrix,
    _numeric_release,
    _report,
    _summary,
    inverse_variance,
)
from sdckit.anonymize.release import Release
from sdckit.errors import InputError
from sdckit.params import Whole, names_list
from sdckit.table import Table

__all__ = ["RmdParams", "rmd_groups", "rmd_microaggregation", "robust_distances"]

_LEAF_SIZE = 32
#: The condition number of the MCD scatter (of standardized attributes) from which it counts as
#: singular: its inverse would hold rounding noise, not the data's shape.
_SINGULAR = 1e12


@njit(cache=True, nogil=True)
def rmd_kernel(X: np.ndarray, w: np.ndarray, seeds: np.ndarray, k: int) -> np.ndarray:
    """Group labels of RMD: ``seeds`` is every record in the order they become seeds (robust distance
    descending, ties by index); each of the first floor(n/k) - 1 steps groups the first unassigned
    seed with its k nearest remaining records (itself included; ties by index); the rest is the last
    group. ``w`` weights the squared differences (1 / variance). Needs n >= k >= 1."""
    n, d = X.shape
    labels = np.full(n, -1, dtype=np.int64)
    steps = n // k - 1
    if steps <= 0:
        labels[:] = 0
        return labels
    index = tree_index(X, w, _LEAF_SIZE)
    P, pid, slot_of, start, cnt, leaf_of, lo, hi, ctr, cdist, rad, rot, first_leaf = index[:13]
    slack = index[17]
    Z = rot[0]
    bd = np.zeros(k)
    bi = np.zeros(k, dtype=np.int64)
    bp = np.zeros(k, dtype=np.int64)
    stack = np.zeros(256, dtype=np.int64)
    bounds = np.zeros(256)
    zq = np.empty(d)
    head = 0
    for group in range(steps):
        while labels[seeds[head]] >= 0:
            head += 1
        seed = seeds[head]
        row = X[seed].copy()
        zq[:] = Z[slot_of[seed]]
        _tree_nearest(
            P, w, pid, start, cnt, lo, hi, first_leaf, rot, row, zq, slack, -1, bd, bi, bp, stack, bounds
        )
        members = bi.copy()
        for q in range(k):
            labels[members[q]] = group
        _tree_remove_many(P, w, pid, slot_of, start, cnt, leaf_of, lo, hi, ctr, cdist, rad, rot, members)
    for p in range(n):
        if labels[p] < 0:
            labels[p] = steps
    return labels


def robust_distances(X: np.ndarray, seed: int = 0) -> np.ndarray:
    """Squared robust Mahalanobis distances of the rows of ``X`` from the MCD location and scatter of
    the standardized non-constant columns (all 0 when every column is constant)."""
    from sdckit.anonymize._noise_variants import _squared_distances, mcd_estimate

    X = np.asarray(X, dtype=np.float64)
    spread = X.std(axis=0, ddof=1) if len(X) > 1 else np.zeros(X.shape[1])
    varying = spread > 0
    if not varying.any():
        return np.zeros(len(X))
    Y = (X[:, varying] - X[:, varying].mean(axis=0)) / spread[varying]
    if len(Y) <= Y.shape[1]:
        raise InputError(
            f"rmd: {len(Y):,} records for {Y.shape[1]} varying attributes; the MCD of its robust distances "
            "needs more records than attributes (in every stratum, with strata)"
        )
    try:
        location, scatter = mcd_estimate(Y, seed)
        if not np.linalg.cond(scatter) < _SINGULAR:
            raise np.linalg.LinAlgError("singular MCD scatter")
        return _squared_distances(Y, location, scatter)
    except np.linalg.LinAlgError:
        raise InputError(
            "rmd: the MCD scatter of the attributes is singular (half the records or more lie on a "
            "hyperplane, e.g. share a value); microaggregate them with mdav"
        ) from None


def rmd_groups(X: np.ndarray, k: int, seed: int = 0) -> np.ndarray:
    """RMD group labels (0..G-1) of the rows of ``X`` (n, d); see the module's description."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    check_k_at_most_records(k, X.shape[0])
    if X.shape[0] < 2 * k:
        return np.zeros(X.shape[0], dtype=np.int64)
    distances = robust_distances(X, seed)
    seeds = np.argsort(-distances, kind="stable").astype(np.int64)
    return rmd_kernel(X, inverse_variance(X), seeds, int(k))


class RmdParams(MicroaggregationParams):
    """Parameters of RMD microaggregation (``sdckit anonymize rmd``; sdcMicro's ``method = "rmd"``).
    The default attributes are the quasi-identifiers of kind numeric."""

    strata: Annotated[
        list[str] | None,
        BeforeValidator(names_list),
        Field(
            description="Attributes whose value combinations are strata: groups are formed inside each "
            "stratum (sdcMicro's strata_variables), comma-separated."
        ),
    ] = None
    seed: Annotated[
        Whole, Field(ge=0, description="Seed of the MCD's subsamples (the robust distances).")
    ] = 0


def _rmd_summary(release: Release) -> dict[str, Any]:
    summary = _summary(release)
    params = release.params
    summary = {"attributes": summary.pop("attributes"), "k": summary.pop("k"), **summary}
    summary["seed"] = params.seed
    if params.strata:
        summary["strata"] = params.strata
        summary["strata_count"] = release.figures.as_dict().get("strata")
    return summary


@register_method(
    "rmd",
    RmdParams,
    help="RMD microaggregation (sdcMicro's rmd): groups seeded by robust Mahalanobis distance, replaced by their means.",  # noqa: E501
    summary=_rmd_summary,
    report=_report,
    examples={"replay": {"k": 3, "seed": 2}},
)
def _run_rmd(table: Table, params: RmdParams, context: Context) -> Release:
    names = _chosen(table, params.attributes, numeric=True, method="rmd")
    keys = stratum_keys(table, params.strata, names, "rmd")
    X = _numeric_matrix(table, names, "rmd")
    check_k_at_most_records(params.k, X.shape[0])
    check_strata_sizes(table, params.strata, keys, params.k, "rmd")
    labels, strata = stratified(keys, lambda rows: rmd_groups(X[rows], params.k, params.seed))
    return _numeric_release(table, "rmd", names, X, labels, params, strata=strata if params.strata else None)


def rmd_microaggregation(
    table: Table,
    k: int = 3,
    attributes: list[str] | None = None,
    *,
    strata: list[str] | None = None,
    seed: int = 0,
) -> Release:
    """RMD microaggregation of numeric attributes (sdcMicro's ``rmd``): every value replaced by its
    group's mean; groups seeded by robust Mahalanobis distance, formed by Euclidean distance.

    ``strata`` forms the groups inside each combination of those attributes' values (a stratum needs
    at least k records). Raises ConfigError as :func:`sdckit.anonymize.microaggregation.mdav` does,
    InputError for a singular MCD scatter.
    """
    return run_method("rmd", table, {"k": k, "attributes": attributes, "strata": strata, "seed": seed})
