"""Record linkage with Gower's distance and attribute weights (``sdckit risk linkage --distance gower
--weights``): sdcMicro's recordLinkage examples (tests/testthat/test_recordLinkage.R), distances
computed by hand from daisy's formula, a brute-force oracle over all pairs, and the command line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from sdckit.cli import app
from sdckit.config import parse_config
from sdckit.errors import ConfigError
from sdckit.risk.linkage import LinkageParams, record_linkage

runner = CliRunner()

MIXED = {
    "attributes": {
        "age": {"role": "quasi-identifier", "kind": "numeric"},
        "sex": {"role": "quasi-identifier"},
        "region": {"role": "quasi-identifier"},
    }
}


def tables(config: dict, original: dict, release: dict):
    settings_ = parse_config(config)
    return settings_.read(pl.DataFrame(original)), settings_.read_release(pl.DataFrame(release))


def gower(params: dict | None = None, **kw) -> LinkageParams:
    return LinkageParams(method="distance", distance="gower", **(params or {}), **kw)


def test_sdcmicros_gower_example_by_hand() -> None:
    """recordLinkage's example: age over the range of both files (40 - 23 = 17), sex and region 0/1."""
    original, release = tables(
        MIXED,
        {"age": [23, 40, 35], "sex": ["f", "m", "f"], "region": ["A", "B", "A"]},
        {"age": [24, 39, 35], "sex": ["f", "m", "f"], "region": ["A", "B", "B"]},
    )
    for assignment in ("nearest", "one-to-one"):
        d = record_linkage(original, release, gower(assignment=assignment)).distance
        assert d is not None
        np.testing.assert_allclose(d.distance, [1 / 17 / 3, 1 / 17 / 3, 1 / 3], rtol=1e-12)
        assert d.nearest.tolist() == [0, 1, 2]
        assert d.linked == 3
    # Record 3 (35, f, B) against the others: (12/17 + 0 + 1)/3 and (5/17 + 1 + 0)/3, both farther.
    weighted = record_linkage(original, release, gower(weights="age=2,region=0.5")).distance
    assert weighted is not None
    np.testing.assert_allclose(weighted.distance, [2 / 17 / 3.5, 2 / 17 / 3.5, 0.5 / 3.5], rtol=1e-12)
    same = record_linkage(original, release, gower(weights="2,1,0.5")).distance  # sdcMicro's form
    assert same is not None
    np.testing.assert_array_equal(same.distance, weighted.distance)
    assert same.summary()["weights"] == {"age": 2.0, "sex": 1.0, "region": 0.5}
    assert same.summary()["metric"] == "gower"


def test_sdcmicros_euclidean_counterexample_links_by_gower_range() -> None:
    """sdcMicro's cost-matrix test (a = 0, 2, 100 against 0, 100, 101): Gower divides by the range of
    both files, 101, and the least total assignment is 99/101."""
    config = {"attributes": {"a": {"role": "quasi-identifier", "kind": "numeric"}}}
    original, release = tables(config, {"a": [0.0, 2.0, 100.0]}, {"a": [0.0, 100.0, 101.0]})
    d = record_linkage(original, release, gower(assignment="one-to-one")).distance
    assert d is not None
    assert sorted(d.nearest.tolist()) == [0, 1, 2]
    assert d.nearest_distance.sum() == pytest.approx(99 / 101, abs=1e-12)
    near = record_linkage(original, release, gower()).distance
    assert near is not None
    assert near.nearest.tolist() == [0, 2, 2]  # 100 is nearest to 100 and 101 (greedy)
    np.testing.assert_allclose(near.distance, [0, 98 / 101, 1 / 101], rtol=1e-12)
    assert near.rank.tolist() == [1, 2, 1]


