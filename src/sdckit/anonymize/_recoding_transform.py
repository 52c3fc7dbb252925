"""Re-applying the transformations of full-domain generalization, top and bottom coding and global
recoding (:mod:`sdckit.anonymize.transform` describes the transformation): how each learns it from a
release, applies it to other data and exports it as CSV. Their specifications name them
(``transformation=GENERALIZE``, ...)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from sdckit.anonymize.base import Transformation
from sdckit.anonymize.release import AppliedFigures, Release
from sdckit.anonymize.transform import (
    RecordedParams,
    _dropped,
    _hierarchy,
    _hierarchy_rows,
    _leaves_of,
    _missing_entry,
    _plain,
    _released_table,
    _uncovered,
    recorded_params,
)
from sdckit.errors import ConfigError, location
from sdckit.frequency import extend_keys, initial_keys
from sdckit.hierarchy import MISSING_LABEL, Hierarchy
from sdckit.labels import above_label, at_least_label, at_most_label, below_label, interval_label
from sdckit.table import Table, value_strings
from sdckit.utility.view import GeneralizationView


@dataclass(frozen=True)
class AppliedGeneralizeFigures(AppliedFigures):
    """A generalize transformation applied to new data: besides ``unknown``, ``learnt_suppressed``
    counts the records suppressed for a learnt suppressed combination."""

    learnt_suppressed: int = 0


@dataclass(frozen=True)
class AppliedTopBottomFigures(AppliedFigures):
    """A top and bottom coding applied to new data: the records whose value was coded (every number
    is covered, so ``unknown`` stays empty)."""

    changed_records: int = 0


@dataclass(frozen=True)
class AppliedRecodeFigures(AppliedFigures):
    """A global recoding applied to new data: as :class:`sdckit.anonymize.recode.RecodeFigures` (every
    value is covered, so ``unknown`` stays empty)."""

    mapping: dict[str, dict[str, str]] = field(default_factory=dict)
    changed: dict[str, int] = field(default_factory=dict)
    unused: dict[str, list[str]] = field(default_factory=dict)
    intervals: dict[str, dict[str, Any]] = field(default_factory=dict)
    missing_to: dict[str, str] = field(default_factory=dict)


# Full-domain generalization


def learn_generalize(release: Release) -> dict[str, Any]:
    """The parameters, levels, mappings, hierarchies and learnt suppressed combinations of a generalize
    release."""
    from sdckit.anonymize.recoding import SUPPRESSED, GeneralizeFigures

    if release.levels is None:
        raise ConfigError("this generalize release has no levels to re-apply")
    names = list(release.quasi_identifiers)
    attributes = {}
    category_columns = {}
    for name in names:
        hierarchy = release.hierarchies[name]
        level = int(release.levels[name])
        level_labels = np.array(hierarchy.labels[level], dtype=object)
        categories = list(hierarchy.labels[level])
        if SUPPRESSED not in categories:
            categories.append(SUPPRESSED)
        released = level_labels[hierarchy.codes[:, level]].tolist()
        attributes[name] = {
            "level": level,
            "mapping": dict(zip(hierarchy.labels[0], released, strict=True)),
            "categories": categories,
            "hierarchy": _hierarchy_rows(hierarchy),
            **_missing_entry(hierarchy),
        }
        leaves = hierarchy.leaf_codes(release.original.column(name))
        nodes = hierarchy.codes[leaves[release.suppressed_records], level]
        category_columns[name] = pl.Series(name, level_labels[nodes].tolist(), dtype=pl.String)
    suppressed = pl.DataFrame(category_columns).unique(maintain_order=True).rows()
    if isinstance(release.params, RecordedParams):
        parameters = {**release.params.recorded(), "applied": True}
    else:
        parameters = {
            "models": list(release.figures_as(GeneralizeFigures).models),
            "suppression_limit": float(release.params.suppression_limit),
            "metric": release.params.metric,
            "quasi_identifiers": names,
        }
    body = {"attributes": attributes, "suppressed": [list(row) for row in suppressed]}
    return {"parameters": parameters, **body}


def apply_generalize(
    table: Table, transformation: Mapping[str, Any], names: list[str], unknown: str
) -> Release:
    """``table`` generalized at the learnt levels, the learnt combinations suppressed."""
    from sdckit.anonymize.recoding import SUPPRESSED

    attributes = transformation["attributes"]
    n, q = table.n_records, len(names)
    hierarchies, levels, categories_of = [], [], []
    leaves = np.empty((n, q), dtype=np.int64)
    categories = np.empty((n, q), dtype=np.int64)
    penalty = np.empty((n, q), dtype=np.float64)
    problems = []
    for j, name in enumerate(names):
        spec = attributes[name]
        hierarchy = _hierarchy(name, spec["hierarchy"], spec.get("missing"))
        level = int(spec["level"])
        if not 0 <= level < hierarchy.n_levels:
            raise ConfigError(
                f"malformed transformation: level {level} of '{name}' is not a level of its hierarchy"
            )
        category_list = [str(label) for label in spec["categories"]]
        mapping = spec["mapping"]
        missing = [leaf for leaf in hierarchy.labels[0] if leaf not in mapping]
        if missing:
            raise ConfigError(
                f"malformed transformation: the mapping of '{name}' does not list '{missing[0]}'"
            )
        released = pl.Series([str(mapping[leaf]) for leaf in hierarchy.labels[0]], dtype=pl.String)
        expected = np.array(hierarchy.labels[level], dtype=object)[hierarchy.codes[:, level]]
        disagree = np.flatnonzero(released.to_numpy().astype(object) != expected)
        if disagree.size:
            row = int(disagree[0])
            raise ConfigError(
                f"malformed transformation: the mapping of '{name}' sends '{hierarchy.labels[0][row]}' to "
                f"'{released[row]}' but its hierarchy at level {level} to '{expected[row]}'"
            )
        leaf_category = released.cast(pl.Enum(category_list), strict=False)
        if leaf_category.null_count() or SUPPRESSED not in category_list:
            raise ConfigError(
                f"malformed transformation: the categories of '{name}' do not list every label of its "
                "mapping and '*'"
            )
        leaf = _leaves_of(table.column(name), hierarchy)
        covered = leaf >= 0
        if not covered.all():
            problems.append((name, ~covered, "not in its hierarchy"))
        safe = np.where(covered, leaf, 0)
        leaves[:, j] = leaf
        categories[:, j] = np.where(
            covered, leaf_category.to_physical().to_numpy().astype(np.int64)[safe], -1
        )
        penalty[:, j] = hierarchy.ncp(level)[hierarchy.codes[safe, level]]
        hierarchies.append(hierarchy)
        levels.append(level)
        categories_of.append(category_list)
    unknown_records = (leaves < 0).any(axis=1)
    if problems and unknown == "error":
        raise _uncovered(table, problems)
    known = ~unknown_records

    # The learnt suppressed combinations, matched on category codes.
    combinations = transformation.get("suppressed") or []
    coded = {}
    for j, name in enumerate(names):
        labels = pl.Series([str(row[j]) for row in combinations], dtype=pl.String)
        label_codes = labels.cast(pl.Enum(categories_of[j]), strict=False)
        if label_codes.null_count():
            raise ConfigError(
                f"malformed transformation: a suppressed combination has a label of '{name}' that is not "
                "one of its categories"
            )
        coded[f"q{j}"] = label_codes.to_physical().cast(pl.Int64)
    if combinations:
        flags = pl.DataFrame(coded).unique().with_columns(pl.lit(True).alias("suppressed"))
        records = pl.DataFrame({f"q{j}": categories[:, j] for j in range(q)})
        joined = records.join(flags, on=list(coded), how="left", maintain_order="left")
        learnt = joined.get_column("suppressed").is_not_null().to_numpy() & known
    else:
        learnt = np.zeros(n, dtype=bool)
    suppressed = learnt | unknown_records

    # Classes: dense, by first appearance of the generalized combination among the covered records.
    dense = np.full(n, -1, dtype=np.int64)
    keys, sizes = initial_keys(int(np.count_nonzero(known)))
    for j in range(q):
        keys, sizes = extend_keys(keys, sizes, categories[known, j].astype(np.int32), len(categories_of[j]))
    dense[known] = keys
    classes = np.where(suppressed, -1, dense)

    columns = []
    suppressed_cells = np.repeat(suppressed[:, None], q, axis=1)
    for j, name in enumerate(names):
        # A node of the missing value (an empty label) is released as a missing value, the Enum's
        # null, as the method releases it: the Enum lists the other categories.
        listed = [label for label in categories_of[j] if label != MISSING_LABEL]
        values = [None if label == MISSING_LABEL else label for label in categories_of[j]]
        labels = pl.Series(name, values, dtype=pl.Enum(listed))
        codes = np.where(suppressed, categories_of[j].index(SUPPRESSED), categories[:, j])
        columns.append(labels.gather(codes))
        if hierarchies[j].missing == "suppress":
            # A missing value suppressed from the start is a suppressed cell, as in the method.
            suppressed_cells[:, j] |= leaves[:, j] == hierarchies[j].missing_leaf
    penalty[suppressed] = 1.0
    view = _generalization_view(names, hierarchies, levels, leaves[known], dense[known], suppressed[known])
    return Release(
        table=_released_table(table, columns, _dropped(table, transformation)),
        original=table,
        method="generalize",
        quasi_identifiers=tuple(names),
        suppressed_records=suppressed,
        classes=classes,
        levels=dict(zip(names, levels, strict=True)),
        hierarchies=dict(zip(names, hierarchies, strict=True)),
        view=view,
        cell_penalty=penalty,
        suppressed_cells=suppressed_cells,
        params=recorded_params(transformation),
        figures=AppliedGeneralizeFigures(
            unknown={name: int(np.count_nonzero(leaves[:, j] < 0)) for j, name in enumerate(names)},
            learnt_suppressed=int(np.count_nonzero(learnt)),
        ),
    )


def _generalization_view(
    names: list[str],
    hierarchies: list[Hierarchy],
    levels: list[int],
    leaves: np.ndarray,
    classes: np.ndarray,
    suppressed: np.ndarray,
) -> GeneralizationView:
    """The distinct-combination view the utility metrics read, over the covered records."""
    keys, sizes = initial_keys(len(leaves))
    for j, hierarchy in enumerate(hierarchies):
        keys, sizes = extend_keys(keys, sizes, leaves[:, j].astype(np.int32), hierarchy.n_leaves)
    representative = np.zeros(len(sizes), dtype=np.int64)
    representative[keys] = np.arange(len(keys), dtype=np.int64)
    n_classes = int(classes.max()) + 1 if len(classes) else 0
    return GeneralizationView(
        quasi_identifiers=tuple(names),
        hierarchies=tuple(hierarchies),
        levels=tuple(levels),
        leaf_codes=leaves[representative].astype(np.int32).reshape(len(sizes), len(names)),
        counts=np.bincount(keys, minlength=len(sizes)).astype(np.float64),
        classes=classes[representative].astype(np.int32),
        n_classes=n_classes,
        suppressed=suppressed[representative],
    )


def export_generalize(transformation: Mapping[str, Any]) -> list[tuple[str, pl.DataFrame]]:
    """Every attribute's ``original,released`` rows (one per leaf of its hierarchy), and the learnt
    suppressed combinations."""
    names = list(transformation["quasi_identifiers"])
    attributes = transformation["attributes"]
    frames: list[tuple[str, pl.DataFrame]] = []
    for name in names:
        mapping = attributes[name]["mapping"]
        frame = pl.DataFrame(
            {"original": list(mapping), "released": [str(label) for label in mapping.values()]},
            schema={"original": pl.String, "released": pl.String},
        )
        frames.append((name, frame))
    rows = transformation.get("suppressed") or []
    suppressed = pl.DataFrame(
        {name: [str(row[j]) for row in rows] for j, name in enumerate(names)},
        schema=dict.fromkeys(names, pl.String),
    )
    frames.append(("\0suppressed", suppressed))
    return frames


# Top and bottom coding


def learn_top_bottom(release: Release) -> dict[str, Any]:
    """The parameters, thresholds and replacement values of a top and bottom coding release."""
    from sdckit.anonymize.top_bottom_coding import TopBottomFigures

    if isinstance(release.params, RecordedParams):
        recorded = release.params.recorded()
        changed = release.figures_as(AppliedTopBottomFigures).changed_records
        parameters = {**recorded, "changed_records": changed, "applied": True}
    else:
        figures = release.figures_as(TopBottomFigures)
        parameters = {
            "attribute": release.params.attribute,
            "bottom": release.params.bottom,
            "top": release.params.top,
            "bottom_value": figures.bottom_value,
            "top_value": figures.top_value,
            "changed_records": figures.changed_records,
        }
    bottom, top = parameters["bottom"], parameters["top"]
    spec = {
        "bottom": _plain(bottom),
        "top": _plain(top),
        "bottom_value": _plain(parameters.get("bottom_value", bottom)),
        "top_value": _plain(parameters.get("top_value", top)),
    }
    return {"parameters": parameters, "attributes": {parameters["attribute"]: spec}}


def apply_top_bottom(
    table: Table, transformation: Mapping[str, Any], names: list[str], unknown: str
) -> Release:
    """``table`` coded with the learnt thresholds (every number is covered: ``unknown`` is not used)."""
    from sdckit.anonymize.top_bottom_coding import top_bottom_release

    if len(names) != 1:
        raise ConfigError("malformed transformation: top and bottom coding codes one attribute")
    attribute = names[0]
    spec = transformation["attributes"][attribute]
    column = table.column(attribute)
    if not column.dtype.is_numeric():
        raise ConfigError(
            f"{location(table.source)}top and bottom coding needs a numeric attribute; "
            f"'{attribute}' is {column.dtype}"
        )
    bottom, top = spec["bottom"], spec["top"]
    bottom_value, top_value = spec["bottom_value"], spec["top_value"]
    return top_bottom_release(
        table,
        attribute,
        (bottom, top, bottom_value, top_value),
        recorded_params(transformation),
        lambda changed: AppliedTopBottomFigures(changed_records=changed),
    )


def export_top_bottom(transformation: Mapping[str, Any]) -> list[tuple[str, pl.DataFrame]]:
    """The ``original,released`` rows of the coded attribute: below, above and between."""
    attributes = transformation["attributes"]
    return [(name, _top_bottom_rows(attributes[name])) for name in transformation["quasi_identifiers"]]


def _number_text(value: Any) -> str:
    return str(value_strings(pl.Series([float(value)], dtype=pl.Float64))[0])


def _top_bottom_rows(spec: Mapping[str, Any]) -> pl.DataFrame:
    bottom, top = spec.get("bottom"), spec.get("top")
    original, released = [], []
    if bottom is not None:
        original.append(below_label(_number_text(bottom)))
        released.append(_number_text(spec["bottom_value"]))
    if top is not None:
        original.append(above_label(_number_text(top)))
        released.append(_number_text(spec["top_value"]))
    if bottom is not None and top is not None:
        original.append(interval_label(_number_text(bottom), _number_text(top), high_closed=True))
    elif bottom is not None:
        original.append(at_least_label(_number_text(bottom)))
    else:
        original.append(at_most_label(_number_text(top)))
    released.append("unchanged")
    return pl.DataFrame(
        {"original": original, "released": released}, schema={"original": pl.String, "released": pl.String}
    )


# Global recoding


def learn_recode(release: Release) -> dict[str, Any]:
    """The parameters and, per recoded attribute, its mapping (with the category missing values
    became, for a group with add_missing) or its intervals (cut points, closure and labels: new data
    is cut at the same points, not at points computed again from it)."""
    from sdckit.anonymize.recode import RecodeFigures

    if isinstance(release.params, RecordedParams):
        figures: Any = release.figures_as(AppliedRecodeFigures)
        parameters = {**release.params.recorded(), "applied": True}
    else:
        figures = release.figures_as(RecodeFigures)
        parameters = release.params.model_dump(mode="json", exclude_defaults=True)
        if "mapping" in parameters or release.params.mapping is not None:
            parameters = {"mapping": {name: dict(values) for name, values in figures.mapping.items()}}
    attributes: dict[str, Any] = {}
    for name, values in figures.mapping.items():
        attributes[name] = {"mapping": dict(values)}
        if name in figures.missing_to:
            attributes[name]["missing"] = figures.missing_to[name]
    for name, spec in figures.intervals.items():
        attributes[name] = {
            "intervals": {key: spec[key] for key in ("breaks", "lowest_closed", "labels", "codes")}
        }
    return {"parameters": parameters, "attributes": attributes}


def apply_recode(table: Table, transformation: Mapping[str, Any], names: list[str], unknown: str) -> Release:
    """``table`` recoded with the learnt mappings (values they do not list pass through: ``unknown`` is
    not used) and intervals (a value outside them is an error, as when they were learnt)."""
    from sdckit.anonymize._recode_intervals import Intervals, changed_by_intervals, recoded_intervals
    from sdckit.anonymize.recode import RecodeFigures, interval_figures, recode_release, recoded_column

    columns, mapping, missing_to, intervals = [], {}, {}, {}
    known: dict[str, int | None] = {}
    for name in names:
        if name not in table.data.columns:
            raise ConfigError(
                f"{location(table.source)}the transformation recodes attribute '{name}', not a column"
            )
        spec = transformation["attributes"][name]
        if "intervals" in spec:
            learnt = spec["intervals"]
            try:
                cut = Intervals(
                    tuple(float(point) for point in learnt["breaks"]),
                    bool(learnt["lowest_closed"]),
                    tuple(str(label) for label in learnt["labels"]),
                    bool(learnt.get("codes", False)),
                )
            except (KeyError, TypeError, ValueError):
                raise ConfigError(f"malformed transformation: the intervals of '{name}'") from None
            if not table.column(name).dtype.is_numeric():
                raise ConfigError(
                    f"{location(table.source)}the transformation cuts '{name}' into intervals; "
                    f"it is {table.column(name).dtype} here"
                )
            recoded, slot = recoded_intervals(table.column(name), cut, table.source or "")
            intervals[name] = interval_figures(cut, slot)
            known[name] = changed_by_intervals(cut, slot)
            columns.append(recoded)
            continue
        values = spec["mapping"]
        if not isinstance(values, Mapping):
            raise ConfigError(f"malformed transformation: the mapping of '{name}' must be a mapping")
        mapping[name] = {str(source): str(target) for source, target in values.items()}
        column = recoded_column(table.column(name), mapping[name])
        if spec.get("missing") is not None:
            missing_to[name] = str(spec["missing"])
            column = value_strings(column).fill_null(missing_to[name]).alias(name)
        columns.append(column)
    figures = RecodeFigures(mapping=mapping, intervals=intervals, missing_to=missing_to)
    release = recode_release(table, columns, recorded_params(transformation), figures, known)
    dropped = [name for name in _dropped(table, transformation) if name in release.table.data.columns]
    done = release.figures_as(RecodeFigures)
    unused = {
        name: sorted(set(values) - set(value_strings(table.column(name)).to_list()))
        for name, values in mapping.items()
    }
    return dataclasses.replace(
        release,
        table=_released_table(release.table, [], dropped),
        figures=AppliedRecodeFigures(
            mapping=done.mapping,
            changed=done.changed,
            unused=unused,
            intervals=done.intervals,
            missing_to=done.missing_to,
        ),
    )


def export_recode(transformation: Mapping[str, Any]) -> list[tuple[str, pl.DataFrame]]:
    """Every attribute's ``original,released`` rows: one per listed value (and the missing value of a
    group with add_missing), or one per interval."""
    attributes = transformation["attributes"]
    frames = []
    for name in transformation["quasi_identifiers"]:
        spec = attributes[name]
        if "intervals" in spec:
            learnt = spec["intervals"]
            from sdckit.anonymize._recode_intervals import r_labels

            original = r_labels([float(point) for point in learnt["breaks"]], bool(learnt["lowest_closed"]))
            released = [str(label) for label in learnt["labels"]]
        else:
            original = [str(v) for v in spec["mapping"]]
            released = [str(v) for v in spec["mapping"].values()]
            if spec.get("missing") is not None:
                original.append(MISSING_LABEL)
                released.append(str(spec["missing"]))
        frame = pl.DataFrame(
            {"original": original, "released": released},
            schema={"original": pl.String, "released": pl.String},
        )
        frames.append((name, frame))
    return frames


GENERALIZE = Transformation(learn=learn_generalize, apply=apply_generalize, export=export_generalize)
TOP_BOTTOM_CODING = Transformation(learn=learn_top_bottom, apply=apply_top_bottom, export=export_top_bottom)
RECODE = Transformation(learn=learn_recode, apply=apply_recode, export=export_recode)
