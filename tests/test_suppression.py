"""Local suppression to k-anonymity (``anonymize.local_suppression.local_suppression``).

* Hand-computed examples: the exact cells suppressed for tiny tables and importance orders (both
  greedy steps, the default importance, the category rounds and the all-null fill).
* Random small tables with nulls already present (hypothesis): every record's frequency after
  suppression is at least k by an independent pairwise oracle written here; no more cells are
  suppressed than "every non-null quasi-identifier of every violating record"; only quasi-identifier
  cells of violating records change, and only from a value to null, exactly where the mask says.
  With the category treatment, re-checked by pycanon and by ``check_table``.
* The trie greedy against the reference: the first kernels (every row scanned for every visit) are
  kept here; on random patterns (nulls, whole-number counts, fractional weights, weights with zeros,
  random k) the compiled greedy must edit exactly the same cells whether every visit uses the trie
  (tiny first child tables, so they rehash), none does (every search over budget: scans), or the
  default budget decides; and ``local_suppression`` must release the same cells and table as with the
  reference greedy.
* Adult (skipped without the data): k = 2, 5 with the 8 non-sensitive columns.
* Bad input: clear ConfigErrors.
"""

from __future__ import annotations

from unittest import mock

import numpy as np
import polars as pl
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from pycanon import anonymity as pycanon

from conftest import make_table
from sdckit.anonymize import _suppression_kernels as suppression_kernels
from sdckit.anonymize.local_suppression import LocalSuppressionFigures, local_suppression
from sdckit.errors import ConfigError
from sdckit.frequency import frequencies
from sdckit.models import KAnonymity, check_table
from sdckit.table import Role, Table
from sdckit.utility.metrics import release_ncp

MARKER = "\u2205 suppressed"


# ------------------------------------------------------------------------------------------------
# Independent oracle: plain Python pairwise matching.


def pairwise_frequencies(rows: list[tuple], missing: str) -> list[int]:
    """Per record, how many records match it (itself included): equal on every attribute, where
    under the wildcard treatment a None on either side matches anything."""

    def match(a, b):
        if missing == "wildcard" and (a is None or b is None):
            return True
        return a == b

    return [sum(all(match(a, b) for a, b in zip(r, s, strict=True)) for s in rows) for r in rows]


def rows_of(frame: pl.DataFrame, names: list[str]) -> list[tuple]:
    return list(frame.select(names).iter_rows())


def table_of(columns: dict[str, list], identifier: bool = False) -> Table:
    frame = pl.DataFrame(columns, schema=dict.fromkeys(columns, pl.String))
    roles = dict.fromkeys((name for name in columns if name != "id"), Role.QUASI_IDENTIFIER)
    if identifier:
        frame = frame.with_row_index("id").with_columns(pl.col("id").cast(pl.String))
        roles["id"] = Role.IDENTIFIER
    return make_table(frame, roles=roles)


def suppressed_positions(release) -> list[tuple[int, str]]:
    rows, columns = np.nonzero(release.suppressed_cells)
    return [(int(r), release.quasi_identifiers[c]) for r, c in zip(rows, columns, strict=True)]


# ------------------------------------------------------------------------------------------------
# Hand-computed examples.

SMALL = {
    "A": ["a1", "a1", "a1", "a2", "a2"],
    "B": ["b1", "b1", "b2", "b2", "b2"],
    "C": ["c1", "c2", "c1", "c2", "c2"],
}


def test_step_one_least_important_single_suppression_reaching_k():
    # Frequencies 1, 1, 1, 2, 2. Suppression order C, B, A. Row 0: nulling C adds row 1 -> 2: null C.
    # Row 1 now matches row 0 (null C) -> 2: left alone. Row 2: nulling C adds nothing, nulling B adds
    # row 0 (a1, b1, null) -> 2: null B.
    release = local_suppression(table_of(SMALL, identifier=True), 2, importance=["A", "B", "C"])
    assert suppressed_positions(release) == [(0, "C"), (2, "B")]
    data = release.table.data
    assert data.columns == ["A", "B", "C"]  # identifier dropped
    assert data.rows() == [
        ("a1", "b1", None),
        ("a1", "b1", "c2"),
        ("a1", None, "c1"),
        ("a2", "b2", "c2"),
        ("a2", "b2", "c2"),
    ]
    assert frequencies(data, ["A", "B", "C"], missing="wildcard").tolist() == [3, 2, 2, 2, 2]
    assert release.method == "local-suppression"
    assert (release.params.k, release.params.missing, release.params.strict_importance) == (
        2,
        "wildcard",
        False,
    )
    figures = release.figures_as(LocalSuppressionFigures)
    assert (figures.importance, figures.weighted) == (["A", "B", "C"], False)
    assert not release.suppressed_records.any()
    assert release.classes.tolist() == [-1] * 5
    assert np.array_equal(release.cell_penalty, release.suppressed_cells.astype(float))
    assert release.suppressed_cells_per_attribute() == {"A": 0, "B": 1, "C": 1}
    assert release_ncp(release) == pytest.approx(2 / 15)
    assert release.figures_as(LocalSuppressionFigures).violating_records == 3


