"""What every command shares: options, reading the data and configuration, messages, progress,
summaries and the exit statuses. Commands parse, call the library, print and write; no computation.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from sdckit.cli import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_NOT_MET, EXIT_PIPE_CLOSED, EXIT_USAGE
from sdckit.cli._outputs import Outputs
from sdckit.cli._root import PipeClosed, quiet_on_closed_pipe
from sdckit.errors import SdcError, capped

if TYPE_CHECKING:
    from rich.progress import Progress


class _Console(Console):
    """rich's console, ending the command quietly when its reader has gone (rich's own answer is
    ``SystemExit(1)``), also where :func:`sdckit.cli._root.run` has not set it for every console."""

    def on_broken_pipe(self) -> None:
        quiet_on_closed_pipe(self)


console = _Console()
errors = _Console(stderr=True, soft_wrap=True)  # messages unbroken: paths stay copyable

TABLE_SUFFIXES = (".csv", ".tsv", ".parquet", ".pq")

# Shared options, defined once --------------------------------------------------------------------

DataArgument = Annotated[Path, typer.Argument(help="Microdata file: CSV (delimiter sniffed) or Parquet.")]
ConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--config",
        "-c",
        help="YAML configuration of the attributes (or their roles inline: --qi, --sensitive).",
    ),
]
# The roles inline, for the simple case without a configuration file (sdcMicro's keyVars=); with -c
# each replaces that role of the configuration (sdckit.api.with_roles).
QuasiIdentifiersOption = Annotated[
    str | None,
    typer.Option(
        "--qi",
        help="The quasi-identifiers, comma-separated: instead of a configuration, or replacing its "
        "quasi-identifiers. Kinds are taken from the data.",
    ),
]
SensitiveOption = Annotated[
    str | None,
    typer.Option(
        "--sensitive",
        help="The sensitive attributes, comma-separated: instead of (or replacing) the configuration's.",
    ),
]
SamplingWeightOption = Annotated[
    str | None,
    typer.Option(
        "--weight", help="The column of sampling weights (replaces the configuration's data.weights)."
    ),
]
ReleaseOption = Annotated[Path, typer.Option("--output", "-o", help="Release file: .csv, .tsv or .parquet.")]
SummaryOption = Annotated[
    Path | None,
    typer.Option("--summary", help="Write the figures as JSON (a release's summary also holds its recipe)."),
]
QuietOption = Annotated[bool, typer.Option("--quiet", "-q", help="No progress display.")]
AllowViolationsOption = Annotated[
    bool,
    typer.Option(
        "--allow-violations",
        help="Write the release even if it does not satisfy what was asked (exit status 3 all the same).",
    ),
]


class NotMet(Exception):
    """The release does not satisfy what was asked (exit status 3)."""


@contextmanager
def user_errors() -> Iterator[None]:
    """One line and an exit status for every way a command can fail; library warnings in yellow.
    Library messages name parameters as options here (``--max-rounds``, :func:`sdckit.params.spell`)."""
    from sdckit.params import options_spelled

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with options_spelled():
                yield
        except SdcError as error:
            _show_warnings(caught)
            # escaped: a message may hold brackets that are not markup (pip install 'sdckit[server]')
            errors.print(f"[bold red]error:[/] {escape(capped(str(error)))}", highlight=False)
            raise typer.Exit(EXIT_USAGE) from None
        except NotMet as error:
            _show_warnings(caught)
            errors.print(f"[bold red]not satisfied:[/] {escape(capped(str(error)))}", highlight=False)
            raise typer.Exit(EXIT_NOT_MET) from None
        except (typer.Exit, typer.Abort):
            _show_warnings(caught)
            raise
        except KeyboardInterrupt:
            raise typer.Exit(EXIT_INTERRUPTED) from None
        except PipeClosed:
            raise typer.Exit(EXIT_PIPE_CLOSED) from None
        except Exception as error:
            if _caused_by_interrupt(error):
                raise typer.Exit(EXIT_INTERRUPTED) from None
            if isinstance(error, BrokenPipeError) and _standard_output_closed():
                raise typer.Exit(EXIT_PIPE_CLOSED) from None
            _show_warnings(caught)
            errors.print(f"[bold red]internal error:[/] {type(error).__name__}: {error}", highlight=False)
            errors.print("please report this with the command you ran", style="dim")
            raise typer.Exit(EXIT_INTERNAL) from None
        _show_warnings(caught)


def _standard_output_closed() -> bool:
    """Whether the reader of standard output or error has gone (a pipe whose read end is closed
    polls as an error), so that a broken pipe of that kind is told from one of a socket or child."""
    import select

    for stream in (sys.__stdout__, sys.__stderr__):
        try:
            descriptor = stream.fileno() if stream is not None else -1
        except (OSError, ValueError):
            continue
        if descriptor < 0 or not hasattr(select, "poll"):
            continue
        poller = select.poll()
        poller.register(descriptor, select.POLLOUT)
        if any(events & select.POLLERR for _, events in poller.poll(0)):
            return True
    return False


def _caused_by_interrupt(error: BaseException) -> bool:
    """numba re-raises an interrupt inside compiled code as SystemError with the interrupt attached."""
    from sdckit.cli import interrupts

    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, KeyboardInterrupt):
            return True
        seen = seen.__cause__ or seen.__context__
    return interrupts.received


def _show_warnings(caught: list[warnings.WarningMessage]) -> None:
    seen = set()
    for warning in caught:
        text = str(warning.message)
        if text not in seen and issubclass(warning.category, UserWarning):
            seen.add(text)
            errors.print(f"[bold yellow]warning:[/] {escape(capped(text))}", highlight=False)


#: The progress bars on screen (innermost last) with their label: a stage message names what the
#: innermost one measures.
_bars: list[tuple[Progress, Any, str]] = []


@contextmanager
def progress_bar(enabled: bool, description: str) -> Iterator[Callable[[int, int], None] | None]:
    """``progress(done, total)`` for the library's hook (:attr:`sdckit.context.Context.progress`),
    drawn as a transient rich progress bar on stderr; None (no bar) with --quiet or when stderr is
    not a terminal, where the stage lines alone say what happens, so that a log stays readable."""
    if not enabled or not errors.is_terminal:
        yield None
        return
    # Imported here: a run with --quiet or without a terminal draws no bar.
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=errors,
        transient=True,
    )
    task = bar.add_task(description, total=None)

    def update(done: int, total: int) -> None:
        bar.update(task, completed=done, total=total)

    with bar:
        _bars.append((bar, task, description))
        try:
            yield update
        finally:
            _bars.pop()


def stage_messages(quiet: bool, started: float) -> Callable[[str], None] | None:
    """``say(message)``: a timed line on stderr per stage of a long run (None with --quiet). Under a
    progress bar the line is printed above it, and the bar is relabelled for the new stage and
    restarted (its counts belong to the stage before until the library reports again)."""
    if quiet:
        return None

    def say(message: str) -> None:
        errors.print(f"[dim]{time.perf_counter() - started:7.1f} s {message}[/]", highlight=False)
        if _bars:
            bar, task, label = _bars[-1]
            bar.update(task, description=f"{label}: {message}", completed=0, total=None)

    return say


# The first run compiles the numba kernels (tens of seconds): say so --------------------------------


class _CompileNotice:
    """Says once on stderr that sdckit's kernels are being compiled, when numba announces a
    compilation of one (its "numba:compile" event: a kernel loaded from numba's on-disk cache is not
    compiled and not announced), naming the command that runs; nothing with --quiet.

    A compilation in a daemon thread is not announced: that is background work the command does not
    wait for (the warm-up of the counting kernels while the data is read, see
    :func:`sdckit._kernels_counting.warm_up_in_background`, which a short command may leave unfinished on
    every run); the command's own thread and the worker threads it waits for are not daemons."""

    def __init__(self, entry: str, arguments: Sequence[str]) -> None:
        self.entry = entry
        self.arguments = arguments
        self.said = False

    def compiling(self, dispatcher: Any) -> None:
        import threading

        module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
        if self.said or not module.startswith("sdckit") or threading.current_thread().daemon:
            return
        self.said = True
        label, quiet = self._command()
        if not quiet:
            errors.print(f"compiling sdckit's kernels for {label} (first run only)…", highlight=False)

    def _command(self) -> tuple[str, bool]:
        """The running command's name (an anonymization method by its own name) and its --quiet;
        outside the command's thread (a worker), the root entry and a -q/--quiet among the
        arguments."""
        from sdckit.cli._click import get_current_context

        context = get_current_context(silent=True)
        if context is None:
            return self.entry, bool({"-q", "--quiet"} & set(self.arguments))
        names = context.command_path.split()[1:]
        if len(names) > 1 and names[0] == "anonymize":
            names = names[1:]
        return " ".join(names) or self.entry, bool(context.params.get("quiet"))


