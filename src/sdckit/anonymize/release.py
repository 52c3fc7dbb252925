"""What every anonymization method returns: the released table and a record of what was done."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field, fields
from typing import Any, Generic, TypeVar

import numpy as np
import polars as pl

from sdckit.hierarchy import Hierarchy
from sdckit.params import MethodParams
from sdckit.table import Role, Schema, Table
from sdckit.utility.view import GeneralizationView


@dataclass(frozen=True)
class Figures:
    """What a method found or decided while making a release, beyond its parameters: the base of every
    method's figures. A method that has figures of its own subclasses it as a frozen dataclass with
    typed fields (``TopBottomFigures(changed_records=12, ...)``); a method without any uses
    ``Figures()``. Read a method's own figures with :meth:`Release.figures_as`."""

    def as_dict(self) -> dict[str, Any]:
        """The figures by name (fields holding objects, such as a risk measurement, as they are)."""
        return {item.name: getattr(self, item.name) for item in fields(self)}


@dataclass(frozen=True)
class AppliedFigures(Figures):
    """The figures of a learnt transformation applied to new data (``sdckit apply``; a method whose
    applied release says more subclasses it): ``unknown`` counts, per quasi-identifier, the records
    suppressed for a value the transformation does not cover (zero when it covers them all)."""

    unknown: dict[str, int] = field(default_factory=dict)


FiguresT = TypeVar("FiguresT", bound=Figures)
ParamsT = TypeVar("ParamsT", bound=MethodParams)


