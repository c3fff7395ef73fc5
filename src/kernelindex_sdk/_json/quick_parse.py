"""The strict parser's answer for plain JSON text at C speed, or no answer.

:func:`~kernelindex_sdk._json.text.parse_document` reads a text through Python's
``json`` with a Python hook on every object and number, to refuse what ``json`` lets
through (duplicate keys, NaN and Infinity, numbers out of range, over-long integers) and
to note integral floats. On a record of a few kB those hooks cost as much as the parse.
:func:`quick_value` reads the text with orjson (C, several times faster than ``json``
without hooks) and proves, with a few searches of the bytes, that the strict parser
would have given the same value with no problem and no integral float. Where it cannot
prove it, it gives :data:`UNPROVEN` and the caller parses strictly, which then names
each problem.

Why each check suffices (tests/test_quick_parse.py holds the two paths to one verdict
on hostile and generated texts):

- orjson refuses every text ``json`` refuses, and NaN, Infinity, numbers that overflow a
  double, lone surrogates, control characters in strings, a byte order mark and invalid
  UTF-8 as well; it gives ``json``'s value for every text both accept, except that an
  integer outside [-2^63, 2^64) becomes a float, which its writer then writes with an
  exponent (``e+``): such a text, and any with a float >= 1e16, is left to the strict
  parser. So is every text whose floats include an integral one (written ``.0`` by
  orjson): the strict parser notes them.
- Duplicate keys, by counting colons. A colon in JSON text is either the one after a
  key or a character inside a string, and a text without ``\\u`` escapes writes each
  colon of a string as itself, as orjson does. So the text holds as many colons as it
  has keys plus the colons of all its strings, and orjson's writing of the value it
  read holds as many as the value has keys plus the colons of the value's strings.
  A repeated key leaves the value one key short, with its first value's strings
  dropped: equal counts leave no room for one. (Text that is byte for byte orjson's
  writing of the value needs no count.)
- Depth, by counting brackets as the strict parser does: a text with at most
  :data:`~kernelindex_sdk._json.walk.MAX_DEPTH` of ``[`` and ``{`` nests no deeper.
"""

from __future__ import annotations

import re
from typing import Any, Final

import orjson

from .walk import MAX_DEPTH

__all__ = ["UNPROVEN", "quick_value"]

#: What :func:`quick_value` returns when it cannot vouch for the text.
UNPROVEN: Final = object()
# Every byte but the colons and opening brackets, which the proof counts.
_UNMARKED: Final = bytes(c for c in range(256) if c not in b":[{")
# How orjson ends an integral float below 1e16 (2.0 -> "2.0"), before what may follow a
# number in its compact text; larger ones it writes with "e+".
_INTEGRAL: Final = re.compile(rb"\.0(?:[,\]}]|\Z)")


def quick_value(data: str | bytes, max_brackets: int = MAX_DEPTH) -> Any:
    """The value of ``data`` when it is proven to parse strictly without a problem.

    Args:
        data: JSON text, as bytes (UTF-8) or str.
        max_brackets: The most ``[`` and ``{`` the text may hold (strings included): a
            text with at most :data:`~kernelindex_sdk._json.walk.MAX_DEPTH` of them
            nests no deeper. A caller reading part of a document passes what is left
            of that bound.

    Returns:
        The value the strict parser gives, for a text with no problem, no integral
        float, no ``\\u`` escape and at most ``max_brackets`` brackets;
        :data:`UNPROVEN` for any other text (which may still be valid: the strict
        parser says).
    """
    if isinstance(data, bytes):
        raw = data
    else:
        try:
            raw = data.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate
            return UNPROVEN
    # One-byte searches first: they run at memory speed, two-byte ones several times slower.
    if b"\\" in raw and b"\\u" in raw:
        return UNPROVEN
    # One pass keeps what the proof counts (colons, brackets); counting each is a pass.
    marks = raw.translate(None, _UNMARKED)
    if marks.count(b"[") + marks.count(b"{") > max_brackets:
        return UNPROVEN
    try:
        value = orjson.loads(raw)
        written = orjson.dumps(value)
    except (orjson.JSONDecodeError, orjson.JSONEncodeError):
        # orjson writes back whatever it read: only a refused text lands here.
        return UNPROVEN
    # Whether orjson's writing of what it read proves the strict parse: no float of
    # 1e16 or more (written "e+", an integer beyond 64 bits among them), no integral
    # float, and no repeated key (text that is orjson's own writing of the value has
    # none; otherwise the colons decide, counted in C: the count of one byte is cheaper
    # than a translation).
    proven = not (b"+" in written and b"e+" in written) and _INTEGRAL.search(written) is None
    if proven and (written == raw or marks.count(b":") == written.count(b":")):
        return value
    return UNPROVEN
