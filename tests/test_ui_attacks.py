"""The workbench's Compare page and attacks, without a browser: the checkboxes generated from the
attack registry, bad choices refused with the command line's message before any job starts, the
compare job (:func:`sdckit.ui.worker.compare`) attacking each release as ``sdckit evaluate --attack``
does, and its results shown beside the R-U map. tests/test_ui.py drives the same page in chromium."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

import numpy as np
import polars as pl
import pytest

pytest.importorskip("fastapi")

from fastapi.testclient import TestClient  # noqa: E402

from sdckit.attack.base import ATTACKS  # noqa: E402
from sdckit.ui.app import _attack_rows, create_app  # noqa: E402
from sdckit.ui.session import Session  # noqa: E402
from sdckit.ui.worker import Reporter, compare  # noqa: E402

PORT = 8765
TOKEN = "t0ken"


@pytest.fixture
def bench(tmp_path):
    rng = np.random.default_rng(4)
    x = np.round(rng.normal(50, 10, 600), 3)
    y = np.round(rng.normal(0, 1, 600), 3)
    pl.DataFrame({"x": x, "y": y}).write_csv(tmp_path / "original.csv")
    noised = {"x": np.round(x + rng.normal(0, 30, 600), 3), "y": np.round(y + rng.normal(0, 3, 600), 3)}
    pl.DataFrame(noised).write_csv(tmp_path / "noised.csv")
    session = Session(tmp_path / "wd", warm_up=False)
    session.open_data(str(tmp_path / "original.csv"))
    session.update_config(
        {
            "attr-0-role": "quasi-identifier",
            "attr-0-kind": "numeric",
            "attr-1-role": "sensitive",
            "attr-1-kind": "numeric",
        }
    )
    assert session.config is not None, session.config_errors
    client = TestClient(create_app(session, TOKEN, PORT), base_url=f"http://127.0.0.1:{PORT}")
    client.cookies.set(f"sdckit-ui-{PORT}", TOKEN)
    return SimpleNamespace(folder=tmp_path, session=session, client=client)


def test_the_compare_page_offers_every_attack_on_releases_from_the_registry(bench):
    page = bench.client.get("/compare").text
    offered = re.findall(r'<input type="checkbox" id="attack-([\w-]+)" name="attack"', page)
    microdata = [spec.name for spec in ATTACKS if spec.inputs == "microdata"]
    assert offered == ["all", *microdata] and "interval-disclosure" in microdata
    servers = [spec.name for spec in ATTACKS if spec.inputs == "server"]
    assert not any(f'id="attack-{name}"' in page for name in servers)
    assert 'for="attack-interval-disclosure"' in page and 'id="attack-max-risk"' in page


@pytest.mark.parametrize(
    ("form", "message"),
    [
        ({"attack": ["intervall-disclosure"]}, "unknown attack &#39;intervall-disclosure&#39;"),
        ({"attack": ["all", "interval-disclosure"]}, "attacks all runs every attack that applies"),
        (
            {"attack": ["interval-disclosure"], "attack-max-risk": "2"},
            "max risk must be a number between 0 and 1",
        ),
        ({"attack-max-risk": "0.1"}, "max risk 0.1 is the threshold of the attacks: choose at least one"),
    ],
)
def test_a_bad_choice_is_refused_and_nothing_runs(bench, form, message):
    response = bench.client.post("/compare", data={"weight": "0.5", **form})
    assert response.status_code == 200 and message in response.text
    assert bench.session.compare_job is None


def test_the_compare_job_attacks_each_release_and_the_page_shows_it_beside_the_map(bench):
    folder = bench.folder
    recipe = folder / "recipe.json"
    recipe.write_text("{}", encoding="utf-8")
    job = folder / "job"
    job.mkdir()
    payload = {
        "config": str(bench.session.config_path),
        "data": str(folder / "original.csv"),
        "releases": [
            {"name": "copy", "path": str(folder / "original.csv"), "recipe": str(recipe)},
            {"name": "noised", "path": str(folder / "noised.csv"), "recipe": str(recipe)},
        ],
        "risk": ["linkage"],
        "utility": ["numeric"],
        "risk_axis": "linkage",
        "loss_axis": "numeric",
        "weight": 0.5,
        "attacks": ["interval-disclosure"],
        "max_risk": 0.1,
    }
    result = compare(payload, job, Reporter(job))
    json.dumps(result)
    rows = _attack_rows(result)
    assert [(row["release"], row["attack"], row["verdict"]) for row in rows] == [
        ("copy", "interval-disclosure", "fails"),
        ("noised", "interval-disclosure", "holds"),
    ]
    assert rows[0]["attack_rate"].endswith("(600 of 600)") and rows[0]["max_risk"] == "0.1"
    assert 'id="attack-results"' in (job / "report.html").read_text()
    # the page, as it shows a finished compare job
    done = SimpleNamespace(
        id="j1",
        title="R-U map of the releases",
        state="done",
        result=lambda: result,
        progress=lambda: {"done": 0, "total": 0, "stage": "done"},
        elapsed=lambda: 1.0,
        error=lambda: None,
    )
    bench.session.compare_job = "j1"
    bench.session.jobs.get = lambda identifier: done if identifier == "j1" else None
    page = bench.client.get("/compare").text
    assert page.index('id="map-heading"') < page.index('id="attacks-heading"')
    table = page[
        page.index('id="attack-results"') : page.index("</table>", page.index('id="attack-results"'))
    ]
    shown = re.findall(
        r'<tr data-release="([^"]+)" data-attack="([^"]+)">.*?class="verdict[^"]*">([^<]+)<', table
    )
    assert shown == [("copy", "interval-disclosure", "fails"), ("noised", "interval-disclosure", "holds")]


def test_all_lists_the_attacks_that_do_not_apply_with_the_reason():
    summary = {
        "releases": [
            {
                "name": "R1",
                "attacks": {
                    "attacks": [],
                    "skipped": {"interval-disclosure": "the release holds no numeric attribute"},
                    "holds": True,
                },
            },
            {"name": "R2"},
        ]
    }
    assert _attack_rows(summary) == [
        {
            "release": "R1",
            "attack": "interval-disclosure",
            "skipped": "the release holds no numeric attribute",
        }
    ]
    assert _attack_rows(None) == []
