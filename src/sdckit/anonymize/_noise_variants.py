"""Two variants of ``sdckit anonymize noise`` after sdcMicro's ``addNoise``: ``restricted`` (its
method "restr") and ``outliers`` (its method "outdect"); :mod:`sdckit.anonymize.perturbation` runs them.

``restricted`` (Kim 1986; Brand 2002, §4)
    Correlated noise ``Z = X + ε``, ``ε ~ N(0, α·Σ)`` (``α = amount/100``), then the linear
    transformation ``X' = c·Z + (1 − c)·x̄`` with sdcMicro's factor
    ``c = sqrt((n − 1 − α) / ((n + 1)(1 + α)))`` below 500 records and
    ``c = sqrt((n − 1) / (n(1 + α) − 1))`` from 500 on, and ``x̄`` the column means. The released
    means equal ``x̄`` in expectation and the covariance ``c²·(1 + α)·Σ ≈ Σ``: the noise's variance is
    "restricted" so that the released data keep the original's first two moments, in expectation
    (``correlated-exact`` keeps them exactly on the sample).

    Deviation: sdcMicro 5.8.1's "restr" computes ``c`` and ``d = (1 − c)·x̄`` but applies them to the
    original values, ``c·X + d``, without any noise: a deterministic shrinkage towards the means that
    anyone who knows ``α`` and ``n`` inverts exactly, and that shrinks the variances by ``c²``. sdckit
    applies them to the noisy values as Kim and Brand describe; with the noise set to zero
    (:func:`restricted_release` with ``noise = 0``) the result is sdcMicro's, which the tests check.

``outliers`` (sdcMicro's "outdect"; Templ & Meindl 2008)
    Noise only on the outlying records: a record is an outlier when one of its values is above the
    99 % quantile of its attribute (R's default quantile, type 7; only the upper tail, as sdcMicro)
    or when its robust Mahalanobis distance ``sqrt((x − m)ᵀ C⁻¹ (x − m))`` exceeds
    ``sqrt(χ²_{0.975, d})``, with ``(m, C)`` the MCD location and scatter (half the records, as
    sdcMicro's ``covMcd(alpha = 1/2)``). Every attribute of an outlier gets
    ``N(0, (1.96 · sd_j / sqrt(n) · α)²)``, sdcMicro's formula: the noise shrinks with ``sqrt(n)``.

    Deviations: the MCD is FAST-MCD (Rousseeuw & Van Driessen 1999) where sdcMicro calls
    robustbase's ``covMcd``: its start is scikit-learn's ``MinCovDet`` (the ``learn`` extra; ``seed``
    fixes its random subsets) on at most 2,000 records, then C-steps on every record until the
    determinant falls by less than a relative 10^-5; the raw and the reweighted scatter get
    robustbase's consistency factor ``s / F_{χ²_{d+2}}(χ²_{s, d})`` (``s`` the share of records they
    are computed on), but not its
    small-sample correction factors (Pison et al. 2002), so on small files a record near the cut-off
    may be classed otherwise, and FAST-MCD's random start may find another local optimum than
    robustbase's. Records with a missing value take no part in the MCD and
    are not multivariate outliers (sdcMicro's ``mahalanobis`` gives them NA); they can still be
    univariate outliers on their present values, and a missing value stays missing.

References: Kim, J. (1986), A method for limiting disclosure in microdata based on random noise and
transformation, ASA Proc. Survey Research Methods, 303-308. Brand, R. (2002), Microdata protection
through noise addition, LNCS 2316, 97-116. Templ, M. and Meindl, B. (2008), Robustification of
microdata masking methods and the comparison with existing methods, LNCS 5262, 177-189. Rousseeuw, P.
and Van Driessen, K. (1999), A fast algorithm for the minimum covariance determinant estimator,
Technometrics 41.
"""

from __future__ import annotations

import math

import numpy as np

from sdckit._extras import require
from sdckit.errors import InputError


