"""Missing values as members of a hierarchy (issue 32 item 2): the configuration's ``missing`` key
says how a quasi-identifier's missing values generalize, in full-domain generalization and Mondrian.

The running example: ``ethnicity`` with a two-level hierarchy (White, Irish -> European; Chinese,
Indian -> Asian; then ``*``) and ten records: White 2, Irish 2, Chinese 2, Indian 1 and 3 missing.
Every expected release below is worked out by hand in the test's comments; k is checked again
independently, by regrouping the released values with polars (a missing value is a value of its own,
and a record whose quasi-identifiers are all ``*`` is a suppressed record).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from sdckit.anonymize.mondrian import mondrian
from sdckit.anonymize.recoding import full_domain_generalization
from sdckit.cli import app
from sdckit.config import load_config, parse_config
from sdckit.errors import ConfigError
from sdckit.hierarchy import MISSING_LABEL, Hierarchy
from sdckit.models import KAnonymity

HIERARCHY = "White;European;*\nIrish;European;*\nChinese;Asian;*\nIndian;Asian;*\n"
ETHNICITY = ["White", "Irish", None, "White", "Chinese", "Irish", None, "Chinese", "Indian", None]
AGE = [31, 35, 38, 42, 47, 51, 56, 63, 66, 69]


def write(
    directory: Path, missing: str | None, hierarchy: str = HIERARCHY, ethnicity: list[str | None] = ETHNICITY
) -> Path:
    """The data, hierarchy and configuration files; returns the configuration's path."""
    rows = ["ethnicity,age,income"] + [
        f"{'' if value is None else value},{age},{1000 + 10 * i}"
        for i, (value, age) in enumerate(zip(ethnicity, AGE, strict=True))
    ]
    (directory / "data.csv").write_text("\n".join(rows) + "\n")
    (directory / "ethnicity.csv").write_text(hierarchy)
    missing_line = "" if missing is None else f"\n    missing: {missing}"
    (directory / "config.yaml").write_text(
        "attributes:\n"
        "  ethnicity:\n"
        "    role: quasi-identifier\n"
        f"    hierarchy: ethnicity.csv{missing_line}\n"
        "  income: {role: sensitive}\n"
    )
    return directory / "config.yaml"


def table(
    directory: Path, missing: str | None, hierarchy: str = HIERARCHY, ethnicity: list[str | None] = ETHNICITY
):
    return load_config(write(directory, missing, hierarchy, ethnicity)).read(directory / "data.csv")


def smallest_class(released: pl.DataFrame, quasi_identifiers: list[str]) -> int:
    """k of a release, regrouped independently: nulls group together (polars' group_by), and records
    whose quasi-identifiers are all '*' are suppressed (in no class)."""
    text = released.select(pl.col(name).cast(pl.String) for name in quasi_identifiers)
    kept = text.filter(~pl.all_horizontal(pl.col(name).eq_missing("*") for name in quasi_identifiers))
    return int(kept.group_by(quasi_identifiers).len().get_column("len").min())


# The hierarchy --------------------------------------------------------------------------------------


def test_a_hierarchy_file_with_a_row_for_the_missing_value(tmp_path):
    # The row "NA;Unknown;*" is the missing value's (NA is a missing-value token of the data): its leaf
    # becomes the missing leaf, its ancestors are its own.
    data = table(tmp_path, "leaf", HIERARCHY + "NA;Unknown;*\n")
    hierarchy = data.schema["ethnicity"].hierarchy
    assert hierarchy.missing == "leaf"
    assert hierarchy.labels == (
        ("White", "Irish", "Chinese", "Indian", MISSING_LABEL),
        ("European", "Asian", "Unknown"),
        ("*",),
    )
    assert hierarchy.missing_leaf == 4
    codes = hierarchy.leaf_codes(data.column("ethnicity"))
    assert codes.tolist() == [0, 1, 4, 0, 2, 1, 4, 2, 3, 4]
    assert hierarchy.generalized_labels(codes, 0).to_list() == [
        "White", "Irish", None, "White", "Chinese", "Irish", None, "Chinese", "Indian", None,
    ]  # fmt: skip
    assert hierarchy.generalized_labels(codes, 1).to_list()[:3] == ["European", "European", "Unknown"]
    # An empty leaf says the same, and an empty label above it keeps the value missing at that level.
    empty = Hierarchy.from_rows(
        "ethnicity", [["White", "European", "*"], ["", "", "*"]], missing_values=()
    ).with_missing("leaf")
    assert empty.labels == (("White", MISSING_LABEL), ("European", MISSING_LABEL), ("*",))
    assert empty.codes.tolist() == [[0, 0, 0], [1, 1, 0]]


