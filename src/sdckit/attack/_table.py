"""What the table attacks share: a published table read as the adversary reads it, its additivity
relations, the sensitive cells of the original and their required protection, and the attacker's
linear programs.

**The published table** is a file with one row per cell (``sdckit table suppress`` writes one; any
tool's will do): a column per dimension holding the cell's labels (a margin labelled ``total_label``)
and the ``released`` column, empty for a suppressed cell. The adversary reads those columns only
(the file ``sdckit table`` writes holds the true values too, for the data steward: they are never
read). The relations are the flat ones the labels imply: for every dimension and every combination
of the other dimensions' labels, the total equals the sum of the categories (one level under each
total; a hierarchy of several levels is not read).

**The sensitive cells** come from ORIGINAL (to score the attack, never to make it): every cell of
the cube — interior cells and margins — with its records, computed here, not by the suppression
code: the p%-rule (sensitive when ``X − x₁ − x₂ < p/100 · x₁``, X the cell's total and x₁ ≥ x₂ its
two largest contributions; required protection ``p/100 · x₁ − (X − x₁ − x₂)`` above and below, as
sdcTable and τ-Argus) and the minimum frequency (sensitive when 0 < n < ``min_frequency`` records;
required protection ``frequency_level`` % of the cell's value). A sensitive cell flagged by both
takes the larger level.

**The attacker's interval** of a suppressed cell c is ``[min y_c, max y_c]`` over the cells' values
``y`` that agree with every published value, satisfy the relations and the a-priori bounds (``y ≥
0`` when ``nonnegative``), and what the attacker knows besides (a respondent's own contributions);
solved with scipy's HiGHS (``scipy.optimize.linprog``). A published sensitive cell has the interval
``[a, a]``. A sensitive cell is **disclosed** when its interval does not reach its protection
interval ``[a − level, a + level]`` on either side, or is a single value (exact disclosure).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Annotated, Any

import numpy as np
import polars as pl
from pydantic import Field, model_validator

from sdckit.attack.base import AttackParams
from sdckit.errors import ConfigError
from sdckit.params import Finite, spell
from sdckit.table import Table

#: Slack of the LP's bounds: an interval short of the protection by less than this share of
#: ``max(1, |a| + level)`` is LP round-off, not a disclosure.
TOLERANCE = 1e-7


class TableAttackParams(AttackParams):
    """Parameters every table attack takes."""

    dimensions: Annotated[
        str, Field(min_length=1, description="The table's dimensions, comma-separated (label columns).")
    ]
    value: Annotated[
        str | None,
        Field(min_length=1, description="The attribute the cells sum (none: a frequency table)."),
    ] = None
    p: Annotated[
        Finite | None,
        Field(gt=0.0, lt=100.0, description="The p%-rule's p (none: the rule is not applied)."),
    ] = None
    min_frequency: Annotated[
        int | None, Field(ge=2, description="A cell of fewer records than this (but some) is sensitive.")
    ] = None
    frequency_level: Annotated[
        Finite,
        Field(
            gt=0.0, le=100.0, description="Protection required of a frequency-sensitive cell, % of its value."
        ),
    ] = 10.0
    total_label: Annotated[str, Field(min_length=1, description="The label of a margin.")] = "Total"
    released: Annotated[
        str, Field(min_length=1, description="The column of published values (empty: suppressed).")
    ] = "released"
    nonnegative: Annotated[
        bool, Field(description="The attacker knows every cell is at least 0 (counts, turnover).")
    ] = True

    @model_validator(mode="after")
    def _a_rule(self) -> TableAttackParams:
        if self.p is None and self.min_frequency is None:
            raise ValueError("give a sensitivity rule: p (the p%-rule) or min_frequency, or both")
        return self


def spelled(attack: str, name: str) -> str:
    return spell(f"{attack}.{name}", f"--set {attack}.{name}")


def dimension_names(params: TableAttackParams) -> list[str]:
    return [name.strip() for name in params.dimensions.split(",") if name.strip()]


def applies_to_table(original: Any, release: Any, control: Any, params: TableAttackParams) -> str | None:
    if not isinstance(release, Table) or not isinstance(original, Table):
        return "it attacks a published table (the release file, one row per cell) of the original microdata"
    wanted = [*dimension_names(params), params.released]
    absent = [name for name in wanted if name not in release.data.columns]
    if absent:
        return f"the published table has no column {', '.join(absent)}"
    absent = [
        name
        for name in [*dimension_names(params), params.value or ""]
        if name and name not in original.data.columns
    ]
    if absent:
        return f"the original has no column {', '.join(absent)}"
    return None


@dataclass
class Published:
    """The adversary's table: cell labels (strings, margins as ``total_label``), published values
    (NaN where suppressed), the relations (rows of ``matrix``: Σ parts − total = 0)."""

    labels: list[tuple[str, ...]]
    values: np.ndarray
    matrix: np.ndarray
    index: dict[tuple[str, ...], int]

    @property
    def suppressed(self) -> np.ndarray:
        return np.isnan(self.values)


def read_published(release: Table, params: TableAttackParams, attack: str) -> Published:
    dims = dimension_names(params)
    frame = release.data.select(
        *[pl.col(name).cast(pl.String).fill_null("") for name in dims],
        pl.col(params.released).cast(pl.Float64, strict=False).alias("_value"),
    )
    labels = [tuple(row[:-1]) for row in frame.iter_rows()]
    index = {label: i for i, label in enumerate(labels)}
    if len(index) != len(labels):
        raise ConfigError(
            f"{spelled(attack, 'dimensions')}: two rows of the published table have the same labels"
        )
    rows = []
    for d in range(len(dims)):
        groups: dict[tuple[str, ...], list[int]] = {}
        for i, label in enumerate(labels):
            groups.setdefault(label[:d] + label[d + 1 :], []).append(i)
        for key, members in groups.items():
            total = index.get(key[:d] + (params.total_label,) + key[d:])
            parts = [i for i in members if labels[i][d] != params.total_label]
            if total is None or not parts:
                continue
            row = np.zeros(len(labels))
            row[parts] = 1.0
            row[total] = -1.0
            rows.append(row)
    matrix = np.array(rows) if rows else np.zeros((0, len(labels)))
    return Published(labels, frame["_value"].fill_nan(None).to_numpy().astype(np.float64), matrix, index)


@dataclass
class Sensitive:
    """The sensitive cells of the original: per cell of the published table (by position), the
    true value, the required protection level, the rule, and the records (row numbers) in it."""

    cells: list[int]
    truth: dict[int, float]
    level: dict[int, float]
    rule: dict[int, str]
    records: dict[int, np.ndarray]
    contributions: np.ndarray


def sensitive_cells(original: Table, table: Published, params: TableAttackParams) -> Sensitive:
    """Every cell of the cube with its records, from ORIGINAL; the sensitive ones by the rules."""
    dims = dimension_names(params)
    data = original.data.with_row_index("_row").select(
        "_row",
        *[pl.col(name).cast(pl.String).fill_null("") for name in dims],
        (pl.col(params.value).cast(pl.Float64) if params.value else pl.lit(1.0)).fill_null(0.0).alias("_x"),
    )
    contributions = data["_x"].to_numpy()
    truth: dict[int, float] = {}
    level: dict[int, float] = {}
    rule: dict[int, str] = {}
    records: dict[int, np.ndarray] = {}
    for size in range(len(dims) + 1):
        for kept in itertools.combinations(range(len(dims)), size):
            names = [dims[d] for d in kept]
            grouped = (
                data.group_by(names).agg(pl.col("_row"), pl.col("_x"))
                if names
                else data.select(pl.col("_row").implode(), pl.col("_x").implode())
            )
            for row in grouped.iter_rows(named=True):
                label = tuple(row[dims[d]] if d in kept else params.total_label for d in range(len(dims)))
                cell = table.index.get(label)
                if cell is None:
                    continue
                x = np.sort(np.asarray(row["_x"], dtype=np.float64))[::-1]
                records[cell] = np.asarray(row["_row"], dtype=np.int64)
                truth[cell] = float(x.sum())
                _flag(cell, x, params, level, rule)
    cells = sorted(level)
    return Sensitive(cells, truth, level, rule, records, contributions)


def _flag(
    cell: int, x: np.ndarray, params: TableAttackParams, level: dict[int, float], rule: dict[int, str]
) -> None:
    found: list[tuple[str, float]] = []
    if params.p is not None and x.size:
        top = float(x[0])
        second = float(x[1]) if x.size > 1 else 0.0
        rest = float(x.sum()) - top - second
        if rest < params.p / 100.0 * top:
            found.append((f"p={params.p:g}", params.p / 100.0 * top - rest))
    if params.min_frequency is not None and 0 < x.size < params.min_frequency:
        found.append((f"freq={params.min_frequency}", params.frequency_level / 100.0 * abs(float(x.sum()))))
    if found:
        rule[cell] = "+".join(name for name, _ in found)
        level[cell] = max(amount for _, amount in found)


def interval(
    table: Published,
    cell: int,
    params: TableAttackParams,
    known_low: dict[int, float] | None = None,
    known_high: dict[int, float] | None = None,
) -> tuple[float, float]:
    """The attacker's interval of ``cell``: [a, a] when published, else the two LPs over the
    suppressed cells (published cells fixed; ``known_low``/``known_high``: tighter bounds of
    suppressed cells the attacker knows)."""
    from scipy.optimize import linprog

    if not table.suppressed[cell]:
        value = float(table.values[cell])
        return value, value
    free = np.flatnonzero(table.suppressed)
    position = {int(c): j for j, c in enumerate(free)}
    published = np.where(table.suppressed, 0.0, table.values)
    matrix = table.matrix[:, free]
    keep = np.abs(matrix).sum(axis=1) > 0
    a_eq = matrix[keep]
    b_eq = -(table.matrix[keep] @ published)
    lower = np.full(free.size, 0.0 if params.nonnegative else -np.inf)
    upper = np.full(free.size, np.inf)
    for c, value in (known_low or {}).items():
        if c in position:
            lower[position[c]] = max(lower[position[c]], value)
    for c, value in (known_high or {}).items():
        if c in position:
            upper[position[c]] = min(upper[position[c]], value)
    objective = np.zeros(free.size)
    objective[position[cell]] = 1.0
    ends = []
    for sign in (1.0, -1.0):
        solved = linprog(
            sign * objective,
            A_eq=a_eq if a_eq.size else None,
            b_eq=b_eq if a_eq.size else None,
            bounds=list(zip(lower, upper, strict=True)),
            method="highs",
        )
        if solved.status == 3:  # unbounded
            ends.append(-np.inf if sign > 0 else np.inf)
        elif solved.status != 0:
            raise ConfigError(
                f"the attacker's linear program for cell {'/'.join(table.labels[cell])} failed: "
                f"{solved.message}"
            )
        else:
            ends.append(sign * float(solved.fun))
    return ends[0], ends[1]


def disclosed(low: float, high: float, truth: float, level: float) -> bool:
    """The interval does not reach ``[truth − level, truth + level]``, or is one value."""
    slack = TOLERANCE * max(1.0, abs(truth) + level)
    exact = high - low <= slack
    return exact or high < truth + level - slack or low > truth - level + slack
