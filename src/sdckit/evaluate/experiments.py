"""Reproductions of the experiments of the seed papers.

:func:`targeted_suppression_experiment` is Section 4 of Orooji & Knapp (2019), "Improving
suppression to reduce disclosure risk and enhance data utility": risk-targeted value suppression
against k-anonymity, l-diversity and t-closeness releases, compared by NCP (the paper's Figure 3)
and by the number of records above the risk threshold before and after (its Table 2, Figure 2).
"""

from __future__ import annotations

import dataclasses
import math
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from sdckit.errors import ConfigError, SdcError
from sdckit.hierarchy import Hierarchy, intervals, ordered
from sdckit.risk.combined import RecordRisk, combined_risk
from sdckit.table import Kind, Role, Schema, Table, atomic_write

#: Called with one line of news at each stage.
Say = Callable[[str], None]

#: The text that stands for a missing quasi-identifier value in the generalization-based releases.
MISSING_LABEL = "(missing)"

# Categorical quasi-identifiers with at most this many values get a flat hierarchy (value -> '*').
_FLAT = 12


@dataclasses.dataclass(frozen=True)
class ExperimentResult:
    """The table of the experiment and the risk measurements behind it.

    ``rows`` has one row per release: ``family`` (suppression, full-domain generalization, Mondrian),
    ``method``, ``models``, ``ncp`` (equation 4 of the paper, in [0, 1]), ``high_risk`` (records
    with D > delta in the release), ``suppressed_cells``, ``suppressed_records``, ``classes``,
    ``seconds`` and ``note``. ``risk_before`` is the original data's risk, ``risk_after`` the risk of
    each release by method label.
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
        low, high = float(column.min()), float(column.max())
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
    quasi-identifiers, equal weights) and its records above ``delta`` (the risk re-measured on the
    release, same parameters). A release that cannot satisfy its models is reported with a note.

    Deviation: the generalization-based methods need every quasi-identifier value covered by a
    hierarchy, so missing values are released there as the category :data:`MISSING_LABEL`
    (:func:`generalization_view`); targeted suppression works on the data as it is.
    """
    from sdckit.anonymize.mondrian import mondrian
    from sdckit.anonymize.recoding import full_domain_generalization
    from sdckit.anonymize.suppression import targeted_suppression
    from sdckit.utility import release_ncp

    say = say if say is not None else (lambda message: None)
    table = paper_roles(table, quasi_identifier_threshold)
    quasi_identifiers = tuple(a.name for a in table.schema.with_role(Role.QUASI_IDENTIFIER))
    sensitive = tuple(a.name for a in table.schema.with_role(Role.SENSITIVE))
    risk_parameters = {"alpha": alpha, "epsilon": epsilon, "missing": missing, "weights": weights}
    rows: list[dict[str, Any]] = []
    risk_after: dict[str, RecordRisk] = {}

    say(f"{table.n_records:,} records; quasi-identifiers: {', '.join(quasi_identifiers)}")
    say(f"sensitive: {', '.join(sensitive)}")
    started = time.perf_counter()
    if "targeted-suppression" in methods:
        release = targeted_suppression(table, delta=delta, **risk_parameters, progress=say)
        before = release.search["risk_before"]
        after = release.search["risk_after"]
        # NCP over the paper's quasi-identifiers (the suppressible attributes are a subset of them).
        cells = release.suppressed_cells_per_attribute()
        total = sum(cells.values())
        rows.append(
            {
                "family": "suppression",
                "method": "targeted suppression",
                "models": f"D(r) <= {delta:g} (one round)",
                "ncp": total / (table.n_records * len(quasi_identifiers)) if table.n_records else 0.0,
                "high_risk": release.search["high_risk_after"],
                "suppressed_cells": total,
                "suppressed_records": 0,
                "classes": None,
                "seconds": time.perf_counter() - started,
                "note": "",
            }
        )
        risk_after["targeted suppression"] = after
    else:
        say("measuring the risk of the original records")
        before = combined_risk(table, **risk_parameters)
    rows.insert(
        0,
        {
            "family": "original",
            "method": "original data",
            "models": "",
            "ncp": 0.0,
            "high_risk": before.above(delta),
            "suppressed_cells": 0,
            "suppressed_records": 0,
            "classes": None,
            "seconds": 0.0,
            "note": "",
        },
    )

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
            note = ""
            try:
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
                    if release.heuristic:
                        note = f"greedy search (lattice above {max_nodes:,} nodes)"
                else:
                    release = mondrian(
                        generalizable, models, quasi_identifiers=quasi_identifiers, hierarchies=hierarchies
                    )
            except SdcError as error:
                rows.append(
                    {
                        "family": family,
                        "method": method,
                        "models": ", ".join(model.name for model in models),
                        "ncp": None,
                        "high_risk": None,
                        "suppressed_cells": None,
                        "suppressed_records": None,
                        "classes": None,
                        "seconds": time.perf_counter() - started,
                        "note": str(error),
                    }
                )
                say(f"  not possible: {error}")
                continue
            seconds = time.perf_counter() - started
            released = generalized_value_weights(
                Table(release.table.data, release.table.schema, source=table.source), hierarchies
            )
            after = combined_risk(released, **risk_parameters)
            risk_after[method] = after
            sizes = release.class_sizes()
            rows.append(
                {
                    "family": family,
                    "method": method,
                    "models": ", ".join(model.name for model in models),
                    "ncp": release_ncp(release),
                    "high_risk": after.above(delta),
                    "suppressed_cells": release.n_suppressed_cells,
                    "suppressed_records": release.n_suppressed,
                    "classes": int(len(sizes)),
                    "seconds": seconds,
                    "note": note,
                }
            )
            say(
                f"  NCP {rows[-1]['ncp']:.4f}, {rows[-1]['high_risk']:,} records above {delta:g}, "
                f"{seconds:.1f} s"
            )
    frame = pl.DataFrame(
        rows,
        schema={
            "family": pl.String,
            "method": pl.String,
            "models": pl.String,
            "ncp": pl.Float64,
            "high_risk": pl.Int64,
            "suppressed_cells": pl.Int64,
            "suppressed_records": pl.Int64,
            "classes": pl.Int64,
            "seconds": pl.Float64,
            "note": pl.String,
        },
    )
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
        },
    )


