"""PostgreSQL's writes of many rows: binary COPY, through a staging table or straight in.

Rows of a table go by COPY into a temporary table of the session, then one ``INSERT ...
SELECT ... ORDER BY key ON CONFLICT DO NOTHING RETURNING``: many writers may ingest
overlapping files at once; each row is stored once, a writer that meets a row another
is inserting waits for that one to commit, and since every writer takes its rows in key
order, table after table, no two wait for each other in a cycle.

Every COPY is binary: numbers are not written out as text for the server to parse back,
and a record's text goes as the UTF-8 bytes it was read as, unescaped. The record texts
(keyed by the arrival numbers this writer took, so no other writer can hold them) are the
one write whose result ingest does not use: they are written on a worker thread while
ingest reads and checks the next batch, and the server stores them meanwhile.
``benchmarks/postgres_write_settings.py`` measures the settings.
"""

# Statements are built from the layout's constants (tables, columns) only.
# ruff: noqa: S608

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Final

import attrs
import psycopg

from ..errors import StoreError
from ._backend import damaged
from ._url import StoreURL

__all__ = ["StagedCopy", "TextWriter"]

# The layout's type of each column written through a staging table (any other: text).
_TYPE_OF: Final = {
    "seq": "bigint",
    "median_ns": "bigint",
    "p20_ns": "bigint",
    "p80_ns": "bigint",
    "group_id": "bigint",
    "samples": "bigint",
    "labels": "jsonb",
    "annotations": "jsonb",
    "spec": "jsonb",
}

#: How a failed statement becomes the error to raise (the backend's own mapping).
ErrorOf = Callable[[psycopg.Error], StoreError]
#: The backend's statement runner: a statement and its parameters, its rows.
Execute = Callable[[str, Any], list[tuple[Any, ...]]]


def copy_rows(
    cursor: psycopg.Cursor[Any],
    table: str,
    columns: Sequence[str],
    types: Sequence[str],
    rows: Sequence[Sequence[Any]],
) -> None:
    """COPY the rows in binary: no value is written as text for the server to parse back
    (numbers), or escaped (a record's newlines and backslashes)."""
    sql = f"COPY {table} ({', '.join(columns)}) FROM STDIN (FORMAT BINARY)"
    with cursor.copy(sql) as copy:
        copy.set_types(types)
        for row in rows:
            copy.write_row(row)


@attrs.frozen
class _Staging:
    """A temporary table that a table's rows are copied into before they are inserted."""

    name: str
    columns: tuple[str, ...]
    #: The staged columns' types, as binary COPY sends them.
    types: list[str]
    #: The select list that gives the table's columns from the staged ones.
    selected: str


