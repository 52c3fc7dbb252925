"""What the HTML report of ``sdckit evaluate`` shows a reader (issue 32): a few screens for three
releases, each measure's figures and each recipe folded, figures named in words with their key in a
tooltip, the axes explained, the individual-risk histogram labelled as what it is, and the original's
riskiest records beside each release's values of them."""

from __future__ import annotations

import io

import numpy as np
import polars as pl
import pytest

from browser import chrome, open_page
from sdckit.config import parse_config
from sdckit.evaluate import evaluate
from sdckit.evaluate.figure_names import figure_label
from sdckit.evaluate.report import render_report, write_report
from sdckit.evaluate.riskiest import riskiest_sample
from test_evaluate import CONFIG, make_files


@pytest.fixture(scope="module")
def three(tmp_path_factory):
    folder = tmp_path_factory.mktemp("report")
    original, _, (banded, noisy) = make_files(folder)
    config = parse_config(CONFIG)
    table = config.read(original)
    releases = [
        ("banded.csv", config.read_release(banded)),
        ("noisy.csv", config.read_release(noisy)),
        ("banded again.csv", config.read_release(banded)),
    ]
    recipes = [{"steps": [{"method": "generalize", "k": 5}], "seed": None}, None, {"steps": []}]
    result = evaluate(table, releases, config=config, utility=["tables"], recipes=recipes)
    report = folder / "report.html"
    write_report(result, report, title="Evaluation of original.csv")
    return table, releases, result, report


def test_the_riskiest_records_are_the_originals_highest_individual_risks(three):
    table, releases, result, _ = three
    risk = result.original.individual_risk
    frame = result.riskiest
    records = frame.get_column("record").unique(maintain_order=True).to_list()
    assert records == np.argsort(-risk, kind="stable")[:5].tolist()
    assert min(risk[records]) >= np.sort(risk)[-5]
    # per record: the original's row first, then each release's, the identifier's value beside them
    assert frame.get_column("file").to_list()[:4] == [
        "original",
        "banded.csv",
        "noisy.csv",
        "banded again.csv",
    ]
    first = frame.filter(pl.col("record") == records[0])
    assert first.get_column("identifier").to_list() == [str(table.data["id"][records[0]])] * 4
    for name, release in [("original", table), *releases]:
        row = first.filter(pl.col("file") == name).row(0, named=True)
        for column in ("age", "sex", "region", "education"):
            value = release.data[column][records[0]]
            assert row[column] == (None if value is None else str(value)), (name, column)


def test_releases_with_other_records_are_left_out_of_the_side_by_side_rows():
    config = parse_config("attributes:\n  a: {role: quasi-identifier}\n  s: {role: sensitive}\n")
    table = config.read(pl.read_csv(io.StringIO("a,s\nx,1\ny,2\nz,3\n")))
    sample = config.read(pl.read_csv(io.StringIO("a,s\nx,1\n")))
    same = config.read(pl.read_csv(io.StringIO("a,s\n*,1\ny,2\n*,3\n")))
    frame = riskiest_sample(table, [("sample", sample), ("same", same)], np.array([0.2, 0.9, 0.5]), size=2)
    assert frame.select("record", "file", "a").rows() == [
        (1, "original", "y"),
        (1, "same", "y"),
        (2, "original", "z"),
        (2, "same", "*"),
    ]
    assert set(frame.get_column("left_out")) == {"sample"}
    assert "identifier" not in frame.columns  # the configuration has none
    assert riskiest_sample(table, [], None) is None


def test_figures_are_named_in_words_with_their_key_in_a_tooltip(three):
    _, _, result, _ = three
    text = render_report(result)
    assert '<span title="journalist.population">journalist attacker: population size assumed</span>' in text
    assert (
        figure_label("distance.kd_tree_records") == "distance-based linkage: records searched with a k-d tree"
    )
    # the axes in words, with what they measure
    assert "frequency tables: total variation distance: two-way tables, mean" in text
    assert "drawn back among the original values they cover" in text
    # each measure's figures and each recipe folded
    assert text.count('<details class="figures"') == 3  # reidentification, linkage, tables
    assert text.count('<details class="recipe">') == 2
    assert "<summary><b>banded.csv</b>: generalize</summary>" in text


def test_the_histogram_of_individual_risk_is_labelled_as_such(three, monkeypatch):
    """The report's histogram is of the individual re-identification risk, not of D(r)."""
    from sdckit.evaluate import plots

    _, _, result, _ = three
    labels = []

    def keep(figure, path, dpi=None):
        labels.append((figure.axes[0].get_xlabel(), figure.axes[0].get_title()))
        figure.savefig(path, format="png")
        plots.pyplot().close(figure)

    monkeypatch.setattr(plots, "save_figure", keep)
    render_report(result)
    assert ("individual re-identification risk (log scale)", "Individual re-identification risk") in labels
    assert not any("D(r)" in label for label, _ in labels)


@pytest.mark.browser
def test_three_releases_fit_in_a_few_screens(three, tmp_path):
    from selenium.webdriver.common.by import By

    _, _, _, report = three
    browser = chrome()
    try:
        open_page(browser, report.resolve().as_uri())
        height = browser.execute_script("return document.documentElement.scrollHeight")
        # the window is 1,280 x 2,000: the report was ~58,000 px with recipes dumped as JSON
        assert height < 4_000, height
        headings = [h.text for h in browser.find_elements(By.TAG_NAME, "h2")]
        assert headings == [
            "Overview", "R-U map", "Disclosure risk", "Information loss", "The riskiest records", "Recipes",
        ]  # fmt: skip
        recipe = browser.find_element(By.CSS_SELECTOR, "details.recipe pre")
        assert not recipe.is_displayed()  # folded until opened
        browser.find_element(By.CSS_SELECTOR, "details.recipe summary").click()
        assert recipe.is_displayed()
        rows = browser.find_elements(By.CSS_SELECTOR, "#riskiest tbody tr")
        assert len(rows) == 5 * 4
        assert browser.save_screenshot(str(tmp_path / "report.png"))
    finally:
        browser.quit()
