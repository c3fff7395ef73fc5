"""Exceptions raised by kernelindex_sdk, and the Problem they carry.

Every exception derives from KernelIndexError and carries its facts as fields, so
callers read ``err.problems`` or ``err.line`` instead of parsing messages.

The package imports nothing of ours outside itself (tests/test_architecture.py checks),
so that every other module can import it: the one-line form of the text its messages
show lives here too, in :mod:`._text`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Final, Protocol

import attrs
import rfc8785

# Every message prints file names, pointers and values through the package's own text
# module: errors imports nothing else of ours, so any module may import it.
from ._text import cut_pointer, display_path, json_safe, printable, printable_pointer

__all__ = [
    "MAX_MESSAGE",
    "ArgumentError",
    "CanonicalizationError",
    "FileProblem",
    "InputError",
    "KernelIndexError",
    "LaunchError",
    "MissingDependencyError",
    "OutputIsInputError",
    "PlacedText",
    "Problem",
    "RecordSetError",
    "SchemaValidationError",
    "StateError",
    "StoreClashError",
    "StoreDamagedError",
    "StoreError",
    "StoreLayoutError",
    "SweepOptionError",
    "TimestampError",
    "UnsupportedSourceError",
    "input_errors",
]


@attrs.frozen(kw_only=True)
class Problem:
    """One thing wrong with a document.

    Attributes:
        pointer: RFC 6901 JSON pointer to the offending value, or to the offending
            key itself for unknown and duplicate keys; ``""`` is the whole document.
        message: What was expected and what was found.
        code: A stable name for the failed rule: a JSON Schema keyword (``minimum``,
            ``additionalProperties``) or a check name (``quantile-order``).
        line: 1-based line in the source text, when the input was text.
        column: 1-based column in the source text, when the input was text.
    """

    pointer: str
    message: str
    code: str
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        where = f"{self.line}:{self.column}: " if self.line is not None else ""
        pointer = printable_pointer(self.pointer) or "(document)"
        return f"{where}{pointer}: {printable(self.message)} [{self.code}]"


#: How long a message may be when printed.
MAX_MESSAGE: Final = 1000


class PlacedText(Protocol):
    """Where a document's text sits in its file (:class:`kernelindex_sdk.documents.Document`).

    A protocol, so that this module needs nothing from the modules above it.
    """

    @property
    def source(self) -> str:
        """The file's name (``-`` for standard input)."""

    @property
    def line(self) -> int:
        """The line of the file the document starts on."""

    @property
    def json_lines(self) -> bool:
        """Whether the document is one line of a JSON Lines source."""


@attrs.frozen
class FileProblem:
    """A problem of a document in a file, with the file's name and line.

    ``document_line`` is the line a JSON Lines document starts on: it places a problem
    that has no line of its own (nesting too deep, say) on its line of the file.
    """

    source: str
    problem: Problem
    document_line: int | None = None

    @classmethod
    def in_document(cls, document: PlacedText, problem: Problem) -> FileProblem:
        """A problem found in ``document``'s text, placed in its file.

        The problem's line (counted in the document) becomes the file's line, and a
        JSON Lines document's line stands for a problem that has none of its own.
        """
        if problem.line is not None and document.line != 1:
            problem = attrs.evolve(problem, line=problem.line + document.line - 1)
        return cls(
            source=document.source,
            problem=problem,
            document_line=document.line if document.json_lines else None,
        )

    @property
    def line(self) -> int | None:
        """The problem's line in the file, else its document's line, else None."""
        return self.problem.line if self.problem.line is not None else self.document_line

    def __str__(self) -> str:
        # One line per problem, whatever a file name, key or value holds.
        p = self.problem
        source = printable(display_path(self.source))
        if p.line is not None:
            where = f"{source}:{p.line}:{p.column}"
        elif self.document_line is not None:
            where = f"{source}:{self.document_line}"
        else:
            where = source
        pointer = printable_pointer(p.pointer) or "(document)"
        return f"{where}: {pointer}: {printable(p.message, MAX_MESSAGE)} [{p.code}]"

    def as_dict(self) -> dict[str, Any]:
        """The problem as a JSON object (``kernelindex validate --format json``).

        Each key in the pointer is cut to 80 characters and the message to
        :data:`MAX_MESSAGE`. No string holds a lone surrogate: a file name's bytes
        that are not UTF-8 read ``\\xNN``, and a lone surrogate from a key reads as
        the text of its escape (``\\ud800``), so that strict JSON parsers accept it.
        """
        p = self.problem
        return {
            "source": json_safe(display_path(self.source)),
            "pointer": json_safe(cut_pointer(p.pointer)),
            "message": json_safe(p.message[:MAX_MESSAGE]),
            "code": p.code,
            "line": self.line,
            "column": p.column,
        }


