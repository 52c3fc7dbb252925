"""Overlapping correlation clustering (Bonchi, Gionis & Ukkonen 2011) and its improved-slicing helper.

Label ids are 0-based: SPEC §2.5's labels {1}, {2}, {3} are {0}, {1}, {2} here.

* SPEC §2.5 worked examples: three-object costs, the Jaccard subproblem's A and b, the NNLS solution and
  the chosen set, the exact costs of the four candidates for both H, the intersection greedy.
* Brute force on tiny instances (hypothesis): subproblems never propose a worse set, every accepted move
  strictly lowers C, and the result is a local optimum over every label set of size 1..p (also under β,
  over the moves that keep β groups); the reported cost and group count match a recomputation.
* Two 0/1 cliques with p = 1 are recovered; β: n_groups >= β, β = n_labels gives disjoint labels, the
  initialization fallback; determinism by seed.
* occ_columns: sensitive attribute in exactly one column, last; every attribute covered; >= β columns.
* Bad input, clusters() merging/ordering, speed for N = 15, k = 8.
"""

from __future__ import annotations

import time
from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.anonymize._overlapping_clustering import (
    OverlappingClustering,
    _intersection_subproblem,
    _jaccard_subproblem,
    _jaccard_system,
    _local_search,
    _set_costs,
    occ_columns,
    occ_cost,
    overlapping_correlation_clustering,
)
from sdckit.errors import ConfigError

TOL = 1e-9

# SPEC §2.5: s(A,B) = 1, s(B,C) = 1, s(A,C) = 0.
THREE = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 1.0], [0.0, 1.0, 0.0]])


def rows(sets, k):
    out = np.zeros((len(sets), k), dtype=bool)
    for i, s in enumerate(sets):
        out[i, list(s)] = True
    return out


def groups_of(labels) -> int:
    """Independent group count: merge label sets that share a label until stable."""
    comps: list[set[int]] = []
    for label_set in labels:
        merged = set(label_set)
        rest = []
        for c in comps:
            if c & merged:
                merged |= c
            else:
                rest.append(c)
        comps = [*rest, merged]
    return len([c for c in comps if c])


def all_sets(k, p):
    return [frozenset(c) for q in range(1, p + 1) for c in combinations(range(k), q)]


# ----------------------------------------------------------------------------------------------
# SPEC §2.5 worked examples


def test_three_object_costs():
    assert occ_cost([{0}, {0, 1}, {1}], THREE) == pytest.approx(1.0)
    assert occ_cost([{0}, {0, 1}, {1}], THREE, "intersection") == pytest.approx(0.0)
    assert occ_cost([{0}, {0}, {1}], THREE) == pytest.approx(1.0)
    assert occ_cost([{0}, {0}, {1}], THREE, "intersection") == pytest.approx(1.0)
    # Label ids are arbitrary integers: SPEC's 1-based ids give the same costs.
    assert occ_cost([{1}, {1, 2}, {2}], THREE) == pytest.approx(1.0)
    assert occ_cost([(7,), (7, 9), (9,)], THREE, "intersection") == pytest.approx(0.0)


# Subproblem: others ℓ(A) = {0}, ℓ(B) = {1}, ℓ(C) = {0, 1}; targets z = (1, 0, 0.5); k = 2, p = 2.
OTHERS = rows([{0}, {1}, {0, 1}], 2)
Z = np.array([1.0, 0.0, 0.5])


def test_jaccard_system_matrix():
    a, b = _jaccard_system(OTHERS, Z)
    np.testing.assert_allclose(a, [[1.0, -1.0], [0.0, 1.0], [1.0, 1.0]])
    np.testing.assert_allclose(b, [1.0, 0.0, 1.0])


def test_jaccard_subproblem_nnls_and_choice():
    sub = _jaccard_subproblem(OTHERS, Z, 2, np.array([False, True]))
    np.testing.assert_allclose(sub.x_hat, [1.0, 0.0], atol=1e-12)
    assert sub.residual == pytest.approx(0.0, abs=1e-12)
    assert np.flatnonzero(sub.best).tolist() == [0]
    assert sub.cost == pytest.approx(0.0)
    # Candidates: top-1 {0}, top-2 {0,1}, the current {1}; no unused label with k = 2.
    assert [np.flatnonzero(r).tolist() for r in sub.candidates] == [[0], [0, 1], [1]]
    np.testing.assert_allclose(sub.costs, [0.0, 1.5, 2.0])


