"""Tests of the two-phase QS anonymization (Shi, Xiong & Fung, 2010): Figure 1 by hand, equation (1),
the search against brute force over every removal pattern, adaptive = baseline when both finish, the
time bound, the experiment data, and bad input."""

from __future__ import annotations

import itertools
import math
import time

import numpy as np
import polars as pl
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.anonymize import METHODS, run_method
from sdckit.anonymize._quasi_sensitive_kernels import item_bitsets, linked_matrix
from sdckit.anonymize.quasi_sensitive import (
    GroupSearch,
    QuasiSensitiveCall,
    QuasiSensitiveFigures,
    QuasiSensitiveParams,
    inverse_weighted_cost,
    quasi_sensitive_anonymize,
    suppress_group,
)
from sdckit.errors import ConfigError, SdcWarning
from sdckit.experiments.quasi_sensitive import figure5, figure6, synthesize_experiment_data
from sdckit.models.quasi_sensitive import QSCLDiversity, QSTCloseness, beliefs, qs_check
from sdckit.setvalued import ItemSets, Knowledge, linked_labels
from sdckit.table import Attribute, Kind, Role, Schema, Table

# ---------------------------------------------------------------------------------------------------
# Reference: the definitions spelled out on Python sets
# ---------------------------------------------------------------------------------------------------


def reference_score(records: list[set[int]], label_sets: list[set[int]], model, prior: np.ndarray) -> float:
    """l' (QS (c,l)-diversity; inf when no label is linked) or the distance (QS t-closeness)."""
    d, n_labels = len(records), len(label_sets)
    beta = np.zeros(n_labels)
    for items in records:
        linked = [label for label, s in enumerate(label_sets) if items <= s]
        for label in linked:
            beta[label] += 1.0 / (d * len(linked))
    if isinstance(model, QSTCloseness):
        return float(np.sqrt(np.sum((beta - prior) ** 2)))
    p = np.sort(beta[beta > 0])[::-1]
    if p.size == 0:
        return math.inf
    for level in range(p.size, 0, -1):
        if p[0] <= model.c * p[level - 1 :].sum() + 1e-12:
            return float(level)
    return 0.0


def reference_passes(score: float, model) -> bool:
    if isinstance(model, QSTCloseness):
        return score <= model.t + 1e-12
    return score >= model.l


def brute_force(rows: list[list[int]], label_sets: list[set[int]], model, prior: np.ndarray):
    """(cheapest satisfying cost or None, best score over all patterns) over all 2^m removal patterns."""
    cells = [(i, item) for i, row in enumerate(rows) for item in row]
    lengths = [len(row) for row in rows]
    best_cost, best_score = None, None
    for mask in itertools.product((False, True), repeat=len(cells)):
        remaining = [set(row) for row in rows]
        removed = [0] * len(rows)
        for (i, item), off in zip(cells, mask, strict=True):
            if off:
                remaining[i].discard(item)
                removed[i] += 1
        score = reference_score(remaining, label_sets, model, prior)
        if reference_passes(score, model):
            cost = inverse_weighted_cost(lengths, removed)
            best_cost = cost if best_cost is None else min(best_cost, cost)
        better = (lambda a, b: a < b) if isinstance(model, QSTCloseness) else (lambda a, b: a > b)
        if best_score is None or better(score, best_score):
            best_score = score
    return best_cost, best_score


def incidence(label_sets: list[set[int]], n_items: int) -> sp.csr_matrix:
    matrix = np.zeros((n_items, len(label_sets)), dtype=bool)
    for label, items in enumerate(label_sets):
        matrix[list(items), label] = True
    return sp.csr_matrix(matrix)


# ---------------------------------------------------------------------------------------------------
# Figure 1
# ---------------------------------------------------------------------------------------------------


