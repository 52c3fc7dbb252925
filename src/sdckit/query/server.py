"""The HTTP face of the query service: FastAPI endpoints over :class:`~sdckit.query.service.QueryService`.

``create_app(service)`` builds the application that ``sdckit serve`` runs under uvicorn:

* ``GET /datasets``: the datasets served, their protection and size of schema;
* ``GET /datasets/{name}``: one dataset's schema, protection, bounds and declared domains;
* ``POST /datasets/{name}/query``: one query in the JSON query language (:mod:`sdckit.query.language`);
* ``GET /budget/{name}``: the caller's budget on a dataset (spent and left);
* ``GET /openapi.json``: the published OpenAPI description, the only endpoint open without a key
  (the interactive ``/docs`` page is off: it would load its scripts from outside the machine).

Every other request carries ``Authorization: Bearer KEY`` (a key made by ``sdckit keys add``); a
missing, malformed, unknown or revoked key is 401 with ``WWW-Authenticate: Bearer``, and is logged
(the client's address and what was wrong, never the key). An address with
:data:`MAX_FAILED_LOGINS` failed logins within :data:`FAILED_LOGIN_WINDOW` seconds gets 429 for
every request until the window has passed. A key reaches only the datasets of its scope: another
is 403 (reason ``scope``), and ``GET /datasets`` lists only the reachable ones. Errors are
``{"detail": "<one sentence>"}``: 400 for a malformed query or body (invalid JSON included), 422 for
a body that is not a JSON object, 403 for a refusal (with ``reason``), 404 for an unknown dataset or
endpoint, 413 for a body over the size limit, which is enforced on the bytes received before
anything is parsed (a ``Content-Length`` over the limit is refused at once; a chunked body is
counted as it arrives). A 500 only ever means a bug: its traceback goes to the server's log, the
client gets a fixed sentence.

The service's calls block (SQLite, the query engine): the endpoints are plain functions, which
FastAPI runs in its thread pool, so that one slow query does not hold up the others; at most
``max_concurrent_queries`` queries run at once, the others wait their turn.
"""

from __future__ import annotations

import json
import logging
import math
import os
import threading
import time
from collections.abc import Sequence
from typing import Annotated, Any

from sdckit._extras import missing_extra
from sdckit.errors import ConfigError
from sdckit.params import spell
from sdckit.query.errors import QueryError, Refused, UnknownDataset

try:  # an optional dependency: without it, one error naming the extra, not a traceback
    from fastapi import Depends, FastAPI, Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse
    from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
    from starlette.exceptions import HTTPException as StarletteHTTPException
    from starlette.types import ASGIApp, Message, Receive, Scope, Send
except ImportError as error:
    raise missing_extra("server", error, "the query server") from error

logger = logging.getLogger("sdckit.query.server")

MAX_BODY_BYTES = 64 * 1024
"""The largest request body accepted when the server configuration does not say (64 KiB)."""

MAX_DEPTH = 32
"""The deepest nesting of arrays and objects accepted in a query (filters within filters)."""

BODY_SCOPE_KEY = "sdckit.body"

_QUERY_EXAMPLE = {
    "aggregate": "count",
    "column": None,
    "filters": [{"column": "age", "op": ">", "value": 40}],
    "group_by": [],
    "epsilon": 0.1,
}


MAX_FAILED_LOGINS = 10
"""Failed logins from one address within :data:`FAILED_LOGIN_WINDOW` seconds before it gets 429."""

FAILED_LOGIN_WINDOW = 60.0


class Unauthorized(Exception):
    """No valid key: 401 with ``WWW-Authenticate: Bearer``."""


