"""A distinguishing test for ε-differentially private releases: a lower bound on ε from runs of the
mechanism on two neighbouring inputs (Jagielski, Ullman & Oprea 2020, "Auditing differentially
private machine learning: how private is private SGD?", NeurIPS; Google's DP-Auditorium, Kong et al.
2024).

The adversary knows the mechanism and its claim (ε, δ, the bounds: the release's recipe), the
original data and which record differs between two neighbouring inputs ``D`` (the original) and
``D'`` (the original with one record changed, as the mechanism's neighbouring relation says: dp-noise
and the query server both claim "one record's values changed"). The mechanism runs ``trials`` times
on each side with fresh noise; the adversary sees one output and says ``D'`` when a test statistic is
at least a threshold ``t``. Its false-positive rate ``FPR = P(say D' | D)`` and false-negative rate
``FNR = P(say D | D')`` bound ε for any (ε, δ)-DP mechanism: ``FPR + e^ε·FNR ≥ 1 − δ`` and ``FNR +
e^ε·FPR ≥ 1 − δ``, so with upper confidence bounds ``FPR_hi``, ``FNR_hi`` (Clopper–Pearson)

    ε_lb = max(ln((1 − δ − FPR_hi) / FNR_hi), ln((1 − δ − FNR_hi) / FPR_hi))   (0 when undefined)

is a lower bound on the true ε at the confidence level: the mechanism is shown **not** to be ε-DP
when ``ε_lb`` exceeds the claimed ε. The runs are split in two halves: the threshold is chosen on
the first (the one that maximizes the bound there), the rates are counted on the second, so that
the choice costs no confidence. The two upper bounds are each one-sided at ``(1 + confidence)/2``
(the two-sided Clopper–Pearson interval's upper end), so that both hold together at ``confidence``.

**The pair.** dp-noise adds Laplace noise to every value independently, so the other records'
outputs do not depend on the changed one: the audit runs the mechanism on the changed record alone
(``trials`` copies of it are ``trials`` independent runs). The record changed is the one whose
change to the farthest declared bound moves the output most (the largest ``Σ_j Δ_j / scale_j``);
each of its values goes to that bound (``neighbour=original``), or the record is taken at the lower
bounds in ``D`` and the upper bounds in ``D'`` (``neighbour=extreme``: the mechanism's worst case,
with ``D`` then not the original). A missing value stays missing on both sides (dp-noise releases
missingness as it is). The query server's answer to one ungrouped ``count``, ``sum`` or ``mean``
(``query=...``, with its ``epsilon``, ``delta`` and ``bounds``) is audited the same way: ``D`` is the
original query set, ``D'`` the set with one record changed (for a count it leaves the query set; for
a sum it moves to the farthest bound or leaves the set, whichever moves the sum more; for a mean it
moves to the farthest bound).

**The statistic** is the log-likelihood ratio of ``D'`` to ``D`` under the claimed noise (Laplace:
``Σ_j (|y_j − a_j| − |y_j − b_j|) / s_j``, rounded to 1e-9; Neyman–Pearson's most powerful test),
and for the Gaussian and for a mean the output's projection on ``b − a``.

**The draws.** ``sampler=numpy`` reproduces the claimed noise distribution (Laplace of scale
``(U − L)/ε_j`` for dp-noise; the server's calibration for the queries: Laplace of scale ``Δ₁/ε``,
Gaussian of the scale OpenDP's calibration finds) from ``numpy.random.default_rng(seed)``: seeded,
vectorized. ``sampler=mechanism`` runs the real mechanism instead — dp-noise itself (OpenDP's
exact Laplace sampler, through :func:`sdckit.anonymize.base.run_method` with the recipe's
parameters) or the query server's own :func:`sdckit.query.dp.aggregate` — whose samplers cannot be
seeded: its ε_lb varies from run to run.

**The numbers.** The attack rate is the distinguisher's accuracy on the evaluation half (its Wilson
interval); no distinguisher reaches more than ``(e^ε + δ)/(1 + e^ε)`` against an (ε, δ)-DP
mechanism (``details.accuracy_bound``). The verdict is ε-based, not ``max_risk``-based (which this
attack refuses): **fails** when ``ε_lb`` exceeds the claimed ε, **holds** otherwise — a lower bound
can refute a claim, never prove it: "holds" says the audit did not find a violation with these
trials. ``details.epsilon_of_pair`` is the most the pair itself can show under the claimed noise
(an honest mechanism's ``ε_lb`` stays below it; a pair that cannot show the claimed ε cannot catch
small violations either).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
import polars as pl
from pydantic import Field, model_validator

from sdckit.attack.base import AttackParams, AttackResult, register_attack, wilson_rate
from sdckit.context import Context
from sdckit.errors import ConfigError
from sdckit.params import Finite, spell
from sdckit.table import Table


class DPAuditParams(AttackParams):
    """A distinguishing test of an ε-DP mechanism (dp-noise, or the query server's dp answers)."""

    recipe: Annotated[
        str | None,
        Field(
            min_length=1,
            description="The dp-noise release's summary (--summary) or recipe (JSON or YAML): its ε, budget, "
            "bounds and attributes.",
        ),
    ] = None
    query: Annotated[
        Literal["count", "sum", "mean"] | None,
        Field(description="Audit the query server's dp answer to this ungrouped query instead of a recipe."),
    ] = None
    attribute: Annotated[
        str | None, Field(min_length=1, description="With query sum or mean: the attribute summed.")
    ] = None
    epsilon: Annotated[Finite | None, Field(gt=0, description="With query: the ε the answer spends.")] = None
    delta: Annotated[
        Finite | None,
        Field(gt=0, lt=1, description="With query: δ of the Gaussian mechanism (none: Laplace, ε-DP)."),
    ] = None
    bounds: Annotated[
        str | None,
        Field(min_length=3, description="With query sum or mean: the attribute's bounds, LOWER:UPPER."),
    ] = None
    trials: Annotated[
        int, Field(ge=200, le=10_000_000, description="Runs of the mechanism on each of the two inputs.")
    ] = 20_000
    sampler: Annotated[
        Literal["numpy", "mechanism"],
        Field(
            description="numpy: the claimed noise, seeded; mechanism: the real mechanism (OpenDP, unseeded)."
        ),
    ] = "numpy"
    neighbour: Annotated[
        Literal["original", "extreme"],
        Field(
            description="original: one original record moved to the farthest bounds; extreme: a record at "
            "the lower bounds against the upper ones."
        ),
    ] = "original"

    @model_validator(mode="after")
    def _one_mechanism(self) -> DPAuditParams:
        if self.max_risk is not None:
            raise ValueError(
                "judges a release against its claimed ε (it fails when the lower bound on ε exceeds it): "
                "{max_risk} does not apply"
            )
        if self.recipe is not None and self.query is not None:
            raise ValueError("audits either a recipe ({recipe}) or a query ({query}), not both")
        if self.recipe is not None:
            given = [
                name
                for name in ("attribute", "epsilon", "delta", "bounds")
                if getattr(self, name) is not None
            ]
            if given:
                raise ValueError(f"takes {{{given[0]}}} only with {{query}}: the recipe states it")
        if self.query is not None:
            if self.epsilon is None:
                raise ValueError("needs {epsilon} with {query}")
            numeric = self.query != "count"
            if numeric and (self.attribute is None or self.bounds is None):
                raise ValueError(f"needs {{attribute}} and {{bounds}} with {{query}} {self.query}")
            if not numeric and (self.attribute is not None or self.bounds is not None):
                raise ValueError("takes no {attribute} or {bounds} with {query} count")
            if self.bounds is not None and _bounds(self.bounds) is None:
                raise ValueError(
                    f"needs {{bounds}} as LOWER:UPPER, finite with LOWER < UPPER, got {self.bounds!r}"
                )
            if self.query == "mean" and self.neighbour == "extreme":
                raise ValueError("takes {neighbour} extreme only for dp-noise and sum or count")
        return self


def _bounds(text: str) -> tuple[float, float] | None:
    """``LOWER:UPPER`` as two numbers, or None when it is not that (finite, LOWER < UPPER)."""
    parts = text.split(":")
    try:
        lower, upper = (float(part) for part in parts) if len(parts) == 2 else (math.nan, math.nan)
    except ValueError:
        return None
    return (lower, upper) if math.isfinite(lower) and math.isfinite(upper) and lower < upper else None


# Statistics ---------------------------------------------------------------------------------------


def clopper_pearson(successes: Any, trials: Any, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """The two-sided Clopper–Pearson interval at ``confidence`` of ``successes`` of ``trials``
    (vectorized): ``beta.ppf(α/2, k, n − k + 1)`` and ``beta.ppf(1 − α/2, k + 1, n − k)``, 0 and 1 at
    the ends (Clopper & Pearson 1934)."""
    from scipy.stats import beta

    k = np.asarray(successes, dtype=np.float64)
    n = np.asarray(trials, dtype=np.float64)
    alpha = 1.0 - confidence
    with np.errstate(invalid="ignore", divide="ignore"):
        low = np.where(k > 0, beta.ppf(alpha / 2, k, n - k + 1), 0.0)
        high = np.where(k < n, beta.ppf(1 - alpha / 2, k + 1, n - k), 1.0)
    return np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)


def epsilon_lower_bound(
    false_positives: Any, false_negatives: Any, trials: int, confidence: float, delta: float = 0.0
) -> np.ndarray:
    """``max(ln((1 − δ − FPR_hi)/FNR_hi), ln((1 − δ − FNR_hi)/FPR_hi))``, 0 where both are undefined or
    negative, the rates' upper bounds Clopper–Pearson's over ``trials`` runs per side (vectorized)."""
    fpr_hi = clopper_pearson(false_positives, trials, confidence)[1]
    fnr_hi = clopper_pearson(false_negatives, trials, confidence)[1]
    with np.errstate(invalid="ignore", divide="ignore"):
        first = np.log((1.0 - delta - fpr_hi) / fnr_hi)
        second = np.log((1.0 - delta - fnr_hi) / fpr_hi)
    bound = np.fmax(np.nan_to_num(first, nan=0.0, posinf=np.inf, neginf=0.0), second)
    return np.maximum(np.nan_to_num(bound, nan=0.0, neginf=0.0), 0.0)


@dataclass(frozen=True)
class Distinguished:
    """The distinguisher's threshold (chosen on the first half) and its counts on the second half."""

    threshold: float
    trials: int
    false_positives: int
    false_negatives: int
    epsilon_lower: float


def distinguish(
    first: np.ndarray, second: np.ndarray, confidence: float, delta: float = 0.0
) -> Distinguished:
    """Say ``D'`` when the statistic is at least ``t``: ``t`` maximizes ε_lb on the first half of each
    side's runs (``first`` from ``D``, ``second`` from ``D'``), the rates are counted on the rest."""
    half = min(len(first), len(second)) // 2
    chosen0, chosen1 = np.sort(first[:half]), np.sort(second[:half])
    candidates = np.unique(np.concatenate((chosen0, chosen1)))
    fp = half - np.searchsorted(chosen0, candidates, side="left")
    fn = np.searchsorted(chosen1, candidates, side="left")
    threshold = float(candidates[int(np.argmax(epsilon_lower_bound(fp, fn, half, confidence, delta)))])
    rest0, rest1 = first[half : 2 * half], second[half : 2 * half]
    false_positives = int(np.count_nonzero(rest0 >= threshold))
    false_negatives = int(np.count_nonzero(rest1 < threshold))
    bound = float(epsilon_lower_bound(false_positives, false_negatives, half, confidence, delta))
    return Distinguished(threshold, half, false_positives, false_negatives, bound)


# Mechanisms ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mechanism:
    """One output of a mechanism on the two inputs: ``a`` (from D) and ``b`` (from D') are the
    noiseless outputs, ``scales`` the claimed noise per coordinate (``noise`` Laplace or Gaussian).
    ``draw(side, trials)`` runs the real mechanism (``side`` 0 for D, 1 for D'); ``clip`` the bounds
    of a clamped output (a mean)."""

    name: str
    a: np.ndarray
    b: np.ndarray
    scales: np.ndarray
    noise: Literal["laplace", "gaussian"]
    epsilon: float
    delta: float
    draw: Any
    details: dict[str, Any]
    clip: tuple[float, float] | None = None
    ratio: tuple[np.ndarray, np.ndarray] | None = None  # a mean: (sum, count) on D and on D'


def _numpy_draws(
    mechanism: Mechanism, side: int, trials: int, rng: np.random.Generator, factor: float
) -> np.ndarray:
    """``trials`` outputs of the claimed mechanism on one side, noise scaled by ``factor`` (1: as
    claimed; the tests' broken mechanism halves it)."""
    scales = mechanism.scales * factor
    shape = (trials, len(scales))
    noise = (
        rng.laplace(0.0, scales, shape) if mechanism.noise == "laplace" else rng.normal(0.0, scales, shape)
    )
    if mechanism.ratio is not None:  # a mean: noisy sum over noisy count, clamped
        values = mechanism.ratio[side] + noise
        assert mechanism.clip is not None
        return np.clip(values[:, :1] / np.maximum(values[:, 1:], 1.0), *mechanism.clip)
    return (mechanism.b if side else mechanism.a) + noise


def _statistic(mechanism: Mechanism, outputs: np.ndarray) -> np.ndarray:
    a, b = mechanism.a, mechanism.b
    if mechanism.noise == "laplace" and mechanism.ratio is None:
        terms = (np.abs(outputs - a) - np.abs(outputs - b)) / mechanism.scales
        return np.round(np.nansum(terms, axis=1), 9)
    return np.nansum((outputs - (a + b) / 2) * np.sign(b - a), axis=1)


def _dp_noise_step(path: str) -> dict[str, Any]:
    """The dp-noise step of a summary (its ``recipe``) or of a recipe, JSON or YAML."""
    file = Path(path)
    where = spell("recipe")
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"{where}: cannot read {path}: {error.strerror or error}") from None
    content = _json(text, where, path) if file.suffix.lower() == ".json" else _yaml(text, where, path)
    recipe = content.get("recipe", content) if isinstance(content, dict) else None
    steps = recipe.get("steps") if isinstance(recipe, dict) else None
    found = [step for step in steps or [] if isinstance(step, dict) and step.get("method") == "dp-noise"]
    if len(found) != 1:
        what = "no dp-noise step" if not found else f"{len(found)} dp-noise steps"
        raise ConfigError(f"{where}: {path} holds {what}: give the summary or recipe of one dp-noise release")
    return found[0]


