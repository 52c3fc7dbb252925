"""Synthetic microdata by sequential regression multiple imputation (Rubin 1993; Raghunathan, Reiter &
Rubin 2003; Reiter 2005), and the combining rules analysts apply to the ``M`` synthetic data sets.

``synthesize`` releases ``M`` implicates, each a synthetic data set of ``n`` records (``n`` = the
original's), stacked in ONE file whose first column ``implicate`` numbers them ``1..M``. An analyst
computes an estimate ``q_l`` and its variance ``u_l`` on every implicate (as if it were real data) and
combines them with :func:`combine`.

**Fully synthetic** (default). The attributes (identifiers dropped, as from every release) are
synthesized one after the other in ``order`` (default: the configuration's order, then the other
columns in file order):

* the first one from its marginal: a Bayesian bootstrap (Rubin 1981) of the original values — Dirichlet
  (1, ..., 1) weights over the ``n`` originals, then ``n`` values drawn with those probabilities, so
  that an implicate is a draw from the posterior predictive distribution and not a mere resample;
* every later one from a model fitted on the ORIGINAL values of the earlier attributes and applied to
  the already SYNTHESIZED values of those attributes of the same implicate:

  - ``cart`` (Reiter 2005): a scikit-learn ``DecisionTreeRegressor`` (numeric) or
    ``DecisionTreeClassifier`` (categorical) grown to leaves of at least ``min_samples_leaf`` records
    (no pruning); a synthetic record falls into a leaf through its synthetic predictors, and its value
    is drawn from the original values of that leaf by a Bayesian bootstrap of the leaf (fresh weights
    per implicate). Every released value is thus an original value. The tree is fitted once per
    attribute (the fit sees original data only, the same for every implicate).
  - ``regression``: a numeric attribute by linear regression (intercept, one-hot predictors with the
    first category as reference); per implicate the parameters are drawn from their posterior under
    the non-informative prior, ``σ²* = RSS / χ²_{n−p}`` and ``β* ~ N(β̂, σ²* (XᵀX)⁻¹)``, and the value is
    ``x β* + N(0, σ²*)`` (rounded when the column holds whole numbers or dates). A categorical
    attribute by multinomial logistic regression (scikit-learn ``LogisticRegression``, lbfgs, default
    L2 penalty, numeric predictors standardized), refitted per implicate on a bootstrap sample of the
    records (the parameter draw of mice's ``logreg.boot``), the value drawn from the predicted
    probabilities. A category of the modelled attribute held by ONE record cannot be estimated by a
    multinomial logit: it is refused (ConfigError naming the attribute and the category; recode it or
    use ``cart``), never silently merged.

  Predictors: a categorical attribute as one-hot columns (plus one for its missing value when it has
  any); a numeric one as its value (missing values set to the original mean) plus a missing indicator
  when it has missing values.

**Missing values** are kept as such: an attribute with missing values is synthesized in two steps, first
its missing indicator (modelled as a two-category attribute with the same model and predictors), then
its value, modelled on the records where it is present and drawn for the synthetic records whose
indicator says present. An attribute missing everywhere stays missing; a constant attribute (one value
among the present ones) is copied (its missing indicator still modelled).

**Partially synthetic** (``synthesize``: the attributes to replace; Reiter 2003). Only the listed
attributes are replaced, each predicted from the original values of all the attributes not listed
plus the listed ones before it (fitted on their original values, applied to their synthetic ones);
the other columns are copied unchanged into every implicate.

**Closeness and its controls** (issue 36). The summary's ``privacy``: the share of released records
that are exact copies of a record the models were fitted on and the quantiles of their distance to
the closest one (Gower, :mod:`sdckit.anonymize._synthesis_privacy`); with ``holdout`` (a share of the
records drawn with ``default_rng([seed, 36])`` and kept out of the models) the same figures for those
real records, the baseline. Controls: ``min_samples_leaf``, and ``min_samples_leaf_last`` for the
last attribute of the order only (a predictor of no later tree: larger leaves for the chain, where
rare combinations are reproduced, and smaller ones for the target); ``smooth`` (cart, numeric: the drawn value
plus N(0, h²), h the leaf's normal-reference bandwidth ``1.06 sd n^(-1/5)``, clipped to the observed
range); ``reject_quantile`` q (with a holdout): every synthetic record at most the holdout's q-quantile
DCR from a training record is drawn again from the same models (trees refitted with the next seeds
of the generator), up to ``max_tries`` rounds, then kept and counted; ``reject_unique`` k (fully
synthetic data, no holdout needed): likewise every record that singles out a training record by a
predicate of at most k of its attributes, the predicates of anonymeter's singling-out attack
(:mod:`sdckit.anonymize._synthesis_unique`); ``subsample`` s (cart): each attribute's tree is fitted
on, and draws from, the records kept by a Bernoulli(s) draw per attribute, so that the chain of trees
rarely reproduces a training record whole. ``regression`` draws a numeric
value within the attribute's observed range: outside it, a fresh residual up to ``BOUND_TRIES`` times
(rejection sampling from the truncated normal), then clipping.

Randomness: ``numpy.random.default_rng(seed)``: per attribute in order, the missing-indicator step then
the value step; per step the ``random_state`` of the tree or of the fits, then per implicate its
draws. The same seed gives the same file.

Deviations: Reiter's CART synthesizer prunes the tree by a complexity criterion; here the tree is
grown to ``min_samples_leaf`` without pruning. Sampling weights, if any, are synthesized as an ordinary
numeric attribute and not used by the models. The tutorial's population-imputation scheme (impute the
N − n non-sampled units, then sample n') is realized as drawing n synthetic records from the
posterior predictive distribution, as Raghunathan et al. (2003) do when the design variables are not
available.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

import numpy as np
import polars as pl
from pydantic import Field, model_validator
from scipy import sparse

from sdckit._extras import require
from sdckit.anonymize._synthesis_combining import Combined, combine
from sdckit.anonymize._synthesis_privacy import Reference, closeness, quantiles, too_close
from sdckit.anonymize._synthesis_regression import _linear_draw, _logistic_draw
from sdckit.anonymize._synthesis_unique import Singling, redraw
from sdckit.anonymize.base import Context, register_method, run_method
from sdckit.anonymize.perturbation import Names
from sdckit.anonymize.release import Figures, Release
from sdckit.errors import ConfigError
from sdckit.frequency import encode_column
from sdckit.params import Finite, MethodParams, Whole, spell
from sdckit.table import Attribute, Kind, Role, Schema, Table, value_strings

IMPLICATE = "implicate"
MODELS = ("cart", "regression")


# Encoded attributes -------------------------------------------------------------------------------


@dataclass
class _Column:
    """An attribute as the models see it: ``codes`` (int, -1 missing) of ``categories`` for a
    categorical one, ``values`` (float64, NaN missing) for a numeric one."""

    name: str
    categorical: bool
    series: pl.Series
    codes: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # categorical
    categories: pl.Series = field(default_factory=pl.Series)  # categorical
    values: np.ndarray = field(default_factory=lambda: np.zeros(0))  # numeric
    whole: bool = False

    @property
    def missing(self) -> np.ndarray:
        return self.codes < 0 if self.categorical else np.isnan(self.values)

    @property
    def size(self) -> int:
        return len(self.categories) if self.categorical else 0


def _encode(table: Table, name: str) -> _Column:
    series = table.column(name)
    kind = table.schema[name].kind if name in table.schema else Kind.CATEGORICAL
    numeric = kind in (Kind.NUMERIC, Kind.DATE) and (series.dtype.is_numeric() or series.dtype.is_temporal())
    if not numeric:
        codes, _, _, categories = encode_column(series)
        return _Column(name, True, series, codes=codes.astype(np.int64), categories=categories)
    physical = series.to_physical() if series.dtype.is_temporal() else series
    values = physical.cast(pl.Float64).fill_null(np.nan).to_numpy().astype(np.float64, copy=True)
    whole = series.dtype.is_temporal() or series.dtype.is_integer()
    return _Column(name, False, series, values=values, whole=whole)


class _Features:
    """The predictor columns an attribute contributes, built with the ORIGINAL data's statistics so
    that original and synthetic values are coded alike."""

    def __init__(self, column: _Column, reference: bool, standardize: bool) -> None:
        self.column = column
        self.reference = reference  # drop the first category (linear models with an intercept)
        missing = column.missing
        self.has_missing = bool(missing.any())
        if not column.categorical:
            present = column.values[~missing]
            self.mean = float(present.mean()) if len(present) else 0.0
            sd = float(present.std()) if len(present) > 1 else 0.0
            self.scale = sd if sd > 0 else 1.0
        self.standardize = standardize

    def build(self, data: np.ndarray) -> sparse.csr_matrix:
        """The columns of ``data`` (codes or values of this attribute) as a sparse matrix."""
        rows = len(data)
        if self.column.categorical:
            size = self.column.size
            width = size + (1 if self.has_missing else 0)
            slot = np.where(data < 0, size, data)
            first = 1 if self.reference and width > 1 else 0
            keep = np.flatnonzero(slot >= first)
            return sparse.csr_matrix(
                (np.ones(len(keep)), (keep, slot[keep] - first)), shape=(rows, width - first)
            )
        missing = np.isnan(data)
        value = np.where(missing, self.mean, data)
        if self.standardize:
            value = (value - self.mean) / self.scale
        parts = [value[:, None]]
        if self.has_missing:
            parts.append(missing[:, None].astype(np.float64))
        return sparse.csr_matrix(np.hstack(parts))


def _design(blocks: Sequence[sparse.csr_matrix], rows: int) -> sparse.csr_matrix:
    """The predictors side by side (one-hot categories are sparse: a tree on a CSC matrix skips the
    zeros, tens of times faster than on the dense matrix)."""
    if not blocks:
        return sparse.csr_matrix((rows, 0))
    return sparse.hstack(list(blocks), format="csr")


# Draws --------------------------------------------------------------------------------------------


def _leaf_draw(
    leaves_fit: np.ndarray, leaves_gen: np.ndarray, m: int, n_gen: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """For every generated record (implicate ``l`` has the block ``n_gen[l]`` of ``leaves_gen``), the
    index of the fitted record drawn from its leaf by a Bayesian bootstrap of the leaf: Exp(1) weights
    over the leaf's records (normalized: Dirichlet(1, ..., 1)), fresh per implicate, then one draw
    with those probabilities."""
    order = np.argsort(leaves_fit, kind="stable")
    sorted_leaves = leaves_fit[order]
    start = np.searchsorted(sorted_leaves, leaves_gen, side="left")
    end = np.searchsorted(sorted_leaves, leaves_gen, side="right")
    chosen = np.empty(len(leaves_gen), dtype=np.int64)
    offset = 0
    for block in range(m):
        size = int(n_gen[block])
        s, e = start[offset : offset + size], end[offset : offset + size]
        cumulative = np.cumsum(rng.exponential(1.0, len(order)))
        base = np.where(s > 0, cumulative[np.maximum(s - 1, 0)], 0.0)
        total = cumulative[e - 1] - base
        target = base + rng.random(size) * total
        position = np.minimum(np.searchsorted(cumulative, target, side="right"), e - 1)
        chosen[offset : offset + size] = order[np.maximum(position, s)]
        offset += size
    return chosen


def _cart_draw(
    x_fit: sparse.csr_matrix,
    y_fit: np.ndarray,
    x_gen: sparse.csr_matrix,
    m: int,
    n_gen: np.ndarray,
    categorical: bool,
    min_samples_leaf: int,
    rng: np.random.Generator,
    widths: list[np.ndarray] | None = None,
    share: float = 1.0,
) -> np.ndarray:
    """Indices into ``y_fit`` drawn for every generated record (see :func:`_leaf_draw`); ``widths``
    (a list) receives the smoothing bandwidth of each generated record's leaf; ``share`` < 1: the
    tree is fitted on, and draws from, the records kept by a Bernoulli(``share``) draw (at least one)."""
    if share < 1:
        keep = np.flatnonzero(rng.random(len(y_fit)) < share)
        keep = keep if len(keep) else np.array([int(rng.integers(len(y_fit)))])
        fit = (x_fit[keep], y_fit[keep], x_gen, m, n_gen, categorical, min_samples_leaf, rng, widths)
        return keep[_cart_draw(*fit)]
    state = int(rng.integers(2**31 - 1))
    if x_fit.shape[1] == 0:
        leaves_fit, leaves_gen = np.zeros(len(y_fit), np.int64), np.zeros(x_gen.shape[0], np.int64)
        if widths is not None:
            widths.append(_bandwidth(leaves_fit, y_fit)[leaves_gen])
        return _leaf_draw(leaves_fit, leaves_gen, m, n_gen, rng)
    require("learn", "sklearn", feature="synthesis by cart")
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

    model = (DecisionTreeClassifier if categorical else DecisionTreeRegressor)(
        min_samples_leaf=min_samples_leaf, random_state=state
    )
    x_fit = sparse.csc_matrix(x_fit, dtype=np.float32)
    with warnings.catch_warnings():  # a categorical target with many classes is still a classification
        warnings.simplefilter("ignore", UserWarning)
        model.fit(x_fit, y_fit)
    leaves_fit = model.apply(x_fit.tocsr()).astype(np.int64)
    leaves_gen = model.apply(sparse.csr_matrix(x_gen, dtype=np.float32)).astype(np.int64)
    if widths is not None:
        widths.append(_bandwidth(leaves_fit, y_fit)[leaves_gen])
    return _leaf_draw(leaves_fit, leaves_gen, m, n_gen, rng)


def _bandwidth(leaves: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per leaf (indexed by leaf id), the normal-reference bandwidth of its values,
    ``1.06 · sd · count^(-1/5)`` (Silverman 1986, eq. 3.28; sd with ddof 0)."""
    count = np.bincount(leaves).astype(np.float64)
    total = np.bincount(leaves, weights=y)
    squares = np.bincount(leaves, weights=y * y)
    safe = np.maximum(count, 1.0)
    sd = np.sqrt(np.maximum(squares / safe - (total / safe) ** 2, 0.0))
    return 1.06 * sd * safe ** (-0.2)


