"""Record linkage (``sdckit risk linkage``): distance-based linkage (SPEC §6.2 examples, a brute-force
oracle over all pairs, covering values of every kind sdckit writes) and Fellegi–Sunter (SPEC §6.1
EM iteration and threshold examples, blocking against an enumeration of all pairs), alignment
errors, and the command line."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from sdckit.cli import app
from sdckit.config import parse_config
from sdckit.errors import ConfigError, InputError
from sdckit.measures import run_measure
from sdckit.risk._fellegi_sunter import all_patterns, decide, fellegi_sunter_em, pattern_weights, thresholds
from sdckit.risk._linkage_encoding import encode_attributes
from sdckit.risk.linkage import LinkageParams, record_linkage

runner = CliRunner()

NUMERIC2 = {
    "attributes": {
        "a": {"role": "quasi-identifier", "kind": "numeric"},
        "b": {"role": "quasi-identifier", "kind": "numeric"},
    }
}
X = {"a": [10, 20, 30, 40], "b": [100, 110, 300, 310]}


def tables(config: dict, original: dict, release: dict):
    settings = parse_config(config)
    return settings.read(pl.DataFrame(original)), settings.read_release(pl.DataFrame(release))


# SPEC §6.2 ----------------------------------------------------------------------------------------


def test_spec_dbrl_example_links_75_percent() -> None:
    original, release = tables(NUMERIC2, X, {"a": [12, 14, 33, 39], "b": [105, 100, 290, 320]})
    result = record_linkage(original, release, LinkageParams(method="distance"))
    d = result.distance
    assert d.nearest.tolist() == [0, 0, 2, 3]
    assert d.true_match.tolist() == [True, False, True, True]
    assert result.summary()["distance"]["linked_share"] == 0.75
    assert result.summary()["distance"]["linked_percent"] == 75.0
    assert d.rank.tolist() == [1, 2, 1, 1]
    sd = np.array([12.909944, 115.614301])
    # Row 2 (y = (14, 100)) is 0.3098 from x1; Euclidean distance to x2 is sqrt(0.4648² + 0.0865²) =
    # 0.4727 (the 0.5513 of SPEC §6.2 is the sum 0.4648 + 0.0865, an L1 slip; the link is the same).
    assert d.nearest_distance[1] == pytest.approx(4 / sd[0], abs=1e-5)
    assert d.distance[1] == pytest.approx(math.hypot(6 / sd[0], 10 / sd[1]), abs=1e-6)
    assert d.distance[1] == pytest.approx(0.4727, abs=1e-4)
    assert result.summary()["distance"]["mean_rank"] == 1.25


def test_spec_dbrl_example_with_y2_moved_links_all() -> None:
    original, release = tables(NUMERIC2, X, {"a": [12, 28, 33, 39], "b": [105, 108, 290, 320]})
    figures = record_linkage(original, release, LinkageParams(method="distance")).summary()["distance"]
    assert figures["linked_share"] == 1.0 and figures["linked_percent"] == 100.0 and figures["mean_rank"] == 1


def test_ties_share_credit_and_rank_counts_strictly_closer() -> None:
    config = {"attributes": {"a": {"role": "quasi-identifier", "kind": "numeric"}}}
    # originals 0, 2, 2, 5: release of row 1 is 2 (ties with row 2), of row 3 is 0 (row 0 is nearer).
    original, release = tables(config, {"a": [0, 2, 2, 5]}, {"a": [0, 2, 2, 0]})
    d = record_linkage(original, release, LinkageParams(method="distance")).distance
    assert d.tied.tolist() == [1, 2, 2, 1]
    assert d.credit.tolist() == [1.0, 0.5, 0.5, 0.0]
    assert d.nearest.tolist() == [0, 1, 1, 0]
    # Row 3's source (5) is at 5 sd-units... originals 0, 2, 2 are strictly closer: rank 4.
    assert d.rank.tolist() == [1, 1, 1, 4]


# A brute-force oracle ---------------------------------------------------------------------------


def _oracle(original: pl.DataFrame, release: pl.DataFrame, numeric: list[str], categorical: list[str]):
    """All n × n distances with numpy, releases of numeric attributes given as (lo, hi) columns."""
    n = original.height
    squared = np.zeros((n, n))
    for name in numeric:
        x = original[name].to_numpy().astype(float)
        mean, sd = x.mean(), x.std(ddof=1)
        sd = sd if sd > 0 else 1.0
        lo = (release[f"{name}_lo"].to_numpy() - mean) / sd
        hi = (release[f"{name}_hi"].to_numpy() - mean) / sd
        z = (x - mean) / sd
        gap = np.maximum(np.maximum(lo[:, None] - z[None, :], z[None, :] - hi[:, None]), 0)
        squared += gap**2
    for name in categorical:
        covers = release[f"{name}_cover"].to_list()
        values = original[name].to_list()
        squared += np.array([[0.0 if values[j] in covers[i] else 1.0 for j in range(n)] for i in range(n)])
    d = np.sqrt(squared)
    best = d.min(axis=1)
    ties = d <= best[:, None] + 1e-12
    true = np.diag(d)
    in_best = ties[np.arange(n), np.arange(n)]
    credit = np.where(in_best, 1 / ties.sum(axis=1), 0.0)
    rank = np.where(in_best, 1, 1 + (d < true[:, None] - 1e-12).sum(axis=1))
    return ties.argmax(axis=1), ties.sum(axis=1), credit, rank, true


MIXED = {
    "attributes": {
        "x": {"role": "quasi-identifier", "kind": "numeric"},
        "y": {"role": "quasi-identifier", "kind": "numeric"},
        "c": {"role": "quasi-identifier", "kind": "categorical"},
        "e": {"role": "quasi-identifier", "kind": "categorical"},
    }
}


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("covering", [False, True])
def test_distance_linkage_matches_brute_force(seed: int, covering: bool) -> None:
    rng = np.random.default_rng(seed)
    n = 60
    x = rng.integers(0, 8, n)
    y = rng.normal(50, 10, n).round(1)
    c = rng.choice(["a", "b", "c", "d"], n)
    e = rng.choice(["u", "v"], n)
    original = pl.DataFrame({"x": x, "y": y, "c": c, "e": e})
    rx = x + rng.integers(-1, 2, n)
    ry = (y + rng.normal(0, 3, n)).round(1)
    rc = np.where(rng.random(n) < 0.2, rng.choice(["a", "b", "c", "d"], n), c)
    x_text = [str(v) for v in rx]
    x_lo, x_hi = rx.astype(float), rx.astype(float)
    c_text: list[str | None] = list(rc)
    c_cover = [{v} for v in rc]
    e_text: list[str | None] = list(e)
    e_cover = [{v} for v in e]
    if covering:
        for i in range(n):
            kind = i % 6
            if kind == 0:
                x_text[i], x_lo[i], x_hi[i] = f"{x[i] - 1}-{x[i] + 2}", x[i] - 1, x[i] + 2
            elif kind == 1:  # [a, b) on an integer attribute: a .. b-1
                x_text[i], x_lo[i], x_hi[i] = f"[{x[i]}, {x[i] + 3})", x[i], x[i] + 2
            elif kind == 2:
                c_text[i], c_cover[i] = "{a,b}", {"a", "b"}
            elif kind == 3:
                x_text[i], x_lo[i], x_hi[i] = "*", -np.inf, np.inf
                c_text[i], c_cover[i] = None, {"a", "b", "c", "d"}
            elif kind == 4:
                e_text[i], e_cover[i] = "*", {"u", "v"}
    release = pl.DataFrame({"x": x_text, "y": ry, "c": c_text, "e": e_text})
    o, r = tables(MIXED, original.to_dict(as_series=False), release.to_dict(as_series=False))
    result = record_linkage(o, r, LinkageParams(method="distance"))
    oracle_frame = pl.DataFrame(
        {"x_lo": x_lo, "x_hi": x_hi, "y_lo": ry, "y_hi": ry, "c_cover": c_cover, "e_cover": e_cover},
        schema_overrides={"c_cover": pl.Object, "e_cover": pl.Object},
    )
    nearest, tied, credit, rank, true = _oracle(original, oracle_frame, ["x", "y"], ["c", "e"])
    d = result.distance
    np.testing.assert_allclose(d.distance, true, atol=1e-9)
    assert d.tied.tolist() == tied.tolist()
    assert d.nearest.tolist() == nearest.tolist()
    np.testing.assert_allclose(d.credit, credit)
    assert d.rank.tolist() == rank.tolist()
    assert d.kd_tree_records == 0  # categorical attributes: the cell search


@pytest.mark.parametrize("seed", range(4))
def test_kd_tree_linkage_of_numeric_points_and_wildcards_matches_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 80
    x = rng.integers(0, 6, n)  # few values: many ties
    y = rng.integers(0, 4, n)
    rx, ry = x + rng.integers(-1, 2, n), y.copy()
    x_text = [str(v) for v in rx]
    y_text = [str(v) for v in ry]
    x_lo, x_hi, y_lo, y_hi = rx.astype(float), rx.astype(float), ry.astype(float), ry.astype(float)
    for i in range(0, n, 7):  # a wildcard in one attribute, or in both
        x_text[i], x_lo[i], x_hi[i] = "*", -np.inf, np.inf
        if i % 2:
            y_text[i], y_lo[i], y_hi[i] = "*", -np.inf, np.inf
    config = {"attributes": {"x": MIXED["attributes"]["x"], "y": MIXED["attributes"]["y"]}}
    o, r = tables(config, {"x": x, "y": y}, {"x": x_text, "y": y_text})
    d = record_linkage(o, r, LinkageParams(method="distance")).distance
    oracle_frame = pl.DataFrame({"x_lo": x_lo, "x_hi": x_hi, "y_lo": y_lo, "y_hi": y_hi})
    nearest, tied, credit, rank, true = _oracle(pl.DataFrame({"x": x, "y": y}), oracle_frame, ["x", "y"], [])
    assert d.kd_tree_records == n
    np.testing.assert_allclose(d.distance, true, atol=1e-9)
    assert d.tied.tolist() == tied.tolist()
    assert d.nearest.tolist() == nearest.tolist()
    np.testing.assert_allclose(d.credit, credit)
    assert d.rank.tolist() == rank.tolist()


# Covering values --------------------------------------------------------------------------------


HIER = {
    "attributes": {
        "age": {"role": "quasi-identifier", "kind": "numeric"},
        "city": {
            "role": "quasi-identifier",
            "kind": "categorical",
            "hierarchy": {"order": ["A", "B", "C", "D"]},
        },
        "zip": {"role": "quasi-identifier", "kind": "categorical"},
        "sex": {"role": "quasi-identifier", "kind": "categorical"},
    }
}
ORIGINAL = {
    "age": [36, 39, 44, 50, 60, 70],
    "city": ["A", "B", "C", "D", "A", "C"],
    "zip": ["47906", "47907", "47801", "47906", "12345", "47999"],
    "sex": ["F", "M", "F", "M", "F", "M"],
}


def _agreements(release: dict) -> dict[str, list[bool]]:
    original, table = tables(HIER, ORIGINAL, release)
    encoded = encode_attributes(original, table, ["age", "city", "zip", "sex"])
    rows = np.arange(6)
    return {a.name: a.agrees(rows, rows).tolist() for a in encoded}


def test_every_covering_value_agrees_with_what_it_covers() -> None:
    release = {
        "age": ["35-40", "38-40", "[40, 45)", ">=45", "<65", "*"],
        "city": ["A-B", "{A,B}", "C-D", "*", None, "A"],  # hierarchy node, set, node, *, null, value
        "zip": ["479**", "4790*", "47***", "*****", "1234*", "47999"],  # masked codes
        "sex": ["F", "*", None, "{F,M}", "F", "M"],
    }
    assert _agreements(release) == {
        "age": [True, True, True, True, True, True],
        "city": [True, True, True, True, True, False],
        "zip": [True, True, True, True, True, True],
        "sex": [True, True, True, True, True, True],
    }


def test_covering_values_disagree_with_what_they_do_not_cover() -> None:
    release = {
        "age": ["37-38", "[35, 39)", "[40, 44)", "<50", ">=61", "71"],
        "city": ["C-D", "{A,C}", "A-B", "A", "B", "{A,B}"],
        "zip": ["478**", "4791*", "479**", "12***", "47***", "4790*"],
        "sex": ["M", "{F}", "M", "F", "M", "F"],
    }
    assert _agreements(release) == {
        "age": [False, False, False, False, False, False],  # [35, 39) stops at 38; [40, 44) at 43
        "city": [False, False, False, False, False, False],
        "zip": [False, False, False, False, False, False],
        "sex": [False, False, False, False, False, False],
    }


def test_distance_to_a_range_is_the_distance_to_its_nearer_bound() -> None:
    config = {"attributes": {"age": {"role": "quasi-identifier", "kind": "numeric"}}}
    ages = [30, 40, 50, 60]
    sd = float(np.std(ages, ddof=1))
    original, release = tables(config, {"age": ages}, {"age": ["32-35", "[41, 45)", "50", "[20, 25)"]})
    d = record_linkage(original, release, LinkageParams(method="distance")).distance
    # 30 → [32, 35]: 2 below; 40 → [41, 44]: 1 below; 60 → [20, 24] (integer, half-open): 36 above.
    np.testing.assert_allclose(d.distance, [2 / sd, 1 / sd, 0.0, 36 / sd])
    assert d.nearest.tolist() == [0, 1, 2, 0]


def test_generalized_release_every_record_in_its_class() -> None:
    """A k-anonymous release: every record's source is at distance 0, credit 1 / class size."""
    config = {
        "attributes": {
            "age": {"role": "quasi-identifier", "kind": "numeric"},
            "sex": {"role": "quasi-identifier", "kind": "categorical"},
        }
    }
    original, release = tables(
        config,
        {"age": [30, 31, 32, 50, 51, 52], "sex": ["F", "M", "F", "M", "M", "F"]},
        {"age": ["30-32"] * 3 + ["50-52"] * 3, "sex": ["{F,M}"] * 3 + ["*"] * 3},
    )
    result = record_linkage(original, release, LinkageParams(method="distance"))
    assert result.distance.tied.tolist() == [3] * 6
    assert result.summary()["distance"]["linked"] == 2.0  # one per class
    assert result.distance.rank.tolist() == [1] * 6


