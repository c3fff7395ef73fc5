"""The Store: open, ingest, query, export."""

from __future__ import annotations

import operator
import os
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Final

import attrs

from .. import provenance
from .._base.arguments import instance, optional_text, path, path_or_fd, text, texts
from .._base.files import replace_file
from ..documents import check_json_lines_target
from ..errors import ArgumentError, KernelIndexError, StoreError
from ._backend import Backend
from ._connect import connect
from ._export import export_lines, refuse_store_file
from ._ingest import ingest_paths
from ._layout import OBJECT_TABLES
from ._query import check_filters, run_rows
from ._report import IngestReport
from ._rows import RunRow
from ._url import MEMORY, StoreURL, parse_url

__all__ = ["NotInStoreError", "Store", "migrate_store", "open_store"]

# Run names looked up at a time by Store.records (memory holds their texts).
_CHUNK: Final = 500


@attrs.frozen(kw_only=True, auto_exc=True)
class NotInStoreError(KernelIndexError, KeyError):
    """A run name the store does not hold. It is a KeyError too, as a mapping's would be.

    Attributes:
        store: The store, as messages show it.
        name: The name asked for.
    """

    store: str
    name: str

    def __str__(self) -> str:
        return f"{self.store}: no run named {self.name!r}"


# Runs' order: commit time, else observedAt (RunRow.order_key), then name. When every
# run has a commit time, or none has, the same order comes from two fields read in C
# (no Python call of order_key per run).
_order: Final = operator.attrgetter("order_key", "name")
_AT: Final = RunRow._fields.index
_COMMIT_TIME: Final = _AT("commit_time")
_NAME: Final = operator.itemgetter(_AT("name"))
_BY_COMMIT_TIME: Final = operator.itemgetter(_COMMIT_TIME)
_BY_OBSERVED: Final = operator.itemgetter(_AT("observed_at"))


def _sort(rows: list[RunRow]) -> None:
    """Sort ``rows`` by order key, then name.

    By name, then (a stable sort) by the one time that is every run's order key: the
    same order as by the pair, without a tuple made and compared for each run.
    """
    times = list(map(_BY_COMMIT_TIME, rows))
    missing = times.count(None)
    if missing in (0, len(rows)):
        rows.sort(key=_NAME)
        rows.sort(key=_BY_COMMIT_TIME if missing == 0 else _BY_OBSERVED)
    else:
        rows.sort(key=_order)


