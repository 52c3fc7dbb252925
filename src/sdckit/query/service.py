"""The query service: configuration, data, protections and the ledger behind one object.

The HTTP server (:mod:`sdckit.query.server`) and the tests call only this class.
"""

from __future__ import annotations

from typing import Any


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

    def __init__(self, server_config: Any) -> None:
        self.server_config = server_config

    def datasets(self) -> list[dict]:
        """Name, protection and number of attributes of each dataset."""
        raise NotImplementedError

    def dataset(self, name: str) -> dict:
        """Schema, protection, bounds and declared domains of one dataset (no data values)."""
        raise NotImplementedError

    def query(self, analyst: str, dataset: str, body: dict) -> dict:
        """Answer one query.

        Returns ``{"value", "epsilon_spent", "budget_left"}``, or ``{"groups": [{"key": {...},
        "value": ...}], "epsilon_spent", "budget_left"}``, or ``{"lower", "upper"}`` (camouflage).
        """
        raise NotImplementedError

    def budget(self, analyst: str, dataset: str) -> dict:
        """``{"dataset", "budget", "spent", "left"}`` for a dp dataset."""
        raise NotImplementedError

    def add_key(self, name: str) -> str:
        """Create an analyst and return their new API key (shown once, stored hashed)."""
        raise NotImplementedError

    def revoke_key(self, name: str) -> None:
        """Revoke an analyst's key."""
        raise NotImplementedError

    def authenticate(self, key: str) -> str | None:
        """The analyst's name for a valid, unrevoked key, else None."""
        raise NotImplementedError

    def close(self) -> None:
        """Close the ledger's connections."""
