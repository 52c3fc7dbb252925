"""Utility metrics of a full-domain generalization (sdckit.utility.metrics).

Hand-computed values on a 2-QI toy table, then property tests on random hierarchies: lower bounds
hold for every coarser generalization with any admissible suppression, monotonicity without
suppression, ranges.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.errors import ConfigError
from sdckit.hierarchy import Hierarchy
from sdckit.utility import (
    METRICS,
    GeneralizationView,
    average_class_size,
    average_class_size_arx,
    compute_all,
    discernibility,
    discernibility_star,
    gcp,
    loss,
    loss_per_attribute,
    ncp,
    non_uniform_entropy,
    non_uniform_entropy_monotone,
    precision,
)

LOG2_3 = math.log2(3)


def make_view(
    names: tuple[str, ...],
    hierarchies: tuple[Hierarchy, ...],
    leaf_codes: np.ndarray,
    counts: np.ndarray,
    levels: tuple[int, ...],
    suppressed_classes: np.ndarray | None = None,
) -> GeneralizationView:
    """The view at ``levels``: classes by grouping the generalized codes (np.unique over rows).

    ``suppressed_classes`` is a boolean flag per class (class ids in np.unique's row order).
    """
    leaf_codes = np.asarray(leaf_codes, dtype=np.int64)
    generalized = np.column_stack(
        [
            h.codes[leaf_codes[:, j], level]
            for j, (h, level) in enumerate(zip(hierarchies, levels, strict=True))
        ]
    ).reshape(leaf_codes.shape[0], len(hierarchies))
    _, classes = np.unique(generalized, axis=0, return_inverse=True)
    classes = classes.ravel().astype(np.int64)
    n_classes = int(classes.max()) + 1 if classes.size else 0
    flags = np.zeros(n_classes, dtype=bool) if suppressed_classes is None else np.asarray(suppressed_classes)
    return GeneralizationView(
        quasi_identifiers=names,
        hierarchies=hierarchies,
        levels=tuple(int(level) for level in levels),
        leaf_codes=leaf_codes,
        counts=np.asarray(counts, dtype=np.float64),
        classes=classes,
        n_classes=n_classes,
        suppressed=flags[classes],
    )


# --------------------------------------------------------------------------------------------------
# Toy table
#
#   age: 20 25 | 30 35 -> 20-29 | 30-39 -> *      (|D| = 4, height 2)
#   sex: M F -> *                                  (|D| = 2, height 1)
#
#   combination  age sex  count
#   c0           20  M    3
#   c1           25  M    1
#   c2           25  F    2
#   c3           30  F    4
#   c4           35  M    1
#   c5           35  F    1          n = 12
#
#   Original frequencies: age 20:3 25:3 30:4 35:2 (20-29: 6, 30-39: 6); sex M:5 F:7.
# --------------------------------------------------------------------------------------------------

AGE = Hierarchy.from_rows(
    "age",
    [["20", "20-29", "*"], ["25", "20-29", "*"], ["30", "30-39", "*"], ["35", "30-39", "*"]],
)
SEX = Hierarchy.from_rows("sex", [["M", "*"], ["F", "*"]])
NAMES = ("age", "sex")
LEAVES = np.array([[0, 0], [1, 0], [1, 1], [2, 1], [3, 0], [3, 1]])
COUNTS = np.array([3, 1, 2, 4, 1, 1], dtype=np.float64)


def toy_view(levels, suppressed_combinations=(), counts=COUNTS) -> GeneralizationView:
    view = make_view(NAMES, (AGE, SEX), LEAVES, counts, levels)
    flags = np.zeros(view.n_classes, dtype=bool)
    flags[view.classes[list(suppressed_combinations)]] = True
    return make_view(NAMES, (AGE, SEX), LEAVES, counts, levels, flags)


def test_toy_hierarchies_as_expected():
    assert (AGE.n_leaves, AGE.height, SEX.n_leaves, SEX.height) == (4, 2, 2, 1)
    assert AGE.labels[0] == ("20", "25", "30", "35")
    assert SEX.labels[0] == ("M", "F")


def test_view_a_age_level_1_with_suppressed_class():
    # Levels (1, 0): classes {c0,c1}=(20-29,M) 4, {c2}=(20-29,F) 2, {c4}=(30-39,M) 1,
    # {c3,c5}=(30-39,F) 5. The class of c4 (1 record) is suppressed.
    view = toy_view((1, 0), suppressed_combinations=[4])
    assert view.n_suppressed == 1

    # Loss: age kept records cover 2 of 4 leaves -> (2-1)/(4-1) = 1/3; 11 kept * 1/3 + 1 suppressed
    # = 14/3, over 12 -> 7/18. sex kept costs 0, suppressed 1 -> 1/12.
    # loss = sqrt((1 + 7/18)(1 + 1/12)) - 1 = sqrt(325/216) - 1.
    per_attribute = loss_per_attribute(view)
    assert per_attribute == pytest.approx({"age": 7 / 18, "sex": 1 / 12})
    assert loss(view) == pytest.approx(math.sqrt(325 / 216) - 1)  # 0.226634

    # NCP: age 11 kept * 2/4 + 1 = 6.5; sex 11 * 0 (1 leaf) + 1 = 1 -> 7.5.
    assert ncp(view) == pytest.approx(7.5)
    # weighted age 2, sex 1: 13 + 1 = 14; sequence weights aligned with the QIs.
    assert ncp(view, weights={"age": 2.0}) == pytest.approx(14.0)
    assert ncp(view, weights=[2.0, 1.0]) == pytest.approx(14.0)
    # GCP = 7.5 / (2 * 12)
    assert gcp(view) == pytest.approx(0.3125)
    # weighted: 14 / ((2 + 1) * 12)
    assert gcp(view, weights={"age": 2.0}) == pytest.approx(14 / 36)

    # DM: kept classes 4, 2, 5 -> 16 + 4 + 25 = 45, plus 1 suppressed * 12 -> 57.
    assert discernibility(view) == pytest.approx(57.0)
    # DM*: all classes 16 + 4 + 1 + 25 = 46.
    assert discernibility_star(view) == pytest.approx(46.0)
    # AECS: 11 kept records / 3 kept classes; ARX's: 12 records / (3 kept classes + 1 suppressed).
    assert average_class_size(view) == pytest.approx(11 / 3)
    assert average_class_size_arx(view) == pytest.approx(3.0)

    # Precision loss: age 1/2, sex 0/1. Kept: 11 * (1/2 + 0); suppressed: 1 * 2. (5.5 + 2) / 24.
    assert precision(view) == pytest.approx(7.5 / 24)

    # Non-uniform entropy (ARX's), every record charged its generalized values; age (f(20-29) =
    # f(30-39) = 6): c0 3*log2(6/3) = 3, c1 1*1, c2 2*1, c3 4*log2(6/4), c4 1*log2(6/2), c5 the same
    # -> 6 + 4 log2(1.5) + 2 log2 3 = 2 + 6 log2 3; sex at level 0: 0. The one suppressed record adds
    # -1*log2(1/1) = 0 per attribute. The monotone form is the first term alone.
    assert non_uniform_entropy(view) == pytest.approx(2 + 6 * LOG2_3)
    assert non_uniform_entropy_monotone(view) == pytest.approx(2 + 6 * LOG2_3)

    assert compute_all(view) == pytest.approx(
        {
            "loss": math.sqrt(325 / 216) - 1,
            "ncp": 7.5,
            "gcp": 0.3125,
            "dm": 57.0,
            "dm_star": 46.0,
            "aecs": 11 / 3,
            "aecs_arx": 3.0,
            "precision": 7.5 / 24,
            "entropy": 2 + 6 * LOG2_3,
            "entropy_monotone": 2 + 6 * LOG2_3,
        }
    )


def test_view_a_lower_bounds():
    # Same view; bounds = values as if nothing were suppressed (aecs: (n - max_suppressed) / classes).
    view = toy_view((1, 0), suppressed_combinations=[4])
    bounds = {name: metric.lower_bound(view, 1.0) for name, metric in METRICS.items()}
    assert bounds == pytest.approx(
        {
            # age 12 * 1/3 / 12 = 1/3, sex 0 -> sqrt(4/3) - 1
            "loss": math.sqrt(4 / 3) - 1,
            # 12 * 2/4
            "ncp": 6.0,
            "gcp": 6.0 / 24,
            # DM* of the view
            "dm": 46.0,
            "dm_star": 46.0,
            # (12 - 1) / 4 classes
            "aecs": 11 / 4,
            # 12 records / 4 classes
            "aecs_arx": 3.0,
            # (1/2 + 0) / 2
            "precision": 0.25,
            # age: 3 + 1 + 2 + 4 log2(1.5) + 2 log2 3 = 2 + 6 log2 3 ; sex 0
            "entropy": 2 + 6 * LOG2_3,
            "entropy_monotone": 2 + 6 * LOG2_3,
        }
    )
    assert METRICS["aecs"].lower_bound(view, 20.0) == 0.0


def test_view_b_everything_at_root():
    # Levels (2, 1): one class of 12 records, nothing suppressed.
    view = toy_view((2, 1))
    assert view.n_classes == 1
    assert loss_per_attribute(view) == pytest.approx({"age": 1.0, "sex": 1.0})
    assert loss(view) == pytest.approx(1.0)
    assert ncp(view) == pytest.approx(24.0)
    assert gcp(view) == pytest.approx(1.0)
    assert discernibility(view) == pytest.approx(144.0)
    assert discernibility_star(view) == pytest.approx(144.0)
    assert average_class_size(view) == pytest.approx(12.0)
    assert average_class_size_arx(view) == pytest.approx(12.0)
    assert precision(view) == pytest.approx(1.0)
    # age: 3 log2(12/3) + 3 log2(12/3) + 4 log2(12/4) + 2 log2(12/2) = 14 + 6 log2 3
    # sex: 5 log2(12/5) + 7 log2(12/7)
    expected = 14 + 6 * LOG2_3 + 5 * math.log2(12 / 5) + 7 * math.log2(12 / 7)
    assert non_uniform_entropy(view) == pytest.approx(expected)  # 35.26820


def test_view_c_original_data():
    # Levels (0, 0): every combination its own class, nothing suppressed.
    view = toy_view((0, 0))
    values = compute_all(view)
    assert values == pytest.approx(
        {
            "loss": 0.0,
            "ncp": 0.0,
            "gcp": 0.0,
            # 9 + 1 + 4 + 16 + 1 + 1
            "dm": 32.0,
            "dm_star": 32.0,
            # 12 records / 6 classes
            "aecs": 2.0,
            "aecs_arx": 2.0,
            "precision": 0.0,
            "entropy": 0.0,
            "entropy_monotone": 0.0,
        }
    )


def test_view_d_sex_generalized_two_records_suppressed():
    # Levels (0, 1): classes by age 20:3, 25:3, 30:4, 35:2; the class 35 (c4, c5) is suppressed.
    view = toy_view((0, 1), suppressed_combinations=[4])
    assert view.n_suppressed == 2
    # Loss: age kept 0, suppressed 2 -> 2/12; sex kept 10 * (2-1)/(2-1) + 2 -> 1.
    # loss = sqrt((1 + 1/6) * 2) - 1 = sqrt(7/3) - 1
    assert loss_per_attribute(view) == pytest.approx({"age": 1 / 6, "sex": 1.0})
    assert loss(view) == pytest.approx(math.sqrt(7 / 3) - 1)
    # NCP: age 0 + 2; sex 10 * 2/2 + 2 -> 14.  GCP 14 / 24.
    assert ncp(view) == pytest.approx(14.0)
    assert gcp(view) == pytest.approx(14 / 24)
    # DM: 9 + 9 + 16 + 2 * 12 = 58; DM*: 9 + 9 + 16 + 4 = 38; AECS 10 / 3.
    assert discernibility(view) == pytest.approx(58.0)
    assert discernibility_star(view) == pytest.approx(38.0)
    assert average_class_size(view) == pytest.approx(10 / 3)
    # Precision: age 0/2, sex 1/1: (10 * 1 + 2 * 2) / 24
    assert precision(view) == pytest.approx(14 / 24)
    # ARX's AECS: 12 records / (3 kept classes + 1 for the suppressed).
    assert average_class_size_arx(view) == pytest.approx(3.0)
    # Entropy: age at level 0 costs 0; sex at the root for every record: 5 log2(12/5) + 7 log2(12/7).
    # The 2 suppressed records share their generalized values (35, *): -2 log2(2/2) = 0 each.
    expected = 5 * math.log2(12 / 5) + 7 * math.log2(12 / 7)
    assert non_uniform_entropy(view) == pytest.approx(expected)  # 11.92836
    assert non_uniform_entropy_monotone(view) == pytest.approx(expected)


def test_entropy_of_suppressed_records_by_hand():
    # Levels (0, 0), c1 (25, M) and c4 (35, M) suppressed: S = 2. Generalization costs nothing at
    # level 0. Suppressed records: age values 25 and 35 once each -> -2 * log2(1/2) = 2; sex M twice
    # -> -2 log2(2/2) = 0. ARX's entropy is 2, its monotone form 0. (Charging them the root instead,
    # as sdckit did before, gave log2(12/3) + log2(12/2) + 2 log2(12/5) = 6.11.)
    view = toy_view((0, 0), suppressed_combinations=[1, 4])
    assert view.n_suppressed == 2
    assert non_uniform_entropy(view) == pytest.approx(2.0)
    assert non_uniform_entropy_monotone(view) == 0.0
    # ARX's AECS: 12 / (4 kept classes + 1); ours: 10 kept records / 4 kept classes.
    assert average_class_size_arx(view) == pytest.approx(12 / 5)
    assert average_class_size(view) == pytest.approx(10 / 4)


def test_everything_suppressed():
    view = toy_view((0, 0), suppressed_combinations=range(6))
    values = compute_all(view)
    assert math.isnan(values.pop("aecs"))
    assert values == pytest.approx(
        {
            "loss": 1.0,
            "ncp": 24.0,
            "gcp": 1.0,
            "dm": 144.0,
            # DM* ignores suppression: the classes at levels (0, 0)
            "dm_star": 32.0,
            # every record in the one class of the suppressed
            "aecs_arx": 12.0,
            "precision": 1.0,
            # nothing generalized; the 12 suppressed records' values: age 3, 3, 4, 2 of 12 ->
            # 14 + 6 log2 3; sex 5, 7 of 12
            "entropy": 14 + 6 * LOG2_3 + 5 * math.log2(12 / 5) + 7 * math.log2(12 / 7),
            "entropy_monotone": 0.0,
        }
    )


def test_weighted_counts_scale():
    # Halving every count: means (loss, gcp, precision) unchanged, sums (ncp, aecs) halved, DM
    # quartered; entropy halves too (frequencies are relative).
    full = compute_all(toy_view((1, 0), suppressed_combinations=[4]))
    half = compute_all(toy_view((1, 0), suppressed_combinations=[4], counts=COUNTS / 2))
    for name in ("loss", "gcp", "precision"):
        assert half[name] == pytest.approx(full[name])
    for name in ("ncp", "aecs", "aecs_arx", "entropy", "entropy_monotone"):
        assert half[name] == pytest.approx(full[name] / 2)
    for name in ("dm", "dm_star"):
        assert half[name] == pytest.approx(full[name] / 4)


def test_single_leaf_hierarchy_and_height_zero():
    # A QI with one value: kept records cost 0 in loss/ncp/precision, a suppressed record costs 1.
    one = Hierarchy.from_rows("one", [["x", "*"]])
    view = make_view(
        ("one", "sex"),
        (one, SEX),
        np.array([[0, 0], [0, 1]]),
        np.array([2.0, 1.0]),
        (1, 0),
        np.array([False, True]),
    )
    # one: kept 0, suppressed 1 record -> 1/3; sex: same -> 1/3.
    assert loss_per_attribute(view) == pytest.approx({"one": 1 / 3, "sex": 1 / 3})
    assert ncp(view) == pytest.approx(2.0)
    # precision: one at level 1 of height 1 costs 1 for kept records: (2 * (1 + 0) + 1 * 2) / 6
    assert precision(view) == pytest.approx(4 / 6)

    # Height 0 (no generalization possible): kept records cost 0 in precision, suppressed 1.
    # Classes (a,*) 2 records kept, (b,*) 1 record; sex at level 1 of height 1 costs 1.
    flat = Hierarchy.from_rows("flat", [["a"], ["b"]])
    assert flat.height == 0
    for suppressed, expected in (
        ([False, False], 3 * (0 + 1) / 6),
        ([False, True], (2 * (0 + 1) + 1 * 2) / 6),
    ):
        view = make_view(
            ("flat", "sex"),
            (flat, SEX),
            np.array([[0, 0], [1, 1]]),
            np.array([2.0, 1.0]),
            (0, 1),
            np.array(suppressed),
        )
        assert view.n_classes == 2
        assert precision(view) == pytest.approx(expected)


def test_empty_view():
    view = make_view(NAMES, (AGE, SEX), np.zeros((0, 2), dtype=np.int64), np.zeros(0), (0, 0))
    values = compute_all(view)
    assert math.isnan(values.pop("aecs"))
    assert math.isnan(values.pop("aecs_arx"))
    assert all(value == 0.0 for value in values.values())
    assert METRICS["aecs"].lower_bound(view, 0.0) == 0.0


def test_invalid_parameters():
    view = toy_view((1, 0))
    with pytest.raises(ConfigError, match="weights"):
        ncp(view, weights={"zip": 1.0})
    with pytest.raises(ConfigError, match="weights"):
        ncp(view, weights=[1.0])
    with pytest.raises(ConfigError, match="weights"):
        gcp(view, weights=[-1.0, 1.0])
    with pytest.raises(ConfigError, match="max_suppressed"):
        METRICS["loss"].lower_bound(view, -1)


def test_registry():
    assert list(METRICS) == [
        "loss",
        "ncp",
        "gcp",
        "dm",
        "dm_star",
        "aecs",
        "aecs_arx",
        "precision",
        "entropy",
        "entropy_monotone",
    ]
    for name, metric in METRICS.items():
        assert metric.name == name
        assert metric.monotonic_without_suppression
        assert metric.description


# --------------------------------------------------------------------------------------------------
# Property tests
# --------------------------------------------------------------------------------------------------


@st.composite
def hierarchies(draw, name: str) -> Hierarchy:
    """A random nested hierarchy: each level maps the nodes below onto fewer or as many nodes; the
    top level is a single '*' when the height is at least 1."""
    n_leaves = draw(st.integers(1, 5))
    height = draw(st.integers(0, 3))
    parents_per_level = []
    n_nodes = n_leaves
    for level in range(1, height + 1):
        if level == height:
            parent = [0] * n_nodes
        else:
            n_parents = draw(st.integers(1, n_nodes))
            parent = draw(st.lists(st.integers(0, n_parents - 1), min_size=n_nodes, max_size=n_nodes))
            # relabel densely so every parent exists
            _, parent = np.unique(parent, return_inverse=True)
            parent = parent.ravel().tolist()
        parents_per_level.append(parent)
        n_nodes = max(parent) + 1
    rows = []
    for leaf in range(n_leaves):
        row = [f"{name}{leaf}"]
        node = leaf
        for level, parent in enumerate(parents_per_level, start=1):
            node = parent[node]
            row.append("*" if level == height else f"{name}L{level}_{node}")
        rows.append(row)
    return Hierarchy.from_rows(name, rows)


@st.composite
def tables(draw):
    """Hierarchies, distinct leaf combinations and their counts (integers or fractional weights)."""
    d = draw(st.integers(1, 3))
    hs = tuple(draw(hierarchies(f"q{j}")) for j in range(d))
    space = list(itertools.product(*[range(h.n_leaves) for h in hs]))
    chosen = draw(st.lists(st.sampled_from(space), min_size=1, max_size=min(8, len(space)), unique=True))
    leaf_codes = np.array(chosen, dtype=np.int64).reshape(len(chosen), d)
    fractional = draw(st.booleans())
    if fractional:
        counts = draw(st.lists(st.floats(0.25, 4.0), min_size=len(chosen), max_size=len(chosen)))
    else:
        counts = draw(st.lists(st.integers(1, 6), min_size=len(chosen), max_size=len(chosen)))
    names = tuple(f"q{j}" for j in range(d))
    return names, hs, leaf_codes, np.asarray(counts, dtype=np.float64)


def lattice_above(levels, hs):
    return itertools.product(*[range(level, h.height + 1) for level, h in zip(levels, hs, strict=True)])


def admissible_suppressions(view: GeneralizationView, max_suppressed: float, rng: np.random.Generator):
    """Class flag vectors suppressing at most max_suppressed records: all subsets of up to 5
    classes, else a sample plus the greedy 'largest classes first' and 'smallest first' choices."""
    sizes = view.class_sizes()
    k = view.n_classes
    if k <= 5:
        candidates = (np.array(bits, dtype=bool) for bits in itertools.product([False, True], repeat=k))
    else:
        samples = [rng.random(k) < rng.random() for _ in range(24)]
        greedy = []
        for order in (np.argsort(-sizes, kind="stable"), np.argsort(sizes, kind="stable")):
            flags = np.zeros(k, dtype=bool)
            total = 0.0
            for c in order:
                if total + sizes[c] <= max_suppressed + 1e-9:
                    flags[c] = True
                    total += sizes[c]
            greedy.append(flags)
        candidates = itertools.chain([np.zeros(k, dtype=bool)], samples, greedy)
    for flags in candidates:
        if sizes[flags].sum() <= max_suppressed + 1e-9:
            yield flags


TOL = 1e-9


@pytest.mark.slow
@settings(max_examples=200)
@given(data=st.data(), table=tables())
def test_lower_bounds_hold_for_every_coarser_view(data, table):
    names, hs, leaf_codes, counts = table
    levels = tuple(data.draw(st.integers(0, h.height)) for h in hs)
    base = make_view(names, hs, leaf_codes, counts, levels)
    # the view's own suppression is irrelevant to its bounds
    own = np.array(data.draw(st.lists(st.booleans(), min_size=base.n_classes, max_size=base.n_classes)))
    view = make_view(names, hs, leaf_codes, counts, levels, own)
    n = float(counts.sum())
    max_suppressed = data.draw(st.sampled_from([0.0, 1.0, n / 3, n / 2, n]))
    bounds = {name: metric.lower_bound(view, max_suppressed) for name, metric in METRICS.items()}
    rng = np.random.default_rng(0)
    for coarser_levels in lattice_above(levels, hs):
        plain = make_view(names, hs, leaf_codes, counts, coarser_levels)
        for flags in admissible_suppressions(plain, max_suppressed, rng):
            coarser = make_view(names, hs, leaf_codes, counts, coarser_levels, flags)
            for name, metric in METRICS.items():
                value = metric.value(coarser)
                if math.isnan(value):
                    assert name in ("aecs", "aecs_arx") and (flags.all() or name == "aecs_arx"), name
                    continue
                assert bounds[name] <= value + TOL * max(1.0, abs(value)), (
                    name,
                    levels,
                    coarser_levels,
                    flags,
                )


@settings(max_examples=80)
@given(table=tables())
def test_monotone_without_suppression(table):
    names, hs, leaf_codes, counts = table
    values = {}
    for levels in lattice_above((0,) * len(hs), hs):
        values[levels] = compute_all(make_view(names, hs, leaf_codes, counts, levels))
    for levels, below in values.items():
        for j in range(len(hs)):
            if levels[j] < hs[j].height:
                above = values[levels[:j] + (levels[j] + 1,) + levels[j + 1 :]]
                for name in METRICS:
                    assert below[name] <= above[name] + TOL * max(1.0, abs(above[name])), (name, levels, j)


@settings(max_examples=80)
@given(data=st.data(), table=tables())
def test_normalized_metrics_in_unit_interval(data, table):
    names, hs, leaf_codes, counts = table
    levels = tuple(data.draw(st.integers(0, h.height)) for h in hs)
    base = make_view(names, hs, leaf_codes, counts, levels)
    flags = np.array(data.draw(st.lists(st.booleans(), min_size=base.n_classes, max_size=base.n_classes)))
    view = make_view(names, hs, leaf_codes, counts, levels, flags)
    for value in (loss(view), gcp(view), precision(view), *loss_per_attribute(view).values()):
        assert -TOL <= value <= 1 + TOL
    # The value of a view is never below its own bound.
    for metric in METRICS.values():
        value = metric.value(view)
        if not math.isnan(value):
            assert metric.lower_bound(view, view.n_suppressed) <= value + TOL * max(1.0, abs(value))


@settings(max_examples=60)
@given(table=tables())
def test_vectorized_matches_per_record_definition(table):
    """Each metric against a direct per-combination loop over the definitions (slow reference)."""
    names, hs, leaf_codes, counts = table
    rng = np.random.default_rng(1)
    levels = tuple(int(rng.integers(0, h.height + 1)) for h in hs)
    base = make_view(names, hs, leaf_codes, counts, levels)
    view = make_view(names, hs, leaf_codes, counts, levels, rng.random(base.n_classes) < 0.3)
    n = counts.sum()
    d = len(hs)
    ref_loss = np.zeros(d)
    ref_ncp = 0.0
    ref_precision = 0.0
    ref_entropy = 0.0
    suppressed_values: list[dict] = [{} for _ in hs]
    for c in range(len(counts)):
        w = counts[c]
        for j, h in enumerate(hs):
            leaf = leaf_codes[c, j]
            node = h.codes[leaf, levels[j]]
            leaves = int(np.sum(h.codes[:, levels[j]] == node))
            f_leaf = counts[leaf_codes[:, j] == leaf].sum()
            f_node = counts[np.isin(leaf_codes[:, j], np.flatnonzero(h.codes[:, levels[j]] == node))].sum()
            if view.suppressed[c]:
                ref_loss[j] += w
                ref_ncp += w
                ref_precision += w
                suppressed_values[j][node] = suppressed_values[j].get(node, 0.0) + w
            else:
                ref_loss[j] += w * ((leaves - 1) / (h.n_leaves - 1) if h.n_leaves > 1 else 0.0)
                ref_ncp += w * (leaves / h.n_leaves if leaves > 1 else 0.0)
                ref_precision += w * (levels[j] / h.height if h.height else 0.0)
            # ARX's entropy charges every record, suppressed or not, its generalized value.
            ref_entropy += w * -math.log2(f_leaf / f_node)
    ref_loss /= n
    assert list(loss_per_attribute(view).values()) == pytest.approx(ref_loss)
    assert loss(view) == pytest.approx(np.prod(1 + ref_loss) ** (1 / d) - 1)
    assert ncp(view) == pytest.approx(ref_ncp)
    assert gcp(view) == pytest.approx(ref_ncp / (d * n))
    assert precision(view) == pytest.approx(ref_precision / (d * n))
    assert non_uniform_entropy_monotone(view) == pytest.approx(ref_entropy, abs=1e-9)
    # plus, per attribute, -sum_g c_g log2(c_g / S) over the S suppressed records
    n_suppressed = sum(suppressed_values[0].values()) if d else 0.0
    for values in suppressed_values:
        ref_entropy += sum(-c * math.log2(c / n_suppressed) for c in values.values())
    assert non_uniform_entropy(view) == pytest.approx(ref_entropy, abs=1e-9)


def test_release_ncp_equals_gcp_of_a_generalization_and_eq5_of_suppression():
    """Equation (4) of Orooji & Knapp read from the cell penalties: GCP for a full-domain
    generalization (suppressed records charged 1), S/(n q) for suppression (equation 5)."""
    import polars as pl

    from sdckit.anonymize.local_suppression import LocalSuppressionParams
    from sdckit.anonymize.recoding import full_domain_generalization, release_metrics
    from sdckit.anonymize.release import Release
    from sdckit.hierarchy import Hierarchy
    from sdckit.models import KAnonymity
    from sdckit.table import Table
    from sdckit.utility import release_ncp

    frame = pl.DataFrame(
        {
            "age": ["21", "22", "23", "24", "31", "32", "33", "51"],
            "sex": ["M", "F", "M", "F", "M", "M", "F", "F"],
        }
    )
    hierarchies = {
        "age": Hierarchy.from_rows(
            "age", [[a, a[0] + "*", "*"] for a in ["21", "22", "23", "24", "31", "32", "33", "51"]]
        ),
        "sex": Hierarchy.from_rows("sex", [["M", "*"], ["F", "*"]]),
    }
    release = full_domain_generalization(
        Table.from_frame(frame),
        [KAnonymity(2)],
        quasi_identifiers=["age", "sex"],
        hierarchies=hierarchies,
        suppression_limit=0.2,
    )
    assert release_ncp(release) == pytest.approx(release_metrics(release)["gcp"])
    assert release.suppressed_cells.sum() == 2 * release.n_suppressed
    n, q = 5, 2
    cells = np.zeros((n, q), dtype=bool)
    cells[0, 0] = cells[3, 1] = cells[4, 1] = True
    suppression = Release(
        table=Table.from_frame(frame.head(n)),
        original=Table.from_frame(frame.head(n)),
        method="suppression",
        params=LocalSuppressionParams(k=2),
        quasi_identifiers=("age", "sex"),
        suppressed_records=np.zeros(n, dtype=bool),
        classes=np.full(n, -1),
        cell_penalty=cells.astype(float),
        suppressed_cells=cells,
    )
    assert release_ncp(suppression) == pytest.approx(3 / (n * q))
    assert release_ncp(suppression, {"age": 3.0, "sex": 1.0}) == pytest.approx((0.75 * 1 + 0.25 * 2) / n)
    assert suppression.suppressed_cells_per_attribute() == {"age": 1, "sex": 2}
