"""Singling out, anonymeter's first attack (Giomi, Boenisch, Wehmeyer & Tasnádi 2023, "A unified
framework for quantifying privacy risk in synthetic data", PoPETs; the notion: Cohen & Nissim 2020,
"Towards formalizing the GDPR's notion of singling out", PNAS).

The adversary holds the release and writes predicates that isolate exactly one of its records,
betting that each isolates exactly one record of the original too. **Multivariate** (the default): a
release record drawn at random and ``n_cols`` of its attributes drawn at random give one term each —
``== value`` for a categorical attribute, ``>= value`` for a number above the release's median and
``<= value`` otherwise, ``is null`` for a missing value — joined by *and*; predicates are drawn in
batches until ``n_attacks`` distinct ones each match exactly one release record (or ``max_attempts``
were drawn). **Univariate**: a predicate of one attribute — its only missing value, ``<=`` its
minimum, ``>=`` its maximum, ``==`` a value held by one record — taken in a random order while it
isolates one release record. A predicate **succeeds** when it matches exactly one distinct original
record. The attack rate is the share of the ``n_attacks`` requested that succeed (fewer predicates
found count as failures, as anonymeter counts them).

**Baseline**: ``n_attacks`` predicates drawn blind — random attributes (``n_cols``, or one in
univariate mode), for each a random value of the release (missing included) and a random operator
(``==``/``!=`` for a category, any of ``== != > < >= <=`` for a number; a missing value gives ``is
null`` or ``is not null``) — counted the same way on the original. **Control**: the attack's
predicates on the held-out records; when there are not as many distinct held-out as original
records, the count is rescaled by anonymeter's fitted size model (Cohen & Nissim's probability ``P(w,
n)`` integrated over the query weight, fitted on 10 sizes × 40 random subsets of the control):
``n_control · model(n_original) / model(n_control)``, the subsets from ``min(1000, n_control / 2)``
records to all of them. Without a control the risk is the attack rate
(anonymeter's choice too), which counts singling-out any population would allow: hold records out
(``sdckit attack --split``) to see what the release adds.

Every frame is deduplicated first (on the attacked columns), as anonymeter does.

Deviations from anonymeter 1.1:

* the multivariate search also stops after 100 batches of 1,000 predicates in a row that found no
  new one (anonymeter draws on up to ``max_attempts``, 10 million, which on a small or coarse
  release takes hours to find nothing more);
* the rescaled control count is rounded to a whole number of successes (Wilson's interval is taken
  on it; the unrounded figure is in ``details``); the smallest subsets of the size fit hold
  ``min(1000, n_control / 2)`` records, not ``min(1000, n_control)``, so that a control of at most
  1,000 records still spans several sizes (anonymeter then fits its model to one size, and the
  correction is arbitrary); each size is drawn 40 times, not 5 (on Adult's CART release the fit to 5
  draws gives a factor of 0.31 or of 1.06 to 1.23 depending on the draw, to 40 draws 1.13 to 1.19);
  a failed size fit leaves the count as measured (anonymeter raises). anonymeter 1.1 itself counts
  the *queries* (always all of them) instead of the successes at each size (``len`` of
  ``_evaluate_queries``' counts), so its factor depends only on the sizes and the number of
  predicates (0.31 for Adult's 16,293 distinct training and 5,066 distinct held-out records): its
  control rates are lower than these and its risks higher, whenever the control is smaller;
* columns are numeric only when numeric in every frame (a generalized release's labels are
  categories, as anonymeter would see that file as text);
* the random choices come from ``seed`` in another order, so the figures agree in distribution only.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import numpy as np
import polars as pl
from pydantic import Field, model_validator

from sdckit.attack import _mixed
from sdckit.attack._mixed import EQ, GE, ISNULL, LE, NOTNULL
from sdckit.attack.base import AttackParams, AttackResult, register_attack, wilson_rate
from sdckit.context import Context
from sdckit.table import Table

BATCH = 1000
#: Batches in a row that find no new predicate before the search gives up (see the module).
IDLE_BATCHES = 100
#: Random subsets of the control per size in the size fit (anonymeter: 5; see the module).
SIZE_REPEATS = 40


class SinglingOutParams(AttackParams):
    """anonymeter's singling-out attack."""

    n_attacks: Annotated[int, Field(ge=1, description="Predicates to write (anonymeter: 500).")] = 500
    mode: Annotated[
        Literal["multivariate", "univariate"],
        Field(
            description="Predicates of n_cols attributes of a release record, or of one rare attribute value."
        ),
    ] = "multivariate"
    n_cols: Annotated[
        int, Field(ge=1, description="Attributes per predicate in multivariate mode (anonymeter: 3).")
    ] = 3
    max_attempts: Annotated[
        int | None,
        Field(
            ge=1,
            description="Predicates drawn at most in multivariate mode "
            "(anonymeter: 10,000,000; none: no limit).",
        ),
    ] = 10_000_000
    attributes: Annotated[
        str | None,
        Field(
            min_length=1,
            description="Attributes the predicates use, comma-separated (default: every attribute of the "
            "configuration the release holds, identifiers excepted).",
        ),
    ] = None

    @model_validator(mode="after")
    def _univariate_takes_no_width(self) -> SinglingOutParams:
        if self.mode == "univariate":
            unused = [name for name in ("n_cols", "max_attempts") if name in self.model_fields_set]
            if unused:
                raise ValueError(f"{', '.join(unused)} only apply with mode multivariate")
        return self


