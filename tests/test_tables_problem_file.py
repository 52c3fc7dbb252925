"""Problem files of linked tables (issue 31 item 3): ``sdckit table METHOD DATA --problem P.yaml``.

Tables that see one variable through different hierarchies are linked through the records their
cells have in common: a problem file gives the same cells, relations and suppression pattern as the
same tables built through the Python API, and as the tables built one by one and linked by hand (the
oracle); sdcTable's ``tests/testthat/test-linked-tables.r`` carries over (two hierarchies of one
region variable, safe one by one, one more suppression when linked); bad problem files are refused
with one message naming the file and line (exit 2, nothing written)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from scipy import sparse
from typer.testing import CliRunner

from conftest import make_table
from sdckit.cli import app
from sdckit.errors import ConfigError
from sdckit.hierarchy import Hierarchy
from sdckit.tabular.base import run_table_method
from sdckit.tabular.build import HierarchyView, TableSpec, build_table
from sdckit.tabular.model import TOTAL, LinearTable
from sdckit.tabular.problem import make_problem
from sdckit.tabular.problem_file import load_problem, parse_problem
from sdckit.tabular.rules import Rule, primary_protection
from sdckit.tabular.suppression import suppress

runner = CliRunner()

# sdcTable's test-linked-tables.r: eight regions with their counts, grouped in two ways that do not
# nest (counties; big and small), each table protected with the frequency rule "maxN = 3" (a count of
# 3 or less is sensitive: sdckit's freq=4, contributors < 4).
REGIONS = {"A": 2, "B": 2, "I": 8, "J": 8, "K": 3, "L": 3, "M": 3, "N": 7}
COUNTY = {"A": "county-1", "B": "county-1", "I": "county-1", "J": "county-1"} | dict.fromkeys(
    "KLMN", "county-2"
)
SIZE = dict.fromkeys("ABIJKN", "small") | dict.fromkeys("LM", "big")
LINKED = """tables:
  counties:
    dimensions:
      - {attribute: region, hierarchy: counties.csv}
  sizes:
    dimensions:
      - {attribute: region, hierarchy: sizes.csv}
