"""What anonymeter's three attacks share: the attacked columns as numbers, the predicates of singling
out counted by a compiled kernel, and the mixed-type (Gower-like) nearest neighbours of linkability and
inference.

**Columns.** A column is *numeric* when it holds numbers in every frame attacked (original, release,
control); any other column is *categorical*: its values are compared as text, so a generalized label
(``[30-40)``, ``*``) is one more category that equals no original value, as anonymeter treats such a
file. Numeric values become float64 (a missing value NaN); categories become codes shared by the
frames (a missing value NaN for the predicates, its own code for the distances).

**Predicates** (singling out): a query is up to ``c`` terms ``(column, operator, value)`` joined by
*and*; :func:`count_matches` counts the rows matching each query, stopping at ``cap``. A missing
value matches ``is null`` only, never a comparison (``!=`` included), as polars evaluates them.

**Distance** (linkability, inference), anonymeter's ``gower_distance``: the sum over the columns of
``|a − b| / range`` for a numeric column (the range over the release and the attacked records, 1 when
it is 0) and of 0/1 (equal or not) for a categorical one; two missing numbers count 1 (as
anonymeter), one missing number puts the pair behind every other (anonymeter's NaN distance sorts
last). Ties between equally close release records are broken at random, on its own for each
attacked record (anonymeter: by the order numpy's quicksort leaves them in, the same for every
attacked record with the same distances — on a generalized release, where whole classes tie, every
target of a class gets the same guess).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from sdckit._numba import njit
from sdckit.errors import ConfigError
from sdckit.params import spell
from sdckit.table import Role, Table

#: Operators of a predicate term (codes of the kernel).
EQ, NE, GT, LT, GE, LE, ISNULL, NOTNULL = range(8)


def names_list(text: str, parameter: str) -> list[str]:
    """``"a, b"`` -> ``["a", "b"]``; an empty list is an error naming ``parameter``."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise ConfigError(f"{spell(parameter)} must name at least one column, got {text!r}")
    return names


def check_columns(names: list[str], parameter: str, *tables: tuple[Table | None, str]) -> None:
    for table, side in tables:
        if table is None:
            continue
        for name in names:
            if name not in table.data.columns:
                raise ConfigError(f"{spell(parameter)}: '{name}' is not a column of the {side}")


def default_columns(original: Table, release: Table) -> list[str]:
    """The configuration's attributes the release holds, identifiers, household ids and the weights
    column excepted (anonymeter attacks every column of the frames it is given)."""
    return [
        attribute.name
        for attribute in original.schema
        if attribute.role not in (Role.IDENTIFIER, Role.HOUSEHOLD)
        and attribute.name != original.weights
        and attribute.name in release.data.columns
    ]


def with_role(original: Table, release: Table, role: Role) -> list[str]:
    return [name for name in default_columns(original, release) if original.schema[name].role is role]


def encode(names: list[str], frames: list[pl.DataFrame | None]) -> tuple[list[np.ndarray | None], np.ndarray]:
    """Every frame's ``names`` columns as one float64 matrix each (None stays None), and which
    columns are numeric (numbers in every frame); categories get codes shared by the frames."""
    present = [frame for frame in frames if frame is not None]
    numeric = np.array(
        [all(frame.schema[name].is_numeric() for frame in present) for name in names], dtype=np.bool_
    )
    columns: list[list[np.ndarray]] = [[] for _ in frames]
    for j, name in enumerate(names):
        if numeric[j]:
            for i, frame in enumerate(frames):
                if frame is not None:
                    columns[i].append(frame.get_column(name).cast(pl.Float64).to_numpy())
            continue
        texts = [None if frame is None else frame.get_column(name).cast(pl.String) for frame in frames]
        pooled = pl.concat([text for text in texts if text is not None])
        categories = pooled.drop_nulls().unique().sort()
        lookup = pl.DataFrame({"value": categories, "code": np.arange(len(categories), dtype=np.float64)})
        for i, text in enumerate(texts):
            if text is not None:
                joined = pl.DataFrame({"value": text}).join(
                    lookup, on="value", how="left", maintain_order="left"
                )
                columns[i].append(joined.get_column("code").fill_null(np.nan).to_numpy())
    matrices = [
        None if frame is None else np.ascontiguousarray(np.column_stack(columns[i]), dtype=np.float64)
        for i, frame in enumerate(frames)
    ]
    return matrices, numeric


@njit(cache=True, nogil=True)
def _matches(
    data: np.ndarray, r: int, cols: np.ndarray, ops: np.ndarray, vals: np.ndarray, q: int
) -> bool:  # pragma: no cover - compiled
    """Whether record ``r`` of ``data`` matches query ``q`` (see :func:`count_matches`)."""
    for j in range(cols.shape[1]):
        col = cols[q, j]
        if col < 0:
            break
        x = data[r, col]
        op = ops[q, j]
        v = vals[q, j]
        if op == 6:
            matched = np.isnan(x)
        elif op == 7:
            matched = not np.isnan(x)
        elif np.isnan(x):
            matched = False
        elif op == 0:
            matched = x == v
        elif op == 1:
            matched = x != v
        elif op == 2:
            matched = x > v
        elif op == 3:
            matched = x < v
        elif op == 4:
            matched = x >= v
        else:
            matched = x <= v
        if not matched:
            return False
    return True


