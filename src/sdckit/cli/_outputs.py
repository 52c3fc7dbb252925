"""All the outputs of one run, written together or not at all.

A command declares its outputs before it computes (so that a bad path fails at once), stages them
after computing, and commits: every output is first written under a hidden temporary name beside
its target, and only when all are written are they renamed into place. A failure or an interrupt
before that leaves none of them; one during the renames removes those already renamed. Inputs are
never outputs: a path that resolves to an input file (same path or same inode), that lies inside an
input data set (a folder of Parquet parts, or the folder of a glob pattern that the path matches) or
that contains an input (a folder output holding the data or configuration) is refused, symbolic links
resolved.

A folder of Parquet parts (``-o FOLDER`` of a run over partitions) is written whole under a temporary
name beside it and swapped in at the end: an earlier output there is replaced only when the run
succeeded, and no old part survives beside the new ones. An existing folder that holds anything but
``part-<number>.parquet`` files is not an earlier output of sdckit and is refused.
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import re
import secrets
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sdckit.context import ExtraOutput
from sdckit.errors import ConfigError, InputError

_pending: set[Path] = set()  # temporary files and folders of the run, removed on any way out
_committed: list[Path] = []  # outputs renamed into place, removed if the run is then interrupted


def discard_pending() -> None:
    for path in list(_pending):
        _remove(path)
        _pending.discard(path)


def discard_committed() -> None:
    for path in _committed:
        _remove(path)
    _committed.clear()


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()


def extra_writer(extra: ExtraOutput, result: Any, title: str) -> Callable[[Path], object]:
    """What :meth:`Outputs.stage` writes for an extra file of a method or measure: ``extra.write(result,
    temporary_path, title)``."""
    return lambda path: extra.write(result, path, title)


def _same_file(a: Path, b: Path) -> bool:
    if a.resolve() == b.resolve():
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


#: What a folder of parts that sdckit wrote holds: nothing else.
_PART_NAME = re.compile(r"part-[0-9]+\.parquet")
_GLOB_CHARACTERS = frozenset("*?[")


def _extent(source: Path) -> tuple[Path, str | None]:
    """The folder an input occupies, resolved, and for a glob pattern (a data set named by its files)
    the pattern its files match, resolved as well; ``(file, None)`` for a file."""
    text = str(source)
    if source.exists() or not _GLOB_CHARACTERS & set(text):
        return source.resolve(), None
    fixed = []
    for part in source.parts:
        if _GLOB_CHARACTERS & set(part):
            break
        fixed.append(part)
    root = Path(*fixed).resolve() if fixed else Path.cwd().resolve()
    rest = source.parts[len(fixed) :]
    return root, str(root.joinpath(*rest))


def _inside(path: Path, folder: Path) -> bool:
    return folder in path.parents


def _foreign_entry(folder: Path) -> Path | None:
    """The first entry of ``folder`` that an earlier parts output of sdckit would not hold."""
    for entry in sorted(folder.iterdir()):
        if entry.is_symlink() or not entry.is_file() or not _PART_NAME.fullmatch(entry.name):
            return entry
    return None


@dataclass
class _Output:
    path: Path
    option: str
    directory: bool
    write: Callable[[Path], object] | None = None
    parts: bool = False  # a folder of Parquet parts: swapped in whole


class Outputs:
    """The outputs of one command run; ``inputs`` are the files it reads."""

    def __init__(self, inputs: Sequence[Path | None]) -> None:
        self.inputs = [Path(p) for p in inputs if p is not None]
        self.outputs: list[_Output] = []

    def file(self, path: Path | None, option: str, suffixes: Sequence[str]) -> Path | None:
        """Declare an output file (None: not asked for); refused now if it cannot be one."""
        if path is None:
            return None
        if path.suffix.lower() not in suffixes:
            raise ConfigError(f"{option} {path}: the file must end in {' or '.join(suffixes)}")
        if path.is_dir():
            raise ConfigError(f"{option} {path}: is a directory")
        if path.exists() and not path.is_file():
            raise ConfigError(f"{option} {path}: is not a regular file")
        return self._declare(path, option, directory=False)

    def directory(self, path: Path, option: str, parts: bool = False) -> Path:
        """Declare an output folder: its files are written into a new folder, then moved in; with
        ``parts`` (a folder of Parquet parts) the new folder replaces the old one whole, which must
        then be empty or an earlier output of sdckit."""
        if path.exists() and not path.is_dir():
            raise ConfigError(f"{option} {path} exists and is not a directory")
        declared = self._declare(path, option, directory=True)
        self.outputs[-1].parts = parts
        if parts:
            _check_replaceable(path, option)
        return declared

    def _declare(self, path: Path, option: str, directory: bool) -> Path:
        target = path.resolve()
        for source in self.inputs:
            if _same_file(path, source):
                raise ConfigError(
                    f"{option} {path}: is an input of this command ({source}); choose another path"
                )
            root, pattern = _extent(source)
            within = root.is_dir() if pattern is None else fnmatch.fnmatchcase(str(target), pattern)
            if within and _inside(target, root):
                raise ConfigError(
                    f"{option} {path}: lies inside the input data set {source} (it would become "
                    "part of it); choose a path outside it"
                )
            if _inside(root, target):
                raise ConfigError(
                    f"{option} {path}: contains an input of this command ({source}); choose another path"
                )
        for other in self.outputs:
            if _same_file(path, other.path):
                raise ConfigError(f"{option} {path}: is also the {other.option} of this command")
        self.outputs.append(_Output(path, option, directory))
        return path

    def stage(self, path: Path | None, write: Callable[[Path], object]) -> None:
        """What to write at ``path`` (a declared output): ``write(temporary_path)`` (what it returns
        is not read)."""
        if path is None:
            return
        for output in self.outputs:
            if output.path == path:
                output.write = write
                return
        raise ValueError(f"{path} was not declared as an output")

    def commit(self) -> list[Path]:
        """Write every staged output under a temporary name, then rename them all into place."""
        from sdckit.cli import interrupts

        staged = [(output, output.write) for output in self.outputs if output.write is not None]
        temporaries: list[tuple[_Output, Path]] = []
        created: list[Path] = []
        for output, _ in staged:
            if output.parts:  # it may have changed since it was declared
                _check_replaceable(output.path, output.option)
        try:
            for output, write in staged:
                parent = output.path.parent
                missing = [p for p in [parent, *parent.parents] if not p.exists()]
                for folder in reversed(missing):
                    folder.mkdir()
                    created.append(folder)
                    _pending.add(folder)
                temporary = parent / f".{output.path.name}.{secrets.token_hex(6)}.tmp{output.path.suffix}"
                _pending.add(temporary)
                if output.directory:
                    temporary.mkdir()
                write(temporary)
                temporaries.append((output, temporary))
        except OSError as error:
            discard_pending()
            raise InputError(
                f"{output.option} {output.path}: cannot write: {error.strerror or error}"
            ) from None
        except InputError as error:
            discard_pending()
            reason = str(error).split("cannot write: ", 1)[-1]
            raise InputError(f"{output.option} {output.path}: cannot write: {reason}") from None
        except BaseException:
            discard_pending()
            raise
        interrupts.deferred = True  # the renames are not interrupted half way
        try:
            for output, temporary in temporaries:
                if output.parts:
                    self._swap_in(temporary, output.path)
                elif output.directory:
                    self._move_into(temporary, output.path)
                else:
                    os.replace(temporary, output.path)
                    _committed.append(output.path)
                _pending.discard(temporary)
            for folder in created:
                _pending.discard(folder)
        finally:
            interrupts.deferred = False
        if interrupts.received:
            raise KeyboardInterrupt
        return [output.path for output, _ in temporaries]

    @staticmethod
    def _swap_in(temporary: Path, target: Path) -> None:
        """Put the folder ``temporary`` in the place of ``target`` (an earlier output, if any, is
        set aside under a hidden name, then removed; put back if the swap fails)."""
        if not os.path.lexists(target):
            os.replace(temporary, target)
            _committed.append(target)
            return
        aside = target.parent / f".{target.name}.{secrets.token_hex(6)}.old"
        os.replace(target, aside)
        _pending.add(aside)
        try:
            os.replace(temporary, target)
        except OSError:
            os.replace(aside, target)
            _pending.discard(aside)
            raise
        _committed.append(target)
        _remove(aside)
        _pending.discard(aside)

    @staticmethod
    def _move_into(temporary: Path, target: Path) -> None:
        if not target.exists():
            os.replace(temporary, target)
            _committed.append(target)
            return
        for item in sorted(temporary.iterdir()):
            destination = target / item.name
            if destination.is_dir() and not item.is_dir():
                raise InputError(f"{destination}: is a directory; cannot write the file there")
            os.replace(item, destination)
            _committed.append(destination)
        temporary.rmdir()


def _check_replaceable(path: Path, option: str) -> None:
    """Refuse a folder of parts to replace unless it is empty or holds only the parts of an earlier
    run (``part-<number>.parquet`` files)."""
    if not path.is_dir():
        return
    try:
        foreign = _foreign_entry(path)
    except OSError as error:
        raise ConfigError(f"{option} {path}: cannot read the folder: {error.strerror or error}") from None
    if foreign is not None:
        raise ConfigError(
            f"{option} {path}: the folder holds {foreign.name!r}, which is not a part an earlier sdckit "
            "run wrote (part-<number>.parquet); a folder of parts replaces the whole folder, so give a "
            "new or empty folder"
        )
