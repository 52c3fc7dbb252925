"""Set-valued (quasi-sensitive) attributes, external knowledge, and linking records to sensitive labels.

A set-valued attribute (the symptoms of a patient, the items of a basket) holds a *set* of items per
record. :class:`ItemSets` stores the sets of all records of a table in compressed sparse row form: item
codes ``items[indptr[i]:indptr[i+1]]`` are the set of record ``i``, sorted and unique, and
``vocabulary[code]`` is the text of an item. Nothing here keeps a Python set per record; every step is
a numpy/polars/scipy.sparse operation over all records at once.

The adversary of Shi, Xiong & Fung (2010) also holds *external knowledge* E (:class:`Knowledge`): rows
``(L_i, S_i)`` associating a sensitive label ``L_i`` (a disease) with a set ``S_i`` of quasi-sensitive
items (its symptoms). A record is linked to ``L_i`` iff every item of the record is in ``S_i``
(Definition 2, :func:`linked_labels`).

References
----------
Shi, P., Xiong, L. & Fung, B. C. M. (2010). Anonymizing data with quasi-sensitive attribute values.
Proceedings of the 19th ACM International Conference on Information and Knowledge Management (CIKM),
1389-1392.
"""

from __future__ import annotations

import csv
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import scipy.sparse as sp
import yaml

from sdckit._files import MAX_TEXT_BYTES, read_text_file
from sdckit._yaml import compose
from sdckit.errors import ConfigError, InputError, SdcWarning, location

__all__ = [
    "ItemSets",
    "Knowledge",
    "linked_labels",
    "read_knowledge",
]

# How many unknown items a message or warning lists before saying "and N more".
_SHOWN = 5


def _listing(names: Sequence[str]) -> str:
    shown = ", ".join(repr(name) for name in names[:_SHOWN])
    more = len(names) - _SHOWN
    return shown + (f" and {more} more" if more > 0 else "")


def _sorted_unique(keys: np.ndarray) -> np.ndarray:
    """np.unique of keys that are mostly sorted already (records in order): a stable sort (timsort for
    int64), which is close to linear on such data, then dropping repeats."""
    keys = np.sort(keys, kind="stable")
    if keys.size > 1:
        keep = np.empty(keys.size, dtype=bool)
        keep[0] = True
        np.not_equal(keys[1:], keys[:-1], out=keep[1:])
        keys = keys[keep]
    return keys


def _as_vocabulary(vocabulary: Sequence[str]) -> tuple[str, ...]:
    if isinstance(vocabulary, str):
        raise ConfigError("vocabulary must be a sequence of item texts, not a single string")
    return tuple(sorted({str(item) for item in vocabulary}))


