"""Where the partitions of a run are processed: in this process, one after the other (``local``), or
as tasks of a Dask cluster (``dask``, :mod:`distributed`), embedded or joined by its address.

Both engines run the same functions on the same partitions and combine the partial results with the
same binary tree (:func:`tree_split`), so a run gives the same bytes on either engine. The local engine
walks the tree depth first, holding at most one partial result per level (memory bounded by the
aggregate, not by the records); Dask runs every partition as a task, combines partial results on the
workers and sends only the final aggregate back.

A lost worker (killed, out of memory, its machine gone) does not change a result: Dask reruns the
tasks whose results it held, and every task here is a pure function of its partition, writing its
output file under a temporary name that it renames when done.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import signal
import tempfile
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from sdckit.context import ProgressCallback
from sdckit.errors import ConfigError, InputError

ENGINES = ("local", "dask")
SCHEDULER_VARIABLE = "SDCKIT_SCHEDULER"


def tree_split(lo: int, hi: int) -> int:
    """Where the tree that combines the partial results of items ``lo .. hi-1`` splits them."""
    return (lo + hi) // 2


class Engine(ABC):
    """Runs functions over partitions; see the module documentation."""

    name: str

    @abstractmethod
    def map(
        self,
        function: Callable[..., Any],
        items: Sequence[Any],
        shared: Any = None,
        progress: ProgressCallback | None = None,
    ) -> list[Any]:
        """``[function(item, shared) for item in items]``, in order."""

    @abstractmethod
    def map_reduce(
        self,
        function: Callable[..., Any],
        combine: Callable[[Any, Any], Any],
        items: Sequence[Any],
        shared: Any = None,
        progress: ProgressCallback | None = None,
    ) -> Any:
        """``function(item, shared)`` for every item, combined pairwise along the tree of
        :func:`tree_split`."""

    def close(self) -> None:  # noqa: B027 (nothing to release by default)
        """Release what the engine started."""

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class LocalEngine(Engine):
    """Partitions one after the other in this process."""

    name = "local"

    def map(self, function, items, shared=None, progress=None):
        results = []
        for done, item in enumerate(items, start=1):
            results.append(function(item, shared))
            if progress is not None:
                progress(done, len(items))
        return results

    def map_reduce(self, function, combine, items, shared=None, progress=None):
        if not items:
            raise ValueError("nothing to reduce")
        done = [0]

        def leaf(index: int) -> Any:
            result = function(items[index], shared)
            done[0] += 1
            if progress is not None:
                progress(done[0], len(items))
            return result

        def reduce(lo: int, hi: int) -> Any:
            if hi - lo == 1:
                return leaf(lo)
            middle = tree_split(lo, hi)
            return combine(reduce(lo, middle), reduce(middle, hi))

        return reduce(0, len(items))


class DaskEngine(Engine):
    """Partitions as tasks of a Dask cluster: an embedded ``LocalCluster`` of worker processes, or the
    scheduler at ``address``."""

    name = "dask"

    def __init__(self, address: str | None = None, workers: int | None = None, client: Any = None) -> None:
        from sdckit._extras import require

        require("scale", feature="the dask engine")
        import dask
        from distributed import Client, LocalCluster

        self._cluster: Any = None
        self._scratch: tempfile.TemporaryDirectory[str] | None = None
        self._own_server = False
        self._own_client = client is None
        if client is not None:
            self.client = client
            return
        if address:
            try:
                self.client = Client(address, timeout="10s")
            except (OSError, TimeoutError) as error:
                raise InputError(f"cannot reach the Dask scheduler at {address}: {error}") from None
            return
        count = workers or os.cpu_count() or 1
        # The scratch folder of the scheduler and the workers (spilled data, locks) is ours, removed by
        # close(): Dask's default, $TMPDIR/dask-scratch-space, outlives the run.
        self._scratch = tempfile.TemporaryDirectory(prefix="sdckit-dask-")
        try:
            settings = {"temporary-directory": self._scratch.name}
            if "forkserver" in multiprocessing.get_all_start_methods():
                # workers forked by a fork server that ignores Ctrl-C (sdckit._processes)
                settings["distributed.worker.multiprocessing-method"] = "forkserver"
            with dask.config.set(settings), _interrupts_after_start():
                if "distributed.worker.multiprocessing-method" in settings:
                    from distributed.utils import get_mp_context

                    from sdckit._processes import start_fork_server

                    get_mp_context()  # sets the fork server's preload (distributed and its needs)
                    self._own_server = start_fork_server()
                # the scheduler first, then the workers: interrupted while they start, close() stops them
                self._cluster = LocalCluster(
                    n_workers=0,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=":0",
                    silence_logs=logging.ERROR,
                    local_directory=self._scratch.name,
                    preload=[_WORKER_PRELOAD],
                )
                self._cluster.scale(count)
                self.client = Client(self._cluster)
                self.client.wait_for_workers(count)
        except BaseException:
            _silence_shutdown()
            self.close()
            raise

    def _scatter(self, shared: Any) -> Any:
        # A task that returns it, not scattered data: if the worker holding it is lost, the scheduler
        # computes it again (scattered data would be gone, and the run with it).
        return None if shared is None else self.client.submit(_identity, shared, pure=False)

    def _progress(self, futures: list[Any], progress: ProgressCallback | None) -> None:
        from distributed import as_completed

        if progress is None:
            return
        for done, _ in enumerate(as_completed(futures), start=1):
            progress(done, len(futures))

    def map(self, function, items, shared=None, progress=None):
        shared_future = self._scatter(shared)
        futures = self.client.map(function, list(items), [shared_future] * len(items), pure=False)
        self._progress(futures, progress)
        return self.client.gather(futures)

    def map_reduce(self, function, combine, items, shared=None, progress=None):
        if not items:
            raise ValueError("nothing to reduce")
        shared_future = self._scatter(shared)
        leaves = self.client.map(function, list(items), [shared_future] * len(items), pure=False)

        def reduce(lo: int, hi: int) -> Any:
            if hi - lo == 1:
                return leaves[lo]
            middle = tree_split(lo, hi)
            return self.client.submit(combine, reduce(lo, middle), reduce(middle, hi), pure=False)

        final = reduce(0, len(leaves))
        self._progress(leaves, progress)
        return final.result()

    def __exit__(self, *exc: object) -> None:
        if exc[0] is not None:  # interrupted or failed: what the shutdown logs is noise
            _silence_shutdown()
        self.close()

    def close(self) -> None:
        """Stop what the engine started: the client, the embedded cluster, the fork server of its
        workers and its scratch folder."""
        if self._own_client and hasattr(self, "client"):
            self.client.close()
        if self._cluster is not None:
            self._cluster.close()
        if self._own_server:
            from sdckit._processes import stop_fork_server

            self._own_server = False
            stop_fork_server()
        if self._scratch is not None:
            self._scratch.cleanup()
            self._scratch = None


@contextlib.contextmanager
def _interrupts_after_start() -> Iterator[None]:
    """Ctrl-C while the cluster starts is acted on once it has started (a few seconds): distributed
    cannot close a cluster interrupted while it scales (its close is cancelled with the start, and
    the workers, their semaphores and folders outlive the run)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if received:
            signal.raise_signal(signal.SIGINT)