def test_jaccard_subproblem_with_unused_label():
    others = rows([{0}, {1}, {0, 1}], 3)  # label 2 (SPEC's 3) is unused
    sub = _jaccard_subproblem(others, Z, 2, np.array([False, True, False]))
    np.testing.assert_allclose(sub.x_hat, [1.0, 0.0, 0.0], atol=1e-12)
    assert [np.flatnonzero(r).tolist() for r in sub.candidates] == [[0], [0, 1], [1], [2]]
    np.testing.assert_allclose(sub.costs, [0.0, 1.5, 2.0, 1.5])
    assert np.flatnonzero(sub.best).tolist() == [0]


def test_exact_costs_of_the_four_candidates():
    others = rows([{0}, {1}, {0, 1}], 3)
    candidates = rows([{0}, {1}, {0, 1}, {2}], 3)
    np.testing.assert_allclose(_set_costs(candidates, others, Z, "jaccard"), [0.0, 2.0, 1.5, 1.5])
    np.testing.assert_allclose(_set_costs(candidates, others, Z, "intersection"), [0.5, 2.5, 1.5, 1.5])


@pytest.mark.parametrize("k", [2, 3])
def test_intersection_greedy_picks_label_zero(k):
    others = rows([{0}, {1}, {0, 1}], k)
    sub = _intersection_subproblem(others, Z, 2, rows([{1}], k)[0], TOL)
    assert np.flatnonzero(sub.best).tolist() == [0]
    assert sub.cost == pytest.approx(0.5)
    # The greedy stopped after {0}: adding label 1 would give 1.5.
    assert [np.flatnonzero(r).tolist() for r in sub.candidates] == [[0]]
    assert _set_costs(rows([{0, 1}], k), others, Z, "intersection")[0] == pytest.approx(1.5)


# ----------------------------------------------------------------------------------------------
# Brute force on tiny instances


@st.composite
def instances(draw, max_n=4):
    n = draw(st.integers(2, max_n))
    k = draw(st.integers(1, 3))
    p = draw(st.integers(1, min(2, k)))
    values = draw(
        st.lists(
            st.sampled_from([0.0, 0.25, 0.5, 1.0]) | st.floats(0.0, 1.0),
            min_size=n * (n - 1) // 2,
            max_size=n * (n - 1) // 2,
        )
    )
    s = np.zeros((n, n))
    s[np.triu_indices(n, 1)] = values
    s = s + s.T
    return s, k, p


@settings(max_examples=150)
@given(instances(), st.data())
def test_subproblems_never_worse_than_current(instance, data):
    s, k, p = instance
    n = s.shape[0]
    sets = all_sets(k, p)
    labels = [data.draw(st.sampled_from(sets)) for _ in range(n)]
    matrix = rows(labels, k)
    v = data.draw(st.integers(0, n - 1))
    idx = np.delete(np.arange(n), v)
    others, z = matrix[idx], s[v, idx]
    for function in ("jaccard", "intersection"):
        current_cost = _set_costs(matrix[v][None, :], others, z, function)[0]
        if function == "jaccard":
            sub = _jaccard_subproblem(others, z, p, matrix[v])
        else:
            sub = _intersection_subproblem(others, z, p, matrix[v], TOL)
        assert 1 <= sub.best.sum() <= p
        assert sub.cost <= current_cost + 1e-12
        assert sub.cost == pytest.approx(_set_costs(sub.best[None, :], others, z, function)[0])
        # cost_v differences are total-cost differences.
        new = list(labels)
        new[v] = frozenset(np.flatnonzero(sub.best).tolist())
        assert occ_cost(new, s, function) - occ_cost(labels, s, function) == pytest.approx(
            sub.cost - current_cost, abs=1e-9
        )


@settings(max_examples=100)
@given(instances(), st.sampled_from(["jaccard", "intersection"]), st.integers(0, 2**16), st.booleans())
def test_every_accepted_move_strictly_decreases_cost(instance, function, seed, use_beta):
    s, k, p = instance
    n = s.shape[0]
    beta = min(2, k, n) if use_beta else None
    moves = []
    labels, passes = _local_search(
        s,
        k,
        np.full(n, p),
        function,
        beta,
        100,
        TOL,
        np.random.default_rng(seed),
        on_move=lambda before, after: moves.append((before, after)),
    )
    assert passes >= 1
    for before, after in moves:
        assert int((before != after).any(axis=1).sum()) == 1  # one object moves
        assert after.sum(axis=1).min() >= 1 and after.sum(axis=1).max() <= p
        c_before = occ_cost([np.flatnonzero(r).tolist() for r in before], s, function)
        c_after = occ_cost([np.flatnonzero(r).tolist() for r in after], s, function)
        assert c_after < c_before - TOL + 1e-12
        if beta is not None:
            assert groups_of([set(np.flatnonzero(r).tolist()) for r in after]) >= beta


