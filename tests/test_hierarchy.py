"""Generalization hierarchies: ARX files (Adult, test2), the builders, the config key, and the errors."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.config import load_config, parse_config
from sdckit.errors import ConfigError
from sdckit.hierarchy import Hierarchy, build_hierarchy, intervals, mask, ordered

# Levels per attribute, level 0 included (shared/data/README.md).
ADULT_LEVELS = {
    "sex": 2,
    "age": 5,
    "race": 2,
    "marital-status": 3,
    "education": 4,
    "native-country": 3,
    "workclass": 3,
    "occupation": 3,
    "salary-class": 2,
}


@pytest.fixture(scope="module")
def adult(shared_data) -> pl.DataFrame:
    return pl.read_csv(shared_data("adult", "adult.csv"), separator=";")


def write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def assert_consistent(hierarchy: Hierarchy) -> None:
    """Every level a function of the previous one, and leaf counts summing to the leaves."""
    codes = hierarchy.codes
    assert codes.dtype == np.int32
    assert codes.shape == (hierarchy.n_leaves, hierarchy.n_levels)
    np.testing.assert_array_equal(codes[:, 0], np.arange(hierarchy.n_leaves))
    for level in range(hierarchy.height):
        pairs = np.unique(codes[:, level : level + 2], axis=0)
        assert len(np.unique(pairs[:, 0])) == len(pairs), f"level {level + 1} is not a function"
    for level in range(hierarchy.n_levels):
        counts = hierarchy.leaf_counts(level)
        assert counts.dtype == np.int64
        assert len(counts) == len(hierarchy.labels[level])
        assert counts.sum() == hierarchy.n_leaves
        assert (counts > 0).all()


# ARX files -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("attribute", "levels"), ADULT_LEVELS.items())
def test_adult_hierarchies_load_and_cover_the_data(
    shared_data, adult: pl.DataFrame, attribute: str, levels: int
) -> None:
    path = shared_data("adult", f"adult_hierarchy_{attribute}.csv")
    hierarchy = Hierarchy.from_csv(path, attribute)
    assert (hierarchy.name, hierarchy.source) == (attribute, str(path))
    assert hierarchy.n_levels == levels
    assert hierarchy.height == levels - 1
    assert hierarchy.labels[-1] == ("*",)
    np.testing.assert_array_equal(hierarchy.leaf_counts(hierarchy.height), [hierarchy.n_leaves])
    assert_consistent(hierarchy)
    leaves = hierarchy.leaf_codes(adult.get_column(attribute))
    assert leaves.dtype == np.int32
    assert leaves.shape == (adult.height,)
    assert (leaves >= 0).all()
    np.testing.assert_array_equal(
        hierarchy.generalized_labels(leaves, 0).to_list(), adult.get_column(attribute).cast(pl.String)
    )
    # At the top every record is '*'.
    assert set(hierarchy.generalized_labels(leaves, hierarchy.height).to_list()) == {"*"}


def test_adult_age_hierarchy_lists_the_whole_domain(shared_data, adult: pl.DataFrame) -> None:
    age = Hierarchy.from_csv(shared_data("adult", "adult_hierarchy_age.csv"), "age")
    assert age.n_leaves == 100
    assert age.labels[0][:3] == ("1", "2", "3")
    assert len(age.labels[1]) == 20
    np.testing.assert_array_equal(age.leaf_counts(1), np.full(20, 5))
    np.testing.assert_array_equal(age.leaf_counts(2), np.full(10, 10))
    np.testing.assert_array_equal(age.leaf_counts(3), np.full(5, 20))
    # ARX's file puts 35 in "30-34" (its groups run 1-5, 6-10, ...).
    assert [age.generalize_value(34, level) for level in range(5)] == ["34", "30-34", "30-39", "20-39", "*"]
    assert age.generalize_value(35, 1) == "30-34"
    assert age.generalize_value(36, 1) == "35-39"
    # Leaf counts are the hierarchy's, not the data's: every age node has the same share.
    np.testing.assert_allclose(age.ncp(3), np.full(5, 0.2))
    np.testing.assert_allclose(age.ncp(4), [1.0])
    np.testing.assert_allclose(age.ncp(0), np.zeros(100))
    leaves = age.leaf_codes(adult.get_column("age"))
    assert age.labels[0][leaves[0]] == "39"  # first record: Male;39;...
    # Second record: 50, which this file puts in "45-49" and "40-49".
    assert age.generalized_labels(leaves[:2], 2).to_list() == ["30-39", "40-49"]


def test_adult_education_leaf_counts(shared_data) -> None:
    education = Hierarchy.from_csv(shared_data("adult", "adult_hierarchy_education.csv"), "education")
    counts = dict(zip(education.labels[1], education.leaf_counts(1).tolist(), strict=True))
    assert counts == {
        "Undergraduate": 2,
        "High School": 6,
        "Professional Education": 3,
        "Graduate": 2,
        "Primary School": 3,
    }
    counts = dict(zip(education.labels[2], education.leaf_counts(2).tolist(), strict=True))
    assert counts == {"Higher education": 7, "Secondary education": 6, "Primary education": 3}
    undergraduate = education.node_of("Undergraduate", 1)
    assert education.labels[2][education.parents(1)[undergraduate]] == "Higher education"
    assert education.level_of("High School") == 1
    assert education.level_of("*") == 3


def test_test2_hierarchies(shared_data) -> None:
    folder = shared_data("adult")
    data = pl.read_csv(folder / "test2.csv", separator=";")
    zips = Hierarchy.from_csv(folder / "test2_hierarchy_ZIPCode.csv", "ZIPCode")
    assert zips.n_levels == 6
    assert zips.labels[1] == ("4767*", "4760*", "4790*")
    np.testing.assert_array_equal(zips.leaf_counts(1), [3, 3, 3])
    np.testing.assert_array_equal(zips.leaf_counts(2), [6, 3])
    np.testing.assert_allclose(zips.ncp(2), [6 / 9, 3 / 9])
    # ZIPCode is read as a number: 47906 matches the leaf '47906'.
    leaves = zips.leaf_codes(data.get_column("ZIPCode"))
    assert zips.generalized_labels(leaves, 2).to_list() == [
        "476**", "476**", "476**", "479**", "479**", "479**", "476**", "476**", "476**",
    ]  # fmt: skip
    disease = Hierarchy.from_csv(folder / "test2_hierarchy_Disease.csv", "Disease")
    assert disease.n_levels == 4
    assert disease.labels[-1] == ("respiratory&digestive disease",)
    np.testing.assert_array_equal(disease.leaf_counts(1), [3, 3])
    ages = Hierarchy.from_csv(folder / "test2_hierarchy_Age.csv", "Age")
    assert ages.labels[1] == ("[20,30[", ">=40", "[30,40[")
    for name, hierarchy in (("ZIPCode", zips), ("Disease", disease), ("Age", ages)):
        assert_consistent(hierarchy)
        assert (hierarchy.leaf_codes(data.get_column(name)) >= 0).all()


# Records -------------------------------------------------------------------------------------------


def small() -> Hierarchy:
    return Hierarchy.from_rows(
        "age", [["34", "30-39", "*"], ["35", "30-39", "*"], ["41", "40-49", "*"], ["7.5", "0-9", "*"]]
    )


def test_values_are_matched_as_a_configuration_spells_them() -> None:
    hierarchy = small()
    expected = [0, 2, -1, 0]
    np.testing.assert_array_equal(hierarchy.leaf_codes(pl.Series([34, 41, None, 34])), expected)
    np.testing.assert_array_equal(hierarchy.leaf_codes(pl.Series([34.0, 41.0, None, 34.0])), expected)
    np.testing.assert_array_equal(hierarchy.leaf_codes(pl.Series(["34", "41", None, "34"])), expected)
    np.testing.assert_array_equal(hierarchy.leaf_codes(pl.Series([7.5, 35.0])), [3, 1])
    np.testing.assert_array_equal(hierarchy.leaf_codes(pl.Series(["35", "34"], dtype=pl.Categorical)), [1, 0])
    assert hierarchy.leaf_codes(pl.Series([], dtype=pl.Int64)).shape == (0,)
    assert hierarchy.leaf_codes(pl.Series([34])).flags.writeable


def flat(labels: list[str]) -> Hierarchy:
    """A hierarchy of one level: the leaves alone."""
    return Hierarchy("t", (tuple(labels),), np.arange(len(labels)).reshape(-1, 1))


def enum_codes(column: pl.Series, labels: list[str]) -> np.ndarray:
    """The leaf codes as the Enum cast gives them (nulls as -1): what Hierarchy.text_leaf_codes must equal."""
    coded = column.cast(pl.Enum(labels), strict=False).to_physical().cast(pl.Int32).fill_null(-1)
    return coded.to_numpy()


def test_text_leaf_codes_match_values_byte_for_byte() -> None:
    # Inline views (up to 12 bytes: '', 'abcdefghijkl', 'é' * 6, '中' * 4) and views into the data
    # buffers (13 bytes and more, some alike but for one byte in the middle or at the end).
    labels = ["", "a", "abcdefghijkl", "abcdefghijklm", "é" * 6, "中" * 4, "😀" * 3 + "a"]
    labels += ["x" * 40, "x" * 39 + "y"]
    assert [len(label.encode()) for label in labels[2:7]] == [12, 13, 12, 12, 13]
    hierarchy = flat(labels)
    values = [*labels, None, "abcdefghijk", "abcdefghijklM", "x" * 19 + "y" + "x" * 20, "é" * 5, "", "😀"]
    column = pl.concat([pl.Series("t", values[:7]), pl.Series("t", values[7:])], rechunk=False)
    codes = hierarchy.text_leaf_codes(column)
    expected = [0, 1, 2, 3, 4, 5, 6, 7, 8, -1, -1, -1, -1, -1, 0, -1]
    np.testing.assert_array_equal(codes, expected)
    assert codes.dtype == np.int32 and codes.flags.writeable
    np.testing.assert_array_equal(hierarchy.text_leaf_codes(column[3:]), expected[3:])
    # Not text: the caller codes the column through the Enum.
    assert hierarchy.text_leaf_codes(pl.Series([1, 2])) is None
    assert hierarchy.text_leaf_codes(pl.Series(["a"], dtype=pl.Categorical)) is None
    # leaf_codes takes this way for text, with the same missing values and the same error.
    np.testing.assert_array_equal(hierarchy.leaf_codes(pl.Series(["a", None, "x" * 40])), [1, -1, 7])
    with pytest.raises(ConfigError, match=r"does not cover 1 value of the data: 'abcdefghijk'"):
        hierarchy.leaf_codes(pl.Series(["a", "abcdefghijk", None]))


def test_text_leaf_codes_with_leaves_spelled_alike() -> None:
    # Two leaves alike: no table of them (the Enum's error stands, as before).
    hierarchy = flat(["abcdefghijklmnop", "abcdefghijklmnop"])
    assert hierarchy.text_leaf_codes(pl.Series(["abcdefghijklmnop"])) is None


#: Texts of 0 to 40 characters of 1 to 4 UTF-8 bytes each, from a few characters (so that many are
#: alike but for a byte), and texts of exactly 12 and 13 bytes.
_TEXTS = (
    st.text(alphabet="ab-é中😀", max_size=40)
    | st.text(alphabet="ab", min_size=12, max_size=13)
    | st.sampled_from(["", "é" * 6, "中" * 4, "中" * 4 + "a", "😀" * 3, "😀" * 3 + "b"])
)


@settings(max_examples=150)
@given(
    labels=st.lists(_TEXTS, max_size=25, unique=True),
    picks=st.lists(st.integers(min_value=0, max_value=30) | st.none() | _TEXTS, max_size=60),
    cuts=st.lists(st.integers(min_value=0, max_value=60), max_size=3),
    start=st.integers(min_value=0, max_value=6),
)
def test_text_leaf_codes_equal_the_enum_cast(
    labels: list[str], picks: list[int | str | None], cuts: list[int], start: int
) -> None:
    values = [labels[pick] if isinstance(pick, int) and pick < len(labels) else pick for pick in picks]
    values = [str(value) if isinstance(value, int) else value for value in values]
    hierarchy = flat(labels)
    bounds = [0, *sorted(min(cut, len(values)) for cut in cuts), len(values)]
    parts = [pl.Series("t", values[a:b], dtype=pl.String) for a, b in zip(bounds, bounds[1:], strict=False)]
    column = pl.concat(parts, rechunk=False)[start:]  # several chunks, the first one sliced
    codes = hierarchy.text_leaf_codes(column)
    np.testing.assert_array_equal(codes, enum_codes(column, labels))
    uncovered = (codes < 0) & column.is_not_null().to_numpy()
    if uncovered.any():
        with pytest.raises(ConfigError, match="does not cover"):
            hierarchy.leaf_codes(column)
    else:
        np.testing.assert_array_equal(hierarchy.leaf_codes(column), codes)


def test_generalize_keeps_missing_values_missing() -> None:
    hierarchy = small()
    leaves = hierarchy.leaf_codes(pl.Series([34.0, None, 41.0, 7.5]))
    np.testing.assert_array_equal(hierarchy.generalize(leaves, 1), [0, -1, 1, 2])
    np.testing.assert_array_equal(hierarchy.generalize(leaves, 0), leaves)
    labels = hierarchy.generalized_labels(leaves, 1)
    assert labels.dtype == pl.String
    assert labels.name == "age"
    assert labels.to_list() == ["30-39", None, "40-49", "0-9"]
    assert hierarchy.generalized_labels(leaves, 2).to_list() == ["*", None, "*", "*"]
    with pytest.raises(ConfigError, match=r"hierarchy for 'age': level must be one of 0 \.\. 2, got 3"):
        hierarchy.generalize(leaves, 3)


def test_hierarchy_is_immutable_and_compares_by_content(tmp_path: Path) -> None:
    hierarchy = small()
    with pytest.raises(ValueError):
        hierarchy.codes[0, 1] = 5
    assert hierarchy == small()
    assert hash(hierarchy) == hash(small())
    assert hierarchy != Hierarchy.from_rows("age", [["34", "*"]])
    assert "n_leaves=4" in repr(hierarchy)
    path = tmp_path / "age.csv"
    hierarchy.to_csv(path)
    assert path.read_text().splitlines()[0] == "34;30-39;*"
    assert Hierarchy.from_csv(path, "age") == hierarchy


def test_ncp_of_a_two_value_hierarchy() -> None:
    # SPEC §3.4: hierarchy * -> {M, F}; '*' -> 2/2 = 1, 'M' -> 0.
    sex = Hierarchy.from_rows("sex", [["M", "*"], ["F", "*"]])
    np.testing.assert_allclose(sex.ncp(1), [1.0])
    np.testing.assert_allclose(sex.ncp(0), [0.0, 0.0])


def test_trailing_empty_fields_and_blank_lines_are_ignored(tmp_path: Path) -> None:
    path = tmp_path / "h.csv"
    path.write_bytes(b"a;x;*;;\r\n\r\nb;x;*;\r\nc;y;*")
    hierarchy = Hierarchy.from_csv(path, "letter")
    assert hierarchy.labels == (("a", "b", "c"), ("x", "y"), ("*",))
    np.testing.assert_array_equal(hierarchy.lines, [1, 3, 4])


# Builders ------------------------------------------------------------------------------------------


def rows_of(hierarchy: Hierarchy) -> list[tuple[str, ...]]:
    return list(hierarchy.to_frame().iter_rows())


def test_intervals_with_bottom_and_top_coding() -> None:
    ages = pl.Series("age", [15, 20, 39, 40, 99, 100, 150, None, 20])
    hierarchy = intervals("age", ages, cuts=[20, 40, 60, 80, 100])
    assert rows_of(hierarchy) == [
        ("15", "<20", "<20", "*"),
        ("20", "[20, 40)", "[20, 60)", "*"),
        ("39", "[20, 40)", "[20, 60)", "*"),
        ("40", "[40, 60)", "[20, 60)", "*"),
        ("99", "[80, 100)", "[60, 100)", "*"),
        ("100", ">=100", ">=100", "*"),
        ("150", ">=100", ">=100", "*"),
    ]
    np.testing.assert_array_equal(hierarchy.leaf_counts(1), [1, 2, 1, 1, 2])
    np.testing.assert_array_equal(hierarchy.leaf_counts(2), [1, 3, 1, 2])
    np.testing.assert_array_equal(hierarchy.leaf_codes(ages), [0, 1, 2, 3, 4, 5, 6, -1, 1])


def test_intervals_bottom_and_top_override_the_cuts() -> None:
    values = pl.Series([5.0, 25.5, 61.0, 95.0])
    hierarchy = intervals("x", values, cuts=[0, 20, 40, 60, 80, 100], bottom=20, top=80)
    assert rows_of(hierarchy) == [
        ("5", "<20", "<20", "*"),
        ("25.5", "[20, 40)", "[20, 60)", "*"),
        ("61", "[60, 80)", "[60, 80)", "*"),
        ("95", ">=80", ">=80", "*"),
    ]
    # Three intervals merged three at a time leave one group: no level between them and '*'.
    hierarchy = intervals("x", values, cuts=[0, 20, 40, 60, 80, 100], bottom=20, top=80, fanout=3)
    assert rows_of(hierarchy)[1] == ("25.5", "[20, 40)", "*")
    # Leaves are spelled without a trailing ".0".
    assert hierarchy.labels[0] == ("5", "25.5", "61", "95")


def test_intervals_of_fixed_width() -> None:
    values = pl.Series([3, 17, 42, 99])
    hierarchy = intervals("x", values, width=10, bottom=0, top=100, fanout=2)
    # 10 intervals -> groups of 2 (5), of 4 (3), of 8 (2), then '*'.
    assert hierarchy.n_levels == 6
    assert rows_of(hierarchy) == [
        ("3", "[0, 10)", "[0, 20)", "[0, 40)", "[0, 80)", "*"),
        ("17", "[10, 20)", "[0, 20)", "[0, 40)", "[0, 80)", "*"),
        ("42", "[40, 50)", "[40, 60)", "[40, 80)", "[0, 80)", "*"),
        ("99", "[90, 100)", "[80, 100)", "[80, 100)", "[80, 100)", "*"),
    ]
    # Without bottom and top the cuts are multiples of the width covering the data.
    hierarchy = intervals("x", pl.Series([-7, 3, 12]), width=5, fanout=4)
    assert rows_of(hierarchy) == [
        ("-7", "[-10, -5)", "[-10, 10)", "*"),
        ("3", "[0, 5)", "[-10, 10)", "*"),
        ("12", "[10, 15)", "[10, 15)", "*"),
    ]
    # Decimal widths do not drift: 0.7 is in [0.7, 0.8).
    hierarchy = intervals("x", pl.Series([0.1, 0.7]), width=0.1)
    assert hierarchy.generalize_value(0.7, 1) == "[0.7, 0.8)"


def test_intervals_of_numbers_written_as_text() -> None:
    hierarchy = intervals("x", pl.Series(["10", "9", "100"]), cuts=[0, 50])
    assert hierarchy.labels[0] == ("9", "10", "100")
    assert hierarchy.labels[1] == ("[0, 50)", ">=50")


def test_mask_of_zip_codes() -> None:
    zips = pl.Series("zip", [47906, 47677, 47906, None])
    hierarchy = mask("zip", zips)
    assert rows_of(hierarchy) == [
        ("47677", "4767*", "476**", "47***", "4****", "*****"),
        ("47906", "4790*", "479**", "47***", "4****", "*****"),
    ]
    assert hierarchy.n_levels == 6
    np.testing.assert_array_equal(hierarchy.leaf_counts(3), [2])
    np.testing.assert_array_equal(hierarchy.leaf_codes(zips), [1, 0, 1, -1])
    # A width pads codes of digits with zeros on the left; the leaf stays the value.
    padded = mask("zip", pl.Series([2134, 47906]), width=5, character="#")
    assert rows_of(padded)[0] == ("2134", "0213#", "021##", "02###", "0####", "#####")


def test_ordered_categories() -> None:
    grades = pl.Series(["E", "C", "A", "B", "D", "A"])
    hierarchy = ordered("grade", grades)
    assert rows_of(hierarchy) == [
        ("A", "A-B", "A-D", "*"),
        ("B", "A-B", "A-D", "*"),
        ("C", "C-D", "A-D", "*"),
        ("D", "C-D", "A-D", "*"),
        ("E", "E", "E", "*"),
    ]
    np.testing.assert_array_equal(hierarchy.leaf_counts(2), [4, 1])
    # Groups follow the given order, whether or not every category occurs.
    levels = ordered("level", pl.Series(["high", "low"]), order=["low", "mid", "high", "top"], fanout=2)
    assert rows_of(levels) == [("low", "low-mid", "*"), ("high", "high-top", "*")]
    assert rows_of(ordered("n", pl.Series([3, 1, 2]), fanout=3)) == [("1", "*"), ("2", "*"), ("3", "*")]


def test_build_hierarchy_from_specs(tmp_path: Path) -> None:
    ages = pl.Series("age", [15, 34, 99])
    built = build_hierarchy({"intervals": [20, 40, 60, 80, 100]}, ages, "age", None)
    assert built.labels[1] == ("<20", "[20, 40)", "[80, 100)")
    built = build_hierarchy({"intervals": {"width": 50, "bottom": 0, "top": 100}, "fanout": 3}, ages, "age")
    assert built.labels[1] == ("[0, 50)", "[50, 100)")
    assert build_hierarchy({"mask": True}, ages, "age").n_levels == 3
    assert build_hierarchy({"mask": 3}, ages, "age").labels[1] == ("01*", "03*", "09*")
    assert build_hierarchy({"mask": {"width": 2, "character": "?"}}, ages, "age").labels[2] == ("??",)
    assert build_hierarchy({"order": True}, ages, "age").labels[1] == ("15-34", "99")
    built = build_hierarchy({"order": [99, 34, 15], "fanout": 3}, ages, "age")
    assert built.labels == (("99", "34", "15"), ("*",))
    write(tmp_path / "age.csv", "15;young;*\n34;old;*\n99;old;*\n100;old;*\n")
    loaded = build_hierarchy("age.csv", ages, "age", base_dir=tmp_path)
    assert loaded.n_leaves == 4  # more leaves than the data holds is fine
    np.testing.assert_array_equal(loaded.leaf_counts(1), [1, 3])
    assert build_hierarchy(loaded, ages, "age") is loaded


# Errors --------------------------------------------------------------------------------------------


def test_a_value_the_hierarchy_does_not_cover(tmp_path: Path) -> None:
    path = write(tmp_path / "adult_hierarchy_age.csv", "34;30-39;*\n41;40-49;*\n")
    hierarchy = Hierarchy.from_csv(path, "age")
    with pytest.raises(ConfigError) as error:
        hierarchy.leaf_codes(pl.Series([130, 34, 117, None, 130]))
    assert str(error.value) == (
        f"hierarchy for 'age' ({path}) does not cover 2 values of the data: '117', '130'"
    )
    with pytest.raises(
        ConfigError, match=r"does not cover 7 values of the data: '1', '2', '3', '4', '5', …$"
    ):
        hierarchy.leaf_codes(pl.Series(range(1, 8)))
    with pytest.raises(ConfigError, match=r"does not cover 1 value of the data: '34.5'$"):
        hierarchy.leaf_codes(pl.Series([34.0, 34.5]))


def test_inconsistent_hierarchy(tmp_path: Path) -> None:
    path = write(
        tmp_path / "h.csv",
        """
        a;x;p;*
        b;x;p;*
        c;y;q;*
        d;x;q;*
        """,
    )
    with pytest.raises(ConfigError) as error:
        Hierarchy.from_csv(path, "letter")
    assert str(error.value) == (
        f"{path}:4: hierarchy for 'letter': inconsistent hierarchy: level 2 is not a function of "
        "level 1: 'x' generalizes to 'q' here but to 'p' on line 1"
    )
    hierarchy = Hierarchy.from_csv(path, "letter", validate=False)
    with pytest.raises(ConfigError, match="level 2 is not a function of level 1"):
        hierarchy.validate()
    with pytest.raises(ConfigError, match=r"^hierarchy for 'l': line 2: inconsistent hierarchy: level 2"):
        Hierarchy.from_rows("l", [["a", "x", "p"], ["b", "x", "q"]])


def test_two_nodes_with_one_label() -> None:
    hierarchy = Hierarchy("x", (("a", "b"), ("y", "y"), ("*",)), np.array([[0, 0, 0], [1, 1, 0]]))
    with pytest.raises(ConfigError, match="^hierarchy for 'x': level 1 has two nodes labelled 'y'$"):
        hierarchy.validate()


def test_duplicate_values(tmp_path: Path) -> None:
    path = write(tmp_path / "h.csv", "a;*\nb;*\n\na;*\n")
    with pytest.raises(ConfigError) as error:
        Hierarchy.from_csv(path, "letter")
    assert (
        str(error.value) == f"{path}:4: hierarchy for 'letter': value 'a' is listed twice (first on line 1)"
    )


def test_ragged_file(tmp_path: Path) -> None:
    path = write(tmp_path / "h.csv", "34;30-39;*\n35;30-39;*\n41;*\n")
    with pytest.raises(ConfigError) as error:
        Hierarchy.from_csv(path, "age")
    assert str(error.value) == f"{path}:3: hierarchy for 'age': expected 3 levels as on line 1, found 2"


def test_empty_label_and_unreadable_files(tmp_path: Path) -> None:
    path = write(tmp_path / "h.csv", "34;;*\n")
    with pytest.raises(ConfigError, match=r"h\.csv:1: hierarchy for 'age': the label at level 1 .* is empty"):
        Hierarchy.from_csv(path, "age")
    with pytest.raises(ConfigError, match=r"^hierarchy for 'age': no such file: .*nowhere\.csv$"):
        Hierarchy.from_csv(tmp_path / "nowhere.csv", "age")
    write(tmp_path / "empty.csv", "\n\n")
    with pytest.raises(ConfigError, match=r"empty\.csv: hierarchy for 'age': the file is empty"):
        Hierarchy.from_csv(tmp_path / "empty.csv", "age")
    (tmp_path / "latin.csv").write_bytes(b"caf\xe9;*\n")
    with pytest.raises(ConfigError, match=r"latin\.csv: hierarchy for 'x': the file is not UTF-8"):
        Hierarchy.from_csv(tmp_path / "latin.csv", "x")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"type": "intervals"}, r"hierarchy for 'age': unknown builder \(keys: 'type'\); use a file name"),
        ({"intervals": [0, 50], "mask": 2}, "hierarchy for 'age': give one builder, got intervals and mask"),
        ({"intervals": [0, 50], "width": 3}, r"intervals need either cut points or a width"),
        ({"intervals": [50, 10]}, "cut points must increase, but 10 follows 50"),
        ({"intervals": {"width": 0}}, "width must be above 0"),
        ({"intervals": {"widht": 10}}, r"unknown key 'widht' for intervals \(allowed: cuts, width"),
        ({"order": [15, 34], "fanout": 2}, "order does not list 1 value of the data: '100'"),
        ({"order": True, "fanout": 1}, "fanout must be a whole number of at least 2, got 1"),
        ({"mask": True}, "masking needs values of one length, but '15' has 2 characters and '100' 3"),
        ({"mask": 2}, "'100' has 3 characters, more than the mask width 2"),
        ([1, 2], "expected a file name or one of .*, got a list"),
        (12, "expected a file name or one of .*, got 12"),
    ],
)
def test_bad_builder_specs(spec: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        build_hierarchy(spec, pl.Series("age", [15, 34, 100]), "age", None)


def test_mask_pads_only_digits() -> None:
    with pytest.raises(ConfigError, match="'ab' has 2 characters, fewer than the mask width 3"):
        mask("code", pl.Series(["ab", "abc"]), width=3)


# Configuration -------------------------------------------------------------------------------------


def test_config_loads_a_hierarchy_file_next_to_it(shared_data, tmp_path: Path) -> None:
    source = shared_data("adult", "adult_hierarchy_age.csv")
    shutil.copy(source, tmp_path / "adult_hierarchy_age.csv")
    config = write(
        tmp_path / "study.yaml",
        """
        attributes:
          age: {role: quasi-identifier, hierarchy: adult_hierarchy_age.csv}
          zip: {hierarchy: {mask: 5}}
          sex: {hierarchy: {order: [M, F]}}
        """,
    )
    data = write(tmp_path / "data.csv", "age,zip,sex\n34,47906,M\n41,47677,F\n,47906,M\n")
    table = load_config(config).read(data)
    age = table.schema["age"].hierarchy
    assert isinstance(age, Hierarchy)
    assert (age.n_leaves, age.n_levels) == (100, 5)
    assert age.source == str(tmp_path / "adult_hierarchy_age.csv")
    np.testing.assert_array_equal(age.leaf_codes(table.column("age")), [33, 40, -1])
    assert table.schema["zip"].hierarchy.labels[1] == ("4767*", "4790*")
    assert table.schema["sex"].hierarchy.labels == (("M", "F"), ("*",))
    assert table.schema["age"].kind.value == "numeric"


def test_config_builds_hierarchies_for_a_data_frame() -> None:
    config = parse_config("attributes:\n  age: {hierarchy: {intervals: [0, 50, 100]}}\n")
    assert config.attributes[0].hierarchy == {"intervals": [0, 50, 100]}  # kept as written until read
    schema = config.schema_for(pl.DataFrame({"age": [10, 60], "other": ["a", "b"]}))
    assert schema["age"].hierarchy.labels[1] == ("[0, 50)", "[50, 100)")
    assert schema["other"].hierarchy is None


def test_config_errors_name_the_file_line_and_attribute(tmp_path: Path) -> None:
    write(tmp_path / "ages.csv", "34;30-39;*\n41;40-49;*\n")
    config = write(
        tmp_path / "study.yaml",
        """
        attributes:
          sex: {role: quasi-identifier}
          age: {hierarchy: ages.csv}
        """,
    )
    data = write(tmp_path / "data.csv", "age,sex\n34,M\n117,F\n130,M\n")
    with pytest.raises(ConfigError) as error:
        load_config(config).read(data)
    assert str(error.value) == (
        f"{config}:3: hierarchy for 'age' ({tmp_path / 'ages.csv'}) does not cover 2 values of the data: "
        "'117', '130'"
    )
    write(config, "attributes:\n  age: {hierarchy: missing.csv}\n")
    with pytest.raises(
        ConfigError, match=r"study\.yaml:2: hierarchy for 'age': no such file: .*missing\.csv"
    ):
        load_config(config).read(data)
    write(config, "attributes:\n  age:\n    hierarchy: {bins: 3}\n")
    with pytest.raises(ConfigError, match=r"study\.yaml:2: hierarchy for 'age': unknown builder"):
        load_config(config).read(data)


# Properties ----------------------------------------------------------------------------------------


@settings(max_examples=60)
@given(
    values=st.lists(st.integers(min_value=-1000, max_value=1000) | st.none(), min_size=1, max_size=40),
    cuts=st.lists(st.integers(min_value=-1200, max_value=1200), min_size=2, max_size=8, unique=True),
    fanout=st.integers(min_value=2, max_value=4),
)
def test_interval_hierarchies_are_consistent(values: list[int | None], cuts: list[int], fanout: int) -> None:
    column = pl.Series("x", values, dtype=pl.Int64)
    hierarchy = intervals("x", column, cuts=sorted(cuts), fanout=fanout)
    assert_consistent(hierarchy)
    leaves = hierarchy.leaf_codes(column)
    assert ((leaves == -1) == column.is_null().to_numpy()).all()
    assert len(hierarchy.labels[-1]) <= 1


@settings(max_examples=60)
@given(
    values=st.lists(st.floats(min_value=-50, max_value=50, allow_nan=False), min_size=1, max_size=40),
    width=st.sampled_from([0.1, 0.25, 1, 3, 7.5, 20]),
    fanout=st.integers(min_value=2, max_value=5),
)
def test_fixed_width_hierarchies_are_consistent(values: list[float], width: float, fanout: int) -> None:
    column = pl.Series("x", values, dtype=pl.Float64)
    hierarchy = intervals("x", column, width=width, fanout=fanout)
    assert_consistent(hierarchy)
    assert hierarchy.labels[-1] == ("*",)
    # No value is bottom or top coded: the cuts cover the data.
    assert not any(label.startswith(("<", ">=")) for label in hierarchy.labels[1])
    assert (hierarchy.leaf_codes(column) >= 0).all()


@settings(max_examples=60)
@given(
    codes=st.lists(st.text(alphabet="0123456789", min_size=4, max_size=4), min_size=1, max_size=30),
    categories=st.lists(st.sampled_from(list("ABCDEFGHIJ")), min_size=1, max_size=30),
    fanout=st.integers(min_value=2, max_value=4),
)
def test_mask_and_ordered_hierarchies_are_consistent(
    codes: list[str], categories: list[str], fanout: int
) -> None:
    masked = mask("zip", pl.Series(codes))
    assert_consistent(masked)
    assert masked.n_levels == 5
    assert masked.labels[-1] == ("****",)
    assert (masked.leaf_codes(pl.Series(codes)) >= 0).all()
    grouped = ordered("grade", pl.Series(categories), order=list("ABCDEFGHIJ"), fanout=fanout)
    assert_consistent(grouped)
    assert grouped.labels[-1] == ("*",)
    assert (grouped.leaf_codes(pl.Series(categories)) >= 0).all()