def markdown_table(frame: pl.DataFrame) -> str:
    """A polars frame as a GitHub markdown table (numbers rounded for reading)."""
    header = "| " + " | ".join(frame.columns) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    lines = [header, rule]
    for row in frame.iter_rows():
        cells = []
        for value in row:
            if value is None:
                cells.append("")
            elif isinstance(value, float):
                cells.append(f"{value:.4f}" if abs(value) < 1000 else f"{value:,.0f}")
            elif isinstance(value, int):
                cells.append(f"{value:,}")
            else:
                cells.append(str(value).replace("|", "\\|"))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _bar_chart(frame: pl.DataFrame, path: Path, title: str) -> None:
    from sdckit.evaluate.plots import pyplot, save_figure

    plt = pyplot()

    shown = frame.filter(pl.col("ncp").is_not_null() & (pl.col("family") != "original"))
    colors = {"suppression": "tab:green", "full-domain generalization": "tab:blue", "Mondrian": "tab:orange"}
    labels = [method.split(": ", 1)[-1] for method in shown.get_column("method").to_list()]
    families = shown.get_column("family").to_list()
    values = [100 * v for v in shown.get_column("ncp").to_list()]
    from matplotlib.patches import Patch

    figure, axis = plt.subplots(figsize=(max(6.0, 0.55 * len(values) + 2), 4.5))
    bars = axis.bar(range(len(values)), values, color=[colors.get(f, "grey") for f in families])
    # Values on the bars: the smallest losses would not be visible otherwise.
    axis.bar_label(bars, labels=[f"{v:.2f}" if v < 10 else f"{v:.0f}" for v in values], fontsize=7, padding=2)
    axis.set_xticks(range(len(values)), labels, rotation=60, ha="right", fontsize=8)
    axis.set_ylabel("information loss NCP (%)")
    axis.set_title(title, fontsize=10)
    handles = [Patch(color=color, label=family) for family, color in colors.items() if family in families]
    axis.legend(handles=handles, fontsize=8)
    figure.tight_layout()
    save_figure(figure, path, dpi=120)