def _json(text: str, where: str, path: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as error:
        raise ConfigError(f"{where}: {path} is not valid JSON: {error}") from None


def _yaml(text: str, where: str, path: str) -> Any:
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ConfigError(f"{where}: {path} is not valid YAML: {str(error).splitlines()[0]}") from None


def _column(original: Table, name: str, parameter: str) -> np.ndarray:
    if name not in original.data.columns:
        raise ConfigError(f"{spell(parameter)}: '{name}' is not a column of the original")
    column = original.data.get_column(name)
    if not column.dtype.is_numeric() or column.dtype == pl.Boolean:
        raise ConfigError(f"{spell(parameter)}: '{name}' of the original holds no numbers")
    return column.cast(pl.Float64).fill_null(np.nan).to_numpy().astype(np.float64, copy=True)


def _dp_noise(original: Table, params: DPAuditParams) -> Mechanism:
    """dp-noise as its recipe states it, on the record whose change to the farthest bounds moves the
    output most (see the module docstring)."""
    assert params.recipe is not None
    step = _dp_noise_step(params.recipe)
    bounds: dict[str, tuple[float, float]] = {}
    for item in step.get("bounds") or []:
        name, low, high = str(item).rsplit(":", 2)
        bounds[name.strip()] = (float(low), float(high))
    names = list(step.get("attributes") or bounds)
    absent = [name for name in names if name not in bounds]
    if absent or not names:
        raise ConfigError(
            f"{spell('recipe')}: the dp-noise step gives no bounds for {', '.join(absent) or 'any attribute'}"
        )
    epsilon, budget = float(step["epsilon"]), step.get("budget", "split")
    share = epsilon / len(names) if budget == "split" else epsilon
    lower = np.array([bounds[name][0] for name in names])
    upper = np.array([bounds[name][1] for name in names])
    scales = (upper - lower) / share
    values = np.column_stack([_column(original, name, "recipe") for name in names])
    clamped = np.clip(values, lower, upper)
    to_lower = clamped - lower > upper - clamped
    farthest = np.where(to_lower, lower, upper)
    loss = np.nansum(np.abs(farthest - clamped) / scales, axis=1)
    record = int(np.argmax(loss))
    if params.neighbour == "extreme":
        a, b = lower.astype(np.float64), upper.astype(np.float64)
    else:
        a, b = clamped[record], np.where(np.isnan(clamped[record]), np.nan, farthest[record])
    sides = (values[record] if params.neighbour == "original" else a, b)

    def draw(side: int, trials: int) -> np.ndarray:
        from sdckit.anonymize.base import run_method

        row = original.data[record]
        columns = [
            pl.lit(None if math.isnan(v) else float(v), dtype=pl.Float64).alias(n)
            for n, v in zip(names, sides[side], strict=True)
        ]
        frame = row.with_columns(columns).select(pl.all().gather(np.zeros(trials, dtype=np.int64)))
        table = Table(frame, original.schema, weights=original.weights)
        # the attributes named: by default dp-noise takes the numeric quasi-identifiers, which a valid
        # recipe's bounds name exactly
        chosen = {**{key: step.get(key) for key in ("epsilon", "bounds", "budget")}, "attributes": names}
        released = run_method("dp-noise", table, chosen, Context()).table.data
        return released.select([pl.col(n).cast(pl.Float64) for n in names]).fill_null(np.nan).to_numpy()

    claimed = share * len(names)
    details = {
        "mechanism": "dp-noise",
        "attributes": names,
        "record": record if params.neighbour == "original" else None,
        "changed_from": [None if math.isnan(v) else float(v) for v in a],
        "changed_to": [None if math.isnan(v) else float(v) for v in b],
        "scales": scales.tolist(),
    }
    return Mechanism("dp-noise", a, b, scales, "laplace", claimed, 0.0, draw, details)


def _gaussian_scale(sensitivity: float, epsilon: float, delta: float) -> float:
    """The Gaussian scale the query server calibrates (zCDP converted to (ε, δ) by OpenDP, searched
    for sensitivity 1, then scaled): the same search as the server's, written here again."""
    import opendp.prelude as dp

    dp.enable_features("contrib")

    def make(scale: float) -> Any:
        base = dp.m.make_gaussian(
            dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l2_distance(T=float), scale
        )
        return dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(base), delta)

    return float(dp.binary_search_param(make, d_in=1.0, d_out=(epsilon, delta))) * sensitivity


