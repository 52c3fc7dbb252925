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
DELTA = 1e-6

# One data source per protection (the unsafe layout, one file under dp and restriction, is refused
# at start: test_a_mixed_protection_configuration_is_refused); two dp entries over one file share
# one budget (test_two_entries_over_one_file_share_one_budget).
SERVER_YAML = f"""\
store: ledger.sqlite
max_body_bytes: 32768
max_failed_logins: 100000
datasets:
  students:
    data: example.csv
    config: example.yaml
    protection: dp
    budget: {BUDGET}
    bounds: {{birth_year: [1980, 2006]}}
    domains: {{gender: [F, M], ethnicity: [White, Black, Hispanic, Asian, American Indian]}}
  students_again:
    data: example.csv
    config: example.yaml
    protection: dp
    budget: {BUDGET}
    bounds: {{birth_year: [1980, 2006]}}
  students_gauss:
    data: gauss.csv
    config: example.yaml
    protection: dp
    budget: 100.0
    mechanism: gaussian
    delta: {DELTA}
    delta_budget: {3 * DELTA}
    bounds: {{birth_year: [1980, 2006]}}
  students_restricted:
    data: restricted.csv
    config: example.yaml
    protection: restriction
    min_query_set: {MIN_QUERY_SET}
  students_flipped:
    data: flipped.csv
    config: example.yaml
    protection: restriction
    min_query_set: {MIN_QUERY_SET}
  incomes:
    data: incomes.csv
    config: incomes.yaml
    protection: camouflage
    width: 0.1
"""

INCOMES_YAML = """\
attributes:
  code:    {role: insensitive, kind: categorical}
  region:  {role: quasi-identifier, kind: categorical}
  age:     {role: quasi-identifier, kind: numeric}
  income:  {role: sensitive, kind: numeric}
  dropout: {role: sensitive, kind: categorical}
"""

ANALYSTS = (
    "alice",
    "over",
    "crash",
    "burst",
    "attacker",
    "mallory",
    "cli",
    "sharer",
    "gauss",
    "careless",
    "prober",
)


def incomes(records: int = 400, seed: int = 7) -> pl.DataFrame:
    """Public codes, regions and ages; confidential incomes (zeros and negatives too) and dropout."""
    import numpy as np

    rng = np.random.default_rng(seed)
    income = np.round(rng.lognormal(10, 1, records), 2)
    income[::17] = 0.0
    income[::23] = -np.round(rng.uniform(10, 5000, len(income[::23])), 2)
    return pl.DataFrame(
        {
            "code": [f"P{i:04d}" for i in range(records)],
            "region": rng.choice(["North", "South", "East", "West"], records).tolist(),
            "age": rng.integers(18, 90, records),
            "income": income,
            "dropout": rng.choice(["Yes", "No"], records, p=[0.2, 0.8]).tolist(),
        }
    )


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


def restriction_target(data: pl.DataFrame) -> tuple[str, int]:
    """A (school, birth_year) that isolates one record who is not White and did not drop out."""
    unique = data.group_by("school", "birth_year").len().filter(pl.col("len") == 1)
    found = data.join(unique, on=["school", "birth_year"]).filter(
        (pl.col("ethnicity") != "White") & (pl.col("dropout") == "No")
    )
    row = found.sort("school", "birth_year").row(0, named=True)
    return row["school"], int(row["birth_year"])


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    from examples.generate import main as generate

    folder = tmp_path_factory.mktemp("served")
    for name, seed in (("example", 1), ("gauss", 2), ("restricted", 3)):
        assert (
            generate(["--records", "2000", "--seed", str(seed), "--output", str(folder / f"{name}.csv")]) == 0
        )
    shutil.copy(ROOT / "examples" / "example.yaml", folder / "example.yaml")
    # the same records with one target's dropout flipped: restriction must decide alike on both
    restricted = pl.read_csv(folder / "restricted.csv", infer_schema_length=0)
    school, year = restriction_target(restricted.with_columns(pl.col("birth_year").cast(pl.Int64)))
    target = (pl.col("school") == school) & (pl.col("birth_year") == str(year))
    restricted.with_columns(
        pl.when(target).then(pl.lit("Yes")).otherwise(pl.col("dropout")).alias("dropout")
    ).write_csv(folder / "flipped.csv")
    incomes().write_csv(folder / "incomes.csv")
    (folder / "incomes.yaml").write_text(INCOMES_YAML, encoding="utf-8")
    config = folder / "server.yaml"
    config.write_text(SERVER_YAML, encoding="utf-8")
    status, _, err = cli("ledger", "init", "--config", str(config))
    assert status == 0, err
    keys = {}
    for name in (*ANALYSTS, "eve"):
        status, out, err = cli("keys", "add", name, "--config", str(config), "--all")
        assert status == 0, err
        keys[name] = out.strip()
    status, out, err = cli(
        "keys", "add", "scoped", "--config", str(config), "--dataset", "students_restricted"
    )
    assert status == 0, err
    keys["scoped"] = out.strip()
    assert cli("keys", "revoke", "eve", "--config", str(config))[0] == 0
    server = Server(config, folder / "server.log")
    server.start()
    server.keys = keys
    server.target = (school, year)

    def frame(name: str) -> pl.DataFrame:
        return pl.read_csv(folder / name, infer_schema_length=0).with_columns(
            pl.col("birth_year").cast(pl.Int64)
        )

    server.data = frame("example.csv")
    server.restricted = frame("restricted.csv")
    server.incomes = incomes()
    yield server
    server.stop()
    log = server.log.read_text()
    assert "Traceback" not in log, f"the server logged an error:\n{log}"
    for key in keys.values():
        assert key not in log, "a key was written to the server's log"


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
    # the interactive page would fetch its scripts from outside the machine: it is off
    assert httpx.get(served.url + "/docs").status_code == 404


