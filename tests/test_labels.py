"""Released labels (:mod:`sdckit.labels`): every form with its hand-computed readings, a property test
that every label a writer writes covers its original value and parses back to the interval or set it
was written from, the readers agreeing with one another, and a release that record linkage accepts
being accepted by the measures that read it against the original (``--original``)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from sdckit.cli import app
from sdckit.config import parse_config
from sdckit.coverage import attribute_cover
from sdckit.errors import InputError
from sdckit.hierarchy import intervals, mask, ordered
from sdckit.labels import (
    SUPPRESSED,
    TOP_LABEL,
    Label,
    above_label,
    at_least_label,
    at_most_label,
    below_label,
    covered_codes,
    interval_label,
    interval_labels,
    node_codes,
    number_text,
    numeric_bounds,
    parse_label,
    range_labels,
    representative,
    set_labels,
)
from sdckit.risk._linkage_encoding import (
    ALL,
    NONE,
    POINT,
    SET,
    CategoricalAttribute,
    NumericAttribute,
    encode_attributes,
)
from sdckit.table import value_strings
from sdckit.utility.released import numeric_view

INF = math.inf

# label, its parse, its numeric bounds (None: none), its representative number (None: suppressed)
FORMS = [
    ("*", Label("all"), (-INF, INF, 0.0, 0.0), None),
    ("", Label("missing"), (-INF, INF, 0.0, 0.0), None),
    ("39", Label("number", 39.0, 39.0), (39.0, 39.0, 0.0, 0.0), 39.0),
    ("-2.5", Label("number", -2.5, -2.5), (-2.5, -2.5, 0.0, 0.0), -2.5),
    ("38-40", Label("interval", 38.0, 40.0), (38.0, 40.0, 0.0, 0.0), 39.0),
    ("-4--2", Label("interval", -4.0, -2.0), (-4.0, -2.0, 0.0, 0.0), -3.0),
    ("[20, 40)", Label("interval", 20.0, 40.0, False, True), (20.0, 40.0, 0.0, 1.0), 30.0),
    ("(0, 10]", Label("interval", 0.0, 10.0, True, False), (0.0, 10.0, 1.0, 0.0), 5.0),
    ("[20;40]", Label("interval", 20.0, 40.0), (20.0, 40.0, 0.0, 0.0), 30.0),
    ("<20", Label("interval", -INF, 20.0, False, True, bound=20.0), (-INF, 20.0, 0.0, 1.0), 20.0),
    ("<=20", Label("interval", -INF, 20.0, bound=20.0), (-INF, 20.0, 0.0, 0.0), 20.0),
    ("≤20", Label("interval", -INF, 20.0, bound=20.0), (-INF, 20.0, 0.0, 0.0), 20.0),
    (">60", Label("interval", 60.0, INF, True, False, bound=60.0), (60.0, INF, 1.0, 0.0), 60.0),
    (">=60", Label("interval", 60.0, INF, bound=60.0), (60.0, INF, 0.0, 0.0), 60.0),
    ("≥60", Label("interval", 60.0, INF, bound=60.0), (60.0, INF, 0.0, 0.0), 60.0),
    ("{41,43}", Label("set", members=("41", "43")), (41.0, 43.0, 0.0, 0.0), 42.0),
    ("{F, M}", Label("set", members=("F", "M")), None, math.nan),
    ("19**", Label("mask", prefix="19", width=4), (1900.0, 1999.0, 0.0, 0.0), 1949.5),
    ("**", Label("mask", prefix="", width=2), (0.0, 99.0, 0.0, 0.0), 49.5),
    ("ab*", Label("mask", prefix="ab", width=3), None, math.nan),
    ("Male", None, None, math.nan),
    ("A-D", None, None, math.nan),
]


@pytest.mark.parametrize(("label", "parsed", "bounds", "number"), FORMS)
def test_every_form_reads_as_written(label, parsed, bounds, number):
    assert parse_label(label) == parsed
    assert parse_label(f"  {label} ") == parsed  # blanks around a label are not part of it
    assert numeric_bounds(label) == bounds
    found = representative(label)
    assert found is number or found == number or (math.isnan(found) and math.isnan(number))


# The original values of the examples below: codes 0 … 6, in this order.
TEXTS = ["19", "20", "39", "40", "41", "43", "60"]
NUMBERS = np.array([float(text) for text in TEXTS])
INDEX = {text: code for code, text in enumerate(TEXTS)}
COVERED = [
    ("39", "value", [2]),
    ("*", "all", None),
    ("", "missing", None),
    ("39.0", "number", [2]),
    ("38-40", "interval", [2, 3]),
    ("[20, 40)", "interval", [1, 2]),
    ("(19, 40]", "interval", [1, 2, 3]),
    ("<20", "interval", [0]),
    (">=60", "interval", [6]),
    (">41", "interval", [5, 6]),
    ("{41,43,44}", "set", [4, 5]),
    ("4*", "mask", [3, 4, 5]),
    ("Male", None, None),
]


@pytest.mark.parametrize(("label", "reading", "codes"), COVERED)
def test_what_a_label_covers(label, reading, codes):
    for ascending in (False, True):
        cover = covered_codes(label, INDEX, TEXTS, numbers=NUMBERS, ascending=ascending)
        if reading is None:
            assert cover is None
            continue
        assert cover.reading == reading
        assert (cover.codes is None and codes is None) or cover.codes.tolist() == codes
    if reading == "set":
        assert cover.unknown == ("44",)


def test_a_node_of_a_hierarchy_is_read_before_the_grammar():
    hierarchy = ordered("grade", pl.Series(["1", "2", "3", "4"]), fanout=2)
    nodes = node_codes(hierarchy, np.arange(4))
    assert nodes["1-2"].tolist() == [0, 1] and nodes["*"].tolist() == [0, 1, 2, 3]
    texts = ["1", "2", "3", "4"]
    index = {text: code for code, text in enumerate(texts)}
    # "3-4" is a node and a range: the node wins (the same values here, as it should be).
    assert covered_codes("3-4", index, texts, nodes=nodes).reading == "node"
    assert covered_codes("3-4", index, texts, numbers=np.arange(1.0, 5.0)).codes.tolist() == [2, 3]


def test_writers_spell_labels_as_before():
    assert number_text(20.0) == "20" and number_text(0.1) == "0.1" and number_text(2.5) == "2.5"
    assert interval_label("20", "40") == "[20, 40)"
    assert interval_label("20", "40", low_closed=False, high_closed=True) == "(20, 40]"
    assert (below_label("20"), at_least_label("100")) == ("<20", ">=100")
    assert (above_label("60"), at_most_label("60")) == (">60", "<=60")
    assert interval_labels(
        pl.Series(["0", "2.5"]), pl.Series(["10", "3"]), [True, False], [False, True]
    ).to_list() == ["[0, 10)", "(2.5, 3]"]
    assert TOP_LABEL == SUPPRESSED == "*"
    assert range_labels(pl.Series(["1", "5"]), pl.Series(["1", "9"]), np.array([True, False])).to_list() == [
        "1",
        "5-9",
    ]
    assert set_labels(pl.Series(["a", "a,b"]), np.array([True, False])).to_list() == ["a", "{a,b}"]
    assert intervals("age", pl.Series([5, 25, 45, 120]), cuts=[20, 40, 60, 100]).labels[1] == (
        "<20",
        "[20, 40)",
        "[40, 60)",
        ">=100",
    )
    assert mask("zip", pl.Series(["47906", "47907"])).labels[2] == ("479**",)


# Writers under hypothesis -----------------------------------------------------------------------


def _all_readers_cover(label: str, value: float | str, texts: list[str], numbers: np.ndarray | None) -> None:
    """``label`` covers ``value`` under every reader: the categories it covers, its numeric bounds
    and its representative number (within the bounds)."""
    index = {text: code for code, text in enumerate(texts)}
    text = value if isinstance(value, str) else value_strings(pl.Series([value]))[0]
    cover = covered_codes(label, index, texts, numbers=numbers)
    assert cover is not None, label
    assert cover.codes is None or index[text] in cover.codes.tolist(), (label, text)
    if numbers is not None:
        bounds = numeric_bounds(label)
        assert bounds is not None, label
        low, high, low_open, high_open = bounds
        number = float(value)
        assert (low < number if low_open else low <= number) and (
            number < high if high_open else number <= high
        )
        middle = representative(label)
        assert middle is None or low <= middle <= high or not math.isfinite(low + high), (label, middle)


@given(
    st.lists(st.integers(-50, 150), min_size=1, max_size=30),
    st.lists(st.integers(-20, 120), min_size=2, max_size=6, unique=True),
    st.integers(2, 3),
)
def test_interval_hierarchy_labels_cover_their_leaves_and_parse_back(values, cuts, fanout):
    cuts = sorted(cuts)
    hierarchy = intervals("x", pl.Series(values), cuts=cuts, fanout=fanout)
    leaves = [float(leaf) for leaf in hierarchy.labels[0]]
    texts = list(hierarchy.labels[0])
    numbers = np.array(leaves)
    cut_texts = [number_text(cut) for cut in cuts]
    for level in range(1, hierarchy.n_levels):
        for leaf, node in enumerate(np.asarray(hierarchy.codes)[:, level].tolist()):
            label = hierarchy.labels[level][node]
            _all_readers_cover(label, leaves[leaf], texts, numbers)
            parsed = parse_label(label)
            if label == TOP_LABEL:
                assert parsed == Label("all")
            elif label.startswith("<"):
                assert parsed == Label("interval", -INF, cuts[0], False, True, bound=cuts[0])
            elif label.startswith(">="):
                assert parsed == Label("interval", cuts[-1], INF, bound=cuts[-1])
            else:  # parses back to the interval it was written from, and is written alike again
                assert parsed.kind == "interval" and (parsed.low_open, parsed.high_open) == (False, True)
                assert interval_label(number_text(parsed.low), number_text(parsed.high)) == label
                assert number_text(parsed.low) in cut_texts and number_text(parsed.high) in cut_texts


@given(st.lists(st.integers(0, 99999), min_size=1, max_size=20, unique=True), st.integers(5, 6))
def test_mask_labels_cover_their_codes(codes, width):
    values = pl.Series([str(code).zfill(width) for code in codes])
    hierarchy = mask("zip", values)
    texts = list(hierarchy.labels[0])
    for level in range(1, hierarchy.n_levels):
        for leaf, node in enumerate(np.asarray(hierarchy.codes)[:, level].tolist()):
            label = hierarchy.labels[level][node]
            _all_readers_cover(label, texts[leaf], texts, None)
            parsed = parse_label(label)
            if label != TOP_LABEL:
                assert parsed == Label("mask", prefix=texts[leaf][: width - level], width=width)
                low, high, _, _ = numeric_bounds(label)
                assert low <= int(texts[leaf]) <= high


@given(
    st.lists(
        st.tuples(st.integers(0, 9), st.one_of(st.integers(-30, 30), st.floats(-1e6, 1e6, width=32))),
        min_size=1,
        max_size=40,
    )
)
def test_mondrian_range_labels_cover_their_class_and_parse_back(rows):
    """Mondrian's numeric label of a class is [its smallest, its largest value]."""
    from sdckit.anonymize._mondrian_coding import _numeric_dimension

    classes = np.array([row[0] for row in rows])
    numbers = np.array([float(row[1]) for row in rows])
    integral = bool(np.all(numbers == np.round(numbers)))
    dimension = _numeric_dimension("x", numbers, integral)
    present, classes = np.unique(classes, return_inverse=True)
    lows = np.array([dimension.codes[classes == c].min() for c in range(len(present))])
    highs = np.array([dimension.codes[classes == c].max() for c in range(len(present))])
    labels = range_labels(
        dimension.texts.gather(lows), dimension.texts.gather(highs), lows == highs
    ).to_list()
    texts = dimension.texts.to_list()
    for row in range(len(numbers)):
        label = labels[classes[row]]
        _all_readers_cover(label, texts[dimension.codes[row]], texts, dimension.values)
        low, high, _, _ = numeric_bounds(label)
        assert (low, high) == (dimension.values[lows[classes[row]]], dimension.values[highs[classes[row]]])


