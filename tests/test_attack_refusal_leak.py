"""The refusal leak: against a server whose audit looks at the data (the pairwise audit on the real
query sets, which issue 30 replaced; a stand-in written here over HTTP) every target's dropout is
learned from the refusals alone; the real ``sdckit serve``'s simulatable restriction refuses every
probe (no decision depends on the data) and an exact-answer server refuses none: nothing learned.
Hand-computed on the 40 records of tests/_attack_server.py."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import polars as pl
import pytest
from tests._attack_server import original, records

from sdckit.attack.base import ServerTarget, run_attack
from sdckit.errors import ConfigError

KEY = "naive-key"
K = 5


def _expression(node: Any) -> pl.Expr:
    if isinstance(node, list):
        return pl.all_horizontal([_expression(item) for item in node]) if node else pl.lit(True)
    if "and" in node:
        return pl.all_horizontal([_expression(item) for item in node["and"]])
    if "or" in node:
        return pl.any_horizontal([_expression(item) for item in node["or"]])
    if "not" in node:
        return ~_expression(node["not"])
    assert node["op"] == "=", node
    return pl.col(node["column"]) == node["value"]


class _Naive(BaseHTTPRequestHandler):
    """Exact counts; refused when the query set has fewer than K records (or leaves fewer than K
    out), or differs from an answered one by 0 < |A Δ B| < K records: decided on the data."""

    data = records().with_row_index("_row")
    answered: list[frozenset[int]] = []
    description = {
        "name": "naive",
        "protection": "restriction",
        "records": 40,
        "attributes": [
            {"name": "region", "kind": "categorical"},
            {"name": "age", "kind": "numeric"},
            {"name": "income", "kind": "numeric"},
            {"name": "dropout", "kind": "categorical"},
        ],
        "min_query_set": K,
        "confidential": ["income", "dropout"],
    }

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, status: int, body: Any) -> None:
        raw = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def _authorized(self) -> bool:
        if self.headers.get("Authorization") != f"Bearer {KEY}":
            self._send(401, {"detail": "invalid key for this stand-in server"})
            return False
        return True

    def do_GET(self) -> None:
        if self._authorized():
            found = self.path == "/datasets/naive"
            self._send(200, self.description if found else [{"name": "naive"}])

    def do_POST(self) -> None:
        if not self._authorized():
            return
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        assert body["aggregate"] == "count", body
        chosen = frozenset(self.data.filter(_expression(body["filters"]))["_row"].to_list())
        if len(chosen) < K or 40 - len(chosen) < K:
            self._send(
                403, {"detail": "the query set is too small for this server", "reason": "query_set_size"}
            )
        elif any(0 < len(chosen ^ before) < K for before in self.answered):
            self._send(403, {"detail": "refused by the audit of this server", "reason": "audit"})
        else:
            self.answered.append(chosen)
            self._send(200, {"value": len(chosen)})


@pytest.fixture(scope="module")
def naive():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Naive)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield ServerTarget(f"http://127.0.0.1:{server.server_address[1]}", KEY)
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def served(attack_server):
    return ServerTarget(attack_server.url, attack_server.keys["refusal-leak"])


def test_a_data_dependent_audit_fails(naive):
    # W: a region of 10 records (count answered); the 30 targets outside it; for each, the probe of
    # its dropout is W plus the target (refused: 1 record from W), the other is W itself (answered).
    result = run_attack("refusal-leak", original(), naive, params={"targets": 40, "max_risk": 0.1})
    assert result.details["public_set_answered"] is True
    (region,) = result.details["public_set"].values()
    assert (result.attack.successes, result.attack.trials) == (30, 30)
    # baseline: dropout No (the mode) is right on the 30 targets unless North (10 Yes) is among them
    assert result.baseline is not None and result.baseline.successes == (30 if region == "North" else 20)
    assert result.verdict == "fails"


def test_the_simulatable_restriction_and_an_exact_server_hold(served):
    # restriction k = 5: each probe's exposure is the target alone -> every probe refused, both
    # categories: nothing singled out. k = 1: no refusal at all.
    for dataset in ("restricted", "exact"):
        result = run_attack(
            "refusal-leak", original(), served, params={"dataset": dataset, "targets": 40, "max_risk": 0.15}
        )
        assert (result.attack.successes, result.attack.trials) == (0, 30), dataset
        assert result.verdict == "holds"  # Wilson's upper bound for 0 of 30 is 0.114


def test_numeric_attributes_are_refused(naive):
    with pytest.raises(ConfigError, match="attributes.*income is numeric"):
        run_attack("refusal-leak", original(), naive, params={"attributes": "income"})