def test_non_range_text_in_a_numeric_release_is_an_error() -> None:
    config = {"attributes": {"age": {"role": "quasi-identifier", "kind": "numeric"}}}
    original, release = tables(config, {"age": [1, 2]}, {"age": ["1", "young"]})
    with pytest.raises(InputError, match="numeric attribute 'age'.*'young'"):
        record_linkage(original, release)


# Alignment and input errors -------------------------------------------------------------------


def test_another_number_of_rows_is_an_error_naming_both_counts() -> None:
    original, release = tables(NUMERIC2, X, {"a": [12, 14, 33], "b": [105, 100, 290]})
    with pytest.raises(InputError, match="has 4 records and .* has 3"):
        record_linkage(original, release)


def test_a_missing_quasi_identifier_is_an_error_naming_both_column_lists() -> None:
    settings = parse_config(NUMERIC2)
    original = settings.read(pl.DataFrame(X))
    release = parse_config({"attributes": {"a": NUMERIC2["attributes"]["a"]}}).read(
        pl.DataFrame({"a": [1, 2, 3, 4]})
    )
    with pytest.raises(InputError, match="no column 'b'.*has columns a, b.*has a$"):
        record_linkage(original, release)


def test_a_sliced_release_is_refused() -> None:
    settings = parse_config(NUMERIC2)
    original = settings.read(pl.DataFrame(X))
    release = settings.read_release(pl.DataFrame({"bucket": [0, 0, 1, 1], **X}))
    with pytest.raises(InputError, match="sliced table.*not aligned"):
        record_linkage(original, release)


