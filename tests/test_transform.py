"""Re-applying learnt transformations (sdckit.anonymize.transform).

* Exact reproduction: applied to the data it was learnt on, the transformation of a full-domain
  generalization (with records suppressed), of top and bottom coding and of a strict Mondrian
  partition (numeric, hierarchical and ordered quasi-identifiers; generalized and centroid output)
  gives the same released frame, bit for bit (``frame.equals`` and the same CSV and Parquet bytes),
  the same classes, cell penalties and suppressed cells; also after a JSON round trip.
* New data: a value the transformation does not cover raises naming the attribute and the value;
  ``unknown="suppress"`` suppresses those records and counts them. A value inside a Mondrian box's
  region but outside its generalized label (learnt from the box's original records) is uncovered:
  a category the box's records never held, a number outside their range, a leaf outside their lowest
  common ancestor; centroid releases route by region only.
* Transformation formats: format 1 is read except for generalized Mondrian (no label extents).
* The CSV export on small cases checked by hand.
* Refusals: methods whose release of a record depends on other records, relaxed Mondrian.
* Random small tables (hypothesis): strict Mondrian re-applied to its data reproduces the release, and
  re-applied to the records in another order releases every record as before; re-applied to random
  new data, every released generalized cell covers the record's true value (read from the label's
  text), and a record is suppressed exactly when a value is outside its box's region or label.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.anonymize._mondrian_transform import MondrianAppliedFigures
from sdckit.anonymize._recoding_transform import AppliedGeneralizeFigures, AppliedTopBottomFigures
from sdckit.anonymize.local_suppression import local_suppression
from sdckit.anonymize.mondrian import MondrianFigures, mondrian
from sdckit.anonymize.recoding import full_domain_generalization, release_metrics
from sdckit.anonymize.release import Release
from sdckit.anonymize.top_bottom_coding import top_bottom_coding
from sdckit.anonymize.transform import (
    RecordedParams,
    apply_transformation,
    export_mappings,
    transformation_of,
)
from sdckit.errors import ConfigError
from sdckit.hierarchy import Hierarchy
from sdckit.io import write_table
from sdckit.models import KAnonymity
from sdckit.table import Attribute, Kind, Role, Schema, Table

# ------------------------------------------------------------------------------------------------
# Fixtures

ZIP = Hierarchy.from_rows("zip", [["476", "47*", "*"], ["479", "47*", "*"], ["480", "48*", "*"]])
AGE = Hierarchy.from_rows(
    "age",
    [["20", "[20,30[", "*"], ["25", "[20,30[", "*"], ["30", "[30,40[", "*"], ["35", "[30,40[", "*"]],
)
JOB = Hierarchy.from_rows(
    "job",
    [["a1", "A", "*"], ["a2", "A", "*"], ["b1", "B", "*"], ["b2", "B", "*"], ["c1", "C", "*"]],
)


def generalize_table() -> Table:
    """Ten records; the lone (480, 35) and (480, 20) suppressed (a group of two, 2-anonymous as the
    classes must be: issue 36) is cheaper than generalizing zip or age."""
    frame = pl.DataFrame(
        {
            "id": list(range(10)),
            "zip": ["476", "476", "479", "479", "476", "479", "476", "479", "480", "480"],
            "age": ["20", "25", "30", "35", "20", "30", "25", "35", "35", "20"],
            "d": list("abcdefghij"),
        }
    )
    schema = Schema(
        (
            Attribute("id", role=Role.IDENTIFIER),
            Attribute("zip", role=Role.QUASI_IDENTIFIER, hierarchy=ZIP),
            Attribute("age", role=Role.QUASI_IDENTIFIER, hierarchy=AGE),
            Attribute("d", role=Role.SENSITIVE),
        )
    )
    return Table(frame, schema)


def generalize_release() -> Release:
    return full_domain_generalization(generalize_table(), [KAnonymity(2)], suppression_limit=0.2)


def mondrian_table() -> Table:
    frame = pl.DataFrame(
        {
            "id": [f"p{i}" for i in range(12)],
            "age": [25, 25, 26, 27, 27, 28, 29, 30, 31, 33, 34, 40],
            "income": [1.5, 2.0, 2.25, 3.0, 1.0, 4.5, 4.5, 5.0, 6.0, 7.5, 2.0, 3.0],
            "job": ["a1", "a2", "a1", "b1", "b2", "b1", "a2", "b2", "a1", "b1", "a2", "b2"],
            "colour": [
                "red",
                "blue",
                "red",
                "green",
                "blue",
                "red",
                "green",
                "blue",
                "red",
                "blue",
                "red",
                "green",
            ],
            "d": list("abcdefghijkl"),
        }
    )
    schema = Schema(
        (
            Attribute("id", role=Role.IDENTIFIER),
            Attribute("age", role=Role.QUASI_IDENTIFIER, kind=Kind.NUMERIC),
            Attribute("income", role=Role.QUASI_IDENTIFIER, kind=Kind.NUMERIC),
            Attribute("job", role=Role.QUASI_IDENTIFIER, hierarchy=JOB),
            Attribute("colour", role=Role.QUASI_IDENTIFIER),
            Attribute("d", role=Role.SENSITIVE),
        )
    )
    return Table(frame, schema)


def mondrian_release(output: str = "generalized", k: int = 2) -> Release:
    return mondrian(mondrian_table(), [KAnonymity(k)], output=output)


def round_trip(transformation: dict) -> dict:
    text = json.dumps(transformation)
    restored = json.loads(text)
    assert restored == transformation
    return restored


def assert_same_release(applied: Release, release: Release, tmp_path: Path) -> None:
    assert applied.table.data.equals(release.table.data)
    assert applied.table.data.schema == release.table.data.schema
    assert applied.table.schema.names == release.table.schema.names
    for suffix in ("csv", "parquet"):
        write_table(release.table, tmp_path / f"release.{suffix}")
        write_table(applied.table, tmp_path / f"applied.{suffix}")
        assert (tmp_path / f"release.{suffix}").read_bytes() == (tmp_path / f"applied.{suffix}").read_bytes()
    assert applied.method == release.method
    assert applied.quasi_identifiers == release.quasi_identifiers
    assert np.array_equal(applied.classes, release.classes)
    assert np.array_equal(applied.suppressed_records, release.suppressed_records)
    for name in ("cell_penalty", "suppressed_cells"):
        mine, theirs = getattr(applied, name), getattr(release, name)
        assert (mine is None) == (theirs is None)
        if theirs is not None:
            assert np.array_equal(mine, theirs)


# ------------------------------------------------------------------------------------------------
# Exact reproduction


def test_generalize_reproduced_with_suppressed_records(tmp_path: Path) -> None:
    release = generalize_release()
    assert release.levels == {"zip": 0, "age": 0}
    assert release.suppressed_records.tolist() == [False] * 8 + [True, True]
    transformation = round_trip(transformation_of(release))
    assert transformation["suppressed"] == [["480", "35"], ["480", "20"]]
    assert transformation["dropped"] == ["id"]
    applied = apply_transformation(generalize_table(), transformation)
    assert_same_release(applied, release, tmp_path)
    assert applied.table.data.row(8) == ("*", "*", "i")
    assert applied.levels == release.levels
    # The applied release carries the parameters the transformation records, as recorded.
    assert isinstance(applied.params, RecordedParams)
    assert applied.params.recorded() == transformation["parameters"]
    assert transformation_of(applied)["parameters"] == {**transformation["parameters"], "applied": True}
    assert release_metrics(applied) == pytest.approx(release_metrics(release))
    assert applied.figures_as(AppliedGeneralizeFigures).unknown == {"zip": 0, "age": 0}


def test_generalize_at_higher_levels_is_reproduced(tmp_path: Path) -> None:
    table = generalize_table()
    release = full_domain_generalization(table, [KAnonymity(3)])
    assert sum(release.levels.values()) > 0
    applied = apply_transformation(table, round_trip(transformation_of(release)))
    assert_same_release(applied, release, tmp_path)


def test_generalize_is_a_function_of_each_record() -> None:
    release = generalize_release()
    transformation = transformation_of(release)
    table = generalize_table()
    reversed_table = Table(table.data.reverse(), table.schema)
    applied = apply_transformation(reversed_table, transformation)
    assert applied.table.data.equals(release.table.data.reverse())
    # Classes are numbered by first appearance in the new order; suppressed records stay -1.
    # (numbered among the covered records, the suppressed ones included)
    assert applied.classes[:2].tolist() == [-1, -1]
    assert applied.classes[2] == 2


def test_top_bottom_coding_reproduced(tmp_path: Path) -> None:
    frame = pl.DataFrame({"income": [1, 5, 10, 15, 20, None, 3], "g": list("abcdefg")})
    table = Table.from_frame(frame)
    release = top_bottom_coding(table, "income", bottom=5, top=15, top_value=99)
    transformation = round_trip(transformation_of(release))
    assert transformation["attributes"] == {
        "income": {"bottom": 5, "top": 15, "bottom_value": 5, "top_value": 99}
    }
    applied = apply_transformation(table, transformation)
    assert_same_release(applied, release, tmp_path)
    assert applied.figures_as(AppliedTopBottomFigures).changed_records == 3
    assert applied.params.recorded() == transformation["parameters"]
    # New data: every number is covered.
    new = Table.from_frame(pl.DataFrame({"income": [-100.0, 7.5, 1e9], "g": ["x", "y", "z"]}))
    assert apply_transformation(new, transformation).table.data.get_column("income").to_list() == [
        5.0,
        7.5,
        99.0,
    ]


@pytest.mark.parametrize("output", ["generalized", "centroid"])
def test_mondrian_reproduced(output: str, tmp_path: Path) -> None:
    release = mondrian_release(output)
    assert release.n_classes > 2
    transformation = round_trip(transformation_of(release))
    assert [transformation["attributes"][name]["kind"] for name in ("age", "income", "job", "colour")] == [
        "numeric",
        "numeric",
        "hierarchy",
        "ordered",
    ]
    applied = apply_transformation(mondrian_table(), transformation)
    assert_same_release(applied, release, tmp_path)
    assert applied.figures_as(MondrianAppliedFigures).record_boxes.tolist() == release.classes.tolist()
    assert "id" not in applied.table.data.columns


def test_mondrian_worked_example_transformation() -> None:
    # SPEC §3.4 (strict): classes {25,26,27 / 53710-53711}, {25,27 / 53712}, {28,29,30}.
    table = Table.from_frame(
        pl.DataFrame(
            {
                "Age": [25, 25, 26, 27, 27, 28, 29, 30],
                "Zip": [53711, 53712, 53711, 53710, 53712, 53711, 53710, 53712],
            }
        )
    )
    release = mondrian(table, [KAnonymity(2)], quasi_identifiers=["Age", "Zip"])
    transformation = transformation_of(release)
    assert transformation["boxes"] == 3
    assert transformation["tree"] == [
        {"attribute": "Age", "at": 27, "children": [1, 2]},
        {"attribute": "Zip", "at": 53711, "children": [3, 4]},
        {"box": 2},
        {"box": 0},
        {"box": 1},
    ]
    age = transformation["attributes"]["Age"]
    assert (age["minimum"], age["maximum"]) == (25, 30)
    assert age["boxes"] == {
        "low": [25, 25, 27],
        "low_closed": [True, True, False],
        "high": [27, 27, 30],
        "high_closed": [True, True, True],
        "released": ["25-27", "25-27", "28-30"],
        "label_low": [25, 25, 28],
        "label_high": [27, 27, 30],
        "penalty": [0.4, 0.4, 0.4],
    }
    zip_boxes = transformation["attributes"]["Zip"]["boxes"]
    assert zip_boxes["low"] == [53710, 53711, 53710]
    assert zip_boxes["low_closed"] == [True, False, True]
    assert zip_boxes["high"] == [53711, 53712, 53712]
    assert (zip_boxes["label_low"], zip_boxes["label_high"]) == ([53710, 53712, 53710], [53711, 53712, 53712])
    # A new record inside the range lands in the box of its region and gets its label when the label
    # covers its values.
    new = Table.from_frame(pl.DataFrame({"Age": [26.5, 30, 25], "Zip": [53712, 53710, 53710]}))
    applied = apply_transformation(new, transformation)
    assert applied.table.data.get_column("Age").cast(pl.String).to_list() == ["25-27", "28-30", "25-27"]
    assert applied.table.data.get_column("Zip").cast(pl.String).to_list() == [
        "53712",
        "53710-53712",
        "53710-53711",
    ]
    assert applied.figures_as(MondrianAppliedFigures).record_boxes.tolist() == [1, 2, 0]
    assert applied.classes.tolist() == [0, 1, 2]  # numbered by first record, as Mondrian does
    # Zip 53711.5 is in the region (53711, 53712] of box 1, whose records all had 53712: not covered.
    inside = Table.from_frame(pl.DataFrame({"Age": [26.5], "Zip": [53711.5]}))
    with pytest.raises(
        ConfigError, match="attribute 'Zip': 1 value outside the label of their box: '53711.5'"
    ):
        apply_transformation(inside, transformation)


def test_mondrian_hierarchy_regions_and_implicit_root() -> None:
    # Top level with several nodes: Mondrian adds an implicit root '*' above it.
    hierarchy = Hierarchy.from_rows("h", [["a1", "A"], ["a2", "A"], ["b1", "B"], ["b2", "B"]])
    table = Table.from_frame(pl.DataFrame({"h": ["a1", "a2", "b1", "b2", "a1", "b2"]}))
    split = mondrian(table, [KAnonymity(3)], quasi_identifiers=["h"], hierarchies={"h": hierarchy})
    transformation = transformation_of(split)
    assert transformation["tree"] == [
        {"attribute": "h", "level": 1, "children": {"A": 1, "B": 2}},
        {"box": 0},
        {"box": 1},
    ]
    assert transformation["attributes"]["h"]["boxes"]["level"] == [1, 1]
    assert transformation["attributes"]["h"]["boxes"]["node"] == ["A", "B"]
    whole = mondrian(table, [KAnonymity(6)], quasi_identifiers=["h"], hierarchies={"h": hierarchy})
    boxes = transformation_of(whole)["attributes"]["h"]["boxes"]
    assert (boxes["level"], boxes["node"], boxes["released"]) == ([2], ["*"], ["*"])


def test_mondrian_numeric_text_column_reproduced(tmp_path: Path) -> None:
    frame = pl.DataFrame({"age": ["30", "31", " 40", "41", "35", "39"], "x": [0.5, 1.0, 2.0, 2.25, 0.5, 1.0]})
    schema = Schema(
        (
            Attribute("age", role=Role.QUASI_IDENTIFIER, kind=Kind.NUMERIC),
            Attribute("x", role=Role.QUASI_IDENTIFIER, kind=Kind.NUMERIC),
        )
    )
    table = Table(frame, schema)
    for output in ("generalized", "centroid"):
        release = mondrian(table, [KAnonymity(2)], output=output)
        applied = apply_transformation(table, round_trip(transformation_of(release)))
        assert_same_release(applied, release, tmp_path)


# ------------------------------------------------------------------------------------------------
# New data with values the transformation does not cover


def test_generalize_uncovered_value_is_an_error_naming_attribute_and_value() -> None:
    transformation = transformation_of(generalize_release())
    frame = generalize_table().data.with_columns(
        pl.Series("zip", ["476", "999", "479", "479", "476", "998", "476", "999", "480", "476"]),
        pl.Series("age", ["20", "25", "30", "35", "20", "25", "30", "35", "35", None]),
    )
    new = Table(frame, generalize_table().schema, source="next.csv")
    with pytest.raises(ConfigError) as raised:
        apply_transformation(new, transformation)
    message = str(raised.value)
    assert message.startswith("next.csv: ")
    assert "attribute 'zip': 2 values not in its hierarchy: '998', '999' (3 records)" in message
    assert "attribute 'age': 1 value not in its hierarchy: missing (1 record)" in message
    assert "unknown='suppress'" in message


def test_generalize_suppress_variant_counts() -> None:
    transformation = transformation_of(generalize_release())
    frame = generalize_table().data.with_columns(
        pl.Series("zip", ["476", "999", "479", "479", "476", "479", "476", "479", "480", "476"]),
        pl.Series("age", ["20", "25", "30", "35", "20", "25", "30", "35", "35", "99"]),
    )
    new = Table(frame, generalize_table().schema)
    applied = apply_transformation(new, transformation, unknown="suppress")
    figures = applied.figures_as(AppliedGeneralizeFigures)
    assert figures.unknown == {"zip": 1, "age": 1}
    assert figures.learnt_suppressed == 1  # (480, 35), as learnt
    assert applied.suppressed_records.tolist() == [False, True] + [False] * 6 + [True, True]
    assert applied.table.data.get_column("zip").cast(pl.String).to_list()[1] == "*"
    assert applied.table.data.row(9) == ("*", "*", "j")
    assert applied.classes.tolist() == [0, -1, 1, 2, 0, 3, 4, 2, -1, -1]
    assert applied.cell_penalty[[1, 8, 9]].tolist() == [[1.0, 1.0]] * 3
    assert applied.suppressed_cells.sum() == 6
    # The view covers the records with covered values.
    assert applied.view.n_records == 8
    assert applied.view.n_suppressed == 1


def test_generalize_new_leaves_of_the_hierarchy_are_covered() -> None:
    transformation = transformation_of(full_domain_generalization(generalize_table(), [KAnonymity(3)]))
    level = transformation["attributes"]["zip"]["level"]
    frame = pl.DataFrame({"id": [1, 2], "zip": ["480", "480"], "age": ["20", "35"], "d": ["x", "y"]})
    applied = apply_transformation(Table(frame, generalize_table().schema), transformation)
    expected = ZIP.generalize_value("480", level)
    assert applied.table.data.get_column("zip").cast(pl.String).to_list() == [expected, expected]


def mondrian_new_data() -> Table:
    table = mondrian_table()
    frame = table.data.with_columns(
        pl.Series("age", [25, 25, 26, 27, 27, 28, 29, 30, 31, 33, 34, 41]),  # 41 is above the range
        pl.Series("job", ["a1", "a2", "a1", "b1", "b2", "b1", "a2", "zz", "a1", "b1", "a2", "b2"]),
        pl.Series(
            "colour",
            ["red", "blue", "red", "green", "pink", "red", "green", "blue", "red", "blue", "red", "green"],
        ),
    )
    return Table(frame, table.schema, source="next.csv")


def test_mondrian_uncovered_values_are_an_error() -> None:
    transformation = transformation_of(mondrian_release())
    with pytest.raises(ConfigError) as raised:
        apply_transformation(mondrian_new_data(), transformation)
    message = str(raised.value)
    assert (
        "attribute 'age': 1 value outside the original range [25, 40] or not numbers: '41' (1 record)"
        in message
    )
    assert "attribute 'job': 1 value not in its hierarchy: 'zz' (1 record)" in message
    assert "attribute 'colour': 1 value not among the original values: 'pink' (1 record)" in message


def test_mondrian_suppress_variant(tmp_path: Path) -> None:
    release = mondrian_release()
    transformation = transformation_of(release)
    applied = apply_transformation(mondrian_new_data(), transformation, unknown="suppress")
    unknown = applied.figures_as(MondrianAppliedFigures).unknown
    assert unknown == {"age": 1, "income": 0, "job": 1, "colour": 1}
    suppressed = [4, 7, 11]
    assert np.flatnonzero(applied.suppressed_records).tolist() == suppressed
    data = applied.table.data
    assert data.schema == release.table.data.schema  # suppressed cells are null, the dtypes stay
    for name in ("age", "income", "job", "colour"):
        assert data.get_column(name).is_null().to_numpy().nonzero()[0].tolist() == suppressed
    assert (applied.classes[suppressed] == -1).all()
    assert applied.suppressed_cells.sum() == 12
    assert (applied.cell_penalty[suppressed] == 1.0).all()
    # The other records are released as in the original release.
    kept = [i for i in range(12) if i not in suppressed]
    assert data[kept].equals(release.table.data[kept])


def test_mondrian_hierarchy_value_in_no_box() -> None:
    # The root is cut into A and B only (C held no record): c1 is in the hierarchy but in no box.
    table = Table.from_frame(pl.DataFrame({"job": ["a1", "a2", "b1", "b2", "a1", "b2"], "n": list(range(6))}))
    release = mondrian(table, [KAnonymity(3)], quasi_identifiers=["job"], hierarchies={"job": JOB})
    transformation = transformation_of(release)
    assert transformation["tree"][0]["children"] == {"A": 1, "B": 2}
    new = Table.from_frame(pl.DataFrame({"job": ["a2", "c1", "c1"], "n": [0, 1, 2]}))
    with pytest.raises(ConfigError, match=r"attribute 'job': 1 value in no learnt box .*'c1' \(2 records\)"):
        apply_transformation(new, transformation)
    applied = apply_transformation(new, transformation, unknown="suppress")
    assert applied.table.data.get_column("job").cast(pl.String).to_list() == ["A", None, None]
    assert applied.figures_as(MondrianAppliedFigures).unknown == {"job": 2}


def gifted_table() -> Table:
    # Cut on age at 23: the young box's records were all 'No', its region for gifted is everything.
    frame = pl.DataFrame(
        {
            "age": [20, 21, 22, 23, 30, 31, 32, 33],
            "gifted": ["No", "No", "No", "No", "Yes", "No", "Yes", "No"],
            "d": list("abcdefgh"),
        }
    )
    return Table.from_frame(frame)


def test_mondrian_category_outside_the_label_of_its_box() -> None:
    release = mondrian(gifted_table(), [KAnonymity(4)], quasi_identifiers=["age", "gifted"])
    transformation = round_trip(transformation_of(release))
    assert transformation["tree"][0] == {"attribute": "age", "at": 23, "children": [1, 2]}
    gifted = transformation["attributes"]["gifted"]["boxes"]
    assert (gifted["first"], gifted["last"]) == (["No", "No"], ["Yes", "Yes"])  # the whole domain
    assert gifted["released"] == ["No", "{No,Yes}"]
    assert gifted["label_values"] == [["No"], ["No", "Yes"]]
    new = Table.from_frame(
        pl.DataFrame(
            {"age": [21, 22, 31, 20, 23], "gifted": ["Yes", "No", "Yes", "Yes", "Yes"], "d": list("vwxyz")}
        ),
        source="next.csv",
    )
    with pytest.raises(ConfigError) as raised:
        apply_transformation(new, transformation)
    message = str(raised.value)
    assert message.startswith("next.csv: the learnt transformation does not cover every value")
    assert "attribute 'gifted': 1 value outside the label of their box: 'Yes' (3 records)" in message
    assert "'age'" not in message
    applied = apply_transformation(new, transformation, unknown="suppress")
    assert applied.suppressed_records.tolist() == [True, False, False, True, True]
    assert applied.figures_as(MondrianAppliedFigures).unknown == {"age": 0, "gifted": 3}
    assert applied.figures_as(MondrianAppliedFigures).record_boxes.tolist() == [-1, 0, 1, -1, -1]
    data = applied.table.data
    # Never released as 'No': the suppressed records have no quasi-identifier at all.
    assert data.get_column("gifted").cast(pl.String).to_list() == [None, "No", "{No,Yes}", None, None]
    assert data.get_column("age").cast(pl.String).to_list() == [None, "20-23", "30-33", None, None]
    assert data.get_column("d").to_list() == list("vwxyz")
    assert applied.classes.tolist() == [-1, 0, 1, -1, -1]
    assert (applied.cell_penalty[[0, 3, 4]] == 1.0).all()
    assert applied.suppressed_cells.sum() == 6


def test_mondrian_number_outside_the_range_of_its_box() -> None:
    # As in test_export_mondrian: box 0 has region [25, 30] on Age, but its records spanned 25-26.
    table = Table.from_frame(
        pl.DataFrame(
            {
                "Age": [25, 25, 26, 27, 27, 28, 29, 30],
                "job": ["a1", "a1", "a2", "a2", "b1", "b2", "b1", "b2"],
                "c": ["x", "y", "x", "y", "y", "z", "z", "z"],
            }
        )
    )
    release = mondrian(
        table, [KAnonymity(2)], quasi_identifiers=["job", "Age", "c"], hierarchies={"job": JOB}
    )
    transformation = transformation_of(release)
    age = transformation["attributes"]["Age"]["boxes"]
    assert (age["low"][0], age["high"][0], age["released"][0]) == (25, 30, "25-26")
    assert (age["label_low"][0], age["label_high"][0]) == (25, 26)
    new = Table.from_frame(
        pl.DataFrame({"Age": [27.0, 25.5, 25.0, 30.0, 28.5], "job": ["a1"] * 5, "c": ["x"] * 5})
    )
    with pytest.raises(
        ConfigError,
        match=r"attribute 'Age': 3 values outside the label of their box: '27', '28.5', '30' \(3 records\)",
    ):
        apply_transformation(new, transformation)
    applied = apply_transformation(new, transformation, unknown="suppress")
    assert applied.table.data.get_column("Age").cast(pl.String).to_list() == [
        None,
        "25-26",
        "25-26",
        None,
        None,
    ]
    assert applied.figures_as(MondrianAppliedFigures).unknown == {"job": 0, "Age": 3, "c": 0}
    # A single-value label covers only its value.
    single = transformation_of(
        mondrian(
            Table.from_frame(pl.DataFrame({"a": [1, 1, 2, 2], "b": [5, 5, 5, 6]})),
            [KAnonymity(2)],
            quasi_identifiers=["a", "b"],
        )
    )
    assert single["attributes"]["b"]["boxes"]["released"] == ["5", "5-6"]
    probe = Table.from_frame(pl.DataFrame({"a": [1, 1, 2], "b": [5.0, 5.5, 5.5]}))
    applied = apply_transformation(probe, single, unknown="suppress")
    assert applied.table.data.get_column("b").cast(pl.String).to_list() == ["5", None, "5-6"]


def test_mondrian_category_set_need_not_be_a_run() -> None:
    # Box a=1 held p and r: its label {p,r} does not cover q, which is inside its run p .. r.
    table = Table.from_frame(pl.DataFrame({"a": [1, 1, 2, 2], "c": ["p", "r", "q", "q"]}))
    release = mondrian(table, [KAnonymity(2)], quasi_identifiers=["a", "c"])
    transformation = transformation_of(release)
    boxes = transformation["attributes"]["c"]["boxes"]
    assert (boxes["first"], boxes["last"], boxes["released"]) == (["p", "p"], ["r", "r"], ["{p,r}", "q"])
    assert boxes["label_values"] == [["p", "r"], ["q"]]
    new = Table.from_frame(pl.DataFrame({"a": [1, 1, 1, 2], "c": ["p", "q", "r", "q"]}))
    applied = apply_transformation(new, transformation, unknown="suppress")
    assert applied.table.data.get_column("c").cast(pl.String).to_list() == ["{p,r}", None, "{p,r}", "q"]
    assert applied.figures_as(MondrianAppliedFigures).unknown == {"a": 0, "c": 1}


def test_mondrian_leaf_outside_the_lowest_common_ancestor_of_its_box() -> None:
    # Cut on age at 23: the young box's region for job is the root, its records all under A.
    frame = pl.DataFrame(
        {
            "age": [20, 21, 22, 23, 30, 31, 32, 33],
            "job": ["a1", "a2", "a1", "a2", "b1", "a1", "b2", "c1"],
        }
    )
    release = mondrian(
        Table.from_frame(frame), [KAnonymity(4)], quasi_identifiers=["age", "job"], hierarchies={"job": JOB}
    )
    transformation = round_trip(transformation_of(release))
    job = transformation["attributes"]["job"]["boxes"]
    assert (job["level"], job["node"]) == ([2, 2], ["*", "*"])
    assert (job["released"], job["label_level"]) == (["A", "*"], [1, 2])
    new = Table.from_frame(pl.DataFrame({"age": [21, 22, 20, 31, 21], "job": ["b1", "a2", "c1", "b1", "zz"]}))
    with pytest.raises(ConfigError) as raised:
        apply_transformation(new, transformation)
    message = str(raised.value)
    assert "attribute 'job': 1 value not in its hierarchy: 'zz' (1 record)" in message
    assert "attribute 'job': 2 values outside the label of their box: 'b1', 'c1' (2 records)" in message
    applied = apply_transformation(new, transformation, unknown="suppress")
    assert applied.table.data.get_column("job").cast(pl.String).to_list() == [None, "A", None, "*", None]
    assert applied.figures_as(MondrianAppliedFigures).unknown == {"age": 0, "job": 3}


def test_mondrian_centroids_route_by_region() -> None:
    # A centroid replaces the value: a value of the box's region gets it, whatever the box held.
    release = mondrian(
        gifted_table(), [KAnonymity(4)], quasi_identifiers=["age", "gifted"], output="centroid"
    )
    transformation = round_trip(transformation_of(release))
    assert "label_values" not in transformation["attributes"]["gifted"]["boxes"]
    new = Table.from_frame(pl.DataFrame({"age": [21, 27], "gifted": ["Yes", "Yes"], "d": ["x", "y"]}))
    applied = apply_transformation(new, transformation)
    assert not applied.suppressed_records.any()
    assert applied.table.data.get_column("gifted").to_list() == ["No", "No"]  # most frequent of each box
    assert applied.table.data.get_column("age").to_list() == [21.5, 31.5]


def test_transformation_formats(tmp_path: Path) -> None:
    generalized = transformation_of(mondrian_release())
    assert generalized["format"] == 2
    old = {**generalized, "format": 1}
    with pytest.raises(
        ConfigError, match="format 1 transformation of a generalized mondrian release.*learn it again"
    ):
        apply_transformation(mondrian_table(), old)
    with pytest.raises(ConfigError, match="format 1 transformation of a generalized mondrian release"):
        export_mappings(old, tmp_path)
    # Format 1 of the other methods, and of centroid Mondrian, is what format 2 is.
    centroid = mondrian_release("centroid")
    applied = apply_transformation(mondrian_table(), {**transformation_of(centroid), "format": 1})
    assert applied.table.data.equals(centroid.table.data)
    release = generalize_release()
    applied = apply_transformation(generalize_table(), {**transformation_of(release), "format": 1})
    assert applied.table.data.equals(release.table.data)
    for version in (0, 3, True, "2", None):
        with pytest.raises(ConfigError, match="unsupported transformation format"):
            apply_transformation(generalize_table(), {**transformation_of(release), "format": version})
    # A generalized Mondrian transformation without the label extents is malformed.
    broken = json.loads(json.dumps(generalized))
    del broken["attributes"]["income"]["boxes"]["label_high"]
    with pytest.raises(ConfigError, match="the boxes of 'income' do not give one 'label_high' per box"):
        apply_transformation(mondrian_table(), broken)


def test_missing_quasi_identifier_column() -> None:
    transformation = transformation_of(mondrian_release())
    table = Table.from_frame(mondrian_table().data.drop("income"), source="next.csv")
    with pytest.raises(
        ConfigError, match="next.csv: quasi-identifier 'income' of the transformation is not a column"
    ):
        apply_transformation(table, transformation)


def test_bad_arguments() -> None:
    transformation = transformation_of(generalize_release())
    with pytest.raises(ConfigError, match="unknown must be one of error, suppress"):
        apply_transformation(generalize_table(), transformation, unknown="drop")
    with pytest.raises(ConfigError, match="format"):
        apply_transformation(generalize_table(), {**transformation, "format": 99})
    broken = json.loads(json.dumps(transformation))
    broken["attributes"]["zip"]["mapping"]["476"] = "47*"
    with pytest.raises(ConfigError, match="the mapping of 'zip' sends '476' to '47\\*' but its hierarchy"):
        apply_transformation(generalize_table(), broken)


# ------------------------------------------------------------------------------------------------
# Refusals


def test_methods_that_cannot_be_reapplied() -> None:
    table = Table.from_frame(pl.DataFrame({"a": ["x", "x", "y", "z"], "b": ["p", "p", "q", "q"]}))
    release = local_suppression(table, 2, quasi_identifiers=["a", "b"])
    with pytest.raises(
        ConfigError, match="a local-suppression release cannot be re-applied to other data: which cells"
    ):
        transformation_of(release)
    relaxed = mondrian(mondrian_table(), [KAnonymity(2)], mode="relaxed")
    assert relaxed.figures_as(MondrianFigures).boxes is None
    with pytest.raises(ConfigError, match="mondrian in relaxed mode cannot be re-applied.*classes overlap"):
        transformation_of(relaxed)


# ------------------------------------------------------------------------------------------------
# CSV export


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def test_export_generalize(tmp_path: Path) -> None:
    transformation = transformation_of(
        full_domain_generalization(generalize_table(), [KAnonymity(2)], suppression_limit=0.2)
    )
    transformation["attributes"]["age"] = transformation_of(
        full_domain_generalization(generalize_table(), [KAnonymity(3)])
    )["attributes"]["age"]
    level = transformation["attributes"]["age"]["level"]
    paths = export_mappings(transformation, tmp_path / "maps")
    assert [path.name for path in paths] == ["zip.csv", "age.csv", "suppressed.csv"]
    assert read(paths[0]) == "original,released\n476,476\n479,479\n480,480\n"
    labels = [AGE.generalize_value(value, level) for value in ("20", "25", "30", "35")]
    quoted = [f'"{label}"' if "," in label else label for label in labels]  # CSV quoting
    assert read(paths[1]) == "original,released\n" + "".join(
        f"{value},{label}\n" for value, label in zip(("20", "25", "30", "35"), quoted, strict=True)
    )
    assert read(paths[2]) == "zip,age\n480,35\n480,20\n"


def test_export_top_bottom(tmp_path: Path) -> None:
    table = Table.from_frame(pl.DataFrame({"income": [1, 5, 10, 15, 20]}))
    both = export_mappings(
        transformation_of(top_bottom_coding(table, "income", bottom=5, top=15, top_value=99.5)), tmp_path
    )
    assert [path.name for path in both] == ["income.csv"]
    assert read(both[0]) == 'original,released\n<5,5\n>15,99.5\n"[5, 15]",unchanged\n'
    only_top = export_mappings(
        transformation_of(top_bottom_coding(table, "income", top=10)), tmp_path / "top"
    )
    assert read(only_top[0]) == "original,released\n>10,10\n<=10,unchanged\n"


def test_export_mondrian(tmp_path: Path) -> None:
    table = Table.from_frame(
        pl.DataFrame(
            {
                "Age": [25, 25, 26, 27, 27, 28, 29, 30],
                "job": ["a1", "a1", "a2", "a2", "b1", "b2", "b1", "b2"],
                "c": ["x", "y", "x", "y", "y", "z", "z", "z"],
            }
        )
    )
    release = mondrian(
        table, [KAnonymity(2)], quasi_identifiers=["job", "Age", "c"], hierarchies={"job": JOB}
    )
    transformation = transformation_of(release)
    # Root: job, Age and c all have width 1; job comes first and is cut into A and B (C held no
    # record). In A, c is widest (0.5 against 0.4) and is cut at its lower median x; in B, Age (0.6)
    # is cut at its lower median 28.
    assert transformation["tree"] == [
        {"attribute": "job", "level": 1, "children": {"A": 1, "B": 2}},
        {"attribute": "c", "at": "x", "children": [3, 4]},
        {"attribute": "Age", "at": 28, "children": [5, 6]},
        {"box": 0},
        {"box": 1},
        {"box": 2},
        {"box": 3},
    ]
    paths = export_mappings(transformation, tmp_path)
    assert [path.name for path in paths] == ["job.csv", "Age.csv", "c.csv", "boxes.csv"]
    assert read(tmp_path / "boxes.csv") == (
        "box,job,Age,c\n"
        '0,A,"[25, 30]",x\n'
        '1,A,"[25, 30]",y .. z\n'
        '2,B,"[25, 28]",x .. z\n'
        '3,B,"(28, 30]",x .. z\n'
    )
    # Only what each box's label covers: every leaf under the label (c1 is in no box).
    assert read(tmp_path / "job.csv") == (
        "box,original,released\n0,a1,A\n0,a2,A\n1,a1,A\n1,a2,A\n2,b1,B\n2,b2,B\n3,b1,B\n3,b2,B\n"
    )
    # The range of the box's original records, not its region (27 in box 0 is not released as 25-26).
    assert read(tmp_path / "Age.csv") == (
        "box,original,released\n"
        '0,"[25, 26]",25-26\n'
        '1,"[25, 27]",25-27\n'
        '2,"[27, 28]",27-28\n'
        '3,"[29, 30]",29-30\n'
    )
    # The values of the label's set, not of the box's run (z in box 1 is not released as y).
    assert read(tmp_path / "c.csv") == (
        'box,original,released\n0,x,x\n1,y,y\n2,y,"{y,z}"\n2,z,"{y,z}"\n3,z,z\n'
    )
    # Every pair listed is what apply releases for such a record.
    new = Table.from_frame(
        pl.DataFrame({"job": ["a2", "b1", "a1"], "Age": [26, 27, 25], "c": ["x", "z", "y"]})
    )
    applied = apply_transformation(new, transformation)
    assert applied.figures_as(MondrianAppliedFigures).record_boxes.tolist() == [0, 2, 1]
    assert applied.table.data.rows() == [("A", "25-26", "x"), ("B", "27-28", "{y,z}"), ("A", "25-27", "y")]


def test_export_mondrian_centroids_lists_regions(tmp_path: Path) -> None:
    table = Table.from_frame(pl.DataFrame({"Age": [25, 25, 26, 27, 29, 30], "c": list("xyxyzz")}))
    release = mondrian(table, [KAnonymity(2)], quasi_identifiers=["Age", "c"], output="centroid")
    transformation = transformation_of(release)
    assert "label_low" not in transformation["attributes"]["Age"]["boxes"]
    assert "label_values" not in transformation["attributes"]["c"]["boxes"]
    export_mappings(transformation, tmp_path)
    boxes = pl.read_csv(tmp_path / "boxes.csv", infer_schema=False)
    age = pl.read_csv(tmp_path / "Age.csv", infer_schema=False)
    # A centroid replaces every value of its box's region.
    assert age.get_column("original").to_list() == boxes.get_column("Age").to_list()


def test_export_file_names_are_safe_and_distinct(tmp_path: Path) -> None:
    table = Table.from_frame(pl.DataFrame({"a/b": [1, 2, 3, 4], "boxes": [1, 1, 2, 2]}))
    release = mondrian(table, [KAnonymity(2)], quasi_identifiers=["a/b", "boxes"])
    paths = export_mappings(transformation_of(release), tmp_path)
    assert [path.name for path in paths] == ["a_b.csv", "boxes_2.csv", "boxes.csv"]


# ------------------------------------------------------------------------------------------------
# Random small tables

LEAVES = ["a1", "a2", "b1", "b2", "b3", "c1"]
HIERARCHY = Hierarchy.from_rows("hier", [[leaf, leaf[0].upper(), "*"] for leaf in LEAVES])


@st.composite
def problems(draw):
    n = draw(st.integers(1, 40))
    num = draw(st.lists(st.integers(-3, 6), min_size=n, max_size=n))
    real = draw(st.lists(st.sampled_from([-1.5, 0.0, 0.25, 2.0, 3.75]), min_size=n, max_size=n))
    cat = draw(st.lists(st.sampled_from(["p", "q", "r", "s"]), min_size=n, max_size=n))
    hier = draw(st.lists(st.sampled_from(LEAVES), min_size=n, max_size=n))
    qis = draw(st.lists(st.sampled_from(["num", "real", "cat", "hier"]), min_size=1, max_size=4, unique=True))
    use_hierarchy = draw(st.booleans())
    k = draw(st.integers(1, 5))
    output = draw(st.sampled_from(["generalized", "centroid"]))
    return n, num, real, cat, hier, qis, use_hierarchy, k, output


@pytest.mark.slow
@settings(max_examples=150)
@given(problems())
def test_random_strict_mondrian_is_reproduced(problem) -> None:
    n, num, real, cat, hier, qis, use_hierarchy, k, output = problem
    table = Table.from_frame(
        pl.DataFrame({"num": num, "real": real, "cat": cat, "hier": hier, "s": list(range(n))})
    )
    if k > n:
        return
    hierarchies = {"hier": HIERARCHY} if use_hierarchy and "hier" in qis else None
    release = mondrian(table, [KAnonymity(k)], quasi_identifiers=qis, hierarchies=hierarchies, output=output)
    transformation = round_trip(transformation_of(release))
    applied = apply_transformation(table, transformation)
    assert applied.table.data.equals(release.table.data)
    assert np.array_equal(applied.classes, release.classes)
    assert np.array_equal(applied.cell_penalty, release.cell_penalty)
    assert applied.suppressed_cells is None
    # Every record is released by its own values: the records in another order come out the same.
    permutation = np.random.default_rng(n).permutation(n)
    shuffled = apply_transformation(Table.from_frame(table.data[permutation]), transformation)
    assert shuffled.table.data.equals(release.table.data[permutation])
    record_boxes = shuffled.figures_as(MondrianAppliedFigures).record_boxes
    assert np.array_equal(record_boxes, release.classes[permutation])


def boxes_containing(transformation: dict, record: dict) -> list[int] | None:
    """Brute force: the boxes whose documented regions contain ``record`` (None when a value is
    outside the attribute's domain)."""
    candidates = set(range(transformation["boxes"]))
    for name in transformation["quasi_identifiers"]:
        spec = transformation["attributes"][name]
        boxes = spec["boxes"]
        value = record[name]
        if spec["kind"] == "numeric":
            if not spec["minimum"] <= value <= spec["maximum"]:
                return None
            inside = {
                b
                for b in range(transformation["boxes"])
                if (value >= boxes["low"][b] if boxes["low_closed"][b] else value > boxes["low"][b])
                and value <= boxes["high"][b]
            }
        elif spec["kind"] == "ordered":
            if str(value) not in spec["values"]:
                return None
            rank = spec["values"].index(str(value))
            inside = {
                b
                for b in range(transformation["boxes"])
                if spec["values"].index(boxes["first"][b]) <= rank <= spec["values"].index(boxes["last"][b])
            }
        else:
            rows = {row[0]: row for row in spec["hierarchy"]}
            if value not in rows:
                return None
            path = [*rows[value], "*"]  # its node at every level, and the implicit root
            inside = {
                b for b in range(transformation["boxes"]) if path[boxes["level"][b]] == boxes["node"][b]
            }
        candidates &= inside
    return sorted(candidates)


NUMBER_LABEL = re.compile(r"^(-?\d+(?:\.\d+)?)(?:-(-?\d+(?:\.\d+)?))?$")


def label_covers(spec: dict, label: str, value) -> bool:
    """Brute force, from the label's text alone: whether the released ``label`` states something true
    of ``value`` (numbers: ``low-high`` or the value; sets ``{a,b}`` or the value; hierarchy: an
    ancestor of the leaf, or the leaf)."""
    if spec["kind"] == "numeric":
        match = NUMBER_LABEL.match(label)
        assert match, label
        low = float(match.group(1))
        high = float(match.group(2)) if match.group(2) is not None else low
        return low <= float(value) <= high
    if spec["kind"] == "ordered":
        members = label[1:-1].split(",") if label.startswith("{") else [label]
        return str(value) in members
    path = next(row for row in spec["hierarchy"] if row[0] == str(value))
    return label in [*path, "*"]


def random_new_frame(seed: int, m: int = 30) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    return pl.DataFrame(
        {
            "num": rng.integers(-8, 22, size=m) / 2,  # halves, some outside the original range
            "real": rng.choice([-1.5, -1.0, 0.0, 0.1, 0.25, 1.0, 2.0, 3.75, 4.0], size=m),
            "cat": rng.choice(["p", "q", "r", "s", "t"], size=m),
            "hier": rng.choice(LEAVES, size=m),
        }
    )


@pytest.mark.slow
@settings(max_examples=150)
@given(problems(), st.integers(0, 2**32 - 1))
def test_random_released_labels_cover_the_true_values(problem, seed) -> None:
    n, num, real, cat, hier, qis, use_hierarchy, k, _ = problem
    if k > n:
        return
    table = Table.from_frame(pl.DataFrame({"num": num, "real": real, "cat": cat, "hier": hier}))
    hierarchies = {"hier": HIERARCHY} if use_hierarchy and "hier" in qis else None
    release = mondrian(table, [KAnonymity(k)], quasi_identifiers=qis, hierarchies=hierarchies)
    transformation = round_trip(transformation_of(release))
    # New records: random values, and the original records with one value changed to another of
    # the domain (so that many land in a box whose label does not cover them).
    rng = np.random.default_rng(seed)
    mutated = table.data.with_columns(
        pl.Series("num", np.where(rng.random(n) < 0.5, np.array(num) + rng.choice([-1, 1], n), num)).cast(
            pl.Float64
        ),
        pl.Series("cat", np.where(rng.random(n) < 0.5, rng.choice(["p", "q", "r", "s"], n), cat)),
        pl.Series("hier", np.where(rng.random(n) < 0.5, rng.choice(LEAVES, n), hier)),
    )
    new = pl.concat(
        [random_new_frame(seed), mutated.with_columns(pl.col("real").cast(pl.Float64))],
        how="vertical_relaxed",
    )
    applied = apply_transformation(Table.from_frame(new), transformation, unknown="suppress")
    data = applied.table.data
    kept = np.flatnonzero(~applied.suppressed_records)
    for name in qis:
        spec = transformation["attributes"][name]
        released = data.get_column(name).cast(pl.String).to_list()
        truth = new.get_column(name).to_list()
        for i in kept.tolist():
            assert label_covers(spec, released[i], truth[i]), (name, released[i], truth[i])
        for i in np.flatnonzero(applied.suppressed_records).tolist():
            assert released[i] is None
    # unknown="error" refuses exactly when something would be suppressed.
    if applied.suppressed_records.any():
        with pytest.raises(ConfigError, match="does not cover every value"):
            apply_transformation(Table.from_frame(new), transformation)
    else:
        assert apply_transformation(Table.from_frame(new), transformation).table.data.equals(data)


@settings(max_examples=100)
@given(problems(), st.integers(0, 2**32 - 1))
def test_random_new_data_lands_in_the_box_of_its_region(problem, seed) -> None:
    n, num, real, cat, hier, qis, use_hierarchy, k, output = problem
    if k > n:
        return
    table = Table.from_frame(pl.DataFrame({"num": num, "real": real, "cat": cat, "hier": hier}))
    hierarchies = {"hier": HIERARCHY} if use_hierarchy and "hier" in qis else None
    release = mondrian(table, [KAnonymity(k)], quasi_identifiers=qis, hierarchies=hierarchies, output=output)
    transformation = transformation_of(release)
    new = random_new_frame(seed)
    applied = apply_transformation(Table.from_frame(new), transformation, unknown="suppress")
    record_boxes = applied.figures_as(MondrianAppliedFigures).record_boxes
    for i, record in enumerate(new.iter_rows(named=True)):
        containing = boxes_containing(transformation, record)
        if containing is None or not containing:
            assert applied.suppressed_records[i]
            assert record_boxes[i] == -1
            continue
        assert len(containing) == 1  # the regions partition what they cover
        (b,) = containing
        labelled = output == "generalized"
        if labelled and not all(
            label_covers(
                transformation["attributes"][name],
                transformation["attributes"][name]["boxes"]["released"][b],
                record[name],
            )
            for name in qis
        ):
            assert applied.suppressed_records[i]  # in the region, outside the label learnt there
            assert record_boxes[i] == -1
        else:
            assert record_boxes[i] == b
            assert not applied.suppressed_records[i]
    if not applied.suppressed_records.all():
        # Released like the original records of the same box.
        kept = np.flatnonzero(~applied.suppressed_records)
        first_of_box = {
            int(c): int(np.flatnonzero(release.classes == c)[0]) for c in np.unique(release.classes)
        }
        expected = release.table.data[[first_of_box[int(b)] for b in record_boxes[kept]]].select(qis)
        assert applied.table.data[kept].select(qis).equals(expected)


@settings(max_examples=60)
@given(
    st.integers(4, 40),
    st.integers(0, 2**32 - 1),
    st.integers(1, 4),
    st.sampled_from([0.0, 0.1, 0.3]),
)
def test_random_generalization_is_reproduced(n, seed, k, limit) -> None:
    rng = np.random.default_rng(seed)
    frame = pl.DataFrame(
        {
            "zip": rng.choice(["476", "479", "480"], size=n, p=[0.6, 0.3, 0.1]),
            "age": rng.choice(["20", "25", "30", "35"], size=n),
            "job": rng.choice(["a1", "a2", "b1", "b2", "c1"], size=n),
        }
    )
    table = Table.from_frame(frame)
    hierarchies = {"zip": ZIP, "age": AGE, "job": JOB}
    try:
        release = full_domain_generalization(
            table,
            [KAnonymity(k)],
            quasi_identifiers=list(hierarchies),
            hierarchies=hierarchies,
            suppression_limit=limit,
        )
    except ConfigError:
        return
    transformation = round_trip(transformation_of(release))
    applied = apply_transformation(table, transformation)
    assert applied.table.data.equals(release.table.data)
    assert np.array_equal(applied.classes, release.classes)
    assert np.array_equal(applied.cell_penalty, release.cell_penalty)
    assert np.array_equal(applied.suppressed_cells, release.suppressed_cells)
    assert release_metrics(applied) == pytest.approx(release_metrics(release))
    permutation = rng.permutation(n)
    shuffled = apply_transformation(Table.from_frame(frame[permutation]), transformation)
    assert shuffled.table.data.equals(release.table.data[permutation])
    assert np.array_equal(shuffled.suppressed_records, release.suppressed_records[permutation])
