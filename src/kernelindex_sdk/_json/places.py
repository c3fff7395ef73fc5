"""Where a JSON pointer's value (or its key) starts in a text: its line and column.

Only the containers on the way to the pointers asked for are read member by member: a
member or item that leads to none of them is passed over by the standard library's
scanner (C), and so is the rest of an array past the last index asked for. Placing a
few problems of a 5 MB line costs about one parse of it by ``json``, and memory for
their places alone (a source map of every pointer, as json-source-map builds it in
Python, took 51 s and 290 MB for a 4.5 MB line).

The text is one that Python's ``json`` parses (its problems are of values, not of
syntax). Where a key repeats, its last member is the one placed, as ``json`` keeps the
last value. Lines and columns count from 1; a column counts characters.

A problem's pointer holds its keys as they are (RFC 6901: ``~1`` for ``/``), so a key
such as ``kernelindex.dev/commit-time`` is found too.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterable, Iterator
from typing import Final

import attrs

from ..errors import Problem

__all__ = ["KEY_CODES", "escape_token", "located", "places"]

#: Problem codes whose pointer names a key rather than a value: :func:`located` places
#: them at the key.
KEY_CODES: Final = frozenset({"additionalProperties", "duplicate-key", "propertyNames"})
_WHITESPACE: Final = re.compile(r"[ \t\n\r]*")
# Passes over a value without keeping it: integers as floats (C, and an integer of
# 5,000 digits is no error), NaN and the infinities as json reads them.
_SKIP: Final = json.JSONDecoder(parse_int=float).scan_once  # type: ignore[attr-defined]
_SCANSTRING: Final = json.decoder.scanstring  # type: ignore[attr-defined]


def escape_token(token: str | int) -> str:
    """Escape one reference token for an RFC 6901 JSON pointer."""
    return str(token).replace("~", "~0").replace("/", "~1")


def _tokens(pointer: str) -> tuple[str, ...] | None:
    """The reference tokens of an RFC 6901 pointer (None for one that is not)."""
    if not pointer:
        return ()
    if not pointer.startswith("/"):
        return None
    return tuple(t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/"))


@attrs.frozen
class _Spot:
    """Where a value starts in the text, and its member's key (None for an item)."""

    value: int
    key: int | None


# A trie of the tokens asked for: each node maps a token to the node below it.
_Trie = dict[str, "_Trie"]


class _Finder:
    """Reads a text along a trie of pointers; :attr:`found` maps token paths to spots."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.found: dict[tuple[str, ...], _Spot] = {}

    def _skip_space(self, idx: int) -> int:
        found = _WHITESPACE.match(self.text, idx)
        return idx if found is None else found.end()

    def value(self, idx: int, trie: _Trie, path: tuple[str, ...]) -> int:
        """Read the value at ``idx`` (no whitespace before it); return where it ends."""
        if trie:
            first = self.text[idx : idx + 1]
            if first == "{":
                return self._object(idx, trie, path)
            if first == "[":
                return self._array(idx, trie, path)
        return int(_SKIP(self.text, idx)[1])

    def _object(self, idx: int, trie: _Trie, path: tuple[str, ...]) -> int:
        text = self.text
        idx = self._skip_space(idx + 1)
        if text[idx] == "}":
            return idx + 1
        while True:
            key_at = idx
            key, idx = _SCANSTRING(text, idx + 1, True)
            idx = self._skip_space(self._skip_space(idx) + 1)  # past the colon
            below = trie.get(key)
            if below is not None:
                here = (*path, key)
                self.found[here] = _Spot(idx, key_at)
                idx = self.value(idx, below, here)
            else:
                idx = int(_SKIP(text, idx)[1])
            idx = self._skip_space(idx)
            if text[idx] == "}":
                return idx + 1
            idx = self._skip_space(idx + 1)  # past the comma

    def _array(self, idx: int, trie: _Trie, path: tuple[str, ...]) -> int:
        text = self.text
        start = idx
        last = max((int(t) for t in trie if t.isdigit()), default=-1)
        idx = self._skip_space(idx + 1)
        if text[idx] == "]":
            return idx + 1
        index = 0
        while index <= last:
            below = trie.get(str(index))
            if below is None:
                idx = int(_SKIP(text, idx)[1])
            else:
                here = (*path, str(index))
                self.found[here] = _Spot(idx, None)
                idx = self.value(idx, below, here)
            idx = self._skip_space(idx)
            if text[idx] == "]":
                return idx + 1
            idx = self._skip_space(idx + 1)  # past the comma
            index += 1
        # Past the last index asked for: the array is passed over whole, in C.
        return int(_SKIP(text, start)[1])


def places(text: str, pointers: Iterable[str]) -> dict[str, tuple[int, int, int | None]]:
    """The start of each pointer's value in ``text``, as ``(line, column, key)``.

    ``key`` is the index in ``text`` of the member's key (its opening quote), None for an
    array item or the whole document. A pointer the text does not hold is left out.
    """
    trie: _Trie = {}
    asked: dict[tuple[str, ...], list[str]] = {}
    for pointer in pointers:
        tokens = _tokens(pointer)
        if tokens is None:
            continue
        asked.setdefault(tokens, []).append(pointer)
        node = trie
        for token in tokens:
            node = node.setdefault(token, {})
    finder = _Finder(text)
    start = finder._skip_space(0)
    finder.found[()] = _Spot(start, None)
    # Text json cannot read leaves the spots found before the place it cannot read.
    with contextlib.suppress(ValueError, IndexError, RecursionError, StopIteration):
        finder.value(start, trie, ())
    return {
        pointer: (*_line_column(text, spot.value), spot.key)
        for tokens, spot in finder.found.items()
        for pointer in asked.get(tokens, ())
    }


def _line_column(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def located(problems: Iterable[Problem], text: str | bytes | None) -> Iterator[Problem]:
    """Each problem with the line and column of its pointer in ``text``.

    The one place that says where in a text a problem's pointer is. A problem that has a
    line already keeps it; one whose pointer the text does not hold is yielded as it is.
    A problem whose code is in :data:`KEY_CODES` is placed at the key, others at the
    value. The problems are gathered first (callers pass a bounded number: see
    ``text.capped``) and the text read once for all of them.

    Args:
        problems: Problems whose pointers point into ``text``.
        text: The JSON text (bytes are read as UTF-8); ``None`` yields the problems
            unchanged.
    """
    if text is None:
        yield from problems
        return
    found = list(problems)
    wanted = [p.pointer for p in found if p.line is None]
    if not wanted:
        yield from found
        return
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    spots = places(text, wanted)
    for problem in found:
        spot = spots.get(problem.pointer) if problem.line is None else None
        if spot is None:
            yield problem
            continue
        line, column, key = spot
        if key is not None and problem.code in KEY_CODES:
            line, column = _line_column(text, key)
        yield attrs.evolve(problem, line=line, column=column)