def test_the_three_choices_place_the_missing_leaf():
    base = Hierarchy.from_rows("ethnicity", [row.split(";") for row in HIERARCHY.split()])
    # leaf, generated: missing below the top, the top node '*' at the top.
    leaf = base.with_missing("leaf")
    assert leaf.labels[1] == ("European", "Asian", MISSING_LABEL)
    assert leaf.codes[leaf.missing_leaf].tolist() == [4, 2, 0]
    assert leaf.ncp(1).tolist() == [2 / 5, 2 / 5, 0.0]  # five leaves, the missing one included
    # under Asian: a sibling of Chinese and Indian.
    under = base.with_missing({"under": "Asian"})
    assert under.labels[1] == ("European", "Asian")
    assert under.codes[under.missing_leaf].tolist() == [4, 1, 0]
    assert under.leaf_counts(1).tolist() == [2, 3]
    # suppress: its own node at every level, the top included, charged as the whole domain.
    suppress = base.with_missing("suppress")
    assert suppress.labels[2] == ("*", MISSING_LABEL)
    assert suppress.codes[suppress.missing_leaf].tolist() == [4, 2, 1]
    assert suppress.ncp(0)[4] == 1.0 and suppress.ncp(1)[2] == 1.0 and suppress.ncp(2)[1] == 1.0
    assert suppress.leaves_under(1)[4] == 5.0  # ARX's loss (5 - 1) / (5 - 1) = 1


# Full-domain generalization -------------------------------------------------------------------------

# k = 2 on ethnicity alone. Level 0 fails (Indian is alone), so level 1 is the optimum:
#   leaf:        European 4, Asian 3, missing 3            -> missing released as null
#   under Asian: European 4, Asian 3 + 3 = 6               -> missing released as "Asian"
#   suppress:    European 4, Asian 3, missing 3            -> null, 3 suppressed cells of NCP 1
EXPECTED = {
    "leaf": ["European", "European", None, "European", "Asian", "European", None, "Asian", "Asian", None],
    "{under: Asian}": [
        "European", "European", "Asian", "European", "Asian", "European", "Asian", "Asian", "Asian", "Asian",
    ],
    "suppress": ["European", "European", None, "European", "Asian", "European", None, "Asian", "Asian", None],
}  # fmt: skip


@pytest.mark.parametrize("choice", list(EXPECTED))
def test_generalize_each_choice(tmp_path, choice):
    data = table(tmp_path, choice)
    release = full_domain_generalization(data, [KAnonymity(2)])
    assert release.levels == {"ethnicity": 1}
    released = release.table.data
    assert released.get_column("ethnicity").cast(pl.String).to_list() == EXPECTED[choice]
    assert smallest_class(released, ["ethnicity"]) == (4 if choice == "{under: Asian}" else 3)
    missing = np.array([value is None for value in ETHNICITY])
    if choice == "suppress":
        assert release.suppressed_cells[:, 0].tolist() == missing.tolist()
        assert release.n_suppressed_cells == 3
        # NCP: European and Asian cover 2 of 5 leaves, a suppressed cell 1.
        assert release.cell_penalty[:, 0].tolist() == np.where(missing, 1.0, 0.4).tolist()
    else:
        assert release.n_suppressed_cells == 0
    assert not release.suppressed_records.any()


def test_generalize_two_quasi_identifiers_reaches_k(tmp_path):
    config = write(tmp_path, "leaf")
    text = config.read_text().replace(
        "  income: {role: sensitive}\n",
        "  age: {role: quasi-identifier, hierarchy: {intervals: {width: 10, bottom: 30, top: 70}}}\n"
        "  income: {role: sensitive}\n",
    )
    config.write_text(text)
    data = load_config(config).read(tmp_path / "data.csv")
    for k in (2, 3):
        release = full_domain_generalization(data, [KAnonymity(k)], suppression_limit=0.2)
        released = release.table.data.filter(pl.Series(~release.suppressed_records))
        assert smallest_class(released, ["ethnicity", "age"]) >= k
        assert release.suppressed_records.sum() <= 2


