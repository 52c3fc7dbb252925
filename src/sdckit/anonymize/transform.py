"""Re-applying a learnt transformation to other data with the same schema.

What is shared by the methods that can: the transformation's header and format, applying and
exporting it through the method's specification (its ``transformation`` capability, a
:class:`~sdckit.anonymize.base.Transformation`), and the helpers their own code uses (hierarchies
stored as rows, uncovered values, dropped columns). Each method's part lives beside it
(:mod:`sdckit.anonymize._recoding_transform`, :mod:`sdckit.anonymize._mondrian_transform`).

Some methods release every record as a function of that record's own values and of a mapping they
learnt from the data: full-domain generalization (a level per quasi-identifier, looked up in its
hierarchy), top and bottom coding (thresholds and replacement values) and strict Mondrian (a cut tree
whose leaves, the *boxes*, each release one label per quasi-identifier). :func:`transformation_of`
describes that mapping as plain JSON-serializable data; :func:`apply_transformation` applies it to
another table (next year's survey, say) without searching again; :func:`export_mappings` writes it as
plain CSV files, one per attribute (original value → released value), for the documentation data
stewards are asked to keep.

Applied to the data it was learnt from, a transformation reproduces the release exactly: the same
frame (dtypes, Enum categories, values, suppressed cells), so that it writes the same bytes to CSV and
Parquet, and the same ``classes``, ``cell_penalty`` and ``suppressed_cells``. On other data the
privacy models are *not* re-checked or enforced: the release is the learnt mapping, and the caller
checks what it achieves (e.g. with :func:`sdckit.models.check_table`).

The transformation
------------------
A dict (``json.loads(json.dumps(t)) == t``) with the keys ``format`` (2), ``method``,
``quasi_identifiers``, ``dropped`` (columns the release dropped: identifiers), ``parameters`` (those of
the original release, as the method's ``learn`` records them from its params and figures) and
``attributes`` (one entry per quasi-identifier), plus, per method:

``"generalize"``
    ``attributes[name]``: ``level`` (the chosen level), ``mapping`` (every leaf of the hierarchy →
    its label at that level), ``categories`` (the released Enum's categories in order: the level's
    labels, then ``*``), ``hierarchy`` (its rows: a leaf, then its label at every level; used for
    the cell penalties, ``Release.hierarchies`` and ``Release.view``) and, when missing values are
    members of the hierarchy, ``missing`` (the choice as the configuration's ``missing`` key spells
    it: ``"leaf"``, ``{"under": NODE}`` or ``"suppress"``; see "Missing values" below).
    ``suppressed``: the generalized
    combinations (one label per quasi-identifier) whose records the search suppressed. Which records
    full-domain generalization suppresses depends on the sizes of the classes in the whole data, so
    it is not a per-record rule; the rule stored instead is "a record whose generalized combination
    is one of the learnt suppressed combinations is suppressed (all its quasi-identifiers ``*``)".
    It reproduces the original release exactly and suppresses nothing else on new data (a new small
    class is released as it is, and shows in the models check).
``"top-bottom-coding"``
    ``attributes[name]``: ``bottom``, ``top`` (thresholds, null when not used), ``bottom_value`` and
    ``top_value`` (what replaces a value below ``bottom`` / above ``top``). Every number is covered.
``"recode"``
    ``attributes[name]``: ``mapping`` (original value as text → released value as text). Values the
    mapping does not list pass through unchanged (as the method releases them), so every value is
    covered.
``"mondrian"`` (strict mode only)
    ``boxes`` (their number) and ``tree``, the cut tree as a list of nodes (node 0 is the whole
    domain): ``{"box": b}`` for a leaf; ``{"attribute": a, "at": m, "children": [left, right]}`` for a
    cut of a numeric attribute (left: ``x <= m``, right: ``x > m``) or of a categorical one without
    hierarchy (``m`` is a value; left: the values sorted at or before it); ``{"attribute": a, "level":
    L, "children": {label: child}}`` for a cut of a hierarchical attribute into the nodes at level ``L``
    that held records. ``attributes[name]`` has ``kind`` (``numeric``, ``ordered`` or ``hierarchy``),
    ``categories`` (the released Enum's categories; null for centroids), the domain (``minimum`` and
    ``maximum`` of a number; ``values``, the sorted distinct values, of an ordered category;
    ``hierarchy`` rows and ``missing`` choice of a hierarchical one) and ``boxes``, columns with one
    entry per box (boxes are
    numbered as the classes of the release): the region the box covers in the cut tree (numbers:
    ``low``, ``low_closed``, ``high``, ``high_closed``; ordered: ``first`` and ``last`` value of a run of
    the sorted values; hierarchy: ``level`` and ``node``, the subtree; the root is the top node, or
    ``*`` at level ``height + 1`` when the top level has several nodes), the ``released`` value (the
    generalized label, or the centroid) and the cell ``penalty`` (NCP); for generalized output also
    what the box's label covers, learnt from the box's original records: ``label_low`` and
    ``label_high`` (numbers: the label ``min-max``, or the single value), ``label_values`` (ordered:
    the set of the records' values, which need not be a run of the sorted values) or ``label_level``
    (hierarchy: the level of the label, the records' lowest common ancestor ``released``). The
    regions of a strict cut tree partition the domain of numbers and ordered values, so a new value in
    the original range lands in exactly one box; a hierarchical cut has a child only for the nodes
    that held records, so a value of the hierarchy may fall in no box next to the record's other
    values.

    A box's label is learnt from its original records (the range, lowest common ancestor or set of
    *their* values), so it need not cover every value of the box's region: 27 landing in a box of
    region ``[25, 30]`` whose records spanned 25 to 26 would be released as ``25-26``, a false value.
    A value of a generalized release must be covered by the label of its box, not only lie in its
    region: ``label_low <= x <= label_high``, ``x`` in ``label_values``, or ``x`` a leaf under the
    label node. A value that is not is uncovered (below). Every original record is covered by
    construction, so the original data is still reproduced exactly. A centroid (``output="centroid"``:
    the mean, or the most frequent value) replaces the value rather than stating it, so centroid
    releases route by region only: every value of a box's region receives its centroid.

    Format 2 added the label extents. Format 1 transformations are still read, except those of
    generalized Mondrian releases, which lack them and are refused (learn them again).

    Relaxed mode is refused: it splits records with equal values by their position, so its classes
    overlap and the class of a new record is not a function of its values.

Example (top and bottom coding)::

    {"format": 2, "method": "top-bottom-coding", "quasi_identifiers": ["income"], "dropped": [],
     "parameters": {...},
     "attributes": {"income": {"bottom": 5, "top": 15, "bottom_value": 5, "top_value": 99}}}

Missing values
--------------
When missing values are members of a hierarchy (:meth:`sdckit.hierarchy.Hierarchy.with_missing`), its
stored rows hold the missing value's row: an empty leaf, and an empty label at every level where it
stays missing (a node of the missing value, released as a missing value: the Enum's null; a box
whose label is such a node stores ``released`` null). The attribute's ``missing`` says how it was
placed, and :func:`apply_transformation` builds the hierarchy again with it: with ``"leaf"`` the row
as stored (it may come from the user's hierarchy file), with ``{"under": NODE}`` and ``"suppress"``
from the other rows, as the method did, which must give back the stored rows. A missing value of the
data then has the missing leaf (it is covered), and with ``"suppress"`` its cell is a suppressed cell,
as in the method's release. A transformation whose rows hold the missing value's row without
``missing`` (learnt before it was recorded), or with a ``missing`` that does not place it so, is
refused as malformed.

Values the transformation does not cover
----------------------------------------
A value not in the hierarchy (generalize, a hierarchical Mondrian attribute), a number outside the
original ``[minimum, maximum]`` or a text that does not read as a number (numeric Mondrian attribute),
a category not among the original values (ordered Mondrian attribute), a hierarchy value in no box,
a value outside the generalized label of its Mondrian box and a missing value (unless missing values
are members of the hierarchy) are *uncovered*. With
``unknown="error"`` they raise :class:`ConfigError` naming each attribute, up to five values and the
number of records (e.g. "attribute 'gifted': 1 value outside the label of their box: 'Yes' (7
records)"). With ``unknown="suppress"`` every record with an uncovered value is suppressed as a whole:
all its quasi-identifiers are suppressed (``*`` for generalize, as its record suppression; null for
Mondrian, whose released dtype has no ``*``), it belongs to no class (``classes`` -1), its cell
penalties are 1, and the release's figures (:class:`~sdckit.anonymize.release.AppliedFigures`)
``unknown`` counts, per attribute, the records suppressed for a value of that attribute. Only
suppressing the uncovered cell would release the record's other values in a class it does not belong
to.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
from pydantic import ConfigDict

from sdckit.anonymize.base import METHODS, MethodSpec
from sdckit.anonymize.release import Release
from sdckit.errors import ConfigError, location
from sdckit.hierarchy import MISSING_LABEL, Hierarchy
from sdckit.io import atomic_write
from sdckit.params import MethodParams, spell
from sdckit.table import Role, Schema, Table, value_strings

FORMAT = 2
# Formats apply_transformation reads. Format 2 added the extent of every generalized Mondrian label;
# format 1 transformations of generalized Mondrian releases lack it and are refused.
READABLE_FORMATS = (1, 2)
UNKNOWN = ("error", "suppress")
_SHOWN = 5
# Why a release of a method without its own reason (``MethodSpec.not_reapplicable``) is refused.
_ONLY = "only full-domain generalization, top and bottom coding, global recoding and strict Mondrian can be"


# ------------------------------------------------------------------------------------------------
# Describing a release's transformation


def transformation_of(release: Release) -> dict[str, Any]:
    """The learnt transformation of ``release``, as JSON-serializable data.

    Parameters
    ----------
    release
        A release of :func:`~sdckit.anonymize.recoding.full_domain_generalization`,
        :func:`~sdckit.anonymize.recoding.top_bottom_coding` or strict-mode
        :func:`~sdckit.anonymize.mondrian.mondrian`.

    Returns
    -------
    dict
        ``{"format": 2, "method": ..., "quasi_identifiers": [...], "dropped": [...], "parameters":
        {...}, "attributes": {...}}`` plus ``suppressed`` (generalize) or ``boxes`` and ``tree``
        (Mondrian); see the module documentation for every key. Only lists, dicts, strings, numbers,
        booleans and nulls, so ``json.loads(json.dumps(t)) == t``.

    Raises
    ------
    ConfigError
        For releases of methods whose output for a record depends on other records (local and
        targeted suppression, slicing, quasi-sensitive anonymization, relaxed Mondrian), naming the
        method and why.
    """
    method = release.method
    spec = _spec(method)
    if spec is None or spec.transformation is None:
        reason = spec.not_reapplicable if spec is not None and spec.not_reapplicable else _ONLY
        raise ConfigError(f"a {method} release cannot be re-applied to other data: {reason}")
    body = dict(spec.transformation.learn(release))
    parameters = body.pop("parameters")  # the method's learn says what the header records
    kept = set(release.table.data.columns)
    header = {
        "format": FORMAT,
        "method": method,
        "quasi_identifiers": list(release.quasi_identifiers),
        "dropped": [name for name in release.original.data.columns if name not in kept],
        "parameters": _plain(parameters),
    }
    return {**header, **body}


class RecordedParams(MethodParams):
    """The ``params`` of a release made by applying a transformation to new data
    (:func:`apply_transformation`): the parameters the transformation records of the release it was
    learnt from (its ``"parameters"``), kept as recorded, entry for entry (they differ per method, and
    a transformation written by another version may record other entries).
    ``to_recipe()``/:meth:`recorded` give them back in their order. Learning the transformation of
    such a release again records them with ``"applied": True``."""

    model_config = ConfigDict(frozen=True, extra="allow")

    def recorded(self) -> dict[str, Any]:
        """The recorded parameters, in their order."""
        return dict(self.model_extra or {})


def recorded_params(transformation: Mapping[str, Any]) -> RecordedParams:
    """The ``params`` of the release ``transformation`` makes of new data (see :class:`RecordedParams`)."""
    recorded = transformation.get("parameters") or {}
    if not isinstance(recorded, Mapping):
        raise ConfigError(f"malformed transformation: 'parameters' must be a mapping, got {recorded!r}")
    return RecordedParams.parse({str(key): value for key, value in recorded.items()})


def _spec(method: object) -> MethodSpec | None:
    """The registered method called ``method``, or None (imports only its module)."""
    return METHODS.get(method) if isinstance(method, str) and method in METHODS else None


def _reapplicable() -> list[str]:
    """The methods whose transformation can be applied (every method module imported)."""
    return [spec.name for spec in METHODS if spec.transformation is not None]


def _hierarchy_rows(hierarchy: Hierarchy | None) -> list[list[str]]:
    if hierarchy is None:  # pragma: no cover - a hierarchy dimension always has one
        raise ConfigError("a hierarchical attribute has no hierarchy")
    columns = [
        np.array(hierarchy.labels[level], dtype=object)[hierarchy.codes[:, level]].tolist()
        for level in range(hierarchy.n_levels)
    ]
    return [list(row) for row in zip(*columns, strict=True)]


def _number(value: Any) -> int | float:
    """A number as JSON writes it plainly: whole floats as integers (exact below 2**53)."""
    number = float(value)
    if number.is_integer() and abs(number) < 2**53:
        return int(number)
    return number


def _plain(value: Any) -> Any:
    """``value`` with tuples as lists and numpy scalars and arrays as Python values."""
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple | np.ndarray):
        return [_plain(item) for item in value]
    if isinstance(value, np.generic):
        return _plain(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


# ------------------------------------------------------------------------------------------------
# Applying a transformation


def apply_transformation(
    table: Table, transformation: Mapping[str, Any], *, unknown: str = "error"
) -> Release:
    """Apply a learnt transformation to ``table``, a table with the schema it was learnt on.

    Parameters
    ----------
    table
        The data; its quasi-identifiers must be columns (other columns pass through unchanged, and
        identifiers, those of ``table``'s schema and those the original release dropped, are dropped
        as the methods do).
    transformation
        From :func:`transformation_of`, possibly after a JSON round trip (format 2, or format 1 except
        for generalized Mondrian).
    unknown
        ``"error"``: values the transformation does not cover raise :class:`ConfigError`;
        ``"suppress"``: the records holding them are suppressed and counted in the figures'
        ``unknown`` (see the module documentation).

    Returns
    -------
    Release
        As the method would have made it: same dtypes, labels, suppressed cells, ``classes`` numbered
        as the method numbers them (generalize: by first appearance of the generalized combination,
        suppressed ones included; Mondrian: by first record of each box), ``cell_penalty`` and
        ``suppressed_cells``. Its ``params`` are a :class:`RecordedParams`: the parameters the
        transformation records, as recorded (not the method's parameters object, which a
        transformation does not hold: it records models by name, and figures such as
        ``changed_records``); its ``figures`` an
        :class:`~sdckit.anonymize.release.AppliedFigures` (the method's subclass), whose ``unknown``
        counts suppressed records per attribute. Generalize also fills ``levels``, ``hierarchies``
        and ``view`` (over the records with covered values, counted without sampling weights);
        Mondrian's figures ``record_boxes``, the box of every record (-1 when suppressed).

    Raises
    ------
    ConfigError
        For a malformed transformation, a quasi-identifier that is not a column, or (with
        ``unknown="error"``) uncovered values, naming the attribute and the values.
    """
    if unknown not in UNKNOWN:
        raise ConfigError(f"unknown must be one of {', '.join(UNKNOWN)}, got {unknown!r}")
    if not isinstance(transformation, Mapping):
        raise ConfigError(f"a transformation must be a mapping, got {type(transformation).__name__}")
    _check_format(transformation)
    method = transformation.get("method")
    spec = _spec(method)
    if spec is None or spec.transformation is None:
        raise ConfigError(
            f"cannot apply a transformation of method {method!r} (known: {', '.join(_reapplicable())})"
        )
    names = list(_field(transformation, "quasi_identifiers", list))
    attributes = _field(transformation, "attributes", Mapping)
    for name in names:
        if name not in attributes:
            raise ConfigError(
                f"malformed transformation: quasi-identifier '{name}' has no entry in attributes"
            )
        if name not in table.data.columns:
            raise ConfigError(
                f"{location(table.source)}quasi-identifier '{name}' of the transformation is not a column "
                f"of the data (columns: {', '.join(table.data.columns)})"
            )
    try:
        return spec.transformation.apply(table, transformation, names, unknown)
    except (KeyError, TypeError, ValueError, IndexError) as error:
        raise ConfigError(f"malformed {method} transformation: {type(error).__name__}: {error}") from None


def _check_format(transformation: Mapping[str, Any]) -> None:
    """Refuse formats this sdckit does not read, and format 1 transformations of generalized Mondrian
    releases (they do not record what each box's labels cover)."""
    version = transformation.get("format")
    if isinstance(version, bool) or version not in READABLE_FORMATS:
        raise ConfigError(
            f"unsupported transformation format {version!r} "
            f"(this sdckit reads {', '.join(str(v) for v in READABLE_FORMATS)})"
        )
    if version != 1 or transformation.get("method") != "mondrian":
        return
    attributes = transformation.get("attributes")
    if isinstance(attributes, Mapping) and any(
        isinstance(spec, Mapping) and spec.get("categories") is not None for spec in attributes.values()
    ):
        raise ConfigError(
            "this is a format 1 transformation of a generalized mondrian release: it does not record what "
            "each box's labels cover, so it would release new values under labels that do not cover "
            f"them; learn it again with this sdckit (format {FORMAT}): run mondrian again "
            f"and keep its {spell('summary')}"
        )


def _field(mapping: Mapping[str, Any], key: str, kind: type) -> Any:
    value = mapping.get(key)
    if not isinstance(value, kind):
        raise ConfigError(f"malformed transformation: '{key}' must be a {kind.__name__}, got {value!r}")
    return value


def _dropped(table: Table, transformation: Mapping[str, Any]) -> list[str]:
    """The columns a generalize or Mondrian release drops: the stored ones and ``table``'s identifiers."""
    stored = set(transformation.get("dropped") or [])
    identifiers = {a.name for a in table.schema.with_role(Role.IDENTIFIER)}
    return [name for name in table.data.columns if name in stored or name in identifiers]


def _released_table(table: Table, columns: list[pl.Series], dropped: list[str]) -> Table:
    released = table.data.with_columns(columns).drop(dropped)
    gone = set(dropped)
    schema = Schema(tuple(a for a in table.schema.attributes if a.name not in gone))
    return Table(released, schema, source=table.source)


def _uncovered(table: Table, problems: list[tuple[str, np.ndarray, str]]) -> ConfigError:
    """One error naming every attribute with uncovered values: up to five values and the records."""
    parts = []
    for name, mask, what in problems:
        column = table.column(name).filter(pl.Series(mask))
        present = column.drop_nulls()
        if present.dtype.is_numeric() or present.dtype.is_temporal():
            shown = value_strings(present.unique().sort()).to_list()
        else:
            shown = value_strings(present).unique().sort().to_list()
        items = [f"'{value}'" for value in shown]
        if column.null_count():
            items.append("missing")
        count = len(items)
        listing = ", ".join(items[:_SHOWN]) + (", …" if count > _SHOWN else "")
        records = int(np.count_nonzero(mask))
        parts.append(
            f"attribute '{name}': {count} value{'s' if count != 1 else ''} {what}: {listing} "
            f"({records} record{'s' if records != 1 else ''})"
        )
    return ConfigError(
        f"{location(table.source)}the learnt transformation does not cover every value: "
        + "; ".join(parts)
        + "; apply with unknown='suppress' to suppress those records instead"
    )


def _missing_entry(hierarchy: Hierarchy | None) -> dict[str, Any]:
    """``{"missing": choice}`` when missing values are members of ``hierarchy``, the choice spelt as
    the configuration's ``missing`` key (``"leaf"``, ``{"under": NODE}``, ``"suppress"``); else
    nothing."""
    if hierarchy is None or hierarchy.missing is None:
        return {}
    if hierarchy.missing != "under":
        return {"missing": hierarchy.missing}
    # The node is the missing leaf's lowest ancestor that is not a node of the missing value.
    leaf = hierarchy.missing_leaf
    assert leaf is not None
    node = next(
        hierarchy.labels[level][hierarchy.codes[leaf, level]]
        for level in range(1, hierarchy.n_levels)
        if hierarchy.labels[level][hierarchy.codes[leaf, level]] != MISSING_LABEL
    )
    return {"missing": {"under": node}}


def _hierarchy(name: str, rows: Sequence[Sequence[str]], missing: Any = None) -> Hierarchy:
    """The hierarchy stored as rows (a leaf, then its label at every level), with missing values
    members of it as ``missing`` says (a choice of the configuration's ``missing`` key, or None).

    The rows of such a hierarchy hold the missing value's own row: an empty leaf, and an empty label
    at every level where it stays missing. With ``"leaf"`` that row is the missing value's leaf as
    it stands (it may come from the user's hierarchy file); with ``{"under": NODE}`` and
    ``"suppress"`` the hierarchy is built again from the other rows as the method built it, and must
    give back the stored rows."""
    text_rows = [[str(label) for label in row] for row in rows]
    if missing is None:
        if any(row and row[0] == MISSING_LABEL for row in text_rows):
            raise ConfigError(
                f"malformed transformation: the hierarchy of '{name}' has a row for the missing value "
                "but the transformation does not say how missing values are members of it (its "
                "'missing' key); learn the transformation again with this sdckit"
            )
        return Hierarchy.from_rows(name, text_rows, source="transformation")
    if missing == "leaf":
        stored = Hierarchy.from_rows(name, text_rows, source="transformation", missing_values=())
        if stored.missing_leaf is None and MISSING_LABEL not in stored.labels[0]:
            raise ConfigError(
                f"malformed transformation: missing of '{name}' is 'leaf' but its hierarchy has no row "
                "for the missing value"
            )
        return stored.with_missing("leaf")
    if not (missing == "suppress" or (isinstance(missing, Mapping) and set(missing) == {"under"})):
        raise ConfigError(
            f"malformed transformation: missing of '{name}' must be 'leaf', 'suppress' or "
            f"{{'under': NODE}}, got {missing!r}"
        )
    values = [row for row in text_rows if row and row[0] != MISSING_LABEL]
    rebuilt = Hierarchy.from_rows(name, values, source="transformation").with_missing(missing)
    if _hierarchy_rows(rebuilt) != text_rows:
        raise ConfigError(
            f"malformed transformation: the hierarchy of '{name}' does not place the missing value as "
            f"its missing {missing!r} does"
        )
    return rebuilt


def _leaves_of(column: pl.Series, hierarchy: Hierarchy) -> np.ndarray:
    """The leaf of every record, matched as text as :meth:`Hierarchy.leaf_codes` does (-1: uncovered).
    A missing value has the missing leaf when missing values are members of ``hierarchy``."""
    coded = value_strings(column).cast(pl.Enum(list(hierarchy.labels[0])), strict=False)
    leaves = np.array(coded.to_physical().cast(pl.Int64).fill_null(-1).to_numpy(), dtype=np.int64)
    if hierarchy.missing_leaf is not None:
        leaves[column.is_null().to_numpy()] = hierarchy.missing_leaf
    return leaves


# ------------------------------------------------------------------------------------------------
# Exporting the mappings as CSV


def export_mappings(transformation: Mapping[str, Any], directory: str | Path) -> list[Path]:
    """Write the learnt mapping as plain CSV files, one per attribute, into ``directory``.

    Every file is written atomically (:func:`sdckit.io.atomic_write`); ``directory`` is created if
    needed. A file is named after its attribute (characters other than letters, digits, ``.``, ``_``
    and ``-`` become ``_``; a clash with another file gets ``_2``, ``_3``, ...). All fields are text.

    * generalize: ``ATTRIBUTE.csv`` with ``original,released``, one row per leaf of the hierarchy, and
      ``suppressed.csv`` with one column per quasi-identifier and one row per learnt suppressed
      generalized combination (records with it are released as ``*``).
    * top and bottom coding: ``ATTRIBUTE.csv`` with ``original,released``: ``<bottom`` →
      ``bottom_value``, ``>top`` → ``top_value``, and the range in between → ``unchanged``.
    * global recoding: ``ATTRIBUTE.csv`` with ``original,released``, one row per listed value (other
      values are released unchanged).
    * Mondrian: ``ATTRIBUTE.csv`` with ``box,original,released`` (a value is released differently in
      different boxes): per box, the original values its generalized label covers, so that every row
      is a true statement: the label's interval (numbers, as ``[low, high]``, or the single value),
      every value of its set (ordered categories) or every leaf under the label node (hierarchies).
      A value of the box's region outside its label is uncovered (not released), so it is not
      listed. For centroid output, the whole region of the box (numbers as ``[low, high]`` with ``(``
      for an open end, every value of its run, every leaf of its subtree), all replaced by the
      centroid. And ``boxes.csv``: ``box`` and the region of every box on every quasi-identifier
      (interval, ``first .. last`` run of sorted values, or hierarchy node), which routes records to
      boxes.

    Returns
    -------
    list of Path
        The files written, in the order above.
    """
    _check_format(transformation)
    method = transformation.get("method")
    spec = _spec(method)
    if spec is None or spec.transformation is None:
        raise ConfigError(f"cannot export a transformation of method {method!r}")
    names = list(transformation["quasi_identifiers"])
    frames = spec.transformation.export(transformation)
    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    file_names = _file_names(names, [key[1:] for key, _ in frames if key.startswith("\0")])
    written = []
    for key, frame in frames:
        path = target / f"{file_names[key]}.csv"
        with atomic_write(path) as temporary:
            frame.write_csv(temporary)
        written.append(path)
    return written


def _file_names(names: list[str], reserved: list[str]) -> dict[str, str]:
    """File name (without .csv) of every attribute, and of every extra file under its name prefixed
    with a NUL character: safe characters only, distinct ignoring case; extra files keep their names."""
    used: set[str] = set()
    result = {}
    for key in [*("\0" + name for name in reserved), *names]:
        base = re.sub(r"[^A-Za-z0-9._-]+", "_", key.lstrip("\0")).strip("._") or "attribute"
        candidate, suffix = base, 2
        while candidate.lower() in used:
            candidate, suffix = f"{base}_{suffix}", suffix + 1
        used.add(candidate.lower())
        result[key] = candidate
    return result


__all__ = ["FORMAT", "UNKNOWN", "apply_transformation", "export_mappings", "transformation_of"]