# Synthesis ---------------------------------------------------------------------------------------


def _ordered(table: Table, order: Sequence[str] | None) -> list[str]:
    names = [a.name for a in table.schema if a.role is not Role.IDENTIFIER]
    if order is None:
        return names
    for name in order:
        if name not in table.data.columns:
            raise ConfigError(f"order: '{name}' is not a column of the data (columns: {', '.join(names)})")
        if name not in names:
            raise ConfigError(f"order: '{name}' is an identifier, which is dropped from every release")
    if len(set(order)) != len(order):
        raise ConfigError(f"order: an attribute is named twice ({', '.join(order)})")
    return [*order, *(name for name in names if name not in order)]


def _targets(table: Table, names: list[str], attributes: Sequence[str] | None) -> tuple[list[str], str]:
    """The attributes to synthesize, in ``names``' order, and the kind of synthetic data (``full`` or
    ``partial``); ``attributes`` None: all of them."""
    if attributes is None:
        return list(names), "full"
    if not attributes:
        raise ConfigError("synthesize lists no attribute")
    for name in attributes:
        if name not in names:
            known = ", ".join(names)
            what = "an identifier" if name in table.data.columns else "not a column of the data"
            raise ConfigError(f"synthesize: '{name}' is {what} (attributes: {known})")
    if len(set(attributes)) != len(attributes):
        raise ConfigError(f"synthesize: an attribute is named twice ({', '.join(attributes)})")
    targets = [name for name in names if name in attributes]
    return targets, "partial" if len(targets) < len(names) else "full"


