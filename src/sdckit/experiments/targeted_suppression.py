"""Section 4 of Orooji & Knapp (2019), "Improving suppression to reduce disclosure risk and enhance
data utility": risk-targeted value suppression against k-anonymity, l-diversity and t-closeness
releases, compared by NCP (the paper's Figure 3) and by the number of records above the risk threshold
before and after (its Table 2, Figure 2).
"""

from __future__ import annotations

import dataclasses
import math
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
import polars as pl

from sdckit.errors import ConfigError, SdcError
from sdckit.evaluate.plots import risk_histogram
from sdckit.experiments import Say
from sdckit.experiments.charts import markdown_table, ncp_bar_chart
from sdckit.hierarchy import Hierarchy, intervals, ordered
from sdckit.io import atomic_write
from sdckit.risk.combined import RecordRisk, combined_risk
from sdckit.table import Kind, Role, Schema, Table

#: The text that stands for a missing quasi-identifier value in the generalization-based releases.
MISSING_LABEL = "(missing)"

# Categorical quasi-identifiers with at most this many values get a flat hierarchy (value -> '*').
_FLAT = 12


@dataclasses.dataclass(frozen=True)
class ExperimentResult:
    """The table of the experiment and the risk measurements behind it.

    ``rows`` has one row per release: ``family`` (suppression, full-domain generalization, Mondrian),
    ``method``, ``models``, ``ncp`` (equation 4 of the paper, in [0, 1]), ``high_risk`` (original
    records with D > delta against the release, with coverage matching: what an adversary who knows
    their values finds), ``high_risk_as_released`` (records with D > delta when the release is
    measured on its own, its labels as new categories and its nulls as wildcards, as before coverage
    matching), ``mean_risk`` (mean D over the original records, coverage), ``suppressed_cells``,
    ``suppressed_records``, ``classes``, ``seconds`` and ``note``.
    ``risk_before`` is the original data's risk, ``risk_after`` the risk (coverage) of each release by
    method label.
    """

    rows: pl.DataFrame
    delta: float
    quasi_identifiers: tuple[str, ...]
    sensitive: tuple[str, ...]
    risk_before: RecordRisk
    risk_after: dict[str, RecordRisk]
    parameters: dict[str, Any]


def paper_roles(table: Table, threshold: float = 0.01) -> Table:
    """The roles of the paper's Section 4.3: attributes whose public probability exceeds
    ``threshold`` are quasi-identifiers, the others sensitive (identifiers and the rest kept)."""
    attributes = []
    for attribute in table.schema.attributes:
        if attribute.role is Role.IDENTIFIER:
            attributes.append(attribute)
            continue
        role = Role.QUASI_IDENTIFIER if attribute.public_probability > threshold else Role.SENSITIVE
        attributes.append(dataclasses.replace(attribute, role=role))
    schema = Schema(tuple(attributes))
    if not schema.with_role(Role.QUASI_IDENTIFIER):
        raise ConfigError(f"no attribute has a public probability above {threshold}: no quasi-identifiers")
    if not schema.with_role(Role.SENSITIVE):
        raise ConfigError(
            f"every attribute has a public probability above {threshold}: no sensitive attribute"
        )
    return Table(table.data, schema, source=table.source)


