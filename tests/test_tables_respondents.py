"""The respondent attacker of tabular suppression (issue 31): singletons, holdings, coalitions.

Each protection is attacked as the insider it claims to stop: a brute-force respondent written here
(enumerating the other cells' values, apart from the library's linear programs) recomputes what a
contributor learns from a pattern, and sdcTable's own singleton case (``test-protectTable.r``:
regions a, b, b, c; minimum frequency 2; 0 secondary suppressions without ``detectSingletons`` and 1
with it) is reproduced through the command line.
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from sdckit.cli import app
from sdckit.errors import ConfigError
from sdckit.tabular.attacker import audit
from sdckit.tabular.base import TABLE_METHODS, TableProblem, run_table_method
from sdckit.tabular.model import LinearTable, Protection
from sdckit.tabular.respondents import (
    Respondent,
    holding_respondents,
    respondent_attack,
    respondents,
)
from sdckit.tabular.rules import Rule, primary_protection

runner = CliRunner()


def sdctable_singletons() -> tuple[LinearTable, Protection]:
    """sdcTable's singleton case: region a 1, b 2, c 1, d 0 and the total 4; frequency < 2 flagged."""
    table = LinearTable.from_array([1, 2, 1, 0], ("region",))
    return table, primary_protection(table, [Rule.parse("freq=2")])


def brute_interval(table: LinearTable, suppressed: np.ndarray, known: dict[int, float], cell: int):
    """The values a respondent who knows the cells of ``known`` exactly finds possible for ``cell``,
    by enumerating whole values 0..total of the other suppressed cells of a one-relation table."""
    total = int(table.values[-1])
    free = [i for i in np.flatnonzero(suppressed) if i not in known and i != table.n_cells - 1]
    possible = set()
    for values in itertools.product(range(total + 1), repeat=len(free)):
        y = table.values.copy()
        y[free] = values
        for i, v in known.items():
            y[i] = v
        if abs(y[:-1].sum() - y[-1]) < 1e-9:
            possible.add(float(y[cell]))
    return min(possible), max(possible)


def test_two_singletons_in_one_relation_undo_each_other():
    table, protection = sdctable_singletons()
    a, c = 0, 2
    assert protection.primary.tolist() == [True, False, True, False, False]
    pattern = protection.primary.copy()  # a and c suppressed: a + c = 2 for the outside attacker
    found = respondents(table, protection, pattern)
    failures = respondent_attack(table, pattern, protection, found)
    assert {(f.cell, f.respondent) for f in failures} == {
        (c, "the only contributor of region=1"),
        (a, "the only contributor of region=3"),
    }
    # the brute-force respondent agrees: a's contributor pins c down, and the other way round
    assert brute_interval(table, pattern, {a: 1.0}, c) == (1.0, 1.0)
    assert brute_interval(table, pattern, {c: 1.0}, a) == (1.0, 1.0)
    # the outside attacker alone approves the pattern: a in [0, 2]
    assert respondent_attack(table, pattern, protection, []) == []


@pytest.mark.parametrize("algorithm", ["optimal", "heuristic"])
def test_every_suppression_algorithm_protects_the_singletons(algorithm):
    table, protection = sdctable_singletons()
    problem = TableProblem(table=table, protection=protection)
    alone = run_table_method("suppress", problem, {"algorithm": algorithm, "singletons": "none"})
    assert int((alone.suppressed & ~protection.primary).sum()) == 0  # sdcTable: 0 without detection
    guarded = run_table_method("suppress", problem, {"algorithm": algorithm})
    pattern = guarded.suppressed
    assert int((pattern & ~protection.primary).sum()) == 1  # sdcTable: 1 with detectSingletons
    assert guarded.figures["audit_passed"] and guarded.figures["respondent_secondaries"] == 1
    assert guarded.figures["optimal"] is not True  # optimal against the outside attacker only
    for known, cell in (({0: 1.0}, 2), ({2: 1.0}, 0)):
        low, high = brute_interval(table, pattern, known, cell)
        assert (
            low <= table.values[cell] - protection.lower[cell]
            and high >= table.values[cell] + protection.upper[cell]
        )


