"""Information loss of numeric attributes: the generic measures of Domingo-Ferrer, Mateo-Sanz & Torra
(2001) and Domingo-Ferrer & Torra (2001), and sdcMicro's ``dUtility`` (IL1 and eigen).

X is the n×p original (the chosen numeric attributes), X′ the release, record i of one matched with
record i of the other. For each pair of matrices below, three figures: the mean squared error, the
mean absolute error and the mean variation (|a − a′| / |a|), averaged over the terms of the tutorial's
table (sdc-tutorial, "Numerical microdata generic utility loss measures"):

=========  ======================================================  ========================
pair       what                                                   terms
=========  ======================================================  ========================
X − X′     the data                                               all n·p cells
means      the column means X̄ − X̄′                                 p
V − V′     covariance matrices (ddof 1)                           i ≤ j: p(p+1)/2
variances  their diagonals S − S′                                  p
R − R′     correlation matrices                                   i < j: p(p−1)/2
RF − RF′   correlations of the variables with the principal       p², factor j weighted by
           components (loadings v_ij·√λ_j of the PCA of R)        w_j = λ_j / Σλ
C − C′     communalities c_i = Σ_{j ≤ m} rf_ij² of the first m     p
           factors
F − F′     factor score coefficients f_ij = v_ij / √λ_j           p², weighted by w_j
=========  ======================================================  ========================

The weighted sums are Σ_j w_j Σ_i term_ij / p², as in the tutorial's table; λ_j and w_j are the
original's. Principal components are those of the correlation matrix, in decreasing order of their
eigenvalue; an eigenvector's sign is arbitrary, so each of the release's is turned to point the way
of the original's (non-negative inner product). m, the number of factors of the communalities, is
``factors`` or by default Kaiser's rule on the original (eigenvalues of R above 1, at least one).

Guards (deviations from a literal reading): a mean-variation term whose original value a is 0 is left
out, and the mean is over the terms kept (the figure is null if none is); a variable of zero variance
has correlation 0 with every other (1 with itself); a factor of eigenvalue ≤ 1e-12·p has score
coefficients 0.

sdcMicro (``R/dUtility.R``):

* ``il1`` — IL1 of sdcMicro ≤ 5.5 (``IL1old`` today): (1/(n·p)) Σ_ij |x_ij − x′_ij| / (√2·sd_j), sd of
  the original (ddof 1); a column of sd 0 is left out of the sum (sdcMicro would divide by 0).
  (an older sdcMicro multiplied by √2 instead of dividing, against its own documentation; we divide.)
* ``il1s`` — today's ``IL1s``: the same sum, not divided by n·p.
* ``il1_relative`` — ``IL1`` of sdcMicro 5.6 to 5.8.1 (a different measure under the old name):
  Σ_ij 100·|x_ij − x′_ij| / |x_ij|, the sum of the relative errors in percent; a term whose original
  value is 0 is left out (sdcMicro's ``Inf`` set to NA; its 0/0 is NaN, dropped as well).
* ``robeigen`` (with ``robust``) — ``dUtility(method = "robeigen")``: as ``eigen``, the eigenvalues of
  the Minimum Covariance Determinant scatters of the standardized files (scikit-learn's FAST-MCD with
  ``seed``, where sdcMicro calls robustbase's ``covMcd``: other small-sample corrections, so the
  figure can differ slightly).
* ``il_correl`` — sdcMicro's ``IL_correl``: with d and d′ the diagonals of the inverses of the two
  correlation matrices, ‖d/‖d‖ − d′/‖d′‖‖ / √2 (0 when the release keeps every correlation; null
  when a correlation matrix is singular, where sdcMicro stops with an error).
* ``eigen`` — Σ_j |e_j − e′_j| / e_j, e and e′ the eigenvalues of the correlation matrices
  (``var(scale(x))``) of original and release, in decreasing order (terms with e_j ≤ 1e-12·p, zero up
  to rounding, left out: collinear attributes would make sdcMicro's figure explode).

``il_score`` is the information loss of the tutorial's R-U score example: 100 × the mean of the mean
variations of X, the means, V and the variances and the mean absolute error of R (the figures that
are null are left out of the mean).

Release values: numbers, or labels read by :func:`sdckit.utility.released.numeric_view` (a range as
its midpoint). A suppressed value is replaced by the original's mean of the attribute
(``suppressed: mean``, the default) or its record is left out of every figure (``suppressed: omit``).
Records with a missing value in the original on a chosen attribute are always left out.

References
----------
Domingo-Ferrer, J., Mateo-Sanz, J. M. and Torra, V. (2001). Comparing SDC methods for microdata on the
basis of information loss and disclosure risk. Pre-proceedings of ETK-NTTS 2001, Eurostat, 807-826.
Domingo-Ferrer, J. and Torra, V. (2001). A quantitative comparison of disclosure control methods for
microdata. In Confidentiality, Disclosure and Data Access, North-Holland, 111-134.
Templ, M., Kowarik, A. and Meindl, B. (2015). Statistical disclosure control for micro-data using the
R package sdcMicro. Journal of Statistical Software 67(4) (``dUtility``).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import numpy as np
import polars as pl
from pydantic import Field, model_validator

from sdckit._numba import njit
from sdckit.context import Context
from sdckit.errors import InputError, location
from sdckit.measures import register_measure
from sdckit.params import MethodParams, Whole
from sdckit.table import Kind, Role, Table, undescribed_text_hint
from sdckit.utility.released import choose_attributes, numeric_view, require_columns

__all__ = [
    "NumericLoss",
    "NumericLossParams",
    "Structure",
    "il1",
    "eigen_loss",
    "numeric_information_loss",
    "structure",
]


@njit(cache=True)
def _cell_sums(x: np.ndarray, y: np.ndarray) -> np.ndarray:  # pragma: no cover (compiled)
    """Per column of the n×p matrices: Σ (x − y)², Σ |x − y|, Σ |x − y|/|x| over x ≠ 0 and the number
    of x ≠ 0, in one pass (rows 0..3 of the result)."""
    n, p = x.shape
    sums = np.zeros((4, p))
    for i in range(n):
        for j in range(p):
            difference = abs(x[i, j] - y[i, j])
            sums[0, j] += difference * difference
            sums[1, j] += difference
            if x[i, j] != 0:
                sums[2, j] += difference / abs(x[i, j])
                sums[3, j] += 1.0
    return sums


PAIRS = ("X", "means", "V", "variances", "R", "RF", "C", "F")
_ZERO_EIGENVALUE = 1e-12


@dataclass(frozen=True)
class Structure:
    """The matrices of one data set the measures compare: covariance V, correlation R, eigenvalues
    (decreasing) and eigenvectors of R (columns), loadings RF, communalities C of the first m
    factors and factor score coefficients F."""

    means: np.ndarray
    covariance: np.ndarray
    correlation: np.ndarray
    eigenvalues: np.ndarray
    eigenvectors: np.ndarray
    loadings: np.ndarray
    communalities: np.ndarray
    scores: np.ndarray


def _correlation(covariance: np.ndarray) -> np.ndarray:
    sd = np.sqrt(np.clip(np.diag(covariance), 0.0, None))
    with np.errstate(divide="ignore", invalid="ignore"):
        correlation = covariance / np.outer(sd, sd)
    constant = sd <= 0
    correlation[constant, :] = 0.0
    correlation[:, constant] = 0.0
    np.fill_diagonal(correlation, 1.0)
    return np.clip(correlation, -1.0, 1.0)


def structure(
    x: np.ndarray,
    factors: int,
    reference: np.ndarray | None = None,
    covariance: np.ndarray | None = None,
) -> Structure:
    """The matrices of ``x`` (n×p, n ≥ 2); eigenvectors turned towards ``reference``'s columns when
    given (the original's, so that the release's PCA is read the same way). ``covariance`` may pass
    x's covariance matrix if the caller has it."""
    p = x.shape[1]
    if covariance is None:
        covariance = np.atleast_2d(np.cov(x, rowvar=False, ddof=1))
    correlation = _correlation(covariance)
    eigenvalues, eigenvectors = np.linalg.eigh(correlation)
    order = np.argsort(eigenvalues)[::-1]
    eigenvalues = np.clip(eigenvalues[order], 0.0, None)
    eigenvectors = eigenvectors[:, order]
    if reference is not None:
        signs = np.where(np.einsum("ij,ij->j", eigenvectors, reference) < 0, -1.0, 1.0)
    else:  # a deterministic orientation: the largest entry of each vector positive
        signs = np.sign(eigenvectors[np.abs(eigenvectors).argmax(axis=0), np.arange(p)])
        signs[signs == 0] = 1.0
    eigenvectors = eigenvectors * signs
    loadings = eigenvectors * np.sqrt(eigenvalues)
    communalities = (loadings[:, :factors] ** 2).sum(axis=1)
    kept = eigenvalues > _ZERO_EIGENVALUE * p
    scores = np.zeros_like(eigenvectors)
    scores[:, kept] = eigenvectors[:, kept] / np.sqrt(eigenvalues[kept])
    return Structure(
        x.mean(axis=0), covariance, correlation, eigenvalues, eigenvectors, loadings, communalities, scores
    )


