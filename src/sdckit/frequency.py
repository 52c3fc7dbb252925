"""The counting kernel: every count sdckit makes goes through here.

Attributes are factorized to integer codes once (:func:`encode`); a set of attributes is turned
into one dense integer *group key* per record by combining codes one attribute at a time
(:func:`extend_keys`), so that the keys of a larger attribute set are computed from the keys of a
smaller one plus one column, never by regrouping strings. Frequencies are then a ``bincount``.

Two treatments of missing values are offered, chosen by the ``missing`` parameter:

``"category"``
    A null is a value of its own: two records match on an attribute iff both are null or both hold
    the same value.
``"wildcard"``
    A null matches every value (the convention of sdcMicro's ``freqCalc``/``measure_risk``): two
    records match on an attribute iff either is null or both hold the same value. Counting is
    exact: records are first collapsed to their distinct value patterns, then for every pair of
    null patterns (which attributes are missing) the patterns are matched on the attributes that
    neither side misses (:func:`wildcard_frequencies`).

Optional sampling weights replace counts by sums of weights (estimated population frequencies).

A third way to count compares two tables: an original (what an adversary knows) and a release of it
whose values may be generalized. *Coverage counting* (:func:`coverage_pattern_sizes`, labels read by
:mod:`sdckit.coverage`) gives every original record the number of released records whose values
cover its values: an interval its numbers, a hierarchy node its leaves, a set its members, ``*``
everything. Wildcard nulls are its special case where a label covers one value or every value.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import polars as pl

from sdckit.errors import ConfigError

if TYPE_CHECKING:
    from sdckit import _kernels_counting
    from sdckit._kernels_counting import KeyExtender
else:

    class _Kernels:
        """The compiled counting kernels, imported on first use: importing numba costs most of a
        second, which a command spends in a background thread while it reads its data
        (:func:`warm_up_in_background`) instead of before."""

        def __getattr__(self, name: str) -> Any:
            from sdckit import _kernels_counting

            return getattr(_kernels_counting, name)

    _kernels_counting = _Kernels()

    def __getattr__(name: str) -> Any:
        if name == "KeyExtender":  # see below
            return _kernels_counting.KeyExtender
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


MISSING_TREATMENTS = ("category", "wildcard")


@dataclass(frozen=True)
class Encoding:
    """Integer codes of some attributes.

    ``codes[j]`` holds, per record, the code of attribute ``names[j]`` in ``0 .. cardinalities[j]-1``
    (codes follow the sorted order of the distinct values) or ``-1`` for a missing value.
    ``categories[j]`` lists the distinct non-missing values in code order.
    """

    names: tuple[str, ...]
    codes: tuple[np.ndarray, ...]
    cardinalities: tuple[int, ...]
    has_missing: tuple[bool, ...]
    categories: tuple[pl.Series, ...]
    n_records: int

    def index(self, name: str) -> int:
        try:
            return self.names.index(name)
        except ValueError:
            raise ConfigError(
                f"attribute '{name}' is not encoded (encoded: {', '.join(self.names)})"
            ) from None


def _textual(dtype: pl.DataType) -> bool:
    return dtype in (pl.String, pl.Categorical, pl.Enum, pl.Object)


def encode_column(column: pl.Series) -> tuple[np.ndarray, int, bool, pl.Series]:
    """Codes (int32, -1 for null), cardinality, whether a null occurs, and the sorted distinct values.

    Codes follow the sorted order of the distinct values.
    """
    encoding = encode(column.to_frame("column"))
    return encoding.codes[0], encoding.cardinalities[0], encoding.has_missing[0], encoding.categories[0]


def encode(frame: pl.DataFrame, names: Sequence[str] | None = None) -> Encoding:
    """Factorize the given columns of ``frame`` (all columns by default) to integer codes.

    Codes follow the sorted order of each column's distinct values. Text columns are coded by a
    hash-based Enum cast and other columns by a binary search over their few distinct values, so the
    whole column is never sorted; the columns are processed in parallel by polars.
    """
    names = tuple(frame.columns if names is None else names)
    fast = _encode_small_integers(frame, names)
    if fast:
        rest = encode(frame, [name for name in names if name not in fast]) if len(fast) < len(names) else None
        parts = []
        for name in names:
            if name in fast:
                parts.append(fast[name])
            else:
                assert rest is not None  # the names not encoded fast
                j = rest.index(name)
                parts.append((rest.codes[j], rest.cardinalities[j], rest.has_missing[j], rest.categories[j]))
        return Encoding(
            names=names,
            codes=tuple(part[0] for part in parts),
            cardinalities=tuple(part[1] for part in parts),
            has_missing=tuple(part[2] for part in parts),
            categories=tuple(part[3] for part in parts),
            n_records=frame.height,
        )
    prepared = []
    for name in names:
        expression = pl.col(name)
        dtype = frame.schema[name]
        if dtype in (pl.Categorical, pl.Enum, pl.Object):
            expression = expression.cast(pl.String)
        elif dtype == pl.Boolean:
            expression = expression.cast(pl.Int8)
        prepared.append(expression.alias(name))
    # Few polars calls: each costs a fixed overhead that matters on small tables.
    data = frame.select(prepared) if names else frame.select([])
    summary = (
        data.select(
            *(pl.col(name).drop_nulls().unique().sort().implode() for name in names),
            *(pl.col(name).null_count().alias(f"\0nulls {name}") for name in names),
        )
        if names
        else None
    )
    categories = [summary.get_column(name)[0] for name in names] if summary is not None else []
    null_counts = (
        tuple(int(summary.get_column(f"\0nulls {name}")[0]) for name in names) if summary is not None else ()
    )
    textual = [name for name in names if _textual(data.schema[name])]
    viewed = _view_codes(data, textual, [categories[names.index(name)] for name in textual])
    textual = [name for name in textual if name not in viewed]
    text_codes = (
        data.select(_text_codes(name, categories[names.index(name)]) for name in textual) if textual else None
    )
    codes = []
    for j, name in enumerate(names):
        if name in viewed:
            column_codes = viewed[name]
        elif text_codes is not None and name in text_codes.columns:
            column_codes = text_codes.get_column(name).to_numpy()
        elif len(categories[j]) == 0:
            column_codes = np.full(frame.height, -1, dtype=np.int32)
        else:
            column = data.get_column(name)
            filled = column.fill_null(categories[j][0]) if null_counts[j] else column
            distinct = categories[j].to_numpy()
            values = filled.to_numpy()
            span = int(distinct[-1]) - int(distinct[0]) if column.dtype.is_integer() else -1
            if 0 <= span <= 4 * len(values):
                # Small integer range: a look-up table instead of a binary search per record.
                table = np.zeros(span + 1, dtype=np.int32)
                table[distinct.astype(np.int64) - int(distinct[0])] = np.arange(len(distinct), dtype=np.int32)
                column_codes = table[values.astype(np.int64) - int(distinct[0])]
            else:
                column_codes = np.searchsorted(distinct, values)
            if null_counts[j]:
                column_codes[column.is_null().to_numpy()] = -1
        codes.append(np.ascontiguousarray(column_codes, dtype=np.int32))
    return Encoding(
        names=names,
        codes=tuple(codes),
        cardinalities=tuple(len(c) for c in categories),
        has_missing=tuple(count > 0 for count in null_counts),
        categories=tuple(categories),
        n_records=frame.height,
    )


# From this many values (records times columns), the text columns of more than two values are coded
# by the compiled look-up of each value's bytes in a hash table of the column's distinct values
# (:func:`sdckit._kernels_text.view_codes`): the same codes as the Enum cast at about half its CPU
# (14 text columns of 3 to 7,456 values and 10^6 records: 0.10-0.13 against 0.21-0.35 s), once its
# fixed cost (pyarrow's import, 0.035 s) is paid.
VIEW_CODES_FROM = 5_000_000


def _view_codes(data: pl.DataFrame, names: list[str], categories: list[pl.Series]) -> dict[str, np.ndarray]:
    """The codes of the text columns ``names`` that :func:`sdckit._kernels_text.view_codes` can
    code (more than two distinct values, ``categories``, and enough records); the others are left to
    :func:`_text_codes`."""
    chosen = [(name, values) for name, values in zip(names, categories, strict=True) if len(values) > 2]
    if data.height * len(chosen) < VIEW_CODES_FROM or not chosen:
        return {}
    from sdckit import _kernels_text

    found = {}
    for name, values in chosen:
        table = _kernels_text.label_table(values.to_list())
        column_codes = _kernels_text.view_codes(data.get_column(name), table) if table is not None else None
        if column_codes is not None:
            found[name] = column_codes
    return found


def _text_codes(name: str, categories: pl.Series) -> pl.Expr:
    """The codes of a text column (-1 for null) given its sorted distinct values: the value's rank
    through an Enum cast, or for two values one comparison with the second (what the cast gives,
    at a seventh of its cost: yes/no flags are common)."""
    if len(categories) == 2:
        return (pl.col(name) == categories[1]).cast(pl.Int32).fill_null(-1)
    return pl.col(name).cast(pl.Enum(categories.to_list())).to_physical().cast(pl.Int32).fill_null(-1)


def _encode_small_integers(
    frame: pl.DataFrame, names: Sequence[str]
) -> dict[str, tuple[np.ndarray, int, bool, pl.Series]]:
    """Codes of the integer columns whose values span at most 4 records per value, by a look-up
    table of the values present (no sort, no hashing): the same codes and categories as the general
    path of :func:`encode`, in a few linear numpy passes."""
    integers = [name for name in names if frame.schema[name].is_integer() and frame.schema[name] != pl.UInt64]
    if not integers or frame.height == 0:
        return {}
    bounds = frame.select(
        *(pl.col(name).min().cast(pl.Int64).alias(f"min {name}") for name in integers),
        *(pl.col(name).max().cast(pl.Int64).alias(f"max {name}") for name in integers),
    ).row(0)
    chosen = {}
    for j, name in enumerate(integers):
        low, high = bounds[j], bounds[len(integers) + j]
        if low is not None and high - low <= 4 * frame.height:
            chosen[name] = (low, high)
    if not chosen:
        return {}
    # Values shifted so that the smallest is 1; a null becomes 0.
    shifted = frame.select(
        (pl.col(name).cast(pl.Int64) - (low - 1)).fill_null(0).alias(name)
        for name, (low, _) in chosen.items()
    )
    result = {}
    for name, (low, high) in chosen.items():
        values = shifted.get_column(name).to_numpy()
        counts = np.bincount(values, minlength=high - low + 2)
        has_missing = bool(counts[0])
        present = counts[1:] > 0
        # Code of shifted value v: rank of v among the present values; 0 (a null) gets -1.
        table = np.empty(len(counts), dtype=np.int32)
        table[0] = -1
        table[1:] = np.cumsum(present, dtype=np.int64) - 1
        codes = np.ascontiguousarray(table[values])
        distinct = np.flatnonzero(present) + low
        categories = pl.Series("", distinct).cast(frame.schema[name])
        result[name] = (codes, int(present.sum()), has_missing, categories)
    return result


def extend_keys(
    keys: np.ndarray, sizes: np.ndarray, codes: np.ndarray, cardinality: int
) -> tuple[np.ndarray, np.ndarray]:
    """Group keys of an attribute set plus one attribute, from the set's keys and the attribute's codes.

    ``keys`` are dense keys of the records and ``sizes`` the number of records of each key; ``codes``
    are the new attribute's codes of the same records (``-1`` = missing, kept as a value of its own).
    Returns the new dense keys (int32, numbered in order of first appearance) and the number of
    records of each. One compiled linear pass, see :class:`sdckit._kernels_counting.KeyExtender`.
    """
    extender = _kernels_counting.KeyExtender(len(keys))
    new_keys, new_sizes, _ = extender.extend(
        np.ascontiguousarray(keys, dtype=np.int32),
        np.ascontiguousarray(sizes, dtype=np.int64),
        np.ascontiguousarray(codes, dtype=np.int32),
        cardinality,
    )
    return new_keys, new_sizes


def combine_codes(
    columns: Sequence[np.ndarray], cardinalities: Sequence[int], n: int
) -> tuple[np.ndarray, np.ndarray]:
    """Dense keys (int32, numbered in order of first appearance, as :func:`extend_keys` numbers them)
    and group sizes of the records' combinations of ``columns`` (codes ``-1`` .. ``cardinality - 1``;
    ``-1``, a missing value, is a value of its own).

    Mixed-radix keys of as many columns as fit in 62 bits, one compiled pass per column; when the next
    column would not fit, the key so far is replaced by its dense number, so one hashed pass is
    needed per 62 bits rather than per column (46 columns of 2 to 64 values take 3). Once the columns
    so far set every record apart, the rest cannot join any: record r is group r, of one record.
    """
    combined = np.zeros(n, dtype=np.int64)
    bound = 1
    for codes, cardinality in zip(columns, cardinalities, strict=True):
        radix = int(cardinality) + 1
        if bound * radix >= 2**62:
            dense, dense_sizes = _kernels_counting.densify_hashed(combined)
            if len(dense_sizes) == n:
                return np.arange(n, dtype=np.int32), np.ones(n, dtype=np.int64)
            combined, bound = dense.astype(np.int64), len(dense_sizes)
        _kernels_counting.mix_codes(combined, codes, radix)
        bound *= radix
    return _kernels_counting.densify_hashed(combined)


def key_extender(n: int) -> KeyExtender:
    """Scratch tables for extending the group keys of ``n`` records one attribute at a time
    (:meth:`~sdckit._kernels_counting.KeyExtender.extend`), kept by a caller that extends the keys
    of the same records many times (a walk over attribute sets), so that each extension costs
    O(records). (``sdckit.frequency.KeyExtender`` is the class, loaded on first use.)"""
    return _kernels_counting.KeyExtender(n)


def dense_keys(values: np.ndarray, upper: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Dense keys (int32, numbered in order of first appearance) and the size of each group of the
    records' combined keys ``values`` (non-negative int64, e.g. mixed-radix combinations of codes).

    With ``upper`` (above every value) the groups are found through a direct table of that size, else
    (0) through an open-addressing hash table: one compiled linear pass either way.
    """
    if upper:
        return _kernels_counting.densify_direct(values, upper)
    return _kernels_counting.densify_hashed(values)