def _columns(original: Table, release: Table, control: Table | None, params: SinglingOutParams) -> list[str]:
    if params.attributes is None:
        return _mixed.default_columns(original, release)
    names = _mixed.names_list(params.attributes, "attributes")
    _mixed.check_columns(
        names, "attributes", (original, "original"), (release, "release"), (control, "control")
    )
    return names


def _applies(original: Table, release: Any, control: Any, params: SinglingOutParams) -> str | None:
    if not isinstance(release, Table):
        return "it attacks a microdata release"
    width = len(_columns(original, release, control, params))
    if params.mode == "multivariate" and width < params.n_cols:
        return f"predicates of {params.n_cols} attributes need as many attributes, the release holds {width}"
    return None if width else "the release holds no attribute of the configuration"


def _queries(cols: list[list[int]], ops: list[list[int]], vals: list[list[float]], width: int):
    n = len(cols)
    c = np.full((n, width), -1, dtype=np.int64)
    o = np.zeros((n, width), dtype=np.int64)
    v = np.zeros((n, width), dtype=np.float64)
    for i in range(n):
        c[i, : len(cols[i])] = cols[i]
        o[i, : len(ops[i])] = ops[i]
        v[i, : len(vals[i])] = vals[i]
    return c, o, v


def _counts(data: np.ndarray, queries: tuple[np.ndarray, np.ndarray, np.ndarray], rows=None) -> np.ndarray:
    rows = np.arange(data.shape[0], dtype=np.int64) if rows is None else rows
    cols, ops, vals = queries
    if cols.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    return _mixed.count_matches(data, rows, cols, ops, vals, 2)


