"""What a store backend does, by name: every statement is the backend's own.

Callers (ingest, the Store's reads, export, the layout's check on opening) ask a
:class:`Backend` for what they need; each backend (SQLite in ``_sqlite``, PostgreSQL in
``_postgres``) writes its own SQL in its own dialect and placeholders. What both share is
in Python here: the layout check on opening (:func:`open_layout`) and the errors that
name a damaged store (:func:`damaged`, :func:`json_of`).

A backend opened for reading never writes: its connection is read-only (SQLite's
``mode=ro``, PostgreSQL's read-only transactions), it takes no write lock, and a store
that needs a migration is refused with a line saying how to migrate it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Final, Literal, Protocol

import attrs

from .._base.arguments import short_repr
from ..errors import StoreDamagedError, StoreError, StoreLayoutError
from ._layout import LAYOUT_VERSION, TABLES
from ._url import StoreURL

__all__ = [
    "MISSING",
    "Backend",
    "DataRefusedError",
    "LayoutProbe",
    "RunText",
    "damaged",
    "fetched",
    "json_of",
    "open_layout",
]


@attrs.frozen(kw_only=True, auto_exc=True)
class DataRefusedError(StoreError):
    """The database refused the data of a statement (PostgreSQL's data exceptions and
    program limits, SQLite's too big), not for its own state: ingest refuses the file
    with the reason and goes on with the next files. A backend raises it; its own
    errors say which of its failures are such."""


#: ``LayoutProbe.version`` when kernelindex_layout has no ``layout_version`` row.
MISSING: Final = object()
# A layout version as written: decimal digits (str.isdigit would take '²').
_VERSION: Final = re.compile(r"[0-9]{1,9}")


@attrs.frozen
class LayoutProbe:
    """What a store's tables say about its layout, read without writing.

    Attributes:
        tables: The layout's tables (:data:`~._layout.TABLES`) the store holds.
        version: ``kernelindex_layout``'s ``layout_version`` value as stored (any type a
            hand edit left), :data:`MISSING` without that row, None without the table.
    """

    tables: frozenset[str]
    version: object = None


#: A stored run's record as export reads it: its name, its text and its form (None
#: when its run_texts row is missing: a damaged store).
RunText = tuple[str, str | None, str | None]


class Backend(Protocol):
    """One connection to one store, opened for reading or for writing.

    Every method raises :class:`StoreError` when the database fails, and
    :class:`StoreDamagedError` when what it read breaks the layout's contract.
    """

    @property
    def url(self) -> StoreURL:
        """The store's parsed URL."""
        ...

    @property
    def dialect(self) -> Literal["sqlite", "postgresql"]:
        """``sqlite`` or ``postgresql``."""
        ...

    @property
    def writable(self) -> bool:
        """Whether this connection may write (false: opened for reading only)."""
        ...

    # The layout (open_layout calls these).
    def probe(self) -> LayoutProbe:
        """The store's layout tables and recorded version, read without writing."""
        ...

    def layout_transaction(self) -> AbstractContextManager[None]:
        """A write transaction in which one opener at a time creates or migrates."""
        ...

    def create_layout(self) -> None:
        """Create this version's tables in a place that holds none of them."""
        ...

    def migrate(self, found: int) -> None:
        """Migrate the store from layout ``found`` to this version's, every step.

        Raises:
            StoreLayoutError: when no step leads from ``found``.
        """
        ...

    # Transactions.
    def transaction(self) -> AbstractContextManager[None]:
        """A write transaction: committed when the block ends, rolled back on an error."""
        ...

    def reading(self) -> AbstractContextManager[None]:
        """Reads from one snapshot of the store, taking no write lock (a no-op inside a
        transaction already open)."""
        ...

    # Ingest's writes and the reads it compares with, inside transaction().
    def insert_objects(self, kind: str, rows: Sequence[Sequence[Any]]) -> set[str]:
        """Insert the objects of ``kind`` whose digest the store lacks.

        Two writers of overlapping rows never deadlock: in PostgreSQL rows go in in the
        order of their key; SQLite has one writer at a time.

        Args:
            kind: ``workload``, ``implementation``, ``protocol`` or ``environment``.
            rows: Rows of :data:`~._layout.OBJECT_COLUMNS` (the spec as JSON text).

        Returns:
            The digests inserted (one another writer inserted first is not among them).
        """
        ...

    def object_specs(self, kind: str, digests: Sequence[str]) -> dict[str, Any]:
        """The stored spec (a JSON value) of each object of ``kind`` among ``digests``."""
        ...

    def stored_document(self, kind: str, name: str) -> tuple[str, str, str] | None:
        """``(digest, source, record text)`` of the stored document ``kind``/``name``."""
        ...

    def insert_document(self, row: Sequence[Any]) -> bool:
        """Insert a protocol or environment document unless one of its kind and name is
        stored; whether it went in.

        Args:
            row: ``(kind, name, digest, record_text, record_form, source, ingested_at)``.
        """
        ...

    def insert_groups(self, rows: Sequence[Sequence[Any]]) -> tuple[dict[str, int], set[str]]:
        """Insert the run groups the store lacks; the id of every one given, by key, and
        the keys of those this call inserted.

        Race-free: a group another writer is inserting is waited for (PostgreSQL), then
        found.

        Args:
            rows: ``(key, *GROUP_COLUMNS)`` of each group (labels as JSON text).
        """
        ...

    def delete_groups(self, ids: Sequence[int]) -> None:
        """Delete the run groups ``ids`` (ones this transaction inserted that no run names)."""
        ...

    def insert_runs(self, rows: Sequence[Sequence[Any]]) -> Sequence[int | None]:
        """Insert the runs whose name the store lacks, numbered (``seq``) in the order of
        ``rows``; as :meth:`insert_objects`, never deadlocking.

        Args:
            rows: Rows of :data:`~._layout.RUN_INSERT_COLUMNS`.

        Returns:
            Each row's ``seq``, in the rows' order; None for a run already stored.
        """
        ...

    def insert_texts(self, rows: Sequence[tuple[int, str | bytes, str]]) -> None:
        """Insert runs' ``(seq, record text, form)``; a text given as bytes is UTF-8 the
        reader checked.

        A backend may write them after it returns (PostgreSQL does, while ingest reads
        the next batch): the next call on it, or the end of the transaction, waits for
        them and raises their failure, so the transaction still holds them or nothing.
        """
        ...

    def stored_runs(self, names: Sequence[str]) -> dict[str, tuple[str, str]]:
        """``(record_text, source)`` of each stored run among ``names``, by name."""
        ...

    # Reads (Store.rows, Store.spec, export), each inside reading() where several must
    # see one snapshot.
    def run_columns(
        self, filters: Mapping[str, str], names: Sequence[str] | None
    ) -> list[tuple[Any, ...]]:
        """The :data:`~._query.ROW_COLUMNS` of the runs that match.

        Args:
            filters: Filter name (:data:`~._query.FILTERS`) to value, every one to match.
            names: Only these run names (any number), or None for all.
        """
        ...

    def groups(self, ids: Sequence[int]) -> dict[int, tuple[Any, ...]]:
        """The :data:`~._layout.GROUP_COLUMNS` of each run group among ``ids``, by id
        (labels as a JSON value)."""
        ...

    def object_columns(self, kind: str, digests: Sequence[str]) -> dict[str, tuple[Any, ...]]:
        """What a RunRow takes from the objects of ``kind`` among ``digests``, by digest:
        a workload's operation and pass, an implementation's provider and entry point,
        an environment's hardware."""
        ...

    def spec(self, kind: str, digest: str) -> Any | None:
        """The stored spec of one object (a JSON value), or None when the store lacks it."""
        ...

    def document_texts(self) -> Iterator[tuple[str, str]]:
        """``(record_text, record_form)`` of each document stored on its own, in order of
        arrival, read as it is consumed."""
        ...

    def run_texts(
        self, filters: Mapping[str, str], names: Sequence[str] | None
    ) -> Iterator[RunText]:
        """Each matching run's :data:`RunText`, in order of arrival, read as it is
        consumed: memory holds a few hundred whatever the store's size."""
        ...

    def close(self) -> None:
        """Close the connection."""
        ...


