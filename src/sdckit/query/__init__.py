"""A statistical query server: analysts send aggregate queries, never see records.

Datasets are protected by differential privacy (``dp``, :mod:`sdckit.query.dp`), query restriction
(``restriction``, :mod:`sdckit.query.restriction`) or camouflage (``camouflage``,
:mod:`sdckit.query.camouflage`); keys, budgets and the audit's history are kept in the ledger
(:mod:`sdckit.query.ledger`).
"""

from __future__ import annotations

from sdckit.query.errors import QueryError, Refused, UnknownDataset

__all__ = ["QueryError", "Refused", "UnknownDataset"]


def __getattr__(name: str):
    if name == "Client":  # httpx is imported only by those who use the client
        from sdckit.query.client import Client

        return Client
    raise AttributeError(name)
