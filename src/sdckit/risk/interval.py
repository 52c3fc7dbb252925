"""Interval disclosure of masked numeric attributes: sdcMicro's ``dRisk`` and ``dRiskRMD`` (issue 37,
item 1), ``sdckit risk interval ORIGINAL RELEASE``.

The release is row-aligned with the original (a microaggregated, noised, swapped or rounded file whose
record ``i`` stands for original record ``i``).

``dRisk`` (Mateo-Sanz, Sebé & Domingo-Ferrer 2004): a record is at risk when every chosen attribute's
original value lies within ``k`` standard deviations of the released value, ``[x′ − k·s′, x′ + k·s′]``,
``s′`` the released attribute's standard deviation (R's ``sd``, n − 1); a missing value on either side
never counts as outside (R's ``na.rm`` in ``rowSums``). ``interval_share`` is the share of such records
(sdcMicro's ``dRisk``, default k = 0.05).

``dRiskRMD`` (Templ & Meindl 2008, robust Mahalanobis distances): both files are standardized (each by
its own means and standard deviations, R's ``scale``); ``rmd`` is 0.05 × the robust Mahalanobis
distance of each original record (centre: the column means of the standardized original, 0; scatter:
its Minimum Covariance Determinant estimate), so that records far from the bulk get wider intervals.
A record is at risk (``risk1``) when some attribute's released value lies strictly inside
``(x − k·rmd, x + k·rmd)`` of its standardized original; of those, it stays at risk (``risk2``) when
its released record's nearest other released record (Euclidean, standardized) is farther than ``k2``:
nothing close could be mistaken for it. ``wrisk1`` and ``wrisk2`` weight by ``rmd``: ``|W|·Σ_W rmd / n``
as sdcMicro writes them. Per record: ``rmd`` where at risk, else 0 (``riskvec1``, ``riskvec2``).

Deviations from sdcMicro 5.8.1:

* The MCD scatter is scikit-learn's FAST-MCD (Rousseeuw & Van Driessen 1999; ``seed`` fixes its random
  subsets) where sdcMicro calls robustbase's ``covMcd``, which uses other small-sample correction
  factors: distances, and so the figures, may differ slightly from sdcMicro's on the same data.
* The nearest released record is found with a k-d tree instead of the full ``n × n`` distance matrix
  (the same minimum; sdcMicro's matrix needs 8·n² bytes, 80 GB at 10^5 records).
* A record with a missing value is left out of ``dRiskRMD`` (sdcMicro's ``covMcd`` refuses missing
  values); ``left_out`` counts them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

import numpy as np
import polars as pl
from pydantic import Field

from sdckit._extras import require
from sdckit.context import Context
from sdckit.errors import InputError, location
from sdckit.measures import register_measure
from sdckit.params import Finite, MethodParams, spell
from sdckit.table import Kind, Role, Table
from sdckit.utility.released import choose_attributes, require_columns


def interval_inside(
    truth: np.ndarray, released: np.ndarray, k: float, centre: np.ndarray | None = None
) -> np.ndarray:
    """Per record and attribute, whether the original value lies within ``k`` released standard
    deviations of the released value (or of ``centre``, one value per attribute); a missing value on
    either side counts as inside: sdcMicro's ``dRisk`` never counts it as outside."""
    n = released.shape[0]
    spread = np.nanstd(released, axis=0, ddof=1) if n > 1 else np.zeros(released.shape[1])
    half = k * np.nan_to_num(spread)
    estimate = released if centre is None else centre
    return ~(np.abs(truth - estimate) > half)  # NaN compares False: never outside


def robust_distances(x: np.ndarray, seed: int) -> np.ndarray:
    """sdcMicro's ``rmd`` before its 0.05 factor: the Mahalanobis distance of each row of ``x``
    (already standardized) from the column means, with the MCD scatter of ``x``."""
    require("learn", "sklearn", feature="dRiskRMD (the robust Mahalanobis distances of risk interval)")
    from sklearn.covariance import MinCovDet

    scatter = MinCovDet(random_state=seed).fit(x).covariance_
    centred = x - x.mean(axis=0)
    solved = np.linalg.solve(scatter, centred.T).T
    return np.sqrt(np.maximum((centred * solved).sum(axis=1), 0.0))