def _missing_step(
    column: _Column,
    x_fit: sparse.csr_matrix,
    x_gen: sparse.csr_matrix,
    params: SynthesizeParams,
    sizes: np.ndarray,
    rng: np.random.Generator,
) -> np.ndarray:
    """Which synthetic records of every implicate (``sizes[l]`` records of implicate ``l``) get a
    missing value of ``column``: its missing indicator modelled as a two-category attribute (none
    when the original has no missing value, all when it has no other)."""
    m, total = params.m, int(sizes.sum())
    missing = column.missing
    if missing.all():
        return np.ones(total, dtype=bool)
    if not missing.any():
        return np.zeros(total, dtype=bool)
    flag = missing.astype(np.int64)
    if params.model == "cart":
        leaf, share = params.min_samples_leaf, params.subsample
        drawn = flag[_cart_draw(x_fit, flag, x_gen, m, sizes, True, leaf, rng, None, share)]
    else:
        drawn = _logistic_draw(x_fit, flag, x_gen, m, sizes, 2, rng)
    return drawn.astype(bool)


def _value_step(
    name: str,
    column: _Column,
    x_fit: sparse.csr_matrix,
    x_gen: sparse.csr_matrix,
    synthetic_missing: np.ndarray,
    params: SynthesizeParams,
    predictors: bool,
    sizes: np.ndarray,
    rng: np.random.Generator,
    tally: dict[str, int],
) -> np.ndarray:
    """The synthetic values of ``column`` (codes, -1 missing, or numbers, NaN missing) for the
    synthetic records (``sizes[l]`` of implicate ``l``): drawn by the model for those
    ``synthetic_missing`` leaves present, from a model fitted on the original records where it is
    present (``predictors``: there are earlier attributes to predict from; without, CART draws from
    the marginal)."""
    m, total = params.m, int(sizes.sum())
    present, wanted = ~column.missing, ~synthetic_missing
    starts = np.concatenate([[0], np.cumsum(sizes)])
    gen_sizes = np.array(
        [np.count_nonzero(wanted[starts[b] : starts[b + 1]]) for b in range(m)], dtype=np.int64
    )
    y_fit = column.codes[present] if column.categorical else column.values[present]
    out = np.full(total, -1, dtype=np.int64) if column.categorical else np.full(total, np.nan)
    if not wanted.any():
        return out
    fit_x, gen_x = x_fit[present], x_gen[wanted]
    if len(np.unique(y_fit)) == 1:  # constant: copied
        out[wanted] = y_fit[0]
    elif params.model == "cart" or not predictors:
        widths: list[np.ndarray] | None = [] if params.smooth and not column.categorical else None
        share = params.subsample if params.model == "cart" else 1.0
        fit = (fit_x, y_fit, gen_x, m, gen_sizes, column.categorical, params.min_samples_leaf, rng, widths)
        drawn = _cart_draw(*fit, share)
        out[wanted] = y_fit[drawn]
        if widths:  # smoothing: Gaussian noise of the leaf's bandwidth, kept in the observed range
            noisy = np.clip(
                y_fit[drawn] + rng.standard_normal(len(drawn)) * widths[0], y_fit.min(), y_fit.max()
            )
            out[wanted] = np.round(noisy) if column.whole else noisy
    elif column.categorical:
        counts = np.bincount(y_fit, minlength=column.size)
        single = np.flatnonzero(counts == 1)
        if len(single):
            label = value_strings(column.categories.gather([int(single[0])])).to_list()[0]
            raise ConfigError(
                f"{name}: category '{label}' has one record; multinomial logistic regression "
                f"cannot estimate it ({len(single)} such categor{'y' if len(single) == 1 else 'ies'})"
                f"; recode it into a larger category or use {spell('model')} cart"
            )
        out[wanted] = _logistic_draw(fit_x, y_fit, gen_x, m, gen_sizes, column.size, rng)
    else:
        bounds = (float(y_fit.min()), float(y_fit.max()))
        values = _linear_draw(fit_x, y_fit, gen_x, m, gen_sizes, name, rng, bounds, tally)
        out[wanted] = np.round(values) if column.whole else values
    return out


