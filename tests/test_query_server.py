"""The query server for real: ``sdckit serve`` in a subprocess on 127.0.0.1 (a free port), keys made
with ``sdckit keys``, requests over HTTP (httpx, :class:`sdckit.query.Client`, ``sdckit query``).

What the issue asks the server to show: no key or a wrong one is 401; a query over budget is refused
and spends nothing; the budget left survives SIGKILL of the server; 20 simultaneous requests on a
budget for 10 get exactly 10 answers, and the ledger holds exactly what they were told they spent;
bad input (malformed JSON, unknown columns, injection attempts in names and values, oversized
bodies) is a 4xx with one clear sentence, never a 500; the restriction and camouflage datasets answer
through HTTP as the engine says. The statistics of the protections are tested in the engine's tests.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import polars as pl
import pytest

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

EPSILON = 0.125  # exact in binary: ten spends add up to 1.25 exactly
BUDGET = 1.3  # room for ten spends of EPSILON, not eleven
MIN_QUERY_SET = 10

SERVER_YAML = f"""\
store: ledger.sqlite
max_body_bytes: 32768
datasets:
  students:
    data: example.csv
    config: example.yaml
    protection: dp
    budget: {BUDGET}
    bounds: {{birth_year: [1980, 2006]}}
    domains: {{gender: [F, M], ethnicity: [White, Black, Hispanic, Asian, American Indian]}}
  students_restricted:
    data: example.csv
    config: example.yaml
    protection: restriction
    min_query_set: {MIN_QUERY_SET}
  students_camouflage:
    data: example.csv
    config: example.yaml
    protection: camouflage
    width: 0.1