def _numba_listener(notice: _CompileNotice) -> Any:
    from numba.core import event

    class Listener(event.Listener):
        def on_start(self, event: Any) -> None:
            notice.compiling(event.data["dispatcher"])

        def on_end(self, event: Any) -> None:
            pass

    return Listener()


class _AfterImport(importlib.abc.MetaPathFinder):
    """Calls ``then()`` right after the package ``name`` is first imported: a one-off finder that
    lets the others find the package and wraps the loader they return."""

    def __init__(self, name: str, then: Callable[[], None]) -> None:
        self.name = name
        self.then = then

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != self.name:
            return None
        self.remove()
        spec = importlib.util.find_spec(fullname)
        if spec is not None and spec.loader is not None:
            execute = spec.loader.exec_module

            def exec_module(module: Any) -> None:
                execute(module)
                self.then()

            spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec

    def remove(self) -> None:
        if self in sys.meta_path:
            sys.meta_path.remove(self)


@contextmanager
def compile_notice(entry: str, arguments: Sequence[str]) -> Iterator[None]:
    """Within: one line on stderr if sdckit's numba kernels get compiled (see :class:`_CompileNotice`)
    while the command ``entry`` runs with ``arguments``. The library itself stays silent. numba is not
    imported for it: a command that never loads numba does not pay for its import (the listener is
    installed when numba is imported)."""
    notice = _CompileNotice(entry, arguments)
    installed: list[tuple[Any, Any]] = []

    def install() -> None:
        from numba.core import event

        listener = _numba_listener(notice)
        event.register("numba:compile", listener)
        installed.append((event, listener))

    waiting = None
    if "numba" in sys.modules:
        install()
    else:
        waiting = _AfterImport("numba", install)
        sys.meta_path.insert(0, waiting)
    try:
        yield
    finally:
        if waiting is not None:
            waiting.remove()
        for event, listener in installed:
            event.unregister("numba:compile", listener)


