"""Numbers people type: command-line options and launcher variables, read one strict way.

Python's ``int()`` and ``float()`` take more than a person means: ``1_0``, digits of other
scripts (``١٠``), surrounding whitespace, ``nan`` and ``inf``, and ``1e309``, which
overflows to infinity. Here an integer is ASCII digits only, a decimal is ASCII
``[+-]digits[.digits][e[+-]digits]``, and every value is checked against a finite range
before anything is built from it (a shard count of 10^20 never reaches an allocation).
Every numeric option of the ``kernelindex`` command and every launcher variable
(``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``SLURM_*``) is read by these two functions.
"""

from __future__ import annotations

import math
import re
from typing import Final

from ..errors import ArgumentError

__all__ = ["DECIMAL", "MAX_TEXT", "parse_decimal", "parse_integer", "shown"]

#: The longest text read as a number; longer text is refused unread.
MAX_TEXT: Final = 64
_INTEGER: Final = re.compile(r"[0-9]+\Z")
#: A decimal number as people and CSV files write it: ASCII ``[+-]digits[.digits][e[+-]digits]``.
DECIMAL: Final = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")


def shown(text: str) -> str:
    """``text`` as a message shows it: its repr, cut after :data:`MAX_TEXT` characters."""
    return repr(text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + "...")


def parse_integer(text: str, *, what: str, minimum: int = 0, maximum: int) -> int:
    """Read ``text`` as an integer of ASCII digits from ``minimum`` to ``maximum``.

    Args:
        text: The text as given: no sign, no ``_``, no whitespace, digits ``0-9`` only.
        what: What the number is (an option or a variable), for the error.
        minimum: The smallest value accepted (at least 0: there is no sign).
        maximum: The largest value accepted.

    Returns:
        The integer.

    Raises:
        ArgumentError: naming ``what``, for anything else (its ``reason`` is the message
            without the name).
    """
    if len(text) > MAX_TEXT or _INTEGER.match(text) is None:
        raise ArgumentError(
            argument=what, reason=f"expected an integer in ASCII digits 0-9, got {shown(text)}"
        )
    # Length first: int() of a long digit string is never needed to refuse it.
    value = int(text) if len(text.lstrip("0")) <= len(str(maximum)) else maximum + 1
    if not minimum <= value <= maximum:
        raise ArgumentError(
            argument=what,
            reason=f"expected an integer from {minimum} to {maximum}, got {shown(text)}",
        )
    return value


def parse_decimal(text: str, *, what: str, minimum: float, maximum: float | None = None) -> float:
    """Read ``text`` as a finite decimal number from ``minimum`` to ``maximum``.

    Args:
        text: ASCII ``[+-]digits[.digits][e[+-]digits]`` and nothing else (no ``_``,
            whitespace, ``nan``, ``inf``); a value that overflows to infinity
            (``1e309``) is refused.
        what: What the number is, for the error.
        minimum: The smallest value accepted.
        maximum: The largest value accepted; None for any finite value.

    Returns:
        The number.

    Raises:
        ArgumentError: naming ``what``, for anything else.
    """
    if len(text) > MAX_TEXT or DECIMAL.match(text) is None:
        raise ArgumentError(
            argument=what,
            reason=f"expected a number in ASCII digits such as 5 or 0.5, got {shown(text)}",
        )
    value = float(text)
    bound = f">= {minimum:g}" if maximum is None else f"from {minimum:g} to {maximum:g}"
    if not math.isfinite(value):
        raise ArgumentError(
            argument=what,
            reason=f"expected a finite number {bound}, got {shown(text)} (beyond the float range)",
        )
    if value < minimum or (maximum is not None and value > maximum):
        raise ArgumentError(argument=what, reason=f"expected a number {bound}, got {shown(text)}")
    return value