def figure1() -> tuple[Table, Knowledge]:
    frame = pl.DataFrame(
        {
            "age": [22, 25, 30, 35],
            "gender": ["M", "M", "F", "F"],
            "state": ["GA", "GA", "TX", "TX"],
            "symptoms": [
                "Coughing;Headache;Sore throat",
                "Coughing;Headache",
                "Headache;Vomiting",
                "Headache;Sore throat",
            ],
        }
    )
    schema = Schema.infer(
        frame,
        [
            Attribute("age", Role.QUASI_IDENTIFIER, Kind.NUMERIC),
            Attribute("gender", Role.QUASI_IDENTIFIER),
            Attribute("state", Role.QUASI_IDENTIFIER),
            Attribute("symptoms", Role.QUASI_SENSITIVE, Kind.SET_VALUED),
        ],
    )
    knowledge = Knowledge.from_mapping(
        {
            "Flu": ["Coughing", "Headache", "Sore throat"],
            "Hepatitis B": ["Loss of appetite", "Vomiting", "Dark urine"],
        }
    )
    return Table(frame, schema), knowledge


def released_sets(release, knowledge: Knowledge) -> tuple[ItemSets, Knowledge]:
    vocabulary = sorted(set(knowledge.sets.vocabulary) | {"Coughing", "Headache", "Sore throat", "Vomiting"})
    sets = ItemSets.from_column(release.table.column("symptoms"), ";").recode(vocabulary)
    return sets, knowledge.with_vocabulary(vocabulary)


@pytest.mark.parametrize("strategy", ["adaptive", "baseline"])
def test_figure1_two_phases(strategy):
    table, knowledge = figure1()
    vocabulary = knowledge.sets.vocabulary + ("Headache",)
    original = ItemSets.from_column(table.column("symptoms"), ";").recode(sorted(set(vocabulary)))
    aligned = knowledge.with_vocabulary(original.vocabulary)
    linked = linked_labels(original, aligned)
    assert linked[0].indices.tolist() == [0]  # the first record links to Flu only
    model = QSCLDiversity(3, 2)
    # Table 1(d): groups {1,2} and {3,4}; {1,2} links to Flu alone, so l' = 1 < 2.
    before = qs_check(np.array([0, 0, 1, 1]), 2, original, aligned, model)
    assert before.results[0].achieved[0] == 1 and not before.passes[0]

    release = quasi_sensitive_anonymize(
        table,
        set_column="symptoms",
        knowledge=knowledge,
        k=2,
        model=model,
        strategy=strategy,
        time_limit=None,
    )
    assert release.method == "quasi-sensitive"
    assert release.classes.tolist() == [0, 0, 1, 1]
    assert release.table.column("age").cast(pl.String).to_list() == ["22-25", "22-25", "30-35", "30-35"]
    # The unique optimum (checked by brute force below): empty record 2 (its 2 items: 1/2 + 1/1 out of
    # H3 + H2 = 10/3 -> 0.45) and take Headache out of record 3 (1/2 out of H2 + H2 = 3 -> 1/6).
    assert release.table.column("symptoms").to_list() == [
        "Coughing;Headache;Sore throat",
        "",
        "Vomiting",
        "Headache;Sore throat",
    ]
    figures = release.figures_as(QuasiSensitiveFigures)
    assert figures.violating_before == 2 and figures.violating_after == 0
    assert figures.proven_optimal == 2 and figures.suppressed_items == 3
    assert figures.per_group["cost"] == pytest.approx([0.45, 1 / 6])
    # re-checked with the models module: every group passes, none links to a single label
    after_sets, after_knowledge = released_sets(release, knowledge)
    check = qs_check(release.classes, 2, after_sets, after_knowledge, model)
    assert check.passes.all()
    posterior = check.beliefs.posterior.toarray()
    assert (posterior.max(axis=1) < 1).all()
    assert figures.generalization_ncp > 0  # ages generalized