def test_non_numeric_original_values_of_a_numeric_attribute_are_an_error() -> None:
    config = {"attributes": {"a": {"role": "quasi-identifier", "kind": "numeric"}}}
    original = parse_config(config).read(pl.DataFrame({"a": [1, 2, 3]}))
    from dataclasses import replace

    original = replace(original, data=pl.DataFrame({"a": ["1", "two", "3"]}))
    with pytest.raises(
        InputError, match="'a' is numeric in the configuration but its values are not numbers"
    ):
        record_linkage(original, original)


def test_parameters_are_checked() -> None:
    with pytest.raises(
        ConfigError, match="linkage takes no Fellegi–Sunter parameter with method distance: blocking"
    ):
        LinkageParams.parse({"method": "distance", "blocking": "a"}, method="linkage")
    original, release = tables(NUMERIC2, X, X)
    with pytest.raises(ConfigError, match="'c' is not a quasi-identifier"):
        record_linkage(original, release, LinkageParams(attributes="a,c"))
    with pytest.raises(ConfigError, match="at least 3 compared attributes"):
        record_linkage(original, release, LinkageParams(method="probabilistic"))


# Fellegi–Sunter (SPEC §6.1) --------------------------------------------------------------------

SPEC_COUNTS = {"111": 40, "110": 8, "101": 6, "100": 3, "011": 12, "010": 40, "001": 90, "000": 801}


