"""One interface over SQLite (standard library) and PostgreSQL (psycopg 3, ``[postgres]``).

SQL is written once with ``?`` placeholders; the PostgreSQL connection turns them into
psycopg's ``%s``. What differs between the two is here: how a write transaction starts,
how many rows go in at once, and how JSON columns come back.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any, Final

from ..errors import StoreError, StoreLayoutError
from . import _layout
from ._extract import RUN_COLUMNS
from ._sqlite_params import in_statements, values_clause, without_nulls
from ._url import MEMORY, StoreURL

__all__ = ["Backend", "SQLiteBackend"]

# How long a SQLite writer waits for another one to finish before giving up.
_SQLITE_BUSY_MS: Final = 60_000
# SQLite limits a statement's parameters (32,766 since 3.32): look rows up in chunks.
_CHUNK: Final = 500
# The page size of a new SQLite store.
_SQLITE_PAGE_BYTES: Final = 65536
# Rows a SQLite INSERT of runs or their texts gives at once (a multi-row VALUES): each
# statement run costs about as much as a row's values (see in_statements): a run-like row
# of 20 values costs about a third less 64 a statement (benchmarks/results/sqlite_params.json).
_ROWS_PER_INSERT: Final = 64
# The most parameters one statement may take where the connection cannot say (Python
# 3.10 has no Connection.getlimit): SQLITE_MAX_VARIABLE_NUMBER's default.
_SQLITE_MAX_PARAMETERS: Final = 32766 if sqlite3.sqlite_version_info >= (3, 32, 0) else 999
# The positions of a run's row (RUN_COLUMNS) that may hold None: its provenance and
# latencies; every other column is NOT NULL.
_RUN_NULLABLE: Final = tuple(
    RUN_COLUMNS.index(column)
    for column in ("commit_id", "commit_time", "median_ns", "p20_ns", "p80_ns", "branch")
)


class Backend:
    """A connection to one store; subclasses implement the dialect's parts."""

    dialect: str = ""

    def __init__(self, url: StoreURL) -> None:
        self.url = url

    # Subclasses implement these.
    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run one statement; return its rows (empty for a statement without)."""
        raise NotImplementedError

    def transaction(self) -> contextlib.AbstractContextManager[None]:
        """A write transaction: committed when the block ends, rolled back on an error."""
        raise NotImplementedError

    def insert_new(
        self,
        table: str,
        key: str,
        columns: Sequence[str],
        rows: Sequence[Sequence[Any]],
    ) -> set[str]:
        """Insert the rows whose ``key`` (their first column) the table lacks.

        Two writers of overlapping rows never deadlock: in PostgreSQL rows go in in the
        order of their key; SQLite has one writer at a time.

        Args:
            table: The table.
            key: Its unique column, the rows' first.
            columns: The columns the rows give, in order.
            rows: The rows, in the order of arrival.

        Returns:
            The keys inserted (a key another writer inserted first is not among them).
        """
        raise NotImplementedError

    def insert_runs(
        self, columns: Sequence[str], rows: Sequence[Sequence[Any]]
    ) -> Sequence[int | None]:
        """Insert the runs whose name (their first column) the store lacks, numbered
        (``seq``) in the order of ``rows``; as :meth:`insert_new`, never deadlocking.

        Returns:
            Each row's ``seq``, in the rows' order; None for a run already stored.
        """
        raise NotImplementedError

    def insert_texts(self, rows: Sequence[tuple[int, str | bytes, str]]) -> None:
        """Insert runs' ``(seq, record text, form)``; a text given as bytes is UTF-8
        the reader checked.

        A backend may write them after it returns (PostgreSQL does, while ingest reads
        the next batch): the next call on it, or the end of the transaction, waits for
        them and raises their failure, so the transaction still holds them or nothing.
        """
        raise NotImplementedError

    def group_ids(self, rows: Sequence[Sequence[Any]]) -> tuple[dict[str, int], set[str]]:
        """Insert the run groups the store lacks; return the id of every one given and
        the keys of those this call inserted.

        Race-free: a group another writer is inserting is waited for (PostgreSQL), then
        found, as :meth:`insert_new` does.

        Args:
            rows: ``(key, *GROUP_COLUMNS)`` of each group (labels as JSON text).

        Returns:
            ``run_groups.id`` by key; the keys inserted (another writer's are not).
        """
        made = self.insert_new("run_groups", "key", ("key", *_layout.GROUP_COLUMNS), rows)
        found = self.fetch("run_groups", "key", [row[0] for row in rows], ("id",))
        return {key: int(value[0]) for key, value in found.items()}, made

    def stored_runs(self, names: Sequence[str]) -> dict[str, tuple[str, str]]:
        """``(record_text, source)`` of each stored run among ``names``, by name."""
        found: dict[str, tuple[str, str]] = {}
        for start in range(0, len(names), _CHUNK):
            chunk = names[start : start + _CHUNK]
            marks = ", ".join("?" * len(chunk))
            for name, text, source in self.execute(
                "SELECT r.name, t.record_text, r.source FROM runs r"  # noqa: S608
                f" JOIN run_texts t ON t.seq = r.seq WHERE r.name IN ({marks})",
                chunk,
            ):
                found[name] = (text, source)
        return found

    def json_as_text(self, column: str) -> str:
        """An expression giving a JSON column as JSON text."""
        return column

    def json_value(self, stored: Any) -> Any:
        """A JSON column's value as Python (SQLite gives text, psycopg parsed jsonb)."""
        return json.loads(stored) if isinstance(stored, str) else stored

    def close(self) -> None:
        """Close the connection."""
        raise NotImplementedError

    def fetch(
        self, table: str, key: str, keys: Sequence[str], columns: Sequence[str]
    ) -> dict[str, tuple[Any, ...]]:
        """The ``columns`` of the rows whose ``key`` is one of ``keys``."""
        found: dict[str, tuple[Any, ...]] = {}
        wanted = ", ".join((key, *columns))
        for start in range(0, len(keys), _CHUNK):
            chunk = keys[start : start + _CHUNK]
            marks = ", ".join("?" * len(chunk))
            for row in self.execute(
                f"SELECT {wanted} FROM {table} WHERE {key} IN ({marks})",  # noqa: S608
                chunk,
            ):
                found[row[0]] = tuple(row[1:])
        return found

    def ensure_layout(self, *, create: bool) -> None:
        """Create the tables of an empty store, migrate an older one, refuse a newer one.

        Raises:
            StoreLayoutError: for a newer layout, a database whose tables are not a
                store's, or an empty one when ``create`` is false.
        """
        with self.transaction():
            self._lock_layout()
            present = self._tables()
            if "kernelindex_layout" not in present:
                ours = sorted(present & set(_layout.TABLES))
                if ours:
                    raise StoreLayoutError(
                        source=self.url.shown,
                        reason=(
                            f"holds tables {', '.join(ours)} but no kernelindex_layout:"
                            " not a kernelindex store"
                        ),
                    )
                if not create:
                    raise StoreLayoutError(
                        source=self.url.shown, reason="no kernelindex store here"
                    )
                for statement in _layout.create_statements(self.dialect):
                    self.execute(statement)
                self.execute(
                    "INSERT INTO kernelindex_layout (key, value) VALUES (?, ?)",
                    ("layout_version", str(_layout.LAYOUT_VERSION)),
                )
                return
            rows = self.execute("SELECT value FROM kernelindex_layout WHERE key = 'layout_version'")
            found = rows[0][0] if rows else None
            if found is None or not str(found).isdigit():
                raise StoreLayoutError(
                    source=self.url.shown, reason=f"unreadable layout version {found!r}"
                )
            version = int(found)
            if version > _layout.LAYOUT_VERSION:
                raise StoreLayoutError(
                    source=self.url.shown,
                    reason=(
                        f"store layout version {version} is newer than this kernelindex-sdk"
                        f" reads ({_layout.LAYOUT_VERSION}); upgrade kernelindex-sdk"
                    ),
                )
            if version < _layout.LAYOUT_VERSION:
                try:
                    steps = _layout.migrations(version)
                except KeyError:
                    raise StoreLayoutError(
                        source=self.url.shown,
                        reason=f"store layout version {version} cannot be migrated",
                    ) from None
                try:
                    for step in steps:
                        step(self.execute, self.dialect)
                except StoreLayoutError:
                    raise
                except StoreError as err:
                    # The transaction rolls back: the store stays as it was.
                    raise StoreLayoutError(
                        source=self.url.shown,
                        reason=(
                            f"cannot migrate store layout version {version} to"
                            f" {_layout.LAYOUT_VERSION} (the store is unchanged): {err.reason}"
                        ),
                    ) from err
                self.execute(
                    "UPDATE kernelindex_layout SET value = ? WHERE key = 'layout_version'",
                    (str(_layout.LAYOUT_VERSION),),
                )

    def _lock_layout(self) -> None:
        """Keep concurrent openers from creating the tables twice (the transaction's lock)."""

    def _tables(self) -> set[str]:
        raise NotImplementedError


class SQLiteBackend(Backend):
    """A SQLite file (or ``:memory:``) through the standard library's sqlite3."""

    dialect = "sqlite"

    def __init__(self, url: StoreURL, *, create: bool) -> None:
        super().__init__(url)
        path = url.target
        if path != MEMORY and not create and not os.path.exists(path):
            raise StoreLayoutError(source=url.shown, reason="no kernelindex store here")
        try:
            self._db = sqlite3.connect(
                path, isolation_level=None, timeout=_SQLITE_BUSY_MS / 1000, check_same_thread=False
            )
            self._db.execute(f"PRAGMA busy_timeout = {_SQLITE_BUSY_MS}")
            if path != MEMORY:
                # A new store's pages are 64 KiB, the most (an existing store keeps its
                # own): a run's record text is a few KiB, and with SQLite's default 4 KiB
                # pages an insert cost 2.5 times as much CPU (docs/store.md).
                self._db.execute(f"PRAGMA page_size = {_SQLITE_PAGE_BYTES}")
                # Readers never wait for a writer. FULL syncs the log at each commit: a
                # file that ingest reported stored stays stored through a power cut, for
                # one sync per file.
                self._db.execute("PRAGMA journal_mode = WAL")
                self._db.execute("PRAGMA synchronous = FULL")
        except sqlite3.Error as err:
            raise StoreError(source=url.shown, reason=_sqlite_reason(err)) from err

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        try:
            return self._db.execute(sql, params).fetchall()
        except sqlite3.Error as err:
            raise StoreError(source=self.url.shown, reason=_sqlite_reason(err)) from err

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        # IMMEDIATE takes the write lock at once: what a file's ingest reads stays true
        # until it commits.
        self.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                self._db.execute("ROLLBACK")
            raise
        self.execute("COMMIT")

    def _next_seq(self, table: str) -> int:
        ((last,),) = self.execute(f"SELECT coalesce(max(seq), 0) FROM {table}")  # noqa: S608
        return int(last) + 1

    def _executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> int:
        try:
            return self._db.executemany(sql, rows).rowcount
        except sqlite3.Error as err:
            raise StoreError(source=self.url.shown, reason=_sqlite_reason(err)) from err

    def insert_new(
        self,
        table: str,
        key: str,
        columns: Sequence[str],
        rows: Sequence[Sequence[Any]],
    ) -> set[str]:
        if not rows:
            return set()
        # The write lock is held, so the rows with a rowid past the largest before the
        # insert are this one's.
        ((before,),) = self.execute(f"SELECT coalesce(max(rowid), 0) FROM {table}")  # noqa: S608
        marks = ", ".join("?" * len(columns))
        inserted = self._executemany(
            f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})"  # noqa: S608
            f" ON CONFLICT ({key}) DO NOTHING",
            rows,
        )
        if inserted == len(rows):
            return {row[0] for row in rows}
        found = self.execute(f"SELECT {key} FROM {table} WHERE rowid > ?", (before,))  # noqa: S608
        return {row[0] for row in found}

    def _insert_rows(self, head: str, values: str, tail: str, rows: Sequence[Sequence[Any]]) -> int:
        """``head VALUES values tail`` for every row, :data:`_ROWS_PER_INSERT` rows a
        statement, in the rows' order; the number of rows it changed."""
        if not rows:
            return 0
        # The parameters a statement may take are the connection's limit (a build's
        # SQLITE_MAX_VARIABLE_NUMBER, or sqlite3_limit), not a version's.
        per = max(1, min(_ROWS_PER_INSERT, self._max_parameters() // max(1, len(rows[0]))))
        statements, rest = in_statements(rows, per)
        changed = 0
        if statements:
            many = ", ".join([f"({values})"] * per)
            try:
                changed += self._executemany(f"{head} VALUES {many}{tail}", statements)
            except StoreError as err:
                # A limit lower than the connection said (Python 3.10 guesses it):
                # refused as the statement is prepared, before any row went in.
                if "too many SQL variables" not in str(err.__cause__):
                    raise
                rest = rows
        if rest:
            changed += self._executemany(f"{head} VALUES ({values}){tail}", rest)
        return changed

    def _max_parameters(self) -> int:
        """The most parameters one statement of this connection may take."""
        # Connection.getlimit and its categories came with Python 3.11.
        getlimit = getattr(self._db, "getlimit", None)
        category = getattr(sqlite3, "SQLITE_LIMIT_VARIABLE_NUMBER", None)
        if getlimit is None or category is None:
            return _SQLITE_MAX_PARAMETERS
        return int(getlimit(category))

    def insert_runs(
        self, columns: Sequence[str], rows: Sequence[Sequence[Any]]
    ) -> Sequence[int | None]:
        if not rows:
            return []
        # The write lock is held, and SQLite numbers a row without a rowid one past the
        # largest: the runs inserted take first, first + 1, ... in the rows' order (a run
        # already stored takes none; a multi-row VALUES inserts its rows in their
        # order), with no number built in Python for each.
        first = self._next_seq("runs")
        names = ", ".join(columns)
        # Only a run's provenance and latencies may be None (RUN_COLUMNS' order).
        nullable = _RUN_NULLABLE if tuple(columns[: len(RUN_COLUMNS)]) == RUN_COLUMNS else None
        inserted = 0
        for nulls, part in without_nulls(rows, nullable):
            inserted += self._insert_rows(
                f"INSERT INTO runs ({names})",
                values_clause(len(columns), nulls),
                " ON CONFLICT (name) DO NOTHING",
                part,
            )
        if inserted == len(rows):
            return range(first, first + len(rows))
        found = dict(self.execute("SELECT name, seq FROM runs WHERE seq >= ?", (first,)))
        return [found.get(row[0]) for row in rows]

    def insert_texts(self, rows: Sequence[tuple[int, str | bytes, str]]) -> None:
        # A text read as UTF-8 bytes goes in as they are, cast to TEXT (SQLite reads the
        # bytes as its UTF-8): decoding it to str, which sqlite3 encodes back to UTF-8,
        # took a seventh of a Liger run's ingest.
        if rows:
            self._insert_rows(
                "INSERT INTO run_texts (seq, record_text, record_form)",
                "?, CAST(? AS TEXT), ?",
                "",
                rows,
            )

    def close(self) -> None:
        self._db.close()

    def _tables(self) -> set[str]:
        return {row[0] for row in self.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def _sqlite_reason(err: sqlite3.Error) -> str:
    return f"sqlite: {err}"
