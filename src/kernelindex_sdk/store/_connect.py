"""Opening a store: the backend its URL names, with its layout made current.

Apart from :mod:`._backend`, which the PostgreSQL backend builds on, so that no module
imports the one that imports it.
"""

from __future__ import annotations

from ._backend import Backend, SQLiteBackend
from ._url import StoreURL

__all__ = ["connect"]


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
        backend.ensure_layout(create=create)
    except BaseException:
        backend.close()
        raise
    return backend