def _spec_patterns() -> tuple[np.ndarray, np.ndarray]:
    patterns = np.array([[int(bit) for bit in key] for key in SPEC_COUNTS])
    return patterns, np.array(list(SPEC_COUNTS.values()))


def test_spec_em_first_iteration() -> None:
    em = fellegi_sunter_em(*_spec_patterns(), max_iter=1)
    np.testing.assert_allclose(em.m, [0.857944, 0.921553, 0.914361], atol=1e-6)
    np.testing.assert_allclose(em.u, [0.011051, 0.052868, 0.104035], atol=1e-6)
    assert em.pi == pytest.approx(0.054256, abs=1e-6)
    assert em.iterations == 1 and not em.converged


def test_spec_em_converged_values() -> None:
    em = fellegi_sunter_em(*_spec_patterns(), tol=1e-10)
    np.testing.assert_allclose(em.m, [0.83801, 0.87344, 0.83485], atol=1e-5)
    np.testing.assert_allclose(em.u, [0.00231, 0.04584, 0.09990], atol=1e-5)
    assert em.pi == pytest.approx(0.06544, abs=1e-5)
    assert em.iterations == 55 and em.converged
    default = fellegi_sunter_em(*_spec_patterns())  # tol 1e-8: the same values to 1e-6
    np.testing.assert_allclose(default.m, em.m, atol=1e-6)
    assert default.converged and default.iterations < 55


