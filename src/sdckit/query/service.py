"""The query service: configuration, data sources, protections and the ledger behind one object.

The HTTP server (:mod:`sdckit.query.server`) and the tests call only this class. Every dataset is
read once when the service starts (:class:`~sdckit.query.engine.Engine`), read-only. Budgets, the
restriction audit and camouflage belong to the **data source** — the data file by its content
(:func:`~sdckit.query.config.group_sources`) — so that two entries over one file share one budget,
one audit history per analyst and one set of possible datasets.

Order of work for a query: check the key's scope → parse and check the query
(:mod:`sdckit.query.language`) → compute the exact statistics → for dp, build and calibrate the
measurements and draw the noise (a failure here is a 400 and spends nothing), then record the spend
in the ledger (committed) and only then release the answer; for restriction, compute the audit rows
from the public attributes, audit them against the answered ones and record the answer in the same
ledger transaction; for camouflage, answer from the set of possible datasets.
"""

from __future__ import annotations

import itertools
import logging
import math
import threading
from typing import Any, cast

import numpy as np

from sdckit.config import load_config
from sdckit.errors import ConfigError
from sdckit.query import dp as privacy
from sdckit.query.camouflage import Camouflage
from sdckit.query.config import DatasetConfig, DataSource, ServerConfig, group_sources
from sdckit.query.engine import MAX_GROUPS, Engine
from sdckit.query.errors import QueryError, Refused, UnknownDataset
from sdckit.query.language import Query, check_query, parse_query
from sdckit.query.ledger import ALL, Ledger, LedgerError
from sdckit.query.restriction import Auditor, AuditRows, audit_rows, check_restricted_query
from sdckit.table import Kind

logger = logging.getLogger("sdckit.query.service")


class _Dataset:
    def __init__(self, settings: DatasetConfig, source: DataSource) -> None:
        self.settings = settings
        self.source = source
        where = settings.location
        table = load_config(settings.config).read(settings.data)
        self.engine = Engine(table)
        for name, _ in settings.bounds.items():
            if name not in self.engine.kinds or self.engine.types[name] != "number":
                raise ConfigError(
                    f"{where}: dataset '{settings.name}': bounds name '{name}', which is not a "
                    "numeric attribute"
                )
        self.domains: dict[str, list[Any]] = {}
        for name, attribute in self.engine.attributes.items():
            if attribute.kind in (Kind.CATEGORICAL, Kind.ORDINAL) and attribute.value_weights:
                self.domains[name] = list(attribute.value_weights)
        for name, values in settings.domains.items():
            if name not in self.engine.kinds or self.engine.kinds[name] not in (
                Kind.CATEGORICAL,
                Kind.ORDINAL,
            ):
                raise ConfigError(
                    f"{where}: dataset '{settings.name}': domains name '{name}', which is not a "
                    "categorical attribute"
                )
            self.domains[name] = values
        for name, values in self.domains.items():
            kind = self.engine.types[name]
            if kind == "text":
                self.domains[name] = list(dict.fromkeys(str(v) for v in values))
            elif any(isinstance(v, str) for v in values):
                raise ConfigError(
                    f"{where}: dataset '{settings.name}': the domain of the numeric column '{name}' "
                    "must be numbers"
                )
        self.confidential: tuple[str, ...] = ()
        if settings.protection != "dp":
            listed = settings.confidential
            for name in listed or ():
                if name not in self.engine.kinds:
                    raise ConfigError(
                        f"{where}: dataset '{settings.name}': confidential names '{name}', which is not "
                        "a served attribute of its attribute configuration"
                    )
            self.confidential = tuple(listed if listed is not None else self.engine.confidential)
            if settings.protection == "camouflage" and not self.confidential:
                raise ConfigError(
                    f"{where}: dataset '{settings.name}': camouflage protects confidential attributes "
                    "and this dataset has none: give attributes the role sensitive in its attribute "
                    "configuration, or list them under 'confidential'"
                )
            if settings.protection == "camouflage":
                # checked here, before the ledger is opened (the camouflage itself needs its secret)
                for name in self.confidential:
                    kind, column_type = self.engine.kinds[name], self.engine.types[name]
                    if not (
                        (kind is Kind.NUMERIC and column_type == "number")
                        or (kind in (Kind.CATEGORICAL, Kind.ORDINAL) and column_type in ("number", "text"))
                    ):
                        raise ConfigError(
                            f"{where}: dataset '{settings.name}': confidential attribute '{name}' is "
                            f"{kind.value} ({column_type}); camouflage protects numeric and categorical "
                            "or ordinal attributes"
                        )

    def describe(self) -> dict[str, Any]:
        s = self.settings
        attributes = []
        for name, kind in self.engine.kinds.items():
            entry: dict[str, Any] = {"name": name, "kind": kind.value, "type": self.engine.types[name]}
            if name in s.bounds:
                entry["bounds"] = list(s.bounds[name])
            if name in self.domains:
                entry["domain"] = self.domains[name]
            attributes.append(entry)
        out: dict[str, Any] = {
            "name": s.name,
            "protection": s.protection,
            "records": self.engine.records,
            "attributes": attributes,
            "source": self.source.id,
        }
        if s.protection == "dp":
            out.update(budget=s.budget, mechanism=s.mechanism, neighbours=privacy.NEIGHBOURS)
            for key in ("delta", "delta_budget", "max_epsilon_per_query"):
                if getattr(s, key) is not None:
                    out[key] = getattr(s, key)
            if self.source.settings.total_budget is not None:
                out["total_budget"] = self.source.settings.total_budget
        elif s.protection == "restriction":
            out["min_query_set"] = s.min_query_set
            out["confidential"] = list(self.confidential)
        else:
            out.update(width=s.width, decoys=s.decoys, confidential=list(self.confidential))
        return out


