"""The PostgreSQL store, through psycopg 3 (the ``[postgres]`` extra): every statement of
it, in psycopg's own placeholders; imported only here.

Rows go in by binary COPY (``_postgres_copy``): many writers may ingest overlapping
files at once, each row stored once, and no two wait for each other in a cycle.

The store is where the connection's search path finds ``kernelindex_layout``, as
PostgreSQL resolves that name (a new store: the first schema of the path); the session's
search path is then that schema alone, so every table is the store's. A connection
opened for reading runs read-only transactions only.
"""

# Statements are built from this module's constants (tables, columns) and placeholders;
# every value goes as a parameter.
# ruff: noqa: S608

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final, Literal

from ..errors import MissingDependencyError, StoreError, StoreLayoutError
from ._backend import (
    MISSING,
    DataRefusedError,
    LayoutProbe,
    RunText,
    damaged,
    fetched,
    json_of,
    spec_of,
)
from ._layout import (
    GROUP_COLUMNS,
    LAYOUT_VERSION,
    OBJECT_COLUMNS,
    OBJECT_TABLES,
    RUN_INSERT_COLUMNS,
    TABLES,
)
from ._postgres_copy import StagedCopy, TextWriter
from ._postgres_layout import CREATE, MIGRATIONS, StepError
from ._query import ROW_COLUMNS
from ._url import StoreURL

try:
    import psycopg
except ImportError as err:  # pragma: no cover (the extra is installed where tests run)
    raise MissingDependencyError(
        feature="a PostgreSQL store", package="psycopg", extra="postgres"
    ) from err

__all__ = ["PostgresBackend"]

# One lock key for creating and migrating the layout: concurrent openers take turns.
_LAYOUT_LOCK: Final = 0x6B69_6C61  # "kila"
_CONNECT_TIMEOUT_S: Final = 30
# PostgreSQL's error for an ON CONFLICT without the unique key it names: a table of the
# store made again without its constraints.
_NO_UNIQUE_KEY: Final = "42P10"
# A store edited into what its layout forbids: a column of the layout gone (42703), or a
# row this writer found new colliding with one the store holds (23505: a text left
# without its run holds the key). The store's statements name only the layout's columns.
_DAMAGE_STATES: Final = {
    "42703": "a table lacks a column of its layout",
    "23505": "a row breaks a key of its layout",
}
# What the server refuses for the data itself, not for its own state: data exceptions
# (class 22) and program limits (54, say an index entry too long).
_DATA_STATE_CLASSES: Final = ("22", "54")
# Rows a streaming read (export) fetches from the server at a time.
_FETCH: Final = 500
# The filters of Store.rows (_query.FILTERS) as conditions on runs ``r``, each with one
# parameter; the objects' columns are looked up by digest, not joined per run.
_CONDITIONS: Final = {
    "operation": "r.workload_digest IN (SELECT digest FROM workloads WHERE operation = %s)",
    "pass_": "r.workload_digest IN (SELECT digest FROM workloads WHERE pass = %s)",
    "provider": "r.implementation_digest IN"
    " (SELECT digest FROM implementations WHERE provider = %s)",
    "hardware": "r.environment_digest IN (SELECT digest FROM environments WHERE hardware = %s)",
    "branch": "r.branch = %s",
    "commit": "r.commit_id = %s",
    "workload_digest": "r.workload_digest = %s",
    "protocol_digest": "r.protocol_digest = %s",
    "status": "r.status = %s",
}
_OBJECT_READ: Final = {
    "workload": "SELECT digest, operation, pass FROM workloads WHERE digest = ANY (%s)",
    "implementation": (
        "SELECT digest, provider, entry_point FROM implementations WHERE digest = ANY (%s)"
    ),
    "environment": "SELECT digest, hardware FROM environments WHERE digest = ANY (%s)",
}
_RUN_TEXTS: Final = (
    "SELECT r.name, t.record_text, t.record_form FROM runs r LEFT JOIN run_texts t ON t.seq = r.seq"
)
# The store's schema: where the search path finds kernelindex_layout, else (no store
# yet) the first schema of the path that exists.
_STORE_SCHEMA: Final = (
    "SELECT coalesce((SELECT n.nspname FROM pg_class c JOIN pg_namespace n"
    " ON n.oid = c.relnamespace WHERE c.oid = to_regclass('kernelindex_layout')),"
    " current_schema())"
)
_TABLES_IN: Final = (
    "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
    " WHERE n.nspname = %s AND c.relkind IN ('r', 'p') AND c.relname = ANY (%s)"
)


