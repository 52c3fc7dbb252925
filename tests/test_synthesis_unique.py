"""Synthetic records that single out a training record (issue 36): the predicates of anonymeter's
singling-out attack counted by hand, against a brute-force oracle, and an adversary run against
releases with and without ``reject_unique``."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.anonymize._synthesis_unique import Singling, redraw
from sdckit.anonymize.synthesis import SynthesisFigures, SynthesizeParams, synthesize
from sdckit.errors import ConfigError
from sdckit.table import Attribute, Kind, Role, Schema, Table

NAN = np.nan

# colour (red 0, blue 1; green 2 never seen), size (s 0, m 1), age. Records 0/1 and 6/7 are identical.
TRAIN_CODES = np.array([[0, 0], [0, 0], [0, 1], [0, 1], [1, 0], [1, 0], [1, 1], [1, 1], [0, 1]])
TRAIN_AGES = np.array([[20.0], [20.0], [30.0], [35.0], [40.0], [45.0], [50.0], [50.0], [NAN]])
QUERIES = {  # record: singles out with predicates of at most 1, 2, 3 attributes
    # 1: red 4, m 4, age <= 30: {20, 30} 2; 2: (m, age <= 30) holds for the (red, m, 30) record only
    "red m 30": [False, True, True],
    # age 40 above the median 37.5: >= 40 holds for 40, 45, 50 (3); (blue, s) 2; (blue, s, >= 40) 2
    "blue s 40": [False, False, False],
    # age <= 25: the two identical (red, s, 20) records: one distinct record
    "red s 25": [True, True, True],
    # age >= 50: the two identical (blue, m, 50) records
    "blue m 50": [True, True, True],
    # green: no training record; (s, >= 40): 2
    "green s 40": [False, False, False],
    # age >= 45: 2; (red, s): the (red, s, 20) record
    "red s 45": [False, True, True],
    # age missing: the (red, m, missing) record
    "red m missing": [True, True, True],
}
QUERY_CODES = np.array([[0, 1], [1, 0], [0, 0], [1, 1], [2, 0], [0, 0], [0, 1]])
QUERY_AGES = np.array([[30.0], [40.0], [25.0], [50.0], [40.0], [45.0], [NAN]])


@pytest.mark.parametrize("k", [1, 2, 3])
def test_singling_out_by_hand(k):
    singling = Singling(TRAIN_CODES, TRAIN_AGES, np.array([3, 2]), k)
    assert singling.medians.tolist() == [37.5]
    assert len(singling.codes) == 7  # two duplicates dropped
    assert len(singling.sets) == [3, 6, 7][k - 1]
    expected = [flags[k - 1] for flags in QUERIES.values()]
    assert singling.singles_out(QUERY_CODES, QUERY_AGES).tolist() == expected


def oracle(train_codes, train_values, query_codes, query_values, k):
    """Every predicate of every query on every distinct training record, by brute force."""
    rows = {
        tuple(c) + tuple(None if np.isnan(v) else v for v in vs)
        for c, vs in zip(train_codes, train_values, strict=True)
    }
    distinct = np.array([[np.nan if x is None else x for x in row] for row in rows], dtype=float)
    c = train_codes.shape[1]
    medians = [np.median(col[~np.isnan(col)]) if (~np.isnan(col)).any() else 0.0 for col in train_values.T]
    query = np.hstack([query_codes.astype(float), query_values])
    out = []
    for record in query:
        found = False
        for size in range(1, k + 1):
            for subset in combinations(range(query.shape[1]), size):
                holds = np.ones(len(distinct), dtype=bool)
                for j in subset:
                    column, value = distinct[:, j], record[j]
                    if j < c:
                        holds &= column == value
                    elif np.isnan(value):
                        holds &= np.isnan(column)
                    elif value > medians[j - c]:
                        holds &= column >= value
                    else:
                        holds &= column <= value
                found |= int(holds.sum()) == 1
        out.append(found)
    return out


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(1, 40),
    cats=st.integers(0, 2),
    nums=st.integers(0, 3),
    k=st.integers(1, 4),
)
def test_singling_out_against_the_oracle(seed, n, cats, nums, k):
    """Any mix of categories (missing too) and numbers (missing too; two or three exercise the scan)."""
    if cats + nums == 0:
        nums = 1
    rng = np.random.default_rng(seed)
    train_codes = rng.integers(-1, 3, (n, cats))
    query_codes = rng.integers(-1, 4, (25, cats))  # code 3: a category no training record has
    train_values = rng.integers(0, 5, (n, nums)).astype(float)
    query_values = rng.integers(-1, 6, (25, nums)).astype(float)
    train_values[rng.random((n, nums)) < 0.15] = np.nan
    query_values[rng.random((25, nums)) < 0.15] = np.nan
    singling = Singling(train_codes, train_values, np.full(cats, 3), k)
    expected = oracle(train_codes, train_values, query_codes, query_values, k)
    assert singling.singles_out(query_codes, query_values).tolist() == expected


def test_redraw_by_hand():
    """Records with an odd value are rejected; each draw gives the next number of a counter."""
    counter = iter(range(100, 200))
    generated = {"x": np.array([1, 2, 3, 4, 5, 6])}  # m = 2 implicates of n = 3

    def draw(sizes, slots, start):
        assert sizes.sum() == len(slots) > 0 and start == 0
        return {"x": np.array([next(counter) for _ in range(int(sizes.sum()))])}

    counts = redraw(generated, ["x"], 3, 2, 10, lambda data: data["x"] % 2 == 1, draw)
    # round 1 (the first draw) rejects 1, 3, 5 (slots 0, 2, 4: sizes [2, 1]); round 2 draws 100,
    # 101, 102, rejects 101 (slot 2); round 3 draws 103 for it, rejected; round 4 draws 104
    assert generated["x"].tolist() == [100, 2, 104, 4, 102, 6]
    assert counts == {"rejected": 5, "rounds": 4, "kept": 0}
    generated = {"x": np.array([1, 2])}
    counts = redraw(generated, ["x"], 2, 1, 1, lambda data: data["x"] % 2 == 1, draw)
    assert generated["x"].tolist() == [1, 2] and counts == {"rejected": 1, "rounds": 1, "kept": 1}


def test_redraw_of_the_last_attributes_first():
    """Three attributes, max_tries 4: redraws 1, 2, 3 draw the last 1, 2, 3 attributes (start 2, 1,
    0); a record is rejected while its a + b + c is odd."""
    starts = []
    fresh = iter(range(10, 100))
    generated = {"a": np.array([1, 0]), "b": np.array([0, 0]), "c": np.array([0, 0])}

    def draw(sizes, slots, start):
        starts.append(start)
        batch = {name: generated[name][slots].copy() for name in "abc"}
        for name in "abc"[start:]:
            batch[name] = np.array([next(fresh) * 2 for _ in slots])  # even: the parity stays odd
        return batch

    def odd(data):
        return (data["a"] + data["b"] + data["c"]) % 2 == 1

    counts = redraw(generated, list("abc"), 2, 1, 4, odd, draw, suffix=True)
    # record 0 (1, 0, 0) stays odd while a = 1 is kept: (1, 0, 20), then (1, 22, 24); the last
    # round draws a too: (26, 28, 30); record 1 is never touched
    assert starts == [2, 1, 0] and counts == {"rejected": 3, "rounds": 4, "kept": 0}
    assert [generated[name].tolist() for name in "abc"] == [[26, 0], [28, 0], [30, 0]]


def planted_table(n: int = 1500, seed: int = 5) -> Table:
    """Common records plus 60 planted ones, each with a category seen in no other record."""
    rng = np.random.default_rng(seed)
    frame = pl.DataFrame(
        {
            "job": rng.choice(["a", "b", "c", "d"], n, p=[0.4, 0.3, 0.2, 0.1]),
            "town": rng.choice(["x", "y", "z"], n, p=[0.5, 0.3, 0.2]),
            "sex": rng.choice(["f", "m"], n),
            "age": rng.integers(20, 60, n),
        }
    )
    planted = pl.DataFrame(
        {
            "job": [f"rare{i}" for i in range(60)],
            "town": rng.choice(["x", "y", "z"], 60),
            "sex": rng.choice(["f", "m"], 60),
            "age": rng.integers(20, 60, 60),
        }
    )
    schema = Schema(
        (
            Attribute("job", role=Role.QUASI_IDENTIFIER),
            Attribute("town", role=Role.QUASI_IDENTIFIER),
            Attribute("sex", role=Role.QUASI_IDENTIFIER),
            Attribute("age", role=Role.QUASI_IDENTIFIER, kind=Kind.NUMERIC),
        )
    )
    return Table(pl.concat([frame, planted]), schema)


def attack(train: pl.DataFrame, release: pl.DataFrame, columns: int = 3) -> tuple[int, int]:
    """The adversary, written apart from the synthesizer: for every distinct released record and
    every set of ``columns`` attributes, the predicate (equal; age at least / at most the record's
    towards the tail of the RELEASE's median); of those that isolate one released record, how many
    isolate one training record."""
    train, release = train.unique(), release.unique()
    median = release["age"].median()
    tried = hits = 0
    for record in release.iter_rows(named=True):
        for subset in combinations(release.columns, columns):
            terms = []
            for name in subset:
                if name == "age":
                    terms.append(
                        pl.col("age") >= record["age"]
                        if record["age"] > median
                        else pl.col("age") <= record["age"]
                    )
                else:
                    terms.append(pl.col(name) == record[name])
            predicate = pl.all_horizontal(terms)
            if release.filter(predicate).height == 1:
                tried += 1
                hits += train.filter(predicate).height == 1
    return tried, hits


def test_an_adversary_singles_out_less_with_the_control():
    table = planted_table()
    train = table.data
    plain = synthesize(table, m=1, seed=2).table.data.drop("implicate")
    guarded = synthesize(table, m=1, reject_unique=3, seed=2)
    rejection = guarded.figures_as(SynthesisFigures).privacy["rejection"]
    tried, hits = attack(train, plain)
    tried_guarded, hits_guarded = attack(train, guarded.table.data.drop("implicate"))
    # CART copies the planted rare jobs (29 of 139 predicates that isolate a released record isolate
    # a training record); with the control none does (up to the median: the release's, not the
    # training records' the control uses)
    assert tried > 100 and hits / tried > 0.15
    assert tried_guarded > 20 and hits_guarded <= 0.05 * tried_guarded
    assert rejection["unique_attributes"] == 3 and rejection["kept_too_close"] == 0
    assert rejection["singled_out"] == rejection["rejected"] > 60
    released = set(guarded.table.data["job"].to_list())
    assert not any(job.startswith("rare") for job in released)  # a category of one record singles out


def test_the_control_is_deterministic_and_off_by_default():
    table = planted_table(400)
    first = synthesize(table, m=2, reject_unique=2, seed=3)
    again = synthesize(table, m=2, reject_unique=2, seed=3)
    assert first.table.data.equals(again.table.data)
    assert synthesize(table, m=1, seed=3).figures_as(SynthesisFigures).privacy["rejection"] is None
    both = synthesize(table, m=1, holdout=0.2, reject_quantile=0.05, reject_unique=1, seed=3)
    rejection = both.figures_as(SynthesisFigures).privacy["rejection"]
    assert rejection["quantile"] == 0.05 and rejection["unique_attributes"] == 1
    assert rejection["rejected"] >= rejection["singled_out"] > 0


def test_bad_reject_unique():
    table = planted_table(200)
    with pytest.raises(ConfigError, match="reject_unique"):
        SynthesizeParams.parse({"reject_unique": 0})
    with pytest.raises(ConfigError, match="reject_unique must be at most the 4 released attributes, got 5"):
        synthesize(table, reject_unique=5)
    with pytest.raises(ConfigError, match="reject_unique.*fully synthetic"):
        synthesize(table, attributes=["age"], reject_unique=2)


def test_subsample_fits_and_draws_from_the_kept_records_only():
    """The tree of a share: the records a Bernoulli(0.3) draw keeps (the first draws of the
    generator), and every drawn index is one of them."""
    from scipy import sparse

    from sdckit.anonymize.synthesis import _cart_draw

    rng = np.random.default_rng(8)
    x = sparse.csr_matrix(rng.integers(0, 3, (200, 2)).astype(float))
    y = rng.integers(0, 4, 200)
    kept = np.flatnonzero(np.random.default_rng(1).random(200) < 0.3)
    drawn = _cart_draw(x, y, x, 2, np.array([100, 100]), True, 5, np.random.default_rng(1), None, 0.3)
    assert len(drawn) == 200 and set(drawn.tolist()) <= set(kept.tolist())
    assert len(set(drawn.tolist())) > 20  # drawn from many of the ~60 kept records


def test_subsample_one_is_the_default_release():
    table = planted_table(400)
    default = synthesize(table, m=2, seed=3)
    assert synthesize(table, m=2, subsample=1.0, seed=3).table.data.equals(default.table.data)
    half = synthesize(table, m=2, subsample=0.5, seed=3)
    assert not half.table.data.equals(default.table.data)
    assert synthesize(table, m=2, subsample=0.5, seed=3).table.data.equals(half.table.data)


@pytest.mark.parametrize("value", [0, -0.5, 1.5])
def test_bad_subsample(value):
    with pytest.raises(ConfigError, match="subsample"):
        SynthesizeParams.parse({"subsample": value})


def test_subsample_breaks_the_chain_that_copies_records():
    """Six attributes of four values, 300 records (almost all unique): with leaves of one record
    the chain of trees copies every record; fitted on half the records per attribute, a third of
    the records are new (counted against the set of the original rows, not by the summary)."""
    rng = np.random.default_rng(0)
    frame = pl.DataFrame({f"a{i}": rng.choice(list("wxyz"), 300) for i in range(6)})
    table = Table(frame, Schema(tuple(Attribute(c, role=Role.QUASI_IDENTIFIER) for c in frame.columns)))
    originals = set(frame.iter_rows())

    def copies(**options):
        release = synthesize(table, m=1, min_samples_leaf=1, seed=1, **options).table.data.drop("implicate")
        return np.mean([row in originals for row in release.iter_rows()])

    assert copies() == 1.0
    assert copies(subsample=0.5) == pytest.approx(0.69)
