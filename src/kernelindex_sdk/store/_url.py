"""Which store a URL names (a SQLite file, SQLite in memory, or PostgreSQL), and how
messages show it: with every password libpq would read from it masked as ``***``.

libpq reads a password from more places than ``user:pass@`` (NOTES.md): the userinfo
ends at the first ``@`` before any ``/``, so it may hold ``?`` and ``#``, which a URL
parser such as urllib's takes for the query or the fragment; ``?password=`` and
``?sslpassword=`` in the query, their names percent-encoded or not; and ``password=...``
in a ``key=value`` connection string, quoted or not. libpq's own parse errors echo the
value they could not read (``invalid percent-encoded token: "pa%zz"``) or the whole URL,
so a message from the driver is masked too (:meth:`StoreURL.masked`).
"""

from __future__ import annotations

import os
import re
import urllib.parse
from collections.abc import Iterator, Mapping
from typing import Final, Literal

import attrs

from .._base.arguments import short_repr
from ..errors import ArgumentError, StoreError

__all__ = ["DEFAULT_DB", "ENV_VAR", "StoreURL", "masked_url", "parse_url"]

#: The store used when neither an argument nor ``KERNELINDEX_DB`` names one: this SQLite
#: file in the current directory.
DEFAULT_DB: Final = "kernelindex.sqlite3"
#: The environment variable that names the store when no URL is given.
ENV_VAR: Final = "KERNELINDEX_DB"
MEMORY: Final = ":memory:"
MASK: Final = "***"
_SQLITE_PREFIX: Final = "sqlite:///"
_POSTGRES_SCHEMES: Final = ("postgresql://", "postgres://")
# The connection parameters whose values are secrets. ``passfile`` names a file, and a
# service file is never in the URL.
_SECRET_KEYS: Final = frozenset({"password", "sslpassword"})
# The keywords that make text a connection string rather than a SQLite file name.
_CONNINFO_KEYS: Final = frozenset({"host", "hostaddr", "port", "dbname", "user", "service"})
# A secret shorter than this is masked only where libpq quotes it, never inside other
# words of a message (a password "a" would otherwise mask every "a").
_MIN_FREE_SECRET: Final = 4


@attrs.frozen
class StoreURL:
    """A parsed store URL.

    Attributes:
        dialect: ``sqlite`` or ``postgresql``.
        target: The SQLite file (``:memory:`` for one in memory), or the PostgreSQL
            connection URL or key=value string as given (left out of the repr: it may
            hold a password).
        shown: The store as messages show it (every password as ``***``).
    """

    dialect: Literal["sqlite", "postgresql"]
    target: str = attrs.field(repr=False)
    shown: str

    def masked(self, message: str) -> str:
        """``message`` (a driver's error, say) with this URL's secrets masked as ``***``.

        The URL itself becomes :attr:`shown`; each password, as written in the URL and
        as decoded, becomes ``***`` wherever libpq quotes it, and anywhere when it is at
        least four characters long.
        """
        if self.dialect != "postgresql":
            return message
        text = message.replace(self.target, self.shown) if self.target else message
        for secret in sorted(_secrets(self.target), key=len, reverse=True):
            text = text.replace(f'"{secret}"', f'"{MASK}"')
            if len(secret) >= _MIN_FREE_SECRET:
                text = text.replace(secret, MASK)
            # libpq ends the userinfo at the first '@': the rest of a password holding
            # one is the start of its host ("failed to resolve host '2pw@db'").
            for rest in secret.split("@")[1:]:
                if rest:
                    text = text.replace(f"{rest}@", f"{MASK}@")
        return text


def _is_uri(url: str) -> bool:
    return url[:13].lower().startswith(_POSTGRES_SCHEMES)


def _userinfo_end(rest: str) -> int | None:
    """Where the userinfo of a URL's text after ``scheme://`` ends (its ``@``), if any.

    libpq's rule first: an ``@`` before any ``/``. libpq takes the first, urllib the
    last; the last is masked up to, so that a password holding an unencoded ``@`` is
    masked whole. A password holding a ``/`` is no userinfo to libpq, but it is still the
    user's password: an ``@`` before the query, after a ``:``, ends one too.
    """
    at = rest.split("/", 1)[0].rfind("@")
    if at >= 0:
        return at
    at = rest.find("@")
    query = rest.find("?")
    if at > 0 and (query < 0 or at < query) and ":" in rest[:at]:
        return at
    return None