def write_experiment(
    result: ExperimentResult, directory: str | os.PathLike, name: str = "data"
) -> dict[str, Path]:
    """Write the table (CSV and markdown), the NCP bar chart (the paper's Figure 3) and the risk
    histogram before/after targeted suppression (Figure 2) into ``directory``; return the paths."""
    from sdckit.evaluate.plots import risk_histogram

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
        "method", "ncp %", "high_risk", "suppressed_cells", "suppressed_records", "classes", "seconds", "note"
    )
    text = (
        f"# Targeted suppression vs. privacy models on {name}\n\n"
        f"{result.parameters['records']:,} records; delta {result.delta:g}; quasi-identifiers (public "
        f"probability > 0.01): {', '.join(result.quasi_identifiers)}; sensitive: "
        f"{', '.join(result.sensitive)}.\n\n" + markdown_table(shown)
    )
    with atomic_write(paths["markdown"]) as temporary:
        Path(temporary).write_text(text)
    _bar_chart(result.rows, paths["ncp_chart"], f"Information loss by method — {name}")
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


def summary_of(result: ExperimentResult) -> dict[str, Any]:
    """The experiment's figures as JSON-ready values."""
    return {
        "parameters": result.parameters,
        "quasi_identifiers": list(result.quasi_identifiers),
        "sensitive": list(result.sensitive),
        "rows": result.rows.to_dicts(),
    }


# --------------------------------------------------------------------------------------------------
# Improved slicing (Dhaigude & Kumar), Figure 2 and the l-diversity table
# --------------------------------------------------------------------------------------------------

#: The Adult attributes the slicing papers treat as continuous (discretized for the correlation).
ADULT_CONTINUOUS = ("age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week")


def complete_records(table: Table, say: Say | None = None) -> Table:
    """``table`` without the records that miss a value (the slicing papers' preparation of Adult)."""
    frame = table.data.drop_nulls()
    if say is not None:
        say(f"{table.n_records:,} records, {frame.height:,} without a missing value")
    if frame.height == 0:
        raise ConfigError("every record has a missing value: nothing is left to slice")
    return Table(frame, table.schema, source=table.source)


@dataclasses.dataclass(frozen=True)
class SlicingExperiment:
    """The tables of the improved-slicing experiment.

    ``correlation``: per number of columns and method, the mean and standard deviation over the
    seeded runs of the average correlation of the attributes released together (column mean, and
    pair-weighted), and the mean number of columns actually released. ``diversity``: per number of
    columns, method, l and tuple partitioning, whether an l-diverse sliced table was found, its
    buckets and the seconds of the tuple partitioning. ``timing``: the ratio of the two tuple
    partitionings per l. ``average_correlation`` is the mean over the released columns of the mean
    pairwise φ² inside each, a lone column counting 0 (the paper's measure, which falls as lone columns
    appear); ``columns_with_pairs`` leaves lone columns out and ``pair_weighted`` pools every
    within-column pair.
    """

    correlation: pl.DataFrame
    diversity: pl.DataFrame
    timing: pl.DataFrame
    parameters: dict[str, Any]


def _all_columns_correlation(matrix: np.ndarray, names: list[str], columns: list[tuple[str, ...]]) -> float:
    """Mean over the released columns of the mean pairwise φ² inside each, a lone column counting 0:
    the improved-slicing paper's measure, which falls as lone columns appear."""
    index = {name: i for i, name in enumerate(names)}
    scores = []
    for column in columns:
        members = [index[name] for name in column]
        pairs = [matrix[a, b] for x, a in enumerate(members) for b in members[x + 1 :]]
        scores.append(float(np.mean(pairs)) if pairs else 0.0)
    return float(np.mean(scores)) if scores else 0.0


