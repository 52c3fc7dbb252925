"""Nothing left behind: after a refused, failed or interrupted run, no new file in the folders the
run could write to (the output folder, the inputs' folder) and none in its temporary folder.

Use it around any command, in process or as a subprocess::

    with nothing_left_behind(tmp_path) as env:
        result = subprocess.run([...], env=env)  # env sets TMPDIR to a private folder
        # or in process: tempfile.gettempdir() is that folder while the block runs

The run gets a private temporary folder (``TMPDIR`` in ``env`` for a subprocess, ``tempfile.tempdir``
in process), so what other tests running beside it create is never counted: the check is
deterministic under ``pytest -n``. On leaving the block every folder is compared with what it held
before (recursively) and the private temporary folder must be empty; the assertion lists what was
left. Files that existed before and were changed are the business of the test's own assertions."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path


def _entries(folder: Path) -> set[str]:
    if not folder.exists():
        return set()
    return {path.relative_to(folder).as_posix() for path in folder.rglob("*")}


@contextlib.contextmanager
def nothing_left_behind(*folders: Path, allowed: tuple[str, ...] = ()) -> Iterator[dict[str, str]]:
    """Yield the environment of a run with a private ``TMPDIR``; on leaving, assert that no entry is new
    in ``folders`` (but the relative paths in ``allowed``) and that the private temporary folder is
    empty."""
    private = Path(tempfile.mkdtemp(prefix="sdckit-leftovers-"))
    before = {folder: _entries(folder) for folder in folders}
    saved = tempfile.tempdir
    tempfile.tempdir = str(private)
    try:
        yield {**os.environ, "TMPDIR": str(private)}
    finally:
        tempfile.tempdir = saved
    try:
        left = [
            f"{folder / name}"
            for folder in folders
            for name in sorted(_entries(folder) - before[folder])
            if name not in allowed
        ]
        left += [f"$TMPDIR/{name}" for name in sorted(_entries(private))]
        assert not left, "left behind: " + ", ".join(left)
    finally:
        shutil.rmtree(private, ignore_errors=True)
