"""sdcMicro's ``summary.micro`` table (issue 37, item 6), the figures of ``sdckit utility numeric
--sdcmicro``: for the original x and the release x′ (record i of one is record i of the other),

* ``amean``, ``amedian``, ``amad``, ``aonestep``: Σ_j |a_j − a′_j| / |a_j| of the columns' means,
  medians, MADs (R's ``mad``: 1.4826 × the median absolute deviation) and one-step means (values
  beyond median ± (3/1.486)·MAD pulled to that bound, then the mean); terms whose original figure is
  0 left out (R's ``na.rm`` drops its NaN; an infinite term is kept, as in R), except in ``amean``,
  which sdcMicro sums without ``na.rm``;
* ``devvar``: Σ |V − V′| / |V| over the entries of the covariance matrices, divided by p;
  ``acov`` the same divided by 2p (sdcMicro computes both, from ``var`` and ``cov``, which are equal);
  ``acor`` and ``acors`` the same for the Pearson and Spearman correlation matrices, divided by 2p;
* ``adlm``: Σ |β − β′| over the slopes of the least-squares regression of the first attribute on
  the others;
* ``atotals``: Σ_j |(t_j − t′_j) / t_j| and ``pmtotals`` Σ_j (t′_j − t_j) / t_j of the column totals
  (sdcMicro's ``fot`` factor is 1 here: the release is not reweighted);
* ``util1``: dUtility's default, IL1s; ``deigenvalues``: dUtility's ``eigen``;
* ``risk0``: dRisk (k = 0.05); ``risk1``, ``risk2``, ``wrisk1``, ``wrisk2``: dRiskRMD with k = 0.7 as
  summary.micro calls it (:mod:`sdckit.risk.interval`; needs scikit-learn for the MCD).

Not computed: ``apcaload`` and ``apppcaload`` (the means of the PCA loadings, classical and robust):
an eigenvector's sign is arbitrary, so the figure depends on what LAPACK returns and cannot be
reproduced; ``arcov``, ``arcor`` and ``adlts`` are NA in sdcMicro itself.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.stats import rankdata

_ONESTEP = 3 / 1.486


def _relative(original: np.ndarray, release: np.ndarray, drop_nan: bool = True) -> float:
    """Σ |a − a′| / |a|; with ``drop_nan`` NaN terms (0/0) left out as R's ``na.rm = TRUE`` (infinite
    ones kept): summary.micro sums ``amean`` without it, the others with it."""
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.abs(original - release) / np.abs(original)
    return float(np.nansum(terms) if drop_nan else terms.sum())


def _matrix_relative(original: np.ndarray, release: np.ndarray) -> float:
    """Σ |A − A′| / |A| over every entry, without dropping anything (sdcMicro's ``sum``)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return float((np.abs(original - release) / np.abs(original)).sum())


def r_mad(x: np.ndarray) -> np.ndarray:
    """R's ``mad`` per column: 1.4826 × median |x − median(x)|."""
    return 1.4826 * np.median(np.abs(x - np.median(x, axis=0)), axis=0)


def onestep_means(x: np.ndarray) -> np.ndarray:
    """The means of the columns after pulling values beyond median ± (3/1.486)·MAD to that bound."""
    centre, spread = np.median(x, axis=0), r_mad(x)
    return np.clip(x, centre - _ONESTEP * spread, centre + _ONESTEP * spread).mean(axis=0)


def _slopes(x: np.ndarray) -> np.ndarray:
    design = np.column_stack([np.ones(len(x)), x[:, 1:]])
    coefficients, *_ = np.linalg.lstsq(design, x[:, 0], rcond=None)
    return coefficients[1:]


def _spearman(x: np.ndarray) -> np.ndarray:
    return np.atleast_2d(np.corrcoef(np.apply_along_axis(rankdata, 0, x), rowvar=False))


def summary_micro(x: np.ndarray, y: np.ndarray, seed: int = 0) -> dict[str, Any]:
    """sdcMicro's ``summary.micro`` figures of the matched complete matrices ``x`` and ``y`` (see the
    module's docstring); non-finite figures are None."""
    from sdckit.risk.interval import interval_inside, rmd_risk
    from sdckit.utility.information_loss import eigen_loss, il1, structure

    p = x.shape[1]
    cov_x, cov_y = np.atleast_2d(np.cov(x, rowvar=False)), np.atleast_2d(np.cov(y, rowvar=False))
    with np.errstate(divide="ignore", invalid="ignore"):
        cor_x, cor_y = (
            np.atleast_2d(np.corrcoef(x, rowvar=False)),
            np.atleast_2d(np.corrcoef(y, rowvar=False)),
        )
    totals_x, totals_y = x.sum(axis=0), y.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        figures: dict[str, Any] = {
            "amean": _relative(x.mean(axis=0), y.mean(axis=0), drop_nan=False),
            "amedian": _relative(np.median(x, axis=0), np.median(y, axis=0)),
            "aonestep": _relative(onestep_means(x), onestep_means(y)),
            "devvar": _matrix_relative(cov_x, cov_y) / p,
            "amad": _relative(r_mad(x), r_mad(y)),
            "acov": _matrix_relative(cov_x, cov_y) / (2 * p),
            "acor": _matrix_relative(cor_x, cor_y) / (2 * p),
            "acors": _matrix_relative(_spearman(x), _spearman(y)) / (2 * p),
            "adlm": float(np.nansum(np.abs(_slopes(x) - _slopes(y)))) if p > 1 else None,
            "atotals": float(np.abs((totals_x - totals_y) / totals_x).sum()),
            "pmtotals": float(((totals_y - totals_x) / totals_x).sum()),
        }
    figures["util1"] = il1(x, y)[1]
    figures["deigenvalues"] = eigen_loss(structure(x, 1).eigenvalues, structure(y, 1).eigenvalues)
    figures["risk0"] = float(interval_inside(x, y, 0.05).all(axis=1).mean())
    rmd = rmd_risk(x, y, 0.7, 0.05, seed)
    figures.update({key: rmd[key] for key in ("risk1", "risk2", "wrisk1", "wrisk2")})
    return {
        key: (None if value is None or not math.isfinite(value) else float(value))
        for key, value in figures.items()
    }
