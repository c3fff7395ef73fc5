"""CSV files read record by record, so that one bad record never ends the file.

The file is UTF-8, with or without the byte order mark Excel writes. Each record is
decoded on its own: invalid UTF-8, a field over the csv module's limit, a wrong number of
fields or broken quoting make that record bad (with its first line), and reading goes on.
Only what leaves no records to read fails the file: a UTF-16 or UTF-32 file, a header
that is not the expected one, a line without end (the last thing ``records()`` yields),
and a file that cannot be opened or read (InputError).
"""

from __future__ import annotations

import codecs
import csv
import io
import re
from collections.abc import Iterator, Sequence
from typing import IO, Final

import attrs

from ..errors import InputError, StateError

__all__ = ["MAX_LINE_CHARS", "BadRecord", "CsvFile", "Record"]

#: A physical line longer than this stops the file (``/dev/zero`` has no line end).
MAX_LINE_CHARS: Final = 16 * 1024 * 1024
_BOMS: Final = (
    (codecs.BOM_UTF32_LE, "UTF-32"),
    (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"),
    (codecs.BOM_UTF16_BE, "UTF-16"),
)
# Bytes that are not UTF-8 decode to these lone surrogates under "surrogateescape".
_UNDECODED: Final = re.compile("[\udc80-\udcff]+")
# Only ASCII blanks: str.strip() would also eat U+00A0 and other Unicode spaces.
BLANKS: Final = " \t\r\n"


@attrs.frozen
class Record:
    """A CSV record: its first line and its fields by column."""

    line: int
    fields: dict[str, str]


@attrs.frozen
class BadRecord:
    """A CSV record that cannot be read, its first line and why; or, with ``ends_file``,
    a failure of the whole file (its encoding, its header, a line without end) after
    which nothing more is read."""

    line: int
    reason: str
    ends_file: bool = False


class _FileError(Exception):
    def __init__(self, reason: str, line: int = 1) -> None:
        self.reason, self.line = reason, line


class _LineTooLongError(Exception):
    def __init__(self, line: int) -> None:
        self.line = line


def _lines(handle: IO[str]) -> Iterator[str]:
    number = 0
    while True:
        line = handle.readline(MAX_LINE_CHARS + 1)
        if not line:
            return
        number += 1
        if len(line) > MAX_LINE_CHARS:
            raise _LineTooLongError(number)
        yield line


def _undecoded(text: str) -> str | None:
    """The first run of bytes that were not UTF-8, as a bytes literal, or None."""
    found = _UNDECODED.search(text)
    if found is None:
        return None
    return repr(found.group().encode("utf-8", "surrogateescape")[:8])


@attrs.define
class CsvFile:
    """One CSV file opened for reading; use as a context manager.

    Raises:
        InputError: when the file cannot be opened.
    """

    source: str
    columns: Sequence[str]
    #: What the columns make the file, for the message when one is missing.
    kind: str = "CSV"
    #: The field separator (TritonBench writes ';').
    delimiter: str = ","
    #: Whether a record shorter than the header is read (its missing fields absent)
    #: rather than refused.
    ragged: bool = False
    _handle: IO[str] | None = None
    _encoding: str | None = None
    _header: tuple[str, ...] = ()

    def __enter__(self) -> CsvFile:
        try:
            raw = open(self.source, "rb")
            head = raw.peek(4)[:4]
        except OSError as err:
            raise InputError(source=self.source, reason=err.strerror or str(err)) from err
        self._encoding = next((name for bom, name in _BOMS if head.startswith(bom)), None)
        # utf-8-sig drops Excel's byte order mark; surrogateescape keeps bad bytes for
        # the record that holds them instead of failing the whole read. The wrapper
        # closes the file under it in __exit__.
        self._handle = io.TextIOWrapper(
            raw, encoding="utf-8-sig", errors="surrogateescape", newline=""
        )
        return self

    def __exit__(self, *exc: object) -> None:
        if self._handle is not None:
            self._handle.close()

    @property
    def header(self) -> tuple[str, ...]:
        """The header's column names, once :meth:`records` has read it (else empty)."""
        return self._header

    def records(self) -> Iterator[Record | BadRecord]:
        """Yield every record after the header, good or bad, in file order.

        A failure of the whole file is yielded last, as a BadRecord with ``ends_file``.

        Raises:
            InputError: when reading fails.
            StateError: when called outside the ``with`` block (it is a RuntimeError too).
        """
        if self._handle is None:
            raise StateError(call="CsvFile.records()", reason="called outside its with block")
        if self._encoding is not None:
            yield BadRecord(1, f"the file is {self._encoding} text; expected UTF-8", True)
            return
        reader = csv.reader(_lines(self._handle), strict=True, delimiter=self.delimiter)
        try:
            yield from self._read(reader)
        except _FileError as err:
            yield BadRecord(err.line, err.reason, ends_file=True)
        except _LineTooLongError as err:
            reason = f"line longer than {MAX_LINE_CHARS} characters; stopped reading"
            yield BadRecord(err.line, reason, ends_file=True)
        except OSError as err:
            raise InputError(source=self.source, reason=err.strerror or str(err)) from err

    def _read(self, reader: Iterator[list[str]]) -> Iterator[Record | BadRecord]:
        self._header = self._read_header(reader)
        width = len(self._header)
        line = 1
        while True:
            start = line + 1
            try:
                fields = next(reader)
            except StopIteration:
                return
            except csv.Error as err:
                line = reader.line_num  # type: ignore[attr-defined]
                yield BadRecord(start, self._csv_error(err, start, line))
                continue
            line = reader.line_num  # type: ignore[attr-defined]
            if not fields:
                continue  # a blank line
            column = next((i for i, f in enumerate(fields) if _undecoded(f)), None)
            if column is not None:
                where = self._header[column] if column < width else f"field {column + 1}"
                yield BadRecord(start, f"{where} is not UTF-8: bytes {_undecoded(fields[column])}")
            elif len(fields) > width or (len(fields) < width and not self.ragged):
                yield BadRecord(
                    start, f"expected {width} fields as in the header, found {len(fields)}"
                )
            else:
                yield Record(start, dict(zip(self._header, fields, strict=False)))

    def _read_header(self, reader: Iterator[list[str]]) -> tuple[str, ...]:
        try:
            header = next(reader, [])
        except csv.Error as err:
            raise _FileError(f"header is not CSV: {err}") from None
        if not header:
            empty = reader.line_num == 0  # type: ignore[attr-defined]
            raise _FileError("the file is empty" if empty else "line 1 holds no header")
        names = tuple(h.strip(BLANKS) for h in header)
        if any(_undecoded(h) for h in names):
            raise _FileError("header is not UTF-8")
        if any("\0" in h for h in names):
            raise _FileError("header holds NUL characters (UTF-16 without a BOM?)")
        repeated = sorted({h for h in names if names.count(h) > 1})
        if repeated:
            raise _FileError(f"header repeats column {', '.join(map(repr, repeated))}")
        missing = [c for c in self.columns if c not in names]
        if missing:
            raise _FileError(f"not a {self.kind}: no column {', '.join(missing)}")
        return names

    @staticmethod
    def _csv_error(err: csv.Error, start: int, end: int) -> str:
        text = str(err)
        if "field larger than field limit" in text:
            return f"a field is longer than {csv.field_size_limit()} characters"
        span = f" (lines {start}-{end} read as one record)" if end > start else ""
        return f"not CSV: {text}{span}"