def assert_local_optimum(result, s, k, p, function, beta=None, singles=()):
    labels = list(result.labels)
    cost = occ_cost(labels, s, function)
    assert result.cost == pytest.approx(cost, abs=1e-12)
    assert result.n_groups == groups_of(labels)
    for v in range(len(labels)):
        p_v = 1 if v in singles else p
        assert 1 <= len(labels[v]) <= p_v
        for candidate in all_sets(k, p_v):
            trial = list(labels)
            trial[v] = candidate
            if beta is not None and groups_of(trial) < beta:
                continue
            assert occ_cost(trial, s, function) >= cost - TOL - 1e-12, (v, candidate)


@settings(max_examples=120)
@given(instances(), st.sampled_from(["jaccard", "intersection"]), st.integers(0, 2**16))
def test_result_is_a_local_optimum(instance, function, seed):
    s, k, p = instance
    result = overlapping_correlation_clustering(
        s, k, max_labels=p, function=function, n_restarts=2, seed=seed
    )
    assert result.restarts == 2 and len(result.iterations) == 2
    assert_local_optimum(result, s, k, p, function)


@settings(max_examples=120)
@given(instances(), st.sampled_from(["jaccard", "intersection"]), st.integers(0, 2**16), st.data())
def test_beta_and_single_label_results(instance, function, seed, data):
    s, k, p = instance
    n = s.shape[0]
    beta = data.draw(st.integers(1, min(k, n)))
    singles = tuple(data.draw(st.sets(st.integers(0, n - 1), max_size=2)))
    result = overlapping_correlation_clustering(
        s, k, max_labels=p, function=function, beta=beta, single_label=singles, n_restarts=2, seed=seed
    )
    assert result.n_groups >= beta
    assert all(len(result.labels[v]) == 1 for v in singles)
    assert_local_optimum(result, s, k, p, function, beta=beta, singles=singles)


# ----------------------------------------------------------------------------------------------
# Known answers


def two_cliques(sizes=(4, 3)):
    n = sum(sizes)
    s = np.zeros((n, n))
    start = 0
    for size in sizes:
        s[start : start + size, start : start + size] = 1.0
        start += size
    np.fill_diagonal(s, 0.0)
    return s


@pytest.mark.parametrize("function", ["jaccard", "intersection"])
@pytest.mark.parametrize("n_labels", [2, 3])
def test_p1_recovers_two_cliques(function, n_labels):
    s = two_cliques()
    result = overlapping_correlation_clustering(s, n_labels, max_labels=1, function=function, seed=3)
    assert result.clusters() == [(0, 1, 2, 3), (4, 5, 6)]
    assert result.cost == 0.0
    assert result.n_groups == 2
    assert all(len(label_set) == 1 for label_set in result.labels)


def test_cliques_with_shuffled_objects():
    rng = np.random.default_rng(5)
    s = two_cliques((5, 4))
    perm = rng.permutation(9)
    shuffled = s[np.ix_(perm, perm)]
    result = overlapping_correlation_clustering(shuffled, 2, max_labels=1, seed=1)
    expected = sorted(
        [tuple(sorted(np.flatnonzero(perm < 5).tolist())), tuple(sorted(np.flatnonzero(perm >= 5).tolist()))]
    )
    assert sorted(result.clusters()) == expected
    assert result.cost == 0.0


def test_overlapping_chain_is_found_with_intersection():
    # A ~ B ~ C but A !~ C: only overlapping labels reach cost 0 (SPEC §2.5).
    result = overlapping_correlation_clustering(THREE, 2, max_labels=2, function="intersection", seed=0)
    assert result.cost == 0.0
    assert len(result.labels[1]) == 2 and not (result.labels[0] & result.labels[2])
    assert result.n_groups == 1


def test_beta_equal_n_labels_forces_disjoint_labels():
    rng = np.random.default_rng(0)
    x = rng.random((7, 7))
    s = (x + x.T) / 2
    for function in ("jaccard", "intersection"):
        result = overlapping_correlation_clustering(s, 3, max_labels=2, beta=3, function=function, seed=2)
        assert result.n_groups == 3
        assert all(len(label_set) == 1 for label_set in result.labels)
        assert set().union(*result.labels) == {0, 1, 2}
        clusters = result.clusters()
        assert len(clusters) == 3 and sorted(i for c in clusters for i in c) == list(range(7))


