"""The record orders of sdcMicro's sorting and projection microaggregation methods (``micro_simple``,
``micro_single``, ``micro_pca``, ``micro_mcdpca``, ``micro_pppca``, ``micro_clustpca``,
``micro_clustmcdpca``, ``micro_clustpppca`` and ``micro_influence`` of ``R/microaggregation.R``), and
sdcMicro's grouping of an order (``indexMicro``): see :mod:`sdckit.anonymize.sorted_microaggregation`
for what each computes and where sdckit deviates.

Every order is a permutation of the record indices; ties keep the records' order (R's ``sort(...,
index.return = TRUE)`` and ``order`` are stable).
"""

from __future__ import annotations

import numpy as np

from sdckit._numba import njit
from sdckit.errors import InputError

__all__ = [
    "CLUSTERED",
    "ORDERS",
    "cluster_labels",
    "consecutive_groups",
    "mcd_scores",
    "pca_scores",
    "pp_direction",
    "record_order",
]

#: sdcMicro's method names, in the order of its documentation.
ORDERS = (
    "simple",
    "single",
    "pca",
    "mcdpca",
    "pppca",
    "clustpca",
    "clustmcdpca",
    "clustpppca",
    "influence",
)
#: The orders that cluster the records first.
CLUSTERED = ("clustpca", "clustmcdpca", "clustpppca", "influence")


