"""τ-Argus export: exact files for a small hierarchical table, rule translation, codes τ-Argus cannot
read, linked tables, and a round trip of the .tab through build_from_cells."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from sdckit.errors import ConfigError, InputError
from sdckit.hierarchy import Hierarchy
from sdckit.table import Table
from sdckit.tabular.argus import write_argus
from sdckit.tabular.base import TableProblem, pattern_status
from sdckit.tabular.build import TableSpec, build_from_cells, build_table
from sdckit.tabular.model import LinearTable, Protection
from sdckit.tabular.rules import Rule, primary_protection

DATA = pl.DataFrame(
    {
        "region": ["n1", "n1", "n2", "s1", "s1", "s2", "n2", "s2"],
        "sex": ["m", "f", "m", "f", "m", "f", "f", "m"],
        "income": [10.0, 20.0, 30.0, 5.0, 100.0, 7.0, 8.0, 9.0],
    }
)
REGIONS = Hierarchy.from_rows("region", [["n1", "N"], ["n2", "N"], ["s1", "S"], ["s2", "S"]])
RULES = [Rule.parse("p=10"), Rule.parse("freq=2")]


def problem(data: pl.DataFrame = DATA, spec: TableSpec | None = None, rules=RULES) -> TableProblem:
    spec = spec or TableSpec.of("region", "sex", value="income", hierarchies={"region": REGIONS})
    source = Table.from_frame(data)
    table = build_table(source, spec)
    return TableProblem(table, primary_protection(table, rules), source, spec)


def files(paths):
    return {path.name: path.read_text(encoding="utf-8") for path in paths}


def test_golden_files_of_a_hierarchical_magnitude_table(tmp_path):
    paths = write_argus(problem(), RULES, tmp_path)
    assert [p.name for p in paths] == ["table_region.hrc", "table.tab", "table.rda", "table.arb"]
    text = files(paths)
    assert text["table_region.hrc"] == "N\n@n1\n@n2\nS\n@s1\n@s2\n"
    assert text["table.rda"] == (
        '<SEPARATOR> ";"\n<SAFE> "S"\n<UNSAFE> "U"\n<PROTECT> "P"\n'
        'region\n  <RECODEABLE>\n  <TOTCODE> "Total"\n  <HIERARCHICAL>\n'
        '  <HIERCODELIST> "table_region.hrc"\n  <HIERLEADSTRING> "@"\n'
        'sex\n  <RECODEABLE>\n  <TOTCODE> "Total"\n'
        "income\n  <NUMERIC>\n  <DECIMALS> 0\n"
        "freq\n  <FREQUENCY>\n"
        "top1\n  <MAXSCORE>\n  <DECIMALS> 0\n"
        "top2\n  <MAXSCORE>\n  <DECIMALS> 0\n"
    )
    assert text["table.arb"] == (
        "// tau-Argus batch written by sdckit\n"
        "// run: TauArgus.exe table.arb\n"
        '<OPENTABLEDATA> "table.tab"\n'
        '<OPENMETADATA> "table.rda"\n'
        '<SPECIFYTABLE> "region""sex"|"income"||\n'
        "<SAFETYRULE> P(10,1)|FREQ(2,10)\n"
        "<READTABLE> 1\n"
        "<SUPPRESS> OPT(1,600)\n"
        '<WRITETABLE> (1,2,AS+,"table_safe.csv")\n'
    )
    lines = text["table.tab"].splitlines()
    assert len(lines) == 21  # 4 regions + 2 subtotals + Total, times f, m, Total
    assert lines[:6] == [
        "n1;f;20;1;20;0",
        "n1;m;10;1;10;0",
        "n1;Total;30;2;20;10",
        "n2;f;8;1;8;0",
        "n2;m;30;1;30;0",
        "n2;Total;38;2;30;8",
    ]
    assert "N;Total;68;4;30;20" in lines
    assert lines[-1] == "Total;Total;189;8;100;30"


def test_a_pattern_is_handed_over_with_status_levels_and_secondaries(tmp_path):
    prob = problem()
    table = prob.table
    labels = [table.label(i) for i in range(table.n_cells)]
    suppressed = prob.protection.primary.copy()
    extra = labels.index("region=Total, sex=f")
    suppressed[extra] = True
    status = pattern_status(prob.protection, suppressed)
    paths = write_argus(prob, RULES, tmp_path, "p", method="modular", status=status)
    text = files(paths)
    assert text["p.hst"] == "Total;f;m\n"
    arb = text["p.arb"].splitlines()
    assert "<SAFETYRULE> MAN(0)" in arb
    assert "// sdckit's pattern; its primary rules were: P(10,1)|FREQ(2,10)" in arb
    assert arb.index('<APRIORI> "p.hst",1,";",0,0') == arb.index("<READTABLE> 1") + 1
    assert "<SUPPRESS> MOD(1,600,1,1,1)" in arb
    assert text["p.rda"].endswith(
        "status\n  <STATUS>\nlpl\n  <NUMERIC> <LOWERPL>\n  <DECIMALS> 1\n"
        "upl\n  <NUMERIC> <UPPERPL>\n  <DECIMALS> 1\n"
    )
    rows = [line.split(";") for line in text["p.tab"].splitlines()]
    by_cell = {(r[0], r[1]): r for r in rows}
    # n1 x f: one contributor of 20, primary by freq=2 with level 10% of 20 = 2.
    assert by_cell[("n1", "f")][6:] == ["U", "2.0", "2.0"]
    # the secondary cell is safe in the status column: tau-Argus reads S/U/P only; the .hst marks it m.
    assert by_cell[("Total", "f")][6] == "S"
    assert sum(r[6] == "U" for r in rows) == int(prob.protection.primary.sum())
    upper = prob.protection.upper
    for i, label in enumerate(labels):
        region, sex = (part.split("=")[1] for part in label.split(", "))
        expected = upper[i] if prob.protection.primary[i] else 0.0
        assert float(by_cell[(region, sex)][8]) == pytest.approx(expected)


def test_rules_are_translated_as_tau_argus_reads_them(tmp_path):
    rules = [Rule.parse("p=25,q=50"), Rule.parse("n=2,k=85"), Rule.parse("freq=3,ratio=0.15")]
    write_argus(problem(rules=rules), rules, tmp_path)
    arb = (tmp_path / "table.arb").read_text()
    assert "<SAFETYRULE> P(25,50,1)|NK(2,85)|FREQ(3,15)\n" in arb
    for bad, words in [
        ([Rule.parse("p=12.5")], "whole numbers only, and p is 12.5"),
        ([Rule.parse("p=10"), Rule.parse("p=15"), Rule.parse("p=20")], "at most two p%/pq rules"),
        ([Rule.parse("freq=3"), Rule.parse("freq=4")], "one frequency rule"),
        ([], "at least one primary rule"),
    ]:
        with pytest.raises(ConfigError, match=words):
            write_argus(problem(), bad, tmp_path / "bad")


def test_methods_map_to_tau_argus_commands(tmp_path):
    prob = problem()
    expected = {
        "suppress": "OPT(1,60)",
        "hypercube": "GH(1,0,1)",
        "cta": "CTA(1)",
        "modular": "MOD(1,60,1,1,1)",
    }
    for method, command in expected.items():
        write_argus(prob, RULES, tmp_path, method, method=method, time_limit=60)
        assert f"<SUPPRESS> {command}\n" in (tmp_path / f"{method}.arb").read_text()
    write_argus(prob, RULES, tmp_path, "r", method="round", round_base=5)
    assert "<SUPPRESS> RND(1,5)\n" in (tmp_path / "r.arb").read_text()
    with pytest.raises(ConfigError, match="rounding base"):
        write_argus(prob, RULES, tmp_path, "r", method="round")
    with pytest.raises(ConfigError, match="unknown τ-Argus method 'optimal'"):
        write_argus(prob, RULES, tmp_path, method="optimal")


def test_dominance_rules_on_a_frequency_table_are_refused(tmp_path):
    table = LinearTable.from_array([[1, 4], [5, 2]], ("a", "b"))
    prob = TableProblem(table, Protection.none(table.n_cells))
    with pytest.raises(ConfigError, match="magnitude tables only"):
        write_argus(prob, [Rule.parse("n=1,k=80")], tmp_path)
    paths = write_argus(prob, [Rule.parse("freq=3")], tmp_path)
    assert [p.name for p in paths] == ["table.tab", "table.rda", "table.arb"]
    assert (tmp_path / "table.tab").read_text().splitlines()[:3] == ["1;1;1;1", "1;2;4;4", "1;Total;5;5"]
    rda = (tmp_path / "table.rda").read_text()
    assert "count\n  <NUMERIC>\n  <DECIMALS> 0\nfreq\n  <FREQUENCY>\n" in rda
    assert "MAXSCORE" not in rda


def test_codes_with_spaces_are_quoted_and_unreadable_codes_refused(tmp_path):
    data = DATA.with_columns(pl.col("sex").replace({"m": "male x", "f": "fe male"}))
    spec = TableSpec.of("region", "sex", value="income")
    write_argus(problem(data, spec), RULES, tmp_path)
    lines = (tmp_path / "table.tab").read_text().splitlines()
    assert lines[0].startswith('n1;"fe male";20;')
    for code, words in [("a;b", "contains the separator ';'"), ('say "x"', "double quote"), (" m", "space")]:
        bad = DATA.with_columns(pl.col("sex").replace({"m": code}))
        with pytest.raises(InputError, match=f"dimension 'sex': code .* {words}"):
            write_argus(problem(bad, spec), RULES, tmp_path / "bad")
    hierarchy = Hierarchy.from_rows("region", [["n1", "@N"], ["n2", "@N"], ["s1", "S"], ["s2", "S"]])
    spec = TableSpec.of("region", "sex", value="income", hierarchies={"region": hierarchy})
    with pytest.raises(InputError, match="code '@N' begins with the hierarchy lead string"):
        write_argus(problem(DATA, spec), RULES, tmp_path / "bad")


def read_tab(directory, name: str) -> pl.DataFrame:
    """The .tab read back with the column names of its .rda (a line not starting with '<' names one)."""
    rda = (directory / f"{name}.rda").read_text().splitlines()
    names = [line.strip().strip('"') for line in rda if not line.startswith((" ", "<"))]
    return pl.read_csv(
        directory / f"{name}.tab",
        separator=";",
        has_header=False,
        new_columns=names,
        quote_char='"',
        schema_overrides=dict.fromkeys(names[:2], pl.String),
    )


def test_the_tab_file_rebuilds_the_same_table(tmp_path):
    prob = problem()
    write_argus(prob, RULES, tmp_path)
    frame = read_tab(tmp_path, "table")
    assert frame.height == prob.table.n_cells
    # build_from_cells checks every written subtotal and total against the sum of its cells
    rebuilt = build_from_cells(frame, prob.spec, frequency="freq")
    assert rebuilt.is_additive()
    original = prob.table.cells.with_columns(value=pl.Series(prob.table.values))
    again = rebuilt.cells.with_columns(again=pl.Series(rebuilt.values))
    joined = original.join(again, on=["region", "sex"], how="full", coalesce=True)
    assert joined.height == prob.table.n_cells
    np.testing.assert_array_equal(joined["value"].to_numpy(), joined["again"].to_numpy())


def test_non_integer_values_keep_their_decimals(tmp_path):
    data = DATA.with_columns(pl.col("income") + 0.25)
    prob = problem(data, TableSpec.of("region", "sex", value="income"))
    write_argus(prob, RULES, tmp_path)
    assert "income\n  <NUMERIC>\n  <DECIMALS> 2\n" in (tmp_path / "table.rda").read_text()
    frame = read_tab(tmp_path, "table")
    rebuilt = build_from_cells(frame, prob.spec, frequency="freq")
    assert sorted(rebuilt.values) == pytest.approx(sorted(prob.table.values), abs=1e-12)


def test_linked_tables_get_one_file_each_and_a_linked_suppression(tmp_path):
    data = DATA.with_columns(size=pl.Series(["a", "b", "a", "b", "a", "b", "b", "a"]))
    spec = TableSpec(tables=(("region", "sex"), ("region", "size")), value="income")
    prob = problem(data, spec)
    paths = write_argus(prob, RULES, tmp_path, "link")
    names = [p.name for p in paths]
    assert names == ["link_1.tab", "link_1.rda", "link_2.tab", "link_2.rda", "link.arb"]
    arb = (tmp_path / "link.arb").read_text()
    assert arb.count("<SPECIFYTABLE>") == 2
    assert '<SPECIFYTABLE> "region""size"|"income"||' in arb
    assert "<SUPPRESS> MOD(0,600,1,1,1)\n" in arb
    assert '<WRITETABLE> (2,2,AS+,"link_2_safe.csv")' in arb
    first = (tmp_path / "link_1.tab").read_text().splitlines()
    second = (tmp_path / "link_2.tab").read_text().splitlines()
    assert len(first) == 5 * 3 and len(second) == 5 * 3  # 4 regions + Total, by 2 categories + Total
    assert all(line.count(";") == 5 for line in first + second)  # 2 codes, value, freq, 2 tops
    assert "Total;Total;189;8;100;30" in first and "Total;Total;189;8;100;30" in second
    with pytest.raises(ConfigError, match="linked tables"):
        write_argus(prob, RULES, tmp_path, method="cta")


def test_a_table_of_cells_is_written_without_contributions(tmp_path):
    cells = pl.DataFrame(
        {"a": ["x", "x", "y", "y"], "b": ["u", "v", "u", "v"], "v": [1.5, 2.0, 3.0, 4.0], "n": [1, 1, 1, 1]}
    )
    spec = TableSpec.of("a", "b", value="v")
    table = build_from_cells(cells, spec, frequency="n")
    prob = TableProblem(table, primary_protection(table, [Rule.parse("freq=2")]), None, spec)
    write_argus(prob, [Rule.parse("freq=2")], tmp_path)
    rda = (tmp_path / "table.rda").read_text()
    assert "MAXSCORE" not in rda
    assert (tmp_path / "table.tab").read_text().splitlines()[0] == "x;u;1.5;1"
