"""PRAM, the post-randomization method (Kooiman, Willenborg & Gouweleeuw 1997; Gouweleeuw et al.
1998; sdcMicro's ``pram``; SPEC §9.2).

Each record's category ``k`` of a categorical attribute is replaced by category ``l`` with
probability ``R[k, l]``, independently of the other records. ``R`` is either

* given by the user as a CSV file (rows are the from-categories, columns the to-categories; every row
  sums to 1 within 1e-9; its categories must be exactly the attribute's), or
* the invariant matrix built from the data as sdcMicro does: a base matrix ``P`` with diagonal
  ``d_k ~ Uniform[pd, 1]`` and off-diagonal ``(1 − d_k)/(L − 1)``, ``λ = πᵀP``, the backward matrix
  ``Q[k, j] = P[j, k]·π_j/λ_k``, ``R = P·Q`` and ``R_α = α·R + (1 − α)·I``. Then ``πᵀR_α = πᵀ``: the
  expected frequencies of the release are the original ones. With ``strata``, ``π`` and ``R`` are built
  per stratum (a combination of the strata attributes), and the category set is the attribute's over
  the whole file (a category absent from a stratum gets no inflow there: ``π_k = 0``).

The matrices used are written beside the release (``--matrix-output``; analysts need them to correct
their estimates: ``T̂ = (Rᵀ)⁻¹ T*`` for a non-invariant matrix) and listed in the summary. Missing
values take no part and stay missing.

Randomness (``numpy.random.default_rng(seed)``), per attribute in the given order: the diagonals
``d`` of every stratum (strata in order of first appearance), then one uniform per record.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Self

import numpy as np
import polars as pl
from pydantic import Field, model_validator

from sdckit._files import check_regular_file
from sdckit._numba import njit
from sdckit.anonymize.base import Context, register_method, run_method
from sdckit.anonymize.perturbation import (
    Names,
    chosen_attributes,
    perturbed_release,
    stratum_keys,
)
from sdckit.anonymize.release import Figures, Release
from sdckit.context import ExtraOutput
from sdckit.errors import ConfigError, InputError
from sdckit.params import Finite, MethodParams, Whole
from sdckit.table import Kind, Role, Table, value_strings

ROW_TOLERANCE = 1e-9
DEFAULT_PD = 0.8  # sdcMicro's pram defaults
DEFAULT_ALPHA = 0.5
MAX_MATRIX_BYTES = 64 << 20


def base_matrix(diagonal: np.ndarray) -> np.ndarray:
    """sdcMicro's ``P``: ``d_k`` on the diagonal, ``(1 − d_k)/(L − 1)`` elsewhere in row ``k``."""
    diagonal = np.asarray(diagonal, dtype=np.float64)
    size = len(diagonal)
    if size == 1:
        return np.ones((1, 1))
    matrix = np.repeat(((1 - diagonal) / (size - 1))[:, None], size, axis=1)
    np.fill_diagonal(matrix, diagonal)
    return matrix


def invariant_matrix(pi: np.ndarray, base: np.ndarray, alpha: float = 0.5) -> np.ndarray:
    """``R_α = α·P·Q + (1 − α)·I`` with ``Q[k, j] = P[j, k]·π_j/λ_k`` and ``λ = πᵀP`` (SPEC §9.2).

    ``pi`` may be counts or proportions (only proportions matter). A category with ``λ_k = 0`` (no
    inflow) gets the identity row ``Q[k, ·] = e_k``."""
    pi = np.asarray(pi, dtype=np.float64)
    total = pi.sum()
    pi = pi / total if total > 0 else pi
    lam = pi @ base
    size = len(pi)
    backward = np.eye(size)
    flowing = lam > 0
    backward[flowing] = (base.T * pi[None, :])[flowing] / lam[flowing, None]
    return alpha * (base @ backward) + (1 - alpha) * np.eye(size)


@njit(cache=True)
def _draw(codes, strata, cumulative, uniforms):  # pragma: no cover (compiled)
    """Each record's new code: the first ``l`` with ``u < C[s, k, l]`` (``C`` = row-normalized
    cumulative sums of the matrix of its stratum ``s``, ``k`` its code); -1 stays -1."""
    n = len(codes)
    size = cumulative.shape[2]
    out = np.empty(n, dtype=np.int32)
    for i in range(n):
        k = codes[i]
        if k < 0:
            out[i] = -1
            continue
        row = cumulative[strata[i], k]
        u = uniforms[i]
        chosen = size - 1
        for target in range(size):
            if u < row[target]:
                chosen = target
                break
        out[i] = chosen
    return out