@dataclass(frozen=True)
class SynthesisFigures(Figures):
    """What synthesis did: ``kind`` (full or partial), the attributes synthesized and those kept as
    they are, the order of all of them, the records per implicate and, per synthesized attribute, its
    missing values in the original and on average per implicate; ``privacy`` the exact copies and
    distances to the closest training record (:func:`_privacy`), ``bounded`` per attribute drawn by
    linear regression the values redrawn and clipped into its observed range."""

    kind: str
    synthesized: list[str]
    kept: list[str]
    order: list[str]
    records_per_implicate: int
    missing_kept: dict[str, dict[str, float]]
    privacy: dict[str, Any] = field(default_factory=dict)
    bounded: dict[str, dict[str, int]] = field(default_factory=dict)


def _split(table: Table, params: SynthesizeParams) -> tuple[np.ndarray, np.ndarray]:
    """The records the models see and those held out (``holdout``: a share drawn with the seed, by
    its own generator, so that the draws of the synthesis do not depend on it)."""
    n = table.n_records
    if params.holdout == 0:
        return np.arange(n), np.zeros(0, dtype=np.int64)
    count = int(round(params.holdout * n))
    if count < 1 or n - count < 2:
        raise ConfigError(
            f"{spell('holdout')} {params.holdout:g} of {n:,} records holds out {count:,}: it must leave "
            "at least one record out and two in"
        )
    order = np.random.default_rng([params.seed, 36]).permutation(n)
    return np.sort(order[count:]), np.sort(order[:count])


