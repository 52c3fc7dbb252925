"""Global disclosure risk from log-linear models: sdcMicro's ``modRisk`` (issue 37, item 1),
``sdckit risk loglinear DATA``.

The sample counts ``f_k`` of the cells ``k`` of the table of the key variables (the product of their
observed values) are taken as independent Poisson counts whose means follow a log-linear model:
main effects by default, interactions with ``formula`` (``"a + b + c + a:b"``). The fitted mean
``λ_k`` and the cell's inclusion probability ``π_k = Σ_{i ∈ k} 1/w_i`` (``w`` the sampling weights;
``1/w`` for a sample unique) give, for each sample unique (``f_k = 1``), as sdcMicro computes them
with ``v_k = (1 − π_k) λ_k``:

* ``P(F_k = 1 | f_k = 1) = exp(−v_k)``: the probability that it is unique in the population too;
* ``E(1/F_k | f_k = 1) = (1 − exp(−v_k)) / v_k``: the probability that a match of it to the
  population is correct (1 when ``v_k = 0``).

``expected_population_uniques`` is τ1 = Σ over the sample uniques of the first (Skinner & Holmes
1998; Skinner & Shlomo 2008), ``expected_correct_matches`` τ2 = Σ of the second (Rinott & Shlomo).
sdcMicro's ``gr1`` and ``gr2`` divide them by the number of non-empty cells with ``f_k ≤ bound``
(``bound`` default: no bound): here ``population_unique_share`` and ``correct_match_share``.

The methods (sdcMicro's ``method``) differ in the model fitted:

* ``default``: ``log λ_k = x_k'β`` fitted to the counts ``f_k``. The main-effects model is fitted in
  closed form (``λ_k = n Π_j n_j/n``, the maximum-likelihood estimate that R's ``glm`` iterates to),
  and so is a model whose interactions join the variables in independent groups each of which is a
  term (``a + b + c + a:b``: ``λ_k = n_ab n_c / n``); any other by IRLS as ``glm.fit`` does it (start
  ``f + 0.1``, relative deviance change below 1e-8, at most 25 iterations) on the full table;
* ``CE`` (Clogg & Eliason 1987): the same with the offset ``log(f_k / W_k + 0.1)``, ``W_k`` the sum of
  the cell's weights (``log 0.1`` for an empty cell);
* ``PML`` (pseudo maximum likelihood): fitted to ``round(W_k · n / Σ w)``, the weighted counts scaled
  to the sample size (rounded half to even, as R's ``round``);
* ``weightedLLM``: ``W_k`` as one more (numeric) predictor;
* ``IPF``: iterative proportional fitting of the model's margins (MASS's ``loglm``); the main-effects
  model in one cycle, the same fit as ``default``.

Deviations from sdcMicro 5.8.1:

* sampling weights are required (sdcMicro sets them to 1 with a warning, which makes ``π = 1``,
  ``v = 0`` and ``gr2`` ``NaN``), and must be at least 1 (an inclusion probability of at most 1);
* ``IPF`` also fits interactions (sdcMicro refuses them), to 1e-10 of the total on every margin
  (``loglm`` stops at 0.1);
* a record with a missing key value is left out (sdcMicro counts it in a cell of its own that its
  ``glm`` drops, then drops the cell: the same figures), and its values still count as levels of the
  table, as in sdcMicro;
* the risk formulas are sdcMicro's: ``λ`` is the fitted *sample* count, not the population mean
  ``λ/π`` of Skinner & Shlomo's model; the figures are those of sdcMicro, not of the paper;
* ``(1 − exp(−v)) / v`` is computed with ``expm1``: sdcMicro's expression loses every digit for ``v``
  below about 1e-16 (a sample unique fitted near 0) and gives 0 there instead of 1;
* PML: a scaled weight that is exactly half-way (``2.5``) may round the other way than in R when the
  weights' sum differs in its last bit (the order of summation differs).

A model in closed form (methods ``default``, ``PML`` and ``IPF``) reads the observed cells only; any
other needs the full table, of at most :data:`MAX_CELLS` cells.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import numpy as np
import polars as pl
from pydantic import Field, field_validator

from sdckit.context import Context
from sdckit.errors import ConfigError, InputError, location
from sdckit.measures import register_measure
from sdckit.params import Finite, MethodParams, spell
from sdckit.risk._loglinear_fit import Fit, design, groups_fit, ipf_fit, irls_fit, saturated_groups
from sdckit.table import Role, Table

__all__ = ["MAX_CELLS", "LoglinearModel", "LoglinearRisk", "LoglinearRiskParams", "loglinear_risk"]

#: The largest full table (product of the keys' numbers of values) a model fitted on it may have.
MAX_CELLS = 5_000_000
_NAME = re.compile(r"^[^+:~*\s()]+$")


def _formula_terms(formula: str) -> tuple[list[tuple[str, ...]], str | None]:
    """The terms of ``formula`` in order, duplicates dropped, and what is wrong with it (or None)."""
    text = formula.strip()
    if text.startswith("~"):
        text = text[1:]
    terms: list[tuple[str, ...]] = []
    for part in text.split("+"):
        names = tuple(name.strip() for name in part.split(":"))
        if not all(_NAME.match(name) for name in names):
            return terms, f"'{part.strip()}' is not a term (names joined by ':')"
        if len(set(names)) != len(names):
            return terms, f"'{part.strip()}' names a variable twice"
        if not any(set(names) == set(seen) for seen in terms):
            terms.append(names)
    present = {frozenset(term) for term in terms}
    for term in terms:
        for size in range(1, len(term)):  # hierarchical: R codes every term by contrasts then
            for lower in itertools.combinations(term, size):
                if frozenset(lower) not in present:
                    return terms, f"'{':'.join(term)}' needs '{':'.join(lower)}' in the formula too"
    return terms, None


def parse_formula(formula: str) -> list[tuple[str, ...]]:
    """``"~ a + b + a:b"`` -> ``[("a",), ("b",), ("a", "b")]``: terms in order, duplicates dropped."""
    terms, problem = _formula_terms(formula)
    if problem is not None:
        raise ConfigError(f"{spell('formula')}: {problem}")
    return terms


class LoglinearRiskParams(MethodParams):
    """Parameters of ``sdckit risk loglinear``."""

    method: Annotated[
        Literal["default", "CE", "PML", "weightedLLM", "IPF"],
        Field(description="sdcMicro's modRisk method: the model fitted (see the measure's page)."),
    ] = "default"
    formula: Annotated[
        str | None,
        Field(
            min_length=1,
            description="The log-linear model, e.g. 'a + b + c + a:b' (default: the main effects of the "
            "quasi-identifiers); its main effects are the table's variables.",
        ),
    ] = None
    bound: Annotated[
        Finite | None,
        Field(
            ge=1.0, description="Only cells of at most this many records count in the shares (default: all)."
        ),
    ] = None

    @field_validator("formula")
    @classmethod
    def _check_formula(cls, value: str | None) -> str | None:
        problem = None if value is None else _formula_terms(value)[1]
        if problem is not None:
            raise ValueError(problem)
        return value


@dataclass(frozen=True)
class LoglinearModel:
    """The table of the variables and the fitted model, on the observed cells."""

    variables: tuple[str, ...]
    terms: tuple[tuple[str, ...], ...]
    levels: tuple[int, ...]  # number of values of each variable
    cell_codes: np.ndarray  # observed cells x variables: level numbers (values in sorted order)
    counts: np.ndarray  # f_k
    weight_sums: np.ndarray  # W_k
    inclusion: np.ndarray  # π_k = Σ 1/w
    fitted: np.ndarray  # λ_k
    record_cell: np.ndarray  # per record its observed cell, -1 with a missing key value
    algorithm: str
    fit: Fit | None  # fit.fitted: every cell of the full table (C order) by IRLS or IPF, else the observed


@dataclass(frozen=True)
class LoglinearRisk:
    """The figures of ``sdckit risk loglinear``."""

    model: LoglinearModel
    method: str
    weights: str
    bound: float | None
    considered: np.ndarray  # per observed cell: non-empty, f ≤ bound, λ > 0
    unique_probability: np.ndarray  # per observed cell of one record: exp(−v), else NaN
    match_probability: np.ndarray  # per observed cell of one record: (1 − exp(−v)) / v, else NaN

    @property
    def sample_uniques(self) -> np.ndarray:
        return self.considered & (self.model.counts == 1)

    def summary(self) -> dict[str, Any]:
        model = self.model
        uniques = self.sample_uniques
        tau1 = float(self.unique_probability[uniques].sum())
        tau2 = float(self.match_probability[uniques].sum())
        cells = int(self.considered.sum())
        fit = model.fit
        return {
            "method": self.method,
            "formula": " + ".join(":".join(term) for term in model.terms),
            "variables": list(model.variables),
            "weights": self.weights,
            "records": len(model.record_cell),
            "records_left_out": int((model.record_cell < 0).sum()),
            "cells": int(np.prod(model.levels, dtype=np.float64)),
            "observed_cells": len(model.counts),
            "bound": self.bound,
            "cells_within_bound": cells,
            "sample_uniques": int(uniques.sum()),
            "expected_population_uniques": tau1,
            "expected_correct_matches": tau2,
            "population_unique_share": tau1 / cells if cells else 0.0,
            "correct_match_share": tau2 / cells if cells else 0.0,
            "fit": {
                "algorithm": model.algorithm,
                "iterations": fit.iterations if fit is not None else 0,
                "converged": fit.converged if fit is not None else True,
                "deviance": fit.deviance if fit is not None else None,
            },
        }

    def records(self) -> pl.DataFrame:
        model = self.model
        cell = model.record_cell
        known = cell >= 0
        safe = np.where(known, cell, 0)
        unique = known & self.sample_uniques[safe]

        def per_record(values: np.ndarray, where: np.ndarray) -> pl.Series:
            return pl.Series(np.where(where, values[safe], np.nan)).fill_nan(None)

        return pl.DataFrame(
            {
                "record": np.arange(len(cell), dtype=np.int64),
                "cell_records": per_record(model.counts.astype(np.float64), known).cast(pl.Int64),
                "fitted": per_record(model.fitted, known),
                "inclusion": per_record(model.inclusion, known),
                "population_unique": per_record(self.unique_probability, unique),
                "correct_match": per_record(self.match_probability, unique),
            }
        )


def _codes(table: Table, variables: list[str]) -> tuple[np.ndarray, tuple[int, ...], np.ndarray]:
    """Per record the level number of each variable (its values sorted; −1 for a missing value), the
    number of levels of each, and which records have every value."""
    codes = np.empty((table.n_records, len(variables)), dtype=np.int64)
    levels = []
    for j, name in enumerate(variables):
        column = table.column(name)
        if column.dtype.is_float():
            column = column.fill_nan(None)
        values = column.drop_nulls().unique().sort()
        number = pl.int_range(len(values), eager=True, dtype=pl.Int64)
        coded = column.replace_strict(values, number, default=-1, return_dtype=pl.Int64)
        codes[:, j] = coded.to_numpy()
        levels.append(len(values))
    return codes, tuple(levels), np.asarray((codes >= 0).all(axis=1))


def _cell_index(codes: np.ndarray, levels: tuple[int, ...]) -> np.ndarray:
    """The mixed-radix number of each row of ``codes`` (C order: the first variable varies slowest)."""
    index = np.zeros(len(codes), dtype=np.int64)
    for j, count in enumerate(levels):
        index = index * count + codes[:, j]
    return index


def _observed_cells(index: np.ndarray, levels: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The observed cells (sorted mixed-radix numbers), each record's among them and their counts:
    by counting over the full table when it is not much larger than the data, else by sorting."""
    size = float(np.prod(levels, dtype=np.float64))
    if size <= max(4 * len(index), 1_000_000):
        full = np.bincount(index, minlength=int(size))
        cells = np.flatnonzero(full)
        lookup = np.zeros(int(size), dtype=np.int64)
        lookup[cells] = np.arange(len(cells), dtype=np.int64)
        return cells, lookup[index], full[cells]
    cells, inverse, counts = np.unique(index, return_inverse=True, return_counts=True)
    return cells, inverse.ravel(), counts