def _reason(err: psycopg.Error) -> str:
    text = str(err).strip().splitlines()
    return "postgresql: " + (text[0] if text else type(err).__name__)


def _where(filters: Mapping[str, str], extra: str = "") -> tuple[str, list[Any]]:
    """The WHERE clause of ``filters`` (and ``extra``, a condition with its own marks)."""
    clauses = [_CONDITIONS[name] for name in filters]
    if extra:
        clauses.append(extra)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), list(filters.values())


class PostgresBackend:
    """A PostgreSQL database, opened for reading or for writing.

    Raises:
        StoreError: when the server cannot be reached or refuses the connection.
    """

    dialect: Final[Literal["postgresql"]] = "postgresql"

    def __init__(self, url: StoreURL, *, write: bool) -> None:
        self._url = url
        self._writable = write
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
        self._copier = StagedCopy(self._db, url, self._error, self._execute)
        self._texts = TextWriter(self._db, self._error)
        self._cursors = itertools.count()
        if write:
            self._compress_with_lz4()
        else:
            # Every transaction of this session, and every statement outside one, is
            # read-only: the server refuses any write.
            self._execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")

    @property
    def url(self) -> StoreURL:
        return self._url

    @property
    def writable(self) -> bool:
        return self._writable

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
            raise StoreError(source=self._url.shown, reason=_reason(err)) from err

    def _execute(self, sql: str, params: Any = None) -> list[tuple[Any, ...]]:
        """Run one statement (``%s`` placeholders, or none with ``params`` None)."""
        self._settle()
        try:
            cursor = self._db.execute(sql, params)
            return cursor.fetchall() if cursor.description is not None else []
        except psycopg.Error as err:
            raise self._error(err) from err

    def _error(self, err: psycopg.Error) -> StoreError:
        """The StoreError of a failed statement; a damaged store's own."""
        if err.sqlstate == _NO_UNIQUE_KEY:
            return damaged(self._url, f"a table lacks a unique key of its layout ({_reason(err)})")
        if err.sqlstate in _DAMAGE_STATES:
            return damaged(self._url, f"{_DAMAGE_STATES[err.sqlstate]} ({_reason(err)})")
        if (err.sqlstate or "")[:2] in _DATA_STATE_CLASSES:
            return DataRefusedError(source=self._url.shown, reason=_reason(err))
        return StoreError(source=self._url.shown, reason=_reason(err))

    def _settle(self) -> None:
        """Wait for the record texts being written; raise their failure here.

        Raises:
            StoreError: when they could not be written (the transaction then rolls back).
        """
        self._texts.settle()

    # The layout.
    def probe(self) -> LayoutProbe:
        ((schema,),) = self._execute(_STORE_SCHEMA)
        if schema is None:
            # No schema of the search path exists: nowhere to find or create a store.
            return LayoutProbe(frozenset())
        # Every table of this session is the store's from now on, whatever else the
        # search path holds (a table of another program named runs in an earlier schema).
        self._execute("SELECT set_config('search_path', quote_ident(%s), false)", (schema,))
        found = self._execute(_TABLES_IN, (schema, list(TABLES)))
        tables = frozenset(row[0] for row in found)
        if "kernelindex_layout" not in tables:
            return LayoutProbe(tables)
        try:
            rows = self._execute(
                "SELECT value FROM kernelindex_layout WHERE key = 'layout_version'"
            )
        except StoreError as err:
            raise damaged(self._url, f"kernelindex_layout cannot be read: {err.reason}") from err
        return LayoutProbe(tables, rows[0][0] if rows else MISSING)

    @contextlib.contextmanager
    def layout_transaction(self) -> Iterator[None]:
        with self.transaction():
            self._execute("SELECT pg_advisory_xact_lock(%s)", (_LAYOUT_LOCK,))
            yield

    def create_layout(self) -> None:
        for statement in CREATE:
            self._execute(statement)

    def migrate(self, found: int) -> None:
        steps = [MIGRATIONS.get(version) for version in range(found, LAYOUT_VERSION)]
        if None in steps:
            raise StoreLayoutError(
                source=self._url.shown,
                reason=f"store layout version {found} cannot be migrated",
            )
        try:
            for step in steps:
                step(self._execute)  # type: ignore[misc]
        except StepError as err:
            raise damaged(self._url, str(err)) from err
        self._execute(
            "UPDATE kernelindex_layout SET value = %s WHERE key = 'layout_version'",
            (str(LAYOUT_VERSION),),
        )

    # Transactions.
    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        if not self._writable:
            raise StoreError(source=self._url.shown, reason="opened for reading only")
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
            self._copier.forget()
            raise self._error(err) from err
        except BaseException:
            # A staging table made in a rolled-back transaction is gone with it.
            self._copier.forget()
            raise

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        if self._db.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            yield
            return
        try:
            with self._db.transaction():
                # One snapshot for every statement of the block.
                self._execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                yield
        except psycopg.Error as err:
            raise StoreError(source=self._url.shown, reason=_reason(err)) from err

    # Ingest.
    def _copy_in(
        self,
        table: str,
        key: str,
        columns: Sequence[str],
        rows: Sequence[Sequence[Any]],
        returning: str,
    ) -> list[tuple[Any, ...]]:
        """:meth:`StagedCopy.insert`, once the texts being written are in (one statement
        at a time on the connection)."""
        self._settle()
        return self._copier.insert(table, key, columns, rows, returning)

    def insert_objects(self, kind: str, rows: Sequence[Sequence[Any]]) -> set[str]:
        if not rows:
            return set()
        table, columns = OBJECT_TABLES[kind], OBJECT_COLUMNS[kind]
        return {row[0] for row in self._copy_in(table, "digest", columns, rows, "digest")}

    def object_specs(self, kind: str, digests: Sequence[str]) -> dict[str, Any]:
        if not digests:
            return {}
        table = OBJECT_TABLES[kind]
        rows = self._execute(
            f"SELECT digest, spec FROM {table} WHERE digest = ANY (%s)", (list(digests),)
        )
        return {digest: spec_of(self._url, table, digest, spec) for digest, spec in rows}

    def stored_document(self, kind: str, name: str) -> tuple[str, str, str] | None:
        found = self._execute(
            "SELECT digest, source, record_text FROM documents WHERE kind = %s AND name = %s",
            (kind, name),
        )
        if not found:
            return None
        row = found[0]
        if not all(type(value) is str for value in row):
            raise damaged(self._url, f"documents row of {kind} {name!r} holds {row!r}")
        return row

    def insert_document(self, row: Sequence[Any]) -> bool:
        return bool(
            self._execute(
                "INSERT INTO documents"
                " (kind, name, digest, record_text, record_form, source, ingested_at)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (kind, name) DO NOTHING"
                " RETURNING name",
                tuple(row),
            )
        )

    def insert_groups(self, rows: Sequence[Sequence[Any]]) -> tuple[dict[str, int], set[str]]:
        if not rows:
            return {}, set()
        columns = ("key", *GROUP_COLUMNS)
        made = {row[0] for row in self._copy_in("run_groups", "key", columns, rows, "key")}
        found = self._execute(
            "SELECT key, id FROM run_groups WHERE key = ANY (%s)", ([row[0] for row in rows],)
        )
        return {key: int(gid) for key, gid in found}, made

    def delete_groups(self, ids: Sequence[int]) -> None:
        if ids:
            self._execute("DELETE FROM run_groups WHERE id = ANY (%s)", (list(ids),))

    def insert_runs(self, rows: Sequence[Sequence[Any]]) -> Sequence[int | None]:
        if not rows:
            return []
        # Arrival numbers in the rows' order, though they go in in name order.
        numbers = [
            row[0]
            for row in self._execute(
                "SELECT nextval('kernelindex_arrival') FROM generate_series(1, %s)",
                (len(rows),),
            )
        ]
        numbers.sort()
        numbered = [(*row, number) for row, number in zip(rows, numbers, strict=True)]
        columns = (*RUN_INSERT_COLUMNS, "seq")
        found = dict(self._copy_in("runs", "name", columns, numbered, "name, seq"))
        return [found.get(row[0]) for row in rows]

    def insert_texts(self, rows: Sequence[tuple[int, str | bytes, str]]) -> None:
        """Write the texts while the caller goes on (reading and checking the next batch
        of records): the one call whose result ingest does not wait for
        (:class:`~._postgres_copy.TextWriter`)."""
        self._texts.submit(rows)

    def stored_runs(self, names: Sequence[str]) -> dict[str, tuple[str, str]]:
        # One statement for all the names (an array), not one per few hundred.
        found = {}
        for name, text, source in self._execute(
            "SELECT r.name, t.record_text, r.source FROM runs r"
            " LEFT JOIN run_texts t ON t.seq = r.seq WHERE r.name = ANY (%s)",
            (list(names),),
        ):
            if type(text) is not str:
                raise damaged(self._url, f"run {name!r} has no text in run_texts ({text!r})")
            if type(source) is not str:
                raise damaged(self._url, f"runs.source of run {name!r} is {source!r}")
            found[name] = (text, source)
        return found

    # Reads.
    def run_columns(
        self, filters: Mapping[str, str], names: Sequence[str] | None
    ) -> list[tuple[Any, ...]]:
        extra = "" if names is None else "r.name = ANY (%s)"
        clause, params = _where(filters, extra)
        if names is not None:
            params.append(list(names))
        return self._execute(f"SELECT {', '.join(ROW_COLUMNS)} FROM runs r{clause}", params)

    def groups(self, ids: Sequence[int]) -> dict[int, tuple[Any, ...]]:
        if not ids:
            return {}
        rows = self._execute(
            f"SELECT id, {', '.join(GROUP_COLUMNS)} FROM run_groups WHERE id = ANY (%s)",
            (list(ids),),
        )
        return {
            gid: (*values, json_of(self._url, labels, f"run_groups.labels of group {gid}"))
            for gid, *values, labels in rows
        }

    def object_columns(self, kind: str, digests: Sequence[str]) -> dict[str, tuple[Any, ...]]:
        if not digests:
            return {}
        rows = self._execute(_OBJECT_READ[kind], (list(digests),))
        return {digest: tuple(values) for digest, *values in rows}

    def spec(self, kind: str, digest: str) -> Any | None:
        table = OBJECT_TABLES[kind]
        found = self._execute(f"SELECT spec FROM {table} WHERE digest = %s", (digest,))
        if not found:
            return None
        return spec_of(self._url, table, digest, found[0][0])

    def _stream(self, sql: str, params: Any) -> Iterator[tuple[Any, ...]]:
        """The rows of ``sql`` through a server-side cursor, :data:`_FETCH` at a time as
        they are consumed, in one read-only snapshot."""
        self._settle()
        with self.reading():
            try:
                with self._db.cursor(name=f"kernelindex_read_{next(self._cursors)}") as cursor:
                    cursor.execute(sql, params)
                    yield from fetched(cursor.fetchmany, _FETCH)
            except psycopg.Error as err:
                raise self._error(err) from err

    def document_texts(self) -> Iterator[tuple[str, str]]:
        yield from self._stream("SELECT record_text, record_form FROM documents ORDER BY seq", None)

    def run_texts(
        self, filters: Mapping[str, str], names: Sequence[str] | None
    ) -> Iterator[RunText]:
        extra = "" if names is None else "r.name = ANY (%s)"
        clause, params = _where(filters, extra)
        if names is not None:
            params.append(list(names))
        yield from self._stream(f"{_RUN_TEXTS}{clause} ORDER BY r.seq", params)

    def close(self) -> None:
        try:
            self._texts.close()
        finally:
            self._db.close()
