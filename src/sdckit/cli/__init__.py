"""The ``sdckit`` command line: one module per command group, generated from the registries.

Exit statuses: 0 success; 1 internal error (a bug: please report it); 2 bad input, configuration or
option (one message, nothing written); 3 the release does not satisfy what was asked (nothing
written, unless ``--allow-violations``: then written, and still 3); 130 interrupted (nothing written);
141 (128 + SIGPIPE, as a command killed by a closed pipe) the reader of standard output closed it (``sdckit
... | head -1``): the outputs already written stay, nothing more is printed, no message.

This module stays light: the console script imports it first, and it installs the interrupt handler
before anything slow (polars, numba) is imported, so that Ctrl-C at any moment gives one line and 130.
"""

from __future__ import annotations

import os
import signal
import sys
import warnings
from typing import Any

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_USAGE = 2
EXIT_NOT_MET = 3
EXIT_INTERRUPTED = 130
EXIT_PIPE_CLOSED = 141


class _Interrupts:
    """Ctrl-C raises KeyboardInterrupt, and is remembered, so that a library that swallows the
    exception cannot turn an interrupted run into a success; while outputs are renamed into place it
    is only remembered (the run then removes them)."""

    def __init__(self) -> None:
        self.received = False
        self.deferred = False

    def handle(self, signum: int, frame: Any) -> None:
        self.received = True
        if not self.deferred:
            raise KeyboardInterrupt


interrupts = _Interrupts()


def main(arguments: list[str] | None = None) -> None:
    """The console script: run the app, map every way out to one exit status and at most one line."""
    signal.signal(signal.SIGINT, interrupts.handle)
    sys.unraisablehook = _unraisable
    warnings.showwarning = _ShowWarning(warnings.showwarning)
    code = EXIT_INTERNAL
    try:
        given = sys.argv[1:] if arguments is None else list(arguments)
        if given[:1] == ["--version"]:
            # Eager and first (as the app would print it whatever follows), without loading the app.
            from sdckit import __version__

            sys.stdout.write(f"sdckit {__version__}\n")
            code = EXIT_OK
        elif given == ["--help"]:
            # The root's help is its entries' short help: printed without loading typer or a group.
            import shutil

            from sdckit.cli._entries import root_help

            sys.stdout.write(root_help(min(shutil.get_terminal_size().columns, 80)))
            code = EXIT_OK
        else:
            from sdckit.cli._root import run

            code = run(arguments)
    except KeyboardInterrupt:
        code = EXIT_INTERRUPTED
    except BrokenPipeError:
        code = EXIT_PIPE_CLOSED  # a reader such as `head` closed stdout: quietly, as a closed pipe ends
    finally:
        interrupts.deferred = True  # from here on Ctrl-C is only noted, and undoes the run
        # Nothing can be pending when no command loaded the outputs (--version, --help).
        _outputs = sys.modules.get("sdckit.cli._outputs")
        if _outputs is not None:
            _outputs.discard_pending()
    _quiet_stdout()
    frequency, kernels = sys.modules.get("sdckit.frequency"), sys.modules.get("sdckit._numba")
    if code == EXIT_OK and frequency is not None and kernels is not None and not kernels.shipped_in_use():
        # Without precompiled kernels the background warm-up compiles them; an exit now would kill
        # the compilation, and the next run would compile again what this one started.
        frequency.finish_warm_up(lambda: interrupts.received)
    if interrupts.received:
        if _outputs is not None:
            _outputs.discard_committed()
        code = EXIT_INTERRUPTED
    if code == EXIT_INTERRUPTED:
        sys.stderr.write("interrupted\n")
    sys.stderr.flush()
    if arguments is None:
        # The console script ends here, without the interpreter's slow teardown (numba, llvmlite),
        # during which the default Ctrl-C handler is back and would kill a finished run.
        os._exit(code)
    sys.exit(code)


def _unraisable(unraisable: Any) -> None:
    """An interrupt that lands in a finalizer or weakref callback cannot propagate; it is already
    noted (the run ends with 130), so no "Exception ignored" traceback is printed for it. Nor for what
    fails in a finalizer once Ctrl-C was pressed: an object the interrupt stopped half-built (an event
    loop interrupted in its constructor has no ``_closed`` for its ``__del__``) fails as it is
    collected, and the run already ends with one line and 130."""
    if isinstance(unraisable.exc_value, KeyboardInterrupt) or interrupts.received:
        return
    sys.__unraisablehook__(unraisable)


class _ShowWarning:
    """``warnings.showwarning`` that says nothing of a coroutine never awaited once Ctrl-C was pressed:
    an interrupt as a server starts leaves its coroutine unstarted, and it is collected on the way out
    (set before any ``catch_warnings``, which restore it, so it holds wherever the coroutine goes)."""

    def __init__(self, show: Any) -> None:
        self.show = show

    def __call__(self, message: Any, category: type[Warning], *rest: Any, **options: Any) -> None:
        if interrupts.received and issubclass(category, RuntimeWarning) and "never awaited" in str(message):
            return
        self.show(message, category, *rest, **options)


def _quiet_stdout() -> None:
    """Flush stdout; if the reader has gone, point it at /dev/null so that exit does not complain."""
    try:
        sys.stdout.flush()
    except (BrokenPipeError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def __getattr__(name: str) -> Any:
    if name == "app":  # tests use `from sdckit.cli import app` with typer's CliRunner
        from sdckit.cli._root import app

        return app
    raise AttributeError(name)