def test_sdctable_singleton_case_through_the_command_line(tmp_path):
    data = tmp_path / "regions.csv"
    pl.DataFrame({"region": ["a", "b", "b", "c"]}).write_csv(data)
    (tmp_path / "regions.yaml").write_text(
        "attributes:\n  region: {role: quasi-identifier, kind: categorical}\n"
    )
    common = [str(data), "-c", str(tmp_path / "regions.yaml"), "--rows", "region", "--min-frequency", "2"]
    counted = []
    for option in ("none", "protect"):
        out, summary = tmp_path / f"{option}.csv", tmp_path / f"{option}.json"
        result = runner.invoke(
            app,
            ["table", "suppress", *common, "--singletons", option, "-o", str(out), "--summary", str(summary)],
        )
        assert result.exit_code == 0, result.output
        counted.append(json.loads(summary.read_text())["secondary_cells"])
    assert counted == [0, 1]
    # the audit finds what the first pattern lets a singleton do, and names the attacker
    audited = runner.invoke(app, ["table", "audit", *common, "--pattern", str(tmp_path / "none.csv")])
    assert audited.exit_code == 3, audited.output
    assert (
        "the only contributor of region=a" in audited.output
        or "only contributor of region=c" in audited.output
    )
    outside_only = runner.invoke(
        app, ["table", "audit", *common, "--pattern", str(tmp_path / "none.csv"), "--singletons", "none"]
    )
    assert outside_only.exit_code == 0, outside_only.output
    passed = runner.invoke(app, ["table", "audit", *common, "--pattern", str(tmp_path / "protect.csv")])
    assert passed.exit_code == 0, passed.output


def holding_problem(tmp_path, holdings: list[str]):
    """Firms in regions a..d with a holding column; turnover summed; p%-rule 10."""
    from sdckit.config import load_config
    from sdckit.tabular.build import TableSpec
    from sdckit.tabular.problem import make_problem

    frame = pl.DataFrame(
        {
            "region": ["a", "b", "b", "b", "c", "d", "d", "d"],
            "turnover": [100.0, 40.0, 35.0, 30.0, 60.0, 50.0, 45.0, 40.0],
            "holding": holdings,
        }
    )
    path = tmp_path / "firms.csv"
    frame.write_csv(path)
    config = tmp_path / "firms.yaml"
    config.write_text(
        "attributes:\n  region: {role: quasi-identifier, kind: categorical}\n"
        "  turnover: {role: sensitive, kind: numeric}\n  holding: {role: insensitive, kind: categorical}\n"
    )
    source = load_config(config).read(path)
    spec = TableSpec(tables=(("region",),), value="turnover", holding="holding")
    return make_problem(source, spec, [Rule.parse("p=10")])


def test_a_holding_spanning_two_cells_of_one_relation_attacks_the_third(tmp_path):
    # holding H is the only contributor of a and of c: together it knows both
    problem = holding_problem(tmp_path, ["H", "F1", "F2", "F3", "H", "G1", "G2", "G3"])
    table, protection = problem.table, problem.protection
    label = {table.label(i): i for i in range(table.n_cells)}
    a, b, c = label["region=a"], label["region=b"], label["region=c"]
    # a primary (one contributor); suppose a pattern a, b, c (b primary by hand, c its cover)
    protection = Protection.of_cells(table.n_cells, [a, b], upper=10.0)
    pattern = np.zeros(table.n_cells, dtype=bool)
    pattern[[a, b, c]] = True
    holdings = holding_respondents(problem.source, problem.spec, table)
    assert [(h.name, sorted(table.label(i) for i in h.cells)) for h in holdings] == [
        ("holding H", ["region=a", "region=c"])
    ]
    failures = respondent_attack(
        table, pattern, protection, respondents(table, protection, pattern, holdings=holdings)
    )
    assert [(table.label(f.cell), f.respondent) for f in failures] == [("region=b", "holding H")]
    # per cell, each singleton alone knows one of a, c: b keeps a range
    alone = respondent_attack(table, pattern, protection, respondents(table, protection, pattern))
    assert all(f.respondent != "holding H" for f in alone)
    assert b not in {f.cell for f in alone}
    # the method with holdings protects b against H
    result = run_table_method("suppress", TableProblem(table, protection, problem.source, problem.spec), {})
    final = respondents(table, protection, result.suppressed, holdings=holdings)
    assert respondent_attack(table, result.suppressed, protection, final) == []


