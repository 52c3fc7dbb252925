"""Tables from microdata and from tables of cells (issue 15 item 1) and the primary rules with their
protection levels (item 2, SPEC §8.2)."""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import make_table
from sdckit.errors import ConfigError, InputError
from sdckit.hierarchy import Hierarchy
from sdckit.tabular.build import TableSpec, build_from_cells, build_table
from sdckit.tabular.model import TOTAL, LinearTable
from sdckit.tabular.problem import make_problem
from sdckit.tabular.rules import Rule, primary_protection


def with_totals(frame: pl.DataFrame, dims: list[str], value: str | None) -> pl.DataFrame:
    """The oracle: a polars group-by for every subset of dimensions, the others labelled Total."""
    parts = []
    agg = [pl.len().cast(pl.Float64).alias("frequency")]
    if value is not None:
        agg.append(pl.col(value).sum().alias("sum"))
    text = frame.with_columns(pl.col(d).cast(pl.String) for d in dims)
    for size in range(len(dims) + 1):
        for kept in itertools.combinations(dims, size):
            grouped = text.group_by(list(kept)).agg(agg) if kept else text.select(agg)
            parts.append(grouped.with_columns(pl.lit(TOTAL).alias(d) for d in dims if d not in kept))
    return pl.concat([p.select(*dims, *[c for c in p.columns if c not in dims]) for p in parts])


def as_frame(table: LinearTable) -> pl.DataFrame:
    columns = {"frequency": table.frequency}
    if table.kind == "magnitude":
        columns["sum"] = table.values
    return pl.concat([table.cells, pl.DataFrame(columns)], how="horizontal")


def assert_same_cells(built: LinearTable, oracle: pl.DataFrame, dims: list[str]) -> None:
    got = as_frame(built).sort(dims)
    want = oracle.select(got.columns).sort(dims)
    assert got.height == want.height
    assert got.select(dims).equals(want.select(dims))
    for column in got.columns[len(dims) :]:
        np.testing.assert_allclose(got.get_column(column).to_numpy(), want.get_column(column).to_numpy())


def random_records(seed: int, n: int = 500) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    return pl.DataFrame(
        {
            "region": rng.choice(["N", "S", "E", "W"], n),
            "sex": rng.choice(["f", "m"], n),
            "activity": rng.choice(["a", "b", "c", "d", "e"], n, p=[0.5, 0.3, 0.1, 0.07, 0.03]),
            "income": np.round(rng.lognormal(3, 1, n), 2),
            "firm": rng.integers(0, 60, n),
        }
    )


def test_a_frequency_table_equals_a_group_by_with_totals():
    frame = random_records(1)
    dims = ["region", "sex", "activity"]
    built = build_table(make_table(frame), TableSpec.of("region", "sex", "activity"))
    assert built.kind == "frequency"
    assert built.is_additive()
    assert_same_cells(built, with_totals(frame, dims, None), dims)


def test_a_magnitude_table_equals_a_group_by_with_totals():
    frame = random_records(2)
    dims = ["region", "activity"]
    built = build_table(make_table(frame), TableSpec.of("region", "activity", value="income"))
    assert built.kind == "magnitude" and built.value_name == "income"
    assert built.is_additive()
    assert_same_cells(built, with_totals(frame, dims, "income"), dims)


def test_sdctable_microdata_equals_a_group_by_with_totals(shared_data):
    frame = pl.read_csv(shared_data("sdcmicro", "table_microdata2.csv"))
    dims = ["region", "gender", "ecoOld"]
    built = build_table(make_table(frame), TableSpec.of("region", "gender", "ecoOld", value="numVal"))
    assert_same_cells(built, with_totals(frame, dims, "numVal"), dims)
    grand = built.values[(built.cells.select(pl.all_horizontal(pl.all() == TOTAL))).to_series().to_numpy()]
    assert grand.tolist() == [float(frame.get_column("numVal").sum())]