class TooManyFailures(Exception):
    """An address over the failed-login limit: 429 with ``Retry-After``."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(retry_after)
        self.retry_after = retry_after


class FailedLogins:
    """Failed logins per client address in a sliding window (in memory, bounded)."""

    def __init__(self, limit: int = MAX_FAILED_LOGINS, window: float = FAILED_LOGIN_WINDOW) -> None:
        self.limit = limit
        self.window = window
        self._failures: dict[str, list[float]] = {}
        self._lock = threading.Lock()

    def _recent(self, address: str, now: float) -> list[float]:
        times = [t for t in self._failures.get(address, ()) if now - t < self.window]
        if times:
            self._failures[address] = times
        else:
            self._failures.pop(address, None)
        return times

    def check(self, address: str) -> None:
        """Raise :class:`TooManyFailures` if the address is over the limit."""
        now = time.monotonic()
        with self._lock:
            times = self._recent(address, now)
            if len(times) >= self.limit:
                raise TooManyFailures(max(int(self.window - (now - times[0])) + 1, 1))

    def fail(self, address: str) -> None:
        now = time.monotonic()
        with self._lock:
            if len(self._failures) > 100_000:  # an address flood: forget the stale ones
                for stale in [a for a, t in self._failures.items() if now - t[-1] >= self.window]:
                    del self._failures[stale]
            self._recent(address, now)
            self._failures.setdefault(address, []).append(now)
            del self._failures[address][: -self.limit]


class Caller(tuple):
    """The authenticated analyst: ``(name, scope)``."""

    @property
    def name(self) -> str:
        return self[0]

    @property
    def scope(self) -> list[str] | str:
        return self[1]


_bearer = HTTPBearer(auto_error=False, description="An analyst's key from `sdckit keys add`.")


def _analyst(
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    request: Request,
) -> Caller:
    """The caller's name and scope, from their key (checked against the ledger's hashes)."""
    address = request.client.host if request.client else "unknown"
    failures: FailedLogins = request.app.state.failed_logins
    failures.check(address)
    header = request.headers.get("authorization")
    problem = None
    if header is None:
        problem = "missing Authorization header: send 'Authorization: Bearer KEY'"
    elif credentials is None or not credentials.credentials.strip():
        problem = "malformed Authorization header: expected 'Bearer KEY'"
    else:
        found = request.app.state.service.authenticate(credentials.credentials.strip())
        if found is not None:
            return Caller(found)
        problem = "invalid or revoked API key"
    failures.fail(address)
    logger.warning("failed login from %s on %s %s: %s", address, request.method, request.url.path, problem)
    raise Unauthorized(problem)


Analyst = Annotated[Caller, Depends(_analyst)]


def create_app(
    service: Any, max_body_bytes: int | None = None, max_concurrent_queries: int | None = None
) -> FastAPI:
    """The FastAPI application serving ``service`` (a :class:`QueryService`).

    Parameters
    ----------
    service : QueryService
        What answers; its methods are called from FastAPI's thread pool.
    max_body_bytes : int, optional
        The largest request body accepted (413 beyond); default the server configuration's
        ``max_body_bytes`` if it has one, else :data:`MAX_BODY_BYTES`.
    max_concurrent_queries : int, optional
        How many queries run at once (the others wait their turn, in order of arrival); default
        four times the number of CPUs. Each query scans the data on every core: more at once only adds
        memory and contention for the ledger's write lock, and makes the slowest answers slower.
    """
    if max_body_bytes is None:
        configured = getattr(getattr(service, "server_config", None), "max_body_bytes", None)
        max_body_bytes = int(configured) if isinstance(configured, int) else MAX_BODY_BYTES

    app = FastAPI(
        title="sdckit query server",
        summary="Protected answers to statistical queries: differential privacy, query restriction, "
        "camouflage.",
        description=(
            "Every endpoint but this description needs `Authorization: Bearer KEY` (keys are made "
            'with `sdckit keys add`). Errors are `{"detail": "..."}`: 400 a malformed query, '
            "401 no valid key, 403 a refusal (budget, query-set size, audit; with `reason`), "
            "404 an unknown dataset, 413 a body over the size limit."
        ),
        version=_version(),
        docs_url=None,
        redoc_url=None,
    )
    if max_concurrent_queries is None:
        max_concurrent_queries = 4 * (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 2)
    if max_concurrent_queries < 1:
        raise ConfigError(
            f"{spell('max_concurrent_queries')} must be at least 1, got {max_concurrent_queries}"
        )
    turns = threading.BoundedSemaphore(max_concurrent_queries)
    app.state.service = service
    app.state.max_body_bytes = max_body_bytes
    limit = getattr(getattr(service, "server_config", None), "max_failed_logins", MAX_FAILED_LOGINS)
    app.state.failed_logins = FailedLogins(limit=int(limit))

    @app.get("/datasets", summary="The datasets served")
    def list_datasets(who: Analyst) -> list[dict[str, Any]]:
        return service.datasets(who.scope)

    @app.get("/datasets/{name}", summary="One dataset's schema, protection, bounds and domains")
    def describe_dataset(name: str, who: Analyst) -> dict[str, Any]:
        return service.dataset(name, who.scope, who.name)

    @app.post(
        "/datasets/{name}/query",
        summary="Run one query and receive its protected answer",
        responses={
            400: {"description": "A malformed query (the message names the problem)."},
            403: {"description": "Refused: budget spent, query set too small, or the audit."},
            404: {"description": "Unknown dataset."},
            413: {"description": "Request body over the size limit."},
        },
        openapi_extra=_query_schema(),
    )
    def run_query(name: str, who: Analyst, request: Request) -> dict[str, Any]:
        # the body is parsed here, after the key is checked (FastAPI would parse it before)
        body = parse_body(request.scope.get(BODY_SCOPE_KEY, b""))
        with turns:
            return service.query(who.name, name, body, who.scope)

    @app.get("/budget/{name}", summary="The caller's privacy budget on one dataset")
    def read_budget(name: str, who: Analyst) -> dict[str, Any]:
        return service.budget(who.name, name, who.scope)

    _install_handlers(app)
    _publish_query_models(app)
    app.add_middleware(BodyLimit, max_body_bytes=max_body_bytes)
    return app


def _install_handlers(app: FastAPI) -> None:
    @app.exception_handler(Unauthorized)
    def unauthorized(request: Request, error: Unauthorized) -> JSONResponse:
        return JSONResponse({"detail": str(error)}, status_code=401, headers={"WWW-Authenticate": "Bearer"})

    @app.exception_handler(TooManyFailures)
    def too_many(request: Request, error: TooManyFailures) -> JSONResponse:
        return JSONResponse(
            {"detail": f"too many failed logins from this address: try again in {error.retry_after} s"},
            status_code=429,
            headers={"Retry-After": str(error.retry_after)},
        )

    @app.exception_handler(Refused)
    def refused(request: Request, error: Refused) -> JSONResponse:
        return JSONResponse({"detail": error.message, "reason": error.reason}, status_code=403)

    @app.exception_handler(UnknownDataset)
    def unknown_dataset(request: Request, error: UnknownDataset) -> JSONResponse:
        return JSONResponse({"detail": error.message}, status_code=404)

    @app.exception_handler(QueryError)
    def query_error(request: Request, error: QueryError) -> JSONResponse:
        return JSONResponse({"detail": error.message}, status_code=getattr(error, "status", 400))

    @app.exception_handler(RequestValidationError)
    def invalid_request(request: Request, error: RequestValidationError) -> JSONResponse:
        status, message = _validation_message(error.errors())
        return JSONResponse({"detail": message}, status_code=status)

    @app.exception_handler(StarletteHTTPException)
    def http_error(request: Request, error: StarletteHTTPException) -> JSONResponse:
        detail = error.detail
        if error.status_code == 404 and detail == "Not Found":
            detail = (
                f"no such endpoint: {request.method} {request.url.path}; the endpoints are GET "
                "/datasets, GET /datasets/{name}, POST /datasets/{name}/query, GET /budget/{name}"
            )
        elif error.status_code == 405:
            detail = f"method {request.method} is not allowed on {request.url.path}"
        return JSONResponse({"detail": detail}, status_code=error.status_code, headers=error.headers)

    @app.exception_handler(Exception)
    def internal_error(request: Request, error: Exception) -> JSONResponse:
        # Starlette re-raises the error after this reply: uvicorn logs its traceback
        logger.error("internal error on %s %s: %r", request.method, request.url.path, error)
        return JSONResponse(
            {"detail": "internal error of the server (a bug; its traceback is in the server's log)"},
            status_code=500,
        )


def parse_body(raw: bytes) -> dict[str, Any]:
    """The query of a request body: a JSON object (whatever the Content-Type says), or QueryError
    with one sentence (``status`` 400 for a body that is not JSON, 422 for JSON that is not an
    object)."""
    if not raw.strip():
        raise _error("the request body is empty: send the query as a JSON object", 400)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise _error(f"the request body is not UTF-8 text (byte {error.start})", 400) from None
    try:
        body = json.loads(text, parse_constant=_no_constant, parse_float=_finite_float)
    except json.JSONDecodeError as error:
        raise _error(
            f"the request body is not valid JSON: {error.msg} (line {error.lineno}, column {error.colno})",
            400,
        ) from None
    except (ValueError, RecursionError) as error:
        reason = "nested too deeply" if isinstance(error, RecursionError) else str(error)
        raise _error(f"the request body is not valid JSON: {reason}", 400) from None
    if not isinstance(body, dict):
        raise _error(f"the request body must be a JSON object (the query), got {_json_type(body)}", 422)
    if _depth(body) > MAX_DEPTH:
        raise _error(f"the query is nested more than {MAX_DEPTH} levels deep", 400)
    return body


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:40]} is out of range")
    return value


def _error(message: str, status: int) -> QueryError:
    error = QueryError(message)
    error.status = status  # type: ignore[attr-defined]
    return error


def _depth(value: Any) -> int:
    """Nesting depth of a JSON value, without recursion (a body can be deep)."""
    deepest, pending = 0, [(value, 1)]
    while pending:
        current, level = pending.pop()
        deepest = max(deepest, level)
        if deepest > MAX_DEPTH:
            return deepest
        if isinstance(current, dict):
            pending.extend((item, level + 1) for item in current.values())
        elif isinstance(current, list):
            pending.extend((item, level + 1) for item in current)
    return deepest


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    return {list: "an array", str: "a string", int: "a number", float: "a number"}.get(type(value), "null")


def _validation_message(errors: Sequence[Any]) -> tuple[int, str]:
    """One clear sentence (and its status) for FastAPI's own validation (path and headers)."""
    if not errors:
        return 400, "invalid request"
    first = errors[0]
    field = ".".join(str(part) for part in first.get("loc", ())) or "request"
    return 422, f"{field}: {first.get('msg', 'invalid value')}"