def _standardized(x: np.ndarray) -> np.ndarray:
    """R's ``scale``: centred by the column means, divided by the standard deviations (n − 1); a
    constant column stays 0."""
    sd = x.std(axis=0, ddof=1)
    return (x - x.mean(axis=0)) / np.where(sd > 0, sd, 1.0)


def rmd_risk(truth: np.ndarray, released: np.ndarray, k: float, k2: float, seed: int) -> dict[str, Any]:
    """sdcMicro's ``dRiskRMD`` on complete rows (see the module's docstring)."""
    from scipy.spatial import cKDTree

    n = truth.shape[0]
    x, xm = _standardized(truth), _standardized(released)
    rmd = robust_distances(x, seed) * 0.05
    half = (k * rmd)[:, None]
    at_risk = ((xm > x - half) & (xm < x + half)).any(axis=1)
    first = np.flatnonzero(at_risk)
    isolated = np.zeros(n, dtype=bool)
    if len(first) and n > 1:
        nearest, _ = cKDTree(xm).query(xm[first], k=2)
        isolated[first] = nearest[:, 1] > k2
    second = np.flatnonzero(isolated)
    vector1, vector2 = np.where(at_risk, rmd, 0.0), np.where(isolated, rmd, 0.0)
    return {
        "risk1": len(first) / n,
        "risk2": len(second) / n,
        "wrisk1": len(first) * float(rmd[first].sum()) / n,
        "wrisk2": len(second) * float(rmd[second].sum()) / n,
        "riskvec1": vector1,
        "riskvec2": vector2,
    }


class IntervalRiskParams(MethodParams):
    """Parameters of ``sdckit risk interval``."""

    attributes: Annotated[
        str | None,
        Field(
            min_length=1,
            description="Numeric attributes, comma-separated (default: every numeric attribute of the "
            "configuration that is not an identifier).",
        ),
    ] = None
    k: Annotated[
        Finite, Field(gt=0.0, description="dRisk's half-width, in released standard deviations.")
    ] = 0.05
    rmd: Annotated[bool, Field(description="Also dRiskRMD (robust Mahalanobis distances; scikit-learn).")] = (
        False
    )
    rmd_k: Annotated[Finite, Field(gt=0.0, description="dRiskRMD's k: the interval is k·rmd wide.")] = 0.01
    rmd_k2: Annotated[
        Finite, Field(ge=0.0, description="dRiskRMD's k2: nearest released record farther than it.")
    ] = 0.05
    seed: Annotated[int, Field(description="Seed of the MCD's random subsets (dRiskRMD).")] = 0


@dataclass(frozen=True)
class IntervalRisk:
    """The figures of ``sdckit risk interval``: dRisk's share, per attribute the share of values inside
    their interval, and (with ``rmd``) dRiskRMD's."""

    attributes: tuple[str, ...]
    n_records: int
    k: float
    inside: np.ndarray  # per record: every attribute inside (dRisk)
    inside_by_attribute: dict[str, float]
    rmd: dict[str, Any] | None
    rmd_rows: np.ndarray | None  # the complete records dRiskRMD measured
    rmd_params: dict[str, float]

    def summary(self) -> dict[str, Any]:
        figures: dict[str, Any] = {
            "attributes": list(self.attributes),
            "records": self.n_records,
            "k": self.k,
            "interval_share": float(self.inside.mean()) if self.n_records else 0.0,
            "inside_share_by_attribute": self.inside_by_attribute,
        }
        if self.rmd is not None and self.rmd_rows is not None:
            figures["rmd"] = {
                **self.rmd_params,
                **{key: self.rmd[key] for key in ("risk1", "risk2", "wrisk1", "wrisk2")},
                "left_out": self.n_records - len(self.rmd_rows),
            }
        return figures

    def records(self) -> pl.DataFrame:
        columns: dict[str, Any] = {
            "record": np.arange(self.n_records, dtype=np.int64),
            "inside": self.inside,
        }
        if self.rmd is not None and self.rmd_rows is not None:
            for key in ("riskvec1", "riskvec2"):
                full = np.full(self.n_records, np.nan)
                full[self.rmd_rows] = self.rmd[key]
                columns[key] = pl.Series(key, full).fill_nan(None)
        return pl.DataFrame(columns)


