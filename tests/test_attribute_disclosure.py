"""Attribute disclosure (``sdckit risk attribute-disclosure``): hand-made tables with known answers."""

from __future__ import annotations

import json
from functools import partial

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from conftest import make_table
from sdckit.cli import app
from sdckit.errors import ConfigError, InputError
from sdckit.measures import run_measure
from sdckit.risk.attribute_disclosure import attribute_disclosure
from sdckit.table import Kind, Role

runner = CliRunner()

ORIGINAL = pl.DataFrame(
    {
        "a": ["x", "x", "y", "z", "y"],
        "b": [1, 1, 2, 3, 2],
        "s": ["flu", "cold", "flu", "cancer", None],
    }
)
# Release: (x,1) -> flu, flu, cold; (y,2) -> cold, flu (a tie); (w,9) -> flu. Overall mode: flu.
RELEASE = pl.DataFrame(
    {
        "a": ["x", "x", "x", "y", "y", "w"],
        "b": [1, 1, 1, 2, 2, 9],
        "s": ["flu", "flu", "cold", "cold", "flu", "flu"],
    }
)
KEYS = {"a": Role.QUASI_IDENTIFIER, "b": (Role.QUASI_IDENTIFIER, Kind.NUMERIC)}
ROLES = {**KEYS, "s": Role.SENSITIVE}
table = partial(make_table, **ROLES)


def test_hand_computed_shares():
    result = attribute_disclosure(table(ORIGINAL), table(RELEASE))
    figures = result.summary()
    assert figures["matched"] == 4  # (z, 3) matches nothing
    assert figures["matched_share"] == pytest.approx(0.8)
    s = figures["per_attribute"]["s"]
    # Eligible: records 1, 2, 3 (record 5 is matched but its own value is missing).
    assert s["records"] == 3
    # record 1: mode flu, right (1); record 2: cold, mode flu (0); record 3: tie flu/cold (1/2).
    assert s["correct"] == pytest.approx(1.5)
    assert s["correct_share"] == pytest.approx(0.5)
    # Baseline: guess flu for every record: records 1 and 3 right.
    assert s["baseline_share"] == pytest.approx(2 / 3)
    assert s["excess"] == pytest.approx(0.5 - 2 / 3)
    assert s["unanimous_share"] == 0.0
    assert figures["overall"] == pytest.approx(s)
    records = result.records()
    assert records["matches"].to_list() == [3, 3, 2, 0, 2]
    assert records["s_credit"].to_list() == [1.0, 0.0, 0.5, None, None]


def test_unanimous_matches_and_the_overall_pool():
    original = ORIGINAL.with_columns(t=pl.Series(["p", "q", "p", "q", "p"]))
    release = pl.DataFrame(
        {"a": ["x", "x", "y"], "b": [1, 1, 2], "s": ["flu", "flu", None], "t": ["p", "q", "p"]}
    )
    result = attribute_disclosure(table(original), table(release), sensitive="s,t")
    figures = result.summary()
    s, t = figures["per_attribute"]["s"], figures["per_attribute"]["t"]
    # s: (x,1) unanimous flu: record 1 right, record 2 wrong; (y,2) has s missing: no prediction.
    assert s["records"] == 3
    assert s["correct"] == 1.0
    assert s["unanimous_share"] == pytest.approx(2 / 3)
    assert s["unanimous_correct_share"] == pytest.approx(1 / 3)
    # t: (x,1) tie p/q: records 1, 2 earn 1/2; (y,2) unanimous p: records 3 and 5 right.
    assert t["records"] == 4
    assert t["correct"] == pytest.approx(3.0)
    assert t["unanimous_correct_share"] == pytest.approx(0.5)
    # baseline of t: overall p 2, q 1 -> guess p: records 1, 3, 5 right.
    assert t["baseline_share"] == pytest.approx(0.75)
    overall = figures["overall"]
    assert overall["records"] == 7
    assert overall["correct_share"] == pytest.approx(4 / 7)
    assert overall["baseline_share"] == pytest.approx((s["baseline_share"] * 3 + 3) / 7)
    assert overall["unanimous_correct_share"] == pytest.approx(3 / 7)


def test_the_original_itself_discloses_every_unique_record():
    rng = np.random.default_rng(0)
    frame = pl.DataFrame(
        {"a": rng.choice(list("uvw"), 300), "b": rng.integers(0, 40, 300), "s": rng.choice(list("PQR"), 300)}
    )
    figures = attribute_disclosure(
        table(frame), table(frame.sample(fraction=1.0, shuffle=True, seed=1))
    ).summary()
    keys = frame.group_by("a", "b").agg(pl.len().alias("size"), pl.col("s").n_unique().alias("values"))
    # Brute force: a record whose class has one value of s is inferred right and unanimously.
    joined = frame.join(keys, on=["a", "b"])
    assert figures["matched"] == 300
    assert figures["overall"]["unanimous_share"] == pytest.approx((joined["values"] == 1).mean())
    assert figures["overall"]["correct_share"] >= figures["overall"]["unanimous_share"]