def test_em_swaps_classes_when_started_on_the_wrong_side() -> None:
    em = fellegi_sunter_em(*_spec_patterns(), m0=0.1, u0=0.9, pi0=0.9, tol=1e-10)
    assert np.sum(np.log(em.m / em.u)) > 0
    np.testing.assert_allclose(em.m, [0.83801, 0.87344, 0.83485], atol=1e-4)
    assert em.pi == pytest.approx(0.06544, abs=1e-4)


def test_spec_threshold_example() -> None:
    m, u = np.array([0.9, 0.8, 0.7]), np.array([0.05, 0.1, 0.3])
    patterns = np.array(
        [[1, 1, 1], [1, 1, 0], [1, 0, 1], [0, 1, 1], [1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 0]]
    )
    weights = pattern_weights(patterns, m, u)
    np.testing.assert_allclose(
        weights, [8.3923, 5.9475, 3.2224, 0.9745, 0.7776, -1.4703, -4.1955, -6.6402], atol=1e-4
    )
    upper, lower = thresholds(m, u, 0.01, 0.05)
    assert upper == pytest.approx(5.9475, abs=1e-4)
    assert lower == pytest.approx(-1.4703, abs=1e-4)
    decision = decide(weights, upper, lower)
    possible = {"".join(map(str, p)) for p, d in zip(patterns, decision, strict=True) if d == 1}
    assert possible == {"101", "011", "100"}
    assert decision.tolist() == [2, 2, 1, 1, 1, 0, 0, 0]


def test_thresholds_add_blocks_of_equal_weight_whole() -> None:
    # Equal m and u per field: patterns with the same number of agreements have equal weight. With
    # u = 0.1, the top block (111) has u-mass 0.001 and the next (3 patterns) 0.027: with mu = 0.02
    # that block would cross mu, so it stays out whole.
    m, u = np.full(3, 0.9), np.full(3, 0.1)
    upper, _ = thresholds(m, u, 0.02, 0.05)
    assert upper == pytest.approx(pattern_weights(np.array([[1, 1, 1]]), m, u)[0])
    upper, _ = thresholds(m, u, 0.03, 0.05)
    assert upper == pytest.approx(pattern_weights(np.array([[1, 1, 0]]), m, u)[0])
    assert all_patterns(3).shape == (8, 3)


FS = {
    "attributes": {
        "region": {"role": "quasi-identifier", "kind": "categorical"},
        "age": {"role": "quasi-identifier", "kind": "numeric"},
        "sex": {"role": "quasi-identifier", "kind": "categorical"},
        "job": {"role": "quasi-identifier", "kind": "categorical"},
        "edu": {"role": "quasi-identifier", "kind": "categorical"},
    }
}


