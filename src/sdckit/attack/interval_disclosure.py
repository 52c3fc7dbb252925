"""Interval disclosure of masked numeric attributes (sdcMicro's ``dRisk``; Mateo-Sanz, Sebé &
Domingo-Ferrer 2004, "Outlier protection in continuous microdata masking"): the adversary takes each
released value as an estimate of the original and is right when the original lies within ``k``
standard deviations of it.

The adversary holds the release, row-aligned with the original (a microaggregated, noised, swapped or
otherwise masked file whose record ``i`` stands for original record ``i``, as sdcMicro assumes), and
for every attribute the interval ``[x'ᵢ − k·s, x'ᵢ + k·s]`` around the released value ``x'ᵢ``, ``s``
the released attribute's standard deviation. A record is **disclosed** when every attacked attribute's
original value lies in its interval (sdcMicro's ``dRisk``: a missing value on either side never counts
as outside). The attack rate is the share of disclosed records; per attribute, the share of its values
inside (the univariate figures).

**Baseline**: an adversary without the release puts every record's interval around the attribute's
released median (the public marginal), with the same width. There is no control: a row-aligned
masking releases every original record.

Deviation from sdcMicro: ``dRisk`` returns the share alone; here it is a rate with Wilson's interval
over the ``n`` records, and the standard deviation is the sample one (``n − 1``), as R's ``sd``.
"""

from __future__ import annotations

from typing import Annotated, Any

import numpy as np
import polars as pl
from pydantic import Field

from sdckit.attack.base import AttackParams, AttackResult, register_attack, wilson_rate
from sdckit.context import Context
from sdckit.errors import ConfigError
from sdckit.params import Finite, spell
from sdckit.risk.interval import interval_inside
from sdckit.table import Kind, Role, Table


class IntervalDisclosureParams(AttackParams):
    """Interval disclosure of masked numeric attributes (sdcMicro's dRisk)."""

    k: Annotated[
        Finite,
        Field(
            gt=0.0,
            description="Half-width of the interval, in released standard deviations (sdcMicro: 0.05).",
        ),
    ] = 0.05
    attributes: Annotated[
        str | None,
        Field(
            min_length=1,
            description="Attacked numeric attributes, comma-separated (default: every numeric attribute of "
            "the configuration that the release holds, identifiers and weights excepted).",
        ),
    ] = None


def _attacked(original: Table, release: Table, params: IntervalDisclosureParams) -> list[str]:
    if params.attributes is not None:
        names = [name.strip() for name in params.attributes.split(",") if name.strip()]
        for name in names:
            for table, side in ((original, "original"), (release, "release")):
                if name not in table.data.columns:
                    raise ConfigError(f"{spell('attributes')}: '{name}' is not a column of the {side}")
                if not table.data.schema[name].is_numeric():
                    raise ConfigError(f"{spell('attributes')}: '{name}' of the {side} holds no numbers")
        return names
    return [
        attribute.name
        for attribute in original.schema
        if attribute.kind is Kind.NUMERIC
        and attribute.role is not Role.IDENTIFIER
        and attribute.name != original.weights
        and attribute.name in release.data.columns
        and original.data.schema[attribute.name].is_numeric()
        and release.data.schema[attribute.name].is_numeric()
    ]


def _applies(original: Table, release: Any, control: Any, params: IntervalDisclosureParams) -> str | None:
    if not isinstance(release, Table):
        return "it attacks a microdata release"
    if release.n_records != original.n_records:
        return (
            f"the release has {release.n_records:,} records and the original {original.n_records:,}: "
            "interval disclosure needs a release row-aligned with its original"
        )
    if params.attributes is None and not _attacked(original, release, params):
        return "the release holds no numeric attribute of the configuration"
    return None


def _matrix(table: Table, names: list[str]) -> np.ndarray:
    return table.data.select([pl.col(name).cast(pl.Float64) for name in names]).to_numpy()


@register_attack(
    "interval-disclosure",
    IntervalDisclosureParams,
    help="Interval disclosure of masked numeric attributes (sdcMicro's dRisk).",
    releases="row-aligned masked numeric releases: microaggregation, noise, swapping, rounding",
    measures="the share of records whose every attacked original value lies within k released standard "
    "deviations of its released value",
    applies=_applies,
)
def _run(
    original: Table, release: Table, control: Any, params: IntervalDisclosureParams, context: Context
) -> AttackResult:
    names = _attacked(original, release, params)
    truth = _matrix(original, names)
    released = _matrix(release, names)
    outside = ~interval_inside(truth, released, params.k)
    median = np.nanmedian(released, axis=0)
    # the adversary without the release: intervals of the same widths around the released medians
    guessed_outside = ~interval_inside(truth, released, params.k, centre=median)
    n = original.n_records
    disclosed = int(np.count_nonzero(~outside.any(axis=1)))
    guessed = int(np.count_nonzero(~guessed_outside.any(axis=1)))
    per_attribute = {name: float(np.count_nonzero(~outside[:, j]) / n) for j, name in enumerate(names)}
    return AttackResult(
        name="interval-disclosure",
        assumes="the release, row-aligned with the original, and that each released value estimates the "
        "original value of the same record",
        attack=wilson_rate(disclosed, n, params.confidence),
        baseline=wilson_rate(guessed, n, params.confidence),
        max_risk=params.max_risk,
        details={"k": params.k, "attributes": names, "inside_share_by_attribute": per_attribute},
    )
