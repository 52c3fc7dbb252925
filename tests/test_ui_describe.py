"""The workbench's Describe page shows the roles ``sdckit describe`` proposes: in headless chromium
against the real ``sdckit ui`` process (as tests/test_ui.py), and without a browser for the download
of the proposal as a configuration."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

pytest.importorskip("fastapi")

from browser import chrome, open_page, wait_until  # noqa: E402
from sdckit.config import load_config  # noqa: E402
from sdckit.describe import describe_file  # noqa: E402
from test_ui import Workbench  # noqa: E402


def people(n: int = 300) -> pl.DataFrame:
    rng = np.random.default_rng(11)
    return pl.DataFrame(
        {
            "contact": [f"person{k}@example.org" for k in range(n)],
            "age": rng.integers(18, 90, n),
            "sex": rng.choice(["F", "M"], n),
            "zip": [f"{z:05d}" for z in rng.integers(1000, 1100, n)],
            "diagnosis": rng.choice(["flu", "asthma", "diabetes"], n),
            "score": rng.integers(0, 4, n),
        }
    )


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ui-describe")
    people().write_csv(folder / "people.csv")
    server = Workbench(folder)
    driver = chrome()
    server.driver = driver
    yield server
    driver.quit()
    server.stop()
    log = server.log.read_text()
    assert "Traceback" not in log, f"the workbench logged an error:\n{log}"


@pytest.mark.browser
def test_the_describe_page_shows_the_proposed_roles_and_why(bench, tmp_path):
    driver = bench.driver
    open_page(driver, bench.url)
    data = bench.folder / "people.csv"
    field = driver.find_element("id", "data-path")
    field.clear()
    field.send_keys(str(data))
    driver.find_element("id", "open-data").click()
    wait_until(driver, lambda d: d.find_elements("id", "proposals"), "the proposed roles shown")
    expected = {c.name: c for c in describe_file(data).columns}
    rows = driver.find_elements("css selector", "#proposals tbody tr")
    assert [row.get_attribute("data-column") for row in rows] == list(expected)
    for row in rows:
        column = expected[row.get_attribute("data-column")]
        cells = row.find_elements("css selector", "td")
        assert cells[0].text == column.kind and cells[1].text == f"{column.distinct:,}"
        assert cells[2].text == column.role and row.get_attribute("data-role") == column.role
        assert cells[4].text == column.why
    roles = {row.get_attribute("data-column"): row.get_attribute("data-role") for row in rows}
    assert roles == {
        "contact": "identifier",
        "age": "quasi-identifier",
        "sex": "quasi-identifier",
        "zip": "quasi-identifier",
        "diagnosis": "sensitive",
        "score": "insensitive",
    }
    why = driver.find_element("css selector", "#proposal-0 td.why").text
    assert (
        why == "direct identifier: 100% of the values look like e-mail addresses (HIPAA 6: e-mail addresses)"
    )
    # the attribute form is still there, below the proposal
    assert driver.find_elements("id", "config-form")
    with bench.client() as client:
        text = client.get("/download/proposed.yaml").text
    (tmp_path / "proposed.yaml").write_text(text)
    settings = load_config(tmp_path / "proposed.yaml")
    assert {a.name: a.role.value for a in settings.attributes}["contact"] == "identifier"
    assert settings.read(data).data["zip"].to_list() == people()["zip"].to_list()
