"""A record's text read by orjson, with the proof that the strict parser reads it alike.

:func:`~kernelindex_sdk._json.text.parse_document` reads a text through Python's ``json``
with a Python hook on every object and number (to refuse duplicate keys, NaN and
Infinity, numbers out of range and over-long integers, and to note integral floats).
:func:`quick_value` reads it with orjson and gives its value only where a few searches
of the bytes prove that the strict parser gives the same value, with no problem and no
integral float; otherwise it gives :data:`UNPROVEN`. The proof is in the package's
docstring (``kernelindex_sdk.validation._fast``).
"""

from __future__ import annotations

import re
from typing import Any, Final

import orjson

from ..._json.text import MAX_DEPTH, Parsed, ValueScan, parse_document
from .switch import enabled

__all__ = ["UNPROVEN", "parse", "quick_value"]

#: What :func:`quick_value` returns when it cannot vouch for the text.
UNPROVEN: Final = object()
# How orjson ends an integral float below 1e16 (2.0 -> "2.0"), before what may follow a
# number in its compact text; larger floats it writes with "e+".
_INTEGRAL: Final = re.compile(rb"\.0(?:[,\]}]|\Z)")
# A byte sought by its number is found by memchr (vectorized); two bytes are sought a
# byte at a time, several times slower: each rare pair is sought only after its rarer
# byte is found (benchmarks/results/reader_fast_parts.json).
_BACKSLASH: Final = ord("\\")
_PLUS: Final = ord("+")


def quick_value(data: bytes, max_brackets: int | None = MAX_DEPTH) -> Any:
    """The value of ``data`` when it is proven to parse strictly without a problem.

    Args:
        data: JSON text in UTF-8.
        max_brackets: The most ``[`` and ``{`` the text may hold (those in strings
            included): a text with at most ``MAX_DEPTH`` of them nests no deeper than the
            strict parser allows. A part of a document passes what the rest leaves; a
            caller that keeps the value only where a schema passes it, under which no
            value nests too deep (:mod:`.nesting`), passes None: no count.

    Returns:
        The value, for a text with no problem, no integral float, no ``\\u`` escape and
        at most ``max_brackets`` brackets; :data:`UNPROVEN` for any other text (which
        may still be valid: the strict parser says).
    """
    if _BACKSLASH in data and b"\\u" in data:
        return UNPROVEN
    if max_brackets is not None and data.count(b"[") + data.count(b"{") > max_brackets:
        return UNPROVEN
    try:
        value = orjson.loads(data)
        written = orjson.dumps(value)
    except (orjson.JSONDecodeError, orjson.JSONEncodeError):
        return UNPROVEN
    if (_PLUS in written and b"e+" in written) or _INTEGRAL.search(written) is not None:
        return UNPROVEN
    # Equal texts, or else equal counts of colons, leave no room for a repeated key.
    if written == data or written.count(b":") == data.count(b":"):
        return value
    return UNPROVEN


def parse(data: str | bytes) -> Parsed:
    """``parse_document(data)``'s answer: :func:`quick_value`'s where it vouches for the
    text and the fast paths are on."""
    if enabled():
        try:
            raw = data.encode("utf-8") if isinstance(data, str) else data
        except UnicodeEncodeError:  # a lone surrogate: the strict parser names it
            raw = b""
        value = quick_value(raw) if raw else UNPROVEN
        if value is not UNPROVEN:
            text = data if isinstance(data, str) else data.decode("utf-8")
            return Parsed(value, text, [], ValueScan(problems=[], integral_float=False))
    return parse_document(data)
