"""Record names: the one builder every producer uses (importers, the benchmark harness).

A name is what the schema's ``Name`` allows: ASCII lowercase letters, digits and ``-``,
starting and ending with a letter or digit, at most 253 characters. Text becomes a name
by lowercasing it and turning every run of other characters into one ``-``. Letter case
and the choice of separator (whitespace, ``-``, ``_``, ``.``, ``/``, ``:``) are the only
information this may drop: when it drops more (a symbol, a non-ASCII letter)
or the name is cut to fit, a short hash of the original parts is appended, so that texts
which differ in more than case and separators keep different names.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import unicodedata
from typing import Final

__all__ = [
    "HASH_LENGTH",
    "NAME_MAX_LENGTH",
    "NAME_PATTERN",
    "UNIQUE_LENGTH",
    "is_name",
    "name",
    "slug",
    "unique_suffix",
]

#: The schema's ``Name``: its maxLength and its pattern (with ``\Z``: no final newline).
NAME_MAX_LENGTH: Final = 253
NAME_PATTERN: Final = re.compile(r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?\Z")
#: Hex digits of SHA-256 appended when a name loses information: 1 in 4 billion collide.
HASH_LENGTH: Final = 8
#: Random hex digits that make a measured run's name its own (see :func:`unique_suffix`).
UNIQUE_LENGTH: Final = 8

_NOT_ALNUM: Final = re.compile(r"[^a-z0-9]+")
# Characters whose loss is only a choice of separator or of letter case.
_KEPT: Final = re.compile(r"[A-Za-z0-9 \t\-_./:]*\Z")


def slug(text: str) -> str:
    """Lowercase ASCII words of ``text`` joined by ``-``; may be empty.

    Accented letters lose their accents (``é`` -> ``e``); other characters separate words.

    Args:
        text: Any text.

    Returns:
        A string of ``[a-z0-9]`` runs joined by single ``-``, or ``""``.
    """
    if not text.isascii():
        folded = unicodedata.normalize("NFKD", text)
        text = "".join(c if c.isascii() else " " for c in folded if not unicodedata.combining(c))
    return _NOT_ALNUM.sub("-", text.lower()).strip("-")


def is_name(text: str) -> bool:
    """Whether ``text`` is a valid record name (the schema's ``Name``)."""
    return len(text) <= NAME_MAX_LENGTH and NAME_PATTERN.match(text) is not None


def _short_hash(parts: tuple[str, ...]) -> str:
    # NUL joins the parts so that ("ab", "c") and ("a", "bc") hash apart; surrogatepass
    # gives even text with lone surrogates a hash.
    data = "\0".join(parts).encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()[:HASH_LENGTH]


def name(*parts: str, suffix: str = "", max_length: int = NAME_MAX_LENGTH) -> str:
    """Build a valid record name from ``parts``, each slugged, joined by ``-``.

    A hash of the parts is appended when slugging drops more than letter case and
    separators, when nothing is left, or when the name is cut to ``max_length``; the
    same parts always give the same name.

    Args:
        parts: Texts in the order the name shows them.
        suffix: Appended last, never cut (``"2"`` for a second record of one name, or a
            digest prefix); must itself be a valid name.
        max_length: The longest name to return.

    Returns:
        A string that matches the schema's ``Name`` and is at most ``max_length`` long.

    Raises:
        ValueError: when ``suffix`` is not a valid name or leaves no room in ``max_length``.
    """
    if suffix and not is_name(suffix):
        raise ValueError(f"name suffix must be a valid name, got {suffix!r}")
    body = "-".join(s for s in map(slug, parts) if s)
    lossy = not body or not all(_KEPT.match(part) for part in parts)
    tail = [_short_hash(parts)] if lossy else []
    if len(body) + sum(len(t) + 1 for t in [*tail, suffix] if t) > max_length:
        tail = [_short_hash(parts)]
    room = max_length - sum(len(t) + 1 for t in [*tail, suffix] if t)
    if room < 0:
        raise ValueError(f"no room for a name in {max_length} characters with suffix {suffix!r}")
    body = body[:room].rstrip("-")
    return "-".join(p for p in [body, *tail, suffix] if p)


def unique_suffix() -> str:
    """A name suffix no other run gets: :data:`UNIQUE_LENGTH` random hex digits.

    A measured run is named by what ran and when, to the millisecond; two identical
    sweeps started at once (two processes, two hosts, two CI jobs) would give their runs
    one name. 32 bits from the operating system's random source set them apart without
    any coordination: for two runs of one name and millisecond, 1 in 4 billion collide.
    Nothing else depends on it: no digest covers a name. Names that must be reproducible
    (an import names a CSV row the same way each time) do not take it.
    """
    return secrets.token_hex(UNIQUE_LENGTH // 2)
