"""``sdckit serve`` (the query server) and ``sdckit keys add|revoke|list`` (analysts' API keys)."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer

from sdckit.cli._common import console, errors, user_errors

ServerConfigOption = Annotated[
    Path,
    typer.Option("--config", "-c", help="The server configuration (YAML): store, datasets, protections."),
]
NameArgument = Annotated[str, typer.Argument(help="The analyst's name.", show_default=False)]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000


def serve(
    config: ServerConfigOption,
    host: Annotated[
        str,
        typer.Option(
            help="Address to listen on. Anything but a loopback address (127.0.0.1, ::1, localhost) "
            "makes the server reachable from other machines: keys and answers then travel "
            "unencrypted unless a TLS proxy is in front.",
        ),
    ] = DEFAULT_HOST,
    port: Annotated[int, typer.Option(help="Port to listen on (0 picks a free one).")] = DEFAULT_PORT,
) -> None:
    """Serve the configured datasets over HTTP until interrupted (Ctrl-C).

    Loads every dataset once (read-only), opens the budget ledger, and answers queries at
    POST /datasets/{name}/query under each dataset's protection; the OpenAPI description is at
    /openapi.json and /docs. Requests need 'Authorization: Bearer KEY' (see sdckit keys add).
    """
    with user_errors():
        from sdckit.query.config import load_server_config

        settings = load_server_config(config)
        listener = _listen(host, port)
        try:
            _run(settings, listener, host)
        finally:
            listener.close()


def _listen(host: str, port: int) -> socket.socket:
    """A bound socket (a taken port is a message, not a traceback); a warning off loopback."""
    from sdckit.errors import ConfigError

    if not 0 <= port <= 65535:
        raise ConfigError(f"--port must be between 0 and 65535, got {port}")
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as error:
        raise ConfigError(f"--host: cannot resolve {host!r}: {error.strerror}") from None
    family, kind, protocol, _, address = found[0]
    if not ipaddress.ip_address(address[0]).is_loopback:
        errors.print(
            f"[bold yellow]warning:[/] listening on {host}, reachable from other machines: keys and "
            "answers travel unencrypted unless a TLS proxy is in front",
            highlight=False,
        )
    listener = socket.socket(family, kind, protocol)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind(address)
    except OSError as error:
        listener.close()
        raise ConfigError(f"cannot listen on {host}:{port}: {error.strerror}") from None
    return listener


def _run(settings, listener: socket.socket, host: str) -> None:
    import uvicorn

    from sdckit.query.server import create_app
    from sdckit.query.service import QueryService

    service = QueryService(settings)
    try:
        app = create_app(service)
        port = listener.getsockname()[1]
        shown = f"[{host}]" if ":" in host else host
        names = ", ".join(entry["name"] for entry in service.datasets())
        console.print(
            f"serving {names or 'no datasets'} on http://{shown}:{port} "
            f"(OpenAPI: http://{shown}:{port}/docs); Ctrl-C stops",
            highlight=False,
            soft_wrap=True,
        )
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
        server.run(sockets=[listener])
    finally:
        service.close()


# sdckit keys ------------------------------------------------------------------------------------

keys = typer.Typer(
    help="Analysts' API keys of a query server: add (printed once), revoke, list.",
    no_args_is_help=True,
)


@keys.command("add")
def add(name: NameArgument, config: ServerConfigOption) -> None:
    """Create the analyst NAME and print their new API key, once (only its hash is stored).

    The key goes in every request as 'Authorization: Bearer KEY'. A NAME that already has a key is
    refused (exit 2): revoke it first, or choose another name.
    """
    with user_errors():
        with _ledger(config) as ledger:
            key = ledger.add_key(name)
        errors.print(f"key of {name} (shown once, store it now):", highlight=False)
        console.print(key, highlight=False, soft_wrap=True)


@keys.command("revoke")
def revoke(name: NameArgument, config: ServerConfigOption) -> None:
    """Revoke the analyst NAME's key: their requests get 401 from now on (a running server too).

    Their spent budget stays in the ledger.
    """
    with user_errors():
        with _ledger(config) as ledger:
            ledger.revoke_key(name)
        console.print(f"revoked the key of {name}", highlight=False)


@keys.command("list")
def list_keys(config: ServerConfigOption) -> None:
    """The analysts of a server: name, when their key was made, and whether it is revoked."""
    from datetime import UTC, datetime

    from rich.table import Table as RichTable

    def when(stamp: float | None) -> str:
        return "" if stamp is None else datetime.fromtimestamp(stamp, UTC).strftime("%Y-%m-%d %H:%M UTC")

    with user_errors():
        with _ledger(config) as ledger:
            analysts = ledger.analysts()
        shown = RichTable(title=f"{len(analysts)} analysts", title_justify="left")
        for column in ("name", "key made", "revoked"):
            shown.add_column(column)
        for entry in analysts:
            shown.add_row(entry["name"], when(entry["created"]), when(entry["revoked"]) or "-")
        console.print(shown)


@contextmanager
def _ledger(config: Path) -> Iterator[Any]:
    """The ledger of a server configuration (its keys only: no dataset is loaded)."""
    from sdckit.query.config import load_server_config
    from sdckit.query.ledger import Ledger

    ledger = Ledger(load_server_config(config).store)
    try:
        yield ledger
    finally:
        ledger.close()
