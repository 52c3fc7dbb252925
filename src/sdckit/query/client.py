"""A client of the query server (``sdckit serve``): :class:`Client` over httpx.

>>> from sdckit.query import Client
>>> with Client("http://127.0.0.1:8000", key) as client:                       # doctest: +SKIP
...     client.query("adult", aggregate="count", filters=[{"column": "age", "op": ">", "value": 40}],
...                  epsilon=0.1)
{'value': 14711.3, 'epsilon_spent': 0.1, 'budget_left': 0.9}

The server's error statuses come back as the service's exceptions: 400/413/422 →
:class:`QueryError`, 403 → :class:`Refused` (with its ``reason``), 404 → :class:`UnknownDataset`,
401 and 429 (too many failed logins) → :class:`Unauthorized`; anything else (a 5xx, a reply that
is not JSON) → :class:`ServerError`,
and a server that cannot be reached → :class:`Unreachable`.
"""

from __future__ import annotations

from typing import Any

from sdckit._extras import missing_extra
from sdckit.errors import ConfigError, SdcError
from sdckit.params import spell
from sdckit.query.errors import QueryError, QueryServiceError, Refused, UnknownDataset

try:  # an optional dependency: without it, one error naming the extra, not a traceback
    import httpx
except ImportError as error:
    raise missing_extra("server", error, "the query client") from error


#: The longest --timeout / ``timeout`` (seconds): a day.
MAX_TIMEOUT = 86_400


class Unauthorized(QueryServiceError):
    """The server did not accept the key (HTTP 401): missing, wrong or revoked."""


class ServerError(QueryServiceError):
    """The server failed (a 5xx) or answered something that is not the API's JSON."""


class Unreachable(SdcError):
    """No answer from the server: wrong URL, server not running, timeout."""


class Client:
    """An analyst's connection to a query server.

    Parameters
    ----------
    url : str
        The server's address, e.g. ``http://127.0.0.1:8000``.
    key : str
        The analyst's API key (from ``sdckit keys add``), sent as ``Authorization: Bearer KEY``.
    timeout : float, default=30.0
        Seconds to wait for the server (connecting, and each answer).
    """

    def __init__(self, url: str, key: str, timeout: float = 30.0) -> None:
        if not url.startswith(("http://", "https://")):
            raise Unreachable(f"url must start with http:// or https://, got {url!r}")
        if (
            isinstance(timeout, bool)
            or not isinstance(timeout, int | float)
            or not 0 < timeout <= MAX_TIMEOUT  # NaN fails both comparisons
        ):
            raise ConfigError(
                f"{spell('timeout')} must be a number of seconds above 0 and at most {MAX_TIMEOUT:,} "
                f"(a day), got {timeout!r:.100}"
            )
        self.url = url.rstrip("/")
        self._http = httpx.Client(
            base_url=self.url, headers={"Authorization": f"Bearer {key}"}, timeout=timeout
        )

    def datasets(self) -> list[dict[str, Any]]:
        """The datasets served: name, protection, attributes."""
        return self._call("GET", "/datasets")

    def dataset(self, name: str) -> dict[str, Any]:
        """One dataset's schema, protection, bounds and declared domains."""
        return self._call("GET", f"/datasets/{_segment(name)}")

    def query(self, name: str, **body: Any) -> dict[str, Any]:
        """Run one query on dataset ``name``; ``body`` is the query (``aggregate=``, ``column=``,
        ``filters=``, ``group_by=``, ``epsilon=``, ...) as the query language defines it."""
        check_numbers(body)
        return self._call("POST", f"/datasets/{_segment(name)}/query", json=body)

    def budget(self, name: str) -> dict[str, Any]:
        """The caller's budget on dataset ``name``: total, spent and left."""
        return self._call("GET", f"/budget/{_segment(name)}")

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def _call(self, method: str, path: str, json: Any = None) -> Any:
        try:
            response = self._http.request(method, path, json=json)
        except httpx.TimeoutException as error:
            raise Unreachable(f"{self.url}: no answer in time ({type(error).__name__})") from None
        except httpx.TransportError as error:
            raise Unreachable(f"cannot reach {self.url}: {error}") from None
        return _result(response)


#: The allowed values of the query's numeric settings, as :class:`~sdckit.query.language.Query` checks them.
_NUMBERS = {
    "epsilon": "a positive finite number",
    "delta": "a number between 0 and 1 (both excluded)",
    "quantile": "a number between 0 and 1 (both excluded)",
    "bins": "a whole number of bins from 1 to 1000, or a list of increasing finite edges",
}


def check_numbers(body: dict[str, Any]) -> None:
    """Refuse, before sending, a numeric setting the query language refuses (by its own field rules):
    NaN and infinity cannot even travel in JSON."""
    from pydantic import TypeAdapter, ValidationError

    from sdckit.query.language import Query

    for name, allowed in _NUMBERS.items():
        value = body.get(name)
        if value is None:
            continue
        rule: Any = Query.model_fields[name].annotation  # the field's type, its bounds included
        try:
            TypeAdapter(rule).validate_python(value, strict=True)
        except ValidationError:
            raise QueryError(f"{spell(name)} must be {allowed}, got {value!r:.100}") from None


def _segment(name: str) -> str:
    from urllib.parse import quote

    return quote(name, safe="")


def _result(response: httpx.Response) -> Any:
    """The JSON body of a success, else the exception its status stands for."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if response.is_success:
        if body is None:
            raise ServerError(f"the server answered {response.status_code} without a JSON body")
        return body
    detail = body.get("detail") if isinstance(body, dict) else None
    if not isinstance(detail, str):
        detail = response.text.strip()[:200] or response.reason_phrase
    status = response.status_code
    if status in (401, 429):
        raise Unauthorized(detail)
    if status == 403:
        raise Refused(detail, reason=body.get("reason", "refused") if isinstance(body, dict) else "refused")
    if status == 404:
        if detail.startswith("unknown dataset"):
            error = UnknownDataset("")
            error.message = detail
            error.args = (detail,)
            raise error
        raise QueryError(detail)
    if status in (400, 413, 422):
        raise QueryError(detail)
    raise ServerError(f"the server answered {status}: {detail}")
