"""Perturbative masking of microdata: noise addition, an ε-differentially private release, rank
swapping and data swapping (PRAM is in :mod:`sdckit.anonymize.pram`).

Every method keeps the records and their order, changes the values of the attributes it is given
and leaves every other column as it is (identifiers are dropped, as by every method).

``noise`` (sdcMicro's ``addNoise``; SPEC §9.3)
    ``additive``: each attribute ``j`` gets independent noise ``N(0, (amount/100 · sd_j)²)``, as
    sdcMicro's method "additive" (its ``noise`` is our ``amount``). ``correlated``: every record gets
    ``ε ~ N(0, α·Σ)`` with ``α = amount/100`` and ``Σ`` the sample covariance of the complete records,
    as sdcMicro's method "correlated" (Kim 1986; Brand 2002): means are kept and the covariance becomes
    ``(1 + α)·Σ`` in expectation, so correlations are kept. ``correlated-exact``: the same noise, then
    the linear transformation ``Z' = x̄ + (Z − z̄)·A`` with ``A = S_Z^{-1/2} Σ^{1/2}`` (symmetric square
    roots), which makes the released sample means and sample covariance matrix equal to the original
    ones exactly (up to rounding). This is Kim's (1986) idea of a linear transformation after
    correlated noise, with the coefficients computed on the sample rather than in expectation (Kim's
    ``c·Z + d`` and sdcMicro's "correlated2" keep them only in expectation). ``restricted``: Kim's
    ``c·Z + d`` after correlated noise, with sdcMicro's ``c`` (its "restr"), and ``outliers``: noise
    only on univariate and robust multivariate outliers (its "outdect"); both in
    :mod:`sdckit.anonymize._noise_variants`, with their deviations from sdcMicro.
``dp-noise``
    An ε-differentially private release of numeric attributes: every value is clamped to its declared
    bounds ``[lower, upper]``, then Laplace noise of scale ``(upper − lower)/ε_j`` is added by OpenDP's
    vector Laplace mechanism (exact sampling, no floating-point leak; Mironov 2012). Changing one record
    moves each of its values by at most ``upper − lower``, so attribute ``j`` is ``ε_j``-DP for a
    change of one record; by default ``ε`` is split evenly (``ε_j = ε/d`` over ``d`` attributes, total
    ``ε``), or applies to every attribute (``budget="per-attribute"``, total ``d·ε``). OpenDP's
    samplers are cryptographically random and cannot be seeded: a dp-noise release cannot be
    reproduced, and its recipe says so (``replays_exactly: false``).
``rank-swap`` (Moore 1996; the μ-Argus code that sdcMicro's ``rankSwap`` runs; SPEC §9.1)
    Each attribute is sorted and each value swapped with a partner whose rank differs by at most
    ``floor(n·p/100)`` (at least 1), with μ-Argus's partner search. The marginal of every attribute is
    kept exactly. Missing values take no part and stay where they are. Moore's R0/K0 criteria are
    not implemented (as in SPEC).
``swap``
    Data swapping of categorical values (Dalenius & Reiss 1982): in each stratum, a share ``rate`` of
    the records is paired at random and every pair exchanges its values of the swapped attributes (all
    of them together). Every swapped attribute's frequencies within each stratum, and their joint
    frequencies, are kept exactly; the pairs are drawn without looking at the values, so a pair may
    hold equal values (the summary reports the records actually changed).

References: Kim, J. (1986), A method for limiting disclosure in microdata based on random noise and
transformation, ASA Proc. Survey Research Methods, 303-308. Brand, R. (2002), Microdata protection
through noise addition, LNCS 2316. Moore, R. (1996), Controlled data-swapping techniques for masking
public use microdata sets, US Census Bureau. Dalenius, T. and Reiss, S. (1982), Data-swapping: a
technique for disclosure control, J. Statistical Planning and Inference 6. Dwork, McSherry, Nissim and
Smith (2006), Calibrating noise to sensitivity in private data analysis, TCC. Mironov, I. (2012), On
significance of the least significant bits for differential privacy, CCS.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import numpy as np
import polars as pl
from pydantic import AfterValidator, BeforeValidator, Field

from sdckit._extras import require
from sdckit._numba import njit
from sdckit.anonymize._noise_variants import outlier_noise, restricted_release
from sdckit.anonymize.base import Context, register_method, run_method
from sdckit.anonymize.release import Figures, Release
from sdckit.errors import ConfigError, InputError
from sdckit.params import Finite, MethodParams, Whole, finite_or_none, names_list, spell
from sdckit.table import Kind, Role, Schema, Table, undescribed_text_hint

# Shared pieces ------------------------------------------------------------------------------------


Names = Annotated[list[str] | None, BeforeValidator(names_list)]


def check_columns(table: Table, names: Sequence[str], parameter: str) -> None:
    """Every name is an attribute of the table, and none is an identifier."""
    for name in names:
        if name not in table.data.columns:
            raise ConfigError(
                f"{parameter}: '{name}' is not a column of the data "
                f"(columns: {', '.join(table.data.columns)})"
            )
        if name in table.schema and table.schema[name].role is Role.IDENTIFIER:
            raise ConfigError(f"{parameter}: '{name}' is an identifier, which is dropped from every release")
    if len(set(names)) != len(names):
        raise ConfigError(f"{parameter}: an attribute is named twice ({', '.join(names)})")


def chosen_attributes(
    table: Table, attributes: Sequence[str] | None, role: Role, kinds: tuple[Kind, ...], when_none: str
) -> list[str]:
    """``attributes``, or by default the attributes of ``role`` whose kind is one of ``kinds``
    (ConfigError ``when_none`` when there is none); checked with :func:`check_columns`."""
    if attributes is None:
        attributes = [a.name for a in table.schema.with_role(role) if a.kind in kinds]
        if not attributes:
            raise ConfigError(when_none)
    names = list(attributes)
    check_columns(table, names, "attributes")
    return names


def numeric_attributes(table: Table, names: Sequence[str] | None, method: str) -> list[str]:
    """The attributes a numeric method perturbs: ``names``, or the numeric quasi-identifiers; every one
    must hold numbers (a clear error names the first that does not)."""
    if names is None:
        names = [
            a.name
            for a in table.schema.with_role(Role.QUASI_IDENTIFIER)
            if a.kind is Kind.NUMERIC and table.column(a.name).dtype.is_numeric()
        ]
        if not names:
            raise ConfigError(
                f"{method} needs numeric attributes: no quasi-identifier is numeric; "
                "name them with attributes"
            )
    names = list(names)
    check_columns(table, names, "attributes")
    for name in names:
        dtype = table.column(name).dtype
        if not dtype.is_numeric() or dtype == pl.Boolean:
            raise ConfigError(
                f"attributes: {method} needs numeric attributes; '{name}' is not numeric (its values are "
                f"{dtype}){undescribed_text_hint(table, name)}"
            )
    return names


def without_identifiers(table: Table, frame: pl.DataFrame) -> Table:
    """The release: ``frame`` without the identifiers, with the schema of the other attributes."""
    identifiers = [a.name for a in table.schema.with_role(Role.IDENTIFIER) if a.name in frame.columns]
    schema = Schema(tuple(a for a in table.schema.attributes if a.role is not Role.IDENTIFIER))
    return Table(frame.drop(identifiers), schema, source=table.source, weights=table.weights)


def perturbed_release(
    table: Table,
    frame: pl.DataFrame,
    method: str,
    attributes: Sequence[str],
    params: MethodParams,
    figures: Figures,
    *,
    seed: int | None = None,
) -> Release:
    """The release of a perturbative method: ``frame`` without identifiers, the perturbed
    ``attributes`` as its quasi-identifiers, no record suppressed and no classes."""
    return Release(
        table=without_identifiers(table, frame),
        original=table,
        method=method,
        quasi_identifiers=tuple(attributes),
        suppressed_records=np.zeros(table.n_records, dtype=bool),
        classes=np.full(table.n_records, -1, dtype=np.int64),
        seed=seed,
        params=params,
        figures=figures,
    )


def _float_column(table: Table, name: str) -> np.ndarray:
    """The values as float64 with NaN for a missing value."""
    return table.column(name).cast(pl.Float64).fill_null(np.nan).to_numpy().astype(np.float64, copy=True)


def _moments(before: np.ndarray, after: np.ndarray, names: Sequence[str]) -> dict[str, Any]:
    """Mean and standard deviation (n − 1) of every column before and after (NaN = missing)."""

    def mean_sd(values: np.ndarray) -> tuple[float | None, float | None]:
        present = values[~np.isnan(values)]
        mean = float(present.mean()) if len(present) else None
        sd = float(present.std(ddof=1)) if len(present) > 1 else None
        return finite_or_none(mean), finite_or_none(sd)

    figures = {}
    for j, name in enumerate(names):
        (mean_before, sd_before), (mean_after, sd_after) = mean_sd(before[:, j]), mean_sd(after[:, j])
        figures[name] = {
            "mean_original": mean_before,
            "mean_released": mean_after,
            "sd_original": sd_before,
            "sd_released": sd_after,
        }
    return figures


# Noise addition ----------------------------------------------------------------------------------


def _sqrt_psd(matrix: np.ndarray, inverse: bool = False) -> np.ndarray:
    """The symmetric square root of a positive semi-definite matrix (eigenvalues below a relative
    tolerance treated as 0), or of its pseudo-inverse."""
    values, vectors = np.linalg.eigh((matrix + matrix.T) / 2)
    tolerance = max(float(values.max(initial=0.0)), 0.0) * len(values) * 1e-12
    kept = values > tolerance
    roots = np.zeros_like(values)
    roots[kept] = 1 / np.sqrt(values[kept]) if inverse else np.sqrt(values[kept])
    return (vectors * roots) @ vectors.T


def correlated_noise(covariance: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` draws of ``N(0, covariance)``: ``ε_i = L·g_i`` with ``L`` the Cholesky factor (SPEC §9.3),
    or the symmetric square root when the covariance is only semi-definite."""
    d = covariance.shape[0]
    try:
        factor = np.linalg.cholesky(covariance)
    except np.linalg.LinAlgError:
        factor = _sqrt_psd(covariance)
    draws = rng.standard_normal((n, d))
    if d > 16:
        return draws @ factor.T
    # Column by column: for a few attributes this beats a BLAS product of an (n, d) by a (d, d) matrix.
    noise = np.zeros((n, d))
    for i in range(d):
        for k in range(d):
            if factor[i, k] != 0:
                noise[:, i] += factor[i, k] * draws[:, k]
    return noise


