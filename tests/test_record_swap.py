"""Targeted record swapping (sdckit anonymize record-swap; sdcMicro's recordSwap): the households at
risk are the ones a brute-force count finds, every one of them is swapped across the right level with
a similar household, only geography moves, households keep their members, and the swap rate asked is
reached."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from conftest import make_table
from sdckit.anonymize import record_swap
from sdckit.anonymize.record_swap import RecordSwapFigures
from sdckit.cli import app
from sdckit.errors import ConfigError, InputError
from sdckit.table import Kind, Role

runner = CliRunner()
GEOGRAPHY = ["region", "district"]


def households_frame() -> pl.DataFrame:
    """40 households, 10 per district (A1, A2 in region A; B1, B2 in region B), of 1 or 2 persons.

    Every person is nationality X except: household 1 (A1) has a Y, the only Y of region A, so it is
    at risk at the region level; household 2 (A1) has a Z, the only Z of district A1, while region A
    has four (households 12, 13, 14 in A2), so it is at risk at the district level only.
    """
    rows = []
    for number in range(1, 41):
        district = ["A1", "A2", "B1", "B2"][(number - 1) // 10]
        size = 1 + number % 2
        for member in range(size):
            nationality = "X"
            if member == 0 and number == 1:
                nationality = "Y"
            if member == 0 and number in (2, 12, 13, 14):
                nationality = "Z"
            rows.append(
                {
                    "hid": number,
                    "person": f"p{number}-{member}",
                    "region": district[0],
                    "district": district,
                    "hsize": size,
                    "nationality": nationality,
                    "age": 20 + (number * 7 + member * 13) % 50,
                }
            )
    return pl.DataFrame(rows)


# The persons of households_frame(), without and with their households.
PERSONS = {"person": Role.IDENTIFIER, "nationality": Role.QUASI_IDENTIFIER, "age": Kind.NUMERIC}
HOUSEHOLDS = {**PERSONS, "hid": (Role.HOUSEHOLD, Kind.NUMERIC)}


def household_view(frame: pl.DataFrame, columns: list[str]) -> dict[int, tuple]:
    first = frame.group_by("hid", maintain_order=True).first()
    return {row["hid"]: tuple(row[c] for c in columns) for row in first.iter_rows(named=True)}


def test_the_households_at_risk_are_found_and_swapped_across_their_level():
    frame = households_frame()
    release = record_swap(
        make_table(frame, **HOUSEHOLDS),
        GEOGRAPHY,
        similarity=[["hsize"]],
        swap_rate=0.0,
        k_anonymity=3,
        seed=1,
    )
    figures = release.figures_as(RecordSwapFigures)
    assert figures.levels["region"] == {"at_risk": 1, "swapped": 1, "left": 0, "pairs": 1}
    assert figures.levels["district"] == {"at_risk": 1, "swapped": 1, "left": 0, "pairs": 1}
    assert figures.risky_households == 2 and figures.risky_households_left == 0
    assert figures.target_pairs == 0 and figures.pairs == 2
    assert figures.households_swapped == 4
    assert figures.swap_rate_achieved == pytest.approx(4 / 40)

    before = household_view(frame, [*GEOGRAPHY, "hsize"])
    after = household_view(release.table.data, [*GEOGRAPHY, "hsize"])
    moved = {hid for hid in before if before[hid] != after[hid]}
    assert {1, 2} <= moved and len(moved) == 4
    partner = {hid: other for hid in moved for other in moved if after[hid] == before[other]}
    # Household 1 (unique in region A) now lives in region B, with a household of the same size.
    assert after[1][0] == "B" and before[partner[1]][0] == "B"
    # Household 2 (unique in district A1) left district A1.
    assert after[2][1] != "A1"
    for hid, other in partner.items():
        assert partner[other] == hid
        assert before[hid][:2] == after[other][:2]  # the two households exchanged their geography
        assert before[hid][2] == before[other][2]  # similar: the same household size


def test_only_geography_moves_and_households_keep_their_members():
    frame = households_frame()
    release = record_swap(make_table(frame, **HOUSEHOLDS), GEOGRAPHY, swap_rate=0.3, seed=4)
    released = release.table.data
    assert released.columns == [c for c in frame.columns if c != "person"]  # identifier dropped
    others = [c for c in released.columns if c not in GEOGRAPHY]
    assert released.select(others).equals(frame.select(others))  # record by record, in order
    # Every member of a household has the household's (new) geography.
    assert (released.group_by("hid").agg(pl.col("district").n_unique())["district"] == 1).all()
    assert (released.group_by("hid").agg(pl.col("region").n_unique())["region"] == 1).all()


def area_counts(frame: pl.DataFrame) -> tuple[Counter, Counter]:
    households = Counter(household_view(frame, ["district"]).values())
    persons = Counter(frame["district"].to_list())
    return households, persons


def test_area_totals_change_only_by_the_swapped_pairs():
    frame = households_frame()
    release = record_swap(make_table(frame, **HOUSEHOLDS), GEOGRAPHY, swap_rate=0.5, seed=2)
    before_households, before_persons = area_counts(frame)
    after_households, after_persons = area_counts(release.table.data)
    # A swap exchanges two households' areas: every area keeps its number of households ...
    assert after_households == before_households
    # ... and its number of persons changes by the size differences of its swapped pairs.
    sizes = household_view(frame, ["hsize"])
    old = household_view(frame, ["district"])
    new = household_view(release.table.data, ["district"])
    expected = Counter(before_persons)
    for hid in sizes:
        if old[hid] != new[hid]:
            expected[old[hid][0]] -= sizes[hid][0]
            expected[new[hid][0]] += sizes[hid][0]
    assert +after_persons == +expected
    # With household size as similarity variable persons per area do not change at all.
    similar = record_swap(
        make_table(frame, **HOUSEHOLDS), GEOGRAPHY, similarity=[["hsize"]], swap_rate=0.5, seed=2
    )
    assert area_counts(similar.table.data) == (before_households, before_persons)


@pytest.mark.parametrize("rate", [0.05, 0.1, 0.25, 0.5])
def test_the_swap_rate_asked_is_reached_when_donors_exist(rate):
    frame = households_frame()
    release = record_swap(make_table(frame, **HOUSEHOLDS), GEOGRAPHY, swap_rate=rate, k_anonymity=0, seed=3)
    figures = release.figures_as(RecordSwapFigures)
    assert figures.target_pairs == int(np.ceil(40 * rate / 2 - 1e-9))
    assert figures.pairs == figures.target_pairs
    assert figures.swap_rate_achieved >= rate
    assert figures.households_swapped == 2 * figures.pairs
    assert figures.records_swapped == sum(
        n for n, old, new in _sizes_and_moves(frame, release.table.data) if old != new
    )


def _sizes_and_moves(before: pl.DataFrame, after: pl.DataFrame):
    sizes = household_view(before, ["hsize"])
    old = household_view(before, ["district"])
    new = household_view(after, ["district"])
    return [(sizes[h][0], old[h], new[h]) for h in sizes]


def test_k_anonymity_zero_and_rate_zero_swap_nothing():
    frame = households_frame()
    release = record_swap(make_table(frame, **HOUSEHOLDS), GEOGRAPHY, swap_rate=0, k_anonymity=0)
    assert release.figures_as(RecordSwapFigures).pairs == 0
    assert release.table.data.equals(frame.drop("person"))


def test_a_household_without_a_similar_donor_is_left_and_reported():
    frame = households_frame().with_columns(
        pl.when(pl.col("hid") == 1).then(9).otherwise(pl.col("hsize")).alias("tenure")
    )
    release = record_swap(
        make_table(frame, **HOUSEHOLDS), GEOGRAPHY, similarity=[["tenure"]], swap_rate=0, seed=1
    )
    assert release.figures_as(RecordSwapFigures).levels["region"] == {
        "at_risk": 1,
        "swapped": 0,
        "left": 1,
        "pairs": 0,
    }
    assert release.figures_as(RecordSwapFigures).risky_households_left == 1
    # A profile no donor can meet (a donor of another region never shares the region) leaves it too;
    # a second profile tried after it finds one.
    impossible = record_swap(
        make_table(frame, **HOUSEHOLDS), GEOGRAPHY, similarity=[["tenure"], ["region"]], swap_rate=0
    )
    assert impossible.figures_as(RecordSwapFigures).risky_households_left == 1
    second = record_swap(
        make_table(frame, **HOUSEHOLDS), GEOGRAPHY, similarity=[["tenure"], ["hsize"]], swap_rate=0
    )
    assert second.figures_as(RecordSwapFigures).risky_households_left == 0


def brute_force_levels(frame: pl.DataFrame, geography: list[str], risk: list[str], k: int) -> dict:
    """Per household the coarsest level where some member's combination (risk variables + areas
    down to that level) is shared by fewer than k records, or len(geography)."""
    rows = frame.to_dicts()
    levels = {}
    for hid in {row["hid"] for row in rows}:
        members = [row for row in rows if row["hid"] == hid]
        level = len(geography)
        for h in range(len(geography)):
            columns = risk + geography[: h + 1]
            counts = [
                sum(all(other[c] == member[c] for c in columns) for other in rows) for member in members
            ]
            if min(counts) < k:
                level = h
                break
        levels[hid] = level
    return levels


@st.composite
def census(draw):
    n_households = draw(st.integers(2, 30))
    rows = []
    for hid in range(n_households):
        region = draw(st.sampled_from("AB"))
        district = region + draw(st.sampled_from("12"))
        town = district + draw(st.sampled_from("xy"))
        size = draw(st.integers(1, 3))
        for _ in range(size):
            rows.append(
                {
                    "hid": hid,
                    "region": region,
                    "district": district,
                    "town": town,
                    "hsize": size,
                    "sex": draw(st.sampled_from("MF")),
                    "age": draw(st.integers(0, 3)),
                }
            )
    return pl.DataFrame(rows)


@settings(max_examples=60)
@given(
    frame=census(),
    k=st.integers(0, 4),
    rate=st.sampled_from([0.0, 0.1, 0.5]),
    seed=st.integers(0, 5),
    similar=st.booleans(),
)
def test_properties_on_random_census_data(frame, k, rate, seed, similar):
    geography = ["region", "district", "town"]
    table = make_table(frame, hid=(Role.HOUSEHOLD, Kind.NUMERIC))
    release = record_swap(
        table,
        geography,
        risk_variables=["sex", "age"],
        similarity=[["hsize"]] if similar else None,
        swap_rate=rate,
        k_anonymity=k,
        seed=seed,
    )
    expected = brute_force_levels(frame, geography, ["sex", "age"], k)
    codes = release.figures_as(RecordSwapFigures).household_codes
    level = release.figures_as(RecordSwapFigures).level
    hids = frame["hid"].to_numpy()
    assert {int(hids[i]): int(level[codes[i]]) for i in range(len(hids))} == expected
    released = release.table.data
    others = [c for c in frame.columns if c not in geography]
    assert released.select(others).equals(frame.select(others))
    before = household_view(frame, [*geography, "hsize"])
    after = household_view(released, [*geography, "hsize"])
    partner = release.figures_as(RecordSwapFigures).partner
    hid_of_code = {int(codes[i]): int(hids[i]) for i in range(len(hids))}
    for code, other in enumerate(partner):
        hid = hid_of_code[code]
        if other < 0:
            assert after[hid] == before[hid]
            continue
        mate = hid_of_code[int(other)]
        assert partner[other] == code
        assert after[hid][:3] == before[mate][:3] and after[mate][:3] == before[hid][:3]
        if similar:
            assert before[hid][3] == before[mate][3]
        # The two households lie in different areas of the level they were swapped at.
        s = release.figures_as(RecordSwapFigures).swap_level[code]
        assert before[hid][: s + 1] != before[mate][: s + 1]
    figures = release.figures_as(RecordSwapFigures)
    assert figures.risky_households == sum(v < len(geography) for v in expected.values())
    # Left: at risk at level h and not moved to another area of level h.
    left = [h for h, v in expected.items() if v < len(geography) and after[h][: v + 1] == before[h][: v + 1]]
    assert figures.risky_households_left == len(left)
    # Only a household that found no donor (and then served as a donor inside its area) is left.
    assert len(left) <= figures.no_donor
    assert figures.households_swapped == int((partner >= 0).sum()) == 2 * figures.pairs
    # Enough households of other areas with the same size: the rate is reached.
    if figures.no_donor == 0 and figures.pairs < figures.target_pairs:
        pytest.fail(f"rate not reached without a donor shortage: {figures}")


def test_errors_name_what_is_wrong():
    frame = households_frame()
    with pytest.raises(ConfigError, match="role household"):
        record_swap(make_table(frame, **PERSONS), GEOGRAPHY)
    with pytest.raises(ConfigError, match="'county' is not a column"):
        record_swap(make_table(frame, **HOUSEHOLDS), ["region", "county"])
    with pytest.raises(ConfigError, match="risk_variables: 'region' is a geography attribute"):
        record_swap(make_table(frame, **HOUSEHOLDS), GEOGRAPHY, risk_variables=["region"])
    moved = frame.with_columns(
        pl.when(pl.col("person") == "p1-1").then(pl.lit("A2")).otherwise(pl.col("district")).alias("district")
    )
    with pytest.raises(InputError, match="'district' differs between the members of household 1"):
        record_swap(make_table(moved, **HOUSEHOLDS), GEOGRAPHY)


# The command -----------------------------------------------------------------------------------

CONFIG = """attributes:
  person:      {role: identifier}
  hid:         {role: household}
  nationality: {role: quasi-identifier}
