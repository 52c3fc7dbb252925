"""The draws of ``synthesize --model regression`` (see :mod:`sdckit.anonymize.synthesis`): a numeric
attribute from the posterior predictive distribution of a normal linear model, kept within bounds by
rejection then clipping, and a categorical one from a multinomial logistic regression refitted per
implicate on a bootstrap sample (mice's ``logreg.boot``)."""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy import sparse

from sdckit._extras import require
from sdckit.errors import ConfigError
from sdckit.params import spell


def _linear_draw(
    x_fit: sparse.csr_matrix,
    y_fit: np.ndarray,
    x_gen: sparse.csr_matrix,
    m: int,
    n_gen: np.ndarray,
    name: str,
    rng,
    bounds: tuple[float, float] | None = None,
    tally: dict[str, int] | None = None,
) -> np.ndarray:
    """Values drawn from the posterior predictive distribution of a normal linear model (see the
    module docstring); ``x_*`` without the intercept, which is added here. ``bounds``: a value
    outside them gets a fresh residual draw, up to ``BOUND_TRIES`` times, then is clipped to them;
    ``tally`` counts the values ``redrawn`` and those ``clipped``."""
    x_fit = np.hstack([np.ones((x_fit.shape[0], 1)), x_fit.toarray()])
    x_gen = sparse.hstack([np.ones((x_gen.shape[0], 1)), x_gen], format="csr")  # M·n rows stay sparse
    beta, _, rank, _ = np.linalg.lstsq(x_fit, y_fit, rcond=None)
    df = len(y_fit) - rank
    if df < 1:
        raise ConfigError(
            f"{name}: linear regression needs more records than parameters ({len(y_fit)} records, "
            f"{rank} independent predictors); use {spell('model')} cart"
        )
    residuals = y_fit - x_fit @ beta
    rss = float(residuals @ residuals)
    # (XᵀX)⁺ and its symmetric square root: a rank-deficient design draws in the identified directions.
    eigenvalues, vectors = np.linalg.eigh(x_fit.T @ x_fit)
    floor = eigenvalues.max() * 1e-10 if eigenvalues.size else 0.0
    inverse_root = np.where(eigenvalues > floor, 1 / np.sqrt(np.maximum(eigenvalues, floor)), 0.0)
    root = vectors * inverse_root
    out = np.empty(x_gen.shape[0])
    offset = 0
    for block in range(m):
        size = int(n_gen[block])
        sigma2 = rss / rng.chisquare(df) if rss > 0 else 0.0
        draw = beta + math.sqrt(sigma2) * (root @ rng.standard_normal(len(beta)))
        mean = x_gen[offset : offset + size] @ draw
        values = mean + math.sqrt(sigma2) * rng.standard_normal(size)
        if bounds is not None:
            values = _bounded(values, mean, math.sqrt(sigma2), bounds, rng, tally)
        out[offset : offset + size] = values
        offset += size
    return out


#: Fresh residual draws of a regression value outside the bounds before it is clipped.
BOUND_TRIES = 20


def _bounded(
    values: np.ndarray,
    mean: np.ndarray,
    sigma: float,
    bounds: tuple[float, float],
    rng: np.random.Generator,
    tally: dict[str, int] | None,
) -> np.ndarray:
    """``values`` (= ``mean`` + N(0, σ²)) inside ``bounds``: a draw from the normal truncated to
    them by rejection (``BOUND_TRIES`` fresh residuals for the values outside), then clipping of
    those still outside."""
    low, high = bounds
    outside = np.flatnonzero((values < low) | (values > high))
    if tally is not None:
        tally["redrawn"] = tally.get("redrawn", 0) + len(outside)
    for _ in range(BOUND_TRIES):
        if not len(outside):
            break
        values[outside] = mean[outside] + sigma * rng.standard_normal(len(outside))
        outside = outside[(values[outside] < low) | (values[outside] > high)]
    if tally is not None:
        tally["clipped"] = tally.get("clipped", 0) + len(outside)
    return np.clip(values, low, high)


def _logistic_draw(
    x_fit: sparse.csr_matrix,
    y_fit: np.ndarray,
    x_gen: sparse.csr_matrix,
    m: int,
    n_gen: np.ndarray,
    size: int,
    rng,
) -> np.ndarray:
    """Codes drawn from a multinomial logistic regression refitted per implicate on a bootstrap
    sample of the records."""
    require("learn", "sklearn", feature="synthesis of a categorical attribute by regression")
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    out = np.empty(x_gen.shape[0], dtype=np.int64)
    offset = 0
    for block in range(m):
        count = int(n_gen[block])
        sample = rng.integers(0, len(y_fit), len(y_fit))
        uniforms = rng.random(count)
        y_boot = y_fit[sample]
        classes = np.unique(y_boot)
        if len(classes) == 1 or x_fit.shape[1] == 0:
            frequencies = np.bincount(y_boot, minlength=size).astype(np.float64)
            probabilities = np.repeat((frequencies / frequencies.sum())[None, :], count, axis=0)
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                model = LogisticRegression(max_iter=1000).fit(x_fit[sample], y_boot)
            probabilities = np.zeros((count, size))
            probabilities[:, model.classes_] = model.predict_proba(x_gen[offset : offset + count])
        cumulative = np.cumsum(probabilities, axis=1)
        cumulative /= cumulative[:, -1:]
        out[offset : offset + count] = np.minimum((uniforms[:, None] >= cumulative).sum(axis=1), size - 1)
        offset += count
    return out
