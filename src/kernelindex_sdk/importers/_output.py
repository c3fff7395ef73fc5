"""Where an import writes: checked against its inputs, read for what it holds, created late."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Sequence
from typing import IO, Any

import attrs

from ..documents import STDIN, JSONLinesWriter
from ..errors import InputError

__all__ = ["ImportSummary", "LazyWriter", "check_inputs", "existing_records"]


@attrs.frozen(kw_only=True)
class ImportSummary:
    """What an import did: rows written, rows (or files) rejected, rows already in the output."""

    imported: int
    rejected: int
    skipped: int


def _stat(path: str) -> os.stat_result:
    try:
        return os.stat(path)
    except OSError as err:
        raise InputError(source=path, reason=err.strerror or str(err)) from err


def check_inputs(sources: Sequence[str], out: str, *, what: str = "a CSV file") -> list[str]:
    """Check that every input can be read and that ``out`` is no directory.

    ``what`` names the file an input should be, for the message about a directory.

    Whether ``out`` is one of the inputs is for
    :func:`kernelindex_sdk._base.files.refuse_overwriting_inputs`, called first.

    Returns:
        The inputs in order, each file once: a path given twice, or two paths (links)
        to one file, is one input.

    Raises:
        InputError: for a missing, unreadable or directory input, and for an output
            that is a directory.
    """
    identities: dict[tuple[int, int], str] = {}
    for source in sources:
        info = _stat(source)
        if stat.S_ISDIR(info.st_mode):
            raise InputError(source=source, reason=f"is a directory, expected {what}")
        if not os.access(source, os.R_OK):
            raise InputError(source=source, reason="permission denied")
        identities.setdefault((info.st_dev, info.st_ino), source)
    if out != STDIN:
        try:
            target = os.stat(out)
        except (OSError, ValueError):
            return list(identities.values())  # not there yet: the writer checks the rest
        if stat.S_ISDIR(target.st_mode):
            raise InputError(source=out, reason="is a directory, expected a JSON Lines file")
    return list(identities.values())


def existing_records(out: str) -> list[Any]:
    """The JSON values of the lines of ``out`` when it is a regular file, else nothing.

    Lines that are not JSON are passed over: they name nothing.

    Raises:
        InputError: when ``out`` exists but cannot be read.
    """
    if out == STDIN:
        return []
    try:
        info = os.stat(out)
    except FileNotFoundError:
        return []
    except OSError as err:
        raise InputError(source=out, reason=err.strerror or str(err)) from err
    if not stat.S_ISREG(info.st_mode):
        return []  # /dev/null, a pipe: nothing to extend
    try:
        with open(out, "rb") as handle:
            lines = handle.read().split(b"\n")
    except OSError as err:
        raise InputError(source=out, reason=err.strerror or str(err)) from err
    records = []
    for line in lines:
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except (ValueError, RecursionError):
            continue
    return records


@attrs.define
class LazyWriter:
    """A :class:`JSONLinesWriter` opened at the first record, so a failed import creates no file."""

    path: str
    stream: IO[str] | None = None
    count: int = 0
    _writer: JSONLinesWriter | None = None

    def write(self, record: Any) -> None:
        """Append one record, opening the file first if this is the first."""
        if self._writer is None:
            self._writer = JSONLinesWriter(self.path, stream=self.stream)
        self._writer.write(record)
        self.count += 1

    def __enter__(self) -> LazyWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._writer is not None:
            self._writer.close()
