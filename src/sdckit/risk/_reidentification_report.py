"""The terminal report of ``sdckit risk reidentification`` (:mod:`sdckit.risk.reidentification`): the
figures of its summary as text and rich tables."""

from __future__ import annotations

from typing import Any


def _percent(value: float) -> str:
    return f"{value:.2f}%"


def report(figures: dict[str, Any]) -> list[Any]:
    from rich.table import Table as RichTable
    from rich.text import Text

    lines: list[Any] = [
        f"keys: {', '.join(figures['keys'])} ({'weighted' if figures['weighted'] else 'unweighted'}, "
        f"missing values as {figures['missing']})",
        f"expected re-identifications: {figures['expected_reidentifications']:.2f} "
        f"({_percent(figures['global_risk_percent'])} of the records)",
        f"sample uniques: {figures['sample_uniques']:,} ({_percent(figures['sample_uniques_percent'])})",
        "k-anonymity violated by: "
        + ", ".join(
            f"{k}: {v['records']:,} ({_percent(v['percent'])})"
            for k, v in figures["k_anonymity_violations"].items()
        ),
    ]
    if "alpha" in figures:
        lines[0] += f", wildcard matches weighed {figures['alpha']:g}"
    if "max_global_risk" in figures:
        threshold = figures["global_threshold"]
        lines.append(
            f"global threshold for a global risk of at most {figures['max_global_risk']:g}: "
            + (
                "none, the file is within it"
                if threshold is None
                else f"{threshold:.4g} ({figures['records_above_global_threshold']:,} records above it)"
            )
        )
    if figures.get("household"):
        household = figures["household"]
        lines.append(
            f"household risk ({household['attribute']}, {household['households']:,} households): "
            f"{household['expected_reidentifications']:.2f} expected re-identifications "
            f"({_percent(household['global_risk_percent'])})"
        )
    models = RichTable(title=f"attacker models (threshold {figures['prosecutor']['threshold']:g})")
    for column in ("model", "average", "highest", "records at risk"):
        models.add_column(column, justify="left" if column == "model" else "right")
    for name in ("prosecutor", "journalist"):
        model = figures[name]
        models.add_row(
            name,
            f"{model['average']:.4f}",
            f"{model['highest']:.4f}",
            _percent(100 * model["records_at_risk"]),
        )
    models.add_row("marketer", f"{figures['marketer']['average']:.4f}", "", "")
    lines.append(models)
    if figures.get("l_diversity"):
        diversity = RichTable(title="l-diversity of the sensitive attributes (per record)")
        for column in ("attribute", "kind", "min", "median", "mean", "max", "records with l = 1"):
            diversity.add_column(column, justify="left" if column in ("attribute", "kind") else "right")
        for name, values in figures["l_diversity"].items():
            kinds = [("distinct", values)]
            kinds += [(kind, values[kind]) for kind in ("entropy", "recursive") if kind in values]
            for kind, shown in kinds:
                label = f"recursive (c = {shown['c']:g})" if kind == "recursive" else kind
                diversity.add_row(
                    name if kind == "distinct" else "",
                    label,
                    f"{shown['min']:.4g}",
                    f"{shown['median']:.4g}",
                    f"{shown['mean']:.2f}",
                    f"{shown['max']:.4g}",
                    f"{values['records_with_l_1']:,}" if kind == "distinct" else "",
                )
        lines.append(diversity)
    population = figures.get("population_uniqueness")
    if population:
        table = RichTable(
            title=f"population uniques (sampling fraction {population['sampling_fraction']:.4g}, "
            f"population {population['population_size']:,.0f})"
        )
        for column in ("model", "uniques", "share"):
            table.add_column(column, justify="left" if column == "model" else "right")
        for name in ("pitman", "zayatz", "snb", "dankar"):
            entry = population[name]
            label = f"dankar ({entry['model']})" if name == "dankar" else name
            uniques = "—" if entry["uniques"] is None else f"{entry['uniques']:,.1f}"
            share = "—" if entry["share"] is None else f"{100 * entry['share']:.4f}%"
            table.add_row(label, uniques, share)
        lines.append(table)
    if figures["riskiest"]:
        riskiest = RichTable(title="records of highest individual risk")
        shown = ["record", "fk", "Fk", "individual_risk"] + (
            ["household_risk"] if figures.get("household") else []
        )
        # The identifier's value after the record, when the configuration has one
        # (sdckit.risk.identifiers).
        identifier = figures.get("identifier")
        for column in [*shown, "key"]:
            riskiest.add_column(column.replace("_", " "), justify="left" if column == "key" else "right")
            if column == "record" and identifier:
                riskiest.add_column(identifier)
        for row in figures["riskiest"]:
            cells: list[Any] = [f"{row[c]:.4g}" if isinstance(row[c], float) else str(row[c]) for c in shown]
            if identifier:
                cells.insert(1, Text(row["identifier"] or ""))  # as text, not markup
            key = ", ".join(f"{name}={row[name]}" for name in figures["keys"])
            riskiest.add_row(*cells, key)
        lines.append(riskiest)
    return lines
