"""Reading and writing tables: CSV, Parquet (files and partitioned data sets), and pandas or
polars frames in memory (as polars' ``io/csv/``, ``io/parquet/``). The types live in
:mod:`sdckit.table`; the columns that no configuration describes pass through unchanged."""

from sdckit.io.common import (
    DEFAULT_MISSING_VALUES,
    DELIMITER_CANDIDATES,
    FRAME_LABEL,
    PARQUET_SUFFIXES,
    FrameChunk,
)
from sdckit.io.csv import sniff_delimiter
from sdckit.io.frames import to_polars
from sdckit.io.parquet import dataset_files, is_dataset
from sdckit.io.read import read_table
from sdckit.io.write import atomic_write, write_table

__all__ = [
    "DEFAULT_MISSING_VALUES",
    "DELIMITER_CANDIDATES",
    "FRAME_LABEL",
    "PARQUET_SUFFIXES",
    "FrameChunk",
    "atomic_write",
    "dataset_files",
    "is_dataset",
    "read_table",
    "sniff_delimiter",
    "to_polars",
    "write_table",
]