def test_missing_values_leave_their_attribute_out() -> None:
    """sdcMicro's na_action = "ignore": a missing value drops its attribute from the pair's sum and
    weights (daisy); a suppressed released value ('*' or null) is such a value."""
    original, release = tables(
        MIXED,
        {"age": [20, 30, 40, 50], "sex": ["f", "m", None, "m"], "region": ["A", "B", "A", "B"]},
        {"age": [None, 30, 40, 50], "sex": ["f", "*", "f", "m"], "region": ["A", "B", "A", "B"]},
    )
    d = record_linkage(original, release, gower(weights="age=3")).distance
    assert d is not None
    # Record 0: age left out: (0 + 0)/2 for original 0; original 2's sex is missing: (0)/1 = 0 too.
    assert d.nearest_distance[0] == 0.0 and d.tied[0] == 2 and d.credit[0] == 0.5
    # Record 1 (30, *, B): sex left out; original 1 at 0, original 3 at (3 * 20/30)/(3 + 1) = 0.5.
    assert d.distance[1] == 0.0 and d.tied[1] == 1
    # Record 2 (40, f, A): original 2 has no sex: (0 + 0)/(3 + 1) = 0.
    assert d.distance[2] == 0.0
    rows = np.arange(4)
    full = record_linkage(original, release, gower(weights="age=3", assignment="one-to-one")).distance
    assert full is not None
    np.testing.assert_array_equal(full.distance, d.distance[rows])


def test_bad_weights_are_refused() -> None:
    original, release = tables(MIXED, {"age": [1, 2], "sex": ["f", "m"], "region": ["A", "B"]}, {
        "age": [1, 2], "sex": ["f", "m"], "region": ["A", "B"]
    })  # fmt: skip
    for text, message in [
        ("income=2", "not a compared attribute"),
        ("1,2", "2 weights for 3"),
        ("age=-1", "non-negative"),
        ("age=0,sex=0,region=0", "at least one weight must be positive"),
        ("age=nan", "finite"),
        ("age=x", "not a number"),
        ("age=1,age=2", "twice"),
        ("age=1,2", "either name=weight"),
    ]:
        with pytest.raises(ConfigError, match=message):
            record_linkage(original, release, gower(weights=text))
    with pytest.raises(ConfigError, match="distance"):
        LinkageParams.parse({"method": "distance", "weights": "age=2"})
    with pytest.raises(ConfigError, match="distance"):
        LinkageParams.parse({"method": "probabilistic", "distance": "gower"})


def oracle(original: dict, release: dict, numeric: list[str], names: list[str], w: dict[str, float]):
    """Brute force over all pairs from daisy's formula (released nulls and originals' null categories
    missing)."""
    n = len(original[names[0]])
    span = {}
    for a in numeric:
        values = [v for v in original[a] + release[a] if v is not None]
        span[a] = (max(values) - min(values)) or 1.0
    matrix = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            total = weight = 0.0
            for a in names:
                y, x = release[a][i], original[a][j]
                if y is None or x is None:
                    continue
                total += w[a] * (abs(y - x) / span[a] if a in numeric else float(y != x))
                weight += w[a]
            matrix[i, j] = total / weight if weight else 0.0
    return matrix


@settings(max_examples=60, deadline=None)
@given(
    st.integers(2, 25).flatmap(
        lambda n: st.tuples(
            st.lists(st.integers(0, 6), min_size=n, max_size=n),
            st.lists(st.one_of(st.none(), st.integers(-1, 8)), min_size=n, max_size=n),
            st.lists(st.one_of(st.none(), st.sampled_from("abc")), min_size=n, max_size=n),
            st.lists(st.one_of(st.none(), st.sampled_from("abc")), min_size=n, max_size=n),
            st.lists(st.sampled_from("xy"), min_size=n, max_size=n),
            st.lists(st.sampled_from("xy"), min_size=n, max_size=n),
            st.tuples(st.sampled_from([0.0, 0.5, 1.0, 2.0]), st.sampled_from([0.5, 1.0, 3.0])),
        )
    )
)
def test_nearest_search_equals_brute_force(case) -> None:
    num_o, num_r, cat_o, cat_r, k_o, k_r, (w_num, w_cat) = case
    config = {
        "attributes": {
            "v": {"role": "quasi-identifier", "kind": "numeric"},
            "c": {"role": "quasi-identifier"},
            "k": {"role": "quasi-identifier"},
        }
    }
    original = {"v": num_o, "c": cat_o, "k": k_o}
    release = {"v": num_r, "c": cat_r, "k": k_r}
    o, r = tables(config, original, release)
    weights = {"v": w_num, "c": w_cat, "k": 1.0}
    d = record_linkage(o, r, gower(weights=f"v={w_num},c={w_cat}")).distance
    assert d is not None
    matrix = oracle(original, release, ["v"], ["v", "c", "k"], weights)
    n = len(num_o)
    own = matrix[np.arange(n), np.arange(n)]
    np.testing.assert_allclose(d.distance, own, atol=1e-12)
    best = matrix.min(axis=1)
    np.testing.assert_allclose(d.nearest_distance, best, atol=1e-12)
    ties = matrix <= best[:, None] + 1e-12
    assert d.tied.tolist() == ties.sum(axis=1).tolist()
    assert d.nearest.tolist() == ties.argmax(axis=1).tolist()
    linked = own <= best + 1e-12
    assert d.true_match.tolist() == linked.tolist()
    closer = (matrix < own[:, None] - 1e-12).sum(axis=1)
    assert d.rank.tolist() == np.where(linked, 1, closer + 1).tolist()


