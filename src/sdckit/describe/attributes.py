"""How well attributes single out records: α-distinction and α-separation of attribute sets (Motwani
& Xu 2007; ARX's ``RiskModelAttributes``) and the records in minimal sample uniques (SUDA2).

For a set of attributes Q over n records, with c_1..c_m the sizes of the m classes of records that
agree on Q (a missing value a value of its own, as in ARX)::

    α-distinction(Q) = m / n
    α-separation(Q)  = 1 - Σ_i c_i (c_i - 1) / (n (n - 1))

α-distinction is the share of records left when every class is cut to one record (Q is a key of the
table after removing a share 1 - α of the records); α-separation is the share of the n (n - 1) / 2
pairs of records that Q tells apart. Both are 1 for a key. ARX computes them for every subset of
the chosen quasi-identifiers (its power set); here the single attributes are all measured, pairs
among the strongest singles, and larger sets by a beam search that extends the best sets of the size
below (``beam`` of them) by one attribute at a time, so that the work stays polynomial.

Class keys come from :func:`sdckit.frequency.extend_keys` (one compiled pass per attribute added to a
set); MSUs from :func:`sdckit.risk.suda.find_msus`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from sdckit.frequency import Encoding, encode, extend_keys, initial_keys
from sdckit.risk.suda import MAX_KEYS, find_msus


@dataclass(frozen=True)
class AttributeSet:
    """The α figures of a set of attributes: ``classes`` distinct combinations, ``uniques`` records
    alone in theirs (sample uniques)."""

    attributes: tuple[str, ...]
    distinction: float
    separation: float
    classes: int
    uniques: int


def alpha(sizes: np.ndarray, n: int) -> tuple[float, float]:
    """α-distinction and α-separation of the class sizes ``sizes`` of ``n`` records (0 and 0 for
    fewer than two records, ARX's value for an undefined ratio)."""
    if n < 2:
        return 0.0, 0.0
    sizes = np.asarray(sizes, dtype=np.float64)
    together = float(np.sum(sizes * (sizes - 1.0)))
    return len(sizes) / n, 1.0 - together / (float(n) * (n - 1.0))


def _ranked(sets: list[AttributeSet]) -> list[AttributeSet]:
    return sorted(sets, key=lambda s: (-s.separation, -s.distinction, s.attributes))


def attribute_sets(
    frame: pl.DataFrame,
    names: list[str],
    max_size: int = 3,
    width: int = 10,
    beam: int = 5,
    encoding: Encoding | None = None,
) -> dict[int, list[AttributeSet]]:
    """The measured attribute sets of each size 1..``max_size``, strongest first (α-separation,
    then α-distinction): every single attribute of ``names``; the pairs of the ``width`` strongest
    singles; for larger sizes, the ``beam`` strongest sets of the size below, each extended by every
    other attribute of those ``width``."""
    n = frame.height
    if not names or n == 0:
        return {}
    encoding = encoding if encoding is not None else encode(frame, names)
    codes = {name: encoding.codes[encoding.index(name)] for name in names}
    cards = {name: encoding.cardinalities[encoding.index(name)] for name in names}
    keys: dict[tuple[str, ...], tuple[np.ndarray, np.ndarray]] = {}

    def measure(attributes: tuple[str, ...], base: tuple[str, ...], added: str) -> AttributeSet:
        grown = extend_keys(keys[base][0], keys[base][1], codes[added], cards[added])
        keys[attributes] = grown
        distinction, separation = alpha(grown[1], n)
        uniques = int(np.count_nonzero(grown[1] == 1))
        return AttributeSet(attributes, distinction, separation, len(grown[1]), uniques)

    keys[()] = initial_keys(n)
    found = {1: _ranked([measure((name,), (), name) for name in names])}
    pool = [s.attributes[0] for s in found[1][:width]]
    order = {name: i for i, name in enumerate(names)}
    for size in range(2, min(max_size, len(pool)) + 1):
        bases = [(name,) for name in pool] if size == 2 else [s.attributes for s in found[size - 1][:beam]]
        # only the keys of the sets extended now are kept (n int32 each): memory stays a few columns
        keys = {base: keys[base] for base in bases}
        seen: set[tuple[str, ...]] = set()
        measured = []
        for base in bases:
            for name in pool:
                attributes = tuple(sorted({*base, name}, key=order.__getitem__))
                if name in base or attributes in seen:
                    continue
                seen.add(attributes)
                measured.append(measure(attributes, base, name))
        found[size] = _ranked(measured)
    return found


@dataclass(frozen=True)
class MinimalUniques:
    """Records with a minimal sample unique of at most ``max_size`` of the ``keys`` (SUDA2):
    ``records`` in all, ``by_attribute`` those with an MSU that holds the attribute, ``by_size``
    the MSUs of each size."""

    keys: tuple[str, ...]
    max_size: int
    records: int
    by_attribute: dict[str, int]
    by_size: dict[int, int]


def minimal_uniques(
    frame: pl.DataFrame, keys: list[str], max_size: int = 3, encoding: Encoding | None = None
) -> MinimalUniques | None:
    """The records of ``frame`` in minimal sample uniques of ``keys`` (at most :data:`MAX_KEYS`
    of them, the first ones taken), by attribute and by size; None without keys."""
    keys = keys[:MAX_KEYS]
    if not keys or frame.height == 0:
        return None
    encoding = encoding if encoding is not None else encode(frame, keys)
    columns = [encoding.index(name) for name in keys]
    codes = np.column_stack([encoding.codes[j] for j in columns]).astype(np.int32)
    size = max(1, min(max_size, len(keys)))
    records, masks = find_msus(codes, [encoding.cardinalities[j] for j in columns], size)
    by_attribute = {}
    flagged = np.zeros(frame.height, dtype=bool)
    for j, name in enumerate(keys):
        flagged[:] = False
        flagged[records[(masks >> j) & 1 == 1]] = True
        by_attribute[name] = int(np.count_nonzero(flagged))
    flagged[:] = False
    flagged[records] = True
    sizes = np.zeros(len(masks), dtype=np.int64)
    for j in range(len(keys)):
        sizes += (masks >> j) & 1
    counted = np.bincount(sizes, minlength=size + 1)
    return MinimalUniques(
        keys=tuple(keys),
        max_size=size,
        records=int(np.count_nonzero(flagged)),
        by_attribute=by_attribute,
        by_size={s: int(counted[s]) for s in range(1, size + 1)},
    )