def test_figure1_optimum_is_unique():
    # Group {1,2}: Coughing=0 Headache=1 Sore throat=2; Flu = {0,1,2}, Hepatitis B = {3,4,5}.
    label_sets = [{0, 1, 2}, {3, 4, 5}]
    rows = [[0, 1, 2], [0, 1]]
    model = QSCLDiversity(3, 2)
    prior = np.array([0.75, 0.0])
    cells = [(i, x) for i, row in enumerate(rows) for x in row]
    solutions = []
    for mask in itertools.product((False, True), repeat=len(cells)):
        remaining = [set(row) for row in rows]
        counts = [0, 0]
        for (i, x), off in zip(cells, mask, strict=True):
            if off:
                remaining[i].discard(x)
                counts[i] += 1
        if reference_passes(reference_score(remaining, label_sets, model, prior), model):
            solutions.append((inverse_weighted_cost([3, 2], counts), mask))
    solutions.sort()
    assert solutions[0][0] == pytest.approx(0.45) and solutions[1][0] > 0.45 + 1e-9
    result = suppress_group(rows, incidence(label_sets, 6), prior, model, time_limit=None)
    assert result.removed.tolist() == [False, False, False, True, True]
    assert result.optimal and result.satisfied and result.cost == pytest.approx(0.45)


def test_inverse_weighted_cost_by_hand():
    # w = (3, 2), v = (2, 0): (1/3 + 1/2) / (1 + 1/2 + 1/3 + 1 + 1/2) = (5/6) / (10/3) = 1/4
    assert inverse_weighted_cost([3, 2], [2, 0]) == pytest.approx(0.25)
    # removing a record's items gets dearer as it empties: 1/4, then 1/3, ...
    assert inverse_weighted_cost([4], [1]) == pytest.approx((1 / 4) / (25 / 12))
    assert inverse_weighted_cost([4], [2]) == pytest.approx((1 / 4 + 1 / 3) / (25 / 12))
    assert inverse_weighted_cost([4, 1], [4, 1]) == 1.0
    assert inverse_weighted_cost([0, 0], [0, 0]) == 0.0
    with pytest.raises(ValueError):
        inverse_weighted_cost([2], [3])


# ---------------------------------------------------------------------------------------------------
# The search against brute force
# ---------------------------------------------------------------------------------------------------


@st.composite
def small_groups(draw):
    n_items = draw(st.integers(3, 7))
    n_labels = draw(st.integers(1, 5))
    label_sets = [
        set(draw(st.lists(st.integers(0, n_items - 1), min_size=1, max_size=n_items, unique=True)))
        for _ in range(n_labels)
    ]
    d = draw(st.integers(1, 4))
    rows, cells = [], 0
    for _ in range(d):
        row = sorted(draw(st.lists(st.integers(0, n_items - 1), min_size=0, max_size=4, unique=True)))
        row = row[: max(0, 10 - cells)]
        cells += len(row)
        rows.append(row)
    if draw(st.booleans()):
        model = QSCLDiversity(draw(st.sampled_from([0.5, 1.0, 2.0, 3.0])), draw(st.integers(1, 4)))
    else:
        model = QSTCloseness(draw(st.sampled_from([0.05, 0.2, 0.35, 0.5, 0.8])))
    weights = np.array(draw(st.lists(st.floats(0.0, 1.0), min_size=n_labels, max_size=n_labels)))
    prior = weights / weights.sum() if weights.sum() > 0 else np.full(n_labels, 1.0 / n_labels)
    return rows, label_sets, n_items, model, prior