def test_keys_commands(served):
    status, _, err = cli("keys", "add", "alice", "--config", str(served.config), "--all")
    assert status == 2 and "alice" in err
    status, out, _ = cli("keys", "list", "--config", str(served.config))
    assert status == 0 and "alice" in out and "revoked" in out
    status, _, err = cli("keys", "revoke", "nobody", "--config", str(served.config))
    assert status == 2 and "nobody" in err


def test_datasets_and_schema(served):
    response = call(served, "alice", "GET", "/datasets")
    assert response.status_code == 200
    names = {entry["name"] for entry in response.json()}
    assert names == {
        "students",
        "students_again",
        "students_gauss",
        "students_restricted",
        "students_flipped",
        "incomes",
    }
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


@pytest.mark.slow
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
    data = served.restricted
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
    data = served.incomes
    cases = [
        (count(epsilon=None), data.height),
        (
            count(epsilon=None, filters=[{"column": "region", "op": "=", "value": "North"}]),
            data.filter(pl.col("region") == "North").height,
        ),
        (count(epsilon=None, aggregate="sum", column="income"), data["income"].sum()),
        (
            count(
                epsilon=None,
                aggregate="sum",
                column="income",
                filters=[{"column": "age", "op": ">", "value": 50}],
            ),
            data.filter(pl.col("age") > 50)["income"].sum(),
        ),
        (
            count(epsilon=None, filters=[{"column": "dropout", "op": "=", "value": "Yes"}]),
            data.filter(pl.col("dropout") == "Yes").height,
        ),
    ]
    for body, truth in cases:
        response = ask(served, "alice", "incomes", body)
        assert response.status_code == 200, response.text
        answer = response.json()
        assert answer["lower"] <= truth <= answer["upper"], (body, answer, truth)
    # public attributes are not camouflaged: a count over public filters is exact
    north = ask(served, "alice", "incomes", cases[1][0]).json()
    assert north["lower"] == north["upper"] == cases[1][1]


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
        "query", "incomes", "--url", served.url, "--aggregate", "sum", "--column", "income"
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


# Issue 30: the server against its adversary ------------------------------------------------------


@pytest.mark.slow
def test_camouflage_defeats_the_midpoint_and_single_record_attacks(served):
    """Each record isolated by its public code: the interval of its income contains it, but its
    midpoint is not it, its position in the interval is spread, and equal values get different
    intervals; the count of "this record and dropout = Yes" is [0, 1] whatever the truth."""
    data = served.incomes
    positions, zeros = [], []
    for row in data.head(80).iter_rows(named=True):
        isolate = [{"column": "code", "op": "=", "value": row["code"]}]
        answer = ask(
            served,
            "prober",
            "incomes",
            count(epsilon=None, aggregate="sum", column="income", filters=isolate),
        )
        assert answer.status_code == 200, answer.text
        low, high = answer.json()["lower"], answer.json()["upper"]
        truth = row["income"]
        assert low <= truth <= high and high > low
        assert abs((low + high) / 2 - truth) > 1e-9 * max(1.0, abs(truth)), "the midpoint is the value"
        positions.append((truth - low) / (high - low))
        if truth == 0:
            zeros.append((low, high))
        flagged = ask(
            served,
            "prober",
            "incomes",
            count(epsilon=None, filters=[*isolate, {"column": "dropout", "op": "=", "value": "Yes"}]),
        ).json()
        assert (flagged["lower"], flagged["upper"]) == (0, 1), (row["dropout"], flagged)
    # the true value sits anywhere in its interval (uniformly on the interval's own scale): 80
    # records all in the middle third would happen once in 10^38
    assert min(positions) < 0.3 and max(positions) > 0.7
    assert len(zeros) >= 3 and len(set(zeros)) == len(zeros), "equal values, equal intervals"