def test_relations_of_a_two_way_table():
    frame = pl.DataFrame({"r": ["a", "a", "b", "b", "b"], "c": ["x", "y", "x", "x", "y"]})
    built = build_table(make_table(frame), TableSpec.of("r", "c"))
    # 2 x 2 interior, 2 row totals, 2 column totals, 1 grand total; 2 + 2 + 1 + 1 relations.
    assert built.n_cells == 9
    assert built.n_relations == 6
    assert sorted(np.asarray(abs(built.relations).sum(axis=1)).ravel().tolist()) == [3] * 6
    assert built.is_additive()
    lookup = {tuple(row[:2]): row[2] for row in as_frame(built).iter_rows()}
    assert lookup[("a", "x")] == 1 and lookup[("b", "x")] == 2 and lookup[("b", TOTAL)] == 3
    assert lookup[(TOTAL, TOTAL)] == 5


def region_hierarchy() -> Hierarchy:
    return Hierarchy.from_frame(
        "district",
        pl.DataFrame(
            {
                "district": ["n1", "n2", "s1", "s2", "s3", "w1"],
                "region": ["North", "North", "South", "South", "South", "West"],
                "top": ["*"] * 6,
            }
        ),
    )


def test_a_hierarchy_gives_subtotals_and_their_relations():
    rng = np.random.default_rng(3)
    n = 400
    frame = pl.DataFrame(
        {"district": rng.choice(["n1", "n2", "s1", "s2", "s3", "w1"], n), "sex": rng.choice(["f", "m"], n)}
    )
    spec = TableSpec.of("district", "sex", hierarchies={"district": region_hierarchy()})
    built = build_table(make_table(frame), spec)
    assert built.is_additive()
    labels = set(built.cells.get_column("district").to_list())
    # West has one district: w1 and West are one cell (labelled w1); the top is Total.
    assert labels == {"n1", "n2", "s1", "s2", "s3", "w1", "North", "South", TOTAL}
    frame_out = as_frame(built)
    north = frame_out.filter(pl.col("district") == "North", pl.col("sex") == TOTAL).get_column("frequency")
    assert north.item() == frame.filter(pl.col("district").is_in(["n1", "n2"])).height
    # Relations: per sex value and Total (3): North = n1+n2, South = s1+s2+s3, Total = North+South+w1,
    # and per district node (9): f + m = Total.
    assert built.n_relations == 3 * 3 + 9
    sizes = sorted(np.asarray(abs(built.relations).sum(axis=1)).ravel().astype(int).tolist())
    assert sizes == [3] * 3 + [3] * 9 + [4] * 6


def test_a_hierarchy_that_does_not_cover_the_data_is_an_error():
    frame = pl.DataFrame({"district": ["n1", "zz"], "sex": ["f", "m"]})
    with pytest.raises(ConfigError, match="does not cover 1 value of the data: 'zz'"):
        region_hierarchy().leaf_codes(frame.get_column("district"))


def test_linked_tables_share_their_common_cells():
    frame = random_records(4)
    spec = TableSpec(tables=(("region", "sex"), ("region", "activity")))
    built = build_table(make_table(frame), spec)
    assert built.is_additive()
    assert built.dimensions == ("region", "sex", "activity")
    cells = built.cells
    # region x Total x Total appears once although both tables hold it.
    margins = cells.filter(pl.col("sex") == TOTAL, pl.col("activity") == TOTAL)
    assert margins.height == 5
    # No cell crosses sex and activity.
    assert cells.filter(pl.col("sex") != TOTAL, pl.col("activity") != TOTAL).height == 0
    one = build_table(make_table(frame), TableSpec.of("region", "sex"))
    two = build_table(make_table(frame), TableSpec.of("region", "activity"))
    assert built.n_cells == one.n_cells + two.n_cells - 5