def _secret_param(key: str, value: str) -> bool:
    # Names percent-decoded and in any case: libpq decodes both; a dbname may itself
    # be a connection string holding a password.
    name = urllib.parse.unquote(key, errors="replace").strip().casefold()
    return name in _SECRET_KEYS or "password" in urllib.parse.unquote(value).casefold()


def _uri_secrets(url: str) -> Iterator[tuple[int, int]]:
    """The spans of ``url`` that hold a secret (a postgresql:// URL)."""
    start = url.index("://") + 3
    rest = url[start:]
    end = _userinfo_end(rest)
    after = 0
    if end is not None:
        colon = rest.find(":", 0, end)
        if 0 <= colon < end - 1:
            yield start + colon + 1, start + end
        after = end + 1
    query = rest.find("?", after)
    if query < 0:
        return
    pos = start + query + 1
    for param in url[pos:].split("&"):
        key, sep, value = param.partition("=")
        if sep and value and _secret_param(key, value):
            yield pos + len(key) + 1, pos + len(param)
        pos += len(param) + 1


def _conninfo_items(text: str) -> Iterator[tuple[str, str | None, int, int]]:
    """``(keyword, value, start, end)`` of each item of a key=value connection string, the
    span being the value's (a word without ``=``: no value, the word's span).

    As libpq's conninfo_parse reads it: a keyword ends at ``=`` or a blank; blanks may
    stand around ``=``; a value is quoted with ``'...'`` or runs to the next blank, a
    backslash escaping the next character in both. An unclosed quote runs to the end.
    """
    pos, size = 0, len(text)
    while pos < size:
        if text[pos].isspace():
            pos += 1
            continue
        key_start = pos
        while pos < size and text[pos] != "=" and not text[pos].isspace():
            pos += 1
        key_end = pos
        while pos < size and text[pos].isspace():
            pos += 1
        if pos >= size or text[pos] != "=":
            yield text[key_start:key_end], None, key_start, key_end
            continue
        pos += 1
        while pos < size and text[pos].isspace():
            pos += 1
        start = pos
        quoted = pos < size and text[pos] == "'"
        pos += quoted
        while pos < size:
            char = text[pos]
            if char == "\\":
                pos += 2
                continue
            pos += 1
            if quoted and char == "'":
                break
            if not quoted and char.isspace():
                pos -= 1
                break
        pos = min(pos, size)
        yield text[key_start:key_end], text[start:pos], start, pos


def _conninfo_secrets(text: str) -> Iterator[tuple[int, int]]:
    """The spans of a key=value connection string that hold a secret: each password's
    value, and the words without ``=`` after it (``password=se cret`` unquoted is libpq's
    error, but ``cret`` is still half the password)."""
    after_secret = False
    for key, value, start, end in _conninfo_items(text):
        if value is None:
            if after_secret:
                yield start, end
            continue
        after_secret = _secret_param(key, value)
        if after_secret and value:
            yield start, end


def _spans(url: str) -> list[tuple[int, int]]:
    return list(_uri_secrets(url) if _is_uri(url) else _conninfo_secrets(url))


def _secrets(url: str) -> set[str]:
    """Each secret of ``url`` as written and as libpq decodes it."""
    found = set()
    for start, end in _spans(url):
        raw = url[start:end]
        found.add(raw)
        found.add(urllib.parse.unquote(raw, errors="replace"))
        # A connection string's value, as libpq reads it: unquoted, backslashes undone.
        bare = raw[1:-1] if raw[:1] == raw[-1:] == "'" and len(raw) > 1 else raw.lstrip("'")
        found.add(re.sub(r"\\(.)", r"\1", bare, flags=re.DOTALL))
    return {s for s in found if s}