@settings(max_examples=120)
@given(small_groups())
def test_search_finds_the_exhaustive_optimum(case):
    rows, label_sets, n_items, model, prior = case
    expected_cost, expected_score = brute_force(rows, label_sets, model, prior)
    matrix = incidence(label_sets, n_items)
    results = {
        strategy: suppress_group(rows, matrix, prior, model, strategy=strategy, time_limit=None)
        for strategy in ("baseline", "adaptive")
    }
    for result in results.values():
        assert isinstance(result, GroupSearch)
        assert result.optimal
        # the answer is what it claims: its cost is equation (1), its verdict the reference's
        lengths = [len(r) for r in rows]
        cells = [(i, x) for i, row in enumerate(rows) for x in row]
        remaining = [set(row) for row in rows]
        counts = [0] * len(rows)
        for (i, x), off in zip(cells, result.removed, strict=True):
            if off:
                remaining[i].discard(x)
                counts[i] += 1
        assert result.cost == pytest.approx(inverse_weighted_cost(lengths, counts))
        score = reference_score(remaining, label_sets, model, prior)
        assert reference_passes(score, model) == result.satisfied
        if expected_cost is None:
            assert not result.satisfied
            assert score == pytest.approx(expected_score)  # best effort: the best score of any pattern
        else:
            assert result.satisfied
            assert result.cost == pytest.approx(expected_cost, abs=1e-9)
            if not math.isnan(result.first_solution_cost):
                assert result.first_solution_cost >= result.cost - 1e-9
    assert results["adaptive"].cost == pytest.approx(results["baseline"].cost, abs=1e-9)


def experiment_group(n_records: int = 10, seed: int = 3):
    """A group of the synthesized data: records of one QI value, all terms, the table's prior."""
    qi = pl.DataFrame({"zone": ["a"] * 400})
    table, knowledge = synthesize_experiment_data(qi, n_labels=300, seed=seed)
    records = ItemSets.from_column(table.column("terms"), ";").recode(knowledge.sets.vocabulary)
    item_bits = item_bitsets(knowledge.sets, len(knowledge.sets.vocabulary))
    linked = linked_matrix(records, item_bits, knowledge.n_labels)
    counts = np.diff(linked.indptr)
    prior = np.bincount(
        linked.indices, weights=np.repeat(1 / np.maximum(counts, 1), counts), minlength=knowledge.n_labels
    ) / len(counts)
    rows = [records.row(i).tolist() for i in range(n_records)]
    return rows, knowledge.sets.to_sparse().T.tocsr(), prior


def test_adaptive_and_baseline_agree_when_both_finish():
    rows, matrix, prior = experiment_group(2)
    model = QSCLDiversity(1.0, 3)
    adaptive = suppress_group(rows, matrix, prior, model, strategy="adaptive", time_limit=None)
    baseline = suppress_group(rows, matrix, prior, model, strategy="baseline", time_limit=None)
    assert adaptive.optimal and baseline.optimal
    assert adaptive.satisfied and baseline.satisfied
    assert adaptive.cost == pytest.approx(baseline.cost, abs=1e-12)
    assert adaptive.first_solution_cost >= adaptive.cost - 1e-12


def test_time_limit_is_respected():
    rows, matrix, prior = experiment_group(12)
    model = QSCLDiversity(1.0, 30)
    for strategy in ("adaptive", "baseline"):
        started = time.perf_counter()
        result = suppress_group(rows, matrix, prior, model, strategy=strategy, time_limit=0.2)
        elapsed = time.perf_counter() - started
        assert elapsed < 0.5, elapsed
        assert not result.optimal
        assert result.removed.shape == (sum(len(r) for r in rows),)
        assert result.satisfied  # removing everything passes l = 30 here, at worst
        assert 0 < result.cost <= 1
        assert result.nodes_visited > 0


def test_group_that_passes_is_left_alone():
    rows, matrix, prior = experiment_group(8)
    result = suppress_group(rows, matrix, prior, QSCLDiversity(1.0, 2), time_limit=None)
    assert result.satisfied and result.optimal and result.cost == 0 and not result.removed.any()


# ---------------------------------------------------------------------------------------------------
# Over a table
# ---------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def experiment():
    rng = np.random.default_rng(7)
    qi = pl.DataFrame(
        {
            "age": rng.integers(18, 80, size=300),
            "zone": rng.choice(["north", "south", "east", "west"], size=300).tolist(),
        }
    )
    return synthesize_experiment_data(qi, n_labels=400, poisson_lambda=30, seed=1)