def test_implicates():
    first = RELEASE.with_columns(implicate=pl.lit(1))
    second = pl.DataFrame({"a": ["z"], "b": [3], "s": ["cancer"]}).with_columns(implicate=pl.lit(2))
    release = table(pl.concat([first, second]))
    assert attribute_disclosure(table(ORIGINAL), release).summary()["matched"] == 4
    only_second = attribute_disclosure(table(ORIGINAL), release, implicate="2").summary()
    assert only_second["matched"] == 1
    assert only_second["per_attribute"]["s"]["correct_share"] == 1.0
    pooled = attribute_disclosure(table(ORIGINAL), release, implicate="all").summary()
    assert pooled["matched"] == 5
    assert pooled["implicate"] == "all"
    with pytest.raises(InputError, match="no implicate 3"):
        attribute_disclosure(table(ORIGINAL), release, implicate="3")
    with pytest.raises(ConfigError, match="implicate"):
        attribute_disclosure(table(ORIGINAL), table(RELEASE), implicate="2")


def test_clear_errors():
    with pytest.raises(InputError, match="'s'"):
        attribute_disclosure(table(ORIGINAL), make_table(RELEASE.drop("s"), **KEYS))
    with pytest.raises(ConfigError, match="'nope'"):
        attribute_disclosure(table(ORIGINAL), table(RELEASE), sensitive="nope")
    with pytest.raises(ConfigError, match="also a quasi-identifier"):
        attribute_disclosure(table(ORIGINAL), table(RELEASE), sensitive="a")
    with pytest.raises(ConfigError, match="implicate"):
        run_measure("attribute-disclosure", table(ORIGINAL), table(RELEASE), params={"implicate": "first"})


CONFIG = """attributes:
  a: {role: quasi-identifier}
  b: {role: quasi-identifier, kind: numeric}
  s: {role: sensitive}
"""


def test_cli_writes_the_figures_and_refuses_bad_input(tmp_path):
    ORIGINAL.write_csv(tmp_path / "original.csv")
    RELEASE.write_csv(tmp_path / "release.csv")
    (tmp_path / "config.yaml").write_text(CONFIG)
    arguments = [
        "risk",
        "attribute-disclosure",
        str(tmp_path / "original.csv"),
        str(tmp_path / "release.csv"),
    ]
    result = runner.invoke(
        app,
        [*arguments, "-c", str(tmp_path / "config.yaml"), "--summary", str(tmp_path / "s.json"),
         "-o", str(tmp_path / "records.csv"), "--quiet"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    figures = json.loads((tmp_path / "s.json").read_text())
    assert figures["per_attribute"]["s"]["correct_share"] == pytest.approx(0.5)
    assert pl.read_csv(tmp_path / "records.csv")["matches"].to_list() == [3, 3, 2, 0, 2]
    bad = runner.invoke(
        app,
        [*arguments, "-c", str(tmp_path / "config.yaml"), "--sensitive", "nope",
         "--summary", str(tmp_path / "bad.json")],
    )  # fmt: skip
    assert bad.exit_code == 2
    assert "'nope'" in bad.output
    assert "Traceback" not in bad.output
    assert not (tmp_path / "bad.json").exists()


def brute_force(original: pl.DataFrame, release: pl.DataFrame) -> dict:
    """Record by record, as the definition reads."""
    overall = [v for v in release["s"].to_list() if v is not None]
    top = max(overall.count(v) for v in set(overall))
    modes = {v for v in overall if overall.count(v) == top}
    counted = correct = baseline = unanimous = 0.0
    for a, b, s in original.iter_rows():
        votes = [v for a2, b2, v in release.iter_rows() if (a2, b2) == (a, b)]
        if not votes or s is None:
            continue
        counted += 1
        present = [v for v in votes if v is not None]
        if present:
            best = max(present.count(v) for v in set(present))
            tied = {v for v in present if present.count(v) == best}
            correct += (s in tied) / len(tied)
            unanimous += len(set(present)) == 1
        baseline += (s in modes) / len(modes)
    return {"records": counted, "correct": correct, "baseline": baseline, "unanimous": unanimous}


@pytest.mark.parametrize("seed", range(5))
def test_against_a_brute_force_oracle(seed):
    rng = np.random.default_rng(seed)

    def draw(n):
        s = rng.choice(["p", "q", "r", None], n, p=[0.4, 0.3, 0.2, 0.1]).tolist()
        return pl.DataFrame(
            {"a": rng.choice(["x", "y", None], n).tolist(), "b": rng.integers(0, 4, n), "s": s},
            schema={"a": pl.String, "b": pl.Int64, "s": pl.String},
        )

    original, release = draw(60), draw(45)
    expected = brute_force(original, release)
    figures = attribute_disclosure(table(original), table(release)).summary()["per_attribute"]["s"]
    assert figures["records"] == expected["records"]
    assert figures["correct"] == pytest.approx(expected["correct"])
    assert figures["baseline_share"] * figures["records"] == pytest.approx(expected["baseline"])
    assert figures["unanimous_share"] * figures["records"] == pytest.approx(expected["unanimous"])