def test_reversed_importance_suppresses_other_cells():
    # Suppression order A, B, C. Row 0: A adds nothing, B adds row 2 -> null B (a1, null, c1).
    # Row 1: only C helps (row 0 now differs from it on C alone) -> null C. Row 2 matches row 0.
    release = local_suppression(table_of(SMALL), 2, importance={"A": 3, "B": 2, "C": 1})
    assert suppressed_positions(release) == [(0, "B"), (1, "C")]
    assert release.figures_as(LocalSuppressionFigures).importance == ["C", "B", "A"]


def test_step_two_nearest_pattern_rule():
    # Row 0 is at distance 2 (A, B) from rows 1-2 and 3 from rows 3-4: no single suppression helps.
    # sdcMicro's rule nulls the least important of A, B with order C, B, A: B. Then nulling A makes
    # row 0 match rows 1 and 2 -> null A.
    columns = {
        "A": ["a1", "a2", "a2", "a3", "a3"],
        "B": ["b1", "b2", "b2", "b3", "b3"],
        "C": ["c1", "c1", "c1", "c3", "c3"],
    }
    release = local_suppression(table_of(columns), 2, importance=["A", "B", "C"])
    assert suppressed_positions(release) == [(0, "A"), (0, "B")]
    assert release.table.data.row(0) == (None, None, "c1")


def test_default_importance_more_categories_suppressed_first():
    # X has 3 categories, Y 2, Z 3 (X before Z): most important first Y, X, Z; Z is suppressed first.
    columns = {"X": ["x1", "x2", "x3", "x1"], "Y": ["y1", "y1", "y2", "y2"], "Z": ["z1", "z2", "z3", "z3"]}
    release = local_suppression(table_of(columns), 1)
    assert release.figures_as(LocalSuppressionFigures).importance == ["Y", "X", "Z"]
    assert release.n_suppressed_cells == 0  # k = 1 holds already
    release = local_suppression(table_of(columns), 2)
    # Every row is unique. Row 0 (x1, y1, z1) is at distance 2 from rows 1 (X, Z) and 3 (Y, Z): the
    # nearest-pattern rule nulls Z; then X alone adds row 1: null X. Row 1 now matches row 0. Row 2
    # (x3, y2, z3) differs from row 3 on X only: null X. Row 3 matches row 2.
    assert suppressed_positions(release) == [(0, "X"), (0, "Z"), (2, "X")]
    assert pairwise_frequencies(rows_of(release.table.data, ["X", "Y", "Z"]), "wildcard") == [2, 2, 2, 2]


def test_nulls_already_present_match_everything():
    columns = {"A": ["a1", None, "a2"], "B": ["b1", "b1", "b2"]}
    release = local_suppression(table_of(columns), 2, importance=["A", "B"])
    # Row 1 (null, b1) matches row 0; row 2 matches only itself: B is nulled (least important),
    # then (a2, null) matches row 1 (null, b1).
    assert suppressed_positions(release) == [(2, "B")]
    assert pairwise_frequencies(rows_of(release.table.data, ["A", "B"]), "wildcard") == [2, 3, 2]


def test_category_rounds():
    # Rows 0 and 1 violate; round 1 nulls C (least important) in both: they form a class of 2.
    columns = {"A": ["a1", "a1", "a2", "a2"], "B": ["b1", "b1", "b2", "b2"], "C": ["c1", "c2", "c2", "c2"]}
    release = local_suppression(table_of(columns), 2, importance=["A", "B", "C"], missing="category")
    assert suppressed_positions(release) == [(0, "C"), (1, "C")]
    assert release.classes[0] == release.classes[1] != release.classes[2] == release.classes[3]
    assert release.figures_as(LocalSuppressionFigures).filled_records == 0


