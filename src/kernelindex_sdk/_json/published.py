"""The published text of a JSON value (docs/format.md): key order, layout, number grammar.

Defined without Python so that any producer can match it byte for byte: keys in
PostgreSQL ``jsonb`` order, strings escaped as ECMAScript's ``JSON.stringify`` does, and
numbers in ECMAScript's ``Number.prototype.toString`` form (RFC 8785's number form too).
Call :func:`~kernelindex_sdk._json.value.check_json_value` first: this module trusts
its input to be JSON.
"""

from __future__ import annotations

import json
from typing import Any, Final

from .._base.schemas import SAFE_INT
from ..errors import CanonicalizationError

__all__ = ["ecmascript_number", "published_key", "published_text"]

# The stdlib's escaping with ensure_ascii=False is JSON.stringify's: \" \\ \b \f \n \r
# \t, other characters below U+0020 as \u00xx (lowercase hex), everything else as is.
_string: Final = json.encoder.encode_basestring


def published_key(key: str) -> tuple[int, bytes]:
    """Sort key of PostgreSQL ``jsonb`` order: UTF-8 length first, then the UTF-8 bytes."""
    raw = key.encode("utf-8")
    return (len(raw), raw)


def ecmascript_number(value: int | float) -> str:
    """Return ECMAScript's ``Number::toString`` of ``value`` (as JSON.stringify writes it).

    Integral values have no fraction (``26624.0`` -> ``26624``, ``-0.0`` -> ``0``); a
    decimal exponent n (value = 0.d1d2... x 10^n) between -6 and 21 gives positional
    digits (``1e-06`` -> ``0.000001``, ``1e16`` -> ``10000000000000000``); beyond, the
    form is ``d.ddde+x`` / ``de-x`` (``1e21`` -> ``1e+21``). Digits are the shortest that
    round-trip, which Python's ``repr`` also gives. Integers within +-(2^53 - 1) are
    written exactly; larger ones as the nearest double, as any JSON reader reads them.

    Raises:
        CanonicalizationError: for an integer beyond the largest double.
    """
    if isinstance(value, int):
        if -SAFE_INT <= value <= SAFE_INT:
            return str(int(value))
        # JSON numbers are doubles to every other reader: write the double a parser reads.
        try:
            value = float(value)
        except OverflowError:
            raise CanonicalizationError(
                pointer="", reason=f"integer {value!r} is beyond the largest double"
            ) from None
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    mantissa, _, exponent = repr(abs(value)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    point = len(whole) + (int(exponent) if exponent else 0)
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    digits = stripped.rstrip("0")
    k, n = len(digits), point
    if k <= n <= 21:
        text = digits + "0" * (n - k)
    elif 0 < n <= 21:
        text = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        text = "0." + "0" * -n + digits
    else:
        e = n - 1
        exp = f"e{'+' if e >= 0 else '-'}{abs(e)}"
        text = digits + exp if k == 1 else f"{digits[0]}.{digits[1:]}{exp}"
    return sign + text


_LITERALS: Final = {True: "true", False: "false", None: "null"}


def _leaf(node: Any) -> str:
    # Empty containers and scalars.
    if isinstance(node, dict):
        return "{}"
    if isinstance(node, (list, tuple)):
        return "[]"
    if isinstance(node, str):
        return _string(node)
    # `is` rather than ==: 1 == True and 0 == False, but numbers are not literals.
    if node is True or node is False or node is None:
        return _LITERALS[node]
    return ecmascript_number(node)


class _NeedsOwnWriterError(Exception):
    """A number whose Python text differs from ECMAScript's: the stdlib cannot write it."""


def _ordered(node: Any) -> Any:
    # A copy in published key order that the stdlib's C encoder writes exactly as this
    # module specifies: integral doubles become ints (same text), other floats stay only
    # when Python's repr is already ECMAScript's (no exponent, no ".0").
    if isinstance(node, dict):
        return {k: _ordered(node[k]) for k in sorted(node, key=published_key)}
    if isinstance(node, (list, tuple)):
        return [_ordered(child) for child in node]
    if isinstance(node, float):
        if node.is_integer() and -SAFE_INT <= node <= SAFE_INT:
            return int(node)
        text = repr(node)
        if "e" in text or text.endswith(".0") or "inf" in text or "nan" in text:
            raise _NeedsOwnWriterError
    elif isinstance(node, int) and not isinstance(node, bool) and not -SAFE_INT <= node <= SAFE_INT:
        raise _NeedsOwnWriterError
    return node


def published_text(value: Any, *, indent: int | None = 2) -> str:
    """Return the published (``indent=2``) or compact (``indent=None``) text of ``value``.

    The published form ends with a newline; the compact form is one line without one (a
    JSON Lines writer adds it). Values whose numbers Python writes as ECMAScript does go
    through the stdlib's C encoder; the rest through this module's own writer, which
    tests/test_convert.py checks against the same vectors.
    """
    try:
        ordered = _ordered(value)
    except _NeedsOwnWriterError:
        return _own_text(value, indent=indent)
    if indent is None:
        return json.dumps(ordered, ensure_ascii=False, separators=(",", ":"))
    return json.dumps(ordered, ensure_ascii=False, indent=indent) + "\n"


def _own_text(value: Any, *, indent: int | None) -> str:
    parts: list[str] = []
    # Each item is a value to write with its depth, or a literal piece of text.
    stack: list[tuple[Any, int] | str] = [(value, 0)]
    pad = "" if indent is None else " " * indent
    colon = ":" if indent is None else ": "
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            parts.append(item)
            continue
        node, depth = item
        if isinstance(node, dict) and node:
            pieces: list[tuple[Any, int] | str] = []
            inner = "" if indent is None else "\n" + pad * (depth + 1)
            for i, key in enumerate(sorted(node, key=published_key)):
                pieces.append(("," if i else "") + inner + _string(key) + colon)
                pieces.append((node[key], depth + 1))
            pieces.append(("" if indent is None else "\n" + pad * depth) + "}")
            parts.append("{")
            stack.extend(reversed(pieces))
        elif isinstance(node, (list, tuple)) and node:
            pieces = []
            inner = "" if indent is None else "\n" + pad * (depth + 1)
            for i, child in enumerate(node):
                pieces.append(("," if i else "") + inner)
                pieces.append((child, depth + 1))
            pieces.append(("" if indent is None else "\n" + pad * depth) + "]")
            parts.append("[")
            stack.extend(reversed(pieces))
        else:
            parts.append(_leaf(node))
    if indent is not None:
        parts.append("\n")
    return "".join(parts)
