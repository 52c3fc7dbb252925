"""What a method or a measure may read besides its table and parameters, and the extra files it
may write. Kept apart from :mod:`sdckit.anonymize` so that measures import it without loading every
anonymization method."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ProgressCallback = Callable[[int, int], None]
StageCallback = Callable[[str], None]


@dataclass(frozen=True)
class Context:
    """What a method may read besides the table and its parameters.

    ``config``: the :class:`~sdckit.config.Config` the table was read with (its ``risk`` section
    gives defaults of the risk-driven methods, its ``data.weights`` the sampling weights), or None;
    ``progress``: ``progress(done, total)``, called by a long computation once per chunk or
    iteration (never per record) with counts that grow to ``total``; ``stage``: ``stage(message)``
    as a method or measure that proceeds in stages starts the next one (its progress counts start
    again); ``original``: for a measure that accepts it (``sdckit risk <measure> RELEASE --original
    ORIGINAL``), the original data the measured table is a release of, read as the adversary knows
    it (see :mod:`sdckit.coverage`), or None.

    Both callbacks are None by default: the library prints nothing. The command line draws
    ``progress`` as a rich progress bar on a terminal and prints each stage as a timed line
    (:func:`sdckit.cli._common.progress_bar`, :func:`sdckit.cli._common.stage_messages`); the
    workbench writes both to its job's progress file.
    """

    config: Any = None
    progress: ProgressCallback | None = None
    stage: StageCallback | None = None
    original: Any = None


@dataclass(frozen=True)
class ExtraOutput:
    """A file a method can write besides the release (for example a histogram): the command-line
    option, its help, the accepted suffixes and ``write(release, path, title)``."""

    option: str
    help: str
    suffixes: tuple[str, ...]
    write: Callable[[Any, Path, str], None]


__all__ = ["Context", "ExtraOutput", "ProgressCallback", "StageCallback"]