def test_a_suppressed_missing_value_alone_is_suppressed_within_the_limit(tmp_path):
    # One missing value: with suppress it never joins another value, not even at the top, so its
    # record must be suppressed, which the suppression limit has to allow.
    alone = ["White", "Irish", "Indian", "White", "Chinese", "Irish", None, "Chinese", "Indian", "Chinese"]
    data = table(tmp_path, "suppress", ethnicity=alone)
    with pytest.raises(ConfigError, match="cannot be satisfied by any generalization within the suppression"):
        full_domain_generalization(data, [KAnonymity(2)])
    release = full_domain_generalization(data, [KAnonymity(2)], suppression_limit=0.1)
    # Level 0: White 2, Irish 2, Indian 2, Chinese 3 pass, but the missing record, suppressed ('*'),
    # would be alone in its group of '*' records, which must be 2-anonymous too (issue 36). At the
    # top the other nine records are '*' as well: one group of ten.
    assert release.levels == {"ethnicity": 2}
    assert release.suppressed_records.tolist() == [False] * 6 + [True] + [False] * 3
    assert release.table.data.get_column("ethnicity").cast(pl.String).to_list()[6] == "*"


# Mondrian -------------------------------------------------------------------------------------------

# k = 2 on ethnicity alone. The root's children are cut first, then each while its children keep 2:
#   leaf:        European (White 2 | Irish 2), Asian 3 (Indian alone: not cut), missing 3
#   under Asian: European (White 2 | Irish 2), Asian 6 (Chinese 2, Indian 1, missing 3: not cut)
#   suppress:    an implicit root over '*' and the missing node; then as leaf
MONDRIAN = {
    "leaf": ["White", "Irish", None, "White", "Asian", "Irish", None, "Asian", "Asian", None],
    "{under: Asian}": [
        "White",
        "Irish",
        "Asian",
        "White",
        "Asian",
        "Irish",
        "Asian",
        "Asian",
        "Asian",
        "Asian",
    ],
    "suppress": ["White", "Irish", None, "White", "Asian", "Irish", None, "Asian", "Asian", None],
}


@pytest.mark.parametrize("choice", list(MONDRIAN))
def test_mondrian_each_choice(tmp_path, choice):
    data = table(tmp_path, choice)
    release = mondrian(data, [KAnonymity(2)], quasi_identifiers=["ethnicity"])
    released = release.table.data
    assert released.get_column("ethnicity").cast(pl.String).to_list() == MONDRIAN[choice]
    assert smallest_class(released, ["ethnicity"]) == 2
    missing = np.array([value is None for value in ETHNICITY])
    if choice == "suppress":
        assert release.suppressed_cells[:, 0].tolist() == missing.tolist()
        assert release.cell_penalty[missing, 0].tolist() == [1.0, 1.0, 1.0]
    else:
        assert release.n_suppressed_cells == 0


def test_mondrian_cuts_a_number_with_missing_values_along_its_hierarchy(tmp_path):
    # income has no missing value; age gets three, placed by its intervals hierarchy.
    config = write(tmp_path, "leaf")
    config.write_text(
        config.read_text().replace(
            "  income: {role: sensitive}\n",
            "  age:\n"
            "    role: quasi-identifier\n"
            "    hierarchy: {intervals: {width: 10, bottom: 30, top: 70}}\n"
            "    missing: suppress\n"
            "  income: {role: sensitive}\n",
        )
    )
    rows = (tmp_path / "data.csv").read_text().splitlines()
    for index in (1, 5, 9):  # records 0, 4 and 8 lose their age
        value, _, income = rows[index].split(",")
        rows[index] = f"{value},,{income}"
    (tmp_path / "data.csv").write_text("\n".join(rows) + "\n")
    data = load_config(config).read(tmp_path / "data.csv")
    release = mondrian(data, [KAnonymity(2)])
    released = release.table.data
    assert smallest_class(released, ["ethnicity", "age"]) >= 2
    assert release.suppressed_cells[:, 1].tolist() == [i in (0, 4, 8) for i in range(10)]
    age = released.get_column("age").cast(pl.String).to_list()
    # A suppressed age is missing, or '*' where its class mixes it with present ages.
    assert all(age[i] in (None, "*") for i in (0, 4, 8))