def _unravel(index: np.ndarray, levels: tuple[int, ...]) -> np.ndarray:
    return (
        np.stack(np.unravel_index(index, levels), axis=1).astype(np.int64) if len(levels) else index[:, None]
    )


def _full_table_fit(
    method: str,
    terms: list[tuple[int, ...]],
    levels: tuple[int, ...],
    cells: np.ndarray,
    counts: np.ndarray,
    weight_sums: np.ndarray,
    where: str,
) -> tuple[np.ndarray, Fit, str]:
    """The model fitted on the full table (IRLS, or IPF for method IPF): the fitted counts of the
    observed cells ``cells`` (mixed-radix numbers), the fit (with every cell's) and the algorithm."""
    size = int(np.prod(levels, dtype=np.float64))
    if size > MAX_CELLS:
        raise InputError(
            f"{where}the table of the variables has {size:,} cells, more than {MAX_CELLS:,}: fit the "
            "main effects (or interactions in separate groups, as a + b + c + a:b) with method default, "
            "PML or IPF, or use fewer values"
        )
    y = np.zeros(size)
    y[cells] = counts
    if method == "IPF":
        fit = ipf_fit(y.reshape(levels), terms)
        return fit.fitted[cells], fit, "IPF"
    w = np.zeros(size)
    w[cells] = weight_sums
    offset, covariates = None, None
    if method == "CE":
        with np.errstate(divide="ignore", invalid="ignore"):
            offset = np.log(np.where(w > 0, y / np.where(w > 0, w, 1.0), 0.0) + 0.1)
    elif method == "PML":
        y = np.round(w * counts.sum() / weight_sums.sum())
    elif method == "weightedLLM":
        covariates = (w / w.max())[:, None]  # scaled: the same fitted counts, better conditioned
    grid = _unravel(np.arange(size, dtype=np.int64), levels)
    fit = irls_fit(y, design(grid, levels, terms, covariates), offset)
    return fit.fitted[cells], fit, "IRLS"


