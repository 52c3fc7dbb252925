"""What a released value stands for: the original values it *covers*, as an adversary reads it.

An adversary who knows a person's true values matches every released record whose values cover
them: ``38-40`` and ``35-44`` both cover 39, ``{Female,Male}`` covers Male, a hierarchy node covers
its leaves, ``*`` covers every value (a missing one too). This module reads the released values of
one attribute (:func:`attribute_cover`) and the counting seam counts with them
(:func:`sdckit.frequency.coverage_pattern_sizes`, :func:`coverage_counts`).

A released label is read by the one grammar of :mod:`sdckit.labels` (:func:`sdckit.labels.covered_codes`),
in this order, as:

1. an original value, spelled as a configuration spells it (:func:`sdckit.table.value_strings`):
   it covers that value only (so a release that changes nothing is measured as the original);
2. ``*``: every value, a missing one included;
3. a node of the attribute's hierarchy (any level above the leaves): the values of its leaves
   (the leaf ``null_label``, if given, stands for a missing original value);
4. ``{a,b,...}``: the listed original values (Mondrian's value sets);
5. for a numeric attribute, a number, ``low-high`` (Mondrian's intervals), ``[a, b)`` and the other
   intervals, ``<a``, ``>=b`` (interval hierarchies): the original values inside;
6. a masked code ``47***``: the original values of its length that start with ``47``;
7. the empty text: a missing value.

A missing released value covers every value under the ``wildcard`` treatment of nulls (sdcMicro's
convention; a missing original value is then covered by every released value) and only a missing
value under ``category``; so does the leaf ``null_label``, if given (a hierarchy's stand-in for a
missing value). Anything else (a centroid, a perturbed number, a label of another
hierarchy) is an :class:`~sdckit.errors.InputError` naming the attribute and the label: coverage
assumes a *truthful* release, whose every value covers the original value it replaces, so a number
that is no original value and a set holding one are refused too.

Original values are numbered by *slot*: 0 for a missing value, ``1 + code`` for the value of code
``code`` of :func:`sdckit.frequency.encode_column` (sorted distinct values). The cover of an
attribute is a CSR list: for every slot, the ids of the released labels that cover it, ascending.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from sdckit.errors import ConfigError, InputError
from sdckit.frequency import (
    Encoding,
    check_missing,
    check_weights,
    coverage_pattern_sizes,
    encode,
    encode_column,
)
from sdckit.hierarchy import Hierarchy
from sdckit.labels import covered_codes, node_codes
from sdckit.table import value_strings


@dataclass(frozen=True)
class AttributeCover:
    """The released values of one attribute and the original values each covers.

    ``target_slots`` (int32, one per original record): the slot of its value (0 missing);
    ``released_labels`` (int32, one per released record): the id of its label; ``labels`` the text
    of every label id (None: a missing value); ``pointer``/``covering``: for slot s, the label ids
    ``covering[pointer[s]:pointer[s+1]]`` (ascending) cover it. ``categories`` are the original
    values in slot order (slot 1 first).
    """

    name: str
    target_slots: np.ndarray
    released_labels: np.ndarray
    labels: tuple[str | None, ...]
    pointer: np.ndarray
    covering: np.ndarray
    categories: pl.Series

    @property
    def n_slots(self) -> int:
        return len(self.pointer) - 1

    def covered_slots(self) -> list[np.ndarray]:
        """For every label id, the slots it covers (ascending)."""
        slot_of = np.repeat(np.arange(self.n_slots, dtype=np.int64), np.diff(self.pointer))
        order = np.argsort(self.covering, kind="stable")
        bounds = np.searchsorted(self.covering[order], np.arange(len(self.labels) + 1))
        return [slot_of[order[bounds[i] : bounds[i + 1]]] for i in range(len(self.labels))]

    def mean_cover(self) -> float:
        """The mean number of labels covering a slot: how wide the labels are (orders the join)."""
        return float(len(self.covering)) / max(self.n_slots, 1)


def attribute_cover(
    name: str,
    target: pl.Series,
    released: pl.Series,
    *,
    hierarchy: Hierarchy | None = None,
    missing: str = "wildcard",
    null_label: str | None = None,
    where: str = "",
    encoded: tuple[tuple, tuple] | None = None,
) -> AttributeCover:
    """Read the released values of attribute ``name`` against its original values ``target``.

    ``hierarchy`` gives the nodes a label may be; ``null_label`` the leaf text that stands for a
    missing original value (as :data:`sdckit.experiments.targeted_suppression.MISSING_LABEL`);
    ``where`` prefixes messages (the release's file); ``encoded`` may give both columns'
    :func:`sdckit.frequency.encode_column` results. Raises :class:`InputError` for a label that is
    none of the readings of the module docstring.
    """
    check_missing(missing)
    encoded_target, encoded_release = encoded or (encode_column(target), encode_column(released))
    codes, cardinality, _, categories = encoded_target
    target_slots = (codes + 1).astype(np.int32)
    n_slots = cardinality + 1
    texts = value_strings(categories).to_list() if cardinality else []
    slot_of_text = {text: slot + 1 for slot, text in enumerate(texts)}
    numeric = target.dtype.is_numeric()
    values = categories.cast(pl.Float64).to_numpy() if numeric else None

    label_codes, n_labels, released_missing, label_values = encoded_release
    label_texts = value_strings(label_values).to_list() if n_labels else []
    nodes = None
    if hierarchy is not None:
        leaf_slot = np.array(
            [0 if leaf == null_label else slot_of_text.get(leaf, -1) for leaf in hierarchy.labels[0]],
            dtype=np.int64,
        )
        nodes = node_codes(hierarchy, leaf_slot)
    everything = np.arange(n_slots, dtype=np.int64)
    # Slot texts: slot 0 (a missing value) is spelled by no label.
    slot_texts = ["", *texts]
    covers: list[np.ndarray] = []
    for label in label_texts:
        covers.append(
            _null_cover(everything, missing)
            if label == null_label and label not in slot_of_text
            else _read_label(label, slot_of_text, slot_texts, nodes, values, everything, missing, name, where)
        )
    labels: list[str | None] = list(label_texts)
    released_labels = label_codes.astype(np.int32)
    if released_missing:
        released_labels = np.where(label_codes < 0, n_labels, label_codes).astype(np.int32)
        labels.append(None)
        covers.append(_null_cover(everything, missing))
    if missing == "wildcard":
        # A missing original value is unknown to the adversary: every released value covers it.
        covers = [np.union1d(cover, [0]) for cover in covers]
    slot_list = np.concatenate(covers) if covers else np.zeros(0, dtype=np.int64)
    label_list = np.repeat(np.arange(len(covers), dtype=np.int32), [len(c) for c in covers])
    order = np.lexsort((label_list, slot_list))
    pointer = np.zeros(n_slots + 1, dtype=np.int64)
    pointer[1:] = np.cumsum(np.bincount(slot_list, minlength=n_slots))
    return AttributeCover(
        name=name,
        target_slots=np.ascontiguousarray(target_slots),
        released_labels=np.ascontiguousarray(released_labels),
        labels=tuple(labels),
        pointer=pointer,
        covering=np.ascontiguousarray(label_list[order]),
        categories=categories,
    )


def _null_cover(everything: np.ndarray, missing: str) -> np.ndarray:
    """What a missing released value covers: every value (wildcard) or a missing one (category)."""
    return everything if missing == "wildcard" else np.zeros(1, dtype=np.int64)


def _read_label(
    label: str,
    slot_of_text: Mapping[str, int],
    slot_texts: Sequence[str],
    nodes: Mapping[str, np.ndarray] | None,
    values: np.ndarray | None,
    everything: np.ndarray,
    missing: str,
    name: str,
    where: str,
) -> np.ndarray:
    """The slots one released label covers (see the module docstring for the order of readings)."""
    # The numbers of the slots, slot 0 (a missing value) below every number so that no interval holds it.
    numbers = None if values is None else np.concatenate(([-np.inf], values))
    cover = covered_codes(label, slot_of_text, slot_texts, numbers=numbers, ascending=True, nodes=nodes)
    if cover is not None and cover.reading == "missing":
        return _null_cover(everything, missing)
    if cover is not None and cover.codes is None:
        return everything
    if cover is not None and cover.reading == "set" and cover.unknown:
        raise InputError(
            f"{where}release column '{name}': label '{label}' is a set holding '{cover.unknown[0]}', "
            "which is not a value of the original data"
        )
    if cover is not None:
        codes = cover.codes
        assert codes is not None  # a cover of every value returned above
        slots = codes[codes > 0] if cover.reading in ("number", "interval", "mask") else codes
        # A number that is no original value is a perturbed value or a centroid, not a generalization.
        if cover.reading != "number" or len(slots):
            return slots
    readings = "a value of the original data, '*', "
    readings += "a node of its hierarchy, " if nodes else "a node of a hierarchy (none is configured), "
    readings += "a set '{a,b}' of values, "
    if values is not None:
        readings += "an interval ('low-high', '[a, b)', '<a', '>=b'), "
    readings += "nor a masked code '47***'"
    raise InputError(f"{where}release column '{name}': label '{label}' cannot be read: it is not {readings}")


def _column_of(encoding: Encoding, j: int) -> tuple[np.ndarray, int, bool, pl.Series]:
    """Column ``j`` of an :class:`~sdckit.frequency.Encoding` as :func:`encode_column` gives it."""
    return (encoding.codes[j], encoding.cardinalities[j], encoding.has_missing[j], encoding.categories[j])


def attribute_covers(
    original: pl.DataFrame,
    released: pl.DataFrame,
    attributes: Sequence[str],
    *,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    missing: str = "wildcard",
    null_label: str | None = None,
    where: str = "",
) -> list[AttributeCover]:
    """:func:`attribute_cover` of every attribute; the release must hold the original's records in
    the same order (every sdckit method keeps them) and every attribute as a column."""
    hierarchies = hierarchies or {}
    for attribute in attributes:
        for frame, what in ((original, "original"), (released, "release")):
            if attribute not in frame.columns:
                raise ConfigError(f"{where}attribute '{attribute}' is not a column of the {what}")
    # Each side encoded in one call: polars codes the columns in parallel.
    targets, releases = encode(original, list(attributes)), encode(released, list(attributes))
    return [
        attribute_cover(
            name,
            original.get_column(name),
            released.get_column(name),
            hierarchy=hierarchies.get(name),
            missing=missing,
            null_label=null_label,
            where=where,
            encoded=(_column_of(targets, j), _column_of(releases, j)),
        )
        for j, name in enumerate(attributes)
    ]


def coverage_counts(
    original: pl.DataFrame,
    released: pl.DataFrame,
    attributes: Sequence[str],
    *,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    missing: str = "wildcard",
    weights: np.ndarray | None = None,
    null_label: str | None = None,
    where: str = "",
) -> np.ndarray:
    """For every original record, the number of released records whose values cover its values on
    ``attributes`` (with ``weights``, one per released record: the sum of their weights).

    Exact; the work is on the distinct original and released patterns
    (:func:`sdckit.frequency.coverage_pattern_sizes`). The empty attribute set gives the total.
    """
    covers = attribute_covers(
        original,
        released,
        attributes,
        hierarchies=hierarchies,
        missing=missing,
        null_label=null_label,
        where=where,
    )
    weights = check_weights(weights, released.height, "weights of the released records")
    sizes = np.ones(released.height) if weights is None else weights
    return counts_of_covers(covers, original.height, sizes)[:, 0]


def counts_of_covers(covers: Sequence[AttributeCover], n_targets: int, sizes: np.ndarray) -> np.ndarray:
    """Per target record, the sums (n_targets x m) of ``sizes`` (released records x m, or one column)
    over the released records covering it on every attribute of ``covers``."""
    sizes = np.asarray(sizes, dtype=np.float64)
    matrix = sizes.reshape(len(sizes), 1) if sizes.ndim == 1 else sizes
    targets = (
        np.stack([cover.target_slots for cover in covers], axis=1)
        if covers
        else np.zeros((n_targets, 0), dtype=np.int32)
    )
    released = (
        np.stack([cover.released_labels for cover in covers], axis=1)
        if covers
        else np.zeros((len(matrix), 0), dtype=np.int32)
    )
    return coverage_pattern_sizes(
        targets,
        released,
        matrix,
        [(cover.pointer, cover.covering) for cover in covers],
    )
