"""``sdckit experiment PAPER``: the experiments of the papers sdckit implements (code in
:mod:`sdckit.experiments`). Every table, chart and ``summary.json`` is written into the output folder
at the end, together, or not at all."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table as RichTable

from sdckit.cli._common import Report, finish, in_range, stage_messages, user_errors, whole_numbers
from sdckit.cli._outputs import Outputs
from sdckit.errors import ConfigError
from sdckit.recipes import dumps

app = typer.Typer(help="Reproduce the experiments of the papers sdckit implements.", no_args_is_help=True)

Folder = Annotated[
    Path, typer.Option("--output", "-o", help="Folder for the tables, charts and summary.json.")
]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No progress lines.")]
TARGETED_METHODS = ("targeted-suppression", "generalize", "mondrian")
#: The quasi-sensitive experiment synthesizes this many records at most (9 terms each, from Adult).
MAX_QS_RECORDS = 2_000_000


@app.command("targeted-suppression")
def experiment_targeted_suppression(
    data: Annotated[Path, typer.Option("--data", help="Microdata file: CSV or Parquet.")],
    config: Annotated[
        Path, typer.Option("--config", "-c", help="YAML configuration: public probabilities, weights.")
    ],
    output: Folder,
    delta: Annotated[float, typer.Option("--delta", help="Risk threshold DELTA.")] = 0.01,
    ks: Annotated[
        str, typer.Option("--ks", help="The k of the k-anonymity releases, comma-separated.")
    ] = "2,5,10,20",
    l: Annotated[int, typer.Option("-l", help="l of the distinct l-diversity releases.")] = 2,  # noqa: E741
    t: Annotated[float, typer.Option("-t", help="t of the t-closeness releases (equal distance).")] = 0.2,
    suppression_limit: Annotated[float, typer.Option(help="Record suppression of generalization.")] = 0.05,
    max_nodes: Annotated[
        int, typer.Option(help="Larger lattices are searched greedily (labelled).")
    ] = 20_000,
    methods: Annotated[
        str, typer.Option(help=f"Which to run, comma-separated: {', '.join(TARGETED_METHODS)}.")
    ] = (",".join(TARGETED_METHODS)),
    quiet: Quiet = False,
) -> None:
    """Section 4 of Orooji & Knapp: targeted suppression against k-anonymity, l-diversity and
    t-closeness releases (full-domain generalization and Mondrian), by NCP and high-risk records.

    Quasi-identifiers are the attributes with public probability above 0.01, the others sensitive.
    Writes results.csv, results.md, ncp.png (Figure 3), risk.png (Figure 2) and summary.json.
    """
    from sdckit.config import load_config
    from sdckit.experiments.targeted_suppression import (
        summary,
        targeted_suppression_experiment,
        write_experiment,
    )

    with user_errors():
        k_values = whole_numbers(ks, "--ks", minimum=1, ranges=False)
        chosen = tuple(name.strip() for name in methods.split(",") if name.strip())
        if not chosen or set(chosen) - set(TARGETED_METHODS):
            raise ConfigError(f"--methods must name some of {', '.join(TARGETED_METHODS)}, got {methods!r}")
        in_range(suppression_limit, "--suppression-limit", 0, 1)
        in_range(delta, "--delta", 0, None)
        in_range(t, "-t", 0, 1)
        outputs = Outputs([data, config])
        outputs.directory(output, "--output")
        started = time.perf_counter()
        settings = load_config(config)
        result = targeted_suppression_experiment(
            settings.read(data),
            delta=delta,
            alpha=settings.risk.alpha,
            epsilon=settings.risk.epsilon,
            missing=settings.risk.missing,
            weights=settings.data.weights,
            ks=k_values,
            l=l,
            t=t,
            suppression_limit=suppression_limit,
            max_nodes=max_nodes,
            methods=chosen,
            say=stage_messages(quiet, started),
        )
        figures = summary(result, elapsed_seconds=time.perf_counter() - started)
        write = lambda folder: write_experiment(result, folder, name=data.name)  # noqa: E731
        _finish(outputs, output, _targeted_table(result, delta, data.name), write, figures)


def _targeted_table(result: Any, delta: float, name: str) -> RichTable:
    shown = RichTable(title=f"Targeted suppression vs. privacy models — {name}", title_justify="left")
    columns = ("method", "NCP %", f"records > {delta:g}", "as released", "suppressed cells", "note")
    for column in columns:
        shown.add_column(column, justify="left" if column in ("method", "note") else "right")
    for row in result.rows.iter_rows(named=True):
        shown.add_row(
            row["method"],
            "-" if row["ncp"] is None else f"{100 * row['ncp']:.3f}",
            "-" if row["high_risk"] is None else f"{row['high_risk']:,}",
            "-" if row["high_risk_as_released"] is None else f"{row['high_risk_as_released']:,}",
            "-" if row["suppressed_cells"] is None else f"{row['suppressed_cells']:,}",
            row["note"] or "",
        )
    return shown


@app.command("slicing")
def experiment_slicing(
    data: Annotated[
        Path, typer.Option("--data", help="Microdata file, e.g. adult_full.csv (CSV or Parquet).")
    ],
    output: Folder,
    sensitive: Annotated[str, typer.Option("--sensitive", help="The sensitive attribute.")] = "occupation",
    config: Annotated[
        Path | None, typer.Option("--config", "-c", help="Optional YAML configuration.")
    ] = None,
    missing_values: Annotated[
        str, typer.Option(help="Texts meaning a missing value, comma-separated.")
    ] = "?,",
    columns: Annotated[
        str, typer.Option("--columns", help="Numbers of columns: a range 2-10 or a list.")
    ] = "2-10",
    runs: Annotated[int, typer.Option("--runs", help="Seeded runs per number of columns.")] = 50,
    sensitive_column_size: Annotated[
        int | None, typer.Option(help="Attributes in the sensitive column (default 3).")
    ] = None,
    beta: Annotated[int, typer.Option("--beta", help="Improved slicing: minimum number of groups.")] = 2,
    max_labels: Annotated[
        int, typer.Option("--max-labels", help="Improved slicing: columns per attribute.")
    ] = 2,
    ls: Annotated[str, typer.Option("--ls", help="The l to test, comma-separated.")] = "2,3,4,5,6",
    min_bucket_size: Annotated[int, typer.Option("--min-bucket-size", help="Smallest bucket.")] = 250,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the first run.")] = 0,
    correlation: Annotated[
        str, typer.Option("--correlation", help="phi2, pearson (|Pearson| on codes) or cramers-v.")
    ] = "phi2",
    averaging: Annotated[
        str | None, typer.Option("--averaging", help="lone-zero (default), paired-columns or pairs.")
    ] = None,
    matching: Annotated[
        str | None,
        typer.Option("--matching", help="Matching of the l checks: strict (default), bucket, none."),
    ] = None,
    study: Annotated[bool, typer.Option("--study", help="Run the sensitivity study instead.")] = False,
    study_sizes: Annotated[
        str | None, typer.Option("--study-sizes", help="Study: sensitive-column sizes (default 1-4).")
    ] = None,
    readings_columns: Annotated[
        str | None, typer.Option("--readings-columns", help="Study: columns of the l readings (2,6,10).")
    ] = None,
    quiet: Quiet = False,
) -> None:
    """Dhaigude & Kumar's improved slicing against slicing (Li et al.): Figure 2 (average correlation
    inside the released columns against the number of columns, seeded runs), which l in 2..6 each
    configuration satisfies, and the time of Mondrian-style vs random-halving tuple partitioning.

    Records with a missing value are removed first (Adult: 30,162 remain). Writes correlation.csv,
    diversity.csv, timing.csv, results.md, figure2.png and summary.json; with --study, study.csv,
    curves.csv, readings.csv, results.md, figure2.png (the closest combination) and summary.json.
    """
    settings = dict(locals())
    with user_errors():
        _slicing_run(settings)


def _slicing_run(o: dict[str, Any]) -> None:
    """The body of ``sdckit experiment slicing`` (``o``: its options by name)."""
    from sdckit.anonymize.slicing import MATCHINGS
    from sdckit.experiments import slicing as experiment
    from sdckit.experiments.data import complete_records

    n_columns = whole_numbers(o["columns"], "--columns", minimum=2)
    l_values = whole_numbers(o["ls"], "--ls", minimum=1)
    in_range(o["runs"], "--runs", 1, None)
    only = (
        ("study_sizes", "readings_columns")
        if not o["study"]
        else ("sensitive_column_size", "averaging", "matching")
    )
    for name in only:
        if o[name] is not None:
            flag = "--" + name.replace("_", "-")
            raise ConfigError(
                f"{flag} " + ("needs --study" if not o["study"] else "does not apply to --study")
            )
    default = {"study_sizes": "1-4", "readings_columns": "2,6,10", "sensitive_column_size": 3}
    default.update(averaging="lone-zero", matching="strict")
    o.update({name: value for name, value in default.items() if o[name] is None})
    in_range(o["sensitive_column_size"], "--sensitive-column-size", 1, None)
    sizes = whole_numbers(o["study_sizes"], "--study-sizes", minimum=1)
    readings_columns = whole_numbers(o["readings_columns"], "--readings-columns", minimum=2)
    for value, option, choices in (
        (o["correlation"], "--correlation", experiment.MEASURES),
        (o["averaging"], "--averaging", experiment.AVERAGINGS),
        (o["matching"], "--matching", MATCHINGS),
    ):
        if value not in choices:
            raise ConfigError(f"{option} must be one of {', '.join(choices)}, got {value!r}")
    data = o["data"]
    outputs = Outputs([data, o["config"]])
    outputs.directory(o["output"], "--output")
    started = time.perf_counter()
    say = stage_messages(o["quiet"], started)
    table = complete_records(_read(data, o["config"], o["missing_values"]), say)
    common = {
        "sensitive": o["sensitive"], "n_columns": n_columns, "runs": o["runs"], "beta": o["beta"],
        "max_labels": o["max_labels"], "ls": l_values, "min_bucket_size": o["min_bucket_size"],
        "seed": o["seed"], "correlation": o["correlation"], "say": say,
    }  # fmt: skip
    if o["study"]:
        experiment.check_attributes(table, o["sensitive"], min(sizes), o["beta"], source=str(data))
        study = experiment.slicing_study(table, sizes=sizes, readings_columns=readings_columns, **common)
        figures = experiment.study_summary(study, elapsed_seconds=time.perf_counter() - started)
        write = lambda folder: experiment.write_slicing_study(study, folder, name=data.name)  # noqa: E731
        shown: Any = _study_table(study, data.name)
    else:
        size = o["sensitive_column_size"]
        experiment.check_attributes(table, o["sensitive"], size, o["beta"], source=str(data))
        result = experiment.slicing_experiment(
            table, sensitive_column_size=size, averaging=o["averaging"],
            matching=o["matching"], **common,
        )  # fmt: skip
        figures = experiment.summary(result, elapsed_seconds=time.perf_counter() - started)
        write = lambda folder: experiment.write_slicing_experiment(result, folder, name=data.name)  # noqa: E731
        shown = _slicing_table(result, data.name)
    _finish(outputs, o["output"], shown, write, figures)


def _study_table(result: Any, name: str) -> RichTable:
    shown = RichTable(title=f"Which reading reproduces Figure 2's two trends — {name}", title_justify="left")
    for column in ("measure", "averaging", "sensitive column", "slicing falls", "improved rises, falls"):
        shown.add_column(column)
    shown.add_column("closeness", justify="right")
    for row in result.grid.head(5).iter_rows(named=True):
        shown.add_row(
            row["measure"], row["averaging"], str(row["sensitive_column_size"]),
            "yes" if row["slicing_falls"] else "no", "yes" if row["improved_rises_then_falls"] else "no",
            f"{row['closeness']:.3f}",
        )  # fmt: skip
    return shown


def _read(data: Path, config: Path | None, missing_values: str) -> Any:
    from sdckit.config import load_config
    from sdckit.io import read_table

    if config is not None:
        return load_config(config).read(data)
    return read_table(data, missing_values=[token.strip() for token in missing_values.split(",")])


def _slicing_table(result: Any, name: str) -> RichTable:
    shown = RichTable(title=f"Average correlation inside the released columns — {name}")
    for column in ("columns", "slicing", "improved slicing"):
        shown.add_column(column, justify="right")
    pivot = result.correlation.pivot(on="method", index="columns", values="average_correlation")
    for row in pivot.iter_rows(named=True):
        shown.add_row(str(row["columns"]), f"{row['slicing']:.4f}", f"{row['improved slicing']:.4f}")
    return shown


@app.command("quasi-sensitive")
def experiment_quasi_sensitive(
    output: Folder,
    records: Annotated[int, typer.Option("--records", help="Records drawn from Adult.")] = 3000,
    run_time_limit: Annotated[
        float, typer.Option(help="Seconds of phase 2 per run (the paper's 10 s).")
    ] = 10.0,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the synthesized terms and knowledge.")] = 0,
    quick: Annotated[
        bool, typer.Option("--quick", help="Fewer settings (l 10/30, c 1/2, t 0.2/0.4, k 1/5).")
    ] = False,
    quiet: Quiet = False,
) -> None:
    """Shi, Xiong & Fung's experiment: Figure 5 (removal cost of adaptive vs baseline QS suppression
    for varying l and c) and Figure 6 (removal cost and generalization loss for varying t and k).

    Needs the Adult data for the quasi-identifiers (where: sdckit.experiments.data.adult_directory).
    Writes figure5.csv, figure6.csv, results.md, figure5.png, figure6.png, data.csv, knowledge.csv and
    summary.json.
    """
    from sdckit.experiments.quasi_sensitive import (
        quasi_sensitive_experiment,
        summary,
        write_quasi_sensitive_experiment,
    )

    with user_errors():
        in_range(records, "--records", 10, MAX_QS_RECORDS)
        in_range(run_time_limit, "--run-time-limit", 0, None, exclusive_minimum=True)
        outputs = Outputs([])
        outputs.directory(output, "--output")
        started = time.perf_counter()
        settings: dict[str, Any] = {}
        if quick:
            settings = {"ls": (10, 30), "cs": (1.0, 2.0), "ts": (0.2, 0.4), "ks": (1, 5)}
        result, table, knowledge = quasi_sensitive_experiment(
            n_records=records,
            run_time_limit=run_time_limit,
            seed=seed,
            say=stage_messages(quiet, started),
            **settings,
        )
        figures = summary(result, elapsed_seconds=time.perf_counter() - started)
        write = lambda folder: write_quasi_sensitive_experiment(result, folder, table, knowledge)  # noqa: E731
        _finish(outputs, output, None, write, figures)


@app.command("masking")
def experiment_masking(
    output: Folder,
    data_dir: Annotated[
        Path | None,
        typer.Option("--data-dir", help="Folder of Tarragona.csv and CASCrefmicrodata.csv (sdcMicro's)."),
    ] = None,
    datasets: Annotated[
        str, typer.Option("--datasets", help="Data sets, comma-separated: tarragona, casc.")
    ] = "tarragona,casc",
    ks: Annotated[str, typer.Option("--ks", help="MDAV k values, comma-separated.")] = "3,5,10",
    alphas: Annotated[
        str, typer.Option("--alphas", help="Correlated noise α values (ε ~ N(0, α·Σ)), comma-separated.")
    ] = "0.1,0.5,1",
    ps: Annotated[str, typer.Option("--ps", help="Rank swapping p values (%), comma-separated.")] = "5,10,15",
    synthesis_models: Annotated[
        str, typer.Option(help="Synthetic data models, comma-separated: cart, regression.")
    ] = "cart,regression",
    implicates: Annotated[
        int, typer.Option("--implicates", help="Synthetic data sets M (implicate 1 is measured).")
    ] = 1,
    seed: Annotated[int, typer.Option("--seed", help="Seed of noise, rank swapping and synthesis.")] = 0,
    quiet: Quiet = False,
) -> None:
    """The R-U comparison of the masking methods on the CASC data (Tarragona, CASCrefmicrodata): MDAV,
    correlated noise, rank swapping, PRAM where there are categories, synthetic data; information
    loss (IL1, IL score, eigen) against distance-based record linkage, with the Pareto front.

    Every column is a numeric quasi-identifier. Writes results.csv, results.md, ru_map_<data set>.png
    and summary.json.
    """
    from sdckit.experiments.data import CASC_DATASETS, casc_table
    from sdckit.experiments.masking import masking_experiment, plan, summary, write_masking_experiment

    with user_errors():
        names = _names(datasets, "--datasets", tuple(CASC_DATASETS))
        k_values = whole_numbers(ks, "--ks", minimum=2, ranges=False)
        alpha_values = _decimals(alphas, "--alphas")
        p_values = _decimals(ps, "--ps")
        models = _names(synthesis_models, "--synthesis-models", ("cart", "regression"))
        in_range(seed, "--seed", 0, None)
        plan(k_values, alpha_values, p_values, models, implicates, seed)  # refuses bad values up front
        outputs = Outputs([])
        outputs.directory(output, "--output")
        started = time.perf_counter()
        tables = {name: casc_table(name, data_dir) for name in names}
        result = masking_experiment(
            tables,
            titles={name: CASC_DATASETS[name][1] for name in names},
            ks=k_values,
            alphas=alpha_values,
            ps=p_values,
            synthesis_models=models,
            implicates=implicates,
            seed=seed,
            say=stage_messages(quiet, started),
        )
        figures = summary(result, elapsed_seconds=time.perf_counter() - started)
        write = lambda folder: write_masking_experiment(result, folder)  # noqa: E731
        _finish(outputs, output, _masking_table(result), write, figures)


def _names(text: str, option: str, choices: tuple[str, ...]) -> tuple[str, ...]:
    chosen = tuple(dict.fromkeys(name.strip().lower() for name in text.split(",") if name.strip()))
    unknown = [name for name in chosen if name not in choices]
    if not chosen or unknown:
        raise ConfigError(f"{option} must name some of {', '.join(choices)}, got {text!r}")
    return chosen


def _decimals(text: str, option: str) -> tuple[float, ...]:
    try:
        values = tuple(float(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise ConfigError(f"{option} must be numbers separated by commas, got {text!r}") from None
    if not values:
        raise ConfigError(f"{option} must name at least one number, got {text!r}")
    return values


def _masking_table(result: Any) -> str:
    from sdckit.experiments.masking import markdown

    return markdown(result)


def _finish(outputs: Outputs, folder: Path, shown: Any, write: Any, figures: dict[str, Any]) -> None:
    """Write the experiment's files and its summary.json into a new folder, then move them in."""

    def write_all(temporary: Path) -> None:
        write(temporary)
        (temporary / "summary.json").write_text(dumps(figures))

    outputs.stage(folder, write_all)
    report = Report()
    if isinstance(shown, str):
        report.verbatim(shown)  # a markdown table
    elif shown is not None:
        report.add(shown)
    finish(outputs, report)
