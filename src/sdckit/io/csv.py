"""CSV: the delimiter, the header, the layout of the records (ragged rows, quotes, UTF-8) and
loading, with messages that name the file and line."""

from __future__ import annotations

import codecs
import csv
import io
import mmap
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
import polars as pl

from sdckit.errors import ConfigError, InputError
from sdckit.io.common import (
    DELIMITER_CANDIDATES,
    _apply_missing_values,
    _first_line,
    _kept_columns,
    _Layout,
    _Loaded,
    _more,
)

_SNIFF_BYTES = 64 * 1024
_QUOTE = '"'


# A quoted field with its doubled-quote escapes, as RFC 4180 writes it.
_QUOTED_FIELD = r'"(?:[^"]|"")*"'


def sniff_delimiter(sample: str) -> str:
    """The delimiter of a CSV sample among ``, ; TAB |`` as :class:`csv.Sniffer` guesses it; comma if
    it cannot tell."""
    try:
        return csv.Sniffer().sniff(sample, delimiters=DELIMITER_CANDIDATES).delimiter
    except csv.Error:
        return ","


def _read_head(path: Path, label: str) -> bytes:
    """The first 64 KiB of a CSV file, refused at once if they hold a NUL byte: binary data (or
    UTF-16 text), which polars would otherwise read whole before failing."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(_SNIFF_BYTES)
    except OSError as error:
        raise InputError(f"{label}: cannot read the data file: {error.strerror}") from None
    nul = raw.find(b"\x00")
    if nul >= 0:
        line = raw.count(b"\n", 0, nul) + 1
        utf16 = " (UTF-16 text? convert it to UTF-8)" if raw[:2] in (b"\xff\xfe", b"\xfe\xff") else ""
        raise InputError(
            f"{label}:{line}: the data file must be CSV text, got binary data "
            f"(a NUL byte at byte {nul}){utf16}"
        )
    return raw


def _sample_text(raw: bytes) -> str:
    text = raw.decode("utf-8", errors="replace").removeprefix("\ufeff")
    if len(raw) == _SNIFF_BYTES and "\n" in text:
        text = text[: text.rfind("\n") + 1]  # a line cut in the middle would confuse the sniffer
    return text


def _read_header(path: Path, label: str, delimiter: str) -> tuple[list[str], int]:
    """The column names and the 1-based line of the first non-blank line."""
    with path.open(newline="", encoding="utf-8-sig", errors="replace") as handle:
        reader = csv.reader(handle, delimiter=delimiter, quotechar=_QUOTE)
        try:
            for row in reader:
                if row:
                    return row, reader.line_num - _row_span(row)
        except csv.Error as error:
            raise InputError(f"{label}:{reader.line_num}: cannot read the header: {error}") from None
    raise InputError(f"{label}: the file is empty (no header line)")


def _row_span(row: list[str]) -> int:
    """How many line breaks a CSV record holds inside quoted fields."""
    return sum(value.count("\n") for value in row)


def _check_delimiter(delimiter: str) -> None:
    if len(delimiter) != 1 or delimiter in ('"', "\n", "\r") or not delimiter.isascii():
        raise ConfigError(
            f"delimiter must be one ASCII character other than a quote or line break, got {delimiter!r}"
        )


def _load_csv(
    path: Path,
    label: str,
    delimiter: str | None,
    tokens: tuple[str, ...],
    described: frozenset[str] | None = None,
    numeric: frozenset[str] = frozenset(),
) -> _Loaded:
    """Read the CSV file ``path`` (every column as text, except the ``numeric`` columns whose first
    records hold only integers: those are parsed as Int64 at once, see :func:`_integer_columns`)."""
    if path.stat().st_size == 0:
        raise InputError(f"{label}: the file is empty (no header line)")
    head = _read_head(path, label)
    if delimiter is None:
        delimiter = sniff_delimiter(_sample_text(head))
    _check_delimiter(delimiter)
    names, header_line = _read_header(path, label, delimiter)
    _check_header(names, label, header_line)
    stripped_header = len(names) > 1 and all(name.startswith(" ") for name in names[1:])
    kept = _kept_columns([name.lstrip(" ") if stripped_header else name for name in names], described)
    # The parser turns the tokens into nulls in every column; with columns kept as read, where only an
    # empty field is missing (it is written back empty), the other tokens are applied afterwards.
    parsed_tokens = [token for token in tokens if not kept or token == ""]
    options: dict[str, Any] = {
        "separator": delimiter,
        "quote_char": _QUOTE,
        "infer_schema": False,
        "null_values": parsed_tokens or None,
        "empty_string_is_null": "" in tokens,
        "raise_if_empty": True,
    }
    integers: list[str] = []
    # Only when the parser applies every missing-value token (they are compared as text otherwise).
    if numeric and "" in tokens and len(parsed_tokens) == len(tokens) and not stripped_header:
        integers = _integer_columns(
            head, options, [name for name in names if name in numeric and name not in kept]
        )
    try:
        try:
            frame = pl.read_csv(path, schema_overrides=dict.fromkeys(integers, pl.Int64), **options)
        except pl.exceptions.ComputeError:
            if not integers:
                raise
            # A later value is not an integer: read as text, where the conversion names it.
            frame = pl.read_csv(path, **options)
    except pl.exceptions.NoDataError:
        raise InputError(f"{label}: the file is empty (no header line)") from None
    except (pl.exceptions.PolarsError, OSError) as error:
        _explain_failure(path, label, delimiter, error)

    # "a, b, c" files: skip the spaces after each delimiter, as csv's skipinitialspace does.
    if stripped_header:
        frame = frame.rename({name: name.lstrip(" ") for name in frame.columns})
        frame = frame.with_columns(pl.all().str.strip_chars_start(" "))
        _check_header([name.lstrip(" ") for name in names], label, header_line)
    if stripped_header or kept:
        frame = _apply_missing_values(frame, tokens, [name for name in frame.columns if name not in kept])
        if "" not in tokens and kept:
            frame = _apply_missing_values(frame, ("",), list(kept))

    layout_cache: list[_Layout] = []

    def layout() -> _Layout:
        if not layout_cache:
            no_rows = np.zeros(0, dtype=np.int64)
            layout_cache.append(_scan_layout(path, label, delimiter, no_rows).without_blank_lines())
        return layout_cache[0]

    # polars pads a short record with nulls and reads a blank line as a record of nulls: both leave
    # the last column empty, so only then is the file scanned for ragged and blank lines.
    last = pl.col(frame.columns[-1])
    empty = last.is_null() if frame.columns[-1] in integers else last.is_null() | (last == "")
    suspects = frame.select(pl.arg_where(empty)).to_series().to_numpy()
    if suspects.size and not _records_complete(path, delimiter, len(names), frame.height):
        full = _scan_layout(path, label, delimiter, suspects)
        _raise_if_ragged(full, label)
        blank = full.record_fields == 0
        if len(blank) == frame.height and blank.any():
            frame = frame.filter(pl.Series(~blank))
        layout_cache.append(full.without_blank_lines())
    if frame.height == 0:
        raise InputError(f"{label}: the file has a header (line {header_line}) but no records")
    trimmed = not stripped_header and _fields_are_trimmed(path, delimiter)
    return _Loaded(frame=frame, label=label, from_text=True, layout=layout, trimmed=trimmed, kept=kept)


_INTEGER_SAMPLE = 1000


def _integer_columns(head: bytes, options: dict[str, Any], names: list[str]) -> list[str]:
    """The columns among ``names`` (described as numeric) whose first records (the whole lines of the
    file's first 64 KiB, ``head``, at most ``_INTEGER_SAMPLE``) all hold an integer or are missing:
    parsing them as Int64 while reading costs less than reading text and converting it, and gives
    the same column: polars' CSV parser and its text-to-Int64 cast accept the same integers (the
    parser also a space before the digits, which the text path strips to the same number), and a
    value the parser refuses (a decimal, a space after the digits, a number beyond Int64) makes
    :func:`_load_csv` read the file as text again, to be converted and explained as before. An empty
    field is missing in both (this is used only when the empty field is a missing-value token)."""
    end = head.rfind(b"\n")
    if not names or end < 0:
        return []
    try:
        sample = pl.read_csv(io.BytesIO(head[: end + 1]), n_rows=_INTEGER_SAMPLE, columns=names, **options)
    except (pl.exceptions.PolarsError, OSError, UnicodeDecodeError):
        return []  # the full read reports what is wrong
    counts = sample.select(
        *(pl.col(name).is_not_null().sum().alias(name) for name in names),
        *(pl.col(name).cast(pl.Int64, strict=False).is_not_null().sum().alias(f"\0{name}") for name in names),
    ).row(0, named=True)
    return [name for name in names if counts[name] and counts[name] == counts[f"\0{name}"]]


# The bytes that begin a white-space character in UTF-8: ASCII white space but the line feed, and the
# lead bytes of the Unicode white space (U+0085 and U+00A0: C2; U+1680: E1; U+2000-U+200A, U+2028,
# U+2029, U+202F, U+205F: E2; U+3000: E3) that polars' strip_chars removes.
_WHITE_LEADS = bytes([9, 11, 12, 13, 32, 0xC2, 0xE1, 0xE2, 0xE3])


_TRIM_CHUNK = 1 << 24


def _fields_are_trimmed(path: Path, delimiter: str) -> bool:
    """True if no value of the CSV file can have white space around it, because the file holds no
    byte that begins a white-space character, other than the delimiter and the CR of CRLF line
    breaks (with a white delimiter, no quote either: a quoted field may hold it). False only means
    "maybe": :func:`_strip_text` then compares every value with its stripped self, which costs
    several times this pass (C loops over the bytes, in chunks)."""
    separator = delimiter.encode()
    white = _WHITE_LEADS.replace(separator, b"")
    quoted = separator not in white
    mapped = _mapped_bytes_absent(path, white, quoted)
    if mapped is not None:
        return mapped
    keep = bytes(byte for byte in range(256) if byte not in white)
    pending = b""  # a CR held back in case the next chunk begins with its LF
    with path.open("rb") as handle:
        while chunk := handle.read(_TRIM_CHUNK):
            if quoted and _QUOTE.encode() in chunk:
                return False
            data, pending = pending + chunk if pending else chunk, b""
            if b"\r" in data:
                if data.endswith(b"\r"):
                    data, pending = data[:-1], b"\r"
                data = data.replace(b"\r\n", b"\n")
            if data.translate(None, keep):
                return False
    return not pending


def _mapped_bytes_absent(path: Path, white: bytes, quoted: bool) -> bool | None:
    """:func:`_fields_are_trimmed`'s answer for a file without CR bytes, found by searching the
    mapped file for each byte of ``white`` (and the quote, when ``quoted``) in turn: each search is a
    ``memchr`` over the page cache, several times cheaper than translating every byte, and nothing is
    copied. None when the file holds a CR (CRLF line breaks are allowed: the chunked pass handles
    them) or cannot be mapped (empty, not a regular file)."""
    try:
        with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as view:
            if quoted and view.find(_QUOTE.encode()) >= 0:
                return False
            if view.find(b"\r") >= 0:
                return None
            return all(view.find(bytes([byte])) < 0 for byte in white)
    except (OSError, ValueError):
        return None


def _records_complete(path: Path, delimiter: str, header_fields: int, records: int) -> bool:
    """True if every record of the CSV file has as many fields as its header. polars refuses a
    record with more, so when the file holds no quote (every delimiter byte then separates two
    fields), the delimiters of the header and of the ``records`` add up to (fields - 1) * (records
    + 1) exactly when no record has fewer (a blank line has none, and fails too). One counting pass
    over the bytes, instead of reading every line to count its fields."""
    separator = ord(delimiter)
    count = 0
    with path.open("rb") as handle:
        while chunk := handle.read(_TRIM_CHUNK):
            if _QUOTE.encode() in chunk:
                return False
            count += int(np.count_nonzero(np.frombuffer(chunk, dtype=np.uint8) == separator))
    return count == (header_fields - 1) * (records + 1)


def _check_header(names: list[str], label: str, header_line: int) -> None:
    where = f"{label}:{header_line}: "
    for index, name in enumerate(names):
        if name.strip() == "":
            hint = " (does every line end with a delimiter?)" if index == len(names) - 1 else ""
            raise InputError(f"{where}column {index + 1} of the header has no name{hint}")
    positions: dict[str, list[int]] = {}
    for index, name in enumerate(names):
        positions.setdefault(name, []).append(index + 1)
    for name, columns in positions.items():
        if len(columns) > 1:
            raise InputError(
                f"{where}column '{name}' appears more than once in the header "
                f"(columns {', '.join(map(str, columns))})"
            )


def _explain_failure(path: Path, label: str, delimiter: str, error: BaseException) -> NoReturn:
    """Raise an InputError that says why polars could not read the file, naming the line."""
    _check_utf8(path, label)
    layout = _scan_layout(path, label, delimiter)
    _raise_if_ragged(layout, label)
    raise InputError(f"{label}: cannot read the CSV file: {_first_line(error)}")


def _check_utf8(path: Path, label: str) -> None:
    decoder = codecs.getincrementaldecoder("utf-8")()
    line = 1
    offset = 0
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError as error:
                line += chunk.count(b"\n", 0, max(error.start, 0))
                raise InputError(
                    f"{label}:{line}: the file is not UTF-8 text (byte {offset + max(error.start, 0)}); "
                    "convert it to UTF-8"
                ) from None
            line += chunk.count(b"\n")
            offset += len(chunk)


def _raise_if_ragged(layout: _Layout, label: str) -> None:
    ragged = np.flatnonzero((layout.record_fields != layout.header_fields) & (layout.record_fields > 0))
    if ragged.size:
        first = ragged[0]
        more = _more(ragged.size - 1, "such line", "such lines")
        raise InputError(
            f"{label}:{int(layout.record_lines[first])}: expected {layout.header_fields} fields as in the "
            f"header (line {layout.header_line}), found {int(layout.record_fields[first])}{more}"
        )


def _scan_layout(path: Path, label: str, delimiter: str, rows: np.ndarray | None = None) -> _Layout:
    """Find every record's line and field count: with polars, one line a record, when no quoted
    field spans lines; else with the csv module.

    ``rows`` (indices of records after the header) limits the counting of fields to those records;
    the others are taken to have as many fields as the header, which holds for every record whose
    last field polars found filled in without complaint.
    """
    try:
        lines = pl.read_csv(
            path,
            has_header=False,
            separator="\x00",
            quote_char=None,
            new_columns=["line"],
            infer_schema=False,
            empty_string_is_null=False,
            raise_if_empty=False,
        )
    except pl.exceptions.PolarsError:
        return _scan_layout_csv(path, label, delimiter)
    if lines.width != 1:
        return _scan_layout_csv(path, label, delimiter)
    text = lines.select(pl.col("line").str.strip_suffix("\r")).to_series()
    quoted = text.str.contains(_QUOTE, literal=True).any()
    if quoted and (text.str.count_matches(_QUOTE, literal=True) % 2 == 1).any():
        return _scan_layout_csv(path, label, delimiter)  # a quoted field spans lines
    blank = (text.is_null() | (text == "")).to_numpy()
    non_blank = np.flatnonzero(~blank)
    if non_blank.size == 0:
        raise InputError(f"{label}: the file is empty (no header line)")
    header = int(non_blank[0])
    n_records = len(text) - header - 1

    def count_fields(indices: np.ndarray) -> np.ndarray:
        chosen = text.gather(indices)
        if quoted:
            chosen = chosen.str.replace_all(_QUOTED_FIELD, "")
        return chosen.str.count_matches(delimiter, literal=True).fill_null(0).to_numpy().astype(np.int64) + 1

    header_fields = int(count_fields(np.array([header]))[0])
    if rows is None or rows.size and rows.max() >= n_records:
        rows = np.arange(n_records)
    fields = np.full(n_records, header_fields, dtype=np.int64)
    fields[rows] = count_fields(rows + header + 1)
    fields[blank[header + 1 :]] = 0
    return _Layout(
        header_line=header + 1,
        header_fields=header_fields,
        record_lines=np.arange(header + 2, len(text) + 1, dtype=np.int64),
        record_fields=fields,
    )


def _scan_layout_csv(path: Path, label: str, delimiter: str) -> _Layout:
    header_line = header_fields = 0
    lines: list[int] = []
    fields: list[int] = []
    with path.open(newline="", encoding="utf-8-sig", errors="replace") as handle:
        reader = csv.reader(handle, delimiter=delimiter, quotechar=_QUOTE)
        previous = 0
        try:
            for row in reader:  # only when polars failed or saw a possibly ragged record
                start, previous = previous + 1, reader.line_num
                if not header_line:
                    if row:
                        header_line, header_fields = start, len(row)
                    continue
                lines.append(start)
                fields.append(len(row))
        except csv.Error as error:
            raise InputError(f"{label}:{previous + 1}: cannot read the CSV file: {error}") from None
    if not header_line:
        raise InputError(f"{label}: the file is empty (no header line)")
    return _Layout(
        header_line=header_line,
        header_fields=header_fields,
        record_lines=np.asarray(lines, dtype=np.int64),
        record_fields=np.asarray(fields, dtype=np.int64),
    )
