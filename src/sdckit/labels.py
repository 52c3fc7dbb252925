"""Released labels: how sdckit writes a generalized value, and the one grammar that reads it back.

A method that coarsens a value writes a *label* in its place; a measure that compares a release with
its original reads the label as the original values it stands for. Both sides live here, so that
what one method writes every reader reads, and every reader reads it alike.

=================  ==============================================  ===================================
label              written by                                      read as
=================  ==============================================  ===================================
``*``              suppression, full-domain generalization, the    every value, a missing one too
                   top level of every hierarchy (:data:`TOP_LABEL`)
``38-40``          Mondrian, a class of numbers (:func:`range_      the numbers in [38, 40]
                   labels`)
``{Female,Male}``  Mondrian, a class of categories (:func:`set_     the listed values
                   labels`)
``[20, 40)``       interval hierarchies (:func:`interval_label`)   20 ≤ x < 40
``<20``            interval hierarchies, bottom coding             x < 20
``>=100``          interval hierarchies, top coding                x ≥ 100
``4790*``          mask hierarchies (:func:`masked_labels`)        the codes of 5 characters that start
                                                                   with ``4790``
``A-D``            ordered hierarchies (:func:`ordered_label`)     a node of its hierarchy
a number ``39``    every method that keeps a value                 that number
=================  ==============================================  ===================================

The ranges of an exported transformation (``sdckit apply``'s mapping files: top and bottom coding's
``<5``, ``>15``, ``[5, 15]``, Mondrian's boxes ``(28, 30]``) are written by the same functions
(:func:`interval_labels`, :func:`above_label`, :func:`at_most_label`). Read, never released:
intervals with any brackets and ``,`` or ``;`` (``(20, 40]``, ``[20;40]``), ``<=a``, ``>a``,
``≤a``, ``≥a``, ``inf`` as a bound, and the empty text (a missing value, as a CSV writes one).
Blanks around a label are not part of it. Whether a label is a node of a hierarchy, or a value of
the original data, the grammar cannot tell: the readers below are given the original values (and
the hierarchy) and read, in this order, an original value spelled as it is, ``*``, a node of the
attribute's hierarchy, then the grammar (:func:`parse_label`). Numeric distances
(:func:`numeric_bounds`, record linkage) read the grammar before the hierarchy, as they always have:
a node ``[20, 40)`` of a real-valued attribute is then the interval, not the hull of its leaves.

Three readings of one grammar: :func:`covered_codes` (the original values a label covers: coverage
counting, record linkage on categories, drawing a release back into the original's domain),
:func:`numeric_bounds` (the interval a label spans: record linkage's distances) and
:func:`representative` (one number per label: the numeric utility measures).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
import polars as pl

if TYPE_CHECKING:
    from sdckit.hierarchy import Hierarchy

__all__ = [
    "SUPPRESSED",
    "TOP_LABEL",
    "Cover",
    "Label",
    "above_label",
    "at_least_label",
    "at_most_label",
    "below_label",
    "categories_covered",
    "covered_codes",
    "hierarchy_leaves",
    "interval_label",
    "interval_labels",
    "masked_labels",
    "node_codes",
    "number_text",
    "numeric_bounds",
    "ordered_label",
    "parse_label",
    "range_labels",
    "representative",
    "set_labels",
]

#: The label of the top of every hierarchy: every value.
TOP_LABEL = "*"
#: The label of a suppressed value (full-domain generalization's suppressed records): every value.
SUPPRESSED = TOP_LABEL

# Writers -------------------------------------------------------------------------------------------


def number_text(number: float) -> str:
    """A number as a label spells it: 20 not 20.0, 0.1 not 0.1000000000000000055."""
    number = float(number)
    if number.is_integer() and abs(number) < 1e15:
        return str(int(number))
    return repr(number)


def interval_label(low: str, high: str, low_closed: bool = True, high_closed: bool = False) -> str:
    """The interval from ``low`` to ``high`` (bounds already spelled), ``[`` / ``]`` at a closed end,
    ``(`` / ``)`` at an open one: ``[20, 40)``, an interval hierarchy's, by default."""
    return f"{'[' if low_closed else '('}{low}, {high}{']' if high_closed else ')'}"


