"""Coverage counting: how many released records cover an original record's values, as an adversary
who knows those values sees a release (intervals, hierarchy nodes, value sets, '*', nulls)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.coverage import attribute_cover, coverage_counts
from sdckit.errors import InputError
from sdckit.frequency import frequencies
from sdckit.hierarchy import Hierarchy, intervals, ordered
from sdckit.models import KAnonymity
from sdckit.risk.combined import combined_risk
from sdckit.table import Attribute, Kind, Role, Schema, Table

# Leaves a..f under g1 = {a, b}, g2 = {c, d}, g3 = {e, f}; g1 and g2 under h1, g3 under h2; then '*'.
LEAVES = ("a", "b", "c", "d", "e", "f")
NODES = {"g1": {"a", "b"}, "g2": {"c", "d"}, "g3": {"e", "f"}, "h1": {"a", "b", "c", "d"}, "h2": {"e", "f"}}
TREE = Hierarchy(
    "letter",
    (LEAVES, ("g1", "g2", "g3"), ("h1", "h2"), ("*",)),
    np.array([[i, i // 2, 0 if i < 4 else 1, 0] for i in range(6)]),
)
SET_VALUES = ("x", "y", "z")

AGE = Hierarchy(
    "age",
    (("25", "38", "39", "40"), ("20-29", "35-44"), ("*",)),
    np.array([[0, 0, 0], [1, 1, 0], [2, 1, 0], [3, 1, 0]]),
)


def test_worked_example():
    """Every reading of a label, counted by hand: R0, R1 cover ages 38-40 and both sexes; R2 is the
    hierarchy node 35-44 (38, 39, 40) and Male; R3 is suppressed; R4 has a null age (a wildcard)."""
    original = pl.DataFrame({"age": [39, 40, 38, 25, None, 39], "sex": ["M", "F", "M", "F", "M", None]})
    released = pl.DataFrame(
        {
            "age": ["38-40", "38-40", "35-44", "*", None, "39"],
            "sex": ["{F,M}", "{F,M}", "M", "*", "F", "M"],
        }
    )
    counts = coverage_counts(original, released, ["age", "sex"], hierarchies={"age": AGE})
    # (39,M): R0 R1 R2 R3 R5; (40,F): R0 R1 R3 R4; (38,M): R0 R1 R2 R3; (25,F): R3 R4;
    # (null,M): R0 R1 R2 R3 R5; (39,null): all six.
    assert counts.tolist() == [5, 4, 4, 2, 5, 6]
    weights = np.array([1.0, 2.0, 0.5, 4.0, 8.0, 16.0])
    weighted = coverage_counts(original, released, ["age", "sex"], hierarchies={"age": AGE}, weights=weights)
    assert weighted.tolist() == [23.5, 15.0, 7.5, 12.0, 23.5, 31.5]
    # Under the category treatment a null is a value of its own: R4 covers only a missing age.
    category = coverage_counts(
        original, released, ["age", "sex"], hierarchies={"age": AGE}, missing="category"
    )
    # (39,M): R0 R1 R2 R3 R5; (40,F): R0 R1 R3; (38,M): R0 R1 R2 R3; (25,F): R3; (null,M): R3;
    # (39,null): R3 ('*' covers a missing value too).
    assert category.tolist() == [5, 3, 4, 1, 1, 1]
    assert coverage_counts(original, released, []).tolist() == [6] * 6


@st.composite
def release_case(draw):
    n = draw(st.integers(1, 12))
    m = draw(st.integers(1, 12))
    number = st.one_of(st.none(), st.integers(0, 6))
    letter = st.one_of(st.none(), st.sampled_from(LEAVES))
    member = st.one_of(st.none(), st.sampled_from(SET_VALUES))
    original = pl.DataFrame(
        {
            "number": draw(st.lists(number, min_size=n, max_size=n)),
            "letter": draw(st.lists(letter, min_size=n, max_size=n)),
            "member": draw(st.lists(member, min_size=n, max_size=n)),
        },
        schema={"number": pl.Int64, "letter": pl.String, "member": pl.String},
    )
    present = {name: set(original.get_column(name).drop_nulls().to_list()) for name in original.columns}
    released: dict[str, list] = {name: [] for name in original.columns}
    covered: dict[str, list] = {name: [] for name in original.columns}
    for _ in range(m):
        for name in original.columns:
            choice = draw(st.sampled_from(["value", "star", "null", "wide"]))
            if choice == "star":
                released[name].append("*")
                covered[name].append("all")
            elif choice == "null":
                released[name].append(None)
                covered[name].append("null")
            elif choice == "value" and present[name]:
                value = draw(st.sampled_from(sorted(present[name])))
                released[name].append(str(value))
                covered[name].append({value})
            elif name == "number":
                low = draw(st.integers(-2, 6))
                high = draw(st.integers(low, 8))
                released[name].append(f"{low}-{high}")
                covered[name].append(set(range(low, high + 1)))
            elif name == "letter":
                node = draw(st.sampled_from(sorted(NODES)))
                released[name].append(node)
                covered[name].append(NODES[node])
            else:
                chosen = draw(st.sets(st.sampled_from(sorted(present[name] or {"x"})), min_size=1))
                chosen &= present[name]
                if not chosen:
                    released[name].append("*")
                    covered[name].append("all")
                    continue
                released[name].append("{" + ",".join(sorted(chosen)) + "}")
                covered[name].append(chosen)
    weights = draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.25]), min_size=m, max_size=m))
    attributes = draw(st.lists(st.sampled_from(original.columns), unique=True, max_size=3))
    return (
        original,
        pl.DataFrame(released, schema=dict.fromkeys(original.columns, pl.String)),
        covered,
        weights,
        attributes,
    )


def _brute(original, covered, weights, attributes, missing):
    """The double loop: for each original record, the weights of the released records covering it."""
    result = []
    for row in original.iter_rows(named=True):
        total = 0.0
        for s, weight in enumerate(weights):
            ok = True
            for name in attributes:
                value, cover = row[name], covered[name][s]
                if cover == "all":
                    continue
                if value is None:
                    ok = missing == "wildcard" or cover == "null"
                elif cover == "null":
                    ok = missing == "wildcard"
                else:
                    ok = value in cover
                if not ok:
                    break
            if ok:
                total += weight
        result.append(total)
    return result


@pytest.mark.slow
@settings(max_examples=300)
@given(release_case(), st.sampled_from(["wildcard", "category"]))
def test_coverage_equals_brute_force(case, missing):
    original, released, covered, weights, attributes = case
    counts = coverage_counts(
        original,
        released,
        attributes,
        hierarchies={"letter": TREE},
        missing=missing,
        weights=np.array(weights),
    )
    assert counts.tolist() == pytest.approx(_brute(original, covered, weights, attributes, missing))


@settings(max_examples=150)
@given(
    st.lists(
        st.tuples(st.one_of(st.none(), st.integers(0, 3)), st.one_of(st.none(), st.sampled_from("pqr"))),
        min_size=1,
        max_size=25,
    ),
    st.sampled_from(["wildcard", "category"]),
)
def test_unchanged_release_counts_as_the_original(rows, missing):
    """A release that changes nothing is counted as the original is: the wildcard (and category)
    counting of nulls is the special case where every label is a value or a null."""
    frame = pl.DataFrame(rows, schema={"n": pl.Int64, "c": pl.String}, orient="row")
    for attributes in (["n"], ["c"], ["n", "c"]):
        assert coverage_counts(frame, frame, attributes, missing=missing).tolist() == (
            frequencies(frame, attributes, missing=missing).tolist()
        )


def test_unparseable_label_names_attribute_and_label():
    original = pl.DataFrame({"age": [39, 40]})
    with pytest.raises(InputError, match=r"release column 'age': label '39\.5' cannot be read"):
        attribute_cover("age", original.get_column("age"), pl.Series("age", ["39.5-", "39.5"]))
    with pytest.raises(InputError, match=r"label '\{39,41\}' is a set holding '41'"):
        attribute_cover("age", original.get_column("age"), pl.Series("age", ["{39,41}", "40"]))
    with pytest.raises(InputError, match=r"label 'g9' cannot be read: it is not .*a node of its hierarchy"):
        attribute_cover("letter", pl.Series(["a", "b"]), pl.Series(["g9", "g1"]), hierarchy=TREE)


def _people(n: int, seed: int) -> Table:
    generator = np.random.default_rng(seed)
    frame = pl.DataFrame(
        {
            "age": generator.integers(18, 80, n),
            "letter": generator.choice(list(LEAVES), n),
            "member": generator.choice(list(SET_VALUES), n),
            "flag": generator.choice(["Yes", "No"], n),
        }
    )
    schema = Schema(
        (
            Attribute("age", Role.QUASI_IDENTIFIER, Kind.NUMERIC, public_probability=0.5),
            Attribute("letter", Role.QUASI_IDENTIFIER, Kind.CATEGORICAL, public_probability=0.5),
            Attribute("member", Role.QUASI_IDENTIFIER, Kind.CATEGORICAL, public_probability=0.5),
            Attribute(
                "flag",
                Role.SENSITIVE,
                Kind.CATEGORICAL,
                public_probability=0.001,
                sensitivity=1,
                value_weights={"Yes": 1, "No": 0},
            ),
        )
    )
    return Table(frame, schema)


QUASI = ("age", "letter", "member")


@pytest.mark.parametrize("k", [2, 5, 11])
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("mode", ["strict", "relaxed"])
def test_mondrian_release_covers_every_record_k_times(k, seed, mode):
    from sdckit.anonymize.mondrian import mondrian

    table = _people(400, seed)
    release = mondrian(
        table, [KAnonymity(k)], quasi_identifiers=QUASI, hierarchies={"letter": TREE}, mode=mode
    )
    labels = release.table.data
    # Intervals, sets and nodes are all read.
    assert labels.get_column("age").cast(pl.String).str.contains("-").any()
    assert labels.get_column("member").cast(pl.String).str.starts_with("{").any()
    counts = coverage_counts(table.data, labels, QUASI, hierarchies={"letter": TREE})
    assert counts.min() >= k
    # Each record is covered by its own class at least: coverage never counts fewer.
    assert np.all(counts >= release.class_sizes()[np.unique(release.classes, return_inverse=True)[1]])


@pytest.mark.parametrize("k", [2, 5, 11])
@pytest.mark.parametrize("seed", [0, 1])
def test_full_domain_release_covers_every_record_k_times(k, seed):
    from sdckit.anonymize.recoding import full_domain_generalization

    table = _people(400, seed)
    hierarchies = {
        "age": intervals("age", table.column("age"), width=5, bottom=15, fanout=2),
        "letter": TREE,
        "member": ordered("member", table.column("member"), fanout=2),
    }
    release = full_domain_generalization(
        table, [KAnonymity(k)], quasi_identifiers=QUASI, hierarchies=hierarchies, suppression_limit=0.05
    )
    counts = coverage_counts(table.data, release.table.data, QUASI, hierarchies=hierarchies)
    assert counts.min() >= k
    kept = ~release.suppressed_records
    # A record not suppressed is covered by its class and by every suppressed record ('*').
    sizes = np.bincount(release.classes[kept])[release.classes[kept]]
    assert np.all(counts[kept] >= sizes + release.n_suppressed)


def _with_nulls_and_weights(seed: int) -> tuple[Table, np.ndarray]:
    table = _people(300, seed)
    generator = np.random.default_rng(seed + 10)
    data = table.data.with_columns(
        pl.when(pl.lit(generator.random(300) < 0.1)).then(None).otherwise(pl.col("letter")).alias("letter"),
        pl.when(pl.lit(generator.random(300) < 0.05)).then(None).otherwise(pl.col("age")).alias("age"),
    )
    return Table(data, table.schema), generator.choice([0.0, 1.0, 2.5, 4.0], 300)


@pytest.mark.parametrize("missing", ["wildcard", "category"])
@pytest.mark.parametrize("weighted", [False, True])
def test_combined_risk_of_unchanged_release_is_the_original_risk(missing, weighted):
    table, weights = _with_nulls_and_weights(3)
    weights = weights if weighted else None
    direct = combined_risk(table, epsilon=0.01, missing=missing, weights=weights)
    covered = combined_risk(table, epsilon=0.01, missing=missing, weights=weights, original=table)
    np.testing.assert_allclose(covered.risk, direct.risk, rtol=1e-12, atol=0)
    np.testing.assert_array_equal(covered.top_known_set, direct.top_known_set)
    assert covered.known_sets.get_column("combinations").to_list() == (
        direct.known_sets.get_column("combinations").to_list()
    )
    assert covered.parameters["coverage"] is True


def test_combined_risk_of_a_generalized_release_counts_coverage():
    """Two records, the second generalized: an adversary knowing (39, a) matches both released
    records on age (38-40 covers 39) and the first only on letter (g1 covers a, g2 does not)."""
    schema = Schema(
        (
            Attribute("age", Role.QUASI_IDENTIFIER, Kind.NUMERIC, public_probability=0.5),
            Attribute("letter", Role.QUASI_IDENTIFIER, Kind.CATEGORICAL, public_probability=0.5),
            Attribute(
                "flag",
                Role.SENSITIVE,
                Kind.CATEGORICAL,
                public_probability=0.001,
                sensitivity=1,
                value_weights={"Yes": 1, "No": 0},
            ),
        )
    )
    original = Table(pl.DataFrame({"age": [39, 40], "letter": ["a", "c"], "flag": ["Yes", "Yes"]}), schema)
    release = Table(
        pl.DataFrame({"age": ["38-40", "38-40"], "letter": ["g1", "g2"], "flag": ["Yes", "Yes"]}), schema
    )
    result = combined_risk(release, alpha=100, epsilon=0.01, original=original, hierarchies={"letter": TREE})
    # Known sets: {}, {age}, {age, letter}, {letter}; C = 1 (flag) for every set.
    # Record 0: 1/2 + 0.5/2 + 0.25/1 + 0.5/1; record 1 alike (c is under g2 only).
    expected = 100 * (1 / 2 + 0.5 / 2 + 0.25 / 1 + 0.5 / 1)
    assert result.risk.tolist() == pytest.approx([expected, expected])
    assert result.known_sets.get_column("combinations").to_list() == [1, 1, 2, 2]


# The command line -------------------------------------------------------------------------------

CONFIG = """\
attributes:
  age:    {role: quasi-identifier, kind: numeric, public: 0.5,
           hierarchy: {intervals: {width: 5, bottom: 15, top: 85}}}
  letter: {role: quasi-identifier, kind: categorical, public: 0.5, hierarchy: letter.csv}
  member: {role: quasi-identifier, kind: categorical, public: 0.5}
  flag:   {role: sensitive, kind: categorical, public: 0.001, sensitivity: 1, values: {"Yes": 1, "No": 0}}