@given(st.lists(st.tuples(st.integers(0, 5), st.sampled_from(["a", "b", "c", "x y", "Zürich"])), min_size=1))
def test_mondrian_set_labels_cover_their_class_and_parse_back(rows):
    """Mondrian's categorical label of a class is the set of its values, sorted."""
    frame = pl.DataFrame(rows, schema={"class": pl.Int64, "text": pl.String}, orient="row")
    grouped = frame.unique().sort("class", "text").group_by("class", maintain_order=True).agg(pl.col("text"))
    members = grouped.get_column("text").to_list()
    joined = pl.Series([",".join(values) for values in members])
    labels = dict(
        zip(
            grouped.get_column("class").to_list(),
            set_labels(joined, np.array([len(m) == 1 for m in members])).to_list(),
            strict=True,
        )
    )
    texts = sorted(set(frame.get_column("text").to_list()))
    for number, text in rows:
        label = labels[number]
        _all_readers_cover(label, text, texts, None)
        values = members[grouped.get_column("class").to_list().index(number)]
        assert parse_label(label) == (Label("set", members=tuple(values)) if len(values) > 1 else None)


# The readers agree ------------------------------------------------------------------------------

ORIGINAL = {
    "age": [15, 25, 38, 41, 43, 61, 70, 39],
    "zip": ["47906", "47907", "47910", "12345", "12399", "47906", "12345", "47910"],
    "sex": ["F", "M", "F", "M", "F", "M", "F", "M"],
}
# Every label form on record i of the original, none a node of a hierarchy (none is configured).
RELEASED = {
    "age": ["<20", "[20, 40)", "38-40", "{41,43}", "{41,43}", ">=60", "*", "39"],
    "zip": ["479**", "479**", "4791*", "123**", "*", "47906", "1234*", "47910"],
    "sex": ["{F,M}", "*", "F", "M", "{F,M}", "M", "*", "M"],
}
CONFIG = {
    "attributes": {
        "age": {"role": "quasi-identifier", "kind": "numeric", "public": 0.5},
        "zip": {"role": "quasi-identifier", "kind": "categorical", "public": 0.5},
        "sex": {"role": "quasi-identifier", "kind": "categorical", "public": 0.5},
    }
}


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path, Path]:
    original, released, config = tmp_path / "original.csv", tmp_path / "release.csv", tmp_path / "c.yaml"
    pl.DataFrame(ORIGINAL).write_csv(original)
    pl.DataFrame(RELEASED).write_csv(released)
    config.write_text(yaml.safe_dump(CONFIG))
    return original, released, config