def _subset(column: _Column, rows: np.ndarray) -> _Column:
    """``column`` on ``rows`` (same categories)."""
    if column.categorical:
        return _Column(
            column.name,
            True,
            column.series.gather(rows),
            codes=column.codes[rows],
            categories=column.categories,
        )
    return _Column(
        column.name, False, column.series.gather(rows), values=column.values[rows], whole=column.whole
    )


def _matrices(
    columns: dict[str, _Column], data: dict[str, np.ndarray], names: list[str]
) -> tuple[np.ndarray, np.ndarray]:
    """The records of ``data`` (codes or values per attribute) as a code matrix and a value matrix."""
    rows = len(data[names[0]]) if names else 0
    codes = [data[name] for name in names if columns[name].categorical]
    values = [data[name] for name in names if not columns[name].categorical]
    return (
        np.column_stack(codes).astype(np.int64) if codes else np.zeros((rows, 0), np.int64),
        np.column_stack(values).astype(np.float64) if values else np.zeros((rows, 0)),
    )


def _generate(
    columns: dict[str, _Column],
    names: list[str],
    targets: list[str],
    kept: list[str],
    sizes: np.ndarray,
    params: SynthesizeParams,
    rng: np.random.Generator,
    progress: Any,
    tallies: dict[str, dict[str, int]],
    given: dict[str, np.ndarray] | None = None,
) -> dict[str, np.ndarray]:
    """One draw of ``sizes[l]`` synthetic records for every implicate ``l`` (kept attributes: the
    originals, so every ``sizes[l]`` is the number of records; or their ``given`` values), per
    attribute."""
    m, regression = params.m, params.model == "regression"
    n, total = len(columns[names[0]].missing), int(sizes.sum())
    # Predictors available to every target: the attributes not synthesized (original values).
    generated = {name: np.tile(_data(columns[name]), m) if given is None else given[name] for name in kept}
    features = {
        name: _Features(columns[name], reference=regression, standardize=regression) for name in names
    }
    blocks_fit = {name: features[name].build(_data(columns[name])) for name in names}
    blocks_gen = {name: features[name].build(generated[name]) for name in kept}
    available = list(kept)
    for step, name in enumerate(targets):
        x_fit = _design([blocks_fit[p] for p in available], n)
        x_gen = _design([blocks_gen[p] for p in available], total)
        step_params = _step_params(params, name == names[-1])
        synthetic_missing = _missing_step(columns[name], x_fit, x_gen, step_params, sizes, rng)
        tally = tallies.setdefault(name, {})
        out = _value_step(
            name,
            columns[name],
            x_fit,
            x_gen,
            synthetic_missing,
            step_params,
            bool(available),
            sizes,
            rng,
            tally,
        )
        generated[name] = out
        blocks_gen[name] = features[name].build(out)
        available.append(name)
        if progress is not None:
            progress(step + 1, len(targets))
    return generated


def _step_params(params: SynthesizeParams, last: bool) -> SynthesizeParams:
    """The parameters of one attribute's step: the last attribute's leaves are
    ``min_samples_leaf_last`` when set."""
    if not last or params.min_samples_leaf_last is None:
        return params
    return params.model_copy(update={"min_samples_leaf": params.min_samples_leaf_last})