def test_category_fills_a_too_small_all_null_class():
    # Row 0 violates and ends all null alone; class (a2, b2) has weight 3 > k = 2, so it spares its
    # first record, which is fully suppressed to join row 0.
    columns = {"A": ["a1", "a2", "a2", "a2"], "B": ["b1", "b2", "b2", "b2"]}
    release = local_suppression(table_of(columns), 2, importance=["A", "B"], missing="category")
    assert suppressed_positions(release) == [(0, "A"), (0, "B"), (1, "A"), (1, "B")]
    assert release.figures_as(LocalSuppressionFigures).filled_records == 1
    assert pairwise_frequencies(rows_of(release.table.data, ["A", "B"]), "category") == [2, 2, 2, 2]


def test_weights_scale_the_threshold():
    columns = {"A": ["a1", "a1", "a1", "a2", "a2"], "B": ["b1", "b1", "b2", "b2", "b2"], "C": SMALL["C"]}
    plain = local_suppression(table_of(columns), 2, importance=["A", "B", "C"])
    doubled = local_suppression(table_of(columns), 4, importance=["A", "B", "C"], weights=np.full(5, 2.0))
    assert np.array_equal(plain.suppressed_cells, doubled.suppressed_cells)
    assert doubled.figures_as(LocalSuppressionFigures).weighted is True


def test_progress_reports_the_violating_patterns():
    calls = []
    local_suppression(
        table_of(SMALL), 2, importance=["A", "B", "C"], progress=lambda d, t: calls.append((d, t))
    )
    assert calls == [(3, 3)]


# ------------------------------------------------------------------------------------------------
# Random tables.


@st.composite
def problems(draw):
    q = draw(st.integers(1, 4))
    n = draw(st.integers(1, 14))
    names = [f"q{j}" for j in range(q)]
    alphabet = (
        st.one_of(st.none(), st.sampled_from(["u", "v", "w"]))
        if draw(st.booleans())
        else (st.sampled_from(["u", "v", "w", None]))
    )
    columns = {name: draw(st.lists(alphabet, min_size=n, max_size=n)) for name in names}
    columns["other"] = [str(i % 3) for i in range(n)]
    k = draw(st.integers(1, n))
    order = draw(st.permutations(names))
    missing = draw(st.sampled_from(["wildcard", "category"]))
    return columns, names, k, list(order), missing


@pytest.mark.slow
@settings(max_examples=250)
@given(problems())
def test_random_tables_reach_k_with_few_cells(problem):
    columns, names, k, order, missing = problem
    frame = pl.DataFrame(columns, schema=dict.fromkeys(columns, pl.String))
    table = Table.from_frame(frame)
    release = local_suppression(table, k, quasi_identifiers=names, importance=order, missing=missing)
    before = rows_of(frame, names)
    after = rows_of(release.table.data, names)
    n = len(before)

    # k-anonymity under the chosen treatment, by the oracle and by our counting kernel.
    oracle = pairwise_frequencies(after, missing)
    assert min(oracle) >= k
    assert frequencies(release.table.data, names, missing=missing).tolist() == oracle

    # Only quasi-identifier cells change, only value -> null, exactly where the mask says.
    assert release.table.data.get_column("other").to_list() == columns["other"]
    mask = release.suppressed_cells
    assert mask.shape == (n, len(names))
    changed = np.array(
        [[a != b for a, b in zip(r, s, strict=True)] for r, s in zip(before, after, strict=True)]
    )
    assert np.array_equal(changed.reshape(n, len(names)), mask)
    assert all(
        s[j] is None for r, s in zip(before, after, strict=True) for j in range(len(names)) if r[j] != s[j]
    )
    assert np.array_equal(release.cell_penalty, mask.astype(float))
    assert not release.suppressed_records.any()

    # Never more than suppressing every (non-null) quasi-identifier of every violating record. With
    # the category treatment that simple release may itself miss k (its all-null class too small);
    # only then may the bound be exceeded.
    violating = np.array(pairwise_frequencies(before, missing)) < k
    baseline = sum(value is not None for r, bad in zip(before, violating, strict=True) if bad for value in r)
    simple_all_null = sum(bad or all(v is None for v in r) for r, bad in zip(before, violating, strict=True))
    if missing == "wildcard" or simple_all_null >= k:
        assert release.n_suppressed_cells <= baseline
    if release.figures_as(LocalSuppressionFigures).filled_records == 0:
        assert not mask[~violating].any()
    else:
        assert missing == "category"

    if missing == "category":
        marked = release.table.data.select(pl.col(names).fill_null(MARKER)).to_pandas()
        assert pycanon.k_anonymity(marked, names) >= k
        report = check_table(release.table, names, [KAnonymity(k)], missing="category").summary()
        assert report["passes"] and report["k"] >= k
        classes = release.classes
        assert (classes >= 0).all()
        for i in range(n):
            for j in range(n):
                assert (classes[i] == classes[j]) == (after[i] == after[j])
    else:
        assert (release.classes == -1).all()


