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

    ``result`` is the method's in-memory result type computed on the distinct patterns, with their
    multiplicities (so its summary and report are the in-memory ones), or None where the method
    gives ``figures`` itself (the figures of its report); ``parts`` are the Parquet files written, in
    record order: together they are the per-record output (scores, or the release). ``records`` and
    ``patterns`` say how many records were read and how many distinct patterns they made.
    """

    figures: dict[str, Any] = field(default_factory=dict)
    parts: tuple[Path, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)
    result: Any = None
    records: int = 0
    patterns: int = 0
