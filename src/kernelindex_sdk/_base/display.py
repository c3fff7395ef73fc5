"""Text that is safe to print: one line, no control characters, bounded length.

File names, keys and values come from other people's files; printed raw, a newline
forges a second problem line and a lone surrogate cannot be encoded at all. One helper
per output format, each used on every record-derived string written into it:

- text (a terminal, stderr): :func:`printable`;
- Markdown: :func:`markdown_text`;
- CSV: :func:`csv_cell`;
- JSON: :func:`json_safe` (json.dumps escapes the controls itself).

The one-line form of text, file names and pointers is the errors package's own
(:mod:`kernelindex_sdk.errors._text`), since every error message prints through it and
errors imports nothing of ours; the other formats here build on it.
"""

from __future__ import annotations

import re
import reprlib
from collections.abc import Iterable
from typing import Any, Final

from ..errors._text import (
    MAX_TOKEN,
    cut_pointer,
    display_path,
    json_safe,
    printable,
    printable_pointer,
)

__all__ = [
    "MAX_TOKEN",
    "MAX_VALUE",
    "article",
    "csv_cell",
    "cut_pointer",
    "display_path",
    "json_safe",
    "markdown_text",
    "printable",
    "printable_all",
    "printable_pointer",
    "short_repr",
]

# Characters that start inline Markdown (emphasis, code, links, HTML, entities, tables,
# strikethrough) wherever they stand; a backslash escapes any of them (CommonMark 2.4).
_MARKDOWN_ALWAYS: Final = re.compile(r"[\\`*\[\]<>|~&$]")
# An underscore emphasises only at a word's edge ("vocab_size" stays as it is).
_MARKDOWN_UNDERSCORE: Final = re.compile(r"(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")
# A spreadsheet reads a cell starting with these as a formula (OWASP CSV injection).
_FORMULA_START: Final = ("=", "+", "-", "@", "\t", "\r")


def printable_all(texts: Iterable[str]) -> bool:
    """Whether every string is printable as it is: True only when none holds a character
    :func:`printable` escapes (one C-speed test over all: a table of 50,000 rows is
    checked in one call, and escaped cell by cell only when it may need it)."""
    # str.isprintable is False for every control, separator, bidi control and
    # surrogate (and for a few characters printable() keeps, such as U+00A0: those
    # only send the table the slow way).
    return "".join(texts).isprintable()


def markdown_text(text: str) -> str:
    """Record text for a Markdown line or table cell: shown as written, never as markup.

    Controls are escaped as by :func:`printable` (no record text starts a new line, so
    none can start a heading or a list), then every character that could start inline
    markup gets a backslash, an underscore only at a word's edge.
    """
    text = _MARKDOWN_ALWAYS.sub(r"\\\g<0>", printable(text))
    return _MARKDOWN_UNDERSCORE.sub(r"\\_", text)


def csv_cell(value: object) -> object:
    """A record value for a CSV cell: strings printable and never a live formula.

    A string starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a
    leading ``'`` (the OWASP rule for CSV injection), so a spreadsheet shows it as text;
    numbers, booleans and None are left to the csv module.
    """
    if not isinstance(value, str):
        return value
    text = printable(value)
    return f"'{text}" if text.startswith(_FORMULA_START) else text


_repr = reprlib.Repr()
_repr.maxstring = 80
_repr.maxother = 80
_repr.maxdict = 4
_repr.maxlist = 4
# Containers inside a container show as [...] and {...}: a message names a value, it
# does not print a document.
_repr.maxlevel = 1
#: The longest value a message shows; a longer one is cut and ends with '...'.
MAX_VALUE: Final = 120


def article(noun: str) -> str:
    """``noun`` after its indefinite article: "an ExecutionEnvironment", "a Workload".

    By the first letter, which is right for the names messages show (kinds, model
    classes); a noun said with a leading consonant sound ("unit") is no input for it.
    """
    return ("an " if noun[:1].lower() in "aeiou" else "a ") + noun


def short_repr(value: Any) -> str:
    """A value as messages show it: JSON's null, true and false, otherwise repr() cut
    to a readable length, so a 50 MB value never lands in a message.

    Nested containers show as ``[...]`` and ``{...}``, a container with more items than
    are shown says how many it has, and the whole is at most :data:`MAX_VALUE`
    characters.
    """
    if value is None or isinstance(value, bool):
        return "null" if value is None else str(value).lower()
    text = _repr.repr(value)
    if isinstance(value, (list, tuple, dict)) and len(value) > _repr.maxlist:
        noun = "key" if isinstance(value, dict) else "item"
        text += f" ({len(value)} {noun}s)"
    if len(text) > MAX_VALUE:
        text = text[: MAX_VALUE - 3] + "..."
    return text
