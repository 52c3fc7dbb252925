"""Propensity-score utility of a release (Woo, Reiter, Oganian & Karr, 2009), as SPEC §9.4 states it.

Stack the original (n_o records, T = 0) and the release (n_m records, T = 1); N = n_o + n_m and
c = n_m / N. Fit a logistic regression of T on the attributes and let p̂_i be the fitted P(T = 1) of
record i of the stacked file::

    U_p = (1/N) · Σ_i (p̂_i − c)²

U_p = 0 when the model cannot tell the files apart; under perfect separation p̂_i is 0 or 1 and
U_p = c(1 − c) (¼ for files of equal size). ``propensity_loss`` = U_p / (c(1 − c)) puts it on [0, 1].

The model (``model``):

* ``main``: main effects — every categorical attribute one-hot (one level dropped, as the intercept
  is there), every numeric attribute standardized (mean and standard deviation of the stacked file);
* ``interactions`` (default, as in the paper): the main effects, the squares of the numeric
  attributes and every pairwise interaction. The interaction of two categorical attributes is one-hot
  coded on the combinations of values that occur (the span of the products of their indicators,
  without the all-zero columns), of a numeric and a categorical attribute the numeric value times
  each indicator, of two numeric attributes their product. The design matrix is sparse.

The fit: scikit-learn's ``LogisticRegression`` with an L2 penalty of C = 10⁶, i.e. the
objective Σ log-loss + ‖β‖² / (2·10⁶): effectively unpenalized (a stronger penalty shrinks p̂ towards
c and U_p with it, SPEC §9.4), but finite when cells separate perfectly, which an interaction model on
sparse cells often does. The intercept is not penalized. The solver is Newton's method
(``newton-cholesky``, tolerance 1e-8) up to 4,000 features, L-BFGS beyond (its Hessian would not fit);
``converged`` says whether it stopped at its tolerance. Stacked records with the same values and the
same T have the same design row, so the fit runs on one row per such group weighted by its size: the
same likelihood and penalty, on fewer rows. The fit runs on one thread (threadpoolctl): BLAS
threads fighting other processes on a busy machine made it 10-20 times slower.

Values: a categorical attribute's values are categories; so are a release's labels (``[1984, 1988)``,
``*``) and a missing value is a category of its own. An attribute numeric in both files (numbers in
both) is numeric; missing numbers are set to the stacked mean with an indicator column of their own.
An attribute of kind numeric whose release holds labels is categorical in both files (the original's
numbers as categories): the model then sees exactly what generalization changed. The two files need
not have the same number of records.

**Standardized pMSE** (Snoke, Raab, Nowok, Dibben & Slavković 2018). U_p is the pMSE; its size
depends on c, N and the model's number of parameters, so it is compared with its null distribution —
the pMSE of two files drawn from one distribution:

* ``null = analytic`` (in-sample fit of the logistic model, the default): with ``k`` parameters
  (the features plus the intercept), the pMSE under the null has mean ``(k − 1) c (1 − c) / N`` and
  standard deviation ``√(2(k − 1)) c (1 − c) / N``: to first order the fitted p̂ − c is the projection
  of T − c on the k − 1 centred features, so N·pMSE / (c(1 − c)) is χ²_{k−1} (Snoke et al., Section
  3.1). Deviation: the paper and synthpop print the factor (1 − c)² c instead of c (1 − c), half the
  value at c = ½; the permutation null of our fits agrees with c (1 − c) (tests: 0.00029 and 0.00030
  measured for 0.00030 at c = ½, N = 5,000, k − 1 = 6; the paper's factor gives 0.00015);
* ``permutations = B`` (``null = permutation``): the same fit repeated on B random reassignments of the
  labels T (seeded), the null mean and standard deviation those B pMSEs' (ddof 1) — needed for the
  out-of-fold fit, whose null has no closed form.

``pmse_ratio`` = pMSE / null mean (1 when the files are indistinguishable to the model) and
``standardized_pmse`` = (pMSE − null mean) / null sd (about 0, at most a few units, when they are).

**Out-of-fold fit** (``folds = K`` ≥ 2): the stacked records are split at random (seeded) into K folds
and every record is scored by the model fitted on the other folds: a model that memorizes the
release (many features, small files) does not score its own records. Without it (``folds = 0``) the
scores are in-sample, as in Woo et al.

Reference: Woo, M.-J., Reiter, J. P., Oganian, A. and Karr, A. F. (2009). Global measures of data
utility for microdata masked for disclosure limitation. Journal of Privacy and Confidentiality 1(1).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import combinations
from typing import Annotated, Any, Literal

import numpy as np
import polars as pl
from pydantic import Field, model_validator

from sdckit._extras import require
from sdckit.context import Context
from sdckit.frequency import group_records
from sdckit.measures import register_measure
from sdckit.params import MethodParams, Whole, finite_or_none, spell
from sdckit.table import Role, Table, value_strings
from sdckit.utility.disaggregate import DrawSeedField, GeneralizedField, prepared
from sdckit.utility.released import category_codes, choose_attributes, require_columns

__all__ = ["Propensity", "PropensityParams", "design_matrix", "propensity_utility"]

PENALTY_C = 1e6
#: Up to this many features the fit is Newton's method (a features² Hessian: 4,000 -> 128 MB), beyond
#: it L-BFGS.
NEWTON_FEATURES = 4000


@dataclass(frozen=True)
class Propensity:
    """Propensity-score utility U_p of Woo, Reiter, Oganian & Karr (2009): ``scores`` the fitted
    P(release) of every stacked record (the original's first), ``c`` = n_m / N."""

    attributes: tuple[str, ...]
    model: str
    n_original: int
    n_release: int
    features: int
    scores: np.ndarray
    converged: bool
    drawn_cells: dict[str, int] | None = None
    null: str = "analytic"
    null_pmse: tuple[float, float] | None = None  # (mean, sd) of the permutation null
    folds: int = 0

    @property
    def null_mean(self) -> float:
        """Mean of the pMSE under the null (see the module docstring)."""
        if self.null_pmse is not None:
            return self.null_pmse[0]
        n = self.n_original + self.n_release
        return self.features * (1 - self.c) * self.c / n

    @property
    def null_sd(self) -> float:
        """Standard deviation of the pMSE under the null."""
        if self.null_pmse is not None:
            return self.null_pmse[1]
        n = self.n_original + self.n_release
        return float(np.sqrt(2 * self.features)) * (1 - self.c) * self.c / n

    @property
    def pmse_ratio(self) -> float:
        return self.utility / self.null_mean if self.null_mean > 0 else float("nan")

    @property
    def standardized_pmse(self) -> float:
        return (self.utility - self.null_mean) / self.null_sd if self.null_sd > 0 else float("nan")

    @property
    def c(self) -> float:
        return self.n_release / (self.n_original + self.n_release)

    @property
    def utility(self) -> float:
        return float(np.mean((self.scores - self.c) ** 2))

    @property
    def loss(self) -> float:
        return self.utility / (self.c * (1.0 - self.c))


def _indicators(codes: np.ndarray, levels: int, rows: np.ndarray) -> Any:
    """Sparse one-hot columns of ``codes`` (0 .. levels-1), the first level dropped."""
    from scipy import sparse

    keep = codes > 0
    return sparse.csr_matrix(
        (np.ones(int(keep.sum())), (rows[keep], codes[keep] - 1)), shape=(codes.size, max(levels - 1, 0))
    )


def design_matrix(
    original: pl.DataFrame, release: pl.DataFrame, names: list[str], model: str
) -> tuple[Any, list[str]]:
    """The sparse design matrix of the stacked file (the original's rows first), without intercept,
    and the name of each column."""
    from scipy import sparse

    n = original.height + release.height
    rows = np.arange(n)
    numeric: list[tuple[str, np.ndarray]] = []
    categorical: list[tuple[str, np.ndarray, int]] = []
    extra: list[tuple[str, np.ndarray]] = []
    for name in names:
        ours, theirs = original.get_column(name), release.get_column(name)
        if ours.dtype.is_numeric() and theirs.dtype.is_numeric():
            values = np.concatenate([ours.cast(pl.Float64).to_numpy(), theirs.cast(pl.Float64).to_numpy()])
            missing = np.isnan(values)
            if missing.all():
                continue
            values[missing] = values[~missing].mean()
            sd = values.std()
            values = (values - values.mean()) / sd if sd > 0 else np.zeros(n)
            if sd > 0:
                numeric.append((name, values))
            if missing.any():
                extra.append((f"{name} missing", missing.astype(np.float64)))
        else:
            first, second, levels = category_codes(ours, theirs)
            if levels > 1:
                categorical.append((name, np.concatenate([first, second]), levels))
    blocks: list[Any] = []
    labels: list[str] = []
    for name, values in numeric + extra:
        blocks.append(sparse.csr_matrix(values.reshape(-1, 1)))
        labels.append(name)
    for name, codes, levels in categorical:
        blocks.append(_indicators(codes, levels, rows))
        labels.extend(f"{name}={level}" for level in range(1, levels))
    if model == "interactions":
        for name, values in numeric:
            blocks.append(sparse.csr_matrix((values**2).reshape(-1, 1)))
            labels.append(f"{name}^2")
        for (name_a, a), (name_b, b) in combinations(numeric, 2):
            blocks.append(sparse.csr_matrix((a * b).reshape(-1, 1)))
            labels.append(f"{name_a}*{name_b}")
        for name_a, a in numeric:
            for name_b, codes, levels in categorical:
                indicators = _indicators(codes, levels, rows)
                blocks.append(sparse.csr_matrix(indicators.multiply(a.reshape(-1, 1))))
                labels.extend(f"{name_a}*{name_b}={level}" for level in range(1, levels))
        for (name_a, a, _), (name_b, b, levels_b) in combinations(categorical, 2):
            # combinations of values that occur, coded 0..k-1; dropping the combinations in which
            # either value is level 0 leaves exactly the span of the products a_i·b_j (i, j ≥ 1)
            both = (a > 0) & (b > 0)
            pair = a.astype(np.int64) * levels_b + b
            distinct, inverse = np.unique(pair[both], return_inverse=True)
            if distinct.size:
                blocks.append(
                    sparse.csr_matrix(
                        (np.ones(inverse.size), (rows[both], inverse)), shape=(n, distinct.size)
                    )
                )
                labels.extend(f"{name_a}*{name_b}#{code}" for code in distinct)
    if not blocks:
        return sparse.csr_matrix((n, 0)), []
    return sparse.hstack(blocks, format="csr"), labels


def propensity_utility(
    original: pl.DataFrame,
    release: pl.DataFrame,
    names: list[str],
    *,
    model: str = "interactions",
    folds: int = 0,
    permutations: int = 0,
    seed: int = 0,
) -> Propensity:
    """Fit the logistic model of T (0 original, 1 release) and return the fitted scores (out of fold
    with ``folds`` ≥ 2) and, with ``permutations`` > 0, the permutation null of the pMSE."""
    require("learn", "sklearn", feature="the propensity utility measure")

    matrix, _ = design_matrix(original, release, names, model)
    target = np.concatenate([np.zeros(original.height), np.ones(release.height)])
    converged, null_pmse = True, None
    if matrix.shape[1] == 0:
        scores = np.full(target.size, target.mean())
    else:
        # records with the same values and the same T have the same design row: fit on one row per
        # group weighted by its size (the same likelihood, the same penalty), fewer rows to iterate on
        groups = group_records(_stacked_values(original, release, names), [*names, "__T__"])
        rng = np.random.default_rng(seed)
        fold = rng.permutation(target.size) % folds if folds >= 2 else None
        scores, converged = _scores(matrix, groups.keys, groups.first, target, fold)
        if permutations:
            values = []
            for _ in range(permutations):
                shuffled = rng.permutation(target)
                # permuted labels: rows with the same values no longer share T; group on values only
                keys = groups.keys  # group ids of (values, T); regroup by values and the new T
                pair = keys.astype(np.int64) * 2 + shuffled.astype(np.int64)
                _, first, inverse = np.unique(pair, return_index=True, return_inverse=True)
                null_scores, _ = _scores(matrix, inverse.ravel(), first, shuffled, fold)
                values.append(float(np.mean((null_scores - target.mean()) ** 2)))
            null_pmse = (float(np.mean(values)), float(np.std(values, ddof=1)) if permutations > 1 else 0.0)
    return Propensity(
        attributes=tuple(names),
        model=model,
        n_original=original.height,
        n_release=release.height,
        features=int(matrix.shape[1]),
        scores=scores,
        converged=converged,
        null="permutation" if permutations else "analytic",
        null_pmse=null_pmse,
        folds=folds if folds >= 2 else 0,
    )


def _scores(
    matrix: Any, keys: np.ndarray, first: np.ndarray, target: np.ndarray, fold: np.ndarray | None
) -> tuple[np.ndarray, bool]:
    """The fitted P(T = 1) of every stacked record (``keys``: its group of equal design rows and
    equal T, ``first``: a record of each group), in sample or, with ``fold``, out of fold."""
    if fold is None:
        sizes = np.bincount(keys, minlength=len(first)).astype(np.float64)
        fit, converged = _fit(matrix[first], target[first], sizes)
        return fit.predict_proba(matrix[first])[:, 1][keys], converged
    scores, converged = np.empty(target.size), True
    for part in range(int(fold.max()) + 1):
        inside = fold == part
        sizes = np.bincount(keys[~inside], minlength=len(first)).astype(np.float64)
        used = np.flatnonzero(sizes > 0)
        fit, ok = _fit(matrix[first[used]], target[first[used]], sizes[used])
        converged = converged and ok
        rows = np.flatnonzero(inside)
        scores[rows] = fit.predict_proba(matrix[first[keys[rows]]])[:, 1]
    return scores, converged


def _fit(rows: Any, target: np.ndarray, weights: np.ndarray) -> tuple[Any, bool]:
    """The penalized logistic regression of the module docstring, and whether it converged."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression
    from threadpoolctl import threadpool_limits

    solver = "newton-cholesky" if rows.shape[1] <= NEWTON_FEATURES else "lbfgs"
    fit = LogisticRegression(
        C=PENALTY_C, solver=solver, max_iter=200 if solver != "lbfgs" else 2000, tol=1e-8
    )
    # BLAS and OpenMP threads spin against each other on a busy machine (20 times slower measured)
    with warnings.catch_warnings(record=True) as caught, threadpool_limits(limits=1):
        warnings.simplefilter("always", ConvergenceWarning)
        fit.fit(rows, target, sample_weight=weights)
    return fit, not any(issubclass(item.category, ConvergenceWarning) for item in caught)


def _stacked_values(original: pl.DataFrame, release: pl.DataFrame, names: list[str]) -> pl.DataFrame:
    """The stacked file's values as text (as the design matrix codes them) and its T column."""
    columns = [
        pl.concat([value_strings(original.get_column(name)), value_strings(release.get_column(name))]).rename(
            name
        )
        for name in names
    ]
    marker = np.concatenate([np.zeros(original.height, np.int8), np.ones(release.height, np.int8)])
    return pl.DataFrame([*columns, pl.Series("__T__", marker)])


class PropensityParams(MethodParams):
    """Parameters of the propensity-score utility (``sdckit utility propensity``)."""

    attributes: Annotated[
        str | None,
        Field(
            min_length=1,
            description="Comma-separated attributes of the model (default: quasi-identifiers and "
            "sensitive attributes).",
        ),
    ] = None
    model: Annotated[
        Literal["main", "interactions"],
        Field(description="main effects, or main effects + squares + pairwise interactions (Woo et al.)."),
    ] = "interactions"
    max_features: Annotated[
        Whole,
        Field(ge=1, description="Refuse a design matrix with more columns than this (memory and time)."),
    ] = 200_000
    folds: Annotated[
        Whole,
        Field(ge=0, description="Out-of-fold scores from this many folds (0: in-sample fit, as Woo et al.)."),
    ] = 0
    permutations: Annotated[
        Whole,
        Field(
            ge=0,
            description="Null distribution of the pMSE from this many label permutations (0: the "
            "analytic null of the in-sample logistic fit).",
        ),
    ] = 0
    generalized: GeneralizedField = "draw"
    seed: DrawSeedField = 0

    @model_validator(mode="after")
    def _folds_need_permutations(self) -> PropensityParams:
        if self.folds == 1:
            raise ValueError("needs {folds} 0 (in-sample) or at least 2, got 1")
        if self.folds >= 2 and self.permutations < 2:
            raise ValueError(
                "the out-of-fold pMSE has no analytic null: {folds} needs {permutations} at least 2"
            )
        return self


def _summary(result: Propensity) -> dict[str, Any]:
    return {
        "attributes": list(result.attributes),
        "model": result.model,
        "original_records": result.n_original,
        "release_records": result.n_release,
        "features": result.features,
        "c": finite_or_none(result.c),
        "propensity_utility": finite_or_none(result.utility),
        "propensity_loss": finite_or_none(result.loss),
        "converged": result.converged,
        "pmse": finite_or_none(result.utility),
        "null": result.null,
        "folds": result.folds,
        "pmse_null_mean": finite_or_none(result.null_mean),
        "pmse_null_sd": finite_or_none(result.null_sd),
        "pmse_ratio": finite_or_none(result.pmse_ratio),
        "standardized_pmse": finite_or_none(result.standardized_pmse),
        "drawn_cells": result.drawn_cells,
    }


def _records(result: Propensity) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "table": ["original"] * result.n_original + ["release"] * result.n_release,
            "record": np.concatenate([np.arange(result.n_original), np.arange(result.n_release)]),
            "propensity": result.scores,
        }
    )


