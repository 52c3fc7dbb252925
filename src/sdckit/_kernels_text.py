"""Compiled (numba) hashing of texts: a hierarchy's labels in an open-addressing table
(:func:`text_table`) and the codes of a column's texts looked up in it (:func:`text_codes`), read
from Arrow's buffers where they lie (:meth:`sdckit.hierarchy.Hierarchy`, and
:func:`sdckit.frequency.encode` through :func:`label_table` and :func:`view_codes`)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

# sdckit._numba first: a thread that meets numba here waits, under that module's import lock, for a
# background warm-up importing numba to finish (two threads entering numba's import cycles at once
# get half-initialized modules).
from sdckit._numba import njit

# isort: split
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

# Fibonacci hashing's multiplier (2^64 / golden ratio), as the counting kernels' tables use it.
_FIBONACCI = np.uint64(0x9E3779B97F4A7C15)

_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
_LOW = np.uint64(0xFFFFFFFF)
_ONE = np.uint64(1)
_MIX_1 = np.uint64(0xFF51AFD7ED558CCD)
_MIX_2 = np.uint64(0xC4CEB9FE1A85EC53)


def _loader(bits: int, result: types.Integer):
    """An intrinsic that reads the ``bits``-bit unsigned integer at an address (an integer; one load,
    unaligned, in the machine's byte order)."""

    def load(typingctx, address):  # pragma: no cover - compiled
        if not isinstance(address, types.Integer):
            return None

        def codegen(context, builder, signature, args):
            return builder.load(builder.inttoptr(args[0], ir.IntType(bits).as_pointer()), align=1)

        return result(address), codegen

    return intrinsic(load)


_word_at = _loader(64, types.uint64)
_byte_at = _loader(8, types.uint8)


@njit(cache=True, nogil=True, inline="always")
def _middle(length):  # pragma: no cover - compiled
    """Where the second word of a text of more than 12 bytes is read (see :func:`_long_hash`)."""
    return min(12, length - 8)


@njit(cache=True, nogil=True, inline="always")
def _long_hash(address, length):  # pragma: no cover - compiled
    """Hash of bytes 4 onwards of the text of ``length`` (more than 12) bytes at ``address``: the words
    at 4, at 12 (or earlier, to end with the text) and ending with the text, overlapping where the
    text is shorter than 28 bytes, and every 8 bytes from 20 on in a longer one."""
    h = (_word_at(address + 4) ^ _FIBONACCI) * _MIX_1
    h = (h ^ _word_at(address + _middle(length))) * _MIX_2
    h = (h ^ _word_at(address + length - 8)) * _FIBONACCI
    if length > 28:  # (a test of its own: the loop's set-up costs more than the test)
        for position in range(20, length - 8, 8):
            h = (h ^ (h >> np.uint64(29)) ^ _word_at(address + position)) * _MIX_1
    return h ^ (h >> np.uint64(32))


@njit(cache=True, nogil=True, inline="always")
def _same_long(address, other, length):  # pragma: no cover - compiled
    """Whether bytes 4 onwards of the texts of ``length`` (more than 12) bytes at two addresses are the
    same, compared a word at a time as :func:`_long_hash` reads them (so that every byte is compared)."""
    middle = _middle(length)
    last = length - 8
    same = (
        (_word_at(address + 4) == _word_at(other + 4))
        & (_word_at(address + middle) == _word_at(other + middle))
        & (_word_at(address + last) == _word_at(other + last))
    )
    if length > 28:
        for b in range(20, last, 8):
            same &= _word_at(address + b) == _word_at(other + b)
    return same


@njit(cache=True, nogil=True, inline="always")
def _short_words(first, second):  # pragma: no cover - compiled
    """The two words of a text of up to 12 bytes from the 16 bytes of its string view: the bytes past
    the text masked off, whatever a producer left there (without a branch: the two shifts of the
    second mask keep each below 64 bits)."""
    length = first & _LOW
    first &= _ALL >> (np.uint64(32) - np.uint64(8) * min(length, np.uint64(4)))
    rest = np.uint64(4) * (max(length, np.uint64(4)) - np.uint64(4))
    return first, second & ~((_ALL << rest) << rest)


@njit(cache=True, nogil=True, inline="always")
def _text_slot(first, second, multiplier, shift):  # pragma: no cover - compiled
    """The home slot of a text's two words in a table of 2**(64 - shift) slots (multiplicative hashing)."""
    return (((second * _MIX_1) ^ first) * multiplier) >> shift


@njit(cache=True, nogil=True)
def _place_texts(words, starts, multiplier, shift, table):  # pragma: no cover - compiled
    """Fill an empty table with the labels (linear probing); the number of labels not in their home slot."""
    mask = np.uint64(table.shape[0] - 1)
    displaced = 0
    for j in range(words.shape[0]):
        slot = _text_slot(words[j, 0], words[j, 1], multiplier, shift)
        if table[slot, 2] != 0:
            displaced += 1
            while table[slot, 2] != 0:
                slot = (slot + _ONE) & mask
        table[slot, 0] = words[j, 0]
        table[slot, 1] = words[j, 1]
        table[slot, 2] = j + 1
        table[slot, 3] = starts[j]
    return displaced


@njit(cache=True, nogil=True)
def text_table(label_bytes, label_offsets):  # pragma: no cover - compiled
    """An open-addressing table of texts, for :func:`text_codes`.

    Label j is the UTF-8 bytes ``label_bytes[label_offsets[j]:label_offsets[j + 1]]``. Returns
    ``(table, multiplier, duplicate)``: a slot of the table (uint64, 4 words, one cache line for a
    look-up; linear probing) holds a label's two words (see above), the label + 1 (0: empty) and
    where its bytes start; the home slot of a text is :func:`_text_slot` with ``multiplier``;
    ``duplicate`` is the first label spelled like an earlier one (then the table is not to be used),
    or -1.

    A value whose label is not in its home slot costs a look-up a mispredicted branch or two, more
    than the rest of it: the table is sparse (at least 2 slots a label, and 16 up to 1,024 slots, 32
    KiB) and the multiplier the first of up to 64 (4 beyond 4,096 labels) that leaves no label out of
    its home slot, or else the one that leaves the fewest.
    """
    n = label_offsets.shape[0] - 1
    base = label_bytes.ctypes.data
    words = np.zeros((n, 2), dtype=np.uint64)
    for j in range(n):
        start = label_offsets[j]
        length = label_offsets[j + 1] - start
        first = np.uint64(length)
        second = np.uint64(0)
        for b in range(min(length, 12)):
            byte = np.uint64(label_bytes[start + b])
            if b < 4:
                first |= byte << np.uint64(32 + 8 * b)
            else:
                second |= byte << np.uint64(8 * (b - 4))
        if length > 12:
            second = _long_hash(base + start, length)
        words[j, 0] = first
        words[j, 1] = second
    bits = 3
    while (1 << bits) < 2 * n or ((1 << bits) < 16 * n and (1 << bits) < 1024):
        bits += 1
    size = 1 << bits
    shift = np.uint64(64 - bits)
    mask = np.uint64(size - 1)
    table = np.zeros((size, 4), dtype=np.uint64)
    # Duplicates: labels with the same words and, past 12 bytes, the same other bytes.
    for j in range(n):
        first = words[j, 0]
        second = words[j, 1]
        start = label_offsets[j]
        length = label_offsets[j + 1] - start
        slot = _text_slot(first, second, _FIBONACCI, shift)
        while table[slot, 2] != 0:
            if (
                table[slot, 0] == first
                and table[slot, 1] == second
                and (length <= 12 or _same_long(base + start, base + np.int64(table[slot, 3]), length))
            ):
                return table, _FIBONACCI, j
            slot = (slot + _ONE) & mask
        table[slot, 0] = first
        table[slot, 1] = second
        table[slot, 2] = j + 1
        table[slot, 3] = start
    best = _FIBONACCI
    fewest = n + 1
    candidate = _FIBONACCI
    for _ in range(64 if n <= 4096 else 4):
        multiplier = candidate | _ONE
        table[:] = 0
        displaced = _place_texts(words, label_offsets, multiplier, shift, table)
        if displaced < fewest:
            best, fewest = multiplier, displaced
            if displaced == 0:
                break
        candidate = (candidate ^ (candidate >> np.uint64(31))) * _MIX_1 + _FIBONACCI
    if fewest > 0:
        table[:] = 0
        _place_texts(words, label_offsets, best, shift, table)
    return table, best, -1


@njit(cache=True, nogil=True)
def text_codes(chunks, buffers, sizes, label_bytes, table, multiplier, out):  # pragma: no cover - compiled
    """The label of every value of a text column held as Arrow ``string_view`` arrays, by its exact
    bytes (-1: null or no label), into ``out`` (int32), one chunk after the other.

    Row c of ``chunks`` (int64) describes a chunk of ``chunks[c, 2]`` values: the address of its first
    view (``chunks[c, 0]``), of its validity bitmap (``chunks[c, 1]``, 0: no nulls) with its first
    value at bit ``chunks[c, 3]``, and its data buffers, ``chunks[c, 5]`` of them from
    ``buffers[chunks[c, 4]]`` (addresses; ``sizes`` their bytes). The caller checks that the views and
    bitmap lie within their buffers and keeps them all alive. A view is 16 bytes, two words: the
    length (low 32 bits of the first word) and either the bytes inline (up to 12) or, for a longer
    value, its first four bytes, its data buffer (low 32 bits of the second word) and its offset there
    (high 32 bits); one pointing outside its buffers is taken for no label. The labels and their table
    are those of :func:`text_table`.
    """
    base = label_bytes.ctypes.data
    mask = np.uint64(table.shape[0] - 1)
    bits = 0
    while (1 << bits) < table.shape[0]:
        bits += 1
    shift = np.uint64(64 - bits)
    position = 0
    for c in range(chunks.shape[0]):
        views = chunks[c, 0]
        validity = chunks[c, 1]
        n = chunks[c, 2]
        bit_offset = chunks[c, 3]
        first_buffer = chunks[c, 4]
        n_buffers = chunks[c, 5]
        for i in range(n):
            if validity != 0:
                bit = bit_offset + i
                if (_byte_at(validity + (bit >> 3)) >> (bit & 7)) & 1 == 0:
                    out[position + i] = -1
                    continue
            first = _word_at(views + 16 * i)
            second = _word_at(views + 16 * i + 8)
            length = np.int64(first & _LOW)
            long = length > 12
            address = 0
            if long:
                buffer = np.int64(second & _LOW)
                offset = np.int64(second >> np.uint64(32))
                if buffer >= n_buffers or offset + length > sizes[first_buffer + buffer]:
                    out[position + i] = -1
                    continue
                address = buffers[first_buffer + buffer] + offset
                second = _long_hash(address, length)
            else:
                first, second = _short_words(first, second)
            code = -1
            slot = _text_slot(first, second, multiplier, shift)
            while table[slot, 2] != 0:
                # The same length, first bytes and second word: the label (past 12 bytes, if the rest is).
                if ((table[slot, 0] == first) & (table[slot, 1] == second)) and (
                    not long or _same_long(address, base + np.int64(table[slot, 3]), length)
                ):
                    code = np.int64(table[slot, 2]) - 1
                    break
                slot = (slot + _ONE) & mask
            out[position + i] = code
        position += n


#: polars' newest Arrow flavour: text as string views.
_NEWEST = pl.CompatLevel.newest()


def label_table(labels: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.uint64] | None:
    """The labels as UTF-8 bytes, their hash table and its multiplier (:func:`text_table`), for
    :func:`view_codes`; None when two labels are spelled alike or one is not valid UTF-8."""
    try:
        encoded = [label.encode("utf-8") for label in labels]
    except UnicodeEncodeError:
        return None
    label_bytes = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    label_offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(label) for label in encoded], out=label_offsets[1:])
    slots, multiplier, duplicate = text_table(label_bytes, label_offsets)
    return None if duplicate >= 0 else (label_bytes, slots, np.uint64(multiplier))


