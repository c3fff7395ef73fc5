"""Opening a store: the backend its URL names, with its layout made current.

Apart from :mod:`._backend`, which the PostgreSQL backend builds on, so that no module
imports the one that imports it.
"""

from __future__ import annotations

from typing import Final

from ._backend import Backend, SQLiteBackend
from ._url import StoreURL

__all__ = ["connect"]

#: The most of its store's pages a SQLite connection caches, in KiB: 512 of the store's
#: 64 KiB pages, about as many pages as SQLite's default (2,000 KiB) holds of its default
#: 4 KiB ones, where with 64 KiB pages that default holds 31.
SQLITE_CACHE_KIB: Final = 32768


def connect(url: StoreURL, *, create: bool) -> Backend:
    """Open the store ``url`` names and make sure its layout is current.

    Raises:
        StoreError: when it cannot be opened.
        StoreLayoutError: when its layout cannot be used.
        MissingDependencyError: for PostgreSQL without psycopg installed.
    """
    backend: Backend
    if url.dialect == "postgresql":
        # psycopg is imported only for a PostgreSQL store (the [postgres] extra).
        from ._postgres import PostgresBackend  # noqa: PLC0415

        backend = PostgresBackend(url)
    else:
        backend = SQLiteBackend(url, create=create)
    try:
        if backend.dialect == "sqlite":
            # A file's ingest keeps more pages in use than 31 (the last page of each table
            # it appends to, and every page of the name index its runs' names fall on):
            # with SQLite's default cache, pages went out to the log and were read back
            # and written again, 2.6 times the bytes a harness bundle stores and twice a
            # Liger bundle's (docs/store.md). Pages are taken as needed, up to this.
            backend.execute(f"PRAGMA cache_size = -{SQLITE_CACHE_KIB}")
        backend.ensure_layout(create=create)
    except BaseException:
        backend.close()
        raise
    return backend