def test_beta_prevents_merging_a_single_clique():
    # Everything similar: the unconstrained optimum is one group; beta=2 keeps two.
    s = np.ones((5, 5))
    free = overlapping_correlation_clustering(s, 3, seed=0)
    assert free.n_groups == 1 and free.cost == 0.0
    constrained = overlapping_correlation_clustering(s, 3, beta=2, seed=0)
    assert constrained.n_groups >= 2 and constrained.cost > 0.0


def test_initialization_fallback_when_random_draws_fail():
    # beta = n_labels = N = 6 with p = 2: random labellings almost never have 6 groups.
    s = np.full((6, 6), 0.5)
    result = overlapping_correlation_clustering(s, 6, max_labels=2, beta=6, n_restarts=3, seed=0)
    assert result.n_groups == 6
    assert sorted(min(ls) for ls in result.labels) == list(range(6))


def test_seed_determinism():
    rng = np.random.default_rng(11)
    x = rng.random((9, 9))
    s = (x + x.T) / 2
    a = overlapping_correlation_clustering(s, 4, n_restarts=1, seed=7)
    b = overlapping_correlation_clustering(s, 4, n_restarts=1, seed=7)
    assert a == b
    results = {overlapping_correlation_clustering(s, 4, n_restarts=1, seed=seed).labels for seed in range(8)}
    assert len(results) > 1


def test_best_restart_is_kept():
    rng = np.random.default_rng(3)
    x = rng.random((8, 8))
    s = (x + x.T) / 2
    many = overlapping_correlation_clustering(s, 4, n_restarts=10, seed=4)
    singles = [overlapping_correlation_clustering(s, 4, n_restarts=1, seed=seed).cost for seed in range(5)]
    assert many.cost <= max(singles)
    assert len(many.iterations) == 10 and all(it >= 1 for it in many.iterations)


def test_single_object():
    result = overlapping_correlation_clustering(np.zeros((1, 1)), 2, seed=0)
    assert result.cost == 0.0 and result.n_groups == 1 and len(result.labels) == 1


def test_clusters_merge_and_order():
    result = OverlappingClustering(
        labels=(frozenset({3}), frozenset({0, 2}), frozenset({0, 2}), frozenset({1}), frozenset({5})),
        cost=0.0,
        n_groups=3,
        restarts=1,
        iterations=[1],
    )
    # Label 0 and 2 have the same members {1, 2}: merged. Label 4 is empty: dropped.
    assert result.clusters() == [(0,), (1, 2), (3,), (4,)]
    result = OverlappingClustering(
        labels=(frozenset({0, 1}), frozenset({0}), frozenset({1}), frozenset({0, 2})),
        cost=0.0,
        n_groups=1,
        restarts=1,
        iterations=[1],
    )
    # Smallest member first, then size: (0, 2) before (0, 1, 3).
    assert result.clusters() == [(0, 2), (0, 1, 3), (3,)]


def test_speed_fifteen_objects():
    rng = np.random.default_rng(0)
    x = rng.random((15, 15))
    s = (x + x.T) / 2
    for function in ("jaccard", "intersection"):
        # The CPU time of this process (the search is single-threaded): the same bound without load,
        # and not failed by the time a loaded machine keeps the process waiting for a core.
        start = time.process_time()
        result = overlapping_correlation_clustering(s, 8, max_labels=2, beta=2, function=function, seed=1)
        assert time.process_time() - start < 1.0
        assert result.n_groups >= 2


# ----------------------------------------------------------------------------------------------
# occ_columns


def phi_like(n=8, seed=0):
    """Block-structured similarities with noise, like φ² between attributes."""
    rng = np.random.default_rng(seed)
    s = rng.uniform(0.0, 0.2, (n, n))
    s[:3, :3] += 0.6
    s[3:6, 3:6] += 0.6
    s[2, 3] = s[3, 2] = 0.7
    s = (s + s.T) / 2
    np.fill_diagonal(s, 0.0)
    return np.clip(s, 0.0, 1.0)


NAMES = ["age", "sex", "zip", "occupation", "education", "race", "hours", "disease"]


@pytest.mark.parametrize("function", ["jaccard", "intersection"])
@pytest.mark.parametrize(("beta", "n_labels"), [(2, None), (2, 4), (3, None), (3, 6), (1, 3)])
@pytest.mark.parametrize("sensitive", ["disease", "zip"])
def test_occ_columns_properties(function, beta, n_labels, sensitive):
    columns = occ_columns(
        phi_like(),
        NAMES,
        beta=beta,
        max_labels=2,
        sensitive=sensitive,
        function=function,
        n_restarts=4,
        seed=1,
        n_labels=n_labels,
    )
    assert len(columns) >= beta
    assert len(set(columns)) == len(columns)  # identical labels merged
    assert set().union(*map(set, columns)) == set(NAMES)
    holding = [c for c in columns if sensitive in c]
    assert len(holding) == 1 and columns[-1] == holding[0]
    for column in columns:
        assert list(column) == [n for n in NAMES if n in column]  # input order within a column