def _default_hierarchy(name: str, column: pl.Series, kind: Kind) -> tuple[pl.Series, Hierarchy]:
    """A hierarchy for a quasi-identifier the configuration gives none, and the column it covers.

    Numbers with many distinct values: intervals of about a tenth of the range, merged two at a
    time. Other columns are read as text with missing values as :data:`MISSING_LABEL`: at most
    twelve values go straight to '*'; more are grouped in order four at a time.
    """
    distinct = column.drop_nulls().n_unique()
    if column.dtype.is_numeric() and column.null_count() == 0 and distinct > _FLAT:
        # The bounds of a numeric column without missing values: numbers.
        low, high = float(cast(float, column.min())), float(cast(float, column.max()))
        width = max((high - low) / 10.0, 1e-12)
        magnitude = 10 ** math.floor(math.log10(width))
        width = math.ceil(width / magnitude) * magnitude
        return column, intervals(name, column, width=width, bottom=math.floor(low / width) * width, fanout=2)
    text = column.cast(pl.String).fill_null(MISSING_LABEL)
    if column.dtype.is_numeric():
        values = column.drop_nulls().unique().sort().cast(pl.String).to_list()
        order = values + ([MISSING_LABEL] if column.null_count() else [])
    else:
        order = None
    fanout = max(distinct + 1, 2) if distinct <= _FLAT else 4
    return text, ordered(name, text, order=order, fanout=fanout)


def generalization_view(table: Table) -> tuple[Table, dict[str, Hierarchy]]:
    """The table the generalization-based methods work on, and a hierarchy per quasi-identifier.

    A configured hierarchy is used as it is (its column must then have no missing value); otherwise
    one is built by :func:`_default_hierarchy`, which reads missing values as their own category
    :data:`MISSING_LABEL`, since full-domain generalization and Mondrian need every value covered.
    """
    columns = []
    hierarchies: dict[str, Hierarchy] = {}
    attributes = []
    for attribute in table.schema.attributes:
        if attribute.role is not Role.QUASI_IDENTIFIER:
            attributes.append(attribute)
            continue
        column = table.column(attribute.name)
        if isinstance(attribute.hierarchy, Hierarchy):
            hierarchies[attribute.name] = attribute.hierarchy
            attributes.append(attribute)
            continue
        column, hierarchy = _default_hierarchy(attribute.name, column, attribute.kind)
        columns.append(column.alias(attribute.name))
        hierarchies[attribute.name] = hierarchy
        kind = attribute.kind if column.dtype.is_numeric() else Kind.CATEGORICAL
        attributes.append(dataclasses.replace(attribute, kind=kind, hierarchy=hierarchy))
    data = table.data.with_columns(columns) if columns else table.data
    return Table(data, Schema(tuple(attributes)), source=table.source), hierarchies


def generalized_value_weights(table: Table, hierarchies: dict[str, Hierarchy]) -> Table:
    """``table`` with the sensitivity weights W(v) extended to generalized values, so that the
    combined risk can be measured on a generalized release.

    A value generalized to a hierarchy node discloses only that the value lies under the node, so it
    weighs what is certain: the smallest W(v) of the node's leaves (``'*'`` over Yes/No weighs 0,
    as a suppressed value does). :data:`MISSING_LABEL` weighs 0 like the null it stands for. This is
    an extension: the paper measures risk on suppressed data only.
    """
    attributes = []
    for attribute in table.schema.attributes:
        hierarchy = hierarchies.get(attribute.name)
        if hierarchy is None or attribute.sensitivity == 0:
            attributes.append(attribute)
            continue
        leaves = pl.Series(hierarchy.labels[0], dtype=pl.String)
        leaf_weights = attribute.weights_of_categories(leaves)
        leaf_weights[leaves.to_numpy() == MISSING_LABEL] = 0.0
        weights: dict[str, float] = {}
        for level in range(hierarchy.n_levels):
            node_weights = np.full(len(hierarchy.labels[level]), np.inf)
            np.minimum.at(node_weights, hierarchy.codes[:, level], leaf_weights)
            for label, weight in zip(hierarchy.labels[level], node_weights, strict=True):
                weights.setdefault(label, float(weight) if np.isfinite(weight) else 0.0)
        weights.setdefault("*", 0.0)
        attributes.append(dataclasses.replace(attribute, value_weights=weights, range_weights=()))
    return Table(table.data, Schema(tuple(attributes)), source=table.source)