def slicing_experiment(
    table: Table,
    *,
    sensitive: str,
    n_columns: tuple[int, ...] = (2, 3, 4, 5, 6, 7, 8, 9, 10),
    runs: int = 50,
    sensitive_column_size: int = 3,
    beta: int = 2,
    max_labels: int = 2,
    ls: tuple[int, ...] = (2, 3, 4, 5, 6),
    min_bucket_size: int = 250,
    n_bins: int = 10,
    seed: int = 0,
    say: Say | None = None,
) -> SlicingExperiment:
    """Section 3 of Dhaigude & Kumar's improved slicing (Figure 2) on ``table``.

    For every number of columns c in ``n_columns``, ``runs`` seeded runs of each attribute
    partitioning: slicing (PAM k-medoids on 1 - φ² from a random start, Li et al. 2012) and improved
    slicing (overlapping correlation clustering, Jaccard, at most ``max_labels`` columns per
    attribute, at least ``beta`` groups); in both the sensitive column holds ``sensitive`` and the
    ``sensitive_column_size - 1`` attributes most correlated with it (the papers' "at least 3
    attributes in the column containing the SA"). Each run's columns are scored by the average φ²
    of the attributes released together. Then, with the columns of the first run, the tuples are
    partitioned for every l in ``ls`` with buckets of at least ``min_bucket_size`` records, by the
    Mondrian-style split of slicing and by the random halving of improved slicing, and the table
    records whether an l-diverse sliced table was found and how long the partitioning took.

    Deviation: for improved slicing, c counts the sensitive column plus the c - 1 labels given to the
    overlapping clustering of the other attributes; identical or empty labels are merged or dropped,
    so fewer columns may be released (the mean released count is reported).
    """
    from sdckit.anonymize.slicing import (
        _overlapping_columns,
        attribute_correlation,
        column_correlation,
        partition_attributes,
        slice_table,
    )

    say = say if say is not None else (lambda message: None)
    names = [a.name for a in table.schema.attributes if a.role is not Role.IDENTIFIER]
    if sensitive not in names:
        raise ConfigError(
            f"sensitive attribute '{sensitive}' is not a column of the data ({', '.join(names)})"
        )
    numeric = [name for name in names if table.data.schema[name].is_numeric()]
    started = time.perf_counter()
    matrix = attribute_correlation(table.data, names, n_bins=n_bins, numeric=numeric)
    say(f"φ² of {len(names)} attributes in {time.perf_counter() - started:.2f} s")

    correlation_rows = []
    first_columns: dict[tuple[str, int], list[tuple[str, ...]]] = {}
    for c in n_columns:
        for method in ("slicing", "improved slicing"):
            values, with_pairs, pooled, counts = [], [], [], []
            started = time.perf_counter()
            for run in range(runs):
                if method == "slicing":
                    columns = partition_attributes(
                        matrix, names, c, sensitive=sensitive, sensitive_column_size=sensitive_column_size,
                        seed=seed + run,
                    )  # fmt: skip
                else:
                    columns = _overlapping_columns(
                        matrix, names, sensitive, c, sensitive_column_size, beta, max_labels, "jaccard", 10,
                        seed + run,
                    )  # fmt: skip
                if run == 0:
                    first_columns[(method, c)] = columns
                mean, weighted = column_correlation(matrix, names, columns)
                values.append(_all_columns_correlation(matrix, names, columns))
                with_pairs.append(mean)
                pooled.append(weighted)
                counts.append(len(columns))
            correlation_rows.append(
                {
                    "columns": c,
                    "method": method,
                    "runs": runs,
                    "average_correlation": float(np.nanmean(values)),
                    "std": float(np.nanstd(values)),
                    "columns_with_pairs": float(np.nanmean(with_pairs)),
                    "pair_weighted": float(np.nanmean(pooled)),
                    "released_columns": float(np.mean(counts)),
                    "seconds": time.perf_counter() - started,
                }
            )
            say(
                f"c = {c}, {method}: average φ² {correlation_rows[-1]['average_correlation']:.4f} "
                f"± {correlation_rows[-1]['std']:.4f} over {runs} runs"
            )

    diversity_rows = []
    for (method, c), columns in first_columns.items():
        for l in ls:  # noqa: E741
            for partition in ("mondrian", "random-halving"):
                row = {"columns": c, "method": method, "l": l, "partition": partition}
                try:
                    release = slice_table(
                        table, sensitive=sensitive, columns=columns, l=float(l), partition=partition,
                        min_bucket_size=min_bucket_size, n_bins=n_bins, seed=seed, membership=False,
                        method="overlapping-slicing" if method == "improved slicing" else "slicing",
                    )  # fmt: skip
                except ConfigError as error:
                    row.update(satisfied=False, buckets=None, smallest=None, l_achieved=None, seconds=None)
                    row["note"] = str(error).split(":")[0]
                else:
                    row.update(
                        satisfied=True,
                        buckets=release.n_buckets,
                        smallest=release.smallest_bucket,
                        l_achieved=release.l_achieved,
                        seconds=release.timings["tuples"],
                        note="",
                    )
                diversity_rows.append(row)
        satisfied = sorted(
            {r["l"] for r in diversity_rows if r["method"] == method and r["columns"] == c and r["satisfied"]}
        )
        say(f"c = {c}, {method}: l-diverse for l in {satisfied or 'none'}")
    diversity = pl.DataFrame(
        diversity_rows,
        schema={
            "columns": pl.Int64,
            "method": pl.String,
            "l": pl.Int64,
            "partition": pl.String,
            "satisfied": pl.Boolean,
            "buckets": pl.Int64,
            "smallest": pl.Int64,
            "l_achieved": pl.Float64,
            "seconds": pl.Float64,
            "note": pl.String,
        },
    )
    timed = diversity.filter(pl.col("satisfied"))
    timing = (
        timed.group_by("l", "partition")
        .agg(pl.col("seconds").sum().alias("seconds"), pl.len().alias("runs"))
        .pivot(on="partition", index="l", values="seconds")
        .sort("l")
    )
    if {"mondrian", "random-halving"} <= set(timing.columns):
        timing = timing.with_columns(
            (pl.col("random-halving") / pl.col("mondrian")).alias("halving / mondrian")
        )
    return SlicingExperiment(
        correlation=pl.DataFrame(correlation_rows),
        diversity=diversity,
        timing=timing,
        parameters={
            "records": table.n_records,
            "attributes": names,
            "sensitive": sensitive,
            "runs": runs,
            "sensitive_column_size": sensitive_column_size,
            "beta": beta,
            "max_labels": max_labels,
            "min_bucket_size": min_bucket_size,
            "n_bins": n_bins,
            "seed": seed,
        },
    )