# sdckit check reads the release ----------------------------------------------------------------------

runner = CliRunner()


@pytest.mark.parametrize("method", ["generalize", "mondrian"])
@pytest.mark.parametrize("choice", ["leaf", "{under: Asian}", "suppress"])
def test_the_release_is_read_by_check(tmp_path, method, choice):
    config = write(tmp_path, choice)
    out = tmp_path / "out.csv"
    made = runner.invoke(
        app,
        ["anonymize", method, str(tmp_path / "data.csv"), "-c", str(config), "-k", "2", "-o", str(out), "-q"],
    )
    assert made.exit_code == 0, made.output
    expected = {"generalize": EXPECTED, "mondrian": MONDRIAN}[method][choice]
    assert pl.read_csv(out, infer_schema=False).get_column("ethnicity").to_list() == expected
    for missing in ("category", "wildcard"):
        summary = tmp_path / f"check-{missing}.json"
        checked = runner.invoke(
            app,
            [
                "check",
                str(out),
                "-c",
                str(config),
                "-k",
                "2",
                "--missing",
                missing,
                "--summary",
                str(summary),
            ],
        )
        assert checked.exit_code == 0, checked.output
        report = json.loads(summary.read_text())
        k = report["k"] if "k" in report else report["models"]["2-anonymity"]["achieved"]
        # As its own value a missing value forms classes of 3 (4 under Asian in generalize); as a
        # wildcard it matches every record.
        if missing == "category":
            assert k == smallest_class(pl.read_csv(out, infer_schema=False), ["ethnicity"])
        assert k >= 2


# Errors ---------------------------------------------------------------------------------------------


def test_missing_values_without_a_choice_are_refused_naming_the_choices(tmp_path):
    data = table(tmp_path, None)
    for run, method in ((full_domain_generalization, "full-domain generalization"), (mondrian, "Mondrian")):
        with pytest.raises(ConfigError) as error:
            run(data, [KAnonymity(2)])
        message = str(error.value)
        assert (
            f"quasi-identifier 'ethnicity' has 3 missing values; say how {method} generalizes them" in message
        )
        assert "missing: leaf" in message and "missing: {under: NODE}" in message
        assert "missing: suppress" in message
    data_file, config_file, out = (str(tmp_path / name) for name in ("data.csv", "config.yaml", "out.csv"))
    result = runner.invoke(
        app, ["anonymize", "generalize", data_file, "-c", config_file, "-k", "2", "-o", out]
    )
    assert result.exit_code == 2
    assert "'ethnicity' has 3 missing values" in " ".join(result.output.split())
    assert not Path(out).exists()


def test_a_node_that_does_not_exist_is_named_at_the_missing_key(tmp_path):
    config = write(tmp_path, "{under: Asain}")
    with pytest.raises(ConfigError) as error:
        load_config(config).read(tmp_path / "data.csv")
    assert str(error.value) == (
        f"{config}:5: hierarchy for 'ethnicity': missing: under 'Asain': no node 'Asain' in the "
        "hierarchy; did you mean 'Asian'? (nodes: 'European', 'Asian', '*')"
    )
    config = write(tmp_path, "{under: Indian}")
    with pytest.raises(ConfigError, match=r"config.yaml:5: .*'Indian' is a value \(a leaf\), not a node"):
        load_config(config).read(tmp_path / "data.csv")


def test_a_row_for_the_missing_value_needs_the_leaf_choice(tmp_path):
    config = write(tmp_path, "suppress", HIERARCHY + "NA;Unknown;*\n")
    with pytest.raises(ConfigError) as error:
        load_config(config).read(tmp_path / "data.csv")
    assert (
        "ethnicity.csv:5: hierarchy for 'ethnicity': the hierarchy has a row for the missing value, but "
        in str(error.value)
    )
    assert "missing is suppress; say missing: leaf" in str(error.value)
    config = write(tmp_path, "leaf", HIERARCHY + "NA;Unknown;*\n;;*\n")
    with pytest.raises(ConfigError, match=r"ethnicity.csv:6: .*a second row for the missing value .*line 5"):
        load_config(config).read(tmp_path / "data.csv")