def _errors(a: np.ndarray, b: np.ndarray, weights: np.ndarray | None = None) -> dict[str, float | None]:
    """Mean squared error, mean absolute error and mean variation of the terms a − b (each weighted
    by ``weights`` when given, the sum divided by the number of terms); variation terms with a = 0
    left out."""
    if a.size == 0:
        return {"mse": None, "mae": None, "mean_variation": None}
    w = np.ones_like(a) if weights is None else weights
    difference = np.abs(a - b)
    nonzero = a != 0
    kept = int(nonzero.sum())
    variation = float((w[nonzero] * difference[nonzero] / np.abs(a[nonzero])).sum() / kept) if kept else None
    return {
        "mse": float((w * difference**2).sum() / a.size),
        "mae": float((w * difference).sum() / a.size),
        "mean_variation": variation,
    }


def il1(x: np.ndarray, y: np.ndarray, absolute: np.ndarray | None = None) -> tuple[float, float]:
    """sdcMicro's IL1 (old form, per cell) and IL1s (the sum): Σ |x − y| / (√2·sd_j), sd of ``x``
    (ddof 1); columns of sd 0 left out. ``absolute`` may pass Σ_i |x_ij − y_ij| per column. Returns
    (sum / (n·p), sum)."""
    n, p = x.shape
    sd = x.std(axis=0, ddof=1) if n > 1 else np.zeros(p)
    if absolute is None:
        absolute = np.abs(x - y).sum(axis=0)
    usable = sd > 0
    total = float((absolute[usable] / (np.sqrt(2.0) * sd[usable])).sum())
    return total / (n * p), total


