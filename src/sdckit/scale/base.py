"""What every method that runs over partitions returns, and the names they share."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: The column holding each record's number (0-based, in the order of the source) in spilled files.
RECORD = "__record"


@dataclass(frozen=True)
class ScaledRun:
    """The result of a method run over partitions.

    ``figures`` are the figures of the method's report (the same keys as the in-memory run's summary,
    where they apply); ``parts`` are the Parquet files written, in record order: together they are
    the per-record output (scores, or the release), each record where it was in the input.
    """

    figures: dict[str, Any]
    parts: tuple[Path, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)
