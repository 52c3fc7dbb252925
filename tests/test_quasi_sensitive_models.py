"""QS beliefs, QS (c,l)-diversity and QS t-closeness (Shi, Xiong & Fung 2010): hand-computed values.

The Figure 1 data of the paper spells "Sore Throat" in table (a) and "Sore throat" in (b)-(d); item
matching is exact, so the fixtures use "Sore Throat" throughout.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.errors import ConfigError, SdcWarning
from sdckit.models.base import ModelResult
from sdckit.models.quasi_sensitive import (
    Beliefs,
    QSCLDiversity,
    QSTCloseness,
    beliefs,
    link_probabilities,
    qs_check,
)
from sdckit.params import options_spelled
from sdckit.setvalued import ItemSets, Knowledge, linked_labels


def figure1():
    records = ItemSets.from_column(
        pl.Series(
            "Symptoms",
            [
                "Coughing;Headache;Sore Throat",
                "Coughing;Headache",
                "Headache;Vomiting",
                "Headache;Sore Throat",
            ],
        )
    )
    with pytest.warns(SdcWarning, match="'Dark urine', 'Loss of appetite'"):
        knowledge = Knowledge.from_mapping(
            {
                "Flu": ["Coughing", "Headache", "Sore Throat"],
                "Hepatitis B": ["Loss of appetite", "Vomiting", "Dark urine"],
            },
            vocabulary=records.vocabulary,
        )
    return records, knowledge


# Table 1(d): [20,30] M GA = records 1, 2; [30,40] F TX = records 3, 4.
FIGURE1_GROUPS = np.array([0, 0, 1, 1])


def test_figure1_beliefs():
    records, knowledge = figure1()
    found = beliefs(FIGURE1_GROUPS, 2, linked_labels(records, knowledge))
    assert isinstance(found, Beliefs)
    # K(t) = {Flu}, {Flu}, {}, {Flu}: P(t -> Flu) = 1, 1, 0, 1.
    assert found.label_counts.tolist() == [1, 1, 0, 1]
    # prior: mean over the four records = (3/4, 0)
    assert found.prior.tolist() == [0.75, 0.0]
    # group {1,2}: both link only to Flu -> beta_Flu = 1; group {3,4}: (0 + 1)/2
    assert found.posterior.toarray().tolist() == [[1.0, 0.0], [0.5, 0.0]]
    assert found.group_sizes.tolist() == [2, 2]
    assert found.n_groups == 2 and found.n_labels == 2
    assert found.group(0).tolist() == [1.0, 0.0]


def test_figure1_models():
    records, knowledge = figure1()
    found = beliefs(FIGURE1_GROUPS, 2, linked_labels(records, knowledge))
    # p = [1] and [1/2]: l = 1 holds with c = 1 (p_1 <= p_1), l = 2 fails (tail 0).
    for l in (2, 30):  # noqa: E741
        result = QSCLDiversity(c=1, l=l).evaluate(found)
        assert isinstance(result, ModelResult)
        assert result.achieved.tolist() == [1.0, 1.0]
        assert result.passes.tolist() == [False, False]
        assert result.higher_is_better
    assert QSCLDiversity(c=1, l=1).evaluate(found).passes.tolist() == [True, True]
    # c < 1: even l = 1 fails (p_1 > c p_1)
    assert QSCLDiversity(c=0.5, l=1).evaluate(found).achieved.tolist() == [0.0, 0.0]
    # t-closeness: |1 - 3/4| = |1/2 - 3/4| = 1/4 (Hepatitis B has beta = alpha = 0)
    closeness = QSTCloseness(t=0.2).evaluate(found)
    assert closeness.achieved == pytest.approx([0.25, 0.25], abs=1e-15)
    assert closeness.passes.tolist() == [False, False]
    assert not closeness.higher_is_better
    assert QSTCloseness(t=0.4).evaluate(found).passes.tolist() == [True, True]
    assert QSTCloseness(t=0.25).evaluate(found).passes.tolist() == [True, True]  # d <= t


def test_figure1_qs_check():
    records, knowledge = figure1()
    report = qs_check(FIGURE1_GROUPS, 2, records, knowledge, [QSCLDiversity(1, 2), QSTCloseness(0.4)])
    assert report.passes.tolist() == [False, False]
    assert [r.model for r in report.results] == ["QS (1,2)-diversity", "QS 0.4-closeness"]
    assert report.summary()["violating_groups"] == 2
    assert report.summary()["models"]["QS 0.4-closeness"]["worst"] == pytest.approx(0.25)
    assert report.linked.toarray().tolist() == [[True, False], [True, False], [False, False], [True, False]]
    # Suppressing Coughing from record 2 and Sore Throat from record 1 does not help: {Headache} still
    # links only to Flu (Hepatitis B holds no Headache).
    removed = np.zeros(records.items.size, dtype=bool)
    removed[[2, 3]] = True
    again = qs_check(FIGURE1_GROUPS, 2, records.without(removed), knowledge, QSCLDiversity(1, 2))
    assert again.results[0].achieved.tolist() == [1.0, 1.0]


# Multi-label records ---------------------------------------------------------------------------------
# A = {x, y}, B = {x, z, w}, C = {z, w, v}; records {x} -> {A, B}, {y} -> {A}, {z, w} -> {B, C} in group 0
# and {v} -> {C} in group 1.


def multi_label():
    records = ItemSets.from_lists([["x"], ["y"], ["z", "w"], ["v"]])
    knowledge = Knowledge.from_mapping({"A": ["x", "y"], "B": ["x", "z", "w"], "C": ["z", "w", "v"]})
    knowledge = knowledge.with_vocabulary(records.vocabulary)
    return records, knowledge


def test_multi_label_beliefs():
    records, knowledge = multi_label()
    linked = linked_labels(records, knowledge)
    assert linked.toarray().tolist() == [
        [True, True, False],
        [True, False, False],
        [False, True, True],
        [False, False, True],
    ]
    found = beliefs(np.array([0, 0, 0, 1]), 2, linked)
    # beta_A = (1/2 + 1 + 0)/3, beta_B = (1/2 + 0 + 1/2)/3, beta_C = (0 + 0 + 1/2)/3
    assert found.posterior.toarray()[0] == pytest.approx([1 / 2, 1 / 3, 1 / 6], abs=1e-15)
    assert found.posterior.toarray()[1].tolist() == [0.0, 0.0, 1.0]
    # alpha = (1.5, 1, 1.5) / 4
    assert found.prior == pytest.approx([0.375, 0.25, 0.375], abs=1e-15)
    assert found.label_counts.tolist() == [2, 1, 2, 1]


def test_multi_label_diversity_levels():
    records, knowledge = multi_label()
    found = beliefs(np.array([0, 0, 0, 1]), 2, linked_labels(records, knowledge))
    # group 0, p = 1/2, 1/3, 1/6: l = 2 tail = 1/2 (boundary, <= holds), l = 3 tail = 1/6
    # c = 1, 2: 1/2 > c/6 -> l' = 2; c = 3: 1/2 <= 3/6 -> l' = 3. Group 1: p = [1] -> l' = 1.
    assert QSCLDiversity(1, 2).evaluate(found).achieved.tolist() == [2.0, 1.0]
    assert QSCLDiversity(2, 3).evaluate(found).achieved.tolist() == [2.0, 1.0]
    result = QSCLDiversity(3, 3).evaluate(found)
    assert result.achieved.tolist() == [3.0, 1.0]
    assert result.passes.tolist() == [True, False]
    assert QSCLDiversity(1, 2).evaluate(found).passes.tolist() == [True, False]
    # c = 0.9: group 0 l = 1 holds (1/2 <= 0.9), l = 2 fails (1/2 > 0.45); group 1: 1 > 0.9 -> 0
    assert QSCLDiversity(0.9, 1).evaluate(found).achieved.tolist() == [1.0, 0.0]
    # c = 0.4 < p_1 / (sum p) for group 0 -> 0
    assert QSCLDiversity(0.4, 1).evaluate(found).achieved.tolist() == [0.0, 0.0]


def test_multi_label_closeness():
    records, knowledge = multi_label()
    found = beliefs(np.array([0, 0, 0, 1]), 2, linked_labels(records, knowledge))
    # group 0: beta - alpha = (1/8, 1/12, -5/24) -> sqrt(38/576); group 1: (-3/8, -1/4, 5/8) -> sqrt(0.59375)
    distance = QSTCloseness(0.3).evaluate(found)
    assert distance.achieved == pytest.approx([math.sqrt(38) / 24, math.sqrt(0.59375)], abs=1e-14)
    assert distance.passes.tolist() == [True, False]
    assert QSTCloseness(math.sqrt(2)).evaluate(found).passes.tolist() == [True, True]


def test_group_without_links_and_empty_group():
    records = ItemSets.from_lists([["q"], ["x"], ["x"]])
    knowledge = Knowledge.from_mapping({"A": ["x"], "B": ["x", "y"]}, vocabulary=["q", "x", "y"])
    found = beliefs(np.array([0, 1, 1]), 3, linked_labels(records, knowledge))
    assert found.posterior.toarray().tolist() == [[0.0, 0.0], [0.5, 0.5], [0.0, 0.0]]
    assert found.group_sizes.tolist() == [1, 2, 0]
    assert found.prior == pytest.approx([1 / 3, 1 / 3])
    diversity = QSCLDiversity(1, 2).evaluate(found)
    # a group linking to no label reveals nothing: passes with l' = inf
    assert diversity.achieved.tolist() == [math.inf, 2.0, math.inf]
    assert diversity.passes.tolist() == [True, True, True]
    assert QSTCloseness(0.5).evaluate(found).achieved == pytest.approx(
        [math.sqrt(2 / 9), math.sqrt(2) / 6, math.sqrt(2 / 9)]
    )


def test_suppressed_records_count_in_prior_only():
    records, knowledge = multi_label()
    found = beliefs(np.array([0, 0, -1, 0]), 1, linked_labels(records, knowledge))
    assert found.prior == pytest.approx([0.375, 0.25, 0.375])
    assert found.posterior.toarray()[0] == pytest.approx([1.5 / 3, 0.5 / 3, 1 / 3])
    assert found.group_sizes.tolist() == [3]


def test_custom_prior_and_bad_arguments():
    records, knowledge = multi_label()
    linked = linked_labels(records, knowledge)
    found = beliefs(np.zeros(4, dtype=int), 1, linked, prior=np.array([1.0, 0.0, 0.0]))
    assert found.prior.tolist() == [1.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="one belief per label"):
        beliefs(np.zeros(4, dtype=int), 1, linked, prior=np.ones(2))
    with pytest.raises(ValueError, match="one group per record"):
        beliefs(np.zeros(3, dtype=int), 1, linked)
    with pytest.raises(ValueError, match=r"-1 \.\. 0"):
        beliefs(np.array([0, 1, 0, 0]), 1, linked)
    with pytest.raises(ConfigError, match=r"^n_groups must be greater than or equal to 0, got -1$"):
        beliefs(np.zeros(4, dtype=int), -1, linked)


def test_link_probabilities():
    linked = sp.csr_matrix(np.array([[1, 1, 0], [0, 0, 0], [1, 1, 1]], dtype=bool))
    assert link_probabilities(linked).toarray() == pytest.approx(
        np.array([[0.5, 0.5, 0], [0, 0, 0], [1 / 3, 1 / 3, 1 / 3]])
    )


@pytest.mark.parametrize(
    ("build", "pattern"),
    [
        # The rules of QuasiSensitiveParams' fields (sdckit.params), in its wording.
        (lambda: QSCLDiversity(c=0, l=2), r"^c must be greater than 0, got 0$"),
        (lambda: QSCLDiversity(c=-1, l=2), r"^c must be greater than 0, got -1$"),
        (lambda: QSCLDiversity(c=1, l=0), r"^l must be greater than or equal to 1, got 0$"),
        (lambda: QSCLDiversity(c=1, l=2.5), r"^l must be a valid integer, got 2.5$"),
        (lambda: QSCLDiversity(c=1, l=True), r"^l must be a valid integer, got True$"),
        (lambda: QSTCloseness(t=-0.1), r"^t must be greater than or equal to 0, got -0.1$"),
        (lambda: QSTCloseness(t=1.5), r"^t must be in \[0, 1.41421\], got 1.5$"),
        (lambda: QSTCloseness(t=float("nan")), r"^t must be a finite number, got nan$"),
    ],
)
def test_bad_parameters(build, pattern):
    with pytest.raises(ConfigError, match=pattern):
        build()


def test_the_bound_of_qs_t_is_named_as_the_command_line_spells_it():
    with options_spelled(), pytest.raises(ConfigError, match=r"^-t must be in \[0, 1.41421\], got 2.0$"):
        QSTCloseness(2.0)
    with options_spelled(), pytest.raises(ConfigError, match=r"^--c must be greater than 0, got 0$"):
        QSCLDiversity(c=0, l=2)


def test_parameter_bounds_accepted():
    assert QSTCloseness(0).t == 0.0
    assert QSTCloseness(math.sqrt(2)).t == math.sqrt(2)
    assert QSCLDiversity().name == "QS (1,30)-diversity"  # the paper's defaults
    assert QSTCloseness().name == "QS 0.4-closeness"


def test_qs_check_rejects_other_models():
    records, knowledge = multi_label()
    with pytest.raises(ConfigError, match="QS models"):
        qs_check(np.zeros(4, dtype=int), 1, records, knowledge, [object()])


# Properties ------------------------------------------------------------------------------------------

WORDS = ["a", "b", "c", "d", "e"]


@st.composite
def tables(draw):
    n = draw(st.integers(1, 15))
    records = [sorted(draw(st.sets(st.sampled_from(WORDS), max_size=3))) for _ in range(n)]
    labels = [
        sorted(draw(st.sets(st.sampled_from(WORDS), min_size=1, max_size=4)))
        for _ in range(draw(st.integers(1, 5)))
    ]
    n_groups = draw(st.integers(1, n))
    groups = np.array([draw(st.integers(0, n_groups - 1)) for _ in range(n)])
    return records, labels, groups, n_groups


def reference_levels(p, c):
    """l' by the definition, one l at a time."""
    p = sorted(p, reverse=True)
    if not p:
        return math.inf
    level = 0
    for l in range(1, len(p) + 2):  # noqa: E741
        if p[0] <= c * sum(p[l - 1 :]) + 1e-12:
            level = l
    return float(level)