@dataclass(frozen=True)
class Release(Generic[ParamsT]):
    """A released table and how it was made, by a method whose parameters object is ``ParamsT``
    (``Release[MondrianParams]``; a bare ``Release`` is a release of any method).

    ``table`` is the release (same row order as the original; identifiers dropped);
    ``suppressed_records`` flags the records whose quasi-identifiers were all suppressed;
    ``classes`` gives each record's equivalence class (-1 when suppressed); ``levels`` the
    generalization level of each quasi-identifier for full-domain generalization; ``view`` the
    distinct-combination view the utility metrics read; ``heuristic`` says whether the search
    stopped short of proving optimality.

    Every method that changes quasi-identifier cells also fills, with one column per entry of
    ``quasi_identifiers``:

    ``cell_penalty``
        float64 ``(n_records, n_quasi_identifiers)``: the NCP of every released cell in [0, 1]
        (Xu et al., 2006): 0 for an unchanged value, ``|leaves(u)| / |leaves(root)|`` for a value
        generalized to hierarchy node ``u`` (0 when ``u`` is a single leaf), ``(z - y) / (max - min)``
        for a number generalized to the interval ``[y, z]``, ``|set| / |domain|`` for a set of
        categories, 1 for a suppressed cell. :func:`sdckit.utility.release_ncp` averages it so that
        every method is compared with one metric.
    ``suppressed_cells``
        bool ``(n_records, n_quasi_identifiers)``: the cells suppressed to null (value suppression)
        or '*' (suppressed records), so reports count suppressed cells per attribute.
    """

    table: Table
    original: Table
    method: str
    #: The method's parameters object as the method resolved it (defaults taken from the
    #: configuration filled in): the step of the release's recipe. An applied transformation carries
    #: the parameters it recorded (:class:`sdckit.anonymize.transform.RecordedParams`).
    params: ParamsT
    quasi_identifiers: tuple[str, ...]
    suppressed_records: np.ndarray
    classes: np.ndarray
    seed: int | None = None
    levels: dict[str, int] | None = None
    hierarchies: dict[str, Hierarchy] = field(default_factory=dict)
    view: GeneralizationView | None = None
    heuristic: bool = False
    cell_penalty: np.ndarray | None = None
    suppressed_cells: np.ndarray | None = None
    #: Records per row, when each row stands for several identical records (a release computed on the
    #: distinct patterns of a data set, :mod:`sdckit.scale`); None: one record per row. Every count of
    #: records and cells below is then a sum of multiplicities.
    multiplicity: np.ndarray | None = None
    #: What the method found or decided (a frozen dataclass of the method's own; see :class:`Figures`).
    figures: Figures = field(default_factory=Figures)

    def figures_as(self, kind: type[FiguresT]) -> FiguresT:
        """The release's figures as the method's own figures class ``kind`` (typed access)."""
        if not isinstance(self.figures, kind):
            raise TypeError(f"{self.method} release has {type(self.figures).__name__}, not {kind.__name__}")
        return self.figures

    def to_polars(self) -> pl.DataFrame:
        """The released data as a polars DataFrame: the table the method writes (identifiers dropped,
        the other columns in their order; without the records a method leaves out of its release)."""
        from sdckit.anonymize.base import METHODS

        if self.method in METHODS:
            return METHODS.get(self.method).released(self).data
        return self.table.data

    def to_pandas(self) -> Any:
        """The released data as a pandas DataFrame (a fresh RangeIndex). An integer column with
        suppressed (null) values becomes pandas' nullable integer type of the same width (``Int64``),
        not float, so that 2005 stays 2005."""
        frame = self.to_polars()
        result = frame.to_pandas()
        for name, dtype in frame.schema.items():
            if dtype.is_integer() and frame.get_column(name).null_count():
                # polars hands an integer column with nulls to pandas as float64; its nullable
                # extension type keeps the values exact.
                column = frame.get_column(name).to_pandas(use_pyarrow_extension_array=True)
                result[name] = column.astype(str(dtype)).array
        return result

    def __repr__(self) -> str:
        """A short summary (method, parameters, records, suppressed cells, the k reached when the
        classes are known); the arrays are left out."""
        return "\n".join(self.summary_lines())

    def summary_lines(self) -> list[str]:
        """What printing the release shows, one line each."""
        released = self.table.data
        lines = [f"Release of {self.method}: {released.height:,} records × {released.width} columns"]
        if released.height != self.original.n_records:
            lines[0] += f" (of {self.original.n_records:,})"
        parameters = self.params.to_recipe()
        if parameters:
            text = "parameters: " + ", ".join(f"{key}={_brief(value)}" for key, value in parameters.items())
            lines += textwrap.wrap(text, width=100, subsequent_indent="  ", max_lines=3, placeholder=" …")
        if self.seed is not None and "seed" not in (parameters or {}):
            lines.append(f"seed: {self.seed}")
        if self.quasi_identifiers:
            lines.append(_shorten("quasi-identifiers: " + ", ".join(self.quasi_identifiers)))
        if self.suppressed_cells is not None:
            shown = ", ".join(
                f"{name} {count:,}" for name, count in self.suppressed_cells_per_attribute().items() if count
            )
            lines.append(
                _shorten(f"suppressed cells: {self.n_suppressed_cells:,}" + (f" ({shown})" if shown else ""))
            )
        if self.n_suppressed:
            lines.append(f"suppressed records: {self.n_suppressed:,}")
        sizes = self.class_sizes()
        if len(sizes):
            lines.append(f"k reached: {int(sizes.min()):,} (smallest of {len(sizes):,} equivalence classes)")
        if self.heuristic:
            lines.append("heuristic search: optimality not proven")
        lines.append(".to_pandas() / .to_polars(): the released data")
        return lines

    def _count(self, flags: np.ndarray) -> int:
        if self.multiplicity is None:
            return int(np.count_nonzero(flags))
        return int(self.multiplicity[np.asarray(flags, dtype=bool)].sum())

    @property
    def n_suppressed(self) -> int:
        return self._count(self.suppressed_records)

    def suppressed_cells_per_attribute(self) -> dict[str, int]:
        """Suppressed cells of every quasi-identifier (all zero when the method suppresses none)."""
        if self.suppressed_cells is None:
            return dict.fromkeys(self.quasi_identifiers, 0)
        return {
            name: self._count(self.suppressed_cells[:, j]) for j, name in enumerate(self.quasi_identifiers)
        }

    @property
    def n_suppressed_cells(self) -> int:
        if self.suppressed_cells is None:
            return 0
        return sum(self.suppressed_cells_per_attribute().values())

    @property
    def n_classes(self) -> int:
        kept = self.classes[self.classes >= 0]
        return int(len(np.unique(kept))) if len(kept) else 0

    def class_sizes(self) -> np.ndarray:
        """Records per (non-suppressed) equivalence class."""
        kept = self.classes >= 0
        if not kept.any():
            return np.zeros(0, dtype=np.int64)
        if self.multiplicity is None:
            return np.unique(self.classes[kept], return_counts=True)[1]
        classes, inverse = np.unique(self.classes[kept], return_inverse=True)
        return np.bincount(inverse, weights=self.multiplicity[kept], minlength=len(classes)).astype(np.int64)


def _brief(value: Any, width: int = 40) -> str:
    """A parameter's value as printed, cut to ``width`` characters."""
    text = repr(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def _shorten(line: str, width: int = 110) -> str:
    return line if len(line) <= width else line[: width - 1] + "…"


def without_identifiers(table: Table, frame: pl.DataFrame) -> Table:
    """``frame`` as a release of ``table``: its identifier columns and attributes dropped."""
    identifiers = [a.name for a in table.schema.with_role(Role.IDENTIFIER)]
    schema = Schema(tuple(a for a in table.schema.attributes if a.role is not Role.IDENTIFIER))
    return Table(frame.drop(identifiers), schema, source=table.source, weights=table.weights)