def _query_schema() -> dict[str, Any]:
    """The request body's schema in the OpenAPI description: the query language's, if importable
    (its nested models go to ``components/schemas`` through :func:`_publish_query_models`)."""
    model = _query_model()
    schema: dict[str, Any] = {"type": "object", "title": "Query"}
    if model is not None:
        schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
        schema.pop("$defs", None)
    return {
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": schema, "example": _QUERY_EXAMPLE}},
        }
    }


def _publish_query_models(app: FastAPI) -> None:
    """Add the query language's nested models to the OpenAPI components."""
    model = _query_model()
    if model is None:
        return
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            document = generate()
            definitions = model.model_json_schema(ref_template="#/components/schemas/{model}")
            schemas = document.setdefault("components", {}).setdefault("schemas", {})
            for name, definition in definitions.get("$defs", {}).items():
                schemas.setdefault(name, definition)
            app.openapi_schema = document
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def _query_model() -> Any:
    try:
        from sdckit.query.language import Query
    except ImportError:
        return None
    return Query


def _version() -> str:
    from sdckit import __version__

    return __version__


class BodyLimit:
    """ASGI middleware: a request body over ``max_body_bytes`` is 413 before anything parses it.

    A declared ``Content-Length`` over the limit is refused without reading; otherwise the body is
    read (chunked or not) up to the limit and handed on whole, so the application never sees more.
    """

    def __init__(self, app: ASGIApp, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = None
        for header, value in scope.get("headers", ()):
            if header == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    await _reply(send, 400, "invalid Content-Length header")
                    return
        if declared is not None and declared > self.max_body_bytes:
            await self._too_large(send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                await self._too_large(send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        scope[BODY_SCOPE_KEY] = body
        delivered = False

        async def replay() -> Message:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _too_large(self, send: Send) -> None:
        await _reply(
            send,
            413,
            f"request body too large: the limit is {self.max_body_bytes:,} bytes",
            close=True,
        )


async def _reply(send: Send, status: int, detail: str, close: bool = False) -> None:
    body = json.dumps({"detail": detail}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