def test_an_nk_coalition_is_an_attacker(tmp_path):
    """(n,k) = (2, 80): the two largest contributors of a flagged cell know it exactly when they are
    all of it, and attack the other primary cell of the relation."""
    table = LinearTable.from_array([70.0, 30.0, 200.0], ("region",), kind="magnitude")
    table = LinearTable(
        values=table.values,
        relations=table.relations,
        cells=table.cells,
        dimensions=table.dimensions,
        kind="magnitude",
        contributors=np.array([2.0, 5.0, 9.0, 16.0]),
        top=np.array([[40.0, 30.0], [8.0, 7.0], [30.0, 25.0], [40.0, 30.0]]),
    )
    protection = primary_protection(table, [Rule.parse("n=2,k=80")])
    assert protection.primary.tolist() == [True, False, False, False]
    cover = Protection.of_cells(table.n_cells, [0, 1], upper=5.0)
    cover.rule[0] = "n=2,k=80"
    pattern = np.array([True, True, False, False])
    found = respondents(table, cover, pattern, singletons="none")
    assert [r.name for r in found] == ["the 2 largest contributors of region=1"]
    failures = respondent_attack(table, pattern, cover, found)
    assert [(f.cell, f.low, f.high) for f in failures] == [(1, 30.0, 30.0)]
    problem = TableProblem(table=table, protection=cover)
    result = run_table_method("suppress", problem, {"singletons": "none"})
    assert (
        respondent_attack(
            table, result.suppressed, cover, respondents(table, cover, result.suppressed, singletons="none")
        )
        == []
    )


def test_a_coalition_option_of_one_is_refused():
    table, protection = sdctable_singletons()
    message = r"coalition must be 0 \(none\) or a number of contributors ≥ 2, got 1"
    with pytest.raises(ConfigError, match=message):
        run_table_method("suppress", TableProblem(table=table, protection=protection), {"coalition": 1})
    # the audit's parameters hold the same rule, before any file is read
    with pytest.raises(ConfigError, match=message):
        TABLE_METHODS.get("audit").params.parse({"pattern": "absent.csv", "coalition": 1}, method="audit")
    # and so does the attacker's own function, with the rule on singletons
    pattern = protection.primary.copy()
    with pytest.raises(ConfigError, match=message):
        respondents(table, protection, pattern, coalition=1)
    with pytest.raises(ConfigError, match=r"^singletons must be 'protect' or 'none', got 'all'$"):
        respondents(table, protection, pattern, singletons="all")


@pytest.mark.parametrize("seed", range(12))
def test_the_audit_agrees_with_a_brute_force_respondent(seed):
    """Random one-relation frequency tables with singletons: for every singleton respondent and
    primary cell, the library's verdict equals the enumeration's."""
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 4, size=4)
    counts[rng.integers(0, 4)] = 1
    table = LinearTable.from_array(counts, ("region",))
    protection = primary_protection(table, [Rule.parse("freq=2")])
    pattern = protection.primary | (rng.random(table.n_cells) < 0.3)
    pattern[-1] = False
    found = [r for r in respondents(table, protection, pattern) if r.exact.all()]
    failures = {(f.cell, f.respondent) for f in respondent_attack(table, pattern, protection, found)}
    for respondent in found:
        own = set(respondent.cells.tolist())
        for p in np.flatnonzero(protection.primary & pattern):
            if p in own:
                continue
            known = {int(i): float(table.values[i]) for i in respondent.cells if i != table.n_cells - 1}
            if not audit(table, pattern, protection).protected[p]:
                continue  # the outside attacker's failure, reported by the outside audit
            low, high = brute_interval(table, pattern, known, int(p))
            a = table.values[p]
            safe = (
                low <= a - protection.lower[p] + 1e-9
                and high >= a + protection.upper[p] - 1e-9
                and high > low
            )
            assert safe == ((int(p), respondent.name) not in failures), (counts, pattern, respondent.name, p)


def test_respondent_knowledge_is_bounds_only():
    table, protection = sdctable_singletons()
    r = Respondent("x", np.array([0]), np.array([1.0]), np.array([True]))
    from sdckit.tabular.respondents import knowing

    known = knowing(table, r)
    assert known.lower[0] == known.upper[0] == 1.0 and np.isinf(known.upper[1])
    assert (known.values == table.values).all()