# ------------------------------------------------------------------------------------------------
# The trie greedy against the reference: the kernels as they were before the candidate indexes and the
# trie (every row scanned for every visit), in plain Python.


def reference_profile(patterns, counts, p, gain):
    n_rows, q = patterns.shape
    gain[:] = 0.0
    total = 0.0
    row = patterns[p].copy()
    for r in range(n_rows):
        weight = counts[r]
        if weight == 0.0:
            continue
        mismatches = 0
        where = -1
        for j in range(q):
            a = row[j]
            b = patterns[r, j]
            if a >= 0 and b >= 0 and a != b:
                mismatches += 1
                if mismatches == 2:
                    break
                where = j
        if mismatches == 0:
            total += weight
        elif mismatches == 1:
            gain[where] += weight
    return total


def reference_nearest(patterns, counts, p):
    n_rows, q = patterns.shape
    best = q + 1
    differs = np.zeros(q, dtype=bool)
    for r in range(n_rows):
        if counts[r] == 0.0:
            continue
        distance = sum(
            1
            for j in range(q)
            if patterns[p, j] >= 0 and patterns[r, j] >= 0 and patterns[p, j] != patterns[r, j]
        )
        if distance == 0 or distance > best:
            continue
        if distance < best:
            best = distance
            differs[:] = False
        for j in range(q):
            if patterns[p, j] >= 0 and patterns[r, j] >= 0 and patterns[p, j] != patterns[r, j]:
                differs[j] = True
    hits = np.flatnonzero(differs)
    return int(hits[0]) if len(hits) else -1


def reference_greedy(patterns, counts, order, k, suppressed):
    gain = np.zeros(patterns.shape[1])
    for p in order:
        while True:
            total = reference_profile(patterns, counts, p, gain)
            if total >= k:
                break
            choice = -1
            for j in range(patterns.shape[1]):
                if patterns[p, j] >= 0 and total + gain[j] >= k:
                    choice = j
                    break
            if choice < 0:
                choice = reference_nearest(patterns, counts, p)
            if choice < 0:
                break
            patterns[p, choice] = -1
            suppressed[p, choice] = True


def mismatch(patterns, p, r, j):
    return patterns[p, j] >= 0 and patterns[r, j] >= 0 and patterns[p, j] != patterns[r, j]


def reference_allowed(patterns, counts, p, k):
    """The strict rule, by brute force: the t least important attributes (columns 0..t-1) for the
    smallest t such that p with all of them nulled reaches k (weights summed in row order)."""
    n_rows, q = patterns.shape
    for t in range(1, q + 1):
        if patterns[p, t - 1] < 0:
            continue
        total = 0.0
        for r in range(n_rows):
            if counts[r] != 0.0 and not any(mismatch(patterns, p, r, j) for j in range(t, q)):
                total += counts[r]
        if total >= k:
            return set(range(t))
    return set(range(q))


