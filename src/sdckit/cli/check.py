"""``sdckit check``: the k-anonymity, l-diversity and t-closeness a table (a release) achieves, and
β-likeness and δ-disclosure privacy when asked."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table as RichTable

from sdckit.cli._common import (
    ConfigOption,
    DataArgument,
    InlineRoles,
    QuasiIdentifiersOption,
    QuietOption,
    Report,
    SamplingWeightOption,
    SensitiveOption,
    SummaryOption,
    finish,
    load_settings,
    stage_json,
    user_errors,
)
from sdckit.cli._outputs import Outputs
from sdckit.cli._scale import ChunkRowsOption, EngineOption, Scale, SchedulerOption, WorkersOption

OriginalOption = Annotated[
    Path | None,
    typer.Option(
        "--original",
        help="The original data DATA is a release of: also report k as an adversary who knows the "
        "original values sees the release (released records covering each record).",
    ),
]

BetaOption = Annotated[float | None, typer.Option("--beta", help="Required beta of beta-likeness.")]
BetaVariantOption = Annotated[str, typer.Option("--beta-variant", help="basic or enhanced beta-likeness.")]
DeltaDisclosureOption = Annotated[
    float | None, typer.Option("--delta-disclosure", help="Required delta of delta-disclosure privacy.")
]
ResearchSubsetOption = Annotated[
    str | None,
    typer.Option(
        "--research-subset",
        help="Column marking the research subset (yes/no) of the population table checked, for "
        "--delta-min/--delta-max and --k-map.",
    ),
]
DeltaMinOption = Annotated[float | None, typer.Option("--delta-min", help="Lower bound of delta-presence.")]
DeltaMaxOption = Annotated[float | None, typer.Option("--delta-max", help="Upper bound of delta-presence.")]
KMapOption = Annotated[int | None, typer.Option("--k-map", help="Required k of k-map.")]
KMapEstimatorOption = Annotated[
    str, typer.Option("--k-map-estimator", help="poisson or zero_truncated_poisson (estimated k-map).")
]
SignificanceOption = Annotated[
    float, typer.Option("--significance-level", help="Significance level of estimated k-map.")
]
SamplingFractionOption = Annotated[
    float | None, typer.Option("--sampling-fraction", help="Sampling fraction n / N of the population.")
]
PopulationSizeOption = Annotated[
    float | None, typer.Option("--population-size", help="Population size N (records of the population).")
]
AverageRiskOption = Annotated[
    float | None, typer.Option("--average-risk", help="Largest average re-identification risk.")
]
HighestRiskOption = Annotated[
    float | None,
    typer.Option(
        "--highest-risk",
        help="ARX's relaxed average risk: highest risk of a record but for --records-at-risk of them.",
    ),
]
RecordsAtRiskOption = Annotated[
    float | None, typer.Option("--records-at-risk", help="Largest share of records above --highest-risk.")
]
AttackerOption = Annotated[
    str,
    typer.Option(
        "--attacker",
        help="Whose average risk: prosecutor, or journalist / marketer (with --research-subset).",
    ),
]
SampleUniquenessOption = Annotated[
    float | None, typer.Option("--sample-uniqueness", help="Largest share of sample uniques.")
]
PopulationUniquenessOption = Annotated[
    float | None,
    typer.Option(
        "--population-uniqueness",
        help="Largest share of population uniques (with --sampling-fraction or --population-size).",
    ),
]
UniquenessModelOption = Annotated[
    str, typer.Option("--uniqueness-model", help="pitman, zayatz, snb or dankar (population uniqueness).")
]
MissingOption = Annotated[
    str | None,
    typer.Option(
        help="How a null (a suppressed value) matches: wildcard (every value, as sdcMicro, local "
        "suppression and risk count) or category; default: the config's risk.missing (wildcard)."
    ),
]


def check(
    data: DataArgument,
    config: ConfigOption = None,
    qi: QuasiIdentifiersOption = None,
    sensitive: SensitiveOption = None,
    weight: SamplingWeightOption = None,
    k: Annotated[int | None, typer.Option("-k", help="Required k of k-anonymity.")] = None,
    l: Annotated[float | None, typer.Option("-l", help="Required l of l-diversity.")] = None,  # noqa: E741
    l_variant: Annotated[
        str, typer.Option("--l-variant", help="distinct, entropy or recursive.")
    ] = "distinct",
    c: Annotated[float, typer.Option("--c", help="c of recursive (c,l)-diversity.")] = 2.0,
    t: Annotated[float | None, typer.Option("-t", help="Required t of t-closeness.")] = None,
    t_distance: Annotated[
        str, typer.Option("--t-distance", help="equal, ordered or hierarchical.")
    ] = "equal",
    beta: BetaOption = None,
    beta_variant: BetaVariantOption = "basic",
    delta_disclosure: DeltaDisclosureOption = None,
    research_subset: ResearchSubsetOption = None,
    delta_min: DeltaMinOption = None,
    delta_max: DeltaMaxOption = None,
    k_map: KMapOption = None,
    k_map_estimator: KMapEstimatorOption = "poisson",
    significance_level: SignificanceOption = 0.01,
    sampling_fraction: SamplingFractionOption = None,
    population_size: PopulationSizeOption = None,
    average_risk: AverageRiskOption = None,
    highest_risk: HighestRiskOption = None,
    records_at_risk: RecordsAtRiskOption = None,
    attacker: AttackerOption = "prosecutor",
    sample_uniqueness: SampleUniquenessOption = None,
    population_uniqueness: PopulationUniquenessOption = None,
    uniqueness_model: UniquenessModelOption = "dankar",
    missing: MissingOption = None,
    original: OriginalOption = None,
    summary: SummaryOption = None,
    show: Annotated[int, typer.Option(help="How many violating classes to list.")] = 10,
    engine: EngineOption = None,
    scheduler: SchedulerOption = None,
    workers: WorkersOption = None,
    chunk_rows: ChunkRowsOption = None,
    quiet: QuietOption = False,
) -> None:
    with user_errors():
        outputs = Outputs([data, config, *([original] if original else [])])
        outputs.file(summary, "--summary", (".json",))
        asked = _asked(k, l, l_variant, c, t, t_distance, beta, beta_variant, delta_disclosure)
        population = (k_map_estimator, significance_level, sampling_fraction, population_size)
        asked.update(_presence(research_subset, delta_min, delta_max, k_map, *population))
        risks = (average_risk, sample_uniqueness, population_uniqueness, uniqueness_model)
        asked.update(_risk(*risks, highest_risk, records_at_risk, attacker))
        _validate(asked)
        settings = load_settings(config, InlineRoles(qi, sensitive, weight))
        treatment = _treatment(settings, missing)
        result = _verdict(Scale(engine, scheduler, workers, chunk_rows), data, settings, asked, treatment)
        report = _header(data, result)
        if not quiet:
            report.add(_achieved(result))
        figures = _with_adversary_view(result, report, settings, data, original, k)
        if result.required:
            verdict_text = "[bold green]satisfied[/]" if result.satisfied else "[bold red]not satisfied[/]"
            report.line(f"required {', '.join(result.required)}: {verdict_text}")
            if show > 0 and result.report.violating().height and not quiet:
                report.add(_violating(result, show))
        stage_json(outputs, summary, figures)
        unmet = None if result.satisfied else f"{data.name} does not satisfy {', '.join(result.failing)}"
        finish(outputs, report, unmet, allowed=True)


def _asked(*values: Any) -> dict[str, Any]:
    """The required models' parameters as the verdict takes them (k, l, l_variant, c, t, t_distance,
    then beta, beta_variant, delta_disclosure), the last three only when given, so that a check
    without them passes the verdict, partitioned or not, what it passed before."""
    names = ("k", "l", "l_variant", "c", "t", "t_distance", "beta", "beta_variant", "delta_disclosure")
    asked = dict(zip(names, values, strict=True))
    if asked["beta"] is None and asked["beta_variant"] == "basic" and asked["delta_disclosure"] is None:
        del asked["beta"], asked["beta_variant"], asked["delta_disclosure"]
    return asked


# The command's help (its docstring, set here to keep the command's body short).
check.__doc__ = CHECK_HELP = """Achieved k-anonymity, l-diversity and t-closeness of a table (β-likeness and
δ-disclosure privacy with --beta and --delta-disclosure, δ-presence and k-map with --delta-min,
--delta-max and --k-map, average risk, sample and population uniqueness with --average-risk,
--sample-uniqueness and --population-uniqueness), and its violating classes.