@settings(max_examples=80)
@given(table=tables(), c=st.sampled_from([0.5, 1.0, 2.0, 3.0]))
def test_beliefs_and_models_against_reference(table, c):
    records, labels, groups, n_groups = table
    sets = ItemSets.from_lists(records, vocabulary=WORDS)
    knowledge = Knowledge(
        labels=tuple(f"L{i}" for i in range(len(labels))), sets=ItemSets.from_lists(labels, vocabulary=WORDS)
    )
    found = beliefs(groups, n_groups, linked_labels(sets, knowledge))
    # P(t -> L) by the definition, then beta and alpha
    links = [[set(r) <= set(s) for s in labels] for r in records]
    prob = np.array([[1 / sum(row) if hit else 0.0 for hit in row] for row in links])
    prior = prob.mean(axis=0)
    assert found.prior == pytest.approx(prior, abs=1e-12)
    posterior = found.posterior.toarray()
    levels = QSCLDiversity(c, 2).evaluate(found).achieved
    distances = QSTCloseness(0.4).evaluate(found).achieved
    for g in range(n_groups):
        members = groups == g
        if not members.any():
            assert posterior[g].tolist() == [0.0] * len(labels)
            continue
        beta = prob[members].mean(axis=0)
        assert posterior[g] == pytest.approx(beta, abs=1e-12)
        # sum beta <= 1, = 1 when every record of the group links to some label
        assert posterior[g].sum() <= 1 + 1e-12
        if all(any(row) for row, m in zip(links, members, strict=True) if m):
            assert posterior[g].sum() == pytest.approx(1.0, abs=1e-12)
        assert levels[g] == reference_levels([v for v in beta if v > 0], c)
        assert distances[g] == pytest.approx(math.sqrt(((beta - prior) ** 2).sum()), abs=1e-12)