def interval_labels(
    low_texts: pl.Series, high_texts: pl.Series, low_closed: Sequence[bool], high_closed: Sequence[bool]
) -> pl.Series:
    """:func:`interval_label` of every row: the bounds spelled, an end closed or open per row."""
    opening = pl.Series(["[" if closed else "(" for closed in low_closed], dtype=pl.String)
    closing = pl.Series(["]" if closed else ")" for closed in high_closed], dtype=pl.String)
    return pl.select(
        pl.concat_str([pl.lit(opening), pl.lit(low_texts), pl.lit(", "), pl.lit(high_texts), pl.lit(closing)])
    ).to_series()


def below_label(bound: str) -> str:
    """``<bound``: every number below the first cut (bottom coding in an interval hierarchy)."""
    return f"<{bound}"


def at_least_label(bound: str) -> str:
    """``>=bound``: every number from the last cut on (top coding in an interval hierarchy)."""
    return f">={bound}"


def above_label(bound: str) -> str:
    """``>bound``: every number above ``bound`` (the values top coding replaces)."""
    return f">{bound}"


def at_most_label(bound: str) -> str:
    """``<=bound``: every number up to ``bound``."""
    return f"<={bound}"


def ordered_label(first: str, last: str) -> str:
    """A group of ordered categories, ``first-last`` (the category alone when the group holds one)."""
    return first if first == last else f"{first}-{last}"


def masked_labels(padded: pl.Series, width: int, hidden: int, character: str = "*") -> pl.Series:
    """Codes of ``width`` characters with their last ``hidden`` replaced by ``character``."""
    return padded.str.head(width - hidden) + character * hidden


def range_labels(low_texts: pl.Series, high_texts: pl.Series, single: np.ndarray) -> pl.Series:
    """Mondrian's numeric labels: ``low-high`` per class, the value alone where ``single``."""
    return pl.select(
        pl.when(pl.lit(pl.Series(single)))
        .then(pl.lit(low_texts))
        .otherwise(pl.concat_str([pl.lit(low_texts), pl.lit(high_texts)], separator="-"))
    ).to_series()


def set_labels(joined: pl.Series, single: np.ndarray) -> pl.Series:
    """Mondrian's categorical labels: ``{a,b}`` of the members ``joined`` with ``,`` (sorted), the
    value alone where ``single``."""
    return pl.select(
        pl.when(pl.lit(pl.Series(single)))
        .then(pl.lit(joined))
        .otherwise(pl.concat_str([pl.lit("{"), pl.lit(joined), pl.lit("}")]))
    ).to_series()


# The grammar ---------------------------------------------------------------------------------------

_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?inf"
_INTERVAL = re.compile(rf"^([\[(])\s*({_NUMBER})\s*[,;]\s*({_NUMBER})\s*([\])])$")
_RANGE = re.compile(rf"^({_NUMBER})\s*-\s*({_NUMBER})$")
_BOUND = re.compile(rf"^(<=|>=|<|>|≤|≥)\s*({_NUMBER})$")
_SET = re.compile(r"^\{(.*)\}$", re.S)
_MASK = re.compile(r"^(.*?)(\*+)$", re.S)
_DIGITS = re.compile(r"^\d*$")

Kind = Literal["missing", "all", "number", "interval", "set", "mask"]


@dataclass(frozen=True)
class Label:
    """One label as the grammar reads it.

    ``kind``: ``missing`` (empty text), ``all`` (``*``), ``number``, ``interval`` (``low``/``high``
    with ``low_open``/``high_open``; a number is the interval [x, x]; ``bound`` the number written
    after ``<``, ``>=``, … when the interval is one side of a bound), ``set`` (``members``, blanks
    around each stripped, as written), ``mask`` (``prefix`` then ``*`` up to ``width`` characters).
    """

    kind: Kind
    low: float = -math.inf
    high: float = math.inf
    low_open: bool = False
    high_open: bool = False
    members: tuple[str, ...] = ()
    prefix: str = ""
    width: int = 0
    bound: float | None = None

    def contains(self, numbers: np.ndarray) -> np.ndarray:
        """Which of ``numbers`` the interval (or the number) holds."""
        above = numbers > self.low if self.low_open else numbers >= self.low
        below = numbers < self.high if self.high_open else numbers <= self.high
        return above & below


