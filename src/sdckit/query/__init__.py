"""A statistical query server: analysts send aggregate queries, never see records.

Datasets are protected by differential privacy (``dp``), query restriction (``restriction``)
or camouflage (``camouflage``); see :mod:`sdckit.query.protection`.
"""

from __future__ import annotations

from sdckit.query.errors import QueryError, Refused, UnknownDataset

__all__ = ["QueryError", "Refused", "UnknownDataset"]


def __getattr__(name: str):
    if name == "Client":  # httpx is imported only by those who use the client
        from sdckit.query.client import Client

        return Client
    raise AttributeError(name)