def _rejection(
    columns: dict[str, _Column],
    generated: dict[str, np.ndarray],
    targets: list[str],
    in_file_order: list[str],
    reference: Reference,
    threshold: float | None,
    params: SynthesizeParams,
    draw: Any,
) -> dict[str, Any]:
    """Draw again the records too close to a training record (``threshold``) or that single out one
    (``reject_unique``; :mod:`sdckit.anonymize._synthesis_unique`), in place, with ``draw(sizes,
    slots, start)`` (fresh records per implicate, the first ``start`` attributes of the ``slots``
    kept; :func:`redraw`); what was rejected."""
    n, k = len(columns[targets[0]].missing), params.reject_unique
    names = [name for name in in_file_order if columns[name].categorical]
    singling = None
    if k is not None:
        training = _matrices(columns, {c: _data(columns[c]) for c in columns}, in_file_order)
        singling = Singling(*training, np.array([columns[c].size for c in names], dtype=np.int64), k)
    singled = [0]

    def check(data: dict[str, np.ndarray]) -> np.ndarray:
        matrices = _matrices(columns, data, in_file_order)
        out = np.zeros(len(matrices[0]), dtype=bool)
        if threshold is not None:
            out = too_close(reference, *matrices, threshold)
        if singling is not None:
            unique = singling.singles_out(*matrices)
            singled[0] += int((unique & ~out).sum())
            out |= unique
        return out

    suffix = k is not None and len(targets) > 1
    counts = redraw(generated, targets, n, params.m, params.max_tries, check, draw, suffix)
    out = {
        "quantile": params.reject_quantile,
        "distance": None if threshold is None else round(threshold, 6),
        "rejected": counts["rejected"],
        "rounds": counts["rounds"],
        "kept_too_close": counts["kept"],
    }
    if k is not None:
        out.update(unique_attributes=k, singled_out=singled[0])
    return out


def _synthesized(
    table: Table, params: SynthesizeParams, order: Sequence[str] | None, progress: Any
) -> Release:
    """The release of :func:`synthesize` with the attributes to synthesize first in ``order``."""
    m = params.m
    if IMPLICATE in table.data.columns:
        raise ConfigError(
            f"the data already has a column '{IMPLICATE}' (is it synthetic already?); the release adds "
            "one: rename or drop it"
        )
    names = _ordered(table, order)
    if not names:
        raise ConfigError("synthesize needs attributes: every column is an identifier")
    targets, kind = _targets(table, names, params.synthesize)
    for option in ("reject_quantile", "reject_unique"):
        if kind == "partial" and getattr(params, option) is not None:
            raise ConfigError(
                f"{spell(option)} needs fully synthetic data: a partially synthetic record keeps "
                "original values, it cannot be drawn again"
            )
    if params.reject_unique is not None and params.reject_unique > len(names):
        raise ConfigError(
            f"{spell('reject_unique')} must be at most the {len(names)} released attributes, "
            f"got {params.reject_unique}"
        )
    train, held = _split(table, params)
    everything = {name: _encode(table, name) for name in names}
    columns = everything if not len(held) else {name: _subset(c, train) for name, c in everything.items()}
    n = len(train)
    rng = np.random.default_rng(params.seed)
    kept = [name for name in names if name not in targets]
    in_file_order = [name for name in table.data.columns if name in columns]
    reference = Reference(*_matrices(columns, {k: _data(c) for k, c in columns.items()}, in_file_order))
    held_data = {name: _data(c)[held] for name, c in everything.items()}
    holdout_dcr = reference.dcr(*_matrices(columns, held_data, in_file_order)) if len(held) else None
    threshold = None
    if params.reject_quantile is not None and holdout_dcr is not None:
        threshold = float(np.quantile(holdout_dcr, params.reject_quantile))
    tallies: dict[str, dict[str, int]] = {}
    sizes = np.full(m, n, dtype=np.int64)
    generated = _generate(columns, names, targets, kept, sizes, params, rng, progress, tallies)
    rejection = None
    if threshold is not None or params.reject_unique is not None:

        def again(sizes: np.ndarray, slots: np.ndarray, start: int) -> dict[str, np.ndarray]:
            given = {name: generated[name][slots] for name in names[:start]}
            return _generate(
                columns, names, names[start:], names[:start], sizes, params, rng, None, tallies, given
            )

        rejection = _rejection(
            columns, generated, targets, in_file_order, reference, threshold, params, again
        )
    privacy = closeness(reference, *_matrices(columns, generated, in_file_order), n, params.seed)
    privacy["holdout"] = (
        None
        if holdout_dcr is None
        else {
            "records": len(held),
            "exact_copies": round(float(np.mean(holdout_dcr == 0)), 6),
            "dcr": quantiles(holdout_dcr),
        }
    )
    privacy["rejection"] = rejection
    frame = pl.DataFrame(
        [
            pl.Series(IMPLICATE, np.repeat(np.arange(1, m + 1, dtype=np.int64), n)),
            *(_released(columns[name], generated[name], m) for name in in_file_order),
        ]
    )
    schema = Schema(
        (
            Attribute(IMPLICATE, role=Role.INSENSITIVE, kind=Kind.NUMERIC),
            *(table.schema[name] for name in in_file_order),
        )
    )
    rows = n * m
    figures = SynthesisFigures(
        kind=kind,
        synthesized=targets,
        kept=kept,
        order=names,
        records_per_implicate=n,
        missing_kept={
            name: {
                "original": int(columns[name].missing.sum()),
                "synthetic_mean": _missing_mean(generated[name], columns[name], m),
            }
            for name in targets
        },
        privacy=privacy,
        bounded={name: tally for name, tally in tallies.items() if tally},
    )
    return Release(
        table=Table(frame, schema, source=table.source, weights=table.weights),
        original=table,
        method="synthesize",
        quasi_identifiers=tuple(targets),
        suppressed_records=np.zeros(rows, dtype=bool),
        classes=np.full(rows, -1, dtype=np.int64),
        seed=params.seed,
        params=params,
        figures=figures,
    )