def _report(figures: dict[str, Any]) -> list[Any]:
    note = "" if figures["converged"] else " (the fit did not converge: separation)"
    return [
        f"{figures['model']} model on {len(figures['attributes'])} attributes, {figures['features']:,} "
        f"features; c = {figures['c']:g}",
        f"U_p = {figures['propensity_utility']:.6g}, U_p / c(1−c) = {figures['propensity_loss']:.6g}{note}",
        f"pMSE ratio {_number(figures.get('pmse_ratio'))}, standardized pMSE "
        f"{_number(figures.get('standardized_pmse'))} ({figures.get('null', 'analytic')} null"
        f"{', out of fold' if figures.get('folds') else ', in sample'})",
    ]


def _number(value: Any) -> str:
    return "—" if value is None else f"{value:.4g}"


@register_measure(
    "propensity",
    "utility",
    PropensityParams,
    summary=_summary,
    help="Propensity-score utility (Woo, Reiter, Oganian & Karr 2009): how well a logistic model tells "
    "the release from the original.",
    report=_report,
    records=_records,
    compares=True,
    progress_label="fitting",
    headline="propensity_loss",
)
def _run(original: Table, release: Table, params: PropensityParams, context: Context) -> Propensity:
    from sdckit.errors import ConfigError

    roles = (Role.QUASI_IDENTIFIER, Role.SENSITIVE)
    names = choose_attributes(original, params.attributes, default_roles=roles)
    require_columns(release, names)
    drawn = prepared(original, release, names, params.generalized, params.seed)
    release = drawn.table
    features = _count_features(original.data, release.data, names, params.model)
    if features > params.max_features:
        raise ConfigError(
            f"the {params.model} model of {', '.join(names)} has {features:,} features, more than "
            f"{spell('max_features')} {params.max_features:,}: choose fewer attributes "
            f"({spell('attributes')}), "
            f"the main model, or raise {spell('max_features')}"
        )
    result = propensity_utility(
        original.data,
        release.data,
        names,
        model=params.model,
        folds=params.folds,
        permutations=params.permutations,
        seed=params.seed,
    )
    return replace(result, drawn_cells=drawn.cells)


def _count_features(original: pl.DataFrame, release: pl.DataFrame, names: list[str], model: str) -> int:
    """An upper bound of the design matrix's width, without building it."""
    numeric, levels = 0, []
    for name in names:
        a, b = original.get_column(name), release.get_column(name)
        if a.dtype.is_numeric() and b.dtype.is_numeric():
            numeric += 2
        else:
            _, _, count = category_codes(a, b)
            levels.append(count - 1)
    total = numeric + sum(levels)
    if model == "interactions":
        total += numeric + numeric * (numeric - 1) // 2 + numeric * sum(levels)
        rows = original.height + release.height
        total += sum(min(x * y, rows) for x, y in combinations(levels, 2))
    return total
