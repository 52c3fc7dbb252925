"""Poisson log-linear models of a contingency table, for :mod:`sdckit.risk.loglinear`.

A model is a hierarchical set of terms over the table's dimensions (``(0,)``, ``(1,)``, ``(0, 1)``,
...). Three ways to fit its expected counts:

* :func:`independence_fit`: the main-effects (independence) model in closed form, ``μ = n ·
  Π_j n_j / n`` from the one-way margins; the maximum-likelihood estimate, which IRLS and IPF converge
  to, computed for the cells asked for only (no full table). :func:`groups_fit` does the same for
  a model whose terms link the dimensions in groups, each group's own term in the model (``a + b +
  c + a:b``: groups ``{a, b}`` and ``{c}``): ``μ = n Π_g n_g / n`` from the groups' margins.
* :func:`irls_fit`: Fisher scoring of the Poisson GLM with log link (R's ``glm.fit``: start ``μ = y +
  0.1``, at most 25 iterations, stop when the deviance changes by less than 1e-8 relative), on the
  full table, the design in treatment contrasts as a sparse matrix, an offset and numeric covariates
  allowed.
* :func:`ipf_fit`: iterative proportional fitting of the margins of the terms on the dense table
  (Deming & Stephan 1940; MASS's ``loglm``), for the hierarchical model without covariates.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.sparse

__all__ = [
    "Fit",
    "design",
    "groups_fit",
    "independence_fit",
    "ipf_fit",
    "irls_fit",
    "poisson_deviance",
    "saturated_groups",
]


@dataclass(frozen=True)
class Fit:
    """Fitted expected counts (one per cell of the full table, C order) and how the fit went."""

    fitted: np.ndarray
    iterations: int
    converged: bool
    deviance: float


def poisson_deviance(y: np.ndarray, mu: np.ndarray) -> float:
    """``2 Σ (y log(y/μ) − (y − μ))`` with ``0 log 0 = 0`` (R's ``poisson()$dev.resids`` summed)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        term = np.where(y > 0, y * np.log(np.where(y > 0, y, 1.0) / mu), 0.0)
    return float(2.0 * np.sum(term - (y - mu)))


def _term_columns(codes: np.ndarray, shape: tuple[int, ...], term: tuple[int, ...]) -> tuple[np.ndarray, int]:
    """For each cell (rows of ``codes``), its column among the term's ``Π (L_v − 1)`` treatment-contrast
    columns, or −1 where some variable of the term is at its first (reference) level."""
    column = np.zeros(len(codes), dtype=np.int64)
    inside = np.ones(len(codes), dtype=bool)
    width = 1
    for axis in term:
        levels = shape[axis] - 1
        inside &= codes[:, axis] > 0
        column = column * levels + np.maximum(codes[:, axis] - 1, 0)
        width *= levels
    return np.where(inside, column, -1), width


def design(
    codes: np.ndarray,
    shape: tuple[int, ...],
    terms: list[tuple[int, ...]],
    covariates: np.ndarray | None = None,
) -> scipy.sparse.csr_matrix:
    """The model matrix (R's ``model.matrix`` with treatment contrasts) of the cells ``codes`` (one row
    of level numbers per cell): an intercept, one block of columns per term, then the covariates."""
    n = len(codes)
    rows = [np.arange(n, dtype=np.int64)]
    columns = [np.zeros(n, dtype=np.int64)]
    values = [np.ones(n)]
    offset = 1
    for term in terms:
        column, width = _term_columns(codes, shape, term)
        hit = np.flatnonzero(column >= 0)
        rows.append(hit)
        columns.append(column[hit] + offset)
        values.append(np.ones(len(hit)))
        offset += width
    if covariates is not None:
        for j in range(covariates.shape[1]):
            rows.append(np.arange(n, dtype=np.int64))
            columns.append(np.full(n, offset, dtype=np.int64))
            values.append(np.asarray(covariates[:, j], dtype=np.float64))
            offset += 1
    return scipy.sparse.csr_matrix(
        (np.concatenate(values), (np.concatenate(rows), np.concatenate(columns))), shape=(n, offset)
    )


def _weighted_solve(x: scipy.sparse.csr_matrix, w: np.ndarray, z: np.ndarray) -> np.ndarray:
    """The weighted least-squares coefficients ``(X'WX)⁻¹ X'Wz``: Cholesky of the normal equations,
    least squares (the minimum-norm solution: the same fitted values as R's pivoted QR) when they are
    singular."""
    weighted = x.multiply(w[:, None]).tocsr()
    gram = np.asarray((x.T @ weighted).todense())
    right = np.asarray(weighted.T @ z).ravel()
    try:
        factor = scipy.linalg.cho_factor(gram, check_finite=False)
        solution = scipy.linalg.cho_solve(factor, right, check_finite=False)
        if np.all(np.isfinite(solution)):
            return np.asarray(solution)
    except np.linalg.LinAlgError:
        pass
    return np.asarray(np.linalg.lstsq(gram, right, rcond=None)[0])


def irls_fit(
    y: np.ndarray,
    x: scipy.sparse.csr_matrix,
    offset: np.ndarray | None = None,
    max_iterations: int = 25,
    epsilon: float = 1e-8,
) -> Fit:
    """The Poisson GLM ``log μ = Xβ + offset`` fitted to the counts ``y`` as R's ``glm.fit`` does it."""
    y = np.asarray(y, dtype=np.float64)
    off = np.zeros(len(y)) if offset is None else np.asarray(offset, dtype=np.float64)
    mu = y + 0.1
    eta = np.log(mu)
    deviance_old = poisson_deviance(y, mu)
    deviance = deviance_old
    converged = False
    iteration = 0
    for iteration in range(1, max_iterations + 1):  # noqa: B007 (the count is reported)
        good = mu > 0  # glm.fit leaves out a cell whose fitted count underflowed to 0
        if good.all():
            beta = _weighted_solve(x, mu, eta - off + (y - mu) / mu)
        else:
            kept = np.flatnonzero(good)
            z = eta[kept] - off[kept] + (y[kept] - mu[kept]) / mu[kept]
            beta = _weighted_solve(x[kept], mu[kept], z)
        eta = np.asarray(x @ beta).ravel() + off
        mu = np.exp(eta)
        deviance = poisson_deviance(y, mu)
        if abs(deviance - deviance_old) / (abs(deviance) + 0.1) < epsilon:
            converged = True
            break
        deviance_old = deviance
    return Fit(fitted=mu, iterations=iteration, converged=converged, deviance=deviance)


def ipf_fit(
    table: np.ndarray, terms: list[tuple[int, ...]], tolerance: float = 1e-10, max_iterations: int = 1000
) -> Fit:
    """Iterative proportional fitting of the margins of ``terms`` of the dense ``table``: start from 1
    in every cell and scale the fit to each observed margin in turn until no margin is off by more
    than ``tolerance`` × the total. The main-effects model is fitted exactly in the first cycle."""
    observed = np.asarray(table, dtype=np.float64)
    fit = np.ones_like(observed)
    axes_all = tuple(range(observed.ndim))
    margins = []
    for term in terms:
        summed = tuple(a for a in axes_all if a not in term)
        margins.append((summed, observed.sum(axis=summed, keepdims=True)))
    limit = tolerance * max(float(observed.sum()), 1.0)
    converged, iteration = not margins, 0
    for iteration in range(1, max_iterations + 1):  # noqa: B007 (the count is reported)
        for summed, margin in margins:
            current = fit.sum(axis=summed, keepdims=True)
            with np.errstate(divide="ignore", invalid="ignore"):
                fit *= np.where(current > 0, margin / current, 0.0)
        worst = max(float(np.max(np.abs(fit.sum(axis=s, keepdims=True) - m))) for s, m in margins)
        if worst <= limit:
            converged = True
            break
    flat = fit.ravel()
    return Fit(
        fitted=flat,
        iterations=iteration,
        converged=converged,
        deviance=poisson_deviance(observed.ravel(), flat),
    )


def independence_fit(codes: np.ndarray, margins: list[np.ndarray]) -> np.ndarray:
    """The main-effects model's expected counts of the cells ``codes``: ``n Π_j (n_j[level] / n)``,
    ``margins[j]`` the counts of dimension j's levels (n their common total)."""
    if not margins:
        return np.zeros(len(codes))
    total = float(margins[0].sum())
    fitted = np.full(len(codes), total)
    if total <= 0:
        return np.zeros(len(codes))
    for j, margin in enumerate(margins):
        fitted *= np.asarray(margin, dtype=np.float64)[codes[:, j]] / total
    return fitted


def saturated_groups(terms: list[tuple[int, ...]], dimensions: int) -> list[tuple[int, ...]] | None:
    """The groups of dimensions the terms link (connected through shared dimensions) when each group
    is itself a term (with a hierarchical model: the saturated model of the group, and the groups
    independent), else None: then the model has no closed form here."""
    parent = list(range(dimensions))

    def root(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for term in terms:
        for a in term[1:]:
            parent[root(a)] = root(term[0])
    grouped: dict[int, list[int]] = {}
    for a in range(dimensions):
        grouped.setdefault(root(a), []).append(a)
    groups = [tuple(group) for group in grouped.values()]
    present = {frozenset(term) for term in terms}
    return groups if all(frozenset(group) in present for group in groups) else None


def groups_fit(
    codes: np.ndarray, levels: tuple[int, ...], groups: list[tuple[int, ...]], y: np.ndarray
) -> np.ndarray:
    """The expected counts of the cells ``codes`` (every cell with a count in ``y``; the others hold 0)
    under the model of independent saturated ``groups``: ``N Π_g N_g / N``, ``N_g`` the sum of ``y``
    over the cells sharing the cell's values on group g."""
    y = np.asarray(y, dtype=np.float64)
    total = float(y.sum())
    if total <= 0:
        return np.zeros(len(codes))
    fitted = np.full(len(codes), total)
    for group in groups:
        if len(group) == 1:
            position = codes[:, group[0]]
            margin = np.bincount(position, weights=y, minlength=levels[group[0]])
        else:
            key = np.zeros(len(codes), dtype=np.int64)
            for axis in group:
                key = key * levels[axis] + codes[:, axis]
            _, position = np.unique(key, return_inverse=True)
            position = position.ravel()
            margin = np.bincount(position, weights=y)
        fitted *= margin[position] / total
    return fitted