def test_restriction_refusals_do_not_depend_on_the_data(served):
    """Two datasets that differ only in the target's dropout get the same decisions, query by query;
    the issue's attack (the disjunction, then the White count) is refused at its first query."""
    school, year = served.target
    target = {
        "and": [
            {"column": "school", "op": "=", "value": school},
            {"column": "birth_year", "op": "=", "value": year},
        ]
    }
    white = {"column": "ethnicity", "op": "=", "value": "White"}
    dropped = {"column": "dropout", "op": "=", "value": "Yes"}
    women = {"column": "gender", "op": "=", "value": "F"}
    sequence = [
        count(epsilon=None, filters=[{"or": [{"and": [target, dropped]}, white]}]),
        count(epsilon=None, filters=[white]),
        count(epsilon=None, filters=[dropped]),
        count(epsilon=None, filters=[dropped, {"not": target}]),
        count(epsilon=None, filters=[women], group_by=["dropout"]),
        count(epsilon=None, filters=[white, women]),
        count(epsilon=None, aggregate="sum", column="birth_year", filters=[dropped]),
        count(
            epsilon=None, aggregate="quantile", column="birth_year", quantile=0.5, filters=[{"not": target}]
        ),
        count(epsilon=None, filters=[{"or": [target, white]}]),
    ]
    decisions = {}
    for dataset in ("students_restricted", "students_flipped"):
        decisions[dataset] = []
        for body in sequence:
            response = ask(served, "careless", dataset, body)
            assert response.status_code in (200, 403), response.text
            decisions[dataset].append(response.json().get("reason", "answered"))
    assert decisions["students_restricted"] == decisions["students_flipped"]
    assert decisions["students_restricted"][0] != "answered"  # the exposure is the target alone
    assert "answered" in decisions["students_restricted"]


def test_a_key_outside_its_scope_is_refused(served):
    listed = call(served, "scoped", "GET", "/datasets").json()
    assert [entry["name"] for entry in listed] == ["students_restricted"]
    for response in (
        ask(served, "scoped", "students", count()),
        call(served, "scoped", "GET", "/datasets/students"),
        call(served, "scoped", "GET", "/budget/students"),
    ):
        assert_clear_4xx(response, 403, "does not reach", "students")
        assert response.json()["reason"] == "scope"
    assert (
        ask(
            served,
            "scoped",
            "students_restricted",
            count(epsilon=None, filters=[{"column": "gender", "op": "=", "value": "F"}]),
        ).status_code
        == 200
    )
    status, _, err = cli("keys", "add", "unscoped", "--config", str(served.config))
    assert status == 2 and "--dataset" in err and "--all" in err
    status, _, err = cli("keys", "add", "typo", "--config", str(served.config), "--dataset", "studnets")
    assert status == 2 and "studnets" in err


def test_two_entries_over_one_file_share_one_budget(served):
    assert ask(served, "sharer", "students", count(epsilon=0.5)).status_code == 200
    assert ask(served, "sharer", "students_again", count(epsilon=0.5)).status_code == 200
    refused = ask(served, "sharer", "students_again", count(epsilon=0.5))
    assert_clear_4xx(refused, 403, "budget")
    assert refused.json()["reason"] == "budget"
    for dataset in ("students", "students_again"):
        budget = call(served, "sharer", "GET", f"/budget/{dataset}").json()
        assert budget["spent"] == pytest.approx(1.0) and budget["left"] == pytest.approx(BUDGET - 1.0)


def test_delta_is_capped(served):
    for _ in range(3):
        answer = ask(served, "gauss", "students_gauss", count(epsilon=1e-3))
        assert answer.status_code == 200, answer.text
        assert answer.json()["delta_spent"] == DELTA
    refused = ask(served, "gauss", "students_gauss", count(epsilon=1e-3))
    assert_clear_4xx(refused, 403, "delta")
    assert refused.json()["reason"] == "delta_budget"
    budget = call(served, "gauss", "GET", "/budget/students_gauss").json()
    assert budget["delta_spent"] == pytest.approx(3 * DELTA) and budget["spent"] == pytest.approx(3e-3)


