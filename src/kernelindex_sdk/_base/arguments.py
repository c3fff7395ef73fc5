"""Checks of what a public function was given, before it is used.

A str is iterable, so ``load_runs("r.jsonl")`` would read the paths "r", ".", "j"...;
a dict is iterable too, and a single record given for a list of them would be read as
its keys. Each public entry point checks its arguments with these and raises
:class:`~kernelindex_sdk.errors.ArgumentError`, never an AttributeError or TypeError
from deep inside.
"""

from __future__ import annotations

import math
import os
import reprlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

import attrs

from ..errors import ArgumentError
from .display import article

__all__ = [
    "at_least",
    "instance",
    "integer",
    "integers",
    "optional_text",
    "path",
    "path_or_fd",
    "paths",
    "records",
    "text",
    "texts",
]

T = TypeVar("T")
# Python's repr, not display.short_repr's JSON spelling: an argument is a Python value
# (None, True), not a record's.
_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = 60


def short_repr(value: Any) -> str:
    """``repr(value)``, cut to about 60 characters."""
    return _REPR.repr(value)


def _kind(value: Any) -> str:
    return f"{article(type(value).__name__)} {short_repr(value)}"


def path(value: Any, argument: str = "path") -> str | Path:
    """``value`` when it is one path (a str or an os.PathLike giving a str)."""
    if isinstance(value, str):
        return value
    if isinstance(value, os.PathLike) and isinstance(os.fspath(value), str):
        return Path(value)
    raise ArgumentError(
        argument=argument, reason=f"expected a path (str or Path), got {_kind(value)}"
    )


def path_or_fd(value: Any, argument: str) -> str | Path | int:
    """``value`` when it is one path or a file descriptor (an int, not a bool)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return path(value, argument)


def paths(value: Any, argument: str = "paths") -> list[str | Path]:
    """``value`` as a list of paths; a single path is refused (a str would be read as
    its letters)."""
    if isinstance(value, (str, bytes, os.PathLike)) or not isinstance(value, Iterable):
        raise ArgumentError(
            argument=argument,
            reason=f"expected a list of paths, got {_kind(value)}",
        )
    return [path(p, f"{argument}[{i}]") for i, p in enumerate(value)]


def records(value: Any, argument: str = "records") -> Iterable[Any]:
    """``value`` when it is an iterable of records (not one record, a str or a mapping).

    A record is an attrs instance or a named tuple (a store's ``RunRow``).
    """
    if (
        isinstance(value, (str, bytes, dict))
        or attrs.has(type(value))
        or (isinstance(value, tuple) and hasattr(type(value), "_fields"))
        or not isinstance(value, Iterable)
    ):
        raise ArgumentError(
            argument=argument,
            reason=f"expected an iterable of records (a list of one for one), got {_kind(value)}",
        )
    return value


def text(value: Any, argument: str) -> str:
    """``value`` when it is a str that UTF-8 can encode.

    A lone surrogate is no text: it is what ``os.fsdecode`` and ``sys.argv`` make of bytes
    that are not UTF-8, and SQLite, PostgreSQL, JSON files and pages would each fail to
    encode it deep inside. A path may hold one (:func:`path`); text may not.
    """
    if not isinstance(value, str):
        raise ArgumentError(argument=argument, reason=f"expected a str, got {_kind(value)}")
    if not _encodable(value):
        raise ArgumentError(
            argument=argument,
            reason=f"expected UTF-8 text, got {short_repr(value)} (a lone surrogate: bytes"
            " that are not UTF-8)",
        )
    return value


def _encodable(value: str) -> bool:
    # ASCII first: one C-speed test for nearly every string.
    if value.isascii():
        return True
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def optional_text(value: Any, argument: str) -> str | None:
    """``value`` when it is a str or None."""
    return None if value is None else text(value, argument)


def _items(value: Any, argument: str, noun: str, item: Callable[[Any, str], T]) -> list[T]:
    """``value`` as a list of what ``item`` accepts; a single value, a str or a mapping
    is refused (a str would be read as its letters, a mapping as its keys)."""
    if isinstance(value, (str, bytes, dict)) or not isinstance(value, Iterable):
        raise ArgumentError(
            argument=argument,
            reason=f"expected a list of {noun} (a list of one for one), got {_kind(value)}",
        )
    return [item(v, f"{argument}[{i}]") for i, v in enumerate(value)]


def texts(value: Any, argument: str) -> list[str]:
    """``value`` as a list of str; a single str is refused (it would be read as its
    letters)."""
    return _items(value, argument, "str", text)


def integers(value: Any, argument: str) -> list[int]:
    """``value`` as a list of int (no bool); a single int or a str is refused."""
    return _items(value, argument, "int", integer)


def integer(value: Any, argument: str) -> int:
    """``value`` when it is an int (a bool is not one here)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ArgumentError(argument=argument, reason=f"expected an int, got {_kind(value)}")
    return value


def instance(value: Any, cls: type[T], argument: str) -> T:
    """``value`` when it is a ``cls``."""
    if not isinstance(value, cls):
        raise ArgumentError(
            argument=argument, reason=f"expected a {cls.__name__}, got {_kind(value)}"
        )
    return value


def at_least(
    value: Any,
    argument: str,
    minimum: float = 0.0,
    *,
    what: str = "a finite number",
    exclusive: bool = False,
) -> float:
    """``value`` when it is a finite int or float (a bool is not one here) of at least
    ``minimum`` (above it, with ``exclusive``): a threshold, a fraction, seconds."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or (value <= minimum if exclusive else value < minimum)
    ):
        bound = f"above {minimum:g}" if exclusive else f">= {minimum:g}"
        raise ArgumentError(
            argument=argument, reason=f"expected {what} {bound}, got {short_repr(value)}"
        )
    return value
