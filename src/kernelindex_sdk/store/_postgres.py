"""The PostgreSQL store, through psycopg 3 (the ``[postgres]`` extra); imported only here.

Rows go in by COPY into a temporary table and one ``INSERT ... SELECT ... ORDER BY key
ON CONFLICT DO NOTHING RETURNING key`` per table: many writers may ingest overlapping
files at once; each row is stored once, a writer that meets a row another is inserting
waits for that one to commit, and since every writer takes its rows in key order,
table after table, no two wait for each other in a cycle.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any, Final

from ..errors import MissingDependencyError, StoreError
from ._backend import Backend
from ._url import StoreURL

try:
    import psycopg
except ImportError as err:  # pragma: no cover (the extra is installed where tests run)
    raise MissingDependencyError(
        feature="a PostgreSQL store", package="psycopg", extra="postgres"
    ) from err

__all__ = ["PostgresBackend"]

# One lock key for creating the layout: concurrent first openers take turns.
_LAYOUT_LOCK: Final = 0x6B69_6C61  # "kila"
_CONNECT_TIMEOUT_S: Final = 30


class PostgresBackend(Backend):
    """A PostgreSQL database; the tables live in the connection's search path."""

    dialect = "postgresql"

    def __init__(self, url: StoreURL) -> None:
        super().__init__(url)
        try:
            self._db = psycopg.connect(
                url.target, autocommit=True, connect_timeout=_CONNECT_TIMEOUT_S
            )
        except psycopg.Error as err:
            raise StoreError(source=url.shown, reason=_reason(err)) from err
        self._staged: set[str] = set()

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        try:
            cursor = self._db.execute(sql.replace("?", "%s"), params or None)
            return cursor.fetchall() if cursor.description is not None else []
        except psycopg.Error as err:
            raise StoreError(source=self.url.shown, reason=_reason(err)) from err

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        try:
            with self._db.transaction():
                yield
        except psycopg.Error as err:
            self._staged.clear()
            raise StoreError(source=self.url.shown, reason=_reason(err)) from err
        except BaseException:
            # A staging table made in a rolled-back transaction is gone with it.
            self._staged.clear()
            raise

    def json_as_text(self, column: str) -> str:
        return f"{column}::text"

    def _lock_layout(self) -> None:
        self.execute(f"SELECT pg_advisory_xact_lock({_LAYOUT_LOCK})")

    def _tables(self) -> set[str]:
        rows = self.execute(
            "SELECT table_name FROM information_schema.tables"
            " WHERE table_schema = ANY (current_schemas(false))"
        )
        return {row[0] for row in rows}

    def _stage(self, table: str, columns: Sequence[str]) -> str:
        staging = f"kernelindex_in_{table}"
        if staging not in self._staged:
            # A temporary table of the same column types, emptied at each commit.
            sql = (
                f"CREATE TEMPORARY TABLE IF NOT EXISTS {staging} ON COMMIT DELETE ROWS AS"  # noqa: S608
                f" SELECT {', '.join(columns)} FROM {table} WITH NO DATA"
            )
            self.execute(sql)
            self._staged.add(staging)
        return staging

    def _copy_in(
        self,
        table: str,
        key: str,
        columns: Sequence[str],
        rows: Sequence[Sequence[Any]],
        returning: str,
    ) -> list[tuple[Any, ...]]:
        names = ", ".join(columns)
        staging = self._stage(table, columns)
        try:
            with self._db.cursor() as cursor:
                cursor.execute(f"DELETE FROM {staging}")  # noqa: S608
                with cursor.copy(f"COPY {staging} ({names}) FROM STDIN") as copy:
                    for row in rows:
                        copy.write_row(row)
                cursor.execute(
                    f"INSERT INTO {table} ({names}) SELECT {names} FROM {staging}"  # noqa: S608
                    f" ORDER BY {key} ON CONFLICT ({key}) DO NOTHING RETURNING {returning}"
                )
                return cursor.fetchall()
        except psycopg.Error as err:
            raise StoreError(source=self.url.shown, reason=_reason(err)) from err

    def insert_new(
        self,
        table: str,
        key: str,
        columns: Sequence[str],
        rows: Sequence[Sequence[Any]],
    ) -> set[str]:
        if not rows:
            return set()
        return {row[0] for row in self._copy_in(table, key, columns, rows, key)}

    def insert_runs(
        self, columns: Sequence[str], rows: Sequence[Sequence[Any]]
    ) -> Sequence[int | None]:
        if not rows:
            return []
        # Arrival numbers in the rows' order, though they go in in name order.
        numbers = [
            row[0]
            for row in self.execute(
                "SELECT nextval('kernelindex_arrival') FROM generate_series(1, ?)",
                (len(rows),),
            )
        ]
        numbers.sort()
        numbered = [(*row, number) for row, number in zip(rows, numbers, strict=True)]
        found = dict(self._copy_in("runs", "name", (*columns, "seq"), numbered, "name, seq"))
        return [found.get(row[0]) for row in rows]

    def insert_texts(self, rows: Sequence[tuple[int, str | bytes, str]]) -> None:
        # COPY would write bytes as bytea: the text goes as str.
        self._copy_rows(
            "run_texts",
            ("seq", "record_text", "record_form"),
            [
                (seq, text.decode("utf-8") if isinstance(text, bytes) else text, form)
                for seq, text, form in rows
            ],
        )

    def _copy_rows(self, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        """COPY rows no other writer can hold (keyed by numbers this one took)."""
        if not rows:
            return
        try:
            with (
                self._db.cursor() as cursor,
                cursor.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy,
            ):
                for row in rows:
                    copy.write_row(row)
        except psycopg.Error as err:
            raise StoreError(source=self.url.shown, reason=_reason(err)) from err

    def close(self) -> None:
        self._db.close()


def _reason(err: psycopg.Error) -> str:
    text = str(err).strip().splitlines()
    return "postgresql: " + (text[0] if text else type(err).__name__)