The table is read as a release (Config.read_release): identifiers the release dropped are not
needed, the delimiter is found, and generalized values such as 20-29, {a,b} or '*' are classes as
written. A null matches every value by default (--missing wildcard, as risk counts; only
k-anonymity is then checked when the quasi-identifiers hold nulls); --missing category makes it
a value of its own. -q prints the verdict alone (no tables, no progress).
With --original, k is also reported as an adversary who knows the original values sees the
release: the fewest released records whose values cover a record's quasi-identifiers.
Without a required model the achieved values are reported with nothing required; with one,
exit status 3 says that a required model is not satisfied (the --summary is written all the same).
"""


def _risk(
    average: Any,
    uniques: Any,
    population: Any,
    model: str,
    highest: Any = None,
    at_risk: Any = None,
    attacker: str = "prosecutor",
) -> dict[str, Any]:
    """The risk-based models' parameters as the verdict takes them (``risk``), only those given."""
    given = dict(average_risk=average, sample_uniqueness=uniques, population_uniqueness=population)
    given.update(highest_risk=highest, records_at_risk=at_risk)
    chosen = {name: value for name, value in given.items() if value is not None}
    if model != "dankar":
        chosen["uniqueness_model"] = model
    if attacker != "prosecutor":
        chosen["attacker"] = attacker
    return {"risk": chosen} if chosen else {}


