"""``sdckit report``: one protection run in words (sdcMicro's ``report()``), internal and external.

The data is the business survey of ``examples/firms.py`` (3,000 units; keys district, activity and
size; numeric employees and turnover), protected by a two-step recipe (local suppression to
3-anonymity, then 15% additive noise on the numeric attributes). The sentences' figures are computed
here again from the files: the uniques with polars, the frequencies of the release (a suppressed value
matches every value, sdcMicro's missing-as-wildcard) by comparing every pair of records.
"""

from __future__ import annotations

import json
import re

import numpy as np
import polars as pl
import pytest
from examples.firms import generate_firms
from typer.testing import CliRunner

from browser import chrome, open_page
from sdckit.cli import app

KEYS = ["district", "activity", "size"]
SEED = 987654
CONFIG = """
attributes:
  unit_id:    {role: identifier}
  enterprise: {role: identifier}
  district:   {role: quasi-identifier}
  activity:   {role: quasi-identifier}
  size:       {role: quasi-identifier, kind: ordinal}
  employees:  {role: insensitive, kind: numeric}
  turnover:   {role: insensitive, kind: numeric}
"""
RECIPE = f"""
steps:
  - {{method: local-suppression, k: 3}}
  - {{method: noise, noise: additive, amount: 15, seed: {SEED}, attributes: [employees, turnover]}}
"""