"""


def run(*arguments: object):
    return runner.invoke(app, [str(argument) for argument in arguments])


def flat(text: str) -> str:
    return " ".join(re.sub("[│╭╮╰╯─]", " ", text).split())


def regions() -> pl.DataFrame:
    """One record per unit counted (sdcTable's data holds the counts)."""
    names = [name for name, count in REGIONS.items() for _ in range(count)]
    return pl.DataFrame({"region": names, "unit": range(len(names))})


@pytest.fixture
def linked(tmp_path):
    regions().write_csv(tmp_path / "data.csv")
    (tmp_path / "counties.csv").write_text("".join(f"{r};{c}\n" for r, c in COUNTY.items()))
    (tmp_path / "sizes.csv").write_text("".join(f"{r};{s}\n" for r, s in SIZE.items()))
    (tmp_path / "linked.yaml").write_text(LINKED)
    return tmp_path


def hierarchies(folder: Path) -> tuple[Hierarchy, Hierarchy]:
    return (
        Hierarchy.from_csv(folder / "counties.csv", "region"),
        Hierarchy.from_csv(folder / "sizes.csv", "region"),
    )


def relation_set(table: LinearTable) -> set[frozenset[tuple[str, float]]]:
    """The relations as sets of (cell label, coefficient): equal up to the order of cells and rows."""
    matrix = table.relations.tocsr()
    found = set()
    for row in range(matrix.shape[0]):
        start, end = matrix.indptr[row], matrix.indptr[row + 1]
        found.add(
            frozenset(
                (table.label(int(cell)), float(value))
                for cell, value in zip(matrix.indices[start:end], matrix.data[start:end], strict=True)
            )
        )
    return found


def labels(table: LinearTable) -> list[str]:
    return [table.label(cell) for cell in range(table.n_cells)]


def suppress_file(folder: Path, problem: str, *extra: object) -> dict:
    out, summary = folder / "out.csv", folder / "out.json"
    result = run(
        "table", "suppress", folder / "data.csv", "--problem", folder / problem, "--min-frequency", 4,
        "-o", out, "--summary", summary, "-q", *extra,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return {"summary": json.loads(summary.read_text()), "cells": pl.read_csv(out)}


# sdcTable's test-linked-tables.r -----------------------------------------------------------------


def test_each_table_alone_needs_no_secondary_suppression(linked):
    """Protected one by one, both tables are safe with their 5 primary cells (nrSecondSupps 0)."""
    for name in ("counties", "sizes"):
        table = f"tables:\n  {name}:\n    dimensions: [{{attribute: region, hierarchy: {name}.csv}}]\n"
        (linked / f"{name}.yaml").write_text(table)
        done = suppress_file(linked, f"{name}.yaml")
        assert done["summary"]["primary_cells"] == 5
        assert done["summary"]["secondary_cells"] == 0
        assert done["summary"]["audit_passed"]
        assert done["summary"]["table"]["names"] == [name]


@pytest.mark.parametrize("algorithm", ["optimal", "heuristic"])
def test_linked_tables_suppress_one_more_cell(linked, algorithm):
    """Linked, ``small − county-1 = K + N`` would disclose K (3) once N (7) is published: N is
    suppressed too, in both tables (it is one cell), and is the only secondary suppression."""
    done = suppress_file(linked, "linked.yaml", "--algorithm", algorithm)
    summary, cells = done["summary"], done["cells"]
    assert summary["primary_cells"] == 5 and summary["secondary_cells"] == 1
    assert summary["table"]["names"] == ["counties", "sizes"] and summary["problem"].endswith("linked.yaml")
    assert sorted(cells.filter(pl.col("status") == "primary").get_column("region")) == list("ABKLM")
    secondary = cells.filter(pl.col("status") == "secondary")
    assert secondary.get_column("region").to_list() == ["N"]
    assert secondary.get_column("frequency").to_list() == [7]
    # Every code once: the regions the two hierarchies share, each grouping, one total.
    assert sorted(cells.get_column("region")) == sorted(
        [*REGIONS, "county-1", "county-2", "big", "small", TOTAL]
    )


def test_the_union_of_the_safe_patterns_fails_the_linked_audit(linked):
    """The attack of test-linked-tables.r: suppress only the primary cells of both tables (each safe
    alone); the audit of the linked tables finds K disclosed."""
    pattern = linked / "pattern.csv"
    status = {name: ("primary" if count <= 3 else "published") for name, count in REGIONS.items()}
    rows = [
        *status.items(),
        *((code, "published") for code in ("county-1", "county-2", "big", "small", TOTAL)),
    ]
    pl.DataFrame({"region": [r for r, _ in rows], "status": [s for _, s in rows]}).write_csv(pattern)
    out = linked / "audit.csv"
    result = run(
        "table", "audit", linked / "data.csv", "--problem", linked / "linked.yaml", "--min-frequency", 4,
        "--pattern", pattern, "-o", out,
    )  # fmt: skip
    assert result.exit_code == 3, result.output
    audit = pl.read_csv(out).filter(pl.col("region") == "K")
    assert audit.get_column("feasible_low").to_list() == [3] and audit.get_column(
        "feasible_high"
    ).to_list() == [3]


def test_a_table_of_cells_links_the_same_way(linked):
    """sdcTable's input itself: one row per region with its count (``--cells --frequency n``)."""
    cells = pl.DataFrame({"region": list(REGIONS), "n": list(REGIONS.values())})
    cells.write_csv(linked / "cells.csv")
    out = linked / "out.csv"
    result = run(
        "table", "suppress", linked / "cells.csv", "--cells", "--frequency", "n", "--problem",
        linked / "linked.yaml", "--min-frequency", 4, "-o", out, "-q",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    frame = pl.read_csv(out)
    assert frame.filter(pl.col("status") == "secondary").get_column("region").to_list() == ["N"]


# The problem file, the Python API and the oracle agree ----------------------------------------------


def test_a_problem_file_builds_what_the_python_api_builds(linked):
    counties, sizes = hierarchies(linked)
    loaded = load_problem(linked / "linked.yaml")
    spec = TableSpec(
        tables=(("region",), ("region",)), table_hierarchies=({"region": counties}, {"region": sizes})
    )
    source = make_table(regions())
    rules = [Rule.parse("freq=4")]
    by_file, by_api = make_problem(source, loaded.spec(), rules), make_problem(source, spec, rules)
    assert labels(by_file.table) == labels(by_api.table)
    assert relation_set(by_file.table) == relation_set(by_api.table)
    assert np.array_equal(by_file.table.values, by_api.table.values)
    # the command line: the same cells, statuses and cost as the registered method on the API's problem
    done = suppress_file(linked, "linked.yaml")
    expected = run_table_method("suppress", by_api)
    frame = expected.frame()
    assert done["cells"].get_column("region").to_list() == frame.get_column("region").to_list()
    assert done["cells"].get_column("status").to_list() == frame.get_column("status").to_list()
    assert done["summary"]["cost"] == pytest.approx(expected.figures["cost"])


def linked_by_hand(parts: list[LinearTable], links: list[dict[str, float]] = ()) -> LinearTable:
    """The oracle: tables built one by one, their cells with the same labels identified as one cell,
    their relations stacked, and ``links`` (cell label → coefficient) added."""
    names = list(dict.fromkeys(label for part in parts for label in labels(part)))
    index = {label: cell for cell, label in enumerate(names)}
    values = np.zeros(len(names))
    rows: list[dict[int, float]] = []
    for part in parts:
        for cell, label in enumerate(labels(part)):
            values[index[label]] = part.values[cell]
        matrix = part.relations.tocsr()
        for row in range(matrix.shape[0]):
            start, end = matrix.indptr[row], matrix.indptr[row + 1]
            rows.append(
                {
                    index[labels(part)[c]]: v
                    for c, v in zip(matrix.indices[start:end], matrix.data[start:end], strict=True)
                }
            )
    rows += [{index[label]: value for label, value in link.items()} for link in links]
    relations = sparse.lil_matrix((len(rows), len(names)))
    for row, entries in enumerate(rows):
        for cell, value in entries.items():
            relations[row, cell] = value
    split = [dict(part.split("=", 1) for part in name.split(", ")) for name in names]
    dims = parts[0].dimensions
    cells = pl.DataFrame({dim: [cell.get(dim, TOTAL) for cell in split] for dim in dims})
    return LinearTable(values=values, relations=relations.tocsr(), cells=cells, dimensions=dims)


def same_row_space(one: sparse.spmatrix, other: sparse.spmatrix) -> bool:
    a, b = one.toarray(), other.toarray()
    rank = np.linalg.matrix_rank
    return rank(a) == rank(b) == rank(np.vstack([a, b]))


def test_two_groupings_that_do_not_nest_against_the_oracle(linked):
    """sdcTable's tables built one by one and linked through their common cells (the regions and the
    total): the same cells, every relation of each table, relations spanning the same space (the sums
    the linked build adds are consequences here), and the same optimal pattern and cost."""
    counties, sizes = hierarchies(linked)
    source = make_table(regions())
    one = build_table(source, TableSpec(tables=(("region",),), hierarchies={"region": counties}))
    two = build_table(source, TableSpec(tables=(("region",),), hierarchies={"region": sizes}))
    oracle = linked_by_hand([one, two])
    built = make_problem(source, load_problem(linked / "linked.yaml").spec()).table
    order = [labels(oracle).index(label) for label in labels(built)]
    assert sorted(labels(built)) == sorted(labels(oracle))
    assert np.array_equal(built.values, oracle.values[order])
    assert relation_set(oracle) <= relation_set(built)
    assert same_row_space(built.relations, oracle.relations[:, order])
    protect = [primary_protection(t, [Rule.parse("freq=4")]) for t in (built, oracle)]
    (mine, figures), (theirs, expected) = (
        suppress(t, p, algorithm="optimal") for t, p in zip((built, oracle), protect, strict=True)
    )
    assert np.array_equal(mine, theirs[order])
    assert figures["cost"] == pytest.approx(expected["cost"]) == pytest.approx(7)


MUNICIPALITIES = {"m1": "P1", "m2": "P1", "m3": "P1", "m4": "P2", "m5": "P2", "m6": "P3"}


def towns(n: int = 300, seed: int = 3) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    town = rng.choice(list(MUNICIPALITIES), n, p=[0.3, 0.1, 0.05, 0.3, 0.05, 0.2])
    return pl.DataFrame(
        {
            "town": town,
            "province": [MUNICIPALITIES[t] for t in town],
            "sex": rng.choice(["f", "m"], n),
            "income": np.round(rng.lognormal(3, 1.5, n), 1),
        }
    )


def test_a_province_table_and_a_municipality_table_against_the_oracle(tmp_path):
    """One table by province (level 1 of the town's hierarchy), one by municipality without
    subtotals: the oracle is the province table built from a province column, the municipality table,
    and "province = Σ its municipalities" at every sex, which no single table holds."""
    frame = towns()
    frame.write_csv(tmp_path / "data.csv")
    (tmp_path / "towns.csv").write_text("".join(f"{t};{p};*\n" for t, p in MUNICIPALITIES.items()))
    (tmp_path / "p.yaml").write_text(
        "value: income\ntables:\n"
        "  provinces:\n    dimensions: [{attribute: town, hierarchy: towns.csv, level: 1}, sex]\n"
        "  towns:\n    dimensions: [{attribute: town, subtotals: false}, sex]\n"
    )
    source = make_table(frame)
    built = make_problem(source, load_problem(tmp_path / "p.yaml").spec()).table
    provinces = build_table(
        make_table(frame.drop("town").rename({"province": "town"})),
        TableSpec.of("town", "sex", value="income"),
    )
    # P3 has one municipality, m6: the same cells, named as the first table (provinces) names them
    same = frame.with_columns(pl.col("town").replace("m6", "P3"))
    municipalities = build_table(make_table(same), TableSpec.of("town", "sex", value="income"))
    links = [
        {
            f"town={p}, sex={s}": -1.0,
            **{f"town={t}, sex={s}": 1.0 for t, q in MUNICIPALITIES.items() if q == p},
        }
        for p in ("P1", "P2")
        for s in ("f", "m", TOTAL)
    ]
    oracle = linked_by_hand([provinces, municipalities], links)
    assert sorted(labels(built)) == sorted(labels(oracle))
    order = [labels(oracle).index(label) for label in labels(built)]
    assert np.allclose(built.values, oracle.values[order])
    assert relation_set(built) == relation_set(oracle)
    rules = [Rule.parse("p=20"), Rule.parse("freq=3")]
    problem = make_problem(source, load_problem(tmp_path / "p.yaml").spec(), rules)
    assert problem.protection.primary.any()
    mine, figures = suppress(problem.table, problem.protection, algorithm="optimal")
    reordered = LinearTable(
        values=oracle.values[order], relations=oracle.relations[:, order], cells=built.cells,
        dimensions=built.dimensions, kind="magnitude", top=built.top, contributors=built.contributors,
    )  # fmt: skip
    theirs, expected = suppress(reordered, problem.protection, algorithm="optimal")
    assert figures["cost"] == pytest.approx(expected["cost"])
    assert np.array_equal(mine, theirs)


def test_one_hierarchy_for_all_is_the_table_option(tmp_path):
    """A problem file without hierarchies of its own builds what ``--table`` builds."""
    frame = towns()
    frame.write_csv(tmp_path / "data.csv")
    (tmp_path / "p.yaml").write_text(
        "tables:\n  a: {dimensions: [town, sex]}\n  b: {dimensions: [town, province]}\n"
    )
    source = make_table(frame)
    by_file = make_problem(source, load_problem(tmp_path / "p.yaml").spec()).table
    by_option = build_table(source, TableSpec(tables=(("town", "sex"), ("town", "province"))))
    assert labels(by_file) == labels(by_option)
    assert (by_file.relations != by_option.relations).nnz == 0


def test_every_method_takes_a_problem_file(tmp_path):
    frame = towns()
    frame.write_csv(tmp_path / "data.csv")
    (tmp_path / "towns.csv").write_text("".join(f"{t};{p};*\n" for t, p in MUNICIPALITIES.items()))
    (tmp_path / "p.yaml").write_text(
        "tables:\n"
        "  provinces:\n    dimensions: [{attribute: town, hierarchy: towns.csv, level: 1}, sex]\n"
        "  towns:\n    dimensions: [{attribute: town, subtotals: false}, sex]\n"
    )
    data, problem = tmp_path / "data.csv", tmp_path / "p.yaml"
    out = tmp_path / "rounded.csv"
    assert run("table", "round", data, "--problem", problem, "--base", 5, "-o", out, "-q").exit_code == 0
    rounded = pl.read_csv(out)
    keys = rounded.select(pl.concat_str("town", "sex", separator="|")).to_series()
    value = dict(zip(keys, rounded["released"], strict=True))
    assert all(v % 5 == 0 for v in value.values())
    for sex in ("f", "m", TOTAL):  # the linked sum holds in the published table
        assert value[f"P1|{sex}"] == value[f"m1|{sex}"] + value[f"m2|{sex}"] + value[f"m3|{sex}"]
    for method, options in (("cta", ["--min-frequency", 10]), ("cell-key", ["--seed", 1])):
        result = run(
            "table", method, data, "--problem", problem, *options, "-o", tmp_path / f"{method}.csv", "-q"
        )
        assert result.exit_code == 0, result.output


# Bad problem files -------------------------------------------------------------------------------


BAD = [
    (
        "tables:\n  a:\n    dimensions:\n      - {attribute: region, levl: 1}\n",
        "p.yaml:4: unknown key 'levl' in tables.a.dimensions[0]; did you mean 'level'?",
    ),
    ("tables:\n  a:\n    dimension: [region]\n", "p.yaml:3: unknown key 'dimension' in tables.a"),
    ("value: n\n", "p.yaml: missing key 'tables'"),
    ("tables: {}\n", "p.yaml:1: tables must not be empty"),
    ("tables:\n  a: {dimensions: []}\n", "p.yaml:2: tables.a.dimensions must not be empty"),
    ("tables:\n  a: {dimensions: [3]}\n", "must be an attribute name or a mapping with 'attribute'"),
    (
        "tables:\n  a:\n    dimensions:\n      - {attribute: region, level: -1}\n",
        "level must be a whole number",
    ),
    (
        "tables:\n  a: {dimensions: [region, region]}\n",
        "p.yaml:2: table 'a': attribute 'region' is a dimension twice",
    ),
    ("tables:\n  a: {dimensions: [regoin]}\n", "table 'a': unknown attribute 'regoin'"),
    ("tables:\n  a: {dimensions: [region]}\nvalue: income\n", "value: unknown attribute 'income'"),
    (
        "tables:\n  a:\n    dimensions:\n      - {attribute: region, hierarchy: none.csv}\n",
        "p.yaml:4: table 'a': hierarchy for 'region': no such file",
    ),
    (
        "tables:\n  a:\n    dimensions:\n      - {attribute: region, hierarchy: counties.csv, level: 2}\n",
        "p.yaml:4: table 'a': level 2 is not a level of",
    ),
    (
        "tables:\n  a:\n    dimensions:\n      - {attribute: region, level: 1}\n",
        "table 'a' (region), dimension 'region': level 1 needs a hierarchy",
    ),
    (
        "tables:\n  a:\n    dimensions:\n      - {attribute: region, hierarchy: counties.csv}\n"
        "  b:\n    dimensions:\n      - {attribute: region, hierarchy: other.csv}\n",
        "dimension 'region': code 'county-2' stands for different values",
    ),
    (
        "tables:\n  a:\n    dimensions:\n      - {attribute: region, hierarchy: short.csv}\n",
        "does not cover",
    ),
    ("tables:\n  a: [region\n", "p.yaml:3: YAML syntax error"),
    ("", "p.yaml: the problem file is empty"),
    ("- region\n", "the problem file must be a mapping with 'tables'"),
]


@pytest.mark.parametrize(("text", "message"), BAD, ids=[f"bad-{i}" for i in range(len(BAD))])
def test_a_bad_problem_file_is_one_message(linked, text, message):
    (linked / "other.csv").write_text("A;county-2\nB;county-2\nI;x\nJ;x\nK;x\nL;x\nM;x\nN;x\n")
    (linked / "short.csv").write_text("A;county-1\nB;county-1\n")
    (linked / "p.yaml").write_text(text)
    out = linked / "out.csv"
    result = run(
        "table",
        "suppress",
        linked / "data.csv",
        "--problem",
        linked / "p.yaml",
        "--min-frequency",
        4,
        "-o",
        out,
    )
    assert result.exit_code == 2, result.output
    assert message in flat(result.output)
    assert "Traceback" not in result.output and not out.exists()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--rows", "region"], "--problem and --rows: give the tables either in the problem file or with"),
        (["--table", "region", "--cols", "unit"], "--problem and --cols, --table"),
        (["--argus", "argus"], "--argus: the tables of"),
    ],
)
def test_the_problem_file_replaces_the_table_options(linked, options, message):
    options = [linked / option if option == "argus" else option for option in options]
    out = linked / "out.csv"
    result = run(
        "table", "suppress", linked / "data.csv", "--problem", linked / "linked.yaml", "--min-frequency", 4,
        "-o", out, *options,
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert message in flat(result.output)
    assert not out.exists()


def test_value_and_holding_are_given_once(tmp_path):
    towns().write_csv(tmp_path / "data.csv")
    (tmp_path / "p.yaml").write_text("value: income\ntables:\n  a: {dimensions: [town, sex]}\n")
    result = run(
        "table", "round", tmp_path / "data.csv", "--problem", tmp_path / "p.yaml", "--value", "income"
    )
    assert result.exit_code == 2
    assert "--value income and value: income in" in flat(result.output)
    result = run("table", "round", tmp_path / "data.csv", "--problem", tmp_path / "missing.yaml")
    assert result.exit_code == 2 and "no such problem file" in flat(result.output)


def test_parse_errors_name_every_problem_in_file_order():
    text = "tables:\n  a:\n    dimensions:\n      - {attribute: x, subtotals: maybe}\n  b: {dims: [x]}\n"
    with pytest.raises(ConfigError) as caught:
        parse_problem(text, "p.yaml")
    lines = str(caught.value).splitlines()
    assert lines[0].startswith("p.yaml:4: tables.a.dimensions[0].subtotals must be true or false")
    assert any(line.startswith("p.yaml:5: unknown key 'dims' in tables.b") for line in lines)


def test_a_view_of_the_configuration_hierarchy(tmp_path):
    """``level`` and ``subtotals`` read the configuration's hierarchy when the table names no file."""
    frame = towns()
    hierarchy = Hierarchy.from_rows("town", [[t, p, "*"] for t, p in MUNICIPALITIES.items()])
    source = make_table(frame)
    spec = TableSpec(
        tables=(("town", "sex"), ("town",)),
        hierarchies={"town": hierarchy},
        table_hierarchies=({"town": HierarchyView(level=1)}, {"town": HierarchyView(subtotals=False)}),
    )
    built = build_table(source, spec)
    assert built.is_additive()
    towns_of = set(built.cells.filter(pl.col("sex") != TOTAL).get_column("town"))
    assert towns_of == {"P1", "P2", "P3", TOTAL}
    # P3's only town m6 is the province: one cell, named as the first table names it
    assert set(built.cells.get_column("town")) == {*MUNICIPALITIES, "P1", "P2", "P3", TOTAL} - {"m6"}
    with pytest.raises(ConfigError, match="level 3 is not a level of its hierarchy"):
        build_table(source, TableSpec(tables=(("town",),), hierarchies={"town": hierarchy},
                                      table_hierarchies=({"town": HierarchyView(level=3)},)))  # fmt: skip


def test_a_table_at_a_level_is_the_table_of_that_level(tmp_path):
    """One table at level 1 of the town's hierarchy (more towns than provinces: the records' leaves
    outnumber the table's nodes) is the table of a province column."""
    frame = towns()
    (tmp_path / "towns.csv").write_text("".join(f"{t};{p};*\n" for t, p in MUNICIPALITIES.items()))
    (tmp_path / "p.yaml").write_text(
        "value: income\ntables:\n  a:\n"
        "    dimensions: [sex, {attribute: town, hierarchy: towns.csv, level: 1}]\n"
    )
    built = make_problem(make_table(frame), load_problem(tmp_path / "p.yaml").spec(), [Rule.parse("p=20")])
    by_column = make_problem(
        make_table(frame.drop("town").rename({"province": "town"})),
        TableSpec.of("sex", "town", value="income"),
        [Rule.parse("p=20")],
    )
    assert labels(built.table) == labels(by_column.table)
    assert np.allclose(built.table.values, by_column.table.values)
    assert np.allclose(built.table.top, by_column.table.top)
    assert relation_set(built.table) == relation_set(by_column.table)
    assert np.array_equal(built.protection.primary, by_column.protection.primary)