@pytest.mark.parametrize("seed", range(8))
def test_the_audit_agrees_with_a_brute_force_holding(seed, tmp_path):
    """Random one-relation magnitude tables whose firms belong to holdings: for every respondent the
    library finds (holdings spanning cells, single contributors, largest contributors), its verdict on
    every primary cell equals the enumeration of what that respondent can hold possible."""
    from sdckit.config import load_config
    from sdckit.tabular.build import TableSpec
    from sdckit.tabular.problem import make_problem

    rng = np.random.default_rng(100 + seed)
    regions, turnover, holdings = [], [], []
    for region in "abcd":
        for _ in range(int(rng.integers(1, 4))):
            regions.append(region)
            turnover.append(float(rng.integers(1, 6)))
            holdings.append(f"H{int(rng.integers(0, 4))}")
    path = tmp_path / "firms.csv"
    pl.DataFrame({"region": regions, "turnover": turnover, "holding": holdings}).write_csv(path)
    config = tmp_path / "firms.yaml"
    config.write_text(
        "attributes:\n  region: {role: quasi-identifier, kind: categorical}\n"
        "  turnover: {role: sensitive, kind: numeric}\n  holding: {role: insensitive, kind: categorical}\n"
    )
    problem = make_problem(
        load_config(config).read(path),
        TableSpec(tables=(("region",),), value="turnover", holding="holding"),
        [Rule.parse("p=30")],
    )
    table = problem.table
    interior = np.flatnonzero(~table.totals())
    protection = Protection.of_cells(table.n_cells, interior[:2], upper=1.0)
    pattern = np.zeros(table.n_cells, dtype=bool)
    pattern[interior[rng.permutation(interior.size)[:3]]] = True
    pattern[interior[:2]] = True
    found = respondents(
        table, protection, pattern, holdings=holding_respondents(problem.source, problem.spec, table)
    )
    failures = {(f.cell, f.respondent) for f in respondent_attack(table, pattern, protection, found)}
    total = int(table.values[table.totals()][0])
    hidden = [int(i) for i in interior if pattern[i]]
    # Every table an outsider holds possible: each hidden cell 0..total and the interior adding up to
    # the total, i.e. the hidden cells adding up to what the published ones leave. Enumerated once
    # (compositions of that rest), not as all (total + 1) ** len(hidden) fillings for every cell and
    # respondent; each respondent then keeps those agreeing with what it knows.
    published = sum(float(table.values[i]) for i in interior if not pattern[i])
    fillings = np.array(list(compositions(total - int(published), len(hidden), total)), dtype=float)
    tables = np.repeat(table.values[None, :], len(fillings), axis=0)
    tables[:, hidden] = fillings
    assert (np.abs(tables[:, interior].sum(axis=1) - total) <= 1e-9).all()
    protected = audit(table, pattern, protection).protected
    for respondent in found:
        from sdckit.tabular.respondents import above

        own = set(above(table, respondent.cells).tolist())
        known = dict(zip(respondent.cells.tolist(), respondent.known.tolist(), strict=True))
        exact = {int(c) for c, e in zip(respondent.cells, respondent.exact, strict=True) if e}
        held = np.ones(len(tables), dtype=bool)
        for c, k in known.items():
            held &= tables[:, c] >= k - 1e-9
        for c in exact:
            held &= tables[:, c] == table.values[c]
        for p in np.flatnonzero(protection.primary & pattern):
            if int(p) in own:
                continue
            possible = tables[held, p]
            a = table.values[p]
            if not protected[p]:
                continue  # the outside attacker's failure, reported by the outside audit
            safe = possible.min() <= a - 1.0 + 1e-9 and possible.max() >= a + 1.0 - 1e-9
            assert safe == ((int(p), respondent.name) not in failures), (seed, respondent, int(p))


def compositions(amount: int, parts: int, top: int):
    """Every tuple of ``parts`` integers in 0..``top`` adding up to ``amount``."""
    if parts == 1:
        if 0 <= amount <= top:
            yield (amount,)
        return
    for first in range(min(amount, top) + 1):
        for rest in compositions(amount - first, parts - 1, top):
            yield (first, *rest)


def test_compositions_are_the_filtered_product():
    for amount, parts, top in [(0, 1, 3), (3, 2, 3), (5, 3, 4), (4, 3, 2), (7, 4, 3), (2, 3, 5)]:
        product = [v for v in itertools.product(range(top + 1), repeat=parts) if sum(v) == amount]
        assert list(compositions(amount, parts, top)) == product