def test_bitset_linking_matches_linked_labels(experiment):
    table, knowledge = experiment
    records = ItemSets.from_column(table.column("terms"), ";").recode(knowledge.sets.vocabulary)
    records = records.without(np.random.default_rng(0).random(records.items.size) < 0.6)
    item_bits = item_bitsets(knowledge.sets, len(knowledge.sets.vocabulary))
    ours = linked_matrix(records, item_bits, knowledge.n_labels)
    theirs = linked_labels(records, knowledge)
    assert (ours != theirs).nnz == 0


@pytest.mark.slow
@pytest.mark.parametrize(
    ("model", "k", "strategy"),
    [
        (QSCLDiversity(1.0, 5), 3, "adaptive"),
        (QSCLDiversity(2.0, 3), 1, "baseline"),
        (QSTCloseness(0.5), 3, "adaptive"),
        (QSTCloseness(0.3), 2, "baseline"),
    ],
)
def test_every_group_passes_after(experiment, model, k, strategy):
    table, knowledge = experiment
    release = quasi_sensitive_anonymize(
        table, set_column="terms", knowledge=knowledge, k=k, model=model, strategy=strategy, time_limit=0.05
    )
    figures = release.figures_as(QuasiSensitiveFigures)
    assert figures.violating_before > 0
    n_groups = figures.groups
    vocabulary = knowledge.sets.vocabulary
    after = ItemSets.from_column(release.table.column("terms"), ";").recode(vocabulary)
    before = ItemSets.from_column(table.column("terms"), ";").recode(vocabulary)
    # re-checked with the models module, against the prior of the original data
    prior = beliefs(release.classes, n_groups, linked_labels(before, knowledge)).prior
    result = model.evaluate(beliefs(release.classes, n_groups, linked_labels(after, knowledge), prior))
    violating = int(np.count_nonzero(~result.passes))
    assert violating == figures.violating_after <= figures.unsatisfied
    if isinstance(model, QSCLDiversity):
        assert result.passes.all()
    # items are only taken out
    assert figures.suppressed_items == before.items.size - after.items.size
    for i in range(0, table.n_records, 17):
        assert set(after.row(i).tolist()) <= set(before.row(i).tolist())
    if k == 1:
        assert release.cell_penalty.sum() == 0 and figures.generalization_ncp == 0
        keys = table.data.select("age", "zone").rows()
        for i in range(table.n_records):
            for j in range(i + 1, min(i + 40, table.n_records)):
                assert (keys[i] == keys[j]) == (release.classes[i] == release.classes[j])
    else:
        assert np.bincount(release.classes).min() >= k
        assert figures.generalization_ncp > 0


def test_total_time_limit(experiment):
    table, knowledge = experiment
    started = time.perf_counter()
    release = quasi_sensitive_anonymize(
        table,
        set_column="terms",
        knowledge=knowledge,
        k=10,
        model=QSCLDiversity(1.0, 30),
        time_limit=None,
        total_time_limit=0.3,
    )
    assert time.perf_counter() - started < 2.0
    assert release.figures_as(QuasiSensitiveFigures).violating_after == 0


def test_figures(experiment):
    table, knowledge = experiment
    five = figure5(table, knowledge, ls=(5, 10), cs=(1.0,), default_l=5, k=3, run_time_limit=0.1)
    assert five.height == 6 and set(five.get_column("strategy")) == {"adaptive", "baseline"}
    assert (five.get_column("violating_after") == 0).all()
    six = figure6(table, knowledge, ts=(0.4, 0.6), ks=(1, 5), run_time_limit=0.1)
    assert six.height == 4 and {"t_squared", "removal_cost", "generalization_ncp"} <= set(six.columns)
    by_k = six.filter(pl.col("t") == 0.4).sort("k")
    ncp = by_k.get_column("generalization_ncp").to_list()
    assert ncp[0] == 0 < ncp[1]