@pytest.mark.parametrize(
    ("missing", "message"),
    [
        ("drop", "missing must be leaf, suppress or {under: NODE}, got 'drop'"),
        ("leafs", "missing must be leaf, suppress or {under: NODE}, got 'leafs'; did you mean 'leaf'?"),
        ("{undr: Asian}", "missing has an unknown key 'undr'; did you mean 'under'?"),
        ("{under: }", "missing {under: NODE} needs the label of a node as NODE, got nothing"),
        ("[]", "missing must be leaf, suppress or {under: NODE}, got a list"),
    ],
)
def test_bad_missing_keys_are_named_at_their_line(missing, message):
    text = (
        "attributes:\n"
        "  ethnicity:\n"
        "    role: quasi-identifier\n"
        "    hierarchy: ethnicity.csv\n"
        f"    missing: {missing}\n"
    )
    with pytest.raises(ConfigError) as error:
        parse_config(text, source="study.yaml")
    assert str(error.value).startswith(f"study.yaml:5: attribute 'ethnicity': {message}")


def test_missing_needs_a_hierarchy():
    with pytest.raises(ConfigError) as error:
        parse_config(
            "attributes:\n  ethnicity:\n    role: quasi-identifier\n    missing: leaf\n", source="s.yaml"
        )
    assert str(error.value).startswith(
        "s.yaml:4: attribute 'ethnicity': missing needs a hierarchy: it says where missing values sit"
    )


# Mondrian over partitions ---------------------------------------------------------------------------


@pytest.mark.parametrize("choice", ["leaf", "suppress", None])
def test_distributed_mondrian_places_missing_values(tmp_path, choice):
    from sdckit.anonymize.mondrian import MondrianParams
    from sdckit.scale.dataset import open_dataset
    from sdckit.scale.engine import LocalEngine
    from sdckit.scale.mondrian import run_mondrian

    rng = np.random.default_rng(5)
    n = 600
    values = np.array(["White", "Irish", "Chinese", "Indian"], dtype=object)[rng.integers(0, 4, n)]
    values[rng.random(n) < 0.1] = None
    frame = pl.DataFrame(
        {"ethnicity": pl.Series(values.tolist(), dtype=pl.String), "age": rng.integers(20, 80, n)}
    )
    root = tmp_path / "data"
    root.mkdir()
    for part, start in enumerate(range(0, n, 200)):
        frame.slice(start, 200).write_parquet(root / f"part-{part}.parquet")
    (tmp_path / "ethnicity.csv").write_text(HIERARCHY)
    ethnicity = {"role": "quasi-identifier", "hierarchy": str(tmp_path / "ethnicity.csv")}
    if choice is not None:
        ethnicity["missing"] = choice
    config = parse_config({"attributes": {"ethnicity": ethnicity, "age": {"role": "quasi-identifier"}}})
    dataset = open_dataset(root, chunk_rows=200)
    arguments = (dataset, config, MondrianParams(k=5), LocalEngine(), tmp_path / "work")
    if choice is None:
        n_missing = int(frame.get_column("ethnicity").null_count())
        with pytest.raises(
            ConfigError, match=f"'ethnicity' has {n_missing} missing values; say how Mondrian"
        ):
            run_mondrian(*arguments, fragments=3, sample_rows=300)
        return
    run = run_mondrian(*arguments, fragments=3, sample_rows=300)
    released = pl.concat([pl.read_parquet(part) for part in run.parts], how="vertical")
    assert released.height == n
    assert smallest_class(released, ["ethnicity", "age"]) >= 5
    missing = frame.get_column("ethnicity").is_null()
    # A missing value is released missing, or '*' where a class mixes it with other values.
    shown = released.get_column("ethnicity").cast(pl.String).filter(missing)
    assert shown.is_null().sum() + (shown == "*").sum() == int(missing.sum())
    cells = run.figures["suppressed_cells"]["per_attribute"]["ethnicity"]
    assert cells == (int(missing.sum()) if choice == "suppress" else 0)