def _query(original: Table, params: DPAuditParams) -> Mechanism:
    """The query server's dp answer to one ungrouped count, sum or mean of the original, against
    the original with one record changed (see the module docstring)."""
    assert params.query is not None and params.epsilon is not None
    epsilon, delta, query = params.epsilon, params.delta, params.query
    n = original.n_records
    if n < 2:
        raise ConfigError("dp-audit needs an original of at least 2 records")
    low, high = (_bounds(params.bounds) if params.bounds is not None else None) or (0.0, 0.0)
    present = np.zeros(0)
    if query != "count":
        assert params.attribute is not None
        present = np.clip(_column(original, params.attribute, "attribute"), low, high)
        present = present[~np.isnan(present)]
        if len(present) == 0:
            raise ConfigError(f"{spell('attribute')}: '{params.attribute}' has no value in the original")
    m = max(abs(low), abs(high))
    share = epsilon / 2 if query == "mean" else epsilon
    part_delta = None if delta is None else (delta / 2 if query == "mean" else delta)
    sensitivity = 1.0 if query == "count" else max(high - low, m)

    def scale_of(sensitive: float) -> float:
        return sensitive / share if part_delta is None else _gaussian_scale(sensitive, share, part_delta)

    total = float(present.sum())
    if query == "count":
        a, b = np.array([float(n)]), np.array([float(n - 1)])
        stats = ((n, 0, 0.0), (n - 1, 0, 0.0))
    else:
        target = np.where(present - low > high - present, low, high)
        moved = np.abs(target - present)
        leaves = np.zeros(len(present), dtype=bool)
        if query == "sum" and params.neighbour != "extreme":
            leaves = np.abs(present) > moved  # leaving the query set moves the sum more
        record = int(np.argmax(np.where(leaves, np.abs(present), moved)))
        k, value = len(present), float(present[record])
        if params.neighbour == "extreme":
            total_a, total_b = total - value + low, total - value + high
        elif leaves[record]:
            total_a, total_b = total, total - value
        else:
            total_a, total_b = total, total - value + float(target[record])
        gone = int(leaves[record])
        stats = ((n, k, total_a), (n - gone, k - gone, total_b))
        a, b = np.array([total_a]), np.array([total_b])
    scales = np.array([scale_of(sensitivity)])
    ratio, clip = None, None
    if query == "mean":
        k = len(present)
        ratio = (np.array([total, k]), np.array([total_b, k]))
        scales = np.array([scale_of(sensitivity), scale_of(1.0)])
        a = np.array([min(max(total / k, low), high)])
        b = np.array([min(max(total_b / k, low), high)])
        clip = (low, high)

    def draw(side: int, trials: int) -> np.ndarray:
        from sdckit.query.dp import aggregate
        from sdckit.query.engine import GroupStats

        count, kept, summed = stats[side]
        groups = [GroupStats(key={}, n=count, m=kept, s=summed)] * trials
        bounds = None if query == "count" else (low, high)
        values = aggregate(query, groups, False, bounds, epsilon, delta)()
        return np.asarray(values, dtype=np.float64).reshape(-1, 1)

    details = {
        "mechanism": f"query server {query}",
        "attribute": params.attribute,
        "answer_on_original": float(a[0]),
        "answer_on_neighbour": float(b[0]),
        "scales": scales.tolist(),
        "noise": "laplace" if delta is None else "gaussian",
    }
    noise: Literal["laplace", "gaussian"] = "laplace" if delta is None else "gaussian"
    return Mechanism(f"query {query}", a, b, scales, noise, epsilon, delta or 0.0, draw, details, clip, ratio)


