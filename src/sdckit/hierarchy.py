"""Generalization hierarchies: how the values of an attribute are coarsened, level by level.

A :class:`Hierarchy` maps every value of an attribute (a *leaf*) to one node per level: level 0 is the
value itself, each higher level a coarser label, the last usually ``*``. Hierarchies are read from
ARX-format CSV files (``;``-separated, no header, one row per value, column j = the value at level j)
or built from the data: numeric intervals (:func:`intervals`), ordered categories grouped a few at a
time (:func:`ordered`) and codes masked one character at a time from the right (:func:`mask`).
A configuration names a hierarchy per attribute (:func:`build_hierarchy`)::

    attributes:
      age:      {hierarchy: adult_hierarchy_age.csv}            # relative to the configuration file
      income:   {hierarchy: {intervals: [0, 20, 40, 60, 80, 100]}}
      hours:    {hierarchy: {intervals: {width: 10, bottom: 0, top: 100, fanout: 2}}}
      grade:    {hierarchy: {order: [low, mid, high], fanout: 2}}
      zip:      {hierarchy: {mask: 5}}

Nodes are identified by their label at their level: every leaf with label ``x`` at level L is under
the same node. A hierarchy is valid (:meth:`Hierarchy.validate`) when the leaf values are distinct
and each level is a function of the previous one: two leaves with the same label at level L have the
same label at level L+1. Leaves and nodes are numbered in the order of the file (of the builder);
data values are matched to leaves as text spelled like :func:`sdckit.table.value_strings` (so the
number 34, or 34.0, matches the leaf ``34``).

**Missing values as members.** A hierarchy may hold one leaf for the missing value, as in ARX, where the
missing value is a value with its own row. :meth:`Hierarchy.with_missing` adds it, one of three ways:

* ``"leaf"``: a leaf of its own with its own ancestors: the row of the file whose leaf is empty or a
  missing-value token (``NA``), with its labels per level; without such a row, the missing value stays
  missing at every level below the top and joins the top node (``*``) there;
* ``{"under": NODE}``: a leaf under the node ``NODE``: missing below ``NODE``'s level, then ``NODE`` and
  its ancestors, so that the missing value generalizes like ``NODE``'s children;
* ``"suppress"``: suppressed from the start: missing at every level, the top included, and charged as a
  suppressed cell (its node counts every leaf, so its NCP and loss are 1).

A node labelled :data:`MISSING_LABEL` (the empty text, which no other label may be) is released as a
missing value (null).
"""

from __future__ import annotations

import csv
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from sdckit._files import MAX_TEXT_BYTES, check_regular_file
from sdckit.errors import ConfigError, shown
from sdckit.io import to_polars
from sdckit.labels import TOP_LABEL
from sdckit.table import value_strings

if TYPE_CHECKING:  # defined in sdckit._hierarchy_build, read through __getattr__ below
    from sdckit._hierarchy_build import build_hierarchy, intervals, mask, ordered

#: The label of a node that stands for a missing value; released as a missing value (null).
MISSING_LABEL = ""
#: How missing values can be members of a hierarchy (see :meth:`Hierarchy.with_missing`).
MISSING_CHOICES = ("leaf", "under", "suppress")
_SHOWN = 5