def invoke(*arguments: object):
    return CliRunner().invoke(app, [str(a) for a in arguments])


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The original, its release, the release's summary and the two reports."""
    folder = tmp_path_factory.mktemp("report")
    original = folder / "firms.csv"
    generate_firms(3_000, seed=1).write_csv(original)
    (folder / "firms.yaml").write_text(CONFIG, encoding="utf-8")
    (folder / "recipe.yaml").write_text(RECIPE, encoding="utf-8")
    release, summary = folder / "release.csv", folder / "release.json"
    done = invoke(
        "protect", original, "-c", folder / "firms.yaml", "-r", folder / "recipe.yaml", "-o", release,
        "--summary", summary, "-q",
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    reports = {}
    for audience in ("internal", "external"):
        path = folder / f"{audience}.html"
        done = invoke(
            "report", original, release, "-c", folder / "firms.yaml", "--recipe", summary,
            "--audience", audience, "-o", path, "-q",
        )  # fmt: skip
        assert done.exit_code == 0, done.output
        reports[audience] = path
    return folder, original, release, summary, reports


def text_of(page: str) -> str:
    """The words of a page: tags removed, entities decoded, spaces collapsed."""
    import html

    body = page[page.index("<body>") :]
    words = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", body)))
    return re.sub(r" ([:;,.)])", r"\1", words)


def frequencies_with_wildcards(frame: pl.DataFrame) -> np.ndarray:
    """fk of every record: the records that agree with it on every key, a missing value agreeing
    with any value (all pairs compared)."""
    codes = np.stack(
        [frame.get_column(key).cast(pl.Categorical).to_physical().fill_null(-1).to_numpy() for key in KEYS],
        axis=1,
    ).astype(np.int64)
    agree = np.ones((len(codes), len(codes)), dtype=bool)
    for j in range(codes.shape[1]):
        a, b = codes[:, j][:, None], codes[:, j][None, :]
        agree &= (a == b) | (a < 0) | (b < 0)
    return agree.sum(axis=1)


def percent(count: float, total: int) -> str:
    return f"{100 * count / total:.1f}%"


def test_the_risk_is_stated_in_words_with_the_figures_of_the_files(run):
    _, original, release, _, reports = run
    before = pl.read_csv(original)
    after = pl.read_csv(release, schema_overrides={"size": pl.String})
    n = before.height
    sizes = before.group_by(KEYS).len()
    uniques = int(sizes.filter(pl.col("len") == 1).height)
    below_three = int(sizes.filter(pl.col("len") < 3).get_column("len").sum())
    expected_before = float(sizes.height)  # Σ 1/fk over the records: one per combination
    fk = frequencies_with_wildcards(after)
    assert after.height == n and uniques > 0 and below_three > uniques
    assert (fk >= 3).all()  # what local suppression with k = 3 promised
    expected_after = float((1.0 / fk).sum())
    for audience in ("internal", "external"):
        words = text_of(reports[audience].read_text(encoding="utf-8"))
        assert (
            f"Before protection, {uniques:,} records ({percent(uniques, n)}) were unique on the keys "
            "(district, activity, size); after, none."
        ) in words, audience
        assert (
            "Records sharing their combination of keys with fewer than 2 others (3-anonymity not met): "
            f"{below_three:,} records ({percent(below_three, n)}) before, none after."
        ) in words
        assert (
            f"Expected re-identifications fell from {expected_before:,.1f} ({percent(expected_before, n)} of "
            f"the records) to {expected_after:,.1f} ({percent(expected_after, n)})."
        ) in words


def test_the_keys_the_methods_and_the_loss_are_named(run):
    _, original, release, summary, reports = run
    after = pl.read_csv(release, schema_overrides={"size": pl.String})
    suppressed = sum(after.get_column(key).null_count() for key in KEYS)
    assert suppressed > 0
    share = percent(suppressed, 3 * after.height)
    for audience in ("internal", "external"):
        words = text_of(reports[audience].read_text(encoding="utf-8"))
        assert "Key variables (quasi-identifiers): district, activity, size" in words
        assert "Direct identifiers: unit_id, enterprise" in words
        assert re.search(
            r"local-suppression: Suppress single values .* noise: Noise on numeric attributes", words
        )
        assert f"{suppressed:,} values of the keys ({share} of them) were suppressed" in words
        assert "Values of employees, turnover were changed by the protection." in words
    internal = text_of(reports["internal"].read_text(encoding="utf-8"))
    numeric = json.loads(summary.read_text(encoding="utf-8"))  # the parameters as the recipe recorded them
    assert numeric["recipe"]["steps"][1]["seed"] == SEED
    for parameter in ("k = 3", "amount = 15", f"seed = {SEED}", "noise = additive"):
        assert parameter in internal
    assert "IL1s (sdcMicro's dUtility IL1s" in internal and "(sdcMicro's eigen)" in internal


def test_the_external_report_shows_no_parameter_and_no_record(run):
    _, original, _, _, reports = run
    internal = reports["internal"].read_text(encoding="utf-8")
    external = reports["external"].read_text(encoding="utf-8")
    parameters = re.findall(r'<li class="parameter">([^<]+)</li>', internal)
    assert len(parameters) >= 6, parameters
    for parameter in parameters:
        assert parameter not in external
    assert str(SEED) not in external and 'class="parameter"' not in external
    # record values: the identifiers and key values of the riskiest records, the numeric extremes
    cells = re.findall(r"<td[^>]*>([^<]+)</td>", internal[internal.index('id="riskiest"') :])
    identifiers = {cell for cell in cells if re.fullmatch(r"U\d{6}", cell)}
    codes = {cell for cell in cells if re.fullmatch(r"[A-Z]\d{3}", cell)}
    assert identifiers and codes
    before = pl.read_csv(original)
    largest = f"{before.get_column('turnover').max():,.0f}"
    assert largest in internal
    for value in identifiers | codes | {largest}:
        assert value not in external, value
    assert "<td" not in external and "<details" not in external


def test_the_internal_report_tabulates_the_keys_frequencies(run):
    _, original, release, _, reports = run
    internal = reports["internal"].read_text(encoding="utf-8")
    before = pl.read_csv(original).get_column("activity").value_counts()
    after = pl.read_csv(release).get_column("activity").value_counts()
    table = internal[internal.index('id="frequencies-activity"') :]
    table = table[: table.index("</table>")]
    rows = re.findall(r"<tr><td[^>]*>([^<]+)</td><td[^>]*>([^<]+)</td><td[^>]*>([^<]+)</td></tr>", table)
    counted = {category: (int(a.replace(",", "")), int(b.replace(",", ""))) for category, a, b in rows}
    expected = {value: (count, 0) for value, count in before.rows()}
    for value, count in after.rows():
        key = "missing" if value is None else value
        expected[key] = (expected.get(key, (0, 0))[0], count)
    assert counted == expected
    assert counted["missing"][1] == pl.read_csv(release).get_column("activity").null_count() > 0
    assert "Frequencies of" not in reports["external"].read_text(encoding="utf-8")


def test_without_a_recipe_the_report_says_the_methods_are_unknown(run, tmp_path):
    folder, original, release, _, _ = run
    path = tmp_path / "plain.html"
    done = invoke("report", original, release, "-c", folder / "firms.yaml", "-o", path, "-q")
    assert done.exit_code == 0, done.output
    words = text_of(path.read_text(encoding="utf-8"))
    assert "No recipe was given: the methods applied are not known to this report." in words


@pytest.mark.parametrize(
    "case", ["missing summary", "summary of another file", "summary of another release", "unknown audience"]
)
def test_bad_input_is_one_message_exit_2_and_no_file(run, tmp_path, case):
    folder, original, release, summary, _ = run
    config = folder / "firms.yaml"
    output = tmp_path / "report.html"
    if case == "missing summary":
        arguments = ["--recipe", tmp_path / "absent.json"]
        expected = "absent.json: no such recipe file"
    elif case == "summary of another file":
        other = tmp_path / "other.csv"
        generate_firms(3_000, seed=2).write_csv(other)
        done = invoke(
            "anonymize", "local-suppression", other, "-c", config, "-k", 3, "-o", tmp_path / "o.csv",
            "--summary", tmp_path / "other.json", "-q",
        )  # fmt: skip
        assert done.exit_code == 0, done.output
        arguments = ["--recipe", tmp_path / "other.json"]
        expected = "--recipe was not made on firms.csv: it was made on other values"
    elif case == "summary of another release":
        release = tmp_path / "half.csv"
        pl.read_csv(run[2]).head(1_500).write_csv(release)
        arguments = ["--recipe", summary]
        expected = "--recipe is the summary of a release of 3,000 records, half.csv has 1,500"
    else:
        arguments = ["--recipe", summary, "--audience", "public"]
        expected = "--audience must be internal or external, got 'public'"
    done = invoke("report", original, release, "-c", config, "-o", output, "-q", *arguments)
    assert done.exit_code == 2, done.output
    assert expected in " ".join(done.output.split()), done.output
    assert not output.exists()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


@pytest.mark.browser
def test_both_reports_render_in_chromium_without_console_errors(run):
    from selenium.webdriver.common.by import By

    _, _, _, _, reports = run
    browser = chrome(console_log=True)
    try:
        headings = {}
        for audience, path in reports.items():
            open_page(browser, path.resolve().as_uri(), until=lambda b: b.find_elements(By.ID, "loss"))
            headings[audience] = [h.text for h in browser.find_elements(By.TAG_NAME, "h2")]
            assert browser.find_element(By.ID, "risk").is_displayed()
            errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
            assert not errors, (audience, errors)
        common = [
            "The data",
            "Key variables and other roles",
            "Disclosure risk",
            "Methods applied",
            "Information loss",
        ]
        assert headings["external"] == common
        assert headings["internal"] == [
            *common,
            "The riskiest key combinations of the release",
            "The riskiest records",
        ]
    finally:
        browser.quit()


def test_the_sentences_of_hand_made_figures():
    from sdckit.evaluate.protection_report import records_in_words, risk_sentences

    assert records_in_words(0, 10) == "none"
    assert records_in_words(1, 10) == "1 record (10.0%)"
    assert records_in_words(1_204, 30_100) == "1,204 records (4.0%)"
    assert records_in_words(1, 1_000_000) == "1 record (0.0001%)"
    before = {
        "records": 10,
        "keys": ["a", "b"],
        "sample_uniques": 1,
        "k_anonymity_violations": {"3": {"records": 4, "percent": 40.0}},
        "expected_reidentifications": 2.5,
    }
    after = {**before, "sample_uniques": 2, "expected_reidentifications": 3.25, "weighted": True}
    assert risk_sentences(before, after) == [
        "Before protection, 1 record (10.0%) was unique on the keys (a, b); after, 2 records (20.0%).",
        "Records sharing their combination of keys with fewer than 2 others (3-anonymity not met): "
        "4 records (40.0%) before, 4 records (40.0%) after.",
        "Expected re-identifications rose from 2.5 (25.0% of the records) to 3.2 (32.5%).",
        "The risks are estimated for the population, with the sampling weights.",
    ]
    same = risk_sentences(before, {**before, "keys": ["a", "b"]})[2]
    assert same == "Expected re-identifications stayed at 2.5 (25.0% of the records)."


def test_the_steps_of_a_summary_or_a_recipe():
    from sdckit.errors import ConfigError
    from sdckit.evaluate.protection_report import check_audience, recipe_steps

    recipe = {"steps": [{"method": "pram", "seed": 7}], "seed": 7}
    assert recipe_steps(None) == (None, None, None)
    assert recipe_steps(recipe) == ([{"method": "pram", "seed": 7}], None, 7)
    protected = {"steps": [{"method": "pram", "summary": {"changed": 3}}], "recipe": recipe}
    assert recipe_steps(protected) == ([{"method": "pram", "seed": 7}], [{"changed": 3}], 7)
    anonymized = {"data": "x.csv", "method": "pram", "changed": 3, "elapsed_seconds": 0.1, "recipe": recipe}
    assert recipe_steps(anonymized) == (
        [{"method": "pram", "seed": 7}],
        [{"method": "pram", "changed": 3}],
        7,
    )
    assert check_audience("external") == "external"
    with pytest.raises(ConfigError, match=r"^audience must be internal or external, got 'public'$"):
        check_audience("public")
