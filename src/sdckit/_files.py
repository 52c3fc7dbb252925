"""Guards for every file sdckit reads: data, configurations, hierarchies, knowledge files.

Only regular files are read: a device (``/dev/zero``), a FIFO or a directory would make a reader hang
or fill the memory, so they are refused at once. Files read whole into Python objects (configurations,
hierarchies, knowledge files) have a size limit, and a file is refused when it is larger than the
memory available (reading it needs at least that much).
"""

from __future__ import annotations

import os
import stat

from sdckit.errors import SdcError

# What a configuration file may weigh: a few hundred attributes with weights for thousands of values
# take well under a megabyte.
MAX_CONFIG_BYTES = 16 * 1024 * 1024
# Hierarchies and knowledge files are read into Python lists (about 100 bytes per field), so a
# 256 MiB file already needs some gigabytes.
MAX_TEXT_BYTES = 256 * 1024 * 1024


def available_memory() -> int | None:
    """Bytes of memory available to a new allocation without swapping (Linux ``MemAvailable``),
    or None where it cannot be told."""
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _size_text(size: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size} bytes"


def check_regular_file(
    path: str | os.PathLike[str],
    label: str,
    what: str,
    error: type[SdcError],
    max_bytes: int | None = None,
    memory_factor: float = 1.0,
    missing: str | None = None,
) -> int:
    """The size of ``path`` after checking that it is a regular file that fits.

    Raises ``error`` (naming ``label``, how messages call the file, and ``what`` it should be, such as
    "data file") when the file does not exist, is a directory, a device, a FIFO or a socket, is larger
    than ``max_bytes``, or needs more than the available memory (``memory_factor`` times its size).
    ``missing`` replaces the message for a file that does not exist.
    """
    try:
        status = os.stat(path)
    except FileNotFoundError:
        raise error(missing or f"{label}: no such file") from None
    except OSError as problem:
        raise error(f"{label}: cannot read the {what}: {problem.strerror}") from None
    mode = status.st_mode
    if stat.S_ISDIR(mode):
        raise error(f"{label}: is a directory, not a {what}")
    if not stat.S_ISREG(mode):
        kind = (
            "a device"
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "a FIFO (named pipe)"
            if stat.S_ISFIFO(mode)
            else "a socket"
            if stat.S_ISSOCK(mode)
            else "not a regular file"
        )
        raise error(f"{label}: the {what} must be a regular file, got {kind}")
    size = status.st_size
    if max_bytes is not None and size > max_bytes:
        raise error(f"{label}: the {what} must be at most {_size_text(max_bytes)}, got {_size_text(size)}")
    available = available_memory()
    if available is not None and size * memory_factor > available:
        raise error(
            f"{label}: the {what} ({_size_text(size)}) must fit in the available memory "
            f"({_size_text(available)}), got a file too large to read"
        )
    return size


def read_text_file(
    path: str | os.PathLike[str],
    label: str,
    what: str,
    error: type[SdcError],
    max_bytes: int,
    encoding: str = "utf-8",
    missing: str | None = None,
) -> str:
    """The text of a regular file of at most ``max_bytes`` (see :func:`check_regular_file`),
    raising ``error`` for a file that is not UTF-8 text (naming its line and byte)."""
    size = check_regular_file(
        path, label, what, error, max_bytes=max_bytes, memory_factor=4.0, missing=missing
    )
    try:
        with open(path, "rb") as handle:
            raw = handle.read(size + 1)  # read(n) sets n bytes aside at once
            if len(raw) > size:
                raw += handle.read(max_bytes + 1 - len(raw))
    except OSError as problem:
        raise error(f"{label}: cannot read the {what}: {problem.strerror}") from None
    if len(raw) > max_bytes:  # it grew since it was looked at
        raise error(f"{label}: the {what} must be at most {_size_text(max_bytes)}, got more")
    nul = raw.find(b"\x00")
    if nul >= 0:
        line = raw.count(b"\n", 0, nul) + 1
        raise error(f"{label}:{line}: the {what} must be text, got binary data (a NUL byte at byte {nul})")
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as problem:
        line = raw.count(b"\n", 0, problem.start) + 1
        raise error(
            f"{label}:{line}: the {what} must be UTF-8 text, got byte {problem.start} that is not; "
            "convert it to UTF-8"
        ) from None