"""


def write(directory: Path) -> tuple[Path, Path]:
    households_frame().write_csv(directory / "census.csv")
    (directory / "census.yaml").write_text(CONFIG)
    return directory / "census.csv", directory / "census.yaml"


def swap(directory: Path, output: str, *options: str):
    data, config = write(directory)
    arguments = ["anonymize", "record-swap", str(data), "-c", str(config), "-o", str(directory / output)]
    return runner.invoke(app, [*arguments, *options])


def test_the_command_writes_the_release_and_the_figures(tmp_path):
    options = ["--hierarchy", "region,district", "--similarity", "hsize", "--swap-rate", "0.2", "--seed", "7"]
    result = swap(tmp_path, "out.csv", *options, "--summary", str(tmp_path / "s.json"))
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["households"] == 40 and summary["records"] == 60
    assert summary["levels"]["region"]["at_risk"] == 1 and summary["levels"]["district"]["at_risk"] == 1
    assert summary["risky_households_left"] == 0
    assert summary["swap_rate_achieved"] >= 0.2
    assert summary["recipe"]["steps"][0]["hierarchy"] == ["region", "district"]
    assert summary["recipe"]["steps"][0]["risk_variables"] is None  # default: the quasi-identifiers
    released = pl.read_csv(tmp_path / "out.csv")
    assert "person" not in released.columns and released.height == 60
    assert "households swapped" in result.output


def test_the_same_seed_gives_the_same_file_and_another_seed_another(tmp_path):
    options = ["--hierarchy", "region,district", "--swap-rate", "0.3"]
    digests = []
    for output, seed in (("a.csv", "5"), ("b.csv", "5"), ("c.csv", "6")):
        result = swap(tmp_path, output, *options, "--seed", seed)
        assert result.exit_code == 0, result.output
        digests.append(hashlib.sha256((tmp_path / output).read_bytes()).hexdigest())
    assert digests[0] == digests[1] != digests[2]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--hierarchy", "region,county"], "'county' is not a column"),
        (["--hierarchy", "region", "--swap-rate", "1.5"], "--swap-rate must be less than or equal to 1"),
        (["--hierarchy", "region", "--similarity", "size"], "'size' is not a column"),
    ],
)
def test_bad_input_exits_2_and_writes_nothing(tmp_path, options, message):
    result = swap(tmp_path, "out.csv", *options)
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.split())
    assert not (tmp_path / "out.csv").exists()


def test_a_household_left_at_risk_is_a_violation_unless_allowed(tmp_path):
    data, config = write(tmp_path)
    frame = households_frame().with_columns(
        pl.when(pl.col("hid") == 1).then(9).otherwise(pl.col("hsize")).alias("tenure")
    )
    frame.write_csv(data)
    options = ["--hierarchy", "region,district", "--similarity", "tenure", "--swap-rate", "0"]
    base = ["anonymize", "record-swap", str(data), "-c", str(config)]
    result = runner.invoke(app, [*base, "-o", str(tmp_path / "out.csv"), *options])
    assert result.exit_code == 3, result.output
    assert "households at risk found no donor" in " ".join(result.output.split())
    assert not (tmp_path / "out.csv").exists()
    allowed = runner.invoke(app, [*base, "-o", str(tmp_path / "out.csv"), *options, "--allow-violations"])
    assert allowed.exit_code == 3 and (tmp_path / "out.csv").exists()


def test_donors_are_drawn_with_probability_proportional_to_their_risk():
    """Region A holds the only Y (at risk); region B's ten single-person households are donors:
    two Q (count 2, risk 1/2) and eight X (count 8, risk 1/8). The donor order is a weighted sample
    (Efraimidis and Spirakis): P(a Q donor) = 2 * 1/2 / (2 * 1/2 + 8 * 1/8) = 1/2, not 2/10."""
    nationality = ["Y", "X", "X", "X", "X", "X"] + ["Q", "Q"] + ["X"] * 8
    frame = pl.DataFrame(
        {
            "hid": list(range(16)),
            "region": ["A"] * 6 + ["B"] * 10,
            "nationality": nationality,
        }
    )
    table = make_table(frame, hid=(Role.HOUSEHOLD, Kind.NUMERIC))
    picks = []
    for seed in range(400):
        release = record_swap(
            table, ["region"], risk_variables=["nationality"], swap_rate=0, k_anonymity=2, seed=seed
        )
        assert (
            release.figures_as(RecordSwapFigures).pairs == 1
            and release.figures_as(RecordSwapFigures).risky_households_left == 0
        )
        donor = int(release.figures_as(RecordSwapFigures).partner[0])  # household codes follow the sorted ids
        picks.append(nationality[donor] == "Q")
    assert 0.42 < np.mean(picks) < 0.58  # sd 0.025 around 1/2; uniform would give 0.2


def test_the_swaps_are_spread_over_the_finest_areas_in_proportion_to_their_households():
    from sdckit.anonymize.record_swap import _distribute

    rng = np.random.default_rng(0)
    counts = np.array([10.0, 30.0, 60.0, 0.0])
    assert _distribute(counts, 10, rng).tolist() == [1, 3, 6, 0]
    totals = np.zeros(4)
    for _ in range(2000):
        draws = _distribute(counts, 7, rng)
        assert draws.sum() == 7 and draws[3] == 0
        assert np.all(draws >= np.floor(counts / 100 * 7)) and np.all(draws <= np.ceil(counts / 100 * 7))
        totals += draws
    assert totals / 2000 == pytest.approx(counts / 100 * 7, abs=0.05)
