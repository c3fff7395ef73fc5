"""The one-line form of text that messages show: file names, pointers, keys and values.

File names, keys and values come from other people's files; printed raw, a newline
forges a second problem line and a lone surrogate cannot be encoded at all. Every
error's message prints through these, and so do :mod:`kernelindex_sdk._base.display`'s
helpers for Markdown and CSV. This module imports nothing of ours: the errors package
sits below every other module.
"""

from __future__ import annotations

import os
import re
from typing import Final

__all__ = [
    "MAX_TOKEN",
    "cut_pointer",
    "display_path",
    "json_safe",
    "printable",
    "printable_pointer",
]

#: The most characters of one pointer token (a key) that output shows.
MAX_TOKEN: Final = 80
_ESCAPES: Final = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# C0 and C1 controls, DEL, the Unicode line and paragraph separators, the bidirectional
# marks, embeddings, overrides and isolates (they reorder what a terminal shows: a
# "trojan source" line), and lone surrogates.
_UNPRINTABLE: Final = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]"
)
_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _ESCAPES:
        return _ESCAPES[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    keep = limit - 13
    return f"{text[:keep]}...{text[-10:]}"


def printable(text: str, limit: int | None = None) -> str:
    """Escape what would break a line of output (as repr() does), after cutting to ``limit``.

    Args:
        text: Any string, lone surrogates included.
        limit: The most characters kept before escaping; the middle gives way to "...".

    Returns:
        One line holding no control character and encodable as UTF-8.
    """
    if limit is not None:
        text = _cut(text, limit)
    return _UNPRINTABLE.sub(_escape, text)


def cut_pointer(pointer: str) -> str:
    """A JSON pointer with each token (key) cut to :data:`MAX_TOKEN` characters."""
    if len(pointer) <= MAX_TOKEN:
        return pointer
    return "/".join(_cut(token, MAX_TOKEN) for token in pointer.split("/"))


def printable_pointer(pointer: str) -> str:
    """A JSON pointer for output: cut by :func:`cut_pointer`, then escaped."""
    return printable(cut_pointer(pointer))


def display_path(name: str) -> str:
    """A file name as text that any output can carry.

    A name that is not UTF-8 reaches Python with its bytes as lone surrogates
    (``surrogateescape``); those bytes are shown as ``\\xNN``, as a terminal would.

    Args:
        name: A path as ``str``, e.g. from ``os.listdir``.

    Returns:
        The name with every byte that is not UTF-8 written ``\\xNN``; other lone
        surrogates are left for :func:`printable` or :func:`json_safe`.
    """
    if name.isascii():
        # No byte of an ASCII name needs escaping (the common case, once per record).
        return name
    try:
        raw = os.fsencode(name)
    except UnicodeEncodeError:
        return name
    return raw.decode("utf-8", "backslashreplace")


def json_safe(text: str) -> str:
    """``text`` with each lone surrogate written as the six characters of its escape.

    A lone surrogate has no UTF-8 form, and strict JSON parsers refuse its ``\\u``
    escape; the visible text ``\\udcff`` is neither.
    """
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
