"""Which store a URL names: a SQLite file (the default), SQLite in memory, or PostgreSQL."""

from __future__ import annotations

import os
import urllib.parse
from collections.abc import Mapping
from typing import Final, Literal

import attrs

from .._base.arguments import optional_text
from ..errors import StoreError

__all__ = ["DEFAULT_DB", "ENV_VAR", "StoreURL", "parse_url"]

#: The store used when neither an argument nor ``KERNELINDEX_DB`` names one: this SQLite
#: file in the current directory.
DEFAULT_DB: Final = "kernelindex.sqlite3"
#: The environment variable that names the store when no URL is given.
ENV_VAR: Final = "KERNELINDEX_DB"
MEMORY: Final = ":memory:"
_SQLITE_PREFIX: Final = "sqlite:///"
_POSTGRES_SCHEMES: Final = ("postgresql://", "postgres://")


@attrs.frozen
class StoreURL:
    """A parsed store URL.

    Attributes:
        dialect: ``sqlite`` or ``postgresql``.
        target: The SQLite file (``:memory:`` for one in memory), or the PostgreSQL
            connection URL as given.
        shown: The store as messages show it (a URL's password as ``***``).
    """

    dialect: Literal["sqlite", "postgresql"]
    target: str
    shown: str


def _redacted(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


def parse_url(
    url: str | os.PathLike[str] | None, environ: Mapping[str, str] | None = None
) -> StoreURL:
    """Resolve a store URL: ``url``, else ``$KERNELINDEX_DB``, else :data:`DEFAULT_DB`.

    Accepted: a file path; ``sqlite:///PATH`` (``sqlite:///kernel.db`` is relative,
    ``sqlite:////abs/kernel.db`` absolute, as in SQLAlchemy); ``sqlite:///:memory:``;
    ``postgresql://...`` or ``postgres://...`` (a libpq connection URL).

    Raises:
        StoreError: for an empty URL or one of another kind (``mysql://...``).
        ArgumentError: for a ``url`` that is neither a str, a path nor None.
    """
    url = optional_text(os.fspath(url) if isinstance(url, os.PathLike) else url, "url")
    env = os.environ if environ is None else environ
    chosen = url if url is not None else (env.get(ENV_VAR) or DEFAULT_DB)
    if not chosen:
        raise StoreError(source=repr(chosen), reason="expected a store path or URL, got ''")
    lowered = chosen.lower()
    if lowered.startswith(_POSTGRES_SCHEMES):
        return StoreURL("postgresql", chosen, _redacted(chosen))
    if lowered.startswith(_SQLITE_PREFIX):
        path = chosen[len(_SQLITE_PREFIX) :]
        if not path:
            raise StoreError(source=chosen, reason="expected sqlite:///PATH, got no path")
        return StoreURL("sqlite", path, chosen)
    scheme, sep, _ = chosen.partition("://")
    if sep and scheme.isidentifier():
        raise StoreError(
            source=_redacted(chosen),
            reason=(
                f"unsupported store URL scheme {scheme + '://'!r};"
                " expected a path, sqlite:///PATH or postgresql://..."
            ),
        )
    return StoreURL("sqlite", chosen, chosen)
