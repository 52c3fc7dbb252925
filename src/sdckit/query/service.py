"""The query service: configuration, data, protections and the ledger behind one object.

The HTTP server (:mod:`sdckit.query.server`) and the tests call only this class. Every dataset is
read once when the service starts (:class:`~sdckit.query.engine.Engine`), read-only.

Order of work for a query: parse and check it (:mod:`sdckit.query.language`) → compute the exact
statistics → for dp, spend the budget in the ledger (committed) and only then draw the noise; for
restriction, audit against the answered sets and record the answer in the same ledger transaction;
for camouflage, compute the interval.
"""

from __future__ import annotations

import itertools
import math
import threading
from typing import Any

import numpy as np

from sdckit.config import load_config
from sdckit.errors import ConfigError
from sdckit.query import protection
from sdckit.query.config import DatasetConfig, ServerConfig
from sdckit.query.engine import MAX_GROUPS, Engine
from sdckit.query.errors import QueryError, Refused, UnknownDataset
from sdckit.query.language import Query, check_query, parse_query
from sdckit.query.ledger import Ledger
from sdckit.table import Kind


class _Dataset:
    def __init__(self, settings: DatasetConfig) -> None:
        self.settings = settings
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
        }
        if s.protection == "dp":
            out.update(budget=s.budget, mechanism=s.mechanism, neighbours=protection.NEIGHBOURS)
            if s.delta is not None:
                out["delta"] = s.delta
            if s.max_epsilon_per_query is not None:
                out["max_epsilon_per_query"] = s.max_epsilon_per_query
        elif s.protection == "restriction":
            out["min_query_set"] = s.min_query_set
        else:
            out["width"] = s.width
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

    def __init__(self, server_config: ServerConfig) -> None:
        self.server_config = server_config
        self.ledger = Ledger(server_config.store)
        self._datasets = {name: _Dataset(settings) for name, settings in server_config.datasets.items()}
        self._auditors: dict[tuple[str, str], protection.Auditor] = {}
        self._audit_lock = threading.Lock()

    # --- catalogue ----------------------------------------------------------------------------

    def _get(self, name: str) -> _Dataset:
        if not isinstance(name, str) or name not in self._datasets:
            raise UnknownDataset(str(name)[:100], list(self._datasets))
        return self._datasets[name]

    def datasets(self) -> list[dict]:
        """Name, protection and number of attributes of each dataset."""
        return [
            {"name": name, "protection": d.settings.protection, "attributes": len(d.engine.kinds)}
            for name, d in self._datasets.items()
        ]

    def dataset(self, name: str) -> dict:
        """Schema, protection, bounds and declared domains of one dataset (no data values)."""
        return self._get(name).describe()

    def budget(self, analyst: str, dataset: str) -> dict:
        """``{"dataset", "protection", "budget", "spent", "left"}`` (budget and left are None
        for a dataset not protected by dp)."""
        d = self._get(dataset)
        if d.settings.protection != "dp":
            return {
                "dataset": dataset,
                "protection": d.settings.protection,
                "budget": None,
                "spent": 0.0,
                "left": None,
            }
        spent, delta = self.ledger.spent(analyst, dataset)
        out = {
            "dataset": dataset,
            "protection": "dp",
            "budget": d.settings.budget,
            "spent": spent,
            "left": max(d.settings.budget - spent, 0.0),
        }
        if d.settings.mechanism == "gaussian":
            out["delta_spent"] = delta
        return out

    # --- keys ---------------------------------------------------------------------------------

    def add_key(self, name: str) -> str:
        """Create an analyst and return their new API key (shown once, stored hashed)."""
        return self.ledger.add_key(name)

    def revoke_key(self, name: str) -> None:
        """Revoke an analyst's key."""
        self.ledger.revoke_key(name)

    def authenticate(self, key: str) -> str | None:
        """The analyst's name for a valid, unrevoked key, else None."""
        return self.ledger.authenticate(key)

    def close(self) -> None:
        """Close the ledger's connections."""
        self.ledger.close()

    # --- queries ------------------------------------------------------------------------------

    def query(self, analyst: str, dataset: str, body: dict) -> dict:
        """Answer one query.

        Returns ``{"value", "epsilon_spent", "budget_left"}``, or ``{"groups": [{"key": {...},
        "value": ...}], "epsilon_spent", "budget_left"}``, or ``{"lower", "upper"}`` (camouflage;
        ``{"groups": [{"key", "lower", "upper"}]}`` with groups).
        """
        d = self._get(dataset)
        query = parse_query(body)
        engine = d.engine
        check_query(query, engine.kinds, engine.types, d.settings.protection)
        if d.settings.protection == "dp":
            return self._dp(analyst, d, query)
        if d.settings.protection == "restriction":
            return self._restriction(analyst, d, query)
        return self._camouflage(d, query)

    def _keys(self, d: _Dataset, query: Query, dp: bool) -> list[tuple] | None:
        by = list(query.group_by)
        if query.aggregate == "histogram" and query.bins is None:
            by = [query.column]
        if not by:
            return None
        domains = []
        for name in by:
            if name in d.domains:
                domains.append(d.domains[name])
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
        # exact statistics first (nothing spent if this fails)
        if edges is not None:
            mask = d.engine.mask(query)
            index = d.engine.bin_index(column, edges, clamp=bounds if isinstance(query.bins, int) else None)  # type: ignore[arg-type]
            counts = np.bincount(index[mask & (index >= 0)], minlength=len(edges) - 1)
            keys = [self._bin_key(column, edges, b) for b in range(len(edges) - 1)]  # type: ignore[arg-type]
            truths = [float(c) for c in counts]
            aggregate, grouped = "count", True
            stats = None
        else:
            effective = self._histogram_query(query) if query.aggregate == "histogram" else query
            key_tuples = self._keys(d, effective, dp=True)
            stats = d.engine.stats(effective, key_tuples, clamp=bounds, values=query.aggregate == "quantile")
            keys = [g.key for g in stats]
            aggregate, grouped = effective.aggregate, key_tuples is not None
        left = self.ledger.spend(
            analyst, s.name, epsilon, s.budget, delta or 0.0, query=query.model_dump(by_alias=True)
        )  # type: ignore[arg-type]
        # the spend is committed: now the noise
        if query.aggregate == "quantile":
            values: list[Any] = [protection.dp_quantile(stats[0].values, query.quantile, bounds, epsilon)]  # type: ignore[index,arg-type]
        elif edges is not None:
            l1, l2 = protection.sensitivities("count", True, None)
            values = protection.dp_noise(truths, l1, l2, epsilon, delta)
        else:
            values = protection.dp_values(aggregate, stats, grouped, bounds, epsilon, delta)  # type: ignore[arg-type]
        out: dict[str, Any] = {}
        if grouped:
            out["groups"] = [{"key": key, "value": value} for key, value in zip(keys, values, strict=True)]
        else:
            out["value"] = values[0]
        out["epsilon_spent"] = epsilon
        if delta is not None:
            out["delta_spent"] = delta
        out["budget_left"] = left
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

    def _auditor(self, analyst: str, d: _Dataset) -> protection.Auditor:
        key = (analyst, d.settings.name)
        if key not in self._auditors:
            self._auditors[key] = protection.Auditor(d.engine.records, d.settings.min_query_set)  # type: ignore[arg-type]
        return self._auditors[key]

    def _restriction(self, analyst: str, d: _Dataset, query: Query) -> dict:
        sets, keys, edges = self._sets(d, query)
        body = query.model_dump(by_alias=True, exclude_none=True)
        # one lock per service and the ledger's write lock across processes: the answered sets
        # written by another process are read back before the audit, and the answer is recorded
        # in the same transaction; the auditor takes the new sets only once that has committed
        with self._audit_lock:
            auditor = self._auditor(analyst, d)
            with self.ledger.transaction() as connection:
                for answer_id, old in self.ledger.answered(
                    analyst, d.settings.name, auditor.last_id, connection
                ):
                    auditor.add(self._sets(d, parse_query(old))[0], answer_id)
                state = auditor.check(sets)
                answer_id = self.ledger.record_answer(connection, analyst, d.settings.name, body)
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
        x = d.engine.frame.get_column(query.column).cast(float).to_numpy()
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
                out.append(float(np.quantile(values, query.quantile, method="inverted_cdf")))
        return out

    # camouflage

    def _camouflage(self, d: _Dataset, query: Query) -> dict:
        width = float(d.settings.width)  # type: ignore[arg-type]
        edges = self._edges(d, query)
        if edges is not None:
            mask = d.engine.mask(query)
            intervals = protection.camouflage_histogram(d.engine, mask, query.column, edges, width)  # type: ignore[arg-type]
            return {
                "groups": [
                    {"key": self._bin_key(query.column, edges, b), **interval}  # type: ignore[arg-type]
                    for b, interval in enumerate(intervals)
                ]
            }
        effective = self._histogram_query(query) if query.aggregate == "histogram" else query
        keys = self._keys(d, effective, dp=False)
        stats = d.engine.stats(effective, keys, values=query.aggregate == "quantile")
        intervals = [
            protection.camouflage_interval(effective.aggregate, g, width, query.quantile) for g in stats
        ]
        if keys is None:
            return intervals[0]
        return {"groups": [{"key": g.key, **interval} for g, interval in zip(stats, intervals, strict=True)]}


__all__ = ["QueryService"]