@settings(max_examples=40)
@given(table=tables())
def test_one_group_posterior_is_the_prior(table):
    records, labels, _, _ = table
    sets = ItemSets.from_lists(records, vocabulary=WORDS)
    knowledge = Knowledge(
        labels=tuple(f"L{i}" for i in range(len(labels))), sets=ItemSets.from_lists(labels, vocabulary=WORDS)
    )
    found = beliefs(np.zeros(len(records), dtype=int), 1, linked_labels(sets, knowledge))
    assert found.posterior.toarray()[0] == pytest.approx(found.prior, abs=1e-15)
    assert QSTCloseness(0).evaluate(found).passes.tolist() == [True]
    assert QSTCloseness(0).evaluate(found).achieved[0] <= 1e-12


def test_many_groups_vectorized():
    rng = np.random.default_rng(7)
    n, vocabulary = 20_000, [f"i{k:03d}" for k in range(60)]
    lengths = rng.integers(0, 4, n)
    codes = rng.integers(0, 60, lengths.sum())
    frame = pl.DataFrame({"r": np.repeat(np.arange(n), lengths), "i": np.array(vocabulary)[codes]})
    records = ItemSets.from_long(frame, "r", "i", n_records=n, vocabulary=vocabulary)
    label_sets = {f"L{k}": list(rng.choice(vocabulary, 25, replace=False)) for k in range(40)}
    knowledge = Knowledge.from_mapping(label_sets, vocabulary=vocabulary)
    groups = rng.integers(0, 2_000, n)
    report = qs_check(groups, 2_000, records, knowledge, [QSCLDiversity(1, 3), QSTCloseness(0.3)])
    sums = np.asarray(report.beliefs.posterior.sum(axis=1)).ravel()
    assert np.all(sums <= 1 + 1e-12)
    assert report.results[0].achieved.shape == (2_000,)
    assert np.isfinite(report.results[1].achieved).all()
