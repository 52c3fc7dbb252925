"""A real ``sdckit serve`` on 127.0.0.1 for the query-server attacks' tests (shared by
tests/test_attack_{differencing,tracker,refusal_leak,camouflage_midpoint}.py).

40 records, every one isolated by its public values (region × age: 4 regions of 10 records, ages
20..59 all distinct); confidential income = 1000 + 37·i (all distinct, none the median: the median
of 40 values falls between two) and dropout = Yes for i % 4 == 0 (10 Yes, 30 No). A prior guess
(the median income, the modal dropout No) is right on 0 incomes and 30 dropouts of 40 each: the
baseline of every attack that targets all 40 records on both attributes is 30 of 80.

Each dataset serves its own file (one protection per data source): the same records in another order.

One server serves the four files (the session fixture ``attack_server`` of tests/conftest.py: a
server's start is about 4 s of CPU), each file as its own analyst (:data:`ANALYSTS`): the restriction's
audit is kept per analyst and data source, so no file's queries change what another's are answered,
whatever the order the files run in. The camouflage's intervals depend on the secret and the data only.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from sdckit.config import parse_config

CONFIG_YAML = """\
attributes:
  region:  {role: quasi-identifier, kind: categorical}
  age:     {role: quasi-identifier, kind: numeric}
  income:  {role: sensitive, kind: numeric}
  dropout: {role: sensitive, kind: categorical}
"""

#: name -> (protection settings, the rows' order)
DATASETS = {
    "exact": ("protection: restriction\n    min_query_set: 1", 0),
    "restricted": ("protection: restriction\n    min_query_set: 5", 1),
    "narrow": ("protection: camouflage\n    width: 1.0e-6", 2),
    "wide": ("protection: camouflage\n    width: 0.5", 3),
}


#: One analyst (and key) per test file of the shared server; ``adversary`` is :func:`start`'s ``.key``.
ANALYSTS = ("adversary", "differencing", "tracker", "refusal-leak", "camouflage-midpoint")


def records() -> pl.DataFrame:
    i = list(range(40))
    return pl.DataFrame(
        {
            "region": [("North", "South", "East", "West")[j % 4] for j in i],
            "age": [20 + j for j in i],
            "income": [1000.0 + 37 * j for j in i],
            "dropout": ["Yes" if j % 4 == 0 else "No" for j in i],
        }
    )


def original():
    return parse_config(CONFIG_YAML).read(records())


def start(folder: Path):
    """Write the data, configuration, ledger and a key for each of :data:`ANALYSTS`; start the server;
    return it (``.url``, ``.keys`` by analyst, ``.key`` the adversary's; ``.stop()``)."""
    from tests.test_query_server import Server, cli

    data = records()
    entries = []
    for name, (settings, shift) in DATASETS.items():
        order = list(range(shift, 40)) + list(range(shift))
        data[order].write_csv(folder / f"{name}.csv")
        entries.append(f"  {name}:\n    data: {name}.csv\n    config: people.yaml\n    {settings}\n")
    (folder / "people.yaml").write_text(CONFIG_YAML, encoding="utf-8")
    config = folder / "server.yaml"
    config.write_text(
        "store: ledger.sqlite\nmax_failed_logins: 100000\ndatasets:\n" + "".join(entries), encoding="utf-8"
    )
    status, _, err = cli("ledger", "init", "--config", str(config))
    assert status == 0, err
    # A fixed camouflage secret (the ledger draws a random one): the intervals, and so the rates the
    # camouflage tests expect, are then the same on every run.
    import sqlite3

    with sqlite3.connect(folder / "ledger.sqlite") as connection:
        connection.execute("UPDATE meta SET value = ? WHERE key = 'secret'", ("5e" * 32,))
    keys = {}
    for analyst in ANALYSTS:
        status, out, err = cli("keys", "add", analyst, "--config", str(config), "--all")
        assert status == 0, err
        keys[analyst] = out.strip()
    server = Server(config, folder / "server.log")
    server.start()
    server.keys = keys
    server.key = keys["adversary"]
    return server
