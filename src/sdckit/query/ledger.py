"""The ledger: analysts' API keys and scopes, privacy-budget spends and answered queries, in SQLite.

A ledger is created only on purpose (:meth:`Ledger.create`: ``sdckit ledger init`` or ``sdckit
serve --init``); opening one that is missing, empty, of another format, or whose log does not
verify is refused (:class:`LedgerError`), so that a lost or damaged ledger can never hand analysts
a fresh budget without a word.

What it holds
    ``meta``       its format, a random ledger id, when it was made, the heads of its two logs, and
                   the camouflage secret (32 random bytes: camouflage's set of possible datasets is
                   drawn from it, :mod:`sdckit.query.camouflage`);
    ``sources``    the data sources it serves (SHA-256 of the file's content, the path it was first
                   served from): a configuration whose sources are not registered is refused until
                   ``--init`` registers them (a ledger of another server, or an emptied one);
    ``analysts``   keys (SHA-256 only, compared with :func:`hmac.compare_digest`) and their scope,
                   the dataset entries they reach (``*``: every one);
    ``spends``     every spend of epsilon and delta: analyst, data source, dataset entry, query;
    ``answered``   every query answered under restriction (the audit replays them after a restart);
    ``totals``     the running totals per analyst and source, and per source (analyst ``''``).

The logs are append-only and hash-chained: each row of ``spends`` and of ``answered`` stores the
SHA-256 of the previous row's hash and of its own fields, and ``meta`` keeps the number of rows and
the last hash of each log, updated in the same transaction as the row. Triggers refuse an
``UPDATE`` or ``DELETE`` of a log row; a row removed anyway (or the triggers dropped) breaks the
chain or disagrees with the head, and :meth:`Ledger.verify` — run when the server starts — names
the first bad entry. The totals are checked against the log at the same time, and a spend reads and
updates its totals row instead of summing every earlier spend (constant time per spend).

Durability: rollback journal (``journal_mode=TRUNCATE``) with ``synchronous=FULL``, so that a
committed spend is in the database file itself before the answer is released — deleting a journal
after a crash cannot take committed spends away, as deleting a write-ahead log could. The check of
the budget and the row that records the spend are one ``BEGIN IMMEDIATE`` transaction: two
processes or threads cannot both spend the last of a budget. Connections come from a bounded pool
(one per concurrent caller, reused), so that a server whose worker threads come and go does not
accumulate connections and their page caches. The file and its journal are created mode 0600.

Keys are ``sdk_`` and 43 characters of a random 32-byte token (:func:`secrets.token_urlsafe`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import os
import queue
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, cast

from sdckit.errors import ConfigError
from sdckit.params import spell
from sdckit.query.errors import Refused

#: Slack of the budget comparison (floating-point sums of epsilons).
TOLERANCE = 1e-9

#: The ledger's format; a ledger of another format is refused with a message.
FORMAT = "sdckit-ledger-2"

#: The hash before the first row of a log.
GENESIS = "0" * 64

#: Every scope: the key reaches every dataset entry of the server.
ALL = "*"

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE sources (id TEXT PRIMARY KEY, path TEXT NOT NULL, registered REAL NOT NULL);
CREATE TABLE analysts (
    name TEXT PRIMARY KEY, key_hash TEXT NOT NULL UNIQUE, created REAL NOT NULL, revoked REAL,
    scope TEXT NOT NULL);
CREATE TABLE spends (
    id INTEGER PRIMARY KEY, analyst TEXT NOT NULL, source TEXT NOT NULL, dataset TEXT NOT NULL,
    epsilon REAL NOT NULL, delta REAL NOT NULL, at REAL NOT NULL, query TEXT NOT NULL,
    hash TEXT NOT NULL);
CREATE TABLE answered (
    id INTEGER PRIMARY KEY, analyst TEXT NOT NULL, source TEXT NOT NULL, dataset TEXT NOT NULL,
    at REAL NOT NULL, query TEXT NOT NULL, hash TEXT NOT NULL);
CREATE INDEX answered_by ON answered (analyst, source, id);
CREATE TABLE totals (
    analyst TEXT NOT NULL, source TEXT NOT NULL, epsilon REAL NOT NULL, delta REAL NOT NULL,
    PRIMARY KEY (analyst, source));
CREATE TRIGGER spends_append_only_update BEFORE UPDATE ON spends
    BEGIN SELECT RAISE(ABORT, 'the ledger''s spends are append-only'); END;
CREATE TRIGGER spends_append_only_delete BEFORE DELETE ON spends
    BEGIN SELECT RAISE(ABORT, 'the ledger''s spends are append-only'); END;
CREATE TRIGGER answered_append_only_update BEFORE UPDATE ON answered
    BEGIN SELECT RAISE(ABORT, 'the ledger''s answered queries are append-only'); END;
CREATE TRIGGER answered_append_only_delete BEFORE DELETE ON answered
    BEGIN SELECT RAISE(ABORT, 'the ledger''s answered queries are append-only'); END;
"""

