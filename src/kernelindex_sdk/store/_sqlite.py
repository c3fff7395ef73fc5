"""The SQLite store, through the standard library's sqlite3: every statement of it.

A connection opened for reading is read-only (``mode=ro``): it never takes the write
lock, never changes the file (a reader of a file that is no store leaves its bytes and
its journal mode as they were), and in a store's write-ahead log it never waits for a
writer. A writer sets the store's settings (docs/performance.md, "SQLite settings") only once
the file is a store.
"""

# Statements are built from this module's constants (tables, columns) and placeholders;
# every value goes as a parameter.
# ruff: noqa: S608

from __future__ import annotations

import contextlib
import os
import sqlite3
import urllib.parse
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final, Literal

from ..errors import StoreError, StoreLayoutError
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
from ._query import ROW_COLUMNS
from ._sqlite_layout import CREATE, MIGRATIONS, StepError
from ._url import MEMORY, StoreURL

__all__ = ["SQLITE_CACHE_KIB", "SQLiteBackend"]

# How long a SQLite writer waits for another one to finish before giving up.
_BUSY_MS: Final = 60_000
# SQLite limits a statement's parameters (999 in builds before 3.32): look rows up in
# chunks of this many.
_CHUNK: Final = 500
# The page size of a new SQLite store: a run's record text is a few KiB, and with
# SQLite's default 4 KiB pages an insert cost 2.5 times as much CPU (docs/performance.md).
_PAGE_BYTES: Final = 65536
#: The most of its store's pages a SQLite connection caches, in KiB: 512 of the store's
#: 64 KiB pages, about as many pages as SQLite's default (2,000 KiB) holds of its default
#: 4 KiB ones, where with 64 KiB pages that default holds 31. A file's ingest keeps more
#: pages in use than 31 (the last page of each table it appends to, and every page of
#: the name index its runs' names fall on): with the default, pages went out to the log
#: and were read back and written again (docs/performance.md).
SQLITE_CACHE_KIB: Final = 32768
# Rows read from a cursor at a time where a read streams (export).
_FETCH: Final = 500
# SQLite's refusal of an ON CONFLICT without the unique key it names (it has no error
# code of its own): a table of the store made again without its constraints.
_NO_UNIQUE_KEY: Final = "ON CONFLICT clause does not match any PRIMARY KEY or UNIQUE"
# SQLite's words for a store edited into what its layout forbids, and what each means.
# The store's statements name only the layout's columns and insert only rows it found
# new, so these are the store's damage, not the data's or the user's.
_DAMAGE_SIGNS: Final = (
    ("Could not decode to UTF-8", "a text column holds bytes that are not UTF-8"),
    ("no such column", "a table lacks a column of its layout"),
    ("has no column named", "a table lacks a column of its layout"),
)