@dataclass(frozen=True, eq=False)
class ItemSets:
    """The item sets of ``n`` records as a CSR structure over a sorted vocabulary.

    ``indptr`` (``n + 1`` int64 offsets) and ``items`` (int32 codes): the set of record ``i`` is
    ``items[indptr[i]:indptr[i + 1]]``, sorted ascending without repeats. ``vocabulary[code]`` is the
    text of an item; the vocabulary is sorted (code order = text order), so two ItemSets built over the
    same vocabulary share their codes. An empty set (no items) is a valid record.
    """

    indptr: np.ndarray
    items: np.ndarray
    vocabulary: tuple[str, ...]

    def __post_init__(self) -> None:
        indptr = np.ascontiguousarray(self.indptr, dtype=np.int64)
        items = np.ascontiguousarray(self.items, dtype=np.int32)
        vocabulary = tuple(self.vocabulary)
        object.__setattr__(self, "indptr", indptr)
        object.__setattr__(self, "items", items)
        object.__setattr__(self, "vocabulary", vocabulary)
        if indptr.ndim != 1 or indptr.size == 0 or indptr[0] != 0 or indptr[-1] != items.size:
            raise ValueError("indptr must be n + 1 offsets from 0 to the number of items")
        if np.any(np.diff(indptr) < 0):
            raise ValueError("indptr must be non-decreasing")
        if any(a >= b for a, b in zip(vocabulary, vocabulary[1:], strict=False)):
            raise ValueError("the vocabulary must be sorted and free of repeats")
        if items.size:
            if items.min() < 0 or items.max() >= len(vocabulary):
                raise ValueError(f"item codes must lie in 0 .. {len(vocabulary) - 1}")
            # Within a row codes strictly increase; a decrease or repeat is allowed only where a row starts.
            steps = np.diff(items) <= 0
            if steps.any():
                starts = np.zeros(items.size, dtype=bool)
                starts[indptr[1:-1][indptr[1:-1] < items.size]] = True
                if np.any(steps & ~starts[1:]):
                    raise ValueError("the items of each record must be sorted and unique")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ItemSets):
            return NotImplemented
        return (
            self.vocabulary == other.vocabulary
            and np.array_equal(self.indptr, other.indptr)
            and np.array_equal(self.items, other.items)
        )

    __hash__ = None  # type: ignore[assignment]  # unhashable: mutable arrays inside

    # Shape -------------------------------------------------------------------------------------------

    @property
    def n_records(self) -> int:
        return self.indptr.size - 1

    @property
    def n_items(self) -> int:
        """Size of the vocabulary."""
        return len(self.vocabulary)

    def lengths(self) -> np.ndarray:
        """Number of items of every record (int64)."""
        return np.diff(self.indptr)

    def row(self, i: int) -> np.ndarray:
        """The item codes of record ``i``."""
        if not -self.n_records <= i < self.n_records:
            raise IndexError(f"record {i} out of range (n = {self.n_records})")
        i %= self.n_records
        return self.items[self.indptr[i] : self.indptr[i + 1]]

    def record_of_entries(self) -> np.ndarray:
        """The record of every stored item (``nnz`` int64), the row index of the CSR structure."""
        return np.repeat(np.arange(self.n_records, dtype=np.int64), self.lengths())

    def texts(self, i: int) -> tuple[str, ...]:
        """The item texts of record ``i`` (for messages and tests)."""
        return tuple(self.vocabulary[code] for code in self.row(i))

    # Construction ------------------------------------------------------------------------------------

    @classmethod
    def _from_pairs(
        cls,
        records: np.ndarray,
        texts: pl.Series,
        n_records: int,
        vocabulary: Sequence[str] | None,
        *,
        unknown: str,
        where: str,
    ) -> ItemSets:
        """Sets from (record, item text) pairs; texts are already stripped and non-empty.

        ``unknown``: what to do with an item outside a given vocabulary: ``"error"`` (InputError naming
        ``where``) or ``"drop"``.
        """
        texts = texts.cast(pl.String)
        words = tuple(sorted(texts.unique().to_list())) if vocabulary is None else _as_vocabulary(vocabulary)
        codes_series = texts.replace_strict(
            pl.Series(words, dtype=pl.String),
            pl.Series(np.arange(len(words), dtype=np.int64)),
            default=None,
            return_dtype=pl.Int64,
        )
        known = codes_series.is_not_null().to_numpy()
        if not known.all():
            if unknown == "error":
                missing = sorted(set(texts.filter(~pl.Series(known)).to_list()))
                raise InputError(
                    f"{where}{len(missing)} item{'' if len(missing) == 1 else 's'} not in the vocabulary: "
                    f"{_listing(missing)}"
                )
            records = records[known]
            codes_series = codes_series.filter(pl.Series(known))
        codes = codes_series.to_numpy().astype(np.int64, copy=False)
        width = max(len(words), 1)
        keys = _sorted_unique(records.astype(np.int64, copy=False) * width + codes)
        rows = keys // width
        indptr = np.zeros(n_records + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=n_records), out=indptr[1:])
        return cls(indptr=indptr, items=(keys % width).astype(np.int32), vocabulary=words)

    @classmethod
    def from_column(
        cls,
        column: pl.Series,
        separator: str = ";",
        vocabulary: Sequence[str] | None = None,
    ) -> ItemSets:
        """Sets from a column of delimited text, one record per value (``"Coughing;Headache"``).

        Items are stripped of surrounding white space; a null or empty value (or one holding only
        separators and blanks) is the empty set; an item repeated within a value counts once. A column
        of lists of strings is read as it is. With ``vocabulary`` the codes follow that (sorted)
        vocabulary and an item outside it is an InputError; without, the vocabulary is the sorted
        distinct items of the column. Item matching is exact (case-sensitive): normalize spellings
        ("Sore Throat" / "Sore throat") before.
        """
        if not isinstance(column, pl.Series):
            raise InputError(f"expected a polars Series, got {type(column).__name__}")
        if not separator:
            raise ConfigError("separator must be a non-empty string")
        where = location(attribute=column.name) if column.name else ""
        if isinstance(column.dtype, pl.List):
            lists = column.cast(pl.List(pl.String))
        else:
            try:
                text = column.cast(pl.String)
            except pl.exceptions.PolarsError as error:
                raise InputError(f"{where}cannot read {column.dtype} values as item text: {error}") from None
            # polars accepts literal= here at run time; its Series.str.split signature omits it
            lists = text.str.split(separator, literal=True)  # type: ignore[call-arg]
        frame = (
            pl.DataFrame({"item": lists})
            .with_row_index("record")
            .explode("item")
            .with_columns(pl.col("item").str.strip_chars())
            .filter(pl.col("item").is_not_null() & (pl.col("item") != ""))
        )
        records = frame.get_column("record").to_numpy().astype(np.int64, copy=False)
        return cls._from_pairs(
            records, frame.get_column("item"), column.len(), vocabulary, unknown="error", where=where
        )

    @classmethod
    def from_long(
        cls,
        frame: pl.DataFrame,
        record: str,
        item: str,
        n_records: int | None = None,
        record_ids: pl.Series | None = None,
        vocabulary: Sequence[str] | None = None,
    ) -> ItemSets:
        """Sets from a long frame, one row per (record, item) pair.

        Without ``record_ids`` the ``record`` column holds record positions ``0 .. n-1`` (``n`` =
        ``n_records``, by default the largest position + 1); with ``record_ids`` (the identifier of
        every record, in record order, unique) the ``record`` column holds identifiers, and a pair whose
        identifier is not among them is an InputError. Records without pairs get the empty set; null
        or blank items are skipped; repeated pairs count once.
        """
        for name in (record, item):
            if name not in frame.columns:
                raise InputError(f"column '{name}' is not a column of the frame ({', '.join(frame.columns)})")
        ids = frame.get_column(record)
        if ids.null_count():
            raise InputError(f"column '{record}': {ids.null_count()} pair(s) without a record")
        texts = frame.get_column(item).cast(pl.String).str.strip_chars()
        if record_ids is not None:
            if record_ids.n_unique() != record_ids.len():
                raise InputError(
                    f"record_ids: identifiers must be unique ({record_ids.name or 'record_ids'})"
                )
            if n_records is not None and n_records != record_ids.len():
                raise ConfigError(f"n_records ({n_records}) differs from the number of record_ids")
            n_records = record_ids.len()
            positions = ids.replace_strict(
                record_ids,
                pl.Series(np.arange(n_records, dtype=np.int64)),
                default=None,
                return_dtype=pl.Int64,
            )
            if positions.null_count():
                unknown = ids.filter(positions.is_null()).unique(maintain_order=True).cast(pl.String)
                raise InputError(
                    f"column '{record}': record(s) not among record_ids: {_listing(unknown.to_list())}"
                )
            rows = positions.to_numpy()
        else:
            if not ids.dtype.is_integer():
                raise InputError(
                    f"column '{record}' must hold record positions (integers) when record_ids is not given, "
                    f"got {ids.dtype}"
                )
            rows = ids.to_numpy().astype(np.int64, copy=False)
            top = int(rows.max()) + 1 if rows.size else 0
            if n_records is None:
                n_records = top
            if rows.size and (rows.min() < 0 or top > n_records):
                raise InputError(f"column '{record}': record positions must lie in 0 .. {n_records - 1}")
        keep = (texts.is_not_null() & (texts != "")).fill_null(False)
        if not keep.all():
            rows = rows[keep.to_numpy()]
            texts = texts.filter(keep)
        return cls._from_pairs(
            rows, texts, int(n_records), vocabulary, unknown="error", where=f"column '{item}': "
        )

    @classmethod
    def from_lists(cls, sets: Sequence[Sequence[str]], vocabulary: Sequence[str] | None = None) -> ItemSets:
        """Sets from Python lists of item texts (small data and tests)."""
        return cls.from_column(
            pl.Series("items", [list(s) for s in sets], dtype=pl.List(pl.String)), vocabulary=vocabulary
        )

    # Conversion --------------------------------------------------------------------------------------

    def to_column(self, separator: str = ";", name: str = "items") -> pl.Series:
        """Delimited text per record (items in vocabulary order), ``""`` for an empty set.

        Raises ConfigError if an item contains the separator (the text could not be read back).
        """
        clashing = [word for word in self.vocabulary if separator in word]
        if clashing:
            raise ConfigError(f"separator {separator!r} occurs in item(s) {_listing(clashing)}")
        words = pa.array(self.vocabulary, type=pa.large_string()).take(pa.array(self.items))
        lists = pa.LargeListArray.from_arrays(pa.array(self.indptr, type=pa.int64()), words)
        return pl.Series(name, lists).list.join(separator)

    def to_sparse(self) -> sp.csr_matrix:
        """The ``n x |vocabulary|`` binary incidence matrix (int32 ones), sharing no memory with self."""
        return sp.csr_matrix(
            (np.ones(self.items.size, dtype=np.int32), self.items.copy(), self.indptr.copy()),
            shape=(self.n_records, len(self.vocabulary)),
        )

    def without(self, removed: np.ndarray) -> ItemSets:
        """The sets with the stored entries where ``removed`` (a bool mask over the ``nnz`` entries)
        taken out; same records, same vocabulary."""
        removed = np.asarray(removed, dtype=bool)
        if removed.shape != self.items.shape:
            raise ValueError(
                f"removed must hold one flag per stored item ({self.items.size}), got {removed.shape}"
            )
        kept = ~removed
        cumulative = np.zeros(self.items.size + 1, dtype=np.int64)
        np.cumsum(kept, out=cumulative[1:])
        return ItemSets(indptr=cumulative[self.indptr], items=self.items[kept], vocabulary=self.vocabulary)

    def recode(self, vocabulary: Sequence[str], unknown: str = "error") -> ItemSets:
        """The same sets over another vocabulary; an item outside it is an InputError
        (``unknown="error"``) or left out (``unknown="drop"``)."""
        if unknown not in ("error", "drop"):
            raise ConfigError(f"unknown must be 'error' or 'drop', got {unknown!r}")
        words = _as_vocabulary(vocabulary)
        if words == self.vocabulary:
            return self
        target = {word: code for code, word in enumerate(words)}
        mapping = np.array([target.get(word, -1) for word in self.vocabulary], dtype=np.int64)
        codes = mapping[self.items] if self.items.size else np.zeros(0, dtype=np.int64)
        if unknown == "error" and np.any(codes < 0):
            missing = sorted({self.vocabulary[i] for i in self.items[codes < 0]})
            raise InputError(f"{len(missing)} item(s) not in the vocabulary: {_listing(missing)}")
        records = self.record_of_entries()
        kept = codes >= 0
        width = max(len(words), 1)
        # records are non-decreasing, so the stable (timsort/radix) sort only reorders within rows; codes are
        # unique per row, so there are no repeats.
        keys = np.sort(records[kept] * width + codes[kept], kind="stable")
        indptr = np.zeros(self.n_records + 1, dtype=np.int64)
        np.cumsum(np.bincount(keys // width, minlength=self.n_records), out=indptr[1:])
        return ItemSets(indptr=indptr, items=(keys % width).astype(np.int32), vocabulary=words)

    def used_items(self) -> np.ndarray:
        """Bool mask over the vocabulary: the items that occur in at least one record."""
        used = np.zeros(len(self.vocabulary), dtype=bool)
        used[self.items] = True
        return used


# External knowledge ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Knowledge:
    """External knowledge E: sensitive label ``labels[i]`` with item set ``sets.row(i)`` (S_{L_i}).

    ``sets`` must be over the same vocabulary as the records it is linked with (read the file with
    ``read_knowledge(path, vocabulary=records.vocabulary)`` or call :meth:`with_vocabulary`).
    """

    labels: tuple[str, ...]
    sets: ItemSets

    def __post_init__(self) -> None:
        labels = tuple(str(label) for label in self.labels)
        object.__setattr__(self, "labels", labels)
        if len(labels) != self.sets.n_records:
            raise ValueError(f"{len(labels)} labels but {self.sets.n_records} item sets")
        if len(set(labels)) != len(labels):
            seen: set[str] = set()
            for label in labels:
                if label in seen:
                    raise ConfigError(f"label '{label}' appears more than once in the external knowledge")
                seen.add(label)

    @property
    def n_labels(self) -> int:
        return len(self.labels)

    @classmethod
    def from_mapping(
        cls,
        mapping: Mapping[str, Sequence[str] | str],
        vocabulary: Sequence[str] | None = None,
        separator: str = ";",
    ) -> Knowledge:
        """Knowledge from ``{label: [items]}`` (a text value is split at ``separator``); with
        ``vocabulary``, items outside it are left out with an :class:`SdcWarning`."""
        mapping = {
            str(label): value.split(separator) if isinstance(value, str) else list(value)
            for label, value in mapping.items()
        }
        labels = list(mapping)
        for label in labels:
            if not [item for item in mapping[label] if str(item).strip()]:
                raise ConfigError(f"label '{label}' has an empty item set")
        records = np.repeat(np.arange(len(labels), dtype=np.int64), [len(mapping[k]) for k in mapping])
        texts = pl.Series([str(item).strip() for k in mapping for item in mapping[k]], dtype=pl.String)
        keep = (texts != "").to_numpy()
        return _knowledge(labels, records[keep], texts.filter(pl.Series(keep)), vocabulary, None)

    def with_vocabulary(self, vocabulary: Sequence[str], source: str | None = None) -> Knowledge:
        """The same knowledge over another vocabulary (normally the records'): an item of E outside it
        can never be part of a record, so it is left out, with an :class:`SdcWarning` listing it
        (``source`` names the knowledge file in the warning)."""
        return _with_vocabulary(self, vocabulary, source, stacklevel=3)


def _with_vocabulary(
    knowledge: Knowledge, vocabulary: Sequence[str], source: str | None, stacklevel: int
) -> Knowledge:
    words = _as_vocabulary(vocabulary)
    if words == knowledge.sets.vocabulary:
        return knowledge
    unknown = sorted({knowledge.sets.vocabulary[i] for i in np.unique(knowledge.sets.items)} - set(words))
    if unknown:
        single = len(unknown) == 1
        warnings.warn(
            f"{location(source)}{len(unknown)} item{'' if single else 's'} of the external knowledge "
            f"never occur{'s' if single else ''} in the data and can never link a record: "
            f"{_listing(unknown)} (left out)",
            SdcWarning,
            stacklevel=stacklevel,
        )
    return Knowledge(labels=knowledge.labels, sets=knowledge.sets.recode(words, unknown="drop"))


def _knowledge(
    labels: Sequence[str],
    records: np.ndarray,
    texts: pl.Series,
    vocabulary: Sequence[str] | None,
    source: str | None,
) -> Knowledge:
    sets = ItemSets._from_pairs(records, texts, len(labels), None, unknown="error", where="")
    knowledge = Knowledge(labels=tuple(labels), sets=sets)
    if vocabulary is not None:
        knowledge = _with_vocabulary(knowledge, vocabulary, source, stacklevel=4)
    return knowledge


def read_knowledge(
    path: str | Path,
    *,
    vocabulary: Sequence[str] | None = None,
    separator: str = ";",
) -> Knowledge:
    """Read external knowledge E from a CSV (or TSV) or YAML file.

    CSV with a header, either *long* (columns ``label,item``: one row per (label, item) pair, a label's
    rows need not be adjacent, a repeated pair counts once) or *wide* (columns ``label,items``: one row
    per label, its items separated by ``separator``); header names are matched ignoring case and blanks,
    other columns are ignored. YAML (``.yaml``/``.yml``): a mapping ``label: [item, ...]`` (a string
    value is split at ``separator``). Items and labels are stripped of surrounding white space; labels
    keep the order of the file.

    With ``vocabulary`` (the records' vocabulary, ``records.vocabulary``) the sets are encoded over it;
    an item of E that never occurs in the data cannot matter (no record holds it), so it is left out with
    an :class:`SdcWarning` listing a few. A label may so end with an empty set in that vocabulary; it
    stays in E (only a record with no items links to it).

    Raises InputError naming the file and line for: an unreadable or malformed file, a missing column,
    a line with the wrong number of fields, an empty label, a label with an empty item set, a label
    given twice (wide CSV and YAML).
    """
    if not separator:
        raise ConfigError("separator must be a non-empty string")
    path = Path(path)
    source = str(path)
    text = read_text_file(path, source, "knowledge file", InputError, max_bytes=MAX_TEXT_BYTES)
    text = text.removeprefix("\ufeff")
    if path.suffix.lower() in (".yaml", ".yml"):
        labels, records, items = _parse_knowledge_yaml(text, source, separator)
    else:
        delimiter = "\t" if path.suffix.lower() in (".tsv", ".tab") else ","
        labels, records, items = _parse_knowledge_csv(text, source, separator, delimiter)
    return _knowledge(
        labels, np.asarray(records, dtype=np.int64), pl.Series(items, dtype=pl.String), vocabulary, source
    )


def _parse_knowledge_csv(
    text: str, source: str, separator: str, delimiter: str
) -> tuple[list[str], list[int], list[str]]:
    reader = csv.reader(text.splitlines(keepends=True), delimiter=delimiter)
    header: list[str] | None = None
    header_line = 0
    label_lines: dict[str, int] = {}
    records: list[int] = []
    items: list[str] = []
    label_column = item_column = -1
    wide = False
    try:
        for row in reader:
            line = reader.line_num
            if not row or all(not field.strip() for field in row):
                continue
            if header is None:
                header, header_line = [name.strip().lower() for name in row], line
                if "label" not in header:
                    raise InputError(
                        f"{source}:{line}: the header has no 'label' column (expected label,item or "
                        f"label,items; got {','.join(row)})"
                    )
                has_item, has_items = "item" in header, "items" in header
                if has_item == has_items:
                    raise InputError(
                        f"{source}:{line}: the header needs exactly one of the columns 'item' (one row per "
                        f"label and item) or 'items' (one row per label); got {','.join(row)}"
                    )
                wide = has_items
                label_column = header.index("label")
                item_column = header.index("items" if wide else "item")
                continue
            if len(row) != len(header):
                raise InputError(
                    f"{source}:{line}: expected {len(header)} fields as in the header (line {header_line}), "
                    f"got {len(row)}"
                )
            label = row[label_column].strip()
            if not label:
                raise InputError(f"{source}:{line}: empty label")
            if wide:
                if label in label_lines:
                    raise InputError(
                        f"{source}:{line}: label '{label}' is given twice "
                        f"(first at line {label_lines[label]})"
                    )
                words = [word.strip() for word in row[item_column].split(separator)]
                words = [word for word in words if word]
                if not words:
                    raise InputError(f"{source}:{line}: label '{label}' has an empty item set")
                label_lines[label] = line
                index = len(label_lines) - 1
            else:
                word = row[item_column].strip()
                if not word:
                    raise InputError(f"{source}:{line}: label '{label}' has an empty item")
                index = label_lines.setdefault(label, len(label_lines))
                words = [word]
            records.extend([index] * len(words))
            items.extend(words)
    except csv.Error as error:
        raise InputError(f"{source}:{reader.line_num}: malformed CSV: {error}") from None
    if header is None:
        raise InputError(f"{source}: the file is empty (no header line)")
    if not label_lines:
        raise InputError(f"{source}: the file has a header (line {header_line}) but no labels")
    # label_lines is ordered by first appearance (its values are lines in wide files, indexes in long).
    return list(label_lines), records, items


def _parse_knowledge_yaml(text: str, source: str, separator: str) -> tuple[list[str], list[int], list[str]]:
    try:
        root = compose(text, source, InputError)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = f":{mark.line + 1}" if mark is not None else ""
        raise InputError(f"{source}{line}: malformed YAML: {error.problem or error.context}") from None
    except yaml.YAMLError as error:
        raise InputError(f"{source}: malformed YAML: {error}") from None
    if root is None:
        raise InputError(f"{source}: the file is empty (expected a mapping label: [items])")
    if not isinstance(root, yaml.MappingNode):
        raise InputError(f"{source}:{root.start_mark.line + 1}: expected a mapping label: [items]")
    label_lines: dict[str, int] = {}
    records: list[int] = []
    items: list[str] = []
    for key, value in root.value:
        line = key.start_mark.line + 1
        if not isinstance(key, yaml.ScalarNode) or _is_null(key) or not key.value.strip():
            raise InputError(f"{source}:{line}: a label must be a non-empty text")
        label = key.value.strip()
        if label in label_lines:
            raise InputError(
                f"{source}:{line}: label '{label}' is given twice (first at line {label_lines[label]})"
            )
        words: list[str] = []
        if isinstance(value, yaml.SequenceNode):
            for node in value.value:
                if not isinstance(node, yaml.ScalarNode) or _is_null(node):
                    raise InputError(
                        f"{source}:{node.start_mark.line + 1}: label '{label}': every item must be a text"
                    )
                if node.value.strip():
                    words.append(node.value.strip())
        elif isinstance(value, yaml.ScalarNode) and not _is_null(value):
            words = [word.strip() for word in value.value.split(separator) if word.strip()]
        elif not (isinstance(value, yaml.ScalarNode) and _is_null(value)):
            raise InputError(f"{source}:{line}: label '{label}': expected a list of items")
        if not words:
            raise InputError(f"{source}:{line}: label '{label}' has an empty item set")
        label_lines[label] = line
        records.extend([len(label_lines) - 1] * len(words))
        items.extend(words)
    if not label_lines:
        raise InputError(f"{source}: no labels")
    return list(label_lines), records, items


def _is_null(node: Any) -> bool:
    return node.tag == "tag:yaml.org,2002:null"


# Linking ---------------------------------------------------------------------------------------------


def linked_labels(records: ItemSets, knowledge: Knowledge) -> sp.csr_matrix:
    """Definition 2 of Shi et al. (2010): the ``n x |E|`` boolean matrix with ``[t, L]`` true iff record
    ``t`` links to label ``L``, i.e. every item of ``t`` is in S_L.

    Computed as one sparse product R E^T (R the records' incidence matrix, E the knowledge's): entry
    ``[t, L]`` counts the items shared by ``t`` and S_L, and ``t`` links to ``L`` iff that count equals
    the number of items of ``t``. A record with no items links to *every* label (vacuously: all of its
    zero items are in every S_L), as the definition reads; callers that want such records to reveal
    nothing should give them the whole of E, which is what this does. Rows of K(t) are sorted.

    ``knowledge`` should be over ``records.vocabulary`` (no re-encoding); if not, its sets are
    re-encoded over it first, which changes no link.
    """
    knowledge_sets = knowledge.sets
    if knowledge_sets.vocabulary != records.vocabulary:
        # t is a subset of S_L iff it is a subset of S_L restricted to the records' vocabulary, so
        # re-encoding E over that vocabulary (leaving out items no record holds) changes no link.
        knowledge_sets = knowledge_sets.recode(records.vocabulary, unknown="drop")
    n, n_labels = records.n_records, knowledge.n_labels
    lengths = records.lengths()
    shared = (records.to_sparse() @ knowledge_sets.to_sparse().T).tocsr()
    shared.sort_indices()
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(shared.indptr))
    links = shared.data == lengths[rows]
    link_rows, link_columns = rows[links], shared.indices[links].astype(np.int64)
    counts = np.bincount(link_rows, minlength=n)
    empty = lengths == 0
    counts[empty] = n_labels  # an empty record shares nothing with any S_L, so its row above is empty
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    # Entries are in row order; those of empty records are whole rows 0 .. |E|-1, the rest keep their order.
    of_empty = np.repeat(empty, counts)
    indices = np.empty(int(indptr[-1]), dtype=np.int64)
    indices[~of_empty] = link_columns
    indices[of_empty] = np.tile(np.arange(n_labels, dtype=np.int64), int(np.count_nonzero(empty)))
    return sp.csr_matrix(
        (np.ones(indices.size, dtype=bool), indices, indptr),
        shape=(n, n_labels),
    )