def consecutive_groups(n: int, k: int) -> np.ndarray:
    """The group of every position of an order of ``n`` records (sdcMicro's ``indexMicro``): groups
    of ``k`` consecutive records, the last one taking the remainder (``k`` to ``2k − 1`` records);
    ``k ≤ n < 2k`` is one group (sdcMicro stops there)."""
    groups = max(1, n // k)
    return np.minimum(np.arange(n, dtype=np.int64) // k, groups - 1)


def _oriented(vector: np.ndarray) -> np.ndarray:
    """An eigenvector's sign fixed: its first entry that is not zero (to rounding) is positive (R's
    LAPACK leaves the sign to the algorithm; sdcMicro's ``prcompRob`` makes the first entry positive)."""
    nonzero = np.flatnonzero(np.abs(vector) > 1e-9 * np.abs(vector).max())
    return vector if len(nonzero) == 0 or vector[nonzero[0]] > 0 else -vector


def _first_axis(scatter: np.ndarray) -> np.ndarray:
    values, vectors = np.linalg.eigh(scatter)
    return _oriented(vectors[:, int(np.argmax(values))])


def _scaled(X: np.ndarray) -> np.ndarray:
    """R's ``scale``: centred, divided by the sample standard deviation (a constant column only
    centred: R's division by 0 would stop princomp)."""
    centred = X - X.mean(axis=0)
    spread = X.std(axis=0, ddof=1) if len(X) > 1 else np.zeros(X.shape[1])
    return centred / np.where(spread > 0, spread, 1.0)


def pca_scores(X: np.ndarray) -> np.ndarray:
    """The first principal component scores of the standardized records (``princomp(scale(x))``)."""
    Z = _scaled(X)
    return Z @ _first_axis(Z.T @ Z)


def mcd_scores(X: np.ndarray, seed: int) -> np.ndarray:
    """The scores on the first eigenvector of the MCD scatter (``princomp(covmat = cov.mcd(x))``:
    the raw, unstandardized attributes, centred at the MCD location)."""
    from sdckit.anonymize._noise_variants import mcd_estimate

    varying = X.std(axis=0) > 0
    axis = np.zeros(X.shape[1])
    if not varying.any():
        return np.zeros(len(X))
    try:
        location, scatter = mcd_estimate(X[:, varying], seed)
        axis[varying] = _first_axis(scatter)
    except np.linalg.LinAlgError:
        raise InputError(
            "sorted-microaggregation: the MCD scatter of the attributes is singular (half the records "
            "or more lie on a hyperplane); use order pca or pppca"
        ) from None
    centre = np.zeros(X.shape[1])
    centre[varying] = location
    return (X - centre) @ axis


@njit(cache=True, nogil=True)
def _projection_spreads(Xc: np.ndarray, candidates: np.ndarray) -> np.ndarray:  # pragma: no cover
    """The median absolute deviation (unscaled) of the projections of all rows of ``Xc`` on each
    candidate direction ``Xc[c] / |Xc[c]|`` (−1 for a row at the centre, which gives no direction).
    O(n · candidates · d): every candidate projects every record."""
    n, d = Xc.shape
    out = np.empty(len(candidates))
    y = np.empty(n)
    for t in range(len(candidates)):
        c = candidates[t]
        norm = 0.0
        for j in range(d):
            norm += Xc[c, j] * Xc[c, j]
        if norm == 0.0:
            out[t] = -1.0
            continue
        norm = np.sqrt(norm)
        for i in range(n):
            total = 0.0
            for j in range(d):
                total += Xc[i, j] * Xc[c, j]
            y[i] = total / norm
        centre = np.median(y)
        for i in range(n):
            y[i] = abs(y[i] - centre)
        out[t] = np.median(y)
    return out


def pp_direction(X: np.ndarray, candidates: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(direction, centre)`` of the first robust principal component by projection pursuit (Croux &
    Ruiz-Gazen 2005; sdcMicro's ``prcompRob(x, 1)``): the records centred at the coordinatewise
    median; among the directions from the centre to each record (``candidates``: those records;
    default every record), the one whose projections have the largest MAD (the last of equals, as
    ``order(s)[n]``), with a positive first entry."""
    centre = np.median(X, axis=0)
    Xc = np.ascontiguousarray(X - centre)
    rows = np.arange(len(X), dtype=np.int64) if candidates is None else np.asarray(candidates, np.int64)
    spreads = _projection_spreads(Xc, rows)
    best = rows[len(spreads) - 1 - int(np.argmax(spreads[::-1]))]
    norm = float(np.sqrt(np.sum(Xc[best] ** 2)))
    if norm == 0.0:
        direction = np.zeros(X.shape[1])
        direction[0] = 1.0
    else:
        direction = Xc[best] / norm
    if direction[0] < 0:
        direction = -direction
    return direction, centre


def _pp_scores(X: np.ndarray, directions: int | None, rng: np.random.Generator) -> np.ndarray:
    candidates = None
    if directions is not None and directions < len(X):
        candidates = np.sort(rng.choice(len(X), directions, replace=False))
    direction, centre = pp_direction(X, candidates)
    return (X - centre) @ direction


def _transformed(X: np.ndarray, transf: str) -> np.ndarray:
    """The standardized input of the clustering: raw values, logarithms or Box-Cox transforms."""
    if transf != "none" and (X <= 0).any():
        column = int(np.flatnonzero((X <= 0).any(axis=0))[0])
        raise InputError(
            f"sorted-microaggregation: transf {transf} needs positive values, but attribute {column + 1} "
            "has a value of 0 or below; use transf none"
        )
    if transf == "log":
        return _scaled(np.log(X))
    if transf == "boxcox":
        from scipy import stats

        varying = X.std(axis=0) > 0
        Y = X.copy()
        for j in np.flatnonzero(varying):
            Y[:, j] = stats.boxcox(X[:, j])[0]
        return _scaled(Y)
    return _scaled(X)


def cluster_labels(X: np.ndarray, clusters: int, transf: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``(labels, centres)``: k-means (scikit-learn, k-means++ start seeded by ``seed``, one start)
    of the standardized, transformed records into ``clusters`` clusters; ``centres`` in that space."""
    from sklearn.cluster import KMeans

    Y = _transformed(X, transf)
    fitted = KMeans(n_clusters=clusters, n_init=1, random_state=seed).fit(Y)
    return fitted.labels_.astype(np.int64), np.asarray(fitted.cluster_centers_)


def _within(X: np.ndarray, order: str, sort_by: int, seed: int, directions: int | None) -> np.ndarray:
    """The order of one cluster's records (sdcMicro: by ``sort_by`` when it has fewer records than
    attributes, else by the projection)."""
    if len(X) < X.shape[1]:
        return np.argsort(X[:, sort_by], kind="stable")
    if order == "clustpca":
        scores = pca_scores(X)
    elif order == "clustmcdpca":
        scores = mcd_scores(X, seed)
    else:
        scores = _pp_scores(X, directions, np.random.default_rng(seed))
    return np.argsort(scores, kind="stable")


def record_order(
    X: np.ndarray,
    order: str,
    *,
    sort_by: int = 0,
    clusters: int = 8,
    transf: str = "log",
    seed: int = 0,
    directions: int | None = None,
) -> np.ndarray:
    """The permutation of the records (rows of ``X``) that sdcMicro's ``order`` method groups
    consecutively; ``sort_by`` is the column index of ``single`` (and of small clusters)."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    if order == "simple":
        return np.arange(len(X), dtype=np.int64)
    if order == "single":
        return np.argsort(X[:, sort_by], kind="stable").astype(np.int64)
    if order == "pca":
        return np.argsort(pca_scores(X), kind="stable").astype(np.int64)
    if order == "mcdpca":
        return np.argsort(mcd_scores(X, seed), kind="stable").astype(np.int64)
    if order == "pppca":
        return np.argsort(_pp_scores(X, directions, np.random.default_rng(seed)), kind="stable").astype(
            np.int64
        )
    labels, centres = cluster_labels(X, clusters, transf, seed)
    parts = []
    for cluster in range(clusters):
        members = np.flatnonzero(labels == cluster)
        if order == "influence":
            column = int(np.argmax(centres[cluster]))
            parts.append(members[np.argsort(X[members, column], kind="stable")])
        else:
            parts.append(members[_within(X[members], order, sort_by, seed, directions)])
    return np.concatenate(parts).astype(np.int64)
