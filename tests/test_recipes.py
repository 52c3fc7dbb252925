"""Recipes: every release summary records how it was made, and replaying that recipe (or a plan of
several steps) reproduces the release bit for bit."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sdckit.anonymize import METHODS, run_method
from sdckit.cli import app
from sdckit.config import load_config
from sdckit.errors import ConfigError
from sdckit.recipes import fingerprint, load_plan, parse_steps, protect
from test2_data import DATA

runner = CliRunner()

CONFIG = """attributes:
  ZIPCode: {role: quasi-identifier, public: 0.6, sensitivity: 0, hierarchy: {mask: 5}}
  Age:     {role: quasi-identifier, public: 0.6, sensitivity: 0,
            hierarchy: {intervals: [20, 30, 40, 50, 60], fanout: 2}}
  Disease: {role: sensitive, public: 0.02, sensitivity: 1}
"""
SLICING_DATA = "Age,Sex,Zip,Disease\n" + "".join(
    f"{20 + (i * 7) % 40},{'MF'[i % 2]},{47600 + (i * 13) % 9},"
    f"{['flu', 'ulcer', 'cancer', 'bronchitis'][i % 4]}\n"
    for i in range(40)
)
SLICING_CONFIG = "attributes:\n  Age: {kind: numeric}\n  Disease: {role: sensitive}\n"
QS_DATA = """age,gender,state,symptoms
22,M,GA,Coughing;Headache;Sore Throat
25,M,GA,Coughing;Headache
30,F,TX,Headache;Vomiting
35,F,TX,Headache;Sore Throat
"""
QS_CONFIG = """attributes:
  age:      {role: quasi-identifier, kind: numeric}
  gender:   {role: quasi-identifier}
  state:    {role: quasi-identifier}
  symptoms: {role: quasi-sensitive, kind: set-valued}
"""
QS_KNOWLEDGE = (
    "label,items\nFlu,Coughing;Headache;Sore Throat\nHepatitis B,Loss of appetite;Vomiting;Dark urine\n"
)

CENSUS_DATA = "pid,hid,region,district,hsize,nationality\n" + "".join(
    f"p{h}-{m},{h},{'AB'[h // 2 % 2]},{'AB'[h // 2 % 2]}{h % 3},{1 + h % 2},{'XY'[h == 5 and m == 0]}\n"
    for h in range(24)
    for m in range(1 + h % 2)
)
CENSUS_CONFIG = """attributes:
  pid:         {role: identifier}
  hid:         {role: household}
  nationality: {role: quasi-identifier}
