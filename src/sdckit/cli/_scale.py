"""The options that choose where a command that reads microdata runs (``--engine``, ``--scheduler``,
``--workers``, ``--chunk-rows``), and writing the partitioned outputs of such a run."""

from __future__ import annotations

import inspect
import secrets
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

PANEL = "scale (docs/scaling.md)"

EngineOption = Annotated[
    str | None,
    typer.Option(
        "--engine",
        help="local (default: in this process; out of core with --chunk-rows or for a data set larger than "
        "memory) or dask (partitions as tasks of a Dask cluster).",
        rich_help_panel=PANEL,
    ),
]
SchedulerOption = Annotated[
    str | None,
    typer.Option(
        "--scheduler",
        help="Address of a running Dask scheduler to join (e.g. tcp://10.0.0.5:8786; default: "
        "$SDCKIT_SCHEDULER, else an embedded cluster). Only with --engine dask.",
        rich_help_panel=PANEL,
    ),
]
WorkersOption = Annotated[
    int | None,
    typer.Option(
        "--workers",
        help="Worker processes of the embedded Dask cluster (default: one per core). "
        "Only with --engine dask.",
        rich_help_panel=PANEL,
    ),
]
ChunkRowsOption = Annotated[
    int | None,
    typer.Option(
        "--chunk-rows",
        help="Read the data in partitions of about this many records (default 1,000,000 when the data is "
        "read in partitions); the memory a partition needs bounds the memory of a worker.",
        rich_help_panel=PANEL,
    ),
]

#: The names of the options, for the shared-option lists of generated commands.
NAMES = ("engine", "scheduler", "workers", "chunk_rows")


def scale_parameters() -> list[inspect.Parameter]:
    """The four options as keyword parameters of a generated command (default None)."""
    annotations = (EngineOption, SchedulerOption, WorkersOption, ChunkRowsOption)
    return [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=annotation)
        for name, annotation in zip(NAMES, annotations, strict=True)
    ]


@dataclass(frozen=True)
class Scale:
    """What the scale options asked for."""

    engine: str | None = None
    scheduler: str | None = None
    workers: int | None = None
    chunk_rows: int | None = None

    @classmethod
    def of(cls, values: dict[str, Any]) -> Scale:
        return cls(**{name: values.get(name) for name in NAMES})

    def check(self, command: str, covered: bool) -> None:
        """Refuse what this command cannot use (an option is never silently ignored)."""
        from sdckit.errors import ConfigError
        from sdckit.scale.engine import ENGINES

        if self.engine is not None and self.engine not in ENGINES:
            raise ConfigError(f"--engine must be one of {', '.join(ENGINES)}, got {self.engine!r}")
        for option, value in (("--scheduler", self.scheduler), ("--workers", self.workers)):
            if value is not None and self.engine != "dask":
                raise ConfigError(f"{option} is for --engine dask (the local engine runs in this process)")
        if self.scheduler is not None and self.workers is not None:
            raise ConfigError(
                "--workers sizes the embedded cluster; a cluster joined with --scheduler has its own"
            )
        if self.workers is not None and self.workers < 1:
            raise ConfigError(f"--workers must be at least 1, got {self.workers}")
        if self.chunk_rows is not None and self.chunk_rows < 1:
            raise ConfigError(f"--chunk-rows must be at least 1, got {self.chunk_rows}")
        if not covered and (self.engine == "dask" or self.chunk_rows is not None):
            from sdckit.scale import covered_commands

            raise ConfigError(
                f"{command} does not run over partitions (--engine dask, --chunk-rows); "
                "the commands that do: "
                f"{', '.join(covered_commands())}"
            )
        if self.engine == "dask":
            from sdckit._extras import require

            require("scale", feature="--engine dask")

    def partitioned(self, data: Path) -> bool:
        """Whether to run over partitions: asked for, or the data is a data set or larger than memory."""
        from sdckit._files import available_memory
        from sdckit.io import is_dataset

        if self.engine == "dask" or self.chunk_rows is not None:
            return True
        if is_dataset(data):
            return True
        available = available_memory()
        try:
            size = data.stat().st_size
        except OSError:
            return False
        return available is not None and size * 4 > available

    def run(
        self, data: Path, function: Callable[..., Any], *args: Any, folder: Path | None, progress: Any
    ) -> Any:
        """``function(dataset, *args, engine, folder, progress)`` on the partitions of ``data``."""
        from sdckit.scale.dataset import DEFAULT_CHUNK_ROWS, open_dataset
        from sdckit.scale.engine import make_engine

        dataset = open_dataset(data, self.chunk_rows or DEFAULT_CHUNK_ROWS)
        with make_engine(self.engine or "local", self.scheduler, self.workers) as engine:
            return function(dataset, *args, engine, folder, progress)