risk: {alpha: 100, epsilon: 0.01, missing: wildcard}
"""


@pytest.fixture
def released_files(tmp_path):
    from typer.testing import CliRunner

    from sdckit.cli import app

    table = _people(300, 7)
    table.data.write_csv(tmp_path / "original.csv")
    TREE.to_csv(tmp_path / "letter.csv")
    (tmp_path / "config.yaml").write_text(CONFIG)
    result = CliRunner().invoke(
        app,
        [
            "anonymize",
            "mondrian",
            str(tmp_path / "original.csv"),
            "-c",
            str(tmp_path / "config.yaml"),
            "-k",
            "4",
        ]
        + ["-o", str(tmp_path / "release.csv"), "-q"],
    )
    assert result.exit_code == 0, result.output
    return tmp_path


def _invoke(*arguments):
    from typer.testing import CliRunner

    from sdckit.cli import app

    return CliRunner().invoke(app, [str(a) for a in arguments])


def test_cli_combined_risk_of_a_release(released_files):
    import json

    from sdckit.config import load_config

    folder = released_files
    result = _invoke(
        "risk", "combined", folder / "release.csv", "--original", folder / "original.csv",
        "-c", folder / "config.yaml", "--summary", folder / "risk.json", "-o", folder / "scores.csv", "-q",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "release of original.csv" in result.output
    figures = json.loads((folder / "risk.json").read_text())
    assert figures["original"] == str(folder / "original.csv")
    config = load_config(folder / "config.yaml")
    original = config.read(folder / "original.csv")
    release = config.read_release(folder / "release.csv")
    expected = combined_risk(release, original=original)
    assert figures["mean_risk"] == pytest.approx(float(expected.risk.mean()), rel=1e-12)
    scores = pl.read_csv(folder / "scores.csv")
    np.testing.assert_allclose(scores.get_column("risk").to_numpy(), expected.risk, rtol=1e-12)
    # Every record is covered by at least its 4-anonymous class on the three quasi-identifiers.
    reidentification = _invoke(
        "risk", "reidentification", folder / "release.csv", "--original", folder / "original.csv",
        "-c", folder / "config.yaml", "--summary", folder / "reid.json", "-q",
    )  # fmt: skip
    assert reidentification.exit_code == 0, reidentification.output
    reid = json.loads((folder / "reid.json").read_text())
    assert reid["k_anonymity_violations"]["3"]["records"] == 0
    assert reid["prosecutor"]["highest"] <= 1 / 4


def test_cli_unreadable_label_exits_2_naming_attribute_and_label(released_files):
    folder = released_files
    release = pl.read_csv(folder / "release.csv")
    release.with_columns(
        pl.when(pl.int_range(pl.len()) == 5).then(pl.lit("zz")).otherwise(pl.col("letter")).alias("letter")
    ).write_csv(folder / "bad.csv")
    for measure in ("combined", "reidentification"):
        result = _invoke(
            "risk", measure, folder / "bad.csv", "--original", folder / "original.csv",
            "-c", folder / "config.yaml", "--summary", folder / "bad.json", "-q",
        )  # fmt: skip
        assert result.exit_code == 2, result.output
        message = " ".join(result.output.split())
        assert "release column 'letter': label 'zz' cannot be read" in message
        assert not (folder / "bad.json").exists()


@pytest.mark.parametrize("missing", ["wildcard", "category"])
@pytest.mark.parametrize("weighted", [False, True])
def test_reidentification_of_unchanged_release_is_the_original(missing, weighted):
    from sdckit.risk.reidentification import reidentification_risk

    table, weights = _with_nulls_and_weights(4)
    if weighted:
        data = table.data.with_columns(pl.Series("w", weights + 1.0))
        table = Table(data, Schema((*table.schema.attributes, Attribute("w", Role.INSENSITIVE))))
    column = "w" if weighted else None
    direct = reidentification_risk(table, weights=column, missing=missing)
    covered = reidentification_risk(table, weights=column, missing=missing, original=table)
    np.testing.assert_array_equal(covered.fk, direct.fk)
    np.testing.assert_allclose(covered.Fk, direct.Fk, rtol=1e-12)
    np.testing.assert_allclose(covered.risk, direct.risk, rtol=1e-12)
    first, second = covered.summary(), direct.summary()
    for key in ("expected_reidentifications", "sample_uniques", "individual_risk", "higher_risk_records"):
        assert first[key] == pytest.approx(second[key]), key
    assert first["k_anonymity_violations"] == second["k_anonymity_violations"]
    for model in ("prosecutor", "journalist", "marketer"):
        assert first[model] == pytest.approx(second[model]), model
    assert [row["record"] for row in first["riskiest"]] == [row["record"] for row in second["riskiest"]]


def test_reidentification_of_a_generalized_release_counts_coverage():
    from sdckit.risk.reidentification import reidentification_risk

    schema = Schema(
        (
            Attribute("age", Role.QUASI_IDENTIFIER, Kind.NUMERIC, public_probability=0.5),
            Attribute("letter", Role.QUASI_IDENTIFIER, Kind.CATEGORICAL, public_probability=0.5),
        )
    )
    original = Table(pl.DataFrame({"age": [39, 40, 38], "letter": ["a", "b", "c"]}), schema)
    release = Table(pl.DataFrame({"age": ["38-40", "38-40", "35-44"], "letter": ["g1", "g1", "*"]}), schema)
    result = reidentification_risk(release, original=original, hierarchies={"letter": TREE, "age": AGE})
    # (39, a) and (40, b): both g1 records and the '*' record; (38, c): only the '*' record.
    assert result.fk.tolist() == [3, 3, 1]
    assert result.summary()["k_anonymity_violations"]["2"]["records"] == 1
    # As released, the two g1 records form one class of 2 and the third is unique.
    as_released = reidentification_risk(release)
    assert as_released.fk.tolist() == [2, 2, 1]


def test_cli_check_reports_k_as_released_and_as_the_adversary_sees_it(released_files):
    import json

    folder = released_files
    result = _invoke(
        "check", folder / "release.csv", "-c", folder / "config.yaml", "-k", "5",
        "--original", folder / "original.csv", "--summary", folder / "check.json",
    )  # fmt: skip
    assert result.exit_code in (0, 3), result.output
    figures = json.loads((folder / "check.json").read_text())
    seen = figures["as_adversary_sees"]
    config_table = _people(300, 7)
    release = pl.read_csv(folder / "release.csv", infer_schema=False)
    counts = coverage_counts(
        config_table.data, release.with_columns(pl.col("age")), QUASI, hierarchies={"letter": TREE}
    )
    assert seen["k"] == int(counts.min()) >= 4
    assert seen["records_below_k"] == int((counts < 5).sum())
    # As released, the classes of identical labels are at least the 4 Mondrian made; a record's own
    # class covers it, so the adversary's k is never below the released one.
    assert seen["k"] >= figures["k"] >= 4
    assert "as an adversary who knows original.csv sees it" in " ".join(result.output.split())


@pytest.mark.parametrize("missing", ["wildcard", "category"])
def test_null_label_stands_for_a_missing_original_value(missing):
    """The generalization-based methods of the experiment release a missing value as the leaf
    '(missing)' of a hierarchy: that leaf is a released null, and a node holding it covers a null."""
    tree = Hierarchy(
        "letter",
        (("a", "b", "(missing)"), ("ab", "(missing)"), ("*",)),
        np.array([[0, 0, 0], [1, 0, 0], [2, 1, 0]]),
    )
    original = pl.DataFrame({"letter": ["a", None, "b", None]})
    released = pl.DataFrame({"letter": ["ab", "(missing)", "a", "*"]})
    counts = coverage_counts(
        original, released, ["letter"], hierarchies={"letter": tree}, missing=missing, null_label="(missing)"
    )
    if missing == "wildcard":
        # A null original value is covered by everything, '(missing)' covers everything.
        assert counts.tolist() == [4, 4, 3, 4]
    else:
        # 'a': ab, a, *; null: (missing), *; 'b': ab, *.
        assert counts.tolist() == [3, 2, 2, 2]


def test_empty_and_single_record_tables():
    table = _people(10, 1)
    empty = Table(table.data.head(0), table.schema)
    assert coverage_counts(empty.data, empty.data, ["age", "letter"]).shape == (0,)
    assert combined_risk(empty, original=empty).risk.shape == (0,)
    one = Table(table.data.head(1), table.schema)
    assert combined_risk(one, original=one).risk.tolist() == combined_risk(one).risk.tolist()