def _model_sets(
    sensitive: tuple[str, ...],
    ks: tuple[int, ...],
    l: int,  # noqa: E741
    t: float,
) -> list[tuple[str, list]]:
    from sdckit.models import DistinctLDiversity, KAnonymity, TCloseness

    sets: list[tuple[str, list]] = [(f"{k}-anonymity", [KAnonymity(k)]) for k in ks]
    sets.append(
        (f"distinct {l}-diversity", [KAnonymity(min(ks))] + [DistinctLDiversity(s, l) for s in sensitive])
    )
    sets.append((f"{t:g}-closeness", [KAnonymity(min(ks))] + [TCloseness(s, t, "equal") for s in sensitive]))
    return sets


def floor_note(
    table: Table,
    quasi_identifiers: Sequence[str],
    after: RecordRisk,
    delta: float,
    risk_parameters: dict[str, Any],
) -> tuple[str, str]:
    """Why records stay above ``delta`` after targeted suppression, when some must: their *floor*,
    the risk D(r) they keep with every quasi-identifier suppressed (measured as the release is, with
    coverage matching), comes from what an adversary knows without the quasi-identifiers (the empty
    known set weighs each record's sensitive values by 1/n) and no suppression of quasi-identifiers
    lowers it. Returns the table's short note and the sentence said on the spot; ("", "") when no
    record left above ``delta`` is at its floor.

    On a small file the floor is high (1/n is large): the tour's 2,000 records keep 515 records above
    0.01 whatever is suppressed, which read as a method that does nothing (issue 32)."""
    above = after.risk > delta
    if not above.any() or not quasi_identifiers:
        return "", ""
    schema = table.data.schema
    nothing = table.data.with_columns(
        pl.lit(None, dtype=schema[name]).alias(name) for name in quasi_identifiers
    )
    floor = combined_risk(Table(nothing, table.schema), original=table, **risk_parameters).risk
    stuck = above & (floor > delta)
    if not stuck.any():
        return "", ""
    highest = float(floor.max())
    short = f"{int(stuck.sum()):,} at their floor (> {delta:g} with every quasi-identifier suppressed)"
    said = (
        f"{int(stuck.sum()):,} of the {int(above.sum()):,} records above {delta:g} stay above it with "
        "every quasi-identifier suppressed: their risk comes from what is known without the "
        f"quasi-identifiers (a floor up to {highest:.3g} on {table.n_records:,} records), which no "
        f"suppression lowers; with --delta {highest:.3g} or more every record can be brought below it"
    )
    rest = int(above.sum() - stuck.sum())
    if rest:
        said += f"; the other {rest:,} are above their floor: the paper's one round did not bring them below"
    return short, said