def test_experiment_data_construction():
    qi = pl.DataFrame({"zone": ["a", "b"] * 50})
    table, knowledge = synthesize_experiment_data(qi, n_labels=50, poisson_lambda=20, seed=4)
    again, _ = synthesize_experiment_data(qi, n_labels=50, poisson_lambda=20, seed=4)
    assert table.data.equals(again.data)
    records = ItemSets.from_column(table.column("terms"), ";").recode(knowledge.sets.vocabulary)
    assert (records.lengths() == 9).all()
    assert knowledge.n_labels == 50 and len(knowledge.sets.vocabulary) <= 60
    assert (knowledge.sets.lengths() >= 9).all()
    assert table.schema["terms"].role is Role.QUASI_SENSITIVE
    # every record links to at least its hidden label
    assert (np.diff(linked_labels(records, knowledge).indptr) >= 1).all()


# ---------------------------------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------------------------------


def test_bad_input():
    table, knowledge = figure1()

    def run(**changes):
        arguments = {
            "set_column": "symptoms",
            "knowledge": knowledge,
            "k": 2,
            "model": QSCLDiversity(1.0, 2),
        }
        arguments.update(changes)
        return quasi_sensitive_anonymize(table, **arguments)

    with pytest.raises(ConfigError, match="c"):
        run(model=QSCLDiversity(0.0, 2))
    with pytest.raises(ConfigError, match="c"):
        run(model=QSCLDiversity(-1.0, 2))
    with pytest.raises(ConfigError, match="l"):
        run(model=QSCLDiversity(1.0, 0))
    with pytest.raises(ConfigError, match="t"):
        run(model=QSTCloseness(1.5))
    with pytest.raises(ConfigError, match="t"):
        run(model=QSTCloseness(-0.1))
    # the rules of the parameters object (QuasiSensitiveCall), in its wording
    with pytest.raises(ConfigError, match="k must be greater than or equal to 1, got 0"):
        run(k=0)
    with pytest.raises(ConfigError, match="k must be a valid integer, got 1.5"):
        run(k=1.5)
    with pytest.raises(ConfigError, match="model must be an instance of QSModel, got 'l-diversity'"):
        run(model="l-diversity")
    with pytest.raises(ConfigError, match="strategy must be 'adaptive' or 'baseline', got 'greedy'"):
        run(strategy="greedy")
    # the time limits are > 0 for the Python function as on the command line (one rule)
    for name in ("time_limit", "total_time_limit"):
        for value in (-1, 0):
            with pytest.raises(ConfigError, match=f"^{name} must be greater than 0, got {value}$"):
                run(**{name: value})
    with pytest.raises(ConfigError, match="node_limit must be greater than or equal to 1, got 0"):
        run(node_limit=0)
    with pytest.raises(ConfigError, match="separator"):
        run(separator="")
    # the data's rules
    with pytest.raises(ConfigError, match="set_column 'diagnosis' is not a column of the data"):
        run(set_column="diagnosis")
    empty = Knowledge(labels=(), sets=ItemSets(np.zeros(1, np.int64), np.zeros(0, np.int32), ()))
    with pytest.raises(ConfigError, match="the external knowledge is empty"):
        run(knowledge=empty)
    with pytest.raises(ConfigError, match="the data has no records"):
        quasi_sensitive_anonymize(
            Table(table.data.head(0), table.schema),
            set_column="symptoms",
            knowledge=knowledge,
            k=2,
            model=QSCLDiversity(1.0, 2),
        )
    with pytest.raises(ConfigError, match="strategy"):
        suppress_group(
            [[0]], sp.csr_matrix(np.ones((1, 1), bool)), np.ones(1), QSTCloseness(0.1), strategy="x"
        )


# ---------------------------------------------------------------------------------------------------
# One entry point: the keyword function builds QuasiSensitiveCall and runs the registered method
# ---------------------------------------------------------------------------------------------------


