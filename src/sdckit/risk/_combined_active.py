"""The patterns whose combined risk some known set can change (:mod:`sdckit.risk.combined`): a known
set's contributions are added to those only, when they are few."""

from __future__ import annotations

from typing import Any

import numpy as np

# Contributions are added to the patterns that some contribution can change only (the others read
# nowhere) when they are at most this share of the patterns; above, every pattern in one pass.
ACTIVE_SHARE = 0.5


class _ActivePatterns:
    """The patterns whose risk some known set can change, when they are few: those whose full unknown
    set weighs something (C > 0, or C = 0 with a weighing candidate attribute). For every other
    pattern, C_UKS = C - (weights of the known attributes) is +0 in every known set, so each of its
    contributions is PK * alpha * (+0) * (a finite inverse count) = +0: its risk is +0, its largest
    contribution +0 and its top known set the first one, the empty set (0 beats the initial -inf, and
    no later +0 beats it). Their contributions are therefore not added at all: the others' arrays
    are compacted in ``active``'s order, and :func:`sdckit.frequency.add_known_contributions_at`
    reads the keys of those patterns only. The patterns' additions are the same, in the same order."""

    def __init__(self, active: np.ndarray) -> None:
        from sdckit.frequency import add_known_contributions_at

        self.active = active
        self._kernel: Any = add_known_contributions_at

    @classmethod
    def of(
        cls, pattern_total: np.ndarray, consequence: dict[str, np.ndarray], zero: np.ndarray
    ) -> _ActivePatterns | None:
        """The active patterns, or None when more than :data:`ACTIVE_SHARE` of them are (or none is
        measured)."""
        n = len(pattern_total)
        if not n:
            return None
        # -0 is kept active: its first contribution would be -0, not +0.
        still = (pattern_total == 0) & ~np.signbit(pattern_total)
        for values in consequence.values():
            if values is not zero:
                still &= values == 0
        active = np.flatnonzero(~still)
        if len(active) > ACTIVE_SHARE * n:
            return None
        return cls(active.astype(np.int32))

    def state(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Risk, largest contribution and its known set of the active patterns, before any set."""
        m = len(self.active)
        return np.zeros(m), np.full(m, -np.inf), np.zeros(m, dtype=np.int32)

    def take(
        self, total: np.ndarray, alone: np.ndarray, consequence: dict[str, np.ndarray], zero: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray], np.ndarray]:
        """The per-pattern inputs of the contributions, of the active patterns only (``zero`` stays
        shared by the attributes that weigh nothing)."""
        active = self.active
        taken = np.zeros(len(active), dtype=np.float64)
        weights = {name: taken if values is zero else values[active] for name, values in consequence.items()}
        return total[active], alone[active], weights, taken

    def accumulate(self, *arguments: Any) -> None:
        """:func:`sdckit.frequency.add_known_contributions`'s arguments, the active patterns' arrays
        but every pattern's keys: their contributions."""
        *head, keys, group_inverse, alone = arguments
        self._kernel(*head, self.active, keys, group_inverse, alone)

    def scatter(self, full: tuple[np.ndarray, ...], compact: tuple[np.ndarray, ...]) -> None:
        """Every pattern's risk, largest contribution and top known set (``full``, untouched until
        now: 0, -inf, 0) from the active patterns' ``compact`` ones."""
        (risk, best, top), (active_risk, active_best, active_top) = full, compact
        risk[self.active] = active_risk
        best[:] = 0.0
        best[self.active] = active_best
        top[self.active] = active_top
