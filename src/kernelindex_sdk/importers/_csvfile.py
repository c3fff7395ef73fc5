"""CSV files read record by record, so that one bad record never ends the file.

The file is UTF-8, with or without the byte order mark Excel writes. Each record is
decoded on its own: invalid UTF-8, a field over the csv module's limit, a wrong number of
fields or broken quoting make that record bad (with its first line), and reading goes on.
Only what leaves no records to read is a file-level failure: an unreadable file, a
UTF-16 or UTF-32 file, a header that is not the expected one, a line without end.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
from collections.abc import Iterator, Sequence
from typing import IO, Final

import attrs

from ..errors import InputError, UnsupportedSourceError

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
    """A CSV record that cannot be read: its first line and why."""

    line: int
    reason: str


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
        InputError: when the file cannot be opened or read.
        UnsupportedSourceError: for a UTF-16 or UTF-32 file, a header that lacks one of
            ``columns`` or repeats a column, or a line longer than ``MAX_LINE_CHARS``.
    """

    source: str
    columns: Sequence[str]
    #: What the columns make the file, for the message when one is missing.
    kind: str = "CSV"
    _handle: IO[str] | None = None
    _header: tuple[str, ...] = ()

    def __enter__(self) -> CsvFile:
        try:
            raw = open(self.source, "rb")
            head = raw.peek(4)[:4]
        except OSError as err:
            raise InputError(source=self.source, reason=err.strerror or str(err)) from err
        for bom, encoding in _BOMS:
            if head.startswith(bom):
                raw.close()
                raise self._unsupported(f"the file is {encoding} text; expected UTF-8")
        # utf-8-sig drops Excel's byte order mark; surrogateescape keeps bad bytes for
        # the record that holds them instead of failing the whole read.
        # Closed in __exit__, with the file under it.
        self._handle = io.TextIOWrapper(
            raw, encoding="utf-8-sig", errors="surrogateescape", newline=""
        )
        return self

    def __exit__(self, *exc: object) -> None:
        if self._handle is not None:
            self._handle.close()

    def _unsupported(self, reason: str, line: int | None = 1) -> UnsupportedSourceError:
        return UnsupportedSourceError(source=self.source, line=line, reason=reason)

    def records(self) -> Iterator[Record | BadRecord]:
        """Yield every record after the header, good or bad, in file order.

        Raises:
            InputError: when reading fails.
            UnsupportedSourceError: for a bad header or a line without end.
        """
        if self._handle is None:
            raise RuntimeError("CsvFile.records() outside its with block")
        reader = csv.reader(_lines(self._handle), strict=True)
        try:
            yield from self._read(reader)
        except _LineTooLongError as err:
            raise self._unsupported(
                f"line longer than {MAX_LINE_CHARS} characters; stopped reading", err.line
            ) from None
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
            bad = next(filter(None, map(_undecoded, fields)), None)
            if bad is not None:
                column = next(i for i, f in enumerate(fields) if _undecoded(f))
                where = self._header[column] if column < width else f"field {column + 1}"
                yield BadRecord(start, f"{where} is not UTF-8: bytes {bad}")
            elif len(fields) != width:
                yield BadRecord(
                    start, f"expected {width} fields as in the header, found {len(fields)}"
                )
            else:
                yield Record(start, dict(zip(self._header, fields, strict=True)))

    def _read_header(self, reader: Iterator[list[str]]) -> tuple[str, ...]:
        try:
            header = next(reader, [])
        except csv.Error as err:
            raise self._unsupported(f"header is not CSV: {err}") from None
        if not header:
            raise self._unsupported(f"the file is empty; expected a {self.kind} header")
        names = tuple(h.strip(BLANKS) for h in header)
        if any(_undecoded(h) for h in names):
            raise self._unsupported("header is not UTF-8")
        if any("\0" in h for h in names):
            raise self._unsupported("header holds NUL characters (UTF-16 without a BOM?)")
        repeated = sorted({h for h in names if names.count(h) > 1})
        if repeated:
            raise self._unsupported(f"header repeats column {', '.join(map(repr, repeated))}")
        missing = [c for c in self.columns if c not in names]
        if missing:
            raise self._unsupported(f"not a {self.kind}: no column {', '.join(missing)}")
        return names

    @staticmethod
    def _csv_error(err: csv.Error, start: int, end: int) -> str:
        text = str(err)
        if "field larger than field limit" in text:
            return f"a field is longer than {csv.field_size_limit()} characters"
        span = f" (lines {start}-{end} read as one record)" if end > start else ""
        return f"not CSV: {text}{span}"