#: The fields of a log row that its hash covers, in order.
_LOGS = {
    "spends": ("analyst", "source", "dataset", "epsilon", "delta", "at", "query"),
    "answered": ("analyst", "source", "dataset", "at", "query"),
}


class LedgerError(ConfigError):
    """A ledger that is missing, empty, foreign, damaged or tampered with: the server does not start."""


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def _row_hash(previous: str, values: tuple[Any, ...]) -> str:
    """SHA-256 of the previous hash and a row's fields: text length-prefixed, numbers by ``repr``
    (exact for the doubles SQLite gives back), so that no two rows encode alike."""
    parts = [f"{len(value)}:{value}" if isinstance(value, str) else repr(float(value)) for value in values]
    return hashlib.sha256("\x1f".join([previous, *parts]).encode("utf-8", "surrogatepass")).hexdigest()


def _create_private(path: Path) -> None:
    """Create an empty file readable by its owner only (0600), refusing one that exists."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.close(descriptor)


class Ledger:
    """The SQLite ledger at ``path``, opened (it must exist: :meth:`create` makes one).

    Parameters
    ----------
    path : str or Path
        The ledger file (the server configuration's ``store``).
    timeout : float, default=30.0
        Seconds to wait for the database's write lock held by another connection.
    pool : int, default=16
        Most connections kept open at once; callers beyond wait for one.
    verify : bool, default=True
        Check the logs' chains and the totals before use (:meth:`verify`).
    """

    def __init__(self, path: str | Path, timeout: float = 30.0, pool: int = 16, verify: bool = True) -> None:
        self.path = str(path)
        self.timeout = timeout
        location = Path(self.path)
        if not location.exists():
            raise LedgerError(
                f"{self.path}: no ledger here: create it on purpose with 'sdckit ledger init' (or "
                "'sdckit serve --init'); a ledger is never created silently, so that a lost one cannot "
                "give analysts a fresh budget"
            )
        if location.is_dir():
            raise LedgerError(f"{self.path}: the ledger is a directory, not a file")
        if location.stat().st_size == 0:
            raise LedgerError(
                f"{self.path}: the ledger is empty (0 bytes): it was truncated or replaced; restore it "
                "from a backup (sdckit ledger backup), or start a new one on purpose with "
                "'sdckit ledger init' after moving this file away"
            )
        self._pool: queue.LifoQueue[sqlite3.Connection] = queue.LifoQueue()
        self._slots = threading.BoundedSemaphore(pool)
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._local = threading.local()
        try:
            with self._connection() as connection:
                meta = self._meta(connection)
        except sqlite3.DatabaseError as error:
            self.close()
            raise LedgerError(f"{self.path}: the ledger cannot be read: {error}") from None
        if meta.get("format") != FORMAT:
            self.close()
            found = meta.get("format") or "no sdckit ledger (its tables are missing)"
            raise LedgerError(
                f"{self.path}: not a ledger of this sdckit ({found}; expected {FORMAT}): start a new one "
                "on purpose with 'sdckit ledger init' after moving this file away"
            )
        self.id = meta["ledger_id"]
        self.secret = bytes.fromhex(meta["secret"])
        if verify:
            try:
                self.verify()
            except BaseException:
                self.close()
                raise

    # --- creation -------------------------------------------------------------------------------

    @classmethod
    def create(cls, path: str | Path) -> Ledger:
        """Make a new, empty ledger at ``path`` (mode 0600) and open it; refuse if a file is there."""
        location = Path(path)
        if not location.parent.is_dir():
            raise ConfigError(f"{location}: the folder of the ledger does not exist")
        journal = Path(f"{location}-journal")
        journal_existed = journal.exists()
        try:
            _create_private(location)
        except FileExistsError:
            raise LedgerError(
                f"{location}: a ledger (or another file) is already there: it is never overwritten"
            ) from None
        except OSError as error:
            raise ConfigError(f"{location}: cannot create the ledger: {error.strerror}") from None
        try:
            connection = sqlite3.connect(str(location), isolation_level=None)
            try:
                connection.execute("PRAGMA journal_mode=TRUNCATE")
                values = {
                    "format": FORMAT,
                    "ledger_id": secrets.token_hex(16),
                    "created": repr(time.time()),
                    "secret": secrets.token_hex(32),
                    "spends_count": "0",
                    "spends_head": GENESIS,
                    "answered_count": "0",
                    "answered_head": GENESIS,
                }  # hex digits, digits and a fixed name: safe as SQL literals
                inserts = "".join(f"INSERT INTO meta VALUES ('{k}', '{v}');" for k, v in values.items())
                connection.executescript(f"BEGIN IMMEDIATE; {_SCHEMA} {inserts} COMMIT;")
            finally:
                connection.close()
            return cls(location)
        except BaseException as error:
            # nothing of a ledger that could not be made stays behind: not a 0-byte file, not its
            # journal (one that was there before is left alone)
            location.unlink(missing_ok=True)
            if not journal_existed:
                journal.unlink(missing_ok=True)
            if isinstance(error, sqlite3.Error):
                raise ConfigError(f"{location}: cannot create the ledger: {error}") from None
            raise

    # --- connections ----------------------------------------------------------------------------

    def _open(self) -> sqlite3.Connection:
        connection = sqlite3.connect(
            self.path, timeout=self.timeout, isolation_level=None, check_same_thread=False
        )
        connection.execute("PRAGMA journal_mode=TRUNCATE")
        connection.execute("PRAGMA synchronous=FULL")
        connection.execute(f"PRAGMA busy_timeout={int(self.timeout * 1000)}")
        with self._lock:
            self._all.append(connection)
        return connection

    @contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        """A connection from the pool (the same one for nested uses in one thread)."""
        held = getattr(self._local, "held", None)
        if held is not None:
            yield held
            return
        self._slots.acquire()
        try:
            try:
                connection = self._pool.get_nowait()
            except queue.Empty:
                connection = self._open()
            self._local.held = connection
            try:
                yield connection
            finally:
                self._local.held = None
                if connection.in_transaction:  # never hand a connection on mid-transaction
                    with suppress(sqlite3.Error):
                        connection.execute("ROLLBACK")
                self._pool.put(connection)
        finally:
            self._slots.release()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` … ``COMMIT`` (``ROLLBACK`` on any exception)."""
        with self._connection() as connection:
            try:
                connection.execute("BEGIN IMMEDIATE")
                try:
                    yield connection
                except BaseException:
                    if connection.in_transaction:  # SQLite rolls back itself after a failed write
                        with suppress(sqlite3.Error):
                            connection.execute("ROLLBACK")
                    raise
                connection.execute("COMMIT")
            except sqlite3.OperationalError as error:
                # a full disk, a folder that became read-only, a lock held too long: one message
                # naming the ledger; nothing of the transaction was recorded
                if connection.in_transaction:
                    with suppress(sqlite3.Error):
                        connection.execute("ROLLBACK")
                raise LedgerError(
                    f"{self.path}: cannot write the ledger ({error}): nothing was recorded"
                ) from None

    def close(self) -> None:
        with self._lock:
            for connection in self._all:
                with suppress(sqlite3.Error):
                    connection.close()
            self._all.clear()
        self._pool = queue.LifoQueue()

    @staticmethod
    def _meta(connection: sqlite3.Connection) -> dict[str, str]:
        found = connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
        ).fetchone()
        if found is None:
            return {}
        return dict(connection.execute("SELECT key, value FROM meta").fetchall())

    # --- verification ---------------------------------------------------------------------------

    def verify(self) -> dict[str, int]:
        """Check the database, both logs' hash chains against their heads, and the running totals
        against the spends; raise :class:`LedgerError` naming the first bad entry. Returns the
        number of rows of each log."""
        with self._connection() as connection:
            try:
                problem = connection.execute("PRAGMA quick_check").fetchone()[0]
                if problem != "ok":
                    raise LedgerError(
                        f"{self.path}: the ledger cannot be read: its database is damaged ({problem})"
                    )
                meta = self._meta(connection)
                counts = {}
                sums: dict[tuple[str, str], list[float]] = {}
                for log, fields in _LOGS.items():
                    previous, count = GENESIS, 0
                    cursor = connection.execute(
                        f"SELECT id, {', '.join(fields)}, hash FROM {log} ORDER BY id"
                    )
                    try:  # the cursor is closed even on a bad entry: an open one would keep its lock
                        while batch := cursor.fetchmany(4096):
                            for row in batch:
                                expected = _row_hash(previous, tuple(row[1:-1]))
                                if row[-1] != expected:
                                    raise LedgerError(
                                        f"{self.path}: the ledger's log '{log}' is broken at entry {row[0]} "
                                        f"(number {count + 1} of its chain): an earlier entry was removed or "
                                        "an entry was changed. The server does not start: restore the "
                                        "ledger from a backup"
                                    )
                                previous, count = expected, count + 1
                                if log == "spends":
                                    for key in ((row[1], row[2]), ("", row[2])):
                                        total = sums.setdefault(key, [0.0, 0.0])
                                        total[0] += row[4]
                                        total[1] += row[5]
                    finally:
                        cursor.close()
                    if str(count) != meta.get(f"{log}_count") or previous != meta.get(f"{log}_head"):
                        raise LedgerError(
                            f"{self.path}: the ledger's log '{log}' holds {count} entries but its head "
                            f"records {meta.get(f'{log}_count')}: its last entries were removed. The "
                            "server does not start: restore the ledger from a backup"
                        )
                    counts[log] = count
                totals = {
                    (analyst, source): (epsilon, delta)
                    for analyst, source, epsilon, delta in connection.execute(
                        "SELECT analyst, source, epsilon, delta FROM totals"
                    ).fetchall()
                }
            except sqlite3.DatabaseError as error:
                raise LedgerError(f"{self.path}: the ledger cannot be read: {error}") from None
        if set(totals) != set(sums) or any(
            not math.isclose(totals[key][0], sums[key][0], rel_tol=1e-9, abs_tol=1e-12)
            or not math.isclose(totals[key][1], sums[key][1], rel_tol=1e-9, abs_tol=1e-15)
            for key in sums
        ):
            raise LedgerError(
                f"{self.path}: the ledger's running totals disagree with its spends: the server does not "
                "start: restore the ledger from a backup"
            )
        return counts

    def _append(self, connection: sqlite3.Connection, log: str, values: tuple[Any, ...]) -> int:
        """Add one row to a log, chained to the head, and move the head (inside a transaction)."""
        meta = dict(
            connection.execute(
                "SELECT key, value FROM meta WHERE key IN (?, ?)", (f"{log}_count", f"{log}_head")
            ).fetchall()
        )
        digest = _row_hash(meta[f"{log}_head"], values)
        fields = _LOGS[log]
        cursor = connection.execute(
            f"INSERT INTO {log} ({', '.join(fields)}, hash) VALUES ({', '.join('?' * (len(fields) + 1))})",
            (*values, digest),
        )
        connection.execute("UPDATE meta SET value = ? WHERE key = ?", (digest, f"{log}_head"))
        connection.execute(
            "UPDATE meta SET value = ? WHERE key = ?", (str(int(meta[f"{log}_count"]) + 1), f"{log}_count")
        )
        return cast(int, cursor.lastrowid)  # sqlite3 sets it after every INSERT

    # --- data sources ---------------------------------------------------------------------------

    def sources(self) -> dict[str, str]:
        """The registered data sources: content hash → the path first served from."""
        with self._connection() as connection:
            return dict(connection.execute("SELECT id, path FROM sources").fetchall())

    def register(self, sources: dict[str, str]) -> list[str]:
        """Register data sources (hash → path); returns the hashes that were new."""
        with self.transaction() as connection:
            known = {row[0] for row in connection.execute("SELECT id FROM sources")}
            new = [key for key in sources if key not in known]
            for key in new:
                connection.execute(
                    "INSERT INTO sources (id, path, registered) VALUES (?, ?, ?)",
                    (key, sources[key], time.time()),
                )
        return new

    # --- keys -----------------------------------------------------------------------------------

    def add_key(self, name: str, scope: list[str] | str) -> str:
        """A new key for analyst ``name`` reaching the dataset entries ``scope`` (or :data:`ALL`)."""
        if not name or len(name) > 200 or not name.isprintable():
            raise ConfigError(f"analyst name must be 1 to 200 printable characters, got {name!r:.60}")
        if scope != ALL and (not isinstance(scope, list) or not scope):
            raise ConfigError(
                f"a key needs a scope: one or more datasets, or every dataset ({spell('ALL', '--all')})"
            )
        key = "sdk_" + secrets.token_urlsafe(32)
        stored = ALL if scope == ALL else json.dumps(sorted(set(scope)))
        with self.transaction() as connection:
            row = connection.execute("SELECT revoked FROM analysts WHERE name = ?", (name,)).fetchone()
            if row is not None and row[0] is None:
                raise ConfigError(f"analyst '{name}' already has a key; revoke it first (sdckit keys revoke)")
            connection.execute(
                "INSERT INTO analysts (name, key_hash, created, revoked, scope) VALUES (?, ?, ?, NULL, ?) "
                "ON CONFLICT (name) DO UPDATE SET key_hash = excluded.key_hash, created = "
                "excluded.created, revoked = NULL, scope = excluded.scope",
                (name, hash_key(key), time.time(), stored),
            )
        return key

    def revoke_key(self, name: str) -> None:
        with self.transaction() as connection:
            cursor = connection.execute(
                "UPDATE analysts SET revoked = ? WHERE name = ? AND revoked IS NULL", (time.time(), name)
            )
            if cursor.rowcount == 0:
                raise ConfigError(f"no analyst '{name}' with a key to revoke")

    def authenticate(self, key: str) -> tuple[str, list[str] | str] | None:
        """``(name, scope)`` of a valid, unrevoked key, else None."""
        if not isinstance(key, str) or not key.startswith("sdk_") or len(key) > 200:
            return None
        digest = hash_key(key)
        with self._connection() as connection:
            row = connection.execute(
                "SELECT name, key_hash, revoked, scope FROM analysts WHERE key_hash = ?", (digest,)
            ).fetchone()
        if row is None or not hmac.compare_digest(row[1], digest) or row[2] is not None:
            return None
        return row[0], ALL if row[3] == ALL else json.loads(row[3])

    def analysts(self) -> list[dict[str, Any]]:
        """Every analyst: ``name``, ``created``, ``revoked`` (UTC timestamps, None if active), ``scope``."""
        with self._connection() as connection:
            rows = connection.execute(
                "SELECT name, created, revoked, scope FROM analysts ORDER BY name"
            ).fetchall()
        return [
            {
                "name": name,
                "created": created,
                "revoked": revoked,
                "scope": ALL if scope == ALL else json.loads(scope),
            }
            for name, created, revoked, scope in rows
        ]

    # --- budget ---------------------------------------------------------------------------------

    def spent(self, analyst: str, source: str) -> tuple[float, float]:
        """(epsilon, delta) spent by ``analyst`` on ``source`` (``analyst=''``: by everyone)."""
        with self._connection() as connection:
            row = connection.execute(
                "SELECT epsilon, delta FROM totals WHERE analyst = ? AND source = ?", (analyst, source)
            ).fetchone()
        return (float(row[0]), float(row[1])) if row else (0.0, 0.0)

    @contextmanager
    def spending(
        self,
        analyst: str,
        source: str,
        dataset: str,
        epsilon: float,
        delta: float,
        budget: float,
        delta_budget: float | None = None,
        total_budget: float | None = None,
        query: Any = None,
    ) -> Iterator[dict[str, float | None]]:
        """Record a spend if every budget allows it, inside a transaction that commits when the
        block ends without an error (the caller draws the noise in the block: an answer that
        cannot be computed charges nothing) and rolls back otherwise.

        Raises :class:`Refused` (``reason`` "budget", "delta_budget" or "total_budget") and records
        nothing when the analyst's epsilon budget on the source, their delta budget, or the
        source's total budget over all analysts would be exceeded. Yields ``{"left", "delta_left"}``.
        """
        with self.transaction() as connection:

            def total(who: str) -> tuple[float, float]:
                row = connection.execute(
                    "SELECT epsilon, delta FROM totals WHERE analyst = ? AND source = ?", (who, source)
                ).fetchone()
                return (float(row[0]), float(row[1])) if row else (0.0, 0.0)

            spent_epsilon, spent_delta = total(analyst)
            left = budget - spent_epsilon
            if epsilon > left + TOLERANCE:
                raise Refused(
                    f"privacy budget exhausted on '{dataset}': this query asks for epsilon {epsilon:g}, "
                    f"{max(left, 0.0):.6g} of {budget:g} is left (the budget belongs to the data source, "
                    "shared by every dataset that serves it)",
                    reason="budget",
                )
            delta_left = None
            if delta_budget is not None:
                delta_left = delta_budget - spent_delta
                if delta > delta_left * (1 + TOLERANCE) + 1e-300:
                    raise Refused(
                        f"delta budget exhausted on '{dataset}': this query asks for delta {delta:g}, "
                        f"{max(delta_left, 0.0):.6g} of {delta_budget:g} is left",
                        reason="delta_budget",
                    )
            if total_budget is not None:
                everyone = total("")[0]
                if epsilon > total_budget - everyone + TOLERANCE:
                    raise Refused(
                        f"the data source of '{dataset}' has spent its total budget over all analysts: "
                        f"this query asks for epsilon {epsilon:g}, "
                        f"{max(total_budget - everyone, 0.0):.6g} of {total_budget:g} is left",
                        reason="total_budget",
                    )
            now = time.time()
            self._append(
                connection,
                "spends",
                (
                    analyst,
                    source,
                    dataset,
                    float(epsilon),
                    float(delta),
                    now,
                    json.dumps(query, sort_keys=True),
                ),
            )
            for who in (analyst, ""):
                connection.execute(
                    "INSERT INTO totals (analyst, source, epsilon, delta) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (analyst, source) DO UPDATE SET epsilon = epsilon + excluded.epsilon, "
                    "delta = delta + excluded.delta",
                    (who, source, float(epsilon), float(delta)),
                )
            yield {
                "left": max(left - epsilon, 0.0),
                "delta_left": None if delta_left is None else max(delta_left - delta, 0.0),
            }

    # --- answered queries (query restriction) ---------------------------------------------------

    def answered(
        self, analyst: str, source: str, after: int = 0, connection: sqlite3.Connection | None = None
    ) -> list[tuple[int, str, dict]]:
        """The answered queries (id, dataset entry, body) of an analyst on a source after ``after``."""

        def read(c: sqlite3.Connection) -> list[tuple[int, str, dict]]:
            rows = c.execute(
                "SELECT id, dataset, query FROM answered WHERE analyst = ? AND source = ? AND id > ? "
                "ORDER BY id",
                (analyst, source, after),
            ).fetchall()
            return [(row[0], row[1], json.loads(row[2])) for row in rows]

        if connection is not None:
            return read(connection)
        with self._connection() as c:
            return read(c)

    def record_answer(
        self, connection: sqlite3.Connection, analyst: str, source: str, dataset: str, query: dict
    ) -> int:
        return self._append(
            connection, "answered", (analyst, source, dataset, time.time(), json.dumps(query, sort_keys=True))
        )

    # --- backup ---------------------------------------------------------------------------------

    def backup(self, target: str | Path) -> None:
        """A consistent copy of the ledger at ``target`` (mode 0600), by SQLite's online backup;
        refuses an existing file. The copy is written under a temporary name and renamed."""
        target = Path(target)
        if target.exists():
            raise ConfigError(f"{target}: a file is already there: a backup never overwrites one")
        if not target.parent.is_dir():
            raise ConfigError(f"{target}: its folder does not exist")
        partial = target.with_name(f".{target.name}.{secrets.token_hex(4)}.partial")
        try:
            _create_private(partial)
            copy = sqlite3.connect(str(partial))
            try:
                with self._connection() as connection:
                    connection.backup(copy)
            finally:
                copy.close()
            os.replace(partial, target)
        except OSError as error:
            raise ConfigError(f"{target}: cannot write the backup: {error.strerror}") from None
        finally:
            partial.unlink(missing_ok=True)


__all__ = ["ALL", "FORMAT", "Ledger", "LedgerError", "hash_key"]