def il1_relative(x: np.ndarray, y: np.ndarray) -> float:
    """sdcMicro 5.8.1's IL1: Σ 100·|x − y| / |x| over the cells whose original value is not 0."""
    usable = x != 0
    return float((100.0 * np.abs(x[usable] - y[usable]) / np.abs(x[usable])).sum())


def il_correl(original: np.ndarray, release: np.ndarray) -> float | None:
    """sdcMicro's ``IL_correl`` of two correlation matrices: ‖d/‖d‖ − d′/‖d′‖‖ / √2 with d, d′ the
    diagonals of their inverses; None when one is singular (numerically: condition number above
    1e12)."""
    diagonals = []
    for matrix in (original, release):
        if not np.all(np.isfinite(matrix)) or np.linalg.cond(matrix) > 1e12:
            return None
        diagonal = np.diag(np.linalg.inv(matrix))
        diagonals.append(diagonal / np.sqrt((diagonal**2).sum()))
    return float(np.sqrt(((diagonals[0] - diagonals[1]) ** 2).sum()) / np.sqrt(2.0))


def robust_eigen_loss(x: np.ndarray, y: np.ndarray, seed: int) -> float | None:
    """sdcMicro's ``dUtility(method = "robeigen")``: :func:`eigen_loss` of the eigenvalues of the MCD
    scatters of the two standardized matrices (R's ``scale``)."""
    from sdckit._extras import require

    require("learn", "sklearn", feature="robeigen (utility numeric --robust)")
    from sklearn.covariance import MinCovDet

    def eigenvalues(a: np.ndarray) -> np.ndarray:
        sd = a.std(axis=0, ddof=1)
        scaled = (a - a.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
        scatter = MinCovDet(random_state=seed).fit(scaled).covariance_
        return np.sort(np.linalg.eigvalsh(scatter))[::-1]

    return eigen_loss(eigenvalues(x), eigenvalues(y))


def eigen_loss(original: np.ndarray, release: np.ndarray) -> float | None:
    """sdcMicro's ``dUtility(method = "eigen")``: Σ |e − e′| / e over the eigenvalues of the two
    correlation matrices in decreasing order (e ≤ 1e-12·p, a zero of rounding, left out)."""
    kept = original > _ZERO_EIGENVALUE * original.size
    if not kept.any():
        return None
    return float((np.abs(original[kept] - release[kept]) / original[kept]).sum())


@dataclass(frozen=True)
class NumericLoss:
    """Numeric information loss of a release (Domingo-Ferrer, Mateo-Sanz & Torra 2001; sdcMicro's
    ``dUtility``): ``figures[pair]`` = {mse, mae, mean_variation} for every pair of :data:`PAIRS`."""

    attributes: tuple[str, ...]
    records: int
    left_out: int
    suppressed: dict[str, int]
    ranges: dict[str, int]
    factors: int
    figures: dict[str, dict[str, float | None]]
    il1: float
    il1s: float
    eigen: float | None
    il1_relative: float
    il_correl: float | None
    original: Structure
    release: Structure
    robust: bool = False
    robeigen: float | None = None
    sdcmicro: dict[str, float | None] | None = None

    @property
    def il_score(self) -> float | None:
        parts = [
            self.figures["X"]["mean_variation"],
            self.figures["means"]["mean_variation"],
            self.figures["V"]["mean_variation"],
            self.figures["variances"]["mean_variation"],
            self.figures["R"]["mae"],
        ]
        kept = [part for part in parts if part is not None]
        return 100.0 * float(np.mean(kept)) if kept else None


def kaiser_factors(eigenvalues: np.ndarray) -> int:
    """Kaiser's rule: the number of eigenvalues of the correlation matrix above 1, at least 1."""
    return max(1, int((eigenvalues > 1.0).sum()))


def numeric_information_loss(
    x: np.ndarray,
    y: np.ndarray,
    *,
    factors: int | None = None,
    attributes: tuple[str, ...] = (),
    left_out: int = 0,
    suppressed: dict[str, int] | None = None,
    ranges: dict[str, int] | None = None,
) -> NumericLoss:
    """Every figure of the module on matched complete matrices ``x`` (original) and ``y`` (release)."""
    n, p = x.shape
    if n < 2:
        raise InputError(f"numeric information loss needs at least 2 complete records, got {n}")
    if factors is not None and factors > p:
        raise InputError(f"factors must be at most the number of attributes ({p}), got {factors}")
    covariance = np.atleast_2d(np.cov(x, rowvar=False, ddof=1))
    m = factors if factors is not None else kaiser_factors(np.linalg.eigvalsh(_correlation(covariance)))
    original = structure(x, m, covariance=covariance)
    release = structure(y, m, reference=original.eigenvectors)
    upper = np.triu_indices(p)
    strict = np.triu_indices(p, 1)
    weights = np.broadcast_to(original.eigenvalues / original.eigenvalues.sum(), (p, p))
    sums = _cell_sums(np.ascontiguousarray(x, dtype=np.float64), np.ascontiguousarray(y, dtype=np.float64))
    kept = sums[3].sum()
    figures = {
        "X": {
            "mse": float(sums[0].sum() / (n * p)),
            "mae": float(sums[1].sum() / (n * p)),
            "mean_variation": float(sums[2].sum() / kept) if kept else None,
        },
        "means": _errors(original.means, release.means),
        "V": _errors(original.covariance[upper], release.covariance[upper]),
        "variances": _errors(np.diag(original.covariance), np.diag(release.covariance)),
        "R": _errors(original.correlation[strict], release.correlation[strict]),
        "RF": _errors(original.loadings.ravel(), release.loadings.ravel(), weights.ravel()),
        "C": _errors(original.communalities, release.communalities),
        "F": _errors(original.scores.ravel(), release.scores.ravel(), weights.ravel()),
    }
    per_cell, total = il1(x, y, sums[1])
    return NumericLoss(
        attributes=attributes,
        records=n,
        left_out=left_out,
        suppressed=suppressed or {},
        ranges=ranges or {},
        factors=m,
        figures=figures,
        il1=per_cell,
        il1s=total,
        eigen=eigen_loss(original.eigenvalues, release.eigenvalues),
        il1_relative=il1_relative(x, y),
        il_correl=il_correl(original.correlation, release.correlation),
        original=original,
        release=release,
    )


class NumericLossParams(MethodParams):
    """Parameters of numeric information loss (``sdckit utility numeric``)."""

    attributes: Annotated[
        str | None,
        Field(
            min_length=1,
            description="Comma-separated numeric attributes (default: every attribute of kind numeric "
            "that is not an identifier).",
        ),
    ] = None
    suppressed: Annotated[
        Literal["mean", "omit"],
        Field(description="A suppressed released value: the original's mean, or its record left out (omit)."),
    ] = "mean"
    factors: Annotated[
        Whole | None,
        Field(
            ge=1,
            description="Factors of the communalities (default: Kaiser's rule, eigenvalues of R above 1).",
        ),
    ] = None
    robust: Annotated[
        bool, Field(description="Also sdcMicro's robeigen (MCD scatters; needs scikit-learn).")
    ] = False
    sdcmicro: Annotated[
        bool, Field(description="Also sdcMicro's summary.micro table (needs scikit-learn for dRiskRMD).")
    ] = False
    seed: Annotated[
        Whole | None, Field(description="Seed of the MCD of --robust and --sdcmicro (default 0).")
    ] = None

    @model_validator(mode="after")
    def _seed_with_robust(self) -> NumericLossParams:
        if self.seed is not None and not (self.robust or self.sdcmicro):
            raise ValueError("takes {seed} only with {robust} or {sdcmicro} (the MCD's random subsets)")
        return self


def numeric_matrices(
    original: Table, release: Table, params: NumericLossParams
) -> tuple[list[str], np.ndarray, np.ndarray, int, dict[str, int], dict[str, int]]:
    """The matched matrices the measure compares: (attributes, x, y, records left out, suppressed and
    range-label counts per attribute)."""
    roles = (Role.QUASI_IDENTIFIER, Role.SENSITIVE, Role.QUASI_SENSITIVE, Role.INSENSITIVE)
    names = choose_attributes(original, params.attributes, default_roles=roles, kind=Kind.NUMERIC)
    require_columns(release, names, aligned_with=original)
    columns, views = [], []
    for name in names:
        column = original.column(name)
        if not column.dtype.is_numeric():
            raise InputError(
                f"{location(original.source, attribute=name)}not numeric (values of type {column.dtype}): "
                "numeric information loss needs numbers in the original"
                f"{undescribed_text_hint(original, name)}"
            )
        columns.append(column.cast(pl.Float64).to_numpy())
        views.append(numeric_view(release.column(name), source=release.source))
    x = np.column_stack(columns).astype(np.float64)
    y = np.column_stack([view.values for view in views])
    complete = ~np.isnan(x).any(axis=1)
    if params.suppressed == "omit":
        complete &= ~np.isnan(y).any(axis=1)
    x, y = x[complete], y[complete]
    if params.suppressed == "mean" and x.shape[0]:
        means = x.mean(axis=0)
        holes = np.isnan(y)
        y[holes] = np.broadcast_to(means, y.shape)[holes]
    suppressed = {name: view.suppressed for name, view in zip(names, views, strict=True)}
    ranges = {name: view.ranges for name, view in zip(names, views, strict=True)}
    return names, x, y, int((~complete).sum()), suppressed, ranges


def _summary(result: NumericLoss) -> dict[str, Any]:
    return {
        "attributes": list(result.attributes),
        "records": result.records,
        "left_out_records": result.left_out,
        "released_suppressed": result.suppressed,
        "released_ranges": result.ranges,
        "factors": result.factors,
        "measures": {
            pair: {key: _exact(value) for key, value in figures.items()}
            for pair, figures in result.figures.items()
        },
        "il1": _exact(result.il1),
        "il1s": _exact(result.il1s),
        "il1_relative": _exact(result.il1_relative),
        "eigen": _exact(result.eigen),
        "il_correl": _exact(result.il_correl),
        **({"robeigen": _exact(result.robeigen)} if result.robust else {}),
        **({"sdcmicro": result.sdcmicro} if result.sdcmicro is not None else {}),
        "il_score": _exact(result.il_score),
    }


def _exact(value: float | None) -> float | None:
    """A figure for JSON at full precision (an eigen loss of 1.85549e-4 must not become 0.000186);
    None for NaN and infinities."""
    return None if value is None or not math.isfinite(value) else float(value)


def _report(figures: dict[str, Any]) -> list[Any]:
    from rich.table import Table as RichTable

    table = RichTable(
        "", "mean squared error", "mean absolute error", "mean variation", title="information loss"
    )

    def shown(value: float | None) -> str:
        return "—" if value is None else f"{value:.6g}"

    for pair, values in figures["measures"].items():
        table.add_row(pair, shown(values["mse"]), shown(values["mae"]), shown(values["mean_variation"]))
    lines: list[Any] = [
        f"{', '.join(figures['attributes'])}: {figures['records']:,} records compared, "
        f"{figures['left_out_records']:,} left out; {figures['factors']} factor(s)",
        table,
        f"IL1 {shown(figures['il1'])} (sum {shown(figures['il1s'])}; sdcMicro <= 5.5); IL1 of sdcMicro 5.8.1 "
        f"{shown(figures['il1_relative'])}; eigen {shown(figures['eigen'])}; "
        f"IL_correl {shown(figures['il_correl'])}; IL score {shown(figures['il_score'])}"
        + (f"; robeigen {shown(figures['robeigen'])}" if "robeigen" in figures else ""),
        *(
            [
                "summary.micro: "
                + ", ".join(f"{key} {shown(value)}" for key, value in figures["sdcmicro"].items())
            ]
            if "sdcmicro" in figures
            else []
        ),
    ]
    return lines


@register_measure(
    "numeric",
    "utility",
    NumericLossParams,
    summary=_summary,
    help="Information loss of numeric attributes: X, V, R, PCA loadings, communalities, factor scores; "
    "sdcMicro's IL1 (old and 5.8.1), eigen and IL_correl.",
    report=_report,
    compares=True,
    headline="il1",
)
def _run(original: Table, release: Table, params: NumericLossParams, context: Context) -> NumericLoss:
    names, x, y, left_out, suppressed, ranges = numeric_matrices(original, release, params)
    result = numeric_information_loss(
        x,
        y,
        factors=params.factors,
        attributes=tuple(names),
        left_out=left_out,
        suppressed=suppressed,
        ranges=ranges,
    )
    if params.robust:
        result = dataclasses.replace(result, robust=True, robeigen=robust_eigen_loss(x, y, params.seed or 0))
    if params.sdcmicro:
        from sdckit.utility._sdcmicro_summary import summary_micro

        result = dataclasses.replace(result, sdcmicro=summary_micro(x, y, params.seed or 0))
    return result