class StagedCopy:
    """Rows into a table of the store through a staging table of the session."""

    def __init__(
        self, db: psycopg.Connection[Any], url: StoreURL, error: ErrorOf, execute: Execute
    ) -> None:
        self._db = db
        self._url = url
        self._error = error
        self._execute = execute
        # The staging table of each table this connection has written, as made in its
        # session (a rolled-back transaction takes the ones it made with it).
        self._staged: dict[str, _Staging] = {}

    def forget(self) -> None:
        """Forget the staging tables: a rolled-back transaction took them."""
        self._staged.clear()

    def _stage(self, table: str, columns: Sequence[str]) -> _Staging:
        staging = self._staged.get(table)
        if staging is not None and staging.columns == tuple(columns):
            return staging
        # The table's column types, by name: its jsonb columns are staged as text (the
        # INSERT parses them, once) so that every column goes by binary COPY as it is.
        found: dict[str, str] = dict(
            self._execute(
                "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute"
                " WHERE attrelid = to_regclass(%s) AND attnum > 0 AND NOT attisdropped",
                (table,),
            )
        )
        for column in columns:
            # A column altered by hand to another type (the layout's is its contract):
            # its values would not go in as they are.
            expected = _TYPE_OF.get(column, "text")
            if found.get(column) != expected:
                raise damaged(
                    self._url,
                    f"{table}.{column} is {found.get(column) or 'missing'},"
                    f" the layout's is {expected}",
                )
        types = [found[column] for column in columns]
        staged_types = ["text" if kind == "jsonb" else kind for kind in types]
        name = f"kernelindex_in_{table}"
        # A temporary table of those types, emptied at each commit.
        made = ", ".join(
            f"{column}::text AS {column}" if kind == "jsonb" else column
            for column, kind in zip(columns, types, strict=True)
        )
        self._execute(f"DROP TABLE IF EXISTS pg_temp.{name}", None)
        self._execute(
            f"CREATE TEMPORARY TABLE {name} ON COMMIT DELETE ROWS AS"
            f" SELECT {made} FROM {table} WITH NO DATA",
            None,
        )
        selected = ", ".join(
            f"{column}::jsonb" if kind == "jsonb" else column
            for column, kind in zip(columns, types, strict=True)
        )
        staging = _Staging(name, tuple(columns), staged_types, selected)
        self._staged[table] = staging
        return staging

    def insert(
        self,
        table: str,
        key: str,
        columns: Sequence[str],
        rows: Sequence[Sequence[Any]],
        returning: str,
    ) -> list[tuple[Any, ...]]:
        """Insert the rows whose ``key`` the table lacks, in key order; ``returning`` of
        each row inserted (one another writer inserted first is not among them).

        Raises:
            StoreError: when the server refuses them.
            StoreDamagedError: for a column of another type than the layout's.
        """
        staging = self._stage(table, columns)
        try:
            with self._db.cursor() as cursor:
                cursor.execute(f"TRUNCATE {staging.name}")
                copy_rows(cursor, staging.name, columns, staging.types, rows)
                cursor.execute(
                    f"INSERT INTO {table} ({', '.join(columns)})"
                    f" SELECT {staging.selected} FROM {staging.name}"
                    f" ORDER BY {key} ON CONFLICT ({key}) DO NOTHING RETURNING {returning}"
                )
                return cursor.fetchall()
        except psycopg.Error as err:
            raise self._error(err) from err


class TextWriter:
    """Runs' record texts written by binary COPY on a worker thread while the caller goes
    on: the next statement on the connection, or the end of the transaction, waits for
    them (:meth:`settle`) and raises their failure, so the transaction holds them or
    nothing."""

    def __init__(self, db: psycopg.Connection[Any], error: ErrorOf) -> None:
        self._db = db
        self._error = error
        self._worker = ThreadPoolExecutor(1, thread_name_prefix="kernelindex-texts")
        self._pending: Future[None] | None = None

    def submit(self, rows: Sequence[tuple[int, str | bytes, str]]) -> None:
        """Start writing ``(seq, text, form)`` rows, once the last ones are in."""
        self.settle()
        if not rows:
            return
        # A text read as UTF-8 bytes goes as it is: binary COPY sends a text column's
        # bytes, which the server checks as UTF-8 (the session's encoding), with no
        # decoding to str here and encoding back.
        data = [
            (seq, text.encode("utf-8") if isinstance(text, str) else text, form)
            for seq, text, form in rows
        ]
        self._pending = self._worker.submit(self._write, data)

    def settle(self) -> None:
        """Wait for the texts being written; raise their failure here.

        Raises:
            StoreError: when they could not be written (the transaction then rolls back).
        """
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.result()

    def _write(self, rows: Sequence[tuple[int, bytes, str]]) -> None:
        """COPY rows no other writer can hold (keyed by numbers this one took)."""
        try:
            with self._db.cursor() as cursor:
                copy_rows(
                    cursor,
                    "run_texts",
                    ("seq", "record_text", "record_form"),
                    ("int8", "bytea", "text"),
                    rows,
                )
        except psycopg.Error as err:
            raise self._error(err) from err

    def close(self) -> None:
        """Wait for the last texts, then stop the worker."""
        try:
            self.settle()
        finally:
            self._worker.shutdown()