def synthesize(
    table: Table,
    *,
    m: int = 5,
    model: str = "cart",
    attributes: Sequence[str] | None = None,
    order: Sequence[str] | None = None,
    min_samples_leaf: int = 5,
    min_samples_leaf_last: int | None = None,
    subsample: float = 1.0,
    smooth: bool = False,
    holdout: float = 0.0,
    reject_quantile: float | None = None,
    reject_unique: int | None = None,
    max_tries: int = 10,
    seed: int = 0,
    progress: Any = None,
) -> Release:
    """``m`` synthetic implicates of ``table`` stacked with an ``implicate`` column (see the module
    docstring). ``attributes``: the attributes to synthesize (partially synthetic data); None for
    fully synthetic data. ``order``: the attributes to synthesize first, in this order (the others
    follow in schema order). The figures are :class:`SynthesisFigures`."""
    values = {
        "m": m,
        "model": model,
        "synthesize": attributes,
        "order": order,
        "min_samples_leaf": min_samples_leaf,
        "min_samples_leaf_last": min_samples_leaf_last,
        "subsample": subsample,
        "smooth": smooth,
        "holdout": holdout,
        "reject_quantile": reject_quantile,
        "reject_unique": reject_unique,
        "max_tries": max_tries,
        "seed": seed,
    }
    return run_method("synthesize", table, values, Context(progress=progress))


def _data(column: _Column) -> np.ndarray:
    return column.codes if column.categorical else column.values


def _missing_mean(data: np.ndarray, column: _Column, m: int) -> float:
    missing = data < 0 if column.categorical else np.isnan(data)
    return float(missing.sum() / m)


def _released(column: _Column, data: np.ndarray, m: int) -> pl.Series:
    """The synthetic values as a column of the original's type (missing as null)."""
    dtype = column.series.dtype
    if column.categorical:
        if column.size == 0:
            return pl.Series(column.name, [None] * len(data), dtype=dtype)
        values = column.categories.gather(np.maximum(data, 0))
        if (data < 0).any():
            values = values.scatter(np.flatnonzero(data < 0), None)
        return values.cast(dtype).alias(column.name)
    values = pl.Series(column.name, data).fill_nan(None)
    if dtype.is_temporal():
        return values.cast(column.series.to_physical().dtype).cast(dtype)
    return values.cast(dtype)


# The method ---------------------------------------------------------------------------------------