# The filters of Store.rows (_query.FILTERS) as conditions on runs ``r``. The objects'
# columns are looked up by digest, not joined per run: a join costs each of 10,000 runs
# three lookups, a third of reading them.
_CONDITIONS: Final = {
    "operation": "r.workload_digest IN (SELECT digest FROM workloads WHERE operation = ?)",
    "pass_": "r.workload_digest IN (SELECT digest FROM workloads WHERE pass = ?)",
    "provider": "r.implementation_digest IN"
    " (SELECT digest FROM implementations WHERE provider = ?)",
    "hardware": "r.environment_digest IN (SELECT digest FROM environments WHERE hardware = ?)",
    "branch": "r.branch = ?",
    "commit": "r.commit_id = ?",
    "workload_digest": "r.workload_digest = ?",
    "protocol_digest": "r.protocol_digest = ?",
    "status": "r.status = ?",
}
_INSERT_OBJECT: Final = {
    kind: f"INSERT INTO {OBJECT_TABLES[kind]} ({', '.join(columns)})"
    f" VALUES ({', '.join('?' * len(columns))}) ON CONFLICT (digest) DO NOTHING"
    for kind, columns in OBJECT_COLUMNS.items()
}
_INSERT_GROUP: Final = (
    f"INSERT INTO run_groups (key, {', '.join(GROUP_COLUMNS)}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (key) DO NOTHING"
)
_INSERT_RUN: Final = (
    f"INSERT INTO runs ({', '.join(RUN_INSERT_COLUMNS)})"
    f" VALUES ({', '.join('?' * len(RUN_INSERT_COLUMNS))}) ON CONFLICT (name) DO NOTHING"
)
# A text read as UTF-8 bytes goes in as they are, cast to TEXT (SQLite reads the bytes
# as its UTF-8): decoding it to str, which sqlite3 encodes back to UTF-8, took a seventh
# of a Liger run's ingest.
_INSERT_TEXT: Final = (
    "INSERT INTO run_texts (seq, record_text, record_form) VALUES (?, CAST(? AS TEXT), ?)"
)
_OBJECT_READ: Final = {
    "workload": "SELECT digest, operation, pass FROM workloads WHERE digest IN ",
    "implementation": "SELECT digest, provider, entry_point FROM implementations WHERE digest IN ",
    "environment": "SELECT digest, hardware FROM environments WHERE digest IN ",
}


def _marks(count: int) -> str:
    return f"({', '.join('?' * count)})"


def _chunks(values: Sequence[Any]) -> Iterator[Sequence[Any]]:
    for start in range(0, len(values), _CHUNK):
        yield values[start : start + _CHUNK]


def _reason(err: sqlite3.Error) -> str:
    return f"sqlite: {err}"


def _where(filters: Mapping[str, str], extra: str = "") -> tuple[str, list[Any]]:
    """The WHERE clause of ``filters`` (and ``extra``, a condition with its own marks)."""
    clauses = [_CONDITIONS[name] for name in filters]
    if extra:
        clauses.append(extra)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), list(filters.values())


def _file_uri(path: str, mode: str) -> str:
    """A ``file:`` URI for ``path`` opened in ``mode``.

    The path's own bytes are quoted, so a name that is not UTF-8 (held as surrogate
    escapes) still names its file (tests/_cli/test_cli_arguments.py pins it).
    """
    return "file:" + urllib.parse.quote(os.fsencode(path)) + "?mode=" + mode