def _fit(
    table: Table, variables: list[str], terms: list[tuple[int, ...]], weights: np.ndarray, method: str
) -> LoglinearModel:
    codes, levels, complete = _codes(table, variables)
    rows = np.flatnonzero(complete)
    index = _cell_index(codes[rows], levels)
    cells, inverse, counts = _observed_cells(index, levels)
    record_cell = np.full(table.n_records, -1, dtype=np.int64)
    record_cell[rows] = inverse
    weight_sums = np.bincount(inverse, weights=weights[rows], minlength=len(cells))
    inclusion = np.bincount(inverse, weights=1.0 / weights[rows], minlength=len(cells))
    cell_codes = _unravel(cells, levels)
    groups = saturated_groups(terms, len(levels))
    fit: Fit | None = None
    if groups is not None and method in ("default", "IPF", "PML") and len(cells):
        y = counts.astype(np.float64)
        if method == "PML":
            y = np.round(weight_sums * counts.sum() / weight_sums.sum())
        fitted = groups_fit(cell_codes, levels, groups, y)
        with np.errstate(divide="ignore", invalid="ignore"):
            deviance = 2.0 * float(np.sum(np.where(y > 0, y * np.log(y / fitted), 0.0)))
        fit, algorithm = Fit(fitted=fitted, iterations=0, converged=True, deviance=deviance), "closed form"
    elif len(cells):
        where = location(table.source)
        fitted, fit, algorithm = _full_table_fit(method, terms, levels, cells, counts, weight_sums, where)
    else:
        fitted, algorithm = np.zeros(0), "none"
    return LoglinearModel(
        variables=tuple(variables),
        terms=tuple(tuple(variables[a] for a in term) for term in terms),
        levels=levels,
        cell_codes=cell_codes,
        counts=counts.astype(np.int64),
        weight_sums=weight_sums,
        inclusion=inclusion,
        fitted=np.asarray(fitted, dtype=np.float64),
        record_cell=record_cell,
        algorithm=algorithm,
        fit=fit,
    )