@pytest.mark.slow
def test_top_contributions_and_holdings():
    frame = pl.DataFrame(
        {"r": ["a"] * 5 + ["b"] * 2, "v": [50.0, 30, 15, 5, 1, 7, 3], "firm": [1, 1, 2, 3, 4, 5, 6]}
    )
    plain = build_table(make_table(frame), TableSpec.of("r", value="v", top=3))
    a = plain.cells.get_column("r").to_list().index("a")
    assert plain.top[a].tolist() == [50, 30, 15]
    assert plain.contributors[a] == 5
    held = build_table(make_table(frame), TableSpec.of("r", value="v", top=3, holding="firm"))
    assert held.top[a].tolist() == [80, 15, 5]  # firm 1's two records are one contribution
    assert held.contributors[a] == 4
    total = held.cells.get_column("r").to_list().index(TOTAL)
    assert held.top[total].tolist() == [80, 15, 7]
    assert held.values[total] == pytest.approx(111)


def test_weights_count_and_replicate_contributions():
    frame = pl.DataFrame({"r": ["a", "a", "b"], "v": [10.0, 4.0, 2.0], "w": [2.0, 1.4, 3.0]})
    built = build_table(make_table(frame), TableSpec.of("r", value="v", weights="w", top=2))
    a = built.cells.get_column("r").to_list().index("a")
    assert built.frequency[a] == pytest.approx(3.4)
    assert built.values[a] == pytest.approx(2 * 10 + 1.4 * 4)
    assert built.top[a].tolist() == [10, 10]  # a weight of 2 is two contributors of 10 (sdcTable)


def test_missing_values_in_a_dimension_are_refused():
    frame = pl.DataFrame({"r": ["a", None, "b"], "v": [1.0, 2.0, 3.0]})
    with pytest.raises(InputError, match=r"'r' has 1 missing value \(first in record 2\)"):
        build_table(make_table(frame), TableSpec.of("r"))


def test_unknown_attributes_are_named():
    frame = pl.DataFrame({"Region": ["a"], "v": [1.0]})
    with pytest.raises(ConfigError, match="unknown attribute 'region'.*did you mean 'Region'"):
        build_table(make_table(frame), TableSpec.of("region"))


@settings(max_examples=30)
@given(st.integers(0, 10_000), st.integers(1, 3))
def test_built_tables_are_additive_and_match_the_oracle(seed, width):
    frame = random_records(seed, n=60)
    dims = ["region", "sex", "activity"][:width]
    built = build_table(make_table(frame), TableSpec.of(dims, value="income"))
    assert built.is_additive()
    assert_same_cells(built, with_totals(frame, dims, "income"), dims)


# Tables of cells -------------------------------------------------------------------------------


def test_a_table_of_cells_with_its_totals():
    cells = pl.DataFrame(
        {
            "r": ["a", "a", "b", "b", "a", "b", "Tot", "Tot", "Tot"],
            "c": ["x", "y", "x", "y", "Tot", "Tot", "x", "y", "Tot"],
            "n": [1, 2, 3, 4, 3, 7, 4, 6, 10],
        }
    )
    built = build_from_cells(cells, TableSpec.of("r", "c"), frequency="n", total_label="Tot")
    assert built.n_cells == 9 and built.is_additive()


def test_non_additive_totals_are_refused_naming_the_cell():
    cells = pl.DataFrame(
        {"r": ["a", "a", "b", "b", "a", "b", "Tot"], "c": ["x", "y", "x", "y", "Tot", "Tot", "Tot"]}
    ).with_columns(n=pl.Series([1, 2, 3, 4, 3, 8, 10]))
    with pytest.raises(InputError, match=r"line 7: the total r=b, c=Total has n 8 but its cells sum to 7"):
        build_from_cells(cells, TableSpec.of("r", "c"), frequency="n", total_label="Tot")


def test_sdctable_complete_table_with_a_hierarchy(shared_data):
    hierarchy = Hierarchy.from_frame(
        "V1",
        pl.DataFrame(
            {"a": ["A", "Ba", "Bb", "Bc", "C", "D"], "b": ["A", "B", "B", "B", "C", "D"], "c": ["Tot"] * 6}
        ),
    )
    frame = pl.read_csv(shared_data("sdcmicro", "table_completedat.csv"))
    spec = TableSpec(tables=(("V1", "V2", "V3"),), hierarchies={"V1": hierarchy})
    built = build_from_cells(frame, spec, frequency="Freq", total_label="Tot")
    assert built.n_cells == frame.height == 168
    assert built.is_additive()
    grand = built.cells.with_row_index().filter(pl.all_horizontal(pl.col("V1", "V2", "V3") == TOTAL))
    assert built.values[grand.get_column("index").item()] == 1000