@dataclass(frozen=True)
class _Verbatim:
    text: str


@dataclass
class Report:
    """What a command prints once its outputs are written: lines and rich renderables."""

    items: list[Any] = field(default_factory=list)

    def line(self, text: str) -> None:
        self.items.append(text)

    def add(self, renderable: Any) -> None:
        self.items.append(renderable)

    def verbatim(self, text: str) -> None:
        """Text printed as it is: no markup, lines never broken (a markdown table stays copyable)."""
        self.items.append(_Verbatim(text))

    def show(self, written: Sequence[Path] = ()) -> None:
        for item in self.items:
            if isinstance(item, _Verbatim):
                console.print(item.text, markup=False, highlight=False, soft_wrap=True)
            elif isinstance(item, str):
                console.print(item, highlight=False)
            else:
                console.print(item)
        for path in written:
            console.print(f"written [bold]{path}[/]", highlight=False)


@dataclass(frozen=True)
class InlineRoles:
    """The roles given on the command line: ``--qi``, ``--sensitive``, ``--weight`` as typed."""

    quasi_identifiers: str | None = None
    sensitive: str | None = None
    weight: str | None = None


#: The options of the inline roles: parameter name of a generated command -> (field, option, annotation).
_ROLE_OPTIONS = {
    "inline_quasi_identifiers": ("quasi_identifiers", "--qi", QuasiIdentifiersOption),
    "inline_sensitive": ("sensitive", "--sensitive", SensitiveOption),
    "inline_weight": ("weight", "--weight", SamplingWeightOption),
}
_ROLE_SPELLING = {field: option for field, option, _ in _ROLE_OPTIONS.values()}


def role_parameters(taken: Sequence[str] = ()) -> list[Any]:
    """The ``--qi``, ``--sensitive`` and ``--weight`` options of a command made from a registry, less
    those the command already takes as its own (slicing's ``--sensitive`` names the same attribute)."""
    import inspect

    return [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=annotation)
        for name, (_, option, annotation) in _ROLE_OPTIONS.items()
        if option not in taken
    ]


def pop_roles(values: dict[str, Any]) -> InlineRoles:
    """The inline roles of a generated command's values, removed from them."""
    return InlineRoles(**{field: values.pop(name, None) for name, (field, _, _) in _ROLE_OPTIONS.items()})