def test_occ_columns_default_start_is_disjoint_and_larger_n_labels_may_overlap():
    columns = occ_columns(phi_like(), NAMES, beta=2, sensitive="disease", seed=0)
    assert sum(len(c) for c in columns) == len(NAMES)  # k = beta: no overlap possible
    overlapping = occ_columns(phi_like(), NAMES, beta=2, sensitive="disease", seed=0, n_labels=4)
    assert len(overlapping) >= 2
    assert sum("disease" in c for c in overlapping) == 1


def test_occ_columns_without_sensitive():
    columns = occ_columns(two_cliques((3, 3)), list("abcdef"), beta=2, max_labels=1, seed=0)
    assert columns == [("a", "b", "c"), ("d", "e", "f")]


# ----------------------------------------------------------------------------------------------
# Bad input

GOOD = two_cliques((2, 2))


@pytest.mark.parametrize(
    ("similarity", "match"),
    [
        (np.zeros((2, 3)), "similarity"),
        (np.zeros((0, 0)), "similarity"),
        (np.array([[0.0, 0.2], [0.3, 0.0]]), "similarity.*symmetric"),
        (np.array([[0.0, 1.5], [1.5, 0.0]]), r"similarity.*\[0, 1\]"),
        (np.array([[0.0, -0.1], [-0.1, 0.0]]), r"similarity.*\[0, 1\]"),
        (np.array([[0.0, np.nan], [np.nan, 0.0]]), "similarity.*NaN"),
        ([["a", "b"], ["c", "d"]], "similarity"),
    ],
)
def test_bad_similarity(similarity, match):
    with pytest.raises(ConfigError, match=match):
        overlapping_correlation_clustering(similarity, 2)
    with pytest.raises(ConfigError, match="similarity"):
        occ_cost([{0}] * 2, similarity)


def test_diagonal_is_ignored():
    s = GOOD.copy()
    np.fill_diagonal(s, 7.0)
    assert overlapping_correlation_clustering(s, 2, seed=0) == overlapping_correlation_clustering(
        GOOD, 2, seed=0
    )


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_labels": 0}, "n_labels"),
        ({"n_labels": 2.5}, "n_labels"),
        ({"n_labels": 2, "max_labels": 3}, "max_labels"),
        ({"n_labels": 2, "max_labels": 0}, "max_labels"),
        ({"n_labels": 2, "function": "cosine"}, "function"),
        ({"n_labels": 2, "beta": 0}, "beta"),
        ({"n_labels": 2, "beta": 3}, "beta"),
        ({"n_labels": 6, "beta": 5}, "beta.*4 objects"),
        ({"n_labels": 2, "single_label": (4,)}, "single_label"),
        ({"n_labels": 2, "single_label": (-1,)}, "single_label"),
        ({"n_labels": 2, "single_label": 1}, "single_label"),
        ({"n_labels": 2, "max_iter": 0}, "max_iter"),
        ({"n_labels": 2, "n_restarts": 0}, "n_restarts"),
        ({"n_labels": 2, "tol": -1.0}, "tol"),
    ],
)
def test_bad_parameters(kwargs, match):
    with pytest.raises(ConfigError, match=match):
        overlapping_correlation_clustering(GOOD, **kwargs)


def test_bad_occ_cost_labels():
    with pytest.raises(ConfigError, match="labels"):
        occ_cost([{0}, {0}], GOOD)
    with pytest.raises(ConfigError, match="labels.*empty"):
        occ_cost([{0}, set(), {1}, {1}], GOOD)
    with pytest.raises(ConfigError, match="function"):
        occ_cost([{0}] * 4, GOOD, "dice")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"names": ["a", "b", "c"]}, "names"),
        ({"names": ["a", "a", "b", "c"]}, "names"),
        ({"beta": 5}, "beta"),
        ({"beta": 0}, "beta"),
        ({"sensitive": "z"}, "sensitive"),
        ({"n_labels": 1}, "n_labels"),
        ({"max_labels": 0}, "max_labels"),
        ({"function": "dice"}, "function"),
    ],
)
def test_bad_occ_columns(kwargs, match):
    arguments = {"names": ["a", "b", "c", "d"], **kwargs}
    names = arguments.pop("names")
    with pytest.raises(ConfigError, match=match):
        occ_columns(GOOD, names, **arguments)
