"""Random orthogonal matrix masking (ROMM; Ting, Fienberg & Trottini 2008; sdcMicro's
``addNoise(method = "ROMM")``): the released records are ``Y = T·X``, ``T`` a random orthogonal matrix
close to the identity that keeps the vector of ones (``T·1 = 1``).

Because ``Tᵀ T = I`` and ``T·1 = 1``, the released sample means and the sample covariance matrix equal
the original ones exactly (up to rounding): ``1ᵀY = 1ᵀX`` and ``(Y − 1ȳᵀ)ᵀ(Y − 1ȳᵀ) = (X − 1x̄ᵀ)ᵀ
TᵀT (X − 1x̄ᵀ)``. So does every statistic that is a function of them (least-squares regressions of the
masked attributes on one another), while each record's values become a combination of the values of
other records.

The matrix is sdcMicro's: ``T`` orthonormalizes the columns of ``I + p·M`` by Gram-Schmidt, ``M`` of
independent standard normals, so ``p`` sets how far ``T`` is from the identity (``p = 0``: nothing
changes). Here it acts on the centred part, so that ones are kept: with ``W`` the Householder
reflection exchanging ``e₁`` and ``1/sqrt(b)``, ``T = W·diag(1, Q)·W`` with ``Q`` the Gram-Schmidt
orthonormalization of ``I + p·M`` of size ``b − 1``.

Deviations from sdcMicro 5.8.1:

* sdcMicro multiplies the uncentred data by one ``n × n`` matrix (``n²`` normals, ``O(n³)`` work:
  80 GB for the matrix of 10^5 records), which keeps ``XᵀX`` but not the means. sdckit splits the
  records, in a random order, into blocks of ``block`` to ``2·block − 1`` records and gives each block
  its own matrix, which keeps ones: every block keeps its mean and its scatter, so the whole file
  keeps both. ``block`` at least the number of records is one matrix for the whole file, as
  sdcMicro (still ``O(n³)``).
* Because ``p·M`` grows with the size of the matrix (its norm is about ``2·p·sqrt(b)``), the same
  ``p`` perturbs less in blocks than in one matrix of every record.
* A record with a missing value is refused (sdcMicro's matrix product turns the whole file into
  missing values).

References: Ting, D., Fienberg, S. E. and Trottini, M. (2008), Random orthogonal matrix masking
methodology for microdata release, Int. J. Information and Computer Security 2(1), 86-105.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any

import numpy as np
import polars as pl
from pydantic import Field

from sdckit._numba import njit
from sdckit.anonymize.base import Context, register_method, run_method
from sdckit.anonymize.perturbation import (
    Names,
    _float_column,
    _moments,
    _moments_report,
    numeric_attributes,
    perturbed_release,
)
from sdckit.anonymize.release import Figures, Release
from sdckit.errors import InputError
from sdckit.params import Finite, MethodParams, Whole
from sdckit.table import Table

#: Normals drawn at a time (the blocks are masked in chunks of about this many matrix entries).
_CHUNK = 1 << 22


@njit(cache=True, nogil=True)
def _orthonormal_columns(a: np.ndarray) -> np.ndarray:  # pragma: no cover (compiled)
    """Modified Gram-Schmidt orthonormalization of the columns of ``a`` (in place); a column whose
    norm falls below ``1/sqrt(2)`` of what it was is orthogonalized once more (Kahan and Parlett's
    "twice is enough"), so the result is orthogonal to rounding however close the columns are."""
    m = a.shape[0]
    for k in range(m):
        before = 0.0
        for i in range(m):
            before += a[i, k] * a[i, k]
        for _ in range(2):
            for j in range(k):
                dot = 0.0
                for i in range(m):
                    dot += a[i, j] * a[i, k]
                for i in range(m):
                    a[i, k] -= dot * a[i, j]
            after = 0.0
            for i in range(m):
                after += a[i, k] * a[i, k]
            if after > 0.5 * before:
                break
            before = after
        norm = math.sqrt(after)
        for i in range(m):
            a[i, k] /= norm
    return a


@njit(cache=True, nogil=True)
def _mask_blocks(
    x: np.ndarray, order: np.ndarray, starts: np.ndarray, normals: np.ndarray, p: float, out: np.ndarray
) -> None:  # pragma: no cover (compiled)
    """``out[block] = T_b · x[block]`` for every block ``order[starts[k]:starts[k + 1]]``, with
    ``T_b = W·diag(1, Q)·W`` (see the module); block ``k`` reads its ``(b − 1)²`` normals (row by
    row) from ``normals`` after those of the blocks before it."""
    d = x.shape[1]
    offset = 0
    for k in range(len(starts) - 1):
        rows = order[starts[k] : starts[k + 1]]
        b = len(rows)
        if b == 1:
            for c in range(d):
                out[rows[0], c] = x[rows[0], c]
            continue
        m = b - 1
        a = np.empty((m, m))
        for i in range(m):
            for j in range(m):
                a[i, j] = p * normals[offset + i * m + j]
            a[i, i] += 1.0
        offset += m * m
        q = _orthonormal_columns(a)
        root = 1.0 / math.sqrt(b)
        v = np.full(b, root)
        v[0] -= 1.0  # W = I − 2·v·vᵀ / (vᵀv) exchanges e₁ and 1/sqrt(b)
        vv = 2.0 - 2.0 * root
        z = np.empty(b)
        w = np.empty(b)
        for c in range(d):
            dot = 0.0
            for i in range(b):
                dot += v[i] * x[rows[i], c]
            for i in range(b):
                z[i] = x[rows[i], c] - 2.0 * v[i] * dot / vv
            w[0] = z[0]
            for i in range(m):
                total = 0.0
                for j in range(m):
                    total += q[i, j] * z[j + 1]
                w[i + 1] = total
            dot = 0.0
            for i in range(b):
                dot += v[i] * w[i]
            for i in range(b):
                out[rows[i], c] = w[i] - 2.0 * v[i] * dot / vv


def block_starts(n: int, block: int) -> np.ndarray:
    """The bounds of ``max(1, n // block)`` blocks of ``n`` records whose sizes differ by at most one
    (each of ``block`` to ``2·block − 1`` records; one block of every record when ``block ≥ n``)."""
    count = max(1, n // block)
    sizes = np.full(count, n // count, dtype=np.int64)
    sizes[: n % count] += 1
    return np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)


def romm_mask(x: np.ndarray, p: float, block: int, rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """``(T·x, blocks)``: the rows of ``x`` (complete) in a random order, split by
    :func:`block_starts`, each block multiplied by its own orthogonal matrix that keeps ones."""
    n = x.shape[0]
    if n == 0:
        return x.astype(np.float64, copy=True), 0
    order = rng.permutation(n).astype(np.int64)
    starts = block_starts(n, block)
    entries = (np.diff(starts) - 1) ** 2
    out = np.empty_like(x)
    first, blocks = 0, len(starts) - 1
    source = np.ascontiguousarray(x, dtype=np.float64)
    while first < blocks:  # chunks of blocks of about _CHUNK normals each
        total = np.cumsum(entries[first:])
        last = first + max(1, int(np.searchsorted(total, _CHUNK, side="right")))
        normals = rng.standard_normal(int(entries[first:last].sum()))
        _mask_blocks(source, order, starts[first : last + 1], normals, float(p), out)
        first = last
    return out, blocks


def romm_matrix(b: int, p: float, normals: np.ndarray) -> np.ndarray:
    """The ``b × b`` matrix ``T`` of one block from its ``(b − 1)²`` normals (row by row), computed
    by the compiled kernel from the identity (its columns are ``T·e_i``)."""
    out = np.empty((b, b))
    identity = np.eye(b)
    _mask_blocks(identity, np.arange(b, dtype=np.int64), np.array([0, b], dtype=np.int64), normals, p, out)
    return out


class RommParams(MethodParams):
    """Parameters of random orthogonal matrix masking (``sdckit anonymize romm``)."""

    p: Annotated[
        Finite,
        Field(ge=0, description="Distance from the identity: T orthonormalizes I + p·M (sdcMicro's p)."),
    ] = 0.001
    block: Annotated[
        Whole,
        Field(ge=2, description="Records per matrix (block to 2·block − 1; ≥ the records: one matrix)."),
    ] = 20
    attributes: Annotated[
        Names, Field(description="Numeric attributes to mask, comma-separated (default: numeric QIs).")
    ] = None
    seed: Annotated[Whole, Field(ge=0, description="Seed of the record order and the matrices.")] = 0


@dataclass(frozen=True)
class RommFigures(Figures):
    """What ROMM did: the blocks (each with its own matrix) and their smallest and largest sizes, and
    per attribute its mean and standard deviation before and after (equal, to rounding)."""

    blocks: int
    smallest_block: int
    largest_block: int
    attributes: dict[str, dict[str, float | None]]


def _romm_summary(release: Release) -> dict[str, Any]:
    params, figures = release.params, release.figures_as(RommFigures)
    return {
        "p": params.p,
        "block": params.block,
        "seed": params.seed,
        "blocks": figures.blocks,
        "smallest_block": figures.smallest_block,
        "largest_block": figures.largest_block,
        "attributes": figures.attributes,
    }


@register_method(
    "romm",
    RommParams,
    summary=_romm_summary,
    help="Random orthogonal matrix masking (sdcMicro's addNoise ROMM): means and covariances kept exactly.",
    report=lambda figures: [
        f"{figures['blocks']:,} blocks of {figures['smallest_block']:,} to {figures['largest_block']:,} "
        f"records, p = {figures['p']:g}, seed {figures['seed']}",
        *_moments_report(figures),
    ],
    examples={"replay": {"attributes": ["Age"], "p": 0.2, "block": 3, "seed": 5}},
)
def _run_romm(table: Table, params: RommParams, context: Context) -> Release:
    """Random orthogonal matrix masking (see :func:`romm`)."""
    names = numeric_attributes(table, params.attributes, "romm")
    x = np.column_stack([_float_column(table, name) for name in names])
    incomplete = int(np.isnan(x).any(axis=1).sum())
    if incomplete:
        raise InputError(
            f"romm needs complete records: {incomplete:,} records have a missing value in "
            f"{', '.join(names)}; impute or drop them first"
        )
    rng = np.random.default_rng(params.seed)
    masked, blocks = romm_mask(x, params.p, params.block, rng)
    sizes = np.diff(block_starts(len(x), params.block)) if len(x) else np.zeros(1, dtype=np.int64)
    columns = [pl.Series(name, masked[:, j]) for j, name in enumerate(names)]
    released = table.data.with_columns(columns)
    figures = RommFigures(
        blocks=blocks if len(x) else 0,
        smallest_block=int(sizes.min()),
        largest_block=int(sizes.max()),
        attributes=_moments(x, masked, names),
    )
    return perturbed_release(table, released, "romm", names, params, figures, seed=params.seed)


def romm(
    table: Table,
    attributes: Sequence[str] | None = None,
    *,
    p: float = 0.001,
    block: int = 20,
    seed: int = 0,
) -> Release:
    """Random orthogonal matrix masking of numeric attributes (see the module docstring).

    Parameters
    ----------
    table : the data.
    attributes : the numeric attributes masked together (default: the numeric quasi-identifiers).
    p : how far each matrix is from the identity (sdcMicro's ``p``; 0 changes nothing).
    block : records per matrix (``block`` to ``2·block − 1``; at least the records: one matrix).
    seed : seed of ``numpy.random.default_rng`` (the record order, then the matrices).

    Returns
    -------
    Release whose masked columns are float64, with the original sample means and covariance matrix;
    its figures are :class:`RommFigures`.

    Raises
    ------
    InputError when a record has a missing value in ``attributes``.

    Examples
    --------
    >>> release = romm(table, ["income", "hours"], p=0.1, seed=1)  # doctest: +SKIP
    """
    values = {"attributes": attributes, "p": p, "block": block, "seed": seed}
    return run_method("romm", table, values, Context())


__all__ = ["RommFigures", "RommParams", "block_starts", "romm", "romm_mask", "romm_matrix"]