def load_settings(config: Path | None, roles: InlineRoles = InlineRoles()) -> Any:
    """The configuration of a command: the file of ``-c``, with the roles given inline
    (:func:`sdckit.api.with_roles`: each inline role replaces that role of the file), or the inline
    roles alone. Neither is a usage error naming both ways."""
    from sdckit.api import with_roles
    from sdckit.config import load_config
    from sdckit.errors import ConfigError

    inline = (roles.quasi_identifiers, roles.sensitive, roles.weight)
    if config is None and all(value is None for value in inline):
        raise ConfigError(
            "no configuration: give -c/--config FILE (YAML), or the roles inline: --qi a,b,c "
            "[--sensitive s] [--weight w]"
        )
    settings = load_config(config) if config is not None else None
    return with_roles(
        settings,
        quasi_identifiers=column_names(roles.quasi_identifiers, "--qi"),
        sensitive=column_names(roles.sensitive, "--sensitive"),
        weight=column_names(roles.weight, "--weight", single=True),
        spelling=_ROLE_SPELLING,
    )


def column_names(text: str | None, option: str, single: bool = False) -> Any:
    """``"a, b,c"`` -> ``["a", "b", "c"]`` (``single``: one name); None stays None."""
    from sdckit.errors import ConfigError

    if text is None:
        return None
    names = [name.strip() for name in text.split(",")] if not single else [text.strip()]
    if not all(names):
        what = "a column name" if single else "column names separated by commas"
        raise ConfigError(f"{option} must be {what}, got {text!r}")
    return names[0] if single else names


def read_input(
    data: Path, config: Path | None, release: bool = False, roles: InlineRoles = InlineRoles()
) -> tuple[Any, Any]:
    """The configuration (:func:`load_settings`) and the table it describes (``release``: a release
    sdckit wrote, read with the configuration that produced it, see
    :meth:`sdckit.config.Config.read_release`)."""
    settings = load_settings(config, roles)
    return settings, settings.read_release(data) if release else settings.read(data)


def stage_json(outputs: Outputs, path: Path | None, figures: dict[str, Any]) -> None:
    if path is None:  # no --summary: nothing to serialize (nor the recipes module to import)
        return
    from sdckit.recipes import dumps

    text = dumps(figures)
    outputs.stage(path, lambda temporary: temporary.write_text(text))


def stage_table(outputs: Outputs, path: Path | None, table: Any) -> None:
    from sdckit.io import write_table

    outputs.stage(path, lambda temporary: write_table(table, temporary))


def finish(outputs: Outputs, report: Report, violation: str | None = None, allowed: bool = False) -> None:
    """Write the outputs (unless a violation forbids them), then print the report; exit 3 on a
    violation whatever was written."""
    if violation and not allowed:
        raise NotMet(f"{violation}; nothing written (--allow-violations writes it anyway)")
    written = outputs.commit()
    report.show(written)
    if violation:
        raise NotMet(violation)


def whole_numbers(text: str, option: str, minimum: int, ranges: bool = True) -> tuple[int, ...]:
    """``"2,5,10"`` (or, with ``ranges``, ``"2-10"``) -> whole numbers of at least ``minimum``."""
    from sdckit.errors import ConfigError

    allowed = "whole numbers (a list or a range a-b)" if ranges else "whole numbers separated by commas"
    try:
        if ranges and "-" in text.strip().lstrip("-") and "," not in text:
            low, high = (int(part) for part in text.split("-", 1))
            values = tuple(range(low, high + 1))
        else:
            values = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise ConfigError(f"{option} must be {allowed}, got {text!r}") from None
    if not values:
        raise ConfigError(f"{option} must name at least one number, got {text!r}")
    if min(values) < minimum:
        raise ConfigError(f"{option} must list whole numbers of at least {minimum}, got {text!r}")
    return values


def in_range(
    value: float, option: str, minimum: float | None, maximum: float | None, exclusive_minimum: bool = False
) -> None:
    """Refuse NaN, infinities and values outside [minimum, maximum] (an open minimum if asked)."""
    import math

    from sdckit.errors import ConfigError

    low_ok = minimum is None or (value > minimum if exclusive_minimum else value >= minimum)
    if not math.isfinite(value) or not low_ok or (maximum is not None and value > maximum):
        bounds = (
            f"in [{minimum:g}, {maximum:g}]"
            if minimum is not None and maximum is not None
            else f"{'>' if exclusive_minimum else '>='} {minimum:g}"
        )
        raise ConfigError(f"{option} must be a finite number {bounds}, got {value}")
