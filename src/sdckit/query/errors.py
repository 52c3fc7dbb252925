"""Errors of the statistical query server (:mod:`sdckit.query`).

Each error carries a message meant for the analyst; the server maps them to HTTP statuses:
:class:`QueryError` → 400/422 (the query is malformed or asks for something that does not exist
in the dataset), :class:`Refused` → 403 (a well-formed query that the protection or the budget
does not allow), :class:`UnknownDataset` → 404.
"""

from __future__ import annotations

from sdckit.errors import SdcError


class QueryServiceError(SdcError):
    """Base class of the errors a query can cause; ``message`` is what the analyst is told."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class QueryError(QueryServiceError):
    """A malformed or invalid query: unknown key, unknown column, wrong type, bad operator."""


class Refused(QueryServiceError):
    """A valid query that is not answered: budget exhausted, query set too small, audit.

    ``reason`` is a short machine-readable code (``"budget"``, ``"query_set_size"``,
    ``"audit"``, ``"not_supported"``, ``"revoked"``) and ``message`` the sentence for the analyst.
    """

    def __init__(self, message: str, reason: str = "refused") -> None:
        super().__init__(message)
        self.reason = reason


class UnknownDataset(QueryServiceError):
    """A dataset name that the server does not serve."""

    def __init__(self, name: str, known: list[str] | None = None) -> None:
        message = f"unknown dataset '{name}'"
        if known is not None:
            message += f"; the datasets are: {', '.join(sorted(known)) or '(none)'}"
        super().__init__(message)
        self.name = name