def first_of_groups(keys: np.ndarray, groups: int) -> np.ndarray:
    """The first record of each group of dense ``keys`` (int64; -1 for a group with no record): the
    representative whose values stand for its group's."""
    return _kernels_counting.first_of_groups(keys, groups)


def weighted_group_sizes(keys: np.ndarray, weights: np.ndarray, groups: int) -> np.ndarray:
    """The sum of ``weights`` (sampling weights: the estimated population frequency) of each group of
    dense ``keys``; records whose key is -1 (alone in their group, no longer tracked) are left out."""
    return _kernels_counting.group_weight_sums(keys, weights, groups)


def value_frequencies(codes: np.ndarray, column: int, weights: np.ndarray, n_values: int) -> np.ndarray:
    """The frequency of each value ``0 .. n_values-1`` of column ``column`` of the code matrix
    ``codes`` (rows weighted by ``weights``: counts of distinct combinations, or sampling weights),
    summed in row order as ``np.bincount`` sums, read in place (a column of a C-order matrix is
    strided)."""
    return _kernels_counting.column_weight_sums(codes, column, weights, n_values)


def class_value_counts(
    classes: np.ndarray, values: np.ndarray, counts: np.ndarray, n_classes: int, n_values: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The (class, value, count) triples of a sensitive attribute
    (:class:`sdckit.models.SensitiveCounts`): ``counts`` summed per distinct (class, value) pair,
    sorted by class then value, in O(triples + classes + values)."""
    return _kernels_counting.aggregate_pairs(classes, values, counts, n_classes, n_values)


def add_value_weights(total: np.ndarray, codes: np.ndarray, per_value: np.ndarray, factor: float) -> None:
    """``total[r] += factor * per_value[codes[r]]`` in place: each record's weight of its value (a
    missing value, code -1, adds nothing), as the combined risk sums a record's consequence."""
    _kernels_counting.weighted_sum_of_codes(total, codes, per_value, factor)