def targeted_suppression_experiment(
    table: Table,
    *,
    delta: float = 0.01,
    alpha: float = 100.0,
    epsilon: float = 0.01,
    missing: str = "wildcard",
    weights: str | np.ndarray | None = None,
    quasi_identifier_threshold: float = 0.01,
    ks: tuple[int, ...] = (2, 5, 10, 20),
    l: int = 2,  # noqa: E741
    t: float = 0.2,
    suppression_limit: float = 0.05,
    max_nodes: int = 20_000,
    methods: tuple[str, ...] = ("targeted-suppression", "generalize", "mondrian"),
    say: Say | None = None,
) -> ExperimentResult:
    """Section 4 of Orooji & Knapp (2019): targeted suppression against k-anonymity, l-diversity and
    t-closeness releases, compared by NCP and by the records above ``delta``.

    As in the paper, attributes with public probability above ``quasi_identifier_threshold`` are the
    quasi-identifiers and the others sensitive (:func:`paper_roles`). Targeted suppression runs one
    round of Figure 1 (``delta``, ``alpha``, ``epsilon``, ``missing``). The comparison releases
    (the paper made them with ARX) are k-anonymity for every k in ``ks``, distinct ``l``-diversity and
    ``t``-closeness (equal distance) of every sensitive attribute, each with k = min(ks), from
    full-domain generalization (record suppression up to ``suppression_limit``, the Loss metric; a
    labelled greedy search when the lattice exceeds ``max_nodes`` nodes) and from strict Mondrian.
    Every release is compared with equation (4) of the paper (mean cell NCP over the
    quasi-identifiers, equal weights) and its records above ``delta``: D(r) of every original record
    against the release with coverage matching (:func:`combined_risk` with ``original``; a released
    value covers the values it stands for, ``38-40`` covers 39 and a node its leaves, so a record
    whose values were generalized is matched by every released record whose labels cover its true
    values, and a suppressed cell covers every value while the adversary still knows the true one),
    same parameters. The count as released (labels as categories, nulls as wildcards on both sides,
    the measure before coverage matching) is kept beside it. A release that cannot satisfy its models
    is reported with a note.

    Deviation: the generalization-based methods need every quasi-identifier value covered by a
    hierarchy, so missing values are released there as the category :data:`MISSING_LABEL`
    (:func:`generalization_view`); targeted suppression works on the data as it is.
    """
    say = say if say is not None else (lambda message: None)
    table = paper_roles(table, quasi_identifier_threshold)
    quasi_identifiers = tuple(a.name for a in table.schema.with_role(Role.QUASI_IDENTIFIER))
    sensitive = tuple(a.name for a in table.schema.with_role(Role.SENSITIVE))
    risk_parameters: dict[str, Any] = {
        "alpha": alpha,
        "epsilon": epsilon,
        "missing": missing,
        "weights": weights,
    }
    rows: list[dict[str, Any]] = []
    risk_after: dict[str, RecordRisk] = {}

    say(f"{table.n_records:,} records; quasi-identifiers: {', '.join(quasi_identifiers)}")
    say(f"sensitive: {', '.join(sensitive)}")
    if "targeted-suppression" in methods:
        row, before, after = _targeted_row(table, quasi_identifiers, delta, risk_parameters, say)
        rows.append(row)
        risk_after["targeted suppression"] = after
    else:
        say("measuring the risk of the original records")
        before = combined_risk(table, **risk_parameters)
    rows.insert(0, _original_row(before, delta))

    generalizable, hierarchies = generalization_view(table)
    for family, run in (
        ("full-domain generalization", "generalize"),
        ("Mondrian", "mondrian"),
    ):
        if run not in methods:
            continue
        for label, models in _model_sets(sensitive, ks, l, t):
            method = f"{family}: {label}"
            say(f"{method} ...")
            started = time.perf_counter()
            try:
                release, note = _comparison_release(
                    run, generalizable, models, quasi_identifiers, hierarchies, suppression_limit, max_nodes
                )
            except SdcError as error:
                rows.append(_failed_row(family, method, models, time.perf_counter() - started, str(error)))
                say(f"  not possible: {error}")
                continue
            seconds = time.perf_counter() - started
            row, after = _comparison_row(
                family, method, models, release, table, hierarchies, delta, risk_parameters, seconds, note
            )
            rows.append(row)
            risk_after[method] = after
            say(
                f"  NCP {row['ncp']:.4f}, {row['high_risk']:,} records above {delta:g} "
                f"({row['high_risk_as_released']:,} as released), {seconds:.1f} s"
            )
    frame = pl.DataFrame(rows, schema=_ROW_SCHEMA)
    return ExperimentResult(
        rows=frame,
        delta=float(delta),
        quasi_identifiers=quasi_identifiers,
        sensitive=sensitive,
        risk_before=before,
        risk_after=risk_after,
        parameters={
            "delta": delta,
            "alpha": alpha,
            "epsilon": epsilon,
            "missing": missing,
            "ks": list(ks),
            "l": l,
            "t": t,
            "suppression_limit": suppression_limit,
            "max_nodes": max_nodes,
            "records": table.n_records,
            "matching": "coverage",
        },
    )


