"""``sdckit serve`` (the query server), ``sdckit keys add|revoke|list`` (analysts' API keys) and
``sdckit ledger init|verify|backup`` (its ledger)."""

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
    init: Annotated[
        bool,
        typer.Option(
            "--init",
            help="Create the ledger if it is missing and register the configuration's data sources in "
            "it (a new source starts with fresh budgets). Without it, a missing ledger or an "
            "unregistered source is refused.",
        ),
    ] = False,
) -> None:
    """Serve the configured datasets over HTTP until interrupted (Ctrl-C).

    Loads every dataset once (read-only), opens and verifies the ledger, and answers queries at
    POST /datasets/{name}/query under each dataset's protection; the OpenAPI description is at
    /openapi.json. Requests need 'Authorization: Bearer KEY' (see sdckit keys add).
    """
    with user_errors():
        from sdckit._extras import require
        from sdckit.query.config import load_server_config

        require("server", "fastapi", "uvicorn", "opendp", feature="sdckit serve")
        settings = load_server_config(config)
        listener = _listen(host, port)
        try:
            _run(settings, listener, host, init)
        finally:
            listener.close()


def _listen(host: str, port: int) -> socket.socket:
    """A bound, listening socket (a taken port is a message, not a traceback); a warning off loopback."""
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
    # Listening from here on: a client that connects as soon as the address is printed waits in the
    # backlog until the server accepts, instead of being refused (the server listens again, harmlessly).
    listener.listen(2048)
    return listener


def _run(settings, listener: socket.socket, host: str, init: bool) -> None:
    import logging

    import uvicorn

    from sdckit.query.server import create_app
    from sdckit.query.service import QueryService

    service = QueryService(settings, init=init)
    for warning in service.warnings:
        errors.print(f"[bold yellow]warning:[/] {warning}", highlight=False)
    # failed logins and refusals (never keys, queries' values or answers) to stderr
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    for name in ("sdckit.query.server", "sdckit.query.service"):
        logging.getLogger(name).addHandler(handler)
        logging.getLogger(name).setLevel(logging.INFO)
    try:
        app = create_app(service)
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
    except BaseException:
        service.discard()  # a start that fails leaves no ledger it created behind
        raise
    try:
        port = listener.getsockname()[1]
        shown = f"[{host}]" if ":" in host else host
        names = ", ".join(entry["name"] for entry in service.datasets())
        console.print(
            f"serving {names or 'no datasets'} on http://{shown}:{port} "
            f"(OpenAPI: http://{shown}:{port}/openapi.json); Ctrl-C stops",
            highlight=False,
            soft_wrap=True,
        )
        server.run(sockets=[listener])
    finally:
        service.close()


# sdckit keys ------------------------------------------------------------------------------------

keys = typer.Typer(
    help="Analysts' API keys of a query server: add (printed once), revoke, list.",
    no_args_is_help=True,
)


@keys.command("add")
def add(
    name: NameArgument,
    config: ServerConfigOption,
    dataset: Annotated[
        list[str] | None,
        typer.Option(
            "--dataset", "-d", help="A dataset entry the key reaches; repeatable.", show_default=False
        ),
    ] = None,
    every: Annotated[
        bool, typer.Option("--all", help="The key reaches every dataset entry of the server, now and later.")
    ] = False,
) -> None:
    """Create the analyst NAME and print their new API key, once (only its hash is stored).

    A key reaches the datasets named by --dataset (repeatable), or every dataset with --all; one
    of the two is required. The key goes in every request as 'Authorization: Bearer KEY'. A NAME
    that already has a key is refused (exit 2): revoke it first, or choose another name.
    """
    from sdckit.errors import ConfigError
    from sdckit.query.ledger import ALL

    with user_errors():
        if bool(dataset) == every:
            raise ConfigError(
                "a key needs a scope: give the datasets it reaches with --dataset NAME (repeatable), "
                "or --all for every dataset, not both"
            )
        from sdckit.query.config import load_server_config

        known = load_server_config(config).datasets
        for entry in dataset or []:
            if entry not in known:
                raise ConfigError(
                    f"--dataset: no dataset '{entry}' in {config} (datasets: {', '.join(known)})"
                )
        with _ledger(config) as ledger:
            key = ledger.add_key(name, ALL if every else list(dataset or []))
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
        for column in ("name", "datasets", "key made", "revoked"):
            shown.add_column(column)
        for entry in analysts:
            scope = "every one" if entry["scope"] == "*" else ", ".join(entry["scope"])
            shown.add_row(entry["name"], scope, when(entry["created"]), when(entry["revoked"]) or "-")
        console.print(shown)


@contextmanager
def _ledger(config: Path, verify: bool = True) -> Iterator[Any]:
    """The ledger of a server configuration (verified unless told; no dataset is loaded)."""
    from sdckit.query.config import load_server_config
    from sdckit.query.ledger import Ledger

    ledger = Ledger(load_server_config(config).store, verify=verify)
    try:
        yield ledger
    finally:
        ledger.close()


# sdckit ledger ----------------------------------------------------------------------------------

ledger = typer.Typer(
    help="A query server's ledger (keys, spends, answered queries): init, verify, backup.",
    no_args_is_help=True,
)


@ledger.command("init")
def ledger_init(config: ServerConfigOption) -> None:
    """Create the configuration's ledger (mode 0600) and register its data sources.

    Refused if a file is already there: a ledger is never overwritten. The data files are read
    once, to identify each data source by its content (SHA-256).
    """
    from sdckit.query.config import group_sources, load_server_config
    from sdckit.query.ledger import Ledger

    with user_errors():
        settings = load_server_config(config)
        sources, warnings = group_sources(settings)
        for warning in warnings:
            errors.print(f"[bold yellow]warning:[/] {warning}", highlight=False)
        made = Ledger.create(settings.store)
        try:
            made.register({key: str(source.data) for key, source in sources.items()})
        finally:
            made.close()
        console.print(f"created the ledger {settings.store} ({len(sources)} data sources)", highlight=False)


@ledger.command("verify")
def ledger_verify(config: ServerConfigOption) -> None:
    """Check the ledger: its database, the hash chains of its logs and its running totals.

    Exit 0 and the number of entries if it is whole; exit 2 naming the first bad entry if not.
    """
    with user_errors():
        with _ledger(config, verify=False) as opened:
            counts = opened.verify()
        console.print(
            f"the ledger is whole: {counts['spends']:,} spends and {counts['answered']:,} answered queries, "
            "every chain verified",
            highlight=False,
        )


@ledger.command("backup")
def ledger_backup(
    config: ServerConfigOption,
    output: Annotated[
        Path, typer.Argument(help="The copy to write (refused if it exists).", show_default=False)
    ],
) -> None:
    """Copy the ledger to OUTPUT (mode 0600), consistently, while the server runs or not.

    Uses SQLite's online backup; the copy appears whole under its name or not at all.
    """
    with user_errors():
        with _ledger(config) as opened:
            opened.backup(output)
        console.print(f"backed up the ledger to {output}", highlight=False)
