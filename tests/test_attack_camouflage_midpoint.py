"""The midpoint attack against a real ``sdckit serve`` with camouflage: an interval 10^-6 wide (in
relative terms) gives every income within the tolerance, a wide one (w = 0.5) none; categories are
never learned (the target's interval is [0, 1] for its category and for a decoy). Hand-computed on
the 40 records of tests/_attack_server.py."""

from __future__ import annotations

import pytest
from tests._attack_server import original

from sdckit.attack.base import ServerTarget, run_attack


@pytest.fixture(scope="module")
def server(attack_server):
    return ServerTarget(attack_server.url, attack_server.keys["camouflage-midpoint"])


def test_narrow_camouflage_fails(server):
    # incomes 1000..2443, tau (median |income|) about 1700: the interval's midpoint is within about
    # 10^-6 of the value, inside tolerance 10^-4: 40 incomes; dropout [0, 1] for Yes and No: none
    result = run_attack(
        "camouflage-midpoint",
        original(),
        server,
        params={"dataset": "narrow", "targets": 40, "tolerance": 1e-4, "max_risk": 0.2},
    )
    assert (result.attack.successes, result.attack.trials) == (40, 80)
    assert result.details["learned_by_attribute"] == {"income": 40, "dropout": 0}
    assert result.verdict == "fails"


def test_wide_camouflage_holds(server):
    # w = 0.5: the value sits uniformly on an asinh-scale interval of length log 3; the midpoint is
    # within 10^-4 of it with probability about 2 * 10^-4 / log 3 per record (under 1% over 40)
    result = run_attack(
        "camouflage-midpoint",
        original(),
        server,
        params={"dataset": "wide", "targets": 40, "tolerance": 1e-4, "max_risk": 0.1},
    )
    assert result.attack.trials == 80
    assert result.attack.successes == 0  # with the fixture's fixed secret (0 or 1 with any other)
    assert result.details["learned_by_attribute"]["dropout"] == 0
    assert result.verdict == "holds"


def test_an_exact_answer_is_its_own_midpoint(server):
    result = run_attack("camouflage-midpoint", original(), server, params={"dataset": "exact", "targets": 40})
    assert (result.attack.successes, result.attack.trials) == (80, 80)
