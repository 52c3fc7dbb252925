"""Denning's general tracker against a real ``sdckit serve``: every value learned from an exact-answer
server (restriction with k = 1), none from the audited restriction (k = 5); hand-computed rates on the
40 records of tests/_attack_server.py."""

from __future__ import annotations

import pytest
from tests._attack_server import original

from sdckit.attack.base import ServerTarget, run_attack


@pytest.fixture(scope="module")
def server(attack_server):
    return ServerTarget(attack_server.url, attack_server.keys["tracker"])


def test_an_exact_answer_server_fails(server):
    # the tracker: regions of 10 records, the most frequent first until half are in -> two regions
    # (20 records, exactly half); q(C or Tr) + q(C or not Tr) - q(Tr) - q(not Tr) = q(C): 80 of 80
    result = run_attack(
        "tracker", original(), server, params={"dataset": "exact", "targets": 40, "max_risk": 0.1}
    )
    assert result.details["tracker"]["attribute"] == "region"
    assert len(result.details["tracker"]["categories"]) == 2
    assert (result.attack.successes, result.attack.trials) == (80, 80)
    assert result.baseline is not None and result.baseline.successes == 30
    assert result.verdict == "fails"


def test_the_audited_restriction_holds(server):
    # C or not-Tr (or C or Tr) differs from the answered not-Tr (Tr) by the target alone: refused
    result = run_attack(
        "tracker", original(), server, params={"dataset": "restricted", "targets": 40, "max_risk": 0.1}
    )
    assert (result.attack.successes, result.attack.trials) == (0, 80)
    assert result.verdict == "holds"


def test_a_subset_of_targets_and_attributes(server):
    # 5 targets drawn by the seed, income only: 5 of 5; the baseline (median income) 0 of 5
    result = run_attack(
        "tracker", original(), server, params={"dataset": "exact", "targets": 5, "attributes": "income"}
    )
    assert (result.attack.successes, result.attack.trials) == (5, 5)
    assert result.baseline is not None and result.baseline.successes == 0
    assert result.details["attributes"] == ["income"]
