"""The Describe page's proposed roles: :func:`sdckit.describe.describe` of the opened data, as
``sdckit describe`` proposes them, computed once per data file opened (on a sample of
:data:`SAMPLE` records of a larger file, which the page says)."""

from __future__ import annotations

import threading
from typing import Any

from sdckit.errors import SdcError

#: The records analysed at most: the proposal of a million-record file stays a matter of seconds.
SAMPLE = 20_000

_lock = threading.Lock()


class Proposals:
    """The proposal of the session's data file, kept until another file is opened."""

    def __init__(self) -> None:
        self.key: tuple[str, str] | None = None
        self.description: Any = None
        self.error: str | None = None

    def refresh(self, session: Any) -> None:
        """Propose roles for the session's data (nothing when no data is open or it is unchanged)."""
        from sdckit.config import parse_config
        from sdckit.describe import describe

        with session.lock:
            path, section = session.data_path, dict(session.data_section)
        key = (path or "", repr(sorted(section.items())))
        with _lock:
            if path is None or key == self.key:
                return
            try:
                table = parse_config({"data": section} if section else {}).read(path)
                self.description = describe(table.data, source=path, sample=SAMPLE)
                self.error = None
            except SdcError as error:
                self.description, self.error = None, str(error)
            self.key = key

    def current(self, session: Any) -> Any:
        """The proposal of the data the session has open (None when none is)."""
        self.refresh(session)
        return self.description if session.data_path is not None else None
