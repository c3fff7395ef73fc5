"""When a run was measured, for files that do not say (nvbench, TritonBench)."""

from __future__ import annotations

import os
from datetime import datetime, timezone

from .._base.timestamps import utc_milliseconds
from ..errors import InputError

__all__ = ["file_time", "observed_or_file_time"]


def file_time(source: str) -> datetime:
    """The file's modification time, in UTC to the millisecond: when the tool wrote it.

    Raises:
        InputError: when the file cannot be examined.
    """
    try:
        seconds = os.stat(source).st_mtime
    except OSError as err:
        raise InputError.from_os_error(source, err) from err
    return utc_milliseconds(datetime.fromtimestamp(seconds, tz=timezone.utc))


def observed_or_file_time(observed: datetime | None, source: str) -> datetime:
    """``observed`` when given (aware), else :func:`file_time` of ``source``."""
    return utc_milliseconds(observed) if observed is not None else file_time(source)