class Store:
    """A records store (SQLite or PostgreSQL); see :func:`open_store`.

    Usable as a context manager, which closes it. Methods raise :class:`StoreError`
    when the database fails, and :class:`StoreDamagedError` when what they read breaks
    the layout's contract (a store edited by hand).
    """

    def __init__(self, backend: Backend) -> None:
        self._backend = backend

    def _writer(self) -> Backend:
        """The backend, opened for writing: a store opened for reading
        (``create=False``) is opened again so, once, when it is first asked to write."""
        if not self._backend.writable:
            writer, _ = connect(self._backend.url, create=False, write=True)
            self._backend.close()
            self._backend = writer
        return self._backend

    @property
    def url(self) -> StoreURL:
        """The store's parsed URL."""
        return self._backend.url

    @property
    def dialect(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self._backend.dialect

    def ingest(
        self,
        paths: Iterable[str | Path],
        *,
        commit: str | None = None,
        branch: str | None = None,
        commit_time: str | None = None,
        verify_digests: bool = False,
        stdin: IO[bytes] | None = None,
        on_notice: Callable[[str], None] | None = None,
    ) -> IngestReport:
        """Validate and store the records of files and folders, each file in one transaction.

        Files are read as ``kernelindex validate`` reads them (folders searched for
        ``.json``/``.jsonl``; ``-`` is standard input) and validated the same way. A
        file with an invalid record, or with a run that clashes with a stored one, is
        refused whole; other files still go in. See the module for what is skipped.

        Args:
            paths: Files, folders, and ``-``.
            commit: Provenance for runs that lack a ``kernelindex.dev/commit`` annotation.
            branch: Likewise ``kernelindex.dev/branch``.
            commit_time: Likewise ``kernelindex.dev/commit-time`` (RFC 3339; stored in UTC).
            verify_digests: Recompute each digest whose object a record carries.
            stdin: The stream ``-`` reads (default: the process's standard input).
            on_notice: Called with a line for each folder that holds no records.

        Returns:
            The counts and every problem; ``report.ok`` is whether all went in or was
            skipped.

        Raises:
            ArgumentError: for a commit time that is not RFC 3339, or an argument of the
                wrong type.
            StoreError: when the store fails.
        """
        # The caller's mistake, not the records': a wrong type is refused here, not as
        # a problem of every record it would have been written into.
        for name, value in (("commit", commit), ("branch", branch), ("commit_time", commit_time)):
            given_value = optional_text(value, name)
            if given_value is not None and "\x00" in given_value:
                raise ArgumentError(
                    argument=name, reason="holds U+0000 (NUL), which no store can hold"
                )
        instance(verify_digests, bool, "verify_digests")
        given = provenance.Provenance(commit=commit, branch=branch, commit_time=commit_time)
        return ingest_paths(
            self._writer(),
            paths,
            given,
            verify_digests=verify_digests,
            stdin=stdin,
            on_notice=on_notice,
        )

    # 10,000 runs are 10,000 new tuples: the collector's passes over them (they hold no
    # cycles) took as long as reading them.
    def rows(
        self,
        *,
        operation: str | None = None,
        pass_: str | None = None,
        provider: str | None = None,
        hardware: str | None = None,
        branch: str | None = None,
        commit: str | None = None,
        workload_digest: str | None = None,
        protocol_digest: str | None = None,
        names: Iterable[str] | None = None,
        status: str | None = None,
    ) -> list[RunRow]:
        """The stored runs that match every filter given, by order key, then name.

        Args:
            operation: The workload's operation (``jsd``).
            pass_: The workload's pass (``forward``).
            provider: The implementation's provider (``triton``).
            hardware: The environment's ``hardware.product`` (``NVIDIA H200``).
            branch: The ``kernelindex.dev/branch`` annotation.
            commit: The ``kernelindex.dev/commit`` annotation.
            workload_digest: The run's workload digest.
            protocol_digest: The run's protocol digest.
            names: Only these run names.
            status: The run's status (``passed``).

        Returns:
            One :class:`RunRow` per run, ordered by :attr:`RunRow.order_key` then name.
        """
        chosen = check_filters(
            {
                "operation": operation,
                "pass_": pass_,
                "provider": provider,
                "hardware": hardware,
                "branch": branch,
                "commit": commit,
                "workload_digest": workload_digest,
                "protocol_digest": protocol_digest,
                "status": status,
            }
        )
        wanted = None if names is None else list(dict.fromkeys(texts(names, "names")))
        backend = self._backend
        with backend.reading():
            found = run_rows(backend, backend.run_columns(chosen, wanted))
        # Sorted here (PostgreSQL's text order follows the locale; SQLite's sorter took
        # half as long again as this).
        _sort(found)
        return found

    def spec(self, kind: str, digest: str) -> Mapping[str, Any] | None:
        """The stored spec of a digested object, or None when the store lacks it.

        Args:
            kind: ``workload``, ``implementation``, ``protocol`` or ``environment``.
            digest: Its ``sha256:`` digest.

        Raises:
            ArgumentError: for another kind.
        """
        if kind not in OBJECT_TABLES:
            raise ArgumentError(
                argument="kind", reason=f"expected one of {', '.join(OBJECT_TABLES)}, got {kind!r}"
            )
        optional_text(digest, "digest")
        spec: Mapping[str, Any] | None = self._backend.spec(kind, digest)
        return spec

    def record_text(self, name: str) -> str:
        """The text of the run ``name`` as it was stored, byte for byte (a document's whole
        text, or a JSON Lines line without its newline).

        Raises:
            NotInStoreError: when no run has that name.
        """
        ((_, found),) = self.records([text(name, "name")])
        return found

    def records(self, names: Iterable[str]) -> Iterator[tuple[str, str]]:
        """``(name, text)`` of each named run, in the order given (see :meth:`record_text`).

        Raises:
            NotInStoreError: for the first name the store lacks.
        """
        wanted = texts(names, "names")
        for start in range(0, len(wanted), _CHUNK):
            chunk = wanted[start : start + _CHUNK]
            stored = self._backend.stored_runs(chunk)
            for name in chunk:
                if name not in stored:
                    raise NotInStoreError(store=self.url.shown, name=name)
                yield name, stored[name][0]

    def export_lines(self, **filters: Any) -> Iterator[str]:
        """Each stored record as one JSON line, in the order of arrival; see :meth:`export`.

        With no filter: first the protocol and environment documents that came on their
        own, then every run. With filters (those of :meth:`rows`): the runs that match.
        The lines are read from the store as they are consumed: memory holds a few
        hundred records whatever the store's size.

        Raises:
            StoreDamagedError: for a run whose text the store lacks (never left out).
        """
        names = filters.pop("names", None)
        wanted = None if names is None else list(dict.fromkeys(texts(names, "names")))
        chosen = check_filters(filters)
        backend = self._backend
        everything = not chosen and wanted is None
        documents = backend.document_texts() if everything else None
        return export_lines(backend.url, documents, backend.run_texts(chosen, wanted))

    def export(self, out_path: str | Path, **filters: Any) -> int:
        """Write the stored records as JSON Lines to ``out_path`` (replaced atomically).

        A record that arrived as a JSON Lines line comes back as that line, byte for
        byte; one that arrived as a ``.json`` document comes back as its compact published
        form (one line), while :meth:`record_text` gives its document text as it came.
        The records stream from the store to the file: memory stays bounded whatever
        the store's size.

        Args:
            out_path: The file to write; never the store's own file.
            filters: Those of :meth:`rows`.

        Returns:
            The number of records written.

        Raises:
            InputError: when ``out_path`` is the store's file, is not a ``.jsonl`` path
                (a ``.json`` file holds one document), or cannot be written.
            StoreDamagedError: for a run whose text the store lacks; the earlier file
                at ``out_path`` is then left as it was.
        """
        refuse_store_file(path(out_path, "out_path"), self.url)
        # Lines in a .json file would not read back (validate: "extra data").
        check_json_lines_target(out_path)
        # The filters are checked here, before the file is touched; the lines are read
        # as the file is written.
        lines = self.export_lines(**filters)
        written = 0

        def counted() -> Iterator[str]:
            nonlocal written
            for line in lines:
                written += 1
                yield line

        replace_file(out_path, counted())
        return written

    def refuse_output(self, out: str | Path | int) -> None:
        """Refuse an output that would write over this store's own files.

        Args:
            out: A path a command writes, or a file descriptor it writes to (``1``).

        Raises:
            OutputIsInputError: when ``out`` is the store's file or its journal, by any
                name (same path, symlink, hard link).
        """
        refuse_store_file(path_or_fd(out, "out"), self.url)

    def close(self) -> None:
        """Close the connection."""
        self._backend.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def _is_regular_or_missing(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except FileNotFoundError:
        return True
    except OSError as err:
        raise StoreError(source=path, reason=err.strerror or str(err)) from err


def _parsed(url: str | os.PathLike[str] | None) -> StoreURL:
    parsed = parse_url(url)
    if (
        parsed.dialect == "sqlite"
        and parsed.target != MEMORY
        and not _is_regular_or_missing(parsed.target)
    ):
        raise StoreError(source=parsed.shown, reason="is not a regular file")
    return parsed


def open_store(url: str | os.PathLike[str] | None = None, *, create: bool = True) -> Store:
    """Open a records store: for writing, creating it when there is none, or for reading.

    Opened for writing (``create=True``), an absent store is created and one of an
    older layout is migrated (the write lock is taken only then). Opened for reading
    (``create=False``), nothing is ever written: the connection is read-only, no write
    lock is taken, and a store of an older layout is refused with a line saying how to
    migrate it (:func:`migrate_store`, ``kernelindex migrate``); :meth:`Store.ingest`
    on such a Store opens it again for writing.

    Args:
        url: A SQLite path or ``sqlite:///PATH`` URL (``sqlite:///:memory:`` for one in
            memory), or a ``postgresql://`` URL (needs the ``[postgres]`` extra). None
            means ``$KERNELINDEX_DB``, else :data:`DEFAULT_DB` (``kernelindex.sqlite3`` in
            the current directory).
        create: Open for writing and create the store when there is none; otherwise
            open an existing store for reading.

    Raises:
        StoreError: when the store cannot be opened (not a database, no server).
        StoreLayoutError: when its layout is newer than this package reads, it is no
            kernelindex store (or none exists and ``create`` is false), or it needs a
            migration and ``create`` is false.
        StoreDamagedError: when its layout record or tables are damaged.
        MissingDependencyError: for PostgreSQL without psycopg.
    """
    backend, _ = connect(_parsed(url), create=create, write=create)
    return Store(backend)


def migrate_store(url: str | os.PathLike[str] | None = None) -> int:
    """Migrate an existing store to this version's layout (:data:`LAYOUT_VERSION`).

    Every step in one transaction: the store is all of its old layout or all of the new.

    Args:
        url: As :func:`open_store` takes it.

    Returns:
        The layout version the store had (this version's: there was nothing to do).

    Raises:
        StoreLayoutError: for no store, a newer layout, or a migration that failed (the
            store is then unchanged).
        StoreError: when the store cannot be opened.
    """
    backend, found = connect(_parsed(url), create=False, write=True)
    backend.close()
    return found