"""
#: The shared data sets a method's replay example runs on, by name: ``default`` for the example named
#: ``replay`` (or, without one, ``minimal``), and data set X for an example named ``replay on X``.
DATASETS = {
    "default": (DATA, CONFIG),
    "people": (SLICING_DATA, SLICING_CONFIG),
    "set-valued": (QS_DATA, QS_CONFIG),
    "households": (CENSUS_DATA, CENSUS_CONFIG),
}
#: Shared input files a parameter of an example may name (written beside the data, passed by path).
FILES = {
    "knowledge.csv": QS_KNOWLEDGE,
    "mapping.csv": "attribute,from,to\nDisease,flu,respiratory\nDisease,bronchitis,respiratory\n",
    "key.txt": "a-key-for-the-recipe-test-0123456789",
}


def replay_example(spec) -> tuple[str, dict]:
    """The data set and the parameters of a method's replay run, read from its spec's examples."""
    for name, example in spec.examples.items():
        if name == "replay":
            return "default", dict(example)
        if name.startswith("replay on "):
            return name.removeprefix("replay on "), dict(example)
    return "default", dict(spec.examples.get("minimal", {}))


def _options(spec, example: dict) -> list[str]:
    """The command-line options of an example's parameters (a file named in FILES left as its name,
    for :func:`write_inputs` to pass by path)."""
    from sdckit.cli.anonymize import method_options

    flags = dict(zip(spec.params.model_fields, method_options(spec), strict=False))
    options: list[str] = []
    for name, value in example.items():
        if value is True:
            options.append(flags[name])
        elif isinstance(value, list):  # a list of names, or of lists of names (profiles: "a,b;c")
            items = [",".join(item) if isinstance(item, list) else str(item) for item in value]
            options += [flags[name], (";" if isinstance(value[0], list) else ",").join(items)]
        else:
            options += [flags[name], str(value)]
    return options


def _runs() -> dict[str, tuple[str, str, list[str]]]:
    runs = {}
    for spec in METHODS:
        dataset, example = replay_example(spec)
        runs[spec.name] = (*DATASETS[dataset], _options(spec, example))
    return runs


# method -> (data, config, options) of a run that satisfies what it asks, from every registered
# method's replay example: a new method gets its replay tests with no edit here.
RUNS = _runs()
# Methods whose release cannot be reproduced (dp-noise: OpenDP's samplers cannot be seeded): their
# recipe says so, and a replay is checked for its shape only.
NOT_REPLAYABLE = {
    spec.name
    for spec in METHODS
    if not spec.exact_replay(spec.params.parse(replay_example(spec)[1], method=spec.name))
}


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_inputs(directory: Path, method: str) -> tuple[Path, Path, list[str]]:
    data, config, options = RUNS[method]
    (directory / "data.csv").write_text(data)
    (directory / "config.yaml").write_text(config)
    options = list(options)
    for position, value in enumerate(options):
        if value in FILES:
            (directory / value).write_text(FILES[value])
            options[position] = str(directory / value)
    return directory / "data.csv", directory / "config.yaml", options


def anonymize(method: str, data: Path, config: Path, output: Path, summary: Path, options: list[str]):
    """``sdckit anonymize METHOD DATA -c CONFIG -o OUTPUT --summary SUMMARY OPTIONS``."""
    arguments = [method, str(data), "-c", str(config), "-o", str(output), "--summary", str(summary)]
    return runner.invoke(app, ["anonymize", *arguments, *options])


def test_every_method_has_a_replay_example_on_a_shared_data_set():
    for spec in METHODS:
        dataset, example = replay_example(spec)
        assert dataset in DATASETS, (spec.name, dataset)
        spec.params.parse(example, method=spec.name)
    assert set(RUNS) == set(METHODS.names())


@pytest.mark.slow
@pytest.mark.parametrize("method", list(RUNS))
@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_replaying_the_summary_reproduces_the_release(tmp_path, method, suffix):
    data, config, options = write_inputs(tmp_path, method)
    first, summary = tmp_path / f"first{suffix}", tmp_path / "first.json"
    result = anonymize(method, data, config, first, summary, options)
    assert result.exit_code == 0, result.output
    recipe = json.loads(summary.read_text())["recipe"]
    assert recipe["steps"][0]["method"] == method
    assert recipe["replays_exactly"] is (method not in NOT_REPLAYABLE)
    assert recipe["input"]["rows"] == len(RUNS[method][0].strip().splitlines()) - 1
    assert recipe["config"]["text"] == RUNS[method][1]
    # every parameter is recorded, defaults included (but a parameter added later, which the
    # parameters' omitted_at_default leaves out at its default: the older documents stay as they were)
    params = METHODS.get(method).params
    fields, recorded = {"method", *params.model_fields}, set(recipe["steps"][0])
    assert recorded <= fields and fields - recorded <= set(getattr(params, "omitted_at_default", ()))

    again = tmp_path / f"again{suffix}"
    replay = runner.invoke(
        app, ["protect", str(data), "-c", str(config), "--recipe", str(summary), "-o", str(again)]
    )
    assert replay.exit_code == 0, replay.output
    if method in NOT_REPLAYABLE:
        assert again.stat().st_size > 0
        return
    assert digest(again) == digest(first)


def test_a_three_step_chain_replays_bit_for_bit(tmp_path):
    data, config, _ = write_inputs(tmp_path, "generalize")
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        "steps:\n"
        "  - {method: generalize, k: 2, suppression_limit: 0.1}\n"
        "  - {method: local-suppression, k: 3}\n"
        "  - {method: targeted-suppression, delta: 0.5, repeat: true}\n"
    )
    first, summary = tmp_path / "first.csv", tmp_path / "first.json"
    result = runner.invoke(
        app,
        [
            "protect",
            str(data),
            "-c",
            str(config),
            "--recipe",
            str(plan),
            "-o",
            str(first),
            "--summary",
            str(summary),
        ],
    )
    assert result.exit_code == 0, result.output
    document = json.loads(summary.read_text())
    assert [step["method"] for step in document["steps"]] == [
        "generalize",
        "local-suppression",
        "targeted-suppression",
    ]
    assert [step["method"] for step in document["recipe"]["steps"]] == [
        s["method"] for s in document["steps"]
    ]
    for step in document["steps"]:
        assert {"suppressed_cells", "equivalence_classes", "ncp", "above_threshold"} <= set(step)
    # the threshold defaults to the targeted step's delta; that step leaves nobody above it
    assert document["final"]["risk_threshold"] == 0.5
    assert document["final"]["above_threshold"] == 0
    again = tmp_path / "again.csv"
    replay = runner.invoke(
        app, ["protect", str(data), "-c", str(config), "--recipe", str(summary), "-o", str(again)]
    )
    assert replay.exit_code == 0, replay.output
    assert digest(again) == digest(first)


def test_python_protect_matches_the_steps_run_one_by_one(tmp_path):
    data, config, _ = write_inputs(tmp_path, "generalize")
    settings = load_config(config)
    table = settings.read(data)
    result = protect(
        table, [{"method": "mondrian", "k": 3}, {"method": "local-suppression", "k": 4}], config=settings
    )
    first = run_method("mondrian", table, {"k": 3})
    second = run_method("local-suppression", first.table, {"k": 4})
    assert result.table.data.equals(second.table.data)
    assert result.recipe["steps"][1] == {
        "method": "local-suppression",
        "k": 4,
        "importance": None,
        "missing": "wildcard",
        "strict_importance": False,
        "strata": None,
        "combs": None,
        "combs_k": None,
    }
    assert result.recipe["input"] == fingerprint(table)


def test_a_time_bounded_search_says_it_will_not_replay_exactly(tmp_path):
    data, config, options = write_inputs(tmp_path, "quasi-sensitive")
    options = [o for o in options if o not in ("--node-limit", "1000")]
    summary = tmp_path / "s.json"
    result = anonymize("quasi-sensitive", data, config, tmp_path / "r.csv", summary, options)
    assert result.exit_code == 0, result.output
    recipe = json.loads(summary.read_text())["recipe"]
    assert recipe["replays_exactly"] is False
    assert recipe["steps"][0]["time_limit"] is None and recipe["steps"][0]["node_limit"] is None


@pytest.mark.parametrize(
    ("plan", "message"),
    [
        ("steps: []", "non-empty list"),
        ("steps: [{k: 5}]", "method key"),
        ("steps: [{method: mondrain, k: 5}]", "did you mean mondrian"),
        ("steps: [{method: mondrian, k: 5, delta: 0.1}]", "delta is not a parameter of mondrian"),
        ("steps: [{method: generalize, k: 0}]", "k must be greater than or equal to 1"),
        ("steps: [{method: generalize, k: 2, l: .nan}]", "l must be a finite number"),
        ("steps: [{method: local-suppression}]", "k is required"),
        ("steps: [{method: mondrian, k: 2}]\nextra: 1", "unknown key 'extra'"),
        ("just text", "a recipe must be a mapping"),
    ],
)
def test_bad_plans_name_the_step_and_parameter(tmp_path, plan, message):
    path = tmp_path / "plan.yaml"
    path.write_text(plan)
    with pytest.raises(ConfigError, match=message):
        load_plan(path)


def test_steps_are_validated_before_anything_runs():
    with pytest.raises(ConfigError, match=r"step 2 \(mondrian\): mode must be 'strict' or 'relaxed'"):
        parse_steps([{"method": "generalize", "k": 2}, {"method": "mondrian", "k": 2, "mode": "loose"}])


# sdckit apply ------------------------------------------------------------------------------------

# next year's file: the same values in other combinations (values the hierarchies built from this
# year's data do not list are refused, see below)
NEW_DATA = DATA.replace("47911,55,gastritis", "47911,52,gastritis").replace("47603,38", "47603,36")
UNCOVERED = DATA.replace("47911,55,gastritis", "99999,55,gastritis")


@pytest.mark.parametrize("method", ["generalize", "top-bottom-coding", "mondrian"])
def test_apply_on_the_original_data_reproduces_the_release(tmp_path, method):
    data, config, options = write_inputs(tmp_path, method)
    first, summary = tmp_path / "first.parquet", tmp_path / "first.json"
    result = anonymize(method, data, config, first, summary, options)
    assert result.exit_code == 0, result.output
    assert json.loads(summary.read_text())["recipe"]["transformation"]["method"] == method
    again = tmp_path / "again.parquet"
    applied = runner.invoke(app, ["apply", str(summary), str(data), "-o", str(again)])
    assert applied.exit_code == 0, applied.output
    assert digest(again) == digest(first)


def test_apply_reports_the_models_on_new_data_and_refuses_uncovered_values(tmp_path):
    data, config, options = write_inputs(tmp_path, "generalize")
    summary = tmp_path / "s.json"
    anonymize("generalize", data, config, tmp_path / "r.csv", summary, options)
    new = tmp_path / "new.csv"
    new.write_text(NEW_DATA)
    figures = tmp_path / "applied.json"
    result = runner.invoke(
        app, ["apply", str(summary), str(new), "-o", str(tmp_path / "n.csv"), "--summary", str(figures)]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(figures.read_text())["achieved"]["3-anonymity"] >= 3

    bad = tmp_path / "bad.csv"
    bad.write_text(UNCOVERED)
    out = tmp_path / "b.csv"
    refused = runner.invoke(app, ["apply", str(summary), str(bad), "-o", str(out)])
    assert refused.exit_code == 2
    assert (
        "ZIPCode" in refused.output and "99999" in refused.output and "--unknown suppress" in refused.output
    )
    assert not out.exists()
    suppressed = runner.invoke(
        app,
        [
            "apply",
            str(summary),
            str(bad),
            "-o",
            str(out),
            "--unknown",
            "suppress",
            "--allow-violations",
            "--summary",
            str(figures),
        ],
    )
    assert suppressed.exit_code in (0, 3), suppressed.output
    document = json.loads(figures.read_text())
    assert document["unknown"] == {"ZIPCode": 1, "Age": 0}
    assert document["suppressed_records"] >= 1


def test_export_mappings_writes_one_csv_per_attribute(tmp_path):
    data, config, options = write_inputs(tmp_path, "generalize")
    summary = tmp_path / "s.json"
    anonymize("generalize", data, config, tmp_path / "r.csv", summary, options)
    levels = json.loads(summary.read_text())["levels"]
    folder = tmp_path / "mappings"
    result = runner.invoke(app, ["apply", str(summary), "--export-mappings", str(folder)])
    assert result.exit_code == 0, result.output
    age = (folder / "Age.csv").read_text().splitlines()
    assert age[0] == "original,released"
    if levels["Age"] == 1:
        assert "29,[20-30)" in age or any(line.startswith("29,") for line in age)
    assert {p.name for p in folder.iterdir()} >= {"Age.csv", "ZIPCode.csv"}


def test_apply_refuses_a_recipe_without_a_transformation(tmp_path):
    data, config, options = write_inputs(tmp_path, "local-suppression")
    summary = tmp_path / "s.json"
    anonymize("local-suppression", data, config, tmp_path / "r.csv", summary, options)
    result = runner.invoke(app, ["apply", str(summary), str(data), "-o", str(tmp_path / "x.csv")])
    assert result.exit_code == 2
    assert "holds no learnt transformation" in result.output


def _without_timings(value):
    if isinstance(value, dict):
        return {
            k: _without_timings(v)
            for k, v in value.items()
            if "seconds" not in k and k not in ("timings", "search")
        }
    if isinstance(value, list):
        return [_without_timings(v) for v in value]
    return value


@pytest.mark.slow
@pytest.mark.parametrize("method", list(RUNS))
@pytest.mark.filterwarnings("ignore::sdckit.errors.SdcWarning")
def test_the_command_gives_the_python_api_release_and_figures(tmp_path, method):
    from sdckit.anonymize import Context
    from sdckit.cli.anonymize import method_options
    from sdckit.io import write_table
    from sdckit.recipes import dumps

    data, config, options = write_inputs(tmp_path, method)
    out, summary = tmp_path / "cli.csv", tmp_path / "cli.json"
    result = anonymize(method, data, config, out, summary, options)
    assert result.exit_code == 0, result.output
    spec = METHODS.get(method)
    flags = {flag: name for name, flag in zip(spec.params.model_fields, method_options(spec), strict=False)}
    values, position = {}, 0
    while position < len(options):
        name = flags[options[position]]
        if "bool" in str(spec.params.model_fields[name].annotation):  # a flag: --repeat
            values[name], position = "true", position + 1
        else:
            values[name], position = options[position + 1], position + 2
    settings = load_config(config)
    params = spec.params.parse({name: _typed(spec, name, value) for name, value in values.items()})
    release = run_method(spec, settings.read(data), params, Context(config=settings))
    write_table(spec.released(release), tmp_path / "api.csv")
    if method not in NOT_REPLAYABLE:
        assert digest(tmp_path / "api.csv") == digest(out)
    figures = json.loads(dumps(spec.summary(release)))
    written = json.loads(summary.read_text())
    assert _without_timings({key: written[key] for key in figures}) == _without_timings(figures)


def _typed(spec, name, text):
    annotation = str(spec.params.model_fields[name].annotation)
    if "bool" in annotation:
        return text == "true"
    if "int" in annotation and "Path" not in annotation:
        return int(text)
    if "float" in annotation:
        return float(text)
    return text


def test_a_one_step_protect_run_can_be_applied_and_apply_records_its_recipe(tmp_path):
    data, config, _ = write_inputs(tmp_path, "generalize")
    plan = tmp_path / "plan.yaml"
    plan.write_text("steps: [{method: generalize, k: 3}]\n")
    first, summary = tmp_path / "p.csv", tmp_path / "p.json"
    made = runner.invoke(
        app,
        [
            "protect",
            str(data),
            "-c",
            str(config),
            "--recipe",
            str(plan),
            "-o",
            str(first),
            "--summary",
            str(summary),
        ],
    )
    assert made.exit_code == 0, made.output
    again, applied = tmp_path / "a.csv", tmp_path / "a.json"
    result = runner.invoke(
        app, ["apply", str(summary), str(data), "-o", str(again), "--summary", str(applied)]
    )
    assert result.exit_code == 0, result.output
    assert digest(again) == digest(first)
    recipe = json.loads(applied.read_text())["recipe"]
    assert recipe["steps"][0]["method"] == "generalize"
    assert recipe["applied_to"]["rows"] == 14
    # the applied summary is itself a recipe protect can replay
    replay = runner.invoke(
        app,
        ["protect", str(data), "-c", str(config), "--recipe", str(applied), "-o", str(tmp_path / "r.csv")],
    )
    assert replay.exit_code == 0, replay.output
    assert digest(tmp_path / "r.csv") == digest(first)