def reference_strict_greedy(patterns, counts, order, k, suppressed):
    """reference_greedy with strict importance: at the start of a visit the allowed attributes are
    fixed (reference_allowed); steps 1 and 2 pick only among them, and step 2's nearest patterns are
    among those that match p on every attribute outside them."""
    n_rows, q = patterns.shape
    gain = np.zeros(q)
    for p in order:
        allowed = None
        while True:
            total = reference_profile(patterns, counts, p, gain)
            if total >= k:
                break
            if allowed is None:
                allowed = reference_allowed(patterns, counts, p, k)
            choice = -1
            for j in sorted(allowed):
                if patterns[p, j] >= 0 and total + gain[j] >= k:
                    choice = j
                    break
            if choice < 0:
                best, differs = q + 1, set()
                for r in range(n_rows):
                    if counts[r] == 0.0:
                        continue
                    where = {j for j in range(q) if mismatch(patterns, p, r, j)}
                    if not where or not where <= allowed or len(where) > best:
                        continue
                    if len(where) < best:
                        best, differs = len(where), set()
                    differs |= where
                choice = min(differs) if differs else -1
            if choice < 0:
                break
            patterns[p, choice] = -1
            suppressed[p, choice] = True


@st.composite
def pattern_problems(draw):
    q = draw(st.integers(1, 8))
    n = draw(st.integers(1, 40))
    cardinality = draw(st.integers(1, 4))
    null_rate = draw(st.sampled_from([0.0, 0.1, 0.3]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    patterns = rng.integers(0, cardinality, size=(n, q)).astype(np.int32)
    patterns[rng.random((n, q)) < null_rate] = -1
    patterns = np.unique(patterns, axis=0)  # distinct patterns, as local_suppression has them
    rng.shuffle(patterns)
    kind = draw(st.sampled_from(["counts", "weights", "zeros"]))
    g = len(patterns)
    if kind == "counts":
        counts = rng.integers(1, 4, size=g).astype(np.float64)
    else:
        counts = rng.choice([0.3, 0.7, 1.1, 2.5], size=g)
        if kind == "zeros":
            counts[rng.random(g) < 0.3] = 0.0
    k = draw(st.floats(0.5, max(1.0, float(counts.sum())), allow_nan=False))
    order = rng.permutation(g).astype(np.int64)[: draw(st.integers(0, g))]
    return np.ascontiguousarray(patterns), counts, order, k


@pytest.mark.slow
@settings(max_examples=400)
@given(
    pattern_problems(),
    st.sampled_from(["trie", "scanned", "default"]),
    st.sampled_from([1, 4, 1 << 16]),
    st.booleans(),
)
def test_trie_greedy_matches_reference(problem, budget, capacity, strict):
    patterns, counts, order, k = problem
    expected_patterns = patterns.copy()
    expected = np.zeros(patterns.shape, dtype=bool)
    (reference_strict_greedy if strict else reference_greedy)(expected_patterns, counts, order, k, expected)
    limit = {"trie": 2**62, "scanned": 0, "default": len(patterns) // 4}[budget]
    suppressed = np.zeros(patterns.shape, dtype=bool)
    arrays = suppression_kernels.trie_new(patterns, counts, capacity)
    for start in range(0, len(order), 3):  # several calls share the trie, as with progress
        chunk = order[start : start + 3]
        suppression_kernels.wildcard_greedy(patterns, counts, chunk, k, suppressed, arrays, limit, strict)
    assert np.array_equal(suppressed, expected)
    assert np.array_equal(patterns, expected_patterns)


@st.composite
def weighted_problems(draw):
    q = draw(st.integers(1, 5))
    n = draw(st.integers(1, 60))
    names = [f"q{j}" for j in range(q)]
    values = draw(st.sampled_from([["u", "v"], ["u", "v", "w"], ["u", "v", "w", "x", "y"]]))
    alphabet = (
        st.one_of(st.sampled_from(values), st.none()) if draw(st.booleans()) else st.sampled_from(values)
    )
    columns = {name: draw(st.lists(alphabet, min_size=n, max_size=n)) for name in names}
    weights = None
    if draw(st.booleans()):
        weights = np.array(draw(st.lists(st.sampled_from([0.5, 1.0, 1.5, 3.25]), min_size=n, max_size=n)))
    total = n if weights is None else float(weights.sum())
    k = draw(st.integers(1, max(1, int(total))))
    assume(k <= total)  # one record of weight 0.5 cannot reach k = 1: refused, tested elsewhere
    order = draw(st.permutations(names))
    importance = list(order) if draw(st.booleans()) else None
    missing = draw(st.sampled_from(["wildcard", "category"]))
    return columns, names, weights, k, importance, missing, draw(st.booleans())


@settings(max_examples=150)
@given(weighted_problems())
def test_local_suppression_matches_reference_greedy(problem):
    columns, names, weights, k, importance, missing, strict = problem
    table = Table.from_frame(pl.DataFrame(columns, schema=dict.fromkeys(columns, pl.String)))

    def run():
        return local_suppression(
            table,
            k,
            quasi_identifiers=names,
            importance=importance,
            missing=missing,
            weights=weights,
            strict_importance=strict,
        )

    release = run()

    def reference(patterns, counts, order, k, suppressed, arrays, budget, strict):
        (reference_strict_greedy if strict else reference_greedy)(patterns, counts, order, k, suppressed)

    with mock.patch.object(suppression_kernels, "wildcard_greedy", reference):
        expected = run()
    assert np.array_equal(release.suppressed_cells, expected.suppressed_cells)
    assert release.table.data.equals(expected.table.data)


# ------------------------------------------------------------------------------------------------
# Strict importance.


def test_strict_importance_by_hand():
    # Importance A > B > C (suppression order C, B, A), k = 2, all three records unique.
    # Default: record 0 loses A, the single suppression that reaches 2 (it then matches record 1);
    # record 1 is then safe; record 2 needs two cells (nearest-pattern rule: C, then B).
    # Strict: for record 0 nulling C alone gives 1, nulling B and C gives 2 (record 2 has a1), so
    # only B and C are allowed: neither alone helps, the nearest allowed pattern (record 2) differs
    # on B and C: C, then B. Record 1 (a2, b1, c1) then matches nobody; B and C alone cannot help
    # it, so A is allowed and taken (it then matches record 0). Record 2 matches record 0.
    columns = {"A": ["a1", "a2", "a1"], "B": ["b1", "b1", "b2"], "C": ["c1", "c1", "c2"]}
    default = local_suppression(table_of(columns), 2, importance=["A", "B", "C"])
    assert suppressed_positions(default) == [(0, "A"), (2, "B"), (2, "C")]
    strict = local_suppression(table_of(columns), 2, importance=["A", "B", "C"], strict_importance=True)
    assert suppressed_positions(strict) == [(0, "B"), (0, "C"), (1, "A")]
    assert strict.params.strict_importance is True
    assert strict.table.data.rows() == [("a1", None, None), (None, "b1", "c1"), ("a1", "b2", "c2")]
    assert min(pairwise_frequencies(rows_of(strict.table.data, ["A", "B", "C"]), "wildcard")) >= 2


def test_strict_importance_may_keep_a_less_important_value():
    # Not "every suppressed attribute is less important than every kept one": record 0 may use B
    # (nulling C alone cannot reach 2) and B alone suffices, so C stays.
    columns = {"A": ["a1", "a1", "a2"], "B": ["b1", "b2", "b2"], "C": ["c1", "c1", "c2"]}
    release = local_suppression(table_of(columns), 2, importance=["A", "B", "C"], strict_importance=True)
    assert suppressed_positions(release)[0] == (0, "B")
    assert release.table.data.row(0) == ("a1", None, "c1")


@st.composite
def strict_problems(draw):
    q = draw(st.integers(1, 5))
    n = draw(st.integers(1, 16))
    names = [f"q{j}" for j in range(q)]
    alphabet = st.sampled_from(["u", "v", "w", None]) if draw(st.booleans()) else st.sampled_from(["u", "v"])
    columns = {name: draw(st.lists(alphabet, min_size=n, max_size=n)) for name in names}
    return columns, names, draw(st.integers(1, n)), list(draw(st.permutations(names)))


@settings(max_examples=250)
@given(strict_problems())
def test_strict_importance_invariant(problem):
    """In strict mode, for every record r that loses values, let m be the most important attribute it
    loses: nulling every value of r on the attributes less important than m (the other records as in
    the original data) does not reach k. (The rule says so at r's visit, against the records as they
    were then; frequencies only grow as records gain nulls, so it holds in the original data too.)
    And every record reaches k, only violating records lose values."""
    columns, names, k, importance = problem
    frame = pl.DataFrame(columns, schema=dict.fromkeys(columns, pl.String))
    release = local_suppression(
        Table.from_frame(frame), k, quasi_identifiers=names, importance=importance, strict_importance=True
    )
    before = rows_of(frame, names)
    after = rows_of(release.table.data, names)
    assert min(pairwise_frequencies(after, "wildcard")) >= k
    violating = [f < k for f in pairwise_frequencies(before, "wildcard")]
    mask = release.suppressed_cells
    position = {name: importance.index(name) for name in names}  # 0 = most important
    for i, row in enumerate(before):
        lost = [names[j] for j in np.flatnonzero(mask[i])]
        if not lost:
            continue
        assert violating[i]
        most = min(lost, key=position.get)
        less = {j for j, name in enumerate(names) if position[name] > position[most]}
        nulled = tuple(None if j in less else value for j, value in enumerate(row))
        assert pairwise_frequencies([nulled, *before], "wildcard")[0] - 1 < k


@settings(max_examples=60)
@given(problems())
def test_strict_importance_changes_nothing_with_category(problem):
    columns, names, k, order, _ = problem
    table = Table.from_frame(pl.DataFrame(columns, schema=dict.fromkeys(columns, pl.String)))
    plain = local_suppression(table, k, quasi_identifiers=names, importance=order, missing="category")
    strict = local_suppression(
        table, k, quasi_identifiers=names, importance=order, missing="category", strict_importance=True
    )
    assert np.array_equal(plain.suppressed_cells, strict.suppressed_cells)


TESTDATA_KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]
TESTDATA_IMPORTANCE = ["urbrur", "sex", "walls", "electcon", "roof", "water", "relat"]


@pytest.fixture(scope="module")
def testdata(shared_data) -> Table:
    path = shared_data("sdcmicro", "testdata.csv")
    return Table.from_frame(pl.read_csv(path, infer_schema=False))


def test_testdata_record_2879_keeps_urbrur_in_strict_mode(testdata):
    # Record 2879 in R's 1-based row numbering (line 2880 of the file, after the header; row 2878
    # here), found by its keys. Alone in the data; nulling relat alone leaves it alone, relat and
    # water together give 13 in the original data, urbrur alone 7.
    keys, importance = TESTDATA_KEYS, TESTDATA_IMPORTANCE
    data = testdata.data.with_row_index("row")
    record = {
        "urbrur": "1",
        "roof": "2",
        "walls": "3",
        "water": "3",
        "electcon": "4",
        "relat": "1",
        "sex": "2",
    }
    found = data.filter(pl.all_horizontal(pl.col(name) == value for name, value in record.items()))
    assert found.get_column("row").to_list() == [2878]
    # Default: one suppression of urbrur (the most important key) reaches k = 3 and is taken first.
    default = local_suppression(testdata, 3, quasi_identifiers=keys, importance=importance)
    assert [keys[j] for j in np.flatnonzero(default.suppressed_cells[2878])] == ["urbrur"]
    # Strict: relat alone cannot reach 3, relat and water can, so only they are allowed; neither
    # alone suffices and both go (sdcMicro takes roof and relat: roof is more important than water).
    strict = local_suppression(
        testdata, 3, quasi_identifiers=keys, importance=importance, strict_importance=True
    )
    assert [keys[j] for j in np.flatnonzero(strict.suppressed_cells[2878])] == ["water", "relat"]
    assert strict.table.data.select(keys).row(2878) == ("1", "2", "3", None, "4", None, "2")
    assert not strict.suppressed_cells[:, keys.index("urbrur")].any()
    assert frequencies(strict.table.data, keys, missing="wildcard").min() >= 3
    # The invariant of test_strict_importance_invariant on every record, vectorized.
    original = testdata.data.select(keys).to_numpy()
    rank = np.array([importance.index(name) for name in keys])  # 0 = most important
    for i in np.flatnonzero(strict.suppressed_cells.any(axis=1)):
        most = rank[strict.suppressed_cells[i]].min()
        kept = rank <= most
        match = (original[:, kept] == original[i, kept]).all(axis=1)
        assert match.sum() < 3


ADULT_QUASI_IDENTIFIERS = [
    "sex",
    "age",
    "race",
    "marital-status",
    "education",
    "native-country",
    "workclass",
    "salary-class",
]


@pytest.fixture(scope="module")
def adult(shared_data) -> Table:
    frame = pl.read_csv(shared_data("adult", "adult.csv"), separator=";", infer_schema=False)
    roles = dict.fromkeys(ADULT_QUASI_IDENTIFIERS, Role.QUASI_IDENTIFIER)
    return make_table(frame, roles=roles, occupation=Role.SENSITIVE)


@pytest.mark.slow
@pytest.mark.parametrize("k", [2, 5])
def test_adult_wildcard(adult, k):
    release = local_suppression(adult, k)
    names = ADULT_QUASI_IDENTIFIERS
    assert list(release.quasi_identifiers) == names
    data = release.table.data
    ours = frequencies(data, names, missing="wildcard")
    assert ours.min() >= k
    # Independent check on a sample: per record, a vectorized comparison with every record.
    values = data.select(names).to_numpy().astype(object)
    null = data.select(pl.col(names).is_null()).to_numpy()
    rng = np.random.default_rng(k)
    violating = np.flatnonzero(frequencies(adult.data, names, missing="wildcard") < k)
    sample = np.concatenate(
        [rng.choice(violating, 150, replace=False), rng.choice(len(values), 50, replace=False)]
    )
    for i in sample:
        match = ((values == values[i]) | null | null[i]).all(axis=1)
        assert match.sum() == ours[i] >= k
    # Only violating records touched; cells bounded by "suppress all 8 of every violating record".
    touched = release.suppressed_cells.any(axis=1)
    assert set(np.flatnonzero(touched)) <= set(violating)
    assert release.n_suppressed_cells <= len(names) * len(violating)
    assert data.get_column("occupation").equals(adult.data.get_column("occupation"))
    print(
        f"\nAdult k={k} wildcard: {release.n_suppressed_cells} cells suppressed "
        f"({len(violating)} violating records), per attribute {release.suppressed_cells_per_attribute()}"
    )


@pytest.mark.parametrize("k", [2, 5])
def test_adult_category_pycanon(adult, k):
    names = ADULT_QUASI_IDENTIFIERS
    release = local_suppression(adult, k, missing="category")
    marked = release.table.data.select(pl.col(names).fill_null(MARKER)).to_pandas()
    assert pycanon.k_anonymity(marked, names) >= k
    report = check_table(release.table, names, [KAnonymity(k)], missing="category").summary()
    assert report["passes"] and report["k"] >= k
    assert release.n_classes == report["n_classes"]
    print(f"\nAdult k={k} category: {release.n_suppressed_cells} cells suppressed")


# ------------------------------------------------------------------------------------------------
# Bad input.


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"k": 2, "importance": ["A", "B", "D"]}, "unknown attribute 'D'"),
        ({"k": 2, "importance": ["A", "B", "B", "C"]}, "attribute 'B' is listed twice"),
        ({"k": 2, "importance": ["A", "B"]}, "quasi-identifier 'C' is not listed"),
        ({"k": 2, "importance": {"A": 1, "B": 2, "D": 3}}, "unknown attribute 'D'"),
        ({"k": 2, "importance": {"A": 1, "B": 2}}, "no rank for quasi-identifier 'C'"),
        ({"k": 2, "importance": {"A": 1, "B": 2, "C": 4}}, "rank of 'C' must be an integer from 1"),
        ({"k": 6}, "k must be at most the number of records (5), got 6"),
        ({"k": 0}, "k must be greater than or equal to 1, got 0"),
        ({"k": 2.5}, "k must be a valid integer, got 2.5"),
        ({"k": 2, "missing": "ignore"}, "missing must be 'wildcard' or 'category', got 'ignore'"),
        ({"k": 2, "quasi_identifiers": ["A", "Z"]}, "quasi-identifier 'Z' is not a column"),
        ({"k": 2, "quasi_identifiers": ["A", "A"]}, "quasi-identifier 'A' is given twice"),
        ({"k": 2, "quasi_identifiers": ["id"]}, "'id' is an identifier"),
        ({"k": 2, "weights": np.ones(3)}, "weights must hold one number per record"),
        ({"k": 11, "weights": np.full(5, 2.0)}, "larger than the sum of the weights (10)"),
        (
            {"k": 2, "strict_importance": "maybe"},
            "strict_importance must be a valid boolean, unable to interpret input, got 'maybe'",
        ),
    ],
)
def test_bad_input(arguments, message):
    table = table_of(SMALL, identifier=True)
    k = arguments.pop("k")
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        local_suppression(table, k, **arguments)


def test_no_quasi_identifiers():
    frame = pl.DataFrame({"A": ["a", "b"]})
    with pytest.raises(ConfigError, match="no quasi-identifiers"):
        local_suppression(Table.from_frame(frame), 1)