def _presence(*values: Any) -> dict[str, Any]:
    """δ-presence and k-map's parameters as the verdict takes them (``presence``: research_subset,
    delta_min, delta_max, k_map, k_map_estimator, significance_level, sampling_fraction,
    population_size), only those given (none when neither model is asked)."""
    names = ("research_subset", "delta_min", "delta_max", "k_map", "k_map_estimator", "significance_level")
    given = dict(zip((*names, "sampling_fraction", "population_size"), values, strict=True))
    defaults = {"k_map_estimator": "poisson", "significance_level": 0.01}
    chosen = {
        name: value for name, value in given.items() if value is not None and defaults.get(name) != value
    }
    return {"presence": chosen} if chosen else {}


def _treatment(settings: Any, missing: str | None) -> str:
    """How nulls match: --missing, else the configuration's risk.missing."""
    from sdckit.errors import ConfigError

    treatment = settings.risk.missing if missing is None else missing
    if treatment not in ("wildcard", "category"):
        raise ConfigError(f"--missing must be wildcard or category, got {treatment!r}")
    return treatment


def _header(data: Path, result: Any) -> Report:
    """The report's first line: records, classes, quasi-identifiers and how nulls matched."""
    checked = result.report
    report = Report()
    report.line(
        f"[bold]{data.name}[/]: {checked.n_records:,} records, {checked.n_classes:,} equivalence classes "
        f"on {', '.join(result.quasi_identifiers)} (nulls as {result.missing})"
    )
    return report


def _verdict(scale: Scale, data: Path, settings, asked: dict, missing: str):
    """The verdict on the file read whole, or on its partitions when asked for or too large."""
    from sdckit.models.check import verdict
    from sdckit.scale.methods import check as check_partitions

    scale.check("check", covered=True)
    if scale.partitioned(data):
        return scale.run(data, check_partitions, settings, asked, missing, folder=None, progress=None).result
    return verdict(settings.read_release(data), **asked, missing=missing)


