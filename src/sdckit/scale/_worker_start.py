"""Imported by each worker process of the embedded Dask cluster as it starts (a Dask ``preload``,
:class:`sdckit.scale.engine.DaskEngine`): the worker ignores Ctrl-C.

Ctrl-C in a terminal is sent to the whole process group, the workers included. The process that
started the cluster stops it (and the workers with it); a worker that acted on the interrupt itself
would die mid-task and print its traceback and asyncio's "Task exception was never retrieved". Nor
does a worker report the scheduler it loses as the cluster stops (see :class:`_SchedulerGone`).
"""

from __future__ import annotations

import logging
import signal
import threading

if threading.current_thread() is threading.main_thread():
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class _SchedulerGone(logging.Filter):
    """Drops the worker's "Failed to communicate with scheduler during heartbeat" error: it is logged
    only when the scheduler has closed before the worker was told to (the cluster stopped after an
    interrupt, on a loaded machine), and the run has already said why it stops. Every other record of
    the worker's logs passes."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "Failed to communicate with scheduler during heartbeat" not in record.getMessage()


logging.getLogger("distributed.worker").addFilter(_SchedulerGone())
