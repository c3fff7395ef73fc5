"""Values from foreign text, read strictly: a number is a CSV number, a parameter keeps its type.

Python's ``int()`` and ``float()`` accept more than a CSV number: ``1_024``, digits of
other scripts (``١٠٢٤``), ``nan``, ``infinity`` and Unicode spaces. Here a number is
ASCII ``[+-]digits[.digits][e[+-]digits]`` and nothing else. A workload parameter is a
string, a boolean or a number a digest can carry exactly; any other value (null, an array,
an object, NaN, an integer beyond 2^53 - 1) is refused with a reason rather than turned
into text that could collide with a real string.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Final

from .._base.display import short_repr
from .._base.numbers import DECIMAL
from .._base.schemas import SAFE_INT

__all__ = [
    "PARAMETER_NAME",
    "SAFE_INT",
    "check_parameter",
    "parse_config",
    "parse_float",
    "parse_number",
]

#: The schema's ScalarMap key pattern (``\Z``: no final newline).
PARAMETER_NAME: Final = re.compile(r"[A-Za-z0-9_][-A-Za-z0-9_./]*\Z")
_MAX_PARAMETER_NAME: Final = 253
_MAX_STRING: Final = 4096
# The one grammar of a written number (command-line options use it too).
_NUMBER: Final = DECIMAL
_INTEGER: Final = re.compile(r"[+-]?[0-9]+\Z")
# More digits than any safe integer has: refuse before int() does the work.
_MAX_DIGITS: Final = 16


def _loose(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _check_grammar(text: str, what: str) -> bool:
    """Whether ``text`` is a CSV number; False for no number at all; raises for a loose one."""
    if _NUMBER.match(text):
        return True
    if _loose(text):
        raise ValueError(
            f"{what} is not a CSV number: {short_repr(text)} (expected ASCII digits,"
            " optionally with a sign, '.', and an exponent)"
        )
    return False


def parse_float(text: str, what: str) -> float | None:
    """Read ``text`` as a CSV number into a finite float (a measured value).

    Returns:
        The number, or None when ``text`` is no number at all (not even a loose one).

    Raises:
        ValueError: for a loose number Python would read, or one beyond the float range.
    """
    if not _check_grammar(text, what):
        return None
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{what} {short_repr(text)} is beyond the float range")
    return value


def parse_number(text: str, what: str) -> int | float | None:
    """Read ``text`` as a CSV number: an int when integral and safe, else a float.

    Args:
        text: The field, without surrounding blanks.
        what: The field's name, for messages.

    Returns:
        The number, or None when ``text`` is no number at all (not even a loose one).

    Raises:
        ValueError: for a loose number Python would read (``1_024``, ``١٠٢٤``, ``nan``), a
            number beyond the float range, or an integer beyond 2^53 - 1.
    """
    if not _check_grammar(text, what):
        return None
    if _INTEGER.match(text):
        digits = text.lstrip("+-").lstrip("0")
        if len(digits) > _MAX_DIGITS or abs(int(text)) > SAFE_INT:
            raise ValueError(f"{what} {short_repr(text)} is beyond 2^53 - 1 (not exact in JSON)")
        return int(text)
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{what} {short_repr(text)} is beyond the float range")
    if value.is_integer():
        if abs(value) > SAFE_INT:
            raise ValueError(f"{what} {short_repr(text)} is beyond 2^53 - 1 (not exact in JSON)")
        # 1024.0 and 1024 are one JSON number (RFC 8785 writes both as 1024).
        return int(value)
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"key {short_repr(key)} appears twice")
        result[key] = value
    return result


def _int(text: str) -> int:
    if len(text.lstrip("-").lstrip("0")) > _MAX_DIGITS:
        raise ValueError(f"integer {short_repr(text)} is beyond 2^53 - 1 (not exact in JSON)")
    return int(text)


def parse_config(text: str, what: str) -> dict[str, Any]:
    """Parse a JSON object of configuration entries, strictly.

    Args:
        text: JSON text; empty text is an empty object.
        what: The field's name, for messages.

    Returns:
        The object, with no key repeated and no NaN or Infinity.

    Raises:
        ValueError: for text that is not such a JSON object, or nested too deeply.
    """
    if not text:
        return {}
    try:
        value = json.loads(
            text,
            object_pairs_hook=_unique_keys,
            parse_constant=_no_constant,
            parse_int=_int,
        )
    except RecursionError:
        raise ValueError(f"{what} is nested too deeply") from None
    except json.JSONDecodeError as err:
        raise ValueError(
            f"{what} is not JSON: {err.msg} at line {err.lineno} column {err.colno}"
        ) from None
    except ValueError as err:
        raise ValueError(f"{what}: {err}") from None
    if not isinstance(value, dict):
        raise ValueError(f"{what} must be a JSON object, got {short_repr(value)}")  # noqa: TRY004
    return value


def check_parameter(key: str, value: Any, where: str) -> str | bool | int | float:
    """Return ``value`` as a workload parameter, unchanged in value and JSON type.

    Args:
        key: The parameter's name.
        value: A JSON value.
        where: Where the value came from, for messages.

    Returns:
        The value; an integral float becomes the equal int (one JSON number).

    Raises:
        ValueError: for a name the schema refuses, null, an array, an object, a
            non-finite number, an integer beyond 2^53 - 1, or a string over 4096 characters.
    """
    if len(key) > _MAX_PARAMETER_NAME or not PARAMETER_NAME.match(key):
        raise ValueError(
            f"{where}: parameter name {short_repr(key)} is not letters, digits and '_-./'"
            " starting with a letter, digit or '_' (at most 253)"
        )
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        if abs(value) > SAFE_INT:
            raise ValueError(
                f"{where}: {short_repr(key)} is {value}, beyond 2^53 - 1 (not exact in JSON)"
            )
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{where}: {short_repr(key)} is {value!r}, which JSON cannot carry")
        if value.is_integer():
            if abs(value) > SAFE_INT:
                raise ValueError(f"{where}: {short_repr(key)} is {value!r}, beyond 2^53 - 1")
            return int(value)
        return value
    if isinstance(value, str):
        if len(value) > _MAX_STRING:
            raise ValueError(
                f"{where}: {short_repr(key)} is a string over {_MAX_STRING} characters"
            )
        return value
    kind = {type(None): "null", list: "an array", dict: "an object"}.get(type(value), "a value")
    raise ValueError(
        f"{where}: {short_repr(key)} is {kind}; a workload parameter is a string, number or boolean"
    )
