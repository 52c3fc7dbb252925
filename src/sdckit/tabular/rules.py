"""Primary sensitivity rules and the protection levels they imply (SPEC §8.2, as sdcTable's
``R/utils.R``).

For a cell with total ``T`` and contributions sorted ``x_1 ≥ x_2 ≥ …`` (missing ones 0):

* minimum frequency: sensitive if ``0 < contributors < n``; protection ``UPL = ratio · T``;
* (n,k)-dominance: sensitive if ``x_1 + … + x_n > (k/100) · T``; ``UPL = (100/k)(x_1+…+x_n) − T``;
* p%-rule: sensitive if ``T − x_1 − x_2 < (p/100) · x_1``; ``UPL = (p/100) x_1 − (T − x_1 − x_2)``;
* pq-rule: sensitive if ``T − x_1 − x_2 < (p/q) · x_1`` (p < q); ``UPL = (p x_1 − q (T − x_1 − x_2)) / 100``.

The lower protection level equals the upper one (sdcTable's convention) and the sliding level is 0.
A cell flagged by several rules keeps the largest level and the names of all of them. With sampling
weights each contribution counts as many contributors as its rounded weight (sdcTable); contributions
must be non-negative for the dominance rules (a negative contribution makes ``T − x_1 − x_2`` mean
nothing), which is checked.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sdckit.errors import ConfigError, InputError
from sdckit.params import spell
from sdckit.tabular.model import LinearTable, Protection

_KEYS = {
    frozenset({"p"}): "p%",
    frozenset({"p", "q"}): "pq",
    frozenset({"n", "k"}): "nk",
    frozenset({"freq"}): "freq",
    frozenset({"freq", "ratio"}): "freq",
}
#: The most contributions an (n,k)-dominance rule may sum.
MAX_DOMINANT = 100

_FORMS = (
    '"p=10" (p%-rule), "p=25,q=50" (pq-rule), "n=2,k=85" ((n,k)-dominance), "freq=3" or "freq=3,ratio=0.1"'
)


@dataclass(frozen=True)
class Rule:
    """One primary sensitivity rule: ``kind`` is ``p%``, ``pq``, ``nk`` or ``freq``."""

    kind: str
    p: float = 0.0
    q: float = 100.0
    n: int = 2
    k: float = 85.0
    ratio: float = 0.10

    @property
    def name(self) -> str:
        """How the rule is written back: ``p=10``, ``p=25,q=50``, ``n=2,k=85``, ``freq=3``."""
        if self.kind == "p%":
            return f"p={self.p:g}"
        if self.kind == "pq":
            return f"p={self.p:g},q={self.q:g}"
        if self.kind == "nk":
            return f"n={self.n},k={self.k:g}"
        return f"freq={self.n}"

    @property
    def contributions_needed(self) -> int:
        """How many of the largest contributions the rule reads (0: none)."""
        return {"p%": 2, "pq": 2, "nk": self.n}.get(self.kind, 0)

    @classmethod
    def parse(cls, text: str, option: str = "--rule") -> Rule:
        """A rule from its text: ``p=10``, ``p=25,q=50``, ``n=2,k=85``, ``freq=3[,ratio=0.1]``."""
        values: dict[str, float] = {}
        for part in str(text).split(","):
            key, sep, raw = part.partition("=")
            key = key.strip().lower()
            if not sep or not key:
                raise ConfigError(f"{option} {text!r}: write it as {_FORMS}")
            if key in values:
                raise ConfigError(f"{option} {text!r}: {key} is given twice")
            try:
                values[key] = float(raw)
            except ValueError:
                raise ConfigError(f"{option} {text!r}: {key} must be a number, got {raw.strip()!r}") from None
            if not math.isfinite(values[key]):
                raise ConfigError(f"{option} {text!r}: {key} must be finite")
        kind = _KEYS.get(frozenset(values))
        if kind is None:
            raise ConfigError(f"{option} {text!r}: unknown rule; write it as {_FORMS}")
        return cls.of(kind, option=f"{option} {text!r}", **values)

    @classmethod
    def of(cls, kind: str, *, option: str = "rule", **values: float) -> Rule:
        """A rule from its parameters, validated."""
        if kind == "p%":
            p = values["p"]
            if not 0 < p < 100:
                raise ConfigError(
                    f"{option}: p must be in (0, 100), got {p:g} (with p ≥ 100 every cell whose "
                    "other contributors sum to less than its largest one is sensitive: not a p%-rule)"
                )
            return cls(kind, p=p)
        if kind == "pq":
            p, q = values["p"], values["q"]
            if not 0 < p < q <= 100:
                why = " (q ≤ p: the prior knowledge q must exceed the protection p)" if 0 < q <= p else ""
                raise ConfigError(f"{option}: the pq-rule needs 0 < p < q ≤ 100, got p={p:g}, q={q:g}{why}")
            return cls(kind, p=p, q=q)
        if kind == "nk":
            n, k = values["n"], values["k"]
            if n != int(n) or not 1 <= n <= MAX_DOMINANT:
                raise ConfigError(f"{option}: n must be a whole number from 1 to {MAX_DOMINANT}, got {n:g}")
            if not 0 < k < 100:
                raise ConfigError(
                    f"{option}: k must be in (0, 100), got {k:g} (the n largest contributions never "
                    "exceed 100% of the cell)"
                )
            return cls(kind, n=int(n), k=k)
        if kind == "freq":
            n, ratio = values["freq"], values.get("ratio", 0.10)
            if n != int(n) or not 1 <= n <= 1e9:
                raise ConfigError(f"{option}: the minimum frequency must be a whole number ≥ 1, got {n:g}")
            if not 0 <= ratio <= 1:
                raise ConfigError(f"{option}: ratio must be in [0, 1], got {ratio:g}")
            return cls(kind, n=int(n), ratio=ratio)
        raise ConfigError(f"unknown rule kind {kind!r}")

    def apply(self, table: LinearTable) -> tuple[np.ndarray, np.ndarray]:
        """``(sensitive, level)`` per cell: which cells the rule flags and their protection level."""
        total = table.values
        if self.kind == "freq":
            contributors = table.contributors if table.contributors is not None else table.frequency
            if contributors is None:
                raise ConfigError(f"rule {self.name}: the table has no counts of contributors")
            sensitive = (contributors > 0) & (contributors < self.n)
            return sensitive, np.where(sensitive, self.ratio * np.abs(total), 0.0)
        top = _top(table, self)
        x1 = top[:, 0]
        if self.kind == "nk":
            dominant = top[:, : self.n].sum(axis=1)
            sensitive = (total > 0) & (dominant > self.k / 100 * total * (1 + 1e-12))
            level = 100 / self.k * dominant - total
        else:
            rest = total - x1 - top[:, 1]
            ratio = self.p / 100 if self.kind == "p%" else self.p / self.q
            sensitive = (total > 0) & (rest < ratio * x1 * (1 - 1e-12))
            level = (self.p * x1 - self.q * rest) / 100
        return sensitive, np.where(sensitive, np.maximum(level, 0.0), 0.0)


def _top(table: LinearTable, rule: Rule) -> np.ndarray:
    if table.kind != "magnitude":
        raise ConfigError(
            f"rule {rule.name} is a dominance rule: it applies to a magnitude table ({spell('value')}), "
            f"not to a frequency table; use {spell('min_frequency')} for counts"
        )
    need = rule.contributions_needed
    if table.top is None or table.top.shape[1] < need:
        have = 0 if table.top is None else table.top.shape[1]
        raise ConfigError(
            f"rule {rule.name} needs the {need} largest contributions of every cell, and the table keeps "
            f"{have}: build it from microdata (a table of cells has no contributions)"
        )
    return table.top


def contributions_needed(rules: Sequence[Rule]) -> int:
    """How many of the largest contributions per cell a set of rules reads."""
    return max((rule.contributions_needed for rule in rules), default=0)


def check_contributions(values: Any, name: str, rules: Sequence[Rule]) -> None:
    """Refuse negative contributions when a dominance rule reads them (they break its arithmetic)."""
    if not any(rule.kind != "freq" for rule in rules):
        return
    array = np.asarray(values, dtype=np.float64)
    negative = np.flatnonzero(array < 0)
    if negative.size:
        raise InputError(
            f"attribute '{name}' has {negative.size} negative value{'s' if negative.size != 1 else ''} "
            f"(first in record {negative[0] + 1}, {array[negative[0]]:g}): the dominance rules "
            "(p%, pq, n,k) need non-negative contributions"
        )


def primary_protection(table: LinearTable, rules: Sequence[Rule]) -> Protection:
    """The primary cells of ``table`` under ``rules`` with their protection levels (SPEC §8.2)."""
    protection = Protection.none(table.n_cells)
    labels = protection.rule
    for rule in rules:
        sensitive, level = rule.apply(table)
        protection.primary[sensitive] = True
        np.maximum(protection.upper, level, out=protection.upper)
        joined = np.where(labels == "", rule.name, labels + "+" + rule.name)
        labels[:] = np.where(sensitive, joined, labels)
    protection.lower[:] = protection.upper
    return protection
