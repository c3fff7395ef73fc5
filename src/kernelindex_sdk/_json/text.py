"""Strict JSON text: parsing that rejects what Python's json lets through, with locations.

Python's json keeps the last of duplicate keys and accepts NaN and Infinity; records
must not, since two readers could then see different documents.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any, Final

import attrs

from ..errors import Problem
from . import walk as _jsonwalk
from .places import KEY_CODES, escape_token, located

__all__ = [
    "KEY_CODES",
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "MAX_PROBLEMS",
    "Parsed",
    "ValueScan",
    "capped",
    "escape_token",
    "has_surrogate",
    "is_blank",
    "located",
    "more_problems",
    "parse",
    "parse_document",
    "scan_value",
]

_BOM = b"\xef\xbb\xbf"
# JSON's whitespace (RFC 8259); str.strip() would also drop form feeds and vertical tabs.
_WHITESPACE = " \t\r\n"
#: The deepest nesting of arrays and objects a document may have (see _jsonwalk).
MAX_DEPTH: Final = _jsonwalk.MAX_DEPTH
#: The most digits an integer literal may have: Python refuses to convert longer ones
#: (``sys.int_max_str_digits``), and no schema field admits an integer past 2^53.
MAX_INT_DIGITS: Final = 4300
_SURROGATE = _jsonwalk.SURROGATE
#: The most problems kept for one document: the rest are counted, and said in one more
#: problem (:func:`more_problems`). A 5 MB line can hold 70,000 problems, each of which
#: (with what found it) cost several kB of memory.
MAX_PROBLEMS: Final = 100
# Containers the quick pass walks before refusing a value as too large.
_QUICK_BUDGET: Final = 1_000_000
# JSON's types exactly: validation refuses what a reader of the text would not get back.
_RULES: Final = _jsonwalk.Rules(exact=True)
_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")


class _DuplicateKeyObject(dict[str, Any]):
    """An object that had repeated keys; remembers which."""

    duplicates: list[str]


class _NonFinite:
    """Stands where the text had NaN, Infinity or -Infinity."""

    __slots__ = ("literal",)

    def __init__(self, literal: str) -> None:
        self.literal = literal


def more_problems(count: int) -> Problem:
    """The problem that says ``count`` more problems were found and not kept."""
    noun = "problem" if count == 1 else "problems"
    return Problem(
        pointer="",
        message=f"... and {count:,} more {noun}; at most {MAX_PROBLEMS} are kept for one document",
        code="more-problems",
    )


def capped(problems: Iterable[Problem]) -> Iterator[Problem]:
    """The first :data:`MAX_PROBLEMS` problems, then (when there are more) one that counts
    the rest; the rest are counted one at a time, never held."""
    count = 0
    for problem in problems:
        count += 1
        if count <= MAX_PROBLEMS:
            yield problem
    if count > MAX_PROBLEMS:
        yield more_problems(count - MAX_PROBLEMS)


def _line_col(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def has_surrogate(text: str) -> bool:
    """Whether ``text`` holds a surrogate code point as a character (no UTF-8 has one).

    Only a ``str`` made in Python can: text decoded from UTF-8 never does.
    """
    return not text.isascii() and _SURROGATE.search(text) is not None


def is_blank(text: str | bytes) -> bool:
    """Whether ``text`` holds only JSON whitespace (space, tab, CR, LF; not form feed)."""
    # Stripped from the left only: a line that starts with anything else comes back as
    # it is, not copied without its newline.
    if isinstance(text, bytes):
        return not text.lstrip(b" \t\r\n")
    return not text.lstrip(_WHITESPACE)


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
        # Columns count characters, so locate the bad byte in the decoded prefix.
        prefix = data[: err.start].decode("utf-8", "replace")
        line, column = _line_col(prefix, len(prefix))
        message = f"invalid UTF-8: byte 0x{data[err.start]:02x} at offset {err.start}"
        return None, [Problem(pointer="", message=message, code="json", line=line, column=column)]


@attrs.frozen
class Parsed:
    """A parsed document: ``value`` is ``None`` when there are problems.

    A value without problems has passed :func:`scan_value` (``scan`` says what it found),
    so validation need not walk it again.
    """

    value: Any
    text: str | None
    problems: list[Problem]
    scan: ValueScan | None = None


def parse(data: str | bytes) -> tuple[Any, str | None, list[Problem]]:
    """Parse one JSON document strictly; see :func:`parse_document`.

    Returns:
        ``(value, text, problems)``.
    """
    parsed = parse_document(data)
    return parsed.value, parsed.text, parsed.problems


def parse_document(data: str | bytes) -> Parsed:
    """Parse one JSON document strictly.

    Returns:
        The parsed value (``None`` when it could not be parsed), the decoded text, and
        the problems found: malformed JSON, a byte order mark, invalid UTF-8, duplicate
        keys, NaN or Infinity literals, numbers out of range, integers too long to
        read, and what :func:`scan_value` refuses (lone surrogates, deep nesting).
    """
    text, problems = _decode(data)
    if text is not None and is_blank(text):
        problems = [Problem(pointer="", message="empty document", code="json", line=1, column=1)]
    if text is None or problems:
        return Parsed(None, text, problems)
    flagged = False
    integral = False

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

    def number(literal: str) -> float | _NonFinite:
        nonlocal integral
        value = float(literal)
        # 1e400 overflows to inf: a number no float can hold is no finite value.
        if not math.isfinite(value):
            return constant(literal)
        integral = integral or value.is_integer()
        return value

    def integer(literal: str) -> int | _NonFinite:
        if len(literal.lstrip("-")) > MAX_INT_DIGITS:
            return constant(literal)
        return int(literal)

    try:
        value = json.loads(
            text,
            object_pairs_hook=object_pairs,
            parse_constant=constant,
            parse_float=number,
            parse_int=integer,
        )
    except (json.JSONDecodeError, RecursionError) as err:
        return Parsed(None, text, [_syntax_problem(err)])
    if flagged:
        return Parsed(None, text, list(located(capped(_strictness_problems(value)), text)))
    # Parsed text holds only JSON's types; what scan_value could still find is a lone
    # surrogate (a \\ud800-style escape makes one, and a str given as the text may hold
    # one as a character: decoded bytes cannot) or nesting past MAX_DEPTH (which needs
    # more brackets than that): walk only when the text could hold either.
    scan = ValueScan(problems=[], integral_float=integral)
    # ("\\" in text runs at memory speed: the regular expression only where it could match.)
    escaped = "\\" in text and _ESCAPED_SURROGATE.search(text) is not None
    surrogate = isinstance(data, str) and has_surrogate(text)
    if escaped or surrogate or text.count("[") + text.count("{") > MAX_DEPTH:
        scan = scan_value(value)
    if scan.problems:
        return Parsed(None, text, list(located(scan.problems, text)))
    return Parsed(value, text, [], scan)


def _syntax_problem(err: json.JSONDecodeError | RecursionError) -> Problem:
    if isinstance(err, RecursionError):
        return Problem(pointer="", message="nesting too deep to parse", code="json")
    message = err.msg[0].lower() + err.msg[1:]
    return Problem(pointer="", message=message, code="json", line=err.lineno, column=err.colno)


def _strictness_problems(value: Any) -> Iterator[Problem]:
    # Iterative, so deeply nested input cannot exhaust the stack.
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        pointer, node = stack.pop()
        if isinstance(node, _NonFinite):
            yield _literal_problem(pointer, node.literal)
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


def _literal_problem(pointer: str, literal: str) -> Problem:
    if literal in ("NaN", "Infinity", "-Infinity"):
        return Problem(
            pointer=pointer,
            message=f"{literal} is not valid JSON; numbers must be finite",
            code="non-finite-number",
        )
    shown = literal if len(literal) <= 40 else f"{literal[:20]}...{literal[-10:]}"
    if "." in literal or "e" in literal or "E" in literal:
        return Problem(
            pointer=pointer,
            message=f"number {shown} is out of range; numbers must be finite doubles",
            code="non-finite-number",
        )
    return Problem(
        pointer=pointer,
        message=(
            f"integer {shown} has {len(literal.lstrip('-'))} digits;"
            f" at most {MAX_INT_DIGITS} can be read"
        ),
        code="integer-too-long",
    )


@attrs.frozen
class ValueScan:
    """What :func:`scan_value` found: problems, and whether a float is integral."""

    problems: list[Problem]
    integral_float: bool


def _short(node: object) -> str:
    try:
        text = repr(node)
    except Exception:  # a foreign object's repr may raise anything
        text = f"<{type(node).__name__}>"
    return text if len(text) <= 80 else text[:77] + "..."


def scan_value(value: Any) -> ValueScan:
    """Check that ``value`` is a JSON value, without recursion, in time linear in its size.

    JSON values are ``dict`` with ``str`` keys, ``list``, ``str``, ``int``, finite
    ``float``, ``bool`` and ``None``, of exactly those types (a ``str`` subclass or an
    ``IntEnum`` is not one), strings without lone surrogates, nested at most
    :data:`MAX_DEPTH` deep, and containing no container inside itself (a cycle). A
    container shared by two places is no cycle, but counts at each: a value that
    expands to more than 1,000,000 arrays and objects is refused as too large, since
    every validator and writer would walk all of them.

    Returns:
        The problems found (the walk stops below a container that is too deep or
        cyclic) and whether any float is integral, such as ``2.0``.
    """
    found = _jsonwalk.quick(value, _RULES, _QUICK_BUDGET)
    if found.plain:
        return ValueScan(problems=[], integral_float=found.integral)
    if found.plain is None:
        # Validators expand shared containers: a value that shares at every level
        # would take them exponential time.
        message = f"more than {_QUICK_BUDGET} arrays and objects; too large to check"
        return ValueScan(
            problems=[Problem(pointer="", message=message, code="json-value")],
            integral_float=found.integral,
        )
    walk = _jsonwalk.Walk(_RULES)
    problems = list(capped(_problem(finding) for finding in walk.findings(value)))
    return ValueScan(problems=problems, integral_float=walk.integral)


def _problem(finding: _jsonwalk.Finding) -> Problem:
    pointer = "".join(f"/{escape_token(t)}" for t in _jsonwalk.path_tokens(finding.path))
    node, what = finding.node, finding.what
    code = "json-value"
    if what in ("surrogate", "key-surrogate"):
        at = _SURROGATE.search(node)
        index = -1 if at is None else at.start()
        point = 0 if at is None else ord(at.group())
        message = (
            f"{'key' if what == 'key-surrogate' else 'string'} holds a lone surrogate"
            f" U+{point:04X} at index {index}; it is not Unicode text and cannot be"
            " written as UTF-8"
        )
    elif what == "non-finite":
        message = f"{node!r} is not valid JSON; numbers must be finite"
        code = "non-finite-number"
    elif what == "cycle":
        message = "the value contains itself; JSON cannot hold a cycle"
    elif what == "deep":
        message = f"nested deeper than {MAX_DEPTH} levels"
    elif what == "key-type":
        message = f"expected string keys, got {type(node).__name__} {_short(node)}"
    else:
        message = f"expected a JSON value, got {type(node).__name__} {_short(node)}"
    return Problem(pointer=pointer, message=message, code=code)
