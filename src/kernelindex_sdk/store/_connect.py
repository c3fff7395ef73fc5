"""Opening a store: the backend its URL names, with its layout checked.

Apart from the backends, so that no backend module imports another.
"""

from __future__ import annotations

from ._backend import Backend, open_layout
from ._sqlite import SQLITE_CACHE_KIB, SQLiteBackend
from ._url import StoreURL

__all__ = ["SQLITE_CACHE_KIB", "connect"]


def connect(url: StoreURL, *, create: bool, write: bool = True) -> tuple[Backend, int]:
    """Open the store ``url`` names: for writing (its layout created or migrated as
    needed) or for reading only (never changed).

    Returns:
        The backend, and the layout version the store had (0: created now).

    Raises:
        StoreError: when it cannot be opened.
        StoreLayoutError: when its layout cannot be used (for reading: also when it
            needs a migration).
        MissingDependencyError: for PostgreSQL without psycopg installed.
    """
    backend: Backend
    if url.dialect == "postgresql":
        # psycopg is imported only for a PostgreSQL store (the [postgres] extra).
        from ._postgres import PostgresBackend  # noqa: PLC0415

        backend = PostgresBackend(url, write=write)
    else:
        backend = SQLiteBackend(url, write=write, create=create)
    try:
        found = open_layout(backend, create=create)
    except BaseException:
        backend.close()
        raise
    return backend, found
