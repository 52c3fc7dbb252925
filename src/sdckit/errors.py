"""Errors raised by sdckit.

Every error a user can cause (a bad file, a bad configuration, an impossible parameter) is an
:class:`SdcError`. Its message names the file, line, attribute or parameter concerned, so that the
command line can print it as it is and exit with status 2 instead of showing a traceback.
"""

from __future__ import annotations


class SdcError(Exception):
    """Base class of every error caused by the user's input or configuration."""


class InputError(SdcError):
    """A data file or data frame that cannot be used: unreadable, empty, ragged, badly typed."""


class ConfigError(SdcError):
    """A configuration file or a parameter that is invalid."""


def location(file: str | None = None, line: int | None = None, attribute: str | None = None) -> str:
    """Format the 'where' part of an error message: ``file:line: attribute 'x': ``."""
    parts = []
    if file is not None:
        parts.append(f"{file}:{line}" if line is not None else str(file))
    if attribute is not None:
        parts.append(f"attribute '{attribute}'")
    return ": ".join(parts) + (": " if parts else "")


class SdcWarning(UserWarning):
    """Something in the input that is probably a mistake but does not stop the computation,
    such as a sensitivity weight given for a value that never occurs in the data."""