def restricted_factor(n: int, alpha: float) -> float:
    """sdcMicro's ``cc`` of method "restr" for ``n`` records and ``α = amount/100`` (NaN when the
    square root has no real value: fewer than ``α + 1`` records)."""
    small = (n - 1 - alpha) / ((n + 1) * (1 + alpha))
    ratio = small if n < 500 else (n - 1) / (n + n * alpha - 1)
    return math.sqrt(ratio) if ratio >= 0 else math.nan


def restricted_release(x: np.ndarray, noise: np.ndarray, alpha: float) -> np.ndarray:
    """``c·(x + noise) + (1 − c)·x̄`` per column (``x̄`` over the present values, NaN = missing), with
    ``c`` = :func:`restricted_factor` of the number of records (rows of ``x``, as sdcMicro's
    ``nrow``)."""
    n = x.shape[0]
    c = restricted_factor(n, alpha)
    if not math.isfinite(c) or c <= 0:
        raise InputError(
            f"restricted noise needs more records: with {n} records and amount {alpha * 100:g}% its "
            "factor c = sqrt((n - 1 - a)/((n + 1)(1 + a))) is not a positive number"
        )
    present = ~np.isnan(x)
    counts = present.sum(axis=0)
    means = np.where(present, x, 0.0).sum(axis=0) / np.maximum(counts, 1)
    return c * (x + noise) + (1 - c) * means


def upper_quantile_outliers(x: np.ndarray, probability: float = 0.99) -> np.ndarray:
    """Records with a value above its attribute's ``probability`` quantile (R's type 7, missing
    values ignored): sdcMicro's univariate outliers."""
    flagged = np.zeros(x.shape[0], dtype=bool)
    for j in range(x.shape[1]):
        column = x[:, j]
        present = ~np.isnan(column)
        if present.any():
            cut = np.quantile(column[present], probability)
            flagged |= np.where(present, column, -np.inf) > cut
    return flagged


#: Records the MCD's start is searched on (a seeded sample of them when there are more).
MCD_SAMPLE = 2000
#: The condition number of the MCD scatter's correlation matrix from which the scatter counts as
#: singular (half the records or more on a hyperplane): its inverse would hold rounding noise, not the
#: data's shape. Scale-free, so raw attributes of very different units are not refused for that.
MCD_SINGULAR = 1e12


def _consistency(share: float, d: int) -> float:
    """robustbase's ``.MCDcons(d, share)``: the factor that makes the covariance of the ``share`` of
    normal data with the smallest distances consistent, ``share / F_{χ²_{d+2}}(χ²_{share, d})``."""
    from scipy.stats import chi2

    return share / float(chi2.cdf(chi2.ppf(share, d), d + 2)) if share < 1 else 1.0


def _squared_distances(x: np.ndarray, location: np.ndarray, scatter: np.ndarray) -> np.ndarray:
    """The squared Mahalanobis distances of the rows of ``x`` (LinAlgError for a singular scatter)."""
    precision = np.linalg.inv(scatter)
    d = x.shape[1]
    if d > 16:
        centred = x - location
        return np.maximum((centred * (centred @ precision)).sum(axis=1), 0.0)
    # Column by column: for a few attributes this beats a BLAS product of an (n, d) by a (d, d) matrix.
    columns = [x[:, j] - location[j] for j in range(d)]
    total = np.zeros(x.shape[0])
    for i in range(d):
        total += precision[i, i] * columns[i] * columns[i]
        for j in range(i + 1, d):
            total += (precision[i, j] + precision[j, i]) * columns[i] * columns[j]
    return np.maximum(total, 0.0)