class KernelIndexError(Exception):
    """Base class of every error kernelindex_sdk raises for bad input or state."""


@attrs.frozen(kw_only=True, auto_exc=True)
class SchemaValidationError(KernelIndexError):
    """A document failed validation; ``problems`` lists every problem found."""

    problems: Sequence[Problem]
    source: str | None = None

    def __str__(self) -> str:
        prefix = f"{printable(display_path(self.source))}:" if self.source else ""
        lines = []
        for problem in self.problems:
            sep = "" if problem.line is not None or not prefix else " "
            lines.append(f"{prefix}{sep}{problem}")
        return "\n".join(lines)


@attrs.frozen(kw_only=True, auto_exc=True)
class UnsupportedSourceError(KernelIndexError):
    """Input from a foreign tool that an importer cannot convert."""

    source: str
    line: int | None
    reason: str

    def __str__(self) -> str:
        where = f"{self.source}:{self.line}" if self.line is not None else self.source
        return f"{where}: {self.reason}"


@attrs.frozen(kw_only=True, auto_exc=True)
class InputError(KernelIndexError):
    """An input could not be read at all (missing file, permission, not a file)."""

    source: str
    reason: str

    def __str__(self) -> str:
        return f"{printable(display_path(self.source))}: {printable(self.reason)}"

    @classmethod
    def from_os_error(cls, source: str | Path, err: OSError) -> InputError:
        """The InputError for an OSError met while reading or writing ``source``."""
        return cls(source=str(source), reason=err.strerror or str(err))


@attrs.frozen(kw_only=True, auto_exc=True)
class SweepOptionError(InputError):
    """A sweep option a caller gave is unusable (the CLI: exit status 2).

    Attributes:
        source: The parameter (``beta``); the CLI names its flag (``--beta``) instead.
        reason: What was expected and what was found.
    """


@attrs.frozen(kw_only=True, auto_exc=True)
class OutputIsInputError(InputError):
    """An output would be written over one of the command's own inputs.

    ``source`` is the output as given, ``input`` the input it is (the same file by device
    and inode: the same path, a symlink or a hard link), ``reason`` says so.
    """

    input: str


@contextlib.contextmanager
def input_errors(source: str | Path) -> Iterator[None]:
    """Raise any OSError of the block as an :class:`InputError` naming ``source``.

    Raises:
        InputError: from the OSError, which stays its ``__cause__``.
    """
    try:
        yield
    except OSError as err:
        raise InputError.from_os_error(source, err) from err


@attrs.frozen(kw_only=True, auto_exc=True)
class ArgumentError(KernelIndexError, ValueError):
    """A library call was given an argument it cannot use: ``indent=4`` for dumps, a
    digest helper given ``None``, an unknown kind or an object of another kind, an
    unknown format or timer, a negative threshold or cost, or tensors that do not fit
    a kernel's contract.

    It is a ValueError too, as Python's own functions raise for a bad argument.

    Attributes:
        argument: The parameter, e.g. ``indent`` or ``spec``.
        reason: What was expected and what was found.
    """

    argument: str
    reason: str

    def __str__(self) -> str:
        return f"{self.argument}: {printable(self.reason)}"


@attrs.frozen(kw_only=True, auto_exc=True)
class StateError(KernelIndexError, RuntimeError):
    """A call that the state of the process or of an object does not allow: no GPU and
    Triton imported before ``TRITON_INTERPRET=1`` was set, so no device to run on; or
    ``CsvFile.records()`` outside its ``with`` block.

    It is a RuntimeError too, so code that caught RuntimeError from these calls still does.

    Attributes:
        call: What was called, e.g. ``select_device()``.
        reason: What state stands in its way.
    """

    call: str
    reason: str

    def __str__(self) -> str:
        return f"{self.call}: {printable(self.reason)}"


