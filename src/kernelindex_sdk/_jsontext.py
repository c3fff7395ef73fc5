"""Strict JSON text: parsing that rejects what Python's json lets through, with locations.

Python's json keeps the last of duplicate keys and accepts NaN and Infinity; records
must not, since two readers could then see different documents.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from typing import Any

import attrs
import json_source_map

from .errors import Problem

__all__ = ["SourceMap", "escape_token", "parse"]

_BOM = b"\xef\xbb\xbf"


class _DuplicateKeyObject(dict[str, Any]):
    """An object that had repeated keys; remembers which."""

    duplicates: list[str]


class _NonFinite:
    """Stands where the text had NaN, Infinity or -Infinity."""

    __slots__ = ("literal",)

    def __init__(self, literal: str) -> None:
        self.literal = literal


def escape_token(token: str | int) -> str:
    """Escape one reference token for an RFC 6901 JSON pointer."""
    return str(token).replace("~", "~0").replace("/", "~1")


def _line_col(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def _decode(data: str | bytes) -> tuple[str | None, list[Problem]]:
    if isinstance(data, str):
        if data.startswith("\ufeff"):
            return None, [
                Problem(
                    pointer="",
                    message="byte order mark before the document; remove it",
                    code="json",
                    line=1,
                    column=1,
                )
            ]
        return data, []
    if data.startswith(_BOM):
        return None, [
            Problem(
                pointer="",
                message="byte order mark before the document; remove it",
                code="json",
                line=1,
                column=1,
            )
        ]
    try:
        return data.decode("utf-8"), []
    except UnicodeDecodeError as err:
        line, column = _line_col(data[: err.start].decode("utf-8", "replace"), err.start)
        message = f"invalid UTF-8: byte 0x{data[err.start]:02x} at offset {err.start}"
        return None, [Problem(pointer="", message=message, code="json", line=line, column=column)]


def parse(data: str | bytes) -> tuple[Any, str | None, list[Problem]]:
    """Parse one JSON document strictly.

    Returns:
        ``(value, text, problems)``: the parsed value (``None`` when it could not be
        parsed), the decoded text, and the problems found: malformed JSON, a byte
        order mark, invalid UTF-8, duplicate keys, NaN or Infinity literals.
    """
    text, problems = _decode(data)
    if text is None:
        return None, None, problems
    if not text.strip():
        return (
            None,
            text,
            [Problem(pointer="", message="empty document", code="json", line=1, column=1)],
        )
    flagged = False

    def object_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal flagged
        obj = dict(pairs)
        if len(obj) == len(pairs):
            return obj
        flagged = True
        dup = _DuplicateKeyObject(obj)
        dup.duplicates = [k for k, n in Counter(k for k, _ in pairs).items() if n > 1]
        return dup

    def constant(literal: str) -> _NonFinite:
        nonlocal flagged
        flagged = True
        return _NonFinite(literal)

    try:
        value = json.loads(text, object_pairs_hook=object_pairs, parse_constant=constant)
    except json.JSONDecodeError as err:
        message = err.msg[0].lower() + err.msg[1:]
        return (
            None,
            text,
            [Problem(pointer="", message=message, code="json", line=err.lineno, column=err.colno)],
        )
    except RecursionError:
        return None, text, [Problem(pointer="", message="nesting too deep to parse", code="json")]
    if flagged:
        source_map = SourceMap(text)
        problems = []
        for problem in _strictness_problems(value):
            where = source_map.locate(problem.pointer, key=problem.code == "duplicate-key")
            problems.append(
                problem if where is None else attrs.evolve(problem, line=where[0], column=where[1])
            )
        return None, text, problems
    return value, text, []


def _strictness_problems(value: Any) -> Iterator[Problem]:
    # Iterative, so deeply nested input cannot exhaust the stack.
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        pointer, node = stack.pop()
        if isinstance(node, _NonFinite):
            yield Problem(
                pointer=pointer,
                message=f"{node.literal} is not valid JSON; numbers must be finite",
                code="non-finite-number",
            )
        elif isinstance(node, dict):
            if isinstance(node, _DuplicateKeyObject):
                for key in node.duplicates:
                    yield Problem(
                        pointer=f"{pointer}/{escape_token(key)}",
                        message=f"duplicate key {key!r}",
                        code="duplicate-key",
                    )
            stack.extend((f"{pointer}/{escape_token(k)}", v) for k, v in reversed(node.items()))
        elif isinstance(node, list):
            stack.extend((f"{pointer}/{i}", v) for i, v in reversed(list(enumerate(node))))


class SourceMap:
    """Where each JSON pointer of a text is; computed once, on the first lookup."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._entries: dict[str, Any] | None = None

    def locate(self, pointer: str, *, key: bool = False) -> tuple[int, int] | None:
        """Return the 1-based (line, column) of the value at ``pointer``.

        Args:
            pointer: An RFC 6901 pointer into the text.
            key: Locate the member's key rather than its value.

        Returns:
            The position, or ``None`` when the pointer is not in the text or the text
            cannot be mapped.
        """
        if self._entries is None:
            try:
                self._entries = json_source_map.calculate(self._text)
            except (
                json_source_map.errors.InvalidInputError,
                ValueError,
                IndexError,
                RecursionError,
            ):
                self._entries = {}
        entry = self._entries.get(pointer)
        if entry is None:
            return None
        location = entry.key_start if key and entry.key_start is not None else entry.value_start
        return location.line + 1, location.column + 1