# Primary rules (SPEC §8.2) -----------------------------------------------------------------------


def contributions_table(*cells: tuple[float, ...]) -> LinearTable:
    top = np.array([sorted(c, reverse=True)[:3] + [0.0] * (3 - len(c[:3])) for c in cells])
    return LinearTable(
        values=np.array([sum(c) for c in cells], dtype=float),
        relations=np.zeros((0, len(cells))),
        cells=pl.DataFrame({"cell": [str(i) for i in range(len(cells))]}),
        dimensions=("cell",),
        kind="magnitude",
        top=top,
        contributors=np.array([len(c) for c in cells]),
    )


def test_the_spec_examples_of_sensitivity_and_protection_levels():
    table = contributions_table((50, 30, 15, 5), (80, 10, 5, 5))
    p15 = primary_protection(table, [Rule.parse("p=15")])
    assert p15.primary.tolist() == [False, True]
    assert p15.upper.tolist() == [0, pytest.approx(2.0)]
    nk = primary_protection(table, [Rule.parse("n=2,k=85")])
    assert nk.primary.tolist() == [False, True]
    assert nk.upper[1] == pytest.approx(100 * 90 / 85 - 100)  # 5.882
    pq = primary_protection(table, [Rule.parse("p=25,q=50")])
    assert pq.primary[0] and pq.upper[0] == pytest.approx(2.5)
    assert pq.lower.tolist() == pq.upper.tolist()  # symmetric levels


def test_rules_combine_with_the_largest_level_and_both_names():
    table = contributions_table((80, 10, 5, 5), (7,), (40, 30, 30))
    protection = primary_protection(table, [Rule.parse("p=15"), Rule.parse("n=2,k=85"), Rule.parse("freq=3")])
    assert protection.rule.tolist() == ["p=15+n=2,k=85", "p=15+n=2,k=85+freq=3", ""]
    assert protection.upper[0] == pytest.approx(5.882352941)
    # One contributor: p% level 0.15 * 7 = 1.05, (n,k) level 7/0.85 - 7 = 1.235, frequency 0.7.
    assert protection.upper[1] == pytest.approx(100 / 85 * 7 - 7)


def test_the_pq_rule_with_q_100_is_the_p_percent_rule():
    rng = np.random.default_rng(5)
    cells = [tuple(rng.integers(1, 100, rng.integers(1, 6)).astype(float)) for _ in range(300)]
    table = contributions_table(*cells)
    a = primary_protection(table, [Rule.parse("p=20,q=100")])
    b = primary_protection(table, [Rule.parse("p=20")])
    assert np.array_equal(a.primary, b.primary)
    np.testing.assert_allclose(a.upper, b.upper)


def test_a_cell_of_zero_is_never_sensitive():
    table = contributions_table((0.0, 0.0), (5.0,))
    protection = primary_protection(table, [Rule.parse("p=10"), Rule.parse("n=1,k=50")])
    assert protection.primary.tolist() == [False, True]


@pytest.mark.parametrize(
    "text, message",
    [
        ("p=0", r"p must be in \(0, 100\)"),
        ("p=100", r"p must be in \(0, 100\), got 100"),
        ("p=150", r"p must be in \(0, 100\), got 150"),
        ("p=60,q=50", "needs 0 < p < q.*q ≤ p"),
        ("p=50,q=50", "needs 0 < p < q.*q ≤ p"),
        ("p=10,q=120", "needs 0 < p < q ≤ 100"),
        ("n=2.5,k=80", "n must be a whole number"),
        ("n=0,k=80", "n must be a whole number from 1 to 100"),
        ("n=101,k=80", "n must be a whole number from 1 to 100"),
        ("n=2,k=100", r"k must be in \(0, 100\)"),
        ("n=2,k=0", r"k must be in \(0, 100\)"),
        ("freq=3,ratio=1.5", r"ratio must be in \[0, 1\]"),
        ("k=80", "unknown rule"),
        ("p=ten", "p must be a number"),
        ("p=10,p=20", "p is given twice"),
        ("freq=0", "minimum frequency must be a whole number"),
        ("p", "write it as"),
    ],
)
def test_bad_rules_are_refused(text, message):
    with pytest.raises(ConfigError, match=message):
        Rule.parse(text)


