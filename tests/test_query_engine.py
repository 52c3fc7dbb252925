"""The query engine of the statistical query server, in process: language, engine, protections,
ledger (the server itself is tested in subprocesses by tests/test_query_server.py)."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import yaml
from scipy import stats

from sdckit.errors import ConfigError
from sdckit.query import dp as privacy
from sdckit.query.config import load_server_config
from sdckit.query.errors import QueryError, Refused, UnknownDataset
from sdckit.query.language import parse_query
from sdckit.query.service import QueryService

ROOT = Path(__file__).resolve().parents[1]
RECORDS = 5000
BOUNDS = [1985, 2010]


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from examples.generate import generate

    directory = tmp_path_factory.mktemp("query")
    generate(RECORDS, seed=1).write_parquet(directory / "students.parquet")
    # other data sources (budgets belong to a data file's content): other records
    generate(RECORDS, seed=2).write_parquet(directory / "tight.parquet")
    generate(RECORDS, seed=3).write_parquet(directory / "gauss.parquet")
    shutil.copy(ROOT / "examples" / "example.yaml", directory / "example.yaml")
    return directory


def write_server(directory: Path, datasets: dict, store: str = "ledger.sqlite") -> Path:
    """A server configuration: entries without 'data' serve the source 'students' (students.parquet,
    served under several protections on purpose: allow_mixed_protection)."""
    entries = {
        name: {"config": "example.yaml", **({} if "data" in entry else {"source": "students"}), **entry}
        for name, entry in datasets.items()
    }
    path = directory / f"server-{store}.yaml"
    sources = {"students": {"data": "students.parquet", "allow_mixed_protection": True}}
    path.write_text(yaml.safe_dump({"store": store, "sources": sources, "datasets": entries}))
    return path


DATASETS = {
    "dp": {
        "protection": "dp",
        "budget": 1.0e9,
        "bounds": {"birth_year": BOUNDS},
        "domains": {"gender": ["F", "M", "X"]},
    },
    "tight": {"data": "tight.parquet", "protection": "dp", "budget": 1.0, "max_epsilon_per_query": 0.5},
    "gauss": {
        "data": "gauss.parquet",
        "protection": "dp",
        "budget": 100.0,
        "mechanism": "gaussian",
        "delta": 1e-6,
        "delta_budget": 1e-4,
        "bounds": {"birth_year": BOUNDS},
    },
    "restricted": {"protection": "restriction", "min_query_set": 5},
    "camouflaged": {"protection": "camouflage", "width": 0.1},
}


@pytest.fixture(scope="module")
def service(data_dir: Path):
    service = QueryService(load_server_config(write_server(data_dir, DATASETS)), init=True)
    yield service
    service.close()


@pytest.fixture(scope="module")
def frame(data_dir: Path) -> pl.DataFrame:
    return pl.read_parquet(data_dir / "students.parquet")


F = {"column": "gender", "op": "=", "value": "F"}


# --- language -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "match"),
    [
        ({"aggregate": "count", "colour": 1}, "unknown key 'colour'; did you mean 'column'"),
        (
            {"aggregate": "count", "filters": [{"column": "a", "op": "~", "value": 1}]},
            r"filters\[0\].op: unknown op '~'",
        ),
        (
            {"aggregate": "count", "filters": [{"and": [{"column": "a", "op": "=", "value": 1, "x": 2}]}]},
            r"unknown key 'x' in filters\[0\].and\[0\]",
        ),
        (
            {"aggregate": "count", "filters": [{"column": "a", "op": "in", "value": 1}]},
            "op 'in' takes a list",
        ),
        (
            {"aggregate": "count", "filters": [{"column": "a", "op": "=", "value": {"$ne": 1}}]},
            r"filters\[0\].value: must be a number, text",
        ),
        ({"aggregate": "median"}, "unknown aggregate 'median'"),
        ({"aggregate": "sum"}, "sum needs a 'column'"),
        ({"aggregate": "count", "column": "birth_year"}, "count counts records"),
        ({"aggregate": "quantile", "column": "birth_year", "quantile": 1.5}, "quantile"),
        ({"aggregate": "quantile", "column": "birth_year"}, "'quantile'"),
        ({"aggregate": "count", "epsilon": -1}, "epsilon"),
        ([1, 2], "must be a JSON object"),
    ],
)
def test_bad_queries_are_refused_naming_the_place(body, match):
    with pytest.raises(QueryError, match=match):
        parse_query(body)


def test_synonyms_and_nesting_limits():
    query = parse_query(
        {
            "aggregate": "count",
            "filters": [{"column": "a", "op": "≥", "value": 1}, {"column": "a", "op": "≠", "value": 2}],
        }
    )
    assert [f.op for f in query.filters] == [">=", "!="]
    deep: dict = F
    for _ in range(20):
        deep = {"not": deep}
    with pytest.raises(QueryError, match="nested deeper"):
        parse_query({"aggregate": "count", "filters": [deep]})


@pytest.mark.parametrize(
    ("body", "match"),
    [
        (
            {"aggregate": "count", "filters": [{"column": "age; DROP TABLE x", "op": "=", "value": 1}]},
            "unknown column 'age; DROP TABLE x'",
        ),
        ({"aggregate": "count", "filters": [{"column": "gender", "op": "=", "value": 1}]}, "must be text"),
        (
            {"aggregate": "count", "filters": [{"column": "birth_year", "op": "=", "value": "1990"}]},
            "must be a finite number",
        ),
        (
            {"aggregate": "count", "filters": [{"column": "gender", "op": "<", "value": "F"}]},
            "needs a numeric or date column",
        ),
        ({"aggregate": "sum", "column": "gender"}, "sum needs a numeric column"),
        ({"aggregate": "count", "group_by": ["birth_year"]}, "group_by takes categorical"),
        (
            {"aggregate": "count", "group_by": ["student_id"]},
            "unknown column 'student_id'",
        ),  # identifiers are not served
        ({"aggregate": "histogram", "column": "birth_year"}, "needs 'bins'"),
        ({"aggregate": "count", "epsilon": 0.1}, "leave out 'epsilon'"),
    ],
)
def test_queries_checked_against_the_schema(service, body, match):
    with pytest.raises(QueryError, match=match):
        service.query("alice", "restricted", body)


def test_injection_in_a_value_is_a_plain_value(service, frame):
    evil = "F' OR '1'='1"
    body = {"aggregate": "count", "filters": [{"not": {"column": "gender", "op": "=", "value": evil}}]}
    with pytest.raises(Refused):  # the complement of nothing: the whole dataset, refused by size control
        service.query("injector", "restricted", body)
    assert service.query("injector", "camouflaged", body)["upper"] >= frame.height


def test_out_of_range_numbers_are_plain_values(service, frame):
    huge = {"aggregate": "count", "filters": [{"column": "birth_year", "op": "<", "value": 10**100}]}
    assert service.query("numbers", "camouflaged", huge)["lower"] >= 0.9 * frame.height
    mixed = {
        "aggregate": "count",
        "filters": [{"column": "entry_grade", "op": "in", "value": [1000, 2.5, -(10**30)]}],
    }
    assert service.query("numbers", "camouflaged", mixed) == {"lower": 0, "upper": 0}


def test_unknown_dataset(service):
    with pytest.raises(UnknownDataset, match="unknown dataset 'nope'"):
        service.query("alice", "nope", {"aggregate": "count"})


# --- engine ---------------------------------------------------------------------------------------


def test_engine_answers_equal_polars(service, frame):
    engine = service._datasets["restricted"].engine
    body = {
        "aggregate": "sum",
        "column": "birth_year",
        "filters": [
            F,
            {
                "or": [
                    {"column": "birth_year", "op": ">", "value": 1995},
                    {"column": "ethnicity", "op": "in", "value": ["White", "Nobody"]},
                ]
            },
        ],
        "group_by": ["lunch_status"],
    }
    query = parse_query(body)
    keys = [(k,) for k in engine.data_keys("lunch_status")]
    got = {g.key["lunch_status"]: (g.n, g.s) for g in engine.stats(query, keys)}
    oracle = (
        frame.filter(
            (pl.col("gender") == "F")
            & ((pl.col("birth_year") > 1995) | pl.col("ethnicity").is_in(["White", "Nobody"]))
        )
        .group_by("lunch_status")
        .agg(pl.len(), pl.col("birth_year").sum())
    )
    assert got == {row[0]: (row[1], float(row[2])) for row in oracle.iter_rows() if row[0] is not None}
    mask = engine.mask(query)
    assert (
        mask.sum()
        == sum(n for n, _ in got.values()) + oracle.filter(pl.col("lunch_status").is_null())["len"].sum()
    )


def test_not_is_the_complement(service):
    engine = service._datasets["restricted"].engine
    q = parse_query({"aggregate": "count", "filters": [{"column": "birth_year", "op": ">", "value": 1995}]})
    nq = parse_query(
        {"aggregate": "count", "filters": [{"not": {"column": "birth_year", "op": ">", "value": 1995}}]}
    )
    assert (engine.mask(q) ^ engine.mask(nq)).all()


# --- differential privacy -------------------------------------------------------------------------


def test_laplace_noise_has_the_calibrated_scale():
    # OpenDP's sampler cannot be seeded: a KS test at level 1e-3 (a false alarm once in 1,000 runs)
    epsilon, truth = 0.5, 1234.0
    draws = np.asarray(privacy.laplace(1.0, epsilon)([truth] * 4000)) - truth
    assert stats.kstest(draws, "laplace", args=(0, 1.0 / epsilon)).pvalue > 1e-3
    # a sum with bounds [1985, 2010] under change-one: sensitivity max(U - L, M) = 2010
    l1, _ = privacy.sensitivities("sum", False, (1985.0, 2010.0))
    assert l1 == 2010.0
    draws = np.asarray(privacy.laplace(l1, epsilon)([0.0] * 4000))
    assert stats.kstest(draws, "laplace", args=(0, l1 / epsilon)).pvalue > 1e-3


@pytest.mark.slow
def test_service_counts_follow_laplace(service, frame):
    truth = frame.filter(pl.col("gender") == "F").height
    draws = [
        service.query("stat", "dp", {"aggregate": "count", "filters": [F], "epsilon": 1.0})["value"] - truth
        for _ in range(300)
    ]
    assert stats.kstest(draws, "laplace", args=(0, 1.0)).pvalue > 1e-3


def test_dp_group_by_answers_the_declared_domain(service):
    answer = service.query("alice", "dp", {"aggregate": "count", "group_by": ["gender"], "epsilon": 0.5})
    assert [g["key"] for g in answer["groups"]] == [{"gender": "F"}, {"gender": "M"}, {"gender": "X"}]
    answer = service.query("alice", "dp", {"aggregate": "histogram", "column": "retained", "epsilon": 0.5})
    assert [g["key"]["retained"] for g in answer["groups"]] == [
        "Yes",
        "No",
    ]  # from the attribute configuration
    with pytest.raises(Refused, match="add domains"):
        service.query("alice", "dp", {"aggregate": "count", "group_by": ["ethnicity"], "epsilon": 0.5})
    with pytest.raises(Refused, match="no declared bounds"):
        service.query("alice", "dp", {"aggregate": "sum", "column": "entry_school_year", "epsilon": 0.5})


def test_gaussian_and_quantile(service):
    answer = service.query("alice", "gauss", {"aggregate": "mean", "column": "birth_year", "epsilon": 1.0})
    assert BOUNDS[0] <= answer["value"] <= BOUNDS[1] and answer["delta_spent"] == 1e-6
    answer = service.query(
        "alice", "dp", {"aggregate": "quantile", "column": "birth_year", "quantile": 0.5, "epsilon": 1.0}
    )
    assert BOUNDS[0] <= answer["value"] <= BOUNDS[1]


def test_delta_only_with_the_gaussian_mechanism(service):
    with pytest.raises(QueryError, match="Laplace mechanism"):
        service.query("alice", "dp", {"aggregate": "count", "epsilon": 0.1, "delta": 1e-7})
    with pytest.raises(QueryError, match="at most 1e-06"):
        service.query("alice", "gauss", {"aggregate": "count", "epsilon": 0.1, "delta": 1e-3})
    answer = service.query("alice", "gauss", {"aggregate": "count", "epsilon": 0.1, "delta": 1e-7})
    assert answer["delta_spent"] == 1e-7


def test_budget_is_spent_and_refusal_spends_nothing(service):
    body = {"aggregate": "count", "filters": [F], "epsilon": 0.4}
    assert service.query("bob", "tight", body)["budget_left"] == pytest.approx(0.6)
    assert service.query("bob", "tight", body)["budget_left"] == pytest.approx(0.2)
    with pytest.raises(Refused, match="budget exhausted") as refusal:
        service.query("bob", "tight", body)
    assert refusal.value.reason == "budget"
    with pytest.raises(Refused, match="max_epsilon_per_query"):
        service.query("bob", "tight", dict(body, epsilon=0.6))
    assert service.budget("bob", "tight")["spent"] == pytest.approx(0.8)
    assert service.query("bob", "tight", dict(body, epsilon=0.2))["budget_left"] == pytest.approx(0.0)


def test_twenty_threads_racing_for_ten_answers(service):
    body = {"aggregate": "count", "filters": [F], "epsilon": 0.1}
    results: list[str] = []
    barrier = threading.Barrier(20)

    def ask() -> None:
        barrier.wait()
        try:
            service.query("racer", "tight", body)
            results.append("answered")
        except Refused:
            results.append("refused")

    threads = [threading.Thread(target=ask) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results.count("answered") == 10 and results.count("refused") == 10
    assert service.budget("racer", "tight")["spent"] == pytest.approx(1.0)


def test_ledger_survives_a_new_service(data_dir):
    path = write_server(
        data_dir, {"tight": DATASETS["tight"], "restricted": DATASETS["restricted"]}, store="persist.sqlite"
    )
    first = QueryService(load_server_config(path), init=True)
    key = first.add_key("carol")
    first.query("carol", "tight", {"aggregate": "count", "epsilon": 0.3})
    first.query("carol", "restricted", {"aggregate": "count", "filters": [F]})
    first.close()
    second = QueryService(load_server_config(path))
    assert second.authenticate(key) == ("carol", "*") and second.authenticate(key + "x") is None
    assert second.budget("carol", "tight")["spent"] == pytest.approx(0.3)
    # the restriction audit remembers the answered set: F minus one record is a differencing attack
    with pytest.raises(Refused, match="audit"):
        second.query(
            "carol", "restricted", {"aggregate": "count", "filters": [F, {"not": victim_filter(second)}]}
        )
    second.revoke_key("carol")
    assert second.authenticate(key) is None
    with pytest.raises(ConfigError, match="no analyst 'dave'"):
        second.revoke_key("dave")
    second.close()


# --- query restriction ----------------------------------------------------------------------------


def victim_filter(service: QueryService) -> dict:
    """A filter that isolates exactly one female record (found in the data)."""
    frame = service._datasets["restricted"].engine.frame.with_columns(pl.col(pl.Categorical).cast(pl.String))
    counts = (
        frame.filter(pl.col("gender") == "F")
        .group_by("school", "birth_year")
        .len()
        .filter(pl.col("len") == 1)
    )
    school, year = counts.sort("school", "birth_year").row(0)[:2]
    assert frame.filter((pl.col("school") == school) & (pl.col("birth_year") == year)).height == 1
    return {
        "and": [
            {"column": "school", "op": "=", "value": school},
            {"column": "birth_year", "op": "=", "value": year},
        ]
    }


def test_query_set_size_control(service):
    victim = victim_filter(service)
    with pytest.raises(Refused, match="query set size control") as refusal:
        service.query("eve", "restricted", {"aggregate": "count", "filters": [victim]})
    assert refusal.value.reason == "query_set_size"
    # count(all) - count(all but the victim): both have a complement below k
    with pytest.raises(Refused, match="query set size control"):
        service.query("eve", "restricted", {"aggregate": "count"})
    with pytest.raises(Refused, match="query set size control"):
        service.query("eve", "restricted", {"aggregate": "count", "filters": [{"not": victim}]})


def test_differencing_attack(service):
    victim = victim_filter(service)
    service.query("mallory", "restricted", {"aggregate": "sum", "column": "birth_year", "filters": [F]})
    with pytest.raises(Refused, match="audit") as refusal:
        service.query(
            "mallory",
            "restricted",
            {"aggregate": "sum", "column": "birth_year", "filters": [F, {"not": victim}]},
        )
    assert refusal.value.reason == "audit"
    # another analyst is audited alone
    service.query(
        "trent", "restricted", {"aggregate": "sum", "column": "birth_year", "filters": [F, {"not": victim}]}
    )


def test_tracker_attack_caught_by_the_linear_audit(service):
    """Denning's tracker T = male: q(C) = q(C or T) + q(C or not T) - q(all), with C the victim (female).
    The two sets differ from each other by many records, so only the linear audit sees it."""
    victim = victim_filter(service)
    male = {"column": "gender", "op": "=", "value": "M"}
    body = {"aggregate": "sum", "column": "birth_year"}
    service.query("oscar", "restricted", {**body, "filters": [{"or": [victim, male]}]})
    with pytest.raises(Refused, match="would determine the total"):
        service.query("oscar", "restricted", {**body, "filters": [{"or": [victim, {"not": male}]}]})


# --- configuration ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "match"),
    [
        (
            {"protection": "restriction", "min_query_set": 5, "colour": 1},
            r":\d+: unknown key 'colour' in datasets.x",
        ),
        ({"protection": "restriction", "min_query_set": 5, "budget": 1}, "'budget' applies to protection dp"),
        ({"protection": "dp"}, "protection dp needs 'budget'"),
        ({"protection": "dp", "budget": 1, "mechanism": "gaussian"}, "needs 'delta'"),
        (
            {"protection": "dp", "budget": 1, "mechanism": "gaussian", "delta": 1e-6},
            "needs 'delta_budget'",
        ),
        ({"protection": "dp", "budget": "1.0"}, "budget"),
        ({"protection": "dp", "budget": True}, "budget"),
        ({"protection": "dp", "budget": 1, "source": "s"}, "either 'data'"),
        ({"protection": "camouflage", "width": 1.5}, "width"),
        ({"protection": "dp", "budget": 1, "confidential": ["x"]}, "'confidential' applies"),
        ({"protection": "dp", "budget": 1, "bounds": {"birth_year": [3, 1]}}, "lower < upper"),
        ({"protection": "camouflage"}, "needs 'width'"),
        ({"protection": "fog"}, "protection"),
    ],
)
def test_bad_server_configurations(tmp_path, entry, match):
    path = tmp_path / "server.yaml"
    path.write_text(
        yaml.safe_dump(
            {"store": "l.sqlite", "datasets": {"x": {"data": "d.csv", "config": "c.yaml", **entry}}}
        )
    )
    with pytest.raises(ConfigError, match=match):
        load_server_config(path)


def test_bounds_and_domains_checked_against_the_attributes(data_dir):
    path = write_server(
        data_dir, {"x": {"protection": "dp", "budget": 1, "bounds": {"gender": [0, 1]}}}, store="bad.sqlite"
    )
    with pytest.raises(ConfigError, match="bounds name 'gender', which is not a numeric attribute"):
        QueryService(load_server_config(path), init=True)
    assert not (data_dir / "bad.sqlite").exists()  # a configuration refused leaves no ledger behind


# --- data sources (issue 30) -----------------------------------------------------------------------


def _sources_server(directory: Path, text: str) -> Path:
    path = directory / "server.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_one_budget_per_data_source_and_a_total_over_analysts(data_dir, tmp_path):
    shutil.copy(data_dir / "tight.parquet", tmp_path / "a.parquet")
    shutil.copy(data_dir / "example.yaml", tmp_path / "example.yaml")
    path = _sources_server(
        tmp_path,
        """\
