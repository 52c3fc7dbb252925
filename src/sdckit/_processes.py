"""The fork server behind sdckit's worker processes (the workbench's jobs, the workers of the
embedded Dask cluster): started so that Ctrl-C reaches only the process that owns the workers, and
stopped with what it left in ``$TMPDIR``.

Ctrl-C in a terminal is sent to the whole process group. A worker that acted on it would die
mid-task with a traceback (and a fork server still importing the library, with its own); the owner
stops its workers itself. So the fork server is started with SIGINT ignored, a disposition it keeps
through ``exec`` and hands to every process it forks (a signal mask would not do: multiprocessing
clears it when it starts a process). The owner ignores Ctrl-C only for the milliseconds the start
takes.

multiprocessing removes its folder (``$TMPDIR/pymp-*``, the fork server's socket) when the
interpreter exits, but the command line ends with ``os._exit`` (:func:`sdckit.cli.main`), which
skips that; :func:`stop_fork_server` removes it at once.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from typing import Any


def start_fork_server(preload: list[str] | None = None) -> bool:
    """Start multiprocessing's fork server (importing ``preload`` once) with Ctrl-C ignored by it and
    by the processes it forks; True if this call started it (then :func:`stop_fork_server` stops it),
    False if it was running already."""
    from multiprocessing import forkserver

    server: Any = forkserver._forkserver
    if getattr(server, "_forkserver_pid", None) is not None:
        forkserver.ensure_running()  # restarted if it died
        return False
    if preload is not None:
        forkserver.set_forkserver_preload(preload)
    if threading.current_thread() is not threading.main_thread():
        forkserver.ensure_running()  # signal dispositions can only be changed from the main thread
        return True
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        forkserver.ensure_running()
    finally:
        signal.signal(signal.SIGINT, previous)
    return True


def stop_fork_server() -> None:
    """Stop the fork server (at once, even while it still imports its preload) and remove
    multiprocessing's temporary folder; the processes it forked must have ended."""
    from multiprocessing import forkserver

    server: Any = forkserver._forkserver
    pid = getattr(server, "_forkserver_pid", None)
    if pid is not None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        with contextlib.suppress(OSError):
            server._stop()
    remove_multiprocessing_folder()


def remove_multiprocessing_folder() -> None:
    """Run now the finalizer by which multiprocessing removes its temporary folder at exit (it then
    makes a new one if it needs one again)."""
    from multiprocessing import util

    registry: dict[Any, Any] = getattr(util, "_finalizer_registry", {})
    remove = getattr(util, "_remove_temp_dir", None)
    for finalizer in list(registry.values()):
        if remove is not None and getattr(finalizer, "_callback", None) is remove:
            finalizer()
