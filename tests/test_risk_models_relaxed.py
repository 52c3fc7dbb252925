"""ARX's relaxed average re-identification risk, and the journalist's and marketer's average risk
against a population table (models/risk_based.py: AverageRisk(threshold, highest_risk,
records_at_risk), PopulationAverageRisk; issue 38 item 1).

* ARX's translation of the highest risk into a smallest class size (ParameterTranslation: up to 1%
  over the highest risk is let through), and hand-computed tables: the figures and the classes the
  model suppresses (smallest first; the suppressed records one more class).
* The journalist's and marketer's figures are ``risk reidentification``'s, on the research subset
  whose sampling weights make each class's weight sum its population count.
* Monotonicity: by brute force on every lattice edge (the figures recomputed here from the class
  counts), the counter-examples with suppression, and pruned == exhaustive search.
* The wiring: params, ``check`` and ``anonymize generalize``, one message per bad option (exit 2).
* ARX 3.9.2 on Adult, run side by side (benchmarks/arx/Harness.java): the same optimum.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from oracles import pruned_equals_exhaustive
from sdckit.anonymize._lattice_search import Search
from sdckit.anonymize.recoding import GeneralizeFigures, GeneralizeParams, full_domain_generalization
from sdckit.cli import app
from sdckit.errors import ConfigError
from sdckit.hierarchy import Hierarchy
from sdckit.models import AverageRisk, ClassStatistics, KAnonymity, PrivacyModel
from sdckit.models.check import check_table
from sdckit.models.risk_based import PopulationAverageRisk, size_threshold
from sdckit.risk.reidentification import reidentification_risk
from sdckit.table import Attribute, Role, Schema, Table
from test_recoding import ADULT_COLUMNS, hierarchies_strategy

TEN = (1.0, 1.0, 2.0, 3.0, 3.0)  # ten records in five classes


def sizes(*values: float) -> ClassStatistics:
    return ClassStatistics(sizes=np.array(values, dtype=np.float64))


# ARX's ParameterTranslation and the relaxed variant by hand ----------------------------------------


@pytest.mark.parametrize(
    ("highest", "size"),
    [
        (1.0, 1),
        (0.5, 2),
        (0.2, 5),  # 1 / 0.2 = 5: classes of 1-4 records are above 0.2
        (0.3, 4),  # 3.33: floor 3, whose risk 1/3 is 11% above 0.3: 4
        (0.199, 5),  # 5.03: floor 5, whose risk 0.2 is 0.5% above 0.199: within 1%, kept
        (0.198, 6),  # 5.05: 0.2 is 1.01% above 0.198: 6
        (0.1, 10),
        (0.01, 100),
    ],
)
def test_size_threshold_is_arxs(highest, size):
    assert size_threshold(highest) == size
    model = AverageRisk(1.0, highest)
    assert model.effective_highest_risk == pytest.approx(1 / size)
    # The name says the highest risk enforced where it is not the one given (ARX's toString too).
    shown = "" if highest in (1.0, 0.5, 0.2, 0.1, 0.01) else f" (effective {1 / size:g})"
    assert model.name == f"average risk <= 1, highest risk <= {highest:g}{shown} but for 0 of records"


def test_relaxed_average_risk_by_hand():
    # 5 classes / 10 records = 0.5. Highest risk 0.5 (size 2): the two uniques are at risk, 0.2.
    model = AverageRisk(0.5, 0.5)
    assert model.name == "average risk <= 0.5, highest risk <= 0.5 but for 0 of records"
    result = model.evaluate(sizes(*TEN))
    assert result.achieved.tolist() == [0.5] * 5
    # Taking one unique leaves the other and a group of one: 0.2; both, a group of 2: 0.
    assert result.passes.tolist() == [False, False, True, True, True]
    assert AverageRisk(0.5, 0.5, 0.2).evaluate(sizes(*TEN)).passes.all()
    # Highest risk 1/3 (size 3), at most 0.2: 1 + 1 + 2 = 4 records at risk. Taking 1, then 1 (a group
    # of 2, at risk), then 2 (a group of 4): 0 at risk, 2 classes + the group = 0.3 <= 0.5.
    result = AverageRisk(0.5, 1 / 3, 0.2).evaluate(sizes(*TEN))
    assert result.passes.tolist() == [False, False, False, True, True]
    # The average binds first: 0.3 needs the three smallest (as without a highest risk).
    assert AverageRisk(0.3, 0.5, 0.2).evaluate(sizes(*TEN)).passes.tolist() == [False] * 3 + [True] * 2
    # Up to 1% over the highest risk: 0.199 takes classes of 5 as safe, 0.198 does not.
    assert AverageRisk(1.0, 0.199, 0.0).evaluate(sizes(5, 5)).passes.all()
    assert not AverageRisk(1.0, 0.198, 0.0).evaluate(sizes(5, 5)).passes.any()
    assert AverageRisk(1.0, 0.198, 0.0).evaluate(sizes(5, 5, 6)).passes.tolist() == [False, False, True]


def test_relaxed_flags_feasibility_and_bad_arguments():
    assert AverageRisk(0.1).monotonic_with_suppression
    relaxed = AverageRisk(0.1, 0.2, 0.05)
    assert relaxed.monotonic and not relaxed.monotonic_with_suppression
    relaxed.check_feasible(sizes(*TEN))  # one class of 10: risk 0.1, none above 0.2
    with pytest.raises(ConfigError, match="cannot be satisfied: the table as one class of 10 records"):
        AverageRisk(1.0, 0.05).check_feasible(sizes(*TEN))  # 0.1 > 0.05 for every record
    AverageRisk(1.0, 0.05, 1.0).check_feasible(sizes(*TEN))  # every record may be at risk
    with pytest.raises(ConfigError, match="highest_risk must be greater than 0"):
        AverageRisk(0.1, 0.0)
    with pytest.raises(ConfigError, match="records_at_risk must be less than or equal to 1"):
        AverageRisk(0.1, 0.2, 1.5)
    with pytest.raises(ConfigError, match="records_at_risk needs highest_risk"):
        AverageRisk(0.1, None, 0.1)


def test_relaxed_is_not_monotone_with_suppression():
    """Sample uniqueness's counter-example (tests/test_risk_models.py) with highest risk 0.5 and no
    record at risk: classes a 1, b 1, c 2, d 6, limit 2 records. The node suppresses a and b (a group of
    2, not at risk); its generalization merges a into c (3) and leaves b alone, whose group of one is
    at risk: c goes too (4 records > 2)."""
    hierarchy = Hierarchy.from_rows(
        "g", [["a", "AC", "*"], ["b", "B", "*"], ["c", "AC", "*"], ["d", "D", "*"]]
    )
    table = Table.from_frame(pl.DataFrame({"g": list("abcc" + "d" * 6)}))
    search = Search(table, ["g"], [hierarchy], [AverageRisk(1.0, 0.5, 0.0)], 0.2, "loss", None)
    assert [search.evaluate([level]).n_suppressed for level in (0, 1)] == [2, 4]


# Journalist and marketer against a population table -----------------------------------------------

# A population of 10 in classes a (4 people, 1 released), b (2, 2), c (3, 0), d (1, 1): 4 released.
GROUPS, MARKS = "aaaabbcccd", "ynnnyynnny"


def population(groups: str = GROUPS, marks: str = MARKS) -> Table:
    frame = pl.DataFrame({"g": list(groups), "study": ["yes" if m == "y" else "no" for m in marks]})
    return Table(frame, Schema((Attribute("g", Role.QUASI_IDENTIFIER), Attribute("study", Role.INSENSITIVE))))


def checked(model: PrivacyModel, table: Table | None = None):
    return check_table(table or population(), ["g"], [model], missing="category").results[0]


def test_journalist_and_marketer_by_hand():
    # marketer: (1/4 + 2/2 + 1/1) / 4 = 0.5625; journalist: max(3 classes / 7 people, 0.5625).
    marketer = checked(PopulationAverageRisk(1.0, "marketer", "study"))
    assert marketer.achieved.tolist() == [0.5625, 0.5625, -np.inf, 0.5625]
    journalist = PopulationAverageRisk(1.0, "journalist", "study")
    assert journalist.name == "journalist average risk <= 1 (study)"
    assert checked(journalist).achieved[0] == 0.5625
    # Suppression, smallest released first (a, d: 1 each; then b): taking a leaves it as the group,
    # 0.5625; a and d, a group of 2 in 5 people: (2/5 + 1) / 4 = 0.35; all three: 4/7 / 4 = 1/7.
    assert checked(PopulationAverageRisk(0.35, "marketer", "study")).passes.tolist() == [
        False,
        True,
        True,
        False,
    ]
    assert checked(PopulationAverageRisk(0.3, "marketer", "study")).passes.tolist() == [
        False,
        False,
        True,
        False,
    ]
    # The journalist's classes over people: a, d taken: 2 classes / 7 = 0.286 < 0.35.
    assert checked(PopulationAverageRisk(0.35, "journalist", "study")).passes.tolist() == [
        False,
        True,
        True,
        False,
    ]
    # Class c, without a released record, passes and is never suppressed.
    assert checked(PopulationAverageRisk(0.1, "marketer", "study")).passes.tolist() == [
        False,
        False,
        True,
        False,
    ]


def test_journalist_highest_risk_reads_the_population():
    # Highest risk 1/3 (size 3): a (4 people) is safe, b (2) and d (1) at risk: 3 of 4 released records.
    model = PopulationAverageRisk(1.0, "journalist", "study", 1 / 3, 0.75)
    assert (
        model.name == "journalist average risk <= 1, highest risk <= 0.333333 but for 0.75 of records (study)"
    )
    assert checked(model).passes.all()
    # At most 0.5: taking a (safe already) and d (a group of 5 people: safe) leaves b: 2 of 4.
    strict = PopulationAverageRisk(1.0, "journalist", "study", 1 / 3, 0.5)
    assert checked(strict).passes.tolist() == [False, True, True, False]
    with pytest.raises(ConfigError, match="highest_risk applies to the prosecutor and journalist"):
        PopulationAverageRisk(1.0, "marketer", "study", 0.5)
    with pytest.raises(ConfigError, match="attacker must be journalist or marketer"):
        PopulationAverageRisk(1.0, "prosecutor", "study")


def test_population_feasibility():
    hierarchies = {"g": Hierarchy.from_rows("g", [[g, "*"] for g in "abcd"])}
    # Everything suppressed: one class of the 10 people, 1 / 10.
    for threshold, feasible in ((0.1, True), (0.05, False)):
        run = lambda threshold=threshold: full_domain_generalization(  # noqa: E731
            population(),
            [PopulationAverageRisk(threshold, "journalist", "study")],
            quasi_identifiers=["g"],
            hierarchies=hierarchies,
        )
        if feasible:
            assert run().levels == {"g": 1}
        else:
            with pytest.raises(ConfigError, match="cannot be satisfied: the population as one class of 10"):
                run()


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("threshold", [0.2, 0.5])
def test_figures_are_risk_reidentifications(seed, threshold):
    """On a random population generalized at random: the model's journalist and marketer averages
    and the journalist's records at risk are ``risk reidentification``'s on the released records,
    each weighing F / f (its class's people over its released records), so that the weights of a
    class sum to its population (as ARX's RiskModelSampleSummary reads the population's classes)."""
    rng = np.random.default_rng(seed)
    n = 400
    frame = pl.DataFrame(
        {
            "a": rng.integers(0, 40, n).astype(str),
            "b": rng.choice(["x", "y", "z"], n, p=[0.6, 0.3, 0.1]),
            "study": np.where(rng.random(n) < 0.3, "yes", "no"),
        }
    )
    schema = Schema(
        (
            Attribute("a", Role.QUASI_IDENTIFIER),
            Attribute("b", Role.QUASI_IDENTIFIER),
            Attribute("study", Role.INSENSITIVE),
        )
    )
    table = Table(frame, schema)
    people = frame.group_by("a", "b").agg(pl.len().alias("F"), (pl.col("study") == "yes").sum().alias("f"))
    sample = frame.filter(pl.col("study") == "yes").join(people, on=["a", "b"])
    sample = sample.with_columns((pl.col("F") / pl.col("f")).alias("w"))
    weighted = Schema((*schema.attributes[:2], Attribute("w", Role.INSENSITIVE)))
    figures = reidentification_risk(
        Table(sample.select("a", "b", "w"), weighted), weights="w", missing="category", threshold=threshold
    ).summary()
    for attacker in ("journalist", "marketer"):
        model = PopulationAverageRisk(1.0, attacker, "study")
        achieved = check_table(table, ["a", "b"], [model], missing="category").results[0].worst()
        assert achieved == pytest.approx(figures[attacker]["average"], rel=1e-12)
    # Records at risk: threshold 0.2 (size 5) and 0.5 (size 2), where 1 / F > t is F < 1 / t.
    expected = figures["journalist"]["records_at_risk"]

    def holds(share: float) -> bool:
        model = PopulationAverageRisk(1.0, "journalist", "study", threshold, share)
        return bool(check_table(table, ["a", "b"], [model], missing="category").results[0].passes.all())

    assert holds(expected) and expected > 0 and not holds(expected - 1e-9)


def test_population_models_are_not_monotone_with_suppression():
    """Classes a (1 of 2 people released), b (2 of 3), c (4 of 4), d (1 of 1): 8 released records,
    limit 0.3 (2.4 records). The node suppresses a and d (the group: 2 of 3 people): marketer
    (2/3 + 2/3 + 1) / 8 = 0.292 <= 0.3; the journalist's max(3 / 10, 0.292) = 0.3 <= 0.31. Its
    generalization merges a and b (3 of 5): (0.6 + 1 + 1) / 8 = 0.325 > 0.3; taking d changes nothing
    (a group of 1 of 1), so a + b goes too: 4 records > 2.4."""
    hierarchy = Hierarchy.from_rows(
        "g", [["a", "AB", "*"], ["b", "AB", "*"], ["c", "C", "*"], ["d", "D", "*"]]
    )
    groups, marks = "aabbbccccd", "nyyynyyyyy"
    frame = pl.DataFrame({"g": list(groups), "study": ["yes" if m == "y" else "no" for m in marks]})
    inside = np.array([m == "y" for m in marks], dtype=np.float64)
    for attacker, threshold in (("marketer", 0.3), ("journalist", 0.31)):
        model = PopulationAverageRisk(threshold, attacker, "study")
        assert model.monotonic and not model.monotonic_with_suppression
        search = Search(Table.from_frame(frame), ["g"], [hierarchy], [model], 0.3, "loss", inside)
        assert [search.evaluate([level]).n_suppressed for level in (0, 1)] == [2, 4]


# Monotonicity and the search: brute force, pruned == exhaustive -------------------------------------


def by_definition(model: PrivacyModel, classes: list[tuple[float, float]], k: int) -> tuple[bool, float]:
    """Whether the model holds within no suppression (population models) or after the smallest
    classes are taken (prosecutor), from the definitions; ``classes``: (released records, people)
    per class, ``k``: the k-anonymity the classes must reach first (1: none). Returns the verdict
    and the records suppressed."""
    released = [(f, people) for f, people in classes if f > 0]
    total = sum(f for f, _ in released)
    failing = [f for f, _ in released if f < k]
    kept = sorted(f for f, _ in released if f >= k)
    if isinstance(model, PopulationAverageRisk):
        marketer = sum(f / people for f, people in released) / total
        figure = max(len(released) / sum(p for _, p in released), marketer)
        if model.attacker == "marketer":
            figure = marketer
        at_risk = sum(f for f, people in released if people < model.smallest_size) / total
        at_risk = 0.0 if model.highest_risk is None else at_risk
        return figure <= model.threshold + 1e-12 and at_risk <= model.records_at_risk + 1e-12, 0.0
    assert isinstance(model, AverageRisk)
    for taken in range(len(kept) + 1):
        group = sum(failing) + sum(kept[:taken])
        parts = kept[taken:] + ([group] if group else [])
        at_risk = sum(size for size in parts if size < model.smallest_size) / total
        if len(parts) / total <= model.threshold + 1e-12 and at_risk <= model.records_at_risk + 1e-12:
            return True, group
    return False, total


@st.composite
def problems(draw):
    """A random population table (2-3 quasi-identifiers, a study column) with the relaxed prosecutor
    model (alone or after k-anonymity) or a journalist or marketer model (relaxed or not)."""
    n_qi = draw(st.integers(2, 3))
    names = [f"q{j}" for j in range(n_qi)]
    hierarchies = {name: draw(hierarchies_strategy(name)) for name in names}
    n = draw(st.integers(20, 100))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    columns = {}
    for name in names:
        leaves = np.array(hierarchies[name].labels[0])
        shares = rng.dirichlet(np.full(len(leaves), draw(st.sampled_from([0.3, 1.0, 5.0]))))
        columns[name] = leaves[rng.choice(len(leaves), size=n, p=shares)].tolist()
    columns["study"] = np.where(rng.random(n) < draw(st.sampled_from([0.2, 0.5, 0.9])), "yes", "no").tolist()
    if not any(value == "yes" for value in columns["study"]):
        columns["study"][0] = "yes"
    threshold = draw(st.sampled_from([0.05, 0.1, 0.2, 0.4]))
    highest = draw(st.sampled_from([None, 0.5, 0.2, 0.1]))
    at_risk = None if highest is None else draw(st.sampled_from([0.0, 0.05, 0.2]))
    attacker = draw(st.sampled_from(["prosecutor", "journalist", "marketer"]))
    if attacker == "prosecutor":
        model: PrivacyModel = AverageRisk(threshold, highest if highest else 0.5, at_risk)
        models = [model] if draw(st.booleans()) else [KAnonymity(draw(st.integers(2, 4))), model]
        del columns["study"]
    else:
        highest = None if attacker == "marketer" else highest
        at_risk = None if highest is None else at_risk
        models = [PopulationAverageRisk(threshold, attacker, "study", highest, at_risk)]
    return pl.DataFrame(columns), names, hierarchies, models


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(problems(), st.sampled_from([0.0, 0.05, 0.2]))
def test_satisfaction_is_monotone_on_every_lattice_edge(problem, limit):
    """What ``monotonic`` (and, where claimed, ``monotonic_with_suppression``) says, from the
    definitions: a node that holds within the limit has every one-step generalization holding; the
    search's verdict on every node is the definition's. The population models are judged without
    suppression (they claim nothing with it; ties among equal classes decide what they suppress)."""
    frame, names, hierarchies, models = problem
    model = models[-1]
    population_model = isinstance(model, PopulationAverageRisk)
    limit = 0.0 if population_model else limit
    k = models[0].k if len(models) == 2 else 1
    maps = {}
    for name in names:
        rows = hierarchies[name].to_frame()
        leaves = rows.get_column("level_0").to_list()
        maps[name] = [dict(zip(leaves, rows.get_column(c).to_list(), strict=True)) for c in rows.columns]
    inside = (
        [value == "yes" for value in frame.get_column("study").to_list()]
        if population_model
        else [True] * frame.height
    )
    released = sum(inside)
    weights = np.array(inside, dtype=np.float64) if population_model else None
    table = Table.from_frame(frame)
    search = Search(table, names, [hierarchies[n] for n in names], models, limit, "loss", weights)

    def meets(levels) -> bool:
        counts: dict = {}
        for row, member in enumerate(inside):
            key = tuple(maps[n][lv][frame.get_column(n)[row]] for n, lv in zip(names, levels, strict=True))
            f, people = counts.get(key, (0, 0))
            counts[key] = (f + member, people + 1)
        verdict, suppressed = by_definition(model, list(counts.values()), k)
        return verdict and suppressed <= limit * released + 1e-9

    shape = tuple(hierarchies[n].n_levels for n in names)
    verdicts = {levels: meets(levels) for levels in np.ndindex(*shape)}
    claimed = model.monotonic_with_suppression if limit > 0 else model.monotonic
    for levels, verdict in verdicts.items():
        assert (search.evaluate(levels).n_suppressed <= limit * released + 1e-9) == verdict, levels
        if not verdict or not claimed:
            continue
        for j in range(len(names)):
            if levels[j] + 1 < shape[j]:
                up = tuple(lv + (i == j) for i, lv in enumerate(levels))
                assert verdicts[up], (levels, up)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(problems(), st.sampled_from([0.0, 0.0, 0.05, 0.3]), st.sampled_from(["loss", "entropy", "dm"]))
def test_pruned_search_equals_exhaustive_search(problem, limit, metric):
    frame, names, hierarchies, models = problem
    arguments = dict(quasi_identifiers=names, hierarchies=hierarchies, suppression_limit=limit, metric=metric)
    found = pruned_equals_exhaustive(Table.from_frame(frame), models, **arguments)
    if found is None:
        return
    fast, _ = found
    model = models[-1]
    claimed = model.monotonic_with_suppression if limit > 0 else model.monotonic
    assert fast.figures_as(GeneralizeFigures).search["monotone"] == claimed


# Wiring ----------------------------------------------------------------------------------------------

CSV = "g,study\n" + "".join(
    f"{g},{'yes' if m == 'y' else 'no'}\n" for g, m in zip(GROUPS, MARKS, strict=True)
)
CONFIG = "attributes:\n  g: {role: quasi-identifier, hierarchy: g.csv}\n"


def write(directory: Path) -> tuple[str, str]:
    (directory / "d.csv").write_text(CSV)
    (directory / "c.yaml").write_text(CONFIG)
    (directory / "g.csv").write_text("a;ab;*\nb;ab;*\nc;cd;*\nd;cd;*\n")
    return str(directory / "d.csv"), str(directory / "c.yaml")


def test_check_reports_the_figures(tmp_path):
    data, config = write(tmp_path)
    summary = tmp_path / "s.json"
    options = ["--research-subset", "study", "--average-risk", "0.5", "--attacker", "marketer"]
    result = CliRunner().invoke(app, ["check", data, "-c", config, *options, "--summary", str(summary)])
    assert result.exit_code == 3, result.output
    figures = json.loads(summary.read_text())["models"]["marketer average risk <= 0.5 (study)"]
    assert figures["achieved"] == pytest.approx(0.5625) and figures["violating_classes"] == 2
    # The prosecutor's relaxed variant on the whole table (10 records, classes 4, 2, 3, 1).
    options = ["--average-risk", "0.4", "--highest-risk", "0.5", "--records-at-risk", "0.1"]
    result = CliRunner().invoke(app, ["check", data, "-c", config, *options, "--summary", str(summary)])
    assert result.exit_code == 0, result.output
    name = "average risk <= 0.4, highest risk <= 0.5 but for 0.1 of records"
    assert json.loads(summary.read_text())["models"][name]["achieved"] == pytest.approx(0.4)


def test_generalize_release_passes_check(tmp_path):
    data, config = write(tmp_path)
    out = tmp_path / "out.csv"
    options = ["--research-subset", "study", "--average-risk", "0.35", "--attacker", "journalist"]
    result = CliRunner().invoke(
        app,
        [
            "anonymize",
            "generalize",
            data,
            "-c",
            config,
            *options,
            "--suppression-limit",
            "0.5",
            "-o",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    released = pl.read_csv(out, infer_schema=False)
    # Level 0 would suppress a and d (2 of the 4 released records, 0.286); level 1, ab (3 of 6 people)
    # and cd (1 of 4): max(2 / 10, (1/2 + 1/4) / 4) = 0.2, nothing suppressed, loses less.
    assert released.filter(pl.col("study") == "yes").get_column("g").to_list() == ["ab", "ab", "ab", "cd"]
    # The population table released as generalized, checked against the same model.
    result = CliRunner().invoke(app, ["check", str(out), "-c", config, *options])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    ("command", "options", "words"),
    [
        (
            ["check"],
            ["--average-risk", "0.3", "--attacker", "journalist"],
            ["--attacker journalist needs", "--research-subset"],
        ),
        (
            ["anonymize", "generalize"],
            ["--average-risk", "0.3", "--attacker", "marketer"],
            ["--attacker marketer needs the population", "--research-subset"],
        ),
        (
            ["check"],
            ["--average-risk", "0.3", "--records-at-risk", "0.1"],
            ["--records-at-risk needs --highest-risk"],
        ),
        (["check"], ["--average-risk", "0.3", "--highest-risk", "0"], ["--highest-risk", "greater than 0"]),
        (
            ["anonymize", "generalize"],
            ["-k", "2", "--highest-risk", "0.2"],
            ["--highest-risk", "only used with --average-risk"],
        ),
        (["check"], ["-k", "2", "--attacker", "journalist"], ["--attacker", "only used with --average-risk"]),
        (
            ["check"],
            ["--average-risk", "0.3", "--attacker", "insider"],
            ["--attacker", "prosecutor", "journalist"],
        ),
        (
            ["check"],
            [
                "--average-risk",
                "0.3",
                "--attacker",
                "marketer",
                "--research-subset",
                "study",
                "--highest-risk",
                "0.2",
            ],
            ["--highest-risk", "not marketer"],
        ),
    ],
)
def test_bad_options_exit_2(tmp_path, command, options, words):
    data, config = write(tmp_path)
    out = ["-o", str(tmp_path / "o.csv")] if command[0] == "anonymize" else []
    result = CliRunner().invoke(app, [*command, data, "-c", config, *options, *out])
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert all(word in text for word in words), text
    assert not (tmp_path / "o.csv").exists()


def test_params_and_recipes():
    params = GeneralizeParams(average_risk=0.1, highest_risk=0.2, records_at_risk=0.05)
    recipe = params.to_recipe()
    assert (recipe["highest_risk"], recipe["records_at_risk"]) == (0.2, 0.05) and "attacker" not in recipe
    assert GeneralizeParams(**recipe) == params
    assert not {"highest_risk", "records_at_risk", "attacker"} & set(
        GeneralizeParams(average_risk=0.1).to_recipe()
    )
    table = population()
    (model,) = GeneralizeParams(
        average_risk=0.3, attacker="journalist", research_subset="study"
    ).privacy_models(table)
    assert isinstance(model, PopulationAverageRisk) and model.attacker == "journalist"
    with pytest.raises(ConfigError, match="research_subset 'nope' is not a column"):
        GeneralizeParams(average_risk=0.3, attacker="marketer", research_subset="nope").privacy_models(table)


# ARX 3.9.2 on Adult, side by side -------------------------------------------------------------------


@pytest.fixture(scope="module")
def adult(shared_data):
    frame = pl.read_csv(shared_data("adult", "adult.csv"), separator=";", infer_schema=False)
    hierarchies = {
        c: Hierarchy.from_csv(shared_data("adult", f"adult_hierarchy_{c}.csv"), c) for c in ADULT_COLUMNS
    }
    return frame, hierarchies


# ARX 3.9.2 (benchmarks/arx/Harness.java, model=average-risk(threshold=R,highest=H,at_risk=F), Adult, 9
# quasi-identifiers, Loss with gs-factor 0.5) run side by side on 2026-11-29: its optimum, loss and
# suppressed records. Without suppression sdckit finds the same node with the same loss (to 1e-9: ARX
# sums in another order); at 5% the same node with less loss, as it suppresses fewer records there (the
# suppressed records one class of the figure; ties among equal-sized classes by order of appearance
# where ARX's go by their loss).
ARX_RELAXED = [
    ((0.05, 0.2, 0.05), 0.0, (0, 3, 0, 0, 2, 1, 1, 2, 0), 0.20438288216036504, 0),
    ((0.1, 0.2, 0.01), 0.0, (0, 3, 1, 1, 2, 2, 1, 1, 0), 0.35550455156747063, 0),
    pytest.param(
        (0.05, 0.2, 0.05),
        0.05,
        (0, 3, 0, 0, 2, 1, 1, 1, 0),
        0.17871244651545393,
        1101,
        marks=pytest.mark.slow,
    ),
    pytest.param(
        (0.1, 0.2, 0.01), 0.05, (0, 3, 0, 1, 2, 1, 1, 1, 0), 0.2315878830969953, 1382, marks=pytest.mark.slow
    ),
]


@pytest.mark.parametrize(("arguments", "limit", "levels", "loss", "suppressed"), ARX_RELAXED)
def test_adult_matches_arx_side_by_side(adult, arguments, limit, levels, loss, suppressed):
    frame, hierarchies = adult
    model = AverageRisk(*arguments)
    release = full_domain_generalization(
        Table.from_frame(frame),
        [model],
        quasi_identifiers=ADULT_COLUMNS,
        hierarchies=hierarchies,
        suppression_limit=limit,
        metric="loss",
    )
    assert tuple(release.levels[c] for c in ADULT_COLUMNS) == levels
    value = release.figures_as(GeneralizeFigures).search["metric_value"]
    if limit == 0:
        assert value == pytest.approx(loss, rel=1e-9) and release.n_suppressed == 0
    else:
        assert value <= loss and release.n_suppressed <= suppressed
    # The release as an adversary sees it: its classes (the '*' records one) meet both figures.
    released = release.table.data.group_by(ADULT_COLUMNS).len().get_column("len").to_numpy()
    assert len(released) / frame.height <= arguments[0] + 1e-12
    assert released[released < size_threshold(arguments[1])].sum() / frame.height <= arguments[2] + 1e-12
