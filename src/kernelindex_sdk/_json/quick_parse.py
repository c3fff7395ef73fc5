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
- Duplicate keys. Text that is byte for byte orjson's writing of the value has none:
  orjson writes each key of a dict once. Nor has text that is that writing with some of
  its numbers of exponent -6 spelled as the published form does (orjson's ``1e-6`` is
  the published ``0.000001``; below 1e16 these are the only non-integral numbers the two
  spell apart): such a respelling changes no key, and one that fell in a string would
  make the text read to another string than the one orjson wrote, so equal texts leave
  no room for it. Otherwise, by counting colons. A colon in JSON text is either the one
  after a key or a character inside a string, and a text without ``\\u`` escapes
  writes each colon of a string as itself, as orjson does. So the text holds as many
  colons as it has keys plus the colons of all its strings, and orjson's writing of the
  value it read holds as many as the value has keys plus the colons of the value's
  strings. A repeated key leaves the value one key short, with its first value's
  strings dropped: equal counts leave no room for one.
- Depth, by counting brackets as the strict parser does: a text with at most
  :data:`~kernelindex_sdk._json.walk.MAX_DEPTH` of ``[`` and ``{`` nests no deeper. A
  caller that keeps the value only when a schema passes it, and the schema lets no valid
  value nest too deep (``validation._nesting``), asks for no count.
"""

from __future__ import annotations

import re
from typing import Any, Final

import orjson

from .published import ecmascript_number
from .walk import MAX_DEPTH

__all__ = ["UNPROVEN", "quick_value"]

#: What :func:`quick_value` returns when it cannot vouch for the text.
UNPROVEN: Final = object()
# Every byte but the colons and opening brackets, which the proof counts.
_UNMARKED: Final = bytes(c for c in range(256) if c not in b":[{")
# How orjson ends an integral float below 1e16 (2.0 -> "2.0"), before what may follow a
# number in its compact text; larger ones it writes with "e+".
_INTEGRAL: Final = re.compile(rb"\.0(?:[,\]}]|\Z)")
# Bytes searched for by ``in`` (as integers: memchr, with no method call).
_BACKSLASH: Final = ord("\\")
_PLUS: Final = ord("+")
_NEWLINE: Final = ord("\n")
# What may follow a number in orjson's compact text (or its end).
_AFTER_BYTES: Final = b",]}"
# orjson writes a float of exponent -6 as "1e-6", the one form in which it spells a
# finite non-integral number otherwise than the published form ("0.000001";
# tests/test_quick_parse.py compares the two).
_SIX: Final = b"e-6"
# Such a number, whole.
_SIX_NUMBER: Final = re.compile(rb"-?[1-9](?:\.[0-9]+)?e-6")
# How far before its "e-6" the start of such a number is looked for first: orjson
# writes one in at most 21 bytes ("-9.999999999999999e-6"). Bytes that a number of it
# may hold, and those that may come before one in its compact text.
_SIX_REACH: Final = 24
_NUMBER_BYTES: Final = b"-.0123456789"
_BEFORE_NUMBER: Final = b":,["
# Such numbers as the published form spells them, by orjson's spelling (a few per input).
_RESPELLED: dict[bytes, bytes] = {}
_MAX_RESPELLED: Final = 256


def _spelled_as(written: bytes, raw: bytes, at: int) -> bool:
    """Whether ``raw`` is ``written`` with some of the numbers orjson wrote with the
    exponent -6 (``de-6``) spelled as the published form does (``0.00000d``).

    ``at`` is where ``written`` first holds ``e-6`` (the caller found it: a search of
    the whole text, not made twice). Compared piece by piece as the numbers are found:
    once the rest of ``raw`` is the rest of ``written``, nothing more is searched. A
    ``de-6`` that is no whole number (text in a string) is not spelled otherwise, and
    cannot make the two equal.
    """
    last = 0  # where the rest of written starts
    here = 0  # where the rest of raw starts
    while at != -1:
        end = at + 3
        if end == len(written) or written[end] in _AFTER_BYTES:
            start = _number_start(written, last, at)
            token = written[start:end]
            spelled = _RESPELLED.get(token)
            if spelled is None and start > 0 and _SIX_NUMBER.fullmatch(token) is not None:
                spelled = ecmascript_number(float(token)).encode("ascii")
                if len(_RESPELLED) >= _MAX_RESPELLED:
                    _RESPELLED.clear()
                _RESPELLED[token] = spelled
            if spelled is not None:
                # (A slice compared costs less than a method call: bytes.startswith
                # parses its arguments from a format string.)
                after = here + start - last
                if (
                    not raw.startswith(written[last:start], here)
                    or raw[after : after + len(spelled)] != spelled
                ):
                    return False
                here = after + len(spelled)
                last = end
                if len(raw) - here == len(written) - last and raw.endswith(written[last:]):
                    return True
        at = written.find(_SIX, end)
    return raw[here:] == written[last:]


def _number_start(written: bytes, last: int, at: int) -> int:
    """Where the token that ends in the ``e-6`` at ``at`` starts: after the last ``:``,
    ``,`` or ``[`` from ``last`` on (0 where there is none), as a number of orjson's holds
    none of them.

    Found in one strip of the few bytes before ``at`` (three searches back cost three
    method calls and a scan byte by byte): where the byte before their run of number
    bytes is such a separator, it is the last one, as no number byte is one. Otherwise
    (another byte, or a run reaching back past ``last`` or the reach) the separators
    are searched for.
    """
    near = at - _SIX_REACH
    if near > last:
        kept = written[near:at].rstrip(_NUMBER_BYTES)
        if kept:
            before = near + len(kept) - 1
            if written[before] in _BEFORE_NUMBER:
                return before + 1
    return (
        max(
            written.rfind(b":", last, at),
            written.rfind(b",", last, at),
            written.rfind(b"[", last, at),
        )
        + 1
    )


# One pass with nothing called that need not be: each call costs as much as a check.
def quick_value(  # noqa: PLR0911
    data: str | bytes, max_brackets: int | None = MAX_DEPTH
) -> Any:
    """The value of ``data`` when it is proven to parse strictly without a problem.

    Args:
        data: JSON text, as bytes (UTF-8) or str.
        max_brackets: The most ``[`` and ``{`` the text may hold (strings included): a
            text with at most :data:`~kernelindex_sdk._json.walk.MAX_DEPTH` of them
            nests no deeper. A caller reading part of a document passes what is left
            of that bound; one that accepts the value only when it is valid against a
            schema under which no value nests too deep passes None (no count).

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
    # A byte by ``in`` as an integer (memchr, no call), the others by find, not ``in``:
    # bytes.__contains__ first tries its operand as an integer, and the TypeError it
    # builds and drops costs more than the search.
    if _BACKSLASH in raw and raw.find(b"\\u") != -1:
        return UNPROVEN
    marks = None
    if max_brackets is not None:
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
    # 1e16 or more, no integral float, and no repeated key (see the module's notes).
    if (_PLUS in written and written.find(b"e+") != -1) or _INTEGRAL.search(written) is not None:
        return UNPROVEN
    if written == raw:
        return value
    # (A text with a line break, indented or ended by one, is no compact writing: JSON
    # strings hold none. Found at memory speed, it spares the search for "e-6".)
    if _NEWLINE not in raw:
        at = written.find(_SIX)
        if at != -1 and _spelled_as(written, raw, at):
            return value
    # Otherwise the colons decide, counted in C (the count of one byte is cheaper than a
    # translation).
    colons = raw.count(b":") if marks is None else marks.count(b":")
    return value if colons == written.count(b":") else UNPROVEN