def add_contributions(
    risk: np.ndarray,
    best: np.ndarray,
    top: np.ndarray,
    index: np.int32,
    factor: float,
    total: np.ndarray,
    known: np.ndarray,
    keys: np.ndarray,
    group_inverse: np.ndarray,
    alone: np.ndarray,
) -> None:
    """Add, in place, one known set's contribution ``factor * (total[r] - known[r]) / frequency`` to
    each record's ``risk``, the frequency being that of the record's group (``1 / group_inverse[key]``,
    or ``1 / alone[r]`` for a record whose key is -1, alone in its group), and keep each record's
    largest contribution in ``best`` and its known set ``index`` in ``top`` (the first wins ties):
    the combined risk's sum over known sets (:func:`sdckit.risk.combined.combined_risk`)."""
    _kernels_counting.accumulate(risk, best, top, index, factor, total, known, keys, group_inverse, alone)


def add_known_contributions(*arguments: Any) -> None:
    """:func:`add_contributions` with the known weight computed in the same pass: the arguments
    ``risk, best, top, index, factor, total, parent_known, consequence, add, known, keys,
    group_inverse, alone``, the known weight being ``parent_known + consequence`` (written to
    ``known``) when ``add``, else ``parent_known``
    (:func:`sdckit._kernels_counting.accumulate_known`)."""
    _kernels_counting.accumulate_known(*arguments)