#: The columns of the experiment's table (:attr:`ExperimentResult.rows`).
_ROW_SCHEMA = {
    "family": pl.String,
    "method": pl.String,
    "models": pl.String,
    "ncp": pl.Float64,
    "high_risk": pl.Int64,
    "high_risk_as_released": pl.Int64,
    "mean_risk": pl.Float64,
    "suppressed_cells": pl.Int64,
    "suppressed_records": pl.Int64,
    "classes": pl.Int64,
    "seconds": pl.Float64,
    "note": pl.String,
}


def _targeted_row(
    table: Table,
    quasi_identifiers: tuple[str, ...],
    delta: float,
    risk_parameters: dict[str, Any],
    say: Say,
) -> tuple[dict[str, Any], RecordRisk, RecordRisk]:
    """Targeted suppression's row, the original records' risk it measured and the release's risk
    (coverage)."""
    from sdckit.anonymize.targeted_suppression import TargetedSuppressionFigures, targeted_suppression

    started = time.perf_counter()
    release = targeted_suppression(table, delta=delta, **risk_parameters, progress=say)
    figures = release.figures_as(TargetedSuppressionFigures)
    after = combined_risk(release.table, original=table, **risk_parameters)
    # NCP over the paper's quasi-identifiers (the suppressible attributes are a subset of them).
    cells = release.suppressed_cells_per_attribute()
    total = sum(cells.values())
    note, said = floor_note(table, quasi_identifiers, after, delta, risk_parameters)
    if said:
        say(said)
    row = {
        "family": "suppression",
        "method": "targeted suppression",
        "models": f"D(r) <= {delta:g} (one round)",
        "ncp": total / (table.n_records * len(quasi_identifiers)) if table.n_records else 0.0,
        "high_risk": after.above(delta),
        "high_risk_as_released": figures.high_risk_after,
        "mean_risk": after.summary()["mean_risk"],
        "suppressed_cells": total,
        "suppressed_records": 0,
        "classes": None,
        "seconds": time.perf_counter() - started,
        "note": note,
    }
    return row, figures.risk_before, after


def _original_row(before: RecordRisk, delta: float) -> dict[str, Any]:
    return {
        "family": "original",
        "method": "original data",
        "models": "",
        "ncp": 0.0,
        "high_risk": before.above(delta),
        "high_risk_as_released": before.above(delta),
        "mean_risk": before.summary()["mean_risk"],
        "suppressed_cells": 0,
        "suppressed_records": 0,
        "classes": None,
        "seconds": 0.0,
        "note": "",
    }


def _comparison_release(
    run: str,
    generalizable: Table,
    models: list[Any],
    quasi_identifiers: tuple[str, ...],
    hierarchies: dict[str, Hierarchy],
    suppression_limit: float,
    max_nodes: int,
) -> tuple[Any, str]:
    """A comparison release (``run``: ``generalize`` or ``mondrian``) and its note."""
    from sdckit.anonymize.mondrian import mondrian
    from sdckit.anonymize.recoding import full_domain_generalization

    if run == "generalize":
        release = full_domain_generalization(
            generalizable,
            models,
            quasi_identifiers=quasi_identifiers,
            hierarchies=hierarchies,
            suppression_limit=suppression_limit,
            metric="loss",
            max_nodes=max_nodes,
        )
        return release, (f"greedy search (lattice above {max_nodes:,} nodes)" if release.heuristic else "")
    return mondrian(generalizable, models, quasi_identifiers=quasi_identifiers, hierarchies=hierarchies), ""


def _failed_row(family: str, method: str, models: list[Any], seconds: float, note: str) -> dict[str, Any]:
    return {
        "family": family,
        "method": method,
        "models": ", ".join(model.name for model in models),
        "ncp": None,
        "high_risk": None,
        "high_risk_as_released": None,
        "mean_risk": None,
        "suppressed_cells": None,
        "suppressed_records": None,
        "classes": None,
        "seconds": seconds,
        "note": note,
    }


