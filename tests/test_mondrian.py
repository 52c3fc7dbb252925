"""Mondrian multidimensional partitioning.

* SPEC §3.4 worked examples (strict and relaxed classes, GCP, total NCP) and the categorical NCP example.
* Adult (ARX's extract): releases re-checked by ``check_table`` and by pycanon.
* Random small tables (hypothesis): every class passes its models (checked here with numpy on the
  ``classes`` and by ``check_table`` on the released table), class ids cover every record, every
  generalized value contains the original value, the cell penalties match a recomputation, strict
  never separates equal records and relaxed k-only leaves no splittable class of 2k records or more.
* Bad input, progress, output shapes, and a 200,000-record run (no recursion).
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.anonymize.mondrian import MondrianFigures, mondrian
from sdckit.errors import ConfigError
from sdckit.hierarchy import Hierarchy
from sdckit.models import (
    DistinctLDiversity,
    EntropyLDiversity,
    KAnonymity,
    RecursiveCLDiversity,
    TCloseness,
    check_table,
)
from sdckit.table import Attribute, Kind, Role, Schema, Table
from sdckit.utility import release_ncp

ADULT_COLUMNS = [
    "sex",
    "age",
    "race",
    "marital-status",
    "education",
    "native-country",
    "workclass",
    "occupation",
    "salary-class",
]

# SPEC §3.4: rows 1..8 (0..7 here) of (Age, Zip).
AGES = [25, 25, 26, 27, 27, 28, 29, 30]
ZIPS = [53711, 53712, 53711, 53710, 53712, 53711, 53710, 53712]


def example() -> Table:
    return Table.from_frame(pl.DataFrame({"Age": AGES, "Zip": ZIPS}))


def groups(classes: np.ndarray) -> set[frozenset[int]]:
    return {frozenset(np.flatnonzero(classes == c).tolist()) for c in np.unique(classes)}


# ------------------------------------------------------------------------------------------------
# Worked examples


def test_worked_example_strict() -> None:
    release = mondrian(example(), [KAnonymity(2)], quasi_identifiers=["Age", "Zip"])
    # SPEC rows {1,3,4}, {2,5}, {6,7,8} (1-based).
    assert groups(release.classes) == {frozenset({0, 2, 3}), frozenset({1, 4}), frozenset({5, 6, 7})}
    assert release.classes.tolist() == [0, 1, 0, 0, 1, 2, 2, 2]  # numbered by first record
    assert release_ncp(release) == pytest.approx(0.48125, abs=1e-12)
    assert release.cell_penalty.sum() == pytest.approx(7.7, abs=1e-12)
    per_record = release.cell_penalty.sum(axis=1)
    assert per_record[[0, 1, 5]] == pytest.approx([0.9, 0.4, 1.4])
    data = release.table.data
    assert data.get_column("Age").cast(pl.String).to_list() == ["25-27"] * 5 + ["28-30"] * 3
    assert data.get_column("Zip").cast(pl.String).to_list() == [
        "53710-53711",
        "53712",
        "53710-53711",
        "53710-53711",
        "53712",
        "53710-53712",
        "53710-53712",
        "53710-53712",
    ]
    assert release.method == "mondrian"
    assert release.params.mode == "strict"
    assert release.figures_as(MondrianFigures).partitions == 3
    assert release.quasi_identifiers == ("Age", "Zip")
    assert not release.suppressed_records.any()
    assert release.suppressed_cells is None


def test_worked_example_relaxed() -> None:
    release = mondrian(example(), [KAnonymity(2)], quasi_identifiers=["Age", "Zip"], mode="relaxed")
    # SPEC {1,4}, {2,3}, {6,7}, {5,8} (1-based).
    assert groups(release.classes) == {
        frozenset({0, 3}),
        frozenset({1, 2}),
        frozenset({5, 6}),
        frozenset({4, 7}),
    }
    assert release_ncp(release) == pytest.approx(0.3625, abs=1e-12)
    assert release.cell_penalty.sum() == pytest.approx(5.8, abs=1e-12)
    per_record = release.cell_penalty.sum(axis=1)
    assert per_record[[0, 1, 5, 4]] == pytest.approx([0.9, 0.7, 0.7, 0.6])


def test_worked_example_centroid() -> None:
    release = mondrian(example(), [KAnonymity(2)], quasi_identifiers=["Age", "Zip"], output="centroid")
    data = release.table.data
    assert data.schema["Age"] == pl.Float64
    assert data.get_column("Age").to_list() == pytest.approx([26.0, 26.0, 26.0, 26.0, 26.0, 29.0, 29.0, 29.0])
    zip_means = [(53711 + 53711 + 53710) / 3, 53712.0]
    assert data.get_column("Zip").to_list()[:2] == pytest.approx(zip_means)
    # The cell penalty is that of the partition whatever the output.
    assert release_ncp(release) == pytest.approx(0.48125)


def test_categorical_ncp_example() -> None:
    # SPEC §3.4: hierarchy * -> {M, F}; '*' has NCP 2/2 = 1, 'M' has 0.
    sex = Hierarchy.from_rows("sex", [["M", "*"], ["F", "*"]])
    table = Table.from_frame(pl.DataFrame({"sex": ["M", "F", "M", "F"]}))
    whole = mondrian(table, [KAnonymity(4)], quasi_identifiers=["sex"], hierarchies={"sex": sex})
    assert whole.table.data.get_column("sex").cast(pl.String).to_list() == ["*"] * 4
    assert whole.cell_penalty[:, 0].tolist() == [1.0] * 4
    split = mondrian(table, [KAnonymity(2)], quasi_identifiers=["sex"], hierarchies={"sex": sex})
    assert split.table.data.get_column("sex").cast(pl.String).to_list() == ["M", "F", "M", "F"]
    assert split.cell_penalty[:, 0].tolist() == [0.0] * 4
    assert groups(split.classes) == {frozenset({0, 2}), frozenset({1, 3})}


def test_hierarchy_multiway_cut_and_lca_labels() -> None:
    # Root with three children; the cut at the root is three-way, then each child splits no further.
    rows = [
        ["a1", "A", "*"],
        ["a2", "A", "*"],
        ["b1", "B", "*"],
        ["b2", "B", "*"],
        ["c1", "C", "*"],
        ["c2", "C", "*"],
    ]
    hierarchy = Hierarchy.from_rows("h", rows)
    values = ["a1", "a2", "b1", "b2", "c1", "c2", "a1", "b2", "c2"]
    table = Table.from_frame(pl.DataFrame({"h": values}))
    release = mondrian(table, [KAnonymity(3)], quasi_identifiers=["h"], hierarchies={"h": hierarchy})
    assert release.n_classes == 3
    assert release.table.data.get_column("h").cast(pl.String).to_list() == [
        "A",
        "A",
        "B",
        "B",
        "C",
        "C",
        "A",
        "B",
        "C",
    ]
    assert release.cell_penalty[:, 0] == pytest.approx([2 / 6] * 9)
    # k=2: class A holds a1, a2, a1 -> {a1,a1} and {a2} is not allowed (a2 alone), so A stays.
    assert (
        mondrian(table, [KAnonymity(2)], quasi_identifiers=["h"], hierarchies={"h": hierarchy}).n_classes == 3
    )


def test_implicit_root_when_top_level_has_several_nodes() -> None:
    hierarchy = Hierarchy.from_rows("h", [["a1", "A"], ["a2", "A"], ["b1", "B"]])
    table = Table.from_frame(pl.DataFrame({"h": ["a1", "a2", "b1", "b1"]}))
    release = mondrian(table, [KAnonymity(3)], quasi_identifiers=["h"], hierarchies={"h": hierarchy})
    assert release.table.data.get_column("h").cast(pl.String).to_list() == ["*"] * 4
    assert release.cell_penalty[:, 0].tolist() == [1.0] * 4


def test_categorical_without_hierarchy_is_a_set_of_sorted_values() -> None:
    table = Table.from_frame(pl.DataFrame({"c": ["b", "a", "c", "d", "a", "c"], "n": [1, 2, 3, 4, 5, 6]}))
    release = mondrian(table, [KAnonymity(3)], quasi_identifiers=["c"])
    # Codes a<b<c<d: lower median of [a,a,b,c,c,d] is b -> {a,b} | {c,d}.
    assert release.table.data.get_column("c").cast(pl.String).to_list() == [
        "{a,b}",
        "{a,b}",
        "{c,d}",
        "{c,d}",
        "{a,b}",
        "{c,d}",
    ]
    assert release.cell_penalty[:, 0] == pytest.approx([0.5] * 6)
    assert release.table.data.get_column("n").to_list() == [1, 2, 3, 4, 5, 6]  # other columns unchanged
    single = mondrian(table, [KAnonymity(1)], quasi_identifiers=["c"])
    assert single.table.data.get_column("c").cast(pl.String).to_list() == ["b", "a", "c", "d", "a", "c"]
    assert single.cell_penalty.sum() == 0.0
    centroid = mondrian(table, [KAnonymity(3)], quasi_identifiers=["c"], output="centroid")
    # Most frequent value per class, ties to the smallest: {b,a,a} -> a; {c,d,c} -> c.
    assert centroid.table.data.get_column("c").to_list() == ["a", "a", "c", "c", "a", "c"]


def test_numeric_kind_text_column_and_float_spelling() -> None:
    frame = pl.DataFrame({"age": ["30", "31", "40", "41"], "x": [0.5, 1.0, 2.0, 2.25]})
    schema = Schema(
        (
            Attribute("age", role=Role.QUASI_IDENTIFIER, kind=Kind.NUMERIC),
            Attribute("x", role=Role.QUASI_IDENTIFIER, kind=Kind.NUMERIC),
        )
    )
    release = mondrian(Table(frame, schema), [KAnonymity(2)])
    assert release.quasi_identifiers == ("age", "x")
    data = release.table.data
    assert data.get_column("age").cast(pl.String).to_list() == ["30-31", "30-31", "40-41", "40-41"]
    assert data.get_column("x").cast(pl.String).to_list() == ["0.5-1", "0.5-1", "2-2.25", "2-2.25"]


def test_identifiers_dropped_and_order_kept() -> None:
    frame = pl.DataFrame({"id": list(range(8)), "Age": AGES, "Zip": ZIPS, "d": list("abcdefgh")})
    schema = Schema(
        (
            Attribute("id", role=Role.IDENTIFIER),
            Attribute("Age", role=Role.QUASI_IDENTIFIER, kind=Kind.NUMERIC),
            Attribute("Zip", role=Role.QUASI_IDENTIFIER, kind=Kind.NUMERIC),
            Attribute("d", role=Role.SENSITIVE),
        )
    )
    release = mondrian(Table(frame, schema), [KAnonymity(2)])
    assert release.table.data.columns == ["Age", "Zip", "d"]
    assert release.table.data.get_column("d").to_list() == list("abcdefgh")
    assert "id" not in release.table.schema


def test_progress_reports_every_record() -> None:
    calls: list[tuple[int, int]] = []
    mondrian(
        example(),
        [KAnonymity(2)],
        quasi_identifiers=["Age", "Zip"],
        progress=lambda a, b: calls.append((a, b)),
    )
    assert calls[-1] == (8, 8)
    assert all(total == 8 for _, total in calls)
    assert [done for done, _ in calls] == sorted(done for done, _ in calls)


def test_relaxed_classes_are_smaller_than_2k_and_strict_keeps_equal_values_together() -> None:
    rng = np.random.default_rng(3)
    k = 7
    # Few repeated combinations (none 2k times): relaxed k-only cuts every class below 2k records.
    spread = Table.from_frame(pl.DataFrame({"a": rng.integers(0, 4, 400), "b": rng.integers(0, 100, 400)}))
    relaxed = mondrian(spread, [KAnonymity(k)], quasi_identifiers=["a", "b"], mode="relaxed")
    sizes = relaxed.class_sizes()
    assert sizes.min() >= k
    assert sizes.max() < 2 * k
    strict_spread = mondrian(spread, [KAnonymity(k)], quasi_identifiers=["a", "b"])
    assert strict_spread.class_sizes().max() >= 2 * k  # strict stops at duplicate-heavy medians
    # 12 distinct (a, b) combinations: strict cannot separate equal records, so classes are unions
    # of whole combinations; relaxed separates them.
    frame = pl.DataFrame({"a": rng.integers(0, 4, 400), "b": rng.integers(0, 3, 400)})
    table = Table.from_frame(frame)
    strict = mondrian(table, [KAnonymity(k)], quasi_identifiers=["a", "b"])
    combination = frame.get_column("a").to_numpy() * 3 + frame.get_column("b").to_numpy()
    for value in np.unique(combination):
        assert len(np.unique(strict.classes[combination == value])) == 1
    relaxed = mondrian(table, [KAnonymity(k)], quasi_identifiers=["a", "b"], mode="relaxed")
    separated = [len(np.unique(relaxed.classes[combination == value])) for value in np.unique(combination)]
    assert max(separated) > 1
    assert strict.n_classes < relaxed.n_classes


def test_sensitive_models_bound_the_cuts() -> None:
    frame = pl.DataFrame({"Age": AGES, "Zip": ZIPS, "s": ["x", "x", "y", "y", "x", "y", "x", "y"]})
    table = Table.from_frame(frame)
    release = mondrian(table, [KAnonymity(2), DistinctLDiversity("s", 2)], quasi_identifiers=["Age", "Zip"])
    for c in np.unique(release.classes):
        assert len(set(frame.get_column("s").to_numpy()[release.classes == c])) >= 2
    assert check_table(release.table, ["Age", "Zip"], [KAnonymity(2), DistinctLDiversity("s", 2)]).summary()[
        "passes"
    ]


# ------------------------------------------------------------------------------------------------
# Bad input


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"models": [KAnonymity(9)]}, "cannot be satisfied"),
        ({"models": [KAnonymity(2)], "quasi_identifiers": ["Age", "nope"]}, "'nope' is not a column"),
        ({"models": [KAnonymity(2)], "mode": "loose"}, "mode must be 'strict' or 'relaxed', got 'loose'"),
        ({"models": [KAnonymity(2)], "output": "mean"}, "output must be one of generalized, centroid"),
        ({"models": [KAnonymity(2), DistinctLDiversity("s", 3)]}, "cannot be satisfied"),
        ({"models": [KAnonymity(2), EntropyLDiversity("s", 2.5)]}, "cannot be satisfied"),
        ({"models": []}, "at least one privacy model"),
        ({"models": [KAnonymity(2), DistinctLDiversity("missing", 2)]}, "sensitive attribute 'missing'"),
        ({"models": [KAnonymity(2), DistinctLDiversity("Age", 2)]}, "both quasi-identifier and sensitive"),
        ({"models": [KAnonymity(2)], "quasi_identifiers": []}, "no quasi-identifiers"),
    ],
)
def test_bad_input(arguments: dict, message: str) -> None:
    table = Table.from_frame(pl.DataFrame({"Age": AGES, "Zip": ZIPS, "s": ["x", "y"] * 4}))
    arguments = {"quasi_identifiers": ["Age", "Zip"], **arguments}
    models = arguments.pop("models")
    with pytest.raises(ConfigError, match=message):
        mondrian(table, models, **arguments)


def test_missing_quasi_identifier_value_names_the_attribute() -> None:
    table = Table.from_frame(pl.DataFrame({"Age": [25, None, 27, 28], "Zip": ["a", "b", None, "c"]}))
    with pytest.raises(ConfigError, match="quasi-identifier 'Age' has 1 missing value"):
        mondrian(table, [KAnonymity(2)], quasi_identifiers=["Age", "Zip"])
    with pytest.raises(ConfigError, match="quasi-identifier 'Zip' has 1 missing value"):
        mondrian(table, [KAnonymity(2)], quasi_identifiers=["Zip"])


def test_k_larger_than_n_message() -> None:
    with pytest.raises(ConfigError, match=r"9-anonymity cannot be satisfied: only 8 records"):
        mondrian(example(), [KAnonymity(9)], quasi_identifiers=["Age", "Zip"])


def test_hierarchy_not_covering_values() -> None:
    hierarchy = Hierarchy.from_rows("c", [["a", "*"], ["b", "*"]])
    table = Table.from_frame(pl.DataFrame({"c": ["a", "b", "z"]}))
    with pytest.raises(ConfigError, match="does not cover 1 value"):
        mondrian(table, [KAnonymity(1)], quasi_identifiers=["c"], hierarchies={"c": hierarchy})


# ------------------------------------------------------------------------------------------------
# Scale


@pytest.mark.slow
def test_200000_records_without_recursion() -> None:
    rng = np.random.default_rng(0)
    n = 200_000
    # Skewed values (most records share a few values) make an unbalanced, deep tree.
    frame = pl.DataFrame(
        {
            "a": rng.geometric(0.02, n),
            "b": rng.integers(0, 1_000_000, n),
            "c": rng.choice(["u", "v", "w", "x"], n),
        }
    )
    table = Table.from_frame(frame)
    # Its time is benchmarks/bench_mondrian.py's business (a time limit here fails under load).
    release = mondrian(table, [KAnonymity(2)], quasi_identifiers=["a", "b", "c"], mode="relaxed")
    sizes = release.class_sizes()
    # Relaxed, k only: every class of 4 records or more would have been cut.
    assert sizes.min() == 2 and sizes.max() == 3
    assert sizes.sum() == n
    assert release.n_classes > 60_000
    strict = mondrian(table, [KAnonymity(2)], quasi_identifiers=["a", "b", "c"])
    assert strict.class_sizes().min() == 2
    assert strict.n_classes > 60_000


# ------------------------------------------------------------------------------------------------
# Adult


def adult_table(shared_data) -> tuple[Table, dict[str, Hierarchy]]:
    frame = pl.read_csv(shared_data("adult", "adult.csv"), separator=";", infer_schema=False).with_columns(
        pl.col("age").cast(pl.Int64)
    )
    hierarchies = {
        c: Hierarchy.from_csv(shared_data("adult", f"adult_hierarchy_{c}.csv"), c)
        for c in ADULT_COLUMNS
        if c != "age"
    }
    return Table.from_frame(frame), hierarchies


@pytest.mark.slow
@pytest.mark.parametrize(
    "case",
    ["k5", "k10", "k5+l3", "k5+t0.2", "k5 relaxed"],
)
def test_adult_release_satisfies_its_models(shared_data, case: str) -> None:
    from pycanon import anonymity

    table, hierarchies = adult_table(shared_data)
    quasi_identifiers = [c for c in ADULT_COLUMNS if c != "occupation"]
    k = 10 if case == "k10" else 5
    models: list = [KAnonymity(k)]
    if case == "k5+l3":
        models.append(DistinctLDiversity("occupation", 3))
    if case == "k5+t0.2":
        models.append(TCloseness("occupation", 0.2))
    mode = "relaxed" if "relaxed" in case else "strict"
    release = mondrian(
        table,
        models,
        quasi_identifiers=quasi_identifiers,
        hierarchies=hierarchies,  # occupation's is not used: it is not a quasi-identifier
        mode=mode,
    )
    assert release.classes.min() == 0 and release.classes.max() == release.n_classes - 1
    assert release.class_sizes().min() >= k
    report = check_table(release.table, quasi_identifiers, models)
    assert report.summary()["passes"]
    assert 0 < release_ncp(release) < 1
    frame = release.table.data.with_columns(pl.col(quasi_identifiers).cast(pl.String)).to_pandas()
    assert anonymity.k_anonymity(frame, quasi_identifiers) >= k
    if case == "k5+l3":
        assert anonymity.l_diversity(frame, quasi_identifiers, ["occupation"]) >= 3
    if case == "k5+t0.2":
        assert anonymity.t_closeness(frame, quasi_identifiers, ["occupation"]) <= 0.2 + 1e-9
    if mode == "strict":
        # Strict classes do not overlap, so the released table has exactly the partition's classes.
        assert report.n_classes == release.n_classes


# ------------------------------------------------------------------------------------------------
# Random small tables

LEAVES = ["a1", "a2", "b1", "b2", "b3", "c1"]
H_ROWS = [[leaf, leaf[0].upper(), "*"] for leaf in LEAVES]
HIERARCHY = Hierarchy.from_rows("h", H_ROWS)


@st.composite
def problems(draw):
    n = draw(st.integers(1, 40))
    num = draw(st.lists(st.integers(-3, 6), min_size=n, max_size=n))
    cat = draw(st.lists(st.sampled_from(["p", "q", "r", "s"]), min_size=n, max_size=n))
    hier = draw(st.lists(st.sampled_from(LEAVES), min_size=n, max_size=n))
    sens = draw(st.lists(st.sampled_from(["s0", "s1", "s2", "s3"]), min_size=n, max_size=n))
    qis = draw(st.lists(st.sampled_from(["num", "cat", "hier"]), min_size=1, max_size=3, unique=True))
    use_hierarchy = draw(st.booleans())
    mode = draw(st.sampled_from(["strict", "relaxed"]))
    k = draw(st.integers(1, 5))
    extra = draw(st.sampled_from(["none", "distinct", "entropy", "recursive", "t"]))
    l = draw(st.integers(1, 3))  # noqa: E741
    t = draw(st.sampled_from([0.3, 0.5, 0.8]))
    output = draw(st.sampled_from(["generalized", "centroid"]))
    return n, num, cat, hier, sens, qis, use_hierarchy, mode, k, extra, l, t, output


def emd_equal(counts: np.ndarray, overall: np.ndarray) -> float:
    return 0.5 * float(np.abs(counts / counts.sum() - overall).sum())


@pytest.mark.slow
@settings(max_examples=250)
@given(problems())
def test_random_tables(problem) -> None:
    n, num, cat, hier, sens, qis, use_hierarchy, mode, k, extra, l, t, output = problem  # noqa: E741
    frame = pl.DataFrame({"num": num, "cat": cat, "hier": hier, "sens": sens})
    table = Table.from_frame(frame)
    models: list = [KAnonymity(k)]
    if extra == "distinct":
        models.append(DistinctLDiversity("sens", l))
    elif extra == "entropy":
        models.append(EntropyLDiversity("sens", l))
    elif extra == "recursive":
        models.append(RecursiveCLDiversity("sens", 2, l))
    elif extra == "t":
        models.append(TCloseness("sens", t))
    hierarchies = {"hier": HIERARCHY} if use_hierarchy and "hier" in qis else None

    sens_values = np.array(sens)
    values, whole_counts = np.unique(sens_values, return_counts=True)
    overall = whole_counts / n

    def passes(members: np.ndarray) -> bool:
        if len(members) < k:
            return False
        counts = np.array(sorted(np.unique(sens_values[members], return_counts=True)[1], reverse=True))
        if extra == "distinct":
            return len(counts) >= l
        if extra == "entropy":
            p = counts / counts.sum()
            return float(-(p * np.log(p)).sum()) >= np.log(l) - 1e-12
        if extra == "recursive":
            return len(counts) >= l and counts[0] < 2 * counts[l - 1 :].sum()
        if extra == "t":
            full = np.array([np.count_nonzero(sens_values[members] == v) for v in values], dtype=float)
            return emd_equal(full, overall) <= t + 1e-12
        return True

    if not passes(np.arange(n)):
        with pytest.raises(ConfigError, match="cannot be satisfied"):
            mondrian(table, models, quasi_identifiers=qis, hierarchies=hierarchies, mode=mode, output=output)
        return
    release = mondrian(
        table, models, quasi_identifiers=qis, hierarchies=hierarchies, mode=mode, output=output
    )
    classes = release.classes
    n_classes = release.n_classes
    assert classes.shape == (n,)
    assert set(classes.tolist()) == set(range(n_classes))
    # Numbered in order of first record.
    firsts = [int(np.flatnonzero(classes == c)[0]) for c in range(n_classes)]
    assert firsts == sorted(firsts)
    for c in range(n_classes):
        assert passes(np.flatnonzero(classes == c))
    assert check_table(release.table, qis, models).summary()["passes"]

    data = release.table.data
    columns = {"num": np.array(num), "cat": np.array(cat), "hier": np.array(hier)}
    penalty = release.cell_penalty
    assert penalty.shape == (n, len(qis))
    for j, name in enumerate(qis):
        original = columns[name]
        released = data.get_column(name).cast(pl.String).to_list() if output == "generalized" else None
        for c in range(n_classes):
            members = np.flatnonzero(classes == c)
            present = sorted(set(original[members].tolist()))
            if name == "num":
                low, high = min(present), max(present)
                span = max(num) - min(num)
                expected = (high - low) / span if span else 0.0
            elif name == "hier" and hierarchies:
                groups_present = {value[0] for value in present}
                if len(present) == 1:
                    label, expected = present[0], 0.0
                elif len(groups_present) == 1:
                    label = present[0][0].upper()
                    expected = sum(leaf[0] == present[0][0] for leaf in LEAVES) / len(LEAVES)
                else:
                    label, expected = "*", 1.0
            else:
                expected = 0.0 if len(present) == 1 else len(present) / len(set(original.tolist()))
            assert penalty[members, j] == pytest.approx([expected] * len(members))
            if output == "generalized":
                for row in members:
                    value = original[row]
                    text = released[row]
                    if name == "num":
                        if "-" in text.lstrip("-") and text != str(value):
                            # "low-high" (low may be negative)
                            head, _, tail = text[1:].partition("-")
                            low_text, high_text = text[0] + head, tail
                            assert (int(low_text), int(high_text)) == (low, high)
                        else:
                            assert int(text) == value == low == high
                        assert low <= value <= high
                    elif name == "hier" and hierarchies:
                        assert text == label
                        assert text in (value, value[0].upper(), "*")
                    else:
                        expected_text = present[0] if len(present) == 1 else "{" + ",".join(present) + "}"
                        assert text == expected_text
                        assert value in text
            elif name == "num":
                assert data.get_column(name).to_numpy()[members] == pytest.approx(original[members].mean())
            else:
                values_c, counts_c = np.unique(original[members], return_counts=True)
                mode_value = values_c[np.argmax(counts_c)]  # np.unique sorts: ties to the smallest
                assert set(data.get_column(name).to_numpy()[members].tolist()) == {mode_value}

    codes = np.stack([np.unique(columns[name], return_inverse=True)[1] for name in qis], axis=1)
    if mode == "strict":
        # Equal quasi-identifier values are never separated.
        _, combination = np.unique(codes, axis=0, return_inverse=True)
        for value in np.unique(combination):
            assert len(np.unique(classes[combination.reshape(-1) == value])) == 1
    elif extra == "none" and not (hierarchies and "hier" in qis):
        # Relaxed, k only, binary cuts: a class of 2k records or more is all one combination.
        for c in range(n_classes):
            members = np.flatnonzero(classes == c)
            if len(members) >= 2 * k:
                assert len(np.unique(codes[members], axis=0)) == 1