def interval_risk(original: Table, release: Table, params: IntervalRiskParams) -> IntervalRisk:
    """dRisk (and dRiskRMD) of ``release`` against ``original`` (see the module's docstring)."""
    roles = (Role.QUASI_IDENTIFIER, Role.SENSITIVE, Role.QUASI_SENSITIVE, Role.INSENSITIVE)
    names = choose_attributes(original, params.attributes, default_roles=roles, kind=Kind.NUMERIC)
    if not names:
        raise InputError(
            f"{location(original.source)}no numeric attribute to measure: "
            f"name them with {spell('attributes')}"
        )
    require_columns(release, names, aligned_with=original)
    matrices = []
    for table in (original, release):
        for name in names:
            if not table.data.schema[name].is_numeric():
                raise InputError(
                    f"{location(table.source, attribute=name)}not numeric (values of type "
                    f"{table.data.schema[name]}): interval disclosure needs numbers"
                )
        matrices.append(table.data.select(pl.col(name).cast(pl.Float64) for name in names).to_numpy())
    truth, released = matrices
    inside = interval_inside(truth, released, params.k)
    n = original.n_records
    by_attribute = {name: float(inside[:, j].mean()) if n else 0.0 for j, name in enumerate(names)}
    rmd, rows = None, None
    if params.rmd:
        rows = np.flatnonzero(~(np.isnan(truth).any(axis=1) | np.isnan(released).any(axis=1)))
        if len(rows) <= len(names):
            raise InputError(
                f"{location(original.source)}dRiskRMD needs more complete records ({len(rows)}) than "
                f"attributes ({len(names)})"
            )
        rmd = rmd_risk(truth[rows], released[rows], params.rmd_k, params.rmd_k2, params.seed)
    return IntervalRisk(
        attributes=tuple(names),
        n_records=n,
        k=params.k,
        inside=np.asarray(inside.all(axis=1), dtype=bool),
        inside_by_attribute=by_attribute,
        rmd=rmd,
        rmd_rows=rows,
        rmd_params={"k": params.rmd_k, "k2": params.rmd_k2, "seed": params.seed},
    )


def _report(figures: dict[str, Any]) -> list[str]:
    lines = [
        f"{', '.join(figures['attributes'])}: {figures['records']:,} records; dRisk (k = {figures['k']:g}): "
        f"{figures['interval_share']:.4g} of the records have every original value within k released "
        "standard deviations of the released value"
    ]
    rmd = figures.get("rmd")
    if rmd:
        shares = ", ".join(f"{key} {rmd[key]:.4g}" for key in ("risk1", "risk2", "wrisk1", "wrisk2"))
        lines.append(
            f"dRiskRMD (k = {rmd['k']:g}, k2 = {rmd['k2']:g}): {shares}"
            + (f" ({rmd['left_out']:,} records with a missing value left out)" if rmd["left_out"] else "")
        )
    return lines


@register_measure(
    "interval",
    "risk",
    IntervalRiskParams,
    summary=lambda result: result.summary(),
    help="Interval disclosure of masked numeric attributes: sdcMicro's dRisk and dRiskRMD.",
    report=_report,
    records=lambda result: result.records(),
    compares=True,
    headline="interval_share",
)
def _run(original: Table, release: Table, params: IntervalRiskParams, context: Context) -> IntervalRisk:
    return interval_risk(original, release, params)