def add_known_contributions_at(*arguments: Any) -> None:
    """:func:`add_known_contributions` for the records ``active`` (int32, ascending) only: the
    arguments ``risk, best, top, index, factor, total, parent_known, consequence, add, known, active,
    keys, group_inverse, alone``, where every per-record array but ``keys`` holds the active records
    only, in ``active``'s order (:func:`sdckit._kernels_counting.accumulate_known_at`)."""
    _kernels_counting.accumulate_known_at(*arguments)


_warming: list[object] = []


def warm_up_in_background() -> None:
    """Import numba and load the compiled counting kernels from numba's cache in a daemon thread,
    once per process, so that a command's first count does not wait for numba (see
    :func:`sdckit._kernels_counting.warm_up`): the import happens there too, while the command
    reads its data (polars releases the interpreter lock while it reads)."""
    if _warming:
        return
    thread = threading.Thread(target=_warm_up, name="sdckit-kernels", daemon=True)
    _warming.append(thread)
    thread.start()


def _warm_up() -> None:
    import sdckit._numba  # noqa: F401  (numba, under that module's import lock)

    # isort: split
    # numba's typed list too, before any kernel loads: a kernel module of the command's own thread
    # that imports it then waits for this import instead of entering it halfway (its modules and the
    # ones numba imports while it loads kernels import each other).
    from numba.typed import List  # noqa: F401

    # isort: split
    from sdckit import _kernels_counting as kernels

    kernels.warm_up()


def finish_warm_up(stop: Callable[[], bool]) -> None:
    """Wait for the background warm-up of :func:`warm_up_in_background`, if one runs, until it ends or
    ``stop()`` (an interrupt). Loading cached kernels ends long before a command does; compiling them
    (an empty numba cache, no precompiled kernels) may not, and a process that exits meanwhile kills
    the compilation, so that the next run compiles again what this one started."""
    for thread in _warming:
        while isinstance(thread, threading.Thread) and thread.is_alive() and not stop():
            thread.join(0.1)