class QueryService:
    """Answers analysts' queries on the configured datasets under their protection.

    Parameters
    ----------
    server_config : ServerConfig
        From :func:`sdckit.query.config.load_server_config`.

    Raises (from the methods)
    ------
    QueryError
        A malformed query (HTTP 400/422).
    Refused
        A valid query the protection or budget does not allow (HTTP 403); nothing is spent.
    UnknownDataset
        A dataset that is not served (HTTP 404).
    """

    def __init__(self, server_config: ServerConfig, init: bool = False) -> None:
        self.server_config = server_config
        self.sources, self.warnings = group_sources(server_config)
        owner = {name: source for source in self.sources.values() for name in source.entries}
        self._datasets = {
            name: _Dataset(settings, owner[name]) for name, settings in server_config.datasets.items()
        }
        for d in self._datasets.values():
            self._check_shared(d)
        # the ledger last: a configuration that is refused leaves no ledger behind; one this start
        # creates (--init) is removed again if the start fails (:meth:`discard`)
        store = server_config.store
        self._created = [
            path
            for path in (store, store.with_name(f"{store.name}-journal"))
            if init and not store.exists() and not path.exists()
        ]
        self.ledger = _open_ledger(server_config, self.sources, init)
        try:
            self._camouflage_of: dict[str, Camouflage] = {}
            for d in self._datasets.values():
                if d.settings.protection == "camouflage" and d.source.id not in self._camouflage_of:
                    self._camouflage_of[d.source.id] = Camouflage(
                        d.engine,
                        d.confidential,
                        float(d.settings.width),  # type: ignore[arg-type]
                        d.settings.decoys,
                        self.ledger.secret,
                        d.source.id,
                        d.domains,
                    )
        except BaseException:
            self.discard()
            raise
        self._auditors: dict[tuple[str, str], Auditor] = {}
        self._audit_lock = threading.Lock()

    def _check_shared(self, d: _Dataset) -> None:
        """Two entries of one protection over one source must protect the same attributes."""
        for other in self._datasets.values():
            if (
                other is d
                or other.source.id != d.source.id
                or other.settings.protection != d.settings.protection
            ):
                continue
            if other.confidential != d.confidential:
                raise ConfigError(
                    f"{d.settings.location}: datasets '{other.settings.name}' and '{d.settings.name}' serve "
                    f"the same data under {d.settings.protection} with different confidential attributes "
                    f"({', '.join(other.confidential) or 'none'} and {', '.join(d.confidential) or 'none'}): "
                    "the audit and the camouflage belong to the data source; declare the same "
                    "'confidential' on both"
                )
            return

    # --- catalogue ----------------------------------------------------------------------------

    def _reachable(self, scope: list[str] | str) -> list[str]:
        return [name for name in self._datasets if scope == ALL or name in scope]

    def _get(self, name: str, scope: list[str] | str = ALL, analyst: str = "") -> _Dataset:
        if not isinstance(name, str) or name not in self._datasets:
            raise UnknownDataset(str(name)[:100], self._reachable(scope))
        if scope != ALL and name not in scope:
            reach = ", ".join(self._reachable(scope)) or "none"
            raise Refused(
                f"the key of '{analyst}' does not reach dataset '{name}' (its datasets: {reach}); "
                "ask the data steward for a key that names it (sdckit keys add --dataset)",
                reason="scope",
            )
        return self._datasets[name]

    def datasets(self, scope: list[str] | str = ALL) -> list[dict]:
        """Name, protection and number of attributes of each dataset the scope reaches."""
        return [
            {"name": name, "protection": d.settings.protection, "attributes": len(d.engine.kinds)}
            for name, d in self._datasets.items()
            if scope == ALL or name in scope
        ]

    def dataset(self, name: str, scope: list[str] | str = ALL, analyst: str = "") -> dict:
        """Schema, protection, bounds and declared domains of one dataset (no data values)."""
        return self._get(name, scope, analyst).describe()

    def budget(self, analyst: str, dataset: str, scope: list[str] | str = ALL) -> dict:
        """``{"dataset", "protection", "budget", "spent", "left"}`` of the analyst on the dataset's data
        source (budget and left are None for a dataset not protected by dp)."""
        d = self._get(dataset, scope, analyst)
        if d.settings.protection != "dp":
            return {
                "dataset": dataset,
                "protection": d.settings.protection,
                "budget": None,
                "spent": 0.0,
                "left": None,
            }
        spent, delta = self.ledger.spent(analyst, d.source.id)
        out: dict[str, Any] = {
            "dataset": dataset,
            "protection": "dp",
            "budget": d.settings.budget,
            "spent": spent,
            "left": max(d.settings.budget - spent, 0.0),  # type: ignore[operator]
            "source": d.source.id,
        }
        if d.settings.delta_budget is not None:
            out.update(delta_budget=d.settings.delta_budget, delta_spent=delta)
            out["delta_left"] = max(d.settings.delta_budget - delta, 0.0)
        total = d.source.settings.total_budget
        if total is not None:
            out.update(total_budget=total, total_left=max(total - self.ledger.spent("", d.source.id)[0], 0.0))
        return out

    # --- keys ---------------------------------------------------------------------------------

    def add_key(self, name: str, scope: list[str] | str = ALL) -> str:
        """Create an analyst reaching the dataset entries ``scope`` (or every one, :data:`ALL`) and
        return their new API key (shown once, stored hashed)."""
        if scope != ALL:
            for dataset in scope:
                if dataset not in self._datasets:
                    raise ConfigError(
                        f"no dataset '{dataset}' in the server configuration (datasets: "
                        f"{', '.join(self._datasets)})"
                    )
        return self.ledger.add_key(name, scope)

    def revoke_key(self, name: str) -> None:
        """Revoke an analyst's key."""
        self.ledger.revoke_key(name)

    def authenticate(self, key: str) -> tuple[str, list[str] | str] | None:
        """``(name, scope)`` of a valid, unrevoked key, else None."""
        return self.ledger.authenticate(key)

    def close(self) -> None:
        """Close the ledger's connections."""
        self.ledger.close()

    def discard(self) -> None:
        """Close the ledger and remove it if this service created it (``init`` on a missing ledger):
        for a start that fails before the server serves. A ledger that was there before is kept."""
        self.ledger.close()
        for path in self._created:
            path.unlink(missing_ok=True)
        self._created = []

    # --- queries ------------------------------------------------------------------------------

    def query(self, analyst: str, dataset: str, body: dict, scope: list[str] | str = ALL) -> dict:
        """Answer one query of ``analyst`` (whose key reaches ``scope``).

        Returns ``{"value", "epsilon_spent", "budget_left"}``, or ``{"groups": [{"key": {...},
        "value": ...}], "epsilon_spent", "budget_left"}``, or ``{"lower", "upper"}`` (camouflage;
        ``{"groups": [{"key", "lower", "upper"}]}`` with groups). A refusal is logged (analyst,
        dataset, reason; never the query's values or an answer).
        """
        try:
            d = self._get(dataset, scope, analyst)
            query = parse_query(body)
            engine = d.engine
            check_query(query, engine.kinds, engine.types, d.settings.protection)
            if d.settings.protection == "dp":
                return self._dp(analyst, d, query)
            if d.settings.protection == "restriction":
                return self._restriction(analyst, d, query)
            return self._camouflage(d, query)
        except Refused as refusal:
            logger.warning(
                "refused: analyst %r, dataset %r, reason %s", analyst, dataset[:100], refusal.reason
            )
            raise

    def _keys(self, d: _Dataset, query: Query, dp: bool) -> list[tuple] | None:
        by = list(query.group_by)
        if query.aggregate == "histogram" and query.bins is None:
            by = [query.measured]
        if not by:
            return None
        domains = []
        for name in by:
            if name in d.domains:
                domains.append(d.domains[name])
            elif name in d.confidential and d.settings.protection == "restriction":
                # the keys of a confidential column must not come from the data: which keys
                # occur would change the audit's rows, and so its decisions
                raise Refused(
                    f"group_by '{name}' is confidential: its keys must be declared, not taken from the "
                    f"data: add domains: {{{name}: [...]}} to dataset '{d.settings.name}' in the server "
                    "configuration (or values in its attribute configuration)",
                    reason="no_domain",
                )
            elif dp:
                raise Refused(
                    f"group_by '{name}' under differential privacy needs the keys declared, not "
                    "taken from the data: "
                    f"add domains: {{{name}: [...]}} to dataset '{d.settings.name}' in the server "
                    "configuration",
                    reason="no_domain",
                )
            else:
                domains.append(d.engine.data_keys(name))
        if math.prod(len(values) for values in domains) > MAX_GROUPS:
            raise QueryError(f"group_by: more than {MAX_GROUPS} groups")
        return list(itertools.product(*domains))

    def _edges(self, d: _Dataset, query: Query) -> list[float] | None:
        if query.aggregate != "histogram" or query.bins is None:
            return None
        if isinstance(query.bins, list):
            return [float(b) for b in query.bins]
        if query.column not in d.settings.bounds:
            raise QueryError(
                f"bins: a number of bins needs declared bounds of '{query.column}'; give the edges "
                "as a list instead"
            )
        low, high = d.settings.bounds[query.column]
        return [float(x) for x in np.linspace(low, high, query.bins + 1)]

    def _histogram_query(self, query: Query) -> Query:
        """A categorical histogram as a count grouped by the column."""
        return query.model_copy(update={"aggregate": "count", "column": None, "group_by": [query.column]})

    @staticmethod
    def _bin_key(column: str, edges: list[float], b: int) -> dict[str, Any]:
        return {column: [edges[b], edges[b + 1]]}

    # dp

    def _dp(self, analyst: str, d: _Dataset, query: Query) -> dict:
        s = d.settings
        epsilon = float(query.epsilon)  # type: ignore[arg-type]
        if s.max_epsilon_per_query is not None and epsilon > s.max_epsilon_per_query:
            raise Refused(
                f"epsilon {epsilon:g} is above this dataset's max_epsilon_per_query "
                f"{s.max_epsilon_per_query:g}",
                reason="epsilon",
            )
        delta = None
        if s.mechanism == "gaussian":
            delta = query.delta if query.delta is not None else s.delta
            if delta > s.delta:  # type: ignore[operator]
                raise QueryError(f"delta: at most {s.delta:g} on this dataset, got {delta:g}")
        elif query.delta is not None:
            raise QueryError("delta: this dataset uses the Laplace mechanism (epsilon-DP): leave out 'delta'")
        if query.aggregate == "quantile":
            delta = None  # the exponential mechanism is pure epsilon-DP
        column = query.column
        needs_bounds = query.aggregate in ("sum", "mean", "quantile") or (
            query.aggregate == "histogram" and isinstance(query.bins, int)
        )
        if needs_bounds and column not in s.bounds:
            raise Refused(
                f"column: '{column}' has no declared bounds, needed under differential privacy: add "
                f"bounds: {{{column}: [lower, upper]}} "
                f"to dataset '{s.name}' in the server configuration",
                reason="no_bounds",
            )
        bounds = s.bounds.get(column) if column is not None else None
        edges = self._edges(d, query)
        if query.aggregate == "quantile" and query.group_by:
            raise Refused(
                "quantile with group_by is not answered under differential privacy", reason="not_supported"
            )
        # exact statistics, then the measurements built and the noise drawn: nothing is spent if
        # any of it fails (an epsilon the mechanism cannot calibrate is a 400)
        if edges is not None:
            mask = d.engine.mask(query)
            index = d.engine.bin_index(column, edges, clamp=bounds if isinstance(query.bins, int) else None)  # type: ignore[arg-type]
            counts = np.bincount(index[mask & (index >= 0)], minlength=len(edges) - 1)
            keys = [self._bin_key(column, edges, b) for b in range(len(edges) - 1)]  # type: ignore[arg-type]
            l1, l2 = privacy.sensitivities("count", True, None)
            draw = privacy.vector([float(c) for c in counts], l1, l2, epsilon, delta)
            grouped = True
        elif query.aggregate == "quantile":
            stats = d.engine.stats(query, None, clamp=bounds, values=True)
            keys, grouped = [{}], False
            draw = privacy.quantile(stats[0].values, query.quantile, bounds, epsilon)  # type: ignore[arg-type]
        else:
            effective = self._histogram_query(query) if query.aggregate == "histogram" else query
            key_tuples = self._keys(d, effective, dp=True)
            stats = d.engine.stats(effective, key_tuples, clamp=bounds)
            keys = [g.key for g in stats]
            grouped = key_tuples is not None
            draw = privacy.aggregate(effective.aggregate, stats, grouped, bounds, epsilon, delta)  # type: ignore[assignment]
        values = draw()
        # the answer is released only once its spend is committed
        with self.ledger.spending(
            analyst,
            d.source.id,
            s.name,
            epsilon,
            delta or 0.0,
            s.budget,  # type: ignore[arg-type]
            delta_budget=s.delta_budget if s.mechanism == "gaussian" else None,
            total_budget=d.source.settings.total_budget,
            query=query.model_dump(by_alias=True),
        ) as left:
            pass
        out: dict[str, Any] = {}
        if grouped:
            out["groups"] = [{"key": key, "value": value} for key, value in zip(keys, values, strict=True)]
        else:
            out["value"] = values[0]
        out["epsilon_spent"] = epsilon
        if delta is not None:
            out["delta_spent"] = delta
        out["budget_left"] = left["left"]
        if left["delta_left"] is not None:
            out["delta_left"] = left["delta_left"]
        return out

    # restriction

    def _sets(
        self, d: _Dataset, query: Query
    ) -> tuple[list[np.ndarray], list[dict[str, Any]], list[float] | None]:
        engine = d.engine
        mask = engine.mask(query)
        edges = self._edges(d, query)
        if edges is not None:
            sets = engine.bin_masks(query, edges, base=mask)
            return sets, [self._bin_key(query.column, edges, b) for b in range(len(sets))], edges  # type: ignore[arg-type]
        effective = self._histogram_query(query) if query.aggregate == "histogram" else query
        keys = self._keys(d, effective, dp=False)
        if keys is None:
            return [mask], [{}], None
        return (
            engine.group_masks(effective, keys, base=mask),
            [dict(zip(effective.group_by, k, strict=True)) for k in keys],
            None,
        )

    def _rows(self, d: _Dataset, query: Query) -> AuditRows:
        """The audit rows of a query: from its filters and the public attributes only."""
        effective = (
            self._histogram_query(query) if query.aggregate == "histogram" and query.bins is None else query
        )
        return audit_rows(
            d.engine, query, self._keys(d, effective, dp=False), self._edges(d, query), d.confidential
        )

    def _restriction(self, analyst: str, d: _Dataset, query: Query) -> dict:
        check_restricted_query(query, d.confidential)
        sets, keys, edges = self._sets(d, query)
        rows = self._rows(d, query)
        body = query.model_dump(by_alias=True, exclude_none=True)
        source = d.source.id
        # one lock per service and the ledger's write lock across processes: the answered queries
        # written by another process are read back before the audit, and the answer is recorded
        # in the same transaction; the auditor takes the new rows only once that has committed.
        # The auditor belongs to the analyst and the data source: every entry over it shares it.
        with self._audit_lock:
            key = (analyst, source)
            if key not in self._auditors:
                self._auditors[key] = Auditor(d.engine.records, d.settings.min_query_set)  # type: ignore[arg-type]
            auditor = self._auditors[key]
            with self.ledger.transaction() as connection:
                for answer_id, entry, old in self.ledger.answered(
                    analyst, source, auditor.last_id, connection
                ):
                    replay = self._datasets.get(entry)
                    if (
                        replay is None
                        or replay.source.id != source
                        or replay.settings.protection != "restriction"
                    ):
                        replay = d
                    auditor.add(self._rows(replay, parse_query(old)), answer_id)
                state = auditor.check(rows)
                answer_id = self.ledger.record_answer(connection, analyst, source, d.settings.name, body)
            auditor.commit(state, answer_id)
        values = self._exact(d, query, sets, edges)
        if len(keys) == 1 and not keys[0]:
            return {"value": values[0]}
        return {"groups": [{"key": key, "value": value} for key, value in zip(keys, values, strict=True)]}

    def _exact(
        self, d: _Dataset, query: Query, sets: list[np.ndarray], edges: list[float] | None
    ) -> list[Any]:
        if query.aggregate in ("count", "histogram"):
            return [int(s.sum()) for s in sets]
        x = d.engine.frame.get_column(query.measured).cast(float).to_numpy()
        out: list[Any] = []
        for member in sets:
            values = x[member]
            values = values[~np.isnan(values)]
            if query.aggregate == "sum":
                out.append(float(values.sum()))
            elif len(values) == 0:
                out.append(None)
            elif query.aggregate == "mean":
                out.append(float(values.mean()))
            else:
                level = cast(float, query.quantile)  # a quantile query has one (Query._fields_fit)
                out.append(float(np.quantile(values, level, method="inverted_cdf")))
        return out

    # camouflage

    def _camouflage(self, d: _Dataset, query: Query) -> dict:
        edges = self._edges(d, query)
        keys = None
        if edges is None:
            effective = self._histogram_query(query) if query.aggregate == "histogram" else query
            keys = self._keys(d, effective, dp=False)
        return self._camouflage_of[d.source.id].answer(query, keys, edges)