def apply_matrices(
    codes: np.ndarray, strata: np.ndarray, matrices: np.ndarray, uniforms: np.ndarray
) -> np.ndarray:
    """Post-randomize integer ``codes`` (-1 = missing) with ``matrices[s]`` for the records of stratum
    ``s`` by inversion of one uniform per record."""
    cumulative = np.cumsum(matrices, axis=2)
    cumulative /= cumulative[:, :, -1:]
    return _draw(
        np.ascontiguousarray(codes, dtype=np.int32),
        np.ascontiguousarray(strata, dtype=np.int64),
        np.ascontiguousarray(cumulative),
        np.ascontiguousarray(uniforms, dtype=np.float64),
    )


def read_matrix(path: str | Path) -> tuple[list[str], np.ndarray]:
    """A transition matrix from CSV: the first column names the from-categories, the other headers the
    to-categories (the same set); returns the categories (in row order) and the matrix with its
    columns in that order. ConfigError for a matrix that is not square, not labelled by one set of
    categories, not made of finite non-negative numbers, or whose rows do not sum to 1 within 1e-9."""
    label = str(path)
    check_regular_file(path, label, "transition matrix", ConfigError, max_bytes=MAX_MATRIX_BYTES)
    try:
        frame = pl.read_csv(path, infer_schema=False)
    except (pl.exceptions.PolarsError, OSError, UnicodeDecodeError) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise InputError(f"{label}: cannot read the transition matrix: {first}") from None
    if frame.width < 2 or frame.height < 1:
        raise ConfigError(
            f"{label}: a transition matrix needs a first column of from-categories and one column per "
            f"to-category, got {frame.width} column(s) and {frame.height} row(s)"
        )
    rows = [str(value).strip() if value is not None else "" for value in frame.to_series(0).to_list()]
    columns = [name.strip() for name in frame.columns[1:]]
    if len(set(rows)) != len(rows):
        raise ConfigError(f"{label}: the from-category {_twice(rows)!r} has two rows")
    if set(rows) != set(columns) or len(rows) != len(columns):
        only_rows = sorted(set(rows) - set(columns))
        only_columns = sorted(set(columns) - set(rows))
        raise ConfigError(
            f"{label}: the transition matrix must be square with the same categories as rows and columns; "
            f"rows only: {only_rows or 'none'}, columns only: {only_columns or 'none'}"
        )
    matrix = np.empty((len(rows), len(rows)))
    for position, name in enumerate(frame.columns[1:]):
        try:
            values = frame.get_column(name).str.strip_chars().cast(pl.Float64, strict=True)
        except pl.exceptions.PolarsError:
            raise ConfigError(f"{label}: column '{name.strip()}' must hold numbers") from None
        if values.null_count():
            raise ConfigError(f"{label}: column '{name.strip()}' has an empty cell")
        matrix[:, position] = values.to_numpy()
    matrix = matrix[:, [columns.index(category) for category in rows]]
    if not np.isfinite(matrix).all() or (matrix < 0).any():
        raise ConfigError(f"{label}: the transition probabilities must be finite and at least 0")
    sums = matrix.sum(axis=1)
    bad = np.flatnonzero(np.abs(sums - 1) > ROW_TOLERANCE)
    if len(bad):
        raise ConfigError(
            f"{label}: every row must sum to 1 (within {ROW_TOLERANCE:g}); row '{rows[bad[0]]}' sums to "
            f"{sums[bad[0]]:.12g}"
        )
    return rows, matrix


def _twice(items: list[str]) -> str:
    seen: set[str] = set()
    for item in items:
        if item in seen:
            return item
        seen.add(item)
    return ""


def _stratum_labels(
    table: Table, strata: Sequence[str] | None, keys: np.ndarray, groups: int
) -> list[str | None]:
    if not strata:
        return [None]
    first = np.unique(keys, return_index=True)[1]  # the first record of every (dense) key
    rows = table.data.select(list(strata))[first]
    texts = [value_strings(rows.get_column(name)).fill_null("").to_list() for name in strata]
    return [", ".join(f"{name}={texts[j][g]}" for j, name in enumerate(strata)) for g in range(groups)]