def _weights(table: Table, weights: str | None) -> np.ndarray:
    where = location(table.source)
    if weights is None:
        raise ConfigError(
            f"{where}log-linear risk needs sampling weights: name their column in the configuration's "
            f"data.weights or with {spell('weight', '--weight')}"
        )
    if weights not in table.data.columns:
        raise ConfigError(f"{where}weights column '{weights}' is not a column of the data")
    values = table.column(weights).cast(pl.Float64, strict=False).to_numpy()
    bad = np.flatnonzero(~np.isfinite(values) | ~(values >= 1.0))
    if bad.size:
        row = int(bad[0])
        value = "a missing or non-numeric value" if np.isnan(values[row]) else f"{values[row]:g}"
        raise InputError(
            f"{where}weights column '{weights}': record {row + 1}: a sampling weight must be a number of "
            f"at least 1 (an inclusion probability of at most 1), got {value}"
        )
    return np.asarray(values, dtype=np.float64)


def _model_terms(
    table: Table, params: LoglinearRiskParams, weights: str
) -> tuple[list[str], list[tuple[int, ...]]]:
    where = location(table.source)
    if params.formula is None:
        variables = [a.name for a in table.schema.with_role(Role.QUASI_IDENTIFIER)]
        if not variables:
            raise ConfigError(
                f"{where}no quasi-identifier to build the table of: give them roles or a {spell('formula')}"
            )
        return variables, [(j,) for j in range(len(variables))]
    named = parse_formula(params.formula)
    variables = [term[0] for term in named if len(term) == 1]
    for name in variables:
        if name not in table.data.columns:
            raise ConfigError(f"{where}{spell('formula')}: '{name}' is not a column of the data")
        if name == weights:
            raise ConfigError(f"{where}{spell('formula')}: '{name}' is the weights column")
    position = {name: j for j, name in enumerate(variables)}
    return variables, [tuple(sorted(position[name] for name in term)) for term in named]


