"""Exceptions raised by kernelindex_sdk, and the Problem they carry.

Every exception derives from KernelIndexError and carries its facts as fields, so
callers read ``err.problems`` or ``err.line`` instead of parsing messages.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

__all__ = [
    "InputError",
    "KernelIndexError",
    "MissingDependencyError",
    "Problem",
    "SchemaValidationError",
    "UnsupportedSourceError",
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
        pointer = self.pointer or "(document)"
        return f"{where}{pointer}: {self.message} [{self.code}]"


class KernelIndexError(Exception):
    """Base class of every error kernelindex_sdk raises for bad input or state."""


@attrs.frozen(kw_only=True, auto_exc=True)
class SchemaValidationError(KernelIndexError):
    """A document failed validation; ``problems`` lists every problem found."""

    problems: Sequence[Problem]
    source: str | None = None

    def __str__(self) -> str:
        prefix = f"{self.source}:" if self.source else ""
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
        return f"{self.source}: {self.reason}"


@attrs.frozen(kw_only=True, auto_exc=True)
class MissingDependencyError(KernelIndexError):
    """An optional feature needs a package that is not installed (an extra installs it)."""

    feature: str
    package: str
    extra: str

    def __str__(self) -> str:
        return (
            f"{self.feature} needs {self.package}, which is not installed:"
            f" pip install 'kernelindex-sdk[{self.extra}]'"
        )