def matrices_frame(release: Release) -> pl.DataFrame:
    """The matrices used, one row per transition: ``attribute``, ``stratum`` (empty without strata),
    ``from``, ``to``, ``probability`` (the stratum is missing without strata)."""
    rows: dict[str, list[Any]] = {"attribute": [], "stratum": [], "from": [], "to": [], "probability": []}
    for name, blocks in release.figures_as(PramFigures).matrices.items():
        for block in blocks:
            categories = block["categories"]
            for k, source in enumerate(categories):
                for m, target in enumerate(categories):
                    rows["attribute"].append(name)
                    rows["stratum"].append(block["stratum"])
                    rows["from"].append(source)
                    rows["to"].append(target)
                    rows["probability"].append(float(block["matrix"][k][m]))
    return pl.DataFrame(
        rows,
        schema={
            "attribute": pl.String,
            "stratum": pl.String,
            "from": pl.String,
            "to": pl.String,
            "probability": pl.Float64,
        },
    )


def write_matrices(release: Release, path: Path, title: str) -> None:
    """``--matrix-output``: the matrices used as CSV (see :func:`matrices_frame`)."""
    matrices_frame(release).write_csv(path, float_precision=17)


class PramParams(MethodParams):
    """Parameters of PRAM (``sdckit anonymize pram``). Without ``matrix`` the invariant matrix is built
    from the data (``pd``, ``alpha``, optionally per stratum)."""

    attributes: Annotated[
        Names, Field(description="Categorical attributes, comma-separated (default: categorical QIs).")
    ] = None
    matrix: Annotated[
        Path | None,
        Field(description="Transition matrix CSV (rows from, columns to) for one attribute."),
    ] = None
    strata: Annotated[
        Names,
        Field(description="Build the invariant matrix per stratum of these attributes, comma-separated."),
    ] = None
    pd: Annotated[
        Finite | None, Field(ge=0, le=1, description="Least diagonal of the base matrix (default 0.8).")
    ] = None
    alpha: Annotated[
        Finite | None,
        Field(ge=0, le=1, description="Weight of the invariant matrix R against I (default 0.5)."),
    ] = None
    seed: Annotated[Whole, Field(ge=0, description="Seed of the diagonals and the draws.")] = 0

    @model_validator(mode="after")
    def _matrix_alone(self) -> Self:
        if self.matrix is not None:
            for name in ("pd", "alpha", "strata"):
                if getattr(self, name) is not None:
                    raise ValueError(
                        f"takes {{{name}}} only without {{matrix}} (they build the invariant matrix)"
                    )
        return self


@dataclass(frozen=True)
class PramFigures(Figures):
    """What PRAM did: the values changed per attribute, and per attribute the matrices used (one per
    stratum: its label, the categories and the matrix as rows of probabilities)."""

    changed_values: dict[str, int]
    matrices: dict[str, list[dict[str, Any]]]


def _pram_summary(release: Release) -> dict[str, Any]:
    params, figures = release.params, release.figures_as(PramFigures)
    invariant = params.matrix is None
    return {
        "seed": params.seed,
        "matrix": str(params.matrix) if params.matrix is not None else None,
        "invariant": invariant,
        "pd": params.pd if invariant else None,
        "alpha": params.alpha if invariant else None,
        "strata": list(params.strata or []),
        "changed_values": figures.changed_values,
        "matrices": figures.matrices,
    }


def _pram_report(figures: dict[str, Any]) -> list[str]:
    source = (
        f"invariant matrices (pd {figures['pd']:g}, alpha {figures['alpha']:g})"
        if figures["invariant"]
        else f"the matrix of {figures['matrix']}"
    )
    blocks = sum(len(items) for items in figures["matrices"].values())
    return [
        f"PRAM with {source}: {blocks:,} matrices, seed {figures['seed']}",
        *(f"{name}: {count:,} values changed" for name, count in figures["changed_values"].items()),
    ]


@register_method(
    "pram",
    PramParams,
    summary=_pram_summary,
    help="PRAM of categorical attributes with a given or an invariant transition matrix (sdcMicro's pram).",
    report=_pram_report,
    outputs=(
        ExtraOutput(
            "--matrix-output",
            "The transition matrices used, CSV (attribute, stratum, from, to, probability).",
            (".csv",),
            write_matrices,
        ),
    ),
    examples={"replay": {"attributes": ["Disease"], "seed": 5}},
)
def _run_pram(table: Table, params: PramParams, context: Context) -> Release:
    """PRAM (see :func:`pram`); the recipe records the defaults the invariant matrix was built with."""
    if params.matrix is None:
        params = params.model_copy(
            update={
                "pd": DEFAULT_PD if params.pd is None else params.pd,
                "alpha": DEFAULT_ALPHA if params.alpha is None else params.alpha,
            }
        )
    return _run_pram_release(table, params)


