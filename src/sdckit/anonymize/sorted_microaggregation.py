"""Sorting and projection microaggregation: sdcMicro's ``microaggregation(method = ...)`` for the
methods that order the records and then aggregate consecutive groups (``simple``, ``single``,
``pca``, ``mcdpca``, ``pppca``, ``clustpca``, ``clustmcdpca``, ``clustpppca``, ``influence``;
Templ 2008, Templ & Meindl 2008), as one method whose ``order`` is sdcMicro's ``method``.

One method rather than nine because sdcMicro's nine share everything but the order: each (1) puts
the records in an order, (2) cuts the order into groups of ``k`` consecutive records, the last
group taking the remainder (``indexMicro``: ``k`` to ``2k − 1`` records), and (3) gives every record
its group's ``measure`` of each attribute (``means``, :mod:`sdckit.anonymize._microaggregation_aggregate`:
mean, median, trim, onestep; with the configuration's sampling weights the weighted mean or
sdcMicro's weighted median, as sdcMicro does for an sdcMicroObj with weights). The orders:

``simple``
    The records as given (sdcMicro's benchmark: how much sorting gains).
``single``
    Sorted by one attribute, ``sort_by`` (sdcMicro's ``varsort``, default the first attribute).
``pca``
    Sorted by the scores on the first principal component of the standardized attributes
    (``princomp(scale(x))``).
``mcdpca``
    Sorted by the scores on the first eigenvector of the MCD scatter of the raw attributes, centred at
    the MCD location (``princomp(scale(x, center), covmat = cov.mcd(x))``).
``pppca``
    Sorted by the scores on the first robust principal component by projection pursuit (Croux &
    Ruiz-Gazen 2005), sdcMicro's own ``prcompRob(x, 1)``: records centred at the coordinatewise
    median; of the directions from the centre to each record, the one along which the projections
    have the largest median absolute deviation; the scores are the centred records projected on it.
``clustpca``, ``clustmcdpca``, ``clustpppca``
    The records clustered first (``clusters`` clusters, on the standardized ``transf``-transformed
    attributes); the clusters one after the other (in the clusterer's numbering), each sorted by the
    ``pca`` / ``mcdpca`` / ``pppca`` scores of its own records, or by ``sort_by`` when it has fewer
    records than attributes. Groups are cut over the whole concatenated order, so a group may
    straddle two clusters (as in sdcMicro).
``influence``
    Clustered as above; each cluster sorted by the attribute in which its centre is largest.

Deviations from sdcMicro 5.8.1, each a choice:

* Clustering is scikit-learn's k-means (k-means++ start seeded by ``seed``, one start, Lloyd's
  iterations). sdcMicro's default ``clustermethod`` is ``clara``; ``pam``, ``cmeans`` and ``bclust``
  have no equivalent here (``cluster_method`` accepts ``kmeans`` only); R's ``kmeans`` (Hartigan-Wong,
  random centres from R's generator) gives other clusters than scikit-learn's on the same data.
* sdcMicro computes the ``transf`` transformation of the data and then clusters the untransformed,
  unstandardized data (``clust()`` passes ``x`` to the clusterer, not the transformed ``y``); sdckit
  clusters what sdcMicro's documentation says: the standardized transformed attributes (``log`` by
  default, as sdcMicro; ``boxcox`` is scipy's maximum-likelihood Box-Cox per attribute, where
  sdcMicro's ``car::powerTransform`` estimates the exponents jointly; ``none``: standardized raw
  values). ``influence`` hence picks the attribute in which a cluster's centre is largest in
  standard units, not in raw units (where the attribute of largest scale always wins).
* The sign of a principal component (R's LAPACK leaves it to the algorithm) is fixed: its first
  entry that is not zero is positive (the rule of sdcMicro's ``prcompRob``). Reversing an order
  changes the groups when ``k`` does not divide the number of records (the remainder group moves to
  the other end).
* The MCD (``mcdpca``, ``clustmcdpca``) is :func:`sdckit.anonymize._noise_variants.mcd_estimate`
  (scikit-learn's ``MinCovDet`` start seeded by ``seed``, reweighted; sdcMicro calls MASS's
  ``cov.mcd`` with R's generator); a constant attribute is left out of it, a singular scatter refused.
* ``pppca`` tries every record's direction, ``O(n² d)`` as in sdcMicro (which also holds an ``n × n``
  matrix: some ten thousand records at most); ``directions`` limits the candidates to that many
  records drawn with ``seed``, a documented approximation for large files. A record at the median
  centre gives no direction and is skipped (sdcMicro divides by its norm 0 and then picks its NaN
  scale). Ties of the largest spread go to the last record, as sdcMicro's ``order(s)[n]``.
* A constant attribute is centred but not divided by its standard deviation of 0 (sdcMicro's
  ``scale`` gives NaN and ``princomp`` stops).
* ``k ≤ n < 2k`` records form one group (sdcMicro stops with "Too less observations"); a single
  attribute goes through the chosen order too (sdcMicro then switches to ``mafast``, which sorts by
  the attribute: the ``single`` order).
* ``gpca`` is not offered: no version of sdcMicro in its public history (1,498 commits, back to
  2011) defines it, so there is no algorithm to follow. ``rmd`` and ``mdav`` are the methods of
  their own of those names, ``onedims`` is ``univariate-microaggregation --variant
  individual-ranking``.
* Missing values are refused, naming the attribute (as ``mdav``).
* ``strata`` (sdcMicro's ``strata_variables``) runs the order and the grouping on each stratum alone
  (:mod:`sdckit.anonymize._microaggregation_strata`): a stratum of fewer than ``k`` records is refused
  (sdcMicro stops with an R error), and so are more ``clusters`` than a stratum's records.

References: Templ, M. (2008), Statistical disclosure control for microdata using the R-package
sdcMicro, Transactions on Data Privacy 1(2), 67-85; Templ, M. & Meindl, B. (2008), Robust statistics
meets SDC, PSD 2008, LNCS 5262, 113-126; Croux, C. & Ruiz-Gazen, A. (2005), High breakdown estimators
for principal components: the projection-pursuit approach revisited, J. Multivariate Analysis 95,
206-226.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import numpy as np
import polars as pl
from pydantic import BeforeValidator, Field, model_validator

from sdckit.anonymize._microaggregation_aggregate import record_statistics
from sdckit.anonymize._microaggregation_orders import consecutive_groups, record_order
from sdckit.anonymize._microaggregation_strata import check_strata_sizes, stratified, stratum_keys
from sdckit.anonymize.base import Context, check_k_at_most_records, register_method, run_method
from sdckit.anonymize.microaggregation import (
    MicroaggregationFigures,
    MicroaggregationParams,
    _chosen,
    _group_figures,
    _group_ranges,
    _loss_figures,
    _numeric_matrix,
    _release,
    _report,
    _with_k_anonymity,
    groups_summary,
    inverse_variance,
    standardized,
)
from sdckit.anonymize.release import Release
from sdckit.errors import ConfigError, InputError
from sdckit.params import Finite, Whole, names_list, spell
from sdckit.table import Table

__all__ = ["SortedMicroaggregationParams", "sorted_groups", "sorted_microaggregation"]

Order = Literal[
    "simple", "single", "pca", "mcdpca", "pppca", "clustpca", "clustmcdpca", "clustpppca", "influence"
]

#: The options each order reads besides k, attributes, measure, trim and weighted.
_USES: dict[str, frozenset[str]] = {
    "simple": frozenset(),
    "single": frozenset({"sort_by"}),
    "pca": frozenset(),
    "mcdpca": frozenset({"seed"}),
    "pppca": frozenset({"directions", "seed"}),
    "clustpca": frozenset({"clusters", "cluster_method", "transf", "seed", "sort_by"}),
    "clustmcdpca": frozenset({"clusters", "cluster_method", "transf", "seed", "sort_by"}),
    "clustpppca": frozenset({"clusters", "cluster_method", "transf", "seed", "sort_by", "directions"}),
    "influence": frozenset({"clusters", "cluster_method", "transf", "seed"}),
}


class SortedMicroaggregationParams(MicroaggregationParams):
    """Parameters of sorting and projection microaggregation (``sdckit anonymize
    sorted-microaggregation``; sdcMicro's ``microaggregation``). The default attributes are the
    quasi-identifiers of kind numeric."""

    order: Annotated[
        Order,
        Field(
            description="sdcMicro's method: simple, single, pca, mcdpca, pppca, clustpca, clustmcdpca, "
            "clustpppca or influence."
        ),
    ] = "pca"
    measure: Annotated[
        Literal["mean", "median", "trim", "onestep"],
        Field(description="Group statistic released: mean, median, trim (trimmed mean) or onestep."),
    ] = "mean"
    trim: Annotated[
        Finite | None,
        Field(ge=0, le=0.5, description="Share cut at each end of a group's values for measure trim."),
    ] = None
    weighted: Annotated[
        bool | None,
        Field(
            description="Weighted mean or median by the configuration's sampling weights (default: "
            "when it has them, as sdcMicro)."
        ),
    ] = None
    sort_by: Annotated[
        str | None,
        Field(description="Attribute order single sorts by, and small clusters (default: the first)."),
    ] = None
    clusters: Annotated[
        Whole | None, Field(ge=1, description="Clusters of the clust orders and influence (default 8).")
    ] = None
    cluster_method: Annotated[
        Literal["kmeans"] | None,
        Field(description="Clustering: kmeans (sdcMicro's clara, pam, cmeans, bclust are not offered)."),
    ] = None
    transf: Annotated[
        Literal["log", "boxcox", "none"] | None,
        Field(description="Transformation before clustering: log (default), boxcox or none."),
    ] = None
    directions: Annotated[
        Whole | None,
        Field(ge=1, description="pppca: candidate directions drawn with seed (default: every record)."),
    ] = None
    seed: Annotated[
        Whole | None, Field(ge=0, description="Seed of the MCD, the clustering, the directions.")
    ] = None
    strata: Annotated[
        list[str] | None,
        BeforeValidator(names_list),
        Field(
            description="Attributes whose value combinations are strata: each is ordered and grouped on "
            "its own (sdcMicro's strata_variables), comma-separated."
        ),
    ] = None

    @model_validator(mode="after")
    def _options_of_the_order(self) -> SortedMicroaggregationParams:
        if self.strata == []:
            raise ValueError("{strata} is empty: give at least one attribute or leave it out")
        if self.measure == "trim" and self.trim is None:
            raise ValueError("with {measure} trim needs {trim} (the share cut at each end, e.g. 0.1)")
        if self.measure != "trim" and self.trim is not None:
            raise ValueError(f"takes {{trim}} only with {{measure}} trim (measure is {self.measure})")
        if self.weighted and self.measure in ("trim", "onestep"):
            raise ValueError(
                f"{{weighted}}: measure {self.measure} has no weighted version "
                "(sdcMicro ignores weights for it)"
            )
        uses = _USES[self.order]
        for name in ("sort_by", "clusters", "cluster_method", "transf", "directions", "seed"):
            if getattr(self, name) is not None and name not in uses:
                users = ", ".join(order for order, used in _USES.items() if name in used)
                raise ValueError(f"takes {{{name}}} only with {{order}} {users} (order is {self.order})")
        return self


def sorted_groups(
    X: np.ndarray,
    k: int,
    order: str = "pca",
    *,
    sort_by: int = 0,
    clusters: int = 8,
    transf: str = "log",
    seed: int = 0,
    directions: int | None = None,
) -> np.ndarray:
    """The group label of every record (row of ``X``): the records in sdcMicro's ``order``, cut into
    groups of ``k`` consecutive records (the last ``k`` to ``2k − 1``); labels follow the order."""
    X = np.asarray(X, dtype=np.float64)
    check_k_at_most_records(k, X.shape[0])
    permutation = record_order(
        X, order, sort_by=sort_by, clusters=clusters, transf=transf, seed=seed, directions=directions
    )
    labels = np.empty(len(X), dtype=np.int64)
    labels[permutation] = consecutive_groups(len(X), k)
    return labels


def _weights(table: Table, params: SortedMicroaggregationParams) -> np.ndarray | None:
    """The sampling weights the measure uses (None: unweighted)."""
    if params.weighted is False or params.measure in ("trim", "onestep"):
        return None
    weights = table.sampling_weights()
    if weights is None:
        if params.weighted:
            raise ConfigError(
                f"sorted-microaggregation: {spell('weighted')} needs sampling weights, and the "
                "configuration names no weights column"
            )
        return None
    bad = int((~np.isfinite(weights) | (weights < 0)).sum())
    if bad:
        raise InputError(
            f"sorted-microaggregation: {bad:,} sampling weights are missing, infinite or negative in "
            f"'{table.weights}'"
        )
    return weights


def _resolved(params: SortedMicroaggregationParams, names: list[str]) -> SortedMicroaggregationParams:
    """The parameters with the defaults of the options the order reads filled in (the recipe)."""
    uses = _USES[params.order]
    defaults: dict[str, Any] = {
        "sort_by": names[0],
        "clusters": 8,
        "cluster_method": "kmeans",
        "transf": "log",
        "seed": 0,
    }
    if params.order == "pppca" and params.directions is None:
        uses = uses - {"seed"}  # every record's direction: nothing is drawn
    filled = {
        name: value for name, value in defaults.items() if name in uses and getattr(params, name) is None
    }
    return params.model_copy(update=filled)


@register_method(
    "sorted-microaggregation",
    SortedMicroaggregationParams,
    summary=lambda release: _summary(release),
    help="sdcMicro's sorting microaggregation (simple, single, pca, mcdpca, pppca, clust*, influence).",
    report=lambda figures: [f"order: {figures['order']}; measure: {figures['measure']}", *_report(figures)],
    progress_label="strata",
    examples={"replay": {"k": 3, "order": "single"}},
)
def _run_sorted(table: Table, params: SortedMicroaggregationParams, context: Context) -> Release:
    method = "sorted-microaggregation"
    names = _chosen(table, params.attributes, numeric=True, method=method)
    if params.sort_by is not None and params.sort_by not in names:
        raise ConfigError(
            f"{spell('sort_by')} must be one of the attributes microaggregated ({', '.join(names)}), "
            f"got '{params.sort_by}'"
        )
    keys = stratum_keys(table, params.strata, names, method)
    X = _numeric_matrix(table, names, method)
    check_k_at_most_records(params.k, X.shape[0])
    check_strata_sizes(table, params.strata, keys, params.k, method)
    params = _resolved(params, names)
    smallest = int(np.bincount(keys).min()) if len(keys) else 0
    if params.clusters is not None and params.clusters > smallest:
        where = "a stratum's records" if params.strata else "the number of records"
        raise ConfigError(
            f"{spell('clusters')} must be at most {where} ({smallest:,}), got {params.clusters}"
        )
    if params.transf in ("log", "boxcox"):
        for j, name in enumerate(names):
            if (X[:, j] <= 0).any():
                raise InputError(
                    f"sorted-microaggregation: {spell('transf')} {params.transf} needs positive values, "
                    f"and attribute '{name}' has {int((X[:, j] <= 0).sum()):,} of 0 or below; use "
                    f"{spell('transf')} none"
                )
    weights = _weights(table, params)
    options: dict[str, Any] = {
        "sort_by": names.index(params.sort_by) if params.sort_by else 0,
        "clusters": params.clusters or 8,
        "transf": params.transf or "log",
        "seed": params.seed or 0,
        "directions": params.directions,
    }
    labels, strata = stratified(
        keys, lambda rows: sorted_groups(X[rows], params.k, params.order, **options), context.progress
    )
    released = record_statistics(X, labels, params.measure, trim=params.trim or 0.0, weights=weights)
    columns = [pl.Series(name, released[:, j], dtype=pl.Float64) for j, name in enumerate(names)]
    sse = float(np.sum(inverse_variance(X) * (X - released) ** 2))
    sst = float(np.sum(standardized(X) ** 2))
    figures = MicroaggregationFigures(
        attributes=names,
        **_group_figures(labels),
        **_loss_figures(sse, sst),
        strata=strata if params.strata else None,
    )
    release = _release(table, method, columns, names, labels, params, figures, _group_ranges(X, labels))
    return _with_k_anonymity(release, params.k)


def _summary(release: Release) -> dict[str, Any]:
    figures = release.figures_as(MicroaggregationFigures)
    params = release.params
    summary: dict[str, Any] = {"attributes": figures.attributes, "k": params.k, "order": params.order}
    summary["measure"] = params.measure
    if params.trim is not None:
        summary["trim"] = params.trim
    summary["weighted"] = (
        release.original.weights is not None
        and params.weighted is not False
        and params.measure in ("mean", "median")
    )
    for name in ("sort_by", "clusters", "cluster_method", "transf", "directions", "seed"):
        if getattr(params, name) is not None:
            summary[name] = getattr(params, name)
    summary.update(groups_summary(figures, params.strata))
    return summary


def sorted_microaggregation(
    table: Table, k: int = 3, attributes: list[str] | None = None, *, order: str = "pca", **options: Any
) -> Release:
    """sdcMicro's ``microaggregation(method = order)`` for the sorting and projection methods (see the
    module docstring): the records ordered, cut into consecutive groups of ``k`` (the last ``k`` to
    ``2k − 1``), each record given its group's ``measure``.

    Parameters
    ----------
    table : the data.
    k : the group size (sdcMicro's ``aggr``).
    attributes : the numeric attributes (default: the numeric quasi-identifiers).
    order : sdcMicro's method (``simple``, ``single``, ``pca``, ``mcdpca``, ``pppca``, ``clustpca``,
        ``clustmcdpca``, ``clustpppca``, ``influence``).
    **options : ``measure``, ``trim``, ``weighted``, ``strata``, ``sort_by``, ``clusters``,
        ``cluster_method``, ``transf``, ``directions``, ``seed`` (each only with the orders that read it).

    Returns
    -------
    Release whose attributes are the group statistics (float64); its figures are
    :class:`~sdckit.anonymize.microaggregation.MicroaggregationFigures`.

    Raises
    ------
    ConfigError for an option the order does not read, ``k`` above the records, a missing value;
    InputError for a transformation of non-positive values or a singular MCD scatter.

    Examples
    --------
    >>> release = sorted_microaggregation(table, 3, ["income", "expend"], order="pppca")  # doctest: +SKIP
    """
    return run_method(
        "sorted-microaggregation", table, {"k": k, "attributes": attributes, "order": order, **options}
    )
