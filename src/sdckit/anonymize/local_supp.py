"""Suppression of one key's values in the records of high individual risk, as sdcMicro's ``localSupp``.

:func:`risk_suppression` measures every record's individual re-identification risk (sdcMicro's
``indivRisk``, :mod:`sdckit.risk.reidentification`: ``1/f`` without sampling weights, the negative
binomial estimate of ``E[1/F | f]`` with them) and sets to missing the value of one chosen
quasi-identifier (sdcMicro's ``keyVar``) in every record whose risk exceeds ``threshold`` (strictly,
as sdcMicro's ``rk > threshold``). It is one pass, not a search: a record above the threshold may stay
above it (its other keys still single it out), and sdcMicro's advice holds, to run it again with
another key. Under the wildcard treatment a null matches every value, so no record's frequency falls
and no record's risk rises (sdcMicro's test); under the category treatment a null is a value of its
own and the suppressed records form new, possibly small, classes.

Deviations from sdcMicro
------------------------
* The risk is measured with the treatment of nulls of the configuration (``missing``; sdcMicro:
  wildcard, its ``alpha = 1``) and the ``approx`` estimator (sdcMicro's default).
* sdcMicro's ``localSupp`` on a ``freqCalc`` object also re-runs ``freqCalc``; here the summary
  reports the risk before and after, measured the same way.
* sdcMicro counts, and reports, the values that were missing already among its "suppressions" of
  the chosen key (its ``totalSupps``); ``suppressed_cells`` counts only the cells suppressed here.

References
----------
Templ, M. (2008). Statistical disclosure control for microdata using the R-package sdcMicro.
*Transactions on Data Privacy* 1(2), 67-85.

Templ, M. (2017). *Statistical Disclosure Control for Microdata: Methods and Applications in R*.
Springer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any

import numpy as np
import polars as pl
from pydantic import Field

from sdckit.anonymize.base import Context, achieved_report, cells_report, register_method
from sdckit.anonymize.local_suppression import Missing, _resolve_quasi_identifiers
from sdckit.anonymize.release import Figures, Release
from sdckit.errors import ConfigError
from sdckit.params import Finite, MethodParams
from sdckit.table import Role, Table


@dataclass(frozen=True)
class RiskSuppressionFigures(Figures):
    """What a risk suppression found: the records above the threshold before and after, the records
    whose value of the attribute was suppressed (those above it with a value; a value already missing
    is not counted), and the individual risks of every record before and after."""

    above_before: int
    above_after: int
    suppressed_records: int
    weighted: bool
    risk_before: np.ndarray
    risk_after: np.ndarray


def _with_keys(table: Table, names: Sequence[str]) -> Table:
    """``table`` with role quasi-identifier on exactly ``names`` (the risk measure reads the roles) and
    no sensitive or household attribute (their l-diversity and household risk are not needed)."""
    schema = table.schema
    measured_apart = (Role.QUASI_IDENTIFIER, Role.SENSITIVE, Role.HOUSEHOLD)
    for attribute in list(schema):
        if attribute.name in names and attribute.role is not Role.QUASI_IDENTIFIER:
            schema = schema.replace(attribute.name, role=Role.QUASI_IDENTIFIER)
        elif attribute.name not in names and attribute.role in measured_apart:
            schema = schema.replace(attribute.name, role=Role.INSENSITIVE)
    return Table(table.data, schema, source=table.source, weights=table.weights)


def _individual_risk(table: Table, weights: str | None, missing: str) -> np.ndarray:
    from sdckit.risk.reidentification import reidentification_risk

    return reidentification_risk(table, weights=weights, missing=missing).risk


def risk_suppression(
    table: Table,
    attribute: str,
    threshold: float = 0.15,
    *,
    quasi_identifiers: Sequence[str] | None = None,
    weights: str | None = None,
    missing: str = "wildcard",
) -> Release:
    """Set ``attribute`` to missing in every record whose individual risk exceeds ``threshold``.

    The approach of sdcMicro's ``localSupp(obj, threshold, keyVar)``; see the module's docstring for
    the risk and the deviations.

    Parameters
    ----------
    table
        The data; its identifiers are dropped from the release.
    attribute
        The quasi-identifier whose values are suppressed (sdcMicro's ``keyVar``).
    threshold
        Records with individual risk strictly above it lose their value of ``attribute``.
    quasi_identifiers
        The key the risk is measured on. Default: the attributes with role quasi-identifier.
    weights
        The column of sampling weights (default: the table's, if any): the risk is then sdcMicro's
        estimate from ``f`` and ``F``; without weights it is ``1/f``.
    missing
        ``"wildcard"`` (sdcMicro): a null matches every value; ``"category"``: a value of its own.

    Returns
    -------
    Release
        ``method="risk-suppression"``; ``suppressed_cells`` marks the suppressed cells (one column),
        ``figures`` the :class:`RiskSuppressionFigures` (records above the threshold before and
        after, records suppressed, the risks).

    Raises
    ------
    ConfigError
        When ``attribute`` is not one of the quasi-identifiers, or the weights column is absent.

    Examples
    --------
    >>> import polars as pl
    >>> from sdckit.table import Table
    >>> release = risk_suppression(Table.from_frame(pl.DataFrame({"a": [1, 1, 2], "b": [1, 1, 1]})), "a",
    ...     0.6, quasi_identifiers=["a", "b"])
    >>> release.table.data["a"].to_list()
    [1, 1, None]
    """
    params = RiskSuppressionParams.parse(
        {"attribute": attribute, "threshold": threshold, "missing": missing}, method="risk-suppression"
    )
    return _suppress(table, params, quasi_identifiers, weights if weights is not None else table.weights)


def _suppress(
    table: Table, params: RiskSuppressionParams, quasi_identifiers: Sequence[str] | None, weights: str | None
) -> Release:
    if table.n_records == 0:
        raise ConfigError("the data has no records")
    names = _resolve_quasi_identifiers(table, quasi_identifiers)
    if params.attribute not in names:
        raise ConfigError(
            f"attribute must be one of the quasi-identifiers ({', '.join(names)}), got {params.attribute!r}"
        )
    missing = str(params.missing)
    keyed = _with_keys(table, names)
    before = _individual_risk(keyed, weights, missing)
    above = before > params.threshold
    column = table.column(params.attribute)
    hit = above & column.is_not_null().to_numpy()
    released_data = table.data.with_columns(
        pl.when(pl.Series(above)).then(None).otherwise(pl.col(params.attribute)).alias(params.attribute)
    )
    after = _individual_risk(
        Table(released_data, keyed.schema, source=table.source, weights=table.weights), weights, missing
    )
    suppressed = np.zeros((table.n_records, len(names)), dtype=bool)
    suppressed[:, names.index(params.attribute)] = hit
    identifiers = [a.name for a in table.schema.with_role(Role.IDENTIFIER) if a.name in table.data.columns]
    kept_weights = table.weights if table.weights not in identifiers else None
    return Release(
        table=Table(
            released_data.drop(identifiers),
            table.schema.without_identifiers(),
            source=table.source,
            weights=kept_weights,
        ),
        original=table,
        method="risk-suppression",
        params=params,
        quasi_identifiers=tuple(names),
        suppressed_records=np.zeros(table.n_records, dtype=bool),
        classes=np.full(table.n_records, -1, dtype=np.int64),
        figures=RiskSuppressionFigures(
            above_before=int(above.sum()),
            above_after=int((after > params.threshold).sum()),
            suppressed_records=int(hit.sum()),
            weighted=weights is not None,
            risk_before=before,
            risk_after=after,
        ),
        cell_penalty=suppressed.astype(np.float64),
        suppressed_cells=suppressed,
    )


# Registered method ----------------------------------------------------------------------------


class RiskSuppressionParams(MethodParams):
    """Parameters of risk suppression (``sdckit anonymize risk-suppression``)."""

    attribute: Annotated[
        str, Field(min_length=1, description="The quasi-identifier whose values are suppressed (keyVar).")
    ]
    threshold: Annotated[
        Finite,
        Field(ge=0, le=1, description="Records with individual risk above it lose their value."),
    ] = 0.15
    missing: Annotated[
        Missing | None,
        Field(description="How a null matches: wildcard (sdcMicro) or category (default: the config's)."),
    ] = None


def _risk_figures(risk: np.ndarray) -> dict[str, float]:
    """sdcMicro's global figures of the individual risks: their sum, mean and largest value."""
    return {
        "expected_reidentifications": float(risk.sum()),
        "global_risk": float(risk.mean()),
        "max": float(risk.max()),
    }


def _summary(release: Release) -> dict[str, Any]:
    from sdckit.anonymize.base import cell_figures
    from sdckit.utility import release_ncp

    figures = release.figures_as(RiskSuppressionFigures)
    return {
        "attribute": release.params.attribute,
        "threshold": release.params.threshold,
        "missing": release.params.missing,
        "weighted": figures.weighted,
        "records_above_threshold": {"before": figures.above_before, "after": figures.above_after},
        "suppressed_records": figures.suppressed_records,
        "risk_before": _risk_figures(figures.risk_before),
        "risk_after": _risk_figures(figures.risk_after),
        **cell_figures(release),
        "metrics": {"ncp": release_ncp(release)},
    }


def _report(figures: dict[str, Any]) -> list[str]:
    above = figures["records_above_threshold"]
    before, after = figures["risk_before"], figures["risk_after"]
    return [
        *cells_report(figures),
        f"records above {figures['threshold']:g}: {above['before']:,} before, {above['after']:,} after; "
        f"{figures['suppressed_records']:,} lost their {figures['attribute']}",
        f"expected re-identifications: {before['expected_reidentifications']:.4g} before, "
        f"{after['expected_reidentifications']:.4g} after",
        *achieved_report(figures),
    ]


@register_method(
    "risk-suppression",
    RiskSuppressionParams,
    summary=_summary,
    help="Suppress one key's value in the records whose individual risk exceeds a threshold (localSupp).",
    report=_report,
    not_reapplicable="which records it suppresses depends on their risk within the whole data",
    examples={
        "minimal": {"attribute": "Age"},
        "replay": {"attribute": "ZIPCode", "threshold": 0.4},
    },
)
def _run(table: Table, params: RiskSuppressionParams, context: Context) -> Release:
    from sdckit.anonymize.base import config_value, quasi_identifiers

    params = params.model_copy(
        update={"missing": config_value(params.missing, context, "risk", "missing", "wildcard")}
    )
    weights = config_value(None, context, "data", "weights", None) or table.weights
    return _suppress(table, params, quasi_identifiers(table), weights)