def write_slicing_experiment(
    result: SlicingExperiment, directory: str | os.PathLike, name: str = "data"
) -> dict:
    """Write the three tables (CSV and one markdown file) and Figure 2 (average correlation against
    the number of columns, slicing vs improved slicing) into ``directory``; return the paths."""
    from sdckit.evaluate.plots import pyplot, save_figure

    plt = pyplot()

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = {
        "correlation": directory / "correlation.csv",
        "diversity": directory / "diversity.csv",
        "timing": directory / "timing.csv",
        "markdown": directory / "results.md",
        "figure": directory / "figure2.png",
    }
    for key in ("correlation", "diversity", "timing"):
        with atomic_write(paths[key]) as temporary:
            getattr(result, key).write_csv(temporary)
    satisfied = (
        result.diversity.group_by("columns", "method")
        .agg(
            pl.col("l")
            .filter(pl.col("satisfied"))
            .unique()
            .sort()
            .cast(pl.String)
            .str.join(", ")
            .alias("l-diverse")
        )
        .sort("columns", "method")
    )
    p = result.parameters
    text = (
        f"# Improved slicing vs slicing on {name}\n\n"
        f"{p['records']:,} records, {len(p['attributes'])} attributes, sensitive {p['sensitive']}; "
        f"{p['runs']} seeded runs per point; sensitive column of {p['sensitive_column_size']} attributes; "
        f"beta {p['beta']}, at most {p['max_labels']} columns per attribute; buckets of at least "
        f"{p['min_bucket_size']} records.\n\n"
        "## Average correlation inside the released columns (Figure 2)\n\n"
        + markdown_table(result.correlation)
        + "\n## Which l each configuration satisfies\n\n"
        + markdown_table(satisfied)
        + "\n## Tuple partitioning time (seconds, summed over the configurations that satisfy l)\n\n"
        + markdown_table(result.timing)
    )
    with atomic_write(paths["markdown"]) as temporary:
        Path(temporary).write_text(text)
    figure, axis = plt.subplots(figsize=(6.0, 4.0))
    for method, marker in (("slicing", "o"), ("improved slicing", "s")):
        rows = result.correlation.filter(pl.col("method") == method).sort("columns")
        axis.errorbar(
            rows["columns"].to_list(), rows["average_correlation"].to_list(), yerr=rows["std"].to_list(),
            marker=marker, capsize=3, label=method,
        )  # fmt: skip
    axis.set_xlabel("number of columns")
    axis.set_ylabel("average φ² inside the released columns")
    axis.set_title(f"Figure 2 — {name}", fontsize=10)
    axis.legend()
    figure.tight_layout()
    save_figure(figure, paths["figure"], dpi=120)
    return paths