def test_keyword_call_and_registered_run_agree(tmp_path):
    table, knowledge = figure1()
    (tmp_path / "knowledge.csv").write_text(
        "label,items\nFlu,Coughing;Headache;Sore throat\nHepatitis B,Loss of appetite;Vomiting;Dark urine\n"
    )
    # the command line's parameters: the node limit alone bounds the search, replayable
    params = QuasiSensitiveParams(knowledge=tmp_path / "knowledge.csv", k=2, l=2, c=1.0, node_limit=1000)
    assert params.effective_time_limit is None
    with pytest.warns(SdcWarning, match="never occur in the data"):  # the file is read against the data
        by_params = run_method("quasi-sensitive", table, params)
    assert by_params.params == params.model_copy(update={"set_column": "symptoms"})
    # the keyword function: time_limit=None is no bound, so the same search runs
    release = quasi_sensitive_anonymize(
        table,
        set_column="symptoms",
        knowledge=knowledge,
        k=2,
        model=QSCLDiversity(1.0, 2),
        time_limit=None,
        node_limit=1000,
    )
    assert isinstance(release.params, QuasiSensitiveCall)
    assert release.params.knowledge is knowledge and release.params.effective_time_limit is None
    assert release.table.data.equals(by_params.table.data)
    assert np.array_equal(release.classes, by_params.classes)
    mine, theirs = (r.figures_as(QuasiSensitiveFigures).as_dict() for r in (release, by_params))
    for timing in ("phase1_seconds", "phase2_seconds", "first_solution_seconds_mean", "per_group"):
        mine.pop(timing), theirs.pop(timing)
    assert mine == theirs
    # the keyword release has a summary and a recipe step naming its model
    summary = METHODS.get("quasi-sensitive").summary(release)
    assert summary["time_limit"] is None and summary["node_limit"] == 1000 and summary["k"] == 2
    assert release.params.to_recipe() == {
        "model": "QS (1,2)-diversity",
        "k": 2,
        "set_column": "symptoms",
        "separator": ";",
        "strategy": "adaptive",
        "time_limit": None,
        "total_time_limit": None,
        "node_limit": 1000,
        "quasi_identifiers": None,
    }


def test_search_bounds_of_each_caller():
    """The keyword function's bounds: 1 s per group by default, None for no bound, and a node limit
    together with the time limits; the command line's: 1 s when not given, and a node limit alone."""
    _, knowledge = figure1()
    model = QSCLDiversity(1.0, 2)
    call = QuasiSensitiveCall(knowledge=knowledge, model=model)
    assert call.time_limit == 1.0 and call.effective_time_limit == 1.0
    both = QuasiSensitiveCall(knowledge=knowledge, model=model, node_limit=10, total_time_limit=5)
    assert (both.effective_time_limit, both.total_time_limit, both.node_limit) == (1.0, 5, 10)
    assert QuasiSensitiveCall(knowledge=knowledge, model=model, time_limit=None).effective_time_limit is None
    assert QuasiSensitiveParams(knowledge="k.csv", l=2).effective_time_limit == 1.0
    with pytest.raises(
        ConfigError, match=r"takes node_limit or the time limits \(time_limit, total_time_limit\)"
    ):
        QuasiSensitiveParams.parse(
            {"knowledge": "k.csv", "l": 2, "node_limit": 10, "time_limit": 1}, method="quasi-sensitive"
        )
    # the model object in place of l, c and t
    with pytest.raises(ConfigError, match="quasi-sensitive takes the model object, not l, t"):
        QuasiSensitiveCall.parse(
            {"knowledge": knowledge, "model": model, "l": 2, "t": 0.3}, method="quasi-sensitive"
        )
    with pytest.raises(
        ConfigError, match=r"quasi-sensitive needs a model: QSCLDiversity\(c, l\) or QSTCloseness\(t\)"
    ):
        QuasiSensitiveCall.parse({"knowledge": knowledge}, method="quasi-sensitive")