def fetched(
    fetchmany: Callable[[int], Sequence[tuple[Any, ...]]], size: int
) -> Iterator[tuple[Any, ...]]:
    """A cursor's rows, fetched from the database ``size`` at a time as they are consumed
    (a read that streams holds at most ``size`` rows)."""
    while rows := fetchmany(size):
        yield from rows


def damaged(url: StoreURL, reason: str) -> StoreDamagedError:
    """The error for a store whose contents break the layout's contract.

    Args:
        url: The store.
        reason: What is wrong and where, e.g. ``runs.median_ns of run 'x' is 'fast',
            expected an integer or NULL``.
    """
    return StoreDamagedError(source=url.shown, reason=f"damaged store: {reason}")


def json_of(url: StoreURL, stored: Any, where: str) -> Any:
    """A JSON column's value as Python: SQLite gives its text, psycopg jsonb parsed.

    Args:
        url: The store.
        stored: The value read.
        where: The column and row, for the message (``workloads.spec of 'sha256:...'``).

    Raises:
        StoreDamagedError: for text that is not JSON, or NULL.
    """
    if stored is None:
        raise damaged(url, f"{where} is NULL, expected JSON")
    if not isinstance(stored, str):
        return stored
    try:
        return json.loads(stored)
    except ValueError:
        shown = stored if len(stored) <= 40 else stored[:37] + "..."
        raise damaged(url, f"{where} is not JSON: {shown!r}") from None


# The keys of a stored workload spec that readers take apart, and the types the run
# schema gives them (a hand-edited spec of other types was a traceback in history,
# compare --history and site: tests/store/test_damaged_spec_hostile.py).
_WORKLOAD_KEYS: Final = (("operation", str, True), ("pass", str, True), ("parameters", dict, False))


