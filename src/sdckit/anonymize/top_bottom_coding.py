"""Top and bottom coding of a numeric attribute (as sdcMicro's ``topBotCoding``).

Values above ``top`` are replaced by ``top_value`` (default ``top``), values below ``bottom`` by
``bottom_value`` (default ``bottom``); missing values stay missing, and an integer column stays
integer when both replacement values are whole numbers. The coding is a function of each record's
own value, so it re-applies to new data (:mod:`sdckit.anonymize.transform`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

import numpy as np
import polars as pl
from pydantic import Field, model_validator

from sdckit.anonymize._recoding_transform import TOP_BOTTOM_CODING
from sdckit.anonymize.base import register_method, run_method
from sdckit.anonymize.release import Figures, Release
from sdckit.context import Context
from sdckit.errors import ConfigError
from sdckit.params import Finite, MethodParams
from sdckit.table import Table, undescribed_text_hint


class TopBottomCodingParams(MethodParams):
    """Parameters of top and bottom coding (``sdckit anonymize top-bottom-coding``)."""

    attribute: Annotated[str, Field(min_length=1, description="The numeric attribute to code.")]
    bottom: Annotated[Finite | None, Field(description="Values below it are coded.")] = None
    top: Annotated[Finite | None, Field(description="Values above it are coded.")] = None
    bottom_value: Annotated[
        Finite | None, Field(description="What values below --bottom become (default: --bottom).")
    ] = None
    top_value: Annotated[
        Finite | None, Field(description="What values above --top become (default: --top).")
    ] = None

    @model_validator(mode="after")
    def _thresholds(self) -> TopBottomCodingParams:
        if self.bottom is None and self.top is None:
            raise ValueError("needs {bottom} or {top}")
        if self.bottom is not None and self.top is not None and self.bottom > self.top:
            raise ValueError(f"needs {{bottom}} at most {{top}}, got {self.bottom:g} > {self.top:g}")
        if self.bottom_value is not None and self.bottom is None:
            raise ValueError("takes {bottom_value} only with {bottom}")
        if self.top_value is not None and self.top is None:
            raise ValueError("takes {top_value} only with {top}")
        return self


@dataclass(frozen=True)
class TopBottomFigures(Figures):
    """What top and bottom coding decided and did: the replacement values used (defaults filled in:
    ``bottom_value`` is ``bottom`` unless given, likewise ``top_value``) and the records whose value
    was coded."""

    bottom_value: float | None = None
    top_value: float | None = None
    changed_records: int = 0


def top_bottom_coding(
    table: Table,
    attribute: str,
    *,
    bottom: float | None = None,
    top: float | None = None,
    bottom_value: float | None = None,
    top_value: float | None = None,
) -> Release:
    """Top and bottom coding of a numeric attribute (as sdcMicro's ``topBotCoding``).

    Values above ``top`` are replaced by ``top_value`` (default ``top``), values below ``bottom`` by
    ``bottom_value`` (default ``bottom``). Missing values stay missing. The release's figures
    (:class:`TopBottomFigures`) hold the replacement values used and the records coded; its
    ``params`` the parameters (:class:`TopBottomCodingParams`, which states their rules).
    """
    values = {"attribute": attribute, "bottom": bottom, "top": top}
    values |= {"bottom_value": bottom_value, "top_value": top_value}
    return run_method("top-bottom-coding", table, values)


def top_bottom_expression(
    attribute: str,
    bottom: float | None,
    top: float | None,
    bottom_value: float | None,
    top_value: float | None,
    dtype: pl.DataType | None = None,
) -> pl.Expr:
    """The column ``attribute`` with values above ``top`` replaced by ``top_value`` and values below
    ``bottom`` by ``bottom_value`` (a None threshold codes nothing; missing values stay missing), as
    float64, or in the column's integer ``dtype`` when it has one and both replacement values are
    whole numbers (ages stay ages: 29, not 29.0). Shared by :func:`top_bottom_coding` and
    :func:`sdckit.anonymize.transform.apply_transformation` so that both release the same bits."""
    expression = pl.col(attribute).cast(pl.Float64)
    replacements = [value for value in (bottom_value, top_value) if value is not None]
    integral = (
        dtype is not None and dtype.is_integer() and all(float(value).is_integer() for value in replacements)
    )
    # An integer column keeps its values exactly where they are not coded (beyond 2**53 a float would
    # not), and its type.
    coded = pl.col(attribute).cast(dtype) if dtype is not None and integral else expression
    if top is not None:
        replacement = pl.lit(top_value).cast(dtype) if dtype is not None and integral else pl.lit(top_value)
        coded = pl.when(expression > top).then(replacement).otherwise(coded)
    if bottom is not None:
        replacement = (
            pl.lit(bottom_value).cast(dtype) if dtype is not None and integral else pl.lit(bottom_value)
        )
        coded = pl.when(expression < bottom).then(replacement).otherwise(coded)
    return coded.alias(attribute)


def top_bottom_release(
    table: Table,
    attribute: str,
    thresholds: tuple[float | None, float | None, float | None, float | None],
    params: MethodParams,
    figures: Callable[[int], Figures],
) -> Release:
    """The release of top and bottom coding with the replacement values resolved (``thresholds``:
    bottom, top, bottom value, top value), shared by the method and
    :func:`sdckit.anonymize.transform.apply_transformation`: ``params`` is the parameters it carries
    and ``figures(changed_records)`` builds its figures from the number of records coded."""
    bottom, top, bottom_value, top_value = thresholds
    column = table.column(attribute)
    released = table.data.with_columns(
        top_bottom_expression(attribute, bottom, top, bottom_value, top_value, dtype=column.dtype)
    )
    changed = (
        (released.get_column(attribute).cast(pl.Float64) != column.cast(pl.Float64))
        .fill_null(False)
        .to_numpy()
    )
    return Release(
        table=Table(released, table.schema, source=table.source),
        original=table,
        method="top-bottom-coding",
        params=params,
        quasi_identifiers=(attribute,),
        suppressed_records=np.zeros(table.n_records, dtype=bool),
        classes=np.full(table.n_records, -1, dtype=np.int64),
        figures=figures(int(changed.sum())),
    )


def _summary(release: Release) -> dict[str, Any]:
    return {
        "attribute": release.params.attribute,
        "changed_records": release.figures_as(TopBottomFigures).changed_records,
    }


@register_method(
    "top-bottom-coding",
    TopBottomCodingParams,
    summary=_summary,
    help="Top and bottom coding of a numeric attribute (sdcMicro's topBotCoding).",
    report=lambda figures: [f"{figures['attribute']}: {figures['changed_records']:,} values coded"],
    transformation=TOP_BOTTOM_CODING,
    examples={
        "minimal": {"attribute": "Age", "top": 50},
        "replay": {"attribute": "Age", "top": 50, "bottom": 25},
    },
)
def _run(table: Table, params: TopBottomCodingParams, context: Context) -> Release:
    attribute = params.attribute
    if attribute not in table.data.columns:
        raise ConfigError(f"attribute '{attribute}' is not a column of the data")
    column = table.column(attribute)
    if not column.dtype.is_numeric():
        raise ConfigError(
            f"top and bottom coding needs a numeric attribute; '{attribute}' is {column.dtype}"
            f"{undescribed_text_hint(table, attribute)}"
        )
    bottom_value = params.bottom if params.bottom_value is None else params.bottom_value
    top_value = params.top if params.top_value is None else params.top_value
    return top_bottom_release(
        table,
        attribute,
        (params.bottom, params.top, bottom_value, top_value),
        params,
        lambda changed: TopBottomFigures(
            bottom_value=bottom_value, top_value=top_value, changed_records=changed
        ),
    )