@njit(cache=True, nogil=True)
def count_matches(
    data: np.ndarray, rows: np.ndarray, cols: np.ndarray, ops: np.ndarray, vals: np.ndarray, cap: int
) -> np.ndarray:  # pragma: no cover - compiled
    """How many of ``data[rows]`` match each query (``cols``/``ops``/``vals``, one row a query, a
    column index −1 ends it early), counting up to ``cap``."""
    counts = np.zeros(cols.shape[0], dtype=np.int64)
    for q in range(cols.shape[0]):
        count = 0
        for r in rows:
            if _matches(data, r, cols, ops, vals, q):
                count += 1
                if count >= cap:
                    break
        counts[q] = count
    return counts


@njit(cache=True, nogil=True)
def match_rows(
    data: np.ndarray, cols: np.ndarray, ops: np.ndarray, vals: np.ndarray, starts: np.ndarray
) -> np.ndarray:  # pragma: no cover - compiled
    """The records of ``data`` each query matches, query after query (query ``q``'s from
    ``starts[q]`` to ``starts[q + 1]``, its full count from :func:`count_matches`)."""
    found = np.empty(starts[-1], dtype=np.int64)
    for q in range(cols.shape[0]):
        at = starts[q]
        for r in range(data.shape[0]):
            if at < starts[q + 1] and _matches(data, r, cols, ops, vals, q):
                found[at] = r
                at += 1
    return found


def scaled(queries: np.ndarray, candidates: np.ndarray, numeric: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """anonymeter's scaling: each numeric column divided by its range over both sets (1 when 0);
    a missing category becomes a category of its own (code −1)."""
    queries = queries.copy()
    candidates = candidates.copy()
    for j in np.flatnonzero(numeric):
        both = np.concatenate([queries[:, j], candidates[:, j]])
        finite = both[~np.isnan(both)]
        spread = float(finite.max() - finite.min()) if finite.size else 0.0
        spread = spread if spread > 0 else 1.0
        queries[:, j] /= spread
        candidates[:, j] /= spread
    for j in np.flatnonzero(~numeric):
        queries[np.isnan(queries[:, j]), j] = -1.0
        candidates[np.isnan(candidates[:, j]), j] = -1.0
    return np.ascontiguousarray(queries), np.ascontiguousarray(candidates)


@njit(cache=True, nogil=True)
def nearest(
    queries: np.ndarray, candidates: np.ndarray, numeric: np.ndarray, k: int, seeds: np.ndarray
) -> np.ndarray:  # pragma: no cover - compiled
    """The ``k`` candidates nearest each query in anonymeter's mixed-type distance (see the module),
    closest first; ties go to the lower priority, splitmix64 of the candidate's index and the query's
    ``seeds`` entry (a random order of the candidates for each query). Brute force: one pass over
    the candidates per query keeping the best ``k`` in order (the compiled loop is why it is not
    vectorized)."""
    n_queries = queries.shape[0]
    n_candidates, width = candidates.shape
    k = min(k, n_candidates)
    found = np.empty((n_queries, k), dtype=np.int64)
    best = np.empty(k, dtype=np.float64)
    best_priority = np.empty(k, dtype=np.uint64)
    for q in range(n_queries):
        filled = 0
        seed = seeds[q]
        for c in range(n_candidates):
            distance = 0.0
            for j in range(width):
                a = queries[q, j]
                b = candidates[c, j]
                if numeric[j]:
                    if np.isnan(a) and np.isnan(b):
                        distance += 1.0
                    elif np.isnan(a) or np.isnan(b):
                        distance = np.inf
                    else:
                        distance += abs(a - b)
                elif a != b:
                    distance += 1.0
            z = (np.uint64(c) + seed) * np.uint64(0x9E3779B97F4A7C15)
            z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
            z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
            p = z ^ (z >> np.uint64(31))
            if filled == k and (
                distance > best[k - 1] or (distance == best[k - 1] and p > best_priority[k - 1])
            ):
                continue
            slot = filled if filled < k else k - 1
            while slot > 0 and (
                best[slot - 1] > distance or (best[slot - 1] == distance and best_priority[slot - 1] > p)
            ):
                if slot < k:
                    best[slot] = best[slot - 1]
                    best_priority[slot] = best_priority[slot - 1]
                    found[q, slot] = found[q, slot - 1]
                slot -= 1
            best[slot] = distance
            best_priority[slot] = p
            found[q, slot] = c
            if filled < k:
                filled += 1
    return found


def neighbours(
    queries: np.ndarray, candidates: np.ndarray, numeric: np.ndarray, k: int, rng: np.random.Generator
) -> np.ndarray:
    """The ``k`` release records nearest each attacked record (rows of ``candidates``), ties broken
    at random for each attacked record on its own."""
    left, right = scaled(queries, candidates, numeric)
    seeds = np.asarray(rng.integers(0, 2**63, size=queries.shape[0], dtype=np.uint64))
    return nearest(left, right, numeric.astype(np.bool_), int(k), seeds)