"""

ANALYSTS = ("alice", "over", "crash", "burst", "attacker", "mallory", "cli")


class Server:
    """``sdckit serve`` as a subprocess; ``url`` once it answers."""

    def __init__(self, config: Path, log: Path) -> None:
        self.config = config
        self.log = log
        self.process: subprocess.Popen | None = None
        self.url = ""

    def start(self, timeout: float = 60.0) -> None:
        environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), str(ROOT)])}
        arguments = ["serve", "--config", str(self.config), "--host", "127.0.0.1", "--port", "0"]
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-c", f"from sdckit.cli import main; main({arguments!r})"],
                stdout=subprocess.PIPE,
                stderr=log,
                env=environment,
                cwd=self.config.parent,
            )
        line = self.process.stdout.readline().decode()  # "serving ... on http://127.0.0.1:PORT ..."
        found = re.search(r"on (http://127\.0\.0\.1:\d+)", line)
        assert found, f"sdckit serve printed {line!r}; its log:\n{self.log.read_text()}"
        self.url = found.group(1)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process.poll() is None, f"the server died:\n{self.log.read_text()}"
            try:
                if httpx.get(f"{self.url}/openapi.json", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.1)
        raise AssertionError(f"the server did not answer in {timeout} s:\n{self.log.read_text()}")

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)
        self.process.stdout.close()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process is not None:
            self.process.stdout.close()


def cli(*arguments: str) -> tuple[int, str, str]:
    """Run an ``sdckit`` command in this process: exit status, stdout, stderr."""
    from typer.testing import CliRunner

    from sdckit.cli import app

    result = CliRunner().invoke(app, list(arguments))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    from examples.generate import main as generate

    folder = tmp_path_factory.mktemp("served")
    assert generate(["--records", "2000", "--seed", "1", "--output", str(folder / "example.csv")]) == 0
    shutil.copy(ROOT / "examples" / "example.yaml", folder / "example.yaml")
    config = folder / "server.yaml"
    config.write_text(SERVER_YAML, encoding="utf-8")
    keys = {}
    for name in (*ANALYSTS, "eve"):
        status, out, err = cli("keys", "add", name, "--config", str(config))
        assert status == 0, err
        keys[name] = out.strip()
    assert cli("keys", "revoke", "eve", "--config", str(config))[0] == 0
    server = Server(config, folder / "server.log")
    server.start()
    server.keys = keys
    server.data = pl.read_csv(folder / "example.csv", infer_schema_length=0).with_columns(
        pl.col("birth_year").cast(pl.Int64)
    )
    yield server
    server.stop()
    log = server.log.read_text()
    assert "Traceback" not in log, f"the server logged an error:\n{log}"


def call(server, analyst: str, method: str, path: str, **options) -> httpx.Response:
    headers = {"Authorization": f"Bearer {server.keys[analyst]}"} if analyst else {}
    return httpx.request(method, server.url + path, headers=headers, timeout=30, **options)


def ask(server, analyst: str, dataset: str, body) -> httpx.Response:
    return call(server, analyst, "POST", f"/datasets/{dataset}/query", json=body)


def count(epsilon: float | None = EPSILON, **extra) -> dict:
    body = {"aggregate": "count", "column": None, "filters": [], "group_by": []}
    if epsilon is not None:
        body["epsilon"] = epsilon
    return {**body, **extra}


def left(server, analyst: str) -> float:
    response = call(server, analyst, "GET", "/budget/students")
    assert response.status_code == 200, response.text
    return response.json()["left"]


def assert_clear_4xx(response: httpx.Response, status: int | None = None, *words: str) -> str:
    assert 400 <= response.status_code < 500, (response.status_code, response.text)
    if status is not None:
        assert response.status_code == status, (response.status_code, response.text)
    detail = response.json()["detail"]
    assert isinstance(detail, str) and 10 <= len(detail) <= 400, detail
    for word in words:
        assert word.lower() in detail.lower(), (word, detail)
    return detail


# Keys -------------------------------------------------------------------------------------------


def test_missing_wrong_and_revoked_keys_get_401(served):
    for headers, words in (
        ({}, "missing"),
        ({"Authorization": "Bearer not-a-key"}, "invalid"),
        ({"Authorization": f"Basic {served.keys['alice']}"}, "bearer"),
        ({"Authorization": f"Bearer {served.keys['eve']}"}, "revoked"),
    ):
        for method, path in (("GET", "/datasets"), ("GET", "/budget/students")):
            response = httpx.request(method, served.url + path, headers=headers)
            assert_clear_4xx(response, 401, words)
            assert response.headers["www-authenticate"] == "Bearer"
        response = httpx.post(served.url + "/datasets/students/query", json=count(), headers=headers)
        assert_clear_4xx(response, 401)
    # the key is checked before the body is read: no hint about the query without a key
    response = httpx.post(served.url + "/datasets/students/query", content=b"{not json")
    assert_clear_4xx(response, 401)
    assert httpx.get(served.url + "/openapi.json").json()["paths"]
    assert httpx.get(served.url + "/docs").status_code == 200


def test_keys_commands(served):
    status, _, err = cli("keys", "add", "alice", "--config", str(served.config))
    assert status == 2 and "alice" in err
    status, out, _ = cli("keys", "list", "--config", str(served.config))
    assert status == 0 and "alice" in out and "revoked" in out
    status, _, err = cli("keys", "revoke", "nobody", "--config", str(served.config))
    assert status == 2 and "nobody" in err


def test_datasets_and_schema(served):
    response = call(served, "alice", "GET", "/datasets")
    assert response.status_code == 200
    names = {entry["name"] for entry in response.json()}
    assert names == {"students", "students_restricted", "students_camouflage"}
    described = call(served, "alice", "GET", "/datasets/students").json()
    assert "S0000001" not in str(described)  # the schema and declared domains, never records
    assert_clear_4xx(call(served, "alice", "GET", "/datasets/nope"), 404, "nope")
    assert_clear_4xx(call(served, "alice", "GET", "/budget/nope"), 404, "nope")
    assert_clear_4xx(call(served, "alice", "GET", "/nowhere"), 404, "endpoint")
    assert_clear_4xx(call(served, "alice", "GET", "/datasets/students%27%3B%20DROP%20TABLE%20spends"), 404)
    assert_clear_4xx(call(served, "alice", "POST", "/datasets/" + "x" * 5000 + "/query", json=count()), 404)
    assert_clear_4xx(call(served, "alice", "DELETE", "/datasets/students"), 405, "not allowed")
    long_key = {"Authorization": "Bearer " + "k" * 10_000}
    assert_clear_4xx(httpx.get(served.url + "/datasets", headers=long_key), 401)


# Budget -----------------------------------------------------------------------------------------


def test_a_query_over_budget_is_refused_and_spends_nothing(served):
    answered = ask(served, "over", "students", count(epsilon=1.0))
    assert answered.status_code == 200, answered.text
    before = left(served, "over")
    assert before == pytest.approx(BUDGET - answered.json()["epsilon_spent"])
    refused = ask(served, "over", "students", count(epsilon=0.5))
    assert_clear_4xx(refused, 403)
    assert refused.json()["reason"] == "budget"
    assert left(served, "over") == before


def test_the_budget_survives_sigkill(served):
    for _ in range(3):
        assert ask(served, "crash", "students", count()).status_code == 200
    before = call(served, "crash", "GET", "/budget/students").json()
    served.kill()
    served.start()
    assert call(served, "crash", "GET", "/budget/students").json() == before
    assert before["left"] == pytest.approx(BUDGET - 3 * EPSILON)


def test_twenty_concurrent_requests_on_a_budget_for_ten(served):
    start = threading.Barrier(20)
    responses: list[httpx.Response] = []
    lock = threading.Lock()

    def one() -> None:
        with httpx.Client(timeout=60) as client:
            start.wait()
            response = client.post(
                served.url + "/datasets/students/query",
                json=count(),
                headers={"Authorization": f"Bearer {served.keys['burst']}"},
            )
        with lock:
            responses.append(response)

    threads = [threading.Thread(target=one) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    statuses = sorted(response.status_code for response in responses)
    assert statuses == [200] * 10 + [403] * 10, [r.text for r in responses if r.status_code not in (200, 403)]
    told = sum(r.json()["epsilon_spent"] for r in responses if r.status_code == 200)
    budget = call(served, "burst", "GET", "/budget/students").json()
    assert budget["spent"] == pytest.approx(told, abs=1e-12)
    assert told == pytest.approx(10 * EPSILON)
    assert all(r.json()["reason"] == "budget" for r in responses if r.status_code == 403)


# Bad input --------------------------------------------------------------------------------------


def test_bad_input_is_a_clear_4xx_never_a_500(served):
    headers = {"Authorization": f"Bearer {served.keys['mallory']}"}
    url = served.url + "/datasets/students/query"
    raw = [
        (b"{not json", 400, "json"),
        (b"", 400, "empty"),
        (b"[1, 2]", 422, "object"),
        (b'{"aggregate": "count", "epsilon": NaN}', 400, "nan"),
        (b"\xff\xfe", 400, "utf-8"),
        (b'{"filters": ' + b"[" * 5000 + b"]" * 5000 + b"}", 400, "nested"),
    ]
    for content, status, word in raw:
        assert_clear_4xx(httpx.post(url, content=content, headers=headers), status, word)
    spent_before = left(served, "mallory")
    bodies = [
        (count(column="age; DROP TABLE spends", aggregate="sum"), "age; DROP TABLE spends"),
        (count(filters=[{"column": "gender' OR '1'='1", "op": "=", "value": "F"}]), "gender' OR '1'='1"),
        (count(group_by=["gender; DROP TABLE spends"]), "gender; DROP TABLE spends"),
        (count(filters=[{"column": "gender", "op": "LIKE", "value": "F"}]), "LIKE"),
        (count(filters=[{"column": "gender", "op": "=", "value": {"$ne": 1}}]), "value"),
        (count(surprise=1), "surprise"),
        (count(aggregate="median"), "median"),
        (count(aggregate="sum", column="nosuch"), "nosuch"),
        (count(epsilon=-1), "epsilon"),
        (count(epsilon="lots"), "epsilon"),
        ({"aggregate": "count", "filters": "gender=F"}, "filters"),
    ]
    for body, word in bodies:
        assert_clear_4xx(ask(served, "mallory", "students", body), None, word)
    # a value is a value: an injection attempt matches no record and spends as any count does
    response = ask(
        served,
        "mallory",
        "students",
        count(filters=[{"column": "gender", "op": "=", "value": "x' OR '1'='1"}]),
    )
    assert response.status_code in (200, 400, 403), response.text
    if response.status_code != 200:
        assert_clear_4xx(response)
        assert left(served, "mallory") == spent_before
    restricted = ask(
        served,
        "mallory",
        "students_restricted",
        count(epsilon=None, filters=[{"column": "gender", "op": "=", "value": "x' OR '1'='1"}]),
    )
    assert_clear_4xx(restricted, 403)  # a query set of 0 records: the value was taken literally
    assert_clear_4xx(ask(served, "mallory", "students_restricted", count()), None, "epsilon")
    big = {"aggregate": "count", "filters": [{"column": "gender", "op": "in", "value": ["F"] * 30_000}]}
    assert_clear_4xx(httpx.post(url, json=big, headers=headers), 413, "32,768")  # the configured limit

    def chunks():
        for _ in range(100):
            yield b" " * 1024

    assert_clear_4xx(httpx.post(url, content=chunks(), headers=headers), 413, "too large")
    assert call(served, "mallory", "GET", "/datasets").status_code == 200  # still serving


# Restriction and camouflage through HTTP --------------------------------------------------------


def test_restriction_answers_and_refuses_attacks(served):
    data = served.data
    women = [{"column": "gender", "op": "=", "value": "F"}]
    answered = ask(served, "attacker", "students_restricted", count(epsilon=None, filters=women))
    assert answered.status_code == 200, answered.text
    assert answered.json()["value"] == data.filter(pl.col("gender") == "F").height
    small = data.group_by("parish").len().filter(pl.col("len") < MIN_QUERY_SET).row(0)[0]
    for op in ("=", "!="):
        refused = ask(
            served,
            "attacker",
            "students_restricted",
            count(epsilon=None, filters=[{"column": "parish", "op": op, "value": small}]),
        )
        assert_clear_4xx(refused, 403)
        assert refused.json()["reason"] == "query_set_size"
    # differencing: the women, then the women outside a parish with one woman in it
    victim_parish = (
        data.filter(pl.col("gender") == "F").group_by("parish").len().filter(pl.col("len") == 1).row(0)[0]
    )
    difference = count(
        epsilon=None, filters=[*women, {"column": "parish", "op": "!=", "value": victim_parish}]
    )
    refused = ask(served, "attacker", "students_restricted", difference)
    assert_clear_4xx(refused, 403)
    assert refused.json()["reason"] == "audit"


def test_camouflage_intervals_contain_the_true_value(served):
    data = served.data
    cases = [
        (count(epsilon=None), data.height),
        (
            count(epsilon=None, filters=[{"column": "ethnicity", "op": "=", "value": "Hispanic"}]),
            data.filter(pl.col("ethnicity") == "Hispanic").height,
        ),
        (
            count(epsilon=None, aggregate="sum", column="birth_year"),
            data["birth_year"].sum(),
        ),
    ]
    for body, truth in cases:
        response = ask(served, "alice", "students_camouflage", body)
        assert response.status_code == 200, response.text
        answer = response.json()
        assert answer["lower"] <= truth <= answer["upper"], (body, answer, truth)
        assert answer["lower"] < answer["upper"]


# The client and sdckit query ---------------------------------------------------------------------


def test_client(served):
    from sdckit.query import Client, QueryError, Refused, UnknownDataset
    from sdckit.query.client import Unauthorized, Unreachable

    with Client(served.url, served.keys["alice"]) as client:
        assert {entry["name"] for entry in client.datasets()} >= {"students"}
        grouped = client.query("students", aggregate="count", group_by=["gender"], epsilon=EPSILON)
        assert sorted(group["key"]["gender"] for group in grouped["groups"]) == ["F", "M"]
        assert client.budget("students")["spent"] == pytest.approx(grouped["epsilon_spent"])
        with pytest.raises(QueryError, match="nosuch"):
            client.query("students", aggregate="sum", column="nosuch", epsilon=EPSILON)
        with pytest.raises(UnknownDataset, match="nope"):
            client.query("nope", aggregate="count", epsilon=EPSILON)
        with pytest.raises(Refused) as refusal:
            client.query("students", aggregate="count", epsilon=100.0)
        assert refusal.value.reason == "budget"
    with Client(served.url, "wrong") as client, pytest.raises(Unauthorized):
        client.datasets()
    with Client("http://127.0.0.1:9", "k", timeout=2) as client, pytest.raises(Unreachable):
        client.datasets()


def test_sdckit_query(served, monkeypatch):
    common = ["--url", served.url, "--key", served.keys["cli"]]
    status, out, err = cli(
        "query",
        "students",
        *common,
        "--filter",
        "birth_year>1990",
        "--filter",
        "gender=F",
        "--epsilon",
        "0.1",
    )
    assert status == 0, err
    assert "count" in out and "budget left" in out
    status, out, err = cli("query", "students", *common, "--group-by", "gender", "--epsilon", "0.1", "--json")
    assert status == 0, err
    assert '"groups"' in out
    status, _, err = cli("query", "students", *common, "--epsilon", "50")
    assert status == 3 and "refused" in err
    status, _, err = cli("query", "students", "--url", served.url, "--key", "wrong", "--epsilon", "0.1")
    assert status == 2 and "invalid" in err
    monkeypatch.setenv("SDCKIT_KEY", served.keys["cli"])
    status, out, err = cli(
        "query", "students_camouflage", "--url", served.url, "--aggregate", "sum", "--column", "birth_year"
    )
    assert status == 0 and "[" in out, err
    status, _, err = cli("query", "students", *common, "--filter", "birth_year>>1990", "--epsilon", "0.1")
    assert status == 2


def test_serve_refuses_a_taken_port_and_a_bad_configuration(served, tmp_path):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        status, _, err = cli("serve", "--config", str(served.config), "--port", port)
    assert status == 2 and "cannot listen" in err
    bad = tmp_path / "server.yaml"
    bad.write_text(SERVER_YAML.replace("width: 0.1", "width: 0.1\n    budget: 1.0"), encoding="utf-8")
    status, _, err = cli("serve", "--config", str(bad))
    assert status == 2 and "budget" in err
    status, _, err = cli("serve", "--config", str(served.config), "--port", "70000")
    assert status == 2 and "--port" in err
