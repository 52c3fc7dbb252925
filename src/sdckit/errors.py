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


#: A value quoted into a message is shown whole up to this many characters, else as its first
#: :data:`SHOWN_HEAD` and last :data:`SHOWN_TAIL` characters with its length.
SHOWN_LIMIT = 80
SHOWN_HEAD = 40
SHOWN_TAIL = 20
#: The most characters of one message the command line prints (the last line of defence against a
#: message that quotes a huge value whole).
MESSAGE_LIMIT = 4000


def shown(value: object, quoted: bool = True) -> str:
    """``value`` as a message quotes it: its ``repr`` (``str`` unless ``quoted``), shortened when long to
    its first and last characters with its length, ``'abc…xyz' (600,000 characters)``, so that a huge
    value in a data file never fills the screen."""
    text = repr(value) if quoted else str(value)
    if len(text) <= SHOWN_LIMIT:
        return text
    length = len(value) if isinstance(value, str) else len(text)
    closing = text[-1] if quoted and isinstance(value, str) else ""
    head = text[: SHOWN_HEAD + (1 if closing else 0)]
    tail = text[len(text) - SHOWN_TAIL - (1 if closing else 0) :]
    return f"{head}…{tail} ({length:,} characters)"


def capped(message: str, limit: int = MESSAGE_LIMIT) -> str:
    """``message`` cut to about ``limit`` characters (its start and end kept, the cut said), whatever
    it quotes."""
    if len(message) <= limit:
        return message
    tail = limit // 4
    cut = len(message) - limit
    return f"{message[: limit - tail]} …[{cut:,} characters cut]… {message[-tail:]}"


class SdcWarning(UserWarning):
    """Something in the input that is probably a mistake but does not stop the computation,
    such as a sensitivity weight given for a value that never occurs in the data."""
