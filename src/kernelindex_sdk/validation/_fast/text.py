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

import functools
import itertools
import re
from typing import Any, Final

import orjson

from ..._json.published import ecmascript_number
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
# The bytes of a number as orjson writes one, and those that may come just before one.
_NUMBER_BYTES: Final = b"-.0123456789"
_BEFORE_NUMBER: Final = (b":", b",", b"[")
_AFTER_NUMBER: Final = (b",", b"]", b"}")


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
    if written == data or _published_sixes(written) == data:
        return value
    return value if written.count(b":") == data.count(b":") else UNPROVEN


def _published_sixes(written: bytes) -> bytes | None:
    """orjson's writing with each number it wrote with the exponent -6 spelled as the
    published form spells it (``1e-6`` as ``0.000001``, the one form of a non-integral
    number below 1e16 that the two spell apart); None where an ``e-6`` is no number of
    orjson's writing alone (text in a string, say). A writing without one is itself.

    Equal to the text, it proves what the count of colons proves, without two passes
    over the text (6% of a harness record's reading, whose ``atol`` is 1e-6, in
    instructions: benchmarks/results/reader_fast_parts.json).
    """
    pieces = written.split(b"e-6")
    spelled = []
    for piece, after in itertools.pairwise(pieces):
        before = piece.rstrip(_NUMBER_BYTES)
        published = _published(piece[len(before) :])
        if published is None or before[-1:] not in _BEFORE_NUMBER:
            return None
        if after[:1] not in _AFTER_NUMBER:
            return None
        spelled += [before, published]
    spelled.append(pieces[-1])
    return b"".join(spelled)


@functools.lru_cache(maxsize=256)
def _published(mantissa: bytes) -> bytes | None:
    """The published spelling of the number ``{mantissa}e-6`` (a few per input); None
    where that is no number."""
    try:
        number = float(mantissa + b"e-6")
    except ValueError:
        return None
    return ecmascript_number(number).encode("ascii")


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
