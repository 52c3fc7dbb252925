"""What every anonymization method returns: the released table and a record of what was done."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sdckit.hierarchy import Hierarchy
from sdckit.table import Table
from sdckit.utility.base import GeneralizationView


@dataclass(frozen=True)
class Release:
    """A released table and how it was made.

    ``table`` is the release (same row order as the original; identifiers dropped);
    ``suppressed_records`` flags the records whose quasi-identifiers were all suppressed;
    ``classes`` gives each record's equivalence class (-1 when suppressed); ``levels`` the
    generalization level of each quasi-identifier for full-domain generalization; ``view`` the
    distinct-combination view the utility metrics read; ``heuristic`` says whether the search
    stopped short of proving optimality.
    """

    table: Table
    original: Table
    method: str
    parameters: dict[str, Any]
    quasi_identifiers: tuple[str, ...]
    suppressed_records: np.ndarray
    classes: np.ndarray
    seed: int | None = None
    levels: dict[str, int] | None = None
    hierarchies: dict[str, Hierarchy] = field(default_factory=dict)
    view: GeneralizationView | None = None
    heuristic: bool = False
    search: dict[str, Any] = field(default_factory=dict)

    @property
    def n_suppressed(self) -> int:
        return int(np.count_nonzero(self.suppressed_records))

    @property
    def n_classes(self) -> int:
        kept = self.classes[self.classes >= 0]
        return int(len(np.unique(kept))) if len(kept) else 0

    def class_sizes(self) -> np.ndarray:
        """Records per (non-suppressed) equivalence class."""
        kept = self.classes[self.classes >= 0]
        if not len(kept):
            return np.zeros(0, dtype=np.int64)
        return np.unique(kept, return_counts=True)[1]
