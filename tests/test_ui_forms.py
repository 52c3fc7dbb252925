"""The workbench's generated forms, without a server: fields from parameters objects (widget,
default, bounds, help), values converted as the command line converts them and validated with its
messages, the configuration form written as YAML that the configuration parser reads as meant, and
each line of a configuration message placed next to its field."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import pytest
from pydantic import Field

from sdckit.config import parse_config
from sdckit.errors import ConfigError
from sdckit.params import Finite, MethodParams, Whole
from sdckit.table import Kind, Role
from sdckit.ui.forms import (
    AttributeRow,
    draft_yaml,
    errors_by_field,
    param_fields,
    parse_params,
    rows_from_document,
    setting_errors,
    values_from_form,
)


class Example(MethodParams):
    """A parameters object with one field of each shape a form shows."""

    k: Annotated[Whole, Field(ge=2, description="Smallest class.")] = 5
    share: Annotated[Finite | None, Field(ge=0, le=1, description="A share.")] = None
    mode: Literal["strict", "relaxed"] = Field("strict", description="How.")
    exact: bool = Field(False, description="Exactly.")
    seed: Whole | None = Field(None, description="Random seed.")
    max_rounds: Whole = Field(3, ge=1, description="Rounds.")
    path: Path | None = Field(None, description="A file.")


def test_one_field_per_parameter_with_widget_default_bounds_and_help():
    fields = {f.name: f for f in param_fields(Example)}
    assert list(fields) == list(Example.model_fields)
    k = fields["k"]
    assert (k.label, k.widget, k.default) == ("-k", "text", "5")
    assert k.help == "Smallest class. A whole number ≥ 2. Default: 5."
    assert fields["share"].help == "A share. A number ≥ 0 and ≤ 1. Default: none."
    assert (fields["mode"].widget, fields["mode"].choices) == ("select", ["strict", "relaxed"])
    assert fields["mode"].help == "How. Default: strict."
    assert (fields["exact"].widget, fields["exact"].choices, fields["exact"].default) == (
        "select",
        ["true", "false"],
        "false",
    )
    assert fields["max_rounds"].label == "--max-rounds"
    assert fields["path"].kind == "file path"


def test_values_are_converted_as_the_command_line_converts_options():
    given = values_from_form(
        Example,
        {"k": " 7 ", "share": "0.25", "mode": "relaxed", "exact": "true", "seed": "", "path": "a.csv"},
    )
    assert given == {"k": 7, "share": 0.25, "mode": "relaxed", "exact": True, "path": Path("a.csv")}
    assert values_from_form(Example, {"k": "abc"}) == {"k": "abc"}  # the parameters object says why


def test_bad_values_give_the_parameters_objects_messages_by_field():
    params, errors = parse_params(Example, {"k": "1", "share": "2", "max_rounds": "0"}, "example")
    assert params is None
    assert errors == {
        "k": "-k must be greater than or equal to 2, got 1",
        "share": "--share must be less than or equal to 1, got 2.0",
        "max_rounds": "--max-rounds must be greater than or equal to 1, got 0",
    }
    params, errors = parse_params(Example, {"k": "4", "mode": "relaxed"}, "example")
    assert errors == {} and (params.k, params.mode, params.share) == (4, "relaxed", None)


def test_the_form_is_written_as_the_configuration_it_stands_for():
    rows = [
        AttributeRow(
            "age", settings={"role": "quasi-identifier", "public": "0.5", "hierarchy": "{intervals: [0, 20]}"}
        ),
        AttributeRow("zip code", settings={"role": "quasi-identifier", "hierarchy": "/data/zip.csv"}),
        AttributeRow("flag", settings={"role": "sensitive", "sensitivity": "1", "values": "Yes: 1, No: 0"}),
        AttributeRow("notes"),
        AttributeRow("income", settings={"ranges": "[{min: 0, max: 10, weight: 1}]", "kind": "numeric"}),
    ]
    text, lines = draft_yaml(rows, {"alpha": "50", "missing": "category"}, {"delimiter": ";"})
    config = parse_config(text, source="draft.yaml")
    by_name = {a.name: a for a in config.attributes}
    assert list(by_name) == ["age", "zip code", "flag", "income"]  # nothing set: not written
    assert by_name["age"].role is Role.QUASI_IDENTIFIER and by_name["age"].public_probability == 0.5
    assert by_name["age"].hierarchy == {"intervals": [0, 20]}
    assert by_name["zip code"].hierarchy == "/data/zip.csv"
    assert by_name["flag"].value_weights == {"Yes": 1.0, "No": 0.0} and by_name["flag"].sensitivity == 1.0
    assert by_name["income"].kind is Kind.NUMERIC and by_name["income"].range_weights[0].maximum == 10
    assert (config.risk.alpha, config.risk.missing, config.data.delimiter) == (50.0, "category", ";")
    assert lines == {3: "age", 4: "zip code", 5: "flag", 6: "income", 7: "\x00risk", 8: "\x00data"}
    # a text where a number belongs stays text, so the parser names it
    bad, lines = draft_yaml([AttributeRow("age", settings={"public": "high"})], {}, {})
    with pytest.raises(ConfigError) as raised:
        parse_config(bad, source="draft.yaml")
    assert str(raised.value) == "draft.yaml:3: attribute 'age': public must be a number in [0, 1], got 'high'"


def test_a_loaded_configuration_fills_the_form_with_hierarchy_files_made_absolute(tmp_path):
    document = {
        "attributes": {
            "age": {"role": "quasi-identifier", "public": 0.5, "hierarchy": "age.csv"},
            "flag": {"values": {"Yes": 1}, "hierarchy": {"order": ["a", "b"]}},
        },
        "risk": {"epsilon": 0.02},
        "data": {"weights": "w"},
    }
    attributes, risk, data = rows_from_document(document, tmp_path)
    assert attributes["age"] == {
        "role": "quasi-identifier",
        "public": "0.5",
        "hierarchy": str(tmp_path / "age.csv"),
    }
    assert attributes["flag"] == {"values": '{"Yes": 1}', "hierarchy": '{"order": ["a", "b"]}'}
    assert (risk, data) == ({"epsilon": "0.02"}, {"weights": "w"})


def test_each_line_of_a_message_goes_next_to_its_field():
    message = "\n".join(
        [
            "c.yaml:3: attribute 'age': public must be a number in [0, 1], got 2",
            "c.yaml:4: attribute 'flag': weight of value 'Yes' must be a number in [0, 1], got 3",
            "c.yaml:4: attribute 'flag': unknown key 'publc'; did you mean 'public'?",
            "c.yaml:5: hierarchy for 'zip' (z.csv) does not cover 1 value of the data: '7'",
            "c.yaml:6: risk.alpha must be greater than 1 (the consequence coefficient α > 1), got 1",
            "c.yaml:9: YAML syntax error: found unexpected end of stream",
        ]
    )
    placed = errors_by_field(message, {3: "age", 4: "flag", 5: "zip", 6: "\x00risk", 9: "notes"})
    assert placed == {
        ("age", "public"): message.splitlines()[0],
        ("flag", "values"): message.splitlines()[1],
        ("flag", ""): message.splitlines()[2],
        ("zip", "hierarchy"): message.splitlines()[3],
        ("\x00risk", ""): message.splitlines()[4],
        ("notes", ""): message.splitlines()[5],
    }


def test_the_histogram_counts_are_those_the_png_draws():
    """risk_bins: log-spaced edges over the positive risks (the PNG's), counts per bin (the last
    bin closed, as numpy's and matplotlib's), and the records at 0 that a log axis cannot show."""
    import numpy as np

    from sdckit.evaluate.plots import risk_bins

    bins = risk_bins(np.array([0.0, 0.0, 1.0, 10.0, 100.0, 5.0]), bins=2)
    assert bins["edges"] == pytest.approx([1.0, 10.0, 100.0])
    assert (bins["counts"], bins["zeros"]) == ([2, 2], 2)
    single = risk_bins(np.array([0.5, 0.5]), bins=1)  # one value: from half to twice it
    assert (single["edges"], single["counts"], single["zeros"]) == ([0.25, 1.0], [2], 0)
    assert risk_bins(np.zeros(3)) == {"edges": [], "counts": [], "zeros": 3}


def test_an_attribute_that_is_no_column_stays_and_is_reported_as_the_command_line_reports_it(tmp_path):
    """Opening other data keeps what the configuration says of a column it lacks, with the message
    of ``--config`` next to it; nothing is dropped silently."""
    import polars as pl

    from sdckit.config import load_config
    from sdckit.errors import ConfigError
    from sdckit.ui.session import Session

    pl.DataFrame({"age": [30, 40], "sex": ["F", "M"]}).write_csv(tmp_path / "a.csv")
    pl.DataFrame({"age": [30, 40]}).write_csv(tmp_path / "b.csv")
    session = Session(tmp_path / "wd", warm_up=False)
    session.open_data(str(tmp_path / "a.csv"))
    session.update_config(
        {"attr-0-role": "quasi-identifier", "attr-1-role": "quasi-identifier", "attr-1-public": "0.5"}
    )
    assert session.config is not None and session.config_errors == {}
    session.open_data(str(tmp_path / "b.csv"))
    assert [row.name for row in session.rows] == ["age", "sex"]
    with pytest.raises(ConfigError) as raised:
        load_config(session.config_path).read(tmp_path / "b.csv")
    assert session.config is None
    # the command line's message, less its location in the generated file (issue 32: the page
    # places it at the row instead of citing a file the user never wrote)
    location = f"{session.config_path}:4: "
    assert str(raised.value).startswith(location)
    assert session.field_error("sex", "") == str(raised.value).removeprefix(location)
    assert "unknown attribute 'sex'" in str(raised.value)


def test_the_location_in_the_generated_file_is_left_out_but_not_in_the_users_files():
    message = "\n".join(
        [
            "/wd/config.yaml:3: hierarchy for 'age': width must be above 0, got -2",
            "/wd/config.yaml:4: attribute 'flag': public must be a number in [0, 1], got 2",
            "/data/zip.csv:2: hierarchy for 'zip': row 2 has 3 columns, row 1 has 2",
        ]
    )
    placed = errors_by_field(message, {3: "age", 4: "flag"}, generated="/wd/config.yaml")
    assert placed == {
        ("age", "hierarchy"): "hierarchy for 'age': width must be above 0, got -2",
        ("flag", "public"): "attribute 'flag': public must be a number in [0, 1], got 2",
        ("zip", "hierarchy"): "/data/zip.csv:2: hierarchy for 'zip': row 2 has 3 columns, row 1 has 2",
    }


def test_yaml_typed_in_a_field_is_checked_at_that_field():
    """A brace left open in one attribute's hierarchy: the YAML parser of the whole file reported it
    at the next line, under the next attribute; checked alone it belongs to its own field."""
    rows = [
        AttributeRow(
            "birth_year", settings={"role": "quasi-identifier", "hierarchy": "{intervals: {width: 2}"}
        ),
        AttributeRow("gender", settings={"role": "quasi-identifier", "hierarchy": "/data/gender.csv"}),
        AttributeRow(
            "flag", settings={"values": "Yes: [1, No: 0", "ranges": "[{min: 0, max: 1, weight: 1}]"}
        ),
        AttributeRow("zip", settings={"hierarchy": "{mask: 2, mask: 3}"}),
    ]
    assert setting_errors(rows) == {
        ("birth_year", "hierarchy"): "attribute 'birth_year': hierarchy is not valid YAML, got "
        "'{intervals: {width: 2}': expected ',' or '}', but got '<stream end>' "
        "(while parsing a flow mapping)",
        ("flag", "values"): "attribute 'flag': values is not valid YAML, got 'Yes: [1, No: 0': "
        "expected ',' or ']', but got '}' (while parsing a flow sequence)",
        ("zip", "hierarchy"): "attribute 'zip': hierarchy is not valid YAML, got '{mask: 2, mask: 3}': "
        "key 'mask' appears twice",
    }


def test_the_session_places_a_hierarchy_error_at_its_own_field(tmp_path):
    import polars as pl

    from sdckit.ui.session import Session

    pl.DataFrame({"birth_year": [1990, 1991], "gender": ["F", "M"]}).write_csv(tmp_path / "a.csv")
    session = Session(tmp_path / "wd", warm_up=False)
    session.open_data(str(tmp_path / "a.csv"))
    form = {"attr-0-role": "quasi-identifier", "attr-1-role": "quasi-identifier", "attr-1-public": "0.8"}
    session.update_config({**form, "attr-0-hierarchy": "{intervals: {width: 2}"})
    assert session.config is None
    assert session.config_errors == {
        ("birth_year", "hierarchy"): "attribute 'birth_year': hierarchy is not valid YAML, got "
        "'{intervals: {width: 2}': expected ',' or '}', but got '<stream end>' "
        "(while parsing a flow mapping)"
    }
    session.update_config({**form, "attr-0-hierarchy": "{intervals: {width: -2}}"})
    assert session.config_errors == {
        ("birth_year", "hierarchy"): "hierarchy for 'birth_year': width must be above 0, got -2"
    }
    session.update_config({**form, "attr-0-hierarchy": "{intervals: {width: 2}}"})
    assert session.config is not None and session.config_errors == {}


def test_a_threshold_off_the_axis_is_drawn_at_its_edge_and_the_caption_says_so():
    """The histogram's x axis runs over the positive risks (edges 1 to 100 here, log scale over the
    plot's 660 px from x = 84): a threshold beyond it is drawn at that edge, and said to be."""
    from sdckit.ui.charts import histogram_svg, threshold_caption

    bins = {"edges": [1.0, 10.0, 100.0], "counts": [2, 2], "zeros": 0}
    inside = histogram_svg(bins, 10.0)
    assert 'data-side="inside" x1="414.0"' in inside  # 84 + 660 * log10(10) / log10(100)
    assert threshold_caption(bins, 10.0) == "the dashed line is the threshold 10"
    above = histogram_svg(bins, 1000.0)
    assert 'data-side="right" x1="744.0"' in above and "threshold 1000 (above every risk)" in above
    assert threshold_caption(bins, 1000.0) == (
        "the threshold 1000 is above every risk: its dashed line is drawn at the right edge "
        "(no record is above it)"
    )
    below = histogram_svg(bins, 0.01)
    assert 'data-side="left" x1="84.0"' in below and "threshold 0.01 (below every risk)" in below
    assert threshold_caption(bins, 0.01).startswith("the threshold 0.01 is below every positive risk")
    assert 'class="threshold"' not in histogram_svg(bins, None)
    assert threshold_caption(bins, None) == "no threshold is set"


def test_the_r_u_axes_are_named_in_words_with_the_key_in_a_tooltip():
    from sdckit.ui.charts import ru_map_svg

    points = [{"name": "R1", "risk": 0.1, "loss": 0.2, "on_front": True}]
    drawn = ru_map_svg(points, "linkage.distance.linked_share", "tables.total_variation.two_way_mean")
    assert (
        "<title>linkage.distance.linked_share</title>risk: record linkage: distance-based linkage: "
        "share of records linked to their own original</text>"
    ) in drawn
    assert (
        "<title>tables.total_variation.two_way_mean</title>loss: frequency tables: total variation "
        "distance: two-way tables, mean</text>"
    ) in drawn