def parse_label(text: str) -> Label | None:
    """The reading of one label under the grammar of the module docstring, None when it has none
    (a category, a node of a hierarchy, a label of no form sdckit knows)."""
    label = text.strip()
    if not label:
        return Label("missing")
    if label == TOP_LABEL:
        return Label("all")
    try:
        value = float(label)
    except ValueError:
        pass
    else:
        return Label("number", value, value)
    if found := _INTERVAL.match(label):
        return Label("interval", float(found[2]), float(found[3]), found[1] == "(", found[4] == ")")
    if found := _RANGE.match(label):
        return Label("interval", float(found[1]), float(found[2]))
    if found := _BOUND.match(label):
        sign, bound = found[1], float(found[2])
        if sign in ("<", "<=", "≤"):
            return Label("interval", high=bound, high_open=sign == "<", bound=bound)
        return Label("interval", low=bound, low_open=sign == ">", bound=bound)
    if found := _SET.match(label):
        return Label("set", members=tuple(member.strip() for member in found[1].split(",")))
    if found := _MASK.match(label):
        return Label("mask", prefix=found[1], width=len(label))
    return None


def _numeric_members(label: Label) -> list[float] | None:
    """The members of a set of numbers (empty members skipped), None if one is no number."""
    try:
        return [float(member) for member in label.members if member]
    except ValueError:
        return None


def _mask_span(label: Label) -> tuple[float, float] | None:
    """The numbers a mask of digits spans: ``19**`` is 1900 … 1999; None for a mask of other text."""
    if not _DIGITS.match(label.prefix):
        return None
    scale = 10 ** (label.width - len(label.prefix))
    low = int(label.prefix or "0") * scale
    return float(low), float(low + scale - 1)


# Readings ------------------------------------------------------------------------------------------


def hierarchy_leaves(hierarchy: Hierarchy, label: str) -> list[str]:
    """The leaves under every node labelled ``label`` at a level above the leaves."""
    leaves: list[str] = []
    for level in range(1, hierarchy.n_levels):
        names = hierarchy.labels[level]
        if label in names:
            node = names.index(label)
            under = np.flatnonzero(hierarchy.codes[:, level] == node)
            leaves.extend(hierarchy.labels[0][leaf] for leaf in under.tolist())
    return leaves


def node_codes(hierarchy: Hierarchy, leaf_codes: np.ndarray) -> dict[str, np.ndarray]:
    """Every label of a node above the leaves, with the codes of its leaves (``leaf_codes[i]``: the
    code of leaf i, negative for none), ascending and distinct (the union when a label is used at
    several levels: a node repeated on the way up)."""
    nodes: dict[str, np.ndarray] = {}
    codes = np.asarray(hierarchy.codes)
    for level in range(1, hierarchy.n_levels):
        order = np.argsort(codes[:, level], kind="stable")
        bounds = np.searchsorted(codes[order, level], np.arange(len(hierarchy.labels[level]) + 1))
        for node, label in enumerate(hierarchy.labels[level]):
            leaves = order[bounds[node] : bounds[node + 1]]
            nodes[label] = np.union1d(nodes[label], leaves) if label in nodes else leaves
    result = {}
    for label, leaves in nodes.items():
        covered = leaf_codes[leaves]
        result[label] = np.unique(covered[covered >= 0]).astype(np.int64)
    return result


@dataclass(frozen=True)
class Cover:
    """What one label covers among the original values: ``codes`` (ascending), None for every value
    (a missing one too). ``reading`` names how it was read (``value``, ``all``, ``missing``, ``node``,
    ``set``, ``number``, ``interval``, ``mask``); ``unknown`` the members of a set that are no original
    value (in the order written)."""

    reading: str
    codes: np.ndarray | None
    unknown: tuple[str, ...] = ()