def _string_views(column: pl.Series) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[Any]] | None:
    """The Arrow ``string_view`` chunks of a text column as :func:`text_codes` and
    :func:`text_distinct` read them (``chunks``, ``buffers``, ``sizes``; see :func:`text_codes`) and the
    Arrow arrays that keep their buffers alive; None for a column that is not ``String`` or that polars
    does not hand to Arrow as string views (no copy: the views, bitmaps and buffers are read where
    they lie)."""
    if column.dtype != pl.String or sys.byteorder != "little":
        return None
    import pyarrow as pa

    chunks: list[Any] = []
    buffers: list[Any] = []
    sizes: list[Any] = []
    arrays: list[Any] = []
    for part in column.get_chunks() if column.n_chunks() > 1 else (column,):
        array = part.to_arrow(compat_level=_NEWEST)
        if not isinstance(array, pa.Array) or not pa.types.is_string_view(array.type):
            return None
        n, offset = len(array), array.offset
        validity, views, *data = array.buffers()
        if n == 0:
            continue
        if views is None or views.size < 16 * (offset + n):
            return None
        if array.null_count:
            if validity is None or 8 * validity.size < offset + n:
                return None
            bitmap = validity.address
        else:
            bitmap = 0
        chunks.append((views.address + 16 * offset, bitmap, n, offset, len(buffers), len(data)))
        buffers += [buffer.address for buffer in data]
        sizes += [buffer.size for buffer in data]
        arrays.append(array)  # keeps the buffers alive until the codes are out
    return (
        np.array(chunks, dtype=np.int64).reshape(-1, 6),
        np.array(buffers, dtype=np.int64),
        np.array(sizes, dtype=np.int64),
        arrays,
    )


