"""``sdckit experiment PAPER``: the experiments of the papers sdckit implements (code in
:mod:`sdckit.experiments`). Every table, chart and ``summary.json`` is written into the output folder
at the end, together, or not at all."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table as RichTable

from sdckit.cli._common import Report, finish, stage_messages, user_errors
from sdckit.cli._outputs import Outputs
from sdckit.errors import ConfigError
from sdckit.recipes import dumps

app = typer.Typer(help="Reproduce the experiments of the papers sdckit implements.", no_args_is_help=True)


@app.command("targeted-suppression")
def experiment_targeted_suppression(
    data: Annotated[Path, typer.Option("--data", help="Microdata file: CSV or Parquet.")],
    config: Annotated[
        Path, typer.Option("--config", "-c", help="YAML configuration: public probabilities and weights.")
    ],
    output: Annotated[Path, typer.Option("--output", "-o", help="Directory for the tables and charts.")],
    delta: Annotated[float, typer.Option("--delta", help="Risk threshold DELTA.")] = 0.01,
    ks: Annotated[str, typer.Option("--ks", help="The k of the k-anonymity releases, comma-separated.")] = (
        "2,5,10,20"
    ),
    l: Annotated[int, typer.Option("-l", help="l of the distinct l-diversity releases.")] = 2,  # noqa: E741
    t: Annotated[float, typer.Option("-t", help="t of the t-closeness releases (equal distance).")] = 0.2,
    suppression_limit: Annotated[
        float, typer.Option("--suppression-limit", help="Record suppression of full-domain generalization.")
    ] = 0.05,
    max_nodes: Annotated[
        int, typer.Option(help="Larger generalization lattices are searched greedily (labelled).")
    ] = 20_000,
    methods: Annotated[
        str,
        typer.Option(help="Which to run, comma-separated: targeted-suppression, generalize, mondrian."),
    ] = "targeted-suppression,generalize,mondrian",
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress lines.")] = False,
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
        try:
            k_values = tuple(int(value) for value in ks.split(",") if value.strip())
        except ValueError:
            raise ConfigError(f"--ks must be whole numbers separated by commas, got {ks!r}") from None
        if not k_values or min(k_values) < 1:
            raise ConfigError(f"--ks must list whole numbers >= 1, got {ks!r}")
        chosen = tuple(name.strip() for name in methods.split(",") if name.strip())
        known = ("targeted-suppression", "generalize", "mondrian")
        unknown = [name for name in chosen if name not in known]
        if unknown or not chosen:
            raise ConfigError(f"--methods must name some of {', '.join(known)}, got {methods!r}")
        if not 0.0 <= suppression_limit <= 1.0:
            raise ConfigError(f"--suppression-limit must be in [0, 1], got {suppression_limit}")
        if not delta >= 0:
            raise ConfigError(f"--delta: delta (the risk threshold) must be a number >= 0, got {delta}")
        outputs = Outputs([data, config])
        outputs.directory(output, "--output")
        started = time.perf_counter()
        settings = load_config(config)
        table = settings.read(data)

        say = stage_messages(quiet, started) or (lambda message: None)

        result = targeted_suppression_experiment(
            table,
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
            say=say,
        )
        figures = summary(result, elapsed_seconds=time.perf_counter() - started)
        shown = RichTable(
            title=f"Targeted suppression vs. privacy models — {data.name}", title_justify="left"
        )
        for column in ("method", "NCP %", f"records > {delta:g}", "suppressed cells", "note"):
            shown.add_column(column, justify="left" if column in ("method", "note") else "right")
        for row in result.rows.iter_rows(named=True):
            shown.add_row(
                row["method"],
                "-" if row["ncp"] is None else f"{100 * row['ncp']:.3f}",
                "-" if row["high_risk"] is None else f"{row['high_risk']:,}",
                "-" if row["suppressed_cells"] is None else f"{row['suppressed_cells']:,}",
                row["note"] or "",
            )
        _finish(
            outputs, output, shown, lambda folder: write_experiment(result, folder, name=data.name), figures
        )


@app.command("slicing")
def experiment_slicing(
    data: Annotated[
        Path, typer.Option("--data", help="Microdata file, e.g. adult_full.csv (CSV or Parquet).")
    ],
    output: Annotated[Path, typer.Option("--output", "-o", help="Directory for the tables and the figure.")],
    sensitive: Annotated[str, typer.Option("--sensitive", help="The sensitive attribute.")] = "occupation",
    config: Annotated[
        Path | None,
        typer.Option("--config", "-c", help="Optional YAML configuration (kinds, missing values)."),
    ] = None,
    missing_values: Annotated[
        str, typer.Option("--missing-values", help="Texts meaning a missing value, comma-separated.")
    ] = "?,",
    columns: Annotated[
        str, typer.Option("--columns", help="Numbers of columns: a range 2-10 or a list.")
    ] = "2-10",
    runs: Annotated[int, typer.Option("--runs", help="Seeded runs per number of columns.")] = 50,
    sensitive_column_size: Annotated[
        int, typer.Option("--sensitive-column-size", help="Attributes in the sensitive column.")
    ] = 3,
    beta: Annotated[int, typer.Option("--beta", help="Improved slicing: minimum number of groups.")] = 2,
    max_labels: Annotated[
        int, typer.Option("--max-labels", help="Improved slicing: columns per attribute.")
    ] = 2,
    ls: Annotated[str, typer.Option("--ls", help="The l to test, comma-separated.")] = "2,3,4,5,6",
    min_bucket_size: Annotated[int, typer.Option("--min-bucket-size", help="Smallest bucket.")] = 250,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the first run.")] = 0,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress lines.")] = False,
) -> None:
    """Dhaigude & Kumar's improved slicing against slicing (Li et al.): Figure 2 (average correlation
    inside the released columns against the number of columns, seeded runs), which l in 2..6 each
    configuration satisfies, and the time of Mondrian-style vs random-halving tuple partitioning.

    Records with a missing value are removed first (Adult: 30,162 remain). Writes correlation.csv,
    diversity.csv, timing.csv, results.md, figure2.png and summary.json.
    """
    from sdckit.config import load_config
    from sdckit.experiments.data import complete_records
    from sdckit.experiments.slicing import slicing_experiment, summary, write_slicing_experiment
    from sdckit.table import read_table

    def numbers(text: str, option: str) -> tuple[int, ...]:
        try:
            if "-" in text and "," not in text:
                low, high = (int(part) for part in text.split("-", 1))
                values = tuple(range(low, high + 1))
            else:
                values = tuple(int(part) for part in text.split(",") if part.strip())
        except ValueError:
            raise ConfigError(
                f"{option} must be whole numbers (a list or a range a-b), got {text!r}"
            ) from None
        if not values:
            raise ConfigError(f"{option} names no number: {text!r}")
        return values

    with user_errors():
        n_columns = numbers(columns, "--columns")
        l_values = numbers(ls, "--ls")
        if min(n_columns) < 2:
            raise ConfigError(f"--columns must be at least 2, got {min(n_columns)}")
        if min(l_values) < 1:
            raise ConfigError(f"--ls must be at least 1, got {min(l_values)}")
        if runs < 1:
            raise ConfigError(f"--runs must be at least 1, got {runs}")
        outputs = Outputs([data, config])
        outputs.directory(output, "--output")
        started = time.perf_counter()

        say = stage_messages(quiet, started) or (lambda message: None)

        if config is not None:
            table = load_config(config).read(data)
        else:
            tokens = [token.strip() for token in missing_values.split(",")]
            table = read_table(data, missing_values=tokens)
        table = complete_records(table, say)
        names = [a.name for a in table.schema.attributes]
        if sensitive not in names:
            raise ConfigError(f"--sensitive '{sensitive}' is not a column of {data} ({', '.join(names)})")
        if beta > len(names) - sensitive_column_size:
            raise ConfigError(
                f"--beta {beta} is larger than the number of attributes outside the sensitive column "
                f"({len(names) - sensitive_column_size})"
            )
        result = slicing_experiment(
            table,
            sensitive=sensitive,
            n_columns=n_columns,
            runs=runs,
            sensitive_column_size=sensitive_column_size,
            beta=beta,
            max_labels=max_labels,
            ls=l_values,
            min_bucket_size=min_bucket_size,
            seed=seed,
            say=say,
        )
        shown = RichTable(title=f"Average correlation inside the released columns — {data.name}")
        for column in ("columns", "slicing", "improved slicing"):
            shown.add_column(column, justify="right")
        pivot = result.correlation.pivot(on="method", index="columns", values="average_correlation")
        for row in pivot.iter_rows(named=True):
            shown.add_row(str(row["columns"]), f"{row['slicing']:.4f}", f"{row['improved slicing']:.4f}")
        figures = summary(result, elapsed_seconds=time.perf_counter() - started)
        _finish(
            outputs,
            output,
            shown,
            lambda folder: write_slicing_experiment(result, folder, name=data.name),
            figures,
        )


@app.command("quasi-sensitive")
def experiment_quasi_sensitive(
    output: Annotated[Path, typer.Option("--output", "-o", help="Directory for the tables and the figures.")],
    records: Annotated[int, typer.Option("--records", help="Records drawn from Adult.")] = 3000,
    run_time_limit: Annotated[
        float, typer.Option("--run-time-limit", help="Seconds of phase 2 per run (the paper's 10 s).")
    ] = 10.0,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the synthesized terms and knowledge.")] = 0,
    quick: Annotated[
        bool, typer.Option("--quick", help="Fewer settings (l 10/30, c 1/2, t 0.2/0.4, k 1/5).")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress lines.")] = False,
) -> None:
    """Shi, Xiong & Fung's experiment: Figure 5 (removal cost of adaptive vs baseline QS suppression
    for varying l and c) and Figure 6 (removal cost and generalization loss for varying t and k).

    Needs the Adult data for the quasi-identifiers (where: sdckit.experiments.data.adult_directory). Writes figure5.csv, figure6.csv,
    results.md, figure5.png, figure6.png, data.csv, knowledge.csv and summary.json.
    """
    from sdckit.experiments.quasi_sensitive import (
        quasi_sensitive_experiment,
        summary,
        write_quasi_sensitive_experiment,
    )

    with user_errors():
        if records < 10:
            raise ConfigError(f"--records must be at least 10, got {records}")
        if not run_time_limit > 0:
            raise ConfigError(f"--run-time-limit must be a positive number of seconds, got {run_time_limit}")
        outputs = Outputs([])
        outputs.directory(output, "--output")
        started = time.perf_counter()

        say = stage_messages(quiet, started) or (lambda message: None)

        settings: dict[str, Any] = {}
        if quick:
            settings = {"ls": (10, 30), "cs": (1.0, 2.0), "ts": (0.2, 0.4), "ks": (1, 5)}
        result, table, knowledge = quasi_sensitive_experiment(
            n_records=records, run_time_limit=run_time_limit, seed=seed, say=say, **settings
        )
        _finish(
            outputs,
            output,
            None,
            lambda folder: write_quasi_sensitive_experiment(result, folder, table, knowledge),
            summary(result, elapsed_seconds=time.perf_counter() - started),
        )


def _finish(outputs: Outputs, folder: Path, shown: Any, write: Any, figures: dict[str, Any]) -> None:
    """Write the experiment's files and its summary.json into a new folder, then move them in."""

    def write_all(temporary: Path) -> None:
        write(temporary)
        (temporary / "summary.json").write_text(dumps(figures))

    outputs.stage(folder, write_all)
    report = Report()
    if shown is not None:
        report.add(shown)
    finish(outputs, report)
