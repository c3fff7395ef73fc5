"""SQL on a store's tables through a connection of the test's own, as people query a store
(the package's backends take no statement from their callers)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from kernelindex_sdk.store import Store, StoreURL, parse_url


def _url(store: Store | StoreURL | str) -> StoreURL:
    if isinstance(store, Store):
        return store.url
    return store if isinstance(store, StoreURL) else parse_url(store)


def mark(store: Store | StoreURL | str) -> str:
    """The store's placeholder: ``?`` (sqlite3) or ``%s`` (psycopg)."""
    return "?" if _url(store).dialect == "sqlite" else "%s"


def query(
    store: Store | StoreURL | str, statement: str, params: Sequence[Any] = ()
) -> list[tuple[Any, ...]]:
    """Run one statement (placeholders: :func:`mark`) on its own connection, committed;
    its rows (none for a statement without)."""
    url = _url(store)
    if url.dialect == "sqlite":
        db = sqlite3.connect(url.target)
        try:
            with db:
                return db.execute(statement, params).fetchall()
        finally:
            db.close()
    import psycopg

    with psycopg.connect(url.target, autocommit=True) as pg:
        cursor = pg.execute(statement, params or None)
        return cursor.fetchall() if cursor.description is not None else []


def json_text(store: Store | StoreURL | str, column: str) -> str:
    """An expression giving a JSON column as its text in the store's dialect."""
    return column if _url(store).dialect == "sqlite" else f"{column}::text"