def _comparison_row(
    family: str,
    method: str,
    models: list[Any],
    release: Any,
    table: Table,
    hierarchies: dict[str, Hierarchy],
    delta: float,
    risk_parameters: dict[str, Any],
    seconds: float,
    note: str,
) -> tuple[dict[str, Any], RecordRisk]:
    """A comparison release's row and its risk (coverage)."""
    from sdckit.utility import release_ncp

    released = generalized_value_weights(
        Table(release.table.data, release.table.schema, source=table.source), hierarchies
    )
    after = combined_risk(
        released, original=table, hierarchies=hierarchies, null_label=MISSING_LABEL, **risk_parameters
    )
    as_released = combined_risk(released, **risk_parameters)
    sizes = release.class_sizes()
    row = {
        "family": family,
        "method": method,
        "models": ", ".join(model.name for model in models),
        "ncp": release_ncp(release),
        "high_risk": after.above(delta),
        "high_risk_as_released": as_released.above(delta),
        "mean_risk": after.summary()["mean_risk"],
        "suppressed_cells": release.n_suppressed_cells,
        "suppressed_records": release.n_suppressed,
        "classes": int(len(sizes)),
        "seconds": seconds,
        "note": note,
    }
    return row, after


def write_experiment(
    result: ExperimentResult, directory: str | os.PathLike, name: str = "data"
) -> dict[str, Path]:
    """Write the table (CSV and markdown), the NCP bar chart (the paper's Figure 3) and the risk
    histogram before/after targeted suppression (Figure 2) into ``directory``; return the paths."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = {
        "csv": directory / "results.csv",
        "markdown": directory / "results.md",
        "ncp_chart": directory / "ncp.png",
    }
    with atomic_write(paths["csv"]) as temporary:
        result.rows.write_csv(temporary)
    shown = result.rows.with_columns((pl.col("ncp") * 100).alias("ncp %")).select(
        "method",
        "ncp %",
        "high_risk",
        "high_risk_as_released",
        "mean_risk",
        "suppressed_cells",
        "suppressed_records",
        "classes",
        "seconds",
        "note",
    )
    text = (
        f"# Targeted suppression vs. privacy models on {name}\n\n"
        f"{result.parameters['records']:,} records; delta {result.delta:g}; quasi-identifiers (public "
        f"probability > 0.01): {', '.join(result.quasi_identifiers)}; sensitive: "
        f"{', '.join(result.sensitive)}.\n\n"
        "`high_risk`: original records with D > delta against the release with coverage matching (a "
        "released value covers the values it stands for: what an adversary who knows them finds); "
        "`high_risk_as_released`: the release measured on its own (labels as categories); `mean_risk`: "
        "mean D over the original records, coverage.\n\n" + markdown_table(shown)
    )
    with atomic_write(paths["markdown"]) as temporary:
        Path(temporary).write_text(text)
    ncp_bar_chart(result.rows, paths["ncp_chart"], f"Information loss by method — {name}")
    if "targeted suppression" in result.risk_after:
        paths["risk_histogram"] = directory / "risk.png"
        risk_histogram(
            {
                "original": result.risk_before.risk,
                "after targeted suppression": result.risk_after["targeted suppression"].risk,
            },
            paths["risk_histogram"],
            threshold=result.delta,
            title=f"Record risk before and after targeted suppression — {name}",
        )
    return paths


def summary(result: ExperimentResult, elapsed_seconds: float | None = None) -> dict[str, Any]:
    """The experiment's figures as JSON-ready values (the ``summary.json`` of ``sdckit experiment
    targeted-suppression``): parameters, quasi-identifiers, sensitive attributes, the rows, and the
    elapsed seconds (rounded to milliseconds) when given."""
    figures: dict[str, Any] = {
        "parameters": result.parameters,
        "quasi_identifiers": list(result.quasi_identifiers),
        "sensitive": list(result.sensitive),
        "rows": result.rows.to_dicts(),
    }
    if elapsed_seconds is not None:
        figures["elapsed_seconds"] = round(elapsed_seconds, 3)
    return figures