def test_failing_measurements_charge_nothing(served):
    before = {
        d: call(served, "careless", "GET", f"/budget/{d}").json() for d in ("students", "students_gauss")
    }
    for dataset, body in (
        ("students_gauss", count(epsilon=100000)),
        ("students", count(epsilon=5e-324)),
        ("students", count(epsilon=1e-300)),
        (
            "students",
            count(epsilon=None, aggregate="quantile", column="birth_year", quantile=0.5) | {"epsilon": 1e-20},
        ),
        (
            "students_gauss",
            count(epsilon=None, aggregate="quantile", column="birth_year", quantile=0.5) | {"epsilon": 1e-25},
        ),
    ):
        assert_clear_4xx(ask(served, "careless", dataset, body), 400, "epsilon")
    after = {
        d: call(served, "careless", "GET", f"/budget/{d}").json() for d in ("students", "students_gauss")
    }
    assert after == before


def test_types_are_strict(served):
    before = call(served, "careless", "GET", "/budget/students").json()
    url = served.url + "/datasets/students/query"
    headers = {"Authorization": f"Bearer {served.keys['careless']}"}
    for body, word in (
        (count(epsilon=True), "epsilon"),
        (count(epsilon="0.1"), "epsilon"),
        (
            count(epsilon=None, aggregate="quantile", column="birth_year", quantile="0.5") | {"epsilon": 0.1},
            "quantile",
        ),
        (
            count(epsilon=None, aggregate="histogram", column="birth_year", bins=True) | {"epsilon": 0.1},
            "bins",
        ),
        (
            count(epsilon=None, aggregate="histogram", column="birth_year", bins=["1990", 2000])
            | {"epsilon": 0.1},
            "bins",
        ),
    ):
        assert_clear_4xx(httpx.post(url, json=body, headers=headers), 400, word)
    raw = b'{"aggregate": "histogram", "column": "birth_year", "bins": [1990, 1e400], "epsilon": 0.1}'
    assert_clear_4xx(httpx.post(url, content=raw, headers=headers), 400, "1e400")
    assert call(served, "careless", "GET", "/budget/students").json() == before


def test_refusals_are_logged_without_keys_or_answers(served):
    assert_clear_4xx(ask(served, "over", "students", count(epsilon=50.0)), 403)
    log = served.log.read_text()
    assert re.search(r"refused: analyst 'over', dataset 'students', reason budget", log), log[-2000:]
    assert "failed login from 127.0.0.1" in log


@pytest.mark.slow
def test_a_mixed_protection_configuration_is_refused_and_failed_logins_are_limited(served, tmp_path):
    folder = tmp_path
    shutil.copy(served.config.parent / "example.csv", folder / "example.csv")
    shutil.copy(served.config.parent / "example.yaml", folder / "example.yaml")
    unsafe = """\
store: ledger.sqlite
max_failed_logins: 5
datasets:
  open:
    data: example.csv
    config: example.yaml
    protection: dp
    budget: 1.0
  exact:
    data: example.csv
    config: example.yaml
    protection: restriction
    min_query_set: 10
"""
    config = folder / "server.yaml"
    config.write_text(unsafe, encoding="utf-8")
    status, _, err = cli("serve", "--config", str(config), "--init", "--port", "0")
    assert status == 2 and "'open'" in err and "'exact'" in err and "allow_mixed_protection" in err
    assert not (folder / "ledger.sqlite").exists()
    status, _, err = cli("ledger", "init", "--config", str(config))
    assert status == 2 and "allow_mixed_protection" in err
    # said on purpose: it starts, with a warning
    config.write_text(
        unsafe.replace(
            "datasets:", "sources:\n  shared: {data: example.csv, allow_mixed_protection: true}\ndatasets:"
        ).replace("data: example.csv\n    config", "source: shared\n    config"),
        encoding="utf-8",
    )
    assert cli("ledger", "init", "--config", str(config))[0] == 0
    status, key, err = cli("keys", "add", "alice", "--config", str(config), "--all")
    assert status == 0, err
    server = Server(config, folder / "server.log")
    server.start()
    try:
        assert "warning" in server.log.read_text() and "allow_mixed_protection" in server.log.read_text()
        for attempt in range(5):
            response = httpx.get(
                server.url + "/datasets", headers={"Authorization": f"Bearer sdk_guess{attempt}"}
            )
            assert_clear_4xx(response, 401)
        blocked = httpx.get(server.url + "/datasets", headers={"Authorization": f"Bearer {key.strip()}"})
        assert_clear_4xx(blocked, 429, "too many failed logins")
        assert int(blocked.headers["retry-after"]) > 0
    finally:
        server.stop()
    log = server.log.read_text()
    assert log.count("failed login from 127.0.0.1") == 5 and "sdk_guess" not in log and key.strip() not in log