def _run_pram_release(table: Table, params: PramParams) -> Release:
    """PRAM with ``params`` whose ``pd`` and ``alpha`` are resolved (see :func:`pram`)."""
    from sdckit.frequency import encode

    strata, matrix = params.strata, params.matrix
    pd = DEFAULT_PD if params.pd is None else params.pd
    alpha = DEFAULT_ALPHA if params.alpha is None else params.alpha
    names = chosen_attributes(
        table,
        params.attributes,
        Role.QUASI_IDENTIFIER,
        (Kind.CATEGORICAL, Kind.ORDINAL),
        "pram needs categorical attributes: no quasi-identifier is categorical",
    )
    for name in names:
        kind = table.schema[name].kind if name in table.schema else Kind.CATEGORICAL
        if kind not in (Kind.CATEGORICAL, Kind.ORDINAL):
            raise ConfigError(f"attributes: pram changes categories; '{name}' is {kind.value}")
    if matrix is not None and len(names) != 1:
        raise ConfigError(
            f"matrix: a transition matrix applies to one attribute, got {len(names)} ({', '.join(names)}); "
            "name it with attributes"
        )
    overlap = [name for name in (strata or []) if name in names]
    if overlap:
        raise ConfigError(f"strata: '{overlap[0]}' is also post-randomized; a stratum attribute cannot be")
    given = read_matrix(params.matrix) if params.matrix is not None else None
    keys, groups = stratum_keys(table, strata)
    labels = _stratum_labels(table, strata, keys, groups)
    encoding = encode(table.data, names)
    rng = np.random.default_rng(params.seed)
    columns, matrices, changed = [], {}, {}
    for j, name in enumerate(names):
        codes = encoding.codes[j]
        categories = encoding.categories[j]
        spelled = value_strings(categories).to_list()
        size = len(spelled)
        if given is not None:
            rows, values = given
            missing = [c for c in spelled if c not in rows]
            extra = [c for c in rows if c not in spelled]
            if missing or extra:
                raise ConfigError(
                    f"matrix: its categories must be those of '{name}'; missing from the matrix: "
                    f"{missing or 'none'}; not in the data: {extra or 'none'}"
                )
            order = [rows.index(c) for c in spelled]
            stack = values[np.ix_(order, order)][None]
        elif size == 0:
            stack = np.ones((groups, 1, 1))
        else:
            present = codes >= 0
            cells = keys[present] * size + codes[present]
            counts = np.bincount(cells, minlength=groups * size).reshape(groups, size).astype(np.float64)
            stack = np.empty((groups, size, size))
            for g in range(groups):
                stack[g] = invariant_matrix(counts[g], base_matrix(rng.uniform(pd, 1, size)), alpha)
        uniforms = rng.random(table.n_records)
        new = apply_matrices(codes, keys if given is None else np.zeros_like(keys), stack, uniforms)
        column = table.column(name)
        if size:
            released = categories.gather(np.maximum(new, 0))
            if (new < 0).any():
                released = released.scatter(np.flatnonzero(new < 0), None)
            if released.dtype != column.dtype:
                released = released.cast(column.dtype)
        else:
            released = column
        columns.append(released.alias(name))
        changed[name] = int(np.count_nonzero(new != codes))
        matrices[name] = [
            {
                "stratum": labels[g] if given is None else None,
                "categories": spelled,
                "matrix": stack[g].tolist(),
            }
            for g in range(len(stack))
        ]
    frame = table.data.with_columns(columns)
    figures = PramFigures(changed_values=changed, matrices=matrices)
    return perturbed_release(table, frame, "pram", names, params, figures, seed=params.seed)


def pram(
    table: Table,
    attributes: Sequence[str] | None = None,
    *,
    matrix: str | Path | None = None,
    strata: Sequence[str] | None = None,
    pd: float | None = None,
    alpha: float | None = None,
    seed: int = 0,
) -> Release:
    """PRAM of categorical attributes (see the module docstring).

    ``attributes`` default to the categorical quasi-identifiers; with ``matrix`` (a CSV file) exactly
    one attribute, whose categories the matrix must name (ConfigError otherwise). ``pd`` is the lower
    bound of the diagonal of the base matrix and ``alpha`` the weight of the invariant matrix (default
    sdcMicro's 0.8 and 0.5; only without ``matrix``). The figures (:class:`PramFigures`) hold every
    matrix used.
    """
    values = {
        "attributes": attributes,
        "matrix": matrix,
        "strata": strata,
        "pd": pd,
        "alpha": alpha,
        "seed": seed,
    }
    return run_method("pram", table, values, Context())


__all__ = [
    "PramFigures",
    "PramParams",
    "apply_matrices",
    "base_matrix",
    "invariant_matrix",
    "matrices_frame",
    "pram",
    "read_matrix",
]
