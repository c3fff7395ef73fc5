"""Exceptions raised by kernelindex_sdk, and the Problem they carry.

Every exception derives from KernelIndexError and carries its facts as fields, so
callers read ``err.problems`` or ``err.line`` instead of parsing messages.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from pathlib import Path

import attrs

from ._display import printable, printable_pointer

__all__ = [
    "InputError",
    "KernelIndexError",
    "Problem",
    "SchemaValidationError",
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


class KernelIndexError(Exception):
    """Base class of every error kernelindex_sdk raises for bad input or state."""


@attrs.frozen(kw_only=True, auto_exc=True)
class SchemaValidationError(KernelIndexError):
    """A document failed validation; ``problems`` lists every problem found."""

    problems: Sequence[Problem]
    source: str | None = None

    def __str__(self) -> str:
        prefix = f"{printable(self.source)}:" if self.source else ""
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
        return f"{printable(self.source)}: {printable(self.reason)}"

    @classmethod
    def from_os_error(cls, source: str | Path, err: OSError) -> InputError:
        """The InputError for an OSError met while reading or writing ``source``."""
        return cls(source=str(source), reason=err.strerror or str(err))


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