class _Unique:
    """Distinct predicates that isolate one release record, in the order found, up to ``limit``."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.seen: set[bytes] = set()
        self.kept: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    def add(self, release: np.ndarray, queries: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
        cols, ops, vals = queries
        isolating = np.flatnonzero(_counts(release, queries) == 1)
        for q in isolating:
            if len(self.kept) >= self.limit:
                return
            key = cols[q].tobytes() + ops[q].tobytes() + vals[q].tobytes()
            if key not in self.seen:
                self.seen.add(key)
                self.kept.append((cols[q], ops[q], vals[q]))

    def queries(self, width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if not self.kept:
            return (np.zeros((0, width), np.int64), np.zeros((0, width), np.int64), np.zeros((0, width)))
        return tuple(np.stack([kept[i] for kept in self.kept]) for i in range(3))  # type: ignore[return-value]


def _multivariate(
    release: np.ndarray, numeric: np.ndarray, params: SinglingOutParams, rng: np.random.Generator
):
    n, d = release.shape
    medians = np.array(
        [
            np.nanmedian(release[:, j]) if numeric[j] and not np.isnan(release[:, j]).all() else 0.0
            for j in range(d)
        ]
    )
    found = _Unique(params.n_attacks)
    attempts = idle = 0
    batch = BATCH if params.max_attempts is None else min(BATCH, params.max_attempts)
    while len(found.kept) < params.n_attacks:
        if params.max_attempts is not None and attempts >= params.max_attempts:
            break
        rows = rng.integers(0, n, size=batch)
        cols = np.sort(np.argsort(rng.random((batch, d)), axis=1)[:, : params.n_cols], axis=1)
        vals = release[rows[:, None], cols]
        missing = np.isnan(vals)
        above = vals > medians[cols]
        ops = np.where(numeric[cols], np.where(above, GE, LE), EQ)
        ops = np.where(missing, ISNULL, ops).astype(np.int64)
        vals = np.where(missing, 0.0, vals)
        before = len(found.kept)
        found.add(release, (cols.astype(np.int64), ops, vals))
        attempts += batch
        idle = 0 if len(found.kept) > before else idle + 1
        if idle >= IDLE_BATCHES:
            break
    return found.queries(params.n_cols), attempts


def _univariate(
    release: np.ndarray, numeric: np.ndarray, params: SinglingOutParams, rng: np.random.Generator
):
    cols: list[list[int]] = []
    ops: list[list[int]] = []
    vals: list[list[float]] = []
    for j in range(release.shape[1]):
        column = release[:, j]
        missing = np.isnan(column)
        if missing.sum() == 1:
            cols += [[j]]
            ops += [[ISNULL]]
            vals += [[0.0]]
        present = column[~missing]
        if numeric[j] and present.size:
            cols += [[j], [j]]
            ops += [[LE], [GE]]
            vals += [[float(present.min())], [float(present.max())]]
        values, counts = np.unique(present, return_counts=True)
        for value in values[counts == 1]:
            cols += [[j]]
            ops += [[EQ]]
            vals += [[float(value)]]
    order = rng.permutation(len(cols))
    queries = _queries([cols[i] for i in order], [ops[i] for i in order], [vals[i] for i in order], 1)
    found = _Unique(params.n_attacks)
    found.add(release, queries)
    return found.queries(1), len(cols)


def _baseline(release: np.ndarray, numeric: np.ndarray, width: int, n: int, rng: np.random.Generator):
    d = release.shape[1]
    uniques = [np.unique(release[:, j][~np.isnan(release[:, j])]) for j in range(d)]
    has_missing = np.isnan(release).any(axis=0)
    sizes = np.array([len(u) + int(m) for u, m in zip(uniques, has_missing, strict=True)])
    cols = np.sort(np.argsort(rng.random((n, d)), axis=1)[:, :width], axis=1).astype(np.int64)
    pick = np.floor(rng.random((n, width)) * sizes[cols]).astype(np.int64)
    vals = np.zeros((n, width))
    missing = np.zeros((n, width), dtype=np.bool_)
    for j in range(d):  # per attribute, not per record
        here = cols == j
        chosen = pick[here]
        missing[here] = chosen >= len(uniques[j])
        vals[here] = uniques[j][np.minimum(chosen, max(len(uniques[j]) - 1, 0))] if len(uniques[j]) else 0.0
    operator = np.where(
        numeric[cols], rng.integers(0, 6, size=(n, width)), rng.integers(0, 2, size=(n, width))
    )
    equal = rng.integers(0, 2, size=(n, width)) == 0
    ops = np.where(missing, np.where(equal, ISNULL, NOTNULL), operator).astype(np.int64)
    return cols, ops, np.where(missing, 0.0, vals)


def _model(size, weight, norm):
    # Cohen & Nissim's P(w, n) = n w (1 − w)^(n − 1) integrated over w in [0, weight]
    size = np.asarray(size, dtype=np.float64)
    return norm * (1.0 - (size * weight + 1.0) * (1.0 - weight) ** size) / (size + 1.0)


def _control_rescaled(
    control: np.ndarray, queries, n_original: int, rng: np.random.Generator
) -> tuple[float, float | None]:
    """The control successes and, when the sizes differ, anonymeter's size correction factor."""
    from scipy.optimize import curve_fit

    measured = float(np.count_nonzero(_counts(control, queries) == 1))
    n_control = control.shape[0]
    if n_control == n_original or measured == 0:
        return measured, None
    # every query's matching records once; a subset's count of a query is then a sum over them
    cols, ops, vals = queries
    every = np.arange(n_control, dtype=np.int64)
    totals = _mixed.count_matches(control, every, cols, ops, vals, n_control + 1)
    starts = np.concatenate([[0], np.cumsum(totals)]).astype(np.int64)
    matched = _mixed.match_rows(control, cols, ops, vals, starts)
    owner = np.repeat(np.arange(len(totals)), totals)
    sizes, successes = [], []
    for size in np.linspace(min(1000, n_control // 2), n_control, 10).astype(int):
        for _ in range(SIZE_REPEATS):
            chosen = np.zeros(n_control, dtype=np.bool_)
            chosen[rng.choice(n_control, size=size, replace=False)] = True
            counts = np.bincount(owner, weights=chosen[matched], minlength=len(totals))
            successes.append(np.count_nonzero(counts == 1))
            sizes.append(size)
    guess = 1.0 / max(sizes)
    try:
        fitted, _ = curve_fit(
            _model,
            np.array(sizes, float),
            np.array(successes, float),
            p0=(guess, 1.0 / _model(max(sizes), guess, 1.0)),
            bounds=(0, (1, np.inf)),
        )
    except (RuntimeError, ValueError):
        return measured, None
    factor = float(_model(n_original, *fitted) / _model(n_control, *fitted))
    return measured * factor, factor


def _distinct(table: Table | None, names: list[str]) -> pl.DataFrame | None:
    return None if table is None else table.data.select(names).unique(maintain_order=True)


@register_attack(
    "singling-out",
    SinglingOutParams,
    help="Singling out (anonymeter): predicates that isolate one release record, tried on the original.",
    releases="any microdata release: synthetic, generalized, masked",
    measures="the share of predicates written from the release that isolate exactly one original record",
    applies=_applies,
)
def _run(
    original: Table, release: Table, control: Table | None, params: SinglingOutParams, context: Context
) -> AttackResult:
    names = _columns(original, release, control, params)
    rng = np.random.default_rng(params.seed)
    (ori, rel, ctl), numeric = _mixed.encode(
        names, [_distinct(t, names) for t in (original, release, control)]
    )
    assert ori is not None and rel is not None
    if params.mode == "multivariate":
        queries, drawn = _multivariate(rel, numeric, params, rng)
        width = params.n_cols
    else:
        queries, drawn = _univariate(rel, numeric, params, rng)
        width = 1
    baseline = _baseline(rel, numeric, width, params.n_attacks, rng)
    n = params.n_attacks
    successes = int(np.count_nonzero(_counts(ori, queries) == 1))
    guessed = int(np.count_nonzero(_counts(ori, baseline) == 1))
    details: dict[str, Any] = {
        "mode": params.mode,
        "attributes": names,
        "predicates_found": int(queries[0].shape[0]),
        "predicates_drawn": int(drawn),
        "distinct_records": {"original": int(ori.shape[0]), "release": int(rel.shape[0])},
    }
    control_rate = None
    if ctl is not None:
        count, factor = _control_rescaled(ctl, queries, ori.shape[0], rng)
        details["distinct_records"]["control"] = int(ctl.shape[0])
        details["control_successes"] = count
        details["control_successes_measured"] = int(np.count_nonzero(_counts(ctl, queries) == 1))
        details["control_size_factor"] = factor
        control_rate = wilson_rate(int(min(max(round(count), 0), n)), n, params.confidence)
    return AttackResult(
        name="singling-out",
        assumes="the release, and that a predicate isolating one release record may isolate one original "
        "record (the adversary never sees the original)",
        attack=wilson_rate(successes, n, params.confidence),
        baseline=wilson_rate(guessed, n, params.confidence),
        control=control_rate,
        max_risk=params.max_risk,
        details=details,
    )