#: The first store layout any kernelindex-sdk wrote.
_FIRST_LAYOUT: Final = 1


def spec_of(url: StoreURL, table: str, digest: str, stored: Any) -> dict[str, Any]:
    """An object table's ``spec`` column as Python: a JSON object, and for ``workloads``
    one whose ``operation`` and ``pass`` are text and ``parameters`` (if any) an object.

    Args:
        url: The store.
        table: The object table (``workloads``, ``environments`` ...).
        digest: The row's digest, for the message.
        stored: The value read.

    Raises:
        StoreDamagedError: for NULL, text that is not JSON, or JSON of another shape.
    """
    where = f"{table}.spec of {digest!r}"
    value = json_of(url, stored, where)
    if not isinstance(value, dict):
        raise damaged(url, f"{where} is {type(value).__name__} JSON, expected an object")
    if table == "workloads":
        for key, kind, required in _WORKLOAD_KEYS:
            found = value.get(key)
            if (found is not None or required) and not isinstance(found, kind):
                expected = "an object" if kind is dict else "text"
                raise damaged(url, f"{where} has {key!r} {short_repr(found)}, expected {expected}")
        moved = value.get("bytesMoved")
        if moved is not None and (isinstance(moved, bool) or not isinstance(moved, int)):
            raise damaged(url, f"{where} has 'bytesMoved' {short_repr(moved)}, expected an integer")
    return value


def _found_version(backend: Backend, probe: LayoutProbe, *, create: bool) -> int | None:
    """The layout version ``probe`` shows (None for a place without a store, when it may
    be created there).

    Raises:
        StoreLayoutError: for no store where one must be, tables of ours without a
            layout record, or a newer layout.
        StoreDamagedError: for a version that is not a number, or a table missing.
    """
    url = backend.url
    if "kernelindex_layout" not in probe.tables:
        ours = sorted(probe.tables)
        if ours:
            raise StoreLayoutError(
                source=url.shown,
                reason=(
                    f"holds tables {', '.join(ours)} but no kernelindex_layout:"
                    " not a kernelindex store"
                ),
            )
        if not create:
            raise StoreLayoutError(source=url.shown, reason="no kernelindex store here")
        return None
    stored = probe.version
    if stored is MISSING:
        raise damaged(url, "kernelindex_layout has no 'layout_version' row")
    text = stored if isinstance(stored, str) else None
    if text is None or not _VERSION.fullmatch(text):
        raise damaged(url, f"kernelindex_layout's layout_version is {stored!r}, not a number")
    version = int(text)
    if version < _FIRST_LAYOUT:
        # No kernelindex-sdk wrote it: readers told to migrate it were sent to a writer
        # that cannot (tests/store/test_damaged_columns_hostile.py).
        raise damaged(
            url, f"store layout version {version} cannot be migrated (layouts start at 1)"
        )
    if version > LAYOUT_VERSION:
        raise StoreLayoutError(
            source=url.shown,
            reason=(
                f"store layout version {version} is newer than this kernelindex-sdk"
                f" reads ({LAYOUT_VERSION}); upgrade kernelindex-sdk"
            ),
        )
    if version == LAYOUT_VERSION:
        missing = [table for table in TABLES if table not in probe.tables]
        if missing:
            raise damaged(url, f"layout {version} without its table {missing[0]}")
    return version


def open_layout(backend: Backend, *, create: bool) -> int:
    """Check the store's layout; a writable backend creates or migrates it as needed.

    The check reads without writing; the write lock is taken only to create or migrate
    (checking again under it: another opener may have done it meanwhile).

    Args:
        backend: Just connected.
        create: Create the tables where there are none (a writable backend only).

    Returns:
        The layout version the store had (0: created now).

    Raises:
        StoreLayoutError: for no store (without ``create``), a newer layout, a database
            that is not a store, a store that needs a migration opened for reading, or a
            migration that failed (the store is then unchanged).
        StoreDamagedError: for a store whose layout record or tables are damaged.
    """
    found = _found_version(backend, backend.probe(), create=create and backend.writable)
    if found == LAYOUT_VERSION:
        return found
    if not backend.writable and found is not None:
        shown = backend.url.shown
        raise StoreLayoutError(
            source=shown,
            reason=(
                f"store layout version {found} needs migrating to {LAYOUT_VERSION}, which"
                f" only a command that writes does: run 'kernelindex migrate --db {shown}'"
                " (or ingest into it)"
            ),
        )
    with backend.layout_transaction():
        found = _found_version(backend, backend.probe(), create=create)
        if found is None:
            backend.create_layout()
            return 0
        if found < LAYOUT_VERSION:
            try:
                backend.migrate(found)
            except StoreLayoutError:
                raise
            except StoreError as err:
                # The transaction rolls back: the store stays as it was.
                raise StoreLayoutError(
                    source=backend.url.shown,
                    reason=(
                        f"cannot migrate store layout version {found} to {LAYOUT_VERSION}"
                        f" (the store is unchanged): {err.reason}"
                    ),
                ) from err
    return found
