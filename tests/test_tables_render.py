"""HTML rendering of protected tables: the grid's cells and classes, hierarchy order, layers of a 3-D
table, escaping, and the page in a real headless chromium."""

from __future__ import annotations

import re

import numpy as np
import polars as pl
import pytest

from browser import chrome, open_page
from sdckit.errors import ConfigError
from sdckit.hierarchy import Hierarchy
from sdckit.table import Table
from sdckit.tabular.base import TableProblem, TableResult, pattern_status
from sdckit.tabular.build import TableSpec, build_table
from sdckit.tabular.model import LinearTable, Protection
from sdckit.tabular.render import render_html, write_html


def suppression(table: LinearTable, primary, secondary, spec=None, figures=None) -> TableResult:
    protection = Protection.of_cells(table.n_cells, primary, upper=1.0)
    suppressed = protection.primary.copy()
    suppressed[list(secondary)] = True
    released = np.where(suppressed, np.nan, table.values)
    return TableResult(
        method="suppress",
        problem=TableProblem(table, protection, None, spec),
        released=released,
        status=pattern_status(protection, suppressed),
        figures=figures if figures is not None else {"cost": 12.5, "optimal": True, "cells": 12},
    )


def cells_of(page: str) -> list[tuple[str, str]]:
    """(class, text) of every data cell of the page."""
    return re.findall(r'<td class="([^"]*)"[^>]*>([^<]*)</td>', page)


def test_a_2d_grid_has_one_cell_per_category_pair_with_status_classes():
    table = LinearTable.from_array([[1, 2, 3], [4, 5, 6]], ("row", "col"))
    # cells in row-major order of the 3 x 4 grid: (1,1)=0, (1,2)=1, (2,1)=4, (2,2)=5
    result = suppression(table, primary=[0], secondary=[1, 4, 5])
    page = render_html(result, "Two by three")
    found = cells_of(page.split('class="figures"')[0])
    assert len(found) == 3 * 4
    classes = [c.split()[0] for c, _ in found]
    assert classes.count("primary") == 1 and classes.count("secondary") == 3
    assert classes.count("published") == 8
    texts = [t for _, t in found]
    assert texts[:4] == ["✕", "✕", "3", "6"]  # first row: suppressed, suppressed, 3, row total 6
    assert texts[-4:] == ["5", "7", "9", "21"]  # the column totals, the grand total last
    header = re.findall(r'<th scope="col">([^<]*)</th>', page)
    assert header == ["1", "2", "3", "Total"]
    assert re.findall(r'<th scope="row">([^<]*)</th>', page) == ["1", "2", "Total"]
    assert "<title>Two by three</title>" in page and "<h1>Two by three</h1>" in page
    assert "<th>cost</th><td>12.5</td>" in page and "<th>optimal</th><td>True</td>" in page
    assert "1 primary, 3 secondary, 4 suppressed" in page
    assert 'class="legend"' in page
    assert "http" not in page and "<script" not in page and "<link" not in page
    # the original values of suppressed cells are not in the page
    assert 'title="row=1, col=1: primary">✕' in page


def test_categories_sort_as_numbers_and_the_total_comes_last():
    table = LinearTable.from_array(np.arange(1, 12, dtype=float).reshape(11, 1), ("n", "one"))
    page = render_html(suppression(table, [], []), "t")
    rows = re.findall(r'<th scope="row">([^<]*)</th>', page)
    assert rows == [*(str(i) for i in range(1, 12)), "Total"]


def test_hierarchy_children_come_before_their_subtotal_and_missing_cells_show_a_dot():
    data = pl.DataFrame(
        {"region": ["n1", "n2", "s1", "s2", "n1"], "sex": ["m", "f", "f", "m", "f"], "x": [1.0, 2, 3, 4, 5]}
    )
    regions = Hierarchy.from_rows("region", [["n1", "N"], ["n2", "N"], ["s1", "S"], ["s2", "S"]])
    spec = TableSpec.of("region", "sex", value="x", hierarchies={"region": regions})
    table = build_table(Table.from_frame(data), spec)
    page = render_html(suppression(table, [], [], spec=spec), "t")
    assert re.findall(r'<th scope="row">([^<]*)</th>', page) == ["n1", "n2", "N", "s1", "s2", "S", "Total"]
    found = cells_of(page)
    assert len(found) == 7 * 3
    empty = [t for c, t in found if c == "empty"]
    assert empty == ["·", "·", "·"]  # n2 x m, s1 x m, s2 x f have no record
    assert table.n_cells == 7 * 3 - 3