def test_dominance_rules_refuse_frequency_tables_and_negative_contributions():
    frame = pl.DataFrame({"r": ["a", "a", "b"], "v": [10.0, -4.0, 2.0]})
    with pytest.raises(ConfigError, match="applies to a magnitude table"):
        make_problem(make_table(frame), TableSpec.of("r"), [Rule.parse("p=10")])
    with pytest.raises(InputError, match=r"'v' has 1 negative value \(first in record 2, -4\)"):
        make_problem(make_table(frame), TableSpec.of("r", value="v"), [Rule.parse("p=10")])
    # The frequency rule does not read contributions: negative values are a table's business.
    problem = make_problem(make_table(frame), TableSpec.of("r", value="v"), [Rule.parse("freq=2")])
    assert problem.protection.primary.sum() == 1


def test_make_problem_reads_as_many_contributions_as_the_rules_need():
    frame = random_records(6)
    problem = make_problem(
        make_table(frame), TableSpec.of("region", value="income"), [Rule.parse("n=3,k=70")]
    )
    assert problem.table.top.shape[1] == 3


@settings(max_examples=25)
@given(st.integers(0, 10_000), st.integers(1, 3), st.integers(2, 40))
def test_holding_contributions_equal_a_brute_force(seed, width, firms):
    frame = random_records(seed, n=80).with_columns(pl.col("firm") % firms)
    dims = ["region", "sex", "activity"][:width]
    built = build_table(make_table(frame), TableSpec.of(dims, value="income", holding="firm", top=3))
    for cell in range(built.n_cells):
        row = built.cells.row(cell, named=True)
        inside = frame.filter(
            pl.all_horizontal(pl.lit(row[d] == TOTAL) | (pl.col(d) == row[d]) for d in dims)
        )
        by_firm = (
            inside.group_by("firm").agg(pl.col("income").sum()).get_column("income").sort(descending=True)
        )
        assert built.contributors[cell] == by_firm.len()
        want = (by_firm.to_list() + [0.0] * 3)[:3]
        np.testing.assert_allclose(built.top[cell], want)
        assert built.values[cell] == pytest.approx(inside.get_column("income").sum())


@settings(max_examples=20)
@given(st.integers(0, 10_000), st.integers(2, 30))
def test_holding_contributions_with_a_hierarchy_equal_a_brute_force(seed, firms):
    frame = random_records(seed, n=80).with_columns(pl.col("firm") % firms)
    hierarchy = Hierarchy.from_frame(
        "activity",
        pl.DataFrame({"a": list("abcde"), "b": ["AB", "AB", "CDE", "CDE", "CDE"], "c": ["*"] * 5}),
    )
    leaves = {"AB": ["a", "b"], "CDE": ["c", "d", "e"], TOTAL: list("abcde")}
    spec = TableSpec.of(
        "activity", "sex", value="income", holding="firm", hierarchies={"activity": hierarchy}
    )
    built = build_table(make_table(frame), spec)
    assert built.is_additive()
    for cell in range(built.n_cells):
        row = built.cells.row(cell, named=True)
        members = pl.col("activity").is_in(leaves.get(row["activity"], [row["activity"]]))
        sexes = pl.lit(True) if row["sex"] == TOTAL else pl.col("sex") == row["sex"]
        by_firm = frame.filter(members & sexes).group_by("firm").agg(pl.col("income").sum())
        ordered = by_firm.get_column("income").sort(descending=True).to_list()
        assert built.contributors[cell] == len(ordered)
        np.testing.assert_allclose(built.top[cell], (ordered + [0.0, 0.0])[:2])