def view_codes(column: pl.Series, table: tuple[np.ndarray, np.ndarray, np.uint64]) -> np.ndarray | None:
    """The label (of :func:`label_table`) of every value of a text column: int32, a new array, -1 for
    a missing value and for a value no label spells; None for a column that is not ``String`` or that
    polars does not hand to Arrow as string views (no copy: each chunk's views, validity bitmap and
    data buffers are read where they lie, by :func:`text_codes`)."""
    views = _string_views(column)
    if views is None:
        return None
    chunks, buffers, sizes, _arrays = views  # the arrays keep the buffers alive until the codes are out
    out = np.empty(len(column), dtype=np.int32)
    label_bytes, slots, multiplier = table
    text_codes(chunks, buffers, sizes, label_bytes, slots, multiplier, out)
    return out


@njit(cache=True, nogil=True)
def text_distinct(chunks, buffers, sizes, table, out, first_rows):  # pragma: no cover - compiled
    """Number the distinct texts of a text column held as Arrow ``string_view`` arrays (read as
    :func:`text_codes` reads them) in order of first appearance: ``out[i]`` (int32) the number of value
    i (-1: null), ``first_rows[d]`` the first row of text d. ``table`` (all 0, a power of two of rows
    of 4 words: the text's two words, its number + 1, the address of its bytes) takes up to half as
    many texts as it has rows. Returns the number of distinct texts; -1 when the table is too small
    (the caller starts again with a larger one); -2 when a view points outside its buffers."""
    mask = np.uint64(table.shape[0] - 1)
    bits = 0
    while (1 << bits) < table.shape[0]:
        bits += 1
    shift = np.uint64(64 - bits)
    room = table.shape[0] // 2
    distinct = 0
    position = 0
    for c in range(chunks.shape[0]):
        views = chunks[c, 0]
        validity = chunks[c, 1]
        n = chunks[c, 2]
        bit_offset = chunks[c, 3]
        first_buffer = chunks[c, 4]
        n_buffers = chunks[c, 5]
        for i in range(n):
            if validity != 0:
                bit = bit_offset + i
                if (_byte_at(validity + (bit >> 3)) >> (bit & 7)) & 1 == 0:
                    out[position + i] = -1
                    continue
            first = _word_at(views + 16 * i)
            second = _word_at(views + 16 * i + 8)
            length = np.int64(first & _LOW)
            long = length > 12
            address = 0
            if long:
                buffer = np.int64(second & _LOW)
                offset = np.int64(second >> np.uint64(32))
                if buffer >= n_buffers or offset + length > sizes[first_buffer + buffer]:
                    return -2
                address = buffers[first_buffer + buffer] + offset
                second = _long_hash(address, length)
            else:
                first, second = _short_words(first, second)
            slot = _text_slot(first, second, _FIBONACCI, shift)
            code = -1
            while table[slot, 2] != 0:
                if ((table[slot, 0] == first) & (table[slot, 1] == second)) and (
                    not long or _same_long(address, np.int64(table[slot, 3]), length)
                ):
                    code = np.int64(table[slot, 2]) - 1
                    break
                slot = (slot + _ONE) & mask
            if code < 0:
                if distinct >= room:
                    return -1
                code = distinct
                table[slot, 0] = first
                table[slot, 1] = second
                table[slot, 2] = np.uint64(code + 1)
                table[slot, 3] = np.uint64(address)
                first_rows[code] = position + i
                distinct += 1
            out[position + i] = code
        position += n
    return distinct


def view_distinct(column: pl.Series) -> tuple[np.ndarray, np.ndarray] | None:
    """The number of every value of a text column among its distinct texts in order of first
    appearance (int32, -1 for a missing value) and the first row of each distinct text; None where
    :func:`_string_views` does not apply or a view points outside its buffers."""
    views = _string_views(column)
    if views is None:
        return None
    chunks, buffers, sizes, _arrays = views  # the arrays keep the buffers alive until the numbers are out
    out = np.empty(len(column), dtype=np.int32)
    first_rows = np.empty(len(column), dtype=np.int64)
    rows = 1024
    while True:
        distinct = text_distinct(
            chunks, buffers, sizes, np.zeros((rows, 4), dtype=np.uint64), out, first_rows
        )
        if distinct != -1:
            break
        rows = max(4 * rows, 1 << (2 * len(column) + 2).bit_length())  # then every text fits
    return None if distinct < 0 else (out, first_rows[:distinct].copy())