# --------------------------------------------------------------------------------------------------
# Quasi-sensitive set-valued attributes (Shi, Xiong & Fung), Figures 5 and 6
# --------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class QuasiSensitiveExperiment:
    """Figure 5 (removal cost of the adaptive search against the baseline DFS for varying l and c,
    QS (c,l)-diversity) and Figure 6 (removal cost and generalization loss for varying t and k, QS
    t-closeness by the two phases) of Shi, Xiong & Fung (2010), as polars frames."""

    figure5: pl.DataFrame
    figure6: pl.DataFrame
    parameters: dict[str, Any]


def quasi_sensitive_experiment(
    *,
    n_records: int = 3000,
    run_time_limit: float = 10.0,
    ls: tuple[int, ...] = (10, 20, 30, 40, 50),
    cs: tuple[float, ...] = (0.5, 1.0, 1.5, 2.0),
    ts: tuple[float, ...] = (0.2, 0.3, 0.4, 0.5, 0.6),
    ks: tuple[int, ...] = (1, 2, 5, 10, 25, 50),
    seed: int = 0,
    say: Say | None = None,
) -> tuple[QuasiSensitiveExperiment, Table, Any]:
    """Section 3 of Shi et al. on the paper's setup (:func:`sdckit.anonymize.quasi_sensitive.
    synthesize_experiment_data`: Adult's 8 quasi-identifiers, 9 terms per record, 3,000 labels with
    Poisson(100) item sets; seeded), each run's phase 2 bounded by ``run_time_limit`` seconds (the
    paper's 10 s). Figure 5 uses k = 5 and the paper's defaults c = 1, l = 30 for the parameter not
    varied. Returns the frames, the data and the knowledge (so that they can be written beside)."""
    from sdckit.anonymize.quasi_sensitive import figure5, figure6, synthesize_experiment_data

    say = say if say is not None else (lambda message: None)
    started = time.perf_counter()
    table, knowledge = synthesize_experiment_data(n_records, seed=seed)
    seconds = time.perf_counter() - started
    say(f"{table.n_records:,} records and {len(knowledge.labels):,} labels in {seconds:.1f} s")
    five = figure5(table, knowledge, ls=ls, cs=cs, run_time_limit=run_time_limit, progress=say)
    six = figure6(table, knowledge, ts=ts, ks=ks, run_time_limit=run_time_limit, progress=say)
    parameters = {
        "records": table.n_records,
        "labels": len(knowledge.labels),
        "run_time_limit": run_time_limit,
        "ls": list(ls),
        "cs": list(cs),
        "ts": list(ts),
        "ks": list(ks),
        "seed": seed,
    }
    return QuasiSensitiveExperiment(five, six, parameters), table, knowledge


