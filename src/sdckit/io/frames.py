"""Data frames in memory: polars (eager or lazy) and pandas, as one polars DataFrame."""

from __future__ import annotations

from typing import Any

import polars as pl


def to_polars(frame: Any) -> pl.DataFrame:
    """A polars DataFrame from a polars or pandas DataFrame (pandas is optional)."""
    if isinstance(frame, pl.DataFrame):
        return frame
    if isinstance(frame, pl.LazyFrame):
        return frame.collect()
    module = type(frame).__module__
    if module.startswith("pandas"):
        return pl.from_pandas(frame)
    raise TypeError(f"expected a polars or pandas DataFrame, got {type(frame).__name__}")