@pytest.mark.slow
def test_a_release_linkage_accepts_is_accepted_against_its_original(files):
    """The disagreement of issue 33: ``[20, 40)``, ``<20``, ``>=60`` and masks were read by record
    linkage and refused by the measures of a release against its original (coverage)."""
    original, released, config = files
    runner = CliRunner()
    linkage = runner.invoke(app, ["risk", "linkage", str(original), str(released), "-c", str(config), "-q"])
    assert linkage.exit_code == 0, linkage.output
    for measure in ("combined", "reidentification"):
        summary = original.parent / f"{measure}.json"
        result = runner.invoke(
            app,
            ["risk", measure, str(released), "--original", str(original), "-c", str(config),
             "--summary", str(summary), "-q"],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        assert json.loads(summary.read_text())
    check = runner.invoke(
        app, ["check", str(released), "--original", str(original), "-c", str(config), "-k", "1"]
    )
    assert check.exit_code == 0, check.output


def _linkage_categories(attribute: CategoricalAttribute, categories: list[str]) -> list[set[str]]:
    """Per released record, the original categories record linkage finds it agreeing with."""
    covered = []
    for label in attribute.labels.tolist():
        kind = attribute.kind[label]
        if kind == ALL:
            covered.append(set(categories))
        elif kind == POINT:
            covered.append({categories[attribute.point[label]]})
        elif kind == SET:
            keys = attribute.set_keys[attribute.set_keys // attribute.n_categories == label]
            covered.append({categories[key] for key in (keys % attribute.n_categories).tolist()})
        else:
            assert kind == NONE
            covered.append(set())
    return covered


def test_coverage_and_linkage_read_every_label_alike(files):
    original_path, released_path, config_path = files
    config = parse_config(CONFIG)
    original, release = config.read(original_path), config.read_release(released_path)
    encoded = dict(
        zip(
            CONFIG["attributes"],
            encode_attributes(original, release, list(CONFIG["attributes"])),
            strict=True,
        )
    )
    for name in CONFIG["attributes"]:
        cover = attribute_cover(name, original.data.get_column(name), release.data.get_column(name))
        slots = cover.covered_slots()
        texts = value_strings(cover.categories).to_list()
        by_coverage = [
            {texts[slot - 1] for slot in slots[label].tolist() if slot > 0} for label in cover.released_labels
        ]
        attribute = encoded[name]
        if isinstance(attribute, NumericAttribute):
            # A numeric label is an interval to linkage's distance; a set spans its members' hull there.
            values = sorted(set(ORIGINAL[name]))
            by_linkage = [
                {number_text(v) for v in values if low <= v <= high}
                for low, high in zip(attribute.lo.tolist(), attribute.hi.tolist(), strict=True)
            ]
            hull = [label.startswith("{") for label in RELEASED[name]]
            assert [c for c, h in zip(by_coverage, hull, strict=True) if not h] == [
                c for c, h in zip(by_linkage, hull, strict=True) if not h
            ]
            assert all(seen <= spanned for seen, spanned in zip(by_coverage, by_linkage, strict=True))
        else:
            categories = sorted(set(ORIGINAL[name]))
            assert by_coverage == _linkage_categories(attribute, categories), name
        # Each record's label covers its own original value under both readers.
        for row, value in enumerate(ORIGINAL[name]):
            assert str(value) in by_coverage[row]


def test_the_numeric_view_reads_every_numeric_label():
    view = numeric_view(pl.Series("age", RELEASED["age"]))
    np.testing.assert_array_equal(view.values, [20, 30, 39, 42, 42, 60, np.nan, 39])
    assert (view.ranges, view.suppressed) == (6, 1)


def test_coverage_still_refuses_what_is_no_generalization():
    """A truthful release only: a number that is no original value and a set holding one."""
    age = pl.Series("age", [39, 40])
    with pytest.raises(InputError, match=r"label '39\.5' cannot be read"):
        attribute_cover("age", age, pl.Series("age", ["39.5", "40"]))
    with pytest.raises(InputError, match=r"label '\{39,41\}' is a set holding '41'"):
        attribute_cover("age", age, pl.Series("age", ["{39,41}", "40"]))
    # Newly read: an interval, a bound, a number spelled otherwise, a mask; each covering its values
    # (slot 1 is 39, slot 2 is 40; slot 0, a missing original value, is covered by every label).
    cover = attribute_cover("age", age, pl.Series("age", ["[39, 40)", ">=40", "39.0", "4*"]))
    slots = dict(zip(cover.labels, (s.tolist() for s in cover.covered_slots()), strict=True))
    assert slots == {"[39, 40)": [0, 1], ">=40": [0, 2], "39.0": [0, 1], "4*": [0, 2]}