def _spend(server, key: str, times: int) -> None:
    for _ in range(times):
        response = httpx.post(
            server.url + "/datasets/students/query",
            json=count(epsilon=0.1),
            headers={"Authorization": f"Bearer {key}"},
        )
        assert response.status_code == 200, response.text


@pytest.mark.slow
def test_the_ledger_cannot_be_lost_silently(served, tmp_path):
    import sqlite3

    folder = tmp_path / "server"
    folder.mkdir()
    shutil.copy(served.config.parent / "example.csv", folder / "example.csv")
    shutil.copy(served.config.parent / "example.yaml", folder / "example.yaml")
    config = folder / "server.yaml"
    config.write_text(
        "store: ledger.sqlite\ndatasets:\n  students: {data: example.csv, config: example.yaml, "
        "protection: dp, budget: 1.0}\n",
        encoding="utf-8",
    )
    ledger = folder / "ledger.sqlite"
    status, _, err = cli("serve", "--config", str(config), "--port", "0")
    assert status == 2 and "no ledger" in err and "--init" in err  # never created silently
    assert not ledger.exists()
    assert cli("ledger", "init", "--config", str(config))[0] == 0
    assert oct(ledger.stat().st_mode & 0o777) == "0o600"
    status, _, err = cli("ledger", "init", "--config", str(config))
    assert status == 2 and "already there" in err
    key = cli("keys", "add", "alice", "--config", str(config), "--all")[1].strip()
    server = Server(config, folder / "server.log")
    server.start()
    _spend(server, key, 3)
    server.kill()
    for leftover in folder.glob("ledger.sqlite-*"):  # the journal (or a write-ahead log) after SIGKILL
        leftover.unlink()
    server.start()
    spent = httpx.get(server.url + "/budget/students", headers={"Authorization": f"Bearer {key}"}).json()[
        "spent"
    ]
    assert spent == pytest.approx(0.3)
    _spend(server, key, 1)
    server.stop()
    backup = folder / "backup.sqlite"
    status, _, err = cli("ledger", "backup", str(backup), "--config", str(config))
    assert status == 0, err
    assert oct(backup.stat().st_mode & 0o777) == "0o600"
    status, out, _ = cli("ledger", "verify", "--config", str(config))
    assert status == 0 and "4 spends" in out

    def refused(*words: str) -> None:
        status, _, err = cli("serve", "--config", str(config), "--port", "0")
        assert status == 2, err
        assert "Traceback" not in err and err.startswith("error:"), err
        for word in words:
            assert word in err, (word, err)
        shutil.copy(backup, ledger)  # restored for the next case

    def tamper(*statements: str) -> None:
        with sqlite3.connect(ledger) as connection:
            for statement in statements:
                connection.execute(statement)
        connection.close()

    ledger.unlink()
    refused("no ledger")
    ledger.write_bytes(b"")
    refused("empty")
    ledger.write_bytes(backup.read_bytes()[: backup.stat().st_size // 2])
    refused("cannot be read")
    tamper("DROP TRIGGER spends_append_only_delete", "DELETE FROM spends WHERE id = 2")
    refused("broken at entry 3")
    tamper("DROP TRIGGER spends_append_only_delete", "DELETE FROM spends WHERE id = 4")
    refused("head records 4")
    tamper("DROP TRIGGER spends_append_only_delete", "DELETE FROM spends")
    refused("head records 4")
    tamper("DROP TRIGGER spends_append_only_update", "UPDATE spends SET epsilon = 0.0 WHERE id = 1")
    refused("broken at entry 1")
    tamper("UPDATE totals SET epsilon = 0.0")
    refused("running totals")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        tamper("DELETE FROM spends")
    # a ledger made for another configuration (other data) is foreign
    other = folder / "other"
    other.mkdir()
    pl.read_csv(folder / "example.csv", infer_schema_length=0).head(100).write_csv(other / "example.csv")
    shutil.copy(folder / "example.yaml", other / "example.yaml")
    (other / "server.yaml").write_text(config.read_text(), encoding="utf-8")
    assert cli("ledger", "init", "--config", str(other / "server.yaml"))[0] == 0
    shutil.copy(other / "ledger.sqlite", ledger)
    refused("does not know the data source")
    # the restored ledger serves again, with the budget as it was
    status, out, _ = cli("ledger", "verify", "--config", str(config))
    assert status == 0 and "4 spends" in out
