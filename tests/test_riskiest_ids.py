"""The riskiest-record lists name each record by its identifier too (issue 32 item 6): ``sdckit risk
combined``, ``reidentification`` and ``suda`` on the command line, and the workbench's Measure page,
show the value of the configuration's identifier attribute beside the row number; releases drop
identifiers, so a release measured against its original (``--original``) shows the original's.

The expected riskiest records are computed independently: from the per-record scores the command
writes (``-o``), sorted by risk (ties in record order), and the identifiers looked up in the data
file as written. The identifiers are not in row order, so a row number used as an index would show.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from sdckit.cli import app

runner = CliRunner()
TOP = 5

CONFIG = """attributes:
  person:  {role: identifier}
  age:     {role: quasi-identifier, public: 0.5, sensitivity: 0}
  sex:     {role: quasi-identifier, public: 0.5, sensitivity: 0}
  region:  {role: quasi-identifier, public: 0.3, sensitivity: 0}
  illness: {role: sensitive, public: 0.02, sensitivity: 1}
"""


def make_data(directory: Path) -> Path:
    """40 records (seed 7): three quasi-identifiers, a sensitive flag, and ids in shuffled order. The
    id of one of the riskiest records holds square brackets, which a terminal table must print as
    they are (not as markup) and a page as text."""
    generator = np.random.default_rng(7)
    n = 40
    numbers = generator.permutation(n) + 100
    ids = [f"P{number}" for number in numbers]
    ids[int(np.flatnonzero(numbers == 124)[0])] = "[b]P124"  # the riskiest record of risk combined
    frame = pl.DataFrame(
        {
            "person": ids,
            "age": generator.integers(20, 30, n),
            "sex": generator.choice(["F", "M"], n),
            "region": generator.choice(["north", "south", "east"], n),
            "illness": generator.choice(["Yes", "No"], n, p=[0.3, 0.7]),
        }
    )
    path = directory / "data.csv"
    frame.write_csv(path)
    (directory / "config.yaml").write_text(CONFIG)
    return path


def expected_riskiest(scores: Path, data: Path, risk: str = "risk") -> list[tuple[str, str]]:
    """(record, identifier) of the TOP records of highest ``risk`` in the scores file, ties in record
    order, with identifiers read from the data file."""
    frame = pl.read_parquet(scores)
    if "record" not in frame.columns:  # one row per record, in input order
        frame = frame.with_row_index("record")
    frame = frame.select(pl.col("record").cast(pl.Int64), risk)
    top = frame.sort([risk, "record"], descending=[True, False]).head(TOP)
    ids = pl.read_csv(data, infer_schema=False).get_column("person")
    return [(str(record), ids[record]) for record in top.get_column("record").to_list()]


def listed(output: str, title: str) -> list[tuple[str, str]]:
    """(record, identifier): the first two cells of each row of the terminal table titled
    ``title``."""
    section = output.split(title, 1)[1]
    rows = [line for line in section.splitlines() if line.startswith("│")]
    cells = [[cell.strip() for cell in line.split("│")[1:-1]] for line in rows]
    return [(row[0], row[1]) for row in cells if row[0]]  # a wrapped row's continuation has no record


def test_risk_combined_lists_the_identifiers_of_the_riskiest_records(tmp_path):
    data = make_data(tmp_path)
    scores, summary = tmp_path / "scores.parquet", tmp_path / "risk.json"
    arguments = ["risk", "combined", str(data), "-c", str(tmp_path / "config.yaml"), "--top", str(TOP)]
    result = runner.invoke(app, [*arguments, "-o", str(scores), "--summary", str(summary)])
    assert result.exit_code == 0, result.output
    expected = expected_riskiest(scores, data)
    assert "[b]P124" in dict(expected).values()
    assert listed(result.output, "riskiest records") == expected
    assert "person" in result.output.split("riskiest records", 1)[1].splitlines()[2]  # the header
    document = json.loads(summary.read_text())
    assert document["identifier"] == "person"
    assert [(str(row["record"]), row["identifier"]) for row in document["riskiest"]] == expected


def test_the_ids_of_a_release_are_read_from_its_original(tmp_path):
    """A release drops the identifier: measured alone (--release) it lists row numbers only; measured
    against its original (--original) it names the original's records."""
    data = make_data(tmp_path)
    config = str(tmp_path / "config.yaml")
    release = tmp_path / "release.csv"
    made = runner.invoke(
        app, ["anonymize", "local-suppression", str(data), "-c", config, "-k", "2", "-o", str(release)]
    )
    assert made.exit_code == 0, made.output
    assert "person" not in release.read_text().splitlines()[0]
    scores = tmp_path / "scores.parquet"
    arguments = ["risk", "combined", str(release), "-c", config, "--top", str(TOP), "-o", str(scores)]
    against = runner.invoke(app, [*arguments, "--original", str(data)])
    assert against.exit_code == 0, against.output
    assert listed(against.output, "riskiest records") == expected_riskiest(scores, data)

    alone = runner.invoke(app, [*arguments, "--release", "--summary", str(tmp_path / "alone.json")])
    assert alone.exit_code == 0, alone.output
    header = alone.output.split("riskiest records", 1)[1].splitlines()[2]
    assert "person" not in header and "risk" in header
    document = json.loads((tmp_path / "alone.json").read_text())
    assert "identifier" not in document and "identifier" not in document["riskiest"][0]