def write_quasi_sensitive_experiment(
    result: QuasiSensitiveExperiment,
    directory: str | os.PathLike,
    table: Table | None = None,
    knowledge: Any = None,
) -> dict[str, Path]:
    """Write figure5.csv, figure6.csv, results.md, figure5.png, figure6.png (and the data and the
    knowledge table when given) into ``directory``; return the paths."""
    from sdckit.evaluate.plots import pyplot, save_figure

    plt = pyplot()

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = {
        "figure5_csv": directory / "figure5.csv",
        "figure6_csv": directory / "figure6.csv",
        "markdown": directory / "results.md",
        "figure5": directory / "figure5.png",
        "figure6": directory / "figure6.png",
    }
    for key, frame in (("figure5_csv", result.figure5), ("figure6_csv", result.figure6)):
        with atomic_write(paths[key]) as temporary:
            frame.write_csv(temporary)
    p = result.parameters
    text = (
        f"# Quasi-sensitive attributes: QS suppression (Shi, Xiong & Fung 2010)\n\n"
        f"{p['records']:,} records, {p['labels']:,} knowledge labels; phase 2 bounded by "
        f"{p['run_time_limit']:g} s per run.\n\n## Figure 5: removal cost T, adaptive vs baseline DFS "
        "(QS (c,l)-diversity, k = 5)\n\n"
        + markdown_table(result.figure5)
        + "\n## Figure 6: removal cost and generalization loss (QS t-closeness, adaptive)\n\n"
        + markdown_table(result.figure6)
    )
    with atomic_write(paths["markdown"]) as temporary:
        Path(temporary).write_text(text)

    figure, axes = plt.subplots(1, 2, figsize=(10.0, 4.0))
    for axis, parameter, label in ((axes[0], "l", "l (c = 1)"), (axes[1], "c", "c (l = 30)")):
        rows = result.figure5.filter(pl.col("parameter") == parameter)
        for strategy, marker in (("adaptive", "o"), ("baseline", "s")):
            part = rows.filter(pl.col("strategy") == strategy).sort("value")
            axis.plot(part["value"].to_list(), part["removal_cost"].to_list(), marker=marker, label=strategy)
        axis.set_xlabel(label)
        axis.set_ylabel("removal cost T")
        axis.legend()
    figure.suptitle("Figure 5 — QS suppression for QS (c,l)-diversity", fontsize=10)
    figure.tight_layout()
    save_figure(figure, paths["figure5"], dpi=120)

    figure, axes = plt.subplots(1, 2, figsize=(10.0, 4.0))
    for k in sorted(set(result.figure6["k"].to_list())):
        part = result.figure6.filter(pl.col("k") == k).sort("t")
        axes[0].plot(
            part["t_squared"].to_list(), part["removal_cost"].to_list(), marker="o", label=f"k = {k}"
        )
        axes[1].plot(
            part["t_squared"].to_list(), part["generalization_ncp"].to_list(), marker="o", label=f"k = {k}"
        )
    axes[0].set_ylabel("removal cost T")
    axes[1].set_ylabel("generalization loss (NCP)")
    for axis in axes:
        axis.set_xlabel("t²")
        axis.legend(fontsize=7)
    figure.suptitle("Figure 6 — QI generalization and QS suppression for QS t-closeness", fontsize=10)
    figure.tight_layout()
    save_figure(figure, paths["figure6"], dpi=120)

    if table is not None:
        paths["data"] = directory / "data.csv"
        with atomic_write(paths["data"]) as temporary:
            table.data.write_csv(temporary)
    if knowledge is not None:
        paths["knowledge"] = directory / "knowledge.csv"
        frame = pl.DataFrame({"label": list(knowledge.labels), "items": knowledge.sets.to_column()})
        with atomic_write(paths["knowledge"]) as temporary:
            frame.write_csv(temporary)
    return paths
