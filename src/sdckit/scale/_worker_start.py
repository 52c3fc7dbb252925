"""Imported by each worker process of the embedded Dask cluster as it starts (a Dask ``preload``,
:class:`sdckit.scale.engine.DaskEngine`): the worker ignores Ctrl-C.

Ctrl-C in a terminal is sent to the whole process group, the workers included. The process that
started the cluster stops it (and the workers with it); a worker that acted on the interrupt itself
would die mid-task and print its traceback and asyncio's "Task exception was never retrieved".
"""

from __future__ import annotations

import signal
import threading

if threading.current_thread() is threading.main_thread():
    signal.signal(signal.SIGINT, signal.SIG_IGN)