def _validate(asked: dict) -> None:
    """-k, -l and -t are validated as the methods validate them (finite, in range, whole l)."""
    from sdckit.params import PrivacyModelParams, option_name

    nested = ("presence", "risk")
    if any(asked.get(name) is not None for name in ("k", "l", "t", "beta", "delta_disclosure", *nested)):
        fields = PrivacyModelParams.model_fields
        flat = {name: value for name, value in asked.items() if name not in nested}
        PrivacyModelParams.parse(
            flat | asked.get("presence", {}) | asked.get("risk", {}),
            spell=lambda name: option_name(name, fields.get(name)),
            method="check",
        )


def _achieved(result) -> RichTable:
    achieved = RichTable(title="Achieved", title_justify="left")
    achieved.add_column("model", justify="left")
    achieved.add_column("achieved", justify="right")
    achieved.add_column("violating classes", justify="right")
    for r in result.report.results:
        violating = f"{int((~r.passes).sum()):,}" if r.model in result.required else "-"
        achieved.add_row(r.model, f"{r.worst():.4g}", violating)
    return achieved


def _count(value: float) -> str:
    """A count as a whole number (sizes are floats only when weighted), other figures to 4 digits."""
    value = float(value)
    return f"{int(value):,}" if value.is_integer() else f"{value:.4g}"


def _violating(result, show: int) -> RichTable:
    """The first ``show`` violating classes: their quasi-identifier values, size and the value of
    each required model (a failing one marked)."""
    checked = result.report
    rows = checked.violating().head(show)
    total = checked.violating().height
    title = f"Violating classes ({min(show, total):,} of {total:,}; --show sets how many)"
    table = RichTable(title=title, title_justify="left")
    for name in result.quasi_identifiers:
        table.add_column(name)
    size_name = "weight" if checked.weighted else "records"
    table.add_column(size_name, justify="right")
    required = [r.model for r in checked.results if r.model in result.required]
    for model in required:
        table.add_column(model, justify="right")
    for row in rows.iter_rows(named=True):
        cells = ["–" if row[name] is None else str(row[name]) for name in result.quasi_identifiers]
        cells.append(_count(row["size"]))
        for model in required:
            mark = "" if row[f"{model} passes"] else " ✗"
            cells.append(_count(row[f"{model} achieved"]) + mark)
        table.add_row(*cells)
    return table


def _with_adversary_view(result, report: Report, settings, data: Path, original: Path | None, k) -> dict:
    """The figures of the verdict, with k as the adversary sees it when the original is given."""
    figures = result.figures()
    if original is not None:
        figures["as_adversary_sees"] = seen = _as_adversary_sees(settings, data, original, result, k)
        report.line(_seen_line(seen))
    return figures


def _as_adversary_sees(settings, data: Path, original: Path, result, k: int | None) -> dict:
    """k of the release as an adversary who knows the original values sees it: per original record,
    the released records whose quasi-identifier values cover its own (:mod:`sdckit.coverage`)."""
    import numpy as np

    from sdckit.coverage import coverage_counts
    from sdckit.errors import InputError
    from sdckit.risk.combined import schema_hierarchies

    release, known = settings.read_release(data), settings.read(original)
    if known.n_records != release.n_records:
        raise InputError(
            f"{data}: the release has {release.n_records:,} records and {original} {known.n_records:,}: "
            "--original needs the original's records, in the same order"
        )
    counts = coverage_counts(
        known.data,
        release.data,
        result.quasi_identifiers,
        hierarchies=schema_hierarchies(known),
        missing=result.missing,
        where=f"{data}: ",
    )
    seen = {"original": str(original), "k": int(counts.min()) if len(counts) else 0, "records": len(counts)}
    if k is not None:
        seen["required_k"] = k
        seen["records_below_k"] = int(np.count_nonzero(counts < k))
    return seen


def _seen_line(seen: dict) -> str:
    below = (
        f"; {seen['records_below_k']:,} records covered fewer than {seen['required_k']} times"
        if "required_k" in seen
        else ""
    )
    return (
        f"k as an adversary who knows {Path(seen['original']).name} sees it: [bold]{seen['k']:,}[/] "
        f"(fewest released records covering a record's quasi-identifiers){below}"
    )