def test_ranges_of_a_generalized_release() -> None:
    """A released range is at gap 0 inside and the gap to its nearer bound outside, over the range
    of the originals and the released bounds (10 .. 40 here: 30)."""
    config = {"attributes": {"a": {"role": "quasi-identifier", "kind": "numeric"}}}
    original, release = tables(config, {"a": [10, 20, 30, 40]}, {"a": ["10-20", "10-20", "32-35", "*"]})
    d = record_linkage(original, release, gower()).distance
    assert d is not None
    assert d.distance.tolist() == pytest.approx([0.0, 0.0, 2 / 30, 0.0], abs=1e-15)
    assert d.tied.tolist() == [2, 2, 1, 4]  # '*' leaves no attribute: every original at 0
    assert d.credit.tolist() == [0.5, 0.5, 1.0, 0.25]


def test_cli_gower_and_bad_weights(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(json.dumps(MIXED))
    original, release = tmp_path / "o.csv", tmp_path / "r.csv"
    pl.DataFrame({"age": [23, 40, 35], "sex": ["f", "m", "f"], "region": ["A", "B", "A"]}).write_csv(original)
    pl.DataFrame({"age": [24, 39, 35], "sex": ["f", "m", "f"], "region": ["A", "B", "B"]}).write_csv(release)
    out = tmp_path / "s.json"
    args = ["risk", "linkage", str(original), str(release), "-c", str(config), "--method", "distance"]
    result = runner.invoke(app, [*args, "--distance", "gower", "--weights", "age=2", "--summary", str(out)])
    assert result.exit_code == 0, result.output
    figures = json.loads(out.read_text())
    assert "gower" in json.dumps(figures)
    bad = runner.invoke(app, [*args, "--distance", "gower", "--weights", "income=2"])
    assert bad.exit_code == 2
    assert bad.output.count("income") == 1, bad.output
    assert "not a compared attribute" in bad.output
    bad = runner.invoke(app, [*args, "--weights", "age=2"])
    assert bad.exit_code == 2
    assert "--distance gower" in bad.output, bad.output


def test_ranks_of_many_records_sharing_a_released_row() -> None:
    """40 released records with the same values (the scan sorts the distances for them): the rank of
    record i is 1 + the originals strictly closer than its source, here i (ages 0 .. 39 against 0)."""
    n = 40
    config = {
        "attributes": {
            "v": {"role": "quasi-identifier", "kind": "numeric"},
            "k": {"role": "quasi-identifier"},
        }
    }
    original = {"v": list(range(n)), "k": ["x"] * n}
    release = {"v": [0] * n, "k": ["x"] * n}
    o, r = tables(config, original, release)
    d = record_linkage(o, r, gower(weights="k=2")).distance
    assert d is not None
    assert d.rank.tolist() == [i + 1 for i in range(n)]
    matrix = oracle(original, release, ["v"], ["v", "k"], {"v": 1.0, "k": 2.0})
    np.testing.assert_allclose(d.distance, matrix[np.arange(n), np.arange(n)], atol=1e-15)
    assert d.distance[5] == pytest.approx(5 / 39 / 3)
