"""The ledger: analysts' API keys, privacy budget spends and answered queries, in SQLite.

The database is in write-ahead-log mode with ``synchronous=FULL``: a committed spend survives a crash
of the process or of the machine. :meth:`Ledger.spend` checks the remaining budget and records the
spend in one ``BEGIN IMMEDIATE`` transaction (the database's write lock is taken before the check),
so two processes or threads cannot both spend the last of a budget; the service commits the spend
before it computes the noisy answer, so no answer is ever released whose spend is not on disk.
Each thread has its own connection; a busy database is waited for (``timeout``).

Keys are ``sdk_`` and 43 characters of a random 32-byte token (:func:`secrets.token_urlsafe`);
the ledger keeps only their SHA-256 and compares with :func:`hmac.compare_digest`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sdckit.errors import ConfigError
from sdckit.query.errors import Refused

#: Slack of the budget comparison (floating-point sums of epsilons).
TOLERANCE = 1e-9

_SCHEMA = """
CREATE TABLE IF NOT EXISTS analysts (
    name TEXT PRIMARY KEY, key_hash TEXT NOT NULL UNIQUE, created REAL NOT NULL, revoked REAL);
CREATE TABLE IF NOT EXISTS spends (
    id INTEGER PRIMARY KEY, analyst TEXT NOT NULL, dataset TEXT NOT NULL, epsilon REAL NOT NULL,
    delta REAL NOT NULL DEFAULT 0, at REAL NOT NULL, query TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS spends_by ON spends (analyst, dataset);
CREATE TABLE IF NOT EXISTS answered (
    id INTEGER PRIMARY KEY, analyst TEXT NOT NULL, dataset TEXT NOT NULL, at REAL NOT NULL,
    query TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS answered_by ON answered (analyst, dataset, id);
"""


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


class Ledger:
    """The SQLite ledger at ``path`` (created if absent)."""

    def __init__(self, path: str | Path, timeout: float = 30.0) -> None:
        self.path = str(path)
        self.timeout = timeout
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        try:
            connection = self._connection()
            connection.executescript(_SCHEMA)
        except sqlite3.Error as error:
            raise ConfigError(f"{self.path}: cannot open the ledger: {error}") from None

    def _connection(self) -> sqlite3.Connection:
        connection = getattr(self._local, "connection", None)
        if connection is None:
            connection = sqlite3.connect(
                self.path, timeout=self.timeout, isolation_level=None, check_same_thread=False
            )
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=FULL")
            connection.execute(f"PRAGMA busy_timeout={int(self.timeout * 1000)}")
            self._local.connection = connection
            with self._lock:
                self._connections.append(connection)
        return connection

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` … ``COMMIT`` (``ROLLBACK`` on any exception)."""
        connection = self._connection()
        connection.execute("BEGIN IMMEDIATE")
        try:
            yield connection
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        connection.execute("COMMIT")

    transaction = _transaction

    def close(self) -> None:
        with self._lock:
            for connection in self._connections:
                connection.close()
            self._connections.clear()
        self._local = threading.local()

    # --- keys ---------------------------------------------------------------------------------

    def add_key(self, name: str) -> str:
        if not name or len(name) > 200 or not name.isprintable():
            raise ConfigError(f"analyst name must be 1 to 200 printable characters, got {name!r:.60}")
        key = "sdk_" + secrets.token_urlsafe(32)
        with self._transaction() as connection:
            row = connection.execute("SELECT revoked FROM analysts WHERE name = ?", (name,)).fetchone()
            if row is not None and row[0] is None:
                raise ConfigError(f"analyst '{name}' already has a key; revoke it first (sdckit keys revoke)")
            connection.execute(
                "INSERT INTO analysts (name, key_hash, created, revoked) VALUES (?, ?, ?, NULL) "
                "ON CONFLICT (name) DO UPDATE SET key_hash = excluded.key_hash, created = "
                "excluded.created, revoked = NULL",
                (name, hash_key(key), time.time()),
            )
        return key

    def revoke_key(self, name: str) -> None:
        with self._transaction() as connection:
            cursor = connection.execute(
                "UPDATE analysts SET revoked = ? WHERE name = ? AND revoked IS NULL", (time.time(), name)
            )
            if cursor.rowcount == 0:
                raise ConfigError(f"no analyst '{name}' with a key to revoke")

    def authenticate(self, key: str) -> str | None:
        if not isinstance(key, str) or not key.startswith("sdk_") or len(key) > 200:
            return None
        digest = hash_key(key)
        row = (
            self._connection()
            .execute("SELECT name, key_hash, revoked FROM analysts WHERE key_hash = ?", (digest,))
            .fetchone()
        )
        if row is None or not hmac.compare_digest(row[1], digest) or row[2] is not None:
            return None
        return row[0]

    def analysts(self) -> list[dict[str, Any]]:
        """Every analyst: ``name``, ``created`` and ``revoked`` (UTC timestamps, None if active)."""
        rows = (
            self._connection().execute("SELECT name, created, revoked FROM analysts ORDER BY name").fetchall()
        )
        return [{"name": name, "created": created, "revoked": revoked} for name, created, revoked in rows]

    # --- budget -------------------------------------------------------------------------------

    def spent(self, analyst: str, dataset: str) -> tuple[float, float]:
        row = (
            self._connection()
            .execute(
                "SELECT COALESCE(SUM(epsilon), 0), COALESCE(SUM(delta), 0) FROM spends WHERE "
                "analyst = ? AND dataset = ?",
                (analyst, dataset),
            )
            .fetchone()
        )
        return float(row[0]), float(row[1])

    def spend(
        self, analyst: str, dataset: str, epsilon: float, budget: float, delta: float = 0.0, query: Any = None
    ) -> float:
        """Record a spend of ``epsilon`` if the budget allows it and return the budget left, or
        raise :class:`Refused` (``reason`` "budget") and record nothing."""
        with self._transaction() as connection:
            spent = connection.execute(
                "SELECT COALESCE(SUM(epsilon), 0) FROM spends WHERE analyst = ? AND dataset = ?",
                (analyst, dataset),
            ).fetchone()[0]
            left = budget - spent
            if epsilon > left + TOLERANCE:
                raise Refused(
                    f"privacy budget exhausted on '{dataset}': this query asks for epsilon {epsilon:g}, "
                    f"{max(left, 0.0):.6g} of {budget:g} is left",
                    reason="budget",
                )
            connection.execute(
                "INSERT INTO spends (analyst, dataset, epsilon, delta, at, query) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    analyst,
                    dataset,
                    float(epsilon),
                    float(delta),
                    time.time(),
                    json.dumps(query, sort_keys=True),
                ),
            )
        return max(left - epsilon, 0.0)

    # --- answered queries (query restriction) -------------------------------------------------

    def answered(
        self, analyst: str, dataset: str, after: int = 0, connection: sqlite3.Connection | None = None
    ) -> list[tuple[int, dict]]:
        """The answered queries (id, body) of an analyst on a dataset with an id above ``after``."""
        rows = (
            (connection or self._connection())
            .execute(
                "SELECT id, query FROM answered WHERE analyst = ? AND dataset = ? AND id > ? ORDER BY id",
                (analyst, dataset, after),
            )
            .fetchall()
        )
        return [(row[0], json.loads(row[1])) for row in rows]

    def record_answer(self, connection: sqlite3.Connection, analyst: str, dataset: str, query: dict) -> int:
        cursor = connection.execute(
            "INSERT INTO answered (analyst, dataset, at, query) VALUES (?, ?, ?, ?)",
            (analyst, dataset, time.time(), json.dumps(query, sort_keys=True)),
        )
        return int(cursor.lastrowid)


__all__ = ["Ledger", "hash_key"]
