"""When a run was measured: the time a file writes, or for files that do not say (nvbench,
TritonBench) when the file was written."""

from __future__ import annotations

import os
from datetime import datetime, timezone

from .._base.timestamps import utc_milliseconds
from ..errors import InputError, KernelIndexError

__all__ = ["file_time", "iso_instant", "observed_or_file_time"]


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


def iso_instant(text: object) -> datetime | None:
    """An ISO 8601 time a file writes, in UTC to the millisecond; one without an offset is
    read as UTC. None for anything else: the caller falls back to another time.
    """
    if not isinstance(text, str):
        return None
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    try:
        return utc_milliseconds(moment)
    except KernelIndexError:
        return None