def masked_url(url: str) -> str:
    """``url`` as messages and logs show it: every password libpq would read in it as ``***``.

    Masked: the userinfo password of a ``postgresql://`` or ``postgres://`` URL (which
    may hold ``?``, ``#`` or percent-escapes), the value of a ``password`` or
    ``sslpassword`` query parameter (its name in any case, percent-encoded or not), a
    parameter whose value holds a connection string with a password (``dbname=``), and
    ``password=`` in a key=value connection string, quoted or not. Anything else is
    returned as it is (a SQLite path, ``passfile=``, which names a file).

    Args:
        url: A store URL or connection string.

    Returns:
        The text with each secret replaced by ``***``.

    Raises:
        ArgumentError: when ``url`` is not a str.
    """
    if not isinstance(url, str):
        raise ArgumentError(argument="url", reason=f"expected a str, got {short_repr(url)}")
    out, last = [], 0
    for start, end in _spans(url):
        out += [url[last:start], MASK]
        last = end
    return "".join([*out, url[last:]])


def _is_conninfo(text: str) -> bool:
    """Whether ``text`` is a libpq key=value connection string (``host=db dbname=ki``): it
    opens with ``keyword=value`` and a keyword says where to connect or with what
    password. A word without ``=`` after it is libpq's error to report, not a file name
    (``password=se cret`` would otherwise create a SQLite file named after a password).
    """
    items = list(_conninfo_items(text))
    return (
        bool(items)
        and items[0][1] is not None
        and re.fullmatch(r"[a-z_]+", items[0][0]) is not None
        and any(v is not None and k in _CONNINFO_KEYS | _SECRET_KEYS for k, v, _, _ in items)
    )


def _checked(url: object) -> str:
    """``url`` as a str (a path-like's); no NUL, which no path or URL holds."""
    if isinstance(url, os.PathLike):
        url = os.fspath(url)
    if not isinstance(url, str):
        raise ArgumentError(
            argument="url", reason=f"expected a path or URL (str or Path), got {short_repr(url)}"
        )
    if "\x00" in url:
        raise StoreError(source=masked_url(url.replace("\x00", "\\x00")), reason="holds a NUL")
    return url


def parse_url(
    url: str | os.PathLike[str] | None, environ: Mapping[str, str] | None = None
) -> StoreURL:
    """Resolve a store URL: ``url``, else ``$KERNELINDEX_DB``, else :data:`DEFAULT_DB`.

    Accepted: a file path; ``sqlite:///PATH`` (``sqlite:///kernel.db`` is relative,
    ``sqlite:////abs/kernel.db`` absolute, as in SQLAlchemy); ``sqlite:///:memory:``;
    ``postgresql://...`` or ``postgres://...`` (a libpq connection URL), or a libpq
    key=value connection string (``host=db dbname=records``).

    Raises:
        StoreError: for an empty URL, one of another kind (``mysql://...``), or a
            PostgreSQL one that is not text (a byte that is not UTF-8).
        ArgumentError: for a ``url`` that is neither a str, a path nor None.
    """
    env = os.environ if environ is None else environ
    chosen = _checked(url if url is not None else env.get(ENV_VAR) or DEFAULT_DB)
    if not chosen:
        raise StoreError(source=repr(chosen), reason="expected a store path or URL, got ''")
    shown = masked_url(chosen)
    if _is_uri(chosen) or _is_conninfo(chosen):
        try:
            chosen.encode("utf-8")
        except UnicodeEncodeError:
            # A file name may hold any bytes; a connection string goes to libpq as UTF-8.
            raise StoreError(
                source=shown, reason="expected UTF-8 text, got bytes that are not UTF-8"
            ) from None
        return StoreURL("postgresql", chosen, shown)
    if chosen.lower().startswith(_SQLITE_PREFIX):
        path = chosen[len(_SQLITE_PREFIX) :]
        if not path:
            raise StoreError(source=shown, reason="expected sqlite:///PATH, got no path")
        return StoreURL("sqlite", path, shown)
    scheme, sep, _ = chosen.partition("://")
    if sep and scheme.isidentifier():
        raise StoreError(
            source=shown,
            reason=(
                f"unsupported store URL scheme {scheme + '://'!r};"
                " expected a path, sqlite:///PATH or postgresql://..."
            ),
        )
    return StoreURL("sqlite", chosen, shown)
