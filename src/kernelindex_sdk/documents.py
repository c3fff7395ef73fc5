"""Documents in files: JSON and JSON Lines, folders and stdin, validated with locations.

One input (all the paths of one call) is one namespace: a run name may appear once,
and a protocol or environment name must always name the same content. A file reached
twice (named twice, inside a named folder, through a symlink) is read once.

Sizes are bounded: one document (a ``.json`` file, one line of a JSON Lines file, or
standard input read as one document) may hold at most :data:`MAX_DOCUMENT_BYTES`;
JSON Lines are read line by line, so their files may be of any length.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any, Final

import attrs

from . import validation
from ._base import arguments as _arguments
from ._base.display import display_path, printable
from ._base.files import check_new_file, describe_mode, existing_kind, replace_file
from ._json import text as _jsontext
from .convert import dump, dumps
from .errors import (
    MAX_MESSAGE,
    FileProblem,
    InputError,
    SchemaValidationError,
    input_errors,
)

__all__ = [
    "MAX_DOCUMENT_BYTES",
    "MAX_MESSAGE",
    "Document",
    "DocumentResult",
    "FileProblem",
    "JSONLinesWriter",
    "check_documents",
    "check_json_lines_target",
    "expand_paths",
    "iter_documents",
    "json_line",
    "validate_paths",
    "write_json",
]

#: The most bytes one document may have: a record is a few KiB, so this only stops
#: runaway input (``/dev/zero``, an endless pipe) before it exhausts memory.
MAX_DOCUMENT_BYTES: Final = 64 * 2**20
# Bytes read from a file at a time.
_READ_BUFFER: Final = 64 * 2**10
#: File suffixes searched for in folders, compared case-insensitively.
SUFFIXES: Final = (".json", ".jsonl")
STDIN: Final = "-"

OnError = Callable[[InputError], None]
#: Called with a notice: something worth saying that is not a problem (one line).
OnNotice = Callable[[str], None]


@attrs.frozen
class Document:
    """One document's text and where it starts: ``line`` is 1 for a JSON file.

    ``json_lines`` says whether it is one line of a JSON Lines source, which labels
    it ``source:line`` even on line 1.
    """

    source: str
    line: int
    text: str | bytes
    json_lines: bool = False

    @property
    def label(self) -> str:
        """``file`` for a JSON document, ``file:line`` for a JSON Lines record."""
        return f"{self.source}:{self.line}" if self.json_lines else self.source


@attrs.frozen
class DocumentResult:
    """One document and its problems; ``valid`` when there are none.

    ``value`` is the parsed document when it is valid (None otherwise), so a caller that
    goes on to use it need not parse the text again.
    """

    document: Document
    problems: tuple[FileProblem, ...]
    value: Any = attrs.field(default=None, eq=False, repr=False)
    #: Read with ``repeats``: the record repeats one read before with the same content.
    repeat: bool = False

    @property
    def valid(self) -> bool:
        """Whether the document has no problem."""
        return not self.problems


def _report(error: InputError, on_error: OnError | None) -> None:
    if on_error is None:
        raise error
    on_error(error)


def _search(folder: Path, on_error: OnError | None, on_notice: OnNotice | None) -> list[Path]:
    """Every ``.json``/``.jsonl`` file under ``folder``; symlinked folders are not entered."""

    def walk_error(err: OSError) -> None:
        _report(InputError.from_os_error(err.filename or folder, err), on_error)

    found = []
    refused = False
    for root, dirs, files in os.walk(folder, onerror=walk_error, followlinks=False):
        dirs.sort()
        for name in sorted(files):
            path = Path(root, name)
            if path.suffix.lower() not in SUFFIXES:
                continue
            # A name that looks like records but cannot be read as a file is an input
            # error, not a silent skip: a dangling symlink, a FIFO (reading it would
            # wait for a writer), a device or a socket.
            try:
                info = os.stat(path)
            except FileNotFoundError:
                refused = True
                _report(InputError(source=str(path), reason="dangling symbolic link"), on_error)
                continue
            except OSError as err:
                refused = True
                _report(InputError.from_os_error(path, err), on_error)
                continue
            if stat.S_ISREG(info.st_mode):
                found.append(path)
            else:
                refused = True
                what = describe_mode(info.st_mode)
                _report(
                    InputError(source=str(path), reason=f"is {what}, expected a file"), on_error
                )
    if not found and not refused and on_notice is not None:
        on_notice(f"{printable(str(folder))}: no .json or .jsonl files found")
    return sorted(found)


def _expand(
    paths: Iterable[str | Path], on_error: OnError | None, on_notice: OnNotice | None
) -> Iterator[str | Path]:
    seen: set[str] = set()
    for given in _arguments.paths(paths):
        if str(given) == STDIN:
            candidates: list[str | Path] = [STDIN]
        else:
            path = Path(given)
            try:
                is_dir = path.is_dir()
                exists = is_dir or path.exists()
            except OSError as err:  # a name too long, say
                _report(InputError.from_os_error(path, err), on_error)
                continue
            if not exists:
                _report(InputError(source=str(path), reason="no such file or directory"), on_error)
                continue
            candidates = list(_search(path, on_error, on_notice)) if is_dir else [path]
        for candidate in candidates:
            key = candidate if candidate == STDIN else os.path.realpath(candidate)
            if str(key) not in seen:
                seen.add(str(key))
                yield candidate


def expand_paths(
    paths: Iterable[str | Path],
    *,
    on_error: OnError | None = None,
    on_notice: OnNotice | None = None,
) -> Iterator[str | Path]:
    """Yield each file the given paths name, as :func:`iter_documents` reads them.

    Folders are searched as :func:`iter_documents` says; a file reached twice is given
    once; ``-`` (standard input) is given as it is. ``on_notice`` hears of each folder
    that holds no records.

    Raises:
        InputError: when a path does not exist or cannot be read (unless ``on_error``
            is given).
    """
    yield from _expand(paths, on_error, on_notice)


def _too_large(source: str) -> InputError:
    return InputError(
        source=source,
        reason=f"a document is larger than the limit of {MAX_DOCUMENT_BYTES} bytes",
    )


def _read_bounded(stream: IO[bytes], source: str, start: bytes = b"") -> bytes:
    data = start + stream.read(MAX_DOCUMENT_BYTES + 1 - len(start))
    if len(data) > MAX_DOCUMENT_BYTES:
        raise _too_large(source)
    return data


def _read_line(stream: IO[bytes], source: str, number: int) -> bytes:
    line = stream.readline(MAX_DOCUMENT_BYTES + 1)
    if len(line) > MAX_DOCUMENT_BYTES:
        raise _too_large(f"{source}:{number}")
    return line


def _lines(
    stream: IO[bytes], source: str, number: int = 1, pending: Iterable[bytes] = ()
) -> Iterator[Document]:
    """Documents of a JSON Lines stream, from line ``number`` after the ``pending`` lines."""
    for line in pending:
        if not _jsontext.is_blank(line):
            yield Document(source, number, line.rstrip(b"\n"), True)
        number += 1
    while line := _read_line(stream, source, number):
        if not _jsontext.is_blank(line):
            yield Document(source, number, line.rstrip(b"\n"), True)
        number += 1


def _is_whole_document(line: bytes) -> bool:
    try:
        json.loads(line)
    except (ValueError, RecursionError):
        return False
    return True


def _stdin_documents(stream: IO[bytes]) -> Iterator[Document]:
    """Standard input has no suffix: it is JSON Lines when its first line is a whole
    document and another non-blank line follows, otherwise one document."""
    source = "<stdin>"
    lines: list[bytes] = []
    size = 0
    while (line := _read_line(stream, source, len(lines) + 1)) and _jsontext.is_blank(line):
        lines.append(line)
        size += len(line)
    if line:
        lines.append(line)
        size += len(line)
        if line.endswith(b"\n") and _is_whole_document(line):
            while (more := _read_line(stream, source, len(lines) + 1)) and _jsontext.is_blank(more):
                lines.append(more)
            if more:
                yield from _lines(stream, source, pending=[*lines, more])
                return
            yield Document(source=source, line=1, text=b"".join(lines))
            return
    if size > MAX_DOCUMENT_BYTES:
        raise _too_large(source)
    yield Document(source=source, line=1, text=_read_bounded(stream, source, b"".join(lines)))


def _file_documents(path: Path) -> Iterator[Document]:
    source = str(path)
    # A 64 KiB buffer: with the default (the file system's block, often 4 KiB) reading JSON
    # Lines line by line spends most of its time in system calls.
    with input_errors(source), open(path, "rb", buffering=_READ_BUFFER) as stream:
        if path.suffix.lower() == ".jsonl":
            yield from _lines(stream, source)
            return
        facts = os.fstat(stream.fileno())
        if stat.S_ISREG(facts.st_mode) and facts.st_size > MAX_DOCUMENT_BYTES:
            raise _too_large(source)
        yield Document(source=source, line=1, text=_read_bounded(stream, source))


def iter_documents(
    paths: Iterable[str | Path],
    *,
    stdin: IO[bytes] | None = None,
    on_error: OnError | None = None,
    on_notice: OnNotice | None = None,
) -> Iterator[Document]:
    """Yield each document of the given files and folders (``-`` is standard input).

    Folders are searched recursively for ``*.json`` and ``*.jsonl`` (in any letter
    case; symlinked folders are not entered); a folder with none is no error, and
    ``on_notice`` hears of it. Such a name in a folder that is not a regular file (a
    dangling symlink, a FIFO, a device) is an :class:`InputError`. A file reached
    twice is read once, and so is standard input. A ``.jsonl`` file holds one
    document per line; lines of JSON whitespace only are skipped (a form feed is not
    JSON whitespace). Standard input is JSON Lines when its first line is a whole
    document and more lines follow, otherwise one document.

    Args:
        paths: Files, folders, and ``-``.
        stdin: The stream ``-`` reads (default: the process's standard input).
        on_error: Called with the InputError of each path that cannot be read, after
            which the next path is read; by default the error is raised.
        on_notice: Called with one line for each folder that holds no records; by
            default nothing is said.

    Raises:
        InputError: when a path does not exist, cannot be read, or holds a document
            larger than :data:`MAX_DOCUMENT_BYTES` (unless ``on_error`` is given).
    """
    for path in _expand(paths, on_error, on_notice):
        source = "<stdin>" if path == STDIN else str(path)
        try:
            if path == STDIN:
                with input_errors(source):
                    stream = stdin if stdin is not None else sys.stdin.buffer
                    yield from _stdin_documents(stream)
            else:
                yield from _file_documents(Path(path))
        except InputError as err:
            _report(err, on_error)


def check_documents(
    paths: Iterable[str | Path],
    *,
    verify_digests: bool = False,
    stdin: IO[bytes] | None = None,
    on_error: OnError | None = None,
    on_notice: OnNotice | None = None,
    quick: bool | None = None,
    one_input: bool = True,
    repeats: bool = False,
    for_store: bool = False,
) -> Iterator[DocumentResult]:
    """Validate every document of the given paths; yield each with its problems.

    The one reader of records in files: validate, digest, compare, report, merge and
    ingest all read through it (:class:`~kernelindex_sdk.validation.RecordReader`).
    See :func:`iter_documents` for the arguments and for how paths are read.

    Args:
        quick: Deprecated, and ignored: the reader chooses its fast path itself
            (``KERNELINDEX_STRICT_READ=1`` turns it off). A valid record's protocol and
            environment may be objects shared with other records of the input, which
            the caller must not change.
        one_input: The paths are one input: a run name may appear once, and a name or
            a digest always stands for the same object. False checks each document on
            its own (``kernelindex digest``).
        repeats: A run repeated with the same content is a repeat
            (:attr:`DocumentResult.repeat`), not a second run of one name (merge).
        for_store: Also apply the store's rules (each latency the store keeps fits its
            64-bit column).

    Raises:
        InputError: when a path cannot be read and ``on_error`` is not given.
    """
    if quick is not None:
        warnings.warn(
            "check_documents(quick=...) is deprecated and ignored: the reader chooses its"
            " fast path itself (KERNELINDEX_STRICT_READ=1 turns it off)",
            DeprecationWarning,
            stacklevel=2,
        )
    reader = validation.RecordReader(
        verify_digests=verify_digests, one_input=one_input, repeats=repeats, for_store=for_store
    )
    # The file's name as shown, made once per file: a line's place is it and the line
    # (display_path leaves the ASCII ":line" as it is).
    source: str | None = None
    shown = ""
    for document in iter_documents(paths, stdin=stdin, on_error=on_error, on_notice=on_notice):
        if document.source is not source:
            source, shown = document.source, display_path(document.source)
        where = f"{shown}:{document.line}" if document.json_lines else shown
        reading = reader.read(document.text, where)
        if reading.problems:
            problems = tuple(FileProblem.in_document(document, p) for p in reading.problems)
            yield DocumentResult(document, problems)
        else:
            yield DocumentResult(document, (), reading.value, reading.repeat)


def validate_paths(
    paths: Iterable[str | Path],
    *,
    verify_digests: bool = False,
    stdin: IO[bytes] | None = None,
    on_error: OnError | None = None,
    on_notice: OnNotice | None = None,
) -> Iterator[FileProblem]:
    """Validate every document of the given paths; yield each problem with its file and line.

    See :func:`check_documents`.

    Raises:
        InputError: when a path cannot be read and ``on_error`` is not given.
    """
    for result in check_documents(
        paths, verify_digests=verify_digests, stdin=stdin, on_error=on_error, on_notice=on_notice
    ):
        yield from result.problems


def _json_text(record: Any, *, indent: int | None, validated: bool = False) -> str:
    """The published form of a record, refusing what is not JSON (NaN, lone surrogates)."""
    value = record if isinstance(record, (dict, list)) else dump(record)
    problems = _jsontext.scan_value(value).problems
    if problems:
        raise SchemaValidationError(problems=problems)
    return dumps(value, indent=indent, validate=not validated)


def json_line(record: Any, *, validated: bool = False) -> str:
    """One record (a model instance or its JSON value) as a compact JSON line with its newline.

    Args:
        record: The record.
        validated: The caller validated this very record (the harness checks each one
            it makes): it is checked as JSON only, not against the schema again.

    Raises:
        SchemaValidationError: when the record is not a JSON value (NaN, a lone surrogate).
    """
    return _json_text(record, indent=None, validated=validated) + "\n"


def _needs_newline(path: str) -> bool:
    """Whether the file at ``path`` is non-empty and lacks a final newline."""
    try:
        # Only a regular file holds earlier lines; opening a FIFO to read would block
        # until some other process writes to it.
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with open(path, "rb") as existing:
            existing.seek(0, os.SEEK_END)
            if existing.tell() == 0:
                return False
            existing.seek(-1, os.SEEK_END)
            return existing.read(1) != b"\n"
    except FileNotFoundError:
        return False


def check_json_lines_target(path: str | Path) -> None:
    """Refuse a path JSON Lines may not be written to, before anything is written.

    JSON Lines go to ``-`` (a stream), to a FIFO or a character device (``/dev/null``),
    or to a file whose name ends in ``.jsonl`` (any letter case): folders are searched
    for ``*.json`` files as one document each, and lines added to one would not read.

    Raises:
        InputError: for an empty path, or a regular file (or a new one) whose name does
            not end in ``.jsonl``; the message says to use ``.jsonl``.
    """
    text = str(path)
    if text == STDIN:
        return
    if not text:
        raise InputError(source="''", reason="expected a .jsonl path or '-', got an empty path")
    info = existing_kind(text)
    if info is not None and (stat.S_ISFIFO(info.st_mode) or stat.S_ISCHR(info.st_mode)):
        return
    if not text.lower().endswith(".jsonl"):
        why = (
            "a .json file holds one document, and lines appended to it would not read"
            if text.lower().endswith(".json")
            else "records are written as JSON Lines"
        )
        raise InputError(
            source=text, reason=f"expected a .jsonl path (or '-') to write records to: {why}"
        )


class JSONLinesWriter:
    """Appends records to a JSON Lines file one by one, each written as it comes.

    Each record reaches a file in one unbuffered write of its whole line, so a process
    interrupted (SIGINT) or killed leaves every record it finished and no part of the
    next; closing also syncs a regular file to disk. ``-`` writes to a stream instead,
    flushed after each record.

    Nothing is created before the first record, or :meth:`open`: a command that fails
    before producing anything leaves no empty file. Records go only to ``-``, a FIFO, a
    character device or a ``.jsonl`` file (:func:`check_json_lines_target`). Appending
    to a file whose last line lacks its newline first ends that line, so two records
    never share one.
    Records are validated as JSON first: NaN, Infinity and lone surrogates are refused.
    """

    def __init__(self, path: str | Path, *, stream: IO[str] | None = None) -> None:
        self._path = str(path)
        self._where = "<stdout>" if self._path == STDIN else self._path
        self._stream = stream
        self._file: IO[bytes] | None = None
        self._opened = False
        self._pending = b""

    def check(self) -> None:
        """Check now, before any work, that the output can be written; create nothing.

        A missing file needs an existing folder that can be written; an existing one
        must be a file that can be written, or a device that takes data (a zero-byte
        write surfaces ``/dev/full``). A FIFO is not opened: that would wait for a reader.

        Raises:
            InputError: naming the path and what is wrong (a name not ending in
                ``.jsonl`` included).
        """
        if self._path == STDIN or self._opened:
            return
        check_json_lines_target(self._path)
        info = existing_kind(self._path)
        if info is None:
            check_new_file(self._path)
            return
        if stat.S_ISDIR(info.st_mode):
            raise InputError(source=self._path, reason="is a directory, expected a file to write")
        if stat.S_ISFIFO(info.st_mode):
            return
        with input_errors(self._path):
            fd = os.open(self._path, os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK)
            try:
                os.write(fd, b"")
            finally:
                os.close(fd)

    def open(self) -> None:
        """Open (create) the file now, if not yet open.

        Raises:
            InputError: when the file cannot be opened.
        """
        if self._opened:
            return
        if self._path != STDIN:
            check_json_lines_target(self._path)
            with input_errors(self._path):
                if _needs_newline(self._path):
                    self._pending = b"\n"
                self._file = open(self._path, "ab", buffering=0)  # noqa: SIM115 (see close())
        self._opened = True

    def write(self, record: Any, *, validated: bool = False) -> None:
        """Append one record (a model instance or its JSON value) as one line.

        Args:
            record: The record.
            validated: The caller validated this very record: see :func:`json_line`.

        Raises:
            SchemaValidationError: when the record is not a JSON value; nothing is written.
            InputError: when the file cannot be written (a full disk, say).
        """
        line = json_line(record, validated=validated)
        self.open()
        with input_errors(self._where):
            if self._file is None:
                stream = self._stream or sys.stdout
                stream.write(line)
                stream.flush()
                return
            data = memoryview(self._pending + line.encode("utf-8"))
            # One write takes a whole line to a regular file; a pipe may take less.
            while data:
                written = self._file.write(data)
                if not written:
                    raise OSError(errno.EAGAIN, "the output takes no more data")
                data = data[written:]
            self._pending = b""

    def close(self) -> None:
        """Sync a regular file to disk and close it (a stream is only flushed).

        Raises:
            InputError: when the stream cannot be flushed or the file synced.
        """
        if not self._opened:
            return
        self._opened = False
        file, self._file = self._file, None
        if file is None:
            with input_errors(self._where):
                (self._stream or sys.stdout).flush()
            return
        try:
            # Only a regular file can be synced: /dev/null, a pipe or a terminal
            # refuses fsync, and has nothing to keep.
            if stat.S_ISREG(os.fstat(file.fileno()).st_mode):
                with input_errors(self._where):
                    os.fsync(file.fileno())
        finally:
            with contextlib.suppress(OSError):
                file.close()

    def __enter__(self) -> JSONLinesWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def write_json(path: str | Path, obj: Any) -> None:
    """Write a record (or any JSON value) in the published form, atomically.

    The text goes to a temporary file beside ``path`` that replaces it in one rename,
    so a reader never sees half a file and an earlier file survives a failed write;
    the temporary file is removed when the write fails. A symlink is written through
    (its target is replaced).

    Raises:
        SchemaValidationError: when ``obj`` is not a JSON value (NaN, say); nothing is written.
        InputError: when the file cannot be written, or ``path`` names something other
            than a regular file (a device such as ``/dev/null``, a FIFO, a folder).
    """
    text = _json_text(obj, indent=2)
    replace_file(path, [text])