def covered_codes(
    label: str,
    index: Mapping[str, int],
    texts: Sequence[str],
    *,
    numbers: np.ndarray | None = None,
    ascending: bool = False,
    nodes: Mapping[str, np.ndarray] | None = None,
) -> Cover | None:
    """The original values one released ``label`` covers, None when it cannot be read.

    ``index`` maps the text of an original value (as :func:`sdckit.table.value_strings` spells it)
    to its code, ``texts`` lists them by code; ``numbers`` (a numeric attribute) gives each code's
    number, ``ascending`` when they are sorted (then an interval is found by bisection); ``nodes``
    the codes under each node of the attribute's hierarchy (:func:`node_codes`). Read in the order:
    an original value, ``*``, a node, then the grammar; a number and an interval cover the numbers
    they hold (numeric attributes only), a mask the codes of its width that start with its prefix.
    """
    code = index.get(label)
    if code is not None:
        return Cover("value", np.array([code], dtype=np.int64))
    parsed = parse_label(label)
    if parsed is not None and parsed.kind == "all":
        return Cover("all", None)
    if nodes is not None and label in nodes:
        return Cover("node", nodes[label])
    if parsed is None:
        return None
    if parsed.kind == "missing":
        return Cover("missing", None)
    if parsed.kind == "set":
        known = [index[member] for member in parsed.members if member in index]
        unknown = tuple(member for member in parsed.members if member not in index)
        return Cover("set", np.unique(np.array(known, dtype=np.int64)), unknown)
    if parsed.kind in ("number", "interval"):
        if numbers is None:
            return None
        if ascending:
            first = np.searchsorted(numbers, parsed.low, side="right" if parsed.low_open else "left")
            last = np.searchsorted(numbers, parsed.high, side="left" if parsed.high_open else "right")
            return Cover(parsed.kind, np.arange(first, max(first, last), dtype=np.int64))
        return Cover(parsed.kind, np.flatnonzero(parsed.contains(numbers)).astype(np.int64))
    prefix, width = parsed.prefix, parsed.width
    matching = [code for code, value in enumerate(texts) if len(value) == width and value.startswith(prefix)]
    return Cover("mask", np.array(matching, dtype=np.int64))


def numeric_bounds(
    label: str | None, hierarchy: Hierarchy | None = None
) -> tuple[float, float, float, float] | None:
    """``(low, high, low_open, high_open)`` of one released numeric label (open flags as 0.0/1.0),
    None when it spans no interval: a missing value and ``*`` span every number, a set of numbers
    its smallest to its largest member, a node of ``hierarchy`` with numeric leaves its smallest to
    its largest leaf, a mask of digits its numbers (``19**``: 1900 … 1999)."""
    if label is None:
        return (-math.inf, math.inf, 0.0, 0.0)
    parsed = parse_label(label)
    kind = parsed.kind if parsed is not None else None
    if kind == "all":
        return (-math.inf, math.inf, 0.0, 0.0)
    if parsed is not None and kind in ("number", "interval"):
        return (parsed.low, parsed.high, float(parsed.low_open), float(parsed.high_open))
    if parsed is not None and kind == "set":
        members = _numeric_members(parsed)
        if members:
            return (min(members), max(members), 0.0, 0.0)
    if hierarchy is not None:
        leaves = hierarchy_leaves(hierarchy, label.strip())
        if leaves:
            try:
                numbers = [float(leaf) for leaf in leaves]
            except ValueError:
                return None
            return (min(numbers), max(numbers), 0.0, 0.0)
    if kind == "missing":
        return (-math.inf, math.inf, 0.0, 0.0)
    if parsed is not None and kind == "mask" and (span := _mask_span(parsed)) is not None:
        return (span[0], span[1], 0.0, 0.0)
    return None


def representative(text: str) -> float | None:
    """One number for one released label: a number itself, an interval its midpoint (NaN when a
    bound is infinite), ``<a`` and ``>=b`` their bound, a mask of digits the midpoint of its numbers,
    a set of numbers their mean; None for a missing value and ``*`` (suppressed); NaN when the label
    is none of these."""
    parsed = parse_label(text)
    if parsed is None:
        return math.nan
    if parsed.kind in ("missing", "all"):
        return None
    if parsed.kind == "number":
        return parsed.low
    if parsed.kind == "interval":
        if parsed.bound is not None:  # what top and bottom coding write: the bound stands for them
            return parsed.bound
        low, high = parsed.low, parsed.high
        return (low + high) / 2 if math.isfinite(low + high) else math.nan
    if parsed.kind == "mask":
        span = _mask_span(parsed)
        return math.nan if span is None else (span[0] + span[1]) / 2
    try:
        numbers = [float(member) for member in parsed.members]
    except ValueError:
        return math.nan
    return float(np.mean(numbers)) if numbers else math.nan


def categories_covered(
    label: str,
    index: Mapping[str, int],
    texts: Sequence[str],
    numbers: np.ndarray | None,
    nodes: Mapping[str, np.ndarray] | None,
) -> list[int] | None:
    """The codes of the original categories ``label`` covers as record linkage reads a category
    (:func:`covered_codes`, ``numbers`` unsorted): None for every one (a missing value too), an empty
    list for a label that covers none or cannot be read (a category the original lacks)."""
    cover = covered_codes(label, index, texts, numbers=numbers, nodes=nodes)
    if cover is None:
        return []
    return None if cover.codes is None else cover.codes.tolist()
