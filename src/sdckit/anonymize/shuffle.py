"""Model-based data shuffling (Muralidhar & Sarathy 2006; sdcMicro's ``shuffle``): every confidential
numeric attribute is released as a permutation of its own values, ordered as values generated from a
model of the confidential attributes given the non-confidential ones.

``ds`` (sdcMicro's default, the method of the paper)
    The confidential attributes ``X`` and the non-confidential ``S`` (numbers as they are, each other
    attribute as indicator columns of its categories but the first, as R's ``model.matrix``) are
    turned into normal scores ``qnorm((rank − 0.5)/n)`` (average ranks for ties). Their rank
    correlation matrix ``R`` (Spearman; or Pearson's with ``correlation = pearson``) becomes the
    product-moment correlation of the normal scores ``P = 2·sin(π·R/6)``. The perturbed values are
    drawn from the conditional normal model ``Y* = S*·(P_XS P_SS⁻¹)ᵀ + e``,
    ``e ~ N(0, P_XX − P_XS P_SS⁻¹ P_SX)``: given ``S``, ``Y*`` is independent of ``X``.
``mlm`` (sdcMicro's "mlm")
    The perturbed values are the fitted values of the least-squares regression of each confidential
    attribute on ``S`` (with an intercept): no randomness.

Then the *reverse mapping*: in every confidential column, the record with the ``r``-th smallest
perturbed value receives the ``r``-th smallest original value (ties of perturbed values by record
order, as R's ``order(rank(·))``). Each released column is a permutation of the original one (every
marginal is kept exactly), its ranks are those of the perturbed values, and the rank correlations
between the confidential and the non-confidential attributes are about the original ones.

Deviations from sdcMicro 5.8.1:

* ``mvn`` is not offered: its perturbed values are drawn from a normal model with no reference to the
  records' own non-confidential values (``mvrnorm`` of fresh records, then a regression among those),
  so its shuffle is a random permutation as far as each record's ``S`` is concerned. ``correlation =
  mcd`` (robustbase's MCD correlation of the raw values, indicator columns included) is not offered
  either.
* sdcMicro's ``regmethod``, ``weights`` and ``gadp`` only change its ``egadp`` output (a second,
  unshuffled release) and its ``mvn`` method, never the shuffled values of ``ds`` or ``mlm``: they
  have no counterpart.
* A missing value is refused (sdcMicro replaces it by a random present value before ranking and
  releases the confidential value as missing again). One confidential attribute is allowed (sdcMicro
  asks for two, a limitation of its matrix code, not of the method).
* Categories are ordered by their sorted values (R's factor levels follow the locale's collation).

As in sdcMicro, a category's indicator column takes part through its normal scores as if it were a
number: the rank correlation of a shuffled attribute with an indicator keeps its sign but is
attenuated (0.31 becomes about 0.23 in the tests), while those with numeric predictors and between
the shuffled attributes are kept to sampling error.

References: Muralidhar, K. and Sarathy, R. (2006), Data shuffling - a new masking approach for
numerical data, Management Science 52(5), 658-670. Muralidhar, K., Parsa, R. and Sarathy, R. (1999),
A general additive data perturbation method for database security, Management Science 45, 1399-1415.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Self

import numpy as np
import polars as pl
from pydantic import Field, model_validator

from sdckit.anonymize.base import Context, register_method, run_method
from sdckit.anonymize.perturbation import (
    Names,
    _float_column,
    check_columns,
    correlated_noise,
    numeric_attributes,
    perturbed_release,
)
from sdckit.anonymize.release import Figures, Release
from sdckit.errors import ConfigError, InputError
from sdckit.params import MethodParams, Whole
from sdckit.table import Kind, Role, Table


def design_matrix(table: Table, predictors: Sequence[str]) -> tuple[np.ndarray, list[str]]:
    """The non-confidential attributes as numbers: a numeric attribute as it is, any other as one
    0/1 column per category but the first (sorted), named ``name=category``."""
    columns, labels = [], []
    for name in predictors:
        column = table.column(name)
        if column.null_count():
            raise InputError(
                f"shuffle: predictor '{name}' has {column.null_count():,} missing values; "
                "impute or drop them first"
            )
        kind = table.schema[name].kind if name in table.schema else Kind.CATEGORICAL
        if kind is Kind.NUMERIC and column.dtype.is_numeric() and column.dtype != pl.Boolean:
            columns.append(_float_column(table, name))
            labels.append(name)
            continue
        text = column.cast(pl.String)
        for level in text.unique().sort().to_list()[1:]:  # UTF-8 byte order: code point order
            columns.append((text == level).to_numpy().astype(np.float64))
            labels.append(f"{name}={level}")
    if not columns:
        raise InputError("shuffle: the predictors have a single category each; nothing to model")
    return np.column_stack(columns), labels


def average_ranks(values: np.ndarray) -> np.ndarray:
    """The average ranks of every column (ties share the mean of their ranks); a 0/1 indicator column
    is ranked by counting, without sorting."""
    from scipy.stats import rankdata

    n = values.shape[0]
    ranks = np.empty(values.shape, dtype=np.float64)
    for j in range(values.shape[1]):
        column = values[:, j]
        ones = column == 1
        if np.all(ones | (column == 0)):
            zeros = n - int(ones.sum())
            ranks[:, j] = np.where(ones, zeros + (n - zeros + 1) / 2, (zeros + 1) / 2)
        else:
            ranks[:, j] = rankdata(column)
    return ranks


def normal_scores(ranks: np.ndarray) -> np.ndarray:
    """``qnorm((rank − 0.5)/n)`` of every column of (average) ``ranks``."""
    from scipy.special import ndtri

    return np.asarray(ndtri((ranks - 0.5) / ranks.shape[0]))


def ds_correlations(
    x: np.ndarray, s: np.ndarray, correlation: str, ranks: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(B, Σ)``: the regression coefficients ``P_XS P_SS⁻¹`` and the conditional covariance
    ``P_XX − P_XS P_SS⁻¹ P_SX`` of the normal scores, ``P = 2·sin(π·R/6)`` (``ranks``: the average
    ranks of the columns of ``x`` then ``s``, computed when not given)."""
    from scipy.stats import rankdata

    joined = np.column_stack((x, s))
    ranked = joined
    if correlation == "spearman":
        ranked = rankdata(joined, axis=0) if ranks is None else ranks
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.atleast_2d(np.corrcoef(ranked, rowvar=False))
    if not np.all(np.isfinite(r)):
        raise InputError("shuffle: an attribute or predictor is constant; its correlation is undefined")
    pmc = 2 * np.sin(np.pi * r / 6)
    q = x.shape[1]
    pxx, pxs, pss = pmc[:q, :q], pmc[:q, q:], pmc[q:, q:]
    try:
        coefficients = np.linalg.solve(pss, pxs.T).T
    except np.linalg.LinAlgError:
        raise InputError(
            "shuffle: the predictors' correlation matrix is singular (a predictor repeats others); "
            "leave one out"
        ) from None
    return coefficients, pxx - coefficients @ pxs.T


