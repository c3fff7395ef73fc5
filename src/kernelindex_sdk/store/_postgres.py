"""The PostgreSQL store, through psycopg 3 (the ``[postgres]`` extra); imported only here.

Rows go in by COPY into a temporary table and one ``INSERT ... SELECT ... ORDER BY key
ON CONFLICT DO NOTHING RETURNING key`` per table: many writers may ingest overlapping
files at once; each row is stored once, a writer that meets a row another is inserting
waits for that one to commit, and since every writer takes its rows in key order,
table after table, no two wait for each other in a cycle.

Every COPY is binary: numbers are not written out as text for the server to parse back,
and a record's text goes as the UTF-8 bytes it was read as, unescaped. The record texts
(keyed by the arrival numbers this writer took, so no other writer can hold them) are
the one write whose result ingest does not use: they are written on a worker thread while
ingest reads and checks the next batch, and the server stores them meanwhile.
``benchmarks/results/postgres_write_settings.json`` measured the settings.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Final

import attrs

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
            # UTF-8 whatever the URL or the server's default say: a record's text read as
            # UTF-8 bytes goes to the server as it is (insert_texts).
            self._db = psycopg.connect(
                url.target,
                autocommit=True,
                connect_timeout=_CONNECT_TIMEOUT_S,
                client_encoding="UTF8",
            )
        except psycopg.Error as err:
            # libpq's parse errors echo the URL or the value they could not read (a
            # password with a bare %): masked, and the driver's error not chained.
            raise StoreError(source=url.shown, reason=url.masked(_reason(err))) from None
        self._compress_with_lz4()
        # The staging table of each table this connection has written, as made in its
        # session (a rolled-back transaction takes the ones it made with it).
        self._staged: dict[str, _Staging] = {}
        # The record texts being written while the caller goes on (insert_texts).
        self._writer = ThreadPoolExecutor(1, thread_name_prefix="kernelindex-texts")
        self._pending: Future[None] | None = None

    def _compress_with_lz4(self) -> None:
        """Compress the values this session stores out of line with lz4, not pglz.

        A run's record text (a few KiB) is stored compressed once its row passes about
        2 KiB, and pglz's compression was about half the server's work for the texts
        (benchmarks/results/postgres_write_settings.json: 31 us of CPU a Liger record's
        text by text COPY with pglz, 16 with lz4). Readers need nothing: each value names
        its method. A server built without lz4, or older than PostgreSQL 14
        (no such setting), keeps its own default.
        """
        try:
            self._db.execute("SET default_toast_compression = lz4")
        except (psycopg.errors.InvalidParameterValue, psycopg.errors.UndefinedObject):
            pass
        except psycopg.Error as err:
            raise StoreError(source=self.url.shown, reason=_reason(err)) from err

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        self._settle()
        try:
            cursor = self._db.execute(sql.replace("?", "%s"), params or None)
            return cursor.fetchall() if cursor.description is not None else []
        except psycopg.Error as err:
            raise StoreError(source=self.url.shown, reason=_reason(err)) from err

    def _settle(self) -> None:
        """Wait for the record texts being written; raise their failure here.

        Raises:
            StoreError: when they could not be written (the transaction then rolls back).
        """
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.result()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        try:
            with self._db.transaction():
                try:
                    yield
                except BaseException:
                    # Rolled back whatever the texts' fate: theirs is not the error to
                    # show, but the connection is free only once they are done.
                    with contextlib.suppress(Exception):
                        self._settle()
                    raise
                # Committed only once every text is in.
                self._settle()
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

    def _stage(self, table: str, columns: Sequence[str]) -> _Staging:
        staging = self._staged.get(table)
        if staging is not None and staging.columns == tuple(columns):
            return staging
        # The table's column types, by name: its jsonb columns are staged as text (the
        # INSERT parses them, once) so that every column goes by binary COPY as it is.
        found = dict(
            self.execute(
                "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute"
                " WHERE attrelid = to_regclass(?) AND attnum > 0 AND NOT attisdropped",
                (table,),
            )
        )
        types = [found[column] for column in columns]
        staged_types = ["text" if kind == "jsonb" else kind for kind in types]
        name = f"kernelindex_in_{table}"
        # A temporary table of those types, emptied at each commit.
        made = ", ".join(
            f"{column}::text AS {column}" if kind == "jsonb" else column
            for column, kind in zip(columns, types, strict=True)
        )
        self.execute(f"DROP TABLE IF EXISTS pg_temp.{name}")
        self.execute(
            f"CREATE TEMPORARY TABLE {name} ON COMMIT DELETE ROWS AS"  # noqa: S608
            f" SELECT {made} FROM {table} WITH NO DATA"
        )
        selected = ", ".join(
            f"{column}::jsonb" if kind == "jsonb" else column
            for column, kind in zip(columns, types, strict=True)
        )
        staging = _Staging(name, tuple(columns), staged_types, selected)
        self._staged[table] = staging
        return staging

    def _copy_in(
        self,
        table: str,
        key: str,
        columns: Sequence[str],
        rows: Sequence[Sequence[Any]],
        returning: str,
    ) -> list[tuple[Any, ...]]:
        staging = self._stage(table, columns)
        self._settle()
        try:
            with self._db.cursor() as cursor:
                cursor.execute(f"TRUNCATE {staging.name}")
                self._write(cursor, staging.name, columns, staging.types, rows)
                cursor.execute(
                    f"INSERT INTO {table} ({', '.join(columns)})"  # noqa: S608
                    f" SELECT {staging.selected} FROM {staging.name}"
                    f" ORDER BY {key} ON CONFLICT ({key}) DO NOTHING RETURNING {returning}"
                )
                return cursor.fetchall()
        except psycopg.Error as err:
            raise StoreError(source=self.url.shown, reason=_reason(err)) from err

    @staticmethod
    def _write(
        cursor: psycopg.Cursor[Any],
        table: str,
        columns: Sequence[str],
        types: Sequence[str],
        rows: Sequence[Sequence[Any]],
    ) -> None:
        """COPY the rows in binary: no value is written as text for the server to parse
        back (numbers), or escaped (a record's newlines and backslashes)."""
        sql = f"COPY {table} ({', '.join(columns)}) FROM STDIN (FORMAT BINARY)"
        with cursor.copy(sql) as copy:
            copy.set_types(types)
            for row in rows:
                copy.write_row(row)

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
        """Write the texts while the caller goes on (reading and checking the next batch
        of records): the server stores them on its own core, the one call whose result
        ingest does not wait for. The next call on the connection, or the end of the
        transaction, waits for them and raises their failure."""
        self._settle()
        if not rows:
            return
        # A text read as UTF-8 bytes goes as it is: binary COPY sends a text column's
        # bytes, which the server checks as UTF-8 (this session's encoding), with no
        # decoding to str here and encoding back.
        data = [
            (seq, text.encode("utf-8") if isinstance(text, str) else text, form)
            for seq, text, form in rows
        ]
        self._pending = self._writer.submit(self._write_texts, data)

    def _write_texts(self, rows: Sequence[tuple[int, bytes, str]]) -> None:
        """COPY rows no other writer can hold (keyed by numbers this one took)."""
        try:
            with self._db.cursor() as cursor:
                self._write(
                    cursor,
                    "run_texts",
                    ("seq", "record_text", "record_form"),
                    ("int8", "bytea", "text"),
                    rows,
                )
        except psycopg.Error as err:
            raise StoreError(source=self.url.shown, reason=_reason(err)) from err

    def stored_runs(self, names: Sequence[str]) -> dict[str, tuple[str, str]]:
        # One statement for all the names (an array), not one per few hundred.
        rows = self.execute(
            "SELECT r.name, t.record_text, r.source FROM runs r"
            " JOIN run_texts t ON t.seq = r.seq WHERE r.name = ANY (?)",
            (list(names),),
        )
        return {name: (text, source) for name, text, source in rows}

    def fetch(
        self, table: str, key: str, keys: Sequence[str], columns: Sequence[str]
    ) -> dict[str, tuple[Any, ...]]:
        if not keys:
            return {}
        rows = self.execute(
            f"SELECT {', '.join((key, *columns))} FROM {table} WHERE {key} = ANY (?)",  # noqa: S608
            (list(keys),),
        )
        return {row[0]: tuple(row[1:]) for row in rows}

    def close(self) -> None:
        try:
            self._settle()
        finally:
            self._writer.shutdown()
            self._db.close()


@attrs.frozen
class _Staging:
    """A temporary table that a table's rows are copied into before they are inserted."""

    name: str
    columns: tuple[str, ...]
    #: The staged columns' types, as binary COPY sends them.
    types: list[str]
    #: The select list that gives the table's columns from the staged ones.
    selected: str


def _reason(err: psycopg.Error) -> str:
    text = str(err).strip().splitlines()
    return "postgresql: " + (text[0] if text else type(err).__name__)