def _fs_data(seed: int = 0, n: int = 300):
    rng = np.random.default_rng(seed)
    original = {
        "region": rng.choice(["n", "s", "e", "w"], n).tolist(),
        "age": rng.integers(18, 80, n).tolist(),
        "sex": rng.choice(["F", "M"], n).tolist(),
        "job": rng.choice(list("abcdefgh"), n).tolist(),
        "edu": rng.choice(list("pqrst"), n).tolist(),
    }
    release = {key: list(values) for key, values in original.items()}
    for key in ("age", "sex", "job", "edu"):
        swap = rng.random(n) < 0.15
        shuffled = rng.permutation(original[key])
        release[key] = [s if w else v for v, s, w in zip(original[key], shuffled.tolist(), swap, strict=True)]
    release["region"] = [v if i % 10 else "{n,s}" for i, v in enumerate(original["region"])]
    return original, release


def test_fellegi_sunter_with_blocking_counts_patterns_of_the_blocked_pairs() -> None:
    original, release = _fs_data()
    o, r = tables(FS, original, release)
    result = record_linkage(o, r, LinkageParams(method="probabilistic", blocking="region"))
    fs = result.probabilistic
    # Brute force: every pair whose released region covers the original region.
    covers = [{"n", "s"} if v == "{n,s}" else {v} for v in release["region"]]
    n = len(covers)
    pairs = [(i, j) for i in range(n) for j in range(n) if original["region"][j] in covers[i]]
    assert fs.pairs == len(pairs)
    names = ["age", "sex", "job", "edu"]
    codes = {}
    for i, j in pairs:
        key = tuple(int(release[a][i] == original[a][j]) for a in names)
        codes[key] = codes.get(key, 0) + 1
    assert fs.patterns == len(codes)
    em = fellegi_sunter_em(np.array(list(codes)), np.array(list(codes.values())))
    np.testing.assert_allclose(fs.m, em.m, rtol=1e-12)
    np.testing.assert_allclose(fs.u, em.u, rtol=1e-12)
    upper, lower = thresholds(em.m, em.u, 0.01, 0.05)
    assert fs.upper == pytest.approx(upper, abs=1e-12) and fs.lower == pytest.approx(lower, abs=1e-12)
    weight = {key: pattern_weights(np.array([key]), em.m, em.u)[0] for key in codes}
    links = sum(count for key, count in codes.items() if weight[key] >= upper - 1e-12)
    assert fs.links == links
    own = [tuple(int(release[a][i] == original[a][i]) for a in names) for i in range(n)]
    candidate = [original["region"][i] in covers[i] for i in range(n)]
    assert 0 < n - sum(candidate) < 30  # "{n,s}" released for a record of region e or w
    true_links = sum(weight[key] >= upper - 1e-12 for key, c in zip(own, candidate, strict=True) if c)
    summary = result.summary()["probabilistic"]
    assert summary["true_links"] == true_links
    assert summary["true_links_share"] == pytest.approx(true_links / n, abs=1e-6)
    assert summary["false_matches"] == links - true_links
    assert summary["m"].keys() == set(names) and summary["pairs"] == len(pairs)
    assert summary["true_links_share"] > 0.5  # masking of 15% per attribute leaves most linkable
    records = result.records()
    expected = [weight[key] if c else np.nan for key, c in zip(own, candidate, strict=True)]
    np.testing.assert_allclose(records["fs_weight"].fill_null(np.nan).to_numpy(), expected)


def test_true_pairs_outside_the_blocks_have_no_weight() -> None:
    original, release = _fs_data(seed=1, n=120)
    release["sex"] = ["M" if v == "F" else "F" for v in release["sex"]][:10] + release["sex"][10:]
    release["region"] = original["region"]
    o, r = tables(FS, original, release)
    result = record_linkage(o, r, LinkageParams(blocking="sex"))
    records = result.records()
    changed = [release["sex"][i] != original["sex"][i] for i in range(120)]
    assert records["fs_weight"].is_null().to_list() == changed
    assert records["fs_decision"].is_null().to_list() == changed
    assert set(records["fs_decision"].drop_nulls()) <= {"link", "possible", "non-link"}
    assert result.probabilistic.true_candidate.sum() == 120 - sum(changed)


