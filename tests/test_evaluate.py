"""R-U maps, the combined score, ``sdckit evaluate`` end to end, and its HTML report opened in a real
headless browser (Debian's chromium through chromedriver; ``make test`` installs both)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from browser import chrome, open_page
from sdckit.cli import app
from sdckit.errors import ConfigError
from sdckit.evaluate.report import flatten
from sdckit.evaluate.rumap import RUPoint, pareto_front, ru_score

CONFIG = """
attributes:
  id:        {role: identifier}
  age:       {role: quasi-identifier, kind: numeric}
  sex:       {role: quasi-identifier}
  region:    {role: quasi-identifier}
  education: {role: quasi-identifier}
  income:    {role: insensitive, kind: numeric}
  disease:   {role: sensitive}
"""


def test_pareto_front_keeps_the_points_no_other_beats_on_both():
    points = [
        RUPoint("a", 0.5, 0.1),
        RUPoint("b", 0.3, 0.3),
        RUPoint("c", 0.4, 0.4),  # dominated by b
        RUPoint("d", 0.1, 0.6),
        RUPoint("e", 0.3, 0.3),  # equal to b: neither dominates
        RUPoint("f", 0.5, 0.2),  # dominated by a (same risk, more loss)
        RUPoint("g", float("nan"), 0.0),
    ]
    assert pareto_front(points) == [0, 1, 3, 4]
    assert pareto_front([]) == []


def test_score_weights_loss_and_risk_in_percent():
    assert ru_score(0.2, 0.6) == pytest.approx(40.0)
    assert ru_score(0.2, 0.6, weight=1.0) == pytest.approx(20.0)
    assert ru_score(0.2, 0.6, weight=0.0) == pytest.approx(60.0)
    with pytest.raises(ConfigError, match=r"weight must be between 0 and 1, got 1\.5"):
        ru_score(0.2, 0.6, weight=1.5)


def test_flatten_keeps_scalars_two_levels_deep():
    figures = {"a": 1, "b": {"c": 2.5, "d": {"e": 3}, "f": [1, 2]}, "g": "text", "h": [1]}
    assert dict(flatten(figures)) == {"a": 1, "b.c": 2.5, "g": "text"}


# sdckit evaluate end to end ----------------------------------------------------------------------


def make_files(folder: Path, n: int = 600) -> tuple[Path, Path, list[Path]]:
    rng = np.random.default_rng(7)
    age = rng.integers(18, 80, n)
    frame = pl.DataFrame(
        {
            "id": np.arange(n),
            "age": age,
            "sex": rng.choice(["F", "M"], n),
            "region": rng.choice(["north", "south", "east", "west"], n),
            "education": rng.choice(["primary", "secondary", "tertiary"], n, p=[0.3, 0.5, 0.2]),
            "income": np.round(rng.lognormal(10, 0.5, n), 2),
            "disease": rng.choice(["flu", "cold", "asthma", "none"], n),
        }
    )
    original = folder / "original.csv"
    frame.write_csv(original)
    config = folder / "config.yaml"
    config.write_text(CONFIG)
    # A generalized release: age in 10-year bands, region suppressed for a few records.
    low = (age // 10) * 10
    banded = frame.drop("id").with_columns(
        pl.Series("age", [f"{a}-{a + 9}" for a in low]),
        pl.when(pl.int_range(pl.len()) % 17 == 0).then(None).otherwise(pl.col("region")).alias("region"),
    )
    generalized = folder / "banded.csv"
    banded.write_csv(generalized)
    # A perturbed release: noise on age and income, 20% of education values swapped.
    swap = rng.random(n) < 0.2
    noisy = frame.drop("id").with_columns(
        pl.Series("age", np.round(age + rng.normal(0, 3, n)).astype(int)),
        pl.Series("income", np.round(frame["income"].to_numpy() * rng.normal(1, 0.1, n), 2)),
        pl.Series(
            "education",
            np.where(swap, rng.permutation(frame["education"].to_numpy()), frame["education"].to_numpy()),
        ),
    )
    perturbed = folder / "noisy.csv"
    noisy.write_csv(perturbed)
    return original, config, [generalized, perturbed]


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    folder = tmp_path_factory.mktemp("evaluate")
    original, config, releases = make_files(folder)
    report, summary, ru_map = folder / "report.html", folder / "summary.json", folder / "map.png"
    result = CliRunner().invoke(
        app,
        [
            "evaluate",
            str(original),
            *map(str, releases),
            "--config",
            str(config),
            "--report",
            str(report),
            "--summary",
            str(summary),
            "--ru-map",
            str(ru_map),
            "--quiet",
        ],
    )
    assert result.exit_code == 0, result.output
    return folder, result.output, report, json.loads(summary.read_text()), ru_map


def test_evaluate_measures_every_release_and_maps_them(evaluated):
    folder, output, report, summary, ru_map = evaluated
    names = [item["name"] for item in summary["releases"]]
    assert names == ["banded.csv", "noisy.csv"]
    original = summary["original"]
    assert set(original["risk"]) == {"reidentification", "linkage"}
    assert original["utility"] == {}
    for item in summary["releases"]:
        assert set(item["risk"]) == {"reidentification", "linkage"}
        assert set(item["utility"]) == {"numeric", "tables", "propensity", "classifier"}
    points = {p["name"]: p for p in summary["ru_map"]["points"]}
    for item in summary["releases"]:
        point = points[item["name"]]
        assert point["risk"] == pytest.approx(item["risk"]["linkage"]["distance"]["linked_share"])
        # the default loss axis (issue 32): frequency tables, generalized labels drawn back to the
        # original values they cover (propensity read a mild generalization as 0.87)
        assert summary["ru_map"]["loss"] == "tables.total_variation.two_way_mean"
        assert point["loss"] == pytest.approx(item["utility"]["tables"]["total_variation"]["two_way_mean"])
        assert point["score"] == pytest.approx(50 * point["risk"] + 50 * point["loss"])
    # Each protection lowers the share of correctly linked records below the original's own.
    own = original["risk"]["linkage"]["distance"]["linked_share"]
    assert all(p["risk"] < own for p in points.values())
    # The generalized release merges records: its sample uniques cannot exceed the original's.
    banded = summary["releases"][0]["risk"]["reidentification"]
    assert banded["sample_uniques"] <= original["risk"]["reidentification"]["sample_uniques"]
    assert ru_map.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "banded.csv" in output and "noisy.csv" in output


def test_the_report_is_self_contained(evaluated):
    _, _, report, _, _ = evaluated
    text = report.read_text(encoding="utf-8")
    assert "<script" not in text
    external = re.findall(r"""(?:src|href)\s*=\s*["'](?!data:|#)([^"']+)""", text)
    assert external == [], external
    assert text.count("data:image/png;base64,") == 2  # the R-U map and the risk histogram


def test_bad_input_exits_2_and_writes_nothing(tmp_path):
    original, config, releases = make_files(tmp_path, n=200)
    short = tmp_path / "short.csv"
    pl.read_csv(releases[1]).head(150).write_csv(short)
    report = tmp_path / "r.html"
    cases = [
        ([str(original), str(short)], "150"),
        ([str(original), str(releases[0]), "--risk", "reidentifcation"], "did you mean reidentification"),
        ([str(original), str(releases[0]), "--loss-axis", "tables", "--utility", "numeric"], "--loss-axis"),
        ([str(original), str(releases[0]), "--weight", "2"], "--weight"),
    ]
    for arguments, words in cases:
        result = CliRunner().invoke(
            app, ["evaluate", *arguments, "--config", str(config), "--report", str(report)]
        )
        assert result.exit_code == 2, (arguments, result.output)
        assert words in " ".join(result.output.split()), (words, result.output)
        assert not report.exists()


# The report in a real browser --------------------------------------------------------------------


@pytest.mark.browser
def test_the_report_renders_in_chromium(evaluated, tmp_path):
    from selenium.webdriver.common.by import By

    _, _, report, summary, _ = evaluated
    browser = chrome()
    try:
        # read once every image is decoded (a loaded machine decodes late)
        every_image = "return Array.from(document.images).every(image => image.complete)"
        open_page(browser, report.resolve().as_uri(), until=lambda b: b.execute_script(every_image))
        assert browser.title.startswith("Evaluation of original.csv")
        for image_id in ("ru-map", "risk-histogram"):
            image = browser.find_element(By.ID, image_id)
            width = browser.execute_script("return arguments[0].complete && arguments[0].naturalWidth", image)
            assert width and width > 300, image_id
            assert image.is_displayed()
        headings = [h.text for h in browser.find_elements(By.TAG_NAME, "h2")]
        assert headings[:4] == ["Overview", "R-U map", "Disclosure risk", "Information loss"]
        overview = browser.find_element(By.TAG_NAME, "table").text
        for item in summary["releases"]:
            assert item["name"] in overview
        shot = tmp_path / "report.png"
        assert browser.save_screenshot(str(shot))
        assert shot.stat().st_size > 10_000
    finally:
        browser.quit()