def loglinear_risk(table: Table, params: LoglinearRiskParams, weights: str | None) -> LoglinearRisk:
    """sdcMicro's ``modRisk`` of ``table`` with the sampling weights in column ``weights`` (see the
    module's docstring)."""
    if weights is None:
        _weights(table, None)
    assert weights is not None
    variables, terms = _model_terms(table, params, weights)
    values = _weights(table, weights)
    model = _fit(table, variables, terms, values, params.method)
    bound = np.inf if params.bound is None else params.bound
    # sdcMicro also drops a non-empty cell fitted exactly 0, which its glm never gives (only its merge
    # of a cell with a missing key value, left out here): a fitted 0 is glm's limit, v = 0.
    considered = (model.counts > 0) & (model.counts <= bound)
    # Only a sample unique's figures mean something (its π = 1/w ≤ 1, so v ≥ 0); NaN for the others.
    unique = model.counts == 1
    v = (1.0 - model.inclusion[unique]) * model.fitted[unique]
    unique_probability = np.full(len(model.counts), np.nan)
    match_probability = np.full(len(model.counts), np.nan)
    unique_probability[unique] = np.exp(-v)
    match_probability[unique] = np.where(v != 0, -np.expm1(-v) / np.where(v != 0, v, 1.0), 1.0)
    return LoglinearRisk(
        model=model,
        method=params.method,
        weights=weights,
        bound=params.bound,
        considered=considered,
        unique_probability=unique_probability,
        match_probability=match_probability,
    )


def _report(figures: dict[str, Any]) -> list[str]:
    fit = figures["fit"]
    within = "" if figures["bound"] is None else f" of at most {figures['bound']:g} records"
    lines = [
        f"{figures['records']:,} records, model {figures['formula']} (method {figures['method']}, "
        f"{fit['algorithm']}{'' if fit['converged'] else ', not converged'}): {figures['observed_cells']:,} "
        f"of {figures['cells']:,} cells observed, {figures['sample_uniques']:,} sample uniques",
        f"expected sample uniques that are population unique: {figures['expected_population_uniques']:.4g}; "
        f"expected correct matches: {figures['expected_correct_matches']:.4g}",
        f"per cell{within} "
        f"({figures['cells_within_bound']:,}): {figures['population_unique_share']:.4g} and "
        f"{figures['correct_match_share']:.4g} (sdcMicro's modRisk risk 1 and 2)",
    ]
    if figures["records_left_out"]:
        lines.append(f"{figures['records_left_out']:,} records with a missing key value left out")
    return lines


@register_measure(
    "loglinear",
    "risk",
    LoglinearRiskParams,
    summary=lambda result: result.summary(),
    help="Global risk from log-linear models: sdcMicro's modRisk (default, CE, PML, weightedLLM, IPF).",
    report=_report,
    records=lambda result: result.records(),
    headline="population_unique_share",
)
def _run(table: Table, params: LoglinearRiskParams, context: Context) -> LoglinearRisk:
    config = context.config
    weights = config.data.weights if config is not None else table.weights
    return loglinear_risk(table, params, weights)