def initial_keys(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Keys and sizes of the empty attribute set: one group holding every record."""
    return np.zeros(n, dtype=np.int32), np.array([n] if n else [], dtype=np.int64)


def group_keys(encoding: Encoding, attributes: Sequence[int | str]) -> tuple[np.ndarray, int]:
    """Dense group keys of an attribute set (missing values as a category of their own)."""
    keys, sizes = initial_keys(encoding.n_records)
    for attribute in attributes:
        j = encoding.index(attribute) if isinstance(attribute, str) else attribute
        keys, sizes = extend_keys(keys, sizes, encoding.codes[j], encoding.cardinalities[j])
    return keys, len(sizes)


def group_sizes(keys: np.ndarray, groups: int, weights: np.ndarray | None = None) -> np.ndarray:
    """Size of each group (sum of weights if given)."""
    return np.bincount(keys, weights=weights, minlength=groups)


@dataclass(frozen=True)
class Grouping:
    """The groups of the records of a frame by their values of some columns.

    ``keys[r]`` is the group of record ``r`` (int32, ``0 .. n_groups-1`` in order of first appearance),
    ``sizes[g]`` the number of records of group ``g`` and ``first[g]`` its first record. ``tokens``
    holds, for the Enum columns, each record's physical code + ``token_offset`` (0 for a null when
    the offset is 1): cheap exact values that callers may compare instead of text.
    """

    keys: np.ndarray
    sizes: np.ndarray
    first: np.ndarray
    tokens: dict[str, np.ndarray] = field(default_factory=dict)
    token_offset: int = 0

    @property
    def n_groups(self) -> int:
        return len(self.sizes)


# Column types whose values are turned into exact integer tokens (no hashing, no verification).
_CODED = (pl.Enum, pl.Categorical)


def _exact_tokens(
    frame: pl.DataFrame, names: Sequence[str], schema: pl.Schema
) -> tuple[dict[str, tuple[np.ndarray, int]], int]:
    """Exact non-negative integer tokens and their range (tokens lie in ``0 .. range-1``) for the
    columns that allow them, and the offset of the dictionary-coded ones.

    Dictionary-coded and boolean columns give their physical codes, plus 1 (the offset) when one of
    them holds a null, which then becomes 0; integer columns give their values shifted so that the
    smallest is 1 (null 0). Other columns, and integers spanning nearly 2**63, are left out.
    """
    exact: dict[str, tuple[np.ndarray, int]] = {}
    offset = 0
    coded = [name for name in names if isinstance(schema[name], _CODED) or schema[name] == pl.Boolean]
    if coded:
        # One select and one conversion for all of them: per-column calls would cost more than the work.
        physical = frame.select(
            pl.col(name).to_physical() if schema[name] != pl.Boolean else pl.col(name).cast(pl.UInt8)
            for name in coded
        )
        if any(physical.null_count().row(0)):
            physical = physical.select((pl.all().cast(pl.Int64) + 1).fill_null(0))
            offset = 1
        matrix = physical.to_numpy()
        uppers = matrix.max(axis=0).astype(np.int64) + 1 if len(matrix) else np.ones(len(coded), np.int64)
        for j, name in enumerate(coded):
            exact[name] = (matrix[:, j], int(uppers[j]))
    for name in names:
        column = frame.get_column(name)
        if name in exact or not column.dtype.is_integer() or column.dtype == pl.UInt64:
            continue
        if column.null_count() == column.len():
            exact[name] = (np.zeros(column.len(), dtype=np.int64), 1)
            continue
        # an integer column with some values: its min and max are integers
        low, high = int(cast(int, column.min())), int(cast(int, column.max()))
        if high - low >= 2**61:
            continue
        tokens = (column.cast(pl.Int64) - (low - 1)).fill_null(0).to_numpy()
        exact[name] = (tokens, high - low + 2)
    return exact, offset


def group_records(frame: pl.DataFrame, names: Sequence[str], schema: pl.Schema | None = None) -> Grouping:
    """The groups of the records of ``frame`` by their values of ``names``, nulls as values of their
    own; the same grouping as :func:`group_keys` on an encoding, numbered by first appearance.

    Fast path for one-off groupings. Dictionary-coded (Enum, Categorical), integer and boolean
    columns contribute exact integer tokens; when only such columns are grouped and the product of
    their ranges fits in 62 bits, the mixed-radix key is exact and nothing is hashed. Otherwise
    polars hashes the remaining columns in parallel, every token is folded into a row hash, the row
    hashes are densified in one compiled pass and the result is verified exact (every record equals
    its group's first record on every column); should a hash collision merge different rows, the
    grouping falls back to integer encoding. ``schema`` may pass ``frame.schema`` if the caller has
    it (polars builds it anew on every access).
    """
    n = frame.height
    names = list(names)
    if not names or n == 0:
        keys, sizes = initial_keys(n)
        return Grouping(keys, sizes, np.zeros(len(sizes), dtype=np.int64))
    schema = frame.schema if schema is None else schema
    exact, offset = _exact_tokens(frame, names, schema)
    enum_tokens = {name: exact[name][0] for name in exact if isinstance(schema[name], pl.Enum)}
    hashed = [name for name in names if name not in exact]

    def grouping(keys: np.ndarray, sizes: np.ndarray, first: np.ndarray | None = None) -> Grouping:
        first = _kernels_counting.first_of_groups(keys, len(sizes)) if first is None else first
        return Grouping(keys, sizes, first, enum_tokens, offset)

    if not hashed and sum(np.log2(float(upper)) for _, upper in exact.values()) < 62:
        combined = np.zeros(n, dtype=np.int64)
        upper = 1
        for name in names:
            tokens, radix = exact[name]
            _kernels_counting.mix_radix(combined, tokens, radix)
            upper *= radix
        if upper <= 4 * n + 64:
            return grouping(*_kernels_counting.densify_direct(combined, upper))
        return grouping(*_kernels_counting.densify_hashed(combined))
    row = np.zeros(n, dtype=np.uint64)
    if hashed:
        hashes = frame.select(pl.col(name).hash(seed=0) for name in hashed)
        for name in hashed:
            _kernels_counting.mix_hashes(
                row, np.ascontiguousarray(hashes.get_column(name).to_numpy(), dtype=np.uint64)
            )
    for tokens, _ in exact.values():
        _kernels_counting.mix_hashes(row, tokens.astype(np.uint64))
    keys, sizes = _kernels_counting.densify_hashed((row >> np.uint64(1)).astype(np.int64))
    first = _kernels_counting.first_of_groups(keys, len(sizes))
    representative = first[keys]
    exact_ok = all(np.array_equal(tokens, tokens[representative]) for tokens, _ in exact.values())
    if exact_ok and hashed:
        index = pl.Series(representative)
        exact_ok = frame.select(
            pl.all_horizontal(pl.col(name).eq_missing(pl.col(name).gather(index)) for name in hashed)
            .all()
            .alias("exact")
        ).item()
    if exact_ok:
        return grouping(keys, sizes, first)
    keys, n_groups = group_keys(encode(frame, names), names)
    return grouping(*_kernels_counting.densify_direct(keys.astype(np.int64), n_groups))


def check_missing(missing: str) -> str:
    if missing not in MISSING_TREATMENTS:
        raise ConfigError(f"missing must be one of {', '.join(MISSING_TREATMENTS)}, got {missing!r}")
    return missing


def check_weights(weights: np.ndarray | None, n: int, label: str = "weights") -> np.ndarray | None:
    """Validate sampling weights: one finite non-negative number per record (0 allowed: a record that
    stands for nobody). ``label`` names them in messages."""
    if weights is None:
        return None
    weights = np.asarray(weights, dtype=np.float64)
    if weights.shape != (n,):
        raise ConfigError(f"{label} must hold one number per record ({n}), got shape {weights.shape}")
    bad = np.flatnonzero(~np.isfinite(weights) | (weights < 0))
    if bad.size:
        row = int(bad[0])
        value = "a missing or non-numeric value" if np.isnan(weights[row]) else f"{weights[row]:g}"
        raise ConfigError(f"{label}: record {row + 1}: weights must be finite and non-negative, got {value}")
    return weights


def pattern_codes(encoding: Encoding, attributes: Sequence[int], keys: np.ndarray, groups: int) -> np.ndarray:
    """The codes (groups x len(attributes)) of each distinct pattern, read off one record per key."""
    representative = np.empty(groups, dtype=np.int64)
    # Any record of a pattern represents it, so it does not matter which duplicate write wins.
    representative[keys] = np.arange(len(keys), dtype=np.int64)
    return (
        np.stack([encoding.codes[j][representative] for j in attributes], axis=1)
        if attributes
        else (np.zeros((groups, 0), dtype=np.int64))
    )


def wildcard_pattern_sizes(
    patterns: np.ndarray, sizes: np.ndarray, cardinalities: Sequence[int]
) -> np.ndarray:
    """For every distinct pattern, the total size of the patterns that match it under wildcard nulls.

    ``patterns`` is (G x k) codes with ``-1`` for missing, ``sizes`` the count (or weight sum) of each
    pattern, or a (G x m) array of m such columns (counts and weight sums at once: the result is then
    G x m). Two patterns match iff they agree on every attribute that neither misses. The patterns
    are split by their null mask; for each pair of masks (a, b) the patterns of mask b are summed per
    value combination of the attributes both a and b observe, and looked up by the patterns of mask a.
    Exact; the cost is O(M * G) for M distinct null masks. The pairs are looped over in one compiled
    pass (:func:`sdckit._kernels_counting.wildcard_pair_sums`) when the product of the cardinalities fits in
    int64, else in Python with one key extension per observed attribute; both sum in the same order.
    """
    sizes = np.asarray(sizes, dtype=np.float64)
    matrix = sizes.reshape(len(sizes), -1) if sizes.ndim == 1 else sizes
    groups, k = patterns.shape
    if k > 62:
        raise ConfigError(f"wildcard counting supports at most 62 attributes at once, got {k}")
    bit = (np.int64(1) << np.arange(k, dtype=np.int64)) if k else np.zeros(0, dtype=np.int64)
    masks = (patterns < 0).astype(np.int64) @ bit if k else np.zeros(groups, dtype=np.int64)
    distinct_masks, mask_of = np.unique(masks, return_inverse=True)
    mask_of = mask_of.reshape(-1)
    order = np.argsort(mask_of, kind="stable")
    offsets = np.searchsorted(mask_of[order], np.arange(len(distinct_masks) + 1))
    members = [order[offsets[i] : offsets[i + 1]] for i in range(len(distinct_masks))]
    # Column sums of each mask's patterns, each column summed as a 1-D array (numpy's pairwise sum).
    totals = np.array(
        [[matrix[rows, c].sum() for c in range(matrix.shape[1])] for rows in members], dtype=np.float64
    ).reshape(len(members), matrix.shape[1])
    radices = np.array([max(int(c), 1) for c in cardinalities], dtype=np.int64)
    if groups and sum(np.log2(radices.astype(np.float64))) < 62:
        result = _kernels_counting.wildcard_pair_sums(
            np.ascontiguousarray(patterns, dtype=np.int32),
            np.ascontiguousarray(matrix),
            order.astype(np.int64),
            offsets.astype(np.int64),
            distinct_masks.astype(np.int64),
            totals,
            radices,
        )
    else:
        result = _wildcard_pattern_sizes_loop(
            patterns, matrix, cardinalities, distinct_masks, members, totals
        )
    return result.reshape(-1) if sizes.ndim == 1 else result


def alpha_wildcard_pattern_sizes(
    patterns: np.ndarray, sizes: np.ndarray, cardinalities: Sequence[int], alpha: float
) -> np.ndarray:
    """:func:`wildcard_pattern_sizes` where a match through a pattern with a missing value counts
    ``alpha`` (sdcMicro's ``freqCalc(alpha)``; ``alpha = 1`` is the plain wildcard count).

    sdcMicro's rule, read from its ``freqCalc``: a pattern counts its own records once and the complete
    patterns (no missing value) that match it once; every *other* matching pattern with a missing
    value counts ``alpha`` times its size (``alpha``, not ``alpha`` to the number of wildcards). A
    pattern whose every value is missing matches everything and counts the total, whatever ``alpha``.
    One deviation: with two or more keys, sdcMicro adds nothing from all-missing patterns to the
    complete patterns (its ``addAllNAtoKeys`` switch is off; with one key it adds ``alpha`` times them);
    here they count ``alpha`` like any other pattern with a missing value, so that ``alpha = 1`` is the
    plain wildcard count. Both sums go through the compiled :func:`wildcard_pattern_sizes` at once
    (complete and incomplete patterns as separate columns)."""
    sizes = np.asarray(sizes, dtype=np.float64)
    matrix = sizes.reshape(len(sizes), -1) if sizes.ndim == 1 else sizes
    missing = np.asarray(patterns) < 0
    incomplete: np.ndarray = np.asarray(missing.any(axis=1), dtype=bool)
    columns = matrix.shape[1]
    split = np.concatenate([matrix * ~incomplete[:, None], matrix * incomplete[:, None]], axis=1)
    summed = wildcard_pattern_sizes(patterns, split, cardinalities)
    complete, others = summed[:, :columns], summed[:, columns:]
    own = matrix * incomplete[:, None]
    result = complete + alpha * (others - own) + own
    everything = np.asarray(missing.all(axis=1), dtype=bool) & (patterns.shape[1] > 0)
    result[everything] = matrix.sum(axis=0)
    return result.reshape(-1) if sizes.ndim == 1 else result


def _wildcard_pattern_sizes_loop(
    patterns: np.ndarray,
    matrix: np.ndarray,
    cardinalities: Sequence[int],
    distinct_masks: np.ndarray,
    members: list[np.ndarray],
    totals: np.ndarray,
) -> np.ndarray:
    """:func:`wildcard_pattern_sizes` for key ranges beyond int64: one key extension per attribute."""
    groups, k = patterns.shape
    full = (1 << k) - 1
    result = np.zeros(matrix.shape, dtype=np.float64)
    # One set of scratch tables for every mask pair (each pair covers at most 2 * groups patterns).
    extender = _kernels_counting.KeyExtender(2 * groups)
    for ia, mask_a in enumerate(distinct_masks):
        rows_a = members[ia]
        for ib, mask_b in enumerate(distinct_masks):
            observed = full & ~(int(mask_a) | int(mask_b))
            if observed == 0:
                result[rows_a] += totals[ib]
                continue
            rows_b = members[ib]
            both = np.concatenate([rows_a, rows_b])
            keys, key_sizes = initial_keys(len(both))
            for j in range(k):
                if observed >> j & 1:
                    keys, key_sizes, _ = extender.extend(
                        keys,
                        key_sizes,
                        np.ascontiguousarray(patterns[both, j], dtype=np.int32),
                        cardinalities[j],
                    )
            n_keys = len(key_sizes)
            keys_a, keys_b = keys[: len(rows_a)], keys[len(rows_a) :]
            for c in range(matrix.shape[1]):
                summed = np.bincount(keys_b, weights=matrix[rows_b, c], minlength=n_keys)
                result[rows_a, c] += summed[keys_a]
    return result


def wildcard_group_sizes(
    encoding: Encoding,
    attributes: Sequence[int],
    keys: np.ndarray,
    groups: int,
    weights: np.ndarray | None = None,
) -> np.ndarray:
    """For each group of the category-treatment keys of an attribute set (each distinct pattern of
    values and nulls), the number (or weight sum) of records that match it under wildcard nulls."""
    sizes = group_sizes(keys, groups, weights).astype(np.float64)
    patterns = pattern_codes(encoding, attributes, keys, groups)
    cardinalities = [encoding.cardinalities[j] for j in attributes]
    return wildcard_pattern_sizes(patterns, sizes, cardinalities)


def frequencies(
    data: pl.DataFrame | Encoding,
    attributes: Sequence[str],
    *,
    weights: np.ndarray | None = None,
    missing: str = "category",
) -> np.ndarray:
    """For every record, how many records share its values on ``attributes``.

    With ``weights``, the sum of the sampling weights of those records (an estimate of the population
    frequency) instead of their number. ``missing`` chooses the treatment of nulls: ``"category"`` or
    ``"wildcard"`` (see the module docstring). The empty attribute set gives the total for every
    record. Returns float64 (exact integers when unweighted).
    """
    check_missing(missing)
    encoding = data if isinstance(data, Encoding) else encode(data, list(attributes))
    weights = check_weights(weights, encoding.n_records)
    indices = [encoding.index(name) for name in attributes]
    keys, groups = group_keys(encoding, indices)
    if missing == "wildcard" and any(encoding.has_missing[j] for j in indices):
        return wildcard_group_sizes(encoding, indices, keys, groups, weights)[keys]
    return group_sizes(keys, groups, weights).astype(np.float64)[keys]


def grouped_quantiles(values: np.ndarray, counts: np.ndarray, quantiles: Sequence[float]) -> np.ndarray:
    """``np.quantile`` (linear interpolation) of the array that repeats ``values[i]`` ``counts[i]``
    times, without building it: the order statistics are looked up in the cumulative counts."""
    keep = counts > 0
    values, counts = values[keep], counts[keep]
    order = np.argsort(values, kind="stable")
    sorted_values, cumulative = values[order], np.cumsum(counts[order])
    total = int(cumulative[-1])
    position = (total - 1) * np.asarray(quantiles, dtype=np.float64)
    low = np.floor(position).astype(np.int64)
    high = np.minimum(low + 1, total - 1)
    below = sorted_values[np.searchsorted(cumulative, low, side="right")].astype(np.float64)
    above = sorted_values[np.searchsorted(cumulative, high, side="right")].astype(np.float64)
    fraction = position - low
    return np.where(
        fraction >= 0.5, above - (above - below) * (1 - fraction), below + (above - below) * fraction
    )


def merge_pattern_counts(
    frame: pl.DataFrame, keys: Sequence[str], count: str, first: str, weight: str | None = None
) -> pl.DataFrame:
    """One row per distinct combination of ``keys`` (nulls as values) of ``frame``, whose rows are
    records (``count`` 1) or patterns already counted: the sum of ``count``, the smallest ``first``
    (the number of the first record) and the sum of ``weight`` (sampling weights), if given. The
    seam of runs over partitions (:mod:`sdckit.scale`): partitions are counted, then their counts
    merged, with this one function."""
    aggregations = [pl.col(count).sum(), pl.col(first).min()]
    if weight is not None:
        aggregations.append(pl.col(weight).sum())
    # The streaming engine groups about twice as fast as the in-memory one here (polars 2.1).
    return frame.lazy().group_by(list(keys)).agg(aggregations).collect(engine="streaming")


def _trie(patterns: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The trie of the rows of ``patterns`` (N x m, sorted lexicographically, m >= 1).

    Node 0 is the root; then the nodes of depth 1 (distinct first values), depth 2, ... Returns per
    node its value, the range ``low:high`` of its children's node numbers (ascending values), the
    number of the leaf (distinct row) it is, -1 above the leaves, and per row its leaf number.
    """
    n, m = patterns.shape
    new = np.zeros(n, dtype=bool)
    starts, ids, counts = [], [], []
    for j in range(m):
        if n:
            new[0] = True
            new[1:] |= patterns[1:, j] != patterns[:-1, j]
        start = np.flatnonzero(new)
        starts.append(start)
        ids.append(np.cumsum(new) - 1)
        counts.append(len(start))
    offsets = np.concatenate(([1], 1 + np.cumsum(counts)))
    total = int(offsets[-1])
    value = np.zeros(total, dtype=np.int64)
    low = np.zeros(total, dtype=np.int64)
    high = np.zeros(total, dtype=np.int64)
    leaf = np.full(total, -1, dtype=np.int64)
    low[0], high[0] = offsets[0], offsets[1]
    for j in range(m):
        node = slice(int(offsets[j]), int(offsets[j + 1]))
        value[node] = patterns[starts[j], j]
        if j + 1 < m:
            first = ids[j + 1][starts[j]] + offsets[j + 1]
            low[node] = first
            high[node] = np.append(first[1:], offsets[j + 2])
    leaf[int(offsets[m - 1]) : int(offsets[m])] = np.arange(counts[m - 1], dtype=np.int64)
    return value, low, high, leaf, ids[m - 1]


def coverage_pattern_sizes(
    targets: np.ndarray,
    released: np.ndarray,
    sizes: np.ndarray,
    covers: Sequence[tuple[np.ndarray, np.ndarray]],
) -> np.ndarray:
    """For every target row, the sums of ``sizes`` over the released rows that cover it.

    ``targets`` (T x k) holds slots of original values (0 = missing, see :mod:`sdckit.coverage`),
    ``released`` (R x k) label ids, ``sizes`` (R x m) what to sum (counts, weights); ``covers[j]`` is
    attribute j's ``(pointer, covering)``: the labels covering slot s are
    ``covering[pointer[s]:pointer[s+1]]``, ascending. A released row covers a target row iff each of
    its labels covers the target's slot. Returns T x m (float64).

    Exact. Both sides are collapsed to their distinct patterns, put in tries (attributes ordered from
    the narrowest labels to the widest) and joined depth-first by
    :func:`sdckit._kernels_counting.coverage_join`, which visits only the pairs of prefixes that cover
    each other: on a full-domain release a target
    prefix is covered by one node (plus '*' of the suppressed records), on a Mondrian release by the
    few classes' boxes that contain it, so the cost stays near-linear in the distinct patterns. The
    wildcard treatment of nulls (:func:`wildcard_pattern_sizes`) is the case where a label covers one
    value or every value.
    """
    sizes = np.asarray(sizes, dtype=np.float64)
    matrix = sizes.reshape(len(sizes), 1) if sizes.ndim == 1 else sizes
    n_targets, k = targets.shape
    if k == 0 or n_targets == 0 or len(released) == 0:
        return np.tile(matrix.sum(axis=0), (n_targets, 1)) if n_targets else np.zeros((0, matrix.shape[1]))
    # Narrow labels first: fewer pairs of prefixes survive the first depths.
    widths = [len(covering) / max(len(pointer) - 1, 1) for pointer, covering in covers]
    attribute_order = np.argsort(widths, kind="stable")
    targets = targets[:, attribute_order]
    released = released[:, attribute_order]
    chosen = [covers[j] for j in attribute_order]
    t_order = np.lexsort(targets.T[::-1])
    r_order = np.lexsort(released.T[::-1])
    t_value, t_low, t_high, t_leaf, t_row_leaf = _trie(targets[t_order])
    r_value, r_low, r_high, r_leaf, r_row_leaf = _trie(released[r_order])
    n_released_leaves = int(r_row_leaf[-1]) + 1
    released_sums = np.zeros((n_released_leaves, matrix.shape[1]), dtype=np.float64)
    for c in range(matrix.shape[1]):
        released_sums[:, c] = np.bincount(r_row_leaf, weights=matrix[r_order, c], minlength=n_released_leaves)
    pointers, labels, bases = [], [], []
    base, label_offset = 0, 0
    for pointer, covering in chosen:
        pointers.append(pointer + label_offset)
        labels.append(covering)
        bases.append(base)
        base += len(pointer)
        label_offset += len(covering)
    leaf_sums = _kernels_counting.coverage_join(
        t_value,
        t_low,
        t_high,
        t_leaf,
        r_value,
        r_low,
        r_high,
        r_leaf,
        released_sums,
        k,
        np.concatenate(pointers).astype(np.int64),
        np.concatenate(labels).astype(np.int64),
        np.array(bases, dtype=np.int64),
        int(t_row_leaf[-1]) + 1,
    )
    result = np.empty((n_targets, matrix.shape[1]), dtype=np.float64)
    result[t_order] = leaf_sums[t_row_leaf]
    return result


def coverage_group_sizes(
    target_keys: np.ndarray,
    n_target_groups: int,
    target_slots: Sequence[np.ndarray],
    released_keys: np.ndarray,
    n_released_groups: int,
    released_labels: Sequence[np.ndarray],
    released_sizes: np.ndarray,
    covers: Sequence[tuple[np.ndarray, np.ndarray]],
) -> tuple[np.ndarray, int]:
    """:func:`coverage_pattern_sizes` for targets and released records already grouped by their
    values on the attributes (dense keys, e.g. from :func:`extend_keys`): per target group, the sum of
    ``released_sizes`` (one per released record, or records x m) over the released records that
    cover it. Only one representative per group is looked at. Also returns the number of released
    groups that hold some size (a distinct released combination)."""
    sizes = np.asarray(released_sizes, dtype=np.float64)
    matrix = sizes.reshape(len(sizes), 1) if sizes.ndim == 1 else sizes
    group_sums = np.stack(
        [
            np.bincount(released_keys, weights=matrix[:, c], minlength=n_released_groups)
            for c in range(matrix.shape[1])
        ],
        axis=1,
    )
    t_first = _kernels_counting.first_of_groups(
        np.ascontiguousarray(target_keys, dtype=np.int64), n_target_groups
    )
    r_first = _kernels_counting.first_of_groups(
        np.ascontiguousarray(released_keys, dtype=np.int64), n_released_groups
    )
    targets = (
        np.stack([slots[t_first] for slots in target_slots], axis=1)
        if target_slots
        else np.zeros((n_target_groups, 0), dtype=np.int32)
    )
    released = (
        np.stack([labels[r_first] for labels in released_labels], axis=1)
        if released_labels
        else np.zeros((n_released_groups, 0), dtype=np.int32)
    )
    result = coverage_pattern_sizes(targets, released, group_sums, covers)
    return (result.reshape(-1) if sizes.ndim == 1 else result), n_released_groups