class SynthesizeParams(MethodParams):
    """Parameters of synthetic data (``sdckit anonymize synthesize``)."""

    m: Annotated[Whole, Field(ge=1, description="Number of implicates (synthetic data sets) M.")] = 5
    model: Annotated[
        Literal["cart", "regression"],
        Field(description="cart (trees, leaf Bayesian bootstrap) or regression (linear / logistic)."),
    ] = "cart"
    synthesize: Annotated[
        Names,
        Field(description="Partially synthetic: only these attributes, comma-separated (default: all)."),
    ] = None
    order: Annotated[
        Names, Field(description="Synthesize these attributes first, in this order, comma-separated.")
    ] = None
    min_samples_leaf: Annotated[
        Whole, Field(ge=1, description="cart: fewest records in a leaf of the tree.")
    ] = 5
    min_samples_leaf_last: Annotated[
        Whole | None,
        Field(
            ge=1,
            description="cart: fewest records in a leaf of the last attribute's tree, which no later "
            "tree takes as a predictor (default: min_samples_leaf).",
        ),
    ] = None
    subsample: Annotated[
        Finite,
        Field(
            gt=0,
            le=1,
            description="cart: each attribute's tree is fitted on, and draws from, this share of the "
            "training records, drawn afresh per attribute (1: all of them).",
        ),
    ] = 1.0
    smooth: Annotated[
        bool,
        Field(
            description="cart: add to a numeric value drawn from a leaf Gaussian noise of the leaf's "
            "normal-reference bandwidth, kept within the observed range."
        ),
    ] = False
    holdout: Annotated[
        Finite,
        Field(
            ge=0,
            lt=1,
            description="Share of the records held out from the models (drawn with the seed): the "
            "baseline of exact copies and distances to the closest record; 0 for none.",
        ),
    ] = 0.0
    reject_quantile: Annotated[
        Finite | None,
        Field(
            ge=0,
            lt=1,
            description="Draw again every synthetic record at most as far from a training record as "
            "this quantile of the holdout's distances (needs a holdout).",
        ),
    ] = None
    reject_unique: Annotated[
        Whole | None,
        Field(
            ge=1,
            description="Draw again every synthetic record that singles out a training record: a "
            "predicate on at most this many of its attributes (category equal, number at least / at "
            "most its value towards the tail) that exactly one training record satisfies.",
        ),
    ] = None
    max_tries: Annotated[
        Whole,
        Field(
            ge=1, description="Rounds of drawing with rejection; records still too close are kept, counted."
        ),
    ] = 10
    seed: Annotated[Whole, Field(ge=0, description="Seed of the models and the draws.")] = 0

    @model_validator(mode="after")
    def _rejection_needs_a_holdout(self) -> SynthesizeParams:
        if self.reject_quantile is not None and self.holdout == 0:
            raise ValueError(
                "{reject_quantile} needs a holdout to take the distance from: set {holdout} (e.g. 0.2)"
            )
        return self


def _summary(release: Release) -> dict[str, Any]:
    params, figures = release.params, release.figures_as(SynthesisFigures)
    return {
        "m": params.m,
        "model": params.model,
        "kind": figures.kind,
        "synthesized": figures.synthesized,
        "kept": figures.kept,
        "order": figures.order,
        "min_samples_leaf": params.min_samples_leaf,
        "min_samples_leaf_last": params.min_samples_leaf_last,
        "subsample": params.subsample,
        "smooth": params.smooth,
        "holdout": params.holdout,
        "reject_quantile": params.reject_quantile,
        "reject_unique": params.reject_unique,
        "max_tries": params.max_tries,
        "seed": params.seed,
        "records_per_implicate": figures.records_per_implicate,
        "released_records": figures.records_per_implicate * params.m,
        "missing_kept": figures.missing_kept,
        "privacy": figures.privacy,
        "bounded": figures.bounded,
    }


def _report(figures: dict[str, Any]) -> list[str]:
    what = "fully" if figures["kind"] == "full" else "partially"
    lines = [
        f"{what} synthetic data: M = {figures['m']} implicates of {figures['records_per_implicate']:,} "
        f"records (column '{IMPLICATE}'), model {figures['model']}, seed {figures['seed']}",
        f"synthesized: {', '.join(figures['synthesized'])}",
    ]
    if figures["kept"]:
        lines.append(f"kept as they are: {', '.join(figures['kept'])}")
    privacy = figures.get("privacy") or {}
    if privacy:
        median = privacy["dcr"].get("q50", 0.0)
        line = (
            f"exact copies of a training record {privacy['exact_copies']:.1%}, median distance to "
            f"the closest {median:.4f}"
        )
        if privacy.get("holdout"):
            held = privacy["holdout"]
            line += f" (holdout: {held['exact_copies']:.1%}, {held['dcr'].get('q50', 0.0):.4f})"
        lines.append(line)
    if privacy.get("rejection"):
        r = privacy["rejection"]
        why = [] if r["distance"] is None else [f"at most {r['distance']:g} from a training record"]
        if r.get("unique_attributes"):
            why.append(f"singling one out by at most {r['unique_attributes']} attributes")
        lines.append(
            f"rejected {r['rejected']:,} draws {' or '.join(why)} in {r['rounds']} rounds; "
            f"{r['kept_too_close']:,} kept"
        )
    return lines


def _default_order(table: Table, context: Context) -> list[str] | None:
    """The configuration's order of the attributes (then the others in file order)."""
    if context.config is None:
        return None
    names = [
        a.name for a in context.config.attributes if a.name in table.schema and a.role is not Role.IDENTIFIER
    ]
    return names or None


@register_method(
    "synthesize",
    SynthesizeParams,
    summary=_summary,
    help="Fully or partially synthetic data, M implicates by sequential CART or regression (Reiter).",
    report=_report,
    progress_label="attributes synthesized",
    examples={"replay": {"m": 3, "model": "cart", "min_samples_leaf": 2, "seed": 6}},
)
def _run_synthesize(table: Table, params: SynthesizeParams, context: Context) -> Release:
    """Synthesis (see :func:`synthesize`), the configuration's order by default."""
    order = params.order if params.order is not None else _default_order(table, context)
    return _synthesized(table, params, order, context.progress)


__all__ = ["Combined", "SynthesisFigures", "SynthesizeParams", "combine", "synthesize"]