@pytest.mark.parametrize(
    ("measure", "title", "risk"),
    [
        ("reidentification", "records of highest individual risk", "individual_risk"),
        ("suda", "riskiest records", None),
    ],
)
def test_reidentification_and_suda_list_the_identifiers(tmp_path, measure, title, risk):
    data = make_data(tmp_path)
    config = str(tmp_path / "config.yaml")
    summary = tmp_path / "s.json"
    arguments = ["risk", measure, str(data), "-c", config, "--top", str(TOP), "--summary", str(summary)]
    scores = tmp_path / "scores.parquet"
    if risk is not None:
        arguments += ["-o", str(scores)]
    result = runner.invoke(app, arguments)
    assert result.exit_code == 0, result.output
    document = json.loads(summary.read_text())
    ids = pl.read_csv(data, infer_schema=False).get_column("person")
    records = [row["record"] for row in document["riskiest"]]
    assert records  # the data has records at risk
    if risk is not None:
        assert [(str(r), ids[r]) for r in records] == expected_riskiest(scores, data, risk)
    shown = listed(result.output, title)
    assert shown == [(str(record), ids[record]) for record in records]
    assert [row["identifier"] for row in document["riskiest"]] == [ids[record] for record in records]


def test_the_workbench_measure_page_shows_the_identifiers(tmp_path):
    """The workbench's measure job (the code its worker process runs) and the Measure page rendered
    from its result: the #riskiest table has the identifier column, with the ids of the records of
    highest risk in the scores the job wrote."""
    pytest.importorskip("jinja2")
    from sdckit.ui.app import _templates
    from sdckit.ui.worker import Reporter, measure

    data = make_data(tmp_path)
    folder = tmp_path / "job"
    folder.mkdir()
    payload = {
        "config": str(tmp_path / "config.yaml"),
        "data": str(data),
        "params": {"combined": {"top": TOP}, "reidentification": {}, "check": {"k": 5}},  # as the page sends
    }
    result = json.loads(json.dumps(measure(payload, folder, Reporter(folder))))  # as result.json holds it
    expected = expected_riskiest(folder / "scores.parquet", data)
    page = (
        _templates()
        .get_template("measure.html")
        .render(
            session=SimpleNamespace(ready=True, data_path=str(data), records=40, config=object()),
            title="Measure the risk",
            current="/measure",
            notice=None,
            forms=[],
            job=None,
            result=result,
            histogram_svg="",
            threshold_caption="",
            checked_k=5,
        )
    )
    table = page.split('id="riskiest"', 1)[1].split("</table>", 1)[0]
    header = table.split("</thead>", 1)[0]
    assert '<th scope="col">record</th><th scope="col">person</th>' in header
    rows = table.split("<tbody>", 1)[1].split("</tr>")[:-1]
    cells = [row.split("<td>")[1:3] for row in rows]
    shown = [(record.removesuffix("</td>"), identifier.removesuffix("</td>")) for record, identifier in cells]
    # the page escapes the ids as text (a bracket is no markup in HTML either)
    assert shown == [
        (record, identifier.replace("&", "&amp;").replace("<", "&lt;")) for record, identifier in expected
    ]