def perturbed_values(
    x: np.ndarray,
    s: np.ndarray,
    model: str,
    correlation: str,
    rng: np.random.Generator,
    ranks: np.ndarray | None = None,
) -> np.ndarray:
    """The values whose ranks order the released ones (``ds``: drawn from the conditional normal
    model of the normal scores; ``mlm``: least-squares fitted values). ``ranks``: the
    :func:`average_ranks` of ``x`` then ``s`` (computed when not given)."""
    if model == "mlm":
        design = np.column_stack((np.ones(len(s)), s))
        coefficients = np.linalg.lstsq(design, x, rcond=None)[0]
        return design @ coefficients
    if ranks is None:
        ranks = average_ranks(np.column_stack((x, s)))
    coefficients, sigma = ds_correlations(x, s, correlation, ranks)
    return normal_scores(ranks[:, x.shape[1] :]) @ coefficients.T + correlated_noise(sigma, len(x), rng)


def reverse_map(original: np.ndarray, perturbed: np.ndarray) -> np.ndarray:
    """The original values in the rank order of the perturbed ones: the record with the ``r``-th
    smallest perturbed value gets the ``r``-th smallest original value (ties by record order)."""
    return _reverse_mapped(original, perturbed, original)[0]


def _reverse_mapped(
    original: np.ndarray, perturbed: np.ndarray, ranks: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`reverse_map` of the values and, by the same permutation, of their ``ranks``."""
    order = np.argsort(perturbed, kind="stable")
    released, released_ranks = np.empty_like(original), np.empty_like(ranks)
    released[order] = np.sort(original)
    released_ranks[order] = np.sort(ranks)
    return released, released_ranks


class ShuffleParams(MethodParams):
    """Parameters of data shuffling (``sdckit anonymize shuffle``)."""

    model: Annotated[
        Literal["ds", "mlm"],
        Field(description="ds: normal-copula model with random draws; mlm: least-squares fitted values."),
    ] = "ds"
    attributes: Annotated[
        Names, Field(description="Confidential numeric attributes, comma-separated (default: numeric QIs).")
    ] = None
    predictors: Annotated[
        Names,
        Field(description="Non-confidential attributes modelled on, comma-separated (default: other QIs)."),
    ] = None
    correlation: Annotated[
        Literal["spearman", "pearson"] | None,
        Field(description="Correlation of the ds model (sdcMicro's covmethod; default spearman)."),
    ] = None
    seed: Annotated[Whole | None, Field(ge=0, description="Seed of the ds model's draws (default 0).")] = None

    @model_validator(mode="after")
    def _ds_only(self) -> Self:
        if self.model == "mlm":
            for name in ("correlation", "seed"):
                if getattr(self, name) is not None:
                    raise ValueError(f"takes {{{name}}} only with model ds (mlm draws nothing)")
        return self


@dataclass(frozen=True)
class ShuffleFigures(Figures):
    """What shuffling did: the predictor columns modelled on (indicators named ``name=category``) and,
    per confidential attribute, the records that kept their own value and the rank correlation of the
    released with the original values."""

    predictor_columns: list[str]
    attributes: dict[str, dict[str, float | int | None]]


def _shuffle_summary(release: Release) -> dict[str, Any]:
    params, figures = release.params, release.figures_as(ShuffleFigures)
    return {
        "model": params.model,
        "correlation": params.correlation,
        "seed": params.seed,
        "predictor_columns": figures.predictor_columns,
        "attributes": figures.attributes,
    }


def _chosen_predictors(table: Table, given: Sequence[str] | None, attributes: Sequence[str]) -> list[str]:
    if given is None:
        given = [
            a.name for a in table.schema.with_role(Role.QUASI_IDENTIFIER) if a.name not in set(attributes)
        ]
        if not given:
            raise ConfigError(
                "predictors: shuffle needs non-confidential attributes; name them with predictors"
            )
    names = list(given)
    check_columns(table, names, "predictors")
    both = [name for name in names if name in attributes]
    if both:
        raise ConfigError(f"predictors: '{both[0]}' is also shuffled; an attribute cannot predict itself")
    return names


def _correlation(a: np.ndarray, b: np.ndarray) -> float | None:
    with np.errstate(invalid="ignore", divide="ignore"):
        value = float(np.corrcoef(a, b)[0, 1])
    return round(value, 6) if np.isfinite(value) else None


@register_method(
    "shuffle",
    ShuffleParams,
    summary=_shuffle_summary,
    help="Model-based data shuffling (Muralidhar & Sarathy 2006; sdcMicro's shuffle): values permuted.",
    report=lambda figures: [
        f"model {figures['model']} on {', '.join(figures['predictor_columns'])}",
        *(
            f"{name}: {item['unchanged_values']:,} records keep their value, rank correlation with the "
            f"original {item['rank_correlation']}"
            for name, item in figures["attributes"].items()
        ),
    ],
    examples={"replay": {"attributes": ["Age"], "predictors": ["Disease"], "seed": 2}},
)
def _run_shuffle(table: Table, params: ShuffleParams, context: Context) -> Release:
    """Data shuffling (see :func:`shuffle`)."""
    names = numeric_attributes(table, params.attributes, "shuffle")
    predictors = _chosen_predictors(table, params.predictors, names)
    x = np.column_stack([_float_column(table, name) for name in names])
    missing = int(np.isnan(x).any(axis=1).sum())
    if missing:
        raise InputError(
            f"shuffle needs complete records: {missing:,} records have a missing value in "
            f"{', '.join(names)}; impute or drop them first"
        )
    if len(x) < 3:
        raise InputError(f"shuffle needs at least 3 records, got {len(x)}")
    s, labels = design_matrix(table, predictors)
    rng = np.random.default_rng(params.seed or 0)
    model = params.model
    ranks = average_ranks(np.column_stack((x, s)) if model == "ds" else x)
    joint_ranks = ranks if model == "ds" else None
    ystar = perturbed_values(x, s, model, params.correlation or "spearman", rng, joint_ranks)
    columns, attributes = [], {}
    for j, name in enumerate(names):
        released, released_ranks = _reverse_mapped(x[:, j], ystar[:, j], ranks[:, j])
        columns.append(pl.Series(name, released))
        attributes[name] = {
            "unchanged_values": int(np.count_nonzero(released == x[:, j])),
            "rank_correlation": _correlation(ranks[:, j], released_ranks),
        }
    figures = ShuffleFigures(predictor_columns=labels, attributes=attributes)
    frame = table.data.with_columns(columns)
    return perturbed_release(table, frame, "shuffle", names, params, figures, seed=params.seed)


def shuffle(
    table: Table,
    attributes: Sequence[str] | None = None,
    *,
    predictors: Sequence[str] | None = None,
    model: str = "ds",
    correlation: str | None = None,
    seed: int | None = None,
) -> Release:
    """Model-based data shuffling of numeric attributes (see the module docstring).

    Parameters
    ----------
    table : the data.
    attributes : the confidential numeric attributes (default: the numeric quasi-identifiers).
    predictors : the non-confidential attributes (default: the other quasi-identifiers).
    model : ``ds`` (the normal-copula model of the paper, random) or ``mlm`` (least-squares fitted
        values, deterministic).
    correlation : ``spearman`` (default) or ``pearson``, for ``ds`` only.
    seed : seed of ``numpy.random.default_rng`` for ``ds`` (default 0); refused with ``mlm``.

    Returns
    -------
    Release whose shuffled columns are float64 permutations of the original ones; its figures are
    :class:`ShuffleFigures`.

    Raises
    ------
    ConfigError for a predictor that is also shuffled; InputError for a missing value, a constant
    attribute or predictors whose correlation matrix is singular.

    Examples
    --------
    >>> release = shuffle(table, ["income", "savings"], predictors=["region", "age"])  # doctest: +SKIP
    """
    values = {
        "attributes": attributes,
        "predictors": predictors,
        "model": model,
        "correlation": correlation,
        "seed": seed,
    }
    return run_method("shuffle", table, values, Context())


__all__ = [
    "ShuffleFigures",
    "ShuffleParams",
    "design_matrix",
    "ds_correlations",
    "normal_scores",
    "perturbed_values",
    "reverse_map",
    "shuffle",
]