def _open_ledger(config: ServerConfig, sources: dict[str, DataSource], init: bool) -> Ledger:
    """The configuration's ledger, made if ``init`` and absent; its data sources registered if
    ``init``, else every source must be registered already (a ledger of another server, or one
    emptied and remade, is refused)."""
    store = config.store
    created = init and not store.exists()
    journal = store.with_name(f"{store.name}-journal")
    journal_existed = journal.exists()
    ledger = Ledger.create(store) if created else Ledger(store)
    try:
        paths = {key: str(source.data) for key, source in sources.items()}
        if init:
            ledger.register(paths)
        else:
            known = ledger.sources()
            missing = [key for key in paths if key not in known]
            if missing:
                key = missing[0]
                raise LedgerError(
                    f"{store}: the ledger does not know the data source {paths[key]} (sha256 "
                    f"{key[:12]}): it was made for another configuration, or the data file changed. "
                    "Register it on purpose with 'sdckit serve --init' (budgets, audits and camouflage "
                    "of a new data source start afresh)"
                )
    except BaseException:
        ledger.close()
        if created:  # made by this start, which failed: nothing of it stays
            store.unlink(missing_ok=True)
            if not journal_existed:
                journal.unlink(missing_ok=True)
        raise
    return ledger


__all__ = ["QueryService"]