@attrs.frozen(kw_only=True, auto_exc=True)
class LaunchError(KernelIndexError):
    """A setting of a sweep's process (an option or a launcher's variable) is unusable.

    A usage error: the command line or the launcher must change, not the records.

    Attributes:
        setting: The option or environment variable, e.g. ``--shard`` or ``RANK``.
        reason: What was expected and what was found.
    """

    setting: str
    reason: str

    def __str__(self) -> str:
        return f"{self.setting}: {self.reason}"


@attrs.frozen(kw_only=True, auto_exc=True)
class RecordSetError(KernelIndexError):
    """Records that do not form one record set: invalid ones, or two that clash.

    Attributes:
        problems: Every problem found, each with its file and line; a clash names
            the other place in its message.
    """

    problems: Sequence[FileProblem]

    def __str__(self) -> str:
        return "\n".join(map(str, self.problems))


@attrs.frozen(kw_only=True, auto_exc=True)
class CanonicalizationError(KernelIndexError, rfc8785.CanonicalizationError):
    """A value has no exact JSON text: NaN or an infinity, an integer beyond 2^53 - 1 in a
    digest, a non-string key, a lone surrogate, a cycle, or nesting past the limit.

    It is rfc8785's CanonicalizationError (a ValueError) too, so code that caught that
    error from the digest helpers still does.
    """

    pointer: str
    reason: str

    def __str__(self) -> str:
        return f"{self.pointer or '(value)'}: {self.reason}"


@attrs.frozen(kw_only=True, auto_exc=True)
class TimestampError(KernelIndexError, ValueError):
    """A timestamp that is not an instant in the published form (naive, or malformed).

    It is a ValueError too, as the standard library's parsers raise for bad text.
    """

    value: str
    reason: str

    def __str__(self) -> str:
        return f"{self.reason}, got {self.value}"


# Where the package installs from with git (``pip install "kernelindex-sdk @ git+..."``).
_SOURCE_URL: Final = "git+https://github.com/kernelindex/kernelindex-sdk"


@attrs.frozen(kw_only=True, auto_exc=True)
class MissingDependencyError(KernelIndexError):
    """An optional feature needs a package that is not installed (an extra installs it)."""

    feature: str
    package: str
    extra: str

    def __str__(self) -> str:
        # Forms that work before the first release too: from a clone, and from git.
        return (
            f"{self.feature} needs {self.package}, which is not installed:"
            f' pip install -e ".[{self.extra}]" in a clone of kernelindex-sdk, or'
            f' pip install "kernelindex-sdk[{self.extra}] @ {_SOURCE_URL}"'
        )


@attrs.frozen(kw_only=True, auto_exc=True)
class StoreError(InputError):
    """A records store that cannot be opened, read or written: a file that is no SQLite
    database, a server that refuses the connection, a URL of an unknown kind.

    It is an InputError (the store is where records are read from and written to), so
    the command line exits 2 for it, as for any input it cannot read.

    Attributes:
        source: The store, as its URL or path (a password in a URL is shown as ``***``).
        reason: What went wrong.
    """


@attrs.frozen(kw_only=True, auto_exc=True)
class StoreLayoutError(StoreError):
    """A store whose tables this version cannot use: a newer layout version, or a
    database that holds tables but is no kernelindex store."""


@attrs.frozen(kw_only=True, auto_exc=True)
class StoreDamagedError(StoreLayoutError):
    """A store whose contents break its layout's contract, as a hand edit can leave it: a
    layout version that is not a number, a missing table or row, a value of the wrong
    type, JSON that does not parse. The command line exits 1 for it (invalid input),
    not 2: the store was read, and what it holds is wrong.

    Attributes:
        source: The store, as its URL or path.
        reason: What is wrong and where (table, column, run).
    """


@attrs.frozen(kw_only=True, auto_exc=True)
class StoreClashError(KernelIndexError):
    """Records refused by a store: invalid ones, or runs whose names the store already
    holds with other content (each problem names both places).

    Attributes:
        problems: Every problem, each with its file and line.
    """

    problems: Sequence[FileProblem]

    def __str__(self) -> str:
        return "\n".join(map(str, self.problems))