def test_a_3d_table_is_one_grid_per_layer_with_the_total_layer_last():
    table = LinearTable.from_array(np.arange(1, 13, dtype=float).reshape(2, 3, 2), ("a", "b", "c"))
    page = render_html(suppression(table, [0], [1]), "three")
    assert re.findall(r"<h2>c = ([^<]*)</h2>", page) == ["1", "2", "Total"]
    assert page.count('<table class="grid">') == 3
    found = cells_of(page)
    assert len(found) == table.n_cells == 3 * 4 * 3
    assert sum(c.startswith("primary") for c, _ in found) == 1


def test_a_1d_table_is_a_single_column_and_four_dimensions_are_refused():
    table = LinearTable.from_array([3.0, 4.0], ("only",))
    page = render_html(suppression(table, [], []), "one")
    assert [t for _, t in cells_of(page)] == ["3", "4", "7"]
    four = LinearTable.from_array(np.ones((2, 2, 2, 2)), ("a", "b", "c", "d"))
    with pytest.raises(ConfigError, match=r"1 to 3 dimensions; this one has 4 \(a, b, c, d\)"):
        render_html(suppression(four, [], []), "four")


def test_labels_and_the_title_are_escaped():
    base = LinearTable.from_array([[1, 2], [3, 4]], ("<i>dim", "b"))
    cells = base.cells.with_columns(pl.col("<i>dim").replace({"1": "<b>&"}))
    table = LinearTable(values=base.values, relations=base.relations, cells=cells, dimensions=base.dimensions)
    page = render_html(suppression(table, [0], [], figures={"note<": "a&b"}), "x < y & z")
    assert "<b>&" not in page and "<i>dim" not in page
    assert '<th scope="row">&lt;b&gt;&amp;</th>' in page
    assert "&lt;i&gt;dim" in page
    assert "<title>x &lt; y &amp; z</title>" in page
    assert "<th>note&lt;</th><td>a&amp;b</td>" in page
    assert 'title="&lt;i&gt;dim=&lt;b&gt;&amp;, b=1: primary"' in page


def test_perturbed_values_are_marked():
    table = LinearTable.from_array([[1, 2], [3, 4]], ("a", "b"))
    released = table.values.copy()
    released[0] = 0.0
    released[2] = 2.0  # (1, Total) rounded from 3
    result = TableResult(
        method="round",
        problem=TableProblem(table, Protection.none(table.n_cells)),
        released=released,
        status=np.full(table.n_cells, "published", dtype=object),
        figures={"base": 2},
    )
    found = cells_of(render_html(result, "rounded"))
    assert [c for c, _ in found][:3] == ["perturbed", "published", "perturbed total"]
    assert [t for _, t in found][:3] == ["0", "2", "2"]


@pytest.mark.browser
def test_the_page_renders_in_chromium(tmp_path):
    from selenium.webdriver.common.by import By

    table = LinearTable.from_array(np.arange(1, 13, dtype=float).reshape(3, 4), ("region", "size"))
    result = suppression(table, primary=[0, 6], secondary=[1, 5])
    path = tmp_path / "table.html"
    write_html(result, path, "Suppressed <table>")
    browser = chrome(console_log=True)
    try:
        open_page(browser, path.resolve().as_uri())
        assert browser.title == "Suppressed <table>"
        primary = browser.find_elements(By.CSS_SELECTOR, "table.grid td.primary")
        secondary = browser.find_elements(By.CSS_SELECTOR, "table.grid td.secondary")
        assert len(primary) == 2 and len(secondary) == 2
        assert {cell.text for cell in primary + secondary} == {"✕"}
        assert len(browser.find_elements(By.CSS_SELECTOR, "table.grid td")) == 4 * 5
        colour = browser.execute_script("return getComputedStyle(arguments[0]).backgroundColor", primary[0])
        assert colour == "rgb(229, 57, 53)"
        colour = browser.execute_script("return getComputedStyle(arguments[0]).backgroundColor", secondary[0])
        assert colour == "rgb(251, 140, 0)"
        assert browser.find_element(By.TAG_NAME, "h1").text == "Suppressed <table>"
        errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
        assert errors == []
    finally:
        browser.quit()
