"""Writing a table or release as CSV or Parquet, atomically (a reader never sees half a file)."""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import polars as pl

from sdckit.errors import ConfigError, InputError
from sdckit.io.common import PARQUET_SUFFIXES, _first_line
from sdckit.io.frames import to_polars
from sdckit.io.parquet import _stored_types, _write_parquet_as_stored
from sdckit.table import Table


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Write a file all at once or not at all.

    Yields a temporary path in the directory of ``path`` (hidden, ending in the same extension, so
    writers that choose the format by extension still work); when the ``with`` block ends normally
    the temporary file is renamed to ``path`` (atomic on POSIX and Windows), and when it raises the
    temporary file is deleted and ``path`` is left as it was.
    """
    target = Path(path)
    directory = target.parent
    if not directory.is_dir():
        raise InputError(f"{target}: cannot write: the directory '{directory}' does not exist")
    temporary = directory / f".{target.name}.{secrets.token_hex(6)}.tmp{target.suffix}"
    try:
        yield temporary
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise


def write_table(frame: pl.DataFrame | Table | Any, path: str | os.PathLike[str]) -> None:
    """Write a table to CSV (``.csv``, or ``.tsv`` tab-separated; missing values as empty fields) or
    Parquet (``.parquet``, ``.pq``), chosen by the extension, atomically (see :func:`atomic_write`).

    In Parquet, a column of a :class:`Table` read from a Parquet file that still has the polars type
    it was read as is written with its Arrow type in that file (:attr:`Attribute.stored_type`): an
    unchanged column comes back with the type it had."""
    data = frame.data if isinstance(frame, Table) else to_polars(frame)
    stored = _stored_types(frame, data) if isinstance(frame, Table) else {}
    target = Path(path)
    suffix = target.suffix.lower()
    writer: Callable[[Path], Any]
    if suffix in PARQUET_SUFFIXES and stored:

        def writer(temporary: Path) -> None:
            _write_parquet_as_stored(data, stored, temporary)
    elif suffix in PARQUET_SUFFIXES:
        # zstd at level 1: files as small as at polars' default level, written in half the time.

        def writer(temporary: Path) -> None:
            data.write_parquet(temporary, compression="zstd", compression_level=1)
    elif suffix in (".csv", ".tsv"):
        separator = "\t" if suffix == ".tsv" else ","

        def writer(temporary: Path) -> None:
            data.write_csv(temporary, separator=separator)
    else:
        raise ConfigError(
            f"{path}: cannot tell the format from the extension {suffix or '(none)'!r}; "
            "use .csv, .tsv, .parquet or .pq"
        )
    written: Path | None = None
    try:
        with atomic_write(target) as temporary:
            written = temporary
            writer(temporary)
    except (OSError, pl.exceptions.PolarsError) as error:
        reason = _first_line(error)
        if written is not None:  # the writer names the temporary file, which the user never asked for
            reason = reason.replace(f": {written}", "").replace(str(written), str(path))
        raise InputError(f"{path}: cannot write: {reason}") from None
