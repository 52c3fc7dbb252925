"""The ``sdckit`` command line: parse, call the library, print with rich. No logic of its own.

Exit codes: 0 success, 2 bad input or configuration (one clear message, no output file written),
1 internal error.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import polars as pl
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


L_VARIANTS = ("distinct", "entropy", "recursive")
T_DISTANCES = ("equal", "ordered", "hierarchical")
METRIC_CHOICES = ("loss", "ncp", "gcp", "dm", "dm_star", "aecs", "precision", "entropy")


def _models(
    table: Any,
    k: int | None,
    l: float | None,  # noqa: E741
    l_variant: str,
    c: float,
    t: float | None,
    t_distance: str,
) -> list[Any]:
    """Privacy models from the command-line options; l and t apply to every sensitive attribute."""
    from sdckit.hierarchy import Hierarchy
    from sdckit.models import (
        DistinctLDiversity,
        EntropyLDiversity,
        KAnonymity,
        RecursiveCLDiversity,
        TCloseness,
    )
    from sdckit.table import Role

    if l_variant not in L_VARIANTS:
        raise ConfigError(f"--l-variant must be one of {', '.join(L_VARIANTS)}, got {l_variant!r}")
    if t_distance not in T_DISTANCES:
        raise ConfigError(f"--t-distance must be one of {', '.join(T_DISTANCES)}, got {t_distance!r}")
    sensitive = [a for a in table.schema.with_role(Role.SENSITIVE)]
    if (l is not None or t is not None) and not sensitive:
        raise ConfigError("-l and -t need at least one attribute with role sensitive in the configuration")
    models = []
    if k is not None:
        if k > table.n_records:
            raise ConfigError(f"-k {k} is larger than the number of records ({table.n_records})")
        models.append(KAnonymity(k))
    for attribute in sensitive:
        if l is not None:
            if l_variant == "distinct":
                if l != int(l):
                    raise ConfigError(f"-l must be a whole number for distinct l-diversity, got {l}")
                models.append(DistinctLDiversity(attribute.name, int(l)))
            elif l_variant == "entropy":
                models.append(EntropyLDiversity(attribute.name, l))
            else:
                if l != int(l):
                    raise ConfigError(f"-l must be a whole number for recursive (c,l)-diversity, got {l}")
                models.append(RecursiveCLDiversity(attribute.name, c, int(l)))
        if t is not None:
            hierarchy = attribute.hierarchy if isinstance(attribute.hierarchy, Hierarchy) else None
            if t_distance == "hierarchical" and hierarchy is None:
                raise ConfigError(
                    f"hierarchical t-closeness needs a hierarchy for sensitive attribute '{attribute.name}'"
                )
            models.append(TCloseness(attribute.name, t, distance=t_distance, hierarchy=hierarchy))
    return models


def _quasi_identifiers(table: Any) -> list[str]:
    from sdckit.table import Role

    names = [a.name for a in table.schema.with_role(Role.QUASI_IDENTIFIER)]
    if not names:
        raise ConfigError("no attribute has role quasi-identifier in the configuration")
    return names


def _write_json(path: Path, figures: dict[str, Any]) -> None:
    from sdckit.table import atomic_write

    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path) as temporary:
        Path(temporary).write_text(json.dumps(figures, indent=2, default=_json_default) + "\n")
    console.print(f"summary written to [bold]{path}[/]")


@app.command()
def check(
    data: Annotated[Path, typer.Argument(help="Microdata file: CSV or Parquet.")],
    config: Annotated[Path, typer.Option("--config", "-c", help="YAML configuration of the attributes.")],
    k: Annotated[int | None, typer.Option("-k", help="Required k of k-anonymity.")] = None,
    l: Annotated[float | None, typer.Option("-l", help="Required l of l-diversity.")] = None,  # noqa: E741
    l_variant: Annotated[
        str, typer.Option("--l-variant", help="distinct, entropy or recursive.")
    ] = "distinct",
    recursive_c: Annotated[float, typer.Option("--c", help="c of recursive (c,l)-diversity.")] = 2.0,
    t: Annotated[float | None, typer.Option("-t", help="Required t of t-closeness.")] = None,
    t_distance: Annotated[
        str, typer.Option("--t-distance", help="equal, ordered or hierarchical.")
    ] = "equal",
    summary: Annotated[Path | None, typer.Option("--summary", help="Write the figures as JSON.")] = None,
    show: Annotated[int, typer.Option(help="How many violating classes to list.")] = 10,
) -> None:
    """Achieved k-anonymity, l-diversity and t-closeness of a table, and its violating classes.

    Classes are the combinations of the quasi-identifiers as they are in the data; without -k/-l/-t
    the achieved values are reported with nothing required.
    """
    from sdckit.config import load_config
    from sdckit.models import check_table
    from sdckit.table import Role

    with _user_errors():
        _check_output(summary, (".json",), "--summary")
        settings = load_config(config)
        # A table to check may be a release: its quasi-identifiers hold generalized values, which
        # the hierarchies need not list as leaves, and the check does not need the hierarchies.
        settings = dataclasses.replace(
            settings,
            attributes=tuple(
                dataclasses.replace(a, hierarchy=None) if a.role is Role.QUASI_IDENTIFIER else a
                for a in settings.attributes
            ),
        )
        table = settings.read(data)
        names = _quasi_identifiers(table)
        required = _models(table, k, l, l_variant, recursive_c, t, t_distance)
        # Report k, l and t even when not required: thresholds that always pass.
        has_sensitive = bool(table.schema.with_role(Role.SENSITIVE))
        reported = _models(
            table,
            k if k is not None else 1,
            l if l is not None else (1 if has_sensitive else None),
            l_variant,
            recursive_c,
            t if t is not None else (1.0 if has_sensitive else None),
            t_distance,
        )
        report = check_table(table, names, reported)
        figures = report.summary()
        required_names = {model.name for model in required}
        satisfied = all(
            bool(result.passes.all()) for result in report.results if result.model in required_names
        )
        figures["required"] = sorted(required_names)
        figures["satisfied"] = satisfied
        figures["quasi_identifiers"] = names
        console.print(
            f"[bold]{data.name}[/]: {report.n_records:,} records, {report.n_classes:,} equivalence classes "
            f"on {', '.join(names)}"
        )
        achieved = RichTable(title="Achieved", title_justify="left")
        achieved.add_column("model")
        achieved.add_column("achieved", justify="right")
        achieved.add_column("violating classes", justify="right")
        for result in report.results:
            kept = np.ones(len(result.passes), dtype=bool)
            achieved.add_row(
                result.model,
                f"{result.worst(kept):.4g}",
                f"{int((~result.passes).sum()):,}" if result.model in required_names else "-",
            )
        console.print(achieved)
        if required:
            verdict = "[bold green]satisfied[/]" if satisfied else "[bold red]not satisfied[/]"
            console.print(f"required {', '.join(sorted(required_names))}: {verdict}")
            violating = report.violating()
            if violating.height and show > 0:
                console.print(violating.head(show))
        if summary is not None:
            _write_json(summary, figures)


ANONYMIZE_METHODS = (
    "generalize",
    "mondrian",
    "local-suppression",
    "targeted-suppression",
    "slicing",
    "overlapping-slicing",
    "quasi-sensitive",
)
SLICING_METHODS = ("slicing", "overlapping-slicing")


@app.command()
def anonymize(
    data: Annotated[Path, typer.Argument(help="Microdata file: CSV or Parquet.")],
    config: Annotated[Path, typer.Option("--config", "-c", help="YAML configuration of the attributes.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Release file, .csv or .parquet.")],
    method: Annotated[str, typer.Option("--method", "-m", help=f"One of {', '.join(ANONYMIZE_METHODS)}.")] = (
        "generalize"
    ),
    k: Annotated[
        int | None, typer.Option("-k", help="k of k-anonymity.", rich_help_panel="privacy models")
    ] = None,
    l: Annotated[  # noqa: E741
        float | None, typer.Option("-l", help="l of l-diversity.", rich_help_panel="privacy models")
    ] = None,
    l_variant: Annotated[
        str,
        typer.Option("--l-variant", help="distinct, entropy or recursive.", rich_help_panel="privacy models"),
    ] = "distinct",
    recursive_c: Annotated[
        float | None,
        typer.Option(
            "--c",
            help="c of recursive (c,l)-diversity (default 2) or of QS (c,l)-diversity (default 1).",
            rich_help_panel="privacy models",
        ),
    ] = None,
    t: Annotated[
        float | None, typer.Option("-t", help="t of t-closeness.", rich_help_panel="privacy models")
    ] = None,
    t_distance: Annotated[
        str,
        typer.Option(
            "--t-distance", help="equal, ordered or hierarchical.", rich_help_panel="privacy models"
        ),
    ] = "equal",
    suppression_limit: Annotated[
        float,
        typer.Option(
            "--suppression-limit",
            help="generalize: largest share of records to suppress.",
            rich_help_panel="generalize",
        ),
    ] = 0.0,
    metric: Annotated[
        str,
        typer.Option(
            "--metric",
            help=f"generalize: utility metric, {', '.join(METRIC_CHOICES)}.",
            rich_help_panel="generalize",
        ),
    ] = "loss",
    drop_suppressed: Annotated[
        bool,
        typer.Option(
            "--drop-suppressed",
            help="generalize: leave suppressed records out, not '*'.",
            rich_help_panel="generalize",
        ),
    ] = False,
    max_nodes: Annotated[
        int,
        typer.Option(
            help="generalize: larger lattices are searched heuristically.", rich_help_panel="generalize"
        ),
    ] = (2_000_000),
    mode: Annotated[
        str, typer.Option("--mode", help="mondrian: strict or relaxed.", rich_help_panel="mondrian")
    ] = "strict",
    centroids: Annotated[
        bool,
        typer.Option(
            "--centroids",
            help="mondrian: release partition centroids, not ranges.",
            rich_help_panel="mondrian",
        ),
    ] = False,
    importance: Annotated[
        str | None,
        typer.Option(
            "--importance",
            help="local-suppression: attributes, most important first, comma-separated.",
            rich_help_panel="local suppression",
        ),
    ] = None,
    delta: Annotated[
        float | None,
        typer.Option(
            "--delta",
            help="targeted-suppression: risk threshold DELTA.",
            rich_help_panel="targeted suppression",
        ),
    ] = None,
    repeat: Annotated[
        bool,
        typer.Option(
            "--repeat",
            help="targeted-suppression: repeat until no record exceeds DELTA.",
            rich_help_panel="targeted suppression",
        ),
    ] = False,
    max_rounds: Annotated[
        int | None,
        typer.Option(
            "--max-rounds",
            help="targeted-suppression: most rounds with --repeat.",
            rich_help_panel="targeted suppression",
        ),
    ] = None,
    cell_budget: Annotated[
        int | None,
        typer.Option(
            "--cell-budget",
            help="targeted-suppression: most cells to suppress.",
            rich_help_panel="targeted suppression",
        ),
    ] = None,
    histogram: Annotated[
        Path | None,
        typer.Option(
            "--histogram",
            help="targeted-suppression: risk before/after, .png/.pdf/.svg.",
            rich_help_panel="targeted suppression",
        ),
    ] = None,
    missing: Annotated[
        str | None,
        typer.Option(
            help="Suppression methods: override the config's treatment of nulls (wildcard/category).",
            rich_help_panel="local / targeted suppression",
        ),
    ] = None,
    n_columns: Annotated[
        int | None,
        typer.Option(
            "--columns",
            help="slicing: number of columns (default: by the attributes).",
            rich_help_panel="slicing",
        ),
    ] = None,
    column: Annotated[
        str | None,
        typer.Option(
            "--column",
            help='slicing: explicit columns, e.g. "age,sex;zip,disease" (";" between).',
            rich_help_panel="slicing",
        ),
    ] = None,
    sensitive_column_size: Annotated[
        int | None,
        typer.Option(
            "--sensitive-column-size",
            help="slicing: attributes in the sensitive column (alpha).",
            rich_help_panel="slicing",
        ),
    ] = None,
    beta: Annotated[
        int,
        typer.Option(
            "--beta", help="overlapping-slicing: minimum number of groups.", rich_help_panel="slicing"
        ),
    ] = 2,
    max_labels: Annotated[
        int,
        typer.Option(
            "--max-labels",
            help="overlapping-slicing: most columns per attribute (p).",
            rich_help_panel="slicing",
        ),
    ] = 2,
    min_bucket_size: Annotated[
        int | None,
        typer.Option(
            "--min-bucket-size", help="slicing: smallest bucket a split may leave.", rich_help_panel="slicing"
        ),
    ] = None,
    seed: Annotated[
        int, typer.Option("--seed", help="slicing: seed of every random choice.", rich_help_panel="slicing")
    ] = 0,
    knowledge: Annotated[
        Path | None,
        typer.Option(
            "--knowledge",
            help="quasi-sensitive: external knowledge (label -> items), CSV or YAML.",
            rich_help_panel="quasi-sensitive",
        ),
    ] = None,
    set_column: Annotated[
        str | None,
        typer.Option(
            "--set-column",
            help="quasi-sensitive: the set-valued column (default: role quasi-sensitive).",
            rich_help_panel="quasi-sensitive",
        ),
    ] = None,
    separator: Annotated[
        str,
        typer.Option(
            "--separator", help="quasi-sensitive: item separator.", rich_help_panel="quasi-sensitive"
        ),
    ] = ";",
    time_limit: Annotated[
        float,
        typer.Option(
            "--time-limit",
            help="quasi-sensitive: seconds of search per violating group.",
            rich_help_panel="quasi-sensitive",
        ),
    ] = 1.0,
    strategy: Annotated[
        str,
        typer.Option(
            "--strategy",
            help="quasi-sensitive: adaptive (tailset reordering) or baseline DFS.",
            rich_help_panel="quasi-sensitive",
        ),
    ] = "adaptive",
    total_time_limit: Annotated[
        float | None,
        typer.Option(
            "--total-time-limit",
            help="quasi-sensitive: seconds for all group searches together (shared among the groups left).",
            rich_help_panel="quasi-sensitive",
        ),
    ] = None,
    summary: Annotated[Path | None, typer.Option("--summary", help="Write the figures as JSON.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
) -> None:
    """Anonymize microdata and write the release.

    generalize: the optimal full-domain generalization under k, l and t; mondrian: multidimensional
    partitioning under the same models; local-suppression: suppress single values until k-anonymity
    (nulls as wildcards); targeted-suppression: suppress the values that drive the risk of the
    records above DELTA (Orooji & Knapp); slicing: l-diverse slicing (Li et al.), columns of correlated
    attributes permuted independently inside buckets; overlapping-slicing: improved slicing (Dhaigude &
    Kumar) with overlapping columns and random halving; quasi-sensitive: k-anonymity by Mondrian, then
    item suppression in a set-valued attribute for QS (c,l)-diversity or QS t-closeness (Shi et al.).
    """
    from sdckit.config import load_config
    from sdckit.evaluate.plots import plot_format
    from sdckit.table import write_table

    with _user_errors():
        _check_output(output, (".csv", ".parquet", ".pq"), "--output")
        _check_output(summary, (".json",), "--summary")
        if histogram is not None:
            plot_format(histogram)
        if method not in ANONYMIZE_METHODS:
            raise ConfigError(f"--method must be one of {', '.join(ANONYMIZE_METHODS)}, got {method!r}")
        if method in ("generalize", "mondrian") and k is None and l is None and t is None:
            raise ConfigError(f"--method {method} needs at least one privacy model: -k, -l or -t")
        if method == "local-suppression" and k is None:
            raise ConfigError("--method local-suppression needs -k")
        if method == "targeted-suppression" and delta is None:
            raise ConfigError("--method targeted-suppression needs --delta")
        if histogram is not None and method != "targeted-suppression":
            raise ConfigError("--histogram is only for --method targeted-suppression")
        if method in SLICING_METHODS and (k is not None or t is not None):
            raise ConfigError(f"--method {method} uses -l only, not -k or -t")
        if method == "quasi-sensitive":
            if knowledge is None:
                raise ConfigError("--method quasi-sensitive needs --knowledge (the external knowledge file)")
            if (l is None) == (t is None):
                raise ConfigError("--method quasi-sensitive needs either -l (with --c) or -t, not both")
            if not time_limit > 0:
                raise ConfigError(f"--time-limit must be a positive number of seconds, got {time_limit}")
            if total_time_limit is not None and not total_time_limit > 0:
                raise ConfigError(
                    f"--total-time-limit must be a positive number of seconds, got {total_time_limit}"
                )
        started = time.perf_counter()
        settings = load_config(config)
        table = settings.read(data)
        show_progress = not quiet and sys.stderr.isatty()
        if method in SLICING_METHODS:
            options = {
                "n_columns": n_columns,
                "columns": _parse_columns(column),
                "sensitive_column_size": sensitive_column_size,
                "l": 2.0 if l is None else l,
                "beta": beta,
                "max_labels": max_labels,
                "min_bucket_size": min_bucket_size,
                "seed": seed,
            }
            with _progress(show_progress, "buckets") as progress:
                sliced, figures = _slicing(table, method, options, progress)
            elapsed = time.perf_counter() - started
            figures = {"data": str(data), "method": method, **figures, "elapsed_seconds": round(elapsed, 3)}
            _print_slicing(data, table, sliced, figures, elapsed)
            output.parent.mkdir(parents=True, exist_ok=True)
            write_table(sliced.table, output)
            console.print(f"sliced table written to [bold]{output}[/]")
            if summary is not None:
                _write_json(summary, figures)
            return
        if method == "generalize":
            if metric not in METRIC_CHOICES:
                raise ConfigError(f"--metric must be one of {', '.join(METRIC_CHOICES)}, got {metric!r}")
            if not 0.0 <= suppression_limit <= 1.0:
                raise ConfigError(f"--suppression-limit must be in [0, 1], got {suppression_limit}")
            models = _models(
                table, k, l, l_variant, 2.0 if recursive_c is None else recursive_c, t, t_distance
            )
            release, figures = _generalize(table, models, suppression_limit, metric, max_nodes, show_progress)
        elif method == "mondrian":
            models = _models(
                table, k, l, l_variant, 2.0 if recursive_c is None else recursive_c, t, t_distance
            )
            release, figures = _mondrian(table, models, mode, centroids)
        elif method == "local-suppression":
            if k is not None and k > table.n_records:
                raise ConfigError(f"-k {k} is larger than the number of records ({table.n_records})")
            release, figures = _local_suppression(
                table, k, importance, missing or settings.risk.missing, show_progress
            )
        elif method == "quasi-sensitive":
            release, figures = _quasi_sensitive(
                table,
                knowledge=knowledge,
                set_column=set_column,
                separator=separator,
                k=1 if k is None else k,
                c=1.0 if recursive_c is None else recursive_c,
                l=l,
                t=t,
                time_limit=time_limit,
                total_time_limit=total_time_limit,
                strategy=strategy,
                show_progress=show_progress,
            )
        else:
            release, figures = _targeted_suppression(
                table,
                settings,
                delta=delta,
                missing=missing,
                repeat=repeat,
                max_rounds=max_rounds,
                cell_budget=cell_budget,
                show_progress=show_progress,
            )
        elapsed = time.perf_counter() - started
        released = release.table.data
        if drop_suppressed and method == "generalize":
            released = released.filter(pl.Series(~release.suppressed_records))
        figures = {"data": str(data), "method": method, **figures, "elapsed_seconds": round(elapsed, 3)}
        console.print(
            f"[bold]{data.name}[/]: {table.n_records:,} records, method {method}, "
            f"quasi-identifiers {', '.join(release.quasi_identifiers)} — {elapsed:.2f} s"
            f"{' (heuristic search)' if release.heuristic else ''}"
        )
        _print_release(method, release, figures)
        output.parent.mkdir(parents=True, exist_ok=True)
        if histogram is not None:
            from sdckit.evaluate.plots import risk_histogram

            histogram.parent.mkdir(parents=True, exist_ok=True)
            risk_histogram(
                {
                    "original": release.search["risk_before"].risk,
                    "released": release.search["risk_after"].risk,
                },
                histogram,
                threshold=release.parameters["delta"],
                title=f"Record disclosure risk before and after targeted suppression — {data.name}",
            )
            console.print(f"histogram written to [bold]{histogram}[/]")
        write_table(released, output)
        console.print(f"release written to [bold]{output}[/]")
        if summary is not None:
            _write_json(summary, figures)


def _quasi_sensitive(
    table: Any,
    *,
    knowledge: Path,
    set_column: str | None,
    separator: str,
    k: int,
    c: float,
    l: float | None,  # noqa: E741
    t: float | None,
    time_limit: float,
    total_time_limit: float | None,
    strategy: str,
    show_progress: bool,
) -> tuple[Any, dict[str, Any]]:
    from sdckit.anonymize.quasi_sensitive import quasi_sensitive_anonymize
    from sdckit.models.quasi_sensitive import QSCLDiversity, QSTCloseness
    from sdckit.setvalued import ItemSets, read_knowledge
    from sdckit.table import Kind, Role

    if set_column is None:
        candidates = [
            a.name
            for a in table.schema.attributes
            if a.role is Role.QUASI_SENSITIVE or a.kind is Kind.SET_VALUED
        ]
        if len(candidates) != 1:
            raise ConfigError(
                "give --set-column: "
                + (
                    "no attribute has role quasi-sensitive or kind set-valued"
                    if not candidates
                    else f"several attributes could be the set-valued one ({', '.join(candidates)})"
                )
            )
        set_column = candidates[0]
    if set_column not in table.data.columns:
        raise ConfigError(f"--set-column '{set_column}' is not a column of the data")
    if l is not None and l != int(l):
        raise ConfigError(f"-l must be a whole number for QS (c,l)-diversity, got {l}")
    model = QSCLDiversity(c, int(l)) if l is not None else QSTCloseness(t)
    items = ItemSets.from_column(table.column(set_column), separator=separator)
    facts = read_knowledge(knowledge, vocabulary=items.vocabulary, separator=separator)
    with _progress(show_progress, "groups") as progress:
        release = quasi_sensitive_anonymize(
            table,
            set_column=set_column,
            knowledge=facts,
            k=k,
            model=model,
            separator=separator,
            strategy=strategy,
            time_limit=time_limit,
            total_time_limit=total_time_limit,
            progress=progress,
        )
    search = release.search
    figures = {
        "model": model.name,
        "k": k,
        "set_column": set_column,
        "strategy": strategy,
        "time_limit": time_limit,
        "total_time_limit": total_time_limit,
        "groups": search["groups"],
        "violating_before": search["violating_before"],
        "violating_after": search["violating_after"],
        "searched": search["searched"],
        "proven_optimal": search["proven_optimal"],
        "suppressed_items": search["suppressed_items"],
        "items": search["items"],
        "removal_cost_mean": search["removal_cost_mean"],
        "phase1_seconds": search["phase1_seconds"],
        "phase2_seconds": search["phase2_seconds"],
        **_class_figures(release),
        "metrics": {
            "generalization_ncp": search["generalization_ncp"],
            "removal_cost": search["removal_cost_mean"],
        },
    }
    return release, figures


def _parse_columns(text: str | None) -> list[list[str]] | None:
    """``"a,b;c,d"`` -> ``[["a", "b"], ["c", "d"]]``."""
    if text is None:
        return None
    columns = [[name.strip() for name in part.split(",")] for part in text.split(";")]
    for number, names in enumerate(columns, start=1):
        if not all(names):
            raise ConfigError(f"--column: column {number} of {text!r} has an empty attribute name")
    return columns


def _slicing(
    table: Any, method: str, options: dict[str, Any], progress: Callable[[int, int], None] | None
) -> tuple[Any, dict[str, Any]]:
    import math

    from sdckit.anonymize.slicing import slice_table

    sliced = slice_table(table, method=method, progress=progress, **options)
    sizes = [len(rows) for rows in sliced.buckets]
    membership = sliced.membership or {}

    def number(value: float) -> float | None:
        return None if value is None or not math.isfinite(value) else round(value, 6)

    figures = {
        "sensitive": sliced.sensitive,
        "columns": [list(c) for c in sliced.columns],
        "partition": sliced.partition,
        "l": sliced.l,
        "buckets": len(sizes),
        "smallest_bucket": min(sizes),
        "largest_bucket": max(sizes),
        "max_probability": number(sliced.max_probability),
        "l_achieved": number(sliced.l_achieved),
        "fake_tuples": membership.get("fake"),
        "membership": membership,
        "average_correlation": number(sliced.average_correlation),
        "pair_weighted_correlation": number(sliced.pair_weighted_correlation),
        "timings": {name: round(value, 4) for name, value in sliced.timings.items()},
        "parameters": sliced.parameters,
    }
    return sliced, figures


def _print_slicing(data: Path, table: Any, sliced: Any, figures: dict[str, Any], elapsed: float) -> None:
    console.print(
        f"[bold]{data.name}[/]: {table.n_records:,} records, method {figures['method']}, "
        f"sensitive {sliced.sensitive} — {elapsed:.2f} s"
    )
    columns = RichTable(title="Columns (sensitive last)", title_justify="left")
    columns.add_column("#", justify="right")
    columns.add_column("attributes")
    for number, names in enumerate(sliced.columns, start=1):
        columns.add_row(str(number), ", ".join(names))
    console.print(columns)
    console.print(
        f"buckets: {figures['buckets']:,}; smallest bucket: {figures['smallest_bucket']:,}; "
        f"l achieved: {figures['l_achieved']} (asked {figures['l']:g}); fake tuples: {figures['fake_tuples']}"
        f"{' (sampled)' if (figures['membership'] or {}).get('sampled') else ''}"
    )
    console.print(f"average correlation: {figures['average_correlation']}")


def _class_figures(release: Any) -> dict[str, Any]:
    sizes = release.class_sizes()
    return {
        "suppressed_records": release.n_suppressed,
        "equivalence_classes": int(len(sizes)),
        "smallest_class": int(sizes.min()) if len(sizes) else 0,
    }


def _cell_figures(release: Any) -> dict[str, Any]:
    return {
        "suppressed_cells": {
            "total": release.n_suppressed_cells,
            "per_attribute": release.suppressed_cells_per_attribute(),
        }
    }


def _achieved(release: Any, models: list[Any]) -> dict[str, float]:
    """The models re-checked independently on the released values (records all '*' left out)."""
    from sdckit.models import check_table

    recheck = check_table(release.table, list(release.quasi_identifiers), models)
    return {result.model: result.worst() for result in recheck.results}


def _generalize(
    table: Any, models: list[Any], suppression_limit: float, metric: str, max_nodes: int, show_progress: bool
) -> tuple[Any, dict[str, Any]]:
    from sdckit.anonymize.recoding import full_domain_generalization, release_metrics
    from sdckit.utility import release_ncp

    with _progress(show_progress, "lattice") as progress:
        release = full_domain_generalization(
            table,
            models,
            quasi_identifiers=_quasi_identifiers(table),
            suppression_limit=suppression_limit,
            metric=metric,
            max_nodes=max_nodes,
            progress=progress,
        )
    metrics = release_metrics(release)
    metrics["release_ncp"] = release_ncp(release)
    figures = {
        "models": [model.name for model in models],
        "levels": release.levels,
        **_class_figures(release),
        **_cell_figures(release),
        "metrics": metrics,
        "achieved": _achieved(release, models),
        "heuristic": release.heuristic,
        "search": release.search,
    }
    return release, figures


def _mondrian(table: Any, models: list[Any], mode: str, centroids: bool) -> tuple[Any, dict[str, Any]]:
    from sdckit.anonymize.mondrian import mondrian
    from sdckit.utility import release_ncp

    release = mondrian(
        table,
        models,
        quasi_identifiers=_quasi_identifiers(table),
        mode=mode,
        output="centroid" if centroids else "generalized",
    )
    figures = {
        "models": [model.name for model in models],
        "mode": mode,
        "output": "centroid" if centroids else "generalized",
        **_class_figures(release),
        **_cell_figures(release),
        "metrics": {"ncp": release_ncp(release)},
    }
    if not centroids:
        figures["achieved"] = _achieved(release, models)
    return release, figures


def _local_suppression(
    table: Any, k: int, importance: str | None, missing: str, show_progress: bool
) -> tuple[Any, dict[str, Any]]:
    from sdckit.anonymize.suppression import local_suppression
    from sdckit.utility import release_ncp

    order = None
    if importance is not None:
        order = [name.strip() for name in importance.split(",") if name.strip()]
    with _progress(show_progress, "suppression") as progress:
        release = local_suppression(
            table,
            k,
            quasi_identifiers=_quasi_identifiers(table),
            importance=order,
            missing=missing,
            progress=progress,
        )
    figures = {
        "k": k,
        "missing": missing,
        "importance": release.parameters.get("importance"),
        **_cell_figures(release),
        "metrics": {"ncp": release_ncp(release)},
    }
    return release, figures


def _targeted_suppression(
    table: Any,
    settings: Any,
    *,
    delta: float,
    missing: str | None,
    repeat: bool,
    max_rounds: int | None,
    cell_budget: int | None,
    show_progress: bool,
) -> tuple[Any, dict[str, Any]]:
    from sdckit.anonymize.suppression import targeted_suppression
    from sdckit.utility import release_ncp

    progress = (lambda message: console.print(f"[dim]{message}[/]")) if show_progress else None
    release = targeted_suppression(
        table,
        delta=delta,
        alpha=settings.risk.alpha,
        epsilon=settings.risk.epsilon,
        missing=missing or settings.risk.missing,
        weights=settings.data.weights,
        repeat=repeat,
        max_rounds=max_rounds,
        cell_budget=cell_budget,
        progress=progress,
    )
    search = release.search
    figures = {
        "delta": delta,
        "parameters": release.parameters,
        "high_risk_before": search["high_risk_before"],
        "high_risk_after": search["high_risk_after"],
        "rounds": search["rounds"],
        "irreducible": search["irreducible"],
        "stopped": search["stopped"],
        **_cell_figures(release),
        "metrics": {"ncp": release_ncp(release)},
    }
    return release, figures


def _print_release(method: str, release: Any, figures: dict[str, Any]) -> None:
    if release.levels is not None:
        levels = RichTable(title="Generalization levels", title_justify="left")
        for name in release.quasi_identifiers:
            levels.add_column(name, justify="right")
        levels.add_row(*(str(release.levels[name]) for name in release.quasi_identifiers))
        console.print(levels)
    if "equivalence_classes" in figures and method in ("generalize", "mondrian"):
        console.print(
            f"suppressed records: {figures['suppressed_records']:,}; equivalence classes: "
            f"{figures['equivalence_classes']:,}; smallest class: {figures['smallest_class']:,}"
        )
    if method in ("local-suppression", "targeted-suppression"):
        cells = figures["suppressed_cells"]
        table = RichTable(title=f"Suppressed cells: {cells['total']:,}", title_justify="left")
        table.add_column("attribute")
        table.add_column("cells", justify="right")
        for name, count in cells["per_attribute"].items():
            if count:
                table.add_row(name, f"{count:,}")
        console.print(table)
    if method == "quasi-sensitive":
        f = figures
        console.print(
            f"{f['model']}: {f['violating_before']:,} of {f['groups']:,} groups violated it after "
            f"k-anonymity (k = {f['k']}), {f['violating_after']:,} after suppressing "
            f"{f['suppressed_items']:,} of {f['items']:,} items; {f['proven_optimal']:,} of "
            f"{f['searched']:,} searches proven optimal within {f['time_limit']:g} s each"
        )
    if method == "targeted-suppression":
        console.print(
            f"records above {figures['delta']:g}: {figures['high_risk_before']:,} before, "
            f"{figures['high_risk_after']:,} after ({len(figures['rounds'])} round(s); {figures['stopped']})"
        )
        if figures["irreducible"]:
            console.print(
                f"[yellow]{figures['irreducible']:,} records stay above DELTA with every suppressible value "
                "suppressed[/]"
            )
    if figures.get("achieved"):
        console.print(
            "achieved: " + "; ".join(f"{name} → {value:.4g}" for name, value in figures["achieved"].items())
        )
    console.print(
        "utility: " + "; ".join(f"{name} {value:.4g}" for name, value in figures["metrics"].items())
    )


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


experiment_app = typer.Typer(
    help="Reproduce the experiments of the papers sdckit implements.", no_args_is_help=True
)
app.add_typer(experiment_app, name="experiment")


@experiment_app.command("targeted-suppression")
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

    with _user_errors():
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
        if output.exists() and not output.is_dir():
            raise ConfigError(f"--output {output} exists and is not a directory")
        started = time.perf_counter()
        settings = load_config(config)
        table = settings.read(data)

        def say(message: str) -> None:
            if not quiet:
                console.print(f"[dim]{time.perf_counter() - started:7.1f} s[/] {message}")

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
        paths = write_experiment(result, output, name=data.name)
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
        console.print(shown)
        for path in paths.values():
            console.print(f"written [bold]{path}[/]")
        _write_json(output / "summary.json", figures)


@experiment_app.command("slicing")
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

    with _user_errors():
        n_columns = numbers(columns, "--columns")
        l_values = numbers(ls, "--ls")
        if min(n_columns) < 2:
            raise ConfigError(f"--columns must be at least 2, got {min(n_columns)}")
        if min(l_values) < 1:
            raise ConfigError(f"--ls must be at least 1, got {min(l_values)}")
        if runs < 1:
            raise ConfigError(f"--runs must be at least 1, got {runs}")
        if output.exists() and not output.is_dir():
            raise ConfigError(f"--output {output} exists and is not a directory")
        started = time.perf_counter()

        def say(message: str) -> None:
            if not quiet:
                console.print(f"[dim]{time.perf_counter() - started:7.1f} s[/] {message}")

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
        paths = write_slicing_experiment(result, output, name=data.name)
        shown = RichTable(title=f"Average correlation inside the released columns — {data.name}")
        for column in ("columns", "slicing", "improved slicing"):
            shown.add_column(column, justify="right")
        pivot = result.correlation.pivot(on="method", index="columns", values="average_correlation")
        for row in pivot.iter_rows(named=True):
            shown.add_row(str(row["columns"]), f"{row['slicing']:.4f}", f"{row['improved slicing']:.4f}")
        console.print(shown)
        for path in paths.values():
            console.print(f"written [bold]{path}[/]")
        figures = summary(result, elapsed_seconds=time.perf_counter() - started)
        _write_json(output / "summary.json", figures)


@experiment_app.command("quasi-sensitive")
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

    Needs the Adult data for the quasi-identifiers (where: sdckit.experiments.data.adult_directory).
    Writes figure5.csv, figure6.csv, results.md, figure5.png, figure6.png, data.csv, knowledge.csv and
    summary.json.
    """
    from sdckit.experiments.quasi_sensitive import (
        quasi_sensitive_experiment,
        summary,
        write_quasi_sensitive_experiment,
    )

    with _user_errors():
        if records < 10:
            raise ConfigError(f"--records must be at least 10, got {records}")
        if not run_time_limit > 0:
            raise ConfigError(f"--run-time-limit must be a positive number of seconds, got {run_time_limit}")
        if output.exists() and not output.is_dir():
            raise ConfigError(f"--output {output} exists and is not a directory")
        started = time.perf_counter()

        def say(message: str) -> None:
            if not quiet:
                console.print(f"[dim]{time.perf_counter() - started:7.1f} s[/] {message}")

        settings: dict[str, Any] = {}
        if quick:
            settings = {"ls": (10, 30), "cs": (1.0, 2.0), "ts": (0.2, 0.4), "ks": (1, 5)}
        result, table, knowledge = quasi_sensitive_experiment(
            n_records=records, run_time_limit=run_time_limit, seed=seed, say=say, **settings
        )
        paths = write_quasi_sensitive_experiment(result, output, table, knowledge)
        for path in paths.values():
            console.print(f"written [bold]{path}[/]")
        _write_json(output / "summary.json", summary(result, elapsed_seconds=time.perf_counter() - started))