# The attack ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DPAuditResult(AttackResult):
    """An audit's result, whose verdict is ε-based: it fails when the lower bound on ε exceeds the
    claimed ε, and holds otherwise (not refuted by this many trials)."""

    epsilon_lower: float = 0.0
    epsilon_claimed: float = math.inf

    @property
    def verdict(self) -> Literal["holds", "fails"]:
        return "fails" if self.epsilon_lower > self.epsilon_claimed else "holds"


def audit(original: Table, params: DPAuditParams, *, _noise_factor: float = 1.0) -> DPAuditResult:
    """Run the distinguishing test of the mechanism ``params`` names on ``original`` and a neighbour
    (see the module docstring). ``_noise_factor`` scales the noise of the numpy sampler: the tests'
    deliberately broken mechanism (0.5: half the noise), never a user option."""
    if params.recipe is None and params.query is None:
        raise ConfigError(f"dp-audit needs the mechanism: {spell('recipe')} or {spell('query')}")
    mechanism = _dp_noise(original, params) if params.recipe is not None else _query(original, params)
    trials = params.trials
    if params.sampler == "numpy":
        rng = np.random.default_rng(params.seed)
        outputs = [_numpy_draws(mechanism, side, trials, rng, _noise_factor) for side in (0, 1)]
    else:
        outputs = [mechanism.draw(side, trials) for side in (0, 1)]
    first, second = (_statistic(mechanism, output) for output in outputs)
    found = distinguish(first, second, params.confidence, mechanism.delta)
    half = found.trials
    correct = 2 * half - found.false_positives - found.false_negatives
    laplace = mechanism.noise == "laplace"
    pair = float(np.nansum(np.abs(mechanism.b - mechanism.a) / mechanism.scales[: len(mechanism.a)]))
    if mechanism.ratio is not None:
        pair = float(np.sum(np.abs(mechanism.ratio[1] - mechanism.ratio[0]) / mechanism.scales))
    fpr_low, fpr_high = clopper_pearson(found.false_positives, half, params.confidence)
    fnr_low, fnr_high = clopper_pearson(found.false_negatives, half, params.confidence)
    details = {
        **mechanism.details,
        "epsilon_lower_bound": found.epsilon_lower,
        "epsilon_claimed": mechanism.epsilon,
        "delta": mechanism.delta,
        "epsilon_of_pair": pair if laplace else None,
        "threshold": found.threshold,
        "false_positive_rate": {
            "value": found.false_positives / half,
            "ci": [float(fpr_low), float(fpr_high)],
        },
        "false_negative_rate": {
            "value": found.false_negatives / half,
            "ci": [float(fnr_low), float(fnr_high)],
        },
        "trials_per_side": trials,
        "evaluated_per_side": half,
        "accuracy_bound": (math.exp(mechanism.epsilon) + mechanism.delta)
        / (1.0 + math.exp(mechanism.epsilon)),
        "sampler": params.sampler,
    }
    return DPAuditResult(
        name="dp-audit",
        assumes="the mechanism and its claim (ε, δ, bounds), the original data, and which record differs "
        "between two neighbouring inputs; it sees one output and guesses which input made it",
        attack=wilson_rate(correct, 2 * half, params.confidence),
        details=details,
        epsilon_lower=found.epsilon_lower,
        epsilon_claimed=mechanism.epsilon,
    )


def _applies(original: Table, release: Any, control: Any, params: DPAuditParams) -> str | None:
    if not isinstance(original, Table):
        return "it audits the mechanism of a microdata release"
    if params.recipe is None and params.query is None:
        recipe = spell("dp-audit.recipe", "--set dp-audit.recipe=SUMMARY.json")
        return f"it needs the mechanism: the release's summary or recipe ({recipe}) or a query"
    return None


@register_attack(
    "dp-audit",
    DPAuditParams,
    help="Distinguishing test of an ε-DP mechanism: a lower bound on ε from runs on two neighbouring inputs.",
    releases="ε-differentially private releases: dp-noise (its recipe), the query server's dp answers",
    measures="the accuracy of a distinguisher between the mechanism's outputs on two neighbouring inputs, "
    "and the lower bound on ε it proves",
    applies=_applies,
)
def _run(
    original: Table, release: Any, control: Any, params: DPAuditParams, context: Context
) -> AttackResult:
    return audit(original, params)
