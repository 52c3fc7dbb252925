"""The ``sdckit`` command line: parse, call the library, print with rich. No logic of its own.

Exit codes: 0 success, 2 bad input or configuration (one clear message, no output file written),
1 internal error.
"""

from __future__ import annotations

import json
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table as RichTable

from sdckit import __version__
from sdckit.errors import ConfigError, SdcError

app = typer.Typer(
    name="sdckit",
    help="Statistical disclosure control: measure and reduce the disclosure risk of microdata.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console()
errors = Console(stderr=True)

SCORE_FORMATS = (".parquet", ".pq", ".csv")


def _version(value: bool) -> None:
    if value:
        console.print(f"sdckit {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Statistical disclosure control: measure and reduce the disclosure risk of microdata."""


@contextmanager
def _user_errors() -> Iterator[None]:
    """Turn user errors into one red line and exit 2; show library warnings in yellow."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        except SdcError as error:
            _show_warnings(caught)
            errors.print(f"[bold red]error:[/] {error}", highlight=False)
            raise typer.Exit(2) from None
        except (typer.Exit, typer.Abort):
            _show_warnings(caught)
            raise
        except KeyboardInterrupt:
            errors.print("[bold red]interrupted[/]")
            raise typer.Exit(130) from None
        except Exception as error:  # an internal error: say so, keep the traceback short
            _show_warnings(caught)
            errors.print(f"[bold red]internal error:[/] {type(error).__name__}: {error}", highlight=False)
            errors.print("please report this with the command you ran", style="dim")
            raise typer.Exit(1) from None
        _show_warnings(caught)


def _show_warnings(caught: list[warnings.WarningMessage]) -> None:
    seen = set()
    for warning in caught:
        text = str(warning.message)
        if text not in seen and issubclass(warning.category, UserWarning):
            seen.add(text)
            errors.print(f"[bold yellow]warning:[/] {text}", highlight=False)


def _check_output(path: Path | None, suffixes: tuple[str, ...], option: str) -> None:
    if path is None:
        return
    if path.suffix.lower() not in suffixes:
        raise ConfigError(f"{option} {path}: the file must end in {' or '.join(suffixes)}")
    if path.exists() and path.is_dir():
        raise ConfigError(f"{option} {path}: is a directory")


@contextmanager
def _progress(enabled: bool, description: str) -> Iterator[Callable[[int, int], None] | None]:
    if not enabled:
        yield None
        return
    progress = Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=errors,
        transient=True,
    )
    task = progress.add_task(description, total=None)

    def update(done: int, total: int) -> None:
        progress.update(task, completed=done, total=total)

    with progress:
        yield update


@app.command()
def risk(
    data: Annotated[Path, typer.Argument(help="Microdata file: CSV (delimiter sniffed) or Parquet.")],
    config: Annotated[Path, typer.Option("--config", "-c", help="YAML configuration of the attributes.")],
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Per-record scores, .parquet or .csv.")
    ] = None,
    threshold: Annotated[
        float, typer.Option("--threshold", "-t", help="Risk threshold DELTA for 'high-risk' records.")
    ] = 0.01,
    histogram: Annotated[
        Path | None, typer.Option("--histogram", help="Log-scale histogram of D(r), .png/.pdf/.svg.")
    ] = None,
    summary: Annotated[
        Path | None, typer.Option("--summary", help="Write the printed figures as JSON.")
    ] = None,
    alpha: Annotated[
        float | None, typer.Option(help="Override the config's consequence coefficient.")
    ] = None,
    epsilon: Annotated[float | None, typer.Option(help="Override the config's pruning threshold.")] = None,
    missing: Annotated[
        str | None, typer.Option(help="Override the config's missing-value treatment: wildcard or category.")
    ] = None,
    top: Annotated[int, typer.Option(help="How many of the riskiest records to list.")] = 10,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
) -> None:
    """Combined identity + attribute disclosure risk D(r) of every record (Orooji & Knapp)."""
    from sdckit.config import load_config
    from sdckit.evaluate.plots import plot_format, risk_histogram
    from sdckit.risk.combined import combined_risk
    from sdckit.table import atomic_write, write_table

    with _user_errors():
        _check_output(output, SCORE_FORMATS, "--output")
        _check_output(summary, (".json",), "--summary")
        if histogram is not None:
            plot_format(histogram)
        if not threshold >= 0:
            raise ConfigError(f"--threshold must be >= 0, got {threshold}")
        if top < 0:
            raise ConfigError(f"--top must be >= 0, got {top}")
        started = time.perf_counter()
        settings = load_config(config)
        parameters = {
            "alpha": settings.risk.alpha if alpha is None else alpha,
            "epsilon": settings.risk.epsilon if epsilon is None else epsilon,
            "missing": settings.risk.missing if missing is None else missing,
        }
        table = settings.read(data)
        with _progress(not quiet and sys.stderr.isatty(), "known sets") as progress:
            result = combined_risk(table, weights=settings.data.weights, progress=progress, **parameters)
        elapsed = time.perf_counter() - started

        figures = result.summary(threshold)
        riskiest = result.riskiest(top)
        _print_report(figures, riskiest, data, elapsed)

        figures["data"] = str(data)
        figures["config"] = str(config)
        figures["elapsed_seconds"] = round(elapsed, 3)
        figures["riskiest"] = riskiest.to_dicts()
        figures["known_set_list"] = result.known_sets.drop("attributes").to_dicts()
        for path in (output, histogram, summary):
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
        if output is not None:
            write_table(result.scores(), output)
            console.print(f"scores written to [bold]{output}[/]")
        if histogram is not None:
            risk_histogram(
                result.risk, histogram, threshold=threshold, title=f"Record disclosure risk — {data.name}"
            )
            console.print(f"histogram written to [bold]{histogram}[/]")
        if summary is not None:
            with atomic_write(summary) as temporary:
                Path(temporary).write_text(json.dumps(figures, indent=2, default=_json_default) + "\n")
            console.print(f"summary written to [bold]{summary}[/]")


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    if hasattr(value, "tolist"):
        return value.tolist()
    return str(value)


def _print_report(figures: dict[str, Any], riskiest: Any, data: Path, elapsed: float) -> None:
    console.print(
        f"[bold]{data.name}[/]: {figures['records']:,} records, "
        f"{len(figures['attributes'])} attributes measured, "
        f"{figures['known_sets']:,} known sets kept (epsilon {figures['epsilon']:g}), "
        f"alpha {figures['alpha']:g}, missing values as {figures['missing']}"
        f"{', sampling weights' if figures['weighted'] else ''} — {elapsed:.2f} s"
    )
    quantiles = RichTable(title="Disclosure risk D(r)", title_justify="left")
    for label in ("mean", *figures["quantiles"]):
        quantiles.add_column(label, justify="right")
    values = [figures["mean_risk"], *figures["quantiles"].values()]
    quantiles.add_row(*(f"{v:.4g}" if v is not None else "-" for v in values))
    console.print(quantiles)
    console.print(
        f"records above {figures['threshold']:g}: [bold]{figures['above_threshold']:,}[/] "
        f"({figures['above_threshold_percent']:.2f}%)"
    )
    if riskiest.height:
        table = RichTable(title=f"The {riskiest.height} riskiest records", title_justify="left")
        table.add_column("record", justify="right")
        table.add_column("risk", justify="right")
        table.add_column("dominant known set")
        table.add_column("its contribution", justify="right")
        for row in riskiest.iter_rows(named=True):
            table.add_row(
                str(row["record"]),
                f"{row['risk']:.4g}",
                row["top_known_set"] or "(empty set)",
                f"{row['top_contribution']:.4g}",
            )
        console.print(table)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
