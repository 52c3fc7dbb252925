"""``sdckit ui``: the local browser workbench (:mod:`sdckit.ui`)."""

from __future__ import annotations

import contextlib
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
        folder, before, created = _workdir(workdir)
        listener = session = None
        started = False
        try:
            listener = _listen("127.0.0.1", port)
            # the files given are read before any worker process starts: a refused start leaves none
            session = _session(folder, data, config)
            session.jobs.warm_up()
            started = True
            _serve(session, listener)
        finally:
            if listener is not None:
                listener.close()
            if session is not None:
                session.jobs.shutdown()  # the jobs, the fork server and multiprocessing's $TMPDIR folder
            if before is None:
                shutil.rmtree(folder, ignore_errors=True)
            elif not started:
                _remove_new(folder, before, created)


def _workdir(workdir: Path | None) -> tuple[Path, set[str] | None, bool]:
    """The workbench's folder, created if absent and checked writable; what it held before (None: a
    temporary folder of ours, removed when the server stops); whether this made it. A folder that
    cannot be written in is exit 2 naming it."""
    from sdckit.errors import ConfigError

    if workdir is None:
        return Path(tempfile.mkdtemp(prefix="sdckit-ui-")), None, True
    if workdir.exists() and not workdir.is_dir():
        raise ConfigError(f"--workdir {workdir}: is a file, not a folder; give a folder (created if absent)")
    before = {entry.name for entry in workdir.iterdir()} if workdir.exists() else set()
    created = not workdir.exists()
    try:
        workdir.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=workdir, prefix=".sdckit-write-check-"):
            pass
    except OSError as error:
        if created:
            with contextlib.suppress(OSError):
                workdir.rmdir()
        reason = error.strerror or type(error).__name__
        raise ConfigError(
            f"--workdir {workdir}: cannot write in this folder ({reason}); give a folder you can "
            "write to (created if absent)"
        ) from None
    return workdir, before, created


def _remove_new(folder: Path, before: set[str], created: bool) -> None:
    """Undo a refused start in a given folder: what it added goes (the folder too, if it made it)."""
    for entry in folder.iterdir():
        if entry.name not in before:
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)
    if created:
        with contextlib.suppress(OSError):
            folder.rmdir()


def _session(folder: Path, data: Path | None, config: Path | None):
    """The workbench's state with the files given at start; one that cannot be read is exit 2 (a
    configuration that does not fit the data is shown on the page, where it is fixed). No worker
    process is started here (``session.jobs.warm_up()`` does, once the files are read)."""
    from sdckit.errors import ConfigError
    from sdckit.ui.session import Session

    session = Session(folder.resolve(), warm_up=False)
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
