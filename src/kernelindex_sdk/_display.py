"""Text that is safe to print: one line, no control characters, bounded length.

File names, keys and values come from other people's files; printed raw, a newline
forges a second problem line and a lone surrogate cannot be encoded at all.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["MAX_TOKEN", "cut_pointer", "printable", "printable_pointer"]

#: The most characters of one pointer token (a key) that output shows.
MAX_TOKEN: Final = 80
_ESCAPES: Final = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# C0 and C1 controls, DEL, the Unicode line separators, and lone surrogates.
_UNPRINTABLE: Final = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


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