def test_quadratic_pair_counts_are_refused_with_advice_to_block() -> None:
    original, release = _fs_data(n=50)
    o, r = tables(FS, original, release)
    with pytest.raises(
        ConfigError,
        match="2,500 pairs, more than max_pairs \\(1,000\\): give blocking attributes \\(blocking\\) whose",
    ):
        record_linkage(o, r, LinkageParams(method="probabilistic", max_pairs=1000))
    with pytest.raises(
        ConfigError,
        match="blocking on region leaves .* candidate pairs.*: block on more attributes or raise max_pairs$",
    ):
        record_linkage(o, r, LinkageParams(method="probabilistic", blocking="region", max_pairs=100))


def test_measure_is_registered_and_compares() -> None:
    original, release = tables(NUMERIC2, X, {"a": [12, 14, 33, 39], "b": [105, 100, 290, 320]})
    result = run_measure("linkage", original, release, params={"method": "distance"})
    assert result.summary()["distance"]["linked_share"] == 0.75
    assert "probabilistic" not in result.summary()


# Command line -----------------------------------------------------------------------------------


def _write(directory: Path, original: dict, release: dict, config: dict) -> tuple[Path, Path, Path]:
    import yaml

    paths = directory / "original.csv", directory / "release.csv", directory / "config.yaml"
    pl.DataFrame(original).write_csv(paths[0])
    pl.DataFrame(release).write_csv(paths[1])
    paths[2].write_text(yaml.safe_dump(config))
    return paths