store: ledger.sqlite
sources:
  a: {data: a.parquet, total_budget: 1.0}
datasets:
  first: {source: a, config: example.yaml, protection: dp, budget: 0.6}
  second: {data: a.parquet, config: example.yaml, protection: dp, budget: 0.6}
""",
    )
    service = QueryService(load_server_config(path), init=True)
    try:
        assert len(service.sources) == 1
        body = {"aggregate": "count", "epsilon": 0.3}
        service.query("ann", "first", body)
        assert service.budget("ann", "second")["spent"] == pytest.approx(0.3)  # one source, one budget
        service.query("ann", "second", body)
        with pytest.raises(Refused) as refusal:
            service.query("ann", "first", body)
        assert refusal.value.reason == "budget"
        service.query("ben", "second", body)  # 0.9 of the total spent
        with pytest.raises(Refused, match="total budget") as refusal:
            service.query("cat", "first", body)
        assert refusal.value.reason == "total_budget"
        assert service.budget("cat", "first")["total_left"] == pytest.approx(0.1)
    finally:
        service.close()


@pytest.mark.parametrize(
    ("entries", "match"),
    [
        (
            "  x: {data: a.parquet, config: example.yaml, protection: dp, budget: 1.0}\n"
            "  y: {data: a.parquet, config: example.yaml, protection: restriction, min_query_set: 5}\n",
            r"datasets 'x' \(.*server.yaml:\d+\) and 'y' .* under dp and under restriction",
        ),
        (
            "  x: {data: a.parquet, config: example.yaml, protection: dp, budget: 1.0}\n"
            "  y: {data: a.parquet, config: example.yaml, protection: dp, budget: 2.0}\n",
            "different 'budget'",
        ),
        (
            "  x: {data: a.parquet, config: example.yaml, protection: restriction, min_query_set: 5}\n"
            "  y: {data: b.parquet, config: example.yaml, protection: restriction, min_query_set: 6}\n",
            "different 'min_query_set'",
        ),
        (
            "  x: {data: a.parquet, config: example.yaml, protection: restriction, min_query_set: 5, "
            "confidential: [nope]}\n",
            "confidential names 'nope'",
        ),
        (
            "  x: {data: a.parquet, config: example.yaml, protection: camouflage, width: 0.1, "
            "confidential: []}\n",
            "camouflage protects confidential attributes",
        ),
        ("  x: {source: nowhere, config: example.yaml, protection: dp, budget: 1.0}\n", "unknown source"),
    ],
)
def test_data_source_settings_are_checked_before_a_ledger_is_made(data_dir, tmp_path, entries, match):
    shutil.copy(data_dir / "tight.parquet", tmp_path / "a.parquet")
    shutil.copy(data_dir / "tight.parquet", tmp_path / "b.parquet")  # the same content: one source
    shutil.copy(data_dir / "example.yaml", tmp_path / "example.yaml")
    path = _sources_server(tmp_path, "store: ledger.sqlite\ndatasets:\n" + entries)
    with pytest.raises(ConfigError, match=match):
        QueryService(load_server_config(path), init=True)
    assert not (tmp_path / "ledger.sqlite").exists()


def test_mixed_protection_allowed_on_purpose_warns(service):
    assert any("allow_mixed_protection" in warning for warning in service.warnings)


def test_scope_and_strict_measurements_in_process(service):
    with pytest.raises(Refused, match="does not reach dataset 'dp'") as refusal:
        service.query("scoped", "dp", {"aggregate": "count", "epsilon": 0.1}, scope=["restricted"])
    assert refusal.value.reason == "scope"
    assert [d["name"] for d in service.datasets(["restricted"])] == ["restricted"]
    before = service.budget("measured", "gauss")
    for dataset, body in (
        ("gauss", {"aggregate": "count", "epsilon": 100000}),
        ("dp", {"aggregate": "count", "epsilon": 5e-324}),
        ("dp", {"aggregate": "quantile", "column": "birth_year", "quantile": 0.5, "epsilon": 1e-20}),
    ):
        with pytest.raises(QueryError, match="epsilon"):
            service.query("measured", dataset, body)
    assert service.budget("measured", "gauss") == before
    assert service.budget("measured", "dp")["spent"] == 0.0


@pytest.mark.slow
def test_delta_budget_in_process(service):
    body = {"aggregate": "count", "epsilon": 1e-4, "delta": 1e-6}
    for _ in range(100):
        service.query("deltas", "gauss", body)
    with pytest.raises(Refused, match="delta budget exhausted") as refusal:
        service.query("deltas", "gauss", body)
    assert refusal.value.reason == "delta_budget"
    assert service.budget("deltas", "gauss")["delta_spent"] == pytest.approx(1e-4)