def exact_moment_transformation(
    original: np.ndarray, noisy: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(A, z̄, x̄)`` such that ``x̄ + (noisy − z̄)·A`` has the sample mean ``x̄`` and the sample
    covariance of ``original`` exactly: ``A = S_Z^{-1/2}·Σ^{1/2}`` (so ``Aᵀ S_Z A = Σ``)."""
    sigma = np.atleast_2d(np.cov(original, rowvar=False))
    s_z = np.atleast_2d(np.cov(noisy, rowvar=False))
    transform = _sqrt_psd(s_z, inverse=True) @ _sqrt_psd(sigma)
    return transform, noisy.mean(axis=0), original.mean(axis=0)


class NoiseParams(MethodParams):
    """Parameters of noise addition (``sdckit anonymize noise``)."""

    noise: Annotated[
        Literal["additive", "correlated", "correlated-exact", "restricted", "outliers"],
        Field(
            description="additive: N(0, (amount/100·sd)²) per attribute; correlated: N(0, amount/100·Σ); "
            "correlated-exact: correlated, then means and covariances restored exactly; restricted: "
            "correlated, then c·Z + (1 − c)·mean (sdcMicro's restr); outliers: noise on outliers only "
            "(sdcMicro's outdect)."
        ),
    ] = "additive"
    amount: Annotated[
        Finite, Field(gt=0, description="Amount of noise in percent (sdcMicro's noise; see --noise).")
    ] = 10.0
    attributes: Annotated[
        Names, Field(description="Numeric attributes to perturb, comma-separated (default: numeric QIs).")
    ] = None
    seed: Annotated[Whole, Field(ge=0, description="Seed of the noise.")] = 0


@dataclass(frozen=True)
class NoiseFigures(Figures):
    """What noise addition found: the records complete on every attribute (those the covariance is
    estimated on) and, per attribute, its mean and standard deviation before and after."""

    complete_records: int
    attributes: dict[str, dict[str, float | None]]
    outliers: int | None = None  # the records perturbed by outliers noise


def _noise_summary(release: Release) -> dict[str, Any]:
    params, figures = release.params, release.figures_as(NoiseFigures)
    return {
        "noise": params.noise,
        "amount": params.amount,
        "seed": params.seed,
        "complete_records": figures.complete_records,
        "attributes": figures.attributes,
        **({} if figures.outliers is None else {"outliers": figures.outliers}),
    }


def _moments_report(figures: dict[str, Any]) -> list[str]:
    return [
        f"{name}: mean {values['mean_original']:.6g} → {values['mean_released']:.6g}, "
        f"sd {values['sd_original']:.6g} → {values['sd_released']:.6g}"
        for name, values in figures["attributes"].items()
        if values["mean_original"] is not None
        and values["sd_original"] is not None
        and values["mean_released"] is not None
        and values["sd_released"] is not None
    ]


@register_method(
    "noise",
    NoiseParams,
    summary=_noise_summary,
    help="Noise on numeric attributes: additive, correlated (moments exact or restricted), on outliers.",
    report=lambda figures: [
        f"{figures['noise']} noise, amount {figures['amount']:g}%, seed {figures['seed']}",
        *([f"{figures['outliers']:,} outlying records perturbed"] if "outliers" in figures else []),
        *_moments_report(figures),
    ],
    examples={"replay": {"attributes": ["Age"], "noise": "correlated", "amount": 20.0, "seed": 3}},
)
def _run_noise(table: Table, params: NoiseParams, context: Context) -> Release:
    """Noise addition (see :func:`add_noise`)."""
    names = numeric_attributes(table, params.attributes, "noise")
    noise = params.noise
    rng = np.random.default_rng(params.seed)
    x = np.column_stack([_float_column(table, name) for name in names])
    missing = np.isnan(x)
    complete = ~missing.any(axis=1)
    alpha = params.amount / 100
    outliers = None
    if noise == "outliers":
        z, flagged = outlier_noise(x, alpha, rng, params.seed)
        outliers = int(flagged.sum())
    elif noise == "additive":
        sd = np.array(
            [np.nanstd(x[:, j], ddof=1) if (~missing[:, j]).sum() > 1 else 0.0 for j in range(len(names))]
        )
        with np.errstate(over="ignore"):
            scale = alpha * sd
        _refuse_infinite_noise(params.amount, names, sd, scale)
        z = x + rng.standard_normal(x.shape) * scale
    else:
        if complete.sum() < 2:
            raise InputError(
                f"{noise} noise needs at least 2 records without missing values in {', '.join(names)}"
            )
        sigma = np.atleast_2d(np.cov(x[complete], rowvar=False))
        with np.errstate(over="ignore"):
            scaled = alpha * sigma
        _refuse_infinite_noise(params.amount, names, np.sqrt(np.abs(np.diag(sigma))), np.diag(scaled))
        z = x + correlated_noise(scaled, len(x), rng)
        if noise == "restricted":
            z = restricted_release(x, z - x, alpha)
        if noise == "correlated-exact":
            transform, noisy_mean, original_mean = exact_moment_transformation(x[complete], z[complete])
            z[complete] = original_mean + (z[complete] - noisy_mean) @ transform
    z[missing] = np.nan
    columns = [pl.Series(name, z[:, j]).fill_nan(None) for j, name in enumerate(names)]
    released = table.data.with_columns(columns)
    figures = NoiseFigures(int(complete.sum()), _moments(x, z, names), outliers)
    return perturbed_release(table, released, "noise", names, params, figures, seed=params.seed)


def _refuse_infinite_noise(amount: float, names: Sequence[str], sd: np.ndarray, scale: np.ndarray) -> None:
    """Refuse an amount whose noise cannot be finite: amount/100 times an attribute's spread (its
    standard deviation, or variance for correlated noise) beyond the largest floating-point number."""
    for name, spread, scaled in zip(names, sd, scale, strict=True):
        if not np.all(np.isfinite(scaled)):
            raise ConfigError(
                f"{spell('amount')} must keep the noise finite: {amount:g}% of the spread of attribute "
                f"'{name}' (standard deviation {spread:.6g}) is beyond the largest floating-point number; "
                f"choose a smaller {spell('amount')}"
            )


def add_noise(
    table: Table,
    attributes: Sequence[str] | None = None,
    *,
    noise: str = "additive",
    amount: float = 10.0,
    seed: int = 0,
) -> Release:
    """Noise addition to numeric attributes (sdcMicro's ``addNoise``; SPEC §9.3).

    Parameters
    ----------
    table : the data.
    attributes : the numeric attributes to perturb (default: the numeric quasi-identifiers).
    noise : ``additive`` (``N(0, (amount/100·sd_j)²)`` per attribute), ``correlated``
        (``N(0, amount/100·Σ)``) or ``correlated-exact`` (correlated noise, then the linear
        transformation that restores the sample means and covariance matrix exactly), ``restricted``
        (correlated noise, then ``c·Z + (1 − c)·x̄``, sdcMicro's "restr") or ``outliers`` (noise on
        the outlying records only, sdcMicro's "outdect"; needs the ``learn`` extra).
    amount : sdcMicro's ``noise``, in percent (see ``noise``).
    seed : seed of ``numpy.random.default_rng``.

    Returns
    -------
    Release whose perturbed columns are float64; a missing value stays missing; its figures are
    :class:`NoiseFigures`.

    Notes
    -----
    The covariance ``Σ`` is estimated on the records complete on every attribute (as sdcMicro's
    ``cov(na.omit(x))``). With ``correlated-exact`` the means and covariance are restored exactly on
    those complete records; a record with a missing value gets the correlated noise on its present
    values only. A single attribute is allowed for the correlated variants (``Σ`` is then its
    variance; sdcMicro refuses it).
    """
    values = {"attributes": attributes, "noise": noise, "amount": amount, "seed": seed}
    return run_method("noise", table, values, Context())


# ε-differentially private noise --------------------------------------------------------------------


def _bound_items(value: list[str] | None) -> list[str] | None:
    if value is None:
        return None
    parse_bounds(value)  # raises ValueError naming the bad item
    return value


def parse_bounds(items: Sequence[str]) -> dict[str, tuple[float, float]]:
    """``["age:0:120", "income:0:1e6"]`` -> ``{"age": (0, 120), "income": (0, 1e6)}``; a ValueError
    names a malformed item, bounds that are not finite or a lower bound not below the upper one."""
    bounds: dict[str, tuple[float, float]] = {}
    for item in items:
        parts = item.rsplit(":", 2)
        if len(parts) != 3 or not parts[0].strip():
            raise ValueError(f"each bound must be attribute:lower:upper, got {item!r}")
        name = parts[0].strip()
        try:
            lower, upper = float(parts[1]), float(parts[2])
        except ValueError:
            raise ValueError(f"the bounds of '{name}' must be numbers, got {item!r}") from None
        if not (math.isfinite(lower) and math.isfinite(upper)) or lower >= upper:
            raise ValueError(f"the bounds of '{name}' must be finite with lower < upper, got {item!r}")
        if name in bounds:
            raise ValueError(f"the bounds of '{name}' are given twice")
        bounds[name] = (lower, upper)
    return bounds


def _opendp_laplace(values: np.ndarray, scale: float, sensitivity: float) -> tuple[np.ndarray, float]:
    """``values`` plus Laplace noise of ``scale`` drawn by OpenDP's vector Laplace mechanism over
    float64 (exact sampling), and the ε that OpenDP's privacy map certifies for an L1 change of
    ``sensitivity``."""
    import opendp.prelude as dp

    dp.enable_features("contrib")
    measurement = dp.m.make_laplace(
        dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l1_distance(T=float), scale=scale
    )
    released = np.asarray(measurement(values.tolist()), dtype=np.float64) if len(values) else values.copy()
    return released, float(measurement.map(sensitivity))


class DPNoiseParams(MethodParams):
    """Parameters of the ε-differentially private release (``sdckit anonymize dp-noise``). Not seeded:
    OpenDP's samplers are cryptographically random, so the release cannot be reproduced."""

    epsilon: Annotated[Finite, Field(gt=0, description="Privacy budget ε (split over the attributes).")]
    bounds: Annotated[
        Names,
        AfterValidator(_bound_items),
        Field(description="Declared bounds of every attribute: attribute:lower:upper, comma-separated."),
    ] = None
    attributes: Annotated[
        Names, Field(description="Numeric attributes to release, comma-separated (default: numeric QIs).")
    ] = None
    budget: Annotated[
        Literal["split", "per-attribute"],
        Field(description="split: each of d attributes gets ε/d (total ε); per-attribute: each gets ε."),
    ] = "split"


@dataclass(frozen=True)
class DPNoiseFigures(Figures):
    """What the ε-differentially private release spent: ``epsilon_total`` the budget over all
    attributes, ``epsilon_certified_total`` the sum of what OpenDP's privacy maps certify, and per
    attribute (``bounds``) its bounds, ε, Laplace scale, clamped and missing values."""

    epsilon_total: float
    epsilon_certified_total: float
    bounds: dict[str, dict[str, Any]]


DP_MECHANISM = "Laplace (OpenDP make_laplace over float64 vectors), values clamped to the bounds"


def _dp_summary(release: Release) -> dict[str, Any]:
    params, figures = release.params, release.figures_as(DPNoiseFigures)
    return {
        "epsilon": params.epsilon,
        "budget": params.budget,
        "epsilon_total": figures.epsilon_total,
        "epsilon_certified_total": figures.epsilon_certified_total,
        "bounds": figures.bounds,
        "mechanism": DP_MECHANISM,
        "neighbouring": "one record's values changed",
        "reproducible": False,
    }


def _dp_report(figures: dict[str, Any]) -> list[str]:
    lines = [
        f"ε = {figures['epsilon']:g} ({figures['budget']}; total ε {figures['epsilon_total']:g}); "
        "not reproducible (OpenDP's samplers cannot be seeded)"
    ]
    for name, item in figures["bounds"].items():
        lines.append(
            f"{name}: bounds [{item['lower']:g}, {item['upper']:g}], ε {item['epsilon']:.4g}, Laplace scale "
            f"{item['scale']:.4g}, {item['clamped_values']:,} values clamped"
        )
    return lines


@register_method(
    "dp-noise",
    DPNoiseParams,
    summary=_dp_summary,
    help="ε-differentially private release of numeric attributes: clamped to bounds, OpenDP Laplace noise.",
    report=_dp_report,
    exact_replay=lambda params: False,
    examples={
        "minimal": {"epsilon": 1.0},
        "replay": {"epsilon": 1.0, "bounds": ["Age:0:100"], "attributes": ["Age"]},
    },
)
def _run_dp_noise(table: Table, params: DPNoiseParams, context: Context) -> Release:
    """The ε-differentially private release (see :func:`dp_noise`)."""
    require("dp", "opendp", feature="dp-noise")
    names = numeric_attributes(table, params.attributes, "dp-noise")
    bounds = parse_bounds(params.bounds or [])  # valid: checked by the parameters
    absent = [name for name in names if name not in bounds]
    if absent:
        raise ConfigError(
            f"bounds: dp-noise needs declared bounds for every attribute it releases; none for "
            f"{', '.join(absent)} (give e.g. {spell('bounds')} {absent[0]}:LOWER:UPPER)"
        )
    unused = [name for name in bounds if name not in names]
    if unused:
        raise ConfigError(
            f"bounds: '{unused[0]}' is not an attribute of this release (attributes: {', '.join(names)})"
        )
    share = params.epsilon / len(names) if params.budget == "split" else params.epsilon
    columns, figures = [], {}
    certified_total = 0.0
    for name in names:
        lower, upper = bounds[name]
        values = _float_column(table, name)
        present = ~np.isnan(values)
        clamped = np.clip(values[present], lower, upper)
        with np.errstate(over="ignore"):
            scale = (upper - lower) / share
        if not math.isfinite(scale):
            raise ConfigError(
                f"{spell('bounds')} {name}:{lower:g}:{upper:g} with {spell('epsilon')} {share:g} make the "
                "Laplace scale (upper − lower)/ε beyond the largest floating-point number: narrow the "
                f"bounds or raise {spell('epsilon')}"
            )
        noisy, certified = _opendp_laplace(clamped, scale, upper - lower)
        certified_total += certified
        out = np.full(len(values), np.nan)
        out[present] = noisy
        columns.append(pl.Series(name, out).fill_nan(None))
        figures[name] = {
            "lower": lower,
            "upper": upper,
            "epsilon": share,
            "epsilon_certified": certified,
            "scale": scale,
            "clamped_values": int(np.count_nonzero(clamped != values[present])),
            "missing_values": int(np.count_nonzero(~present)),
        }
    released = table.data.with_columns(columns)
    spent = DPNoiseFigures(
        epsilon_total=share * len(names), epsilon_certified_total=certified_total, bounds=figures
    )
    return perturbed_release(table, released, "dp-noise", names, params, spent)


def dp_noise(
    table: Table,
    epsilon: float,
    bounds: dict[str, tuple[float, float]] | Sequence[str] | None,
    attributes: Sequence[str] | None = None,
    *,
    budget: str = "split",
) -> Release:
    """An ε-differentially private release of numeric attributes: values clamped to their bounds, then
    Laplace noise of scale ``(upper − lower)/ε_j`` from OpenDP (see the module docstring).

    ``bounds`` maps every attribute to ``(lower, upper)`` (or is given as ``"name:lower:upper"``
    items); ``budget="split"`` gives each of the ``d`` attributes ``ε/d``, ``"per-attribute"`` gives
    each ``ε``. Missing values stay missing: whether a value is missing is released as it is.
    Not reproducible: OpenDP's samplers cannot be seeded. The figures are :class:`DPNoiseFigures`.
    """
    if isinstance(bounds, dict):  # written as the parameters take them (repr keeps every float exact)
        bounds = [f"{name}:{float(lower)!r}:{float(upper)!r}" for name, (lower, upper) in bounds.items()]
    values = {"epsilon": epsilon, "bounds": bounds, "attributes": attributes, "budget": budget}
    return run_method("dp-noise", table, values, Context())


# Rank swapping ------------------------------------------------------------------------------------


@njit(cache=True)
def _generate_swap(n: int, max_dist: int, uniforms: np.ndarray) -> np.ndarray:  # pragma: no cover (compiled)
    """μ-Argus's partner search over sorted positions (SPEC §9.1): ``swap[i]`` is the position whose
    value position ``i`` takes. One uniform is consumed per position still unpaired when reached."""
    swap = np.full(n, -1, dtype=np.int64)
    used = 0
    for i in range(n):
        if swap[i] != -1:
            continue
        k = i + 1 + int(max_dist * uniforms[used])
        used += 1
        j = min(k, n - 1)
        while swap[j] >= 0 and j > i + 1:  # look left for a free partner
            j -= 1
        if swap[j] >= 0:  # none: look right
            j = min(k, n - 1)
            while swap[j] >= 0 and j < n - 1 and j < i + max_dist:
                j += 1
        if swap[j] == -1 and j != i:
            swap[i] = j
            swap[j] = i
        else:
            swap[i] = i
    return swap


def rank_swap_positions(n: int, p: float, uniforms: np.ndarray) -> np.ndarray:
    """The partner of every sorted position for ``n`` values and window ``p`` percent, consuming
    ``uniforms`` (at least ``n`` values in [0, 1)) in order. ``p = 0`` swaps nothing."""
    if n == 0 or p == 0:
        return np.arange(n, dtype=np.int64)
    max_dist = int(math.floor(n * p / 100))
    return _generate_swap(n, max_dist, np.ascontiguousarray(uniforms, dtype=np.float64))


def rank_swap_partners(values: np.ndarray, p: float, rng: np.random.Generator) -> np.ndarray:
    """For every record, the record whose value it receives (itself when unswapped or missing).

    ``values`` are numbers (NaN = missing) or integer codes (-1 = missing); ranks by stable sort."""
    values = np.asarray(values)
    present = ~np.isnan(values) if values.dtype.kind == "f" else values >= 0
    records = np.flatnonzero(present)
    order = records[np.argsort(values[records], kind="stable")]
    uniforms = rng.random(len(order))
    swap = rank_swap_positions(len(order), p, uniforms)
    partners = np.arange(len(values), dtype=np.int64)
    partners[order] = order[swap]
    return partners


class RankSwapParams(MethodParams):
    """Parameters of rank swapping (``sdckit anonymize rank-swap``)."""

    p: Annotated[
        Finite, Field(ge=0, le=100, description="Window: swapped ranks differ by at most p% of the records.")
    ] = 15.0
    attributes: Annotated[
        Names,
        Field(
            description="Numeric or ordinal attributes, comma-separated (default: numeric and ordinal QIs)."
        ),
    ] = None
    seed: Annotated[Whole, Field(ge=0, description="Seed of the partner choices.")] = 0


@dataclass(frozen=True)
class RankSwapFigures(Figures):
    """What rank swapping did: the largest rank distance of a swap (``floor(n·p/100)``, at least 1;
    0 for ``p = 0``) and, per attribute, the records swapped and the values changed."""

    max_rank_distance: int
    attributes: dict[str, dict[str, int]]


def _rank_swap_summary(release: Release) -> dict[str, Any]:
    params, figures = release.params, release.figures_as(RankSwapFigures)
    return {
        "p": params.p,
        "seed": params.seed,
        "max_rank_distance": figures.max_rank_distance,
        "attributes": figures.attributes,
    }


@register_method(
    "rank-swap",
    RankSwapParams,
    summary=_rank_swap_summary,
    help="Rank swapping with a p% window (μ-Argus/sdcMicro rankSwap): each column's values kept.",
    report=lambda figures: [
        f"window: ranks within {figures['max_rank_distance']:,} (p = {figures['p']:g}%), "
        f"seed {figures['seed']}",
        *(
            f"{name}: {item['swapped_records']:,} records swapped, {item['changed_values']:,} values changed"
            for name, item in figures["attributes"].items()
        ),
    ],
    examples={"replay": {"attributes": ["Age"], "p": 20.0, "seed": 4}},
)
def _run_rank_swap(table: Table, params: RankSwapParams, context: Context) -> Release:
    """Rank swapping (see :func:`rank_swap`)."""
    from sdckit.frequency import encode_column

    p = params.p
    names = chosen_attributes(
        table,
        params.attributes,
        Role.QUASI_IDENTIFIER,
        (Kind.NUMERIC, Kind.ORDINAL),
        "rank-swap needs numeric or ordinal attributes: none of the quasi-identifiers is",
    )
    rng = np.random.default_rng(params.seed)
    columns, figures = [], {}
    max_dist = int(math.floor(table.n_records * p / 100))
    for name in names:
        column = table.column(name)
        kind = table.schema[name].kind if name in table.schema else Kind.CATEGORICAL
        numeric = column.dtype.is_numeric() and column.dtype != pl.Boolean
        if kind not in (Kind.NUMERIC, Kind.ORDINAL) or (kind is Kind.NUMERIC and not numeric):
            raise ConfigError(
                f"attributes: rank-swap needs numeric or ordinal attributes; '{name}' is {kind.value} "
                f"(swap exchanges categorical values){undescribed_text_hint(table, name)}"
            )
        values = _float_column(table, name) if numeric else encode_column(column)[0].astype(np.int64)
        partners = rank_swap_partners(values, p, rng)
        columns.append(column.gather(partners))
        moved = partners != np.arange(len(partners))
        figures[name] = {
            "swapped_records": int(np.count_nonzero(moved)),
            "changed_values": int((column.gather(partners) != column).fill_null(False).sum()),
        }
    released = table.data.with_columns(columns)
    swapped = RankSwapFigures(max_rank_distance=max(max_dist, 1) if p > 0 else 0, attributes=figures)
    return perturbed_release(table, released, "rank-swap", names, params, swapped, seed=params.seed)


def rank_swap(
    table: Table, attributes: Sequence[str] | None = None, *, p: float = 15.0, seed: int = 0
) -> Release:
    """Rank swapping of numeric and ordinal attributes, each independently (SPEC §9.1).

    ``attributes`` default to the numeric and ordinal quasi-identifiers. A numeric column ranks by its
    numbers; an ordinal column of text ranks by its values in sorted order. Ties rank by record order
    (stable sort). Raises ConfigError for a categorical, date or set-valued attribute. The figures are
    :class:`RankSwapFigures`.
    """
    return run_method("rank-swap", table, {"attributes": attributes, "p": p, "seed": seed}, Context())


# Data swapping within strata -----------------------------------------------------------------------


def stratum_keys(table: Table, strata: Sequence[str] | None) -> tuple[np.ndarray, int]:
    """Dense stratum keys of the records (one stratum without ``strata``; a missing value is a value)."""
    from sdckit.frequency import encode, group_keys

    if not strata:
        return np.zeros(table.n_records, dtype=np.int64), 1 if table.n_records else 0
    check_columns(table, strata, "strata")
    encoding = encode(table.data, list(strata))
    keys, groups = group_keys(encoding, list(strata))
    return keys.astype(np.int64), groups


def swap_pairs(keys: np.ndarray, groups: int, rate: float, rng: np.random.Generator) -> np.ndarray:
    """The partner of every record (itself when not swapped): in each stratum of ``n_s`` records,
    ``m_s`` random disjoint pairs, ``m_s`` = ``rate·n_s/2`` rounded at random (up with probability its
    fraction, so the expected share swapped is ``rate``), at most ``n_s // 2``."""
    n = len(keys)
    sizes = np.bincount(keys, minlength=groups)
    wanted = rate * sizes / 2
    pairs = np.minimum(np.floor(wanted + rng.random(groups)).astype(np.int64), sizes // 2)
    order = np.lexsort((rng.random(n), keys))  # records stratum by stratum, in random order
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    rank = np.arange(n) - starts[keys[order]]
    chosen = rank < 2 * pairs[keys[order]]
    position = np.arange(n)
    mate = np.where(rank % 2 == 0, position + 1, position - 1)
    partners = np.arange(n, dtype=np.int64)
    partners[order[chosen]] = order[mate[chosen]]
    return partners


class SwapParams(MethodParams):
    """Parameters of data swapping (``sdckit anonymize swap``)."""

    attributes: Annotated[
        Names,
        Field(description="Categorical attributes swapped together, comma-separated (default: sensitive)."),
    ] = None
    strata: Annotated[
        Names,
        Field(description="Attributes whose combinations are the strata, comma-separated (default: none)."),
    ] = None
    rate: Annotated[Finite, Field(gt=0, le=1, description="Expected share of records swapped.")] = 0.05
    seed: Annotated[Whole, Field(ge=0, description="Seed of the pairs.")] = 0


@dataclass(frozen=True)
class SwapFigures(Figures):
    """What data swapping did: the strata, the pairs drawn and the records they hold, the share of
    the records swapped, the records changed (a pair may hold equal values) and the values changed
    per attribute."""

    n_strata: int
    pairs: int
    swapped_records: int
    swap_rate_achieved: float
    changed_records: int
    changed_values: dict[str, int]


def _swap_summary(release: Release) -> dict[str, Any]:
    params, figures = release.params, release.figures_as(SwapFigures)
    return {
        "rate": params.rate,
        "seed": params.seed,
        "strata": list(params.strata or []),
        "n_strata": figures.n_strata,
        "pairs": figures.pairs,
        "swapped_records": figures.swapped_records,
        "swap_rate_achieved": figures.swap_rate_achieved,
        "changed_records": figures.changed_records,
        "changed_values": figures.changed_values,
    }


@register_method(
    "swap",
    SwapParams,
    summary=_swap_summary,
    help="Data swapping of categorical values between random pairs of records of the same stratum.",
    report=lambda figures: [
        f"{figures['pairs']:,} pairs in {figures['n_strata']:,} strata ({figures['swap_rate_achieved']:.2%} "
        f"of the records, asked {figures['rate']:.2%}); {figures['changed_records']:,} records changed"
    ],
    examples={"replay": {"attributes": ["Disease"], "rate": 0.5, "seed": 2}},
)
def _run_swap(table: Table, params: SwapParams, context: Context) -> Release:
    """Data swapping (see :func:`data_swap`)."""
    strata = params.strata
    names = chosen_attributes(
        table,
        params.attributes,
        Role.SENSITIVE,
        (Kind.CATEGORICAL, Kind.ORDINAL),
        "swap needs categorical attributes: none has role sensitive; name them with attributes",
    )
    for name in names:
        kind = table.schema[name].kind if name in table.schema else Kind.CATEGORICAL
        if kind not in (Kind.CATEGORICAL, Kind.ORDINAL):
            raise ConfigError(
                f"attributes: swap exchanges categorical values; '{name}' is {kind.value} (use rank-swap "
                "for numbers)"
            )
    overlap = [name for name in (strata or []) if name in names]
    if overlap:
        raise ConfigError(f"strata: '{overlap[0]}' is also swapped; a stratum attribute cannot be swapped")
    keys, groups = stratum_keys(table, strata)
    rng = np.random.default_rng(params.seed)
    partners = swap_pairs(keys, groups, params.rate, rng)
    columns = [table.column(name).gather(partners) for name in names]
    released = table.data.with_columns(columns)
    changed = np.zeros(table.n_records, dtype=bool)
    per_attribute = {}
    for name, column in zip(names, columns, strict=True):
        differs = column.ne_missing(table.column(name)).to_numpy()
        per_attribute[name] = int(differs.sum())
        changed |= differs
    swapped = int(np.count_nonzero(partners != np.arange(table.n_records)))
    figures = SwapFigures(
        n_strata=int(groups),
        pairs=swapped // 2,
        swapped_records=swapped,
        swap_rate_achieved=swapped / table.n_records if table.n_records else 0.0,
        changed_records=int(changed.sum()),
        changed_values=per_attribute,
    )
    return perturbed_release(table, released, "swap", names, params, figures, seed=params.seed)


def data_swap(
    table: Table,
    attributes: Sequence[str] | None = None,
    *,
    strata: Sequence[str] | None = None,
    rate: float = 0.05,
    seed: int = 0,
) -> Release:
    """Data swapping of categorical values within strata (see the module docstring).

    ``attributes`` default to the categorical attributes with role sensitive; numeric attributes are
    refused (rank-swap swaps numbers). ``rate`` is the expected share of records swapped. The figures
    are :class:`SwapFigures`.
    """
    values = {"attributes": attributes, "strata": strata, "rate": rate, "seed": seed}
    return run_method("swap", table, values, Context())


__all__ = [
    "DPNoiseFigures",
    "DPNoiseParams",
    "NoiseFigures",
    "NoiseParams",
    "RankSwapFigures",
    "RankSwapParams",
    "SwapFigures",
    "SwapParams",
    "add_noise",
    "data_swap",
    "dp_noise",
    "rank_swap",
    "rank_swap_partners",
    "rank_swap_positions",
    "swap_pairs",
]
