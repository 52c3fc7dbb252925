"""``sdckit ui``: the local browser workbench (:mod:`sdckit.ui`)."""

from __future__ import annotations

import secrets
import shutil
import tempfile
from pathlib import Path
from typing import Annotated

import typer

from sdckit.cli._common import console, user_errors
from sdckit.cli.serve import _listen


def ui(
    data: Annotated[
        Path | None, typer.Option("--data", "-d", help="Open this microdata file (CSV or Parquet) at start.")
    ] = None,
    config: Annotated[
        Path | None, typer.Option("--config", "-c", help="Fill the form from this configuration (YAML).")
    ] = None,
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1 (0 picks a free one).")] = 8765,
    workdir: Annotated[
        Path | None,
        typer.Option(
            "--workdir",
            help="Folder for the configuration, runs and releases (kept); default a temporary folder, "
            "removed when the server stops.",
        ),
    ] = None,
) -> None:
    """Serve the workbench on 127.0.0.1 until interrupted (Ctrl-C): describe the data and write its
    configuration, measure its risk, protect it with any registered method, compare the releases on
    an R-U map and export them. The address printed carries a random token: without it every request
    is refused (403)."""
    with user_errors():
        from sdckit._extras import require

        require("ui", feature="sdckit ui")
        if workdir is not None and workdir.exists() and not workdir.is_dir():
            from sdckit.errors import ConfigError

            raise ConfigError(
                f"--workdir {workdir}: is a file, not a folder; give a folder (created if absent)"
            )
        listener = _listen("127.0.0.1", port)
        folder = workdir if workdir is not None else Path(tempfile.mkdtemp(prefix="sdckit-ui-"))
        session = None
        try:
            session = _session(folder, data, config)
            _serve(session, listener)
        finally:
            listener.close()
            if session is not None:
                session.jobs.shutdown()
            if workdir is None:
                shutil.rmtree(folder, ignore_errors=True)


def _session(folder: Path, data: Path | None, config: Path | None):
    """The workbench's state with the files given at start; one that cannot be read is exit 2 (a
    configuration that does not fit the data is shown on the page, where it is fixed)."""
    from sdckit.errors import ConfigError
    from sdckit.ui.session import Session

    session = Session(folder.resolve())
    if config is not None:
        session.load_config(str(config))
        if session.load_error:
            raise ConfigError(session.load_error)
    if data is not None:
        session.open_data(str(data))
        if session.data_error:
            raise ConfigError(session.data_error)
    return session


def _serve(session, listener) -> None:
    import uvicorn

    from sdckit.ui.app import create_app

    token = secrets.token_urlsafe(32)
    port = listener.getsockname()[1]
    app = create_app(session, token, port)
    console.print(
        f"sdckit workbench on http://127.0.0.1:{port}/?token={token} (open this address; Ctrl-C stops)",
        highlight=False,
        soft_wrap=True,
    )
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
    server.run(sockets=[listener])