#: Imported by every worker of the embedded cluster as it starts: Ctrl-C in a terminal reaches the
#: whole process group, and only this process, which stops the cluster, is to act on it.
_WORKER_PRELOAD = "sdckit.scale._worker_start"

#: The loggers that talk while a cluster shuts down (asyncio: "Task exception was never retrieved").
_SHUTDOWN_LOGGERS = ("distributed", "asyncio", "tornado")


def _silence_shutdown() -> None:
    """Silence what a cluster stopped by an interrupt or a failure logs (tasks cancelled, "Task
    exception was never retrieved", workers' connections closed): the run has already said why it
    stops. For good, not for the close: asyncio reports a cancelled task when it is collected, which
    may be after close() returns."""
    for name in _SHUTDOWN_LOGGERS:
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)


def _identity(value: Any) -> Any:
    return value


def make_engine(engine: str = "local", scheduler: str | None = None, workers: int | None = None) -> Engine:
    """The engine named ``engine``; ``scheduler`` (or the environment variable ``SDCKIT_SCHEDULER``)
    is the address of a running Dask scheduler to join, else an embedded cluster of ``workers``
    processes is started (default: one per core)."""
    if engine not in ENGINES:
        raise ConfigError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    if engine == "local":
        if scheduler is not None:
            raise ConfigError(
                "a scheduler address is for the dask engine; the local engine runs in this process"
            )
        return LocalEngine()
    scheduler = scheduler or os.environ.get(SCHEDULER_VARIABLE) or None
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ConfigError(f"workers must be a whole number >= 1, got {workers!r}")
    return DaskEngine(scheduler, workers)
