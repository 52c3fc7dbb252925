"""Denning's general tracker on a query server (Denning, Denning & Schwartz 1979, "The tracker: a
threat to statistical database security", ACM TODS 4(1)).

The adversary (an analyst's key, and the public attributes of every record:
:mod:`sdckit.attack._server`) isolates a target by a public formula C that no query-set-size control
would answer alone, and builds a tracker Tr, a public formula holding about half of the records
(categories of one public attribute, the most frequent first, until half the records are in).
Every query it sends has a large query set, yet

    q(C) = q(C ∨ Tr) + q(C ∨ ¬Tr) − q(Tr) − q(¬Tr)

for a sum of a numeric confidential attribute (``q = sum(y | ·)``) and for the indicator of each
category of a categorical one (``q = count(· ∧ a = v)``: 1 for the target's category, 0 for the
others). ``q(Tr)`` and ``q(¬Tr)`` are asked once for the whole attack. A refused query leaves the
target's value unlearned. Query-set-size control does not stop a tracker; an exact audit of the
linear combinations of the answers does.
"""

from __future__ import annotations

from typing import Any

from sdckit.attack._server import (
    Filter,
    Guess,
    ServerAttackParams,
    View,
    applies_to_server,
    categorical_guess,
    draw_targets,
    isolating,
    open_view,
    score,
)
from sdckit.attack.base import AttackResult, ServerTarget, register_attack
from sdckit.context import Context
from sdckit.errors import ConfigError
from sdckit.table import Table

NAME = "tracker"


class TrackerParams(ServerAttackParams):
    """Denning's general tracker on a query server."""


def build_tracker(view: View) -> tuple[Filter, str, list[Any]]:
    """The tracker: on the public attribute that splits the records closest to half, ``attribute <=
    median`` for a numeric one, else ``attribute in [...]`` its most frequent categories taken until
    half the records are in; the formula, the attribute, its categories (or the median)."""
    best: tuple[float, Filter, str, list[Any]] | None = None
    half = view.data.height / 2
    for column in view.public:
        values = view.data[column].drop_nulls()
        if values.n_unique() < 2:
            continue
        if values.dtype.is_numeric():
            median = values.sort()[(values.len() - 1) // 2]
            size = int((values <= median).sum())
            chosen: list[Any] = [median]
            formula: Filter = {"column": column, "op": "<=", "value": median}
        else:
            counts = values.value_counts(sort=True)
            chosen, size = [], 0
            for value, count in counts.iter_rows():
                if size >= half or len(chosen) == counts.height - 1:
                    break
                chosen.append(value)
                size += count
            formula = {"column": column, "op": "in", "value": chosen}
        if size >= values.len():
            continue
        gap = abs(size - half)
        if best is None or gap < best[0]:
            best = (gap, formula, column, chosen)
    if best is None:
        raise ConfigError(f"dataset {view.name}: no public attribute has two values to build a tracker on")
    return best[1], best[2], best[3]


class _Tracker:
    def __init__(self, view: View) -> None:
        self.view = view
        self.formula, self.column, self.values = build_tracker(view)
        self.known: dict[tuple[str, Any], float | None] = {}

    def _total(self, attribute: str, value: Any) -> float | None:
        """q(Tr) + q(¬Tr), asked once per attribute and category."""
        key = (attribute, value)
        if key not in self.known:
            inside = self.view.measure(attribute, [self.formula], value)
            outside = self.view.measure(attribute, [{"not": self.formula}], value)
            self.known[key] = None if inside is None or outside is None else inside + outside
        return self.known[key]

    def guess(self, row: dict[str, Any], attribute: str) -> Guess:
        target = isolating(self.view, row)
        values = [None] if self.view.numeric[attribute] else self.view.domains[attribute]
        found: dict[Any, float | None] = {}
        for value in values:
            total = self._total(attribute, value)
            with_tracker = self.view.measure(attribute, [{"or": [target, self.formula]}], value)
            with_rest = self.view.measure(attribute, [{"or": [target, {"not": self.formula}]}], value)
            parts = (total, with_tracker, with_rest)
            found[value] = None if None in parts else with_tracker + with_rest - total  # type: ignore[operator]
        if self.view.numeric[attribute]:
            return found[None]
        return categorical_guess(found)


@register_attack(
    "tracker",
    TrackerParams,
    help="Denning's general tracker on a query server: four large query sets that give one person.",
    releases="a running query server (sdckit serve): restriction, camouflage, dp",
    measures="the share of (target, confidential attribute) pairs whose value q(C ∨ Tr) + q(C ∨ ¬Tr) − "
    "q(Tr) − q(¬Tr) gives (numbers within tolerance, categories exactly)",
    applies=applies_to_server,
    inputs="server",
)
def _run(
    original: Table, release: ServerTarget, control: Any, params: TrackerParams, context: Context
) -> AttackResult:
    view = open_view(NAME, original, release, params)
    try:
        tracker = _Tracker(view)
        targets = draw_targets(view, params.targets, params.seed)
        return score(
            NAME,
            "an analyst's key and the public attributes of every record (to isolate the target and "
            "build the tracker)",
            view,
            targets,
            tracker.guess,
            params,
            details={
                "tracker": {
                    "attribute": tracker.column,
                    "values": len(tracker.values),
                    "categories": [str(v) for v in tracker.values[:20]],  # the first 20
                }
            },
        )
    finally:
        view.client.close()