class SQLiteBackend:
    """A SQLite file (or ``:memory:``), opened for reading or for writing.

    Raises:
        StoreLayoutError: for a file that does not exist where one must.
        StoreError: when it cannot be opened.
    """

    dialect: Final[Literal["sqlite"]] = "sqlite"

    def __init__(self, url: StoreURL, *, write: bool, create: bool) -> None:
        self._url = url
        self._writable = write
        self._created = False
        path = url.target
        # Whether this reader finds the store's log files beside it (see close).
        # SQLite keeps the log beside the file a symlink names, not beside the link.
        self._real_path = path if path == MEMORY else os.path.realpath(path)
        self._log_was_there = os.path.exists(self._real_path + "-wal")
        if path != MEMORY and not (write and create) and not os.path.exists(path):
            raise StoreLayoutError(source=url.shown, reason="no kernelindex store here")
        try:
            if write or path == MEMORY:
                self._db = sqlite3.connect(
                    path, isolation_level=None, timeout=_BUSY_MS / 1000, check_same_thread=False
                )
            else:
                # Read-only: the file is opened so, and nothing can write it.
                target = _file_uri(path, "ro")
                self._db = sqlite3.connect(
                    target,
                    uri=True,
                    isolation_level=None,
                    timeout=_BUSY_MS / 1000,
                    check_same_thread=False,
                )
            self._db.execute(f"PRAGMA busy_timeout = {_BUSY_MS}")
            self._db.execute(f"PRAGMA cache_size = -{SQLITE_CACHE_KIB}")
            if write and path != MEMORY:
                # A new store's pages (an existing file keeps its own). FULL syncs the
                # log at each commit: a file that ingest reported stored stays stored
                # through a power cut, for one sync per file.
                self._db.execute(f"PRAGMA page_size = {_PAGE_BYTES}")
                self._db.execute("PRAGMA synchronous = FULL")
        except sqlite3.Error as err:
            raise StoreError(source=url.shown, reason=_reason(err)) from err

    @property
    def url(self) -> StoreURL:
        return self._url

    @property
    def writable(self) -> bool:
        return self._writable

    def _error(self, err: sqlite3.Error) -> StoreError:
        """The StoreError of a failed statement; a damaged store's own."""
        if _NO_UNIQUE_KEY in str(err):
            return damaged(self._url, f"a table lacks a unique key of its layout ({_reason(err)})")
        for sign, meaning in _DAMAGE_SIGNS:
            if sign in str(err):
                # Not the undecodable text itself: it may hold a line break.
                said = _reason(err).split(" with text ", 1)[0]
                return damaged(self._url, f"{meaning} ({said})")
        if isinstance(err, sqlite3.IntegrityError):
            # A row this writer found new collides with one the store holds: a row left
            # without its own (a text whose run was deleted) holds the key.
            return damaged(self._url, f"a row breaks a key of its layout ({_reason(err)})")
        if isinstance(err, sqlite3.DataError):
            return DataRefusedError(source=self._url.shown, reason=_reason(err))
        return StoreError(source=self._url.shown, reason=_reason(err))

    def _execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        try:
            return self._db.execute(sql, params).fetchall()
        except sqlite3.Error as err:
            raise self._error(err) from err

    def _executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> int:
        try:
            return self._db.executemany(sql, rows).rowcount
        except sqlite3.Error as err:
            raise self._error(err) from err

    def _stream(self, sql: str, params: Sequence[Any]) -> Iterator[tuple[Any, ...]]:
        """The rows of ``sql``, read from SQLite :data:`_FETCH` at a time as consumed."""
        try:
            cursor = self._db.execute(sql, params)
            yield from fetched(cursor.fetchmany, _FETCH)
        except sqlite3.Error as err:
            raise self._error(err) from err

    # The layout.
    def probe(self) -> LayoutProbe:
        rows = self._execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        tables = frozenset(row[0] for row in rows) & frozenset(TABLES)
        if "kernelindex_layout" not in tables:
            return LayoutProbe(tables)
        try:
            found = self._execute(
                "SELECT value FROM kernelindex_layout WHERE key = 'layout_version'"
            )
        except StoreError as err:
            raise damaged(self._url, f"kernelindex_layout cannot be read: {err.reason}") from err
        return LayoutProbe(tables, found[0][0] if found else MISSING)

    @contextlib.contextmanager
    def layout_transaction(self) -> Iterator[None]:
        self._created = False
        with self.transaction():
            yield
        if self._created and self._url.target != MEMORY:
            # Readers never wait for a writer. Set once the file is a store (a mode that
            # cannot change inside a transaction), so that no other file is changed.
            self._execute("PRAGMA journal_mode = WAL")

    def create_layout(self) -> None:
        for statement in CREATE:
            self._execute(statement)
        self._created = True

    def migrate(self, found: int) -> None:
        steps = [MIGRATIONS.get(version) for version in range(found, LAYOUT_VERSION)]
        if None in steps:
            raise StoreLayoutError(
                source=self._url.shown,
                reason=f"store layout version {found} cannot be migrated",
            )
        try:
            for step in steps:
                step(self._db)  # type: ignore[misc]
        except sqlite3.Error as err:
            raise StoreError(source=self._url.shown, reason=_reason(err)) from err
        except StepError as err:
            raise damaged(self._url, str(err)) from err
        self._execute(
            "UPDATE kernelindex_layout SET value = ? WHERE key = 'layout_version'",
            (str(LAYOUT_VERSION),),
        )

    # Transactions.
    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        if not self._writable:
            raise StoreError(source=self._url.shown, reason="opened for reading only")
        # IMMEDIATE takes the write lock at once: what a file's ingest reads stays true
        # until it commits.
        self._execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                self._db.execute("ROLLBACK")
            raise
        self._execute("COMMIT")

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        if self._db.in_transaction:
            yield
            return
        # DEFERRED: a read snapshot, and no lock a writer waits for (write-ahead log).
        self._execute("BEGIN DEFERRED")
        try:
            yield
        finally:
            with contextlib.suppress(sqlite3.Error):
                self._db.execute("COMMIT")

    # Ingest.
    def _inserted_since(
        self, table: str, key: str, rows: Sequence[Sequence[Any]], sql: str
    ) -> set[Any]:
        """Insert ``rows`` by ``sql`` (``ON CONFLICT DO NOTHING``); the keys inserted.

        The write lock is held, so the rows with a rowid past the largest before the
        insert are this one's.
        """
        ((before,),) = self._execute(f"SELECT coalesce(max(rowid), 0) FROM {table}")
        if self._executemany(sql, rows) == len(rows):
            return {row[0] for row in rows}
        found = self._execute(f"SELECT {key} FROM {table} WHERE rowid > ?", (before,))
        return {row[0] for row in found}

    def insert_objects(self, kind: str, rows: Sequence[Sequence[Any]]) -> set[str]:
        if not rows:
            return set()
        return self._inserted_since(OBJECT_TABLES[kind], "digest", rows, _INSERT_OBJECT[kind])

    def object_specs(self, kind: str, digests: Sequence[str]) -> dict[str, Any]:
        table = OBJECT_TABLES[kind]
        found = {}
        for chunk in _chunks(digests):
            for digest, spec in self._execute(
                f"SELECT digest, spec FROM {table} WHERE digest IN {_marks(len(chunk))}", chunk
            ):
                found[digest] = spec_of(self._url, table, digest, spec)
        return found

    def stored_document(self, kind: str, name: str) -> tuple[str, str, str] | None:
        found = self._execute(
            "SELECT digest, source, record_text FROM documents WHERE kind = ? AND name = ?",
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
                " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (kind, name) DO NOTHING"
                " RETURNING name",
                row,
            )
        )

    def insert_groups(self, rows: Sequence[Sequence[Any]]) -> tuple[dict[str, int], set[str]]:
        if not rows:
            return {}, set()
        made = self._inserted_since("run_groups", "key", rows, _INSERT_GROUP)
        ids: dict[str, int] = {}
        for chunk in _chunks([row[0] for row in rows]):
            ids.update(
                self._execute(
                    f"SELECT key, id FROM run_groups WHERE key IN {_marks(len(chunk))}", chunk
                )
            )
        return ids, made

    def delete_groups(self, ids: Sequence[int]) -> None:
        for chunk in _chunks(ids):
            self._execute(f"DELETE FROM run_groups WHERE id IN {_marks(len(chunk))}", chunk)

    def insert_runs(self, rows: Sequence[Sequence[Any]]) -> Sequence[int | None]:
        if not rows:
            return []
        # The write lock is held, and SQLite numbers a row without a rowid one past the
        # largest: the runs inserted take first, first + 1, ... in the rows' order (a run
        # already stored takes none).
        ((last,),) = self._execute("SELECT coalesce(max(seq), 0) FROM runs")
        first = int(last) + 1
        if self._executemany(_INSERT_RUN, rows) == len(rows):
            return range(first, first + len(rows))
        found = dict(self._execute("SELECT name, seq FROM runs WHERE seq >= ?", (first,)))
        return [found.get(row[0]) for row in rows]

    def insert_texts(self, rows: Sequence[tuple[int, str | bytes, str]]) -> None:
        if rows:
            self._executemany(_INSERT_TEXT, rows)

    def stored_runs(self, names: Sequence[str]) -> dict[str, tuple[str, str]]:
        found: dict[str, tuple[str, str]] = {}
        for chunk in _chunks(names):
            for name, text, source in self._execute(
                "SELECT r.name, t.record_text, r.source FROM runs r"
                f" LEFT JOIN run_texts t ON t.seq = r.seq WHERE r.name IN {_marks(len(chunk))}",
                chunk,
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
        select = f"SELECT {', '.join(ROW_COLUMNS)} FROM runs r"
        if names is None:
            clause, params = _where(filters)
            return self._execute(select + clause, params)
        found = []
        for chunk in _chunks(names):
            clause, params = _where(filters, f"r.name IN {_marks(len(chunk))}")
            found += self._execute(select + clause, [*params, *chunk])
        return found

    def groups(self, ids: Sequence[int]) -> dict[int, tuple[Any, ...]]:
        found = {}
        columns = ", ".join(GROUP_COLUMNS)
        for chunk in _chunks(ids):
            for gid, *values, labels in self._execute(
                f"SELECT id, {columns} FROM run_groups WHERE id IN {_marks(len(chunk))}", chunk
            ):
                where = f"run_groups.labels of group {gid}"
                found[gid] = (*values, json_of(self._url, labels, where))
        return found

    def object_columns(self, kind: str, digests: Sequence[str]) -> dict[str, tuple[Any, ...]]:
        found = {}
        for chunk in _chunks(digests):
            for digest, *values in self._execute(_OBJECT_READ[kind] + _marks(len(chunk)), chunk):
                found[digest] = tuple(values)
        return found

    def spec(self, kind: str, digest: str) -> Any | None:
        table = OBJECT_TABLES[kind]
        found = self._execute(f"SELECT spec FROM {table} WHERE digest = ?", (digest,))
        if not found:
            return None
        return spec_of(self._url, table, digest, found[0][0])

    def document_texts(self) -> Iterator[tuple[str, str]]:
        with self.reading():
            yield from self._stream(
                "SELECT record_text, record_form FROM documents ORDER BY seq", ()
            )

    def run_texts(
        self, filters: Mapping[str, str], names: Sequence[str] | None
    ) -> Iterator[RunText]:
        select = (
            "SELECT r.name, t.record_text, t.record_form FROM runs r"
            " LEFT JOIN run_texts t ON t.seq = r.seq"
        )
        with self.reading():
            if names is None:
                clause, params = _where(filters)
                yield from self._stream(f"{select}{clause} ORDER BY r.seq", params)
                return
            # The named runs' numbers (as many as the names given), then their texts in
            # that order, a chunk at a time.
            seqs = []
            for chunk in _chunks(names):
                clause, params = _where(filters, f"r.name IN {_marks(len(chunk))}")
                seqs += [
                    row[0]
                    for row in self._execute(f"SELECT r.seq FROM runs r{clause}", [*params, *chunk])
                ]
            seqs.sort()
            for chunk in _chunks(seqs):
                yield from self._execute(
                    f"{select} WHERE r.seq IN {_marks(len(chunk))} ORDER BY r.seq", chunk
                )

    def close(self) -> None:
        self._db.close()
        path = self._real_path
        if self._writable or path == MEMORY or self._log_was_there:
            return
        if os.path.exists(path + "-wal"):
            self._tidy_log(path)

    def _tidy_log(self, path: str) -> None:
        """Remove the log files SQLite made for this reader of a write-ahead-logged store.

        A read-only connection cannot remove them when it closes; a connection that may
        write does, as the store's last one to close (SQLite's own rule: with another
        still open, a writer, they stay its). This one opens the existing file (``rw``:
        never creating it), writes nothing (``query_only``) and reads one row. The log it
        finds is empty (a writer's last close emptied it), so the store's file is not
        written; one that a writer left holding commits, it checkpoints as any last
        connection does, which moves the writer's commits, not the reader's.
        """
        target = _file_uri(path, "rw")
        with contextlib.suppress(sqlite3.Error):
            tidy = sqlite3.connect(target, uri=True, timeout=0)
            try:
                tidy.execute("PRAGMA query_only = 1")
                tidy.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
            finally:
                tidy.close()
