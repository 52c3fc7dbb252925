"""Long runs of the workbench, each in a process of its own.

The server only starts a job, reads its progress and outcome from the job's folder
(:mod:`sdckit.ui.worker`) and, to cancel it, terminates its process: a run in the server's process
could not be stopped, and would hold the interpreter the pages are served from. Processes come from
a fork server that has imported the library once (``forkserver``, where the platform has it; a fresh
interpreter otherwise), so a job starts in a fraction of a second.
"""

from __future__ import annotations

import json
import multiprocessing
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RUNNING, DONE, FAILED, CANCELLED = "running", "done", "failed", "cancelled"


@dataclass
class Job:
    """One run: ``kind`` (measure, protect, compare), a title for the page, its folder and process."""

    id: str
    kind: str
    title: str
    folder: Path
    process: Any
    started: float = field(default_factory=time.time)
    ended: float | None = None
    cancelled: bool = False
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def state(self) -> str:
        if self.cancelled:
            return CANCELLED
        if self.process.is_alive():
            return RUNNING
        if self.ended is None:
            self.process.join(0)
            written = [
                p.stat().st_mtime
                for p in (self.folder / "result.json", self.folder / "error.json")
                if p.exists()
            ]
            self.ended = max(written) if written else time.time()
        if (self.folder / "result.json").exists():
            return DONE
        return FAILED

    def progress(self) -> dict[str, Any]:
        return _read(self.folder / "progress.json") or {"done": 0, "total": 0, "stage": "starting"}

    def result(self) -> dict[str, Any] | None:
        return _read(self.folder / "result.json") if self.state == DONE else None

    def error(self) -> str | None:
        if self.state != FAILED:
            return None
        found = _read(self.folder / "error.json")
        if found:
            return str(found.get("message"))
        return f"the job's process ended with status {self.process.exitcode} before it finished"

    def elapsed(self) -> float:
        return (self.ended or time.time()) - self.started


def _read(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


class Jobs:
    """The jobs of a session, in order of start, under ``root``."""

    def __init__(self, root: Path, warm_up: bool = True) -> None:
        self.root = root
        self.jobs: dict[str, Job] = {}
        self._lock = threading.Lock()
        self._own_server = False
        methods = multiprocessing.get_all_start_methods()
        self._context: multiprocessing.context.ForkServerContext | multiprocessing.context.SpawnContext
        if "forkserver" in methods:
            self._context = multiprocessing.get_context("forkserver")
            if warm_up:
                self.warm_up()
        else:
            self._context = multiprocessing.get_context("spawn")

    def warm_up(self) -> None:
        """Start the fork server now (it imports the library once, in the background), not at the
        first run; it ignores Ctrl-C, as the jobs it forks do (the server stops them)."""
        if isinstance(self._context, multiprocessing.context.ForkServerContext):
            from sdckit._processes import start_fork_server

            self._own_server = start_fork_server(["sdckit.ui.worker"]) or self._own_server

    def start(self, kind: str, title: str, prepare: Callable[[Path], dict[str, Any]], **meta: Any) -> Job:
        """Start job ``kind``; ``prepare(folder)`` puts its inputs in its folder and returns its payload."""
        from sdckit.ui import worker

        identifier = f"{len(self.jobs) + 1:03d}-{secrets.token_hex(3)}"
        folder = self.root / identifier
        folder.mkdir(parents=True)
        payload = prepare(folder)
        (folder / "payload.json").write_text(json.dumps(payload, default=str), encoding="utf-8")
        if not self._own_server:
            self.warm_up()  # started on first use when the session did not warm up
        process = self._context.Process(target=worker.main, args=(kind, str(folder)), daemon=True)
        with self._lock:
            process.start()
            job = Job(identifier, kind, title, folder, process, meta=dict(meta))
            self.jobs[identifier] = job
        return job

    def get(self, identifier: str) -> Job | None:
        return self.jobs.get(identifier)

    def running(self) -> list[Job]:
        return [job for job in self.jobs.values() if job.state == RUNNING]

    def cancel(self, job: Job) -> None:
        """Stop the job's process (SIGTERM, then SIGKILL after 5 s); its partial files stay unread."""
        if job.state != RUNNING:
            return
        job.cancelled = True
        job.process.terminate()
        job.process.join(5)
        if job.process.is_alive():
            job.process.kill()
            job.process.join(5)
        job.ended = time.time()

    def shutdown(self) -> None:
        """Stop the running jobs, then the fork server this session started and its temporary
        folder."""
        for job in list(self.jobs.values()):
            self.cancel(job)
        if self._own_server:
            from sdckit._processes import stop_fork_server

            self._own_server = False
            stop_fork_server()