def test_cli_writes_records_and_summary(tmp_path: Path) -> None:
    original, release = _fs_data(seed=2, n=200)
    data, released, config = _write(tmp_path, original, release, FS)
    out, summary = tmp_path / "links.csv", tmp_path / "links.json"
    result = runner.invoke(
        app,
        ["risk", "linkage", str(data), str(released), "-c", str(config), "--blocking", "region",
         "-o", str(out), "--summary", str(summary), "--quiet"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    figures = json.loads(summary.read_text())
    o, r = parse_config(FS).read(data), parse_config(FS).read_release(released)
    expected = record_linkage(o, r, LinkageParams(blocking="region")).summary()
    assert figures["distance"] == expected["distance"]
    assert figures["probabilistic"] == expected["probabilistic"]
    assert figures["parameters"]["blocking"] == "region"
    records = pl.read_csv(out)
    assert records.height == 200
    assert records.columns == [
        "record", "nearest", "tied", "true_match", "credit", "rank", "distance", "fs_weight", "fs_decision",
    ]  # fmt: skip
    assert records["credit"].sum() == pytest.approx(figures["distance"]["linked"], abs=1e-5)
    assert "linked to their source" in result.output


def test_cli_another_number_of_rows_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    original, release = _fs_data(n=30)
    release = {key: values[:29] for key, values in release.items()}
    data, released, config = _write(tmp_path, original, release, FS)
    out, summary = tmp_path / "links.csv", tmp_path / "links.json"
    result = runner.invoke(
        app,
        [
            "risk",
            "linkage",
            str(data),
            str(released),
            "-c",
            str(config),
            "-o",
            str(out),
            "--summary",
            str(summary),
        ],
    )
    assert result.exit_code == 2
    assert "original.csv has 30 records and" in result.output and "release.csv has 29" in result.output
    assert not out.exists() and not summary.exists()


def test_cli_distance_with_a_blocking_option_exits_2(tmp_path: Path) -> None:
    original, release = _fs_data(n=30)
    data, released, config = _write(tmp_path, original, release, FS)
    summary = tmp_path / "links.json"
    result = runner.invoke(
        app,
        ["risk", "linkage", str(data), str(released), "-c", str(config), "--method", "distance",
         "--blocking", "sex", "--summary", str(summary)],
    )  # fmt: skip
    assert result.exit_code == 2
    assert "takes no Fellegi–Sunter parameter with --method distance: --blocking" in result.output
    assert not summary.exists()


def test_blocking_on_ranges_and_wildcards_expands_to_every_covered_value() -> None:
    original, release = _fs_data(seed=3, n=150)
    ages = original["age"]
    release["age"] = [
        f"{a - 2}-{a + 2}" if i % 3 == 0 else (f"[{a}, {a + 5})" if i % 3 == 1 else str(a))
        for i, a in enumerate(ages)
    ]
    release["region"] = ["*" if i % 4 == 0 else v for i, v in enumerate(original["region"])]
    o, r = tables(FS, original, release)
    fs = record_linkage(o, r, LinkageParams(method="probabilistic", blocking="age,region")).probabilistic

    def age_covers(i: int, value: int) -> bool:
        a = ages[i]
        return a - 2 <= value <= a + 2 if i % 3 == 0 else (a <= value < a + 5 if i % 3 == 1 else value == a)

    pairs = [
        (i, j)
        for i in range(150)
        for j in range(150)
        if age_covers(i, ages[j]) and (i % 4 == 0 or original["region"][j] == release["region"][i])
    ]
    assert fs.pairs == len(pairs)
    names = ["sex", "job", "edu"]
    codes: dict[tuple[int, ...], int] = {}
    for i, j in pairs:
        key = tuple(int(release[a][i] == original[a][j]) for a in names)
        codes[key] = codes.get(key, 0) + 1
    em = fellegi_sunter_em(np.array(list(codes)), np.array(list(codes.values())))
    np.testing.assert_allclose(fs.m, em.m, rtol=1e-9)
    assert fs.true_candidate.all()  # every record's own values are covered


# One-to-one assignment (sdcMicro's recordLinkage(); its tests/testthat/test_recordLinkage.R) ------


def test_one_to_one_assignment_on_sdcmicros_examples() -> None:
    config = {"attributes": {"v1": {"role": "quasi-identifier", "kind": "numeric"}}}
    both = {"attributes": {**config["attributes"], "v2": {"role": "quasi-identifier", "kind": "numeric"}}}
    # Harrenz et al. (2015), example 1: the first released record is as far from every original.
    original, release = tables(
        both,
        {"v1": [1.0, 0.0, -1.0, 0.0], "v2": [0.0, 1.0, 0.0, -1.0]},
        {"v1": [0.0, 0.0, -2.1, 0.0], "v2": [0.0, 2.1, 0.0, -2.1]},
    )
    one = record_linkage(original, release, LinkageParams(method="distance", assignment="one-to-one"))
    assert one.summary()["distance"]["linked_share"] == 1.0
    assert one.summary()["distance"]["assignment"] == "one-to-one"
    nearest = record_linkage(original, release, LinkageParams(method="distance"))
    assert nearest.summary()["distance"]["linked_share"] == pytest.approx(0.8125)  # 1/4 + 1 + 1 + 1
    # Example 2: every released value is nearest to another original; none is assigned its own.
    original, release = tables(config, {"v1": [1.0, 2.0, 3.0, 4.0]}, {"v1": [2.0, 3.0, 4.0, -0.1]})
    one = record_linkage(original, release, LinkageParams(method="distance", assignment="one-to-one"))
    assert one.summary()["distance"]["linked_share"] == 0.0


def test_one_to_one_assignment_on_the_spec_example_and_its_limits() -> None:
    original, release = tables(NUMERIC2, X, {"a": [12, 14, 33, 39], "b": [105, 100, 290, 320]})
    result = record_linkage(original, release, LinkageParams(method="distance", assignment="one-to-one"))
    d = result.distance
    assert d.nearest.tolist() == [0, 1, 2, 3]  # x1 is taken by y1: y2 goes to x2, its source
    assert result.summary()["distance"]["linked_share"] == 1.0
    assert d.rank.tolist() == [1, 2, 1, 1]  # ranks are those of the distances, as without assignment
    with pytest.raises(ConfigError, match="assignment"):
        LinkageParams.parse({"method": "probabilistic", "assignment": "one-to-one"})


def test_one_to_one_assignment_does_not_credit_ties_to_the_truth() -> None:
    """A k-anonymous release: every record of a class is at distance 0 from every original of it, so
    any matching inside the classes is optimal; the identity must not be the one chosen."""
    config = {"attributes": {"g": {"role": "quasi-identifier"}}}
    groups = [f"c{i // 5}" for i in range(500)]  # 100 classes of 5 identical records
    original, release = tables(config, {"g": groups}, {"g": groups})
    result = record_linkage(original, release, LinkageParams(method="distance", assignment="one-to-one"))
    share = result.summary()["distance"]["linked_share"]
    assert 0.05 < share < 0.4  # about 1/5, as the nearest-neighbour rule's shared credit gives exactly
    nearest = record_linkage(original, release, LinkageParams(method="distance"))
    assert nearest.summary()["distance"]["linked_share"] == pytest.approx(0.2)