@dataclass(frozen=True)
class Hierarchy:
    """A generalization hierarchy of one attribute.

    ``labels[level][node]`` is the text of node ``node`` at ``level``; ``labels[0]`` are the leaves,
    the domain values as text. ``codes[leaf, level]`` (int32, read-only) is the node at ``level`` of
    leaf ``leaf``, so ``codes[:, 0]`` is ``0 .. n_leaves-1``. ``source`` is the file it came from and
    ``lines`` the 1-based line of every leaf in it (for messages; row number + 1 if not given).
    ``missing`` says how missing values are members (None: they are not, and a record with a missing
    value has leaf code -1; ``"leaf"``, ``"under"`` or ``"suppress"``: the leaf labelled
    :data:`MISSING_LABEL` is theirs, see :meth:`with_missing`).
    """

    name: str
    labels: tuple[tuple[str, ...], ...]
    codes: np.ndarray
    source: str | None = None
    lines: np.ndarray | None = field(default=None, repr=False, compare=False)
    missing: str | None = None
    _cache: dict[Any, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        labels = tuple(tuple(str(label) for label in level) for level in self.labels)
        codes = np.array(self.codes, dtype=np.int32, order="C", copy=True)
        if codes.ndim == 1 and len(labels) == 1:
            codes = codes.reshape(-1, 1)
        where = self._where()
        if not labels:
            raise ConfigError(f"{where}a hierarchy needs at least one level (the values)")
        if codes.ndim != 2 or codes.shape != (len(labels[0]), len(labels)):
            raise ConfigError(
                f"{where}codes must have shape (n_leaves, n_levels) = ({len(labels[0])}, {len(labels)}), "
                f"got {codes.shape}"
            )
        if not np.array_equal(codes[:, 0], np.arange(codes.shape[0])):
            raise ConfigError(f"{where}codes[:, 0] must number the leaves 0 .. n_leaves-1")
        for level, names in enumerate(labels):
            column = codes[:, level]
            if column.size and (column.min() < 0 or column.max() >= len(names)):
                raise ConfigError(f"{where}codes at level {level} must lie in 0 .. {len(names) - 1}")
        codes.setflags(write=False)
        object.__setattr__(self, "labels", labels)
        object.__setattr__(self, "codes", codes)
        if self.lines is not None:
            lines = np.array(self.lines, dtype=np.int64, copy=True)
            if lines.shape != (codes.shape[0],):
                raise ConfigError(f"{where}lines must give one line per leaf")
            lines.setflags(write=False)
            object.__setattr__(self, "lines", lines)
        if self.missing is not None:
            if self.missing not in MISSING_CHOICES:
                raise ConfigError(
                    f"{where}missing must be one of {', '.join(MISSING_CHOICES)}, got {shown(self.missing)}"
                )
            if MISSING_LABEL not in labels[0]:
                raise ConfigError(
                    f"{where}missing is {shown(self.missing)} but no leaf stands for the missing value"
                )

    @property
    def missing_leaf(self) -> int | None:
        """The leaf of a missing value (None when missing values are not members)."""
        if self.missing is None:
            return None
        return self.labels[0].index(MISSING_LABEL)

    # Shape ---------------------------------------------------------------------------------------

    @property
    def n_levels(self) -> int:
        """Number of levels, level 0 (the values) included."""
        return len(self.labels)

    @property
    def height(self) -> int:
        """The highest level, ``n_levels - 1``."""
        return self.n_levels - 1

    @property
    def n_leaves(self) -> int:
        return len(self.labels[0])

    def n_nodes(self, level: int) -> int:
        return len(self.labels[self._level(level)])

    def leaf_counts(self, level: int) -> np.ndarray:
        """Number of leaves under every node at ``level`` (int64, read-only). The node of a missing
        value that is suppressed from the start counts every leaf: it stands for any value, so that
        its NCP and loss are those of a suppressed cell (1)."""
        level = self._level(level)
        key = ("leaf_counts", level)
        if key not in self._cache:
            counts = np.bincount(self.codes[:, level], minlength=len(self.labels[level])).astype(np.int64)
            if self.missing == "suppress":
                counts[self.codes[self.missing_leaf, level]] = self.n_leaves
            counts.setflags(write=False)
            self._cache[key] = counts
        return self._cache[key]

    def leaves_under(self, level: int) -> np.ndarray:
        """For every leaf, the number of leaves under its node at ``level`` (float64, read-only)."""
        level = self._level(level)
        key = ("leaves_under", level)
        if key not in self._cache:
            under = self.leaf_counts(level)[self.codes[:, level]].astype(np.float64)
            under.setflags(write=False)
            self._cache[key] = under
        return self._cache[key]

    def ncp(self, level: int) -> np.ndarray:
        """Categorical NCP of every node at ``level``: 0 for a node with one leaf, else its number of
        leaves over the number of leaves of the hierarchy (Xu et al., 2006)."""
        counts = self.leaf_counts(level)
        if self.n_leaves == 0:
            return np.zeros(len(counts), dtype=np.float64)
        return np.where(counts <= 1, 0.0, counts / self.n_leaves)

    def parents(self, level: int) -> np.ndarray:
        """The node at ``level + 1`` of every node at ``level`` (int32, read-only; needs a valid
        hierarchy)."""
        level = self._level(level)
        if level >= self.height:
            raise ConfigError(f"{self._where()}level {level} is the top level: it has no parents")
        key = ("parents", level)
        if key not in self._cache:
            parents = np.full(len(self.labels[level]), -1, dtype=np.int32)
            parents[self.codes[:, level]] = self.codes[:, level + 1]
            parents.setflags(write=False)
            self._cache[key] = parents
        return self._cache[key]

    def node_of(self, label: Any, level: int) -> int:
        """The index of the node labelled ``label`` at ``level``."""
        level = self._level(level)
        key = ("index", level)
        if key not in self._cache:
            self._cache[key] = {text: node for node, text in enumerate(self.labels[level])}
        text = _text(label)
        try:
            return self._cache[key][text]
        except KeyError:
            raise ConfigError(f"{self._where()}no node '{text}' at level {level}") from None

    def level_of(self, label: Any) -> int:
        """The lowest level with a node labelled ``label``."""
        text = _text(label)
        for level, names in enumerate(self.labels):
            if text in names:
                return level
        raise ConfigError(f"{self._where()}no node is labelled '{text}'")

    def generalize_value(self, value: Any, level: int) -> str:
        """The label at ``level`` of one value."""
        return self.labels[self._level(level)][self.codes[self.node_of(value, 0), level]]

    # Records -------------------------------------------------------------------------------------

    def leaf_codes(self, column: pl.Series) -> np.ndarray:
        """The leaf of every record (int32): a missing value has the missing leaf when missing values
        are members (:attr:`missing`), else -1.

        Values are matched as text spelled like :func:`sdckit.table.value_strings`. Raises
        :class:`ConfigError` naming the values of the data that no leaf covers.
        """
        codes = self._leaf_codes(column)
        if self.missing is not None:
            codes[codes < 0] = self.missing_leaf
        return codes

    def _leaf_codes(self, column: pl.Series) -> np.ndarray:
        """:meth:`leaf_codes` with -1 for a missing value."""
        if column.dtype == pl.String:
            codes = self.text_leaf_codes(column)
            # -1 only for missing values: the leaves are known (a value no leaf spells is explained below).
            if codes is not None and np.count_nonzero(codes < 0) == column.null_count():
                return codes
        text = value_strings(column)
        coded = text.cast(self._enum(), strict=False)
        if coded.null_count() == 0:
            # Every value is a leaf (the usual case): the Enum's physical codes are the leaf codes.
            return np.array(coded.to_physical().to_numpy(), dtype=np.int32)
        uncovered = coded.is_null() & text.is_not_null()
        if uncovered.any():
            values = column.filter(uncovered)
            if column.dtype.is_numeric() or column.dtype.is_temporal():
                shown = value_strings(values.unique().sort())
            else:
                shown = value_strings(values).unique().sort()
            count = len(shown)
            listing = ", ".join(f"'{value}'" for value in shown.head(_SHOWN).to_list())
            more = ", …" if count > _SHOWN else ""
            source = f" ({self.source})" if self.source is not None else ""
            raise ConfigError(
                f"hierarchy for '{self.name}'{source} does not cover {count} "
                f"value{'s' if count != 1 else ''} of the data: {listing}{more}"
            )
        # A copy: polars hands out read-only arrays, and callers mark suppressed records with -1.
        return np.array(coded.to_physical().cast(pl.Int32).fill_null(-1).to_numpy(), dtype=np.int32)

    def text_leaf_codes(self, column: pl.Series) -> np.ndarray | None:
        """For a text column: the leaf of every value (int32, a new array; -1 for a missing value and
        for a value no leaf spells), or None where this way does not apply.

        The same codes as :meth:`leaf_code_expression`, which casts to an Enum of the leaves, at a
        fraction of its cost: polars hands the column to Arrow as string views (no copy), and a
        compiled loop looks every value up, byte for byte, in a hash table of the leaves
        (:func:`sdckit._kernels_text.text_codes`). None for a column that is not ``String``, one polars
        does not hand out as string views, or leaves that are not distinct (the Enum's error then
        stands); the caller then codes the column through the Enum.
        """
        table = self._text_table()
        if table is None:
            return None
        from sdckit import _kernels_text

        return _kernels_text.view_codes(column, table)

    def leaf_code_expression(self, name: str) -> pl.Expr:
        """For a text column ``name``: the leaf codes as an expression (null where no leaf matches),
        so that several columns are coded in one parallel ``select``; :meth:`leaf_codes` does the
        same for one column and explains the values no leaf covers."""
        return pl.col(name).cast(self._enum(), strict=False).to_physical()

    def generalize(self, leaf_codes: np.ndarray, level: int) -> np.ndarray:
        """The node at ``level`` of every leaf code (int32; -1 stays -1)."""
        level = self._level(level)
        key = ("padded", level)
        if key not in self._cache:
            # One more entry, -1, that leaf code -1 picks.
            padded = np.append(self.codes[:, level], np.int32(-1)).astype(np.int32)
            padded.setflags(write=False)
            self._cache[key] = padded
        return self._cache[key][np.asarray(leaf_codes)]

    def generalized_labels(self, leaf_codes: np.ndarray, level: int) -> pl.Series:
        """The label at ``level`` of every leaf code, as text (null for -1 and for a node of the
        missing value)."""
        nodes = self.generalize(leaf_codes, level)
        labels = pl.Series(self.name, self.labels[level], dtype=pl.String)
        index = pl.Series(nodes, dtype=pl.Int32)
        gathered = labels.gather(pl.select(pl.when(index >= 0).then(index)).to_series())
        return pl.select(pl.when(gathered != MISSING_LABEL).then(gathered)).to_series().alias(self.name)

    def missing_nodes(self, level: int) -> np.ndarray:
        """Which nodes at ``level`` stand for the missing value (labelled :data:`MISSING_LABEL`;
        bool, one per node)."""
        return np.array([label == MISSING_LABEL for label in self.labels[self._level(level)]], dtype=bool)

    # Missing values --------------------------------------------------------------------------------

    def with_missing(self, choice: Any) -> Hierarchy:
        """This hierarchy with missing values as members, as ``choice`` says: ``"leaf"`` (a leaf of
        their own: the hierarchy's row for the missing value if it has one, else missing at every level
        below the top and the top node there), ``{"under": NODE}`` (a leaf under the node labelled
        ``NODE``, generalized like its children) or ``"suppress"`` (missing at every level, charged as
        a suppressed cell). None returns the hierarchy unchanged, which must then have no row for the
        missing value. Raises :class:`ConfigError` for a choice it does not know, a node that does not
        exist, or a row for the missing value with a choice other than ``"leaf"``."""
        treatment, node = _missing_choice(self.name, choice)
        present = MISSING_LABEL in self.labels[0]
        if treatment is None:
            if present:
                raise ConfigError(
                    f"{self._where(self.labels[0].index(MISSING_LABEL))}the hierarchy has a row for the "
                    "missing value; say missing: leaf to use it"
                )
            return self
        if present:
            row = self.labels[0].index(MISSING_LABEL)
            if treatment != "leaf":
                shown = f"{{under: {node}}}" if treatment == "under" else treatment
                raise ConfigError(
                    f"{self._where(row)}the hierarchy has a row for the missing value, but missing is "
                    f"{shown}; say missing: leaf to use the row, or remove it"
                )
            if self.missing == "leaf":
                return self
            return Hierarchy(self.name, self.labels, self.codes, self.source, self.lines, missing="leaf")
        if self.n_leaves == 0:
            raise ConfigError(
                f"{self._where()}the hierarchy lists no values to place the missing value among"
            )
        height = self.height
        # Per level: the missing value's node there, None for a node of its own.
        path: list[int | None]
        if treatment == "suppress":
            # Its own node at every level, the top included: it never joins another value.
            path = [None] * self.n_levels
        elif treatment == "leaf":
            top = self.labels[height]
            # The top node when there is one; a hierarchy without a single root keeps it apart.
            path = [None] * height
            path.append(0 if height > 0 and len(top) == 1 else None)
        else:
            assert node is not None  # _missing_choice gives "under" with its node
            level = self._node_level(node)
            leaf = int(np.flatnonzero(self.codes[:, level] == self.node_of(node, level))[0])
            path = [None] * level
            path += [int(self.codes[leaf, above]) for above in range(level, self.n_levels)]
        labels = []
        codes = np.empty((self.n_leaves + 1, self.n_levels), dtype=np.int32)
        codes[:-1] = self.codes
        for level, names in enumerate(self.labels):
            on_path = path[level]
            if on_path is None:
                codes[-1, level] = len(names)
                names = (*names, MISSING_LABEL)
            else:
                codes[-1, level] = on_path
            labels.append(names)
        lines = None if self.lines is None else np.append(self.lines, 0)
        hierarchy = Hierarchy(self.name, tuple(labels), codes, self.source, lines, missing=treatment)
        hierarchy.validate()
        return hierarchy

    def _node_level(self, node: str) -> int:
        """The lowest level above the leaves with a node labelled ``node``."""
        for level in range(1, self.n_levels):
            if node in self.labels[level]:
                return level
        nodes = [label for level in self.labels[1:] for label in dict.fromkeys(level)]
        # About the configuration's missing key, not a line of the file: named by the attribute only.
        where = f"hierarchy for '{self.name}': "
        if node in self.labels[0]:
            raise ConfigError(
                f"{where}missing: under '{node}': '{node}' is a value (a leaf), not a node above "
                "the values; name a node of level 1 or higher"
            )
        import difflib

        close = difflib.get_close_matches(node, nodes, n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        listing = ", ".join(f"'{label}'" for label in list(dict.fromkeys(nodes))[:_SHOWN])
        more = ", …" if len(set(nodes)) > _SHOWN else ""
        return_text = (
            f" (nodes: {listing}{more})" if nodes else " (the hierarchy has no level above the values)"
        )
        raise ConfigError(
            f"{where}missing: under '{node}': no node '{node}' in the hierarchy{hint}{return_text}"
        )

    # Checks --------------------------------------------------------------------------------------

    def validate(self) -> None:
        """Check that the leaves are distinct and that each level is a function of the previous one;
        raise :class:`ConfigError` naming the file, the line and the level otherwise. A hierarchy
        that passed is not checked again (its labels and codes do not change)."""
        if self._cache.get("valid"):
            return
        leaves = pl.Series(self.labels[0], dtype=pl.String)
        repeated = np.flatnonzero(~leaves.is_first_distinct().to_numpy())
        if repeated.size:
            row = int(repeated[0])
            first = self.labels[0].index(self.labels[0][row])
            raise ConfigError(
                f"{self._where(row)}value {shown(str(self.labels[0][row]))} is listed twice "
                f"(first on line {self._line(first)})"
            )
        for level in range(1, self.n_levels):
            # Nodes are their labels: two nodes with one label would print as one.
            names = self.labels[level]
            if len(set(names)) != len(names):
                seen: set[str] = set()
                repeated_label = next(name for name in names if name in seen or _added(seen, name))
                raise ConfigError(f"{self._where()}level {level} has two nodes labelled '{repeated_label}'")
        for level in range(1, self.height):
            child = self.codes[:, level]
            parent = self.codes[:, level + 1]
            # The first leaf of every node; its parent is the one every leaf of the node must share.
            first_leaf = np.zeros(len(self.labels[level]), dtype=np.int64)
            nodes, first_rows = np.unique(child, return_index=True)
            first_leaf[nodes] = first_rows
            bad = parent != parent[first_leaf[child]]
            if bad.any():
                row = int(np.argmax(bad))
                other = int(first_leaf[child[row]])
                raise ConfigError(
                    f"{self._where(row)}inconsistent hierarchy: level {level + 1} is not a function of "
                    f"level {level}: '{self.labels[level][child[row]]}' generalizes to "
                    f"'{self.labels[level + 1][parent[row]]}' here but to "
                    f"'{self.labels[level + 1][parent[other]]}' on line {self._line(other)}"
                )
        self._cache["valid"] = True

    # Conversions ---------------------------------------------------------------------------------

    def to_frame(self) -> pl.DataFrame:
        """One row per leaf, one text column per level (``level_0`` .. ``level_<height>``)."""
        return pl.DataFrame(
            {
                f"level_{level}": pl.Series(names, dtype=pl.String).gather(
                    pl.Series(self.codes[:, level], dtype=pl.Int32)
                )
                for level, names in enumerate(self.labels)
            }
        )

    def to_csv(self, path: str | os.PathLike[str], delimiter: str = ";") -> None:
        """Write the hierarchy in ARX's format (no header)."""
        self.to_frame().write_csv(os.fspath(path), separator=delimiter, include_header=False)

    @classmethod
    def from_frame(
        cls,
        name: str,
        frame: Any,
        source: str | None = None,
        *,
        lines: Sequence[int] | np.ndarray | None = None,
        validate: bool = True,
        missing_values: Sequence[str] | None = None,
    ) -> Hierarchy:
        """A hierarchy from a polars or pandas DataFrame: one row per leaf, column j = level j.

        Values are taken as text (numbers spelled without a trailing ``.0``); a missing or empty
        label is an error. Validated (:meth:`validate`) unless ``validate`` is False.

        With ``missing_values`` (the tokens that mean a missing value, such as ``NA``), the one row
        whose leaf is empty or such a token is the row of the missing value: its leaf becomes
        :data:`MISSING_LABEL`, and so does an empty label of it at a higher level (the missing value
        stays missing there). :meth:`with_missing` then makes it the leaf of missing values.
        """
        data = to_polars(frame)
        line_numbers = np.arange(1, data.height + 1) if lines is None else np.asarray(lines)
        if data.width == 0:
            raise ConfigError(f"{_where(name, source)}a hierarchy needs at least one column (the values)")
        columns = [value_strings(data.to_series(j)) for j in range(data.width)]
        keep = None  # rows whose empty labels are errors (None: every row)
        if missing_values is not None and data.height:
            leaves = columns[0]
            tokens = [MISSING_LABEL, *(str(token) for token in missing_values)]
            rows = np.flatnonzero((leaves.is_null() | leaves.is_in(tokens)).fill_null(True).to_numpy())
            if rows.size > 1:
                first, second = (int(line_numbers[row]) for row in rows[:2])
                raise ConfigError(
                    f"{_where(name, source, second)}a second row for the missing value "
                    f"('{leaves[int(rows[1])] or ''}'; the first is on line {first})"
                )
            if rows.size:
                row = int(rows[0])
                columns = [
                    column.scatter(row, MISSING_LABEL) if column[row] in (None, "") or level == 0 else column
                    for level, column in enumerate(columns)
                ]
                # The row's empty labels are the missing value's own nodes, not holes.
                keep = np.ones(data.height, dtype=bool)
                keep[row] = False
        for level, column in enumerate(columns):
            empty_mask = (column.is_null() | (column == "")).fill_null(True).to_numpy()
            if keep is not None:
                empty_mask &= keep
            empty = np.flatnonzero(empty_mask)
            if empty.size:
                row = int(empty[0])
                raise ConfigError(
                    f"{_where(name, source, int(line_numbers[row]))}the label at level {level} "
                    f"(field {level + 1}) is empty"
                )
        leaves = columns[0]
        repeated = np.flatnonzero(~leaves.is_first_distinct().to_numpy())
        if repeated.size:
            row = int(repeated[0])
            first = int(np.flatnonzero((leaves == leaves[row]).to_numpy())[0])
            raise ConfigError(
                f"{_where(name, source, int(line_numbers[row]))}value {shown(str(leaves[row]))} "
                "is listed twice "
                f"(first on line {int(line_numbers[first])})"
            )
        labels = []
        codes = np.empty((data.height, data.width), dtype=np.int32)
        for level, column in enumerate(columns):
            distinct = column.unique(maintain_order=True)
            labels.append(tuple(distinct.to_list()))
            codes[:, level] = column.cast(pl.Enum(distinct.to_list())).to_physical().to_numpy()
        hierarchy = cls(
            name=name,
            labels=tuple(labels),
            codes=codes,
            source=source,
            lines=None if lines is None else line_numbers,
        )
        if validate:
            hierarchy.validate()
        return hierarchy

    @classmethod
    def from_rows(
        cls,
        name: str,
        rows: Sequence[Sequence[Any]],
        source: str | None = None,
        *,
        lines: Sequence[int] | None = None,
        validate: bool = True,
        missing_values: Sequence[str] | None = None,
    ) -> Hierarchy:
        """A hierarchy from rows (one per leaf: the value, then its label at every level).

        Empty fields at the end of a row are ignored; rows of different lengths are an error naming
        the line (``lines[i]``, or i + 1). ``missing_values``: see :meth:`from_frame`.
        """
        line_numbers = list(range(1, len(rows) + 1)) if lines is None else list(lines)
        if len(line_numbers) != len(rows):
            raise ConfigError(f"lines must give one line per row ({len(rows)}), got {len(line_numbers)}")
        trimmed = []
        for row in rows:
            fields = [_text(value) for value in row]
            while fields and fields[-1] == "":
                fields.pop()
            trimmed.append(fields)
        if not trimmed:
            raise ConfigError(f"{_where(name, source)}the hierarchy lists no values")
        width = len(trimmed[0])
        for index, fields in enumerate(trimmed):
            if len(fields) != width:
                raise ConfigError(
                    f"{_where(name, source, line_numbers[index])}expected {width} levels as on line "
                    f"{line_numbers[0]}, found {len(fields)}"
                )
        if width == 0:
            raise ConfigError(f"{_where(name, source, line_numbers[0])}the row is empty")
        frame = pl.DataFrame(
            {
                f"level_{j}": pl.Series(column, dtype=pl.String)
                for j, column in enumerate(zip(*trimmed, strict=True))
            }
        )
        return cls.from_frame(
            name, frame, source, lines=line_numbers, validate=validate, missing_values=missing_values
        )

    @classmethod
    def from_csv(
        cls,
        path: str | os.PathLike[str],
        name: str,
        delimiter: str = ";",
        *,
        validate: bool = True,
        missing_values: Sequence[str] | None = None,
    ) -> Hierarchy:
        """Read a hierarchy in ARX's CSV format: no header, one row per value, column j = the label at
        level j. Blank lines and empty fields at the end of a row are ignored; rows with different
        numbers of levels are an error naming the file and line. ``missing_values``: the tokens of a
        row for the missing value (see :meth:`from_frame`)."""
        label = str(path)
        rows: list[list[str]] = []
        lines: list[int] = []
        # Read as Python lists, about 20 times the size of the file; a device or FIFO would never end.
        check_regular_file(
            path,
            f"{label}: hierarchy for '{name}'",
            "hierarchy file",
            ConfigError,
            max_bytes=MAX_TEXT_BYTES,
            memory_factor=20.0,
            missing=f"hierarchy for '{name}': no such file: {label}",
        )
        try:
            with open(path, "rb") as handle:
                head = handle.read(_SNIFF_BYTES)
        except OSError as error:
            raise ConfigError(f"{_where(name, label)}cannot read the file: {error.strerror}") from None
        nul = head.find(b"\x00")
        if nul >= 0:
            line = head.count(b"\n", 0, nul) + 1
            raise ConfigError(
                f"{_where(name, label, line)}the file must be text, "
                f"got binary data (a NUL byte at byte {nul})"
            )
        try:
            with open(path, newline="", encoding="utf-8-sig") as handle:
                reader = csv.reader(handle, delimiter=delimiter)
                previous = 0
                try:
                    for row in reader:
                        start, previous = previous + 1, reader.line_num
                        while row and row[-1] == "":
                            row.pop()
                        if row:
                            rows.append(row)
                            lines.append(start)
                except csv.Error as error:
                    raise ConfigError(f"{_where(name, label, reader.line_num)}{error}") from None
        except FileNotFoundError:
            raise ConfigError(f"hierarchy for '{name}': no such file: {label}") from None
        except IsADirectoryError:
            raise ConfigError(f"hierarchy for '{name}': {label} is a directory, not a file") from None
        except UnicodeDecodeError as error:
            raise ConfigError(
                f"{_where(name, label)}the file is not UTF-8 text (byte {error.start}); convert it to UTF-8"
            ) from None
        except OSError as error:
            raise ConfigError(f"{_where(name, label)}cannot read the file: {error.strerror}") from None
        if not rows:
            raise ConfigError(f"{_where(name, label)}the file is empty")
        return cls.from_rows(
            name, rows, source=label, lines=lines, validate=validate, missing_values=missing_values
        )

    # Plumbing ------------------------------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Hierarchy):
            return NotImplemented
        return (
            self.name == other.name
            and self.labels == other.labels
            and np.array_equal(self.codes, other.codes)
        )

    def __hash__(self) -> int:
        return hash((self.name, self.labels))

    def __repr__(self) -> str:
        source = f", source={self.source!r}" if self.source is not None else ""
        return f"Hierarchy(name={self.name!r}, n_leaves={self.n_leaves}, n_levels={self.n_levels}{source})"

    def _level(self, level: int) -> int:
        if (
            isinstance(level, bool)
            or not isinstance(level, int | np.integer)
            or not 0 <= level < self.n_levels
        ):
            raise ConfigError(f"{self._where()}level must be one of 0 .. {self.height}, got {shown(level)}")
        return int(level)

    def _enum(self) -> pl.Enum:
        if "enum" not in self._cache:
            self._cache["enum"] = pl.Enum(list(self.labels[0]))
        return self._cache["enum"]

    def _text_table(self) -> tuple[np.ndarray, np.ndarray, np.uint64] | None:
        """The leaves as UTF-8 bytes, their hash table and its multiplier
        (:func:`sdckit._kernels_text.text_table`); None when two leaves are spelled alike or a leaf is not
        valid UTF-8."""
        if "text table" not in self._cache:
            from sdckit import _kernels_text

            self._cache["text table"] = _kernels_text.label_table(self.labels[0])
        return self._cache["text table"]

    def _line(self, row: int) -> int:
        return int(self.lines[row]) if self.lines is not None else row + 1

    def _where(self, row: int | None = None) -> str:
        return _where(self.name, self.source, None if row is None else self._line(row))


_SNIFF_BYTES = 64 * 1024


def _where(name: str, source: str | None, line: int | None = None) -> str:
    """``file:line: hierarchy for 'x': `` (``hierarchy for 'x': line N: `` without a file)."""
    if source is not None:
        place = f"{source}:{line}" if line is not None else source
        return f"{place}: hierarchy for '{name}': "
    return f"hierarchy for '{name}': " + (f"line {line}: " if line is not None else "")


def _text(value: Any) -> str:
    """A value as a configuration or a hierarchy file spells it: 34.0 as '34', True as 'true'."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool | np.bool_):
        return "true" if value else "false"
    if isinstance(value, float | np.floating) and float(value).is_integer():
        return str(int(value))
    return str(value)


def _missing_choice(name: str, choice: Any) -> tuple[str | None, str | None]:
    """A missing-value choice as (treatment, node): ``"leaf"``, ``"suppress"``, ``{"under": NODE}``,
    or None; raises :class:`ConfigError` naming the attribute for anything else."""
    if choice is None:
        return None, None
    if isinstance(choice, str) and choice in ("leaf", "suppress"):
        return choice, None
    if isinstance(choice, Mapping) and list(choice) == ["under"]:
        node = choice["under"]
        if node is None or isinstance(node, Mapping | list | tuple) or _text(node) == "":
            raise ConfigError(
                f"hierarchy for '{name}': missing: under needs the label of a node, got {shown(node)}"
            )
        return "under", _text(node)
    raise ConfigError(
        f"hierarchy for '{name}': missing must be leaf, suppress or {{under: NODE}}, got {shown(choice)}"
    )


def missing_values_refused(source: str | None, name: str, count: int, method: str) -> ConfigError:
    """The error for a quasi-identifier with missing values that its hierarchy does not place: it
    names the attribute and the three choices."""
    return ConfigError(
        f"{source or 'data'}: quasi-identifier '{name}' has {count:,} missing value"
        f"{'s' if count != 1 else ''}; say how {method} generalizes them with the attribute's key "
        "missing: leaf (a leaf of their own: the hierarchy's row for the missing value, or missing up "
        "to the top), missing: {under: NODE} (a leaf under a node of the hierarchy) or missing: "
        "suppress (released empty and counted as suppressed cells)"
    )


def _added(seen: set[str], name: str) -> bool:
    """Add ``name`` to ``seen``; False (so that a search goes on to the next name)."""
    seen.add(name)
    return False


_BUILDERS = ("build_hierarchy", "intervals", "mask", "ordered")


def __getattr__(name: str) -> Any:
    """The builders, which live in :mod:`sdckit._hierarchy_build` (they build a :class:`Hierarchy`,
    so that module imports this one), read from there on first use."""
    if name in _BUILDERS:
        from sdckit import _hierarchy_build

        return getattr(_hierarchy_build, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "MISSING_CHOICES",
    "MISSING_LABEL",
    "TOP_LABEL",
    "Hierarchy",
    "build_hierarchy",
    "intervals",
    "mask",
    "missing_values_refused",
    "ordered",
]