def mcd_estimate(x: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The reweighted MCD location and scatter of the rows of ``x`` (``h = floor((n + d + 1)/2)``).

    FAST-MCD's start (scikit-learn's ``MinCovDet`` on at most :data:`MCD_SAMPLE` records, seeded),
    then C-steps on every record until the determinant stops decreasing (Rousseeuw & Van Driessen
    1999), then robustbase's consistency factor on the raw scatter, the reweighting of the records
    within ``χ²_{0.975, d}`` and the consistency factor of the reweighted scatter. LinAlgError when
    that scatter is singular (:data:`MCD_SINGULAR`)."""
    require("learn", "sklearn", feature="noise --noise outliers (the MCD of its robust distances)")
    from scipy.stats import chi2
    from sklearn.covariance import MinCovDet

    n, d = x.shape
    h = (n + d + 1) // 2
    rng = np.random.default_rng(seed)
    start = x if n <= MCD_SAMPLE else x[np.sort(rng.choice(n, MCD_SAMPLE, replace=False))]
    fitted = MinCovDet(random_state=seed).fit(start)
    location, scatter = np.asarray(fitted.raw_location_), np.asarray(fitted.raw_covariance_)
    determinant = np.inf
    for _ in range(100):  # C-steps: each lowers the determinant, until it stalls (as scikit-learn's)
        closest = np.argpartition(_squared_distances(x, location, scatter), h - 1)[:h]
        location, scatter = x[closest].mean(axis=0), np.atleast_2d(np.cov(x[closest], rowvar=False))
        now = float(np.linalg.det(scatter))
        if not now < determinant or np.isclose(now, determinant, rtol=1e-5, atol=0.0):
            break
        determinant = now
    scatter = scatter * _consistency(h / n, d)
    kept = _squared_distances(x, location, scatter) <= chi2.ppf(0.975, d)
    rows = x[kept]
    reweighted = np.atleast_2d(np.cov(rows, rowvar=False)) * _consistency(len(rows) / n, d)
    spread = np.sqrt(np.diag(reweighted))
    # Refused here rather than left to the inverse: whether LAPACK meets an exact zero pivot on a
    # singular scatter depends on the BLAS build (CASC's, condition 3e19, inverts under numpy 2.4).
    if not (spread > 0).all() or not np.linalg.cond(reweighted / np.outer(spread, spread)) < MCD_SINGULAR:
        raise np.linalg.LinAlgError("singular MCD scatter")
    return rows.mean(axis=0), reweighted


def robust_outliers(x: np.ndarray, seed: int) -> np.ndarray:
    """Records complete on every column whose robust Mahalanobis distance (MCD) exceeds
    ``sqrt(χ²_{0.975, d})``: sdcMicro's multivariate outliers."""
    from scipy.stats import chi2

    n, d = x.shape
    complete = ~np.isnan(x).any(axis=1)
    if complete.sum() <= d:
        raise InputError(
            f"outliers noise needs more than {d} records without missing values for the MCD of its "
            f"robust distances, got {int(complete.sum())}"
        )
    rows = x[complete]
    try:
        location, scatter = mcd_estimate(rows, seed)
        squared = _squared_distances(rows, location, scatter)
    except np.linalg.LinAlgError:
        raise InputError(
            "outliers noise: the MCD scatter of the attributes is singular (half the records share a "
            "value or lie on a line); perturb other attributes or use another noise"
        ) from None
    flagged = np.zeros(n, dtype=bool)
    flagged[complete] = np.sqrt(squared) > math.sqrt(chi2.ppf(0.975, d))
    return flagged


def outlier_noise(
    x: np.ndarray, alpha: float, rng: np.random.Generator, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """sdcMicro's "outdect": ``(released, outliers)``; each attribute ``j`` of an outlier gets
    ``N(0, (1.96·sd_j/sqrt(n)·α)²)`` (``n`` the records, ``sd_j`` over the present values)."""
    n, d = x.shape
    outliers = upper_quantile_outliers(x) | robust_outliers(x, seed)
    released = x.copy()
    rows = np.flatnonzero(outliers)
    for j in range(d):
        present = x[~np.isnan(x[:, j]), j]
        sd = float(present.std(ddof=1)) if len(present) > 1 else 0.0
        released[rows, j] += rng.standard_normal(len(rows)) * (1.96 * sd / math.sqrt(n) * alpha)
    return released, outliers
