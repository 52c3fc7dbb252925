"""The differencing attack against a real ``sdckit serve``: every value learned from an exact-answer
server (restriction with k = 1), none from the restriction of the docs (k = 5, audited); hand-computed
rates on the 40 records of tests/_attack_server.py."""

from __future__ import annotations

import json

import pytest
from tests._attack_server import original

from sdckit.attack.base import ServerTarget, run_attack
from sdckit.errors import ConfigError


@pytest.fixture(scope="module")
def served(attack_server):
    return attack_server


@pytest.fixture(scope="module")
def server(served):
    return ServerTarget(served.url, served.keys["differencing"])


def test_an_exact_answer_server_fails(server):
    # 40 targets x (income, dropout): sum(income | region) - sum(income | region and not T) is T's
    # income; the dropout indicators' differences are 1 for T's category, 0 for the other: 80 of 80.
    result = run_attack(
        "differencing", original(), server, params={"dataset": "exact", "targets": 40, "max_risk": 0.1}
    )
    assert (result.attack.successes, result.attack.trials) == (80, 80)
    assert result.baseline is not None and result.baseline.successes == 30  # 30 modal dropouts, 0 medians
    assert result.details["learned_by_attribute"] == {"income": 40, "dropout": 40}
    assert result.verdict == "fails"


def test_the_audited_restriction_holds(server):
    # the region (10 records) is answered, the region without T (9) differs from it by one: refused
    result = run_attack(
        "differencing", original(), server, params={"dataset": "restricted", "targets": 40, "max_risk": 0.1}
    )
    assert (result.attack.successes, result.attack.trials) == (0, 80)
    assert result.verdict == "holds"  # Wilson's upper bound for 0 of 80 is 0.046


def test_parameters_are_checked(server):
    with pytest.raises(ConfigError, match="dataset.*reaches 4 datasets"):
        run_attack("differencing", original(), server)
    with pytest.raises(ConfigError, match="attributes.*'age' is not a confidential attribute"):
        run_attack("differencing", original(), server, params={"dataset": "exact", "attributes": "age"})
    with pytest.raises(ConfigError, match="unknown dataset|no dataset"):
        run_attack("differencing", original(), server, params={"dataset": "nowhere"})
    with pytest.raises(ConfigError, match="targets"):
        run_attack("differencing", original(), server, params={"targets": 0})
    with pytest.raises(ConfigError, match="does not apply.*query server"):
        run_attack("differencing", original(), original(), params={"dataset": "exact"})


def test_through_the_command_line(served, tmp_path):
    """sdckit attack ORIGINAL --server URL --key K: exit 3 on the exact server, 0 on the audited one."""
    from typer.testing import CliRunner

    from sdckit.cli import app

    folder = served.config.parent
    status = {}
    for dataset in ("exact", "restricted"):
        summary = tmp_path / f"{dataset}.json"
        result = CliRunner().invoke(
            app,
            ["attack", str(folder / f"{dataset}.csv"), "-c", str(folder / "people.yaml"), "-q"]
            + ["--server", served.url, "--key", served.keys["differencing"], "--attack", "differencing"]
            + ["--set", f"differencing.dataset={dataset}", "--set", "differencing.targets=40"]
            + ["--set", "differencing.max_risk=0.1", "--summary", str(summary)],
        )
        status[dataset] = result.exit_code
        found = json.loads(summary.read_text())
        assert found["release"] == served.url
        assert found["attacks"][0]["attack_rate"]["successes"] == (80 if dataset == "exact" else 0)
    assert status == {"exact": 3, "restricted": 0}