def parts_folder(output: Path | None) -> Path | None:
    """A new hidden folder beside ``output`` for the parts a run writes (removed on any way out)."""
    from sdckit.cli import _outputs

    if output is None:
        return None
    parent = output.parent if output.parent.exists() else Path.cwd()
    folder = parent / f".{output.name}.parts.{secrets.token_hex(6)}"
    folder.mkdir()
    _outputs._pending.add(folder)
    return folder


def stage_parts(outputs: Any, path: Path | None, parts: tuple[Path, ...]) -> None:
    """Stage ``parts`` (Parquet files in record order) as the output ``path``: one file (.parquet or
    .csv, written by streaming them through) or, for a path without suffix, a folder of the parts."""
    if path is None:
        return
    if path.suffix == "":
        outputs.stage(path, lambda temporary: _move_parts(parts, temporary))
        return

    def write(temporary: Path) -> None:
        import polars as pl

        scan = pl.scan_parquet([str(part) for part in parts])
        if path.suffix.lower() in (".csv", ".tsv"):
            scan.sink_csv(temporary, separator="\t" if path.suffix.lower() == ".tsv" else ",")
        else:
            scan.sink_parquet(temporary)

    outputs.stage(path, write)


def _move_parts(parts: tuple[Path, ...], folder: Path) -> None:
    for part in parts:
        shutil.move(str(part), folder / part.name)


def stage_frame_parts(outputs: Any, path: Path | None, frame: Any) -> None:
    """An in-memory per-record frame written where a partitioned run writes its parts: a path without
    suffix is a folder holding it as one part."""
    if path is None:
        return
    if path.suffix == "":
        data = getattr(frame, "data", frame)
        outputs.stage(path, lambda temporary: data.write_parquet(temporary / "part-00000.parquet"))
        return
    from sdckit.cli._common import stage_table

    stage_table(outputs, path, frame)


def declare_records_output(outputs: Any, path: Path | None, option: str, suffixes: tuple[str, ...]) -> None:
    """Declare a per-record output: a file with one of ``suffixes``, or a folder (a path without suffix)."""
    if path is None:
        return
    if path.suffix == "":
        outputs.directory(path, option, parts=True)
    elif path.suffix.lower() not in suffixes:
        from sdckit.errors import ConfigError

        raise ConfigError(
            f"{option} {path}: the file must end in {' or '.join(suffixes)} (a path without suffix is a "
            "folder of Parquet parts)"
        )
    else:
        outputs.file(path, option, suffixes)


def remove_folder(folder: Path | None) -> None:
    from sdckit.cli import _outputs

    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
        _outputs._pending.discard(folder)


@dataclass(frozen=True)
class Computed:
    """What a command computed: its result, the Parquet parts of a run over partitions (None in
    memory), the number of records, and the working folder to remove once the outputs are written."""

    result: Any
    parts: tuple[Path, ...] | None
    records: int
    folder: Path | None
    #: A run over partitions that gives its figures itself (result None): them, and its violation.
    figures: dict[str, Any] | None = None
    violation: str | None = None


def run_where_asked(
    scale: Scale,
    command: str,
    scaled: Callable[..., Any] | None,
    data: Path,
    output: Path | None,
    quiet: bool,
    in_memory: Callable[[], tuple[Any, int]],
    *args: Any,
) -> Computed:
    """Run ``scaled(dataset, *args, engine, folder, progress)`` over the partitions of ``data`` when
    the scale options or the data ask for it (``scaled`` None: the command has no such run), else
    ``in_memory()`` (its result and number of records)."""
    from sdckit.cli._common import progress_bar

    scale.check(command, scaled is not None)
    if scaled is None or not scale.partitioned(data):
        result, records = in_memory()
        return Computed(result, None, records, None)
    folder = parts_folder(output)
    try:
        with progress_bar(not quiet, "partitions") as progress:
            run = scale.run(data, scaled, *args, folder=folder, progress=progress)
    except BaseException:
        remove_folder(folder)
        raise
    if run.result is None:
        return Computed(None, run.parts, run.records, folder, run.figures, run.details.get("violation"))
    return Computed(run.result, run.parts, run.records, folder)
